/* sites_conf.h — the configuration model of one skiff server (issue 32):
 * listeners, sites chosen by Host and SNI, routes chosen by path, one
 * handler per route, and the server-wide limits and logs; and the parser
 * of its file syntax, a small nginx-like block language:
 *
 *   # examples/sites.conf (docs/config.md documents every directive)
 *   max_body 1m;
 *   site a.test {
 *       listen 127.0.0.1:8080;
 *       listen 127.0.0.1:8443 tls;
 *       tls certs/a.crt certs/a.key;
 *       header X-Site a;
 *       route /        { files sites/a; }
 *       route /api/    { proxy 127.0.0.1:9090; cache 64m; }
 *       route /old/    { redirect 301 /new/$rest; }
 *       route = /health { return 200 "ok\n"; }
 *   }
 *
 * Lexing: a word is a run of bytes other than whitespace, ';', '{', '}',
 * '"' and '#'; a quoted string "..." may hold any byte but '"', '\\' and
 * control bytes, with the escapes \" \\ \n \t; '#' starts a comment to the
 * end of the line.  Every directive ends with ';' or a block { ... }.
 * Keywords are lower case and matched exactly.
 *
 * The model is the ONE structure every front end fills (the file through
 * sites_conf_parse; `skiff serve`'s one-site flags and the unikernel's boot
 * words build the same struct) and the runtime reads.  It is plain data:
 * every pointer points into the arena given to the parser (or into memory
 * the filler owns), strings are NUL-terminated, nothing is freed one by one.
 *
 * Freestanding (base/ only: no libc, no allocation, no I/O), so the same
 * parser runs in the unikernel on the file packed into its boot module.
 * Checks that need the system (a root that is a directory, a certificate
 * that loads) are the hosted front end's (cmd/check.c), after parsing.
 */
#ifndef CONF_SITES_CONF_H
#define CONF_SITES_CONF_H

#include "../base/sk.h"
#include "../base/sk_addr.h"

#define SCONF_MAX_LISTEN 16u    /* distinct address:port pairs in a file */
#define SCONF_MAX_SITES 64u
#define SCONF_MAX_NAMES 8u      /* names per site */
#define SCONF_MAX_ROUTES 32u    /* routes per site */
#define SCONF_MAX_HEADERS 16u   /* header lines per site, and per route */
#define SCONF_MAX_UPSTREAMS 16u /* upstreams per proxy route (skiff proxy --upstream's) */
#define SCONF_NAME_MAX 253u     /* a DNS name */
#define SCONF_PATH_MAX 1024u    /* a file path, after joining with the file's folder */
#define SCONF_VALUE_MAX 1024u   /* a header value, a redirect target, a return body */
#define SCONF_MAX_PURGE_ALLOW 16u /* prefixes in a proxy route's purge_allow */

/* Where a directive starts in the file: 1-based line and column (bytes). */
struct sconf_pos {
	uint32_t line, col;
};

/* A listener: the same address and port named by several sites is one
 * listener; every site on it must agree on `tls`. */
struct sconf_listen {
	struct sk_addr addr;  /* IPv4 mapped (base/sk_addr.h), or IPv6 */
	bool any;             /* "*:PORT" or "[::]:PORT": every address of both families */
	bool v6;              /* a bracketed IPv6 literal */
	uint16_t port;        /* 1..65535 */
	bool tls;             /* HTTPS: every site on it has a certificate (`tls`) */
	bool h2_off;          /* HTTP/1.1 only: `listen ADDR:PORT [tls] http2 off;`,
	                       * --http2 off, the guest's http2=off, or (tls) the
	                       * flags' --tls-alpn http/1.1.  Default on: the
	                       * preface, and on a tls listener ALPN offers h2
	                       * before http/1.1 (sconf_alpn_h2; docs/h2.md) */
	struct sconf_pos pos; /* the first `listen` that named it */
};

/* Does the listener's ALPN offer h2 (tls_engine.h's alpn_h2)?  Exactly
 * when it is tls and speaks HTTP/2: a client told h2 gets the session
 * the preface opens (RFC 9113 3.3), one told http/1.1 the same engine. */
static inline bool sconf_alpn_h2(const struct sconf_listen *l)
{
	return l->tls && !l->h2_off;
}

/* A response header line a site or a route adds (value non-NULL) or
 * removes (value NULL: `header -Name;`).  The engine's own names
 * (Content-Length, Transfer-Encoding, Connection, Date) are refused. */
struct sconf_header {
	const char *name;  /* a token, as written */
	const char *value; /* VCHAR/SP/HTAB only, or NULL */
};

