/* fuzz_eth.c — eth_parse on arbitrary bytes; header emit round trip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/eth.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy: ASan then flags a read even one byte past. */
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct eth_hdr h;
	int r = eth_parse(buf, size, &h);
	if (r == WIRE_OK) {
		CHECK(h.hlen == ETH_HLEN || h.hlen == ETH_VLAN_HLEN);
		CHECK(h.hlen <= size);
		CHECK(h.type >= 0x0600 && h.type != ETH_TYPE_VLAN);
		uint8_t out[ETH_HLEN];
		CHECK(eth_emit(out, sizeof(out), h.dst, h.src, h.type) == ETH_HLEN);
		if (!h.has_vlan)
			CHECK(memcmp(out, buf, ETH_HLEN) == 0);
		struct eth_hdr b;
		CHECK(eth_parse(out, sizeof(out), &b) == WIRE_OK);
		CHECK(memcmp(b.dst, h.dst, 6) == 0 && memcmp(b.src, h.src, 6) == 0);
		CHECK(b.type == h.type && !b.has_vlan);
	} else {
		CHECK(r == WIRE_ETRUNC || r == WIRE_EUNSUP);
	}
	free(buf);
	return 0;
}
