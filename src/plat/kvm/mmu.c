/* mmu.c — identity mappings for device memory.
 *
 * boot.S maps 0..4 GiB write-back with 2 MiB pages.  Device BARs may sit
 * anywhere (QEMU puts 64-bit BARs above 4 GiB when the hole below is
 * full), so each BAR region is mapped on demand: the 2 MiB pages that
 * cover it get PCD|PWT (uncached; the firmware's MTRRs say the same for
 * the PCI hole, this makes it true without them), and page tables for
 * addresses above 4 GiB come from a small static pool. */
#include "cpu.h"
#include "kvm.h"

#define PTE_P 0x1ull
#define PTE_W 0x2ull
#define PTE_PWT 0x8ull
#define PTE_PCD 0x10ull
#define PTE_PS 0x80ull
#define PTE_ADDR 0x000ffffffffff000ull
#define PAGE_2M (2ull << 20)

#define POOL_PAGES 16
static uint64_t pool[POOL_PAGES][512] __attribute__((aligned(4096)));
static unsigned pool_used;

/* The next-level table of entry *e, created empty if absent. */
static uint64_t *table_of(uint64_t *e)
{
	if (!(*e & PTE_P)) {
		if (pool_used == POOL_PAGES)
			return NULL;
		uint64_t *t = pool[pool_used++];
		*e = (uint64_t)(uintptr_t)t | PTE_P | PTE_W;
	}
	return (uint64_t *)(uintptr_t)(*e & PTE_ADDR);
}

void *mmu_map_mmio(uint64_t phys, uint64_t len)
{
	if (!len || phys + len < phys || phys + len > (1ull << 46))
		return NULL;
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(read_cr3() & PTE_ADDR);
	for (uint64_t a = phys & ~(PAGE_2M - 1); a < phys + len; a += PAGE_2M) {
		uint64_t *pdpt = table_of(&pml4[(a >> 39) & 511]);
		uint64_t *pd = pdpt ? table_of(&pdpt[(a >> 30) & 511]) : NULL;
		if (!pd)
			return NULL;
		pd[(a >> 21) & 511] = a | PTE_P | PTE_W | PTE_PS | PTE_PCD | PTE_PWT;
		__asm__ volatile("invlpg (%0)" ::"r"(a) : "memory");
	}
	return (void *)(uintptr_t)phys;
}
