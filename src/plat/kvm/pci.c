/* pci.c — see pci.h. */
#include "pci.h"
#include "cpu.h"
#include "kvm.h"

#define PCI_CMD 0x04
#define PCI_STATUS 0x06
#define PCI_HEADER_TYPE 0x0e
#define PCI_CAP_PTR 0x34
#define PCI_CAP_MSIX 0x11

static uint32_t cfg_addr(const struct pci_dev *d, uint8_t off)
{
	return 0x80000000u | (uint32_t)d->bus << 16 | (uint32_t)d->dev << 11 |
	       (uint32_t)d->fn << 8 | (off & 0xfc);
}

uint32_t pci_read32(const struct pci_dev *d, uint8_t off)
{
	outl(0xcf8, cfg_addr(d, off));
	return inl(0xcfc);
}
uint16_t pci_read16(const struct pci_dev *d, uint8_t off)
{
	return (uint16_t)(pci_read32(d, off) >> ((off & 2) * 8));
}
uint8_t pci_read8(const struct pci_dev *d, uint8_t off)
{
	return (uint8_t)(pci_read32(d, off) >> ((off & 3) * 8));
}
void pci_write32(const struct pci_dev *d, uint8_t off, uint32_t v)
{
	outl(0xcf8, cfg_addr(d, off));
	outl(0xcfc, v);
}
void pci_write16(const struct pci_dev *d, uint8_t off, uint16_t v)
{
	outl(0xcf8, cfg_addr(d, off));
	outw((uint16_t)(0xcfc + (off & 2)), v);
}

int pci_scan(int (*visit)(void *ctx, const struct pci_dev *d), void *ctx)
{
	/* Brute force over every bus: 8192 config reads, cheap even under
	 * emulation, and correct without walking bridges. */
	for (unsigned bus = 0; bus < 256; bus++) {
		for (unsigned dev = 0; dev < 32; dev++) {
			for (unsigned fn = 0; fn < 8; fn++) {
				struct pci_dev d = {.bus = (uint8_t)bus, .dev = (uint8_t)dev, .fn = (uint8_t)fn};
				uint32_t id = pci_read32(&d, 0);
				if ((id & 0xffff) == 0xffff) {
					if (fn == 0)
						break;
					continue;
				}
				d.vendor = (uint16_t)id;
				d.device = (uint16_t)(id >> 16);
				uint32_t cls = pci_read32(&d, 0x08);
				d.class_code = (uint8_t)(cls >> 24);
				d.subclass = (uint8_t)(cls >> 16);
				int rc = visit(ctx, &d);
				if (rc)
					return rc;
				if (fn == 0 && !(pci_read8(&d, PCI_HEADER_TYPE) & 0x80))
					break; /* single-function device */
			}
		}
	}
	return 0;
}

uint64_t pci_bar_addr(const struct pci_dev *d, unsigned n)
{
	if (n > 5)
		return 0;
	uint32_t lo = pci_read32(d, (uint8_t)(0x10 + 4 * n));
	if (lo & 1)
		return 0; /* I/O space */
	uint64_t addr = lo & ~0xfull;
	if (((lo >> 1) & 3) == 2) { /* 64-bit */
		if (n == 5)
			return 0;
		addr |= (uint64_t)pci_read32(d, (uint8_t)(0x10 + 4 * (n + 1))) << 32;
	}
	return addr;
}

uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t after)
{
	if (!(pci_read16(d, PCI_STATUS) & 0x10))
		return 0;
	uint8_t off = after ? pci_read8(d, (uint8_t)(after + 1)) : pci_read8(d, PCI_CAP_PTR);
	/* At most 48 hops: a malformed list must not loop forever. */
	for (int hops = 0; off >= 0x40 && hops < 48; hops++) {
		off &= 0xfc;
		if (pci_read8(d, off) == id)
			return off;
		off = pci_read8(d, (uint8_t)(off + 1));
	}
	return 0;
}

void pci_enable(const struct pci_dev *d)
{
	pci_write16(d, PCI_CMD, (uint16_t)(pci_read16(d, PCI_CMD) | 0x2 | 0x4));
}

int pci_msix_setup(const struct pci_dev *d, unsigned entry, uint8_t vector, uint32_t apic_id)
{
	uint8_t cap = pci_find_cap(d, PCI_CAP_MSIX, 0);
	if (!cap)
		return -1;
	uint16_t ctl = pci_read16(d, (uint8_t)(cap + 2));
	unsigned size = (ctl & 0x7ffu) + 1;
	if (entry >= size)
		return -1;
	uint32_t tbl = pci_read32(d, (uint8_t)(cap + 4));
	uint64_t bar = pci_bar_addr(d, tbl & 7);
	if (!bar)
		return -1;
	volatile uint8_t *t = mmu_map_mmio(bar + (tbl & ~7u), size * 16u);
	if (!t)
		return -1;
	/* Enable with the function mask set, program, then unmask: the
	 * table is only guaranteed accessible once MSI-X is enabled. */
	pci_write16(d, (uint8_t)(cap + 2), (uint16_t)(ctl | 0x8000 | 0x4000));
	for (unsigned i = 0; i < size; i++)
		mmio_write32(t + 16 * i + 12, 1); /* every entry masked */
	volatile uint8_t *e = t + 16 * entry;
	mmio_write32(e + 0, 0xfee00000u | (apic_id & 0xff) << 12);
	mmio_write32(e + 4, 0);
	mmio_write32(e + 8, vector); /* edge, fixed delivery */
	mmio_write32(e + 12, 0);
	pci_write16(d, (uint8_t)(cap + 2), (uint16_t)((ctl | 0x8000) & ~0x4000));
	pci_write16(d, 0x04, (uint16_t)(pci_read16(d, 0x04) | 0x400)); /* INTx off */
	return 0;
}

int pci_msix_add(const struct pci_dev *d, unsigned entry, uint8_t vector, uint32_t apic_id)
{
	uint8_t cap = pci_find_cap(d, PCI_CAP_MSIX, 0);
	if (!cap)
		return -1;
	uint16_t ctl = pci_read16(d, (uint8_t)(cap + 2));
	unsigned size = (ctl & 0x7ffu) + 1;
	if (entry >= size || !(ctl & 0x8000))
		return -1; /* MSI-X not enabled: pci_msix_setup first */
	uint32_t tbl = pci_read32(d, (uint8_t)(cap + 4));
	uint64_t bar = pci_bar_addr(d, tbl & 7);
	volatile uint8_t *t = bar ? mmu_map_mmio(bar + (tbl & ~7u), size * 16u) : NULL;
	if (!t)
		return -1;
	volatile uint8_t *e = t + 16 * entry;
	mmio_write32(e + 12, 1); /* masked while it changes */
	mmio_write32(e + 0, 0xfee00000u | (apic_id & 0xff) << 12);
	mmio_write32(e + 4, 0);
	mmio_write32(e + 8, vector);
	mmio_write32(e + 12, 0);
	return 0;
}
