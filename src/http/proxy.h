/* proxy.h — a reverse proxy as an application on http/app.h: every
 * request the engine accepts (strictly parsed, body decoded) is forwarded
 * to one of a set of upstream servers over the loop's TCP (loop_connect on
 * http_app_loop: the kernel's sockets on --stack linux, skiff's own TCP on
 * the same device on --stack skiff, and the unikernel's), and the origin's
 * answer, parsed strictly by http/resp.c, is re-framed toward the client.
 *
 *   client --(app.c: parse, decode)--> proxy_xchg --(proxy_hdr: rewrite)--> upstream
 *   client <--(app.c: own framing)---- proxy_xchg <--(resp.c, chunked.c)--- upstream
 *
 * One exchange (struct proxy_xchg) per request in flight, bound to one
 * upstream connection (struct proxy_uconn) at a time.  Nothing is
 * buffered whole: the request body moves through the exchange's tx buffer
 * (the client's TCP window closes when it is full), the response body
 * through its rx buffer (the origin's window closes while the client does
 * not read).  A slow peer therefore costs one exchange's buffers, never a
 * whole body, and never stalls another exchange.
 *
 * Upstreams (proxy_up.c): a keep-alive pool of at most `pool` idle
 * connections per upstream; round-robin or least-connections; passive
 * health: fail_max failures in a row mark an upstream down for
 * fail_timeout, then it is tried again.  A failure is a connect error or
 * timeout, a reset or close before any response byte, a first-byte
 * timeout, an answer that does not parse, or an origin that dies inside a
 * body.
 *
 * Retries: an idempotent request (RFC 9110 9.2.2) whose upstream
 * connection failed before any byte of the response, and of which no body
 * byte was taken from the client yet, is sent again to another upstream
 * (or on a fresh connection, when a pooled one turned out closed).
 *
 * Our own answers: 502 (no upstream could be reached, or its answer could
 * not be framed: a head resp.c refuses, ambiguous Content-Length /
 * Transfer-Encoding, 101 Switching Protocols), 504 (connect or first-byte
 * timeout), 503 (every exchange taken), 501 (a request Transfer-Encoding
 * other than chunked), 400 (a body on GET, HEAD, DELETE, OPTIONS or TRACE,
 * below), each with a one-line text body saying which.
 *
 * A body on GET, HEAD, DELETE, OPTIONS or TRACE (Content-Length > 0, or
 * chunked; Content-Length: 0 is no body and is forwarded without the
 * field) is refused with 400 unless cfg.body_on_get: such content has no
 * defined meaning (RFC 9110 9.3.1, 9.3.2, 9.3.5, 9.3.7, 9.3.8) and an
 * origin that ignores it, as many do, reads the body as the next request
 * on the connection: a request smuggled past us.  The refusal comes
 * before the cache and before an exchange or upstream connection is
 * taken; nothing of the request goes upstream (counted in
 * body_on_get_refused).  The 400 says "Connection: close" and the
 * connection ends after it (http_app_close_after): the unread body is not
 * read, and nothing after it is taken as a next request, however its
 * length was declared.  With cfg.body_on_get such
 * bodies are streamed up like any other, and the request bypasses the
 * cache (the key has no body: one body's answer must not serve another).  An
 * origin that dies after its answer began: the client's connection is cut
 * (http_app_abort), so a truncated body is never taken as whole.
 *
 * The cache (http/cache.h), when px->cache is set: a lookup before
 * forwarding (HIT served from it, X-Cache: HIT), a fill teed from the
 * answer (MISS), a stale entry revalidated with our validators and
 * refreshed by a 304 (REVALIDATED), concurrent misses for one key queued
 * on one fill (one upstream request), and a successful unsafe request
 * purging its target.
 *
 * PURGE (the operator's method; the engine takes it only because
 * proxy_app_config sets accept_purge): `PURGE /path` with the key's Host
 * removes every stored variant of that key from the cache and never goes
 * upstream.  200 when something was removed, 404 when nothing was stored;
 * 403 from a client address outside cfg.purge_allow (nothing removed,
 * counted in purge_denied); 405 when PURGE is off (no cache, or an empty
 * purge_allow).  The default list is loopback: 127.0.0.0/8 and ::1.
 *
 * Seams for other observers, both optional (struct proxy_hooks):
 *   lookup     before anything is forwarded: may answer the request itself;
 *   resp_*     the origin's head (parsed, as received) and each decoded body
 *              piece as it is handed to the client, then the end (whole or
 *              not): what a store tees.
 *
 * Freestanding (base/, loop/loop.h, http/), no allocation: the caller
 * gives the memory (proxy_mem_size).  One loop, one thread. */
