/* iface_types.h — struct iface: the whole state of one interface, in fixed
 * tables, so the caller places it (static, calloc, a guest page) and nothing
 * is ever allocated.  Included by iface.h after struct iface_config and
 * udp_recv_fn; users read fields only for tests and counters.
 *
 * Sizes (and why):
 *   ARP cache      256 entries, 512 hash buckets: more peers than a LAN
 *                  segment we serve normally has, small enough (~12 KB) to
 *                  stay in L2.  Bounded by LRU eviction, see below.
 *   ARP queue      32 datagrams of up to IFACE_MAX_MTU bytes (~48 KB),
 *                  copied: a tx slot cannot be held while ARP resolves.
 *   UDP ports      16: a linear scan of 16 is cheaper than a hash here.
 *   ND cache       256 entries, 512 buckets: the ARP cache's sizes and shape
 *                  (two LRU lists), keyed by the 16-byte address.
 *   ND queue       16 datagrams (~24 KB): IPv6 is the second family, and
 *                  its peers are mostly answered, not resolved by us first.
 */
#ifndef NET_IFACE_TYPES_H
#define NET_IFACE_TYPES_H

#include "../base/sk.h"
#include "../wire/nd.h"

#define IFACE_MAX_MTU 1500u
#define IFACE_ARP_SLOTS 256u          /* < IFACE_ARP_NONE */
#define IFACE_ARP_BUCKETS 512u        /* power of two */
#define IFACE_ARP_BUCKET_BITS 9
#define IFACE_ARP_PENDING 32u
#define IFACE_MAX_UDP_PORTS 16u
#define IFACE_MAX_PROTO_HANDLERS 2u   /* e.g. TCP, later */
#define IFACE_ARP_NONE 0xffffu
#define IFACE_ND_SLOTS 256u           /* < IFACE_ND_NONE */
#define IFACE_ND_BUCKETS 512u
#define IFACE_ND_BUCKET_BITS 9
#define IFACE_ND_PENDING 16u
#define IFACE_ND_NONE 0xffffu

/* An entry is trusted for this long after an ARP packet confirmed it. */
#define IFACE_ARP_REACHABLE_NS (60 * SK_NS_PER_S)
/* After that, output keeps using the old MAC while refresh requests go out;
 * with no answer for this long the entry falls back to incomplete. */
#define IFACE_ARP_REFRESH_NS (3 * SK_NS_PER_S)
/* At most one request per address per interval (RFC 1122 2.3.2.1). */
#define IFACE_ARP_RETRY_NS SK_NS_PER_S
/* A datagram waits this long for its next hop to resolve. */
#define IFACE_ARP_QUEUE_NS (3 * SK_NS_PER_S)
/* With a neighbour board (iface_config.board): while datagrams wait, the
 * board is read this often for an answer another worker heard. */
#define IFACE_ARP_BOARD_POLL_NS SK_NS_PER_MS
/* ICMP errors: token bucket, IFACE_ICMP_RATE per second, IFACE_ICMP_BURST deep. */
#define IFACE_ICMP_RATE 100u
#define IFACE_ICMP_BURST 20u

/* Neighbour discovery (RFC 4861 10, the protocol constants). */
#define IFACE_ND_REACHABLE_NS (30 * SK_NS_PER_S) /* REACHABLE_TIME */
#define IFACE_ND_RETRANS_NS SK_NS_PER_S          /* RETRANS_TIMER: one NS per address per second */
#define IFACE_ND_MAX_PROBES 3u                  /* MAX_UNICAST_SOLICIT: probes of a STALE entry */
#define IFACE_ND_DELAY_NS (5 * SK_NS_PER_S)      /* DELAY_FIRST_PROBE_TIME */
#define IFACE_ND_QUEUE_NS (3 * SK_NS_PER_S)      /* a datagram waits this long (3 multicast NS) */
/* DAD (RFC 4862 5.1): DupAddrDetectTransmits 1, each waiting RetransTimer. */
#define IFACE_DAD_TRANSMITS 1u
/* Router solicitations (RFC 4861 10): 3, 4 s apart, until an RA comes. */
#define IFACE_RS_MAX 3u
#define IFACE_RS_INTERVAL_NS (4 * SK_NS_PER_S)
/* MLD reports (RFC 3810 9): at most one answer to queries per second. */
#define IFACE_MLD_MIN_NS SK_NS_PER_S

