/* tls_bearssl_test.c — the BearSSL engine (the unikernel's) hosted,
 * against OpenSSL's client in this process over memory BIOs: TLS 1.2 with
 * an ECDSA P-256 and an RSA 2048 certificate (made now, in memory:
 * tls_testcert_pem), ALPN, SNI, the suites it allows and refuses, resumption by session ID,
 * one record per write, garbage and a wrong MAC refused, close_notify both
 * ways, the connection pool's bound, a key that is not the certificate's,
 * and the certificate chosen by SNI name (exact, wildcard, case, unknown
 * and no name; resumption under another certificate's name refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "../base/sk_err.h"
#include "tls_bearssl.h"
#include "tls_testcert.h"

static const struct tls_engine_ops *E = &tls_bearssl_ops;
#include "tls_engine_suite.h" /* suite_alpn_check only: BearSSL keeps its own pair */

static int rnd(void *buf, size_t len)
{
	return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -1;
}

static void *mem;

static struct tls_ctx *server_alpn(const struct tls_testpem *p, unsigned max_conns, bool alpn_h2)
{
	struct tls_bearssl_config cfg = {.max_conns = max_conns, .random = rnd, .alpn_h2 = alpn_h2};
	size_t n = tls_bearssl_mem_size(&cfg);
	free(mem);
	mem = aligned_alloc(16, (n + 15) & ~(size_t)15);
	char err[200];
	struct tls_ctx *t = tls_bearssl_server(mem, n, &cfg, p->cert, p->cert_len, p->key, p->key_len,
					       err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	return t;
}

static struct tls_ctx *server(const struct tls_testpem *p, unsigned max_conns)
{
	return server_alpn(p, max_conns, false);
}

struct pair {
	SSL *cl;
	BIO *c_in, *c_out;
	struct tls_conn *sv;
	unsigned records_out; /* server records seen by the client side */
};

static uint8_t scratch[1 << 16];

/* A client asking for sni (NULL: no SNI extension at all). */
static void pair_new_sni(struct pair *p, SSL_CTX *cctx, struct tls_ctx *t, SSL_SESSION *sess,
			 const char *sni)
{
	p->cl = SSL_new(cctx);
	p->c_in = BIO_new(BIO_s_mem());
	p->c_out = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(p->c_in, -1);
	SSL_set_bio(p->cl, p->c_in, p->c_out);
	SSL_set_connect_state(p->cl);
	if (sni)
		SSL_set_tlsext_host_name(p->cl, sni);
	static const unsigned char alpn[] = "\x02h2\x08http/1.1";
	SSL_set_alpn_protos(p->cl, alpn, sizeof(alpn) - 1);
	if (sess)
		assert_int_equal(SSL_set_session(p->cl, sess), 1);
	p->sv = E->conn_new(t);
	p->records_out = 0;
	assert_non_null(p->sv);
}

static void pair_new(struct pair *p, SSL_CTX *cctx, struct tls_ctx *t, SSL_SESSION *sess)
{
	pair_new_sni(p, cctx, t, sess, "www.skiff.test");
}

static void pair_free(struct pair *p)
{
	/* Freed without its close_notify, OpenSSL would mark the client's
	 * session unresumable. */
	SSL_shutdown(p->cl);
	SSL_free(p->cl);
	E->conn_free(p->sv);
}

/* Client records into the server, a few bytes at a time when `drip`
 * (records cut anywhere), honouring in_room(). */
static void to_server(struct pair *p, size_t drip)
{
	int n;
	while ((n = BIO_read(p->c_out, scratch, (int)(drip ? drip : sizeof(scratch)))) > 0) {
		size_t off = 0;
		while (off < (size_t)n) {
			size_t room = E->in_room(p->sv);
			assert_true(room > 0);
			size_t k = (size_t)n - off < room ? (size_t)n - off : room;
			assert_int_equal(E->records_in(p->sv, scratch + off, k), (long)k);
			off += k;
			E->step(p->sv);
			/* mono buffer: room comes back once its records are out */
			const uint8_t *q;
			size_t m;
			while ((m = E->out_peek(p->sv, &q)) > 0) {
				BIO_write(p->c_in, q, (int)m);
				E->out_consume(p->sv, m);
				p->records_out++;
			}
		}
	}
}

static void to_client(struct pair *p)
{
	const uint8_t *q;
	size_t n;
	while ((n = E->out_peek(p->sv, &q)) > 0) {
		BIO_write(p->c_in, q, (int)n);
		E->out_consume(p->sv, n);
		p->records_out++;
	}
}

static bool handshake(struct pair *p)
{
	for (int i = 0; i < 10; i++) {
		int r = SSL_do_handshake(p->cl);
		to_server(p, 0);
		to_client(p);
		if (E->error(p->sv))
			return false;
		if (r == 1 && E->handshake_done(p->sv))
			return true;
		if (r == 1) { /* the server learns it is done from the next step */
			E->step(p->sv);
			if (E->handshake_done(p->sv))
				return true;
		}
	}
	return false;
}

static SSL_CTX *client(const char *ciphers)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	assert_non_null(c);
	SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(c, TLS1_2_VERSION);
	SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_options(c, SSL_OP_NO_TICKET); /* resumption by session ID */
	if (ciphers)
		assert_int_equal(SSL_CTX_set_cipher_list(c, ciphers), 1);
	return c;
}

