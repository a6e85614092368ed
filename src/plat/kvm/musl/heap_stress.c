/* heap_stress.c — the guest word heap-stress=S[,unlocked]: every vCPU works
 * musl's heap at once for S seconds (1..60), then the guest exits with
 * the verdict instead of booting on.  A self test of heap_lock.c, run by
 * tests/vm_libc.sh (skiff vm --smp 2, multi-threaded TCG: the vCPUs are
 * host threads and run in parallel).
 *
 * Each vCPU keeps 64 slots.  A step picks one at random: an empty slot
 * gets a block (malloc; calloc, checked zeroed; posix_memalign, checked
 * aligned; strdup, musl's own call to malloc, of a random string, checked
 * and freed); a full one has its block checked whole, then freed, grown
 * or shrunk (realloc: the kept bytes checked) or swapped with one of 16
 * shared slots, so that blocks made on one vCPU are checked, resized and
 * freed on another.  A block is a header (its length, its seed) then
 * bytes drawn from the seed: the check is every byte against the seed.
 * Sizes: mostly up to 256 bytes, 1 in 8 up to 16 KiB, 1 in 64 up to
 * 192 KiB (over musl's threshold for a chunk of its own: pages.c's mmap).
 *
 * `unlocked` makes the same calls to musl's own functions (__real_),
 * past the lock, as the heap was before it (calloc, posix_memalign and
 * strdup become malloc there): the test must then fail, which shows that
 * it can.  It also counts overlaps: calls begun while another vCPU was
 * inside one.
 *
 * The verdict on the console, "skiff-uk: heap-stress: ok" (exit 0) or
 * "skiff-uk: heap-stress: FAILED: why" (exit 1): a block's bytes wrong, an
 * allocation refused (the heap is far larger than the test's blocks), or
 * a vCPU that never finished: musl stops a CPU with `hlt` where its own
 * checks find the heap broken (a_crash), which with interrupts off halts
 * it for good; another vCPU notices and reports.  A broken heap may also
 * fault (trap.c: the registers, exit 64+vector).
 *
 * The word is the platform's: start.c calls this once the APs are up,
 * before the options are read; skiff-uk.elf (no musl) does not know it,
 * and its options parser refuses it. */
#include "musl.h"
#include "../cpu.h"
#include "../kvm.h"
#include "../../plat.h"

/* Through the lock: these references become __wrap_ at the link. */
void *malloc(size_t n);
void *calloc(size_t m, size_t n);
void *realloc(void *p, size_t n);
void free(void *p);
int posix_memalign(void **p, size_t align, size_t n);
char *strdup(const char *s);
/* musl's own, past the lock (unlocked). */
void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

#define SLOTS 64
#define SHARED 16
#define HDR 16u                  /* a block's header: length, seed */
#define BIG (192u << 10)         /* the largest block */
#define WAIT_NS (5 * SK_NS_PER_S) /* how late a vCPU may finish */

struct worker {
	uint64_t rnd;
	uint8_t *slot[SLOTS];
	size_t len[SLOTS];
	uint64_t steps, mallocs, callocs, aligned, strdups, reallocs, frees, swaps, overlaps;
	uint64_t checked; /* bytes compared */
	char why[160];    /* the first failure, if any */
	int done;         /* atomic: the vCPU's part ended */
} __attribute__((aligned(64)));

static struct {
	bool unlocked;
	unsigned n;       /* vCPUs taking part */
	sk_time_ns end;   /* when the steps stop */
	int stop;         /* atomic: a failure was seen */
	int reported;     /* atomic: the verdict is being given */
	int inside;       /* atomic: unlocked calls in progress */
	struct worker w[KVM_MAX_CPUS];
	uint8_t *shared[SHARED]; /* atomic exchange */
} T;

/* xorshift64*: the blocks' bytes and the steps' choices. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void failed(struct worker *w, unsigned me, const char *what, const void *p, size_t len,
		   size_t at)
{
	if (!w->why[0])
		ksnprintf(w->why, sizeof(w->why), "cpu %u: %s (block %p, %lu bytes, at byte %lu)", me,
			  what, p, (unsigned long)len, (unsigned long)at);
	__atomic_store_n(&T.stop, 1, __ATOMIC_RELEASE);
}

/* ---- the calls, through the lock or past it ---- */

