/* csum.h — the Internet checksum (RFC 1071) and incremental update (RFC 1624).
 *
 * Values are in "network word" domain: csum_partial sums big-endian 16-bit
 * words, so a result is stored with sk_put_be16.  The sum is kept unfolded in
 * 64 bits so that several calls can be chained (pseudo header, header,
 * payload) and folded once.  The implementation adds 8 bytes per step.
 */
#ifndef WIRE_CSUM_H
#define WIRE_CSUM_H

#include "../base/sk.h"

/* Add `len` bytes at `data` to `sum`.  Odd lengths are padded with a zero
 * byte, as the RFC says; only the *last* chunk of a chain may be odd. */
uint64_t csum_add(uint64_t sum, const void *data, size_t len);

/* Copy len bytes from src to dst (not overlapping) and return their sum,
 * csum_add(0, src, len): one pass over the bytes instead of two. */
uint64_t csum_copy(void *dst, const void *src, size_t len);

/* Add `part`, the sum of a piece that starts at byte `off` of the summed
 * data (csum_copy or csum_add(0, ...) of that piece alone), to sum.  A
 * piece at an odd offset counts byte-swapped (RFC 1071 2.(B)), so pieces
 * of any length chain, in any order. */
uint64_t csum_add_at(uint64_t sum, uint64_t part, size_t off);

/* Fold to 16 bits and complement: the value to put in a header.  A buffer
 * whose stored checksum is correct folds to 0 when summed whole. */
uint16_t csum_fold(uint64_t sum);

/* Shorthand: csum_fold(csum_add(0, data, len)). */
uint16_t csum(const void *data, size_t len);

/* The IPv4 pseudo header for TCP/UDP (addresses host order, len = L4 bytes). */
uint64_t csum_pseudo4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);

/* The IPv6 pseudo header (RFC 8200 8.1) for TCP, UDP and ICMPv6: the two
 * 16-byte addresses as on the wire, the upper-layer length (32 bits: it
 * excludes the extension headers before the upper-layer header) and the
 * next-header value of the upper-layer protocol. */
uint64_t csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint32_t len);

/* RFC 1624 eqn. 3: new checksum after one 16-bit (32-bit) field changes. */
uint16_t csum_update16(uint16_t check, uint16_t old_val, uint16_t new_val);
uint16_t csum_update32(uint16_t check, uint32_t old_val, uint32_t new_val);

#endif
