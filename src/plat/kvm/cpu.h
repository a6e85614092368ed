/* cpu.h — x86_64 instructions the kvm platform needs, as inline functions.
 * Every asm that touches memory a device or an interrupt handler can see
 * carries a "memory" clobber, so the compiler never caches across it. */
#ifndef PLAT_KVM_CPU_H
#define PLAT_KVM_CPU_H

#include "../../base/sk.h"

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port) : "memory"); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port) : "memory"); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port) : "memory"); }
static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}
static inline uint16_t inw(uint16_t port)
{
	uint16_t v;
	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}
static inline uint32_t inl(uint16_t port)
{
	uint32_t v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
}

static inline void cpu_cli(void) { __asm__ volatile("cli" ::: "memory"); }
/* sti's one-instruction shadow makes "sti; hlt" atomic: an interrupt that
 * is already pending is taken only once hlt has started, so it wakes it. */
static inline void cpu_sti_hlt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }
__attribute__((noreturn)) static inline void cpu_halt_forever(void)
{
	for (;;)
		__asm__ volatile("cli; hlt" ::: "memory");
}
static inline void cpu_pause(void) { __builtin_ia32_pause(); }
/* Store->load ordering (x86 reorders only that): needed between publishing
 * an index and reading the other side's flags. */
static inline void cpu_mfence(void) { __asm__ volatile("mfence" ::: "memory"); }

static inline uint64_t read_cr2(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}
static inline uint64_t read_cr3(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}
static inline void write_cr3(uint64_t v) { __asm__ volatile("mov %0, %%cr3" ::"r"(v) : "memory"); }

/* MMIO: exact-width volatile accesses, never merged or split. */
static inline uint32_t mmio_read32(volatile void *p) { return *(volatile uint32_t *)p; }
static inline void mmio_write32(volatile void *p, uint32_t v) { *(volatile uint32_t *)p = v; }

#endif
