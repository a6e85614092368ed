/* loop_linux_test.c — the epoll backend on real loopback sockets (127.0.0.1,
 * an ephemeral port): accept, edge-triggered reads, gathered writes,
 * TCP_NODELAY inherited from the listener, timers by absolute deadline. */
#include <setjmp.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop_host/loop_linux.h"
#include "plat/plat.h"

static struct loop *L;
static volatile int stop;
static int lsock, csock = -1;
static char got[256];
static size_t got_len;
static int timer_fires;
static sk_time_ns timer_at, fired_at;

static void on_conn(void *user, int sock, unsigned ev, sk_time_ns now)
{
	(void)user; (void)now;
	if (!(ev & LOOP_EV_READ))
		return;
	for (;;) { /* edge contract: until EAGAIN or a short read */
		long n = loop_read(L, sock, got + got_len, sizeof(got) - got_len);
		if (n <= 0)
			break;
		got_len += (size_t)n;
		if (memchr(got, '\n', got_len)) {
			struct loop_iov iov[2] = {{"echo:", 5}, {got, got_len}};
			assert_int_equal(loop_writev(L, sock, iov, 2), 5 + (long)got_len);
			stop = 1;
			break;
		}
	}
}

static void on_accept(void *user, int sock, unsigned ev, sk_time_ns now)
{
	(void)user; (void)now;
	assert_true(ev & LOOP_EV_ACCEPT);
	struct loop_peer peer;
	int s;
	while ((s = loop_accept(L, sock, &peer)) >= 0) {
		assert_true(sk_addr_is_v4(&peer.addr));
		assert_int_equal(sk_addr_ip4(&peer.addr), 0x7f000001u);
		int v = 0;
		socklen_t vl = sizeof(v);
		assert_int_equal(getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &vl), 0);
		assert_int_not_equal(v, 0); /* inherited from the listener */
		csock = s;
		assert_int_equal(loop_watch(L, s, on_conn, NULL), 0);
	}
	assert_int_equal(s, -SK_EAGAIN);
}

static void on_timer(struct loop_timer *t, sk_time_ns now)
{
	(void)t;
	timer_fires++;
	fired_at = now;
	stop = 1;
}

static const struct sk_addr LOOPBACK4 = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}};

/* A listener on one IPv6 address (::1): an IPv6 peer connects, and the
 * same port on 127.0.0.1 is not that listener's (IPV6_V6ONLY); on ::, an
 * IPv4 peer arrives too. */
static void test_listen_v6_address(void **st)
{
	(void)st;
	char err[128];
	struct loop_linux_config cfg = {.max_timers = 8};
	L = loop_linux_create(&cfg, err, sizeof(err));
	assert_non_null(L);
	int probe = socket(AF_INET6, SOCK_STREAM, 0);
	if (probe < 0) {
		/* No IPv6 in this kernel: the listener must say so, not fall back. */
		assert_true(loop_listen(L, &(struct sk_addr){{[15] = 1}}, 0, 0) < 0);
		loop_destroy(L);
		return;
	}
	close(probe);
	int ls6 = loop_listen(L, &(struct sk_addr){{[15] = 1}}, 0, 0);
	assert_true(ls6 >= 0);
	struct sockaddr_in6 a6;
	socklen_t sl = sizeof(a6);
	assert_int_equal(getsockname(ls6, (struct sockaddr *)&a6, &sl), 0);
	assert_int_equal(a6.sin6_family, AF_INET6);
	assert_int_equal(a6.sin6_addr.s6_addr[15], 1);
	int c6 = socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(connect(c6, (struct sockaddr *)&a6, sizeof(a6)), 0);
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = a6.sin6_port,
				 .sin_addr.s_addr = htonl(0x7f000001u)};
	int c4 = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c4, (struct sockaddr *)&a4, sizeof(a4)), -1);
	assert_int_equal(errno, ECONNREFUSED);
	close(c4);
	struct loop_peer peer;
	int s = loop_accept(L, ls6, &peer);
	assert_true(s >= 0);
	assert_false(sk_addr_is_v4(&peer.addr));
	loop_close(L, s);
	close(c6);
	loop_close(L, ls6);
	/* :: takes both families: an IPv4 peer arrives mapped. */
	int lany = loop_listen(L, &(struct sk_addr){0}, 0, 0);
	assert_true(lany >= 0);
	assert_int_equal(getsockname(lany, (struct sockaddr *)&a6, &sl), 0);
	a4.sin_port = a6.sin6_port;
	c4 = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c4, (struct sockaddr *)&a4, sizeof(a4)), 0);
	s = loop_accept(L, lany, &peer);
	assert_true(s >= 0);
	assert_true(sk_addr_is_v4(&peer.addr));
	assert_int_equal(sk_addr_ip4(&peer.addr), 0x7f000001u);
	loop_close(L, s);
	close(c4);
	loop_close(L, lany);
	loop_destroy(L);
}

