/* sw_test.c — the forwarding engine over in-memory regions: flooding and
 * learning, batch bounds, full rings, wake-ups, detach, and a hostile
 * peer writing nonsense into everything it owns (and what it does not);
 * then a port of two queues: steering by wire/flow_hash.h, the same checks
 * on queue 1, and the queues' lifetimes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "switch/sw.h"
#include "ring/swport.h"
#include "wire/flow_hash.h"

#define NPORTS 3
#define SLOTS 16u

static struct sw *s;
static void *mem[NPORTS];
static size_t msize;
static unsigned kicks[NPORTS];

static unsigned qkicks[NPORTS][SW_QUEUES_MAX];

static void on_kick(void *ctx, unsigned port, unsigned queue)
{
	(void)ctx;
	kicks[port]++;
	qkicks[port][queue]++;
}

static int setup(void **state)
{
	(void)state;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -1;
	sw_init(s, NPORTS, 12345, 0, on_kick, NULL);
	msize = ring_region_size(SLOTS, RING_BUF_SIZE_DEFAULT, 0);
	memset(kicks, 0, sizeof(kicks));
	memset(qkicks, 0, sizeof(qkicks));
	for (unsigned p = 0; p < NPORTS; p++) {
		mem[p] = aligned_alloc(64, msize);
		if (mem[p] == NULL || ring_region_init(mem[p], msize, SLOTS, RING_BUF_SIZE_DEFAULT, 0))
			return -1;
		if (sw_port_attach(s, p, mem[p], msize) != 0)
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (unsigned p = 0; p < NPORTS; p++)
		free(mem[p]);
	free(s);
	return 0;
}

static void mac(uint8_t m[6], unsigned host)
{
	static const uint8_t base[6] = {0x02, 0, 0, 0, 0, 0};
	memcpy(m, base, 6);
	m[5] = (uint8_t)host;
}

/* Port p's process puts a frame from host src to host dst (0xff = broadcast)
 * in its tx ring. */
static void send_frame(unsigned p, unsigned src, unsigned dst, uint16_t len)
{
	struct ring *t = ring_region_tx(mem[p]);
	struct ring_slot *sl = ring_slot(t, t->head);
	uint8_t *b = ring_buf(t, sl->buf_idx);

	assert_true(ring_avail(t) > 0);
	if (dst == 0xff)
		memset(b, 0xff, 6);
	else
		mac(b, dst);
	mac(b + 6, src);
	b[12] = 0x08;
	b[13] = 0x00;
	for (unsigned i = 14; i < len; i++)
		b[i] = (uint8_t)(i + src);
	sl->len = len;
	ring_store(&t->head, t->head + 1);
}

/* Port p's process takes every frame; returns how many, and the last one's
 * destination host byte in *last_dst. */
static unsigned recv_all(unsigned p, unsigned *last_dst)
{
	struct ring *r = ring_region_rx(mem[p]);
	unsigned n = 0;

	while (ring_avail(r)) {
		struct ring_slot *sl = ring_slot(r, r->head);
		uint8_t *b = ring_buf(r, sl->buf_idx);
		assert_true(sl->len >= 14);
		for (unsigned i = 14; i < sl->len; i++)
			assert_int_equal(b[i], (uint8_t)(i + b[11]));
		if (last_dst)
			*last_dst = b[5];
		ring_store(&r->head, r->head + 1);
		n++;
	}
	return n;
}

