/* vnet_test.c — virtio_net_hdr checks, super-frame cutting, checksum finish.
 *
 * The segments are checked with a checksum written here byte by byte (a
 * plain RFC 1071 loop over a pseudo header laid out in memory), not with
 * wire/csum, so a bug there cannot hide one in vnet.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wire/vnet.h"

/* RFC 1071, the slow way: 16-bit big-endian words, odd byte padded. */
static uint32_t ref_add(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}
static uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The TCP checksum of the L4 bytes at l4 (n bytes) folds to 0 with the
 * pseudo header built in memory. */
static bool tcp_ok(const uint8_t *ip, bool v6, const uint8_t *l4, size_t n)
{
	uint8_t ph[40];
	size_t pl;
	if (v6) {
		memcpy(ph, ip + 8, 32);
		ph[32] = 0;
		ph[33] = 0;
		ph[34] = (uint8_t)(n >> 8);
		ph[35] = (uint8_t)n;
		ph[36] = ph[37] = ph[38] = 0;
		ph[39] = 6;
		pl = 40;
	} else {
		memcpy(ph, ip + 12, 8);
		ph[8] = 0;
		ph[9] = 6;
		ph[10] = (uint8_t)(n >> 8);
		ph[11] = (uint8_t)n;
		pl = 12;
	}
	return ref_fold(ref_add(ref_add(0, ph, pl), l4, n)) == 0;
}

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t sf[70000];   /* the super-frame */
static uint8_t seg[2048];
static uint8_t joined[70000];

#define TCP_HL 32 /* with a timestamp option */

/* Build Ethernet (+ optional 802.1Q) + IPv4/IPv6 + TCP + payload bytes;
 * returns the frame length; *l3 and *l4 the header offsets.  The TCP
 * checksum field holds the pseudo-header sum as Linux leaves it for a
 * NEEDS_CSUM frame when partial is set, else the full checksum. */
static size_t build(bool v6, bool vlan, size_t payload, uint8_t flags, bool partial, size_t *l3,
		    size_t *l4)
{
	size_t o = 12;
	memset(sf, 0, sizeof(sf));
	memcpy(sf, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	if (vlan) {
		sf[12] = 0x81;
		sf[13] = 0x00;
		sf[14] = 0x00;
		sf[15] = 0x07;
		o = 16;
	}
	sf[o] = v6 ? 0x86 : 0x08;
	sf[o + 1] = v6 ? 0xdd : 0x00;
	*l3 = o + 2;
	uint8_t *ip = sf + *l3;
	size_t l4len = TCP_HL + payload;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(l4len >> 8);
		ip[5] = (uint8_t)l4len;
		ip[6] = 6;
		ip[7] = 64;
		ip[8] = 0x20; ip[9] = 0x01; ip[10] = 0x00; ip[11] = 0x02; ip[23] = 1;
		ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x00; ip[27] = 0x02; ip[39] = 2;
		*l4 = *l3 + 40;
	} else {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + l4len) >> 8);
		ip[3] = (uint8_t)(20 + l4len);
		ip[4] = 0x12; ip[5] = 0x34;
		ip[6] = 0x40; /* DF */
		ip[8] = 64;
		ip[9] = 6;
		ip[12] = 198; ip[13] = 18; ip[14] = 0; ip[15] = 1;
		ip[16] = 198; ip[17] = 18; ip[18] = 0; ip[19] = 2;
		uint16_t c = ref_fold(ref_add(0, ip, 20));
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
		*l4 = *l3 + 20;
	}
	uint8_t *th = sf + *l4;
	th[0] = 0x1f; th[1] = 0x90; th[2] = 0xc0; th[3] = 0x01;
	th[4] = 0xff; th[5] = 0xff; th[6] = 0xf0; th[7] = 0x00; /* seq near the wrap */
	th[8] = 0; th[9] = 0; th[10] = 0x10; th[11] = 0x01;
	th[12] = (TCP_HL / 4) << 4;
	th[13] = flags;
	th[14] = 0x01; th[15] = 0xf5;
	th[20] = 1; th[21] = 1; th[22] = 8; th[23] = 10; /* NOP NOP TS */
	th[24] = 0xaa; th[31] = 0xbb;
	for (size_t k = 0; k < payload; k++)
		th[TCP_HL + k] = (uint8_t)(k * 7 + (k >> 8));
	/* Pseudo-header sum (Linux's partial value: not complemented). */
	uint8_t ph[40];
	size_t pl;
	if (v6) {
		memcpy(ph, ip + 8, 32);
		memset(ph + 32, 0, 8);
		ph[34] = (uint8_t)(l4len >> 8);
		ph[35] = (uint8_t)l4len;
		ph[39] = 6;
		pl = 40;
	} else {
		memcpy(ph, ip + 12, 8);
		ph[8] = 0; ph[9] = 6;
		ph[10] = (uint8_t)(l4len >> 8);
		ph[11] = (uint8_t)l4len;
		pl = 12;
	}
	uint16_t c;
	if (partial)
		c = (uint16_t)~ref_fold(ref_add(0, ph, pl));
	else
		c = ref_fold(ref_add(ref_add(0, ph, pl), th, l4len));
	th[16] = (uint8_t)(c >> 8);
	th[17] = (uint8_t)c;
	return *l4 + l4len;
}

