/* tls_wolfssl_test.c — the wolfSSL engine against OpenSSL's client in this
 * process (tls/tls_testcert.h, the pair the other engines' tests use): a
 * ticket after every TLS 1.3 handshake without a request, resumption on
 * TLS 1.3 and 1.2, ALPN, one record per write, refusal of what is not TLS
 * and of a record that was tampered with, reload, and certificates chosen
 * by name (SNI), a key that is not its certificate's refused, a
 * context on another's WOLFSSL_CTXs resuming its tickets (under a name
 * too), and a
 * connection on a name's context that outlives a reload mid-handshake. */
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

#include "tls_engine_suite.h"

/* After suite_ticket_unasked: 4 tickets sealed, 3 opened. */
static void ticket_unasked_counted(const struct tls_ctx *sctx)
{
	assert_int_equal(suite_counter(sctx, "tls.wolfssl_sessions"), 4);
	assert_int_equal(suite_counter(sctx, "tls.tickets_sent"), 4);
	assert_int_equal(suite_counter(sctx, "tls.resumed_engine"), 3);
}

/* A context sharing another's WOLFSSL_CTXs (the unikernel's vCPUs,
 * tls_wolfssl_server_share): a ticket either one issued resumes on the
 * other, TLS 1.3 and 1.2, each counting its own connections; the base
 * freed first, the shared one still serves (its own references). */
static void test_share_tickets(void **state)
{
	(void)state;
	static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
	for (unsigned v = 0; v < 2; v++) {
		struct tls_ctx *base = tls_testcert_server(NULL);
		char err[200] = "";
		struct tls_ctx *other = tls_wolfssl_server_share(base, err, sizeof(err));
		assert_non_null(other);
		SSL_CTX *cctx = tls_testcert_client(versions[v]);
		SSL_SESSION *s1 = NULL, *s2 = NULL, *s3 = NULL;
		assert_false(suite_connect_once(cctx, base, NULL, &s1));
		assert_true(suite_connect_once(cctx, other, s1, &s2)); /* base's ticket, other */
		assert_true(suite_connect_once(cctx, base, s2, &s3));  /* and back */
		assert_int_equal(suite_counter(base, "tls.wolfssl_sessions"), 2);
		assert_int_equal(suite_counter(other, "tls.wolfssl_sessions"), 1);
		assert_int_equal(suite_counter(other, "tls.resumed_engine"), 1);
		assert_int_equal(suite_counter(base, "tls.resumed_engine"), 1);
		tls_wolfssl_free(base);
		SSL_SESSION *s4 = NULL;
		assert_true(suite_connect_once(cctx, other, s3, &s4));
		SSL_SESSION_free(s1);
		SSL_SESSION_free(s2);
		SSL_SESSION_free(s3);
		SSL_SESSION_free(s4);
		SSL_CTX_free(cctx);
		tls_wolfssl_free(other);
	}
}

/* One connection naming a.test, offering sess (or none): whether it
 * resumed, the certificate given checked; the client's session after. */
static bool a_test_once(SSL_CTX *cctx, struct tls_ctx *sctx, SSL_SESSION *sess,
			SSL_SESSION **next)
{
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, sess, NULL);
	assert_int_equal(SSL_set_tlsext_host_name(p.cl, "a.test"), 1);
	assert_true(tls_testpair_handshake(&p));
	assert_int_equal(tls_wolfssl_cert(p.sv), 1);
	bool resumed = E->resumed(p.sv);
	assert_int_equal(resumed, SSL_session_reused(p.cl) == 1);
	*next = tls_testpair_session(&p);
	tls_testpair_free(&p);
	return resumed;
}

/* The guest's vCPUs under a name (uk_sites.c: names added, then
 * tls_wolfssl_server_share): a.test's ticket from one context resumes on
 * the other, and back, TLS 1.3 and 1.2: one ticket key for every name
 * and every vCPU. */
static void test_share_sni_tickets(void **state)
{
	(void)state;
	char dc[32], dk[32], ac[32], ak[32], err[256];
	tls_testcert_files("skiff-test", dc, dk);
	tls_testcert_files("a.test", ac, ak);
	struct tls_sni sni[1] = {tls_testcert_sni("a.test", ac, ak)};
	struct tls_server_opts so = {.sni = sni, .nsni = 1};
	static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION};
	for (unsigned v = 0; v < 2; v++) {
		struct tls_ctx *base = tls_wolfssl_server(dc, dk, &so, err, sizeof(err));
		if (!base)
			fail_msg("%s", err);
		struct tls_ctx *other = tls_wolfssl_server_share(base, err, sizeof(err));
		assert_non_null(other);
		SSL_CTX *cctx = tls_testcert_client(versions[v]);
		SSL_SESSION *s[3] = {NULL};
		assert_false(a_test_once(cctx, base, NULL, &s[0]));
		assert_true(a_test_once(cctx, other, s[0], &s[1]));
		assert_true(a_test_once(cctx, base, s[1], &s[2]));
		assert_int_equal(suite_counter(other, "tls.sni_matched"), 1);
		for (unsigned i = 0; i < 3; i++)
			SSL_SESSION_free(s[i]);
		SSL_CTX_free(cctx);
		tls_wolfssl_free(base);
		tls_wolfssl_free(other);
	}
	const char *files[] = {dc, dk, ac, ak};
	for (unsigned i = 0; i < SK_ARRAY_LEN(files); i++)
		unlink(files[i]);
}

