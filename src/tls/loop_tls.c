/* loop_tls.c — the TLS stream layer (loop_tls.h): a loop whose every
 * connection is TLS over another loop's TCP connection.
 *
 * Per accepted connection, a struct tls_sock, found by socket number (the
 * inner loop's, which the application sees unchanged).  The inner loop's
 * events come to tls_on_event, which:
 *   1. reads records from the inner socket into the engine (until the
 *      inner loop says "no more", or TLS_IN_MAX wait unopened);
 *   2. runs the handshake while it is not done;
 *   3. sends what the engine has for the peer, keeping what the inner
 *      socket would not take (then waiting for its LOOP_EV_WRITE);
 *   4. tells the application what changed, with the edge-triggered
 *      contract of loop.h: LOOP_EV_READ when records came in (or the end,
 *      or an error) once the handshake is done; LOOP_EV_WRITE when a write
 *      had been refused or cut short and fewer than TLS_OUT_MAX / 2 bytes of
 *      records still wait.
 * A half-duplex engine (tls_engine.h: one buffer, BearSSL) refuses a
 * write while plaintext it received waits to be read, and takes held
 * records in (pending_in) as its own leave: neither makes an edge on the
 * inner socket.  So when a write is refused with nothing of the engine's
 * own left to send, or a flush turned held records into plaintext, the
 * connection's timer, free after the handshake, is armed as a kick
 * (ts_kick): it tells the application to read (and to write, if refused),
 * as the inner socket's events would.  Without it such a connection waits
 * for an event that never comes (an HTTP/2 download over BearSSL stalled
 * until the send timeout whenever the client's WINDOW_UPDATE arrived as
 * our record was leaving: tests/vm_h2.sh, 2026-12-05).  A kick is owed
 * once per read: an application that was kicked and has not read since
 * is not kicked again (loop.h: one that stops early comes back on its
 * own), until it reads some plaintext with a write still refused, or the
 * inner socket's next event.  Full-duplex engines make their edges on the
 * inner socket: none of this runs for them (not even pending_in).
 * Reads decrypt until the caller's buffer is full or the engine needs
 * more, so a short read still means "empty now", as loop.h requires.
 *
 * Invariants (tls_check, where it is cheap):
 *   - records wait in the engine's output (out_peek) only while the inner
 *     socket refuses them: the layer then waits for its LOOP_EV_WRITE;
 *   - an orphan (closed by the application, records still to send) has no
 *     application callback, and is freed once its records have gone or its
 *     linger deadline passes;
 *   - sock < lt->cap and lt->tab[sock] == the tls_sock, from accept until
 *     free: an event for a socket with no tls_sock (closed) is dropped.
 */
#include "loop_tls.h"

#include <string.h>
#ifndef LOOP_TLS_FIXED
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "../elog/elog.h"
#else
/* The unikernel's build: no error log from this layer (its counters
 * still count every failure), and no address formatting. */
#include "../base/log.h"
static inline bool elog_on(enum sk_log_level level)
{
	(void)level;
	return false;
}
static inline void elog(enum sk_log_level level, const char *key, const char *fmt, ...)
{
	(void)level, (void)key, (void)fmt;
}
#endif

#define TLS_CHUNK 16384u
#define TLS_LINGER_NS (5 * SK_NS_PER_S)
#define TLS_COUNTERS(X)                                                                      \
	X(handshakes, "tls.handshakes")                   /* finished */                      \
	X(resumed, "tls.resumed")                         /* of those, resumed sessions */    \
	X(handshake_failed, "tls.handshake_failed")       /* not TLS, refused hellos */       \
	X(handshake_timeouts, "tls.handshake_timeouts")   /* stalled past the deadline */     \
	X(protocol_errors, "tls.protocol_errors")         /* bad records after the handshake */ \
	X(close_notify_rx, "tls.close_notify_rx")         /* the peer ended cleanly */        \
	X(close_notify_tx, "tls.close_notify_tx")                                             \
	X(eof_no_close_notify, "tls.eof_no_close_notify") /* TCP ended without it */          \
	X(records_in_bytes, "tls.records_in_bytes")                                           \
	X(records_out_bytes, "tls.records_out_bytes")                                         \
	X(conn_alloc_failed, "tls.conn_alloc_failed")                                         \
	X(writes_blocked, "tls.writes_blocked")           /* the inner socket refused records */ \
	X(orphans, "tls.orphans")                         /* closed with records unsent */   \
	X(orphans_lost, "tls.orphans_lost")               /* ... and never sent in time */ \
	X(kicks, "tls.kicks")                             /* ts_kick: an edge the inner socket did not make */ \
	X(alpn_h2, "tls.alpn_h2")                         /* handshakes that agreed h2 */    \
	X(alpn_http11, "tls.alpn_http11")                 /* ... http/1.1 (else: none) */

