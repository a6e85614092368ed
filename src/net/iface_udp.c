/* iface_udp.c — UDP ports (a table of IFACE_MAX_UDP_PORTS, scanned: a few
 * compares beat a hash at this size), input and sendto. */
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
	int rc = udp_parse(seg, h->payload_len, h->src, h->dst, &uh);
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
