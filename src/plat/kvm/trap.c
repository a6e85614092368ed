/* trap.c — IDT, exceptions and interrupt dispatch.
 *
 * Every vector goes through one stub (boot.S) into trap_dispatch.  A CPU
 * exception is always fatal here: the unikernel has no user mode and no
 * demand paging, so a fault is a bug; the handler prints the vector, error
 * code and every register on the console, then leaves through
 * isa-debug-exit with 64 + vector so the host sees a non-zero exit.
 * Interrupts run only while the main loop parks in `sti; hlt`; their
 * handlers only acknowledge and count, the loop does the work.
 * The IDT and the handler table are set up by the BSP before any AP
 * starts and only read afterwards; the counts are per CPU (kvm_cpu). */
#include "cpu.h"
#include "kvm.h"

struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rdi, rsi, rbp, rbx, rdx, rcx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

struct idt_entry {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, zero;
} __attribute__((packed));

static struct idt_entry idt[256] __attribute__((aligned(16)));
static irq_fn handlers[256];
static void *handler_ctx[256];

extern char isr_stubs[];
void trap_dispatch(struct trap_frame *f);

static const char *const exc_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
	"#BR bound range", "#UD invalid opcode", "#NM device not available",
	"#DF double fault", "coprocessor overrun", "#TS invalid TSS", "#NP segment not present",
	"#SS stack fault", "#GP general protection", "#PF page fault", "reserved 15",
	"#MF x87 error", "#AC alignment check", "#MC machine check", "#XM SIMD error",
	"#VE virtualization", "#CP control protection",
};

/* The 8259s still deliver to vectors 8-15 after the firmware: move them
 * out of the exception range and mask every line (the LAPIC and MSI-X do
 * all the work), so a stray PIT tick can never look like a #DF. */
static void pic_disable(void)
{
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, VEC_PIC_BASE);
	outb(0xa1, VEC_PIC_BASE + 8);
	outb(0x21, 0x04);
	outb(0xa1, 0x02);
	outb(0x21, 0x01);
	outb(0xa1, 0x01);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

static struct {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed)) idt_ptr;

void trap_load(void)
{
	__asm__ volatile("lidt %0" ::"m"(idt_ptr) : "memory");
}

void trap_init(void)
{
	for (unsigned v = 0; v < 256; v++) {
		uint64_t a = (uint64_t)(uintptr_t)(isr_stubs + 16 * v);
		idt[v] = (struct idt_entry){
			.off_lo = (uint16_t)a,
			.sel = 0x08,
			.type = 0x8e, /* present, ring 0, 64-bit interrupt gate (IF cleared) */
			.off_mid = (uint16_t)(a >> 16),
			.off_hi = (uint32_t)(a >> 32),
		};
	}
	idt_ptr.limit = sizeof(idt) - 1;
	idt_ptr.base = (uint64_t)(uintptr_t)idt;
	trap_load();
	pic_disable();
}

void trap_set_handler(unsigned vector, irq_fn fn, void *ctx)
{
	if (vector < 256) {
		handler_ctx[vector] = ctx;
		handlers[vector] = fn;
	}
}

static void fatal_exception(struct trap_frame *f)
{
	unsigned v = (unsigned)f->vector;
	kprintf("\nskiff-uk: EXCEPTION vector %u (%s) error 0x%lx\n", v,
		exc_names[v] ? exc_names[v] : "reserved", f->error);
	kprintf("  rip %016lx  cs  %04lx  rflags %016lx\n", f->rip, f->cs, f->rflags);
	kprintf("  rsp %016lx  ss  %04lx  cr2 %016lx  cr3 %016lx\n", f->rsp, f->ss, read_cr2(),
		read_cr3());
	kprintf("  rax %016lx  rbx %016lx  rcx %016lx  rdx %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
	kprintf("  rsi %016lx  rdi %016lx  rbp %016lx\n", f->rsi, f->rdi, f->rbp);
	kprintf("  r8  %016lx  r9  %016lx  r10 %016lx  r11 %016lx\n", f->r8, f->r9, f->r10, f->r11);
	kprintf("  r12 %016lx  r13 %016lx  r14 %016lx  r15 %016lx\n", f->r12, f->r13, f->r14, f->r15);
	kprintf("skiff-uk: halted (exit code %u)\n", KVM_EXIT_EXCEPTION_BASE + v);
	kvm_exit(KVM_EXIT_EXCEPTION_BASE + v);
}

void trap_dispatch(struct trap_frame *f)
{
	unsigned v = (unsigned)f->vector & 0xff;
	if (v < 32 && v != 2) /* NMI (2) is not a fault of this code: count it */
		fatal_exception(f);
	kvm_cpu_this()->irq_count[v]++;
	if (handlers[v])
		handlers[v](handler_ctx[v]);
	/* Spurious LAPIC vectors and the masked PIC take no EOI; everything
	 * else came through the LAPIC and needs one. */
	if (v >= 32 && v != VEC_SPURIOUS && (v < VEC_PIC_BASE || v >= VEC_PIC_BASE + 16))
		lapic_eoi();
}

void trap_raise(const char *kind)
{
	kprintf("skiff-uk: raising fault=%s as asked\n", kind);
	if (kind[0] == 'u')
		__asm__ volatile("ud2");
	else if (kind[0] == 'p')
		*(volatile uint64_t *)(uintptr_t)0x7fc0000000ull = 1; /* 511 GiB: never mapped */
	else if (kind[0] == 'g')
		*(volatile uint64_t *)(uintptr_t)0x8000000000000000ull = 1; /* non-canonical */
	else
		__asm__ volatile("xor %%ecx, %%ecx; div %%ecx" ::: "eax", "ecx", "edx");
}
