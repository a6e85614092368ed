/* loop_linux.c — loop.h on Linux sockets with epoll.
 *
 * Edge-triggered: each socket is added once with EPOLLIN|EPOLLOUT|EPOLLRDHUP|
 * EPOLLET at loop_watch() and never modified again, so serving a request
 * costs read, writev (sendmsg) and a share of one epoll_pwait: no epoll_ctl
 * per request.  Listeners are drained with accept4() until EAGAIN by the
 * application (the edge contract in loop.h).
 *
 * Per-socket callbacks live in a table indexed by the descriptor, sized to
 * RLIMIT_NOFILE at start: a lookup is one index, and a descriptor the
 * kernel hands out can never be out of range.
 *
 * Waking up: the loop sleeps in epoll_pwait() until an event or the next
 * timer deadline (rounded UP to the millisecond, so a timer never fires
 * early and the loop never spins on a sub-millisecond remainder).  No timer
 * armed: it sleeps without a timeout.  SIGINT and SIGTERM are blocked while
 * the loop runs and unblocked only inside epoll_pwait(), so a stop request
 * can never slip in between checking *stop and going to sleep.
 *
 * Files (ll_sendfile, loop.h's optional sendfile op): the response head
 * goes with sendmsg(MSG_MORE), which holds it back (Nagle is off on every
 * socket) until sendfile(2) adds the file's pages behind it, so head and
 * body leave in as few segments as one writev of both would make, and the
 * body's bytes go from the page cache to the socket without a copy through
 * user memory (what nginx's `sendfile on` does).  A file cut short under
 * it makes sendfile return 0 before the promised length: the op says
 * -ECONNABORTED and the server closes the connection (never a wait for a
 * write edge that would not come).  send.* counters say which path the
 * bytes took.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../elog/elog.h"
#include "../plat/linux/stopsig.h"
#include "../plat/plat.h"
#include "loop_linux.h"
#include "../loop/timerq.h"

_Static_assert(sizeof(struct loop_iov) == sizeof(struct iovec), "loop_iov must match iovec");
_Static_assert(offsetof(struct loop_iov, base) == offsetof(struct iovec, iov_base), "iov base");
_Static_assert(offsetof(struct loop_iov, len) == offsetof(struct iovec, iov_len), "iov len");

#define LL_EVENTS 512 /* events taken per epoll_pwait */

struct ll_sock {
	loop_event_fn fn; /* NULL: not watched (closed, or not yet registered) */
	void *user;
	bool listener;
	/* Active open not yet reported: the first edge reads SO_ERROR. */
	bool connecting;
	/* Why a connect failed, for the next read/write (SO_ERROR clears
	 * the kernel's copy, so the socket itself would then only say
	 * ENOTCONN). 0: none. */
	int conn_err;
	/* Set by a read that came up short during this socket's callback. */
	bool short_read;
};

#define LL_STATS(X)                                                                        \
	X(waits) X(wakeups_event) X(wakeups_timer) X(wakeups_signal) X(events) X(events_stale) \
	X(timers_fired) X(accepts) X(accept_eagain) X(accept_errors) X(reads) X(read_eagain)   \
	X(writes) X(write_partial) X(write_eagain) X(closes) X(connects) X(connect_errors)     \
	X(eof_redispatch)

/* Printed as "send.NAME": which path the bytes went by. */
#define LL_SEND_STATS(X) \
	X(writev_calls) X(writev_bytes) X(sendfile_calls) X(sendfile_bytes) X(sendfile_truncated)

struct loop_linux {
	struct loop base;
	int epfd;
	int backlog;
	bool reuseport;
	int nsocks;
	struct ll_sock *socks;
	struct timerq tq;
	struct loop_timer **heap;
	struct {
#define LL_FIELD(n) uint64_t n;
		LL_STATS(LL_FIELD)
		LL_SEND_STATS(LL_FIELD)
#undef LL_FIELD
	} st;
	struct epoll_event ev[LL_EVENTS];
};

static inline struct loop_linux *LL(struct loop *l)
{
	return (struct loop_linux *)l;
}

