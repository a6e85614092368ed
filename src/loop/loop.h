/* loop.h — the one API an application (the HTTP server) uses to talk TCP,
 * whichever stack is underneath.
 *
 * Two backends implement it: loop_linux.c (kernel sockets, epoll) and
 * loop_skiff.c, a thin adapter over skiff's own TCP engine (net/tcp.h).
 * The API therefore mirrors tcp.h's shape and names nothing of the OS: a
 * socket is an opaque small integer (a file descriptor on Linux, a
 * tcp.h socket id on skiff — the application must not care which), errors
 * are -SK_E* codes from base/sk_err.h (Linux errno values, so the Linux
 * backend returns -errno unchanged), time is sk_time_ns of the loop's
 * monotonic clock, passed to every callback as `now`.
 *
 * Freestanding: only sk.h and sk_err.h, so the server that uses it stays
 * freestanding too and its unit tests can run it on a fake loop.
 *
 * Readiness is EDGE-triggered, on both backends (epoll's EPOLLET; tcp.h's
 * ready list):
 *   - the callback runs when a socket *gains* readable data / end of stream
 *     (LOOP_EV_READ), send space or a completed connect (LOOP_EV_WRITE),
 *     a pending connection
 *     (LOOP_EV_ACCEPT, listeners only) or an error (LOOP_EV_ERROR);
 *   - after that the application must consume until it is told "no more":
 *     accept until -SK_EAGAIN; read until -SK_EAGAIN, 0 (end of stream) or
 *     a SHORT read (fewer bytes than asked means the receive queue was empty
 *     at that moment, and any later arrival raises a new edge); write until
 *     everything went or a short/-SK_EAGAIN write, then wait for
 *     LOOP_EV_WRITE.  An application that stops early (back-pressure) must
 *     remember to come back on its own;
 *   - spurious callbacks can happen (a stale event for a socket number that
 *     was closed and reused within one batch); reads then say -SK_EAGAIN.
 * Why edge-triggered: a socket is registered once, for both directions, at
 * accept; no per-request epoll_ctl, and an idle socket costs nothing.
 *
 * Timers: each is an application-owned struct loop_timer with an ABSOLUTE
 * deadline, kept by the loop in a binary min-heap (insert/move/remove
 * O(log n), next deadline O(1)); a due timer is removed, then its callback
 * runs.  The loop parks until min(next deadline, an event): no periodic
 * wakeups, so an idle loop uses no CPU.  Re-arming a timer to a later
 * deadline is a heap move; applications whose deadline moves on every
 * request (keep-alive) should arm lazily: keep the true deadline aside,
 * re-arm from the callback when it fires early (http/app.c does).
 *
 * Calls are made from the loop's own thread only (inside callbacks or
 * before loop_run).  One loop, one thread: no locks.
 */
#ifndef LOOP_LOOP_H
#define LOOP_LOOP_H

#include "../base/sk.h"
#include "../base/sk_addr.h"
#include "../base/sk_err.h"

struct loop;

#define LOOP_EV_READ 0x01u   /* data or end of stream: read */
#define LOOP_EV_WRITE 0x02u  /* send space (again): write */
#define LOOP_EV_ACCEPT 0x04u /* listener: connections wait in accept */
#define LOOP_EV_ERROR 0x08u  /* reset or failure: read/write return it */

/* Readiness of one socket.  `user` is what loop_watch() registered. */
typedef void (*loop_event_fn)(void *user, int sock, unsigned events, sk_time_ns now);

/* One piece of a gathered write.  Same layout as struct iovec and
 * tcp.h's struct tcp_iov, so backends pass arrays through unconverted
 * (loop_linux.c asserts it at compile time). */
struct loop_iov {
	const void *base;
	size_t len;
};

struct loop_timer;
typedef void (*loop_timer_fn)(struct loop_timer *t, sk_time_ns now);
/* Owned by the application, linked into the loop's heap while armed.
 * Set `fn` once; the loop owns `deadline` and `slot`. */
struct loop_timer {
	loop_timer_fn fn;
	sk_time_ns deadline; /* valid while armed */
	uint32_t slot;       /* heap index + 1; 0 = not armed */
};

struct loop_peer {
	struct sk_addr addr; /* either family (base/sk_addr.h: IPv4 mapped) */
	uint16_t port;
};

/* A backend: one function per operation.  Applications call the inline
 * wrappers below, never the table directly. */
