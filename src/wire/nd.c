/* nd.c — Neighbour Discovery messages and options (RFC 4861). */
#include "nd.h"
#include "icmp6.h"

static int nd_opt_prefix(const uint8_t *p, struct nd_opts *o)
{
	struct nd_prefix x;
	x.len = p[2];
	x.onlink = (p[3] & ND_PREFIX_ONLINK) != 0;
	x.autonomous = (p[3] & ND_PREFIX_AUTO) != 0;
	x.valid = sk_get_be32(p + 4);
	x.preferred = sk_get_be32(p + 8);
	sk_memcpy(x.prefix.b, p + 16, IPV6_ADDR_LEN);
	/* Ignored, not fatal: the rest of the RA (router, MTU, other
	 * prefixes) is still good.  A link-local prefix is never on-link
	 * news nor an autoconf prefix (4861 6.3.4, 4862 5.5.3 b); preferred
	 * over valid is inconsistent (4862 5.5.3 c). */
	if (x.len > 128 || ipv6_is_link_local(&x.prefix) || x.preferred > x.valid ||
	    o->nprefix >= ND_MAX_PREFIX) {
		o->prefix_ignored++;
		return WIRE_OK;
	}
	ipv6_prefix_mask(&x.prefix, x.len); /* "ignored by the receiver" */
	o->prefix[o->nprefix++] = x;
	return WIRE_OK;
}

int nd_opts_parse(const uint8_t *opt, size_t len, struct nd_opts *o)
{
	sk_memset(o, 0, sizeof(*o));
	size_t p = 0;
	unsigned n = 0;
	while (p < len) {
		if (len - p < 2)
			return WIRE_EOPT; /* a type without its length */
		size_t olen = (size_t)opt[p + 1] * 8;
		/* RFC 4861 4.6: "Nodes MUST silently discard an ND packet
		 * that contains an option with length zero." */
		if (olen == 0 || olen > len - p)
			return WIRE_EOPT;
		if (++n > ND_MAX_OPTS)
			return WIRE_ELIMIT;
		const uint8_t *q = opt + p;
		switch (q[0]) {
		case ND_OPT_SLLA:
		case ND_OPT_TLLA:
			/* Ethernet (RFC 2464 6): exactly 8 bytes.  The first
			 * one counts; a second is skipped. */
			if (olen != ND_OPT_LLA_LEN)
				return WIRE_EOPT;
			if (q[0] == ND_OPT_SLLA && !o->has_slla) {
				sk_memcpy(o->slla, q + 2, SK_MAC_LEN);
				o->has_slla = true;
			} else if (q[0] == ND_OPT_TLLA && !o->has_tlla) {
				sk_memcpy(o->tlla, q + 2, SK_MAC_LEN);
				o->has_tlla = true;
			}
			break;
		case ND_OPT_PREFIX:
			if (olen != ND_OPT_PREFIX_LEN)
				return WIRE_EOPT;
			nd_opt_prefix(q, o);
			break;
		case ND_OPT_MTU:
			if (olen != 8)
				return WIRE_EOPT;
			/* RFC 4861 6.3.4: a link MTU under IPv6's minimum is
			 * not one to adopt; leave it out. */
			if (!o->has_mtu && sk_get_be32(q + 4) >= IPV6_MIN_MTU) {
				o->mtu = sk_get_be32(q + 4);
				o->has_mtu = true;
			}
			break;
		case ND_OPT_NONCE:
			if (!o->has_nonce) {
				sk_memcpy(o->nonce, q + 2, ND_NONCE_LEN);
				o->has_nonce = true;
			}
			break;
		default:
			break; /* RFC 4861 4.6: unknown options are skipped */
		}
		p += olen;
	}
	return WIRE_OK;
}

