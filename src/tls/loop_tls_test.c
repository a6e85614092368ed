/* loop_tls_test.c — the TLS stream layer (loop_tls.c) over the fake loop
 * (loop_host/loop_fake.h), with the BearSSL engine (one buffer, half
 * duplex: the unikernel's) and OpenSSL's client in this process over
 * memory BIOs.  What it checks is loop.h's edge contract through the
 * layer: when plaintext becomes readable without a read event on the
 * inner socket (records held while ours were leaving, taken in as they
 * left), the application is still told to read; when a write is refused
 * with nothing of the engine's own to send, it is told again.  Both were
 * lost: an HTTP/2 download over BearSSL whose client's WINDOW_UPDATE came
 * as our last record was leaving waited for it until the send timeout
 * (tests/vm_h2.sh, 2026-12-05).  And that a full-duplex engine (OpenSSL,
 * its pending_in counted) pays nothing for that on the write path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <cmocka.h>
#include <openssl/ssl.h>

#include "../base/sk_err.h"
#include "../http/app.h"
#include "../loop_host/loop_fake.h"
#include "loop_tls.h"
#include "tls_bearssl.h"
#include "tls_testcert.h"

#define S 2 /* the accepted socket */

static int rnd(void *buf, size_t len)
{
	return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -1;
}

static struct loop_fake fk;
static struct loop *tl;
static const struct tls_engine_ops *eng; /* the server's */
static struct tls_ctx *sctx;
static void *ctx_mem;
static SSL_CTX *cctx;
static SSL *cl;
static BIO *c_in, *c_out;
static unsigned evs; /* the application's events since the test cleared them */
static uint8_t buf[1 << 16];

static void on_app(void *user, int sock, unsigned events, sk_time_ns now)
{
	(void)user, (void)sock, (void)now;
	evs |= events;
}

static void on_listen(void *user, int lsock, unsigned events, sk_time_ns now)
{
	(void)user, (void)events, (void)now;
	int s = loop_accept(tl, lsock, NULL);
	assert_int_equal(s, S);
	assert_int_equal(loop_watch(tl, s, on_app, NULL), 0);
}

