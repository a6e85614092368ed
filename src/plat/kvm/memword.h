/* memword.h — the unikernel's memcpy and memset, 8 bytes at a time
 * (libc.c's memcpy, memmove and memset are these; memword_test.c checks
 * them against a byte loop at every length, offset and alignment).
 *
 * Why not `rep movsb` / `rep stosb`: under TCG, where the guest runs when
 * the host has no KVM (every test and benchmark here), QEMU executes a
 * rep string instruction one element per iteration through a helper, so
 * movsb copies a byte at a time.  Measured in the guest (a one-off image
 * whose uk_app_main timed each variant with plat_now; QEMU 7.2 TCG, -cpu
 * max, the shared 2-core test machine at load ~2.7, two rounds each,
 * 2026-12-04):
 *
 *   copy                  rep movsb       these words      rep movsq (tried)
 *   1 MiB x 100           3.51-4.32 s     0.111-0.124 s    0.35-0.72 s
 *     per byte            33-41 ns        1.06-1.18 ns     3.3-6.9 ns
 *   1460 B x 20000        31-39 ns/B      0.95-1.23 ns/B   3.0-9.5 ns/B
 *   64 B x 200000         49-55 ns/B      2.4-3.0 ns/B     3.6-7.4 ns/B
 *   12 B x 200000         32-53 ns/B      3.9-5.2 ns/B     11-33 ns/B
 *   set 1 MiB x 100       rep stosb 0.122-0.158 s, these words 0.010-0.011 s
 *
 * so a copy is ~30x faster on bodies and segments, and the words beat
 * rep movsq (one helper call per 8 bytes) too.  With KVM on a CPU with
 * ERMSB, rep movsb may beat a loop of 8-byte moves on large copies; that
 * was not measurable here (no /dev/kvm).  No SSE: the kernel is -mgeneral-regs-only.
 *
 * Shape: lengths under 8 with two (possibly overlapping) 4-byte or three
 * 1-byte moves; otherwise one unaligned word at the start, the aligned
 * words of the destination (32 bytes a turn), and the last 8 bytes as one
 * unaligned word that may overlap what the loop wrote (the same bytes
 * again).  The last word is read before anything is written, which is
 * harmless for memcpy (no overlap allowed) and is not used for overlapping
 * moves (libc.c's memmove keeps rep movsb for those).  Accesses go
 * through may_alias types, unaligned ones through aligned(1) types: no
 * strict-aliasing or alignment UB, and no byte loop the compiler could
 * turn back into a call to memcpy (the kernel also builds with
 * -fno-tree-loop-distribute-patterns / -ffreestanding). */
#ifndef PLAT_KVM_MEMWORD_H
#define PLAT_KVM_MEMWORD_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t __attribute__((may_alias)) mw_u64;                /* aligned */
typedef uint64_t __attribute__((may_alias, aligned(1))) mw_u64u;  /* any address */
typedef uint32_t __attribute__((may_alias, aligned(1))) mw_u32u;

static inline void *mw_copy(void *restrict dv, const void *restrict sv, size_t n)
{
	uint8_t *d = dv;
	const uint8_t *s = sv;
	if (n < 8) {
		if (n >= 4) {
			uint32_t a = *(const mw_u32u *)s, b = *(const mw_u32u *)(s + n - 4);
			*(mw_u32u *)d = a;
			*(mw_u32u *)(d + n - 4) = b;
		} else if (n) { /* 1: [0]; 2: [0] [1]; 3: [0] [1] [2] */
			uint8_t a = s[0], b = s[n / 2], c = s[n - 1];
			d[0] = a;
			d[n / 2] = b;
			d[n - 1] = c;
		}
		return dv;
	}
	uint64_t last = *(const mw_u64u *)(s + n - 8);
	uint8_t *dlast = d + n - 8;
	*(mw_u64u *)d = *(const mw_u64u *)s;
	size_t skip = 8 - ((uintptr_t)d & 7); /* 1..8: to d's next 8-byte boundary */
	d += skip;
	s += skip;
	n -= skip;
	for (; n >= 32; n -= 32, d += 32, s += 32) {
		uint64_t a = ((const mw_u64u *)s)[0], b = ((const mw_u64u *)s)[1];
		uint64_t c = ((const mw_u64u *)s)[2], e = ((const mw_u64u *)s)[3];
		((mw_u64 *)d)[0] = a;
		((mw_u64 *)d)[1] = b;
		((mw_u64 *)d)[2] = c;
		((mw_u64 *)d)[3] = e;
	}
	for (; n >= 8; n -= 8, d += 8, s += 8)
		*(mw_u64 *)d = *(const mw_u64u *)s;
	*(mw_u64u *)dlast = last;
	return dv;
}

static inline void *mw_set(void *dv, int c, size_t n)
{
	uint8_t *d = dv;
	uint64_t v = (uint64_t)(uint8_t)c * 0x0101010101010101ull;
	if (n < 8) {
		if (n >= 4) {
			*(mw_u32u *)d = (uint32_t)v;
			*(mw_u32u *)(d + n - 4) = (uint32_t)v;
		} else if (n) {
			d[0] = (uint8_t)c;
			d[n / 2] = (uint8_t)c;
			d[n - 1] = (uint8_t)c;
		}
		return dv;
	}
	*(mw_u64u *)(d + n - 8) = v;
	*(mw_u64u *)d = v;
	size_t skip = 8 - ((uintptr_t)d & 7);
	d += skip;
	n -= skip;
	for (; n >= 32; n -= 32, d += 32) {
		((mw_u64 *)d)[0] = v;
		((mw_u64 *)d)[1] = v;
		((mw_u64 *)d)[2] = v;
		((mw_u64 *)d)[3] = v;
	}
	for (; n >= 8; n -= 8, d += 8)
		*(mw_u64 *)d = v;
	return dv;
}

#endif
