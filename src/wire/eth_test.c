/* eth_test.c — Ethernet II parse/emit, VLAN tags, 802.3 frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/eth.h"

/* Start of a ping request from 02:42:ac:11:00:02 to 52:54:00:12:34:56. */
static const uint8_t frame[] = {
	0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x02, 0x42, 0xac, 0x11, 0x00, 0x02,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x54, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x01,
};

/* The same with an 802.1Q tag, PCP 3, VID 100. */
static const uint8_t vlan_frame[] = {
	0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x02, 0x42, 0xac, 0x11, 0x00, 0x02,
	0x81, 0x00, 0x60, 0x64, 0x08, 0x06, 0x00, 0x01, 0x08, 0x00,
};

/* An STP BPDU: 802.3 length 0x0026 and LLC 42 42 03. */
static const uint8_t stp_frame[] = {
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x00, 0x02, 0x42, 0xac, 0x11, 0x00, 0x02,
	0x00, 0x26, 0x42, 0x42, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void test_parse_plain(void **state)
{
	(void)state;
	struct eth_hdr h;
	assert_int_equal(eth_parse(frame, sizeof(frame), &h), WIRE_OK);
	assert_memory_equal(h.dst, frame, 6);
	assert_memory_equal(h.src, frame + 6, 6);
	assert_int_equal(h.type, ETH_TYPE_IPV4);
	assert_false(h.has_vlan);
	assert_int_equal(h.hlen, ETH_HLEN);
	/* The header alone is enough. */
	assert_int_equal(eth_parse(frame, ETH_HLEN, &h), WIRE_OK);
}

static void test_truncated(void **state)
{
	(void)state;
	struct eth_hdr h;
	for (size_t n = 0; n < ETH_HLEN; n++)
		assert_int_equal(eth_parse(frame, n, &h), WIRE_ETRUNC);
	for (size_t n = 0; n < ETH_VLAN_HLEN; n++)
		assert_int_equal(eth_parse(vlan_frame, n, &h), WIRE_ETRUNC);
}

static void test_vlan(void **state)
{
	(void)state;
	struct eth_hdr h;
	assert_int_equal(eth_parse(vlan_frame, sizeof(vlan_frame), &h), WIRE_OK);
	assert_true(h.has_vlan);
	assert_int_equal(h.vlan_tci, 0x6064);
	assert_int_equal(h.vlan_tci & 0x0fff, 100);
	assert_int_equal(h.type, ETH_TYPE_ARP);
	assert_int_equal(h.hlen, ETH_VLAN_HLEN);
}

static void test_double_tag_unsupported(void **state)
{
	(void)state;
	uint8_t f[sizeof(vlan_frame)];
	sk_memcpy(f, vlan_frame, sizeof(f));
	f[16] = 0x81;
	f[17] = 0x00;
	struct eth_hdr h;
	assert_int_equal(eth_parse(f, sizeof(f), &h), WIRE_EUNSUP);
}

static void test_8023_length_frames(void **state)
{
	(void)state;
	struct eth_hdr h;
	assert_int_equal(eth_parse(stp_frame, sizeof(stp_frame), &h), WIRE_EUNSUP);
	/* Boundary: 0x05ff is still a length, 0x0600 a type. */
	uint8_t f[ETH_HLEN] = { 0 };
	f[12] = 0x05;
	f[13] = 0xff;
	assert_int_equal(eth_parse(f, sizeof(f), &h), WIRE_EUNSUP);
	f[12] = 0x06;
	f[13] = 0x00;
	assert_int_equal(eth_parse(f, sizeof(f), &h), WIRE_OK);
	/* A length behind a VLAN tag too. */
	uint8_t v[sizeof(vlan_frame)];
	sk_memcpy(v, vlan_frame, sizeof(v));
	v[16] = 0x00;
	v[17] = 0x40;
	assert_int_equal(eth_parse(v, sizeof(v), &h), WIRE_EUNSUP);
}

static void test_emit(void **state)
{
	(void)state;
	uint8_t out[ETH_HLEN];
	assert_int_equal(eth_emit(out, sizeof(out), frame, frame + 6, ETH_TYPE_IPV4), ETH_HLEN);
	assert_memory_equal(out, frame, ETH_HLEN);
	assert_int_equal(eth_emit(out, ETH_HLEN - 1, frame, frame + 6, ETH_TYPE_IPV4), 0);
	/* Swap addresses in place, as a reply does. */
	uint8_t f[ETH_HLEN];
	sk_memcpy(f, frame, ETH_HLEN);
	uint8_t peer[6];
	sk_memcpy(peer, f + 6, 6);
	assert_int_equal(eth_emit(f, sizeof(f), peer, f, ETH_TYPE_IPV4), ETH_HLEN);
	assert_memory_equal(f, frame + 6, 6);
	assert_memory_equal(f + 6, frame, 6);
}

static void test_pad(void **state)
{
	(void)state;
	uint8_t f[ETH_MIN_FRAME];
	sk_memset(f, 0xaa, sizeof(f));
	assert_int_equal(eth_pad(f, 42, sizeof(f)), ETH_MIN_FRAME);
	for (size_t i = 42; i < ETH_MIN_FRAME; i++)
		assert_int_equal(f[i], 0);
	assert_int_equal(f[41], 0xaa);
	assert_int_equal(eth_pad(f, 42, ETH_MIN_FRAME - 1), 0);
	assert_int_equal(eth_pad(f, 100, 100), 100);
}

static void test_address_kinds(void **state)
{
	(void)state;
	assert_true(eth_is_broadcast(eth_broadcast));
	assert_true(eth_is_multicast(eth_broadcast));
	assert_true(eth_is_multicast(stp_frame));
	assert_false(eth_is_broadcast(stp_frame));
	assert_false(eth_is_multicast(frame));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_plain),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_double_tag_unsupported),
		cmocka_unit_test(test_8023_length_frames),
		cmocka_unit_test(test_emit),
		cmocka_unit_test(test_pad),
		cmocka_unit_test(test_address_kinds),
	};
	return cmocka_run_group_tests_name("wire/eth", tests, NULL, NULL);
}
