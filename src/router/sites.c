/* sites.c — the router of sites.h: Host -> site, path -> route, the
 * route's header lines, then its handler; and the two handlers that need
 * nothing from the system, redirect and return. */
#include "sites.h"

void sites_route(struct sites_listener *l, struct http_app_route *route)
{
	*route = (struct http_app_route){HTTP_APP_ANY, "/", true, sites_dispatch, l};
}

struct sites_gen *sites_swap(struct sites *s, struct sites_gen *g)
{
	struct sites_gen *old = s->cur;
	s->cur = g;
	return old;
}

/* Where the path[?query] of a target starts: at once in origin-form, past
 * scheme://authority in absolute-form (the parser has checked its form). */
static size_t origin_part(const char *t, size_t n)
{
	if (n && t[0] == '/')
		return 0;
	size_t i = 0;
	while (i + 2 < n && !(t[i] == ':' && t[i + 1] == '/' && t[i + 2] == '/'))
		i++;
	i = i + 3 < n ? i + 3 : n;
	while (i < n && t[i] != '/' && t[i] != '?')
		i++;
	return i;
}

static bool put(char *out, size_t cap, size_t *at, const char *p, size_t n)
{
	if (n > cap - *at)
		return false;
	sk_memcpy(out + *at, p, n);
	*at += n;
	return true;
}

size_t sites_expand(const char *tmpl, const char *host, size_t hlen, const char *uri,
		    size_t ulen, const char *rest, size_t rlen, char *out, size_t cap)
{
	static const struct {
		const char *name;
		size_t len;
	} vars[] = {{"$host", 5}, {"$request_uri", 12}, {"$rest", 5}};
	size_t at = 0;
	for (size_t i = 0; tmpl[i];) {
		size_t v = 3;
		if (tmpl[i] == '$')
			for (v = 0; v < 3; v++) {
				size_t k = 0;
				while (k < vars[v].len && tmpl[i + k] == vars[v].name[k])
					k++;
				if (k == vars[v].len)
					break;
			}
		bool ok;
		if (v == 0)
			ok = put(out, cap, &at, host, hlen);
		else if (v == 1)
			ok = put(out, cap, &at, uri, ulen);
		else if (v == 2)
			ok = put(out, cap, &at, rest, rlen);
		else
			ok = put(out, cap, &at, tmpl + i, 1);
		if (!ok)
			return 0;
		i += v < 3 ? vars[v].len : 1;
	}
	return at;
}

static bool unreserved(uint8_t ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/';
}

/* $rest as sent: when the raw path starts with the route's path byte for
 * byte (the common case), what follows it in the target; else the decoded
 * rest percent-encoded again, then the raw query.  Into out[0, cap);
 * false when it does not fit. */
static bool raw_rest(const char *uri, size_t ulen, const struct sconf_route *rt,
		     const char *path, size_t rest_off, char *out, size_t cap, size_t *len)
{
	size_t pl = sk_strlen(rt->path), q = 0;
	while (q < ulen && uri[q] != '?')
		q++;
	if (pl <= q && sk_memcmp(uri, rt->path, pl) == 0 && pl == rest_off) {
		if (ulen - pl > cap)
			return false;
		sk_memcpy(out, uri + pl, ulen - pl);
		*len = ulen - pl;
		return true;
	}
	static const char hex[] = "0123456789ABCDEF";
	size_t at = 0;
	for (const char *p = path + rest_off; *p; p++) {
		uint8_t ch = (uint8_t)*p;
		char enc[3] = {'%', hex[ch >> 4], hex[ch & 15]};
		if (!(unreserved(ch) ? put(out, cap, &at, (const char *)p, 1)
				     : put(out, cap, &at, enc, 3)))
			return false;
	}
	if (!put(out, cap, &at, uri + q, ulen - q))
		return false;
	*len = at;
	return true;
}

/* The Host's name without its port ("[::1]:8080" -> "[::1]"). */
static size_t host_name_len(const char *h, size_t n)
{
	size_t i = 0;
	if (n && h[0] == '[') {
		while (i < n && h[i] != ']')
			i++;
		return i + (i < n);
	}
	while (i < n && h[i] != ':')
		i++;
	return i;
}

/* Does the template say $host? */
static bool uses_host(const char *t)
{
	for (; *t; t++)
		if (t[0] == '$' && t[1] == 'h' && t[2] == 'o' && t[3] == 's' && t[4] == 't')
			return true;
	return false;
}

