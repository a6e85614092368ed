/* hpack_test.c — HPACK (RFC 7541): the integer examples of C.1, the
 * Huffman table checked against itself (canonical, complete), the decoder
 * on every example of C.2 to C.6 (typed from the RFC), the encoder
 * reproducing C.3 to C.6 byte for byte, random round trips through small
 * tables (eviction, compaction, size updates) with the table's invariants
 * checked after every block, and every COMPRESSION_ERROR case.
 *
 * Blocks are decoded from exact-size heap copies, so ASan reports any read
 * past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "h2/hpack.h"
#include "h2/hpack_huff.h"
#include "h2/hpack_mem_test.h"

/* ---- fixtures ---- */

#define LIMIT HPACK_MEM_LIMIT

/* 64 fields, 8 KiB of strings: the bounds the tests below count on. */
static struct hpack_dec_mem *dec_new(uint32_t limit)
{
	struct hpack_dec_mem *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(hpack_dec_mem_init(m, limit, 64, 8192, 1u << 20), HPACK_OK);
	return m;
}

static struct hpack_enc_mem *enc_new(uint32_t limit)
{
	struct hpack_enc_mem *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(hpack_enc_mem_init(m, limit), HPACK_OK);
	return m;
}

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	int hi = -1;
	for (const char *p = hex; *p; p++) {
		int v;
		if (*p >= '0' && *p <= '9')
			v = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			v = *p - 'a' + 10;
		else
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			assert_true(n < cap);
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	assert_int_equal(hi, -1);
	return n;
}

/* Decode hex through an exact-size copy. */
static int dec_hex(struct hpack_dec_mem *m, const char *hex)
{
	uint8_t raw[1024];
	size_t n = unhex(hex, raw, sizeof(raw));
	uint8_t *c = malloc(n ? n : 1);
	assert_non_null(c);
	memcpy(c, raw, n);
	int rc = hpack_decode(&m->d, c, n, &m->l);
	free(c);
	assert_int_equal(hpack_table_check(&m->d.t), 0);
	return rc;
}

struct hdr {
	const char *name, *value;
};

static void expect_list(const struct hpack_dec_mem *m, const struct hdr *h, size_t n)
{
	assert_int_equal(m->l.n_fields, n);
	uint32_t size = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hpack_field *f = &m->l.fields[i];
		assert_int_equal(f->name_len, strlen(h[i].name));
		assert_memory_equal(f->name, h[i].name, f->name_len);
		assert_int_equal(f->value_len, strlen(h[i].value));
		if (f->value_len)
			assert_memory_equal(f->value, h[i].value, f->value_len);
		size += f->name_len + f->value_len + 32;
	}
	assert_int_equal(m->l.list_size, size);
}

/* The dynamic table, newest first, as the RFC's examples print it. */
static void expect_table(const struct hpack_table *t, const struct hdr *h, size_t n, uint32_t size)
{
	assert_int_equal(t->count, n);
	assert_int_equal(t->size, size);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *nm, *v;
		uint32_t nl, vl;
		assert_true(hpack_table_get(t, HPACK_STATIC_COUNT + 1 + (uint32_t)i, &nm, &nl, &v, &vl));
		assert_int_equal(nl, strlen(h[i].name));
		assert_memory_equal(nm, h[i].name, nl);
		assert_int_equal(vl, strlen(h[i].value));
		assert_memory_equal(v, h[i].value, vl);
	}
	const uint8_t *nm, *v;
	uint32_t nl, vl;
	assert_false(hpack_table_get(t, HPACK_STATIC_COUNT + 1 + (uint32_t)n, &nm, &nl, &v, &vl));
}

/* ---- C.1: integers ---- */

static void test_int_c1(void **state)
{
	(void)state;
	uint8_t b[8];
	size_t pos = 0;
	uint32_t v;
	/* C.1.1: 10 on a 5-bit prefix. */
	assert_int_equal(hpack_int_encode(b, sizeof(b), 10, 5, 0), 1);
	assert_int_equal(b[0], 0x0a);
	/* C.1.2: 1337 on a 5-bit prefix: 31, 154, 10. */
	assert_int_equal(hpack_int_encode(b, sizeof(b), 1337, 5, 0xe0), 3);
	assert_int_equal(b[0], 0xff); /* the pattern bits kept */
	assert_int_equal(b[1], 0x9a);
	assert_int_equal(b[2], 0x0a);
	assert_int_equal(hpack_int_decode(b, 3, &pos, 5, &v), HPACK_OK);
	assert_int_equal(v, 1337);
	assert_int_equal(pos, 3);
	/* C.1.3: 42 at an octet boundary. */
	assert_int_equal(hpack_int_encode(b, sizeof(b), 42, 8, 0), 1);
	assert_int_equal(b[0], 42);
	/* Short output. */
	assert_int_equal(hpack_int_encode(b, 2, 1337, 5, 0), 0);
	assert_int_equal(hpack_int_encode(b, 0, 1, 5, 0), 0);
}