struct tls_counters {
#define X(f, n) uint64_t f;
	TLS_COUNTERS(X)
#undef X
};

struct loop_tls;

struct tls_sock {
	struct loop_tls *lt;
	int sock;
	struct tls_conn *c;
	loop_event_fn fn; /* the application's; NULL for an orphan */
	void *user;
	struct loop_timer timer; /* handshake deadline, then an orphan's linger */
	int dead;            /* -SK_E* once the connection has failed */
	bool hs_done;
	bool want_write;     /* the application was refused or cut short */
	bool inner_eof;      /* the inner read gave 0 */
	bool inner_more;     /* reading paused at TLS_IN_MAX: the inner socket may hold more */
	bool shut_pending;   /* shut down the inner socket once out has gone */
	bool shut_sent;      /* close_notify queued */
	bool orphan;
	bool kick;           /* the timer is a kick (hs_done): ts_kick */
	bool kick_unread;    /* a kick fired and t_read has not been called since:
			      * no more kicks until it is */
	struct loop_peer peer; /* the client, for the error log */
	struct tls_sock *next_free; /* the fixed pool's free list (loop_tls_init) */
};

struct loop_tls {
	struct loop base;
	struct loop *inner;
	const struct tls_engine_ops *eng;
	struct tls_ctx *ctx;
	sk_time_ns hs_timeout;
	struct tls_sock **tab; /* by socket number */
	size_t cap;
	/* loop_tls_init: tab has a fixed cap and the tls_socks come from
	 * pool (free list `free_ts`); loop_tls_create: both from the heap. */
	struct tls_sock *pool, *free_ts;
	struct tls_counters st;
	uint8_t scratch[TLS_CHUNK]; /* records read, or plaintext gathered: one at a time */
};

static struct loop_tls *lt_of(struct loop *l)
{
	return (struct loop_tls *)(void *)l;
}

static struct tls_sock *ts_find(struct loop_tls *lt, int sock)
{
	return sock >= 0 && (size_t)sock < lt->cap ? lt->tab[sock] : NULL;
}

static void tls_check(const struct tls_sock *ts)
{
#ifndef NDEBUG
	if ((ts->orphan && ts->fn) || ts->lt->tab[ts->sock] != ts)
#ifdef LOOP_TLS_FIXED
		__builtin_trap();
#else
		abort();
#endif
#else
	(void)ts;
#endif
}

static struct tls_sock *ts_alloc(struct loop_tls *lt)
{
	if (lt->pool) {
		struct tls_sock *ts = lt->free_ts;
		if (ts) {
			lt->free_ts = ts->next_free;
			memset(ts, 0, sizeof(*ts));
		}
		return ts;
	}
#ifndef LOOP_TLS_FIXED
	return calloc(1, sizeof(struct tls_sock));
#else
	return NULL;
#endif
}

static void ts_release(struct loop_tls *lt, struct tls_sock *ts)
{
	if (!ts)
		return;
	if (lt->pool) {
		ts->next_free = lt->free_ts;
		lt->free_ts = ts;
		return;
	}
#ifndef LOOP_TLS_FIXED
	free(ts);
#endif
}

