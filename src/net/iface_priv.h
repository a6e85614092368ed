/* iface_priv.h — what the files of src/net share with each other (and the
 * unit tests); not part of the interface API.
 *
 *   iface.c       init, rx ring walk, Ethernet demux, tx slots, poll, stats
 *   iface_arp.c   ARP cache, ARP input/output, queue of unresolved datagrams
 *   iface_ip.c    IPv4 input checks and output (route, resolve, emit)
 *   iface_icmp.c  echo, errors in (parsed) and out (rate limited)
 *   iface_udp.c   port table, UDP input and sendto
 *   iface_ip6.c   IPv6: our addresses, input checks, source selection, output
 *   iface_nd.c    neighbour cache, NS/NA, DAD, the queue of unresolved packets
 *   iface_icmp6.c ICMPv6: echo both ways, errors in and out, MLDv2 reports
 */
#ifndef NET_IFACE_PRIV_H
#define NET_IFACE_PRIV_H

#include "../wire/arp.h"
#include "../wire/eth.h"
#include "../wire/icmp.h"
#include "../wire/icmp6.h"
#include "../wire/nd.h"
#include "../wire/ipv4.h"
#include "../wire/udp.h"
#include "iface.h"

/* Time since `then`; a clock that went backwards counts as no time, so a bad
 * `now` can delay a timer but never fire one early through wrap-around. */
static inline sk_time_ns iface_elapsed(sk_time_ns now, sk_time_ns then)
{
	return now >= then ? now - then : 0;
}

static inline bool iface_mac_eq(const uint8_t a[SK_MAC_LEN], const uint8_t b[SK_MAC_LEN])
{
	return sk_memcmp(a, b, SK_MAC_LEN) == 0;
}

/* An address no neighbour may use as its own: unspecified, loopback, group,
 * limited broadcast, and our subnet broadcast. */
bool iface_ip_martian(const struct iface *ifc, uint32_t a);

/* --- iface.c: tx slots ---
 * iface_tx_begin returns the buffer of the free slot at tx->head (syncing the
 * device once if the ring is full) and its capacity, or NULL with the drop
 * counted.  Nothing else may use the tx ring until iface_tx_commit hands the
 * frame over (padded to the Ethernet minimum).  Not committing is allowed. */
uint8_t *iface_tx_begin(struct iface *ifc, size_t *cap);
void iface_tx_commit(struct iface *ifc, uint8_t *frame, size_t len);
/* An offload frame (ring.h): n consecutive free slots, each buf_size bytes;
 * iface_tx_buf(i) is the buffer of the i-th.  iface_tx_commit_vnet hands
 * the n slots over as one frame of len bytes (the struct ring_vnet at the
 * start of the first buffer included): VNET on the first, MORE on all but
 * the last.  NULL / nothing reserved when the ring has not n free slots
 * after one sync (counted). */
uint8_t *iface_tx_begin_n(struct iface *ifc, uint32_t n);
uint8_t *iface_tx_buf(struct iface *ifc, uint32_t i);
void iface_tx_commit_vnet(struct iface *ifc, uint32_t n, size_t len);

/* --- iface_arp.c --- */
void iface_arp_init(struct iface *ifc);
void iface_arp_input(struct iface *ifc, sk_time_ns now, const uint8_t *pkt, size_t len);
/* iface_config.glean: ip (on-link, not ours) was seen sending from mac. */
void iface_arp_glean(struct iface *ifc, sk_time_ns now, uint32_t ip, const uint8_t mac[SK_MAC_LEN]);
/* MAC for an on-link next hop, if known: true and *mac filled.  Marks the
 * entry active (it carries our traffic) and may send a refresh request. */
bool iface_arp_lookup(struct iface *ifc, sk_time_ns now, uint32_t ip, uint8_t mac[SK_MAC_LEN]);
/* A free queue slot for a datagram to an unresolved next hop, or -1 (counted). */
int iface_arp_queue_slot(struct iface *ifc);
/* The datagram (len bytes) is in pending[i].data: queue it and solicit. */
void iface_arp_queue_commit(struct iface *ifc, sk_time_ns now, unsigned i, uint32_t nexthop,
			    size_t len);
void iface_arp_poll(struct iface *ifc, sk_time_ns now);
/* Index of the entry for ip, or IFACE_ARP_NONE.  No side effects (tests). */
unsigned iface_arp_find(const struct iface *ifc, uint32_t ip);

