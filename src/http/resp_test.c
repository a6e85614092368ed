/* resp_test.c — the response head parser: results, framing, keep-alive,
 * every error, and that any split of the input gives the one-shot result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http/resp.h"

/* Parse s in one call; returns the verdict, *used the bytes taken. */
static int parse1(struct http_resp *r, const char *s, size_t *used)
{
	http_resp_init(r);
	return http_resp_head(r, (const uint8_t *)s, strlen(s), used);
}

/* Every two-way split must agree with the one-shot parse. */
static void check_splits(const char *s)
{
	struct http_resp one, two;
	size_t u1, n = strlen(s);
	int v1 = parse1(&one, s, &u1);
	for (size_t cut = 0; cut <= n; cut++) {
		size_t ua, ub = 0;
		http_resp_init(&two);
		int v = http_resp_head(&two, (const uint8_t *)s, cut, &ua);
		if (v == HTTP_NEED_MORE) {
			assert_int_equal(ua, cut);
			v = http_resp_head(&two, (const uint8_t *)s + cut, n - cut, &ub);
		}
		assert_int_equal(v, v1);
		if (v == HTTP_DONE) {
			assert_int_equal(ua + ub, u1);
			assert_int_equal(two.status, one.status);
			assert_int_equal(two.content_length, one.content_length);
			assert_int_equal(two.chunked, one.chunked);
			assert_int_equal(two.conn_close, one.conn_close);
		}
	}
}

static void test_basic(void **st)
{
	(void)st;
	struct http_resp r;
	size_t used;
	const char *s = "HTTP/1.1 200 OK\r\nServer: skiff\r\nContent-Length: 41\r\n"
			"Date: Mon, 30 Nov 2026 00:00:00 GMT\r\n\r\nHello";
	assert_int_equal(parse1(&r, s, &used), HTTP_DONE);
	assert_int_equal(used, strlen(s) - 5);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.version, 11);
	assert_true(r.has_content_length);
	assert_int_equal(r.content_length, 41);
	assert_int_equal(http_resp_body(&r, false), HTTP_BODY_LENGTH);
	assert_int_equal(http_resp_body(&r, true), HTTP_BODY_NONE);
	assert_true(http_resp_keep_alive(&r));
	/* Sticky: a further call takes nothing. */
	assert_int_equal(http_resp_head(&r, (const uint8_t *)"x", 1, &used), HTTP_DONE);
	assert_int_equal(used, 0);
	check_splits(s);
}