static void ts_free(struct tls_sock *ts)
{
	struct loop_tls *lt = ts->lt;
	if (loop_timer_armed(&ts->timer))
		loop_timer_cancel(lt->inner, &ts->timer);
	lt->tab[ts->sock] = NULL;
	lt->eng->conn_free(ts->c);
	ts_release(lt, ts);
}

/* Give the inner loop the records the engine holds, straight from its
 * buffer, until it refuses some (then its LOOP_EV_WRITE brings us back).
 * Returns false if the connection failed. */
static bool ts_flush(struct tls_sock *ts)
{
	struct loop_tls *lt = ts->lt;
	for (;;) {
		const uint8_t *p;
		size_t n = lt->eng->out_peek(ts->c, &p);
		if (n == 0)
			break;
		long w = loop_write(lt->inner, ts->sock, p, n);
		if (w == -SK_EAGAIN) {
			lt->st.writes_blocked++;
			return true;
		}
		if (w < 0) {
			ts->dead = (int)w;
			return false;
		}
		lt->eng->out_consume(ts->c, (size_t)w);
		lt->st.records_out_bytes += (uint64_t)w;
		if ((size_t)w < n) {
			lt->st.writes_blocked++;
			return true; /* short: the inner socket is full */
		}
	}
	if (ts->shut_pending) {
		ts->shut_pending = false;
		loop_shutdown(lt->inner, ts->sock);
	}
	return true;
}

static size_t ts_unsent(const struct tls_sock *ts)
{
	const uint8_t *p;
	return ts->lt->eng->out_peek(ts->c, &p);
}

/* ts_flush (unless the connection failed); on a half-duplex engine, true
 * if records the layer held went in as ours left, which no edge of the
 * inner socket tells.  A full-duplex engine's flush takes nothing in. */
static bool ts_flush_took(struct tls_sock *ts)
{
	const struct tls_engine_ops *e = ts->lt->eng;
	if (!e->half_duplex) {
		if (!ts->dead)
			ts_flush(ts);
		return false;
	}
	size_t held = e->pending_in(ts->c);
	if (!ts->dead)
		ts_flush(ts);
	return e->pending_in(ts->c) < held;
}

/* Records from the inner socket into the engine, until it has no more,
 * or TLS_IN_MAX wait unopened.  Returns true if any came. */
static bool ts_pull(struct tls_sock *ts)
{
	struct loop_tls *lt = ts->lt;
	bool got = false;
	ts->inner_more = false;
	while (!ts->inner_eof && !ts->dead) {
		size_t want = sizeof(lt->scratch);
		if (lt->eng->in_room) { /* an engine over fixed buffers */
			size_t room = lt->eng->in_room(ts->c);
			if (room < want)
				want = room;
		}
		if (want == 0 || lt->eng->pending_in(ts->c) >= TLS_IN_MAX) {
			ts->inner_more = true;
			break;
		}
		long n = loop_read(lt->inner, ts->sock, lt->scratch, want);
		if (n == -SK_EAGAIN)
			break;
		if (n == 0) {
			ts->inner_eof = true;
			break;
		}
		if (n < 0) {
			ts->dead = (int)n;
			break;
		}
		lt->st.records_in_bytes += (uint64_t)n;
		if (lt->eng->records_in(ts->c, lt->scratch, (size_t)n) < 0) {
			ts->dead = -SK_ENOMEM;
			break;
		}
		got = true;
		if ((size_t)n < want)
			break; /* a short read: empty for now, a new edge will come */
	}
	return got;
}

/* "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of the client: only formatted for
 * a line that will be written. */
#ifdef LOOP_TLS_FIXED
static inline const char *peer_str(const struct tls_sock *ts, char buf[64])
{
	(void)ts;
	buf[0] = 0;
	return buf;
}
#else
static const char *peer_str(const struct tls_sock *ts, char buf[64])
{
	char a[INET6_ADDRSTRLEN] = "?";
	const struct sk_addr *p = &ts->peer.addr;
	if (sk_addr_is_v4(p)) {
		uint32_t ip = htonl(sk_addr_ip4(p));
		inet_ntop(AF_INET, &ip, a, sizeof(a));
		snprintf(buf, 64, "%s:%u", a, ts->peer.port);
	} else {
		inet_ntop(AF_INET6, p->b, a, sizeof(a));
		snprintf(buf, 64, "[%s]:%u", a, ts->peer.port);
	}
	return buf;
}
#endif

