/* serve_admin.c — see serve_admin.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../elog/elog.h"
#include "serve_admin.h"
#include "serve_skiff.h"
#include "stat_sum.h"
#include "trace_print.h"

void serve_view_stats(void *view, admin_stat_fn *fn, void *fctx)
{
	struct serve_view *v = view;
	if (v->tls)
		serve_tls_stats(v->tls, fn, fctx);
	http_server_stats(v->srv, fn, fctx);
	if (v->alog)
		access_log_stats(v->alog, fn, fctx);
	if (!v->skip_log)
		elog_stats(fn, fctx);
	if (v->fc) {
		struct file_cache_info fi;
		file_cache_info(v->fc, &fi);
		fn(fctx, "files.truncated_pages", fi.truncated_pages);
		/* Descriptors kept for sendfile (--stack linux; 0: writev). */
		fn(fctx, "files.sendfile_fds", fi.fds);
	}
	if (v->on_skiff)
		serve_skiff_stats(v->loop, fn, fctx);
	else
		loop_stats(v->loop, fn, fctx);
}

void serve_multi_stats(void *multi, admin_stat_fn *fn, void *fctx)
{
	struct serve_multi *m = multi;
	if (m->n <= 1) {
		serve_view_stats(m->v[0], fn, fctx);
		return;
	}
	struct stat_sum sum = {0};
	for (unsigned k = 0; k < m->n; k++) {
		stat_sum_source(&sum);
		m->v[k]->skip_log = k > 0;
		serve_view_stats(m->v[k], stat_sum_add, &sum);
	}
	stat_sum_emit(&sum, fn, fctx);
	stat_sum_free(&sum);
	for (unsigned k = 0; m->per_worker && k < m->n; k++) {
		struct stat_sum_prefix w = {.fn = fn, .ctx = fctx, .k = k};
		m->v[k]->skip_log = true;
		serve_view_stats(m->v[k], stat_sum_prefixed, &w);
	}
}

static void view_hists(void *multi, struct prom_out *o)
{
	struct serve_multi *m = multi;
	if (!m->v[0]->trace)
		return;
	struct sk_trace *t[SERVE_MAX_WORKERS];
	for (unsigned k = 0; k < m->n; k++)
		t[k] = m->v[k]->trace;
	trace_prom(o, t, m->n);
}

static void view_conns(void *multi, FILE *f)
{
	struct serve_multi *m = multi;
	struct serve_view *v = m->v[0];
	if (v->on_skiff) {
		/* Another worker's TCP table is its thread's, changing as we would
		 * read it: only worker 0's (the one this runs on). */
		if (m->n > 1)
			fprintf(f, "# worker 0 of %u (each worker has its own TCP table)\n", m->n);
		serve_skiff_conns(v->loop, f);
	} else {
		fprintf(f, "# connections: the kernel's (--stack linux): ss -tin 'sport = :%u'\n",
			v->srv->cfg.port);
	}
}

static void on_side(void *ctx, sk_time_ns now)
{
	admin_poll(ctx, now);
}

static void on_admin_fd(void *user, int sock, unsigned events, sk_time_ns now)
{
	(void)sock;
	(void)events;
	admin_poll(user, now);
}

struct admin *admin_start(const struct admin_source *src, struct loop *loop, bool on_skiff,
			  const struct opts *o, const char *what)
{
	char path[108], err[256];
	const char *control = opt_str(o, OPT_CONTROL);
	bool control_default = !control;
	if (control && strcmp(control, "none") == 0)
		control = NULL;
	else if (!control) {
		admin_default_control(path, sizeof(path), (long)getpid());
		control = path;
	}
	struct admin_config ac = {
		.metrics = opt_given(o, OPT_METRICS),
		.metrics_ip = o->v[OPT_METRICS].ip,
		.metrics_port = (uint16_t)o->v[OPT_METRICS].num,
		.control = control,
		.what = what,
		.src = *src,
	};
	if (!ac.metrics && !ac.control)
		return NULL;
	struct admin *a = admin_open(&ac, loop, err, sizeof(err));
	if (!a && control_default && ac.control) {
		/* The default socket is a convenience: serve without it. */
		elog(SK_LOG_WARN, "control", "%s (skiff stat will not find this process)", err);
		ac.control = NULL;
		if (!ac.metrics)
			return NULL;
		a = admin_open(&ac, loop, err, sizeof(err));
	}
	if (!a) {
		fprintf(stderr, "%s: %s\n", what, err);
		exit(1);
	}
	if (on_skiff) {
		serve_skiff_set_side(loop, admin_fd(a), on_side, a);
	} else if (loop_watch(loop, admin_fd(a), on_admin_fd, a) < 0) {
		fprintf(stderr, "%s: cannot watch the admin sockets\n", what);
		exit(1);
	}
	return a;
}

struct admin *serve_admin_start(struct serve_multi *m, const struct opts *o)
{
	struct admin_source src = {.stats = serve_multi_stats, .hists = view_hists,
				   .conns = view_conns, .ctx = m};
	return admin_start(&src, m->v[0]->loop, m->v[0]->on_skiff, o, "skiff serve");
}
