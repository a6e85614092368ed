/* tcp_test.c — TCP header, options, checksum, emit layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "wire/csum.h"
#include "wire/tcp.h"

#define SRC SK_IP4(10, 0, 0, 1)
#define DST SK_IP4(10, 0, 0, 2)

/* A SYN from Linux, 10.0.0.1:42182 -> 10.0.0.2:80: MSS 1460, SACK-perm,
 * TS val 0x7a3c110f ecr 0, NOP, WS 7 — the kernel's usual 40-byte header. */
static const uint8_t syn[40] = {
	0xa4, 0xc6, 0x00, 0x50, 0x5b, 0x3e, 0x8e, 0x2f, 0x00, 0x00, 0x00, 0x00,
	0xa0, 0x02, 0xfa, 0xf0, 0x1f, 0x3d, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4,
	0x04, 0x02, 0x08, 0x0a, 0x7a, 0x3c, 0x11, 0x0f, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x03, 0x03, 0x07,
};

/* A PSH|ACK with NOP NOP TS, NOP NOP SACK(1000-2000) and an HTTP request. */
static const uint8_t data_seg[62] = {
	0xa4, 0xc6, 0x00, 0x50, 0x5b, 0x3e, 0x8e, 0x30, 0x11, 0x22, 0x33, 0x44,
	0xb0, 0x18, 0x01, 0xf6, 0x16, 0x76, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a,
	0x7a, 0x3c, 0x12, 0x00, 0x0b, 0xad, 0xbe, 0xef, 0x01, 0x01, 0x05, 0x0a,
	0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x07, 0xd0, 0x47, 0x45, 0x54, 0x20,
	0x2f, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x31, 0x0d, 0x0a,
	0x0d, 0x0a,
};

static void reseal(uint8_t *seg, size_t len)
{
	sk_put_be16(seg + 16, 0);
	uint64_t s = csum_pseudo4(SRC, DST, 6, (uint16_t)len);
	sk_put_be16(seg + 16, csum_fold(csum_add(s, seg, len)));
}

static void assert_opts_equal(const struct tcp_opts *a, const struct tcp_opts *b)
{
	assert_int_equal(a->has_mss, b->has_mss);
	assert_int_equal(a->has_ws, b->has_ws);
	assert_int_equal(a->sack_perm, b->sack_perm);
	assert_int_equal(a->has_ts, b->has_ts);
	if (a->has_mss)
		assert_int_equal(a->mss, b->mss);
	if (a->has_ws)
		assert_int_equal(a->ws, b->ws);
	if (a->has_ts) {
		assert_int_equal(a->ts_val, b->ts_val);
		assert_int_equal(a->ts_ecr, b->ts_ecr);
	}
	assert_int_equal(a->nsack, b->nsack);
	for (size_t i = 0; i < a->nsack; i++) {
		assert_int_equal(a->sack[i].left, b->sack[i].left);
		assert_int_equal(a->sack[i].right, b->sack[i].right);
	}
}

static void test_parse_linux_syn(void **state)
{
	(void)state;
	struct tcp_hdr h;
	assert_int_equal(tcp_parse(syn, sizeof(syn), SRC, DST, &h), WIRE_OK);
	assert_int_equal(h.sport, 42182);
	assert_int_equal(h.dport, 80);
	assert_int_equal(h.seq, 0x5b3e8e2f);
	assert_int_equal(h.ack, 0);
	assert_int_equal(h.hlen, 40);
	assert_int_equal(h.flags, TCP_SYN);
	assert_int_equal(h.win, 64240);
	assert_int_equal(h.csum, 0x1f3d);
	assert_int_equal(h.urg, 0);
	assert_int_equal(h.payload_off, 40);
	assert_int_equal(h.payload_len, 0);
	assert_true(h.opts.has_mss);
	assert_int_equal(h.opts.mss, 1460);
	assert_true(h.opts.sack_perm);
	assert_true(h.opts.has_ts);
	assert_int_equal(h.opts.ts_val, 0x7a3c110f);
	assert_int_equal(h.opts.ts_ecr, 0);
	assert_true(h.opts.has_ws);
	assert_int_equal(h.opts.ws, 7);
	assert_int_equal(h.opts.nsack, 0);
}