static void test_flood_then_learn(void **state)
{
	unsigned d;
	(void)state;
	/* Host 1 (port 0) to unknown host 2: flooded to ports 1 and 2. */
	send_frame(0, 1, 2, 60);
	assert_int_equal(sw_forward(s, 0, 1), 1);
	assert_int_equal(recv_all(1, &d), 1);
	assert_int_equal(recv_all(2, NULL), 1);
	assert_int_equal(s->port[0].st.flooded, 1);
	/* Host 2 (port 1) answers: host 1 is known, only port 0 sees it. */
	send_frame(1, 2, 1, 1514);
	assert_int_equal(sw_forward(s, 1, 2), 1);
	assert_int_equal(recv_all(0, &d), 1);
	assert_int_equal(d, 1);
	assert_int_equal(recv_all(2, NULL), 0);
	/* And now both are known: port 2 sees no unicast, only broadcast. */
	for (int i = 0; i < 5; i++) {
		send_frame(0, 1, 2, 100);
		send_frame(1, 2, 1, 100);
	}
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 3);
	sw_forward(s, 1, 3);
	assert_int_equal(recv_all(1, NULL), 6);
	assert_int_equal(recv_all(0, NULL), 5);
	assert_int_equal(recv_all(2, &d), 1);
	assert_int_equal(d, 0xff);
	assert_int_equal(s->port[0].st.rx_frames, 7);
	assert_int_equal(s->port[1].st.tx_frames, 7);
	/* The sender got its slots back. */
	assert_int_equal(ring_avail(ring_region_tx(mem[0])), SLOTS);
}

static void test_full_ring_drops(void **state)
{
	(void)state;
	/* Nobody reads port 1: after SLOTS frames it drops, counted; the
	 * sender never waits (its slots always come back). */
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned i = 0; i < SLOTS; i++)
			send_frame(0, 1, 0xff, 64);
		assert_int_equal(sw_forward(s, 0, round), SLOTS);
		assert_int_equal(ring_avail(ring_region_tx(mem[0])), SLOTS);
		recv_all(2, NULL);
	}
	assert_int_equal(s->port[1].st.tx_frames, SLOTS);
	assert_int_equal(s->port[1].st.drop_full, 2 * SLOTS);
	assert_int_equal(s->port[2].st.tx_frames, 3 * SLOTS);
	assert_int_equal(s->port[2].st.drop_full, 0);
}

static void test_batch_bound(void **state)
{
	size_t big = ring_region_size(1024, RING_BUF_SIZE_DEFAULT, 0);
	void *m = aligned_alloc(64, big);
	struct ring *t;
	(void)state;
	assert_non_null(m);
	assert_int_equal(ring_region_init(m, big, 1024, RING_BUF_SIZE_DEFAULT, 0), 0);
	sw_port_detach(s, 2);
	assert_int_equal(sw_port_attach(s, 2, m, big), 0);
	t = ring_region_tx(m);
	for (unsigned i = 0; i < 1024; i++) {
		struct ring_slot *sl = ring_slot(t, t->head + i);
		memset(ring_buf(t, sl->buf_idx), 0xff, 12);
		sl->len = 60;
	}
	ring_store(&t->head, 1024);
	assert_int_equal(sw_pending(s, 2), 1024);
	assert_int_equal(sw_forward(s, 2, 1), SW_BATCH);
	assert_int_equal(sw_pending(s, 2), 1024 - SW_BATCH);
	assert_int_equal(sw_forward(s, 2, 1), 1024 - SW_BATCH);
	assert_int_equal(sw_forward(s, 2, 1), 0);
	sw_port_detach(s, 2);
	free(m);
}

static void test_kick_only_when_asked(void **state)
{
	struct ring *r = ring_region_rx(mem[1]);
	(void)state;
	/* Busy receiver (cur never moved): one kick at most, then none. */
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 1);
	assert_int_equal(kicks[1], 1); /* cur == 0 == old tail: crossed once */
	for (int i = 0; i < 4; i++) {
		send_frame(0, 1, 0xff, 60);
		sw_forward(s, 0, 1);
		recv_all(1, NULL);
	}
	assert_int_equal(kicks[1], 1);
	/* The receiver goes to sleep: cur = tail.  The next frame kicks. */
	recv_all(1, NULL);
	r->cur = ring_load(&r->tail);
	send_frame(0, 1, 0xff, 60);
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 2);
	assert_int_equal(kicks[1], 2);
	assert_int_equal(s->port[1].st.kicks, 2);
	/* The sleeping-switch flag. */
	sw_set_sleeping(s, true);
	assert_int_equal(ring_region_tx(mem[2])->kflags, SWPORT_KF_SLEEPING);
	sw_set_sleeping(s, false);
	assert_int_equal(ring_region_tx(mem[2])->kflags, 0);
	assert_true(swport_need_kick(10, 10, 11));
	assert_false(swport_need_kick(10, 11, 12));
	assert_true(swport_need_kick(UINT32_MAX, UINT32_MAX - 1, 3)); /* wraps */
}

