/* tls_openssl_test.c — the OpenSSL engine against OpenSSL's own client in
 * this process (tls/tls_testcert.h): resumption under rotating ticket
 * keys, ALPN, one record per write, refusal of what is not TLS,
 * close_notify both ways, reload, and certificates chosen by name (SNI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../base/sk_err.h"
#include "tls_engine.h"
#include "tls_testcert.h"

static const struct tls_engine_ops *E = &tls_openssl_ops;

#include "tls_engine_suite.h"

struct counters {
	uint64_t rotations, sealed, opened, renewed, unknown, reloads, reload_failures;
};

static void take(void *arg, const char *name, uint64_t v)
{
	struct counters *c = arg;
	if (!strcmp(name, "tls.ticket_rotations"))
		c->rotations = v;
	else if (!strcmp(name, "tls.tickets_sealed"))
		c->sealed = v;
	else if (!strcmp(name, "tls.tickets_opened"))
		c->opened = v;
	else if (!strcmp(name, "tls.tickets_renewed"))
		c->renewed = v;
	else if (!strcmp(name, "tls.tickets_unknown"))
		c->unknown = v;
	else if (!strcmp(name, "tls.reloads"))
		c->reloads = v;
	else if (!strcmp(name, "tls.reload_failures"))
		c->reload_failures = v;
}

/* One connection offering `sess` (or none): whether the server resumed,
 * and the client's session after it (the next ticket). */
static bool connect_once(SSL_CTX *cctx, struct tls_ctx *sctx, SSL_SESSION *sess, SSL_SESSION **next)
{
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, sess, NULL);
	assert_true(tls_testpair_handshake(&p));
	bool resumed = E->resumed(p.sv);
	assert_int_equal(resumed, SSL_session_reused(p.cl) == 1);
	*next = tls_testpair_session(&p);
	tls_testpair_free(&p);
	return resumed;
}

/* A ticket resumes under its key and under the key after it (renewed);
 * two rotations later it no longer does, and the handshake is a full one
 * that still succeeds.  TLS 1.3 and 1.2 alike. */
static void test_ticket_rotation(void **state)
{
	(void)state;
	int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
	for (unsigned v = 0; v < 2; v++) {
		struct tls_ctx *sctx = tls_testcert_server(NULL);
		SSL_CTX *cctx = tls_testcert_client(versions[v]);
		SSL_SESSION *s1, *s2, *s3, *s4;
		assert_false(connect_once(cctx, sctx, NULL, &s1));
		assert_true(connect_once(cctx, sctx, s1, &s2));
		tls_openssl_rotate(sctx);
		assert_true(connect_once(cctx, sctx, s2, &s3)); /* the key before: renewed */
		tls_openssl_rotate(sctx);
		tls_openssl_rotate(sctx);
		assert_false(connect_once(cctx, sctx, s2, &s4)); /* three keys ago: full */
		struct counters c = {0};
		tls_openssl_stats(sctx, take, &c);
		assert_int_equal(c.rotations, 3);
		assert_int_equal(c.opened, 2);
		assert_int_equal(c.renewed, 1);
		assert_int_equal(c.unknown, 1);
		assert_true(c.sealed >= 3);
		SSL_SESSION_free(s1);
		SSL_SESSION_free(s2);
		SSL_SESSION_free(s3);
		SSL_SESSION_free(s4);
		SSL_CTX_free(cctx);
		tls_openssl_free(sctx);
	}
}

/* After suite_ticket_unasked: 4 tickets sealed, 3 opened. */
static void ticket_unasked_counted(const struct tls_ctx *sctx)
{
	struct counters c = {0};
	tls_openssl_stats(sctx, take, &c);
	assert_int_equal(c.sealed, 4);
	assert_int_equal(c.opened, 3);
}

/* A write of up to 16 KiB is one record (TLS 1.3: 5 header bytes, the
 * content type, 16 of tag), and the client reads it back intact; a larger
 * write is cut at 16 KiB. */
