/* swport.h — the contract between `skiff switch` and a process attached to
 * one of its ports (`--dev switch:NAME/PORT`, src/dev/shm.c).
 *
 * Freestanding (sk.h and ring.h only): the switch engine, the hosted switch
 * and the port device all include it.  It is a ring ABI (rings and a pool
 * laid out in shared memory), so it lives in ring/, below both dev/ and
 * switch/ (tools/layers.txt).
 *
 * QUEUES
 *   A port has 1..SW_QUEUES_MAX (sw.h) queues: ring pairs for a host whose
 *   share-nothing workers each own one (`--workers N`, docs/smp.md).  Each
 *   queue is an attachment of its own (queue i of N in the hello), made by
 *   the worker that owns it, with its own region, eventfds and connection;
 *   everything below holds per queue.  The first attachment fixes N for
 *   the port until its last queue is gone; another N, or a queue already
 *   held, is refused.  A frame for the port goes to queue
 *   flow_hash_worker(flow_hash_frame(frame), N) (wire/flow_hash.h, the one
 *   steering hash: a flow and its reverse, and the source ports the TCP
 *   engine picks, agree with it); ARP and other frames without an IP
 *   header hash to 0, queue 0.  The switch takes the tx ring of every
 *   queue.  A frame whose queue is not attached (yet, or any more) is
 *   dropped and counted.  N = 1 is the port as it always was.
 *
 * REGION
 *   Each attachment gets a fresh memfd holding one ring region laid out by
 *   the switch with ring_region_init (ring.h).  Fresh per attachment, so a
 *   dead or hostile previous owner that still maps the old memfd can never
 *   touch the new one.  Directions are the attached process's ("user"):
 *     rx ring: frames to the process.  The switch is the device side:
 *              it fills slots, advances tail; the process advances head.
 *     tx ring: frames from the process.  The process fills slots and
 *              advances head; the switch copies them out and advances tail.
 *   The switch never reads back a (k) field or a ring constant from the
 *   shared memory: it keeps private copies of its tails, num_slots, nbufs,
 *   buf_size and the pool address, and checks every head and every slot
 *   (buf_idx < nbufs, len <= buf_size) each time it reads one.  The
 *   process, in turn, trusts the switch (as a netmap user trusts the
 *   kernel) after ring_region_check at attach.
 *
 * WAKE-UPS (eventfds, used only by a side that sleeps)
 *   switch -> process, rx ring: the process's rx->cur is its wake-up point
 *     (ring.h).  Before sleeping the process stores cur = the tail it saw,
 *     issues a full fence and looks at tail once more.  After publishing a
 *     new rx tail (old -> new) the switch issues a full fence, loads cur and
 *     kicks the process's eventfd iff the step crossed cur
 *     (swport_need_kick).  A busy process never touches cur, so its cur
 *     falls behind and the switch stops kicking after one step: a busy
 *     receiver costs the switch no syscall (a stale cur is crossed again
 *     only after 2^32 frames: one spurious kick, harmless).
 *   process -> switch, tx ring: the switch sets SWPORT_KF_SLEEPING in
 *     tx->kflags (a (k) field) of every port before it parks, fences and
 *     looks at every tx head once more.  After publishing a new tx head the
 *     process fences, loads kflags and kicks the switch's eventfd iff the
 *     bit is set.  The switch clears the bits when it wakes.
 *   The two fences form the classic store-then-load handshake (Dekker):
 *   either the sleeper sees the new index, or the waker sees the request.
 *
 * ATTACH PROTOCOL
 *   The switch listens on the abstract unix socket "\0skiff-switch/NAME"
 *   (SOCK_SEQPACKET; abstract, so nothing is left in the file system when
 *   the switch dies).  A process connects and sends a swport_hello; the
 *   switch answers a swport_reply, with three fds (SCM_RIGHTS) on success:
 *   the memfd, the eventfd the switch kicks (process sleeps on it) and the
 *   eventfd the process kicks (switch sleeps on it).  The connection stays
 *   open for the attachment's lifetime: when the process dies the kernel
 *   closes it, the switch sees the hang-up and frees the queue at once.
 *   VERSIONS: the hello's first two words (magic, version) never move.  A
 *   hello of another version, of any size, is answered EPROTO with both
 *   versions in msg (never read as ours); a client that gets a reply of
 *   another version says so.  Version 1 had no queue fields.
 */
#ifndef RING_SWPORT_H
#define RING_SWPORT_H

#include "../base/sk.h"
#include "ring.h"

#define SWPORT_MAGIC 0x736b7370u /* "sksp" */
#define SWPORT_VERSION 2u /* 2: queue, nqueues in the hello */
#define SWPORT_NAME_MAX 32        /* switch NAME bytes, [A-Za-z0-9_.-] */
#define SWPORT_SOCK_PREFIX "skiff-switch/"

/* (k) bit of tx->kflags: the switch is asleep, kick its eventfd after a
 * new tx head. */
#define SWPORT_KF_SLEEPING 0x1u

struct swport_hello {
	uint32_t magic;     /* SWPORT_MAGIC */
	uint32_t version;   /* SWPORT_VERSION */
	uint32_t port;      /* port number wanted */
	uint32_t num_slots; /* per ring; 0 = the switch's default */
	uint32_t queue;     /* this attachment is queue `queue` ... */
	uint32_t nqueues;   /* ... of nqueues (0 or 1: a port of one queue) */
};

struct swport_reply {
	uint32_t magic;
	uint32_t version;
	int32_t status;     /* 0, or a positive errno-style code */
	uint32_t reserved;
	uint64_t size;      /* region bytes in the memfd */
	char msg[96];       /* why, when status != 0 */
};

/* Did a producer's step of its index from old to new cross the consumer's
 * wake-up point? (the index at which the consumer wants to be woken).  All
 * free-running 32-bit arithmetic: true iff wake is in [old, new). */
static inline bool swport_need_kick(uint32_t wake, uint32_t old_idx, uint32_t new_idx)
{
	return (uint32_t)(new_idx - wake - 1) < (uint32_t)(new_idx - old_idx);
}

static inline void swport_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif
