/* app_kit_test.c — the helper kit of http/app.h on the fake loop: the
 * body pool (http_app_body_read: a NUL-ended body, 413 early and late,
 * 503 when the pool is empty, the slot back after on_done, on every cut),
 * http_app_headerf (formatted, and as loud as an overflow when it does not
 * fit or is no header value), and the error-answer hook (the engine's own
 * 400, 404, 405, 413, 414, 431, 500, 501, 503 shaped by the application). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/app.h"
#include "loop_host/loop_fake.h"

#include "app_fake_test.h"

/* The client resets: the engine closes the connection (its request, if
 * any, is over with ok false). */
static void loop_fake_close(struct loop_fake *f, int s)
{
	f->s[s].eof = true;
	loop_fake_event(f, s, LOOP_EV_READ | LOOP_EV_ERROR);
	assert_false(f->s[s].open);
}

/* ---- the application ---- */

static int done_calls, done_ok;
static struct http_app_req *held; /* /hold: a body read, answered later */
static char *held_body;

static void on_done(struct http_app_req *r, void *ctx, bool ok)
{
	(void)ctx;
	done_calls++;
	done_ok += ok;
	if (r == held)
		held = NULL;
}

/* /len: answers "LEN:BODY" once the body is in; the body is writable. */
static char answer[128];
static void got_body(struct http_app_req *r, void *ctx, char *body, size_t len)
{
	(void)ctx;
	assert_int_equal(body[len], 0);
	assert_int_equal(strlen(body), len); /* the tests send no NUL */
	if (len)
		body[0] = '#'; /* the application's to write into */
	int n = snprintf(answer, sizeof(answer), "%zu:%.60s", len, body);
	http_app_send(r, 200, answer, (size_t)n);
}

static int h_len(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	return http_app_body_read(r, 0, got_body, NULL);
}

/* /small: a route's own limit, 8 bytes. */
static int h_small(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	return http_app_body_read(r, 8, got_body, NULL);
}

static void hold_body(struct http_app_req *r, void *ctx, char *body, size_t len)
{
	(void)ctx, (void)len;
	held = r;
	held_body = body;
}

static int h_hold(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	return http_app_body_read(r, 0, hold_body, NULL);
}

/* /go/ID: a 302 whose Location is formatted; /big: a value larger than
 * the area; /bad: a format outside the subset; /crlf: CR LF in it. */
static int h_go(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	size_t n;
	const char *id = http_app_rest(r, &n);
	http_app_on_done(r, on_done, NULL);
	int rc = http_app_headerf(r, "Location", "/l/%s?n=%zu&x=%04x", id, n, 0xbeu);
	if (rc < 0)
		return http_app_send(r, 200, "short", 5); /* must never leave */
	assert_int_equal(http_app_headerf(r, "Content-Length", "%d", 1), -SK_EINVAL);
	assert_int_equal(http_app_headerf(r, "Bad Name", "%d", 1), -SK_EINVAL);
	return http_app_send(r, 302, "", 0);
}

static char big[2048];
static int h_big(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	memset(big, 'a', sizeof(big) - 1);
	assert_int_equal(http_app_headerf(r, "Location", "/%s", big), -SK_ENOBUFS);
	assert_int_equal(http_app_headerf(r, "X-After", "%d", 1), -SK_ENOBUFS);
	return http_app_send(r, 302, "", 0);
}

static int h_bad(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	assert_int_equal(http_app_headerf(r, "X-Float", "%s %f", "x", 1.5), -SK_EINVAL);
	return http_app_send(r, 200, "ok", 2);
}

static int h_crlf(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_on_done(r, on_done, NULL);
	assert_int_equal(http_app_headerf(r, "Location", "/%s", "a\r\nSet-Cookie: x"), -SK_EINVAL);
	return http_app_send(r, 302, "", 0);
}

static int h_fail(struct http_app_req *r, void *ctx)
{
	(void)r, (void)ctx;
	return -1;
}

