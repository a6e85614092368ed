/* fuzz_tcp_input.c — segments into an established connection.
 *
 * Each run: a fresh engine, a listener, a handshake from a fixed peer, then
 * the input as records:
 *   u8 ctl, u8 len_hi, u8 len_lo, len bytes of TCP segment
 * ctl bit 0: add the peer's next sequence number to the seq field,
 *     bit 1: add our next sequence number to the ack field (so the fuzzer
 *            works relative to the connection and reaches in-window paths),
 *     bit 2: force the ports of the connection,
 *     bits 3-5: advance time by 0, 1, 10, 40, 200 ms, 1 s, 10 s, 100 s,
 *     bits 6-7: app action: none, recv, send 3000 bytes, shutdown/close.
 * A record of 9..19 bytes with bit 2 set is an ICMP error about the
 * connection instead (too short for a segment anyway): byte 0 picks the
 * type/code, bytes 1-4 the MTU, 5-8 the quoted sequence number (plus our
 * last one when bit 1 is set); over IPv6 through tcp_icmp6_error, whose
 * accepted Packet Too Big must then cap every segment at MTU - 40.
 * The records run twice, each time on a fresh engine: over IPv4, then over
 * IPv6 (tcp_input6, the v6 pseudo header, MSS and output edge), so every
 * seed reaches both families' paths.
 * Checksums are not verified in fuzz builds (SK_FUZZING).  Every emitted
 * segment must parse, leave on the connection's family from our address,
 * and the engine's invariants must hold after each step.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/tcp.h"
#include "wire/csum.h"
#include "wire/icmp.h"
#include "wire/icmp6.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"

#define LOCAL SK_IP4(198, 18, 0, 2)
#define PEER SK_IP4(198, 18, 0, 1)
#define LPORT 7
#define PPORT 40000

static struct tcp_stack st;
static uint8_t arena[1 << 20];
static uint32_t last_seq, last_ack;
static int nout;
static bool fam6; /* this run's family */
static size_t max_seg; /* the largest segment allowed out: the link's, then the path's */
static struct sk_addr local6, peer6;

static int out(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst, const uint8_t *seg, size_t len)
{
	(void)ctx;
	(void)now;
	struct tcp_hdr h;
	if (fam6 || src != LOCAL || dst != PEER || tcp_parse(seg, len, src, dst, &h) != WIRE_OK ||
	    len > 1500 - 20)
		abort();
	last_seq = h.seq;
	last_ack = h.ack;
	nout++;
	return 0;
}

static int out6(void *ctx, sk_time_ns now, const struct sk_addr *src, const struct sk_addr *dst,
		const uint8_t *seg, size_t len)
{
	(void)ctx;
	(void)now;
	struct tcp_hdr h;
	if (!fam6 || !sk_addr_eq(src, &local6) || !sk_addr_eq(dst, &peer6) ||
	    tcp_parse_ps(seg, len, csum_pseudo6(src->b, dst->b, IPV6_NH_TCP, 0), &h) != WIRE_OK ||
	    len > max_seg)
		abort();
	last_seq = h.seq;
	last_ack = h.ack;
	nout++;
	return 0;
}

static bool src6(void *ctx, const struct sk_addr *dst, struct sk_addr *src)
{
	(void)ctx;
	(void)dst;
	*src = local6;
	return true;
}

static void feed(sk_time_ns now, const uint8_t *seg, size_t len)
{
	if (fam6)
		tcp_input6(&st, now, &peer6, &local6, seg, len);
	else
		tcp_input(&st, now, PEER, LOCAL, seg, len);
}

static void inject(sk_time_ns now, uint8_t flags, uint32_t seq, uint32_t ack,
		   const struct tcp_opts *o)
{
	uint8_t buf[64];
	struct tcp_hdr h;
	memset(&h, 0, sizeof(h));
	h.sport = PPORT;
	h.dport = LPORT;
	h.seq = seq;
	h.ack = ack;
	h.flags = flags;
	h.win = 4096;
	if (o)
		h.opts = *o;
	uint64_t ps = fam6 ? csum_pseudo6(peer6.b, local6.b, IPV6_NH_TCP, 0)
			   : csum_pseudo4(PEER, LOCAL, IPV4_PROTO_TCP, 0);
	size_t n = tcp_emit_ps(buf, sizeof(buf), &h, ps, 0);
	feed(now, buf, n);
}

