/* files_handler_test.c — the files handler (files_handler.h) on the
 * application engine (app.c), on the fake loop (loop_host/loop_fake.h)
 * with a small site, a fixed Date, and what RFC 9110 asks of each answer:
 * validators (ETag, Last-Modified), conditionals (304, 412 and their
 * order), ranges (206, multipart/byteranges, 416, If-Range), directories
 * (index, 301 with the query kept, 403, 404), precompressed variants with
 * Vary, HEAD, Cache-Control on the answers about a file, pipelines,
 * slow sockets, and the loop's three ways of sending a file's bytes.
 *
 * Every case the former static-file engine's tests and its differential
 * against this handler covered is here, asserted directly: a table of requests, each with its status line, the lines
 * its head must and must not hold, and its body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/date.h"
#include "http/file_answer.h"
#include "http/files_handler.h"
#include "loop_host/loop_fake.h"

/* ---- the site ---- */

#define T0 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT; the ETag of a.txt is "2ebc98a1-a" */
static uint8_t big[3000];
static struct http_file site_gz = {.data = (const uint8_t *)"GZ", .len = 2,
					 .ctype = "application/gzip", .mtime = T0 + 1};
static struct http_file site_br = {.data = (const uint8_t *)"BRO", .len = 3,
					 .ctype = "x", .mtime = T0 + 2, .etag = "\"br-tag\""};
static struct http_file site_a = {.data = (const uint8_t *)"0123456789", .len = 10,
					.ctype = "text/plain", .mtime = T0};
static struct http_file site_z = {.data = (const uint8_t *)"zzzz", .len = 4,
					.ctype = "text/plain", .mtime = T0, .gz = &site_gz,
					.br = &site_br};
static struct http_file site_idx = {.data = (const uint8_t *)"<p>d</p>", .len = 8,
					  .ctype = "text/html"};
static struct http_file site_dir = {.is_dir = true};
static struct http_file site_sp = {.data = (const uint8_t *)"abc", .len = 3,
					 .ctype = "text/plain"};
static struct http_file site_big = {.data = big, .len = sizeof(big), .ctype = "b", .mtime = T0};

/* Each entry as a source that prepares its validators makes it
 * (http_file_prepare into an arena: serve's file cache, the archive), or
 * as one that does not (the handler then formats them per answer): the
 * answers must be the same byte for byte. */
static void prepare_site(bool prepared)
{
	struct http_file *all[] = {&site_gz, &site_br, &site_a, &site_z, &site_idx, &site_dir,
				   &site_sp, &site_big};
	static char vals[SK_ARRAY_LEN(all) * (HTTP_DATE_LEN + 1 + HTTP_ETAG_MAX + 1)];
	size_t at = 0;
	for (size_t i = 0; i < SK_ARRAY_LEN(all); i++) {
		/* Unprepared: the source's own tag only (site_br's). */
		all[i]->last_modified = NULL;
		all[i]->etag = all[i] == &site_br ? "\"br-tag\"" : NULL;
		if (prepared) {
			size_t need = http_file_prepare_len(all[i]);
			assert_int_equal(http_file_prepare(all[i], vals + at), need);
			at += need;
		}
	}
	if (prepared) { /* what the handler then sends as it is */
		assert_string_equal(site_a.last_modified, "Sun, 06 Nov 1994 08:49:37 GMT");
		assert_string_equal(site_a.etag, "\"2ebc98a1-a\"");
		assert_string_equal(site_br.etag, "\"br-tag\""); /* the source's own etag stands */
		assert_null(site_idx.last_modified); /* no mtime: no validators */
		assert_null(site_idx.etag);
		/* The arena holds what the entries no longer do: a Last-Modified
		 * and its NUL for each of the 5 entries with a time, and the made
		 * tags of the 4 without a tag of their own. */
		assert_int_equal(at, 5 * 30 + sizeof("\"2ebc98a2-2\"") + sizeof("\"2ebc98a1-a\"") +
					     sizeof("\"2ebc98a1-4\"") + sizeof("\"2ebc98a1-bb8\""));
	}
}

static char last_path[4096]; /* the last path looked up ("" after a reset) */

static const struct http_file *site(void *ctx, const char *path, size_t len)
{
	(void)ctx;
	static const struct {
		const char *p;
		const struct http_file *f;
	} t[] = {{"/a.txt", &site_a},  {"/z.txt", &site_z},       {"/d", &site_dir},
		 {"/d/index.html", &site_idx}, {"/e", &site_dir}, {"/big", &site_big},
		 {"/e/index.html/index.html", &site_a}, {"/a b.txt", &site_sp}};
	assert_int_equal(strlen(path), len); /* NUL-terminated at len */
	assert_true(len && (len == 1 || path[len - 1] != '/')); /* never a trailing '/' */
	assert_true(len < sizeof(last_path));
	memcpy(last_path, path, len + 1);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(path, t[i].p))
			return t[i].f;
	return NULL;
}

/* ---- the engine ---- */

#define DATE "Sun, 06 Nov 1994 08:49:37 GMT"
#define CC_LONG "public, max-age=31536000, immutable"
static struct loop_fake fa;
static struct http_app app;
static struct http_files files;
static void *amem;
static const struct http_app_route routes[] = {
	{HTTP_APP_ANY, "/", true, http_files_handle, &files},
};
static const struct http_app_def def = {.routes = routes, .nroutes = 1, .name = "files"};

static void setup_site(const char *cache_control)
{
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)('A' + i % 26);
	loop_fake_init(&fa, 1000 * SK_NS_PER_S);
	files = (struct http_files){.lookup = site, .cache_control = cache_control};
	struct http_app_config ac;
	http_app_config_default(&ac);
	ac.max_conns = 8;
	size_t sz = http_app_mem_size(&ac);
	free(amem);
	amem = calloc(1, sz);
	assert_int_equal(http_app_init(&app, amem, sz, &ac, &def, &fa.base), 0);
	http_app_set_date(&app, DATE);
	assert_int_equal(http_app_start(&app), 0);
}

