/* prom_test.c — the exposition text: names, types, the counter and gauge
 * lines, histogram buckets that are cumulative and exact, and a full
 * buffer that keeps only whole lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/parser.h"
#include "http/prom.h"

static void test_names(void **state)
{
	(void)state;
	char b[64];
	assert_int_equal(prom_name(b, sizeof(b), "http.resp_200", true), 25);
	assert_string_equal(b, "skiff_http_resp_200_total");
	assert_true(prom_name(b, sizeof(b), "tcp_seg_in", true) > 0);
	assert_string_equal(b, "skiff_tcp_seg_in_total");
	assert_true(prom_name(b, sizeof(b), "http.parse_err.bad-method", true) > 0);
	assert_string_equal(b, "skiff_http_parse_err_bad_method_total");
	assert_true(prom_name(b, sizeof(b), "arp.entries", false) > 0);
	assert_string_equal(b, "skiff_arp_entries");
	assert_true(prom_name(b, sizeof(b), "x_total", true) > 0);
	assert_string_equal(b, "skiff_x_total");
	/* Tokens that read as unit abbreviations, spelled out. */
	assert_true(prom_name(b, sizeof(b), "eth.not_for_us", true) > 0);
	assert_string_equal(b, "skiff_eth_not_for_self_total");
	assert_true(prom_name(b, sizeof(b), "nd.dad_ns_tx", true) > 0);
	assert_string_equal(b, "skiff_nd_dad_solicit_tx_total");
	assert_true(prom_name(b, sizeof(b), "loop.spin_budget_ns", false) > 0);
	assert_string_equal(b, "skiff_loop_spin_budget_seconds");
	assert_true(prom_name(b, sizeof(b), "loop.nsx_usb", true) > 0);
	assert_string_equal(b, "skiff_loop_nsx_usb_total");
	/* Too long for the buffer: 0, never a cut name. */
	assert_int_equal(prom_name(b, 10, "http.resp_200", true), 0);
	assert_int_equal(prom_name(b, 26, "http.resp_200", true), 25);
	assert_int_equal(prom_name(b, 25, "http.resp_200", true), 0);
}

static void test_gauges(void **state)
{
	(void)state;
	assert_true(prom_stat_is_gauge("http.conns_open"));
	assert_true(prom_stat_is_gauge("https.conns_open"));
	assert_true(prom_stat_is_gauge("arp.entries"));
	assert_true(prom_stat_is_gauge("virtio.tx_unposted"));
	assert_false(prom_stat_is_gauge("virtio.tx_vnet_bad"));
	assert_true(prom_stat_is_gauge("tcp_mem_used"));
	assert_true(prom_stat_is_gauge("tcp_mem_state"));
	assert_false(prom_stat_is_gauge("tcp_rcvbuf_grows"));
	assert_true(prom_stat_is_gauge("loop.spin_budget_ns"));
	assert_true(prom_stat_is_gauge("cache.bytes"));
	assert_true(prom_stat_is_gauge("cache.entries"));
	assert_false(prom_stat_is_gauge("cache.hits"));
	assert_false(prom_stat_is_gauge("http.requests"));
	assert_false(prom_stat_is_gauge("tcp_seg_in"));
	assert_false(prom_stat_is_gauge("arp.entries_x"));
}

static void test_stat_lines(void **state)
{
	(void)state;
	char buf[1024];
	struct prom_out o;
	prom_init(&o, buf, sizeof(buf) - 1);
	prom_stat(&o, "http.requests", 18446744073709551615ull);
	prom_stat(&o, "http.conns_open", 3);
	prom_stat(&o, "loop.spin_budget_ns", 1234567890);
	assert_false(o.truncated);
	buf[o.len] = 0;
	assert_string_equal(buf,
			    "# HELP skiff_http_requests_total skiff --stats http.requests\n"
			    "# TYPE skiff_http_requests_total counter\n"
			    "skiff_http_requests_total 18446744073709551615\n"
			    "# HELP skiff_http_conns_open skiff --stats http.conns_open\n"
			    "# TYPE skiff_http_conns_open gauge\n"
			    "skiff_http_conns_open 3\n"
			    "# HELP skiff_loop_spin_budget_seconds skiff --stats loop.spin_budget_ns\n"
			    "# TYPE skiff_loop_spin_budget_seconds gauge\n"
			    "skiff_loop_spin_budget_seconds 1.234567890\n");
}

/* The value after `key ` on its line, or -1. */
static long long value_of(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; (p = strstr(p, key)); p++) {
		if ((p == text || p[-1] == '\n') && p[kl] == ' ')
			return strtoll(p + kl + 1, NULL, 10);
	}
	return -1;
}

