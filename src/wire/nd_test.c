/* nd_test.c — Neighbour Discovery: Linux's RS, NS, NA, DAD probe and radvd's
 * RA parsed and rebuilt; every RFC 4861 validity check; option walking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/ipv6_captures.h"
#include "wire/nd.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_r[6] = { 0x02, 0, 0, 0, 0, 0x01 };

static uint8_t buf[256];
static struct ipv6_hdr ip;

/* Copy a frame's ICMPv6 message to buf, after checking its IPv6 and
 * ICMPv6 parse; returns the message length. */
static size_t load(const uint8_t *frame, size_t flen)
{
	assert_int_equal(ipv6_parse(frame + CAP_ETH, flen - CAP_ETH, &ip), WIRE_OK);
	assert_int_equal(ip.proto, IPV6_NH_ICMPV6);
	struct icmp6_hdr h;
	const uint8_t *m = frame + CAP_ETH + ip.l4_off;
	assert_int_equal(icmp6_parse(m, ip.l4_len, &ip.src, &ip.dst, &h), WIRE_OK);
	sk_memcpy(buf, m, ip.l4_len);
	return ip.l4_len;
}

static void test_rs(void **state)
{
	(void)state;
	struct nd_msg m;
	size_t n = load(cap_rs, sizeof(cap_rs));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.type, ND_RS);
	assert_true(m.opts.has_slla);
	assert_memory_equal(m.opts.slla, mac_a, 6);
	uint8_t out[64];
	assert_int_equal(nd_emit_rs(out, sizeof(out), mac_a, &ip.src, &ip.dst), n);
	assert_memory_equal(out, buf, n);
	assert_int_equal(nd_emit_rs(out, n - 1, mac_a, &ip.src, &ip.dst), 0);
	/* From :: an RS must not carry a link-layer address. */
	ip.src = ipv6_unspecified;
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EBADADDR);
	assert_int_equal(nd_emit_rs(out, sizeof(out), NULL, &ip.src, &ip.dst), ND_RS_LEN);
	assert_int_equal(nd_parse(out, ND_RS_LEN, &ip, &m), WIRE_OK);
}

static void test_ra(void **state)
{
	(void)state;
	struct nd_msg m;
	size_t n = load(cap_ra, sizeof(cap_ra));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.type, ND_RA);
	assert_int_equal(m.cur_hop_limit, 64);
	assert_int_equal(m.ra_flags, ND_RA_MANAGED | ND_RA_OTHER);
	assert_int_equal(m.router_lifetime, 1800);
	assert_int_equal(m.reachable_ms, 30000);
	assert_int_equal(m.retrans_ms, 1000);
	assert_true(m.opts.has_slla);
	assert_memory_equal(m.opts.slla, mac_r, 6);
	assert_true(m.opts.has_mtu);
	assert_int_equal(m.opts.mtu, 1500);
	assert_int_equal(m.opts.nprefix, 1);
	assert_int_equal(m.opts.prefix_ignored, 0);
	const struct nd_prefix *p = &m.opts.prefix[0];
	assert_int_equal(p->len, 64);
	assert_true(p->onlink);
	assert_true(p->autonomous);
	assert_int_equal(p->valid, 86400);
	assert_int_equal(p->preferred, 14400);
	static const uint8_t pfx[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1 };
	assert_memory_equal(p->prefix.b, pfx, 16);
	/* Not from a link-local source: not a router we may believe. */
	struct ipv6_hdr saved = ip;
	ip.src.b[0] = 0x20;
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EBADADDR);
	ip = saved;
	/* The prefix option is at 16 (type 3, length 4).  Prefix checks: */
	assert_int_equal(buf[16], ND_OPT_PREFIX);
	buf[18] = 129; /* length over 128: ignored */
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.opts.nprefix, 0);
	assert_int_equal(m.opts.prefix_ignored, 1);
	buf[18] = 64;
	sk_put_be32(buf + 16 + 8, 86401); /* preferred > valid: ignored */
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.opts.prefix_ignored, 1);
	sk_put_be32(buf + 16 + 8, 14400);
	buf[32] = 0xfe; /* fe80::/64: ignored */
	buf[33] = 0x80;
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.opts.prefix_ignored, 1);
	buf[32] = 0x20;
	buf[33] = 0x01;
	buf[18] = 48; /* bits past the length are cleared */
	buf[32 + 7] = 0x77;
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.opts.nprefix, 1);
	assert_int_equal(m.opts.prefix[0].prefix.b[7], 0);
	assert_int_equal(m.opts.prefix[0].prefix.b[3], 2);
	buf[17] = 3; /* a prefix option of the wrong size */
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EOPT);
}

