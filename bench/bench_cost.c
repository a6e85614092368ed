/* bench_cost.c — the rows of the cost report (make bench-cost) that can be
 * timed in one process, in cycles (lfenced rdtsc) and ns:
 *
 *   timer      loop/timerq.h arm + cancel of one timer, and net/timer.h
 *              set + remove of one id, each in a heap already holding
 *              1,000 other deadlines (a busy server); 64 pairs per sample.
 *   http       one keep-alive request inside the HTTP engine (http/app.c):
 *              the readiness callback of a connection on the fake loop
 *              (loop_host/loop_fake.h, shared with the engine's unit
 *              tests) from the read of "GET / HTTP/1.1" to the response
 *              handed to writev; one request per sample.  Twice: the
 *              answer `skiff serve` gives without --root (its return
 *              route, through the sites router), and the files handler
 *              answering the same GET / with a 41-byte index.html.
 *              And a connection per request (http-close): connect, one
 *              request with "Connection: close", the answer and the FIN,
 *              the client's close, timed from the accept to the engine's
 *              close.  `http-return`, `http-files` and `http-close` run one
 *              of the three (for valgrind --tool=callgrind, whose
 *              instruction counts compare builds where the TSC's steps are
 *              too coarse).
 *   tcp        two engines (net/tcp.h) back to back, no wire, no device:
 *              "segment in" = tcp_input of a 41-byte data segment on an
 *              established connection; "segment out" = tcp_send of a
 *              41-byte answer + the tcp_poll that emits it (ACK
 *              piggybacked); "accept to close" = every call the server
 *              engine and its application make for one connection: SYN in,
 *              SYN-ACK out, ACK in, accept, request in, answer + FIN out,
 *              FIN/ACK in, close.  Checksums are computed and verified as
 *              on the wire.
 *   tcp6       the same three rows over IPv6 (2001:2::1 -> 2001:2::2 through
 *              tcp_input6 and cfg.ip6_output): what the engine's v6 edges
 *              (pseudo header, the 36-byte tuple's hash) add per segment.
 *   park/wake  two threads on two CPUs, each parked in epoll_wait on its
 *              own eventfd; a write wakes the other, which answers: one
 *              round trip (two wakeups, four system calls a side).  Also
 *              both threads on one CPU.
 *
 * Output: one line per row, "row|name|samples|med_cyc|p99_cyc|med_ns|p99_ns",
 * read by bench/http/cost.py.  Every sample subtracts the median cost of an
 * empty timed region.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bench_report.h"
#include "conf/sites_conf.h"
#include "http/app.h"
#include "http/file_answer.h"
#include "http/files_handler.h"
#include "loop_host/loop_fake.h"
#include "loop/timerq.h"
#include "net/tcp.h"
#include "net/timer.h"
#include "router/sites.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double overhead;

static void calibrate(void)
{
	uint64_t n0 = mono_ns(), c0 = tsc();
	while (mono_ns() - n0 < 200000000ull)
		;
	uint64_t n1 = mono_ns(), c1 = tsc();
	ns_per_cycle = (double)(n1 - n0) / (double)(c1 - c0);
	enum { N = 100001 };
	static double v[N];
	for (int i = 0; i < N; i++) {
		uint64_t a = tsc(), b = tsc();
		v[i] = (double)(b - a);
	}
	qsort(v, N, sizeof(*v), cmp_double);
	overhead = v[N / 2];
	printf("info|tsc_ghz|%.3f\ninfo|timer_overhead_cycles|%.0f\n", 1.0 / ns_per_cycle,
	       overhead);
}

static double sample(uint64_t t0, uint64_t t1, unsigned per)
{
	double d = (double)(t1 - t0) - overhead;
	return (d < 0 ? 0 : d) / per;
}

/* ---------------------------------------------------------------- timers */
#define BG 1000
#define PAIRS 64
#define TSAMPLES 20000

