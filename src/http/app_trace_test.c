/* app_trace_test.c — --trace in the application engine (http_app_config.trace,
 * base/hist.h) on the fake loop: which answers are a sample of each stage,
 * with a counter of the test's own that moves only when the test says so,
 * so a sample's value is known. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "http/app.h"
#include "loop_host/loop_fake.h"

static struct loop_fake fk;
static struct http_app app;
static void *mem;
static struct sk_trace tr;

/* The counter: each read returns `cyc`, then adds `step` to it. */
static uint64_t cyc, step;

static uint64_t fake_cycles(void)
{
	uint64_t v = cyc;
	cyc += step;
	return v;
}

static struct http_app_req *later; /* /later: answered by the test */

static int h_hello(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	return http_app_send(r, 200, "hi\n", 3);
}

static int h_later(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	later = r;
	return 0;
}

static const struct http_app_route routes[] = {
	{HTTP_GET, "/hello", false, h_hello, NULL},
	{HTTP_GET, "/later", false, h_later, NULL},
};
static const struct http_app_def def = {.routes = routes, .nroutes = SK_ARRAY_LEN(routes),
					.name = "trace"};

static void setup(struct sk_trace *t)
{
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	memset(&tr, 0, sizeof(tr));
	tr.cycles = fake_cycles;
	cyc = 1000;
	step = 0;
	later = NULL;
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 4096;
	cfg.trace = t;
	size_t sz = http_app_mem_size(&cfg);
	assert_true(sz > 0);
	free(mem);
	mem = calloc(1, sz);
	assert_int_equal(http_app_init(&app, mem, sz, &cfg, &def, &fk.base), 0);
	http_app_set_date(&app, "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_int_equal(http_app_start(&app), 0);
}

static void send_str(int s, const char *d)
{
	loop_fake_send(&fk, s, d, strlen(d));
	assert_int_equal(http_app_check(&app), 0);
}

static uint64_t n(enum sk_trace_stage s)
{
	return tr.h[s].count;
}

/* Keep-alive requests are a sample each; the connection is one at its
 * close, with the cancel of its armed timer; the loop's stages are the
 * runner's and TCP's, not the engine's. */
static void test_keepalive(void **st)
{
	(void)st;
	setup(&tr);
	step = 10;
	loop_fake_connect(&fk, 2);
	assert_true(n(SK_TR_timer_arm) >= 1); /* the header timeout, at the accept */
	for (int i = 0; i < 5; i++)
		send_str(2, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 200"));
	assert_int_equal(n(SK_TR_http_request), 5);
	/* a 404 is an answer that keeps the connection: a sample too */
	send_str(2, "GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(n(SK_TR_http_request), 6);
	assert_int_equal(n(SK_TR_conn), 0);
	loop_fake_eof(&fk, 2);
	assert_false(fk.s[2].open);
	assert_int_equal(n(SK_TR_conn), 1);
	assert_int_equal(n(SK_TR_timer_cancel), 1);
	assert_true(tr.h[SK_TR_conn].min > tr.h[SK_TR_http_request].max);
	static const enum sk_trace_stage loop_stages[] = {SK_TR_rx_sync, SK_TR_ring_rx,
							 SK_TR_ring_tx, SK_TR_tcp_in,
							 SK_TR_tcp_out, SK_TR_park_wake};
	for (size_t i = 0; i < SK_ARRAY_LEN(loop_stages); i++)
		assert_int_equal(n(loop_stages[i]), 0);
}

/* Not a sample: an answer that closes (Connection: close), an engine
 * error (400); the parse of a head cut in two is one sample, from the
 * parse that found it complete. */
static void test_not_samples(void **st)
{
	(void)st;
	setup(&tr);
	step = 1;
	loop_fake_connect(&fk, 2);
	send_str(2, "GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 200"));
	assert_int_equal(n(SK_TR_http_request), 0);
	loop_fake_connect(&fk, 3);
	send_str(3, "GET /hello HTTP/1.1\nHost: a\r\n\r\n");
	assert_non_null(strstr(fk.s[3].out, "HTTP/1.1 400"));
	assert_int_equal(n(SK_TR_http_request), 0);
	loop_fake_connect(&fk, 4);
	send_str(4, "GET /hello HTTP/1.1\r\nHo");
	send_str(4, "st: a\r\n\r\n");
	assert_int_equal(n(SK_TR_http_request), 1);
}

/* An answer given later: its sample is elapsed time, from the parse to
 * the write of the answer, the wait included. */
static void test_later(void **st)
{
	(void)st;
	setup(&tr);
	loop_fake_connect(&fk, 2);
	send_str(2, "GET /later HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_non_null(later);
	assert_int_equal(n(SK_TR_http_request), 0);
	cyc += 1000000;
	assert_int_equal(http_app_send(later, 200, "ok\n", 3), 0);
	assert_int_equal(n(SK_TR_http_request), 1);
	assert_true(tr.h[SK_TR_http_request].min == 1000000);
}

/* Off: nothing is recorded and the counter is never read. */
static void test_off(void **st)
{
	(void)st;
	setup(NULL);
	step = 1;
	loop_fake_connect(&fk, 2);
	send_str(2, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
	loop_fake_eof(&fk, 2);
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 200"));
	assert_int_equal(cyc, 1000);
	for (int s = 0; s < SK_TR_N; s++)
		assert_int_equal(n((enum sk_trace_stage)s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_not_samples),
		cmocka_unit_test(test_later),
		cmocka_unit_test(test_off),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(mem);
	return rc;
}
