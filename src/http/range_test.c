/* range_test.c — http_range_parse: every verdict, the choices range.h
 * makes (nginx's where the RFC leaves them open), huge and lying
 * numbers, and the field cut at every point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/range.h"

static struct http_range rg[HTTP_MAX_RANGES];
static unsigned nr;

static enum http_range_verdict parse(const char *v, uint64_t len)
{
	memset(rg, 0xa5, sizeof(rg));
	nr = 12345;
	return http_range_parse((const uint8_t *)v, strlen(v), len, rg, HTTP_MAX_RANGES, &nr);
}

/* One range expected. */
static void one(const char *v, uint64_t len, uint64_t first, uint64_t last)
{
	enum http_range_verdict r = parse(v, len);
	if (r != HTTP_RANGE_OK || nr != 1 || rg[0].first != first || rg[0].last != last)
		fail_msg("\"%s\" len %llu: verdict %d n %u [%llu, %llu], wanted [%llu, %llu]", v,
			 (unsigned long long)len, r, nr, (unsigned long long)rg[0].first,
			 (unsigned long long)rg[0].last, (unsigned long long)first,
			 (unsigned long long)last);
}

static void verdict(const char *v, uint64_t len, enum http_range_verdict want)
{
	enum http_range_verdict r = parse(v, len);
	if (r != want)
		fail_msg("\"%s\" len %llu: verdict %d, wanted %d", v, (unsigned long long)len, r, want);
	if (r != HTTP_RANGE_OK)
		assert_int_equal(nr, 0);
}

static void test_single(void **st)
{
	(void)st;
	one("bytes=0-0", 10, 0, 0);
	one("bytes=0-9", 10, 0, 9);
	one("bytes=2-5", 10, 2, 5);
	one("bytes=5-", 10, 5, 9);
	one("bytes=9-", 10, 9, 9);
	one("bytes=3-100", 10, 3, 9);     /* last past the end: clipped */
	one("BYTES=1-2", 10, 1, 2);       /* the unit is case-insensitive */
	one("Bytes=1-2", 10, 1, 2);
	one("bytes= 1 - 2 ", 10, 1, 2);   /* OWS */
	one("bytes=\t1-2", 10, 1, 2);
	one("  bytes=1-2", 10, 1, 2);
	one("bytes=007-008", 10, 7, 8);   /* leading zeros are digits */
}

static void test_suffix(void **st)
{
	(void)st;
	one("bytes=-1", 10, 9, 9);
	one("bytes=-3", 10, 7, 9);
	one("bytes=-10", 10, 0, 9);
	one("bytes=-11", 10, 0, 9);        /* longer than the file: all of it */
	one("bytes=-99999999999999999999999", 10, 0, 9);
	verdict("bytes=-0", 10, HTTP_RANGE_UNSATISFIABLE);
}

static void test_multi(void **st)
{
	(void)st;
	assert_int_equal(parse("bytes=0-1,4-5", 10), HTTP_RANGE_OK);
	assert_int_equal(nr, 2);
	assert_true(rg[0].first == 0 && rg[0].last == 1 && rg[1].first == 4 && rg[1].last == 5);
	/* Order as asked, not sorted or merged. */
	assert_int_equal(parse("bytes=-2, 0-1", 10), HTTP_RANGE_OK);
	assert_int_equal(nr, 2);
	assert_true(rg[0].first == 8 && rg[0].last == 9 && rg[1].first == 0);
	/* Unsatisfiable members are left out; one left: one range. */
	one("bytes=50-60,2-3", 10, 2, 3);
	one("bytes=2-3,10-", 10, 2, 3);
	one("bytes=5-3,2-3", 10, 2, 3);    /* first > last: left out */
	/* Empty list elements are skipped (RFC 9110 5.6.1.2). */
	assert_int_equal(parse("bytes=0-1,,4-5,", 10), HTTP_RANGE_OK);
	assert_int_equal(nr, 2);
	one("bytes=,0-1", 10, 0, 1);
	/* Exactly the limit, and one more: ignored. */
	assert_int_equal(parse("bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7", 10), HTTP_RANGE_OK);
	assert_int_equal(nr, 8);
	verdict("bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8", 10, HTTP_RANGE_IGNORE);
	/* More bytes than the file (overlaps): ignored, the full 200. */
	verdict("bytes=0-9,0-9", 10, HTTP_RANGE_IGNORE);
	verdict("bytes=0-5,5-9", 10, HTTP_RANGE_IGNORE);  /* 11 > 10 */
	assert_int_equal(parse("bytes=0-4,5-9", 10), HTTP_RANGE_OK);
	/* A caller's smaller max. */
	assert_int_equal(http_range_parse((const uint8_t *)"bytes=0-1,2-3", 13, 10, rg, 1, &nr),
			 HTTP_RANGE_IGNORE);
}

