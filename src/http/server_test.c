/* server_test.c — the server's state machine on the fake loop
 * (loop_host/loop_fake.h): sockets are byte queues the test fills and drains,
 * time moves only when the test says, writes can be limited to force
 * partial sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/server.h"
#include "loop_host/loop_fake.h"

static struct loop_fake fk;
static struct http_server srv;
static void *mem;

static void setup_server(struct http_server_config *cfg)
{
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	size_t sz = http_server_mem_size(cfg);
	free(mem);
	mem = calloc(1, sz);
	assert_int_equal(http_server_init(&srv, mem, sz, cfg, &fk.base), 0);
	http_server_set_date(&srv, "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_int_equal(http_server_start(&srv), 0);
}

static void setup_default(void)
{
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	cfg.max_conns = 4;
	setup_server(&cfg);
}

/* Every step below leaves the server resting: each of its invariants
 * must hold (http_server_check walks them all). */
static void check(void)
{
	assert_int_equal(http_server_check(&srv), 0);
}

/* A client connects: returns its socket. */
static int connect_client(int s)
{
	loop_fake_connect(&fk, s);
	check();
	return s;
}

static void send_str(int s, const char *data)
{
	loop_fake_send(&fk, s, data, strlen(data));
	check();
}

/* Readiness for s without new input (LOOP_EV_WRITE after write_room rose). */
static void event(int s, unsigned ev)
{
	loop_fake_event(&fk, s, ev);
	check();
}

static void peer_eof(int s)
{
	loop_fake_eof(&fk, s);
	check();
}

static void advance(sk_time_ns dt)
{
	loop_fake_advance(&fk, dt);
	check();
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

static void test_hello(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	const char *want = "HTTP/1.1 200 OK\r\nServer: skiff\r\n"
			   "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/plain\r\n"
			   "Content-Length: 41\r\n\r\n" HTTP_HELLO_BODY;
	assert_int_equal(fk.s[s].out_len, strlen(want));
	assert_memory_equal(fk.s[s].out, want, strlen(want));
	assert_int_equal(fk.s[s].writes, 1); /* head and body in one write */
	assert_true(fk.s[s].open);
	assert_false(fk.s[s].shut);
	/* keep-alive: a second request on the same connection */
	send_str(s, "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(fk.s[s].writes, 2);
	assert_int_equal(fk.s[s].out_len, 2 * strlen(want) - HTTP_HELLO_LEN);
	assert_int_equal(srv.st.resp_200, 2);
}

static void test_pipelined_one_write(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n"
		    "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHo");
	assert_int_equal(fk.s[s].writes, 1);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200"), 2);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 404"), 1);
	/* in order: 200, 404, 200 */
	char *p404 = strstr(fk.s[s].out, "HTTP/1.1 404");
	assert_non_null(p404);
	assert_non_null(strstr(p404, "HTTP/1.1 200"));
	/* the cut-off fourth request completes later */
	send_str(s, "st: a\r\n\r\n");
	assert_int_equal(fk.s[s].writes, 2);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200"), 3);
	assert_int_equal(srv.st.requests, 4);
}

static void test_connection_close(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_false(fk.s[s].open); /* drained: closed at once */
	/* HTTP/1.0: close by default, keep-alive on request */
	s = connect_client(6);
	send_str(s, "GET / HTTP/1.0\r\n\r\n");
	assert_false(fk.s[s].open);
	s = connect_client(7);
	send_str(s, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: keep-alive\r\n"));
	assert_true(fk.s[s].open);
}

static void test_bad_request_lingers(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nX : y\r\n\r\nGET / HTTP/1.1\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 400 Bad Request\r\n", 26);
	assert_non_null(strstr(fk.s[s].out, "Connection: close"));
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
	assert_true(fk.s[s].shut);
	assert_true(fk.s[s].open); /* lingering until the client closes */
	peer_eof(s);
	assert_false(fk.s[s].open);
	/* 405 for a known method, 501 for an unknown one */
	s = connect_client(6);
	send_str(s, "POST / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 405 ", 13);
	assert_non_null(strstr(fk.s[s].out, "Allow: GET, HEAD\r\n"));
	s = connect_client(7);
	send_str(s, "BREW / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 501 ", 13);
}

static void test_header_timeout(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\n");
	advance(5 * SK_NS_PER_S);
	send_str(s, "Host: a\r\n"); /* trickling does not extend the deadline */
	advance(4 * SK_NS_PER_S);
	assert_int_equal(fk.s[s].out_len, 0);
	advance(1 * SK_NS_PER_S);
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 408 ", 13);
	assert_true(fk.s[s].shut);
	advance(2 * SK_NS_PER_S); /* linger timeout */
	assert_false(fk.s[s].open);
	assert_int_equal(srv.st.timeout_header, 1);
}

static void test_idle_timeout_lazy(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	for (int i = 0; i < 5; i++) {
		send_str(s, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
		advance(30 * SK_NS_PER_S); /* each request restarts the idle clock */
	}
	assert_true(fk.s[s].open);
	assert_true(srv.st.timer_rearms > 0);
	advance(29 * SK_NS_PER_S);
	assert_true(fk.s[s].open);
	advance(2 * SK_NS_PER_S);
	assert_false(fk.s[s].open);
	assert_int_equal(srv.st.timeout_idle, 1);
	assert_int_equal(srv.st.resp_408, 0); /* idle: closed silently */
}

static void test_partial_writes(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	fk.s[s].write_room = 50;
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
	size_t first = fk.s[s].out_len;
	assert_true(first < 100);
	int guard = 0;
	while (guard++ < 100 && count(fk.s[s].out, fk.s[s].out_len, "serving you.\n") < 2) {
		fk.s[s].write_room = 50;
		event(s, LOOP_EV_WRITE);
	}
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "serving you.\n"), 2);
	assert_true(fk.s[s].open);
}