static void test_int_roundtrip(void **state)
{
	(void)state;
	const uint32_t vals[] = { 0, 1, 14, 15, 16, 30, 31, 62, 63, 64, 126, 127, 128, 254, 255, 256,
				  1337, 16383, 16384, 1u << 21, (1u << 28) - 1, 1u << 28,
				  HPACK_INT_MAX - 1, HPACK_INT_MAX };
	for (unsigned prefix = 1; prefix <= 8; prefix++) {
		for (size_t i = 0; i < SK_ARRAY_LEN(vals); i++) {
			uint8_t b[8];
			size_t n = hpack_int_encode(b, sizeof(b), vals[i], prefix, 0);
			assert_true(n > 0);
			/* Every cut short of n is truncated, never read past. */
			for (size_t cut = 0; cut < n; cut++) {
				size_t pos = 0;
				uint32_t v;
				uint8_t *c = malloc(cut ? cut : 1);
				memcpy(c, b, cut);
				assert_int_equal(hpack_int_decode(c, cut, &pos, prefix, &v), HPACK_ETRUNC);
				free(c);
			}
			size_t pos = 0;
			uint32_t v = 0;
			assert_int_equal(hpack_int_decode(b, n, &pos, prefix, &v), HPACK_OK);
			assert_int_equal(v, vals[i]);
			assert_int_equal(pos, n);
		}
	}
}

static void test_int_overflow(void **state)
{
	(void)state;
	uint8_t b[16];
	size_t pos = 0;
	uint32_t v;
	/* 2^31 on a 5-bit prefix: one past HPACK_INT_MAX. */
	size_t n = unhex("1f e1 ff ff ff 07", b, sizeof(b));
	assert_int_equal(hpack_int_decode(b, n, &pos, 5, &v), HPACK_EINT);
	/* Overflowing 64 bits if summed naively. */
	n = unhex("1f ff ff ff ff ff ff ff ff ff ff 0f", b, sizeof(b));
	pos = 0;
	assert_int_equal(hpack_int_decode(b, n, &pos, 5, &v), HPACK_EINT);
	/* A small value padded with zero continuation bytes past 5 of them. */
	n = unhex("1f 80 80 80 80 80 00", b, sizeof(b));
	pos = 0;
	assert_int_equal(hpack_int_decode(b, n, &pos, 5, &v), HPACK_EINT);
	/* Four zero pads are within bounds: 31 + 1. */
	n = unhex("1f 81 80 80 80 00", b, sizeof(b));
	pos = 0;
	assert_int_equal(hpack_int_decode(b, n, &pos, 5, &v), HPACK_OK);
	assert_int_equal(v, 32);
	/* The decoder refuses such an index, and stops. */
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "ff ff ff ff ff ff 0f"), HPACK_EINT);
	assert_int_equal(hpack_err_h2_code(HPACK_EINT), HPACK_H2_COMPRESSION_ERROR);
	free(m);
}

/* ---- Huffman ---- */

/* Derive the decoding tables from the code table again; also proves the
 * code table canonical and complete, so a typing error in it fails here. */
static void test_huff_tables(void **state)
{
	(void)state;
	uint64_t kraft = 0;
	uint16_t count[HPACK_HUFF_MAX_BITS + 1] = { 0 };
	for (unsigned s = 0; s < HPACK_HUFF_SYMS; s++) {
		unsigned b = hpack_huff_code[s].bits;
		assert_true(b >= HPACK_HUFF_MIN_BITS && b <= HPACK_HUFF_MAX_BITS);
		assert_true(hpack_huff_code[s].code < (1u << b));
		kraft += 1ull << (HPACK_HUFF_MAX_BITS - b);
		count[b]++;
	}
	assert_true(kraft == 1ull << HPACK_HUFF_MAX_BITS); /* complete */
	/* Canonical: sorted by (length, symbol), each code is the previous
	 * plus one, shifted to the new length. */
	uint32_t code = 0, prev_bits = 0;
	unsigned k = 0;
	for (unsigned b = 1; b <= HPACK_HUFF_MAX_BITS; b++) {
		assert_int_equal(hpack_huff_count[b], count[b]);
		if (!count[b])
			continue;
		assert_int_equal(hpack_huff_offset[b], k);
		for (unsigned s = 0; s < HPACK_HUFF_SYMS; s++) {
			if (hpack_huff_code[s].bits != b)
				continue;
			if (k > 0)
				code = (code + 1) << (b - prev_bits);
			prev_bits = b;
			assert_int_equal(hpack_huff_sorted[k], s);
			assert_int_equal(hpack_huff_code[s].code, code);
			if (k == hpack_huff_offset[b])
				assert_int_equal(hpack_huff_first[b], code);
			k++;
		}
	}
	assert_int_equal(k, HPACK_HUFF_SYMS);
	/* The few codes printed in the RFC's text and examples. */
	assert_int_equal(hpack_huff_code['0'].code, 0x0);
	assert_int_equal(hpack_huff_code['0'].bits, 5);
	assert_int_equal(hpack_huff_code[HPACK_HUFF_EOS].code, 0x3fffffff);
	assert_int_equal(hpack_huff_code[HPACK_HUFF_EOS].bits, 30);
}

static void huff_roundtrip(const uint8_t *s, size_t n)
{
	uint8_t enc[4096], dec[4096];
	size_t elen = hpack_huff_encoded_len(s, n);
	assert_true(elen <= sizeof(enc));
	assert_int_equal(hpack_huff_encode(enc, sizeof(enc), s, n), elen);
	if (elen)
		assert_int_equal(hpack_huff_encode(enc, elen - 1, s, n), 0);
	uint8_t *c = malloc(elen ? elen : 1);
	memcpy(c, enc, elen);
	size_t dlen = 0;
	assert_int_equal(hpack_huff_decode(c, elen, dec, sizeof(dec), &dlen), HPACK_OK);
	assert_int_equal(dlen, n);
	if (n)
		assert_memory_equal(dec, s, n);
	/* Measure only. */
	assert_int_equal(hpack_huff_decode(c, elen, NULL, 0, &dlen), HPACK_OK);
	assert_int_equal(dlen, n);
	if (n) /* one byte short of room */
		assert_int_equal(hpack_huff_decode(c, elen, dec, n - 1, &dlen), HPACK_ENOBUF);
	free(c);
}

