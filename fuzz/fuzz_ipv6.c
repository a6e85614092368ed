/* fuzz_ipv6.c — ipv6_parse and ipv6_parse_quoted on arbitrary bytes: every
 * offset they report lies inside the input; an accepted header emits back
 * to the same 40 bytes.  Seeds: packets Linux sent (fuzz/seeds/ipv6). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/ipv6.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct ipv6_hdr h;
	int r = ipv6_parse(buf, size, &h);
	if (r == WIRE_OK || r == WIRE_EFRAG) {
		size_t total = IPV6_HLEN + (size_t)h.payload_len;
		CHECK(total <= size);
		CHECK(h.l4_off == IPV6_HLEN + h.ext_len);
		CHECK((size_t)h.l4_off + h.l4_len == total);
		CHECK(h.ext_len <= IPV6_EXT_MAX_BYTES && h.next_ext <= IPV6_EXT_MAX);
		CHECK(ipv6_is_unicast(&h.src) || ipv6_is_unspecified(&h.src));
		CHECK(!ipv6_is_unspecified(&h.dst) && !ipv6_is_loopback(&h.dst));
		CHECK((r == WIRE_EFRAG) == h.frag);
		if (r == WIRE_OK)
			CHECK(h.proto != IPV6_NH_HOPOPTS && h.proto != IPV6_NH_DSTOPTS &&
			      h.proto != IPV6_NH_ROUTING && h.proto != IPV6_NH_FRAGMENT);
		uint8_t out[IPV6_HLEN];
		CHECK(ipv6_emit(out, sizeof(out), &h, h.payload_len) == IPV6_HLEN);
		CHECK(memcmp(out, buf, IPV6_HLEN) == 0);
	}
	if (r == WIRE_EOPT || r == WIRE_EEXT || r == WIRE_EROUTE) {
		CHECK(h.pp_code >= -1 && h.pp_code <= IPV6_PP_OPTION);
		if (h.pp_code >= 0)
			CHECK(h.pp_ptr < IPV6_HLEN + (size_t)h.payload_len && h.pp_ptr < size);
	}
	CHECK(r <= 0 && r > -WIRE_NERR);

	r = ipv6_parse_quoted(buf, size, &h);
	if (r == WIRE_OK || r == WIRE_EFRAG) {
		CHECK((size_t)h.l4_off + h.l4_len <= size);
		CHECK((size_t)h.l4_off + h.l4_len <= IPV6_HLEN + (size_t)h.payload_len);
	}
	free(buf);
	return 0;
}
