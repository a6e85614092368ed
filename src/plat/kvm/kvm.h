/* kvm.h — the kvm platform's interface to the unikernel's application
 * (apps/uk_main.c): console, traps, time, memory, shutdown, the start
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

/* trap.c */
#define VEC_TIMER 0x20
#define VEC_VIRTIO_NET 0x30
#define VEC_PIC_BASE 0xe0      /* the 8259s, remapped here and masked */
#define VEC_SPURIOUS 0xff
void trap_init(void);
typedef void (*irq_fn)(void *ctx);
void trap_set_handler(unsigned vector, irq_fn fn, void *ctx);
extern volatile uint64_t trap_irq_count[256];

/* time.c: TSC clock and LAPIC timer.  plat_now() (plat.h) reads it. */
int time_init(void);               /* calibrate the TSC, start the LAPIC */
uint64_t time_tsc_hz(void);
const char *time_source(void);     /* how the TSC was calibrated */
bool time_deadline_mode(void);     /* TSC-deadline (else one-shot count) */
/* Program the one-shot timer for `deadline` (plat_now() units);
 * SK_TIME_NEVER stops it.  Reloads the hardware only when the deadline
 * differs from the one it holds (seed 000, 99fc1c4). */
void timer_arm(sk_time_ns deadline);
extern uint64_t timer_loads, timer_skips, timer_fires;
extern uint64_t park_hlts; /* park.c: halts executed */
void lapic_eoi(void);
uint32_t lapic_id(void);

/* mmu.c: map [phys, phys+len) uncached, identity.  Returns the virtual
 * address (== phys) or NULL if the page-table pool is exhausted. */
void *mmu_map_mmio(uint64_t phys, uint64_t len);

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
 * unikernel's main, apps/uk_main.c); it returns the exit code (KVM_EXIT_*
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
};
unsigned uk_app_main(const struct kvm_start *st);

#endif
