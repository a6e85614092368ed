/* access_test.c — access-log records: the exact bytes of both formats,
 * absent fields, hostile request lines and User-Agents (quotes,
 * backslashes, CR/LF, escape sequences, bytes that are not UTF-8), the
 * cut of long fields, the bound HTTP_ACCESS_REC_MAX, and the times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/access.h"

static uint8_t buf[HTTP_ACCESS_REC_MAX + 64];

static struct http_access_str S(const char *s)
{
	return (struct http_access_str){(const uint8_t *)s, (uint32_t)strlen(s)};
}

static struct http_access rec_basic(void)
{
	return (struct http_access){
		.addr = sk_addr_v4(SK_IP4(198, 18, 0, 1)),
		.port = 40123,
		.status = 200,
		.body_bytes = 41,
		.line = S("GET /index.html?q=1 HTTP/1.1"),
		.referer = S("http://example.com/"),
		.user_agent = S("curl/8.5.0"),
	};
}

/* Format r and return it as a NUL-terminated string (in buf). */
static const char *fmt(const struct http_access *r, enum http_access_fmt f, const char *time)
{
	size_t n = http_access_format(buf, sizeof(buf), r, f, time);
	assert_true(n > 0 && n <= HTTP_ACCESS_REC_MAX);
	buf[n] = 0;
	assert_int_equal(strlen((char *)buf), n); /* no NUL inside */
	return (const char *)buf;
}