/* Every counter, with the name iface_stats prints.  One list, so a counter
 * cannot exist without a name.  Each drop reason has its own counter. */
#define IFACE_COUNTERS(X)                                                                 \
	/* device ring */                                                                 \
	X(rx_frames, "iface.rx_frames")           /* frames handed to iface_input */        \
	X(dev_bad_slot, "iface.bad_slot")         /* rx/tx slot with buf_idx or len out of range */ \
	X(tx_frames, "iface.tx_frames")           /* frames placed in tx slots */           \
	X(tx_full_syncs, "iface.tx_full_syncs")   /* tx ring full: synced once to make room */ \
	X(tx_ring_full, "iface.tx_ring_full")     /* still full after the sync: frame dropped */ \
	X(rx_csum_ok, "iface.rx_csum_ok")         /* frames whose L4 checksum the device vouched for */ \
	X(tx_vnet_frames, "iface.tx_vnet_frames") /* frames with an offload request (ring_vnet) */ \
	X(tx_tso_frames, "iface.tx_tso_frames")   /* of those, TSO frames of several buffers */ \
	/* Ethernet */                                                                    \
	X(eth_bad_len, "eth.bad_len")           /* shorter than a header */               \
	X(eth_unsupported, "eth.unsupported")   /* 802.3 length / Q-in-Q */               \
	X(eth_vlan, "eth.vlan")                 /* tagged: we are configured untagged */  \
	X(eth_not_for_us, "eth.not_for_us")     /* unicast to another MAC */              \
	X(eth_multicast, "eth.multicast")       /* group address other than broadcast */  \
	X(eth_bad_src, "eth.bad_src")           /* group source MAC, or our own MAC */    \
	X(eth_unknown_type, "eth.unknown_type") /* neither ARP nor IPv4 */                \
	/* ARP */                                                                         \
	X(arp_bad, "arp.bad")                   /* truncated, other hw/proto types */     \
	X(arp_unsupported, "arp.unsupported")   /* opcode other than request/reply */     \
	X(arp_bad_sender, "arp.bad_sender")     /* group sender MAC or a martian sender IP */ \
	X(arp_conflict, "arp.conflict")         /* someone else claims our IP */          \
	X(arp_not_for_us, "arp.not_for_us")     /* between other hosts: nothing learned */ \
	X(arp_requests_rx, "arp.requests_rx")                                             \
	X(arp_replies_rx, "arp.replies_rx")                                               \
	X(arp_replies_tx, "arp.replies_tx")                                               \
	X(arp_requests_tx, "arp.requests_tx")   /* resolution, refresh, announce */       \
	X(arp_req_ratelimited, "arp.req_ratelimited") /* request withheld: < 1 s since the last */ \
	X(arp_learned, "arp.learned")           /* new cache entries from received ARP */ \
	X(arp_updated, "arp.updated")           /* existing entries confirmed/changed */  \
	X(arp_gleaned, "arp.gleaned")           /* entries made or changed from an IPv4 frame (glean) */ \
	X(arp_board_hits, "arp.board_hits")     /* entries taken from the workers' board (no request) */ \
	X(arp_evictions, "arp.evictions")       /* LRU entry dropped to make room */      \
	X(arp_learn_refused, "arp.learn_refused") /* table full of active peers: unsolicited not learned */ \
	X(arp_expired, "arp.expired")           /* unconfirmed too long: re-resolving */  \
	X(arp_queued, "arp.queued")             /* datagrams parked awaiting resolution */ \
	X(arp_queue_sent, "arp.queue_sent")     /* ... and sent once resolved */          \
	X(arp_queue_full, "arp.queue_full")     /* dropped: no free queue slot */         \
	X(arp_queue_timeout, "arp.queue_timeout") /* dropped: no reply in time */         \
	/* IPv4 */                                                                        \
	X(ip_rx, "ip.rx")                       /* valid datagrams for us */              \
	X(ip_truncated, "ip.truncated")                                                   \
	X(ip_bad_len, "ip.bad_len")                                                       \
	X(ip_csum, "ip.csum")                                                             \
	X(ip_version, "ip.version")                                                       \
	X(ip_frag_dropped, "ip.frag_dropped")   /* we do not reassemble */                \
	X(ip_bad_src, "ip.bad_src")             /* martian source (group, broadcast, ours, loopback) */ \
	X(ip_bad, "ip.bad")                     /* any other parse error */               \
	X(ip_not_for_us, "ip.not_for_us")                                                 \
	X(ip_bcast_not_udp, "ip.bcast_not_udp") /* only UDP is accepted on broadcast */   \
	X(ip_unknown_proto, "ip.unknown_proto")                                           \
	X(ip_tx, "ip.tx")                       /* datagrams sent or queued */            \
	X(ip_no_route, "ip.no_route")                                                     \
	X(ip_too_big, "ip.too_big")             /* over the MTU (we send no fragments) */ \
	/* ICMP */                                                                        \
	X(icmp_rx, "icmp.rx")                                                             \
	X(icmp_truncated, "icmp.truncated")                                               \
	X(icmp_csum, "icmp.csum")                                                         \
	X(icmp_echo_requests, "icmp.echo_requests")                                       \
	X(icmp_echo_replies, "icmp.echo_replies") /* replies sent */                      \
	X(icmp_echo_requests_tx, "icmp.echo_requests_tx") /* icmp_ping_send: requests out */ \
	X(icmp_echo_replies_rx, "icmp.echo_replies_rx") /* replies to us (well-formed, checksum ok) */ \
	X(icmp_errors_rx, "icmp.errors_rx")     /* unreachable/time exceeded/param problem about us */ \
	X(icmp_bad_error, "icmp.bad_error")     /* malformed quote, or not about our packets */ \
	X(icmp_other, "icmp.other")             /* types we do not handle */              \
	X(icmp_unreach_tx, "icmp.unreach_tx")   /* port unreachable sent */               \
	X(icmp_ratelimited, "icmp.ratelimited") /* error withheld by the token bucket */  \
	X(icmp_tx_failed, "icmp.tx_failed")     /* reply/error could not be sent */       \
	/* UDP */                                                                         \
	X(udp_rx, "udp.rx")                     /* delivered to a bound port */           \
	X(udp_truncated, "udp.truncated")                                                 \
	X(udp_bad_len, "udp.bad_len")                                                     \
	X(udp_csum, "udp.csum")                                                           \
	X(udp_no_port, "udp.no_port")                                                     \
	X(udp_tx, "udp.tx")                                                               \
	/* IPv6 (iface_ip6.c) */                                                          \
	X(eth_v6_off, "eth.v6_off")             /* IPv6 frame, IPv6 not configured */     \
	X(ip6_rx, "ip6.rx")                     /* valid packets for us */                \
	X(ip6_truncated, "ip6.truncated")       /* shorter than 40 or the payload length */ \
	X(ip6_bad_len, "ip6.bad_len")           /* an extension header past the end */    \
	X(ip6_version, "ip6.version")                                                     \
	X(ip6_frag_dropped, "ip6.frag_dropped") /* we do not reassemble */                \
	X(ip6_route_dropped, "ip6.route_dropped") /* routing type 0, or segments left */  \
	X(ip6_bad_ext, "ip6.bad_ext")           /* hop-by-hop out of place */             \
	X(ip6_bad_opt, "ip6.bad_opt")           /* malformed or unknown must-drop option */ \
	X(ip6_ext_limit, "ip6.ext_limit")       /* more extension headers/options than we walk */ \
	X(ip6_bad_addr, "ip6.bad_addr")         /* group/loopback source, :: or loopback dest */ \
	X(ip6_bad_src, "ip6.bad_src")           /* our own address, or :: but for DAD */  \
	X(ip6_bad, "ip6.bad")                   /* any other parse error */               \
	X(ip6_not_for_us, "ip6.not_for_us")     /* another address or a group we did not join */ \
	X(ip6_tentative, "ip6.tentative")       /* to an address in DAD (only ND is taken) or a duplicate */ \
	X(ip6_unknown_proto, "ip6.unknown_proto")                                         \
	X(ip6_l4_mcast, "ip6.l4_mcast")         /* TCP (a handler's protocol) to a group */ \
	X(ip6_tx, "ip6.tx")                     /* packets sent or queued */              \
	X(ip6_no_route, "ip6.no_route")         /* no usable source, or off-link and no router */ \
	X(ip6_too_big, "ip6.too_big")           /* over the MTU (we send no fragments) */ \
	/* ICMPv6 (iface_icmp6.c) */                                                      \
	X(icmp6_rx, "icmp6.rx")                                                           \
	X(icmp6_truncated, "icmp6.truncated")                                             \
	X(icmp6_csum, "icmp6.csum")                                                       \
	X(icmp6_echo_requests, "icmp6.echo_requests")                                     \
	X(icmp6_echo_replies, "icmp6.echo_replies") /* replies sent */                    \
	X(icmp6_echo_requests_tx, "icmp6.echo_requests_tx")                               \
	X(icmp6_echo_replies_rx, "icmp6.echo_replies_rx")                                 \
	X(icmp6_echo_mcast, "icmp6.echo_mcast") /* echo to a group: not answered */       \
	X(icmp6_errors_rx, "icmp6.errors_rx")   /* errors about our packets */            \
	X(icmp6_bad_error, "icmp6.bad_error")   /* malformed quote, or not about us */    \
	X(icmp6_too_big_rx, "icmp6.too_big_rx") /* Packet Too Big about our packets */   \
	X(icmp6_mld_queries, "icmp6.mld_queries")                                         \
	X(icmp6_mld_reports_tx, "icmp6.mld_reports_tx")                                   \
	X(icmp6_other, "icmp6.other")           /* types we do not handle (MLD reports of others) */ \
	X(icmp6_errors_tx, "icmp6.errors_tx")   /* unreachable / parameter problem sent */ \
	X(icmp6_ratelimited, "icmp6.ratelimited") /* error withheld by the token bucket */ \
	X(icmp6_tx_failed, "icmp6.tx_failed")   /* reply/error could not be sent */       \
	/* Neighbour discovery (iface_nd.c) */                                            \
	X(nd_truncated, "nd.truncated")                                                   \
	X(nd_hop_limit, "nd.hop_limit")         /* not 255: forwarded from off-link */    \
	X(nd_bad_code, "nd.bad_code")                                                     \
	X(nd_bad_opt, "nd.bad_opt")             /* zero-length or cut option, too many */ \
	X(nd_bad_addr, "nd.bad_addr")           /* addresses the message type forbids */  \
	X(nd_ns_rx, "nd.ns_rx")                                                           \
	X(nd_na_rx, "nd.na_rx")                                                           \
	X(nd_ra_rx, "nd.ra_rx")                                                           \
	X(nd_other, "nd.other")                 /* RS, redirect: a host ignores them */  \
	X(nd_not_for_us, "nd.not_for_us")       /* NS for an address not ours */          \
	X(nd_na_tx, "nd.na_tx")                                                           \
	X(nd_ns_tx, "nd.ns_tx")                 /* resolution and probes (DAD: nd.dad_ns_tx) */ \
	X(nd_ns_ratelimited, "nd.ns_ratelimited") /* NS withheld: < 1 s since the last */ \
	X(nd_na_no_entry, "nd.na_no_entry")     /* NA for a target we never asked for */  \
	X(nd_na_ignored, "nd.na_ignored")       /* NA without the address or override we need */ \
	X(nd_learned, "nd.learned")             /* new entries from received NS */        \
	X(nd_updated, "nd.updated")             /* entries confirmed or changed */        \
	X(nd_evictions, "nd.evictions")         /* LRU entry dropped to make room */      \
	X(nd_learn_refused, "nd.learn_refused") /* table full of active peers */          \
	X(nd_expired, "nd.expired")             /* probes unanswered: back to INCOMPLETE */ \
	X(nd_queued, "nd.queued")                                                         \
	X(nd_queue_sent, "nd.queue_sent")                                                 \
	X(nd_queue_full, "nd.queue_full")                                                 \
	X(nd_queue_timeout, "nd.queue_timeout")                                           \
	X(nd_conflict, "nd.conflict")           /* an NA claims one of our usable addresses */ \
	X(nd_dad_ns_tx, "nd.dad_ns_tx")                                                   \
	X(nd_dad_ok, "nd.dad_ok")               /* addresses that passed DAD */           \
	X(nd_dad_duplicate, "nd.dad_duplicate") /* addresses found in use: never used */  \
	X(nd_dad_looped, "nd.dad_looped")       /* our own DAD probe came back (nonce) */ \
	X(nd_dad_defended, "nd.dad_defended")   /* another node's DAD for our address answered */ \
	X(nd_router_learned, "nd.router_learned") /* default router taken from an RA */ \
	X(nd_rs_tx, "nd.rs_tx")                 /* router solicitations (--ip6 auto) */  \
	X(nd_slaac_addrs, "nd.slaac_addrs")     /* addresses formed from RA prefixes */  \
	X(nd_slaac_full, "nd.slaac_full")       /* an RA prefix with no room left for it */ \
	X(nd_slaac_refreshed, "nd.slaac_refreshed") /* an RA renewed an address's lifetimes */ \
	X(nd_slaac_deprecated, "nd.slaac_deprecated") /* preferred lifetime ran out */     \
	X(nd_slaac_expired, "nd.slaac_expired") /* valid lifetime ran out: address removed */ \
	X(nd_router_expired, "nd.router_expired") /* the RA router's lifetime ran out */

