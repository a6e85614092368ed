/* fuzz_http_accept_enc.c — Accept-Encoding (http/accept_enc.h) on
 * arbitrary bytes.  Input: [which siblings exist][field...].  Checks: no
 * read past the exact-size copy (ASan); weights stay in -1..1000; the
 * choice never picks a sibling that is absent or refused.
 * Build: make build/fuzz/fuzz_http_accept_enc. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/accept_enc.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = size - 1;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, n);
	/* Accept-Encoding. */
	struct http_accept_enc ae;
	http_accept_enc_parse(buf, n, &ae);
	CHECK(ae.q_gzip >= -1 && ae.q_gzip <= 1000 && ae.q_br >= -1 && ae.q_br <= 1000);
	CHECK(ae.q_star >= -1 && ae.q_star <= 1000 && ae.q_identity >= -1 &&
	      ae.q_identity <= 1000);
	bool gz = data[0] & 1, br = data[0] & 2;
	enum http_coding c = http_accept_enc_choose(&ae, gz, br);
	if (c == HTTP_CODING_GZIP)
		CHECK(gz && http_accept_enc_q(&ae, ae.q_gzip) > 0);
	if (c == HTTP_CODING_BR)
		CHECK(br && http_accept_enc_q(&ae, ae.q_br) > 0);
	free(buf);
	return 0;
}
