/* cache_cc_test.c — Cache-Control directives (RFC 9111 5.2), request and
 * response forms, quoted arguments, duplicates and conflicts read on the
 * safe side, malformed elements, and every cut of a list kept in bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "http/cache_cc.h"

static struct http_cc cc_of(const char *v)
{
	struct http_cc cc;
	http_cc_init(&cc);
	http_cc_add(&cc, (const uint8_t *)v, strlen(v));
	return cc;
}

static void test_response_directives(void **st)
{
	(void)st;
	struct http_cc cc = cc_of("public, max-age=3600, s-maxage=60, must-revalidate");
	assert_int_equal(cc.flags, HTTP_CC_PUBLIC | HTTP_CC_MAX_AGE | HTTP_CC_S_MAXAGE |
					   HTTP_CC_MUST_REVALIDATE);
	assert_int_equal(cc.max_age, 3600);
	assert_int_equal(cc.s_maxage, 60);
	cc = cc_of("no-store");
	assert_int_equal(cc.flags, HTTP_CC_NO_STORE);
	cc = cc_of("private");
	assert_int_equal(cc.flags, HTTP_CC_PRIVATE);
	cc = cc_of("private=\"Set-Cookie\"");
	assert_int_equal(cc.flags, HTTP_CC_PRIVATE);
	cc = cc_of("no-cache");
	assert_int_equal(cc.flags, HTTP_CC_NO_CACHE);
	cc = cc_of("no-cache=\"Set-Cookie, X-Foo\", max-age=5");
	assert_int_equal(cc.flags, HTTP_CC_NO_CACHE | HTTP_CC_NO_CACHE_FIELDS | HTTP_CC_MAX_AGE);
	assert_int_equal(cc.max_age, 5);
	cc = cc_of("proxy-revalidate, no-transform");
	assert_int_equal(cc.flags, HTTP_CC_PROXY_REVALIDATE | HTTP_CC_NO_TRANSFORM);
}

static void test_request_directives(void **st)
{
	(void)st;
	struct http_cc cc = cc_of("max-stale=30, min-fresh=10, only-if-cached");
	assert_int_equal(cc.flags, HTTP_CC_MAX_STALE | HTTP_CC_MIN_FRESH | HTTP_CC_ONLY_IF_CACHED);
	assert_int_equal(cc.max_stale, 30);
	assert_int_equal(cc.min_fresh, 10);
	cc = cc_of("max-stale");
	assert_int_equal(cc.flags, HTTP_CC_MAX_STALE);
	assert_int_equal(cc.max_stale, HTTP_CC_DELTA_MAX); /* any staleness */
	cc = cc_of("max-age=0");
	assert_int_equal(cc.flags, HTTP_CC_MAX_AGE);
	assert_int_equal(cc.max_age, 0);
}

static void test_case_ows_quotes(void **st)
{
	(void)st;
	struct http_cc cc = cc_of("  MAX-AGE=\"120\" ,, ,\tNo-Store ,");
	assert_int_equal(cc.flags, HTTP_CC_MAX_AGE | HTTP_CC_NO_STORE);
	assert_int_equal(cc.max_age, 120);
	/* A comma inside an unknown directive's quoted argument is not a
	 * separator: "no-store" there is not a directive. */
	cc = cc_of("ext=\"a, no-store, b\", max-age=1");
	assert_int_equal(cc.flags, HTTP_CC_MAX_AGE);
	cc = cc_of("ext=\"a\\\"b, no-store\", public");
	assert_int_equal(cc.flags, HTTP_CC_PUBLIC);
	cc = cc_of("community=\"UCI\"");
	assert_int_equal(cc.flags, 0);
}

