/* serve_skiff.h — `skiff serve --stack skiff`: the loop API on skiff's own
 * stack in a Linux process.  A hoststack (device, interface, TCP engine)
 * under loop/loop_skiff.c, turned by the runner (runner/runner.h).  serve.c builds the
 * same HTTP server on the loop this returns as on loop_linux. */
#ifndef APPS_SERVE_SKIFF_H
#define APPS_SERVE_SKIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../dev/dev.h"
#include "../loop/loop.h"
#include "hoststack.h"

struct serve_skiff_config {
	/* Device, interface and spin, from hoststack_options; tcp and the
	 * socket pool are set by serve_skiff_open. */
	struct hoststack_config stack;
	uint32_t max_conns;    /* the server's; TCP sockets are sized from it */
	uint32_t max_timers;   /* the server's timers */
	uint32_t tcp_sndbuf, tcp_rcvbuf; /* bytes per socket */
	struct sk_trace *trace; /* --trace: given to the runner and the TCP engine */
};

/* Open the device and the stack and build the loop; loop_destroy() closes
 * everything.  NULL with a one-line reason in err. */
struct loop *serve_skiff_open(const struct serve_skiff_config *cfg, char *err, size_t errlen);

/* " dev=tap:sk0 mac=02:..:..": the part of the ready line that names the
 * device. */
void serve_skiff_describe(struct loop *l, char *buf, size_t len);

/* The MAC the device and the interface use (serve --workers: every
 * worker's stack takes worker 0's). */
const uint8_t *serve_skiff_mac(struct loop *l);

/* Announce this host on the link (gratuitous ARP), once ready. */
void serve_skiff_announce(struct loop *l);

/* The counters for --stats: hoststack_print_stats (device, runner,
 * interface, TCP), then the backend's own. */
void serve_skiff_print_stats(struct loop *l, FILE *f);
/* The same counters through fn. */
void serve_skiff_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v),
		       void *ctx);

/* TCP connections whose data or FIN the peer has not yet acknowledged
 * (handshaking, ESTABLISHED, FIN_WAIT_1, CLOSE_WAIT, CLOSING, LAST_ACK).
 * The kernel delivers what a closed socket still holds after its process
 * exits; skiff's stack lives in the process, so a drain waits for this to
 * reach 0 before it exits.  O(sockets): for the end of a drain only. */
uint32_t serve_skiff_unfinished(struct loop *l);

/* Wait on fd too, and run fn(ctx, now) when it is readable (runner.h's
 * side fd): the admin sockets (host/admin.h). */
void serve_skiff_set_side(struct loop *l, int fd, void (*fn)(void *ctx, sk_time_ns now),
			  void *ctx);

/* Every TCP socket of the engine, one line each as `ss -tin` shows
 * them, for `skiff stat`: one walk of the pool per call. */
void serve_skiff_conns(struct loop *l, FILE *f);

/* The device's counters (for --trace's system calls per request). */
const struct dev_stats *serve_skiff_dev_stats(struct loop *l);

/* Whether the device steers frames by skiff's flow hash (dev.h's
 * flow_steered): what connections a worker opens itself need. */
bool serve_skiff_flow_steered(struct loop *l);

#endif
