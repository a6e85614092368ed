/* swtable_test.c — the MAC table: learning, moves, aging, its bound under
 * a flood of source addresses, and forgetting a detached port. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "switch/swtable.h"

static struct swt *tbl;

static int setup(void **state)
{
	(void)state;
	tbl = calloc(1, sizeof(*tbl));
	if (tbl == NULL)
		return -1;
	swt_init(tbl, 0x9e3779b97f4a7c15ull, 10 * SK_NS_PER_S);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(tbl);
	return 0;
}

static void mac_of(uint32_t n, uint8_t m[SK_MAC_LEN])
{
	m[0] = 0x02;
	m[1] = 0;
	sk_put_be32(m + 2, n);
}

static void test_learn_lookup_move(void **state)
{
	uint8_t a[SK_MAC_LEN], b[SK_MAC_LEN];
	(void)state;
	mac_of(1, a);
	mac_of(2, b);
	assert_int_equal(swt_lookup(tbl, a, 0), SWT_NONE);
	swt_learn(tbl, a, 3, 100);
	swt_learn(tbl, b, 5, 100);
	assert_int_equal(swt_lookup(tbl, a, 200), 3);
	assert_int_equal(swt_lookup(tbl, b, 200), 5);
	assert_int_equal(tbl->c.learned, 2);
	/* The host moved: the next frame from it re-points the entry. */
	swt_learn(tbl, a, 4, 300);
	assert_int_equal(swt_lookup(tbl, a, 400), 4);
	assert_int_equal(tbl->c.moved, 1);
	assert_int_equal(tbl->c.learned, 2);
	assert_int_equal(swt_count(tbl, 400), 2);
}

static void test_aging(void **state)
{
	uint8_t a[SK_MAC_LEN], b[SK_MAC_LEN];
	sk_time_ns t0 = 1000 * SK_NS_PER_S;
	(void)state;
	mac_of(7, a);
	mac_of(8, b);
	swt_learn(tbl, a, 1, t0);
	swt_learn(tbl, b, 2, t0);
	/* Refreshed just before the age: b lives on, a does not. */
	swt_learn(tbl, b, 2, t0 + 9 * SK_NS_PER_S);
	assert_int_equal(swt_lookup(tbl, a, t0 + 9 * SK_NS_PER_S), 1);
	assert_int_equal(swt_count(tbl, t0 + 10 * SK_NS_PER_S), 1);
	assert_int_equal(swt_lookup(tbl, a, t0 + 10 * SK_NS_PER_S), SWT_NONE);
	assert_int_equal(tbl->c.expired, 1);
	assert_int_equal(swt_lookup(tbl, b, t0 + 18 * SK_NS_PER_S), 2);
	assert_int_equal(swt_lookup(tbl, b, t0 + 19 * SK_NS_PER_S), SWT_NONE);
}

static void test_bounded_under_flood(void **state)
{
	uint8_t m[SK_MAC_LEN], keep[SK_MAC_LEN];
	sk_time_ns now = SK_NS_PER_S;
	(void)state;
	/* 100,000 distinct sources, all live: the table stays at its size,
	 * pushing out the oldest, and the newest are all findable. */
	for (uint32_t i = 0; i < 100000; i++) {
		mac_of(0x100000 + i, m);
		swt_learn(tbl, m, i % 7, now + i);
	}
	assert_true(swt_count(tbl, now + 100000) <= SWT_ENTRIES);
	assert_true(tbl->c.evicted >= 100000 - SWT_ENTRIES);
	mac_of(0x100000 + 99999, keep);
	assert_int_equal(swt_lookup(tbl, keep, now + 100001), 99999 % 7);
	/* A flood cannot make a lookup walk far: a miss reads one window. */
	mac_of(0xfffffff, m);
	assert_int_equal(swt_lookup(tbl, m, now + 100001), SWT_NONE);
}

static void test_forget_port(void **state)
{
	uint8_t m[SK_MAC_LEN];
	(void)state;
	for (uint32_t i = 0; i < 64; i++) {
		mac_of(i, m);
		swt_learn(tbl, m, i % 2, 10);
	}
	swt_forget_port(tbl, 1);
	for (uint32_t i = 0; i < 64; i++) {
		mac_of(i, m);
		assert_int_equal(swt_lookup(tbl, m, 20), i % 2 ? SWT_NONE : 0);
	}
	/* Forgotten entries leave holes; later MACs of the same window are
	 * still found (lookups scan the whole window). */
	mac_of(1000, m);
	swt_learn(tbl, m, 3, 30);
	assert_int_equal(swt_lookup(tbl, m, 40), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_learn_lookup_move, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded_under_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget_port, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
