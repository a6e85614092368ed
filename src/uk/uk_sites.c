/* uk_sites.c — the guest's sites runtime (uk_sites.h): the sites of a
 * configuration file (`skiff vm --config FILE`), or the one site the boot
 * words describe (conf/sites_flags.h's sites_conf_from_guest: `skiff vm
 * [--root DIR] [--tls-cert C --tls-key K]`), on skiff's TCP, as
 * host/sites_host.c runs them hosted, with what the guest has instead of
 * a file system and a heap: the boot module's parts (archive/site_bundle.h
 * for a file; the site archive and tls_bundle.h's PEM files for the words)
 * and the bump allocator.
 *
 * The model, the archives and the bundle view are shared (S, read-only
 * once set up); each vCPU that serves has an instance (struct uk_sites:
 * its engines, router, handler table, proxies and metrics buffer), worker
 * 0's (W0) and each other worker's, every listener.  A TLS listener has its engine per instance (engines
 * are one thread's): BearSSL's context decoded again per vCPU, its session
 * cache W0's under sess_lock; wolfSSL's a context on W0's WOLFSSL_CTXs
 * (one ticket key).
 *
 * One app engine (http/app.c) per listener, on the loop or on a TLS loop
 * over it; each engine's one route is the router (router/sites.h), whose
 * handler table this file fills once: `files` the archive's lookup under
 * http/files_handler.h, `proxy` an http/proxy.h per route (its connections
 * on the loop, its cache from the heap), `metrics` the page of every
 * counter of the guest; redirect and return are the router's own.
 *
 * What differs from the hosted runtime (docs/unikernel.md says it too):
 *   - the guest has one address: every listener listens on it at its
 *     port, so two listeners on one port are refused; the address in the
 *     file picks the host side of `skiff vm`'s forward only;
 *   - a TLS listener's certificates are chosen by SNI as sites_host.c's
 *     tls_for() chooses them (the first site's by default, every other
 *     site's names by SNI, at most TLS_SNI_MAX names), on BearSSL
 *     (tls_bearssl_add_cert/_name): each distinct file pair decoded once
 *     into the listener's fixed pool;
 *   - a proxy upstream is numeric IPv4 as the guest reaches it; under QEMU's
 *     user network 127.0.0.1 (the host's loopback) is reached through the
 *     gateway, other loopback addresses are refused;
 *   - a file's max_conns defaults to 256 per listener (an app connection
 *     holds ~52 KiB of guest RAM), not 4096 (the words': max-conns=, 2048
 *     by default); a TLS listener takes at most tls-max-conns of them, a
 *     metrics-only listener UK_SITES_METRICS_CONNS;
 *   - no reload (no SIGHUP: a new file is a new boot), `app;` only in an
 *     application image, no access_log file (the word access-log= logs to
 *     the console or UDP), the error log is the console; a file runs on
 *     every vCPU that has a queue pair whatever `workers` says (uk_smp.h:
 *     each its own proxies, exchanges and caches); the
 *     shutdown port's "exit" drains every listener's engine (http_app_drain)
 *     within drain-timeout=. */
#include "../archive/site_archive.h"
#include "../archive/site_bundle.h"
#include "../conf/sites_conf.h"
#include "../conf/sites_flags.h"
#include "../http/cache.h"
#include "../http/files_handler.h"
#include "../http/prom.h"
#include "../http/proxy.h"
#include "../plat/kvm/kvm.h"
#include "../plat/plat.h"
#include "../router/sites.h"
#include "../tls/loop_tls.h"
#include "../tls/tls_bearssl.h"
#include "../tls/tls_wolfssl.h"
#include "uk_sites.h"

#define UK_SITES_CONNS 256u            /* per listener, unless the file says max_conns */
/* The metrics page: vCPU 0's counters and each other vCPU's (cpuK.*;
 * 118 KB for two vCPUs with HTTPS, measured). */
#define UK_SITES_METRICS_MAX (128u << 10)
#define UK_SITES_METRICS_PER_VCPU (64u << 10)
/* A listener that serves the metrics page only (metrics=PORT): a scraper
 * or two, not max_conns connections of ~52 KiB each. */
#define UK_SITES_METRICS_CONNS 4u
/* The model's names for the boot words' files (sites_guest_src): keys
 * into S.words, printed in messages. */
#define UK_WORDS_ROOT "(the site archive)"
#define UK_WORDS_CERT "(tls-cert)"
#define UK_WORDS_KEY "(tls-key)"

struct uk_lst {
	struct sites_listener sl;
	struct http_app_route route;
	struct http_app_def def;
	struct http_app app;
	struct tls_ctx *tls; /* NULL: plain */
	struct loop *tls_loop;
	/* A TLS listener's certificates: [0] the first site's (the default),
	 * then each other file pair its sites name, once; index = BearSSL's. */
	const struct sconf_site *cert_site[1 + TLS_SNI_MAX];
	unsigned ncerts;
	uint32_t conns;
	bool started; /* listening: http_app_stop to do */
	bool inited;  /* its counters are worth reading, stopped or not */
};

struct uk_proxy {
	const struct sconf_route *rt;
	struct proxy px;
	struct http_cache cache;
};

/* One runtime of the sites: its engines, router, handlers and proxies.
 * Worker 0's (W0) runs every listener; a worker on another vCPU
 * (uk_sites_worker) every listener too (lmask). */
struct uk_sites {
	struct sites sites;
	struct sites_gen gen;
	struct sites_handler (*h)[SCONF_MAX_ROUTES];
	struct uk_lst lst[SCONF_MAX_LISTEN];
	uint32_t lmask; /* bit li: this instance runs listener li */
	struct uk_proxy *px[SCONF_MAX_SITES * SCONF_MAX_ROUTES];
	unsigned npx;
	struct prom_page metrics; /* `metrics;` routes: every counter of the guest */
	bool app_inited;
	size_t engine_bytes; /* the listeners' connection states, for the memory line */
};

