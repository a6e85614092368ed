/* sites_host.c — the one hosted runtime (sites_host.h): the sites of a
 * configuration file (`skiff serve --config FILE`), or the one site a
 * command line describes (conf/sites_flags.h: `skiff serve`'s flags,
 * `skiff proxy`'s, an application binary's), on the one HTTP engine.
 *
 * A worker (host/workers.h; `workers N;`) is one loop, on the kernel's
 * sockets or on skiff's stack as the command line says (the machine's
 * options stay flags: --stack, --dev, --ip ...; the sites are the file's),
 * and on it one engine (http/app.c) per listener of the file: a plain one
 * on the loop, or one on a TLS loop (tls/loop_tls.h) over it whose
 * certificates are the sites' (the first site's on that listener by
 * default, every other site's by SNI).  Each engine's one route is the
 * router (http/sites.h), which picks the site and the route and runs the
 * route's handler.
 *
 * What the handlers use is one generation (struct gen): the parsed file
 * and its arena, the handler table, and what this file built for it: a
 * file cache (host/serve_files.h) per distinct `files` folder, a proxy
 * (http/proxy.h, with its cache) per `proxy` route.  SIGHUP parses the
 * file again and builds a new generation, reusing the file caches of the
 * folders it still names (each read again from disk, as `serve --root`'s
 * SIGHUP does) and the proxies whose upstreams and cache are unchanged;
 * the certificates are read again from their files.  A file that does not
 * parse or check, or that changes the listeners, is refused whole: the old
 * generation keeps serving and the error log says why.  A generation
 * replaced is retired, and freed once no request dispatched before the
 * swap is left in any engine (http_app_live_old: keep-alive connections
 * may stay open, so steady load does not keep it) and TCP holds none of
 * its files' bytes, or at exit.
 *
 * The access log (`access_log`; host/access_log.h) is each worker's own
 * descriptor on the file, O_APPEND; the engines' hook reaches it through
 * the worker, so SIGHUP can open it again (a rotated file, a new path)
 * under connections already open.
 *
 * Stopping: SIGINT stops at once.  SIGTERM
 * drains: the first loop_run ends, then each worker runs http_app_drain
 * on every listener's engine and a second loop_run until the last
 * connection's end, or --drain-timeout, or a SIGINT.  On skiff's stack
 * the drain then waits until TCP has delivered what the closed
 * connections still held (serve_skiff_unfinished).
 *
 * `app;` runs the application an application binary was linked with
 * (app_cli.c hands its skiff_app here; without --config the flags' site
 * is `route / { app; }`): its route table on the whole path
 * (http_app_routes_run); `skiff serve` has none and refuses the file.
 *
 * --trace: each worker's struct sk_trace is given to its engines
 * (http_app_config.trace) and, on skiff's stack, to its runner and TCP;
 * the workers' histograms are merged and printed at exit, and served on
 * /metrics, as serve's (host/trace_print.h). */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../conf/sites_conf.h"
#include "../conf/sites_flags.h"
#include "../elog/elog.h"
#include "../http/cache.h"
#include "../http/date.h"
#include "../http/files_handler.h"
#include "../http/prom.h"
#include "../http/proxy.h"
#include "../router/sites.h"
#include "../loop_host/loop_linux.h"
#include "../plat/plat.h"
#include "../tls/loop_tls.h"
#include "../tls/tls_engine.h"
#include "../tls/tls_host.h"
#include "cli.h"
#include "hoststack.h"
#include "access_log.h"
#include "admin_host.h"
#include "serve_files.h"
#include "serve_skiff.h"
#include "sites_host.h"
#include "stat_sum.h"
#include "tls_flags.h"
#include "trace_print.h"
#include "workers.h"

#define CONF_FILE_MAX (1u << 20) /* a configuration file larger than 1 MiB is refused */
#define METRICS_MAX (512u << 10) /* the metrics page's buffer */

static const char *who = "skiff serve";
/* The application `app;` routes run: an application binary's skiff_app
 * (app_cli.c), NULL in skiff serve and skiff proxy. */
static const struct http_app_def *app_def;

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

/* ---- reading and checking the file ---- */

/* The parsed file: its arena (malloc'd) and the model in it. */
struct parsed {
	void *arena;
	struct sconf conf;
};

/* Where a directive was, as an error's prefix: "FILE:LINE:COL: " (path
 * given: a message that leaves this file whole), "LINE:COL: " (path NULL:
 * one the caller prints after the file's name), or "" for the flags'
 * model (position 0), whose own names say it ("--root"). */
static const char *at(char *buf, size_t n, const char *path, struct sconf_pos pos)
{
	if (!pos.line)
		return "";
	if (path)
		snprintf(buf, n, "%s:%u:%u: ", path, pos.line, pos.col);
	else
		snprintf(buf, n, "%u:%u: ", pos.line, pos.col);
	return buf;
}

static const char *lc(char b[32], struct sconf_pos pos)
{
	return at(b, 32, NULL, pos);
}

/* What a parse cannot check: folders that exist; and what this runtime
 * does not run yet.  0, or -1 with the reason. */
static int check_model(const char *path, const struct sconf *c, char *err, size_t errlen)
{
	char w[SCONF_PATH_MAX + 32];
	for (unsigned s = 0; s < c->nsites; s++) {
		const struct sconf_site *site = &c->sites[s];
		for (unsigned r = 0; r < site->nroutes; r++) {
			const struct sconf_route *rt = &site->routes[r];
			struct stat st;
			if (rt->kind == SCONF_FILES && (stat(rt->root, &st) < 0 || !S_ISDIR(st.st_mode))) {
				snprintf(err, errlen, "%.200s%s %.200s: %s", at(w, sizeof(w), path, rt->pos),
					 path ? "files" : "--root", rt->root,
					 stat(rt->root, &st) < 0 ? strerror(errno) : "not a folder");
				return -1;
			}
			if (rt->kind == SCONF_APP && !app_def) {
				snprintf(err, errlen, "%.200sapp: no application is linked into skiff serve "
					 "(app; is for an application binary: APP --config FILE, "
					 "docs/app.md)", at(w, sizeof(w), path, rt->pos));
				return -1;
			}
		}
	}
	return 0;
}

/* Read and parse path; the hosted checks a parse cannot make (folders
 * that exist, certificates that load) follow.  0, or -1 with
 * "FILE:LINE:COL: message" (or "FILE: message") in err. */
static int load_file(const char *path, struct parsed *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *text = malloc(CONF_FILE_MAX + 1);
	size_t n = text ? fread(text, 1, CONF_FILE_MAX + 1, f) : 0;
	bool bad_read = ferror(f);
	fclose(f);
	if (!text || bad_read || n > CONF_FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path,
			 !text ? "out of memory" : bad_read ? "cannot read" : "larger than 1 MiB");
		free(text);
		return -1;
	}
	/* Relative paths in the file are relative to its folder. */
	char dir[SCONF_PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	size_t asz = sites_conf_arena_bound(n);
	p->arena = malloc(asz);
	struct sconf_err e;
	if (!p->arena || sites_conf_parse(text, n, dir, p->arena, asz, &p->conf, &e) < 0) {
		if (!p->arena)
			snprintf(err, errlen, "%s: out of memory", path);
		else
			snprintf(err, errlen, "%s:%u:%u: %s", path, e.pos.line, e.pos.col, e.msg);
		free(text);
		free(p->arena);
		p->arena = NULL;
		return -1;
	}
	free(text);
	sites_conf_defaults(&p->conf);
	if (check_model(path, &p->conf, err, errlen) < 0) {
		free(p->arena);
		p->arena = NULL;
		return -1;
	}
	return 0;
}

/* The flags' one site (conf/sites_flags.h).  0, or -1 with the reason. */
static int load_flags(const struct opts *o, bool on_skiff, struct parsed *p, char *err,
		      size_t errlen)
{
	memset(p, 0, sizeof(*p));
	size_t asz = sites_flags_arena_bound();
	p->arena = malloc(asz);
	if (!p->arena || sites_conf_from_flags(o, on_skiff, app_def != NULL, p->arena, asz, &p->conf, err, errlen) < 0 ||
	    check_model(NULL, &p->conf, err, errlen) < 0) {
		if (!p->arena)
			snprintf(err, errlen, "out of memory");
		free(p->arena);
		p->arena = NULL;
		return -1;
	}
	return 0;
}

