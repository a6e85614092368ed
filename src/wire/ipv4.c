/* ipv4.c — IPv4 header (RFC 791). */
#include "ipv4.h"
#include "csum.h"

/* Source addresses no host may send from (RFC 1122 3.2.1.3): a group
 * address, or the limited broadcast. */
static bool ipv4_bad_src(uint32_t a)
{
	return (a >> 28) == 0xe || a == 0xffffffffu;
}

int ipv4_parse(const uint8_t *buf, size_t len, struct ipv4_hdr *h)
{
	if (len < IPV4_HLEN)
		return WIRE_ETRUNC;
	if (buf[0] >> 4 != 4)
		return WIRE_EVERSION;
	size_t hlen = (size_t)(buf[0] & 0x0f) * 4;
	size_t total = sk_get_be16(buf + 2);
	if (hlen < IPV4_HLEN || total < hlen)
		return WIRE_EBADLEN;
	if (total > len)
		return WIRE_ETRUNC; /* also covers hlen > len, since hlen <= total */
	if (WIRE_VERIFY_CSUM && csum(buf, hlen) != 0)
		return WIRE_ECSUM;

	h->hlen = (uint8_t)hlen;
	h->tos = buf[1];
	h->total_len = (uint16_t)total;
	h->id = sk_get_be16(buf + 4);
	h->frag = sk_get_be16(buf + 6);
	h->ttl = buf[8];
	h->proto = buf[9];
	h->src = sk_get_be32(buf + 12);
	h->dst = sk_get_be32(buf + 16);
	h->payload_off = (uint16_t)hlen;
	h->payload_len = (uint16_t)(total - hlen);

	if (ipv4_bad_src(h->src))
		return WIRE_EBADADDR;
	if (ipv4_is_fragment(h))
		return WIRE_EFRAG;
	return WIRE_OK;
}

size_t ipv4_emit(uint8_t *buf, size_t cap, const struct ipv4_hdr *h, uint16_t payload_len)
{
	size_t total = (size_t)IPV4_HLEN + payload_len;
	if (cap < IPV4_HLEN || total > 0xffff)
		return 0;
	buf[0] = 0x45; /* version 4, IHL 5: we never send options */
	buf[1] = h->tos;
	sk_put_be16(buf + 2, (uint16_t)total);
	sk_put_be16(buf + 4, h->id);
	sk_put_be16(buf + 6, h->frag);
	buf[8] = h->ttl;
	buf[9] = h->proto;
	sk_put_be16(buf + 10, 0);
	sk_put_be32(buf + 12, h->src);
	sk_put_be32(buf + 16, h->dst);
	sk_put_be16(buf + 10, csum(buf, IPV4_HLEN));
	return IPV4_HLEN;
}
