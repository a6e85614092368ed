/* steer_bpf_test.c — the steering programs against wire/flow_hash.h's
 * flow_hash_frame, on frames of every shape the header's contract names
 * (IPv4 TCP/UDP/ICMP, options, fragments, IPv6 TCP/UDP/other, ARP, short
 * and cut frames), run by small interpreters of the instructions the
 * builders emit, with the kernel's rules for them: a packet load past the
 * end ends the program with 0; classic loads at SKF_NET_OFF + k read the
 * network header (here: data starts at it, as on the fanout's receive
 * path), SKF_AD_PROTOCOL is the EtherType, BPF_LEN is the IP length; the
 * eBPF legacy loads read from the Ethernet header, __sk_buff.len is the
 * frame length.  tests/smp.sh checks the same programs in the kernel with
 * real connections (IPv4 TCP); this covers the paths a test network does
 * not reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dev/steer_bpf.h"
#include "wire/flow_hash.h"

static bool load(const uint8_t *p, size_t len, int64_t off, unsigned size, uint32_t *v)
{
	if (off < 0 || (uint64_t)off + size > len)
		return false;
	uint32_t x = 0;
	for (unsigned i = 0; i < size; i++)
		x = x << 8 | p[off + i];
	*v = x;
	return true;
}

static unsigned size_of(uint16_t code)
{
	return BPF_SIZE(code) == BPF_W ? 4 : BPF_SIZE(code) == BPF_H ? 2 : 1;
}

/* Classic BPF, the subset the builder uses. */
static uint32_t run_cbpf(const struct sock_filter *p, size_t n, const uint8_t *f, size_t len)
{
	const uint8_t *net = f + 14;
	size_t nlen = len - 14;
	uint16_t proto = (uint16_t)(f[12] << 8 | f[13]);
	uint32_t A = 0, X = 0, M[16] = {0};
	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &p[pc];
		uint32_t v;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (BPF_MODE(i->code) == BPF_LEN) {
				A = (uint32_t)nlen;
			} else if (BPF_MODE(i->code) == BPF_MEM) {
				A = M[i->k];
			} else if (BPF_MODE(i->code) == BPF_ABS && i->k == (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL)) {
				A = proto;
			} else {
				int64_t off = (int32_t)i->k + (BPF_MODE(i->code) == BPF_IND ? (int64_t)X : 0);
				assert_true(off >= SKF_NET_OFF && off < SKF_NET_OFF + 0x1000);
				if (!load(net, nlen, off - SKF_NET_OFF, size_of(i->code), &v))
					return 0;
				A = v;
			}
			break;
		case BPF_LDX:
			assert_int_equal(BPF_MODE(i->code), BPF_MEM);
			X = M[i->k];
			break;
		case BPF_ST:
			M[i->k] = A;
			break;
		case BPF_ALU: {
			uint32_t b = BPF_SRC(i->code) == BPF_X ? X : i->k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD: A += b; break;
			case BPF_MUL: A *= b; break;
			case BPF_AND: A &= b; break;
			case BPF_LSH: A <<= b; break;
			case BPF_RSH: A >>= b; break;
			case BPF_XOR: A ^= b; break;
			default: fail_msg("alu op %x", BPF_OP(i->code));
			}
			break;
		}
		case BPF_JMP: {
			uint32_t b = BPF_SRC(i->code) == BPF_X ? X : i->k;
			bool t;
			switch (BPF_OP(i->code)) {
			case BPF_JA: pc += i->k; continue;
			case BPF_JEQ: t = A == b; break;
			case BPF_JGE: t = A >= b; break;
			case BPF_JSET: t = (A & b) != 0; break;
			default: fail_msg("jmp op %x", BPF_OP(i->code)); return 0;
			}
			pc += t ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? A : i->k;
		case BPF_MISC:
			assert_int_equal(BPF_MISCOP(i->code), BPF_TAX);
			X = A;
			break;
		default:
			fail_msg("class %x", BPF_CLASS(i->code));
		}
	}
	fail_msg("fell off the end");
	return 0;
}

