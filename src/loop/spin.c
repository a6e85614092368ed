/* spin.c — see spin.h. */
#include "spin.h"

void spin_init(struct spin *s, sk_time_ns cap)
{
	sk_memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->budget = cap; /* until the first epoch: the cap, as a fixed spin */
}

static unsigned gap_bucket(sk_time_ns gap)
{
	unsigned k = 0;
	while (k < SPIN_GAP_BUCKETS && gap >= (sk_time_ns)1 << (k + SPIN_GAP_SHIFT0))
		k++;
	return k;
}

sk_time_ns spin_choose(const struct spin *s)
{
	/* cost(B) = the caught gaps' lengths (spun through) + (B + park cost)
	 * for every missed gap.  A bucket counts as caught when its upper
	 * bound is <= B; its gaps are taken at 3/4 of that bound (the first
	 * bucket's at 1/2). */
	uint64_t total = 0;
	for (unsigned k = 0; k <= SPIN_GAP_BUCKETS; k++)
		total += s->hist[k];
	uint64_t best_cost = total * SPIN_PARK_COST_NS; /* B = 0: park at once */
	sk_time_ns best = 0;
	uint64_t caught = 0, caught_cost = 0;
	for (unsigned k = 0; k < SPIN_GAP_BUCKETS; k++) {
		sk_time_ns bound = (sk_time_ns)1 << (k + SPIN_GAP_SHIFT0);
		if (bound > s->cap)
			break;
		caught += s->hist[k];
		caught_cost += (uint64_t)s->hist[k] * (k == 0 ? bound / 2 : bound / 4 * 3);
		uint64_t cost = caught_cost + (total - caught) * (bound + SPIN_PARK_COST_NS);
		if (cost < best_cost) {
			best_cost = cost;
			best = bound;
		}
	}
	return best;
}

void spin_sample(struct spin *s, sk_time_ns gap)
{
	s->hist[gap_bucket(gap)]++;
	if (++s->samples < SPIN_EPOCH)
		return;
	s->budget = spin_choose(s);
	s->samples = 0;
	s->epochs++;
	/* Forget the past by halves: the picture follows a changed load
	 * within a few epochs. */
	for (unsigned k = 0; k <= SPIN_GAP_BUCKETS; k++)
		s->hist[k] /= 2;
}

enum spin_step spin_after(struct spin *s, bool work, sk_time_ns now)
{
	if (work) {
		if (s->idle_since && s->last_work)
			spin_sample(s, now - s->last_work);
		if (s->spinning)
			s->hits++;
		s->spinning = false;
		s->idle_since = false;
		s->last_work = now;
		s->until = now + s->budget;
		return SPIN_WORK;
	}
	s->idle_since = true;
	if (now < s->until) {
		s->turns++;
		s->spinning = true;
		return SPIN_SPIN;
	}
	if (s->spinning)
		s->misses++;
	s->spinning = false;
	return SPIN_PARK;
}

void spin_stats(const struct spin *s, const char *prefix,
		void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	static const char *const names[] = {"spin_turns", "spin_hits", "spin_misses",
					    "spin_epochs", "spin_budget_ns"};
	uint64_t v[] = {s->turns, s->hits, s->misses, s->epochs, s->budget};
	for (unsigned i = 0; i < SK_ARRAY_LEN(names); i++) {
		char name[64];
		size_t n = 0;
		for (const char *p = prefix; *p && n < 40; p++)
			name[n++] = *p;
		name[n++] = '.';
		for (const char *p = names[i]; *p; p++)
			name[n++] = *p;
		name[n] = 0;
		fn(ctx, name, v[i]);
	}
}
