/* ring.c — lay out and validate a ring region (see ring.h for the ABI).
 *
 * Layout, every part starting on a 64-byte boundary so that no two parts
 * share a cache line:
 *
 *   0          struct ring_region
 *   rx_ofs     struct ring + num_slots slots       (rx)
 *   tx_ofs     struct ring + num_slots slots       (tx)
 *   pool_ofs   nbufs * buf_size                    (buffers)
 *
 * Buffers 0 .. num_slots-1 start in rx slots, num_slots .. 2*num_slots-1 in
 * tx slots, and the rest (extra_first ..) belong to the user.
 *
 * Freestanding: only sk.h.  Every size computation is overflow-checked,
 * because ring_region_check runs on numbers another process or a guest wrote.
 */
#include "ring.h"

#define RING_ALIGN 64u

/* Round v up to RING_ALIGN; false on overflow. */
static bool align_up(uint64_t v, uint64_t *out)
{
	if (v > UINT64_MAX - (RING_ALIGN - 1))
		return false;
	*out = (v + RING_ALIGN - 1) & ~(uint64_t)(RING_ALIGN - 1);
	return true;
}

static bool is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* Bytes of one ring (header + slots), rounded to RING_ALIGN. */
static bool ring_bytes(uint32_t num_slots, uint64_t *out)
{
	/* num_slots <= 2^32 and a slot is 8 bytes: no uint64_t overflow. */
	return align_up(sizeof(struct ring) + (uint64_t)num_slots * sizeof(struct ring_slot), out);
}

/* The offsets and sizes of a layout; shared by size, init and check so the
 * three can never disagree. */
struct layout {
	uint64_t rx_ofs, tx_ofs, pool_ofs, size;
	uint32_t nbufs;
};

static bool params_ok(uint32_t num_slots, uint32_t buf_size)
{
	/* >= 2 so that rx and tx each have a real ring; <= 2^31 so that
	 * tail - head == num_slots stays representable in 32 bits. */
	return num_slots >= 2 && num_slots <= (1u << 31) && is_pow2(num_slots) && buf_size != 0 &&
	       buf_size % RING_ALIGN == 0;
}

static bool compute_layout(uint32_t num_slots, uint32_t buf_size, uint32_t extra_bufs,
			   struct layout *l)
{
	uint64_t rb, pool_bytes;

	if (!params_ok(num_slots, buf_size))
		return false;
	if (__builtin_add_overflow(num_slots, num_slots, &l->nbufs) ||
	    __builtin_add_overflow(l->nbufs, extra_bufs, &l->nbufs))
		return false;
	if (!ring_bytes(num_slots, &rb) || !align_up(sizeof(struct ring_region), &l->rx_ofs))
		return false;
	if (__builtin_add_overflow(l->rx_ofs, rb, &l->tx_ofs) ||
	    __builtin_add_overflow(l->tx_ofs, rb, &l->pool_ofs))
		return false;
	if (__builtin_mul_overflow((uint64_t)l->nbufs, (uint64_t)buf_size, &pool_bytes) ||
	    __builtin_add_overflow(l->pool_ofs, pool_bytes, &l->size))
		return false;
	/* The hosted build is 64-bit, but a 32-bit size_t must not wrap. */
	if (l->size > (uint64_t)SIZE_MAX || l->size > (uint64_t)INT64_MAX)
		return false;
	return true;
}

size_t ring_region_size(uint32_t num_slots, uint32_t buf_size, uint32_t extra_bufs)
{
	struct layout l;

	if (!compute_layout(num_slots, buf_size, extra_bufs, &l))
		return 0;
	return (size_t)l.size;
}

static void ring_init(struct ring *r, const struct layout *l, uint64_t ring_ofs, uint32_t num_slots,
		      uint32_t buf_size, uint32_t first_buf, uint32_t tail)
{
	sk_memset(r, 0, sizeof(*r));
	r->magic = RING_MAGIC;
	r->version = RING_VERSION;
	r->num_slots = num_slots;
	r->buf_size = buf_size;
	r->nbufs = l->nbufs;
	r->buf_ofs = (int64_t)(l->pool_ofs - ring_ofs);
	for (uint32_t i = 0; i < num_slots; i++) {
		r->slot[i].buf_idx = first_buf + i;
		r->slot[i].len = 0;
		r->slot[i].flags = 0;
	}
	r->head = 0;
	r->cur = 0;
	r->kflags = 0;
	/* Published last: a peer that attaches while we initialise sees a
	 * consistent ring once it observes tail. */
	ring_store(&r->tail, tail);
}

