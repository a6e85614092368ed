/* virtio_net_test.c — the virtio-net driver against a fake device in plain
 * memory: the test plays the device side of both virtqueues (reads avail,
 * writes used), so negotiation, pre-posting, batching, notification
 * suppression and buffer ownership are checked without QEMU.
 * Plain memory cannot model select registers, so the fake offers the same
 * 32-bit feature word for both halves (see fake_init). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dev/virtio_net.h"

struct fake {
	uint8_t common[64] __attribute__((aligned(8)));
	uint8_t notify[16] __attribute__((aligned(8)));
	uint8_t isr[4];
	uint8_t devcfg[16];
	uint16_t rx_seen, tx_seen; /* device's next avail entry per queue */
	struct virtio_net vn;
	void *arena;
};

/* offer: extra feature bits of the low word (e.g. EVENT_IDX, bit 29);
 * refuse: the driver's no_event_idx; allow: its offload_allow. */
static struct fake *fake_init_allow(uint32_t offer, bool refuse, uint32_t allow)
{
	struct fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	/* CSUM(0) | MAC(5) | STATUS(16): read for both halves, the high half
	 * also says VERSION_1 (bit 32 = bit 0) and GSO bits we must refuse. */
	uint32_t df = 1u | 1u << 5 | 1u << 16 | offer;
	memcpy(f->common + 4, &df, 4);
	uint16_t qsize = 256;
	memcpy(f->common + 24, &qsize, 2);
	static const uint8_t mac[6] = {0x52, 0x54, 0, 0x12, 0x34, 0x56};
	memcpy(f->devcfg, mac, 6);
	size_t n = virtio_net_arena_size();
	assert_int_equal(posix_memalign(&f->arena, 4096, n), 0);
	struct virtio_net_params p = {
		.regs = {.t = &virtio_transport_pci, .common = f->common, .notify = f->notify, .notify_mult = 4, .isr = f->isr,
			 .device = f->devcfg},
		.arena = f->arena, .arena_size = n, .rx_msix = 0, .name = "fake",
		.no_event_idx = refuse, .offload_allow = allow,
	};
	const char *why = NULL;
	if (virtio_net_init(&f->vn, &p, &why) < 0)
		fail_msg("virtio_net_init: %s", why);
	return f;
}

static struct fake *fake_init_with(uint32_t offer, bool refuse)
{
	return fake_init_allow(offer, refuse, 0);
}

static struct fake *fake_init(void)
{
	return fake_init_with(0, false);
}

#define EVENT_IDX (1u << 29)
/* Offload feature bits (5.1.3); CSUM (bit 0) the fake always offers. */
#define F_CSUM (1u << 0)
#define F_GUEST_CSUM (1u << 1)
#define F_HOST_TSO4 (1u << 11)
#define F_HOST_TSO6 (1u << 12)
#define F_OFFLOADS (F_GUEST_CSUM | F_HOST_TSO4 | F_HOST_TSO6)

/* The device's side of 2.7.10.1, written out again here: moving used idx
 * from old to new must interrupt iff used_event is in [old, new). */
static bool fake_must_interrupt(const struct virtq *q, uint16_t old_idx)
{
	uint16_t ev = q->avail->ring[q->size], now_idx = q->used->idx;
	for (uint16_t i = old_idx; i != now_idx; i++)
		if (i == ev)
			return true;
	return false;
}

static void fake_free(struct fake *f)
{
	free(f->arena);
	free(f);
}

/* Device: receive one frame into the next posted rx chain. */
static void fake_rx(struct fake *f, const uint8_t *frame, uint32_t len)
{
	struct virtq *q = &f->vn.rxq;
	assert_true(f->rx_seen != q->avail->idx);
	uint16_t head = q->avail->ring[f->rx_seen++ & (q->size - 1)];
	volatile struct virtq_desc *h = &q->desc[head];
	assert_int_equal(h->len, 12);
	assert_true(h->flags & 1); /* NEXT */
	volatile struct virtq_desc *b = &q->desc[h->next];
	assert_true(b->len >= len);
	memset((void *)(uintptr_t)h->addr, 0, 12);
	memcpy((void *)(uintptr_t)b->addr, frame, len);
	q->used->ring[q->used->idx & (q->size - 1)] = (struct virtq_used_elem){head, 12 + len};
	q->used->idx++;
}

/* Device: receive one frame with the 12-byte header hdr. */
static void fake_rx_hdr(struct fake *f, const uint8_t *frame, uint32_t len, const uint8_t hdr[12])
{
	struct virtq *q = &f->vn.rxq;
	uint16_t head = q->avail->ring[f->rx_seen & (q->size - 1)];
	fake_rx(f, frame, len);
	memcpy((void *)(uintptr_t)q->desc[head].addr, hdr, 12);
}

