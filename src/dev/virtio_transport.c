/* virtio_transport.c — the register operations of the two virtio
 * transports (virtio_regs.h): modern PCI's common configuration (virtio
 * 1.2, 4.1.4.3) and MMIO version 2 (4.2.2).  Pure register access over
 * what the platform mapped, so the driver's unit tests run them over
 * plain memory; finding and mapping the device is virtio_pci.c's and
 * virtio_mmio.c's. */
#include "virtio_regs.h"

static uint8_t rd8(volatile uint8_t *b, unsigned o) { return *(volatile uint8_t *)(b + o); }
static uint16_t rd16(volatile uint8_t *b, unsigned o) { return *(volatile uint16_t *)(b + o); }
static uint32_t rd32(volatile uint8_t *b, unsigned o) { return *(volatile uint32_t *)(b + o); }
static void wr8(volatile uint8_t *b, unsigned o, uint8_t v) { *(volatile uint8_t *)(b + o) = v; }
static void wr16(volatile uint8_t *b, unsigned o, uint16_t v) { *(volatile uint16_t *)(b + o) = v; }
static void wr32(volatile uint8_t *b, unsigned o, uint32_t v) { *(volatile uint32_t *)(b + o) = v; }

/* ---- modern PCI: struct virtio_pci_common_cfg, byte offsets ---- */
#define CC_DFSELECT 0
#define CC_DF 4
#define CC_GFSELECT 8
#define CC_GF 12
#define CC_MSIX_CONFIG 16
#define CC_STATUS 20
#define CC_CFG_GEN 21
#define CC_Q_SELECT 22
#define CC_Q_SIZE 24
#define CC_Q_MSIX 26
#define CC_Q_ENABLE 28
#define CC_Q_NOFF 30
#define CC_Q_DESC 32
#define CC_Q_DRIVER 40
#define CC_Q_DEVICE 48

/* 64-bit fields as two 32-bit writes, low first (allowed by 4.1.3.1). */
static void wr64(volatile uint8_t *b, unsigned o, uint64_t v)
{
	wr32(b, o, (uint32_t)v);
	wr32(b, o + 4, (uint32_t)(v >> 32));
}

static uint8_t pci_status(const struct virtio_regs *r) { return rd8(r->common, CC_STATUS); }
static void pci_set_status(const struct virtio_regs *r, uint8_t s) { wr8(r->common, CC_STATUS, s); }

static uint32_t pci_features(const struct virtio_regs *r, uint32_t sel)
{
	wr32(r->common, CC_DFSELECT, sel);
	return rd32(r->common, CC_DF);
}

static void pci_set_features(const struct virtio_regs *r, uint32_t sel, uint32_t bits)
{
	wr32(r->common, CC_GFSELECT, sel);
	wr32(r->common, CC_GF, bits);
}

static uint32_t pci_config_gen(const struct virtio_regs *r) { return rd8(r->common, CC_CFG_GEN); }

static void pci_config_irq_off(const struct virtio_regs *r)
{
	wr16(r->common, CC_MSIX_CONFIG, VIRTIO_MSI_NO_VECTOR);
}

static uint16_t pci_queue_max(const struct virtio_regs *r, uint16_t q)
{
	wr16(r->common, CC_Q_SELECT, q);
	return rd16(r->common, CC_Q_SIZE); /* before we write it: the maximum */
}

static int pci_queue_setup(const struct virtio_regs *r, uint16_t q, uint16_t size, uint64_t desc,
			   uint64_t driver, uint64_t device, uint16_t msix, struct virtio_doorbell *bell,
			   const char **why)
{
	volatile uint8_t *cc = r->common;
	wr16(cc, CC_Q_SELECT, q);
	wr16(cc, CC_Q_SIZE, size);
	wr64(cc, CC_Q_DESC, desc);
	wr64(cc, CC_Q_DRIVER, driver);
	wr64(cc, CC_Q_DEVICE, device);
	wr16(cc, CC_Q_MSIX, msix);
	if (rd16(cc, CC_Q_MSIX) != msix) {
		*why = "device refused the MSI-X vector";
		return -1;
	}
	bell->addr = r->notify + (uint32_t)rd16(cc, CC_Q_NOFF) * r->notify_mult;
	bell->wide = false;
	wr16(cc, CC_Q_ENABLE, 1);
	return 0;
}

