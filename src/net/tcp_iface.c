/* tcp_iface.c — TCP on top of an iface: output through iface_ip_output
 * (IPv4) or iface_ip6_output (IPv6), input from iface's protocol handlers
 * of both families, ICMP errors from its error hook. */
#include "tcp_iface.h"
#include "iface_priv.h"
#include "../wire/eth.h"
#include "../wire/icmp.h"
#include "../wire/ipv4.h"

static int tcp_iface_output(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst,
			    const uint8_t *seg, size_t len)
{
	(void)src; /* the iface has one address, the one cfg.local_ip came from */
	return iface_ip_output(ctx, now, dst, IPV4_PROTO_TCP, seg, len);
}

/* struct sk_addr and struct ipv6_addr are both the 16 wire bytes. */
static struct ipv6_addr tcp_iface_v6(const struct sk_addr *a)
{
	struct ipv6_addr r;
	sk_memcpy(r.b, a->b, sizeof(r.b));
	return r;
}

static int tcp_iface_output6(void *ctx, sk_time_ns now, const struct sk_addr *src,
			     const struct sk_addr *dst, const uint8_t *seg, size_t len)
{
	/* src is the address the segment came to (or src6 picked): the
	 * checksum covers it, so the iface must not pick another. */
	struct ipv6_addr s = tcp_iface_v6(src), d = tcp_iface_v6(dst);
	return iface_ip6_output(ctx, now, &s, &d, IPV6_NH_TCP, seg, len);
}

/* In-place output (tcp.h struct tcp_tx_frame): the iface's output state
 * lives in the frame's priv bytes between begin and finish. */
struct tcp_iface_tx {
	bool v6;
	union {
		struct iface_ip_out o4;
		struct iface_ip6_out o6;
	} u;
};
_Static_assert(sizeof(struct tcp_iface_tx) <= TCP_TX_PRIV, "tcp_tx_frame.priv holds it");

static int tcp_iface_begin(void *ctx, sk_time_ns now, const struct sk_addr *src,
			   const struct sk_addr *dst, uint32_t l4_len, bool offload,
			   struct tcp_tx_frame *f)
{
	struct iface *ifc = ctx;
	struct tcp_iface_tx *t = (struct tcp_iface_tx *)(void *)f->priv;
	uint8_t *l4;
	size_t cap;
	uint32_t n;
	int r;
	if (sk_addr_is_v4(dst)) {
		t->v6 = false;
		uint32_t d = sk_addr_ip4(dst);
		r = offload ? iface_ip_begin_vnet(ifc, now, d, l4_len, &t->u.o4)
			    : iface_ip_begin(ifc, now, d, l4_len, &t->u.o4);
		if (r != 0)
			return r;
		l4 = t->u.o4.l4;
		cap = t->u.o4.cap;
		n = t->u.o4.nslots;
	} else {
		if (!ifc->ip6)
			return -4;
		t->v6 = true;
		struct ipv6_addr s = tcp_iface_v6(src), d = tcp_iface_v6(dst);
		r = offload ? iface_ip6_begin_vnet(ifc, now, &s, &d, l4_len, &t->u.o6)
			    : iface_ip6_begin_from(ifc, now, &s, &d, l4_len, &t->u.o6);
		if (r != 0)
			return r;
		l4 = t->u.o6.l4;
		cap = t->u.o6.cap;
		n = t->u.o6.nslots;
	}
	if (n > TCP_TX_BUFS)
		return -2; /* cannot happen: IFACE_TX_MAX_SLOTS <= TCP_TX_BUFS */
	f->offload = offload;
	f->nbuf = n;
	f->buf[0] = l4;
	f->cap[0] = (uint32_t)cap;
	for (uint32_t i = 1; i < n; i++) {
		f->buf[i] = iface_tx_buf(ifc, i);
		f->cap[i] = ifc->dev->tx->buf_size;
	}
	return 0;
}