static struct uk_sites W0;

/* What every instance shares, read-only once set up: the model and where
 * its files come from. */
static struct {
	struct uk_sites_env env;
	/* Where the files come from: a bundle (`skiff vm --config`), or the
	 * boot words' module (S.words, bundle false). */
	bool bundle;
	struct sb_view bv;
	struct uk_sites_words words;
	const struct opts *o; /* the boot words (they outlive the runtime) */
	struct sconf c;
	struct sar_site *arch[SB_MAX_PARTS]; /* by part index: one per folder */
	unsigned narch;
	uint32_t max_conns; /* per listener */
} S;

bool uk_sites_is_bundle(const void *module, uint64_t len)
{
	return sb_is_bundle(module, len);
}

static bool streq(const char *a, const char *b)
{
	size_t n = sk_strlen(a);
	return n == sk_strlen(b) && sk_memcmp(a, b, n) == 0;
}

/* A site's first name for messages; "*" for the words' site, which has
 * none (every Host). */
static const char *site_name(const struct sconf_site *site)
{
	return site->nnames ? site->names[0] : "*";
}

/* "LINE:COL: " of a directive of the file; "" for the boot words' model
 * (position 0), whose messages name the word instead. */
static const char *at(struct sconf_pos pos)
{
	static char b[32];
	if (!pos.line)
		return "";
	ksnprintf(b, sizeof(b), "%u:%u: ", pos.line, pos.col);
	return b;
}

/* Which of a TLS listener's certificates is the site's (the same CERT
 * and KEY files); -1: none yet. */
static int cert_index(const struct uk_lst *l, const struct sconf_site *site)
{
	for (unsigned i = 0; i < l->ncerts; i++)
		if (streq(site->cert, l->cert_site[i]->cert) && streq(site->key, l->cert_site[i]->key))
			return (int)i;
	return -1;
}

/* ---- the metrics page ---- */

/* The page's counters: every one of the guest (prom_page's stats). */
static void metrics_stats(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v),
			  void *fctx)
{
	(void)ctx;
	S.env.all_stats(fn, fctx);
}

/* ---- setup ---- */

static const char *kind_name(enum sconf_kind k)
{
	static const char *const n[] = {"?", "files", "proxy", "redirect", "return", "metrics", "app"};
	return (unsigned)k < SK_ARRAY_LEN(n) ? n[k] : "?";
}

/* The site archive of a `files` folder, opened once whichever routes
 * name it. */
/* `app;`: the image's application, its own routes on the whole path. */
static int app_handle(struct http_app_req *r, void *ctx)
{
	return http_app_routes_run(r, ctx);
}

/* A site archive checked whole, its table from the heap; NULL with the
 * reason printed. */
static struct sar_site *open_archive(const struct sconf_route *rt, const void *data, uint64_t len)
{
	char err[200];
	struct sar_view v;
	if (sar_open(&v, data, len, err, sizeof(err)) < 0) {
		if (S.bundle)
			kprintf("skiff-uk: sites: %sfiles %s: bad site archive (%lu bytes): %s; not "
				"booting\n", at(rt->pos), rt->root, len, err);
		else
			kprintf("skiff-uk: bad site archive (%lu bytes): %s\nskiff-uk: not booting "
				"(repack it with `skiff vm --root DIR`)\n", len, err);
		return NULL;
	}
	struct sar_site *s = S.env.alloc("a site archive's table", sizeof(*s), NULL);
	size_t sz = (size_t)sar_site_mem(&v);
	sar_site_init(s, &v, S.env.alloc("a site archive's file table", sz ? sz : 1, NULL));
	S.narch++;
	if (S.bundle)
		kprintf("skiff-uk: sites: files %s: %u files, %lu KiB\n", rt->root, v.count,
			len >> 10);
	else
		kprintf("skiff-uk: site: %u files, %lu KiB archive\n", v.count, len >> 10);
	return s;
}

static struct sar_site *archive_for(const struct sconf_route *rt)
{
	if (!S.bundle) /* the words' one route: the module's archive */
		return S.arch[0] ? S.arch[0] : (S.arch[0] = open_archive(rt, S.words.site, S.words.site_len));
	size_t nl = sk_strlen(rt->root);
	for (uint32_t i = 0; i < S.bv.count; i++) {
		struct sb_part p;
		sb_part_at(&S.bv, i, &p);
		if (p.kind != SB_ARCHIVE || p.name_len != nl || sk_memcmp(p.name, rt->root, nl))
			continue;
		if (!S.arch[i])
			S.arch[i] = open_archive(rt, p.data, p.len);
		return S.arch[i];
	}
	kprintf("skiff-uk: sites: %u:%u: files %s: not in the boot module (pack it with "
		"skiff vm --config); not booting\n", rt->pos.line, rt->pos.col, rt->root);
	return NULL;
}