static const struct http_app_route routes[] = {
	{HTTP_POST, "/len", false, h_len, NULL},
	{HTTP_GET, "/len", false, h_len, NULL},
	{HTTP_POST, "/small", false, h_small, NULL},
	{HTTP_POST, "/hold", false, h_hold, NULL},
	{HTTP_GET, "/go/", true, h_go, NULL},
	{HTTP_GET, "/big", false, h_big, NULL},
	{HTTP_GET, "/bad", false, h_bad, NULL},
	{HTTP_GET, "/crlf", false, h_crlf, NULL},
	{HTTP_GET, "/fail", false, h_fail, NULL},
};

static int hook_calls;
static long json_error(void *ctx, int status, char *buf, size_t cap, const char **ct)
{
	assert_ptr_equal(ctx, &hook_calls);
	assert_int_equal(cap, HTTP_APP_ERROR_BODY_MAX);
	assert_string_equal(*ct, "text/plain");
	hook_calls++;
	*ct = "application/json";
	return snprintf(buf, cap, "{\"error\":%d}\n", status);
}

static const struct http_app_def kit_app = {.routes = routes,
					    .nroutes = SK_ARRAY_LEN(routes),
					    .name = "kit",
					    .body_size = 64,
					    .body_slots = 2};

static void setup_kit(const struct http_app_def *def)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 6;
	cfg.out_size = 4096;
	cfg.max_body = 4096;
	cfg.error_log = elog_hook;
	http_app_config_fit(&cfg, def);
	setup_with(def, &cfg);
	assert_int_equal(app.cfg.body_size, def->body_size);
	done_calls = done_ok = elog_lines = hook_calls = 0;
	held = NULL;
}

/* ---- the body pool ---- */

static void test_read_every_cut(void **st)
{
	(void)st;
	setup_kit(&kit_app);
	const char *req[] = {
		"POST /len HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n{\"a\":\"bc\"}\n",
		"POST /len HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		"3\r\n{\"a\r\n8\r\n\":\"bc\"}\n\r\n0\r\n\r\n",
	};
	for (int k = 0; k < 2; k++) {
		size_t n = strlen(req[k]);
		for (size_t cut = 1; cut < n; cut++) {
			int s = conn(5);
			loop_fake_send(&fk, s, req[k], cut);
			check();
			loop_fake_send(&fk, s, req[k] + cut, n - cut);
			check();
			assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 200 "));
			assert_non_null(strstr(fk.s[s].out, "\r\n\r\n11:#\"a\":\"bc\"}\n"));
			assert_true(fk.s[s].open);
			assert_int_equal(app.slots_used, 0); /* back after on_done */
			loop_fake_close(&fk, s);
			check();
		}
	}
	/* no body: at once, "" */
	int s = conn(5);
	send_str(s, "GET /len HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "\r\n\r\n0:"));
	assert_int_equal(app.slots_used, 0);
	/* exactly the limit: taken */
	clear_out(s);
	send_str(s, "POST /small HTTP/1.1\r\nHost: a\r\nContent-Length: 8\r\n\r\n12345678");
	assert_non_null(strstr(fk.s[s].out, "\r\n\r\n8:#2345678"));
}

static void test_read_limits(void **st)
{
	(void)st;
	setup_kit(&kit_app);
	/* Content-Length over the route's limit: 413 before the body, no slot */
	int s = conn(5);
	send_str(s, "POST /small HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 413 "));
	assert_int_equal(app.slots_used, 0);
	/* over the pool's size (the app's limit) */
	s = conn(6);
	send_str(s, "POST /len HTTP/1.1\r\nHost: a\r\nContent-Length: 65\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 413 "));
	/* chunked, growing past it: 413 then, the slot back */
	s = conn(7);
	send_str(s, "POST /small HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n");
	assert_int_equal(app.slots_used, 1);
	assert_null(strstr(fk.s[s].out, "HTTP/1.1"));
	send_str(s, "5\r\n67890\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 413 "));
	loop_fake_advance(&fk, 3 * SK_NS_PER_S);
	check();
	assert_int_equal(app.slots_used, 0);
	assert_int_equal(done_ok, 0);
	assert_int_equal(done_calls, 3);
}

