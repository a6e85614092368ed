/* rlock.h — a spin lock that the vCPU holding it may take again
 * (recursive), shared by the console (console.c) and musl's heap
 * (musl/heap_lock.c).  Header-only: a take is a few instructions on every
 * malloc, and rlock_test.c runs the same code hosted, with pthreads as
 * the vCPUs.
 *
 * Ownership: `held` is the lock: an exchange of 1 into it (acquire)
 * takes it, a store of 0 (release) gives it back, so whatever the holder
 * wrote is seen by the next holder.  `owner` is the holder's number, the
 * kvm_cpu index + 1 (rlock_take's `me`; 0 is no one), stored by the
 * holder once it has the lock and cleared before it gives it back.  Only
 * a vCPU ever stores its own number, so a vCPU that reads its own there
 * holds the lock already, and takes it again by counting: `depth` is
 * written only by the holder.  `taken` and `contended` are written under
 * the lock (read them with it held).
 *
 * Why a word of its own for the lock, when `held` is owner != 0: a
 * compare and swap of owner from 0 to me would do, but under QEMU's TCG
 * (where every test and benchmark here runs) `lock cmpxchg` costs far
 * more than `xchg`: the heap-stress self test (musl/heap_stress.c, 3 s,
 * --smp 2) did 0.37-0.80 M steps in 7 runs taking it by compare and swap
 * (on owner, or on a held word), against 0.74-1.48 M in 11 by exchange
 * (this lock, and the heap's before it), alternating on the shared
 * 2-core machine (2026-12-05).
 *
 * The wait: spin on a plain load until held reads 0, then try the
 * exchange again (the cache line stays shared while it waits), with
 * `pause` in between.  spin_limit 0 waits for ever (the heap: a vCPU
 * inside malloc always comes back out).  Otherwise, after spin_limit
 * pauses the waiter takes the lock over as it is (the console: a CPU that
 * faults while another holds it, or that one wedged, must still be heard;
 * its lines may then mix with the holder's, and the old holder's release
 * may free the lock under the new one, which only costs tidy lines).
 *
 * Interrupts: the lock does not mask them.  A handler that took a lock
 * the interrupted code held would take it again as the same vCPU and
 * break its section, or wait for ever on another's; in this kernel
 * interrupts are on only inside `sti; hlt` (park.c, the APs' idle loop),
 * never while code runs, so no handler runs while a lock is held.  The
 * users say why that holds for theirs. */
#ifndef PLAT_KVM_RLOCK_H
#define PLAT_KVM_RLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct rlock {
	int held;           /* 1 while a vCPU holds it: the lock word (atomic) */
	unsigned owner;     /* the holder's kvm_cpu index + 1; 0 none (atomic) */
	unsigned depth;     /* the holder's nesting; written only by the holder */
	uint64_t taken;     /* outermost takes, written under the lock */
	uint64_t contended; /* of those, the ones that waited first */
};

/* Take l as vCPU `me` (its kvm_cpu index + 1): again at once if me holds
 * it, else when it is free, or after spin_limit pauses (0: never give up). */
static inline void rlock_take(struct rlock *l, unsigned me, uint64_t spin_limit)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) {
		l->depth++;
		return;
	}
	bool waited = false;
	uint64_t spins = 0;
	while (__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE)) {
		waited = true;
		while (__atomic_load_n(&l->held, __ATOMIC_RELAXED)) {
			if (spin_limit && ++spins >= spin_limit)
				goto over; /* held stays 1: now ours */
			__builtin_ia32_pause();
		}
	}
over:
	__atomic_store_n(&l->owner, me, __ATOMIC_RELAXED);
	l->depth = 1;
	l->taken++;
	l->contended += waited;
}

/* Give back one take; the outermost frees the lock. */
static inline void rlock_give(struct rlock *l)
{
	if (--l->depth)
		return;
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

#endif
