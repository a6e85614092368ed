/* serve_admin.h — what `skiff serve` shows through apps/admin.h (--metrics,
 * the control socket for `skiff stat`) and prints for --stats: one list of
 * its counters, whichever way they leave. */
#ifndef APPS_SERVE_ADMIN_H
#define APPS_SERVE_ADMIN_H

#include "../base/hist.h"
#include "../http/server.h"
#include "access_log.h"
#include "admin.h"
#include "opts.h"
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
};

/* Every counter: HTTPS (https.*, tls.*), http.*, access_log.*, log.*, files.*,
 * then the stack's (device, runner, interface, TCP, loop) or the kernel
 * loop's. */
void serve_view_stats(void *view, admin_stat_fn *fn, void *fctx);

/* --metrics and --control from o: NULL when neither is wanted (or the
 * default control socket could not be made: a warning on stderr), else
 * the admin, already watched by the loop.  Exits 1 on an explicit option
 * that cannot be served. */
struct admin *serve_admin_start(struct serve_view *v, const struct opts *o);

#endif
