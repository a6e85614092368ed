/* pci.h — PCI configuration space (mechanism #1, ports 0xcf8/0xcfc),
 * enumeration, BARs and MSI-X.  Enough for QEMU's pc and q35 machines,
 * whose devices all sit behind the legacy config ports. */
#ifndef PLAT_KVM_PCI_H
#define PLAT_KVM_PCI_H

#include "../../base/sk.h"

struct pci_dev {
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint8_t class_code, subclass;
};

uint32_t pci_read32(const struct pci_dev *d, uint8_t off);
uint16_t pci_read16(const struct pci_dev *d, uint8_t off);
uint8_t pci_read8(const struct pci_dev *d, uint8_t off);
void pci_write32(const struct pci_dev *d, uint8_t off, uint32_t v);
void pci_write16(const struct pci_dev *d, uint8_t off, uint16_t v);

/* Call visit for every function present on every bus, in bus/dev/fn order;
 * stop when it returns non-zero, and return that value (0 if none did). */
int pci_scan(int (*visit)(void *ctx, const struct pci_dev *d), void *ctx);

/* Physical address of memory BAR n (64-bit BARs combine n and n+1);
 * 0 for an I/O BAR, an unassigned one or n > 5. */
uint64_t pci_bar_addr(const struct pci_dev *d, unsigned n);

/* Offset in config space of the first capability with this id, after
 * `after` (0 = from the start); 0 if none. */
uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t after);

/* Turn on memory decoding and bus mastering (DMA). */
void pci_enable(const struct pci_dev *d);

/* MSI-X: map the table, point entry `entry` at this CPU's LAPIC with
 * `vector`, unmask it, enable MSI-X (INTx off).  Returns 0 or -1 if the
 * function has no MSI-X or too few entries. */
int pci_msix_setup(const struct pci_dev *d, unsigned entry, uint8_t vector, uint32_t apic_id);
/* One more entry after pci_msix_setup, the others left as they are: a
 * queue's interrupt on another CPU's LAPIC.  0, or -1. */
int pci_msix_add(const struct pci_dev *d, unsigned entry, uint8_t vector, uint32_t apic_id);

#endif