static struct uk_proxy *proxy_for(const struct sconf_route *rt, uint32_t *extra)
{
	struct proxy_config pc;
	sites_proxy_config(rt, &pc); /* every option of the route; the addresses below */
	for (unsigned i = 0; i < rt->nup; i++) {
		const struct sconf_upstream *u = &rt->up[i];
		if (!sk_addr_is_v4(&u->addr)) {
			kprintf("skiff-uk: sites: %sproxy %s: the guest reaches IPv4 upstreams only\n",
				at(rt->pos), u->text);
			return NULL;
		}
		uint32_t ip = sk_addr_ip4(&u->addr);
		if ((ip >> 24) == 127) {
			/* The guest has no loopback; under QEMU's user network its
			 * gateway is the host's 127.0.0.1 (and only that address). */
			if (!(S.bv.flags & SB_F_USER_NET) || ip != 0x7f000001u) {
				kprintf("skiff-uk: sites: %sproxy %s: a loopback upstream is the guest's "
					"own, which has none; give the address the guest reaches it at%s\n",
					at(rt->pos), u->text,
					S.bv.flags & SB_F_USER_NET ? " (on QEMU's user network the host's "
								      "127.0.0.1 is 127.0.0.1 or 10.0.2.2)"
								    : "");
				return NULL;
			}
			ip = S.env.gw;
		}
		pc.up_addr[i] = sk_addr_v4(ip);
		pc.up_port[i] = u->port;
	}
	pc.max_xchg = S.max_conns;
	pc.wall_offset = S.env.wall_offset;
	size_t sz = proxy_mem_size(&pc);
	struct uk_proxy *p = S.env.alloc("a proxy route", sizeof(*p), NULL);
	sk_memset(p, 0, sizeof(*p));
	p->rt = rt;
	if (!sz || proxy_init(&p->px, S.env.alloc("a proxy's exchanges", sz, "lower max_conns"), sz,
			      &pc) < 0) {
		kprintf("skiff-uk: sites: %sproxy: cannot set up %u exchanges\n", at(rt->pos),
			pc.max_xchg);
		return NULL;
	}
	if (!S.bundle) {
		/* The proxy image's words: what they set up, as `skiff proxy`
		 * says it hosted. */
		char up[PROXY_MAX_UPSTREAMS * 24 + 1];
		size_t ul = 0;
		for (unsigned i = 0; i < pc.nup && ul < sizeof(up); i++)
			ul += (size_t)ksnprintf(up + ul, sizeof(up) - ul, "%s%s", i ? "," : "",
						p->px.up[i].host);
		kprintf("skiff-uk: proxy: upstream=%s balance=%s pool=%u; %u exchanges, %lu KiB; "
			"cache %lu KiB%s\n",
			up, pc.balance == PROXY_LEAST ? "least" : "rr", pc.pool, pc.max_xchg,
			(uint64_t)sz >> 10, rt->cache_bytes >> 10,
			rt->cache_bytes ? "" : " (off: cache=SIZE)");
	}
	/* Every exchange may hold an upstream connection, each pool its idle
	 * ones. */
	*extra += pc.max_xchg + pc.nup * pc.pool;
	return p;
}

/* Words the file replaces: the file says each of these. */
static const uint8_t file_words[] = {
	OPT_PORT,   OPT_MAX_CONNS, OPT_CACHE_CONTROL, OPT_HEADER_TIMEOUT, OPT_KEEPALIVE_TIMEOUT,
	OPT_MAX_BODY, OPT_TLS_PORT, OPT_TLS_REDIRECT, OPT_TLS_ALPN, OPT_HTTP2,
};

static int setup_model(const struct opts *o, struct uk_sites_need *need);
static int build_routes(struct uk_sites *w, uint32_t *extra);

/* Does listener li serve the metrics page and nothing else? */
static bool metrics_only(const struct sconf *c, unsigned li)
{
	bool any = false;
	for (unsigned s = 0; s < c->nsites; s++) {
		if (!(c->sites[s].listen_mask & (1u << li)))
			continue;
		for (unsigned r = 0; r < c->sites[s].nroutes; r++)
			if (c->sites[s].routes[r].kind != SCONF_METRICS)
				return false;
		any = true;
	}
	return any;
}

struct uk_sites *uk_sites_setup(const void *module, uint64_t len, const struct opts *o,
				const struct uk_sites_env *env, struct uk_sites_need *need)
{
	S.env = *env;
	S.bundle = true;
	*need = (struct uk_sites_need){0};
	for (size_t i = 0; i < sizeof(file_words); i++)
		if (opt_given(o, file_words[i])) {
			kprintf("skiff-uk: %s=: with a configuration file (skiff vm --config) the file "
				"says this; not booting\n", opt_defs[file_words[i]].name);
			return NULL;
		}
	const char *why;
	if (sb_open(&S.bv, module, len, &why) < 0) {
		kprintf("skiff-uk: bad configuration bundle (%lu bytes): %s; repack it with skiff vm "
			"--config FILE\n", len, why);
		return NULL;
	}
	struct sb_part text;
	sb_part_at(&S.bv, 0, &text);
	/* The folder the packer joined relative paths with: the guest joins
	 * with the same, so each name it asks for is one the packer wrote. */
	static char dir[SB_MAX_NAME + 1];
	sk_memcpy(dir, text.name, text.name_len);
	dir[text.name_len] = 0;
	size_t asz = sites_conf_arena_bound((size_t)text.len);
	void *arena = env->alloc("the configuration's arena", asz, NULL);
	struct sconf_err e;
	if (sites_conf_parse((const char *)text.data, (size_t)text.len, dir, arena, asz, &S.c, &e) <
	    0) {
		kprintf("skiff-uk: configuration:%u:%u: %s\n", e.pos.line, e.pos.col, e.msg);
		return NULL;
	}
	S.o = o;
	if (opt_given(o, OPT_UK_METRICS)) {
		/* metrics=PORT beside the file's listeners, as the words have
		 * it: the sites array with room for its site. */
		struct sconf_site *ns = env->alloc("the configuration's sites",
						   (S.c.nsites + 1) * sizeof(*ns), NULL);
		sk_memcpy(ns, S.c.sites, S.c.nsites * sizeof(*ns));
		S.c.sites = ns;
		char err[120];
		if (sites_conf_add_metrics(&S.c, &ns[S.c.nsites], (uint16_t)opt_num(o, OPT_UK_METRICS),
					   err, sizeof(err)) < 0) {
			kprintf("skiff-uk: %s; not booting\n", err);
			return NULL;
		}
	}
	bool given_conns = S.c.max_conns != 0;
	if (!S.c.http2_sessions) /* the file's, else the word's (8 by default: guest memory) */
		S.c.http2_sessions = (uint32_t)opt_num(o, OPT_HTTP2_SESSIONS);
	sites_conf_defaults(&S.c);
	S.max_conns = given_conns ? S.c.max_conns : UK_SITES_CONNS;
	return setup_model(o, need) < 0 ? NULL : &W0;
}

