/* admin_host.c — see admin_host.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../elog/elog.h"
#include "admin_host.h"
#include "serve_skiff.h"

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
