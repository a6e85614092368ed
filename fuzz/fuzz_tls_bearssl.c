/* fuzz_tls_bearssl.c — the unikernel's TLS engine (tls/tls_bearssl.c,
 * BearSSL) on arbitrary client bytes, built hosted: the same sequence as
 * fuzz_tls.c (records_in in pieces whose sizes come from the first byte,
 * step, read until it stops, out_peek/out_consume in parts), bounded by
 * in_room() as the layer bounds it, so the overflow buffer, the mono
 * buffer's half-duplex turns and the pool are what is explored.  Checks:
 * lengths within what was asked, records readable, and every connection
 * and overflow buffer back in the pool after each input.  The certificate
 * and key are made at start with OpenSSL, in memory.  Build: make
 * build/fuzz/fuzz_tls_bearssl. */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/sk_err.h"
#include "tls/tls_bearssl.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tls_ctx *ctx;

static int rnd(void *buf, size_t len)
{
	return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -1;
}

static size_t pem_of(BIO *b, char *out, size_t cap)
{
	int n = BIO_read(b, out, (int)cap);
	CHECK(n > 0);
	return (size_t)n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	CHECK(k && x);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	CHECK(X509_sign(x, k, EVP_sha256()) > 0);
	BIO *bc = BIO_new(BIO_s_mem()), *bk = BIO_new(BIO_s_mem());
	CHECK(PEM_write_bio_X509(bc, x) == 1 && PEM_write_bio_PrivateKey(bk, k, NULL, NULL, 0, NULL, NULL) == 1);
	static char cert[8192], key[8192];
	size_t cl = pem_of(bc, cert, sizeof(cert)), kl = pem_of(bk, key, sizeof(key));
	struct tls_bearssl_config cfg = {.max_conns = 1, .overflow = 1, .sessions = 4, .random = rnd,
					 .alpn_h2 = true}; /* both names offered, as with HTTP/2 */
	size_t n = tls_bearssl_mem_size(&cfg);
	void *mem = aligned_alloc(16, (n + 15) & ~(size_t)15);
	char err[200];
	ctx = tls_bearssl_server(mem, n, &cfg, cert, cl, key, kl, err, sizeof(err));
	CHECK(ctx);
	BIO_free(bc);
	BIO_free(bk);
	X509_free(x);
	EVP_PKEY_free(k);
	return 0;
}

struct take {
	uint64_t in_use, ovf_taken, ovf_empty;
};

static void count(void *arg, const char *name, uint64_t v)
{
	struct take *t = arg;
	if (!strcmp(name, "tls.conns_in_use"))
		t->in_use = v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t cuts = data[0];
	data++;
	size--;
	const struct tls_engine_ops *e = &tls_bearssl_ops;
	struct tls_conn *c = e->conn_new(ctx);
	CHECK(c);
	CHECK(e->conn_new(ctx) == NULL); /* a pool of one */
	static uint8_t buf[1 << 15];
	size_t off = 0;
	unsigned turn = 0, stuck = 0;
	while (off < size && stuck < 2) {
		size_t piece = ((size_t)((cuts * (turn + 1)) & 0xff)) + 1;
		if (piece > size - off)
			piece = size - off;
		size_t room = e->in_room(c);
		if (piece > room)
			piece = room;
		turn++;
		if (piece) {
			stuck = 0;
			CHECK(e->records_in(c, data + off, piece) == (long)piece);
			off += piece;
		} else {
			stuck++;
		}
		int st = e->step(c);
		long r;
		while ((r = e->read(c, buf, sizeof(buf))) > 0)
			CHECK((size_t)r <= sizeof(buf));
		const uint8_t *p;
		for (size_t n = e->out_peek(c, &p); n; n = e->out_peek(c, &p)) {
			CHECK(p != NULL);
			memcpy(buf, p, n < sizeof(buf) ? n : sizeof(buf));
			e->out_consume(c, n < 700 ? n : 700);
		}
		if (st != TLS_OK || (r < 0 && r != -SK_EAGAIN))
			break;
	}
	e->close_notify(c);
	const uint8_t *p;
	for (size_t n = e->out_peek(c, &p); n; n = e->out_peek(c, &p))
		e->out_consume(c, n);
	e->conn_free(c);
	struct take t = {0};
	tls_bearssl_stats(ctx, count, &t);
	CHECK(t.in_use == 0);
	c = e->conn_new(ctx); /* the overflow buffer came back too: in_room counts it */
	CHECK(c && e->in_room(c) >= TLS_BUF_SIZE);
	e->conn_free(c);
	return 0;
}
