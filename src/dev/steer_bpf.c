/* steer_bpf.c — wire/flow_hash.h's flow_hash_frame in classic BPF (packet
 * fanout) and in eBPF (TAP steering).  See steer_bpf.h for where each runs.
 *
 * Both programs follow flow_hash_frame step for step, so the contract in
 * flow_hash.h is the specification:
 *   EtherType 0x0800: x = saddr ^ daddr; ports when protocol is 6 or 17,
 *     (frag offset | MF) == 0, IHL*4 >= 20 and the packet holds IHL*4+4;
 *   EtherType 0x86dd: x = XOR of the 8 address words; ports when the next
 *     header is 6 or 17 and the packet holds 44 bytes;
 *   anything else: 0.
 *   h = mix(x ^ sport ^ dport): h = x * 0x9E3779B1; h ^= h >> 16.
 * A load past the end of the packet ends a BPF program with 0, which is
 * what flow_hash_frame returns for an IP header too short to hold the
 * addresses (the last address word is the last one read before the
 * protocol tests), so the two agree on short frames too.
 *
 * Jumps are written against labels and patched once the program is laid
 * out: an offset counted by hand is a bug waiting for the next edit.
 */
#include "steer_bpf.h"

#include <errno.h>
#include <bpf/bpf.h>
#include <string.h>

#include "../wire/flow_hash.h"

#define MAX_LABELS 16

/* ---- classic BPF ---- */

struct casm {
	struct sock_filter *p;
	size_t n, cap;
	int label[MAX_LABELS]; /* instruction index, -1 = not placed */
	/* Jumps to patch: (insn, label for jt, label for jf), -1 = fall through. */
	struct { size_t at; int jt, jf; } fix[32];
	size_t nfix;
	bool bad;
};

static void c_emit(struct casm *a, uint16_t code, uint32_t k)
{
	if (a->n >= a->cap) {
		a->bad = true;
		return;
	}
	a->p[a->n++] = (struct sock_filter){.code = code, .k = k};
}

/* A conditional jump: to label jt when true, jf when false (-1: next). */
static void c_jump(struct casm *a, uint16_t code, uint32_t k, int jt, int jf)
{
	if (a->nfix >= sizeof(a->fix) / sizeof(a->fix[0])) {
		a->bad = true;
		return;
	}
	a->fix[a->nfix].at = a->n;
	a->fix[a->nfix].jt = jt;
	a->fix[a->nfix].jf = jf;
	a->nfix++;
	c_emit(a, BPF_JMP | code, k);
}

static void c_label(struct casm *a, int l)
{
	a->label[l] = (int)a->n;
}

static size_t c_finish(struct casm *a)
{
	for (size_t i = 0; i < a->nfix && !a->bad; i++) {
		size_t at = a->fix[i].at;
		int t = a->fix[i].jt, f = a->fix[i].jf;
		int dt = t < 0 ? 0 : a->label[t] - (int)at - 1;
		int df = f < 0 ? 0 : a->label[f] - (int)at - 1;
		if ((t >= 0 && a->label[t] < 0) || (f >= 0 && a->label[f] < 0) || dt < 0 ||
		    df < 0 || dt > 255 || df > 255) {
			a->bad = true; /* classic jumps go forward only, 8 bits */
			break;
		}
		if (BPF_OP(a->p[at].code) == BPF_JA) {
			a->p[at].k = (uint32_t)dt; /* unconditional: k is the offset */
			continue;
		}
		a->p[at].jt = (uint8_t)dt;
		a->p[at].jf = (uint8_t)df;
	}
	return a->bad ? 0 : a->n;
}

enum { L_V4, L_V6, L_RET0, L_V4L4, L_V6L4, L_NOPORTS, L_MIX, L_PORTS };

