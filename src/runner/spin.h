/* spin.h — when to spin and when to park after a turn, learned from the
 * gaps between bursts of work.  Freestanding; used by the run loop
 * (runner.c), `skiff switch` and `skiff pktgen`.
 *
 * After each turn the caller says whether it did work; spin_after answers
 *   SPIN_WORK  work was done: turn again at once;
 *   SPIN_SPIN  idle, but within the spin budget: relax (plat_relax, or
 *              sched_yield when a peer shares the core) and turn again;
 *   SPIN_PARK  idle past the budget: park (plat_park) until work or a
 *              deadline.
 *
 * Why learn: parking costs a wait and a wake-up (a system call and a
 * reschedule hosted, a halt and an interrupt in a guest) plus the latency
 * the woken frame waits; spinning costs the whole gap in CPU.  A fixed
 * 100 us spin caught every gap of an `ab -c 1` client and kept the core
 * 100% busy for it; no spin at all made every frame pay a wake-up (seed
 * 000 measured it slower).  So the gaps are counted, and the budget is
 * the spin that costs least over the gaps seen lately.
 *
 * A "gap" is the time from the last turn with work to the next one.  What
 * a gap shows depends on how it ended:
 *   caught   work came while spinning: the gap is known to the turn;
 *   parked   the spin ran out and the loop parked: the gap is only known
 *            to be at least the spin that was tried.  The time seen after
 *            the wake-up is NOT the gap: it includes the wake-up itself
 *            (tens of us on a VM), and counting it as one made the first
 *            learner see every gap as long and settle at no spin at all.
 * So the gaps are learned as survival data (censored at the spin tried):
 * per power-of-two bucket k (gaps below 2^(k + SPIN_GAP_SHIFT0) ns),
 * risk[k] counts the gaps seen to reach the bucket with the spin still
 * running through all of it, and ended[k] those that ended in it.  The
 * hazard ended/risk per bucket gives the chance that a gap outlives each
 * bucket bound, whatever spin each sample was taken with.  A park tells
 * nothing above its budget, so one gap in SPIN_EXPLORE is spun to the cap
 * whatever the budget: the learner keeps seeing the gaps it no longer
 * catches, and the budget can grow back when the load changes.  Such a
 * look costs up to the cap when the gaps are long, so while the budget
 * stays where it is the looks thin out, halving each epoch down to one in
 * SPIN_EXPLORE_MAX; a budget that moves brings them back to SPIN_EXPLORE.
 *
 * Every SPIN_EPOCH gaps the budget becomes the bucket bound B (or 0, at
 * most the cap) with the least expected cost per gap: a caught gap costs
 * its length in spinning, a missed one B plus the park cost; then the
 * counts are halved so the picture follows the load.
 *
 * Learning is opt-in (`--spin-us auto`, guest `spin-us=auto`): without it
 * the budget stays at the cap, a fixed spin, and the gaps are only counted.
 */
#ifndef RUNNER_SPIN_H
#define RUNNER_SPIN_H

#include "../base/sk.h"

#define SPIN_GAP_SHIFT0 10  /* first bucket: gaps under 1.02 us */
#define SPIN_GAP_BUCKETS 12 /* ... up to 2.1 ms, then "longer" */
#define SPIN_EPOCH 64       /* gap samples per re-learning */
#define SPIN_EXPLORE 8      /* one gap in this many is spun to the cap ... */
#define SPIN_EXPLORE_MAX 128 /* ... or, while the budget holds, up to this */
/* The cap of a learned spin (--spin-us auto): a bucket bound, so every
 * bucket below it is watched whole by a spin to the cap; 131 us, just
 * over the fixed default of 100 us. */
#define SPIN_AUTO_CAP_NS ((sk_time_ns)1 << (SPIN_GAP_SHIFT0 + 7))
/* What a park costs beyond the time it sleeps (see above): a spin longer
 * than this to catch a gap is not worth it. */
#define SPIN_PARK_COST_NS (50 * SK_NS_PER_US)

enum spin_step { SPIN_WORK, SPIN_SPIN, SPIN_PARK };

struct spin {
	sk_time_ns cap;          /* the longest spin allowed; 0: park at once */
	bool learn;              /* false: budget == cap always (a fixed spin) */
	sk_time_ns park_cost;    /* SPIN_PARK_COST_NS unless a test sets it */
	sk_time_ns budget;       /* the spin after work now (<= cap); 0 or a
				  * bucket bound when learned, so a park's
				  * censoring lines up with the buckets */
	sk_time_ns tried;        /* the spin in force since last_work (budget,
				  * or cap when exploring) */
	sk_time_ns until;        /* last_work + tried */
	sk_time_ns last_work;    /* `now` of the last turn with work; 0: none yet */
	bool idle_since;         /* an idle turn came after last_work */
	bool spinning;           /* idle turns spun since the last work or park */
	bool parked;             /* parked since last_work: the gap is censored */
	/* The survival counts (see above), halved every epoch. */
	uint32_t risk[SPIN_GAP_BUCKETS + 1];
	uint32_t ended[SPIN_GAP_BUCKETS + 1];
	uint32_t samples;        /* since the last epoch */
	uint32_t explore_every;  /* SPIN_EXPLORE .. SPIN_EXPLORE_MAX */
	uint32_t explore_in;     /* gaps until the next one spun to the cap */
	/* counters */
	uint64_t turns;          /* idle turns spent spinning */
	uint64_t hits;           /* spins that ended in work */
	uint64_t misses;         /* spins that ran out: a park followed */
	uint64_t epochs;         /* times the budget was re-learned */
	uint64_t explores;       /* gaps spun to the cap to look past the budget */
	uint64_t gaps[SPIN_GAP_BUCKETS + 1]; /* caught gaps, by bucket */
	uint64_t gaps_parked;    /* gaps that outlived the spin (censored) */
};

void spin_init(struct spin *s, sk_time_ns cap, bool learn);
/* After a turn that did (work) or did not do work, at its `now`. */
enum spin_step spin_after(struct spin *s, bool work, sk_time_ns now);

/* "name value" counters, as PREFIX.spin_turns ... PREFIX.spin_budget_ns,
 * then the caught gaps as PREFIX.spin_gaps_lt_1us ... _lt_2048us and
 * PREFIX.spin_gaps_longer, then PREFIX.spin_gaps_parked (prefix e.g.
 * "loop"). */
void spin_stats(const struct spin *s, const char *prefix,
		void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

/* The learning, exposed for the unit test: record one gap that ended
 * after `gap` with the spin `tried` still running (caught), or that
 * outlived `tried` (censored: gap is ignored, only gap >= tried is known);
 * and the budget the counts give now. */
void spin_sample(struct spin *s, sk_time_ns gap, sk_time_ns tried, bool caught);
sk_time_ns spin_choose(const struct spin *s);

#endif
