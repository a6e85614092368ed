/* proxy_up_test.c — choosing an upstream and passive health (proxy_up.c)
 * with explicit times: round-robin order, least-connections with ties in
 * round-robin order, tried upstreams skipped, fail_max failures in a row
 * mark one down for fail_timeout, a success resets the count, and a down
 * one is tried again once its period is over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/proxy.h"

static struct proxy px;

static void setup(unsigned n, uint8_t balance)
{
	memset(&px, 0, sizeof(px));
	proxy_config_default(&px.cfg);
	px.cfg.nup = n;
	px.cfg.balance = balance;
	px.cfg.fail_max = 2;
	px.cfg.fail_timeout = 10 * SK_NS_PER_S;
}

static void test_rr(void **st)
{
	(void)st;
	setup(3, PROXY_RR);
	sk_time_ns t = SK_NS_PER_S;
	assert_int_equal(proxy_up_pick(&px, 0, t), 0);
	assert_int_equal(proxy_up_pick(&px, 0, t), 1);
	assert_int_equal(proxy_up_pick(&px, 0, t), 2);
	assert_int_equal(proxy_up_pick(&px, 0, t), 0);
	/* a retry skips what it tried */
	assert_int_equal(proxy_up_pick(&px, 1u << 1, t), 2);
	assert_int_equal(proxy_up_pick(&px, 7u, t), -1);
}

static void test_least(void **st)
{
	(void)st;
	setup(3, PROXY_LEAST);
	sk_time_ns t = SK_NS_PER_S;
	px.up[0].active = 5;
	px.up[1].active = 2;
	px.up[2].active = 2;
	assert_int_equal(proxy_up_pick(&px, 0, t), 1);
	assert_int_equal(proxy_up_pick(&px, 0, t), 2); /* the tie, in rr order */
	assert_int_equal(proxy_up_pick(&px, 1u << 2 | 1u << 1, t), 0);
}

static void test_health(void **st)
{
	(void)st;
	setup(2, PROXY_RR);
	sk_time_ns t = 100 * SK_NS_PER_S;
	proxy_up_failed(&px, 0, t);
	proxy_up_ok(&px, 0); /* a success between: the count starts again */
	proxy_up_failed(&px, 0, t);
	assert_int_equal(px.up[0].down_until, 0);
	proxy_up_failed(&px, 0, t);
	assert_int_equal(px.up[0].down_until, t + 10 * SK_NS_PER_S);
	assert_int_equal(px.up[0].downs, 1);
	assert_int_equal(px.st.up_marked_down, 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(proxy_up_pick(&px, 0, t + SK_NS_PER_S), 1);
	/* both down: none */
	proxy_up_failed(&px, 1, t);
	proxy_up_failed(&px, 1, t);
	assert_int_equal(proxy_up_pick(&px, 0, t + SK_NS_PER_S), -1);
	/* the period over: on trial again */
	int a = proxy_up_pick(&px, 0, t + 11 * SK_NS_PER_S);
	int b = proxy_up_pick(&px, 0, t + 11 * SK_NS_PER_S);
	assert_true((a == 0 && b == 1) || (a == 1 && b == 0));
	assert_int_equal(px.up[0].down_until, 0);
}

static void test_mem_size(void **st)
{
	(void)st;
	struct proxy_config c;
	proxy_config_default(&c);
	assert_int_equal(proxy_mem_size(&c), 0); /* no upstream */
	c.nup = 1;
	assert_true(proxy_mem_size(&c) > 0);
	c.rx_size = 1024; /* smaller than a head */
	assert_int_equal(proxy_mem_size(&c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rr),
		cmocka_unit_test(test_least),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_mem_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
