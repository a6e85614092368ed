/* tcp_sock.c — the socket pool, 4-tuple demux, lists, readiness and the
 * socket API of tcp.h. */
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

/* No send buffer and the pool is empty: wait on st->sbuf_wait for a
 * release (an app that sees -SK_EAGAIN waits for TCP_EV_WRITE). */
static void tcp_sbuf_wait(struct tcp_stack *st, struct tcp_sock *sk)
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

/* ---- demux ---- */

static uint32_t tcp_bucket(const struct tcp_stack *st, uint32_t laddr, uint16_t lport,
			   uint32_t raddr, uint16_t rport)
{
	return tcp_tuple_hash(st, laddr, lport, raddr, rport) & st->hash_mask;
}

struct tcp_sock *tcp_lookup(struct tcp_stack *st, uint32_t laddr, uint16_t lport, uint32_t raddr,
			    uint16_t rport)
{
	uint32_t i = st->hash[tcp_bucket(st, laddr, lport, raddr, rport)];
	while (i != TCP_NIL) {
		struct tcp_sock *sk = &st->socks[i];
		if (sk->lport == lport && sk->rport == rport && sk->raddr == raddr &&
		    sk->laddr == laddr)
			return sk;
		i = sk->hnext;
	}
	return NULL;
}

struct tcp_sock *tcp_lookup_listener(struct tcp_stack *st, uint16_t lport)
{
	struct tcp_sock *sk = tcp_lookup(st, 0, lport, 0, 0);
	return sk && sk->state == TCP_LISTEN ? sk : NULL;
}

void tcp_hash_insert(struct tcp_stack *st, struct tcp_sock *sk)
{
	uint32_t b = tcp_bucket(st, sk->laddr, sk->lport, sk->raddr, sk->rport);
	sk->hnext = st->hash[b];
	st->hash[b] = sk->id;
}

static void tcp_hash_remove(struct tcp_stack *st, struct tcp_sock *sk)
{
	uint32_t *pp = &st->hash[tcp_bucket(st, sk->laddr, sk->lport, sk->raddr, sk->rport)];
	while (*pp != TCP_NIL) {
		if (*pp == sk->id) {
			*pp = sk->hnext;
			sk->hnext = TCP_NIL;
			return;
		}
		pp = &st->socks[*pp].hnext;
	}
}

/* ---- pool ---- */

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

static void tcp_unlink_parent(struct tcp_sock *sk)
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

void tcp_conn_init(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t laddr,
		   uint16_t lport, uint32_t raddr, uint16_t rport)
{
	sk->laddr = laddr;
	sk->lport = lport;
	sk->raddr = raddr;
	sk->rport = rport;
	sk->iss = tcp_isn(st, now, laddr, lport, raddr, rport);
	sk->snd_una = sk->snd_nxt = sk->snd_max = sk->iss;
	sk->sbuf_seq = sk->iss + 1;
	sk->ts_off = tcp_ts_offset(st, laddr, lport, raddr, rport);
	sk->snd_mss = 536; /* RFC 9293 3.7.1 default until the peer says */
	sk->rcv_wscale = st->rcv_wscale;
	sk->rto = (sk_time_ns)st->cfg.rto_init_ms * SK_NS_PER_MS;
	sk->ssthresh = UINT32_MAX;
	sk->quickacks = TCP_QUICKACKS;
	sk->last_rcv = now;
}

/* ---- lists, events, timers ---- */

void tcp_event(struct tcp_stack *st, struct tcp_sock *sk, unsigned ev)
{
	if (sk->fl & TF_ORPHAN)
		return;
	if (sk->parent) /* not yet accepted: the listener speaks for it */
		return;
	sk->ev |= ev;
	if (!tcp_linked(&sk->rd))
		tcp_list_add_tail(&st->ready, &sk->rd);
}

void tcp_egress(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!tcp_linked(&sk->eg))
		tcp_list_add_tail(&st->egress, &sk->eg);
}

void tcp_timer_sync(struct tcp_stack *st, struct tcp_sock *sk)
{
	sk_time_ns t = sk->rtx_at;
	t = SK_MIN(t, sk->persist_at);
	t = SK_MIN(t, sk->delack_at);
	t = SK_MIN(t, sk->keep_at);
	t = SK_MIN(t, sk->tw_at);
	if (timer_heap_get(&st->timers, sk->id) != t)
		timer_heap_set(&st->timers, sk->id, t);
}

