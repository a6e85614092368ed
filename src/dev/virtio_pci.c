/* virtio_pci.c — find a modern virtio-net PCI function and map its
 * register regions for the driver (src/dev/virtio_net.c).
 *
 * Modern virtio-pci (virtio 1.2, 4.1.4) describes its regions with
 * vendor-specific capabilities: cfg_type 1 common, 2 notify, 3 isr,
 * 4 device-specific; each names a BAR, an offset and a length.  BARs may
 * lie above 4 GiB, so each region is mapped on demand (mmu.c). */
#include "virtio_pci.h"
#include "../plat/kvm/kvm.h"

#define PCI_CAP_VENDOR 0x09
#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_DEV_NET_MODERN 0x1041
#define VIRTIO_DEV_NET_TRANSITIONAL 0x1000

static int match_net(void *ctx, const struct pci_dev *d)
{
	if (d->vendor != VIRTIO_VENDOR)
		return 0;
	bool net = d->device == VIRTIO_DEV_NET_MODERN ||
		   (d->device == VIRTIO_DEV_NET_TRANSITIONAL && pci_read16(d, 0x2e) == 1);
	if (!net)
		return 0;
	*(struct pci_dev *)ctx = *d;
	return 1;
}

int virtio_pci_find_net(struct pci_dev *out)
{
	return pci_scan(match_net, out) ? 0 : -1;
}

int virtio_pci_map(const struct pci_dev *d, struct virtio_regs *r, const char **why)
{
	sk_memset(r, 0, sizeof(*r));
	r->t = &virtio_transport_pci;
	pci_enable(d);
	for (uint8_t cap = pci_find_cap(d, PCI_CAP_VENDOR, 0); cap;
	     cap = pci_find_cap(d, PCI_CAP_VENDOR, cap)) {
		uint8_t type = pci_read8(d, (uint8_t)(cap + 3));
		uint8_t bar = pci_read8(d, (uint8_t)(cap + 4));
		uint32_t off = pci_read32(d, (uint8_t)(cap + 8));
		uint32_t len = pci_read32(d, (uint8_t)(cap + 12));
		if (type < 1 || type > 4 || bar > 5 || !len)
			continue;
		volatile uint8_t **slot = type == 1 ? &r->common : type == 2 ? &r->notify
					: type == 3 ? &r->isr : &r->device;
		if (*slot)
			continue; /* the first of each type is the preferred one */
		uint64_t base = pci_bar_addr(d, bar);
		if (!base)
			continue;
		volatile uint8_t *p = mmu_map_mmio(base + off, len);
		if (!p) {
			*why = "cannot map a BAR";
			return -1;
		}
		*slot = p;
		if (type == 2)
			r->notify_mult = pci_read32(d, (uint8_t)(cap + 16));
	}
	if (!r->common || !r->notify || !r->isr || !r->device) {
		*why = "virtio capability missing (not a modern device?)";
		return -1;
	}
	return 0;
}
