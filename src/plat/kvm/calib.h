/* calib.h — the arithmetic of the LAPIC timer's calibration (time.c),
 * apart from its MMIO reads, so a hosted test (time_test.c) can feed it
 * readings.
 *
 * A stamp is one read of a down-counter taken between two TSC reads: the
 * counter was read somewhere inside [tsc - width/2, tsc + width/2].  A
 * window is two stamps; its rate is counter ticks over TSC time between
 * them.  The vCPU thread being preempted *between* the two stamps
 * stretches both clocks alike and costs nothing; only a preemption inside
 * one stamp errs (by up to its width, either way), so of several windows
 * the one whose stamps were read most tightly is the one to believe.
 * Reading the counter once at the end of a TSC-timed spin, as time.c did
 * before, had no such bound (a preemption anywhere after the count was
 * loaded only ever made it high): under TCG on a busy host 8 boots of 8
 * measured QEMU's 1 GHz LAPIC timer at 1.28 to 3.58 GHz, and every sleep
 * of the guest ran that much long. */
#ifndef SKIFF_PLAT_KVM_CALIB_H
#define SKIFF_PLAT_KVM_CALIB_H

#include <stdint.h>

struct calib_stamp {
	uint64_t tsc;   /* the middle of the two TSC reads */
	uint64_t width; /* between them: the uncertainty of when count was read */
	uint32_t count; /* the down-counter (LAPIC current count) */
};

struct calib_window {
	struct calib_stamp a, b;
};

/* Counter ticks per second over one window, 0 if it cannot be used: no
 * TSC time between the stamps, the counter did not move, or it reached 0
 * (a one-shot count stops there: the window was longer than it). */
static inline uint64_t calib_rate(const struct calib_window *w, uint64_t tsc_hz)
{
	if (w->b.tsc <= w->a.tsc || w->b.count == 0 || w->a.count <= w->b.count || !tsc_hz)
		return 0;
	/* 64-bit only (the guest has no 128-bit division): halve both
	 * sides of the ratio until the product fits. */
	uint64_t ticks = w->a.count - w->b.count, span = w->b.tsc - w->a.tsc;
	while (ticks > UINT64_MAX / tsc_hz) {
		ticks >>= 1;
		span >>= 1;
	}
	return span ? ticks * tsc_hz / span : 0;
}

/* The rate of the window read most tightly (the smallest sum of its two
 * widths) among those calib_rate can use; 0 if none can.  *err_ppm gets
 * that window's uncertainty in parts per million of its span. */
static inline uint64_t calib_pick(const struct calib_window *w, int n, uint64_t tsc_hz,
				  uint64_t *err_ppm)
{
	uint64_t best = 0, best_err = UINT64_MAX;
	*err_ppm = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		uint64_t r = calib_rate(&w[i], tsc_hz);
		uint64_t e = w[i].a.width + w[i].b.width;
		if (r && e < best_err) {
			best = r;
			best_err = e;
			*err_ppm = e > UINT64_MAX / 1000000u ? UINT64_MAX
								: e * 1000000u / (w[i].b.tsc - w[i].a.tsc);
		}
	}
	return best;
}

#endif