static void tcp_timers_off(struct tcp_sock *sk)
{
	sk->rtx_at = sk->persist_at = sk->delack_at = sk->keep_at = sk->tw_at = SK_TIME_NEVER;
}

/* The connection is over (CLOSED).  An orphan or an unaccepted child is
 * freed; otherwise the app keeps the slot until tcp_close, and sees `err`. */
void tcp_conn_done(struct tcp_stack *st, struct tcp_sock *sk, int err)
{
	if ((sk->fl & TF_ORPHAN) || sk->parent) {
		tcp_sock_free(st, sk);
		return;
	}
	tcp_hash_remove(st, sk);
	tcp_list_del(&sk->eg);
	tcp_list_del(&sk->tw);
	tcp_timers_off(sk);
	tcp_timer_sync(st, sk);
	sk->state = TCP_CLOSED;
	if (err)
		sk->err = err;
	tcp_event(st, sk, TCP_EV_READ | TCP_EV_WRITE | (err ? TCP_EV_ERROR : 0));
}

void tcp_enter_time_wait(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	sk->state = TCP_TIME_WAIT;
	sk->rtx_at = sk->persist_at = sk->keep_at = SK_TIME_NEVER;
	sk->tw_at = now + 2ull * st->cfg.msl_ms * SK_NS_PER_MS;
	tcp_list_del(&sk->tw);
	if (sk->fl & TF_ORPHAN) /* only orphans may be recycled */
		tcp_list_add_tail(&st->tw, &sk->tw);
	tcp_event(st, sk, TCP_EV_READ);
}

/* A passive child finished its handshake: into the accept queue. */
void tcp_child_established(struct tcp_stack *st, struct tcp_sock *sk)
{
	struct tcp_sock *l = sk->parent;
	st->stats.established++;
	if (!l) {
		tcp_event(st, sk, TCP_EV_WRITE);
		return;
	}
	l->syn_n--;
	tcp_list_del(&sk->q);
	l->acc_n++;
	tcp_list_add_tail(&l->accq, &sk->q);
	tcp_event(st, l, TCP_EV_ACCEPT);
}

/* ---- socket API ---- */

static struct tcp_sock *tcp_get(const struct tcp_stack *st, int s)
{
	if (s < 0 || (uint32_t)s >= st->cfg.max_sockets)
		return NULL;
	struct tcp_sock *sk = &st->socks[s];
	if (!sk->in_use || (sk->fl & TF_ORPHAN) || sk->parent)
		return NULL;
	return sk;
}

int tcp_listen(struct tcp_stack *st, uint16_t port, int backlog)
{
	if (port == 0)
		return -SK_EINVAL;
	if (tcp_lookup_listener(st, port))
		return -SK_EADDRINUSE;
	struct tcp_sock *sk = tcp_sock_alloc(st);
	if (!sk)
		return -SK_EMFILE;
	sk->lport = port;
	sk->state = TCP_LISTEN;
	sk->backlog = backlog > 0 ? (uint32_t)backlog : TCP_DEFAULT_BACKLOG;
	sk->fl |= TF_ACCEPTED;
	tcp_hash_insert(st, sk);
	return (int)sk->id;
}

int tcp_accept(struct tcp_stack *st, int lsock, uint32_t *raddr, uint16_t *rport)
{
	struct tcp_sock *l = tcp_get(st, lsock);
	if (!l || l->state != TCP_LISTEN)
		return -SK_EINVAL;
	if (tcp_list_empty(&l->accq))
		return -SK_EAGAIN;
	struct tcp_sock *sk = tcp_container(l->accq.next, q);
	tcp_unlink_parent(sk);
	if (!tcp_list_empty(&l->accq)) /* a listener stays ready while its queue is not empty */
		tcp_event(st, l, TCP_EV_ACCEPT);
	sk->fl |= TF_ACCEPTED;
	if (raddr)
		*raddr = sk->raddr;
	if (rport)
		*rport = sk->rport;
	/* Whatever happened before accept is readiness now. */
	unsigned ev = TCP_EV_WRITE;
	if (sk->rlen || (sk->fl & TF_FIN_RCVD))
		ev |= TCP_EV_READ;
	tcp_event(st, sk, ev);
	return (int)sk->id;
}

