/* sites_flags.c — `skiff serve`'s one-site flags as the configuration
 * model (sites_flags.h). */
#include "sites_flags.h"


/* Sites: the flags' site, the redirecting one, one per --tls-sni. */
#define FLAG_SITES (2u + OPT_SNI_MAX)

struct arena {
	uint8_t *p;
	size_t left;
};

static void *take(struct arena *a, size_t n)
{
	size_t pad = (8u - ((uintptr_t)a->p & 7u)) & 7u;
	if (pad + n > a->left)
		return NULL;
	void *r = a->p + pad;
	a->p += pad + n;
	a->left -= pad + n;
	return r;
}

/* s[0, n) as a NUL-terminated copy in the arena; lower case when lower. */
static const char *copy(struct arena *a, const char *s, size_t n, bool lower)
{
	char *d = take(a, n + 1);
	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		d[i] = lower && ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
	}
	d[n] = 0;
	return d;
}

static void say(char *err, size_t errlen, const char *a, const char *b)
{
	size_t n = 0;
	for (const char *s = a; *s && n + 1 < errlen; s++)
		err[n++] = *s;
	for (const char *s = b; s && *s && n + 1 < errlen; s++)
		err[n++] = *s;
	if (errlen)
		err[n] = 0;
}

size_t sites_flags_arena_bound(void)
{
	/* the sites, each --tls-sni's three strings, the redirect target,
	 * the upstreams' texts */
	return FLAG_SITES * sizeof(struct sconf_site) + 8u +
	       OPT_SNI_MAX * (SCONF_NAME_MAX + 2u * SCONF_PATH_MAX + 3u + 24u) + 64u +
	       SCONF_MAX_UPSTREAMS * (OPT_ADDR_STRLEN + 8u);
}

/* --upstream and the proxy flags as a proxy route's directives: the
 * route `skiff proxy`'s flags describe.  0, or -1 with the reason. */
static int proxy_route(const struct opts *o, struct arena *a, struct sconf_route *rt, char *err,
		       size_t errlen)
{
	const struct opt_val *v = o->v;
	*rt = (struct sconf_route){.path = "/", .kind = SCONF_PROXY};
	struct opt_endpoint ep[OPT_ENDPOINTS_MAX];
	int n = opt_parse_endpoints_any(v[OPT_UPSTREAM].str, ep, OPT_ENDPOINTS_MAX);
	if (n < 1 || (unsigned)n > SCONF_MAX_UPSTREAMS) {
		say(err, errlen, "--upstream: expected 1 to 16 ADDR:PORT, found ", v[OPT_UPSTREAM].str);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		/* Names are resolved by the front end (a hosted matter: the
		 * resolver), which hands this module literals. */
		if (ep[i].name[0]) {
			say(err, errlen, "--upstream: a name is not resolved here: ", ep[i].name);
			return -1;
		}
		char t[OPT_ADDR_STRLEN];
		opt_format_addr(&ep[i].addr, ep[i].port, t);
		size_t tl = 0;
		while (t[tl])
			tl++;
		rt->up[i] = (struct sconf_upstream){ep[i].addr, ep[i].port, copy(a, t, tl, false)};
		if (!rt->up[i].text) {
			say(err, errlen, "the configuration's arena is too small", NULL);
			return -1;
		}
	}
	rt->nup = (unsigned)n;
	/* Every flag has a value (given or its default): each is given to
	 * the route, so the route says what the flags say, defaults too. */
	rt->cache_bytes = v[OPT_CACHE].num;
	rt->balance = v[OPT_BALANCE].num == 1 ? SCONF_BALANCE_LEAST : SCONF_BALANCE_RR;
	rt->pool_given = true;
	rt->pool = (uint32_t)v[OPT_POOL].num;
	rt->connect_timeout = v[OPT_CONNECT_TIMEOUT].num * SK_NS_PER_S;
	rt->first_byte_timeout = v[OPT_FIRST_BYTE_TIMEOUT].num * SK_NS_PER_S;
	rt->upstream_idle_timeout = v[OPT_UP_IDLE_TIMEOUT].num * SK_NS_PER_S;
	rt->fail_max = (uint32_t)v[OPT_FAIL_MAX].num;
	rt->fail_timeout = v[OPT_FAIL_TIMEOUT].num * SK_NS_PER_S;
	rt->no_x_cache = v[OPT_NO_X_CACHE].given;
	if (!v[OPT_PURGE_ALLOW].str)
		return 0; /* not a word of the table (the guest's): the proxy's default */
	struct opt_prefix pp[OPT_PREFIXES_MAX];
	int np = opt_parse_prefixes(v[OPT_PURGE_ALLOW].str, pp, OPT_PREFIXES_MAX);
	if (np < 0 || (unsigned)np > SCONF_MAX_PURGE_ALLOW) {
		say(err, errlen, "--purge-allow: bad list ", v[OPT_PURGE_ALLOW].str);
		return -1;
	}
	rt->purge_allow_given = true;
	rt->npurge_allow = (unsigned)np;
	for (int i = 0; i < np; i++)
		rt->purge_allow[i] = (struct sconf_prefix){pp[i].addr, pp[i].len};
	return 0;
}