struct iface_counters {
#define IFACE_COUNTER_FIELD(field, name) uint64_t field;
	IFACE_COUNTERS(IFACE_COUNTER_FIELD)
#undef IFACE_COUNTER_FIELD
};

enum iface_arp_state {
	IFACE_ARP_FREE = 0,
	IFACE_ARP_INCOMPLETE, /* request(s) sent, no answer yet */
	IFACE_ARP_REACHABLE,  /* mac valid; confirmed at `confirmed` */
};

/* The two LRU lists.  New entries learned from unsolicited ARP (gratuitous,
 * requests aimed at us) start on PROBATION; entries we resolved ourselves or
 * used for output live on ACTIVE.  Room is always taken from PROBATION first,
 * and unsolicited learning never evicts a fresh ACTIVE entry: a flood of ARP
 * from random addresses churns PROBATION only, peers we talk to stay. */
enum iface_arp_list {
	IFACE_ARP_PROBATION = 0,
	IFACE_ARP_ACTIVE = 1,
};

struct iface_arp_entry {
	uint32_t ip;          /* host order; key */
	uint8_t mac[SK_MAC_LEN];
	uint8_t state;        /* enum iface_arp_state */
	uint8_t list;         /* enum iface_arp_list */
	bool req_sent;        /* req_at is valid */
	uint16_t hnext;       /* next in hash chain, or in the free list */
	uint16_t prev, next;  /* LRU links: entry indices, or the list sentinels */
	sk_time_ns confirmed; /* last ARP packet that confirmed mac */
	sk_time_ns req_at;    /* last request we sent for ip */
};