static void bench_timers(void)
{
	static double v[TSAMPLES];
	static struct loop_timer bg[BG], t[PAIRS];
	static struct loop_timer *heap[BG + PAIRS];
	struct timerq q;
	timerq_init(&q, heap, BG + PAIRS);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < BG; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		timerq_set(&q, &bg[i], (sk_time_ns)(1000000 + x % 60000000000ull));
	}
	for (int s = 0; s < TSAMPLES; s++) {
		sk_time_ns base = 1000000 + (sk_time_ns)(x % 60000000000ull);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t t0 = tsc();
		for (int i = 0; i < PAIRS; i++) {
			timerq_set(&q, &t[i], base + (sk_time_ns)i * 1000);
			timerq_cancel(&q, &t[i]);
		}
		uint64_t t1 = tsc();
		v[s] = sample(t0, t1, PAIRS);
	}
	report("timer arm+cancel (loop timerq, 1000 armed)", v, TSAMPLES);

	static uint32_t ids[BG + PAIRS], pos[BG + PAIRS];
	static sk_time_ns keys[BG + PAIRS];
	struct timer_heap h;
	timer_heap_init(&h, ids, keys, pos, BG + PAIRS);
	for (uint32_t i = 0; i < BG; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		timer_heap_set(&h, i, (sk_time_ns)(1000000 + x % 60000000000ull));
	}
	for (int s = 0; s < TSAMPLES; s++) {
		sk_time_ns base = 1000000 + (sk_time_ns)(x % 60000000000ull);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t t0 = tsc();
		for (uint32_t i = 0; i < PAIRS; i++) {
			timer_heap_set(&h, BG + i, base + (sk_time_ns)i * 1000);
			timer_heap_set(&h, BG + i, SK_TIME_NEVER);
		}
		uint64_t t1 = tsc();
		v[s] = sample(t0, t1, PAIRS);
	}
	report("timer set+remove (tcp timer heap, 1000 armed)", v, TSAMPLES);
}

/* ------------------------------------------------------------ http engine */
#define HSAMPLES 200000

/* `skiff serve`'s answer without --root: its route = / { return 200
 * HELLO; } (conf/sites_flags.c), through the sites router, as the
 * runtime runs it. */
#define HELLO "Hello, world! This is skiff serving you.\n"
static const char serve_conf[] = "site bench {\n"
				 "    listen 198.18.0.2:80;\n"
				 "    default;\n"
				 "    route = / { return 200 \"Hello, world! This is skiff serving you.\\n\"; }\n"
				 "}\n";

/* `skiff serve --root DIR` for the same GET /: the files handler finds
 * the directory and its index.html, the 41-byte hello (from memory: the
 * hosted file cache in front of it is not timed). */
static const struct http_file root_dir = {.is_dir = true};
static struct http_file root_index = { /* prepared as serve's file cache does */.data = (const uint8_t *)HELLO, .len = sizeof(HELLO) - 1,
					    .ctype = "text/html", .mtime = 784111777};

static const struct http_file *root_lookup(void *ctx, const char *path, size_t len)
{
	(void)ctx;
	if (len == 1 && path[0] == '/')
		return &root_dir;
	if (len == 11 && !memcmp(path, "/index.html", 11))
		return &root_index;
	return NULL;
}

/* The HTTP engine for def on a fresh fake loop, listening, with a fixed
 * Date: its memory (the caller frees it), or NULL (said on stderr). */
static void *app_on_fake(struct http_app *app, struct loop_fake *fk, const struct http_app_def *def,
			 unsigned max_conns)
{
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = max_conns;
	loop_fake_init(fk, 1000 * SK_NS_PER_S);
	size_t sz = http_app_mem_size(&cfg);
	void *mem = calloc(1, sz);
	if (!mem || http_app_init(app, mem, sz, &cfg, def, &fk->base) || http_app_start(app)) {
		fprintf(stderr, "bench_cost: engine init failed\n");
		free(mem);
		return NULL;
	}
	http_app_set_date(app, "Sun, 06 Nov 1994 08:49:37 GMT");
	return mem;
}

/* One keep-alive connection on the fake loop, the request pushed and its
 * readiness event timed, HSAMPLES times (after 1,000 untimed). */
