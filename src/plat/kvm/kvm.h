/* kvm.h — the kvm platform's internal interface: console, traps, time,
 * memory mapping, shutdown.  Used by the unikernel's main and the virtio
 * glue; the core never sees it (it gets plat.h and a struct dev). */
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
void *mem_alloc(size_t size, size_t align);            /* NULL: does not fit */
struct mem_info {
	uint64_t ram;        /* usable RAM the map reports */
	uint64_t image_end;  /* end of the kernel image and .bss */
	uint64_t heap_base, heap_used, heap_free;
	const char *source;  /* "pvh-memmap" or "cmos" */
};
void mem_info(struct mem_info *mi);

/* cmdline.c */
struct kvm_args {
	uint32_t ip, gw;
	uint8_t prefix_len;
	uint8_t mac[SK_MAC_LEN];
	bool have_mac;
	uint64_t spin_us;
	uint64_t exit_after_s;   /* 0 = run forever */
	uint16_t shutdown_port;  /* 0 = none */
	const char *fault;       /* NULL, "ud", "pf", "gp", "de" */
	bool stats;
	bool no_msix;
	/* The HTTP server (0: main.c's default) */
	uint16_t port;
	uint64_t max_conns;
	uint64_t header_timeout_s, keepalive_timeout_s;
	uint64_t max_body;
	bool have_max_body;      /* max-body=0 is a real limit (no bodies) */
	uint64_t tcp_sndbuf, tcp_rcvbuf; /* bytes per socket */
};
/* Parse "ip=10.0.2.15/24 gw=10.0.2.2 ..." (see main.c for the keys).
 * Unknown or malformed keys are reported on the console and make it
 * return -1; the string is modified in place. */
int cmdline_parse(char *s, struct kvm_args *a);
int parse_ipv4(const char *s, uint32_t *ip);

#endif
