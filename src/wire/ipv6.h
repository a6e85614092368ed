/* ipv6.h — IPv6 header (RFC 8200), its extension headers and addresses
 * (RFC 4291).
 *
 * ipv6_parse checks: version 6; 40 + payload length <= buffer (bytes past it
 * are link padding and are ignored, as ipv4_parse does); no multicast source
 * (RFC 4291 2.7), no unspecified destination, no loopback either way (RFC
 * 4291 2.5.3: ::1 never comes off a wire).  Then it walks the extension
 * headers inside the payload, bounded by IPV6_EXT_MAX headers and
 * IPV6_EXT_MAX_BYTES bytes:
 *   hop-by-hop   only right after the fixed header (else WIRE_EEXT);
 *   dest. opts   options checked (Pad1/PadN, router alert; an unknown option
 *                is skipped or dropped as its two high bits say, RFC 8200 4.2);
 *   routing      segments left 0 is skipped (RFC 8200 4.4); any type 0
 *                header (RFC 5095) or segments left > 0 is WIRE_EROUTE: a
 *                host is never an intermediate hop;
 *   fragment     an atomic fragment (offset 0, M 0) is skipped (RFC 6946);
 *                any other is WIRE_EFRAG with h filled, so the caller drops
 *                and counts it (skiff reassembles nothing, as on IPv4);
 *   no next hdr  proto 59 and WIRE_OK: nothing follows.
 * Anything else is the upper-layer protocol: h->proto, h->l4_off, h->l4_len.
 * On WIRE_EOPT, WIRE_EEXT and WIRE_EROUTE h->pp_code/pp_ptr say which
 * Parameter Problem RFC 8200 asks for (pp_code < 0: send none), so the net
 * layer can answer without re-walking.
 */
#ifndef WIRE_IPV6_H
#define WIRE_IPV6_H

#include "wire.h"

#define IPV6_HLEN 40
#define IPV6_ADDR_LEN 16
#define IPV6_MIN_MTU 1280 /* RFC 8200 5: every link carries this much */
#define IPV6_DEFAULT_HOP_LIMIT 64

#define IPV6_NH_HOPOPTS 0
#define IPV6_NH_TCP 6
#define IPV6_NH_UDP 17
#define IPV6_NH_ROUTING 43
#define IPV6_NH_FRAGMENT 44
#define IPV6_NH_ICMPV6 58
#define IPV6_NH_NONE 59
#define IPV6_NH_DSTOPTS 60

/* Walk limits.  RFC 8504 5.3 lets a host bound the extension headers it
 * processes; a real packet has at most a few (hop-by-hop for MLD, a
 * fragment header), so 8 headers and 512 bytes are generous while keeping a
 * crafted chain of thousands of empty ones from costing a walk each. */
#define IPV6_EXT_MAX 8
#define IPV6_EXT_MAX_BYTES 512
/* Non-padding options in one hop-by-hop or destination options header. */
#define IPV6_OPT_MAX 8

#define IPV6_OPT_PAD1 0
#define IPV6_OPT_PADN 1
#define IPV6_OPT_ROUTER_ALERT 5 /* RFC 2711 */
#define IPV6_OPT_JUMBO 0xc2     /* RFC 2675; jumbograms are not supported */
#define IPV6_HBH_RA_LEN 8       /* hop-by-hop header holding only router alert */

/* Parameter Problem codes (RFC 4443 3.4), as pp_code. */
#define IPV6_PP_HEADER 0  /* erroneous header field */
#define IPV6_PP_NEXT 1    /* unrecognized next header */
#define IPV6_PP_OPTION 2  /* unrecognized option */

struct ipv6_addr {
	uint8_t b[IPV6_ADDR_LEN]; /* as on the wire */
};

struct ipv6_hdr {
	uint8_t tclass;
	uint32_t flow;         /* 20 bits */
	uint16_t payload_len;  /* from the header: bytes after the fixed 40 */
	uint8_t next;          /* next header of the fixed header */
	uint8_t hop_limit;
	struct ipv6_addr src, dst;
	/* Set by the extension header walk. */
	uint8_t proto;         /* upper-layer protocol, or IPV6_NH_NONE */
	uint16_t l4_off;       /* from the start of the packet: 40 + ext_len */
	uint16_t l4_len;       /* payload_len - ext_len: the pseudo header's length */
	uint16_t ext_len;      /* bytes of extension headers walked */
	uint8_t next_ext;      /* number of extension headers walked */
	bool router_alert;     /* a hop-by-hop router alert (MLD) was present */
	bool frag;             /* a non-atomic fragment header was found: */
	uint32_t frag_id;      /*   its identification */
	uint16_t frag_off;     /*   offset in bytes */
	bool frag_more;        /*   M flag */
	/* For a Parameter Problem reply: code (IPV6_PP_*) or -1, and the
	 * offset from the start of the packet of the offending byte. */
	int8_t pp_code;
	uint16_t pp_ptr;
};