/* A request one way, a response the other, in one record each. */
static void exchange(struct pair *p)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(SSL_write(p->cl, req, sizeof(req) - 1), (int)sizeof(req) - 1);
	to_server(p, 0);
	char buf[256];
	assert_int_equal(E->read(p->sv, buf, sizeof(buf)), (long)sizeof(req) - 1);
	assert_memory_equal(buf, req, sizeof(req) - 1);
	assert_int_equal(E->read(p->sv, buf, sizeof(buf)), -SK_EAGAIN);
	static char resp[TLS_MAX_WRITE];
	memset(resp, 'r', sizeof(resp));
	assert_int_equal(E->write(p->sv, resp, sizeof(resp)), (long)sizeof(resp));
	/* the record is still unsent: a second write waits for the socket */
	assert_int_equal(E->write(p->sv, resp, 1), -SK_EAGAIN);
	unsigned before = p->records_out;
	to_client(p);
	assert_true(p->records_out == before + 1);
	size_t got = 0;
	while (got < sizeof(resp)) {
		int r = SSL_read(p->cl, scratch, sizeof(scratch));
		assert_true(r > 0);
		got += (size_t)r;
	}
	assert_int_equal(got, sizeof(resp));
}

static void test_ec_full(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_ctx *t = server(&pm, 4);
	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	assert_true(handshake(&p));
	assert_false(E->resumed(p.sv));
	assert_string_equal(SSL_get_version(p.cl), "TLSv1.2");
	assert_string_equal(E->version(p.sv), "TLSv1.2");
	const unsigned char *alpn;
	unsigned alen;
	SSL_get0_alpn_selected(p.cl, &alpn, &alen);
	assert_int_equal(alen, 8);
	assert_memory_equal(alpn, "http/1.1", 8);
	assert_string_equal(tls_bearssl_server_name(p.sv), "www.skiff.test");
	/* the server's order: AES-128-GCM first */
	assert_string_equal(SSL_get_cipher_name(p.cl), "ECDHE-ECDSA-AES128-GCM-SHA256");
	exchange(&p);
	pair_free(&p);
	SSL_CTX_free(cctx);
}

/* One handshake offering ALPN `offer` (wire form, len bytes; 0: no
 * extension): what the engine's alpn() says, after checking the client
 * was told the same and a request and a response go through. */
static const char *alpn_got(SSL_CTX *cctx, struct tls_ctx *t, const char *offer, size_t len)
{
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	assert_int_equal(SSL_set_alpn_protos(p.cl, (const unsigned char *)offer, (unsigned)len), 0);
	assert_null(E->alpn(p.sv));
	assert_true(handshake(&p));
	const char *name = suite_alpn_check(p.cl, p.sv);
	exchange(&p);
	pair_free(&p);
	return name;
}

#define ALPN(cctx, t, lit) alpn_got(cctx, t, lit, sizeof(lit) - 1)

