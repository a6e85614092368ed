/* virtio_net.c — see virtio_net.h.
 *
 * Call order: virtio_net_init once; then, as for every device,
 * rx_sync / tx_sync from the loop; virtio_net_irq_arm / _disarm around
 * the loop's park.  Buffer ownership follows ring.h: the driver is the
 * device side (k) of both rings.  A buffer is always in exactly one of
 * three places — a user slot, a posted chain (chain_buf), or a
 * device-side slot not yet posted — so nothing leaks even when the device
 * completes chains out of order: each completion writes its buffer into
 * the slot at tail, whatever that slot held before (that buffer is itself
 * in a posted chain).  A tx chain holds one buffer per slot of its frame
 * (several for a TSO frame), so a completion may advance tail by several;
 * a frame refused before posting gives its buffers back the same way.
 * Offloads: negotiated in virtio_net_init_mq under params.offload_allow,
 * advertised by vn_set_offload, checked per frame by tx_hdr_check (tx) and
 * rx_hdr_verdict (rx). */
#include "virtio_net.h"
#include "../plat/plat.h"

/* Device status bits (virtio 1.2, 2.1); the transport (virtio_regs.h)
 * reads and writes them. */
#define ST_ACKNOWLEDGE 1
#define ST_DRIVER 2
#define ST_DRIVER_OK 4
#define ST_FEATURES_OK 8
#define ST_FAILED 128

/* Offloads (5.1.3): HOST_TSO* depend on CSUM, GUEST_TSO* on GUEST_CSUM
 * (5.1.3.1); we take HOST_ECN / GUEST_* segmentation never. */
#define F_NET_CSUM (1ull << 0)       /* the device finishes tx checksums */
#define F_NET_GUEST_CSUM (1ull << 1) /* rx may come with DATA_VALID / NEEDS_CSUM */
#define F_NET_HOST_TSO4 (1ull << 11) /* the device segments TCPv4 super-frames */
#define F_NET_HOST_TSO6 (1ull << 12)
#define F_NET_MAC (1ull << 5)
#define F_NET_STATUS (1ull << 16)
#define F_NET_CTRL_VQ (1ull << 17)
#define F_NET_MQ (1ull << 22)
/* Device configuration (5.1.4): mac[6], status, max_virtqueue_pairs. */
#define NET_CFG_MAX_PAIRS 8
/* Control virtqueue (5.1.6.5): class, command, data, ack. */
#define CTRL_MQ 4
#define CTRL_MQ_VQ_PAIRS_SET 0
#define CTRL_OK 0
#define CTRL_QSIZE 8u
#define F_RING_EVENT_IDX (1ull << 29)
#define F_VERSION_1 (1ull << 32)
#define F_ACCESS_PLATFORM (1ull << 33)

#define VIRTQ_DESC_F_NEXT 1
#define VIRTQ_DESC_F_WRITE 2
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY 1

/* With VERSION_1 the header always has num_buffers: 12 bytes, the layout
 * of ring.h's struct ring_vnet. */
#define VNET_HDR_LEN 12u
_Static_assert(sizeof(struct ring_vnet) == VNET_HDR_LEN, "ring_vnet is virtio_net_hdr_v1");
#define VNET_F_NEEDS_CSUM 1u
#define VNET_F_DATA_VALID 2u
#define VNET_GSO_NONE 0u
/* The largest frame a TSO frame may be (dev.h's tso_max): a 64 KiB IP
 * packet behind its Ethernet header. */
#define VN_TSO_MAX (65535u + ETH_HDR_LEN)
#define ETH_HDR_LEN 14u
#define VN_SLOTS RING_SLOTS_DEFAULT
#define VN_BUF RING_BUF_SIZE_DEFAULT

/* The device configuration: a byte-addressed window on both transports. */
static uint8_t rd8(volatile uint8_t *b, unsigned o) { return *(volatile uint8_t *)(b + o); }
static uint16_t rd16(volatile uint8_t *b, unsigned o) { return *(volatile uint16_t *)(b + o); }

/* Identity mapping: a guest-physical address is the pointer. */
static uint64_t phys(const volatile void *p) { return (uint64_t)(uintptr_t)p; }

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* desc, avail (flags, idx, ring, used_event), used (flags, idx, ring,
 * avail_event), each page-aligned. */
static size_t vq_bytes(uint16_t q)
{
	return align_up(16u * q, 4096) + align_up(6u + 2u * q, 4096) + align_up(6u + 8u * q, 4096);
}

/* 2.7.10.1: does moving an index from old to new pass event?  (The entry
 * `event` is among [old, new), in 16-bit arithmetic.) */
static bool vq_need_event(uint16_t event, uint16_t new_idx, uint16_t old_idx)
{
	return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old_idx);
}

