/* icmp.h — ICMPv4 (RFC 792): echo, and the errors a host must understand.
 *
 * icmp_parse checks the length (>= 8) and the checksum over the whole message.
 * For error types (destination unreachable, time exceeded, parameter
 * problem) icmp_parse_error then reads the embedded original IPv4 header and
 * the first 8 bytes of its payload (ports), bounds-checked.
 */
#ifndef WIRE_ICMP_H
#define WIRE_ICMP_H

#include "wire.h"

#define ICMP_HLEN 8
#define ICMP_ECHO_REPLY 0
#define ICMP_DEST_UNREACH 3
#define ICMP_ECHO_REQUEST 8
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAM_PROBLEM 12
#define ICMP_UNREACH_PORT 3
#define ICMP_UNREACH_FRAG_NEEDED 4

struct icmp_hdr {
	uint8_t type, code;
	uint16_t csum;
	uint16_t id, seq;     /* echo: identifier, sequence */
	uint32_t rest;        /* bytes 4..7 as a word (e.g. next-hop MTU) */
	uint16_t payload_off; /* == ICMP_HLEN */
	uint16_t payload_len;
};

/* What an ICMP error says about the packet that caused it. */
struct icmp_error {
	uint8_t type, code;
	uint16_t mtu;        /* for frag-needed, else 0 */
	uint32_t src, dst;   /* of the original packet (src is us) */
	uint8_t proto;
	uint16_t sport, dport; /* for TCP/UDP; 0 otherwise */
	uint32_t tcp_seq;      /* for TCP: the sequence number quoted */
};

int icmp_parse(const uint8_t *buf, size_t len, struct icmp_hdr *h);
/* buf/len is the whole ICMP message; h from icmp_parse. WIRE_EUNSUP when the
 * type is not an error. */
int icmp_parse_error(const uint8_t *buf, size_t len, const struct icmp_hdr *h, struct icmp_error *e);

/* Write an echo reply for `req` (the whole ICMP echo request message,
 * req_len bytes) into buf: same id, seq and payload, new checksum.
 * buf may equal req (in-place reply). Returns req_len or 0. */
size_t icmp_emit_echo_reply(uint8_t *buf, size_t cap, const uint8_t *req, size_t req_len);

/* Write an echo request with the given payload. Returns 8+len or 0. */
size_t icmp_emit_echo_request(uint8_t *buf, size_t cap, uint16_t id, uint16_t seq,
			      const uint8_t *payload, size_t len);

/* Write a destination-unreachable (or other error) message quoting the
 * original datagram `orig` (its IPv4 header and following bytes): the quote
 * is the IP header plus at most 8 payload bytes (RFC 792; RFC 1812 allows
 * more, we keep it small).  Returns bytes written or 0. */
size_t icmp_emit_error(uint8_t *buf, size_t cap, uint8_t type, uint8_t code, uint32_t rest,
		       const uint8_t *orig, size_t orig_len);

#endif
