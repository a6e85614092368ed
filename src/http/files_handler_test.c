/* files_handler_test.c — the files handler on the application engine
 * (files_handler.h on app.c) against `skiff serve`'s engine (server.c),
 * both on the fake loop (loop_host/loop_fake.h) with the same site, the
 * same Date and the same requests: every answer must be the same bytes.
 *
 * Differences that are intended, each checked below as what it is:
 *   - 405 (a method other than GET/HEAD) and 414 (a Location too long):
 *     server.c closes the connection ("Connection: close"); the handler
 *     answers like any other answer and the connection stays;
 *   - a 301 to a request with a body: server.c closes (its Location lives
 *     in the buffer the body would overwrite); the app engine reads and
 *     drops a short body and keeps the connection;
 *   - a decoded path longer than the app engine's 2047 bytes: the engine
 *     answers 414 and closes, server.c looks it up (404).
 * And send_file's paths (by reference, sendfile, a copy) give the same
 * bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/files_handler.h"
#include "http/server.h"
#include "loop_host/loop_fake.h"

/* ---- the site (server_test.c's) ---- */

#define T0 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT */
static uint8_t big[3000];
static const struct http_file site_gz = {.data = (const uint8_t *)"GZ", .len = 2,
					 .ctype = "application/gzip", .mtime = T0 + 1};
static const struct http_file site_br = {.data = (const uint8_t *)"BRO", .len = 3,
					 .ctype = "x", .mtime = T0 + 2, .etag = "\"br-tag\""};
static const struct http_file site_a = {.data = (const uint8_t *)"0123456789", .len = 10,
					.ctype = "text/plain", .mtime = T0};
static const struct http_file site_z = {.data = (const uint8_t *)"zzzz", .len = 4,
					.ctype = "text/plain", .mtime = T0, .gz = &site_gz,
					.br = &site_br};
static const struct http_file site_idx = {.data = (const uint8_t *)"<p>d</p>", .len = 8,
					  .ctype = "text/html"};
static const struct http_file site_dir = {.is_dir = true};
static struct http_file site_big = {.data = big, .len = sizeof(big), .ctype = "b", .mtime = T0};

static const struct http_file *site(void *ctx, const char *path, size_t len)
{
	(void)ctx;
	static const struct {
		const char *p;
		const struct http_file *f;
	} t[] = {{"/a.txt", &site_a},  {"/z.txt", &site_z},       {"/d", &site_dir},
		 {"/d/index.html", &site_idx}, {"/e", &site_dir}, {"/big", &site_big},
		 {"/e/index.html/index.html", &site_a}};
	assert_int_equal(strlen(path), len);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(path, t[i].p))
			return t[i].f;
	return NULL;
}

/* ---- the two engines ---- */

#define DATE "Sun, 06 Nov 1994 08:49:37 GMT"
static struct loop_fake fs, fa; /* server.c's loop, the app engine's */
static struct http_server srv;
static struct http_app app;
static struct http_files files;
static void *smem, *amem;
static const struct http_app_route routes[] = {
	{HTTP_APP_ANY, "/", true, http_files_handle, &files},
};
static const struct http_app_def def = {.routes = routes, .nroutes = 1, .name = "files"};

static void setup_both(const char *cache_control)
{
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)('A' + i % 26);
	loop_fake_init(&fs, 1000 * SK_NS_PER_S);
	struct http_server_config sc;
	http_server_config_default(&sc);
	sc.max_conns = 8;
	sc.lookup = site;
	sc.cache_control = cache_control;
	size_t sz = http_server_mem_size(&sc);
	free(smem);
	smem = calloc(1, sz);
	assert_int_equal(http_server_init(&srv, smem, sz, &sc, &fs.base), 0);
	http_server_set_date(&srv, DATE);
	assert_int_equal(http_server_start(&srv), 0);

	loop_fake_init(&fa, 1000 * SK_NS_PER_S);
	files = (struct http_files){.lookup = site, .cache_control = cache_control};
	struct http_app_config ac;
	http_app_config_default(&ac);
	ac.max_conns = 8;
	sz = http_app_mem_size(&ac);
	free(amem);
	amem = calloc(1, sz);
	assert_int_equal(http_app_init(&app, amem, sz, &ac, &def, &fa.base), 0);
	http_app_set_date(&app, DATE);
	assert_int_equal(http_app_start(&app), 0);
}

static void check(void)
{
	assert_int_equal(http_server_check(&srv), 0);
	assert_int_equal(http_app_check(&app), 0);
}

static char got_s[LOOP_FAKE_BUF + 1], got_a[LOOP_FAKE_BUF + 1];
static size_t len_s, len_a;
static bool open_s, open_a;

