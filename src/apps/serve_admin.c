/* serve_admin.c — see serve_admin.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plat/linux/elog.h"
#include "serve_admin.h"
#include "serve_skiff.h"

void serve_view_stats(void *view, admin_stat_fn *fn, void *fctx)
{
	struct serve_view *v = view;
	if (v->tls)
		serve_tls_stats(v->tls, fn, fctx);
	http_server_stats(v->srv, fn, fctx);
	if (v->alog)
		access_log_stats(v->alog, fn, fctx);
	elog_stats(fn, fctx);
	if (v->fc) {
		struct file_cache_info fi;
		file_cache_info(v->fc, &fi);
		fn(fctx, "files.truncated_pages", fi.truncated_pages);
	}
	if (v->on_skiff)
		serve_skiff_stats(v->loop, fn, fctx);
	else
		loop_stats(v->loop, fn, fctx);
}

static void view_hists(void *view, struct prom_out *o)
{
	struct serve_view *v = view;
	if (!v->trace)
		return;
	for (int s = 0; s < SK_TR_N; s++) {
		char name[64], help[160];
		snprintf(name, sizeof(name), "trace.%s", sk_trace_names[s]);
		snprintf(help, sizeof(help),
			 "--trace stage %s in TSC cycles per item (docs/cost.md)", sk_trace_names[s]);
		prom_hist(o, name, "cycles", help, &v->trace->h[s]);
	}
}

static void view_conns(void *view, FILE *f)
{
	struct serve_view *v = view;
	if (v->on_skiff)
		serve_skiff_conns(v->loop, f);
	else
		fprintf(f, "# connections: the kernel's (--stack linux): ss -tin 'sport = :%u'\n",
			v->srv->cfg.port);
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

struct admin *serve_admin_start(struct serve_view *v, const struct opts *o)
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
		.what = "skiff serve",
		.src = {.stats = serve_view_stats, .hists = view_hists, .conns = view_conns, .ctx = v},
	};
	if (!ac.metrics && !ac.control)
		return NULL;
	struct admin *a = admin_open(&ac, v->loop, err, sizeof(err));
	if (!a && control_default && ac.control) {
		/* The default socket is a convenience: serve without it. */
		elog(SK_LOG_WARN, "control", "%s (skiff stat will not find this process)", err);
		ac.control = NULL;
		if (!ac.metrics)
			return NULL;
		a = admin_open(&ac, v->loop, err, sizeof(err));
	}
	if (!a) {
		fprintf(stderr, "skiff serve: %s\n", err);
		exit(1);
	}
	if (v->on_skiff) {
		serve_skiff_set_side(v->loop, admin_fd(a), on_side, a);
	} else if (loop_watch(v->loop, admin_fd(a), on_admin_fd, a) < 0) {
		fprintf(stderr, "skiff serve: cannot watch the admin sockets\n");
		exit(1);
	}
	return a;
}
