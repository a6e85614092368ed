/* app_host.h — the hosted run of an application on http/app.h (app_host.c):
 * options, stack, engine, signals, --stats.  skiff_app_main is this with
 * the application options alone; `skiff proxy` adds its own through the
 * hooks, so both share one host and one option table's stack handling. */
#ifndef APPS_APP_HOST_H
#define APPS_APP_HOST_H

#include "../http/app.h"
#include "../conf/opts.h"

struct app_host_hooks {
	const struct opt_cmd *cmd; /* the command's options (a superset of opt_cmd_app's) */
	/* Once per worker (0 first, all on the main thread, before any runs),
	 * with that worker's engine config (max_conns clamped to the
	 * descriptors and shared out among the nworkers): the application
	 * sets up worker `worker`'s state and may change cfg's buffer sizes,
	 * ask for *extra_socks TCP sockets beyond one per connection (its own
	 * connections on skiff's stack), and give the worker its own
	 * definition in *def (routes whose ctx is that worker's state).  0, or
	 * an exit status (the message printed). */
	int (*setup)(void *ctx, const struct opts *o, unsigned worker, unsigned nworkers,
		     struct http_app_config *cfg, uint32_t *extra_socks,
		     const struct http_app_def **def);
	/* --stats: worker `worker`'s application counters, after its engine's. */
	void (*stats)(void *ctx, unsigned worker,
		      void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx);
	/* After worker `worker`'s http_app_stop, on its thread: close what
	 * the application holds there. */
	void (*stop)(void *ctx, unsigned worker);
	void *ctx;
	/* The application opens connections of its own (a proxy's
	 * upstreams): with workers on skiff's stack the device must steer
	 * their answers back by skiff's flow hash, or the host refuses. */
	bool connects;
};

int app_host_run(const struct http_app_def *def, const struct app_host_hooks *h, int argc,
		 char **argv);

#endif