/* ---- what a generation holds ---- */

/* A file cache or a proxy belongs to one generation at a time: a reload
 * that keeps it moves the pointer to the new one and clears the old slot
 * (a NULL slot is skipped everywhere). */
struct files_entry {
	char root[SCONF_PATH_MAX];
	struct file_cache *fc;
};

struct proxy_entry {
	const struct sconf_route *rt; /* in its generation's conf: the spec compared on reload */
	struct proxy px;
	struct http_cache cache;
	void *mem, *cmem;
	size_t memsz, cmemsz;
};

struct gen {
	struct sites_gen g;   /* g.host = this */
	struct parsed p;
	struct sites_handler (*h)[SCONF_MAX_ROUTES];
	struct files_entry *files[SCONF_MAX_SITES * SCONF_MAX_ROUTES];
	struct http_files *fh[SCONF_MAX_SITES][SCONF_MAX_ROUTES];
	unsigned nfiles;
	struct proxy_entry *proxies[SCONF_MAX_SITES * SCONF_MAX_ROUTES];
	unsigned nproxies;
	/* 1 + the slot in the previous generation an entry was taken from
	 * (0: built new), so a failed reload can give it back. */
	uint16_t files_from[SCONF_MAX_SITES * SCONF_MAX_ROUTES];
	uint16_t proxies_from[SCONF_MAX_SITES * SCONF_MAX_ROUTES];
	struct gen *next_retired;
};

/* One listener's engine in a worker. */
struct lst {
	struct sites_listener sl;
	struct http_app_route route;
	struct http_app_def def;
	struct http_app app;
	void *mem;
	size_t memsz;
	struct loop *tls_loop;  /* NULL: plain */
	struct tls_ctx *tls;
	bool started;
};

struct sh_worker {
	struct worker wk;       /* first */
	const struct opts *opts; /* the command line's: the stack's and the runtime's flags */
	struct loop *loop;
	struct sites sites;
	struct gen *gen;        /* current */
	struct gen *retired;    /* replaced, not yet freed */
	struct lst lst[SCONF_MAX_LISTEN];
	unsigned nlst;
	struct loop_timer tick; /* once a second: SIGHUP, retiring */
	/* The error log's suppression reports (worker 0's: the log is the
	 * process's): armed when a message was suppressed, at the end of its
	 * window, so the count is written within a second, not at exit. */
	struct loop_timer log_timer;
	uint64_t log_held;
	time_t date_sec;
	struct prom_page metrics; /* `metrics;` routes: every counter of the worker */
	bool on_skiff;
	uint64_t reloads, reload_failures;
	struct access_log *alog; /* the file's access_log, opened by this worker; NULL: off */
	struct sk_trace trace;  /* --trace (trace.cycles set); else unused */
	/* The drain's outcome, for the line printed once all are done. */
	bool drain_ran, drain_finished, drain_timed_out;
	double drain_ms;
	unsigned drain_left;
};

struct plan {
	const struct opts *o;
	const char *path;
	bool on_skiff;
	unsigned n;
	struct serve_skiff_config scfg;
	struct nbr_board *board;
	bool tracing;           /* --trace */
};

static struct sh_worker *shw;
static const struct plan *plan_run; /* what SIGHUP reads again */
static uint32_t max_conns_run;      /* per listener and worker, as sized at start */

static void gen_free(struct gen *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < g->nfiles; i++) {
		if (!g->files[i])
			continue; /* the next generation's now */
		file_cache_free(g->files[i]->fc);
		free(g->files[i]);
	}
	for (unsigned i = 0; i < g->nproxies; i++) {
		struct proxy_entry *pe = g->proxies[i];
		if (!pe)
			continue;
		proxy_stop(&pe->px);
		if (pe->mem)
			munmap(pe->mem, pe->memsz);
		if (pe->cmem)
			munmap(pe->cmem, pe->cmemsz);
		free(pe);
	}
	for (unsigned s = 0; s < SCONF_MAX_SITES; s++)
		for (unsigned r = 0; r < SCONF_MAX_ROUTES; r++)
			free(g->fh[s][r]);
	free(g->h);
	free(g->p.arena);
	free(g);
}

/* Do two proxy routes ask for the same proxy (so one can take over the
 * other's, with its pool and cache)? */
static bool same_proxy(const struct sconf_route *a, const struct sconf_route *b)
{
	return sites_proxy_same(a, b);
}


/* `app;`: the application's own routes, matched on the whole path. */
static int app_handle(struct http_app_req *r, void *ctx)
{
	return http_app_routes_run(r, ctx);
}

/* The proxy of a route, on the worker's loop (its upstream connections
 * are plain TCP, whichever listener the request came in on). */
