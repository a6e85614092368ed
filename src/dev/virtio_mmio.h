/* virtio_mmio.h — the platform half of virtio-net over MMIO (virtio 1.2,
 * 4.2): map a register window a `virtio_mmio.device=` word named
 * (conf/virtio_mmio_arg.h parses them; uk_main.c hands each over) and check that a modern network device sits
 * there.  The driver (virtio_net.c) then programs it through
 * virtio_transport_mmio. */
#ifndef DEV_VIRTIO_MMIO_H
#define DEV_VIRTIO_MMIO_H

#include "virtio_regs.h"

#define VIRTIO_ID_NET 1u

/* Map the window [base, base+size) and read its identity: 0 with r filled in when it holds
 * a version-2 device of type want; 1 when it holds another device type or
 * none (QEMU's microvm leaves unused transports with DeviceID 0); -1 with
 * *why set when it is not virtio-mmio at all, or legacy (version 1). */
int virtio_mmio_probe(uint64_t base, uint32_t size, uint32_t want, struct virtio_regs *r,
		      const char **why);

#endif