static int do_redirect(struct sites *s, struct http_app_req *r, const struct sconf_route *rt,
		       const char *host, size_t hlen, const char *path, size_t rest_off)
{
	if (!hlen && uses_host(rt->target)) {
		/* An HTTP/1.0 request without Host: no URL to send it to. */
		s->st.redirect_no_host++;
		return http_app_send(r, 400, NULL, 0);
	}
	size_t tlen, from, rlen = 0;
	const char *t = http_app_target(r, &tlen);
	from = origin_part(t, tlen);
	const char *uri = t + from;
	size_t ulen = tlen - from;
	if (ulen == 1 && uri[0] == '*') /* OPTIONS *: the site's root */
		uri = "/";
	/* The rest goes in the top of the scratch, the Location below it. */
	char *rest = s->loc + SITES_LOCATION_MAX / 2;
	size_t n = 0;
	if (raw_rest(uri, ulen, rt, path, rest_off, rest, SITES_LOCATION_MAX / 2, &rlen))
		n = sites_expand(rt->target, host, host_name_len(host, hlen), uri, ulen, rest, rlen,
				 s->loc, SITES_LOCATION_MAX / 2);
	if (n == 0) {
		s->st.location_too_long++;
		return http_app_send(r, 414, NULL, 0);
	}
	s->loc[n] = 0;
	s->st.redirects++;
	if (http_app_header(r, "Location", s->loc) < 0) {
		s->st.header_errors++;
		return -1;
	}
	return http_app_send(r, rt->status, NULL, 0);
}

static int do_return(struct sites *s, struct http_app_req *r, const struct sconf_route *rt)
{
	s->st.returns++;
	if (!rt->body)
		return http_app_send(r, rt->status, NULL, 0);
	if (http_app_header(r, "Content-Type", "text/plain; charset=utf-8") < 0) {
		s->st.header_errors++;
		return -1;
	}
	/* The body is the generation's, which outlives the request. */
	return http_app_send(r, rt->status, rt->body, sk_strlen(rt->body));
}

/* The header lines of a site or a route.  A line that cannot be added
 * (the answer's header area is full) fails the request: a 500, never an
 * answer that silently lacks what the configuration says it carries. */
static int apply_headers(struct sites *s, struct http_app_req *r, const struct sconf_header *h,
			 unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int rc = h[i].value ? http_app_header(r, h[i].name, h[i].value)
				    : http_app_header_drop(r, h[i].name);
		if (rc < 0) {
			s->st.header_errors++;
			return rc;
		}
	}
	return 0;
}

/* Route a request and run its handler.  body_read: the body (if any) has
 * been read and dropped already (http_app_body_skip). */
static int route(struct http_app_req *r, struct sites_listener *l, bool body_read);

static int after_body(struct http_app_req *r, void *ctx)
{
	return route(r, ctx, true);
}

/* Kinds that never use a body answer after reading it (http_app_body_skip):
 * a broken body gets its 400, and a chunked one keeps the connection.  The
 * proxy and the application read bodies themselves. */
static bool takes_body(enum sconf_kind k)
{
	return k == SCONF_PROXY || k == SCONF_APP;
}

static int route(struct http_app_req *r, struct sites_listener *l, bool body_read)
{
	struct sites *s = l->s;
	/* After a body, the generation may be a newer one (a reload while it
	 * arrived): the request is routed again, wholly in the current one. */
	struct sites_gen *g = s->cur;
	const struct sconf *c = g->conf;
	size_t hlen = 0;
	const char *host = http_app_host(r, &hlen);
	const struct sconf_site *site = sites_conf_site(c, l->li, host ? host : "", host ? hlen : 0);
	size_t plen = 0, rest_off = 0;
	const char *path = http_app_path(r, &plen);
	const struct sconf_route *rt =
		site ? sites_conf_route(site, path, plen, &rest_off) : NULL;
	if (!body_read && http_app_has_body(r) && (!rt || !takes_body(rt->kind)))
		return http_app_body_skip(r, after_body, l);
	if (!site) {
		s->st.no_site++;
		return http_app_send(r, 404, NULL, 0);
	}
	if (apply_headers(s, r, site->hdr, site->nhdr) < 0)
		return -1;
	if (!rt) {
		s->st.no_route++;
		return http_app_send(r, 404, NULL, 0);
	}
	if (apply_headers(s, r, rt->hdr, rt->nhdr) < 0)
		return -1;
	unsigned si = (unsigned)(site - c->sites), ri = (unsigned)(rt - site->routes);
	const struct sites_handler *h = &g->h[si][ri];
	if (h->fn) {
		http_app_set_rest(r, rest_off);
		return h->fn(r, h->ctx);
	}
	if (rt->kind == SCONF_REDIRECT)
		return do_redirect(s, r, rt, host ? host : "", host ? hlen : 0, path, rest_off);
	if (rt->kind == SCONF_RETURN)
		return do_return(s, r, rt);
	return -1; /* a host that built no handler for a kind it runs: a 500 */
}

int sites_dispatch(struct http_app_req *r, void *ctx)
{
	struct sites_listener *l = ctx;
	l->s->st.requests++;
	return route(r, l, false);
}

void sites_stats(const struct sites *s, void (*fn)(void *ctx, const char *name, uint64_t v),
		 void *ctx)
{
#define SITES_STAT_EMIT(n) fn(ctx, "sites." #n, s->st.n);
	SITES_STATS(SITES_STAT_EMIT)
#undef SITES_STAT_EMIT
}
