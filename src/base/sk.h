/* sk.h — the few definitions every layer shares.
 *
 * Freestanding: only the compiler's own headers (stdint, stddef, stdbool).
 * The core layers (wire, ring, net, http, switch) include this and nothing from
 * the OS; `make check-freestanding` proves it by compiling them with
 * -ffreestanding -nostdinc.  mem* helpers map to compiler builtins, which the
 * hosted build resolves to libc and the unikernel to its own small versions.
 */
#ifndef SK_H
#define SK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define sk_memcpy(d, s, n) __builtin_memcpy((d), (s), (n))
#define sk_memmove(d, s, n) __builtin_memmove((d), (s), (n))
#define sk_memset(d, c, n) __builtin_memset((d), (c), (n))
#define sk_memcmp(a, b, n) __builtin_memcmp((a), (b), (n))
/* A literal's length folds to a constant; others call strlen (the guest's
 * is plat/kvm/libc.c's or musl's). */
#define sk_strlen(s) __builtin_strlen(s)

#define SK_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SK_MAX(a, b) ((a) > (b) ? (a) : (b))
#define sk_likely(x) __builtin_expect(!!(x), 1)
#define sk_unlikely(x) __builtin_expect(!!(x), 0)

/* Time is always passed in, in nanoseconds of a monotonic clock. */
typedef uint64_t sk_time_ns;
#define SK_NS_PER_US 1000ull
#define SK_NS_PER_MS 1000000ull
#define SK_NS_PER_S 1000000000ull
#define SK_TIME_NEVER UINT64_MAX

/* Big-endian (network order) loads and stores on unaligned byte pointers.
 * Every wire field goes through these; the structs hold host-order values. */
static inline uint16_t sk_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}
static inline uint32_t sk_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void sk_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void sk_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* IPv4 addresses are host-order uint32_t everywhere above wire. */
#define SK_IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

#define SK_MAC_LEN 6

/* For invariant checkers (tcp_check, http_app_check): return
 * -(this line) from the checker when a promise is broken, so a failing
 * test names the one that broke. */
#define SK_CHECK(cond)                    \
	do {                              \
		if (!(cond))              \
			return -__LINE__; \
	} while (0)

#endif
