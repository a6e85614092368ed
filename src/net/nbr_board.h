/* nbr_board.h — a neighbour board: IPv4 -> MAC entries shared by the
 * share-nothing workers of one process (docs/smp.md "Neighbours").
 *
 * Why: the steering hash gives every ARP frame to one worker (worker 0 on
 * packet and tap), so when worker B asks for a next hop (an upstream it
 * connects to, the gateway for an off-link client), the reply is heard by
 * worker 0, not by B.  Each worker's interface (iface_config.board)
 * publishes here what it learns from ARP packets (not what it gleans:
 * a gleaned source reaches each worker by its own frames), and on a
 * local miss reads here before it asks: B installs worker 0's answer in
 * its own cache and sends at once.
 *
 * Cost: written only when an ARP packet teaches or refreshes an entry (a
 * few per minute per neighbour); read only on a local miss,
 * while a datagram waits for resolution (polled every
 * IFACE_ARP_BOARD_POLL_NS then), and while a local entry is stale.  A hit
 * in a worker's own cache never touches the board, so nothing here is on
 * the per-request path.
 *
 * Shape: NBR_BOARD_SLOTS fixed slots; an address lives in one of
 * NBR_BOARD_PROBE consecutive slots from its keyed hash (the oldest entry
 * of the window is replaced when all are taken), so the board is bounded
 * and a lookup reads at most NBR_BOARD_PROBE slots.
 *
 * Concurrency, lock-free per slot: each slot is a seqlock whose writers
 * take it by compare-and-swap from an even to an odd sequence, and give up
 * (dropping that publication) if another writer holds it: a board entry is
 * a hint refreshed by the next ARP packet, so a lost write costs at most a
 * request.  A writer never waits; a reader never writes and never waits: it
 * reads the sequence, the fields, the sequence again, and takes the fields
 * only if the sequence was even and unchanged (it retries a few times, then
 * counts the slot as empty).  Every field is accessed atomically (relaxed,
 * ordered by the sequence's acquire/release), so there is no data race.
 *
 * Time: `confirmed` is the publishing worker's `now`; all workers of a
 * process run on one monotonic clock.  Readers take an entry only while it
 * is younger than IFACE_ARP_REACHABLE_NS and install it with that time, so
 * a copy expires when the original would.  Freestanding. */
#ifndef NET_NBR_BOARD_H
#define NET_NBR_BOARD_H

#include "../base/sk.h"

#define NBR_BOARD_SLOTS 512u /* power of two: twice one interface's ARP cache */
#define NBR_BOARD_PROBE 4u

struct nbr_board_slot {
	uint32_t seq;       /* even: stable; odd: a writer is in it */
	uint32_t ip;        /* host order; 0 = empty */
	uint64_t mac;       /* the 6 bytes, big-endian in the low 48 bits */
	uint64_t confirmed; /* sk_time_ns of the ARP packet (or frame) that taught it */
	uint64_t pad;
};

/* The caller places it (static, calloc) and initialises it once, before
 * any worker starts; it outlives every interface that points at it. */
struct nbr_board {
	uint64_t k1, k2; /* hash key, fixed at init */
	struct nbr_board_slot slot[NBR_BOARD_SLOTS];
};

void nbr_board_init(struct nbr_board *b, uint64_t seed);

/* ip is at mac as of `confirmed`.  Returns false when the slot was busy
 * (another writer) or an entry as new for ip is already there. */
bool nbr_board_publish(struct nbr_board *b, uint32_t ip, const uint8_t mac[SK_MAC_LEN],
		       sk_time_ns confirmed);

/* The newest entry for ip: true with its MAC and time, false if none. */
bool nbr_board_read(const struct nbr_board *b, uint32_t ip, uint8_t mac[SK_MAC_LEN],
		    sk_time_ns *confirmed);

#endif
