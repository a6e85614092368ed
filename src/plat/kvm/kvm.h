/* kvm.h — the kvm platform's interface to the unikernel's application
 * (uk/uk_main.c): console, traps, time, memory, shutdown, the start
 * info.  The core never sees it (it gets plat.h and a struct dev). */
#ifndef PLAT_KVM_H
#define PLAT_KVM_H

#include <stdarg.h>

#include "../../base/sk.h"

/* console.c: COM1, 115200 8N1.  kprintf understands %d %i %u %x %X %p %s %c
 * %%, the length modifiers l, ll, z and a zero-pad width ("%08lx"). */
void console_init(void);
void console_write(const char *s, size_t n);
__attribute__((format(printf, 1, 2))) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Leave QEMU through isa-debug-exit (port 0xf4): QEMU's exit status
 * becomes (code << 1) | 1.  If the device is absent, halt forever. */
__attribute__((noreturn)) void kvm_exit(unsigned code);
/* Exit codes: 0 clean, 1 a fatal setup error, 64 + vector a CPU exception. */
#define KVM_EXIT_OK 0u
#define KVM_EXIT_FATAL 1u
#define KVM_EXIT_EXCEPTION_BASE 64u

/* The CPUs.  Each has one of these, reached through its GS base
 * (kvm_cpu_this: one load, no LAPIC read), written only by that CPU
 * except where a field says otherwise.  Index 0 is the bootstrap
 * processor; the APs follow in MADT order (smp.c). */
#define KVM_MAX_CPUS 16
struct kvm_cpu {
	struct kvm_cpu *self;   /* %gs:0 */
	unsigned index;         /* 0 .. KVM_MAX_CPUS-1 */
	uint32_t apic_id;
	volatile uint64_t irq_count[256];     /* trap.c: interrupts taken, per vector */
	volatile sk_time_ns timer_loaded;     /* time.c: what this LAPIC timer holds */
	uint64_t timer_loads, timer_skips, timer_fires;
	uint64_t park_hlts;                   /* park.c and the AP idle loop: halts */
	/* smp_run_on: written by the BSP, then the wake IPI; the AP takes
	 * it (and clears work) in its idle loop. */
	void (*volatile work)(void *arg);
	void *volatile work_arg;
	volatile int up;                      /* set by the AP once it runs its idle loop */
	int errno_val;                        /* libc.c's __errno_location: errno is per vCPU */
};
static inline struct kvm_cpu *kvm_cpu_this(void)
{
	struct kvm_cpu *c;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(c));
	return c;
}

/* trap.c */
#define VEC_TIMER 0x20
#define VEC_VIRTIO_NET 0x30
#define VEC_IPI_WAKE 0x40      /* smp_run_on: wake an AP from its idle hlt */
#define VEC_PIC_BASE 0xe0      /* the 8259s, remapped here and masked */
#define VEC_SPURIOUS 0xff
void trap_init(void);          /* the BSP: build the IDT, mask the 8259s, load it */
void trap_load(void);          /* an AP: load the same IDT */
typedef void (*irq_fn)(void *ctx);
/* Before the APs start: the handler table is read by every CPU. */
void trap_set_handler(unsigned vector, irq_fn fn, void *ctx);

/* time.c: TSC clock and LAPIC timer.  plat_now() (plat.h) reads it. */
int time_init(void);               /* calibrate the TSC, start the LAPIC */
void time_init_ap(void);           /* an AP: its LAPIC and timer, as the BSP's */
uint64_t time_tsc_hz(void);
const char *time_source(void);     /* how the TSC was calibrated */
bool time_deadline_mode(void);     /* TSC-deadline (else one-shot count) */
uint64_t time_apic_hz(void);       /* one-shot mode: LAPIC timer ticks a second (0 in TSC-deadline mode) */
uint64_t time_apic_err_ppm(void);  /* ... and its calibration's uncertainty, parts per million */
/* Program the one-shot timer for `deadline` (plat_now() units);
 * SK_TIME_NEVER stops it.  Reloads the hardware only when the deadline
 * differs from the one it holds (seed 000, 99fc1c4). */
void timer_arm(sk_time_ns deadline);  /* this CPU's timer */
void lapic_eoi(void);
uint32_t lapic_id(void);
/* Interprocessor interrupts (SDM vol. 3, 10.6): write ICR high (the
 * destination APIC ID) then low (vector, delivery mode, level); wait
 * until the LAPIC has sent it.  Returns 0, or -1 if it stays pending. */
#define ICR_FIXED 0x0000u
#define ICR_INIT 0x0500u
#define ICR_STARTUP 0x0600u
#define ICR_ASSERT 0x4000u
int lapic_send_ipi(uint32_t apic_id, uint32_t icr_lo);

/* acpi.c: the enabled CPUs' APIC IDs from the MADT, in table order, at
 * most max (more are counted in *skipped).  rsdp_paddr: the PVH start
 * info's, or 0 to scan for it.  0, or -1 with *why. */
int acpi_cpus(uint64_t rsdp_paddr, uint32_t *ids, unsigned max, unsigned *n, unsigned *skipped,
	      const char **why);