/* A listener on any address takes both families: one AF_INET6 socket on
 * [::] with IPV6_V6ONLY off (IPv4 peers arrive as ::ffff:a.b.c.d, which is
 * sk_addr's own form of an IPv4 address), whatever net.ipv6.bindv6only
 * says.  A kernel without IPv6 gets an IPv4 socket.  A given IPv4 address:
 * an IPv4 socket on it; a given IPv6 address: an IPv6 socket on it with
 * IPV6_V6ONLY on, so that it takes that address and no IPv4 peer. */
static int ll_listen(struct loop *l, const struct sk_addr *addr, uint16_t port, int backlog)
{
	bool any = sk_addr_is_any(addr), v4 = !any && sk_addr_is_v4(addr);
	int fd = !v4 ? socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
	if (!any && !v4 && fd < 0)
		return -errno; /* an IPv6 address on a kernel without IPv6 */
	bool six = fd >= 0;
	if (six) {
		int only = !any;
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof(only)) < 0) {
			int e = errno;
			close(fd);
			if (!any)
				return -e;
			fd = -1;
			six = false;
		}
	}
	if (fd < 0)
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	/* SO_REUSEADDR: a restarted server binds while old connections sit in
	 * TIME_WAIT.  TCP_NODELAY on the listener is inherited by every
	 * accepted socket (Linux copies it in the clone), which saves a
	 * setsockopt per connection; loop_linux_test checks the inheritance. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		goto fail;
	if (LL(l)->reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
		goto fail;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(v4 ? sk_addr_ip4(addr) : 0)};
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	memcpy(sa6.sin6_addr.s6_addr, addr->b, sizeof(addr->b)); /* :: when any */
	if (six ? bind(fd, (struct sockaddr *)&sa6, sizeof(sa6)) < 0
		: bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	/* As deep as a burst: a shallow backlog resets clients (seed 000).
	 * The kernel caps it at net.core.somaxconn. */
	if (listen(fd, backlog > 0 ? backlog : LL(l)->backlog) < 0)
		goto fail;
	if (fd >= LL(l)->nsocks) {
		close(fd);
		return -SK_EMFILE;
	}
	return fd;
fail:;
	int e = errno;
	close(fd);
	return -e;
}

static int ll_accept(struct loop *l, int lsock, struct loop_peer *peer)
{
	struct loop_linux *ll = LL(l);
	struct sockaddr_storage ss;
	for (;;) {
		socklen_t len = sizeof(ss);
		int fd = accept4(lsock, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			ll->st.accepts++;
			if (peer && ss.ss_family == AF_INET6) {
				const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
				peer->addr = sk_addr_v6(s6->sin6_addr.s6_addr);
				peer->port = ntohs(s6->sin6_port);
			} else if (peer) {
				const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
				peer->addr = sk_addr_v4(ntohl(s4->sin_addr.s_addr));
				peer->port = ntohs(s4->sin_port);
			}
			return fd;
		}
		/* A connection that died in the queue is not the listener's
		 * failure: take the next one. */
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN) {
			ll->st.accept_eagain++;
			return -SK_EAGAIN;
		}
		ll->st.accept_errors++;
		return -errno;
	}
}

