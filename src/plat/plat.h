/* plat.h — what the layers above need from the platform underneath, and
 * nothing more: a monotonic clock, randomness, a cycle counter, and a way
 * to wait (park) until a device has work or a deadline passes.
 * plat/linux implements it for the hosted forms (clock.c, park.c),
 * plat/kvm for the unikernel (time.c, park.c).  The core layers never
 * call these: the run loop (runner/runner.c) reads the clock once a turn and
 * passes `now` down. */
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

/* One step of a busy wait (a spin between turns): tells the CPU we are
 * polling, so a sibling hyperthread gets the core and the exit from the
 * spin is not punished by a memory-order flush. */
static inline void plat_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#endif
}

/* What ends a park besides the deadline: the device's notification.  The
 * caller fills it right before every park (a device may arm its wake-up
 * point while handing out its fd, as a switch port does).
 *   fd      hosted: readable (POLLIN) means the device has work; -1: none.
 *   arm     a device whose notification is an interrupt (kvm): called with
 *           interrupts off just before halting; allow the interrupt, look
 *           once more, return true if work is already waiting (then the
 *           park does not sleep: that work raised no interrupt).  NULL: none.
 *   disarm  after the park (with arm): back to polling, no interrupts.
 * A park with no wake source at all (fd < 0 and no arm) sleeps at most
 * PLAT_PARK_POLL_NS: the caller then polls the device at 1 kHz. */
struct plat_wake {
	int fd;
	/* hosted: a second fd to wait on (the admin socket set, host/admin.h),
	 * valid when has_side; its readiness ends the park as PLAT_WOKE_SIDE.
	 * kvm: ignored. */
	bool has_side;
	int side_fd;
	bool (*arm)(void *ctx);
	void (*disarm)(void *ctx);
	void *ctx;
};
#define PLAT_PARK_POLL_NS SK_NS_PER_MS

/* What ended a park. */
enum plat_woke {
	PLAT_WOKE_NONE = 0, /* did not sleep: the deadline had passed, or work
			     * was found while arming */
	PLAT_WOKE_FRAME,    /* the device's fd or interrupt */
	PLAT_WOKE_TIMER,    /* the deadline */
	PLAT_WOKE_OTHER,    /* a signal, another interrupt: look again */
	PLAT_WOKE_STOP,     /* *stop was set: the caller returns */
	PLAT_WOKE_SIDE,     /* only the side fd (plat_wake.side_fd) */
};

/* Sleep until the device in w has work, `deadline` (plat_now() units;
 * SK_TIME_NEVER: none) passes, or *stop becomes non-zero.  Never sleeps
 * through a stop: on Linux SIGINT and SIGTERM are blocked from the last
 * look at *stop until the wait, and unblocked only inside it, atomically
 * (plat/linux/stopsig.h); on kvm *stop is only written with interrupts
 * off, by the code that calls this.  Returns a plat_woke, or a negative
 * errno-style code (Linux's numbers) if the wait itself failed. */
int plat_park(sk_time_ns deadline, const struct plat_wake *w, volatile int *stop);

#endif
