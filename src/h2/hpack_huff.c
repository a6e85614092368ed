/* hpack_huff.c — Huffman coding of HPACK string literals (RFC 7541 5.2,
 * Appendix B): encode, and a decoder that refuses what 5.2 forbids.
 *
 * The decoder walks one bit at a time over the canonical code (see
 * hpack_huff_table.c): after each bit, the code read so far is a whole
 * symbol exactly when it lies in [first, first + count) of its length.  A
 * table-driven decoder (a byte at a time) would be faster; header strings
 * are short, and this one's tables take under 1 KB instead of several. */
#include "hpack.h"
#include "hpack_huff.h"

size_t hpack_huff_encoded_len(const uint8_t *src, size_t len)
{
	uint64_t bits = 0;
	for (size_t i = 0; i < len; i++)
		bits += hpack_huff_code[src[i]].bits;
	return (size_t)((bits + 7) / 8);
}

size_t hpack_huff_encode(uint8_t *out, size_t cap, const uint8_t *src, size_t len)
{
	size_t need = hpack_huff_encoded_len(src, len);
	if (need > cap)
		return 0;
	/* acc holds up to 7 pending bits plus one code of at most 30. */
	uint64_t acc = 0;
	unsigned nbits = 0;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		const struct hpack_huff_sym *s = &hpack_huff_code[src[i]];
		acc = acc << s->bits | s->code;
		nbits += s->bits;
		while (nbits >= 8) {
			nbits -= 8;
			out[n++] = (uint8_t)(acc >> nbits);
		}
	}
	/* Pad with the most significant bits of EOS, all ones (5.2). */
	if (nbits > 0)
		out[n++] = (uint8_t)(acc << (8 - nbits) | (0xffu >> nbits));
	return n;
}

int hpack_huff_decode(const uint8_t *src, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
	uint32_t code = 0;
	unsigned bits = 0;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--) {
			code = code << 1 | ((uint32_t)(src[i] >> b) & 1u);
			bits++;
			/* The code is complete (Kraft sum 1): every 30-bit string
			 * starts with a whole symbol, so bits never passes 30. */
			uint32_t k = code - hpack_huff_first[bits];
			if (k >= hpack_huff_count[bits])
				continue;
			unsigned sym = hpack_huff_sorted[hpack_huff_offset[bits] + k];
			/* "A Huffman-encoded string literal containing the EOS
			 * symbol MUST be treated as a decoding error." */
			if (sym == HPACK_HUFF_EOS)
				return HPACK_EHUFF;
			if (out) {
				if (n >= cap)
					return HPACK_ENOBUF;
				out[n] = (uint8_t)sym;
			}
			n++;
			code = 0;
			bits = 0;
		}
	}
	/* What is left is padding: at most 7 bits, all ones (the start of
	 * EOS); anything else is a decoding error (5.2). */
	if (bits > 7 || code != (1u << bits) - 1u)
		return HPACK_EHUFF;
	*out_len = n;
	return HPACK_OK;
}
