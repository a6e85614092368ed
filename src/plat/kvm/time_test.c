/* time_test.c — calib.h, the LAPIC timer's calibration arithmetic, over
 * readings shaped as a guest under TCG on a busy host takes them: the
 * vCPU thread preempted inside one stamp (between a TSC read and the
 * counter's), or between two stamps, or for longer than the count lasts.
 * The counter here ticks at 1 GHz, the TSC at 2 GHz. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plat/kvm/calib.h"

#define TSC_HZ 2000000000ull
#define CNT_HZ 1000000000ull
#define START 0xffffffffu

/* The counter's value at TSC time t (ns = t / 2), started at t0. */
static uint32_t count_at(uint64_t t0, uint64_t t)
{
	uint64_t ticks = (t - t0) / (TSC_HZ / CNT_HZ);
	return ticks >= START ? 0 : (uint32_t)(START - ticks);
}

/* A stamp whose first TSC read is at t, whose counter read comes `pre`
 * TSC ticks later and whose second TSC read `post` after that. */
static struct calib_stamp stamp(uint64_t t0, uint64_t t, uint64_t pre, uint64_t post)
{
	return (struct calib_stamp){.tsc = t + (pre + post) / 2, .width = pre + post,
				    .count = count_at(t0, t + pre)};
}

/* A window of `span` TSC ticks from t, with the given stamp shapes. */
static struct calib_window window(uint64_t t, uint64_t span, uint64_t pre_a, uint64_t post_a,
				  uint64_t pre_b, uint64_t post_b)
{
	return (struct calib_window){.a = stamp(t, t + 100, pre_a, post_a),
				     .b = stamp(t, t + 100 + span, pre_b, post_b)};
}

static uint64_t within(uint64_t v, uint64_t want, uint64_t ppm)
{
	uint64_t d = v > want ? v - want : want - v;
	return d * 1000000u <= want * ppm;
}

static void test_tight_window_exact(void **state)
{
	(void)state;
	struct calib_window w = window(1000, 8000000, 2000, 2000, 2000, 2000); /* 4 ms, 2 us stamps */
	assert_true(within(calib_rate(&w, TSC_HZ), CNT_HZ, 1000));
}

/* Preempted 8 ms after the first TSC read of the closing stamp, before
 * the counter's read: read alone, this window says 1.5 GHz. */
static void test_preempted_inside_a_stamp_is_not_believed(void **state)
{
	(void)state;
	struct calib_window w[5] = {
		window(0, 8000000, 50000, 2000, 2000, 2000), /* the first: slow, translating */
		window(20000000, 8000000, 2000, 2000, 16000000, 2000),
		window(40000000, 8000000, 2000, 2000, 2000, 2000),
		window(60000000, 8000000, 2000, 16000000, 2000, 2000),
		window(80000000, 8000000, 2000, 2000, 2000, 3000),
	};
	assert_false(within(calib_rate(&w[1], TSC_HZ), CNT_HZ, 100000)); /* what one read costs */
	uint64_t ppm;
	uint64_t hz = calib_pick(w, 5, TSC_HZ, &ppm);
	assert_true(within(hz, CNT_HZ, 1000));
	assert_true(ppm <= 1000); /* the chosen window's 4 us of 4 ms */
}

/* Preempted 50 ms between the stamps: both clocks ran on, no error. */
static void test_preempted_between_stamps_costs_nothing(void **state)
{
	(void)state;
	struct calib_window w = window(0, 108000000, 2000, 2000, 2000, 2000);
	assert_true(within(calib_rate(&w, TSC_HZ), CNT_HZ, 1000));
}

/* A window longer than the one-shot count lasts (it stops at 0): unusable,
 * not a rate too low. */
static void test_count_ran_out(void **state)
{
	(void)state;
	struct calib_window w = window(0, 10 * TSC_HZ, 2000, 2000, 2000, 2000);
	assert_int_equal(w.b.count, 0);
	assert_int_equal(calib_rate(&w, TSC_HZ), 0);
	uint64_t ppm;
	assert_int_equal(calib_pick(&w, 1, TSC_HZ, &ppm), 0);
	assert_true(ppm == UINT64_MAX);
}

/* Every window preempted inside a stamp: the tightest still wins, and
 * its uncertainty says so (the caller measures more). */
static void test_all_loose_reports_error(void **state)
{
	(void)state;
	struct calib_window w[2] = {
		window(0, 8000000, 2000, 2000, 4000000, 2000),
		window(20000000, 8000000, 2000, 2000, 2000, 800000),
	};
	uint64_t ppm;
	uint64_t hz = calib_pick(w, 2, TSC_HZ, &ppm);
	assert_true(hz != 0);
	assert_true(ppm >= 10000 && ppm < 200000); /* the second: 0.8 ms of 8 */
	assert_true(within(hz, CNT_HZ, 200000));
}

/* A TSC far faster than the product 64 bits hold at full count. */
static void test_no_overflow(void **state)
{
	(void)state;
	struct calib_window w = {.a = {.tsc = 0, .width = 1, .count = START},
				 .b = {.tsc = 100000000000ull, .width = 1, .count = 1}};
	uint64_t hz = calib_rate(&w, 100000000000ull); /* 100 GHz TSC, 1 s window */
	assert_true(within(hz, START - 1, 1000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tight_window_exact),
		cmocka_unit_test(test_preempted_inside_a_stamp_is_not_believed),
		cmocka_unit_test(test_preempted_between_stamps_costs_nothing),
		cmocka_unit_test(test_count_ran_out),
		cmocka_unit_test(test_all_loose_reports_error),
		cmocka_unit_test(test_no_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