/* Device: the next posted tx chain, as its descriptors (at most max). */
struct chain_desc {
	uint8_t *addr;
	uint32_t len;
	uint16_t flags;
};
static int fake_tx_chain(struct fake *f, struct chain_desc *out, int max, uint16_t *head_out)
{
	struct virtq *q = &f->vn.txq;
	if (f->tx_seen == q->avail->idx)
		return 0;
	uint16_t d = q->avail->ring[f->tx_seen++ & (q->size - 1)];
	*head_out = d;
	int n = 0;
	for (;;) {
		assert_true(n < max);
		volatile struct virtq_desc *x = &q->desc[d];
		out[n++] = (struct chain_desc){(uint8_t *)(uintptr_t)x->addr, x->len, x->flags};
		assert_false(x->flags & 2); /* tx descriptors are device-readable */
		if (!(x->flags & 1))
			return n;
		d = x->next;
	}
}

static void fake_tx_complete(struct fake *f, uint16_t head)
{
	struct virtq *q = &f->vn.txq;
	q->used->ring[q->used->idx & (q->size - 1)] = (struct virtq_used_elem){head, 0};
	q->used->idx++;
}

/* Device: take every posted tx chain; complete them newest first (out of
 * order on purpose).  Returns how many. */
static int fake_tx(struct fake *f, uint8_t frames[][64], uint32_t *lens)
{
	struct virtq *q = &f->vn.txq;
	uint16_t heads[256];
	int n = 0;
	while (f->tx_seen != q->avail->idx) {
		uint16_t head = q->avail->ring[f->tx_seen++ & (q->size - 1)];
		volatile struct virtq_desc *b = &q->desc[q->desc[head].next];
		lens[n] = b->len;
		memcpy(frames[n], (void *)(uintptr_t)b->addr, b->len < 64 ? b->len : 64);
		heads[n++] = head;
	}
	for (int i = n - 1; i >= 0; i--) {
		q->used->ring[q->used->idx & (q->size - 1)] = (struct virtq_used_elem){heads[i], 0};
		q->used->idx++;
	}
	return n;
}

/* Every buffer of ring r is in exactly one place: a user slot, a posted
 * chain, or a device-side slot not yet posted. */
static void check_conserved(struct ring *r, struct virtq *q, uint32_t unposted_from,
			    uint32_t unposted_to, uint32_t user_from, uint32_t user_to)
{
	uint32_t nb = r->nbufs;
	uint8_t *seen = calloc(nb, 1);
	int total = 0;
	for (uint32_t i = user_from; i != user_to; i++, total++)
		seen[ring_slot(r, i)->buf_idx]++;
	for (uint32_t i = unposted_from; i != unposted_to; i++, total++)
		seen[ring_slot(r, i)->buf_idx]++;
	for (unsigned c = 0; c < q->size / 2u; c++)
		if (q->busy[c]) {
			seen[q->chain_buf[c]]++;
			total++;
		}
	assert_int_equal(total, r->num_slots);
	for (uint32_t b = 0; b < nb; b++)
		assert_true(seen[b] <= 1);
	free(seen);
}

/* The same for the tx ring: a buffer is in a user slot, a posted chain, or
 * a handed-over slot not yet posted [tx_sub, head). */
static void check_conserved_tx(struct virtio_net *vn)
{
	struct ring *r = vn->dev.tx;
	uint8_t *seen = calloc(r->nbufs, 1);
	uint32_t total = 0;
	for (uint32_t i = r->head; i != r->tail; i++, total++)
		seen[ring_slot(r, i)->buf_idx]++;
	for (uint32_t i = vn->tx_sub; i != r->head; i++, total++)
		seen[ring_slot(r, i)->buf_idx]++;
	for (unsigned h = 0; h < vn->txq.size; h++) {
		if (!vn->tx.busy[h])
			continue;
		uint16_t d = (uint16_t)h;
		for (unsigned k = 0; k < vn->tx.ndesc[h]; k++, d = vn->tx.next[d])
			if (vn->tx.buf[d] != 0xffffffffu) {
				seen[vn->tx.buf[d]]++;
				total++;
			}
	}
	assert_int_equal(total, r->num_slots);
	for (uint32_t b = 0; b < r->nbufs; b++)
		assert_true(seen[b] <= 1);
	free(seen);
}

static void test_init(void **state)
{
	(void)state;
	struct fake *f = fake_init();
	struct virtio_net *vn = &f->vn;
	assert_true(vn->features == (1ull << 32 | 1u << 5 | 1u << 16)); /* no CSUM, no GSO */
	assert_true(vn->have_mac);
	assert_int_equal(vn->dev.mac[5], 0x56);
	assert_int_equal(f->common[20], 1 | 2 | 8 | 4); /* ACK DRIVER FEATURES_OK DRIVER_OK */
	assert_int_equal(vn->rxq.avail->idx, 128);      /* half the descriptors: 2 per frame */
	assert_int_equal(vn->rx_post, 128);
	assert_int_equal(vn->c.notifies, 1);
	assert_int_equal(vn->rxq.avail->flags, 1); /* interrupts off while polling */
	assert_int_equal(vn->txq.avail->flags, 1);
	check_conserved(vn->dev.rx, &vn->rxq, vn->rx_post, vn->dev.rx->head + 256, 0, 0);
	fake_free(f);
}

