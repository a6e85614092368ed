/* arp.h — ARP for IPv4 over Ethernet (RFC 826). Other hardware/protocol
 * types are WIRE_EVERSION. */
#ifndef WIRE_ARP_H
#define WIRE_ARP_H

#include "wire.h"

#define ARP_LEN 28
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2

struct arp_pkt {
	uint16_t op;
	uint8_t sha[SK_MAC_LEN];
	uint32_t spa; /* host order */
	uint8_t tha[SK_MAC_LEN];
	uint32_t tpa; /* host order */
};

int arp_parse(const uint8_t *buf, size_t len, struct arp_pkt *a);
/* Writes 28 bytes; returns ARP_LEN or 0. */
size_t arp_emit(uint8_t *buf, size_t cap, const struct arp_pkt *a);

#endif
