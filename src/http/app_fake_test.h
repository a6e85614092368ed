/* app_fake_test.h — the application engine (http/app.h) on the fake loop
 * (loop_host/loop_fake.h), as the engine's unit tests drive it: one engine,
 * its memory, a fixed Date, and the small steps every test takes (connect,
 * send, check the invariants, clear the output, read a counter, catch the
 * error log).  Written once for app_test.c and app_kit_test.c.
 *
 * Test code only: static functions with cmocka's asserts, included after
 * cmocka.h.  Each test file has one engine: `app` on `fk`. */
#ifndef HTTP_APP_FAKE_TEST_H
#define HTTP_APP_FAKE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/app.h"
#include "loop_host/loop_fake.h"

#define APP_TEST_FAKE static __attribute__((unused))

static struct loop_fake fk;
static struct http_app app;
static void *mem;

/* A fresh fake loop and engine for def with cfg (fitted by the caller if
 * it wants), started, its Date fixed. */
APP_TEST_FAKE void setup_with(const struct http_app_def *def, struct http_app_config *cfg)
{
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	size_t sz = http_app_mem_size(cfg);
	assert_true(sz > 0);
	free(mem);
	mem = calloc(1, sz);
	assert_int_equal(http_app_init(&app, mem, sz, cfg, def, &fk.base), 0);
	http_app_set_date(&app, "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_int_equal(http_app_start(&app), 0);
}

/* The engine's invariants hold (after every step). */
APP_TEST_FAKE void check(void)
{
	assert_int_equal(http_app_check(&app), 0);
}

APP_TEST_FAKE void send_bytes(int s, const void *d, size_t n)
{
	loop_fake_send(&fk, s, d, n);
	check();
}

APP_TEST_FAKE void send_str(int s, const char *d)
{
	send_bytes(s, d, strlen(d));
}

APP_TEST_FAKE int conn(int s)
{
	loop_fake_connect(&fk, s);
	check();
	return s;
}

APP_TEST_FAKE void clear_out(int s)
{
	fk.s[s].out_len = 0;
	fk.s[s].out[0] = 0;
}

/* The error log hook: the last line and how many came. */
static char elog_key[64], elog_msg[300];
static int elog_lines;

APP_TEST_FAKE void elog_hook(void *ctx, const char *key, const char *msg)
{
	(void)ctx;
	elog_lines++;
	snprintf(elog_key, sizeof(elog_key), "%s", key);
	snprintf(elog_msg, sizeof(elog_msg), "%s", msg);
}

struct stat_q {
	const char *name;
	uint64_t v;
	bool seen;
};

APP_TEST_FAKE void stat_cb(void *ctx, const char *name, uint64_t v)
{
	struct stat_q *q = ctx;
	if (!strcmp(name, q->name)) {
		q->v = v;
		q->seen = true;
	}
}

/* The engine's counter `want` (the test fails when it has none). */
APP_TEST_FAKE uint64_t stat_of(const char *want)
{
	struct stat_q q = {want, 0, false};
	http_app_stats(&app, stat_cb, &q);
	assert_true(q.seen);
	return q.v;
}

#endif