static void test_rx_and_repost(void **state)
{
	(void)state;
	struct fake *f = fake_init();
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	uint8_t frame[100];
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 7; i++) {
			memset(frame, round * 7 + i, sizeof(frame));
			fake_rx(f, frame, 60 + (uint32_t)i);
		}
		fake_rx(f, frame, 5); /* runt: dropped, buffer re-posted */
		assert_true(virtio_net_rx_ready(vn));
		assert_int_equal(dev_rx_sync(d), 7);
		struct ring *r = d->rx;
		assert_int_equal(ring_avail(r), 7);
		for (int i = 0; i < 7; i++) {
			struct ring_slot *s = ring_slot(r, r->head + (uint32_t)i);
			assert_int_equal(s->len, 60 + i);
			assert_int_equal(ring_buf(r, s->buf_idx)[0], (uint8_t)(round * 7 + i));
		}
		check_conserved(r, &vn->rxq, vn->rx_post, r->head + 256, r->head, r->tail);
		ring_store(&r->head, r->tail); /* the stack releases them */
		assert_int_equal(dev_rx_sync(d), 0);
		check_conserved(r, &vn->rxq, vn->rx_post, r->head + 256, r->head, r->tail);
		assert_int_equal((uint16_t)(vn->rxq.avail->idx - f->rx_seen), 128);
	}
	assert_int_equal(vn->c.rx_bad_len, 20);
	assert_int_equal(d->stats.rx_frames, 140);
	fake_free(f);
}

static void test_tx_batch_one_notify(void **state)
{
	(void)state;
	struct fake *f = fake_init();
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->tx;
	uint8_t out[256][64];
	uint32_t lens[256];
	for (int round = 0; round < 40; round++) {
		uint64_t notifies = vn->c.notifies;
		int batch = 1 + round % 9;
		for (int i = 0; i < batch; i++) {
			struct ring_slot *s = ring_slot(r, r->head);
			memset(ring_buf(r, s->buf_idx), round * 16 + i, 64);
			s->len = (uint16_t)(64 + i);
			ring_store(&r->head, r->head + 1);
		}
		assert_int_equal(dev_tx_sync(d), batch);
		assert_int_equal(vn->c.notifies, notifies + 1);
		assert_int_equal(fake_tx(f, out, lens), batch);
		for (int i = 0; i < batch; i++) {
			assert_int_equal(lens[i], 64 + i);
			assert_int_equal(out[i][0], (uint8_t)(round * 16 + i));
		}
		assert_int_equal(dev_tx_sync(d), 0); /* reaps the completions */
		assert_int_equal(ring_avail(r), r->num_slots);
		check_conserved(r, &vn->txq, 0, 0, r->head, r->tail);
	}
	/* The device says it is polling: publish without a doorbell. */
	vn->txq.used->flags = 1;
	ring_slot(r, r->head)->len = 60;
	ring_store(&r->head, r->head + 1);
	uint64_t notifies = vn->c.notifies;
	assert_int_equal(dev_tx_sync(d), 1);
	assert_int_equal(vn->c.notifies, notifies);
	assert_int_equal(vn->c.notify_skipped, 1);
	fake_free(f);
}

static void test_irq_arm_sees_late_frame(void **state)
{
	(void)state;
	struct fake *f = fake_init();
	struct virtio_net *vn = &f->vn;
	assert_false(virtio_net_irq_arm(vn));
	assert_int_equal(vn->rxq.avail->flags, 0);
	virtio_net_irq_disarm(vn);
	assert_int_equal(vn->rxq.avail->flags, 1);
	uint8_t frame[60] = {0};
	fake_rx(f, frame, sizeof(frame));
	assert_true(virtio_net_irq_arm(vn)); /* do not halt: it raised no interrupt */
	assert_int_equal(vn->c.irq_arm_races, 1);
	fake_free(f);
}

/* Offered and not refused: negotiated; used_event starts one behind. */
static void test_event_idx_negotiated(void **state)
{
	(void)state;
	struct fake *f = fake_init_with(EVENT_IDX, false);
	assert_true(f->vn.event_idx);
	assert_true(f->vn.features & EVENT_IDX);
	assert_int_equal(f->vn.rxq.avail->ring[f->vn.rxq.size], 0xffff);
	fake_free(f);
	f = fake_init_with(EVENT_IDX, true); /* no-event-idx */
	assert_false(f->vn.event_idx);
	assert_false(f->vn.features & EVENT_IDX);
	fake_free(f);
}

/* Interrupts: none while polling, even across 2^16 frames; one for the
 * first frame after arming, none after disarming. */
