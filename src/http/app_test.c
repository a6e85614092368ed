/* app_test.c — the application engine (http/app.h) on the fake loop
 * (loop_host/loop_fake.h), with examples/kv.c as the application where a real
 * one is wanted (its pool made small, so 507 is reachable), and small
 * handlers of the test's own for the rest of the contract: bodies cut at
 * every byte, chunked uploads, back-pressure both ways, answers from a
 * timer, 100-continue, the limits and their statuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/app.h"
#include "h2/frame.h"
#include "loop_host/loop_fake.h"

/* kv with a 64 KiB pool: 16 blocks of 4 KiB. */
#define KV_POOL (64u * 1024u)
#include "../../examples/kv.c"
#include "app_fake_test.h"

static int count(const char *hay, size_t len, const char *needle)
{
	int n = 0;
	size_t nl = strlen(needle);
	for (size_t i = 0; i + nl <= len; i++)
		if (!memcmp(hay + i, needle, nl))
			n++;
	return n;
}

/* The body of the last answer in s's output (after its blank line). */
static const char *last_body(int s, size_t *len)
{
	const char *out = fk.s[s].out, *b = NULL;
	for (const char *p = out; (p = strstr(p, "\r\n\r\n")); p += 4)
		b = p + 4;
	*len = b ? (size_t)(out + fk.s[s].out_len - b) : 0;
	return b;
}

/* ---- the test's own application ---- */

static int async_pending;
static struct http_app_req *async_req;
static int done_calls, done_ok;
static struct loop_timer async_timer;

static void on_done(struct http_app_req *r, void *ctx, bool ok)
{
	(void)r, (void)ctx;
	done_calls++;
	done_ok += ok;
	if (r == async_req)
		async_req = NULL;
}

static int h_hello(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	assert_int_equal(http_app_header(r, "X-Test", "yes"), 0);
	assert_int_equal(http_app_header(r, "Content-Length", "5"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "Bad Name", "x"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "X-Bad", "a\r\nb"), -SK_EINVAL);
	/* A CR or an LF anywhere in a value is refused: every offset, either
	 * side of the word-at-a-time check's 8-byte steps. */
	char v[41];
	for (unsigned at = 0; at < 40; at++) {
		for (char bad = '\n'; bad <= '\r'; bad += '\r' - '\n') {
			sk_memset(v, 'a', 40);
			v[40] = 0;
			v[at] = bad;
			assert_int_equal(http_app_header(r, "X-Bad", v), -SK_EINVAL);
		}
	}
	assert_int_equal(http_app_header(r, "", "x"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "X-Bad:", "x"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "X-Bad\x80", "x"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "DATE", "x"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "transfer-Encoding", "x"), -SK_EINVAL);
	assert_int_equal(http_app_header(r, "Connection", "x"), -SK_EINVAL);
	/* The Host line, kept by the parser, is what a search finds. */
	size_t hl = 0, gl = 0;
	const char *h = http_app_host(r, &hl), *g = http_app_header_get(r, "host", &gl);
	assert_ptr_equal(h, g);
	assert_int_equal(hl, gl);
	return http_app_send(r, 200, "hi\n", 3);
}

/* /closing: answers and ends the connection (http_app_close_after), too
 * late once the answer is queued. */
static int h_closing(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	assert_int_equal(http_app_close_after(r), 0);
	int rc = http_app_send(r, 200, "bye\n", 4);
	assert_int_equal(http_app_close_after(r), -SK_EINVAL);
	return rc;
}

/* /skip: reads and drops the body, then answers (http_app_body_skip). */
static int skip_answer(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	return http_app_send(r, 200, "skipped\n", 8);
}

static int h_skip(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	return http_app_body_skip(r, skip_answer, NULL);
}

/* /req/...: echoes what the accessors see, as text. */
static char reqbuf[4096];
static int h_req(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	size_t tl, ql, rl, hl;
	const char *t = http_app_target(r, &tl), *q = http_app_query(r, &ql);
	const char *rest = http_app_rest(r, &rl);
	const char *ua = http_app_header_get(r, "USER-agent", &hl);
	uint16_t port;
	const struct sk_addr *a = http_app_peer(r, &port);
	int n = snprintf(reqbuf, sizeof(reqbuf), "m=%u t=%.*s p=%s q=%.*s rest=%s ua=%.*s n=%u v4=%d port=%u %s",
			 http_app_method(r), (int)tl, t, http_app_path(r, NULL), (int)ql, q ? q : "",
			 rest, (int)(ua ? hl : 4), ua ? ua : "none", http_app_nheaders(r),
			 sk_addr_is_v4(a) && sk_addr_ip4(a) == SK_IP4(198, 18, 0, 1), port,
			 http_app_scheme(r));
	return http_app_send(r, 200, reqbuf, (size_t)n);
}

static void async_fire(struct loop_timer *t, sk_time_ns now)
{
	(void)t, (void)now;
	if (async_req)
		http_app_send(async_req, 200, "later\n", 6);
}

static int h_async(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	async_req = r;
	async_pending++;
	http_app_on_done(r, on_done, NULL);
	async_timer.fn = async_fire;
	loop_timer_set(&fk.base, &async_timer, fk.now + SK_NS_PER_S);
	return 0;
}

static int h_fail(struct http_app_req *r, void *ctx)
{
	(void)r, (void)ctx;
	return -SK_EINVAL;
}

/* The echo of examples/echo.c, here so the test can watch it. */
static long echo_piece(struct http_app_req *r, void *ctx, const uint8_t *d, size_t n, bool end)
{
	(void)ctx;
	if (end) {
		http_app_end(r);
		return 0;
	}
	return http_app_write(r, d, n);
}

static void echo_room(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_body_resume(r);
}

static int h_echo(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	assert_int_equal(http_app_body_stream(r, echo_piece, NULL), 0);
	return http_app_stream(r, 200, http_app_body_length(r), echo_room, NULL);
}

static uint8_t collected[8192];
static size_t collected_len;
static void collect_done(struct http_app_req *r, void *ctx, size_t len)
{
	(void)ctx;
	collected_len = len;
	char msg[32];
	int n = snprintf(msg, sizeof(msg), "got %zu\n", len);
	static char keep[32];
	memcpy(keep, msg, (size_t)n);
	http_app_send(r, 200, keep, (size_t)n);
}

static int h_collect(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	return http_app_body_collect(r, collected, sizeof(collected), collect_done, NULL);
}

/* Many header lines (more than the default hdr_size takes). */
static int h_many(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	char v[100];
	memset(v, 'v', sizeof(v) - 1);
	v[sizeof(v) - 1] = 0;
	int rc = 0;
	for (int i = 0; i < 20 && rc == 0; i++)
		rc = http_app_header(r, "X-Many", v);
	if (rc < 0)
		return http_app_send(r, 200, "short\n", 6);
	return http_app_send(r, 200, "all\n", 4);
}

/* The same lines, then a chunked stream written and ended as if all
 * went well (an application that never checks http_app_header). */
static int h_many_stream(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	char v[100];
	memset(v, 'v', sizeof(v) - 1);
	v[sizeof(v) - 1] = 0;
	for (int i = 0; i < 20; i++)
		http_app_header(r, "X-Many", v);
	assert_int_equal(http_app_stream(r, 200, HTTP_APP_CHUNKED, NULL, NULL), 0);
	assert_int_equal(http_app_write(r, "body", 4), 4);
	return http_app_end(r);
}

/* A chunked stream cut after its first piece (an origin that died). */
static int h_cut(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	assert_int_equal(http_app_stream(r, 200, HTTP_APP_CHUNKED, NULL, NULL), 0);
	assert_int_equal(http_app_write(r, "part", 4), 4);
	http_app_abort(r);
	return 0;
}

/* A known length, ended at once: whole for HEAD, cut for GET. */
static int h_len(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	assert_int_equal(http_app_stream(r, 200, 1234, NULL, NULL), 0);
	return http_app_end(r);
}

/* A chunked stream produced from a timer: "tick" once a second, three
 * times, then the end (an answer that outlives a drain's start). */
static struct http_app_req *tick_req;
static int ticks;
static struct loop_timer tick_timer;
static void tick_fire(struct loop_timer *t, sk_time_ns now)
{
	(void)t;
	if (!tick_req)
		return;
	assert_int_equal(http_app_write(tick_req, "tick", 4), 4);
	if (++ticks == 3) {
		struct http_app_req *r = tick_req;
		tick_req = NULL;
		http_app_end(r);
		return;
	}
	loop_timer_set(&fk.base, &tick_timer, now + SK_NS_PER_S);
}

static void tick_done(struct http_app_req *r, void *ctx, bool ok)
{
	(void)ctx;
	if (r == tick_req)
		tick_req = NULL;
	on_done(r, NULL, ok);
}

static int h_tick(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, tick_done, NULL);
	tick_req = r;
	ticks = 0;
	tick_timer.fn = tick_fire;
	loop_timer_set(&fk.base, &tick_timer, fk.now + SK_NS_PER_S);
	return http_app_stream(r, 200, HTTP_APP_CHUNKED, NULL, NULL);
}

static const struct http_app_route test_routes[] = {
	{HTTP_GET, "/tick", false, h_tick, NULL},
	{HTTP_GET, "/many", false, h_many, NULL},
	{HTTP_GET, "/many-stream", false, h_many_stream, NULL},
	{HTTP_GET, "/cut", false, h_cut, NULL},
	{HTTP_GET, "/len", false, h_len, NULL},
	{HTTP_GET, "/hello", false, h_hello, NULL},
	{HTTP_GET, "/closing", false, h_closing, NULL},
	{HTTP_APP_ANY, "/skip", false, h_skip, NULL},
	{HTTP_APP_ANY, "/req/", true, h_req, NULL},
	{HTTP_GET, "/async", false, h_async, NULL},
	{HTTP_GET, "/fail", false, h_fail, NULL},
	{HTTP_POST, "/echo", false, h_echo, NULL},
	{HTTP_POST, "/collect", false, h_collect, NULL},
};
static const struct http_app_def test_app = {.routes = test_routes,
					     .nroutes = SK_ARRAY_LEN(test_routes),
					     .name = "test"};

