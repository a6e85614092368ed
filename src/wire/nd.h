/* nd.h — Neighbour Discovery messages and options (RFC 4861).
 *
 * nd_parse takes an ICMPv6 message that icmp6_parse already accepted (so its
 * checksum is good) and the IPv6 header it came in, and applies every
 * validity check RFC 4861 asks of a receiver (6.1.1 RS, 6.1.2 RA, 7.1.1 NS,
 * 7.1.2 NA, 8.1 redirect), so that the net layer can trust what it gets:
 *   IP hop limit 255 (WIRE_EHOPLIMIT: the message was forwarded, so it
 *   came from off-link), code 0 (WIRE_ECODE), the message long enough for
 *   its type (WIRE_ETRUNC), every option of length > 0 and inside the
 *   message (WIRE_EOPT: a zero length would make the walk spin, and the RFC
 *   says to drop the whole message), the addresses each type allows
 *   (WIRE_EBADADDR).  Options: source/target link-layer address (Ethernet:
 *   length 1), prefix information (length 4), MTU (length 1; a value under
 *   1280 is left out), nonce (RFC 7527); others are skipped by length.
 *   A prefix option the host must ignore (RFC 4861 6.3.4, RFC 4862 5.5.3:
 *   link-local prefix, preferred > valid, prefix length over 128) is left
 *   out of the result and counted in prefix_ignored; the message itself
 *   stays valid.
 */
#ifndef WIRE_ND_H
#define WIRE_ND_H

#include "ipv6.h"

#define ND_RS 133
#define ND_RA 134
#define ND_NS 135
#define ND_NA 136
#define ND_REDIRECT 137

#define ND_HOP_LIMIT 255
#define ND_RS_LEN 8
#define ND_RA_LEN 16
#define ND_NS_LEN 24
#define ND_NA_LEN 24
#define ND_REDIRECT_LEN 40

#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_OPT_PREFIX 3
#define ND_OPT_REDIRECTED 4
#define ND_OPT_MTU 5
#define ND_OPT_NONCE 14
#define ND_OPT_LLA_LEN 8     /* an Ethernet link-layer address option */
#define ND_OPT_PREFIX_LEN 32
#define ND_NONCE_LEN 6       /* what we send; a received nonce may be longer */

#define ND_RA_MANAGED 0x80   /* M: addresses from DHCPv6 */
#define ND_RA_OTHER 0x40     /* O: other configuration from DHCPv6 */
#define ND_NA_ROUTER 0x80
#define ND_NA_SOLICITED 0x40
#define ND_NA_OVERRIDE 0x20
#define ND_PREFIX_ONLINK 0x80
#define ND_PREFIX_AUTO 0x40

/* Options walked in one message are at most this many: each takes 8 bytes
 * or more, so a 1500-byte message holds under 190; 64 is plenty for any
 * real RA and keeps a jumbo of tiny options from costing more. */
#define ND_MAX_OPTS 64
/* Prefixes kept from one RA; more are counted in prefix_ignored. */
#define ND_MAX_PREFIX 4

struct nd_prefix {
	uint8_t len;          /* prefix length, 0..128 */
	bool onlink, autonomous; /* L and A */
	uint32_t valid, preferred; /* lifetimes in seconds; 0xffffffff: forever */
	struct ipv6_addr prefix;   /* bits past len zeroed (RFC 4861 4.6.2) */
};

struct nd_opts {
	bool has_slla, has_tlla, has_mtu, has_nonce;
	uint8_t slla[SK_MAC_LEN], tlla[SK_MAC_LEN];
	uint32_t mtu;
	uint8_t nonce[ND_NONCE_LEN]; /* first 6 bytes of a nonce option */
	uint8_t nprefix;
	uint8_t prefix_ignored;
	struct nd_prefix prefix[ND_MAX_PREFIX];
};

struct nd_msg {
	uint8_t type;
	/* RA */
	uint8_t cur_hop_limit;    /* 0: unspecified */
	uint8_t ra_flags;         /* ND_RA_MANAGED | ND_RA_OTHER */
	uint16_t router_lifetime; /* seconds; 0: not a default router */
	uint32_t reachable_ms, retrans_ms; /* 0: unspecified */
	/* NA */
	uint8_t na_flags;         /* ND_NA_ROUTER | SOLICITED | OVERRIDE */
	/* NS, NA, redirect: the target; redirect: also the destination */
	struct ipv6_addr target, dest;
	struct nd_opts opts;
};

/* msg/len: the ICMPv6 message; ip: the header it came in (hop limit, src,
 * dst).  Types other than the five ND ones are WIRE_EUNSUP. */
int nd_parse(const uint8_t *msg, size_t len, const struct ipv6_hdr *ip, struct nd_msg *m);

/* Options alone (the bytes after the fixed part of a message). */
int nd_opts_parse(const uint8_t *opt, size_t len, struct nd_opts *o);

/* Emitters write the ICMPv6 message with its checksum over src/dst and
 * return its length or 0 (no room).  A NULL lla leaves its option out (an
 * NS from :: must not carry one, RFC 4861 4.3). */
size_t nd_emit_rs(uint8_t *buf, size_t cap, const uint8_t *slla, const struct ipv6_addr *src,
		  const struct ipv6_addr *dst);
/* nonce: ND_NONCE_LEN bytes for a DAD probe (RFC 7527), or NULL. */
size_t nd_emit_ns(uint8_t *buf, size_t cap, const struct ipv6_addr *target, const uint8_t *slla,
		  const uint8_t *nonce, const struct ipv6_addr *src, const struct ipv6_addr *dst);
size_t nd_emit_na(uint8_t *buf, size_t cap, const struct ipv6_addr *target, uint8_t flags,
		  const uint8_t *tlla, const struct ipv6_addr *src, const struct ipv6_addr *dst);

#endif
