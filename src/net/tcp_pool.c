/* tcp_pool.c — the arena and what is carved from it: the configuration's
 * sizes, tcp_stack_init, the socket pool (alloc, free) and the send and
 * receive buffer pools; and tcp_check, which audits them.
 *
 * Arena layout (tcp_stack_init): sockets | hash buckets | timer heap ids,
 * positions, keys | scratch segment | SACK scoreboards | send buffers |
 * receive buffers | grown-buffer slots.  The
 * buffer pools come last, so the part never used is never touched. */
#include "tcp_cc.h"
#include "tcp_int.h"

#define TCP_ALIGN(x) (((x) + 63) & ~(size_t)63)

void tcp_config_default(struct tcp_config *cfg)
{
	sk_memset(cfg, 0, sizeof(*cfg));
	/* 2048 x 2 x 128 KiB = 512 MiB of arena (bufs = 0: one send and one
	 * receive buffer per socket), touched only as many buffers as were ever
	 * in flight at once: map it lazily (mmap) or lower these for small
	 * targets. */
	cfg->max_sockets = 2048;
	cfg->sndbuf = 128 * 1024;
	cfg->rcvbuf = 128 * 1024;
	cfg->mtu = 1500;
	cfg->eph_lo = 32768;
	cfg->eph_hi = 60999;
	cfg->msl_ms = 30000;
	cfg->rto_init_ms = 1000;
	cfg->rto_min_ms = 200;
	cfg->rto_max_ms = 60000;
	cfg->delack_ms = 40;
	cfg->user_timeout_ms = 300000;
	cfg->fin2_timeout_ms = 60000;
	cfg->challenge_ack_per_s = 1000;
	cfg->syn_retries = 6;
	cfg->max_retries = 15;
	cfg->syn_cookies = true;
	cfg->cc = TCP_CC_CUBIC;
}

static uint32_t tcp_hash_buckets(uint32_t max_sockets)
{
	uint32_t n = 16;
	while (n < 2 * max_sockets)
		n <<= 1;
	return n;
}

static uint32_t tcp_nbufs(const struct tcp_config *cfg)
{
	return cfg->bufs ? cfg->bufs : cfg->max_sockets;
}

/* Slots for grown buffers: mem_high in 256 KiB steps unless told. */
static uint32_t tcp_nslots(const struct tcp_config *cfg)
{
	if (!cfg->buf_max)
		return 0;
	uint64_t n = cfg->buf_slots ? cfg->buf_slots : cfg->mem_high / (256u * 1024);
	return (uint32_t)SK_MIN(SK_MAX(n, 2u), (uint64_t)cfg->max_sockets * 2);
}

/* Large range boards: one for every 8 sockets, at least 16 (at most two
 * per socket).  Only a connection in a loss episode with more holes than
 * the inline ranges hold takes one, for its SACK scoreboard (send side)
 * or its out-of-order ranges (receive side), and only while they last. */
static uint32_t tcp_nboards(const struct tcp_config *cfg)
{
	return SK_MIN(SK_MAX(cfg->max_sockets / 8, 16u), 2 * cfg->max_sockets);
}
#define TCP_BOARD_SIZE (TCP_SCORE_BIG * sizeof(struct tcp_range))

static size_t tcp_scratch_size(const struct tcp_config *cfg)
{
	return TCP_ALIGN((size_t)TCP_MAX_HLEN + cfg->mtu);
}

size_t tcp_arena_size(const struct tcp_config *cfg)
{
	size_t n = cfg->max_sockets;
	size_t sz = TCP_ALIGN(n * sizeof(struct tcp_sock));
	sz += TCP_ALIGN(tcp_hash_buckets(cfg->max_sockets) * sizeof(uint32_t));
	sz += TCP_ALIGN(n * sizeof(uint32_t)) * 2 + TCP_ALIGN(n * sizeof(sk_time_ns));
	sz += tcp_scratch_size(cfg);
	sz += (size_t)tcp_nboards(cfg) * TCP_ALIGN(TCP_BOARD_SIZE);
	sz += (size_t)tcp_nbufs(cfg) * (TCP_ALIGN(cfg->sndbuf) + TCP_ALIGN(cfg->rcvbuf));
	sz += (size_t)tcp_nslots(cfg) * TCP_ALIGN(cfg->buf_max);
	return sz + 64;
}

static void tcp_pool_init(struct tcp_bufpool *p, uint8_t *base, uint32_t n, uint32_t size)
{
	p->base = base;
	p->free = NULL;
	p->stride = TCP_ALIGN(size);
	p->n = p->navail = n;
	p->hw = 0;
}

/* LIFO first: a recently freed buffer is warm.  Only when none was ever
 * freed does the pool touch a new buffer (its pages), in address order. */