static void test_huff_roundtrip(void **state)
{
	(void)state;
	uint8_t s[1024];
	for (unsigned i = 0; i < 256; i++) {
		s[0] = (uint8_t)i;
		huff_roundtrip(s, 1);
		s[1] = (uint8_t)(255 - i);
		huff_roundtrip(s, 2);
	}
	for (unsigned i = 0; i < 256; i++)
		s[i] = (uint8_t)i;
	huff_roundtrip(s, 256);
	huff_roundtrip(s, 0);
	srand(7);
	for (int r = 0; r < 500; r++) {
		size_t n = (size_t)rand() % sizeof(s);
		for (size_t i = 0; i < n; i++)
			s[i] = (uint8_t)(r & 1 ? rand() : "abcdefghij0123 -/:"[rand() % 18]);
		huff_roundtrip(s, n);
	}
	/* C.4.1's :authority value. */
	uint8_t enc[16];
	assert_int_equal(hpack_huff_encode(enc, sizeof(enc), (const uint8_t *)"www.example.com", 15), 12);
	uint8_t want[12];
	unhex("f1e3 c2e5 f23a 6ba0 ab90 f4ff", want, sizeof(want));
	assert_memory_equal(enc, want, 12);
}

static void test_huff_errors(void **state)
{
	(void)state;
	uint8_t b[8], out[16];
	size_t n, o;
	/* EOS coded in full (30 ones), then 2 bits of padding. */
	n = unhex("ff ff ff ff", b, sizeof(b));
	assert_int_equal(hpack_huff_decode(b, n, out, sizeof(out), &o), HPACK_EHUFF);
	/* 'a' (00011) then 31 ones: EOS is the first 30. */
	n = unhex("1f ff ff ff f0", b, sizeof(b));
	assert_int_equal(hpack_huff_decode(b, n, out, sizeof(out), &o), HPACK_EHUFF);
	/* Padding of 8 ones: '0' (00000) + 111 pad, then a whole 0xff. */
	n = unhex("07 ff", b, sizeof(b));
	assert_int_equal(hpack_huff_decode(b, n, out, sizeof(out), &o), HPACK_EHUFF);
	/* The same without the extra byte is fine: "0". */
	assert_int_equal(hpack_huff_decode(b, 1, out, sizeof(out), &o), HPACK_OK);
	assert_int_equal(o, 1);
	assert_int_equal(out[0], '0');
	/* Padding not all ones: '0' + 000 is "00", two symbols... so use
	 * 'a' (00011) + 010: the pad is no prefix of EOS. */
	n = unhex("1a", b, sizeof(b));
	assert_int_equal(hpack_huff_decode(b, n, out, sizeof(out), &o), HPACK_EHUFF);
	/* A lone 0xff: 8 ones, a prefix of a long code, over 7 bits of pad. */
	n = unhex("ff", b, sizeof(b));
	assert_int_equal(hpack_huff_decode(b, n, out, sizeof(out), &o), HPACK_EHUFF);
	/* Inside a block: a literal whose Huffman value holds EOS. */
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "00 01 61 84 ff ff ff ff"), HPACK_EHUFF);
	free(m);
}

/* ---- C.2: one representation each ---- */

static void test_c2(void **state)
{
	(void)state;
	struct hpack_dec_mem *m = dec_new(LIMIT);
	/* C.2.1 literal with indexing. */
	assert_int_equal(dec_hex(m, "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"),
			 HPACK_OK);
	expect_list(m, (struct hdr[]){ { "custom-key", "custom-header" } }, 1);
	expect_table(&m->d.t, (struct hdr[]){ { "custom-key", "custom-header" } }, 1, 55);
	free(m);
	/* C.2.2 literal without indexing. */
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "040c 2f73 616d 706c 652f 7061 7468"), HPACK_OK);
	expect_list(m, (struct hdr[]){ { ":path", "/sample/path" } }, 1);
	expect_table(&m->d.t, NULL, 0, 0);
	assert_int_equal(m->l.fields[0].flags, 0);
	free(m);
	/* C.2.3 never indexed: the flag is kept for the next hop. */
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "1008 7061 7373 776f 7264 0673 6563 7265 74"), HPACK_OK);
	expect_list(m, (struct hdr[]){ { "password", "secret" } }, 1);
	expect_table(&m->d.t, NULL, 0, 0);
	assert_int_equal(m->l.fields[0].flags, HPACK_FIELD_NEVER_INDEXED);
	free(m);
	/* C.2.4 indexed. */
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "82"), HPACK_OK);
	expect_list(m, (struct hdr[]){ { ":method", "GET" } }, 1);
	expect_table(&m->d.t, NULL, 0, 0);
	free(m);
}

/* ---- C.3 to C.6: sequences on one connection ---- */

static const char *const c3[] = {
	"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
	"8286 84be 5808 6e6f 2d63 6163 6865",
	"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
};
static const char *const c4[] = {
	"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
	"8286 84be 5886 a8eb 1064 9cbf",
	"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
};
static const char *const c5[] = {
	"4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a "
	"3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
	"4803 3330 37c1 c0bf",
	"88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 "
	"677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 "
	"553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
};
static const char *const c6[] = {
	"4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e "
	"919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
	"4883 640e ffc1 c0bf",
	"88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 "
	"821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed "
	"4ee5 b106 3d50 07",
};

