/* dev_vnet.h — the offload paths tap: and packet: share (Linux only).
 *
 * Both get a virtio_net_hdr from the kernel in front of each rx frame and
 * give it one in front of each tx frame (tap: IFF_VNET_HDR, 12 bytes;
 * packet: PACKET_VNET_HDR, 10).  This file holds what is the same:
 *
 * rx  dev_vnet_rx takes one frame and its header, checks the header with
 *     wire/vnet.h and puts the frame into the rx ring: a plain frame in one
 *     slot (RING_SLOT_CSUM_OK when the header vouches for its checksum and
 *     the device may say so, DEV_OFF_RX_CSUM; without it an unfinished
 *     checksum is finished here in software), a
 *     super-frame cut into segments, one slot each.  When the ring has fewer
 *     free slots than segments, the rest wait in the cutter's scratch buffer
 *     and dev_vnet_drain puts them in on the next rx_sync, before the device
 *     reads anything new (so frames keep their order).
 * tx  dev_vnet_tx_frame gathers the frame that starts at a tx slot (its
 *     ring_vnet or a zeroed header first, then the slots joined by
 *     RING_SLOT_MORE) into an iovec, refusing a malformed chain without
 *     reading past it; dev_vnet_tx_count counts what was sent.
 */
#ifndef DEV_VNET_H
#define DEV_VNET_H

#include <sys/uio.h>

#include "dev.h"
#include "wire/vnet.h"

/* A super-frame: 64 KiB of IP datagram, its Ethernet header and a tag, and
 * room for a read to come back longer than that (then it is dropped). */
#define DEV_VNET_SCRATCH (65536u + 256u)
/* The iovecs of one tx frame: the header (two for packet's 10 bytes out of
 * a 12-byte ring_vnet), then one per slot; tso_max / 2048 slots at most. */
#define DEV_VNET_TX_IOV 40

struct dev_cut {
	uint8_t *buf;          /* DEV_VNET_SCRATCH bytes */
	struct vnet_frame f;   /* the super-frame in buf, when pending */
	uint32_t next;         /* its next segment to deliver */
	bool pending;
};

int dev_cut_init(struct dev_cut *c);
void dev_cut_free(struct dev_cut *c);

/* One received frame (len bytes at p, which may be c->buf, or the buffer
 * of rx slot *tail) with its header h (NULL: no header, as without
 * offloads).  Delivers into rx slots from *tail while *tail - head <
 * num_slots, advancing *tail; counts rx_frames/bytes, rx_csum_ok,
 * rx_gso_*, rx_vnet_bad and rx_drops.  Returns -EINVAL if a slot holds a
 * buffer index that is not ours, else 0. */
int dev_vnet_rx(struct dev *d, struct dev_cut *c, const struct vnet_hdr *h, const uint8_t *p,
		size_t len, uint32_t *tail, uint32_t head);
/* Deliver what is pending; true when nothing is left. */
bool dev_vnet_drain(struct dev *d, struct dev_cut *c, uint32_t *tail, uint32_t head, int *rc);

struct dev_txf {
	struct iovec iov[DEV_VNET_TX_IOV];
	int niov;
	size_t bytes;        /* of the whole iovec, header included */
	size_t frame_len;    /* the Ethernet frame alone */
	struct vnet_hdr h;   /* the header sent */
	bool ok;             /* false: drop it (counted by the caller) */
};

/* The frame whose first slot is tx slot i (i != head).  vhlen: the
 * header bytes the kernel wants in front (VNET_HLEN, VNET_HLEN_LEGACY, or
 * 0 when the device runs without offloads: then VNET and MORE are
 * malformed).  Returns the slots the frame took (>= 1; the caller moves on
 * by that many whether ok or not). */
uint32_t dev_vnet_tx_frame(struct dev *d, uint32_t i, uint32_t head, size_t vhlen,
			   struct dev_txf *t);
/* Count a frame the kernel took: tx_frames, tx_bytes, and the offloads. */
void dev_vnet_tx_count(struct dev *d, const struct dev_txf *t);

#endif
