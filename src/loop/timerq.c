/* timerq.c — see timerq.h. */
#include "timerq.h"

void timerq_init(struct timerq *q, struct loop_timer **v, uint32_t cap)
{
	q->v = v;
	q->n = 0;
	q->cap = cap;
}

static inline void place(struct timerq *q, uint32_t i, struct loop_timer *t)
{
	q->v[i] = t;
	t->slot = i + 1;
}

static void sift_up(struct timerq *q, uint32_t i)
{
	struct loop_timer *t = q->v[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (q->v[p]->deadline <= t->deadline)
			break;
		place(q, i, q->v[p]);
		i = p;
	}
	place(q, i, t);
}

static void sift_down(struct timerq *q, uint32_t i)
{
	struct loop_timer *t = q->v[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && q->v[c + 1]->deadline < q->v[c]->deadline)
			c++;
		if (t->deadline <= q->v[c]->deadline)
			break;
		place(q, i, q->v[c]);
		i = c;
	}
	place(q, i, t);
}

int timerq_set(struct timerq *q, struct loop_timer *t, sk_time_ns deadline)
{
	if (t->slot) {
		sk_time_ns old = t->deadline;
		t->deadline = deadline;
		if (deadline < old)
			sift_up(q, t->slot - 1);
		else if (deadline > old)
			sift_down(q, t->slot - 1);
		return 0;
	}
	if (q->n == q->cap)
		return -SK_ENOMEM;
	t->deadline = deadline;
	place(q, q->n, t);
	q->n++;
	sift_up(q, q->n - 1);
	return 0;
}

void timerq_cancel(struct timerq *q, struct loop_timer *t)
{
	if (!t->slot)
		return;
	uint32_t i = t->slot - 1;
	t->slot = 0;
	q->n--;
	if (i == q->n)
		return;
	/* Move the last entry into the hole; it may belong above or below. */
	struct loop_timer *last = q->v[q->n];
	place(q, i, last);
	if (i > 0 && q->v[(i - 1) / 2]->deadline > last->deadline)
		sift_up(q, i);
	else
		sift_down(q, i);
}

struct loop_timer *timerq_pop_due(struct timerq *q, sk_time_ns now)
{
	if (!q->n || q->v[0]->deadline > now)
		return NULL;
	struct loop_timer *t = q->v[0];
	timerq_cancel(q, t);
	return t;
}