enum sconf_kind {
	SCONF_FILES = 1, /* files DIR;            static files under DIR */
	SCONF_PROXY,     /* proxy ADDR:PORT...;   the reverse proxy (http/proxy.h) */
	SCONF_REDIRECT,  /* redirect CODE TARGET; 301/302/303/307/308 */
	SCONF_RETURN,    /* return CODE [BODY];   a fixed answer */
	SCONF_METRICS,   /* metrics;              the Prometheus page of every counter */
	SCONF_APP,       /* app;                  the application linked into the binary */
};

struct sconf_upstream {
	struct sk_addr addr;
	uint16_t port;
	const char *text; /* "127.0.0.1:9090" as written, for messages and logs */
};

/* An address prefix over the 16 bytes of struct sk_addr: an IPv4 /n is
 * the IPv4-mapped ::ffff:a.b.c.d/(96 + n); the bits past len are zero. */
struct sconf_prefix {
	struct sk_addr addr;
	uint8_t len; /* 0..128 */
};

enum sconf_balance {
	SCONF_BALANCE_RR = 0, /* balance rr;     round-robin (the default) */
	SCONF_BALANCE_LEAST,  /* balance least;  the fewest requests in flight */
};

/* A route: a path (exact or prefix) and one handler.  Within a site the
 * exact route equal to the request's decoded path wins; else the longest
 * prefix route that the path starts with (as nginx's locations); none:
 * 404.  `rest` (the path after a prefix route's path) is what `files`
 * looks up under its folder and what `$rest` stands for. */
struct sconf_route {
	const char *path;     /* starts with '/' */
	bool exact;           /* route = PATH */
	enum sconf_kind kind;
	struct sconf_pos pos;
	/* files */
	const char *root;           /* the folder, joined with the file's folder */
	const char *cache_control;  /* `cache_control VALUE;` or NULL */
	/* proxy */
	struct sconf_upstream up[SCONF_MAX_UPSTREAMS];
	unsigned nup;
	uint64_t cache_bytes;       /* `cache SIZE|off;`: 0 = no cache */
	bool host_upstream;         /* `proxy_host upstream;` (default keep: the client's Host) */
	bool body_on_get;           /* `body_on_get allow;` (default refuse: 400, issue 32 item 5) */
	/* proxy: `skiff proxy`'s upstream flags as directives.  Zero in a
	 * field means "not given": the flag's default, which is http/proxy.h's
	 * proxy_config_default (router/sites_proxy.c applies them); pool and
	 * purge_allow, where zero is a value, say apart whether they were given. */
	uint8_t balance;            /* `balance rr|least;` enum sconf_balance (default rr) */
	bool pool_given;            /* `pool N;` */
	uint32_t pool;              /*   idle connections kept per upstream, 0..65536 (default 32) */
	sk_time_ns connect_timeout; /* `connect_timeout TIME;` 1ms..1h (default 5s) */
	sk_time_ns first_byte_timeout;    /* `first_byte_timeout TIME;` 1ms..24h (default 60s) */
	sk_time_ns upstream_idle_timeout; /* `upstream_idle_timeout TIME;` 1ms..24h (default 60s) */
	uint32_t fail_max;          /* `fail_max N;` 1..1000 (default 3) */
	sk_time_ns fail_timeout;    /* `fail_timeout TIME;` 1ms..24h (default 10s) */
	bool no_x_cache;            /* `x_cache off;` (default on: X-Cache with a cache) */
	bool purge_allow_given;     /* `purge_allow ADDR[/LEN]...|none;` (default 127.0.0.0/8 ::1) */
	struct sconf_prefix purge_allow[SCONF_MAX_PURGE_ALLOW];
	unsigned npurge_allow;      /* given and 0: none (PURGE answers 405) */
	/* redirect, return */
	uint16_t status;
	const char *target;         /* redirect: may hold $host, $request_uri, $rest */
	const char *body;           /* return: NULL = no body */
	/* headers the route adds or removes, after the site's */
	struct sconf_header hdr[SCONF_MAX_HEADERS];
	unsigned nhdr;
	uint32_t header_area;       /* `header_area SIZE;` 0 = the top level's (sites_conf_header_area) */
};

struct sconf_site {
	const char *names[SCONF_MAX_NAMES]; /* lower case; "*.example.com" = one label or more before */
	unsigned nnames;
	bool is_default;      /* `default;`: the site for a Host no site on its listener names */
	uint32_t listen_mask; /* bit i: on sconf.listen[i] */
	const char *cert, *key; /* `tls CERT KEY;` joined with the file's folder, or NULL */
	struct sconf_header hdr[SCONF_MAX_HEADERS];
	unsigned nhdr;
	struct sconf_route routes[SCONF_MAX_ROUTES];
	unsigned nroutes;
	struct sconf_pos pos;
};