static int ll_connect(struct loop *l, const struct sk_addr *addr, uint16_t port)
{
	struct loop_linux *ll = LL(l);
	bool v4 = sk_addr_is_v4(addr);
	int fd = socket(v4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (fd >= ll->nsocks) {
		close(fd);
		return -SK_EMFILE;
	}
	int one = 1;
	/* Nagle off, as on accepted sockets: a request must not wait for the
	 * ACK of the previous one. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		goto fail;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(sk_addr_ip4(addr))};
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	memcpy(sa6.sin6_addr.s6_addr, addr->b, 16);
	int r;
	do
		r = v4 ? connect(fd, (struct sockaddr *)&sa, sizeof(sa))
		       : connect(fd, (struct sockaddr *)&sa6, sizeof(sa6));
	while (r < 0 && errno == EINTR);
	/* EINPROGRESS is the normal case; loopback may complete at once.  Both
	 * are reported by the first EPOLLOUT edge after loop_watch. */
	if (r < 0 && errno != EINPROGRESS)
		goto fail;
	ll->socks[fd] = (struct ll_sock){.connecting = true};
	ll->st.connects++;
	return fd;
fail:;
	int e = errno;
	ll->st.connect_errors++;
	close(fd);
	return -e;
}

static int ll_watch(struct loop *l, int sock, loop_event_fn fn, void *user)
{
	struct loop_linux *ll = LL(l);
	if (sock < 0 || sock >= ll->nsocks)
		return -SK_EBADF;
	int type = 0;
	socklen_t tl = sizeof(type);
	bool listener = false;
	/* One getsockopt per registration to tell listeners apart keeps the
	 * API free of a separate "watch listener" call. */
	if (getsockopt(sock, SOL_SOCKET, SO_ACCEPTCONN, &type, &tl) == 0 && type)
		listener = true;
	/* A socket from ll_connect keeps its mark: its first edge is the
	 * connect's verdict. */
	bool connecting = !listener && ll->socks[sock].connecting;
	ll->socks[sock] = (struct ll_sock){.fn = fn, .user = user, .listener = listener,
					   .connecting = connecting};
	struct epoll_event ev = {
		.events = listener ? (EPOLLIN | EPOLLET)
				   : (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET),
		.data.fd = sock,
	};
	if (epoll_ctl(ll->epfd, EPOLL_CTL_ADD, sock, &ev) < 0) {
		ll->socks[sock].fn = NULL;
		return -errno;
	}
	return 0;
}

/* The error a failed connect left for the application, once. */
static int ll_take_conn_err(struct loop_linux *ll, int sock)
{
	if (sock < 0 || sock >= ll->nsocks || !ll->socks[sock].conn_err)
		return 0;
	int e = ll->socks[sock].conn_err;
	ll->socks[sock].conn_err = 0;
	return -e;
}

static long ll_read(struct loop *l, int sock, void *buf, size_t len)
{
	struct loop_linux *ll = LL(l);
	int ce = ll_take_conn_err(ll, sock);
	if (ce)
		return ce;
	for (;;) {
		ssize_t n = read(sock, buf, len);
		if (n >= 0) {
			ll->st.reads++;
			if (n > 0 && (size_t)n < len && sock >= 0 && sock < ll->nsocks)
				ll->socks[sock].short_read = true;
			return n;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			ll->st.read_eagain++;
		return -errno;
	}
}

static long ll_writev(struct loop *l, int sock, const struct loop_iov *iov, int iovcnt)
{
	struct loop_linux *ll = LL(l);
	int ce = ll_take_conn_err(ll, sock);
	if (ce)
		return ce;
	/* sendmsg rather than writev: MSG_NOSIGNAL turns a write to a reset
	 * connection into -EPIPE instead of SIGPIPE, whatever the application
	 * did with its signals.  Same cost as writev. */
	struct msghdr mh = {.msg_iov = (struct iovec *)(uintptr_t)iov,
			    .msg_iovlen = (size_t)(iovcnt > IOV_MAX ? IOV_MAX : iovcnt)};
	size_t want = 0;
	for (size_t i = 0; i < mh.msg_iovlen; i++)
		want += iov[i].len;
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n >= 0) {
			ll->st.writes++;
			ll->st.writev_calls++;
			ll->st.writev_bytes += (uint64_t)n;
			if ((size_t)n < want)
				ll->st.write_partial++;
			return n;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			ll->st.write_eagain++;
		return -errno;
	}
}

/* loop.h's sendfile op: the head with MSG_MORE, then sendfile(2) until
 * the file's slice is sent, the socket is full (EAGAIN: that sets the
 * socket's no-space mark, so a write edge follows) or the file ends
 * early.  A short sendfile is tried again rather than returned: short
 * because the file ended would otherwise look like "socket full", and the
 * server would wait for a write edge that never comes. */
static long ll_sendfile(struct loop *l, int sock, const struct loop_iov *head, int nhead, int fd,
			uint64_t off, size_t len)
{
	struct loop_linux *ll = LL(l);
	int ce = ll_take_conn_err(ll, sock);
	if (ce)
		return ce;
	long done = 0;
	if (nhead > 0) {
		struct msghdr mh = {.msg_iov = (struct iovec *)(uintptr_t)head,
				    .msg_iovlen = (size_t)(nhead > IOV_MAX ? IOV_MAX : nhead)};
		size_t want = 0;
		for (size_t i = 0; i < mh.msg_iovlen; i++)
			want += head[i].len;
		ssize_t n;
		do
			n = sendmsg(sock, &mh, MSG_NOSIGNAL | (len ? MSG_MORE : 0));
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			if (errno == EAGAIN)
				ll->st.write_eagain++;
			return -errno;
		}
		ll->st.writes++;
		ll->st.writev_calls++;
		ll->st.writev_bytes += (uint64_t)n;
		done = n;
		if ((size_t)n < want || nhead > IOV_MAX) {
			ll->st.write_partial++;
			return done;
		}
	}
	off_t o = (off_t)off;
	while (len) {
		/* (sendfile has no MSG_NOSIGNAL: the servers that use this
		 * ignore SIGPIPE; a reset peer then gives EPIPE here.) */
		ssize_t n = sendfile(sock, fd, &o, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno != EAGAIN)
				return -errno;
			ll->st.write_eagain++;
			if (done)
				ll->st.write_partial++;
			return done ? done : -SK_EAGAIN;
		}
		ll->st.sendfile_calls++;
		if (n == 0) {
			ll->st.sendfile_truncated++;
			return -SK_ECONNABORTED;
		}
		ll->st.sendfile_bytes += (uint64_t)n;
		done += n;
		len -= (size_t)n;
	}
	return done;
}