struct loop_ops {
	/* Listen on addr:port with the given accept backlog (<= 0: the
	 * backend's default, as deep as a burst).  addr is either family
	 * (base/sk_addr.h); all zero (::) is any address of both families.
	 * Returns the listening socket or -SK_E* (-SK_EADDRNOTAVAIL: not an
	 * address the backend can listen on). */
	int (*listen)(struct loop *l, const struct sk_addr *addr, uint16_t port, int backlog);
	/* Next pending connection: the socket (non-blocking, Nagle off), or
	 * -SK_EAGAIN when the queue is empty, or another -SK_E*. */
	int (*accept)(struct loop *l, int lsock, struct loop_peer *peer);
	/* Active open to addr:port (host order) from the backend's own
	 * address.  Returns the socket (non-blocking, Nagle off) at once, with
	 * the handshake still in progress, or -SK_E* when it could not even
	 * start (-SK_EADDRNOTAVAIL: no local port left, -SK_EMFILE: no socket
	 * left, ...).  Watch it like an accepted socket: the first
	 * LOOP_EV_WRITE means connected; LOOP_EV_ERROR (always with
	 * LOOP_EV_READ) means it failed, and the next read or write returns
	 * why (-SK_ECONNREFUSED, -SK_ETIMEDOUT, -SK_ENETUNREACH, ...), once.
	 * A write before the first edge may return -SK_EAGAIN (Linux) or be
	 * queued (skiff): an application waits for LOOP_EV_WRITE. */
	int (*connect)(struct loop *l, const struct sk_addr *addr, uint16_t port);
	/* Deliver this socket's readiness to fn(user, ...).  Called once per
	 * socket (listeners too); the first edge may already be pending. */
	int (*watch)(struct loop *l, int sock, loop_event_fn fn, void *user);
	/* Bytes read (> 0), 0 at end of stream, or -SK_EAGAIN / -SK_E*. */
	long (*read)(struct loop *l, int sock, void *buf, size_t len);
	/* Bytes accepted (may be fewer than offered), or -SK_EAGAIN / -SK_E*.
	 * Slices queue as one stream: what fits one segment leaves as one. */
	long (*writev)(struct loop *l, int sock, const struct loop_iov *iov, int iovcnt);
	/* OPTIONAL (NULL: the backend has none, and the application writes
	 * the file's bytes from memory with writev).  Send head[0, nhead)
	 * (nhead may be 0), then len bytes of the open file fd from byte
	 * `off`, as one stream: the head is held back so that it shares the
	 * first segment with the file's bytes (MSG_MORE), as one writev of
	 * both would.  The backend reads the file itself (Linux: sendfile(2)
	 * from the page cache, no copy through user memory), so fd must stay
	 * open and the file unchanged until the call returns; nothing is kept
	 * after it.  Returns the bytes accepted, the head's counted first
	 * (fewer than offered: the socket is full, wait for LOOP_EV_WRITE,
	 * as with writev), or -SK_EAGAIN / -SK_E*.  -SK_ECONNABORTED: the
	 * file ended before off + len (cut short after its length was
	 * promised): the stream cannot be completed, and the caller closes
	 * the connection, as after a writev from a truncated mapping (which
	 * fails with EFAULT).  Never returns 0 for len > 0. */
	long (*sendfile)(struct loop *l, int sock, const struct loop_iov *head, int nhead, int fd,
			 uint64_t off, size_t len);
	/* Optional (NULL: use writev, which copies).  The nhead head slices,
	 * copied, then len bytes at p queued BY REFERENCE, as one stream: the
	 * backend builds its segments from p itself, later (the skiff stack:
	 * tcp_send_ref, one copy per byte, into the device frame).  So p must
	 * stay valid and unchanged not until the call returns but until
	 * refs_held() is 0 (retransmissions read it again; a closed socket
	 * may still be sending it).  Returns as writev: bytes accepted, the
	 * head's counted first, or -SK_EAGAIN / -SK_E*. */
	long (*send_ref)(struct loop *l, int sock, const struct loop_iov *head, int nhead,
			 const void *p, size_t len);
	/* Bytes queued by send_ref that the backend still reads (NULL: 0). */
	uint64_t (*refs_held)(struct loop *l);
	/* Optional (NULL: NULL for every socket).  The application protocol
	 * the socket's TLS handshake agreed (ALPN, RFC 7301): "h2" or
	 * "http/1.1" (static strings), or NULL: not a TLS socket, no protocol
	 * agreed, or the handshake not done.  A TLS loop (tls/loop_tls.h)
	 * reads no byte before its handshake is done, so from the first
	 * read on the answer is final. */
	const char *(*alpn)(struct loop *l, int sock);
	/* Half-close: FIN after what is queued.  Reads still work. */
	int (*shutdown)(struct loop *l, int sock);
	/* Give the socket back; no callback runs for it afterwards (except a
	 * stale one from the current batch, see above). */
	int (*close)(struct loop *l, int sock);
	/* Arm (or move) t to fire at `deadline`; disarm. */
	void (*timer_set)(struct loop *l, struct loop_timer *t, sk_time_ns deadline);
	void (*timer_cancel)(struct loop *l, struct loop_timer *t);
	/* Run until *stop is non-zero (checked after every wakeup; a signal
	 * wakes the loop).  Returns 0, or -SK_E* on a fatal error. */
	int (*run)(struct loop *l, volatile int *stop);
	/* The loop's clock (the `now` callbacks get). */
	sk_time_ns (*now)(struct loop *l);
	/* Counters as "name value" lines; release everything. */
	void (*stats)(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v),
		      void *ctx);
	void (*destroy)(struct loop *l);
};