/* The same bytes to both on a fresh connection; what each answered. */
static void ask_raw(const char *req, size_t n)
{
	static int next = 2;
	if (next >= LOOP_FAKE_NSOCK)
		next = 2;
	int s = next++;
	loop_fake_connect(&fs, s);
	loop_fake_connect(&fa, s);
	loop_fake_send(&fs, s, req, n);
	loop_fake_send(&fa, s, req, n);
	check();
	len_s = fs.s[s].out_len;
	len_a = fa.s[s].out_len;
	memcpy(got_s, fs.s[s].out, len_s + 1);
	memcpy(got_a, fa.s[s].out, len_a + 1);
	open_s = fs.s[s].open;
	open_a = fa.s[s].open;
	if (open_s)
		loop_fake_eof(&fs, s);
	if (open_a)
		loop_fake_eof(&fa, s);
	check();
}

static void same(const char *req)
{
	ask_raw(req, strlen(req));
	if (len_s != len_a || memcmp(got_s, got_a, len_s) || open_s != open_a)
		fail_msg("for:\n%s\nserver.c (%s):\n%s\nfiles handler (%s):\n%s", req,
			 open_s ? "open" : "closed", got_s, open_a ? "open" : "closed", got_a);
	assert_true(len_s > 0);
}

#define GET(path, fields) "GET " path " HTTP/1.1\r\nHost: a\r\n" fields "\r\n"
#define HEAD(path, fields) "HEAD " path " HTTP/1.1\r\nHost: a\r\n" fields "\r\n"

/* Every case server_test.c covers for files, answered the same. */
static const char *const corpus[] = {
	GET("/a.txt", ""),
	HEAD("/a.txt", ""),
	GET("/d/", ""),
	GET("/z.txt", "Accept-Encoding: br\r\n"),
	GET("/nope", ""),
	/* conditionals */
	GET("/a.txt", "If-None-Match: \"2ebc98a1-a\"\r\n"),
	GET("/a.txt", "If-None-Match: \"x\", W/\"2ebc98a1-a\"\r\n"),
	GET("/a.txt", "If-None-Match: *\r\n"),
	HEAD("/a.txt", "If-None-Match: *\r\n"),
	GET("/a.txt", "If-None-Match: \"2ebc98a1-b\"\r\n"),
	GET("/a.txt", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"),
	GET("/a.txt", "If-Modified-Since: Sunday, 06-Nov-94 08:49:38 GMT\r\n"),
	GET("/a.txt", "If-Modified-Since: Sun Nov  6 08:49:36 1994\r\n"),
	GET("/a.txt", "If-Modified-Since: yesterday\r\n"),
	GET("/d/", "If-Modified-Since: Sun, 06 Nov 2094 08:49:37 GMT\r\n"),
	GET("/a.txt", "If-None-Match: \"x\"\r\nIf-Modified-Since: Sun, 06 Nov 2094 08:49:37 GMT\r\n"),
	GET("/a.txt", "If-None-Match: \"2ebc98a1-a\"\r\nIf-Modified-Since: Sun, 06 Nov 1970 08:49:37 GMT\r\n"),
	GET("/a.txt", "If-Match: \"2ebc98a1-a\"\r\n"),
	GET("/a.txt", "If-Match: *\r\n"),
	GET("/a.txt", "If-Match: W/\"2ebc98a1-a\"\r\n"),
	GET("/a.txt", "If-Match: \"nope\"\r\n"),
	GET("/d/", "If-Match: \"x\"\r\n"),
	GET("/a.txt", "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n"),
	GET("/a.txt", "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"),
	GET("/a.txt", "If-Match: *\r\nIf-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n"),
	GET("/d/", "If-Unmodified-Since: Sun, 06 Nov 1970 08:49:36 GMT\r\n"),
	GET("/a.txt", "If-Match: \"x\"\r\nIf-None-Match: *\r\n"),
	GET("/a.txt", "if-none-match: \"x\"\r\nIF-NONE-MATCH: *\r\n"), /* the first line counts */
	/* ranges */
	GET("/a.txt", "Range: bytes=2-4\r\n"),
	GET("/a.txt", "Range: bytes=-3\r\n"),
	GET("/a.txt", "Range: bytes=7-\r\n"),
	GET("/big", "Range: bytes=1000-2999\r\n"),
	GET("/a.txt", "Range: bytes=10-\r\n"),
	GET("/a.txt", "Range: items=1-2\r\n"),
	GET("/a.txt", "Range: bytes=0-9,0-9\r\n"),
	HEAD("/a.txt", "Range: bytes=0-1\r\n"),
	GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: \"2ebc98a1-a\"\r\n"),
	GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: \"old\"\r\n"),
	GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: W/\"2ebc98a1-a\"\r\n"),
	GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: Sun, 06 Nov 1994 08:49:37 GMT\r\n"),
	GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: Sun, 06 Nov 1994 08:49:38 GMT\r\n"),
	GET("/a.txt", "Range: bytes=0-1, -2\r\n"),
	GET("/big", "Range: bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7\r\n"),
	GET("/big", "Range: bytes=0-1499,1500-2999\r\n"),
	/* directories */
	GET("/d", ""),
	GET("/d?x=%201", ""),
	GET("/%64", ""),
	GET("http://a/d?q", ""),
	GET("/e/", ""),
	GET("/", ""),
	GET("/a.txt/", ""),
	GET("/nope/", ""),
	GET("/e/index.html/", ""),
	/* encodings */
	GET("/z.txt", "Accept-Encoding: gzip\r\n"),
	GET("/z.txt", "Accept-Encoding: gzip, br\r\n"),
	GET("/z.txt", "Accept-Encoding: gzip;q=0, br;q=0\r\n"),
	GET("/z.txt", ""),
	GET("/z.txt", "Accept-Encoding: gzip\r\nIf-None-Match: \"2ebc98a2-2\"\r\n"),
	GET("/z.txt", "If-None-Match: \"2ebc98a2-2\"\r\n"),
	GET("/z.txt", "Accept-Encoding: gzip\r\nRange: bytes=1-\r\n"),
	HEAD("/z.txt", "Accept-Encoding: gzip\r\n"),
	/* whole bodies, versions, Connection */
	GET("/big", ""),
	HEAD("/big", ""),
	GET("/a.txt", "Connection: close\r\n"),
	"GET /a.txt HTTP/1.0\r\n\r\n",
	"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"HEAD /d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	/* pipelined pairs */
	GET("/a.txt", "") GET("/z.txt", "Accept-Encoding: gzip\r\n"),
	GET("/d", "") GET("/nope", ""),
	GET("/a.txt", "Range: bytes=0-1, -2\r\n") HEAD("/big", ""),
	GET("/a.txt", "If-None-Match: *\r\n") GET("/a.txt", "Connection: close\r\n"),
	/* the engines' own answers around the handler */
	"GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n",
	GET("/../a.txt", ""),
};