static void test_pool_empty(void **st)
{
	(void)st;
	setup_kit(&kit_app);
	int a = conn(5), b = conn(6), c = conn(7);
	send_str(a, "POST /hold HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc");
	send_str(b, "POST /hold HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\ndef");
	assert_int_equal(app.slots_used, 2);
	struct http_app_req *rb = held;
	assert_string_equal(held_body, "def");
	/* both slots held: the third gets 503, counted */
	send_str(c, "POST /len HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nghi");
	assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 503 "));
	assert_int_equal(stat_of("http.body_pool_empty"), 1);
	/* an answer frees its slot after on_done; the peer going away too */
	http_app_send(rb, 200, "held", 4);
	check();
	assert_int_equal(app.slots_used, 1);
	loop_fake_close(&fk, a);
	check();
	assert_int_equal(app.slots_used, 0);
	int d = conn(8);
	send_str(d, "POST /len HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyz");
	assert_non_null(strstr(fk.s[d].out, "\r\n\r\n3:#yz"));
	http_app_stop(&app);
	assert_int_equal(app.slots_used, 0);
	/* no pool: the read is refused, the handler's < 0 is a 500 */
	struct http_app_def nopool = kit_app;
	nopool.body_size = 0;
	setup_kit(&nopool);
	int e = conn(5);
	send_str(e, "POST /len HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyz");
	assert_non_null(strstr(fk.s[e].out, "HTTP/1.1 500 "));
}

static void test_config_fit_pool(void **st)
{
	(void)st;
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	size_t base = http_app_mem_size(&cfg);
	struct http_app_def d = {.body_size = 1000};
	http_app_config_fit(&cfg, &d);
	assert_int_equal(cfg.body_size, 1000);
	assert_int_equal(cfg.body_slots, 16); /* the default */
	assert_int_equal(http_app_mem_size(&cfg), base + 16 * 1008);
	d.body_slots = 40;
	http_app_config_fit(&cfg, &d);
	assert_int_equal(cfg.body_slots, 40);
	d.body_size = 10, d.body_slots = 2; /* never lowered */
	http_app_config_fit(&cfg, &d);
	assert_int_equal(cfg.body_size, 1000);
	assert_int_equal(cfg.body_slots, 40);
	cfg.body_size = (1u << 26) + 1;
	assert_int_equal(http_app_mem_size(&cfg), 0);
}

/* ---- http_app_headerf ---- */

static void test_headerf(void **st)
{
	(void)st;
	setup_kit(&kit_app);
	int s = conn(5);
	send_str(s, "GET /go/abc HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 302 "));
	assert_non_null(strstr(fk.s[s].out, "\r\nLocation: /l/abc?n=3&x=00be\r\n"));
	assert_true(fk.s[s].open);
	/* too large: the 500, never a 302 without Location */
	clear_out(s);
	send_str(s, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 500 "));
	assert_null(strstr(fk.s[s].out, " 302 "));
	assert_non_null(strstr(fk.s[s].out, "Connection: close\r\n"));
	assert_int_equal(stat_of("http.header_overflow"), 1);
	assert_int_equal(elog_lines, 1);
	assert_string_equal(elog_key, "http.header_overflow");
	assert_non_null(strstr(elog_msg, "'Location'"));
	/* a format outside the subset, and CR LF in the value: 500, counted */
	s = conn(6);
	send_str(s, "GET /bad HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 500 "));
	assert_null(strstr(fk.s[s].out, "ok"));
	s = conn(7);
	send_str(s, "GET /crlf HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 500 "));
	assert_null(strstr(fk.s[s].out, "Set-Cookie"));
	assert_int_equal(stat_of("http.header_invalid"), 2);
	assert_string_equal(elog_key, "http.header_invalid");
	assert_int_equal(elog_lines, 3);
}

/* ---- the error-answer hook ---- */

static void expect_json(int s, int status)
{
	char want[64];
	snprintf(want, sizeof(want), "HTTP/1.1 %d ", status);
	if (!strstr(fk.s[s].out, want))
		fprintf(stderr, "want %d, got: %.300s\n", status, fk.s[s].out);
	assert_non_null(strstr(fk.s[s].out, want));
	assert_non_null(strstr(fk.s[s].out, "\r\nContent-Type: application/json\r\n"));
	snprintf(want, sizeof(want), "\r\n\r\n{\"error\":%d}\n", status);
	assert_non_null(strstr(fk.s[s].out, want));
	snprintf(want, sizeof(want), "Content-Length: %zu\r\n", strlen(want) - 4);
	assert_non_null(strstr(fk.s[s].out, want));
}