static int bench_http(const struct http_app_def *def, const char *name, const char *bytes_info)
{
	static struct loop_fake fk;
	static struct http_app app;
	static double v[HSAMPLES];
	static const char req[] = "GET / HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: ApacheBench/2.3\r\n"
				  "Accept: */*\r\n\r\n";
	void *mem = app_on_fake(&app, &fk, def, 4);
	if (!mem)
		return -1;
	int s = loop_fake_connect(&fk, 2);
	struct loop_fake_sock *k = &fk.s[s];
	if (!k->fn) {
		fprintf(stderr, "bench_cost: the engine did not watch the connection\n");
		return -1;
	}
	k->out_discard = true; /* count the responses, keep none */
	for (int i = -1000; i < HSAMPLES; i++) {
		loop_fake_push(&fk, s, req, sizeof(req) - 1);
		fk.now += 10000;
		uint64_t t0 = tsc();
		loop_fake_event(&fk, s, LOOP_EV_READ);
		uint64_t t1 = tsc();
		if (i >= 0)
			v[i] = sample(t0, t1, 1);
	}
	if (app.st.requests != HSAMPLES + 1000 || app.st.resp_2xx != app.st.requests ||
	    !k->open) {
		fprintf(stderr, "bench_cost: %s: %llu requests, %llu answered 2xx\n", name,
			(unsigned long long)app.st.requests, (unsigned long long)app.st.resp_2xx);
		return -1;
	}
	printf("info|%s|%.0f\n", bytes_info, (double)k->out_bytes / (double)app.st.requests);
	report(name, v, HSAMPLES);
	http_app_stop(&app);
	free(mem);
	return 0;
}

/* A connection per request on the same engine: the client connects, sends
 * one request with "Connection: close", reads the answer and the server's
 * FIN (or close), and closes its side; timed from the connect (the listener's accept
 * and watch) to the engine's close of the socket, HSAMPLES connections
 * (after 1,000 untimed), eight sockets in turn.  What `ab` without -k
 * costs the application, apart from TCP (the accept to close row). */
static int bench_http_close(const struct http_app_def *def, const char *name)
{
	static struct loop_fake fk;
	static struct http_app app;
	static double v[HSAMPLES];
	static const char req[] = "GET / HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: ApacheBench/2.3\r\n"
				  "Accept: */*\r\nConnection: close\r\n\r\n";
	void *mem = app_on_fake(&app, &fk, def, 16);
	if (!mem)
		return -1;
	uint64_t bytes = 0;
	for (int i = -1000; i < HSAMPLES; i++) {
		int s = 2 + (i & 7);
		fk.now += 10000;
		uint64_t t0 = tsc();
		loop_fake_connect(&fk, s);
		struct loop_fake_sock *k = &fk.s[s];
		k->out_discard = true;
		loop_fake_send(&fk, s, req, sizeof(req) - 1);
		bool shut = k->shut || !k->open; /* a FIN, or closed at once (no lingering) */
		if (k->open)
			loop_fake_eof(&fk, s);
		uint64_t t1 = tsc();
		if (!shut || k->open) {
			fprintf(stderr, "bench_cost: %s: connection %d: %s\n", name, i,
				!shut ? "no FIN after the answer" : "not closed after the client's");
			free(mem);
			return -1;
		}
		bytes += k->out_bytes;
		if (i >= 0)
			v[i] = sample(t0, t1, 1);
	}
	if (app.st.requests != HSAMPLES + 1000 || app.st.resp_2xx != app.st.requests ||
	    app.nconns != 0) {
		fprintf(stderr, "bench_cost: %s: %llu requests, %llu answered 2xx, %u open\n", name,
			(unsigned long long)app.st.requests, (unsigned long long)app.st.resp_2xx,
			app.nconns);
		free(mem);
		return -1;
	}
	printf("info|http_close_response_bytes|%.0f\n", (double)bytes / (double)app.st.requests);
	report(name, v, HSAMPLES);
	http_app_stop(&app);
	free(mem);
	return 0;
}

