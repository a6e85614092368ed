/* iface_udp.c — UDP ports (a table of IFACE_MAX_UDP_PORTS, scanned: a few
 * compares beat a hash at this size), input and sendto; the same over IPv6
 * with a table of its own. */
#include "iface_priv.h"

static const struct iface_udp_port *udp_find(const struct iface *ifc, uint16_t port)
{
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++)
		if (ifc->udp[i].port == port && port != 0)
			return &ifc->udp[i];
	return NULL;
}

int udp_bind(struct iface *ifc, uint16_t port, udp_recv_fn fn, void *ctx)
{
	if (port == 0 || !fn || udp_find(ifc, port))
		return -1;
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++) {
		struct iface_udp_port *p = &ifc->udp[i];
		if (p->port == 0) {
			p->port = port;
			p->fn = fn;
			p->ctx = ctx;
			return 0;
		}
	}
	return -1;
}

void udp_unbind(struct iface *ifc, uint16_t port)
{
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++) {
		struct iface_udp_port *p = &ifc->udp[i];
		if (p->port == port && port != 0) {
			p->port = 0;
			p->fn = NULL;
			p->ctx = NULL;
		}
	}
}

void iface_udp_input(struct iface *ifc, sk_time_ns now, const struct ipv4_hdr *h,
		     const uint8_t *pkt, bool bcast)
{
	struct iface_counters *c = &ifc->counters;
	const uint8_t *seg = pkt + h->payload_off;
	struct udp_hdr uh;
	int rc = ifc->rx_csum_ok ? udp_parse_nocsum(seg, h->payload_len, &uh)
				 : udp_parse(seg, h->payload_len, h->src, h->dst, &uh);
	if (rc != WIRE_OK) {
		if (rc == WIRE_ETRUNC)
			c->udp_truncated++;
		else if (rc == WIRE_ECSUM)
			c->udp_csum++;
		else
			c->udp_bad_len++;
		return;
	}
	const struct iface_udp_port *p = udp_find(ifc, uh.dport);
	if (p) {
		c->udp_rx++;
		/* Copy out: the callback may unbind and so rewrite *p. */
		udp_recv_fn fn = p->fn;
		fn(p->ctx, ifc, now, h->src, uh.sport, uh.dport, seg + uh.payload_off, uh.payload_len);
		return;
	}
	c->udp_no_port++;
	/* RFC 1122 4.1.3.1: no port unreachable for broadcast datagrams. */
	if (!bcast)
		iface_icmp_unreach(ifc, now, ICMP_UNREACH_PORT, h, pkt);
}

int udp_sendto(struct iface *ifc, sk_time_ns now, uint16_t sport, uint32_t dst, uint16_t dport,
	       const uint8_t *data, size_t len)
{
	if (len > 0xffffu - UDP_HLEN - IPV4_HLEN) {
		ifc->counters.ip_too_big++;
		return -2;
	}
	struct iface_ip_out o;
	int rc = iface_ip_begin(ifc, now, dst, UDP_HLEN + len, &o);
	if (rc != 0)
		return rc;
	if (len)
		sk_memmove(o.l4 + UDP_HLEN, data, len);
	udp_emit(o.l4, o.cap, sport, dport, ifc->ip, dst, (uint16_t)len);
	iface_ip_finish(ifc, now, &o, IPV4_PROTO_UDP, UDP_HLEN + len);
	ifc->counters.udp_tx++;
	return 0;
}

/* ---- IPv6 ---- */

static const struct iface_udp6_port *udp6_find(const struct iface *ifc, uint16_t port)
{
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++)
		if (ifc->udp6[i].port == port && port != 0)
			return &ifc->udp6[i];
	return NULL;
}

int udp6_bind(struct iface *ifc, uint16_t port, udp6_recv_fn fn, void *ctx)
{
	if (port == 0 || !fn || udp6_find(ifc, port))
		return -1;
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++) {
		struct iface_udp6_port *p = &ifc->udp6[i];
		if (p->port == 0) {
			*p = (struct iface_udp6_port){port, fn, ctx};
			return 0;
		}
	}
	return -1;
}

void udp6_unbind(struct iface *ifc, uint16_t port)
{
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++)
		if (ifc->udp6[i].port == port && port != 0)
			ifc->udp6[i] = (struct iface_udp6_port){0};
}

void iface_udp6_input(struct iface *ifc, sk_time_ns now, const struct ipv6_hdr *h,
		      const uint8_t *pkt, bool link_mcast)
{
	struct iface_counters *c = &ifc->counters;
	const uint8_t *seg = pkt + h->l4_off;
	struct udp_hdr uh;
	int rc = ifc->rx_csum_ok ? udp_parse_nocsum(seg, h->l4_len, &uh)
				 : udp_parse6(seg, h->l4_len, h->src.b, h->dst.b, &uh);
	if (rc != WIRE_OK) {
		if (rc == WIRE_ETRUNC)
			c->udp_truncated++;
		else if (rc == WIRE_ECSUM)
			c->udp_csum++;
		else
			c->udp_bad_len++;
		return;
	}
	if (ipv6_is_multicast(&h->dst)) {
		c->ip6_l4_mcast++; /* our groups are ND's; no UDP service listens there */
		return;
	}
	const struct iface_udp6_port *p = udp6_find(ifc, uh.dport);
	if (p) {
		c->udp_rx++;
		udp6_recv_fn fn = p->fn; /* the callback may unbind */
		fn(p->ctx, ifc, now, &h->src, &h->dst, uh.sport, uh.dport, seg + uh.payload_off,
		   uh.payload_len);
		return;
	}
	c->udp_no_port++;
	iface_icmp6_error(ifc, now, ICMP6_DEST_UNREACH, ICMP6_UNREACH_PORT, 0, h, pkt, link_mcast);
}

int udp6_sendto(struct iface *ifc, sk_time_ns now, uint16_t sport, const struct ipv6_addr *src,
		const struct ipv6_addr *dst, uint16_t dport, const uint8_t *data, size_t len)
{
	if (!ifc->ip6)
		return -4;
	if (len > 0xffffu - UDP_HLEN) {
		ifc->counters.ip6_too_big++;
		return -2;
	}
	struct iface_ip6_out o;
	int rc = src ? iface_ip6_begin_from(ifc, now, src, dst, UDP_HLEN + len, &o)
		     : iface_ip6_begin(ifc, now, dst, UDP_HLEN + len, &o);
	if (rc != 0)
		return rc;
	if (len)
		sk_memmove(o.l4 + UDP_HLEN, data, len);
	udp_emit6(o.l4, o.cap, sport, dport, o.src.b, dst->b, (uint16_t)len);
	iface_ip6_finish(ifc, now, &o, IPV6_NH_UDP, UDP_HLEN + len);
	ifc->counters.udp_tx++;
	return 0;
}
