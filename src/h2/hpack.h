/* hpack.h — HPACK (RFC 7541), the header compression of HTTP/2: a decoder
 * and an encoder over caller-provided memory.  Sans I/O, no allocation, no
 * globals; freestanding (base/ only).
 *
 * Memory.  Each direction of a connection has one dynamic table; its bytes
 * and its entry descriptors are the caller's:
 *
 *   uint8_t            bytes[HPACK_TABLE_BYTES(limit)];
 *   struct hpack_entry ents[HPACK_TABLE_ENTRIES(limit)];
 *
 * where limit is the largest table size this side will ever allow (the
 * decoder: the SETTINGS_HEADER_TABLE_SIZE we advertise; the encoder: the most
 * we are willing to spend, whatever the peer advertises).  The decoder also
 * takes a scratch buffer of HPACK_DEC_TMP_BYTES(limit) bytes, where a field
 * that is not kept (the list is already over its bound) is decoded so that
 * the table still follows the peer's.
 *
 * Bounds.  A decoded header list is bounded by the caller's struct
 * hpack_list: at most max_fields fields, at most max_list bytes counted as
 * RFC 9113 6.5.2 does (name + value + 32 per field), and its strings must fit
 * buf.  A block over those bounds is still decoded to its end (the dynamic
 * table stays in step with the peer's encoder) but its extra fields are
 * dropped and hpack_decode returns HPACK_ELIST: a stream-level refusal (431,
 * or RST_STREAM), not a connection error.  Every other error leaves the
 * decoder out of step with the peer: the connection must end with
 * COMPRESSION_ERROR (hpack_err_h2_code), and the decoder refuses further
 * blocks (HPACK_EBROKEN).
 *
 * Call order (decoder): hpack_dec_init; per complete field block (HEADERS
 * plus its CONTINUATIONs, reassembled by the caller) hpack_decode; when our
 * SETTINGS_HEADER_TABLE_SIZE change is acknowledged, hpack_dec_set_limit.
 * Encoder: hpack_enc_init; when the peer's SETTINGS_HEADER_TABLE_SIZE
 * arrives, hpack_enc_set_peer_limit; per block hpack_enc_begin, then
 * hpack_enc_field per field.
 */
#ifndef H2_HPACK_H
#define H2_HPACK_H

#include "base/sk.h"

/* Errors: negative, one per way a block can be wrong (RFC 7541 sections
 * noted).  All but HPACK_ELIST and HPACK_ENOBUF are COMPRESSION_ERROR. */
enum hpack_err {
	HPACK_OK = 0,
	HPACK_ETRUNC = -1,   /* the block ends inside a representation or string */
	HPACK_EINT = -2,     /* an integer above HPACK_INT_MAX (5.1: overflow) */
	HPACK_EINDEX = -3,   /* index 0, or past the static and dynamic tables (2.3.3) */
	HPACK_EHUFF = -4,    /* Huffman: EOS coded, padding over 7 bits or not all ones (5.2) */
	HPACK_ESIZE = -5,    /* a table size update above our limit (6.3) */
	HPACK_EUPDATE = -6,  /* a size update after a field, or a required one missing (4.2) */
	HPACK_ELIST = -7,    /* the list is over the caller's bounds: decoded, fields dropped */
	HPACK_EBROKEN = -8,  /* the decoder met a connection error before */
	HPACK_ENOBUF = -9,   /* the encoder's output buffer is too small (nothing written) */
};

/* RFC 9113 error code COMPRESSION_ERROR (section 7). */
#define HPACK_H2_COMPRESSION_ERROR 0x9
/* The largest integer we accept (a length, an index, a size): 2^31 - 1 is
 * far above any bound we set, and keeps the arithmetic in 32 bits. */
#define HPACK_INT_MAX 0x7fffffffu
/* Per-entry overhead of the table size (4.1) and of the list size (RFC 9113 6.5.2). */
#define HPACK_ENTRY_OVERHEAD 32u
/* The default SETTINGS_HEADER_TABLE_SIZE (RFC 9113 6.5.2). */
#define HPACK_DEFAULT_TABLE_SIZE 4096u
/* Static table entries (Appendix A). */
#define HPACK_STATIC_COUNT 61u

/* Caller memory for a table of at most `limit` bytes (4.1 size).  Bytes are
 * twice the limit so that compaction (moving live entries to the front when
 * the end is reached) runs at most once per `limit` bytes inserted. */