int ring_region_init(void *mem, size_t size, uint32_t num_slots, uint32_t buf_size,
		     uint32_t extra_bufs)
{
	struct layout l;
	struct ring_region *h = mem;

	if (mem == NULL || ((uintptr_t)mem & (RING_ALIGN - 1)) != 0)
		return -1;
	if (!compute_layout(num_slots, buf_size, extra_bufs, &l) || l.size > size)
		return -1;

	/* The pool is left as it is: zeroing megabytes is the caller's choice
	 * (mmap already gives zeroed pages). */
	sk_memset(h, 0, sizeof(*h));
	ring_init((struct ring *)((uint8_t *)mem + l.rx_ofs), &l, l.rx_ofs, num_slots, buf_size, 0,
		  0);
	ring_init((struct ring *)((uint8_t *)mem + l.tx_ofs), &l, l.tx_ofs, num_slots, buf_size,
		  num_slots, num_slots);
	h->version = RING_VERSION;
	h->size = l.size;
	h->rx_ofs = l.rx_ofs;
	h->tx_ofs = l.tx_ofs;
	h->pool_ofs = l.pool_ofs;
	h->nbufs = l.nbufs;
	h->buf_size = buf_size;
	h->num_slots = num_slots;
	h->extra_first = 2 * num_slots;
	h->extra_count = extra_bufs;
	/* Magic last, with a release store, so that a peer checking the
	 * region never sees the magic before the fields it guards. */
	__atomic_store_n(&h->magic, RING_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static int ring_check(const uint8_t *base, uint64_t ofs, const struct ring_region *h)
{
	const struct ring *r = (const struct ring *)(base + ofs);
	/* Read each shared field once: a hostile peer may change them while we
	 * look, and two reads could see two values. */
	uint32_t ns = __atomic_load_n(&r->num_slots, __ATOMIC_RELAXED);
	uint32_t nbufs = __atomic_load_n(&r->nbufs, __ATOMIC_RELAXED);
	uint32_t buf_size = __atomic_load_n(&r->buf_size, __ATOMIC_RELAXED);
	uint32_t head, tail;

	if (r->magic != RING_MAGIC || r->version != RING_VERSION)
		return -1;
	if (ns != h->num_slots || nbufs != h->nbufs || buf_size != h->buf_size)
		return -1;
	if (r->buf_ofs != (int64_t)h->pool_ofs - (int64_t)ofs)
		return -1;
	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (tail - head > ns)
		return -1;
	for (uint32_t i = 0; i < ns; i++) {
		struct ring_slot s;
		sk_memcpy(&s, &r->slot[i], sizeof(s));
		if (s.buf_idx >= nbufs || s.len > buf_size)
			return -1;
	}
	return 0;
}

int ring_region_check(const void *mem, size_t size)
{
	const uint8_t *base = mem;
	struct ring_region h;
	struct layout l;

	if (mem == NULL || ((uintptr_t)mem & (RING_ALIGN - 1)) != 0 ||
	    size < sizeof(struct ring_region))
		return -1;
	/* One snapshot of the header; every later decision uses the copy. */
	sk_memcpy(&h, mem, sizeof(h));
	if (h.magic != RING_MAGIC || h.version != RING_VERSION)
		return -1;
	if (h.size > size)
		return -1;
	/* Recompute the layout from the parameters and demand the header
	 * match it exactly: one rule instead of a list of range checks, and
	 * it covers alignment, overlap and overflow at once. */
	if (h.nbufs < 2 * (uint64_t)h.num_slots)
		return -1;
	if (!compute_layout(h.num_slots, h.buf_size, h.nbufs - 2 * h.num_slots, &l))
		return -1;
	if (l.rx_ofs != h.rx_ofs || l.tx_ofs != h.tx_ofs || l.pool_ofs != h.pool_ofs ||
	    l.size != h.size || l.nbufs != h.nbufs)
		return -1;
	if (h.extra_first != 2 * h.num_slots || h.extra_count != h.nbufs - h.extra_first)
		return -1;
	if (ring_check(base, h.rx_ofs, &h) != 0 || ring_check(base, h.tx_ofs, &h) != 0)
		return -1;
	return 0;
}