static void check(void)
{
	assert_int_equal(http_app_check(&app), 0);
}

static char got[LOOP_FAKE_BUF + 1];
static size_t got_len;
static bool got_open, got_shut;

/* The bytes to the engine on a fresh connection; what it answered
 * (NUL-terminated in got), and whether the connection stayed. */
static const char *ask_raw(const char *req, size_t n)
{
	static int next = 2;
	if (next >= LOOP_FAKE_NSOCK)
		next = 2;
	int s = next++;
	loop_fake_connect(&fa, s);
	loop_fake_send(&fa, s, req, n);
	check();
	got_len = fa.s[s].out_len;
	memcpy(got, fa.s[s].out, got_len + 1);
	got_open = fa.s[s].open;
	got_shut = fa.s[s].shut;
	if (got_open)
		loop_fake_eof(&fa, s); /* the client goes: its state is free for the next */
	check();
	return got;
}

static const char *ask(const char *req)
{
	return ask_raw(req, strlen(req));
}

static void has(const char *resp, const char *line)
{
	if (!strstr(resp, line))
		fail_msg("no \"%s\" in:\n%s", line, resp);
}

static void lacks(const char *resp, const char *line)
{
	if (strstr(resp, line))
		fail_msg("\"%s\" in:\n%s", line, resp);
}

static const char *body_of(const char *resp)
{
	const char *b = strstr(resp, "\r\n\r\n");
	assert_non_null(b);
	return b + 4;
}

static int count(const char *hay, size_t len, const char *needle)
{
	int n = 0;
	size_t nl = strlen(needle);
	for (size_t i = 0; i + nl <= len; i++)
		if (!memcmp(hay + i, needle, nl))
			n++;
	return n;
}

#define GET(path, fields) "GET " path " HTTP/1.1\r\nHost: a\r\n" fields "\r\n"
#define HEAD(path, fields) "HEAD " path " HTTP/1.1\r\nHost: a\r\n" fields "\r\n"

/* ---- one answer, checked whole ---- */

#define ET_A "\r\nETag: \"2ebc98a1-a\"\r\n"
#define LM_A "\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
#define TXT "\r\nContent-Type: text/plain\r\n"
#define AR "\r\nAccept-Ranges: bytes\r\n"
#define VARY "\r\nVary: Accept-Encoding\r\n"
#define A_200 {TXT, "\r\nContent-Length: 10\r\n", AR, LM_A, ET_A}
#define A_BODY "0123456789"

struct want {
	const char *req;
	const char *status;   /* after "HTTP/1.1 " */
	const char *has[6];   /* in the head, each exactly */
	const char *lacks[4]; /* nowhere in the answer */
	const char *body;     /* exactly, or NULL: big[off, off + len) */
	size_t off, len;
	bool closes;          /* "Connection: close", and the connection ends */
};