#define HPACK_TABLE_BYTES(limit) (2u * (limit) + 1u)
#define HPACK_TABLE_ENTRIES(limit) ((limit) / HPACK_ENTRY_OVERHEAD + 1u)
#define HPACK_DEC_TMP_BYTES(limit) ((limit) + 1u)

/* One dynamic table entry: its name then its value, contiguous in bytes[]. */
struct hpack_entry {
	uint32_t off;       /* into hpack_table.bytes */
	uint32_t name_len;
	uint32_t value_len;
};

/* The dynamic table (2.3.2): a FIFO of entries, newest = index 62.
 * Invariants (hpack_table_check):
 *   size == sum over entries of name_len + value_len + 32, and size <= max_size
 *   max_size <= limit; count <= ent_cap; count * 32 <= size
 *   entries' bytes lie in [data_start, data_end) in order oldest -> newest,
 *   back to back; data_end <= bytes_cap
 *   ent_first < ent_cap (slot of the oldest entry) */
struct hpack_table {
	uint8_t *bytes;              /* (caller) bytes_cap bytes */
	struct hpack_entry *ents;    /* (caller) ent_cap slots, a ring */
	uint32_t bytes_cap, ent_cap;
	uint32_t limit;              /* the most max_size may be (our bound) */
	uint32_t max_size;           /* the current maximum (4.2), <= limit */
	uint32_t size;               /* 4.1 size of the entries */
	uint32_t count;
	uint32_t ent_first;
	uint32_t data_start, data_end;
};

/* A decoded field: name and value point into hpack_list.buf. */
#define HPACK_FIELD_NEVER_INDEXED 0x1 /* came as a never-indexed literal (6.2.3) */
struct hpack_field {
	const uint8_t *name, *value;
	uint32_t name_len, value_len;
	uint32_t flags;
};

/* Where hpack_decode puts a block's list.  The caller sets the first five
 * fields; hpack_decode sets the last three. */
struct hpack_list {
	struct hpack_field *fields;  /* (caller) max_fields slots */
	uint32_t max_fields;
	uint8_t *buf;                /* (caller) the strings, buf_cap bytes */
	uint32_t buf_cap;
	uint32_t max_list;           /* RFC 9113 6.5.2 size bound */
	uint32_t n_fields;           /* (out) kept fields */
	uint32_t list_size;          /* (out) their 6.5.2 size */
	uint32_t buf_used;           /* (out) bytes of buf used */
};

struct hpack_dec {
	struct hpack_table t;
	uint8_t *tmp;                /* (caller) scratch, tmp_cap >= limit + 1 */
	uint32_t tmp_cap;
	bool update_required;        /* our limit went below max_size: the next
	                                block must start with a size update */
	bool broken;                 /* a connection error was returned */
	/* Counters for the engine's metrics and defences. */
	uint64_t blocks, fields, over_list;
};

/* Huffman use of the encoder. */
enum hpack_huff_mode { HPACK_HUFF_AUTO = 0, HPACK_HUFF_NEVER, HPACK_HUFF_ALWAYS };

struct hpack_enc {
	struct hpack_table t;
	uint32_t pending_min;        /* the smallest max_size since the last block */
	bool pending;                /* a size update is owed at the next block */
	uint8_t huff;                /* enum hpack_huff_mode; AUTO: when shorter */
};

/* Flags of hpack_enc_field. */
#define HPACK_ENC_NO_INDEX 0x1    /* a literal that is not added to the table (6.2.2) */
#define HPACK_ENC_NEVER_INDEX 0x2 /* sensitive: never indexed, here or by any hop (6.2.3) */

/* ---- decoder ---- */

/* limit: our SETTINGS_HEADER_TABLE_SIZE; the table starts at that size (the
 * protocol's default is 4096: until our SETTINGS are acknowledged the peer
 * may use 4096, so start at 4096 and lower with hpack_dec_set_limit).
 * Returns HPACK_OK, or HPACK_ENOBUF if the memory is short of the macros. */
int hpack_dec_init(struct hpack_dec *d, uint32_t limit, uint8_t *bytes, uint32_t bytes_cap,
		   struct hpack_entry *ents, uint32_t ent_cap, uint8_t *tmp, uint32_t tmp_cap);
/* Our SETTINGS_HEADER_TABLE_SIZE, once the peer acknowledged it: at most
 * the limit given to init.  Lowering it below the table's max_size requires
 * the peer's next block to start with a size update (4.2). */
int hpack_dec_set_limit(struct hpack_dec *d, uint32_t limit);
/* Decode one complete field block into l (its out fields are reset first).
 * Returns HPACK_OK, HPACK_ELIST (list over bounds; the connection may go on),
 * or a connection error (hpack_err_h2_code). */