/* tls_engine_suite.h's suite_alpn and suite_alpn_h2, on TLS 1.2. */
static void test_alpn(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	SSL_CTX *cctx = client(NULL);
	struct tls_ctx *t = server_alpn(&pm, 4, false);
	assert_string_equal(ALPN(cctx, t, "\x02h2\x08http/1.1"), "http/1.1");
	assert_null(ALPN(cctx, t, "\x02h2"));
	t = server_alpn(&pm, 4, true);
	assert_string_equal(ALPN(cctx, t, "\x02h2\x08http/1.1"), "h2");
	assert_string_equal(ALPN(cctx, t, "\x08http/1.1\x02h2"), "h2");
	assert_string_equal(ALPN(cctx, t, "\x08http/1.1"), "http/1.1");
	assert_null(ALPN(cctx, t, "\x03" "foo"));
	assert_null(alpn_got(cctx, t, NULL, 0));
	SSL_CTX_free(cctx);
}

static void test_rsa_and_suites(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", true);
	struct tls_ctx *t = server(&pm, 4);
	const char *ok[] = {"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
			    "ECDHE-RSA-CHACHA20-POLY1305"};
	for (unsigned i = 0; i < 3; i++) {
		SSL_CTX *cctx = client(ok[i]);
		struct pair p;
		pair_new(&p, cctx, t, NULL);
		assert_true(handshake(&p));
		assert_string_equal(SSL_get_cipher_name(p.cl), ok[i]);
		exchange(&p);
		pair_free(&p);
		SSL_CTX_free(cctx);
	}
	/* CBC, or a key exchange without ECDHE: refused */
	const char *bad[] = {"ECDHE-RSA-AES128-SHA256", "AES128-GCM-SHA256", "DHE-RSA-AES128-GCM-SHA256"};
	for (unsigned i = 0; i < 3; i++) {
		SSL_CTX *cctx = client(bad[i]);
		struct pair p;
		pair_new(&p, cctx, t, NULL);
		assert_false(handshake(&p));
		assert_int_equal(E->error(p.sv), TLS_ERR_HANDSHAKE);
		pair_free(&p);
		SSL_CTX_free(cctx);
	}
}

/* Groups: ECDHE on X25519 when the client offers it first, else P-256;
 * P-384 alone is refused.  (An ECDSA P-256 certificate also needs P-256
 * in the client's list, RFC 8422 5.1; the RSA one does not.) */
static int tmp_key_type(SSL *s)
{
	EVP_PKEY *k = NULL;
	if (SSL_get_peer_tmp_key(s, &k) != 1)
		return 0;
	int id = EVP_PKEY_id(k);
	EVP_PKEY_free(k);
	return id;
}

static void test_groups(void **state)
{
	(void)state;
	struct tls_testpem ec, rsa;
	tls_testcert_pem(&ec, "skiff-test", false);
	tls_testcert_pem(&rsa, "skiff-test", true);
	struct {
		const struct tls_testpem *pm;
		const char *groups;
		int want; /* 0: refused */
	} cases[] = {
		{&ec, "X25519:P-256", EVP_PKEY_X25519}, {&ec, "P-256:X25519", EVP_PKEY_X25519},
		{&ec, "P-256", EVP_PKEY_EC},            {&ec, "P-384:P-256", EVP_PKEY_EC},
		{&ec, "X25519", 0},                     {&ec, "P-384", 0},
		{&rsa, "X25519", EVP_PKEY_X25519},      {&rsa, "P-384:P-521", 0},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tls_ctx *t = server(cases[i].pm, 2);
		SSL_CTX *cctx = client(NULL);
		assert_int_equal(SSL_CTX_set1_groups_list(cctx, cases[i].groups), 1);
		struct pair p;
		pair_new(&p, cctx, t, NULL);
		bool ok = handshake(&p);
		if (ok != (cases[i].want != 0) || (ok && tmp_key_type(p.cl) != cases[i].want))
			fail_msg("groups %s: handshake %d, key %d", cases[i].groups, ok, tmp_key_type(p.cl));
		pair_free(&p);
		SSL_CTX_free(cctx);
	}
}

