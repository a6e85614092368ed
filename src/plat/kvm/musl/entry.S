/* entry.S — where the `syscall` instruction lands (MSR_LSTAR, init.c).
 *
 * The guest runs everything in ring 0, so `syscall` is only a call with
 * a strange convention: the CPU puts the return address in %rcx and the
 * flags in %r11, masks the flags (MSR_FMASK) and jumps here on the SAME
 * stack.  Linux's convention for the caller: number in %rax, arguments
 * in %rdi %rsi %rdx %r10 %r8 %r9, result in %rax, and only %rcx and %r11
 * clobbered, so every other register is kept here.
 *
 * The caller is user-space code (musl, built with the red zone): up to
 * 128 bytes below its %rsp may be live, so step over them before the
 * first push.  Return with a jump, not sysret (which would drop to ring
 * 3); lea, not add, once the flags are restored. */
	.text
	.globl musl_syscall_entry
	.type musl_syscall_entry, @function
musl_syscall_entry:
	lea -128(%rsp), %rsp
	push %rcx			/* the return address */
	push %r11			/* the caller's flags */
	push %rdi
	push %rsi
	push %rdx
	push %r10
	push %r8
	push %r9
	push %rbx
	mov %rsp, %rbx
	and $-16, %rsp
	sub $8, %rsp
	push %rax			/* 7th argument: the number; %rsp 16-aligned at the call */
	mov %r10, %rcx			/* 4th argument, C's register for it */
	call musl_syscall
	mov %rbx, %rsp
	pop %rbx
	pop %r9
	pop %r8
	pop %r10
	pop %rdx
	pop %rsi
	pop %rdi
	popfq				/* the caller's flags, as %r11 held them */
	pop %rcx
	lea 128(%rsp), %rsp
	jmp *%rcx
	.size musl_syscall_entry, . - musl_syscall_entry
	.section .note.GNU-stack, "", @progbits
