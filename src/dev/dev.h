/* dev.h — one ops struct for every device (tap, packet, xdp, switch port,
 * virtio-net in the unikernel, the pcap wrapper).
 *
 * The stack talks to a device through its two rings (ring.h) and two syncs:
 *   1. rx_sync(); read frames in rx [head, tail); advance rx->head.
 *   2. fill tx slots from tx->head while ring_avail(tx); advance tx->head;
 *      tx_sync() once for the whole batch.
 * Syncs never block.  When a sync finds nothing to do it should cost no
 * syscall.  A device that needs a wake-up source exposes a pollable fd.
 *
 * This header is freestanding (no OS types) so the unikernel's virtio-net
 * driver implements the same struct.  Opening devices by name is hosted
 * only: see dev_open.h.
 */
#ifndef DEV_H
#define DEV_H

#include "../base/sk.h"
#include "../ring/ring.h"

struct dev;

struct dev_stats {
	uint64_t rx_frames, rx_bytes;
	uint64_t rx_drops;   /* frames the device lost: ring full, truncated */
	uint64_t rx_syncs;   /* rx_sync calls */
	uint64_t rx_syscalls;
	uint64_t tx_frames, tx_bytes;
	uint64_t tx_drops;   /* frames handed over but not sent */
	uint64_t tx_syncs;
	uint64_t tx_syscalls;
	/* offloads (ring.h's offload flags; each is 0 on a device without them) */
	uint64_t rx_csum_ok;     /* frames marked RING_SLOT_CSUM_OK */
	uint64_t rx_gso_frames;  /* super-frames (GRO, a peer's TSO) taken and cut */
	uint64_t rx_gso_segs;    /* the MTU-sized frames they were cut into */
	uint64_t rx_vnet_bad;    /* frames whose offload metadata lied: dropped */
	uint64_t tx_csum_offload;/* frames sent with the checksum left to the device */
	uint64_t tx_tso_frames;  /* TSO frames sent (each larger than one segment) */
	uint64_t tx_tso_segs;    /* the segments those frames stand for */
};

/* What a device does for the stack (struct dev.offload). */
#define DEV_OFF_TX_CSUM 0x1u /* takes RING_VNET_F_NEEDS_CSUM frames */
#define DEV_OFF_TSO4 0x2u    /* takes RING_VNET_GSO_TCPV4 frames up to tso_max */
#define DEV_OFF_TSO6 0x4u    /* takes RING_VNET_GSO_TCPV6 frames up to tso_max */
#define DEV_OFF_RX_CSUM 0x8u /* may mark rx frames RING_SLOT_CSUM_OK */
#define DEV_OFF_RX_GSO 0x10u /* takes super-frames in and cuts them (counted) */
#define DEV_OFF_ALL 0x1fu

struct dev_ops {
	const char *kind; /* "tap", "packet", "xdp", ... */
	/* Take back rx slots the user released, then move every frame that is
	 * ready into free rx slots (advancing rx->tail).  Returns the number of
	 * new frames, or a negative errno-style code on a fatal device error. */
	int (*rx_sync)(struct dev *d);
	/* Send tx slots handed over since the last call (up to tx->head) and
	 * advance tx->tail over what completed.  Returns frames sent or < 0. */
	int (*tx_sync)(struct dev *d);
	/* A file descriptor that polls readable when rx frames are ready, or -1
	 * (unikernel: the interrupt is the notification).  Asked for right
	 * before every park: a device may arm its wake-up point here. */
	int (*poll_fd)(struct dev *d);
	/* Optional, for a device whose notification is an interrupt (plat.h's
	 * struct plat_wake): irq_arm allows it and looks once more, true if
	 * frames are already waiting (then the loop does not halt); irq_disarm
	 * goes back to polling.  NULL: no interrupt (an fd, or plain polling). */
	bool (*irq_arm)(struct dev *d);
	void (*irq_disarm)(struct dev *d);
	/* Release everything; d is invalid afterwards. */
	void (*close)(struct dev *d);
	/* Optional: frames the kernel or the host dropped before they reached
	 * the rx ring, accumulated since open.  Costs a syscall, so it is read
	 * only when the counters are printed, never on the fast path. */
	uint64_t (*lower_drops)(struct dev *d);
};

struct dev {
	const struct dev_ops *ops;
	struct ring *rx, *tx;      /* hot path: the stack uses these directly */
	uint8_t mac[SK_MAC_LEN];   /* the MAC the stack uses on this device */
	uint16_t mtu;              /* IP MTU, 1500 unless the device says less */
	struct dev_stats stats;
	char name[64];             /* the spec it was opened with, for logs */
	/* The device hands this opening (queue q of n, dev_open.h) exactly the
	 * frames with flow_hash_worker(flow_hash_frame(f), n) == q
	 * (wire/flow_hash.h): true for one queue, for packet's fanout, a switch
	 * port (the switch hashes) and a TAP whose steering program loaded; false where the kernel or the NIC
	 * picks (xdp, a TAP without the program).  Only when true may a worker
	 * pick source ports by the hash (tcp_config.steer_workers) and expect
	 * the answers back. */
	bool flow_steered;
	/* DEV_OFF_*: fixed at open, after negotiation with the kernel or the
	 * host and the user's --offload choice.  TSO implies TX_CSUM. */
	uint32_t offload;
	/* With DEV_OFF_TSO*: the largest TSO frame, Ethernet header and all
	 * (without the ring_vnet), at most 65535 + 14. */
	uint32_t tso_max;
};

static inline int dev_rx_sync(struct dev *d) { return d->ops->rx_sync(d); }
static inline int dev_tx_sync(struct dev *d) { return d->ops->tx_sync(d); }
static inline int dev_poll_fd(struct dev *d) { return d->ops->poll_fd(d); }
static inline void dev_close(struct dev *d) { d->ops->close(d); }

#endif
