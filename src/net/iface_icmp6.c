/* iface_icmp6.c — ICMPv6 for a host (RFC 4443): echo replies, echo requests
 * out (ping -6) with replies to a callback, errors in (checked to quote our
 * own packets, counted), errors out through a token bucket of their own
 * (IFACE_ICMP_RATE per second, as on IPv4; RFC 4443 2.4(f) asks for one),
 * neighbour discovery handed to iface_nd.c, and MLDv2 (RFC 3810): a report
 * of our groups at start and in answer to a query, at most one a second.
 */
#include "iface_priv.h"

static void icmp6_echo(struct iface *ifc, sk_time_ns now, const struct ipv6_hdr *h,
		       const uint8_t *msg, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	c->icmp6_echo_requests++;
	/* RFC 4443 4.1 lets a node answer a request to a group; skiff does
	 * not: every member answering is an amplifier, and ping -6 ff02::1 is
	 * a diagnostic skiff need not serve. */
	if (ipv6_is_multicast(&h->dst)) {
		c->icmp6_echo_mcast++;
		return;
	}
	struct iface_ip6_out o;
	if (iface_ip6_begin(ifc, now, &h->src, len, &o) != 0) {
		c->icmp6_tx_failed++;
		return;
	}
	/* From the address it was sent to, whatever the source selection
	 * would pick: the peer matches replies by it. */
	o.src = h->dst;
	if (icmp6_emit_echo_reply(o.l4, o.cap, msg, len, &o.src, &o.dst) != len) {
		c->icmp6_tx_failed++;
		return;
	}
	iface_ip6_finish(ifc, now, &o, IPV6_NH_ICMPV6, len);
	c->icmp6_echo_replies++;
}

int icmp6_ping_send(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *dst, uint16_t id,
		    uint16_t seq, const uint8_t *payload, size_t len)
{
	if (!ifc->ip6)
		return -4;
	if (len > (size_t)ifc->mtu) {
		ifc->counters.ip6_too_big++;
		return -2;
	}
	struct iface_ip6_out o;
	int rc = iface_ip6_begin(ifc, now, dst, ICMP6_HLEN + len, &o);
	if (rc != 0)
		return rc;
	size_t n = icmp6_emit_echo_request(o.l4, o.cap, id, seq, payload, len, &o.src, &o.dst);
	if (n == 0)
		return -2;
	iface_ip6_finish(ifc, now, &o, IPV6_NH_ICMPV6, n);
	ifc->counters.icmp6_echo_requests_tx++;
	return 0;
}

void iface_set_echo6_reply_handler(struct iface *ifc, iface_echo6_reply_fn fn, void *ctx)
{
	ifc->echo6_reply_fn = fn;
	ifc->echo6_reply_ctx = ctx;
}

void iface_icmp6_error(struct iface *ifc, sk_time_ns now, uint8_t type, uint8_t code,
		       uint32_t rest, const struct ipv6_hdr *h, const uint8_t *pkt, bool link_mcast)
{
	struct iface_counters *c = &ifc->counters;
	if (!icmp6_error_allowed(pkt, h, link_mcast, type, code))
		return;
	if (!iface_take_token(&ifc->icmp6_credit_ns, &ifc->icmp6_last, now)) {
		c->icmp6_ratelimited++;
		return;
	}
	size_t end = (size_t)IPV6_HLEN + h->payload_len;
	size_t n = ICMP6_HLEN + SK_MIN(end, (size_t)ICMP6_ERROR_QUOTE_MAX);
	/* The quote is cut to what our MTU leaves, if that is less (never
	 * below a quoted header: IPv6 links carry 1280, RFC 8200 5). */
	if (IPV6_HLEN + n > ifc->mtu)
		n = ifc->mtu > IPV6_HLEN ? (size_t)ifc->mtu - IPV6_HLEN : 0;
	if (n < ICMP6_HLEN + IPV6_HLEN) {
		c->icmp6_tx_failed++;
		return;
	}
	struct iface_ip6_out o;
	if (iface_ip6_begin(ifc, now, &h->src, n, &o) != 0) {
		c->icmp6_tx_failed++;
		return;
	}
	/* About a packet to one of our addresses: answer from it. */
	if (!ipv6_is_multicast(&h->dst))
		o.src = h->dst;
	size_t m = icmp6_emit_error(o.l4, SK_MIN(o.cap, n), type, code, rest, pkt,
				    SK_MIN(end, n - ICMP6_HLEN), &o.src, &o.dst);
	if (m == 0) {
		c->icmp6_tx_failed++;
		return;
	}
	iface_ip6_finish(ifc, now, &o, IPV6_NH_ICMPV6, m);
	c->icmp6_errors_tx++;
}

