/* tls_testcert.c — see tls_testcert.h. */
#include "tls_testcert.h"

#include "tls_host.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "tls_testcert: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

/* A new key (ECDSA P-256, or RSA 2048 with rsa) and a self-signed
 * certificate for CN cn on it, valid for a day.  The caller frees both. */
static void make_cert(const char *cn, bool rsa, X509 **xp, EVP_PKEY **kp)
{
	EVP_PKEY *k = rsa ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
	X509 *x = X509_new();
	if (!k || !x)
		die("key generation");
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
				   -1, 0);
	X509_set_issuer_name(x, n);
	if (X509_sign(x, k, EVP_sha256()) <= 0)
		die("certificate");
	*xp = x;
	*kp = k;
}

void tls_testcert_files(const char *cn, char cert[32], char key[32])
{
	X509 *x;
	EVP_PKEY *k;
	make_cert(cn, false, &x, &k);
	snprintf(cert, 32, "/tmp/skiff-tls-crt-XXXXXX");
	snprintf(key, 32, "/tmp/skiff-tls-key-XXXXXX");
	int fc = mkstemp(cert), fk = mkstemp(key);
	FILE *f1 = fc >= 0 ? fdopen(fc, "w") : NULL, *f2 = fk >= 0 ? fdopen(fk, "w") : NULL;
	if (!f1 || !f2 || !PEM_write_X509(f1, x) ||
	    !PEM_write_PrivateKey(f2, k, NULL, NULL, 0, NULL, NULL))
		die("temporary PEM files");
	fclose(f1);
	fclose(f2);
	X509_free(x);
	EVP_PKEY_free(k);
}

/* A memory BIO's text into out (cap bytes, NUL-terminated): its length. */
static size_t bio_text(BIO *b, char *out, size_t cap)
{
	int n = BIO_read(b, out, (int)cap - 1);
	if (n <= 0 || BIO_pending(b) > 0)
		die("PEM text longer than its buffer");
	out[n] = 0;
	return (size_t)n;
}

void tls_testcert_pem(struct tls_testpem *p, const char *cn, bool rsa)
{
	X509 *x;
	EVP_PKEY *k;
	make_cert(cn, rsa, &x, &k);
	BIO *bc = BIO_new(BIO_s_mem()), *bk = BIO_new(BIO_s_mem());
	if (!bc || !bk || PEM_write_bio_X509(bc, x) != 1 ||
	    PEM_write_bio_PrivateKey(bk, k, NULL, NULL, 0, NULL, NULL) != 1)
		die("PEM in memory");
	p->cert_len = bio_text(bc, p->cert, sizeof(p->cert));
	p->key_len = bio_text(bk, p->key, sizeof(p->key));
	BIO_free(bc);
	BIO_free(bk);
	X509_free(x);
	EVP_PKEY_free(k);
}

static void make_files(char cert[32], char key[32])
{
	tls_testcert_files("skiff-test", cert, key);
}

struct tls_ctx *tls_testcert_server(const struct tls_server_opts *o)
{
	char cert[32], key[32], err[256];
	make_files(cert, key);
	struct tls_ctx *t = tls_host_server(tls_testcert_engine, cert, key, o, err, sizeof(err));
	unlink(cert);
	unlink(key);
	if (!t)
		die(err);
	return t;
}

int tls_testcert_reload(struct tls_ctx *t, char *err, size_t errlen)
{
	char cert[32], key[32];
	make_files(cert, key);
	int r = tls_host_reload(t, cert, key, err, errlen);
	unlink(cert);
	unlink(key);
	return r;
}

SSL_CTX *tls_testcert_client(int version)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	if (!c)
		die("client context");
	SSL_CTX_set_min_proto_version(c, version);
	SSL_CTX_set_max_proto_version(c, version);
	SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
	return c;
}

const char *tls_testcert_engine;
static uint8_t scratch[1 << 16];

static uint64_t tick(const struct tls_testpair *p)
{
	return p->clock ? p->clock() : 0;
}

void tls_testpair_new(struct tls_testpair *p, SSL_CTX *cctx, struct tls_ctx *sctx,
		      SSL_SESSION *sess, uint64_t (*clock)(void))
{
	p->clock = clock;
	p->cl = SSL_new(cctx);
	p->c_in = BIO_new(BIO_s_mem());
	p->c_out = BIO_new(BIO_s_mem());
	if (!p->cl || !p->c_in || !p->c_out)
		die("client connection");
	BIO_set_mem_eof_return(p->c_in, -1);
	SSL_set_bio(p->cl, p->c_in, p->c_out);
	SSL_set_connect_state(p->cl);
	if (sess && SSL_set_session(p->cl, sess) != 1)
		die("SSL_set_session");
	p->e = tls_host_ops(sctx);
	uint64_t t0 = tick(p);
	p->sv = p->e->conn_new(sctx); /* the server pays it per connection */
	p->server_cycles = tick(p) - t0;
	if (!p->sv)
		die("server connection");
}