static void setup_test(void)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 4096;
	setup_with(&test_app, &cfg);
	done_calls = done_ok = 0;
	async_req = NULL;
}

static void setup_kv(void)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 12;
	setup_with(&skiff_app, &cfg);
}

/* ---- tests ---- */

static void test_hello_keepalive_pipelined(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	const char *want = "HTTP/1.1 200 OK\r\nServer: skiff\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
			   "X-Test: yes\r\nContent-Length: 3\r\n\r\nhi\n";
	assert_string_equal(fk.s[s].out, want);
	assert_int_equal(done_calls, 1);
	assert_int_equal(done_ok, 1);
	/* three pipelined, one of them HEAD (GET's route, no body) */
	clear_out(s);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nHEAD /hello HTTP/1.1\r\nHost: a\r\n\r\n"
		    "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 3);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "hi\n"), 2);
	assert_int_equal(done_calls, 4);
	assert_true(fk.s[s].open);
	/* 404 and 405 keep the connection */
	clear_out(s);
	send_str(s, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\nPUT /hello HTTP/1.1\r\nHost: a\r\n"
		    "Content-Length: 0\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 404 Not Found"));
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 405 Method Not Allowed"));
	assert_non_null(strstr(fk.s[s].out, "Allow: GET\r\n"));
	assert_true(fk.s[s].open);
	/* HTTP/1.0 without keep-alive: closed after the answer */
	clear_out(s);
	send_str(s, "GET /hello HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "Connection: close\r\n"));
	assert_false(fk.s[s].open);
	assert_int_equal(app.nconns, 0);
}

/* Buffer sets follow the requests, not the connections: an idle
 * keep-alive connection holds none, one with a partial head (or its
 * pipelined next request) holds one, and the set given back is the next
 * one taken, so ten connections answered one after another touch one
 * (of the twelve a pool of max_conns 12 has). */
static void test_idle_holds_no_buffers(void **st)
{
	(void)st;
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 12;
	setup_with(&test_app, &cfg);
	uint32_t fresh = app.bufs_fresh;
	for (int s = 2; s <= 11; s++) {
		conn(s);
		assert_int_equal(app.bufs_held, 0); /* accepted, nothing read */
		send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
		assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 200 OK"));
		assert_true(fk.s[s].open);
		assert_int_equal(app.bufs_held, 0);
	}
	assert_int_equal(app.nconns, 10);
	assert_int_equal(app.bufs_fresh, fresh - 1);
	/* A head cut in two holds a set across the wait, then gives it back. */
	send_str(3, "GET /hello HTTP/1.1\r\nHo");
	send_str(4, "GET /hel");
	assert_int_equal(app.bufs_held, 2);
	assert_int_equal(app.bufs_fresh, fresh - 2);
	send_str(3, "st: a\r\n\r\n");
	assert_int_equal(app.bufs_held, 1);
	send_str(4, "lo HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(app.bufs_held, 0);
	assert_int_equal(count(fk.s[4].out, fk.s[4].out_len, "HTTP/1.1 200 OK"), 2);
	/* The idle timeout closes a connection that holds none. */
	loop_fake_advance(&fk, app.cfg.keepalive_timeout + SK_NS_PER_S);
	check();
	assert_int_equal(app.nconns, 0);
	assert_int_equal(app.bufs_held, 0);
}

/* http_app_body_skip: the answer comes after the whole body; a chunked
 * body keeps the connection; a broken one gets 400 (or 431), never the
 * handler's answer; no body: the answer at once. */
static void test_body_skip(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	/* a chunked body in two pieces: no answer before its end */
	send_str(s, "POST /skip HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "5\r\nhello\r\n");
	assert_int_equal(fk.s[s].out_len, 0);
	send_str(s, "0\r\n\r\nGET /skip HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 2);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "skipped\n"), 2);
	assert_null(strstr(fk.s[s].out, "Connection: close"));
	assert_true(fk.s[s].open);
	assert_int_equal(done_calls, 2);
	assert_int_equal(done_ok, 2);
	assert_int_equal(app.st.bodies_discarded, 1);
	/* a Content-Length body, 100-continue: Continue, then the answer */
	clear_out(s);
	send_str(s, "PUT /skip HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n"
		    "Expect: 100-continue\r\n\r\n");
	assert_string_equal(fk.s[s].out, "HTTP/1.1 100 Continue\r\n\r\n");
	send_str(s, "abcd");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 200 OK"));
	assert_true(fk.s[s].open);
	/* a bad trailer line: the engine's 400, not the handler's 200 */
	clear_out(s);
	send_str(s, "POST /skip HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "0\r\nX Y: z\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 400 Bad Request"));
	assert_null(strstr(fk.s[s].out, "skipped"));
	assert_int_equal(app.st.resp_400, 1);
	loop_fake_eof(&fk, s);
	assert_false(fk.s[s].open);
	assert_int_equal(app.nconns, 0);
	assert_int_equal(http_app_check(&app), 0);
}

/* http_app_close_after: "Connection: close", the connection ends, a
 * pipelined request behind is never answered; the unread body of a
 * request is never read as a next one. */
static void test_close_after(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /closing HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 "), 1);
	loop_fake_eof(&fk, s); /* unread input: a lingering close, until the client's FIN */
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 "), 1);
	assert_false(fk.s[s].open);
	/* a short body the handler did not read: not taken as a request */
	s = conn(6);
	send_str(s, "GET /closing HTTP/1.1\r\nHost: a\r\nContent-Length: 33\r\n\r\n"
		    "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 "), 1);
	assert_null(strstr(fk.s[s].out, "hi\n"));
	loop_fake_eof(&fk, s);
	assert_false(fk.s[s].open);
	assert_int_equal(app.nconns, 0);
}

/* The edge contract (loop.h): after a short read the socket is drained, so
 * keep-alive requests cost one read each, not a second that says EAGAIN;
 * a READ event makes reading worth it again. */
static void test_reads_per_request(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	int r0 = fk.s[s].reads, e0 = fk.s[s].reads_empty; /* the fake keeps them across tests */
	for (int i = 0; i < 10; i++) {
		send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
		assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), i + 1);
	}
	assert_int_equal(fk.s[s].reads - r0, 10);
	assert_int_equal(fk.s[s].reads_empty - e0, 0);
	/* bytes pushed without an event wait for one */
	loop_fake_push(&fk, s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n", 33);
	loop_fake_event(&fk, s, LOOP_EV_READ);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 11);
	assert_int_equal(fk.s[s].reads - r0, 11);
	assert_true(fk.s[s].open);
}

static void test_request_accessors(void **st)
{
	(void)st;
	setup_test();
	int s = conn(6);
	send_str(s, "DELETE /req/a%20b/c?x=1&y HTTP/1.1\r\nHost: a\r\nuser-agent: t/1\r\n\r\n");
	size_t n;
	const char *b = last_body(s, &n);
	assert_non_null(b);
	assert_string_equal(b, "m=5 t=/req/a%20b/c?x=1&y p=/req/a b/c q=x=1&y rest=a b/c ua=t/1 "
			       "n=2 v4=1 port=40006 http");
	/* dot segments never reach a handler */
	clear_out(s);
	send_str(s, "GET /req/%2e%2e/x HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 404"));
	/* the scheme is the engine's config (an embedder's TLS engine) */
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 4096;
	cfg.scheme = "https";
	setup_with(&test_app, &cfg);
	s = conn(6);
	send_str(s, "GET /req/x HTTP/1.1\r\nHost: a\r\n\r\n");
	b = last_body(s, &n);
	assert_non_null(b);
	assert_non_null(strstr(b, "port=40006 https"));
}

static void test_errors(void **st)
{
	(void)st;
	setup_test();
	/* a head that does not parse: 400, closed (after the linger) */
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 400 Bad Request"));
	assert_non_null(strstr(fk.s[s].out, "Connection: close"));
	assert_true(fk.s[s].shut);
	loop_fake_eof(&fk, s);
	check();
	assert_false(fk.s[s].open);
	/* a handler failing before it answers: 500 */
	s = conn(6);
	send_str(s, "GET /fail HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 500 Internal Server Error"));
	/* a body over max_body: 413 from the head alone */
	s = conn(7);
	send_str(s, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 413"));
	/* a chunked body that breaks the coding: 400 */
	s = conn(8);
	done_calls = done_ok = 0;
	send_str(s, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "zz\r\n");
	assert_int_equal(done_calls, 1);
	assert_int_equal(done_ok, 0);
	assert_true(app.st.aborted >= 1);
}

/* A PUT of `len` bytes to kv cut in two at every byte, then the GET. */
static void test_kv_put_get_every_cut(void **st)
{
	(void)st;
	static uint8_t body[3000];
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 7 + 3);
	static char req[4096];
	int hl = snprintf(req, sizeof(req), "PUT /kv/cut HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n",
			  sizeof(body));
	memcpy(req + hl, body, sizeof(body));
	size_t total = (size_t)hl + sizeof(body);
	/* Every cut in the head, and a stride through the body. */
	for (size_t cut = 1; cut < total; cut += cut < (size_t)hl + 8 ? 1 : 97) {
		setup_kv();
		int s = conn(5);
		send_bytes(s, req, cut);
		send_bytes(s, req + cut, total - cut);
		assert_true(strstr(fk.s[s].out, "HTTP/1.1 201 Created") ||
			    strstr(fk.s[s].out, "HTTP/1.1 204 No Content"));
		clear_out(s);
		send_str(s, "GET /kv/cut HTTP/1.1\r\nHost: a\r\n\r\n");
		size_t n;
		const char *b = last_body(s, &n);
		assert_int_equal(n, sizeof(body));
		assert_memory_equal(b, body, sizeof(body));
		assert_non_null(strstr(fk.s[s].out, "ETag: \""));
	}
}

