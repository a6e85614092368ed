/* flow_hash_test.c — the steering hash: symmetric, the frame form equal to
 * the tuple form for both families, ports ignored where the contract says,
 * no read past a short frame, and a spread over two workers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>

#include "wire/flow_hash.h"

static size_t frame4(uint8_t *f, uint32_t s, uint32_t d, uint8_t proto, uint16_t sp, uint16_t dp,
		     uint16_t frag)
{
	memset(f, 0, 64);
	sk_put_be16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	sk_put_be16(ip + 6, frag);
	ip[9] = proto;
	sk_put_be32(ip + 12, s);
	sk_put_be32(ip + 16, d);
	sk_put_be16(ip + 20, sp);
	sk_put_be16(ip + 22, dp);
	return 14 + 20 + 20;
}

static size_t frame6(uint8_t *f, const struct sk_addr *s, const struct sk_addr *d, uint8_t nh,
		     uint16_t sp, uint16_t dp)
{
	memset(f, 0, 96);
	sk_put_be16(f + 12, 0x86dd);
	uint8_t *ip = f + 14;
	ip[0] = 0x60;
	ip[6] = nh;
	memcpy(ip + 8, s->b, 16);
	memcpy(ip + 24, d->b, 16);
	sk_put_be16(ip + 40, sp);
	sk_put_be16(ip + 42, dp);
	return 14 + 40 + 20;
}

static void test_symmetric_and_frame_v4(void **st)
{
	(void)st;
	uint8_t f[64];
	struct sk_addr a = sk_addr_v4(0xc6120001u), b = sk_addr_v4(0xc6120002u);
	uint32_t t = flow_hash_tuple(&a, 40000, &b, 80);
	assert_int_equal(t, flow_hash_tuple(&b, 80, &a, 40000));
	size_t n = frame4(f, 0xc6120001u, 0xc6120002u, 6, 40000, 80, 0);
	assert_int_equal(flow_hash_frame(f, n), t);
	n = frame4(f, 0xc6120002u, 0xc6120001u, 17, 80, 40000, 0x4000); /* DF only: not a fragment */
	assert_int_equal(flow_hash_frame(f, n), t);
	/* A fragment, ICMP: ports 0. */
	uint32_t noports = flow_hash_tuple(&a, 0, &b, 0);
	n = frame4(f, 0xc6120001u, 0xc6120002u, 6, 40000, 80, 0x2000);
	assert_int_equal(flow_hash_frame(f, n), noports);
	n = frame4(f, 0xc6120001u, 0xc6120002u, 1, 40000, 80, 0);
	assert_int_equal(flow_hash_frame(f, n), noports);
	/* IP options move the ports. */
	n = frame4(f, 0xc6120001u, 0xc6120002u, 6, 0, 0, 0);
	f[14] = 0x46;
	sk_put_be16(f + 14 + 24, 40000);
	sk_put_be16(f + 14 + 26, 80);
	assert_int_equal(flow_hash_frame(f, n), t);
}

static void test_symmetric_and_frame_v6(void **st)
{
	(void)st;
	uint8_t f[96];
	uint8_t ab[16] = {0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	uint8_t bb[16] = {0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	struct sk_addr a = sk_addr_v6(ab), b = sk_addr_v6(bb);
	uint32_t t = flow_hash_tuple(&a, 50000, &b, 443);
	assert_int_equal(t, flow_hash_tuple(&b, 443, &a, 50000));
	size_t n = frame6(f, &b, &a, 6, 443, 50000);
	assert_int_equal(flow_hash_frame(f, n), t);
	n = frame6(f, &a, &b, 58, 1, 2); /* ICMPv6: no ports */
	assert_int_equal(flow_hash_frame(f, n), flow_hash_tuple(&a, 0, &b, 0));
}

static void test_short_and_other(void **st)
{
	(void)st;
	uint8_t f[64];
	size_t n = frame4(f, 1, 2, 6, 3, 4, 0);
	for (size_t len = 0; len < n; len++) {
		/* Exactly len bytes on the heap, so ASan sees any read beyond. */
		uint8_t *c = malloc(len ? len : 1);
		memcpy(c, f, len);
		(void)flow_hash_frame(c, len);
		free(c);
	}
	sk_put_be16(f + 12, 0x0806); /* ARP */
	assert_int_equal(flow_hash_frame(f, n), 0);
	assert_int_equal(flow_hash_worker(12345, 1), 0);
}

/* Source ports from one client to one server port split about evenly over
 * two workers, and each worker finds a port of its own within a few tries. */
static void test_spread(void **st)
{
	(void)st;
	struct sk_addr a = sk_addr_v4(0xc6120001u), b = sk_addr_v4(0xc6120002u);
	unsigned count[2] = {0, 0}, run = 0, longest = 0, last = 2;
	for (uint32_t p = 32768; p < 61000; p++) {
		unsigned w = flow_hash_worker(flow_hash_tuple(&a, (uint16_t)p, &b, 8080), 2);
		count[w]++;
		run = w == last ? run + 1 : 1;
		last = w;
		if (run > longest)
			longest = run;
	}
	unsigned total = count[0] + count[1];
	assert_true(count[0] > total * 45 / 100 && count[1] > total * 45 / 100);
	assert_true(longest < 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symmetric_and_frame_v4),
		cmocka_unit_test(test_symmetric_and_frame_v6),
		cmocka_unit_test(test_short_and_other),
		cmocka_unit_test(test_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