void tls_testpair_free(struct tls_testpair *p)
{
	/* Freed without its close_notify, OpenSSL would mark the client's
	 * session unresumable. */
	SSL_shutdown(p->cl);
	SSL_free(p->cl);
	uint64_t t0 = tick(p);
	p->e->conn_free(p->sv);
	p->server_cycles += tick(p) - t0;
}

void tls_testpair_to_server(struct tls_testpair *p, bool app)
{
	int n;
	while ((n = BIO_read(p->c_out, scratch, sizeof(scratch))) > 0) {
		uint64_t t0 = tick(p);
		p->e->records_in(p->sv, scratch, (size_t)n);
		p->e->step(p->sv);
		if (app)
			while (p->e->read(p->sv, scratch, sizeof(scratch)) > 0)
				;
		p->server_cycles += tick(p) - t0;
	}
}

void tls_testpair_to_client(struct tls_testpair *p)
{
	const uint8_t *q;
	for (;;) {
		uint64_t t0 = tick(p);
		size_t n = p->e->out_peek(p->sv, &q);
		p->server_cycles += tick(p) - t0;
		if (!n)
			break;
		BIO_write(p->c_in, q, (int)n);
		t0 = tick(p);
		p->e->out_consume(p->sv, n);
		p->server_cycles += tick(p) - t0;
	}
}

bool tls_testpair_handshake(struct tls_testpair *p)
{
	for (int i = 0; i < 10; i++) {
		int r = SSL_do_handshake(p->cl);
		tls_testpair_to_server(p, false);
		tls_testpair_to_client(p);
		if (p->e->error(p->sv))
			return false;
		if (r == 1 && p->e->handshake_done(p->sv))
			return true;
	}
	return false;
}

SSL_SESSION *tls_testpair_session(struct tls_testpair *p)
{
	if (p->e->write(p->sv, "x", 1) != 1)
		die("server write");
	tls_testpair_to_client(p);
	if (SSL_read(p->cl, scratch, sizeof(scratch)) != 1)
		die("client read");
	return SSL_get1_session(p->cl);
}

SSL_SESSION *tls_testpair_session_unasked(struct tls_testpair *p)
{
	tls_testpair_to_client(p);
	unsigned char b[16];
	/* Nothing to read but the tickets: the client must want more. */
	int r = SSL_read(p->cl, b, sizeof(b));
	if (r > 0 || SSL_get_error(p->cl, r) != SSL_ERROR_WANT_READ)
		die("client read data the server never wrote");
	return SSL_get1_session(p->cl);
}

void tls_testpair_peer_fp(const struct tls_testpair *p, unsigned char fp[32])
{
	X509 *x = SSL_get1_peer_certificate(p->cl);
	unsigned n = 0;
	if (!x || X509_digest(x, EVP_sha256(), fp, &n) != 1 || n != 32)
		die("peer certificate digest");
	X509_free(x);
}

bool tls_testpair_exchange(struct tls_testpair *p)
{
	unsigned char b[64];
	if (p->e->write(p->sv, "old", 3) != 3)
		return false;
	tls_testpair_to_client(p);
	if (SSL_read(p->cl, b, sizeof(b)) != 3 || memcmp(b, "old", 3))
		return false;
	if (SSL_write(p->cl, "still", 5) != 5)
		return false;
	tls_testpair_to_server(p, false);
	return p->e->read(p->sv, b, sizeof(b)) == 5 && !memcmp(b, "still", 5);
}

bool tls_testpair_shown_cn(SSL_CTX *cctx, struct tls_ctx *sctx, const char *name, char *cn,
			   size_t n)
{
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	if (name && SSL_set_tlsext_host_name(p.cl, name) != 1)
		die("SSL_set_tlsext_host_name");
	bool ok = tls_testpair_handshake(&p);
	X509 *x = ok ? SSL_get1_peer_certificate(p.cl) : NULL;
	cn[0] = 0;
	if (x)
		X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, (int)n);
	X509_free(x);
	ok = x && tls_testpair_exchange(&p);
	tls_testpair_free(&p);
	return ok;
}

struct tls_sni tls_testcert_sni(const char *name, const char *cert, const char *key)
{
	return (struct tls_sni){.name = name, .name_len = strlen(name), .cert = cert,
				.cert_len = strlen(cert), .key = key};
}
