/* heap_lock.c — one lock around musl's heap, so that every vCPU may
 * allocate.
 *
 * musl's malloc (mallocng, libc.a) takes its own lock only once the
 * process has made a thread (its private libc.need_locks, set by
 * pthread_create).  The guest's vCPUs are not musl threads, so it never
 * locks, and two vCPUs inside malloc at once corrupt its meta areas and
 * free lists (the TLS 1.3 image's #GP in CI: both vCPUs run connections
 * whose engine, wolfSSL and record buffers all allocate).  Setting
 * need_locks ourselves would mean writing a field of musl's private
 * struct __libc at an offset of one build that no header states, and
 * would take musl's lock on every stdio call too.  Instead the link
 * (mk/unikernel.mk: UK_LIBC_LDFLAGS, every image that links this
 * directory) renames each reference to the allocator's entry points, in
 * every object and every libc.a member (strdup, getdelim, fopen's FILE,
 * vasprintf, wolfSSL), to the __wrap_ functions here, which hold one
 * spin lock (rlock.h) around musl's own (__real_: ld's --wrap).  An
 * image that links this file without the flags does not link
 * (__real_malloc is then undefined), so none can miss them.
 *
 * The entry points: malloc, calloc, realloc, free, aligned_alloc
 * (posix_memalign and memalign call it), malloc_usable_size, and musl's
 * internal __libc_malloc, __libc_calloc and __libc_free (what its locale,
 * time-zone, atexit and gettext code call, so that an application's own
 * malloc would not replace theirs).  Some nest (calloc calls malloc,
 * realloc __libc_free), so the lock is recursive for the vCPU that holds
 * it.  tests/vm_libc.sh (heap-wrapped) checks in the linked image that
 * nothing but these wrappers calls into the allocator.
 *
 * pages.c's brk and mmap take the same lock: musl calls them with it
 * held (a nested take), and an application's own mmap on another vCPU
 * is kept apart from the heap's.
 *
 * Interrupts: no handler allocates (the timer, the wake IPI, virtio-net's
 * line interrupt: time.c, smp.c, uk_main.c), and interrupts are on only
 * inside `sti; hlt` (park.c, the APs' idle loop), never while this lock
 * is held, so it need not mask them: a vCPU never re-enters the heap
 * from an interrupt. */
#include "musl.h"
#include "../kvm.h"
#include "../rlock.h"

/* rlock.h; no spin limit: a vCPU inside the allocator always comes back
 * out, and taking the heap from it would corrupt it. */
static struct rlock lk;

void musl_heap_lock(void)
{
	rlock_take(&lk, kvm_cpu_this()->index + 1, 0);
}

void musl_heap_unlock(void)
{
	rlock_give(&lk);
}

void musl_heap_lock_stats(uint64_t *taken, uint64_t *contended)
{
	musl_heap_lock();
	*taken = lk.taken;
	*contended = lk.contended;
	musl_heap_unlock();
}

/* musl's functions (ld --wrap: a reference to __real_X is X itself). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t m, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__real_aligned_alloc(size_t align, size_t n);
size_t __real_malloc_usable_size(void *p);
void *__real___libc_malloc(size_t n);
void *__real___libc_calloc(size_t m, size_t n);
void __real___libc_free(void *p);

/* What every reference to X in the image calls instead. */
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t m, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
void *__wrap_aligned_alloc(size_t align, size_t n);
size_t __wrap_malloc_usable_size(void *p);
void *__wrap___libc_malloc(size_t n);
void *__wrap___libc_calloc(size_t m, size_t n);
void __wrap___libc_free(void *p);

void *__wrap_malloc(size_t n)
{
	musl_heap_lock();
	void *p = __real_malloc(n);
	musl_heap_unlock();
	return p;
}

void *__wrap_calloc(size_t m, size_t n)
{
	musl_heap_lock();
	void *p = __real_calloc(m, n);
	musl_heap_unlock();
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	musl_heap_lock();
	void *q = __real_realloc(p, n);
	musl_heap_unlock();
	return q;
}

void __wrap_free(void *p)
{
	musl_heap_lock();
	__real_free(p);
	musl_heap_unlock();
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	musl_heap_lock();
	void *p = __real_aligned_alloc(align, n);
	musl_heap_unlock();
	return p;
}

size_t __wrap_malloc_usable_size(void *p)
{
	musl_heap_lock();
	size_t n = __real_malloc_usable_size(p);
	musl_heap_unlock();
	return n;
}

void *__wrap___libc_malloc(size_t n)
{
	musl_heap_lock();
	void *p = __real___libc_malloc(n);
	musl_heap_unlock();
	return p;
}

void *__wrap___libc_calloc(size_t m, size_t n)
{
	musl_heap_lock();
	void *p = __real___libc_calloc(m, n);
	musl_heap_unlock();
	return p;
}

void __wrap___libc_free(void *p)
{
	musl_heap_lock();
	__real___libc_free(p);
	musl_heap_unlock();
}
