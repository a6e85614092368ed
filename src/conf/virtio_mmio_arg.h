/* virtio_mmio_arg.h — the `virtio_mmio.device=` words of a kernel command
 * line: how Firecracker and QEMU's microvm machine (with acpi=off) tell a
 * guest where its virtio-mmio devices are, in Linux's syntax
 *
 *     virtio_mmio.device=<size>@<base>:<irq>[:<id>]
 *
 * size, base and irq are decimal or 0x-hex; size may end in K, M or G
 * (x1024 each); id is an optional decimal instance number, ignored.
 * QEMU 7.2 microvm passes `virtio_mmio.device=512@0xfeb00e00:12`,
 * Firecracker `virtio_mmio.device=4K@0xd0001000:6`.
 *
 * Pure and bounds-checked: the command line is input from outside the
 * guest (fuzz/fuzz_virtio_mmio_arg.c).  Freestanding, like conf/opts. */
#ifndef CONF_VIRTIO_MMIO_ARG_H
#define CONF_VIRTIO_MMIO_ARG_H

#include "../base/sk.h"

#define VIRTIO_MMIO_ARG_PREFIX "virtio_mmio.device="
#define VIRTIO_MMIO_DEV_MAX 8u           /* devices we take at most */
#define VIRTIO_MMIO_MIN_SIZE 0x200u      /* registers (0x100) and a config window */
#define VIRTIO_MMIO_MAX_SIZE (1u << 20)  /* a register window, not a BAR */
#define VIRTIO_MMIO_MAX_IRQ 255u         /* a GSI an IOAPIC can route */

struct virtio_mmio_dev {
	uint64_t base;  /* guest physical, 4-byte aligned */
	uint32_t size;  /* bytes, VIRTIO_MMIO_MIN_SIZE..VIRTIO_MMIO_MAX_SIZE */
	uint32_t irq;   /* the legacy interrupt line (GSI) */
};

/* Parse the value of one word (what follows "virtio_mmio.device="), n
 * bytes, no terminator needed.  Returns 0, or -1 with *why set to a static
 * message. */
int virtio_mmio_arg_parse(const char *s, size_t n, struct virtio_mmio_dev *d, const char **why);

/* Take every virtio_mmio.device= word out of the NUL-terminated command
 * line, in place (the rest keeps its words, single-spaced as they were,
 * for the options parser), into out[0..max-1].  Returns how many were
 * found, or -1 with *why set: a malformed word, or more than max. */
int virtio_mmio_args_take(char *cmdline, struct virtio_mmio_dev *out, unsigned max,
			  const char **why);

#endif
