/* start.c — from boot.S to the application: read the PVH start info
 * (command line, memory map, the first module), bring up the console, traps, memory and the
 * clocks, start the other CPUs (smp.c), read the RTC once, then call uk_app_main (kvm.h) with what the
 * platform found, and leave QEMU with the code it returns.
 *
 * Nothing here knows what the application is: the unikernel's main
 * (uk/uk_main.c) finds its device through pci.h and dev/virtio_pci.h, builds
 * the stack and runs it with the same run loop as the hosted commands,
 * parking in plat_park (park.c). */
#include "../plat.h"
#include "cpu.h"
#include "kvm.h"

struct hvm_start_info {
	uint32_t magic; /* 0x336ec578 */
	uint32_t version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
#define HVM_START_MAGIC 0x336ec578u

/* modlist_paddr points at nr_modules of these. */
struct hvm_modlist_entry {
	uint64_t paddr, size, cmdline_paddr, reserved;
};

static char cmdline[1024];

/* Code built for user space (Debian's libbearssl.a, with
 * -fstack-protector-strong) reads its stack canary from %fs:0x28, where
 * glibc keeps it in the thread's control block.  FS points here, and the
 * word at 0x28 is random (RDRAND; the TSC if the CPU has none).  The
 * kernel's own code is built without the protector and never uses FS. */
static uint64_t fs_block[8] __attribute__((aligned(64)));
#define MSR_FS_BASE 0xc0000100u

static void canary_init(void)
{
	uint64_t c;
	if (plat_random(&c, sizeof(c)) < 0)
		c = rdtsc() * 0x9e3779b97f4a7c15ull;
	fs_block[0x28 / 8] = c & ~(uint64_t)0xff; /* a zero low byte, as glibc's: stops string overruns */
	wrmsr(MSR_FS_BASE, (uint64_t)(uintptr_t)fs_block);
}

void kmain(uint32_t start_info);

void kmain(uint32_t start_info)
{
	smp_init_bsp(); /* GS -> this CPU's kvm_cpu: the console and traps use it */
	console_init();
	trap_init();
	kprintf("\nskiff-uk: booting\n");

	const struct hvm_start_info *si = (const void *)(uintptr_t)start_info;
	if (si->magic != HVM_START_MAGIC) {
		kprintf("skiff-uk: not started through PVH (bad start_info magic)\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	if (si->cmdline_paddr) {
		const char *src = (const char *)(uintptr_t)si->cmdline_paddr;
		size_t n = 0;
		while (src[n] && n < sizeof(cmdline) - 1) {
			cmdline[n] = src[n];
			n++;
		}
		cmdline[n] = 0;
	}
	kprintf("skiff-uk: cmdline '%s'\n", cmdline);
	uint64_t map = si->version >= 1 ? si->memmap_paddr : 0;
	uint32_t map_n = si->version >= 1 ? si->memmap_entries : 0;
	/* The module (QEMU's -initrd: a site archive) sits in RAM the map
	 * calls usable: it must lie inside RAM below 4 GiB (all of which
	 * boot.S maps), and it is reserved before the heap takes its range. */
	struct kvm_start st = {.cmdline = cmdline};
	if (si->nr_modules && si->modlist_paddr) {
		const struct hvm_modlist_entry *mod = (const void *)(uintptr_t)si->modlist_paddr;
		uint64_t lo = mod->paddr, len = mod->size;
		if (len && (lo + len < lo || !mem_is_ram(map, map_n, lo, lo + len))) {
			kprintf("skiff-uk: the boot module (%lu bytes at 0x%lx) is not in RAM below 4 GiB\n",
				len, lo);
			kvm_exit(KVM_EXIT_FATAL);
		}
		if (len && mem_reserve(lo, lo + len) == 0) {
			st.module = (const uint8_t *)(uintptr_t)lo;
			st.module_len = len;
		}
		if (si->nr_modules > 1)
			kprintf("skiff-uk: %u boot modules; only the first is used\n", si->nr_modules);
	}
	/* The memory map lives in firmware memory the heap may cover: read
	 * it before anything is allocated. */
	if (mem_init(map, map_n) < 0) {
		kprintf("skiff-uk: no usable RAM above the image\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	if (time_init() < 0) {
		kprintf("skiff-uk: no usable TSC/LAPIC timer\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	if (time_deadline_mode())
		kprintf("skiff-uk: tsc %lu kHz (%s), timer tsc-deadline\n", time_tsc_hz() / 1000,
			time_source());
	else
		kprintf("skiff-uk: tsc %lu kHz (%s), timer lapic one-shot at %lu kHz (+-%lu ppm)\n",
			time_tsc_hz() / 1000, time_source(), time_apic_hz() / 1000,
			time_apic_err_ppm());
	canary_init();
	if (musl_boot)
		musl_boot(); /* after the canary: it keeps start.c's */
	/* The APs, once memory and the clocks are up (their stacks come
	 * from the heap; their timers use the BSP's calibration) and the
	 * start info has been read (the trampoline reuses low RAM). */
	if (mem_is_ram(map, map_n, 0x8000, 0x9000) || !map_n)
		smp_boot_aps(si->rsdp_paddr);
	else
		kprintf("skiff-uk: cpus: 0x8000 is not RAM: running on the boot CPU alone\n");
	if (musl_heap_stress)
		musl_heap_stress(cmdline); /* exits if the word asks for it */
	st.cpus = smp_cpus();
	st.rtc_at = plat_now();
	st.rtc_ok = rtc_read(&st.rtc) == 0;
	kvm_exit(uk_app_main(&st));
}
