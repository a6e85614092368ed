/* date_test.c — the IMF-fixdate both ways, and the three forms an
 * HTTP-date is read in: edges of every field, and garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/date.h"

static bool rd(const char *s, uint64_t *t)
{
	return http_date_parse((const uint8_t *)s, strlen(s), t);
}

static void test_format(void **st)
{
	(void)st;
	char b[HTTP_DATE_LEN + 1] = {0};
	http_date_format(784111777, b);
	assert_string_equal(b, "Sun, 06 Nov 1994 08:49:37 GMT");
	http_date_format(0, b);
	assert_string_equal(b, "Thu, 01 Jan 1970 00:00:00 GMT");
	http_date_format(951782400, b); /* 2000-02-29, a leap day of a 400 year */
	assert_string_equal(b, "Tue, 29 Feb 2000 00:00:00 GMT");
	http_date_format(UINT64_MAX, b);
	assert_string_equal(b, "Fri, 31 Dec 9999 23:59:59 GMT");
}

static void test_three_forms(void **st)
{
	(void)st;
	uint64_t t = 0;
	assert_true(rd("Sun, 06 Nov 1994 08:49:37 GMT", &t));
	assert_int_equal(t, 784111777);
	assert_true(rd("Sunday, 06-Nov-94 08:49:37 GMT", &t));
	assert_int_equal(t, 784111777);
	assert_true(rd("Sun Nov  6 08:49:37 1994", &t));
	assert_int_equal(t, 784111777);
	assert_true(rd("Sun Nov 16 08:49:37 1994", &t));
	assert_int_equal(t, 784111777 + 10 * 86400);
	assert_true(rd("  Sun, 06 Nov 1994 08:49:37 GMT\t", &t)); /* OWS around */
	assert_true(rd("Thursday, 01-Jan-70 00:00:00 GMT", &t));
	assert_int_equal(t, 0);
	assert_true(rd("Friday, 01-Jan-38 00:00:00 GMT", &t)); /* 2038 */
	assert_int_equal(t, 2145916800);
	/* The weekday is read for its form only. */
	assert_true(rd("Mon, 06 Nov 1994 08:49:37 GMT", &t));
	/* Round trip over the whole range. */
	for (uint64_t s = 0; s < 253402300799ull; s += 86399ull * 37 + 13) {
		char b[HTTP_DATE_LEN];
		http_date_format(s, b);
		assert_true(http_date_parse((const uint8_t *)b, HTTP_DATE_LEN, &t));
		assert_int_equal(t, s);
	}
}

static void test_refused(void **st)
{
	(void)st;
	uint64_t t = 42;
	static const char *bad[] = {
		"", "GMT", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
		"Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 94 08:49:37 GMT", "Sun, 32 Jan 1994 08:49:37 GMT",
		"Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT",
		"Sun, 29 Feb 1994 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 23:60:00 GMT",
		"Sun, 06 Nov 1994 23:59:61 GMT", "Sun, 06 Nov 1969 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMTx", "xSun, 06 Nov 1994 08:49:37 GMT",
		"Sun,06 Nov 1994 08:49:37 GMT", "Sunday, 06 Nov 1994 08:49:37 GMT",
		"Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 94", "Foo, 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 8:49:37 GMT", "\"abc\"", "W/\"abc\"", "1994-11-06T08:49:37Z",
		"Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rd(bad[i], &t))
			fail_msg("accepted \"%s\"", bad[i]);
	assert_int_equal(t, 42); /* untouched */
	assert_true(rd("Sat, 29 Feb 2000 08:49:37 GMT", &t)); /* 2000 is leap */
	assert_true(rd("Fri, 31 Dec 9999 23:59:59 GMT", &t));
	assert_false(rd("Sat, 01 Jan 10000 00:00:00 GMT", &t));
}

static void test_cuts(void **st)
{
	(void)st;
	const char *s = "Sunday, 06-Nov-94 08:49:37 GMT";
	size_t n = strlen(s);
	for (size_t cut = 0; cut <= n; cut++) {
		uint8_t *b = test_malloc(cut ? cut : 1);
		memcpy(b, s, cut);
		uint64_t t;
		assert_int_equal(http_date_parse(b, cut, &t), cut == n);
		test_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_three_forms),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
