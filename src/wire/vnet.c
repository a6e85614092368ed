/* vnet.c — virtio_net_hdr checks and TCP super-frame cutting (vnet.h). */
#include "vnet.h"

#include "csum.h"
#include "eth.h"
#include "ipv4.h"
#include "tcp.h"

#define IPV6_HLEN 40
#define NH_TCP 6

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void vnet_hdr_read(const uint8_t *p, struct vnet_hdr *h)
{
	h->flags = p[0];
	h->gso_type = p[1];
	h->hdr_len = get_le16(p + 2);
	h->gso_size = get_le16(p + 4);
	h->csum_start = get_le16(p + 6);
	h->csum_offset = get_le16(p + 8);
}

void vnet_hdr_write(uint8_t *p, const struct vnet_hdr *h)
{
	p[0] = h->flags;
	p[1] = h->gso_type;
	put_le16(p + 2, h->hdr_len);
	put_le16(p + 4, h->gso_size);
	put_le16(p + 6, h->csum_start);
	put_le16(p + 8, h->csum_offset);
}

/* The pseudo header's sum (addresses and protocol, no length) of the IP
 * header at ip. */
static uint64_t pseudo_sum(const uint8_t *ip, bool ipv6)
{
	if (ipv6)
		return csum_pseudo6(ip + 8, ip + 24, NH_TCP, 0);
	return csum_pseudo4(sk_get_be32(ip + 12), sk_get_be32(ip + 16), IPV4_PROTO_TCP, 0);
}

/* The IP and TCP headers of a GSO frame: fills l3_off, l4_off, hlen,
 * payload, ipv6; returns the end of the IP datagram (bytes past it are
 * link padding), or 0 if the headers are not a TCP segment we can cut. */
static size_t parse_tcp_frame(const uint8_t *frame, size_t len, struct vnet_frame *f)
{
	size_t l3 = ETH_HLEN, l4, end;
	uint16_t type;

	if (len < ETH_HLEN)
		return 0;
	type = sk_get_be16(frame + 12);
	if (type == ETH_TYPE_VLAN) {
		if (len < ETH_VLAN_HLEN)
			return 0;
		type = sk_get_be16(frame + 16);
		l3 = ETH_VLAN_HLEN;
	}
	if (type == ETH_TYPE_IPV4) {
		const uint8_t *ip = frame + l3;
		size_t ihl, tot;
		if (len < l3 + IPV4_HLEN || (ip[0] >> 4) != 4)
			return 0;
		ihl = (size_t)(ip[0] & 15) * 4;
		tot = sk_get_be16(ip + 2);
		if (ihl < IPV4_HLEN || tot < ihl || l3 + tot > len || ip[9] != IPV4_PROTO_TCP ||
		    (sk_get_be16(ip + 6) & (IPV4_FLAG_MF | IPV4_FRAG_OFF_MASK)))
			return 0;
		f->ipv6 = false;
		l4 = l3 + ihl;
		end = l3 + tot;
	} else if (type == ETH_TYPE_IPV6) {
		const uint8_t *ip = frame + l3;
		size_t plen;
		if (len < l3 + IPV6_HLEN || (ip[0] >> 4) != 6 || ip[6] != NH_TCP)
			return 0;
		plen = sk_get_be16(ip + 4);
		if (plen == 0 || l3 + IPV6_HLEN + plen > len)
			return 0; /* 0: a jumbogram, which no MTU-sized link carries */
		f->ipv6 = true;
		l4 = l3 + IPV6_HLEN;
		end = l4 + plen;
	} else {
		return 0;
	}
	if (end < l4 + TCP_HLEN)
		return 0;
	size_t thl = (size_t)(frame[l4 + 12] >> 4) * 4;
	if (thl < TCP_HLEN || l4 + thl > end)
		return 0;
	f->l3_off = (uint16_t)l3;
	f->l4_off = (uint16_t)l4;
	f->hlen = (uint16_t)(l4 + thl);
	f->payload = (uint32_t)(end - l4 - thl);
	return end;
}

int vnet_parse(const struct vnet_hdr *h, const uint8_t *frame, size_t len, size_t seg_cap,
	       struct vnet_frame *f)
{
	uint8_t gso = h->gso_type & (uint8_t)~VNET_GSO_ECN;
	bool needs = (h->flags & VNET_F_NEEDS_CSUM) != 0;