int tcp_connect(struct tcp_stack *st, sk_time_ns now, uint32_t dst, uint16_t dport)
{
	if (dport == 0 || dst == 0)
		return -SK_EINVAL;
	if (st->cfg.local_ip == 0)
		return -SK_EADDRNOTAVAIL;
	struct tcp_sock *sk = tcp_sock_alloc(st);
	if (!sk)
		return -SK_EMFILE;
	uint32_t range = (uint32_t)st->cfg.eph_hi - st->cfg.eph_lo + 1;
	uint16_t port = 0;
	for (uint32_t tries = 0; tries < range && tries < 4096; tries++) {
		uint16_t p = st->eph_next;
		st->eph_next = p >= st->cfg.eph_hi ? st->cfg.eph_lo : (uint16_t)(p + 1);
		struct tcp_sock *o = tcp_lookup(st, st->cfg.local_ip, p, dst, dport);
		if (!o) {
			port = p;
			break;
		}
		if (o->state == TCP_TIME_WAIT && (o->fl & TF_ORPHAN)) {
			/* Reuse our own TIME_WAIT (Linux's tw_reuse): the new ISN is
			 * larger (clock-driven), so the peer's TIME_WAIT accepts it. */
			st->stats.tw_reuse++;
			tcp_sock_free(st, o);
			port = p;
			break;
		}
	}
	if (!port) {
		tcp_sock_free(st, sk);
		return -SK_EADDRNOTAVAIL;
	}
	tcp_conn_init(st, sk, now, st->cfg.local_ip, port, dst, dport);
	sk->state = TCP_SYN_SENT;
	sk->fl |= TF_ACCEPTED;
	tcp_hash_insert(st, sk);
	st->stats.active_opens++;
	tcp_egress(st, sk);
	return (int)sk->id;
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

int tcp_recv(struct tcp_stack *st, int s, void *buf, size_t len)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	if (sk->state == TCP_LISTEN)
		return -SK_ENOTCONN;
	if (sk->rlen == 0) {
		if (sk->err) {
			int e = sk->err;
			sk->err = 0;
			return e;
		}
		if (sk->fl & TF_FIN_RCVD)
			return 0;
		if (sk->state == TCP_CLOSED)
			return -SK_ENOTCONN;
		return -SK_EAGAIN;
	}
	uint32_t adv_before = sk->rcv_adv - sk->rcv_nxt;
	uint32_t n = (uint32_t)SK_MIN(len, (size_t)sk->rlen);
	if (n > (uint32_t)0x7fffffff)
		n = 0x7fffffff;
	uint32_t first = SK_MIN(n, sk->rcap - sk->rhead);
	sk_memcpy(buf, sk->rbuf + sk->rhead, first);
	sk_memcpy((uint8_t *)buf + first, sk->rbuf, n - first);
	sk->rhead = (sk->rhead + n) % sk->rcap;
	sk->rlen -= n;
	tcp_rbuf_release(st, sk); /* all read: an idle socket holds no buffer */
	/* A short read that empties the queue tells an edge-triggered app
	 * "drained, wait for the next edge" (loop.h).  If the peer's FIN (or
	 * an error) is already in, no later arrival will raise that edge: the
	 * FIN came in the same batch as the data and its READ was consumed by
	 * this read.  Raise it again so the app comes back for the 0 (else a
	 * request + FIN left the socket in CLOSE_WAIT until an app timeout). */
	if (sk->rlen == 0 && n < len && ((sk->fl & TF_FIN_RCVD) || sk->err)) {
		st->stats.eof_rearms++;
		tcp_event(st, sk, TCP_EV_READ);
	}
	/* Receiver SWS avoidance (RFC 9293 3.8.6.2.2): announce a window update
	 * only once it opened by min(half the buffer, one MSS). */
	uint32_t space = tcp_rcv_space(st, sk);
	if (tcp_synchronized(sk) && !(sk->fl & TF_FIN_RCVD) &&
	    space >= adv_before + SK_MIN(sk->rmax / 2, (uint32_t)st->mss)) {
		st->stats.window_updates++;
		tcp_ack_now(st, sk);
	}
	return (int)n;
}

static int tcp_send_check(struct tcp_sock *sk)
{
	if (sk->err) {
		int e = sk->err;
		sk->err = 0;
		return e;
	}
	if (sk->fl & TF_FIN_QUEUED)
		return -SK_EPIPE;
	switch (sk->state) {
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
		return 0;
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		return -SK_EAGAIN;
	case TCP_LISTEN:
		return -SK_ENOTCONN;
	default:
		return -SK_EPIPE;
	}
}

