/* uk_drain.h — the guest's drain on the shutdown port's "exit", as
 * `skiff serve` drains on SIGTERM (host/sites_host.c): http_app_drain on
 * every engine of one instance of the sites runtime, a deadline of
 * drain-timeout, and after the last connection a wait until its TCP has
 * delivered what the closed sockets still hold.
 *
 * One drain runs per vCPU that serves (uk_smp.h): worker 0's from
 * uk_main.c, each other worker's from uk_smp.c on its own vCPU, each on
 * its own loop, sites and TCP stack (engines are not thread-safe), at the
 * same time.  Worker 0 prints the summary; each drain prints its own end
 * line, "skiff-uk: LABELdrained in N ms" or "skiff-uk: LABELdrain-timeout
 * after N ms: closing M connections" (LABEL "" with one vCPU: the lines
 * tests/vm.sh and the docs quote; "cpu K: " with workers). */
#ifndef APPS_UK_DRAIN_H
#define APPS_UK_DRAIN_H

#include "../loop/loop.h"
#include "../net/tcp.h"
#include "uk_sites.h"

/* What one drain did.  Written by the vCPU that drains; another vCPU
 * reads `conns` once `state` (acquire) is UK_DRAIN_BEGUN or later, and
 * the rest once that vCPU has stopped (smp_idle). */
enum uk_drain_state {
	UK_DRAIN_NOT_YET = 0, /* its loop still runs */
	UK_DRAIN_BEGUN,       /* draining: conns is valid */
	UK_DRAIN_NONE,        /* it will not drain (none asked, or its loop failed) */
	UK_DRAIN_ENDED,       /* finished or timed out: every field is valid */
};
struct uk_drain_result {
	volatile int state;   /* enum uk_drain_state; stored with release */
	unsigned conns;       /* client connections when it began */
	unsigned left;        /* still open when it ended (the drain-timeout closes them) */
	bool finished;        /* every engine done, and TCP delivered (not timed out) */
	uint64_t ms;          /* from its beginning to its end */
};

/* Drain sites on loop (whose runner must no longer stop at exit-after:
 * the caller clears its `until`), at most timeout_s seconds; print the
 * end line with label; fill *res.  Returns loop_run's result.  The
 * caller then stops the engines (uk_sites_stop). */
int uk_drain_run(struct loop *loop, struct uk_sites *sites, struct tcp_stack *tcp,
		 unsigned timeout_s, const char *label, struct uk_drain_result *res);

#endif