static void test_values(void **st)
{
	(void)st;
	struct http_cc cc = cc_of("max-age=99999999999999999999999");
	assert_int_equal(cc.max_age, HTTP_CC_DELTA_MAX); /* 2^31 (1.2.2) */
	assert_false(cc.flags & HTTP_CC_INVALID);
	cc = cc_of("max-age=-1");
	assert_true(cc.flags & HTTP_CC_INVALID);
	assert_true(cc.flags & HTTP_CC_MAX_AGE);
	assert_int_equal(cc.max_age, 0); /* a bad value is stale at once */
	cc = cc_of("max-age=1x");
	assert_true(cc.flags & HTTP_CC_INVALID);
	assert_int_equal(cc.max_age, 0);
	cc = cc_of("max-age");
	assert_true(cc.flags & HTTP_CC_INVALID);
	assert_int_equal(cc.max_age, 0);
	cc = cc_of("max-age=\"\"");
	assert_true(cc.flags & HTTP_CC_INVALID);
	uint32_t v;
	assert_true(http_cc_delta((const uint8_t *)" 42 ", 4, &v));
	assert_int_equal(v, 42);
	assert_false(http_cc_delta((const uint8_t *)"", 0, &v));
	assert_false(http_cc_delta((const uint8_t *)"+1", 2, &v));
	assert_false(http_cc_delta((const uint8_t *)"1 2", 3, &v));
}

static void test_duplicates(void **st)
{
	(void)st;
	/* Two values: the smaller max-age/s-maxage/max-stale, the larger
	 * min-fresh, across one line or two. */
	struct http_cc cc = cc_of("max-age=60, max-age=10");
	assert_int_equal(cc.max_age, 10);
	cc = cc_of("max-age=10, max-age=60");
	assert_int_equal(cc.max_age, 10);
	http_cc_add(&cc, (const uint8_t *)"s-maxage=5", 10);
	http_cc_add(&cc, (const uint8_t *)"s-maxage=50", 11);
	assert_int_equal(cc.s_maxage, 5);
	cc = cc_of("min-fresh=5, min-fresh=50, max-stale=9, max-stale");
	assert_int_equal(cc.min_fresh, 50);
	assert_int_equal(cc.max_stale, 9);
	cc = cc_of("max-stale, max-stale=9");
	assert_int_equal(cc.max_stale, 9);
	/* Conflicts are left to the reader: both flags stay. */
	cc = cc_of("public, private");
	assert_true((cc.flags & HTTP_CC_PUBLIC) && (cc.flags & HTTP_CC_PRIVATE));
}

static void test_malformed(void **st)
{
	(void)st;
	struct http_cc cc = cc_of("max-age=10 no-store");
	assert_true(cc.flags & HTTP_CC_INVALID);
	assert_false(cc.flags & HTTP_CC_NO_STORE);
	cc = cc_of("=1, public");
	assert_int_equal(cc.flags, HTTP_CC_INVALID | HTTP_CC_PUBLIC);
	cc = cc_of("no-cache=\"unterminated, public");
	assert_true(cc.flags & HTTP_CC_INVALID);
	cc = cc_of("max-age=5;x, public");
	assert_true(cc.flags & HTTP_CC_INVALID);
	assert_true(cc.flags & HTTP_CC_PUBLIC);
	cc = cc_of("\"public\"");
	assert_int_equal(cc.flags, HTTP_CC_INVALID);
}

/* Every prefix of a list, in an exact-size copy: no read past it. */
static void test_every_cut(void **st)
{
	(void)st;
	const char *v = "no-cache=\"a,\\\"b\", max-age=\"60\", s-maxage=7 , x=y, private";
	size_t n = strlen(v);
	for (size_t k = 0; k <= n; k++) {
		uint8_t *b = malloc(k ? k : 1);
		memcpy(b, v, k);
		struct http_cc cc;
		http_cc_init(&cc);
		http_cc_add(&cc, b, k);
		free(b);
	}
	struct http_cc cc = cc_of(v);
	assert_int_equal(cc.flags, HTTP_CC_NO_CACHE | HTTP_CC_NO_CACHE_FIELDS | HTTP_CC_MAX_AGE |
					   HTTP_CC_S_MAXAGE | HTTP_CC_PRIVATE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_response_directives), cmocka_unit_test(test_request_directives),
		cmocka_unit_test(test_case_ows_quotes),     cmocka_unit_test(test_values),
		cmocka_unit_test(test_duplicates),          cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_every_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