static void enter(struct worker *w)
{
	if (__atomic_add_fetch(&T.inside, 1, __ATOMIC_ACQ_REL) > 1)
		w->overlaps++;
}

static void leave(void)
{
	__atomic_sub_fetch(&T.inside, 1, __ATOMIC_ACQ_REL);
}

/* Past the lock: not inlined, so that tests/vm_libc.sh's heap-wrapped
 * can tell these, the only callers of musl's allocator but the wrappers,
 * by name. */
static __attribute__((noinline)) void *unlocked_malloc(struct worker *w, size_t n)
{
	enter(w);
	void *p = __real_malloc(n);
	leave();
	return p;
}

static __attribute__((noinline)) void *unlocked_realloc(struct worker *w, void *p, size_t n)
{
	enter(w);
	void *q = __real_realloc(p, n);
	leave();
	return q;
}

static __attribute__((noinline)) void unlocked_free(struct worker *w, void *p)
{
	enter(w);
	__real_free(p);
	leave();
}

static void *t_malloc(struct worker *w, size_t n)
{
	return T.unlocked ? unlocked_malloc(w, n) : malloc(n);
}

static void *t_realloc(struct worker *w, void *p, size_t n)
{
	return T.unlocked ? unlocked_realloc(w, p, n) : realloc(p, n);
}

static void t_free(struct worker *w, void *p)
{
	if (T.unlocked)
		unlocked_free(w, p);
	else
		free(p);
}

/* ---- blocks ---- */

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t h[2] = {len, seed}, s = seed | 1;
	__builtin_memcpy(p, h, HDR);
	size_t i = HDR;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = rnd(&s);
		__builtin_memcpy(p + i, &v, 8);
	}
	for (uint64_t v = rnd(&s); i < len; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Bytes [0, upto) of a block of len bytes: the header, then the seed's. */
static bool check(struct worker *w, unsigned me, const uint8_t *p, size_t len, size_t upto)
{
	uint64_t h[2];
	__builtin_memcpy(h, p, HDR);
	if (h[0] != len) {
		failed(w, me, "a block's header has the wrong length", p, len, 0);
		return false;
	}
	uint64_t s = h[1] | 1, v;
	size_t i = HDR;
	for (; i + 8 <= upto; i += 8) {
		v = rnd(&s);
		if (__builtin_memcmp(p + i, &v, 8) != 0) {
			failed(w, me, "a block's bytes changed", p, len, i);
			return false;
		}
	}
	/* The word upto cuts (or the tail): fill wrote it little-endian. */
	if (i < upto)
		for (v = rnd(&s); i < upto; i++, v >>= 8)
			if (p[i] != (uint8_t)v) {
				failed(w, me, "a block's last bytes changed", p, len, i);
				return false;
			}
	w->checked += upto;
	return true;
}

static size_t pick_size(uint64_t *s)
{
	uint64_t r = rnd(s);
	unsigned c = r & 63;
	r >>= 8;
	if (c == 0)
		return HDR + r % (BIG - HDR);
	if (c < 8)
		return HDR + r % (16u << 10);
	return HDR + r % 256;
}

/* strdup: musl's strdup.o calls malloc, through the lock too. */
static bool try_strdup(struct worker *w, unsigned me)
{
	char s[200];
	size_t n = rnd(&w->rnd) % (sizeof(s) - 1);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + rnd(&w->rnd) % 26);
	s[n] = 0;
	char *d = strdup(s);
	if (!d) {
		failed(w, me, "strdup answered NULL", s, n, 0);
		return false;
	}
	if (__builtin_memcmp(d, s, n + 1) != 0) {
		failed(w, me, "strdup's copy differs", d, n, 0);
		return false;
	}
	w->strdups++;
	free(d);
	return true;
}

static void new_block(struct worker *w, unsigned me, unsigned i, unsigned op)
{
	size_t len = pick_size(&w->rnd);
	uint8_t *p;
	if (T.unlocked || op < 12) {
		p = t_malloc(w, len);
		w->mallocs++;
	} else if (op < 14) {
		p = calloc(1, len);
		w->callocs++;
		for (size_t k = 0; p && k < len; k++)
			if (p[k]) {
				failed(w, me, "calloc's block is not zeroed", p, len, k);
				return;
			}
	} else if (op == 14) {
		size_t align = (size_t)64 << (rnd(&w->rnd) % 7); /* 64 .. 4096 */
		void *q = NULL;
		p = posix_memalign(&q, align, len) == 0 ? q : NULL;
		w->aligned++;
		if (p && (uintptr_t)p % align) {
			failed(w, me, "posix_memalign's block is not aligned", p, len, 0);
			return;
		}
	} else {
		if (!try_strdup(w, me))
			return;
		p = t_malloc(w, len);
		w->mallocs++;
	}
	if (!p) {
		failed(w, me, "an allocation answered NULL", NULL, len, 0);
		return;
	}
	fill(p, len, rnd(&w->rnd));
	w->slot[i] = p;
	w->len[i] = len;
}

