/* fuzz_http_etag.c — entity-tag lists (http/etag.h) on arbitrary bytes.
 * Input: [selector][list...].  Checks: no read past the exact-size copy
 * (ASan); a strong match implies a weak one; a weak tag matches strongly
 * only through "*"; a missing tag matches only what "*" matches, and
 * nothing when no representation exists.
 * Build: make build/fuzz/fuzz_http_etag. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/etag.h"

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
	/* Entity-tags, against a tag taken from the input itself. */
	static const char *tags[] = {"\"a\"", "W/\"a\"", "\"5f1e-2a\"", "\"\""};
	const char *tag = tags[data[0] % 4];
	size_t tl = strlen(tag);
	bool strong = http_etag_list_match(buf, n, tag, tl, HTTP_ETAG_STRONG, true);
	bool weak = http_etag_list_match(buf, n, tag, tl, HTTP_ETAG_WEAK, true);
	CHECK(!strong || weak);
	if (tag[0] == 'W')
		CHECK(!strong || (n && memchr(buf, '*', n))); /* a weak tag only via "*" */
	bool none = http_etag_list_match(buf, n, NULL, 0, HTTP_ETAG_WEAK, true);
	CHECK(!none || weak);
	CHECK(!http_etag_list_match(buf, n, NULL, 0, HTTP_ETAG_WEAK, false));
	(void)http_etag_is_one(buf, n);

	free(buf);
	return 0;
}