static int bench_http_rows(bool ret_row, bool files_row, bool close_row)
{
	static struct sconf conf;
	struct sconf_err err;
	size_t asz = sites_conf_arena_bound(sizeof(serve_conf));
	void *arena = calloc(1, asz);
	if (!arena) {
		fprintf(stderr, "bench_cost: no memory for the configuration\n");
		return -1;
	}
	if (sites_conf_parse(serve_conf, sizeof(serve_conf) - 1, NULL, arena, asz, &conf, &err) < 0) {
		fprintf(stderr, "bench_cost: the serve configuration: %u:%u: %s\n", err.pos.line,
			err.pos.col, err.msg);
		return -1;
	}
	sites_conf_defaults(&conf);
	static struct sites_handler h[1][SCONF_MAX_ROUTES]; /* return: the router's own */
	static struct sites_gen gen;
	static struct sites sites;
	static struct sites_listener sl;
	gen = (struct sites_gen){.conf = &conf, .h = h};
	sites_swap(&sites, &gen);
	sl = (struct sites_listener){.s = &sites, .li = 0};
	static struct http_app_route serve_route;
	sites_route(&sl, &serve_route);
	static const struct http_app_def serve_def = {.routes = &serve_route, .nroutes = 1,
						      .name = "serve"};
	if (ret_row && bench_http(&serve_def, "http keep-alive request (parse to response enqueued)",
				  "http_response_bytes") < 0)
		return -1;
	if (ret_row && sites.st.returns != HSAMPLES + 1000) {
		fprintf(stderr, "bench_cost: the return route ran %llu times\n",
			(unsigned long long)sites.st.returns);
		return -1;
	}
	if (close_row && bench_http_close(&serve_def, "http connection per request (accept to close)") < 0)
		return -1;

	static char root_vals[64]; /* its validators' arena (as serve's tree has one) */
	if (http_file_prepare_len(&root_index) > sizeof(root_vals))
		return -1;
	http_file_prepare(&root_index, root_vals);
	static struct http_files files = {.lookup = root_lookup};
	static const struct http_app_route files_route = {HTTP_APP_ANY, "/", true, http_files_handle,
							  &files};
	static const struct http_app_def files_def = {.routes = &files_route, .nroutes = 1,
						      .name = "files"};
	int rc = !files_row ? 0 : bench_http(&files_def, "http keep-alive file request (files handler, GET / -> index.html)",
			    "http_file_response_bytes");
	free(arena);
	return rc;
}

/* ------------------------------------------------------------- tcp pair */
#define QMAX 64
struct segq {
	struct {
		struct sk_addr src, dst; /* v4 as ::ffff:a.b.c.d (base/sk_addr.h) */
		size_t len;
		uint8_t b[2048];
	} s[QMAX];
	int n;
	int overflow;
	uint32_t ip; /* the owner's; its v6 one is 2001:2::(ip & 255) (addr6_of) */
};

static int q_put(void *ctx, const struct sk_addr *src, const struct sk_addr *dst,
		 const uint8_t *seg, size_t len)
{
	struct segq *q = ctx;
	if (q->n == QMAX || len > sizeof(q->s[0].b)) {
		q->overflow++;
		return 0;
	}
	q->s[q->n].src = *src;
	q->s[q->n].dst = *dst;
	q->s[q->n].len = len;
	memcpy(q->s[q->n].b, seg, len);
	q->n++;
	return 0;
}

static int q_out(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst, const uint8_t *seg,
		 size_t len)
{
	(void)now;
	struct sk_addr s = sk_addr_v4(src), d = sk_addr_v4(dst);
	return q_put(ctx, &s, &d, seg, len);
}

static int q_out6(void *ctx, sk_time_ns now, const struct sk_addr *src, const struct sk_addr *dst,
		  const uint8_t *seg, size_t len)
{
	(void)now;
	return q_put(ctx, src, dst, seg, len);
}

/* The v6 address of an engine: 2001:2::N, N its IPv4 address's last byte. */
static struct sk_addr addr6_of(uint32_t ip)
{
	uint8_t b[SK_ADDR_LEN] = {0x20, 0x01, 0x00, 0x02};
	b[15] = (uint8_t)ip;
	return sk_addr_v6(b);
}

