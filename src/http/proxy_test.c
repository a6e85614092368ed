/* proxy_test.c — the proxy's exchanges (http/proxy.c) on the fake loop:
 * clients on sockets 2.., upstream connections from socket 10 on, time
 * moved by hand.  proxy_check and http_app_check after every step.
 * Covered: forwarding and the pool (the second request reuses the
 * connection), a pooled connection found closed (retried on a fresh one),
 * a chunked answer fed one byte at a time, ambiguous framing (502), the
 * first-byte timeout (504), an origin dying mid-body (the client is cut),
 * a client that reads nothing (the proxy stops reading its origin),
 * PURGE (allowed, denied, off; never upstream), and a body on GET, HEAD,
 * DELETE, OPTIONS or TRACE (400, no upstream connection, not from the
 * cache; forwarded and uncached with body_on_get). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/cache.h"
#include "http/proxy.h"
#include "loop_host/loop_fake.h"

#define UP0 10

static struct loop_fake fk;
static struct http_app app;
static struct proxy px;
static struct http_app_def def;
static struct http_app_route route;
static void *amem, *pmem;

static void check(void)
{
	assert_int_equal(http_app_check(&app), 0);
	assert_int_equal(proxy_check(&px), 0);
}

static uint32_t rx_size = 32768;

static void setup(void)
{
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	fk.connect_next = UP0;
	struct proxy_config pc;
	proxy_config_default(&pc);
	pc.nup = 1;
	pc.up_addr[0] = sk_addr_v4(SK_IP4(127, 0, 0, 1));
	pc.up_port[0] = 8080;
	pc.max_xchg = 4;
	pc.pool = 2;
	pc.first_byte_timeout = 5 * SK_NS_PER_S;
	pc.rx_size = rx_size;
	size_t ps = proxy_mem_size(&pc);
	free(pmem);
	pmem = calloc(1, ps);
	assert_int_equal(proxy_init(&px, pmem, ps, &pc), 0);
	struct http_app_config ac;
	http_app_config_default(&ac);
	ac.max_conns = 4;
	proxy_app_config(&px, &ac);
	proxy_app_def(&px, &def, &route);
	size_t as = http_app_mem_size(&ac);
	free(amem);
	amem = calloc(1, as);
	assert_int_equal(http_app_init(&app, amem, as, &ac, &def, &fk.base), 0);
	assert_int_equal(http_app_start(&app), 0);
}

static void send_str(int s, const char *d)
{
	loop_fake_send(&fk, s, d, strlen(d));
	check();
}

static void clear(int s)
{
	fk.s[s].out_len = 0;
	fk.s[s].out[0] = 0;
}

static void test_forward_and_pool(void **st)
{
	(void)st;
	setup();
	loop_fake_connect(&fk, 2);
	send_str(2, "GET /a?b HTTP/1.1\r\nHost: h\r\nConnection: X-S\r\nX-S: 1\r\n\r\n");
	assert_true(fk.s[UP0].open);
	assert_int_equal(fk.s[UP0].connect_port, 8080);
	assert_int_equal(fk.s[UP0].out_len, 0); /* still connecting */
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	check();
	const char *up = fk.s[UP0].out;
	assert_non_null(strstr(up, "GET /a?b HTTP/1.1\r\nHost: h\r\n"));
	assert_non_null(strstr(up, "X-Forwarded-For: 198.18.0.1\r\n"));
	assert_null(strstr(up, "X-S"));
	send_str(UP0, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-O: 1\r\n\r\nhello");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(fk.s[2].out, "X-O: 1\r\nVia: 1.1 skiff\r\n"));
	assert_non_null(strstr(fk.s[2].out, "Content-Length: 5\r\n\r\nhello"));
	/* the second request goes on the pooled connection */
	clear(2);
	clear(UP0);
	send_str(2, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[UP0].out, "GET /b HTTP/1.1"));
	assert_int_equal(fk.connect_next, UP0 + 1);
	send_str(UP0, "HTTP/1.1 204 No Content\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 204"));
	assert_int_equal(px.st.up_reused, 1);
	/* the pooled connection is closed by the origin: the next GET is
	 * retried on a fresh one */
	clear(2);
	send_str(2, "GET /c HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_eof(&fk, UP0);
	check();
	assert_true(fk.s[UP0 + 1].open);
	loop_fake_event(&fk, UP0 + 1, LOOP_EV_WRITE);
	check();
	assert_non_null(strstr(fk.s[UP0 + 1].out, "GET /c HTTP/1.1"));
	send_str(UP0 + 1, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	assert_non_null(strstr(fk.s[2].out, "\r\n\r\nok"));
	assert_int_equal(px.st.retries, 1);
	assert_int_equal(px.up[0].failures, 0); /* a stale pooled one is not the origin's fault */
}

static void test_chunked_every_byte(void **st)
{
	(void)st;
	setup();
	loop_fake_connect(&fk, 2);
	send_str(2, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	const char *r = "HTTP/1.1 103 Early\r\nLink: x\r\n\r\n"
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n";
	for (size_t i = 0; r[i]; i++) {
		loop_fake_send(&fk, UP0, r + i, 1);
		check();
	}
	const char *out = fk.s[2].out;
	assert_null(strstr(out, "103"));
	assert_non_null(strstr(out, "Transfer-Encoding: chunked\r\n\r\n"));
	/* re-chunked as the pieces came: the data is abcde, then the end */
	char data[64] = {0};
	const char *b = strstr(out, "\r\n\r\n") + 4;
	size_t dl = 0;
	while (*b) {
		unsigned n = (unsigned)strtoul(b, NULL, 16);
		b = strstr(b, "\r\n") + 2;
		if (!n)
			break;
		memcpy(data + dl, b, n);
		dl += n;
		b += n + 2;
	}
	assert_string_equal(data, "abcde");
	assert_true(fk.s[2].open);
	assert_true(fk.s[UP0].open); /* pooled */
}

static void test_errors(void **st)
{
	(void)st;
	setup();
	loop_fake_connect(&fk, 2);
	send_str(2, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	send_str(UP0, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 502"));
	assert_false(fk.s[UP0].open);
	/* first-byte timeout: 504 */
	loop_fake_connect(&fk, 3);
	send_str(3, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_event(&fk, UP0 + 1, LOOP_EV_WRITE);
	loop_fake_advance(&fk, 4 * SK_NS_PER_S);
	check();
	assert_int_equal(fk.s[3].out_len, 0);
	loop_fake_advance(&fk, 2 * SK_NS_PER_S);
	check();
	assert_non_null(strstr(fk.s[3].out, "HTTP/1.1 504"));
	/* dies inside a body: the client's connection is cut */
	loop_fake_connect(&fk, 4);
	send_str(4, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_event(&fk, UP0 + 2, LOOP_EV_WRITE);
	send_str(UP0 + 2, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
	loop_fake_eof(&fk, UP0 + 2);
	check();
	assert_false(fk.s[4].open);
	assert_int_equal(px.st.up_died, 1);
	/* a POST whose origin refuses: 502, not retried */
	loop_fake_connect(&fk, 5);
	send_str(5, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi");
	fk.s[UP0 + 3].eof = true;
	loop_fake_event(&fk, UP0 + 3, LOOP_EV_READ | LOOP_EV_ERROR);
	check();
	assert_non_null(strstr(fk.s[5].out, "HTTP/1.1 502"));
	assert_int_equal(px.st.retries, 0);
}

static void test_slow_client(void **st)
{
	(void)st;
	rx_size = HTTP_HEAD_MAX + 1024u; /* rx + the client's output < the body */
	setup();
	rx_size = 32768;
	loop_fake_connect(&fk, 2);
	send_str(2, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	fk.s[2].write_room = 0; /* the client reads nothing */
	static char body[60000];
	memset(body, 'x', sizeof(body));
	send_str(UP0, "HTTP/1.1 200 OK\r\nContent-Length: 60000\r\n\r\n");
	loop_fake_push(&fk, UP0, body, sizeof(body));
	loop_fake_event(&fk, UP0, LOOP_EV_READ);
	check();
	/* the proxy took at most its buffers' worth and stopped reading */
	size_t unread = fk.s[UP0].in_len - fk.s[UP0].in_pos;
	assert_true(unread > 0);
	/* the client reads again: everything moves */
	fk.s[2].write_room = SIZE_MAX;
	for (int i = 0; i < 10 && fk.s[UP0].in_pos < fk.s[UP0].in_len; i++) {
		loop_fake_event(&fk, 2, LOOP_EV_WRITE);
		check();
	}
	assert_int_equal(fk.s[UP0].in_pos, fk.s[UP0].in_len);
	assert_int_equal(fk.s[2].out_bytes, fk.s[2].out_len);
	const char *b = strstr(fk.s[2].out, "\r\n\r\n") + 4;
	assert_int_equal((size_t)(fk.s[2].out + fk.s[2].out_len - b), sizeof(body));
}

/* --cache: a MISS fills, two clients asking while it fills wait on it
 * (one upstream request), then everyone gets the stored answer. */
static void test_cache_coalesce(void **st)
{
	(void)st;
	setup();
	static struct http_cache hc;
	static uint8_t cmem[256 * 1024];
	struct http_cache_config cc;
	http_cache_config_default(&cc);
	assert_int_equal(http_cache_init(&hc, cmem, sizeof(cmem), &cc), 0);
	px.cache = &hc;
	px.cfg.wall_offset = 1700000000;
	for (int c = 2; c <= 4; c++) {
		loop_fake_connect(&fk, c);
		send_str(c, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	}
	assert_true(fk.s[UP0].open);
	assert_false(fk.s[UP0 + 1].open); /* one upstream request for three */
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	send_str(UP0, "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 4\r\n\r\nbody");
	for (int c = 2; c <= 4; c++) {
		assert_non_null(strstr(fk.s[c].out, "\r\n\r\nbody"));
		assert_non_null(strstr(fk.s[c].out, c == 2 ? "X-Cache: MISS" : "X-Cache: HIT"));
	}
	/* and later from memory */
	clear(2);
	send_str(2, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "X-Cache: HIT"));
	assert_false(fk.s[UP0 + 1].open);
	assert_int_equal(hc.st.coalesced, 2);
	assert_int_equal(http_cache_check(&hc), 0);
	http_app_stop(&app);
	proxy_stop(&px);
	assert_int_equal(http_cache_check(&hc), 0);
	px.cache = NULL;
}

/* PURGE: answered by the proxy, never forwarded; the fake loop's client
 * is 198.18.0.1, outside the default (loopback) list. */
static void test_purge(void **st)
{
	(void)st;
	setup();
	static struct http_cache hc;
	static uint8_t cmem[256 * 1024];
	struct http_cache_config cc;
	http_cache_config_default(&cc);
	assert_int_equal(http_cache_init(&hc, cmem, sizeof(cmem), &cc), 0);
	px.cache = &hc;
	px.cfg.wall_offset = 1700000000;
	loop_fake_connect(&fk, 2);
	/* two variants of /v stored */
	const char *ae[2] = {"gzip", "br"};
	for (int i = 0; i < 2; i++) { /* the second on the pooled connection */
		char rq[128];
		snprintf(rq, sizeof(rq), "GET /v HTTP/1.1\r\nHost: h\r\nAccept-Encoding: %s\r\n\r\n",
			 ae[i]);
		clear(2);
		send_str(2, rq);
		if (i == 0)
			loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
		check();
		send_str(UP0, "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nVary: Accept-Encoding\r\n"
			     "Content-Length: 2\r\n\r\nok");
		assert_non_null(strstr(fk.s[2].out, "X-Cache: MISS"));
	}
	assert_int_equal(hc.st.entries, 2);
	int next = fk.connect_next;
	clear(UP0);
	/* not from 198.18.0.1: 403, nothing purged, counted */
	clear(2);
	send_str(2, "PURGE /v HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 403 "));
	assert_int_equal(px.st.purge_denied, 1);
	assert_int_equal(hc.st.entries, 2);
	assert_int_equal(hc.st.purges, 0);
	/* allowed: 198.18.0.0/24 */
	px.cfg.purge_allow[0] = (struct proxy_prefix){sk_addr_v4(SK_IP4(198, 18, 0, 0)), 96 + 24};
	px.cfg.npurge_allow = 1;
	clear(2);
	send_str(2, "PURGE /v HTTP/1.1\r\nHost: H\r\n\r\n"); /* Host compares case-blind */
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 200 "));
	assert_non_null(strstr(fk.s[2].out, "X-Purged: 2\r\n"));
	assert_int_equal(hc.st.entries, 0);
	assert_int_equal(hc.st.purges, 1);
	clear(2);
	send_str(2, "PURGE /v HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 404 "));
	assert_int_equal(hc.st.purges, 2);
	/* off: 405 with Allow */
	px.cfg.npurge_allow = 0;
	clear(2);
	send_str(2, "PURGE /v HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 405 "));
	assert_non_null(strstr(fk.s[2].out, "\r\nAllow: GET, HEAD"));
	/* none of these went upstream; the connection still carries a GET */
	assert_int_equal(fk.connect_next, next);
	assert_int_equal(fk.s[UP0].out_len, 0);
	clear(2);
	send_str(2, "GET /v HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n");
	assert_non_null(strstr(fk.s[UP0].out, "GET /v HTTP/1.1")); /* purged: a MISS again */
	assert_int_equal(px.st.purge_denied, 1);
	http_app_stop(&app);
	proxy_stop(&px);
	assert_int_equal(http_cache_check(&hc), 0);
	px.cache = NULL;
}

#define SMUGGLED "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n" /* 35 bytes */

/* A body on GET & co.: 400 before anything is taken (no exchange, no
 * upstream connection, nothing written up); the body is dropped as framed,
 * never read as a request, so the next request on the connection is the
 * one forwarded. */
static void test_body_on_get(void **st)
{
	(void)st;
	setup();
	const char *methods[] = {"GET", "HEAD", "DELETE", "OPTIONS", "TRACE"};
	for (int i = 0; i < 5; i++) {
		int c = 2 + i;
		loop_fake_connect(&fk, c);
		clear(c);
		char rq[256];
		snprintf(rq, sizeof(rq), "%s /a HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n%s",
			 methods[i], SMUGGLED);
		send_str(c, rq);
		assert_non_null(strstr(fk.s[c].out, "HTTP/1.1 400 "));
		/* the connection ends after the 400, even for a short declared
		 * body: what follows it is never taken as a request */
		assert_non_null(strstr(fk.s[c].out, "\r\nConnection: close\r\n"));
		if (i != 1) /* HEAD: the head only */
			assert_non_null(strstr(fk.s[c].out, "may not carry a body"));
		assert_null(strstr(fk.s[c].out, "HTTP/1.1 200"));
		assert_int_equal(px.st.body_on_get_refused, (uint64_t)i + 1);
		assert_int_equal(fk.connect_next, UP0); /* no upstream connection */
		clear(c);
		send_str(c, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n");
		assert_null(strstr(fk.s[c].out, "HTTP/1.1"));
		loop_fake_eof(&fk, c); /* the client closes too: the slot is free */
		assert_false(fk.s[c].open);
	}
	assert_int_equal(px.st.forwarded, 0);
	assert_false(fk.s[UP0].open);
	/* a new connection's request is the one forwarded */
	loop_fake_connect(&fk, 7);
	clear(7);
	send_str(7, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_true(fk.s[UP0].open);
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	check();
	assert_non_null(strstr(fk.s[UP0].out, "GET /b HTTP/1.1\r\n"));
	assert_null(strstr(fk.s[UP0].out, "/smuggled"));
	assert_null(strstr(fk.s[UP0].out, "/a "));
	send_str(UP0, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	assert_non_null(strstr(fk.s[7].out, "\r\n\r\nok"));
	/* chunked: 400 and Connection: close */
	clear(UP0);
	loop_fake_connect(&fk, 8);
	send_str(8, "GET /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "23\r\n" SMUGGLED "\r\n0\r\n\r\n");
	assert_non_null(strstr(fk.s[8].out, "HTTP/1.1 400 "));
	assert_non_null(strstr(fk.s[8].out, "\r\nConnection: close\r\n"));
	assert_int_equal(px.st.body_on_get_refused, 6);
	/* Content-Length: 0 is no body: forwarded, without the field */
	clear(7);
	send_str(7, "GET /z HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");
	assert_non_null(strstr(fk.s[UP0].out, "GET /z HTTP/1.1\r\n"));
	assert_null(strstr(fk.s[UP0].out, "Content-Length"));
	send_str(UP0, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	assert_int_equal(px.st.body_on_get_refused, 6);
	assert_int_equal(px.st.forwarded, 2);
	/* allowed (body_on_get): streamed up as a body, like a POST's */
	px.cfg.body_on_get = true;
	clear(7);
	clear(UP0);
	send_str(7, "GET /q HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n" SMUGGLED);
	assert_non_null(strstr(fk.s[UP0].out, "GET /q HTTP/1.1\r\n"));
	assert_non_null(strstr(fk.s[UP0].out, "Content-Length: 35\r\n"));
	assert_non_null(strstr(fk.s[UP0].out, "\r\n\r\n" SMUGGLED));
	send_str(UP0, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
	assert_non_null(strstr(fk.s[7].out, "\r\n\r\nok"));
	assert_int_equal(px.st.body_on_get_refused, 6);
	http_app_stop(&app);
	proxy_stop(&px);
}

/* With the cache: a stored answer is not served to a GET with a body
 * (400, before the lookup); with body_on_get such a GET bypasses the
 * cache both ways (forwarded, not stored). */
static void test_body_on_get_cache(void **st)
{
	(void)st;
	setup();
	static struct http_cache hc;
	static uint8_t cmem[256 * 1024];
	struct http_cache_config cc;
	http_cache_config_default(&cc);
	assert_int_equal(http_cache_init(&hc, cmem, sizeof(cmem), &cc), 0);
	px.cache = &hc;
	px.cfg.wall_offset = 1700000000;
	loop_fake_connect(&fk, 2);
	send_str(2, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	loop_fake_event(&fk, UP0, LOOP_EV_WRITE);
	send_str(UP0, "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 6\r\n\r\nstored");
	assert_non_null(strstr(fk.s[2].out, "X-Cache: MISS"));
	clear(2);
	send_str(2, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "X-Cache: HIT"));
	uint64_t hits = hc.st.hits;
	clear(2);
	clear(UP0);
	send_str(2, "GET /x HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n" SMUGGLED);
	assert_non_null(strstr(fk.s[2].out, "HTTP/1.1 400 "));
	assert_null(strstr(fk.s[2].out, "X-Cache"));
	assert_int_equal(hc.st.hits, hits);
	assert_int_equal(fk.s[UP0].out_len, 0);
	assert_non_null(strstr(fk.s[2].out, "\r\nConnection: close\r\n"));
	loop_fake_eof(&fk, 2);
	/* allowed: forwarded (not a HIT), and its answer is not stored */
	px.cfg.body_on_get = true;
	uint64_t stored = hc.st.stored;
	loop_fake_connect(&fk, 2);
	clear(2);
	send_str(2, "GET /x HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n" SMUGGLED);
	assert_non_null(strstr(fk.s[UP0].out, "GET /x HTTP/1.1\r\n"));
	send_str(UP0, "HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\nContent-Length: 5\r\n\r\nfresh");
	assert_non_null(strstr(fk.s[2].out, "X-Cache: MISS"));
	assert_non_null(strstr(fk.s[2].out, "\r\n\r\nfresh"));
	assert_int_equal(hc.st.hits, hits);
	assert_int_equal(hc.st.stored, stored);
	clear(2);
	send_str(2, "GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_non_null(strstr(fk.s[2].out, "\r\n\r\nstored")); /* the stored one stands */
	assert_int_equal(hc.st.hits, hits + 1);
	assert_int_equal(px.st.body_on_get_refused, 1);
	http_app_stop(&app);
	proxy_stop(&px);
	assert_int_equal(http_cache_check(&hc), 0);
	px.cache = NULL;
}

static void test_prefix_match(void **st)
{
	(void)st;
	struct proxy_config pc;
	proxy_config_default(&pc);
	assert_int_equal(pc.npurge_allow, 2);
	struct sk_addr lo = sk_addr_v4(SK_IP4(127, 1, 2, 3)), other = sk_addr_v4(SK_IP4(128, 0, 0, 1));
	struct sk_addr one = {{0}}, two = {{0}};
	one.b[15] = 1;
	two.b[15] = 2;
	assert_true(proxy_prefix_match(&pc.purge_allow[0], &lo));
	assert_false(proxy_prefix_match(&pc.purge_allow[0], &other));
	assert_false(proxy_prefix_match(&pc.purge_allow[0], &one)); /* v6 never matches a v4 prefix */
	assert_true(proxy_prefix_match(&pc.purge_allow[1], &one));
	assert_false(proxy_prefix_match(&pc.purge_allow[1], &two));
	struct proxy_prefix p = {sk_addr_v4(SK_IP4(198, 18, 0, 0)), 96 + 15};
	struct sk_addr in = sk_addr_v4(SK_IP4(198, 19, 255, 255)), out = sk_addr_v4(SK_IP4(198, 20, 0, 0));
	assert_true(proxy_prefix_match(&p, &in));
	assert_false(proxy_prefix_match(&p, &out));
	struct proxy_prefix all = {{{0}}, 0};
	assert_true(proxy_prefix_match(&all, &out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_and_pool),
		cmocka_unit_test(test_chunked_every_byte),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_slow_client),
		cmocka_unit_test(test_cache_coalesce),
		cmocka_unit_test(test_purge),
		cmocka_unit_test(test_body_on_get),
		cmocka_unit_test(test_body_on_get_cache),
		cmocka_unit_test(test_prefix_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