static void test_event_idx_interrupts(void **state)
{
	(void)state;
	struct fake *f = fake_init_with(EVENT_IDX, false);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->rx;
	struct virtq *q = &vn->rxq;
	uint8_t frame[60] = {0};
	for (int i = 0; i < 70000; i += 8) {
		uint16_t old = q->used->idx;
		for (int k = 0; k < 8; k++)
			fake_rx(f, frame, sizeof(frame));
		assert_false(fake_must_interrupt(q, old));
		assert_int_equal(dev_rx_sync(d), 8);
		ring_store(&r->head, r->tail); /* the stack is done with them */
	}
	assert_int_equal(dev_rx_sync(d), 0); /* reposts */
	assert_false(virtio_net_irq_arm(vn));
	assert_int_equal(q->avail->ring[q->size], q->last_used);
	uint16_t old = q->used->idx;
	fake_rx(f, frame, sizeof(frame));
	assert_true(fake_must_interrupt(q, old));
	virtio_net_irq_disarm(vn);
	assert_int_equal(dev_rx_sync(d), 1);
	old = q->used->idx;
	fake_rx(f, frame, sizeof(frame));
	assert_false(fake_must_interrupt(q, old));
	/* armed with a frame already there: the arm says so (no halt) */
	assert_true(virtio_net_irq_arm(vn));
	fake_free(f);
}

/* Doorbells: a batch rings only if avail_event is among its entries. */
static void test_event_idx_doorbell(void **state)
{
	(void)state;
	struct fake *f = fake_init_with(EVENT_IDX, false);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->tx;
	struct virtq *q = &vn->txq;
	volatile uint16_t *avail_event = (volatile uint16_t *)&q->used->ring[q->size];
	uint8_t out[256][64];
	uint32_t lens[256];
	for (int round = 0; round < 20; round++) {
		bool asleep = round % 2 == 0; /* the device asks for the next entry */
		*avail_event = asleep ? q->avail_idx : (uint16_t)(q->avail_idx - 3);
		uint64_t notifies = vn->c.notifies, skipped = vn->c.notify_skipped;
		for (int i = 0; i < 3; i++) {
			ring_slot(r, r->head)->len = 60;
			ring_store(&r->head, r->head + 1);
		}
		assert_int_equal(dev_tx_sync(d), 3);
		assert_int_equal(vn->c.notifies, notifies + (asleep ? 1 : 0));
		assert_int_equal(vn->c.notify_skipped, skipped + (asleep ? 0 : 1));
		assert_int_equal(fake_tx(f, out, lens), 3);
		assert_int_equal(dev_tx_sync(d), 0);
	}
	/* avail_event at the last entry of a batch: still rings */
	*avail_event = (uint16_t)(q->avail_idx + 2);
	uint64_t notifies = vn->c.notifies;
	for (int i = 0; i < 3; i++) {
		ring_slot(r, r->head)->len = 60;
		ring_store(&r->head, r->head + 1);
	}
	assert_int_equal(dev_tx_sync(d), 3);
	assert_int_equal(vn->c.notifies, notifies + 1);
	fake_free(f);
}

/* A device that takes the posted tx chains 30 ms late, from its own
 * thread, as QEMU's I/O thread does on a busy host. */
struct late_device {
	struct fake *f;
	int taken; /* set (atomically) once the chains are used */
};

static void *late_device_run(void *arg)
{
	struct late_device *ld = arg;
	struct timespec ts = {0, 30 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint8_t out[256][64];
	uint32_t lens[256];
	int n = fake_tx(ld->f, out, lens);
	__atomic_store_n(&ld->taken, n, __ATOMIC_RELEASE);
	return NULL;
}

static void post_frames(struct dev *d, int n)
{
	struct ring *r = d->tx;
	for (int i = 0; i < n; i++) {
		struct ring_slot *s = ring_slot(r, r->head);
		memset(ring_buf(r, s->buf_idx), i, 64);
		s->len = 64;
		ring_store(&r->head, r->head + 1);
	}
	assert_int_equal(dev_tx_sync(d), n);
}

/* Close resets the device, which forgets what it has not taken: the last
 * frames (FINs, the access log's last batch) must be taken first.  Before
 * the wait in vn_close they were lost at every exit on a busy host. */
static void test_close_waits_for_tx(void **state)
{
	(void)state;
	struct fake *f = fake_init();
	struct dev *d = &f->vn.dev;
	post_frames(d, 3);
	struct late_device ld = {.f = f};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, late_device_run, &ld), 0);
	dev_close(d);
	int taken = __atomic_load_n(&ld.taken, __ATOMIC_ACQUIRE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(taken, 3);
	assert_int_equal(f->common[20], 0); /* and then the reset */
	fake_free(f);
}