/* A datagram waiting for its next hop's MAC.  data is the whole IPv4
 * datagram (header included); the Ethernet header is added on flush. */
struct iface_pending {
	bool used;
	uint16_t len;
	uint32_t seq;         /* queue order: flushed oldest first */
	uint32_t nexthop;
	sk_time_ns expire;
	uint8_t data[IFACE_MAX_MTU];
};

/* A neighbour (RFC 4861 7.3.2).  The states this cache keeps:
 *   INCOMPLETE  NS sent to the solicited-node group, no answer yet;
 *   REACHABLE   confirmed by a solicited NA at `confirmed`;
 *   STALE       a link-layer address not confirmed (learned from an NS,
 *               an unsolicited NA, or REACHABLE aged past REACHABLE_TIME):
 *               output uses it; its first use starts RFC 4861's DELAY (no
 *               probe for IFACE_ND_DELAY_NS: an answer from the peer may
 *               confirm it meanwhile), then PROBE, unicast NS a second
 *               apart counted in `probes`; after IFACE_ND_MAX_PROBES
 *               unanswered the entry is INCOMPLETE again. */
enum iface_nd_state {
	IFACE_ND_FREE = 0,
	IFACE_ND_INCOMPLETE,
	IFACE_ND_REACHABLE,
	IFACE_ND_STALE,
};