int tcp_sendv(struct tcp_stack *st, int s, const struct tcp_iov *iov, int iovcnt)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	int r = tcp_send_check(sk);
	if (r)
		return r;
	size_t want = 0;
	for (int i = 0; i < iovcnt; i++)
		want += iov[i].len;
	if (want && !sk->sbuf) {
		sk->sbuf = tcp_pool_get(&st->spool);
		sk->shead = 0;
		if (!sk->sbuf) {
			tcp_sbuf_wait(st, sk);
			return -SK_EAGAIN;
		}
	}
	uint32_t total = 0;
	for (int i = 0; i < iovcnt; i++) {
		const uint8_t *src = iov[i].base;
		size_t left = iov[i].len;
		while (left && sk->slen < sk->smax && total < 0x7fffffff) {
			uint32_t tail = (sk->shead + sk->slen) % sk->scap;
			uint32_t n = (uint32_t)SK_MIN(left, (size_t)(sk->smax - sk->slen));
			n = SK_MIN(n, sk->scap - tail);
			sk_memcpy(sk->sbuf + tail, src, n);
			sk->slen += n;
			src += n;
			left -= n;
			total += n;
		}
	}
	if (total < want)
		sk->fl |= TF_WANT_WRITE;
	if (total == 0)
		return want ? -SK_EAGAIN : 0;
	tcp_egress(st, sk);
	return (int)total;
}

int tcp_send_space(struct tcp_stack *st, int s)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	if (sk->fl & TF_FIN_QUEUED)
		return -SK_EPIPE;
	if (!sk->sbuf && st->spool.navail == 0) {
		tcp_sbuf_wait(st, sk);
		return 0;
	}
	uint32_t space = sk->smax > sk->slen ? sk->smax - sk->slen : 0;
	if (!space)
		sk->fl |= TF_WANT_WRITE; /* the caller waits for TCP_EV_WRITE */
	return (int)space;
}

int tcp_send(struct tcp_stack *st, int s, const void *buf, size_t len)
{
	struct tcp_iov v = {buf, len};
	return tcp_sendv(st, s, &v, 1);
}

static void tcp_queue_fin(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (sk->fl & TF_FIN_QUEUED)
		return;
	switch (sk->state) {
	case TCP_ESTABLISHED:
		sk->state = TCP_FIN_WAIT_1;
		break;
	case TCP_CLOSE_WAIT:
		sk->state = TCP_LAST_ACK;
		break;
	case TCP_SYN_RECEIVED: /* FIN goes after the handshake completes */
		break;
	default:
		return;
	}
	sk->fl |= TF_FIN_QUEUED;
	tcp_egress(st, sk);
}

int tcp_shutdown(struct tcp_stack *st, int s, int how)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	if (how != TCP_SHUT_WR)
		return -SK_EINVAL;
	if (sk->state == TCP_SYN_SENT) {
		tcp_conn_done(st, sk, 0);
		return 0;
	}
	if (!tcp_synchronized(sk) && sk->state != TCP_SYN_RECEIVED)
		return -SK_ENOTCONN;
	tcp_queue_fin(st, sk);
	return 0;
}

int tcp_abort(struct tcp_stack *st, sk_time_ns now, int s)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	if (sk->state == TCP_SYN_RECEIVED || (tcp_synchronized(sk) && sk->state != TCP_TIME_WAIT))
		tcp_send_rst(st, sk, now);
	tcp_sock_free(st, sk);
	return 0;
}

int tcp_close(struct tcp_stack *st, sk_time_ns now, int s)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	switch (sk->state) {
	case TCP_CLOSED:
	case TCP_LISTEN:
	case TCP_SYN_SENT:
		tcp_sock_free(st, sk);
		return 0;
	default:
		break;
	}
	if (sk->rlen) { /* RFC 2525 2.17: unread data is lost, tell the peer */
		return tcp_abort(st, now, s);
	}
	sk->fl |= TF_ORPHAN | TF_RCV_SHUT;
	tcp_list_del(&sk->rd);
	tcp_list_del(&sk->q); /* an orphan sends nothing more: stop waiting */
	if (sk->state == TCP_TIME_WAIT && !tcp_linked(&sk->tw))
		tcp_list_add_tail(&st->tw, &sk->tw);
	tcp_queue_fin(st, sk);
	if (sk->state == TCP_FIN_WAIT_2) { /* shut down earlier, peer acked: bound the wait */
		sk->tw_at = now + (sk_time_ns)st->cfg.fin2_timeout_ms * SK_NS_PER_MS;
		tcp_timer_sync(st, sk);
	}
	return 0;
}

