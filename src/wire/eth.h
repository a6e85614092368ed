/* eth.h — Ethernet II, with at most one 802.1Q tag skipped. */
#ifndef WIRE_ETH_H
#define WIRE_ETH_H

#include "wire.h"

#define ETH_HLEN 14
#define ETH_VLAN_HLEN 18
#define ETH_MIN_FRAME 60 /* without FCS; shorter frames are padded on emit */
#define ETH_MTU 1500
#define ETH_MAX_FRAME (ETH_VLAN_HLEN + ETH_MTU)

#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_ARP 0x0806
#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_IPV6 0x86dd

struct eth_hdr {
	uint8_t dst[SK_MAC_LEN];
	uint8_t src[SK_MAC_LEN];
	uint16_t type;     /* inner ethertype, after a VLAN tag if one was present */
	uint16_t vlan_tci; /* valid when has_vlan */
	bool has_vlan;
	uint16_t hlen;     /* 14 or 18: payload starts at buf + hlen */
};

/* Parse; types < 0x0600 (802.3 lengths) and a second VLAN tag are WIRE_EUNSUP. */
int eth_parse(const uint8_t *buf, size_t len, struct eth_hdr *h);

/* Write a 14-byte header (no tag). Returns ETH_HLEN or 0. */
size_t eth_emit(uint8_t *buf, size_t cap, const uint8_t dst[SK_MAC_LEN],
		const uint8_t src[SK_MAC_LEN], uint16_t type);

static inline bool eth_is_broadcast(const uint8_t m[SK_MAC_LEN])
{
	return (m[0] & m[1] & m[2] & m[3] & m[4] & m[5]) == 0xff;
}
static inline bool eth_is_multicast(const uint8_t m[SK_MAC_LEN])
{
	return (m[0] & 1) != 0;
}

/* Zero-pad a frame of `len` bytes to ETH_MIN_FRAME if it is shorter.
 * Returns the new length (len if already long enough), or 0 if cap < 60. */
size_t eth_pad(uint8_t *frame, size_t len, size_t cap);

extern const uint8_t eth_broadcast[SK_MAC_LEN];

#endif