/* Entries leave out the trailing fields they do not need (zero). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct want answers[] = {
	/* validators: ETag from the time and the length, Last-Modified */
	{GET("/a.txt", ""), "200 OK", A_200, {"Vary", "Content-Encoding", "Content-Range"}, A_BODY},
	{HEAD("/a.txt", ""), "200 OK", A_200, {"Vary"}, ""},
	/* no time: no Last-Modified, no ETag */
	{GET("/d/", ""), "200 OK", {"\r\nContent-Type: text/html\r\n", "\r\nContent-Length: 8\r\n", AR},
	 {"Last-Modified", "ETag"}, "<p>d</p>"},
	/* a source's own ETag wins */
	{GET("/z.txt", "Accept-Encoding: br\r\n"), "200 OK",
	 {"\r\nETag: \"br-tag\"\r\n", "\r\nContent-Encoding: br\r\n", VARY, TXT,
	  "\r\nLast-Modified: Sun, 06 Nov 1994 08:49:39 GMT\r\n"},
	 {"Accept-Ranges"}, "BRO"},
	{GET("/nope", ""), "404 Not Found", {TXT}, {"ETag", "Last-Modified", "Accept-Ranges"},
	 "404 Not Found\n"},

	/* If-None-Match: weak comparison, lists, "*"; a 304 has no body
	 * and no Content-Length or Content-Type, but the validators */
	{GET("/a.txt", "If-None-Match: \"2ebc98a1-a\"\r\n"), "304 Not Modified", {ET_A, LM_A},
	 {"Content-Length", "Content-Type"}, ""},
	{GET("/a.txt", "If-None-Match: \"x\", W/\"2ebc98a1-a\"\r\n"), "304 Not Modified", {ET_A},
	 {"Content-Length"}, ""},
	{GET("/a.txt", "If-None-Match: *\r\n"), "304 Not Modified", {ET_A}, {"Content-Length"}, ""},
	{HEAD("/a.txt", "If-None-Match: *\r\n"), "304 Not Modified", {ET_A}, {"Content-Length"}, ""},
	{GET("/a.txt", "If-None-Match: \"2ebc98a1-b\"\r\n"), "200 OK", A_200, {NULL}, A_BODY},
	/* If-Modified-Since: not modified since a time at or after mtime,
	 * in each of the three date forms; an invalid date is ignored */
	{GET("/a.txt", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"), "304 Not Modified",
	 {LM_A}, {"Content-Length"}, ""},
	{GET("/a.txt", "If-Modified-Since: Sunday, 06-Nov-94 08:49:38 GMT\r\n"), "304 Not Modified",
	 {LM_A}, {"Content-Length"}, ""},
	{GET("/a.txt", "If-Modified-Since: Sun Nov  6 08:49:36 1994\r\n"), "200 OK", A_200, {NULL},
	 A_BODY},
	{GET("/a.txt", "If-Modified-Since: yesterday\r\n"), "200 OK", A_200, {NULL}, A_BODY},
	{GET("/d/", "If-Modified-Since: Sun, 06 Nov 2094 08:49:37 GMT\r\n"), "200 OK", {AR},
	 {"Last-Modified"}, "<p>d</p>"},
	/* 13.2.2: If-None-Match decides, If-Modified-Since is then ignored */
	{GET("/a.txt", "If-None-Match: \"x\"\r\nIf-Modified-Since: Sun, 06 Nov 2094 08:49:37 GMT\r\n"),
	 "200 OK", A_200, {NULL}, A_BODY},
	{GET("/a.txt", "If-None-Match: \"2ebc98a1-a\"\r\n"
		       "If-Modified-Since: Sun, 06 Nov 1970 08:49:37 GMT\r\n"),
	 "304 Not Modified", {ET_A}, {"Content-Length"}, ""},
	/* If-Match: strong comparison; 412 is an ordinary answer (the
	 * connection stays) */
	{GET("/a.txt", "If-Match: \"2ebc98a1-a\"\r\n"), "200 OK", A_200, {NULL}, A_BODY},
	{GET("/a.txt", "If-Match: *\r\n"), "200 OK", A_200, {NULL}, A_BODY},
	{GET("/a.txt", "If-Match: W/\"2ebc98a1-a\"\r\n"), "412 Precondition Failed", {TXT, ET_A},
	 {"Connection: close"}, "412 Precondition Failed\n"},
	{GET("/a.txt", "If-Match: \"nope\"\r\n"), "412 Precondition Failed", {ET_A}, {NULL},
	 "412 Precondition Failed\n"},
	{GET("/d/", "If-Match: \"x\"\r\n"), "412 Precondition Failed", {TXT}, {"ETag"}, /* only "*" */
	 "412 Precondition Failed\n"},
	/* If-Unmodified-Since; ignored under If-Match, and without a time */
	{GET("/a.txt", "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n"),
	 "412 Precondition Failed", {LM_A}, {NULL}, "412 Precondition Failed\n"},
	{GET("/a.txt", "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"), "200 OK", A_200,
	 {NULL}, A_BODY},
	{GET("/a.txt", "If-Match: *\r\nIf-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n"),
	 "200 OK", A_200, {NULL}, A_BODY},
	{GET("/d/", "If-Unmodified-Since: Sun, 06 Nov 1970 08:49:36 GMT\r\n"), "200 OK", {AR},
	 {NULL}, "<p>d</p>"},
	/* 412 before 304 */
	{GET("/a.txt", "If-Match: \"x\"\r\nIf-None-Match: *\r\n"), "412 Precondition Failed", {ET_A},
	 {NULL}, "412 Precondition Failed\n"},
	/* a repeated header: the first line counts */
	{GET("/a.txt", "if-none-match: \"x\"\r\nIF-NONE-MATCH: *\r\n"), "200 OK", A_200, {NULL},
	 A_BODY},

	/* ranges: one part, suffix, open end */
	{GET("/a.txt", "Range: bytes=2-4\r\n"), "206 Partial Content",
	 {"\r\nContent-Range: bytes 2-4/10\r\n", "\r\nContent-Length: 3\r\n", TXT, ET_A, LM_A, AR},
	 {NULL}, "234"},
	{GET("/a.txt", "Range: bytes=-3\r\n"), "206 Partial Content",
	 {"\r\nContent-Range: bytes 7-9/10\r\n"}, {NULL}, "789"},
	{GET("/a.txt", "Range: bytes=7-\r\n"), "206 Partial Content",
	 {"\r\nContent-Range: bytes 7-9/10\r\n"}, {NULL}, "789"},
	/* a large part stays a slice of the file */
	{GET("/big", "Range: bytes=1000-2999\r\n"), "206 Partial Content",
	 {"\r\nContent-Range: bytes 1000-2999/3000\r\n", "\r\nContent-Length: 2000\r\n",
	  "\r\nContent-Type: b\r\n"},
	 {NULL}, NULL, 1000, 2000},
	/* 416 with the length, an ordinary answer */
	{GET("/a.txt", "Range: bytes=10-\r\n"), "416 Range Not Satisfiable",
	 {"\r\nContent-Range: bytes */10\r\n", TXT}, {"Connection: close", "Accept-Ranges"},
	 "416 Range Not Satisfiable\n"},
	/* ignored: another unit, overlapping ranges; HEAD is never 206 */
	{GET("/a.txt", "Range: items=1-2\r\n"), "200 OK", A_200, {"Content-Range"}, A_BODY},
	{GET("/a.txt", "Range: bytes=0-9,0-9\r\n"), "200 OK", A_200, {"Content-Range"}, A_BODY},
	{HEAD("/a.txt", "Range: bytes=0-1\r\n"), "200 OK", A_200, {"Content-Range"}, ""},
	/* If-Range: the strong ETag or the date, exactly */
	{GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: \"2ebc98a1-a\"\r\n"), "206 Partial Content",
	 {"\r\nContent-Range: bytes 0-1/10\r\n"}, {NULL}, "01"},
	{GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: \"old\"\r\n"), "200 OK", A_200,
	 {"Content-Range"}, A_BODY},
	{GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: W/\"2ebc98a1-a\"\r\n"), "200 OK", A_200,
	 {"Content-Range"}, A_BODY},
	{GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: Sun, 06 Nov 1994 08:49:37 GMT\r\n"),
	 "206 Partial Content", {"\r\nContent-Range: bytes 0-1/10\r\n"}, {NULL}, "01"},
	{GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: Sun, 06 Nov 1994 08:49:38 GMT\r\n"), "200 OK",
	 A_200, {"Content-Range"}, A_BODY},

	/* directories: 301 to the slash, the query and the target's bytes
	 * kept as sent (absolute-form too) */
	{GET("/d", ""), "301 Moved Permanently", {"\r\nLocation: /d/\r\n", TXT},
	 {"ETag", "Cache-Control"}, "301 Moved Permanently\n"},
	{GET("/d?x=%201", ""), "301 Moved Permanently", {"\r\nLocation: /d/?x=%201\r\n"}, {NULL},
	 "301 Moved Permanently\n"},
	{GET("/%64", ""), "301 Moved Permanently", {"\r\nLocation: /%64/\r\n"}, {NULL},
	 "301 Moved Permanently\n"},
	{GET("http://a/d?q", ""), "301 Moved Permanently", {"\r\nLocation: /d/?q\r\n"}, {NULL},
	 "301 Moved Permanently\n"},
	/* a directory without an index (the root too): 403 */
	{GET("/e/", ""), "403 Forbidden", {TXT}, {"ETag"}, "403 Forbidden\n"},
	{GET("/", ""), "403 Forbidden", {TXT}, {NULL}, "403 Forbidden\n"},
	/* a slash after a file, or after nothing */
	{GET("/a.txt/", ""), "404 Not Found", {TXT}, {NULL}, "404 Not Found\n"},
	{GET("/nope/", ""), "404 Not Found", {TXT}, {NULL}, "404 Not Found\n"},
	/* an index a lookup said is a file */
	{GET("/e/index.html/", ""), "200 OK", A_200, {NULL}, A_BODY},

	/* precompressed variants: the original's type, the variant's
	 * validators, Vary on every answer about the file, no ranges of
	 * encoded bytes (as nginx) */
	{GET("/z.txt", "Accept-Encoding: gzip\r\n"), "200 OK",
	 {"\r\nContent-Encoding: gzip\r\n", VARY, TXT, "\r\nETag: \"2ebc98a2-2\"\r\n",
	  "\r\nLast-Modified: Sun, 06 Nov 1994 08:49:38 GMT\r\n", "\r\nContent-Length: 2\r\n"},
	 {"Accept-Ranges"}, "GZ"},
	{GET("/z.txt", "Accept-Encoding: gzip, br\r\n"), "200 OK",
	 {"\r\nContent-Encoding: br\r\n", VARY}, {NULL}, "BRO"},
	{GET("/z.txt", "Accept-Encoding: gzip;q=0, br;q=0\r\n"), "200 OK",
	 {VARY, "\r\nETag: \"2ebc98a1-4\"\r\n", AR}, {"Content-Encoding"}, "zzzz"},
	{GET("/z.txt", ""), "200 OK", {VARY, TXT, AR}, {"Content-Encoding"}, "zzzz"},
	/* the variant's ETag is what conditionals compare */
	{GET("/z.txt", "Accept-Encoding: gzip\r\nIf-None-Match: \"2ebc98a2-2\"\r\n"), "304 Not Modified",
	 {"\r\nETag: \"2ebc98a2-2\"\r\n", VARY}, {"Content-Length", "Content-Encoding"}, ""},
	{GET("/z.txt", "If-None-Match: \"2ebc98a2-2\"\r\n"), "200 OK", {VARY}, {"Content-Encoding"},
	 "zzzz"},
	{GET("/z.txt", "Accept-Encoding: gzip\r\nRange: bytes=1-\r\n"), "200 OK",
	 {"\r\nContent-Encoding: gzip\r\n"}, {"Accept-Ranges", "Content-Range"}, "GZ"},
	{HEAD("/z.txt", "Accept-Encoding: gzip\r\n"), "200 OK",
	 {"\r\nContent-Encoding: gzip\r\n", VARY, "\r\nContent-Length: 2\r\n"}, {NULL}, ""},

	/* whole bodies larger than a small answer */
	{GET("/big", ""), "200 OK",
	 {"\r\nContent-Length: 3000\r\n", "\r\nContent-Type: b\r\n", "\r\nETag: \"2ebc98a1-bb8\"\r\n"},
	 {NULL}, NULL, 0, 3000},
	{HEAD("/big", ""), "200 OK", {"\r\nContent-Length: 3000\r\n"}, {NULL}, ""},
	/* versions and Connection */
	{GET("/a.txt", "Connection: close\r\n"), "200 OK", {"\r\nConnection: close\r\n", ET_A},
	 {NULL}, A_BODY, 0, 0, true},
	{"GET /a.txt HTTP/1.0\r\n\r\n", "200 OK", {"\r\nConnection: close\r\n"}, {"keep-alive"},
	 A_BODY, 0, 0, true},
	{"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "200 OK",
	 {"\r\nConnection: keep-alive\r\n"}, {"Connection: close"}, A_BODY},
	{"HEAD /d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "301 Moved Permanently",
	 {"\r\nLocation: /d/\r\n", "\r\nConnection: keep-alive\r\n"}, {NULL}, ""},
	/* the engine's own answers around the handler: a bad escape (400,
	 * and the connection ends), a dot segment (404, never looked up) */
	{"GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", "400 Bad Request", {"\r\nConnection: close\r\n"},
	 {NULL}, "400 Bad Request\n", 0, 0, true},
	{GET("/../a.txt", ""), "404 Not Found", {TXT}, {NULL}, "404 Not Found\n"},
};
#pragma GCC diagnostic pop