static void test_framing(void **st)
{
	(void)st;
	struct http_resp r;
	size_t u;
	assert_int_equal(parse1(&r, "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked \r\n\r\n", &u),
			 HTTP_DONE);
	assert_int_equal(http_resp_body(&r, false), HTTP_BODY_CHUNKED);
	assert_true(http_resp_keep_alive(&r));
	assert_int_equal(parse1(&r, "HTTP/1.1 200 OK\r\n\r\n", &u), HTTP_DONE);
	assert_int_equal(http_resp_body(&r, false), HTTP_BODY_CLOSE);
	assert_false(http_resp_keep_alive(&r));
	assert_int_equal(parse1(&r, "HTTP/1.1 204 No Content\r\n\r\n", &u), HTTP_DONE);
	assert_int_equal(http_resp_body(&r, false), HTTP_BODY_NONE);
	assert_int_equal(parse1(&r, "HTTP/1.1 304\r\n\r\n", &u), HTTP_DONE); /* no reason */
	assert_int_equal(r.status, 304);
	assert_int_equal(parse1(&r, "HTTP/1.1 100 Continue\r\n\r\n", &u), HTTP_DONE);
	assert_int_equal(http_resp_body(&r, false), HTTP_BODY_NONE);
	/* Keep-alive rules by version and Connection. */
	assert_int_equal(parse1(&r, "HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\n"
				    "Content-Length: 0\r\n\r\n", &u), HTTP_DONE);
	assert_true(r.conn_close && r.conn_keep_alive);
	assert_false(http_resp_keep_alive(&r));
	assert_int_equal(parse1(&r, "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &u), HTTP_DONE);
	assert_int_equal(r.version, 10);
	assert_false(http_resp_keep_alive(&r));
	assert_int_equal(parse1(&r, "HTTP/1.0 200 OK\r\nconnection: keep-alive\r\n"
				    "Content-Length: 0\r\n\r\n", &u), HTTP_DONE);
	assert_true(http_resp_keep_alive(&r));
	/* 1.0 asking for keep-alive but without a length: the body ends at
	 * close, so the connection cannot be kept (found by the fuzzer). */
	assert_int_equal(parse1(&r, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", &u),
			 HTTP_DONE);
	assert_int_equal(http_resp_body(&r, false), HTTP_BODY_CLOSE);
	assert_false(http_resp_keep_alive(&r));
	assert_int_equal(parse1(&r, "HTTP/1.1 200 OK\r\nConnection: ,, close ,\r\n\r\n", &u),
			 HTTP_DONE);
	assert_true(r.conn_close);
	assert_int_equal(parse1(&r, "HTTP/1.1 200 OK\r\nContent-Length: 000000000000000012\r\n\r\n",
				&u), HTTP_DONE);
	assert_int_equal(r.content_length, 12);
	assert_int_equal(parse1(&r, "HTTP/1.9 200 OK\r\nX-Long-Field-Name-Beyond-Twenty: a\r\n\r\n",
				&u), HTTP_DONE);
	assert_int_equal(r.version, 11);
}

static void test_errors(void **st)
{
	(void)st;
	static const struct {
		const char *s;
		int err;
	} bad[] = {
		{"HTTP/1.1 200 OK\n", HTTP_E_BARE_LF},
		{"HTTP/1.1 200 OK\r\nA: b\n", HTTP_E_BARE_LF},
		{"HTTP/1.1 200 OK\rX", HTTP_E_BARE_CR},
		{"HTTP/1.1 200 OK\r\n\rX", HTTP_E_BARE_CR},
		{"HTTP/2.0 200 OK\r\n", HTTP_E_VERSION_UNSUP},
		{"HTTP/1.x 200 OK\r\n", HTTP_E_VERSION},
		{"http/1.1 200 OK\r\n", HTTP_E_VERSION},
		{"HTTP/1.1  200 OK\r\n", HTTP_E_LINE},
		{"HTTP/1.1 099 OK\r\n", HTTP_E_LINE},
		{"HTTP/1.1 600 OK\r\n", HTTP_E_LINE},
		{"HTTP/1.1 20 OK\r\n", HTTP_E_LINE},
		{"HTTP/1.1 2000 OK\r\n", HTTP_E_LINE},
		{"HTTP/1.1 200 O\x01K\r\n", HTTP_E_CTL},
		{"HTTP/1.1 200 OK\r\n folded\r\n", HTTP_E_FOLD},
		{"HTTP/1.1 200 OK\r\nA : b\r\n", HTTP_E_NAME_WS},
		{"HTTP/1.1 200 OK\r\n:b\r\n", HTTP_E_NAME},
		{"HTTP/1.1 200 OK\r\nA@: b\r\n", HTTP_E_NAME},
		{"HTTP/1.1 200 OK\r\nA: b\x7f\r\n", HTTP_E_CTL},
		{"HTTP/1.1 200 OK\r\nA: \0b\r\n", HTTP_E_NUL},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n", HTTP_E_CL_DUP},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n", HTTP_E_CL_BAD},
		{"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n", HTTP_E_CL_BAD},
		{"HTTP/1.1 200 OK\r\nContent-Length:\r\n", HTTP_E_CL_BAD},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n", HTTP_E_CL_BAD},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n", HTTP_E_CL_TE},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n", HTTP_E_CL_TE},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n", HTTP_E_TE_UNSUP},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
		 HTTP_E_TE_BAD},
		{"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n", HTTP_E_TE_HTTP10},
		{"HTTP/1.1 200 OK\r\nConnection: a b\r\n", HTTP_E_CONNECTION},
		{"HTTP/1.1 200 OK\r\nConnection: a/b\r\n", HTTP_E_CONNECTION},
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++) {
		struct http_resp r;
		size_t used, n = strlen(bad[i].s);
		if (i == 18)
			n = 22; /* the embedded NUL */
		http_resp_init(&r);
		int v = http_resp_head(&r, (const uint8_t *)bad[i].s, n, &used);
		if (v != bad[i].err)
			fail_msg("case %zu (%s): got %d want %d", i, bad[i].s, v, bad[i].err);
		assert_true(used < n);
		/* sticky */
		assert_int_equal(http_resp_head(&r, (const uint8_t *)"\r\n", 2, &used), v);
		if (i != 18)
			check_splits(bad[i].s);
	}
}

static void test_limits(void **st)
{
	(void)st;
	static char big[HTTP_HEAD_MAX + 64];
	struct http_resp r;
	size_t u;
	/* HTTP_MAX_FIELDS lines are fine, one more is not. */
	size_t n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\n");
	for (unsigned i = 0; i < HTTP_MAX_FIELDS; i++)
		n += (size_t)sprintf(big + n, "A: b\r\n");
	strcpy(big + n, "\r\n");
	assert_int_equal(parse1(&r, big, &u), HTTP_DONE);
	strcpy(big + n, "A: b\r\n\r\n");
	assert_int_equal(parse1(&r, big, &u), HTTP_E_TOO_MANY_FIELDS);
	/* A head longer than HTTP_HEAD_MAX never gets a NEED_MORE. */
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nA: ");
	memset(big + n, 'x', sizeof(big) - n - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(parse1(&r, big, &u), HTTP_E_FIELDS_TOO_LARGE);
	/* A kept value longer than HTTP_RESP_MAX_VALUE. */
	n = (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nConnection: ");
	memset(big + n, 'k', HTTP_RESP_MAX_VALUE + 1);
	strcpy(big + n + HTTP_RESP_MAX_VALUE + 1, "\r\n\r\n");
	assert_int_equal(parse1(&r, big, &u), HTTP_E_CONNECTION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
