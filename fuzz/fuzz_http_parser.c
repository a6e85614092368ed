/* fuzz_http_parser.c — the request head parser and the chunked decoder on
 * arbitrary bytes.
 *
 * Input: [split_lo][split_hi][request bytes...].  The two first bytes choose
 * where the request is cut.  Checks:
 *  - the one-shot parse never reads outside its exact-size copy (ASan),
 *    and its results obey the grammar (slices inside the head, names are
 *    tokens, values trimmed, framing facts consistent);
 *  - parsing the first `split` bytes and then all of them (from another
 *    copy, at another address) gives exactly the one-shot result, and a
 *    verdict on the prefix is already the final one;
 *  - for short inputs, feeding one more byte per call gives it too;
 *  - the chunked decoder over what follows the head (or over the whole
 *    input when the head is bad), whole and cut in two, decodes the same
 *    bytes with the same verdict, never more than max_body.
 * Build: make build/fuzz/fuzz_http_parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/chunked.h"
#include "http/parser.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define MAX_BODY 1000u /* small, so that 413 is reachable */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *copy(const uint8_t *p, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		abort();
	memcpy(b, p, n);
	return b;
}

static void same_req(const struct http_req *a, const struct http_req *b)
{
	CHECK(a->err == b->err && a->status == b->status);
	if (a->err)
		return;
	CHECK(a->head_len == b->head_len && a->method == b->method && a->version == b->version);
	CHECK(!memcmp(&a->method_s, &b->method_s, sizeof(a->method_s)));
	CHECK(!memcmp(&a->target, &b->target, sizeof(a->target)));
	CHECK(a->nheaders == b->nheaders);
	CHECK(!memcmp(a->headers, b->headers, a->nheaders * sizeof(a->headers[0])));
	CHECK(a->has_content_length == b->has_content_length);
	CHECK(a->content_length == b->content_length);
	CHECK(a->chunked == b->chunked && a->keep_alive == b->keep_alive);
	CHECK(a->has_host == b->has_host && a->expect_continue == b->expect_continue);
}

static bool in_head(struct http_slice s, int head)
{
	return (int)s.off + (int)s.len <= head;
}

static void check_head(const struct http_req *r, const uint8_t *buf, size_t n, int ret)
{
	if (ret == HTTP_NEED_MORE)
		return;
	if (ret < 0) {
		CHECK(r->err == ret);
		int st = http_err_status(ret);
		CHECK(st == 400 || st == 413 || st == 414 || st == 431 || st == 501 || st == 505);
		CHECK(r->status == st);
		return;
	}
	CHECK((size_t)ret <= n && ret == r->head_len && ret <= (int)HTTP_HEAD_MAX);
	CHECK(buf[ret - 1] == '\n' && buf[ret - 2] == '\r' && buf[ret - 3] == '\n');
	CHECK(r->version == 10 || r->version == 11);
	CHECK(r->method != HTTP_UNKNOWN);
	CHECK(r->method_s.len > 0 && in_head(r->method_s, ret));
	CHECK(r->target.len > 0 && in_head(r->target, ret));
	CHECK(r->target.len <= HTTP_MAX_REQUEST_LINE);
	for (unsigned i = 0; i < r->target.len; i++)
		CHECK(buf[r->target.off + i] > 0x20 && buf[r->target.off + i] < 0x7f);
	CHECK(r->nheaders <= HTTP_MAX_FIELDS);
	for (unsigned i = 0; i < r->nheaders; i++) {
		const struct http_header *h = &r->headers[i];
		CHECK(h->name.len > 0 && in_head(h->name, ret) && in_head(h->value, ret));
		for (unsigned j = 0; j < h->name.len; j++)
			CHECK(http_char_class[buf[h->name.off + j]] & HTTP_C_TOKEN);
		CHECK(buf[h->name.off + h->name.len] == ':');
		for (unsigned j = 0; j < h->value.len; j++)
			CHECK(http_char_class[buf[h->value.off + j]] & HTTP_C_VALUE);
		if (h->value.len) {
			CHECK(!(http_char_class[buf[h->value.off]] & HTTP_C_WS));
			CHECK(!(http_char_class[buf[h->value.off + h->value.len - 1]] & HTTP_C_WS));
		}
	}
	CHECK(!(r->has_content_length && r->chunked));
	CHECK(!r->has_content_length || r->content_length <= MAX_BODY);
	CHECK(r->version == 11 ? r->has_host : !r->chunked);
	CHECK(r->keep_alive == (r->version == 11 ? !r->conn_close
						 : r->conn_keep_alive && !r->conn_close));
}

