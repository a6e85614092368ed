/* tcp_iface.c — TCP on top of an iface: output through iface_ip_output
 * (IPv4) or iface_ip6_output (IPv6), input from iface's protocol handlers
 * of both families, ICMP errors from its error hook. */
#include "tcp_iface.h"
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
	(void)ifc;
	tcp_input(ctx, now, src, dst, l4, len);
}

static void tcp_iface_input6(void *ctx, struct iface *ifc, sk_time_ns now,
			     const struct ipv6_addr *src, const struct ipv6_addr *dst,
			     const uint8_t *l4, size_t len)
{
	(void)ifc;
	struct sk_addr s = sk_addr_v6(src->b), d = sk_addr_v6(dst->b);
	tcp_input6(ctx, now, &s, &d, l4, len);
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
}

int tcp_iface_attach(struct tcp_stack *st, struct iface *ifc)
{
	iface_set_icmp_error_handler(ifc, tcp_iface_icmp, st);
	iface_set_icmp6_error_handler(ifc, tcp_iface_icmp6, st);
	if (iface_set_proto6_handler(ifc, IPV6_NH_TCP, tcp_iface_input6, st) < 0)
		return -1;
	return iface_set_proto_handler(ifc, IPV4_PROTO_TCP, tcp_iface_input, st);
}