static void test_ns_na(void **state)
{
	(void)state;
	struct nd_msg m;
	uint8_t out[64];
	size_t n = load(cap_ns, sizeof(cap_ns));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.type, ND_NS);
	static const uint8_t r_addr[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 2 };
	assert_memory_equal(m.target.b, r_addr, 16);
	assert_true(m.opts.has_slla);
	assert_memory_equal(m.opts.slla, mac_a, 6);
	assert_int_equal(nd_emit_ns(out, sizeof(out), &m.target, mac_a, NULL, &ip.src, &ip.dst), n);
	assert_memory_equal(out, buf, n);
	assert_int_equal(nd_emit_ns(out, n - 1, &m.target, mac_a, NULL, &ip.src, &ip.dst), 0);

	n = load(cap_na, sizeof(cap_na));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.type, ND_NA);
	assert_int_equal(m.na_flags, ND_NA_ROUTER | ND_NA_SOLICITED | ND_NA_OVERRIDE);
	assert_memory_equal(m.target.b, r_addr, 16);
	assert_true(m.opts.has_tlla);
	assert_memory_equal(m.opts.tlla, mac_r, 6);
	assert_int_equal(nd_emit_na(out, sizeof(out), &m.target, m.na_flags, mac_r, &ip.src,
			&ip.dst), n);
	assert_memory_equal(out, buf, n);
	/* A solicited NA to a group is invalid; unsolicited is fine. */
	ip.dst = ipv6_all_nodes;
	nd_emit_na(out, sizeof(out), &m.target, ND_NA_SOLICITED, mac_r, &ip.src, &ip.dst);
	assert_int_equal(nd_parse(out, n, &ip, &m), WIRE_EBADADDR);
	nd_emit_na(out, sizeof(out), &m.target, ND_NA_OVERRIDE, mac_r, &ip.src, &ip.dst);
	assert_int_equal(nd_parse(out, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.na_flags, ND_NA_OVERRIDE);
	/* A multicast target. */
	nd_emit_na(out, sizeof(out), &ipv6_all_nodes, 0, mac_r, &ip.src, &ip.dst);
	assert_int_equal(nd_parse(out, n, &ip, &m), WIRE_EBADADDR);
}

static void test_dad_probe(void **state)
{
	(void)state;
	struct nd_msg m;
	uint8_t out[64];
	size_t n = load(cap_dad_ns, sizeof(cap_dad_ns));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_false(m.opts.has_slla);
	assert_true(m.opts.has_nonce);
	assert_int_equal(nd_emit_ns(out, sizeof(out), &m.target, NULL, m.opts.nonce, &ip.src,
			&ip.dst), n);
	assert_memory_equal(out, buf, n);
	/* From :: it must go to the target's solicited-node group ... */
	struct ipv6_hdr saved = ip;
	ip.dst = ipv6_all_nodes;
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EBADADDR);
	ip = saved;
	/* ... and carry no source link-layer address. */
	nd_emit_ns(out, sizeof(out), &m.target, mac_a, NULL, &ip.src, &ip.dst);
	assert_int_equal(nd_parse(out, ND_NS_LEN + 8, &ip, &m), WIRE_EBADADDR);
	/* A multicast target. */
	nd_emit_ns(out, sizeof(out), &ipv6_all_nodes, NULL, NULL, &ip.src, &ip.dst);
	assert_int_equal(nd_parse(out, ND_NS_LEN, &ip, &m), WIRE_EBADADDR);
}