#ifndef HTTP_PROXY_H
#define HTTP_PROXY_H

#include "app.h"
#include "resp.h"

#define PROXY_MAX_UPSTREAMS 16u

enum proxy_balance { PROXY_RR, PROXY_LEAST };

#define PROXY_PURGE_ALLOW_MAX 16u

/* An address prefix over the 16 bytes of struct sk_addr: an IPv4 /n is
 * the IPv4-mapped ::ffff:a.b.c.d/(96 + n). */
struct proxy_prefix {
	struct sk_addr addr;          /* the bits past len are zero */
	uint8_t len;                  /* 0 .. 128 */
};

struct proxy_config {
	struct sk_addr up_addr[PROXY_MAX_UPSTREAMS];
	uint16_t up_port[PROXY_MAX_UPSTREAMS];
	unsigned nup;                 /* 1 .. PROXY_MAX_UPSTREAMS */
	uint8_t balance;              /* enum proxy_balance */
	uint32_t pool;                /* idle keep-alive connections kept per upstream */
	uint32_t max_xchg;            /* requests in flight: the engine's max_conns */
	uint32_t rx_size;             /* per exchange, the origin's bytes (>= HTTP_HEAD_MAX + 1 KiB) */
	uint32_t tx_size;             /* per exchange, the request's head and body pieces
				       * (>= HTTP_HEAD_MAX + 2 KiB) */
	sk_time_ns connect_timeout;   /* loop_connect to connected */
	sk_time_ns first_byte_timeout; /* last request byte sent to the first response byte */
	sk_time_ns idle_timeout;      /* no origin byte inside a body; an idle pooled connection */
	uint32_t fail_max;            /* failures in a row that mark an upstream down */
	sk_time_ns fail_timeout;      /* how long it stays down */
	const char *via;              /* pseudonym in Via ("skiff") */
	bool x_cache;                 /* with a cache: X-Cache: HIT|MISS|REVALIDATED (default on) */
	int64_t wall_offset;          /* wall-clock s = loop_now s + this (the cache's HTTP dates) */
	struct proxy_prefix purge_allow[PROXY_PURGE_ALLOW_MAX]; /* who may PURGE */
	unsigned npurge_allow;        /* 0: PURGE is off (405); default 2, loopback */
	bool body_on_get;             /* forward a body on GET, HEAD, DELETE, OPTIONS and
				       * TRACE (default false: 400, see above); for an
				       * origin that defines one (a search API) */
	bool host_upstream;           /* send the first upstream's ADDR:PORT as Host in
				       * place of the client's (a route's `proxy_host
				       * upstream;`); default false: the client's Host
				       * kept, for an origin that routes by it */
};

void proxy_config_default(struct proxy_config *cfg);

struct proxy;
struct proxy_xchg;

/* The cache's seams (see above).  Every pointer may be NULL. */
struct proxy_hooks {
	/* true: the hook answered (or will answer) r; the proxy forwards nothing. */
	bool (*lookup)(void *ctx, struct http_app_req *r);
	void (*resp_head)(void *ctx, struct proxy_xchg *x, struct http_app_req *r,
			  const struct http_resp *resp, const uint8_t *head, size_t len);
	void (*resp_body)(void *ctx, struct proxy_xchg *x, const uint8_t *data, size_t len);
	void (*resp_end)(void *ctx, struct proxy_xchg *x, bool whole);
	void *ctx;
};