size_t virtio_net_arena_size(void)
{
	/* carve() page-aligns every piece: region, rx headers, tx header, and
	 * each queue's three parts. */
	return align_up(ring_region_size(VN_SLOTS, VN_BUF, 0), 4096) +
	       align_up(16u * VIRTIO_NET_QUEUE_MAX / 2, 4096) + 4096 + 2 * vq_bytes(VIRTIO_NET_QUEUE_MAX) +
	       vq_bytes(CTRL_QSIZE) + 4096;
}

static void *carve(uint8_t **cur, uint8_t *end, size_t size)
{
	uint8_t *p = (uint8_t *)align_up((size_t)(uintptr_t)*cur, 4096);
	if (p > end || (size_t)(end - p) < size)
		return NULL;
	*cur = p + size;
	sk_memset(p, 0, size);
	return p;
}

static uint16_t vq_pop_free(struct virtq *q)
{
	return q->free[--q->nfree];
}
static void vq_push_free(struct virtq *q, uint16_t c)
{
	q->free[q->nfree++] = c;
}

/* Put chain c on the avail ring (not yet published). */
static void vq_post(struct virtq *q, uint16_t c)
{
	q->busy[c] = 1;
	q->avail->ring[q->avail_idx & (q->size - 1)] = (uint16_t)(2 * c);
	q->avail_idx++;
}

/* Publish new avail entries; ring the doorbell unless the device is
 * polling the queue anyway (it sets NO_NOTIFY then).  The fence orders
 * our idx store before the flags load (store->load, the one reordering
 * x86 does): without it we could miss the device going back to sleep. */
static void vq_publish(struct virtio_net *vn, struct virtq *q, uint16_t old_idx)
{
	__atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	bool skip = vn->event_idx ? !vq_need_event(*q->avail_event, q->avail_idx, old_idx)
				  : (q->used->flags & VIRTQ_USED_F_NO_NOTIFY) != 0;
	if (skip) {
		vn->c.notify_skipped++;
		return;
	}
	virtio_ring_doorbell(&q->bell, q->index);
	vn->c.notifies++;
}

/* The next completed chain, or -1.  Validates the device's id. */
static int vq_next_used(struct virtio_net *vn, struct virtq *q, uint16_t used_idx, uint32_t *len)
{
	while (q->last_used != used_idx) {
		volatile struct virtq_used_elem *e = &q->used->ring[q->last_used & (q->size - 1)];
		uint32_t id = e->id;
		*len = e->len;
		q->last_used++;
		uint32_t c = id / 2;
		if (id >= q->size || (id & 1) || !q->busy[c]) {
			vn->c.bad_used++;
			continue;
		}
		q->busy[c] = 0;
		return (int)c;
	}
	return -1;
}

