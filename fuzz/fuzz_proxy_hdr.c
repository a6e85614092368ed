/* fuzz_proxy_hdr.c — the proxy's head rewriting (http/proxy_hdr.h) on
 * arbitrary bytes.  Input: [mode][bytes...].
 *  mode even: the bytes as a request head; when the strict request parser
 *    takes it, proxy_req_head's output (for each body framing) must parse
 *    again, whole, with the same method and target, and carry no
 *    hop-by-hop field, no field its Connection named, and exactly one
 *    framing field (or none without a body);
 *  mode odd: the bytes as a response head; when resp.c takes it, the field
 *    walk (proxy_head_field) yields names that are tokens and values with
 *    no CR, LF or NUL and no surrounding whitespace, stays inside the head,
 *    and keeps nothing hop-by-hop for the client.
 * Build: make build/fuzz/fuzz_proxy_hdr. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/parser.h"
#include "http/proxy_hdr.h"
#include "http/resp.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_req rq, again;
static struct proxy_field f[HTTP_MAX_FIELDS], g[HTTP_MAX_FIELDS];
static uint8_t out[HTTP_HEAD_MAX + 4096];

static unsigned fields(const uint8_t *buf, const struct http_req *r, struct proxy_field *to)
{
	for (unsigned i = 0; i < r->nheaders; i++) {
		to[i].name = (const char *)buf + r->headers[i].name.off;
		to[i].nlen = r->headers[i].name.len;
		to[i].value = (const char *)buf + r->headers[i].value.off;
		to[i].vlen = r->headers[i].value.len;
	}
	return r->nheaders;
}

static void request(const uint8_t *buf, size_t n)
{
	http_req_init(&rq, UINT64_MAX);
	int h = http_parse_head(&rq, buf, n);
	if (h <= 0)
		return;
	unsigned nf = fields(buf, &rq, f);
	struct proxy_conn_tokens ct;
	proxy_conn_tokens(&ct, f, nf);
	static const uint64_t bodies[] = {PROXY_BODY_NONE, PROXY_BODY_CHUNKED, 0, 12345};
	struct sk_addr a = sk_addr_v4(0x7f000001);
	for (unsigned k = 0; k < 4; k++) {
		struct proxy_req_info ri = {(const char *)buf + rq.method_s.off, rq.method_s.len,
					    (const char *)buf + rq.target.off, rq.target.len,
					    rq.version, &a, "http", "skiff", bodies[k], "up:80"};
		long l = proxy_req_head(out, sizeof(out), &ri, f, nf);
		if (l < 0) {
			CHECK(l == -SK_ENOBUFS || (l == -SK_EINVAL && ct.overflow));
			continue;
		}
		CHECK(!ct.overflow);
		http_req_init(&again, UINT64_MAX);
		CHECK(http_parse_head(&again, out, (size_t)l) == (int)l);
		CHECK(again.method == rq.method && again.target.len == rq.target.len);
		CHECK(!memcmp(out + again.target.off, buf + rq.target.off, rq.target.len));
		unsigned ng = fields(out, &again, g), framing = 0;
		for (unsigned i = 0; i < ng; i++) {
			CHECK(!proxy_hop_by_hop(g[i].name, g[i].nlen, &ct));
			if (proxy_name_is(g[i].name, g[i].nlen, "content-length") ||
			    proxy_name_is(g[i].name, g[i].nlen, "transfer-encoding"))
				framing++;
		}
		CHECK(framing == (bodies[k] == PROXY_BODY_NONE ? 0u : 1u));
		CHECK(again.chunked == (bodies[k] == PROXY_BODY_CHUNKED));
	}
}

static void response(const uint8_t *buf, size_t n)
{
	struct http_resp rp;
	http_resp_init(&rp);
	size_t used = 0;
	if (http_resp_head(&rp, buf, n, &used) != HTTP_DONE)
		return;
	unsigned nf = 0;
	size_t pos = 0;
	while (nf < HTTP_MAX_FIELDS && proxy_head_field(buf, used, &pos, &f[nf])) {
		const struct proxy_field *x = &f[nf];
		CHECK(pos <= used);
		CHECK(x->nlen > 0);
		for (size_t i = 0; i < x->nlen; i++)
			CHECK(http_char_class[(uint8_t)x->name[i]] & HTTP_C_TOKEN);
		for (size_t i = 0; i < x->vlen; i++)
			CHECK(x->value[i] != '\r' && x->value[i] != '\n' && x->value[i] != 0);
		CHECK(!x->vlen || (x->value[0] != ' ' && x->value[x->vlen - 1] != ' ' &&
				   x->value[0] != '\t' && x->value[x->vlen - 1] != '\t'));
		CHECK((const uint8_t *)x->value + x->vlen <= buf + used);
		nf++;
	}
	struct proxy_conn_tokens ct;
	proxy_conn_tokens(&ct, f, nf);
	for (unsigned i = 0; i < nf; i++)
		if (proxy_resp_keep(&f[i], &ct))
			CHECK(!proxy_hop_by_hop(f[i].name, f[i].nlen, &ct));
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
	if (data[0] & 1)
		response(buf, n);
	else
		request(buf, n);
	free(buf);
	return 0;
}