static void test_common_checks(void **state)
{
	(void)state;
	struct nd_msg m;
	const struct { const uint8_t *f; size_t n; } caps[] = {
		{ cap_rs, sizeof(cap_rs) }, { cap_ra, sizeof(cap_ra) }, { cap_ns, sizeof(cap_ns) },
		{ cap_na, sizeof(cap_na) }, { cap_dad_ns, sizeof(cap_dad_ns) },
	};
	static const size_t fixed[] = { ND_RS_LEN, ND_RA_LEN, ND_NS_LEN, ND_NA_LEN, ND_NS_LEN };
	for (size_t c = 0; c < SK_ARRAY_LEN(caps); c++) {
		size_t n = load(caps[c].f, caps[c].n);
		assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
		/* Forwarded: hop limit not 255. */
		ip.hop_limit = 254;
		assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EHOPLIMIT);
		ip.hop_limit = 255;
		/* Every cut: short of the fixed part is truncated, inside an
		 * option is a bad option, between options a shorter message. */
		size_t next_opt = fixed[c];
		for (size_t k = 0; k < n; k++) {
			int r = nd_parse(buf, k, &ip, &m);
			if (k < fixed[c]) {
				assert_int_equal(r, WIRE_ETRUNC);
			} else if (k == next_opt) {
				assert_true(r == WIRE_OK || r == WIRE_EBADADDR);
				next_opt += (size_t)buf[k + 1] * 8;
			} else {
				assert_int_equal(r, WIRE_EOPT);
			}
		}
		buf[1] = 1; /* code */
		assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_ECODE);
		buf[1] = 0;
		/* A zero-length option invalidates the message. */
		buf[fixed[c] + 1] = 0;
		assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EOPT);
		/* An option longer than the message. */
		buf[fixed[c] + 1] = 200;
		assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EOPT);
	}
	/* Not ND. */
	size_t n = load(cap_echo_req, sizeof(cap_echo_req));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EUNSUP);
	assert_int_equal(nd_parse(buf, 0, &ip, &m), WIRE_ETRUNC);
}

