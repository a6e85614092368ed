/* iface_ip6.c — IPv6 beside IPv4 (RFC 8200): our addresses, input checks
 * and demux, source selection, routing and output.
 *
 * Input:  iface_input (Ethernet type 86dd, to our MAC, broadcast or a group
 *         we joined) -> iface_ip6_input -> iface_icmp6_input, or the
 *         iface_udp6_input (iface_udp.c), or the handler of a registered
 *         protocol (TCP: tcp_iface.c) for unicast to us; for the rest an
 *         error goes back (port unreachable for TCP without a handler,
 *         parameter problem otherwise).
 *         Accepted destinations: a usable address of ours, all-nodes
 *         (ff02::1), and the solicited-node group of any of our addresses.
 *         A tentative address takes only the NS/NA of its DAD (RFC 4862 5.4).
 *         Fragments, routing type 0 and bad extension headers are dropped
 *         and counted by the walk's verdict (wire/ipv6.h).
 * Output: iface_ip6_begin / iface_ip6_finish, in place, in a tx slot when the
 *         next hop is known, else in an ND queue slot (iface_nd.c).
 */
#include "iface_priv.h"

bool iface_ip6_addr_add(struct iface *ifc, const struct ipv6_addr *a, uint8_t plen, sk_time_ns now)
{
	if (ifc->naddr6 >= IFACE_IP6_ADDRS || iface_addr6_find(ifc, a) >= 0)
		return false;
	struct iface_addr6 *x = &ifc->addr6[ifc->naddr6++];
	x->a = *a;
	x->plen = plen;
	x->state = IFACE_ADDR6_TENTATIVE;
	x->dad_sent = 0;
	x->dad_at = now; /* the first probe at the next poll */
	x->preferred_until = x->valid_until = SK_TIME_NEVER;
	x->slaac = x->deprecated = false;
	/* A nonce per address (RFC 7527): a probe that comes back to us
	 * through a looping link is recognised as ours, not a duplicate.  It
	 * need not be secret, only differ from other nodes': the seeded keys
	 * and the address give that. */
	uint64_t rnd = ifc->hash_k1 ^ sk_get_be32(a->b + 12) ^ ((uint64_t)ifc->naddr6 << 40);
	for (unsigned i = 0; i < ND_NONCE_LEN; i++) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		x->nonce[i] = (uint8_t)(rnd >> 56);
	}
	ifc->mld_due = true; /* a new solicited-node group, maybe */
	ifc->nd_deadline = SK_MIN(ifc->nd_deadline, now);
	return true;
}

void iface_ip6_init(struct iface *ifc, const struct iface_config *cfg, sk_time_ns now)
{
	ifc->nd_deadline = SK_TIME_NEVER;
	iface_nd_init(ifc);
	if (!cfg->ip6)
		return;
	ifc->ip6 = true;
	ifc->icmp6_credit_ns = (uint64_t)IFACE_ICMP_BURST * (SK_NS_PER_S / IFACE_ICMP_RATE);
	ifc->icmp6_last = now;
	struct ipv6_addr ll;
	ipv6_link_local_from_mac(&ll, ifc->mac);
	iface_ip6_addr_add(ifc, &ll, 64, now);
	for (unsigned i = 0; i < cfg->nip6 && i < IFACE_IP6_CFG_MAX; i++) {
		const struct iface_ip6_cfg *c = &cfg->ip6_addr[i];
		if (ipv6_is_unicast(&c->addr) && c->prefix_len >= 1 && c->prefix_len <= 128)
			iface_ip6_addr_add(ifc, &c->addr, c->prefix_len, now);
	}
	ifc->gw6 = cfg->gw6;
	ifc->slaac = cfg->ip6_slaac;
	ifc->mld_due = true; /* join our groups before the first DAD probe */
	ifc->nd_deadline = now;
}

void iface_ip6_addr_remove(struct iface *ifc, sk_time_ns now, unsigned i)
{
	if (i == 0 || i >= ifc->naddr6)
		return; /* the link-local address stays for the life of the iface */
	struct ipv6_addr gone = ifc->addr6[i].a;
	for (unsigned j = i + 1; j < ifc->naddr6; j++)
		ifc->addr6[j - 1] = ifc->addr6[j];
	ifc->naddr6--;
	/* Leave its solicited-node group unless another address maps to the
	 * same one (a SLAAC address and the link-local share their IID). */
	struct ipv6_addr g, s;
	ipv6_solicited_node(&g, &gone);
	for (unsigned j = 0; j < ifc->naddr6; j++) {
		ipv6_solicited_node(&s, &ifc->addr6[j].a);
		if (ifc->addr6[j].state != IFACE_ADDR6_DUPLICATE && ipv6_addr_eq(&s, &g))
			return;
	}
	iface_mld_leave(ifc, now, &g);
}

