/* ioapic.c — route one interrupt line (a GSI) to a LAPIC vector through
 * the I/O APIC: what a virtio-mmio device needs, having no MSI-X (QEMU's
 * microvm, Firecracker).  Only the redirection entry of that line is
 * written; every other line stays as the VMM left it (masked at reset).
 *
 * The I/O APIC sits at 0xfec00000 on both VMMs; the address is the PC's
 * default, which ACPI's MADT would otherwise give, and those VMMs boot
 * this guest without ACPI.  An absent I/O APIC reads as all ones, which
 * the version check below turns into a clear refusal.
 *
 * Registers (Intel 82093AA): IOREGSEL at +0x00 selects, IOWIN at +0x10
 * reads/writes; register 1 is the version (bits 16-23: last entry), the
 * redirection entries are 0x10 + 2n (low: vector, delivery, trigger,
 * mask) and 0x11 + 2n (high: the destination APIC id in bits 24-31). */
#include "cpu.h"
#include "kvm.h"

#define IOAPIC_BASE 0xfec00000ull
#define IOREGSEL 0x00
#define IOWIN 0x10
#define IOAPIC_VER 0x01
#define REDIR_LEVEL (1u << 15) /* level-triggered (else edge) */
#define REDIR_MASKED (1u << 16)

static volatile uint8_t *ioapic;

static uint32_t io_read(uint32_t reg)
{
	mmio_write32(ioapic + IOREGSEL, reg);
	return mmio_read32(ioapic + IOWIN);
}

static void io_write(uint32_t reg, uint32_t v)
{
	mmio_write32(ioapic + IOREGSEL, reg);
	mmio_write32(ioapic + IOWIN, v);
}

int ioapic_route(uint32_t gsi, uint8_t vector, uint32_t apic_id, bool level, const char **why)
{
	if (!ioapic)
		ioapic = mmu_map_mmio(IOAPIC_BASE, 0x20);
	if (!ioapic) {
		*why = "cannot map the I/O APIC";
		return -1;
	}
	uint32_t ver = io_read(IOAPIC_VER);
	if (ver == 0xffffffffu) {
		*why = "no I/O APIC at 0xfec00000";
		return -1;
	}
	uint32_t last = (ver >> 16) & 0xff;
	if (gsi > last) {
		*why = "the interrupt line is past the I/O APIC's last entry";
		return -1;
	}
	/* Masked while the two halves are written, then unmasked: never a
	 * half-written entry live.  Fixed delivery, physical destination,
	 * active high (virtio-mmio raises its line while InterruptStatus is
	 * non-zero: a level, so level-triggered, and the handler acks the
	 * device before the EOI or it would fire again at once). */
	uint32_t lo = vector | (level ? REDIR_LEVEL : 0);
	io_write(0x10 + 2 * gsi, lo | REDIR_MASKED);
	io_write(0x11 + 2 * gsi, apic_id << 24);
	io_write(0x10 + 2 * gsi, lo);
	return 0;
}