/* --- iface_ip.c: output in two steps, so L4 is written in place ---
 * iface_ip_begin routes dst and reserves room for l4_len bytes, either in a tx
 * slot (next hop resolved) or in an ARP queue slot; the caller writes the L4
 * bytes at o->l4 (o->cap bytes of room) and calls iface_ip_finish with the
 * final length (<= the reserved one), or simply drops the reservation.
 * Returns 0 or -1 no route, -2 too big, -3 no room (counted). */
struct iface_ip_out {
	uint8_t *frame;   /* tx path: the Ethernet frame; NULL on the queue path */
	uint8_t *ip;      /* where the IPv4 header goes */
	uint8_t *l4;
	size_t cap;       /* room at l4 */
	uint32_t dst, nexthop;
	int pending;      /* queue slot, or -1 on the tx path */
	uint32_t nslots;  /* iface_ip_begin_vnet: tx buffers the frame spans */
};
int iface_ip_begin(struct iface *ifc, sk_time_ns now, uint32_t dst, size_t l4_len,
		   struct iface_ip_out *o);
void iface_ip_finish(struct iface *ifc, sk_time_ns now, struct iface_ip_out *o, uint8_t proto,
		     size_t l4_len);
/* Most tx buffers one offload frame may span (a 64 KiB TSO frame in 2 KiB
 * buffers is 33). */
#define IFACE_TX_MAX_SLOTS 40u
uint32_t iface_vnet_slots(const struct iface *ifc, size_t l3_len, uint32_t tso_flag);
/* An offload frame (ring.h, dev.h DEV_OFF_*): room for l4_len bytes behind
 * a struct ring_vnet, over several tx buffers when l4_len is more than the
 * MTU allows (TSO: o->nslots buffers, iface_tx_buf).  Only on a device
 * that takes it (-2 otherwise, nothing counted: the caller sends plain
 * frames) and only to a resolved next hop (-2 too: a queued datagram must
 * fit the MTU).  o->cap is the room at o->l4 in the first buffer. */
int iface_ip_begin_vnet(struct iface *ifc, sk_time_ns now, uint32_t dst, size_t l4_len,
			struct iface_ip_out *o);
/* Hand it over with the request v (its offsets from the Ethernet header). */
void iface_ip_finish_vnet(struct iface *ifc, struct iface_ip_out *o, uint8_t proto, size_t l4_len,
			  const struct ring_vnet *v);
void iface_ip_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		    const uint8_t *pkt, size_t len);

/* --- iface_icmp.c --- pkt is the whole datagram, h its parsed header. */
void iface_icmp_input(struct iface *ifc, sk_time_ns now, const struct ipv4_hdr *h,
		      const uint8_t *pkt);
/* Destination unreachable about datagram pkt, subject to the rate limit. */
void iface_icmp_unreach(struct iface *ifc, sk_time_ns now, uint8_t code,
			const struct ipv4_hdr *h, const uint8_t *pkt);

/* Token bucket: IFACE_ICMP_RATE per second, IFACE_ICMP_BURST deep; credit in
 * ns of refill time.  Shared by the ICMP and ICMPv6 error paths. */
bool iface_take_token(uint64_t *credit_ns, sk_time_ns *last, sk_time_ns now);

/* --- iface_ip6.c --- */
void iface_ip6_init(struct iface *ifc, const struct iface_config *cfg, sk_time_ns now);
/* Add a TENTATIVE address (DAD starts at the next poll); false if it is
 * there already or there is no room. */
bool iface_ip6_addr_add(struct iface *ifc, const struct ipv6_addr *a, uint8_t plen, sk_time_ns now);
/* Index of our address a (any state), or -1. */
int iface_addr6_find(const struct iface *ifc, const struct ipv6_addr *a);
/* Remove addr6[i] (never the link-local addr6[0]); later ones move down. */
void iface_ip6_addr_remove(struct iface *ifc, sk_time_ns now, unsigned i);
/* A group MAC (33:33:...) of a group we listen to: all-nodes, or the
 * solicited-node group of one of our (tentative or usable) addresses. */
bool iface_ip6_mac_joined(const struct iface *ifc, const uint8_t mac[SK_MAC_LEN]);
/* Our groups (solicited-node of each address, deduplicated) into g[]; count. */
unsigned iface_ip6_groups(const struct iface *ifc, struct ipv6_addr g[IFACE_IP6_ADDRS]);
void iface_ip6_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		     const uint8_t *pkt, size_t len);

