/* timer.c — the deadline heap (see timer.h). */
#include "timer.h"

void timer_heap_init(struct timer_heap *h, uint32_t *ids, sk_time_ns *keys, uint32_t *pos,
		     uint32_t cap)
{
	h->ids = ids;
	h->keys = keys;
	h->pos = pos;
	h->n = 0;
	h->cap = cap;
	sk_memset(pos, 0, sizeof(*pos) * cap);
}

static void timer_place(struct timer_heap *h, uint32_t i, uint32_t id, sk_time_ns at)
{
	h->ids[i] = id;
	h->keys[i] = at;
	h->pos[id] = i + 1;
}

static void timer_sift_up(struct timer_heap *h, uint32_t i)
{
	uint32_t id = h->ids[i];
	sk_time_ns at = h->keys[i];
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (h->keys[parent] <= at)
			break;
		timer_place(h, i, h->ids[parent], h->keys[parent]);
		i = parent;
	}
	timer_place(h, i, id, at);
}

static void timer_sift_down(struct timer_heap *h, uint32_t i)
{
	uint32_t id = h->ids[i];
	sk_time_ns at = h->keys[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->keys[c + 1] < h->keys[c])
			c++;
		if (at <= h->keys[c])
			break;
		timer_place(h, i, h->ids[c], h->keys[c]);
		i = c;
	}
	timer_place(h, i, id, at);
}

static void timer_remove_at(struct timer_heap *h, uint32_t i)
{
	uint32_t id = h->ids[i];
	h->pos[id] = 0;
	h->n--;
	if (i == h->n)
		return;
	timer_place(h, i, h->ids[h->n], h->keys[h->n]);
	/* The moved entry may belong above or below i; at most one sift moves it. */
	timer_sift_down(h, i);
	timer_sift_up(h, i);
}

void timer_heap_set(struct timer_heap *h, uint32_t id, sk_time_ns at)
{
	uint32_t p = h->pos[id];
	if (at == SK_TIME_NEVER) {
		if (p)
			timer_remove_at(h, p - 1);
		return;
	}
	if (!p) {
		uint32_t i = h->n++;
		timer_place(h, i, id, at);
		timer_sift_up(h, i);
		return;
	}
	sk_time_ns old = h->keys[p - 1];
	h->keys[p - 1] = at;
	if (at < old)
		timer_sift_up(h, p - 1);
	else if (at > old)
		timer_sift_down(h, p - 1);
}

sk_time_ns timer_heap_get(const struct timer_heap *h, uint32_t id)
{
	uint32_t p = h->pos[id];
	return p ? h->keys[p - 1] : SK_TIME_NEVER;
}

bool timer_heap_pop_due(struct timer_heap *h, sk_time_ns now, uint32_t *id)
{
	if (!h->n || h->keys[0] > now)
		return false;
	*id = h->ids[0];
	timer_remove_at(h, 0);
	return true;
}