static struct proxy_entry *proxy_build(struct sh_worker *w, const struct sconf *c,
				       const struct sconf_route *rt, char *err, size_t errlen)
{
	struct proxy_entry *pe = calloc(1, sizeof(*pe));
	if (!pe) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pe->rt = rt;
	struct proxy_config pc;
	sites_proxy_config(rt, &pc); /* the upstreams and every option of the route */
	pc.max_xchg = c->max_conns;
	if (!w->on_skiff) {
		struct rlimit rl;
		/* Each exchange holds a second descriptor on the kernel's sockets. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && pc.max_xchg > rl.rlim_cur / 4)
			pc.max_xchg = (uint32_t)(rl.rlim_cur / 4);
	}
	pe->memsz = proxy_mem_size(&pc);
	pe->mem = pe->memsz ? mmap(NULL, pe->memsz, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
			    : MAP_FAILED;
	if (pe->mem == MAP_FAILED || proxy_init(&pe->px, pe->mem, pe->memsz, &pc) < 0) {
		if (pe->mem == MAP_FAILED)
			pe->mem = NULL;
		char b[32];
		snprintf(err, errlen, "%sproxy: cannot set up %u exchanges", lc(b, rt->pos),
			 pc.max_xchg);
		goto fail;
	}
	struct timespec rtm, mt;
	clock_gettime(CLOCK_REALTIME, &rtm);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	pe->px.cfg.wall_offset = (int64_t)rtm.tv_sec - (int64_t)mt.tv_sec;
	/* proxy_attach's one effect, done here: the proxy's own connections
	 * go out on the worker's loop, never through a TLS loop. */
	pe->px.loop = w->loop;
	/* `cache SIZE` is the process's (as nginx's keys_zone max_size, and
	 * skiff proxy --cache): each worker's proxy holds SIZE / workers. */
	uint64_t csz = rt->cache_bytes / (plan_run && plan_run->n ? plan_run->n : 1);
	if (csz) {
		pe->cmemsz = csz;
		pe->cmem = mmap(NULL, pe->cmemsz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct http_cache_config cc;
		http_cache_config_default(&cc);
		if (pe->cmem == MAP_FAILED ||
		    http_cache_init(&pe->cache, pe->cmem, pe->cmemsz, &cc) < 0) {
			if (pe->cmem == MAP_FAILED)
				pe->cmem = NULL;
			char b[32];
			snprintf(err, errlen, "%scache: cannot set up %llu bytes", lc(b, rt->pos),
				 (unsigned long long)csz);
			goto fail;
		}
		pe->px.cache = &pe->cache;
	}
	return pe;
fail:
	if (pe->mem)
		munmap(pe->mem, pe->memsz);
	if (pe->cmem)
		munmap(pe->cmem, pe->cmemsz);
	free(pe);
	return NULL;
}

/* Build a generation from a parsed file (taken over: p's arena is the
 * generation's from here, whatever happens), reusing what `prev` has
 * that the file still asks for.  NULL with a message in err. */
static struct gen *gen_build(struct sh_worker *w, struct parsed *p, struct gen *prev, char *err,
			     size_t errlen)
{
	struct gen *g = calloc(1, sizeof(*g));
	if (!g) {
		free(p->arena);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->p = *p;
	p->arena = NULL;
	const struct sconf *c = &g->p.conf;
	g->g = (struct sites_gen){.conf = c, .host = g};
	g->h = calloc(c->nsites ? c->nsites : 1, sizeof(*g->h));
	if (!g->h) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	g->g.h = g->h;
	for (unsigned s = 0; s < c->nsites; s++) {
		const struct sconf_site *site = &c->sites[s];
		for (unsigned r = 0; r < site->nroutes; r++) {
			const struct sconf_route *rt = &site->routes[r];
			struct sites_handler *h = &g->h[s][r];
			if (rt->kind == SCONF_FILES) {
				struct files_entry *fe = NULL;
				for (unsigned i = 0; i < g->nfiles && !fe; i++)
					if (strcmp(g->files[i]->root, rt->root) == 0)
						fe = g->files[i];
				for (unsigned i = 0; prev && !fe && i < prev->nfiles; i++)
					if (prev->files[i] && strcmp(prev->files[i]->root, rt->root) == 0) {
						/* SIGHUP reads a kept folder again, as serve --root's does. */
						if (file_cache_reload(prev->files[i]->fc, err, errlen) < 0)
							goto fail;
						fe = prev->files[i];
						prev->files[i] = NULL;
						g->files[g->nfiles] = fe;
						g->files_from[g->nfiles++] = i + 1;
					}
				if (!fe) {
					fe = calloc(1, sizeof(*fe));
					if (!fe)
						goto oom;
					snprintf(fe->root, sizeof(fe->root), "%s", rt->root);
					fe->fc = file_cache_load(rt->root, err, errlen);
					if (!fe->fc) {
						free(fe);
						goto fail;
					}
					g->files[g->nfiles++] = fe;
				}
				struct http_files *hf = calloc(1, sizeof(*hf));
				if (!hf)
					goto oom;
				*hf = (struct http_files){.lookup = file_cache_lookup, .lookup_ctx = fe->fc,
							  .cache_control = rt->cache_control};
				g->fh[s][r] = hf;
				*h = (struct sites_handler){http_files_handle, hf};
			} else if (rt->kind == SCONF_PROXY) {
				struct proxy_entry *pe = NULL;
				unsigned from = 0;
				for (unsigned i = 0; prev && !pe && i < prev->nproxies; i++)
					if (prev->proxies[i] && same_proxy(prev->proxies[i]->rt, rt)) {
						/* Kept with its pool, cache and exchanges in flight. */
						pe = prev->proxies[i];
						prev->proxies[i] = NULL;
						pe->rt = rt;
						from = i + 1;
					}
				if (!pe) {
					pe = proxy_build(w, c, rt, err, errlen);
					if (!pe)
						goto fail;
				}
				g->proxies_from[g->nproxies] = from;
				g->proxies[g->nproxies++] = pe;
				struct http_app_def pdef;
				struct http_app_route proute;
				proxy_app_def(&pe->px, &pdef, &proute);
				*h = (struct sites_handler){proute.fn, proute.ctx};
			} else if (rt->kind == SCONF_METRICS) {
				*h = (struct sites_handler){prom_page_handle, &w->metrics};
			} else if (rt->kind == SCONF_APP) {
				*h = (struct sites_handler){app_handle, (void *)app_def};
			}
			/* redirect and return: the router's own (fn NULL) */
		}
	}
	return g;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	/* What was taken over from prev goes back to it. */
	for (unsigned k = 0; k < g->nproxies; k++)
		if (g->proxies_from[k]) {
			prev->proxies[g->proxies_from[k] - 1] = g->proxies[k];
			g->proxies[k] = NULL;
		}
	for (unsigned k = 0; k < g->nfiles; k++)
		if (g->files_from[k]) {
			prev->files[g->files_from[k] - 1] = g->files[k];
			g->files[k] = NULL;
		}
	gen_free(g);
	return NULL;
}

/* ---- the metrics page ---- */

static void worker_stats(struct sh_worker *w, void (*fn)(void *ctx, const char *name, uint64_t v),
			 void *ctx);

/* The page's counters: the worker's (prom_page's stats). */
static void metrics_stats(void *w, void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx)
{
	worker_stats(w, fn, fctx);
}

/* ---- the listeners ---- */

static int tls_for(struct sh_worker *w, const struct sconf *c, unsigned li, struct lst *l,
		   char *err, size_t errlen)
{
	const struct sconf_site *def = NULL;
	struct tls_sni sni[TLS_SNI_MAX];
	unsigned nsni = 0;
	for (unsigned s = 0; s < c->nsites; s++) {
		const struct sconf_site *site = &c->sites[s];
		if (!(site->listen_mask & (1u << li)))
			continue;
		if (!def) {
			def = site;
			continue;
		}
		for (unsigned k = 0; k < site->nnames; k++) {
			if (nsni == TLS_SNI_MAX) {
				char b[32];
				snprintf(err, errlen, "%ssite '%s': more than %u certificate names on "
					 "one tls listener", lc(b, site->pos), site->names[0],
					 TLS_SNI_MAX);
				return -1;
			}
			sni[nsni++] = (struct tls_sni){.name = site->names[k],
						       .name_len = strlen(site->names[k]),
						       .cert = site->cert, .cert_len = strlen(site->cert),
						       .key = site->key};
		}
	}
	const struct opts *o = w->opts;
	struct tls_server_opts so = {.sni = sni, .nsni = nsni,
				     .ticket_rotate_s = (uint32_t)opt_num(o, OPT_TLS_TICKET_ROTATE),
				     .alpn_h2 = sconf_alpn_h2(&c->listen[li])};
	l->tls = tls_host_server(opt_str(o, OPT_TLS_ENGINE), def->cert, def->key, &so, err, errlen);
	if (!l->tls)
		return -1;
	struct loop_tls_config lc = {
		.engine = tls_host_ops(l->tls), .ctx = l->tls,
		.handshake_timeout_ns = opt_num(o, OPT_TLS_HANDSHAKE_TIMEOUT) * SK_NS_PER_S};
	l->tls_loop = loop_tls_create(w->loop, &lc, err, errlen);
	return l->tls_loop ? 0 : -1;
}

/* The engines' access hook: through the worker, whose log SIGHUP may
 * replace. */
static void access_hook(void *ctx, const struct http_access *rec)
{
	struct sh_worker *w = ctx;
	if (w->alog)
		access_log_record(w->alog, rec);
}

static struct access_log *alog_open(const struct sconf *c, struct loop *loop, char *err,
				    size_t errlen)
{
	return access_log_open(c->access_log, c->access_log_json ? HTTP_ACCESS_JSON
								 : HTTP_ACCESS_COMBINED,
			       loop, err, errlen);
}

static void alog_drop(struct access_log *al)
{
	access_log_close(al);
	access_log_free(al);
}

/* The engines' runtime errors (http_app_config.error_log): the error log. */
static void error_hook(void *ctx, const char *key, const char *msg)
{
	(void)ctx;
	elog(SK_LOG_ERROR, key, "%s", msg);
}

static int listeners_open(struct sh_worker *w, char *err, size_t errlen)
{
	const struct sconf *c = w->gen->g.conf;
	bool proxies = w->gen->nproxies > 0;
	for (unsigned li = 0; li < c->nlisten; li++, w->nlst++) {
		const struct sconf_listen *ls = &c->listen[li];
		struct lst *l = &w->lst[li];
		l->sl = (struct sites_listener){&w->sites, li};
		sites_route(&l->sl, &l->route);
		l->def = (struct http_app_def){.routes = &l->route, .nroutes = 1, .name = "sites",
					      .workers = true};
		struct http_app_config cfg;
		http_app_config_default(&cfg);
		if (!ls->any)
			cfg.addr = ls->addr; /* else ::, both families */
		cfg.port = ls->port;
		cfg.max_conns = c->max_conns;
		cfg.max_body = c->max_body;
		cfg.header_timeout = c->header_timeout;
		cfg.body_timeout = c->body_timeout;
		cfg.send_timeout = c->send_timeout;
		cfg.keepalive_timeout = c->keepalive_timeout;
		cfg.scheme = ls->tls ? "https" : "http";
		/* HTTP/2 sessions: the model's http2_sessions (about 150 KiB each,
		 * in mmap'd memory only a session's pages that were used are
		 * resident), no more than this worker's share of the connections,
		 * as each session takes one. */
		if (ls->h2_off)
			cfg.h2_sessions = 0;
		else
			cfg.h2_sessions = c->http2_sessions < c->max_conns ? c->http2_sessions
									   : c->max_conns;
		/* Only with a log: without one the engine does no work per answer.
		 * A reload that turns it on or off sets it (http_app_set_access). */
		cfg.access = w->alog ? access_hook : NULL;
		cfg.access_ctx = w;
		cfg.trace = w->trace.cycles ? &w->trace : NULL; /* every listener's into one */
		cfg.error_log = error_hook;
		if (proxies)
			proxy_app_config(NULL, &cfg);
		http_app_config_fit(&cfg, app_def); /* the application's header area */
		http_app_config_hdr(&cfg, sites_conf_header_area(c, li)); /* the file's */
		if (ls->tls && tls_for(w, c, li, l, err, errlen) < 0)
			return -1;
		l->memsz = http_app_mem_size(&cfg);
		l->mem = l->memsz ? mmap(NULL, l->memsz, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
				  : MAP_FAILED;
		if (l->mem == MAP_FAILED) {
			l->mem = NULL;
			snprintf(err, errlen, "cannot reserve memory for %u connections", cfg.max_conns);
			return -1;
		}
		int r = http_app_init(&l->app, l->mem, l->memsz, &cfg, &l->def,
				      l->tls_loop ? l->tls_loop : w->loop);
		if (r == 0)
			r = http_app_start(&l->app);
		if (r < 0) {
			char b[32];
			/* skiff's stack listens on the interface's addresses: the
			 * IPv4 one, or every one ([::], *), not one IPv6 address. */
			snprintf(err, errlen, "%scannot listen on port %u: %s%s", lc(b, ls->pos),
				 ls->port, strerror(-r),
				 w->on_skiff && r == -SK_EADDRNOTAVAIL
					 ? " (on stack skiff a listener takes the interface's IPv4 "
					   "address or every address: [::]:PORT or *:PORT)"
					 : "");
			return -1;
		}
		l->started = true;
	}
	return 0;
}

/* What a reload that would change the listeners says. */
static void listeners_changed(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: the listeners or the sites' certificate files changed: "
		 "restart skiff to change them (their contents are read again on SIGHUP)", path);
}

/* Can a reload to b keep a's listeners: the same addresses, ports and
 * kinds, and the same header area each (the engines' areas were reserved
 * at start)?  false: err says what changed (path: the file's name). */
static bool same_listeners(const struct sconf *a, const struct sconf *b, const char *path,
			   char *err, size_t errlen)
{
	for (unsigned li = 0; li < a->nlisten && li < b->nlisten; li++) {
		if (sites_conf_header_area(a, li) == sites_conf_header_area(b, li))
			continue;
		snprintf(err, errlen, "%s: header_area changed for listener %u: restart skiff to "
			 "change it", path, li + 1);
		return false;
	}
	bool same = a->nlisten == b->nlisten;
	for (unsigned i = 0; same && i < a->nlisten; i++)
		same = !memcmp(&a->listen[i].addr, &b->listen[i].addr, sizeof(a->listen[i].addr)) &&
		       a->listen[i].port == b->listen[i].port && a->listen[i].tls == b->listen[i].tls &&
		       a->listen[i].any == b->listen[i].any;
	if (!same)
		listeners_changed(path, err, errlen);
	return same;
}

/* Do the tls listeners of a and b name the same certificate files for
 * the same names (so reading the files again is the whole change)? */
static bool same_certs(const struct sconf *a, const struct sconf *b)
{
	if (a->nsites != b->nsites)
		return false;
	for (unsigned s = 0; s < a->nsites; s++) {
		const struct sconf_site *x = &a->sites[s], *y = &b->sites[s];
		if (x->listen_mask != y->listen_mask || x->nnames != y->nnames ||
		    !x->cert != !y->cert ||
		    (x->cert && (strcmp(x->cert, y->cert) || strcmp(x->key, y->key))))
			return false;
		for (unsigned k = 0; k < x->nnames; k++)
			if (strcmp(x->names[k], y->names[k]))
				return false;
	}
	return true;
}

/* ---- SIGHUP ---- */

static int load(const struct plan *pl, struct parsed *p, char *err, size_t errlen)
{
	return pl->path ? load_file(pl->path, p, err, errlen)
			: load_flags(pl->o, pl->on_skiff, p, err, errlen);
}

static void reload(struct sh_worker *w, const struct plan *pl, sk_time_ns now)
{
	char err[512];
	struct parsed p;
	const struct sconf *old = w->gen->g.conf;
	const char *path = pl->path ? pl->path : "the flags";
	if (load(pl, &p, err, sizeof(err)) < 0)
		goto refused;
	p.conf.max_conns = max_conns_run; /* the engines were sized at start */
	if (!same_listeners(old, &p.conf, path, err, sizeof(err))) {
		free(p.arena);
		goto refused;
	}
	if (!same_certs(old, &p.conf)) {
		listeners_changed(path, err, sizeof(err));
		free(p.arena);
		goto refused;
	}
	/* The log again, before anything changes: a reload that cannot open
	 * it is refused (a rotated file is opened anew here). */
	struct access_log *nlog = NULL;
	if (p.conf.access_log && !(nlog = alog_open(&p.conf, w->loop, err, sizeof(err)))) {
		free(p.arena);
		goto refused;
	}
	const char *reloaded_cert[SCONF_MAX_LISTEN] = {0};
	for (unsigned li = 0; li < w->nlst; li++) {
		const struct sconf_site *def = NULL;
		for (unsigned s = 0; s < old->nsites && !def; s++)
			if (old->sites[s].listen_mask & (1u << li))
				def = &old->sites[s];
		if (w->lst[li].tls)
			reloaded_cert[li] = def->cert;
		if (w->lst[li].tls && tls_host_reload(w->lst[li].tls, def->cert, def->key, err,
							  sizeof(err)) < 0) {
			free(p.arena);
			alog_drop(nlog);
			goto refused;
		}
	}
	struct gen *g = gen_build(w, &p, w->gen, err, sizeof(err));
	if (!g) {
		alog_drop(nlog);
		goto refused;
	}
	alog_drop(w->alog); /* what it buffered is written first */
	w->alog = nlog;
	for (unsigned li = 0; li < w->nlst; li++)
		http_app_set_access(&w->lst[li].app, nlog ? access_hook : NULL, w);
	struct gen *prev = sites_swap(&w->sites, &g->g)->host;
	w->gen = g;
	/* The requests dispatched until now may use prev: they count as old
	 * in each engine until they are over (retired_free). */
	for (unsigned li = 0; li < w->nlst; li++)
		if (w->lst[li].started)
			http_app_epoch_next(&w->lst[li].app);
	/* Open HTTP/2 sessions would go on with what they began with (the
	 * old certificate, for one) as long as their clients keep them:
	 * GOAWAY asks each to finish its streams and reconnect.  HTTP/1.1
	 * connections are left alone. */
	for (unsigned li = 0; li < w->nlst; li++)
		if (w->lst[li].started)
			http_app_goaway(&w->lst[li].app, now);
	prev->next_retired = w->retired;
	w->retired = prev;
	w->reloads++;
	if (w->wk.id == 0) {
		/* What was read again, a line each, then the outcome (last: a
		 * watcher waits for it). */
		for (unsigned i = 0; i < g->nfiles; i++) {
			struct file_cache_info fi;
			if (!g->files[i])
				continue;
			file_cache_info(g->files[i]->fc, &fi);
			printf("%s: SIGHUP: root reloaded: files=%zu bytes=%llu mapped=%llu maps=%zu "
			       "gen=%llu root=%s\n", who, fi.files, (unsigned long long)fi.bytes,
			       (unsigned long long)fi.mapped, fi.maps, (unsigned long long)fi.gen,
			       g->files[i]->root);
		}
		for (unsigned li = 0; li < w->nlst; li++)
			if (w->lst[li].tls && reloaded_cert[li])
				printf("%s: SIGHUP: certificate reloaded: %s\n", who, reloaded_cert[li]);
		elog(SK_LOG_INFO, "reload", "SIGHUP: %s loaded (%u sites, %u listeners)", path,
		     g->p.conf.nsites, g->p.conf.nlisten);
		printf("%s: SIGHUP: %s loaded (%u sites)\n", who, path, g->p.conf.nsites);
		fflush(stdout);
	}
	return;
refused:
	w->reload_failures++;
	if (w->wk.id == 0) {
		/* The error log only (standard error unless --error-log/error_log). */
		elog(SK_LOG_ERROR, "reload", "SIGHUP: %s (the old configuration stays)", err);
	}
}

/* May the retired generations go?  Once no request dispatched before the
 * last swap is left in any engine (keep-alive connections may stay open:
 * a server under steady load frees them within a request's time), and,
 * when one of them owns a file cache of its own, once TCP holds no file
 * bytes by reference (skiff's stack sends bodies from the mapping). */
static bool retired_free(const struct sh_worker *w)
{
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].started && http_app_live_old(&w->lst[i].app))
			return false;
	for (const struct gen *g = w->retired; g; g = g->next_retired)
		for (unsigned i = 0; i < g->nfiles; i++)
			if (g->files[i] && loop_refs_held(w->loop))
				return false;
	return true;
}

static void tick(struct loop_timer *t, sk_time_ns now)
{
	struct sh_worker *w = (struct sh_worker *)((char *)t - offsetof(struct sh_worker, tick));
	if (w->wk.reload) {
		w->wk.reload = 0;
		reload(w, plan_run, now);
	}
	if (w->retired && retired_free(w)) {
		while (w->retired) {
			struct gen *g = w->retired;
			w->retired = g->next_retired;
			gen_free(g);
		}
	}
	/* A kept folder read again retires its old tree inside its cache:
	 * unmapped once no answer is sending a file (the engines' count) and
	 * TCP holds no file bytes by reference; its descriptors once no
	 * connection is open (as serve --root's reload_tick). */
	if (w->gen->nfiles) {
		uint32_t held = loop_refs_held(w->loop) ? 1 : 0, conns = 0;
		for (unsigned i = 0; i < w->nlst; i++) {
			held += http_app_files_held(&w->lst[i].app);
			conns += w->lst[i].app.nconns;
		}
		for (unsigned i = 0; i < w->gen->nfiles; i++)
			if (w->gen->files[i])
				file_cache_quiesce(w->gen->files[i]->fc, held == 0, conns == 0);
	}
	loop_timer_set(w->loop, &w->tick, now + SK_NS_PER_S);
}

/* The Date header changes once a second: format it only then. */
static void log_tick(struct loop_timer *t, sk_time_ns now)
{
	struct sh_worker *w = (struct sh_worker *)((char *)t - offsetof(struct sh_worker, log_timer));
	elog_flush(now);
	sk_time_ns d = elog_next_deadline();
	if (d != SK_TIME_NEVER)
		loop_timer_set(w->loop, &w->log_timer, d);
}

static void refresh_date(void *ctx, sk_time_ns now)
{
	struct sh_worker *w = ctx;
	if (sk_unlikely(elog_suppressed() != w->log_held) && w->wk.id == 0) {
		w->log_held = elog_suppressed();
		sk_time_ns d = elog_next_deadline();
		if (d != SK_TIME_NEVER && !loop_timer_armed(&w->log_timer))
			loop_timer_set(w->loop, &w->log_timer, d > now ? d : now);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec == w->date_sec)
		return;
	w->date_sec = ts.tv_sec;
	char buf[HTTP_DATE_LEN];
	http_date_format(ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 0, buf);
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].started)
			http_app_set_date(&w->lst[i].app, buf);
}

