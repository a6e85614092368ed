/* sw.c — the switch engine (see sw.h for the three phases and the trust
 * rules, ring/swport.h for the shared-memory contract).
 *
 * Call order, per sender:
 *   sw_forward(src) -> forward_queue() for each of its queues -> fetch() ->
 *   decide() -> deliver(dst) (one queue) or deliver_mq(dst) for each port.
 */
#include "sw.h"
#include "../ring/swport.h"
#include "../wire/flow_hash.h"

/* Reads of fields the peer may change under us: exactly one load each, so
 * a check and a use can never see two different values. */
static inline uint32_t peek32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline uint16_t peek16(const uint16_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
/* (ring_slot() would mask with the shared num_slots: we use our copy.) */

void sw_init(struct sw *s, unsigned nports, uint64_t seed, sk_time_ns age_ns, sw_kick_fn kick,
	     void *kick_ctx)
{
	sk_memset(s, 0, sizeof(*s));
	s->nports = nports > SW_PORTS_MAX ? SW_PORTS_MAX : nports;
	s->kick = kick;
	s->kick_ctx = kick_ctx;
	s->capture_port = SW_PORTS_MAX; /* none */
	swt_init(&s->table, seed, age_ns);
}

int sw_queue_attach(struct sw *s, unsigned port, unsigned queue, unsigned nqueues, void *mem,
		    size_t size)
{
	struct ring_region h;
	struct sw_port *p;
	struct sw_queue *q;

	if (port >= s->nports || nqueues == 0 || nqueues > SW_QUEUES_MAX || queue >= nqueues)
		return -1;
	p = &s->port[port];
	if (p->attached && (p->nq != nqueues || (p->qmask & (1u << queue))))
		return -1;
	if (ring_region_check(mem, size) != 0)
		return -1;
	/* The header was just checked; keep our own copy of what we use. */
	sk_memcpy(&h, mem, sizeof(h));
	if (!p->attached) {
		p->nq = (uint8_t)nqueues;
		p->qmask = 0;
		if (p->nq > p->nq_max)
			p->nq_max = p->nq;
	}
	q = &p->q[queue];
	sk_memset(q, 0, sizeof(*q));
	q->rx = (struct ring *)((uint8_t *)mem + h.rx_ofs);
	q->tx = (struct ring *)((uint8_t *)mem + h.tx_ofs);
	q->pool = (uint8_t *)mem + h.pool_ofs;
	q->num_slots = h.num_slots;
	q->nbufs = h.nbufs;
	q->buf_size = h.buf_size;
	/* Our tails start where the region says they are (ring_region_check
	 * saw them consistent); from now on only our copies count. */
	q->rx_tail = ring_load(&q->rx->tail);
	q->tx_tail = ring_load(&q->tx->tail);
	q->tx->kflags = 0;
	p->qmask |= (uint8_t)(1u << queue);
	p->st.attaches++;
	p->attached = true;
	s->attached |= 1ull << port;
	return 0;
}

int sw_port_attach(struct sw *s, unsigned port, void *mem, size_t size)
{
	return sw_queue_attach(s, port, 0, 1, mem, size);
}

void sw_queue_detach(struct sw *s, unsigned port, unsigned queue)
{
	struct sw_port *p;

	if (port >= s->nports || queue >= SW_QUEUES_MAX)
		return;
	p = &s->port[port];
	if (!p->attached || !(p->qmask & (1u << queue)))
		return;
	p->qmask &= (uint8_t)~(1u << queue);
	p->q[queue].rx = p->q[queue].tx = NULL;
	p->q[queue].pool = NULL;
	if (p->qmask != 0)
		return;
	p->attached = false;
	p->nq = 0;
	s->attached &= ~(1ull << port);
	swt_forget_port(&s->table, port);
}

void sw_port_detach(struct sw *s, unsigned port)
{
	for (unsigned i = 0; i < SW_QUEUES_MAX; i++)
		sw_queue_detach(s, port, i);
}

unsigned sw_pending(const struct sw *s, unsigned port)
{
	const struct sw_port *p;
	unsigned sum = 0;

	if (port >= s->nports || !s->port[port].attached)
		return 0;
	p = &s->port[port];
	for (unsigned m = p->qmask; m != 0; m &= m - 1) {
		const struct sw_queue *q = &p->q[__builtin_ctz(m)];
		uint32_t n = ring_load(&q->tx->head) - (q->tx_tail - q->num_slots);
		sum += n > q->num_slots ? 0 : n;
	}
	return sum;
}

void sw_set_sleeping(struct sw *s, bool sleeping)
{
	for (uint64_t m = s->attached; m != 0; m &= m - 1) {
		struct sw_port *p = &s->port[__builtin_ctzll(m)];
		for (unsigned qm = p->qmask; qm != 0; qm &= qm - 1)
			__atomic_store_n(&p->q[__builtin_ctz(qm)].tx->kflags,
					 sleeping ? SWPORT_KF_SLEEPING : 0u, __ATOMIC_RELAXED);
	}
	/* The caller re-checks the heads after this; the fence orders the
	 * flag store before those loads (the Dekker pair in swport.h). */
	swport_fence();
}

/* Phase 1: snapshot and validate up to SW_BATCH slots; returns how many
 * slots were taken (valid or not: a bad slot is consumed and counted). */
static unsigned fetch(struct sw *s, struct sw_port *pt, struct sw_queue *p)
{
	uint32_t first = p->tx_tail - p->num_slots; /* oldest unsent slot */
	uint32_t head = ring_load(&p->tx->head);    /* acquire: slots before it are written */
	uint32_t n = head - first;

	if (n > p->num_slots) {
		pt->st.bad_index++;
		return 0;
	}
	if (n > SW_BATCH)
		n = SW_BATCH;
	for (uint32_t i = 0; i < n; i++) {
		struct ring_slot *sl = &p->tx->slot[(first + i) & (p->num_slots - 1)];
		uint32_t idx = peek32(&sl->buf_idx);
		uint16_t len = peek16(&sl->len);
		struct sw_frame *f = &s->batch[i];

		f->next = SW_LIST_END;
		if (idx >= p->nbufs || len > p->buf_size) {
			pt->st.drop_bad_slot++;
			f->dst = SW_DST_DROP;
			continue;
		}
		if (len < SW_MIN_FRAME) {
			pt->st.drop_runt++;
			f->dst = SW_DST_DROP;
			continue;
		}
		f->buf = p->pool + (size_t)idx * p->buf_size;
		f->len = len;
		f->dst = 0;
		/* The header decides the destination next: have it in cache by
		 * then.  A second line for frames that span it. */
		__builtin_prefetch(f->buf);
		if (len > 64)
			__builtin_prefetch(f->buf + 64);
	}
	return n;
}

/* Phase 2: learn and look up; link each frame into its destination's list
 * (frames keep batch order inside a list).  Returns the flood list head. */
static uint16_t decide(struct sw *s, unsigned src, unsigned n, sk_time_ns now, uint64_t *ucast)
{
	struct sw_port *p = &s->port[src];
	uint16_t flood_head = SW_LIST_END, flood_tail = SW_LIST_END;
	uint64_t used = 0;

	for (unsigned i = 0; i < n; i++) {
		struct sw_frame *f = &s->batch[i];
		uint8_t hdr[2 * SK_MAC_LEN]; /* one copy: the peer may rewrite it */
		unsigned d;

		if (f->dst == SW_DST_DROP)
			continue;
		sk_memcpy(hdr, f->buf, sizeof(hdr));
		p->st.rx_frames++;
		p->st.rx_bytes += f->len;
		if (s->capture != NULL && s->capture_port == src)
			s->capture(s->capture_ctx, src, false, f->buf, f->len);
		/* A multicast source is invalid (802.1D): never learn it. */
		if (!(hdr[SK_MAC_LEN] & 1))
			swt_learn(&s->table, hdr + SK_MAC_LEN, src, now);
		if (hdr[0] & 1) {
			d = SW_DST_FLOOD;
		} else {
			int r = swt_lookup(&s->table, hdr, now);
			d = (r == SWT_NONE || !(s->attached & (1ull << r))) ? SW_DST_FLOOD
									    : (unsigned)r;
		}
		if (d == src) {
			p->st.drop_same_port++;
			f->dst = SW_DST_DROP;
			continue;
		}
		f->dst = (uint16_t)d;
		if (d == SW_DST_FLOOD) {
			p->st.flooded++;
			if (flood_head == SW_LIST_END)
				flood_head = (uint16_t)i;
			else
				s->batch[flood_tail].next = (uint16_t)i;
			flood_tail = (uint16_t)i;
			continue;
		}
		if (!(used & (1ull << d))) {
			used |= 1ull << d;
			s->list_head[d] = (uint16_t)i;
		} else {
			s->batch[s->list_tail[d]].next = (uint16_t)i;
		}
		s->list_tail[d] = (uint16_t)i;
	}
	*ucast = used;
	return flood_head;
}

/* Phase 3 helpers.  Copy frame f into the free rx slot at tail of queue q
 * of port pt; false if it was dropped (counted) and tail did not move.
 * *bad is set for the rest of the batch once the slot holds a buffer index
 * that is not one: we do not know which buffer is free to repair the slot
 * with, so the queue gets nothing more in this batch. */
static inline __attribute__((always_inline)) bool put(struct sw *s, unsigned d,
						       struct sw_port *pt, struct sw_queue *q,
						       const struct sw_frame *f, uint32_t tail,
						       bool *bad)
{
	struct ring_slot *sl;
	uint32_t idx;

	if (*bad || f->len > q->buf_size) {
		pt->st.drop_bad_rx++;
		return false;
	}
	sl = &q->rx->slot[tail & (q->num_slots - 1)];
	idx = peek32(&sl->buf_idx);
	if (idx >= q->nbufs) {
		*bad = true;
		pt->st.drop_bad_rx++;
		return false;
	}
	sk_memcpy(q->pool + (size_t)idx * q->buf_size, f->buf, f->len);
	sl->len = f->len;
	sl->flags = 0;
	if (s->capture != NULL && s->capture_port == d)
		s->capture(s->capture_ctx, d, true, f->buf, f->len);
	pt->st.tx_frames++;
	pt->st.tx_bytes += f->len;
	return true;
}

/* Free rx slots of q: 0 (counted) if the user's head is out of range. */
static inline uint32_t rx_space(struct sw_port *pt, struct sw_queue *q, uint32_t tail)
{
	uint32_t head = ring_load(&q->rx->head); /* acquire: the user is done with those */

	if (tail - head > q->num_slots) {
		pt->st.bad_index++;
		return 0;
	}
	return q->num_slots - (tail - head);
}

/* Publish q's new rx tail: one tail store, one fence, at most one kick. */
static inline void publish(struct sw *s, unsigned d, unsigned qi, struct sw_port *pt,
			   struct sw_queue *q, uint32_t old, uint32_t tail)
{
	q->rx_tail = tail;
	ring_store(&q->rx->tail, tail); /* release: slots and buffers first */
	swport_fence();                 /* tail store before the cur load */
	if (swport_need_kick(peek32(&q->rx->cur), old, tail)) {
		pt->st.kicks++;
		q->kicks++;
		if (s->kick != NULL)
			s->kick(s->kick_ctx, d, qi);
	}
}

/* Next frame of the merge of a unicast list and the flood list (both
 * ascending batch indices). */
static inline struct sw_frame *next_frame(struct sw *s, uint16_t *u, uint16_t *fl)
{
	struct sw_frame *f;

	if (*fl == SW_LIST_END || (*u != SW_LIST_END && *u < *fl)) {
		f = &s->batch[*u];
		*u = f->next;
	} else {
		f = &s->batch[*fl];
		*fl = f->next;
	}
	return f;
}

/* Phase 3, one destination of one queue: merge its unicast list and the
 * flood list into its rx ring. */
static void deliver(struct sw *s, unsigned d, uint16_t u, uint16_t fl)
{
	struct sw_port *pt = &s->port[d];
	struct sw_queue *q = &pt->q[0];
	uint32_t tail = q->rx_tail, old = tail;
	uint32_t space = rx_space(pt, q, tail);
	bool bad_slot = false;

	while (u != SW_LIST_END || fl != SW_LIST_END) {
		struct sw_frame *f = next_frame(s, &u, &fl);

		if (space == 0) {
			pt->st.drop_full++;
			continue;
		}
		if (put(s, d, pt, q, f, tail, &bad_slot)) {
			tail++;
			space--;
		}
	}
	if (tail != old)
		publish(s, d, 0, pt, q, old, tail);
}

/* Phase 3, one destination of several queues: each frame to the queue its
 * flow hashes to, each queue with its own space, bad-slot state and one
 * publish.  The hash reads the sender's buffer, which the sender may be
 * rewriting: only within f->len (our copy, checked), and a torn read can
 * only pick another queue, the same as the sender having sent that frame. */
static void deliver_mq(struct sw *s, unsigned d, uint16_t u, uint16_t fl)
{
	struct sw_port *pt = &s->port[d];
	unsigned nq = pt->nq;
	uint32_t tail[SW_QUEUES_MAX], old[SW_QUEUES_MAX], space[SW_QUEUES_MAX];
	bool bad[SW_QUEUES_MAX];

	for (unsigned i = 0; i < nq; i++) {
		tail[i] = old[i] = pt->q[i].rx_tail;
		space[i] = (pt->qmask & (1u << i)) ? rx_space(pt, &pt->q[i], tail[i]) : 0;
		bad[i] = false;
	}
	while (u != SW_LIST_END || fl != SW_LIST_END) {
		struct sw_frame *f = next_frame(s, &u, &fl);
		unsigned qi = flow_hash_worker(flow_hash_frame(f->buf, f->len), nq);
		struct sw_queue *q = &pt->q[qi];

		if (!(pt->qmask & (1u << qi))) {
			pt->st.drop_no_queue++;
			continue;
		}
		if (space[qi] == 0) {
			pt->st.drop_full++;
			continue;
		}
		if (put(s, d, pt, q, f, tail[qi], &bad[qi])) {
			q->delivered++;
			tail[qi]++;
			space[qi]--;
		}
	}
	for (unsigned i = 0; i < nq; i++)
		if (tail[i] != old[i])
			publish(s, d, i, pt, &pt->q[i], old[i], tail[i]);
}

/* One batch from one queue of src. */
static unsigned forward_queue(struct sw *s, unsigned src, struct sw_port *p, struct sw_queue *q,
			      sk_time_ns now)
{
	uint64_t ucast, dests;
	uint16_t flood;
	unsigned n;

	n = fetch(s, p, q);
	if (n == 0)
		return 0;
	flood = decide(s, src, n, now, &ucast);
	dests = ucast;
	if (flood != SW_LIST_END)
		dests |= s->attached & ~(1ull << src);
	for (; dests != 0; dests &= dests - 1) {
		unsigned d = (unsigned)__builtin_ctzll(dests);
		uint16_t u = (ucast & (1ull << d)) ? s->list_head[d] : SW_LIST_END;
		if (s->port[d].nq == 1)
			deliver(s, d, u, flood);
		else
			deliver_mq(s, d, u, flood);
	}
	/* Every copy is done: hand the slots back to the sender. */
	q->tx_tail += n;
	ring_store(&q->tx->tail, q->tx_tail);
	return n;
}

unsigned sw_forward(struct sw *s, unsigned src, sk_time_ns now)
{
	struct sw_port *p;
	unsigned n = 0;

	if (src >= s->nports || !s->port[src].attached)
		return 0;
	p = &s->port[src];
	if (p->nq == 1)
		return forward_queue(s, src, p, &p->q[0], now);
	for (unsigned m = p->qmask; m != 0; m &= m - 1) {
		struct sw_queue *q = &p->q[__builtin_ctz(m)];
		unsigned k = forward_queue(s, src, p, q, now);
		q->taken += k;
		n += k;
	}
	return n;
}
