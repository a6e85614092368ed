/* loop_skiff_test.c — the skiff loop backend between two TCP engines joined
 * by an in-memory wire: op mapping, dispatch, stale events, timers, and the
 * real HTTP engine (http/app.c) answering over it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http/app.h"
#include "loop/loop_skiff.h"

#define IP_C SK_IP4(198, 18, 0, 1)
#define IP_S SK_IP4(198, 18, 0, 2)
#define MS SK_NS_PER_MS

/* ---- two engines and a wire (a FIFO of segments) ---- */

struct seg {
	uint32_t src, dst;
	size_t len;
	uint8_t data[1600];
};

struct node {
	struct tcp_stack st;
	void *arena;
};

static struct seg wire[4096];
static size_t wire_n;
static struct node srvn, clin;
static struct loop *L;
static void *Lmem;
static sk_time_ns T;

static int out(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst, const uint8_t *seg, size_t len)
{
	(void)ctx;
	(void)now;
	assert_true(wire_n < SK_ARRAY_LEN(wire) && len <= sizeof(wire[0].data));
	wire[wire_n] = (struct seg){.src = src, .dst = dst, .len = len};
	memcpy(wire[wire_n].data, seg, len);
	wire_n++;
	return 0;
}

static void node_init(struct node *n, uint32_t ip)
{
	struct tcp_config cfg;
	tcp_config_default(&cfg);
	cfg.local_ip = ip;
	cfg.max_sockets = 32;
	cfg.sndbuf = cfg.rcvbuf = 64 * 1024;
	cfg.seed[0] = ip;
	cfg.seed[1] = 42;
	cfg.ip_output = out;
	size_t sz = tcp_arena_size(&cfg);
	n->arena = calloc(1, sz);
	assert_non_null(n->arena);
	assert_int_equal(tcp_stack_init(&n->st, n->arena, sz, &cfg, 0), 0);
}

static int never_run(void *ctx, struct loop *l, volatile int *stop)
{
	(void)ctx;
	(void)l;
	(void)stop;
	return 0;
}

static struct tcp_event cev[64]; /* the client's last events */
static int cev_n;

/* One turn as loop_skiff.h prescribes, for both ends, until quiet. */
static void pump(void)
{
	for (int round = 0; round < 1000; round++) {
		loop_skiff_turn(L, T);
		size_t n = wire_n;
		static struct seg batch[4096];
		memcpy(batch, wire, n * sizeof(batch[0]));
		wire_n = 0;
		for (size_t i = 0; i < n; i++) {
			struct node *to = batch[i].dst == IP_S ? &srvn : &clin;
			tcp_input(&to->st, T, batch[i].src, batch[i].dst, batch[i].data, batch[i].len);
		}
		if (loop_skiff_next_deadline(L) <= T)
			loop_skiff_timers(L, T);
		tcp_poll(&srvn.st, T);
		tcp_poll(&clin.st, T);
		struct tcp_event ev[64];
		int k, moved = (int)n;
		while ((k = tcp_events(&srvn.st, ev, 64)) > 0) {
			loop_skiff_dispatch(L, ev, k, T);
			tcp_poll(&srvn.st, T);
			moved += k;
		}
		int c = tcp_events(&clin.st, cev + cev_n, (int)SK_ARRAY_LEN(cev) - cev_n);
		cev_n += c;
		moved += c;
		if (!moved && !wire_n)
			return;
	}
	fail_msg("the wire never went quiet");
}

static int setup(void **state)
{
	(void)state;
	wire_n = 0;
	cev_n = 0;
	T = 1000 * MS;
	node_init(&srvn, IP_S);
	node_init(&clin, IP_C);
	struct loop_skiff_config cfg = {
		.tcp = &srvn.st, .local_ip = IP_S, .max_timers = 40, .now = T,
		.plat = {.run = never_run},
	};
	size_t sz = loop_skiff_mem_size(&cfg);
	Lmem = malloc(sz + 3);
	/* Any alignment: start at an odd address. */
	L = loop_skiff_init((char *)Lmem + 3, sz, &cfg);
	assert_non_null(L);
	assert_string_equal(L->name, "skiff");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	loop_destroy(L);
	free(Lmem);
	free(srvn.arena);
	free(clin.arena);
	return 0;
}

/* ---- a raw application: records what it is told ---- */

struct rec {
	int calls, sock;
	unsigned ev;
};

static void rec_fn(void *user, int sock, unsigned ev, sk_time_ns now)
{
	(void)now;
	struct rec *r = user;
	r->calls++;
	r->sock = sock;
	r->ev |= ev;
}