static uint8_t *tcp_pool_get(struct tcp_bufpool *p)
{
	uint8_t *b = p->free;
	if (b)
		sk_memcpy(&p->free, b, sizeof(p->free));
	else if (p->hw < p->n)
		b = p->base + (size_t)p->hw++ * p->stride;
	else
		return NULL;
	p->navail--;
	return b;
}

static void tcp_pool_put(struct tcp_bufpool *p, uint8_t *b)
{
	sk_memcpy(b, &p->free, sizeof(p->free)); /* the link lives in the free buffer */
	p->free = b;
	p->navail++;
}

/* The budget moves only here: the state follows the use, with hysteresis
 * (pressure until below mem_low, as Linux's tcp_mem). */
static void tcp_mem_add(struct tcp_stack *st, int64_t delta)
{
	st->mem_used = (uint64_t)((int64_t)st->mem_used + delta);
	const struct tcp_config *c = &st->cfg;
	uint8_t old = st->mem_state, s = old;
	if (st->mem_used >= c->mem_high)
		s = TCP_MEM_HARD;
	else if (st->mem_used >= c->mem_pressure)
		s = TCP_MEM_PRESSURE;
	else if (st->mem_used < c->mem_low)
		s = TCP_MEM_NORMAL;
	else if (old == TCP_MEM_HARD)
		s = TCP_MEM_PRESSURE;
	if (s > old && old == TCP_MEM_NORMAL)
		st->stats.mem_pressure_entries++;
	if (s == TCP_MEM_HARD && old != TCP_MEM_HARD)
		st->stats.mem_hard_entries++;
	st->mem_state = s;
}

/* What the peer may still send beyond rcv_nxt: the window advertised. */
static uint32_t tcp_promised(const struct tcp_sock *sk)
{
	return tcp_seq_gt(sk->rcv_adv, sk->rcv_nxt) ? sk->rcv_adv - sk->rcv_nxt : 0;
}

/* Bytes of the receive ring in use from rhead: in-order data, then the
 * out-of-order ranges up to the last one's end. */
static uint32_t tcp_rspan(const struct tcp_sock *sk)
{
	return sk->rlen + (sk->nooo ? tcp_ooo_c(sk)[sk->nooo - 1].r - sk->rcv_nxt : 0);
}

/* Copy `used` bytes of a ring of `cap` from `head` to the start of dst. */
static void tcp_ring_copy(uint8_t *dst, const uint8_t *src, uint32_t cap, uint32_t head,
			  uint32_t used)
{
	uint32_t first = SK_MIN(used, cap - head);
	sk_memcpy(dst, src + head, first);
	sk_memcpy(dst + first, src, used - first);
}

/* The ring grows in place from cap to ncap (its slot holds ncap): a
 * wrapped tail moves up past the old end, or, if that does not fit, the
 * head part moves to the new end.  Returns the new head. */
static uint32_t tcp_ring_widen(uint8_t *buf, uint32_t cap, uint32_t ncap, uint32_t head,
			       uint32_t used)
{
	if (head + used <= cap)
		return head;
	uint32_t wrapped = head + used - cap, d = ncap - cap;
	if (wrapped <= d) {
		sk_memcpy(buf + cap, buf, wrapped);
		return head;
	}
	sk_memmove(buf + head + d, buf + head, cap - head);
	return head + d;
}

static void tcp_sbuf_wake(struct tcp_stack *st)
{
	/* Everyone refused a buffer may try again.  All of them, not one: a
	 * woken socket whose app has nothing more to say would otherwise
	 * strand the rest.  Only a pool smaller than max_sockets has waiters. */
	while (!tcp_list_empty(&st->sbuf_wait)) {
		struct tcp_sock *w = tcp_container(st->sbuf_wait.next, q);
		tcp_list_del(&w->q);
		w->fl &= ~(uint32_t)TF_WANT_WRITE;
		tcp_event(st, w, TCP_EV_WRITE);
	}
}

/* A grown receive side takes a slot again when data comes: always while
 * the budget is normal, otherwise only if the window already advertised
 * needs more than the base (else it shrinks back to the base now).  No
 * slot: the base buffer, and what lies beyond it is dropped unacked. */
bool tcp_rbuf_take(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (sk->rbuf)
		return true;
	uint32_t base = st->cfg.rcvbuf;
	sk->rhead = 0;
	if (sk->rcap > base) {
		uint32_t promise = tcp_promised(sk);
		bool normal = st->mem_state == TCP_MEM_NORMAL;
		if (normal || promise > base) {
			uint8_t *b = tcp_pool_get(&st->bpool);
			if (b) {
				if (!normal) {
					sk->rcap = SK_MAX(base, promise);
					sk->rmax = SK_MIN(sk->rmax, base);
				}
				sk->rbuf = b;
				sk->fl |= TF_RSLOT;
				tcp_mem_add(st, sk->rcap);
				return true;
			}
			if (promise > base)
				st->stats.rbuf_fallbacks++;
		}
		st->stats.buf_shrinks++;
		sk->rcap = base;
		sk->rmax = SK_MIN(sk->rmax, base);
	}
	sk->rbuf = tcp_pool_get(&st->rpool);
	return sk->rbuf != NULL;
}