static uint16_t le16_at(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The header the device wrote in front of an rx frame of flen bytes: 0 for
 * a plain frame, RING_SLOT_CSUM_OK when its checksum need not be verified,
 * -1 when the header lies (counted by the caller, the frame dropped).
 * Without GUEST_CSUM the device has no business setting flags, and we
 * never negotiate GUEST_TSO*, so a segmentation type is always a lie. */
static int rx_hdr_verdict(const struct virtio_net *vn, const uint8_t *h, uint32_t flen)
{
	uint8_t flags = h[0], gso = h[1];
	if (gso != VNET_GSO_NONE)
		return -1;
	if (!(vn->features & F_NET_GUEST_CSUM) || flags == 0)
		return 0;
	if (flags & ~(VNET_F_NEEDS_CSUM | VNET_F_DATA_VALID))
		return -1;
	/* NEEDS_CSUM: the host's kernel left the checksum for us to finish;
	 * the frame is its own, so it need not be verified, but the field it
	 * names must be inside the frame (and past the Ethernet header). */
	if (flags & VNET_F_NEEDS_CSUM) {
		uint32_t start = le16_at(h + 6), off = le16_at(h + 8);
		if (start < ETH_HDR_LEN || start + off + 2 > flen)
			return -1;
	}
	return RING_SLOT_CSUM_OK;
}

static int vn_rx_sync(struct dev *d)
{
	struct virtio_net *vn = (struct virtio_net *)d;
	struct virtq *q = &vn->rxq;
	struct ring *r = d->rx;
	/* Nothing completed and nothing to post again: one load each, no
	 * work (the loop calls this every turn, most of them idle). */
	uint32_t limit = ring_load(&r->head) + r->num_slots;
	if (!virtio_net_rx_ready(vn) && (vn->rx_post == limit || !q->nfree))
		return 0;
	d->stats.rx_syncs++;

	/* 1. completed frames into the slots at tail */
	uint32_t tail = r->tail;
	uint16_t used_idx = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
	uint16_t old_avail = q->avail_idx;
	int n = 0, c;
	uint32_t len;
	bool repost = false;
	while ((c = vq_next_used(vn, q, used_idx, &len)) >= 0) {
		if (len < VNET_HDR_LEN + ETH_HDR_LEN || len > VNET_HDR_LEN + r->buf_size) {
			/* Nothing usable: give the same buffer straight back. */
			vn->c.rx_bad_len++;
			d->stats.rx_drops++;
			vq_post(q, (uint16_t)c);
			repost = true;
			continue;
		}
		int v = rx_hdr_verdict(vn, vn->rx_hdr + 16u * (unsigned)c, len - VNET_HDR_LEN);
		if (v < 0) {
			d->stats.rx_vnet_bad++;
			d->stats.rx_drops++;
			vq_post(q, (uint16_t)c);
			repost = true;
			continue;
		}
		if (v)
			d->stats.rx_csum_ok++;
		struct ring_slot *s = ring_slot(r, tail++);
		s->buf_idx = q->chain_buf[c];
		s->len = (uint16_t)(len - VNET_HDR_LEN);
		s->flags = (uint16_t)v;
		vq_push_free(q, (uint16_t)c);
		d->stats.rx_frames++;
		d->stats.rx_bytes += len - VNET_HDR_LEN;
		n++;
	}
	if (n)
		ring_store(&r->tail, tail);
	/* Polling: keep used_event one behind what we have read, so no
	 * completion crosses it (even after 2^16 frames without a park). */
	if (vn->event_idx && !vn->armed)
		*q->used_event = (uint16_t)(q->last_used - 1);

	/* 2. post every device-side slot not yet posted (the user released
	 *    [old head, head) since the last call) */
	while (vn->rx_post != limit && q->nfree) {
		uint32_t b = ring_slot(r, vn->rx_post)->buf_idx;
		if (b >= r->nbufs)
			return -22; /* the user broke the ring ABI */
		c = vq_pop_free(q);
		q->chain_buf[c] = b;
		q->desc[2 * c + 1].addr = phys(ring_buf(r, b));
		vq_post(q, (uint16_t)c);
		vn->rx_post++;
		repost = true;
	}
	if (repost) {
		vq_publish(vn, q, old_avail);
		d->stats.rx_syscalls++;
	}
	return n;
}

/* The offload request in front of a tx frame (ring.h's struct ring_vnet,
 * virtio's header as it is), against what was negotiated and the frame's
 * flen bytes (without the header).  Returns the segments the frame stands
 * for (1 without GSO), or 0 to refuse it.  The stack is ours, but a
 * request the device did not agree to would be taken as something else
 * (5.1.6.2.1: the driver MUST NOT ask for what it did not negotiate), and
 * a checksum position outside the frame would have the host write outside
 * the packet: both are refused here, not by the host. */
static uint32_t tx_hdr_check(const struct virtio_net *vn, const uint8_t *h, uint32_t flen)
{
	uint32_t off = vn->dev.offload;
	uint8_t flags = h[0], gso = h[1];
	uint32_t hdr_len = le16_at(h + 2), gso_size = le16_at(h + 4);
	if (flags & ~VNET_F_NEEDS_CSUM)
		return 0;
	if (flags & VNET_F_NEEDS_CSUM) {
		uint32_t start = le16_at(h + 6), field = le16_at(h + 8);
		if (!(off & DEV_OFF_TX_CSUM) || start < ETH_HDR_LEN || start + field + 2 > flen)
			return 0;
	}
	if (gso == VNET_GSO_NONE)
		return 1;
	/* ECN (0x80) is not negotiated (HOST_ECN): refused with the rest.  The
	 * device finishes every segment's checksum from csum_start, so a
	 * super-frame must ask for that too. */
	if ((gso == RING_VNET_GSO_TCPV4 && !(off & DEV_OFF_TSO4)) ||
	    (gso == RING_VNET_GSO_TCPV6 && !(off & DEV_OFF_TSO6)) ||
	    (gso != RING_VNET_GSO_TCPV4 && gso != RING_VNET_GSO_TCPV6))
		return 0;
	if (!(flags & VNET_F_NEEDS_CSUM) || gso_size == 0 || flen > vn->dev.tso_max ||
	    hdr_len < ETH_HDR_LEN || hdr_len >= flen)
		return 0;
	return (flen - hdr_len + gso_size - 1) / gso_size;
}

/* Completed tx chains: every ring buffer a chain held goes to the slot at
 * tail (see the top of the file), its descriptors back to the free stack. */
static bool tx_reap(struct virtio_net *vn, uint32_t *tail)
{
	struct virtq *q = &vn->txq;
	struct virtq_tx *t = &vn->tx;
	struct ring *r = vn->dev.tx;
	uint16_t used_idx = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
	bool done = false;
	while (q->last_used != used_idx) {
		uint32_t id = q->used->ring[q->last_used & (q->size - 1)].id;
		q->last_used++;
		if (id >= q->size || !t->busy[id]) {
			vn->c.bad_used++;
			continue;
		}
		t->busy[id] = 0;
		uint16_t dsc = (uint16_t)id;
		for (uint16_t k = t->ndesc[id]; k-- > 0; dsc = t->next[dsc]) {
			if (t->buf[dsc] != VN_TX_NO_BUF)
				ring_slot(r, (*tail)++)->buf_idx = t->buf[dsc];
			t->free[t->nfree++] = dsc;
		}
		done = true;
	}
	return done;
}

/* Frame slots [tx_sub, tx_sub + k) as one chain: the zeroed header first
 * for a plain frame; a VNET frame's buffer starts with its own header, so
 * its first descriptor covers header and frame (VERSION_1 devices take
 * any split of header and data, 2.7.4 and 5.1.6.6).  Several slots are
 * several descriptors, not a copy into one big buffer: a descriptor is
 * four stores, a copy under TCG costs ~0.5 ns a byte even 8 bytes at a
 * time (libc.c), 30 us for a 64 KiB frame. */
static void tx_post_chain(struct virtio_net *vn, uint32_t k, bool vnet)
{
	struct virtq *q = &vn->txq;
	struct virtq_tx *t = &vn->tx;
	struct ring *r = vn->dev.tx;
	uint32_t need = k + (vnet ? 0 : 1);
	uint16_t head = 0, prev = 0;
	for (uint32_t j = 0; j < need; j++) {
		uint16_t dsc = t->free[--t->nfree];
		if (j == 0) {
			head = dsc;
		} else {
			q->desc[prev].next = dsc;
			q->desc[prev].flags = VIRTQ_DESC_F_NEXT;
			t->next[prev] = dsc;
		}
		if (!vnet && j == 0) {
			q->desc[dsc].addr = phys(vn->tx_hdr);
			q->desc[dsc].len = VNET_HDR_LEN;
			t->buf[dsc] = VN_TX_NO_BUF;
		} else {
			struct ring_slot *s = ring_slot(r, vn->tx_sub + j - (vnet ? 0 : 1));
			q->desc[dsc].addr = phys(ring_buf(r, s->buf_idx));
			q->desc[dsc].len = s->len;
			t->buf[dsc] = s->buf_idx;
		}
		q->desc[dsc].flags = 0;
		prev = dsc;
	}
	t->ndesc[head] = (uint16_t)need;
	t->busy[head] = 1;
	q->avail->ring[q->avail_idx & (q->size - 1)] = head;
	q->avail_idx++;
	vn->c.tx_chain_descs += need;
}

static int vn_tx_sync(struct dev *d)
{
	struct virtio_net *vn = (struct virtio_net *)d;
	struct virtq *q = &vn->txq;
	struct ring *r = d->tx;
	/* Nothing handed over and nothing completed: no work. */
	if (ring_load(&r->head) == vn->tx_sub && q->used->idx == q->last_used)
		return 0;
	d->stats.tx_syncs++;

	/* 1. completions: the oldest handed-over slots become free again */
	uint32_t tail = r->tail, tail0 = tail;
	tx_reap(vn, &tail);

	/* 2. post what the user handed over, one doorbell for the batch */
	uint32_t head = ring_load(&r->head);
	uint16_t old_avail = q->avail_idx;
	int sent = 0;
	while (vn->tx_sub != head) {
		/* The frame: slots up to the first without MORE.  One whose last
		 * slot is not handed over yet waits for the next sync. */
		uint32_t k = 0;
		bool whole = false;
		for (uint32_t i = vn->tx_sub; i != head && !whole; i++) {
			k++;
			whole = !(ring_slot(r, i)->flags & RING_SLOT_MORE);
		}
		if (!whole)
			break;
		struct ring_slot *s0 = ring_slot(r, vn->tx_sub);
		bool vnet = (s0->flags & RING_SLOT_VNET) != 0;
		uint32_t total = 0, segs = 1;
		bool bad = k > VIRTIO_NET_TX_CHAIN_MAX || k + 1 > q->size;
		for (uint32_t i = 0; i < k; i++) {
			struct ring_slot *s = ring_slot(r, vn->tx_sub + i);
			if (s->buf_idx >= r->nbufs)
				return -22; /* the user broke the ring ABI */
			if (s->len == 0 || s->len > r->buf_size)
				bad = true;
			total += s->len;
		}
		if (!bad && vnet) {
			uint8_t *h = ring_buf(r, s0->buf_idx);
			if (s0->len < VNET_HDR_LEN + ETH_HDR_LEN ||
			    !(segs = tx_hdr_check(vn, h, total - VNET_HDR_LEN)))
				bad = true;
			else
				h[10] = h[11] = 0; /* num_buffers: 0 on tx */
		}
		if (bad) {
			/* Not sent: its buffers go straight back through tail,
			 * read out first (tail may reach the frame's own slots). */
			uint32_t bufs[VN_SLOTS]; /* k <= head - tx_sub <= num_slots */
			for (uint32_t i = 0; i < k; i++)
				bufs[i] = ring_slot(r, vn->tx_sub + i)->buf_idx;
			vn->tx_sub += k;
			for (uint32_t i = 0; i < k; i++)
				ring_slot(r, tail++)->buf_idx = bufs[i];
			vn->c.tx_vnet_bad++;
			d->stats.tx_drops++;
			continue;
		}
		if (vn->tx.nfree < k + (vnet ? 0 : 1))
			break; /* the device still holds the descriptors */
		tx_post_chain(vn, k, vnet);
		vn->tx_sub += k;
		d->stats.tx_frames++;
		d->stats.tx_bytes += total - (vnet ? VNET_HDR_LEN : 0);
		if (vnet && (ring_buf(r, s0->buf_idx)[0] & VNET_F_NEEDS_CSUM))
			d->stats.tx_csum_offload++;
		if (segs > 1) {
			d->stats.tx_tso_frames++;
			d->stats.tx_tso_segs += segs;
		}
		sent++;
	}
	if (tail != tail0)
		ring_store(&r->tail, tail);
	if (sent) {
		vq_publish(vn, q, old_avail);
		d->stats.tx_syscalls++;
	}
	return sent;
}

static int vn_poll_fd(struct dev *d)
{
	(void)d;
	return -1; /* the interrupt is the notification */
}

/* How long close waits for the device to take what was posted. */
#define VN_CLOSE_TX_WAIT_NS (200 * SK_NS_PER_MS)

static void vn_close(struct dev *d)
{
	struct virtio_net *vn = (struct virtio_net *)d;
	/* The last frames (the FINs, the access log's last batch) were posted
	 * and the doorbell rung by the tx sync before this; a device may take
	 * them later (QEMU sends from a bottom half of its I/O thread), and
	 * the reset below makes it forget every descriptor it has not taken
	 * yet.  On a busy host those frames were lost at every exit: wait
	 * until the device has used every posted chain, for a bounded time
	 * (a device that stopped must not hang the exit). */
	struct virtq *q = &vn->txq;
	sk_time_ns until = plat_now() + VN_CLOSE_TX_WAIT_NS;
	while (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) != q->avail_idx) {
		if (plat_now() >= until)
			break;
		plat_relax();
	}
	vn->regs.t->set_status(&vn->regs, 0); /* reset: the device forgets our memory */
}