static struct vnet_hdr gso_hdr(bool v6, uint16_t mss, size_t l4)
{
	struct vnet_hdr h = {.flags = VNET_F_NEEDS_CSUM,
			     .gso_type = v6 ? VNET_GSO_TCPV6 : VNET_GSO_TCPV4,
			     .hdr_len = (uint16_t)(l4 + TCP_HL),
			     .gso_size = mss,
			     .csum_start = (uint16_t)l4,
			     .csum_offset = 16};
	return h;
}

/* Cut and check every segment against the super-frame. */
static void cut_and_check(bool v6, bool vlan, size_t payload, uint16_t mss, uint8_t flags)
{
	size_t l3, l4;
	size_t len = build(v6, vlan, payload, flags, true, &l3, &l4);
	struct vnet_hdr h = gso_hdr(v6, mss, l4);
	struct vnet_frame f;
	assert_int_equal(vnet_parse(&h, sf, len, sizeof(seg), &f), WIRE_OK);
	assert_true(f.gso);
	assert_true(f.csum_ok);
	assert_int_equal(f.ipv6, v6);
	assert_int_equal(f.l3_off, l3);
	assert_int_equal(f.l4_off, l4);
	assert_int_equal(f.hlen, l4 + TCP_HL);
	assert_int_equal(f.payload, payload);
	assert_int_equal(f.nsegs, (payload + mss - 1) / mss);

	size_t got = 0;
	uint32_t seq0 = be32(sf + l4 + 4);
	for (uint32_t i = 0; i < f.nsegs; i++) {
		size_t n = vnet_seg(&f, sf, i, seg, sizeof(seg));
		size_t plen = i + 1 < f.nsegs ? mss : payload - (size_t)i * mss;
		assert_int_equal(n, l4 + TCP_HL + plen);
		/* Ethernet (and tag) untouched, options untouched. */
		assert_memory_equal(seg, sf, l3);
		assert_memory_equal(seg + l4 + 20, sf + l4 + 20, TCP_HL - 20);
		const uint8_t *ip = seg + l3, *th = seg + l4;
		if (v6) {
			assert_int_equal(be16(ip + 4), TCP_HL + plen);
			assert_memory_equal(ip + 6, sf + l3 + 6, 34);
		} else {
			assert_int_equal(be16(ip + 2), 20 + TCP_HL + plen);
			assert_int_equal(be16(ip + 4), (uint16_t)(0x1234 + i));
			assert_int_equal(ref_fold(ref_add(0, ip, 20)), 0);
			assert_memory_equal(ip + 12, sf + l3 + 12, 8);
		}
		assert_int_equal(be32(th + 4), (uint32_t)(seq0 + i * mss));
		uint8_t fl = th[13];
		bool last = i + 1 == f.nsegs, first = i == 0;
		assert_int_equal(!!(fl & 0x01), last && (flags & 0x01));  /* FIN */
		assert_int_equal(!!(fl & 0x08), last && (flags & 0x08));  /* PSH */
		assert_int_equal(!!(fl & 0x80), first && (flags & 0x80)); /* CWR */
		assert_int_equal(fl & 0x10, flags & 0x10);                /* ACK kept */
		assert_true(tcp_ok(ip, v6, th, TCP_HL + plen));
		memcpy(joined + got, th + TCP_HL, plen);
		got += plen;
	}
	assert_int_equal(got, payload);
	assert_memory_equal(joined, sf + l4 + TCP_HL, payload);
	assert_int_equal(vnet_seg(&f, sf, f.nsegs, seg, sizeof(seg)), 0);
}