static void test_hist(void **state)
{
	(void)state;
	static struct sk_hist h;
	sk_hist_reset(&h);
	/* Values at and around powers of two, where a bound could slip. */
	uint64_t vals[] = {0, 1, 14, 15, 16, 17, 31, 32, 1023, 1024, 1025, 5000, 1ull << 40};
	for (unsigned i = 0; i < SK_ARRAY_LEN(vals); i++)
		sk_hist_add(&h, vals[i]);
	static char buf[16384];
	struct prom_out o;
	prom_init(&o, buf, sizeof(buf) - 1);
	prom_hist(&o, "trace.tcp_in", "cycles", "cycles per segment in tcp_input", &h);
	assert_false(o.truncated);
	buf[o.len] = 0;
	assert_non_null(strstr(buf, "# HELP skiff_trace_tcp_in_cycles cycles per segment"));
	assert_non_null(strstr(buf, "# TYPE skiff_trace_tcp_in_cycles histogram\n"));
	/* Every bound: exactly the samples <= it; cumulative, so never less
	 * than the one before. */
	long long prev = 0;
	for (int k = PROM_HIST_K_MIN; k <= PROM_HIST_K_MAX; k++) {
		uint64_t le = (1ull << k) - 1;
		char key[96];
		snprintf(key, sizeof(key), "skiff_trace_tcp_in_cycles_bucket{le=\"%llu\"}",
			 (unsigned long long)le);
		long long want = 0;
		for (unsigned i = 0; i < SK_ARRAY_LEN(vals); i++)
			want += vals[i] <= le;
		long long got = value_of(buf, key);
		assert_int_equal(got, want);
		assert_true(got >= prev);
		prev = got;
	}
	assert_int_equal(value_of(buf, "skiff_trace_tcp_in_cycles_bucket{le=\"+Inf\"}"), 13);
	assert_int_equal(value_of(buf, "skiff_trace_tcp_in_cycles_count"), 13);
	uint64_t sum = 0;
	for (unsigned i = 0; i < SK_ARRAY_LEN(vals); i++)
		sum += vals[i];
	assert_int_equal(value_of(buf, "skiff_trace_tcp_in_cycles_sum"), (long long)sum);
}

/* A buffer that fills: whole lines only, and truncated says so. */
static void test_full(void **state)
{
	(void)state;
	char buf[100];
	for (size_t cap = 0; cap <= sizeof(buf); cap++) {
		struct prom_out o;
		prom_init(&o, buf, cap);
		prom_stat(&o, "http.requests", 1);
		prom_stat(&o, "http.writes", 2);
		assert_true(o.len <= cap);
		assert_true(o.truncated); /* 3 lines of ~45 bytes, twice: never fits 100 */
		assert_true(o.len == 0 || buf[o.len - 1] == '\n');
	}
}

static int route(const char *req, bool full, bool *head)
{
	static struct http_req r;
	return prom_route(&r, (const uint8_t *)req, strlen(req), full, head);
}

/* GET /metrics' one route: the statuses, HEAD, a query, a cut head. */
static void test_route(void **state)
{
	(void)state;
	bool head;
	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", false, &head), 200);
	assert_false(head);
	assert_int_equal(route("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", false, &head), 200);
	assert_true(head);
	assert_int_equal(route("GET /metrics?name[]=x HTTP/1.0\r\n\r\n", false, &head), 200);
	assert_int_equal(route("GET /metricsx HTTP/1.1\r\nHost: x\r\n\r\n", false, &head), 404);
	assert_int_equal(route("GET / HTTP/1.0\r\n\r\n", false, &head), 404);
	assert_int_equal(route("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", false,
			       &head),
			 405);
	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHo", false, &head), 0);
	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHo", true, &head), 431);
	assert_int_equal(route("GET\x01 / HTTP/1.1\r\n\r\n", false, &head), 400);
	char h[PROM_HEAD_MAX];
	size_t n = prom_http_head(h, sizeof(h), 405, 13);
	h[n] = 0;
	assert_string_equal(h, "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; "
			       "charset=utf-8\r\nContent-Length: 13\r\nAllow: GET, HEAD\r\n"
			       "Connection: close\r\n\r\n");
	n = prom_http_head(h, sizeof(h), 200, 7);
	h[n] = 0;
	assert_non_null(strstr(h, "Content-Type: " PROM_CONTENT_TYPE "\r\n"));
	assert_int_equal(prom_http_head(h, 20, 200, 7), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),      cmocka_unit_test(test_gauges),
		cmocka_unit_test(test_stat_lines), cmocka_unit_test(test_hist),
		cmocka_unit_test(test_full),       cmocka_unit_test(test_route),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
