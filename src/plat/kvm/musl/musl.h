/* musl.h — the guest's C library: Debian's musl (musl-dev's static
 * libc.a) under an application image, and the few system calls of ours it
 * makes.  Linked only into images that bring an application
 * (mk/unikernel.mk: examples/NAME-uk.elf, `make app`); skiff-uk.elf and the
 * proxy image have none of it (start.c and smp.c call the hooks below
 * only when they are linked: weak in kvm.h).
 *
 * musl's objects make system calls with the `syscall` instruction, inline
 * (its syscall_arch.h), not through a function we could replace.  So the
 * guest takes that instruction: EFER.SCE on, LSTAR -> entry.S, which
 * calls musl_syscall() (syscall.c) and returns to the caller, still in
 * ring 0 (there is no user mode here: the instruction is a call).
 *
 * Call order: kmain -> musl_boot() (the BSP, before the APs start)
 *   -> musl_cpu_init() -> __init_libc (musl's own start-up: auxv,
 *   thread block, locale) ; ap_main -> musl_ap() -> musl_cpu_init() ->
 *   this vCPU's own thread block.  docs/unikernel.md "A C library". */
#ifndef SK_PLAT_KVM_MUSL_H
#define SK_PLAT_KVM_MUSL_H
#include "../../../base/sk.h"

/* entry.S: the target of LSTAR. */
void musl_syscall_entry(void);
/* syscall.c: one system call, Linux x86-64 numbering and arguments;
 * returns the result or -errno, as the kernel would. */
long musl_syscall(long a1, long a2, long a3, long a4, long a5, long a6, long nr);

/* pages.c: the memory behind brk and anonymous mmap, one region taken
 * from mem_alloc at the first call (MUSL_HEAP_MAX at most, half of what
 * is free if that is less).  Each returns what the system call would. */
#define MUSL_HEAP_MAX (64u << 20)
long musl_brk(uintptr_t want);
long musl_mmap(uintptr_t addr, size_t len, long prot, long flags, long fd, long off);
long musl_munmap(uintptr_t addr, size_t len);
struct musl_heap_info {
	uintptr_t base;
	size_t size, brk_used, pages_used, pages;
	uint64_t mmaps, munmaps, fails;
};
void musl_heap_info(struct musl_heap_info *hi);

/* heap_lock.c: the one lock around musl's heap (its malloc family,
 * through ld --wrap, and pages.c), recursive for the vCPU holding it, and
 * its counts: outermost takes, and those that had to wait. */
void musl_heap_lock(void);
void musl_heap_unlock(void);
void musl_heap_lock_stats(uint64_t *taken, uint64_t *contended);

/* syscall.c: the number of calls answered -ENOSYS (the first of each
 * number is also printed on the console). */
uint64_t musl_enosys_count(void);

#endif
