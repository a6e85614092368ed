/* ipv6_test.c — IPv6 header, extension headers, addresses, pseudo header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wire/csum.h"
#include "wire/ipv6.h"
#include "wire/ipv6_captures.h"

static const struct ipv6_addr a_slaac = { { 0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xfe, 0, 0,
		0x0a } };
static const struct ipv6_addr r_addr = { { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 2 } };

static uint8_t pkt[1024];

/* A packet from a_slaac to r_addr: the fixed header naming `next`, then
 * `ext` (extlen bytes), then l4len bytes of 0xaa.  Returns its length. */
static size_t build(uint8_t next, const uint8_t *ext, size_t extlen, size_t l4len)
{
	sk_memset(pkt, 0, sizeof(pkt));
	struct ipv6_hdr h = { .next = next, .hop_limit = 64, .src = a_slaac, .dst = r_addr };
	assert_int_equal(ipv6_emit(pkt, sizeof(pkt), &h, (uint16_t)(extlen + l4len)), IPV6_HLEN);
	if (extlen)
		sk_memcpy(pkt + IPV6_HLEN, ext, extlen);
	sk_memset(pkt + IPV6_HLEN + extlen, 0xaa, l4len);
	return IPV6_HLEN + extlen + l4len;
}

static void test_parse_echo(void **state)
{
	(void)state;
	const uint8_t *p = cap_echo_req + CAP_ETH;
	size_t n = sizeof(cap_echo_req) - CAP_ETH;
	struct ipv6_hdr h;
	assert_int_equal(ipv6_parse(p, n, &h), WIRE_OK);
	assert_int_equal(h.tclass, 0);
	assert_int_equal(h.flow, 0x9a34a);
	assert_int_equal(h.payload_len, 64);
	assert_int_equal(h.next, IPV6_NH_ICMPV6);
	assert_int_equal(h.hop_limit, 64);
	assert_true(ipv6_addr_eq(&h.src, &a_slaac));
	assert_true(ipv6_addr_eq(&h.dst, &r_addr));
	assert_int_equal(h.proto, IPV6_NH_ICMPV6);
	assert_int_equal(h.l4_off, 40);
	assert_int_equal(h.l4_len, 64);
	assert_int_equal(h.ext_len, 0);
	assert_false(h.frag);
	assert_false(h.router_alert);
	/* Its ICMPv6 checksum verifies over the RFC 8200 8.1 pseudo header. */
	uint64_t s = csum_pseudo6(h.src.b, h.dst.b, IPV6_NH_ICMPV6, h.l4_len);
	assert_int_equal(csum_fold(csum_add(s, p + h.l4_off, h.l4_len)), 0);
	/* ... and not over the reply's (swapped addresses are the same sum,
	 * so change one bit of the source instead). */
	struct ipv6_addr other = h.src;
	other.b[15] ^= 1;
	s = csum_pseudo6(other.b, h.dst.b, IPV6_NH_ICMPV6, h.l4_len);
	assert_int_not_equal(csum_fold(csum_add(s, p + h.l4_off, h.l4_len)), 0);
}

static void test_emit_reproduces(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	const uint8_t *p = cap_echo_rep + CAP_ETH;
	assert_int_equal(ipv6_parse(p, sizeof(cap_echo_rep) - CAP_ETH, &h), WIRE_OK);
	uint8_t out[IPV6_HLEN];
	assert_int_equal(ipv6_emit(out, sizeof(out), &h, h.payload_len), IPV6_HLEN);
	assert_memory_equal(out, p, IPV6_HLEN);
	assert_int_equal(ipv6_emit(out, IPV6_HLEN - 1, &h, 0), 0);
	/* Traffic class and flow label land in their bits. */
	h.tclass = 0xb8;
	h.flow = 0xfffff;
	ipv6_emit(out, sizeof(out), &h, 0);
	assert_int_equal(sk_get_be32(out), 0x6b8fffff);
	struct ipv6_hdr b;
	assert_int_equal(ipv6_parse(out, sizeof(out), &b), WIRE_OK);
	assert_int_equal(b.tclass, 0xb8);
	assert_int_equal(b.flow, 0xfffff);
	assert_int_equal(b.proto, IPV6_NH_ICMPV6);
	assert_int_equal(b.l4_len, 0);
	/* In place: a header rewritten from its own parse is unchanged. */
	sk_memcpy(out, p, IPV6_HLEN);
	assert_int_equal(ipv6_parse(p, sizeof(cap_echo_rep) - CAP_ETH, &b), WIRE_OK);
	assert_int_equal(ipv6_emit(out, sizeof(out), &b, b.payload_len), IPV6_HLEN);
	assert_memory_equal(out, p, IPV6_HLEN);
}