static void test_conn_limit(void **st)
{
	(void)st;
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	cfg.max_conns = 1;
	setup_server(&cfg);
	int a = connect_client(5);
	int b = connect_client(6);
	assert_true(fk.s[a].open);
	assert_false(fk.s[b].open);
	assert_memory_equal(fk.s[b].out, "HTTP/1.1 503 ", 13);
	assert_int_equal(srv.st.conns_refused, 1);
}

static void test_body_discarded(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel");
	assert_int_equal(fk.s[s].out_len, 0); /* answered once the body is in */
	send_str(s, "loGET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200"), 3);
	/* a bad chunk size: 400 instead of the answer */
	s = connect_client(6);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 400 ", 13);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
}

/* "Connection: close" (or HTTP/1.0) with a body: the body is read, then
 * answered, then the connection ends. */
static void test_close_with_body(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
		    "Content-Length: 5\r\n\r\nhel");
	assert_int_equal(fk.s[s].out_len, 0); /* answered once the body is in */
	assert_true(fk.s[s].open);
	send_str(s, "lo");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
	assert_non_null(strstr(fk.s[s].out, "\r\nConnection: close\r\n"));
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
	assert_false(fk.s[s].open); /* body read, socket drained: closed at once */
	/* Chunked, with bytes after it: answered once, then a lingering close. */
	s = connect_client(6);
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
		    "GET / HTTP/1.1\r\n\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
	assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1"), 1);
	assert_true(fk.s[s].shut);
	assert_true(fk.s[s].open);
	/* HTTP/1.0 closes by default. */
	s = connect_client(8);
	send_str(s, "GET / HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
	assert_false(fk.s[s].open);
	/* An error answer to a request with a body still comes. */
	s = connect_client(7);
	send_str(s, "POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 405 ", 13);
	assert_true(fk.s[s].shut);
}

static char last_path[256];
static const struct http_file one_file = {.data = (const uint8_t *)"abc", .len = 3, .ctype = "text/plain"};
static const struct http_file *lookup(void *ctx, const char *path, size_t len)
{
	(void)ctx;
	memcpy(last_path, path, len);
	last_path[len] = 0;
	return !strcmp(last_path, "/a b.txt") ? &one_file : NULL;
}