struct uk_sites *uk_sites_setup_words(const struct uk_sites_words *wd, const struct opts *o,
				      const struct uk_sites_env *env, struct uk_sites_need *need)
{
	S.env = *env;
	S.bundle = false;
	S.words = *wd;
	S.o = o;
	*need = (struct uk_sites_need){0};
	/* An application image's site is route / { app; }, the proxy image's
	 * route / { proxy upstream=...; }: either answers every path, so a
	 * site archive in the module is not served (a configuration serves
	 * both). */
	bool app = env->app != NULL, proxy = env->proxy;
	if (proxy && !opt_given(o, OPT_UPSTREAM)) {
		/* As `skiff proxy` without --upstream (a usage error there). */
		kprintf("skiff-uk: upstream=ADDR:PORT[,ADDR:PORT...] is required\n");
		return NULL;
	}
	if ((app || proxy) && wd->site)
		kprintf("skiff-uk: the %s answers every path: the site archive in the boot module "
			"is not served (a configuration's files and %s routes serve both: skiff vm "
			"--config)\n", proxy ? "proxy" : "application", proxy ? "proxy" : "app;");
	struct sites_guest_src g = {
		.root = wd->site && !app && !proxy ? UK_WORDS_ROOT : NULL,
		.cert = wd->cert ? UK_WORDS_CERT : NULL,
		.key = wd->cert ? UK_WORDS_KEY : NULL,
		.metrics = wd->metrics_port,
		.app = app,
	};
	size_t asz = sites_flags_arena_bound();
	char err[200];
	if (sites_conf_from_guest(o, &g, env->alloc("the words' configuration", asz, NULL), asz,
				  &S.c, err, sizeof(err)) < 0) {
		kprintf("skiff-uk: %s; not booting\n", err);
		return NULL;
	}
	/* max-conns=, whose default is the guest's; an application's or a
	 * proxy's connections hold ~52 KiB each (and a proxy's exchanges
	 * more), so their images keep 256 unless told. */
	S.max_conns = (app || proxy) && !opt_given(o, OPT_MAX_CONNS) ? UK_SITES_CONNS
								     : S.c.max_conns;
	if (app)
		kprintf("skiff-uk: application %s, %u connections\n",
			env->app->name ? env->app->name : "?", S.max_conns);
	return setup_model(o, need) < 0 ? NULL : &W0;
}

/* What both sources share: the model checked against what the guest can
 * do, each route's handler, what TCP and the loop must hold. */
static int setup_model(const struct opts *o, struct uk_sites_need *need)
{
	struct sconf *c = &S.c;
	c->max_conns = S.max_conns;
	if (c->access_log) {
		kprintf("skiff-uk: configuration:%u:%u: access_log %s: the guest has no files; use "
			"access_log off and the word access-log=console|udp:ADDR:PORT\n",
			c->access_log_pos.line, c->access_log_pos.col, c->access_log);
		return -1;
	}
	if (c->error_log)
		kprintf("skiff-uk: configuration:%u:%u: error_log %s: the guest's error log is its "
			"console\n", c->error_log_pos.line, c->error_log_pos.col, c->error_log);
	if (c->workers == SCONF_WORKERS_AUTO || c->workers > 1)
		kprintf("skiff-uk: configuration: workers: not used in the guest, which serves the "
			"sites on each vCPU that has a queue pair (skiff vm --smp N on a multi-queue "
			"TAP)\n");
	for (unsigned i = 0; i < c->nlisten; i++)
		for (unsigned j = 0; j < i; j++)
			if (c->listen[j].port == c->listen[i].port) {
				if (S.bundle && c->listen[i].pos.line)
					kprintf("skiff-uk: configuration:%u:%u: listen: port %u is "
						"another listener's too: the guest has one address; not "
						"booting\n", c->listen[i].pos.line, c->listen[i].pos.col,
						c->listen[i].port);
				else
					kprintf("skiff-uk: port %u is given twice (port=, tls-port=, "
						"metrics=): give each its own; not booting\n",
						c->listen[i].port);
				return -1;
			}
	/* A TLS listener: the certificates by SNI, as sites_host.c's tls_for. */
	uint32_t tls_max = (uint32_t)opt_num(o, OPT_TLS_MAX_CONNS);
	for (unsigned li = 0; li < c->nlisten; li++) {
		struct uk_lst *l = &W0.lst[li];
		l->conns = S.max_conns;
		if (metrics_only(c, li) && l->conns > UK_SITES_METRICS_CONNS)
			l->conns = UK_SITES_METRICS_CONNS;
		if (!c->listen[li].tls) {
			need->conns += l->conns;
			continue;
		}
		if (l->conns > tls_max)
			l->conns = tls_max;
		need->conns += l->conns;
		need->tls_conns += l->conns;
		need->ntls++;
		unsigned nnames = 0;
		for (unsigned s = 0; s < c->nsites; s++) {
			const struct sconf_site *site = &c->sites[s];
			if (!(site->listen_mask & (1u << li)))
				continue;
			if (l->ncerts == 0) {
				l->cert_site[l->ncerts++] = site;
				continue;
			}
			if (nnames + site->nnames > TLS_SNI_MAX) {
				kprintf("skiff-uk: configuration:%u:%u: site '%s': more than %u certificate "
					"names on the tls listener of port %u (the sites after the first "
					"are chosen by SNI, %u names at most); not booting\n",
					site->pos.line, site->pos.col, site_name(site), TLS_SNI_MAX,
					c->listen[li].port, TLS_SNI_MAX);
				return -1;
			}
			nnames += site->nnames;
			if (cert_index(l, site) < 0)
				l->cert_site[l->ncerts++] = site; /* <= 1 + TLS_SNI_MAX: a site has a name */
		}
	}
	W0.lmask = (1u << c->nlisten) - 1; /* SCONF_MAX_LISTEN <= 16 */
	if (build_routes(&W0, &need->extra_socks) < 0)
		return -1;
	if (!S.bundle)
		return 0; /* the words say it all; the ready line names the ports */
	for (unsigned li = 0; li < c->nlisten; li++) {
		unsigned n = 0;
		for (unsigned s = 0; s < c->nsites; s++)
			n += (c->sites[s].listen_mask >> li) & 1;
		kprintf("skiff-uk: sites: port %u%s: %u sites, %u connections\n", c->listen[li].port,
			c->listen[li].tls ? " (tls)" : "", n, W0.lst[li].conns);
	}
	for (unsigned s = 0; s < c->nsites; s++)
		for (unsigned r = 0; r < c->sites[s].nroutes; r++) {
			const struct sconf_route *rt = &c->sites[s].routes[r];
			kprintf("skiff-uk: sites: %s %s%s -> %s\n", site_name(&c->sites[s]),
				rt->exact ? "= " : "", rt->path, kind_name(rt->kind));
		}
	return 0;
}