static void tcp_iface_finish(void *ctx, sk_time_ns now, struct tcp_tx_frame *f, uint32_t l4_len)
{
	struct iface *ifc = ctx;
	struct tcp_iface_tx *t = (struct tcp_iface_tx *)(void *)f->priv;
	if (!f->offload) {
		if (t->v6)
			iface_ip6_finish(ifc, now, &t->u.o6, IPV6_NH_TCP, l4_len);
		else
			iface_ip_finish(ifc, now, &t->u.o4, IPV4_PROTO_TCP, l4_len);
		return;
	}
	uint16_t l3 = t->v6 ? IPV6_HLEN : IPV4_HLEN;
	struct ring_vnet v = {
		.flags = RING_VNET_F_NEEDS_CSUM,
		.hdr_len = (uint16_t)(ETH_HLEN + l3 + f->hlen),
		.csum_start = (uint16_t)(ETH_HLEN + l3),
		.csum_offset = 16, /* the TCP checksum field */
	};
	if (f->gso_size) {
		v.gso_type = t->v6 ? RING_VNET_GSO_TCPV6 : RING_VNET_GSO_TCPV4;
		v.gso_size = f->gso_size;
	}
	if (t->v6)
		iface_ip6_finish_vnet(ifc, &t->u.o6, IPV6_NH_TCP, l4_len, &v);
	else
		iface_ip_finish_vnet(ifc, &t->u.o4, IPV4_PROTO_TCP, l4_len, &v);
}

static bool tcp_iface_src6(void *ctx, const struct sk_addr *dst, struct sk_addr *src)
{
	struct ipv6_addr d = tcp_iface_v6(dst), s;
	if (!iface_ip6_source(ctx, &d, &s))
		return false;
	*src = sk_addr_v6(s.b);
	return true;
}

static void tcp_iface_input(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
			    uint32_t dst, const uint8_t *l4, size_t len)
{
	struct tcp_stack *st = ctx;
	st->rx_csum_ok = ifc->rx_csum_ok;
	tcp_input(st, now, src, dst, l4, len);
	st->rx_csum_ok = false;
}

static void tcp_iface_input6(void *ctx, struct iface *ifc, sk_time_ns now,
			     const struct ipv6_addr *src, const struct ipv6_addr *dst,
			     const uint8_t *l4, size_t len)
{
	struct tcp_stack *st = ctx;
	struct sk_addr s = sk_addr_v6(src->b), d = sk_addr_v6(dst->b);
	st->rx_csum_ok = ifc->rx_csum_ok;
	tcp_input6(st, now, &s, &d, l4, len);
	st->rx_csum_ok = false;
}

static void tcp_iface_icmp(void *ctx, struct iface *ifc, sk_time_ns now, const struct icmp_error *e)
{
	(void)ifc;
	tcp_icmp_error(ctx, now, e);
}

static void tcp_iface_icmp6(void *ctx, struct iface *ifc, sk_time_ns now,
			    const struct icmp6_error *e)
{
	(void)ifc;
	tcp_icmp6_error(ctx, now, e);
}

void tcp_iface_config(struct tcp_config *cfg, struct iface *ifc)
{
	cfg->local_ip = ifc->ip;
	cfg->mtu = ifc->mtu;
	cfg->ip_output = tcp_iface_output;
	cfg->ip6_output = tcp_iface_output6;
	cfg->src6 = tcp_iface_src6;
	cfg->out_ctx = ifc;
	cfg->tx_begin = tcp_iface_begin;
	cfg->tx_finish = tcp_iface_finish;
	/* The device's offloads (dev.h), as the device negotiated them. */
	uint32_t off = ifc->dev ? ifc->dev->offload : 0;
	cfg->tx_csum = off & DEV_OFF_TX_CSUM;
	cfg->tso_max4 = cfg->tso_max6 = 0;
	if ((off & DEV_OFF_TX_CSUM) && ifc->dev->tso_max > ETH_HLEN + IPV6_HLEN + 2048u) {
		uint32_t l3 = ifc->dev->tso_max - ETH_HLEN; /* IP datagram bytes */
		if (off & DEV_OFF_TSO4)
			cfg->tso_max4 = SK_MIN(l3, 0xffffu) - IPV4_HLEN;
		if (off & DEV_OFF_TSO6)
			cfg->tso_max6 = SK_MIN(l3 - IPV6_HLEN, 0xffffu);
	}
}

int tcp_iface_attach(struct tcp_stack *st, struct iface *ifc)
{
	iface_set_icmp_error_handler(ifc, tcp_iface_icmp, st);
	iface_set_icmp6_error_handler(ifc, tcp_iface_icmp6, st);
	if (iface_set_proto6_handler(ifc, IPV6_NH_TCP, tcp_iface_input6, st) < 0)
		return -1;
	return iface_set_proto_handler(ifc, IPV4_PROTO_TCP, tcp_iface_input, st);
}