static bool vn_irq_arm(struct dev *d)
{
	return virtio_net_irq_arm((struct virtio_net *)d);
}

static void vn_irq_disarm(struct dev *d)
{
	virtio_net_irq_disarm((struct virtio_net *)d);
}

/* With an rx interrupt (MSI-X, or MMIO's line), the loop arms it before halting; without
 * one there is nothing to arm and the platform polls (plat.h). */
static const struct dev_ops virtio_net_ops_irq = {
	.kind = "virtio-net",
	.rx_sync = vn_rx_sync,
	.tx_sync = vn_tx_sync,
	.poll_fd = vn_poll_fd,
	.irq_arm = vn_irq_arm,
	.irq_disarm = vn_irq_disarm,
	.close = vn_close,
};
static const struct dev_ops virtio_net_ops_poll = {
	.kind = "virtio-net",
	.rx_sync = vn_rx_sync,
	.tx_sync = vn_tx_sync,
	.poll_fd = vn_poll_fd,
	.close = vn_close,
};

bool virtio_net_irq_arm(struct virtio_net *vn)
{
	vn->c.irq_arms++;
	vn->armed = true;
	if (vn->event_idx)
		*vn->rxq.used_event = vn->rxq.last_used; /* the next completion */
	else
		vn->rxq.avail->flags = 0;
	/* The store must be visible before we look at used->idx, or a
	 * frame completed in between would raise no interrupt and the loop
	 * would sleep on it (seed 000, 9831f66). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (virtio_net_rx_ready(vn)) {
		vn->c.irq_arm_races++;
		return true;
	}
	return false;
}

void virtio_net_irq_disarm(struct virtio_net *vn)
{
	vn->armed = false;
	if (vn->event_idx)
		*vn->rxq.used_event = (uint16_t)(vn->rxq.last_used - 1);
	else
		vn->rxq.avail->flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
}

static int vq_setup(struct virtio_net *vn, struct virtq *q, uint16_t index, uint16_t msix,
		    uint8_t **cur, uint8_t *end, const char **why)
{
	uint16_t max = vn->regs.t->queue_max(&vn->regs, index);
	if (max < 2) {
		*why = "virtqueue missing";
		return -1;
	}
	uint16_t size = VIRTIO_NET_QUEUE_MAX;
	while (size > max)
		size /= 2;
	q->index = index;
	q->size = size;
	q->desc = carve(cur, end, 16u * size);
	q->avail = carve(cur, end, 6u + 2u * size);
	q->used = carve(cur, end, 6u + 8u * size);
	if (!q->desc || !q->avail || !q->used) {
		*why = "arena too small";
		return -1;
	}
	q->used_event = &q->avail->ring[size];
	q->avail_event = (volatile uint16_t *)&q->used->ring[size];
	q->nfree = 0;
	for (uint16_t c = size / 2; c-- > 0;)
		vq_push_free(q, c);
	if (index % 2 == 0) { /* receiveq N = 2N, transmitq N = 2N + 1 (5.1.2) */
		/* Every rx frame is the chain (2c: header, 2c+1: frame). */
		for (uint16_t c = 0; c < size / 2; c++) {
			q->desc[2 * c].next = (uint16_t)(2 * c + 1);
			q->desc[2 * c].len = VNET_HDR_LEN;
			q->desc[2 * c].addr = phys(vn->rx_hdr + 16u * c);
			q->desc[2 * c].flags = VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE;
			q->desc[2 * c + 1].flags = VIRTQ_DESC_F_WRITE;
			q->desc[2 * c + 1].len = vn->dev.rx->buf_size;
		}
	} else {
		/* tx: descriptors one by one, 0 first */
		vn->tx.nfree = 0;
		for (uint16_t i = size; i-- > 0;)
			vn->tx.free[vn->tx.nfree++] = i;
	}
	/* Polling is the default state: no interrupts until the loop parks;
	 * tx completions are reaped by tx_sync and never interrupt (the tx
	 * queue has no vector either).  used_event 0xffff is one behind the
	 * first entry. */
	q->avail->flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
	*q->used_event = 0xffff;
	return vn->regs.t->queue_setup(&vn->regs, index, size, phys(q->desc), phys(q->avail),
				       phys(q->used), msix, &q->bell, why);
}

