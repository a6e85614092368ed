/* uk_sites.h — the unikernel's runtime of a configuration file
 * (`skiff vm --config FILE`, docs/unikernel.md): the guest's counterpart of
 * host/sites_host.c.  The boot module is a bundle (archive/site_bundle.h):
 * the file's text, a site archive per `files` folder, the PEM files.
 *
 * It runs the boot words too, without a configuration (`skiff vm --root
 * DIR`, or nothing: the built-in page): uk_sites_setup_words fills the
 * same model from them, as `skiff serve`'s flags fill it hosted.
 *
 * uk_main.c calls, in this order (each failure prints its reason on the
 * console and stops the boot):
 *   uk_sites_setup   parse the file (or uk_sites_setup_words: the words) (conf/sites_conf.h, the same parser
 *                    `skiff serve --config` runs, its arena from the heap),
 *                    refuse what the guest cannot do, open the archives,
 *                    set up the proxies; say what TCP and the loop need;
 *   uk_sites_start   on the loop: the TLS listeners' BearSSL contexts and
 *                    TLS loops, one app engine (http/app.h) per listener
 *                    routed by router/sites.h;
 *   uk_sites_late    the proxies' caches, after every other allocation.
 * Then uk_sites_set_date each second, uk_sites_stats, on the shutdown
 * port's "exit" uk_sites_drain, and uk_sites_stop.
 *
 * One model (the guest runs one configuration: the file's, or the
 * words'), and one instance of the runtime per vCPU that serves it:
 * worker 0's from the setup, every listener; each other worker's from
 * uk_sites_worker, every listener too. */
#ifndef APPS_UK_SITES_H
#define APPS_UK_SITES_H

#include "../conf/opts.h"
#include "../http/app.h"
#include "../loop/loop.h"

struct uk_sites_env {
	/* The guest's bump allocator: never NULL (out of memory stops the
	 * boot naming what and the hint). */
	void *(*alloc)(const char *what, size_t size, const char *hint);
	int64_t wall_offset; /* wall-clock s = the loop's now in s + this */
	uint32_t gw;         /* the guest's gateway, host order (gw=) */
	/* Every counter of the guest (every vCPU's), for a `metrics;` route,
	 * which any vCPU may serve. */
	void (*all_stats)(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);
	unsigned vcpus; /* the vCPUs that serve (queue pairs): the page's size */
	/* The application linked into this image (its skiff_app), which the
	 * file's `app;` routes run; NULL (skiff-uk.elf): `app;` stops the
	 * boot.  Its init runs once, with the first listener's engine. */
	const struct http_app_def *app;
	/* The engines' runtime errors (http_app_config.error_log): the
	 * guest's error log on the console, rate-limited; ctx is the
	 * instance's (uk_sites_start's error_ctx). */
	void (*error_log)(void *ctx, const char *key, const char *msg);
	/* The proxy's image (build/skiff-proxy-uk.elf, uk/uk_proxy.c): its
	 * words' site is route / { proxy ...; } from upstream= and the proxy's
	 * words (sites_flags.h), which must then be given. */
	bool proxy;
};

/* What the sites need beyond what uk_main.c sizes for itself. */
struct uk_sites_need {
	uint32_t conns;       /* client connections over every listener */
	uint32_t tls_conns;   /* of those, on TLS listeners (each a second timer) */
	uint32_t extra_socks; /* the proxies' upstream connections (sockets and timers) */
	unsigned ntls;        /* TLS listeners (they need RDRAND) */
};

/* Is the boot module a configuration bundle (or a broken one)? */
bool uk_sites_is_bundle(const void *module, uint64_t len);

/* One runtime of the sites on one vCPU: its engines, router, handlers
 * and proxies (the model and the archives are shared, read-only). */
struct uk_sites;

/* Worker 0's instance, or NULL with the reason printed. */
struct uk_sites *uk_sites_setup(const void *module, uint64_t len, const struct opts *o,
				const struct uk_sites_env *env, struct uk_sites_need *need);

/* Without a configuration: the boot words (conf/sites_flags.h's
 * sites_conf_from_guest) and what the module holds besides them. */
struct uk_sites_words {
	const void *site;          /* the site archive (`skiff vm --root`); NULL: the built-in page */
	uint64_t site_len;
	const uint8_t *cert, *key; /* the PEM files (`--tls-cert/--tls-key`); NULL: no HTTPS */
	uint32_t cert_len, key_len;
	uint16_t metrics_port;     /* metrics=PORT, or 0 */
};

/* uk_sites_setup's counterpart for the words: the same checks, handlers
 * and needs; the calls after it are the same. */
struct uk_sites *uk_sites_setup_words(const struct uk_sites_words *w, const struct opts *o,
				      const struct uk_sites_env *env, struct uk_sites_need *need);

/* After a setup, on the boot vCPU: the instance of another vCPU's worker
 * (uk/uk_smp.c), every listener of the model, with what its own TCP and
 * loop need; its TLS listeners get their
 * own engines, sharing worker 0's session cache (BearSSL) or WOLFSSL_CTXs
 * and so ticket key (wolfSSL) by uk_sites_start; then
 * the calls below on it, from its vCPU once it runs.  NULL with the reason
 * printed. */
struct uk_sites *uk_sites_worker(struct uk_sites_need *need);
/* error_ctx: env.error_log's ctx for this instance's engines (each vCPU
 * its own error log: one writer each). */
int uk_sites_start(struct uk_sites *w, struct loop *loop, size_t max_sockets,
		   const struct opts *o, http_access_fn access, void *access_ctx, void *error_ctx);
int uk_sites_late(struct uk_sites *w);
void uk_sites_set_date(struct uk_sites *w, const char *date29);
/* Bytes of the listeners' connection states (the engines' memory). */
size_t uk_sites_engine_bytes(const struct uk_sites *w);
/* The listeners for the ready line: "8080,8443/tls". */
void uk_sites_describe(char *out, size_t cap);
void uk_sites_stats(const struct uk_sites *w,
		    void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);
/* The listeners' engines running, and their client connections. */
unsigned uk_sites_nengines(const struct uk_sites *w);
unsigned uk_sites_nconns(const struct uk_sites *w);
/* http_app_drain on each engine: done(ctx) runs once per engine, when it
 * has no connection left (uk_sites_nengines times in all). */
void uk_sites_drain(struct uk_sites *w, sk_time_ns now, void (*done)(void *ctx), void *ctx);
/* The engines' listeners and connections, then the proxies' upstream
 * connections. */
void uk_sites_stop(struct uk_sites *w);

#endif
