/* server.h — the HTTP/1.1 server: one state machine per connection on top
 * of the loop API (loop/loop.h), the same code on every stack.
 *
 * Freestanding like the parser: no OS headers, no clock (time comes in as
 * the loop's `now`), no allocation (the caller gives one block of memory at
 * init, sized by http_server_mem_size(), holding every connection's state
 * and receive buffer).  Files come from a lookup callback the application
 * provides (host/serve_files.c keeps them in memory); the Date header from
 * http_server_set_date(), which the application calls when the second
 * changes.
 *
 * What a connection does, in order, whenever its socket reports readiness
 * (conn_advance in server.c; its phases are enum conn_phase there):
 *   1. flush queued output; if the socket takes no more, wait for WRITE;
 *   2. answer every complete request already buffered (pipelining), in
 *      order, appending each response to one output batch: a head in the
 *      connection's head buffer (small bodies copied behind it), large
 *      bodies as extra slices pointing at the file cache.  The batch leaves
 *      in ONE writev, so head and body share a segment when they fit;
 *   3. read more (edge contract: until a short read or EAGAIN) and go to 2.
 * Keep-alive: by default on 1.1, on 1.0 only with "Connection: keep-alive"
 * (answered with the same header).  "Connection: close", an error status,
 * or a request we cannot frame ends the connection after the response.
 *
 * Closing: after an error (the client may still be sending) the server
 * half-closes, then reads and discards until the client closes or
 * linger_timeout passes, so the response is not destroyed by a RST
 * (RFC 9112 9.6).  After a clean "Connection: close" with nothing unread it
 * closes at once.
 *
 * Timeouts, one lazily armed timer per connection (the heap entry only
 * moves when a deadline comes EARLIER; a timer that fires early re-arms
 * itself to the true deadline, so a busy keep-alive connection costs no
 * heap operation per request):
 *   header_timeout     from the first byte of a request (or the accept) to
 *                      its complete head; not extended by trickling bytes
 *                      (slowloris) -> 408 and close;
 *   keepalive_timeout  idle between requests -> close silently; also the
 *                      limit on a client that stops reading our output;
 *   linger_timeout     the lingering close above.
 *
 * Connection limit: max_conns states are pre-allocated.  When all are in
 * use, a new connection is accepted, what it already sent is drained, it
 * gets a fixed "503 Service Unavailable" with "Connection: close", and it
 * is closed: refused with an answer, never left hanging in the backlog.
 */
#ifndef HTTP_SERVER_H
#define HTTP_SERVER_H

#include "../base/sk.h"
#include "../loop/loop.h"
#include "access.h"
#include "chunked.h"
#include "file.h"
#include "file_answer.h"
#include "parser.h"

/* The access log (--access-log): called once for every response the
 * server queues, when its status and body length are decided, in the
 * order the responses go out on each connection.  The record (access.h)
 * points into the server's buffers, valid during the call only: the
 * application formats or copies it there and then.  It must not call the
 * server back.  What it cannot tell: whether the client then received
 * the body (a connection that dies mid-body is logged with the full
 * length, as queued).  A refused connection (503, all states taken) is
 * logged too, with the first line it sent. */
typedef void (*http_access_fn)(void *ctx, const struct http_access *rec);