static void step(struct worker *w, unsigned me)
{
	uint64_t r = rnd(&w->rnd);
	unsigned i = r % SLOTS, op = (r >> 8) & 15;
	uint8_t *p = w->slot[i];
	size_t len = w->len[i];
	w->steps++;
	if (!p) {
		new_block(w, me, i, op);
		return;
	}
	if (!check(w, me, p, len, len))
		return;
	if (op < 7) {
		t_free(w, p);
		w->frees++;
		w->slot[i] = NULL;
	} else if (op < 12) {
		size_t n = pick_size(&w->rnd);
		uint8_t *q = t_realloc(w, p, n);
		w->reallocs++;
		if (!q) {
			failed(w, me, "realloc answered NULL", p, n, 0);
			return;
		}
		if (!check(w, me, q, len, n < len ? n : len))
			return;
		fill(q, n, rnd(&w->rnd));
		w->slot[i] = q;
		w->len[i] = n;
	} else {
		/* The block goes to a shared slot; what was there (another
		 * vCPU's, perhaps) comes here, checked against its header. */
		unsigned j = (unsigned)(r >> 16) % SHARED;
		uint8_t *q = __atomic_exchange_n(&T.shared[j], p, __ATOMIC_ACQ_REL);
		w->swaps++;
		w->slot[i] = q;
		w->len[i] = 0;
		if (q) {
			uint64_t n;
			__builtin_memcpy(&n, q, sizeof(n));
			if (n < HDR || n > BIG) {
				failed(w, me, "a shared block's header is not a length", q, (size_t)n, 0);
				return;
			}
			w->len[i] = (size_t)n;
			check(w, me, q, (size_t)n, (size_t)n);
		}
	}
}

/* One vCPU's part: steps until the end or a failure, then (if the heap
 * still looks sound) its blocks checked and freed. */
