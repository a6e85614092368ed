/* icmp6_test.c — ICMPv6 echo, errors (parse, the 1280 rule, when not to
 * send) and the MLDv2 report, against frames Linux sent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/csum.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/ipv6_captures.h"

/* Parse a captured frame's IPv6 header; return its ICMPv6 message. */
static const uint8_t *ip_of(const uint8_t *frame, size_t flen, struct ipv6_hdr *ip, size_t *mlen)
{
	int r = ipv6_parse(frame + CAP_ETH, flen - CAP_ETH, ip);
	assert_int_equal(r, WIRE_OK);
	assert_int_equal(ip->proto, IPV6_NH_ICMPV6);
	*mlen = ip->l4_len;
	return frame + CAP_ETH + ip->l4_off;
}

static void test_parse_echo(void **state)
{
	(void)state;
	struct ipv6_hdr ip;
	struct icmp6_hdr h;
	size_t n;
	const uint8_t *m = ip_of(cap_echo_req, sizeof(cap_echo_req), &ip, &n);
	assert_int_equal(icmp6_parse(m, n, &ip.src, &ip.dst, &h), WIRE_OK);
	assert_int_equal(h.type, ICMP6_ECHO_REQUEST);
	assert_int_equal(h.code, 0);
	assert_int_equal(h.id, 892);
	assert_int_equal(h.seq, 1);
	assert_int_equal(h.payload_len, 56);
	/* Every cut fails: short ones as truncated, others by the sum. */
	for (size_t k = 0; k < ICMP6_HLEN; k++)
		assert_int_equal(icmp6_parse(m, k, &ip.src, &ip.dst, &h), WIRE_ETRUNC);
	for (size_t k = ICMP6_HLEN; k < n; k++)
		assert_int_equal(icmp6_parse(m, k, &ip.src, &ip.dst, &h), WIRE_ECSUM);
	/* Any single bit flipped in the message or the pseudo header. */
	uint8_t c[64];
	sk_memcpy(c, m, sizeof(c));
	for (size_t bit = 0; bit < 64 * 8; bit++) {
		c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(icmp6_parse(c, n, &ip.src, &ip.dst, &h), WIRE_ECSUM);
		c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	struct ipv6_addr wrong = ip.dst;
	wrong.b[0] ^= 0x40;
	assert_int_equal(icmp6_parse(m, n, &ip.src, &wrong, &h), WIRE_ECSUM);
}

static void test_echo_reply_reproduces(void **state)
{
	(void)state;
	struct ipv6_hdr ip, rip;
	size_t n, rn;
	const uint8_t *m = ip_of(cap_echo_req, sizeof(cap_echo_req), &ip, &n);
	const uint8_t *rm = ip_of(cap_echo_rep, sizeof(cap_echo_rep), &rip, &rn);
	uint8_t out[64];
	assert_int_equal(icmp6_emit_echo_reply(out, sizeof(out), m, n, &ip.dst, &ip.src), n);
	assert_memory_equal(out, rm, rn); /* Linux's reply, byte for byte */
	assert_int_equal(icmp6_emit_echo_reply(out, sizeof(out) - 1, m, n, &ip.dst, &ip.src), 0);
	/* Only requests get replies. */
	assert_int_equal(icmp6_emit_echo_reply(out, sizeof(out), rm, rn, &ip.dst, &ip.src), 0);
	/* In place. */
	sk_memcpy(out, m, n);
	assert_int_equal(icmp6_emit_echo_reply(out, sizeof(out), out, n, &ip.dst, &ip.src), n);
	assert_memory_equal(out, rm, rn);
	/* The request itself, from its id, seq and data. */
	assert_int_equal(icmp6_emit_echo_request(out, sizeof(out), 892, 1, m + 8, n - 8, &ip.src,
			&ip.dst), n);
	assert_memory_equal(out, m, n);
	assert_int_equal(icmp6_emit_echo_request(out, n - 1, 892, 1, m + 8, n - 8, &ip.src,
			&ip.dst), 0);
}

static void test_parse_errors(void **state)
{
	(void)state;
	struct ipv6_hdr ip;
	struct icmp6_hdr h;
	struct icmp6_error e;
	size_t n;
	const uint8_t *m = ip_of(cap_ptb, sizeof(cap_ptb), &ip, &n);
	assert_int_equal(IPV6_HLEN + n, IPV6_MIN_MTU); /* Linux fills 1280 exactly */
	assert_int_equal(icmp6_parse(m, n, &ip.src, &ip.dst, &h), WIRE_OK);
	assert_int_equal(icmp6_parse_error(m, n, &h, &e), WIRE_OK);
	assert_int_equal(e.type, ICMP6_PACKET_TOO_BIG);
	assert_int_equal(e.mtu, 1280);
	assert_int_equal(e.proto, IPV6_NH_ICMPV6);
	assert_memory_equal(e.src.b, cap_big_req + CAP_ETH + 8, 16);
	assert_memory_equal(e.dst.b, cap_big_req + CAP_ETH + 24, 16);

	m = ip_of(cap_time_exceeded, sizeof(cap_time_exceeded), &ip, &n);
	assert_int_equal(icmp6_parse(m, n, &ip.src, &ip.dst, &h), WIRE_OK);
	assert_int_equal(icmp6_parse_error(m, n, &h, &e), WIRE_OK);
	assert_int_equal(e.type, ICMP6_TIME_EXCEEDED);
	assert_int_equal(e.mtu, 0);

	m = ip_of(cap_port_unreach, sizeof(cap_port_unreach), &ip, &n);
	assert_int_equal(icmp6_parse(m, n, &ip.src, &ip.dst, &h), WIRE_OK);
	assert_int_equal(icmp6_parse_error(m, n, &h, &e), WIRE_OK);
	assert_int_equal(e.type, ICMP6_DEST_UNREACH);
	assert_int_equal(e.code, ICMP6_UNREACH_PORT);
	assert_int_equal(e.proto, IPV6_NH_UDP);
	assert_int_equal(e.sport, 41432);
	assert_int_equal(e.dport, 9);
	/* Cut before the 8 bytes of the UDP header: no flow to name. */
	for (size_t k = 0; k < ICMP6_HLEN + IPV6_HLEN + 8; k++)
		assert_int_equal(icmp6_parse_error(m, k, &h, &e), WIRE_ETRUNC);
	/* Not an error. */
	const uint8_t *em = ip_of(cap_echo_req, sizeof(cap_echo_req), &ip, &n);
	assert_int_equal(icmp6_parse(em, n, &ip.src, &ip.dst, &h), WIRE_OK);
	assert_int_equal(icmp6_parse_error(em, n, &h, &e), WIRE_EUNSUP);
}

static void test_error_lies(void **state)
{
	(void)state;
	struct ipv6_hdr ip;
	struct icmp6_hdr h;
	struct icmp6_error e;
	size_t n;
	const uint8_t *m = ip_of(cap_port_unreach, sizeof(cap_port_unreach), &ip, &n);
	uint8_t c[64];
	sk_memcpy(c, m, n);
	assert_int_equal(icmp6_parse(c, n, &ip.src, &ip.dst, &h), WIRE_OK);
	/* A forged PTB under 1280 is reported as sent: the consumer must not
	 * go below 1280 (RFC 8201) and TCP ignores it (tcp6_test.c). */
	h.type = ICMP6_PACKET_TOO_BIG;
	h.rest = 68;
	assert_int_equal(icmp6_parse_error(c, n, &h, &e), WIRE_OK);
	assert_int_equal(e.mtu, 68);
	h.rest = 9000;
	assert_int_equal(icmp6_parse_error(c, n, &h, &e), WIRE_OK);
	assert_int_equal(e.mtu, 9000);
	/* Parameter Problem carries a pointer. */
	h.type = ICMP6_PARAM_PROBLEM;
	h.rest = 42;
	assert_int_equal(icmp6_parse_error(c, n, &h, &e), WIRE_OK);
	assert_int_equal(e.pointer, 42);
	/* Quoted version wrong. */
	c[8] = 0x45;
	assert_int_equal(icmp6_parse_error(c, n, &h, &e), WIRE_EVERSION);
	/* Quoted payload length shorter than the UDP header. */
	sk_memcpy(c, m, n);
	sk_put_be16(c + 8 + 4, 4);
	assert_int_equal(icmp6_parse_error(c, n, &h, &e), WIRE_ETRUNC);
	/* Unknown error types are not ours to interpret. */
	h.type = 5;
	assert_int_equal(icmp6_parse_error(c, n, &h, &e), WIRE_EUNSUP);
}

static void test_emit_error_1280(void **state)
{
	(void)state;
	struct ipv6_hdr ip, orig;
	size_t n;
	const uint8_t *m = ip_of(cap_ptb, sizeof(cap_ptb), &ip, &n);
	const uint8_t *o = cap_big_req + CAP_ETH;
	size_t olen = sizeof(cap_big_req) - CAP_ETH;
	assert_int_equal(ipv6_parse(o, olen, &orig), WIRE_OK);
	static uint8_t out[1600];
	/* The router's PTB, rebuilt from the request it was about. */
	size_t k = icmp6_emit_error(out, sizeof(out), ICMP6_PACKET_TOO_BIG, 0, 1280, o, olen,
			&ip.src, &ip.dst);
	assert_int_equal(k, ICMP6_HLEN + ICMP6_ERROR_QUOTE_MAX);
	assert_int_equal(k, n);
	assert_memory_equal(out, m, n);
	assert_int_equal(icmp6_emit_error(out, k - 1, ICMP6_PACKET_TOO_BIG, 0, 1280, o, olen,
			&ip.src, &ip.dst), 0);
	/* In place, over the request in the same buffer. */
	sk_memcpy(out, o, olen);
	assert_int_equal(icmp6_emit_error(out, sizeof(out), ICMP6_PACKET_TOO_BIG, 0, 1280, out,
			olen, &ip.src, &ip.dst), n);
	assert_memory_equal(out, m, n);
	/* A short packet is quoted whole, without its link padding. */
	const uint8_t *te = ip_of(cap_time_exceeded, sizeof(cap_time_exceeded), &ip, &n);
	uint8_t req[200] = { 0 };
	sk_memcpy(req, te + 8, n - 8);
	k = icmp6_emit_error(out, sizeof(out), ICMP6_TIME_EXCEEDED, 0, 0, req, sizeof(req), &ip.src,
			&ip.dst);
	assert_int_equal(k, n);
	assert_memory_equal(out, te, n);
	/* Nothing to quote. */
	assert_int_equal(icmp6_emit_error(out, sizeof(out), 1, 0, 0, req, IPV6_HLEN - 1, &ip.src,
			&ip.dst), 0);
	req[0] = 0x45;
	assert_int_equal(icmp6_emit_error(out, sizeof(out), 1, 0, 0, req, sizeof(req), &ip.src,
			&ip.dst), 0);
}

static void test_error_allowed(void **state)
{
	(void)state;
	struct ipv6_hdr ip;
	const uint8_t *p = cap_echo_req + CAP_ETH;
	assert_int_equal(ipv6_parse(p, sizeof(cap_echo_req) - CAP_ETH, &ip), WIRE_OK);
	assert_true(icmp6_error_allowed(p, &ip, false, ICMP6_DEST_UNREACH, 4));
	assert_false(icmp6_error_allowed(p, &ip, true, ICMP6_DEST_UNREACH, 4));
	assert_true(icmp6_error_allowed(p, &ip, true, ICMP6_PACKET_TOO_BIG, 0));
	assert_true(icmp6_error_allowed(p, &ip, true, ICMP6_PARAM_PROBLEM, IPV6_PP_OPTION));
	assert_false(icmp6_error_allowed(p, &ip, true, ICMP6_PARAM_PROBLEM, IPV6_PP_HEADER));
	/* Never about an error. */
	p = cap_ptb + CAP_ETH;
	assert_int_equal(ipv6_parse(p, sizeof(cap_ptb) - CAP_ETH, &ip), WIRE_OK);
	assert_false(icmp6_error_allowed(p, &ip, false, ICMP6_PARAM_PROBLEM, 0));
	/* Never to :: (a DAD probe), and the MLD report goes to a group. */
	p = cap_dad_ns + CAP_ETH;
	assert_int_equal(ipv6_parse(p, sizeof(cap_dad_ns) - CAP_ETH, &ip), WIRE_OK);
	assert_false(icmp6_error_allowed(p, &ip, false, ICMP6_PACKET_TOO_BIG, 0));
	p = cap_mld_report + CAP_ETH;
	assert_int_equal(ipv6_parse(p, sizeof(cap_mld_report) - CAP_ETH, &ip), WIRE_OK);
	assert_false(icmp6_error_allowed(p, &ip, false, ICMP6_DEST_UNREACH, 0));
	assert_true(icmp6_error_allowed(p, &ip, false, ICMP6_PACKET_TOO_BIG, 0));
}

static void test_mld2_report(void **state)
{
	(void)state;
	struct ipv6_hdr ip;
	size_t n;
	const uint8_t *p = cap_mld_report + CAP_ETH;
	size_t plen = sizeof(cap_mld_report) - CAP_ETH;
	ip_of(cap_mld_report, sizeof(cap_mld_report), &ip, &n);
	/* The two groups Linux joined: ff02::1:ff00:a and ff02::1:ff00:1. */
	struct ipv6_addr g[2];
	sk_memcpy(g[0].b, p + 48 + 8 + 4, 16);
	sk_memcpy(g[1].b, p + 48 + 28 + 4, 16);
	assert_true(ipv6_is_solicited_node(&g[0]));
	assert_true(ipv6_is_solicited_node(&g[1]));
	static uint8_t out[1024];
	size_t k = mld2_emit_report(out, sizeof(out), &ip.src, g, 2, MLD2_CHANGE_TO_EXCLUDE);
	assert_int_equal(k, plen);
	assert_memory_equal(out, p, plen);
	assert_int_equal(mld2_emit_report(out, plen - 1, &ip.src, g, 2, MLD2_CHANGE_TO_EXCLUDE), 0);
	assert_int_equal(mld2_emit_report(out, sizeof(out), &ip.src, g, 0, MLD2_CHANGE_TO_EXCLUDE),
			0);
	assert_int_equal(mld2_emit_report(out, sizeof(out), &ip.src, g, MLD2_REPORT_MAX + 1,
					  MLD2_CHANGE_TO_EXCLUDE), 0);
	/* From :: during DAD, as Linux sent frame 1: it parses and sums. */
	k = mld2_emit_report(out, sizeof(out), &ipv6_unspecified, g, 1, MLD2_CHANGE_TO_INCLUDE);
	assert_int_equal(k, IPV6_HLEN + 8 + 8 + 20);
	struct ipv6_hdr b;
	struct icmp6_hdr h;
	assert_int_equal(ipv6_parse(out, k, &b), WIRE_OK);
	assert_true(b.router_alert);
	assert_int_equal(b.hop_limit, 1);
	assert_int_equal(icmp6_parse(out + b.l4_off, b.l4_len, &b.src, &b.dst, &h), WIRE_OK);
	assert_int_equal(h.type, ICMP6_MLD2_REPORT);
	assert_int_equal(out[b.l4_off + 8], MLD2_CHANGE_TO_INCLUDE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_echo),
		cmocka_unit_test(test_echo_reply_reproduces),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_error_lies),
		cmocka_unit_test(test_emit_error_1280),
		cmocka_unit_test(test_error_allowed),
		cmocka_unit_test(test_mld2_report),
	};
	return cmocka_run_group_tests_name("wire/icmp6", tests, NULL, NULL);
}
