/* dev_vnet_test.c — the shared offload paths of tap: and packet:, on a ring
 * region in memory (no kernel): tx chains gathered or refused without
 * reading past head, and super-frames cut into a ring that fills up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dev/dev_vnet.h"
#include "ring/ring.h"
#include "wire/csum.h"

#define SLOTS 8u

static void *mem;
static struct dev d;

static int setup(void **state)
{
	(void)state;
	size_t sz = ring_region_size(SLOTS, RING_BUF_SIZE_DEFAULT, 0);
	mem = aligned_alloc(64, sz);
	assert_non_null(mem);
	assert_int_equal(ring_region_init(mem, sz, SLOTS, RING_BUF_SIZE_DEFAULT, 0), 0);
	memset(&d, 0, sizeof(d));
	d.rx = ring_region_rx(mem);
	d.tx = ring_region_tx(mem);
	d.offload = DEV_OFF_ALL;
	d.tso_max = 65535 + 14;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(mem);
	return 0;
}

/* tx slot i: len bytes of fill, flags. */
static void slot(uint32_t i, uint16_t len, uint16_t flags, uint8_t fill)
{
	struct ring_slot *s = ring_slot(d.tx, i);
	s->len = len;
	s->flags = flags;
	memset(ring_buf(d.tx, s->buf_idx), fill, len);
}

static void vnet_in(uint32_t i, uint8_t flags, uint8_t gso, uint16_t hdr_len, uint16_t gso_size,
		    uint16_t cs, uint16_t co)
{
	struct ring_vnet v = {.flags = flags, .gso_type = gso, .hdr_len = hdr_len,
			      .gso_size = gso_size, .csum_start = cs, .csum_offset = co};
	memcpy(ring_buf(d.tx, ring_slot(d.tx, i)->buf_idx), &v, sizeof(v));
}

static void test_tx_chain(void **state)
{
	(void)state;
	struct dev_txf t;
	/* A TSO frame over three slots: header + 2000 + 2048 + 100. */
	slot(0, 12 + 2000, RING_SLOT_VNET | RING_SLOT_MORE, 0xa1);
	vnet_in(0, RING_VNET_F_NEEDS_CSUM, RING_VNET_GSO_TCPV4, 66, 1448, 34, 16);
	slot(1, 2048, RING_SLOT_MORE, 0xa2);
	slot(2, 100, 0, 0xa3);
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN_LEGACY, &t), 3);
	assert_true(t.ok);
	assert_int_equal(t.niov, 4);
	assert_int_equal(t.iov[0].iov_len, VNET_HLEN_LEGACY);
	assert_int_equal(t.frame_len, 2000 + 2048 + 100);
	assert_int_equal(t.bytes, VNET_HLEN_LEGACY + 4148);
	assert_int_equal(((uint8_t *)t.iov[1].iov_base)[0], 0xa1);
	dev_vnet_tx_count(&d, &t);
	assert_int_equal(d.stats.tx_tso_frames, 1);
	assert_int_equal(d.stats.tx_tso_segs, (4148 - 66 + 1447) / 1448);
	assert_int_equal(d.stats.tx_csum_offload, 1);

	/* The same with tap's 12-byte header. */
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_true(t.ok);
	assert_int_equal(t.iov[0].iov_len, VNET_HLEN);

	/* MORE on the last slot handed over: refused, never past head. */
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 2, VNET_HLEN, &t), 2);
	assert_false(t.ok);
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 1, VNET_HLEN, &t), 1);
	assert_false(t.ok);

	/* VNET off the first slot: the whole chain is skipped. */
	slot(1, 2048, RING_SLOT_MORE | RING_SLOT_VNET, 0xa2);
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_false(t.ok);
	slot(1, 2048, RING_SLOT_MORE, 0xa2);

	/* Without offloads (vhlen 0) VNET and MORE are malformed. */
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, 0, &t), 3);
	assert_false(t.ok);

	/* Not advertised: no TSO4 on the device. */
	d.offload = DEV_OFF_TX_CSUM | DEV_OFF_TSO6;
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_false(t.ok);
	d.offload = DEV_OFF_ALL;

	/* Larger than tso_max. */
	d.tso_max = 4000;
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_false(t.ok);
	d.tso_max = 65535 + 14;

	/* Checksum field outside the frame; a GSO with gso_size 0. */
	vnet_in(0, RING_VNET_F_NEEDS_CSUM, RING_VNET_GSO_TCPV4, 66, 1448, 4140, 16);
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_false(t.ok);
	vnet_in(0, RING_VNET_F_NEEDS_CSUM, RING_VNET_GSO_TCPV4, 66, 0, 34, 16);
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_false(t.ok);

	/* Several slots without GSO, over one buffer: refused. */
	vnet_in(0, RING_VNET_F_NEEDS_CSUM, RING_VNET_GSO_NONE, 0, 0, 34, 16);
	assert_int_equal(dev_vnet_tx_frame(&d, 0, 3, VNET_HLEN, &t), 3);
	assert_false(t.ok);

	/* A plain frame: a zeroed header in front. */
	slot(3, 60, 0, 0xb0);
	assert_int_equal(dev_vnet_tx_frame(&d, 3, 4, VNET_HLEN_LEGACY, &t), 1);
	assert_true(t.ok);
	assert_int_equal(t.niov, 2);
	static const uint8_t zero[VNET_HLEN_LEGACY];
	assert_memory_equal(t.iov[0].iov_base, zero, VNET_HLEN_LEGACY);
	/* ... and with no offloads, just the frame. */
	assert_int_equal(dev_vnet_tx_frame(&d, 3, 4, 0, &t), 1);
	assert_true(t.ok);
	assert_int_equal(t.niov, 1);
	/* A bad buffer index. */
	ring_slot(d.tx, 3)->buf_idx = d.tx->nbufs;
	assert_int_equal(dev_vnet_tx_frame(&d, 3, 4, 0, &t), 1);
	assert_false(t.ok);
}

