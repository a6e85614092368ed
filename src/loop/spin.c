/* spin.c — see spin.h. */
#include "spin.h"

void spin_init(struct spin *s, sk_time_ns cap, bool learn)
{
	sk_memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->learn = learn;
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
	unsigned k = gap_bucket(gap);
	s->hist[k]++;
	s->gaps[k]++;
	if (!s->learn || ++s->samples < SPIN_EPOCH)
		return;
	s->budget = spin_choose(s);
	s->samples = 0;
	s->epochs++;
	/* Forget the past by halves: the picture follows a changed load
	 * within a few epochs. */
	for (unsigned j = 0; j <= SPIN_GAP_BUCKETS; j++)
		s->hist[j] /= 2;
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

/* PREFIX.WHAT, then NUMus if num != 0. */
static const char *stat_name(char out[64], const char *prefix, const char *what, unsigned num)
{
	size_t n = 0;
	for (const char *p = prefix; *p && n < 24; p++)
		out[n++] = *p;
	out[n++] = '.';
	for (const char *p = what; *p && n < 50; p++)
		out[n++] = *p;
	if (num) {
		char d[12];
		int nd = 0;
		while (num) {
			d[nd++] = (char)('0' + num % 10);
			num /= 10;
		}
		while (nd)
			out[n++] = d[--nd];
		out[n++] = 'u';
		out[n++] = 's';
	}
	out[n] = 0;
	return out;
}

void spin_stats(const struct spin *s, const char *prefix,
		void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	static const char *const names[] = {"spin_turns", "spin_hits", "spin_misses",
					    "spin_epochs", "spin_budget_ns"};
	uint64_t v[] = {s->turns, s->hits, s->misses, s->epochs, s->budget};
	char name[64];
	for (unsigned i = 0; i < SK_ARRAY_LEN(names); i++)
		fn(ctx, stat_name(name, prefix, names[i], 0), v[i]);
	for (unsigned k = 0; k <= SPIN_GAP_BUCKETS; k++) {
		/* 2^(k+10) ns, named in whole us (1, 2, 4, ... 2048: close enough) */
		unsigned us = k < SPIN_GAP_BUCKETS ? 1u << k : 0;
		fn(ctx, stat_name(name, prefix, us ? "spin_gaps_lt_" : "spin_gaps_longer", us),
		   s->gaps[k]);
	}
}
