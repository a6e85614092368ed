/* boot.S — PVH entry, long mode, identity paging, interrupt stubs.
 *
 * QEMU's -kernel (and Firecracker, cloud-hypervisor) start an ELF that
 * carries a XEN_ELFNOTE_PHYS32_ENTRY note at that address, in 32-bit
 * protected mode with paging off, %ebx = physical address of the
 * hvm_start_info structure (the PVH boot ABI).  From there:
 *   zero .bss -> stack -> page tables identity-mapping 0..4 GiB with 2 MiB
 *   pages -> PAE, EFER.LME, paging -> 64-bit GDT -> kmain(start_info).
 * MMIO above 4 GiB (64-bit BARs) is mapped later, on demand (mmu.c).
 */
#define MSR_EFER 0xc0000080
#define EFER_LME (1 << 8)
#define CR0_PE (1 << 0)
#define CR0_MP (1 << 1)
#define CR0_WP (1 << 16)
#define CR0_PG (1 << 31)
#define CR4_PAE (1 << 5)
#define CR4_OSFXSR (1 << 9)
#define CR4_OSXMMEXCPT (1 << 10)
#define PTE_P 0x1
#define PTE_W 0x2
#define PTE_PS 0x80

/* The PVH note: name "Xen", type 18 (PHYS32_ENTRY), 8-byte address for an
 * ELF64.  4-byte alignment: QEMU finds the descriptor by aligning the name
 * to the PT_NOTE segment's p_align. */
	.section .note.xen, "a", @note
	.balign 4
	.long 4
	.long 8
	.long 18
	.asciz "Xen"
	.balign 4
	.quad pvh_start
	.balign 4

	.section .text.boot, "ax"
	.code32
	.globl pvh_start
pvh_start:
	cli
	cld
	mov %ebx, %esi			/* hvm_start_info, kept for kmain */

	mov $__bss_start, %edi		/* .bss holds the page tables and the stack */
	mov $__bss_end, %ecx
	sub %edi, %ecx
	xor %eax, %eax
	rep stosb
	mov $boot_stack_top, %esp

	/* PML4[0] -> PDPT; PDPT[0..3] -> 4 page directories of 2 MiB pages. */
	mov $boot_pdpt, %eax
	or $(PTE_P | PTE_W), %eax
	mov %eax, boot_pml4
	mov $boot_pd, %eax
	or $(PTE_P | PTE_W), %eax
	mov $boot_pdpt, %edi
	mov $4, %ecx
1:	mov %eax, (%edi)
	add $0x1000, %eax
	add $8, %edi
	loop 1b
	mov $boot_pd, %edi
	mov $(PTE_P | PTE_W | PTE_PS), %eax
	mov $2048, %ecx