static bool src6_of(void *ctx, const struct sk_addr *dst, struct sk_addr *src)
{
	(void)dst;
	*src = addr6_of(((const struct segq *)ctx)->ip);
	return true;
}

struct engine {
	struct tcp_stack st;
	void *arena;
	struct segq q;
};

static int engine_init(struct engine *e, uint32_t ip, uint32_t max_sockets)
{
	e->q.ip = ip;
	struct tcp_config cfg;
	tcp_config_default(&cfg);
	cfg.local_ip = ip;
	cfg.max_sockets = max_sockets;
	cfg.sndbuf = 16 * 1024;
	cfg.rcvbuf = 16 * 1024;
	cfg.seed[0] = 0x0123456789abcdefull ^ ip;
	cfg.seed[1] = 0xfedcba9876543210ull;
	cfg.ip_output = q_out;
	cfg.ip6_output = q_out6;
	cfg.src6 = src6_of;
	cfg.out_ctx = &e->q; /* for src6_of too */
	size_t sz = tcp_arena_size(&cfg);
	e->arena = calloc(1, sz);
	if (!e->arena)
		return -1;
	return tcp_stack_init(&e->st, e->arena, sz, &cfg, 0);
}

/* Cycles of one timed region, the timing overhead taken out. */
static uint64_t region(uint64_t t0, uint64_t t1)
{
	double d = (double)(t1 - t0) - overhead;
	return d > 0 ? (uint64_t)d : 0;
}

/* Deliver everything `from` queued to `to`; returns cycles spent in
 * to's tcp_input. */
static uint64_t deliver(struct engine *from, struct engine *to, sk_time_ns now)
{
	uint64_t c = 0;
	for (int i = 0; i < from->q.n; i++) {
		const struct sk_addr *src = &from->q.s[i].src, *dst = &from->q.s[i].dst;
		uint64_t t0 = tsc();
		if (sk_addr_is_v4(dst))
			tcp_input(&to->st, now, sk_addr_ip4(src), sk_addr_ip4(dst), from->q.s[i].b,
				  from->q.s[i].len);
		else
			tcp_input6(&to->st, now, src, dst, from->q.s[i].b, from->q.s[i].len);
		c += region(t0, tsc());
	}
	from->q.n = 0;
	return c;
}

#define TSEG 100000
#define TCONN 5000
#define IP_A SK_IP4(198, 18, 0, 1)
#define IP_B SK_IP4(198, 18, 0, 2)