/* One queue pair's ring region, headers and virtqueues in its arena. */
static int pair_setup(struct virtio_net *vn, const struct virtio_net_params *p, uint16_t pair,
		      uint8_t **cur, uint8_t *end, const char **why)
{
	size_t rsize = ring_region_size(VN_SLOTS, VN_BUF, 0);
	void *region = carve(cur, end, rsize);
	vn->rx_hdr = carve(cur, end, 16u * VIRTIO_NET_QUEUE_MAX / 2);
	vn->tx_hdr = carve(cur, end, 16);
	if (!region || !vn->rx_hdr || !vn->tx_hdr ||
	    ring_region_init(region, rsize, VN_SLOTS, VN_BUF, 0) < 0) {
		*why = "arena too small";
		return -1;
	}
	bool irq = p->rx_msix != VIRTIO_MSI_NO_VECTOR || p->rx_line_irq;
	vn->dev.ops = irq ? &virtio_net_ops_irq : &virtio_net_ops_poll;
	vn->dev.rx = ring_region_rx(region);
	vn->dev.tx = ring_region_tx(region);
	vn->dev.mtu = 1500;
	size_t i;
	for (i = 0; p->name && p->name[i] && i < sizeof(vn->dev.name) - 1; i++)
		vn->dev.name[i] = p->name[i];
	vn->dev.name[i] = 0;
	if (vq_setup(vn, &vn->rxq, (uint16_t)(2 * pair), p->rx_msix, cur, end, why) < 0 ||
	    vq_setup(vn, &vn->txq, (uint16_t)(2 * pair + 1), VIRTIO_MSI_NO_VECTOR, cur, end, why) < 0)
		return -1;
	vn->tx_sub = ring_load(&vn->dev.tx->head);
	return 0;
}

