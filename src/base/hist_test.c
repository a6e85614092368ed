/* hist_test.c — the log-linear buckets and the quantiles of sk_hist, and
 * the trace helpers (off: no sample, no call; on: one sample per stage). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/hist.h"

/* Every value falls in a bucket that contains it, buckets tile the range
 * without gaps, and a bucket is never wider than 1/16 of its lower end. */
static void test_buckets(void **state)
{
	(void)state;
	for (uint32_t i = 0; i + 1 < SK_HIST_BUCKETS; i++) {
		uint64_t lo = sk_hist_bucket_lo(i), w = sk_hist_bucket_width(i);
		assert_int_equal(sk_hist_bucket_lo(i + 1), lo + w);
		assert_int_equal(sk_hist_index(lo), i);
		assert_int_equal(sk_hist_index(lo + w - 1), i);
		if (lo >= 32)
			assert_true(w * 16 <= lo);
	}
	assert_int_equal(sk_hist_index(0), 0);
	assert_int_equal(sk_hist_index(31), 31);
	assert_int_equal(sk_hist_index(UINT64_MAX), SK_HIST_BUCKETS - 1);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 100000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t v = x >> (x & 63);
		uint32_t i = sk_hist_index(v);
		assert_true(i < SK_HIST_BUCKETS);
		assert_true(sk_hist_bucket_lo(i) <= v);
		assert_true(v - sk_hist_bucket_lo(i) < sk_hist_bucket_width(i));
	}
}

static void test_quantiles(void **state)
{
	(void)state;
	static struct sk_hist h;
	sk_hist_reset(&h);
	assert_int_equal(sk_hist_quantile(&h, 1, 2), 0);
	/* 1..1000: median 500, p99 990, within the 1/32 resolution. */
	for (uint64_t v = 1; v <= 1000; v++)
		sk_hist_add(&h, v);
	assert_int_equal(h.count, 1000);
	assert_int_equal(h.sum, 500500);
	assert_int_equal(h.min, 1);
	assert_int_equal(h.max, 1000);
	uint64_t med = sk_hist_quantile(&h, 1, 2), p99 = sk_hist_quantile(&h, 99, 100);
	assert_true(med >= 500 - 500 / 32 && med <= 500 + 500 / 32);
	assert_true(p99 >= 990 - 990 / 32 && p99 <= 990 + 990 / 32);
	assert_int_equal(sk_hist_quantile(&h, 1, 1), 1000);
	assert_int_equal(sk_hist_quantile(&h, 0, 1), 1);
	/* Small values are exact. */
	sk_hist_reset(&h);
	for (int k = 0; k < 99; k++)
		sk_hist_add(&h, 7);
	sk_hist_add(&h, 1000000);
	assert_int_equal(sk_hist_quantile(&h, 1, 2), 7);
	assert_int_equal(sk_hist_quantile(&h, 99, 100), 7);
	assert_int_equal(sk_hist_quantile(&h, 100, 100), 1000000);
	/* One sample: every quantile is that sample (clamped to min/max). */
	sk_hist_reset(&h);
	sk_hist_add(&h, 123457);
	assert_int_equal(sk_hist_quantile(&h, 1, 2), 123457);
	assert_int_equal(sk_hist_quantile(&h, 99, 100), 123457);
}

static uint64_t fake_now;
static unsigned fake_calls;
static uint64_t fake_cycles(void)
{
	fake_calls++;
	return fake_now;
}

static void test_trace(void **state)
{
	(void)state;
	static struct sk_trace tr;
	memset(&tr, 0, sizeof(tr));
	tr.cycles = fake_cycles;
	/* Off: a NULL trace records nothing and reads no counter. */
	uint64_t t0 = sk_trace_begin(NULL);
	assert_int_equal(t0, 0);
	sk_trace_end(NULL, SK_TR_tcp_in, t0, 1);
	assert_int_equal(fake_calls, 0);
	/* On: begin/end read the counter once each; a batch records per item. */
	fake_now = 1000;
	t0 = sk_trace_begin(&tr);
	fake_now = 1400;
	sk_trace_end(&tr, SK_TR_ring_rx, t0, 4);
	assert_int_equal(fake_calls, 2);
	assert_int_equal(tr.h[SK_TR_ring_rx].count, 1);
	assert_int_equal(tr.h[SK_TR_ring_rx].sum, 100);
	/* An empty batch records nothing. */
	sk_trace_end(&tr, SK_TR_ring_rx, t0, 0);
	assert_int_equal(tr.h[SK_TR_ring_rx].count, 1);
	assert_string_equal(sk_trace_names[SK_TR_tcp_in], "tcp_in");
	assert_string_equal(sk_trace_names[SK_TR_N - 1], "park_wake");
}

/* Merging two histograms equals adding every sample to one; an empty
 * source changes nothing (min stays exact). */
static void test_merge(void **state)
{
	(void)state;
	static struct sk_hist a, b, all, empty;
	sk_hist_reset(&a);
	sk_hist_reset(&b);
	sk_hist_reset(&all);
	sk_hist_reset(&empty);
	for (uint64_t v = 1; v < 5000; v += 7) {
		sk_hist_add(v % 3 ? &a : &b, v * 1000);
		sk_hist_add(&all, v * 1000);
	}
	sk_hist_merge(&a, &empty);
	sk_hist_merge(&a, &b);
	assert_int_equal(a.count, all.count);
	assert_int_equal(a.sum, all.sum);
	assert_int_equal(a.min, all.min);
	assert_int_equal(a.max, all.max);
	assert_memory_equal(a.b, all.b, sizeof(a.b));
	assert_int_equal(sk_hist_quantile(&a, 99, 100), sk_hist_quantile(&all, 99, 100));
	sk_hist_merge(&empty, &b);
	assert_int_equal(empty.min, b.min);
	assert_int_equal(empty.count, b.count);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