/* v6: the same rows over IPv6 ("tcp6 ..."). */
static int bench_tcp(bool v6)
{
	static struct engine a, b;
	static double vin[TSEG], vout[TSEG], vconn[TCONN];
	static const char msg[41] = "Hello, world! This is skiff serving you.\n";
	char buf[4096];
	if (engine_init(&a, IP_A, 16384) || engine_init(&b, IP_B, 16384)) {
		fprintf(stderr, "bench_cost: tcp engine init failed\n");
		return -1;
	}
	sk_time_ns now = SK_NS_PER_S;
	const struct sk_addr dst_b = v6 ? addr6_of(IP_B) : sk_addr_v4(IP_B);
	const char *fam = v6 ? "tcp6" : "tcp";
	char name[96];
	int ls = tcp_listen(&b.st, 80, 0);
	int ca = tcp_connect_addr(&a.st, now, &dst_b, 80);
	if (ls < 0 || ca < 0) {
		fprintf(stderr, "bench_cost: listen %d connect %d\n", ls, ca);
		return -1;
	}
	int sb = -1;
	for (int i = 0; i < 20 && sb < 0; i++) {
		tcp_poll(&a.st, now);
		deliver(&a, &b, now);
		tcp_poll(&b.st, now);
		deliver(&b, &a, now);
		sb = tcp_accept(&b.st, ls, NULL, NULL);
		now += 10000;
	}
	if (sb < 0) {
		fprintf(stderr, "bench_cost: no connection established\n");
		return -1;
	}
	int bad = 0;
	for (int s = -1000; s < TSEG; s++) {
		now += 20000;
		/* The client sends 41 bytes: one segment to B. */
		if (tcp_send(&a.st, ca, msg, sizeof(msg)) != (int)sizeof(msg))
			bad++;
		tcp_poll(&a.st, now);
		if (a.q.n != 1)
			bad++;
		uint64_t cin = deliver(&a, &b, now);
		/* The server reads it and answers. */
		if (tcp_recv(&b.st, sb, buf, sizeof(buf)) != (int)sizeof(msg))
			bad++;
		uint64_t t0 = tsc();
		tcp_send(&b.st, sb, msg, sizeof(msg));
		tcp_poll(&b.st, now);
		uint64_t t1 = tsc();
		deliver(&b, &a, now);
		tcp_recv(&a.st, ca, buf, sizeof(buf));
		tcp_poll(&a.st, now); /* a delayed ACK, if any is due */
		deliver(&a, &b, now);
		if (s >= 0) {
			vin[s] = (double)cin;
			vout[s] = sample(t0, t1, 1);
		}
	}
	if (bad) {
		fprintf(stderr, "bench_cost: %d unexpected results on the established path\n", bad);
		return -1;
	}
	snprintf(name, sizeof(name), "%s segment in (established, 41 B, %s)", fam,
		 v6 ? "tcp_input6" : "tcp_input");
	report(name, vin, TSEG);
	snprintf(name, sizeof(name), "%s segment out (41 B answer: tcp_send + tcp_poll)", fam);
	report(name, vout, TSEG);

	/* Accept to close: the server engine's and application's calls only. */
	int n = 0;
	bad = 0;
	for (int c = -200; c < TCONN; c++) {
		uint64_t cyc = 0, t0;
		now += 100000;
		int cc = tcp_connect_addr(&a.st, now, &dst_b, 80);
		if (cc < 0) {
			bad++;
			break;
		}
		tcp_poll(&a.st, now);
		cyc += deliver(&a, &b, now); /* SYN */
		t0 = tsc();
		tcp_poll(&b.st, now);        /* SYN-ACK */
		cyc += region(t0, tsc());
		deliver(&b, &a, now);
		tcp_poll(&a.st, now);        /* ACK */
		tcp_send(&a.st, cc, msg, sizeof(msg));
		tcp_poll(&a.st, now);        /* the request */
		cyc += deliver(&a, &b, now);
		t0 = tsc();
		int s = tcp_accept(&b.st, ls, NULL, NULL);
		int r = s >= 0 ? tcp_recv(&b.st, s, buf, sizeof(buf)) : -1;
		if (s >= 0) {
			tcp_send(&b.st, s, msg, sizeof(msg));
			tcp_close(&b.st, now, s);
		}
		tcp_poll(&b.st, now);        /* answer + FIN */
		cyc += region(t0, tsc());
		if (s < 0 || r != (int)sizeof(msg)) {
			bad++;
			break;
		}
		deliver(&b, &a, now);
		tcp_recv(&a.st, cc, buf, sizeof(buf));
		tcp_close(&a.st, now, cc);
		tcp_poll(&a.st, now);        /* ACK + FIN */
		cyc += deliver(&a, &b, now);
		t0 = tsc();
		tcp_poll(&b.st, now);        /* final ACK, if any */
		cyc += region(t0, tsc());
		deliver(&b, &a, now);
		if (c >= 0)
			vconn[n++] = (double)cyc;
	}
	if (bad || n == 0) {
		fprintf(stderr, "bench_cost: accept-to-close loop failed after %d connections\n", n);
		return -1;
	}
	snprintf(name, sizeof(name), "%s accept to close (server engine + app, one request)", fam);
	report(name, vconn, (size_t)n);
	free(a.arena);
	free(b.arena);
	return 0;
}

/* ------------------------------------------------------------ park/wake */
struct parker {
	int efd, ep;
	int cpu;
};

static struct parker pk[2];
#define PW_ROUNDS 20000
static volatile int pw_stop;

