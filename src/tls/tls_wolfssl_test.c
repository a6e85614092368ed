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
		assert_int_equal(suite_connect_once(cctx, sctx, sess, &next), i > 0);
		assert_true(SSL_SESSION_is_resumable(next));
		assert_true(SSL_SESSION_has_ticket(next));
		SSL_SESSION_free(sess);
		sess = next;
	}
	assert_int_equal(suite_counter(sctx, "tls.wolfssl_sessions"), 4);
	assert_int_equal(suite_counter(sctx, "tls.tickets_sent"), 4);
	assert_int_equal(suite_counter(sctx, "tls.resumed_engine"), 3);
	SSL_SESSION_free(sess);
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

int main(void)
{
	tls_testcert_engine = "wolfssl";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticket_unasked),
		cmocka_unit_test(suite_tls13_exchange),
		cmocka_unit_test(suite_tls12_resume),
		cmocka_unit_test(suite_alpn),
		cmocka_unit_test(suite_alpn_h2),
		cmocka_unit_test(suite_one_record_per_write),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(suite_bad_record),
		cmocka_unit_test(suite_reload),
		cmocka_unit_test(suite_sni),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
