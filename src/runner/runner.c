/* runner.c — see runner.h. */
#include "runner.h"

#include "../plat/plat.h"

#define RUNNER_EVENTS 64

static sk_time_ns min_time(sk_time_ns a, sk_time_ns b)
{
	return a < b ? a : b;
}

static sk_time_ns next_deadline(const struct runner *r)
{
	sk_time_ns d = iface_next_deadline(r->ifc);
	if (r->tcp)
		d = min_time(d, tcp_next_deadline(r->tcp));
	if (r->app_deadline)
		d = min_time(d, r->app_deadline(r->ctx));
	return min_time(d, r->until ? r->until : SK_TIME_NEVER);
}

/* The TCP engine and the application, until neither has more to do now.
 * Returns the number of events handed over. */
static unsigned run_tcp(struct runner *r, sk_time_ns now)
{
	struct tcp_event ev[RUNNER_EVENTS];
	unsigned total = 0;
	if (tcp_next_deadline(r->tcp) <= now)
		tcp_poll(r->tcp, now);
	/* Bounded: an application that keeps making events (e.g. echoing to
	 * itself) must not starve the device; what is left waits a turn. */
	for (int round = 0; round < 16; round++) {
		int n = tcp_events(r->tcp, ev, RUNNER_EVENTS);
		if (n <= 0)
			break;
		total += (unsigned)n;
		if (r->on_tcp)
			r->on_tcp(r->ctx, r, ev, n, now);
		if (tcp_next_deadline(r->tcp) <= now)
			tcp_poll(r->tcp, now);
	}
	return total;
}

/* ---- the turn ---- */

static bool wake_arm(void *ctx)
{
	struct dev *d = ctx;
	return d->ops->irq_arm(d);
}

static void wake_disarm(void *ctx)
{
	struct dev *d = ctx;
	d->ops->irq_disarm(d);
}

static int fail(struct runner *r, const char *what, int err)
{
	r->err_what = what;
	r->err = err;
	return -1;
}

int runner_run(struct runner *r, volatile int *stop)
{
	struct dev *d = r->dev;
	spin_init(&r->spin, r->spin_ns, r->spin_learn);
	while (!*stop) {
		sk_time_ns now = plat_now();
		if (r->until && now >= r->until)
			break;
		r->turns++;
		if (r->on_turn)
			r->on_turn(r->ctx, now);
		if (sk_unlikely(r->on_side != NULL) && now >= r->side_next) {
			r->side_next = now + RUNNER_SIDE_EVERY_NS;
			r->on_side(r->side_ctx, now);
		}
		struct sk_trace *tr = r->trace;
		/* --trace: the device's rx sync per frame it brought (its system
		 * call, if any, and the copy into the ring), then the stack's
		 * walk of the ring per frame (Ethernet, IP, tcp_input). */
		uint64_t t0 = sk_trace_begin(tr);
		int n = dev_rx_sync(d);
		if (n > 0)
			sk_trace_end(tr, SK_TR_rx_sync, t0, (uint64_t)n);
		if (n < 0)
			return fail(r, "rx", n);
		unsigned work = 0;
		if (ring_avail(d->rx)) {
			t0 = sk_trace_begin(tr);
			work = iface_rx(r->ifc, now);
			sk_trace_end(tr, SK_TR_ring_rx, t0, work);
		}
		if (iface_next_deadline(r->ifc) <= now)
			iface_poll(r->ifc, now);
		if (r->app_timers && r->app_deadline && r->app_deadline(r->ctx) <= now)
			r->app_timers(r->ctx, now);
		if (r->tcp) {
			unsigned ev = run_tcp(r, now);
			r->tcp_events += ev;
			work += ev;
		}
		/* --trace: the tx sync per frame it sent (the system call). */
		t0 = sk_trace_begin(tr);
		n = dev_tx_sync(d);
		if (n > 0)
			sk_trace_end(tr, SK_TR_ring_tx, t0, (uint64_t)n);
		if (n < 0)
			return fail(r, "tx", n);
		enum spin_step step = spin_after(&r->spin, work != 0, now);
		if (step == SPIN_WORK) {
			r->busy_turns++;
			continue;
		}
		if (step == SPIN_SPIN) {
			plat_relax();
			continue;
		}
		/* Park until a frame or the next deadline.  --trace: from here to
		 * running again after a frame woke us, idle time included. */
		uint64_t t_park = sk_trace_begin(tr);
		struct plat_wake w = {.fd = dev_poll_fd(d), .ctx = d,
				      .has_side = r->on_side != NULL, .side_fd = r->side_fd};
		if (d->ops->irq_arm) {
			w.arm = wake_arm;
			w.disarm = wake_disarm;
		}
		int woke = plat_park(next_deadline(r), &w, stop);
		if (woke < 0)
			return fail(r, "park", woke);
		if (woke == PLAT_WOKE_STOP)
			break;
		if (woke == PLAT_WOKE_NONE)
			continue;
		r->parks++;
		if (woke == PLAT_WOKE_FRAME) {
			r->wakeups_frame++;
			sk_trace_end(tr, SK_TR_park_wake, t_park, 1);
		} else if (woke == PLAT_WOKE_TIMER) {
			r->wakeups_timer++;
		} else if (woke == PLAT_WOKE_SIDE) {
			r->wakeups_other++;
			r->side_next = 0; /* look at it on the next turn */
		} else {
			r->wakeups_other++;
		}
	}
	return 0;
}

void runner_stats(const struct runner *r, void (*fn)(void *ctx, const char *name, uint64_t v),
		  void *ctx)
{
	fn(ctx, "loop.turns", r->turns);
	fn(ctx, "loop.busy_turns", r->busy_turns);
	fn(ctx, "loop.parks", r->parks);
	fn(ctx, "loop.wakeups_frame", r->wakeups_frame);
	fn(ctx, "loop.wakeups_timer", r->wakeups_timer);
	fn(ctx, "loop.wakeups_other", r->wakeups_other);
	fn(ctx, "loop.tcp_events", r->tcp_events);
	spin_stats(&r->spin, "loop", fn, ctx);
}
