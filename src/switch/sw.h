/* sw.h — the switch engine: ports over shared ring regions, a learning
 * table, and sender-driven forwarding in three phases (after VALE).
 *
 * Freestanding like the core: sk.h, ring.h, no OS calls, no clock (`now`
 * comes in), no allocation.  The hosted `skiff switch` (src/cmd/switch.c)
 * owns the memory, sockets and eventfds; it hands each port's region to
 * sw_port_attach and calls sw_forward(port) for every port with frames.
 *
 * sw_forward(src) moves one bounded batch from src's tx ring:
 *   1. fetch: snapshot up to SW_BATCH slots [tail - num_slots, head),
 *      validate each (buf_idx, len), prefetch the frame;
 *   2. destinations: learn each source MAC, look up each destination MAC;
 *      multicast, broadcast and unknown unicast flood to every other
 *      attached port; a destination on the sender's own port is dropped;
 *   3. forward: per destination port, copy its frames (in batch order)
 *      into free rx slots and publish them with one tail store, one fence
 *      and at most one kick.  A full ring drops the rest, counted against
 *      the destination port; the sender never waits.
 * The copies run in the sender's sw_forward call: the sender pays for its
 * own traffic (VALE's rule), and a slow receiver only loses frames.
 *
 * Queues: a port has 1..SW_QUEUES_MAX ring pairs ("queues"), one region
 * each, for a host whose share-nothing workers each own one (docs/smp.md).
 * sw_forward(port) takes a batch from every queue's tx ring in turn; a frame
 * for a port of N > 1 queues goes to queue flow_hash_worker(flow_hash_frame
 * (frame), N) (wire/flow_hash.h, the hash every device and the TCP engine
 * use), so a flow always reaches the worker that holds it; a frame without
 * ports to hash (ARP) is queue 0's.  Every queue has its own tails, slots
 * checks and wake-up point.  A port of one queue takes exactly the path it
 * took before queues existed: no hash, no per-queue loop in delivery.
 *
 * Trust: everything in a region but the switch's own private copies is
 * written by a process that may be hostile or dead.  The engine reads each
 * head and slot once, checks it, and never reads back a ring constant or a
 * (k) index (see ring/swport.h).  A port whose head is out of range is counted
 * (bad_index) and skipped; its frames are not forwarded.
 */
#ifndef SWITCH_SW_H
#define SWITCH_SW_H

#include "../base/sk.h"
#include "../ring/ring.h"
#include "swtable.h"

#define SW_PORTS_MAX 64u  /* one bit each in a uint64_t mask */
#define SW_BATCH 512u     /* frames per sw_forward: bounds the latency a busy
			   * sender adds to the others */
#define SW_MIN_FRAME 14u  /* an Ethernet header */
#define SW_QUEUES_MAX 8u  /* ring pairs per port (workers of one host) */

struct sw_port_stats {
	/* frames the port sent (taken from its tx ring) */
	uint64_t rx_frames, rx_bytes;
	/* frames delivered to the port (put in its rx ring) */
	uint64_t tx_frames, tx_bytes;
	uint64_t flooded;        /* frames from this port that were flooded */
	uint64_t drop_full;      /* to this port: its rx ring was full */
	uint64_t drop_bad_slot;  /* from this port: buf_idx >= nbufs or len > buf_size */
	uint64_t drop_runt;      /* from this port: shorter than an Ethernet header */
	uint64_t drop_same_port; /* from this port: destination learned on it */
	uint64_t drop_bad_rx;    /* to this port: its rx slot held a bad buf_idx */
	uint64_t bad_index;      /* a head out of range (either ring) */
	uint64_t kicks;          /* wake-ups sent to the port's process */
	uint64_t drop_no_queue;  /* to this port: the flow's queue is not attached */
	uint64_t attaches;       /* queue attachments */
};