int sites_conf_from_flags(const struct opts *o, bool on_skiff, bool app, void *arena, size_t size,
			  struct sconf *out, char *err, size_t errlen)
{
	const struct opt_val *v = o->v;
	struct arena a = {arena, size};
	sk_memset(out, 0, sizeof(*out));
	out->sites = take(&a, FLAG_SITES * sizeof(struct sconf_site));
	if (!out->sites)
		goto small;
	sk_memset(out->sites, 0, FLAG_SITES * sizeof(struct sconf_site));

	/* The listeners: the plain one, and HTTPS beside it. */
	bool tls = v[OPT_TLS_CERT].set && v[OPT_TLS_KEY].set;
	struct sconf_listen *l = &out->listen[out->nlisten++];
	l->any = on_skiff || !v[OPT_IP].set || v[OPT_IP].ip == 0;
	l->addr = sk_addr_v4(l->any ? 0 : v[OPT_IP].ip);
	l->port = (uint16_t)(v[OPT_PORT].set ? v[OPT_PORT].num : 80);
	l->h2_off = v[OPT_HTTP2].set && v[OPT_HTTP2].num == 1;
	if (tls) {
		struct sconf_listen *t = &out->listen[out->nlisten++];
		*t = *l;
		t->port = (uint16_t)(v[OPT_TLS_PORT].set ? v[OPT_TLS_PORT].num : 443);
		t->tls = true;
		/* --tls-alpn http/1.1: HTTP/1.1 only there (ALPN offers
		 * h2 exactly where HTTP/2 is spoken: sconf_alpn_h2). */
		if (v[OPT_TLS_ALPN].set && v[OPT_TLS_ALPN].num == 0)
			t->h2_off = true;
	}
	bool redirect = tls && v[OPT_TLS_REDIRECT].set && v[OPT_TLS_REDIRECT].num;

	/* The site the flags describe: every Host, its routes. */
	struct sconf_site *s = &out->sites[out->nsites++];
	s->is_default = true;
	s->listen_mask = redirect ? 2u : tls ? 3u : 1u;
	if (tls) {
		s->cert = v[OPT_TLS_CERT].str;
		s->key = v[OPT_TLS_KEY].str;
	}
	struct sconf_route *rt = &s->routes[s->nroutes++];
	if (v[OPT_ROOT].set) {
		*rt = (struct sconf_route){.path = "/", .kind = SCONF_FILES, .root = v[OPT_ROOT].str};
		if (v[OPT_CACHE_CONTROL].set)
			rt->cache_control = v[OPT_CACHE_CONTROL].str;
	} else if (v[OPT_UPSTREAM].set) {
		if (proxy_route(o, &a, rt, err, errlen) < 0)
			return -1;
	} else if (app) {
		*rt = (struct sconf_route){.path = "/", .kind = SCONF_APP};
	} else {
		*rt = (struct sconf_route){.path = "/", .exact = true, .kind = SCONF_RETURN,
					   .status = 200, .body = HTTP_HELLO_BODY};
	}

	/* --tls-redirect: the plain listener's own site. */
	if (redirect) {
		struct sconf_site *r = &out->sites[out->nsites++];
		r->is_default = true;
		r->listen_mask = 1u;
		struct sconf_route *rr = &r->routes[r->nroutes++];
		uint16_t port = out->listen[1].port;
		char t[48] = "https://$host";
		size_t n = 13;
		if (port != 443) {
			t[n++] = ':';
			char d[6];
			int k = 0;
			for (unsigned p = port; p; p /= 10)
				d[k++] = (char)('0' + p % 10);
			while (k)
				t[n++] = d[--k];
		}
		const char *tail = "$request_uri";
		while (*tail)
			t[n++] = *tail++;
		*rr = (struct sconf_route){.path = "/", .kind = SCONF_REDIRECT, .status = 301,
					   .target = copy(&a, t, n, false)};
		if (!rr->target)
			goto small;
	}