	sk_memset(f, 0, sizeof(*f));
	f->nsegs = 1;
	if (h->flags & ~(VNET_F_NEEDS_CSUM | VNET_F_DATA_VALID))
		return WIRE_EUNSUP;
	if (h->hdr_len > len)
		return WIRE_EBADLEN;
	if (needs && (h->csum_start < ETH_HLEN ||
		      (size_t)h->csum_start + h->csum_offset + 2 > len))
		return WIRE_EBADLEN;
	f->csum_ok = needs || (h->flags & VNET_F_DATA_VALID);
	if (gso == VNET_GSO_NONE) {
		if (h->gso_type != VNET_GSO_NONE)
			return WIRE_EUNSUP; /* ECN without a GSO type */
		return WIRE_OK;
	}
	if (gso != VNET_GSO_TCPV4 && gso != VNET_GSO_TCPV6)
		return WIRE_EUNSUP;
	if (h->gso_size == 0)
		return WIRE_EBADLEN;
	size_t end = parse_tcp_frame(frame, len, f);
	if (end == 0)
		return WIRE_EUNSUP;
	if (f->ipv6 != (gso == VNET_GSO_TCPV6))
		return WIRE_EVERSION;
	if (needs && (h->csum_start != f->l4_off || h->csum_offset != 16))
		return WIRE_EBADLEN;
	if (f->payload == 0)
		return WIRE_EBADLEN;
	f->gso = true;
	f->mss = h->gso_size;
	f->nsegs = (f->payload + f->mss - 1u) / f->mss;
	if (f->nsegs > VNET_MAX_SEGS)
		return WIRE_ELIMIT;
	if ((size_t)f->hlen + SK_MIN(f->payload, (uint32_t)f->mss) > seg_cap)
		return WIRE_EBADLEN;
	if (!f->csum_ok) {
		/* Nobody vouched for these bytes, and the segments get checksums
		 * of their own below: check the super-frame's first. */
		uint32_t tl = (uint32_t)(end - f->l4_off);
		uint64_t s = pseudo_sum(frame + f->l3_off, f->ipv6) + tl;
		if (WIRE_VERIFY_CSUM && csum_fold(csum_add(s, frame + f->l4_off, tl)) != 0)
			return WIRE_ECSUM;
	}
	f->csum_ok = true; /* every segment's checksum is computed by vnet_seg */
	return WIRE_OK;
}

size_t vnet_seg(const struct vnet_frame *f, const uint8_t *frame, uint32_t i, uint8_t *out,
		size_t cap)
{
	if (!f->gso || i >= f->nsegs)
		return 0;
	uint32_t off = i * f->mss;
	uint32_t plen = SK_MIN(f->mss, f->payload - off);
	size_t seg = (size_t)f->hlen + plen;
	if (seg > cap)
		return 0;
	sk_memcpy(out, frame, f->hlen);
	sk_memcpy(out + f->hlen, frame + f->hlen + off, plen);

	uint8_t *ip = out + f->l3_off, *th = out + f->l4_off;
	uint16_t l4len = (uint16_t)(seg - f->l4_off);
	if (f->ipv6) {
		sk_put_be16(ip + 4, l4len);
	} else {
		size_t ihl = (size_t)(f->l4_off - f->l3_off);
		sk_put_be16(ip + 2, (uint16_t)(ihl + l4len));
		sk_put_be16(ip + 4, (uint16_t)(sk_get_be16(ip + 4) + i));
		sk_put_be16(ip + 10, 0);
		sk_put_be16(ip + 10, csum(ip, ihl));
	}
	sk_put_be32(th + 4, sk_get_be32(th + 4) + off);
	uint8_t fl = th[13];
	if (i + 1 < f->nsegs)
		fl &= (uint8_t)~(TCP_FIN | TCP_PSH);
	if (i > 0)
		fl &= (uint8_t)~TCP_CWR;
	th[13] = fl;
	sk_put_be16(th + 16, 0);
	uint64_t s = pseudo_sum(ip, f->ipv6) + l4len;
	sk_put_be16(th + 16, csum_fold(csum_add(s, th, l4len)));
	return seg;
}

int vnet_csum_finish(uint8_t *frame, size_t len, uint16_t csum_start, uint16_t csum_offset)
{
	if ((size_t)csum_start + csum_offset + 2 > len)
		return WIRE_EBADLEN;
	uint16_t c = csum_fold(csum_add(0, frame + csum_start, len - csum_start));
	sk_put_be16(frame + csum_start + csum_offset, c);
	return WIRE_OK;
}

uint32_t vnet_tx_segs(const struct vnet_hdr *h, size_t frame_len)
{
	if ((h->gso_type & (uint8_t)~VNET_GSO_ECN) == VNET_GSO_NONE || h->gso_size == 0 ||
	    frame_len <= h->hdr_len)
		return 1;
	return (uint32_t)((frame_len - h->hdr_len + h->gso_size - 1) / h->gso_size);
}
