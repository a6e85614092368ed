/* icmp.c — ICMPv4 (RFC 792): echo, and the errors a host must understand. */
#include "icmp.h"
#include "csum.h"
#include "ipv4.h"

/* RFC 792: an error quotes the IP header plus the first 64 bits of data. */
#define ICMP_QUOTE_DATA 8

int icmp_parse(const uint8_t *buf, size_t len, struct icmp_hdr *h)
{
	if (len < ICMP_HLEN)
		return WIRE_ETRUNC;
	if (len > 0xffff)
		return WIRE_EBADLEN; /* cannot come out of an IPv4 datagram */
	if (WIRE_VERIFY_CSUM && csum(buf, len) != 0)
		return WIRE_ECSUM;
	h->type = buf[0];
	h->code = buf[1];
	h->csum = sk_get_be16(buf + 2);
	h->id = sk_get_be16(buf + 4);
	h->seq = sk_get_be16(buf + 6);
	h->rest = sk_get_be32(buf + 4);
	h->payload_off = ICMP_HLEN;
	h->payload_len = (uint16_t)(len - ICMP_HLEN);
	return WIRE_OK;
}

static bool icmp_is_error(uint8_t type)
{
	return type == ICMP_DEST_UNREACH || type == ICMP_TIME_EXCEEDED || type == ICMP_PARAM_PROBLEM;
}

int icmp_parse_error(const uint8_t *buf, size_t len, const struct icmp_hdr *h, struct icmp_error *e)
{
	if (!icmp_is_error(h->type))
		return WIRE_EUNSUP;
	if (len < ICMP_HLEN + IPV4_HLEN)
		return WIRE_ETRUNC;
	const uint8_t *q = buf + ICMP_HLEN;
	size_t qlen = len - ICMP_HLEN;
	if (q[0] >> 4 != 4)
		return WIRE_EVERSION;
	/* The quoted IHL comes from whoever sent the error: trust it only
	 * after checking it against the bytes we actually have.  The quoted
	 * total length is not used at all (routers may have cut the quote). */
	size_t qhl = (size_t)(q[0] & 0x0f) * 4;
	if (qhl < IPV4_HLEN)
		return WIRE_EBADLEN;
	if (qhl > qlen)
		return WIRE_ETRUNC;

	e->type = h->type;
	e->code = h->code;
	e->mtu = 0;
	if (h->type == ICMP_DEST_UNREACH && h->code == ICMP_UNREACH_FRAG_NEEDED)
		e->mtu = (uint16_t)h->rest; /* RFC 1191: low 16 bits of word 2 */
	e->proto = q[9];
	e->src = sk_get_be32(q + 12);
	e->dst = sk_get_be32(q + 16);
	e->sport = e->dport = 0;
	e->tcp_seq = 0;

	/* Ports exist only in a first fragment; skiff sends no fragments, so
	 * a quote of a later one is not about any flow of ours anyway. */
	if ((sk_get_be16(q + 6) & IPV4_FRAG_OFF_MASK) != 0)
		return WIRE_OK;
	const uint8_t *l4 = q + qhl;
	size_t l4len = qlen - qhl;
	if (e->proto == IPV4_PROTO_TCP || e->proto == IPV4_PROTO_UDP) {
		/* RFC 792 promises 8 bytes: ports, and for TCP the sequence. */
		if (l4len < ICMP_QUOTE_DATA)
			return WIRE_ETRUNC;
		e->sport = sk_get_be16(l4);
		e->dport = sk_get_be16(l4 + 2);
		if (e->proto == IPV4_PROTO_TCP)
			e->tcp_seq = sk_get_be32(l4 + 4);
	}
	return WIRE_OK;
}

size_t icmp_emit_echo_reply(uint8_t *buf, size_t cap, const uint8_t *req, size_t req_len)
{
	if (req_len < ICMP_HLEN || req_len > 0xffff || cap < req_len)
		return 0;
	if (req[0] != ICMP_ECHO_REQUEST)
		return 0; /* never answer anything but a request */
	if (buf != req)
		sk_memmove(buf, req, req_len);
	buf[0] = ICMP_ECHO_REPLY;
	buf[1] = 0;
	/* A full recomputation rather than an RFC 1624 update: the request's
	 * checksum may not have been verified (offload, fuzzing), and a reply
	 * must not inherit a bad one. */
	sk_put_be16(buf + 2, 0);
	sk_put_be16(buf + 2, csum(buf, req_len));
	return req_len;
}

size_t icmp_emit_echo_request(uint8_t *buf, size_t cap, uint16_t id, uint16_t seq,
			      const uint8_t *payload, size_t len)
{
	if (len > 0xffff - ICMP_HLEN || cap < ICMP_HLEN + len)
		return 0;
	if (len)
		sk_memmove(buf + ICMP_HLEN, payload, len); /* payload may already be in place */
	buf[0] = ICMP_ECHO_REQUEST;
	buf[1] = 0;
	sk_put_be16(buf + 2, 0);
	sk_put_be16(buf + 4, id);
	sk_put_be16(buf + 6, seq);
	sk_put_be16(buf + 2, csum(buf, ICMP_HLEN + len));
	return ICMP_HLEN + len;
}

size_t icmp_emit_error(uint8_t *buf, size_t cap, uint8_t type, uint8_t code, uint32_t rest,
		       const uint8_t *orig, size_t orig_len)
{
	if (orig_len < IPV4_HLEN)
		return 0;
	size_t ohl = (size_t)(orig[0] & 0x0f) * 4;
	if (orig[0] >> 4 != 4 || ohl < IPV4_HLEN || ohl > orig_len)
		return 0;
	/* Quote no further than the datagram's own end: bytes past its total
	 * length are link padding, not data. */
	size_t end = orig_len;
	size_t total = sk_get_be16(orig + 2);
	if (total >= ohl && total < end)
		end = total;
	size_t qlen = ohl + SK_MIN(end - ohl, (size_t)ICMP_QUOTE_DATA);
	if (cap < ICMP_HLEN + qlen)
		return 0;
	/* Quote first, header second: orig may sit inside buf (an error
	 * built in the buffer the offending packet arrived in). */
	sk_memmove(buf + ICMP_HLEN, orig, qlen);
	buf[0] = type;
	buf[1] = code;
	sk_put_be16(buf + 2, 0);
	sk_put_be32(buf + 4, rest);
	sk_put_be16(buf + 2, csum(buf, ICMP_HLEN + qlen));
	return ICMP_HLEN + qlen;
}
