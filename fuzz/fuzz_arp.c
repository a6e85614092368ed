/* fuzz_arp.c — arp_parse on arbitrary bytes; emit must reproduce them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/arp.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct arp_pkt a;
	if (arp_parse(buf, size, &a) == WIRE_OK) {
		/* Every byte of an accepted packet is a field we keep, so emit
		 * gives back the input exactly. */
		uint8_t out[ARP_LEN];
		CHECK(arp_emit(out, sizeof(out), &a) == ARP_LEN);
		CHECK(memcmp(out, buf, ARP_LEN) == 0);
		struct arp_pkt b;
		CHECK(arp_parse(out, sizeof(out), &b) == WIRE_OK);
		CHECK(b.op == a.op && b.spa == a.spa && b.tpa == a.tpa);
	}
	free(buf);
	return 0;
}
