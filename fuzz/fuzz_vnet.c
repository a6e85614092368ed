/* fuzz_vnet.c — vnet_parse on an arbitrary virtio_net_hdr and frame, then
 * every segment vnet_seg cuts from it, and vnet_csum_finish.
 *
 * Input: 10 bytes of header (struct virtio_net_hdr, little-endian), one
 * byte choosing the segment buffer size, then the frame.  What must hold
 * whatever the bytes: no read or write outside the buffers (ASan), every
 * segment fits the buffer and is a frame of its own whose IPv4 header and
 * TCP checksums fold to zero, and the payloads add up to the super-frame's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/vnet.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < VNET_HLEN_LEGACY + 1)
		return 0;
	struct vnet_hdr h;
	vnet_hdr_read(data, &h);
	/* 64 .. 2048 bytes, the ring's buffer at most. */
	size_t cap = 64 + (size_t)data[VNET_HLEN_LEGACY] * 8;
	const uint8_t *in = data + VNET_HLEN_LEGACY + 1;
	size_t len = size - VNET_HLEN_LEGACY - 1;
	/* An exact-size copy, so ASan sees a read one byte past the frame. */
	uint8_t *frame = malloc(len ? len : 1);
	uint8_t *seg = malloc(cap);
	if (!frame || !seg)
		goto out;
	memcpy(frame, in, len);

	struct vnet_frame f;
	int r = vnet_parse(&h, frame, len, cap, &f);
	if (r == WIRE_OK && f.gso) {
		CHECK(f.nsegs >= 1 && f.nsegs <= VNET_MAX_SEGS);
		CHECK(f.hlen <= len && f.l3_off < f.l4_off && f.l4_off < f.hlen);
		uint64_t total = 0;
		for (uint32_t i = 0; i < f.nsegs; i++) {
			size_t n = vnet_seg(&f, frame, i, seg, cap);
			CHECK(n > f.hlen && n <= cap);
			total += n - f.hlen;
			const uint8_t *ip = seg + f.l3_off;
			size_t l4len = n - f.l4_off;
			uint64_t ps;
			if (f.ipv6) {
				ps = csum_pseudo6(ip + 8, ip + 24, 6, (uint32_t)l4len);
			} else {
				CHECK(csum(ip, f.l4_off - f.l3_off) == 0);
				ps = csum_pseudo4(sk_get_be32(ip + 12), sk_get_be32(ip + 16), 6,
						  (uint16_t)l4len);
			}
			CHECK(csum_fold(csum_add(ps, seg + f.l4_off, l4len)) == 0);
		}
		CHECK(total == f.payload);
		CHECK(vnet_seg(&f, frame, f.nsegs, seg, cap) == 0);
	}
	if (r == WIRE_OK && (h.flags & VNET_F_NEEDS_CSUM))
		CHECK(vnet_csum_finish(frame, len, h.csum_start, h.csum_offset) == WIRE_OK);
	else
		(void)vnet_csum_finish(frame, len, h.csum_start, h.csum_offset);
	(void)vnet_tx_segs(&h, len);
out:
	free(frame);
	free(seg);
	return 0;
}