int iface_addr6_find(const struct iface *ifc, const struct ipv6_addr *a)
{
	for (unsigned i = 0; i < ifc->naddr6; i++)
		if (ipv6_addr_eq(&ifc->addr6[i].a, a))
			return (int)i;
	return -1;
}

unsigned iface_ip6_tentative(const struct iface *ifc)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ifc->naddr6; i++)
		n += ifc->addr6[i].state == IFACE_ADDR6_TENTATIVE;
	return n;
}

unsigned iface_ip6_groups(const struct iface *ifc, struct ipv6_addr g[IFACE_IP6_ADDRS])
{
	unsigned n = 0;
	for (unsigned i = 0; i < ifc->naddr6; i++) {
		if (ifc->addr6[i].state == IFACE_ADDR6_DUPLICATE)
			continue;
		struct ipv6_addr s;
		ipv6_solicited_node(&s, &ifc->addr6[i].a);
		bool seen = false;
		for (unsigned j = 0; j < n; j++)
			seen |= ipv6_addr_eq(&g[j], &s);
		if (!seen)
			g[n++] = s;
	}
	return n;
}

/* A group we listen to: all-nodes, or a solicited-node group of ours. */
static bool ip6_group_joined(const struct iface *ifc, const struct ipv6_addr *g)
{
	if (ipv6_addr_eq(g, &ipv6_all_nodes))
		return true;
	if (!ipv6_is_solicited_node(g))
		return false;
	for (unsigned i = 0; i < ifc->naddr6; i++) {
		struct ipv6_addr s;
		ipv6_solicited_node(&s, &ifc->addr6[i].a);
		if (ifc->addr6[i].state != IFACE_ADDR6_DUPLICATE && ipv6_addr_eq(&s, g))
			return true;
	}
	return false;
}

bool iface_ip6_mac_joined(const struct iface *ifc, const uint8_t mac[SK_MAC_LEN])
{
	if (!ifc->ip6 || mac[0] != 0x33 || mac[1] != 0x33)
		return false;
	uint8_t m[SK_MAC_LEN];
	ipv6_mcast_mac(m, &ipv6_all_nodes);
	if (iface_mac_eq(m, mac))
		return true;
	for (unsigned i = 0; i < ifc->naddr6; i++) {
		struct ipv6_addr s;
		ipv6_solicited_node(&s, &ifc->addr6[i].a);
		ipv6_mcast_mac(m, &s);
		if (ifc->addr6[i].state != IFACE_ADDR6_DUPLICATE && iface_mac_eq(m, mac))
			return true;
	}
	return false;
}

bool iface_ip6_source(const struct iface *ifc, const struct ipv6_addr *dst, struct ipv6_addr *src)
{
	if (!ifc->ip6)
		return false;
	/* Link scope (fe80::/10, ff02::/16): the link-local address.
	 * Otherwise the usable global that shares the longest prefix with dst
	 * (RFC 6724 rule 8, the one that matters on a host with a few
	 * static addresses), never the link-local one (rule 2: scope). */
	bool link_scope = ipv6_is_link_local(dst) || (ipv6_is_multicast(dst) && (dst->b[1] & 0x0f) <= 2);
	int best = -1;
	unsigned best_len = 0;
	for (unsigned i = 0; i < ifc->naddr6; i++) {
		const struct iface_addr6 *x = &ifc->addr6[i];
		if (x->state != IFACE_ADDR6_PREFERRED || ipv6_is_link_local(&x->a) != link_scope)
			continue;
		/* Rule 3 (avoid deprecated) ranks above rule 8: a deprecated
		 * address is the source only when no other will do. */
		unsigned l = x->deprecated ? 0 : 256;
		while ((l & 255) < 128 && ipv6_prefix_eq(&x->a, dst, (l & 255) + 1))
			l++;
		if (best < 0 || l > best_len) {
			best = (int)i;
			best_len = l;
		}
	}
	if (best < 0)
		return false;
	*src = ifc->addr6[best].a;
	return true;
}