/* Every backend's struct starts with this. */
struct loop {
	const struct loop_ops *ops;
	const char *name; /* "linux", "skiff" */
	/* Called once per wakeup, before that wakeup's events and timers, with
	 * the loop's `now`: the place for per-turn work such as refreshing a
	 * cached Date header.  Optional. */
	void (*on_turn)(void *ctx, sk_time_ns now);
	void *turn_ctx;
};

static inline int loop_listen(struct loop *l, const struct sk_addr *addr, uint16_t port,
			      int backlog)
{
	return l->ops->listen(l, addr, port, backlog);
}
static inline int loop_accept(struct loop *l, int lsock, struct loop_peer *peer)
{
	return l->ops->accept(l, lsock, peer);
}
static inline int loop_connect(struct loop *l, const struct sk_addr *addr, uint16_t port)
{
	return l->ops->connect(l, addr, port);
}
static inline int loop_watch(struct loop *l, int sock, loop_event_fn fn, void *user)
{
	return l->ops->watch(l, sock, fn, user);
}
static inline long loop_read(struct loop *l, int sock, void *buf, size_t len)
{
	return l->ops->read(l, sock, buf, len);
}
static inline long loop_writev(struct loop *l, int sock, const struct loop_iov *iov, int iovcnt)
{
	return l->ops->writev(l, sock, iov, iovcnt);
}
static inline long loop_write(struct loop *l, int sock, const void *buf, size_t len)
{
	struct loop_iov iov = {buf, len};
	return l->ops->writev(l, sock, &iov, 1);
}
/* Does this loop send files itself (loop_sendfile)?  */
static inline bool loop_has_sendfile(const struct loop *l)
{
	return l->ops->sendfile != NULL;
}
static inline long loop_sendfile(struct loop *l, int sock, const struct loop_iov *head, int nhead,
				 int fd, uint64_t off, size_t len)
{
	return l->ops->sendfile(l, sock, head, nhead, fd, off, len);
}
/* Does this loop queue bodies by reference (loop_send_ref)? */
static inline bool loop_has_send_ref(const struct loop *l)
{
	return l->ops->send_ref != NULL;
}
static inline long loop_send_ref(struct loop *l, int sock, const struct loop_iov *head, int nhead,
				 const void *p, size_t len)
{
	return l->ops->send_ref(l, sock, head, nhead, p, len);
}
static inline uint64_t loop_refs_held(struct loop *l)
{
	return l->ops->refs_held ? l->ops->refs_held(l) : 0;
}
static inline const char *loop_alpn(struct loop *l, int sock)
{
	return l->ops->alpn ? l->ops->alpn(l, sock) : NULL;
}
static inline int loop_shutdown(struct loop *l, int sock)
{
	return l->ops->shutdown(l, sock);
}
static inline int loop_close(struct loop *l, int sock)
{
	return l->ops->close(l, sock);
}
static inline void loop_timer_set(struct loop *l, struct loop_timer *t, sk_time_ns deadline)
{
	l->ops->timer_set(l, t, deadline);
}
static inline void loop_timer_cancel(struct loop *l, struct loop_timer *t)
{
	l->ops->timer_cancel(l, t);
}
static inline bool loop_timer_armed(const struct loop_timer *t)
{
	return t->slot != 0;
}
static inline int loop_run(struct loop *l, volatile int *stop)
{
	return l->ops->run(l, stop);
}
static inline sk_time_ns loop_now(struct loop *l)
{
	return l->ops->now(l);
}
static inline void loop_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v),
			      void *ctx)
{
	l->ops->stats(l, fn, ctx);
}
static inline void loop_destroy(struct loop *l)
{
	l->ops->destroy(l);
}

#endif