static int ll_shutdown(struct loop *l, int sock)
{
	(void)l;
	return shutdown(sock, SHUT_WR) < 0 ? -errno : 0;
}

static int ll_close(struct loop *l, int sock)
{
	struct loop_linux *ll = LL(l);
	if (sock >= 0 && sock < ll->nsocks)
		ll->socks[sock] = (struct ll_sock){0};
	ll->st.closes++;
	/* close() also removes it from the epoll set (no dup'ed descriptors). */
	return close(sock) < 0 ? -errno : 0;
}

static void ll_timer_set(struct loop *l, struct loop_timer *t, sk_time_ns deadline)
{
	if (timerq_set(&LL(l)->tq, t, deadline) < 0) {
		/* The heap is sized for every timer the application declared; a
		 * full heap is a bug in that declaration, not a runtime state. */
		elog(SK_LOG_ERROR, NULL, "loop: timer heap full (max_timers too small)");
		elog_close();
		abort();
	}
}

static void ll_timer_cancel(struct loop *l, struct loop_timer *t)
{
	timerq_cancel(&LL(l)->tq, t);
}

static sk_time_ns ll_now(struct loop *l)
{
	(void)l;
	return plat_now();
}

static void ll_dispatch(struct loop_linux *ll, int n, sk_time_ns now)
{
	for (int i = 0; i < n; i++) {
		int fd = ll->ev[i].data.fd;
		uint32_t e = ll->ev[i].events;
		struct ll_sock *s = &ll->socks[fd];
		ll->st.events++;
		if (!s->fn) {
			ll->st.events_stale++;
			continue;
		}
		unsigned ev = 0;
		if (s->listener) {
			ev = LOOP_EV_ACCEPT;
		} else {
			/* HUP/RDHUP are reported as READ: the read that follows
			 * returns 0 (end of stream) or the error. */
			if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))
				ev |= LOOP_EV_READ;
			if (e & EPOLLOUT)
				ev |= LOOP_EV_WRITE;
			if (e & EPOLLERR)
				ev |= LOOP_EV_ERROR | LOOP_EV_READ;
			if (s->connecting) {
				/* The connect's verdict.  A refused connect shows
				 * EPOLLERR|EPOLLHUP, possibly with EPOLLOUT, so the
				 * event bits alone do not tell; SO_ERROR does. */
				s->connecting = false;
				int err = 0;
				socklen_t el = sizeof(err);
				if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
					err = errno;
				if (err) {
					s->conn_err = err;
					ll->st.connect_errors++;
					ev = LOOP_EV_ERROR | LOOP_EV_READ;
				} else if (!(ev & LOOP_EV_WRITE)) {
					/* Still in progress (a stray edge): wait. */
					s->connecting = true;
				}
			}
		}
		s->short_read = false;
		s->fn(s->user, fd, ev, now);
		/* Data and the peer's FIN harvested in one edge: a short read took
		 * the data and the application, as loop.h allows, waits for the
		 * next edge, which will never come (the FIN is already in).  Call
		 * it again so it reads the 0.  (If the callback closed the socket
		 * and the number was reused, this is a spurious READ: allowed.) */
		if ((e & (EPOLLRDHUP | EPOLLHUP)) && !s->listener && s->fn && s->short_read) {
			s->short_read = false;
			ll->st.eof_redispatch++;
			s->fn(s->user, fd, LOOP_EV_READ, now);
		}
	}
}

