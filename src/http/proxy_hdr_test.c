/* proxy_hdr_test.c — the head rewriting of a reverse proxy: hop-by-hop
 * fields and the ones Connection names go, framing is the proxy's own,
 * the forwarding fields are appended to, Host stays; and the result parses
 * again with the strict request parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/parser.h"
#include "http/proxy_hdr.h"
#include "http/resp.h"

static unsigned fields_of(const char *head, struct http_req *rq, struct proxy_field *f)
{
	http_req_init(rq, UINT64_MAX);
	int n = http_parse_head(rq, (const uint8_t *)head, strlen(head));
	assert_int_equal(n, (int)strlen(head));
	for (unsigned i = 0; i < rq->nheaders; i++) {
		f[i].name = head + rq->headers[i].name.off;
		f[i].nlen = rq->headers[i].name.len;
		f[i].value = head + rq->headers[i].value.off;
		f[i].vlen = rq->headers[i].value.len;
	}
	return rq->nheaders;
}

static char out[4096];

static long rewrite(const char *head, uint64_t body, unsigned version)
{
	static struct http_req rq;
	struct proxy_field f[HTTP_MAX_FIELDS];
	unsigned n = fields_of(head, &rq, f);
	struct sk_addr a = sk_addr_v4(SK_IP4(198, 18, 0, 7));
	struct proxy_req_info ri = {head + rq.method_s.off, rq.method_s.len,
				    head + rq.target.off,   rq.target.len,
				    version,                &a,
				    "http",                 "skiff",
				    body,                   "up:80",
				    false};
	long l = proxy_req_head((uint8_t *)out, sizeof(out) - 1, &ri, f, n);
	if (l > 0) {
		out[l] = 0;
		/* what the origin gets parses strictly */
		static struct http_req again;
		http_req_init(&again, UINT64_MAX);
		assert_int_equal(http_parse_head(&again, (const uint8_t *)out, (size_t)l), (int)l);
	}
	return l;
}

static void test_request_rewrite(void **st)
{
	(void)st;
	long l = rewrite("POST /a?b=1 HTTP/1.1\r\nHost: ex.org\r\nConnection: keep-alive, X-Secret\r\n"
			 "X-Secret: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\nTrailer: x\r\nUpgrade: h2c\r\n"
			 "Proxy-Authorization: b\r\nProxy: http://evil\r\nX-Forwarded-For: 10.0.0.1\r\n"
			 "Via: 1.0 cdn\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n"
			 "X-Forwarded-Proto: https\r\nUser-Agent: t\r\n\r\n",
			 PROXY_BODY_CHUNKED, 11);
	assert_true(l > 0);
	assert_non_null(strstr(out, "POST /a?b=1 HTTP/1.1\r\nHost: ex.org\r\n"));
	assert_non_null(strstr(out, "User-Agent: t\r\n"));
	assert_non_null(strstr(out, "X-Forwarded-For: 10.0.0.1, 198.18.0.7\r\n"));
	assert_non_null(strstr(out, "X-Forwarded-Proto: http\r\n"));
	assert_non_null(strstr(out, "Via: 1.0 cdn, 1.1 skiff\r\n"));
	assert_non_null(strstr(out, "Transfer-Encoding: chunked\r\n\r\n"));
	static const char *const gone[] = {"Connection", "X-Secret", "Keep-Alive", "TE:",
					   "Trailer", "Upgrade", "Proxy", "Expect", "https"};
	for (unsigned i = 0; i < SK_ARRAY_LEN(gone); i++)
		assert_null(strstr(out, gone[i]));
	l = rewrite("GET / HTTP/1.0\r\n\r\n", PROXY_BODY_NONE, 10);
	assert_string_equal(out, "GET / HTTP/1.1\r\nHost: up:80\r\nX-Forwarded-For: 198.18.0.7\r\n"
				 "X-Forwarded-Proto: http\r\nVia: 1.0 skiff\r\n\r\n");
	l = rewrite("PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", 5, 11);
	assert_non_null(strstr(out, "Content-Length: 5\r\n\r\n"));
	assert_int_equal(strstr(out, "Content-Length") - out, strrchr(out, 'C') - out);
	/* a cap too small: refused, never cut */
	static struct http_req rq;
	struct proxy_field f[4];
	const char *h = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	unsigned n = fields_of(h, &rq, f);
	struct sk_addr a = sk_addr_v4(1);
	struct proxy_req_info ri = {"GET", 3, "/", 1, 11, &a, "http", "skiff", PROXY_BODY_NONE, "h",
				    false};
	long full = proxy_req_head((uint8_t *)out, sizeof(out), &ri, f, n);
	assert_true(full > 0);
	assert_int_equal(proxy_req_head((uint8_t *)out, (size_t)full, &ri, f, n), -SK_ENOBUFS);
	assert_int_equal(proxy_req_head((uint8_t *)out, (size_t)full + 1, &ri, f, n), full);
	/* proxy_host upstream: the upstream's name in place of the client's */
	ri.host_replace = true;
	long l2 = proxy_req_head((uint8_t *)out, sizeof(out) - 1, &ri, f, n);
	assert_true(l2 > 0);
	out[l2] = 0;
	assert_non_null(strstr(out, "GET / HTTP/1.1\r\nHost: h\r\n"));
	assert_null(strstr(out, "Host: a\r\n"));
	assert_int_equal(strstr(out, "Host:") - out, strrchr(strstr(out, "Host:"), 'H') - out);
}