/* The whole configuration.  Server-wide directives at the top level;
 * zero in a field means "not given": sites_conf_defaults fills each with
 * the value of the matching `skiff serve` flag's default. */
/* workers auto;: one worker per core the process may run on. */
#define SCONF_WORKERS_AUTO UINT32_MAX
/* http2_sessions: the engine's bound (http_app_config_ok), and the
 * default's cap: h2load's -c 100 and a browser's fleet fit. */
#define SCONF_HTTP2_SESSIONS_MAX 4096u
#define SCONF_HTTP2_SESSIONS_DEFAULT 128u

struct sconf {
	struct sconf_listen listen[SCONF_MAX_LISTEN];
	unsigned nlisten;
	struct sconf_site *sites; /* in the arena */
	unsigned nsites;
	uint32_t workers;          /* workers N;             or auto; default 1 */
	uint32_t max_conns;        /* max_conns N;           default 4096 */
	/* http2_sessions N; 1..SCONF_HTTP2_SESSIONS_MAX: HTTP/2 connections
	 * held at once by each listener's engine (each a session of about
	 * 150 KiB; http_app_config.h2_sessions), at most max_conns of them
	 * in use.  Default min(max_conns, SCONF_HTTP2_SESSIONS_DEFAULT); the
	 * unikernel's, unless its file says, is the word http2-sessions=
	 * (8: the guest's memory). */
	uint32_t http2_sessions;
	uint64_t max_body;         /* max_body SIZE;         default 1m */
	uint32_t header_area;      /* header_area SIZE;      256..64k, 0 = the engine's 1 KiB */
	sk_time_ns header_timeout; /* header_timeout TIME;   default 10s */
	sk_time_ns body_timeout;   /* body_timeout TIME;     default 60s */
	sk_time_ns send_timeout;   /* send_timeout TIME;     default 60s */
	sk_time_ns keepalive_timeout; /* keepalive_timeout TIME; default 60s */
	const char *access_log;    /* access_log PATH [combined|json]|off;   NULL = off */
	bool access_log_json;      /* its format: json (host/access_log.h), else combined */
	const char *error_log;     /* error_log PATH|stderr; NULL = stderr */
	struct sconf_pos access_log_pos, error_log_pos; /* where given, for messages (0:0: not) */
};

/* A parse error: where, and what was expected, e.g.
 *   "sites.conf:12:9: unknown directive 'rooot' in route (expected one of
 *    files, proxy, redirect, return, metrics, app, header, cache,
 *    cache_control, proxy_host, body_on_get, balance, ...)" */
struct sconf_err {
	struct sconf_pos pos;
	char msg[384]; /* NUL-terminated, without the file:line:col prefix */
};

/* Parse text[0, len) (need not be NUL-terminated) into *out.  Relative
 * paths (files, tls, access_log, error_log) are joined with dir ("" or
 * NULL: as written).  Every string and the sites array go into
 * arena[0, arena_size); a file that
 * needs more is refused with a message (not a crash).  The whole file is
 * checked (syntax, then meaning: every site has a listener and at least
 * one route, a tls listener's sites all have certificates, a name is on a
 * listener once, a route path once per site, each route has exactly one
 * handler and only the options of that handler) before 0 is returned;
 * else -1 with *err set and *out unspecified.  Unknown directives are
 * refused, never ignored. */
int sites_conf_parse(const char *text, size_t len, const char *dir, void *arena,
		     size_t arena_size, struct sconf *out, struct sconf_err *err);

/* Fill every server-wide field left zero with its default (above). */
void sites_conf_defaults(struct sconf *c);

/* The arena a file of len bytes can need at most (a bound, so a caller
 * can allocate once). */
size_t sites_conf_arena_bound(size_t len);

/* Which site answers a request that came in on listener li with Host (or
 * SNI name) host[0, hlen) (any case, a ":port" suffix ignored, a trailing
 * '.' ignored): an exact name first, then the longest matching "*."
 * wildcard, then the listener's `default;` site; NULL: none (404). */
const struct sconf_site *sites_conf_site(const struct sconf *c, unsigned li, const char *host,
					 size_t hlen);

/* Which route of site s answers the decoded path[0, plen) (exact first,
 * then the longest prefix); NULL: none.  *rest_off: where the rest
 * starts in path. */
const struct sconf_route *sites_conf_route(const struct sconf_site *s, const char *path,
					   size_t plen, size_t *rest_off);

/* The header area (bytes of header lines a handler may add to one answer)
 * the engine of listener li needs: the top level's `header_area`, raised
 * to the largest a route of a site on li asks; 0 when none is given (the
 * engine's default).  The area is per connection, so every route on li
 * gets the largest. */
uint32_t sites_conf_header_area(const struct sconf *c, unsigned li);

#endif
