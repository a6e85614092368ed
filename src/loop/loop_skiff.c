/* loop_skiff.c — see loop_skiff.h.
 *
 * The mapping is direct because loop.h was cut to tcp.h's shape: socket
 * ids are tcp.h ids, TCP_EV_* are LOOP_EV_*, tcp_iov is loop_iov, errors
 * are the same -SK_E* codes.  What this file adds:
 *   - a callback slot per TCP socket id (loop_watch), looked up by the id
 *     each event carries: one index, no pointer kept inside the engine;
 *   - TCP_NODELAY on every accepted socket (loop.h promises Nagle off: a
 *     response must not wait for the ACK of the previous one);
 *   - the application's timers in the shared binary heap (timerq.h);
 *   - `now` of the current turn, for the ops that need a time (close) and
 *     for loop_now.
 * Edge semantics come from the engine: tcp_accept queues the new socket's
 * first edge (WRITE, and READ if data or FIN came with the handshake), so
 * a socket watched right after accept gets it on the next dispatch, as
 * epoll reports the current state when a descriptor is added.
 */
#include "loop_skiff.h"

#include "timerq.h"

_Static_assert(sizeof(struct loop_iov) == sizeof(struct tcp_iov), "loop_iov must match tcp_iov");
_Static_assert(offsetof(struct loop_iov, base) == offsetof(struct tcp_iov, base), "iov base");
_Static_assert(offsetof(struct loop_iov, len) == offsetof(struct tcp_iov, len), "iov len");
_Static_assert(LOOP_EV_READ == TCP_EV_READ && LOOP_EV_WRITE == TCP_EV_WRITE &&
		       LOOP_EV_ACCEPT == TCP_EV_ACCEPT && LOOP_EV_ERROR == TCP_EV_ERROR,
	       "event bits are passed through");

struct ls_sock {
	loop_event_fn fn; /* NULL: not watched (closed, or not registered yet) */
	void *user;
};

#define LS_STATS(X)                                                                   \
	X(turns) X(events) X(events_stale) X(timers_fired) X(accepts) X(accept_eagain)     \
	X(accept_errors) X(reads) X(read_eagain) X(writes) X(write_partial) X(write_eagain) X(ref_sends) \
	X(closes) X(connects) X(connect_errors)

struct loop_skiff {
	struct loop base;
	struct tcp_stack *tcp;
	struct loop_skiff_platform plat;
	uint32_t local_ip;
	int backlog;
	uint32_t nsocks;
	sk_time_ns now;
	struct ls_sock *socks; /* [nsocks], by TCP socket id */
	struct timerq tq;
	struct {
#define LS_FIELD(n) uint64_t n;
		LS_STATS(LS_FIELD)
#undef LS_FIELD
	} st;
};

static inline struct loop_skiff *LS(struct loop *l)
{
	return (struct loop_skiff *)l;
}

#define LS_ALIGN(x) (((x) + 15) & ~(size_t)15)

size_t loop_skiff_mem_size(const struct loop_skiff_config *cfg)
{
	uint32_t timers = cfg->max_timers ? cfg->max_timers : 1;
	return 16 + LS_ALIGN(sizeof(struct loop_skiff)) +
	       LS_ALIGN((size_t)cfg->tcp->cfg.max_sockets * sizeof(struct ls_sock)) +
	       (size_t)timers * sizeof(struct loop_timer *);
}

static int ls_listen(struct loop *l, const struct sk_addr *addr, uint16_t port, int backlog)
{
	struct loop_skiff *ls = LS(l);
	/* The engine listens on every local address: the one IPv4 address
	 * and the IPv6 ones.  :: takes both families; the IPv4 address names
	 * the interface's own; an IPv6 one is not told apart here, so it is
	 * refused rather than taken to mean every address. */
	if (!sk_addr_is_any(addr) && (!sk_addr_is_v4(addr) || sk_addr_ip4(addr) != ls->local_ip))
		return -SK_EADDRNOTAVAIL;
	return tcp_listen(ls->tcp, port, backlog > 0 ? backlog : ls->backlog);
}

static int ls_accept(struct loop *l, int lsock, struct loop_peer *peer)
{
	struct loop_skiff *ls = LS(l);
	struct sk_addr addr;
	uint16_t port;
	int s = tcp_accept(ls->tcp, lsock, &addr, &port);
	if (s < 0) {
		if (s == -SK_EAGAIN)
			ls->st.accept_eagain++;
		else
			ls->st.accept_errors++;
		return s;
	}
	ls->st.accepts++;
	tcp_setsockopt(ls->tcp, s, TCP_SO_NODELAY, 1);
	if (peer) {
		peer->addr = addr;
		peer->port = port;
	}
	return s;
}