/* A connection moved onto a name's context, then a reload, then the
 * rest of its handshake: its ticket is sealed under the old key, which
 * the connection keeps until it ends (ASan sees the old generation freed
 * with it), so that ticket does not resume after the reload; a session
 * made after the reload does.  TLS 1.3 and 1.2, and TLS 1.2 by session
 * ID (a client that takes no ticket), which never resumes: with names
 * the engine turns wolfSSL's session cache off (it resumed a session ID
 * under any name; tls_wolfssl.c's add_name), under a.test's certificate
 * each time.  (A TLS 1.2
 * client whose ticket is refused gets no new one from wolfSSL 5.5.4, and
 * that session does not resume either: measured, hence the fresh one.) */
static void test_sni_reload_midway(void **state)
{
	(void)state;
	char dc[32], dk[32], ac[32], ak[32], err[256];
	tls_testcert_files("skiff-test", dc, dk);
	tls_testcert_files("a.test", ac, ak);
	struct tls_sni sni[1] = {tls_testcert_sni("a.test", ac, ak)};
	struct tls_server_opts so = {.sni = sni, .nsni = 1};
	static const int versions[] = {TLS1_3_VERSION, TLS1_2_VERSION, TLS1_2_VERSION};
	for (unsigned v = 0; v < 3; v++) {
		struct tls_ctx *sctx = tls_wolfssl_server(dc, dk, &so, err, sizeof(err));
		if (!sctx)
			fail_msg("%s", err);
		SSL_CTX *cctx = tls_testcert_client(versions[v]);
		if (v == 2)
			SSL_CTX_set_options(cctx, SSL_OP_NO_TICKET);
		struct tls_testpair p;
		tls_testpair_new(&p, cctx, sctx, NULL, NULL);
		assert_int_equal(SSL_set_tlsext_host_name(p.cl, "a.test"), 1);
		assert_true(SSL_do_handshake(p.cl) < 0); /* the hello, and it waits */
		tls_testpair_to_server(&p, false);
		assert_int_equal(tls_wolfssl_cert(p.sv), 1);
		assert_int_equal(tls_testcert_reload(sctx, err, sizeof(err)), 0);
		assert_true(tls_testpair_handshake(&p));
		assert_true(tls_testpair_exchange(&p));
		SSL_SESSION *s[4] = {tls_testpair_session(&p)};
		tls_testpair_free(&p);
		/* by session ID (v 2) nothing resumes: no cache with names */
		const bool want[] = {false, false, v != 2};
		/* the old ticket; none (s[3] is not made yet); the fresh session */
		static const unsigned offer[] = {0, 3, 2};
		for (unsigned i = 0; i < 3; i++)
			if (a_test_once(cctx, sctx, s[offer[i]], &s[1 + i]) != want[i])
				fail_msg("mode %u, connection %u after the reload: %s", v, i + 1,
					 want[i] ? "not resumed" : "resumed");
		for (unsigned i = 0; i < 4; i++)
			SSL_SESSION_free(s[i]);
		SSL_CTX_free(cctx);
		tls_wolfssl_free(sctx);
	}
	const char *files[] = {dc, dk, ac, ak};
	for (unsigned i = 0; i < SK_ARRAY_LEN(files); i++)
		unlink(files[i]);
}

/* Not TLS: refused as a handshake error, and every later call says so;
 * an SSL 2.0 hello's head and a wrong major version too. */
static void test_not_tls(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	suite_not_tls_http(sctx);
	static const uint8_t v4[] = {22, 4, 1, 0, 5, 1, 2, 3, 4, 5};
	suite_not_tls_v4(sctx, v4, sizeof(v4));
	tls_wolfssl_free(sctx);
}

int main(void)
{
	tls_testcert_engine = "wolfssl";
	suite_ticket_unasked_extra = ticket_unasked_counted;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suite_ticket_unasked),
		cmocka_unit_test(suite_tls13_exchange),
		cmocka_unit_test(suite_tls12_resume),
		cmocka_unit_test(suite_alpn),
		cmocka_unit_test(suite_alpn_h2),
		cmocka_unit_test(suite_one_record_per_write),
		cmocka_unit_test(test_share_tickets),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(suite_bad_record),
		cmocka_unit_test(suite_reload),
		cmocka_unit_test(suite_sni),
		cmocka_unit_test(suite_sni_resume),
		cmocka_unit_test(suite_sni_resume_other_name),
		cmocka_unit_test(test_sni_reload_midway),
		cmocka_unit_test(test_share_sni_tickets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