static void test_unsatisfiable(void **st)
{
	(void)st;
	verdict("bytes=10-", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=10-20", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=5-3", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=99999999999999999999-", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=18446744073709551615-18446744073709551615", 10, HTTP_RANGE_UNSATISFIABLE);
	/* An empty file: from 0 is ignored (the empty 200), anything else 416. */
	verdict("bytes=0-", 0, HTTP_RANGE_IGNORE);
	verdict("bytes=0-5", 0, HTTP_RANGE_IGNORE);
	verdict("bytes=-5", 0, HTTP_RANGE_IGNORE);
	verdict("bytes=-0", 0, HTTP_RANGE_IGNORE);
	verdict("bytes=1-", 0, HTTP_RANGE_UNSATISFIABLE);
}

static void test_syntax(void **st)
{
	(void)st;
	/* Another unit, or none: the field is ignored. */
	verdict("", 10, HTTP_RANGE_IGNORE);
	verdict("items=0-1", 10, HTTP_RANGE_IGNORE);
	verdict("bytes", 10, HTTP_RANGE_IGNORE);
	verdict("bytes 0-1", 10, HTTP_RANGE_IGNORE);
	verdict("bytes:0-1", 10, HTTP_RANGE_IGNORE);
	verdict("byte=0-1", 10, HTTP_RANGE_IGNORE);
	/* A bad ranges-specifier: rejected. */
	verdict("bytes=", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=,", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=-", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=5", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=a-b", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=1-2-3", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=--1", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=+1-2", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=1-2;x", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=0-1,x", 10, HTTP_RANGE_UNSATISFIABLE); /* one bad member spoils all */
	verdict("bytes=1 2-3", 10, HTTP_RANGE_UNSATISFIABLE);
	verdict("bytes=0x1-2", 10, HTTP_RANGE_UNSATISFIABLE);
}

static void test_huge_file(void **st)
{
	(void)st;
	uint64_t big = UINT64_MAX - 1;
	one("bytes=0-", big, 0, big - 1);
	one("bytes=-1", big, big - 1, big - 1);
	one("bytes=18446744073709551613-99999999999999999999999", big, big - 1, big - 1);
	verdict("bytes=0-,0-", big, HTTP_RANGE_IGNORE); /* the sum must not wrap to "fits" */
}

/* Every cut of a field gives a verdict, never a read past the cut (ASan
 * checks the exact-size copy) nor more than max ranges. */
static void test_cuts(void **st)
{
	(void)st;
	static const char *fields[] = {"bytes=0-1,4-5,-3", "bytes= 1 - 2 , 7-", "BYTES=-0,,9-"};
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		size_t n = strlen(fields[f]);
		for (size_t cut = 0; cut <= n; cut++) {
			uint8_t *b = test_malloc(cut ? cut : 1);
			memcpy(b, fields[f], cut);
			enum http_range_verdict r = http_range_parse(b, cut, 10, rg, 3, &nr);
			assert_true(r == HTTP_RANGE_IGNORE || r == HTTP_RANGE_OK ||
				    r == HTTP_RANGE_UNSATISFIABLE);
			if (r == HTTP_RANGE_OK) {
				assert_true(nr >= 1 && nr <= 3);
				for (unsigned i = 0; i < nr; i++)
					assert_true(rg[i].first <= rg[i].last && rg[i].last < 10);
			}
			test_free(b);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single),     cmocka_unit_test(test_suffix),
		cmocka_unit_test(test_multi),      cmocka_unit_test(test_unsatisfiable),
		cmocka_unit_test(test_syntax),     cmocka_unit_test(test_huge_file),
		cmocka_unit_test(test_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