static void test_parse_data_with_sack(void **state)
{
	(void)state;
	struct tcp_hdr h;
	assert_int_equal(tcp_parse(data_seg, sizeof(data_seg), SRC, DST, &h), WIRE_OK);
	assert_int_equal(h.flags, TCP_PSH | TCP_ACK);
	assert_int_equal(h.ack, 0x11223344);
	assert_int_equal(h.hlen, 44);
	assert_int_equal(h.payload_len, 18);
	assert_memory_equal(data_seg + h.payload_off, "GET / HTTP/1.1\r\n\r\n", 18);
	assert_false(h.opts.has_mss);
	assert_true(h.opts.has_ts);
	assert_int_equal(h.opts.ts_ecr, 0x0badbeef);
	assert_int_equal(h.opts.nsack, 1);
	assert_int_equal(h.opts.sack[0].left, 1000);
	assert_int_equal(h.opts.sack[0].right, 2000);
}

static void test_truncated_every_length(void **state)
{
	(void)state;
	struct tcp_hdr h;
	/* Below 20: no header.  20..39: data offset 10 points past the end. */
	for (size_t n = 0; n < sizeof(syn); n++)
		assert_int_equal(tcp_parse(syn, n, SRC, DST, &h), WIRE_ETRUNC);
	/* Past the header, a cut segment fails its checksum. */
	for (size_t n = 44; n < sizeof(data_seg); n++)
		assert_int_equal(tcp_parse(data_seg, n, SRC, DST, &h), WIRE_ECSUM);
}

static void test_lying_data_offset(void **state)
{
	(void)state;
	struct tcp_hdr h;
	uint8_t s[sizeof(syn)];
	for (uint8_t off = 0; off < 5; off++) {
		sk_memcpy(s, syn, sizeof(s));
		s[12] = (uint8_t)(off << 4);
		reseal(s, sizeof(s));
		assert_int_equal(tcp_parse(s, sizeof(s), SRC, DST, &h), WIRE_EBADLEN);
	}
	sk_memcpy(s, syn, sizeof(s));
	s[12] = 0xf0; /* 60 bytes of header in a 40-byte segment */
	reseal(s, sizeof(s));
	assert_int_equal(tcp_parse(s, sizeof(s), SRC, DST, &h), WIRE_ETRUNC);
	/* Offset 5 makes the options payload: legal, no options. */
	s[12] = 0x50;
	reseal(s, sizeof(s));
	assert_int_equal(tcp_parse(s, sizeof(s), SRC, DST, &h), WIRE_OK);
	assert_false(h.opts.has_mss);
	assert_int_equal(h.payload_len, 20);
}

