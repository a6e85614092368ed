/* ipv6.c — IPv6 header, extension header walk and addresses (RFC 8200, 4291). */
#include "ipv6.h"

const struct ipv6_addr ipv6_unspecified = { { 0 } };
const struct ipv6_addr ipv6_loopback = { { [15] = 1 } };
const struct ipv6_addr ipv6_all_nodes = { { 0xff, 0x02, [15] = 1 } };
const struct ipv6_addr ipv6_all_routers = { { 0xff, 0x02, [15] = 2 } };
const struct ipv6_addr ipv6_mld2_routers = { { 0xff, 0x02, [15] = 0x16 } };

/* The Parameter Problem a failure calls for (RFC 8200 4), kept in h so the
 * caller does not walk the headers again to answer. */
static int ipv6_pp(struct ipv6_hdr *h, int err, int8_t code, size_t ptr)
{
	h->pp_code = code;
	h->pp_ptr = (uint16_t)ptr;
	return err;
}

/* Options of a hop-by-hop or destination options header at buf[off..end). */
static int ipv6_walk_opts(const uint8_t *buf, size_t off, size_t end, bool hbh, struct ipv6_hdr *h)
{
	size_t p = off + 2;
	unsigned nopts = 0;
	while (p < end) {
		uint8_t t = buf[p];
		if (t == IPV6_OPT_PAD1) {
			p++;
			continue;
		}
		/* Every other option has a length byte, and its data must end
		 * inside this header. */
		if (p + 2 > end)
			return ipv6_pp(h, WIRE_EOPT, IPV6_PP_HEADER, p);
		size_t olen = buf[p + 1];
		if (p + 2 + olen > end)
			return ipv6_pp(h, WIRE_EOPT, IPV6_PP_HEADER, p + 1);
		if (t != IPV6_OPT_PADN) {
			if (++nopts > IPV6_OPT_MAX)
				return WIRE_ELIMIT;
			if (t == IPV6_OPT_ROUTER_ALERT && hbh) {
				/* RFC 2711: exactly two bytes of value. */
				if (olen != 2)
					return ipv6_pp(h, WIRE_EOPT, IPV6_PP_HEADER, p + 1);
				h->router_alert = true;
			} else {
				/* Unknown (jumbograms included: a 64 KiB frame
				 * never reaches us): the two high bits of the
				 * type say what to do (RFC 8200 4.2). */
				switch (t >> 6) {
				case 0:
					break; /* skip it */
				case 1:
					return WIRE_EOPT; /* discard silently */
				case 2:
					return ipv6_pp(h, WIRE_EOPT, IPV6_PP_OPTION, p);
				default:
					/* Like 2, but no error to a multicast
					 * destination (no storm of replies). */
					if (ipv6_is_multicast(&h->dst))
						return WIRE_EOPT;
					return ipv6_pp(h, WIRE_EOPT, IPV6_PP_OPTION, p);
				}
			}
		}
		p += 2 + olen;
	}
	return WIRE_OK;
}

/* Walk the extension headers from offset 40 to `end`.  `quoted`: the
 * packet is one quoted in an ICMPv6 error, where only lengths matter and a
 * cut header is WIRE_ETRUNC rather than a lying length. */
