/* spin_test.c — the learned spin (spin.h): what budget each shape of gaps
 * gives, the cap, and the step sequence after a turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner/spin.h"

#define US SK_NS_PER_US

/* n gaps of `gap`, each caught by a spin of the cap. */
static void feed(struct spin *s, sk_time_ns gap, int n)
{
	for (int i = 0; i < n; i++)
		spin_sample(s, gap, s->cap, true);
}

/* A loop's life through spin_after: n gaps of `gap` between turns with
 * work, idle turns every 1 us while spinning; a park costs `wake` after
 * the frame before the turn sees it (the wake-up).  Returns the time. */
static sk_time_ns live(struct spin *s, sk_time_ns t, sk_time_ns gap, sk_time_ns wake, int n)
{
	for (int i = 0; i < n; i++) {
		assert_int_equal(spin_after(s, true, t), SPIN_WORK);
		sk_time_ns start = t, arrive = t + gap;
		for (;;) {
			t += SK_NS_PER_US;
			if (t >= arrive)
				break;
			enum spin_step st = spin_after(s, false, t);
			if (st == SPIN_PARK) {
				t = arrive + wake;
				break;
			}
			assert_int_equal(st, SPIN_SPIN);
		}
		assert_true(t > start);
	}
	return t;
}

/* Before any epoch the spin is the cap, as the fixed spin was. */
static void test_starts_at_cap(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	assert_int_equal(s.budget, 100 * US);
	feed(&s, 80 * US, SPIN_EPOCH - 1);
	assert_int_equal(s.budget, 100 * US);
	assert_int_equal(s.epochs, 0);
}

/* Gaps of 3 us (frames of one burst): spinning through them is cheaper
 * than a park each, so the budget covers them, and no more. */
static void test_short_gaps_spin(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	feed(&s, 3 * US, SPIN_EPOCH);
	assert_int_equal(s.epochs, 1);
	assert_true(s.budget >= 3 * US);
	assert_true(s.budget <= 8 * US);
}

/* Gaps of 80 us (an `ab -c 1` client's round trip): a park costs less than
 * spinning through them, so the budget is 0. */
static void test_long_gaps_park(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	feed(&s, 80 * US, SPIN_EPOCH);
	assert_int_equal(s.budget, 0);
}

/* Half short, half long: catch the short ones, park for the long. */
static void test_mixed_gaps(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	for (int i = 0; i < SPIN_EPOCH / 2; i++) {
		spin_sample(&s, 3 * US, s.cap, true);
		spin_sample(&s, 80 * US, s.cap, true);
	}
	assert_true(s.budget >= 3 * US);
	assert_true(s.budget < 80 * US);
}

/* The cap bounds it: gaps of 30 us are worth a spin, but not over 10 us. */
static void test_cap(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 10 * US, true);
	feed(&s, 3 * US, SPIN_EPOCH);
	assert_true(s.budget <= 10 * US);
	spin_init(&s, 0, true);
	feed(&s, 3 * US, SPIN_EPOCH);
	assert_int_equal(s.budget, 0);
}

/* The load changes: the budget follows within a few epochs. */
static void test_follows_load(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	feed(&s, 3 * US, 4 * SPIN_EPOCH);
	assert_true(s.budget > 0);
	feed(&s, 200 * US, 4 * SPIN_EPOCH);
	assert_int_equal(s.budget, 0);
	feed(&s, 2 * US, 4 * SPIN_EPOCH);
	assert_true(s.budget > 0);
}

/* The bias the first learner had: gaps of 10 us, a wake-up of 50 us.
 * After a park the loop sees 60 us, which looks like a gap too long to
 * spin for; counted as one, the budget fell to 0 and stayed there.
 * Censored, and with one gap in SPIN_EXPLORE spun to the cap, the budget
 * comes back up and catches them. */
static void test_wakeup_not_a_gap(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	s.budget = 0; /* as if an earlier load had taught "park at once" */
	sk_time_ns t = live(&s, 1000 * US, 10 * US, 50 * US, 8 * SPIN_EPOCH);
	assert_true(s.explores > 0);
	assert_true(s.budget >= 10 * US);
	assert_true(s.budget <= 32 * US);
	uint64_t hits = s.hits;
	live(&s, t, 10 * US, 50 * US, SPIN_EPOCH);
	/* now nearly every gap is caught by the budget itself */
	assert_true(s.hits - hits >= SPIN_EPOCH - 2);
}