/* The handshake has finished (the engine says so): count it, stop its
 * deadline. */
static void ts_hs_check(struct tls_sock *ts)
{
	struct loop_tls *lt = ts->lt;
	if (!ts->hs_done && !ts->dead && lt->eng->handshake_done(ts->c)) {
		ts->hs_done = true;
		lt->st.handshakes++;
		if (lt->eng->resumed(ts->c))
			lt->st.resumed++;
		const char *alpn = loop_alpn(&lt->base, ts->sock); /* as the application sees it */
		if (alpn && alpn[0] == 'h' && alpn[1] == '2')
			lt->st.alpn_h2++;
		else if (alpn)
			lt->st.alpn_http11++;
		if (loop_timer_armed(&ts->timer))
			loop_timer_cancel(lt->inner, &ts->timer);
	}
}

static void ts_step(struct tls_sock *ts)
{
	struct loop_tls *lt = ts->lt;
	if (ts->hs_done || ts->dead)
		return;
	int r = lt->eng->step(ts->c);
	if (r != TLS_OK) {
		/* An engine over one buffer (BearSSL) knows its handshake
		 * ended only once its last flight has gone: a bad record
		 * right after that is the record layer's failure. */
		if (r == TLS_ERR_PROTOCOL)
			lt->st.protocol_errors++;
		else
			lt->st.handshake_failed++;
		/* A client's failure, not ours: info, and limited (a scan sends
		 * thousands). */
		char pb[64];
		if (elog_on(SK_LOG_INFO))
			elog(SK_LOG_INFO, "tls.handshake", "tls: handshake failed (%s): %s",
			     r == TLS_ERR_HANDSHAKE  ? "not TLS, or a hello refused"
			     : r == TLS_ERR_PROTOCOL ? "a bad record"
						     : "internal error",
			     peer_str(ts, pb));
		ts->dead = -SK_ECONNRESET;
		ts_flush(ts); /* the alert, if any */
		return;
	}
	ts_hs_check(ts);
}

static void ts_orphan_poll(struct tls_sock *ts)
{
	struct loop_tls *lt = ts->lt;
	if (ts->dead || ts_unsent(ts) == 0) {
		int sock = ts->sock;
		ts_free(ts);
		loop_close(lt->inner, sock);
	}
}

static void tls_on_event(void *user, int sock, unsigned events, sk_time_ns now)
{
	struct loop_tls *lt = user;
	struct tls_sock *ts = ts_find(lt, sock);
	if (!ts)
		return; /* closed: a stale event */
	bool got = false;
	if (events & (LOOP_EV_READ | LOOP_EV_ERROR))
		got = ts_pull(ts);
	ts_step(ts);
	if (ts_flush_took(ts))
		got = true; /* held records went in as ours left: plaintext, maybe */
	ts_hs_check(ts); /* BearSSL: done once its Finished has gone out */
	if (ts->inner_eof && !ts->hs_done && !ts->dead && !ts_unsent(ts)) {
		/* The peer ended its side before the handshake finished: it
		 * cannot finish now.  End it at once, not at the deadline. */
		lt->st.handshake_failed++;
		ts->dead = -SK_ECONNRESET;
	}
	/* An engine over fixed buffers may have stopped taking records until
	 * its own went out (in_room): now that they have, read on, or the
	 * bytes left in the inner socket would wait for an edge that never
	 * comes. */
	while (lt->eng->in_room && ts->inner_more && !ts->dead && !ts_unsent(ts) &&
	       lt->eng->in_room(ts->c) > 0 && ts_pull(ts)) {
		got = true;
		ts_step(ts);
		if (!ts->dead)
			ts_flush(ts);
	}
	if (ts->orphan) {
		/* Nobody reads any more: drop what comes, send what is left. */
		ts_orphan_poll(ts);
		return;
	}
	tls_check(ts);
	unsigned ev = 0;
	if (ts->dead)
		ev |= LOOP_EV_ERROR | LOOP_EV_READ;
	else if (ts->hs_done && (got || ts->inner_eof))
		ev |= LOOP_EV_READ;
	if (ts->want_write && (ts->dead || (ts->hs_done && ts_unsent(ts) < TLS_OUT_MAX / 2))) {
		ts->want_write = false;
		ev |= LOOP_EV_WRITE;
	}
	if (ev && ts->fn)
		ts->fn(ts->user, sock, ev, now); /* may close: ts is not used after */
}

