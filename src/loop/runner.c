/* runner.c — see runner.h. */
#include "runner.h"

#include "../plat/plat.h"

#define RUNNER_EVENTS 64
/* What a park costs beyond the time it sleeps: the wait and the wake-up
 * (a system call and a reschedule hosted, a halt and an interrupt in a
 * guest) plus the latency the woken frame waits.  A spin longer than this
 * to catch a gap is not worth it. */
#define RUNNER_PARK_COST_NS (20 * SK_NS_PER_US)
/* Gap samples per re-learning of the budget. */
#define RUNNER_SPIN_EPOCH 32

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

/* ---- the learned spin ---- */

static unsigned gap_bucket(sk_time_ns gap)
{
	unsigned k = 0;
	while (k < RUNNER_GAP_BUCKETS && gap >= (sk_time_ns)1 << (k + RUNNER_GAP_SHIFT0))
		k++;
	return k;
}

sk_time_ns runner_spin_choose(const struct runner_spin *s, sk_time_ns cap)
{
	/* cost(B) = sum over caught gaps of their length (spun through) + sum
	 * over missed gaps of (B + park cost).  A bucket counts as caught when
	 * its upper bound is <= B; its gaps are taken at 3/4 of that bound
	 * (the first bucket at 1/2). */
	uint64_t total = 0;
	for (unsigned k = 0; k <= RUNNER_GAP_BUCKETS; k++)
		total += s->hist[k];
	uint64_t best_cost = total * RUNNER_PARK_COST_NS; /* B = 0: park at once */
	sk_time_ns best = 0;
	uint64_t caught = 0, caught_cost = 0;
	for (unsigned k = 0; k < RUNNER_GAP_BUCKETS; k++) {
		sk_time_ns bound = (sk_time_ns)1 << (k + RUNNER_GAP_SHIFT0);
		if (bound > cap)
			break;
		caught += s->hist[k];
		caught_cost += (uint64_t)s->hist[k] * (k == 0 ? bound / 2 : bound / 4 * 3);
		uint64_t cost = caught_cost + (total - caught) * (bound + RUNNER_PARK_COST_NS);
		if (cost < best_cost) {
			best_cost = cost;
			best = bound;
		}
	}
	return best;
}

void runner_spin_sample(struct runner_spin *s, sk_time_ns gap, sk_time_ns cap)
{
	s->hist[gap_bucket(gap)]++;
	if (++s->samples < RUNNER_SPIN_EPOCH)
		return;
	s->budget = runner_spin_choose(s, cap);
	s->samples = 0;
	s->epochs++;
	/* Forget the past by halves: the picture follows a changing load
	 * within a few epochs. */
	for (unsigned k = 0; k <= RUNNER_GAP_BUCKETS; k++)
		s->hist[k] /= 2;
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
	struct runner_spin *sp = &r->spin;
	sk_time_ns spin_until = 0;
	bool spinning = false; /* idle turns spun since the last work or park */
	sp->budget = r->spin_ns; /* until the first epoch: the cap */
	sp->idle_since = false;
	sp->last_work = 0;
	while (!*stop) {
		sk_time_ns now = plat_now();
		if (r->until && now >= r->until)
			break;
		r->turns++;
		if (r->on_turn)
			r->on_turn(r->ctx, now);
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
		if (work) {
			r->busy_turns++;
			if (sp->idle_since && sp->last_work)
				runner_spin_sample(sp, now - sp->last_work, r->spin_ns);
			if (spinning)
				r->spin_hits++;
			spinning = false;
			sp->idle_since = false;
			sp->last_work = now;
			spin_until = now + sp->budget;
			continue;
		}
		sp->idle_since = true;
		if (now < spin_until) {
			r->spin_turns++;
			spinning = true;
			plat_relax();
			continue;
		}
		if (spinning)
			r->spin_misses++;
		spinning = false;
		/* Park until a frame or the next deadline.  --trace: from here to
		 * running again after a frame woke us, idle time included. */
		uint64_t t_park = sk_trace_begin(tr);
		struct plat_wake w = {.fd = dev_poll_fd(d), .ctx = d};
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
	fn(ctx, "loop.spin_turns", r->spin_turns);
	fn(ctx, "loop.spin_hits", r->spin_hits);
	fn(ctx, "loop.spin_misses", r->spin_misses);
	fn(ctx, "loop.spin_epochs", r->spin.epochs);
	fn(ctx, "loop.spin_budget_ns", r->spin.budget);
}
