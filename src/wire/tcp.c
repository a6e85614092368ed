/* tcp.c — TCP header and options (RFC 9293 3.1, RFC 7323, RFC 2018). */
#include "tcp.h"
#include "csum.h"
#include "ipv4.h"

#define TCP_OPT_SPACE (TCP_MAX_HLEN - TCP_HLEN) /* 40 bytes */
#define TCP_OPT_MSS_LEN 4
#define TCP_OPT_WS_LEN 3
#define TCP_OPT_SACK_PERM_LEN 2
#define TCP_OPT_TS_LEN 10
#define TCP_SACK_BLOCK_LEN 8
#define TCP_WS_MAX 14 /* RFC 7323 2.3 */

int tcp_opts_parse(const uint8_t *opt, size_t len, struct tcp_opts *o)
{
	sk_memset(o, 0, sizeof(*o));
	size_t i = 0;
	while (i < len) {
		uint8_t kind = opt[i];
		if (kind == TCP_OPT_EOL)
			break;
		if (kind == TCP_OPT_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return WIRE_EOPT; /* no room for the length byte */
		size_t olen = opt[i + 1];
		if (olen < 2 || olen > len - i)
			return WIRE_EOPT;
		const uint8_t *v = opt + i + 2;
		switch (kind) {
		case TCP_OPT_MSS:
			if (olen != TCP_OPT_MSS_LEN)
				return WIRE_EOPT;
			o->has_mss = true;
			o->mss = sk_get_be16(v);
			break;
		case TCP_OPT_WS:
			if (olen != TCP_OPT_WS_LEN)
				return WIRE_EOPT;
			o->has_ws = true;
			/* RFC 7323 2.3: a larger shift MUST be used as 14.
			 * Clamped here so no caller can forget. */
			o->ws = v[0] > TCP_WS_MAX ? TCP_WS_MAX : v[0];
			break;
		case TCP_OPT_SACK_PERM:
			if (olen != TCP_OPT_SACK_PERM_LEN)
				return WIRE_EOPT;
			o->sack_perm = true;
			break;
		case TCP_OPT_TS:
			if (olen != TCP_OPT_TS_LEN)
				return WIRE_EOPT;
			o->has_ts = true;
			o->ts_val = sk_get_be32(v);
			o->ts_ecr = sk_get_be32(v + 4);
			break;
		case TCP_OPT_SACK: {
			size_t n = (olen - 2) / TCP_SACK_BLOCK_LEN;
			if ((olen - 2) % TCP_SACK_BLOCK_LEN != 0 || n < 1 || n > TCP_MAX_SACK)
				return WIRE_EOPT;
			o->nsack = (uint8_t)n;
			for (size_t k = 0; k < n; k++) {
				o->sack[k].left = sk_get_be32(v + k * 8);
				o->sack[k].right = sk_get_be32(v + k * 8 + 4);
			}
			break;
		}
		default:
			break; /* unknown: skipped by its length */
		}
		i += olen;
	}
	return WIRE_OK;
}

/* Option bytes other than SACK blocks, in emit's layout. */
static size_t tcp_opts_fixed_len(const struct tcp_opts *o)
{
	size_t n = 0;
	if (o->has_mss)
		n += 4;
	if (o->has_ts || o->sack_perm)
		n += o->has_ts ? 12 : 4; /* SACK_PERM+TS, NOP NOP TS, or NOP NOP SACK_PERM */
	if (o->has_ws)
		n += 4; /* NOP WS */
	return n;
}

/* SACK blocks that fit after the fixed options.  With timestamps only three
 * do (12 + 4 + 3*8 = 40); extra blocks are dropped, as RFC 2018 expects. */
static size_t tcp_opts_nsack(const struct tcp_opts *o)
{
	size_t room = TCP_OPT_SPACE - tcp_opts_fixed_len(o);
	size_t n = SK_MIN((size_t)o->nsack, (size_t)TCP_MAX_SACK);
	if (room < 4 + TCP_SACK_BLOCK_LEN)
		return 0;
	return SK_MIN(n, (room - 4) / TCP_SACK_BLOCK_LEN);
}

size_t tcp_opts_len(const struct tcp_opts *o)
{
	size_t n = tcp_opts_nsack(o);
	return tcp_opts_fixed_len(o) + (n ? 4 + n * TCP_SACK_BLOCK_LEN : 0);
}

/* Lay options out as Linux does, each starting on a 4-byte boundary so a
 * receiver can read TS and SACK words aligned.  Returns bytes written,
 * always tcp_opts_len(o). */
static size_t tcp_opts_emit(uint8_t *p, const struct tcp_opts *o)
{
	uint8_t *s = p;
	if (o->has_mss) {
		*p++ = TCP_OPT_MSS;
		*p++ = TCP_OPT_MSS_LEN;
		sk_put_be16(p, o->mss);
		p += 2;
	}
	if (o->has_ts) {
		if (o->sack_perm) {
			*p++ = TCP_OPT_SACK_PERM;
			*p++ = TCP_OPT_SACK_PERM_LEN;
		} else {
			*p++ = TCP_OPT_NOP;
			*p++ = TCP_OPT_NOP;
		}
		*p++ = TCP_OPT_TS;
		*p++ = TCP_OPT_TS_LEN;
		sk_put_be32(p, o->ts_val);
		sk_put_be32(p + 4, o->ts_ecr);
		p += 8;
	} else if (o->sack_perm) {
		*p++ = TCP_OPT_NOP;
		*p++ = TCP_OPT_NOP;
		*p++ = TCP_OPT_SACK_PERM;
		*p++ = TCP_OPT_SACK_PERM_LEN;
	}
	if (o->has_ws) {
		*p++ = TCP_OPT_NOP;
		*p++ = TCP_OPT_WS;
		*p++ = TCP_OPT_WS_LEN;
		*p++ = o->ws;
	}
	size_t n = tcp_opts_nsack(o);
	if (n) {
		*p++ = TCP_OPT_NOP;
		*p++ = TCP_OPT_NOP;
		*p++ = TCP_OPT_SACK;
		*p++ = (uint8_t)(2 + n * TCP_SACK_BLOCK_LEN);
		for (size_t k = 0; k < n; k++) {
			sk_put_be32(p, o->sack[k].left);
			sk_put_be32(p + 4, o->sack[k].right);
			p += 8;
		}
	}
	return (size_t)(p - s);
}

int tcp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst, struct tcp_hdr *h)
{
	return tcp_parse_ps(buf, len, csum_pseudo4(src, dst, IPV4_PROTO_TCP, 0), h);
}