int tcp_setsockopt(struct tcp_stack *st, int s, enum tcp_sockopt opt, int v)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	if (v < 0)
		return -SK_EINVAL;
	switch (opt) {
	case TCP_SO_NODELAY:
		if (v)
			sk->fl |= TF_NODELAY;
		else
			sk->fl &= ~(uint32_t)TF_NODELAY;
		if (sk->slen)
			tcp_egress(st, sk); /* a held small segment may go now */
		return 0;
	case TCP_SO_KEEPALIVE:
		if (v) {
			sk->fl |= TF_KEEPALIVE;
			if (tcp_synchronized(sk))
				sk->keep_at = sk->last_rcv + (sk_time_ns)sk->keep_idle_ms * SK_NS_PER_MS;
		} else {
			sk->fl &= ~(uint32_t)TF_KEEPALIVE;
			sk->keep_at = SK_TIME_NEVER;
		}
		tcp_timer_sync(st, sk);
		return 0;
	case TCP_SO_KEEPIDLE_MS:
		sk->keep_idle_ms = v ? (uint32_t)v : 1;
		return 0;
	case TCP_SO_KEEPINTVL_MS:
		sk->keep_intvl_ms = v ? (uint32_t)v : 1;
		return 0;
	case TCP_SO_KEEPCNT:
		sk->keep_cnt = (uint8_t)SK_MIN(v, 255);
		return 0;
	case TCP_SO_SNDBUF:
		sk->smax = SK_MAX(SK_MIN((uint32_t)v, sk->scap), 1024u);
		return 0;
	case TCP_SO_RCVBUF:
		sk->rmax = SK_MAX(SK_MIN((uint32_t)v, sk->rcap), 1024u);
		return 0;
	case TCP_SO_USER_TIMEOUT_MS:
		sk->user_timeout_ms = (uint32_t)v;
		return 0;
	}
	return -SK_EINVAL;
}

int tcp_getsockopt(const struct tcp_stack *st, int s, enum tcp_sockopt opt)
{
	const struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	switch (opt) {
	case TCP_SO_NODELAY:
		return !!(sk->fl & TF_NODELAY);
	case TCP_SO_KEEPALIVE:
		return !!(sk->fl & TF_KEEPALIVE);
	case TCP_SO_KEEPIDLE_MS:
		return (int)sk->keep_idle_ms;
	case TCP_SO_KEEPINTVL_MS:
		return (int)sk->keep_intvl_ms;
	case TCP_SO_KEEPCNT:
		return sk->keep_cnt;
	case TCP_SO_SNDBUF:
		return (int)sk->smax;
	case TCP_SO_RCVBUF:
		return (int)sk->rmax;
	case TCP_SO_USER_TIMEOUT_MS:
		return (int)sk->user_timeout_ms;
	}
	return -SK_EINVAL;
}

int tcp_events(struct tcp_stack *st, struct tcp_event *ev, int max)
{
	int n = 0;
	while (n < max && !tcp_list_empty(&st->ready)) {
		struct tcp_sock *sk = tcp_container(st->ready.next, rd);
		tcp_list_del(&sk->rd);
		ev[n].sock = (int)sk->id;
		ev[n].events = sk->ev;
		ev[n].user = sk->user;
		sk->ev = 0;
		n++;
	}
	return n;
}

void tcp_set_user(struct tcp_stack *st, int s, void *user)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (sk)
		sk->user = user;
}