static void test_paths(void **st)
{
	(void)st;
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	cfg.max_conns = 8;
	cfg.lookup = lookup;
	setup_server(&cfg);
	int s = connect_client(5);
	send_str(s, "GET /a%20b.txt?q=1 HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_string_equal(last_path, "/a b.txt");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
	const char *bad[][2] = {
		{"/%2e%2e/etc/passwd", "404"}, {"/a/..", "404"},     {"/..%2fx", "404"},
		{"/%2E%2e/x", "404"},          {"/./a%20b.txt", "404"}, {"/%00", "400"},
		{"/%zz", "400"},               {"/%2", "400"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = connect_client(6 + (int)i);
		last_path[0] = 0;
		char req[256];
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			 bad[i][0]);
		send_str(s, req);
		assert_memory_equal(fk.s[s].out + 9, bad[i][1], 3);
		assert_string_equal(last_path, ""); /* never looked up */
	}
	/* absolute-form */
	s = connect_client(14);
	send_str(s, "GET http://a/a%20b.txt HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_memory_equal(fk.s[s].out, "HTTP/1.1 200 ", 13);
}

static void test_timerq(void **st)
{
	(void)st;
	struct loop_timer *heap[64];
	struct loop_timer t[64];
	struct timerq q;
	timerq_init(&q, heap, 64);
	memset(t, 0, sizeof(t));
	uint64_t x = 12345;
	for (int i = 0; i < 64; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		assert_int_equal(timerq_set(&q, &t[i], x >> 40), 0);
	}
	for (int i = 0; i < 64; i += 3)
		timerq_cancel(&q, &t[i]);
	for (int i = 1; i < 64; i += 3)
		timerq_set(&q, &t[i], (uint64_t)i * 7);
	sk_time_ns last = 0;
	int n = 0;
	struct loop_timer *p;
	while ((p = timerq_pop_due(&q, SK_TIME_NEVER - 1)) != NULL) {
		assert_true(p->deadline >= last);
		assert_int_equal(p->slot, 0);
		last = p->deadline;
		n++;
	}
	assert_int_equal(n, 64 - 22);
	assert_int_equal(timerq_next(&q), SK_TIME_NEVER);
}

/* The I/O buffer is held only while something is pending: given back after
 * a complete request is answered, kept across a partial one (and across
 * unsent output), and reused LIFO, so idle connections touch no buffer. */
static void test_buffer_only_while_pending(void **st)
{
	(void)st;
	setup_default();
	int a = connect_client(5);
	int b = connect_client(6);
	assert_int_equal(srv.bufs_held, 0); /* accepted, nothing read: none */
	send_str(a, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(srv.st.resp_200, 1);
	assert_int_equal(srv.bufs_held, 0); /* answered: back in the pool */
	/* A partial request keeps its bytes, and so its buffer. */
	send_str(a, "GET / HTTP/1.1\r\nHo");
	assert_int_equal(srv.bufs_held, 1);
	send_str(b, "GET / HTTP/1.1\r\nHost: b\r\n\r\n"); /* b borrows another */
	assert_int_equal(srv.bufs_held, 1);
	send_str(a, "st: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"); /* + a pipelined one */
	assert_int_equal(srv.st.resp_200, 4);
	assert_int_equal(srv.bufs_held, 0);
	/* Unsent output keeps the buffer (the iovs point into it). */
	fk.s[b].write_room = 20;
	send_str(b, "GET / HTTP/1.1\r\nHost: b\r\n\r\n");
	assert_int_equal(srv.bufs_held, 1);
	int guard = 0;
	while (guard++ < 100 && srv.bufs_held) {
		fk.s[b].write_room = 20;
		event(b, LOOP_EV_WRITE);
	}
	assert_int_equal(count(fk.s[b].out, fk.s[b].out_len, "serving you.\n"), 2);
	assert_int_equal(srv.bufs_held, 0);
	/* Two buffers were ever needed at once: only two were touched. */
	assert_int_equal(srv.buf_hwm, 2);
	/* The slowloris clock is unchanged: a partial head still gets its 408. */
	send_str(a, "GET / HTTP/1.1\r\n");
	advance(10 * SK_NS_PER_S);
	assert_non_null(strstr(fk.s[a].out, "HTTP/1.1 408 "));
	assert_true(fk.s[a].shut);
	assert_int_equal(srv.bufs_held, 0); /* lingering holds none */
	advance(2 * SK_NS_PER_S);
	assert_false(fk.s[a].open);
	/* A connection that never sent a byte gets its 408 too. */
	int c = connect_client(7);
	advance(10 * SK_NS_PER_S);
	assert_memory_equal(fk.s[c].out, "HTTP/1.1 408 ", 13);
	assert_int_equal(srv.bufs_held, 0);
	assert_int_equal(srv.buf_hwm, 2);
}

/* Random steps on a few connections: requests cut anywhere (good, bad,
 * with bodies, pipelined, closing), write limits, time, client EOFs, new
 * clients; every invariant is checked after every step (check() in the
 * helpers).  Deterministic: the same seed every run. */
/* ---- the access log hook ---- */

struct logged {
	char line[64], ref[64], ua[64]; /* "-" when absent */
	int status;
	uint64_t bytes;
	struct sk_addr addr;
	uint16_t port;
};
static struct logged logged[64];
static int nlogged;
static uint64_t nlogged_all;

static void copy_field(char *dst, struct http_access_str f)
{
	if (!f.p) {
		strcpy(dst, "-");
		return;
	}
	size_t n = f.len < 63 ? f.len : 63;
	memcpy(dst, f.p, n);
	dst[n] = 0;
}

static void on_access(void *ctx, const struct http_access *r)
{
	assert_ptr_equal(ctx, &logged);
	nlogged_all++;
	if (nlogged == SK_ARRAY_LEN(logged))
		return;
	struct logged *l = &logged[nlogged++];
	copy_field(l->line, r->line);
	copy_field(l->ref, r->referer);
	copy_field(l->ua, r->user_agent);
	l->status = r->status;
	l->bytes = r->body_bytes;
	l->addr = r->addr;
	l->port = r->port;
}

static void setup_logged(uint32_t max_conns)
{
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	cfg.max_conns = max_conns;
	cfg.access = on_access;
	cfg.access_ctx = &logged;
	nlogged = 0;
	nlogged_all = 0;
	setup_server(&cfg);
}

static void assert_logged(int i, const char *line, int status, uint64_t bytes, const char *ref,
			  const char *ua)
{
	assert_true(i < nlogged);
	assert_string_equal(logged[i].line, line);
	assert_int_equal(logged[i].status, status);
	assert_int_equal(logged[i].bytes, bytes);
	assert_string_equal(logged[i].ref, ref);
	assert_string_equal(logged[i].ua, ua);
}

static void test_access_log(void **st)
{
	(void)st;
	setup_logged(3);
	int s = connect_client(5);
	/* Pipelined: one record per response, in order, each with its own
	 * request line, Referer and User-Agent. */
	send_str(s, "GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: ua/1\r\nReferer: http://r/\r\n\r\n"
		    "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"
		    "GET /nope?x=\"1\" HTTP/1.1\r\nHost: a\r\nuser-agent:  sp aced \r\n\r\n");
	assert_int_equal(nlogged, 3);
	assert_logged(0, "GET / HTTP/1.1", 200, HTTP_HELLO_LEN, "http://r/", "ua/1");
	assert_logged(1, "HEAD / HTTP/1.1", 200, 0, "-", "-");
	assert_logged(2, "GET /nope?x=\"1\" HTTP/1.1", 404, strlen("404 Not Found\n"), "-",
		      "sp aced");
	assert_true(sk_addr_is_v4(&logged[0].addr));
	assert_int_equal(sk_addr_ip4(&logged[0].addr), SK_IP4(198, 18, 0, 1));
	assert_int_equal(logged[0].port, 40005);
	/* A body: the answer (405) comes after it, and the record still has
	 * the head's fields although the body's bytes overwrote them. */
	send_str(s, "POST /form HTTP/1.1\r\nHost: a\r\nUser-Agent: poster\r\nContent-Length: 40000\r\n\r\n");
	static char body[40000];
	memset(body, 'b', sizeof(body));
	for (size_t off = 0; off < sizeof(body); off += 10000) {
		loop_fake_send(&fk, s, body + off, 10000);
		check();
	}
	assert_int_equal(nlogged, 4);
	assert_logged(3, "POST /form HTTP/1.1", 405, strlen("405 Method Not Allowed\n"), "-",
		      "poster");
	/* A head the parser refuses: its first line as sent (bytes and all). */
	s = connect_client(6);
	send_str(s, "GET /\x01\x1b[31m HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(nlogged, 5);
	assert_logged(4, "GET /\x01\x1b[31m HTTP/1.1", 400, strlen("400 Bad Request\n"), "-", "-");
	/* A bad chunk: the 400 is the record of the request it belongs to. */
	s = connect_client(7);
	send_str(s, "GET /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
	assert_int_equal(nlogged, 6);
	assert_logged(5, "GET /c HTTP/1.1", 400, strlen("400 Bad Request\n"), "-", "-");
	/* A 408 before any byte: no request line.  (The three lingering
	 * closes above end first.) */
	advance(3 * SK_NS_PER_S);
	int t = connect_client(8);
	advance(11 * SK_NS_PER_S);
	assert_int_equal(nlogged, 7);
	assert_logged(6, "-", 408, strlen("408 Request Timeout\n"), "-", "-");
	assert_true(fk.s[t].shut);
	/* All three states taken: the fourth is refused, and logged. */
	connect_client(9);
	connect_client(10);
	connect_client(11);
	assert_false(fk.s[11].open);
	assert_int_equal(nlogged, 8);
	assert_logged(7, "-", 503, strlen("503 Service Unavailable\n"), "-", "-");
	assert_int_equal(logged[7].port, 40011);
}

/* ---- graceful drain ---- */

static int drained;
static void on_drained(void *ctx)
{
	assert_ptr_equal(ctx, &drained);
	drained++;
}

static void test_drain(void **st)
{
	(void)st;
	setup_default();
	int idle = connect_client(5);
	send_str(idle, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	int part = connect_client(6);
	send_str(part, "GET / HTTP/1.1\r\nHo");
	int fresh = connect_client(7);
	int ka10 = connect_client(8);
	send_str(ka10, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(fk.s[ka10].out, "Connection: keep-alive\r\n"));
	size_t ka10_out = fk.s[ka10].out_len;
	drained = 0;
	http_server_drain(&srv, fk.now, on_drained, &drained);
	check();
	assert_false(fk.s[LOOP_FAKE_LSOCK].open); /* no more accepts */
	assert_int_equal(drained, 0);
	/* The request being read is answered, with the close, and ends. */
	send_str(part, "st: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(count(fk.s[part].out, fk.s[part].out_len, "HTTP/1.1 200"), 1);
	assert_non_null(strstr(fk.s[part].out, "\r\nConnection: close\r\n"));
	assert_true(fk.s[part].shut || !fk.s[part].open);
	/* A request within the grace, on an idle keep-alive connection (1.0
	 * that asked for keep-alive too): answered, close. */
	advance(HTTP_DRAIN_IDLE_GRACE / 2);
	assert_true(fk.s[idle].open && fk.s[fresh].open);
	send_str(ka10, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
	assert_non_null(strstr(fk.s[ka10].out + ka10_out, "\r\nConnection: close\r\n"));
	assert_null(strstr(fk.s[ka10].out + ka10_out, "keep-alive"));
	assert_false(fk.s[ka10].open);
	/* Past the grace: idle and fresh connections are closed, silently. */
	size_t idle_out = fk.s[idle].out_len;
	advance(HTTP_DRAIN_IDLE_GRACE / 2);
	assert_false(fk.s[idle].open);
	assert_false(fk.s[fresh].open);
	assert_int_equal(fk.s[idle].out_len, idle_out);
	assert_int_equal(fk.s[fresh].out_len, 0);
	assert_int_equal(srv.st.drain_idle_closed, 2);
	/* part lingers (bytes behind its last request): done when it ends. */
	assert_int_equal(drained, srv.nconns == 0);
	advance(3 * SK_NS_PER_S);
	assert_int_equal(srv.nconns, 0);
	assert_int_equal(drained, 1);
	/* Cut short: http_server_stop closes what is left, and done is not
	 * called (its context may be gone by then). */
	setup_default();
	connect_client(5);
	send_str(5, "GET / HTTP/1.1\r\nHo");
	drained = 0;
	http_server_drain(&srv, fk.now, on_drained, &drained);
	http_server_stop(&srv);
	check();
	assert_int_equal(srv.nconns, 0);
	assert_int_equal(drained, 0);
	/* Nothing open: done at once, and a second drain does nothing. */
	setup_default();
	drained = 0;
	http_server_drain(&srv, fk.now, on_drained, &drained);
	assert_int_equal(drained, 1);
	http_server_drain(&srv, fk.now, on_drained, &drained);
	assert_int_equal(drained, 1);
	check();
}

/* Every response is logged, once: records == responses counted. */
static uint64_t responses(void)
{
	const struct http_server_stats *q = &srv.st;
	return q->resp_200 + q->resp_206 + q->resp_301 + q->resp_304 + q->resp_400 + q->resp_403 +
	       q->resp_404 + q->resp_405 + q->resp_408 + q->resp_412 + q->resp_413 + q->resp_414 +
	       q->resp_416 + q->resp_431 + q->resp_501 + q->resp_503 + q->resp_505 + q->resp_other;
}

static void random_steps(bool logging)
{
	static const char *const reqs[] = {
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\nabcdefg",
		"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
		"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.0\r\nContent-Length: 1\r\n\r\nx",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
		"GET /%2e%2e/x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX : y\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	};
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	cfg.max_conns = 3; /* four sockets: the fourth is refused when all are busy */
	if (logging) {
		cfg.access = on_access;
		cfg.access_ctx = &logged;
		nlogged = 0;
		nlogged_all = 0;
	}
	setup_server(&cfg);
	struct {
		char buf[1024]; /* one to three requests back to back */
		size_t len, off;  /* [off, len) still to send */
	} cl[LOOP_FAKE_NSOCK];
	memset(cl, 0, sizeof(cl));
	uint64_t x = 0x9e3779b97f4a7c15ull;
#define RND(n) \
	((x = x * 6364136223846793005ull + 1442695040888963407ull), (size_t)((x >> 33) % (n)))
	for (int step = 0; step < 50000; step++) {
		int s = 2 + (int)RND(4);
		struct loop_fake_sock *k = &fk.s[s];
		if (!k->open) {
			/* Closed by the server (or never opened): a new client. */
			if (RND(4) == 0) {
				connect_client(s);
				cl[s].len = cl[s].off = 0;
			}
			continue;
		}
		switch (RND(8)) {
		case 0: case 1: case 2: { /* the next piece of the client's bytes */
			if (k->in_len - k->in_pos > 16384 || k->eof)
				break; /* the server is not reading (full output): wait */
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
			loop_fake_send(&fk, s, cl[s].buf + cl[s].off, n);
			check();
			cl[s].off += n;
			break;
		}
		case 3: /* the client reads slowly, or again at full speed */
			k->write_room = RND(3) ? SIZE_MAX : RND(200);
			event(s, LOOP_EV_WRITE);
			break;
		case 4:
			advance(RND(4) ? RND(2 * SK_NS_PER_S) : RND(70 * SK_NS_PER_S));
			break;
		case 5:
			if (RND(8) == 0 || k->out_len > 32768)
				peer_eof(s);
			break;
		default: /* a spurious or stale edge */
			event(s, RND(2) ? LOOP_EV_READ : LOOP_EV_WRITE);
			break;
		}
	}
#undef RND
	assert_true(srv.st.requests > 2000); /* the walk did reach the machine's paths */
	assert_true(srv.st.requests_pipelined && srv.st.lingers && srv.st.timeout_header);
	assert_true(srv.st.write_partial && srv.st.bodies_discarded && srv.st.conns_refused);
	http_server_stop(&srv);
	check();
	assert_int_equal(srv.nconns, 0);
	assert_int_equal(srv.bufs_held, 0);
	if (logging)
		assert_int_equal(nlogged_all, responses());
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

/* The checker can fail: each broken account is named. */
static void test_check_catches(void **st)
{
	(void)st;
	setup_default();
	int s = connect_client(5);
	send_str(s, "GET / HTTP/1.1\r\nHo"); /* a partial head: one buffer held */
	assert_int_equal(srv.bufs_held, 1);
	srv.bufs_held = 0;
	assert_int_not_equal(http_server_check(&srv), 0);
	srv.bufs_held = 1;
	srv.nconns++;
	assert_int_not_equal(http_server_check(&srv), 0);
	srv.nconns--;
	uint8_t *f = srv.buf_free;
	srv.buf_free = srv.bufs + 1; /* not a buffer's start */
	assert_int_not_equal(http_server_check(&srv), 0);
	srv.buf_free = f;
	check();
}

/* ---- static files (RFC 9110): validators, conditionals, ranges,
 * directories, encodings, on a small site ---- */

#define T0 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT; the ETag is "2ebc98a1-a" */
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
	assert_int_equal(strlen(path), len); /* NUL-terminated at len */
	assert_true(len && (len == 1 || path[len - 1] != '/')); /* never a trailing '/' */
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(path, t[i].p))
			return t[i].f;
	return NULL;
}

static void setup_site(const char *cache_control)
{
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	cfg.max_conns = 8;
	cfg.lookup = site;
	cfg.cache_control = cache_control;
	setup_server(&cfg);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)('A' + i % 26);
}

/* One request on a fresh connection; returns the answer (NUL-terminated). */
static const char *ask(const char *req_fields)
{
	static int next = 2;
	if (next >= LOOP_FAKE_NSOCK)
		next = 2;
	int s = connect_client(next++);
	char req[1024];
	snprintf(req, sizeof(req), "%s\r\n", req_fields);
	send_str(s, req);
	static char got[LOOP_FAKE_BUF + 1];
	memcpy(got, fk.s[s].out, fk.s[s].out_len + 1);
	if (fk.s[s].open)
		peer_eof(s); /* the client goes: its state is free for the next */
	return got;
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

#define GET(path, fields) "GET " path " HTTP/1.1\r\nHost: a\r\n" fields
#define HEAD(path, fields) "HEAD " path " HTTP/1.1\r\nHost: a\r\n" fields

static void test_validators(void **st)
{
	(void)st;
	setup_site("max-age=60");
	const char *r = ask(GET("/a.txt", ""));
	has(r, "HTTP/1.1 200 OK\r\n");
	has(r, "\r\nETag: \"2ebc98a1-a\"\r\n");
	has(r, "\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n");
	has(r, "\r\nAccept-Ranges: bytes\r\n");
	has(r, "\r\nCache-Control: max-age=60\r\n");
	has(r, "\r\nContent-Length: 10\r\n");
	lacks(r, "Vary");
	assert_string_equal(body_of(r), "0123456789");
	/* No time: no Last-Modified, no derived ETag. */
	r = ask(GET("/d/", ""));
	has(r, "HTTP/1.1 200 OK\r\n");
	lacks(r, "Last-Modified");
	lacks(r, "ETag");
	assert_string_equal(body_of(r), "<p>d</p>");
	/* A source's own ETag wins. */
	r = ask(GET("/z.txt", "Accept-Encoding: br\r\n"));
	has(r, "\r\nETag: \"br-tag\"\r\n");
	/* Cache-Control only on answers about a file. */
	lacks(ask(GET("/nope", "")), "Cache-Control");
}

static void test_conditionals(void **st)
{
	(void)st;
	setup_site(NULL);
	const char *r;
	/* If-None-Match: weak comparison, lists, "*". */
	r = ask(GET("/a.txt", "If-None-Match: \"2ebc98a1-a\"\r\n"));
	has(r, "HTTP/1.1 304 Not Modified\r\n");
	has(r, "\r\nETag: \"2ebc98a1-a\"\r\n");
	lacks(r, "Content-Length");
	lacks(r, "Content-Type");
	assert_string_equal(body_of(r), "");
	has(ask(GET("/a.txt", "If-None-Match: \"x\", W/\"2ebc98a1-a\"\r\n")), " 304 ");
	has(ask(GET("/a.txt", "If-None-Match: *\r\n")), " 304 ");
	has(ask(HEAD("/a.txt", "If-None-Match: *\r\n")), " 304 ");
	has(ask(GET("/a.txt", "If-None-Match: \"2ebc98a1-b\"\r\n")), " 200 ");
	/* If-Modified-Since: not modified since a time at or after mtime. */
	has(ask(GET("/a.txt", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n")), " 304 ");
	has(ask(GET("/a.txt", "If-Modified-Since: Sunday, 06-Nov-94 08:49:38 GMT\r\n")), " 304 ");
	has(ask(GET("/a.txt", "If-Modified-Since: Sun Nov  6 08:49:36 1994\r\n")), " 200 ");
	has(ask(GET("/a.txt", "If-Modified-Since: yesterday\r\n")), " 200 "); /* invalid: ignored */
	has(ask(GET("/d/", "If-Modified-Since: Sun, 06 Nov 2094 08:49:37 GMT\r\n")), " 200 ");
	/* 13.2.2: If-None-Match decides, If-Modified-Since is then ignored. */
	has(ask(GET("/a.txt", "If-None-Match: \"x\"\r\n"
			      "If-Modified-Since: Sun, 06 Nov 2094 08:49:37 GMT\r\n")),
	    " 200 ");
	has(ask(GET("/a.txt", "If-None-Match: \"2ebc98a1-a\"\r\n"
			      "If-Modified-Since: Sun, 06 Nov 1970 08:49:37 GMT\r\n")),
	    " 304 ");
	/* If-Match: strong comparison; 412. */
	has(ask(GET("/a.txt", "If-Match: \"2ebc98a1-a\"\r\n")), " 200 ");
	has(ask(GET("/a.txt", "If-Match: *\r\n")), " 200 ");
	r = ask(GET("/a.txt", "If-Match: W/\"2ebc98a1-a\"\r\n"));
	has(r, "HTTP/1.1 412 Precondition Failed\r\n");
	lacks(r, "Connection: close"); /* an ordinary answer: the connection stays */
	has(ask(GET("/a.txt", "If-Match: \"nope\"\r\n")), " 412 ");
	has(ask(GET("/d/", "If-Match: \"x\"\r\n")), " 412 "); /* no tag: only "*" */
	/* If-Unmodified-Since; ignored under If-Match, and without a time. */
	has(ask(GET("/a.txt", "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n")), " 412 ");
	has(ask(GET("/a.txt", "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n")), " 200 ");
	has(ask(GET("/a.txt", "If-Match: *\r\n"
			      "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT\r\n")),
	    " 200 ");
	has(ask(GET("/d/", "If-Unmodified-Since: Sun, 06 Nov 1970 08:49:36 GMT\r\n")), " 200 ");
	/* 412 before 304. */
	has(ask(GET("/a.txt", "If-Match: \"x\"\r\nIf-None-Match: *\r\n")), " 412 ");
	assert_int_equal(srv.st.resp_304, 7);
	assert_int_equal(srv.st.resp_412, 5);
}

static void test_ranges(void **st)
{
	(void)st;
	setup_site(NULL);
	const char *r = ask(GET("/a.txt", "Range: bytes=2-4\r\n"));
	has(r, "HTTP/1.1 206 Partial Content\r\n");
	has(r, "\r\nContent-Range: bytes 2-4/10\r\n");
	has(r, "\r\nContent-Length: 3\r\n");
	assert_string_equal(body_of(r), "234");
	assert_string_equal(body_of(ask(GET("/a.txt", "Range: bytes=-3\r\n"))), "789");
	assert_string_equal(body_of(ask(GET("/a.txt", "Range: bytes=7-\r\n"))), "789");
	/* A large part stays a slice of the file. */
	r = ask(GET("/big", "Range: bytes=1000-2999\r\n"));
	has(r, "\r\nContent-Length: 2000\r\n");
	assert_memory_equal(body_of(r), big + 1000, 2000);
	/* 416 with the length; ignored Range; HEAD never 206. */
	r = ask(GET("/a.txt", "Range: bytes=10-\r\n"));
	has(r, "HTTP/1.1 416 Range Not Satisfiable\r\n");
	has(r, "\r\nContent-Range: bytes */10\r\n");
	lacks(r, "Connection: close");
	has(ask(GET("/a.txt", "Range: items=1-2\r\n")), " 200 ");
	has(ask(GET("/a.txt", "Range: bytes=0-9,0-9\r\n")), " 200 ");
	r = ask(HEAD("/a.txt", "Range: bytes=0-1\r\n"));
	has(r, " 200 ");
	has(r, "Content-Length: 10\r\n");
	assert_string_equal(body_of(r), "");
	/* If-Range: the ETag or the date, exactly. */
	has(ask(GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: \"2ebc98a1-a\"\r\n")), " 206 ");
	has(ask(GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: \"old\"\r\n")), " 200 ");
	has(ask(GET("/a.txt", "Range: bytes=0-1\r\nIf-Range: W/\"2ebc98a1-a\"\r\n")), " 200 ");
	has(ask(GET("/a.txt",
		    "Range: bytes=0-1\r\nIf-Range: Sun, 06 Nov 1994 08:49:37 GMT\r\n")),
	    " 206 ");
	has(ask(GET("/a.txt",
		    "Range: bytes=0-1\r\nIf-Range: Sun, 06 Nov 1994 08:49:38 GMT\r\n")),
	    " 200 ");
	/* Multipart: parts in order, each with its type and range, the
	 * length exactly the body's. */
	r = ask(GET("/a.txt", "Range: bytes=0-1, -2\r\n"));
	has(r, "HTTP/1.1 206 Partial Content\r\n");
	has(r, "Content-Type: multipart/byteranges; boundary=");
	const char *b = body_of(r);
	const char *cl = strstr(r, "Content-Length: ");
	assert_int_equal(strtoul(cl + 16, NULL, 10), strlen(b));
	const char *p1 = strstr(b, "Content-Range: bytes 0-1/10\r\n\r\n01\r\n--");
	const char *p2 = strstr(b, "Content-Range: bytes 8-9/10\r\n\r\n89\r\n--");
	assert_true(p1 && p2 && p1 < p2);
	assert_int_equal(count(b, strlen(b), "Content-Type: text/plain\r\n"), 2);
	assert_non_null(strstr(p2, "--\r\n"));
	assert_int_equal(srv.st.resp_multipart, 1);
}

static void test_directories(void **st)
{
	(void)st;
	setup_site(NULL);
	const char *r = ask(GET("/d", ""));
	has(r, "HTTP/1.1 301 Moved Permanently\r\n");
	has(r, "\r\nLocation: /d/\r\n");
	has(ask(GET("/d?x=%201", "")), "\r\nLocation: /d/?x=%201\r\n");
	has(ask(GET("/%64", "")), "\r\nLocation: /%64/\r\n"); /* as sent */
	has(ask(GET("http://a/d?q", "")), "\r\nLocation: /d/?q\r\n");
	has(ask(GET("/d/", "")), " 200 ");
	has(ask(GET("/e/", "")), "HTTP/1.1 403 Forbidden\r\n");
	has(ask(GET("/", "")), " 403 ");  /* the root, without an index */
	has(ask(GET("/a.txt/", "")), " 404 ");
	has(ask(GET("/nope/", "")), " 404 ");
	has(ask(GET("/e/index.html/", "")), " 200 "); /* a lookup that said "file" */
	assert_int_equal(srv.st.resp_301, 4);
	assert_int_equal(srv.st.resp_403, 2);
	/* A 301 to a request with a body ends the connection (its Location
	 * lives in the buffer the body would move). */
	r = ask(GET("/d", "Content-Length: 3\r\n"));
	has(r, " 301 ");
	has(r, "Connection: close");
}

static void test_encodings(void **st)
{
	(void)st;
	setup_site(NULL);
	const char *r = ask(GET("/z.txt", "Accept-Encoding: gzip\r\n"));
	has(r, "\r\nContent-Encoding: gzip\r\n");
	has(r, "\r\nVary: Accept-Encoding\r\n");
	has(r, "\r\nContent-Type: text/plain\r\n"); /* the original's type */
	has(r, "\r\nETag: \"2ebc98a2-2\"\r\n");      /* the variant's validators */
	assert_string_equal(body_of(r), "GZ");
	r = ask(GET("/z.txt", "Accept-Encoding: gzip, br\r\n"));
	has(r, "\r\nContent-Encoding: br\r\n");
	assert_string_equal(body_of(r), "BRO");
	r = ask(GET("/z.txt", "Accept-Encoding: gzip;q=0, br;q=0\r\n"));
	lacks(r, "Content-Encoding");
	has(r, "\r\nVary: Accept-Encoding\r\n");
	assert_string_equal(body_of(r), "zzzz");
	r = ask(GET("/z.txt", ""));
	lacks(r, "Content-Encoding");
	has(r, "\r\nVary: Accept-Encoding\r\n");
	/* The variant's ETag is what conditionals compare. */
	has(ask(GET("/z.txt", "Accept-Encoding: gzip\r\nIf-None-Match: \"2ebc98a2-2\"\r\n")),
	    " 304 ");
	has(ask(GET("/z.txt", "If-None-Match: \"2ebc98a2-2\"\r\n")), " 200 ");
	/* A variant is sent whole: no ranges of gzip bytes (as nginx). */
	r = ask(GET("/z.txt", "Accept-Encoding: gzip\r\nRange: bytes=1-\r\n"));
	has(r, " 200 ");
	lacks(r, "Accept-Ranges");
	assert_string_equal(body_of(r), "GZ");
	assert_true(srv.st.resp_gzip >= 2 && srv.st.resp_br == 1);
	/* HEAD: the same head as GET, no body. */
	const char *g = ask(GET("/z.txt", "Accept-Encoding: gzip\r\n"));
	char gh[1024];
	snprintf(gh, sizeof(gh), "%.*s", (int)(body_of(g) - g), g);
	r = ask(HEAD("/z.txt", "Accept-Encoding: gzip\r\n"));
	assert_string_equal(r, gh);
}

/* Many multi-range answers pipelined in one send: each that does not fit
 * the batch is owed and goes first after the flush, in order, whatever
 * the socket takes per write. */
static void test_pipelined_multipart(void **st)
{
	(void)st;
	for (size_t room = 0; room <= 1; room++) {
		setup_site("public, max-age=31536000, immutable");
		int s = connect_client(5);
		if (room)
			fk.s[s].write_room = 700;
		char req[8192] = "";
		for (int i = 0; i < 12; i++)
			strcat(req, i % 3 == 1 ? GET("/a.txt", "\r\n")
					       : GET("/big", "Range: bytes=0-0,1-1,2-2,3-3,4-4,5-5,"
							     "6-6,7-7\r\n\r\n"));
		send_str(s, req);
		for (int k = 0; k < 200 && room; k++) {
			fk.s[s].write_room = 700;
			event(s, LOOP_EV_WRITE);
		}
		assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 206"), 8);
		assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "HTTP/1.1 200"), 4);
		assert_int_equal(count(fk.s[s].out, fk.s[s].out_len, "Content-Range: bytes 7-7/3000"),
				 8);
		assert_true(srv.st.answers_owed > 0);
		/* In order: 206 206 200 206 206 200 ... */
		const char *p = fk.s[s].out;
		for (int i = 0; i < 12; i++) {
			const char *want = i % 3 == 1 ? "HTTP/1.1 200" : "HTTP/1.1 206";
			p = strstr(p, "HTTP/1.1 ");
			assert_non_null(p);
			assert_memory_equal(p, want, 12);
			p++;
		}
		assert_true(fk.s[s].open);
	}
}

/* ---- file bodies by the loop's sendfile op (loop.h) ---- */

/* The fake with a sendfile op: it gathers the head and the file's bytes
 * (site_big, "descriptor" 9) and hands them to the fake's own writev, so
 * write_room cuts them short as it would a writev. */
static struct loop_ops sf_ops;
static const struct loop_ops *sf_inner;
static int sf_calls;
static bool sf_truncated; /* the file "ended": -SK_ECONNABORTED */

static long fake_sendfile(struct loop *l, int sock, const struct loop_iov *head, int nhead, int fd,
			  uint64_t off, size_t len)
{
	assert_int_equal(fd, 9);
	assert_true(off + len <= sizeof(big) && len > 0 && nhead >= 0 && nhead < 8);
	sf_calls++;
	if (sf_truncated)
		return -SK_ECONNABORTED;
	struct loop_iov v[8];
	for (int i = 0; i < nhead; i++)
		v[i] = head[i];
	v[nhead] = (struct loop_iov){big + off, len};
	return sf_inner->writev(l, sock, v, nhead + 1);
}

/* Pipelined: a whole file, one range, two ranges (multipart), a small
 * file; every byte out, for a socket taking `room` bytes per write. */
static size_t sf_run(bool with_sendfile, size_t room, char *out, size_t *at_once)
{
	setup_site(NULL);
	site_big.fd = with_sendfile ? 9 : 0;
	if (with_sendfile) {
		sf_inner = fk.base.ops;
		sf_ops = *fk.base.ops;
		sf_ops.sendfile = fake_sendfile;
		fk.base.ops = &sf_ops;
	}
	int s = connect_client(5);
	fk.s[s].write_room = room;
	send_str(s, GET("/big", "\r\n") GET("/big", "Range: bytes=100-2099\r\n\r\n")
		    GET("/big", "Range: bytes=0-9,2990-2999\r\n\r\n") GET("/a.txt", "\r\n"));
	*at_once = fk.s[s].out_len; /* before any write edge */
	size_t prev;
	do { /* until a write edge moves nothing: all sent */
		prev = fk.s[s].out_len;
		fk.s[s].write_room = room;
		event(s, LOOP_EV_WRITE);
	} while (fk.s[s].out_len != prev);
	assert_true(fk.s[s].out_len > 5000 + 4 * 100);
	assert_true(fk.s[s].open);
	memcpy(out, fk.s[s].out, fk.s[s].out_len);
	size_t n = fk.s[s].out_len;
	site_big.fd = 0;
	return n;
}

static void test_sendfile_slices(void **st)
{
	(void)st;
	static char want[LOOP_FAKE_BUF], got[LOOP_FAKE_BUF];
	static const size_t rooms[] = {SIZE_MAX, 700, 37, 1};
	for (size_t i = 0; i < SK_ARRAY_LEN(rooms); i++) {
		size_t wn1, gn1;
		size_t wn = sf_run(false, rooms[i], want, &wn1);
		sf_calls = 0;
		size_t gn = sf_run(true, rooms[i], got, &gn1);
		/* A socket that takes everything: all of it goes at once, with
		 * no write edge (each sendfile call that took all it was
		 * offered is followed by the next one). */
		if (rooms[i] == SIZE_MAX)
			assert_true(wn1 == wn && gn1 == gn);
		/* The same bytes as from the mapping, whatever the socket takes;
		 * the file's slices went by sendfile (2 + 2 parts at least). */
		assert_int_equal(gn, wn);
		assert_memory_equal(got, want, wn);
		assert_true(sf_calls >= 4);
		assert_int_equal(count(got, gn, "HTTP/1.1 206"), 2);
	}
	/* The file cut short under sendfile: the connection closes. */
	setup_site(NULL);
	site_big.fd = 9;
	sf_inner = fk.base.ops;
	sf_ops = *fk.base.ops;
	sf_ops.sendfile = fake_sendfile;
	fk.base.ops = &sf_ops;
	sf_truncated = true;
	int s = connect_client(5);
	send_str(s, GET("/big", "\r\n"));
	assert_false(fk.s[s].open);
	assert_int_equal(srv.st.write_errors, 1);
	sf_truncated = false;
	site_big.fd = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_pipelined_one_write),
		cmocka_unit_test(test_connection_close),
		cmocka_unit_test(test_bad_request_lingers),
		cmocka_unit_test(test_header_timeout),
		cmocka_unit_test(test_idle_timeout_lazy),
		cmocka_unit_test(test_partial_writes),
		cmocka_unit_test(test_conn_limit),
		cmocka_unit_test(test_body_discarded),
		cmocka_unit_test(test_close_with_body),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_buffer_only_while_pending),
		cmocka_unit_test(test_timerq),
		cmocka_unit_test(test_random_steps),
		cmocka_unit_test(test_random_steps_logged),
		cmocka_unit_test(test_access_log),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_check_catches),
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_conditionals),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_directories),
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_pipelined_multipart),
		cmocka_unit_test(test_sendfile_slices),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	free(mem);
	return r;
}
