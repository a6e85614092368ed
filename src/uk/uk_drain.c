/* uk_drain.c — see uk_drain.h. */
#include "uk_drain.h"

#include "../plat/kvm/kvm.h"
#include "../plat/plat.h"

/* How often the drain looks whether TCP has sent what closed sockets hold. */
#define UK_DRAIN_TCP_POLL_NS (10 * SK_NS_PER_MS)

/* One drain's state, on its caller's stack for the drain's length. */
struct uk_drain {
	struct loop *loop;
	struct tcp_stack *tcp;
	unsigned servers; /* engines still draining */
	bool timed_out, finished;
	volatile int stop; /* ends loop_run: finished or timed out */
	struct loop_timer deadline, tcp_poll;
};

static void drain_tcp_poll(struct loop_timer *t, sk_time_ns now)
{
	struct uk_drain *d = (struct uk_drain *)(void *)((char *)t - offsetof(struct uk_drain, tcp_poll));
	if (tcp_unfinished(d->tcp) == 0) {
		d->finished = true;
		d->stop = 1;
	} else {
		loop_timer_set(d->loop, &d->tcp_poll, now + UK_DRAIN_TCP_POLL_NS);
	}
}

static void drain_conns_done(void *ctx)
{
	struct uk_drain *d = ctx;
	if (--d->servers == 0)
		drain_tcp_poll(&d->tcp_poll, plat_now());
}

static void drain_deadline(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct uk_drain *d = (struct uk_drain *)(void *)((char *)t - offsetof(struct uk_drain, deadline));
	d->timed_out = true;
	d->stop = 1;
}

int uk_drain_run(struct loop *loop, struct uk_sites *sites, struct tcp_stack *tcp,
		 unsigned timeout_s, const char *label, struct uk_drain_result *res)
{
	struct uk_drain d = {.loop = loop, .tcp = tcp, .servers = uk_sites_nengines(sites),
			     .deadline = {.fn = drain_deadline}, .tcp_poll = {.fn = drain_tcp_poll}};
	sk_time_ns t0 = plat_now();
	res->conns = uk_sites_nconns(sites);
	__atomic_store_n(&res->state, UK_DRAIN_BEGUN, __ATOMIC_RELEASE);
	loop_timer_set(loop, &d.deadline, t0 + (sk_time_ns)timeout_s * SK_NS_PER_S);
	if (d.servers == 0)
		drain_tcp_poll(&d.tcp_poll, t0); /* no engine: only TCP's leftovers */
	else
		uk_sites_drain(sites, t0, drain_conns_done, &d); /* each engine's done counts down */
	int rc = d.stop ? 0 : loop_run(loop, &d.stop);
	if (loop_timer_armed(&d.deadline))
		loop_timer_cancel(loop, &d.deadline);
	if (loop_timer_armed(&d.tcp_poll))
		loop_timer_cancel(loop, &d.tcp_poll);
	res->ms = (plat_now() - t0) / SK_NS_PER_MS;
	res->finished = d.finished;
	res->left = uk_sites_nconns(sites);
	if (d.finished)
		kprintf("skiff-uk: %sdrained in %lu ms\n", label, res->ms);
	else
		kprintf("skiff-uk: %sdrain-timeout after %lu ms: closing %u connections\n", label,
			res->ms, res->left);
	__atomic_store_n(&res->state, UK_DRAIN_ENDED, __ATOMIC_RELEASE);
	return rc;
}