static int ls_connect(struct loop *l, const struct sk_addr *addr, uint16_t port)
{
	struct loop_skiff *ls = LS(l);
	/* From the engine's one address (cfg.local_ip); the engine reports
	 * TCP_EV_WRITE once established and TCP_EV_ERROR on failure, which
	 * is exactly loop.h's contract. */
	int s = tcp_connect_addr(ls->tcp, ls->now, addr, port);
	if (s < 0) {
		ls->st.connect_errors++;
		return s;
	}
	ls->st.connects++;
	tcp_setsockopt(ls->tcp, s, TCP_SO_NODELAY, 1);
	return s;
}

static int ls_watch(struct loop *l, int sock, loop_event_fn fn, void *user)
{
	struct loop_skiff *ls = LS(l);
	/* Only a socket the application holds (not closed, not an orphan). */
	if (sock < 0 || (uint32_t)sock >= ls->nsocks ||
	    tcp_getsockopt(ls->tcp, sock, TCP_SO_NODELAY) < 0)
		return -SK_EBADF;
	ls->socks[sock] = (struct ls_sock){.fn = fn, .user = user};
	return 0;
}

static long ls_read(struct loop *l, int sock, void *buf, size_t len)
{
	struct loop_skiff *ls = LS(l);
	int n = tcp_recv(ls->tcp, sock, buf, len);
	if (n >= 0)
		ls->st.reads++;
	else if (n == -SK_EAGAIN)
		ls->st.read_eagain++;
	return n;
}

static long ls_writev(struct loop *l, int sock, const struct loop_iov *iov, int iovcnt)
{
	struct loop_skiff *ls = LS(l);
	int n = tcp_sendv(ls->tcp, sock, (const struct tcp_iov *)(const void *)iov, iovcnt);
	if (n >= 0) {
		ls->st.writes++;
		size_t want = 0;
		for (int i = 0; i < iovcnt; i++)
			want += iov[i].len;
		if ((size_t)n < want)
			ls->st.write_partial++;
	} else if (n == -SK_EAGAIN) {
		ls->st.write_eagain++;
	}
	return n;
}

/* The head copied, the body by reference (loop.h send_ref). */
static long ls_send_ref(struct loop *l, int sock, const struct loop_iov *head, int nhead,
			const void *p, size_t len)
{
	struct loop_skiff *ls = LS(l);
	size_t hlen = 0;
	for (int i = 0; i < nhead; i++)
		hlen += head[i].len;
	long n = 0;
	if (hlen) {
		n = ls_writev(l, sock, head, nhead);
		if (n < 0 || (size_t)n < hlen)
			return n;
	}
	int r = tcp_send_ref(ls->tcp, sock, p, len);
	if (r < 0) {
		if (r == -SK_EAGAIN)
			ls->st.write_eagain++;
		return n > 0 ? n : r;
	}
	ls->st.ref_sends++;
	if ((size_t)r < len)
		ls->st.write_partial++;
	return n + r;
}

static uint64_t ls_refs_held(struct loop *l)
{
	return tcp_refs_held(LS(l)->tcp);
}

static int ls_shutdown(struct loop *l, int sock)
{
	return tcp_shutdown(LS(l)->tcp, sock, TCP_SHUT_WR);
}

static int ls_close(struct loop *l, int sock)
{
	struct loop_skiff *ls = LS(l);
	/* Forget the callback first: events of this batch already popped for
	 * the id are then skipped as stale (until the id is watched again). */
	if (sock >= 0 && (uint32_t)sock < ls->nsocks)
		ls->socks[sock].fn = NULL;
	ls->st.closes++;
	return tcp_close(ls->tcp, ls->now, sock);
}

static void ls_timer_set(struct loop *l, struct loop_timer *t, sk_time_ns deadline)
{
	struct loop_skiff *ls = LS(l);
	if (timerq_set(&ls->tq, t, deadline) < 0) {
		/* Sized for every timer the application declared: a full heap
		 * is a bug in that declaration, and a lost timer would leave a
		 * connection without its timeout. */
		if (ls->plat.fatal)
			ls->plat.fatal(ls->plat.ctx, "loop: timer heap full (max_timers too small)");
		__builtin_trap();
	}
}

static void ls_timer_cancel(struct loop *l, struct loop_timer *t)
{
	timerq_cancel(&LS(l)->tq, t);
}

static int ls_run(struct loop *l, volatile int *stop)
{
	struct loop_skiff *ls = LS(l);
	return ls->plat.run(ls->plat.ctx, l, stop);
}

static sk_time_ns ls_now(struct loop *l)
{
	return LS(l)->now;
}

static void ls_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	struct loop_skiff *ls = LS(l);
	if (ls->plat.stats)
		ls->plat.stats(ls->plat.ctx, fn, ctx);
#define LS_PRINT(n) fn(ctx, "loop_skiff." #n, ls->st.n);
	LS_STATS(LS_PRINT)
