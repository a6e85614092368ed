/* bench_tls_mem.h — what the per-library TLS benchmarks (bench_tls_wolfssl.c,
 * bench_tls_gnutls.c) share: a byte pipe in memory between a client and a
 * server of the same library, the test certificate made at run time, and
 * the run itself (bt_run), which drives each library through the calls of
 * its struct bt_lib.  Each library runs in a process of its own, so that no
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

/* One connection: a client and a server of the library over two pipes.
 * A library's own connection struct starts with it (bt_lib's calls get
 * this pointer back and cast it). */
struct bt_conn {
	struct bt_pipe to_sv, to_cl;
};

/* One library, as bt_run drives it.  The calls marked (server) are the
 * ones timed; each dies (bt_die) on anything but success or "would
 * block".  psk_ke selects the settings of the psk_ke row (PSK without a
 * key exchange) instead of the default (X25519, and psk_dhe_ke on
 * resumption). */
struct bt_lib {
	const char *name; /* the rows' first word: "wolfssl" */
	/* Contexts, credentials, ticket keys, from bt_cert and bt_key;
	 * prints the "info|library|..." line.  teardown frees them. */
	void (*setup)(void);
	void (*teardown)(void);
	/* The client, offering session sess (NULL: none) */
	void (*client_new)(struct bt_conn *k, bool psk_ke, void *sess);
	void (*server_new)(struct bt_conn *k, bool psk_ke); /* (server) */
	/* One step of the handshake: true once that side has finished. */
	bool (*client_step)(struct bt_conn *k);
	bool (*server_step)(struct bt_conn *k); /* (server) */
	/* After the handshake: the client reads what came (the ticket, no
	 * data) and returns its session, for session_free. */
	void *(*client_session)(struct bt_conn *k);
	void (*session_free)(void *sess);
	/* NULL if the server resumed as psk_ke says, else what went wrong. */
	const char *(*resume_wrong)(struct bt_conn *k, bool psk_ke);
	void (*client_free)(struct bt_conn *k);
	void (*server_free)(struct bt_conn *k); /* (server) */
	/* Application data: bytes sent or read, <= 0 when none. */
	long (*send)(struct bt_conn *k, bool server, const void *b, size_t n);
	long (*recv)(struct bt_conn *k, bool server, void *b, size_t n);
	bool has_psk_ke; /* whether the library offers the psk_ke row */
};

static uint64_t bt_cyc; /* the server's cycles on the connection so far */

static inline void bt_conn_new(const struct bt_lib *L, struct bt_conn *k, bool psk_ke, void *sess)
{
	k->to_sv.r = k->to_sv.w = k->to_cl.r = k->to_cl.w = 0;
	L->client_new(k, psk_ke, sess);
	uint64_t t0 = tsc();
	L->server_new(k, psk_ke);
	bt_cyc = tsc() - t0;
}

/* Both sides to the end of the handshake, the server's ticket included. */
static inline void bt_handshake(const struct bt_lib *L, struct bt_conn *k)
{
	bool cdone = false, sdone = false;
	for (int i = 0; i < 10 && !(cdone && sdone); i++) {
		if (!cdone)
			cdone = L->client_step(k);
		if (!sdone && k->to_sv.w > k->to_sv.r) {
			uint64_t t0 = tsc();
			sdone = L->server_step(k);
			bt_cyc += tsc() - t0;
		}
	}
	if (!cdone || !sdone)
		bt_die("handshake did not finish");
}

static inline void bt_conn_free(const struct bt_lib *L, struct bt_conn *k)
{
	L->client_free(k);
	uint64_t t0 = tsc();
	L->server_free(k);
	bt_cyc += tsc() - t0;
}

static double bt_v[BT_REC > BT_HS ? BT_REC : BT_HS];

static inline void bt_row(const struct bt_lib *L, const char *what, size_t n)
{
	char name[160];
	snprintf(name, sizeof(name), "%s %s", L->name, what);
	report(name, bt_v, n);
}

/* Resumed handshakes, each on the ticket of the one before (a ticket is
 * for one use). */