/* The control virtqueue (5.1.6.5), only for VQ_PAIRS_SET at start: a
 * small queue, one three-descriptor chain (class+command, the u16
 * count, the ack byte the device writes), polled until used. */
struct ctrl_q {
	volatile struct virtq_desc *desc;
	volatile struct virtq_avail *avail;
	volatile struct virtq_used *used;
	struct virtio_doorbell bell;
	volatile uint8_t *buf; /* [0] class, [1] cmd, [2..3] pairs, [4] ack */
	uint16_t size;
};

static int ctrl_setup(struct virtio_net *vn, struct ctrl_q *q, uint16_t index, uint8_t **cur,
		      uint8_t *end, const char **why)
{
	uint16_t max = vn->regs.t->queue_max(&vn->regs, index);
	if (max < 4) {
		*why = "control virtqueue missing";
		return -1;
	}
	uint16_t size = CTRL_QSIZE;
	while (size > max)
		size /= 2;
	q->size = size;
	q->desc = carve(cur, end, 16u * size);
	q->avail = carve(cur, end, 6u + 2u * size);
	q->used = carve(cur, end, 6u + 8u * size);
	q->buf = carve(cur, end, 64);
	if (!q->desc || !q->avail || !q->used || !q->buf) {
		*why = "arena too small";
		return -1;
	}
	q->avail->flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
	return vn->regs.t->queue_setup(&vn->regs, index, size, phys(q->desc), phys(q->avail),
				       phys(q->used), VIRTIO_MSI_NO_VECTOR, &q->bell, why);
}