size_t steer_cbpf_build(struct sock_filter *out, size_t cap)
{
	struct casm a = {.p = out, .cap = cap};
	const uint32_t net = (uint32_t)SKF_NET_OFF;
	for (int i = 0; i < MAX_LABELS; i++)
		a.label[i] = -1;

	/* A = EtherType (host order). */
	c_emit(&a, BPF_LD | BPF_H | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL));
	c_jump(&a, BPF_JEQ | BPF_K, 0x0800, L_V4, -1);
	c_jump(&a, BPF_JEQ | BPF_K, 0x86dd, L_V6, L_RET0);
	c_label(&a, L_RET0);
	c_emit(&a, BPF_RET | BPF_K, 0);

	/* IPv4: M[0] = saddr ^ daddr. */
	c_label(&a, L_V4);
	c_emit(&a, BPF_LD | BPF_W | BPF_ABS, net + 12);
	c_emit(&a, BPF_MISC | BPF_TAX, 0);
	c_emit(&a, BPF_LD | BPF_W | BPF_ABS, net + 16);
	c_emit(&a, BPF_ALU | BPF_XOR | BPF_X, 0);
	c_emit(&a, BPF_ST, 0);
	c_emit(&a, BPF_LD | BPF_B | BPF_ABS, net + 9);
	c_jump(&a, BPF_JEQ | BPF_K, 6, L_V4L4, -1);
	c_jump(&a, BPF_JEQ | BPF_K, 17, L_V4L4, L_NOPORTS);
	c_label(&a, L_V4L4);
	c_emit(&a, BPF_LD | BPF_H | BPF_ABS, net + 6);
	c_jump(&a, BPF_JSET | BPF_K, 0x3fff, L_NOPORTS, -1); /* a fragment */
	/* M[1] = IHL*4, by arithmetic rather than BPF_MSH, whose load is
	 * relative to the data start. */
	c_emit(&a, BPF_LD | BPF_B | BPF_ABS, net + 0);
	c_emit(&a, BPF_ALU | BPF_AND | BPF_K, 0x0f);
	c_emit(&a, BPF_ALU | BPF_LSH | BPF_K, 2);
	c_emit(&a, BPF_ST, 1);
	c_jump(&a, BPF_JGE | BPF_K, 20, -1, L_NOPORTS);
	/* The packet holds IHL*4 + 4: len >= X. */
	c_emit(&a, BPF_ALU | BPF_ADD | BPF_K, 4);
	c_emit(&a, BPF_MISC | BPF_TAX, 0);
	c_emit(&a, BPF_LD | BPF_W | BPF_LEN, 0);
	c_jump(&a, BPF_JGE | BPF_X, 0, -1, L_NOPORTS);
	c_emit(&a, BPF_LDX | BPF_W | BPF_MEM, 1);
	c_emit(&a, BPF_LD | BPF_H | BPF_IND, net + 0); /* sport */
	c_emit(&a, BPF_ST, 2);
	c_emit(&a, BPF_LD | BPF_H | BPF_IND, net + 2); /* dport */
	c_jump(&a, BPF_JA, 0, L_PORTS, -1);

	/* IPv6: M[0] = XOR of the address words (offsets 8 .. 36). */
	c_label(&a, L_V6);
	c_emit(&a, BPF_LD | BPF_W | BPF_ABS, net + 8);
	for (uint32_t off = 12; off < 40; off += 4) {
		c_emit(&a, BPF_MISC | BPF_TAX, 0);
		c_emit(&a, BPF_LD | BPF_W | BPF_ABS, net + off);
		c_emit(&a, BPF_ALU | BPF_XOR | BPF_X, 0);
	}
	c_emit(&a, BPF_ST, 0);
	c_emit(&a, BPF_LD | BPF_B | BPF_ABS, net + 6);
	c_jump(&a, BPF_JEQ | BPF_K, 6, L_V6L4, -1);
	c_jump(&a, BPF_JEQ | BPF_K, 17, L_V6L4, L_NOPORTS);
	c_label(&a, L_V6L4);
	c_emit(&a, BPF_LD | BPF_W | BPF_LEN, 0);
	c_jump(&a, BPF_JGE | BPF_K, 44, -1, L_NOPORTS);
	c_emit(&a, BPF_LD | BPF_H | BPF_ABS, net + 40);
	c_emit(&a, BPF_ST, 2);
	c_emit(&a, BPF_LD | BPF_H | BPF_ABS, net + 42);

	/* A = dport: A ^= sport ^ M[0]. */
	c_label(&a, L_PORTS);
	c_emit(&a, BPF_LDX | BPF_W | BPF_MEM, 2);
	c_emit(&a, BPF_ALU | BPF_XOR | BPF_X, 0);
	c_emit(&a, BPF_LDX | BPF_W | BPF_MEM, 0);
	c_emit(&a, BPF_ALU | BPF_XOR | BPF_X, 0);
	c_jump(&a, BPF_JA, 0, L_MIX, -1);
	c_label(&a, L_NOPORTS);
	c_emit(&a, BPF_LD | BPF_W | BPF_MEM, 0);

	/* The mix: A *= K; A ^= A >> 16. */
	c_label(&a, L_MIX);
	c_emit(&a, BPF_ALU | BPF_MUL | BPF_K, FLOW_HASH_MUL);
	c_emit(&a, BPF_MISC | BPF_TAX, 0);
	c_emit(&a, BPF_ALU | BPF_RSH | BPF_K, 16);
	c_emit(&a, BPF_ALU | BPF_XOR | BPF_X, 0);
	c_emit(&a, BPF_RET | BPF_A, 0);
	return c_finish(&a);
}

