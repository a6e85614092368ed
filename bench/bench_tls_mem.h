/* bench_tls_mem.h — what the per-library TLS benchmarks (bench_tls_wolfssl.c,
 * bench_tls_gnutls.c) share: a byte pipe in memory between a client and a
 * server of the same library, the test certificate made at run time, and
 * the run's shape.  Each library runs in a process of its own, so that no
 * two TLS libraries share one symbol table (libwolfssl exports a few
 * OpenSSL names).
 *
 * The rows (bench_report.h's "row|..." lines, per library NAME):
 *   NAME full handshake     TLS 1.3, ECDSA P-256 certificate, X25519,
 *                           AES-128-GCM: the server's calls from its
 *                           session's creation to the ticket sent, and its
 *                           release;
 *   NAME resumed psk_dhe    the same with the ticket of the connection
 *                           before (PSK with X25519, no signature);
 *   NAME resumed psk_ke     PSK alone, no key exchange (no forward secrecy),
 *                           where the library offers it;
 *   NAME seal / open        per KiB of one 16 KiB record.
 * Only the server's calls are timed; the client is the same library. */
#ifndef BENCH_BENCH_TLS_MEM_H
#define BENCH_BENCH_TLS_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_report.h"

enum { BT_HS = 300, BT_WARM = 10, BT_REC = 2000, BT_PIPE = 1 << 17 };

/* Bytes one side wrote and the other has not read: [r, w). */
struct bt_pipe {
	size_t r, w;
	uint8_t b[BT_PIPE];
};

static inline long bt_pipe_put(struct bt_pipe *p, const void *d, size_t n)
{
	if (p->r == p->w)
		p->r = p->w = 0;
	if (BT_PIPE - p->w < n) {
		memmove(p->b, p->b + p->r, p->w - p->r);
		p->w -= p->r;
		p->r = 0;
	}
	if (BT_PIPE - p->w < n)
		n = BT_PIPE - p->w;
	memcpy(p->b + p->w, d, n);
	p->w += n;
	return (long)n;
}

/* 0: empty (the caller says "would block"). */
static inline long bt_pipe_get(struct bt_pipe *p, void *d, size_t n)
{
	size_t have = p->w - p->r;
	if (n > have)
		n = have;
	memcpy(d, p->b + p->r, n);
	p->r += n;
	return (long)n;
}

static inline void bt_calibrate(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t c0 = tsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 200000000L);
	uint64_t c1 = tsc();
	double ns = (double)((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec));
	ns_per_cycle = ns / (double)(c1 - c0);
}

static inline void bt_die(const char *what)
{
	fprintf(stderr, "bench_tls: %s\n", what);
	exit(1);
}

/* An ECDSA P-256 key and a self-signed certificate for CN skiff-test,
 * made now by the openssl command into a temporary folder; the caller
 * loads them and calls bt_cert_remove. */
static char bt_dir[64], bt_cert[96], bt_key[96];
static inline void bt_cert_make(void)
{
	snprintf(bt_dir, sizeof(bt_dir), "/tmp/bench-tls.XXXXXX");
	if (!mkdtemp(bt_dir))
		bt_die("mkdtemp");
	snprintf(bt_cert, sizeof(bt_cert), "%s/c.pem", bt_dir);
	snprintf(bt_key, sizeof(bt_key), "%s/k.pem", bt_dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -nodes -days 1 -subj /CN=skiff-test -newkey ec "
		 "-pkeyopt ec_paramgen_curve:P-256 -keyout %s -out %s >/dev/null 2>&1",
		 bt_key, bt_cert);
	if (system(cmd) != 0)
		bt_die("openssl req (the test certificate)");
}

static inline void bt_cert_remove(void)
{
	unlink(bt_cert);
	unlink(bt_key);
	rmdir(bt_dir);
}

#endif