/* A chunked PUT cut at every byte: chunk lines, extensions, a trailer. */
static void test_kv_chunked_every_cut(void **st)
{
	(void)st;
	const char *req = "PUT /kv/ch HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
	size_t total = strlen(req);
	for (size_t cut = 1; cut < total; cut++) {
		setup_kv();
		int s = conn(5);
		send_bytes(s, req, cut);
		send_bytes(s, req + cut, total - cut);
		assert_true(strstr(fk.s[s].out, "HTTP/1.1 201") || strstr(fk.s[s].out, "HTTP/1.1 204"));
		clear_out(s);
		send_str(s, "GET /kv/ch HTTP/1.1\r\nHost: a\r\n\r\n");
		size_t n;
		const char *b = last_body(s, &n);
		assert_int_equal(n, 16);
		assert_memory_equal(b, "hello 0123456789", 16);
	}
	/* An empty value: a 0-byte stream still ends, and the connection
	 * goes on. */
	{
		int e = conn(7);
		send_str(e, "PUT /kv/e HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
			    "GET /kv/e HTTP/1.1\r\nHost: a\r\n\r\nGET /kv/e HTTP/1.1\r\nHost: a\r\n\r\n");
		assert_int_equal(count(fk.s[e].out, fk.s[e].out_len, "Content-Length: 0\r\n"), 3);
		assert_int_equal(count(fk.s[e].out, fk.s[e].out_len, "HTTP/1.1 200 OK"), 2);
	}
	/* The listing has it; DELETE removes it; If-None-Match gets 304. */
	int s = conn(6);
	send_str(s, "GET /kv/ch HTTP/1.1\r\nHost: a\r\n\r\n");
	const char *e = strstr(fk.s[s].out, "ETag: ");
	assert_non_null(e);
	char etag[32] = {0};
	memcpy(etag, e + 6, 18);
	clear_out(s);
	char inm[128];
	snprintf(inm, sizeof(inm), "GET /kv/ch HTTP/1.1\r\nHost: a\r\nIf-None-Match: %s\r\n\r\n", etag);
	send_str(s, inm);
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 304 Not Modified"));
	clear_out(s);
	send_str(s, "GET /kv/ HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "Transfer-Encoding: chunked"));
	assert_non_null(strstr(fk.s[s].out, "ch\n"));
	clear_out(s);
	send_str(s, "DELETE /kv/ch HTTP/1.1\r\nHost: a\r\n\r\nGET /kv/ch HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 204"));
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 404"));
}

static void test_kv_full_507_and_413(void **st)
{
	(void)st;
	setup_kv();
	int s = conn(5);
	/* Drop whatever earlier tests left. */
	for (int i = 0; i < 64; i++) {
		char d[64];
		snprintf(d, sizeof(d), "DELETE /kv/f%d HTTP/1.1\r\nHost: a\r\n\r\n", i);
		send_str(s, d);
	}
	send_str(s, "DELETE /kv/cut HTTP/1.1\r\nHost: a\r\n\r\n");
	clear_out(s);
	/* 16 blocks: four 16 KiB values fill the pool; the fifth gets 507
	 * at once (its Content-Length says it cannot fit). */
	static char req[20000];
	for (int i = 0; i < 5; i++) {
		int hl = snprintf(req, sizeof(req),
				  "PUT /kv/f%d HTTP/1.1\r\nHost: a\r\nContent-Length: 16384\r\n\r\n", i);
		memset(req + hl, 'a' + i, 16384);
		int c = conn(6 + i);
		send_bytes(c, req, (size_t)hl + (i == 4 ? 0 : 16384));
		if (i < 4)
			assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 201"));
		else
			assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 507 Insufficient Storage"));
	}
	/* chunked: 507 once the pool runs dry mid-body */
	int c = conn(11);
	send_str(c, "PUT /kv/g HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n");
	assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 507"));
	/* a value over 1 MiB by Content-Length: 413 before the body */
	c = conn(12);
	send_str(c, "PUT /kv/big HTTP/1.1\r\nHost: a\r\nContent-Length: 1048577\r\n\r\n");
	assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 413"));
	/* DELETE frees the blocks: the PUT fits again */
	send_str(s, "DELETE /kv/f0 HTTP/1.1\r\nHost: a\r\n\r\n");
	c = conn(13);
	int hl = snprintf(req, sizeof(req), "PUT /kv/f4 HTTP/1.1\r\nHost: a\r\nContent-Length: 16384\r\n\r\n");
	memset(req + hl, 'z', 16384);
	send_bytes(c, req, (size_t)hl + 16384);
	assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 201"));
}

/* Echo 40 KB through a 4 KiB output buffer with the socket taking 1000
 * bytes at a time: the body is not read while the answer cannot leave. */
static void test_echo_backpressure(void **st)
{
	(void)st;
	setup_test();
	static char req[45000];
	size_t blen = 40000;
	int hl = snprintf(req, sizeof(req), "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n",
			  blen);
	for (size_t i = 0; i < blen; i++)
		req[hl + i] = (char)('a' + i % 26);
	int s = conn(5);
	fk.s[s].write_room = 1000;
	send_bytes(s, req, (size_t)hl + blen);
	/* stalled: the body is read only as far as rbuf holds it (32 KiB),
	 * since the answer cannot leave */
	assert_true(fk.s[s].in_pos <= 32768);
	assert_true(fk.s[s].in_pos < fk.s[s].in_len);
	for (int i = 0; i < 200 && fk.s[s].in_pos < fk.s[s].in_len; i++) {
		fk.s[s].write_room = 1000;
		loop_fake_event(&fk, s, LOOP_EV_WRITE);
		check();
	}
	fk.s[s].write_room = SIZE_MAX;
	loop_fake_event(&fk, s, LOOP_EV_WRITE);
	check();
	size_t n;
	const char *b = last_body(s, &n);
	assert_int_equal(n, blen);
	assert_memory_equal(b, req + hl, blen);
	assert_int_equal(done_ok, 1);
	/* chunked in, chunked out */
	clear_out(s);
	send_str(s, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
		    "2\r\nde\r\n0\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "Transfer-Encoding: chunked\r\n\r\n"));
	assert_non_null(strstr(fk.s[s].out, "0\r\n\r\n"));
	assert_int_equal(done_ok, 2);
}

static void test_continue(void **st)
{
	(void)st;
	setup_test();
	/* asked for: 100 Continue, then the answer */
	int s = conn(5);
	send_str(s, "POST /collect HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
	assert_string_equal(fk.s[s].out, "HTTP/1.1 100 Continue\r\n\r\n");
	send_str(s, "abcde");
	assert_non_null(strstr(fk.s[s].out, "got 5\n"));
	assert_int_equal(collected_len, 5);
	assert_true(fk.s[s].open);
	/* not asked for (hello reads no body): no 100, closed after */
	s = conn(6);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
	assert_null(strstr(fk.s[s].out, "100 Continue"));
	assert_non_null(strstr(fk.s[s].out, "Connection: close"));
	/* a small unread body without Expect is dropped, the connection kept */
	s = conn(7);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nabcdeGET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "200 OK"), 2);
	assert_true(fk.s[s].open);
	/* collect past its buffer: 413 */
	s = conn(8);
	send_str(s, "POST /collect HTTP/1.1\r\nHost: a\r\nContent-Length: 9000\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 413"));
}

static void test_async_and_abort(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /async HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(fk.s[s].out_len, 0);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S);
	check();
	assert_non_null(strstr(fk.s[s].out, "later\n"));
	assert_int_equal(done_ok, 1);
	/* the peer goes away before the answer: on_done(false), once */
	send_str(s, "GET /async HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(async_req);
	loop_fake_event(&fk, s, LOOP_EV_READ | LOOP_EV_ERROR);
	check();
	assert_null(async_req);
	assert_int_equal(done_calls, 2);
	assert_int_equal(done_ok, 1);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S); /* the timer finds nothing to answer */
	check();
}

