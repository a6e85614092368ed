/* virtio_mmio_arg_test.c — the virtio_mmio.device= words: what QEMU's
 * microvm and Firecracker pass, the number forms and suffixes, each
 * refusal at its bound, and the command line that is left for the
 * options parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "conf/virtio_mmio_arg.h"

static int parse(const char *s, struct virtio_mmio_dev *d, const char **why)
{
	return virtio_mmio_arg_parse(s, strlen(s), d, why);
}

static void test_forms(void **state)
{
	(void)state;
	struct virtio_mmio_dev d;
	const char *why = NULL;
	assert_int_equal(parse("512@0xfeb00e00:12", &d, &why), 0); /* QEMU 7.2 microvm */
	assert_int_equal(d.size, 512);
	assert_true(d.base == 0xfeb00e00u);
	assert_int_equal(d.irq, 12);
	assert_int_equal(parse("4K@0xd0001000:6:0", &d, &why), 0); /* Firecracker, with an id */
	assert_int_equal(d.size, 4096);
	assert_true(d.base == 0xd0001000u);
	assert_int_equal(d.irq, 6);
	assert_int_equal(parse("1M@0X1000000000:255", &d, &why), 0); /* above 4 GiB, upper X */
	assert_int_equal(d.size, 1u << 20);
	assert_true(d.base == 0x1000000000ull);
	assert_int_equal(parse("0x200@4096:0", &d, &why), 0);
	assert_int_equal(d.size, 512);
	assert_true(d.base == 4096);
	assert_int_equal(parse("1k@0xFEB00E00:5", &d, &why), 0);
	assert_int_equal(d.size, 1024);
	assert_true(d.base == 0xfeb00e00u);
}

static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",                          /* nothing */
		"512",                       /* no base */
		"512@",                      /* empty base */
		"512@0x1000",                /* no irq */
		"512@0x1000:",               /* empty irq */
		"511@0x1000:5",              /* under the register window */
		"2M@0x1000:5",               /* over 1M with a suffix */
		"1048577@0x1000:5",          /* over 1M without */
		"1G@0x1000:5",
		"512@0x1002:5",              /* not 4-byte aligned */
		"512@0xfffffffffffffe04:5",  /* the window wraps */
		"512@0x10000000000000000:5", /* base over 64 bits */
		"512@0x1000:256",            /* irq over 255 */
		"512@0x1000:5:",             /* empty id */
		"512@0x1000:5:1:2",          /* junk after the id */
		"512@0x1000:5 ",             /* junk after the irq */
		"0x@0x1000:5",               /* a prefix without digits */
		"-512@0x1000:5",
		"512@-0x1000:5",
		"512T@0x1000:5",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct virtio_mmio_dev d = {0};
		const char *why = NULL;
		if (parse(bad[i], &d, &why) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_non_null(why);
		assert_true(d.size == 0); /* nothing written on refusal */
	}
}

/* n bytes and no further: a value cut short must not read its tail. */
static void test_exact_length(void **state)
{
	(void)state;
	struct virtio_mmio_dev d;
	const char *why;
	const char *s = "512@0x1000:56";
	assert_int_equal(virtio_mmio_arg_parse(s, strlen(s) - 1, &d, &why), 0);
	assert_int_equal(d.irq, 5);
	assert_int_equal(virtio_mmio_arg_parse(s, 4, &d, &why), -1);
}

static void test_take(void **state)
{
	(void)state;
	struct virtio_mmio_dev d[VIRTIO_MMIO_DEV_MAX];
	const char *why = NULL;
	char line[] = "exit-after=1  virtio_mmio.device=512@0xfeb00e00:12 port=80\t"
		      "virtio_mmio.device=4K@0xd0000000:5";
	assert_int_equal(virtio_mmio_args_take(line, d, VIRTIO_MMIO_DEV_MAX, &why), 2);
	assert_string_equal(line, "exit-after=1 port=80");
	assert_true(d[0].base == 0xfeb00e00u);
	assert_int_equal(d[0].irq, 12);
	assert_true(d[1].base == 0xd0000000u);
	assert_int_equal(d[1].size, 4096);

	char none[] = "port=80 virtio_mmio.devicex virtio_mmio.device";
	assert_int_equal(virtio_mmio_args_take(none, d, VIRTIO_MMIO_DEV_MAX, &why), 0);
	assert_string_equal(none, "port=80 virtio_mmio.devicex virtio_mmio.device");

	char only[] = " virtio_mmio.device=512@0x1000:1 ";
	assert_int_equal(virtio_mmio_args_take(only, d, VIRTIO_MMIO_DEV_MAX, &why), 1);
	assert_string_equal(only, "");

	char empty[] = "";
	assert_int_equal(virtio_mmio_args_take(empty, d, VIRTIO_MMIO_DEV_MAX, &why), 0);

	char bad[] = "port=80 virtio_mmio.device=512@0x1000";
	assert_int_equal(virtio_mmio_args_take(bad, d, VIRTIO_MMIO_DEV_MAX, &why), -1);
	assert_non_null(strstr(why, "SIZE@BASE:IRQ"));

	char two[] = "virtio_mmio.device=512@0x1000:1 virtio_mmio.device=512@0x2000:2";
	assert_int_equal(virtio_mmio_args_take(two, d, 1, &why), -1);
	assert_non_null(strstr(why, "more devices"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_exact_length),
		cmocka_unit_test(test_take),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