struct iface_nd_entry {
	struct ipv6_addr ip;  /* key */
	uint8_t mac[SK_MAC_LEN];
	uint8_t state;        /* enum iface_nd_state */
	uint8_t list;         /* enum iface_arp_list: the same two LRU lists */
	uint8_t probes;       /* STALE: unicast probes since the last confirmation */
	bool ns_sent;         /* ns_at is valid */
	bool router;          /* the IsRouter flag of its last NA */
	uint16_t hnext;       /* next in hash chain, or in the free list */
	uint16_t prev, next;  /* LRU links, as in the ARP cache */
	sk_time_ns confirmed; /* REACHABLE since */
	sk_time_ns ns_at;     /* last NS we sent for ip */
};

/* An IPv6 packet waiting for its next hop (header included). */
struct iface_pending6 {
	bool used;
	uint16_t len;
	uint32_t seq;
	struct ipv6_addr nexthop;
	sk_time_ns expire;
	uint8_t data[IFACE_MAX_MTU];
};

/* One of our addresses.  Invariant: only PREFERRED addresses are ever a
 * source or accepted as a destination; a TENTATIVE one receives only the
 * NS/NA of its DAD; a DUPLICATE one nothing, for the life of the iface. */
enum iface_addr6_state {
	IFACE_ADDR6_TENTATIVE = 1,
	IFACE_ADDR6_PREFERRED,
	IFACE_ADDR6_DUPLICATE,
};