static void test_corpus(void **st)
{
	(void)st;
	const char *cc[] = {NULL, "public, max-age=31536000, immutable"};
	for (size_t k = 0; k < SK_ARRAY_LEN(cc); k++) {
		setup_both(cc[k]);
		for (size_t i = 0; i < SK_ARRAY_LEN(corpus); i++)
			same(corpus[i]);
	}
	/* Long paths: up to what the app engine decodes, the same 404. */
	static char req[4096];
	char path[1600];
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", path);
	same(req);
	snprintf(req, sizeof(req), "GET /d?%s HTTP/1.1\r\nHost: a\r\n\r\n", path + 1100);
	same(req); /* a 301 with a long query */
}

/* Drop the first line `line` from got_s: what the handler's answer is
 * once server.c's close is taken out. */
static void without(const char *line)
{
	char *p = strstr(got_s, line);
	assert_non_null(p);
	size_t n = strlen(line);
	memmove(p, p + n, len_s - (size_t)(p - got_s) - n + 1);
	len_s -= n;
}

static void test_intended_differences(void **st)
{
	(void)st;
	setup_both(NULL);
	/* 405: the same answer but for server.c's close. */
	const char *m[] = {"POST /a.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
			   "DELETE /nope HTTP/1.1\r\nHost: a\r\n\r\n"};
	for (size_t i = 0; i < SK_ARRAY_LEN(m); i++) {
		ask_raw(m[i], strlen(m[i]));
		assert_non_null(strstr(got_s, "HTTP/1.1 405 Method Not Allowed\r\n"));
		assert_true(open_a); /* server.c lingers, then closes: without() */
		without("Connection: close\r\n");
		assert_string_equal(got_s, got_a);
	}
	/* 414: a Location longer than HTTP_LOCATION_MAX. */
	static char req[4096];
	char q[700];
	memset(q, 'q', sizeof(q) - 1);
	q[sizeof(q) - 1] = 0;
	snprintf(req, sizeof(req), "GET /d?%s HTTP/1.1\r\nHost: a\r\n\r\n", q);
	ask_raw(req, strlen(req));
	assert_non_null(strstr(got_a, "HTTP/1.1 414 URI Too Long\r\n"));
	assert_true(open_a);
	without("Connection: close\r\n");
	assert_string_equal(got_s, got_a);
	/* A 301 to a request with a short body. */
	const char *b = GET("/d", "Content-Length: 3\r\n") "abc";
	ask_raw(b, strlen(b));
	assert_true(open_a);
	without("Connection: close\r\n");
	assert_string_equal(got_s, got_a);
	/* A path past the app engine's decoding room. */
	char path[2100];
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a\r\n\r\n", path);
	ask_raw(req, strlen(req));
	assert_non_null(strstr(got_s, " 404 "));
	assert_non_null(strstr(got_a, " 414 "));
}

