/* target_test.c — http_target_path: every form, every escape, every
 * refusal, and the buffer edge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/parser.h"
#include "http/target.h"

static char out[HTTP_MAX_REQUEST_LINE + 16];

/* Decode a C string; returns the status (0 = path in out). */
static int dec(const char *t)
{
	size_t len = 12345;
	memset(out, 'Z', sizeof(out));
	int r = http_target_path((const uint8_t *)t, strlen(t), out, sizeof(out), &len);
	if (r == 0) {
		assert_int_equal(len, strlen(out)); /* NUL-terminated, len without it */
	}
	return r;
}

static void ok(const char *t, const char *want)
{
	int r = dec(t);
	if (r != 0)
		fail_msg("\"%s\": status %d, wanted \"%s\"", t, r, want);
	assert_string_equal(out, want);
}

static void refused(const char *t, int status)
{
	int r = dec(t);
	if (r != status)
		fail_msg("\"%s\": status %d, wanted %d", t, r, status);
}

static void test_origin_form(void **st)
{
	(void)st;
	ok("/", "/");
	ok("/index.html", "/index.html");
	ok("/a/b/c.txt", "/a/b/c.txt");
	ok("//", "//");              /* empty segments are not dot-segments */
	ok("/a/", "/a/");
	ok("/a?", "/a");             /* the query goes, even empty */
	ok("/a?q=1&r=%zz", "/a");    /* ... unchecked: it is not part of the path */
	ok("/?/..", "/");
	ok("/a#frag", "/a#frag");    /* '#' is a path byte here (the parser decides on it) */
}

static void test_absolute_form(void **st)
{
	(void)st;
	ok("http://host/a%20b.txt", "/a b.txt");
	ok("http://host:8080/x?y", "/x");
	ok("http://host", "/");
	ok("http://host?q", "/");
	ok("https://h/", "/");
	ok("http://", "/");           /* empty authority: the path is still "/" */
	refused("http:/x", 400);      /* no "://" */
	refused("host/x", 400);
	refused("*", 400);
	refused("", 400);
	refused("ab", 400);
}

static void test_percent_decoding(void **st)
{
	(void)st;
	ok("/a%20b", "/a b");
	ok("/%41%42%43", "/ABC");
	ok("/%4a%4A", "/JJ");         /* hex digits in either case */
	ok("/%2541", "/%41");         /* decoded once, not twice */
	ok("/%3f", "/?");             /* an escaped '?' is a path byte, not a query */
	ok("/%ff%80", "/\xff\x80");   /* any byte but NUL */
	ok("/a%2fb", "/a/b");         /* an escaped '/' separates segments */
}

static void test_bad_escapes(void **st)
{
	(void)st;
	refused("/%", 400);
	refused("/%2", 400);
	refused("/a%2?x", 400);       /* the query ends the path before the second digit */
	refused("/%zz", 400);
	refused("/%g0", 400);
	refused("/%0g", 400);
	refused("/% 1", 400);
	refused("/%00", 400);         /* NUL */
	refused("/a%00.html", 400);
}

static void test_dot_segments(void **st)
{
	(void)st;
	refused("/.", 404);
	refused("/..", 404);
	refused("/./a", 404);
	refused("/a/./b", 404);
	refused("/a/..", 404);
	refused("/../etc/passwd", 404);
	refused("/%2e", 404);
	refused("/%2e%2e/etc/passwd", 404);
	refused("/%2E%2e/x", 404);
	refused("/.%2e", 404);
	refused("/..%2fx", 404);      /* decoded: "/../x" */
	refused("/a%2f..", 404);
	refused("http://h/a/../b", 404);
	/* Dots that are not a whole segment are names. */
	ok("/...", "/...");
	ok("/.a", "/.a");
	ok("/a.", "/a.");
	ok("/a..b/..c", "/a..b/..c");
	ok("/.well-known/x", "/.well-known/x");
}

static void test_overlong(void **st)
{
	(void)st;
	static char t[HTTP_MAX_REQUEST_LINE + 64];
	size_t len;
	/* A path of exactly cap - 1 bytes fits with its NUL; one more does not. */
	char small[8];
	assert_int_equal(http_target_path((const uint8_t *)"/abcdef", 7, small, 8, &len), 0);
	assert_int_equal(len, 7);
	assert_string_equal(small, "/abcdef");
	assert_int_equal(http_target_path((const uint8_t *)"/abcdefg", 8, small, 8, &len), 414);
	/* The limit is on the decoded length: escapes count once. */
	const char *esc = "/%41%42%43%44%45%46";
	assert_int_equal(http_target_path((const uint8_t *)esc, strlen(esc), small, 8, &len), 0);
	assert_string_equal(small, "/ABCDEF");
	assert_int_equal(http_target_path((const uint8_t *)"http://h", 8, small, 1, &len), 414);
	/* The server's own buffer against the longest request line. */
	t[0] = '/';
	memset(t + 1, 'a', sizeof(t) - 2);
	t[sizeof(t) - 1] = 0;
	refused(t, 414);
	t[sizeof(out) - 1] = 0; /* sizeof(out) - 1 bytes: just fits */
	assert_int_equal(dec(t), 0);
	assert_int_equal(strlen(out), sizeof(out) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin_form),
		cmocka_unit_test(test_absolute_form),
		cmocka_unit_test(test_percent_decoding),
		cmocka_unit_test(test_bad_escapes),
		cmocka_unit_test(test_dot_segments),
		cmocka_unit_test(test_overlong),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
