/* app_host.h — the hosted run of an application on http/app.h (app_host.c):
 * options, stack, engine, signals, --stats.  skiff_app_main is this with
 * the application options alone; `skiff proxy` adds its own through the
 * hooks, so both share one host and one option table's stack handling. */
#ifndef APPS_APP_HOST_H
#define APPS_APP_HOST_H

#include "../http/app.h"
#include "opts.h"

struct app_host_hooks {
	const struct opt_cmd *cmd; /* the command's options (a superset of opt_cmd_app's) */
	/* After parsing, with the engine's config final (max_conns clamped to
	 * the descriptors): the application sets itself up and may change
	 * cfg's buffer sizes, and ask for *extra_socks TCP sockets beyond one
	 * per connection (its own connections on skiff's stack).  0, or an
	 * exit status (the message printed). */
	int (*setup)(void *ctx, const struct opts *o, struct http_app_config *cfg,
		     uint32_t *extra_socks);
	/* --stats: the application's counters, after the engine's. */
	void (*stats)(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v),
		      void *fctx);
	/* After http_app_stop: close what the application holds. */
	void (*stop)(void *ctx);
	void *ctx;
};

int app_host_run(const struct http_app_def *def, const struct app_host_hooks *h, int argc,
		 char **argv);

#endif
