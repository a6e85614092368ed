/* tcp.h — TCP header and options (RFC 9293, 7323, 2018).
 *
 * parse checks: data offset >= 5 and within the buffer, checksum over the
 * pseudo header, and every option: EOL ends the list; NOP is one byte; any
 * other option needs a length byte >= 2 that fits in the option space, and
 * the known ones their exact lengths (MSS 4, WS 3, SACK-perm 2, TS 10, SACK
 * 2+8n with n 1..4); unknown options are skipped by length; a malformed
 * length is WIRE_EOPT.  A window scale over 14 is returned as 14 (RFC 7323
 * 2.3 says to use 14).  Emit drops SACK blocks that do not fit in the 40
 * option bytes (with timestamps, at most 3 fit).
 */
#ifndef WIRE_TCP_H
#define WIRE_TCP_H

#include "wire.h"

#define TCP_HLEN 20
#define TCP_MAX_HLEN 60
#define TCP_MAX_SACK 4

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20
#define TCP_ECE 0x40
#define TCP_CWR 0x80

#define TCP_OPT_EOL 0
#define TCP_OPT_NOP 1
#define TCP_OPT_MSS 2
#define TCP_OPT_WS 3
#define TCP_OPT_SACK_PERM 4
#define TCP_OPT_SACK 5
#define TCP_OPT_TS 8

struct tcp_sack_block {
	uint32_t left, right;
};

struct tcp_opts {
	bool has_mss, has_ws, sack_perm, has_ts;
	uint16_t mss;
	uint8_t ws;
	uint32_t ts_val, ts_ecr;
	uint8_t nsack;
	struct tcp_sack_block sack[TCP_MAX_SACK];
};

struct tcp_hdr {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t hlen;   /* header bytes incl. options, 20..60 */
	uint8_t flags;  /* TCP_FIN .. TCP_CWR */
	uint16_t win;   /* raw, unscaled */
	uint16_t csum;
	uint16_t urg;
	struct tcp_opts opts;
	uint16_t payload_off; /* == hlen */
	uint16_t payload_len;
};

/* src/dst: IPv4 addresses (host order) for the pseudo header. */
int tcp_parse(const uint8_t *buf, size_t len, uint32_t src, uint32_t dst, struct tcp_hdr *h);

/* Options alone (the bytes between offset 20 and hlen). */
int tcp_opts_parse(const uint8_t *opt, size_t len, struct tcp_opts *o);

/* Bytes the options in `o` take when emitted (padded to a multiple of 4). */
size_t tcp_opts_len(const struct tcp_opts *o);

/* Write header + options of `h` (hlen is computed, h->hlen ignored) in front
 * of payload_len bytes already in place at buf + header length, and compute
 * the checksum.  Options are laid out as Linux does (MSS, SACK-perm+TS or
 * NOP NOP TS, NOP WS, NOP NOP SACK...) so they stay 4-byte aligned.
 * Returns header length + payload_len, or 0 if cap is too small. */
size_t tcp_emit(uint8_t *buf, size_t cap, const struct tcp_hdr *h, uint32_t src, uint32_t dst,
		uint16_t payload_len);

/* Either family: `pseudo` is the pseudo header's sum without the length
 * (csum_pseudo4(src, dst, IPV4_PROTO_TCP, 0), or csum_pseudo6(src, dst,
 * IPV6_NH_TCP, 0)); the segment length is added here, which is the same sum
 * for both since a segment is under 64 KiB.  tcp_parse and tcp_emit are
 * these with the IPv4 pseudo header. */
int tcp_parse_ps(const uint8_t *buf, size_t len, uint64_t pseudo, struct tcp_hdr *h);
size_t tcp_emit_ps(uint8_t *buf, size_t cap, const struct tcp_hdr *h, uint64_t pseudo,
		   uint16_t payload_len);
/* The checksum not checked: the device vouched for it (ring.h
 * RING_SLOT_CSUM_OK; the field may hold a partial sum then). */
int tcp_parse_nocsum(const uint8_t *buf, size_t len, struct tcp_hdr *h);
/* The header alone, checksum field 0, for a caller that sums the segment
 * itself (the payload copied in pieces, or the sum left to the device).
 * Returns tcp_hdr_len(h), or 0 if cap is too small. */
size_t tcp_emit_hdr(uint8_t *buf, size_t cap, const struct tcp_hdr *h);

/* Header length tcp_emit will use for h. */
static inline size_t tcp_hdr_len(const struct tcp_hdr *h)
{
	return TCP_HLEN + tcp_opts_len(&h->opts);
}

/* Sequence-space comparisons (RFC 9293 3.4), wrap-safe. */
static inline bool tcp_seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool tcp_seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool tcp_seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline bool tcp_seq_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

#endif