static void test_hdr_size_abort_head(void **st)
{
	(void)st;
	setup_test();
	/* Lines beyond the 1 KiB area: never the answer without them (the
	 * application's "short" fallback included), but the engine's 500,
	 * the connection closed, counted and logged once. */
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.error_log = elog_hook;
	setup_with(&test_app, &cfg);
	elog_lines = 0;
	int s = conn(5);
	send_str(s, "GET /many HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 500 "));
	assert_null(strstr(fk.s[s].out, "short\n"));
	assert_null(strstr(fk.s[s].out, "X-Many"));
	assert_non_null(strstr(fk.s[s].out, "Connection: close\r\n"));
	loop_fake_advance(&fk, 3 * SK_NS_PER_S); /* past the linger after an error */
	check();
	assert_false(fk.s[s].open);
	assert_int_equal(stat_of("http.header_overflow"), 1);
	assert_int_equal(elog_lines, 1);
	assert_string_equal(elog_key, "http.header_overflow");
	assert_non_null(strstr(elog_msg, "/many"));
	assert_non_null(strstr(elog_msg, "'X-Many'"));
	assert_non_null(strstr(elog_msg, "1024 bytes"));
	/* A stream after it: its calls return as if they worked, nothing of
	 * it leaves, and on_done says the request failed. */
	done_calls = done_ok = 0;
	s = conn(6);
	send_str(s, "GET /many-stream HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 500 "));
	assert_null(strstr(fk.s[s].out, "body"));
	assert_non_null(strstr(fk.s[s].out, "Connection: close\r\n"));
	assert_int_equal(done_calls, 1);
	assert_int_equal(done_ok, 0);
	assert_int_equal(stat_of("http.header_overflow"), 2);
	assert_int_equal(elog_lines, 2);
	/* a larger header area takes them: the application asks for it */
	struct http_app_def big = test_app;
	big.hdr_size = 3072;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 2048;
	http_app_config_fit(&cfg, &big);
	assert_int_equal(cfg.hdr_size, 3072);
	assert_int_equal(cfg.out_size, 4096); /* the area and 1 KiB for the engine's lines */
	http_app_config_fit(&cfg, NULL);
	assert_int_equal(cfg.hdr_size, 3072);
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 4096;
	cfg.hdr_size = 3072;
	setup_with(&test_app, &cfg);
	done_calls = done_ok = 0;
	s = conn(5);
	send_str(s, "GET /many HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "X-Many: "), 20);
	assert_non_null(strstr(fk.s[s].out, "all\n"));
	cfg.hdr_size = 4000; /* leaves no room for the engine's own lines */
	assert_int_equal(http_app_mem_size(&cfg), 0);
	cfg.hdr_size = 100;
	assert_int_equal(http_app_mem_size(&cfg), 0);
	/* abort: the last chunk never leaves, the connection closes */
	s = conn(6);
	send_str(s, "GET /cut HTTP/1.1\r\nHost: a\r\n\r\n");
	check();
	assert_null(strstr(fk.s[s].out, "0\r\n\r\n"));
	assert_false(fk.s[s].open);
	assert_int_equal(done_calls, 1);
	assert_int_equal(done_ok, 0);
	/* HEAD: a known length ended at once is whole, and the connection stays */
	s = conn(7);
	send_str(s, "HEAD /len HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "Content-Length: 1234\r\n"));
	assert_true(fk.s[s].open);
	assert_int_equal(done_ok, 1);
	/* GET: the same is short, cut */
	send_str(s, "GET /len HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_false(fk.s[s].open);
	assert_int_equal(done_calls, 3);
	assert_int_equal(done_ok, 1);
}

static void test_timeouts(void **st)
{
	(void)st;
	setup_test();
	/* header: 408 */
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\n");
	loop_fake_advance(&fk, 11 * SK_NS_PER_S);
	check();
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 408"));
	/* a slow body: 408 after body_timeout */
	s = conn(6);
	send_str(s, "POST /collect HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc");
	for (int i = 0; i < 70; i++) {
		send_str(s, "x");
		loop_fake_advance(&fk, SK_NS_PER_S);
		check();
	}
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 408"));
	assert_true(app.st.timeout_body >= 1);
	/* a peer that stops reading: closed after send_timeout */
	s = conn(7);
	fk.s[s].write_room = 100;
	send_str(s, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3000\r\n\r\n");
	static char junk[3000];
	memset(junk, 'j', sizeof(junk));
	send_bytes(s, junk, sizeof(junk));
	assert_true(fk.s[s].open);
	loop_fake_advance(&fk, 61 * SK_NS_PER_S);
	check();
	assert_false(fk.s[s].open);
	assert_true(app.st.timeout_send >= 1);
	/* idle keep-alive: closed silently */
	s = conn(8);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	loop_fake_advance(&fk, 61 * SK_NS_PER_S);
	check();
	assert_false(fk.s[s].open);
}

static void test_refused(void **st)
{
	(void)st;
	setup_test();
	for (int i = 0; i < 4; i++)
		conn(5 + i);
	int s = conn(9);
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 503"));
	assert_false(fk.s[s].open);
	http_app_stop(&app);
	assert_int_equal(app.nconns, 0);
}

/* ---- the access log ---- */

/* The records the hook saw, copied (they live during the call only). */
struct rec_copy {
	int status;
	uint64_t body;
	uint16_t port;
	char line[64], ref[32], ua[32];
	bool has_line, has_ref, has_ua;
};
static struct rec_copy recs[32];
static int nrecs;

static void copy_str(char *dst, size_t cap, bool *has, struct http_access_str a)
{
	*has = a.p != NULL;
	size_t n = a.len < cap - 1 ? a.len : cap - 1;
	if (a.p)
		memcpy(dst, a.p, n);
	dst[a.p ? n : 0] = 0;
}

static void on_access(void *ctx, const struct http_access *a)
{
	assert_ptr_equal(ctx, &nrecs);
	assert_true(nrecs < (int)SK_ARRAY_LEN(recs));
	struct rec_copy *r = &recs[nrecs++];
	r->status = a->status;
	r->body = a->body_bytes;
	r->port = a->port;
	assert_true(sk_addr_is_v4(&a->addr) && sk_addr_ip4(&a->addr) == SK_IP4(198, 18, 0, 1));
	copy_str(r->line, sizeof(r->line), &r->has_line, a->line);
	copy_str(r->ref, sizeof(r->ref), &r->has_ref, a->referer);
	copy_str(r->ua, sizeof(r->ua), &r->has_ua, a->user_agent);
}

static void setup_logged(void)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 4096;
	cfg.access = on_access;
	cfg.access_ctx = &nrecs;
	setup_with(&test_app, &cfg);
	done_calls = done_ok = 0;
	async_req = tick_req = NULL;
	nrecs = 0;
	memset(recs, 0, sizeof(recs));
}

static void want_rec(int i, int status, uint64_t body, const char *line)
{
	assert_true(i < nrecs);
	assert_int_equal(recs[i].status, status);
	assert_int_equal(recs[i].body, body);
	if (line) {
		assert_true(recs[i].has_line);
		assert_string_equal(recs[i].line, line);
	} else {
		assert_false(recs[i].has_line);
	}
}

/* http_app_set_access: off, no record and no call; on again, records. */
static void test_access_set(void **st)
{
	(void)st;
	setup_logged();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(nrecs, 1);
	http_app_set_access(&app, NULL, NULL);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 "), 3);
	assert_int_equal(nrecs, 1);
	http_app_set_access(&app, on_access, &nrecs);
	send_str(s, "GET /hello?on HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(nrecs, 2);
	want_rec(1, 200, 3, "GET /hello?on HTTP/1.1");
	check();
}

/* Epochs: a request dispatched before http_app_epoch_next counts as old
 * until it is over, on a keep-alive connection that stays open; new ones
 * never count as old; an aborted one leaves the count too. */
static void test_epochs(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5), t = conn(6);
	send_str(s, "GET /async HTTP/1.1\r\nHost: a\r\n\r\n"); /* answered in a second */
	assert_int_equal(http_app_live_old(&app), 0);
	http_app_epoch_next(&app);
	assert_int_equal(http_app_live_old(&app), 1);
	send_str(t, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n"); /* over at once, new */
	assert_int_equal(http_app_live_old(&app), 1);
	http_app_epoch_next(&app); /* two epochs on: still the one old request */
	assert_int_equal(http_app_live_old(&app), 1);
	check();
	loop_fake_advance(&fk, 2 * SK_NS_PER_S);
	check();
	assert_non_null(strstr(fk.s[s].out, "later\n"));
	assert_int_equal(http_app_live_old(&app), 0);
	assert_int_equal(app.nconns, 2); /* both kept open: the count is not the connections' */
	/* one pending across an epoch, then the peer goes away: counted out */
	send_str(s, "GET /async HTTP/1.1\r\nHost: a\r\n\r\n");
	http_app_epoch_next(&app);
	assert_int_equal(http_app_live_old(&app), 1);
	loop_fake_event(&fk, s, LOOP_EV_READ | LOOP_EV_ERROR);
	check();
	assert_int_equal(http_app_live_old(&app), 0);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S); /* its timer fires on nothing */
	check();
}

static void test_access_plain_and_pipelined(void **st)
{
	(void)st;
	setup_logged();
	int s = conn(5);
	/* a plain answer: its line, Referer and User-Agent, the body's length */
	send_str(s, "GET /hello?x=1 HTTP/1.1\r\nHost: a\r\nReferer: http://r/\r\n"
		    "User-Agent: t/1\r\n\r\n");
	assert_int_equal(nrecs, 1);
	want_rec(0, 200, 3, "GET /hello?x=1 HTTP/1.1");
	assert_string_equal(recs[0].ref, "http://r/");
	assert_string_equal(recs[0].ua, "t/1");
	assert_int_equal(recs[0].port, 40005);
	/* pipelined: one record each, in order; HEAD logs no body; 404 and
	 * 405 are answers too; no Referer: absent */
	send_str(s, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\nHEAD /hello HTTP/1.1\r\nHost: a\r\n\r\n"
		    "PUT /hello HTTP/1.0\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"
		    "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(nrecs, 5);
	want_rec(1, 404, strlen("404 Not Found\n"), "GET /nope HTTP/1.1");
	want_rec(2, 200, 0, "HEAD /hello HTTP/1.1");
	want_rec(3, 405, strlen("405 Method Not Allowed\n"), "PUT /hello HTTP/1.0");
	want_rec(4, 200, 3, "GET /hello HTTP/1.1");
	assert_false(recs[1].has_ref);
	assert_false(recs[1].has_ua);
	/* a head the parser refuses: its first line as sent, 400 */
	s = conn(6);
	send_str(s, "GET /bad\x01 HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(nrecs, 6);
	assert_int_equal(recs[5].status, 400);
	assert_string_equal(recs[5].line, "GET /bad\x01 HTTP/1.1");
	assert_false(recs[5].has_ua);
	/* 408 on a head cut short: what arrived of its first line */
	s = conn(7);
	send_str(s, "GET /slo");
	loop_fake_advance(&fk, 11 * SK_NS_PER_S);
	check();
	assert_int_equal(nrecs, 7);
	want_rec(6, 408, recs[6].body, "GET /slo");
	/* idle connections timing out, lingering ones ending: nothing logged */
	loop_fake_advance(&fk, 61 * SK_NS_PER_S);
	check();
	assert_int_equal(app.nconns, 0);
	assert_int_equal(nrecs, 7);
}

static void test_access_bodies_and_streams(void **st)
{
	(void)st;
	setup_logged();
	int s = conn(5);
	/* a request with a body, collected: logged when answered, with the
	 * head's line (the body was read behind the head) */
	send_str(s, "POST /collect HTTP/1.1\r\nHost: a\r\nUser-Agent: up/2\r\n"
		    "Content-Length: 5\r\n\r\nabcde");
	assert_int_equal(nrecs, 1);
	want_rec(0, 200, 6, "POST /collect HTTP/1.1");
	assert_string_equal(recs[0].ua, "up/2");
	/* a streamed answer (echo of a 3000-byte body through a socket that
	 * takes 700 bytes at a time): one record, when the stream ends (its
	 * length decided), with the whole body */
	static char req[4000];
	int hl = snprintf(req, sizeof(req), "POST /echo HTTP/1.1\r\nHost: a\r\nUser-Agent: e/1\r\n"
					    "Content-Length: 3000\r\n\r\n");
	memset(req + hl, 'q', 3000);
	fk.s[s].write_room = 700;
	send_bytes(s, req, (size_t)hl + 3000);
	for (int i = 0; i < 20 && done_calls < 2; i++) {
		fk.s[s].write_room = 700;
		loop_fake_event(&fk, s, LOOP_EV_WRITE);
		check();
	}
	assert_int_equal(done_ok, 2);
	assert_int_equal(nrecs, 2);
	want_rec(1, 200, 3000, "POST /echo HTTP/1.1");
	assert_string_equal(recs[1].ua, "e/1");
	fk.s[s].write_room = SIZE_MAX;
	/* chunked both ways: the body bytes, not the coding's */
	send_str(s, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
	assert_int_equal(nrecs, 3);
	want_rec(2, 200, 5, "POST /echo HTTP/1.1");
	/* a stream from a timer: logged at its end, three seconds on */
	send_str(s, "GET /tick HTTP/1.1\r\nHost: a\r\n\r\n");
	for (int i = 0; i < 3; i++) { /* the fake's clock jumps: one tick a step */
		assert_int_equal(nrecs, 3);
		loop_fake_advance(&fk, SK_NS_PER_S);
		check();
	}
	assert_int_equal(nrecs, 4);
	want_rec(3, 200, 12, "GET /tick HTTP/1.1");
	/* a stream cut (http_app_abort): what was written */
	s = conn(6);
	send_str(s, "GET /cut HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(nrecs, 5);
	want_rec(4, 200, 4, "GET /cut HTTP/1.1");
	/* a stream whose peer goes away: logged once, when it is cut */
	s = conn(7);
	send_str(s, "GET /tick HTTP/1.1\r\nHost: a\r\n\r\n");
	loop_fake_advance(&fk, SK_NS_PER_S);
	check();
	loop_fake_event(&fk, s, LOOP_EV_READ | LOOP_EV_ERROR);
	check();
	assert_int_equal(nrecs, 6);
	want_rec(5, 200, 4, "GET /tick HTTP/1.1");
	loop_fake_advance(&fk, 3 * SK_NS_PER_S);
	assert_int_equal(nrecs, 6);
	/* 413: a Content-Length past max_body, from the head alone */
	s = conn(8);
	send_str(s, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n");
	assert_int_equal(nrecs, 7);
	assert_int_equal(recs[6].status, 413);
	assert_string_equal(recs[6].line, "POST /echo HTTP/1.1");
	/* 413 from collect's buffer */
	s = conn(9);
	send_str(s, "POST /collect HTTP/1.1\r\nHost: a\r\nContent-Length: 9000\r\n\r\n");
	assert_int_equal(nrecs, 8);
	assert_int_equal(recs[7].status, 413);
	assert_string_equal(recs[7].line, "POST /collect HTTP/1.1");
	/* a body that stops: 408 with the request's line */
	s = conn(10);
	send_str(s, "POST /collect HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc");
	loop_fake_advance(&fk, 61 * SK_NS_PER_S);
	check();
	assert_int_equal(recs[nrecs - 1].status, 408);
	assert_string_equal(recs[nrecs - 1].line, "POST /collect HTTP/1.1");
}

static void test_access_refused(void **st)
{
	(void)st;
	setup_logged();
	for (int i = 0; i < 4; i++)
		conn(5 + i);
	int s = conn(9);
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 503"));
	assert_int_equal(nrecs, 1);
	want_rec(0, 503, 0, NULL); /* nothing sent yet: no line */
	assert_int_equal(recs[0].port, 40009);
}

/* ---- the drain ---- */

static int drained;
static void on_drained(void *ctx)
{
	assert_ptr_equal(ctx, &drained);
	drained++;
}

static void test_drain(void **st)
{
	(void)st;
	setup_logged();
	drained = 0;
	/* idle: answered, keep-alive */
	int idle = conn(5);
	send_str(idle, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	/* busy: its handler answers a second later */
	int busy = conn(6);
	send_str(busy, "GET /async HTTP/1.1\r\nHost: a\r\n\r\n");
	/* streaming: a chunked answer for three seconds */
	int strm = conn(7);
	send_str(strm, "GET /tick HTTP/1.1\r\nHost: a\r\n\r\n");
	/* a second idle one, which sends a request inside the grace */
	int late = conn(8);
	send_str(late, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	clear_out(idle), clear_out(busy), clear_out(late);
	assert_int_equal(app.nconns, 4);
	http_app_drain(&app, fk.now, on_drained, &drained);
	check();
	/* the listener is closed; nothing is cut yet */
	assert_false(fk.s[LOOP_FAKE_LSOCK].open);
	assert_int_equal(app.nconns, 4);
	assert_int_equal(drained, 0);
	/* a second drain is nothing */
	http_app_drain(&app, fk.now, on_drained, &drained);
	/* inside the grace: answered, with the close */
	loop_fake_advance(&fk, 200 * SK_NS_PER_MS);
	send_str(late, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[late].out, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(fk.s[late].out, "Connection: close\r\n"));
	assert_false(fk.s[late].open);
	/* the grace ends: the idle one is closed, silently */
	loop_fake_advance(&fk, 400 * SK_NS_PER_MS);
	check();
	assert_false(fk.s[idle].open);
	assert_int_equal(fk.s[idle].out_len, 0);
	assert_int_equal(app.st.drain_idle_closed, 1);
	assert_int_equal(app.st.timeout_idle, 0);
	assert_int_equal(app.nconns, 2);
	/* busy: its answer comes, the last on its connection */
	loop_fake_advance(&fk, 500 * SK_NS_PER_MS);
	check();
	assert_non_null(strstr(fk.s[busy].out, "later\n"));
	assert_non_null(strstr(fk.s[busy].out, "Connection: close\r\n"));
	assert_false(fk.s[busy].open);
	assert_int_equal(drained, 0);
	/* streaming: its head left before the drain (keep-alive); the stream
	 * finishes whole, then the connection, idle, goes after the grace */
	loop_fake_advance(&fk, SK_NS_PER_S);
	loop_fake_advance(&fk, SK_NS_PER_S);
	check();
	assert_non_null(strstr(fk.s[strm].out, "4\r\ntick\r\n4\r\ntick\r\n4\r\ntick\r\n0\r\n\r\n"));
	assert_int_equal(drained, 0);
	loop_fake_advance(&fk, 600 * SK_NS_PER_MS);
	check();
	assert_false(fk.s[strm].open);
	assert_int_equal(app.nconns, 0);
	assert_int_equal(drained, 1);
	assert_int_equal(app.st.drain_idle_closed, 2);
	/* every request finished whole, each logged */
	assert_int_equal(done_calls, done_ok);
	want_rec(nrecs - 1, 200, 12, "GET /tick HTTP/1.1");
	/* http_app_stop after: nothing more */
	http_app_stop(&app);
	assert_int_equal(drained, 1);
}

static void test_drain_edges(void **st)
{
	(void)st;
	/* no connection: done at once */
	setup_test();
	drained = 0;
	http_app_drain(&app, fk.now, on_drained, &drained);
	assert_int_equal(drained, 1);
	assert_false(fk.s[LOOP_FAKE_LSOCK].open);
	/* a connection mid-head finishes its request, answered with the close */
	setup_test();
	drained = 0;
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHo");
	http_app_drain(&app, fk.now, on_drained, &drained);
	loop_fake_advance(&fk, SK_NS_PER_S); /* past the grace: not idle, kept */
	check();
	assert_true(fk.s[s].open);
	send_str(s, "st: a\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	/* the pipelined second request is not answered: the first's close
	 * ends the connection */
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 1);
	assert_non_null(strstr(fk.s[s].out, "Connection: close\r\n"));
	loop_fake_eof(&fk, s);
	check();
	assert_int_equal(app.nconns, 0);
	assert_int_equal(drained, 1);
	/* a drain cut short by http_app_stop: done is not called */
	setup_test();
	drained = 0;
	s = conn(5);
	send_str(s, "GET /async HTTP/1.1\r\nHost: a\r\n\r\n");
	http_app_drain(&app, fk.now, on_drained, &drained);
	http_app_stop(&app);
	assert_int_equal(app.nconns, 0);
	assert_int_equal(drained, 0);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S);
}

/* ---- the engine's connection rules, one at a time (the cases the
 * former static-file engine's tests held, on this engine) ---- */

/* A whole answer leaves in one write, head and body together; requests
 * pipelined behind a 404 are answered in order; one cut in the middle of
 * its head is answered when the rest comes. */
static void test_one_write_and_order(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	int w0 = fk.s[s].writes;
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(fk.s[s].writes - w0, 1);
	clear_out(s);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n"
		    "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\nHo");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200"), 2);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 404"), 1);
	const char *p = strstr(fk.s[s].out, "HTTP/1.1 200"), *q = strstr(fk.s[s].out, "HTTP/1.1 404");
	assert_true(p && q && p < q);
	assert_non_null(strstr(q, "HTTP/1.1 200"));
	send_str(s, "st: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200"), 3);
	assert_int_equal(app.st.requests, 5);
	assert_true(fk.s[s].open);
}

/* "Connection: close": the answer says so and the connection ends at
 * once (nothing left to read); HTTP/1.0 asking for keep-alive is told
 * so and kept. */
static void test_connection_header(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_false(fk.s[s].open);
	s = conn(6);
	send_str(s, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: keep-alive\r\n"));
	assert_null(strstr(fk.s[s].out, "Connection: close"));
	assert_true(fk.s[s].open);
	send_str(s, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 2);
	assert_true(fk.s[s].open);
}

/* A bad head: 400, the close, and a lingering read until the client's
 * FIN; nothing behind it is answered.  A method the parser does not
 * know: 501, the same way. */
static void test_bad_head_lingers(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\nX : y\r\n\r\nGET /hello HTTP/1.1\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 400 Bad Request\r\n", 26);
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
	assert_true(fk.s[s].shut);
	assert_true(fk.s[s].open);
	send_str(s, "Host: a\r\n\r\n"); /* read and dropped while lingering */
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
	loop_fake_eof(&fk, s);
	check();
	assert_false(fk.s[s].open);
	s = conn(6);
	send_str(s, "BREW /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 501 ", 13);
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_true(fk.s[s].shut);
}

/* The header timeout runs from the accept: a head trickled in does not
 * extend it; the 408 comes at 10 s, and the lingering close ends 2 s
 * later. */
static void test_header_timeout_trickle(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\n");
	loop_fake_advance(&fk, 5 * SK_NS_PER_S);
	check();
	send_str(s, "Host: a\r\n");
	loop_fake_advance(&fk, 4 * SK_NS_PER_S);
	check();
	assert_int_equal(fk.s[s].out_len, 0);
	loop_fake_advance(&fk, SK_NS_PER_S);
	check();
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 408 ", 13);
	assert_true(fk.s[s].shut);
	assert_int_equal(app.st.timeout_header, 1);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S); /* the linger */
	check();
	assert_false(fk.s[s].open);
	/* A connection that never sent a byte is an idle one: no 408 at
	 * 10 s, closed silently at the keep-alive timeout. */
	int c = conn(6);
	loop_fake_advance(&fk, 10 * SK_NS_PER_S);
	check();
	assert_true(fk.s[c].open);
	loop_fake_advance(&fk, 51 * SK_NS_PER_S);
	check();
	assert_false(fk.s[c].open);
	assert_int_equal(fk.s[c].out_len, 0);
	assert_int_equal(app.st.timeout_header, 1);
}

/* The keep-alive clock restarts with each request; an idle connection
 * ends 60 s after its last answer, silently. */
static void test_idle_restarts(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	for (int i = 0; i < 5; i++) {
		send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
		loop_fake_advance(&fk, 30 * SK_NS_PER_S);
		check();
	}
	assert_true(fk.s[s].open);
	size_t out = fk.s[s].out_len;
	loop_fake_advance(&fk, 29 * SK_NS_PER_S);
	check();
	assert_true(fk.s[s].open);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S);
	check();
	assert_false(fk.s[s].open);
	assert_int_equal(fk.s[s].out_len, out); /* no 408 */
	assert_int_equal(app.st.timeout_idle, 1);
	assert_int_equal(app.st.resp_408, 0);
}

/* A socket that takes 50 bytes per write: both pipelined answers leave
 * whole, one write edge at a time. */
static void test_partial_writes(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	fk.s[s].write_room = 50;
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_true(fk.s[s].out_len <= 50);
	for (int i = 0; i < 100 && count(fk.s[s].out, fk.s[s].out_len, "hi\n") < 2; i++) {
		fk.s[s].write_room = 50;
		loop_fake_event(&fk, s, LOOP_EV_WRITE);
		check();
	}
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 2);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "hi\n"), 2);
	assert_true(fk.s[s].open);
}

