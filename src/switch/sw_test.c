/* sw_test.c — the forwarding engine over in-memory regions: flooding and
 * learning, batch bounds, full rings, wake-ups, detach, and a hostile
 * peer writing nonsense into everything it owns (and what it does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "switch/sw.h"
#include "switch/swport.h"

#define NPORTS 3
#define SLOTS 16u

static struct sw *s;
static void *mem[NPORTS];
static size_t msize;
static unsigned kicks[NPORTS];

static void on_kick(void *ctx, unsigned port)
{
	(void)ctx;
	kicks[port]++;
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
