/* sites_proxy_test.c — a proxy route of the configuration as http/proxy.h's
 * config (router/sites_proxy.c): a route without options gets exactly what
 * `skiff proxy` gets from its flags' defaults (conf/opts.c), each option
 * lands in its field, and sites_proxy_same tells every option apart (a
 * reload that changes one builds a new proxy). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/opts.h"
#include "conf/sites_conf.h"
#include "http/proxy.h"
#include "router/sites.h"

static struct sconf conf;
static char *arena;

static const struct sconf_route *route_of(const char *body)
{
	char text[2048];
	snprintf(text, sizeof(text), "site a.test {\n listen 127.0.0.1:8080;\n route / { %s }\n}\n",
		 body);
	size_t len = strlen(text), asize = sites_conf_arena_bound(len);
	free(arena);
	arena = malloc(asize);
	assert_non_null(arena);
	struct sconf_err err;
	if (sites_conf_parse(text, len, "", arena, asize, &conf, &err) < 0)
		fail_msg("%u:%u: %s\n--\n%s", err.pos.line, err.pos.col, err.msg, text);
	return &conf.sites[0].routes[0];
}

/* No option: the config `skiff proxy --upstream ...` builds with no other
 * flag (conf/sites_flags.c's mapping of the options, from opt_init's defaults). */
static void test_defaults_are_the_flags(void **state)
{
	(void)state;
	struct opts o;
	char e[256];
	assert_int_equal(opt_init(&o, &opt_cmd_proxy, e, sizeof(e)), 0);
	struct proxy_config pc;
	sites_proxy_config(route_of("proxy 127.0.0.1:9090 [::1]:9091;"), &pc);
	assert_int_equal(pc.nup, 2);
	assert_int_equal(pc.up_port[0], 9090);
	assert_int_equal(sk_addr_ip4(&pc.up_addr[0]), SK_IP4(127, 0, 0, 1));
	assert_int_equal(pc.up_port[1], 9091);
	assert_int_equal(pc.up_addr[1].b[15], 1);
	assert_int_equal(pc.balance, opt_num(&o, OPT_BALANCE) == 1 ? PROXY_LEAST : PROXY_RR);
	assert_int_equal(pc.balance, PROXY_RR);
	assert_int_equal(pc.pool, opt_num(&o, OPT_POOL));
	assert_int_equal(pc.connect_timeout, opt_num(&o, OPT_CONNECT_TIMEOUT) * SK_NS_PER_S);
	assert_int_equal(pc.first_byte_timeout, opt_num(&o, OPT_FIRST_BYTE_TIMEOUT) * SK_NS_PER_S);
	assert_int_equal(pc.idle_timeout, opt_num(&o, OPT_UP_IDLE_TIMEOUT) * SK_NS_PER_S);
	assert_int_equal(pc.fail_max, opt_num(&o, OPT_FAIL_MAX));
	assert_int_equal(pc.fail_timeout, opt_num(&o, OPT_FAIL_TIMEOUT) * SK_NS_PER_S);
	assert_false(opt_given(&o, OPT_NO_X_CACHE));
	assert_true(pc.x_cache);
	struct opt_prefix pp[OPT_PREFIXES_MAX];
	int np = opt_parse_prefixes(opt_str(&o, OPT_PURGE_ALLOW), pp, OPT_PREFIXES_MAX);
	assert_int_equal(pc.npurge_allow, np);
	for (int i = 0; i < np; i++) {
		assert_memory_equal(&pc.purge_allow[i].addr, &pp[i].addr, sizeof(pp[i].addr));
		assert_int_equal(pc.purge_allow[i].len, pp[i].len);
	}
	assert_false(pc.body_on_get);
	assert_false(pc.host_upstream);
	/* the same as proxy_config_default but for the upstreams */
	struct proxy_config d;
	proxy_config_default(&d);
	d.nup = pc.nup;
	memcpy(d.up_addr, pc.up_addr, sizeof(d.up_addr));
	memcpy(d.up_port, pc.up_port, sizeof(d.up_port));
	assert_memory_equal(&d, &pc, sizeof(d));
}

