/* arp_test.c — ARP request/reply parse and emit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/arp.h"

/* "Who has 10.0.0.2? Tell 10.0.0.1" from 02:42:ac:11:00:02, after the
 * Ethernet header, with the 18 bytes of padding a 60-byte frame carries. */
static const uint8_t arp_req[46] = {
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x42, 0xac, 0x11,
	0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x0a, 0x00, 0x00, 0x02,
};

static void test_parse_request(void **state)
{
	(void)state;
	struct arp_pkt a;
	assert_int_equal(arp_parse(arp_req, sizeof(arp_req), &a), WIRE_OK);
	assert_int_equal(a.op, ARP_OP_REQUEST);
	assert_memory_equal(a.sha, arp_req + 8, 6);
	assert_int_equal(a.spa, SK_IP4(10, 0, 0, 1));
	assert_int_equal(a.tpa, SK_IP4(10, 0, 0, 2));
	static const uint8_t zero[6];
	assert_memory_equal(a.tha, zero, 6);
	assert_int_equal(arp_parse(arp_req, ARP_LEN, &a), WIRE_OK);
}

static void test_truncated(void **state)
{
	(void)state;
	struct arp_pkt a;
	for (size_t n = 0; n < ARP_LEN; n++)
		assert_int_equal(arp_parse(arp_req, n, &a), WIRE_ETRUNC);
}

static void test_wrong_types(void **state)
{
	(void)state;
	struct arp_pkt a;
	/* htype, ptype, hlen, plen: each off by one is another protocol. */
	static const size_t at[] = { 1, 3, 4, 5 };
	for (size_t i = 0; i < SK_ARRAY_LEN(at); i++) {
		uint8_t p[ARP_LEN];
		sk_memcpy(p, arp_req, ARP_LEN);
		p[at[i]]++;
		assert_int_equal(arp_parse(p, sizeof(p), &a), WIRE_EVERSION);
	}
}

static void test_bad_op_and_sender(void **state)
{
	(void)state;
	struct arp_pkt a;
	uint8_t p[ARP_LEN];
	sk_memcpy(p, arp_req, ARP_LEN);
	p[7] = 3; /* RARP request */
	assert_int_equal(arp_parse(p, sizeof(p), &a), WIRE_EUNSUP);
	p[7] = 0;
	assert_int_equal(arp_parse(p, sizeof(p), &a), WIRE_EUNSUP);
	sk_memcpy(p, arp_req, ARP_LEN);
	p[8] = 0x01; /* group bit in the sender MAC */
	assert_int_equal(arp_parse(p, sizeof(p), &a), WIRE_EBADADDR);
	sk_memset(p + 8, 0xff, 6);
	assert_int_equal(arp_parse(p, sizeof(p), &a), WIRE_EBADADDR);
}

static void test_emit(void **state)
{
	(void)state;
	struct arp_pkt a;
	assert_int_equal(arp_parse(arp_req, sizeof(arp_req), &a), WIRE_OK);
	uint8_t out[ARP_LEN];
	assert_int_equal(arp_emit(out, sizeof(out), &a), ARP_LEN);
	assert_memory_equal(out, arp_req, ARP_LEN);
	assert_int_equal(arp_emit(out, ARP_LEN - 1, &a), 0);

	/* The reply a host sends back parses as one. */
	struct arp_pkt r = { .op = ARP_OP_REPLY, .sha = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 },
			     .spa = a.tpa, .tpa = a.spa };
	sk_memcpy(r.tha, a.sha, 6);
	assert_int_equal(arp_emit(out, sizeof(out), &r), ARP_LEN);
	struct arp_pkt b;
	assert_int_equal(arp_parse(out, sizeof(out), &b), WIRE_OK);
	assert_int_equal(b.op, ARP_OP_REPLY);
	assert_int_equal(b.spa, SK_IP4(10, 0, 0, 2));
	assert_int_equal(b.tpa, SK_IP4(10, 0, 0, 1));
	assert_memory_equal(b.sha, r.sha, 6);
	assert_memory_equal(b.tha, a.sha, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_request),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_bad_op_and_sender),
		cmocka_unit_test(test_emit),
	};
	return cmocka_run_group_tests_name("wire/arp", tests, NULL, NULL);
}
