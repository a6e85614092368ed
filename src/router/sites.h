/* sites.h — many sites on the one HTTP engine (issue 32): the router that
 * runs a configuration (conf/sites_conf.h) on http/app.h's engine.
 *
 * One engine listens on each listener of the configuration; its one route
 * (every method, prefix "/") is sites_dispatch, whose context names the
 * listener.  For each request it
 *   1. picks the site by the Host field among the sites on that listener
 *      (sites_conf_site: exact name, then the longest wildcard, then the
 *      listener's default site); none: 404;
 *   2. picks the route by the decoded path (sites_conf_route: exact, then
 *      the longest prefix); none: 404;
 *   3. applies the site's header lines, then the route's (an added line
 *      goes out on every answer of the route, the handler's own included;
 *      a removed name never goes out, http_app_header_drop);
 *   4. runs the route's handler.
 * A request with a body whose route does not use one (files, redirect,
 * return, metrics; or no site or route: the 404) is answered after the
 * body has been read and dropped (http_app_body_skip), and routed again
 * then: a broken body gets the engine's 400, and a chunked one keeps the
 * connection.  The proxy and the application read their bodies.
 * The handlers of the kinds that need nothing from the system (redirect,
 * return) are this file's; the others (files, proxy, metrics, app) are
 * given by the host that built them (struct sites_gen's table), so this
 * file stays freestanding and the same router runs hosted and in the
 * unikernel.
 *
 * Generations: everything a request's handler may use (the parsed
 * configuration, the handler table, what the host built for it) is one
 * struct sites_gen.  A reload builds a new generation and swaps the
 * pointer (sites_swap) between loop turns; requests already dispatched
 * keep using the old one, so the host retires it only once none can be
 * left: it starts a new epoch in each engine at the swap
 * (http_app_epoch_next) and frees the old generation once every engine's
 * http_app_live_old is 0 (open keep-alive connections do not hold it), or
 * at exit.
 *
 * Freestanding: base/, http/ and conf/sites_conf.h; no allocation.
 */
#ifndef HTTP_SITES_H
#define HTTP_SITES_H

#include "../conf/sites_conf.h"
#include "../http/app.h"

/* A route's handler and its context, as the host built them. */
struct sites_handler {
	http_app_handler_fn fn; /* NULL: this file's own (redirect, return) */
	void *ctx;
};

/* The longest Location a redirect writes (after $host, $request_uri and
 * $rest are put in); a longer one is answered 414. */
#define SITES_LOCATION_MAX 2048u

#define SITES_STATS(X)                                                                  \
	X(requests) X(no_site) X(no_route) X(redirects) X(returns) X(location_too_long)      \
	X(redirect_no_host) X(header_errors)

struct sites_stats {
#define SITES_STAT_FIELD(n) uint64_t n;
	SITES_STATS(SITES_STAT_FIELD)
#undef SITES_STAT_FIELD
};

/* One generation: a configuration and what runs it.  Owned by the host;
 * read-only while current, except `live` and `st`. */
struct sites_gen {
	const struct sconf *conf;
	/* h[s][r]: site s's route r (conf->sites[s].routes[r]). */
	struct sites_handler (*h)[SCONF_MAX_ROUTES];
	void *host;           /* the host's own (its file caches, proxies, arena) */
};

/* What a listener's engine routes through: its index in conf->listen and
 * the current generation (shared by every listener of one worker). */
struct sites {
	struct sites_gen *cur;
	struct sites_stats st;
	char loc[SITES_LOCATION_MAX + 1]; /* scratch: a Location being built */
};

struct sites_listener {
	struct sites *s;
	unsigned li;
};

/* The engine's route for a listener: every method, every path, ctx = l. */
void sites_route(struct sites_listener *l, struct http_app_route *route);

/* An http_app_handler_fn (ctx: struct sites_listener). */
int sites_dispatch(struct http_app_req *r, void *ctx);

/* Make g current; the old one is returned (see Generations). */
struct sites_gen *sites_swap(struct sites *s, struct sites_gen *g);

/* Expand a redirect target: $host (the Host's name, without its port),
 * $request_uri (the request-target as sent, path and query) and $rest
 * (the path after the route's prefix, as sent, with the query) into
 * out[0, cap).  Returns the length, or 0 when it does not fit.  Pure:
 * for the router and its tests. */
size_t sites_expand(const char *tmpl, const char *host, size_t hlen, const char *uri,
		    size_t ulen, const char *rest, size_t rlen, char *out, size_t cap);

void sites_stats(const struct sites *s, void (*fn)(void *ctx, const char *name, uint64_t v),
		 void *ctx);

/* ---- sites_proxy.c: a proxy route's http/proxy.h configuration, the
 * same for the hosted runtime and the unikernel ---- */

struct proxy_config;

/* proxy_config_default (the defaults of `skiff proxy`'s flags), then the
 * route's upstreams as written, proxy_host, body_on_get and every
 * upstream option the route gives (balance, pool, connect_timeout,
 * first_byte_timeout, upstream_idle_timeout as idle_timeout, fail_max,
 * fail_timeout, x_cache, purge_allow).  rt->kind is SCONF_PROXY.  What
 * the host decides (max_xchg, wall_offset, an upstream address the guest
 * reaches otherwise) it sets after. */
void sites_proxy_config(const struct sconf_route *rt, struct proxy_config *pc);

/* Do two proxy routes ask for the same proxy: the same upstreams in the
 * same order, cache size and every option above?  (A reload keeps the
 * old proxy, its pool and its cache, only then.) */
bool sites_proxy_same(const struct sconf_route *a, const struct sconf_route *b);

#endif
