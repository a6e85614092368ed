/* ring_test.c — layout, ownership and validation of ring regions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ring/ring.h"

#define NS 8u
#define BS 2048u
#define EXTRA 4u

struct fixture {
	void *mem;
	size_t size;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->size = ring_region_size(NS, BS, EXTRA);
	assert_true(f->size > 0);
	f->mem = aligned_alloc(64, f->size);
	assert_non_null(f->mem);
	assert_int_equal(ring_region_init(f->mem, f->size, NS, BS, EXTRA), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	free(f->mem);
	free(f);
	return 0;
}

static void test_size_rejects_bad_params(void **state)
{
	(void)state;
	assert_int_equal(ring_region_size(0, BS, 0), 0);
	assert_int_equal(ring_region_size(1, BS, 0), 0);
	assert_int_equal(ring_region_size(3, BS, 0), 0);
	assert_int_equal(ring_region_size(12, BS, 0), 0);
	assert_int_equal(ring_region_size(8, 0, 0), 0);
	assert_int_equal(ring_region_size(8, 100, 0), 0);
	/* nbufs overflows 32 bits */
	assert_int_equal(ring_region_size(1u << 31, 64, 0), 0);
	assert_int_equal(ring_region_size(1u << 30, 64, UINT32_MAX - (1u << 30)), 0);
	/* pool bytes overflow 64 bits is impossible with 32-bit inputs, but
	 * a huge pool must still be computed without wrapping */
	size_t big = ring_region_size(1u << 20, 1u << 26, 0);
	assert_true(big == 0 || big > ((size_t)1 << 46));
}

static void test_layout(void **state)
{
	struct fixture *f = *state;
	struct ring_region *h = f->mem;
	struct ring *rx = ring_region_rx(f->mem), *tx = ring_region_tx(f->mem);
	uint8_t *base = f->mem;

	assert_int_equal(h->magic, RING_MAGIC);
	assert_int_equal(h->version, RING_VERSION);
	assert_int_equal(h->size, f->size);
	assert_int_equal(h->nbufs, 2 * NS + EXTRA);
	assert_int_equal(h->extra_first, 2 * NS);
	assert_int_equal(h->extra_count, EXTRA);
	assert_int_equal(h->rx_ofs % 64, 0);
	assert_int_equal(h->tx_ofs % 64, 0);
	assert_int_equal(h->pool_ofs % 64, 0);
	/* header < rx < tx < pool, no overlap */
	assert_true(h->rx_ofs >= sizeof(*h));
	assert_true(h->tx_ofs >= h->rx_ofs + sizeof(struct ring) + NS * sizeof(struct ring_slot));
	assert_true(h->pool_ofs >= h->tx_ofs + sizeof(struct ring) + NS * sizeof(struct ring_slot));
	assert_int_equal(h->pool_ofs + (uint64_t)h->nbufs * BS, h->size);
	/* (u) and (k) fields on their own cache lines */
	assert_int_equal(offsetof(struct ring, head) % 64, 0);
	assert_int_equal(offsetof(struct ring, tail) % 64, 0);
	assert_true(offsetof(struct ring, tail) - offsetof(struct ring, head) >= 64);

	/* every buffer is attached to exactly one slot or is extra */
	uint8_t seen[2 * NS + EXTRA] = {0};
	for (uint32_t i = 0; i < NS; i++) {
		seen[rx->slot[i].buf_idx]++;
		seen[tx->slot[i].buf_idx]++;
	}
	for (uint32_t i = 0; i < 2 * NS; i++)
		assert_int_equal(seen[i], 1);
	for (uint32_t i = 2 * NS; i < 2 * NS + EXTRA; i++)
		assert_int_equal(seen[i], 0);

	/* buffers resolve through the offset, from either ring */
	assert_ptr_equal(ring_buf(rx, 0), base + h->pool_ofs);
	assert_ptr_equal(ring_buf(tx, 3), base + h->pool_ofs + 3 * BS);
	assert_ptr_equal(ring_buf(rx, h->nbufs - 1), base + h->size - BS);
}

static void test_initial_ownership(void **state)
{
	struct fixture *f = *state;
	struct ring *rx = ring_region_rx(f->mem), *tx = ring_region_tx(f->mem);

	/* rx empty: the device owns every slot */
	assert_int_equal(rx->head, 0);
	assert_int_equal(rx->tail, 0);
	assert_int_equal(ring_avail(rx), 0);
	/* tx all free: the user owns every slot */
	assert_int_equal(tx->head, 0);
	assert_int_equal(tx->tail, NS);
	assert_int_equal(ring_avail(tx), NS);
	assert_int_equal(ring_region_check(f->mem, f->size), 0);
}