static void test_one_record_per_write(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	SSL_CTX_set_num_tickets(cctx, 0);
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	SSL_SESSION_free(tls_testpair_session(&p)); /* the ticket and a byte: out of the way */
	static uint8_t plain[20000], back[20000];
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7);
	size_t sizes[] = {41, 1400, 16384};
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(E->write(p.sv, plain, sizes[k]), (long)sizes[k]);
		const uint8_t *q;
		size_t n = E->out_peek(p.sv, &q);
		assert_int_equal(n, sizes[k] + 5 + 1 + 16);
		assert_int_equal(q[0], 23); /* application data */
		tls_testpair_to_client(&p);
		assert_int_equal(SSL_read(p.cl, back, sizeof(back)), (int)sizes[k]);
		assert_memory_equal(back, plain, sizes[k]);
	}
	assert_int_equal(E->write(p.sv, plain, sizeof(plain)), (long)TLS_MAX_WRITE);
	tls_testpair_to_client(&p);

	/* close_notify both ways: the client's reads as 0, ours reaches it. */
	SSL_shutdown(p.cl);
	tls_testpair_to_server(&p, false);
	uint8_t b[64];
	assert_int_equal(E->read(p.sv, b, sizeof(b)), 0);
	E->close_notify(p.sv);
	tls_testpair_to_client(&p);
	while (SSL_read(p.cl, back, sizeof(back)) > 0)
		;
	assert_true(SSL_get_shutdown(p.cl) & SSL_RECEIVED_SHUTDOWN);
	tls_testpair_free(&p);
	SSL_CTX_free(cctx);
	tls_openssl_free(sctx);
}

/* --tls-sni: a name gets its certificate (any case), a wildcard one label,
 * an exact name wins over a wildcard, anything else (or no name) the
 * default; on TLS 1.3 and 1.2.  A reload is all or nothing: a broken SNI
 * file keeps every certificate, new files replace them.  A key that is
 * not its certificate's refuses the start, naming the file. */
static void test_sni(void **state)
{
	(void)state;
	char cn[64], err[256];
	struct suite_sni_files fs;
	struct tls_ctx *sctx = suite_sni_start(&fs); /* the names, counted */
	const char *dc = fs.dc, *dk = fs.dk, *ac = fs.ac, *ak = fs.ak;

	/* reload: a broken a.test file, then a new a.test certificate */
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	FILE *f = fopen(ac, "w");
	assert_non_null(f);
	fputs("broken\n", f);
	fclose(f);
	assert_int_equal(tls_openssl_reload(sctx, dc, dk, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ac));
	assert_true(tls_testpair_shown_cn(cctx, sctx, "a.test", cn, sizeof(cn)));
	assert_string_equal(cn, "a.test");
	unlink(ac);
	unlink(ak);
	char a2c[32], a2k[32];
	tls_testcert_files("a2.test", a2c, a2k);
	assert_int_equal(rename(a2c, ac), 0);
	assert_int_equal(rename(a2k, ak), 0);
	assert_int_equal(tls_openssl_reload(sctx, dc, dk, err, sizeof(err)), 0);
	assert_true(tls_testpair_shown_cn(cctx, sctx, "a.test", cn, sizeof(cn)));
	assert_string_equal(cn, "a2.test");
	assert_true(tls_testpair_shown_cn(cctx, sctx, "y.b.test", cn, sizeof(cn)));
	assert_string_equal(cn, "wild.b.test");
	struct counters n = {0};
	tls_openssl_stats(sctx, take, &n);
	assert_int_equal(n.reloads, 1);
	assert_int_equal(n.reload_failures, 1);
	SSL_CTX_free(cctx);
	tls_openssl_free(sctx);

	suite_sni_bad_key(&fs, "key values mismatch");
}

int main(void)
{
	suite_ticket_unasked_extra = ticket_unasked_counted;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticket_rotation),
		cmocka_unit_test(suite_ticket_unasked),
		cmocka_unit_test(suite_alpn),
		cmocka_unit_test(suite_alpn_h2),
		cmocka_unit_test(test_one_record_per_write),
		cmocka_unit_test(suite_not_tls),
		cmocka_unit_test(suite_reload),
		cmocka_unit_test(test_sni),
		cmocka_unit_test(suite_sni_resume),
		cmocka_unit_test(suite_sni_resume_other_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