static void test_accept_read_write(void **st)
{
	(void)st;
	char err[128];
	struct loop_linux_config cfg = {.max_timers = 8};
	L = loop_linux_create(&cfg, err, sizeof(err));
	assert_non_null(L);
	lsock = loop_listen(L, &LOOPBACK4, 0, 0);
	assert_true(lsock >= 0);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	assert_int_equal(getsockname(lsock, (struct sockaddr *)&sa, &sl), 0);
	assert_int_equal(loop_watch(L, lsock, on_accept, NULL), 0);

	int c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(c, "hello\n", 6), 6);
	/* a safety timer so a broken loop cannot hang the test */
	struct loop_timer guard = {.fn = on_timer};
	loop_timer_set(L, &guard, loop_now(L) + 5 * SK_NS_PER_S);
	stop = 0;
	assert_int_equal(loop_run(L, &stop), 0);
	assert_int_equal(timer_fires, 0);
	loop_timer_cancel(L, &guard);
	char buf[64];
	ssize_t n = read(c, buf, sizeof(buf));
	assert_int_equal(n, 11);
	assert_memory_equal(buf, "echo:hello\n", 11);

	/* end of stream shows up as READ with a 0 read */
	close(c);
	assert_int_equal(loop_close(L, csock), 0);
	loop_close(L, lsock);
	loop_destroy(L);
}

/* A request and the peer's FIN already queued when the loop wakes: one
 * edge.  The callback takes a short read as "drained" (loop.h allows it)
 * and returns; the loop must call it again so it reads the 0. */
static int eof_calls, eof_seen;

static void on_conn_short(void *user, int sock, unsigned ev, sk_time_ns now)
{
	(void)user; (void)now;
	if (!(ev & LOOP_EV_READ))
		return;
	eof_calls++;
	char b[256];
	long n = loop_read(L, sock, b, sizeof(b));
	if (n == 0) {
		eof_seen = 1;
		stop = 1;
	}
	/* n > 0 and short: stop here, as app.c does */
}

static void on_accept_short(void *user, int sock, unsigned ev, sk_time_ns now)
{
	(void)user; (void)now;
	(void)ev;
	struct loop_peer peer;
	int s;
	while ((s = loop_accept(L, sock, &peer)) >= 0) {
		csock = s;
		assert_int_equal(loop_watch(L, s, on_conn_short, NULL), 0);
	}
}