static void test_cut_v4(void **state)
{
	(void)state;
	cut_and_check(false, false, 10000, 1448, 0x10 | 0x08 | 0x01 | 0x80);
	cut_and_check(false, false, 1448 * 3, 1448, 0x10 | 0x08);     /* exact multiple */
	cut_and_check(false, false, 65535 - 20 - TCP_HL, 1448, 0x10); /* the largest */
	cut_and_check(false, false, 700, 1448, 0x10 | 0x08);          /* one segment */
	cut_and_check(false, false, 999, 88, 0x10);                   /* odd sizes */
}

static void test_cut_v6_vlan(void **state)
{
	(void)state;
	cut_and_check(true, false, 20000, 1428, 0x10 | 0x08 | 0x80);
	cut_and_check(true, true, 5001, 1400, 0x10 | 0x01);
	cut_and_check(false, true, 3333, 1000, 0x10 | 0x08);
}

/* A GSO frame with neither flag: the super-frame's own checksum is
 * checked before segments get new ones. */
static void test_gso_no_flags(void **state)
{
	(void)state;
	size_t l3, l4;
	size_t len = build(false, false, 4000, 0x10, false, &l3, &l4);
	struct vnet_hdr h = gso_hdr(false, 1448, l4);
	struct vnet_frame f;
	h.flags = 0;
	assert_int_equal(vnet_parse(&h, sf, len, sizeof(seg), &f), WIRE_OK);
	assert_int_equal(f.nsegs, 3);
	sf[len - 1] ^= 0x40;
	assert_int_equal(vnet_parse(&h, sf, len, sizeof(seg), &f), WIRE_ECSUM);
	h.flags = VNET_F_DATA_VALID; /* the kernel vouches: taken */
	assert_int_equal(vnet_parse(&h, sf, len, sizeof(seg), &f), WIRE_OK);
}

static void test_lies(void **state)
{
	(void)state;
	size_t l3, l4;
	size_t len = build(false, false, 6000, 0x10, true, &l3, &l4);
	struct vnet_frame f;
	struct vnet_hdr h;
#define EXPECT(mod, code)                                                    \
	do {                                                                 \
		h = gso_hdr(false, 1448, l4);                                \
		mod;                                                         \
		assert_int_equal(vnet_parse(&h, sf, len, sizeof(seg), &f), code); \
	} while (0)
	EXPECT((void)0, WIRE_OK);
	EXPECT(h.gso_size = 0, WIRE_EBADLEN);
	EXPECT(h.gso_size = 3000, WIRE_EBADLEN);         /* segment over the buffer */
	EXPECT(h.gso_size = 5, WIRE_ELIMIT);             /* 1,200 segments */
	EXPECT(h.hdr_len = (uint16_t)(len + 1), WIRE_EBADLEN);
	EXPECT(h.csum_start = (uint16_t)(len - 1), WIRE_EBADLEN);
	EXPECT(h.csum_offset = 60000, WIRE_EBADLEN);
	EXPECT(h.csum_offset = 6, WIRE_EBADLEN);         /* not the TCP field */
	EXPECT(h.csum_start = (uint16_t)(l4 - 4), WIRE_EBADLEN);
	EXPECT(h.csum_start = 2, WIRE_EBADLEN);          /* inside the Ethernet header */
	EXPECT(h.gso_type = VNET_GSO_UDP, WIRE_EUNSUP);
	EXPECT(h.gso_type = 5, WIRE_EUNSUP);
	EXPECT(h.gso_type = VNET_GSO_TCPV6, WIRE_EVERSION);
	EXPECT(h.gso_type = VNET_GSO_ECN, WIRE_EUNSUP);
	EXPECT(h.gso_type = VNET_GSO_TCPV4 | VNET_GSO_ECN, WIRE_OK);
	EXPECT(h.flags = 0x80, WIRE_EUNSUP);
	EXPECT(h.flags = 4, WIRE_EUNSUP);
	/* The frame lies about itself: the IP length past the bytes there are,
	 * a fragment, not TCP, TCP header longer than the datagram. */
	sf[l3 + 2] = 0xff;
	EXPECT((void)0, WIRE_EUNSUP);
	sf[l3 + 2] = (uint8_t)((len - l3) >> 8);
	EXPECT((void)0, WIRE_OK);
	sf[l3 + 6] |= 0x20;
	EXPECT((void)0, WIRE_EUNSUP);
	sf[l3 + 6] &= (uint8_t)~0x20;
	sf[l3 + 9] = 17;
	EXPECT((void)0, WIRE_EUNSUP);
	sf[l3 + 9] = 6;
	sf[l3] = 0x44; /* IHL 4 */
	EXPECT((void)0, WIRE_EUNSUP);
	sf[l3] = 0x45;
	/* No payload at all: not a super-frame. */
	size_t hl = l4 + TCP_HL;
	sf[l3 + 2] = (uint8_t)((hl - l3) >> 8);
	sf[l3 + 3] = (uint8_t)(hl - l3);
	EXPECT((void)0, WIRE_EBADLEN);
	/* Truncated frames at every length: never read past them. */
	h = gso_hdr(false, 1448, l4);
	for (size_t n = 0; n < hl + 1; n++)
		assert_int_not_equal(vnet_parse(&h, sf, n, sizeof(seg), &f), WIRE_OK);
#undef EXPECT
}

