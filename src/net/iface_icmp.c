/* iface_icmp.c — ICMP for a host (RFC 792, RFC 1122 3.2.2): echo replies,
 * incoming errors parsed and handed on, port unreachable out, and the
 * sending side of ping (echo requests out, replies to a callback).
 *
 * Errors we send go through a token bucket (IFACE_ICMP_RATE per second,
 * IFACE_ICMP_BURST deep, as Linux's icmp_ratelimit does) so a scan of closed
 * ports cannot turn us into a packet amplifier.  Echo replies are not
 * limited: they are no bigger than the request.
 */
#include "iface_priv.h"

bool iface_take_token(uint64_t *credit_ns, sk_time_ns *last, sk_time_ns now)
{
	const uint64_t cost = SK_NS_PER_S / IFACE_ICMP_RATE;
	const uint64_t cap = (uint64_t)IFACE_ICMP_BURST * cost;
	sk_time_ns gained = iface_elapsed(now, *last);
	if (now > *last)
		*last = now;
	/* Compare before adding: a huge jump must not overflow the credit. */
	uint64_t credit = gained >= cap ? cap : SK_MIN(cap, *credit_ns + gained);
	if (credit < cost) {
		*credit_ns = credit;
		return false;
	}
	*credit_ns = credit - cost;
	return true;
}

static void icmp_echo(struct iface *ifc, sk_time_ns now, const struct ipv4_hdr *h,
		      const uint8_t *msg, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	struct iface_ip_out o;
	c->icmp_echo_requests++;
	if (iface_ip_begin(ifc, now, h->src, len, &o) != 0) {
		c->icmp_tx_failed++;
		return;
	}
	/* Byte for byte: same id, seq and payload, new type and checksum. */
	if (icmp_emit_echo_reply(o.l4, o.cap, msg, len) != len) {
		c->icmp_tx_failed++;
		return;
	}
	iface_ip_finish(ifc, now, &o, IPV4_PROTO_ICMP, len);
	c->icmp_echo_replies++;
}

int icmp_ping_send(struct iface *ifc, sk_time_ns now, uint32_t dst, uint16_t id, uint16_t seq,
		   const uint8_t *payload, size_t len)
{
	struct iface_ip_out o;
	/* Written in place into the tx (or ARP queue) slot: no staging copy,
	 * and no MTU-sized buffer on a freestanding stack. */
	if (len > (size_t)ifc->mtu) { /* keep ICMP_HLEN + len from wrapping */
		ifc->counters.ip_too_big++;
		return -2;
	}
	int rc = iface_ip_begin(ifc, now, dst, ICMP_HLEN + len, &o);
	if (rc != 0)
		return rc;
	size_t n = icmp_emit_echo_request(o.l4, o.cap, id, seq, payload, len);
	if (n == 0) /* cannot happen: begin reserved ICMP_HLEN + len */
		return -2;
	iface_ip_finish(ifc, now, &o, IPV4_PROTO_ICMP, n);
	ifc->counters.icmp_echo_requests_tx++;
	return 0;
}

void iface_set_echo_reply_handler(struct iface *ifc, iface_echo_reply_fn fn, void *ctx)
{
	ifc->echo_reply_fn = fn;
	ifc->echo_reply_ctx = ctx;
}

void iface_icmp_input(struct iface *ifc, sk_time_ns now, const struct ipv4_hdr *h,
		      const uint8_t *pkt)
{
	struct iface_counters *c = &ifc->counters;
	const uint8_t *msg = pkt + h->payload_off;
	size_t len = h->payload_len;
	struct icmp_hdr ih;
	int rc = icmp_parse(msg, len, &ih);
	if (rc != WIRE_OK) {
		if (rc == WIRE_ECSUM)
			c->icmp_csum++;
		else
			c->icmp_truncated++;
		return;
	}
	c->icmp_rx++;
	switch (ih.type) {
	case ICMP_ECHO_REQUEST:
		icmp_echo(ifc, now, h, msg, len);
		break;
	case ICMP_ECHO_REPLY:
		/* The checksum was checked by icmp_parse; matching id and seq to
		 * an outstanding request is the pinger's business, since only it
		 * knows what it sent. */
		c->icmp_echo_replies_rx++;
		if (ifc->echo_reply_fn)
			ifc->echo_reply_fn(ifc->echo_reply_ctx, ifc, now, h->src, ih.id, ih.seq,
					   msg + ICMP_HLEN, len - ICMP_HLEN);
		break;
	case ICMP_DEST_UNREACH:
	case ICMP_TIME_EXCEEDED:
	case ICMP_PARAM_PROBLEM: {
		struct icmp_error e;
		rc = icmp_parse_error(msg, len, &ih, &e);
		/* An error must quote a datagram we sent; anything else is
		 * noise or an attempt to disturb a connection. */
		if (rc != WIRE_OK || e.src != ifc->ip) {
			c->icmp_bad_error++;
			return;
		}
		c->icmp_errors_rx++;
		if (ifc->icmp_error_fn)
			ifc->icmp_error_fn(ifc->icmp_error_ctx, ifc, now, &e);
		break;
	}
	default:
		c->icmp_other++;
		break;
	}
}

void iface_icmp_unreach(struct iface *ifc, sk_time_ns now, uint8_t code,
			const struct ipv4_hdr *h, const uint8_t *pkt)
{
	struct iface_counters *c = &ifc->counters;
	/* RFC 1122 3.2.2: never about an ICMP message (so never about an
	 * error), a fragment, or a source that names no single host.  The
	 * caller already excluded broadcast destinations. */
	if (h->proto == IPV4_PROTO_ICMP || ipv4_is_fragment(h) || iface_ip_martian(ifc, h->src))
		return;
	if (!iface_take_token(&ifc->icmp_credit_ns, &ifc->icmp_last, now)) {
		c->icmp_ratelimited++;
		return;
	}
	size_t n = ICMP_HLEN + h->hlen + SK_MIN((size_t)h->payload_len, (size_t)8);
	struct iface_ip_out o;
	if (iface_ip_begin(ifc, now, h->src, n, &o) != 0) {
		c->icmp_tx_failed++;
		return;
	}
	size_t m = icmp_emit_error(o.l4, SK_MIN(o.cap, n), ICMP_DEST_UNREACH, code, 0, pkt, h->total_len);
	if (m == 0) {
		c->icmp_tx_failed++;
		return;
	}
	iface_ip_finish(ifc, now, &o, IPV4_PROTO_ICMP, m);
	c->icmp_unreach_tx++;
}