/* An instance's handler table, as sites_host.c's gen_build: the files
 * routes over the shared archives, a proxy of its own per proxy route
 * (*extra: its upstream sockets), the metrics page's buffer. */
static int build_routes(struct uk_sites *w, uint32_t *extra)
{
	const struct uk_sites_env *env = &S.env;
	const struct sconf *c = &S.c;
	w->h = env->alloc("the routes' handlers", (c->nsites ? c->nsites : 1) * sizeof(*w->h), NULL);
	sk_memset(w->h, 0, (c->nsites ? c->nsites : 1) * sizeof(*w->h));
	bool metrics = false;
	for (unsigned s = 0; s < c->nsites; s++) {
		const struct sconf_site *site = &c->sites[s];
		for (unsigned r = 0; r < site->nroutes; r++) {
			const struct sconf_route *rt = &site->routes[r];
			struct sites_handler *h = &w->h[s][r];
			if (rt->kind == SCONF_FILES) {
				struct sar_site *a = archive_for(rt);
				if (!a)
					return -1;
				struct http_files *hf = env->alloc("a files route", sizeof(*hf), NULL);
				*hf = (struct http_files){.lookup = sar_site_lookup, .lookup_ctx = a,
							  .cache_control = rt->cache_control};
				*h = (struct sites_handler){http_files_handle, hf};
			} else if (rt->kind == SCONF_PROXY) {
				struct uk_proxy *p = proxy_for(rt, extra);
				if (!p)
					return -1;
				w->px[w->npx++] = p;
				struct http_app_def pdef;
				struct http_app_route proute;
				proxy_app_def(&p->px, &pdef, &proute);
				*h = (struct sites_handler){proute.fn, proute.ctx};
			} else if (rt->kind == SCONF_METRICS) {
				*h = (struct sites_handler){prom_page_handle, &w->metrics};
				metrics = true;
			} else if (rt->kind == SCONF_APP) {
				if (!S.env.app) {
					kprintf("skiff-uk: configuration:%u:%u: app: no application is "
						"linked into this image (skiff vm --image NAME-uk.elf "
						"--config FILE); not booting\n", rt->pos.line, rt->pos.col);
					return -1;
				}
				*h = (struct sites_handler){app_handle, (void *)S.env.app};
			}
			/* redirect and return: the router's own (fn NULL) */
		}
	}
	if (metrics) {
		size_t cap = UK_SITES_METRICS_MAX +
			     (size_t)(env->vcpus > 1 ? env->vcpus - 1 : 0) * UK_SITES_METRICS_PER_VCPU;
		w->metrics = (struct prom_page){
			.buf = env->alloc("the metrics page", cap, NULL), .cap = cap,
			.stats = metrics_stats};
	}
	w->gen = (struct sites_gen){.conf = c, .h = w->h, .host = NULL};
	sites_swap(&w->sites, &w->gen);
	return 0;
}

struct uk_sites *uk_sites_worker(struct uk_sites_need *need)
{
	const struct sconf *c = &S.c;
	struct uk_sites *w = S.env.alloc("a worker's sites", sizeof(*w), NULL);
	sk_memset(w, 0, sizeof(*w));
	*need = (struct uk_sites_need){0};
	for (unsigned li = 0; li < c->nlisten; li++) {
		w->lmask |= 1u << li;
		w->lst[li].conns = W0.lst[li].conns;
		need->conns += w->lst[li].conns;
		if (c->listen[li].tls) {
			/* its own engine (tls_listener): the certificates as W0's */
			w->lst[li].ncerts = W0.lst[li].ncerts;
			sk_memcpy(w->lst[li].cert_site, W0.lst[li].cert_site,
				  sizeof(w->lst[li].cert_site));
			need->tls_conns += w->lst[li].conns;
			need->ntls++;
		}
	}
	return build_routes(w, &need->extra_socks) < 0 ? NULL : w;
}

#ifndef UK_TLS_WOLFSSL
static int tls_random(void *buf, size_t len)
{
	return plat_random(buf, len);
}

/* BearSSL's session cache, worker 0's, shared by every vCPU's listener
 * (tls_bearssl_share_cache): a session made on one vCPU resumes on the
 * one the host steers the client's next connection to.  Taken once per
 * handshake, for a copy of ~100 bytes. */
static volatile int sess_lock_word;

