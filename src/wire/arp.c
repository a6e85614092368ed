/* arp.c — ARP for IPv4 over Ethernet (RFC 826). */
#include "arp.h"
#include "eth.h"

#define ARP_HTYPE_ETH 1

int arp_parse(const uint8_t *buf, size_t len, struct arp_pkt *a)
{
	if (len < ARP_LEN)
		return WIRE_ETRUNC; /* bytes past 28 are Ethernet padding */
	if (sk_get_be16(buf) != ARP_HTYPE_ETH || sk_get_be16(buf + 2) != ETH_TYPE_IPV4 ||
	    buf[4] != SK_MAC_LEN || buf[5] != 4)
		return WIRE_EVERSION;
	a->op = sk_get_be16(buf + 6);
	sk_memcpy(a->sha, buf + 8, SK_MAC_LEN);
	a->spa = sk_get_be32(buf + 14);
	sk_memcpy(a->tha, buf + 18, SK_MAC_LEN);
	a->tpa = sk_get_be32(buf + 24);
	if (a->op != ARP_OP_REQUEST && a->op != ARP_OP_REPLY)
		return WIRE_EUNSUP; /* RARP/InARP opcodes */
	/* A group sender address must never enter the neighbour cache: we
	 * would then unicast to a broadcast/multicast MAC. */
	if (eth_is_multicast(a->sha))
		return WIRE_EBADADDR;
	return WIRE_OK;
}

size_t arp_emit(uint8_t *buf, size_t cap, const struct arp_pkt *a)
{
	if (cap < ARP_LEN)
		return 0;
	sk_put_be16(buf, ARP_HTYPE_ETH);
	sk_put_be16(buf + 2, ETH_TYPE_IPV4);
	buf[4] = SK_MAC_LEN;
	buf[5] = 4;
	sk_put_be16(buf + 6, a->op);
	sk_memcpy(buf + 8, a->sha, SK_MAC_LEN);
	sk_put_be32(buf + 14, a->spa);
	sk_memcpy(buf + 18, a->tha, SK_MAC_LEN);
	sk_put_be32(buf + 24, a->tpa);
	return ARP_LEN;
}
