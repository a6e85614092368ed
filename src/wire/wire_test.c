/* wire_test.c — error names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wire/wire.h"

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(wire_strerror(WIRE_OK), "ok");
	assert_string_equal(wire_strerror(WIRE_ETRUNC), "trunc");
	assert_string_equal(wire_strerror(WIRE_ECSUM), "csum");
	assert_string_equal(wire_strerror(WIRE_EBADADDR), "badaddr");
	assert_string_equal(wire_strerror(1), "unknown");
	assert_string_equal(wire_strerror(-WIRE_NERR), "unknown");
	assert_string_equal(wire_strerror(-1000), "unknown");
	/* Every code has its own name: they label drop counters. */
	for (int a = 0; a < WIRE_NERR; a++)
		for (int b = a + 1; b < WIRE_NERR; b++)
			assert_true(strcmp(wire_strerror(-a), wire_strerror(-b)) != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror),
	};
	return cmocka_run_group_tests_name("wire/wire", tests, NULL, NULL);
}
