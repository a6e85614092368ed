/* rlock.h — a spin lock that the vCPU holding it may take again
 * (recursive), shared by the console (console.c) and musl's heap
 * (musl/heap_lock.c).  Header-only: a take is a few instructions on every
 * malloc, and rlock_test.c runs the same code hosted, with pthreads as
 * the vCPUs.
 *
 * Ownership: `owner` is the holder's number, the kvm_cpu index + 1
 * (rlock_take's `me`; 0 is no one), and taking the lock is a compare and
 * swap of owner from 0 to me (acquire), giving it back a store of 0
 * (release), so whatever the holder wrote is seen by the next holder.
 * Only a vCPU ever stores its own number, so a vCPU that reads its own
 * there holds the lock already, and takes it again by counting: `depth`
 * is written only by the holder.  `taken` and `contended` are written
 * under the lock (read them with it held).
 *
 * The wait: spin on a plain load until owner reads 0, then try the swap
 * again (the cache line stays shared while it waits), with `pause` in
 * between.  spin_limit 0 waits for ever (the heap: a vCPU inside malloc
 * always comes back out).  Otherwise, after spin_limit pauses the waiter
 * takes the lock over, held or not (the console: a CPU that faults while
 * another holds it, or that one wedged, must still be heard; its lines
 * may then mix with the holder's, and the old holder's release may free
 * the lock under the new one, which only costs tidy lines).
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
	unsigned owner;     /* the holder's kvm_cpu index + 1; 0 when free (atomic) */
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
	for (;;) {
		unsigned free_ = 0;
		if (__atomic_compare_exchange_n(&l->owner, &free_, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		waited = true;
		while (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != 0) {
			if (spin_limit && ++spins >= spin_limit) {
				/* Over: the holder's writes are acquired as
				 * far as it released any. */
				__atomic_exchange_n(&l->owner, me, __ATOMIC_ACQUIRE);
				goto held;
			}
			__builtin_ia32_pause();
		}
	}
held:
	l->depth = 1;
	l->taken++;
	l->contended += waited;
}

/* Give back one take; the outermost frees the lock. */
static inline void rlock_give(struct rlock *l)
{
	if (--l->depth)
		return;
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
}

#endif
