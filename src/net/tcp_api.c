/* tcp_api.c — the socket API of tcp.h: listen, accept, connect, recv,
 * send, shutdown, close, options, events, info and stats.  Every call
 * checks its socket number first (tcp_get).  What a call queues leaves at
 * the next tcp_poll; only an abort's RST goes out at once. */
#include "../wire/flow_hash.h"
#include "tcp_cc.h"
#include "tcp_int.h"

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

int tcp_accept(struct tcp_stack *st, int lsock, struct sk_addr *raddr, uint16_t *rport)
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
	if (dst == 0)
		return -SK_EINVAL;
	struct sk_addr d = sk_addr_v4(dst);
	return tcp_connect_addr(st, now, &d, dport);
}

int tcp_connect_addr(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *dst,
		     uint16_t dport)
{
	if (dport == 0 || sk_addr_is_any(dst) || (sk_addr_is_v4(dst) && sk_addr_ip4(dst) == 0))
		return -SK_EINVAL;
	struct sk_addr src;
	if (sk_addr_is_v4(dst)) {
		if (st->cfg.local_ip == 0)
			return -SK_EADDRNOTAVAIL;
		src = sk_addr_v4(st->cfg.local_ip);
	} else if (!st->cfg.src6 || !st->cfg.src6(st->cfg.out_ctx, dst, &src) ||
		   sk_addr_is_v4(&src) || sk_addr_is_any(&src)) {
		return -SK_EADDRNOTAVAIL;
	}
	struct tcp_sock *sk = tcp_sock_alloc(st);
	if (!sk)
		return -SK_EMFILE;
	uint32_t range = (uint32_t)st->cfg.eph_hi - st->cfg.eph_lo + 1;
	uint16_t port = 0;
	unsigned nw = st->cfg.steer_workers;
	/* With steering, the ports that hash elsewhere are passed over and
	 * not counted as tries: about (nw-1)/nw of them. */
	for (uint32_t seen = 0, tries = 0; seen < range && tries < 4096; seen++) {
		uint16_t p = st->eph_next;
		st->eph_next = p >= st->cfg.eph_hi ? st->cfg.eph_lo : (uint16_t)(p + 1);
		if (nw > 1 &&
		    flow_hash_worker(flow_hash_tuple(&src, p, dst, dport), nw) != st->cfg.steer_self)
			continue;
		tries++;
		struct tcp_sock *o = tcp_lookup(st, &src, p, dst, dport);
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
	tcp_conn_init(st, sk, now, &src, port, dst, dport);
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
	if (st->mem_state != TCP_MEM_NORMAL)
		tcp_buf_shrink(st, sk);
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
	    space >= adv_before + SK_MIN(sk->rmax / 2, (uint32_t)tcp_our_mss(st, &sk->raddr))) {
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
	if (want)
		tcp_sbuf_tune(st, sk); /* before the take: a grown side takes a slot */
	if (want && !tcp_sbuf_take(st, sk)) {
		tcp_sbuf_wait(st, sk);
		return -SK_EAGAIN;
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

int tcp_send_ref(struct tcp_stack *st, int s, const void *p, size_t len)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	int r = tcp_send_check(sk);
	if (r)
		return r;
	if (len == 0)
		return 0;
	tcp_sbuf_tune(st, sk);
	if (!tcp_sbuf_take(st, sk)) {
		tcp_sbuf_wait(st, sk);
		return -SK_EAGAIN;
	}
	uint32_t n = (uint32_t)SK_MIN(len, (size_t)(sk->smax > sk->slen ? sk->smax - sk->slen : 0));
	n = SK_MIN(n, 0x7fffffffu);
	if (n == 0) {
		sk->fl |= TF_WANT_WRITE;
		return -SK_EAGAIN;
	}
	uint32_t seq = sk->sbuf_seq + sk->slen;
	struct tcp_ref *last = sk->nref ? &sk->ref[sk->nref - 1] : NULL;
	if (last && last->seq + last->len == seq && last->p + last->len == (const uint8_t *)p) {
		last->len += n; /* the next piece of the same body */
	} else if (sk->nref < TCP_REFS) {
		sk->ref[sk->nref++] = (struct tcp_ref){seq, n, p};
	} else {
		st->stats.send_ref_copies += n;
		return tcp_send(st, s, p, n);
	}
	/* The room is taken, its bytes left as they are: tcp_fill reads p. */
	sk->slen += n;
	st->ref_bytes += n;
	st->stats.send_ref_bytes += n;
	if (n < len)
		sk->fl |= TF_WANT_WRITE;
	tcp_egress(st, sk);
	return (int)n;
}

uint64_t tcp_refs_held(const struct tcp_stack *st)
{
	return st->ref_bytes;
}

int tcp_send_space(struct tcp_stack *st, int s)
{
	struct tcp_sock *sk = tcp_get(st, s);
	if (!sk)
		return -SK_EBADF;
	if (sk->fl & TF_FIN_QUEUED)
		return -SK_EPIPE;
	tcp_sbuf_tune(st, sk);
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
		sk->fl |= TF_SLOCK; /* the app chose: no autotuning (as Linux) */
		return 0;
	case TCP_SO_RCVBUF:
		sk->rmax = SK_MAX(SK_MIN((uint32_t)v, sk->rcap), 1024u);
		sk->fl |= TF_RLOCK;
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

uint32_t tcp_unfinished(const struct tcp_stack *st)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < st->cfg.max_sockets; s++) {
		if (!st->socks[s].in_use)
			continue;
		switch ((enum tcp_state)st->socks[s].state) {
		case TCP_SYN_RECEIVED:
		case TCP_ESTABLISHED:
		case TCP_FIN_WAIT_1:
		case TCP_CLOSE_WAIT:
		case TCP_CLOSING:
		case TCP_LAST_ACK:
			n++;
			break;
		default: /* LISTEN, SYN_SENT, FIN_WAIT_2, TIME_WAIT: nothing owed */
			break;
		}
	}
	return n;
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
	in->pipe = tcp_pipe(sk);
	in->sndbuf = sk->smax;
	in->pacing_rate = sk->pacing_rate;
	in->limit = sk->limit;
	in->recovery = !!(sk->fl & TF_RECOVERY);
	const struct tcp_cc_ops *cc = tcp_cc(sk);
	if (cc->model)
		in->cc_mode = cc->model(sk, &in->cc_bw);
	return 0;
}

const char *tcp_limit_name(enum tcp_limit l)
{
	static const char *const names[] = {"-", "busy", "rwnd", "sndbuf", "cwnd", "pace"};
	return (unsigned)l < SK_ARRAY_LEN(names) ? names[l] : "?";
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
	/* Gauges of the grown-buffer budget (tcp_config.buf_max). */
	fn(ctx, "tcp_mem_used", st->mem_used);
	fn(ctx, "tcp_mem_state", st->mem_state);
	/* A high-water mark (bytes/s), not a count. */
	fn(ctx, "tcp_pacing_rate_max", st->pacing_rate_max);
}
