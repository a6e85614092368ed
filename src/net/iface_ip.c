/* iface_ip.c — IPv4 input (checks, demux) and output (route, resolve, emit).
 *
 * Input:  iface_ip_input -> iface_icmp_input | iface_udp_input | a registered
 *         protocol handler.  Accepted: unicast to our address, and broadcast
 *         (limited or subnet) for UDP only.  Fragments are dropped (counted):
 *         skiff sends no fragments and reassembles none.
 * Output: iface_ip_begin / iface_ip_finish write the datagram in place, in a
 *         tx slot when the next hop is resolved, else in an ARP queue slot.
 *         Every datagram has DF set (we rely on PMTU discovery, RFC 1191)
 *         and an id from a per-interface counter (RFC 6864: any value is
 *         fine for atomic datagrams; seeded so ids do not reveal uptime).
 */
#include "iface_priv.h"

static bool ip_is_bcast(const struct iface *ifc, uint32_t a)
{
	return a == 0xffffffffu || (ifc->bcast != 0 && a == ifc->bcast);
}

/* Route dst: the next hop and, if resolved, its MAC.  0, or -1 no route
 * (counted). */
static int ip_route(struct iface *ifc, sk_time_ns now, uint32_t dst, uint32_t *nexthop,
		    uint8_t mac[SK_MAC_LEN], bool *resolved)
{
	struct iface_counters *c = &ifc->counters;
	*nexthop = dst;
	if (ip_is_bcast(ifc, dst)) {
		sk_memcpy(mac, eth_broadcast, SK_MAC_LEN);
		*resolved = true;
		return 0;
	}
	/* No loopback and no multicast output: nothing here needs them. */
	if (dst == 0 || dst == ifc->ip || (dst >> 24) == 127 || (dst >> 28) == 0xe) {
		c->ip_no_route++;
		return -1;
	}
	if ((dst & ifc->mask) != (ifc->ip & ifc->mask)) {
		if (!ifc->gw) {
			c->ip_no_route++;
			return -1;
		}
		*nexthop = ifc->gw;
	}
	*resolved = iface_arp_lookup(ifc, now, *nexthop, mac);
	return 0;
}

int iface_ip_begin(struct iface *ifc, sk_time_ns now, uint32_t dst, size_t l4_len,
		   struct iface_ip_out *o)
{
	struct iface_counters *c = &ifc->counters;
	if (l4_len > (size_t)ifc->mtu || IPV4_HLEN + l4_len > ifc->mtu) {
		c->ip_too_big++;
		return -2;
	}
	uint8_t mac[SK_MAC_LEN];
	uint32_t nexthop;
	bool resolved;
	if (ip_route(ifc, now, dst, &nexthop, mac, &resolved) < 0)
		return -1;
	o->dst = dst;
	o->nexthop = nexthop;
	o->nslots = 1;
	if (resolved) {
		size_t cap;
		uint8_t *f = iface_tx_begin(ifc, &cap);
		if (!f)
			return -3;
		if (cap < ETH_HLEN + IPV4_HLEN + l4_len) {
			c->ip_too_big++; /* the MTU was sized from buf_size: cannot happen */
			return -2;
		}
		eth_emit(f, cap, mac, ifc->mac, ETH_TYPE_IPV4);
		o->frame = f;
		o->ip = f + ETH_HLEN;
		o->cap = cap - ETH_HLEN - IPV4_HLEN;
		o->pending = -1;
	} else {
		int q = iface_arp_queue_slot(ifc);
		if (q < 0)
			return -3;
		o->frame = NULL;
		o->ip = ifc->pending[q].data;
		o->cap = IFACE_MAX_MTU - IPV4_HLEN;
		o->pending = q;
	}
	o->l4 = o->ip + IPV4_HLEN;
	return 0;
}

/* Buffers an offload frame of `bytes` (ring_vnet and Ethernet frame) takes,
 * or 0 when the device cannot take it: a frame over the MTU needs TSO of
 * this family and must fit tso_max, 16-bit IP lengths and our buffers. */
uint32_t iface_vnet_slots(const struct iface *ifc, size_t l3_len, uint32_t tso_flag)
{
	const struct dev *d = ifc->dev;
	if (!(d->offload & DEV_OFF_TX_CSUM))
		return 0;
	if (l3_len > ifc->mtu &&
	    (!(d->offload & tso_flag) || ETH_HLEN + l3_len > d->tso_max || l3_len > 0xffff + 40u))
		return 0;
	size_t bytes = sizeof(struct ring_vnet) + ETH_HLEN + l3_len;
	size_t bs = d->tx->buf_size;
	size_t n = (bytes + bs - 1) / bs;
	return n <= IFACE_TX_MAX_SLOTS ? (uint32_t)n : 0;
}

int iface_ip_begin_vnet(struct iface *ifc, sk_time_ns now, uint32_t dst, size_t l4_len,
			struct iface_ip_out *o)
{
	if (IPV4_HLEN + l4_len > 0xffff)
		return -2;
	uint32_t n = iface_vnet_slots(ifc, IPV4_HLEN + l4_len, DEV_OFF_TSO4);
	if (n == 0)
		return -2;
	uint8_t mac[SK_MAC_LEN];
	uint32_t nexthop;
	bool resolved;
	if (ip_route(ifc, now, dst, &nexthop, mac, &resolved) < 0)
		return -1;
	if (!resolved)
		return -2;
	uint8_t *f = iface_tx_begin_n(ifc, n);
	if (!f)
		return -3;
	uint8_t *eth = f + sizeof(struct ring_vnet);
	eth_emit(eth, ETH_HLEN, mac, ifc->mac, ETH_TYPE_IPV4);
	o->dst = dst;
	o->nexthop = nexthop;
	o->frame = f;
	o->ip = eth + ETH_HLEN;
	o->l4 = o->ip + IPV4_HLEN;
	o->cap = ifc->dev->tx->buf_size - (size_t)(o->l4 - f);
	o->pending = -1;
	o->nslots = n;
	return 0;
}