struct dec {
	int ret;
	size_t used, dlen;
};

/* Decode body[0, n) in pieces [0, cut) and then the rest, into out. */
static struct dec decode(const uint8_t *body, size_t n, size_t cut, uint8_t *out)
{
	struct http_chunked c;
	http_chunked_init(&c, MAX_BODY);
	struct dec d = { HTTP_NEED_MORE, 0, 0 };
	size_t ends[2] = { cut, n };
	for (int i = 0; i < 2 && d.ret == HTTP_NEED_MORE; i++) {
		size_t len = ends[i] - d.used, used = 0, in = len;
		uint8_t *b = copy(body + d.used, len);
		d.ret = http_chunked_decode(&c, b, &len, &used);
		CHECK(len <= used && used <= in);
		CHECK(d.ret != HTTP_NEED_MORE || used == in);
		memcpy(out + d.dlen, b, len);
		d.dlen += len;
		d.used += used;
		free(b);
	}
	CHECK(d.ret == HTTP_DONE || d.ret == HTTP_NEED_MORE ||
	      (d.ret < HTTP_NEED_MORE && http_err_status(d.ret) != 0));
	CHECK(c.total == d.dlen && d.dlen <= MAX_BODY);
	return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t n = size - 2;
	size_t split = ((size_t)data[0] | (size_t)data[1] << 8) % (n + 1);
	data += 2;

	/* One shot.  Bit 15 of the split word: the embedder takes PURGE (the
	 * proxy); without it PURGE must be a 501 like any unknown token. */
	bool purge = data[-1] & 0x80;
	uint8_t *buf = copy(data, n);
	struct http_req a;
	http_req_init(&a, MAX_BODY);
	a.accept_purge = purge;
	int ra = http_parse_head(&a, buf, n);
	check_head(&a, buf, n, ra);
	CHECK(ra <= 0 || a.method != HTTP_PURGE || purge);
	if (!purge && ra > 0)
		CHECK(a.method != HTTP_UNKNOWN);
	CHECK(n < HTTP_HEAD_MAX || ra != HTTP_NEED_MORE);

	/* Cut at split, then whole from another copy. */
	struct http_req b;
	http_req_init(&b, MAX_BODY);
	b.accept_purge = purge;
	uint8_t *part = copy(data, split);
	int rb = http_parse_head(&b, part, split);
	free(part);
	CHECK(rb == HTTP_NEED_MORE || rb == ra);
	uint8_t *buf2 = copy(data, n);
	rb = http_parse_head(&b, buf2, n);
	free(buf2);
	CHECK(rb == ra);
	same_req(&a, &b);

	/* One more byte per call, on short inputs. */
	if (n <= 512) {
		struct http_req c;
		http_req_init(&c, MAX_BODY);
		c.accept_purge = purge;
		int rc = HTTP_NEED_MORE;
		for (size_t k = 0; k <= n && rc == HTTP_NEED_MORE; k++)
			rc = http_parse_head(&c, buf, k);
		CHECK(rc == ra);
		same_req(&a, &c);
	}

	/* The chunked decoder over what follows. */
	const uint8_t *body = ra > 0 ? buf + ra : buf;
	size_t blen = ra > 0 ? n - (size_t)ra : n;
	uint8_t *o1 = malloc(blen + 1), *o2 = malloc(blen + 1);
	struct dec d1 = decode(body, blen, blen, o1);
	struct dec d2 = decode(body, blen, split < blen ? split : blen, o2);
	CHECK(d1.ret == d2.ret && d1.used == d2.used && d1.dlen == d2.dlen);
	CHECK(memcmp(o1, o2, d1.dlen) == 0);
	free(o1);
	free(o2);
	free(buf);
	return 0;
}