void tcp_rbuf_release(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!sk->rbuf || sk->rlen || sk->nooo)
		return;
	if (sk->fl & TF_RSLOT) {
		/* rcap stays: the next data takes a slot of that size again. */
		tcp_pool_put(&st->bpool, sk->rbuf);
		sk->fl &= ~(uint32_t)TF_RSLOT;
		tcp_mem_add(st, -(int64_t)sk->rcap);
	} else {
		tcp_pool_put(&st->rpool, sk->rbuf);
	}
	sk->rbuf = NULL;
	sk->rhead = 0;
}

void tcp_refs_trim(struct tcp_stack *st, struct tcp_sock *sk)
{
	uint32_t gone = 0;
	while (gone < sk->nref) {
		struct tcp_ref *r = &sk->ref[gone];
		uint32_t end = r->seq + r->len;
		if (sk->slen == 0 || tcp_seq_le(end, sk->sbuf_seq)) {
			st->ref_bytes -= r->len;
			gone++;
			continue;
		}
		if (tcp_seq_lt(r->seq, sk->sbuf_seq)) {
			uint32_t d = sk->sbuf_seq - r->seq;
			r->seq += d;
			r->p += d;
			r->len -= d;
			st->ref_bytes -= d;
		}
		break;
	}
	if (gone) {
		uint32_t keep = sk->nref - gone; /* nref <= TCP_REFS */
		sk_memmove(sk->ref, sk->ref + gone, keep * sizeof(sk->ref[0]));
		sk->nref = (uint8_t)keep;
	}
}

void tcp_sbuf_release(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (sk->slen == 0 && sk->nref)
		tcp_refs_trim(st, sk); /* nothing queued: no reference is needed */
	if (!sk->sbuf || sk->slen)
		return;
	if (sk->fl & TF_SSLOT) {
		tcp_pool_put(&st->bpool, sk->sbuf);
		sk->fl &= ~(uint32_t)TF_SSLOT;
		tcp_mem_add(st, -(int64_t)sk->scap);
	} else {
		tcp_pool_put(&st->spool, sk->sbuf);
	}
	sk->sbuf = NULL;
	sk->shead = 0;
	tcp_sbuf_wake(st);
}

bool tcp_sbuf_take(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (sk->sbuf)
		return true;
	uint32_t base = st->cfg.sndbuf;
	sk->shead = 0;
	if (sk->scap > base) {
		uint8_t *b = st->mem_state == TCP_MEM_NORMAL ? tcp_pool_get(&st->bpool) : NULL;
		if (b) {
			sk->sbuf = b;
			sk->fl |= TF_SSLOT;
			tcp_mem_add(st, sk->scap);
			return true;
		}
		st->stats.buf_shrinks++;
		sk->scap = base;
		sk->smax = SK_MIN(sk->smax, base);
	}
	sk->sbuf = tcp_pool_get(&st->spool);
	return sk->sbuf != NULL;
}

bool tcp_buf_grow(struct tcp_stack *st, struct tcp_sock *sk, bool send, uint32_t want)
{
	if (!st->bpool.n || (sk->fl & (send ? TF_SLOCK : TF_RLOCK)))
		return false;
	uint32_t *cap = send ? &sk->scap : &sk->rcap, *max = send ? &sk->smax : &sk->rmax;
	want = (uint32_t)SK_MIN(((uint64_t)want + 4095) & ~(uint64_t)4095, st->cfg.buf_max);
	if (want <= *max)
		return false;
	if (st->mem_state != TCP_MEM_NORMAL) {
		st->stats.buf_grow_refused++;
		return false;
	}
	if (want <= *cap) {
		*max = want;
		return true;
	}
	uint8_t **buf = send ? &sk->sbuf : &sk->rbuf;
	uint32_t *head = send ? &sk->shead : &sk->rhead;
	uint32_t slot = send ? TF_SSLOT : TF_RSLOT;
	bool in_slot = (sk->fl & slot) != 0;
	uint64_t extra = in_slot ? want - *cap : want;
	if (st->mem_used + extra > st->cfg.mem_high || (!in_slot && !st->bpool.navail)) {
		st->stats.buf_grow_refused++;
		return false;
	}
	uint32_t used = send ? sk->slen : tcp_rspan(sk);
	if (*buf && in_slot) {
		*head = tcp_ring_widen(*buf, *cap, want, *head, used);
		tcp_mem_add(st, (int64_t)extra);
	} else if (*buf) {
		uint8_t *b = tcp_pool_get(&st->bpool);
		tcp_ring_copy(b, *buf, *cap, *head, used);
		tcp_pool_put(send ? &st->spool : &st->rpool, *buf);
		*buf = b;
		*head = 0;
		sk->fl |= slot;
		tcp_mem_add(st, (int64_t)extra);
		if (send)
			tcp_sbuf_wake(st);
	} /* no buffer held: the next take gets a slot of `want` */
	*cap = *max = want;
	if (send)
		st->stats.sndbuf_grows++;
	else
		st->stats.rcvbuf_grows++;
	return true;
}

