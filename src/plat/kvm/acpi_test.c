/* acpi_test.c — acpi_madt_parse over byte arrays: the CPUs the
 * unikernel starts come from firmware bytes, so every malformed shape
 * must be refused, never read past.  (acpi.c is included: its table walk
 * reads guest-physical memory and only runs in the guest; the parser is
 * pure.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plat/kvm/acpi.c"

/* A MADT: the 36-byte header and the 8 bytes of LAPIC address and flags
 * (not checked by the parser), then the entries given. */
static uint32_t madt(uint8_t *t, const uint8_t *entries, uint32_t n)
{
	memset(t, 0, 44);
	memcpy(t, "APIC", 4);
	memcpy(t + 44, entries, n);
	t[4] = (uint8_t)(44 + n);
	return 44 + n;
}

static void test_lapics_enabled_only(void **state)
{
	(void)state;
	static const uint8_t e[] = {
		0, 8, 0, 0, 1, 0, 0, 0, /* uid 0, apic 0, enabled */
		0, 8, 1, 1, 0, 0, 0, 0, /* apic 1, disabled: not started */
		1, 12, 0, 0, 0, 0, 0xc0, 0xfe, 0, 0, 0, 0, /* an I/O APIC: skipped */
		0, 8, 2, 5, 1, 0, 0, 0, /* apic 5, enabled */
		9, 16, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, /* x2APIC 7, enabled */
	};
	uint8_t t[256];
	uint32_t len = madt(t, e, sizeof(e)), ids[8];
	unsigned n = 9, sk = 9;
	const char *why = NULL;
	assert_int_equal(acpi_madt_parse(t, len, ids, 8, &n, &sk, &why), 0);
	assert_int_equal(n, 3);
	assert_int_equal(sk, 0);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 5);
	assert_int_equal(ids[2], 7);
}

static void test_more_than_max_counted(void **state)
{
	(void)state;
	uint8_t e[8 * 5], t[256];
	for (int i = 0; i < 5; i++) {
		uint8_t one[8] = {0, 8, (uint8_t)i, (uint8_t)i, 1, 0, 0, 0};
		memcpy(e + 8 * i, one, 8);
	}
	uint32_t len = madt(t, e, sizeof(e)), ids[3];
	unsigned n, sk;
	const char *why = NULL;
	assert_int_equal(acpi_madt_parse(t, len, ids, 3, &n, &sk, &why), 0);
	assert_int_equal(n, 3);
	assert_int_equal(sk, 2);
}

static void test_x2apic_above_254_left_off(void **state)
{
	(void)state;
	static const uint8_t e[] = {
		0, 8, 0, 0, 1, 0, 0, 0,
		9, 16, 0, 0, 0x00, 0x01, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, /* x2APIC 256 */
	};
	uint8_t t[256];
	uint32_t len = madt(t, e, sizeof(e)), ids[8];
	unsigned n, sk;
	const char *why = NULL;
	assert_int_equal(acpi_madt_parse(t, len, ids, 8, &n, &sk, &why), 0);
	assert_int_equal(n, 1);
	assert_int_equal(sk, 1);
}

static void refused(const uint8_t *e, uint32_t elen, uint32_t cut)
{
	uint8_t t[256];
	uint32_t len = madt(t, e, elen), ids[8];
	unsigned n, sk;
	const char *why = NULL;
	assert_int_equal(acpi_madt_parse(t, len - cut, ids, 8, &n, &sk, &why), -1);
	assert_non_null(why);
}

static void test_malformed_refused(void **state)
{
	(void)state;
	static const uint8_t zero_len[] = {0, 8, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0};  /* length 0: would loop */
	static const uint8_t one_len[] = {0, 8, 0, 0, 1, 0, 0, 0, 4, 1, 0, 0};   /* length 1 */
	static const uint8_t past[] = {0, 8, 0, 0, 1, 0, 0, 0, 0, 9, 1, 1, 1, 0, 0, 0}; /* 9 > 8 left */
	static const uint8_t short_lapic[] = {0, 6, 0, 0, 1, 0};
	static const uint8_t short_x2[] = {9, 8, 0, 0, 1, 0, 0, 0};
	static const uint8_t none[] = {0, 8, 0, 0, 0, 0, 0, 0};               /* nothing enabled */
	static const uint8_t ok[] = {0, 8, 0, 0, 1, 0, 0, 0};
	refused(zero_len, sizeof(zero_len), 0);
	refused(one_len, sizeof(one_len), 0);
	refused(past, sizeof(past), 0);
	refused(short_lapic, sizeof(short_lapic), 0);
	refused(short_x2, sizeof(short_x2), 0);
	refused(none, sizeof(none), 0);
	for (uint32_t cut = 1; cut < 8; cut++) /* every truncation of the one entry */
		refused(ok, sizeof(ok), cut);
	uint8_t t[64] = {0};
	uint32_t ids[1];
	unsigned n, sk;
	const char *why = NULL;
	assert_int_equal(acpi_madt_parse(t, 43, ids, 1, &n, &sk, &why), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lapics_enabled_only),
		cmocka_unit_test(test_more_than_max_counted),
		cmocka_unit_test(test_x2apic_above_254_left_off),
		cmocka_unit_test(test_malformed_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
