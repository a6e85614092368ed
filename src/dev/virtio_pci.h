/* virtio_pci.h — the platform half of virtio-net: find the PCI function,
 * map its modern virtio regions. */
#ifndef DEV_VIRTIO_PCI_H
#define DEV_VIRTIO_PCI_H

#include "../plat/kvm/pci.h"
#include "virtio_regs.h"

/* The first virtio-net function (modern 0x1041, or transitional 0x1000
 * with subsystem id 1).  Returns 0 or -1. */
int virtio_pci_find_net(struct pci_dev *out);

/* Enable the function and map its common/notify/isr/device regions. */
int virtio_pci_map(const struct pci_dev *d, struct virtio_regs *r, const char **why);

#endif
