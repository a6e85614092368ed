/* tcp_tso_test.c — TCP over an iface on a device with offloads (ring.h
 * offload frames), against a peer without them.
 *
 * Two stacks, each an iface and a TCP engine on a device of its own; the
 * "wire" between them is the devices' tx_sync, which does what a kernel
 * does with an offload frame: it joins the frame's slots, checks its
 * ring_vnet with wire/vnet.h, cuts a TSO frame into MTU-sized segments
 * (vnet_seg computes each segment's checksum in full) or finishes a partial
 * checksum (vnet_csum_finish), and puts the result in the peer's rx ring,
 * where the peer's stack verifies every checksum as usual.  So a checksum
 * field TCP got wrong, a TSO frame whose headers lie, or bytes out of place
 * in a frame of several buffers, shows up as a checksum drop or a wrong byte
 * on the receiving side.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/iface_priv.h"
#include "net/tcp.h"
#include "net/tcp_iface.h"
#include "net/tcp_int.h"
#include "wire/vnet.h"

#define SLOTS 256u
#define BUF 2048u
#define PORT 80

struct side {
	struct dev dev; /* first */
	void *mem;
	struct iface ifc;
	struct tcp_stack st;
	void *arena;
	struct side *peer;
	bool drop_next_tso; /* lose the next TSO frame whole, as a full queue would */
	unsigned tso_seen, vnet_seen, cut_segs, bad_vnet;
};

static uint8_t frame_buf[70000];
static uint8_t seg_buf[BUF];

static void deliver(struct side *to, const uint8_t *f, size_t len)
{
	struct ring *rx = to->dev.rx;
	if (ring_avail(rx) >= rx->num_slots) /* the user holds every slot */
		return;
	/* rx: the device owns [tail, head + num_slots); fill at tail. */
	if (rx->tail - rx->head >= rx->num_slots)
		return;
	struct ring_slot *s = ring_slot(rx, rx->tail);
	assert_true(len <= rx->buf_size);
	memcpy(ring_buf(rx, s->buf_idx), f, len);
	s->len = (uint16_t)len;
	s->flags = 0; /* the receiver verifies every checksum */
	ring_store(&rx->tail, rx->tail + 1);
}

/* The wire: every handed-over tx frame goes to the peer, cut or finished
 * as its ring_vnet asks, and its slots come back at once. */
static int side_tx_sync(struct dev *d)
{
	struct side *x = (struct side *)d;
	struct ring *tx = d->tx;
	uint32_t i = tx->tail - tx->num_slots, head = tx->head;
	while (i != head) {
		size_t len = 0;
		uint16_t first = ring_slot(tx, i)->flags;
		for (;;) {
			struct ring_slot *s = ring_slot(tx, i++);
			assert_true(len + s->len <= sizeof(frame_buf));
			memcpy(frame_buf + len, ring_buf(tx, s->buf_idx), s->len);
			len += s->len;
			if (!(s->flags & RING_SLOT_MORE))
				break;
			assert_true(i != head); /* a frame never ends past head */
		}
		if (!(first & RING_SLOT_VNET)) {
			deliver(x->peer, frame_buf, len);
			continue;
		}
		x->vnet_seen++;
		struct vnet_hdr h;
		vnet_hdr_read(frame_buf, &h);
		uint8_t *f = frame_buf + sizeof(struct ring_vnet);
		size_t flen = len - sizeof(struct ring_vnet);
		struct vnet_frame vf;
		if (vnet_parse(&h, f, flen, BUF, &vf) != WIRE_OK) {
			x->bad_vnet++;
			continue;
		}
		if (!vf.gso) {
			assert_true(h.flags & VNET_F_NEEDS_CSUM);
			assert_int_equal(vnet_csum_finish(f, flen, h.csum_start, h.csum_offset), WIRE_OK);
			deliver(x->peer, f, flen);
			continue;
		}
		x->tso_seen++;
		if (x->drop_next_tso) {
			x->drop_next_tso = false;
			continue;
		}
		for (uint32_t k = 0; k < vf.nsegs; k++) {
			size_t n = vnet_seg(&vf, f, k, seg_buf, sizeof(seg_buf));
			assert_true(n > 0);
			assert_true(n <= 14u + 1500u);
			x->cut_segs++;
			deliver(x->peer, seg_buf, n);
		}
	}
	ring_store(&tx->tail, head + tx->num_slots);
	return 0;
}

static int side_rx_sync(struct dev *d)
{
	(void)d;
	return 0;
}

static int side_poll_fd(struct dev *d)
{
	(void)d;
	return -1;
}

static void side_close(struct dev *d)
{
	(void)d;
}

static const struct dev_ops side_ops = {
	.kind = "wire",
	.rx_sync = side_rx_sync,
	.tx_sync = side_tx_sync,
	.poll_fd = side_poll_fd,
	.close = side_close,
};