int ipv6_parse(const uint8_t *buf, size_t len, struct ipv6_hdr *h);

/* Parse the header an ICMPv6 error quotes: the quote was cut to fit 1280
 * bytes, so the payload length is not checked against the buffer and the
 * walk stops at whatever comes first, the quote's end or the payload
 * length.  Addresses are not judged (the quote is of our own packet).
 * WIRE_OK with proto and l4_off set even if the upper-layer header itself
 * was cut (l4_len then says how much is there); WIRE_EFRAG for a non-first
 * fragment (no ports in it). */
int ipv6_parse_quoted(const uint8_t *buf, size_t len, struct ipv6_hdr *h);

/* Write the fixed 40-byte header.  Fields used from h: tclass, flow (low 20
 * bits), next, hop_limit, src, dst.  Returns IPV6_HLEN or 0 (no room). */
size_t ipv6_emit(uint8_t *buf, size_t cap, const struct ipv6_hdr *h, uint16_t payload_len);

/* Write an 8-byte hop-by-hop header holding a router alert with `value`
 * (0: MLD, RFC 2711) and PadN, before a header of type `next`.  Returns
 * IPV6_HBH_RA_LEN or 0. */
size_t ipv6_emit_hbh_router_alert(uint8_t *buf, size_t cap, uint8_t next, uint16_t value);

/* Well-known addresses. */
extern const struct ipv6_addr ipv6_unspecified;   /* :: */
extern const struct ipv6_addr ipv6_loopback;      /* ::1 */
extern const struct ipv6_addr ipv6_all_nodes;     /* ff02::1 */
extern const struct ipv6_addr ipv6_all_routers;   /* ff02::2 */
extern const struct ipv6_addr ipv6_mld2_routers;  /* ff02::16, where MLDv2 reports go */

static inline bool ipv6_addr_eq(const struct ipv6_addr *a, const struct ipv6_addr *b)
{
	return sk_memcmp(a->b, b->b, IPV6_ADDR_LEN) == 0;
}
static inline bool ipv6_is_unspecified(const struct ipv6_addr *a)
{
	return ipv6_addr_eq(a, &ipv6_unspecified);
}
static inline bool ipv6_is_loopback(const struct ipv6_addr *a)
{
	return ipv6_addr_eq(a, &ipv6_loopback);
}
static inline bool ipv6_is_multicast(const struct ipv6_addr *a)
{
	return a->b[0] == 0xff;
}
/* fe80::/10 */
static inline bool ipv6_is_link_local(const struct ipv6_addr *a)
{
	return a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80;
}
/* A unicast address a host may use as a source or put in ND fields. */
static inline bool ipv6_is_unicast(const struct ipv6_addr *a)
{
	return !ipv6_is_multicast(a) && !ipv6_is_unspecified(a) && !ipv6_is_loopback(a);
}

/* True if the first `plen` bits of a and b are equal (plen 0..128). */
bool ipv6_prefix_eq(const struct ipv6_addr *a, const struct ipv6_addr *b, unsigned plen);

/* Zero the bits of a past the first `plen`. */
void ipv6_prefix_mask(struct ipv6_addr *a, unsigned plen);

/* ff02::1:ffXX:XXXX from the low 24 bits of a (RFC 4291 2.7.1): where NS
 * for `a` are sent, and a group every host joins per address. */
void ipv6_solicited_node(struct ipv6_addr *out, const struct ipv6_addr *a);
bool ipv6_is_solicited_node(const struct ipv6_addr *a);

/* The modified EUI-64 interface identifier of a MAC (RFC 4291 appendix A):
 * ff:fe in the middle and the universal/local bit inverted. */
void ipv6_iid_from_mac(uint8_t iid[8], const uint8_t mac[SK_MAC_LEN]);

/* fe80::/64 with the interface identifier of mac. */
void ipv6_link_local_from_mac(struct ipv6_addr *out, const uint8_t mac[SK_MAC_LEN]);

/* The Ethernet group address of a multicast IPv6 address: 33:33 and its
 * last 32 bits (RFC 2464 7). */
void ipv6_mcast_mac(uint8_t mac[SK_MAC_LEN], const struct ipv6_addr *group);

/* RFC 5952 text of a, NUL-terminated, without brackets: lower-case hex,
 * no leading zeros, the longest run of two or more zero groups (the first
 * of equal ones) as "::", no embedded IPv4 form.  Returns the length (at
 * most IPV6_STRLEN - 1).  Logs, option echoes and the CLI all use this
 * one writer, so an address reads the same everywhere. */
#define IPV6_STRLEN 40
size_t ipv6_format(const uint8_t a[16], char out[IPV6_STRLEN]);

#endif