/* Multipart through the engine's copying stream, on a socket that takes
 * a few bytes per write: the same bytes in the end. */
static void test_multipart_slow_socket(void **st)
{
	(void)st;
	static const size_t rooms[] = {1, 37, 700};
	for (size_t i = 0; i < SK_ARRAY_LEN(rooms); i++) {
		setup_both(NULL);
		const char *req = GET("/big", "Range: bytes=0-1199,1200-2999,5-5\r\n")
			GET("/a.txt", "Range: bytes=0-1, -2\r\n");
		loop_fake_connect(&fs, 3);
		loop_fake_connect(&fa, 3);
		fa.s[3].write_room = rooms[i];
		loop_fake_send(&fs, 3, req, strlen(req));
		loop_fake_send(&fa, 3, req, strlen(req));
		for (int k = 0; k < 20000 && fa.s[3].out_len < fs.s[3].out_len; k++) {
			fa.s[3].write_room = rooms[i];
			loop_fake_event(&fa, 3, LOOP_EV_WRITE);
		}
		check();
		assert_int_equal(fa.s[3].out_len, fs.s[3].out_len);
		assert_memory_equal(fa.s[3].out, fs.s[3].out, fs.s[3].out_len);
		assert_true(fa.s[3].open);
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

/* A whole file, a range and a small file, pipelined, on the app engine
 * with the loop offering `how`; every byte out. */
static size_t sendfile_run(int how, size_t room, char *out)
{
	setup_both(NULL);
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
	const char *req = GET("/big", "") GET("/big", "Range: bytes=100-2099\r\n") GET("/a.txt", "")
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
	static char want[LOOP_FAKE_BUF], got[LOOP_FAKE_BUF];
	static const size_t rooms[] = {SIZE_MAX, 700, 37, 1};
	for (size_t i = 0; i < SK_ARRAY_LEN(rooms); i++) {
		size_t wn = sendfile_run(BY_COPY, rooms[i], want);
		assert_true(wn > 3000 + 2000);
		for (int how = BY_REF; how <= BY_SENDFILE; how++) {
			ref_calls = sf_calls = 0;
			size_t gn = sendfile_run(how, rooms[i], got);
			assert_int_equal(gn, wn);
			assert_memory_equal(got, want, wn);
			/* The two bodies of /big went by the op (a.txt too: any
			 * file body does; HEAD sends none). */
			assert_true((how == BY_REF ? ref_calls : sf_calls) >= 2);
			assert_int_equal(how == BY_REF ? sf_calls : ref_calls, 0);
		}
	}
	/* And what server.c sends for the same pipeline. */
	size_t gn = sendfile_run(BY_COPY, SIZE_MAX, got);
	const char *req = GET("/big", "") GET("/big", "Range: bytes=100-2099\r\n") GET("/a.txt", "")
		HEAD("/big", "");
	loop_fake_connect(&fs, 5);
	loop_fake_send(&fs, 5, req, strlen(req));
	assert_int_equal(fs.s[5].out_len, gn);
	assert_memory_equal(fs.s[5].out, got, fs.s[5].out_len);
	/* The file cut short under sendfile: the connection closes. */
	setup_both(NULL);
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
	setup_both(NULL);
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
	ask_raw(GET("/fx/a.txt", "") GET("/fx/a.txt", ""), strlen(GET("/fx/a.txt", "") GET("/fx/a.txt", "")));
	/* Both answers: X-Site, no X-Gone, no ETag, no Server; the rest as
	 * server.c's for /a.txt. */
	const char *p = got_a;
	for (int i = 0; i < 2; i++) {
		p = strstr(p, "HTTP/1.1 200 OK\r\nDate: " DATE "\r\nX-Site: a\r\nContent-Type: text/plain\r\n"
			      "Content-Length: 10\r\nAccept-Ranges: bytes\r\n"
			      "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n0123456789");
		assert_non_null(p);
		p++;
	}
	assert_null(strstr(got_a, "X-Gone"));
	assert_null(strstr(got_a, "Server"));
	assert_true(open_a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_intended_differences),
		cmocka_unit_test(test_multipart_slow_socket),
		cmocka_unit_test(test_send_file_paths),
		cmocka_unit_test(test_header_drop),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	free(smem);
	free(amem);
	return r;
}