/* The value of `name` in the head of resp (up to its CRLF), or NULL. */
static const char *field(const char *resp, const char *name, char *out, size_t cap)
{
	char key[64];
	snprintf(key, sizeof(key), "\r\n%s: ", name);
	const char *p = strstr(resp, key), *end = strstr(resp, "\r\n\r\n");
	if (!p || p > end)
		return NULL;
	p += strlen(key);
	const char *e = strstr(p, "\r\n");
	snprintf(out, cap, "%.*s", (int)(e - p), p);
	return out;
}

/* What holds for every answer: the status line, then Server and Date;
 * Content-Length the body's length (a HEAD's and a 304's body empty);
 * Cache-Control on a 200, 206 or 304 when configured, and on no other. */
static void check_answer(const struct want *w, const char *cc)
{
	const char *r = ask(w->req);
	char line[128];
	snprintf(line, sizeof(line), "HTTP/1.1 %s\r\nServer: skiff\r\nDate: " DATE "\r\n", w->status);
	if (strncmp(r, line, strlen(line)))
		fail_msg("for:\n%swant \"%s\", got:\n%s", w->req, w->status, r);
	for (size_t i = 0; i < SK_ARRAY_LEN(w->has) && w->has[i]; i++)
		has(r, w->has[i]);
	for (size_t i = 0; i < SK_ARRAY_LEN(w->lacks) && w->lacks[i]; i++)
		lacks(r, w->lacks[i]);
	const char *b = body_of(r);
	size_t blen = got_len - (size_t)(b - r);
	if (w->body) {
		assert_int_equal(blen, strlen(w->body));
		assert_memory_equal(b, w->body, blen);
	} else {
		assert_int_equal(blen, w->len);
		assert_memory_equal(b, big + w->off, w->len);
	}
	bool head = !strncmp(w->req, "HEAD ", 5);
	bool is304 = !strncmp(w->status, "304", 3);
	char v[128];
	if (is304) {
		assert_null(field(r, "Content-Length", v, sizeof(v)));
	} else {
		assert_non_null(field(r, "Content-Length", v, sizeof(v)));
		if (!head)
			assert_int_equal(strtoul(v, NULL, 10), blen);
	}
	bool about_file = !strncmp(w->status, "200", 3) || !strncmp(w->status, "206", 3) || is304;
	if (cc && about_file) {
		assert_non_null(field(r, "Cache-Control", v, sizeof(v)));
		assert_string_equal(v, cc);
	} else {
		lacks(r, "Cache-Control");
	}
	if (w->closes) {
		has(r, "\r\nConnection: close\r\n");
		assert_true(!got_open || got_shut);
	} else {
		lacks(r, "Connection: close");
		assert_true(got_open && !got_shut);
	}
}