/* ---- workers ---- */

static bool sites_any_tls(const struct sh_worker *w)
{
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].tls)
			return true;
	return false;
}

static void worker_stats(struct sh_worker *w, void (*fn)(void *ctx, const char *name, uint64_t v),
			 void *ctx)
{
	/* The engines' counters summed over the plain listeners (http.*) and
	 * over the TLS ones (https.*), as serve has always named them. */
	struct http_app_stats sum[2] = {0};
	uint64_t open[2] = {0};
	for (unsigned i = 0; i < w->nlst; i++) { /* stopped ones too: --stats reads them at exit */
		bool t = w->lst[i].tls != NULL;
		http_app_stats_add(&sum[t], &open[t], &w->lst[i].app);
	}
	for (unsigned t = 0; t < 2; t++)
		if (!t || sites_any_tls(w))
			http_app_stats_emit(&sum[t], open[t], t ? "https" : "http", fn, ctx);
	sites_stats(&w->sites, fn, ctx);
	fn(ctx, "sites.reloads", w->reloads);
	fn(ctx, "sites.reload_failures", w->reload_failures);
	/* Generations replaced and not yet freed (retired_free): 0 soon after
	 * a reload, under load too. */
	uint64_t nret = 0;
	for (const struct gen *g = w->retired; g; g = g->next_retired)
		nret++;
	fn(ctx, "sites.generations_retired", nret);
	/* The file trees: pages found cut short under a mapping (a file
	 * truncated while served, answered from zeros: serve_files.c), and
	 * the descriptors kept for sendfile. */
	uint64_t trunc = 0, fds = 0;
	for (unsigned i = 0; i < w->gen->nfiles; i++) {
		struct file_cache_info fi;
		if (!w->gen->files[i])
			continue;
		file_cache_info(w->gen->files[i]->fc, &fi);
		trunc += fi.truncated_pages;
		fds += fi.fds;
	}
	if (w->gen->nfiles) {
		fn(ctx, "files.truncated_pages", trunc);
		fn(ctx, "files.sendfile_fds", fds);
	}
	for (unsigned i = 0; i < w->gen->nproxies; i++) {
		const struct proxy_entry *pe = w->gen->proxies[i];
		proxy_stats(&pe->px, fn, ctx);
		if (pe->px.cache)
			http_cache_stats(pe->px.cache, fn, ctx);
	}
	/* The TLS listeners' counters (their loops' tls.handshakes ..., their
	 * contexts' tickets and reloads), summed as one's. */
	struct stat_sum ts = {0};
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].tls) {
			stat_sum_source(&ts);
			loop_stats(w->lst[i].tls_loop, stat_sum_add, &ts);
			tls_host_stats(w->lst[i].tls, stat_sum_add, &ts);
		}
	stat_sum_emit(&ts, fn, ctx);
	stat_sum_free(&ts);
	if (w->alog)
		access_log_stats(w->alog, fn, ctx);
	if (w->on_skiff)
		serve_skiff_stats(w->loop, fn, ctx);
	else
		loop_stats(w->loop, fn, ctx);
}

