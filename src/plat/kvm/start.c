/* start.c — from boot.S to the application: read the PVH start info
 * (command line, memory map), bring up the console, traps, memory and the
 * clocks, read the RTC once, then call uk_app_main (kvm.h) with what the
 * platform found, and leave QEMU with the code it returns.
 *
 * Nothing here knows what the application is: the unikernel's main
 * (apps/uk_main.c) finds its device through pci.h/virtio_pci.h, builds
 * the stack and runs it with the same run loop as the hosted commands,
 * parking in plat_park (park.c). */
#include "../plat.h"
#include "kvm.h"

struct hvm_start_info {
	uint32_t magic; /* 0x336ec578 */
	uint32_t version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
#define HVM_START_MAGIC 0x336ec578u

static char cmdline[1024];

void kmain(uint32_t start_info);

void kmain(uint32_t start_info)
{
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
	/* The memory map lives in firmware memory the heap may cover: read
	 * it before anything is allocated. */
	if (mem_init(si->version >= 1 ? si->memmap_paddr : 0, si->version >= 1 ? si->memmap_entries : 0) < 0) {
		kprintf("skiff-uk: no usable RAM above the image\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	if (time_init() < 0) {
		kprintf("skiff-uk: no usable TSC/LAPIC timer\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	kprintf("skiff-uk: tsc %lu kHz (%s), timer %s\n", time_tsc_hz() / 1000, time_source(),
		time_deadline_mode() ? "tsc-deadline" : "lapic one-shot");
	struct kvm_start st = {.cmdline = cmdline};
	st.rtc_at = plat_now();
	st.rtc_ok = rtc_read(&st.rtc) == 0;
	kvm_exit(uk_app_main(&st));
}
