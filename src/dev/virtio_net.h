/* virtio_net.h — virtio-net (virtio 1.x, split virtqueues) as a skiff
 * device: it presents the same ring ABI (ring.h) and struct dev_ops
 * (dev.h) as the hosted devices, so the stack cannot tell it from tap.
 *
 * Freestanding: no OS headers.  The platform finds the device (PCI
 * capabilities, BAR mapping, MSI-X; or a virtio_mmio.device= window) and
 * hands over its registers with the transport's operations
 * (virtio_regs.h: modern PCI or MMIO) plus an arena of identity-mapped memory (guest
 * physical == virtual, as in the unikernel); this file does the rest.
 *
 * Data path (seed 000, 9831f66):
 *   - the ring region lives in the arena; every rx slot the device side
 *     owns is pre-posted to the rx virtqueue (up to queue_size/2: each
 *     frame is a two-descriptor chain, the 12-byte virtio-net header in a
 *     side array and the frame in its ring buffer, so no copy on rx);
 *   - tx_sync posts every frame the user handed over as one chain: a
 *     shared zeroed header, then the frame's buffer; or, for a frame with
 *     an offload header (ring.h RING_SLOT_VNET), its buffers alone, the
 *     header inline at the start of the first (a TSO frame of several
 *     slots, RING_SLOT_MORE, is several descriptors, never a copy); it
 *     notifies once for the batch, and only when the device has not said
 *     it is polling;
 *   - the device's interrupts stay suppressed while the stack polls;
 *     virtio_net_irq_arm() lifts that just before the loop parks and
 *     reports whether frames slipped in meanwhile.
 *
 * Suppression both ways uses VIRTIO_F_EVENT_IDX (virtio 1.2, 2.7.7 and
 * 2.7.10) when the device offers it, else the flags:
 *   interrupts   polling: used_event stays one behind what we consumed,
 *                so no completion crosses it; armed: used_event = the
 *                next entry we will read (with flags: NO_INTERRUPT set
 *                while polling, cleared when armed);
 *   doorbells    a batch rings only if the device's avail_event falls in
 *                the entries it publishes, i.e. the device asked to hear
 *                about one of them (with flags: unless NO_NOTIFY).
 * Why both: the flags tell the device "never" or "always"; the indexes
 * say "from this entry on", so a device that is still working through a
 * batch is not kicked again, and an interrupt is raised once for the
 * first frame after the park, not for whatever completes while the loop
 * is waking.  `no-event-idx` (the guest word) keeps the flags, for A/B
 * runs.
 *
 * Offloads (virtio 1.2, 5.1.3 and 5.1.6), those params.offload_allow lets
 * through (`offload=off`: none) and the device offers, told to the stack
 * in dev.offload:
 *   CSUM            DEV_OFF_TX_CSUM  the device finishes partial checksums
 *   HOST_TSO4/6     DEV_OFF_TSO4/6   it cuts TCP frames up to tso_max
 *                                    (needs CSUM, 5.1.3.1)
 *   GUEST_CSUM      DEV_OFF_RX_CSUM  rx DATA_VALID / NEEDS_CSUM frames
 *                                    become RING_SLOT_CSUM_OK
 * Every tx request is checked against what was negotiated and against
 * the frame (tx_vnet_bad), every rx header against the frame (rx_vnet_bad).
 * Not negotiated: GUEST_TSO4/6 and MRG_RXBUF (a super-frame in would span
 * rx buffers; the stack takes only whole MTU-sized frames, ring.h), ECN.
 */
#ifndef DEV_VIRTIO_NET_H
#define DEV_VIRTIO_NET_H

#include "../base/sk.h"
#include "virtio_regs.h"
#include "dev.h"

#define VIRTIO_NET_QUEUE_MAX 256u /* descriptors per virtqueue we use at most */


struct virtio_net_params {
	struct virtio_regs regs;
	void *arena;           /* identity-mapped, 4096-aligned */
	size_t arena_size;     /* >= virtio_net_arena_size() */
	uint16_t rx_msix;      /* MSI-X table entry for the rx queue, or
				* VIRTIO_MSI_NO_VECTOR (always on MMIO) */
	bool rx_line_irq;      /* MMIO: the platform routed the device's line
				* interrupt (and acks it, virtio_transport.irq_ack):
				* arm it at park as MSI-X; neither: the loop polls */
	bool no_event_idx;     /* refuse VIRTIO_F_EVENT_IDX even if offered */
	uint32_t offload_allow; /* DEV_OFF_* the driver may negotiate (the boot
				 * word offload=); 0: none, frames as before */
	const char *name;      /* for logs, e.g. "virtio-net@00:03.0" */
};

/* Queue pairs virtio_net_init_mq drives at most (one per vCPU). */
#define VIRTIO_NET_PAIRS_MAX 16u

/* Split virtqueue layouts (virtio 1.2, 2.7): little-endian, as x86 is. */
struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;        /* VIRTQ_DESC_F_* */
	uint16_t next;
};
struct virtq_avail {
	uint16_t flags;        /* VIRTQ_AVAIL_F_NO_INTERRUPT */
	uint16_t idx;
	uint16_t ring[];       /* [size] entries, then le16 used_event (EVENT_IDX) */
};
struct virtq_used_elem {
	uint32_t id;           /* head descriptor of the chain */
	uint32_t len;          /* bytes the device wrote */
};
struct virtq_used {
	uint16_t flags;        /* VIRTQ_USED_F_NO_NOTIFY */
	uint16_t idx;
	struct virtq_used_elem ring[]; /* [size], then le16 avail_event (EVENT_IDX) */
};