/* One ring pair of a port: one attachment (one region). */
struct sw_queue {
	/* Private copies, set at attach and never read back from the region. */
	struct ring *rx, *tx;   /* in the region; only head, cur, slots read */
	uint8_t *pool;          /* buffer 0 */
	uint32_t num_slots, nbufs, buf_size;
	uint32_t rx_tail;       /* the switch's rx tail (k) */
	uint32_t tx_tail;       /* the switch's tx tail (k) */
	/* Per queue, kept only on ports of more than one queue (the port's
	 * totals are in sw_port.st either way); reset at the queue's attach. */
	uint64_t taken, delivered, kicks;
};

struct sw_port {
	bool attached;          /* at least one queue attached */
	uint8_t nq;             /* queues the port has (1..SW_QUEUES_MAX) while attached */
	uint8_t qmask;          /* bit i: queue i attached */
	uint8_t nq_max;         /* the most queues it ever had (for the stats) */
	struct sw_queue q[SW_QUEUES_MAX];
	struct sw_port_stats st;
};

/* One frame of the batch being forwarded. */
struct sw_frame {
	const uint8_t *buf;
	uint16_t len;
	uint16_t dst;  /* port, SW_DST_FLOOD or SW_DST_DROP */
	uint16_t next; /* next frame index in the same destination list */
};
#define SW_DST_FLOOD 0xffffu
#define SW_DST_DROP 0xfffeu
#define SW_LIST_END 0xffffu

struct sw;
/* Wake the process on a port's queue (the hosted side writes its eventfd). */
typedef void (*sw_kick_fn)(void *ctx, unsigned port, unsigned queue);
/* A frame taken from (to_port false) or delivered to (true) the captured
 * port, for --pcap. */
typedef void (*sw_capture_fn)(void *ctx, unsigned port, bool to_port, const uint8_t *frame,
			      size_t len);

struct sw {
	unsigned nports;
	uint64_t attached;      /* bit p: port p attached */
	struct sw_port port[SW_PORTS_MAX];
	struct swt table;
	sw_kick_fn kick;
	void *kick_ctx;
	sw_capture_fn capture;  /* NULL = none */
	void *capture_ctx;
	unsigned capture_port;
	/* Scratch of the batch in flight (no allocation on the fast path). */
	struct sw_frame batch[SW_BATCH];
	uint16_t list_head[SW_PORTS_MAX], list_tail[SW_PORTS_MAX];
};

/* nports 1..SW_PORTS_MAX; seed keys the MAC hash; age_ns 0 = default. */
void sw_init(struct sw *s, unsigned nports, uint64_t seed, sk_time_ns age_ns, sw_kick_fn kick,
	     void *kick_ctx);

/* Attach queue `queue` of `nqueues` (1..SW_QUEUES_MAX) of a port to a ring
 * region (ring_region_check'ed here).  The caller keeps mem mapped until
 * the queue is detached.  The first queue attached fixes the port's queue
 * count until the last one goes.  Returns 0, or -1 if port or queue is out
 * of range, the queue is attached, nqueues differs from the port's, or the
 * region is invalid. */
int sw_queue_attach(struct sw *s, unsigned port, unsigned queue, unsigned nqueues, void *mem,
		    size_t size);
/* A port of one queue. */
int sw_port_attach(struct sw *s, unsigned port, void *mem, size_t size);
/* Forget one queue (its region is no longer touched); with the port's last
 * queue the port and its learned MACs go too. */
void sw_queue_detach(struct sw *s, unsigned port, unsigned queue);
/* Every queue of the port. */
void sw_port_detach(struct sw *s, unsigned port);

/* Forward one batch from each of port's tx rings.  Returns the frames
 * taken (0 if none, the port is not attached, or its heads are out of
 * range). */
unsigned sw_forward(struct sw *s, unsigned port, sk_time_ns now);

/* Frames waiting in port's tx rings (a queue out of range counts 0). */
unsigned sw_pending(const struct sw *s, unsigned port);

/* Before parking: set (true) or clear (false) SWPORT_KF_SLEEPING on every
 * attached queue's tx ring.  After setting, the caller fences and checks
 * sw_pending on every port before it sleeps (swport.h). */
void sw_set_sleeping(struct sw *s, bool sleeping);

#endif
