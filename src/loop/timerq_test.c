/* timerq_test.c — the loop's timer heap (loop/timerq.h) alone: timers set,
 * moved and cancelled in a pseudo-random order come out by deadline, each
 * with its slot cleared, and a full heap refuses one more.  (Moved from
 * the former static-file engine's tests, which carried it.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "loop/timerq.h"

static void test_order_after_moves_and_cancels(void **st)
{
	(void)st;
	struct loop_timer *heap[64];
	struct loop_timer t[64];
	struct timerq q;
	timerq_init(&q, heap, 64);
	memset(t, 0, sizeof(t));
	uint64_t x = 12345;
	for (int i = 0; i < 64; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		assert_int_equal(timerq_set(&q, &t[i], x >> 40), 0);
	}
	for (int i = 0; i < 64; i += 3)
		timerq_cancel(&q, &t[i]);
	for (int i = 1; i < 64; i += 3)
		timerq_set(&q, &t[i], (uint64_t)i * 7); /* moved, not added */
	sk_time_ns last = 0;
	int n = 0;
	struct loop_timer *p;
	while ((p = timerq_pop_due(&q, SK_TIME_NEVER - 1)) != NULL) {
		assert_true(p->deadline >= last);
		assert_int_equal(p->slot, 0);
		last = p->deadline;
		n++;
	}
	assert_int_equal(n, 64 - 22); /* 22 cancelled: 0, 3, .., 63 */
	assert_int_equal(timerq_next(&q), SK_TIME_NEVER);
	for (int i = 0; i < 64; i++)
		assert_int_equal(t[i].slot, 0);
}

static void test_due_full_and_cancel_twice(void **st)
{
	(void)st;
	struct loop_timer *heap[2];
	struct loop_timer a = {0}, b = {0}, c = {0};
	struct timerq q;
	timerq_init(&q, heap, 2);
	assert_int_equal(timerq_set(&q, &a, 200), 0);
	assert_int_equal(timerq_set(&q, &b, 100), 0);
	assert_int_equal(timerq_set(&q, &c, 50), -SK_ENOMEM); /* full */
	assert_int_equal(c.slot, 0);
	assert_int_equal(timerq_next(&q), 100);
	assert_null(timerq_pop_due(&q, 99)); /* not due yet */
	assert_ptr_equal(timerq_pop_due(&q, 100), &b);
	timerq_cancel(&q, &b); /* no longer armed: nothing */
	assert_int_equal(timerq_next(&q), 200);
	timerq_cancel(&q, &a);
	assert_int_equal(timerq_next(&q), SK_TIME_NEVER);
	assert_null(timerq_pop_due(&q, SK_TIME_NEVER - 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_after_moves_and_cancels),
		cmocka_unit_test(test_due_full_and_cancel_twice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