uint64_t tcp_sbuf_round(const struct tcp_sock *sk)
{
	/* The window, the one saved at a loss (ssthresh, once set), and for a
	 * sender paced by a rate model (BBR: the one with on_delivery) what
	 * its rate moves in a round trip.  The window-based algorithms' rate
	 * is the window's (tcp_cc_pace_window) and adds nothing. */
	uint64_t w = sk->cwnd;
	if (sk->ssthresh != UINT32_MAX)
		w = SK_MAX(w, (uint64_t)sk->ssthresh);
	if (sk->pacing_rate && sk->srtt_us && tcp_cc(sk)->on_delivery)
		w = SK_MAX(w, sk->pacing_rate * sk->srtt_us / 1000000);
	return w;
}

void tcp_sbuf_tune(struct tcp_stack *st, struct tcp_sock *sk)
{
	/* Twice what may be in flight in a round trip, and at least what is
	 * held unacked and that much more: a hole at snd_una keeps everything
	 * above it in the buffer, SACKed or not, for as long as its repair
	 * takes (a lost retransmission: two round trips or more), and the
	 * next round's data must still fit beside it. */
	uint64_t w = tcp_sbuf_round(sk);
	uint64_t want = SK_MAX(2 * w, (uint64_t)(sk->snd_max - sk->snd_una) + w);
	if (st->bpool.n && want > sk->smax && st->mem_state == TCP_MEM_NORMAL)
		tcp_buf_grow(st, sk, true, (uint32_t)SK_MIN(want, (uint64_t)UINT32_MAX));
}

void tcp_rbuf_tune(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	uint32_t rtt = sk->rcv_rtt_us ? sk->rcv_rtt_us : sk->srtt_us;
	if (!st->bpool.n || !rtt || (sk->fl & TF_RLOCK))
		return;
	uint32_t consumed = sk->rcv_nxt - sk->rlen;
	if (sk->rtune_at == 0 || now < sk->rtune_at) {
		sk->rtune_at = now ? now : 1;
		sk->rtune_seq = consumed;
		return;
	}
	if (now - sk->rtune_at < (sk_time_ns)rtt * 1000)
		return;
	uint32_t copied = consumed - sk->rtune_seq;
	bool stale = now - sk->rtune_at > 4 * (sk_time_ns)rtt * 1000;
	sk->rtune_at = now;
	sk->rtune_seq = consumed;
	if (stale)
		return; /* data came in bursts: that is no rate per round trip */
	/* Twice a round's worth (a loss holds a round behind a hole) and 16
	 * segments more, and while the rate grows, twice that growth on top:
	 * the window this ACK opens is the sender's next round, and in slow
	 * start that round is twice this one (Linux's tcp_rcv_space_adjust
	 * reasons the same way).  With twice a round alone the window came
	 * a round behind a sender doubling its window: at 50 ms with no loss
	 * Linux's client sent 1,346 KiB in the round in which it sent 2,211
	 * KiB to a Linux receiver (bench-tcp.md).  rtune_space is the best round
	 * so far (0: none, or reset by pressure): only a better one grows. */
	uint32_t mss = tcp_eff_mss(sk);
	uint32_t prev = sk->rtune_space ? sk->rtune_space : 10 * mss;
	if (copied <= prev && sk->rtune_space)
		return;
	/* At most buf_max (2^30) before the growth term: no overflow. */
	uint64_t want = SK_MIN(2 * (uint64_t)copied + 16 * (uint64_t)mss, (uint64_t)st->cfg.buf_max);
	if (copied > prev)
		want += 2 * want * (copied - prev) / prev;
	sk->rtune_space = SK_MAX(copied, sk->rtune_space);
	if (want > sk->rmax)
		tcp_buf_grow(st, sk, false, (uint32_t)SK_MIN(want, (uint64_t)UINT32_MAX));
}