static uint32_t pci_irq_ack(const struct virtio_regs *r) { return rd8(r->isr, 0); }

const struct virtio_transport virtio_transport_pci = {
	.name = "pci",
	.status = pci_status,
	.set_status = pci_set_status,
	.features = pci_features,
	.set_features = pci_set_features,
	.config_gen = pci_config_gen,
	.config_irq_off = pci_config_irq_off,
	.queue_max = pci_queue_max,
	.queue_setup = pci_queue_setup,
	.irq_ack = pci_irq_ack,
};

/* ---- MMIO version 2: every control register is 32 bits wide, and the
 * driver must access them with aligned 32-bit reads and writes only
 * (4.2.2.2); QEMU drops any other width. ---- */
static uint8_t mmio_status(const struct virtio_regs *r)
{
	return (uint8_t)rd32(r->common, VIRTIO_MMIO_STATUS);
}

static void mmio_set_status(const struct virtio_regs *r, uint8_t s)
{
	wr32(r->common, VIRTIO_MMIO_STATUS, s);
}

static uint32_t mmio_features(const struct virtio_regs *r, uint32_t sel)
{
	wr32(r->common, VIRTIO_MMIO_DEV_FEATURES_SEL, sel);
	return rd32(r->common, VIRTIO_MMIO_DEV_FEATURES);
}

static void mmio_set_features(const struct virtio_regs *r, uint32_t sel, uint32_t bits)
{
	wr32(r->common, VIRTIO_MMIO_DRV_FEATURES_SEL, sel);
	wr32(r->common, VIRTIO_MMIO_DRV_FEATURES, bits);
}

static uint32_t mmio_config_gen(const struct virtio_regs *r)
{
	return rd32(r->common, VIRTIO_MMIO_CONFIG_GENERATION);
}

static void mmio_config_irq_off(const struct virtio_regs *r)
{
	(void)r; /* no vectors: a config change only sets InterruptStatus bit 1 */
}

static uint16_t mmio_queue_max(const struct virtio_regs *r, uint16_t q)
{
	wr32(r->common, VIRTIO_MMIO_QUEUE_SEL, q);
	uint32_t max = rd32(r->common, VIRTIO_MMIO_QUEUE_NUM_MAX);
	return max > 0xffffu ? 0xffffu : (uint16_t)max;
}

static int mmio_queue_setup(const struct virtio_regs *r, uint16_t q, uint16_t size, uint64_t desc,
			    uint64_t driver, uint64_t device, uint16_t msix, struct virtio_doorbell *bell,
			    const char **why)
{
	volatile uint8_t *m = r->common;
	if (msix != VIRTIO_MSI_NO_VECTOR) {
		*why = "virtio-mmio has no MSI-X vectors";
		return -1;
	}
	wr32(m, VIRTIO_MMIO_QUEUE_SEL, q);
	/* 4.2.3.2: the queue must not be in use; after a reset it is not. */
	if (rd32(m, VIRTIO_MMIO_QUEUE_READY) != 0) {
		*why = "virtqueue already in use (QueueReady set after reset)";
		return -1;
	}
	wr32(m, VIRTIO_MMIO_QUEUE_NUM, size);
	wr32(m, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	wr32(m, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	wr32(m, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)driver);
	wr32(m, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(driver >> 32));
	wr32(m, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)device);
	wr32(m, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(device >> 32));
	wr32(m, VIRTIO_MMIO_QUEUE_READY, 1);
	bell->addr = m + VIRTIO_MMIO_QUEUE_NOTIFY; /* one doorbell, the index says which */
	bell->wide = true;
	return 0;
}

static uint32_t mmio_irq_ack(const struct virtio_regs *r)
{
	uint32_t s = rd32(r->common, VIRTIO_MMIO_INTERRUPT_STATUS);
	if (s)
		wr32(r->common, VIRTIO_MMIO_INTERRUPT_ACK, s);
	return s;
}

const struct virtio_transport virtio_transport_mmio = {
	.name = "mmio",
	.status = mmio_status,
	.set_status = mmio_set_status,
	.features = mmio_features,
	.set_features = mmio_set_features,
	.config_gen = mmio_config_gen,
	.config_irq_off = mmio_config_irq_off,
	.queue_max = mmio_queue_max,
	.queue_setup = mmio_queue_setup,
	.irq_ack = mmio_irq_ack,
};