#define DATE1 "Mon, 21 Oct 2013 20:13:21 GMT"
#define DATE2 "Mon, 21 Oct 2013 20:13:22 GMT"
#define LOC "https://www.example.com"
#define COOKIE "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"

static const struct hdr req1[] = { { ":method", "GET" }, { ":scheme", "http" }, { ":path", "/" },
				   { ":authority", "www.example.com" } };
static const struct hdr req2[] = { { ":method", "GET" }, { ":scheme", "http" }, { ":path", "/" },
				   { ":authority", "www.example.com" }, { "cache-control", "no-cache" } };
static const struct hdr req3[] = { { ":method", "GET" }, { ":scheme", "https" }, { ":path", "/index.html" },
				   { ":authority", "www.example.com" }, { "custom-key", "custom-value" } };
static const struct hdr resp1[] = { { ":status", "302" }, { "cache-control", "private" },
				    { "date", DATE1 }, { "location", LOC } };
static const struct hdr resp2[] = { { ":status", "307" }, { "cache-control", "private" },
				    { "date", DATE1 }, { "location", LOC } };
static const struct hdr resp3[] = { { ":status", "200" }, { "cache-control", "private" },
				    { "date", DATE2 }, { "location", LOC }, { "content-encoding", "gzip" },
				    { "set-cookie", COOKIE } };

static void check_requests(const char *const *blocks)
{
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, blocks[0]), HPACK_OK);
	expect_list(m, req1, 4);
	expect_table(&m->d.t, (struct hdr[]){ { ":authority", "www.example.com" } }, 1, 57);
	assert_int_equal(dec_hex(m, blocks[1]), HPACK_OK);
	expect_list(m, req2, 5);
	expect_table(&m->d.t, (struct hdr[]){ { "cache-control", "no-cache" }, { ":authority", "www.example.com" } },
		     2, 110);
	assert_int_equal(dec_hex(m, blocks[2]), HPACK_OK);
	expect_list(m, req3, 5);
	expect_table(&m->d.t,
		     (struct hdr[]){ { "custom-key", "custom-value" }, { "cache-control", "no-cache" },
				     { ":authority", "www.example.com" } },
		     3, 164);
	free(m);
}

static void check_responses(const char *const *blocks)
{
	/* The examples run with SETTINGS_HEADER_TABLE_SIZE 256: evictions. */
	struct hpack_dec_mem *m = dec_new(256);
	assert_int_equal(dec_hex(m, blocks[0]), HPACK_OK);
	expect_list(m, resp1, 4);
	expect_table(&m->d.t,
		     (struct hdr[]){ { "location", LOC }, { "date", DATE1 }, { "cache-control", "private" },
				     { ":status", "302" } },
		     4, 222);
	assert_int_equal(dec_hex(m, blocks[1]), HPACK_OK);
	expect_list(m, resp2, 4);
	expect_table(&m->d.t,
		     (struct hdr[]){ { ":status", "307" }, { "location", LOC }, { "date", DATE1 },
				     { "cache-control", "private" } },
		     4, 222);
	assert_int_equal(dec_hex(m, blocks[2]), HPACK_OK);
	expect_list(m, resp3, 6);
	expect_table(&m->d.t,
		     (struct hdr[]){ { "set-cookie", COOKIE }, { "content-encoding", "gzip" }, { "date", DATE2 } },
		     3, 215);
	free(m);
}

static void test_c3_c4(void **state)
{
	(void)state;
	check_requests(c3);
	check_requests(c4);
}

static void test_c5_c6(void **state)
{
	(void)state;
	check_responses(c5);
	check_responses(c6);
}

/* The encoder writes the RFC's bytes: C.3/C.5 without Huffman, C.4/C.6
 * with it on every string. */
static void encode_seq(uint32_t limit, uint8_t huff, const struct hdr *const *lists, const size_t *ns,
		       const char *const *want)
{
	struct hpack_enc_mem *m = enc_new(limit);
	m->e.huff = huff;
	/* The examples assume both ends agreed on `limit`: no update owed. */
	m->e.pending = false;
	for (int b = 0; b < 3; b++) {
		uint8_t out[512], exp[512];
		size_t pos = 0;
		assert_int_equal(hpack_enc_begin(&m->e, out, sizeof(out), &pos), HPACK_OK);
		for (size_t i = 0; i < ns[b]; i++) {
			const struct hdr *h = &lists[b][i];
			assert_int_equal(hpack_enc_field(&m->e, out, sizeof(out), &pos, (const uint8_t *)h->name,
							 strlen(h->name), (const uint8_t *)h->value,
							 strlen(h->value), 0),
					 HPACK_OK);
		}
		size_t n = unhex(want[b], exp, sizeof(exp));
		assert_int_equal(pos, n);
		assert_memory_equal(out, exp, n);
		assert_int_equal(hpack_table_check(&m->e.t), 0);
	}
	free(m);
}