/* A device that never takes them: close still returns, within its bound. */
static void test_close_bounded(void **state)
{
	(void)state;
	struct fake *f = fake_init();
	struct dev *d = &f->vn.dev;
	post_frames(d, 2);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	dev_close(d);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(s < 2.0);
	fake_free(f);
}

/* Every offload offered and allowed: negotiated and advertised. */
static void test_offload_negotiated(void **state)
{
	(void)state;
	struct fake *f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_ALL);
	struct virtio_net *vn = &f->vn;
	uint64_t off = F_CSUM | F_GUEST_CSUM | F_HOST_TSO4 | F_HOST_TSO6;
	assert_true((vn->features & off) == off);
	assert_int_equal(vn->dev.offload, DEV_OFF_TX_CSUM | DEV_OFF_TSO4 | DEV_OFF_TSO6 | DEV_OFF_RX_CSUM);
	assert_int_equal(vn->dev.tso_max, 65535 + 14);
	fake_free(f);
	/* the mask picks: checksums only */
	f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_TX_CSUM | DEV_OFF_RX_CSUM);
	assert_int_equal(f->vn.dev.offload, DEV_OFF_TX_CSUM | DEV_OFF_RX_CSUM);
	assert_false(f->vn.features & (F_HOST_TSO4 | F_HOST_TSO6));
	assert_int_equal(f->vn.dev.tso_max, 0);
	fake_free(f);
}

/* The allow mask 0 (offload=off): the features and frames of before, even
 * with every offload offered; an rx header's flags are not believed. */
static void test_offload_allow_zero(void **state)
{
	(void)state;
	struct fake *f = fake_init_allow(F_OFFLOADS, false, 0);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	/* (bit 33, ACCESS_PLATFORM, rides on the fake's bit 1) */
	assert_true((vn->features & ~(1ull << 33)) == (1ull << 32 | 1u << 5 | 1u << 16));
	assert_int_equal(d->offload, 0);
	assert_int_equal(d->tso_max, 0);
	uint8_t frame[60] = {0}, hdr[12] = {2}; /* DATA_VALID */
	fake_rx_hdr(f, frame, sizeof(frame), hdr);
	assert_int_equal(dev_rx_sync(d), 1);
	assert_int_equal(ring_slot(d->rx, d->rx->head)->flags, 0);
	assert_int_equal(d->stats.rx_csum_ok, 0);
	/* a plain tx frame: zeroed header, then the frame */
	struct ring *r = d->tx;
	ring_slot(r, r->head)->len = 60;
	ring_slot(r, r->head)->flags = 0;
	ring_store(&r->head, r->head + 1);
	assert_int_equal(dev_tx_sync(d), 1);
	struct chain_desc cd[4];
	uint16_t h;
	assert_int_equal(fake_tx_chain(f, cd, 4, &h), 2);
	assert_int_equal(cd[0].len, 12);
	static const uint8_t zero[12];
	assert_memory_equal(cd[0].addr, zero, 12);
	assert_int_equal(cd[1].len, 60);
	fake_free(f);
}

/* Fill the tx slots from head with a frame of `lens` (k slots), flags as
 * the stack sets them; the first buffer starts with hdr when vnet. */
static void put_frame(struct ring *r, const uint16_t *lens, uint32_t k, const uint8_t *hdr)
{
	for (uint32_t i = 0; i < k; i++) {
		struct ring_slot *s = ring_slot(r, r->head + i);
		uint8_t *b = ring_buf(r, s->buf_idx);
		memset(b, (int)(0xa0 + i), lens[i]);
		if (i == 0 && hdr)
			memcpy(b, hdr, 12);
		s->len = lens[i];
		s->flags = (uint16_t)((i == 0 && hdr ? RING_SLOT_VNET : 0) | (i + 1 < k ? RING_SLOT_MORE : 0));
	}
	ring_store(&r->head, r->head + k);
}

static void vnet_hdr(uint8_t h[12], uint8_t flags, uint8_t gso, uint16_t hdr_len, uint16_t gso_size,
		     uint16_t start, uint16_t off)
{
	uint16_t v[5] = {hdr_len, gso_size, start, off, 0x1234 /* num_buffers: must go out 0 */};
	h[0] = flags;
	h[1] = gso;
	memcpy(h + 2, v, 10);
}

/* A TSO frame of three slots is one chain of three descriptors, the
 * header inline in the first; a plain frame after it keeps the zeroed
 * header; completions in any order give every buffer back. */