static void test_detach_forgets(void **state)
{
	unsigned d;
	(void)state;
	send_frame(1, 2, 0xff, 60); /* host 2 is on port 1 */
	sw_forward(s, 1, 1);
	recv_all(0, NULL);
	recv_all(2, NULL);
	sw_port_detach(s, 1);
	assert_int_equal(sw_forward(s, 1, 1), 0);
	/* Host 2's entry went with the port: traffic to it floods again. */
	send_frame(0, 1, 2, 60);
	sw_forward(s, 0, 2);
	assert_int_equal(recv_all(2, &d), 1);
	assert_int_equal(d, 2);
	/* A fresh region re-attaches at the same port. */
	assert_int_equal(ring_region_init(mem[1], msize, SLOTS, RING_BUF_SIZE_DEFAULT, 0), 0);
	assert_int_equal(sw_port_attach(s, 1, mem[1], msize), 0);
	assert_int_equal(sw_port_attach(s, 1, mem[1], msize), -1); /* busy */
	assert_int_equal(sw_port_attach(s, NPORTS, mem[1], msize), -1);
	assert_int_equal(s->port[1].st.attaches, 2);
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 3);
	assert_int_equal(recv_all(1, NULL), 1);
}

static void test_same_port_dropped(void **state)
{
	(void)state;
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 1);
	send_frame(0, 5, 1, 60); /* to a host learned on the sender's own port */
	sw_forward(s, 0, 1);
	assert_int_equal(s->port[0].st.drop_same_port, 1);
	assert_int_equal(recv_all(1, NULL), 1);
}

static void test_hostile_sender(void **state)
{
	struct ring *t = ring_region_tx(mem[0]);
	uint32_t head;
	(void)state;
	/* head beyond every slot it could own: nothing is taken. */
	head = t->head;
	ring_store(&t->head, head + SLOTS + 1);
	assert_int_equal(sw_pending(s, 0), 0);
	assert_int_equal(sw_forward(s, 0, 1), 0);
	assert_int_equal(s->port[0].st.bad_index, 1);
	ring_store(&t->head, head - 5); /* behind the switch's tail */
	assert_int_equal(sw_forward(s, 0, 1), 0);
	assert_int_equal(s->port[0].st.bad_index, 2);
	ring_store(&t->head, head);
	/* Bad slots: each is consumed and counted, the good one goes through. */
	send_frame(0, 1, 0xff, 60);
	ring_slot(t, t->head - 1)->buf_idx = 2 * SLOTS; /* == nbufs */
	send_frame(0, 1, 0xff, 60);
	ring_slot(t, t->head - 1)->buf_idx = UINT32_MAX;
	send_frame(0, 1, 0xff, 60);
	ring_slot(t, t->head - 1)->len = RING_BUF_SIZE_DEFAULT + 1;
	send_frame(0, 1, 0xff, 60);
	ring_slot(t, t->head - 1)->len = 13;
	send_frame(0, 1, 0xff, 60);
	ring_slot(t, t->head - 1)->len = 0;
	send_frame(0, 1, 0xff, 60); /* a good one */
	assert_int_equal(sw_forward(s, 0, 1), 6);
	assert_int_equal(s->port[0].st.drop_bad_slot, 3);
	assert_int_equal(s->port[0].st.drop_runt, 2);
	assert_int_equal(recv_all(1, NULL), 1);
	/* It scribbles over the ring constants the switch does not own: the
	 * switch uses its own copies, so nothing changes for anyone. */
	t->num_slots = 1u << 30;
	t->nbufs = UINT32_MAX;
	t->buf_size = 65536;
	t->buf_ofs = -((int64_t)1 << 40);
	t->tail = 12345;
	ring_region_rx(mem[0])->buf_ofs = (int64_t)1 << 40;
	ring_region_rx(mem[0])->num_slots = 1;
	struct ring_slot *sl = &t->slot[t->head & (SLOTS - 1)];
	uint8_t *b = (uint8_t *)mem[0] + ((struct ring_region *)mem[0])->pool_ofs +
		     (size_t)sl->buf_idx * RING_BUF_SIZE_DEFAULT;
	memset(b, 0xff, 6);
	mac(b + 6, 1);
	for (unsigned i = 12; i < 60; i++)
		b[i] = (uint8_t)(i + 1);
	sl->len = 60;
	ring_store(&t->head, t->head + 1);
	assert_int_equal(sw_forward(s, 0, 2), 1);
	assert_int_equal(recv_all(1, NULL), 1);
	/* Frames to it still land in its own pool, in bounds. */
	send_frame(1, 2, 0xff, 60);
	assert_int_equal(sw_forward(s, 1, 2), 1);
	assert_int_equal(s->port[0].st.tx_frames, 1);
}

