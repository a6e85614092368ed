/* csum_test.c — checksum against a byte-at-a-time reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/csum.h"

static uint32_t rng_state = 0x12345678;
static uint32_t rng(void)
{
	/* xorshift32: deterministic, so a failure reproduces. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* RFC 1071 read literally: big-endian 16-bit words, odd byte padded. */
static uint16_t ref_csum(const uint8_t *p, size_t len)
{
	uint64_t s = 0;
	for (size_t i = 0; i < len; i++)
		s += (i & 1) ? p[i] : (uint64_t)p[i] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void test_rfc1071_example(void **state)
{
	(void)state;
	/* RFC 1071 section 3: these bytes sum to ddf2, so the checksum is 220d. */
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	assert_int_equal(csum(b, sizeof(b)), 0x220d);
	assert_int_equal(ref_csum(b, sizeof(b)), 0x220d);
	/* Any byte offset of the same data, as RFC 1071 2.(B) promises. */
	uint8_t c[16];
	for (size_t off = 0; off < 8; off++) {
		for (size_t i = 0; i < sizeof(b); i++)
			c[off + i] = b[i];
		assert_int_equal(csum(c + off, sizeof(b)), 0x220d);
	}
}

static void test_ipv4_header_example(void **state)
{
	(void)state;
	/* A well-known IPv4 header whose stored checksum is b861. */
	uint8_t h[] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	assert_int_equal(csum(h, sizeof(h)), 0); /* correct sum folds to 0 */
	h[10] = h[11] = 0;
	assert_int_equal(csum(h, sizeof(h)), 0xb861);
}

static void test_random_all_lengths_and_offsets(void **state)
{
	(void)state;
	static uint8_t buf[2000 + 16];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng();
	for (size_t len = 0; len <= 2000; len++) {
		for (size_t off = 0; off < 8; off++) {
			uint16_t want = ref_csum(buf + off, len);
			assert_int_equal(csum(buf + off, len), want);
		}
	}
}

/* csum_copy copies exactly and sums as csum_add; pieces of random length,
 * odd ones included, chained by csum_add_at give the whole buffer's sum. */
static void test_copy_and_pieces(void **state)
{
	(void)state;
	static uint8_t src[3000], dst[3000 + 8];
	for (int round = 0; round < 200; round++) {
		size_t len = rng() % sizeof(src);
		for (size_t i = 0; i < len; i++)
			src[i] = (uint8_t)rng();
		size_t doff = rng() % 8;
		for (size_t i = 0; i < sizeof(dst); i++)
			dst[i] = 0xa5;
		uint64_t sum = 0;
		size_t at = 0;
		while (at < len) {
			size_t n = 1 + rng() % 700;
			if (n > len - at)
				n = len - at;
			sum = csum_add_at(sum, csum_copy(dst + doff + at, src + at, n), at);
			at += n;
		}
		assert_memory_equal(dst + doff, src, len);
		if (doff)
			assert_int_equal(dst[doff - 1], 0xa5);
		assert_int_equal(dst[doff + len], 0xa5); /* nothing written past the end */
		assert_int_equal(csum_fold(sum), ref_csum(src, len));
	}
}

static void test_all_ones_and_zeros(void **state)
{
	(void)state;
	/* 0xff everywhere forces a carry out of every 64-bit add. */
	static uint8_t ones[65535], zeros[64];
	for (size_t i = 0; i < sizeof(ones); i++)
		ones[i] = 0xff;
	for (size_t len = 0; len < sizeof(ones); len += 997)
		assert_int_equal(csum(ones, len), ref_csum(ones, len));
	assert_int_equal(csum(ones, sizeof(ones)), ref_csum(ones, sizeof(ones)));
	assert_int_equal(csum(zeros, sizeof(zeros)), 0xffff);
	assert_int_equal(csum(zeros, 0), 0xffff);
}

static void test_chaining(void **state)
{
	(void)state;
	uint8_t buf[301];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng();
	for (size_t split = 0; split <= sizeof(buf); split += 2) {
		uint64_t s = csum_add(0, buf, split);
		s = csum_add(s, buf + split, sizeof(buf) - split);
		assert_int_equal(csum_fold(s), ref_csum(buf, sizeof(buf)));
	}
	/* Three chunks, the middle one at an odd address but even length. */
	uint64_t s = csum_add(csum_add(csum_add(0, buf, 10), buf + 10, 100), buf + 110, 191);
	assert_int_equal(csum_fold(s), ref_csum(buf, sizeof(buf)));
}

static void test_pseudo_header(void **state)
{
	(void)state;
	uint8_t seg[37];
	for (size_t i = 0; i < sizeof(seg); i++)
		seg[i] = (uint8_t)rng();
	uint32_t src = 0xc0a80001, dst = 0x0a00fffe;
	/* The pseudo header as bytes, then the segment, summed together. */
	uint8_t all[12 + sizeof(seg)] = { 0xc0, 0xa8, 0x00, 0x01, 0x0a, 0x00, 0xff, 0xfe, 0, 6, 0, sizeof(seg) };
	for (size_t i = 0; i < sizeof(seg); i++)
		all[12 + i] = seg[i];
	uint64_t s = csum_add(csum_pseudo4(src, dst, 6, sizeof(seg)), seg, sizeof(seg));
	assert_int_equal(csum_fold(s), ref_csum(all, sizeof(all)));
}

/* RFC 8200 8.1: source, destination, a 32-bit upper-layer length, three
 * zero bytes and the next header, summed as 40 bytes before the segment.
 * The length is over 65535 here, so that both of its halves count. */
static void test_pseudo_header6(void **state)
{
	(void)state;
	for (int iter = 0; iter < 1000; iter++) {
		uint8_t seg[37], src[16], dst[16];
		for (size_t i = 0; i < sizeof(seg); i++)
			seg[i] = (uint8_t)rng();
		for (size_t i = 0; i < 16; i++) {
			src[i] = (uint8_t)rng();
			dst[i] = (uint8_t)rng();
		}
		uint32_t len = (uint32_t)rng() & 0x1ffff;
		uint8_t proto = (uint8_t)rng();
		uint8_t all[40 + sizeof(seg)] = { 0 };
		for (size_t i = 0; i < 16; i++) {
			all[i] = src[i];
			all[16 + i] = dst[i];
		}
		all[32] = (uint8_t)(len >> 24);
		all[33] = (uint8_t)(len >> 16);
		all[34] = (uint8_t)(len >> 8);
		all[35] = (uint8_t)len;
		all[39] = proto;
		for (size_t i = 0; i < sizeof(seg); i++)
			all[40 + i] = seg[i];
		uint64_t s = csum_add(csum_pseudo6(src, dst, proto, len), seg, sizeof(seg));
		assert_int_equal(csum_fold(s), ref_csum(all, sizeof(all)));
	}
}

static void test_incremental_update(void **state)
{
	(void)state;
	uint8_t buf[40];
	for (int iter = 0; iter < 20000; iter++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rng();
		buf[0] |= 1; /* nonzero data: no +0/-0 ambiguity, see RFC 1624 */
		uint16_t check = csum(buf, sizeof(buf));
		size_t at = 2 + (rng() % 8) * 4; /* an even offset, away from byte 0 */
		if (iter & 1) {
			uint16_t old = sk_get_be16(buf + at), nv = (uint16_t)rng();
			if (iter % 7 == 1)
				nv = 0;
			sk_put_be16(buf + at, nv);
			assert_int_equal(csum_update16(check, old, nv), csum(buf, sizeof(buf)));
		} else {
			uint32_t old = sk_get_be32(buf + at), nv = rng();
			if (iter % 6 == 0)
				nv = 0xffffffff;
			sk_put_be32(buf + at, nv);
			assert_int_equal(csum_update32(check, old, nv), csum(buf, sizeof(buf)));
		}
	}
}

static void test_update_keeps_verifying(void **state)
{
	(void)state;
	/* Rewrite a header's TTL and address in place; it must still verify. */
	uint8_t h[] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	uint16_t c = sk_get_be16(h + 10);
	uint16_t old = sk_get_be16(h + 8);
	h[8] = 0x3f;
	c = csum_update16(c, old, sk_get_be16(h + 8));
	uint32_t olda = sk_get_be32(h + 16);
	sk_put_be32(h + 16, 0x0a000001);
	c = csum_update32(c, olda, 0x0a000001);
	sk_put_be16(h + 10, c);
	assert_int_equal(csum(h, sizeof(h)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc1071_example),
		cmocka_unit_test(test_ipv4_header_example),
		cmocka_unit_test(test_random_all_lengths_and_offsets),
		cmocka_unit_test(test_all_ones_and_zeros),
		cmocka_unit_test(test_copy_and_pieces),
		cmocka_unit_test(test_chaining),
		cmocka_unit_test(test_pseudo_header),
		cmocka_unit_test(test_pseudo_header6),
		cmocka_unit_test(test_incremental_update),
		cmocka_unit_test(test_update_keeps_verifying),
	};
	return cmocka_run_group_tests_name("wire/csum", tests, NULL, NULL);
}
