/* fuzz_http_resp.c — the response head parser (http/resp.h) on arbitrary
 * bytes.  Input: [split][bytes...].  Checks:
 *  - the one-shot parse never reads outside its exact-size copy (ASan),
 *    takes no more than it was given, and its results obey the grammar
 *    (status 100..599, version 10/11, never both a length and chunked);
 *  - feeding the first `split` bytes and then the rest gives the same
 *    verdict, the same byte count and the same results; so does feeding
 *    one byte per call (short inputs);
 *  - on HTTP_DONE, the body framing is consistent with the fields.
 * Build: make build/fuzz/fuzz_http_resp. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/resp.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const struct http_resp *a, const struct http_resp *b)
{
	CHECK(a->err == b->err);
	CHECK(a->status == b->status && a->version == b->version);
	CHECK(a->has_content_length == b->has_content_length && a->chunked == b->chunked);
	CHECK(a->content_length == b->content_length);
	CHECK(a->conn_close == b->conn_close && a->conn_keep_alive == b->conn_keep_alive);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = size - 1;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, n);
	struct http_resp one, two;
	size_t used1;
	http_resp_init(&one);
	int v1 = http_resp_head(&one, buf, n, &used1);
	CHECK(used1 <= n);
	CHECK(v1 == HTTP_DONE || v1 <= HTTP_NEED_MORE);
	if (v1 == HTTP_NEED_MORE)
		CHECK(used1 == n);
	if (v1 == HTTP_DONE) {
		CHECK(one.status >= 100 && one.status <= 599);
		CHECK(one.version == 10 || one.version == 11);
		CHECK(!(one.has_content_length && one.chunked));
		CHECK(one.content_length <= 999999999999999999ull);
		enum http_body_kind k = http_resp_body(&one, false);
		CHECK(k != HTTP_BODY_CHUNKED || one.chunked);
		CHECK(k != HTTP_BODY_LENGTH || one.has_content_length);
		CHECK(http_resp_body(&one, true) == HTTP_BODY_NONE);
		if (k == HTTP_BODY_CLOSE)
			CHECK(!http_resp_keep_alive(&one));
	}

	/* Two pieces. */
	size_t cut = n ? data[0] % (n + 1) : 0, ua, ub = 0;
	http_resp_init(&two);
	int v = http_resp_head(&two, buf, cut, &ua);
	if (v == HTTP_NEED_MORE) {
		CHECK(ua == cut);
		v = http_resp_head(&two, buf + cut, n - cut, &ub);
	} else {
		CHECK(v == v1 && ua == used1);
	}
	CHECK(v == v1);
	if (v != HTTP_NEED_MORE)
		CHECK(ua + ub == used1);
	same(&one, &two);

	/* One byte per call. */
	if (n <= 512) {
		http_resp_init(&two);
		size_t at = 0, u = 0;
		v = HTTP_NEED_MORE;
		for (size_t i = 0; i < n && v == HTTP_NEED_MORE; i++) {
			v = http_resp_head(&two, buf + i, 1, &u);
			at = i + u; /* DONE: one past the last byte; error: its offset */
		}
		CHECK(v == v1);
		if (v != HTTP_NEED_MORE)
			CHECK(at == used1);
		same(&one, &two);
	}
	free(buf);
	return 0;
}