/* An IPv4 TCP super-frame of payload bytes with a partial checksum. */
static size_t super(uint8_t *f, size_t payload)
{
	memset(f, 0, 54);
	f[12] = 0x08;
	uint8_t *ip = f + 14, *th = f + 34;
	size_t tot = 20 + 20 + payload;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = 6;
	ip[12] = 198; ip[13] = 18; ip[15] = 1;
	ip[16] = 198; ip[17] = 18; ip[19] = 2;
	th[12] = 5 << 4;
	th[13] = 0x18;
	for (size_t k = 0; k < payload; k++)
		f[54 + k] = (uint8_t)k;
	return 54 + payload;
}

static void test_rx_cut_ring_full(void **state)
{
	(void)state;
	struct dev_cut c;
	assert_int_equal(dev_cut_init(&c), 0);
	struct ring *r = d.rx;
	uint32_t head = r->head, tail = r->tail;
	size_t len = super(c.buf, 1000 * 10);
	struct vnet_hdr h = {.flags = VNET_F_NEEDS_CSUM, .gso_type = VNET_GSO_TCPV4,
			     .hdr_len = 54, .gso_size = 1000, .csum_start = 34,
			     .csum_offset = 16};
	memset(&d.stats, 0, sizeof(d.stats));
	/* 10 segments into 8 slots: 8 now, 2 pending. */
	assert_int_equal(dev_vnet_rx(&d, &c, &h, c.buf, len, &tail, head), 0);
	assert_int_equal(tail - head, SLOTS);
	assert_true(c.pending);
	assert_int_equal(d.stats.rx_gso_frames, 1);
	assert_int_equal(d.stats.rx_gso_segs, 8);
	for (uint32_t i = 0; i < SLOTS; i++) {
		struct ring_slot *s = ring_slot(r, head + i);
		const uint8_t *b = ring_buf(r, s->buf_idx);
		assert_int_equal(s->len, 1054);
		assert_int_equal(s->flags, RING_SLOT_CSUM_OK);
		assert_int_equal(b[54], (uint8_t)(i * 1000));
		assert_int_equal(b[34 + 4] << 24 | b[34 + 5] << 16 | b[34 + 6] << 8 | b[34 + 7],
				 i * 1000);
	}
	/* The user takes 3: 2 more come, then nothing is pending. */
	head += 3;
	int rc = 0;
	assert_true(dev_vnet_drain(&d, &c, &tail, head, &rc));
	assert_int_equal(rc, 0);
	assert_false(c.pending);
	assert_int_equal(tail - head, SLOTS - 1);
	assert_int_equal(d.stats.rx_gso_segs, 10);
	struct ring_slot *last = ring_slot(r, tail - 1);
	assert_int_equal(ring_buf(r, last->buf_idx)[34 + 13], 0x18); /* PSH on the last */
	assert_int_equal(ring_buf(r, ring_slot(r, tail - 2)->buf_idx)[34 + 13], 0x10);

	/* A lying header: counted, nothing delivered. */
	h.gso_size = 0;
	uint32_t t0 = tail;
	head = tail - 2;
	assert_int_equal(dev_vnet_rx(&d, &c, &h, c.buf, len, &tail, head), 0);
	assert_int_equal(tail, t0);
	assert_int_equal(d.stats.rx_vnet_bad, 1);
	/* A plain frame, partial checksum, device may not say CSUM_OK: the
	 * checksum is finished in software instead. */
	d.offload = DEV_OFF_ALL & ~DEV_OFF_RX_CSUM;
	len = super(c.buf, 100);
	uint32_t src = SK_IP4(198, 18, 0, 1), dst = SK_IP4(198, 18, 0, 2);
	uint16_t part = (uint16_t)~csum_fold(csum_pseudo4(src, dst, 6, (uint16_t)(len - 34)));
	sk_put_be16(c.buf + 34 + 16, part); /* as Linux leaves it */
	h = (struct vnet_hdr){.flags = VNET_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16};
	assert_int_equal(dev_vnet_rx(&d, &c, &h, c.buf, len, &tail, head), 0);
	assert_int_equal(tail, t0 + 1);
	struct ring_slot *s = ring_slot(r, t0);
	assert_int_equal(s->flags, 0);
	const uint8_t *b = ring_buf(r, s->buf_idx);
	assert_int_equal(csum_fold(csum_add(csum_pseudo4(src, dst, 6, (uint16_t)(len - 34)), b + 34,
					    len - 34)),
			 0);
	d.offload = DEV_OFF_ALL;
	dev_cut_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tx_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_cut_ring_full, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