void tcp_buf_shrink(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (st->mem_state == TCP_MEM_NORMAL)
		return;
	uint32_t sbase = st->cfg.sndbuf, rbase = st->cfg.rcvbuf;
	if (sk->fl & TF_SSLOT) {
		/* No more queued beyond the base; what is queued stays. */
		sk->smax = SK_MAX(sbase, SK_MIN(sk->smax, sk->slen));
		uint8_t *b = sk->slen <= sbase ? tcp_pool_get(&st->spool) : NULL;
		if (b) {
			tcp_ring_copy(b, sk->sbuf, sk->scap, sk->shead, sk->slen);
			tcp_pool_put(&st->bpool, sk->sbuf);
			tcp_mem_add(st, -(int64_t)sk->scap);
			sk->fl &= ~(uint32_t)TF_SSLOT;
			sk->sbuf = b;
			sk->shead = 0;
			sk->scap = sbase;
			sk->smax = SK_MIN(sk->smax, sbase);
			st->stats.buf_shrinks++;
		}
	}
	if (sk->rcap > rbase) {
		/* The window closes to the base as the peer fills what we
		 * offered (the right edge stays); the slot goes once the offer
		 * and the data held fit the base. */
		sk->rmax = SK_MIN(sk->rmax, rbase);
		sk->rtune_space = 0; /* right-sizing starts over from the base */
		if ((sk->fl & TF_RSLOT) && sk->rlen + tcp_promised(sk) <= rbase &&
		    tcp_rspan(sk) <= rbase) {
			uint8_t *b = tcp_pool_get(&st->rpool);
			if (b) {
				tcp_ring_copy(b, sk->rbuf, sk->rcap, sk->rhead, tcp_rspan(sk));
				tcp_pool_put(&st->bpool, sk->rbuf);
				tcp_mem_add(st, -(int64_t)sk->rcap);
				sk->fl &= ~(uint32_t)TF_RSLOT;
				sk->rbuf = b;
				sk->rhead = 0;
				sk->rcap = rbase;
				st->stats.buf_shrinks++;
			}
		} else if (!sk->rbuf && tcp_promised(sk) <= rbase) {
			sk->rcap = rbase;
			st->stats.buf_shrinks++;
		}
	}
}

/* What we could store now.  A socket without a buffer can store nothing
 * if the pool is empty: advertise 0 rather than drop what we invited (an
 * earlier, larger offer still stands: the right edge never moves left, and
 * beyond it the segment is dropped and resent).  With the default pool
 * (one buffer per socket) the pool is never empty for a socket without one. */
uint32_t tcp_rcv_space(const struct tcp_stack *st, const struct tcp_sock *sk)
{
	if (!sk->rbuf && st->rpool.navail == 0)
		return 0;
	return sk->rmax > sk->rlen ? sk->rmax - sk->rlen : 0;
}

/* No send buffer and the pool is empty: wait on st->sbuf_wait for a
 * release (an app that sees -SK_EAGAIN waits for TCP_EV_WRITE). */
void tcp_sbuf_wait(struct tcp_stack *st, struct tcp_sock *sk)
{
	st->stats.send_no_memory++;
	sk->fl |= TF_WANT_WRITE;
	if (!tcp_linked(&sk->q))
		tcp_list_add_tail(&st->sbuf_wait, &sk->q);
}

