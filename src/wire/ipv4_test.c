/* ipv4_test.c — IPv4 header checks, fragments, addresses, emit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/csum.h"
#include "wire/ipv4.h"

/* The IPv4 part of a Linux ping 10.0.0.1 -> 10.0.0.2 (id 0x1c46, DF, TTL 64),
 * 84 bytes. */
static const uint8_t ping_ip[84] = {
	0x45, 0x00, 0x00, 0x54, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x01, 0x0a, 0x61,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x08, 0x00, 0x56, 0x04,
	0x0d, 0x2e, 0x00, 0x01, 0xa1, 0xf1, 0x65, 0x67, 0x00, 0x00, 0x00, 0x00,
	0xc3, 0xa0, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x11, 0x12, 0x13,
	0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,
	0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
};

static uint8_t pkt[128];

static void load(void)
{
	sk_memset(pkt, 0, sizeof(pkt));
	sk_memcpy(pkt, ping_ip, sizeof(ping_ip));
}

/* Re-seal the header after a test edits it, so the edit is what is tested. */
static void reseal(uint8_t *p)
{
	size_t hl = (size_t)(p[0] & 15) * 4;
	sk_put_be16(p + 10, 0);
	sk_put_be16(p + 10, csum(p, hl));
}

static void test_parse_ping(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	assert_int_equal(ipv4_parse(ping_ip, sizeof(ping_ip), &h), WIRE_OK);
	assert_int_equal(h.hlen, 20);
	assert_int_equal(h.tos, 0);
	assert_int_equal(h.total_len, 84);
	assert_int_equal(h.id, 0x1c46);
	assert_int_equal(h.frag, IPV4_FLAG_DF);
	assert_int_equal(h.ttl, 64);
	assert_int_equal(h.proto, IPV4_PROTO_ICMP);
	assert_int_equal(h.src, SK_IP4(10, 0, 0, 1));
	assert_int_equal(h.dst, SK_IP4(10, 0, 0, 2));
	assert_int_equal(h.payload_off, 20);
	assert_int_equal(h.payload_len, 64);
	assert_false(ipv4_is_fragment(&h));
}

static void test_link_padding_ignored(void **state)
{
	(void)state;
	load();
	struct ipv4_hdr h;
	assert_int_equal(ipv4_parse(pkt, sizeof(pkt), &h), WIRE_OK);
	assert_int_equal(h.payload_len, 64);
}

static void test_truncated_every_length(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	for (size_t n = 0; n < sizeof(ping_ip); n++)
		assert_int_equal(ipv4_parse(ping_ip, n, &h), WIRE_ETRUNC);
}

static void test_lying_lengths(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	load();
	pkt[0] = 0x65; /* IPv6 nibble */
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_EVERSION);
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		load();
		pkt[0] = (uint8_t)(0x40 | ihl);
		assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_EBADLEN);
	}
	load();
	sk_put_be16(pkt + 2, 19); /* total below the header */
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_EBADLEN);
	load();
	sk_put_be16(pkt + 2, 24); /* IHL 15 (60 bytes) > total 24 */
	pkt[0] = 0x4f;
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_EBADLEN);
	load();
	sk_put_be16(pkt + 2, 85); /* one byte more than we have */
	reseal(pkt);
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_ETRUNC);
	sk_put_be16(pkt + 2, 0xffff);
	reseal(pkt);
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_ETRUNC);
	load();
	pkt[0] = 0x4f; /* IHL 60 with only 40 bytes in the buffer */
	sk_put_be16(pkt + 2, 60);
	assert_int_equal(ipv4_parse(pkt, 40, &h), WIRE_ETRUNC);
}

static void test_options_skipped(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	uint8_t p[64] = { 0x46, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			  0x94, 0x04, 0x00, 0x00 /* router alert */, 0xaa, 0xbb, 0xcc, 0xdd };
	reseal(p);
	assert_int_equal(ipv4_parse(p, 28, &h), WIRE_OK);
	assert_int_equal(h.hlen, 24);
	assert_int_equal(h.payload_off, 24);
	assert_int_equal(h.payload_len, 4);
	/* A header that is all there is (no payload) is fine. */
	sk_put_be16(p + 2, 24);
	reseal(p);
	assert_int_equal(ipv4_parse(p, 24, &h), WIRE_OK);
	assert_int_equal(h.payload_len, 0);
}