/* ---- eBPF ---- */

struct easm {
	struct bpf_insn *p;
	size_t n, cap;
	int label[MAX_LABELS];
	struct { size_t at; int l; } fix[32];
	size_t nfix;
	bool bad;
};

static void e_emit(struct easm *a, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (a->n >= a->cap) {
		a->bad = true;
		return;
	}
	a->p[a->n++] = (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off,
					 .imm = imm};
}

/* A jump to label l (code is BPF_JMP|op|BPF_K or |BPF_X, or BPF_JA). */
static void e_jump(struct easm *a, uint8_t code, uint8_t dst, uint8_t src, int32_t imm, int l)
{
	if (a->nfix >= sizeof(a->fix) / sizeof(a->fix[0])) {
		a->bad = true;
		return;
	}
	a->fix[a->nfix].at = a->n;
	a->fix[a->nfix].l = l;
	a->nfix++;
	e_emit(a, code, dst, src, 0, imm);
}

static size_t e_finish(struct easm *a)
{
	for (size_t i = 0; i < a->nfix && !a->bad; i++) {
		int t = a->label[a->fix[i].l];
		if (t < 0) {
			a->bad = true;
			break;
		}
		a->p[a->fix[i].at].off = (int16_t)(t - (int)a->fix[i].at - 1);
	}
	return a->bad ? 0 : a->n;
}

/* R0 = the packet's bytes at off (ABS) or src + off (IND), host order. */
static void e_ld_abs(struct easm *a, uint8_t size, int32_t off)
{
	e_emit(a, BPF_LD | BPF_ABS | size, 0, 0, 0, off);
}

static void e_ld_ind(struct easm *a, uint8_t size, uint8_t src, int32_t off)
{
	e_emit(a, BPF_LD | BPF_IND | size, 0, src, 0, off);
}

enum { R0, R1, R2, R3, R4, R5, R6, R7, R8, R9 };
#define ETH 14

