/* timer.h — a binary min-heap of (deadline, id), one entry per id.
 *
 * The TCP engine keeps one entry per socket: the socket's earliest deadline
 * (retransmit, delayed ACK, persist, keep-alive, TIME_WAIT).  A deadline is
 * not work: a socket is visited only when its entry comes due.
 *   min / next deadline: O(1);  set (insert, move, remove): O(log n).
 * Memory is given by the caller (three arrays of `cap` entries); ids are
 * 0..cap-1.  Invariants: for 0 < i < n, keys[(i-1)/2] <= keys[i];
 * pos[ids[i]] == i + 1; pos[id] == 0 <=> id is not in the heap.
 */
#ifndef NET_TIMER_H
#define NET_TIMER_H

#include "../base/sk.h"

struct timer_heap {
	uint32_t *ids;    /* heap order, [0, n) */
	sk_time_ns *keys; /* keys[i] is the deadline of ids[i] */
	uint32_t *pos;    /* indexed by id: heap index + 1, or 0 */
	uint32_t n, cap;
};

void timer_heap_init(struct timer_heap *h, uint32_t *ids, sk_time_ns *keys, uint32_t *pos,
		     uint32_t cap);

/* Insert, move or (with SK_TIME_NEVER) remove the entry of `id`. */
void timer_heap_set(struct timer_heap *h, uint32_t id, sk_time_ns at);

/* The deadline of `id`, or SK_TIME_NEVER if it has none. */
sk_time_ns timer_heap_get(const struct timer_heap *h, uint32_t id);

/* Earliest deadline, or SK_TIME_NEVER when empty. O(1). */
static inline sk_time_ns timer_heap_min(const struct timer_heap *h)
{
	return h->n ? h->keys[0] : SK_TIME_NEVER;
}

/* If the earliest entry is due at `now`, remove it, store its id and return
 * true. */
bool timer_heap_pop_due(struct timer_heap *h, sk_time_ns now, uint32_t *id);

#endif