/* eBPF, the subset the builder uses. */
static uint32_t run_ebpf(const struct bpf_insn *p, size_t n, const uint8_t *f, size_t len)
{
	uint64_t r[11] = {0};
	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *i = &p[pc];
		uint8_t cls = BPF_CLASS(i->code);
		uint64_t src = BPF_SRC(i->code) == BPF_X ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;
		uint64_t *d = &r[i->dst_reg];
		uint32_t v;
		switch (cls) {
		case BPF_LD: {
			int64_t off = i->imm + (BPF_MODE(i->code) == BPF_IND ? (int64_t)(int32_t)r[i->src_reg] : 0);
			assert_true(BPF_MODE(i->code) == BPF_ABS || BPF_MODE(i->code) == BPF_IND);
			if (!load(f, len, off, size_of(i->code), &v))
				return 0;
			r[0] = v;
			break;
		}
		case BPF_LDX:
			/* the one context field read: __sk_buff.len */
			assert_int_equal(i->off, offsetof(struct __sk_buff, len));
			*d = len;
			break;
		case BPF_ALU64:
		case BPF_ALU: {
			uint64_t x = *d;
			switch (BPF_OP(i->code)) {
			case BPF_MOV: x = src; break;
			case BPF_ADD: x += src; break;
			case BPF_MUL: x *= src; break;
			case BPF_AND: x &= src; break;
			case BPF_LSH: x <<= src; break;
			case BPF_RSH: x = cls == BPF_ALU ? (uint32_t)x >> src : x >> src; break;
			case BPF_XOR: x ^= src; break;
			default: fail_msg("alu op %x", BPF_OP(i->code));
			}
			*d = cls == BPF_ALU ? (uint32_t)x : x;
			break;
		}
		case BPF_JMP: {
			bool t;
			switch (BPF_OP(i->code)) {
			case BPF_EXIT: return (uint32_t)r[0];
			case BPF_JA: t = true; break;
			case BPF_JEQ: t = *d == src; break;
			case BPF_JNE: t = *d != src; break;
			case BPF_JLT: t = *d < src; break;
			case BPF_JGT: t = *d > src; break;
			case BPF_JSET: t = (*d & src) != 0; break;
			default: fail_msg("jmp op %x", BPF_OP(i->code)); return 0;
			}
			if (t)
				pc += (size_t)(ptrdiff_t)i->off;
			break;
		}
		default:
			fail_msg("class %x", cls);
		}
	}
	fail_msg("fell off the end");
	return 0;
}