/* The MADT's entries alone (a pure function over the table's bytes). */
int acpi_madt_parse(const uint8_t *madt, uint32_t len, uint32_t *ids, unsigned max, unsigned *n,
		    unsigned *skipped, const char **why);

/* smp.c: the BSP's kvm_cpu (before anything else in kmain), then, once
 * memory and the clocks are up, every AP the MADT lists: INIT, SIPI,
 * SIPI to a real-mode trampoline at 0x8000, long mode on the boot page
 * tables, a 64 KiB stack, the shared GDT and IDT, its own LAPIC timer,
 * then an idle loop that parks in `sti; hlt`.  Returns the CPUs up
 * (the BSP included). */
void smp_init_bsp(void);
unsigned smp_boot_aps(uint64_t rsdp_paddr);
unsigned smp_cpus(void);                 /* CPUs up, the BSP included */
struct kvm_cpu *smp_cpu(unsigned index); /* NULL past smp_cpus() */
/* Run fn(arg) on AP `index` (>= 1): it wakes from its idle park, runs
 * fn, and parks again when fn returns.  -1 if it is not up or busy. */
int smp_run_on(unsigned index, void (*fn)(void *arg), void *arg);
/* Wake CPU `index` (not this one) from a park with VEC_IPI_WAKE: its
 * plat_park returns PLAT_WOKE_OTHER and its loop looks at its stop flag. */
int smp_kick(unsigned index);
/* AP `index` has no work (fn returned), or is not up. */
bool smp_idle(unsigned index);

/* mmu.c: map [phys, phys+len) uncached, identity.  Returns the virtual
 * address (== phys) or NULL if the page-table pool is exhausted. */
void *mmu_map_mmio(uint64_t phys, uint64_t len);

/* ioapic.c: send interrupt line gsi to vector on the CPU with apic_id
 * (level- or edge-triggered) through the I/O APIC at the PC's default
 * address.  Returns 0, or -1 with *why set (no I/O APIC, gsi past its
 * entries). */
int ioapic_route(uint32_t gsi, uint8_t vector, uint32_t apic_id, bool level, const char **why);

/* rtc.c: the CMOS clock, UTC.  Returns 0, or -1 if it reads as nonsense. */
struct rtc_time {
	unsigned year, month, day, hour, min, sec;
};
int rtc_read(struct rtc_time *t);

/* mem.c: a bump allocator over guest RAM above the image (below 4 GiB,
 * the identity-mapped part).  Memory is not zeroed and never freed. */
int mem_init(uint64_t memmap_paddr, uint32_t entries); /* PVH memmap, or 0, 0 */
/* Before mem_init: keep [lo, hi) (rounded out to pages) out of the heap.
 * -1 if the table (4) is full. */
int mem_reserve(uint64_t lo, uint64_t hi);
/* [lo, hi) lies inside one usable RAM range of the map, below 4 GiB. */
bool mem_is_ram(uint64_t memmap_paddr, uint32_t entries, uint64_t lo, uint64_t hi);
void *mem_alloc(size_t size, size_t align);            /* NULL: does not fit */
struct mem_info {
	uint64_t ram;        /* usable RAM the map reports */
	uint64_t image_end;  /* end of the kernel image and .bss */
	uint64_t heap_base, heap_used, heap_free;
	const char *source;  /* "pvh-memmap" or "cmos" */
};
void mem_info(struct mem_info *mi);

/* trap.c: raise a CPU exception on purpose ("ud", "pf", "gp", "de"), to
 * test the handler: it prints the registers and exits 64 + vector. */
void trap_raise(const char *kind);

/* start.c: what the platform hands the application after boot, and the
 * application's entry.  uk_app_main is supplied above the platform (the
 * unikernel's main, uk/uk_main.c); it returns the exit code (KVM_EXIT_*
 * or the one it was asked to exit with). */
struct kvm_start {
	char *cmdline;        /* the kernel command line, writable, NUL-terminated */
	struct rtc_time rtc;  /* the wall clock at boot (UTC), if rtc_ok */
	bool rtc_ok;
	sk_time_ns rtc_at;    /* plat_now() when it was read */
	/* The first PVH module (QEMU -initrd: `skiff vm --root`'s site
	 * archive), identity-mapped, read-only by convention and reserved
	 * from the heap; NULL/0 when there is none.  Its bytes are untrusted. */
	const uint8_t *module;
	uint64_t module_len;
	/* CPUs up, the BSP included (smp.c); the APs idle in `sti; hlt`
	 * until smp_run_on gives them work. */
	unsigned cpus;
};
unsigned uk_app_main(const struct kvm_start *st);

/* musl/ (musl.h): the guest's C library, linked only into images with an
 * application; weak, so these are NULL in the others.  musl_boot runs on
 * the BSP before the APs start, musl_ap on each AP as it comes up. */
void musl_boot(void) __attribute__((weak));
void musl_ap(unsigned index) __attribute__((weak));
/* The word heap-stress=S[,unlocked] (musl/heap_stress.c): once the APs are
 * up, every vCPU works musl's heap, then the guest exits with the
 * verdict.  Returns at once without the word. */
void musl_heap_stress(const char *cmdline) __attribute__((weak));

#endif