static void test_resume_by_id(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_ctx *t = server(&pm, 2);
	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	assert_true(handshake(&p));
	exchange(&p);
	SSL_SESSION *s = SSL_get1_session(p.cl);
	assert_false(SSL_SESSION_has_ticket(s)); /* BearSSL 0.6 sends none */
	unsigned idlen;
	SSL_SESSION_get_id(s, &idlen);
	assert_int_equal(idlen, 32);
	pair_free(&p);
	for (int i = 0; i < 3; i++) {
		pair_new(&p, cctx, t, s);
		assert_true(handshake(&p));
		assert_true(E->resumed(p.sv));
		assert_int_equal(SSL_session_reused(p.cl), 1);
		exchange(&p);
		pair_free(&p);
	}
	SSL_SESSION_free(s);
	SSL_CTX_free(cctx);
}

/* A context of its own block (server() reuses one). */
static struct tls_ctx *server_own(const struct tls_testpem *p, unsigned sessions, void **block)
{
	struct tls_bearssl_config cfg = {.max_conns = 2, .sessions = sessions, .random = rnd};
	size_t n = tls_bearssl_mem_size(&cfg);
	*block = aligned_alloc(16, (n + 15) & ~(size_t)15);
	char err[200];
	struct tls_ctx *t = tls_bearssl_server(*block, n, &cfg, p->cert, p->cert_len, p->key,
					       p->key_len, err, sizeof(err));
	if (!t)
		fail_msg("%s", err);
	return t;
}

static int lock_depth, lock_taken;
static void cache_lock(void)
{
	assert_int_equal(lock_depth++, 0);
	lock_taken++;
}
static void cache_unlock(void)
{
	assert_int_equal(--lock_depth, 0);
}

/* One connection offering `sess`: whether it resumed; its session. */
static bool connect_once(SSL_CTX *cctx, struct tls_ctx *t, SSL_SESSION *sess, SSL_SESSION **out)
{
	struct pair p;
	pair_new(&p, cctx, t, sess);
	assert_true(handshake(&p));
	bool r = E->resumed(p.sv);
	assert_int_equal(r, SSL_session_reused(p.cl) == 1);
	exchange(&p);
	*out = SSL_get1_session(p.cl);
	pair_free(&p);
	return r;
}

/* Two contexts on one session cache (tls_bearssl_share_cache, the
 * unikernel's vCPUs): a session made on either resumes on the other, each
 * use under the lock; a third context with its own cache does not. */
static void test_shared_cache(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	void *ma, *mb, *mc;
	struct tls_ctx *a = server_own(&pm, 0, &ma), *b = server_own(&pm, 1, &mb);
	struct tls_ctx *c = server_own(&pm, 0, &mc);
	tls_bearssl_share_cache(b, a, cache_lock, cache_unlock);
	SSL_CTX *cctx = client(NULL);
	SSL_SESSION *s1, *s2, *s3, *s4;
	assert_false(connect_once(cctx, a, NULL, &s1));
	assert_true(connect_once(cctx, b, s1, &s2));  /* a's session, on b */
	assert_false(connect_once(cctx, b, NULL, &s3));
	assert_true(connect_once(cctx, a, s3, &s4));  /* b's, on a */
	assert_int_equal(lock_depth, 0);
	assert_true(lock_taken >= 4); /* a save or a load per handshake */
	SSL_SESSION *s5;
	assert_false(connect_once(cctx, c, s1, &s5)); /* its own cache: a miss */
	SSL_SESSION_free(s1);
	SSL_SESSION_free(s2);
	SSL_SESSION_free(s3);
	SSL_SESSION_free(s4);
	SSL_SESSION_free(s5);
	SSL_CTX_free(cctx);
	free(ma);
	free(mb);
	free(mc);
}

static void take(void *arg, const char *name, uint64_t v)
{
	uint64_t *o = arg;
	if (!strcmp(name, "tls.sessions_resumed"))
		o[0] = v;
	else if (!strcmp(name, "tls.sessions_saved"))
		o[1] = v;
	else if (!strcmp(name, "tls.conns_in_use"))
		o[2] = v;
	else if (!strcmp(name, "tls.conn_pool_empty"))
		o[3] = v;
}