static void ll_fire_timers(struct loop_linux *ll, sk_time_ns now)
{
	struct loop_timer *t;
	while ((t = timerq_pop_due(&ll->tq, now)) != NULL) {
		ll->st.timers_fired++;
		t->fn(t, now);
	}
}

static int ll_run(struct loop *l, volatile int *stop)
{
	struct loop_linux *ll = LL(l);
	/* Every turn waits in epoll_pwait, so the stop signals stay blocked
	 * for the whole run and are let in only inside the wait
	 * (plat/linux/stopsig.h): a stop can never land unseen before it. */
	struct plat_stopsig sigs;
	if (!plat_stopsig_hold(&sigs, stop))
		return 0;
	int rc = 0;
	while (!*stop) {
		sk_time_ns now = plat_now();
		ll_fire_timers(ll, now);
		if (*stop)
			break;
		sk_time_ns next = timerq_next(&ll->tq);
		int timeout = -1;
		if (next != SK_TIME_NEVER) {
			sk_time_ns wait = next > now ? next - now : 0;
			uint64_t ms = (wait + SK_NS_PER_MS - 1) / SK_NS_PER_MS;
			timeout = ms > 3600000 ? 3600000 : (int)ms;
		}
		ll->st.waits++;
		int n = epoll_pwait(ll->epfd, ll->ev, LL_EVENTS, timeout, &sigs.wait);
		if (n < 0) {
			if (errno == EINTR) {
				ll->st.wakeups_signal++;
				continue;
			}
			rc = -errno;
			elog(SK_LOG_ERROR, NULL, "epoll_pwait: %s", strerror(errno));
			break;
		}
		now = plat_now();
		if (n == 0)
			ll->st.wakeups_timer++;
		else
			ll->st.wakeups_event++;
		if (l->on_turn)
			l->on_turn(l->turn_ctx, now);
		ll_dispatch(ll, n, now);
	}
	plat_stopsig_release(&sigs);
	return rc;
}

static void ll_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	struct loop_linux *ll = LL(l);
#define LL_PRINT(n) fn(ctx, "loop." #n, ll->st.n);
	LL_STATS(LL_PRINT)
#undef LL_PRINT
#define LL_PRINT(n) fn(ctx, "send." #n, ll->st.n);
	LL_SEND_STATS(LL_PRINT)
#undef LL_PRINT
}

static void ll_destroy(struct loop *l)
{
	struct loop_linux *ll = LL(l);
	close(ll->epfd);
	free(ll->socks);
	free(ll->heap);
	free(ll);
}

static const struct loop_ops ll_ops = {
	.listen = ll_listen,
	.accept = ll_accept,
	.connect = ll_connect,
	.watch = ll_watch,
	.read = ll_read,
	.writev = ll_writev,
	.sendfile = ll_sendfile,
	.shutdown = ll_shutdown,
	.close = ll_close,
	.timer_set = ll_timer_set,
	.timer_cancel = ll_timer_cancel,
	.run = ll_run,
	.now = ll_now,
	.stats = ll_stats,
	.destroy = ll_destroy,
};

struct loop *loop_linux_create(const struct loop_linux_config *cfg, char *err, size_t errlen)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1u << 24))
		rl.rlim_cur = 1u << 20;
	struct loop_linux *ll = calloc(1, sizeof(*ll));
	if (!ll) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ll->nsocks = (int)rl.rlim_cur;
	ll->socks = calloc((size_t)ll->nsocks, sizeof(*ll->socks));
	uint32_t cap = cfg->max_timers ? cfg->max_timers : 1;
	ll->heap = calloc(cap, sizeof(*ll->heap));
	ll->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!ll->socks || !ll->heap || ll->epfd < 0) {
		snprintf(err, errlen, "%s", ll->epfd < 0 ? strerror(errno) : "out of memory");
		if (ll->epfd >= 0)
			close(ll->epfd);
		free(ll->socks);
		free(ll->heap);
		free(ll);
		return NULL;
	}
	timerq_init(&ll->tq, ll->heap, cap);
	ll->backlog = cfg->listen_backlog > 0 ? cfg->listen_backlog : 4096;
	ll->reuseport = cfg->reuseport;
	ll->base.ops = &ll_ops;
	ll->base.name = "linux";
	return &ll->base;
}