static void test_answers(void **st)
{
	(void)st;
	const char *cc[] = {NULL, CC_LONG, "max-age=60"};
	for (int prepared = 0; prepared < 2; prepared++) {
		prepare_site(prepared);
		for (size_t k = 0; k < SK_ARRAY_LEN(cc); k++) {
			setup_site(cc[k]);
			for (size_t i = 0; i < SK_ARRAY_LEN(answers); i++)
				check_answer(&answers[i], cc[k]);
		}
	}
	/* HEAD: the same head as GET's, no body. */
	setup_site(NULL);
	const char *heads[][2] = {{GET("/z.txt", "Accept-Encoding: gzip\r\n"),
				   HEAD("/z.txt", "Accept-Encoding: gzip\r\n")},
				  {GET("/a.txt", ""), HEAD("/a.txt", "")},
				  {GET("/big", ""), HEAD("/big", "")}};
	for (size_t i = 0; i < SK_ARRAY_LEN(heads); i++) {
		static char g[LOOP_FAKE_BUF + 1];
		const char *r = ask(heads[i][0]);
		snprintf(g, sizeof(g), "%.*s", (int)(body_of(r) - r), r);
		r = ask(heads[i][1]);
		assert_string_equal(r, g);
	}
	/* One answer byte for byte: the order of the lines too. */
	assert_string_equal(ask(GET("/a.txt", "Range: bytes=2-4\r\n")),
			    "HTTP/1.1 206 Partial Content\r\nServer: skiff\r\nDate: " DATE "\r\n"
			    "Content-Type: text/plain\r\nContent-Range: bytes 2-4/10\r\n"
			    "Content-Length: 3\r\nAccept-Ranges: bytes\r\n"
			    "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
			    "ETag: \"2ebc98a1-a\"\r\n\r\n234");
	prepare_site(false);
}

/* A multipart/byteranges answer (RFC 9110 14.6): each part with its
 * boundary, the file's type and its range, in the order asked, the
 * closing boundary, and a Content-Length that is the body's. */
static void check_multipart(const char *r, const uint8_t *data, size_t total, const char *ctype,
			    const size_t (*rg)[2], size_t n)
{
	has(r, "HTTP/1.1 206 Partial Content\r\n");
	char bnd[128], v[128];
	assert_non_null(field(r, "Content-Type", v, sizeof(v)));
	assert_memory_equal(v, "multipart/byteranges; boundary=", 31);
	snprintf(bnd, sizeof(bnd), "%s", v + 31);
	assert_true(strlen(bnd) > 0);
	lacks(r, "Accept-Ranges");
	const char *b = body_of(r);
	assert_non_null(field(r, "Content-Length", v, sizeof(v)));
	size_t blen = strtoul(v, NULL, 10);
	static char want[LOOP_FAKE_BUF];
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		w += (size_t)snprintf(want + w, sizeof(want) - w,
				      "\r\n--%s\r\nContent-Type: %s\r\nContent-Range: bytes %zu-%zu/%zu\r\n\r\n",
				      bnd, ctype, rg[i][0], rg[i][1], total);
		memcpy(want + w, data + rg[i][0], rg[i][1] - rg[i][0] + 1);
		w += rg[i][1] - rg[i][0] + 1;
	}
	w += (size_t)snprintf(want + w, sizeof(want) - w, "\r\n--%s--\r\n", bnd);
	assert_int_equal(blen, w);
	assert_memory_equal(b, want, w);
}