static void work(unsigned me)
{
	struct worker *w = &T.w[me];
	w->rnd = 0x9e3779b97f4a7c15ull * (me + 1) ^ (uint64_t)plat_now();
	for (uint64_t k = 0; !__atomic_load_n(&T.stop, __ATOMIC_ACQUIRE); k++) {
		if (k % 16 == 0 && plat_now() >= T.end)
			break;
		step(w, me);
	}
	for (unsigned i = 0; i < SLOTS && !__atomic_load_n(&T.stop, __ATOMIC_ACQUIRE); i++)
		if (w->slot[i] && check(w, me, w->slot[i], w->len[i], w->len[i])) {
			t_free(w, w->slot[i]);
			w->frees++;
			w->slot[i] = NULL;
		}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static bool all_done(void)
{
	for (unsigned k = 0; k < T.n; k++)
		if (!__atomic_load_n(&T.w[k].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static __attribute__((noreturn)) void verdict(void)
{
	const char *why = NULL;
	for (unsigned k = 0; k < T.n && !why; k++) {
		if (!__atomic_load_n(&T.w[k].done, __ATOMIC_ACQUIRE)) {
			static char late[120];
			ksnprintf(late, sizeof(late),
				  "cpu %u never finished (halted by musl's heap check, or stuck)", k);
			why = late;
		} else if (T.w[k].why[0]) {
			why = T.w[k].why;
		}
	}
	uint64_t total = 0;
	for (unsigned k = 0; k < T.n; k++) {
		const struct worker *w = &T.w[k];
		total += w->steps;
		kprintf("skiff-uk: heap-stress: cpu %u: %lu steps: %lu malloc, %lu calloc, %lu "
			"posix_memalign, %lu strdup, %lu realloc, %lu free, %lu swaps; %lu bytes "
			"checked; %lu overlaps\n",
			k, w->steps, w->mallocs, w->callocs, w->aligned, w->strdups, w->reallocs,
			w->frees, w->swaps, w->checked, w->overlaps);
	}
	uint64_t taken, contended;
	if (!why) {
		/* The shared slots' blocks, checked and freed. */
		for (unsigned j = 0; j < SHARED && !why; j++) {
			uint8_t *q = T.shared[j];
			uint64_t n;
			if (!q)
				continue;
			__builtin_memcpy(&n, q, sizeof(n));
			if (n < HDR || n > BIG || !check(&T.w[0], 0, q, (size_t)n, (size_t)n))
				why = T.w[0].why[0] ? T.w[0].why : "a shared block's header is not a length";
			else
				t_free(&T.w[0], q);
		}
		musl_heap_lock_stats(&taken, &contended);
		struct musl_heap_info hi;
		musl_heap_info(&hi);
		kprintf("skiff-uk: heap-stress: heap lock taken %lu times, %lu of them after a wait; "
			"pages %lu of %lu in use, %lu mmaps, %lu munmaps\n",
			taken, contended, (unsigned long)hi.pages_used, (unsigned long)hi.pages,
			hi.mmaps, hi.munmaps);
	}
	if (why) {
		kprintf("skiff-uk: heap-stress: FAILED (%s): %s\n", T.unlocked ? "unlocked" : "locked", why);
		kvm_exit(KVM_EXIT_FATAL);
	}
	kprintf("skiff-uk: heap-stress: ok (%s): %u vCPUs, %lu steps, every block intact\n",
		T.unlocked ? "unlocked" : "locked", T.n, total);
	kvm_exit(KVM_EXIT_OK);
}

/* An AP: its part, then the verdict's wait; if the BSP gives none in
 * time (halted: see the top), this one gives it. */
static void ap_work(void *arg)
{
	work((unsigned)(uintptr_t)arg);
	sk_time_ns until = T.end + 2 * WAIT_NS;
	while (!__atomic_load_n(&T.reported, __ATOMIC_ACQUIRE) && plat_now() < until)
		cpu_pause();
	if (!__atomic_exchange_n(&T.reported, 1, __ATOMIC_ACQ_REL))
		verdict();
}

/* "heap-stress=S" or "heap-stress=S,unlocked" among the words; 0 if absent,
 * -1 if malformed. */
static int parse(const char *cmdline, bool *unlocked)
{
	static const char key[] = "heap-stress=";
	for (const char *p = cmdline; *p;) {
		while (*p == ' ')
			p++;
		const char *word = p;
		while (*p && *p != ' ')
			p++;
		size_t wl = (size_t)(p - word), kl = sizeof(key) - 1;
		if (wl < kl || sk_memcmp(word, key, kl) != 0)
			continue;
		const char *v = word + kl, *end = word + wl;
		int s = 0;
		while (v < end && *v >= '0' && *v <= '9' && s <= 60)
			s = s * 10 + (*v++ - '0');
		*unlocked = false;
		if (v < end && end - v == 9 && sk_memcmp(v, ",unlocked", 9) == 0) {
			*unlocked = true;
			v = end;
		}
		return v == end && s >= 1 && s <= 60 ? s : -1;
	}
	return 0;
}

void musl_heap_stress(const char *cmdline)
{
	bool unlocked;
	int s = parse(cmdline, &unlocked);
	if (s == 0)
		return;
	if (s < 0) {
		kprintf("skiff-uk: heap-stress=S[,unlocked]: S is 1..60 seconds; not booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	T.unlocked = unlocked;
	T.n = smp_cpus();
	T.end = plat_now() + (sk_time_ns)s * SK_NS_PER_S;
	kprintf("skiff-uk: heap-stress: %u vCPUs, %d s, %s\n", T.n, s,
		unlocked ? "unlocked (musl's own calls, no lock)" : "through the heap lock");
	for (unsigned k = 1; k < T.n; k++)
		if (smp_run_on(k, ap_work, (void *)(uintptr_t)k) < 0) {
			kprintf("skiff-uk: heap-stress: cpu %u would not take the work\n", k);
			kvm_exit(KVM_EXIT_FATAL);
		}
	work(0);
	sk_time_ns until = T.end + WAIT_NS;
	while (!all_done() && plat_now() < until)
		cpu_pause();
	if (!__atomic_exchange_n(&T.reported, 1, __ATOMIC_ACQ_REL))
		verdict();
	for (;;) /* an AP gives the verdict */
		cpu_pause();
}
