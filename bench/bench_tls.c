/* bench_tls.c — the TLS rows of the cost report (make bench-cost): what
 * skiff's TLS engine (src/tls/tls_openssl.c, OpenSSL 3 behind
 * tls_engine.h) costs on the server side, in cycles (lfenced rdtsc) and
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
 * The certificate and key are made at start, in memory (written to a
 * temporary file for the engine, then removed).  Output: "row|name|samples|
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
#include <x86intrin.h>

#include "base/sk_err.h"
#include "tls/tls_engine.h"

static inline uint64_t tsc(void)
{
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

static double ns_per_cycle;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *name, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	double med = v[n / 2], p99 = v[(size_t)((double)n * 0.99)];
	printf("row|%s|%zu|%.1f|%.1f|%.1f|%.1f\n", name, n, med, p99, med * ns_per_cycle,
	       p99 * ns_per_cycle);
	fflush(stdout);
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

static void die(const char *what)
{
	fprintf(stderr, "bench_tls: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

static struct tls_ctx *server_ctx(void)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	if (!k || !x)
		die("key generation");
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"bench", -1, -1, 0);
	X509_set_issuer_name(x, n);
	if (X509_sign(x, k, EVP_sha256()) <= 0)
		die("certificate");
	char cert[] = "/tmp/skiff-bench-tls-crt-XXXXXX", key[] = "/tmp/skiff-bench-tls-key-XXXXXX";
	int fc = mkstemp(cert), fk = mkstemp(key);
	FILE *f1 = fc >= 0 ? fdopen(fc, "w") : NULL, *f2 = fk >= 0 ? fdopen(fk, "w") : NULL;
	if (!f1 || !f2 || !PEM_write_X509(f1, x) || !PEM_write_PrivateKey(f2, k, NULL, NULL, 0, NULL, NULL))
		die("temporary PEM files");
	fclose(f1);
	fclose(f2);
	char err[256];
	struct tls_ctx *t = tls_openssl_server(cert, key, err, sizeof(err));
	unlink(cert);
	unlink(key);
	if (!t)
		die(err);
	X509_free(x);
	EVP_PKEY_free(k);
	return t;
}

static const struct tls_engine_ops *E = &tls_openssl_ops;
static uint8_t buf[1 << 16];

struct pair {
	SSL *cl;
	BIO *c_in, *c_out; /* the client's: records to it, records from it */
	struct tls_conn *sv;
	uint64_t cyc;      /* server-side cycles so far */
};

static void pair_new(struct pair *p, SSL_CTX *cctx, struct tls_ctx *sctx, SSL_SESSION *sess)
{
	p->cl = SSL_new(cctx);
	p->c_in = BIO_new(BIO_s_mem());
	p->c_out = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(p->c_in, -1);
	SSL_set_bio(p->cl, p->c_in, p->c_out);
	SSL_set_connect_state(p->cl);
	if (sess && SSL_set_session(p->cl, sess) != 1)
		die("SSL_set_session");
	uint64_t t0 = tsc();
	p->sv = E->conn_new(sctx); /* the server pays it per connection: timed */
	p->cyc = tsc() - t0;
	if (!p->cl || !p->sv)
		die("connection");
}

static void pair_free(struct pair *p)
{
	/* Freed without its close_notify, OpenSSL would mark the client's
	 * session unresumable. */
	SSL_shutdown(p->cl);
	SSL_free(p->cl);
	uint64_t t0 = tsc();
	E->conn_free(p->sv);
	p->cyc += tsc() - t0;
}

/* Client records to the server engine, timed. */
static void to_server(struct pair *p, bool app)
{
	int n;
	while ((n = BIO_read(p->c_out, buf, sizeof(buf))) > 0) {
		uint64_t t0 = tsc();
		E->records_in(p->sv, buf, (size_t)n);
		if (E->step(p->sv) != TLS_OK)
			die("server handshake");
		if (app)
			while (E->read(p->sv, buf, sizeof(buf)) > 0)
				;
		p->cyc += tsc() - t0;
	}
}

/* Server records to the client; the peek and consume are timed. */
static void to_client(struct pair *p)
{
	const uint8_t *q;
	for (;;) {
		uint64_t t0 = tsc();
		size_t n = E->out_peek(p->sv, &q);
		p->cyc += tsc() - t0;
		if (!n)
			break;
		BIO_write(p->c_in, q, (int)n);
		t0 = tsc();
		E->out_consume(p->sv, n);
		p->cyc += tsc() - t0;
	}
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
	die("handshake did not finish");
}

/* A byte from the server, so the client reads the ticket that came
 * before it; then the client's session, resumable. */
static SSL_SESSION *take_session(struct pair *p)
{
	if (E->write(p->sv, "x", 1) != 1)
		die("server write");
	to_client(p);
	if (SSL_read(p->cl, buf, sizeof(buf)) != 1)
		die("client read");
	return SSL_get1_session(p->cl);
}

int main(void)
{
	calibrate();
	printf("info|tsc_ghz|%.3f\n", 1.0 / ns_per_cycle);
	struct tls_ctx *sctx = server_ctx();
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	if (!cctx)
		die("client context");
	SSL_CTX_set_min_proto_version(cctx, TLS1_3_VERSION);
	SSL_CTX_set_ciphersuites(cctx, "TLS_AES_128_GCM_SHA256");
	SSL_CTX_set1_groups_list(cctx, "X25519");
	SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL);

	enum { HS = 300, REC = 2000 };
	static double vf[HS], vr[HS], vs[REC], vo[REC];
	struct pair p;
	SSL_SESSION *sess = NULL;
	for (int i = 0; i < HS + 10; i++) {
		pair_new(&p, cctx, sctx, NULL);
		handshake(&p);
		uint64_t hs = p.cyc;
		if (i == HS + 9)
			sess = take_session(&p);
		p.cyc = 0;
		pair_free(&p);
		if (i >= 10)
			vf[i - 10] = (double)(hs + p.cyc);
	}
	report("tls full handshake (server, TLS 1.3, ECDSA P-256, X25519)", vf, HS);
	int resumed = 0;
	for (int i = 0; i < HS + 10; i++) {
		pair_new(&p, cctx, sctx, sess);
		handshake(&p);
		resumed += SSL_session_reused(p.cl) == 1;
		uint64_t hs = p.cyc;
		SSL_SESSION *next = take_session(&p); /* single-use tickets: take the new one */
		SSL_SESSION_free(sess);
		sess = next;
		p.cyc = 0;
		pair_free(&p);
		if (i >= 10)
			vr[i - 10] = (double)(hs + p.cyc);
	}
	if (resumed != HS + 10)
		die("a handshake did not resume");
	report("tls resumed handshake (server, TLS 1.3 ticket, X25519)", vr, HS);

	/* Records on one established connection. */
	pair_new(&p, cctx, sctx, NULL);
	handshake(&p);
	SSL_SESSION_free(take_session(&p));
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
	report("tls seal, per KiB (16 KiB record, AES-128-GCM)", vs, REC);
	for (int i = 0; i < REC; i++) {
		if (SSL_write(p.cl, plain, sizeof(plain)) != (int)sizeof(plain))
			die("client write");
		p.cyc = 0;
		to_server(&p, true);
		vo[i] = (double)p.cyc / 16.0;
	}
	report("tls open, per KiB (16 KiB record, AES-128-GCM)", vo, REC);
	pair_free(&p);
	SSL_SESSION_free(sess);
	SSL_CTX_free(cctx);
	tls_openssl_free(sctx);
	return 0;
}