/* The BearSSL server, on a certificate made now (tls_testcert_pem). */
static struct tls_ctx *server_ctx(void)
{
	static struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_bearssl_config cfg = {.max_conns = 4, .random = rnd};
	size_t sz = tls_bearssl_mem_size(&cfg);
	ctx_mem = aligned_alloc(16, (sz + 15) & ~(size_t)15);
	char err[200];
	struct tls_ctx *t = tls_bearssl_server(ctx_mem, sz, &cfg, pm.cert, pm.cert_len, pm.key,
					       pm.key_len, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	return t;
}

/* The client's records to the socket (a read event), and the layer's
 * records, taken from the socket's output, to the client. */
static void client_to_server(void)
{
	int n;
	while ((n = BIO_read(c_out, buf, (int)sizeof(buf))) > 0)
		loop_fake_send(&fk, S, buf, (size_t)n);
}

static void server_to_client(void)
{
	if (fk.s[S].out_len) {
		BIO_write(c_in, fk.s[S].out, (int)fk.s[S].out_len);
		fk.s[S].out_len = 0;
	}
}

/* OpenSSL's engine with its pending_in counted: a full-duplex engine. */
static struct tls_engine_ops counting;
static unsigned pending_in_calls;

static size_t count_pending_in(const struct tls_conn *c)
{
	pending_in_calls++;
	return tls_openssl_ops.pending_in(c);
}

/* The HTTP engine over the layer, when a test runs it (setup_app). */
static struct http_app app;
static void *app_mem;
static int app_listens(void);

/* A connection on engine e (context t), through the handshake (TLS 1.2):
 * accepted by on_listen, or by the HTTP engine when `with_app`. */
static void setup_on(const struct tls_engine_ops *e, struct tls_ctx *t, bool with_app)
{
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	eng = e;
	sctx = t;
	struct loop_tls_config cfg = {.engine = e, .ctx = t};
	char err[200];
	tl = loop_tls_create(&fk.base, &cfg, err, sizeof(err));
	if (!tl)
		fail_msg("%s", err);
	if (with_app) {
		assert_int_equal(app_listens(), 0);
	} else {
		struct sk_addr any = {0};
		int ls = loop_listen(tl, &any, 443, 8);
		assert_true(ls >= 0);
		assert_int_equal(loop_watch(tl, ls, on_listen, NULL), 0);
	}
	loop_fake_connect(&fk, S);

	cctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_min_proto_version(cctx, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL);
	cl = SSL_new(cctx);
	c_in = BIO_new(BIO_s_mem());
	c_out = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(c_in, -1);
	SSL_set_bio(cl, c_in, c_out);
	SSL_set_connect_state(cl);
	bool done = false;
	for (int i = 0; i < 10 && !done; i++) {
		done = SSL_do_handshake(cl) == 1;
		client_to_server();
		server_to_client();
	}
	assert_true(done);
	/* The server knows once its Finished has gone (and the client's
	 * first record shows it the handshake is over). */
	evs = 0;
}

static int setup(void **state)
{
	(void)state;
	setup_on(&tls_bearssl_ops, server_ctx(), false);
	return 0;
}

static int setup_full_duplex(void **state)
{
	(void)state;
	counting = tls_openssl_ops;
	counting.pending_in = count_pending_in;
	setup_on(&counting, tls_testcert_server(NULL), false);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (app_mem) {
		assert_int_equal(http_app_check(&app), 0);
		http_app_stop(&app);
		free(app_mem);
		app_mem = NULL;
	}
	loop_destroy(tl);
	SSL_free(cl);
	SSL_CTX_free(cctx);
	if (eng->ctx_free)
		eng->ctx_free(sctx);
	free(ctx_mem);
	ctx_mem = NULL;
	return 0;
}

/* The client's "ping" comes while our record waits on a full socket:
 * BearSSL cannot take it (its one buffer holds our record), so the layer
 * holds it; the application, told to read, finds nothing yet. */
static void ping_while_blocked(void)
{
	static const uint8_t data[16384];
	fk.s[S].write_room = 0;
	struct loop_iov iov = {data, sizeof(data)};
	assert_int_equal(loop_writev(tl, S, &iov, 1), (long)sizeof(data)); /* taken, unsent */
	assert_int_equal(fk.s[S].out_len, 0);
	assert_int_equal(SSL_write(cl, "ping", 4), 4);
	evs = 0;
	client_to_server();
	assert_true(evs & LOOP_EV_READ);
	assert_int_equal(loop_read(tl, S, buf, sizeof(buf)), -SK_EAGAIN);
	evs = 0;
}

static void read_ping(void)
{
	assert_int_equal(loop_read(tl, S, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "ping", 4);
}

/* The socket drains (its write event): our record leaves, the held
 * "ping" goes into the engine as plaintext.  No record came in with that
 * event, yet the application must be told to read. */
static void test_held_records_readable_on_write_event(void **state)
{
	(void)state;
	ping_while_blocked();
	fk.s[S].write_room = SIZE_MAX;
	loop_fake_event(&fk, S, LOOP_EV_WRITE);
	assert_true(fk.s[S].out_len > 16384); /* our record went */
	assert_true(evs & LOOP_EV_READ);
	read_ping();
}

/* The application writes again before the socket's write event: the
 * layer sends our record, the held "ping" becomes plaintext, and BearSSL
 * refuses the write until it is read: -SK_EAGAIN with nothing left to
 * send, so no event of the inner socket will come.  The layer's kick
 * tells the application to read and write; then the write goes. */
static void test_write_refused_by_unread_plaintext(void **state)
{
	(void)state;
	ping_while_blocked();
	fk.s[S].write_room = SIZE_MAX;
	static const uint8_t more[1000];
	struct loop_iov iov = {more, sizeof(more)};
	assert_int_equal(loop_writev(tl, S, &iov, 1), -SK_EAGAIN);
	assert_true(fk.s[S].out_len > 16384); /* our first record went */
	assert_int_equal(evs, 0);
	loop_fake_advance(&fk, 0);
	assert_true(evs & LOOP_EV_READ);
	assert_true(evs & LOOP_EV_WRITE);
	read_ping();
	assert_int_equal(loop_writev(tl, S, &iov, 1), (long)sizeof(more));
	/* The client gets both records, in order. */
	server_to_client();
	size_t got = 0;
	int r;
	while ((r = SSL_read(cl, buf, (int)sizeof(buf))) > 0)
		got += (size_t)r;
	assert_int_equal(got, 16384 + sizeof(more));
}

/* An application that answers the kick without reading is not kicked
 * again (loop.h: one that stops early comes back on its own), however
 * long it waits: no timer wakes it every so often until its send
 * timeout.  Once it reads, the write it was refused is owed an edge: a
 * kick says so, and the write goes. */
static uint64_t kicks;
static void take(void *arg, const char *name, uint64_t v)
{
	(void)arg;
	if (!strcmp(name, "tls.kicks"))
		kicks = v;
}

static void test_kick_without_read_waits_for_read(void **state)
{
	(void)state;
	ping_while_blocked();
	fk.s[S].write_room = SIZE_MAX;
	static const uint8_t more[100];
	struct loop_iov iov = {more, sizeof(more)};
	assert_int_equal(loop_writev(tl, S, &iov, 1), -SK_EAGAIN);
	loop_fake_advance(&fk, 0);
	assert_true(evs & LOOP_EV_WRITE);
	evs = 0;
	assert_int_equal(loop_writev(tl, S, &iov, 1), -SK_EAGAIN); /* still unread */
	loop_fake_advance(&fk, 0);
	loop_fake_advance(&fk, SK_NS_PER_MS);
	loop_fake_advance(&fk, 30 * SK_NS_PER_S);
	assert_int_equal(evs, 0);
	loop_stats(tl, take, NULL);
	assert_int_equal(kicks, 1);
	read_ping(); /* room for the write now: a kick says so */
	loop_fake_advance(&fk, 0);
	assert_true(evs & LOOP_EV_WRITE);
	loop_stats(tl, take, NULL);
	assert_int_equal(kicks, 2);
	assert_int_equal(loop_writev(tl, S, &iov, 1), (long)sizeof(more));
}

/* A full-duplex engine makes its edges on the inner socket: writing
 * (taken at once, or held by a full socket and sent on its write event)
 * asks nothing of pending_in, and arms no kick. */
static void test_full_duplex_write_path_skips_pending_in(void **state)
{
	(void)state;
	assert_false(eng->half_duplex);
	assert_true(tls_bearssl_ops.half_duplex); /* the one that is */
	static const uint8_t data[40000];
	struct loop_iov iov = {data, 1000};
	pending_in_calls = 0;
	assert_int_equal(loop_writev(tl, S, &iov, 1), 1000);
	fk.s[S].write_room = 0;
	iov.len = sizeof(data);
	long w = loop_writev(tl, S, &iov, 1); /* held: the socket is full */
	assert_true(w > 0);
	fk.s[S].write_room = SIZE_MAX;
	loop_fake_event(&fk, S, LOOP_EV_WRITE);
	loop_fake_advance(&fk, 0);
	assert_int_equal(pending_in_calls, 0);
	loop_stats(tl, take, NULL);
	assert_int_equal(kicks, 0);
	/* The client gets it all, in order. */
	server_to_client();
	size_t got = 0;
	int r;
	while ((r = SSL_read(cl, buf, (int)sizeof(buf))) > 0)
		got += (size_t)r;
	assert_int_equal(got, 1000 + (size_t)w);
}

/* ---- The HTTP engine over BearSSL: a request pipelined while an
 * answer is leaving.  GET /big's 200,000 bytes leave 20,000 bytes of
 * socket room at a time; meanwhile the client sends GET /small in a
 * record of its own.  BearSSL holds that record while ours leave, then
 * takes it in as plaintext and refuses every write until it is read: the
 * HTTP engine, which read no more while an answer was leaving, stopped
 * there until its send timeout.  It now reads the next request into its
 * buffer while the answer waits for room. */
#define BIG 200000
static uint8_t big[BIG];

static int h_big(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	return http_app_send(r, 200, big, sizeof(big));
}

static int h_small(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	return http_app_send(r, 200, "small\n", 6);
}

static const struct http_app_route app_routes[] = {
	{HTTP_GET, "/big", false, h_big, NULL},
	{HTTP_POST, "/big", false, h_big, NULL}, /* answers before the body is read */
	{HTTP_GET, "/small", false, h_small, NULL},
};
static const struct http_app_def app_def = {.routes = app_routes, .nroutes = 3, .name = "tls-test"};

static int app_listens(void)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.port = 443;
	size_t sz = http_app_mem_size(&cfg);
	app_mem = calloc(1, sz);
	if (!app_mem || http_app_init(&app, app_mem, sz, &cfg, &app_def, tl))
		return -1;
	http_app_set_date(&app, "Sun, 06 Nov 1994 08:49:37 GMT");
	return http_app_start(&app);
}

static int setup_app(void **state)
{
	(void)state;
	setup_on(&tls_bearssl_ops, server_ctx(), true);
	return 0;
}

/* What the client has read so far, all of it. */
static size_t client_read(uint8_t *to, size_t cap, size_t have)
{
	int r;
	while (have < cap && (r = SSL_read(cl, to + have, (int)(cap - have))) > 0)
		have += (size_t)r;
	return have;
}

/* r1 is answered with /big's 200,000 bytes, which leave 20,000 at a time;
 * r2 comes in a record of its own meanwhile: both answers arrive. */
static void big_then(const char *r1, const char *r2)
{
	memset(big, 'b', sizeof(big));
	static uint8_t got[BIG + 4096];
	size_t have = 0;
	fk.s[S].write_room = 20000;
	assert_int_equal(SSL_write(cl, r1, (int)strlen(r1)), (int)strlen(r1));
	client_to_server();
	server_to_client();
	have = client_read(got, sizeof(got), have);
	assert_true(have < BIG); /* the answer waits for room */
	assert_int_equal(SSL_write(cl, r2, (int)strlen(r2)), (int)strlen(r2));
	client_to_server();
	/* Room comes as the client reads; no time passes but for the
	 * layer's zero-delay kicks. */
	int rounds = 0;
	const char *second = NULL;
	for (; rounds < 100 && !second; rounds++) {
		fk.s[S].write_room = 20000;
		loop_fake_event(&fk, S, LOOP_EV_WRITE);
		loop_fake_advance(&fk, 0);
		server_to_client();
		have = client_read(got, sizeof(got) - 1, have);
		got[have] = 0;
		const char *end1 = strstr((const char *)got, "\r\n\r\n");
		if (end1 && (size_t)((const uint8_t *)end1 + 4 - got) + BIG < have)
			second = strstr(end1 + 4 + BIG, "HTTP/1.1 200");
	}
	fprintf(stderr, "pipelined over BearSSL: %zu bytes read in %d rounds; second answer %s\n",
		have, rounds, second ? "whole" : "missing");
	assert_non_null(second);
	assert_non_null(strstr(second, "\r\n\r\nsmall\n"));
	assert_int_equal(app.st.requests, 2);
	assert_int_equal(app.st.resp_2xx, 2);
}

static void test_app_reads_pipelined_request_while_answer_leaves(void **state)
{
	(void)state;
	big_then("GET /big HTTP/1.1\r\nHost: a\r\n\r\n", "GET /small HTTP/1.1\r\nHost: a\r\n\r\n");
}

/* The same with a body the handler never asked for: the rest of it
 * comes while the answer leaves, then the next request. */
static void test_app_reads_unasked_body_while_answer_leaves(void **state)
{
	(void)state;
	big_then("POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n01234",
		 "56789GET /small HTTP/1.1\r\nHost: a\r\n\r\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_held_records_readable_on_write_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_refused_by_unread_plaintext, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kick_without_read_waits_for_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_duplex_write_path_skips_pending_in,
						setup_full_duplex, teardown),
		cmocka_unit_test_setup_teardown(test_app_reads_pipelined_request_while_answer_leaves,
						setup_app, teardown),
		cmocka_unit_test_setup_teardown(test_app_reads_unasked_body_while_answer_leaves,
						setup_app, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
