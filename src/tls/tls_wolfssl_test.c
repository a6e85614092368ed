/* tls_wolfssl_test.c — the wolfSSL engine against OpenSSL's client in this
 * process (tls/tls_testcert.h, the pair the other engines' tests use): a
 * ticket after every TLS 1.3 handshake without a request, resumption on
 * TLS 1.3 and 1.2, ALPN, one record per write, refusal of what is not TLS
 * and of a record that was tampered with, reload, and certificates chosen
 * by name (SNI), a key that is not its certificate's refused, and a
 * context on another's WOLFSSL_CTXs resuming its tickets. */
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
