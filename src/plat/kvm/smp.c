/* smp.c — the application processors: found in the MADT (acpi.c),
 * started with INIT, SIPI, SIPI (SDM vol. 3, 8.4.4.1), each on its own
 * stack and kvm_cpu, then parked in `sti; hlt` until smp_run_on gives it
 * work (kvm.h).
 *
 * One AP at a time: the BSP writes the AP's stack and kvm_cpu into
 * ap_boot_stack / ap_booting, sends the IPIs and waits (bounded) for the
 * AP to say it is up before the next one, so the trampoline and those two
 * words are never shared.  An AP that does not answer within the bound
 * ends the bring-up (said on the console): the guest runs on those up.
 *
 * The trampoline's page (0x8000, below 1 MiB as a SIPI vector must be)
 * is low RAM that nothing else uses once the PVH start info has been
 * read (start.c calls this after mem_init); the map must say it is RAM.
 *
 * What an AP shares with the BSP: the page tables (boot.S's, and MMIO
 * mappings mmu.c adds, all made before the APs run work), the GDT and
 * IDT (read-only after boot), the FS block (the stack canary, read-only).
 * No TSS: nothing changes privilege level and no vector uses an IST
 * stack, so the CPU never reads one (a fault is fatal either way,
 * trap.c).  What it owns: its stack, its kvm_cpu (through GS), its LAPIC
 * timer.
 *
 * Idle costs nothing: an AP with no work halts with its timer stopped,
 * so under TCG its vCPU thread sleeps in the host until an IPI. */
#include "../plat.h"
#include "cpu.h"
#include "kvm.h"

#define TRAMP_BASE 0x8000u
#define AP_STACK (64u << 10)
#define MSR_GS_BASE 0xc0000101u
#define MSR_FS_BASE 0xc0000100u

extern const char ap_tramp_start[], ap_tramp_end[];
void ap_main(void);

static struct kvm_cpu cpus[KVM_MAX_CPUS];
static volatile unsigned ncpus = 1;
/* For the AP being started, read by ap_start64 / ap_main (boot.S). */
volatile uint64_t ap_boot_stack;
static struct kvm_cpu *volatile ap_booting;
static uint64_t fs_base; /* the BSP's, the same for every CPU */

static void set_gs(struct kvm_cpu *c)
{
	c->self = c;
	wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)c);
}

void smp_init_bsp(void)
{
	cpus[0].index = 0;
	cpus[0].timer_loaded = SK_TIME_NEVER;
	set_gs(&cpus[0]);
	cpus[0].up = 1;
}

unsigned smp_cpus(void) { return ncpus; }

struct kvm_cpu *smp_cpu(unsigned index)
{
	return index < ncpus ? &cpus[index] : NULL;
}

static void spin_ns(uint64_t ns)
{
	sk_time_ns t = plat_now() + ns;
	while (plat_now() < t)
		cpu_pause();
}

static void wake_irq(void *ctx)
{
	(void)ctx; /* counted in irq_count; the idle loop looks at work */
}

void ap_main(void)
{
	struct kvm_cpu *c = ap_booting;
	set_gs(c);
	wrmsr(MSR_FS_BASE, fs_base);
	if (musl_ap)
		musl_ap(c->index); /* its own thread block instead of the BSP's */
	trap_load();
	time_init_ap();
	c->apic_id = lapic_id();
	kprintf("skiff-uk: cpu %u up (apic id %u)\n", c->index, c->apic_id);
	__atomic_store_n(&c->up, 1, __ATOMIC_RELEASE);
	for (;;) {
		void (*fn)(void *) = c->work;
		if (fn) {
			/* The BSP may have mapped MMIO (uncached) since this CPU
			 * last looked: no stale translation survives a CR3 load. */
			write_cr3(read_cr3());
			fn(c->work_arg);
			c->work_arg = NULL;
			__atomic_store_n(&c->work, NULL, __ATOMIC_RELEASE);
			continue;
		}
		/* A wake IPI sent after the load above is pending at the
		 * LAPIC with IF clear: sti's shadow lets hlt start, then it
		 * is taken and ends the halt.  No lost wake-up. */
		c->park_hlts++;
		cpu_sti_hlt();
		cpu_cli();
	}
}

