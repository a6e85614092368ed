/* udp.c — UDP (RFC 768). */
#include "udp.h"
#include "csum.h"
#include "ipv4.h"
#include "ipv6.h"

/* Both families; pseudo: the pseudo header's sum without the length (the
 * same for both below 64 KiB, as in tcp.c).  v6: a zero checksum field is
 * not "none" but invalid (RFC 8200 8.1). */
static int udp_parse_ps(const uint8_t *buf, size_t len, uint64_t pseudo, bool v6, bool verify,
			struct udp_hdr *h)
{
	if (len < UDP_HLEN)
		return WIRE_ETRUNC;
	size_t ulen = sk_get_be16(buf + 4);
	if (ulen < UDP_HLEN)
		return WIRE_EBADLEN;
	if (ulen > len)
		return WIRE_ETRUNC;
	h->sport = sk_get_be16(buf);
	h->dport = sk_get_be16(buf + 2);
	h->len = (uint16_t)ulen;
	h->csum = sk_get_be16(buf + 6);
	h->payload_off = UDP_HLEN;
	h->payload_len = (uint16_t)(ulen - UDP_HLEN);
	/* A zero field means the sender computed no checksum (RFC 768).  The
	 * sum covers the UDP length, not the buffer: bytes beyond it are not
	 * part of the datagram. */
	if (!verify)
		return WIRE_OK;
	if (v6 && h->csum == 0)
		return WIRE_ECSUM;
	if (WIRE_VERIFY_CSUM && h->csum != 0 && csum_fold(csum_add(pseudo + ulen, buf, ulen)) != 0)
		return WIRE_ECSUM;
	return WIRE_OK;
}

int udp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst, struct udp_hdr *h)
{
	return udp_parse_ps(buf, len, csum_pseudo4(src, dst, IPV4_PROTO_UDP, 0), false, true, h);
}

int udp_parse6(const uint8_t *buf, size_t len, const uint8_t src[16], const uint8_t dst[16],
	       struct udp_hdr *h)
{
	return udp_parse_ps(buf, len, csum_pseudo6(src, dst, IPV6_NH_UDP, 0), true, true, h);
}

int udp_parse_nocsum(const uint8_t *buf, size_t len, struct udp_hdr *h)
{
	return udp_parse_ps(buf, len, 0, false, false, h);
}

static size_t udp_emit_ps(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport,
			  uint64_t pseudo, uint16_t payload_len)
{
	size_t ulen = (size_t)UDP_HLEN + payload_len;
	if (ulen > 0xffff || cap < ulen)
		return 0;
	sk_put_be16(buf, sport);
	sk_put_be16(buf + 2, dport);
	sk_put_be16(buf + 4, (uint16_t)ulen);
	sk_put_be16(buf + 6, 0);
	uint16_t c = csum_fold(csum_add(pseudo + ulen, buf, ulen));
	/* 0 on the wire means "no checksum"; send its one's-complement twin. */
	sk_put_be16(buf + 6, c ? c : 0xffff);
	return ulen;
}

size_t udp_emit(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport, uint32_t src,
		uint32_t dst, uint16_t payload_len)
{
	return udp_emit_ps(buf, cap, sport, dport, csum_pseudo4(src, dst, IPV4_PROTO_UDP, 0),
			   payload_len);
}

size_t udp_emit6(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport, const uint8_t src[16],
		 const uint8_t dst[16], uint16_t payload_len)
{
	return udp_emit_ps(buf, cap, sport, dport, csum_pseudo6(src, dst, IPV6_NH_UDP, 0),
			   payload_len);
}