int tcp_stack_init(struct tcp_stack *st, void *arena, size_t arena_size,
		   const struct tcp_config *cfg, sk_time_ns now)
{
	(void)now;
	if (!cfg->ip_output || cfg->max_sockets == 0 || cfg->max_sockets >= TCP_NIL / 2 ||
	    cfg->mtu < 576 || cfg->mtu > 9216 || cfg->sndbuf < 1024 || cfg->rcvbuf < 1024 ||
	    cfg->eph_lo == 0 || cfg->eph_hi < cfg->eph_lo || cfg->bufs >= TCP_NIL / 2 ||
	    (cfg->steer_workers > 1 && cfg->steer_self >= cfg->steer_workers))
		return -SK_EINVAL;
	if (cfg->buf_max && (cfg->buf_max < SK_MAX(cfg->sndbuf, cfg->rcvbuf) ||
			     cfg->buf_max > (1u << 30) || cfg->mem_high < cfg->buf_max ||
			     cfg->mem_pressure > cfg->mem_high || cfg->mem_low > cfg->mem_high))
		return -SK_EINVAL;
	if (arena_size < tcp_arena_size(cfg))
		return -SK_ENOMEM;
	sk_memset(st, 0, sizeof(*st));
	st->cfg = *cfg;
	if (!st->cfg.mem_pressure)
		st->cfg.mem_pressure = (uint32_t)((uint64_t)cfg->mem_high * 3 / 4);
	if (!st->cfg.mem_low)
		st->cfg.mem_low = SK_MIN(cfg->mem_high / 2, st->cfg.mem_pressure);
	uint8_t *p = (uint8_t *)TCP_ALIGN((uintptr_t)arena);
	uint32_t n = cfg->max_sockets;
	st->socks = (struct tcp_sock *)(void *)p;
	p += TCP_ALIGN(n * sizeof(struct tcp_sock));
	uint32_t nb = tcp_hash_buckets(n);
	st->hash = (uint32_t *)(void *)p;
	p += TCP_ALIGN(nb * sizeof(uint32_t));
	st->hash_mask = nb - 1;
	for (uint32_t i = 0; i < nb; i++)
		st->hash[i] = TCP_NIL;
	uint32_t *ids = (uint32_t *)(void *)p;
	p += TCP_ALIGN(n * sizeof(uint32_t));
	uint32_t *pos = (uint32_t *)(void *)p;
	p += TCP_ALIGN(n * sizeof(uint32_t));
	sk_time_ns *keys = (sk_time_ns *)(void *)p;
	p += TCP_ALIGN(n * sizeof(sk_time_ns));
	timer_heap_init(&st->timers, ids, keys, pos, n);
	st->scratch = p;
	st->scratch_len = (uint32_t)tcp_scratch_size(cfg);
	p += st->scratch_len;
	tcp_pool_init(&st->scpool, p, tcp_nboards(cfg), TCP_BOARD_SIZE);
	p += (size_t)st->scpool.n * st->scpool.stride;
	tcp_list_init(&st->egress);
	tcp_list_init(&st->ready);
	tcp_list_init(&st->tw);
	tcp_list_init(&st->free);
	tcp_list_init(&st->sbuf_wait);
	/* The pools are last: their untouched tail never costs a page. */
	uint32_t nbufs = tcp_nbufs(cfg);
	tcp_pool_init(&st->spool, p, nbufs, cfg->sndbuf);
	p += (size_t)nbufs * st->spool.stride;
	tcp_pool_init(&st->rpool, p, nbufs, cfg->rcvbuf);
	p += (size_t)nbufs * st->rpool.stride;
	tcp_pool_init(&st->bpool, p, tcp_nslots(cfg), cfg->buf_max);
	sk_memset(st->socks, 0, n * sizeof(struct tcp_sock));
	for (uint32_t i = 0; i < n; i++) {
		struct tcp_sock *sk = &st->socks[i];
		sk->id = i;
		sk->hnext = TCP_NIL;
		tcp_list_add_tail(&st->free, &sk->q);
	}
	st->nfree = n;
	st->mss = (uint16_t)(cfg->mtu - 40);
	/* The shift the largest window needs, grown buffers included. */
	st->rcv_wscale = tcp_wscale_for(SK_MAX(cfg->rcvbuf, cfg->buf_max));
	tcp_keys_init(st);
	st->eph_next = (uint16_t)(cfg->eph_lo +
				  siphash24(&st->hkey, "eph", 3) % ((uint32_t)cfg->eph_hi - cfg->eph_lo + 1));
	return 0;
}

/* A range list's board (the SACK scoreboard's, or the out-of-order one):
 * take moves the n inline ranges onto a board from the pool (false if the
 * list has one or the pool is empty); release moves them back inline,
 * which must hold them (cap: the caller's promise; never drop ranges
 * here), and returns the board. */
static bool tcp_board_take(struct tcp_stack *st, struct tcp_range **board,
			   const struct tcp_range *in, uint32_t n)
{
	if (*board)
		return false;
	uint8_t *b = tcp_pool_get(&st->scpool);
	if (!b)
		return false;
	*board = (struct tcp_range *)(void *)b;
	sk_memcpy(*board, in, n * sizeof(struct tcp_range));
	return true;
}

static void tcp_board_release(struct tcp_stack *st, struct tcp_range **board,
			      struct tcp_range *in, uint32_t n, uint32_t cap)
{
	if (!*board || n > cap)
		return;
	sk_memcpy(in, *board, n * sizeof(struct tcp_range));
	tcp_pool_put(&st->scpool, (uint8_t *)*board);
	*board = NULL;
}

bool tcp_score_take(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!tcp_board_take(st, &sk->xscore, sk->score_in, sk->nscore))
		return false;
	st->stats.sack_score_grows++;
	return true;
}

void tcp_score_release(struct tcp_stack *st, struct tcp_sock *sk)
{
	tcp_board_release(st, &sk->xscore, sk->score_in, sk->nscore, TCP_SCORE_MAX);
}

bool tcp_ooo_take(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!tcp_board_take(st, &sk->xooo, sk->ooo_in, sk->nooo))
		return false;
	st->stats.ooo_grows++;
	return true;
}

void tcp_ooo_release(struct tcp_stack *st, struct tcp_sock *sk)
{
	tcp_board_release(st, &sk->xooo, sk->ooo_in, sk->nooo, TCP_OOO_MAX);
}

