/* virtio_mmio.c — see virtio_mmio.h.  The window is device memory: mapped
 * uncached by mmu_map_mmio, read with 32-bit loads only (4.2.2.2). */
#include "virtio_mmio.h"
#include "../plat/kvm/kvm.h"

int virtio_mmio_probe(uint64_t base, uint32_t size, uint32_t want, struct virtio_regs *r,
		      const char **why)
{
	sk_memset(r, 0, sizeof(*r));
	volatile uint8_t *m = mmu_map_mmio(base, size);
	if (!m) {
		*why = "cannot map the virtio-mmio window";
		return -1;
	}
	uint32_t magic = *(volatile uint32_t *)(m + VIRTIO_MMIO_MAGIC);
	uint32_t version = *(volatile uint32_t *)(m + VIRTIO_MMIO_VERSION);
	uint32_t id = *(volatile uint32_t *)(m + VIRTIO_MMIO_DEVICE_ID);
	if (magic != VIRTIO_MMIO_MAGIC_VALUE) {
		*why = "no virtio-mmio magic at the window a virtio_mmio.device= word names";
		return -1;
	}
	if (version != 2) {
		/* 4.2.4: legacy devices have version 1 and a different
		 * register layout (QEMU: -global virtio-mmio.force-legacy=false). */
		*why = "virtio-mmio version 1 (legacy): only version 2 is driven";
		return -1;
	}
	if (id != want)
		return 1;
	r->t = &virtio_transport_mmio;
	r->common = m;
	r->device = m + VIRTIO_MMIO_CONFIG;
	return 0;
}