static void test_plain_frames(void **state)
{
	(void)state;
	struct vnet_frame f;
	struct vnet_hdr h = {0};
	uint8_t fr[60] = {0};
	assert_int_equal(vnet_parse(&h, fr, sizeof(fr), 2048, &f), WIRE_OK);
	assert_false(f.gso);
	assert_false(f.csum_ok);
	assert_int_equal(f.nsegs, 1);
	h.flags = VNET_F_DATA_VALID;
	assert_int_equal(vnet_parse(&h, fr, sizeof(fr), 2048, &f), WIRE_OK);
	assert_true(f.csum_ok);
	h.flags = VNET_F_NEEDS_CSUM;
	h.csum_start = 34;
	h.csum_offset = 16;
	assert_int_equal(vnet_parse(&h, fr, sizeof(fr), 2048, &f), WIRE_OK);
	assert_true(f.csum_ok);
	h.csum_offset = 25; /* 34 + 25 + 2 = 61 > 60 */
	assert_int_not_equal(vnet_parse(&h, fr, sizeof(fr), 2048, &f), WIRE_OK);
	assert_int_equal(vnet_seg(&f, fr, 0, seg, sizeof(seg)), 0); /* not GSO */
}

static void test_csum_finish(void **state)
{
	(void)state;
	size_t l3, l4;
	for (size_t payload = 0; payload < 40; payload += 13) {
		size_t len = build(false, false, payload, 0x18, true, &l3, &l4);
		assert_false(tcp_ok(sf + l3, false, sf + l4, len - l4) && payload > 0);
		assert_int_equal(vnet_csum_finish(sf, len, (uint16_t)l4, 16), WIRE_OK);
		assert_true(tcp_ok(sf + l3, false, sf + l4, len - l4));
		len = build(true, true, payload, 0x18, true, &l3, &l4);
		assert_int_equal(vnet_csum_finish(sf, len, (uint16_t)l4, 16), WIRE_OK);
		assert_true(tcp_ok(sf + l3, true, sf + l4, len - l4));
		assert_int_equal(vnet_csum_finish(sf, len, (uint16_t)(len - 1), 0), WIRE_EBADLEN);
		assert_int_equal(vnet_csum_finish(sf, len, (uint16_t)l4, (uint16_t)(len - l4 - 1)),
				 WIRE_EBADLEN);
	}
}

static void test_hdr_bytes(void **state)
{
	(void)state;
	/* Little-endian, in virtio's order. */
	const uint8_t b[10] = {1, 4, 0x4a, 0x00, 0x94, 0x05, 0x36, 0x00, 0x10, 0x00};
	struct vnet_hdr h;
	uint8_t out[10];
	vnet_hdr_read(b, &h);
	assert_int_equal(h.flags, 1);
	assert_int_equal(h.gso_type, VNET_GSO_TCPV6);
	assert_int_equal(h.hdr_len, 74);
	assert_int_equal(h.gso_size, 1428);
	assert_int_equal(h.csum_start, 54);
	assert_int_equal(h.csum_offset, 16);
	vnet_hdr_write(out, &h);
	assert_memory_equal(out, b, 10);
	assert_int_equal(vnet_tx_segs(&h, 74 + 1428 * 3), 3);
	assert_int_equal(vnet_tx_segs(&h, 74 + 1428 * 3 + 1), 4);
	h.gso_type = 0;
	assert_int_equal(vnet_tx_segs(&h, 5000), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_v4),       cmocka_unit_test(test_cut_v6_vlan),
		cmocka_unit_test(test_gso_no_flags), cmocka_unit_test(test_lies),
		cmocka_unit_test(test_plain_frames), cmocka_unit_test(test_csum_finish),
		cmocka_unit_test(test_hdr_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
