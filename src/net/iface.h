/* iface.h — one interface on one device: ARP, IPv4 in/out, ICMP, UDP; and,
 * when configured, IPv6 beside it: neighbour discovery (iface_nd.c), IPv6
 * in/out (iface_ip6.c), ICMPv6 (iface_icmp6.c).
 *
 * Call order (the loop drives it; nothing here blocks or reads a clock):
 *   iface_init -> iface_announce (gratuitous ARP)
 *   each turn: dev_rx_sync; iface_rx(now) consumes the rx ring;
 *              iface_poll(now) runs due timers;  dev_tx_sync once;
 *              park until min(iface_next_deadline(), a frame).
 * Output goes straight into dev->tx slots; when the tx ring is full the
 * iface syncs it once and, if still full, drops the frame with a counter.
 * Frames to an address being resolved wait in a bounded queue; ARP requests
 * for one address go out at most once per second.
 *
 * Memory: everything is inside struct iface (fixed-size tables), so the
 * caller decides where it lives; nothing is allocated.
 */
#ifndef NET_IFACE_H
#define NET_IFACE_H

#include "../base/sk.h"
#include "../dev/dev.h"
#include "../wire/ipv6.h"

struct iface;

/* Most IPv6 addresses one interface holds: the link-local one and up to
 * IFACE_IP6_CFG_MAX configured ones. */
#define IFACE_IP6_CFG_MAX 4u
#define IFACE_IP6_ADDRS (IFACE_IP6_CFG_MAX + 1u)

struct iface_ip6_cfg {
	struct ipv6_addr addr; /* a unicast address, not link-local */
	uint8_t prefix_len;    /* 1..128: the on-link prefix */
};

struct iface_config {
	uint8_t mac[SK_MAC_LEN];
	uint32_t ip;       /* host order */
	uint8_t prefix_len;
	uint32_t gw;       /* 0 = none: off-link destinations are unreachable */
	uint16_t mtu;      /* IP MTU; 0 = dev->mtu */
	uint64_t seed;     /* randomness for the ARP table hash and IP ids */
	/* Learn an on-link IPv4 neighbour from the source MAC of every unicast
	 * IPv4 frame for us, not only from ARP.  For share-nothing workers
	 * (docs/smp.md): the kernel steers ARP to one worker (its flow hash of
	 * an ARP frame names no port), so a worker that first hears of a peer
	 * from a SYN would otherwise ask, and the reply land elsewhere.  Off by
	 * default: one worker learns from ARP alone, as before. */
	bool glean;
	/* The workers' shared neighbour board (nbr_board.h), or NULL (the
	 * default: one worker, nothing shared, no cost).  Set, the interface
	 * publishes the IPv4 neighbours ARP packets teach it and, on a miss in its own cache, takes a fresh entry
	 * from the board instead of asking: the ARP reply to another worker's
	 * request is heard by the worker the device steers ARP to (worker 0),
	 * so without the board a worker connecting out, or answering an
	 * off-link client through the gateway, would wait for an answer it
	 * never hears.  Not used on the hit path. */
	struct nbr_board *board;
	/* IPv6: off unless ip6 is set.  On, the interface derives a link-local
	 * address from its MAC, adds ip6_addr[0..nip6), runs DAD on each before
	 * using it, and routes off-link destinations through gw6 (or the
	 * router of a Router Advertisement when gw6 is ::). */
	bool ip6;
	bool ip6_slaac;    /* also form addresses from RA prefixes (RFC 4862 5.5.3) */
	uint8_t nip6;
	struct iface_ip6_cfg ip6_addr[IFACE_IP6_CFG_MAX];
	struct ipv6_addr gw6;
};

/* Receive callback of a bound UDP port.  data is valid only during the call. */
typedef void (*udp_recv_fn)(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
			    uint16_t sport, uint16_t dport, const uint8_t *data, size_t len);

/* Receive callback of a UDP port bound over IPv6 (udp6_bind); dst is the
 * address of ours the datagram came to. */
typedef void (*udp6_recv_fn)(void *ctx, struct iface *ifc, sk_time_ns now,
			     const struct ipv6_addr *src, const struct ipv6_addr *dst, uint16_t sport,
			     uint16_t dport, const uint8_t *data, size_t len);

/* Receive callback of an IPv6 echo reply (see iface_set_echo6_reply_handler). */
typedef void (*iface_echo6_reply_fn)(void *ctx, struct iface *ifc, sk_time_ns now,
				     const struct ipv6_addr *src, uint16_t id, uint16_t seq,
				     const uint8_t *payload, size_t len);
/* Called when DAD on one of our addresses ends: usable (dup false) or found
 * in use by another node (dup true: the address is never used). */
typedef void (*iface_dad_fn)(void *ctx, struct iface *ifc, const struct ipv6_addr *addr,
			     bool dup);

#include "nbr_board.h"
#include "iface_types.h" /* struct iface and its counters */

void iface_init(struct iface *ifc, struct dev *dev, const struct iface_config *cfg,
		sk_time_ns now);

/* Send a gratuitous ARP (request for our own address). */
void iface_announce(struct iface *ifc, sk_time_ns now);

/* Consume every frame in dev->rx [head, tail) and release the slots.
 * Returns the number of frames processed. */
unsigned iface_rx(struct iface *ifc, sk_time_ns now);

