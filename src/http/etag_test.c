/* etag_test.c — entity-tag lists: strong and weak comparison, "*", OWS and
 * empty elements, invalid lists, and every cut of a list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/etag.h"

static bool m(const char *list, const char *etag, enum http_etag_cmp cmp)
{
	return http_etag_list_match((const uint8_t *)list, strlen(list), etag,
				    etag ? strlen(etag) : 0, cmp, true);
}

static void test_strong(void **st)
{
	(void)st;
	assert_true(m("\"a\"", "\"a\"", HTTP_ETAG_STRONG));
	assert_false(m("\"a\"", "\"b\"", HTTP_ETAG_STRONG));
	assert_false(m("W/\"a\"", "\"a\"", HTTP_ETAG_STRONG));  /* weak never strong-matches */
	assert_false(m("\"a\"", "W/\"a\"", HTTP_ETAG_STRONG));
	assert_true(m("\"x\", \"a\"", "\"a\"", HTTP_ETAG_STRONG));
	assert_true(m("\"x\",\"a\" ,\t\"y\"", "\"a\"", HTTP_ETAG_STRONG));
	assert_false(m("\"A\"", "\"a\"", HTTP_ETAG_STRONG));   /* case matters */
	assert_false(m("\"ab\"", "\"a\"", HTTP_ETAG_STRONG));  /* prefixes are not equal */
	assert_false(m("\"a\"", "\"ab\"", HTTP_ETAG_STRONG));
	assert_true(m("\"\"", "\"\"", HTTP_ETAG_STRONG));      /* the empty opaque-tag */
}

static void test_weak(void **st)
{
	(void)st;
	assert_true(m("W/\"a\"", "\"a\"", HTTP_ETAG_WEAK));
	assert_true(m("\"a\"", "W/\"a\"", HTTP_ETAG_WEAK));
	assert_true(m("W/\"x\", W/\"a\"", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("w/\"a\"", "\"a\"", HTTP_ETAG_WEAK)); /* "W/" is case-sensitive */
}

static void test_star(void **st)
{
	(void)st;
	assert_true(m("*", "\"a\"", HTTP_ETAG_STRONG));
	assert_true(m(" * ", NULL, HTTP_ETAG_WEAK)); /* any current representation */
	assert_false(http_etag_list_match((const uint8_t *)"*", 1, "\"a\"", 3, HTTP_ETAG_WEAK,
					  false));
	assert_false(m("*, \"a\"", "\"a\"", HTTP_ETAG_WEAK)); /* "*" in a list: invalid */
	assert_false(m("**", "\"a\"", HTTP_ETAG_WEAK));
}

static void test_lists(void **st)
{
	(void)st;
	assert_true(m(",\"a\",", "\"a\"", HTTP_ETAG_STRONG)); /* empty elements */
	assert_true(m(" , ,\"a\"", "\"a\"", HTTP_ETAG_STRONG));
	assert_false(m("", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m(" , ", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("\"a\"", NULL, HTTP_ETAG_WEAK)); /* no tag: only "*" */
	/* Invalid lists match nothing, even with a match in them. */
	assert_false(m("a", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("\"a\" x", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("\"a\"x", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("\"a\", b", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("\"a", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("\"a b\"", "\"a b\"", HTTP_ETAG_WEAK)); /* SP is not etagc */
	assert_false(m("W/", "\"a\"", HTTP_ETAG_WEAK));
	assert_false(m("W\"a\"", "\"a\"", HTTP_ETAG_WEAK));
}

static void test_is_one(void **st)
{
	(void)st;
	assert_true(http_etag_is_one((const uint8_t *)"\"a\"", 3));
	assert_true(http_etag_is_one((const uint8_t *)" W/\"a\" ", 7));
	assert_false(http_etag_is_one((const uint8_t *)"\"a\", \"b\"", 8));
	assert_false(http_etag_is_one((const uint8_t *)"Sun, 06 Nov 1994 08:49:37 GMT", 29));
	assert_false(http_etag_is_one((const uint8_t *)"", 0));
}

static void test_cuts(void **st)
{
	(void)st;
	const char *list = "W/\"x\", \"abc\" ,, \"a\"";
	size_t n = strlen(list);
	for (size_t cut = 0; cut <= n; cut++) {
		uint8_t *b = test_malloc(cut ? cut : 1);
		memcpy(b, list, cut);
		bool r = http_etag_list_match(b, cut, "\"a\"", 3, HTTP_ETAG_WEAK, true);
		assert_int_equal(r, cut == n); /* only the whole list has "a" complete */
		http_etag_is_one(b, cut);
		test_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strong), cmocka_unit_test(test_weak),
		cmocka_unit_test(test_star),   cmocka_unit_test(test_lists),
		cmocka_unit_test(test_is_one), cmocka_unit_test(test_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
