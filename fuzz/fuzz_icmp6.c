/* fuzz_icmp6.c — whole IPv6 packets through ipv6_parse, then icmp6_parse,
 * icmp6_parse_error and nd_parse on what they carry; the emitters fed with
 * the same bytes (echo reply, error quoting the input, ND rebuilt from the
 * parse) must produce messages that parse back.  Checksums are not
 * verified (SK_FUZZING): the emitters' own sums are checked instead.
 * Seeds: ND, MLD, echo and error packets Linux sent (fuzz/seeds/icmp6). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/nd.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool sum_ok(const uint8_t *m, size_t len, const struct ipv6_addr *s,
		const struct ipv6_addr *d)
{
	return csum_fold(csum_add(csum_pseudo6(s->b, d->b, IPV6_NH_ICMPV6, (uint32_t)len), m,
			len)) == 0;
}

static void fuzz_nd(const uint8_t *m, size_t len, const struct ipv6_hdr *ip)
{
	struct nd_msg nd;
	int r = nd_parse(m, len, ip, &nd);
	CHECK(r <= 0 && r > -WIRE_NERR);
	if (r != WIRE_OK)
		return;
	CHECK(ip->hop_limit == ND_HOP_LIMIT && m[1] == 0);
	CHECK(nd.opts.nprefix <= ND_MAX_PREFIX);
	for (unsigned i = 0; i < nd.opts.nprefix; i++)
		CHECK(nd.opts.prefix[i].len <= 128 &&
		      nd.opts.prefix[i].preferred <= nd.opts.prefix[i].valid);
	uint8_t out[64];
	struct nd_msg b;
	size_t n = 0;
	if (nd.type == ND_NS) {
		CHECK(!ipv6_is_multicast(&nd.target));
		n = nd_emit_ns(out, sizeof(out), &nd.target, nd.opts.has_slla ? nd.opts.slla : NULL,
			       nd.opts.has_nonce ? nd.opts.nonce : NULL, &ip->src, &ip->dst);
	} else if (nd.type == ND_NA) {
		CHECK(!ipv6_is_multicast(&nd.target));
		n = nd_emit_na(out, sizeof(out), &nd.target, nd.na_flags,
			       nd.opts.has_tlla ? nd.opts.tlla : NULL, &ip->src, &ip->dst);
	} else if (nd.type == ND_RS) {
		n = nd_emit_rs(out, sizeof(out), nd.opts.has_slla ? nd.opts.slla : NULL, &ip->src,
				&ip->dst);
	}
	if (n) {
		CHECK(sum_ok(out, n, &ip->src, &ip->dst));
		CHECK(nd_parse(out, n, ip, &b) == WIRE_OK);
		CHECK(b.type == nd.type && ipv6_addr_eq(&b.target, &nd.target) &&
		      b.na_flags == nd.na_flags);
		/* An NA is rebuilt with its target address only. */
		if (nd.type == ND_NA)
			CHECK(b.opts.has_tlla == nd.opts.has_tlla && !b.opts.has_slla);
		else
			CHECK(b.opts.has_slla == nd.opts.has_slla);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct ipv6_hdr ip;
	int r = ipv6_parse(buf, size, &ip);
	if (r == WIRE_OK && ip.proto == IPV6_NH_ICMPV6) {
		const uint8_t *m = buf + ip.l4_off;
		size_t len = ip.l4_len;
		struct icmp6_hdr h;
		if (icmp6_parse(m, len, &ip.src, &ip.dst, &h) == WIRE_OK) {
			CHECK(h.payload_off + h.payload_len == len);
			struct icmp6_error e;
			r = icmp6_parse_error(m, len, &h, &e);
			CHECK(r == WIRE_OK || r == WIRE_EUNSUP || r == WIRE_ETRUNC ||
					r == WIRE_EVERSION ||
			      r == WIRE_EFRAG || r == WIRE_ELIMIT || r == WIRE_EEXT);
			if (r == WIRE_OK && h.type == ICMP6_PACKET_TOO_BIG)
				CHECK(e.mtu == h.rest); /* as sent: TCP decides */
			uint8_t *out = malloc(len);
			if (out) {
				size_t k = icmp6_emit_echo_reply(out, len, m, len, &ip.dst,
						&ip.src);
				CHECK(k == (h.type == ICMP6_ECHO_REQUEST ? len : 0));
				if (k) {
					CHECK(sum_ok(out, k, &ip.dst, &ip.src));
					CHECK(memcmp(out + 4, m + 4, len - 4) == 0);
				}
				free(out);
			}
			fuzz_nd(m, len, &ip);
		}
		(void)icmp6_error_allowed(buf, &ip, false, ICMP6_DEST_UNREACH, 0);
	}
	/* The input as the packet an error is about. */
	static uint8_t err[IPV6_MIN_MTU];
	struct ipv6_addr us = { { 0x20, 0x01, 0, 2, [15] = 1 } }, them = { { 0x20, 0x01, 0, 2,
			[15] = 2 } };
	size_t k = icmp6_emit_error(err, sizeof(err), ICMP6_PARAM_PROBLEM, 0, 6, buf, size, &us,
			&them);
	if (k) {
		CHECK(k <= IPV6_MIN_MTU - IPV6_HLEN && k >= ICMP6_HLEN + IPV6_HLEN);
		CHECK(memcmp(err + ICMP6_HLEN, buf, k - ICMP6_HLEN) == 0);
		CHECK(sum_ok(err, k, &us, &them));
		struct icmp6_hdr h;
		struct icmp6_error e;
		CHECK(icmp6_parse(err, k, &us, &them, &h) == WIRE_OK);
		r = icmp6_parse_error(err, k, &h, &e);
		if (r == WIRE_OK)
			CHECK(e.pointer == 6 && memcmp(e.src.b, buf + 8, 16) == 0);
	}
	free(buf);
	return 0;
}