/* On-link: link-local, or inside the prefix of one of our addresses. */
static bool ip6_onlink(const struct iface *ifc, const struct ipv6_addr *dst)
{
	if (ipv6_is_link_local(dst))
		return true;
	for (unsigned i = 0; i < ifc->naddr6; i++)
		if (!ipv6_is_link_local(&ifc->addr6[i].a) &&
		    ipv6_prefix_eq(&ifc->addr6[i].a, dst, ifc->addr6[i].plen))
			return true;
	return false;
}

/* The tx slot part of both begins. */
static int ip6_begin_tx(struct iface *ifc, const uint8_t mac[SK_MAC_LEN], size_t l4_len,
			struct iface_ip6_out *o)
{
	size_t cap;
	uint8_t *f = iface_tx_begin(ifc, &cap);
	if (!f)
		return -3;
	if (cap < ETH_HLEN + IPV6_HLEN + l4_len) {
		ifc->counters.ip6_too_big++; /* the MTU was sized from buf_size: cannot happen */
		return -2;
	}
	eth_emit(f, cap, mac, ifc->mac, ETH_TYPE_IPV6);
	o->frame = f;
	o->ip = f + ETH_HLEN;
	o->l4 = o->ip + IPV6_HLEN;
	o->cap = cap - ETH_HLEN - IPV6_HLEN;
	o->pending = -1;
	o->nslots = 1;
	return 0;
}

int iface_ip6_begin_mac(struct iface *ifc, const uint8_t mac[SK_MAC_LEN],
			const struct ipv6_addr *src, const struct ipv6_addr *dst, size_t l4_len,
			struct iface_ip6_out *o)
{
	if (IPV6_HLEN + l4_len > ifc->mtu) {
		ifc->counters.ip6_too_big++;
		return -2;
	}
	o->src = *src;
	o->dst = *dst;
	o->nexthop = *dst;
	o->hop_limit = IPV6_DEFAULT_HOP_LIMIT;
	return ip6_begin_tx(ifc, mac, l4_len, o);
}

/* src NULL: iface_ip6_source picks it; else it must be usable. */
int iface_ip6_begin_from(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
			  const struct ipv6_addr *dst, size_t l4_len, struct iface_ip6_out *o)
{
	struct iface_counters *c = &ifc->counters;
	int si = src ? iface_addr6_find(ifc, src) : -1;
	if (src && si >= 0 && ifc->addr6[si].state == IFACE_ADDR6_PREFERRED)
		o->src = *src;
	else if (src)
		si = -1;
	if (!ifc->ip6 || !ipv6_is_unicast(dst) || iface_addr6_find(ifc, dst) >= 0 ||
	    (src ? si < 0 : !iface_ip6_source(ifc, dst, &o->src))) {
		c->ip6_no_route++; /* no loopback; no usable source address yet */
		return -1;
	}
	if (l4_len > (size_t)ifc->mtu || IPV6_HLEN + l4_len > ifc->mtu) {
		c->ip6_too_big++;
		return -2;
	}
	o->dst = *dst;
	o->nexthop = *dst;
	o->hop_limit = IPV6_DEFAULT_HOP_LIMIT;
	if (!ip6_onlink(ifc, dst)) {
		if (ipv6_is_unspecified(&ifc->gw6)) {
			c->ip6_no_route++;
			return -1;
		}
		o->nexthop = ifc->gw6;
	}
	uint8_t mac[SK_MAC_LEN];
	if (iface_nd_lookup(ifc, now, &o->nexthop, mac))
		return ip6_begin_tx(ifc, mac, l4_len, o);
	int q = iface_nd_queue_slot(ifc);
	if (q < 0)
		return -3;
	o->frame = NULL;
	o->ip = ifc->pending6[q].data;
	o->l4 = o->ip + IPV6_HLEN;
	o->cap = IFACE_MAX_MTU - IPV6_HLEN;
	o->pending = q;
	o->nslots = 1;
	return 0;
}