static void test_multipart(void **st)
{
	(void)st;
	setup_site(NULL);
	static const size_t two[][2] = {{0, 1}, {8, 9}};
	check_multipart(ask(GET("/a.txt", "Range: bytes=0-1, -2\r\n")), site_a.data, 10,
			"text/plain", two, 2);
	static const size_t eight[][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 3},
					  {4, 4}, {5, 5}, {6, 6}, {7, 7}};
	check_multipart(ask(GET("/big", "Range: bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7\r\n")), big,
			3000, "b", eight, 8);
	static const size_t halves[][2] = {{0, 1499}, {1500, 2999}};
	check_multipart(ask(GET("/big", "Range: bytes=0-1499,1500-2999\r\n")), big, 3000, "b",
			halves, 2);
	has(got, "\r\nETag: \"2ebc98a1-bb8\"\r\n");
	assert_true(got_open);
	/* With Cache-Control, on the 206 too. */
	setup_site(CC_LONG);
	has(ask(GET("/a.txt", "Range: bytes=0-1, -2\r\n")), "\r\nCache-Control: " CC_LONG "\r\n");
	/* HEAD: the multipart head's length, no body. */
	setup_site(NULL);
	const char *r = ask(HEAD("/a.txt", "Range: bytes=0-1, -2\r\n"));
	has(r, " 200 ");
	assert_string_equal(body_of(r), "");
}

/* Pipelined requests: answered in order, each exactly as when asked
 * alone on its own connection. */
static void test_pipelines(void **st)
{
	(void)st;
	static const char *const pairs[][2] = {
		{GET("/a.txt", ""), GET("/z.txt", "Accept-Encoding: gzip\r\n")},
		{GET("/d", ""), GET("/nope", "")},
		{GET("/a.txt", "Range: bytes=0-1, -2\r\n"), HEAD("/big", "")},
		{GET("/a.txt", "If-None-Match: *\r\n"), GET("/a.txt", "Connection: close\r\n")},
		{GET("/big", "Range: bytes=10-\r\n"), GET("/a.txt", "Range: bytes=10-\r\n")},
		{HEAD("/a.txt", ""), GET("/e/", "")},
	};
	const char *cc[] = {NULL, CC_LONG};
	static char req[4096], want[LOOP_FAKE_BUF + 1];
	for (size_t k = 0; k < SK_ARRAY_LEN(cc); k++) {
		setup_site(cc[k]);
		for (size_t i = 0; i < SK_ARRAY_LEN(pairs); i++) {
			size_t w = strlen(ask(pairs[i][0]));
			memcpy(want, got, w);
			size_t w2 = strlen(ask(pairs[i][1]));
			memcpy(want + w, got, w2 + 1);
			bool last_open = got_open;
			snprintf(req, sizeof(req), "%s%s", pairs[i][0], pairs[i][1]);
			ask(req);
			assert_string_equal(got, want);
			assert_true(got_open == last_open);
		}
	}
}

/* The path the site is asked for: decoded, the query gone; escapes
 * that hide a dot segment or a NUL are never looked up. */
static void test_paths(void **st)
{
	(void)st;
	setup_site(NULL);
	last_path[0] = 0;
	const char *r = ask(GET("/a%20b.txt?q=1", ""));
	assert_string_equal(last_path, "/a b.txt");
	has(r, "HTTP/1.1 200 OK\r\n");
	assert_string_equal(body_of(r), "abc");
	last_path[0] = 0;
	has(ask(GET("http://a/a%20b.txt", "")), "HTTP/1.1 200 OK\r\n"); /* absolute-form */
	assert_string_equal(last_path, "/a b.txt");
	const char *bad[][2] = {
		{"/%2e%2e/etc/passwd", "404"}, {"/a/..", "404"},        {"/..%2fx", "404"},
		{"/%2E%2e/x", "404"},          {"/./a%20b.txt", "404"}, {"/%00", "400"},
		{"/%zz", "400"},               {"/%2", "400"},
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++) {
		last_path[0] = 0;
		char req[256];
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			 bad[i][0]);
		r = ask(req);
		if (strncmp(r + 9, bad[i][1], 3))
			fail_msg("%s: want %s, got:\n%s", bad[i][0], bad[i][1], r);
		assert_string_equal(last_path, ""); /* never looked up */
	}
	/* Long paths: up to what the engine decodes, looked up (404); a
	 * redirect with a long query keeps it whole. */
	static char req[4096], path[1600], loc[1700];
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", path);
	has(ask(req), "HTTP/1.1 404 Not Found\r\n");
	assert_string_equal(last_path, path);
	snprintf(req, sizeof(req), "GET /d?%s HTTP/1.1\r\nHost: a\r\n\r\n", path + 1100);
	snprintf(loc, sizeof(loc), "\r\nLocation: /d/?%s\r\n", path + 1100);
	r = ask(req);
	has(r, "HTTP/1.1 301 Moved Permanently\r\n");
	has(r, loc);
	assert_true(got_open);
}

