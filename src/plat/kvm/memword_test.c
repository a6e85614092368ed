/* memword_test.c — the unikernel's word memcpy and memset (memword.h)
 * against a byte loop: every length 0..300 and some large ones, every
 * source and destination offset 0..15, with guard bytes around the
 * destination that must stay untouched.  Runs hosted (the functions are
 * pure), under ASan+UBSan in `make asan`: an unaligned or aliasing access
 * the types do not allow would be reported there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plat/kvm/memword.h"

#define GUARD 16
#define MAXN 5000

static uint8_t src[MAXN + 64], dst[MAXN + 64 + 2 * GUARD], want[MAXN + 64 + 2 * GUARD];

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131u + seed * 17u + (i >> 8));
}

static void check_copy(size_t n, size_t so, size_t doff, unsigned seed)
{
	fill(src, sizeof(src), seed);
	memset(dst, 0xa5, sizeof(dst));
	memset(want, 0xa5, sizeof(want));
	for (size_t i = 0; i < n; i++) /* the reference: a byte loop */
		want[GUARD + doff + i] = src[so + i];
	void *r = mw_copy(dst + GUARD + doff, src + so, n);
	assert_ptr_equal(r, dst + GUARD + doff);
	if (memcmp(dst, want, GUARD + doff + n + GUARD) != 0)
		fail_msg("mw_copy n=%zu src+%zu dst+%zu differs", n, so, doff);
}

static void check_set(size_t n, size_t doff, int c)
{
	memset(dst, 0xa5, sizeof(dst));
	memset(want, 0xa5, sizeof(want));
	for (size_t i = 0; i < n; i++)
		want[GUARD + doff + i] = (uint8_t)c;
	void *r = mw_set(dst + GUARD + doff, c, n);
	assert_ptr_equal(r, dst + GUARD + doff);
	if (memcmp(dst, want, GUARD + doff + n + GUARD) != 0)
		fail_msg("mw_set n=%zu dst+%zu c=%d differs", n, doff, c);
}

static void test_copy_every_shape(void **state)
{
	(void)state;
	unsigned seed = 1;
	for (size_t n = 0; n <= 300; n++)
		for (size_t so = 0; so < 16; so++)
			for (size_t d = 0; d < 16; d++)
				check_copy(n, so, d, seed++);
	static const size_t big[] = {511, 512, 513, 1460, 1514, 2048, 4095, 4096, 4097, MAXN};
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		for (size_t so = 0; so < 16; so += 3)
			for (size_t d = 0; d < 16; d += 5)
				check_copy(big[i], so, d, seed++);
}

static void test_set_every_shape(void **state)
{
	(void)state;
	for (size_t n = 0; n <= 300; n++)
		for (size_t d = 0; d < 16; d++)
			check_set(n, d, (int)(n * 7 + d));
	check_set(MAXN, 3, 0);
	check_set(MAXN, 0, 0x1ff); /* only the low byte counts, as memset's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_every_shape),
		cmocka_unit_test(test_set_every_shape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
