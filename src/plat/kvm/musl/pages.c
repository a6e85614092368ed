/* pages.c — memory for musl's malloc: brk and anonymous mmap/munmap.
 *
 * One region, taken from the platform's bump allocator (mem.c, which
 * never frees) on the first call, so an image whose application never
 * allocates takes nothing.  Its first eighth is the brk area (musl's
 * malloc keeps its bookkeeping there and falls back to mmap when brk
 * refuses); the rest is pages handed out by mmap and given back by
 * munmap, first fit over a bitmap, so a malloc/free loop of big blocks
 * reuses the same pages instead of running the region dry.
 *
 * Memory is zeroed when handed out, as Linux's anonymous pages are.
 * There is no protection (mprotect answers 0 and changes nothing: no
 * guard pages) and mremap is not offered (musl's realloc then copies).
 * Every vCPU may get here (musl's malloc, or an application's own mmap):
 * each call holds the heap lock (heap_lock.c), already held when musl's
 * malloc is the caller. */
#include "musl.h"
#include "../kvm.h"

#define PAGE 4096u
#define MAX_PAGES (MUSL_HEAP_MAX / PAGE)
#define EINVAL 22
#define ENOMEM 12
#define ENOSYS 38
#define MAP_FIXED 0x10
#define MAP_ANONYMOUS 0x20

static struct {
	uintptr_t base;          /* 0: not taken yet */
	size_t size;
	uintptr_t brk_lo, brk_hi, brk_cur; /* [lo, hi) the brk area, cur its end now */
	uintptr_t pages_lo;      /* the mmap pages: [pages_lo, base + size) */
	size_t npages, used;
	uint64_t mmaps, munmaps, fails;
	bool failed;             /* the region could not be had: every call fails */
	uint64_t map[MAX_PAGES / 64]; /* bit set: page in use */
} h;

static bool region(void)
{
	if (h.base)
		return true;
	if (h.failed)
		return false;
	struct mem_info mi;
	mem_info(&mi);
	size_t size = mi.heap_free / 2 < MUSL_HEAP_MAX ? (size_t)(mi.heap_free / 2) : MUSL_HEAP_MAX;
	size &= ~(size_t)(PAGE * 8 - 1);
	void *p = size >= 16 * PAGE ? mem_alloc(size, PAGE) : NULL;
	if (!p) {
		kprintf("skiff-uk: libc: no memory for the heap (%lu bytes free)\n",
			(unsigned long)mi.heap_free);
		h.failed = true;
		return false;
	}
	h.base = (uintptr_t)p;
	h.size = size;
	h.brk_lo = h.brk_cur = h.base;
	h.brk_hi = h.base + size / 8;
	h.pages_lo = h.brk_hi;
	h.npages = (size - size / 8) / PAGE;
	kprintf("skiff-uk: libc: heap %lu KiB at 0x%lx (brk %lu KiB, %lu pages)\n",
		(unsigned long)(size >> 10), (unsigned long)h.base,
		(unsigned long)((h.brk_hi - h.brk_lo) >> 10), (unsigned long)h.npages);
	return true;
}

static long brk_locked(uintptr_t want)
{
	if (!region())
		return 0; /* Linux answers the unchanged break; none is "no brk" */
	if (want < h.brk_lo || want > h.brk_hi)
		return (long)h.brk_cur; /* refused: the break stays */
	if (want > h.brk_cur)
		sk_memset((void *)h.brk_cur, 0, want - h.brk_cur);
	h.brk_cur = want;
	return (long)want;
}

static bool used(size_t i)
{
	return h.map[i / 64] >> (i % 64) & 1;
}

static void mark(size_t i, size_t n, bool on)
{
	for (size_t k = i; k < i + n; k++) {
		if (on)
			h.map[k / 64] |= 1ull << (k % 64);
		else
			h.map[k / 64] &= ~(1ull << (k % 64));
	}
}

static long mmap_locked(uintptr_t addr, size_t len, long prot, long flags, long fd, long off)
{
	(void)addr, (void)prot, (void)off; /* addr is a hint; no protection */
	if (!(flags & MAP_ANONYMOUS) || fd != -1)
		return -ENOSYS; /* no files */
	if ((flags & MAP_FIXED) || len == 0)
		return -EINVAL;
	if (len > MUSL_HEAP_MAX)
		return -ENOMEM; /* as Linux: more than there is */
	if (!region())
		return -ENOMEM;
	size_t n = (len + PAGE - 1) / PAGE;
	/* First fit: the lowest run of n free pages. */
	for (size_t i = 0, run = 0; i < h.npages; i++) {
		if (used(i)) {
			run = 0;
			continue;
		}
		if (++run == n) {
			size_t first = i + 1 - n;
			mark(first, n, true);
			h.used += n;
			h.mmaps++;
			void *p = (void *)(h.pages_lo + first * PAGE);
			sk_memset(p, 0, n * PAGE);
			return (long)(uintptr_t)p;
		}
	}
	h.fails++;
	return -ENOMEM;
}

static long munmap_locked(uintptr_t addr, size_t len)
{
	if (!h.base || addr % PAGE || len == 0 || addr < h.pages_lo ||
	    addr - h.pages_lo + len > h.npages * PAGE)
		return -EINVAL;
	size_t first = (addr - h.pages_lo) / PAGE, n = (len + PAGE - 1) / PAGE;
	for (size_t k = first; k < first + n; k++)
		h.used -= used(k);
	mark(first, n, false);
	h.munmaps++;
	return 0;
}

long musl_brk(uintptr_t want)
{
	musl_heap_lock();
	long r = brk_locked(want);
	musl_heap_unlock();
	return r;
}

long musl_mmap(uintptr_t addr, size_t len, long prot, long flags, long fd, long off)
{
	musl_heap_lock();
	long r = mmap_locked(addr, len, prot, flags, fd, off);
	musl_heap_unlock();
	return r;
}

long musl_munmap(uintptr_t addr, size_t len)
{
	musl_heap_lock();
	long r = munmap_locked(addr, len);
	musl_heap_unlock();
	return r;
}

void musl_heap_info(struct musl_heap_info *hi)
{
	musl_heap_lock();
	hi->base = h.base;
	hi->size = h.size;
	hi->brk_used = h.brk_cur - h.brk_lo;
	hi->pages = h.npages;
	hi->pages_used = h.used;
	hi->mmaps = h.mmaps;
	hi->munmaps = h.munmaps;
	hi->fails = h.fails;
	musl_heap_unlock();
}