/* One frame, for tests and fuzzers (the ring path calls this too). */
void iface_input(struct iface *ifc, sk_time_ns now, const uint8_t *frame, size_t len);

/* Run due timers (ARP retries and expiry, queue timeouts). */
void iface_poll(struct iface *ifc, sk_time_ns now);

/* The earliest time iface_poll has work, or SK_TIME_NEVER. O(1). */
sk_time_ns iface_next_deadline(const struct iface *ifc);

/* Send an IPv4 datagram whose L4 bytes are [l4, l4+len).  Returns 0, or a
 * negative code: -1 no route, -2 too big, -3 dropped (tx ring and ARP queue
 * full).  Queued-for-ARP counts as success. */
int iface_ip_output(struct iface *ifc, sk_time_ns now, uint32_t dst, uint8_t proto,
		    const uint8_t *l4, size_t len);

/* UDP: bind a local port to a callback (at most IFACE_MAX_UDP_PORTS). Returns 0 or -1. */
int udp_bind(struct iface *ifc, uint16_t port, udp_recv_fn fn, void *ctx);
void udp_unbind(struct iface *ifc, uint16_t port);
/* Returns 0 or a negative code as iface_ip_output. */
int udp_sendto(struct iface *ifc, sk_time_ns now, uint16_t sport, uint32_t dst, uint16_t dport,
	       const uint8_t *data, size_t len);

/* Print counters "name value" lines through a callback (no stdio here). */
typedef void (*iface_stat_fn)(void *ctx, const char *name, uint64_t value);
void iface_stats(const struct iface *ifc, iface_stat_fn fn, void *ctx);

/* Hand IPv4 payloads of another protocol (e.g. TCP) to fn; fn NULL removes
 * it.  At most IFACE_MAX_PROTO_HANDLERS; ICMP and UDP are built in.
 * Returns 0 or -1.  Unhandled protocols are counted and dropped. */
int iface_set_proto_handler(struct iface *ifc, uint8_t proto, iface_proto_fn fn, void *ctx);
/* Receive ICMP errors about our own datagrams (quoted source == our IP). */
void iface_set_icmp_error_handler(struct iface *ifc, iface_icmp_error_fn fn, void *ctx);

/* Ping: send an ICMP echo request (id, seq, len payload bytes) to dst.
 * Returns 0 or a negative code as iface_ip_output (-2 also when 8+len does
 * not fit the MTU: we send no fragments). */
int icmp_ping_send(struct iface *ifc, sk_time_ns now, uint32_t dst, uint16_t id, uint16_t seq,
		   const uint8_t *payload, size_t len);
/* Receive the echo replies addressed to us (any id: the caller matches its
 * own); fn NULL removes it.  Replies are counted either way. */
void iface_set_echo_reply_handler(struct iface *ifc, iface_echo_reply_fn fn, void *ctx);

/* --- IPv6 (only with cfg->ip6) --- */

/* Send an ICMPv6 echo request to dst from the best usable source address.
 * Returns 0, -1 no route (no usable source yet: DAD still running), -2 too
 * big, -3 no room, -4 IPv6 off. */
int icmp6_ping_send(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *dst, uint16_t id,
		    uint16_t seq, const uint8_t *payload, size_t len);
void iface_set_echo6_reply_handler(struct iface *ifc, iface_echo6_reply_fn fn, void *ctx);
/* Receive ICMPv6 errors quoting a packet from one of our addresses. */
void iface_set_icmp6_error_handler(struct iface *ifc, iface_icmp6_error_fn fn, void *ctx);
void iface_set_dad_handler(struct iface *ifc, iface_dad_fn fn, void *ctx);
/* UDP over IPv6: a port table of its own (IFACE_MAX_UDP_PORTS), so a port
 * may be bound on either family or both.  Unicast to a usable address of
 * ours only; an unbound port gets port unreachable.  0 or -1. */
int udp6_bind(struct iface *ifc, uint16_t port, udp6_recv_fn fn, void *ctx);
void udp6_unbind(struct iface *ifc, uint16_t port);
/* From src if given (one of our usable addresses: a reply from the address
 * asked), else the one source selection picks.  Returns 0 or a negative
 * code as iface_ip6_output. */
int udp6_sendto(struct iface *ifc, sk_time_ns now, uint16_t sport, const struct ipv6_addr *src,
		const struct ipv6_addr *dst, uint16_t dport, const uint8_t *data, size_t len);
/* Addresses still in DAD (tentative). */
unsigned iface_ip6_tentative(const struct iface *ifc);
/* The source address output to dst would use, if one is usable. */
bool iface_ip6_source(const struct iface *ifc, const struct ipv6_addr *dst, struct ipv6_addr *src);
/* Send an IPv6 packet whose upper-layer bytes are [l4, l4+len) from src,
 * which must be one of our usable addresses (the caller's checksum covers
 * it: TCP), to dst.  Returns 0, or -1 (src not usable, no route), -2 too
 * big, -3 no room, -4 IPv6 off. */
int iface_ip6_output(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
		     const struct ipv6_addr *dst, uint8_t proto, const uint8_t *l4, size_t len);
/* As iface_set_proto_handler, for IPv6 (unicast to us only; ICMPv6 and
 * UDP are the iface's own).  Unhandled TCP gets port unreachable. */
int iface_set_proto6_handler(struct iface *ifc, uint8_t proto, iface_proto6_fn fn, void *ctx);

#endif
