/* fuzz_http_date.c — HTTP-dates (http/date.h) on arbitrary bytes.
 * Input: [unused][bytes...].  Checks: no read past the exact-size copy
 * (ASan); an accepted date formats back to an IMF-fixdate that reads as
 * the same second.
 * Build: make build/fuzz/fuzz_http_date. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/date.h"

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
	/* Dates. */
	(void)data;
	uint64_t t;
	if (http_date_parse(buf, n, &t)) {
		char out[HTTP_DATE_LEN];
		uint64_t t2;
		http_date_format(t, out);
		CHECK(http_date_parse((const uint8_t *)out, HTTP_DATE_LEN, &t2) && t2 == t);
	}

	free(buf);
	return 0;
}
