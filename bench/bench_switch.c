/* bench_switch.c — the switch engine alone on one core: frames per second
 * through sw_forward from a sender whose tx ring is always full to
 * receivers that take everything at once (in-process regions, no other
 * process competing for the core).  Reports Mpps and ns per frame for 64-
 * and 1514-byte frames (60/1514 without FCS), unicast to 1 port and
 * broadcast to 2.  What it leaves out, the process-to-process run in
 * bench/bench_switch.sh measures: the peers, the cache lines they share
 * with the switch, the wake-ups.
 * Usage: bench_switch [seconds per point, default 1]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plat/plat.h"
#include "switch/sw.h"

#define SLOTS 1024u

static void *region(void)
{
	size_t size = ring_region_size(SLOTS, RING_BUF_SIZE_DEFAULT, 0);
	void *m = aligned_alloc(64, size);
	if (m == NULL || ring_region_init(m, size, SLOTS, RING_BUF_SIZE_DEFAULT, 0) != 0) {
		fprintf(stderr, "bench_switch: no memory\n");
		exit(1);
	}
	memset((uint8_t *)m + ((struct ring_region *)m)->pool_ofs, 0,
	       (size_t)2 * SLOTS * RING_BUF_SIZE_DEFAULT);
	return m;
}

static void point(unsigned size, bool bcast, double secs)
{
	static struct sw s;
	void *mem[3] = {region(), region(), region()};
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 2}, src[6] = {0x02, 0, 0, 0, 0, 1};
	struct ring *t;
	uint64_t frames = 0, c0, c1;
	sk_time_ns t0, now;

	sw_init(&s, 3, 42, 0, NULL, NULL);
	for (unsigned p = 0; p < 3; p++)
		sw_port_attach(&s, p, mem[p], ring_region_size(SLOTS, RING_BUF_SIZE_DEFAULT, 0));
	t = ring_region_tx(mem[0]);
	for (unsigned i = 0; i < SLOTS; i++) {
		struct ring_slot *sl = ring_slot(t, i);
		uint8_t *b = ring_buf(t, sl->buf_idx);
		if (bcast)
			memset(b, 0xff, 6);
		else
			memcpy(b, dst, 6);
		memcpy(b + 6, src, 6);
		sl->len = (uint16_t)size;
	}
	/* Teach the switch where dst lives: one frame from it on port 1. */
	{
		struct ring *t1 = ring_region_tx(mem[1]);
		uint8_t *b = ring_buf(t1, ring_slot(t1, 0)->buf_idx);
		memset(b, 0xff, 6);
		memcpy(b + 6, dst, 6);
		ring_slot(t1, 0)->len = 60;
		ring_store(&t1->head, 1);
		sw_forward(&s, 1, 1);
	}
	t0 = plat_now();
	c0 = plat_cycles();
	do {
		for (int k = 0; k < 64; k++) {
			/* The sender hands over a whole ring; the receivers take all. */
			ring_store(&t->head, t->head + ring_avail(t));
			frames += sw_forward(&s, 0, t0);
			for (unsigned p = 1; p < 3; p++) {
				struct ring *r = ring_region_rx(mem[p]);
				ring_store(&r->head, ring_load(&r->tail));
			}
		}
		now = plat_now();
	} while (now - t0 < (sk_time_ns)(secs * 1e9));
	c1 = plat_cycles();
	double el = (double)(now - t0) / 1e9;
	printf("engine %-9s %4u B: %7.2f Mpps  %6.2f Gbit/s  %6.1f ns/frame  %6.1f cycles/frame"
	       "  (drops %llu)\n",
	       bcast ? "bcast->2" : "ucast->1", size, (double)frames / el / 1e6,
	       (double)frames * size * 8 / el / 1e9, el * 1e9 / (double)frames,
	       (double)(c1 - c0) / (double)frames,
	       (unsigned long long)(s.port[1].st.drop_full + s.port[2].st.drop_full));
	for (unsigned p = 0; p < 3; p++)
		free(mem[p]);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;

	if (secs <= 0)
		secs = 1.0;
	point(60, false, secs);
	point(1514, false, secs);
	point(60, true, secs);
	point(1514, true, secs);
	return 0;
}