static void test_bad_checksum(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	load();
	pkt[11] ^= 1;
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_ECSUM);
	/* Any single-bit flip in the header is caught (by the sum or a check). */
	for (size_t bit = 0; bit < 20 * 8; bit++) {
		load();
		pkt[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(ipv4_parse(pkt, 84, &h), WIRE_OK);
	}
	/* The payload is not covered. */
	load();
	pkt[40] ^= 0xff;
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_OK);
}

static void test_fragments(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	static const uint16_t frags[] = { IPV4_FLAG_MF, IPV4_FLAG_MF | 185, 185, 1 };
	for (size_t i = 0; i < SK_ARRAY_LEN(frags); i++) {
		load();
		sk_put_be16(pkt + 6, frags[i]);
		reseal(pkt);
		h.proto = 0;
		assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_EFRAG);
		/* Filled in anyway, so the caller can count and log it. */
		assert_int_equal(h.frag, frags[i]);
		assert_int_equal(h.proto, IPV4_PROTO_ICMP);
		assert_int_equal(h.src, SK_IP4(10, 0, 0, 1));
		assert_true(ipv4_is_fragment(&h));
	}
	/* DF alone is not a fragment. */
	load();
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_OK);
}

static void test_bad_source(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	static const uint32_t bad[] = { 0xffffffff, SK_IP4(224, 0, 0, 1), SK_IP4(239, 255, 255, 250) };
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++) {
		load();
		sk_put_be32(pkt + 12, bad[i]);
		reseal(pkt);
		assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_EBADADDR);
	}
	/* Broadcast and multicast destinations are for the caller to judge. */
	load();
	sk_put_be32(pkt + 16, 0xffffffff);
	reseal(pkt);
	assert_int_equal(ipv4_parse(pkt, 84, &h), WIRE_OK);
}

static void test_emit(void **state)
{
	(void)state;
	struct ipv4_hdr h;
	assert_int_equal(ipv4_parse(ping_ip, sizeof(ping_ip), &h), WIRE_OK);
	uint8_t out[IPV4_HLEN];
	assert_int_equal(ipv4_emit(out, sizeof(out), &h, 64), IPV4_HLEN);
	assert_memory_equal(out, ping_ip, IPV4_HLEN); /* same bytes as Linux sent */
	assert_int_equal(ipv4_emit(out, IPV4_HLEN - 1, &h, 64), 0);
	assert_int_equal(ipv4_emit(out, sizeof(out), &h, 65535 - 20), IPV4_HLEN);
	assert_int_equal(ipv4_emit(out, sizeof(out), &h, 65535 - 19), 0);

	struct ipv4_hdr e = { .tos = 0x10, .id = 7, .ttl = 1, .proto = IPV4_PROTO_TCP,
			      .src = SK_IP4(192, 168, 1, 1), .dst = SK_IP4(8, 8, 8, 8) };
	uint8_t p[IPV4_HLEN + 4] = { 0 };
	assert_int_equal(ipv4_emit(p, sizeof(p), &e, 4), IPV4_HLEN);
	struct ipv4_hdr b;
	assert_int_equal(ipv4_parse(p, sizeof(p), &b), WIRE_OK);
	assert_int_equal(b.tos, 0x10);
	assert_int_equal(b.id, 7);
	assert_int_equal(b.ttl, 1);
	assert_int_equal(b.proto, IPV4_PROTO_TCP);
	assert_int_equal(b.src, e.src);
	assert_int_equal(b.dst, e.dst);
	assert_int_equal(b.total_len, 24);
	assert_int_equal(b.payload_len, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ping),
		cmocka_unit_test(test_link_padding_ignored),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_lying_lengths),
		cmocka_unit_test(test_options_skipped),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_bad_source),
		cmocka_unit_test(test_emit),
	};
	return cmocka_run_group_tests_name("wire/ipv4", tests, NULL, NULL);
}
