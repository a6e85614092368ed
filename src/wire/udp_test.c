/* udp_test.c — UDP length and checksum checks, emit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/csum.h"
#include "wire/udp.h"

#define SRC SK_IP4(10, 0, 0, 1)
#define DST SK_IP4(10, 0, 0, 53)

/* A DNS query for example.com A, 10.0.0.1:51234 -> 10.0.0.53:53 (odd length). */
static const uint8_t dns[37] = {
	0xc8, 0x22, 0x00, 0x35, 0x00, 0x25, 0x41, 0x75, 0x12, 0x34, 0x01, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x65, 0x78, 0x61,
	0x6d, 0x70, 0x6c, 0x65, 0x03, 0x63, 0x6f, 0x6d, 0x00, 0x00, 0x01, 0x00,
	0x01,
};

static uint8_t pkt[64];

static void load(void)
{
	sk_memset(pkt, 0, sizeof(pkt));
	sk_memcpy(pkt, dns, sizeof(dns));
}

static void test_parse_dns(void **state)
{
	(void)state;
	struct udp_hdr h;
	assert_int_equal(udp_parse(dns, sizeof(dns), SRC, DST, &h), WIRE_OK);
	assert_int_equal(h.sport, 51234);
	assert_int_equal(h.dport, 53);
	assert_int_equal(h.len, 37);
	assert_int_equal(h.csum, 0x4175);
	assert_int_equal(h.payload_off, UDP_HLEN);
	assert_int_equal(h.payload_len, 29);
}

static void test_truncated(void **state)
{
	(void)state;
	struct udp_hdr h;
	for (size_t n = 0; n < sizeof(dns); n++)
		assert_int_equal(udp_parse(dns, n, SRC, DST, &h), WIRE_ETRUNC);
}

static void test_lying_length(void **state)
{
	(void)state;
	struct udp_hdr h;
	for (uint16_t l = 0; l < UDP_HLEN; l++) {
		load();
		sk_put_be16(pkt + 4, l);
		assert_int_equal(udp_parse(pkt, sizeof(dns), SRC, DST, &h), WIRE_EBADLEN);
	}
	load();
	sk_put_be16(pkt + 4, 38);
	assert_int_equal(udp_parse(pkt, sizeof(dns), SRC, DST, &h), WIRE_ETRUNC);
	sk_put_be16(pkt + 4, 0xffff);
	assert_int_equal(udp_parse(pkt, sizeof(dns), SRC, DST, &h), WIRE_ETRUNC);
	/* Bytes after the UDP length (IP padding) are outside the datagram. */
	load();
	pkt[40] = 0x99;
	assert_int_equal(udp_parse(pkt, sizeof(pkt), SRC, DST, &h), WIRE_OK);
	assert_int_equal(h.payload_len, 29);
}

static void test_checksum(void **state)
{
	(void)state;
	struct udp_hdr h;
	load();
	pkt[36] ^= 1;
	assert_int_equal(udp_parse(pkt, sizeof(dns), SRC, DST, &h), WIRE_ECSUM);
	/* Covered by the pseudo header: another address fails. */
	assert_int_equal(udp_parse(dns, sizeof(dns), SRC, DST + 1, &h), WIRE_ECSUM);
	assert_int_equal(udp_parse(dns, sizeof(dns), SRC + 1, DST, &h), WIRE_ECSUM);
	/* Zero: the sender did not compute one; accepted unchecked. */
	sk_put_be16(pkt + 6, 0);
	assert_int_equal(udp_parse(pkt, sizeof(dns), SRC, DST, &h), WIRE_OK);
	assert_int_equal(h.csum, 0);
}

static void test_emit(void **state)
{
	(void)state;
	uint8_t out[64] = { 0 };
	sk_memcpy(out + UDP_HLEN, dns + UDP_HLEN, 29);
	assert_int_equal(udp_emit(out, sizeof(out), 51234, 53, SRC, DST, 29), 37);
	assert_memory_equal(out, dns, sizeof(dns));
	assert_int_equal(udp_emit(out, 36, 51234, 53, SRC, DST, 29), 0);
	assert_int_equal(udp_emit(out, 0xffff, 1, 2, SRC, DST, 0xffff - 7), 0);
	assert_int_equal(udp_emit(out, UDP_HLEN, 1, 2, SRC, DST, 0), UDP_HLEN);
	struct udp_hdr h;
	assert_int_equal(udp_parse(out, UDP_HLEN, SRC, DST, &h), WIRE_OK);
	assert_int_equal(h.payload_len, 0);
}

static void test_emit_zero_sum_sent_as_ffff(void **state)
{
	(void)state;
	/* Pick the last payload word so the computed checksum comes out 0:
	 * adding c to a sum S with c = ~S makes the sum 0xffff. */
	uint8_t out[UDP_HLEN + 4] = { 0 };
	out[8] = 0x12;
	out[9] = 0x34;
	udp_emit(out, sizeof(out), 7, 7, SRC, DST, 4);
	uint16_t c = sk_get_be16(out + 6);
	sk_put_be16(out + 10, c);
	assert_int_equal(udp_emit(out, sizeof(out), 7, 7, SRC, DST, 4), sizeof(out));
	assert_int_equal(sk_get_be16(out + 6), 0xffff);
	struct udp_hdr h;
	assert_int_equal(udp_parse(out, sizeof(out), SRC, DST, &h), WIRE_OK);
}

/* IPv6: 2001:2::1:40000 -> 2001:2::2:7, "skiff v6!" (odd length).  The
 * checksum 0x4953 was computed apart from csum.c (Python, RFC 8200 8.1
 * pseudo header). */
static const uint8_t s6[16] = {0x20, 0x01, 0, 2, [15] = 1}, d6[16] = {0x20, 0x01, 0, 2, [15] = 2};

static void test_v6(void **state)
{
	(void)state;
	uint8_t b[64];
	sk_memset(b, 0, sizeof(b));
	sk_memcpy(b + 8, "skiff v6!", 9);
	assert_int_equal(udp_emit6(b, sizeof(b), 40000, 7, s6, d6, 9), 17);
	assert_int_equal(sk_get_be16(b + 6), 0x4953);
	struct udp_hdr h;
	assert_int_equal(udp_parse6(b, 17, s6, d6, &h), WIRE_OK);
	assert_int_equal(h.sport, 40000);
	assert_int_equal(h.dport, 7);
	assert_int_equal(h.payload_len, 9);
	/* Another address, or the IPv4 pseudo header: the sum no longer holds. */
	assert_int_equal(udp_parse6(b, 17, s6, s6, &h), WIRE_ECSUM);
	assert_int_equal(udp_parse(b, 17, SRC, DST, &h), WIRE_ECSUM);
	/* No checksum is allowed over IPv4, not over IPv6. */
	sk_put_be16(b + 6, 0);
	assert_int_equal(udp_parse6(b, 17, s6, d6, &h), WIRE_ECSUM);
	assert_int_equal(udp_parse(b, 17, SRC, DST, &h), WIRE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_dns),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_lying_length),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_emit),
		cmocka_unit_test(test_emit_zero_sum_sent_as_ffff),
	};
	return cmocka_run_group_tests_name("wire/udp", tests, NULL, NULL);
}