int smp_run_on(unsigned index, void (*fn)(void *arg), void *arg)
{
	if (index == 0 || index >= ncpus || !fn)
		return -1;
	struct kvm_cpu *c = &cpus[index];
	if (__atomic_load_n(&c->work, __ATOMIC_ACQUIRE))
		return -1;
	c->work_arg = arg;
	__atomic_store_n(&c->work, fn, __ATOMIC_RELEASE);
	return lapic_send_ipi(c->apic_id, ICR_FIXED | ICR_ASSERT | VEC_IPI_WAKE);
}

/* INIT, 10 ms, SIPI, 200 us, SIPI (the MP spec's sequence; a started AP
 * ignores the second SIPI), then up to 2 s for the AP to report: a vCPU
 * thread under TCG on a loaded host can take that long to get going. */
static bool start_ap(struct kvm_cpu *c, void *stack)
{
	ap_boot_stack = (uint64_t)(uintptr_t)stack + AP_STACK;
	ap_booting = c;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (lapic_send_ipi(c->apic_id, ICR_INIT | ICR_ASSERT) < 0)
		return false;
	spin_ns(10 * SK_NS_PER_MS);
	for (int i = 0; i < 2; i++) {
		if (lapic_send_ipi(c->apic_id, ICR_STARTUP | ICR_ASSERT | (TRAMP_BASE >> 12)) < 0)
			return false;
		spin_ns(200 * 1000);
	}
	sk_time_ns until = plat_now() + 2 * SK_NS_PER_S;
	while (!__atomic_load_n(&c->up, __ATOMIC_ACQUIRE) && plat_now() < until)
		cpu_pause();
	return __atomic_load_n(&c->up, __ATOMIC_ACQUIRE) != 0;
}

unsigned smp_boot_aps(uint64_t rsdp_paddr)
{
	uint32_t ids[KVM_MAX_CPUS];
	unsigned n = 0, skipped = 0;
	const char *why = "";
	cpus[0].apic_id = lapic_id();
	if (acpi_cpus(rsdp_paddr, ids, KVM_MAX_CPUS, &n, &skipped, &why) < 0) {
		kprintf("skiff-uk: cpus: %s: running on the boot CPU alone\n", why);
		return ncpus;
	}
	kprintf("skiff-uk: cpus: %u in the MADT%s\n", n, skipped ? " (more not started)" : "");
	if (skipped)
		kprintf("skiff-uk: cpus: %u more CPUs listed than this kernel starts (%u at most)\n",
			skipped, KVM_MAX_CPUS);
	if (n <= 1)
		return ncpus;
	size_t tlen = (size_t)(ap_tramp_end - ap_tramp_start);
	if (tlen > 4096) {
		kprintf("skiff-uk: cpus: trampoline larger than its page\n");
		return ncpus;
	}
	fs_base = rdmsr(MSR_FS_BASE);
	trap_set_handler(VEC_IPI_WAKE, wake_irq, NULL);
	sk_memcpy((void *)(uintptr_t)TRAMP_BASE, ap_tramp_start, tlen);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < n && ncpus < KVM_MAX_CPUS; i++) {
		if (ids[i] == cpus[0].apic_id)
			continue;
		struct kvm_cpu *c = &cpus[ncpus];
		c->index = ncpus;
		c->apic_id = ids[i];
		c->timer_loaded = SK_TIME_NEVER;
		void *stack = mem_alloc(AP_STACK, 4096);
		if (!stack) {
			kprintf("skiff-uk: cpus: no memory for cpu %u's stack\n", c->index);
			break;
		}
		if (!start_ap(c, stack)) {
			/* Stop here: a late AP would still take ap_booting, so the
			 * next one must not be given the same words. */
			kprintf("skiff-uk: cpus: apic id %u did not start; no more APs\n", ids[i]);
			break;
		}
		ncpus++;
	}
	kprintf("skiff-uk: cpus: %u up\n", ncpus);
	return ncpus;
}

int smp_kick(unsigned index)
{
	if (index >= ncpus || index == kvm_cpu_this()->index)
		return -1;
	return lapic_send_ipi(cpus[index].apic_id, ICR_FIXED | ICR_ASSERT | VEC_IPI_WAKE);
}

bool smp_idle(unsigned index)
{
	return index >= ncpus || !__atomic_load_n(&cpus[index].work, __ATOMIC_ACQUIRE);
}
