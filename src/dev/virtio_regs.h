/* virtio_regs.h — where the platform mapped a modern virtio-pci
 * function's regions (virtio 1.2, 4.1.4): the hand-over from the
 * transport (virtio_pci.c, which finds and maps them) to the driver above
 * it (dev/virtio_net.c, which programs them).  Freestanding, like both. */
#ifndef DEV_VIRTIO_REGS_H
#define DEV_VIRTIO_REGS_H

#include "../base/sk.h"

#define VIRTIO_MSI_NO_VECTOR 0xffffu /* "no MSI-X vector" in the common config */

struct virtio_pci_regs {
	volatile uint8_t *common; /* struct virtio_pci_common_cfg */
	volatile uint8_t *notify; /* notification area base */
	uint32_t notify_mult;     /* notify_off_multiplier */
	volatile uint8_t *isr;
	volatile uint8_t *device; /* struct virtio_net_config */
};

#endif
