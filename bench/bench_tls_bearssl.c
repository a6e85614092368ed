/* bench_tls_bearssl.c — what the unikernel's TLS engine (src/tls/
 * tls_bearssl.c, BearSSL 0.6, built hosted) costs on the server side, in
 * cycles (lfenced rdtsc) and ns, in one process on a real CPU (the guest
 * runs the same code; under TCG it is emulated, so its own figures say
 * nothing about the engine).  The client is OpenSSL on memory BIOs; only
 * the server engine's calls are timed (conn_new, records_in, step, read,
 * write, out_peek/out_consume, conn_free).
 *
 *   full handshake     TLS 1.2, ECDSA P-256 certificate, X25519,
 *                      ECDHE-ECDSA-AES128-GCM-SHA256;
 *   resumed handshake  the same offering the session ID of an earlier one
 *                      (no key exchange, no signature);
 *   seal, per KiB      one 16 KiB write sealed into one record, per KiB;
 *   open, per KiB      one 16 KiB record from the client opened and read.
 *
 * Output: bench_tls's lines ("row|name|samples|med_cyc|p99_cyc|med_ns|
 * p99_ns", "info|..."). */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "bench_report.h"
#include "base/sk_err.h"
#include "tls/tls_bearssl.h"

static const struct tls_engine_ops *E = &tls_bearssl_ops;
static uint8_t buf[1 << 16];
static uint64_t srv; /* server cycles of the current connection */

static void die(const char *what)
{
	fprintf(stderr, "bench_tls_bearssl: %s\n", what);
	exit(1);
}

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

static int rnd(void *p, size_t n)
{
	return getrandom(p, n, 0) == (ssize_t)n ? 0 : -1;
}

static struct tls_ctx *server(void)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	if (!k || X509_sign(x, k, EVP_sha256()) <= 0)
		die("certificate");
	BIO *bc = BIO_new(BIO_s_mem()), *bk = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(bc, x);
	PEM_write_bio_PrivateKey(bk, k, NULL, NULL, 0, NULL, NULL);
	static char cert[8192], key[8192];
	int cl = BIO_read(bc, cert, sizeof(cert)), kl = BIO_read(bk, key, sizeof(key));
	struct tls_bearssl_config cfg = {.max_conns = 2, .random = rnd};
	size_t n = tls_bearssl_mem_size(&cfg);
	void *mem = aligned_alloc(16, (n + 15) & ~(size_t)15);
	char err[200];
	struct tls_ctx *t = tls_bearssl_server(mem, n, &cfg, cert, (size_t)cl, key, (size_t)kl, err,
					       sizeof(err));
	if (!t)
		die(err);
	return t;
}

struct pair {
	SSL *cl;
	BIO *in, *out;
	struct tls_conn *sv;
};

static void to_server(struct pair *p, bool app)
{
	int n;
	while ((n = BIO_read(p->out, buf, sizeof(buf))) > 0) {
		uint64_t t0 = tsc();
		for (int off = 0; off < n;) {
			size_t room = E->in_room(p->sv), k = (size_t)(n - off) < room ? (size_t)(n - off) : room;
			E->records_in(p->sv, buf + off, k);
			off += (int)k;
			E->step(p->sv);
			const uint8_t *q;
			size_t m;
			while ((m = E->out_peek(p->sv, &q)) > 0) { /* mono buffer: out before more in */
				uint64_t t1 = tsc();
				srv -= t1;
				BIO_write(p->in, q, (int)m);
				srv += tsc();
				E->out_consume(p->sv, m);
			}
		}
		if (app)
			while (E->read(p->sv, buf, sizeof(buf)) > 0)
				;
		srv += tsc() - t0;
	}
}

static void to_client(struct pair *p)
{
	const uint8_t *q;
	for (;;) {
		uint64_t t0 = tsc();
		size_t n = E->out_peek(p->sv, &q);
		srv += tsc() - t0;
		if (!n)
			break;
		BIO_write(p->in, q, (int)n);
		t0 = tsc();
		E->out_consume(p->sv, n);
		srv += tsc() - t0;
	}
}

static void pair_new(struct pair *p, SSL_CTX *cctx, struct tls_ctx *t, SSL_SESSION *s)
{
	p->cl = SSL_new(cctx);
	p->in = BIO_new(BIO_s_mem());
	p->out = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(p->in, -1);
	SSL_set_bio(p->cl, p->in, p->out);
	SSL_set_connect_state(p->cl);
	if (s)
		SSL_set_session(p->cl, s);
	srv = 0;
	uint64_t t0 = tsc();
	p->sv = E->conn_new(t);
	srv += tsc() - t0;
	if (!p->sv)
		die("conn_new");
}

static void pair_free(struct pair *p)
{
	SSL_shutdown(p->cl);
	SSL_free(p->cl);
	uint64_t t0 = tsc();
	E->conn_free(p->sv);
	srv += tsc() - t0;
}

static void handshake(struct pair *p)
{
	for (int i = 0; i < 10; i++) {
		int r = SSL_do_handshake(p->cl);
		to_server(p, false);
		to_client(p);
		if (r == 1 && E->handshake_done(p->sv))
			return;
	}
	die("handshake");
}

int main(void)
{
	calibrate();
	printf("info|tsc_ghz|%.3f\n", 1.0 / ns_per_cycle);
	struct tls_ctx *t = server();
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_min_proto_version(cctx, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION);
	SSL_CTX_set_options(cctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_cipher_list(cctx, "ECDHE-ECDSA-AES128-GCM-SHA256");
	SSL_CTX_set1_groups_list(cctx, "X25519:P-256");
	enum { HS = 200, REC = 2000 };
	static double vf[HS], vr[HS], vs[REC], vo[REC];
	struct pair p;
	SSL_SESSION *sess = NULL;
	for (int i = 0; i < HS + 5; i++) {
		pair_new(&p, cctx, t, NULL);
		handshake(&p);
		if (i == HS + 4)
			sess = SSL_get1_session(p.cl);
		pair_free(&p);
		if (i >= 5)
			vf[i - 5] = (double)srv;
	}
	report("bearssl full handshake (server, TLS 1.2, ECDSA P-256, X25519)", vf, HS);
	for (int i = 0; i < HS + 5; i++) {
		pair_new(&p, cctx, t, sess);
		handshake(&p);
		if (!E->resumed(p.sv))
			die("not resumed");
		pair_free(&p);
		if (i >= 5)
			vr[i - 5] = (double)srv;
	}
	report("bearssl resumed handshake (server, TLS 1.2 session ID)", vr, HS);
	pair_new(&p, cctx, t, NULL);
	handshake(&p);
	static uint8_t plain[16384];
	memset(plain, 'a', sizeof(plain));
	for (int i = 0; i < REC; i++) {
		uint64_t t0 = tsc();
		if (E->write(p.sv, plain, sizeof(plain)) != (long)sizeof(plain))
			die("seal");
		vs[i] = (double)(tsc() - t0) / 16.0;
		to_client(&p);
		while (SSL_read(p.cl, buf, sizeof(buf)) > 0)
			;
	}
	report("bearssl seal, per KiB (16 KiB record, AES-128-GCM)", vs, REC);
	for (int i = 0; i < REC; i++) {
		if (SSL_write(p.cl, plain, sizeof(plain)) != (int)sizeof(plain))
			die("client write");
		srv = 0;
		to_server(&p, true);
		vo[i] = (double)srv / 16.0;
	}
	report("bearssl open, per KiB (16 KiB record, AES-128-GCM)", vo, REC);
	pair_free(&p);
	SSL_SESSION_free(sess);
	SSL_CTX_free(cctx);
	return 0;
}
