/* admin.h — a running server's side door, for people and Prometheus, kept
 * off the data path: `skiff serve --metrics ADDR:PORT` (GET /metrics: every
 * --stats counter and the --trace histograms in Prometheus' text format,
 * http/prom.h) and the control socket that `skiff stat` reads (the
 * connections and the counters, as text).
 *
 * Both are Linux sockets on the loop's thread, whichever --stack serves:
 *   - the metrics listener is a kernel TCP socket (loopback unless
 *     --metrics-allow-remote), also on --stack skiff: skiff's own stack has
 *     no loopback, and the operator's scraper lives on the host, not on the
 *     data-plane link;
 *   - the control socket is an AF_UNIX stream socket, mode 0600.
 * They and their clients sit in one epoll set of their own, whose fd the
 * loop watches: loop_watch on --stack linux, the runner's side fd on
 * --stack skiff (runner.h), which parks on it with the device and looks at
 * it at most every RUNNER_SIDE_EVERY_NS while busy.  A request costs the
 * server nothing: the counters are read only when somebody asks, on the
 * one thread that writes them, so a scrape sees them consistent.  A stat
 * walks the TCP sockets once per request (tcp_info), never per packet.
 *
 * Each client gets one answer and a close (Connection: close): nothing to
 * keep per client but its buffers; at most ADMIN_CLIENTS at once, and one
 * that has not finished within ADMIN_CLIENT_TIMEOUT_NS is dropped. */
#ifndef APPS_ADMIN_H
#define APPS_ADMIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../http/prom.h"
#include "../loop/loop.h"

#define ADMIN_CLIENTS 8
#define ADMIN_CLIENT_TIMEOUT_NS (5 * SK_NS_PER_S)

typedef void admin_stat_fn(void *ctx, const char *name, uint64_t v);

/* What the server shows.  Called on the loop's thread, from admin_poll. */
struct admin_source {
	/* Every counter, through fn: the --stats enumerations.  Required. */
	void (*stats)(void *ctx, admin_stat_fn *fn, void *fctx);
	/* Histograms (prom_hist) after the counters; NULL: none. */
	void (*hists)(void *ctx, struct prom_out *o);
	/* `skiff stat`'s connection table, one per line; NULL: none. */
	void (*conns)(void *ctx, FILE *f);
	void *ctx;
};

struct admin_config {
	bool metrics;            /* listen for scrapes on metrics_ip:metrics_port */
	uint32_t metrics_ip;     /* host order */
	uint16_t metrics_port;
	const char *control;     /* the control socket's path; NULL: none */
	const char *what;        /* "skiff serve": names the process in stat's header */
	struct admin_source src;
};

struct admin;

/* Open the sockets.  NULL with a one-line reason in err. */
struct admin *admin_open(const struct admin_config *cfg, struct loop *loop, char *err,
			 size_t errlen);
/* The epoll fd to wait on: readable when a socket needs admin_poll. */
int admin_fd(const struct admin *a);
/* Serve whatever is ready; never blocks. */
void admin_poll(struct admin *a, sk_time_ns now);
/* The control socket's path, or NULL (also for a NULL admin). */
const char *admin_control_path(const struct admin *a);
/* Close everything and unlink the control socket.  NULL: nothing. */
void admin_close(struct admin *a);

/* The control socket's default path for process `pid`:
 * $XDG_RUNTIME_DIR/skiff/PID.sock, else /run/skiff/PID.sock as root, else
 * /tmp/skiff-UID/PID.sock.  `skiff stat PID` looks there. */
void admin_default_control(char *buf, size_t len, long pid);

/* `skiff stat PID|SOCKET`. */
int cmd_stat(int argc, char **argv);

#endif