/* Answers that keep the connection or end it. */
static void test_keep_or_close(void **st)
{
	(void)st;
	setup_site(NULL);
	/* 405 for a method other than GET and HEAD, with Allow; the
	 * connection stays. */
	const char *m[] = {"POST /a.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
			   "DELETE /nope HTTP/1.1\r\nHost: a\r\n\r\n"};
	for (size_t i = 0; i < SK_ARRAY_LEN(m); i++) {
		const char *r = ask(m[i]);
		has(r, "HTTP/1.1 405 Method Not Allowed\r\n");
		has(r, "\r\nAllow: GET, HEAD\r\n");
		assert_string_equal(body_of(r), "405 Method Not Allowed\n");
		lacks(r, "Connection: close");
		assert_true(got_open && !got_shut);
	}
	/* 414: a Location longer than HTTP_LOCATION_MAX; the connection stays. */
	static char req[4096];
	char q[700];
	memset(q, 'q', sizeof(q) - 1);
	q[sizeof(q) - 1] = 0;
	snprintf(req, sizeof(req), "GET /d?%s HTTP/1.1\r\nHost: a\r\n\r\n", q);
	const char *r = ask(req);
	has(r, "HTTP/1.1 414 URI Too Long\r\n");
	lacks(r, "Location");
	lacks(r, "Connection: close");
	assert_true(got_open);
	/* A 301 to a request with a short body: the body is read and
	 * dropped, the connection stays, and the next request is answered. */
	r = ask(GET("/d", "Content-Length: 3\r\n") "abc" GET("/a.txt", ""));
	has(r, "HTTP/1.1 301 Moved Permanently\r\n");
	has(r, "\r\n\r\n0123456789");
	lacks(r, "Connection: close");
	assert_true(got_open);
	/* A GET with a chunked body, which the handler does not read: the
	 * engine answers, with the close (a chunked body has no length it
	 * could skip up front), and the request behind is not answered. */
	r = ask(GET("/a.txt", "Transfer-Encoding: chunked\r\n") "3\r\nabc\r\n0\r\n\r\n" GET("/z.txt", ""));
	assert_int_equal(count(got, got_len, "HTTP/1.1 "), 1);
	has(r, "HTTP/1.1 200 OK\r\n");
	has(r, "\r\nConnection: close\r\n");
	assert_true(!got_open || got_shut);
	/* "Connection: close" with a body: answered once the body is in,
	 * then the end. */
	r = ask(GET("/a.txt", "Connection: close\r\nContent-Length: 2\r\n") "hi");
	has(r, "HTTP/1.1 200 OK\r\n");
	has(r, "\r\nConnection: close\r\n");
	assert_false(got_open && !got_shut);
	/* A path past the engine's decoding room: 414, and the end. */
	char path[2100];
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", path);
	has(ask(req), "HTTP/1.1 414 ");
	assert_true(!got_open || got_shut);
}

/* Many multi-range answers pipelined in one send, through the engine's
 * copying stream, on a socket that takes everything or a few bytes per
 * write: all of them, in order, the same bytes either way. */
static void test_pipelined_multipart(void **st)
{
	(void)st;
	static char req[8192], first[LOOP_FAKE_BUF];
	size_t first_len = 0;
	req[0] = 0;
	for (int i = 0; i < 12; i++)
		strcat(req, i % 3 == 1 ? GET("/a.txt", "")
				       : GET("/big", "Range: bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7\r\n"));
	static const size_t rooms[] = {SIZE_MAX, 700, 37, 1};
	for (size_t k = 0; k < SK_ARRAY_LEN(rooms); k++) {
		setup_site(CC_LONG);
		loop_fake_connect(&fa, 5);
		fa.s[5].write_room = rooms[k];
		loop_fake_send(&fa, 5, req, strlen(req));
		check();
		size_t prev;
		do { /* until a write edge moves nothing: all sent */
			prev = fa.s[5].out_len;
			fa.s[5].write_room = rooms[k];
			loop_fake_event(&fa, 5, LOOP_EV_WRITE);
			check();
		} while (fa.s[5].out_len != prev);
		const char *out = fa.s[5].out;
		size_t n = fa.s[5].out_len;
		assert_int_equal(count(out, n, "HTTP/1.1 206"), 8);
		assert_int_equal(count(out, n, "HTTP/1.1 200"), 4);
		assert_int_equal(count(out, n, "Content-Range: bytes 7-7/3000"), 8);
		const char *p = out;
		for (int i = 0; i < 12; i++) { /* 206 200 206 206 200 ... */
			const char *want = i % 3 == 1 ? "HTTP/1.1 200" : "HTTP/1.1 206";
			p = strstr(p, "HTTP/1.1 ");
			assert_non_null(p);
			assert_memory_equal(p, want, 12);
			p++;
		}
		assert_true(fa.s[5].open);
		if (k == 0) {
			memcpy(first, out, n);
			first_len = n;
		} else {
			assert_int_equal(n, first_len);
			assert_memory_equal(out, first, n);
		}
	}
}

/* ---- http_app_send_file: by reference, by sendfile, by copy ---- */

static struct loop_ops ops;
static const struct loop_ops *inner;
static int ref_calls, sf_calls;
static bool sf_truncated;

static long fake_send_ref(struct loop *l, int sock, const struct loop_iov *head, int nhead,
			  const void *p, size_t len)
{
	assert_true(nhead >= 0 && nhead < 4 && len > 0);
	assert_true((const uint8_t *)p >= big && (const uint8_t *)p + len <= big + sizeof(big));
	ref_calls++;
	struct loop_iov v[4];
	for (int i = 0; i < nhead; i++)
		v[i] = head[i];
	v[nhead] = (struct loop_iov){p, len};
	return inner->writev(l, sock, v, nhead + 1);
}

static long fake_sendfile(struct loop *l, int sock, const struct loop_iov *head, int nhead, int fd,
			  uint64_t off, size_t len)
{
	assert_int_equal(fd, 9);
	assert_true(off + len <= sizeof(big) && len > 0 && nhead >= 0 && nhead < 4);
	sf_calls++;
	if (sf_truncated)
		return -SK_ECONNABORTED;
	struct loop_iov v[4];
	for (int i = 0; i < nhead; i++)
		v[i] = head[i];
	v[nhead] = (struct loop_iov){big + off, len};
	return inner->writev(l, sock, v, nhead + 1);
}

enum { BY_COPY, BY_REF, BY_SENDFILE };

/* A whole file, a range, two ranges (multipart) and a small file, pipelined, on the app engine
 * with the loop offering `how`; every byte out. */