static struct side *side_new(uint8_t host, uint32_t offload, sk_time_ns now)
{
	struct side *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	size_t size = (ring_region_size(SLOTS, BUF, 0) + 63) & ~(size_t)63;
	x->mem = aligned_alloc(64, size);
	assert_non_null(x->mem);
	assert_int_equal(ring_region_init(x->mem, size, SLOTS, BUF, 0), 0);
	x->dev.ops = &side_ops;
	x->dev.rx = ring_region_rx(x->mem);
	x->dev.tx = ring_region_tx(x->mem);
	x->dev.mtu = 1500;
	x->dev.offload = offload;
	x->dev.tso_max = offload ? 65535u + 14u : 0;
	strcpy(x->dev.name, "wire");
	struct iface_config ic = {.ip = SK_IP4(198, 18, 0, host), .prefix_len = 24, .seed = host};
	uint8_t mac[6] = {2, 0, 0, 0, 0, host};
	memcpy(ic.mac, mac, 6);
	iface_init(&x->ifc, &x->dev, &ic, now);
	struct tcp_config tc;
	tcp_config_default(&tc);
	tc.max_sockets = 8;
	tc.sndbuf = tc.rcvbuf = 256 * 1024;
	tc.seed[0] = host;
	tc.seed[1] = 7;
	tcp_iface_config(&tc, &x->ifc);
	size_t asz = tcp_arena_size(&tc);
	x->arena = calloc(1, asz);
	assert_non_null(x->arena);
	assert_int_equal(tcp_stack_init(&x->st, x->arena, asz, &tc, now), 0);
	assert_int_equal(tcp_iface_attach(&x->st, &x->ifc), 0);
	return x;
}

static void side_free(struct side *x)
{
	free(x->arena);
	free(x->mem);
	free(x);
}

static uint8_t pat(size_t i)
{
	return (uint8_t)(((uint32_t)i * 2654435761u) >> 24 ^ (uint32_t)(i >> 11));
}

/* The body the sender queues by reference (tcp_send_ref), twice, so that
 * alternate chunks can come from places that do not join. */
static uint8_t *body[2];

/* Server a (offloads `off`) sends `total` bytes to client b (none), which
 * checks every byte; returns the simulated ms it took.  by_ref 1: the body
 * by reference from one buffer (ranges join); 2: alternate chunks from two
 * copies (more ranges than a socket keeps: the rest is copied). */
