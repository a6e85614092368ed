/* ring.h — the packet ring ABI every skiff device speaks (netmap-style).
 *
 *   region ──► [ ring_region header | rx ring | tx ring | buffer pool ]
 *   ring   ──► header, then num_slots slots
 *   slot   ──► { buf_idx, len, flags }      buffer = pool base + buf_idx * buf_size
 *
 * Pointers never cross the ABI: a ring finds its buffers through buf_ofs, an
 * offset from the ring's own address, so the same bytes work in one process,
 * in memory shared between processes (the switch) and between a guest and
 * its host.  RING_VERSION changes whenever this layout does.
 *
 * Indices are free-running 32-bit counters; a slot is slot[i & (num_slots-1)]
 * and num_slots is a power of two, so head == tail means "none" and
 * tail - head == num_slots means "all", without a reserved slot.
 *
 * DATA OWNERSHIP
 *   (u) fields are written only by the user of the ring (the stack);
 *   (k) fields only by the device side (a driver, the switch, the host).
 *   Slots [head, tail) and their buffers belong to the user; every other slot
 *   belongs to the device.
 *   rx: the device fills slots and advances tail; the user reads slots from
 *       head, then advances head to give them back.
 *   tx: [head, tail) are free slots; the user fills them from head and
 *       advances head to hand them over; the device sends them and advances
 *       tail as they complete.  Initially tail - head == num_slots.
 *   A user may swap buf_idx between slots it owns (zero-copy forwarding) if it
 *   sets RING_SLOT_BUF_CHANGED, and must only store indices < nbufs.
 *   cur (u) is the wake-up point: a sleeping user wants a notification once
 *   tail passes cur.
 * Index updates are published with release stores and read with acquire
 * loads (ring_load/ring_store), which is all the ordering two processes need.
 */
#ifndef RING_H
#define RING_H

#include "../base/sk.h"

#define RING_MAGIC 0x736b7267u /* "skrg" */
#define RING_VERSION 2u /* 2: offload flags and struct ring_vnet */
#define RING_BUF_SIZE_DEFAULT 2048u
#define RING_SLOTS_DEFAULT 256u

#define RING_SLOT_BUF_CHANGED 0x0001u /* (u) buf_idx was swapped by the user */
/* Offload flags (dev.h's dev->offload says which a device takes; a device
 * that advertises none never sees them and never sets them):
 *   MORE     tx (u): the frame goes on in the next slot.  A frame is the
 *            bytes of its slots in order; only the last slot lacks MORE.
 *            Used only for frames larger than one buffer (DEV_OFF_TSO*).
 *   VNET     tx (u), first slot of a frame: the buffer starts with a struct
 *            ring_vnet, and the Ethernet frame follows it; len counts both.
 *   CSUM_OK  rx (k): do not verify this frame's TCP/UDP checksum: the
 *            device verified it, or the frame comes from the sending host's
 *            own kernel, which left it unfinished (a partial checksum, as
 *            virtio's NEEDS_CSUM and AF_PACKET's TP_STATUS_CSUMNOTREADY say).
 * An rx frame is always whole in one slot: a device that receives larger
 * frames (GRO, a peer's TSO) cuts them into MTU-sized frames itself
 * (wire/vnet.h), so the stack's receive path reads contiguous bytes. */
#define RING_SLOT_MORE 0x0002u
#define RING_SLOT_VNET 0x0004u
#define RING_SLOT_CSUM_OK 0x0008u

/* The offload request in front of a VNET frame: the layout and values of
 * virtio 1.2's struct virtio_net_hdr (5.1.6), little-endian, so the guest
 * driver and AF_PACKET / TAP (struct virtio_net_hdr, the first 10 bytes)
 * take it as it is.  Offsets count from the Ethernet header, not from this
 * struct. */
#define RING_VNET_F_NEEDS_CSUM 1u /* finish the checksum: sum from csum_start to the
				   * end, store at csum_start + csum_offset; the
				   * field holds the pseudo-header sum already */