static int ipv6_walk(const uint8_t *buf, size_t end, bool quoted, struct ipv6_hdr *h)
{
	size_t off = IPV6_HLEN;
	size_t nh_ptr = 6; /* where the current next-header value was read */
	uint8_t nh = h->next;
	int cut = quoted ? WIRE_ETRUNC : WIRE_EBADLEN;

	for (;;) {
		if (nh != IPV6_NH_HOPOPTS && nh != IPV6_NH_DSTOPTS && nh != IPV6_NH_ROUTING &&
		    nh != IPV6_NH_FRAGMENT)
			break; /* upper layer, or no next header */
		if (nh == IPV6_NH_HOPOPTS && off != IPV6_HLEN)
			return ipv6_pp(h, WIRE_EEXT, IPV6_PP_NEXT, nh_ptr);
		if (h->next_ext >= IPV6_EXT_MAX)
			return WIRE_ELIMIT;
		/* Every extension header has at least 8 bytes. */
		if (off + 8 > end)
			return cut;
		size_t hlen = nh == IPV6_NH_FRAGMENT ? 8 : ((size_t)buf[off + 1] + 1) * 8;
		if (off + hlen > end)
			return cut;
		if (off - IPV6_HLEN + hlen > IPV6_EXT_MAX_BYTES)
			return WIRE_ELIMIT;
		h->next_ext++;

		if (nh == IPV6_NH_FRAGMENT) {
			uint16_t fo = sk_get_be16(buf + off + 2);
			uint16_t foff = fo & 0xfff8;
			bool more = fo & 1;
			/* RFC 6946: an atomic fragment is a whole packet. */
			if (foff != 0 || more) {
				h->frag = true;
				h->frag_id = sk_get_be32(buf + off + 4);
				h->frag_off = foff;
				h->frag_more = more;
				/* Ports sit in a quoted first fragment: go on. */
				if (!quoted || foff != 0) {
					h->proto = buf[off];
					h->ext_len = (uint16_t)(off + 8 - IPV6_HLEN);
					h->l4_off = (uint16_t)(off + 8);
					h->l4_len = (uint16_t)(end - off - 8);
					return WIRE_EFRAG;
				}
			}
		} else if (!quoted && nh == IPV6_NH_ROUTING) {
			uint8_t type = buf[off + 2], left = buf[off + 3];
			/* RFC 5095 deprecates type 0 outright (amplification
			 * between hosts); skiff drops it even with no segments
			 * left, as it has no legitimate use.  Other types
			 * with segments left would make us a hop: drop with
			 * the Parameter Problem RFC 8200 4.4 asks for. */
			if (type == 0)
				return ipv6_pp(h, WIRE_EROUTE, left ? IPV6_PP_HEADER : -1, off + 2);
			if (left != 0)
				return ipv6_pp(h, WIRE_EROUTE, IPV6_PP_HEADER, off + 2);
		} else if (!quoted && (nh == IPV6_NH_HOPOPTS || nh == IPV6_NH_DSTOPTS)) {
			int r = ipv6_walk_opts(buf, off, off + hlen, nh == IPV6_NH_HOPOPTS, h);
			if (r != WIRE_OK)
				return r;
		}
		nh = buf[off];
		nh_ptr = off;
		off += hlen;
	}
	h->proto = nh;
	h->ext_len = (uint16_t)(off - IPV6_HLEN);
	h->l4_off = (uint16_t)off;
	h->l4_len = (uint16_t)(end - off);
	return WIRE_OK;
}

static void ipv6_read_fixed(const uint8_t *buf, struct ipv6_hdr *h)
{
	uint32_t w = sk_get_be32(buf);
	h->tclass = (uint8_t)(w >> 20);
	h->flow = w & 0xfffff;
	h->payload_len = sk_get_be16(buf + 4);
	h->next = buf[6];
	h->hop_limit = buf[7];
	sk_memcpy(h->src.b, buf + 8, IPV6_ADDR_LEN);
	sk_memcpy(h->dst.b, buf + 24, IPV6_ADDR_LEN);
	h->proto = h->next;
	h->l4_off = IPV6_HLEN;
	h->l4_len = 0;
	h->ext_len = 0;
	h->next_ext = 0;
	h->router_alert = false;
	h->frag = false;
	h->frag_id = 0;
	h->frag_off = 0;
	h->frag_more = false;
	h->pp_code = -1;
	h->pp_ptr = 0;
}

int ipv6_parse(const uint8_t *buf, size_t len, struct ipv6_hdr *h)
{
	if (len < IPV6_HLEN)
		return WIRE_ETRUNC;
	if (buf[0] >> 4 != 6)
		return WIRE_EVERSION;
	size_t total = (size_t)IPV6_HLEN + sk_get_be16(buf + 4);
	if (total > len)
		return WIRE_ETRUNC;
	ipv6_read_fixed(buf, h);
	h->l4_len = h->payload_len;
	if (ipv6_is_multicast(&h->src) || ipv6_is_unspecified(&h->dst) ||
	    ipv6_is_loopback(&h->src) || ipv6_is_loopback(&h->dst))
		return WIRE_EBADADDR;
	return ipv6_walk(buf, total, false, h);
}

int ipv6_parse_quoted(const uint8_t *buf, size_t len, struct ipv6_hdr *h)
{
	if (len < IPV6_HLEN)
		return WIRE_ETRUNC;
	if (buf[0] >> 4 != 6)
		return WIRE_EVERSION;
	ipv6_read_fixed(buf, h);
	size_t end = SK_MIN(len, (size_t)IPV6_HLEN + h->payload_len);
	return ipv6_walk(buf, end, true, h);
}