/* Arm the kick (see the top of the file), unless it or the linger is, or
 * the last kick is still unanswered by a read. */
static void ts_kick(struct tls_sock *ts)
{
	if (!ts->hs_done || ts->orphan || ts->kick_unread || loop_timer_armed(&ts->timer))
		return;
	struct loop *in = ts->lt->inner;
	ts->kick = true;
	ts->lt->st.kicks++;
	loop_timer_set(in, &ts->timer, loop_now(in));
}

static void ts_on_timer(struct loop_timer *t, sk_time_ns now)
{
	struct tls_sock *ts = (struct tls_sock *)(void *)((char *)t - offsetof(struct tls_sock, timer));
	struct loop_tls *lt = ts->lt;
	if (ts->orphan) {
		lt->st.orphans_lost++;
		ts->dead = -SK_ETIMEDOUT;
		ts_orphan_poll(ts);
		return;
	}
	if (ts->kick) {
		ts->kick = false;
		ts->kick_unread = true;
		unsigned ev = LOOP_EV_READ;
		if (ts->want_write) {
			ts->want_write = false;
			ev |= LOOP_EV_WRITE;
		}
		if (ts->dead)
			ev |= LOOP_EV_ERROR;
		if (ts->fn)
			ts->fn(ts->user, ts->sock, ev, now); /* may close: ts is not used after */
		return;
	}
	if (ts->hs_done || ts->dead)
		return;
	lt->st.handshake_timeouts++;
	char pb[64];
	if (elog_on(SK_LOG_INFO))
		elog(SK_LOG_INFO, "tls.timeout", "tls: handshake timed out: %s", peer_str(ts, pb));
	ts->dead = -SK_ETIMEDOUT;
	if (ts->fn)
		ts->fn(ts->user, ts->sock, LOOP_EV_ERROR | LOOP_EV_READ, now);
}

/* ---- the loop API ---- */

static int t_listen(struct loop *l, const struct sk_addr *addr, uint16_t port, int backlog)
{
	return loop_listen(lt_of(l)->inner, addr, port, backlog);
}

static bool tab_fit(struct loop_tls *lt, int sock)
{
	if ((size_t)sock < lt->cap)
		return true;
#ifdef LOOP_TLS_FIXED
	return false;
#else
	if (lt->pool)
		return false; /* a fixed table */
	size_t n = lt->cap ? lt->cap : 1024;
	while (n <= (size_t)sock)
		n *= 2;
	struct tls_sock **t = realloc(lt->tab, n * sizeof(*t));
	if (!t)
		return false;
	memset(t + lt->cap, 0, (n - lt->cap) * sizeof(*t));
	lt->tab = t;
	lt->cap = n;
	return true;
#endif
}

static int t_accept(struct loop *l, int lsock, struct loop_peer *peer)
{
	struct loop_tls *lt = lt_of(l);
	struct loop_peer own;
	if (!peer)
		peer = &own;
	int s = loop_accept(lt->inner, lsock, peer);
	if (s < 0)
		return s;
	struct tls_sock *ts = ts_alloc(lt);
	struct tls_conn *c = ts ? lt->eng->conn_new(lt->ctx) : NULL;
	if (!c || !tab_fit(lt, s)) {
		lt->st.conn_alloc_failed++;
		if (c)
			lt->eng->conn_free(c);
		ts_release(lt, ts);
		loop_close(lt->inner, s);
		return -SK_ENOMEM;
	}
	ts->lt = lt;
	ts->sock = s;
	ts->c = c;
	ts->peer = *peer;
	ts->timer.fn = ts_on_timer;
	lt->tab[s] = ts;
	loop_timer_set(lt->inner, &ts->timer, loop_now(lt->inner) + lt->hs_timeout);
	return s;
}