#define RING_VNET_GSO_NONE 0u
#define RING_VNET_GSO_TCPV4 1u
#define RING_VNET_GSO_TCPV6 4u
struct ring_vnet {
	uint8_t flags;        /* RING_VNET_F_* */
	uint8_t gso_type;     /* RING_VNET_GSO_*: cut into segments of gso_size */
	uint16_t hdr_len;     /* Ethernet + IP + TCP header bytes */
	uint16_t gso_size;    /* TCP payload bytes per segment (the MSS) */
	uint16_t csum_start;  /* where the checksummed bytes begin */
	uint16_t csum_offset; /* the checksum field, from csum_start */
	uint16_t num_buffers; /* 0 on the ring (virtio's mergeable rx buffers) */
};
_Static_assert(sizeof(struct ring_vnet) == 12, "virtio_net_hdr_v1 is 12 bytes");

struct ring_slot {
	uint32_t buf_idx; /* buffer index in the region's pool */
	uint16_t len;     /* frame bytes in the buffer */
	uint16_t flags;   /* RING_SLOT_* */
};

struct ring {
	/* constant after ring_region_init */
	uint32_t magic;
	uint32_t version;
	uint32_t num_slots; /* power of two */
	uint32_t buf_size;  /* bytes per buffer */
	uint32_t nbufs;     /* buffers in the pool; every buf_idx < nbufs */
	uint32_t reserved;
	int64_t buf_ofs;    /* pool base minus the address of this ring */

	/* (u) user side, on its own cache line */
	_Alignas(64) uint32_t head;
	uint32_t cur;

	/* (k) device side, on its own cache line */
	_Alignas(64) uint32_t tail;
	uint32_t kflags;

	_Alignas(64) struct ring_slot slot[];
};

/* The header at the start of a region. Offsets are from the region base. */
struct ring_region {
	uint32_t magic;
	uint32_t version;
	uint64_t size;       /* whole region bytes */
	uint64_t rx_ofs;     /* struct ring for frames coming in to the user */
	uint64_t tx_ofs;     /* struct ring for frames going out */
	uint64_t pool_ofs;   /* buffer 0 */
	uint32_t nbufs;      /* 2 * num_slots for the rings + extra_bufs */
	uint32_t buf_size;
	uint32_t num_slots;
	uint32_t extra_first; /* first buffer index not attached to a slot */
	uint32_t extra_count; /* buffers from extra_first on: free for the user */
	uint32_t reserved;
};

/* Bytes a region needs. num_slots must be a power of two (>= 2), buf_size a
 * multiple of 64.  Returns 0 for invalid parameters. */
size_t ring_region_size(uint32_t num_slots, uint32_t buf_size, uint32_t extra_bufs);

/* Lay out a region in mem (size bytes, 64-byte aligned): both rings get one
 * buffer per slot; rx starts empty (head == tail == 0), tx starts all free
 * (head 0, tail num_slots).  Returns 0, or -1 if it does not fit. */
int ring_region_init(void *mem, size_t size, uint32_t num_slots, uint32_t buf_size,
		     uint32_t extra_bufs);

/* Validate a region someone else laid out (shared memory, guest memory):
 * magic, version, every offset and size inside `size`, num_slots a power of
 * two, every slot's buf_idx < nbufs.  Returns 0 or -1. */
int ring_region_check(const void *mem, size_t size);

static inline struct ring *ring_region_rx(void *mem)
{
	return (struct ring *)((uint8_t *)mem + ((struct ring_region *)mem)->rx_ofs);
}
static inline struct ring *ring_region_tx(void *mem)
{
	return (struct ring *)((uint8_t *)mem + ((struct ring_region *)mem)->tx_ofs);
}

static inline uint32_t ring_load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline void ring_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline struct ring_slot *ring_slot(struct ring *r, uint32_t i)
{
	return &r->slot[i & (r->num_slots - 1)];
}

/* The buffer of index idx; idx must be < r->nbufs (checked by the caller
 * where idx comes from an untrusted side). */
static inline uint8_t *ring_buf(struct ring *r, uint32_t idx)
{
	return (uint8_t *)r + r->buf_ofs + (int64_t)idx * r->buf_size;
}

/* Slots the user owns now: frames to read (rx) or free slots (tx). */
static inline uint32_t ring_avail(struct ring *r)
{
	return ring_load(&r->tail) - r->head;
}

#endif