/* An ICMP error about the connection (see the header comment). */
static void icmp_err(sk_time_ns now, const uint8_t *b, uint8_t ctl)
{
	uint32_t mtu = sk_get_be32(b + 1), seq = sk_get_be32(b + 5);
	if (ctl & 2)
		seq += last_seq;
	uint64_t before = st.stats.pmtu_updates;
	if (fam6) {
		static const uint8_t types[4] = {ICMP6_PACKET_TOO_BIG, ICMP6_DEST_UNREACH,
						 ICMP6_TIME_EXCEEDED, ICMP6_PARAM_PROBLEM};
		struct icmp6_error e;
		memset(&e, 0, sizeof(e));
		e.type = types[b[0] & 3];
		e.code = (uint8_t)(b[0] >> 2 & 7);
		e.mtu = e.type == ICMP6_PACKET_TOO_BIG ? mtu : 0;
		memcpy(e.src.b, local6.b, 16);
		memcpy(e.dst.b, peer6.b, 16);
		e.proto = b[0] & 0x80 ? IPV6_NH_UDP : IPV6_NH_TCP;
		e.sport = LPORT;
		e.dport = PPORT;
		e.tcp_seq = seq;
		tcp_icmp6_error(&st, now, &e);
		if (st.stats.pmtu_updates != before) {
			if (mtu < IPV6_MIN_MTU || mtu - 40 > max_seg)
				abort(); /* under 1280, or upwards */
			max_seg = mtu - 40;
		}
	} else {
		struct icmp_error e;
		memset(&e, 0, sizeof(e));
		e.type = b[0] & 1 ? ICMP_DEST_UNREACH : ICMP_TIME_EXCEEDED;
		e.code = b[0] & 2 ? ICMP_UNREACH_FRAG_NEEDED : (uint8_t)(b[0] >> 2 & 7);
		e.mtu = (uint16_t)mtu;
		e.src = LOCAL;
		e.dst = PEER;
		e.proto = IPV4_PROTO_TCP;
		e.sport = LPORT;
		e.dport = PPORT;
		e.tcp_seq = seq;
		tcp_icmp_error(&st, now, &e);
		if (st.stats.pmtu_updates != before) {
			if ((uint16_t)mtu < 576 || (uint16_t)mtu - 20u > max_seg)
				abort();
			max_seg = (uint16_t)mtu - 20u;
		}
	}
}

static void run(const uint8_t *data, size_t size)
{
	max_seg = fam6 ? 1500 - 40 : 1500 - 20;
	static const sk_time_ns steps[8] = {0, 1, 10, 40, 200, 1000, 10000, 100000};
	struct tcp_config cfg;
	tcp_config_default(&cfg);
	cfg.local_ip = LOCAL;
	cfg.max_sockets = 8;
	cfg.sndbuf = 16384;
	cfg.rcvbuf = 16384;
	cfg.seed[0] = 1;
	cfg.seed[1] = 2;
	cfg.ip_output = out;
	cfg.ip6_output = out6;
	cfg.src6 = src6;
	if (tcp_arena_size(&cfg) > sizeof(arena) ||
	    tcp_stack_init(&st, arena, sizeof(arena), &cfg, 0) != 0)
		abort();
	int ls = tcp_listen(&st, LPORT, 4);
	sk_time_ns now = 0;
	struct tcp_opts o = {.has_mss = true, .mss = 1400, .has_ws = true, .ws = 2,
			     .sack_perm = true, .has_ts = true, .ts_val = 1000};
	inject(now, TCP_SYN, 5000, 0, &o);
	tcp_poll(&st, now);
	uint32_t iss = last_seq;
	o = (struct tcp_opts){.has_ts = true, .ts_val = 1001};
	inject(now, TCP_ACK, 5001, iss + 1, &o);
	int s = tcp_accept(&st, ls, NULL, NULL);
	if (s < 0)
		abort();
	uint8_t seg[2048];
	static uint8_t junk[4096];
	bool closed = false;
	size_t i = 0;
	while (i + 3 <= size) {
		uint8_t ctl = data[i];
		size_t len = (size_t)data[i + 1] << 8 | data[i + 2];
		i += 3;
		if (len > size - i)
			len = size - i;
		if (len > sizeof(seg))
			len = sizeof(seg);
		memcpy(seg, data + i, len);
		i += len;
		now += steps[(ctl >> 3) & 7] * SK_NS_PER_MS;
		if (len >= 20) {
			struct tcp_info in;
			if (tcp_info(&st, s, &in) == 0 || closed) {
				if (ctl & 1)
					sk_put_be32(seg + 4, sk_get_be32(seg + 4) + last_ack);
				if (ctl & 2)
					sk_put_be32(seg + 8, sk_get_be32(seg + 8) + last_seq);
			}
			if (ctl & 4) {
				sk_put_be16(seg, PPORT);
				sk_put_be16(seg + 2, LPORT);
			}
		}
		if (len >= 9 && len < 20 && (ctl & 4))
			icmp_err(now, seg, ctl);
		else
			feed(now, seg, len);
		if (!closed) {
			switch (ctl >> 6) {
			case 1:
				tcp_recv(&st, s, junk, sizeof(junk));
				break;
			case 2:
				tcp_send(&st, s, junk, 3000);
				break;
			case 3:
				if (ctl & 1) {
					tcp_close(&st, now, s);
					closed = true;
				} else {
					tcp_shutdown(&st, s, TCP_SHUT_WR);
				}
				break;
			}
		}
		tcp_poll(&st, now);
		struct tcp_event ev[8];
		tcp_events(&st, ev, 8);
		if (tcp_check(&st) != 0)
			abort();
		sk_time_ns d = tcp_next_deadline(&st);
		if (d != SK_TIME_NEVER && d < now && d != 0)
			abort(); /* a due timer must have run */
	}
	/* Run every timer out: the engine must come back to an empty state. */
	for (int k = 0; k < 200; k++) {
		sk_time_ns d = tcp_next_deadline(&st);
		if (d == SK_TIME_NEVER)
			break;
		now = d > now ? d : now;
		tcp_poll(&st, now);
		if (tcp_check(&st) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t l6[16] = {0x20, 0x01, 0, 2, [15] = 2}, p6[16] = {0x20, 0x01, 0, 2, [15] = 1};
	local6 = sk_addr_v6(l6);
	peer6 = sk_addr_v6(p6);
	fam6 = false;
	run(data, size);
	fam6 = true;
	run(data, size);
	return 0;
}