static int t_connect(struct loop *l, const struct sk_addr *addr, uint16_t port)
{
	(void)l;
	(void)addr;
	(void)port;
	return -SK_EOPNOTSUPP; /* a server layer: no client connections yet */
}

static int t_watch(struct loop *l, int sock, loop_event_fn fn, void *user)
{
	struct loop_tls *lt = lt_of(l);
	struct tls_sock *ts = ts_find(lt, sock);
	if (!ts) /* a listener: its events pass straight through */
		return loop_watch(lt->inner, sock, fn, user);
	ts->fn = fn;
	ts->user = user;
	return loop_watch(lt->inner, sock, tls_on_event, lt);
}

static long t_read(struct loop *l, int sock, void *buf, size_t len)
{
	struct loop_tls *lt = lt_of(l);
	struct tls_sock *ts = ts_find(lt, sock);
	if (!ts)
		return loop_read(lt->inner, sock, buf, len);
	if (ts->dead)
		return ts->dead;
	if (!ts->hs_done)
		return ts->inner_eof ? 0 : -SK_EAGAIN;
	ts->kick_unread = false;
	size_t got = 0;
	while (got < len) {
		long n = lt->eng->read(ts->c, (uint8_t *)buf + got, len - got);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == -SK_EAGAIN && ts->inner_more && ts_pull(ts))
			continue; /* reading had paused at TLS_IN_MAX */
		if (n == 0) {
			lt->st.close_notify_rx++;
			ts->inner_eof = true; /* nothing follows a close_notify */
			if (got == 0)
				return 0;
			break;
		}
		if (n == -SK_EAGAIN) {
			if (got == 0 && ts->inner_eof) {
				lt->st.eof_no_close_notify++;
				return 0;
			}
			break;
		}
		lt->st.protocol_errors++;
		ts->dead = -SK_ECONNRESET;
		ts_flush(ts); /* the alert */
		if (got == 0)
			return ts->dead;
		break;
	}
	/* Reading may have produced records to send (a TLS 1.3 key update,
	 * tickets after the handshake). */
	if (!ts->dead)
		ts_flush(ts);
	/* A half-duplex engine refused a write while this plaintext waited:
	 * reading it may have made room, and no inner edge will say so.
	 * Only after bytes were read: each such kick follows progress. */
	if (got && ts->want_write && lt->eng->half_duplex && !ts->dead && ts_unsent(ts) == 0)
		ts_kick(ts);
	return got ? (long)got : -SK_EAGAIN;
}

static const char *t_alpn(struct loop *l, int sock)
{
	struct loop_tls *lt = lt_of(l);
	const struct tls_sock *ts = ts_find(lt, sock);
	if (!ts || !ts->hs_done || !lt->eng->alpn)
		return NULL;
	return lt->eng->alpn(ts->c);
}

