/* proxy_up.c — choosing an upstream and its passive health (proxy.h).
 * No I/O: the proxy reports each outcome, these functions keep the count.
 * Pure over struct proxy, so proxy_up_test.c drives them with explicit
 * times. */
#include "proxy.h"

static bool up_usable(const struct proxy_up *u, sk_time_ns now)
{
	return u->down_until == 0 || u->down_until <= now;
}

int proxy_up_pick(struct proxy *px, uint32_t tried, sk_time_ns now)
{
	unsigned n = px->cfg.nup;
	int best = -1;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = (px->rr_next + k) % n;
		struct proxy_up *u = &px->up[i];
		if ((tried >> i) & 1u || !up_usable(u, now))
			continue;
		if (px->cfg.balance == PROXY_RR) {
			best = (int)i;
			break;
		}
		/* least-connections; ties go to the round-robin order */
		if (best < 0 || u->active < px->up[best].active)
			best = (int)i;
	}
	if (best >= 0) {
		px->rr_next = ((unsigned)best + 1) % n;
		struct proxy_up *u = &px->up[best];
		if (u->down_until && u->down_until <= now)
			u->down_until = 0; /* its period is over: on trial again */
	}
	return best;
}

void proxy_up_failed(struct proxy *px, unsigned i, sk_time_ns now)
{
	struct proxy_up *u = &px->up[i];
	u->failures++;
	if (++u->fails >= px->cfg.fail_max) {
		u->fails = 0;
		u->down_until = now + px->cfg.fail_timeout;
		if (u->down_until == 0)
			u->down_until = 1;
		u->downs++;
		px->st.up_marked_down++;
	}
}

void proxy_up_ok(struct proxy *px, unsigned i)
{
	px->up[i].fails = 0;
}
