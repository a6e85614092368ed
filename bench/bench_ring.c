/* bench_ring.c — what moving a frame through a ring costs, in cycles and ns.
 *
 * Both sides run on one thread, so this is the bookkeeping and cache cost
 * of the ring protocol itself (slot lookup, index loads and release
 * stores, touching the frame bytes), not cross-core transfer:
 *   rx: the device writes a 64-byte frame into each of B free slots and
 *       publishes tail once; the user reads each slot's frame and publishes
 *       head once.
 *   tx: the user writes B frames from head and publishes head; the device
 *       reads the handed-over slots and publishes tail.
 * One sample times enough back-to-back batches to cover 256 frames (the
 * TSC of a VM can tick in coarse steps: 26 cycles here, so one small batch
 * per sample would only show multiples of it), between lfenced rdtscs, minus
 * the median cost of an empty timed region, divided by the frames.  csum()
 * likewise over 64 calls per sample.  TSC ticks are converted to ns with a
 * rate measured against CLOCK_MONOTONIC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "ring/ring.h"
#include "wire/csum.h"

#define FRAME 64u
#define NSLOTS 256u
#define CSUM_CALLS 64

static volatile uint64_t sink; /* keeps results alive */

static inline uint64_t tsc(void)
{
	/* lfence before: earlier instructions are done; after: later ones
	 * have not started.  Enough for rdtsc on AMD and Intel. */
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double calibrate_ns_per_cycle(void)
{
	uint64_t n0 = mono_ns(), c0 = tsc();
	while (mono_ns() - n0 < 200000000ull)
		;
	uint64_t n1 = mono_ns(), c1 = tsc();
	return (double)(n1 - n0) / (double)(c1 - c0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct result {
	double med, p99;
};

static struct result summarize(double *v, size_t n)
{
	struct result r;
	qsort(v, n, sizeof(*v), cmp_double);
	r.med = v[n / 2];
	r.p99 = v[(size_t)((double)n * 0.99)];
	return r;
}

static double timer_overhead(void)
{
	enum { N = 100001 };
	static double v[N];
	for (size_t i = 0; i < N; i++) {
		uint64_t t0 = tsc();
		uint64_t t1 = tsc();
		v[i] = (double)(t1 - t0);
	}
	return summarize(v, N).med;
}

/* Device side of rx: fill up to b free slots with a frame. */
static inline void rx_produce(struct ring *r, const uint8_t *frame, uint32_t b)
{
	uint32_t t = r->tail;
	for (uint32_t k = 0; k < b; k++, t++) {
		struct ring_slot *s = ring_slot(r, t);
		memcpy(ring_buf(r, s->buf_idx), frame, FRAME);
		s->len = FRAME;
	}
	ring_store(&r->tail, t);
}

/* User side of rx: read every available frame, release the slots. */
static inline uint64_t rx_consume(struct ring *r)
{
	uint32_t h = r->head, t = ring_load(&r->tail);
	uint64_t acc = 0;
	for (; h != t; h++) {
		struct ring_slot *s = ring_slot(r, h);
		const uint8_t *p = ring_buf(r, s->buf_idx);
		uint64_t w;
		memcpy(&w, p + 12, sizeof(w)); /* ethertype onwards, as a parser would */
		acc += w + s->len;
	}
	ring_store(&r->head, h);
	return acc;
}

/* User side of tx: write b frames from head, hand them over. */
static inline void tx_fill(struct ring *r, const uint8_t *frame, uint32_t b)
{
	uint32_t h = r->head;
	for (uint32_t k = 0; k < b; k++, h++) {
		struct ring_slot *s = ring_slot(r, h);
		memcpy(ring_buf(r, s->buf_idx), frame, FRAME);
		s->len = FRAME;
	}
	ring_store(&r->head, h);
}

/* Device side of tx: read each handed-over frame, complete it. */
static inline uint64_t tx_drain(struct ring *r)
{
	uint32_t h = ring_load(&r->head), i = r->tail - r->num_slots;
	uint64_t acc = 0;
	for (; i != h; i++) {
		struct ring_slot *s = ring_slot(r, i);
		const uint8_t *p = ring_buf(r, s->buf_idx);
		uint64_t w;
		memcpy(&w, p, sizeof(w));
		acc += w + s->len;
	}
	ring_store(&r->tail, h + r->num_slots);
	return acc;
}

static void row(const char *what, uint32_t batch, uint32_t bytes, struct result r, double nspc)
{
	printf("| %-14s | %5u | %5u | %8.1f | %8.1f | %7.2f | %7.2f |\n", what, batch, bytes, r.med,
	       r.p99, r.med * nspc, r.p99 * nspc);
}

int main(void)
{
	enum { SAMPLES = 20000 };
	static double v[SAMPLES];
	uint8_t frame[FRAME];
	size_t size = ring_region_size(NSLOTS, RING_BUF_SIZE_DEFAULT, 0);
	void *mem = aligned_alloc(64, size);
	double nspc, ovh;

	if (mem == NULL || ring_region_init(mem, size, NSLOTS, RING_BUF_SIZE_DEFAULT, 0) != 0) {
		fprintf(stderr, "bench_ring: cannot set up a ring\n");
		return 1;
	}
	memset((uint8_t *)mem + ((struct ring_region *)mem)->pool_ofs, 0,
	       size - ((struct ring_region *)mem)->pool_ofs);
	for (unsigned i = 0; i < FRAME; i++)
		frame[i] = (uint8_t)(i * 7 + 1);
	struct ring *rx = ring_region_rx(mem), *tx = ring_region_tx(mem);

	nspc = calibrate_ns_per_cycle();
	ovh = timer_overhead();
	printf("TSC %.3f GHz (%.4f ns/cycle, vs CLOCK_MONOTONIC over 200 ms); "
	       "timer overhead %.0f cycles, subtracted; %d samples per row, "
	       "one sample = %u frames in batches of B (csum: %d calls); values per frame "
	       "(per call for csum)\n\n",
	       1.0 / nspc, nspc, ovh, SAMPLES, NSLOTS, CSUM_CALLS);
	printf("| path           | batch | bytes | median cycles | p99 cycles | median ns | p99 ns |\n");
	printf("|----------------|------:|------:|--------------:|-----------:|----------:|-------:|\n");

	static const uint32_t batches[] = {1, 32, 256};
	for (size_t bi = 0; bi < SK_ARRAY_LEN(batches); bi++) {
		uint32_t b = batches[bi];
		for (int warm = 0; warm < 1000; warm++) {
			rx_produce(rx, frame, b);
			sink += rx_consume(rx);
		}
		uint32_t reps = NSLOTS / b;
		for (size_t i = 0; i < SAMPLES; i++) {
			uint64_t t0 = tsc();
			for (uint32_t k = 0; k < reps; k++) {
				rx_produce(rx, frame, b);
				sink += rx_consume(rx);
			}
			uint64_t t1 = tsc();
			v[i] = ((double)(t1 - t0) - ovh) / (b * reps);
		}
		row("ring rx", b, FRAME, summarize(v, SAMPLES), nspc);
	}
	for (size_t bi = 0; bi < SK_ARRAY_LEN(batches); bi++) {
		uint32_t b = batches[bi];
		for (int warm = 0; warm < 1000; warm++) {
			tx_fill(tx, frame, b);
			sink += tx_drain(tx);
		}
		uint32_t reps = NSLOTS / b;
		for (size_t i = 0; i < SAMPLES; i++) {
			uint64_t t0 = tsc();
			for (uint32_t k = 0; k < reps; k++) {
				tx_fill(tx, frame, b);
				sink += tx_drain(tx);
			}
			uint64_t t1 = tsc();
			v[i] = ((double)(t1 - t0) - ovh) / (b * reps);
		}
		row("ring tx", b, FRAME, summarize(v, SAMPLES), nspc);
	}

	static const uint32_t lens[] = {64, 1500};
	uint8_t *data = ring_buf(rx, 0);
	for (uint32_t i = 0; i < 1500; i++)
		data[i] = (uint8_t)(i * 13 + 5);
	for (size_t li = 0; li < SK_ARRAY_LEN(lens); li++) {
		for (int warm = 0; warm < 1000; warm++)
			sink += csum(data, lens[li]);
		for (size_t i = 0; i < SAMPLES; i++) {
			uint64_t acc = 0;
			uint64_t t0 = tsc();
			for (int k = 0; k < CSUM_CALLS; k++) {
				/* a data dependence between calls, so they cannot overlap
				 * more than real back-to-back checksums would */
				data[0] = (uint8_t)acc;
				acc += csum(data, lens[li]);
			}
			uint64_t t1 = tsc();
			sink += acc;
			v[i] = ((double)(t1 - t0) - ovh) / CSUM_CALLS;
		}
		row("csum()", 1, lens[li], summarize(v, SAMPLES), nspc);
	}
	free(mem);
	return 0;
}
