/* bench_tls.c — the TLS rows of the cost report (make bench-cost): what
 * skiff's TLS engine (src/tls/tls_openssl.c, OpenSSL 3 behind
 * tls_engine.h; with `--engine gnutls` src/tls/tls_gnutls.c, GnuTLS 3.7)
 * costs on the server side, in cycles (lfenced rdtsc) and
 * ns, in one process: the client is OpenSSL too, on memory BIOs, and only
 * the server engine's calls are timed (conn_new, records_in, step, read,
 * write, out_peek/out_consume, conn_free), never the client's.
 *
 *   full handshake     TLS 1.3, ECDSA P-256 certificate, X25519, AES-128-GCM:
 *                      the ClientHello in, the server's flight out, the
 *                      client's Finished in (and the ticket out);
 *   resumed handshake  the same with the ticket of an earlier connection
 *                      (PSK with (EC)DHE: X25519 again, no signature);
 *   seal, per KiB      one 16 KiB write sealed into one record, per KiB;
 *   open, per KiB      one 16 KiB record from the client opened and read,
 *                      per KiB.
 *
 * The certificate and key are made at start (tls/tls_testcert.h).  Output: "row|name|samples|
 * med_cyc|p99_cyc|med_ns|p99_ns" and "info|..." lines, as bench_cost's,
 * read by bench/http/cost.py. */
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_report.h"
#include "base/sk_err.h"
#include "tls/tls_engine.h"
#include "tls/tls_host.h"
#include "tls/tls_testcert.h"


static void calibrate(void)
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

static void die(const char *what)
{
	fprintf(stderr, "bench_tls: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

static const struct tls_engine_ops *E;
static uint8_t buf[1 << 16];

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--engine")) {
		tls_testcert_engine = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: bench_tls [--engine openssl|gnutls]\n");
		return 2;
	}
	calibrate();
	printf("info|tsc_ghz|%.3f\n", 1.0 / ns_per_cycle);
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	E = tls_host_ops(sctx);
	printf("info|engine|%s\n", E->name);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	SSL_CTX_set_ciphersuites(cctx, "TLS_AES_128_GCM_SHA256");
	SSL_CTX_set1_groups_list(cctx, "X25519");

	enum { HS = 300, REC = 2000 };
	static double vf[HS], vr[HS], vs[REC], vo[REC];
	struct tls_testpair p;
	SSL_SESSION *sess = NULL;
	for (int i = 0; i < HS + 10; i++) {
		tls_testpair_new(&p, cctx, sctx, NULL, tsc);
		if (!tls_testpair_handshake(&p))
			die("handshake");
		uint64_t hs = p.server_cycles;
		if (i == HS + 9)
			sess = tls_testpair_session(&p);
		p.server_cycles = 0;
		tls_testpair_free(&p);
		if (i >= 10)
			vf[i - 10] = (double)(hs + p.server_cycles);
	}
	report("tls full handshake (server, TLS 1.3, ECDSA P-256, X25519)", vf, HS);
	int resumed = 0;
	for (int i = 0; i < HS + 10; i++) {
		tls_testpair_new(&p, cctx, sctx, sess, tsc);
		if (!tls_testpair_handshake(&p))
			die("handshake");
		resumed += SSL_session_reused(p.cl) == 1;
		uint64_t hs = p.server_cycles;
		SSL_SESSION *next = tls_testpair_session(&p); /* single-use tickets: take the new one */
		SSL_SESSION_free(sess);
		sess = next;
		p.server_cycles = 0;
		tls_testpair_free(&p);
		if (i >= 10)
			vr[i - 10] = (double)(hs + p.server_cycles);
	}
	if (resumed != HS + 10)
		die("a handshake did not resume");
	report("tls resumed handshake (server, TLS 1.3 ticket, X25519)", vr, HS);

	/* Records on one established connection. */
	tls_testpair_new(&p, cctx, sctx, NULL, tsc);
	if (!tls_testpair_handshake(&p))
		die("handshake");
	SSL_SESSION_free(tls_testpair_session(&p));
	static uint8_t plain[16384];
	memset(plain, 'a', sizeof(plain));
	for (int i = 0; i < REC; i++) {
		uint64_t t0 = tsc();
		if (E->write(p.sv, plain, sizeof(plain)) != (long)sizeof(plain))
			die("seal");
		vs[i] = (double)(tsc() - t0) / 16.0;
		tls_testpair_to_client(&p);
		while (SSL_read(p.cl, buf, sizeof(buf)) > 0)
			;
	}
	report("tls seal, per KiB (16 KiB record, AES-128-GCM)", vs, REC);
	for (int i = 0; i < REC; i++) {
		if (SSL_write(p.cl, plain, sizeof(plain)) != (int)sizeof(plain))
			die("client write");
		p.server_cycles = 0;
		tls_testpair_to_server(&p, true);
		vo[i] = (double)p.server_cycles / 16.0;
	}
	report("tls open, per KiB (16 KiB record, AES-128-GCM)", vo, REC);
	tls_testpair_free(&p);
	SSL_SESSION_free(sess);
	SSL_CTX_free(cctx);
	tls_host_free(sctx);
	return 0;
}