static void test_encode_rfc(void **state)
{
	(void)state;
	const struct hdr *req[] = { req1, req2, req3 }, *resp[] = { resp1, resp2, resp3 };
	const size_t nreq[] = { 4, 5, 5 }, nresp[] = { 4, 4, 6 };
	encode_seq(4096, HPACK_HUFF_NEVER, req, nreq, c3);
	encode_seq(4096, HPACK_HUFF_ALWAYS, req, nreq, c4);
	encode_seq(256, HPACK_HUFF_NEVER, resp, nresp, c5);
	encode_seq(256, HPACK_HUFF_ALWAYS, resp, nresp, c6);
}

/* ---- round trips ---- */

/* Encode random lists with an encoder, decode them with a decoder; tables
 * small enough to evict and compact often; sizes changed between blocks. */
static void test_roundtrip_random(void **state)
{
	(void)state;
	static const char *const names[] = { ":method", ":path", "x-a", "x-b", "cookie", "user-agent",
					      "accept", "x-long-header-name-for-eviction" };
	srand(33);
	struct hpack_enc_mem *em = enc_new(LIMIT);
	struct hpack_dec_mem *dm = dec_new(LIMIT);
	uint8_t vals[64][40];
	for (int round = 0; round < 2000; round++) {
		if (round % 97 == 5) {
			uint32_t sz = (uint32_t)rand() % 600;
			/* Our decoder's limit changes with SETTINGS; the peer
			 * encoder follows. */
			hpack_enc_set_peer_limit(&em->e, sz);
			if (round % 2)
				hpack_enc_set_peer_limit(&em->e, sz + 200);
		}
		uint8_t out[4096];
		size_t pos = 0;
		assert_int_equal(hpack_enc_begin(&em->e, out, sizeof(out), &pos), HPACK_OK);
		int n = rand() % 12;
		size_t vlen[64];
		int nm[64];
		unsigned fl[64];
		em->e.huff = (uint8_t)(rand() % 3);
		for (int i = 0; i < n; i++) {
			nm[i] = rand() % (int)SK_ARRAY_LEN(names);
			vlen[i] = (size_t)rand() % 40;
			for (size_t j = 0; j < vlen[i]; j++)
				vals[i][j] = (uint8_t)(rand() % 4 ? 'a' + rand() % 4 : rand());
			fl[i] = (unsigned)(rand() % 8 == 0 ? HPACK_ENC_NEVER_INDEX : rand() % 8 == 0 ? HPACK_ENC_NO_INDEX : 0);
			assert_int_equal(hpack_enc_field(&em->e, out, sizeof(out), &pos, (const uint8_t *)names[nm[i]],
							 strlen(names[nm[i]]), vals[i], vlen[i], fl[i]),
					 HPACK_OK);
		}
		assert_int_equal(hpack_table_check(&em->e.t), 0);
		uint8_t *c = malloc(pos ? pos : 1);
		memcpy(c, out, pos);
		assert_int_equal(hpack_decode(&dm->d, c, pos, &dm->l), HPACK_OK);
		free(c);
		assert_int_equal(hpack_table_check(&dm->d.t), 0);
		assert_int_equal(dm->l.n_fields, n);
		for (int i = 0; i < n; i++) {
			const struct hpack_field *f = &dm->l.fields[i];
			assert_int_equal(f->name_len, strlen(names[nm[i]]));
			assert_memory_equal(f->name, names[nm[i]], f->name_len);
			assert_int_equal(f->value_len, vlen[i]);
			if (vlen[i])
				assert_memory_equal(f->value, vals[i], vlen[i]);
			assert_int_equal(!!(f->flags & HPACK_FIELD_NEVER_INDEXED), !!(fl[i] & HPACK_ENC_NEVER_INDEX));
		}
		/* The two tables hold the same entries. */
		assert_int_equal(dm->d.t.size, em->e.t.size);
		assert_int_equal(dm->d.t.count, em->e.t.count);
		assert_int_equal(dm->d.t.max_size, em->e.t.max_size);
	}
	free(em);
	free(dm);
}

/* A never-indexed field is never added to the table, even a pair that
 * would be indexable, and it stays a literal on a second send. */
static void test_never_indexed(void **state)
{
	(void)state;
	struct hpack_enc_mem *m = enc_new(LIMIT);
	uint8_t out[128];
	size_t pos = 0;
	assert_int_equal(hpack_enc_begin(&m->e, out, sizeof(out), &pos), HPACK_OK);
	for (int i = 0; i < 2; i++) {
		size_t at = pos;
		assert_int_equal(hpack_enc_field(&m->e, out, sizeof(out), &pos, (const uint8_t *)"authorization", 13,
						 (const uint8_t *)"secret", 6, HPACK_ENC_NEVER_INDEX),
				 HPACK_OK);
		assert_int_equal(out[at], 0x1f); /* 0001 + index 23 (15 + 8) */
		assert_int_equal(out[at + 1], 23 - 15);
	}
	assert_int_equal(m->e.t.count, 0);
	/* Even a pair in the static table is sent as a literal. */
	size_t at = pos;
	assert_int_equal(hpack_enc_field(&m->e, out, sizeof(out), &pos, (const uint8_t *)":method", 7,
					 (const uint8_t *)"GET", 3, HPACK_ENC_NEVER_INDEX),
			 HPACK_OK);
	assert_int_equal(out[at], 0x12);
	free(m);
}