struct iface_addr6 {
	struct ipv6_addr a;
	uint8_t plen;         /* on-link prefix length (64 for the link-local one) */
	uint8_t state;        /* enum iface_addr6_state */
	uint8_t dad_sent;     /* DAD probes sent so far */
	uint8_t nonce[ND_NONCE_LEN]; /* in our probes: a probe that comes back is ours */
	sk_time_ns dad_at;    /* TENTATIVE: the next probe, or (all sent) the verdict */
	/* Lifetimes (RFC 4862 5.5.4), SK_TIME_NEVER for a configured address
	 * or an infinite one.  Past preferred_until the address is deprecated:
	 * still a destination and the source of what answers it, but not
	 * chosen for new traffic while another will do.  At valid_until it is
	 * removed.  Invariant: preferred_until <= valid_until. */
	sk_time_ns preferred_until, valid_until;
	bool slaac;           /* formed from an RA prefix: its lifetimes are the RA's */
	bool deprecated;      /* preferred_until has passed (counted once) */
};

struct iface_udp_port {
	uint16_t port;      /* 0 = free slot */
	udp_recv_fn fn;
	void *ctx;
};

struct iface_udp6_port {
	uint16_t port;      /* 0 = free slot */
	udp6_recv_fn fn;
	void *ctx;
};

struct icmp_error;
/* Receives an ICMP error about one of our datagrams (e.g. for TCP). */
typedef void (*iface_icmp_error_fn)(void *ctx, struct iface *ifc, sk_time_ns now,
				    const struct icmp_error *e);
struct icmp6_error;
/* Receives an ICMPv6 error quoting one of our packets (e.g. for TCP's path MTU). */
typedef void (*iface_icmp6_error_fn)(void *ctx, struct iface *ifc, sk_time_ns now,
				     const struct icmp6_error *e);
/* Receives an IPv4 payload of a registered protocol; l4 is valid during the call. */
typedef void (*iface_proto_fn)(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
			       uint32_t dst, const uint8_t *l4, size_t len);

/* Receives an echo reply addressed to us (for a pinger); payload is the
 * data after the 8-byte ICMP header, valid only during the call. */
typedef void (*iface_echo_reply_fn)(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
				    uint16_t id, uint16_t seq, const uint8_t *payload, size_t len);

/* Receives an IPv6 upper-layer payload of a registered protocol sent to
 * one of our usable unicast addresses; l4 is valid during the call. */
typedef void (*iface_proto6_fn)(void *ctx, struct iface *ifc, sk_time_ns now,
				const struct ipv6_addr *src, const struct ipv6_addr *dst,
				const uint8_t *l4, size_t len);

struct iface_proto_handler {
	uint8_t proto;      /* 0 = free */
	iface_proto_fn fn;
	void *ctx;
};

struct iface_proto6_handler {
	uint8_t proto;      /* 0 = free */
	iface_proto6_fn fn;
	void *ctx;
};

struct iface {
	struct dev *dev;