/* Gaps of 300 us (a slow client): no spin is worth it.  While that holds
 * the looks past the budget thin out to one in SPIN_EXPLORE_MAX gaps; a
 * load with short gaps again brings the budget back. */
static void test_long_gaps_live(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	sk_time_ns t = live(&s, 1000 * US, 300 * US, 50 * US, 16 * SPIN_EPOCH);
	assert_int_equal(s.budget, 0);
	assert_int_equal(s.explore_every, SPIN_EXPLORE_MAX);
	uint64_t turns = s.turns, explores = s.explores;
	t = live(&s, t, 300 * US, 50 * US, 4 * SPIN_EXPLORE_MAX);
	assert_int_equal(s.explores - explores, 4);
	assert_true(s.turns - turns <= 4 * 100);
	t = live(&s, t, 10 * US, 50 * US, 40 * SPIN_EPOCH);
	assert_true(s.budget >= 10 * US);
}

/* A park says only "longer than the spin tried": it adds to the risk of
 * the buckets below it and ends none. */
static void test_censored(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, true);
	spin_sample(&s, 999 * US, 4 * US, false);
	assert_int_equal(s.risk[0], 1);
	assert_int_equal(s.risk[1], 1);
	assert_int_equal(s.risk[2], 0); /* [4096, 8192) ns not watched whole */
	for (unsigned k = 0; k <= SPIN_GAP_BUCKETS; k++)
		assert_int_equal(s.ended[k], 0);
	assert_int_equal(s.gaps_parked, 1);
	spin_sample(&s, 3 * US, 4 * US, true);
	assert_int_equal(s.ended[2], 1);
	assert_int_equal(s.risk[2], 1);
}

/* spin_after: work, then spin while the budget lasts, then park; gaps are
 * measured from the last work; hits and misses counted. */
static void test_steps(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 10 * US, true);
	assert_int_equal(spin_after(&s, true, 1000 * US), SPIN_WORK);
	assert_int_equal(spin_after(&s, false, 1001 * US), SPIN_SPIN);
	assert_int_equal(spin_after(&s, true, 1003 * US), SPIN_WORK);
	assert_int_equal(s.hits, 1);
	assert_int_equal(s.samples, 1);
	assert_int_equal(s.ended[2], 1); /* 3 us: [2048, 4096) ns */
	assert_int_equal(spin_after(&s, false, 1005 * US), SPIN_SPIN);
	assert_int_equal(spin_after(&s, false, 1013 * US), SPIN_PARK);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.turns, 2);
	/* back-to-back work is no gap */
	assert_int_equal(spin_after(&s, true, 1500 * US), SPIN_WORK);
	assert_int_equal(spin_after(&s, true, 1501 * US), SPIN_WORK);
	assert_int_equal(s.samples, 2);
}

/* Without learning the budget stays at the cap; the gaps are still counted. */
static void test_fixed(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 100 * US, false);
	feed(&s, 80 * US, 4 * SPIN_EPOCH);
	assert_int_equal(s.budget, 100 * US);
	assert_int_equal(s.epochs, 0);
	assert_int_equal(s.gaps[7], 4 * SPIN_EPOCH); /* 80 us: [64, 128) us */
}

static void count(void *ctx, const char *name, uint64_t v)
{
	(void)v;
	if (strncmp(name, "loop.spin_", 10) == 0)
		(*(int *)ctx)++;
}

static void test_stats_names(void **state)
{
	(void)state;
	struct spin s;
	spin_init(&s, 10 * US, true);
	int n = 0;
	spin_stats(&s, "loop", count, &n);
	assert_int_equal(n, 6 + SPIN_GAP_BUCKETS + 1 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_at_cap),  cmocka_unit_test(test_short_gaps_spin),
		cmocka_unit_test(test_long_gaps_park), cmocka_unit_test(test_mixed_gaps),
		cmocka_unit_test(test_cap),            cmocka_unit_test(test_follows_load),
		cmocka_unit_test(test_steps),          cmocka_unit_test(test_stats_names),
		cmocka_unit_test(test_fixed),          cmocka_unit_test(test_wakeup_not_a_gap),
		cmocka_unit_test(test_long_gaps_live), cmocka_unit_test(test_censored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
