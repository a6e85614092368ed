/* fuzz_udp.c — udp_parse on arbitrary bytes; emit round trip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/udp.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define SRC 0x0a000001u
#define DST 0x0a000002u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct udp_hdr h;
	if (udp_parse(buf, size, SRC, DST, &h) == WIRE_OK) {
		CHECK(h.len >= UDP_HLEN && h.len <= size);
		CHECK(h.payload_off + h.payload_len == h.len);
		uint8_t *out = malloc(h.len);
		if (out) {
			memcpy(out + UDP_HLEN, buf + UDP_HLEN, h.payload_len);
			CHECK(udp_emit(out, h.len, h.sport, h.dport, SRC, DST, h.payload_len) == h.len);
			uint64_t s = csum_pseudo4(SRC, DST, 17, h.len);
			CHECK(csum_fold(csum_add(s, out, h.len)) == 0);
			CHECK(sk_get_be16(out + 6) != 0);
			struct udp_hdr b;
			CHECK(udp_parse(out, h.len, SRC, DST, &b) == WIRE_OK);
			CHECK(b.sport == h.sport && b.dport == h.dport && b.len == h.len);
			CHECK(memcmp(out + UDP_HLEN, buf + UDP_HLEN, h.payload_len) == 0);
			free(out);
		}
	}
	free(buf);
	return 0;
}