struct virtq {
	uint16_t index;        /* queue number: 0 rx, 1 tx */
	uint16_t size;         /* descriptors, power of two */
	volatile struct virtq_desc *desc;
	volatile struct virtq_avail *avail;
	volatile struct virtq_used *used;
	struct virtio_doorbell bell; /* where a kick goes (virtio_regs.h) */
	volatile uint16_t *used_event;  /* in the avail ring, after ring[size] */
	volatile uint16_t *avail_event; /* in the used ring, after ring[size] */
	uint16_t avail_idx;    /* next avail ring entry we write */
	uint16_t last_used;    /* next used ring entry we read */
	uint16_t nfree;        /* chains not posted */
	uint16_t free[VIRTIO_NET_QUEUE_MAX / 2];
	uint32_t chain_buf[VIRTIO_NET_QUEUE_MAX / 2]; /* buffer index a posted chain holds */
	uint8_t busy[VIRTIO_NET_QUEUE_MAX / 2];
};

/* tx chains are of any length (a frame of several ring slots, ring.h's
 * MORE), so tx descriptors are handed out one by one; rx keeps fixed
 * pairs.  Our own copy of each chain's links: the descriptor table is
 * shared with the device and nothing read back from it is trusted. */
#define VN_TX_NO_BUF 0xffffffffu
#define VIRTIO_NET_TX_CHAIN_MAX 48u /* descriptors per tx chain (a 64 KiB TSO
				     * frame takes 33 of 2 KiB) */
struct virtq_tx {
	uint16_t nfree;                         /* descriptors not posted */
	uint16_t free[VIRTIO_NET_QUEUE_MAX];
	uint16_t next[VIRTIO_NET_QUEUE_MAX];    /* the link we wrote */
	uint16_t ndesc[VIRTIO_NET_QUEUE_MAX];   /* at a chain's head: its length */
	uint32_t buf[VIRTIO_NET_QUEUE_MAX];     /* ring buffer a descriptor holds,
						 * or VN_TX_NO_BUF (the zeroed header) */
	uint8_t busy[VIRTIO_NET_QUEUE_MAX];     /* head of a posted chain */
};

struct virtio_net_counters {
	uint64_t notifies;     /* doorbell writes (the MMIO exit a batch pays once) */
	uint64_t notify_skipped; /* device said it needs no kick (NO_NOTIFY, or
				  * avail_event outside the batch) */
	uint64_t irq_arms;     /* parks that enabled the rx interrupt */
	uint64_t irq_arm_races; /* frames found right after arming: no halt */
	uint64_t rx_bad_len;   /* completions shorter than a header + Ethernet */
	uint64_t bad_used;     /* used entries naming a chain we did not post */
	uint64_t tx_vnet_bad;  /* tx frames refused: offload header asking for a
				* feature not negotiated, or not inside the frame;
				* a frame of too many slots or a 0-length slot */
	uint64_t tx_chain_descs; /* descriptors posted for tx (frames: dev.stats) */
};

struct virtio_net {
	struct dev dev;        /* first: dev_ops callbacks cast back */
	struct virtio_regs regs;
	struct virtq rxq, txq; /* txq's free/chain_buf/busy unused: see tx */
	struct virtq_tx tx;
	uint8_t *rx_hdr;       /* 16 bytes per rx chain; the device writes 12 */
	uint8_t *tx_hdr;       /* one zeroed header every tx chain shares */
	uint32_t rx_post;      /* rx slots [tail, rx_post) are posted */
	uint32_t tx_sub;       /* tx slots [tail - num_slots, tx_sub) are posted */
	uint64_t features;     /* negotiated */
	bool event_idx;        /* VIRTIO_F_EVENT_IDX negotiated */
	bool armed;            /* between irq_arm and irq_disarm */
	bool have_mac;         /* the device supplied dev.mac */
	struct virtio_net_counters c;
};

/* Arena bytes the driver needs per queue pair (ring region, both
 * virtqueues, headers), and for pair 0 the control queue too. */
size_t virtio_net_arena_size(void);

/* Reset, negotiate (VERSION_1 required; MAC, STATUS when offered), set up
 * both queues, pre-post rx, DRIVER_OK.  Returns 0, or -1 with *why set to
 * a static message. */
int virtio_net_init(struct virtio_net *vn, const struct virtio_net_params *p, const char **why);

/* The same with up to n queue pairs (virtio 1.2, 5.1.6.5.5): when n > 1 and
 * the device offers VIRTIO_NET_F_MQ (with CTRL_VQ), pairs 0..got-1 (got =
 * min(n, max_virtqueue_pairs)) are set up, each in vns[k] as a device of
 * its own (its ring region and virtqueues in ps[k].arena, its rx interrupt
 * on MSI-X entry ps[k].rx_msix), and VQ_PAIRS_SET tells the device to
 * spread flows over them.  Without MQ, got = 1 and only vns[0] is used.
 * The device-wide parts (reset, features, MAC, the control queue) come
 * from ps[0].  Every vns[k] is then driven by one CPU alone. */
int virtio_net_init_mq(struct virtio_net *vns, unsigned n, const struct virtio_net_params *ps,
		       unsigned *got, const char **why);

/* Frames completed on rx and not yet taken by rx_sync: one load. */
static inline bool virtio_net_rx_ready(const struct virtio_net *vn)
{
	return vn->rxq.used->idx != vn->rxq.last_used;
}

/* Allow the rx interrupt, then look once more: true if frames are already
 * waiting (do not halt: they raised no interrupt). */
bool virtio_net_irq_arm(struct virtio_net *vn);
/* Back to polling: the device need not interrupt. */
void virtio_net_irq_disarm(struct virtio_net *vn);

#endif