/* Run a device/user exchange across the 32-bit wrap of the free-running
 * indices; the frame count must come out right on every step. */
static void test_wraparound(void **state)
{
	struct fixture *f = *state;
	struct ring *rx = ring_region_rx(f->mem), *tx = ring_region_tx(f->mem);
	uint32_t start = UINT32_MAX - 5;
	uint32_t seq = 0, got = 0;

	rx->head = start;
	ring_store(&rx->tail, start);
	tx->head = start;
	ring_store(&tx->tail, start + NS); /* wraps past zero */
	assert_int_equal(ring_avail(tx), NS);
	assert_int_equal(ring_region_check(f->mem, f->size), 0);

	for (int round = 0; round < 40; round++) {
		/* device: fill every free rx slot */
		uint32_t t = rx->tail;
		while (t - ring_load(&rx->head) < NS) {
			struct ring_slot *s = ring_slot(rx, t);
			memcpy(ring_buf(rx, s->buf_idx), &seq, sizeof(seq));
			s->len = sizeof(seq);
			seq++;
			t++;
		}
		ring_store(&rx->tail, t);
		assert_int_equal(ring_avail(rx), NS);
		/* user: read some, in order */
		uint32_t take = (uint32_t)(round % 5) + 1;
		for (uint32_t k = 0; k < take; k++) {
			struct ring_slot *s = ring_slot(rx, rx->head);
			uint32_t v;
			memcpy(&v, ring_buf(rx, s->buf_idx), sizeof(v));
			assert_int_equal(v, got);
			got++;
			ring_store(&rx->head, rx->head + 1);
		}
		assert_int_equal(ring_avail(rx), NS - take);

		/* tx: user hands over `take` slots, device completes them */
		assert_true(ring_avail(tx) >= take);
		ring_store(&tx->head, tx->head + take);
		assert_int_equal(ring_avail(tx), NS - take);
		ring_store(&tx->tail, tx->head + NS);
		assert_int_equal(ring_avail(tx), NS);
		assert_int_equal(ring_region_check(f->mem, f->size), 0);
	}
	assert_true(rx->head < start); /* really wrapped */
	assert_true(tx->head < start);
}

static void test_buf_swap(void **state)
{
	struct fixture *f = *state;
	struct ring_region *h = f->mem;
	struct ring *rx = ring_region_rx(f->mem);

	/* the user swaps an extra buffer into an rx slot it owns */
	ring_store(&rx->tail, 1);
	struct ring_slot *s = ring_slot(rx, 0);
	uint32_t old = s->buf_idx;
	s->buf_idx = h->extra_first;
	s->flags |= RING_SLOT_BUF_CHANGED;
	assert_int_equal(ring_region_check(f->mem, f->size), 0);
	s->buf_idx = h->nbufs; /* one past the pool */
	assert_int_equal(ring_region_check(f->mem, f->size), -1);
	s->buf_idx = old;
	assert_int_equal(ring_region_check(f->mem, f->size), 0);
}

static void test_init_rejects(void **state)
{
	(void)state;
	size_t sz = ring_region_size(NS, BS, 0);
	uint8_t *mem = aligned_alloc(64, sz + 64);
	assert_non_null(mem);
	assert_int_equal(ring_region_init(mem, sz - 1, NS, BS, 0), -1);
	assert_int_equal(ring_region_init(mem + 8, sz, NS, BS, 0), -1);
	assert_int_equal(ring_region_init(mem, sz, 6, BS, 0), -1);
	assert_int_equal(ring_region_init(NULL, sz, NS, BS, 0), -1);
	assert_int_equal(ring_region_init(mem, sz, NS, BS, 0), 0);
	assert_int_equal(ring_region_check(mem, sz), 0);
	assert_int_equal(ring_region_check(mem, sz - 1), -1);
	assert_int_equal(ring_region_check(mem, 16), -1);
	free(mem);
}

/* Each corruption on a fresh copy of a good region must be rejected. */
static void expect_rejected(struct fixture *f, void (*corrupt)(void *mem))
{
	void *copy = aligned_alloc(64, f->size);
	assert_non_null(copy);
	memcpy(copy, f->mem, f->size);
	assert_int_equal(ring_region_check(copy, f->size), 0);
	corrupt(copy);
	int rc = ring_region_check(copy, f->size);
	free(copy);
	assert_int_equal(rc, -1);
}