static int worker_open(struct sh_worker *w, struct sh_worker *w0, const struct plan *pl,
		       struct parsed *p, char *err, size_t errlen)
{
	const struct sconf *c = &p->conf;
	/* Worker 0 owns the first parse from here, whatever happens: its
	 * generation keeps it, or a failure below lets it go. */
	struct parsed mine = *p;
	if (w == w0)
		p->arena = NULL;
	w->on_skiff = pl->on_skiff;
	w->opts = pl->o;
	if (pl->tracing)
		w->trace.cycles = trace_cycles;
	uint32_t extra = 0;
	for (unsigned s = 0; s < c->nsites; s++)
		for (unsigned r = 0; r < c->sites[s].nroutes; r++)
			if (c->sites[s].routes[r].kind == SCONF_PROXY) {
				/* an upstream connection per exchange, and the idle pools */
				struct proxy_config pc;
				sites_proxy_config(&c->sites[s].routes[r], &pc);
				extra += c->max_conns + pc.nup * pc.pool;
			}
	uint32_t conns = c->max_conns * c->nlisten;
	uint32_t max_timers = 3 * conns + extra + 64;
	if (pl->on_skiff) {
		struct serve_skiff_config scfg = pl->scfg;
		scfg.max_conns = conns + extra;
		scfg.max_timers = max_timers;
		scfg.trace = pl->tracing ? &w->trace : NULL;
		if (pl->n > 1) {
			scfg.stack.queue = (uint16_t)w->wk.id;
			scfg.stack.nqueues = (uint16_t)pl->n;
			scfg.stack.group = (uint16_t)(getpid() & 0xffff);
			scfg.stack.ifc.glean = true;
			scfg.stack.ifc.board = pl->board;
		}
		if (w != w0) {
			scfg.stack.have_mac = true;
			memcpy(scfg.stack.ifc.mac, serve_skiff_mac(w0->loop), 6);
		}
		w->loop = serve_skiff_open(&scfg, err, errlen);
	} else {
		struct loop_linux_config lcfg = {.max_timers = max_timers, .reuseport = pl->n > 1};
		w->loop = loop_linux_create(&lcfg, err, errlen);
	}
	if (!w->loop)
		goto fail_unbuilt;
	w->metrics = (struct prom_page){.buf = malloc(METRICS_MAX), .cap = METRICS_MAX,
					.stats = metrics_stats, .ctx = w};
	if (!w->metrics.buf) {
		snprintf(err, errlen, "out of memory");
		goto fail_unbuilt;
	}
	if (w != w0) { /* each worker its own copy: nothing shared but the file */
		if (load(pl, &mine, err, errlen) < 0)
			return -1;
		mine.conf.max_conns = max_conns_run;
	}
	w->gen = gen_build(w, &mine, NULL, err, errlen);
	if (!w->gen)
		return -1;
	if (c->access_log && !(w->alog = alog_open(c, w->loop, err, errlen)))
		return -1;
	sites_swap(&w->sites, &w->gen->g);
	if (listeners_open(w, err, errlen) < 0)
		return -1;
	/* The application's init, once per worker (with its first engine:
	 * what it wants is the loop), before the first connection; whether
	 * or not the file routes to it yet (a SIGHUP may). */
	if (app_def && app_def->init && w->nlst &&
	    app_def->init(&w->lst[0].app, app_def->init_ctx) < 0) {
		snprintf(err, errlen, "the application '%s' refused to start",
			 app_def->name ? app_def->name : "app");
		return -1;
	}
	refresh_date(w, 0);
	w->loop->on_turn = refresh_date;
	w->loop->turn_ctx = w;
	w->tick.fn = tick;
	loop_timer_set(w->loop, &w->tick, loop_now(w->loop) + SK_NS_PER_S);
	w->log_timer.fn = log_tick;
	return 0;
fail_unbuilt:
	if (w == w0)
		free(mine.arena); /* no generation took it */
	return -1;
}