static inline void bt_resumed(const struct bt_lib *L, struct bt_conn *k, bool psk_ke)
{
	bt_conn_new(L, k, psk_ke, NULL);
	bt_handshake(L, k);
	void *sess = L->client_session(k);
	bt_conn_free(L, k);
	for (int i = 0; i < BT_HS + BT_WARM; i++) {
		bt_conn_new(L, k, psk_ke, sess);
		bt_handshake(L, k);
		const char *wrong = L->resume_wrong(k, psk_ke);
		if (wrong)
			bt_die(wrong);
		L->session_free(sess);
		sess = L->client_session(k);
		bt_conn_free(L, k);
		if (i >= BT_WARM)
			bt_v[i - BT_WARM] = (double)bt_cyc;
	}
	bt_row(L, psk_ke ? "resumed handshake, psk_ke (no key exchange)"
			 : "resumed handshake, psk_dhe_ke (X25519)", BT_HS);
	L->session_free(sess);
}

/* The whole run: every row of the header's list.  k: the library's own
 * connection struct (static: the pipes are large). */
static inline int bt_run(const struct bt_lib *L, struct bt_conn *k)
{
	bt_calibrate();
	printf("info|tsc_ghz|%.3f\n", 1.0 / ns_per_cycle);
	bt_cert_make();
	L->setup();
	bt_cert_remove();
	for (int i = 0; i < BT_HS + BT_WARM; i++) {
		bt_conn_new(L, k, false, NULL);
		bt_handshake(L, k);
		bt_conn_free(L, k);
		if (i >= BT_WARM)
			bt_v[i - BT_WARM] = (double)bt_cyc;
	}
	bt_row(L, "full handshake (server, TLS 1.3, ECDSA P-256, X25519)", BT_HS);
	bt_resumed(L, k, false);
	if (L->has_psk_ke)
		bt_resumed(L, k, true);

	bt_conn_new(L, k, false, NULL);
	bt_handshake(L, k);
	L->session_free(L->client_session(k));
	static uint8_t plain[16384], back[16384];
	memset(plain, 'a', sizeof(plain));
	for (int i = 0; i < BT_REC; i++) {
		uint64_t t0 = tsc();
		long w = L->send(k, true, plain, sizeof(plain));
		bt_v[i] = (double)(tsc() - t0) / 16.0;
		if (w != (long)sizeof(plain))
			bt_die("seal");
		while (L->recv(k, false, back, sizeof(back)) > 0)
			;
	}
	bt_row(L, "seal, per KiB (16 KiB record, AES-128-GCM)", BT_REC);
	for (int i = 0; i < BT_REC; i++) {
		if (L->send(k, false, plain, sizeof(plain)) != (long)sizeof(plain))
			bt_die("client write");
		size_t got = 0;
		uint64_t t0 = tsc();
		while (got < sizeof(plain)) {
			long r = L->recv(k, true, back, sizeof(back));
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		bt_v[i] = (double)(tsc() - t0) / 16.0;
		if (got != sizeof(plain))
			bt_die("open");
	}
	bt_row(L, "open, per KiB (16 KiB record, AES-128-GCM)", BT_REC);
	bt_conn_free(L, k);
	L->teardown();
	return 0;
}

/* The main() of a library's process: its bt_lib made of the functions
 * every library file names alike (setup, teardown, client_new,
 * server_new, client_step, server_step, client_session, session_free,
 * resume_wrong, client_free, server_free, send_data, recv_data), run by
 * bt_run on the file's struct conn (its struct bt_conn k first). */
#define BT_MAIN(NAME, PSK_KE)                                                            \
	int main(void)                                                                   \
	{                                                                                \
		static const struct bt_lib lib = {                                       \
			.name = NAME, .setup = setup, .teardown = teardown,              \
			.client_new = client_new, .server_new = server_new,              \
			.client_step = client_step, .server_step = server_step,          \
			.client_session = client_session, .session_free = session_free,  \
			.resume_wrong = resume_wrong, .client_free = client_free,        \
			.server_free = server_free, .send = send_data, .recv = recv_data, \
			.has_psk_ke = PSK_KE,                                            \
		};                                                                       \
		static struct conn k;                                                    \
		return bt_run(&lib, &k.k);                                               \
	}

#endif
