/* icmp_test.c — echo request/reply, errors and their quoted headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/csum.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

/* The ICMP part of a Linux ping: echo request id 0x0d2e seq 1, 56 bytes of
 * payload (8-byte timestamp, 8 more, then 0x10..0x37). */
static const uint8_t ping[64] = {
	0x08, 0x00, 0x56, 0x04, 0x0d, 0x2e, 0x00, 0x01, 0xa1, 0xf1, 0x65, 0x67,
	0x00, 0x00, 0x00, 0x00, 0xc3, 0xa0, 0x0b, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	0x34, 0x35, 0x36, 0x37,
};

/* Port unreachable from 10.0.0.1 about UDP 10.0.0.2:40000 -> 10.0.0.1:9. */
static const uint8_t port_unreach[36] = {
	0x03, 0x03, 0x60, 0xa7, 0x00, 0x00, 0x00, 0x00, 0x45, 0x00, 0x00, 0x20,
	0x42, 0x42, 0x40, 0x00, 0x40, 0x11, 0xe4, 0x88, 0x0a, 0x00, 0x00, 0x02,
	0x0a, 0x00, 0x00, 0x01, 0x9c, 0x40, 0x00, 0x09, 0x00, 0x0c, 0x00, 0x00,
};

/* Fragmentation needed, next-hop MTU 1400, about TCP 10.0.0.2:80 ->
 * 10.0.0.1:42182 with sequence 0xdeadbeef. */
static const uint8_t frag_needed[36] = {
	0x03, 0x04, 0xb4, 0xcf, 0x00, 0x00, 0x05, 0x78, 0x45, 0x00, 0x05, 0xdc,
	0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0x21, 0x19, 0x0a, 0x00, 0x00, 0x02,
	0x0a, 0x00, 0x00, 0x01, 0x00, 0x50, 0xa4, 0xc6, 0xde, 0xad, 0xbe, 0xef,
};

static void reseal(uint8_t *m, size_t len)
{
	sk_put_be16(m + 2, 0);
	sk_put_be16(m + 2, csum(m, len));
}

static void test_parse_echo(void **state)
{
	(void)state;
	struct icmp_hdr h;
	assert_int_equal(icmp_parse(ping, sizeof(ping), &h), WIRE_OK);
	assert_int_equal(h.type, ICMP_ECHO_REQUEST);
	assert_int_equal(h.code, 0);
	assert_int_equal(h.csum, 0x5604);
	assert_int_equal(h.id, 0x0d2e);
	assert_int_equal(h.seq, 1);
	assert_int_equal(h.rest, 0x0d2e0001);
	assert_int_equal(h.payload_off, ICMP_HLEN);
	assert_int_equal(h.payload_len, 56);
}

static void test_truncated_and_bad_sum(void **state)
{
	(void)state;
	struct icmp_hdr h;
	for (size_t n = 0; n < ICMP_HLEN; n++)
		assert_int_equal(icmp_parse(ping, n, &h), WIRE_ETRUNC);
	/* The sum covers the whole message: cutting it breaks the sum. */
	for (size_t n = ICMP_HLEN; n < sizeof(ping); n++)
		assert_int_equal(icmp_parse(ping, n, &h), WIRE_ECSUM);
	uint8_t m[sizeof(ping)];
	sk_memcpy(m, ping, sizeof(m));
	m[63] ^= 0x80; /* payload damage */
	assert_int_equal(icmp_parse(m, sizeof(m), &h), WIRE_ECSUM);
}

static void test_echo_reply_in_place(void **state)
{
	(void)state;
	uint8_t m[sizeof(ping)];
	sk_memcpy(m, ping, sizeof(m));
	assert_int_equal(icmp_emit_echo_reply(m, sizeof(m), m, sizeof(m)), sizeof(m));
	assert_int_equal(m[0], ICMP_ECHO_REPLY);
	assert_int_equal(m[1], 0);
	assert_memory_equal(m + 4, ping + 4, sizeof(ping) - 4); /* id, seq, payload */
	assert_int_equal(csum(m, sizeof(m)), 0);
	assert_int_equal(sk_get_be16(m + 2), 0x5e04); /* type 8 -> 0 adds 0x0800 */
	struct icmp_hdr h;
	assert_int_equal(icmp_parse(m, sizeof(m), &h), WIRE_OK);
	assert_int_equal(h.type, ICMP_ECHO_REPLY);
}

