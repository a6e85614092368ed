/* mime_test.c — the media-type table: sorted, case-insensitive, and the
 * names that have no extension. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/mime.h"

static const char *t(const char *name)
{
	return http_mime_type(name, strlen(name));
}

static void test_table(void **st)
{
	(void)st;
	assert_true(http_mime_check() > 100);
	assert_string_equal(t("index.html"), "text/html; charset=utf-8");
	assert_string_equal(t("/a/b/INDEX.HTM"), "text/html; charset=utf-8");
	assert_string_equal(t("app.js"), "text/javascript; charset=utf-8");
	assert_string_equal(t("x.css"), "text/css; charset=utf-8");
	assert_string_equal(t("x.svg"), "image/svg+xml");
	assert_string_equal(t("x.woff2"), "font/woff2");
	assert_string_equal(t("x.wasm"), "application/wasm");
	assert_string_equal(t("x.7z"), "application/x-7z-compressed");
	assert_string_equal(t("x.zst"), "application/zstd");   /* the last entry */
	assert_string_equal(t("a.tar.gz"), "application/gzip"); /* the last dot */
	assert_string_equal(t("x.webmanifest"), "application/manifest+json");
}

static void test_default(void **st)
{
	(void)st;
	assert_string_equal(t(""), HTTP_MIME_DEFAULT);
	assert_string_equal(t("README"), HTTP_MIME_DEFAULT);
	assert_string_equal(t(".html"), HTTP_MIME_DEFAULT);        /* a dot file */
	assert_string_equal(t("/a/.html"), HTTP_MIME_DEFAULT);
	assert_string_equal(t("/a.html/README"), HTTP_MIME_DEFAULT); /* the dir's dot */
	assert_string_equal(t("x."), HTTP_MIME_DEFAULT);
	assert_string_equal(t("x.unknown"), HTTP_MIME_DEFAULT);
	assert_string_equal(t("x.htmlx"), HTTP_MIME_DEFAULT);
	assert_string_equal(t("x.htm"), "text/html; charset=utf-8");
	assert_string_equal(t("x.ht"), HTTP_MIME_DEFAULT);
	assert_string_equal(t("x.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), HTTP_MIME_DEFAULT);
	/* Only n bytes count. */
	assert_string_equal(http_mime_type("a.css.html", 5), "text/css; charset=utf-8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
