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

#include "tls_engine_suite.h"

/* After suite_ticket_unasked: 4 tickets sealed, 3 opened. */
static void ticket_unasked_counted(const struct tls_ctx *sctx)
{
	assert_int_equal(suite_counter(sctx, "tls.wolfssl_sessions"), 4);
	assert_int_equal(suite_counter(sctx, "tls.tickets_sent"), 4);
	assert_int_equal(suite_counter(sctx, "tls.resumed_engine"), 3);
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
		cmocka_unit_test(suite_one_record_per_write),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(suite_bad_record),
		cmocka_unit_test(suite_reload),
		cmocka_unit_test(suite_sni),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
