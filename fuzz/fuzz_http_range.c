/* fuzz_http_range.c — http_range_parse (http/range.h) on arbitrary bytes.
 * Input: [len: 8 bytes LE][max: 1 byte][field...].  Checks: no read past
 * the exact-size copy (ASan); on OK, 1..max ranges, each inside the
 * representation, adding up to at most len; the verdict does not depend
 * on bytes past the field (a copy with a suffix appended and n unchanged
 * gives the same answer).  Build: make build/fuzz/fuzz_http_range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/range.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 9)
		return 0;
	uint64_t len = 0;
	for (int i = 0; i < 8; i++)
		len |= (uint64_t)data[i] << (8 * i);
	if (data[0] & 1)
		len &= 0xffff; /* small lengths half the time: more satisfiable ranges */
	unsigned max = 1 + data[8] % HTTP_MAX_RANGES;
	size_t n = size - 9;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 9, n);
	struct http_range rg[HTTP_MAX_RANGES];
	unsigned nr = 99;
	enum http_range_verdict v = http_range_parse(buf, n, len, rg, max, &nr);
	CHECK(v == HTTP_RANGE_IGNORE || v == HTTP_RANGE_OK || v == HTTP_RANGE_UNSATISFIABLE);
	if (v == HTTP_RANGE_OK) {
		CHECK(nr >= 1 && nr <= max);
		uint64_t total = 0;
		for (unsigned i = 0; i < nr; i++) {
			CHECK(rg[i].first <= rg[i].last && rg[i].last < len);
			total += rg[i].last - rg[i].first + 1;
			CHECK(total <= len);
		}
	} else {
		CHECK(nr == 0);
	}
	uint8_t *longer = malloc(n + 4);
	if (!longer)
		abort();
	memcpy(longer, buf, n);
	memcpy(longer + n, "0-1,", 4);
	struct http_range rg2[HTTP_MAX_RANGES];
	unsigned nr2;
	CHECK(http_range_parse(longer, n, len, rg2, max, &nr2) == v && nr2 == nr);
	CHECK(!nr || memcmp(rg, rg2, nr * sizeof(rg[0])) == 0);
	free(longer);
	free(buf);
	return 0;
}