/* Bodies a handler does not read: a Content-Length one is read and
 * dropped before the next request, the answer coming once it is in; with
 * "Connection: close" (or HTTP/1.0) the same, then the end; a broken
 * chunk size is the engine's 400. */
static void test_unread_bodies(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel");
	assert_true(fk.s[s].out_len == 0 || strstr(fk.s[s].out, "HTTP/1.1 200 OK"));
	send_str(s, "loGET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200 OK"), 2);
	assert_true(fk.s[s].open);
	assert_true(app.st.bodies_discarded >= 1);
	s = conn(6);
	send_str(s, "GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhel");
	send_str(s, "lo");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
	assert_false(fk.s[s].open && !fk.s[s].shut);
	s = conn(7);
	send_str(s, "GET /hello HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
	assert_false(fk.s[s].open && !fk.s[s].shut);
	/* an error answer to a request with a body still comes */
	s = conn(8);
	send_str(s, "POST /hello HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 405 ", 13);
	loop_fake_eof(&fk, 5);
	loop_fake_eof(&fk, 6);
	loop_fake_eof(&fk, 7);
	loop_fake_eof(&fk, 8);
	check();
	s = conn(5);
	send_str(s, "POST /skip HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 400 ", 13);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
}

/* The refusal is counted. */
static void test_refused_counted(void **st)
{
	(void)st;
	setup_test();
	for (int i = 0; i < 4; i++)
		conn(5 + i);
	int s = conn(9);
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 503 ", 13);
	assert_false(fk.s[s].open);
	assert_int_equal(app.st.conns_refused, 1);
	assert_int_equal(app.st.resp_503, 1);
}

