/* icmp6.h — ICMPv6 (RFC 4443): echo, errors, and the MLDv2 report (RFC 3810)
 * a host sends for its solicited-node groups.  Neighbour discovery is in nd.h.
 *
 * icmp6_parse checks the length (>= 8, <= 65535: no jumbograms) and the
 * checksum over the IPv6 pseudo header and the whole message.  For error
 * types icmp6_parse_error then reads the quoted IPv6 header, walks its
 * extension headers as far as the quote goes, and reads the ports and TCP
 * sequence of the flow it is about.
 */
#ifndef WIRE_ICMP6_H
#define WIRE_ICMP6_H

#include "ipv6.h"

#define ICMP6_HLEN 8
#define ICMP6_DEST_UNREACH 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_PARAM_PROBLEM 4
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ICMP6_MLD_QUERY 130
#define ICMP6_MLD2_REPORT 143

#define ICMP6_UNREACH_NOROUTE 0
#define ICMP6_UNREACH_ADMIN 1
#define ICMP6_UNREACH_ADDR 3
#define ICMP6_UNREACH_PORT 4

/* RFC 4443 2.4(c): an error carries as much of the invoking packet as fits
 * in a 1280-byte packet: 1280 - 40 (IPv6) - 8 (ICMPv6). */
#define ICMP6_ERROR_QUOTE_MAX (IPV6_MIN_MTU - IPV6_HLEN - ICMP6_HLEN)

struct icmp6_hdr {
	uint8_t type, code;
	uint16_t csum;
	uint16_t id, seq;     /* echo: identifier, sequence */
	uint32_t rest;        /* bytes 4..7 as a word (MTU, pointer) */
	uint16_t payload_off; /* == ICMP6_HLEN */
	uint16_t payload_len;
};

/* What an ICMPv6 error says about the packet that caused it. */
struct icmp6_error {
	uint8_t type, code;
	uint32_t mtu;          /* Packet Too Big: the MTU field as sent (may be < IPV6_MIN_MTU); else 0 */
	uint32_t pointer;      /* Parameter Problem; else 0 */
	struct ipv6_addr src, dst; /* of the quoted packet (src is us) */
	uint8_t proto;         /* its upper-layer protocol after the extension headers */
	uint16_t sport, dport; /* TCP/UDP; 0 otherwise */
	uint32_t tcp_seq;      /* TCP: the sequence number quoted */
};

/* buf/len: the ICMPv6 message (the IPv6 upper-layer payload); src/dst from
 * the IPv6 header, for the pseudo header. */
int icmp6_parse(const uint8_t *buf, size_t len, const struct ipv6_addr *src,
		const struct ipv6_addr *dst, struct icmp6_hdr *h);

/* h from icmp6_parse.  WIRE_EUNSUP when the type is not an error; WIRE_ETRUNC
 * when the quote is too short to name the flow (a TCP/UDP quote needs 8
 * bytes of its header); WIRE_EFRAG for a quote of a non-first fragment. */
int icmp6_parse_error(const uint8_t *buf, size_t len, const struct icmp6_hdr *h,
		      struct icmp6_error *e);

/* Checksum of an ICMPv6 message in place (the field at bytes 2..3 is
 * overwritten), for emitters here and in nd.c. */
void icmp6_seal(uint8_t *msg, size_t len, const struct ipv6_addr *src, const struct ipv6_addr *dst);

/* Write an echo reply for `req` (the whole echo request message): same id,
 * seq and data, checksum over the reply's own addresses (src: us).  buf may
 * equal req.  Returns req_len or 0. */
size_t icmp6_emit_echo_reply(uint8_t *buf, size_t cap, const uint8_t *req, size_t req_len,
			     const struct ipv6_addr *src, const struct ipv6_addr *dst);

/* Write an echo request with the given data (which may already be in place at
 * buf + 8).  Returns 8 + len or 0. */
size_t icmp6_emit_echo_request(uint8_t *buf, size_t cap, uint16_t id, uint16_t seq,
			       const uint8_t *data, size_t len, const struct ipv6_addr *src,
			       const struct ipv6_addr *dst);

/* May a host answer the packet `orig` (the whole IPv6 packet, h its parse)
 * with this error?  RFC 4443 2.4(e): never about an ICMPv6 error or a
 * redirect, about a packet from a non-unicast source, or (but for Packet Too
 * Big and Parameter Problem code 2) about one sent to a multicast group or as
 * a link-layer multicast/broadcast (`link_mcast`). */
bool icmp6_error_allowed(const uint8_t *orig, const struct ipv6_hdr *h, bool link_mcast,
			 uint8_t type, uint8_t code);

/* Write an error message quoting the invoking packet `orig` (from its IPv6
 * header on; bytes past its payload length are link padding and are not
 * quoted) as far as fits in 1280 bytes (ICMP6_ERROR_QUOTE_MAX).  rest: the
 * MTU or pointer word.  src (us) and dst (the invoking packet's source) are
 * for the checksum.  orig may lie inside buf.  Returns bytes written or 0. */
size_t icmp6_emit_error(uint8_t *buf, size_t cap, uint8_t type, uint8_t code, uint32_t rest,
			const uint8_t *orig, size_t orig_len, const struct ipv6_addr *src,
			const struct ipv6_addr *dst);

/* MLDv2 report (RFC 3810 5.2) */
#define MLD2_MODE_IS_INCLUDE 1
#define MLD2_MODE_IS_EXCLUDE 2
#define MLD2_CHANGE_TO_INCLUDE 3 /* with no sources: leave */
#define MLD2_CHANGE_TO_EXCLUDE 4 /* with no sources: join */
#define MLD2_RECORD_LEN 20       /* a record with no sources */
#define MLD2_REPORT_MAX 32       /* records one report carries here */

/* Write a whole IPv6 packet: header (hop limit 1, to ff02::16, RFC 3810
 * 5.2.13), hop-by-hop router alert 0 (RFC 3810 5), and a report with one
 * source-less record of `rtype` per group: to join a solicited-node group a
 * host sends CHANGE_TO_EXCLUDE({}), to leave CHANGE_TO_INCLUDE({}).  src is
 * the link-local address, or :: before one is usable (RFC 3810 5.2.13
 * allows it during DAD).  Returns the packet's length or 0 (no room, n 0 or
 * over MLD2_REPORT_MAX). */
size_t mld2_emit_report(uint8_t *buf, size_t cap, const struct ipv6_addr *src,
			const struct ipv6_addr *groups, size_t n, uint8_t rtype);

#endif
