/* icmp6.c — ICMPv6 (RFC 4443): echo, errors; MLDv2 reports (RFC 3810). */
#include "icmp6.h"
#include "csum.h"

/* Bytes of the upper-layer header an error must quote to name a TCP/UDP
 * flow: ports, and for TCP the sequence number. */
#define ICMP6_QUOTE_L4 8

static uint16_t icmp6_sum(const uint8_t *msg, size_t len, const struct ipv6_addr *src,
			  const struct ipv6_addr *dst)
{
	uint64_t ph = csum_pseudo6(src->b, dst->b, IPV6_NH_ICMPV6, (uint32_t)len);
	return csum_fold(csum_add(ph, msg, len));
}

void icmp6_seal(uint8_t *msg, size_t len, const struct ipv6_addr *src, const struct ipv6_addr *dst)
{
	sk_put_be16(msg + 2, 0);
	sk_put_be16(msg + 2, icmp6_sum(msg, len, src, dst));
}

int icmp6_parse(const uint8_t *buf, size_t len, const struct ipv6_addr *src,
		const struct ipv6_addr *dst, struct icmp6_hdr *h)
{
	/* RFC 4443 has a 4-byte header, but every message type defines at
	 * least 4 more bytes, and a message with fewer is of no use. */
	if (len < ICMP6_HLEN)
		return WIRE_ETRUNC;
	if (len > 0xffff)
		return WIRE_EBADLEN; /* a jumbogram: not supported */
	/* Unlike IPv4's, the ICMPv6 checksum covers a pseudo header
	 * (RFC 4443 2.3), so a message delivered to the wrong address fails. */
	if (WIRE_VERIFY_CSUM && icmp6_sum(buf, len, src, dst) != 0)
		return WIRE_ECSUM;
	h->type = buf[0];
	h->code = buf[1];
	h->csum = sk_get_be16(buf + 2);
	h->id = sk_get_be16(buf + 4);
	h->seq = sk_get_be16(buf + 6);
	h->rest = sk_get_be32(buf + 4);
	h->payload_off = ICMP6_HLEN;
	h->payload_len = (uint16_t)(len - ICMP6_HLEN);
	return WIRE_OK;
}

static bool icmp6_is_error(uint8_t type)
{
	return type < 128; /* RFC 4443 2.1: the high bit marks informational */
}

int icmp6_parse_error(const uint8_t *buf, size_t len, const struct icmp6_hdr *h,
		      struct icmp6_error *e)
{
	if (h->type < ICMP6_DEST_UNREACH || h->type > ICMP6_PARAM_PROBLEM)
		return WIRE_EUNSUP; /* informational, or an error type we do not know */
	if (len < ICMP6_HLEN)
		return WIRE_ETRUNC;
	const uint8_t *q = buf + ICMP6_HLEN;
	size_t qlen = len - ICMP6_HLEN;
	struct ipv6_hdr ip;
	int r = ipv6_parse_quoted(q, qlen, &ip);
	if (r != WIRE_OK && r != WIRE_EFRAG)
		return r;

	e->type = h->type;
	e->code = h->code;
	e->mtu = 0;
	e->pointer = 0;
	/* As the message says, even under IPV6_MIN_MTU: the consumer must
	 * not go below it (RFC 8201 4), and TCP ignores such a message
	 * outright (no IPv6 link is that small, RFC 8200 5), which it could
	 * not tell apart from an honest 1280 if the value were raised here. */
	if (h->type == ICMP6_PACKET_TOO_BIG)
		e->mtu = h->rest;
	if (h->type == ICMP6_PARAM_PROBLEM)
		e->pointer = h->rest;
	e->src = ip.src;
	e->dst = ip.dst;
	e->proto = ip.proto;
	e->sport = e->dport = 0;
	e->tcp_seq = 0;
	if (r == WIRE_EFRAG)
		return WIRE_EFRAG; /* a later fragment: no ports to find the flow by */
	if (ip.proto == IPV6_NH_TCP || ip.proto == IPV6_NH_UDP) {
		if (ip.l4_len < ICMP6_QUOTE_L4)
			return WIRE_ETRUNC;
		const uint8_t *l4 = q + ip.l4_off;
		e->sport = sk_get_be16(l4);
		e->dport = sk_get_be16(l4 + 2);
		if (ip.proto == IPV6_NH_TCP)
			e->tcp_seq = sk_get_be32(l4 + 4);
	}
	return WIRE_OK;
}

size_t icmp6_emit_echo_reply(uint8_t *buf, size_t cap, const uint8_t *req, size_t req_len,
			     const struct ipv6_addr *src, const struct ipv6_addr *dst)
{
	if (req_len < ICMP6_HLEN || req_len > 0xffff || cap < req_len)
		return 0;
	if (req[0] != ICMP6_ECHO_REQUEST)
		return 0; /* never answer anything but a request */
	if (buf != req)
		sk_memmove(buf, req, req_len);
	buf[0] = ICMP6_ECHO_REPLY;
	buf[1] = 0;
	/* Recomputed, not updated: the addresses change too (a reply to a
	 * multicast request comes from a unicast address). */
	icmp6_seal(buf, req_len, src, dst);
	return req_len;
}