static void test_eof_after_short_read(void **st)
{
	(void)st;
	char err[128];
	struct loop_linux_config cfg = {.max_timers = 8};
	L = loop_linux_create(&cfg, err, sizeof(err));
	assert_non_null(L);
	lsock = loop_listen(L, &LOOPBACK4, 0, 0);
	assert_true(lsock >= 0);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	assert_int_equal(getsockname(lsock, (struct sockaddr *)&sa, &sl), 0);
	assert_int_equal(loop_watch(L, lsock, on_accept_short, NULL), 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* Accepted and watched before anything arrives. */
	struct loop_timer guard = {.fn = on_timer};
	loop_timer_set(L, &guard, loop_now(L) + 200 * SK_NS_PER_MS);
	stop = 0;
	timer_fires = 0;
	assert_int_equal(loop_run(L, &stop), 0);
	assert_true(csock >= 0);
	/* Both queued before the loop looks again. */
	assert_int_equal(write(c, "GET / HTTP/1.0\r\n\r\n", 18), 18);
	assert_int_equal(shutdown(c, SHUT_WR), 0);
	usleep(20000);
	eof_calls = eof_seen = 0;
	timer_fires = 0;
	loop_timer_set(L, &guard, loop_now(L) + 2 * SK_NS_PER_S);
	stop = 0;
	assert_int_equal(loop_run(L, &stop), 0);
	assert_int_equal(timer_fires, 0); /* no wait for the guard */
	assert_int_equal(eof_seen, 1);
	assert_int_equal(eof_calls, 2);
	loop_timer_cancel(L, &guard);
	close(c);
	assert_int_equal(loop_close(L, csock), 0);
	csock = -1;
	loop_close(L, lsock);
	loop_destroy(L);
}

static void test_timer_deadline(void **st)
{
	(void)st;
	char err[128];
	struct loop_linux_config cfg = {.max_timers = 8};
	L = loop_linux_create(&cfg, err, sizeof(err));
	assert_non_null(L);
	struct loop_timer t = {.fn = on_timer}, later = {.fn = on_timer};
	sk_time_ns now = loop_now(L);
	timer_at = now + 30 * SK_NS_PER_MS;
	loop_timer_set(L, &later, now + 10 * SK_NS_PER_S);
	loop_timer_set(L, &t, timer_at);
	timer_fires = 0;
	stop = 0;
	assert_int_equal(loop_run(L, &stop), 0);
	assert_int_equal(timer_fires, 1);
	assert_true(fired_at >= timer_at);            /* never early */
	assert_true(fired_at < timer_at + SK_NS_PER_S); /* and not parked past it */
	assert_false(loop_timer_armed(&t));
	assert_true(loop_timer_armed(&later));
	loop_destroy(L);
}

/* loop_connect: the first edge is the verdict.  To a listener: WRITE,
 * NODELAY set, data flows; to a closed port: ERROR and the next read says
 * ECONNREFUSED once. */
static unsigned conn_ev;
static int conn_calls;
static void on_connect(void *user, int sock, unsigned ev, sk_time_ns now)
{
	(void)user; (void)sock; (void)now;
	conn_ev |= ev;
	conn_calls++;
	stop = 1;
}

static void test_connect(void **st)
{
	(void)st;
	char err[128];
	struct loop_linux_config cfg = {.max_timers = 8};
	L = loop_linux_create(&cfg, err, sizeof(err));
	assert_non_null(L);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001u)};
	socklen_t sl = sizeof(sa);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ls, 8), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
	uint16_t port = ntohs(sa.sin_port);

	struct loop_timer guard = {.fn = on_timer};
	struct sk_addr lo = sk_addr_v4(0x7f000001u);
	int c = loop_connect(L, &lo, port);
	assert_true(c >= 0);
	int v = 0;
	socklen_t vl = sizeof(v);
	assert_int_equal(getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &vl), 0);
	assert_int_not_equal(v, 0);
	assert_int_equal(loop_watch(L, c, on_connect, NULL), 0);
	conn_ev = 0;
	conn_calls = 0;
	timer_fires = 0;
	loop_timer_set(L, &guard, loop_now(L) + 5 * SK_NS_PER_S);
	stop = 0;
	assert_int_equal(loop_run(L, &stop), 0);
	assert_int_equal(timer_fires, 0);
	assert_true(conn_ev & LOOP_EV_WRITE);
	assert_false(conn_ev & LOOP_EV_ERROR);
	assert_int_equal(loop_write(L, c, "ping", 4), 4);
	int a = accept(ls, NULL, NULL);
	assert_true(a >= 0);
	char buf[8];
	assert_int_equal(read(a, buf, sizeof(buf)), 4);
	close(a);
	loop_close(L, c);

	/* Refused: close the listener, connect to its port again. */
	close(ls);
	c = loop_connect(L, &lo, port);
	assert_true(c >= 0);
	assert_int_equal(loop_watch(L, c, on_connect, NULL), 0);
	conn_ev = 0;
	stop = 0;
	assert_int_equal(loop_run(L, &stop), 0);
	assert_int_equal(timer_fires, 0);
	assert_true(conn_ev & LOOP_EV_ERROR);
	assert_true(conn_ev & LOOP_EV_READ);
	assert_int_equal(loop_read(L, c, buf, sizeof(buf)), -SK_ECONNREFUSED);
	/* Once: afterwards Linux reads the dead socket as end of stream. */
	assert_true(loop_read(L, c, buf, sizeof(buf)) <= 0);
	loop_close(L, c);
	loop_timer_cancel(L, &guard);
	loop_destroy(L);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_read_write),
		cmocka_unit_test(test_listen_v6_address),
		cmocka_unit_test(test_eof_after_short_read),
		cmocka_unit_test(test_timer_deadline),
		cmocka_unit_test(test_connect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