size_t steer_ebpf_build(struct bpf_insn *out, size_t cap)
{
	struct easm a = {.p = out, .cap = cap};
	for (int i = 0; i < MAX_LABELS; i++)
		a.label[i] = -1;
	/* R6 = ctx, as the legacy loads require.  They clobber R1-R5, so the
	 * state lives in R7 (address XOR), R8 (port XOR), R9 (IHL). */
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R6, R1, 0, 0);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R8, 0, 0, 0);
	e_ld_abs(&a, BPF_H, 12);
	e_jump(&a, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 0x0800, L_V4);
	e_jump(&a, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 0x86dd, L_V6);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0);
	e_emit(&a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	/* IPv4 */
	a.label[L_V4] = (int)a.n;
	e_ld_abs(&a, BPF_W, ETH + 12);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R7, R0, 0, 0);
	e_ld_abs(&a, BPF_W, ETH + 16);
	e_emit(&a, BPF_ALU64 | BPF_XOR | BPF_X, R7, R0, 0, 0);
	e_ld_abs(&a, BPF_B, ETH + 9);
	e_jump(&a, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 6, L_V4L4);
	e_jump(&a, BPF_JMP | BPF_JNE | BPF_K, R0, 0, 17, L_MIX);
	a.label[L_V4L4] = (int)a.n;
	e_ld_abs(&a, BPF_H, ETH + 6);
	e_jump(&a, BPF_JMP | BPF_JSET | BPF_K, R0, 0, 0x3fff, L_MIX); /* a fragment */
	e_ld_abs(&a, BPF_B, ETH + 0);
	e_emit(&a, BPF_ALU64 | BPF_AND | BPF_K, R0, 0, 0, 0x0f);
	e_emit(&a, BPF_ALU64 | BPF_LSH | BPF_K, R0, 0, 0, 2);
	e_jump(&a, BPF_JMP | BPF_JLT | BPF_K, R0, 0, 20, L_MIX);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R9, R0, 0, 0);
	/* The frame holds 14 + IHL*4 + 4: skb->len >= R9 + 18. */
	e_emit(&a, BPF_LDX | BPF_MEM | BPF_W, R2, R6, (int16_t)offsetof(struct __sk_buff, len), 0);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R3, R9, 0, 0);
	e_emit(&a, BPF_ALU64 | BPF_ADD | BPF_K, R3, 0, 0, ETH + 4);
	e_jump(&a, BPF_JMP | BPF_JGT | BPF_X, R3, R2, 0, L_MIX);
	e_ld_ind(&a, BPF_H, R9, ETH + 0);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R8, R0, 0, 0);
	e_ld_ind(&a, BPF_H, R9, ETH + 2);
	e_emit(&a, BPF_ALU64 | BPF_XOR | BPF_X, R8, R0, 0, 0);
	e_jump(&a, BPF_JMP | BPF_JA, 0, 0, 0, L_MIX);

	/* IPv6 */
	a.label[L_V6] = (int)a.n;
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R7, 0, 0, 0);
	for (int32_t off = 8; off < 40; off += 4) {
		e_ld_abs(&a, BPF_W, ETH + off);
		e_emit(&a, BPF_ALU64 | BPF_XOR | BPF_X, R7, R0, 0, 0);
	}
	e_ld_abs(&a, BPF_B, ETH + 6);
	e_jump(&a, BPF_JMP | BPF_JEQ | BPF_K, R0, 0, 6, L_V6L4);
	e_jump(&a, BPF_JMP | BPF_JNE | BPF_K, R0, 0, 17, L_MIX);
	a.label[L_V6L4] = (int)a.n;
	e_emit(&a, BPF_LDX | BPF_MEM | BPF_W, R2, R6, (int16_t)offsetof(struct __sk_buff, len), 0);
	e_jump(&a, BPF_JMP | BPF_JLT | BPF_K, R2, 0, ETH + 44, L_MIX);
	e_ld_abs(&a, BPF_H, ETH + 40);
	e_emit(&a, BPF_ALU64 | BPF_MOV | BPF_X, R8, R0, 0, 0);
	e_ld_abs(&a, BPF_H, ETH + 42);
	e_emit(&a, BPF_ALU64 | BPF_XOR | BPF_X, R8, R0, 0, 0);

	/* The mix, in 32-bit arithmetic (BPF_ALU: results mod 2^32, upper
	 * half zeroed): R0 = (x ^ ports) * K; R0 ^= R0 >> 16. */
	a.label[L_MIX] = (int)a.n;
	e_emit(&a, BPF_ALU | BPF_XOR | BPF_X, R7, R8, 0, 0);
	e_emit(&a, BPF_ALU | BPF_MUL | BPF_K, R7, 0, 0, (int32_t)FLOW_HASH_MUL);
	e_emit(&a, BPF_ALU | BPF_MOV | BPF_X, R0, R7, 0, 0);
	e_emit(&a, BPF_ALU | BPF_RSH | BPF_K, R0, 0, 0, 16);
	e_emit(&a, BPF_ALU | BPF_XOR | BPF_X, R0, R7, 0, 0);
	e_emit(&a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return e_finish(&a);
}

int steer_ebpf_load(void)
{
	struct bpf_insn prog[STEER_BPF_MAX];
	size_t n = steer_ebpf_build(prog, STEER_BPF_MAX);
	if (n == 0)
		return -EINVAL;
	/* No helpers are called, so the licence string asks for nothing. */
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "skiff_steer", "Dual MIT/GPL", prog, n,
			       NULL);
	return fd < 0 ? (errno ? -errno : fd) : fd;
}