static void worker_stop(struct sh_worker *w)
{
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].started) {
			http_app_stop(&w->lst[i].app);
			w->lst[i].started = false;
		}
	if (w->gen)
		for (unsigned i = 0; i < w->gen->nproxies; i++)
			proxy_stop(&w->gen->proxies[i]->px);
	if (w->loop && loop_timer_armed(&w->tick))
		loop_timer_cancel(w->loop, &w->tick);
	if (w->loop && loop_timer_armed(&w->log_timer))
		loop_timer_cancel(w->loop, &w->log_timer);
}

static void worker_free(struct sh_worker *w)
{
	worker_stop(w);
	for (unsigned i = 0; i < SCONF_MAX_LISTEN; i++) {
		struct lst *l = &w->lst[i];
		if (l->tls_loop)
			loop_destroy(l->tls_loop);
		if (l->tls)
			tls_host_free(l->tls);
		if (l->mem)
			munmap(l->mem, l->memsz);
	}
	while (w->retired) {
		struct gen *g = w->retired;
		w->retired = g->next_retired;
		gen_free(g);
	}
	gen_free(w->gen);
	w->gen = NULL;
	alog_drop(w->alog); /* before its loop: it cancels its timer there */
	w->alog = NULL;
	if (w->loop)
		loop_destroy(w->loop);
	free(w->metrics.buf);
}

/* ---- the drain (SIGTERM) ---- */

/* SIGTERM came (the drain follows the first loop_run): set by the
 * handler, read by the workers once their loop_run returned. */
static volatile sig_atomic_t sh_term;

struct sh_drain {
	struct sh_worker *w;
	unsigned busy;              /* engines not yet empty */
	bool timed_out;             /* the deadline ended it */
	bool finished;              /* everything was delivered */
	struct loop_timer deadline; /* --drain-timeout from the SIGTERM */
	struct loop_timer tcp_poll; /* skiff: once the engines are empty, every 10 ms */
};

#define DRAIN_TCP_POLL_NS (10 * SK_NS_PER_MS)

static void drain_tcp_poll(struct loop_timer *t, sk_time_ns now)
{
	struct sh_drain *d =
		(struct sh_drain *)(void *)((char *)t - offsetof(struct sh_drain, tcp_poll));
	/* No request is left, so nothing uses the proxies' own upstream
	 * connections: they go, with their FINs. */
	for (unsigned i = 0; i < d->w->gen->nproxies; i++)
		proxy_stop(&d->w->gen->proxies[i]->px);
	if (serve_skiff_unfinished(d->w->loop) == 0) {
		d->finished = true;
		d->w->wk.drain_stop = 1;
	} else {
		loop_timer_set(d->w->loop, &d->tcp_poll, now + DRAIN_TCP_POLL_NS);
	}
}

/* http_app_drain's done, once per engine: from inside the engine, so the
 * rest waits for a timer. */
static void drain_conns_done(void *ctx)
{
	struct sh_drain *d = ctx;
	if (--d->busy)
		return;
	if (!d->w->on_skiff) {
		d->finished = true;
		d->w->wk.drain_stop = 1;
	} else {
		loop_timer_set(d->w->loop, &d->tcp_poll, plat_now());
	}
}

static void drain_deadline(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct sh_drain *d =
		(struct sh_drain *)(void *)((char *)t - offsetof(struct sh_drain, deadline));
	d->timed_out = true;
	d->w->wk.drain_stop = 1;
}

static unsigned worker_conns(const struct sh_worker *w)
{
	unsigned n = 0;
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].started)
			n += w->lst[i].app.nconns;
	return n;
}

static int drain(struct sh_worker *w, const struct plan *pl, unsigned drain_s)
{
	struct sh_drain d = {.w = w, .deadline = {.fn = drain_deadline},
			     .tcp_poll = {.fn = drain_tcp_poll}};
	for (unsigned i = 0; i < w->nlst; i++)
		d.busy += w->lst[i].started;
	/* The clock, not loop_now: skiff's loop caches the time of its last
	 * turn, which may be long before the signal. */
	sk_time_ns t0 = plat_now();
	if (w->wk.id == 0) {
		unsigned n = 0; /* every worker's, read from here: a moment's view */
		for (unsigned i = 0; i < pl->n; i++)
			n += worker_conns(&shw[i]);
		printf("%s: SIGTERM: draining %u connections (drain-timeout %u s)\n", who, n, drain_s);
		fflush(stdout);
	}
	loop_timer_set(w->loop, &d.deadline, t0 + (sk_time_ns)drain_s * SK_NS_PER_S);
	/* busy was counted whole before the first done can come: http_app_drain
	 * may call it at once, for an engine with nothing open. */
	for (unsigned i = 0; i < w->nlst; i++)
		if (w->lst[i].started)
			http_app_drain(&w->lst[i].app, t0, drain_conns_done, &d);
	int rc = loop_run(w->loop, &w->wk.drain_stop);
	if (loop_timer_armed(&d.deadline))
		loop_timer_cancel(w->loop, &d.deadline);
	if (loop_timer_armed(&d.tcp_poll))
		loop_timer_cancel(w->loop, &d.tcp_poll);
	w->drain_ran = true;
	w->drain_ms = (double)(plat_now() - t0) / 1e6;
	w->drain_left = worker_conns(w);
	w->drain_finished = d.finished;
	w->drain_timed_out = d.timed_out;
	return rc;
}

/* One line for the drain of all workers: drained only if every one was. */
static void drain_report(const struct plan *pl)
{
	bool finished = true, timed_out = false, ran = false;
	double ms = 0;
	unsigned left = 0;
	for (unsigned i = 0; i < pl->n; i++) {
		const struct sh_worker *w = &shw[i];
		if (!w->drain_ran)
			continue;
		ran = true;
		finished &= w->drain_finished;
		timed_out |= w->drain_timed_out;
		ms = w->drain_ms > ms ? w->drain_ms : ms;
		left += w->drain_left;
	}
	if (!ran)
		return;
	if (finished)
		printf("%s: drained in %.0f ms\n", who, ms);
	else if (timed_out)
		printf("%s: drain-timeout after %.0f ms: closing %u connections\n", who, ms, left);
	else
		printf("%s: SIGINT: stopping now, %u connections open\n", who, left);
	fflush(stdout);
}

/* workers_run's, on the worker's own thread: run, drain on SIGTERM, then
 * stop what it holds there. */
