/* sw.c — the switch engine (see sw.h for the three phases and the trust
 * rules, swport.h for the shared-memory contract).
 *
 * Call order, per sender:
 *   sw_forward(src) -> fetch() -> decide() -> deliver(dst) for each port.
 */
#include "sw.h"
#include "swport.h"

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

int sw_port_attach(struct sw *s, unsigned port, void *mem, size_t size)
{
	struct ring_region h;
	struct sw_port *p;
	uint64_t attaches;

	if (port >= s->nports || s->port[port].attached)
		return -1;
	if (ring_region_check(mem, size) != 0)
		return -1;
	/* The header was just checked; keep our own copy of what we use. */
	sk_memcpy(&h, mem, sizeof(h));
	p = &s->port[port];
	attaches = p->st.attaches;
	sk_memset(p, 0, sizeof(*p));
	p->st.attaches = attaches + 1;
	p->rx = (struct ring *)((uint8_t *)mem + h.rx_ofs);
	p->tx = (struct ring *)((uint8_t *)mem + h.tx_ofs);
	p->pool = (uint8_t *)mem + h.pool_ofs;
	p->num_slots = h.num_slots;
	p->nbufs = h.nbufs;
	p->buf_size = h.buf_size;
	/* Our tails start where the region says they are (ring_region_check
	 * saw them consistent); from now on only our copies count. */
	p->rx_tail = ring_load(&p->rx->tail);
	p->tx_tail = ring_load(&p->tx->tail);
	p->tx->kflags = 0;
	p->attached = true;
	s->attached |= 1ull << port;
	return 0;
}

void sw_port_detach(struct sw *s, unsigned port)
{
	if (port >= s->nports || !s->port[port].attached)
		return;
	s->port[port].attached = false;
	s->port[port].rx = s->port[port].tx = NULL;
	s->port[port].pool = NULL;
	s->attached &= ~(1ull << port);
	swt_forget_port(&s->table, port);
}

unsigned sw_pending(const struct sw *s, unsigned port)
{
	const struct sw_port *p;
	uint32_t n;

	if (port >= s->nports || !s->port[port].attached)
		return 0;
	p = &s->port[port];
	n = ring_load(&p->tx->head) - (p->tx_tail - p->num_slots);
	return n > p->num_slots ? 0 : n;
}

void sw_set_sleeping(struct sw *s, bool sleeping)
{
	for (uint64_t m = s->attached; m != 0; m &= m - 1) {
		struct sw_port *p = &s->port[__builtin_ctzll(m)];
		__atomic_store_n(&p->tx->kflags, sleeping ? SWPORT_KF_SLEEPING : 0u,
				 __ATOMIC_RELAXED);
	}
	/* The caller re-checks the heads after this; the fence orders the
	 * flag store before those loads (the Dekker pair in swport.h). */
	swport_fence();
}

/* Phase 1: snapshot and validate up to SW_BATCH slots; returns how many
 * slots were taken (valid or not: a bad slot is consumed and counted). */
static unsigned fetch(struct sw *s, struct sw_port *p)
{
	uint32_t first = p->tx_tail - p->num_slots; /* oldest unsent slot */
	uint32_t head = ring_load(&p->tx->head);    /* acquire: slots before it are written */
	uint32_t n = head - first;

	if (n > p->num_slots) {
		p->st.bad_index++;
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
			p->st.drop_bad_slot++;
			f->dst = SW_DST_DROP;
			continue;
		}
		if (len < SW_MIN_FRAME) {
			p->st.drop_runt++;
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

/* Phase 3, one destination: merge its unicast list and the flood list (both
 * ascending batch indices) into its rx ring; one tail store, one fence. */
static void deliver(struct sw *s, unsigned d, uint16_t u, uint16_t fl)
{
	struct sw_port *q = &s->port[d];
	uint32_t mask = q->num_slots - 1;
	uint32_t head = ring_load(&q->rx->head); /* acquire: the user is done with those */
	uint32_t tail = q->rx_tail, old = tail;
	uint32_t space;
	bool bad_slot = false;

	if (tail - head > q->num_slots) {
		q->st.bad_index++;
		space = 0;
	} else {
		space = q->num_slots - (tail - head);
	}
	while (u != SW_LIST_END || fl != SW_LIST_END) {
		struct sw_frame *f;
		struct ring_slot *sl;
		uint32_t idx;

		if (fl == SW_LIST_END || (u != SW_LIST_END && u < fl)) {
			f = &s->batch[u];
			u = f->next;
		} else {
			f = &s->batch[fl];
			fl = f->next;
		}
		if (space == 0) {
			q->st.drop_full++;
			continue;
		}
		if (bad_slot || f->len > q->buf_size) {
			q->st.drop_bad_rx++;
			continue;
		}
		sl = &q->rx->slot[tail & mask];
		idx = peek32(&sl->buf_idx);
		if (idx >= q->nbufs) {
			/* The user swapped in an index that is not a buffer; we do
			 * not know which buffer is free to repair the slot with, so
			 * this port gets nothing more in this batch. */
			bad_slot = true;
			q->st.drop_bad_rx++;
			continue;
		}
		sk_memcpy(q->pool + (size_t)idx * q->buf_size, f->buf, f->len);
		sl->len = f->len;
		sl->flags = 0;
		if (s->capture != NULL && s->capture_port == d)
			s->capture(s->capture_ctx, d, true, f->buf, f->len);
		q->st.tx_frames++;
		q->st.tx_bytes += f->len;
		tail++;
		space--;
	}
	if (tail == old)
		return;
	q->rx_tail = tail;
	ring_store(&q->rx->tail, tail); /* release: slots and buffers first */
	swport_fence();                 /* tail store before the cur load */
	if (swport_need_kick(peek32(&q->rx->cur), old, tail)) {
		q->st.kicks++;
		if (s->kick != NULL)
			s->kick(s->kick_ctx, d);
	}
}

unsigned sw_forward(struct sw *s, unsigned src, sk_time_ns now)
{
	struct sw_port *p;
	uint64_t ucast, dests;
	uint16_t flood;
	unsigned n;

	if (src >= s->nports || !s->port[src].attached)
		return 0;
	p = &s->port[src];
	n = fetch(s, p);
	if (n == 0)
		return 0;
	flood = decide(s, src, n, now, &ucast);
	dests = ucast;
	if (flood != SW_LIST_END)
		dests |= s->attached & ~(1ull << src);
	for (; dests != 0; dests &= dests - 1) {
		unsigned d = (unsigned)__builtin_ctzll(dests);
		deliver(s, d, (ucast & (1ull << d)) ? s->list_head[d] : SW_LIST_END, flood);
	}
	/* Every copy is done: hand the slots back to the sender. */
	p->tx_tail += n;
	ring_store(&p->tx->tail, p->tx_tail);
	return n;
}