static void park(struct parker *p)
{
	struct epoll_event ev;
	uint64_t val;
	while (epoll_wait(p->ep, &ev, 1, -1) < 0 && errno == EINTR)
		;
	if (read(p->efd, &val, sizeof(val)) < 0)
		perror("read");
}

static void wake(struct parker *p)
{
	uint64_t one = 1;
	if (write(p->efd, &one, sizeof(one)) < 0)
		perror("write");
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *echo_thread(void *arg)
{
	(void)arg;
	pin(pk[1].cpu);
	for (;;) {
		park(&pk[1]);
		if (pw_stop)
			break;
		wake(&pk[0]);
	}
	return NULL;
}

static int bench_park(int cpu_a, int cpu_b, const char *name)
{
	static double v[PW_ROUNDS];
	for (int i = 0; i < 2; i++) {
		pk[i].efd = eventfd(0, EFD_NONBLOCK);
		pk[i].ep = epoll_create1(0);
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
		if (pk[i].efd < 0 || pk[i].ep < 0 ||
		    epoll_ctl(pk[i].ep, EPOLL_CTL_ADD, pk[i].efd, &ev) < 0) {
			perror("bench_cost: eventfd/epoll");
			return -1;
		}
	}
	pk[0].cpu = cpu_a;
	pk[1].cpu = cpu_b;
	pw_stop = 0;
	pthread_t th;
	cpu_set_t old;
	sched_getaffinity(0, sizeof(old), &old);
	pin(cpu_a);
	if (pthread_create(&th, NULL, echo_thread, NULL)) {
		fprintf(stderr, "bench_cost: pthread_create failed\n");
		return -1;
	}
	for (int s = -500; s < PW_ROUNDS; s++) {
		uint64_t t0 = tsc();
		wake(&pk[1]);
		park(&pk[0]);
		uint64_t t1 = tsc();
		if (s >= 0)
			v[s] = sample(t0, t1, 1);
	}
	pw_stop = 1;
	wake(&pk[1]);
	pthread_join(th, NULL);
	sched_setaffinity(0, sizeof(old), &old);
	for (int i = 0; i < 2; i++) {
		close(pk[i].efd);
		close(pk[i].ep);
	}
	report(name, v, PW_ROUNDS);
	return 0;
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "all";
	static const char *const rows[] = {"all", "timer", "http", "http-return", "http-files",
					   "http-close", "tcp", "tcp6", "park"};
	bool known = false;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		known |= !strcmp(only, rows[i]);
	if (argc > 2 || !known) {
		FILE *o = !strcmp(only, "--help") || !strcmp(only, "-h") ? stdout : stderr;
		fprintf(o, "usage: bench_cost [all|timer|http|http-return|http-files|http-close|tcp|tcp6|park]\n"
			   "  the rows of make bench-cost's report, timed in one process (see the\n"
			   "  comment at the top of bench/bench_cost.c); all by default\n");
		return o == stdout ? 0 : 2;
	}
	int rc = 0;
	calibrate();
	if (!strcmp(only, "all") || !strcmp(only, "timer"))
		bench_timers();
	bool all = !strcmp(only, "all") || !strcmp(only, "http");
	if (all || !strcmp(only, "http-return") || !strcmp(only, "http-files") ||
	    !strcmp(only, "http-close"))
		rc |= bench_http_rows(all || !strcmp(only, "http-return"),
				      all || !strcmp(only, "http-files"),
				      all || !strcmp(only, "http-close"));
	if (!strcmp(only, "all") || !strcmp(only, "tcp")) {
		if (bench_tcp(false))
			printf("pending|tcp|the engine pair did not complete; see stderr\n");
	}
	if (!strcmp(only, "all") || !strcmp(only, "tcp6")) {
		if (bench_tcp(true))
			printf("pending|tcp6|the engine pair did not complete; see stderr\n");
	}
	if (!strcmp(only, "all") || !strcmp(only, "park")) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n >= 2)
			rc |= bench_park(0, 1, "park/wake round trip, two CPUs (eventfd + epoll_wait)");
		rc |= bench_park(0, 0, "park/wake round trip, one CPU (eventfd + epoll_wait)");
	}
	return rc ? 1 : 0;
}