int tcp_info(const struct tcp_stack *st, int s, struct tcp_info *in)
{
	if (s < 0 || (uint32_t)s >= st->cfg.max_sockets || !st->socks[s].in_use)
		return -SK_EBADF;
	const struct tcp_sock *sk = &st->socks[s];
	sk_memset(in, 0, sizeof(*in));
	in->state = (enum tcp_state)sk->state;
	in->laddr = sk->laddr;
	in->raddr = sk->raddr;
	in->lport = sk->lport;
	in->rport = sk->rport;
	in->snd_mss = (uint16_t)tcp_eff_mss(sk);
	in->snd_wscale = sk->snd_wscale;
	in->rcv_wscale = sk->rcv_wscale;
	in->ts = !!(sk->fl & TF_TS);
	in->sack = !!(sk->fl & TF_SACK);
	in->ws = !!(sk->fl & TF_WS);
	in->cwnd = sk->cwnd;
	in->ssthresh = sk->ssthresh;
	in->snd_wnd = sk->snd_wnd;
	in->rcv_wnd = sk->rcv_adv - sk->rcv_nxt;
	in->srtt_us = sk->srtt_us;
	in->rto_ms = (uint32_t)(sk->rto / SK_NS_PER_MS);
	in->unacked = sk->snd_max - sk->snd_una;
	in->unsent = sk->slen - SK_MIN(sk->slen, sk->snd_max - sk->sbuf_seq);
	in->unread = sk->rlen;
	in->retransmits = sk->nrtx;
	return 0;
}

const char *tcp_state_name(enum tcp_state s)
{
	static const char *const names[] = {
		"CLOSED", "LISTEN", "SYN_SENT", "SYN_RECEIVED", "ESTABLISHED", "FIN_WAIT_1",
		"FIN_WAIT_2", "CLOSE_WAIT", "CLOSING", "LAST_ACK", "TIME_WAIT",
	};
	return (unsigned)s < SK_ARRAY_LEN(names) ? names[s] : "?";
}

void tcp_stats(const struct tcp_stack *st, tcp_stat_fn fn, void *ctx)
{
#define TCP_STAT_PRINT(n) fn(ctx, "tcp_" #n, st->stats.n);
	TCP_STATS(TCP_STAT_PRINT)
#undef TCP_STAT_PRINT
}

/* Walks every socket: for tests and fuzzers only, never on the fast path. */
int tcp_check(const struct tcp_stack *st)
{
#define TCP_CHECK(c)                      \
	do {                              \
		if (!(c))                 \
			return -__LINE__; \
	} while (0)
	uint32_t nfree = 0, nheap = 0, nsbuf = 0, nrbuf = 0;
	for (uint32_t i = 0; i < st->cfg.max_sockets; i++) {
		const struct tcp_sock *sk = &st->socks[i];
		if (!sk->in_use) {
			nfree++;
			continue;
		}
		TCP_CHECK(sk->slen <= sk->scap && sk->shead < sk->scap);
		TCP_CHECK(sk->rlen <= sk->rcap && sk->rhead < sk->rcap);
		TCP_CHECK(sk->nooo <= TCP_OOO_MAX && sk->nscore <= TCP_SCORE_MAX);
		TCP_CHECK(!sk->sbuf == !sk->slen);
		TCP_CHECK(!sk->rbuf == !(sk->rlen || sk->nooo));
		nsbuf += !!sk->sbuf;
		nrbuf += !!sk->rbuf;
		if (sk->state >= TCP_SYN_SENT && sk->state != TCP_CLOSED) {
			TCP_CHECK(tcp_seq_le(sk->snd_una, sk->snd_nxt));
			TCP_CHECK(tcp_seq_le(sk->snd_nxt, sk->snd_max));
			TCP_CHECK(tcp_seq_le(sk->sbuf_seq, sk->snd_max + 1)); /* +1: SYN unsent */
			TCP_CHECK(tcp_seq_ge(sk->sbuf_seq + 1, sk->snd_una)); /* +1: FIN acked */
		}
		for (uint8_t k = 0; k < sk->nooo; k++) {
			TCP_CHECK(tcp_seq_lt(sk->ooo[k].l, sk->ooo[k].r));
			TCP_CHECK(tcp_seq_gt(sk->ooo[k].l, sk->rcv_nxt));
			if (k)
				TCP_CHECK(tcp_seq_gt(sk->ooo[k].l, sk->ooo[k - 1].r));
		}
		sk_time_ns t = SK_MIN(SK_MIN(sk->rtx_at, sk->persist_at),
				      SK_MIN(sk->delack_at, SK_MIN(sk->keep_at, sk->tw_at)));
		TCP_CHECK(timer_heap_get(&st->timers, sk->id) == t);
		if (t != SK_TIME_NEVER)
			nheap++;
	}
	TCP_CHECK(nfree == st->nfree);
	TCP_CHECK(nheap == st->timers.n);
	TCP_CHECK(nsbuf + st->spool.navail == st->spool.n);
	TCP_CHECK(nrbuf + st->rpool.navail == st->rpool.n);
	return 0;
#undef TCP_CHECK
}
