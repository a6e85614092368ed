/* udp.h — UDP (RFC 768). parse checks the length field against the buffer
 * (>= 8, <= buffer) and, unless the checksum field is 0, the checksum over
 * the pseudo header. */
#ifndef WIRE_UDP_H
#define WIRE_UDP_H

#include "wire.h"

#define UDP_HLEN 8

struct udp_hdr {
	uint16_t sport, dport;
	uint16_t len;         /* from the header: 8 + payload */
	uint16_t csum;
	uint16_t payload_off; /* == UDP_HLEN */
	uint16_t payload_len;
};

/* src/dst: IPv4 addresses (host order) for the pseudo header. */
int udp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst, struct udp_hdr *h);

/* Write the 8-byte header in front of a payload of payload_len bytes that is
 * already in place at buf + 8, and compute the checksum (0 becomes 0xffff).
 * Returns 8 + payload_len, or 0 if cap is too small. */
size_t udp_emit(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport, uint32_t src,
		uint32_t dst, uint16_t payload_len);

/* The same over IPv6 (src/dst the 16 wire bytes, for the pseudo header).
 * The checksum is mandatory there (RFC 8200 8.1): a zero field is
 * WIRE_ECSUM, and emit never writes one. */
int udp_parse6(const uint8_t *buf, size_t len, const uint8_t src[16], const uint8_t dst[16],
	       struct udp_hdr *h);
/* Either family, the checksum not checked: for a frame whose device
 * vouched for it (ring.h RING_SLOT_CSUM_OK; the field may hold a partial
 * sum then). */
int udp_parse_nocsum(const uint8_t *buf, size_t len, struct udp_hdr *h);
size_t udp_emit6(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport, const uint8_t src[16],
		 const uint8_t dst[16], uint16_t payload_len);

#endif