static void test_truncated_every_length(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	const uint8_t *caps[] = { cap_echo_req, cap_mld_report, cap_frag_last };
	size_t lens[] = { sizeof(cap_echo_req), sizeof(cap_mld_report), sizeof(cap_frag_last) };
	for (size_t c = 0; c < SK_ARRAY_LEN(caps); c++)
		for (size_t n = 0; n < lens[c] - CAP_ETH; n++)
			assert_int_equal(ipv6_parse(caps[c] + CAP_ETH, n, &h), WIRE_ETRUNC);
}

static void test_lying_lengths(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	size_t n = build(IPV6_NH_UDP, NULL, 0, 16);
	/* Link padding after the payload is not payload. */
	assert_int_equal(ipv6_parse(pkt, n + 20, &h), WIRE_OK);
	assert_int_equal(h.l4_len, 16);
	sk_put_be16(pkt + 4, 17);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_ETRUNC);
	sk_put_be16(pkt + 4, 0xffff);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_ETRUNC);
	/* Payload length 0 (a jumbogram would say so) with a hop-by-hop
	 * header named: the header does not fit in the payload. */
	n = build(IPV6_NH_HOPOPTS, NULL, 0, 0);
	assert_int_equal(ipv6_parse(pkt, n + 8, &h), WIRE_EBADLEN);
	/* An extension header whose length runs past the payload. */
	uint8_t dst[8] = { IPV6_NH_UDP, 1 /* 16 bytes */, IPV6_OPT_PADN, 4 };
	n = build(IPV6_NH_DSTOPTS, dst, sizeof(dst), 4);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EBADLEN);
	assert_int_equal(ipv6_parse(pkt, sizeof(pkt), &h), WIRE_EBADLEN);
	for (uint8_t v = 0; v < 16; v++) {
		if (v == 6)
			continue;
		n = build(IPV6_NH_UDP, NULL, 0, 8);
		pkt[0] = (uint8_t)(v << 4);
		assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EVERSION);
	}
}

static void test_bad_addresses(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	size_t n = build(IPV6_NH_UDP, NULL, 0, 8);
	pkt[8] = 0xff; /* multicast source */
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EBADADDR);
	build(IPV6_NH_UDP, NULL, 0, 8);
	sk_memset(pkt + 24, 0, 16); /* to :: */
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EBADADDR);
	sk_memcpy(pkt + 24, ipv6_loopback.b, 16);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EBADADDR);
	build(IPV6_NH_UDP, NULL, 0, 8);
	sk_memcpy(pkt + 8, ipv6_loopback.b, 16);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EBADADDR);
	/* From :: is fine (DAD), and to a group. */
	assert_int_equal(ipv6_parse(cap_dad_ns + CAP_ETH, sizeof(cap_dad_ns) - CAP_ETH, &h),
			WIRE_OK);
	assert_true(ipv6_is_unspecified(&h.src));
	assert_true(ipv6_is_multicast(&h.dst));
	assert_int_equal(h.hop_limit, 255);
}