#undef LS_PRINT
}

static void ls_destroy(struct loop *l)
{
	struct loop_skiff *ls = LS(l);
	if (ls->plat.release)
		ls->plat.release(ls->plat.ctx, l);
}

static const struct loop_ops ls_ops = {
	.listen = ls_listen,
	.accept = ls_accept,
	.connect = ls_connect,
	.watch = ls_watch,
	.read = ls_read,
	.writev = ls_writev,
	.send_ref = ls_send_ref,
	.refs_held = ls_refs_held,
	.shutdown = ls_shutdown,
	.close = ls_close,
	.timer_set = ls_timer_set,
	.timer_cancel = ls_timer_cancel,
	.run = ls_run,
	.now = ls_now,
	.stats = ls_stats,
	.destroy = ls_destroy,
};

struct loop *loop_skiff_init(void *mem, size_t size, const struct loop_skiff_config *cfg)
{
	if (!cfg->tcp || !cfg->plat.run || !mem || size < loop_skiff_mem_size(cfg))
		return NULL;
	uintptr_t p = LS_ALIGN((uintptr_t)mem);
	struct loop_skiff *ls = (struct loop_skiff *)p;
	p += LS_ALIGN(sizeof(*ls));
	sk_memset(ls, 0, sizeof(*ls));
	ls->tcp = cfg->tcp;
	ls->plat = cfg->plat;
	ls->local_ip = cfg->local_ip;
	ls->backlog = cfg->listen_backlog;
	ls->now = cfg->now;
	ls->nsocks = cfg->tcp->cfg.max_sockets;
	ls->socks = (struct ls_sock *)p;
	p += LS_ALIGN((size_t)ls->nsocks * sizeof(struct ls_sock));
	sk_memset(ls->socks, 0, (size_t)ls->nsocks * sizeof(struct ls_sock));
	timerq_init(&ls->tq, (struct loop_timer **)p, cfg->max_timers ? cfg->max_timers : 1);
	ls->base.ops = &ls_ops;
	ls->base.name = "skiff";
	return &ls->base;
}

void loop_skiff_turn(struct loop *l, sk_time_ns now)
{
	struct loop_skiff *ls = LS(l);
	ls->now = now;
	ls->st.turns++;
	if (l->on_turn)
		l->on_turn(l->turn_ctx, now);
}

void loop_skiff_dispatch(struct loop *l, const struct tcp_event *ev, int n, sk_time_ns now)
{
	struct loop_skiff *ls = LS(l);
	ls->now = now;
	for (int i = 0; i < n; i++) {
		int s = ev[i].sock;
		ls->st.events++;
		if (s < 0 || (uint32_t)s >= ls->nsocks || !ls->socks[s].fn) {
			ls->st.events_stale++;
			continue;
		}
		unsigned e = ev[i].events;
		/* As loop_linux: an error is also a READ, so the application
		 * reads and gets the error code. */
		if (e & LOOP_EV_ERROR)
			e |= LOOP_EV_READ;
		/* Copy first: the callback may close the socket (clearing the
		 * slot) or even watch a new one in it. */
		struct ls_sock cb = ls->socks[s];
		cb.fn(cb.user, s, e, now);
	}
}

sk_time_ns loop_skiff_next_deadline(struct loop *l)
{
	return timerq_next(&LS(l)->tq);
}

void loop_skiff_timers(struct loop *l, sk_time_ns now)
{
	struct loop_skiff *ls = LS(l);
	struct loop_timer *t;
	ls->now = now;
	while ((t = timerq_pop_due(&ls->tq, now)) != NULL) {
		ls->st.timers_fired++;
		t->fn(t, now);
	}
}

struct tcp_stack *loop_skiff_tcp(struct loop *l)
{
	return LS(l)->tcp;
}

void *loop_skiff_platform_ctx(struct loop *l)
{
	return LS(l)->plat.ctx;
}

/* ---- the runner's callbacks (runner.h) ---- */

static void lr_turn(void *ctx, sk_time_ns now)
{
	loop_skiff_turn(ctx, now);
}

static void lr_tcp(void *ctx, struct runner *r, const struct tcp_event *ev, int n, sk_time_ns now)
{
	(void)r;
	loop_skiff_dispatch(ctx, ev, n, now);
}

static sk_time_ns lr_deadline(void *ctx)
{
	return loop_skiff_next_deadline(ctx);
}

static void lr_timers(void *ctx, sk_time_ns now)
{
	loop_skiff_timers(ctx, now);
}

void loop_skiff_attach_runner(struct loop *l, struct runner *r)
{
	r->on_turn = lr_turn;
	r->on_tcp = lr_tcp;
	r->app_deadline = lr_deadline;
	r->app_timers = lr_timers;
	r->ctx = l;
}
