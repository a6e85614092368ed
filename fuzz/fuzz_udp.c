/* fuzz_udp.c — udp_parse and udp_parse6 on arbitrary bytes; emit round trips. */
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
	/* IPv6: the same bytes; a zero checksum never passes, and a parsed
	 * datagram re-emits to one that does. */
	static const uint8_t s6[16] = {0x20, 0x01, 0, 2, [15] = 1}, d6[16] = {0x20, 0x01, 0, 2, [15] = 2};
	if (udp_parse6(buf, size, s6, d6, &h) == WIRE_OK) {
		CHECK(h.csum != 0);
		CHECK(h.len >= UDP_HLEN && h.len <= size);
		uint8_t *out = malloc(h.len);
		if (out) {
			memcpy(out + UDP_HLEN, buf + UDP_HLEN, h.payload_len);
			CHECK(udp_emit6(out, h.len, h.sport, h.dport, s6, d6, h.payload_len) == h.len);
			CHECK(csum_fold(csum_add(csum_pseudo6(s6, d6, 17, h.len), out, h.len)) == 0);
			struct udp_hdr b;
			CHECK(udp_parse6(out, h.len, s6, d6, &b) == WIRE_OK);
			CHECK(b.sport == h.sport && b.dport == h.dport && b.len == h.len);
			free(out);
		}
	}
	free(buf);
	return 0;
}