void iface_ip_finish_vnet(struct iface *ifc, struct iface_ip_out *o, uint8_t proto, size_t l4_len,
			  const struct ring_vnet *v)
{
	struct ipv4_hdr h = {
		.id = ifc->ip_id,
		.frag = IPV4_FLAG_DF,
		.ttl = IPV4_DEFAULT_TTL,
		.proto = proto,
		.src = ifc->ip,
		.dst = o->dst,
	};
	/* A TSO frame stands for several datagrams; the device numbers them
	 * on from this id, so the next frame's id starts past them. */
	ifc->ip_id = (uint16_t)(ifc->ip_id + (v->gso_size ? (l4_len - (v->hdr_len - ETH_HLEN - IPV4_HLEN) + v->gso_size - 1) / v->gso_size : 1));
	ipv4_emit(o->ip, IPV4_HLEN, &h, (uint16_t)l4_len);
	sk_memcpy(o->frame, v, sizeof(*v));
	ifc->counters.ip_tx++;
	iface_tx_commit_vnet(ifc, o->nslots, sizeof(*v) + ETH_HLEN + IPV4_HLEN + l4_len);
}

void iface_ip_finish(struct iface *ifc, sk_time_ns now, struct iface_ip_out *o, uint8_t proto,
		     size_t l4_len)
{
	struct ipv4_hdr h = {
		.id = ifc->ip_id++,
		.frag = IPV4_FLAG_DF,
		.ttl = IPV4_DEFAULT_TTL,
		.proto = proto,
		.src = ifc->ip,
		.dst = o->dst,
	};
	ipv4_emit(o->ip, IPV4_HLEN, &h, (uint16_t)l4_len);
	ifc->counters.ip_tx++;
	if (o->frame)
		iface_tx_commit(ifc, o->frame, ETH_HLEN + IPV4_HLEN + l4_len);
	else
		iface_arp_queue_commit(ifc, now, (unsigned)o->pending, o->nexthop, IPV4_HLEN + l4_len);
}

int iface_ip_output(struct iface *ifc, sk_time_ns now, uint32_t dst, uint8_t proto,
		    const uint8_t *l4, size_t len)
{
	struct iface_ip_out o;
	int rc = iface_ip_begin(ifc, now, dst, len, &o);
	if (rc != 0)
		return rc;
	if (len)
		sk_memmove(o.l4, l4, len);
	iface_ip_finish(ifc, now, &o, proto, len);
	return 0;
}

void iface_ip_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		    const uint8_t *pkt, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	struct ipv4_hdr h;
	int rc = ipv4_parse(pkt, len, &h);
	switch (rc) {
	case WIRE_OK: break;
	case WIRE_ETRUNC: c->ip_truncated++; return;
	case WIRE_EBADLEN: c->ip_bad_len++; return;
	case WIRE_ECSUM: c->ip_csum++; return;
	case WIRE_EVERSION: c->ip_version++; return;
	case WIRE_EFRAG: c->ip_frag_dropped++; return;
	case WIRE_EBADADDR: c->ip_bad_src++; return;
	default: c->ip_bad++; return;
	}
	bool ip_bcast;
	if (h.dst == ifc->ip) {
		ip_bcast = false;
	} else if (ip_is_bcast(ifc, h.dst)) {
		ip_bcast = true;
	} else {
		c->ip_not_for_us++;
		return;
	}
	/* Martian sources (RFC 1122 3.2.1.3): ours, loopback, our broadcast.
	 * 0.0.0.0 only to broadcast: a client with no address yet. */
	if (h.src == ifc->ip || (h.src >> 24) == 127 || (ifc->bcast != 0 && h.src == ifc->bcast) ||
	    (h.src == 0 && !ip_bcast)) {
		c->ip_bad_src++;
		return;
	}
	c->ip_rx++;
	if (sk_unlikely(ifc->glean) && !ip_bcast && h.src != 0 &&
	    ((h.src ^ ifc->ip) & ifc->mask) == 0)
		iface_arp_glean(ifc, now, h.src, eh->src);
	if (h.proto == IPV4_PROTO_UDP) {
		iface_udp_input(ifc, now, &h, pkt, ip_bcast || eth_is_broadcast(eh->dst));
		return;
	}
	if (ip_bcast) {
		c->ip_bcast_not_udp++;
		return;
	}
	if (h.proto == IPV4_PROTO_ICMP) {
		iface_icmp_input(ifc, now, &h, pkt);
		return;
	}
	for (unsigned i = 0; i < IFACE_MAX_PROTO_HANDLERS; i++) {
		const struct iface_proto_handler *p = &ifc->proto[i];
		if (p->proto == h.proto && p->fn) {
			p->fn(p->ctx, ifc, now, h.src, h.dst, pkt + h.payload_off, h.payload_len);
			return;
		}
	}
	c->ip_unknown_proto++;
}
