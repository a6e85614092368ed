/* tcp_iface.c — TCP on top of an iface: output through iface_ip_output,
 * input from iface's protocol handler, ICMP errors from its error hook. */
#include "tcp_iface.h"
#include "../wire/icmp.h"
#include "../wire/ipv4.h"

static int tcp_iface_output(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst,
			    const uint8_t *seg, size_t len)
{
	(void)src; /* the iface has one address, the one cfg.local_ip came from */
	return iface_ip_output(ctx, now, dst, IPV4_PROTO_TCP, seg, len);
}

static void tcp_iface_input(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src,
			    uint32_t dst, const uint8_t *l4, size_t len)
{
	(void)ifc;
	tcp_input(ctx, now, src, dst, l4, len);
}

static void tcp_iface_icmp(void *ctx, struct iface *ifc, sk_time_ns now, const struct icmp_error *e)
{
	(void)ifc;
	tcp_icmp_error(ctx, now, e);
}

void tcp_iface_config(struct tcp_config *cfg, struct iface *ifc)
{
	cfg->local_ip = ifc->ip;
	cfg->mtu = ifc->mtu;
	cfg->ip_output = tcp_iface_output;
	cfg->out_ctx = ifc;
}

int tcp_iface_attach(struct tcp_stack *st, struct iface *ifc)
{
	iface_set_icmp_error_handler(ifc, tcp_iface_icmp, st);
	return iface_set_proto_handler(ifc, IPV4_PROTO_TCP, tcp_iface_input, st);
}
