/* serve_admin.h — what `skiff serve` shows through apps/admin.h (--metrics,
 * the control socket for `skiff stat`) and prints for --stats: one list of
 * its counters, whichever way they leave. */
#ifndef APPS_SERVE_ADMIN_H
#define APPS_SERVE_ADMIN_H

#include "../base/hist.h"
#include "../http/server.h"
#include "access_log.h"
#include "admin.h"
#include "../conf/opts.h"
#include "serve_files.h"
#include "serve_tls.h"

/* The running server's parts (pointers it owns; NULL where absent). */
struct serve_view {
	struct http_server *srv;
	struct serve_tls *tls;    /* NULL, or one whose srv is NULL: no HTTPS */
	struct access_log *alog;
	struct file_cache *fc;
	struct loop *loop;
	bool on_skiff;
	struct sk_trace *trace;   /* --trace: its histograms go to /metrics */
	bool skip_log;            /* leave out log.* (the process's, counted once) */
};

/* serve --workers: every worker's view (docs/smp.md).  Each worker's
 * counters are written by its own thread only; this reads them from
 * another (the admin's worker 0, or the main thread at exit) without a
 * lock: 64-bit aligned loads, so a value is never torn, only a little
 * behind. */
#define SERVE_MAX_WORKERS 64
struct serve_multi {
	struct serve_view *v[SERVE_MAX_WORKERS];
	unsigned n;
	bool per_worker; /* also "workerK.NAME value" after the sums (--stats) */
};

/* One worker: serve_view_stats.  More: each name once, summed over the
 * workers (log.* once), then with per_worker each worker's own. */
void serve_multi_stats(void *multi, admin_stat_fn *fn, void *fctx);

/* Every counter: HTTPS (https.*, tls.*), http.*, access_log.*, log.*, files.*,
 * then the stack's (device, runner, interface, TCP, loop) or the kernel
 * loop's. */
void serve_view_stats(void *view, admin_stat_fn *fn, void *fctx);

/* --metrics and --control from o: NULL when neither is wanted (or the
 * default control socket could not be made: a warning on stderr), else
 * the admin, already watched by the loop.  Exits 1 on an explicit option
 * that cannot be served. */
struct admin *serve_admin_start(struct serve_multi *m, const struct opts *o);

/* The same for any server: src shows it, on loop (worker 0's; on_skiff:
 * skiff's stack, whose runner watches the admin's fd), `what` names it
 * in messages and in `skiff stat`'s header. */
struct admin *admin_start(const struct admin_source *src, struct loop *loop, bool on_skiff,
			  const struct opts *o, const char *what);

#endif