	/* --tls-sni NAME:CERT:KEY: a named site on the tls listener only. */
	for (unsigned i = 0; tls && i < o->nsni; i++) {
		const struct opt_sni *e = &o->sni[i];
		/* The options module has checked NAME (a host name, or *.DOMAIN). */
		struct sconf_site *n = &out->sites[out->nsites++];
		*n = *s;
		n->is_default = false;
		n->listen_mask = 2u;
		n->nnames = 1;
		n->names[0] = copy(&a, e->s, e->name_len, true);
		n->cert = copy(&a, e->s + e->name_len + 1, (size_t)(e->key_off - e->name_len - 2), false);
		n->key = e->s + e->key_off;
		if (!n->names[0] || !n->cert)
			goto small;
	}

	/* The server-wide fields. */
	if (v[OPT_WORKERS].set)
		out->workers = v[OPT_WORKERS].num == OPT_NUM_AUTO ? SCONF_WORKERS_AUTO
								  : (uint32_t)v[OPT_WORKERS].num;
	if (v[OPT_MAX_CONNS].set)
		out->max_conns = (uint32_t)v[OPT_MAX_CONNS].num;
	if (v[OPT_HTTP2_SESSIONS].set) /* the guest's word only */
		out->http2_sessions = (uint32_t)v[OPT_HTTP2_SESSIONS].num;
	if (v[OPT_HEADER_TIMEOUT].set)
		out->header_timeout = v[OPT_HEADER_TIMEOUT].num * SK_NS_PER_S;
	if (v[OPT_BODY_TIMEOUT].set)
		out->body_timeout = v[OPT_BODY_TIMEOUT].num * SK_NS_PER_S;
	if (v[OPT_SEND_TIMEOUT].set)
		out->send_timeout = v[OPT_SEND_TIMEOUT].num * SK_NS_PER_S;
	if (v[OPT_KEEPALIVE_TIMEOUT].set)
		out->keepalive_timeout = v[OPT_KEEPALIVE_TIMEOUT].num * SK_NS_PER_S;
	if (v[OPT_MAX_BODY].set)
		out->max_body = v[OPT_MAX_BODY].num;
	if (v[OPT_ACCESS_LOG].set)
		out->access_log = v[OPT_ACCESS_LOG].str;
	out->access_log_json = v[OPT_ACCESS_LOG_FORMAT].set && v[OPT_ACCESS_LOG_FORMAT].num == 1;
	if (v[OPT_ERROR_LOG].set)
		out->error_log = v[OPT_ERROR_LOG].str;
	sites_conf_defaults(out);
	return 0;
small:
	say(err, errlen, "the configuration's arena is too small", NULL);
	return -1;
}

/* ---- the unikernel's boot words ---- */

int sites_conf_from_guest(const struct opts *o, const struct sites_guest_src *g, void *arena,
			  size_t size, struct sconf *out, char *err, size_t errlen)
{
	/* The words as the flags would be with the module's files named:
	 * a copy, so the caller's options stay as the command line said. */
	struct opts w = *o;
	w.v[OPT_ROOT] = (struct opt_val){.str = g->root, .set = g->root != NULL};
	w.v[OPT_TLS_CERT] = (struct opt_val){.str = g->cert, .set = g->cert && g->key};
	w.v[OPT_TLS_KEY] = (struct opt_val){.str = g->key, .set = g->cert && g->key};
	w.nsni = 0; /* not a guest word: one certificate */
	if (sites_conf_from_flags(&w, true, g->app, arena, size, out, err, errlen) < 0)
		return -1;
	if (!g->metrics)
		return 0;
	if (out->nsites >= FLAG_SITES) {
		say(err, errlen, "metrics: no room for its listener", NULL);
		return -1;
	}
	return sites_conf_add_metrics(out, &out->sites[out->nsites], g->metrics, err, errlen);
}

int sites_conf_add_metrics(struct sconf *c, struct sconf_site *room, uint16_t port, char *err,
			   size_t errlen)
{
	/* Its own listener and site, on no other listener. */
	if (c->nlisten >= SCONF_MAX_LISTEN) {
		say(err, errlen, "metrics: no room for its listener", NULL);
		return -1;
	}
	unsigned li = c->nlisten++;
	c->listen[li] = (struct sconf_listen){.addr = sk_addr_v4(0), .any = true, .port = port};
	struct sconf_site *m = room;
	sk_memset(m, 0, sizeof(*m));
	m->is_default = true;
	m->listen_mask = 1u << li;
	m->routes[m->nroutes++] = (struct sconf_route){.path = "/metrics", .exact = true,
						       .kind = SCONF_METRICS};
	c->nsites++;
	return 0;
}