int hpack_decode(struct hpack_dec *d, const uint8_t *blk, size_t len, struct hpack_list *l);

/* ---- encoder ---- */

/* limit: the most table we keep, whatever the peer allows; the table starts
 * at min(limit, 4096) since the peer's default is 4096. */
int hpack_enc_init(struct hpack_enc *e, uint32_t limit, uint8_t *bytes, uint32_t bytes_cap,
		   struct hpack_entry *ents, uint32_t ent_cap);
/* The peer's SETTINGS_HEADER_TABLE_SIZE: our table becomes min(it, limit),
 * announced by a size update at the start of the next block. */
void hpack_enc_set_peer_limit(struct hpack_enc *e, uint32_t peer_size);
/* Start a block at out[*pos]: writes the owed size updates.  Returns
 * HPACK_OK or HPACK_ENOBUF (nothing written, nothing changed). */
int hpack_enc_begin(struct hpack_enc *e, uint8_t *out, size_t cap, size_t *pos);
/* Append one field at out[*pos] and advance *pos.  Indexed when the pair is
 * in a table, else a literal (with the name's index when there is one),
 * added to the table unless flags say not or it is larger than the table.
 * Returns HPACK_OK or HPACK_ENOBUF (nothing written, the table unchanged). */
int hpack_enc_field(struct hpack_enc *e, uint8_t *out, size_t cap, size_t *pos,
		    const uint8_t *name, size_t name_len, const uint8_t *value, size_t value_len,
		    unsigned flags);

/* ---- tables, shared ---- */

int hpack_table_init(struct hpack_table *t, uint32_t limit, uint8_t *bytes, uint32_t bytes_cap,
		     struct hpack_entry *ents, uint32_t ent_cap);
/* Index (1-based, static then dynamic) -> name and value.  Pointers into a
 * dynamic entry hold until the next insertion.  false: no such index. */
bool hpack_table_get(const struct hpack_table *t, uint32_t index, const uint8_t **name,
		     uint32_t *name_len, const uint8_t **value, uint32_t *value_len);
/* Add an entry (4.4): evict from the oldest until it fits; one larger than
 * max_size empties the table and is not added.  name/value must not point
 * into t's bytes. */
void hpack_table_insert(struct hpack_table *t, const uint8_t *name, uint32_t name_len,
			const uint8_t *value, uint32_t value_len);
/* A new max_size (<= limit): evicts to fit. */
void hpack_table_set_max(struct hpack_table *t, uint32_t max_size);
/* Search for name/value: returns the index of a full match, else 0; either
 * way *name_index is the first index with the same name (0: none). */
uint32_t hpack_table_find(const struct hpack_table *t, const uint8_t *name, uint32_t name_len,
			  const uint8_t *value, uint32_t value_len, uint32_t *name_index);
/* 0 if every invariant above holds, else -(the line of the broken one). */
int hpack_table_check(const struct hpack_table *t);

/* ---- primitives (5.1, 5.2), for the tests and the fuzzers ---- */

/* An integer with an n-bit prefix (1..8) whose high bits are `first`'s
 * (the representation's pattern).  Returns bytes written, 0 if cap is short. */
size_t hpack_int_encode(uint8_t *out, size_t cap, uint32_t v, unsigned prefix_bits, uint8_t first);
/* Returns HPACK_OK with *v and *pos advanced, HPACK_ETRUNC or HPACK_EINT. */
int hpack_int_decode(const uint8_t *in, size_t len, size_t *pos, unsigned prefix_bits, uint32_t *v);
/* Huffman (Appendix B).  Encoded length in bytes of src. */
size_t hpack_huff_encoded_len(const uint8_t *src, size_t len);
/* Returns bytes written, 0 if cap is short (and len > 0). */
size_t hpack_huff_encode(uint8_t *out, size_t cap, const uint8_t *src, size_t len);
/* Decode into out (cap bytes; out NULL: only check and measure).  Returns
 * HPACK_OK with *out_len, HPACK_EHUFF, or HPACK_ENOBUF (out too small). */
int hpack_huff_decode(const uint8_t *src, size_t len, uint8_t *out, size_t cap, size_t *out_len);

/* A name for an error (for logs and test messages), and its RFC 9113 code:
 * COMPRESSION_ERROR for the connection errors, 0 for HPACK_OK/ELIST/ENOBUF. */
const char *hpack_err_str(int err);
uint32_t hpack_err_h2_code(int err);

#endif
