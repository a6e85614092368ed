/* tls_gnutls_test.c — the GnuTLS engine against OpenSSL's client in this
 * process (tls/tls_testcert.h, the pair the OpenSSL engine's test uses):
 * a ticket after every TLS 1.3 handshake without a request, resumption on
 * TLS 1.3 and 1.2, the key period (GnuTLS's clock moved by
 * gnutls_global_set_time_function), ALPN, one record per write, refusal of
 * what is not TLS and of a record that was tampered with, renegotiation
 * refused, reload, and certificates chosen by name (SNI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gnutls/gnutls.h>

#include "../base/sk_err.h"
#include "tls_engine.h"
#include "tls_gnutls.h"
#include "tls_testcert.h"

static const struct tls_engine_ops *E = &tls_gnutls_ops;

#include "tls_engine_suite.h"

struct counters {
	uint64_t sessions, sealed, opened, unknown, reloads, reload_failures, matched, dflt;
	bool renewed_given;
};

static void take(void *arg, const char *name, uint64_t v)
{
	struct counters *c = arg;
	if (!strcmp(name, "tls.gnutls_sessions"))
		c->sessions = v;
	else if (!strcmp(name, "tls.tickets_sealed"))
		c->sealed = v;
	else if (!strcmp(name, "tls.tickets_opened"))
		c->opened = v;
	else if (!strcmp(name, "tls.tickets_unknown"))
		c->unknown = v;
	else if (!strcmp(name, "tls.tickets_renewed"))
		c->renewed_given = true;
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
	tls_gnutls_stats(sctx, take, &c);
	return c;
}

/* After suite_ticket_unasked: 4 tickets sealed, 3 opened. */
static void ticket_unasked_counted(const struct tls_ctx *sctx)
{
	struct counters c = counted(sctx);
	assert_int_equal(c.sessions, 4);
	assert_int_equal(c.sealed, 4);
	assert_int_equal(c.opened, 3);
	assert_int_equal(c.unknown, 0);
	assert_false(c.renewed_given); /* GnuTLS cannot say: not printed */
}

/* After suite_tls12_resume: the ticket was sealed and opened once. */
static void tls12_resume_counted(const struct tls_ctx *sctx)
{
	struct counters c = counted(sctx);
	assert_int_equal(c.opened, 1);
	assert_true(c.sealed >= 1);
}

/* GnuTLS's clock, moved by the test. */
static time_t fake_now;
static time_t fake_time(time_t *t)
{
	if (t)
		*t = fake_now;
	return fake_now;
}

/* The key period (tls_gnutls.h; --tls-ticket-rotate 3600: periods of
 * 3600 s, tickets of 1200 s): a ticket sealed 10 s before a period ends
 * resumes 10 s into the next one (the key before still opens it); one
 * older than its life does not (a full handshake, counted as unknown),
 * nor one from two periods ago. */
static void test_key_period(void **state)
{
	(void)state;
	const time_t period = 3600;
	struct tls_server_opts so = {.ticket_rotate_s = 3600};
	fake_now = (time_t)(time(NULL) / period + 1) * period - 10;
	gnutls_global_set_time_function(fake_time);
	struct tls_ctx *sctx = tls_testcert_server(&so);
	SSL_CTX *cctx = tls_testcert_client(TLS1_3_VERSION);
	SSL_SESSION *s1, *s2, *s3, *s4;
	assert_false(suite_connect_once(cctx, sctx, NULL, &s1));
	fake_now += 20; /* the next period */
	assert_true(suite_connect_once(cctx, sctx, s1, &s2));
	fake_now += 1300; /* s2 has outlived its 1200 s */
	assert_false(suite_connect_once(cctx, sctx, s2, &s3));
	fake_now += 2 * period; /* s3: two periods ago */
	assert_false(suite_connect_once(cctx, sctx, s3, &s4));
	struct counters c = counted(sctx);
	assert_int_equal(c.opened, 1);
	assert_int_equal(c.unknown, 2);
	assert_int_equal(c.sealed, 4);
	gnutls_global_set_time_function(time); /* (NULL would be called) */
	SSL_SESSION_free(s1);
	SSL_SESSION_free(s2);
	SSL_SESSION_free(s3);
	SSL_SESSION_free(s4);
	SSL_CTX_free(cctx);
	tls_gnutls_free(sctx);
}

/* Not TLS: refused as a handshake error, and every later call says so. */
static void test_not_tls(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	suite_not_tls_http(sctx);

	/* An SSL 2.0 hello's head (the high bit set: a 2-byte length), which
	 * GnuTLS alone would wait on for up to 32 KiB: refused at once, even
	 * when its bytes come one at a time. */
	static const uint8_t v2[] = {0x80, 0x2e, 0x01, 0x03, 0x01};
	struct tls_conn *c = E->conn_new(sctx);
	assert_int_equal(E->records_in(c, v2, 1), 1);
	assert_int_equal(E->step(c), TLS_ERR_HANDSHAKE);
	E->conn_free(c);
	/* a handshake type with another major version */
	static const uint8_t v4[] = {22, 4, 1, 0, 5};
	suite_not_tls_v4(sctx, v4, sizeof(v4));
	tls_gnutls_free(sctx);
}

/* TLS 1.2: a client's renegotiation is refused with a warning, and the
 * connection goes on carrying data. */
static void test_no_renegotiation(void **state)
{
	(void)state;
	struct tls_ctx *sctx = tls_testcert_server(NULL);
	SSL_CTX *cctx = tls_testcert_client(TLS1_2_VERSION);
	struct tls_testpair p;
	tls_testpair_new(&p, cctx, sctx, NULL, NULL);
	assert_true(tls_testpair_handshake(&p));
	assert_int_equal(SSL_renegotiate(p.cl), 1);
	SSL_do_handshake(p.cl); /* sends its ClientHello */
	tls_testpair_to_server(&p, false);
	uint8_t b[64];
	assert_int_equal(E->read(p.sv, b, sizeof(b)), -SK_EAGAIN);
	assert_int_equal(E->error(p.sv), TLS_OK);
	const uint8_t *q;
	size_t n = E->out_peek(p.sv, &q);
	assert_true(n > 0);
	assert_int_equal(q[0], 21); /* an alert */
	E->out_consume(p.sv, n);
	assert_int_equal(E->write(p.sv, "still", 5), 5);
	tls_testpair_free(&p);
	SSL_CTX_free(cctx);
	tls_gnutls_free(sctx);
}

/* After suite_reload: the ticket from before the reload was one GnuTLS
 * could not open (the keys went with the old generation). */
static void reload_ticket_unknown(const struct tls_ctx *sctx)
{
	assert_int_equal(counted(sctx).unknown, 1);
}

int main(void)
{
	suite_reload_extra = reload_ticket_unknown;
	suite_tls12_resume_extra = tls12_resume_counted;
	suite_ticket_unasked_extra = ticket_unasked_counted;
	tls_testcert_engine = "gnutls";
	suite_refused_counted = false; /* the top of tls_gnutls.c */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suite_ticket_unasked),
		cmocka_unit_test(suite_tls13_exchange),
		cmocka_unit_test(suite_tls12_resume),
		cmocka_unit_test(test_key_period),
		cmocka_unit_test(suite_alpn),
		cmocka_unit_test(suite_alpn_h2),
		cmocka_unit_test(suite_one_record_per_write),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(suite_bad_record),
		cmocka_unit_test(test_no_renegotiation),
		cmocka_unit_test(suite_reload),
		cmocka_unit_test(suite_sni),
		cmocka_unit_test(suite_sni_resume),
		cmocka_unit_test(suite_sni_resume_other_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