static void test_options(void **state)
{
	(void)state;
	struct nd_opts o;
	/* Unknown options skipped; first of each kept; LLA must be 8 bytes. */
	uint8_t opt[48] = { 99, 1, 0, 0, 0, 0, 0, 0,
			    ND_OPT_SLLA, 1, 1, 2, 3, 4, 5, 6,
			    ND_OPT_SLLA, 1, 9, 9, 9, 9, 9, 9,
			    ND_OPT_MTU, 1, 0, 0, 0, 0, 0x05, 0x00,
			    ND_OPT_NONCE, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	assert_int_equal(nd_opts_parse(opt, sizeof(opt), &o), WIRE_OK);
	static const uint8_t first[6] = { 1, 2, 3, 4, 5, 6 };
	assert_memory_equal(o.slla, first, 6);
	assert_int_equal(o.mtu, 1280);
	assert_true(o.has_nonce);
	assert_int_equal(o.nonce[5], 6);
	opt[30] = 0x04; /* MTU 1279: not adopted, the message still good */
	opt[31] = 0xff;
	assert_int_equal(nd_opts_parse(opt, sizeof(opt), &o), WIRE_OK);
	assert_false(o.has_mtu);
	assert_int_equal(nd_opts_parse(opt, 0, &o), WIRE_OK);
	assert_int_equal(nd_opts_parse(opt, 1, &o), WIRE_EOPT);
	opt[9] = 2;
	assert_int_equal(nd_opts_parse(opt, sizeof(opt), &o), WIRE_EOPT);
	opt[9] = 1;
	opt[25] = 2; /* MTU of 16 bytes */
	assert_int_equal(nd_opts_parse(opt, sizeof(opt), &o), WIRE_EOPT);
	/* The walk is bounded: ND_MAX_OPTS pass, one more is over. */
	static uint8_t many[(ND_MAX_OPTS + 1) * 8];
	for (size_t i = 0; i <= ND_MAX_OPTS; i++) {
		many[8 * i] = 99;
		many[8 * i + 1] = 1;
	}
	assert_int_equal(nd_opts_parse(many, ND_MAX_OPTS * 8, &o), WIRE_OK);
	assert_int_equal(nd_opts_parse(many, sizeof(many), &o), WIRE_ELIMIT);
	/* More prefixes than we keep are counted, not kept. */
	static uint8_t pf[(ND_MAX_PREFIX + 2) * 32];
	for (size_t i = 0; i < ND_MAX_PREFIX + 2; i++) {
		uint8_t *p = pf + 32 * i;
		p[0] = ND_OPT_PREFIX;
		p[1] = 4;
		p[2] = 64;
		p[3] = ND_PREFIX_ONLINK;
		p[16] = 0x20;
		p[17] = (uint8_t)i;
	}
	assert_int_equal(nd_opts_parse(pf, sizeof(pf), &o), WIRE_OK);
	assert_int_equal(o.nprefix, ND_MAX_PREFIX);
	assert_int_equal(o.prefix_ignored, 2);
	assert_true(o.prefix[3].onlink);
	assert_false(o.prefix[3].autonomous);
	assert_int_equal(o.prefix[3].prefix.b[1], 3);
}

static void test_redirect(void **state)
{
	(void)state;
	struct nd_msg m;
	/* Linux's: the destination is on-link, so target == destination. */
	size_t n = load(cap_redirect, sizeof(cap_redirect));
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_OK);
	assert_int_equal(m.type, ND_REDIRECT);
	assert_true(ipv6_addr_eq(&m.target, &m.dest));
	static const uint8_t d3[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 3, [15] = 1 };
	assert_memory_equal(m.dest.b, d3, 16);
	assert_false(m.opts.has_tlla); /* r had not resolved it yet */
	ip.hop_limit = 64;
	assert_int_equal(nd_parse(buf, n, &ip, &m), WIRE_EHOPLIMIT);
	/* Built by hand: from r's link-local, a better router fe80::3 as the
	 * target for destination 2001:2:0:3::1, a target link-layer option. */
	struct ipv6_hdr h = { .hop_limit = 255, .next = IPV6_NH_ICMPV6 };
	h.src.b[0] = 0xfe, h.src.b[1] = 0x80, h.src.b[15] = 1;
	h.dst.b[0] = 0xfe, h.dst.b[1] = 0x80, h.dst.b[15] = 0x0a;
	uint8_t r[48] = { ND_REDIRECT, 0 };
	r[8] = 0xfe, r[9] = 0x80, r[23] = 3;
	r[24] = 0x20, r[25] = 0x01, r[27] = 2, r[29] = 3, r[39] = 1;
	r[40] = ND_OPT_TLLA, r[41] = 1, r[42] = 2, r[47] = 3;
	assert_int_equal(nd_parse(r, sizeof(r), &h, &m), WIRE_OK);
	assert_int_equal(m.type, ND_REDIRECT);
	assert_int_equal(m.target.b[15], 3);
	assert_int_equal(m.dest.b[15], 1);
	assert_true(m.opts.has_tlla);
	assert_int_equal(nd_parse(r, ND_REDIRECT_LEN - 1, &h, &m), WIRE_ETRUNC);
	/* Target off-link and not the destination. */
	r[8] = 0x20;
	assert_int_equal(nd_parse(r, sizeof(r), &h, &m), WIRE_EBADADDR);
	/* Target the destination itself (it is on-link): fine. */
	sk_memcpy(r + 8, r + 24, 16);
	assert_int_equal(nd_parse(r, sizeof(r), &h, &m), WIRE_OK);
	/* Multicast destination. */
	r[24] = 0xff;
	assert_int_equal(nd_parse(r, sizeof(r), &h, &m), WIRE_EBADADDR);
	r[24] = 0x20;
	/* Not from a link-local address. */
	h.src.b[0] = 0x20;
	assert_int_equal(nd_parse(r, sizeof(r), &h, &m), WIRE_EBADADDR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rs),
		cmocka_unit_test(test_ra),
		cmocka_unit_test(test_ns_na),
		cmocka_unit_test(test_dad_probe),
		cmocka_unit_test(test_common_checks),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_redirect),
	};
	return cmocka_run_group_tests_name("wire/nd", tests, NULL, NULL);
}
