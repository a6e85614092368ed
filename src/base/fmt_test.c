/* fmt_test.c — sk_fmt against the C library's snprintf on the subset it
 * takes (the same bytes and the same length, cut or not), and its refusals. */
/* The test hands snprintf what a warning would flag (truncation, zero
 * lengths) on purpose; clang knows only some of GCC's names for them. */
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-zero-length"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fmt.h"

#define SAME(...)                                                                   \
	do {                                                                        \
		char a[64], b[64];                                                  \
		long n = sk_fmt(a, sizeof(a), __VA_ARGS__);                         \
		int m = snprintf(b, sizeof(b), __VA_ARGS__);                        \
		assert_int_equal(n, m);                                             \
		assert_string_equal(a, b);                                          \
		for (size_t cap = 0; cap < 8; cap++) { /* cut short: as snprintf */ \
			char c[8] = "xxxxxxx", d[8] = "xxxxxxx";                    \
			assert_int_equal(sk_fmt(c, cap, __VA_ARGS__),               \
					 snprintf(d, cap, __VA_ARGS__));            \
			assert_memory_equal(c, d, 8);                               \
		}                                                                   \
	} while (0)

static void test_like_snprintf(void **state)
{
	(void)state;
	SAME("plain");
	SAME("");
	SAME("/l/%s", "abc123");
	SAME("%d %i %u", -5, 7, 4000000000u);
	SAME("%ld %lu %lld %llu", -1L, 2UL, (long long)INT64_MIN, (unsigned long long)UINT64_MAX);
	SAME("%zu %zd %jd %td", (size_t)12345, (ssize_t)-3, (intmax_t)-9, (ptrdiff_t)4);
	SAME("%x %X %lx %08x", 255u, 255u, 0xdeadbeefUL, 0x1fu);
	SAME("[%5d] [%-5d] [%05d] [%-05d] [%*d] [%-*d] [%*d]", 42, 42, -42, 42, 6, 1, 6, 1, -6, 1);
	SAME("[%.3d] [%.0d] [%.0d] [%8.3d]", 7, 0, 3, -7);
	SAME("[%s] [%.2s] [%.*s] [%10s] [%-10s|]", "hello", "hello", 3, "hello", "hi", "hi");
	SAME("%c%c%5c%-3c|", 'a', 'b', 'c', 'd');
	SAME("100%% %s", "sure");
	SAME("%hd %hhd %hu %hhu", 70000, 300, 70000, 300);
	SAME("max-age=%d, %s", 3600, "public");
	SAME("%s", "a string longer than sixty-four bytes, so that the result is cut off there");
}

static void test_refused(void **state)
{
	(void)state;
	char b[16] = "xx";
	const char *bad[] = {"%f", "%e", "%p", "%n", "%q", "%", "abc%", "%lf", "%a"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b[0] = 'x';
		assert_int_equal(sk_fmt(b, sizeof(b), bad[i], 1.0), -1);
		assert_string_equal(b, "");
	}
	assert_int_equal(sk_fmt(NULL, 0, "%f", 1.0), -1);
	assert_int_equal(sk_fmt(NULL, 0, "%d", 12345), 5); /* the length, nothing written */
}

static void test_null_string(void **state)
{
	(void)state;
	char b[16];
	const char *nul = NULL;
	assert_int_equal(sk_fmt(b, sizeof(b), "[%s]", nul), 8);
	assert_string_equal(b, "[(null)]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_like_snprintf),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_null_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
