/* init.c — musl's start-up in the guest, and a thread block per vCPU.
 *
 * musl keeps its per-thread state (struct pthread: the self pointer at
 * %fs:0, the stack canary at %fs:0x28, the locale) in a block FS points
 * at.  On the BSP, musl builds that block itself: __init_libc is the
 * start-up that crt1's __libc_start_main runs before main (the auxiliary
 * vector, the thread block through arch_prctl(ARCH_SET_FS) -> syscall.c,
 * the locale); we call it with an empty environment and an auxiliary
 * vector of our own.  It is hidden in libc.a (no header declares it), but a
 * static link reaches hidden symbols; its signature is the one crt1 uses.
 *
 * On the APs the application does not run (uk_main.c serves an
 * application on one vCPU), but any libc call made there must not touch
 * the BSP's block: each gets a zeroed block of its own with the self
 * pointer and the canary, and uselocale(LC_GLOBAL_LOCALE) (musl's public
 * API) fills in its locale, so no field offset of musl's private struct
 * is written here.  errno is per vCPU either way: libc.c's
 * __errno_location (the one linked; see there) answers from struct
 * kvm_cpu. */
#include "musl.h"
#include "../cpu.h"
#include "../kvm.h"
#include "../../plat.h"

void __init_libc(char **envp, char *progname);
void *uselocale(void *loc);
#define LC_GLOBAL_LOCALE ((void *)-1l)

#define MSR_EFER 0xc0000080u
#define EFER_SCE 1u
#define MSR_STAR 0xc0000081u
#define MSR_LSTAR 0xc0000082u
#define MSR_FMASK 0xc0000084u
#define MSR_FS_BASE 0xc0000100u
#define RFLAGS_TF (1u << 8)
#define RFLAGS_IF (1u << 9)
#define RFLAGS_DF (1u << 10)
#define RFLAGS_AC (1u << 18)
#define AT_NULL 0
#define AT_PHDR 3
#define AT_PHENT 4
#define AT_PHNUM 5
#define AT_PAGESZ 6
#define AT_RANDOM 25
#define PT_TLS 7

/* Thread-local variables (kernel.ld: .tdata then .tbss, both aligned to
 * TLS_ALIGN; none but in the wolfSSL image).  x86-64 keeps them below the
 * thread pointer: a vCPU's copy is [tp - tls_size(), tp), tls_size() being
 * the segment's size rounded up to its alignment, as the linker counted
 * the offsets in the code.  musl sets the BSP's up from a PT_TLS program
 * header (AT_PHDR: the image's own headers are not loaded, so init.c
 * gives it one made from the linker's symbols); musl_ap the APs'. */
#define TLS_ALIGN 64u
extern char __tls_start[], __tdata_end[], __tls_memsz[];
struct elf64_phdr {
	uint32_t p_type, p_flags;
	uint64_t p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
};

static size_t tls_size(void)
{
	size_t m = (size_t)(uintptr_t)__tls_memsz;
	return (m + TLS_ALIGN - 1) & ~(size_t)(TLS_ALIGN - 1);
}

/* musl's own block for the main thread is 336 bytes (builtin_tls in
 * libc.a), struct pthread and room for TLS; an AP's has no TLS. */
#define AP_BLOCK 512
static uint8_t ap_block[KVM_MAX_CPUS][AP_BLOCK] __attribute__((aligned(64)));
static uint64_t canary;

/* Every vCPU: `syscall` lands in entry.S, with the code segment of
 * boot.S's GDT (0x08; SS becomes 0x10, its data segment) and interrupts,
 * tracing, the direction flag and alignment checks off.  The x87 and SSE
 * control words to their defaults, which musl's printf and strtod assume
 * (round to nearest, exceptions masked). */
static void cpu_init(void)
{
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	wrmsr(MSR_STAR, (uint64_t)0x08 << 32);
	wrmsr(MSR_LSTAR, (uint64_t)(uintptr_t)musl_syscall_entry);
	wrmsr(MSR_FMASK, RFLAGS_TF | RFLAGS_IF | RFLAGS_DF | RFLAGS_AC);
	uint32_t mxcsr = 0x1f80;
	__asm__ volatile("fninit; ldmxcsr %0" ::"m"(mxcsr));
}

static uint64_t fs_canary(void)
{
	uint64_t c;
	__asm__ volatile("mov %%fs:0x28, %0" : "=r"(c));
	return c;
}

void musl_boot(void)
{
	cpu_init();
	canary = fs_canary(); /* start.c's, random */
	static uint8_t rnd[16];
	if (plat_random(rnd, sizeof(rnd)) < 0)
		sk_memcpy(rnd, &canary, sizeof(canary));
	/* envp: no variables, then the auxiliary vector. */
	static uintptr_t env[] = {0, AT_PAGESZ, 4096, AT_RANDOM, 0, AT_NULL, 0, AT_NULL, 0, AT_NULL, 0,
				  AT_NULL, 0};
	env[4] = (uintptr_t)rnd;
	static struct elf64_phdr tls_ph;
	if (tls_size()) {
		tls_ph = (struct elf64_phdr){
			.p_type = PT_TLS,
			.p_vaddr = (uintptr_t)__tls_start,
			.p_filesz = (uint64_t)(__tdata_end - __tls_start),
			.p_memsz = (uint64_t)(uintptr_t)__tls_memsz,
			.p_align = TLS_ALIGN,
		};
		env[5] = AT_PHDR, env[6] = (uintptr_t)&tls_ph;
		env[7] = AT_PHNUM, env[8] = 1;
		env[9] = AT_PHENT, env[10] = sizeof(tls_ph);
	}
	static char name[] = "skiff-app";
	__init_libc((char **)env, name);
	/* musl's block now, whose canary word is musl's business: the objects
	 * built with the protector (musl's and BearSSL's) read it there.
	 * Give it start.c's, so a frame set up before this call still checks. */
	__asm__ volatile("mov %0, %%fs:0x28" ::"r"(canary) : "memory");
}

void musl_ap(unsigned index)
{
	cpu_init();
	if (index >= KVM_MAX_CPUS)
		return;
	uint8_t *b = ap_block[index];
	size_t ts = tls_size();
	if (ts) { /* this vCPU's copy of the thread-local variables, then its block */
		uint8_t *t = mem_alloc(ts + AP_BLOCK, TLS_ALIGN);
		if (!t) {
			kprintf("skiff-uk: cpu %u: no memory for its thread-local variables\n", index);
			kvm_exit(KVM_EXIT_FATAL);
		}
		size_t filesz = (size_t)(__tdata_end - __tls_start);
		sk_memcpy(t, __tls_start, filesz);
		sk_memset(t + filesz, 0, ts + AP_BLOCK - filesz);
		b = t + ts;
	}
	uint64_t self = (uint64_t)(uintptr_t)b;
	sk_memcpy(b, &self, sizeof(self));
	sk_memcpy(b + 0x28, &canary, sizeof(canary));
	wrmsr(MSR_FS_BASE, self);
	uselocale(LC_GLOBAL_LOCALE);
}

/* musl's own objects ask for errno by this name (its internal alias of
 * __errno_location, weak in libc.a).  Answered here, musl's member that
 * defines both is never pulled, and errno is libc.c's per-vCPU one for
 * the application, musl and BearSSL alike. */
int *__errno_location(void);
int *___errno_location(void);
int *___errno_location(void)
{
	return __errno_location();
}
