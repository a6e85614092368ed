/* ipv4.h — IPv4 header (RFC 791).
 *
 * parse checks: version 4, IHL >= 5, total length >= IHL*4 and <= buffer
 * (bytes past total length are link padding and are ignored), header
 * checksum.  Options are skipped: payload starts at IHL*4.  Fragments are
 * reported as WIRE_EFRAG *after* the header was validated, with `h` filled, so
 * the caller can count them; skiff drops fragments (see README).
 */
#ifndef WIRE_IPV4_H
#define WIRE_IPV4_H

#include "wire.h"

#define IPV4_HLEN 20
#define IPV4_PROTO_ICMP 1
#define IPV4_PROTO_TCP 6
#define IPV4_PROTO_UDP 17
#define IPV4_FLAG_DF 0x4000
#define IPV4_FLAG_MF 0x2000
#define IPV4_FRAG_OFF_MASK 0x1fff
#define IPV4_DEFAULT_TTL 64

struct ipv4_hdr {
	uint8_t hlen;         /* header bytes, 20..60 */
	uint8_t tos;
	uint16_t total_len;
	uint16_t id;
	uint16_t frag;        /* flags and fragment offset as on the wire */
	uint8_t ttl;
	uint8_t proto;
	uint32_t src, dst;    /* host order */
	uint16_t payload_off; /* == hlen */
	uint16_t payload_len; /* total_len - hlen */
};

int ipv4_parse(const uint8_t *buf, size_t len, struct ipv4_hdr *h);

/* Write a 20-byte header (no options) with its checksum, for a payload of
 * `payload_len` bytes. Fields used from h: tos, id, frag, ttl, proto, src,
 * dst. Returns IPV4_HLEN or 0 (no room, or total length over 65535). */
size_t ipv4_emit(uint8_t *buf, size_t cap, const struct ipv4_hdr *h, uint16_t payload_len);

static inline bool ipv4_is_fragment(const struct ipv4_hdr *h)
{
	return (h->frag & (IPV4_FLAG_MF | IPV4_FRAG_OFF_MASK)) != 0;
}

#endif
