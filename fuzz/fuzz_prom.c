/* fuzz_prom.c — GET /metrics' router and the exposition's names
 * (http/prom.h) on arbitrary bytes.
 * Input: the bytes of a request head, also used as a --stats name.
 * Checks: no read past the exact-size copy (ASan); the router's verdict is
 * one of the statuses it documents, never "need more" when told the
 * buffer is full, and a verdict on a prefix stays the same on the whole
 * input once the head is complete; every name prom_name builds matches
 * [a-zA-Z_:][a-zA-Z0-9_:]* and a counter's ends in _total; the response
 * head fits PROM_HEAD_MAX.
 * Build: make build/fuzz/fuzz_prom. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/parser.h"
#include "http/prom.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool known(int st)
{
	switch (st) {
	case 200: case 400: case 404: case 405: case 413: case 414: case 431: case 501: case 505:
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_req req;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	bool head;
	int whole = prom_route(&req, buf, size, true, &head);
	CHECK(known(whole));
	int partial = prom_route(&req, buf, size, false, &head);
	CHECK(partial == 0 || partial == whole);
	char h[PROM_HEAD_MAX];
	CHECK(prom_http_head(h, sizeof(h), whole, size) > 0);
	free(buf);

	/* The same bytes as a --stats name. */
	char *name = malloc(size + 1);
	if (!name)
		abort();
	memcpy(name, data, size);
	name[size] = 0;
	char out[256];
	for (int counter = 0; counter < 2; counter++) {
		size_t n = prom_name(out, sizeof(out), name, counter);
		if (!n)
			continue;
		CHECK(strlen(out) == n);
		for (size_t i = 0; i < n; i++) {
			char c = out[i];
			bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
				  c == ':' || (i > 0 && c >= '0' && c <= '9');
			CHECK(ok);
		}
		if (counter)
			CHECK(n >= 6 && memcmp(out + n - 6, "_total", 6) == 0);
	}
	free(name);
	return 0;
}