static void sess_lock(void)
{
	while (__atomic_exchange_n(&sess_lock_word, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void sess_unlock(void)
{
	__atomic_store_n(&sess_lock_word, 0, __ATOMIC_RELEASE);
}
#endif

/* The bundle's PEM parts of a site's `tls CERT KEY`. */
static bool site_pem(const struct sconf_site *site, struct sb_part *cp, struct sb_part *kp)
{
	if (!S.bundle) { /* the words' one certificate */
		*cp = (struct sb_part){.data = S.words.cert, .len = S.words.cert_len};
		*kp = (struct sb_part){.data = S.words.key, .len = S.words.key_len};
		return true;
	}
	if (sb_find(&S.bv, SB_PEM, site->cert, cp) && sb_find(&S.bv, SB_PEM, site->key, kp))
		return true;
	kprintf("skiff-uk: sites: site %s: tls %s %s: not in the boot module\n", site_name(site),
		site->cert, site->key);
	return false;
}

#ifdef UK_TLS_WOLFSSL
/* The TLS 1.3 image (mk/unikernel.mk, uk-tls13): wolfSSL instead of
 * BearSSL.  wolfSSL allocates from musl's heap, which the platform locks
 * for every vCPU (plat/kvm/musl/heap_lock.c). */

/* wolfSSL's context: the default certificate, then each other site's
 * names with their site's certificate (a WOLFSSL_CTX per name). */
static int wolf_listener(struct uk_sites *w, struct uk_lst *l, unsigned li)
{
	static bool inited;
	char err[200];
	if (w != &W0) {
		/* Another vCPU's: W0's WOLFSSL_CTXs (certificates and keys parsed
		 * once, the ticket key one for all), its own pool and counters. */
		l->tls = tls_wolfssl_server_share(W0.lst[li].tls, err, sizeof(err));
		if (!l->tls)
			kprintf("skiff-uk: sites: port %u: %s\n", S.c.listen[li].port, err);
		return l->tls ? 0 : -1;
	}
	if (!inited && tls_wolfssl_init() < 0) {
		kprintf("skiff-uk: sites: wolfSSL did not start\n");
		return -1;
	}
	inited = true;
	const struct sconf_site *site = l->cert_site[0];
	struct sb_part cp, kp;
	if (!site_pem(site, &cp, &kp))
		return -1;
	l->tls = tls_wolfssl_server_pem(cp.data, (size_t)cp.len, kp.data, (size_t)kp.len, err,
					sizeof(err));
	if (!l->tls) {
		kprintf("skiff-uk: sites: site %s: tls %s: %s\n", site_name(site), site->cert, err);
		return -1;
	}
	tls_wolfssl_alpn_h2(l->tls, sconf_alpn_h2(&S.c.listen[li]));
	const struct sconf *c = &S.c;
	for (unsigned s = 0; s < c->nsites; s++) {
		site = &c->sites[s];
		if (!(site->listen_mask & (1u << li)) || site == l->cert_site[0])
			continue;
		int ci = cert_index(l, site);
		if (ci < 0 || !site_pem(l->cert_site[ci], &cp, &kp)) {
			kprintf("skiff-uk: sites: site %s: no certificate\n", site_name(site));
			return -1;
		}
		for (unsigned k = 0; k < site->nnames; k++)
			if (tls_wolfssl_add_name(l->tls, site->names[k], sk_strlen(site->names[k]), cp.data,
						 (size_t)cp.len, kp.data, (size_t)kp.len, err,
						 sizeof(err)) < 0) {
				kprintf("skiff-uk: sites: %u:%u: site %s: %s\n", site->pos.line,
					site->pos.col, site->names[k], err);
				return -1;
			}
	}
	return 0;
}
#define TLS_ENGINE_OPS tls_wolfssl_ops
#define TLS_ENGINE_NAME "wolfSSL, TLS 1.3 and 1.2"
#else
#define TLS_ENGINE_OPS tls_bearssl_ops
#define TLS_ENGINE_NAME "BearSSL, TLS 1.2"
#endif

/* BearSSL over the listener's pool (or wolfSSL over musl's heap), the
 * TLS loop over the loop. */
static int tls_listener(struct uk_sites *w, struct uk_lst *l, unsigned li, struct loop *loop,
			size_t max_sockets, const struct opts *o)
{
#ifdef UK_TLS_WOLFSSL
	if (wolf_listener(w, l, li) < 0)
		return -1;
#else
	/* Every vCPU's listener decodes the PEM into its own block (BearSSL
	 * keeps the decoded chain and key in the context it serves from, and
	 * a context is one vCPU's): 18.7 KB per certificate per vCPU.  The
	 * session cache is worker 0's (an unused one entry of its own). */
	const struct sconf_site *site = l->cert_site[0];
	struct sb_part cp, kp;
	if (!site_pem(site, &cp, &kp))
		return -1;
	struct tls_bearssl_config bc = {.max_conns = l->conns, .certs = l->ncerts,
					.sessions = w != &W0 ? 1 : 0, .random = tls_random,
					.alpn_h2 = sconf_alpn_h2(&S.c.listen[li])};
	size_t tsz = tls_bearssl_mem_size(&bc);
	char err[200];
	l->tls = tls_bearssl_server(S.env.alloc("a TLS listener's connections", tsz,
						S.bundle ? "lower max_conns or tls-max-conns="
							 : "lower tls-max-conns="),
				    tsz, &bc, cp.data, (size_t)cp.len, kp.data, (size_t)kp.len, err,
				    sizeof(err));
	if (!l->tls) {
		kprintf("skiff-uk: sites: site %s: tls %s: %s\n", site_name(site), site->cert, err);
		return -1;
	}
	/* The other certificates (in cert_site order, so BearSSL's index is
	 * ours), then every site's names but the default one's. */
	for (unsigned i = 1; i < l->ncerts; i++) {
		site = l->cert_site[i];
		if (!site_pem(site, &cp, &kp))
			return -1;
		if (tls_bearssl_add_cert(l->tls, cp.data, (size_t)cp.len, kp.data, (size_t)kp.len, err,
					 sizeof(err)) != (int)i) {
			kprintf("skiff-uk: sites: site %s: tls %s: %s\n", site_name(site), site->cert,
				err);
			return -1;
		}
	}
	const struct sconf *c = &S.c;
	for (unsigned s = 0; s < c->nsites; s++) {
		site = &c->sites[s];
		if (!(site->listen_mask & (1u << li)) || site == l->cert_site[0])
			continue;
		int ci = cert_index(l, site);
		for (unsigned k = 0; k < site->nnames; k++)
			if (ci < 0 || tls_bearssl_add_name(l->tls, site->names[k], sk_strlen(site->names[k]),
							   (unsigned)ci, err, sizeof(err)) < 0) {
				kprintf("skiff-uk: sites: %u:%u: site %s: %s\n", site->pos.line,
					site->pos.col, site->names[k], ci < 0 ? "no certificate" : err);
				return -1;
			}
	}
	if (w != &W0)
		tls_bearssl_share_cache(l->tls, W0.lst[li].tls, sess_lock, sess_unlock);
#endif
	struct loop_tls_config lc = {
		.engine = &TLS_ENGINE_OPS,
		.ctx = l->tls,
		.handshake_timeout_ns = opt_num(o, OPT_TLS_HANDSHAKE_TIMEOUT) * SK_NS_PER_S,
	};
	size_t lsz = loop_tls_mem_size(max_sockets, l->conns);
	l->tls_loop = loop_tls_init(S.env.alloc("a TLS layer", lsz, NULL), lsz, loop, &lc,
				    max_sockets, l->conns);
	if (!l->tls_loop) {
		kprintf("skiff-uk: sites: port %u: the TLS layer failed\n", S.c.listen[li].port);
		return -1;
	}
	return 0;
}

int uk_sites_start(struct uk_sites *w, struct loop *loop, size_t max_sockets, const struct opts *o,
		   http_access_fn access, void *access_ctx, void *error_ctx)
{
	const struct sconf *c = &S.c;
	for (unsigned i = 0; i < w->npx; i++)
		w->px[i]->px.loop = loop; /* proxy_attach's one effect: upstreams on the plain loop */
	for (unsigned li = 0; li < c->nlisten; li++) {
		const struct sconf_listen *ls = &c->listen[li];
		struct uk_lst *l = &w->lst[li];
		if (!(w->lmask & (1u << li)))
			continue;
		l->sl = (struct sites_listener){&w->sites, li};
		sites_route(&l->sl, &l->route);
		l->def = (struct http_app_def){.routes = &l->route, .nroutes = 1, .name = "sites"};
		struct http_app_config cfg;
		http_app_config_default(&cfg);
		/* cfg.addr stays ::, the guest's addresses: the file's picks
		 * the host side of the forward only. */
		cfg.port = ls->port;
		cfg.max_conns = l->conns;
		cfg.max_body = c->max_body;
		cfg.header_timeout = c->header_timeout;
		cfg.body_timeout = c->body_timeout;
		cfg.send_timeout = c->send_timeout;
		cfg.keepalive_timeout = c->keepalive_timeout;
		cfg.scheme = ls->tls ? "https" : "http";
		if (ls->h2_off)
			cfg.h2_sessions = 0;
		else /* the model's, within the listener's connections (each takes one) */
			cfg.h2_sessions = c->http2_sessions < l->conns ? c->http2_sessions : l->conns;
		cfg.access = access;
		cfg.access_ctx = access_ctx;
		cfg.error_log = S.env.error_log;
		cfg.error_ctx = error_ctx;
		if (w->npx)
			proxy_app_config(NULL, &cfg);
		http_app_config_fit(&cfg, S.env.app); /* the application's header area */
		http_app_config_hdr(&cfg, sites_conf_header_area(c, li)); /* the file's */
		if (ls->tls && tls_listener(w, l, li, loop, max_sockets, o) < 0)
			return -1;
		size_t sz = http_app_mem_size(&cfg);
		int rc = -SK_EINVAL;
		w->engine_bytes += sz;
		if (sz)
			rc = http_app_init(&l->app, S.env.alloc("a listener's connections", sz,
								S.bundle ? "lower max_conns"
									 : "lower max-conns="),
					   sz, &cfg, &l->def, l->tls_loop ? l->tls_loop : loop);
		if (rc == 0)
			rc = http_app_start(&l->app);
		if (rc < 0) {
			kprintf("skiff-uk: sites: %u:%u: cannot listen on port %u (%d)\n", ls->pos.line,
				ls->pos.col, ls->port, rc);
			return -1;
		}
		l->started = l->inited = true;
		/* The application's init once, with the first engine (what it
		 * wants is the loop), before any connection is accepted. */
		bool first = !w->app_inited;
		w->app_inited = true;
		if (first && S.env.app && S.env.app->init &&
		    S.env.app->init(&l->app, S.env.app->init_ctx) < 0) {
			kprintf("skiff-uk: sites: the application '%s' refused to start\n",
				S.env.app->name ? S.env.app->name : "app");
			return -1;
		}
		if (w != &W0) {
			/* the boot vCPU's lines said it */
		} else if (ls->tls && !S.bundle) {
#ifdef UK_TLS_WOLFSSL
			kprintf("skiff-uk: https=%u (wolfSSL, TLS 1.3 and 1.2; %u connections, TLS "
				"state from the heap, %lu KiB of HTTP state; resumption by tickets)\n",
				ls->port, l->conns, (uint64_t)(sz / l->conns) >> 10);
#else
			kprintf("skiff-uk: https=%u (BearSSL, TLS 1.2; %u connections, each %lu B of "
				"TLS state and record buffer, %lu KiB of HTTP state; resumption by "
				"session ID)\n", ls->port, l->conns, (uint64_t)tls_bearssl_conn_bytes(),
				(uint64_t)(sz / l->conns) >> 10);
#endif
		} else if (ls->tls) {
			kprintf("skiff-uk: sites: port %u: https (" TLS_ENGINE_NAME ") with %s", ls->port,
				l->cert_site[0]->cert);
			for (unsigned i = 1; i < l->ncerts; i++)
				kprintf(", %s for %s by SNI", l->cert_site[i]->cert,
					site_name(l->cert_site[i]));
			kprintf("\n");
		}
	}
	return 0;
}

int uk_sites_late(struct uk_sites *w)
{
	for (unsigned i = 0; i < w->npx; i++) {
		struct uk_proxy *p = w->px[i];
		uint64_t csz = p->rt->cache_bytes;
		if (!csz)
			continue;
		struct http_cache_config cc;
		http_cache_config_default(&cc);
		/* The cache takes its memory last: with everything else sized,
		 * a size the guest cannot hold is the one thing to lower. */
		char what[64];
		if (S.bundle)
			ksnprintf(what, sizeof(what), "a proxy route's cache");
		else
			ksnprintf(what, sizeof(what), "the cache (cache=%s)", opt_str(S.o, OPT_CACHE));
		void *cm = S.env.alloc(what, (size_t)csz,
				       S.bundle ? "lower the route's cache SIZE" : "lower cache=");
		if (http_cache_init(&p->cache, cm, (size_t)csz, &cc) < 0) {
			kprintf("skiff-uk: sites: %scannot set up a cache of %lu bytes\n",
				at(p->rt->pos), csz);
			return -1;
		}
		p->px.cache = &p->cache;
	}
	return 0;
}

size_t uk_sites_engine_bytes(const struct uk_sites *w)
{
	return w->engine_bytes;
}

void uk_sites_set_date(struct uk_sites *w, const char *date29)
{
	for (unsigned i = 0; i < S.c.nlisten; i++)
		if (w->lst[i].started)
			http_app_set_date(&w->lst[i].app, date29);
}

void uk_sites_describe(char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (unsigned i = 0; i < S.c.nlisten && n < cap; i++)
		n += (size_t)ksnprintf(out + n, cap - n, "%s%u%s", i ? "," : "", S.c.listen[i].port,
				       S.c.listen[i].tls ? "/tls" : "");
}

/* With more than one TLS listener, each one's counters under its port
 * (tls.8443.conns_in_use), so no name appears twice on the page. */
struct tls_fwd {
	void (*fn)(void *ctx, const char *name, uint64_t v);
	void *ctx;
	unsigned port;
};

static void tls_name(void *ctx, const char *name, uint64_t v)
{
	const struct tls_fwd *f = ctx;
	char n[96];
	ksnprintf(n, sizeof(n), "tls.%u.%s", f->port,
		  sk_memcmp(name, "tls.", 4) == 0 ? name + 4 : name);
	f->fn(f->ctx, n, v);
}

void uk_sites_stats(const struct uk_sites *w,
		    void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	/* The engines' counters summed over the plain listeners (http.*) and
	 * the TLS ones (https.*), as sites_host.c names them. */
	struct http_app_stats sum[2] = {0};
	uint64_t open[2] = {0};
	unsigned ntls = 0;
	for (unsigned i = 0; i < S.c.nlisten; i++) {
		if (!w->lst[i].inited)
			continue;
		bool t = w->lst[i].tls != NULL;
		ntls += t;
		http_app_stats_add(&sum[t], &open[t], &w->lst[i].app);
	}
	http_app_stats_emit(&sum[0], open[0], "http", fn, ctx);
	if (ntls)
		http_app_stats_emit(&sum[1], open[1], "https", fn, ctx);
	sites_stats(&w->sites, fn, ctx);
	for (unsigned i = 0; i < w->npx; i++) {
		proxy_stats(&w->px[i]->px, fn, ctx);
		if (w->px[i]->px.cache)
			http_cache_stats(w->px[i]->px.cache, fn, ctx);
	}
	for (unsigned i = 0; i < S.c.nlisten; i++) {
		const struct uk_lst *l = &w->lst[i];
		if (!l->tls)
			continue;
		struct tls_fwd f = {fn, ctx, S.c.listen[i].port};
		/* the TLS loop's (tls.handshakes, tls.resumed, ...), then BearSSL's */
		if (l->tls_loop)
			loop_stats(l->tls_loop, ntls > 1 ? tls_name : fn, ntls > 1 ? (void *)&f : ctx);
#ifdef UK_TLS_WOLFSSL
		tls_wolfssl_stats(l->tls, ntls > 1 ? tls_name : fn, ntls > 1 ? (void *)&f : ctx);
#else
		tls_bearssl_stats(l->tls, ntls > 1 ? tls_name : fn, ntls > 1 ? (void *)&f : ctx);
#endif
	}
}

unsigned uk_sites_nengines(const struct uk_sites *w)
{
	unsigned n = 0;
	for (unsigned i = 0; i < S.c.nlisten; i++)
		n += w->lst[i].started;
	return n;
}

unsigned uk_sites_nconns(const struct uk_sites *w)
{
	unsigned n = 0;
	for (unsigned i = 0; i < S.c.nlisten; i++)
		if (w->lst[i].started)
			n += w->lst[i].app.nconns;
	return n;
}

void uk_sites_drain(struct uk_sites *w, sk_time_ns now, void (*done)(void *ctx), void *ctx)
{
	for (unsigned i = 0; i < S.c.nlisten; i++)
		if (w->lst[i].started)
			http_app_drain(&w->lst[i].app, now, done, ctx);
}

void uk_sites_stop(struct uk_sites *w)
{
	for (unsigned i = 0; i < S.c.nlisten; i++)
		if (w->lst[i].started) {
			http_app_stop(&w->lst[i].app);
			w->lst[i].started = false;
		}
	for (unsigned i = 0; i < w->npx; i++)
		proxy_stop(&w->px[i]->px);
}