/* One MLDv2 report of `type` for groups g[0..n). */
static void mld_send(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *g, unsigned n,
		     uint8_t type)
{
	const struct ipv6_addr *src = ifc->addr6[0].state == IFACE_ADDR6_PREFERRED
					      ? &ifc->addr6[0].a
					      : &ipv6_unspecified;
	size_t cap;
	uint8_t *f = iface_tx_begin(ifc, &cap);
	if (!f)
		return;
	uint8_t mac[SK_MAC_LEN];
	ipv6_mcast_mac(mac, &ipv6_mld2_routers);
	eth_emit(f, cap, mac, ifc->mac, ETH_TYPE_IPV6);
	size_t len = mld2_emit_report(f + ETH_HLEN, cap - ETH_HLEN, src, g, n, type);
	if (len == 0)
		return;
	iface_tx_commit(ifc, f, ETH_HLEN + len);
	ifc->mld_last = now;
	ifc->counters.ip6_tx++;
	ifc->counters.icmp6_mld_reports_tx++;
}

void iface_mld_report(struct iface *ifc, sk_time_ns now)
{
	struct ipv6_addr g[IFACE_IP6_ADDRS];
	unsigned n = iface_ip6_groups(ifc, g);
	if (n)
		mld_send(ifc, now, g, n, MLD2_CHANGE_TO_EXCLUDE);
}

void iface_mld_leave(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *group)
{
	mld_send(ifc, now, group, 1, MLD2_CHANGE_TO_INCLUDE);
}

/* An error about one of our packets: counted, and checked that it quotes
 * a packet from us (anything else is noise or an attack on a flow); then
 * to the error handler (TCP: path MTU from Packet Too Big), which checks
 * the flow and sequence number it quotes. */
static void icmp6_error_input(struct iface *ifc, sk_time_ns now, const uint8_t *msg, size_t len,
			      const struct icmp6_hdr *ih)
{
	struct icmp6_error e;
	int rc = icmp6_parse_error(msg, len, ih, &e);
	int a = rc == WIRE_OK ? iface_addr6_find(ifc, &e.src) : -1;
	if (a < 0) {
		ifc->counters.icmp6_bad_error++;
		return;
	}
	ifc->counters.icmp6_errors_rx++;
	if (e.type == ICMP6_PACKET_TOO_BIG)
		ifc->counters.icmp6_too_big_rx++;
	if (ifc->icmp6_error_fn)
		ifc->icmp6_error_fn(ifc->icmp6_error_ctx, ifc, now, &e);
}

void iface_icmp6_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		       const struct ipv6_hdr *h, const uint8_t *pkt)
{
	struct iface_counters *c = &ifc->counters;
	const uint8_t *msg = pkt + h->l4_off;
	size_t len = h->l4_len;
	struct icmp6_hdr ih;
	int rc = icmp6_parse(msg, len, &h->src, &h->dst, &ih);
	if (rc != WIRE_OK) {
		if (rc == WIRE_ECSUM)
			c->icmp6_csum++;
		else
			c->icmp6_truncated++;
		return;
	}
	c->icmp6_rx++;
	/* From :: only ND (DAD probes) and MLD reports are meaningful. */
	if (ipv6_is_unspecified(&h->src) && ih.type != ND_NS && ih.type != ICMP6_MLD2_REPORT &&
	    ih.type != 131 /* MLDv1 report */) {
		c->ip6_bad_src++;
		return;
	}
	switch (ih.type) {
	case ICMP6_ECHO_REQUEST:
		icmp6_echo(ifc, now, h, msg, len);
		break;
	case ICMP6_ECHO_REPLY:
		c->icmp6_echo_replies_rx++;
		if (ifc->echo6_reply_fn && !ipv6_is_multicast(&h->dst))
			ifc->echo6_reply_fn(ifc->echo6_reply_ctx, ifc, now, &h->src, ih.id, ih.seq,
					    msg + ICMP6_HLEN, len - ICMP6_HLEN);
		break;
	case ICMP6_DEST_UNREACH:
	case ICMP6_PACKET_TOO_BIG:
	case ICMP6_TIME_EXCEEDED:
	case ICMP6_PARAM_PROBLEM:
		icmp6_error_input(ifc, now, msg, len, &ih);
		break;
	case ICMP6_MLD_QUERY:
		/* RFC 3810 5.1.15: a query is valid only from a link-local
		 * source with hop limit 1; answer with the state of our groups,
		 * not more than once a second (a flood of queries must not
		 * become a flood of reports). */
		c->icmp6_mld_queries++;
		if (ipv6_is_link_local(&h->src) && h->hop_limit == 1 &&
		    (ifc->mld_last == 0 || iface_elapsed(now, ifc->mld_last) >= IFACE_MLD_MIN_NS))
			iface_mld_report(ifc, now);
		break;
	case ND_RS:
	case ND_RA:
	case ND_NS:
	case ND_NA:
	case ND_REDIRECT:
		iface_nd_input(ifc, now, eh, h, msg, len);
		break;
	default:
		c->icmp6_other++;
		break;
	}
}
