/* timerq.h — the timer structure behind loop_timer_set(): a binary
 * min-heap of pointers to application-owned struct loop_timer, keyed by
 * absolute deadline.  Shared by every loop backend; freestanding.
 *
 *   next deadline: O(1);  set / move / cancel / pop: O(log n).
 * The array is given by the caller (capacity fixed at start: no allocation
 * while serving).  Invariants: for 0 < i < n,
 *   v[(i-1)/2]->deadline <= v[i]->deadline, and v[i]->slot == i + 1;
 * a timer not in the heap has slot == 0.
 */
#ifndef LOOP_TIMERQ_H
#define LOOP_TIMERQ_H

#include "loop.h"

struct timerq {
	struct loop_timer **v;
	uint32_t n, cap;
};

void timerq_init(struct timerq *q, struct loop_timer **v, uint32_t cap);

/* Arm or move t.  Returns 0, or -SK_ENOMEM when the heap is full (the
 * backend sizes it for every timer the application can own). */
int timerq_set(struct timerq *q, struct loop_timer *t, sk_time_ns deadline);
void timerq_cancel(struct timerq *q, struct loop_timer *t);

static inline sk_time_ns timerq_next(const struct timerq *q)
{
	return q->n ? q->v[0]->deadline : SK_TIME_NEVER;
}

/* Remove and return the earliest timer if it is due at `now`, else NULL. */
struct loop_timer *timerq_pop_due(struct timerq *q, sk_time_ns now);

#endif