int iface_ip6_begin_vnet(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
			 const struct ipv6_addr *dst, size_t l4_len, struct iface_ip6_out *o)
{
	if (!ifc->ip6 || l4_len > 0xffff)
		return -2;
	uint32_t n = iface_vnet_slots(ifc, IPV6_HLEN + l4_len, DEV_OFF_TSO6);
	if (n == 0)
		return -2;
	/* The route and the neighbour as iface_ip6_begin_from finds them; a
	 * datagram that would wait for ND goes the plain way. */
	int si = iface_addr6_find(ifc, src);
	if (si < 0 || ifc->addr6[si].state != IFACE_ADDR6_PREFERRED || !ipv6_is_unicast(dst) ||
	    iface_addr6_find(ifc, dst) >= 0)
		return -2;
	struct ipv6_addr nexthop = *dst;
	if (!ip6_onlink(ifc, dst)) {
		if (ipv6_is_unspecified(&ifc->gw6))
			return -2;
		nexthop = ifc->gw6;
	}
	uint8_t mac[SK_MAC_LEN];
	if (!iface_nd_lookup(ifc, now, &nexthop, mac))
		return -2;
	uint8_t *f = iface_tx_begin_n(ifc, n);
	if (!f)
		return -3;
	uint8_t *eth = f + sizeof(struct ring_vnet);
	eth_emit(eth, ETH_HLEN, mac, ifc->mac, ETH_TYPE_IPV6);
	o->src = *src;
	o->dst = *dst;
	o->nexthop = nexthop;
	o->hop_limit = IPV6_DEFAULT_HOP_LIMIT;
	o->frame = f;
	o->ip = eth + ETH_HLEN;
	o->l4 = o->ip + IPV6_HLEN;
	o->cap = ifc->dev->tx->buf_size - (size_t)(o->l4 - f);
	o->pending = -1;
	o->nslots = n;
	return 0;
}

void iface_ip6_finish_vnet(struct iface *ifc, struct iface_ip6_out *o, uint8_t proto,
			   size_t l4_len, const struct ring_vnet *v)
{
	struct ipv6_hdr h = {.next = proto, .hop_limit = o->hop_limit, .src = o->src, .dst = o->dst};
	ipv6_emit(o->ip, IPV6_HLEN, &h, (uint16_t)l4_len);
	sk_memcpy(o->frame, v, sizeof(*v));
	ifc->counters.ip6_tx++;
	iface_tx_commit_vnet(ifc, o->nslots, sizeof(*v) + ETH_HLEN + IPV6_HLEN + l4_len);
}

int iface_ip6_begin(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *dst, size_t l4_len,
		    struct iface_ip6_out *o)
{
	return iface_ip6_begin_from(ifc, now, NULL, dst, l4_len, o);
}

int iface_ip6_output(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
		     const struct ipv6_addr *dst, uint8_t proto, const uint8_t *l4, size_t len)
{
	if (!ifc->ip6)
		return -4;
	struct iface_ip6_out o;
	int rc = iface_ip6_begin_from(ifc, now, src, dst, len, &o);
	if (rc != 0)
		return rc;
	if (len)
		sk_memmove(o.l4, l4, len);
	iface_ip6_finish(ifc, now, &o, proto, len);
	return 0;
}

int iface_set_proto6_handler(struct iface *ifc, uint8_t proto, iface_proto6_fn fn, void *ctx)
{
	/* ICMPv6 and UDP are ours; 0 marks a free slot; extension headers
	 * are the walk's. */
	if (proto == 0 || proto == IPV6_NH_ICMPV6 || proto == IPV6_NH_UDP ||
	    proto == IPV6_NH_NONE || proto == IPV6_NH_ROUTING || proto == IPV6_NH_FRAGMENT ||
	    proto == IPV6_NH_DSTOPTS)
		return -1;
	struct iface_proto6_handler *slot = NULL;
	for (unsigned i = 0; i < IFACE_MAX_PROTO_HANDLERS; i++) {
		if (ifc->proto6[i].proto == proto) {
			slot = &ifc->proto6[i];
			break;
		}
		if (!slot && ifc->proto6[i].proto == 0)
			slot = &ifc->proto6[i];
	}
	if (!slot)
		return -1;
	*slot = fn ? (struct iface_proto6_handler){proto, fn, ctx} : (struct iface_proto6_handler){0};
	return 0;
}

void iface_ip6_finish(struct iface *ifc, sk_time_ns now, struct iface_ip6_out *o, uint8_t proto,
		      size_t l4_len)
{
	struct ipv6_hdr h = {.next = proto, .hop_limit = o->hop_limit, .src = o->src, .dst = o->dst};
	ipv6_emit(o->ip, IPV6_HLEN, &h, (uint16_t)l4_len);
	ifc->counters.ip6_tx++;
	if (o->frame)
		iface_tx_commit(ifc, o->frame, ETH_HLEN + IPV6_HLEN + l4_len);
	else
		iface_nd_queue_commit(ifc, now, (unsigned)o->pending, &o->nexthop, IPV6_HLEN + l4_len);
}

/* An ICMPv6 NA/NS (what a tentative address may receive), by its type byte. */
static bool ip6_is_nd_ns_na(const struct ipv6_hdr *h, const uint8_t *pkt)
{
	return h->proto == IPV6_NH_ICMPV6 && h->l4_len >= 1 &&
	       (pkt[h->l4_off] == ND_NS || pkt[h->l4_off] == ND_NA);
}