static void test_hostile_receiver(void **state)
{
	struct ring *r = ring_region_rx(mem[1]);
	(void)state;
	/* rx head past the switch's tail: nothing delivered there, counted;
	 * the other ports are not affected. */
	ring_store(&r->head, 100);
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 1);
	assert_int_equal(s->port[1].st.bad_index, 1);
	assert_int_equal(s->port[1].st.drop_full, 1);
	assert_int_equal(recv_all(2, NULL), 1);
	ring_store(&r->head, 0);
	/* A free rx slot holding a bad buffer index: that frame and the rest
	 * of the batch for this port are dropped and counted. */
	r->slot[0].buf_idx = 2 * SLOTS;
	send_frame(0, 1, 0xff, 60);
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 1);
	assert_int_equal(s->port[1].st.drop_bad_rx, 2);
	assert_int_equal(s->port[1].st.tx_frames, 0);
	/* Repaired, delivery resumes. */
	r->slot[0].buf_idx = 0;
	send_frame(0, 1, 0xff, 60);
	sw_forward(s, 0, 1);
	assert_int_equal(recv_all(1, NULL), 1);
}

/* ---- ports of more than one queue (--workers N hosts) ---- */

static void *mq[2]; /* port 1's two queues, replacing its one region */

/* Put frame f in the tx ring of region m. */
static void send_raw(void *m, const uint8_t *f, uint16_t len)
{
	struct ring *t = ring_region_tx(m);
	struct ring_slot *sl = ring_slot(t, t->head);

	assert_true(ring_avail(t) > 0);
	memcpy(ring_buf(t, sl->buf_idx), f, len);
	sl->len = len;
	ring_store(&t->head, t->head + 1);
}

/* An Ethernet + IPv4 + TCP header (60 bytes with padding) from host src to
 * host dst (0xff: broadcast), 198.18.0.sip:sport -> 198.18.0.1:80. */
static const uint8_t *tcp_frame(uint8_t f[60], unsigned src, unsigned dst, uint8_t sip,
				uint16_t sport)
{
	memset(f, 0, 60);
	if (dst == 0xff)
		memset(f, 0xff, 6);
	else
		mac(f, dst);
	mac(f + 6, src);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 40;
	f[22] = 64;
	f[23] = 6;
	f[26] = 198, f[27] = 18, f[28] = 0, f[29] = sip;
	f[30] = 198, f[31] = 18, f[32] = 0, f[33] = 1;
	f[34] = (uint8_t)(sport >> 8), f[35] = (uint8_t)sport;
	f[36] = 0, f[37] = 80;
	f[46] = 0x50;
	return f;
}

/* Take every frame in region m's rx ring; check each hashes to queue qi of
 * nq; returns how many. */
static unsigned take_checked(void *m, unsigned qi, unsigned nq)
{
	struct ring *r = ring_region_rx(m);
	unsigned n = 0;

	while (ring_avail(r)) {
		struct ring_slot *sl = ring_slot(r, r->head);
		const uint8_t *b = ring_buf(r, sl->buf_idx);
		assert_int_equal(flow_hash_worker(flow_hash_frame(b, sl->len), nq), qi);
		ring_store(&r->head, r->head + 1);
		n++;
	}
	return n;
}