/* The pool: max_conns at once, one more refused and counted; a freed
 * one is usable again.  And the counters of a resumption. */
static void test_pool_and_counters(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_ctx *t = server(&pm, 2);
	struct tls_conn *a = E->conn_new(t), *b = E->conn_new(t);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(E->conn_new(t));
	uint64_t v[4] = {0};
	tls_bearssl_stats(t, take, v);
	assert_int_equal(v[2], 2);
	assert_int_equal(v[3], 1);
	E->conn_free(a);
	E->conn_free(b);
	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	assert_true(handshake(&p));
	SSL_SESSION *s = SSL_get1_session(p.cl);
	pair_free(&p);
	pair_new(&p, cctx, t, s);
	assert_true(handshake(&p));
	pair_free(&p);
	tls_bearssl_stats(t, take, v);
	assert_int_equal(v[0], 1);
	assert_int_equal(v[1], 1);
	assert_int_equal(v[2], 0);
	SSL_SESSION_free(s);
	SSL_CTX_free(cctx);
	assert_true(tls_bearssl_conn_bytes() < 32768); /* what an idle connection holds */
}

/* Records cut into 7-byte pieces: the same handshake and data. */
static void test_drip(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_ctx *t = server(&pm, 1);
	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	for (int i = 0; i < 10 && !(SSL_do_handshake(p.cl) == 1 && E->handshake_done(p.sv)); i++) {
		to_server(&p, 7);
		to_client(&p);
		E->step(p.sv);
	}
	assert_true(E->handshake_done(p.sv));
	exchange(&p);
	pair_free(&p);
	SSL_CTX_free(cctx);
}

/* Not TLS: a handshake error.  A record whose MAC is wrong after the
 * handshake: a protocol error, and read says so. */
static void test_bad_input(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_ctx *t = server(&pm, 2);
	struct tls_conn *c = E->conn_new(t);
	static const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	E->records_in(c, junk, sizeof(junk) - 1);
	assert_int_equal(E->step(c), TLS_ERR_HANDSHAKE);
	char buf[64];
	assert_int_equal(E->read(c, buf, sizeof(buf)), -SK_ECONNRESET);
	E->conn_free(c);

	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	assert_true(handshake(&p));
	assert_int_equal(SSL_write(p.cl, "hello", 5), 5);
	int n = BIO_read(p.c_out, scratch, sizeof(scratch));
	assert_true(n > 10);
	scratch[n - 1] ^= 1; /* the tag */
	E->records_in(p.sv, scratch, (size_t)n);
	assert_int_equal(E->read(p.sv, buf, sizeof(buf)), -SK_ECONNRESET);
	assert_int_equal(E->error(p.sv), TLS_ERR_PROTOCOL);
	pair_free(&p);
	SSL_CTX_free(cctx);
}

/* Their close_notify: read gives 0 and ours goes back.  Ours: the client
 * reads the end. */
static void test_close_notify(void **state)
{
	(void)state;
	struct tls_testpem pm;
	tls_testcert_pem(&pm, "skiff-test", false);
	struct tls_ctx *t = server(&pm, 2);
	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new(&p, cctx, t, NULL);
	assert_true(handshake(&p));
	assert_int_equal(SSL_shutdown(p.cl), 0);
	to_server(&p, 0);
	char buf[16];
	assert_int_equal(E->read(p.sv, buf, sizeof(buf)), 0);
	to_client(&p);
	assert_int_equal(SSL_shutdown(p.cl), 1); /* ours arrived */
	pair_free(&p);

	pair_new(&p, cctx, t, NULL);
	assert_true(handshake(&p));
	E->close_notify(p.sv);
	to_client(&p);
	assert_true(SSL_read(p.cl, buf, sizeof(buf)) <= 0);
	assert_int_equal(SSL_get_error(p.cl, 0), SSL_ERROR_ZERO_RETURN);
	pair_free(&p);
	SSL_CTX_free(cctx);
}