static void test_tx_vnet_chain(void **state)
{
	(void)state;
	struct fake *f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_ALL);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->tx;
	for (int round = 0; round < 30; round++) {
		uint8_t h[12];
		vnet_hdr(h, 1, round % 2 ? RING_VNET_GSO_TCPV6 : RING_VNET_GSO_TCPV4, 66, 1448, 34, 16);
		const uint16_t lens[3] = {2048, 2048, 500};
		put_frame(r, lens, 3, h);
		const uint16_t plain[1] = {60};
		put_frame(r, plain, 1, NULL);
		uint32_t before = vn->tx.nfree;
		assert_int_equal(dev_tx_sync(d), 2);
		assert_int_equal(vn->tx.nfree, before - 5);
		check_conserved_tx(vn);
		struct chain_desc cd[8];
		uint16_t h1, h2;
		assert_int_equal(fake_tx_chain(f, cd, 8, &h1), 3);
		assert_int_equal(cd[0].len, 2048);
		assert_int_equal(cd[1].len, 2048);
		assert_int_equal(cd[2].len, 500);
		assert_int_equal(cd[0].flags, 1);
		assert_int_equal(cd[1].flags, 1);
		assert_int_equal(cd[2].flags, 0);
		uint8_t want[12];
		vnet_hdr(want, 1, h[1], 66, 1448, 34, 16);
		want[10] = want[11] = 0;
		assert_memory_equal(cd[0].addr, want, 12);
		assert_int_equal(cd[0].addr[12], 0xa0);
		assert_int_equal(cd[1].addr[0], 0xa1);
		assert_int_equal(cd[2].addr[499], 0xa2);
		assert_int_equal(fake_tx_chain(f, cd, 8, &h2), 2);
		assert_int_equal(cd[0].len, 12);
		assert_int_equal(cd[1].len, 60);
		/* newest first, then the TSO frame */
		fake_tx_complete(f, h2);
		fake_tx_complete(f, h1);
		assert_int_equal(dev_tx_sync(d), 0);
		assert_int_equal(ring_avail(r), r->num_slots);
		assert_int_equal(vn->tx.nfree, vn->txq.size);
		check_conserved_tx(vn);
	}
	assert_int_equal(d->stats.tx_frames, 60);
	assert_int_equal(d->stats.tx_bytes, 30 * (2048 + 2048 + 500 - 12 + 60));
	assert_int_equal(d->stats.tx_csum_offload, 30);
	assert_int_equal(d->stats.tx_tso_frames, 30);
	/* (4584 - 66) / 1448 rounded up: 4 segments each */
	assert_int_equal(d->stats.tx_tso_segs, 30 * 4);
	assert_int_equal(vn->c.tx_vnet_bad, 0);
	fake_free(f);
}

/* Requests the device did not agree to, or that point outside the frame,
 * are never posted; their buffers come back; later frames still go. */
static void test_tx_vnet_refused(void **state)
{
	(void)state;
	/* checksums negotiated, TSO not offered */
	struct fake *f = fake_init_allow(F_GUEST_CSUM, false, DEV_OFF_ALL);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->tx;
	assert_int_equal(d->offload, DEV_OFF_TX_CSUM | DEV_OFF_RX_CSUM);
	assert_false(vn->features & (F_HOST_TSO4 | F_HOST_TSO6));
	uint8_t bad[][12] = {{0}, {0}, {0}, {0}, {0}, {0}};
	vnet_hdr(bad[0], 1, RING_VNET_GSO_TCPV4, 54, 1448, 34, 16); /* TSO not negotiated */
	vnet_hdr(bad[1], 1, 0, 0, 0, 34, 4000);                     /* checksum past the end */
	vnet_hdr(bad[2], 1, 0, 0, 0, 2, 16);                        /* inside the Ethernet header */
	vnet_hdr(bad[3], 3, 0, 0, 0, 34, 16);                       /* DATA_VALID is rx only */
	vnet_hdr(bad[4], 1, 3, 54, 1448, 34, 6);                    /* UDP fragmentation */
	vnet_hdr(bad[5], 1, RING_VNET_GSO_TCPV4 | 0x80, 54, 1448, 34, 16); /* ECN */
	for (unsigned i = 0; i < 6; i++) {
		const uint16_t lens[2] = {2048, 900};
		put_frame(r, lens, 2, bad[i]);
	}
	uint8_t ok[12];
	vnet_hdr(ok, 1, 0, 0, 0, 34, 16);
	const uint16_t one[1] = {100};
	put_frame(r, one, 1, ok);
	assert_int_equal(dev_tx_sync(d), 1);
	assert_int_equal(vn->c.tx_vnet_bad, 6);
	assert_int_equal(d->stats.tx_drops, 6);
	assert_int_equal(d->stats.tx_csum_offload, 1);
	assert_int_equal(ring_avail(r), r->num_slots - 1); /* all but the one posted */
	check_conserved_tx(vn);
	struct chain_desc cd[4];
	uint16_t h;
	assert_int_equal(fake_tx_chain(f, cd, 4, &h), 1);
	assert_int_equal(cd[0].len, 100);
	assert_int_equal(fake_tx_chain(f, cd, 4, &h), 0);
	fake_free(f);
	/* no TX_CSUM allowed: a NEEDS_CSUM frame is refused too */
	f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_RX_CSUM);
	assert_false(f->vn.features & F_CSUM);
	put_frame(f->vn.dev.tx, one, 1, ok);
	assert_int_equal(dev_tx_sync(&f->vn.dev), 0);
	assert_int_equal(f->vn.c.tx_vnet_bad, 1);
	fake_free(f);
}

