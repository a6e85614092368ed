/* spin.c — see spin.h. */
#include "spin.h"

void spin_init(struct spin *s, sk_time_ns cap, bool learn)
{
	sk_memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->learn = learn;
	s->park_cost = SPIN_PARK_COST_NS;
	s->budget = cap; /* until the first epoch: the cap, as a fixed spin */
	s->explore_every = s->explore_in = SPIN_EXPLORE;
}

static sk_time_ns bucket_bound(unsigned k)
{
	return (sk_time_ns)1 << (k + SPIN_GAP_SHIFT0);
}

static unsigned gap_bucket(sk_time_ns gap)
{
	unsigned k = 0;
	while (k < SPIN_GAP_BUCKETS && gap >= bucket_bound(k))
		k++;
	return k;
}

sk_time_ns spin_choose(const struct spin *s)
{
	/* Walk the buckets up to the cap with the chance `alive` (scaled by
	 * 2^20) that a gap is still running at the bucket's lower bound.
	 * cost(B) = sum over caught buckets of P(bucket) x its mean (taken at
	 * 3/4 of the bound, the first bucket's at 1/2)
	 *         + alive(B) x (B + park cost).
	 * A bucket nobody watched to its end (risk 0) stops the walk: nothing
	 * is known beyond it. */
	const uint64_t one = (uint64_t)1 << 20;
	uint64_t alive = one;
	uint64_t best_cost = one * (uint64_t)s->park_cost; /* B = 0 */
	sk_time_ns best = 0;
	uint64_t caught_cost = 0; /* scaled by 2^20 */
	for (unsigned k = 0; k < SPIN_GAP_BUCKETS; k++) {
		sk_time_ns bound = bucket_bound(k);
		if (bound > s->cap || s->risk[k] == 0)
			break;
		uint64_t p = alive * s->ended[k] / s->risk[k]; /* P(gap in bucket k) */
		alive -= p;
		caught_cost += p * (k == 0 ? bound / 2 : bound / 4 * 3);
		uint64_t cost = caught_cost + alive * (bound + s->park_cost);
		if (cost < best_cost) {
			best_cost = cost;
			best = bound;
		}
	}
	return best;
}

void spin_sample(struct spin *s, sk_time_ns gap, sk_time_ns tried, bool caught)
{
	if (caught) {
		unsigned k = gap_bucket(gap);
		s->gaps[k]++;
		/* At risk through every bucket below k, and ended in k.  Its own
		 * bucket counts even when the spin tried ends inside it: the gap
		 * was caught, so it was watched to its end. */
		for (unsigned j = 0; j <= k; j++)
			s->risk[j]++;
		s->ended[k]++;
	} else {
		s->gaps_parked++;
		/* Survived every bucket the spin watched whole; nothing past. */
		for (unsigned j = 0; j < SPIN_GAP_BUCKETS && bucket_bound(j) <= tried; j++)
			s->risk[j]++;
	}
	if (!s->learn || ++s->samples < SPIN_EPOCH)
		return;
	sk_time_ns b = spin_choose(s);
	if (b != s->budget)
		s->explore_every = SPIN_EXPLORE;
	else if (s->explore_every < SPIN_EXPLORE_MAX)
		s->explore_every *= 2;
	if (s->explore_in > s->explore_every)
		s->explore_in = s->explore_every;
	s->budget = b;
	s->samples = 0;
	s->epochs++;
	/* Forget the past by halves: the picture follows a changed load
	 * within a few epochs. */
	for (unsigned j = 0; j <= SPIN_GAP_BUCKETS; j++) {
		s->risk[j] /= 2;
		s->ended[j] /= 2;
	}
}

enum spin_step spin_after(struct spin *s, bool work, sk_time_ns now)
{
	if (work) {
		if (s->idle_since && s->last_work)
			spin_sample(s, now - s->last_work, s->tried, !s->parked);
		if (s->spinning)
			s->hits++;
		s->spinning = false;
		s->idle_since = false;
		s->parked = false;
		s->last_work = now;
		s->tried = s->budget;
		if (s->learn && s->budget < s->cap && --s->explore_in == 0) {
			s->explore_in = s->explore_every;
			s->tried = s->cap;
			s->explores++;
		}
		s->until = now + s->tried;
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
	s->parked = true;
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
	static const char *const names[] = {"spin_turns",  "spin_hits",     "spin_misses",
					    "spin_epochs", "spin_explores", "spin_budget_ns"};
	uint64_t v[] = {s->turns, s->hits, s->misses, s->epochs, s->explores, s->budget};
	char name[64];
	for (unsigned i = 0; i < SK_ARRAY_LEN(names); i++)
		fn(ctx, stat_name(name, prefix, names[i], 0), v[i]);
	for (unsigned k = 0; k <= SPIN_GAP_BUCKETS; k++) {
		/* 2^(k+10) ns, named in whole us (1, 2, 4, ... 2048: close enough) */
		unsigned us = k < SPIN_GAP_BUCKETS ? 1u << k : 0;
		fn(ctx, stat_name(name, prefix, us ? "spin_gaps_lt_" : "spin_gaps_longer", us),
		   s->gaps[k]);
	}
	fn(ctx, stat_name(name, prefix, "spin_gaps_parked", 0), s->gaps_parked);
}