/* ENOBUF leaves the output and the table as they were. */
static void test_encode_nobuf(void **state)
{
	(void)state;
	struct hpack_enc_mem *m = enc_new(LIMIT);
	uint8_t out[64];
	for (size_t cap = 0; cap < 20; cap++) {
		size_t pos = 0;
		int rc = hpack_enc_field(&m->e, out, cap, &pos, (const uint8_t *)"x-key", 5,
					 (const uint8_t *)"a value", 7, 0);
		if (rc == HPACK_OK) {
			assert_true(pos <= cap);
			assert_int_equal(m->e.t.count, 1);
			break;
		}
		assert_int_equal(rc, HPACK_ENOBUF);
		assert_int_equal(pos, 0);
		assert_int_equal(m->e.t.count, 0);
	}
	assert_int_equal(m->e.t.count, 1);
	free(m);
}

/* ---- tables: eviction, sizes ---- */

static void test_table_eviction(void **state)
{
	(void)state;
	struct hpack_dec_mem *m = dec_new(100);
	/* Three 40-byte entries (4 + 4 + 32) in a 100-byte table: the first
	 * is evicted by the third. */
	assert_int_equal(dec_hex(m, "40 04 6161 6161 04 3131 3131"), HPACK_OK);
	assert_int_equal(dec_hex(m, "40 04 6262 6262 04 3232 3232"), HPACK_OK);
	assert_int_equal(dec_hex(m, "40 04 6363 6363 04 3333 3333"), HPACK_OK);
	expect_table(&m->d.t, (struct hdr[]){ { "cccc", "3333" }, { "bbbb", "2222" } }, 2, 80);
	/* A literal named by the entry that its own insertion evicts (4.4):
	 * "bbbb" (index 63) with a 30-byte value: 80 + 66 > 100 evicts both. */
	uint8_t blk[128];
	size_t n = unhex("7f 00 1e", blk, sizeof(blk));
	memset(blk + n, 'x', 30);
	assert_int_equal(hpack_decode(&m->d, blk, n + 30, &m->l), HPACK_OK);
	assert_int_equal(hpack_table_check(&m->d.t), 0);
	expect_list(m, (struct hdr[]){ { "bbbb", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" } }, 1);
	expect_table(&m->d.t, (struct hdr[]){ { "bbbb", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" } }, 1, 66);
	/* An entry larger than the table (4 + 70 + 32 > 100) empties it and
	 * is not added; the field itself is kept in the list. */
	n = unhex("40 04 6464 6464 46", blk, sizeof(blk));
	memset(blk + n, 'y', 70);
	assert_int_equal(hpack_decode(&m->d, blk, n + 70, &m->l), HPACK_OK);
	assert_int_equal(hpack_table_check(&m->d.t), 0);
	assert_int_equal(m->l.n_fields, 1);
	assert_int_equal(m->l.fields[0].value_len, 70);
	expect_table(&m->d.t, NULL, 0, 0);
	free(m);
}

static void test_size_update(void **state)
{
	(void)state;
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, c3[0]), HPACK_OK);
	assert_int_equal(m->d.t.count, 1);
	/* Update to 0 then back to 4096 at the start of a block: empties it. */
	assert_int_equal(dec_hex(m, "20 3fe11f 82"), HPACK_OK);
	assert_int_equal(m->d.t.count, 0);
	assert_int_equal(m->d.t.max_size, 4096);
	/* Above the limit: 4097. */
	assert_int_equal(dec_hex(m, "3fe21f 82"), HPACK_ESIZE);
	assert_int_equal(hpack_err_h2_code(HPACK_ESIZE), HPACK_H2_COMPRESSION_ERROR);
	/* The decoder stays stopped after a connection error. */
	assert_int_equal(dec_hex(m, "82"), HPACK_EBROKEN);
	free(m);
	/* After a field. */
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "82 20"), HPACK_EUPDATE);
	free(m);
	/* Our limit lowered (SETTINGS acknowledged): the next block must
	 * start with an update within it. */
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, c3[0]), HPACK_OK);
	assert_int_equal(hpack_dec_set_limit(&m->d, 100), HPACK_OK);
	assert_int_equal(hpack_dec_set_limit(&m->d, LIMIT + 1), HPACK_ENOBUF);
	assert_int_equal(dec_hex(m, "82"), HPACK_EUPDATE);
	free(m);
	m = dec_new(LIMIT);
	assert_int_equal(hpack_dec_set_limit(&m->d, 100), HPACK_OK);
	assert_int_equal(dec_hex(m, "3f 45 82"), HPACK_OK); /* update to 100 */
	assert_int_equal(m->d.t.max_size, 100);
	assert_int_equal(dec_hex(m, "82"), HPACK_OK); /* owed once only */
	assert_int_equal(dec_hex(m, "3f 46 82"), HPACK_ESIZE); /* 101 > 100 */
	free(m);
	/* The encoder announces a change: lowered then raised, both (4.2). */
	struct hpack_enc_mem *e = enc_new(LIMIT);
	hpack_enc_set_peer_limit(&e->e, 0);
	hpack_enc_set_peer_limit(&e->e, 2048);
	uint8_t out[16];
	size_t pos = 0;
	assert_int_equal(hpack_enc_begin(&e->e, out, 2, &pos), HPACK_ENOBUF);
	assert_int_equal(pos, 0);
	assert_int_equal(hpack_enc_begin(&e->e, out, sizeof(out), &pos), HPACK_OK);
	uint8_t want[8];
	size_t n = unhex("20 3fe10f", want, sizeof(want));
	assert_int_equal(pos, n);
	assert_memory_equal(out, want, n);
	pos = 0;
	assert_int_equal(hpack_enc_begin(&e->e, out, sizeof(out), &pos), HPACK_OK);
	assert_int_equal(pos, 0); /* nothing owed now */
	free(e);
	/* An encoder limited below 4096 announces it before its first field. */
	e = enc_new(1000);
	pos = 0;
	assert_int_equal(hpack_enc_begin(&e->e, out, sizeof(out), &pos), HPACK_OK);
	n = unhex("3fc907", want, sizeof(want));
	assert_int_equal(pos, n);
	assert_memory_equal(out, want, n);
	free(e);
}