/* A key that is not the certificate's, and no key at all: refused. */
static void test_bad_key(void **state)
{
	(void)state;
	struct tls_testpem a, b;
	tls_testcert_pem(&a, "skiff-test", false);
	tls_testcert_pem(&b, "skiff-test", false);
	struct tls_bearssl_config cfg = {.max_conns = 1, .random = rnd};
	size_t n = tls_bearssl_mem_size(&cfg);
	void *m = aligned_alloc(16, (n + 15) & ~(size_t)15);
	char err[200];
	assert_null(tls_bearssl_server(m, n, &cfg, a.cert, a.cert_len, b.key, b.key_len, err, sizeof(err)));
	assert_non_null(strstr(err, "does not match"));
	assert_null(tls_bearssl_server(m, n, &cfg, a.cert, a.cert_len, a.cert, a.cert_len, err, sizeof(err)));
	assert_null(tls_bearssl_server(m, n, &cfg, "junk", 4, a.key, a.key_len, err, sizeof(err)));
	assert_non_null(tls_bearssl_server(m, n, &cfg, a.cert, a.cert_len, a.key, a.key_len, err, sizeof(err)));
	free(m);
}

/* Did the client get pm's certificate (the same DER)? */
static bool shown(SSL *cl, const struct tls_testpem *pm)
{
	X509 *peer = SSL_get0_peer_certificate(cl);
	BIO *b = BIO_new_mem_buf(pm->cert, (int)pm->cert_len);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	bool same = peer && x && X509_cmp(peer, x) == 0;
	X509_free(x);
	BIO_free(b);
	return same;
}

static void take_sni(void *arg, const char *name, uint64_t v)
{
	uint64_t *o = arg;
	if (!strcmp(name, "tls.sni_matched"))
		o[0] = v;
	else if (!strcmp(name, "tls.sni_default"))
		o[1] = v;
	else if (!strcmp(name, "tls.sni_resume_refused"))
		o[2] = v;
}

/* Three certificates, one context: a (EC, the default), b (RSA, named
 * b.test and www.b.test) and c (EC, named *.c.test).  Each client is
 * shown the one its name asks for, and the default for no name or an
 * unknown one; a wildcard covers one label only. */
