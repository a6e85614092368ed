/* fuzz_ipv4.c — ipv4_parse on arbitrary bytes; emit round trip for
 * option-less headers.  Checksums are not verified (SK_FUZZING), so the
 * emitted header's own checksum is checked instead. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/ipv4.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct ipv4_hdr h;
	int r = ipv4_parse(buf, size, &h);
	if (r == WIRE_OK || r == WIRE_EFRAG || r == WIRE_EBADADDR) {
		/* Header was validated: its lengths are consistent with size. */
		CHECK(h.hlen >= IPV4_HLEN && h.hlen <= 60 && h.hlen % 4 == 0);
		CHECK(h.payload_off == h.hlen);
		CHECK((size_t)h.payload_off + h.payload_len == h.total_len);
		CHECK(h.total_len <= size);
		if (r == WIRE_OK)
			CHECK(!ipv4_is_fragment(&h));
		if (r == WIRE_EFRAG)
			CHECK(ipv4_is_fragment(&h));
	}
	if (r == WIRE_OK && h.hlen == IPV4_HLEN) {
		uint8_t *out = malloc(h.total_len);
		if (out) {
			memcpy(out + IPV4_HLEN, buf + IPV4_HLEN, h.payload_len);
			CHECK(ipv4_emit(out, h.total_len, &h, h.payload_len) == IPV4_HLEN);
			CHECK(csum(out, IPV4_HLEN) == 0);
			/* Same bytes apart from the checksum, which the input may
			 * have had wrong. */
			CHECK(memcmp(out, buf, 10) == 0 && memcmp(out + 12, buf + 12, 8) == 0);
			struct ipv4_hdr b;
			CHECK(ipv4_parse(out, h.total_len, &b) == WIRE_OK);
			CHECK(b.tos == h.tos && b.total_len == h.total_len && b.id == h.id &&
			      b.frag == h.frag && b.ttl == h.ttl && b.proto == h.proto &&
			      b.src == h.src && b.dst == h.dst && b.payload_len == h.payload_len);
			free(out);
		}
	}
	free(buf);
	return 0;
}