static int worker_thread(struct worker *wk, void *ctx)
{
	const struct plan *pl = ctx;
	struct sh_worker *w = &shw[wk->id];
	int rc = loop_run(w->loop, &w->wk.stop);
	unsigned drain_s = (unsigned)opt_num(pl->o, OPT_DRAIN_TIMEOUT);
	if (rc == 0 && sh_term && drain_s)
		rc = drain(w, pl, drain_s);
	worker_stop(w);
	return rc;
}

/* Every worker's counters, summed (one worker: its own), for --stats,
 * --metrics and `skiff stat`.  Another worker's are read in place, as
 * serve's are (admin_host.h says why that is sound). */
static void all_stats(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx)
{
	const struct plan *pl = ctx;
	/* Summed by name even for one worker: two proxy routes each give
	 * proxy.* (and an upstream they share its lines), one name each on
	 * the page. */
	struct stat_sum sum = {0};
	for (unsigned i = 0; i < pl->n; i++) {
		stat_sum_source(&sum);
		worker_stats(&shw[i], stat_sum_add, &sum);
	}
	stat_sum_emit(&sum, fn, fctx);
	stat_sum_free(&sum);
	elog_stats(fn, fctx);
}

/* --trace's histograms on /metrics: the workers' merged. */
static void all_hists(void *ctx, struct prom_out *o)
{
	const struct plan *pl = ctx;
	struct sk_trace *t[WORKERS_MAX];
	for (unsigned i = 0; i < pl->n; i++)
		t[i] = &shw[i].trace;
	trace_prom(o, t, pl->n);
}

/* --trace at exit: the workers' histograms merged, their requests (every
 * listener's engine) and, on skiff's stack, their devices' system calls. */
static void trace_exit(const struct plan *pl, const struct tsc_cal *cal)
{
	struct sk_trace *t = calloc(1, sizeof(*t));
	if (!t)
		return;
	struct sk_trace *tv[WORKERS_MAX];
	struct dev_stats ds = {0};
	uint64_t req = 0;
	for (unsigned i = 0; i < pl->n; i++) {
		struct sh_worker *w = &shw[i];
		tv[i] = &w->trace;
		for (unsigned k = 0; k < w->nlst; k++)
			req += w->lst[k].app.st.requests;
		if (pl->on_skiff) {
			const struct dev_stats *d = serve_skiff_dev_stats(w->loop);
			ds.rx_syscalls += d->rx_syscalls;
			ds.tx_syscalls += d->tx_syscalls;
		}
	}
	trace_merge(t, tv, pl->n);
	trace_print(cal, t, req, pl->on_skiff ? &ds : NULL, stdout);
	free(t);
}

static void all_conns(void *ctx, FILE *f)
{
	const struct plan *pl = ctx;
	if (pl->on_skiff) {
		if (pl->n > 1)
			fprintf(f, "# worker 0 of %u (each worker has its own TCP table)\n", pl->n);
		serve_skiff_conns(shw[0].loop, f);
	} else {
		fprintf(f, "# connections: the kernel's (--stack linux): ss -tin\n");
	}
}

static void print_addr(const struct sconf_listen *ls, char ab[64])
{
	if (ls->any)
		snprintf(ab, 64, "*");
	else
		cli_format_ipv4((uint32_t)ls->addr.b[12] << 24 | (uint32_t)ls->addr.b[13] << 16 |
				(uint32_t)ls->addr.b[14] << 8 | ls->addr.b[15], ab);
}

/* The ready line of a file: its sites and listeners. */
static void ready_file(const struct plan *pl, const struct sconf *c, const struct sh_worker *w0,
		       const char *devb)
{
	printf("%s: %s: %u sites on", who, pl->path, c->nsites);
	for (unsigned i = 0; i < c->nlisten; i++) {
		char ab[64];
		print_addr(&c->listen[i], ab);
		printf(" %s:%u%s", ab, c->listen[i].port, c->listen[i].tls ? "(tls)" : "");
	}
	printf(" stack=%s%s max_conns=%u workers=%u", w0->loop->name, devb, c->max_conns, pl->n);
}

/* The ready line of the flags: serve --root's, as scripts read it
 * ("listening on ADDR:PORT ... https=P ip6=... root=DIR files=N ..."). */
static void ready_flags(const struct plan *pl, const struct sconf *c, const struct sh_worker *w0,
			const char *devb)
{
	const struct opts *o = pl->o;
	char ab[64];
	if (c->listen[0].any)
		snprintf(ab, sizeof(ab), "0.0.0.0");
	else
		print_addr(&c->listen[0], ab);
	printf("%s: listening on %s:%u stack=%s%s max_conns=%u", who, ab, c->listen[0].port,
	       w0->loop->name, devb, c->max_conns * pl->n);
	if (pl->n > 1 || opt_given(o, OPT_WORKERS))
		printf(" workers=%u", pl->n);
	if (c->nlisten > 1)
		printf(" https=%u", c->listen[1].port);
	const struct iface_config *ic = &pl->scfg.stack.ifc;
	for (unsigned i = 0; pl->on_skiff && i < ic->nip6; i++) {
		char a6[OPT_ADDR_STRLEN];
		struct sk_addr a = sk_addr_v6(ic->ip6_addr[i].addr.b);
		opt_format_addr(&a, c->listen[0].port, a6);
		printf(" ip6=%s", a6);
	}
	if (pl->on_skiff && ic->ip6_slaac)
		printf(" ip6=auto");
	if (w0->gen->nfiles) {
		struct file_cache_info fi;
		file_cache_info(w0->gen->files[0]->fc, &fi);
		printf(" root=%s files=%zu bytes=%llu mapped=%llu maps=%zu gen=%llu",
		       w0->gen->files[0]->root, fi.files, (unsigned long long)fi.bytes,
		       (unsigned long long)fi.mapped, fi.maps, (unsigned long long)fi.gen);
	}
}

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		sh_term = 1;
	/* SIGINT sets drain_stop too: immediate, before or during a drain. */
	workers_signal_stop(sig, sig != SIGTERM);
}

static void on_hup(int sig)
{
	(void)sig;
	workers_signal_reload();
}