/* Port 1 becomes a port of two queues (host 2 lives there, learned). */
static int setup_mq(void **state)
{
	uint8_t f[60];
	if (setup(state) != 0)
		return -1;
	sw_port_detach(s, 1);
	for (unsigned i = 0; i < 2; i++) {
		mq[i] = aligned_alloc(64, msize);
		if (mq[i] == NULL || ring_region_init(mq[i], msize, SLOTS, RING_BUF_SIZE_DEFAULT, 0))
			return -1;
		if (sw_queue_attach(s, 1, i, 2, mq[i], msize) != 0)
			return -1;
	}
	/* Host 2 speaks from queue 1: the switch reads every queue's tx, and
	 * learns host 2 on port 1. */
	send_raw(mq[1], tcp_frame(f, 2, 0xff, 1, 80), 60);
	if (sw_forward(s, 1, 1) != 1 || s->port[1].q[1].taken != 1)
		return -1;
	ring_store(&ring_region_rx(mem[0])->head, ring_load(&ring_region_rx(mem[0])->tail));
	ring_store(&ring_region_rx(mem[2])->head, ring_load(&ring_region_rx(mem[2])->tail));
	memset(kicks, 0, sizeof(kicks));
	memset(qkicks, 0, sizeof(qkicks));
	return 0;
}

static int teardown_mq(void **state)
{
	for (unsigned i = 0; i < 2; i++)
		free(mq[i]);
	return teardown(state);
}

/* Frames of many flows to a 2-queue port land on the queue flow_hash picks;
 * the same flows to a 1-queue port all reach its one ring; ARP and
 * broadcast frames go to queue 0. */
static void test_mq_steering(void **state)
{
	uint8_t f[60];
	unsigned want[2] = {0, 0}, got0, got1;
	(void)state;
	for (unsigned i = 0; i < SLOTS; i++) {
		uint16_t sport = (uint16_t)(40000 + 7 * i);
		tcp_frame(f, 1, 2, (uint8_t)(10 + i % 5), sport);
		want[flow_hash_worker(flow_hash_frame(f, 60), 2)]++;
		send_raw(mem[0], f, 60);
	}
	assert_int_equal(sw_forward(s, 0, 2), SLOTS);
	got0 = take_checked(mq[0], 0, 2);
	got1 = take_checked(mq[1], 1, 2);
	assert_int_equal(got0, want[0]);
	assert_int_equal(got1, want[1]);
	assert_true(got0 > 0 && got1 > 0); /* the flows do spread */
	assert_int_equal(s->port[1].q[0].delivered, want[0]);
	assert_int_equal(s->port[1].q[1].delivered, want[1]);
	assert_int_equal(s->port[1].st.tx_frames, SLOTS);
	/* Each queue's process is woken on its own (both cur at 0). */
	assert_int_equal(qkicks[1][0], 1);
	assert_int_equal(qkicks[1][1], 1);
	/* The same flows from port 1 (its queue 0 and 1 alike) to host 1 on
	 * port 0, a port of one queue: all arrive, in order, nothing hashed. */
	for (unsigned i = 0; i < 8; i++) {
		tcp_frame(f, 2, 1, (uint8_t)(10 + i), (uint16_t)(40000 + i));
		send_raw(mq[i & 1], f, 60);
	}
	assert_int_equal(sw_pending(s, 1), 8);
	assert_int_equal(sw_forward(s, 1, 3), 8);
	assert_int_equal(take_checked(mem[0], 0, 1), 8);
	assert_int_equal(s->port[1].q[0].taken, 4);
	assert_int_equal(s->port[1].q[1].taken, 4 + 1);
	/* ARP (no IP header to hash) and broadcast: queue 0. */
	{
		struct ring *r0 = ring_region_rx(mq[0]);
		uint32_t t0 = ring_load(&r0->tail);
		memset(f, 0xff, 6);
		mac(f + 6, 1);
		f[12] = 0x08;
		f[13] = 0x06; /* ARP */
		send_raw(mem[0], f, 60);
		f[12] = 0x88;
		f[13] = 0xcc; /* LLDP: no IP either */
		send_raw(mem[0], f, 60);
		assert_int_equal(sw_forward(s, 0, 4), 2);
		assert_int_equal(ring_load(&r0->tail) - t0, 2);
		assert_int_equal(ring_avail(ring_region_rx(mq[1])), 0);
		assert_int_equal(take_checked(mem[2], 0, 1), 2); /* flooded to port 2 too */
	}
	assert_int_equal(s->port[1].st.drop_no_queue, 0);
}

