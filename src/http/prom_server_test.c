/* prom_server_test.c — GET /metrics on the loop API (the unikernel's
 * metrics= port) on the fake loop: an answer and a close, a head cut in
 * two, HEAD, a partial write resumed, the connection limit, the timeout
 * of a client that never finishes, and the counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/prom_server.h"
#include "loop_host/loop_fake.h"

static struct loop_fake fk;
static struct prom_server ps;
static char mem[2 * (8192 + PROM_HEAD_MAX)];
static uint64_t fills;

static void fill(void *ctx, struct prom_out *o)
{
	(void)ctx;
	fills++;
	prom_stat(o, "http.requests", 7);
	prom_stat(o, "http.conns_open", 1);
	prom_stat(o, "tcp_seg_in", 9);
}

static void start(void)
{
	loop_fake_init(&fk, SK_NS_PER_S);
	fills = 0;
	assert_int_equal(prom_server_start(&ps, &fk.base, 9100, mem, sizeof(mem), fill, NULL), 0);
}

static const char GET[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

static void test_answer_and_close(void **state)
{
	(void)state;
	start();
	loop_fake_connect(&fk, 2);
	loop_fake_send(&fk, 2, GET, 20); /* a head cut in two: no answer yet */
	assert_int_equal(fk.s[2].out_len, 0);
	loop_fake_send(&fk, 2, GET + 20, strlen(GET) - 20);
	const char *out = fk.s[2].out;
	assert_true(!strncmp(out, "HTTP/1.1 200 OK\r\n", 17));
	assert_non_null(strstr(out, "Content-Type: " PROM_CONTENT_TYPE "\r\n"));
	assert_non_null(strstr(out, "Connection: close\r\n"));
	const char *body = strstr(out, "\r\n\r\n") + 4;
	assert_non_null(strstr(body, "skiff_http_requests_total 7\n"));
	char want[64];
	snprintf(want, sizeof(want), "Content-Length: %zu\r\n", strlen(body));
	assert_non_null(strstr(out, want));
	assert_true(fk.s[2].shut && !fk.s[2].open);
	assert_int_equal(fills, 1);
	assert_int_equal(ps.scrapes, 1);
}

static void test_head_404_405(void **state)
{
	(void)state;
	start();
	loop_fake_connect(&fk, 2);
	loop_fake_send(&fk, 2, "HEAD /metrics HTTP/1.0\r\n\r\n", 26);
	assert_true(!strncmp(fk.s[2].out, "HTTP/1.1 200 OK\r\n", 17));
	assert_string_equal(strstr(fk.s[2].out, "\r\n\r\n"), "\r\n\r\n"); /* no body */
	loop_fake_connect(&fk, 3);
	loop_fake_send(&fk, 3, "GET /x HTTP/1.0\r\n\r\n", 19);
	assert_true(!strncmp(fk.s[3].out, "HTTP/1.1 404 ", 13));
	loop_fake_connect(&fk, 4);
	loop_fake_send(&fk, 4, "PUT /metrics HTTP/1.0\r\n\r\n", 25);
	assert_true(!strncmp(fk.s[4].out, "HTTP/1.1 405 ", 13));
	assert_non_null(strstr(fk.s[4].out, "Allow: GET, HEAD\r\n"));
	assert_int_equal(fills, 1); /* only the 200 formats the counters */
}

/* A client that sends its request and closes its side at once still
 * gets the answer; one that closes with half a head is closed. */
static void test_eof(void **state)
{
	(void)state;
	start();
	loop_fake_connect(&fk, 2);
	loop_fake_push(&fk, 2, GET, strlen(GET));
	loop_fake_eof(&fk, 2);
	assert_true(!strncmp(fk.s[2].out, "HTTP/1.1 200 OK\r\n", 17));
	loop_fake_connect(&fk, 3);
	loop_fake_send(&fk, 3, GET, 10);
	loop_fake_eof(&fk, 3);
	assert_int_equal(fk.s[3].out_len, 0);
	assert_true(!fk.s[3].open);
}

static void test_partial_write(void **state)
{
	(void)state;
	start();
	loop_fake_connect(&fk, 2);
	fk.s[2].write_room = 10;
	loop_fake_send(&fk, 2, GET, strlen(GET));
	assert_int_equal(fk.s[2].out_len, 10);
	assert_true(fk.s[2].open);
	fk.s[2].write_room = SIZE_MAX;
	loop_fake_event(&fk, 2, LOOP_EV_WRITE);
	assert_non_null(strstr(fk.s[2].out, "skiff_http_requests_total 7\n"));
	assert_true(!fk.s[2].open);
}

static void test_limit_and_timeout(void **state)
{
	(void)state;
	start();
	/* Two clients that send nothing hold both slots: a third is closed. */
	loop_fake_connect(&fk, 2);
	loop_fake_connect(&fk, 3);
	loop_fake_connect(&fk, 4);
	assert_true(fk.s[2].open && fk.s[3].open && !fk.s[4].open);
	assert_int_equal(ps.refused, 1);
	/* After the timeout both are dropped, and a new client is served. */
	loop_fake_advance(&fk, PROM_SERVER_TIMEOUT_NS + SK_NS_PER_S);
	assert_true(!fk.s[2].open && !fk.s[3].open);
	assert_int_equal(ps.errors, 2);
	loop_fake_connect(&fk, 5);
	loop_fake_send(&fk, 5, GET, strlen(GET));
	assert_true(!strncmp(fk.s[5].out, "HTTP/1.1 200 OK\r\n", 17));
}

static void test_too_small(void **state)
{
	(void)state;
	loop_fake_init(&fk, 0);
	assert_int_equal(prom_server_start(&ps, &fk.base, 9100, mem, 100, fill, NULL), -SK_EINVAL);
	/* A body that does not fit: 500, not a cut exposition. */
	static char tiny[2 * (2 * PROM_HEAD_MAX)]; /* the least it takes: 256 B of body */
	assert_int_equal(prom_server_start(&ps, &fk.base, 9100, tiny, sizeof(tiny), fill, NULL), 0);
	loop_fake_connect(&fk, 2);
	loop_fake_send(&fk, 2, GET, strlen(GET));
	assert_true(!strncmp(fk.s[2].out, "HTTP/1.1 500 ", 13));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_and_close), cmocka_unit_test(test_head_404_405),
		cmocka_unit_test(test_partial_write),    cmocka_unit_test(test_limit_and_timeout),
		cmocka_unit_test(test_too_small),        cmocka_unit_test(test_eof),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