static void test_sni_choice(void **state)
{
	(void)state;
	struct tls_testpem a, b, c;
	tls_testcert_pem(&a, "skiff-test", false);
	tls_testcert_pem(&b, "skiff-test", true);
	tls_testcert_pem(&c, "skiff-test", false);
	struct tls_bearssl_config cfg = {.max_conns = 2, .certs = 3, .random = rnd};
	size_t n = tls_bearssl_mem_size(&cfg);
	free(mem);
	mem = aligned_alloc(16, (n + 15) & ~(size_t)15);
	char err[200];
	struct tls_ctx *t = tls_bearssl_server(mem, n, &cfg, a.cert, a.cert_len, a.key, a.key_len,
					       err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(tls_bearssl_add_cert(t, b.cert, b.cert_len, b.key, b.key_len, err,
					      sizeof(err)), 1);
	assert_int_equal(tls_bearssl_add_cert(t, c.cert, c.cert_len, c.key, c.key_len, err,
					      sizeof(err)), 2);
	/* no room for a fourth */
	assert_int_equal(tls_bearssl_add_cert(t, c.cert, c.cert_len, c.key, c.key_len, err,
					      sizeof(err)), -1);
	assert_non_null(strstr(err, "tls_bearssl_config.certs"));
	assert_int_equal(tls_bearssl_add_name(t, "b.test", 6, 1, err, sizeof(err)), 0);
	assert_int_equal(tls_bearssl_add_name(t, "WWW.b.test", 10, 1, err, sizeof(err)), 0);
	assert_int_equal(tls_bearssl_add_name(t, "*.c.test", 8, 2, err, sizeof(err)), 0);
	assert_int_equal(tls_bearssl_add_name(t, "x.test", 6, 3, err, sizeof(err)), -1);
	assert_int_equal(tls_bearssl_add_name(t, "a*.test", 7, 0, err, sizeof(err)), -1);
	struct {
		const char *sni;
		const struct tls_testpem *want;
		unsigned idx;
	} cases[] = {
		{"b.test", &b, 1},   {"B.Test", &b, 1},      {"www.b.test", &b, 1},
		{"x.c.test", &c, 2}, {"X.C.TEST", &c, 2},    {"y.x.c.test", &a, 0},
		{"c.test", &a, 0},   {"a.test", &a, 0},      {"unknown.test", &a, 0},
		{NULL, &a, 0},
	};
	unsigned matched = 0, dflt = 0;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		SSL_CTX *cctx = client(NULL);
		struct pair p;
		pair_new_sni(&p, cctx, t, NULL, cases[i].sni);
		if (!handshake(&p))
			fail_msg("sni %s: no handshake", cases[i].sni ? cases[i].sni : "(none)");
		if (!shown(p.cl, cases[i].want) || tls_bearssl_cert(p.sv) != cases[i].idx)
			fail_msg("sni %s: the wrong certificate (index %u)",
				 cases[i].sni ? cases[i].sni : "(none)", tls_bearssl_cert(p.sv));
		/* b's key is RSA: its suites, the others ECDSA's */
		assert_non_null(strstr(SSL_get_cipher_name(p.cl), cases[i].want == &b ? "RSA" : "ECDSA"));
		exchange(&p);
		pair_free(&p);
		SSL_CTX_free(cctx);
		if (cases[i].idx)
			matched++;
		else
			dflt++;
	}
	uint64_t v[3] = {0};
	tls_bearssl_stats(t, take_sni, v);
	assert_int_equal(v[0], matched);
	assert_int_equal(v[1], dflt);

	/* A session made for b.test resumes under b.test's names, not under
	 * a name that asks for another certificate: that is refused before
	 * the server's answer leaves. */
	SSL_CTX *cctx = client(NULL);
	struct pair p;
	pair_new_sni(&p, cctx, t, NULL, "b.test");
	assert_true(handshake(&p));
	SSL_SESSION *s = SSL_get1_session(p.cl);
	pair_free(&p);
	pair_new_sni(&p, cctx, t, s, "www.b.test");
	assert_true(handshake(&p));
	assert_true(E->resumed(p.sv));
	assert_int_equal(SSL_session_reused(p.cl), 1);
	assert_true(shown(p.cl, &b));
	exchange(&p);
	pair_free(&p);
	pair_new_sni(&p, cctx, t, s, "a.test");
	assert_false(handshake(&p));
	assert_int_equal(E->error(p.sv), TLS_ERR_HANDSHAKE);
	assert_int_equal(p.records_out, 0);
	pair_free(&p);
	tls_bearssl_stats(t, take_sni, v);
	assert_int_equal(v[2], 1);
	SSL_SESSION_free(s);
	SSL_CTX_free(cctx);
}

/* Names: at most TLS_SNI_MAX, and the error says so. */
static void test_sni_bounds(void **state)
{
	(void)state;
	struct tls_testpem a;
	tls_testcert_pem(&a, "skiff-test", false);
	struct tls_ctx *t = server(&a, 1);
	char err[200], name[32];
	for (unsigned i = 0; i < TLS_SNI_MAX; i++) {
		int k = snprintf(name, sizeof(name), "n%u.test", i);
		assert_int_equal(tls_bearssl_add_name(t, name, (size_t)k, 0, err, sizeof(err)), 0);
	}
	assert_int_equal(tls_bearssl_add_name(t, "one.more", 8, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 8 certificate names"));
	/* one certificate's room (certs 0): no second */
	assert_int_equal(tls_bearssl_add_cert(t, a.cert, a.cert_len, a.key, a.key_len, err,
					      sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ec_full),
		cmocka_unit_test(test_alpn),
		cmocka_unit_test(test_rsa_and_suites),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_resume_by_id),
		cmocka_unit_test(test_shared_cache),
		cmocka_unit_test(test_pool_and_counters),
		cmocka_unit_test(test_drip),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_close_notify),
		cmocka_unit_test(test_bad_key),
		cmocka_unit_test(test_sni_choice),
		cmocka_unit_test(test_sni_bounds),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	free(mem);
	return r;
}
