/* virtio_regs.h — the hand-over from a virtio transport to the driver
 * above it (dev/virtio_net.c): where the platform mapped the device's
 * registers, and the transport's register operations.
 *
 * Two transports, one driver (virtio 1.2, 4.1 and 4.2):
 *   modern PCI   virtio_pci.c finds the function and maps its common,
 *                notify, isr and device regions (4.1.4);
 *   MMIO         virtio_mmio.c maps the one register window a
 *                `virtio_mmio.device=` word names (4.2.2), version 2
 *                (modern) only: the device region is at +0x100.
 * The driver calls the operations in struct virtio_transport for
 * everything that differs (status, features, queue setup, the doorbell)
 * and reads the device configuration through regs.device on both: a
 * plain byte-addressed window on both transports.  Freestanding, like
 * both sides. */
#ifndef DEV_VIRTIO_REGS_H
#define DEV_VIRTIO_REGS_H

#include "../base/sk.h"

#define VIRTIO_MSI_NO_VECTOR 0xffffu /* "no MSI-X vector" in the common config */

struct virtio_transport;

struct virtio_regs {
	const struct virtio_transport *t; /* virtio_transport_pci or _mmio */
	volatile uint8_t *common; /* PCI: struct virtio_pci_common_cfg;
				   * MMIO: the register window (4.2.2) */
	volatile uint8_t *notify; /* PCI: notification area base */
	uint32_t notify_mult;     /* PCI: notify_off_multiplier */
	volatile uint8_t *isr;    /* PCI: the ISR status byte */
	volatile uint8_t *device; /* struct virtio_net_config */
};

/* A queue's doorbell: the driver writes the queue index there.  PCI's is
 * 16 bits wide (4.1.4.4); MMIO's QueueNotify is a 32-bit register, and
 * the spec allows only 32-bit accesses to it (4.2.2.2). */
struct virtio_doorbell {
	volatile void *addr;
	bool wide;                /* a 32-bit write (MMIO) */
};

static inline void virtio_ring_doorbell(const struct virtio_doorbell *b, uint16_t index)
{
	if (b->wide)
		*(volatile uint32_t *)b->addr = index;
	else
		*(volatile uint16_t *)b->addr = index;
}

/* The register operations that differ between the transports.  Every
 * one takes the regs the platform filled in. */
struct virtio_transport {
	const char *name;
	uint8_t (*status)(const struct virtio_regs *r);
	void (*set_status)(const struct virtio_regs *r, uint8_t s);
	/* 32 feature bits from word sel (0: bits 0-31, 1: bits 32-63). */
	uint32_t (*features)(const struct virtio_regs *r, uint32_t sel);
	void (*set_features)(const struct virtio_regs *r, uint32_t sel, uint32_t bits);
	uint32_t (*config_gen)(const struct virtio_regs *r);
	/* No config-change interrupt (PCI: msix_config; MMIO: nothing to do). */
	void (*config_irq_off)(const struct virtio_regs *r);
	/* The largest size queue q may have; 0 if it does not exist. */
	uint16_t (*queue_max)(const struct virtio_regs *r, uint16_t q);
	/* Give queue q its size and ring addresses (guest physical), its
	 * MSI-X vector (VIRTIO_MSI_NO_VECTOR: none; MMIO has none and
	 * refuses any other), enable it, and say where its doorbell is.
	 * Returns 0, or -1 with *why set. */
	int (*queue_setup)(const struct virtio_regs *r, uint16_t q, uint16_t size, uint64_t desc,
			   uint64_t driver, uint64_t device, uint16_t msix, struct virtio_doorbell *bell,
			   const char **why);
	/* Read and acknowledge the interrupt status (bit 0: a used buffer,
	 * bit 1: a configuration change): what a line-interrupt handler does
	 * before its EOI.  PCI's ISR clears on read; MMIO needs the ack. */
	uint32_t (*irq_ack)(const struct virtio_regs *r);
};

/* virtio_transport.c */
extern const struct virtio_transport virtio_transport_pci;
extern const struct virtio_transport virtio_transport_mmio;

/* MMIO register offsets (virtio 1.2, 4.2.2), for the transport and its
 * probe. */
#define VIRTIO_MMIO_MAGIC 0x000        /* "virt", little-endian */
#define VIRTIO_MMIO_VERSION 0x004      /* 2: modern; 1: legacy (refused) */
#define VIRTIO_MMIO_DEVICE_ID 0x008    /* 1: network card; 0: no device */
#define VIRTIO_MMIO_VENDOR_ID 0x00c
#define VIRTIO_MMIO_DEV_FEATURES 0x010
#define VIRTIO_MMIO_DEV_FEATURES_SEL 0x014
#define VIRTIO_MMIO_DRV_FEATURES 0x020
#define VIRTIO_MMIO_DRV_FEATURES_SEL 0x024
#define VIRTIO_MMIO_QUEUE_SEL 0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX 0x034
#define VIRTIO_MMIO_QUEUE_NUM 0x038
#define VIRTIO_MMIO_QUEUE_READY 0x044
#define VIRTIO_MMIO_QUEUE_NOTIFY 0x050
#define VIRTIO_MMIO_INTERRUPT_STATUS 0x060
#define VIRTIO_MMIO_INTERRUPT_ACK 0x064
#define VIRTIO_MMIO_STATUS 0x070
#define VIRTIO_MMIO_QUEUE_DESC_LOW 0x080
#define VIRTIO_MMIO_QUEUE_DESC_HIGH 0x084
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW 0x090
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH 0x094
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW 0x0a0
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH 0x0a4
#define VIRTIO_MMIO_CONFIG_GENERATION 0x0fc
#define VIRTIO_MMIO_CONFIG 0x100        /* the device configuration */
#define VIRTIO_MMIO_MAGIC_VALUE 0x74726976u

#endif