static long t_writev(struct loop *l, int sock, const struct loop_iov *iov, int iovcnt)
{
	struct loop_tls *lt = lt_of(l);
	struct tls_sock *ts = ts_find(lt, sock);
	if (!ts)
		return loop_writev(lt->inner, sock, iov, iovcnt);
	if (ts->dead)
		return ts->dead;
	if (ts->shut_sent)
		return -SK_EPIPE;
	/* A half-duplex engine may take held records in as ours leave. */
	bool hd = lt->eng->half_duplex;
	size_t held = hd ? lt->eng->pending_in(ts->c) : 0;
	size_t total = 0;
	int i = 0;
	size_t off = 0;
	/* One record per chunk of up to 16 KiB: a response that fits goes
	 * in one record, and (when it fits) in one segment. */
	while (i < iovcnt && ts->hs_done && ts_unsent(ts) < TLS_OUT_MAX) {
		size_t n = 0;
		int i0 = i;
		size_t off0 = off;
		while (i < iovcnt && n < TLS_CHUNK) {
			size_t take = iov[i].len - off;
			if (take > TLS_CHUNK - n)
				take = TLS_CHUNK - n;
			memcpy(lt->scratch + n, (const uint8_t *)iov[i].base + off, take);
			n += take;
			off += take;
			if (off == iov[i].len) {
				i++;
				off = 0;
			}
		}
		if (n == 0)
			break;
		long w = lt->eng->write(ts->c, lt->scratch, n);
		if (w == -SK_EAGAIN)
			w = 0; /* an engine over fixed buffers: its last record is unsent */
		if (w < 0) {
			ts->dead = (int)w;
			if (w != -SK_EPIPE) /* EPIPE: the session had ended cleanly */
				lt->st.protocol_errors++;
			return total ? (long)total : w;
		}
		total += (size_t)w;
		if ((size_t)w < n) {
			/* Taken in part (or not at all): the rest of the chunk
			 * is still the caller's, from where the engine stopped. */
			i = i0;
			off = off0;
			for (size_t left = (size_t)w; left;) {
				size_t k = iov[i].len - off < left ? iov[i].len - off : left;
				left -= k;
				off += k;
				if (off == iov[i].len) {
					i++;
					off = 0;
				}
			}
		}
		if (!ts_flush(ts))
			return total ? (long)total : ts->dead;
		if (w == 0)
			break; /* wait for the socket */
	}
	if (i < iovcnt)
		ts->want_write = true;
	/* A half-duplex engine refused with nothing of its own to send (no
	 * inner LOOP_EV_WRITE will come), or held records went in: no edge. */
	if (hd && ts->hs_done && !ts->dead &&
	    ((i < iovcnt && ts_unsent(ts) == 0) || lt->eng->pending_in(ts->c) < held))
		ts_kick(ts);
	if (i < iovcnt && total == 0)
		return -SK_EAGAIN;
	return (long)total;
}

/* Our close_notify, once, if the session is up. */
static void ts_close_notify(struct tls_sock *ts)
{
	if (ts->shut_sent || !ts->hs_done || ts->dead)
		return;
	ts->lt->eng->close_notify(ts->c);
	ts->shut_sent = true;
	ts->lt->st.close_notify_tx++;
}

static int t_shutdown(struct loop *l, int sock)
{
	struct loop_tls *lt = lt_of(l);
	struct tls_sock *ts = ts_find(lt, sock);
	if (!ts)
		return loop_shutdown(lt->inner, sock);
	ts_close_notify(ts);
	ts->shut_pending = true;
	if (!ts->dead)
		ts_flush(ts);
	if (ts->shut_pending && (ts->dead || ts_unsent(ts) == 0)) {
		ts->shut_pending = false;
		return loop_shutdown(lt->inner, sock);
	}
	return 0;
}

static int t_close(struct loop *l, int sock)
{
	struct loop_tls *lt = lt_of(l);
	struct tls_sock *ts = ts_find(lt, sock);
	if (!ts)
		return loop_close(lt->inner, sock);
	ts_close_notify(ts);
	if (!ts->dead)
		ts_flush(ts);
	if (ts->dead || ts_unsent(ts) == 0) {
		ts_free(ts);
		return loop_close(lt->inner, sock);
	}
	/* Records still to send: the connection outlives the application's
	 * handle until they have gone (or TLS_LINGER_NS). */
	ts->orphan = true;
	lt->st.orphans++;
	ts->fn = NULL;
	ts->user = NULL;
	ts->shut_pending = true;
	ts->kick = false; /* the timer is the linger's now */
	if (loop_timer_armed(&ts->timer))
		loop_timer_cancel(lt->inner, &ts->timer);
	loop_timer_set(lt->inner, &ts->timer, loop_now(lt->inner) + TLS_LINGER_NS);
	return 0;
}

