/* csum.c — Internet checksum (RFC 1071) and incremental update (RFC 1624).
 *
 * The one's-complement sum is byte-order independent (RFC 1071 2.(B)): summing
 * native-endian words and byte-swapping the folded result gives the same value
 * as summing big-endian words.  So the loop adds whole native 64-bit words,
 * 8 bytes per step, and swaps once at the end.  Offsets are counted from
 * `data`, not from an aligned address, so any alignment works; loads go through
 * sk_memcpy, which compiles to a plain unaligned load.
 */
#include "csum.h"

/* acc + v with the carry out of bit 63 added back in (end-around carry).
 * acc + v - 2^64 + 1 cannot overflow again, so one correction suffices. */
static inline uint64_t csum_adc(uint64_t acc, uint64_t v)
{
	acc += v;
	return acc + (acc < v);
}

/* Fold a 64-bit one's-complement sum to 16 bits (not complemented). */
static inline uint16_t csum_fold16(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32); /* < 2^33 */
	s = (s & 0xffffu) + (s >> 16);     /* < 2^18 */
	s = (s & 0xffffu) + (s >> 16);     /* <= 0x10002 */
	s = (s & 0xffffu) + (s >> 16);     /* <= 0xffff */
	return (uint16_t)s;
}

static inline uint64_t csum_load64(const uint8_t *p)
{
	uint64_t v;
	sk_memcpy(&v, p, sizeof(v));
	return v;
}

uint64_t csum_add(uint64_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t acc = 0;

	/* Four independent loads per iteration let the CPU overlap them; the
	 * adds still chain through acc, one 8-byte word per add. */
	while (len >= 32) {
		acc = csum_adc(acc, csum_load64(p));
		acc = csum_adc(acc, csum_load64(p + 8));
		acc = csum_adc(acc, csum_load64(p + 16));
		acc = csum_adc(acc, csum_load64(p + 24));
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		acc = csum_adc(acc, csum_load64(p));
		p += 8;
		len -= 8;
	}
	if (len) {
		/* The tail lands at the low addresses of a zeroed word, which is
		 * exactly the RFC's zero padding of an odd final byte. */
		uint64_t t = 0;
		sk_memcpy(&t, p, len);
		acc = csum_adc(acc, t);
	}

	uint16_t s = csum_fold16(acc);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	s = __builtin_bswap16(s);
#endif
	return csum_adc(sum, s);
}

uint64_t csum_copy(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *p = src;
	uint64_t acc = 0;

	/* csum_add's loop with a store after each load: the bytes are read
	 * once, for the copy and the sum together. */
	while (len >= 32) {
		uint64_t a = csum_load64(p), b = csum_load64(p + 8);
		uint64_t c = csum_load64(p + 16), e = csum_load64(p + 24);
		sk_memcpy(d, &a, 8);
		sk_memcpy(d + 8, &b, 8);
		sk_memcpy(d + 16, &c, 8);
		sk_memcpy(d + 24, &e, 8);
		acc = csum_adc(acc, a);
		acc = csum_adc(acc, b);
		acc = csum_adc(acc, c);
		acc = csum_adc(acc, e);
		p += 32;
		d += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t a = csum_load64(p);
		sk_memcpy(d, &a, 8);
		acc = csum_adc(acc, a);
		p += 8;
		d += 8;
		len -= 8;
	}
	if (len) {
		uint64_t t = 0;
		sk_memcpy(&t, p, len);
		sk_memcpy(d, p, len);
		acc = csum_adc(acc, t);
	}
	uint16_t s = csum_fold16(acc);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	s = __builtin_bswap16(s);
#endif
	return s;
}

uint64_t csum_add_at(uint64_t sum, uint64_t part, size_t off)
{
	uint16_t p = csum_fold16(part);
	if (off & 1)
		p = __builtin_bswap16(p);
	return csum_adc(sum, p);
}

uint16_t csum_fold(uint64_t sum)
{
	return (uint16_t)~csum_fold16(sum);
}

uint16_t csum(const void *data, size_t len)
{
	return csum_fold(csum_add(0, data, len));
}

uint64_t csum_pseudo4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	/* Already in network-word domain: the 16-bit halves of the host-order
	 * addresses are the big-endian words on the wire. */
	return (uint64_t)(src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

uint64_t csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, uint32_t len)
{
	/* The three zero bytes before the next header add nothing. */
	uint64_t s = csum_add(0, src, 16);
	s = csum_add(s, dst, 16);
	return s + (len >> 16) + (len & 0xffff) + proto;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), all one's-complement adds.  It
 * avoids the corner case of RFC 1141's eqn. 2, which can yield 0x0000 where a
 * full recomputation yields 0xffff (RFC 1624 section 3). */
uint16_t csum_update16(uint16_t check, uint16_t old_val, uint16_t new_val)
{
	uint64_t s = (uint16_t)~check;
	s += (uint16_t)~old_val;
	s += new_val;
	return csum_fold(s);
}

uint16_t csum_update32(uint16_t check, uint32_t old_val, uint32_t new_val)
{
	uint64_t s = (uint16_t)~check;
	s += (uint16_t)~(old_val >> 16);
	s += (uint16_t)~old_val;
	s += new_val >> 16;
	s += new_val & 0xffff;
	return csum_fold(s);
}
