/* hpack_mem_test.h — an HPACK decoder and encoder (h2/hpack.h) with their
 * memory for a table of up to HPACK_MEM_LIMIT bytes, and the list the
 * decoder fills: the setup written once for hpack_test.c and
 * fuzz/fuzz_hpack.c.
 *
 * Test code only.  No asserts of its own: each init returns hpack's code,
 * which the unit test checks with cmocka and the fuzzer with a trap. */
#ifndef H2_HPACK_MEM_TEST_H
#define H2_HPACK_MEM_TEST_H

#include "h2/hpack.h"

#define HPACK_MEM_LIMIT 4096u

struct hpack_dec_mem {
	struct hpack_dec d;
	uint8_t bytes[HPACK_TABLE_BYTES(HPACK_MEM_LIMIT)];
	struct hpack_entry ents[HPACK_TABLE_ENTRIES(HPACK_MEM_LIMIT)];
	uint8_t tmp[HPACK_DEC_TMP_BYTES(HPACK_MEM_LIMIT)];
	struct hpack_field fields[128];
	uint8_t buf[16384];
	struct hpack_list l; /* over fields and buf, within the bounds init gave */
};

struct hpack_enc_mem {
	struct hpack_enc e;
	uint8_t bytes[HPACK_TABLE_BYTES(HPACK_MEM_LIMIT)];
	struct hpack_entry ents[HPACK_TABLE_ENTRIES(HPACK_MEM_LIMIT)];
};

/* A decoder of table limit `limit` (<= HPACK_MEM_LIMIT) whose list keeps
 * up to max_fields fields (<= 128), buf_cap bytes of strings (<= 16384)
 * and a 6.5.2 size of max_list. */
static inline int hpack_dec_mem_init(struct hpack_dec_mem *m, uint32_t limit, uint32_t max_fields,
				     uint32_t buf_cap, uint32_t max_list)
{
	m->l.fields = m->fields;
	m->l.max_fields = max_fields;
	m->l.buf = m->buf;
	m->l.buf_cap = buf_cap;
	m->l.max_list = max_list;
	return hpack_dec_init(&m->d, limit, m->bytes, sizeof(m->bytes), m->ents,
			      SK_ARRAY_LEN(m->ents), m->tmp, sizeof(m->tmp));
}

static inline int hpack_enc_mem_init(struct hpack_enc_mem *m, uint32_t limit)
{
	return hpack_enc_init(&m->e, limit, m->bytes, sizeof(m->bytes), m->ents,
			      SK_ARRAY_LEN(m->ents));
}

#endif