static void t_timer_set(struct loop *l, struct loop_timer *t, sk_time_ns deadline)
{
	loop_timer_set(lt_of(l)->inner, t, deadline);
}

static void t_timer_cancel(struct loop *l, struct loop_timer *t)
{
	loop_timer_cancel(lt_of(l)->inner, t);
}

static int t_run(struct loop *l, volatile int *stop)
{
	return loop_run(lt_of(l)->inner, stop);
}

static sk_time_ns t_now(struct loop *l)
{
	return loop_now(lt_of(l)->inner);
}

static void t_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	struct loop_tls *lt = lt_of(l);
#define X(f, n) fn(ctx, n, lt->st.f);
	TLS_COUNTERS(X)
#undef X
}

static void t_destroy(struct loop *l)
{
	struct loop_tls *lt = lt_of(l);
	for (size_t i = 0; i < lt->cap; i++)
		if (lt->tab[i]) {
			int sock = lt->tab[i]->sock;
			ts_free(lt->tab[i]);
			loop_close(lt->inner, sock);
		}
	if (lt->pool)
		return; /* the caller's memory (loop_tls_init) */
#ifndef LOOP_TLS_FIXED
	free(lt->tab);
	free(lt);
#endif
}

static const struct loop_ops tls_loop_ops = {
	.listen = t_listen,
	.accept = t_accept,
	.connect = t_connect,
	.watch = t_watch,
	.read = t_read,
	.writev = t_writev,
	.alpn = t_alpn,
	.shutdown = t_shutdown,
	.close = t_close,
	.timer_set = t_timer_set,
	.timer_cancel = t_timer_cancel,
	.run = t_run,
	.now = t_now,
	.stats = t_stats,
	.destroy = t_destroy,
};

static void lt_setup(struct loop_tls *lt, struct loop *inner, const struct loop_tls_config *cfg)
{
	lt->base.ops = &tls_loop_ops;
	lt->base.name = inner->name;
	lt->inner = inner;
	lt->eng = cfg->engine;
	lt->ctx = cfg->ctx;
	lt->hs_timeout = cfg->handshake_timeout_ns ? cfg->handshake_timeout_ns : 10 * SK_NS_PER_S;
}

static size_t al16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

size_t loop_tls_mem_size(size_t max_socks, size_t max_conns)
{
	return al16(sizeof(struct loop_tls)) + al16(max_socks * sizeof(struct tls_sock *)) +
	       max_conns * sizeof(struct tls_sock);
}

struct loop *loop_tls_init(void *mem, size_t size, struct loop *inner,
			   const struct loop_tls_config *cfg, size_t max_socks, size_t max_conns)
{
	if (!mem || !inner || !cfg || !cfg->engine || !cfg->ctx || !max_conns ||
	    size < loop_tls_mem_size(max_socks, max_conns) || ((uintptr_t)mem & 15))
		return NULL;
	memset(mem, 0, loop_tls_mem_size(max_socks, max_conns));
	uint8_t *m = mem;
	struct loop_tls *lt = (struct loop_tls *)(void *)m;
	m += al16(sizeof(*lt));
	lt->tab = (struct tls_sock **)(void *)m;
	lt->cap = max_socks;
	m += al16(max_socks * sizeof(struct tls_sock *));
	lt->pool = (struct tls_sock *)(void *)m;
	for (size_t i = max_conns; i-- > 0;) {
		lt->pool[i].next_free = lt->free_ts;
		lt->free_ts = &lt->pool[i];
	}
	lt_setup(lt, inner, cfg);
	return &lt->base;
}

#ifndef LOOP_TLS_FIXED
struct loop *loop_tls_create(struct loop *inner, const struct loop_tls_config *cfg, char *err,
			     size_t errlen)
{
	if (!inner || !cfg || !cfg->engine || !cfg->ctx) {
		snprintf(err, errlen, "tls: no inner loop or engine");
		return NULL;
	}
	struct loop_tls *lt = calloc(1, sizeof(*lt));
	if (!lt) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	lt_setup(lt, inner, cfg);
	return &lt->base;
}
#endif