static void test_every_option(void **state)
{
	(void)state;
	struct proxy_config pc;
	sites_proxy_config(route_of("proxy 127.0.0.1:1 127.0.0.1:2; balance least; pool 0; "
				    "connect_timeout 250ms; first_byte_timeout 3s; "
				    "upstream_idle_timeout 4s; fail_max 1; fail_timeout 7s; "
				    "x_cache off; purge_allow 198.18.0.0/15 2001:2::/48; "
				    "proxy_host upstream; body_on_get allow; cache 1m;"),
			   &pc);
	assert_int_equal(pc.balance, PROXY_LEAST);
	assert_int_equal(pc.pool, 0);
	assert_int_equal(pc.connect_timeout, 250 * SK_NS_PER_MS);
	assert_int_equal(pc.first_byte_timeout, 3 * SK_NS_PER_S);
	assert_int_equal(pc.idle_timeout, 4 * SK_NS_PER_S);
	assert_int_equal(pc.fail_max, 1);
	assert_int_equal(pc.fail_timeout, 7 * SK_NS_PER_S);
	assert_false(pc.x_cache);
	assert_int_equal(pc.npurge_allow, 2);
	assert_int_equal(pc.purge_allow[0].len, 96 + 15);
	struct sk_addr in = sk_addr_v4(SK_IP4(198, 19, 255, 1)), out = sk_addr_v4(SK_IP4(198, 20, 0, 1));
	assert_true(proxy_prefix_match(&pc.purge_allow[0], &in));
	assert_false(proxy_prefix_match(&pc.purge_allow[0], &out));
	assert_int_equal(pc.purge_allow[1].len, 48);
	assert_true(pc.host_upstream);
	assert_true(pc.body_on_get);
	/* a config proxy_init takes (pool 0 and the rest in range) */
	pc.max_xchg = 4;
	assert_true(proxy_mem_size(&pc) > 0);
	/* purge_allow none: PURGE off */
	sites_proxy_config(route_of("proxy 127.0.0.1:1; purge_allow none;"), &pc);
	assert_int_equal(pc.npurge_allow, 0);
}

/* Each option, changed alone, makes another proxy; the same text, the same. */
static void test_same(void **state)
{
	(void)state;
	static const char *const bodies[] = {
		"proxy 127.0.0.1:1 127.0.0.1:2;",
		"proxy 127.0.0.1:2 127.0.0.1:1;",
		"proxy 127.0.0.1:1 127.0.0.1:2; cache 1m;",
		"proxy 127.0.0.1:1 127.0.0.1:2; proxy_host upstream;",
		"proxy 127.0.0.1:1 127.0.0.1:2; body_on_get allow;",
		"proxy 127.0.0.1:1 127.0.0.1:2; balance least;",
		"proxy 127.0.0.1:1 127.0.0.1:2; pool 0;",
		"proxy 127.0.0.1:1 127.0.0.1:2; pool 1;",
		"proxy 127.0.0.1:1 127.0.0.1:2; connect_timeout 1s;",
		"proxy 127.0.0.1:1 127.0.0.1:2; first_byte_timeout 1s;",
		"proxy 127.0.0.1:1 127.0.0.1:2; upstream_idle_timeout 1s;",
		"proxy 127.0.0.1:1 127.0.0.1:2; fail_max 1;",
		"proxy 127.0.0.1:1 127.0.0.1:2; fail_timeout 1s;",
		"proxy 127.0.0.1:1 127.0.0.1:2; x_cache off;",
		"proxy 127.0.0.1:1 127.0.0.1:2; purge_allow none;",
		"proxy 127.0.0.1:1 127.0.0.1:2; purge_allow ::1;",
		"proxy 127.0.0.1:1 127.0.0.1:2; purge_allow ::2;",
		"proxy 127.0.0.1:1 127.0.0.1:2; purge_allow ::1/127;",
	};
	enum { N = sizeof(bodies) / sizeof(bodies[0]) };
	static struct sconf_route r[N];
	for (size_t i = 0; i < N; i++)
		r[i] = *route_of(bodies[i]); /* the upstreams' text is not compared */
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < N; j++)
			if (sites_proxy_same(&r[i], &r[j]) != (i == j))
				fail_msg("sites_proxy_same says %s for\n  %s\n  %s",
					 i == j ? "no" : "yes", bodies[i], bodies[j]);
	struct sconf_route again = *route_of(bodies[N - 1]);
	assert_true(sites_proxy_same(&again, &r[N - 1]));
	/* x_cache on, given, is the default: the same proxy */
	struct sconf_route on = *route_of("proxy 127.0.0.1:1 127.0.0.1:2; x_cache on;");
	assert_true(sites_proxy_same(&on, &r[0]));
}

static int teardown(void **state)
{
	(void)state;
	free(arena);
	arena = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_the_flags),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_same),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