/* A hostile process on queue 1: its heads and slots are checked exactly as
 * queue 0's, and queue 0 of the same port is not affected. */
static void test_mq_hostile_queue1(void **state)
{
	struct ring *t1 = ring_region_tx(mq[1]), *r1 = ring_region_rx(mq[1]);
	uint8_t f[60];
	uint32_t head;
	unsigned q0_flow = 0, q1_flow = 0;
	(void)state;
	/* tx head out of range on queue 1: nothing of it is taken; queue 0's
	 * frame goes through. */
	head = t1->head;
	ring_store(&t1->head, head + SLOTS + 1);
	send_raw(mq[0], tcp_frame(f, 2, 1, 9, 1234), 60);
	assert_int_equal(sw_pending(s, 1), 1);
	assert_int_equal(sw_forward(s, 1, 2), 1);
	assert_int_equal(s->port[1].st.bad_index, 1);
	ring_store(&t1->head, head - 3); /* behind the switch's tail */
	assert_int_equal(sw_forward(s, 1, 2), 0);
	assert_int_equal(s->port[1].st.bad_index, 2);
	ring_store(&t1->head, head);
	assert_int_equal(take_checked(mem[0], 0, 1), 1);
	/* Bad slots on queue 1: consumed and counted, the good one goes. */
	send_raw(mq[1], tcp_frame(f, 2, 1, 9, 1), 60);
	ring_slot(t1, t1->head - 1)->buf_idx = 2 * SLOTS;
	send_raw(mq[1], tcp_frame(f, 2, 1, 9, 2), 60);
	ring_slot(t1, t1->head - 1)->len = RING_BUF_SIZE_DEFAULT + 1;
	send_raw(mq[1], tcp_frame(f, 2, 1, 9, 3), 60);
	ring_slot(t1, t1->head - 1)->len = 10;
	send_raw(mq[1], tcp_frame(f, 2, 1, 9, 4), 60);
	assert_int_equal(sw_forward(s, 1, 3), 4);
	assert_int_equal(s->port[1].st.drop_bad_slot, 2);
	assert_int_equal(s->port[1].st.drop_runt, 1);
	assert_int_equal(take_checked(mem[0], 0, 1), 1);
	/* Find a flow of each queue. */
	for (uint16_t p = 1000; q0_flow == 0 || q1_flow == 0; p++) {
		tcp_frame(f, 1, 2, 7, p);
		if (flow_hash_worker(flow_hash_frame(f, 60), 2) == 0)
			q0_flow = q0_flow ? q0_flow : p;
		else
			q1_flow = q1_flow ? q1_flow : p;
	}
	/* rx head out of range on queue 1: its frames are dropped and
	 * counted; queue 0's still arrive. */
	ring_store(&r1->head, ring_load(&r1->tail) + 100);
	send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
	send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q0_flow), 60);
	assert_int_equal(sw_forward(s, 0, 4), 2);
	assert_int_equal(s->port[1].st.bad_index, 3);
	assert_int_equal(s->port[1].st.drop_full, 1);
	assert_int_equal(take_checked(mq[0], 0, 2), 1);
	ring_store(&r1->head, ring_load(&r1->tail));
	/* A free rx slot of queue 1 holding a bad buffer index: the rest of
	 * the batch for queue 1 is dropped; queue 0's frame still arrives. */
	{
		struct ring_slot *sl = &r1->slot[ring_load(&r1->tail) & (SLOTS - 1)];
		uint32_t good = sl->buf_idx;
		sl->buf_idx = UINT32_MAX;
		send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
		send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q0_flow), 60);
		send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
		assert_int_equal(sw_forward(s, 0, 5), 3);
		assert_int_equal(s->port[1].st.drop_bad_rx, 2);
		assert_int_equal(take_checked(mq[0], 0, 2), 1);
		assert_int_equal(ring_avail(r1), 0);
		sl->buf_idx = good; /* repaired: delivery resumes */
		send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
		assert_int_equal(sw_forward(s, 0, 6), 1);
		assert_int_equal(take_checked(mq[1], 1, 2), 1);
	}
	/* Scribbled ring constants on queue 1 change nothing: private copies. */
	t1->num_slots = 1u << 30;
	t1->nbufs = UINT32_MAX;
	r1->buf_size = 1;
	r1->num_slots = 1;
	send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
	assert_int_equal(sw_forward(s, 0, 7), 1);
	assert_int_equal(s->port[1].q[1].delivered, 2);
}

