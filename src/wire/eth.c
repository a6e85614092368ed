/* eth.c — Ethernet II header, skipping at most one 802.1Q tag. */
#include "eth.h"

/* EtherType values below this are 802.3 length fields (IEEE 802.3 3.2.6). */
#define ETH_TYPE_MIN 0x0600

int eth_parse(const uint8_t *buf, size_t len, struct eth_hdr *h)
{
	if (len < ETH_HLEN)
		return WIRE_ETRUNC;
	sk_memcpy(h->dst, buf, SK_MAC_LEN);
	sk_memcpy(h->src, buf + 6, SK_MAC_LEN);
	h->type = sk_get_be16(buf + 12);
	h->vlan_tci = 0;
	h->has_vlan = false;
	h->hlen = ETH_HLEN;

	if (h->type == ETH_TYPE_VLAN) {
		if (len < ETH_VLAN_HLEN)
			return WIRE_ETRUNC;
		h->vlan_tci = sk_get_be16(buf + 14);
		h->type = sk_get_be16(buf + 16);
		h->has_vlan = true;
		h->hlen = ETH_VLAN_HLEN;
		/* Q-in-Q: we strip one tag only; a second one means a network
		 * setup we were not configured for. */
		if (h->type == ETH_TYPE_VLAN)
			return WIRE_EUNSUP;
	}
	if (h->type < ETH_TYPE_MIN)
		return WIRE_EUNSUP; /* 802.3 + LLC (STP, ...): not for us */
	return WIRE_OK;
}

size_t eth_emit(uint8_t *buf, size_t cap, const uint8_t dst[SK_MAC_LEN],
		const uint8_t src[SK_MAC_LEN], uint16_t type)
{
	if (cap < ETH_HLEN)
		return 0;
	/* Copy both first: a reply built in place passes addresses that point
	 * into buf itself (swap of dst and src). */
	uint8_t d[SK_MAC_LEN], s[SK_MAC_LEN];
	sk_memcpy(d, dst, SK_MAC_LEN);
	sk_memcpy(s, src, SK_MAC_LEN);
	sk_memcpy(buf, d, SK_MAC_LEN);
	sk_memcpy(buf + 6, s, SK_MAC_LEN);
	sk_put_be16(buf + 12, type);
	return ETH_HLEN;
}

size_t eth_pad(uint8_t *frame, size_t len, size_t cap)
{
	if (len >= ETH_MIN_FRAME)
		return len;
	if (cap < ETH_MIN_FRAME)
		return 0;
	/* Zero the pad: stale buffer bytes would leak old packet data. */
	sk_memset(frame + len, 0, ETH_MIN_FRAME - len);
	return ETH_MIN_FRAME;
}