static void test_ops(void **state)
{
	(void)state;
	struct sk_addr other = sk_addr_v4(SK_IP4(10, 0, 0, 1));
	assert_int_equal(loop_listen(L, &other, 80, 0), -SK_EADDRNOTAVAIL);
	/* An IPv6 address is not told apart from the others: refused. */
	assert_int_equal(loop_listen(L, &(struct sk_addr){{0x20, 0x01, 0, 2, [15] = 1}}, 80, 0),
			 -SK_EADDRNOTAVAIL);
	struct sk_addr mine = sk_addr_v4(IP_S);
	int ls = loop_listen(L, &mine, 80, 0);
	assert_true(ls >= 0);
	struct rec lr = {0}, cr = {0};
	assert_int_equal(loop_watch(L, 31, rec_fn, &lr), -SK_EBADF); /* not a socket */
	assert_int_equal(loop_watch(L, ls, rec_fn, &lr), 0);
	struct loop_peer peer;
	assert_int_equal(loop_accept(L, ls, &peer), -SK_EAGAIN);

	int c = tcp_connect(&clin.st, T, IP_S, 80);
	assert_true(c >= 0);
	pump();
	assert_true(lr.calls >= 1 && (lr.ev & LOOP_EV_ACCEPT));
	int s = loop_accept(L, ls, &peer);
	assert_true(s >= 0);
	assert_true(sk_addr_is_v4(&peer.addr));
	assert_int_equal(sk_addr_ip4(&peer.addr), IP_C);
	/* loop.h promises Nagle off on accepted sockets. */
	assert_int_equal(tcp_getsockopt(&srvn.st, s, TCP_SO_NODELAY), 1);
	assert_int_equal(loop_watch(L, s, rec_fn, &cr), 0);
	pump();
	/* The first edge was queued by accept and arrives once watched. */
	assert_true(cr.calls == 1 && (cr.ev & LOOP_EV_WRITE));

	cr = (struct rec){0};
	assert_int_equal(tcp_send(&clin.st, c, "hello", 5), 5);
	pump();
	assert_true(cr.calls == 1 && (cr.ev & LOOP_EV_READ));
	char buf[64];
	assert_int_equal(loop_read(L, s, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(loop_read(L, s, buf, sizeof(buf)), -SK_EAGAIN);
	struct loop_iov iov[2] = {{"ab", 2}, {"cde", 3}};
	assert_int_equal(loop_writev(L, s, iov, 2), 5);
	pump();
	assert_int_equal(tcp_recv(&clin.st, c, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "abcde", 5);

	/* Half-close: reads still work, writes are refused. */
	assert_int_equal(loop_shutdown(L, s), 0);
	assert_int_equal(loop_write(L, s, "x", 1), -SK_EPIPE);
	pump();
	assert_int_equal(tcp_recv(&clin.st, c, buf, sizeof(buf)), 0);
	assert_int_equal(tcp_send(&clin.st, c, "z", 1), 1);
	pump();
	assert_int_equal(loop_read(L, s, buf, sizeof(buf)), 1);

	/* After close no callback runs for the id, even for an event of the
	 * batch in hand (stale). */
	cr = (struct rec){0};
	struct tcp_event stale = {.sock = s, .events = TCP_EV_READ};
	assert_int_equal(loop_close(L, s), 0);
	loop_skiff_dispatch(L, &stale, 1, T);
	assert_int_equal(cr.calls, 0);
	tcp_close(&clin.st, T, c);
	pump();
	assert_int_equal(loop_close(L, ls), 0);
}

/* loop_connect from the loop's engine to the other one: WRITE when
 * established, NODELAY set, data both ways; to a closed port: ERROR
 * (with READ) and the read says why. */
static void test_connect(void **state)
{
	(void)state;
	int ls = tcp_listen(&clin.st, 81, 0);
	assert_true(ls >= 0);
	struct rec r = {0};
	struct sk_addr to_c = sk_addr_v4(IP_C);
	int c = loop_connect(L, &to_c, 81);
	assert_true(c >= 0);
	assert_int_equal(tcp_getsockopt(&srvn.st, c, TCP_SO_NODELAY), 1);
	assert_int_equal(loop_watch(L, c, rec_fn, &r), 0);
	pump();
	assert_true(r.calls >= 1 && (r.ev & LOOP_EV_WRITE) && !(r.ev & LOOP_EV_ERROR));
	int a = tcp_accept(&clin.st, ls, NULL, NULL);
	assert_true(a >= 0);
	assert_int_equal(loop_write(L, c, "hi", 2), 2);
	pump();
	char buf[16];
	assert_int_equal(tcp_recv(&clin.st, a, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "hi", 2);
	assert_int_equal(tcp_send(&clin.st, a, "yo", 2), 2);
	r = (struct rec){0};
	pump();
	assert_true(r.ev & LOOP_EV_READ);
	assert_int_equal(loop_read(L, c, buf, sizeof(buf)), 2);
	assert_int_equal(loop_close(L, c), 0);
	tcp_close(&clin.st, T, a);
	pump();

	r = (struct rec){0};
	c = loop_connect(L, &to_c, 82);
	assert_true(c >= 0);
	assert_int_equal(loop_watch(L, c, rec_fn, &r), 0);
	pump();
	assert_true((r.ev & LOOP_EV_ERROR) && (r.ev & LOOP_EV_READ));
	assert_int_equal(loop_read(L, c, buf, sizeof(buf)), -SK_ECONNREFUSED);
	assert_int_equal(loop_close(L, c), 0);
	tcp_close(&clin.st, T, ls);
	pump();
}

static int fired[8], nfired;
static struct loop_timer tm[3];
static void on_timer(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	fired[nfired++] = (int)(t - tm);
}

static void test_timers(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		tm[i] = (struct loop_timer){.fn = on_timer};
	nfired = 0;
	assert_int_equal(loop_skiff_next_deadline(L), SK_TIME_NEVER);
	loop_timer_set(L, &tm[0], T + 30 * MS);
	loop_timer_set(L, &tm[1], T + 10 * MS);
	loop_timer_set(L, &tm[2], T + 20 * MS);
	loop_timer_cancel(L, &tm[2]);
	assert_false(loop_timer_armed(&tm[2]));
	assert_int_equal(loop_skiff_next_deadline(L), T + 10 * MS);
	loop_skiff_timers(L, T + 5 * MS);
	assert_int_equal(nfired, 0);
	loop_skiff_timers(L, T + 30 * MS);
	assert_int_equal(nfired, 2);
	assert_int_equal(fired[0], 1);
	assert_int_equal(fired[1], 0);
	assert_int_equal(loop_skiff_next_deadline(L), SK_TIME_NEVER);
	/* loop_now is the turn's time. */
	loop_skiff_turn(L, T + 77);
	assert_int_equal(loop_now(L), T + 77);
}

/* The HTTP engine, unchanged, on this backend: one route answering a
 * fixed body, as `skiff serve` without --root does. */
#define HELLO "Hello from the loop.\n"
static int h_hello(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	return http_app_send(r, 200, HELLO, sizeof(HELLO) - 1);
}

static void test_http_app(void **state)
{
	(void)state;
	static const struct http_app_route routes[] = {{HTTP_GET, "/", false, h_hello, NULL}};
	static const struct http_app_def def = {.routes = routes, .nroutes = 1, .name = "hello"};
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.addr = sk_addr_v4(IP_S);
	cfg.port = 80;
	cfg.max_conns = 4;
	size_t sz = http_app_mem_size(&cfg);
	void *mem = calloc(1, sz);
	static struct http_app app;
	assert_int_equal(http_app_init(&app, mem, sz, &cfg, &def, L), 0);
	assert_int_equal(http_app_start(&app), 0);

	int c = tcp_connect(&clin.st, T, IP_S, 80);
	pump();
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n";
	assert_int_equal(tcp_send(&clin.st, c, req, sizeof(req) - 1), (int)sizeof(req) - 1);
	pump();
	char buf[2048];
	int n = tcp_recv(&clin.st, c, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(buf, HELLO));
	assert_non_null(strstr(buf, "HTTP/1.1 404 Not Found\r\n"));
	assert_true(strstr(buf, HELLO) < strstr(buf, "HTTP/1.1 404"));
	assert_int_equal(app.st.requests, 2);
	assert_int_equal(http_app_check(&app), 0);

	/* Idle keep-alive: the engine's timer closes it, through the heap. */
	T += cfg.keepalive_timeout + SK_NS_PER_S;
	pump();
	assert_int_equal(app.st.timeout_idle, 1);
	assert_int_equal(tcp_recv(&clin.st, c, buf, sizeof(buf)), 0);
	tcp_close(&clin.st, T, c);
	pump();
	http_app_stop(&app);
	assert_int_equal(app.nconns, 0);
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_app, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