/* Output in two steps, as on IPv4.  iface_ip6_begin picks the source
 * (iface_ip6_source), routes, and reserves room in a tx slot or an ND queue
 * slot; iface_ip6_begin_mac reserves a tx slot for a frame to a known MAC
 * (ND, MLD: never queued) with the given source.  The caller may change
 * hop_limit before iface_ip6_finish.  Returns 0 or -1 no route/source,
 * -2 too big, -3 no room (counted). */
struct iface_ip6_out {
	uint8_t *frame;   /* tx path; NULL on the queue path */
	uint8_t *ip;      /* the IPv6 header */
	uint8_t *l4;
	size_t cap;       /* room at l4 */
	struct ipv6_addr src, dst, nexthop;
	uint8_t hop_limit;
	int pending;      /* ND queue slot, or -1 */
	uint32_t nslots;  /* iface_ip6_begin_vnet: tx buffers the frame spans */
};
int iface_ip6_begin(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *dst, size_t l4_len,
		    struct iface_ip6_out *o);
/* The same from a given source (NULL: picked), which must be usable. */
int iface_ip6_begin_from(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
			 const struct ipv6_addr *dst, size_t l4_len, struct iface_ip6_out *o);
int iface_ip6_begin_mac(struct iface *ifc, const uint8_t mac[SK_MAC_LEN],
			const struct ipv6_addr *src, const struct ipv6_addr *dst, size_t l4_len,
			struct iface_ip6_out *o);
void iface_ip6_finish(struct iface *ifc, sk_time_ns now, struct iface_ip6_out *o, uint8_t proto,
		      size_t l4_len);
/* The offload frame of iface_ip_begin_vnet, over IPv6 from src (usable). */
int iface_ip6_begin_vnet(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
			 const struct ipv6_addr *dst, size_t l4_len, struct iface_ip6_out *o);
void iface_ip6_finish_vnet(struct iface *ifc, struct iface_ip6_out *o, uint8_t proto,
			   size_t l4_len, const struct ring_vnet *v);

/* --- iface_nd.c --- */
void iface_nd_init(struct iface *ifc);
/* msg/len: an ICMPv6 ND message that passed icmp6_parse; h its header. */
void iface_nd_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		    const struct ipv6_hdr *h, const uint8_t *msg, size_t len);
bool iface_nd_lookup(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *ip,
		     uint8_t mac[SK_MAC_LEN]);
int iface_nd_queue_slot(struct iface *ifc);
void iface_nd_queue_commit(struct iface *ifc, sk_time_ns now, unsigned q,
			   const struct ipv6_addr *nexthop, size_t len);
/* DAD timers, the queue, MLD reports due.  Recomputes nd_deadline. */
void iface_nd_poll(struct iface *ifc, sk_time_ns now);
void iface_nd_update_deadline(struct iface *ifc, sk_time_ns now);
/* Index of the entry for ip, or IFACE_ND_NONE.  No side effects (tests). */
unsigned iface_nd_find(const struct iface *ifc, const struct ipv6_addr *ip);

/* --- iface_icmp6.c --- pkt: the whole IPv6 packet, h its parse. */
void iface_icmp6_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		       const struct ipv6_hdr *h, const uint8_t *pkt);
/* An error about pkt, if RFC 4443 2.4(e) allows it and the bucket has a
 * token.  link_mcast: pkt came in a group or broadcast frame. */
void iface_icmp6_error(struct iface *ifc, sk_time_ns now, uint8_t type, uint8_t code,
		       uint32_t rest, const struct ipv6_hdr *h, const uint8_t *pkt, bool link_mcast);
/* An MLDv2 report joining all our groups, from the link-local address if
 * usable, else from ::. */
void iface_mld_report(struct iface *ifc, sk_time_ns now);
/* A report that leaves one group (CHANGE_TO_INCLUDE, no sources). */
void iface_mld_leave(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *group);

/* --- iface_udp.c --- bcast: the datagram was link- or IP-broadcast. */
void iface_udp_input(struct iface *ifc, sk_time_ns now, const struct ipv4_hdr *h,
		     const uint8_t *pkt, bool bcast);
/* UDP in an IPv6 packet for us (h from ipv6_parse; dst unicast or a group). */
void iface_udp6_input(struct iface *ifc, sk_time_ns now, const struct ipv6_hdr *h,
		      const uint8_t *pkt, bool link_mcast);

#endif