/* A frame whose last slot is not handed over yet waits; one of more slots
 * than a chain may hold is refused. */
static void test_tx_chain_limits(void **state)
{
	(void)state;
	struct fake *f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_ALL);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->tx;
	struct ring_slot *s = ring_slot(r, r->head);
	s->len = 2048;
	s->flags = RING_SLOT_MORE;
	ring_store(&r->head, r->head + 1);
	assert_int_equal(dev_tx_sync(d), 0);
	assert_int_equal(vn->tx_sub, r->head - 1);
	s = ring_slot(r, r->head);
	s->len = 10;
	s->flags = 0;
	ring_store(&r->head, r->head + 1);
	assert_int_equal(dev_tx_sync(d), 1); /* a plain frame of two slots */
	struct chain_desc cd[8];
	uint16_t h;
	assert_int_equal(fake_tx_chain(f, cd, 8, &h), 3);
	fake_tx_complete(f, h);
	uint16_t lens[VIRTIO_NET_TX_CHAIN_MAX + 1];
	for (unsigned i = 0; i <= VIRTIO_NET_TX_CHAIN_MAX; i++)
		lens[i] = 100;
	put_frame(r, lens, VIRTIO_NET_TX_CHAIN_MAX + 1, NULL);
	assert_int_equal(dev_tx_sync(d), 0);
	assert_int_equal(vn->c.tx_vnet_bad, 1);
	assert_int_equal(ring_avail(r), r->num_slots);
	check_conserved_tx(vn);
	fake_free(f);
}

/* rx: DATA_VALID and NEEDS_CSUM (inside the frame) mark the slot
 * CSUM_OK; a header that lies is dropped and counted. */
static void test_rx_csum_ok(void **state)
{
	(void)state;
	struct fake *f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_ALL);
	struct virtio_net *vn = &f->vn;
	struct dev *d = &vn->dev;
	struct ring *r = d->rx;
	uint8_t frame[100] = {0};
	uint8_t h[6][12] = {{0}};
	h[1][0] = 2;                          /* DATA_VALID */
	vnet_hdr(h[2], 1, 0, 0, 0, 34, 16);   /* NEEDS_CSUM, TCP over IPv4 */
	vnet_hdr(h[3], 1, 0, 0, 0, 34, 65);   /* the field past the end: a lie */
	vnet_hdr(h[4], 0, 1, 54, 1448, 0, 0); /* GSO never negotiated: a lie */
	h[5][0] = 4;                          /* an unknown flag */
	for (int i = 0; i < 6; i++)
		fake_rx_hdr(f, frame, sizeof(frame), h[i]);
	assert_int_equal(dev_rx_sync(d), 3);
	assert_int_equal(ring_slot(r, r->head)->flags, 0);
	assert_int_equal(ring_slot(r, r->head + 1)->flags, RING_SLOT_CSUM_OK);
	assert_int_equal(ring_slot(r, r->head + 2)->flags, RING_SLOT_CSUM_OK);
	assert_int_equal(d->stats.rx_csum_ok, 2);
	assert_int_equal(d->stats.rx_vnet_bad, 3);
	assert_int_equal(d->stats.rx_drops, 3);
	ring_store(&r->head, r->tail);
	assert_int_equal(dev_rx_sync(d), 0);
	check_conserved(r, &vn->rxq, vn->rx_post, r->head + 256, r->head, r->tail);
	fake_free(f);
	/* without GUEST_CSUM negotiated the flags are not believed */
	f = fake_init_allow(F_OFFLOADS, false, DEV_OFF_TX_CSUM);
	fake_rx_hdr(f, frame, sizeof(frame), h[1]);
	assert_int_equal(dev_rx_sync(&f->vn.dev), 1);
	assert_int_equal(ring_slot(f->vn.dev.rx, 0)->flags, 0);
	assert_int_equal(f->vn.dev.stats.rx_csum_ok, 0);
	fake_free(f);
}

/* The MMIO transport's operations (virtio_regs.h) on a 0x200-byte
 * register window in plain memory.  Plain memory cannot model QueueSel
 * (every queue would share one QueueReady), so the whole driver over MMIO
 * is checked under QEMU's microvm (tests/vm.sh with VM_MACHINE=microvm);
 * here: each operation touches the registers of 4.2.2 with 32-bit
 * accesses, queue setup follows 4.2.3.2 (refuses a queue already ready
 * and any MSI-X vector), the doorbell is a 32-bit write (a 16-bit one
 * would leave the preset upper half), and the interrupt ack writes back
 * what it read. */
static uint32_t win32(const uint8_t *w, unsigned off)
{
	uint32_t v;
	memcpy(&v, w + off, 4);
	return v;
}