static uint64_t rng = 0x12345678;
static uint32_t rnd(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

/* A frame of one shape, random where the shape leaves it free. */
static size_t mk_frame(uint8_t *f, unsigned shape)
{
	memset(f, 0, 200);
	for (int i = 0; i < 12; i++)
		f[i] = (uint8_t)rnd();
	uint8_t *ip = f + 14;
	size_t n;
	static const uint8_t l4[] = {6, 17, 1, 6, 17, 47};
	if (shape % 3 != 2) {
		f[12] = 0x08, f[13] = 0x00;
		unsigned ihl = shape % 4 == 1 ? 5 + rnd() % 11 : 5; /* options */
		ip[0] = (uint8_t)(0x40 | ihl);
		for (int i = 12; i < 20; i++)
			ip[i] = (uint8_t)rnd();
		ip[9] = l4[rnd() % 6];
		if (rnd() % 4 == 0) { /* a fragment: MF, or an offset */
			uint16_t fo = rnd() % 2 ? 0x2000 : (uint16_t)(1 + rnd() % 0x1fff);
			ip[6] = (uint8_t)(fo >> 8), ip[7] = (uint8_t)fo;
		} else if (rnd() % 2) {
			ip[6] = 0x40; /* DF: not a fragment */
		}
		n = ihl * 4 + 20;
	} else {
		f[12] = 0x86, f[13] = 0xdd;
		ip[0] = 0x60;
		ip[6] = l4[rnd() % 6];
		for (int i = 8; i < 40; i++)
			ip[i] = (uint8_t)rnd();
		n = 60;
	}
	if (shape % 7 == 3) {
		f[12] = 0x08, f[13] = 0x06; /* ARP */
	}
	for (size_t i = n - 20; i < n; i++)
		ip[i] = (uint8_t)rnd(); /* ports and payload */
	size_t len = 14 + n;
	if (rnd() % 3 == 0)
		len = rnd() % (len + 1); /* cut anywhere, even into the MAC header */
	if (len < 14)
		len = 14; /* the devices hand over no frame shorter than a header */
	return len;
}

static void test_programs_match_flow_hash(void **state)
{
	(void)state;
	struct sock_filter c[STEER_BPF_MAX];
	struct bpf_insn e[STEER_BPF_MAX];
	size_t nc = steer_cbpf_build(c, STEER_BPF_MAX), ne = steer_ebpf_build(e, STEER_BPF_MAX);
	assert_true(nc > 0 && nc <= BPF_MAXINSNS);
	assert_true(ne > 0);
	/* Too little room: 0, never a cut program. */
	assert_int_equal(steer_cbpf_build(c, nc - 1), 0);
	assert_int_equal(steer_ebpf_build(e, ne - 1), 0);
	nc = steer_cbpf_build(c, STEER_BPF_MAX);
	ne = steer_ebpf_build(e, STEER_BPF_MAX);
	uint8_t f[256];
	unsigned ported = 0;
	for (unsigned k = 0; k < 200000; k++) {
		size_t len = mk_frame(f, k);
		uint32_t want = flow_hash_frame(f, len);
		uint32_t got_c = run_cbpf(c, nc, f, len), got_e = run_ebpf(e, ne, f, len);
		if (got_c != want || got_e != want)
			fail_msg("frame %u (len %zu, type %02x%02x): flow_hash %08x, cbpf %08x, ebpf %08x",
				 k, len, f[12], f[13], want, got_c, got_e);
		ported += want != 0 && (f[12] == 0x08 || f[12] == 0x86);
	}
	assert_true(ported > 100000); /* the frames did reach the hash */
}

/* A real TCP/IPv4 tuple: the frame's hash is the tuple's (as the TCP
 * engine computes it for a source port), and symmetric. */
static void test_tuple_and_reverse(void **state)
{
	(void)state;
	struct sock_filter c[STEER_BPF_MAX];
	size_t nc = steer_cbpf_build(c, STEER_BPF_MAX);
	uint8_t f[64] = {0};
	f[12] = 0x08, f[13] = 0x00;
	uint8_t *ip = f + 14;
	ip[0] = 0x45, ip[9] = 6;
	const uint8_t a[4] = {198, 18, 0, 1}, b[4] = {198, 18, 0, 2};
	memcpy(ip + 12, a, 4), memcpy(ip + 16, b, 4);
	ip[20] = 20000 >> 8, ip[21] = 20000 & 0xff, ip[22] = 0, ip[23] = 80;
	uint32_t fwd = run_cbpf(c, nc, f, 60);
	memcpy(ip + 12, b, 4), memcpy(ip + 16, a, 4);
	ip[20] = 0, ip[21] = 80, ip[22] = 20000 >> 8, ip[23] = 20000 & 0xff;
	assert_int_equal(run_cbpf(c, nc, f, 60), fwd);
	struct sk_addr sa = sk_addr_v4(SK_IP4(198, 18, 0, 1)), sb = sk_addr_v4(SK_IP4(198, 18, 0, 2));
	assert_int_equal(flow_hash_tuple(&sa, 20000, &sb, 80), fwd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_programs_match_flow_hash),
		cmocka_unit_test(test_tuple_and_reverse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