size_t icmp6_emit_echo_request(uint8_t *buf, size_t cap, uint16_t id, uint16_t seq,
			       const uint8_t *data, size_t len, const struct ipv6_addr *src,
			       const struct ipv6_addr *dst)
{
	if (len > 0xffff - ICMP6_HLEN || cap < ICMP6_HLEN + len)
		return 0;
	if (len)
		sk_memmove(buf + ICMP6_HLEN, data, len);
	buf[0] = ICMP6_ECHO_REQUEST;
	buf[1] = 0;
	sk_put_be16(buf + 4, id);
	sk_put_be16(buf + 6, seq);
	icmp6_seal(buf, ICMP6_HLEN + len, src, dst);
	return ICMP6_HLEN + len;
}

bool icmp6_error_allowed(const uint8_t *orig, const struct ipv6_hdr *h, bool link_mcast,
			 uint8_t type, uint8_t code)
{
	/* An error about an error (or a redirect) could loop between two
	 * hosts forever (RFC 4443 2.4(e.1)). */
	if (h->proto == IPV6_NH_ICMPV6 && h->l4_len >= 1) {
		uint8_t t = orig[h->l4_off];
		if (icmp6_is_error(t) || t == 137 /* redirect */)
			return false;
	}
	/* There is no one to tell (e.6): a packet from ::, a group or ::1. */
	if (!ipv6_is_unicast(&h->src))
		return false;
	/* A packet every member of a group got would make every member
	 * answer (e.3, e.4); the two exceptions carry news the sender needs. */
	bool exempt = type == ICMP6_PACKET_TOO_BIG ||
		      (type == ICMP6_PARAM_PROBLEM && code == IPV6_PP_OPTION);
	if ((ipv6_is_multicast(&h->dst) || link_mcast) && !exempt)
		return false;
	return true;
}

size_t icmp6_emit_error(uint8_t *buf, size_t cap, uint8_t type, uint8_t code, uint32_t rest,
			const uint8_t *orig, size_t orig_len, const struct ipv6_addr *src,
			const struct ipv6_addr *dst)
{
	if (orig_len < IPV6_HLEN || orig[0] >> 4 != 6)
		return 0;
	/* Quote no further than the packet's own end (link padding is not
	 * data), and no further than keeps the error within 1280 bytes, so it
	 * reaches the sender over any path (RFC 4443 2.4(c)). */
	size_t end = SK_MIN(orig_len, (size_t)IPV6_HLEN + sk_get_be16(orig + 4));
	size_t qlen = SK_MIN(end, (size_t)ICMP6_ERROR_QUOTE_MAX);
	if (cap < ICMP6_HLEN + qlen)
		return 0;
	/* Addresses first (they may point into orig, which may sit in buf),
	 * then the quote, then the header. */
	struct ipv6_addr s = *src, d = *dst;
	sk_memmove(buf + ICMP6_HLEN, orig, qlen);
	buf[0] = type;
	buf[1] = code;
	sk_put_be32(buf + 4, rest);
	icmp6_seal(buf, ICMP6_HLEN + qlen, &s, &d);
	return ICMP6_HLEN + qlen;
}

size_t mld2_emit_report(uint8_t *buf, size_t cap, const struct ipv6_addr *src,
			const struct ipv6_addr *groups, size_t n, uint8_t rtype)
{
	if (n == 0 || n > MLD2_REPORT_MAX)
		return 0;
	size_t mlen = ICMP6_HLEN + n * MLD2_RECORD_LEN;
	size_t total = IPV6_HLEN + IPV6_HBH_RA_LEN + mlen;
	if (cap < total)
		return 0;
	struct ipv6_hdr ip = {
		.next = IPV6_NH_HOPOPTS,
		.hop_limit = 1, /* RFC 3810 5: link-local, never forwarded */
		.src = *src,
		.dst = ipv6_mld2_routers,
	};
	ipv6_emit(buf, cap, &ip, (uint16_t)(IPV6_HBH_RA_LEN + mlen));
	/* Router alert: routers snooping MLD must look at it even though it
	 * is not addressed to them (RFC 3810 5, RFC 2711). */
	ipv6_emit_hbh_router_alert(buf + IPV6_HLEN, cap - IPV6_HLEN, IPV6_NH_ICMPV6, 0);
	uint8_t *m = buf + IPV6_HLEN + IPV6_HBH_RA_LEN;
	m[0] = ICMP6_MLD2_REPORT;
	m[1] = 0;
	sk_put_be16(m + 4, 0); /* reserved */
	sk_put_be16(m + 6, (uint16_t)n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *r = m + ICMP6_HLEN + i * MLD2_RECORD_LEN;
		r[0] = rtype;
		r[1] = 0;              /* no auxiliary data */
		sk_put_be16(r + 2, 0); /* no sources */
		sk_memcpy(r + 4, groups[i].b, IPV6_ADDR_LEN);
	}
	icmp6_seal(m, mlen, src, &ipv6_mld2_routers);
	return total;
}