static void test_echo_reply_copy(void **state)
{
	(void)state;
	uint8_t out[sizeof(ping)];
	assert_int_equal(icmp_emit_echo_reply(out, sizeof(out) - 1, ping, sizeof(ping)), 0);
	assert_int_equal(icmp_emit_echo_reply(out, sizeof(out), ping, ICMP_HLEN - 1), 0);
	assert_int_equal(icmp_emit_echo_reply(out, sizeof(out), ping, sizeof(ping)), sizeof(ping));
	assert_int_equal(csum(out, sizeof(out)), 0);
	/* Only requests get replies (no reply storms between two hosts). */
	assert_int_equal(icmp_emit_echo_reply(out, sizeof(out), out, sizeof(out)), 0);
	/* An 8-byte request with no payload. */
	uint8_t e[ICMP_HLEN] = { 8, 0, 0, 0, 0, 1, 0, 2 };
	reseal(e, sizeof(e));
	assert_int_equal(icmp_emit_echo_reply(e, sizeof(e), e, sizeof(e)), ICMP_HLEN);
	assert_int_equal(csum(e, sizeof(e)), 0);
}

static void test_echo_request(void **state)
{
	(void)state;
	uint8_t out[sizeof(ping)];
	assert_int_equal(icmp_emit_echo_request(out, sizeof(out), 0x0d2e, 1, ping + 8, 56), 64);
	assert_memory_equal(out, ping, sizeof(ping)); /* what Linux sent */
	assert_int_equal(icmp_emit_echo_request(out, 63, 0x0d2e, 1, ping + 8, 56), 0);
	/* Payload already in place. */
	assert_int_equal(icmp_emit_echo_request(out, sizeof(out), 0x0d2e, 1, out + 8, 56), 64);
	assert_memory_equal(out, ping, sizeof(ping));
	assert_int_equal(icmp_emit_echo_request(out, sizeof(out), 5, 6, NULL, 0), ICMP_HLEN);
	struct icmp_hdr h;
	assert_int_equal(icmp_parse(out, ICMP_HLEN, &h), WIRE_OK);
	assert_int_equal(h.id, 5);
	assert_int_equal(h.seq, 6);
}

static void test_parse_port_unreach(void **state)
{
	(void)state;
	struct icmp_hdr h;
	struct icmp_error e;
	assert_int_equal(icmp_parse(port_unreach, sizeof(port_unreach), &h), WIRE_OK);
	assert_int_equal(icmp_parse_error(port_unreach, sizeof(port_unreach), &h, &e), WIRE_OK);
	assert_int_equal(e.type, ICMP_DEST_UNREACH);
	assert_int_equal(e.code, ICMP_UNREACH_PORT);
	assert_int_equal(e.mtu, 0);
	assert_int_equal(e.proto, IPV4_PROTO_UDP);
	assert_int_equal(e.src, SK_IP4(10, 0, 0, 2));
	assert_int_equal(e.dst, SK_IP4(10, 0, 0, 1));
	assert_int_equal(e.sport, 40000);
	assert_int_equal(e.dport, 9);
	assert_int_equal(e.tcp_seq, 0);
}

static void test_parse_frag_needed(void **state)
{
	(void)state;
	struct icmp_hdr h;
	struct icmp_error e;
	assert_int_equal(icmp_parse(frag_needed, sizeof(frag_needed), &h), WIRE_OK);
	assert_int_equal(icmp_parse_error(frag_needed, sizeof(frag_needed), &h, &e), WIRE_OK);
	assert_int_equal(e.code, ICMP_UNREACH_FRAG_NEEDED);
	assert_int_equal(e.mtu, 1400);
	assert_int_equal(e.proto, IPV4_PROTO_TCP);
	assert_int_equal(e.sport, 80);
	assert_int_equal(e.dport, 42182);
	assert_int_equal(e.tcp_seq, 0xdeadbeef);
}

static void test_error_not_error(void **state)
{
	(void)state;
	struct icmp_hdr h;
	struct icmp_error e;
	assert_int_equal(icmp_parse(ping, sizeof(ping), &h), WIRE_OK);
	assert_int_equal(icmp_parse_error(ping, sizeof(ping), &h, &e), WIRE_EUNSUP);
}

static void test_error_quote_truncated(void **state)
{
	(void)state;
	struct icmp_hdr h;
	struct icmp_error e;
	assert_int_equal(icmp_parse(frag_needed, sizeof(frag_needed), &h), WIRE_OK);
	/* Fewer than header + 8 quoted bytes: not enough to find the flow. */
	for (size_t n = 0; n < sizeof(frag_needed); n++)
		assert_int_equal(icmp_parse_error(frag_needed, n, &h, &e), WIRE_ETRUNC);
	/* A protocol without ports needs the header only. */
	uint8_t m[sizeof(port_unreach)];
	sk_memcpy(m, port_unreach, sizeof(m));
	m[17] = 47; /* GRE */
	assert_int_equal(icmp_parse_error(m, 28, &h, &e), WIRE_OK);
	assert_int_equal(e.proto, 47);
	assert_int_equal(e.sport, 0);
	assert_int_equal(icmp_parse_error(m, 27, &h, &e), WIRE_ETRUNC);
}