int sites_host_run(struct opts *o, const struct http_app_def *app, const char *name)
{
	char err[512];
	app_def = app;
	if (name)
		who = name;
	struct plan pl = {.o = o, .path = opt_str(o, OPT_CONFIG)};
	plan_run = &pl;
	/* What the file says, the flags must not say too: one source each. */
	static const uint8_t site_flags[] = {
		OPT_PORT,      OPT_ROOT,           OPT_CACHE_CONTROL,   OPT_TLS_CERT,
		OPT_TLS_KEY,   OPT_TLS_PORT,       OPT_TLS_REDIRECT,    OPT_TLS_SNI,
		OPT_MAX_CONNS, OPT_HEADER_TIMEOUT, OPT_KEEPALIVE_TIMEOUT, OPT_MAX_BODY,
		OPT_ACCESS_LOG, OPT_WORKERS,       OPT_ERROR_LOG,       OPT_ACCESS_LOG_FORMAT,
		OPT_BODY_TIMEOUT, OPT_SEND_TIMEOUT, OPT_HTTP2,      OPT_TLS_ALPN};
	for (size_t i = 0; pl.path && i < sizeof(site_flags); i++)
		if (opt_given(o, site_flags[i]))
			cli_usage_error(o->cmd->name, "--%s: with --config the file says this (see "
					"docs/config.md)", opt_defs[site_flags[i]].name);
	/* The flags' checks the model cannot express (exit 2, as a bad
	 * option): the --tls-* together, a TLS port of its own, a log format
	 * with its log. */
	if (!pl.path) {
		tls_flags_wanted(o);
		if (!opt_given(o, OPT_ACCESS_LOG) && opt_given(o, OPT_ACCESS_LOG_FORMAT))
			cli_usage_error(o->cmd->name, "access-log-format goes with access-log");
	}
	pl.on_skiff = opt_given(o, OPT_STACK) ? opt_num(o, OPT_STACK) == 0 : opt_given(o, OPT_DEV);
	pl.tracing = opt_given(o, OPT_TRACE); /* the process's, not the sites': a flag */
	pl.scfg = (struct serve_skiff_config){.stack = {.tcp = true}};
	/* The stack's flags with the other stack are mistakes, as serve's. */
	if (pl.on_skiff) {
		static const uint8_t linux_only[] = {OPT_SENDFILE};
		cli_check(opt_only_with(o, linux_only, sizeof(linux_only),
					"stack linux (skiff's stack sends from the mapping)", err,
					sizeof(err)),
			  o->cmd->name, err);
	} else {
		static const uint8_t skiff_only[] = {OPT_DEV,     OPT_GW,         OPT_MAC,
						     OPT_PCAP,    OPT_SPIN_US,    OPT_TCP_SNDBUF,
						     OPT_TCP_RCVBUF, OPT_IP6,     OPT_GW6,
						     OPT_TCP_CC,  OPT_TCP_BUF_MAX, OPT_TCP_MEM};
		cli_check(opt_only_with(o, skiff_only, sizeof(skiff_only),
					"stack skiff (stack linux uses the kernel's interfaces)", err,
					sizeof(err)),
			  o->cmd->name, err);
	}
	/* --metrics off loopback only with --metrics-allow-remote, as serve. */
	cli_check(opt_check_metrics(o, err, sizeof(err)), o->cmd->name, err);
	if (pl.on_skiff) {
		hoststack_options(&pl.scfg.stack, o);
		pl.scfg.tcp_sndbuf = (uint32_t)opt_num(o, OPT_TCP_SNDBUF);
		pl.scfg.tcp_rcvbuf = (uint32_t)opt_num(o, OPT_TCP_RCVBUF);
	}
	struct parsed p;
	if (load(&pl, &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		return 1;
	}
	const struct sconf *c = &p.conf;
	if (elog_open(who, c->error_log, (enum sk_log_level)opt_num(o, OPT_LOG_LEVEL), err,
		      sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		free(p.arena);
		return 1;
	}
	if (!pl.on_skiff) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64 &&
		    (uint64_t)p.conf.max_conns * p.conf.nlisten > rl.rlim_cur - 32) {
			uint32_t cap = (uint32_t)((rl.rlim_cur - 32) / p.conf.nlisten);
			fprintf(stderr, "%s: max-conns %u is above the open-files limit; using %u\n",
				who, p.conf.max_conns, cap);
			p.conf.max_conns = cap;
		}
	}
	int cpus[WORKERS_MAX];
	unsigned ncpus;
	pl.n = workers_plan(c->workers == SCONF_WORKERS_AUTO ? OPT_NUM_AUTO : c->workers,
			    pl.on_skiff ? opt_str(o, OPT_DEV) : NULL, who, cpus, &ncpus);
	/* One pcap file has one writer; IPv6 neighbour discovery is not
	 * shared between workers (docs/smp.md). */
	if (pl.n > 1 && opt_given(o, OPT_PCAP))
		cli_usage_error(o->cmd->name, "pcap goes with workers 1 (one file, one writer)");
	if (pl.n > 1 && pl.on_skiff && pl.scfg.stack.ifc.ip6)
		cli_usage_error(o->cmd->name, "ip6 goes with workers 1 on stack skiff: IPv6 neighbour "
					      "discovery is not shared between workers (docs/smp.md)");
	if (pl.n > 1 && app && !app->workers) {
		fprintf(stderr, "%s: %s: workers %u: this application's handlers share state "
			"unguarded (http_app_def.workers is false): workers 1 only\n", who,
			pl.path ? pl.path : "--workers", pl.n);
		free(p.arena);
		return 1;
	}
	static struct nbr_board board;
	if (pl.n > 1 && pl.on_skiff) {
		uint64_t seed;
		if (plat_random(&seed, sizeof(seed)) < 0) {
			fprintf(stderr, "%s: no randomness\n", who);
			free(p.arena);
			return 1;
		}
		nbr_board_init(&board, seed);
		pl.board = &board;
	}
	if (pl.n > 1)
		p.conf.max_conns = (p.conf.max_conns + pl.n - 1) / pl.n;
	max_conns_run = p.conf.max_conns;
	/* sendfile (--stack linux, --sendfile on): mapped files keep their
	 * descriptors within a budget, as serve --root's (serve.c says why
	 * these numbers); each folder's tree at most half of it per worker. */
	if (!pl.on_skiff && opt_num(o, OPT_SENDFILE) == 0) {
		struct rlimit rl;
		uint64_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
		uint64_t need = (uint64_t)p.conf.max_conns * pl.n * p.conf.nlisten + 256;
		uint64_t budget = lim / 4;
		if (budget > 65536)
			budget = 65536;
		if (lim < need + budget)
			budget = lim > need ? lim - need : 0;
		file_cache_keep_fds((size_t)budget, (size_t)(budget / 2 / pl.n));
	}
	struct tsc_cal cal = {0};
	if (pl.tracing)
		trace_start(&cal);
	struct sh_worker *ws = calloc(pl.n, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "%s: out of memory\n", who);
		free(p.arena);
		return 1;
	}
	shw = ws;
	int rc = 0;
	unsigned built = 0;
	for (unsigned i = 0; i < pl.n && rc == 0; i++, built++) {
		ws[i].wk.id = i;
		ws[i].wk.cpu = workers_cpu(i, pl.n, cpus, ncpus);
		workers_publish(ws, sizeof(*ws), offsetof(struct sh_worker, wk), i + 1);
		if (worker_open(&ws[i], &ws[0], &pl, &p, err, sizeof(err)) < 0) {
			if (pl.path)
				fprintf(stderr, "%s: %s: %s\n", who, pl.path, err);
			else
				fprintf(stderr, "%s: %s\n", who, err);
			rc = 1;
		} else if (i == 0 && pl.n > 1 && pl.on_skiff && ws[0].gen->nproxies &&
			   !serve_skiff_flow_steered(ws[0].loop)) {
			/* The answers to a worker's own upstream connections would
			 * reach whichever worker the device's hash picks (xdp; a TAP
			 * whose steering program could not be loaded). */
			fprintf(stderr, "%s: %s does not steer by skiff's flow hash: the workers' own "
					"connections would not get their answers; use workers 1 or "
					"another device (docs/smp.md)\n", who, opt_str(o, OPT_DEV));
			rc = 1;
		}
	}
	if (rc) {
		workers_publish(NULL, 0, 0, 0);
		for (unsigned i = 0; i < built; i++)
			worker_free(&ws[i]);
		free(ws);
		return rc;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction hup = {.sa_handler = on_hup};
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct sh_worker *w0 = &ws[0];
	struct admin_source src = {.stats = all_stats, .hists = pl.tracing ? all_hists : NULL,
				   .conns = all_conns, .ctx = &pl};
	struct admin *adm = admin_start(&src, w0->loop, pl.on_skiff, o, who);
	char devb[160] = " dev=kernel";
	if (pl.on_skiff) {
		serve_skiff_describe(w0->loop, devb, sizeof(devb));
		serve_skiff_announce(w0->loop);
	}
	const struct sconf *cc = w0->gen->g.conf;
	if (pl.path)
		ready_file(&pl, cc, w0, devb);
	else
		ready_flags(&pl, cc, w0, devb);
	if (opt_given(o, OPT_METRICS)) {
		char mb[16];
		cli_format_ipv4(o->v[OPT_METRICS].ip, mb);
		printf(" metrics=%s:%u", mb, (unsigned)o->v[OPT_METRICS].num);
	}
	if (admin_control_path(adm))
		printf(" control=%s", admin_control_path(adm));
	printf("\n");
	fflush(stdout);
	rc = workers_run(worker_thread, &pl, who, NULL);
	drain_report(&pl);
	workers_publish(NULL, 0, 0, 0);
	admin_close(adm);
	if (opt_given(o, OPT_STATS)) {
		all_stats(&pl, print_stat, stdout); /* the list /metrics serves */
		/* Then each worker's own, "workerK.NAME value" (serve's shape). */
		for (unsigned i = 0; pl.n > 1 && i < pl.n; i++) {
			struct stat_sum_prefix px = {.fn = print_stat, .ctx = stdout, .k = i};
			worker_stats(&shw[i], stat_sum_prefixed, &px);
		}
	}
	if (pl.tracing)
		trace_exit(&pl, &cal);
	fflush(stdout);
	for (unsigned i = 0; i < pl.n; i++)
		worker_free(&ws[i]);
	free(ws);
	shw = NULL;
	elog_close();
	return rc < 0 ? 1 : 0;
}
