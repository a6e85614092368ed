/* tls_wolfssl_test.c — the wolfSSL engine against OpenSSL's client in this
 * process (tls/tls_testcert.h, the pair the other engines' tests use): a
 * ticket after every TLS 1.3 handshake without a request, resumption on
 * TLS 1.3 and 1.2, ALPN, one record per write, refusal of what is not TLS
 * and of a record that was tampered with, reload, and certificates chosen
 * by name (SNI), and a key that is not its certificate's refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/sk_err.h"
#include "tls_engine.h"
#include "tls_testcert.h"
#include "tls_wolfssl.h"

static const struct tls_engine_ops *E = &tls_wolfssl_ops;

struct counters {
	uint64_t sessions, tickets, resumed, reloads, reload_failures, matched, dflt;
};

static void take(void *arg, const char *name, uint64_t v)
{
	struct counters *c = arg;
	if (!strcmp(name, "tls.wolfssl_sessions"))
		c->sessions = v;
	else if (!strcmp(name, "tls.tickets_sent"))
		c->tickets = v;
	else if (!strcmp(name, "tls.resumed_engine"))
		c->resumed = v;
	else if (!strcmp(name, "tls.reloads"))
		c->reloads = v;
	else if (!strcmp(name, "tls.reload_failures"))
		c->reload_failures = v;
	else if (!strcmp(name, "tls.sni_matched"))
		c->matched = v;
	else if (!strcmp(name, "tls.sni_default"))
		c->dflt = v;
}

static struct counters counted(const struct tls_ctx *sctx)
{
	struct counters c = {0};
	tls_wolfssl_stats(sctx, take, &c);
	return c;
}

static bool connect_once(SSL_CTX *cctx, struct tls_ctx *sctx, SSL_SESSION *sess, SSL_SESSION **next)
{
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, sess, NULL);
	assert_true(tls_testpair_handshake(&p));
	bool resumed = E->resumed(p.sv);
	assert_int_equal(resumed, SSL_session_reused(p.cl) == 1);
	*next = tls_testpair_session_unasked(&p);
	tls_testpair_free(&p);
	return resumed;
}

/* TLS 1.3: a ticket leaves as the handshake finishes, not with the first
 * response (a preconnect has it), after full and resumed handshakes, and
 * each one resumes. */