	/* configuration, fixed at iface_init */
	uint8_t mac[SK_MAC_LEN];
	uint16_t mtu;         /* IP MTU actually used: <= IFACE_MAX_MTU and tx buf_size - 14 */
	uint32_t ip, mask, gw;
	uint32_t bcast;       /* subnet broadcast, or 0 when the prefix has none (/31, /32) */
	bool glean;           /* iface_config.glean */
	struct nbr_board *board; /* iface_config.board: shared, not owned; NULL = off */
	uint64_t hash_k1, hash_k2; /* secret ARP hash keys from cfg->seed; k2 odd */

	uint16_t ip_id;       /* next IPv4 id; starts at a seeded value */
	/* The frame iface_input is reading came with RING_SLOT_CSUM_OK from a
	 * device that may set it (DEV_OFF_RX_CSUM): TCP and UDP skip their
	 * checksum check.  Set per frame by iface_rx, false outside it. */
	bool rx_csum_ok;

	/* Cached min over the pending queue of (expiry, next ARP retry);
	 * recomputed whenever the queue changes, so next_deadline is O(1). */
	sk_time_ns deadline;

	/* ICMP error token bucket: credit in ns, one message costs 1 s / rate. */
	uint64_t icmp_credit_ns;
	sk_time_ns icmp_last;

	/* ARP cache.  Invariant: an entry is FREE iff it is on the free list;
	 * every non-FREE entry is in exactly one hash chain and one LRU list. */
	uint16_t arp_bucket[IFACE_ARP_BUCKETS]; /* chain heads, IFACE_ARP_NONE = empty */
	uint16_t arp_free;                      /* free list head (via hnext) */
	uint16_t arp_used;                      /* non-FREE entries */
	uint16_t arp_list_len[2];
	/* LRU sentinels live after the entries: index IFACE_ARP_SLOTS + list.
	 * Head (next of the sentinel) is most recent, tail (prev) the victim. */
	struct iface_arp_entry arp[IFACE_ARP_SLOTS + 2];

	unsigned npending;
	uint32_t pending_seq;
	struct iface_pending pending[IFACE_ARP_PENDING];

	struct iface_udp_port udp[IFACE_MAX_UDP_PORTS];
	struct iface_proto_handler proto[IFACE_MAX_PROTO_HANDLERS];
	iface_icmp_error_fn icmp_error_fn;
	void *icmp_error_ctx;
	iface_echo_reply_fn echo_reply_fn;
	void *echo_reply_ctx;

	/* ---- IPv6, when ip6 is set (all zero otherwise) ---- */
	bool ip6;
	uint8_t naddr6;                 /* addr6[0] is the link-local address */
	struct iface_addr6 addr6[IFACE_IP6_ADDRS];
	struct ipv6_addr gw6;           /* default router, :: = none */
	bool gw6_from_ra;               /* gw6 came from an RA, not the config */
	sk_time_ns gw6_until;           /* gw6_from_ra: when its router lifetime ends */
	bool slaac;                     /* form addresses from RA prefixes */
	bool ra_seen;                   /* an RA arrived: no more RS */
	uint8_t rs_left;                /* RS still to send once the link-local is usable */
	sk_time_ns rs_at;               /* the next RS */
	bool mld_due;                   /* a report is to be sent at the next poll */
	sk_time_ns mld_last;            /* last report sent */
	/* Cached min over the ND queue (expiry, next NS) and DAD timers. */
	sk_time_ns nd_deadline;
	uint64_t icmp6_credit_ns;       /* ICMPv6 error token bucket, as icmp_credit_ns */
	sk_time_ns icmp6_last;
	/* ND cache: the ARP cache's invariants, over nd[] */
	uint16_t nd_bucket[IFACE_ND_BUCKETS];
	uint16_t nd_free;
	uint16_t nd_used;
	uint16_t nd_list_len[2];
	struct iface_nd_entry nd[IFACE_ND_SLOTS + 2];
	unsigned npending6;
	uint32_t pending6_seq;
	struct iface_pending6 pending6[IFACE_ND_PENDING];
	struct iface_proto6_handler proto6[IFACE_MAX_PROTO_HANDLERS];
	struct iface_udp6_port udp6[IFACE_MAX_UDP_PORTS];
	iface_icmp6_error_fn icmp6_error_fn;
	void *icmp6_error_ctx;
	iface_echo6_reply_fn echo6_reply_fn;
	void *echo6_reply_ctx;
	iface_dad_fn dad_fn;
	void *dad_ctx;

	struct iface_counters counters;
};

#endif