int nd_parse(const uint8_t *msg, size_t len, const struct ipv6_hdr *ip, struct nd_msg *m)
{
	static const uint8_t min_len[5] = { ND_RS_LEN, ND_RA_LEN, ND_NS_LEN, ND_NA_LEN,
					    ND_REDIRECT_LEN };
	if (len < 1)
		return WIRE_ETRUNC;
	uint8_t type = msg[0];
	if (type < ND_RS || type > ND_REDIRECT)
		return WIRE_EUNSUP;
	/* 255 proves the sender is on this link: a router decrements it, so
	 * an off-link attacker cannot inject ND (RFC 4861 3.1). */
	if (ip->hop_limit != ND_HOP_LIMIT)
		return WIRE_EHOPLIMIT;
	size_t fixed = min_len[type - ND_RS];
	if (len < fixed)
		return WIRE_ETRUNC;
	if (msg[1] != 0)
		return WIRE_ECODE;

	sk_memset(m, 0, sizeof(*m));
	m->type = type;
	int r = nd_opts_parse(msg + fixed, len - fixed, &m->opts);
	if (r != WIRE_OK)
		return r;
	bool from_unspec = ipv6_is_unspecified(&ip->src);

	switch (type) {
	case ND_RS:
		/* 6.1.1: from :: there is no address to bind a link-layer
		 * address to. */
		if (from_unspec && m->opts.has_slla)
			return WIRE_EBADADDR;
		break;
	case ND_RA:
		/* 6.1.2: routers speak from their link-local address, which is
		 * how hosts tell routers apart across renumbering. */
		if (!ipv6_is_link_local(&ip->src))
			return WIRE_EBADADDR;
		m->cur_hop_limit = msg[4];
		m->ra_flags = msg[5] & (ND_RA_MANAGED | ND_RA_OTHER);
		m->router_lifetime = sk_get_be16(msg + 6);
		m->reachable_ms = sk_get_be32(msg + 8);
		m->retrans_ms = sk_get_be32(msg + 12);
		break;
	case ND_NS:
		sk_memcpy(m->target.b, msg + 8, IPV6_ADDR_LEN);
		if (ipv6_is_multicast(&m->target))
			return WIRE_EBADADDR;
		/* 7.1.1: a DAD probe (from ::) goes to a solicited-node
		 * group and carries no link-layer address. */
		if (from_unspec && (!ipv6_is_solicited_node(&ip->dst) || m->opts.has_slla))
			return WIRE_EBADADDR;
		break;
	case ND_NA:
		m->na_flags = msg[4] & (ND_NA_ROUTER | ND_NA_SOLICITED | ND_NA_OVERRIDE);
		sk_memcpy(m->target.b, msg + 8, IPV6_ADDR_LEN);
		if (ipv6_is_multicast(&m->target))
			return WIRE_EBADADDR;
		/* 7.1.2: a solicited answer goes to the one who asked. */
		if (ipv6_is_multicast(&ip->dst) && (m->na_flags & ND_NA_SOLICITED))
			return WIRE_EBADADDR;
		break;
	case ND_REDIRECT:
		sk_memcpy(m->target.b, msg + 8, IPV6_ADDR_LEN);
		sk_memcpy(m->dest.b, msg + 24, IPV6_ADDR_LEN);
		/* 8.1: from a router's link-local address; about a unicast
		 * destination; to a better first hop that is a link-local
		 * router address, or the destination itself (on-link). */
		if (!ipv6_is_link_local(&ip->src) || ipv6_is_multicast(&m->dest) ||
		    (!ipv6_is_link_local(&m->target) && !ipv6_addr_eq(&m->target, &m->dest)))
			return WIRE_EBADADDR;
		break;
	}
	return WIRE_OK;
}

/* An Ethernet link-layer address option at p. */
static void nd_put_lla(uint8_t *p, uint8_t type, const uint8_t *mac)
{
	p[0] = type;
	p[1] = 1;
	sk_memcpy(p + 2, mac, SK_MAC_LEN);
}

size_t nd_emit_rs(uint8_t *buf, size_t cap, const uint8_t *slla, const struct ipv6_addr *src,
		  const struct ipv6_addr *dst)
{
	size_t len = ND_RS_LEN + (slla ? ND_OPT_LLA_LEN : 0);
	if (cap < len)
		return 0;
	buf[0] = ND_RS;
	buf[1] = 0;
	sk_put_be32(buf + 4, 0); /* reserved */
	if (slla)
		nd_put_lla(buf + ND_RS_LEN, ND_OPT_SLLA, slla);
	icmp6_seal(buf, len, src, dst);
	return len;
}

size_t nd_emit_ns(uint8_t *buf, size_t cap, const struct ipv6_addr *target, const uint8_t *slla,
		  const uint8_t *nonce, const struct ipv6_addr *src, const struct ipv6_addr *dst)
{
	size_t len = ND_NS_LEN + (slla ? ND_OPT_LLA_LEN : 0) + (nonce ? 8 : 0);
	if (cap < len)
		return 0;
	struct ipv6_addr t = *target;
	buf[0] = ND_NS;
	buf[1] = 0;
	sk_put_be32(buf + 4, 0);
	sk_memcpy(buf + 8, t.b, IPV6_ADDR_LEN);
	size_t p = ND_NS_LEN;
	if (slla) {
		nd_put_lla(buf + p, ND_OPT_SLLA, slla);
		p += ND_OPT_LLA_LEN;
	}
	if (nonce) {
		buf[p] = ND_OPT_NONCE;
		buf[p + 1] = 1;
		sk_memcpy(buf + p + 2, nonce, ND_NONCE_LEN);
	}
	icmp6_seal(buf, len, src, dst);
	return len;
}

size_t nd_emit_na(uint8_t *buf, size_t cap, const struct ipv6_addr *target, uint8_t flags,
		  const uint8_t *tlla, const struct ipv6_addr *src, const struct ipv6_addr *dst)
{
	size_t len = ND_NA_LEN + (tlla ? ND_OPT_LLA_LEN : 0);
	if (cap < len)
		return 0;
	struct ipv6_addr t = *target;
	buf[0] = ND_NA;
	buf[1] = 0;
	sk_put_be32(buf + 4,
			(uint32_t)(flags & (ND_NA_ROUTER | ND_NA_SOLICITED | ND_NA_OVERRIDE)) << 24);
	sk_memcpy(buf + 8, t.b, IPV6_ADDR_LEN);
	if (tlla)
		nd_put_lla(buf + ND_NA_LEN, ND_OPT_TLLA, tlla);
	icmp6_seal(buf, len, src, dst);
	return len;
}