static void test_error_hook(void **st)
{
	(void)st;
	struct http_app_def d = kit_app;
	d.error_answer = json_error;
	d.error_answer_ctx = &hook_calls;
	setup_kit(&d);
	struct {
		const char *req;
		int status;
	} cases[] = {
		{"GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n", 404},
		{"DELETE /len HTTP/1.1\r\nHost: a\r\n\r\n", 405},
		{"POST /small HTTP/1.1\r\nHost: a\r\nContent-Length: 99\r\n\r\n", 413},
		{"GET /fail HTTP/1.1\r\nHost: a\r\n\r\n", 500},
		{"BREW /len HTTP/1.1\r\nHost: a\r\n\r\n", 501},
		{"GET /a b c\r\n\r\n", 400},
		{"GET /big HTTP/1.1\r\nHost: a\r\n\r\n", 500},
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(cases); i++) {
		int s = conn(5);
		send_str(s, cases[i].req);
		expect_json(s, cases[i].status);
		if (cases[i].status == 405)
			assert_non_null(strstr(fk.s[s].out, "\r\nAllow: POST, GET\r\n"));
		loop_fake_close(&fk, s);
		check();
	}
	/* 414 and 431: a target and a header line past the parser's limits */
	static char longreq[20000];
	int n = snprintf(longreq, sizeof(longreq), "GET /");
	memset(longreq + n, 'a', 9000);
	snprintf(longreq + n + 9000, sizeof(longreq) - (size_t)n - 9000, " HTTP/1.1\r\n\r\n");
	int s = conn(5);
	send_str(s, longreq);
	expect_json(s, 414);
	loop_fake_close(&fk, s);
	n = snprintf(longreq, sizeof(longreq), "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < 101; i++) /* over HTTP_MAX_FIELDS */
		n += snprintf(longreq + n, sizeof(longreq) - (size_t)n, "X-%d: b\r\n", i);
	snprintf(longreq + n, sizeof(longreq) - (size_t)n, "\r\n");
	s = conn(5);
	send_str(s, longreq);
	expect_json(s, 431);
	loop_fake_close(&fk, s);
	/* 503: every connection state taken */
	for (int i = 0; i < 6; i++)
		conn(8 + i);
	s = conn(15);
	expect_json(s, 503);
	assert_false(fk.s[s].open);
	assert_true(hook_calls >= 10);
}

/* A hook that declines (< 0), lies about its length or names a bad type:
 * the engine's own plain text. */
static int decline_mode;
static long odd_error(void *ctx, int status, char *buf, size_t cap, const char **ct)
{
	(void)ctx, (void)status, (void)buf;
	if (decline_mode == 0)
		return -1;
	if (decline_mode == 1)
		return (long)cap + 1;
	*ct = "text/x\r\nSet-Cookie: a";
	return 2;
}

static void test_error_hook_declines(void **st)
{
	(void)st;
	struct http_app_def d = kit_app;
	d.error_answer = odd_error;
	setup_kit(&d);
	for (decline_mode = 0; decline_mode < 3; decline_mode++) {
		int s = conn(5);
		send_str(s, "GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n");
		assert_non_null(strstr(fk.s[s].out, "HTTP/1.1 404 "));
		assert_non_null(strstr(fk.s[s].out, "Content-Type: text/plain\r\n"));
		assert_null(strstr(fk.s[s].out, "Set-Cookie"));
		loop_fake_close(&fk, s);
		check();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_every_cut),
		cmocka_unit_test(test_read_limits),
		cmocka_unit_test(test_pool_empty),
		cmocka_unit_test(test_config_fit_pool),
		cmocka_unit_test(test_headerf),
		cmocka_unit_test(test_error_hook),
		cmocka_unit_test(test_error_hook_declines),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(mem);
	return rc;
}