/* ---- sockets ---- */

struct tcp_sock *tcp_sock_alloc(struct tcp_stack *st)
{
	if (tcp_list_empty(&st->free)) {
		/* Pool empty: recycle the oldest TIME_WAIT (Linux does the same when
		 * its tw buckets run out); its peer has had the longest to see our ACK. */
		if (tcp_list_empty(&st->tw))
			return NULL;
		struct tcp_sock *old = tcp_container(st->tw.next, tw);
		st->stats.tw_recycled++;
		tcp_sock_free(st, old);
	}
	struct tcp_sock *sk = tcp_container(st->free.next, q);
	tcp_list_del(&sk->q);
	st->nfree--;
	uint32_t id = sk->id;
	sk_memset(sk, 0, sizeof(*sk)); /* sbuf = rbuf = NULL: none until data */
	sk->id = id;
	sk->scap = sk->smax = st->cfg.sndbuf;
	sk->rcap = sk->rmax = st->cfg.rcvbuf;
	sk->hnext = TCP_NIL;
	sk->in_use = true;
	sk->state = TCP_CLOSED;
	sk->rtx_at = sk->persist_at = sk->delack_at = sk->keep_at = sk->tw_at = SK_TIME_NEVER;
	sk->first_rtx = SK_TIME_NEVER;
	sk->keep_idle_ms = 7200000;
	sk->keep_intvl_ms = 75000;
	sk->keep_cnt = 9;
	sk->user_timeout_ms = st->cfg.user_timeout_ms;
	tcp_list_init(&sk->synq);
	tcp_list_init(&sk->accq);
	return sk;
}

void tcp_unlink_parent(struct tcp_sock *sk)
{
	struct tcp_sock *l = sk->parent;
	if (!l)
		return;
	if (sk->state == TCP_SYN_RECEIVED)
		l->syn_n--;
	else
		l->acc_n--;
	tcp_list_del(&sk->q);
	sk->parent = NULL;
}

void tcp_sock_free(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!sk->in_use)
		return;
	if (sk->state == TCP_LISTEN) {
		/* Children not yet accepted die with their listener (RST for the
		 * established ones, as Linux). */
		struct tcp_link *heads[2] = {&sk->synq, &sk->accq};
		for (int i = 0; i < 2; i++) {
			while (!tcp_list_empty(heads[i])) {
				struct tcp_sock *c = tcp_container(heads[i]->next, q);
				tcp_unlink_parent(c);
				if (c->state != TCP_SYN_RECEIVED)
					tcp_send_rst(st, c, 0);
				tcp_sock_free(st, c);
			}
		}
	}
	tcp_unlink_parent(sk);
	tcp_list_del(&sk->q); /* off st->sbuf_wait, if it waited there */
	tcp_hash_remove(st, sk); /* harmless walk if it was never inserted */
	timer_heap_set(&st->timers, sk->id, SK_TIME_NEVER);
	tcp_list_del(&sk->eg);
	tcp_list_del(&sk->rd);
	tcp_list_del(&sk->tw);
	sk->slen = sk->rlen = 0; /* whatever is still queued dies with the socket */
	sk->nooo = 0;
	tcp_ooo_release(st, sk);
	sk->nscore = 0;
	tcp_score_release(st, sk);
	tcp_sbuf_release(st, sk);
	tcp_rbuf_release(st, sk);
	sk->in_use = false;
	sk->state = TCP_CLOSED;
	tcp_list_add_tail(&st->free, &sk->q);
	st->nfree++;
}