1:	mov %eax, (%edi)
	add $0x200000, %eax
	add $8, %edi
	loop 1b

	mov %cr4, %eax
	or $(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	mov %eax, %cr4
	mov $boot_pml4, %eax
	mov %eax, %cr3
	mov $MSR_EFER, %ecx
	rdmsr
	or $EFER_LME, %eax
	wrmsr
	mov %cr0, %eax
	and $~(1 << 2), %eax		/* EM off: no x87 emulation trap */
	or $(CR0_PE | CR0_MP | CR0_WP | CR0_PG), %eax
	mov %eax, %cr0
	lgdt gdt_ptr
	ljmp $0x08, $start64

	.code64
start64:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	xor %ax, %ax
	mov %ax, %fs
	mov %ax, %gs
	mov $boot_stack_top, %rsp
	xor %ebp, %ebp
	mov %esi, %edi			/* kmain(uint32 start_info) */
	call kmain
1:	cli
	hlt
	jmp 1b

/* An AP after the trampoline (smp.c copies ap_tramp_* to TRAMP_BASE):
 * in long mode on the boot page tables, on the trampoline's GDT.  Take
 * the stack the BSP left in ap_boot_stack, switch to the kernel's GDT
 * (reloading CS with a far return), and enter ap_main.  GS and FS bases
 * are set in C. */
	.globl ap_start64
ap_start64:
	mov ap_boot_stack(%rip), %rsp
	lgdt gdt_ptr(%rip)
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	pushq $0x08
	lea 1f(%rip), %rax
	pushq %rax
	lretq
1:	xor %ebp, %ebp
	call ap_main
2:	cli
	hlt
	jmp 2b

/* 256 interrupt stubs, 16 bytes apart (trap.c computes isr_stubs + 16*n).
 * Each pushes an error code where the CPU does not (vectors 8, 10-14, 17,
 * 21, 29, 30 have one), then its vector, so isr_common sees one layout. */
	.text
	.balign 16
	.globl isr_stubs
isr_stubs:
	.set vec, 0
	.rept 256
	.balign 16
	.if (vec == 8) || ((vec >= 10) && (vec <= 14)) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq $0
	.endif
	pushq $vec
	jmp isr_common
	.set vec, vec + 1
	.endr

/* Save every general register, call trap_dispatch(struct trap_frame *),
 * restore, drop vector and error code, return.  The kernel runs in ring 0
 * on one stack, so the CPU frame is rip, cs, rflags, rsp, ss; the frame
 * size (22 * 8) keeps %rsp 16-byte aligned at the call. */
isr_common:
	push %rax
	push %rcx
	push %rdx
	push %rbx
	push %rbp
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rsp, %rdi
	cld
	call trap_dispatch
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rbp
	pop %rbx
	pop %rdx
	pop %rcx
	pop %rax
	add $16, %rsp
	iretq

/* The AP trampoline (SDM vol. 3, 8.4.4 and 9.8.5): a startup IPI with
 * vector TRAMP_BASE >> 12 starts the AP in real mode at CS = 0x800,
 * IP = 0.  Assembled here, copied to TRAMP_BASE by smp.c, never run in
 * place: every address inside it is TRAMP_BASE + (label - start).
 * Real mode -> protected mode on its own GDT -> PAE, the boot PML4,
 * EFER.LME, paging (CR0/CR4 as boot.S sets them for the BSP) -> a 64-bit
 * far jump -> ap_start64 in the kernel. */
#define TRAMP_BASE 0x8000
#define TR(x) (TRAMP_BASE + (x) - ap_tramp_start)
	.section .rodata
	.globl ap_tramp_start, ap_tramp_end
	.code16
ap_tramp_start:
	cli
	cld
	mov %cs, %ax
	mov %ax, %ds
	lgdtl (tramp_gdtr - ap_tramp_start)
	mov %cr0, %eax
	or $CR0_PE, %eax
	mov %eax, %cr0
	ljmpl $0x08, $TR(tramp32)
	.code32
tramp32:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %cr4, %eax
	or $(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	mov %eax, %cr4
	mov $boot_pml4, %eax
	mov %eax, %cr3
	mov $MSR_EFER, %ecx
	rdmsr
	or $EFER_LME, %eax
	wrmsr
	mov %cr0, %eax
	and $~(1 << 2), %eax
	or $(CR0_PE | CR0_MP | CR0_WP | CR0_PG), %eax
	mov %eax, %cr0
	ljmp $0x18, $TR(tramp64)
	.code64
tramp64:
	movabs $ap_start64, %rax
	jmp *%rax
	.balign 8
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff		/* 0x08: 32-bit code */
	.quad 0x00cf92000000ffff		/* 0x10: data */
	.quad 0x00af9a000000ffff		/* 0x18: 64-bit code */
tramp_gdt_end:
tramp_gdtr:
	.word tramp_gdt_end - tramp_gdt - 1
	.long TR(tramp_gdt)
ap_tramp_end:

	.balign 16
gdt:
	.quad 0
	.quad 0x00af9a000000ffff		/* 0x08: 64-bit code, ring 0 */
	.quad 0x00cf92000000ffff		/* 0x10: data */
gdt_end:
	.balign 8
gdt_ptr:
	.word gdt_end - gdt - 1
	.quad gdt

	.section .bss
	.balign 4096
	.globl boot_pml4, boot_pdpt
boot_pml4:
	.skip 4096
boot_pdpt:
	.skip 4096
boot_pd:
	.skip 4 * 4096
	.balign 16
boot_stack:
	.skip 65536
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