static unsigned transfer_ref(uint32_t off, size_t total, bool lose_one, int by_ref)
{
	if (by_ref) {
		for (int k = 0; k < 2; k++) {
			body[k] = malloc(total);
			assert_non_null(body[k]);
			for (size_t i = 0; i < total; i++)
				body[k][i] = pat(i);
		}
	}
	unsigned chunks = 0;
	sk_time_ns now = 1000 * SK_NS_PER_S;
	struct side *a = side_new(1, off, now), *b = side_new(2, 0, now);
	a->peer = b;
	b->peer = a;
	a->drop_next_tso = lose_one;
	int ls = tcp_listen(&a->st, PORT, 8);
	assert_true(ls >= 0);
	int cb = tcp_connect(&b->st, now, a->ifc.ip, PORT);
	assert_true(cb >= 0);
	int sa = -1;
	size_t sent = 0, got = 0;
	uint8_t buf[32768];
	unsigned ms;
	for (ms = 0; ms < 60000 && got < total; ms++) {
		for (int k = 0; k < 4; k++) {
			iface_rx(&a->ifc, now);
			iface_rx(&b->ifc, now);
			iface_poll(&a->ifc, now);
			iface_poll(&b->ifc, now);
			tcp_poll(&a->st, now);
			tcp_poll(&b->st, now);
			if (sa < 0)
				sa = tcp_accept(&a->st, ls, NULL, NULL);
			while (sa >= 0 && sent < total) {
				size_t n = SK_MIN(sizeof(buf), total - sent);
				int r;
				if (by_ref) {
					const uint8_t *src = body[by_ref == 2 ? chunks++ % 2 : 0];
					r = tcp_send_ref(&a->st, sa, src + sent, n);
				} else {
					for (size_t i = 0; i < n; i++)
						buf[i] = pat(sent + i);
					r = tcp_send(&a->st, sa, buf, n);
				}
				if (r <= 0)
					break;
				sent += (size_t)r;
			}
			assert_int_equal(tcp_check(&a->st), 0);
			for (;;) {
				int r = tcp_recv(&b->st, cb, buf, sizeof(buf));
				if (r <= 0)
					break;
				for (int i = 0; i < r; i++)
					if (buf[i] != pat(got + (size_t)i))
						fail_msg("byte %zu differs", got + (size_t)i);
				got += (size_t)r;
			}
			struct tcp_event ev[16];
			while (tcp_events(&a->st, ev, 16) > 0)
				;
			while (tcp_events(&b->st, ev, 16) > 0)
				;
			tcp_poll(&a->st, now);
			tcp_poll(&b->st, now);
			dev_tx_sync(&a->dev);
			dev_tx_sync(&b->dev);
		}
		now += SK_NS_PER_MS;
	}
	assert_int_equal(got, total);
	/* Every frame the receiver got had a right checksum, made by TCP or
	 * finished from the partial sum TCP left. */
	assert_int_equal(b->st.stats.drop_parse_csum, 0);
	assert_int_equal(b->ifc.counters.ip_csum, 0);
	assert_int_equal(a->bad_vnet, 0);
	if (off & DEV_OFF_TSO4) {
		assert_true(a->tso_seen > 0);
		assert_int_equal(a->st.stats.tso_frames, a->tso_seen);
		print_message("tso frames %u, cut into %u segments; %llu frames in all, seg_out %llu, tso_fallbacks %llu, retransmits %llu\n", a->tso_seen, a->cut_segs, (unsigned long long)a->ifc.counters.tx_frames, (unsigned long long)a->st.stats.seg_out, (unsigned long long)a->st.stats.tso_fallbacks, (unsigned long long)a->st.stats.retransmits);
		assert_true(a->cut_segs >= total / 1448 / 2);
		/* far fewer frames than segments */
		assert_true(a->ifc.counters.tx_frames < a->cut_segs / 4);
	} else {
		assert_int_equal(a->tso_seen, 0);
		assert_int_equal(a->st.stats.tso_frames, 0);
	}
	if (off & DEV_OFF_TX_CSUM)
		assert_true(a->vnet_seen > 0);
	else
		assert_int_equal(a->vnet_seen, 0);
	if (lose_one)
		assert_true(a->st.stats.retransmits > 0);
	if (by_ref) {
		assert_true(a->st.stats.send_ref_bytes > 0);
		if (by_ref == 2)
			assert_true(a->st.stats.send_ref_copies > 0);
		else
			assert_int_equal(a->st.stats.send_ref_copies, 0);
	}
	/* Once every byte is acknowledged no reference is held. */
	for (int k = 0; k < 200 && tcp_refs_held(&a->st); k++) {
		iface_rx(&a->ifc, now);
		iface_rx(&b->ifc, now);
		tcp_poll(&a->st, now);
		tcp_poll(&b->st, now);
		dev_tx_sync(&a->dev);
		dev_tx_sync(&b->dev);
		now += SK_NS_PER_MS;
	}
	assert_int_equal(tcp_refs_held(&a->st), 0);
	assert_int_equal(tcp_check(&a->st), 0);
	side_free(a);
	side_free(b);
	if (by_ref) {
		free(body[0]);
		free(body[1]);
	}
	return ms;
}

static unsigned transfer(uint32_t off, size_t total, bool lose_one)
{
	return transfer_ref(off, total, lose_one, 0);
}

static void test_plain(void **state)
{
	(void)state;
	transfer(0, 1u << 20, false);
}

static void test_csum_offload(void **state)
{
	(void)state;
	transfer(DEV_OFF_TX_CSUM, 1u << 20, false);
}

static void test_tso(void **state)
{
	(void)state;
	transfer(DEV_OFF_TX_CSUM | DEV_OFF_TSO4 | DEV_OFF_TSO6, 4u << 20, false);
}

/* A whole TSO frame lost (40-odd segments at once): recovery resends it and
 * every byte still arrives in order. */
static void test_tso_loss(void **state)
{
	(void)state;
	transfer(DEV_OFF_TX_CSUM | DEV_OFF_TSO4, 2u << 20, true);
}

/* Odd sizes: a body that ends in a runt, in the middle of a buffer. */
static void test_tso_odd_length(void **state)
{
	(void)state;
	transfer(DEV_OFF_TX_CSUM | DEV_OFF_TSO4, 1000003u, false);
}

/* Bodies queued by reference: the frames are built from the caller's
 * bytes; a lost TSO frame is rebuilt from them. */
static void test_by_reference(void **state)
{
	(void)state;
	transfer_ref(DEV_OFF_TX_CSUM | DEV_OFF_TSO4, 3u << 20, true, 1);
	transfer_ref(0, 1u << 20, false, 1);
}

/* More separate ranges than a socket keeps: the rest is copied, and the
 * stream is still byte for byte what was queued. */
static void test_by_reference_mixed(void **state)
{
	(void)state;
	transfer_ref(DEV_OFF_TX_CSUM | DEV_OFF_TSO4, 2u << 20, true, 2);
	transfer_ref(0, 1000003u, false, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_csum_offload),
		cmocka_unit_test(test_tso),
		cmocka_unit_test(test_tso_loss),
		cmocka_unit_test(test_tso_odd_length),
		cmocka_unit_test(test_by_reference),
		cmocka_unit_test(test_by_reference_mixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