/* Walks every socket: for tests and fuzzers only, never on the fast path. */
int tcp_check(const struct tcp_stack *st)
{
	uint32_t nfree = 0, nheap = 0, nsbuf = 0, nrbuf = 0, nslot = 0, nboard = 0;
	uint64_t refs = 0;
	uint64_t mem = 0;
	for (uint32_t i = 0; i < st->cfg.max_sockets; i++) {
		const struct tcp_sock *sk = &st->socks[i];
		if (!sk->in_use) {
			nfree++;
			continue;
		}
		SK_CHECK(sk->slen <= sk->scap && sk->shead < sk->scap);
		SK_CHECK(sk->rlen <= sk->rcap && sk->rhead < sk->rcap);
		SK_CHECK(sk->nooo <= tcp_ooo_cap(sk) && sk->nscore <= tcp_score_cap(sk));
		/* A next check only behind one under way (or a redo). */
		SK_CHECK(!(sk->fl & TF_RTX_NX) || (sk->fl & (TF_RTX_CHK | TF_RTX_REDO)));
		SK_CHECK(sk->limit <= TCP_LIM_PACE);
		nboard += (sk->xscore != NULL) + (sk->xooo != NULL);
		for (uint32_t k = 1; k < sk->nscore; k++)
			SK_CHECK(tcp_seq_gt(tcp_score_c(sk)[k].l, tcp_score_c(sk)[k - 1].r));
		SK_CHECK(!sk->sbuf == !sk->slen);
		SK_CHECK(sk->nref <= TCP_REFS);
		for (uint32_t k = 0; k < sk->nref; k++) {
			const struct tcp_ref *r = &sk->ref[k];
			SK_CHECK(r->len > 0 && r->p);
			SK_CHECK(tcp_seq_ge(r->seq, sk->sbuf_seq));
			SK_CHECK(tcp_seq_le(r->seq + r->len, sk->sbuf_seq + sk->slen));
			SK_CHECK(k == 0 || tcp_seq_ge(r->seq, sk->ref[k - 1].seq + sk->ref[k - 1].len));
			refs += r->len;
		}
		SK_CHECK(!sk->rbuf == !(sk->rlen || sk->nooo));
		SK_CHECK(sk->smax <= sk->scap && sk->rmax <= sk->rcap);
		SK_CHECK(!(sk->fl & TF_SSLOT) || sk->sbuf);
		SK_CHECK(!(sk->fl & TF_RSLOT) || sk->rbuf);
		/* A base buffer is the base size; only a slot holds more. */
		SK_CHECK((sk->fl & TF_SSLOT) || !sk->sbuf || sk->scap == st->cfg.sndbuf);
		SK_CHECK((sk->fl & TF_RSLOT) || !sk->rbuf || sk->rcap == st->cfg.rcvbuf);
		SK_CHECK(sk->scap <= SK_MAX(st->cfg.sndbuf, st->cfg.buf_max));
		SK_CHECK(sk->rcap <= SK_MAX(st->cfg.rcvbuf, st->cfg.buf_max));
		nsbuf += sk->sbuf && !(sk->fl & TF_SSLOT);
		nrbuf += sk->rbuf && !(sk->fl & TF_RSLOT);
		nslot += !!(sk->fl & TF_SSLOT) + !!(sk->fl & TF_RSLOT);
		mem += ((sk->fl & TF_SSLOT) ? sk->scap : 0) + ((sk->fl & TF_RSLOT) ? sk->rcap : 0);
		if (sk->state == TCP_LISTEN)
			SK_CHECK(sk_addr_is_any(&sk->laddr) && sk_addr_is_any(&sk->raddr));
		if (sk->state >= TCP_SYN_SENT && sk->state != TCP_CLOSED) {
			/* One family per connection (tcp_types.h), never :: */
			SK_CHECK(sk_addr_is_v4(&sk->laddr) == sk_addr_is_v4(&sk->raddr));
			SK_CHECK(!sk_addr_is_any(&sk->laddr) && !sk_addr_is_any(&sk->raddr));
			SK_CHECK(tcp_seq_le(sk->snd_una, sk->snd_nxt));
			SK_CHECK(tcp_seq_le(sk->snd_nxt, sk->snd_max));
			SK_CHECK(tcp_seq_le(sk->sbuf_seq, sk->snd_max + 1)); /* +1: SYN unsent */
			SK_CHECK(tcp_seq_ge(sk->sbuf_seq + 1, sk->snd_una)); /* +1: FIN acked */
		}
		const struct tcp_range *oo = tcp_ooo_c(sk);
		for (uint8_t k = 0; k < sk->nooo; k++) {
			SK_CHECK(tcp_seq_lt(oo[k].l, oo[k].r));
			SK_CHECK(tcp_seq_gt(oo[k].l, sk->rcv_nxt));
			if (k)
				SK_CHECK(tcp_seq_gt(oo[k].l, oo[k - 1].r));
		}
		sk_time_ns t = SK_MIN(SK_MIN(sk->rtx_at, sk->persist_at),
				      SK_MIN(sk->delack_at, SK_MIN(sk->keep_at, sk->tw_at)));
		if (sk->fl & TF_PACE_WAIT) {
			SK_CHECK(sk->pacing_rate != 0);
			t = SK_MIN(t, tcp_pace_wake(sk));
		}
		SK_CHECK(timer_heap_get(&st->timers, sk->id) == t);
		if (t != SK_TIME_NEVER)
			nheap++;
	}
	SK_CHECK(nfree == st->nfree);
	SK_CHECK(nheap == st->timers.n);
	SK_CHECK(nsbuf + st->spool.navail == st->spool.n);
	SK_CHECK(nrbuf + st->rpool.navail == st->rpool.n);
	SK_CHECK(nslot + st->bpool.navail == st->bpool.n);
	SK_CHECK(nboard + st->scpool.navail == st->scpool.n);
	SK_CHECK(mem == st->mem_used);
	SK_CHECK(refs == st->ref_bytes);
	return 0;
}