static void set32(uint8_t *w, unsigned off, uint32_t v)
{
	memcpy(w + off, &v, 4);
}

static void test_mmio_transport(void **state)
{
	(void)state;
	uint8_t *w = aligned_alloc(8, 0x200);
	assert_non_null(w);
	memset(w, 0, 0x200);
	const struct virtio_transport *t = &virtio_transport_mmio;
	struct virtio_regs r = {.t = t, .common = w, .device = w + VIRTIO_MMIO_CONFIG};

	set32(w, VIRTIO_MMIO_STATUS, 0xffffff0fu); /* only the low byte is the status */
	assert_int_equal(t->status(&r), 0x0f);
	t->set_status(&r, 0);
	assert_int_equal(win32(w, VIRTIO_MMIO_STATUS), 0);

	set32(w, VIRTIO_MMIO_DEV_FEATURES, 0x10001u);
	assert_int_equal(t->features(&r, 1), 0x10001u);
	assert_int_equal(win32(w, VIRTIO_MMIO_DEV_FEATURES_SEL), 1);
	t->set_features(&r, 1, 1);
	assert_int_equal(win32(w, VIRTIO_MMIO_DRV_FEATURES_SEL), 1);
	assert_int_equal(win32(w, VIRTIO_MMIO_DRV_FEATURES), 1);

	set32(w, VIRTIO_MMIO_CONFIG_GENERATION, 7);
	assert_int_equal(t->config_gen(&r), 7);

	set32(w, VIRTIO_MMIO_QUEUE_NUM_MAX, 1024);
	assert_int_equal(t->queue_max(&r, 1), 1024);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_SEL), 1);
	set32(w, VIRTIO_MMIO_QUEUE_NUM_MAX, 0x10000); /* more than a u16: clamped */
	assert_int_equal(t->queue_max(&r, 1), 0xffff);

	struct virtio_doorbell bell = {0};
	const char *why = NULL;
	assert_int_equal(t->queue_setup(&r, 1, 256, 1, 2, 3, 0, &bell, &why), -1);
	assert_non_null(strstr(why, "MSI-X"));
	set32(w, VIRTIO_MMIO_QUEUE_READY, 1);
	assert_int_equal(t->queue_setup(&r, 1, 256, 1, 2, 3, VIRTIO_MSI_NO_VECTOR, &bell, &why), -1);
	assert_non_null(strstr(why, "already in use"));
	set32(w, VIRTIO_MMIO_QUEUE_READY, 0);
	assert_int_equal(t->queue_setup(&r, 1, 256, 0x123456789000ull, 0xabc0000040ull, 0x80,
					VIRTIO_MSI_NO_VECTOR, &bell, &why), 0);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_SEL), 1);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_NUM), 256);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_DESC_LOW), 0x56789000u);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_DESC_HIGH), 0x1234);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_DRIVER_LOW), 0xc0000040u);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_DRIVER_HIGH), 0xab);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_DEVICE_LOW), 0x80);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_DEVICE_HIGH), 0);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_READY), 1);

	assert_true(bell.wide);
	assert_ptr_equal((const void *)bell.addr, w + VIRTIO_MMIO_QUEUE_NOTIFY);
	set32(w, VIRTIO_MMIO_QUEUE_NOTIFY, 0xffffffffu);
	virtio_ring_doorbell(&bell, 1);
	assert_int_equal(win32(w, VIRTIO_MMIO_QUEUE_NOTIFY), 1);

	set32(w, VIRTIO_MMIO_INTERRUPT_STATUS, 3);
	assert_int_equal(t->irq_ack(&r), 3);
	assert_int_equal(win32(w, VIRTIO_MMIO_INTERRUPT_ACK), 3);
	set32(w, VIRTIO_MMIO_INTERRUPT_STATUS, 0);
	set32(w, VIRTIO_MMIO_INTERRUPT_ACK, 0);
	assert_int_equal(t->irq_ack(&r), 0);
	assert_int_equal(win32(w, VIRTIO_MMIO_INTERRUPT_ACK), 0); /* nothing to ack */
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_rx_and_repost),
		cmocka_unit_test(test_tx_batch_one_notify),
		cmocka_unit_test(test_mmio_transport),
		cmocka_unit_test(test_irq_arm_sees_late_frame),
		cmocka_unit_test(test_event_idx_negotiated),
		cmocka_unit_test(test_event_idx_interrupts),
		cmocka_unit_test(test_event_idx_doorbell),
		cmocka_unit_test(test_close_waits_for_tx),
		cmocka_unit_test(test_close_bounded),
		cmocka_unit_test(test_offload_negotiated),
		cmocka_unit_test(test_offload_allow_zero),
		cmocka_unit_test(test_tx_vnet_chain),
		cmocka_unit_test(test_tx_vnet_refused),
		cmocka_unit_test(test_tx_chain_limits),
		cmocka_unit_test(test_rx_csum_ok),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
