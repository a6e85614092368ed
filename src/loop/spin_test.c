/* spin_test.c — the learned spin (spin.h): what budget each shape of gaps
 * gives, the cap, and the step sequence after a turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "loop/spin.h"

#define US SK_NS_PER_US

static void feed(struct spin *s, sk_time_ns gap, int n)
{
	for (int i = 0; i < n; i++)
		spin_sample(s, gap);
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
		spin_sample(&s, 3 * US);
		spin_sample(&s, 80 * US);
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
	assert_int_equal(s.hist[2], 1); /* 3 us: [2048, 4096) ns */
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
	assert_int_equal(n, 5 + SPIN_GAP_BUCKETS + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_at_cap),  cmocka_unit_test(test_short_gaps_spin),
		cmocka_unit_test(test_long_gaps_park), cmocka_unit_test(test_mixed_gaps),
		cmocka_unit_test(test_cap),            cmocka_unit_test(test_follows_load),
		cmocka_unit_test(test_steps),          cmocka_unit_test(test_stats_names),
		cmocka_unit_test(test_fixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