static void test_error_quote_lies(void **state)
{
	(void)state;
	struct icmp_hdr h;
	struct icmp_error e;
	uint8_t m[sizeof(port_unreach)];
	assert_int_equal(icmp_parse(port_unreach, sizeof(port_unreach), &h), WIRE_OK);
	/* Quoted IHL 15 says 60 bytes of header; only 28 are there. */
	sk_memcpy(m, port_unreach, sizeof(m));
	m[8] = 0x4f;
	assert_int_equal(icmp_parse_error(m, sizeof(m), &h, &e), WIRE_ETRUNC);
	/* IHL 6: header now eats 4 bytes of the ports, leaving 4 < 8. */
	m[8] = 0x46;
	assert_int_equal(icmp_parse_error(m, sizeof(m), &h, &e), WIRE_ETRUNC);
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		m[8] = (uint8_t)(0x40 | ihl);
		assert_int_equal(icmp_parse_error(m, sizeof(m), &h, &e), WIRE_EBADLEN);
	}
	m[8] = 0x65;
	assert_int_equal(icmp_parse_error(m, sizeof(m), &h, &e), WIRE_EVERSION);
	/* The quoted total length is not trusted for anything. */
	sk_memcpy(m, port_unreach, sizeof(m));
	sk_put_be16(m + 10, 0);
	assert_int_equal(icmp_parse_error(m, sizeof(m), &h, &e), WIRE_OK);
	assert_int_equal(e.sport, 40000);
	/* A non-first fragment carries no ports. */
	sk_put_be16(m + 14, 100);
	assert_int_equal(icmp_parse_error(m, sizeof(m), &h, &e), WIRE_OK);
	assert_int_equal(e.sport, 0);
	assert_int_equal(e.dport, 0);
}

static void test_emit_error(void **state)
{
	(void)state;
	/* The datagram that caused port_unreach: IP + UDP(8) + "hiya", then
	 * link padding that must not be quoted. */
	uint8_t orig[40] = { 0 };
	sk_memcpy(orig, port_unreach + 8, 28);
	sk_memcpy(orig + 28, "hiya", 4);
	uint8_t out[64];
	size_t n = icmp_emit_error(out, sizeof(out), ICMP_DEST_UNREACH, ICMP_UNREACH_PORT, 0, orig,
				   sizeof(orig));
	assert_int_equal(n, sizeof(port_unreach));
	assert_memory_equal(out, port_unreach, sizeof(port_unreach));
	assert_int_equal(icmp_emit_error(out, n - 1, ICMP_DEST_UNREACH, ICMP_UNREACH_PORT, 0, orig,
					 sizeof(orig)), 0);
	/* A short original: header + 3 bytes quotes 3. */
	sk_put_be16(orig + 2, 23);
	assert_int_equal(icmp_emit_error(out, sizeof(out), 11, 0, 0, orig, 23), 8 + 23);
	/* Originals we cannot quote. */
	assert_int_equal(icmp_emit_error(out, sizeof(out), 3, 3, 0, orig, 19), 0);
	orig[0] = 0x4f;
	assert_int_equal(icmp_emit_error(out, sizeof(out), 3, 3, 0, orig, 40), 0);
	orig[0] = 0x44;
	assert_int_equal(icmp_emit_error(out, sizeof(out), 3, 3, 0, orig, 40), 0);
	orig[0] = 0x65;
	assert_int_equal(icmp_emit_error(out, sizeof(out), 3, 3, 0, orig, 40), 0);
}

static void test_emit_error_in_place(void **state)
{
	(void)state;
	/* Frag-needed built over the original in the same buffer. */
	uint8_t b[64] = { 0 };
	sk_memcpy(b, frag_needed + 8, 28);
	size_t n = icmp_emit_error(b, sizeof(b), ICMP_DEST_UNREACH, ICMP_UNREACH_FRAG_NEEDED, 1400, b, 28);
	assert_int_equal(n, sizeof(frag_needed));
	assert_memory_equal(b, frag_needed, sizeof(frag_needed));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_echo),
		cmocka_unit_test(test_truncated_and_bad_sum),
		cmocka_unit_test(test_echo_reply_in_place),
		cmocka_unit_test(test_echo_reply_copy),
		cmocka_unit_test(test_echo_request),
		cmocka_unit_test(test_parse_port_unreach),
		cmocka_unit_test(test_parse_frag_needed),
		cmocka_unit_test(test_error_not_error),
		cmocka_unit_test(test_error_quote_truncated),
		cmocka_unit_test(test_error_quote_lies),
		cmocka_unit_test(test_emit_error),
		cmocka_unit_test(test_emit_error_in_place),
	};
	return cmocka_run_group_tests_name("wire/icmp", tests, NULL, NULL);
}
