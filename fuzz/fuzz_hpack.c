/* fuzz_hpack.c — the HPACK decoder (h2/hpack.h) on arbitrary blocks, and
 * the encoder on what it decoded.
 *
 * Input: [cfg][len][block][len][block]...  cfg's bits 0-1 pick our table
 * limit (0, 64, 256, 4096), bits 2-3 the list bounds (tight to loose),
 * bits 4-5 the encoder's Huffman mode; each block is `len` bytes (the last
 * one takes what is left).  Blocks go through one decoder, as on one
 * connection.  Checks:
 *  - no read outside each block's exact-size copy (ASan), no overflow (UBSan);
 *  - the table's invariants (hpack_table_check) after every block;
 *  - a kept list obeys its bounds: fields, 6.5.2 size, strings inside buf;
 *  - after a connection error the decoder refuses everything (EBROKEN);
 *  - every kept list, encoded by our encoder and decoded by a second
 *    decoder, comes back the same, never-indexed flags included, and the
 *    two tables (encoder's, second decoder's) agree;
 *  - each block read as a Huffman string: when it decodes, encoding the
 *    result gives back exactly the block (the code is canonical and the
 *    padding is fixed, so the coding is one to one).
 * Build: make build/fuzz/fuzz_hpack. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2/hpack.h"
#include "h2/hpack_mem_test.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define LIMIT_MAX HPACK_MEM_LIMIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void dec_setup(struct hpack_dec_mem *m, uint32_t limit, uint32_t max_fields,
		      uint32_t buf_cap, uint32_t max_list)
{
	CHECK(hpack_dec_mem_init(m, limit, max_fields, buf_cap, max_list) == HPACK_OK);
}

static void check_list(const struct hpack_dec_mem *m)
{
	const struct hpack_list *l = &m->l;
	CHECK(l->n_fields <= l->max_fields && l->list_size <= l->max_list && l->buf_used <= l->buf_cap);
	uint64_t size = 0;
	for (uint32_t i = 0; i < l->n_fields; i++) {
		const struct hpack_field *f = &l->fields[i];
		CHECK(f->name >= l->buf && f->name + f->name_len <= l->buf + l->buf_used);
		CHECK(f->value >= l->buf && f->value + f->value_len <= l->buf + l->buf_used);
		size += (uint64_t)f->name_len + f->value_len + 32;
	}
	CHECK(size == l->list_size);
}

/* Our encoder, then a fresh-bounded second decoder: the same list. */
static void reencode(const struct hpack_dec_mem *m, struct hpack_enc_mem *em,
		     struct hpack_dec_mem *d2)
{
	/* 16 KB of strings, Huffman-coded at worst 30 bits a byte, plus indexes. */
	static uint8_t out[131072];
	size_t pos = 0;
	CHECK(hpack_enc_begin(&em->e, out, sizeof(out), &pos) == HPACK_OK);
	for (uint32_t i = 0; i < m->l.n_fields; i++) {
		const struct hpack_field *f = &m->l.fields[i];
		unsigned flags = (f->flags & HPACK_FIELD_NEVER_INDEXED) ? HPACK_ENC_NEVER_INDEX : 0;
		CHECK(hpack_enc_field(&em->e, out, sizeof(out), &pos, f->name, f->name_len, f->value,
				      f->value_len, flags) == HPACK_OK);
	}
	CHECK(hpack_table_check(&em->e.t) == 0);
	uint8_t *c = malloc(pos ? pos : 1);
	if (!c)
		abort();
	memcpy(c, out, pos);
	int rc = hpack_decode(&d2->d, c, pos, &d2->l);
	free(c);
	CHECK(rc == HPACK_OK);
	CHECK(hpack_table_check(&d2->d.t) == 0);
	CHECK(d2->l.n_fields == m->l.n_fields);
	for (uint32_t i = 0; i < m->l.n_fields; i++) {
		const struct hpack_field *a = &m->l.fields[i], *b = &d2->l.fields[i];
		CHECK(a->name_len == b->name_len && a->value_len == b->value_len && a->flags == b->flags);
		CHECK(!a->name_len || !memcmp(a->name, b->name, a->name_len));
		CHECK(!a->value_len || !memcmp(a->value, b->value, a->value_len));
	}
	CHECK(em->e.t.size == d2->d.t.size && em->e.t.count == d2->d.t.count);
}

static void huff_roundtrip(const uint8_t *blk, size_t n)
{
	static uint8_t dec[65536], enc[65536];
	size_t dlen;
	if (n > sizeof(dec) / 2 || hpack_huff_decode(blk, n, dec, sizeof(dec), &dlen) != HPACK_OK)
		return;
	size_t elen = hpack_huff_encode(enc, sizeof(enc), dec, dlen);
	CHECK(elen == n && (!n || !memcmp(enc, blk, n)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hpack_dec_mem m, d2;
	static struct hpack_enc_mem em;
	static const uint32_t limits[] = { 0, 64, 256, LIMIT_MAX };
	if (size < 1)
		return 0;
	uint8_t cfg = data[0];
	uint32_t limit = limits[cfg & 3];
	switch ((cfg >> 2) & 3) {
	case 0: dec_setup(&m, limit, 4, 64, 200); break;
	case 1: dec_setup(&m, limit, 16, 1024, 2048); break;
	case 2: dec_setup(&m, limit, 128, 16384, 8192); break;
	default: dec_setup(&m, limit, 128, 16384, 1u << 20); break;
	}
	/* The second decoder's bounds fit anything the first one kept. */
	dec_setup(&d2, LIMIT_MAX, 128, 16384, 1u << 20);
	CHECK(hpack_enc_mem_init(&em, LIMIT_MAX) == HPACK_OK);
	em.e.huff = (uint8_t)((cfg >> 4) % 3);
	bool broken = false;
	size_t at = 1;
	while (at < size) {
		size_t n = data[at++];
		if (n > size - at)
			n = size - at;
		uint8_t *blk = malloc(n ? n : 1);
		if (!blk)
			abort();
		memcpy(blk, data + at, n);
		at += n;
		int rc = hpack_decode(&m.d, blk, n, &m.l);
		CHECK(hpack_table_check(&m.d.t) == 0);
		if (broken) {
			CHECK(rc == HPACK_EBROKEN);
		} else if (rc == HPACK_OK || rc == HPACK_ELIST) {
			check_list(&m);
			reencode(&m, &em, &d2);
		} else {
			CHECK(rc < 0 && hpack_err_h2_code(rc) == HPACK_H2_COMPRESSION_ERROR);
			broken = true;
		}
		huff_roundtrip(blk, n);
		free(blk);
	}
	return 0;
}