#define PROXY_STATS(X)                                                                        \
	X(requests) X(forwarded) X(retries) X(resp_501) X(resp_502) X(resp_503) X(resp_504)   \
	X(up_connects) X(up_reused) X(up_pooled) X(up_connect_fail) X(up_timeout_connect)      \
	X(up_timeout_first_byte) X(up_timeout_idle) X(up_bad_response) X(up_died)              \
	X(up_marked_down) X(client_gone) X(purge_denied) X(body_on_get_refused) X(bytes_up)     \
	X(bytes_down)

struct proxy_stats {
#define PROXY_STAT_FIELD(n) uint64_t n;
	PROXY_STATS(PROXY_STAT_FIELD)
#undef PROXY_STAT_FIELD
};

struct proxy_uconn;
struct http_cache;

/* One upstream: its address, health and pool. */
struct proxy_up {
	struct sk_addr addr;
	uint16_t port;
	char host[48];               /* "ADDR:PORT", Host for a 1.0 request without one */
	uint32_t active;             /* exchanges on it now (least-connections) */
	uint32_t fails;              /* failures in a row */
	sk_time_ns down_until;       /* 0, or marked down until then */
	struct proxy_uconn *idle;    /* pooled connections, most recent first */
	uint32_t nidle;              /* <= cfg.pool */
	uint64_t requests, failures, downs;
};

/* The proxy's state: fields are the proxy's; the embedder allocates it
 * and may read `st` and `up`. */
struct proxy {
	struct proxy_config cfg;
	struct proxy_hooks hooks;
	struct http_cache *cache;     /* NULL: no cache; else the embedder's (http/cache.h) */
	struct loop *loop;            /* the engine's, at proxy_attach */
	struct proxy_up up[PROXY_MAX_UPSTREAMS];
	unsigned rr_next;
	struct proxy_xchg *xchg, *free_xchg;  /* cfg.max_xchg, in mem */
	struct proxy_uconn *uconn, *free_uconn; /* max_xchg + nup * pool, in mem */
	uint32_t nuconn;
	uint8_t *bufs;
	char scratch[HTTP_HEAD_MAX + 2]; /* one field NUL-terminated for http_app_header */
	struct proxy_stats st;
};

/* Bytes of memory proxy_init needs (0: the config is out of range). */
size_t proxy_mem_size(const struct proxy_config *cfg);
/* 0 or -SK_EINVAL / -SK_ENOMEM.  mem stays the caller's until the end. */
int proxy_init(struct proxy *px, void *mem, size_t size, const struct proxy_config *cfg);
/* The engine's config a proxy wants over the defaults (a head's worth of
 * the origin's fields per answer). */
void proxy_app_config(const struct proxy *px, struct http_app_config *acfg);
/* The application: one route for every method and path.  def's init_ctx
 * is px; its init attaches the proxy to the engine's loop. */
void proxy_app_def(struct proxy *px, struct http_app_def *def, struct http_app_route *route);
/* Closes every upstream connection (after http_app_stop). */
void proxy_stop(struct proxy *px);
/* The counters: proxy.* (PROXY_STATS), then each upstream's own as
 * proxy.upstream.ADDR:PORT.{requests,failures,downs} (a runtime with two
 * routes on one upstream sums them by name: host/stat_sum.h). */
void proxy_stats(const struct proxy *px, void (*fn)(void *ctx, const char *name, uint64_t v),
		 void *ctx);
/* Whether a lies inside p (the bits past p->len ignored). */
bool proxy_prefix_match(const struct proxy_prefix *p, const struct sk_addr *a);
/* Invariants: 0 or -(line). */
int proxy_check(const struct proxy *px);

/* ---- proxy_up.c: the upstreams (internal to the proxy) ---- */

/* The upstream for a new attempt: not in `tried` (a bit per upstream),
 * not down; -1 when none is left. */
int proxy_up_pick(struct proxy *px, uint32_t tried, sk_time_ns now);
void proxy_up_failed(struct proxy *px, unsigned i, sk_time_ns now);
void proxy_up_ok(struct proxy *px, unsigned i);

#endif
