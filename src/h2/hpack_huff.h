/* hpack_huff.h — the Huffman code tables (RFC 7541 Appendix B), internal to
 * src/h2: hpack_huff.c codes with them, hpack_test.c checks them. */
#ifndef H2_HPACK_HUFF_H
#define H2_HPACK_HUFF_H

#include "base/sk.h"

#define HPACK_HUFF_SYMS 257   /* 256 bytes and EOS */
#define HPACK_HUFF_EOS 256
#define HPACK_HUFF_MAX_BITS 30
#define HPACK_HUFF_MIN_BITS 5

struct hpack_huff_sym {
	uint32_t code; /* right-aligned */
	uint8_t bits;
};

extern const struct hpack_huff_sym hpack_huff_code[HPACK_HUFF_SYMS];
/* Indexed by code length 0..30 (see hpack_huff_table.c). */
extern const uint32_t hpack_huff_first[HPACK_HUFF_MAX_BITS + 1];
extern const uint16_t hpack_huff_count[HPACK_HUFF_MAX_BITS + 1];
extern const uint16_t hpack_huff_offset[HPACK_HUFF_MAX_BITS + 1];
extern const uint16_t hpack_huff_sorted[HPACK_HUFF_SYMS];

#endif
