/* site_bundle_test.c — the configuration bundle's reader (site_bundle.h)
 * on a hand-built bundle: found by name and kind, then each check broken
 * on purpose (the module is untrusted: every broken field is refused with
 * a reason, never read past). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "archive/site_bundle.h"

/* text "conf" (name "/etc"), an archive "/etc/a" at 4096 (8 bytes), a PEM
 * "/etc/a.crt" after it. */
static uint8_t *build(uint64_t *size)
{
	static const char *names[] = {"/etc", "/etc/a", "/etc/a.crt"};
	static const uint32_t kinds[] = {SB_CONF, SB_ARCHIVE, SB_PEM};
	uint64_t off[] = {200, 4096, 4104}, len[] = {4, 8, 5};
	uint64_t total = 4109;
	uint8_t *b = calloc(1, total);
	memcpy(b, sb_magic, 8);
	sb_put32(b + 8, SB_VERSION);
	sb_put32(b + 12, 3);
	sb_put32(b + 16, SB_F_USER_NET);
	sb_put64(b + 24, total);
	uint64_t name_at = SB_HEADER_LEN + 3 * SB_PART_LEN;
	for (unsigned i = 0; i < 3; i++) {
		uint8_t *e = b + SB_HEADER_LEN + i * SB_PART_LEN;
		sb_put32(e, kinds[i]);
		sb_put32(e + 4, (uint32_t)strlen(names[i]));
		sb_put64(e + 8, name_at);
		sb_put64(e + 16, off[i]);
		sb_put64(e + 24, len[i]);
		memcpy(b + name_at, names[i], strlen(names[i]));
		name_at += strlen(names[i]);
	}
	memcpy(b + 200, "conf", 4);
	memcpy(b + 4096, "SKARSKAR", 8);
	memcpy(b + 4104, "-----", 5);
	*size = total;
	return b;
}

static void test_valid(void **state)
{
	(void)state;
	uint64_t n;
	uint8_t *b = build(&n);
	struct sb_view v;
	const char *why;
	assert_true(sb_is_bundle(b, n));
	assert_int_equal(sb_open(&v, b, n, &why), 0);
	assert_int_equal(v.count, 3);
	assert_int_equal(v.flags, SB_F_USER_NET);
	struct sb_part p;
	sb_part_at(&v, 0, &p);
	assert_int_equal(p.kind, SB_CONF);
	assert_memory_equal(p.data, "conf", 4);
	assert_true(sb_find(&v, SB_ARCHIVE, "/etc/a", &p));
	assert_int_equal(p.len, 8);
	assert_ptr_equal(p.data, b + 4096);
	assert_true(sb_find(&v, SB_PEM, "/etc/a.crt", &p));
	assert_false(sb_find(&v, SB_PEM, "/etc/a", &p));  /* the kind counts */
	assert_false(sb_find(&v, SB_ARCHIVE, "/etc/", &p)); /* the whole name */
	assert_false(sb_is_bundle(b + 1, n - 1));
	free(b);
}

/* Each case breaks one field; sb_open must refuse with a reason. */
static void test_broken(void **state)
{
	(void)state;
	struct {
		const char *what;
		uint64_t at;
		int width; /* 32 or 64 */
		uint64_t value;
		uint64_t size_delta; /* the module shorter than total_len */
	} cases[] = {
		{"version", 8, 32, 2, 0},
		{"count 0", 12, 32, 0, 0},
		{"count past the module", 12, 32, 200, 0},
		{"total_len", 24, 64, 4108, 0},
		{"module shorter", 0, 0, 0, 1},
		{"kind unknown", SB_HEADER_LEN + SB_PART_LEN, 32, 9, 0},
		{"text not first", SB_HEADER_LEN, 32, SB_PEM, 0},
		{"second text", SB_HEADER_LEN + 2 * SB_PART_LEN, 32, SB_CONF, 0},
		{"name past the end", SB_HEADER_LEN + 8, 64, 4108, 0},
		{"name too long", SB_HEADER_LEN + 4, 32, SB_MAX_NAME + 1, 0},
		{"data past the end", SB_HEADER_LEN + 2 * SB_PART_LEN + 24, 64, 6, 0},
		{"data offset wraps", SB_HEADER_LEN + 2 * SB_PART_LEN + 16, 64, UINT64_MAX - 1, 0},
		{"archive unaligned", SB_HEADER_LEN + SB_PART_LEN + 16, 64, 4095, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t n;
		uint8_t *b = build(&n);
		if (cases[i].width == 32)
			sb_put32(b + cases[i].at, (uint32_t)cases[i].value);
		else if (cases[i].width == 64)
			sb_put64(b + cases[i].at, cases[i].value);
		struct sb_view v;
		const char *why = NULL;
		int rc = sb_open(&v, b, n - cases[i].size_delta, &why);
		if (rc != -1 || !why)
			fail_msg("%s: accepted", cases[i].what);
		free(b);
	}
	struct sb_view v;
	const char *why;
	assert_int_equal(sb_open(&v, "SKIFFCF", 7, &why), -1);
	assert_int_equal(sb_open(&v, NULL, 0, &why), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_broken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