/* The queue count and the queues' lifetimes. */
static void test_mq_attach_rules(void **state)
{
	uint8_t f[60];
	unsigned q1_flow = 0;
	(void)state;
	assert_int_equal(s->port[1].nq, 2);
	assert_int_equal(sw_queue_attach(s, 1, 1, 2, mq[1], msize), -1); /* held */
	assert_int_equal(sw_queue_attach(s, 1, 0, 3, mq[1], msize), -1); /* another N */
	assert_int_equal(sw_port_attach(s, 1, mq[1], msize), -1);         /* N = 1 */
	assert_int_equal(sw_queue_attach(s, 2, 2, 2, mq[1], msize), -1); /* queue >= N */
	assert_int_equal(sw_queue_attach(s, 2, 0, SW_QUEUES_MAX + 1, mq[1], msize), -1);
	assert_int_equal(sw_queue_attach(s, 2, 0, 0, mq[1], msize), -1);
	/* Queue 1 goes: its flows are dropped (counted), the port stays, and
	 * host 2 stays learned on it. */
	sw_queue_detach(s, 1, 1);
	assert_true(s->port[1].attached);
	for (uint16_t p = 1000; q1_flow == 0; p++) {
		tcp_frame(f, 1, 2, 7, p);
		if (flow_hash_worker(flow_hash_frame(f, 60), 2) == 1)
			q1_flow = p;
	}
	send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
	assert_int_equal(sw_forward(s, 0, 2), 1);
	assert_int_equal(s->port[1].st.drop_no_queue, 1);
	assert_int_equal(take_checked(mem[2], 0, 1), 0); /* not flooded: host 2 is known */
	/* A new region takes queue 1 again. */
	assert_int_equal(ring_region_init(mq[1], msize, SLOTS, RING_BUF_SIZE_DEFAULT, 0), 0);
	assert_int_equal(sw_queue_attach(s, 1, 1, 2, mq[1], msize), 0);
	send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
	assert_int_equal(sw_forward(s, 0, 3), 1);
	assert_int_equal(take_checked(mq[1], 1, 2), 1);
	/* With its last queue the port goes, and what it learned. */
	sw_queue_detach(s, 1, 0);
	sw_queue_detach(s, 1, 1);
	assert_false(s->port[1].attached);
	assert_int_equal(sw_forward(s, 1, 3), 0);
	assert_int_equal(ring_region_init(mq[0], msize, SLOTS, RING_BUF_SIZE_DEFAULT, 0), 0);
	assert_int_equal(sw_port_attach(s, 1, mq[0], msize), 0); /* now one queue */
	send_raw(mem[0], tcp_frame(f, 1, 2, 7, (uint16_t)q1_flow), 60);
	assert_int_equal(sw_forward(s, 0, 4), 1);
	assert_int_equal(take_checked(mq[0], 0, 1), 1); /* flooded: host 2 forgotten */
	assert_int_equal(take_checked(mem[2], 0, 1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flood_then_learn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_ring_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kick_only_when_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detach_forgets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_port_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_sender, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_receiver, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mq_steering, setup_mq, teardown_mq),
		cmocka_unit_test_setup_teardown(test_mq_hostile_queue1, setup_mq, teardown_mq),
		cmocka_unit_test_setup_teardown(test_mq_attach_rules, setup_mq, teardown_mq),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
