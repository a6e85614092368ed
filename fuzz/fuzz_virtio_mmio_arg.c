/* fuzz_virtio_mmio_arg.c — the kernel command line's virtio_mmio.device=
 * words (conf/virtio_mmio_arg.h) on arbitrary bytes, as a guest's boot
 * would get them from the VMM.
 * Input: the command line (a NUL ends it early, as at boot).  Checks: no
 * read or write past the exact-size copy (ASan); every device taken obeys
 * the header's bounds; the line that is left has no virtio_mmio.device=
 * word and is no longer than what went in; taking again finds nothing.
 * Build: make build/fuzz/fuzz_virtio_mmio_arg. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/virtio_mmio_arg.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	if (!line)
		abort();
	memcpy(line, data, size);
	line[size] = 0;
	size_t before = strlen(line);
	struct virtio_mmio_dev d[VIRTIO_MMIO_DEV_MAX];
	const char *why = NULL;
	int n = virtio_mmio_args_take(line, d, VIRTIO_MMIO_DEV_MAX, &why);
	if (n < 0) {
		CHECK(why != NULL);
	} else {
		CHECK((unsigned)n <= VIRTIO_MMIO_DEV_MAX);
		for (int i = 0; i < n; i++) {
			CHECK(d[i].size >= VIRTIO_MMIO_MIN_SIZE && d[i].size <= VIRTIO_MMIO_MAX_SIZE);
			CHECK(d[i].irq <= VIRTIO_MMIO_MAX_IRQ);
			CHECK((d[i].base & 3) == 0 && d[i].base <= UINT64_MAX - d[i].size);
		}
		CHECK(strlen(line) <= before);
		struct virtio_mmio_dev again[1];
		CHECK(virtio_mmio_args_take(line, again, 1, &why) == 0);
	}
	/* One value alone, exact size: no terminator to lean on. */
	char *v = malloc(size ? size : 1);
	if (!v)
		abort();
	memcpy(v, data, size);
	struct virtio_mmio_dev one;
	if (virtio_mmio_arg_parse(v, size, &one, &why) == 0)
		CHECK(one.size >= VIRTIO_MMIO_MIN_SIZE && one.irq <= VIRTIO_MMIO_MAX_IRQ);
	free(v);
	free(line);
	return 0;
}