static struct ring_region *hdr(void *m) { return m; }
static void c_magic(void *m) { hdr(m)->magic ^= 1; }
static void c_version(void *m) { hdr(m)->version = RING_VERSION + 1; }
static void c_size_big(void *m) { hdr(m)->size += 64; }
static void c_rx_ofs(void *m) { hdr(m)->rx_ofs = hdr(m)->size; }
static void c_tx_ofs_huge(void *m) { hdr(m)->tx_ofs = UINT64_MAX - 8; }
static void c_tx_overlap(void *m) { hdr(m)->tx_ofs = hdr(m)->rx_ofs; }
static void c_pool_ofs(void *m) { hdr(m)->pool_ofs += 64; }
static void c_nbufs(void *m) { hdr(m)->nbufs += 1000; }
static void c_nbufs_small(void *m) { hdr(m)->nbufs = 1; }
static void c_num_slots_np2(void *m) { hdr(m)->num_slots = 6; }
static void c_buf_size(void *m) { hdr(m)->buf_size = 100; }
static void c_extra(void *m) { hdr(m)->extra_count += 1; }
static void c_ring_magic(void *m) { ring_region_tx(m)->magic = 0; }
static void c_ring_version(void *m) { ring_region_rx(m)->version = 7; }
static void c_ring_slots(void *m) { ring_region_rx(m)->num_slots = NS * 2; }
static void c_ring_nbufs(void *m) { ring_region_tx(m)->nbufs = UINT32_MAX; }
static void c_ring_buf_ofs(void *m) { ring_region_rx(m)->buf_ofs = -4096; }
static void c_buf_idx(void *m) { ring_region_tx(m)->slot[NS - 1].buf_idx = 2 * NS + EXTRA; }
static void c_buf_idx_max(void *m) { ring_region_rx(m)->slot[0].buf_idx = UINT32_MAX; }
static void c_len(void *m) { ring_region_rx(m)->slot[2].len = BS + 1; }
static void c_indices(void *m) { ring_region_rx(m)->tail = NS + 1; }
static void c_tx_indices(void *m) { ring_region_tx(m)->head = NS + 1; /* head past tail */ }

static void test_check_rejects_corruption(void **state)
{
	struct fixture *f = *state;
	void (*const cases[])(void *) = {
		c_magic,	 c_version,	 c_size_big,	  c_rx_ofs,	   c_tx_ofs_huge,
		c_tx_overlap,	 c_pool_ofs,	 c_nbufs,	  c_nbufs_small,   c_num_slots_np2,
		c_buf_size,	 c_extra,	 c_ring_magic,	  c_ring_version,  c_ring_slots,
		c_ring_nbufs,	 c_ring_buf_ofs, c_buf_idx,	  c_buf_idx_max,   c_len,
		c_indices,	 c_tx_indices,
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(cases); i++)
		expect_rejected(f, cases[i]);
}

static void test_check_misaligned_and_truncated(void **state)
{
	struct fixture *f = *state;
	uint8_t *buf = aligned_alloc(64, f->size + 64);
	assert_non_null(buf);
	memcpy(buf + 8, f->mem, f->size);
	assert_int_equal(ring_region_check(buf + 8, f->size), -1);
	assert_int_equal(ring_region_check(f->mem, f->size - BS), -1);
	assert_int_equal(ring_region_check(f->mem, 0), -1);
	assert_int_equal(ring_region_check(NULL, f->size), -1);
	/* a larger mapping than the region is fine */
	memcpy(buf, f->mem, f->size);
	assert_int_equal(ring_region_check(buf, f->size + 64), 0);
	free(buf);
}

static void test_sizes_scale(void **state)
{
	(void)state;
	/* the default geometry, and that more slots never shrink the region */
	size_t prev = 0;
	for (uint32_t ns = 2; ns <= 4096; ns *= 2) {
		size_t s = ring_region_size(ns, RING_BUF_SIZE_DEFAULT, 0);
		assert_true(s > prev);
		assert_true(s >= (size_t)2 * ns * RING_BUF_SIZE_DEFAULT);
		prev = s;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_rejects_bad_params),
		cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_initial_ownership, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wraparound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_buf_swap, setup, teardown),
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test_setup_teardown(test_check_rejects_corruption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_misaligned_and_truncated, setup, teardown),
		cmocka_unit_test(test_sizes_scale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