/* One line: '\n' only at the end, and no byte outside printable ASCII. */
static void assert_one_clean_line(const char *s)
{
	size_t n = strlen(s);
	assert_true(n > 0 && s[n - 1] == '\n');
	for (size_t i = 0; i + 1 < n; i++)
		assert_true((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f);
}

/* Double quotes not preceded by a backslash (the combined format's field
 * delimiters: there must be exactly six). */
static int bare_quotes(const char *s)
{
	int n = 0;
	for (size_t i = 0; s[i]; i++)
		if (s[i] == '"' && (i == 0 || s[i - 1] != '\\'))
			n++;
	return n;
}

static void test_combined(void **st)
{
	(void)st;
	struct http_access r = rec_basic();
	assert_string_equal(fmt(&r, HTTP_ACCESS_COMBINED, "01/Dec/2026:16:12:23 +0000"),
			    "198.18.0.1 - - [01/Dec/2026:16:12:23 +0000] \"GET /index.html?q=1 "
			    "HTTP/1.1\" 200 41 \"http://example.com/\" \"curl/8.5.0\"\n");
}

/* An IPv6 client: RFC 5952 text in brackets, in both formats. */
static void test_ipv6_client(void **st)
{
	(void)st;
	struct http_access r = rec_basic();
	r.addr = sk_addr_v6((const uint8_t[16]){0x20, 0x01, 0, 2, [15] = 1});
	assert_string_equal(fmt(&r, HTTP_ACCESS_COMBINED, "t"),
			    "2001:2::1 - - [t] \"GET /index.html?q=1 "
			    "HTTP/1.1\" 200 41 \"http://example.com/\" \"curl/8.5.0\"\n");
	assert_non_null(strstr(fmt(&r, HTTP_ACCESS_JSON, "t"), "\"remote_addr\":\"2001:2::1\""));
	/* The first of two equal zero runs is the one shortened; a lone zero
	 * group stays "0". */
	r.addr = sk_addr_v6((const uint8_t[16]){0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x0a, 0, 0});
	assert_string_equal(strtok((char *)fmt(&r, HTTP_ACCESS_COMBINED, "t"), " "), "2001::1:0:0:a:0");
}

static void test_combined_absent(void **st)
{
	(void)st;
	/* A 408 before any byte: no request line; no Referer; an empty UA. */
	struct http_access r = {.addr = sk_addr_v4(SK_IP4(10, 0, 0, 255)), .status = 408, .body_bytes = 21,
				.user_agent = {(const uint8_t *)"", 0}};
	assert_string_equal(fmt(&r, HTTP_ACCESS_COMBINED, "01/Jan/1970:00:00:00 +0000"),
			    "10.0.0.255 - - [01/Jan/1970:00:00:00 +0000] \"-\" 408 21 \"-\" \"-\"\n");
}

static void test_combined_hostile(void **st)
{
	(void)st;
	struct http_access r = rec_basic();
	/* A line that tries to end the record and forge the next one, a
	 * terminal escape, a backslash, a byte that is not UTF-8. */
	static const uint8_t line[] = "GET /\"\\\r\n1.2.3.4 - - [x] \"GET / HTTP/1.1\" 200 0 \x1b[31m\xff";
	r.line = (struct http_access_str){line, sizeof(line) - 1};
	r.user_agent = S("Mozilla\" \"forged\t\x7f");
	const char *s = fmt(&r, HTTP_ACCESS_COMBINED, "01/Dec/2026:16:12:23 +0000");
	assert_string_equal(s, "198.18.0.1 - - [01/Dec/2026:16:12:23 +0000] "
			       "\"GET /\\x22\\x5C\\x0D\\x0A1.2.3.4 - - [x] \\x22GET / HTTP/1.1\\x22 200 0 "
			       "\\x1B[31m\\xFF\" 200 41 \"http://example.com/\" "
			       "\"Mozilla\\x22 \\x22forged\\x09\\x7F\"\n");
	assert_one_clean_line(s);
	assert_int_equal(bare_quotes(s), 6);
}

static void test_json(void **st)
{
	(void)st;
	struct http_access r = rec_basic();
	r.referer.p = NULL;
	assert_string_equal(fmt(&r, HTTP_ACCESS_JSON, "2026-12-01T16:12:23+00:00"),
			    "{\"time\":\"2026-12-01T16:12:23+00:00\",\"remote_addr\":\"198.18.0.1\","
			    "\"remote_port\":40123,\"request\":\"GET /index.html?q=1 HTTP/1.1\","
			    "\"status\":200,\"body_bytes_sent\":41,\"http_referer\":\"\","
			    "\"http_user_agent\":\"curl/8.5.0\"}\n");
}

static void test_json_hostile(void **st)
{
	(void)st;
	struct http_access r = rec_basic();
	static const uint8_t line[] = "GET /\"},{\"status\":999,\"x\":\"\\ HTTP/1.1\r\n\x01\x1f\x7f\x80\xc3\xa9";
	r.line = (struct http_access_str){line, sizeof(line) - 1};
	static const uint8_t ua[] = "a\tb\"\\\n\xff";
	r.user_agent = (struct http_access_str){ua, sizeof(ua) - 1};
	const char *s = fmt(&r, HTTP_ACCESS_JSON, "2026-12-01T16:12:23+00:00");
	assert_string_equal(s, "{\"time\":\"2026-12-01T16:12:23+00:00\",\"remote_addr\":\"198.18.0.1\","
			       "\"remote_port\":40123,"
			       "\"request\":\"GET /\\\"},{\\\"status\\\":999,\\\"x\\\":\\\"\\\\ HTTP/1.1"
			       "\\r\\n\\u0001\\u001f\\u007f\\u0080\\u00c3\\u00a9\","
			       "\"status\":200,\"body_bytes_sent\":41,"
			       "\"http_referer\":\"http://example.com/\","
			       "\"http_user_agent\":\"a\\tb\\\"\\\\\\n\\u00ff\"}\n");
	assert_one_clean_line(s);
}

/* Every byte value, in both formats: one clean line, and in JSON every
 * backslash starts one of the escapes JSON knows. */
static void test_every_byte(void **st)
{
	(void)st;
	uint8_t all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	struct http_access r = rec_basic();
	r.line = (struct http_access_str){all, 256};
	r.user_agent = (struct http_access_str){all, 256};
	assert_one_clean_line(fmt(&r, HTTP_ACCESS_COMBINED, "t"));
	assert_int_equal(bare_quotes((const char *)buf), 6);
	const char *s = fmt(&r, HTTP_ACCESS_JSON, "t");
	assert_one_clean_line(s);
	for (size_t i = 0; s[i]; i++) {
		if (s[i] != '\\')
			continue;
		char e = s[++i];
		assert_non_null(strchr("\"\\nrtu", e));
		if (e == 'u')
			assert_memory_equal(s + i + 1, "00", 2);
	}
}

static void test_cut_and_bound(void **st)
{
	(void)st;
	static uint8_t big[3 * HTTP_ACCESS_LINE_MAX];
	memset(big, 'a', sizeof(big));
	struct http_access r = rec_basic();
	r.line = (struct http_access_str){big, sizeof(big)};
	const char *s = fmt(&r, HTTP_ACCESS_COMBINED, "t");
	const char *q = strchr(s, '"') + 1;
	assert_int_equal(strspn(q, "a"), HTTP_ACCESS_LINE_MAX);
	assert_memory_equal(q + HTTP_ACCESS_LINE_MAX, "...\" 200", 8);
	/* The widest record: every field at its limit, every byte escaped
	 * to six characters, the largest numbers, the longest time. */
	memset(big, 0xff, sizeof(big));
	/* The widest address too: eight full IPv6 groups in brackets. */
	static const uint8_t wide6[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
	r = (struct http_access){.addr = sk_addr_v6(wide6), .port = 65535, .status = 65535,
				 .body_bytes = UINT64_MAX,
				 .line = {big, sizeof(big)}, .referer = {big, sizeof(big)},
				 .user_agent = {big, sizeof(big)}};
	char t[HTTP_ACCESS_TIME_MAX];
	memset(t, '9', sizeof(t) - 1);
	t[sizeof(t) - 1] = 0;
	size_t n = http_access_format(buf, HTTP_ACCESS_REC_MAX, &r, HTTP_ACCESS_JSON, t);
	assert_true(n > 6 * (HTTP_ACCESS_LINE_MAX + 2 * HTTP_ACCESS_FIELD_MAX));
	assert_true(n <= HTTP_ACCESS_REC_MAX);
	/* Below the bound: nothing, whatever the record. */
	r = rec_basic();
	buf[0] = 'x';
	assert_int_equal(http_access_format(buf, HTTP_ACCESS_REC_MAX - 1, &r, HTTP_ACCESS_JSON, t), 0);
	assert_int_equal(buf[0], 'x');
}

static void test_time(void **st)
{
	(void)st;
	char t[HTTP_ACCESS_TIME_MAX];
	assert_int_equal(http_access_time(0, 0, HTTP_ACCESS_COMBINED, t), 26);
	assert_string_equal(t, "01/Jan/1970:00:00:00 +0000");
	http_access_time(1796141543, 0, HTTP_ACCESS_COMBINED, t);
	assert_string_equal(t, "01/Dec/2026:16:12:23 +0000");
	assert_int_equal(http_access_time(1796141543, 0, HTTP_ACCESS_JSON, t), 25);
	assert_string_equal(t, "2026-12-01T16:12:23+00:00");
	/* East and west of UTC, across a day and a leap day. */
	http_access_time(1709251199, 5 * 3600 + 30 * 60, HTTP_ACCESS_COMBINED, t);
	assert_string_equal(t, "01/Mar/2024:05:29:59 +0530");
	http_access_time(951868800, -8 * 3600, HTTP_ACCESS_JSON, t);
	assert_string_equal(t, "2000-02-29T16:00:00-08:00");
	/* Before the epoch in the zone: held at it; past 9999: its last second. */
	http_access_time(0, -3600, HTTP_ACCESS_JSON, t);
	assert_string_equal(t, "1970-01-01T00:00:00-01:00");
	http_access_time(UINT64_MAX, 0, HTTP_ACCESS_COMBINED, t);
	assert_string_equal(t, "31/Dec/9999:23:59:59 +0000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_combined),
		cmocka_unit_test(test_ipv6_client),
		cmocka_unit_test(test_combined_absent),
		cmocka_unit_test(test_combined_hostile),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_hostile),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_cut_and_bound),
		cmocka_unit_test(test_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
