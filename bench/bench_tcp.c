/* bench_tcp.c — cycles for the TCP engine's hot paths, engine only (no
 * device, no IP): a passive connection set up and torn down (4 segments in,
 * 3 out), a 1448-byte segment in on the established path (parse, checksum,
 * demux, copy, recv, delayed-ACK bookkeeping, poll), and one out (send, poll,
 * checksum).  Median and 99th percentile over 200,000 runs, rdtsc.
 *   make build/bench/bench_tcp && build/bench/bench_tcp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>
#include "net/tcp_int.h"
#include "wire/tcp.h"

static uint8_t lastseg[2048];
static size_t lastlen;
static int out(void *c, sk_time_ns now, uint32_t s, uint32_t d, const uint8_t *seg, size_t len)
{
	(void)c; (void)now; (void)s; (void)d;
	memcpy(lastseg, seg, len < 64 ? len : 64);
	lastlen = len;
	return 0;
}
#define L SK_IP4(10,0,0,1)
#define P SK_IP4(10,0,0,2)
static uint8_t buf[2048];
static size_t mk(uint8_t fl, uint32_t seq, uint32_t ack, uint16_t plen, uint16_t sport)
{
	struct tcp_hdr h; memset(&h, 0, sizeof h);
	h.sport = sport; h.dport = 80; h.seq = seq; h.ack = ack; h.flags = fl; h.win = 65535;
	return tcp_emit(buf, sizeof buf, &h, P, L, plen);
}
static int cmp(const void *a, const void *b) { uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; return x < y ? -1 : x > y; }
static void report(const char *name, uint64_t *v, int n)
{
	qsort(v, n, 8, cmp);
	printf("%-34s median %6llu  p99 %6llu cycles\n", name, (unsigned long long)v[n/2], (unsigned long long)v[n*99/100]);
}
int main(void)
{
	struct tcp_config cfg; tcp_config_default(&cfg);
	cfg.local_ip = L; cfg.ip_output = out; cfg.max_sockets = 1024; cfg.seed[0] = 7;
	size_t sz = tcp_arena_size(&cfg); void *arena = malloc(sz);
	static struct tcp_stack st;
	tcp_stack_init(&st, arena, sz, &cfg, 0);
	int ls = tcp_listen(&st, 80, 0);
	enum { N = 200000 };
	static uint64_t v[N], v2[N];
	sk_time_ns now = 1;
	/* setup + teardown */
	for (int i = 0; i < N; i++) {
		uint16_t sp = (uint16_t)(1024 + i % 60000);
		uint64_t t0 = __rdtsc();
		size_t n = mk(TCP_SYN, 1000, 0, 0, sp);
		tcp_input(&st, now, P, L, buf, n);
		tcp_poll(&st, now);
		uint32_t iss = sk_get_be32(lastseg + 4);
		n = mk(TCP_ACK, 1001, iss + 1, 0, sp);
		tcp_input(&st, now, P, L, buf, n);
		int s = tcp_accept(&st, ls, NULL, NULL);
		n = mk(TCP_ACK | TCP_FIN, 1001, iss + 1, 0, sp);
		tcp_input(&st, now, P, L, buf, n);
		tcp_close(&st, now, s);
		tcp_poll(&st, now);
		n = mk(TCP_ACK, 1002, iss + 2, 0, sp);
		tcp_input(&st, now, P, L, buf, n);
		v[i] = __rdtsc() - t0;
		if (st.nfree != cfg.max_sockets - 1) { printf("leak\n"); return 1; }
		struct tcp_event ev[8]; tcp_events(&st, ev, 8);
	}
	report("setup+teardown (passive)", v, N);
	/* established: segment in (1448 B, delayed ACK) + recv; segment out */
	size_t n = mk(TCP_SYN, 1000, 0, 0, 5555);
	tcp_input(&st, now, P, L, buf, n); tcp_poll(&st, now);
	uint32_t iss = sk_get_be32(lastseg + 4);
	n = mk(TCP_ACK, 1001, iss + 1, 0, 5555);
	tcp_input(&st, now, P, L, buf, n);
	int s = tcp_accept(&st, ls, NULL, NULL);
	tcp_setsockopt(&st, s, TCP_SO_NODELAY, 1);
	uint32_t seq = 1001, una = iss + 1;
	static uint8_t rb[4096];
	for (int i = 0; i < N; i++) {
		n = mk(TCP_ACK, seq, una, 1448, 5555);
		now += 1000;
		uint64_t t0 = __rdtsc();
		tcp_input(&st, now, P, L, buf, n);
		tcp_recv(&st, s, rb, sizeof rb);
		tcp_poll(&st, now);
		v[i] = __rdtsc() - t0;
		seq += 1448;
		t0 = __rdtsc();
		tcp_send(&st, s, rb, 1448);
		tcp_poll(&st, now);
		v2[i] = __rdtsc() - t0;
		una += 1448;
		n = mk(TCP_ACK, seq, una, 0, 5555);
		tcp_input(&st, now, P, L, buf, n);
	}
	report("segment in (1448 B, recv, poll)", v, N);
	report("segment out (send 1448 B, poll)", v2, N);
	printf("sizeof(struct tcp_sock) = %zu\n", sizeof(struct tcp_sock));
	return 0;
}
