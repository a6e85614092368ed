/* netloop.c — see netloop.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../base/hist.h"
#include "../plat/plat.h"
#include "netloop.h"

#define NETLOOP_EVENTS 64

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#endif
}

static sk_time_ns next_deadline(const struct netloop *l)
{
	sk_time_ns d = iface_next_deadline(l->ifc);
	if (l->tcp) {
		sk_time_ns t = tcp_next_deadline(l->tcp);
		if (t < d)
			d = t;
	}
	if (l->app_deadline) {
		sk_time_ns a = l->app_deadline(l->ctx);
		if (a < d)
			d = a;
	}
	return d;
}

/* The TCP engine and the application, until neither has more to do now.
 * Returns the number of events handed over. */
static unsigned run_tcp(struct netloop *l, sk_time_ns now)
{
	struct tcp_event ev[NETLOOP_EVENTS];
	unsigned total = 0;
	if (tcp_next_deadline(l->tcp) <= now)
		tcp_poll(l->tcp, now);
	/* Bounded: an application that keeps making events (e.g. echoing to
	 * itself) must not starve the device; what is left waits a turn. */
	for (int round = 0; round < 16; round++) {
		int n = tcp_events(l->tcp, ev, NETLOOP_EVENTS);
		if (n <= 0)
			break;
		total += (unsigned)n;
		if (l->on_tcp)
			l->on_tcp(l->ctx, l, ev, n, now);
		if (tcp_next_deadline(l->tcp) <= now)
			tcp_poll(l->tcp, now);
	}
	return total;
}

int netloop_run(struct netloop *l, volatile sig_atomic_t *stop)
{
	struct dev *d = l->dev;
	sk_time_ns spin_until = 0;
	/* A stop signal that lands after the last look at *stop but before
	 * ppoll would be slept through (until a frame or a deadline, maybe
	 * never).  So SIGINT/SIGTERM are blocked for the final look and
	 * unblocked only inside ppoll, atomically; busy turns leave them
	 * unblocked and see *stop at the top of the loop. */
	sigset_t stopsigs, run_mask, park_mask;
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigprocmask(SIG_SETMASK, NULL, &run_mask);
	park_mask = run_mask;
	sigdelset(&park_mask, SIGINT);
	sigdelset(&park_mask, SIGTERM);
	while (!*stop) {
		sk_time_ns now = plat_now();
		l->turns++;
		if (l->on_turn)
			l->on_turn(l->ctx, now);
		struct sk_trace *tr = l->trace;
		/* --trace: the device's rx sync per frame it brought (its system
		 * call, if any, and the copy into the ring), then the stack's
		 * walk of the ring per frame (Ethernet, IP, tcp_input). */
		uint64_t t0 = sk_trace_begin(tr);
		int n = dev_rx_sync(d);
		if (n > 0)
			sk_trace_end(tr, SK_TR_rx_sync, t0, (uint64_t)n);
		if (n < 0) {
			fprintf(stderr, "skiff: device %s: rx failed: %s\n", d->name, strerror(-n));
			return -1;
		}
		unsigned work = 0;
		if (ring_avail(d->rx)) {
			t0 = sk_trace_begin(tr);
			work = iface_rx(l->ifc, now);
			sk_trace_end(tr, SK_TR_ring_rx, t0, work);
		}
		if (iface_next_deadline(l->ifc) <= now)
			iface_poll(l->ifc, now);
		if (l->app_timers && l->app_deadline && l->app_deadline(l->ctx) <= now)
			l->app_timers(l->ctx, now);
		if (l->tcp) {
			unsigned ev = run_tcp(l, now);
			l->tcp_events += ev;
			work += ev;
		}
		/* --trace: the tx sync per frame it sent (the system call). */
		t0 = sk_trace_begin(tr);
		n = dev_tx_sync(d);
		if (n > 0)
			sk_trace_end(tr, SK_TR_ring_tx, t0, (uint64_t)n);
		if (n < 0) {
			fprintf(stderr, "skiff: device %s: tx failed: %s\n", d->name, strerror(-n));
			return -1;
		}
		if (work) {
			l->busy_turns++;
			spin_until = now + l->spin_ns;
			continue;
		}
		if (now < spin_until) {
			cpu_relax();
			continue;
		}
		/* Park until a frame or the next deadline.  --trace: from here to
		 * running again after a frame woke us, idle time included. */
		uint64_t t_park = sk_trace_begin(tr);
		sk_time_ns deadline = next_deadline(l);
		if (deadline <= now)
			continue;
		struct timespec ts, *tsp = NULL;
		if (deadline != SK_TIME_NEVER) {
			sk_time_ns wait = deadline - now;
			ts.tv_sec = (time_t)(wait / SK_NS_PER_S);
			ts.tv_nsec = (long)(wait % SK_NS_PER_S);
			tsp = &ts;
		}
		struct pollfd pfd = {.fd = dev_poll_fd(d), .events = POLLIN};
		sigprocmask(SIG_BLOCK, &stopsigs, NULL);
		if (*stop) {
			sigprocmask(SIG_SETMASK, &run_mask, NULL);
			break;
		}
		l->parks++;
		int r = ppoll(&pfd, pfd.fd >= 0 ? 1 : 0, tsp, &park_mask);
		int perr = errno;
		sigprocmask(SIG_SETMASK, &run_mask, NULL);
		errno = perr;
		if (r > 0) {
			l->wakeups_frame++;
			sk_trace_end(tr, SK_TR_park_wake, t_park, 1);
		}
		else if (r == 0)
			l->wakeups_timer++;
		else if (errno != EINTR) {
			fprintf(stderr, "skiff: ppoll: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

void netloop_print_stats(const struct netloop *l, void *file)
{
	FILE *f = file;
	fprintf(f, "loop.turns %llu\n", (unsigned long long)l->turns);
	fprintf(f, "loop.busy_turns %llu\n", (unsigned long long)l->busy_turns);
	fprintf(f, "loop.parks %llu\n", (unsigned long long)l->parks);
	fprintf(f, "loop.wakeups_frame %llu\n", (unsigned long long)l->wakeups_frame);
	fprintf(f, "loop.wakeups_timer %llu\n", (unsigned long long)l->wakeups_timer);
	fprintf(f, "loop.tcp_events %llu\n", (unsigned long long)l->tcp_events);
}
