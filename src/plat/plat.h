/* plat.h — what the core needs from the platform underneath, and nothing
 * more: a monotonic clock, randomness, a cycle counter.  plat/linux
 * implements it for the hosted forms; the unikernel's plat/kvm will
 * implement the same functions.  The core layers never call these: the
 * loop reads the clock and passes `now` down. */
#ifndef PLAT_H
#define PLAT_H

#include "../base/sk.h"

/* Monotonic nanoseconds. */
sk_time_ns plat_now(void);

/* Fill buf with random bytes from the platform's best source.  Returns 0,
 * or -1 if none is available (callers then refuse to start). */
int plat_random(void *buf, size_t len);

static inline uint64_t plat_cycles(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
#else
	return plat_now();
#endif
}

#endif