/* ---- errors ---- */

static void test_bad_index(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"80",          /* indexed 0 */
		"be",          /* 62 on an empty table */
		"ff 00",       /* 127 */
		"7f 00 01 61", /* literal, name index 63 on an empty table */
		"0f 2f 01 61", /* without indexing, name index 62 */
		"1f 2f 01 61", /* never indexed, name index 62 */
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++) {
		struct hpack_dec_mem *m = dec_new(LIMIT);
		assert_int_equal(dec_hex(m, bad[i]), HPACK_EINDEX);
		free(m);
	}
	/* 61 is the last static entry, 62 the first dynamic one. */
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "bd"), HPACK_OK);
	expect_list(m, (struct hdr[]){ { "www-authenticate", "" } }, 1);
	assert_int_equal(dec_hex(m, "40 01 61 01 62 be"), HPACK_OK);
	expect_list(m, (struct hdr[]){ { "a", "b" }, { "a", "b" } }, 2);
	assert_int_equal(dec_hex(m, "bf"), HPACK_EINDEX);
	free(m);
}

static void test_truncated(void **state)
{
	(void)state;
	/* Every proper prefix of a block that ends inside a representation
	 * is ETRUNC (not a crash, not a read past the end). */
	uint8_t raw[256];
	size_t n = unhex(c6[2], raw, sizeof(raw));
	assert_int_equal(n, 79);
	/* Cuts that end exactly between representations are valid blocks. */
	static const size_t bounds[] = { 0, 1, 2, 26, 27, 32 };
	for (size_t cut = 0; cut < n; cut++) {
		struct hpack_dec_mem *m = dec_new(256);
		assert_int_equal(dec_hex(m, c6[0]), HPACK_OK);
		assert_int_equal(dec_hex(m, c6[1]), HPACK_OK);
		uint8_t *c = malloc(cut ? cut : 1);
		memcpy(c, raw, cut);
		int rc = hpack_decode(&m->d, c, cut, &m->l);
		free(c);
		bool at_bound = false;
		for (size_t b = 0; b < SK_ARRAY_LEN(bounds); b++)
			at_bound |= bounds[b] == cut;
		if (at_bound)
			assert_int_equal(rc, HPACK_OK);
		else
			assert_int_equal(rc, HPACK_ETRUNC);
		free(m);
	}
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "40 05 6161"), HPACK_ETRUNC); /* name shorter than said */
	free(m);
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "40 7f"), HPACK_ETRUNC); /* length integer cut */
	free(m);
	m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, "40 01 61"), HPACK_ETRUNC); /* no value */
	free(m);
}

/* The list bounds: a block over them is still decoded to its end, the
 * table stays in step (the next block decodes right), HPACK_ELIST. */
static void test_list_bounds(void **state)
{
	(void)state;
	/* Count: 3 fields allowed, C.3.3 has 5. */
	struct hpack_dec_mem *m = dec_new(LIMIT);
	assert_int_equal(dec_hex(m, c3[0]), HPACK_OK);
	assert_int_equal(dec_hex(m, c3[1]), HPACK_OK);
	m->l.max_fields = 3;
	assert_int_equal(dec_hex(m, c3[2]), HPACK_ELIST);
	assert_int_equal(hpack_err_h2_code(HPACK_ELIST), 0);
	assert_int_equal(m->l.n_fields, 3);
	expect_table(&m->d.t,
		     (struct hdr[]){ { "custom-key", "custom-value" }, { "cache-control", "no-cache" },
				     { ":authority", "www.example.com" } },
		     3, 164);
	m->l.max_fields = 64;
	assert_int_equal(dec_hex(m, "be bf"), HPACK_OK); /* the entry the dropped field added */
	expect_list(m, (struct hdr[]){ { "custom-key", "custom-value" }, { "cache-control", "no-cache" } }, 2);
	assert_int_equal(m->d.over_list, 1);
	free(m);
	/* Size (RFC 9113 6.5.2): the C.5.3 list is 6 fields; allow 200. */
	m = dec_new(256);
	assert_int_equal(dec_hex(m, c5[0]), HPACK_OK);
	assert_int_equal(dec_hex(m, c5[1]), HPACK_OK);
	m->l.max_list = 200;
	assert_int_equal(dec_hex(m, c5[2]), HPACK_ELIST);
	assert_true(m->l.list_size <= 200);
	expect_table(&m->d.t,
		     (struct hdr[]){ { "set-cookie", COOKIE }, { "content-encoding", "gzip" }, { "date", DATE2 } },
		     3, 215);
	free(m);
	/* The strings' buffer: 10 bytes; the set-cookie field needs 66 and
	 * is decoded into the scratch buffer to be added to the table. */
	m = dec_new(256);
	assert_int_equal(dec_hex(m, c6[0]), HPACK_OK);
	assert_int_equal(dec_hex(m, c6[1]), HPACK_OK);
	m->l.buf_cap = 10;
	assert_int_equal(dec_hex(m, c6[2]), HPACK_ELIST);
	assert_true(m->l.buf_used <= 10);
	expect_table(&m->d.t,
		     (struct hdr[]){ { "set-cookie", COOKIE }, { "content-encoding", "gzip" }, { "date", DATE2 } },
		     3, 215);
	free(m);
	/* An HPACK bomb: one large entry referenced 1,000 times is refused
	 * by the list size after a handful, at no copy cost for the rest. */
	m = dec_new(LIMIT);
	uint8_t blk[4096];
	size_t n = 0;
	blk[n++] = 0x40;
	blk[n++] = 0x01;
	blk[n++] = 'x';
	n += hpack_int_encode(blk + n, sizeof(blk) - n, 3000, 7, 0);
	memset(blk + n, 'v', 3000);
	n += 3000;
	for (int i = 0; i < 1000; i++)
		blk[n++] = 0xbe;
	m->l.max_list = 16384;
	assert_int_equal(hpack_decode(&m->d, blk, n, &m->l), HPACK_ELIST);
	assert_int_equal(m->l.n_fields, 2); /* the strings' 8 KB buffer holds two copies */
	assert_true(m->l.list_size <= 16384);
	assert_int_equal(m->d.t.count, 1);
	free(m);
}

