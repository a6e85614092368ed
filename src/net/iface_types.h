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
 */
#ifndef NET_IFACE_TYPES_H
#define NET_IFACE_TYPES_H

#include "../base/sk.h"

#define IFACE_MAX_MTU 1500u
#define IFACE_ARP_SLOTS 256u          /* < IFACE_ARP_NONE */
#define IFACE_ARP_BUCKETS 512u        /* power of two */
#define IFACE_ARP_BUCKET_BITS 9
#define IFACE_ARP_PENDING 32u
#define IFACE_MAX_UDP_PORTS 16u
#define IFACE_MAX_PROTO_HANDLERS 2u   /* e.g. TCP, later */
#define IFACE_ARP_NONE 0xffffu

/* An entry is trusted for this long after an ARP packet confirmed it. */
#define IFACE_ARP_REACHABLE_NS (60 * SK_NS_PER_S)
/* After that, output keeps using the old MAC while refresh requests go out;
 * with no answer for this long the entry falls back to incomplete. */
#define IFACE_ARP_REFRESH_NS (3 * SK_NS_PER_S)
/* At most one request per address per interval (RFC 1122 2.3.2.1). */
#define IFACE_ARP_RETRY_NS SK_NS_PER_S
/* A datagram waits this long for its next hop to resolve. */
#define IFACE_ARP_QUEUE_NS (3 * SK_NS_PER_S)
/* ICMP errors: token bucket, IFACE_ICMP_RATE per second, IFACE_ICMP_BURST deep. */
#define IFACE_ICMP_RATE 100u
#define IFACE_ICMP_BURST 20u

/* Every counter, with the name iface_stats prints.  One list, so a counter
 * cannot exist without a name.  Each drop reason has its own counter. */
#define IFACE_COUNTERS(X)                                                                 \
	/* device ring */                                                                 \
	X(rx_frames, "iface.rx_frames")           /* frames handed to iface_input */        \
	X(dev_bad_slot, "iface.bad_slot")         /* rx/tx slot with buf_idx or len out of range */ \
	X(tx_frames, "iface.tx_frames")           /* frames placed in tx slots */           \
	X(tx_full_syncs, "iface.tx_full_syncs")   /* tx ring full: synced once to make room */ \
	X(tx_ring_full, "iface.tx_ring_full")     /* still full after the sync: frame dropped */ \
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
	X(udp_tx, "udp.tx")

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

struct iface_udp_port {
	uint16_t port;      /* 0 = free slot */
	udp_recv_fn fn;
	void *ctx;
};

struct icmp_error;
/* Receives an ICMP error about one of our datagrams (e.g. for TCP). */
typedef void (*iface_icmp_error_fn)(void *ctx, struct iface *ifc, sk_time_ns now,
				    const struct icmp_error *e);
/* Receives an IPv4 payload of a registered protocol; l4 is valid during the call. */
typedef void (*iface_proto_fn)(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
			       uint32_t dst, const uint8_t *l4, size_t len);

/* Receives an echo reply addressed to us (for a pinger); payload is the
 * data after the 8-byte ICMP header, valid only during the call. */
typedef void (*iface_echo_reply_fn)(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
				    uint16_t id, uint16_t seq, const uint8_t *payload, size_t len);

struct iface_proto_handler {
	uint8_t proto;      /* 0 = free */
	iface_proto_fn fn;
	void *ctx;
};

struct iface {
	struct dev *dev;

	/* configuration, fixed at iface_init */
	uint8_t mac[SK_MAC_LEN];
	uint16_t mtu;         /* IP MTU actually used: <= IFACE_MAX_MTU and tx buf_size - 14 */
	uint32_t ip, mask, gw;
	uint32_t bcast;       /* subnet broadcast, or 0 when the prefix has none (/31, /32) */
	uint64_t hash_k1, hash_k2; /* secret ARP hash keys from cfg->seed; k2 odd */

	uint16_t ip_id;       /* next IPv4 id; starts at a seeded value */

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

	struct iface_counters counters;
};

#endif