static int tcp_parse_v(const uint8_t *buf, size_t len, uint64_t pseudo, bool verify,
		       struct tcp_hdr *h)
{
	if (len < TCP_HLEN)
		return WIRE_ETRUNC;
	if (len > 0xffff)
		return WIRE_EBADLEN; /* cannot come out of an IPv4 datagram (nor IPv6 without jumbograms) */
	size_t hlen = (size_t)(buf[12] >> 4) * 4;
	if (hlen < TCP_HLEN)
		return WIRE_EBADLEN;
	if (hlen > len)
		return WIRE_ETRUNC;
	if (WIRE_VERIFY_CSUM && verify &&
	    csum_fold(csum_add(pseudo + len, buf, len)) != 0)
		return WIRE_ECSUM;
	h->sport = sk_get_be16(buf);
	h->dport = sk_get_be16(buf + 2);
	h->seq = sk_get_be32(buf + 4);
	h->ack = sk_get_be32(buf + 8);
	h->hlen = (uint8_t)hlen;
	h->flags = buf[13];
	h->win = sk_get_be16(buf + 14);
	h->csum = sk_get_be16(buf + 16);
	h->urg = sk_get_be16(buf + 18);
	h->payload_off = (uint16_t)hlen;
	h->payload_len = (uint16_t)(len - hlen);
	return tcp_opts_parse(buf + TCP_HLEN, hlen - TCP_HLEN, &h->opts);
}

int tcp_parse_ps(const uint8_t *buf, size_t len, uint64_t pseudo, struct tcp_hdr *h)
{
	return tcp_parse_v(buf, len, pseudo, true, h);
}

int tcp_parse_nocsum(const uint8_t *buf, size_t len, struct tcp_hdr *h)
{
	return tcp_parse_v(buf, len, 0, false, h);
}

size_t tcp_emit(uint8_t *buf, size_t cap, const struct tcp_hdr *h, uint32_t src, uint32_t dst,
		uint16_t payload_len)
{
	return tcp_emit_ps(buf, cap, h, csum_pseudo4(src, dst, IPV4_PROTO_TCP, 0), payload_len);
}

size_t tcp_emit_ps(uint8_t *buf, size_t cap, const struct tcp_hdr *h, uint64_t pseudo,
		   uint16_t payload_len)
{
	size_t hlen = tcp_hdr_len(h);
	size_t total = hlen + payload_len;
	if (total > 0xffff || cap < total)
		return 0;
	tcp_emit_hdr(buf, hlen, h);
	sk_put_be16(buf + 16, csum_fold(csum_add(pseudo + total, buf, total)));
	return total;
}

size_t tcp_emit_hdr(uint8_t *buf, size_t cap, const struct tcp_hdr *h)
{
	size_t hlen = tcp_hdr_len(h);
	if (cap < hlen)
		return 0;
	sk_put_be16(buf, h->sport);
	sk_put_be16(buf + 2, h->dport);
	sk_put_be32(buf + 4, h->seq);
	sk_put_be32(buf + 8, h->ack);
	buf[12] = (uint8_t)(hlen / 4 << 4);
	buf[13] = h->flags;
	sk_put_be16(buf + 14, h->win);
	sk_put_be16(buf + 16, 0);
	sk_put_be16(buf + 18, h->urg);
	tcp_opts_emit(buf + TCP_HLEN, &h->opts);
	return hlen;
}