/* A field too large for both the list and the scratch buffer is only
 * checked: added to the table, it empties it (4.4), as the peer's does. */
static void test_field_over_scratch(void **state)
{
	(void)state;
	static uint8_t bytes[HPACK_TABLE_BYTES(100)], tmp[HPACK_DEC_TMP_BYTES(100)], buf[16];
	static struct hpack_entry ents[HPACK_TABLE_ENTRIES(100)];
	struct hpack_field fields[4];
	struct hpack_dec d;
	assert_int_equal(hpack_dec_init(&d, 100, bytes, sizeof(bytes), ents, SK_ARRAY_LEN(ents), tmp,
					sizeof(tmp)),
			 HPACK_OK);
	assert_int_equal(hpack_dec_init(&d, 100, bytes, sizeof(bytes), ents, SK_ARRAY_LEN(ents), tmp,
					sizeof(tmp) - 1),
			 HPACK_ENOBUF);
	assert_int_equal(hpack_dec_init(&d, 100, bytes, sizeof(bytes), ents, SK_ARRAY_LEN(ents), tmp,
					sizeof(tmp)),
			 HPACK_OK);
	struct hpack_list l = { .fields = fields, .max_fields = 4, .buf = buf, .buf_cap = sizeof(buf),
				.max_list = 1000 };
	uint8_t blk[512];
	size_t n = unhex("40 01 61 01 62", blk, sizeof(blk)); /* a: b, 34 bytes */
	assert_int_equal(hpack_decode(&d, blk, n, &l), HPACK_OK);
	assert_int_equal(d.t.count, 1);
	/* Name by index 62 ("a"), a Huffman value of 300 '0's (5 bits each). */
	blk[0] = 0x7e;
	size_t hl;
	uint8_t zeros[300];
	memset(zeros, '0', sizeof(zeros));
	uint8_t huff[200];
	hl = hpack_huff_encode(huff, sizeof(huff), zeros, sizeof(zeros));
	n = 1;
	n += hpack_int_encode(blk + n, sizeof(blk) - n, (uint32_t)hl, 7, 0x80);
	memcpy(blk + n, huff, hl);
	n += hl;
	blk[n++] = 0xbe; /* and then index 62, which must be gone */
	assert_int_equal(hpack_decode(&d, blk, n, &l), HPACK_EINDEX);
	assert_int_equal(hpack_table_check(&d.t), 0);
	assert_int_equal(d.t.count, 0);
	/* The same without the stale reference: the list is over (ELIST). */
	assert_int_equal(hpack_dec_init(&d, 100, bytes, sizeof(bytes), ents, SK_ARRAY_LEN(ents), tmp,
					sizeof(tmp)),
			 HPACK_OK);
	uint8_t first[8];
	size_t fn = unhex("40 01 61 01 62", first, sizeof(first));
	assert_int_equal(hpack_decode(&d, first, fn, &l), HPACK_OK);
	assert_int_equal(hpack_decode(&d, blk, n - 1, &l), HPACK_ELIST);
	assert_int_equal(l.n_fields, 0);
	assert_int_equal(d.t.count, 0);
	assert_int_equal(hpack_table_check(&d.t), 0);
}

static void test_err_strings(void **state)
{
	(void)state;
	for (int e = HPACK_ENOBUF; e <= HPACK_OK; e++)
		assert_string_not_equal(hpack_err_str(e), "unknown HPACK error");
	assert_string_equal(hpack_err_str(-100), "unknown HPACK error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_c1),
		cmocka_unit_test(test_int_roundtrip),
		cmocka_unit_test(test_int_overflow),
		cmocka_unit_test(test_huff_tables),
		cmocka_unit_test(test_huff_roundtrip),
		cmocka_unit_test(test_huff_errors),
		cmocka_unit_test(test_c2),
		cmocka_unit_test(test_c3_c4),
		cmocka_unit_test(test_c5_c6),
		cmocka_unit_test(test_encode_rfc),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_never_indexed),
		cmocka_unit_test(test_encode_nobuf),
		cmocka_unit_test(test_table_eviction),
		cmocka_unit_test(test_size_update),
		cmocka_unit_test(test_bad_index),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_list_bounds),
		cmocka_unit_test(test_field_over_scratch),
		cmocka_unit_test(test_err_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