size_t ipv6_emit(uint8_t *buf, size_t cap, const struct ipv6_hdr *h, uint16_t payload_len)
{
	if (cap < IPV6_HLEN)
		return 0;
	/* Copy the addresses first: a reply built in place may pass h
	 * pointing at fields of buf itself. */
	uint8_t a[2 * IPV6_ADDR_LEN];
	sk_memcpy(a, h->src.b, IPV6_ADDR_LEN);
	sk_memcpy(a + IPV6_ADDR_LEN, h->dst.b, IPV6_ADDR_LEN);
	sk_put_be32(buf, 6u << 28 | (uint32_t)h->tclass << 20 | (h->flow & 0xfffff));
	sk_put_be16(buf + 4, payload_len);
	buf[6] = h->next;
	buf[7] = h->hop_limit;
	sk_memcpy(buf + 8, a, sizeof(a));
	return IPV6_HLEN;
}

size_t ipv6_emit_hbh_router_alert(uint8_t *buf, size_t cap, uint8_t next, uint16_t value)
{
	if (cap < IPV6_HBH_RA_LEN)
		return 0;
	buf[0] = next;
	buf[1] = 0; /* (0 + 1) * 8 bytes */
	buf[2] = IPV6_OPT_ROUTER_ALERT;
	buf[3] = 2;
	sk_put_be16(buf + 4, value);
	/* Two bytes of PadN (no data) fill the header to 8, as Linux does. */
	buf[6] = IPV6_OPT_PADN;
	buf[7] = 0;
	return IPV6_HBH_RA_LEN;
}

bool ipv6_prefix_eq(const struct ipv6_addr *a, const struct ipv6_addr *b, unsigned plen)
{
	if (plen > 128)
		plen = 128;
	unsigned whole = plen / 8, bits = plen % 8;
	if (sk_memcmp(a->b, b->b, whole) != 0)
		return false;
	if (bits == 0)
		return true;
	uint8_t m = (uint8_t)(0xff00u >> bits);
	return ((a->b[whole] ^ b->b[whole]) & m) == 0;
}

void ipv6_prefix_mask(struct ipv6_addr *a, unsigned plen)
{
	if (plen >= 128)
		return;
	unsigned whole = plen / 8, bits = plen % 8;
	if (bits) {
		a->b[whole] &= (uint8_t)(0xff00u >> bits);
		whole++;
	}
	sk_memset(a->b + whole, 0, IPV6_ADDR_LEN - whole);
}

static const uint8_t ipv6_sn_prefix[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff };

void ipv6_solicited_node(struct ipv6_addr *out, const struct ipv6_addr *a)
{
	uint8_t low[3];
	sk_memcpy(low, a->b + 13, 3); /* out may be a */
	sk_memcpy(out->b, ipv6_sn_prefix, sizeof(ipv6_sn_prefix));
	sk_memcpy(out->b + 13, low, 3);
}

bool ipv6_is_solicited_node(const struct ipv6_addr *a)
{
	return sk_memcmp(a->b, ipv6_sn_prefix, sizeof(ipv6_sn_prefix)) == 0;
}

void ipv6_iid_from_mac(uint8_t iid[8], const uint8_t mac[SK_MAC_LEN])
{
	iid[0] = mac[0] ^ 0x02; /* "modified": the U/L bit means global when 1 */
	iid[1] = mac[1];
	iid[2] = mac[2];
	iid[3] = 0xff;
	iid[4] = 0xfe;
	iid[5] = mac[3];
	iid[6] = mac[4];
	iid[7] = mac[5];
}

void ipv6_link_local_from_mac(struct ipv6_addr *out, const uint8_t mac[SK_MAC_LEN])
{
	sk_memset(out->b, 0, 8);
	out->b[0] = 0xfe;
	out->b[1] = 0x80;
	ipv6_iid_from_mac(out->b + 8, mac);
}

void ipv6_mcast_mac(uint8_t mac[SK_MAC_LEN], const struct ipv6_addr *group)
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	sk_memcpy(mac + 2, group->b + 12, 4);
}

size_t ipv6_format(const uint8_t a[16], char out[IPV6_STRLEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned g[8];
	for (int i = 0; i < 8; i++)
		g[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	/* runlen starts at 1 so that a lone zero group stays "0" (RFC 5952
	 * 4.2.2). */
	int run = -1, runlen = 1;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && g[j] == 0)
			j++;
		if (j - i > runlen) {
			run = i;
			runlen = j - i;
		}
		i = j > i ? j : i + 1;
	}
	size_t n = 0;
	for (int i = 0; i < 8; i++) {
		if (i == run) {
			out[n++] = ':';
			out[n++] = ':';
			i += runlen - 1;
			continue;
		}
		if (i && i != run + runlen)
			out[n++] = ':';
		for (int sh = 12; sh >= 0; sh -= 4)
			if ((g[i] >> sh) || sh == 0) /* no leading zeros */
				out[n++] = hex[(g[i] >> sh) & 15];
	}
	out[n] = 0;
	return n;
}