void iface_ip6_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		     const uint8_t *pkt, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	if (!ifc->ip6) {
		c->eth_v6_off++;
		return;
	}
	bool link_mcast = eth_is_multicast(eh->dst);
	struct ipv6_hdr h;
	int rc = ipv6_parse(pkt, len, &h);
	switch (rc) {
	case WIRE_OK: break;
	case WIRE_ETRUNC: c->ip6_truncated++; return;
	case WIRE_EBADLEN: c->ip6_bad_len++; return;
	case WIRE_EVERSION: c->ip6_version++; return;
	case WIRE_EFRAG: c->ip6_frag_dropped++; return;
	case WIRE_EBADADDR: c->ip6_bad_addr++; return;
	case WIRE_ELIMIT: c->ip6_ext_limit++; return;
	case WIRE_EROUTE:
	case WIRE_EEXT:
	case WIRE_EOPT:
		if (rc == WIRE_EROUTE)
			c->ip6_route_dropped++;
		else if (rc == WIRE_EEXT)
			c->ip6_bad_ext++;
		else
			c->ip6_bad_opt++;
		/* The walk says whether RFC 8200 wants a Parameter Problem, and
		 * only to a packet for us. */
		if (h.pp_code >= 0 && iface_addr6_find(ifc, &h.dst) >= 0 &&
		    ifc->addr6[iface_addr6_find(ifc, &h.dst)].state == IFACE_ADDR6_PREFERRED)
			iface_icmp6_error(ifc, now, ICMP6_PARAM_PROBLEM, (uint8_t)h.pp_code, h.pp_ptr,
					  &h, pkt, link_mcast);
		return;
	default: c->ip6_bad++; return;
	}
	/* Destination. */
	if (ipv6_is_multicast(&h.dst)) {
		if (!ip6_group_joined(ifc, &h.dst)) {
			c->ip6_not_for_us++;
			return;
		}
	} else {
		int i = iface_addr6_find(ifc, &h.dst);
		if (i < 0) {
			c->ip6_not_for_us++;
			return;
		}
		if (ifc->addr6[i].state != IFACE_ADDR6_PREFERRED && !ip6_is_nd_ns_na(&h, pkt)) {
			c->ip6_tentative++;
			return;
		}
	}
	/* Source: :: only for what a node without an address sends (DAD
	 * probes, MLD reports); our own address only in the NA by which
	 * another holder of it answers our DAD (or defends it). */
	if (ipv6_is_unspecified(&h.src) ? h.proto != IPV6_NH_ICMPV6
					 : (iface_addr6_find(ifc, &h.src) >= 0 &&
					    !(h.proto == IPV6_NH_ICMPV6 && h.l4_len >= 1 &&
					      pkt[h.l4_off] == ND_NA))) {
		c->ip6_bad_src++;
		return;
	}
	c->ip6_rx++;
	if (h.proto == IPV6_NH_ICMPV6) {
		iface_icmp6_input(ifc, now, eh, &h, pkt);
		return;
	}
	if (h.proto == IPV6_NH_NONE)
		return;
	if (h.proto == IPV6_NH_UDP) {
		iface_udp6_input(ifc, now, &h, pkt, link_mcast);
		return;
	}
	for (unsigned i = 0; i < IFACE_MAX_PROTO_HANDLERS; i++) {
		const struct iface_proto6_handler *p = &ifc->proto6[i];
		if (p->proto == h.proto && p->fn) {
			if (ipv6_is_multicast(&h.dst)) {
				c->ip6_l4_mcast++; /* TCP is unicast (RFC 9293 3.9.1) */
				return;
			}
			p->fn(p->ctx, ifc, now, &h.src, &h.dst, pkt + h.l4_off, h.l4_len);
			return;
		}
	}
	c->ip6_unknown_proto++;
	/* No handler for TCP (no TCP engine attached): say so as a closed
	 * port would; any other protocol is an unrecognised next header. */
	if (h.proto == IPV6_NH_TCP)
		iface_icmp6_error(ifc, now, ICMP6_DEST_UNREACH, ICMP6_UNREACH_PORT, 0, &h, pkt,
				  link_mcast);
	else if (h.next_ext == 0) /* the pointer is then the fixed header's field */
		iface_icmp6_error(ifc, now, ICMP6_PARAM_PROBLEM, IPV6_PP_NEXT, 6, &h, pkt,
				  link_mcast);
}