static void test_conn_tokens_overflow(void **st)
{
	(void)st;
	char head[2048] = "GET / HTTP/1.1\r\nHost: a\r\nConnection: ";
	for (int i = 0; i < 17; i++) {
		char t[16];
		snprintf(t, sizeof(t), "t%d,", i);
		strcat(head, t);
	}
	strcat(head, "\r\n\r\n");
	assert_int_equal(rewrite(head, PROXY_BODY_NONE, 11), -SK_EINVAL);
	/* the same token twice counts once */
	assert_true(rewrite("GET / HTTP/1.1\r\nHost: h\r\nConnection: a, A, a\r\nA: 1\r\nB: 2\r\n\r\n",
			    PROXY_BODY_NONE, 11) > 0);
	assert_null(strstr(out, "A: 1"));
	assert_non_null(strstr(out, "B: 2"));
}

static void test_response_fields(void **st)
{
	(void)st;
	const char *h = "HTTP/1.1 200 OK\r\nDate: x\r\nContent-Length: 3\r\nConnection: close, X-H\r\n"
			"X-H: 1\r\nSet-Cookie: a=b\r\nKeep-Alive: 1\r\nETag:  \"v\" \r\n\r\n";
	struct http_resp rp;
	http_resp_init(&rp);
	size_t used;
	assert_int_equal(http_resp_head(&rp, (const uint8_t *)h, strlen(h), &used), HTTP_DONE);
	struct proxy_field f[16];
	unsigned n = 0;
	size_t pos = 0;
	while (n < 16 && proxy_head_field((const uint8_t *)h, used, &pos, &f[n]))
		n++;
	assert_int_equal(n, 7);
	assert_int_equal(f[6].vlen, 3);
	assert_memory_equal(f[6].value, "\"v\"", 3);
	struct proxy_conn_tokens ct;
	proxy_conn_tokens(&ct, f, n);
	assert_int_equal(ct.n, 2);
	unsigned kept = 0;
	for (unsigned i = 0; i < n; i++)
		if (proxy_resp_keep(&f[i], &ct)) {
			kept++;
			assert_true(proxy_name_is(f[i].name, f[i].nlen, "set-cookie") ||
				    proxy_name_is(f[i].name, f[i].nlen, "etag"));
		}
	assert_int_equal(kept, 2);
}

static void test_small_pieces(void **st)
{
	(void)st;
	assert_true(proxy_te_ok("Chunked", 7));
	assert_false(proxy_te_ok("gzip, chunked", 13));
	assert_true(proxy_idempotent(HTTP_GET) && proxy_idempotent(HTTP_PUT));
	assert_false(proxy_idempotent(HTTP_POST));
	char b[40];
	struct sk_addr a = sk_addr_v4(SK_IP4(127, 0, 0, 1));
	assert_int_equal(proxy_format_addr(&a, b), 9);
	assert_string_equal(b, "127.0.0.1");
	uint8_t v6[16] = {0x20, 0x01, 0, 2, [15] = 1};
	a = sk_addr_v6(v6);
	proxy_format_addr(&a, b);
	assert_string_equal(b, "2001:2:0:0:0:0:0:1");
	memset(v6, 0xff, 16);
	a = sk_addr_v6(v6);
	assert_int_equal(proxy_format_addr(&a, b), 39);
	assert_false(proxy_hop_by_hop("Prox", 4, NULL));
	assert_true(proxy_hop_by_hop("PROXY-x", 7, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_rewrite),
		cmocka_unit_test(test_conn_tokens_overflow),
		cmocka_unit_test(test_response_fields),
		cmocka_unit_test(test_small_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
