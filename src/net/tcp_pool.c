/* tcp_pool.c — the arena and what is carved from it: the configuration's
 * sizes, tcp_stack_init, the socket pool (alloc, free) and the send and
 * receive buffer pools; and tcp_check, which audits them.
 *
 * Arena layout (tcp_stack_init): sockets | hash buckets | timer heap ids,
 * positions, keys | scratch segment | send buffers | receive buffers.  The
 * buffer pools come last, so the part never used is never touched. */
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
	sz += (size_t)tcp_nbufs(cfg) * (TCP_ALIGN(cfg->sndbuf) + TCP_ALIGN(cfg->rcvbuf));
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

bool tcp_rbuf_take(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!sk->rbuf) {
		sk->rbuf = tcp_pool_get(&st->rpool);
		sk->rhead = 0;
	}
	return sk->rbuf != NULL;
}

void tcp_rbuf_release(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (sk->rbuf && sk->rlen == 0 && sk->nooo == 0) {
		tcp_pool_put(&st->rpool, sk->rbuf);
		sk->rbuf = NULL;
		sk->rhead = 0;
	}
}

void tcp_sbuf_release(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!sk->sbuf || sk->slen)
		return;
	tcp_pool_put(&st->spool, sk->sbuf);
	sk->sbuf = NULL;
	sk->shead = 0;
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

bool tcp_sbuf_take(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!sk->sbuf) {
		sk->sbuf = tcp_pool_get(&st->spool);
		sk->shead = 0;
	}
	return sk->sbuf != NULL;
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
	    cfg->eph_lo == 0 || cfg->eph_hi < cfg->eph_lo || cfg->bufs >= TCP_NIL / 2)
		return -SK_EINVAL;
	if (arena_size < tcp_arena_size(cfg))
		return -SK_ENOMEM;
	sk_memset(st, 0, sizeof(*st));
	st->cfg = *cfg;
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
	sk_memset(st->socks, 0, n * sizeof(struct tcp_sock));
	for (uint32_t i = 0; i < n; i++) {
		struct tcp_sock *sk = &st->socks[i];
		sk->id = i;
		sk->hnext = TCP_NIL;
		tcp_list_add_tail(&st->free, &sk->q);
	}
	st->nfree = n;
	st->mss = (uint16_t)(cfg->mtu - 40);
	st->rcv_wscale = tcp_wscale_for(cfg->rcvbuf);
	tcp_keys_init(st);
	st->eph_next = (uint16_t)(cfg->eph_lo +
				  siphash24(&st->hkey, "eph", 3) % ((uint32_t)cfg->eph_hi - cfg->eph_lo + 1));
	return 0;
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
	uint32_t nfree = 0, nheap = 0, nsbuf = 0, nrbuf = 0;
	for (uint32_t i = 0; i < st->cfg.max_sockets; i++) {
		const struct tcp_sock *sk = &st->socks[i];
		if (!sk->in_use) {
			nfree++;
			continue;
		}
		SK_CHECK(sk->slen <= sk->scap && sk->shead < sk->scap);
		SK_CHECK(sk->rlen <= sk->rcap && sk->rhead < sk->rcap);
		SK_CHECK(sk->nooo <= TCP_OOO_MAX && sk->nscore <= TCP_SCORE_MAX);
		SK_CHECK(!sk->sbuf == !sk->slen);
		SK_CHECK(!sk->rbuf == !(sk->rlen || sk->nooo));
		nsbuf += !!sk->sbuf;
		nrbuf += !!sk->rbuf;
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
		for (uint8_t k = 0; k < sk->nooo; k++) {
			SK_CHECK(tcp_seq_lt(sk->ooo[k].l, sk->ooo[k].r));
			SK_CHECK(tcp_seq_gt(sk->ooo[k].l, sk->rcv_nxt));
			if (k)
				SK_CHECK(tcp_seq_gt(sk->ooo[k].l, sk->ooo[k - 1].r));
		}
		sk_time_ns t = SK_MIN(SK_MIN(sk->rtx_at, sk->persist_at),
				      SK_MIN(sk->delack_at, SK_MIN(sk->keep_at, sk->tw_at)));
		SK_CHECK(timer_heap_get(&st->timers, sk->id) == t);
		if (t != SK_TIME_NEVER)
			nheap++;
	}
	SK_CHECK(nfree == st->nfree);
	SK_CHECK(nheap == st->timers.n);
	SK_CHECK(nsbuf + st->spool.navail == st->spool.n);
	SK_CHECK(nrbuf + st->rpool.navail == st->rpool.n);
	return 0;
}