static int ctrl_pairs_set(struct ctrl_q *q, uint16_t index, uint16_t pairs, const char **why)
{
	q->buf[0] = CTRL_MQ;
	q->buf[1] = CTRL_MQ_VQ_PAIRS_SET;
	q->buf[2] = (uint8_t)pairs;
	q->buf[3] = (uint8_t)(pairs >> 8);
	q->buf[4] = 0xff;
	q->desc[0] = (struct virtq_desc){phys(q->buf), 2, VIRTQ_DESC_F_NEXT, 1};
	q->desc[1] = (struct virtq_desc){phys(q->buf + 2), 2, VIRTQ_DESC_F_NEXT, 2};
	q->desc[2] = (struct virtq_desc){phys(q->buf + 4), 1, VIRTQ_DESC_F_WRITE, 0};
	q->avail->ring[0] = 0;
	__atomic_store_n(&q->avail->idx, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	virtio_ring_doorbell(&q->bell, index);
	/* The device answers at once (QEMU does it in the notify); bounded. */
	for (uint32_t i = 0; __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) != 1; i++) {
		if (i > 100000000u) {
			*why = "no answer to VQ_PAIRS_SET";
			return -1;
		}
		__builtin_ia32_pause();
	}
	if (q->buf[4] != CTRL_OK) {
		*why = "device refused VQ_PAIRS_SET";
		return -1;
	}
	return 0;
}

/* dev.offload from what was negotiated.  TSO needs chains of up to 33
 * descriptors (64 KiB in 2 KiB buffers): not on a tx queue too short for
 * them. */
static void vn_set_offload(struct virtio_net *v)
{
	uint32_t off = 0;
	if (v->features & F_NET_CSUM)
		off |= DEV_OFF_TX_CSUM;
	if (v->txq.size >= 2 * VIRTIO_NET_TX_CHAIN_MAX) {
		if (v->features & F_NET_HOST_TSO4)
			off |= DEV_OFF_TSO4;
		if (v->features & F_NET_HOST_TSO6)
			off |= DEV_OFF_TSO6;
	}
	if (v->features & F_NET_GUEST_CSUM)
		off |= DEV_OFF_RX_CSUM;
	v->dev.offload = off;
	v->dev.tso_max = off & (DEV_OFF_TSO4 | DEV_OFF_TSO6) ? VN_TSO_MAX : 0;
}

int virtio_net_init(struct virtio_net *vn, const struct virtio_net_params *p, const char **why)
{
	unsigned got;
	return virtio_net_init_mq(vn, 1, p, &got, why);
}