static void test_hop_by_hop_mld(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	const uint8_t *p = cap_mld_report + CAP_ETH;
	assert_int_equal(ipv6_parse(p, sizeof(cap_mld_report) - CAP_ETH, &h), WIRE_OK);
	assert_int_equal(h.next, IPV6_NH_HOPOPTS);
	assert_int_equal(h.hop_limit, 1);
	assert_true(h.router_alert);
	assert_int_equal(h.proto, IPV6_NH_ICMPV6);
	assert_int_equal(h.ext_len, 8);
	assert_int_equal(h.next_ext, 1);
	assert_int_equal(h.l4_off, 48);
	assert_int_equal(h.l4_len, 48);
	/* The pseudo header's length is the ICMPv6 length, without the
	 * hop-by-hop header (RFC 8200 8.1). */
	uint64_t s = csum_pseudo6(h.src.b, h.dst.b, IPV6_NH_ICMPV6, h.l4_len);
	assert_int_equal(csum_fold(csum_add(s, p + h.l4_off, h.l4_len)), 0);
	/* The header we would send is Linux's, byte for byte. */
	uint8_t hbh[8];
	assert_int_equal(ipv6_emit_hbh_router_alert(hbh, sizeof(hbh), IPV6_NH_ICMPV6, 0), 8);
	assert_memory_equal(hbh, p + 40, 8);
	assert_int_equal(ipv6_emit_hbh_router_alert(hbh, 7, IPV6_NH_ICMPV6, 0), 0);
	/* A router alert with a wrong length. */
	uint8_t bad[8] = { IPV6_NH_ICMPV6, 0, IPV6_OPT_ROUTER_ALERT, 3, 0, 0, 0, 0 };
	size_t n = build(IPV6_NH_HOPOPTS, bad, sizeof(bad), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	assert_int_equal(h.pp_code, IPV6_PP_HEADER);
	assert_int_equal(h.pp_ptr, 43);
	/* Router alert in destination options means nothing: an unknown
	 * option with action 00, skipped. */
	uint8_t ra[8] = { IPV6_NH_ICMPV6, 0, IPV6_OPT_ROUTER_ALERT, 2, 0, 0, IPV6_OPT_PADN, 0 };
	n = build(IPV6_NH_DSTOPTS, ra, sizeof(ra), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	assert_false(h.router_alert);
}

static void test_hop_by_hop_not_first(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	uint8_t ext[16] = { IPV6_NH_HOPOPTS, 0, IPV6_OPT_PADN, 4, 0, 0, 0, 0,
			    IPV6_NH_UDP, 0, IPV6_OPT_PADN, 4, 0, 0, 0, 0 };
	size_t n = build(IPV6_NH_DSTOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EEXT);
	assert_int_equal(h.pp_code, IPV6_PP_NEXT);
	assert_int_equal(h.pp_ptr, 40); /* the next-header byte that named it */
	/* Two hop-by-hop headers: the second is not first either. */
	ext[0] = IPV6_NH_HOPOPTS;
	n = build(IPV6_NH_HOPOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EEXT);
	/* First, it is fine. */
	ext[0] = IPV6_NH_UDP;
	n = build(IPV6_NH_HOPOPTS, ext, 8, 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	assert_int_equal(h.proto, IPV6_NH_UDP);
	assert_int_equal(h.l4_off, 48);
	assert_int_equal(h.l4_len, 8);
}

static void test_option_actions(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	uint8_t ext[8] = { IPV6_NH_UDP, 0, 0x1e, 2, 0, 0, IPV6_OPT_PAD1, IPV6_OPT_PAD1 };
	size_t n = build(IPV6_NH_DSTOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK); /* 00: skip */
	ext[2] = 0x5e; /* 01: discard */
	n = build(IPV6_NH_DSTOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	assert_int_equal(h.pp_code, -1);
	ext[2] = 0x9e; /* 10: discard and tell */
	n = build(IPV6_NH_DSTOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	assert_int_equal(h.pp_code, IPV6_PP_OPTION);
	assert_int_equal(h.pp_ptr, 42);
	ext[2] = 0xde; /* 11: tell unless to a group */
	n = build(IPV6_NH_DSTOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	assert_int_equal(h.pp_code, IPV6_PP_OPTION);
	sk_memcpy(pkt + 24, ipv6_all_nodes.b, 16);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	assert_int_equal(h.pp_code, -1);
	/* A jumbo payload option is one we do not know: 11. */
	ext[2] = IPV6_OPT_JUMBO;
	ext[3] = 4;
	n = build(IPV6_NH_HOPOPTS, ext, sizeof(ext), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	/* An option whose length runs out of the header. */
	uint8_t run[8] = { IPV6_NH_UDP, 0, IPV6_OPT_PADN, 5, 0, 0, 0, 0 };
	n = build(IPV6_NH_DSTOPTS, run, sizeof(run), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	assert_int_equal(h.pp_code, IPV6_PP_HEADER);
	assert_int_equal(h.pp_ptr, 43);
	/* A type byte with no room for its length. */
	uint8_t cut[8] = { IPV6_NH_UDP, 0, 0, 0, 0, 0, 0, 0x1e };
	n = build(IPV6_NH_DSTOPTS, cut, sizeof(cut), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EOPT);
	/* Pad1 and empty PadN everywhere are fine. */
	uint8_t pads[8] = { IPV6_NH_UDP, 0, 0, 0, IPV6_OPT_PADN, 0, 0, 0 };
	n = build(IPV6_NH_DSTOPTS, pads, sizeof(pads), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	/* IPV6_OPT_MAX skippable options pass; one more is over the limit. */
	uint8_t many[40] = { IPV6_NH_UDP, 4 };
	for (size_t i = 0; i < 9; i++) {
		many[2 + 4 * i] = 0x1e;
		many[3 + 4 * i] = 2;
	}
	many[38] = IPV6_OPT_PAD1;
	many[39] = IPV6_OPT_PAD1;
	n = build(IPV6_NH_DSTOPTS, many, sizeof(many), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_ELIMIT);
	many[34] = IPV6_OPT_PADN;
	n = build(IPV6_NH_DSTOPTS, many, sizeof(many), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
}

static void test_routing(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	/* Type 0 (RFC 5095), even with no segments left: dropped. */
	uint8_t rh[24] = { IPV6_NH_UDP, 2, 0, 0 };
	size_t n = build(IPV6_NH_ROUTING, rh, sizeof(rh), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EROUTE);
	assert_int_equal(h.pp_code, -1);
	rh[3] = 1;
	n = build(IPV6_NH_ROUTING, rh, sizeof(rh), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EROUTE);
	assert_int_equal(h.pp_code, IPV6_PP_HEADER);
	assert_int_equal(h.pp_ptr, 42);
	/* Another type with segments left: we would be a hop. */
	rh[2] = 4;
	n = build(IPV6_NH_ROUTING, rh, sizeof(rh), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EROUTE);
	/* ... with none left it is ignored (RFC 8200 4.4). */
	rh[3] = 0;
	n = build(IPV6_NH_ROUTING, rh, sizeof(rh), 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	assert_int_equal(h.proto, IPV6_NH_UDP);
	assert_int_equal(h.l4_off, 64);
}

static void test_fragments(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	const uint8_t *p = cap_frag_last + CAP_ETH;
	size_t n = sizeof(cap_frag_last) - CAP_ETH;
	assert_int_equal(ipv6_parse(p, n, &h), WIRE_EFRAG);
	assert_true(h.frag);
	assert_int_equal(h.frag_id, 0x9aa1b6dd);
	assert_int_equal(h.frag_off, 1232);
	assert_false(h.frag_more);
	assert_int_equal(h.proto, IPV6_NH_ICMPV6);
	assert_int_equal(h.l4_off, 48);
	assert_int_equal(h.l4_len, 176);
	/* A first fragment (offset 0, M) is a fragment too. */
	uint8_t fh[8] = { IPV6_NH_UDP, 0, 0x00, 0x01, 1, 2, 3, 4 };
	n = build(IPV6_NH_FRAGMENT, fh, sizeof(fh), 16);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_EFRAG);
	assert_true(h.frag_more);
	assert_int_equal(h.frag_off, 0);
	assert_int_equal(h.frag_id, 0x01020304);
	/* An atomic fragment is processed as a whole packet (RFC 6946). */
	fh[3] = 0;
	n = build(IPV6_NH_FRAGMENT, fh, sizeof(fh), 16);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	assert_false(h.frag);
	assert_int_equal(h.proto, IPV6_NH_UDP);
	assert_int_equal(h.l4_off, 48);
	assert_int_equal(h.l4_len, 16);
	/* A fragment header cut by the payload length. */
	n = build(IPV6_NH_FRAGMENT, fh, 4, 0);
	assert_int_equal(ipv6_parse(pkt, n + 4, &h), WIRE_EBADLEN);
}

static void test_chain_limits(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	uint8_t ext[IPV6_EXT_MAX_BYTES + 8];
	/* IPV6_EXT_MAX empty destination options headers pass, one more not
	 * (a "loop" of headers is a long chain: each costs 8 bytes). */
	for (size_t k = IPV6_EXT_MAX; k <= IPV6_EXT_MAX + 1; k++) {
		sk_memset(ext, 0, sizeof(ext));
		for (size_t i = 0; i < k; i++) {
			ext[8 * i] = i + 1 < k ? IPV6_NH_DSTOPTS : IPV6_NH_UDP;
			ext[8 * i + 2] = IPV6_OPT_PADN;
			ext[8 * i + 3] = 4;
		}
		size_t n = build(IPV6_NH_DSTOPTS, ext, 8 * k, 8);
		assert_int_equal(ipv6_parse(pkt, n, &h), k <= IPV6_EXT_MAX ? WIRE_OK : WIRE_ELIMIT);
	}
	/* One header longer than the byte limit. */
	sk_memset(ext, 0, sizeof(ext));
	ext[0] = IPV6_NH_UDP;
	ext[1] = IPV6_EXT_MAX_BYTES / 8; /* (n+1)*8 = limit + 8 */
	size_t n = build(IPV6_NH_DSTOPTS, ext, IPV6_EXT_MAX_BYTES + 8, 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_ELIMIT);
	ext[1] = IPV6_EXT_MAX_BYTES / 8 - 1; /* exactly the limit: Pad1s */
	n = build(IPV6_NH_DSTOPTS, ext, IPV6_EXT_MAX_BYTES, 8);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	/* No next header: nothing follows, and that is fine. */
	n = build(IPV6_NH_NONE, NULL, 0, 0);
	assert_int_equal(ipv6_parse(pkt, n, &h), WIRE_OK);
	assert_int_equal(h.proto, IPV6_NH_NONE);
}

static void test_quoted(void **state)
{
	(void)state;
	struct ipv6_hdr h;
	/* The PTB's quote: 1232 bytes of a 1448-byte packet. */
	const uint8_t *q = cap_ptb + CAP_ETH + IPV6_HLEN + 8;
	assert_int_equal(ipv6_parse_quoted(q, 1232, &h), WIRE_OK);
	assert_int_equal(h.payload_len, 1408);
	assert_int_equal(h.proto, IPV6_NH_ICMPV6);
	assert_int_equal(h.l4_len, 1192);
	assert_int_equal(ipv6_parse(q, 1232, &h), WIRE_ETRUNC);
	for (size_t n = 0; n < IPV6_HLEN; n++)
		assert_int_equal(ipv6_parse_quoted(q, n, &h), WIRE_ETRUNC);
	/* A quoted hop-by-hop header cut short. */
	const uint8_t *m = cap_mld_report + CAP_ETH;
	for (size_t n = IPV6_HLEN; n < 48; n++)
		assert_int_equal(ipv6_parse_quoted(m, n, &h), WIRE_ETRUNC);
	assert_int_equal(ipv6_parse_quoted(m, 48, &h), WIRE_OK);
	assert_int_equal(h.l4_len, 0);
	/* Quoted fragments: the first is walked through, a later one not. */
	uint8_t fh[8] = { IPV6_NH_TCP, 0, 0x00, 0x01, 1, 2, 3, 4 };
	size_t n = build(IPV6_NH_FRAGMENT, fh, sizeof(fh), 20);
	assert_int_equal(ipv6_parse_quoted(pkt, n, &h), WIRE_OK);
	assert_int_equal(h.proto, IPV6_NH_TCP);
	assert_int_equal(h.l4_off, 48);
	pkt[43] = 0x08 | 1; /* offset 8 */
	assert_int_equal(ipv6_parse_quoted(pkt, n, &h), WIRE_EFRAG);
}

static void test_addresses(void **state)
{
	(void)state;
	static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
	struct ipv6_addr ll, sn;
	/* The kernel's link-local for 02:00:00:00:00:0a is the RS source. */
	ipv6_link_local_from_mac(&ll, mac_a);
	assert_memory_equal(ll.b, cap_rs + CAP_ETH + 8, 16);
	assert_true(ipv6_is_link_local(&ll));
	assert_true(ipv6_is_unicast(&ll));
	/* And its SLAAC address has the same identifier. */
	uint8_t iid[8];
	ipv6_iid_from_mac(iid, mac_a);
	assert_memory_equal(iid, a_slaac.b + 8, 8);
	/* A universal MAC gets the bit set (RFC 4291 appendix A). */
	static const uint8_t mac_u[6] = { 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde };
	ipv6_iid_from_mac(iid, mac_u);
	static const uint8_t iid_u[8] = { 0x36, 0x56, 0x78, 0xff, 0xfe, 0x9a, 0xbc, 0xde };
	assert_memory_equal(iid, iid_u, 8);
	/* Solicited-node group of the NS target is where the NS went, and
	 * its MAC the frame's destination. */
	ipv6_solicited_node(&sn, &r_addr);
	assert_memory_equal(sn.b, cap_ns + CAP_ETH + 24, 16);
	assert_true(ipv6_is_solicited_node(&sn));
	assert_false(ipv6_is_solicited_node(&r_addr));
	assert_true(ipv6_is_multicast(&sn));
	uint8_t mac[6];
	ipv6_mcast_mac(mac, &sn);
	assert_memory_equal(mac, cap_ns, 6);
	ipv6_mcast_mac(mac, &ipv6_mld2_routers);
	assert_memory_equal(mac, cap_mld_report, 6);
	ipv6_solicited_node(&sn, &sn); /* in place */
	assert_true(ipv6_is_solicited_node(&sn));
	/* Predicates. */
	assert_true(ipv6_is_unspecified(&ipv6_unspecified));
	assert_true(ipv6_is_loopback(&ipv6_loopback));
	assert_false(ipv6_is_unicast(&ipv6_loopback));
	assert_false(ipv6_is_unicast(&ipv6_all_nodes));
	assert_false(ipv6_is_link_local(&r_addr));
	struct ipv6_addr febf = { { 0xfe, 0xbf, [15] = 1 } }, fec0 = { { 0xfe, 0xc0, [15] = 1 } };
	assert_true(ipv6_is_link_local(&febf));
	assert_false(ipv6_is_link_local(&fec0));
	/* Prefixes. */
	assert_true(ipv6_prefix_eq(&a_slaac, &r_addr, 64));
	assert_false(ipv6_prefix_eq(&a_slaac, &r_addr, 65 + 24));
	assert_true(ipv6_prefix_eq(&a_slaac, &r_addr, 0));
	assert_true(ipv6_prefix_eq(&a_slaac, &a_slaac, 128));
	assert_true(ipv6_prefix_eq(&a_slaac, &a_slaac, 200));
	struct ipv6_addr x = a_slaac, y = a_slaac;
	y.b[6] ^= 0x01; /* bit 55 */
	assert_true(ipv6_prefix_eq(&x, &y, 55));
	assert_false(ipv6_prefix_eq(&x, &y, 56));
	ipv6_prefix_mask(&x, 64);
	struct ipv6_addr p64 = { { 0x20, 0x01, 0, 2, 0, 0, 0, 1 } };
	assert_true(ipv6_addr_eq(&x, &p64));
	x = a_slaac;
	ipv6_prefix_mask(&x, 100);
	assert_int_equal(x.b[12], 0xf0);
	assert_int_equal(x.b[13], 0);
	x = a_slaac;
	ipv6_prefix_mask(&x, 128);
	assert_true(ipv6_addr_eq(&x, &a_slaac));
	ipv6_prefix_mask(&x, 0);
	assert_true(ipv6_is_unspecified(&x));
}

/* RFC 5952 section 4's rules, each with its own case. */
static void test_format(void **state)
{
	(void)state;
	static const struct {
		uint8_t a[16];
		const char *s;
	} cases[] = {
		{{0}, "::"},
		{{[15] = 1}, "::1"},
		{{0x20, 0x01, 0x00, 0x02, [15] = 2}, "2001:2::2"},
		/* a single zero group is not shortened (4.2.2) */
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, "2001:db8:0:1:1:1:1:1"},
		/* the longest run wins (4.2.3) */
		{{0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, "2001:0:0:1::1"},
		/* of equal runs, the first (4.2.3) */
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}, "2001:db8::1:0:0:1"},
		/* no leading zeros, lower case (4.1, 4.3) */
		{{0xfe, 0x80, [8] = 0x0a, 0xbc, 0x00, 0x0f, 0xff, 0xfe, 0x00, 0x01}, "fe80::abc:f:fffe:1"},
		{{0xff, 0x02, [15] = 1}, "ff02::1"},
		/* a trailing run */
		{{0x20, 0x01, 0x00, 0x02}, "2001:2::"},
		/* all eight groups at full width */
		{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		 "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[IPV6_STRLEN];
		memset(out, 'x', sizeof out);
		size_t n = ipv6_format(cases[i].a, out);
		assert_string_equal(out, cases[i].s);
		assert_int_equal(n, strlen(cases[i].s));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_echo),
		cmocka_unit_test(test_emit_reproduces),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_lying_lengths),
		cmocka_unit_test(test_bad_addresses),
		cmocka_unit_test(test_hop_by_hop_mld),
		cmocka_unit_test(test_hop_by_hop_not_first),
		cmocka_unit_test(test_option_actions),
		cmocka_unit_test(test_routing),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_chain_limits),
		cmocka_unit_test(test_quoted),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests_name("wire/ipv6", tests, NULL, NULL);
}