static void test_ticket_unasked(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	SSL_SESSION *sess = NULL;
	for (int i = 0; i < 4; i++) {
		SSL_SESSION *next;
		assert_int_equal(connect_once(cctx, sctx, sess, &next), i > 0);
		assert_true(SSL_SESSION_is_resumable(next));
		assert_true(SSL_SESSION_has_ticket(next));
		SSL_SESSION_free(sess);
		sess = next;
	}
	struct counters c = counted(sctx);
	assert_int_equal(c.sessions, 4);
	assert_int_equal(c.tickets, 4);
	assert_int_equal(c.resumed, 3);
	SSL_SESSION_free(sess);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* TLS 1.3 with a request, the version named. */
static void test_tls13_exchange(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	assert_string_equal(E->version(p.sv), "TLSv1.3");
	assert_true(tls_testpair_exchange(&p));
	tls_testpair_free(&p);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* TLS 1.2: the ticket in the handshake (RFC 5077), and it resumes. */
static void test_tls12_resume(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_2_VERSION);
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	assert_string_equal(E->version(p.sv), "TLSv1.2");
	assert_true(tls_testpair_exchange(&p));
	SSL_SESSION *s1 = tls_testpair_session(&p);
	assert_true(SSL_SESSION_has_ticket(s1));
	tls_testpair_free(&p);
	tls_testpair_new(&p, cctx, sctx, s1, NULL);
	assert_true(tls_testpair_handshake(&p));
	assert_true(E->resumed(p.sv));
	assert_int_equal(SSL_session_reused(p.cl), 1);
	tls_testpair_free(&p);
	SSL_SESSION_free(s1);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* ALPN: http/1.1 when offered (beside h2); none when only h2 is, and the
 * handshake still succeeds. */
static void test_alpn(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	static const unsigned char both[] = "\x02h2\x08http/1.1", h2[] = "\x02h2";
	const unsigned char *got;
	unsigned len;
	struct tls_testpair p;

	SSL_CTX_set_alpn_protos(cctx, both, sizeof(both) - 1);
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	SSL_get0_alpn_selected(p.cl, &got, &len);
	assert_int_equal(len, 8);
	assert_memory_equal(got, "http/1.1", 8);
	tls_testpair_free(&p);

	SSL_CTX_set_alpn_protos(cctx, h2, sizeof(h2) - 1);
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	SSL_get0_alpn_selected(p.cl, &got, &len);
	assert_int_equal(len, 0);
	tls_testpair_free(&p);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* A write of up to 16 KiB is one record, read back intact; a larger one is
 * cut at 16 KiB. */
static void test_one_record_per_write(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	SSL_SESSION_free(tls_testpair_session(&p));
	static uint8_t plain[20000], back[20000];
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7);
	size_t sizes[] = {41, 1400, 16384};
	for (unsigned k = 0; k < SK_ARRAY_LEN(sizes); k++) {
		assert_int_equal(E->write(p.sv, plain, sizes[k]), (long)sizes[k]);
		const uint8_t *q;
		size_t n = E->out_peek(p.sv, &q);
		assert_int_equal(n, sizes[k] + 5 + 1 + 16);
		assert_int_equal(q[0], 23); /* application_data */
		tls_testpair_to_client(&p);
		assert_int_equal(SSL_read(p.cl, back, sizeof(back)), (int)sizes[k]);
		assert_memory_equal(back, plain, sizes[k]);
	}
	assert_int_equal(E->write(p.sv, plain, sizeof(plain)), 16384);
	tls_testpair_free(&p);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* Not TLS: refused as a handshake error, and every later call says so;
 * an SSL 2.0 hello's head and a wrong major version too. */
static void test_not_tls(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	struct tls_conn *c = E->conn_new(sctx);
	static const char get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(E->records_in(c, get, sizeof(get) - 1), (long)sizeof(get) - 1);
	assert_int_equal(E->step(c), TLS_ERR_HANDSHAKE);
	assert_int_equal(E->error(c), TLS_ERR_HANDSHAKE);
	assert_false(E->handshake_done(c));
	uint8_t b[16];
	assert_int_equal(E->read(c, b, sizeof(b)), -SK_ECONNRESET);
	assert_int_equal(E->write(c, "x", 1), -SK_ECONNRESET);
	E->conn_free(c);

	static const uint8_t v4[] = {22, 4, 1, 0, 5, 1, 2, 3, 4, 5};
	c = E->conn_new(sctx);
	assert_int_equal(E->records_in(c, v4, 1), 1);
	assert_int_equal(E->step(c), TLS_OK); /* 22 so far: wait */
	assert_int_equal(E->records_in(c, v4 + 1, sizeof(v4) - 1), (long)sizeof(v4) - 1);
	assert_int_equal(E->step(c), TLS_ERR_HANDSHAKE);
	E->conn_free(c);
	tls_wolfssl_free(sctx);
}

/* A record changed on the way after the handshake: a protocol error on
 * read, an alert for the peer. */
static void test_bad_record(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	assert_int_equal(SSL_write(p.cl, "hello", 5), 5);
	static uint8_t rec[256];
	int n = BIO_read(p.c_out, rec, sizeof(rec));
	assert_true(n > 20);
	rec[n - 3] ^= 0x40; /* in the tag */
	assert_int_equal(E->records_in(p.sv, rec, (size_t)n), n);
	uint8_t b[64];
	assert_int_equal(E->read(p.sv, b, sizeof(b)), -SK_ECONNRESET);
	assert_int_equal(E->error(p.sv), TLS_ERR_PROTOCOL);
	const uint8_t *q;
	assert_true(E->out_peek(p.sv, &q) > 0); /* the alert */
	tls_testpair_free(&p);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* Reload: a connection made before goes on with the old certificate; a
 * new one gets the new certificate; a ticket from before does not
 * resume.  Files that do not load change nothing. */
static void test_reload(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	unsigned char fp_old[32], fp_new[32], fp[32];
	struct tls_testpair a, b, c;
	tls_testpair_new(&a, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&a));
	SSL_SESSION *s1 = tls_testpair_session(&a);
	tls_testpair_peer_fp(&a, fp_old);
	char err[256];
	assert_int_equal(tls_testcert_reload(sctx, err, sizeof(err)), 0);
	assert_true(tls_testpair_exchange(&a));

	tls_testpair_new(&b, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&b));
	tls_testpair_peer_fp(&b, fp_new);
	assert_memory_not_equal(fp_new, fp_old, 32);
	tls_testpair_free(&b);
	tls_testpair_free(&a);

	tls_testpair_new(&c, cctx, sctx, s1, NULL);
	assert_true(tls_testpair_handshake(&c));
	assert_false(E->resumed(c.sv));
	tls_testpair_peer_fp(&c, fp);
	assert_memory_equal(fp, fp_new, 32);
	tls_testpair_free(&c);

	err[0] = 0;
	assert_int_equal(E->ctx_reload(sctx, "/nonexistent/cert.pem", "/nonexistent/key.pem", err,
				       sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "/nonexistent/cert.pem"));
	tls_testpair_new(&c, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&c));
	tls_testpair_peer_fp(&c, fp);
	assert_memory_equal(fp, fp_new, 32);
	assert_true(tls_testpair_exchange(&c));
	tls_testpair_free(&c);

	struct counters n = counted(sctx);
	assert_int_equal(n.reloads, 1);
	assert_int_equal(n.reload_failures, 1);
	SSL_SESSION_free(s1);
	SSL_CTX_free(cctx);
	tls_wolfssl_free(sctx);
}

/* SNI by the rules of tls_engine.h, as the other engines: a name gets its
 * certificate (any case), a wildcard one label, an exact name wins over a
 * wildcard, anything else the default; TLS 1.3 and 1.2.  A key that is
 * not its certificate's refuses the start, naming the file. */
static void test_sni(void **state)
{
	(void)state;
	char dc[32], dk[32], ac[32], ak[32], wc[32], wk[32], xc[32], xk[32], cn[64];
	tls_testcert_files("skiff-test", dc, dk);
	tls_testcert_files("a.test", ac, ak);
	tls_testcert_files("wild.b.test", wc, wk);
	tls_testcert_files("x.b.test", xc, xk);
	struct tls_sni sni[3];
	sni[0] = tls_testcert_sni("*.b.test", wc, wk);
	sni[1] = tls_testcert_sni("a.test", ac, ak);
	sni[2] = tls_testcert_sni("x.b.test", xc, xk);
	struct tls_server_opts so = {.sni = sni, .nsni = 3};
	char err[256];
	struct tls_ctx *sctx = tls_wolfssl_server(dc, dk, &so, err, sizeof(err));
	if (!sctx)
		fail_msg("%s", err);
	static const char *const ask[] = {"a.test", "A.Test", "y.b.test", "x.b.test", "b.test",
					  "z.y.b.test", "c.test", NULL};
	static const char *const want[] = {"a.test", "a.test", "wild.b.test", "x.b.test",
					   "skiff-test", "skiff-test", "skiff-test", "skiff-test"};
	int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
	for (unsigned v = 0; v < 2; v++) {
		SSL_CTX *cctx = tls_testcert_client(versions[v]);
		for (unsigned i = 0; i < SK_ARRAY_LEN(ask); i++) {
			assert_true(tls_testpair_shown_cn(cctx, sctx, ask[i], cn, sizeof(cn)));
			if (strcmp(cn, want[i]))
				fail_msg("TLS %s, name %s: shown %s, want %s", v ? "1.2" : "1.3",
					 ask[i] ? ask[i] : "(none)", cn, want[i]);
		}
		SSL_CTX_free(cctx);
	}
	struct counters c = counted(sctx);
	assert_int_equal(c.matched, 8);
	assert_int_equal(c.dflt, 8);
	tls_wolfssl_free(sctx);

	sni[0] = tls_testcert_sni("a.test", ac, wk);
	so.nsni = 1;
	err[0] = 0;
	assert_null(tls_wolfssl_server(dc, dk, &so, err, sizeof(err)));
	assert_non_null(strstr(err, wk));
	assert_non_null(strstr(err, "does not match"));
	const char *files[] = {dc, dk, ac, ak, wc, wk, xc, xk};
	for (unsigned i = 0; i < SK_ARRAY_LEN(files); i++)
		unlink(files[i]);
}

int main(void)
{
	tls_testcert_engine = "wolfssl";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticket_unasked),
		cmocka_unit_test(test_tls13_exchange),
		cmocka_unit_test(test_tls12_resume),
		cmocka_unit_test(test_alpn),
		cmocka_unit_test(test_one_record_per_write),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(test_bad_record),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_sni),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