int virtio_net_init_mq(struct virtio_net *vns, unsigned n, const struct virtio_net_params *ps,
		       unsigned *got, const char **why)
{
	*got = 0;
	if (n < 1 || n > VIRTIO_NET_PAIRS_MAX) {
		*why = "queue pairs out of range";
		return -1;
	}
	for (unsigned k = 0; k < n; k++)
		sk_memset(&vns[k], 0, sizeof(vns[k]));
	struct virtio_net *vn = &vns[0];
	const struct virtio_net_params *p = &ps[0];
	vn->regs = p->regs;
	const struct virtio_regs *r = &p->regs;
	const struct virtio_transport *t = r->t;
	uint8_t *cur = p->arena, *end = (uint8_t *)p->arena + p->arena_size;

	/* 3.1.1: reset, wait for it, ACKNOWLEDGE, DRIVER. */
	t->set_status(r, 0);
	for (int i = 0; t->status(r) != 0; i++) {
		if (i > 1000000) {
			*why = "device does not reset";
			return -1;
		}
	}
	t->set_status(r, ST_ACKNOWLEDGE);
	t->set_status(r, ST_ACKNOWLEDGE | ST_DRIVER);

	uint64_t offered = t->features(r, 0);
	offered |= (uint64_t)t->features(r, 1) << 32;
	if (!(offered & F_VERSION_1)) {
		*why = "device is not virtio 1.x (VERSION_1 not offered)";
		goto fail;
	}
	/* Keep it to what this driver handles: no merged rx buffers and no
	 * rx segmentation (a 2 KiB buffer holds any 1514-byte frame).  The
	 * offloads the allow mask lets through (offload= on the command line):
	 * CSUM and HOST_TSO4/6 for tx, GUEST_CSUM for rx.  EVENT_IDX unless
	 * refused (see the header).  ACCESS_PLATFORM is accepted when
	 * offered: our addresses are physical either way. */
	uint64_t mine = F_VERSION_1 | F_NET_MAC | F_NET_STATUS | F_ACCESS_PLATFORM;
	if (!p->no_event_idx)
		mine |= F_RING_EVENT_IDX;
	uint32_t allow = p->offload_allow;
	if (allow & (DEV_OFF_TX_CSUM | DEV_OFF_TSO4 | DEV_OFF_TSO6))
		mine |= F_NET_CSUM; /* TSO implies it (dev.h, 5.1.3.1) */
	if (allow & DEV_OFF_TSO4)
		mine |= F_NET_HOST_TSO4;
	if (allow & DEV_OFF_TSO6)
		mine |= F_NET_HOST_TSO6;
	if (allow & DEV_OFF_RX_CSUM)
		mine |= F_NET_GUEST_CSUM;
	/* More than one pair asked for: MQ, and the control queue it needs. */
	if (n > 1 && (offered & F_NET_MQ) && (offered & F_NET_CTRL_VQ))
		mine |= F_NET_MQ | F_NET_CTRL_VQ;
	uint64_t want = offered & mine;
	if (!(want & F_NET_CSUM)) /* a device offering TSO without CSUM: neither */
		want &= ~(F_NET_HOST_TSO4 | F_NET_HOST_TSO6);
	t->set_features(r, 0, (uint32_t)want);
	t->set_features(r, 1, (uint32_t)(want >> 32));
	t->set_status(r, ST_ACKNOWLEDGE | ST_DRIVER | ST_FEATURES_OK);
	if (!(t->status(r) & ST_FEATURES_OK)) {
		*why = "device refused our features";
		goto fail;
	}
	/* How many pairs: what was asked, at most what the device has. */
	unsigned pairs = 1;
	if (want & F_NET_MQ) {
		uint16_t max = rd16(p->regs.device, NET_CFG_MAX_PAIRS);
		pairs = max < n ? max : n;
		if (pairs < 1)
			pairs = 1;
	}
	t->config_irq_off(r); /* no config-change interrupts */
	for (unsigned k = 0; k < pairs; k++) {
		struct virtio_net *v = &vns[k];
		v->regs = p->regs;
		v->features = want;
		v->event_idx = (want & F_RING_EVENT_IDX) != 0;
		uint8_t *c0 = k ? ps[k].arena : NULL;
		uint8_t **c = k ? &c0 : &cur;
		uint8_t *e = k ? (uint8_t *)ps[k].arena + ps[k].arena_size : end;
		if (pair_setup(v, &ps[k], (uint16_t)k, c, e, why) < 0)
			goto fail;
		vn_set_offload(v);
	}
	struct ctrl_q ctrl = {0};
	uint16_t ctrl_index = 0;
	if (want & F_NET_MQ) {
		ctrl_index = (uint16_t)(2 * rd16(p->regs.device, NET_CFG_MAX_PAIRS));
		if (ctrl_setup(vn, &ctrl, ctrl_index, &cur, end, why) < 0)
			goto fail;
	}

	if (want & F_NET_MAC) {
		/* Read until the config generation is stable (4.1.4.3.1). */
		uint32_t gen;
		do {
			gen = t->config_gen(r);
			for (int k = 0; k < SK_MAC_LEN; k++)
				vn->dev.mac[k] = rd8(p->regs.device, (unsigned)k);
		} while (gen != t->config_gen(r));
		vn->have_mac = true;
	}

	for (unsigned k = 1; k < pairs; k++) {
		sk_memcpy(vns[k].dev.mac, vn->dev.mac, SK_MAC_LEN);
		vns[k].have_mac = vn->have_mac;
	}

	t->set_status(r, ST_ACKNOWLEDGE | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);
	for (unsigned k = 0; k < pairs; k++) {
		if (vn_rx_sync(&vns[k].dev) < 0) { /* pre-post every rx buffer */
			*why = "rx ring invalid";
			goto fail;
		}
		vns[k].dev.stats.rx_syncs = 0;
	}
	/* 5.1.6.5.5: until VQ_PAIRS_SET the device uses pair 0 alone. */
	if ((want & F_NET_MQ) && ctrl_pairs_set(&ctrl, ctrl_index, (uint16_t)pairs, why) < 0)
		goto fail;
	*got = pairs;
	return 0;
fail:
	t->set_status(r, (uint8_t)(t->status(r) | ST_FAILED));
	return -1;
}