/* The checker can fail: each broken account is named. */
static void test_check_catches(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.1\r\nHo");
	check();
	app.nconns++;
	assert_int_not_equal(http_app_check(&app), 0);
	app.nconns--;
	app.files_held++;
	assert_int_not_equal(http_app_check(&app), 0);
	app.files_held--;
	app.bufs_held++; /* a buffer set nobody holds */
	assert_int_not_equal(http_app_check(&app), 0);
	app.bufs_held--;
	app.states_fresh++; /* the free states no longer add up */
	assert_int_not_equal(http_app_check(&app), 0);
	app.states_fresh--;
	check();
}

/* More access-log records: the 400 of a broken chunk is the record of
 * its request; a request whose long body is dropped keeps its head's
 * fields. */
static void test_access_more(void **st)
{
	(void)st;
	setup_logged();
	int s = conn(5);
	send_str(s, "POST /skip HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
	assert_int_equal(nrecs, 1);
	want_rec(0, 400, strlen("400 Bad Request\n"), "POST /skip HTTP/1.1");
	s = conn(7);
	send_str(s, "POST /skip HTTP/1.1\r\nHost: a\r\nUser-Agent: poster\r\nContent-Length: 40000\r\n\r\n");
	static char body[40000];
	memset(body, 'b', sizeof(body));
	for (size_t off = 0; off < sizeof(body); off += 10000)
		send_bytes(s, body + off, 10000);
	assert_int_equal(nrecs, 2);
	want_rec(1, 200, 8, "POST /skip HTTP/1.1");
	assert_string_equal(recs[1].ua, "poster");
	/* no route for the method: 405, whatever the body after the head */
	s = conn(8);
	send_str(s, "POST /hello HTTP/1.1\r\nHost: a\r\nUser-Agent: poster2\r\nContent-Length: 40000\r\n\r\n");
	for (size_t off = 0; off < sizeof(body) && fk.s[s].open && !fk.s[s].eof; off += 10000)
		send_bytes(s, body + off, 10000);
	assert_int_equal(nrecs, 3);
	want_rec(2, 405, strlen("405 Method Not Allowed\n"), "POST /hello HTTP/1.1");
	assert_string_equal(recs[2].ua, "poster2");
}

/* Draining: HTTP/1.0 that asked for keep-alive is answered with the
 * close, and without "keep-alive". */
/* ---- HTTP/2 (docs/h2.md): the preface switch and a stream's life ---- */

/* A request's HEADERS on stream sid: GET or POST path, :authority a
 * (HPACK: static-table indices and literals, no Huffman). */
static size_t h2_req_frame(uint8_t *b, uint32_t sid, bool post, const char *path, bool end)
{
	uint8_t blk[128];
	size_t n = 0, pl = strlen(path);
	blk[n++] = post ? 0x83 : 0x82; /* :method GET / POST */
	blk[n++] = 0x86;               /* :scheme http */
	blk[n++] = 0x04;               /* :path, literal without indexing */
	blk[n++] = (uint8_t)pl;
	memcpy(blk + n, path, pl);
	n += pl;
	blk[n++] = 0x01; /* :authority "a" */
	blk[n++] = 1;
	blk[n++] = 'a';
	size_t h = h2_headers_hdr_emit(b, 9, sid, (uint32_t)n, end, true);
	memcpy(b + h, blk, n);
	return h + n;
}

/* The frames of s's output: how many of type on stream sid, the last's
 * flags, and the DATA payloads of sid joined into data. */
static uint32_t h2_last_code; /* h2_frames: the last GOAWAY's or RST_STREAM's error code */
static uint32_t h2_last_sid;  /* h2_frames: the last GOAWAY's last_stream_id */

static int h2_frames(int s, uint8_t type, uint32_t sid, uint8_t *flags, char *data, size_t *dlen)
{
	const uint8_t *o = (const uint8_t *)fk.s[s].out;
	size_t len = fk.s[s].out_len, at = 0;
	int k = 0;
	if (dlen)
		*dlen = 0;
	while (at < len) {
		struct h2_frame f;
		int r = h2_frame_parse(o + at, len - at, 16384, &f);
		assert_true(r > 0);
		if (f.h.type == type && f.h.stream_id == sid) {
			k++;
			if (flags)
				*flags = f.h.flags;
			h2_last_code = f.error_code;
			h2_last_sid = f.last_stream_id;
			if (data && type == H2_DATA) {
				memcpy(data + *dlen, f.data, f.data_len);
				*dlen += f.data_len;
			}
		}
		at += (size_t)r;
	}
	return k;
}

/* s's output holds the answer to GET /hello on stream sid: one HEADERS,
 * then "hi\n" in DATA ending the stream. */
static void assert_h2_hello(int s, uint32_t sid)
{
	uint8_t fl = 0;
	char data[256];
	size_t dl = 0;
	assert_int_equal(h2_frames(s, H2_HEADERS, sid, NULL, NULL, NULL), 1);
	assert_int_equal(h2_frames(s, H2_DATA, sid, &fl, data, &dl), 1);
	assert_true(fl & H2_FLAG_END_STREAM);
	assert_int_equal(dl, 3);
	assert_memory_equal(data, "hi\n", 3);
}

static void test_h2_preface_and_streams(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	static const char pre[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	/* The preface in two pieces: the first is not yet a verdict. */
	send_bytes(s, pre, 5);
	assert_int_equal(fk.s[s].out_len, 0);
	assert_int_equal(app.st.h2_sessions, 0);
	uint8_t b[512];
	size_t n = 0;
	memcpy(b, pre + 5, 19);
	n = 19;
	n += h2_settings_emit(b + n, sizeof(b) - n, NULL, 0);
	n += h2_req_frame(b + n, 1, false, "/hello", true);
	send_bytes(s, b, n);
	assert_int_equal(app.st.h2_sessions, 1);
	assert_int_equal(app.st.h2_streams, 1);
	assert_int_equal(done_calls, 1);
	assert_int_equal(done_ok, 1);
	assert_int_equal(h2_frames(s, H2_SETTINGS, 0, NULL, NULL, NULL) >= 1, 1);
	assert_h2_hello(s, 1);
	uint8_t fl = 0;
	char data[256];
	size_t dl = 0;
	/* The stream's state went back: only the session's connection. */
	assert_int_equal(app.nconns, 1);
	assert_int_equal(app.st.resp_2xx, 1);
	/* A POST framed by END_STREAM only, its body in two DATA frames. */
	clear_out(s);
	n = h2_req_frame(b, 3, true, "/echo", false);
	n += h2_data_hdr_emit(b + n, 9, 3, 3, false);
	memcpy(b + n, "abc", 3);
	n += 3;
	send_bytes(s, b, n);
	assert_int_equal(app.nconns, 2); /* the stream waits for the rest */
	n = h2_data_hdr_emit(b, 9, 3, 2, true);
	memcpy(b + n, "de", 2);
	n += 2;
	send_bytes(s, b, n);
	assert_int_equal(h2_frames(s, H2_DATA, 3, &fl, data, &dl) >= 1, 1);
	assert_true(fl & H2_FLAG_END_STREAM);
	assert_int_equal(dl, 5);
	assert_memory_equal(data, "abcde", 5);
	assert_int_equal(app.nconns, 1);
	/* Drain: GOAWAY, and the client's close ends the connection. */
	clear_out(s);
	drained = 0;
	http_app_drain(&app, fk.now, on_drained, &drained);
	assert_int_equal(h2_frames(s, H2_GOAWAY, 0, NULL, NULL, NULL), 1);
	check();
	loop_fake_eof(&fk, s);
	loop_fake_event(&fk, s, LOOP_EV_READ);
	check();
	assert_int_equal(app.nconns, 0);
	assert_int_equal(drained, 1);
	assert_int_equal(app.h2_used, 0);
}

/* The engine's defence counters reach the app's (the metrics page) as
 * they move, while the attacking connection is still open, and are not
 * counted again when it ends. */
static void test_h2_counters_live(void **st)
{
	(void)st;
	setup_test();
	int s = conn(5);
	static uint8_t b[8192];
	size_t n = 24;
	memcpy(b, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	n += h2_settings_emit(b + n, sizeof(b) - n, NULL, 0);
	/* An HPACK bomb: one 4,000-byte entry, named 4 times more in the same
	 * block: 5 x 4,035 bytes of header list, over the 16,384 bound. */
	uint8_t blk[4200];
	size_t k = 0;
	static const uint8_t head[] = {0x82, 0x86, 0x84, 0x01, 0x01, 'a',
				       0x40, 0x03, 'x', '-', 'b', 0x7f, 0xa1, 0x1e}; /* 127 + 3873 */
	memcpy(blk, head, sizeof(head));
	k = sizeof(head);
	memset(blk + k, 'v', 4000);
	k += 4000;
	for (int i = 0; i < 4; i++)
		blk[k++] = 0x80 | 62; /* the new entry */
	n += h2_headers_hdr_emit(b + n, 9, 1, (uint32_t)k, true, true);
	memcpy(b + n, blk, k);
	n += k;
	send_bytes(s, b, n);
	assert_int_equal(app.st.h2_sessions, 1);
	assert_int_equal(app.h2_used, 1);
	assert_int_equal(app.st.h2_header_large, 1); /* before the session ends */
	assert_int_equal(h2_frames(s, H2_HEADERS, 1, NULL, NULL, NULL), 1); /* its 431 */
	/* A malformed request (an upper-case name): RST_STREAM, counted now. */
	static const uint8_t bad[] = {0x82, 0x86, 0x84, 0x01, 0x01, 'a', 0x00, 0x01, 'X', 0x01, '1'};
	n = h2_headers_hdr_emit(b, 9, 3, sizeof(bad), true, true);
	memcpy(b + n, bad, sizeof(bad));
	n += sizeof(bad);
	send_bytes(s, b, n);
	assert_int_equal(h2_frames(s, H2_RST_STREAM, 3, NULL, NULL, NULL), 1);
	assert_int_equal(app.st.h2_stream_errors, 1);
	assert_int_equal(app.st.h2_floods, 0);
	assert_int_equal(app.h2_used, 1);
	/* A PING flood past the budget (50 a second): GOAWAY, the session
	 * ends; each counter moved once in all. */
	n = 0;
	uint8_t op[8] = {0};
	for (int i = 0; i < 60; i++)
		n += h2_ping_emit(b + n, sizeof(b) - n, false, op);
	send_bytes(s, b, n);
	assert_int_equal(h2_frames(s, H2_GOAWAY, 0, NULL, NULL, NULL), 1);
	assert_int_equal(app.st.h2_floods, 1);
	loop_fake_eof(&fk, s);
	loop_fake_event(&fk, s, LOOP_EV_READ);
	check();
	assert_int_equal(app.h2_used, 0);
	assert_int_equal(app.st.h2_floods, 1);
	assert_int_equal(app.st.h2_header_large, 1);
	assert_int_equal(app.st.h2_stream_errors, 1);
	assert_int_equal(app.st.h2_conn_errors, 1);
}

/* A session ended by a flood (GOAWAY ENHANCE_YOUR_CALM) with the rest of
 * the flood unread closes as HTTP/1.1 does after an error: FIN after the
 * GOAWAY, then read and drop until the client's FIN, or the linger's 2 s.
 * A close with input unread would be a RST, which makes the client's
 * kernel drop the GOAWAY it had not read yet. */
static void test_h2_goaway_lingers(void **st)
{
	(void)st;
	setup_test();
	static const char pre[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
	uint8_t b[24 + 9 + 80 * 17];
	uint8_t ping[17] = {0, 0, 8, H2_PING, 0, 0, 0, 0, 0};
	for (int k = 0; k < 2; k++) {
		int s = conn(5 + k);
		size_t n = 24;
		memcpy(b, pre, 24);
		n += h2_settings_emit(b + n, sizeof(b) - n, NULL, 0);
		for (int i = 0; i < 80; i++, n += sizeof(ping)) /* the budget is 50 a window */
			memcpy(b + n, ping, sizeof(ping));
		send_bytes(s, b, n);
		assert_int_equal(h2_frames(s, H2_GOAWAY, 0, NULL, NULL, NULL), 1);
		assert_int_equal(h2_last_code, H2_ENHANCE_YOUR_CALM);
		assert_true(fk.s[s].shut); /* FIN after the GOAWAY */
		assert_true(fk.s[s].open); /* and still reading */
		assert_int_equal(app.h2_used, 0); /* the session was given back */
		size_t out = fk.s[s].out_len;
		send_bytes(s, b + 24 + 9, 40 * sizeof(ping)); /* read and dropped */
		assert_int_equal(fk.s[s].out_len, out);
		assert_true(fk.s[s].open);
		if (k == 0) {
			loop_fake_eof(&fk, s);
			loop_fake_event(&fk, s, LOOP_EV_READ);
		} else {
			loop_fake_advance(&fk, 2 * SK_NS_PER_S); /* the linger's end */
		}
		check();
		assert_false(fk.s[s].open);
		assert_int_equal(app.nconns, 0);
	}
	assert_int_equal(app.st.h2_floods, 2);
}

/* The reload tests' server: 8 connection states, 4 KiB output buffers,
 * h2_sessions sessions. */
static void goaway_setup(uint32_t h2_sessions)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 8;
	cfg.out_size = 4096;
	cfg.h2_sessions = h2_sessions;
	setup_with(&test_app, &cfg);
}

/* A client's opening at b: the preface and an empty SETTINGS; its length. */
static size_t h2_opening(uint8_t *b, size_t cap)
{
	memcpy(b, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	return 24 + h2_settings_emit(b + 24, cap - 24, NULL, 0);
}

/* A reload's GOAWAY (http_app_goaway): a session with a stream in flight
 * is told NO_ERROR with that stream as the last; the stream's answer
 * completes, then the connection closes lingering (FIN, read until the
 * client's).  An HTTP/1.1 keep-alive connection beside it and a session
 * opened after it go on. */
static void test_h2_goaway_reload(void **st)
{
	(void)st;
	goaway_setup(8);
	done_calls = done_ok = 0;
	uint8_t b[512];
	int s = conn(5);
	size_t n = h2_opening(b, sizeof(b));
	n += h2_req_frame(b + n, 1, false, "/tick", true); /* three seconds of answer */
	send_bytes(s, b, n);
	assert_int_equal(app.st.h2_streams, 1);
	assert_int_equal(h2_frames(s, H2_HEADERS, 1, NULL, NULL, NULL), 1);
	int k = conn(6); /* HTTP/1.1 keep-alive */
	send_str(k, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[k].out, "HTTP/1.1 200"));
	clear_out(s);
	clear_out(k);
	http_app_goaway(&app, fk.now);
	check();
	assert_int_equal(h2_frames(s, H2_GOAWAY, 0, NULL, NULL, NULL), 1);
	assert_int_equal(h2_last_code, H2_NO_ERROR);
	assert_int_equal(h2_last_sid, 1);
	assert_int_equal(stat_of("http.h2_goaway_reload"), 1);
	assert_false(fk.s[s].shut); /* its stream is not over */
	assert_int_equal(fk.s[k].out_len, 0);
	assert_false(fk.s[k].shut);
	/* A second call says nothing more. */
	http_app_goaway(&app, fk.now);
	assert_int_equal(h2_frames(s, H2_GOAWAY, 0, NULL, NULL, NULL), 1);
	assert_int_equal(app.st.h2_goaway_reload, 1);
	/* A new session meanwhile is served, and told nothing. */
	int t = conn(7);
	n = h2_opening(b, sizeof(b));
	n += h2_req_frame(b + n, 1, false, "/hello", true);
	send_bytes(t, b, n);
	assert_h2_hello(t, 1);
	uint8_t fl = 0;
	char data[256];
	size_t dl = 0;
	assert_int_equal(h2_frames(t, H2_GOAWAY, 0, NULL, NULL, NULL), 0);
	/* The old stream's answer completes, then the connection lingers. */
	for (int i = 0; i < 3; i++) {
		assert_false(fk.s[s].shut);
		loop_fake_advance(&fk, SK_NS_PER_S); /* a tick a second */
		check();
	}
	assert_int_equal(h2_frames(s, H2_DATA, 1, &fl, data, &dl) >= 3, 1);
	assert_true(fl & H2_FLAG_END_STREAM);
	assert_memory_equal(data, "tickticktick", 12);
	assert_true(fk.s[s].shut); /* FIN after the last answer */
	assert_true(fk.s[s].open); /* and reading until the client closes */
	loop_fake_eof(&fk, s);
	loop_fake_event(&fk, s, LOOP_EV_READ);
	check();
	assert_false(fk.s[s].open);
	/* The keep-alive connection and the new session are still open. */
	assert_true(fk.s[k].open && !fk.s[k].shut);
	send_str(k, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[k].out, "HTTP/1.1 200"));
	assert_true(fk.s[t].open && !fk.s[t].shut);
	assert_int_equal(app.nconns, 2);
	assert_int_equal(app.st.h2_goaway_reload, 1);
}

/* The reload walks the session pool (http_app_goaway): with its first
 * slot given back, the sessions in the others are each told GOAWAY once
 * (with no stream open, each lingers at once, its slot given back); one
 * opened after is told nothing until the next reload, which tells it
 * alone. */
static void test_h2_goaway_pool(void **st)
{
	(void)st;
	goaway_setup(3);
	uint8_t b[128];
	size_t n = h2_opening(b, sizeof(b));
	int s[3];
	for (int i = 0; i < 3; i++) {
		s[i] = conn(5 + i);
		send_bytes(s[i], b, n);
	}
	assert_int_equal(app.h2_used, 3);
	loop_fake_eof(&fk, s[0]); /* the first slot's session ends */
	loop_fake_event(&fk, s[0], LOOP_EV_READ);
	check();
	assert_false(fk.s[s[0]].open);
	assert_int_equal(app.h2_used, 2);
	for (int i = 1; i < 3; i++)
		clear_out(s[i]);
	http_app_goaway(&app, fk.now);
	check();
	for (int i = 1; i < 3; i++) {
		assert_int_equal(h2_frames(s[i], H2_GOAWAY, 0, NULL, NULL, NULL), 1);
		assert_int_equal(h2_last_code, H2_NO_ERROR);
		assert_true(fk.s[s[i]].shut);
	}
	assert_int_equal(app.st.h2_goaway_reload, 2);
	assert_int_equal(app.h2_used, 0);
	int t = conn(4);
	send_bytes(t, b, n);
	assert_int_equal(app.h2_used, 1);
	assert_int_equal(h2_frames(t, H2_GOAWAY, 0, NULL, NULL, NULL), 0);
	http_app_goaway(&app, fk.now);
	check();
	assert_int_equal(app.st.h2_goaway_reload, 3);
	assert_int_equal(h2_frames(t, H2_GOAWAY, 0, NULL, NULL, NULL), 1);
	for (int i = 1; i < 3; i++)
		assert_int_equal(h2_frames(s[i], H2_GOAWAY, 0, NULL, NULL, NULL), 1);
}

/* HTTP/2 off: the preface is an HTTP/1.1 request the parser refuses. */
static void test_h2_off(void **st)
{
	(void)st;
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.h2_sessions = 0;
	setup_with(&test_app, &cfg);
	int s = conn(5);
	send_str(s, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	assert_int_equal(strncmp(fk.s[s].out, "HTTP/1.1 ", 9), 0);
	assert_int_equal(app.st.h2_sessions, 0);
	/* And with sessions, a client that is not HTTP/2 is HTTP/1.1 as before. */
	setup_test();
	s = conn(5);
	send_str(s, "PUT /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 405"));
	assert_int_equal(app.st.h2_sessions, 0);
}

static void test_drain_http10(void **st)
{
	(void)st;
	setup_test();
	drained = 0;
	int s = conn(5);
	send_str(s, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "Connection: keep-alive\r\n"));
	clear_out(s);
	http_app_drain(&app, fk.now, on_drained, &drained);
	loop_fake_advance(&fk, 100 * SK_NS_PER_MS);
	send_str(s, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_null(strstr(fk.s[s].out, "keep-alive"));
	assert_false(fk.s[s].open);
	assert_int_equal(drained, 1);
}

/* Random steps on a few connections: requests cut anywhere (good, bad,
 * with bodies, pipelined, closing), write limits, time, client EOFs, new
 * clients; every invariant is checked after every step.  Deterministic:
 * the same seed every run.  With the access log on, every answer is one
 * record. */
static void random_steps(bool logging)
{
	static const char *const reqs[] = {
		"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n",
		"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\nabcdefg",
		"POST /skip HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"POST /collect HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
		"GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
		"GET /hello HTTP/1.0\r\nContent-Length: 1\r\n\r\nx",
		"POST /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
		"GET /req/%2e%2e/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /hello HTTP/1.1\r\nHost: a\r\nX : y\r\n\r\n",
		"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
		"GET /async HTTP/1.1\r\nHost: a\r\n\r\n",
	};
	if (logging)
		setup_logged();
	else
		setup_test();
	uint64_t records = 0;
	struct {
		char buf[1024]; /* one to three requests back to back */
		size_t len, off; /* [off, len) still to send */
	} cl[LOOP_FAKE_NSOCK];
	memset(cl, 0, sizeof(cl));
	uint64_t x = 0x9e3779b97f4a7c15ull;
#define RND(n) \
	((x = x * 6364136223846793005ull + 1442695040888963407ull), (size_t)((x >> 33) % (n)))
	for (int step = 0; step < 50000; step++) {
		if (logging && nrecs > 16) { /* keep the count, free the copies */
			records += (uint64_t)nrecs;
			nrecs = 0;
		}
		int s = 2 + (int)RND(5);
		struct loop_fake_sock *k = &fk.s[s];
		if (!k->open) {
			/* Closed by the engine (or never opened): a new client. */
			if (RND(4) == 0) {
				conn(s);
				cl[s].len = cl[s].off = 0;
			}
			continue;
		}
		switch (RND(8)) {
		case 0: case 1: case 2: { /* the next piece of the client's bytes */
			if (k->in_len - k->in_pos > 16384 || k->eof)
				break; /* the engine is not reading (full output): wait */
			if (cl[s].off == cl[s].len) {
				cl[s].len = cl[s].off = 0;
				for (size_t r = 1 + RND(3); r; r--) {
					const char *q = reqs[RND(SK_ARRAY_LEN(reqs))];
					memcpy(cl[s].buf + cl[s].len, q, strlen(q));
					cl[s].len += strlen(q);
				}
			}
			size_t left = cl[s].len - cl[s].off;
			size_t n = RND(3) ? left : 1 + RND(left);
			send_bytes(s, cl[s].buf + cl[s].off, n);
			cl[s].off += n;
			break;
		}
		case 3: /* the client reads slowly, or again at full speed */
			k->write_room = RND(3) ? SIZE_MAX : RND(200);
			loop_fake_event(&fk, s, LOOP_EV_WRITE);
			check();
			break;
		case 4:
			loop_fake_advance(&fk, RND(4) ? RND(2 * SK_NS_PER_S) : RND(70 * SK_NS_PER_S));
			check();
			break;
		case 5:
			if (RND(8) == 0 || k->out_len > 32768) {
				loop_fake_eof(&fk, s);
				check();
			}
			break;
		default: /* a spurious or stale edge */
			loop_fake_event(&fk, s, RND(2) ? LOOP_EV_READ : LOOP_EV_WRITE);
			check();
			break;
		}
	}
#undef RND
	const struct http_app_stats *q = &app.st;
	assert_true(q->requests > 2000); /* the walk did reach the engine's paths */
	assert_true(q->timeout_header && q->bodies_discarded && q->conns_refused && q->continues);
	assert_true(q->resp_400 && q->resp_404 && q->resp_405 && q->resp_408 && q->resp_503);
	http_app_stop(&app);
	check();
	assert_int_equal(app.nconns, 0);
	if (logging)
		assert_int_equal(records + (uint64_t)nrecs,
				 q->resp_2xx + q->resp_3xx + q->resp_4xx + q->resp_5xx);
}

static void test_random_steps(void **st)
{
	(void)st;
	random_steps(false);
}

static void test_random_steps_logged(void **st)
{
	(void)st;
	random_steps(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_keepalive_pipelined),
		cmocka_unit_test(test_request_accessors),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_kv_put_get_every_cut),
		cmocka_unit_test(test_kv_chunked_every_cut),
		cmocka_unit_test(test_kv_full_507_and_413),
		cmocka_unit_test(test_echo_backpressure),
		cmocka_unit_test(test_continue),
		cmocka_unit_test(test_async_and_abort),
		cmocka_unit_test(test_hdr_size_abort_head),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_access_plain_and_pipelined),
		cmocka_unit_test(test_access_bodies_and_streams),
		cmocka_unit_test(test_access_refused),
		cmocka_unit_test(test_access_set),
		cmocka_unit_test(test_epochs),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_drain_edges),
		cmocka_unit_test(test_close_after),
		cmocka_unit_test(test_idle_holds_no_buffers),
		cmocka_unit_test(test_body_skip),
		cmocka_unit_test(test_reads_per_request),
		cmocka_unit_test(test_one_write_and_order),
		cmocka_unit_test(test_connection_header),
		cmocka_unit_test(test_bad_head_lingers),
		cmocka_unit_test(test_header_timeout_trickle),
		cmocka_unit_test(test_idle_restarts),
		cmocka_unit_test(test_partial_writes),
		cmocka_unit_test(test_unread_bodies),
		cmocka_unit_test(test_refused_counted),
		cmocka_unit_test(test_check_catches),
		cmocka_unit_test(test_access_more),
		cmocka_unit_test(test_drain_http10),
		cmocka_unit_test(test_h2_preface_and_streams),
		cmocka_unit_test(test_h2_counters_live),
		cmocka_unit_test(test_h2_goaway_lingers),
		cmocka_unit_test(test_h2_goaway_reload),
		cmocka_unit_test(test_h2_goaway_pool),
		cmocka_unit_test(test_h2_off),
		cmocka_unit_test(test_random_steps),
		cmocka_unit_test(test_random_steps_logged),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(mem);
	return rc;
}