static void test_bad_checksum(void **state)
{
	(void)state;
	struct tcp_hdr h;
	uint8_t s[sizeof(data_seg)];
	for (size_t bit = 0; bit < sizeof(s) * 8; bit += 7) {
		sk_memcpy(s, data_seg, sizeof(s));
		s[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(tcp_parse(s, sizeof(s), SRC, DST, &h), WIRE_OK);
	}
	assert_int_equal(tcp_parse(syn, sizeof(syn), SRC, DST + 1, &h), WIRE_ECSUM);
	assert_int_equal(tcp_parse(syn, sizeof(syn), DST, SRC, &h), WIRE_OK); /* sum is symmetric */
}

static int opts(const uint8_t *o, size_t len, struct tcp_opts *out)
{
	return tcp_opts_parse(o, len, out);
}

static void test_options_malformed(void **state)
{
	(void)state;
	struct tcp_opts o;
	static const struct {
		uint8_t b[12];
		uint8_t len;
	} bad[] = {
		{ { 2 }, 1 },                      /* kind without a length byte */
		{ { 1, 1, 2 }, 3 },                /* same, after NOPs */
		{ { 2, 0, 5, 0xb4 }, 4 },          /* length 0: would loop forever */
		{ { 2, 1, 5, 0xb4 }, 4 },          /* length 1 */
		{ { 2, 4, 5 }, 3 },                /* overruns the option space */
		{ { 30, 9, 0, 0 }, 4 },            /* unknown, overrunning */
		{ { 2, 3, 5, 0 }, 4 },             /* MSS of length 3 */
		{ { 2, 5, 5, 0xb4, 0 }, 5 },       /* MSS of length 5 */
		{ { 3, 4, 7, 0 }, 4 },             /* WS of length 4 */
		{ { 3, 2, 1, 1 }, 4 },             /* WS of length 2 */
		{ { 4, 3, 0, 1 }, 4 },             /* SACK-perm of length 3 */
		{ { 8, 9, 0, 0, 0, 0, 0, 0, 0 }, 9 }, /* TS of length 9 */
		{ { 5, 2, 1, 1 }, 4 },             /* SACK with no block */
		{ { 5, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 11 }, /* SACK of 9 bytes */
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++)
		assert_int_equal(opts(bad[i].b, bad[i].len, &o), WIRE_EOPT);
	/* Five SACK blocks (42 bytes) cannot fit in 40, but a 42-byte buffer
	 * here tests the block-count limit itself. */
	uint8_t five[42] = { 5, 42 };
	assert_int_equal(opts(five, sizeof(five), &o), WIRE_EOPT);
}

static void test_options_tolerated(void **state)
{
	(void)state;
	struct tcp_opts o;
	/* Unknown option (TFO cookie, kind 34) skipped by its length. */
	static const uint8_t unk[] = { 34, 6, 1, 2, 3, 4, 2, 4, 0x05, 0xb4 };
	assert_int_equal(opts(unk, sizeof(unk), &o), WIRE_OK);
	assert_true(o.has_mss);
	assert_int_equal(o.mss, 1460);
	/* EOL ends the list: what follows is padding, even if it is garbage. */
	static const uint8_t eol[] = { 3, 3, 2, 0, 2, 0, 9, 9 };
	assert_int_equal(opts(eol, sizeof(eol), &o), WIRE_OK);
	assert_true(o.has_ws);
	assert_int_equal(o.ws, 2);
	assert_false(o.has_mss);
	/* All NOPs; empty. */
	static const uint8_t nops[] = { 1, 1, 1, 1 };
	assert_int_equal(opts(nops, sizeof(nops), &o), WIRE_OK);
	assert_int_equal(opts(nops, 0, &o), WIRE_OK);
	assert_false(o.has_ws || o.has_mss || o.has_ts || o.sack_perm || o.nsack);
	/* Window scale above 14 is used as 14 (RFC 7323 2.3). */
	static const uint8_t ws[] = { 1, 3, 3, 15 };
	assert_int_equal(opts(ws, sizeof(ws), &o), WIRE_OK);
	assert_int_equal(o.ws, 14);
	/* Four SACK blocks, the most that fit. */
	uint8_t four[36] = { 1, 1, 5, 34 };
	for (int i = 0; i < 8; i++)
		sk_put_be32(four + 4 + i * 4, (uint32_t)(i + 1) * 100);
	assert_int_equal(opts(four, sizeof(four), &o), WIRE_OK);
	assert_int_equal(o.nsack, 4);
	assert_int_equal(o.sack[3].left, 700);
	assert_int_equal(o.sack[3].right, 800);
}

static void test_option_cut_at_every_length(void **state)
{
	(void)state;
	/* Every prefix of the SYN's options either parses or is WIRE_EOPT;
	 * under ASan this also proves no read past the cut. */
	struct tcp_opts o;
	for (size_t n = 0; n <= 20; n++) {
		int r = opts(syn + 20, n, &o);
		assert_true(r == WIRE_OK || r == WIRE_EOPT);
		if (n == 4 || n == 16 || n == 17 || n == 20)
			assert_int_equal(r, WIRE_OK);
		if (n == 1 || n == 3 || n == 5 || n == 15 || n == 19)
			assert_int_equal(r, WIRE_EOPT);
	}
}

static void test_emit_linux_layout(void **state)
{
	(void)state;
	/* Emitting the parsed SYN gives back Linux's bytes exactly. */
	struct tcp_hdr h;
	assert_int_equal(tcp_parse(syn, sizeof(syn), SRC, DST, &h), WIRE_OK);
	assert_int_equal(tcp_hdr_len(&h), 40);
	uint8_t out[64];
	assert_int_equal(tcp_emit(out, sizeof(out), &h, SRC, DST, 0), 40);
	assert_memory_equal(out, syn, sizeof(syn));
	assert_int_equal(tcp_emit(out, 39, &h, SRC, DST, 0), 0);

	/* And the data segment, payload in place. */
	assert_int_equal(tcp_parse(data_seg, sizeof(data_seg), SRC, DST, &h), WIRE_OK);
	sk_memset(out, 0, sizeof(out));
	sk_memcpy(out + 44, data_seg + 44, 18);
	assert_int_equal(tcp_emit(out, sizeof(out), &h, SRC, DST, 18), sizeof(data_seg));
	assert_memory_equal(out, data_seg, sizeof(data_seg));
}

static void test_emit_round_trip_all_combinations(void **state)
{
	(void)state;
	uint8_t out[TCP_MAX_HLEN + 8];
	for (unsigned m = 0; m < 16; m++) {
		for (uint8_t ns = 0; ns <= TCP_MAX_SACK; ns++) {
			struct tcp_hdr h = { .sport = 1, .dport = 2, .seq = 0xfffffff0, .ack = 5,
					     .flags = TCP_ACK, .win = 1000, .urg = 0 };
			h.opts.has_mss = m & 1;
			h.opts.mss = 8960;
			h.opts.has_ws = m & 2;
			h.opts.ws = 14;
			h.opts.sack_perm = m & 4;
			h.opts.has_ts = m & 8;
			h.opts.ts_val = 0x01020304;
			h.opts.ts_ecr = 0xa0b0c0d0;
			h.opts.nsack = ns;
			for (uint8_t i = 0; i < ns; i++)
				h.opts.sack[i] = (struct tcp_sack_block){ 1000u * i, 1000u * i + 500 };
			size_t hl = tcp_hdr_len(&h);
			assert_int_equal(hl % 4, 0);
			assert_true(hl <= TCP_MAX_HLEN);
			out[hl] = 0xee;
			sk_memset(out, 0x55, hl); /* no byte may be left unwritten */
			assert_int_equal(tcp_emit(out, sizeof(out), &h, SRC, DST, 1), hl + 1);
			struct tcp_hdr b;
			assert_int_equal(tcp_parse(out, hl + 1, SRC, DST, &b), WIRE_OK);
			assert_int_equal(b.hlen, hl);
			assert_int_equal(b.payload_len, 1);
			assert_int_equal(b.seq, h.seq);
			assert_int_equal(b.ack, h.ack);
			assert_int_equal(b.flags, h.flags);
			assert_int_equal(b.win, h.win);
			/* Blocks that do not fit in 40 bytes are dropped, the rest kept. */
			size_t fixed = (h.opts.has_mss ? 4 : 0) + (h.opts.has_ws ? 4 : 0) +
				       (h.opts.has_ts ? 12 : h.opts.sack_perm ? 4 : 0);
			size_t room = 40 - fixed;
			struct tcp_opts want = h.opts;
			want.nsack = (uint8_t)(room >= 12 ? SK_MIN(ns, (room - 4) / 8) : 0);
			assert_opts_equal(&b.opts, &want);
			/* A second round trip is exact. */
			struct tcp_hdr c;
			assert_int_equal(tcp_emit(out, sizeof(out), &b, SRC, DST, 1), hl + 1);
			assert_int_equal(tcp_parse(out, hl + 1, SRC, DST, &c), WIRE_OK);
			assert_opts_equal(&c.opts, &b.opts);
		}
	}
}

static void test_sack_limit_with_timestamps(void **state)
{
	(void)state;
	struct tcp_hdr h = { .flags = TCP_ACK };
	h.opts.has_ts = true;
	h.opts.nsack = 4;
	assert_int_equal(tcp_opts_len(&h.opts), 12 + 4 + 3 * 8); /* as Linux: 3 blocks */
	h.opts.has_ts = false;
	assert_int_equal(tcp_opts_len(&h.opts), 4 + 4 * 8);
	h.opts.nsack = 200; /* nonsense count: clamped, never overruns */
	assert_int_equal(tcp_opts_len(&h.opts), 4 + 4 * 8);
	h.opts = (struct tcp_opts){ 0 };
	assert_int_equal(tcp_opts_len(&h.opts), 0);
	h.opts.sack_perm = true;
	assert_int_equal(tcp_opts_len(&h.opts), 4);
	h.opts.has_mss = true;
	assert_int_equal(tcp_opts_len(&h.opts), 8);
}

static void test_seq_compare(void **state)
{
	(void)state;
	assert_true(tcp_seq_lt(0xfffffff0, 0x10));
	assert_true(tcp_seq_gt(0x10, 0xfffffff0));
	assert_true(tcp_seq_le(5, 5));
	assert_true(tcp_seq_ge(5, 5));
	assert_false(tcp_seq_lt(5, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_linux_syn),
		cmocka_unit_test(test_parse_data_with_sack),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_lying_data_offset),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_options_malformed),
		cmocka_unit_test(test_options_tolerated),
		cmocka_unit_test(test_option_cut_at_every_length),
		cmocka_unit_test(test_emit_linux_layout),
		cmocka_unit_test(test_emit_round_trip_all_combinations),
		cmocka_unit_test(test_sack_limit_with_timestamps),
		cmocka_unit_test(test_seq_compare),
	};
	return cmocka_run_group_tests_name("wire/tcp", tests, NULL, NULL);
}