struct http_server_config {
	uint32_t addr;  /* listen address, host order, 0 = any */
	uint16_t port;
	int backlog;    /* <= 0: the loop's default (deep) */
	uint32_t max_conns;
	sk_time_ns header_timeout;    /* default 10 s */
	sk_time_ns keepalive_timeout; /* default 60 s */
	sk_time_ns linger_timeout;    /* default 2 s */
	uint64_t max_body;            /* request body limit: more gets 413 */
	http_lookup_fn lookup;        /* NULL: built-in "/" hello world */
	void *lookup_ctx;
	/* NULL, or the value of a Cache-Control line on every 200, 206 and
	 * 304 of a looked-up file (--cache-control): at most
	 * HTTP_CACHE_CONTROL_MAX bytes of VCHAR and SP (init refuses more). */
	const char *cache_control;
	/* --trace (base/hist.h): a keep-alive request (parse to writev
	 * returned), accept to close, timer arm and cancel are timed into it.
	 * NULL: off, one predicted branch per stage. */
	struct sk_trace *trace;
	/* Non-zero (--tls-redirect): every request, of any method, is answered
	 * 301 to the same target at https://HOST:https_redirect_port (the port
	 * left out when 443); HOST is the request's Host without its port; no
	 * Host: 400.  Nothing else is served. */
	uint16_t https_redirect_port;
	/* NULL: no access log, and the server does no work for one (a
	 * predicted branch per response, a peer address kept per connection).
	 * Set: the server keeps HTTP_ACCESS_SCRATCH more bytes per connection
	 * (http_server_mem_size), where a request that has a body keeps its
	 * log fields while the body is read, since the body's bytes overwrite
	 * the head's in the receive buffer. */
	http_access_fn access;
	void *access_ctx;
};

/* The log fields of one request, as the scratch keeps them: each at most
 * one byte over what access.h logs (so its cut still shows). */
#define HTTP_ACCESS_SCRATCH (HTTP_ACCESS_LINE_MAX + 2u * HTTP_ACCESS_FIELD_MAX + 3u)

#define HTTP_CACHE_CONTROL_MAX 256u
/* HTTP_LOCATION_MAX: file_answer.h. */

void http_server_config_default(struct http_server_config *cfg);

/* Is s a Cache-Control value the server would send (1..HTTP_CACHE_CONTROL_MAX
 * bytes of VCHAR and SP, not starting or ending with SP)?  For the options
 * module, so a bad value stops the command line, not the server. */
bool http_cache_control_ok(const char *s);

/* The seed-000 body that "/" answers when there is no lookup. */
#define HTTP_HELLO_BODY "Hello, world! This is skiff serving you.\n"
#define HTTP_HELLO_LEN 41u

/* Every counter, in print order.  X(name) */
#define HTTP_SERVER_STATS(X)                                                               \
	X(conns_accepted) X(conns_refused) X(conns_closed) X(accept_errors) X(requests)         \
	X(requests_pipelined) X(resp_200) X(resp_206) X(resp_301) X(resp_304) X(resp_400)       \
	X(resp_403) X(resp_404) X(resp_405) X(resp_408) X(resp_412) X(resp_413) X(resp_414)     \
	X(resp_416) X(resp_431) X(resp_501) X(resp_503) X(resp_505) X(resp_other)               \
	X(resp_gzip) X(resp_br) X(resp_multipart) X(answers_owed)                               \
	X(writes) X(write_partial) X(write_errors) X(bytes_out) X(read_errors) X(eof_in_head)    \
	X(timeout_header) X(timeout_idle) X(timeout_write) X(timeout_linger) X(lingers)         \
	X(bodies_discarded) X(timer_rearms) X(redirects_https) X(redirect_no_host)              \
	X(drain_idle_closed)

struct http_server_stats {
#define HTTP_STAT_FIELD(n) uint64_t n;
	HTTP_SERVER_STATS(HTTP_STAT_FIELD)
#undef HTTP_STAT_FIELD
	uint64_t parse_err[HTTP_NERR]; /* by -error code */
};

/* Receive buffer per connection: big enough that the parser always reaches
 * a verdict (HTTP_HEAD_MAX) with room to spare for a pipelined tail. */
#define HTTP_RBUF_SIZE 32768u
#define HTTP_OUT_IOV 32u     /* slices per output batch */
#define HTTP_OUT_HEAD 4096u  /* response heads (+ small bodies, part heads) per batch */
#define HTTP_INLINE_BODY 1024u /* bodies up to this are copied behind the head */
#define HTTP_IOBUF_SIZE (HTTP_RBUF_SIZE + HTTP_OUT_HEAD)

struct http_conn;