static size_t sendfile_run(int how, size_t room, char *out)
{
	setup_site(NULL);
	inner = fa.base.ops;
	ops = *fa.base.ops;
	if (how == BY_REF)
		ops.send_ref = fake_send_ref;
	if (how == BY_SENDFILE)
		ops.sendfile = fake_sendfile;
	fa.base.ops = &ops;
	site_big.pinned = how == BY_REF;
	site_big.fd = how == BY_SENDFILE ? 9 : 0;
	loop_fake_connect(&fa, 5);
	fa.s[5].write_room = room;
	const char *req = GET("/big", "") GET("/big", "Range: bytes=100-2099\r\n")
		GET("/big", "Range: bytes=0-9,2990-2999\r\n") GET("/a.txt", "")
		HEAD("/big", "");
	loop_fake_send(&fa, 5, req, strlen(req));
	size_t prev;
	do {
		prev = fa.s[5].out_len;
		fa.s[5].write_room = room;
		loop_fake_event(&fa, 5, LOOP_EV_WRITE);
	} while (fa.s[5].out_len != prev);
	check();
	assert_true(fa.s[5].open);
	memcpy(out, fa.s[5].out, fa.s[5].out_len);
	site_big.pinned = false;
	site_big.fd = 0;
	return fa.s[5].out_len;
}

static void test_send_file_paths(void **st)
{
	(void)st;
	static char want[LOOP_FAKE_BUF], out[LOOP_FAKE_BUF];
	static const size_t rooms[] = {SIZE_MAX, 700, 37, 1};
	for (size_t i = 0; i < SK_ARRAY_LEN(rooms); i++) {
		size_t wn = sendfile_run(BY_COPY, rooms[i], want);
		assert_true(wn > 3000 + 2000);
		for (int how = BY_REF; how <= BY_SENDFILE; how++) {
			ref_calls = sf_calls = 0;
			size_t gn = sendfile_run(how, rooms[i], out);
			assert_int_equal(gn, wn);
			assert_memory_equal(out, want, wn);
			/* The two bodies of /big went by the op (a.txt too: any
			 * file body does; HEAD sends none). */
			assert_true((how == BY_REF ? ref_calls : sf_calls) >= 2);
			assert_int_equal(how == BY_REF ? sf_calls : ref_calls, 0);
		}
	}
	/* And each answer as when asked alone on its own connection. */
	size_t gn = sendfile_run(BY_COPY, SIZE_MAX, out);
	static char alone[LOOP_FAKE_BUF + 1];
	size_t an = 0;
	const char *each[] = {GET("/big", ""), GET("/big", "Range: bytes=100-2099\r\n"),
			      GET("/big", "Range: bytes=0-9,2990-2999\r\n"), GET("/a.txt", ""),
			      HEAD("/big", "")};
	for (size_t i = 0; i < SK_ARRAY_LEN(each); i++) {
		const char *r = ask(each[i]);
		memcpy(alone + an, r, got_len);
		an += got_len;
	}
	assert_int_equal(gn, an);
	assert_memory_equal(alone, out, gn);
	/* The file cut short under sendfile: the connection closes. */
	setup_site(NULL);
	inner = fa.base.ops;
	ops = *fa.base.ops;
	ops.sendfile = fake_sendfile;
	fa.base.ops = &ops;
	site_big.fd = 9;
	sf_truncated = true;
	loop_fake_connect(&fa, 5);
	loop_fake_send(&fa, 5, GET("/big", ""), strlen(GET("/big", "")));
	assert_false(fa.s[5].open);
	assert_int_equal(app.st.aborted, 1);
	sf_truncated = false;
	site_big.fd = 0;
	check();
}

/* ---- header removal (http_app_header_drop), as a router uses it ---- */

static int drop_then_files(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	assert_int_equal(http_app_header(r, "X-Site", "a"), 0);
	assert_int_equal(http_app_header(r, "X-Gone", "1"), 0);
	assert_int_equal(http_app_header_drop(r, "x-gone"), 0);
	assert_int_equal(http_app_header_drop(r, "ETag"), 0);
	assert_int_equal(http_app_header_drop(r, "SERVER"), 0);
	assert_int_equal(http_app_header_drop(r, "Content-Length"), -SK_EINVAL);
	assert_int_equal(http_app_header_drop(r, "Date"), -SK_EINVAL);
	assert_int_equal(http_app_header_drop(r, "bad name"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "X-Gone", "2"), 0); /* accepted, not sent */
	http_app_set_rest(r, 4);                                  /* "/fx/" */
	return http_files_handle(r, &files);
}

static void test_header_drop(void **st)
{
	(void)st;
	setup_site(NULL);
	static const struct http_app_route rt[] = {{HTTP_APP_ANY, "/", true, drop_then_files, NULL}};
	static const struct http_app_def d = {.routes = rt, .nroutes = 1, .name = "drop"};
	struct http_app_config ac;
	http_app_config_default(&ac);
	ac.max_conns = 4;
	size_t sz = http_app_mem_size(&ac);
	free(amem);
	amem = calloc(1, sz);
	loop_fake_init(&fa, 1000 * SK_NS_PER_S);
	assert_int_equal(http_app_init(&app, amem, sz, &ac, &d, &fa.base), 0);
	http_app_set_date(&app, DATE);
	assert_int_equal(http_app_start(&app), 0);
	ask(GET("/fx/a.txt", "") GET("/fx/a.txt", ""));
	/* Both answers: X-Site, no X-Gone, no ETag, no Server; the rest as
	 * the files handler's for /a.txt. */
	const char *p = got;
	for (int i = 0; i < 2; i++) {
		p = strstr(p, "HTTP/1.1 200 OK\r\nDate: " DATE "\r\nX-Site: a\r\nContent-Type: text/plain\r\n"
			      "Content-Length: 10\r\nAccept-Ranges: bytes\r\n"
			      "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n0123456789");
		assert_non_null(p);
		p++;
	}
	assert_null(strstr(got, "X-Gone"));
	assert_null(strstr(got, "Server"));
	assert_true(got_open);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_multipart),
		cmocka_unit_test(test_pipelines),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_keep_or_close),
		cmocka_unit_test(test_pipelined_multipart),
		cmocka_unit_test(test_send_file_paths),
		cmocka_unit_test(test_header_drop),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	free(amem);
	return r;
}