struct http_server {
	struct http_server_config cfg;
	struct loop *loop;
	int lsock;           /* listening socket, -1 before start */
	bool accept_blocked; /* accept failed (descriptors): retry when one frees */
	uint32_t nconns;     /* in use */
	uint32_t hwm;        /* conns[0, hwm) have been used at least once */
	struct http_conn *conns;
	struct http_conn *free_list;
	/* I/O buffers (HTTP_RBUF_SIZE receive + HTTP_OUT_HEAD output heads), one
	 * per connection at most, held only while it has unprocessed input or
	 * unsent output: an idle keep-alive connection holds none.  Free ones
	 * are reused LIFO (warm); bufs[buf_hwm, max_conns) were never touched. */
	uint8_t *bufs;       /* max_conns * HTTP_IOBUF_SIZE */
	uint8_t *logs;       /* cfg.access: max_conns * HTTP_ACCESS_SCRATCH, one per
			      * connection (by index); NULL without */
	uint8_t *buf_free;   /* LIFO list linked through the free buffers */
	uint32_t buf_hwm;
	uint32_t bufs_held;  /* buffers connections hold now */
	/* http_server_drain: the listener is closed, every answer is the
	 * last on its connection; drain_done runs (once) when none is left. */
	bool draining;
	void (*drain_done)(void *ctx);
	void *drain_ctx;
	char date[29];       /* "Sun, 06 Nov 1994 08:49:37 GMT" */
	char path[HTTP_MAX_REQUEST_LINE + 16]; /* scratch: the decoded path (+ "index.html") */
	struct http_server_stats st;
};

/* Bytes of memory http_server_init needs for cfg. */
size_t http_server_mem_size(const struct http_server_config *cfg);

/* Prepare the server in `mem` (any alignment; untouched pages stay
 * untouched, so a large max_conns costs little until used).  Returns 0 or
 * -SK_EINVAL / -SK_ENOMEM. */
int http_server_init(struct http_server *srv, void *mem, size_t size,
		     const struct http_server_config *cfg, struct loop *loop);

/* Listen and start accepting.  Returns 0 or the loop's -SK_E*. */
int http_server_start(struct http_server *srv);

/* The IMF-fixdate for the Date header (exactly 29 characters). */
void http_server_set_date(struct http_server *srv, const char *date29);

/* Close the listener and every connection (at shutdown). */
void http_server_stop(struct http_server *srv);

/* A graceful stop (SIGTERM): what is in flight finishes, nothing new
 * starts.
 *   - Pending connections are accepted, then the listener is closed: a
 *     connection the kernel completed but nobody accepted would be reset
 *     with its request in it.
 *   - Every answer queued from now on says "Connection: close" and ends
 *     its connection (pipelined requests behind it are not answered: the
 *     client sends them again elsewhere, RFC 9112 9.3.2).
 *   - A connection idle between requests (or accepted, no byte yet) is
 *     closed once it has been idle HTTP_DRAIN_IDLE_GRACE from now: closing
 *     it at once would race a request already on its way, which the
 *     client would see as a failure; within the grace that request is
 *     answered, with the close.
 *   - Requests being read, answers being written and lingering closes
 *     finish on their own timeouts.
 * done(ctx) runs once no connection is left: at once if there is none,
 * else from inside the loop's callbacks (where the caller sets its stop
 * flag).  The caller bounds the whole drain with a timer of its own, and
 * http_server_stop closes whatever is left (without calling done). */
#define HTTP_DRAIN_IDLE_GRACE (500 * SK_NS_PER_MS)
void http_server_drain(struct http_server *srv, sk_time_ns now, void (*done)(void *ctx),
		       void *ctx);

void http_server_stats(const struct http_server *srv,
		       void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

/* Every invariant of every connection and of the pools (a connection holds
 * its I/O buffer iff it has unprocessed input or unsent output; each live
 * one has its deadline armed; the phase agrees with the body and the
 * deadline; counts and free lists add up).  Walks all connections ever
 * used: for tests and debugging, never on the fast path (the server checks
 * the buffer invariant itself, cheaply, whenever a connection rests).
 * Returns 0, or -(the line in server.c of the first broken one), as
 * tcp_check(). */
int http_server_check(const struct http_server *srv);

#endif
