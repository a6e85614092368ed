/* hpack.c — HPACK (RFC 7541): integers and strings (5), the decoder (3, 6)
 * with its bounds, the encoder, and the error names.  The tables are in
 * hpack_table.c, Huffman in hpack_huff.c. */
#include "hpack.h"

/* ---- primitives (5.1, 5.2) ---- */

size_t hpack_int_encode(uint8_t *out, size_t cap, uint32_t v, unsigned prefix_bits, uint8_t first)
{
	uint32_t maxp = (1u << prefix_bits) - 1u;
	first = (uint8_t)(first & ~maxp);
	if (cap < 1)
		return 0;
	if (v < maxp) {
		out[0] = (uint8_t)(first | v);
		return 1;
	}
	out[0] = (uint8_t)(first | maxp);
	v -= maxp;
	size_t n = 1;
	while (v >= 0x80) {
		if (n >= cap)
			return 0;
		out[n++] = (uint8_t)(0x80 | (v & 0x7f));
		v >>= 7;
	}
	if (n >= cap)
		return 0;
	out[n++] = (uint8_t)v;
	return n;
}

int hpack_int_decode(const uint8_t *in, size_t len, size_t *pos, unsigned prefix_bits, uint32_t *v)
{
	size_t p = *pos;
	if (p >= len)
		return HPACK_ETRUNC;
	uint32_t maxp = (1u << prefix_bits) - 1u;
	uint64_t acc = in[p++] & maxp;
	if (acc == maxp) {
		/* Continuation bytes, 7 bits each, least significant first.  A
		 * shift past 28 means a value (or zero padding) beyond
		 * HPACK_INT_MAX: refused, which also bounds the loop. */
		for (unsigned shift = 0;; shift += 7) {
			if (shift > 28)
				return HPACK_EINT;
			if (p >= len)
				return HPACK_ETRUNC;
			uint8_t b = in[p++];
			acc += (uint64_t)(b & 0x7f) << shift;
			if (acc > HPACK_INT_MAX)
				return HPACK_EINT;
			if (!(b & 0x80))
				break;
		}
	}
	*v = (uint32_t)acc;
	*pos = p;
	return HPACK_OK;
}

/* A string literal (5.2) at in[*pos] into dst (cap bytes; dst NULL: only
 * check it and measure it). */
static int str_decode(const uint8_t *in, size_t len, size_t *pos, uint8_t *dst, size_t cap,
		      uint32_t *out_len)
{
	size_t p = *pos;
	if (p >= len)
		return HPACK_ETRUNC;
	bool huff = in[p] & 0x80;
	uint32_t n;
	int rc = hpack_int_decode(in, len, &p, 7, &n);
	if (rc)
		return rc;
	if (n > len - p)
		return HPACK_ETRUNC;
	if (huff) {
		size_t o;
		rc = hpack_huff_decode(in + p, n, dst, cap, &o);
		if (rc)
			return rc;
		if (o > HPACK_INT_MAX)
			return HPACK_EINT;
		*out_len = (uint32_t)o;
	} else {
		if (dst) {
			if (n > cap)
				return HPACK_ENOBUF;
			if (n)
				sk_memcpy(dst, in + p, n);
		}
		*out_len = n;
	}
	*pos = p + n;
	return HPACK_OK;
}

/* ---- decoder ---- */

int hpack_dec_init(struct hpack_dec *d, uint32_t limit, uint8_t *bytes, uint32_t bytes_cap,
		   struct hpack_entry *ents, uint32_t ent_cap, uint8_t *tmp, uint32_t tmp_cap)
{
	sk_memset(d, 0, sizeof(*d));
	if (!tmp || tmp_cap < HPACK_DEC_TMP_BYTES(limit))
		return HPACK_ENOBUF;
	d->tmp = tmp;
	d->tmp_cap = tmp_cap;
	return hpack_table_init(&d->t, limit, bytes, bytes_cap, ents, ent_cap);
}

int hpack_dec_set_limit(struct hpack_dec *d, uint32_t limit)
{
	/* The memory was sized for the limit given to init: never above it. */
	if (limit > d->tmp_cap - 1u || HPACK_TABLE_BYTES(limit) > d->t.bytes_cap ||
	    HPACK_TABLE_ENTRIES(limit) > d->t.ent_cap)
		return HPACK_ENOBUF;
	d->t.limit = limit;
	if (d->t.max_size > limit) {
		/* The peer's encoder must now lower its table, and say so at
		 * the start of its next block (4.2); until then what it sends
		 * is decoded against the smaller table. */
		hpack_table_set_max(&d->t, limit);
		d->update_required = true;
	}
	return HPACK_OK;
}

enum { REP_INDEXED, REP_INCR, REP_NOINDEX, REP_NEVER };
/* Where a literal's strings go: the caller's list, the scratch buffer (a
 * field that is not kept but may be added to the table), or nowhere (a
 * field too large for either: checked and measured only). */
enum { DST_LIST, DST_TMP, DST_NONE };

static bool list_fits(const struct hpack_list *l, uint64_t fsize)
{
	return l->n_fields < l->max_fields && l->list_size + fsize <= l->max_list;
}

static void list_add(struct hpack_list *l, const uint8_t *base, uint32_t nlen, uint32_t vlen,
		     uint32_t flags)
{
	struct hpack_field *f = &l->fields[l->n_fields++];
	f->name = base;
	f->name_len = nlen;
	f->value = base + nlen;
	f->value_len = vlen;
	f->flags = flags;
	l->list_size += nlen + vlen + HPACK_ENTRY_OVERHEAD;
	l->buf_used += nlen + vlen;
}

static int decode_block(struct hpack_dec *d, const uint8_t *blk, size_t len, struct hpack_list *l)
{
	struct hpack_table *t = &d->t;
	size_t p = 0;
	bool over = false, any_field = false, updated = false;
	while (p < len) {
		uint8_t b = blk[p];
		uint32_t index;
		int rc;
		if ((b & 0xe0) == 0x20) {
			/* Dynamic table size update (6.3): only before the first
			 * field of a block (4.2), never above our limit. */
			if (any_field)
				return HPACK_EUPDATE;
			rc = hpack_int_decode(blk, len, &p, 5, &index);
			if (rc)
				return rc;
			if (index > t->limit)
				return HPACK_ESIZE;
			hpack_table_set_max(t, index);
			updated = true;
			continue;
		}
		if (d->update_required && !updated)
			return HPACK_EUPDATE;
		any_field = true;
		d->fields++;
		unsigned rep = (b & 0x80) ? REP_INDEXED : (b & 0x40) ? REP_INCR
			     : (b & 0x10) ? REP_NEVER : REP_NOINDEX;
		unsigned prefix = rep == REP_INDEXED ? 7 : rep == REP_INCR ? 6 : 4;
		rc = hpack_int_decode(blk, len, &p, prefix, &index);
		if (rc)
			return rc;
		const uint8_t *tn, *tv;
		uint32_t tnl, tvl;
		if (rep == REP_INDEXED) {
			/* 6.1; index 0 is refused by hpack_table_get. */
			if (!hpack_table_get(t, index, &tn, &tnl, &tv, &tvl))
				return HPACK_EINDEX;
			uint64_t fsize = (uint64_t)tnl + tvl + HPACK_ENTRY_OVERHEAD;
			if (!over && list_fits(l, fsize) && tnl + tvl <= l->buf_cap - l->buf_used) {
				uint8_t *dst = l->buf + l->buf_used;
				if (tnl)
					sk_memcpy(dst, tn, tnl);
				if (tvl)
					sk_memcpy(dst + tnl, tv, tvl);
				list_add(l, dst, tnl, tvl, 0);
			} else {
				over = true;
			}
			continue;
		}
		/* A literal (6.2): name by index or literal, then the value.
		 * Decoded into the list; if it does not fit there, the list is
		 * over and the field is decoded again into the scratch buffer;
		 * if not even there, only checked. */
		size_t start = p;
		unsigned where = over ? DST_TMP : DST_LIST;
		uint32_t nlen, vlen;
		uint8_t *dst;
		for (;;) {
			size_t cap;
			p = start;
			if (where == DST_LIST) {
				dst = l->buf + l->buf_used;
				cap = l->buf_cap - l->buf_used;
			} else if (where == DST_TMP) {
				dst = d->tmp;
				cap = d->tmp_cap;
			} else {
				dst = NULL;
				cap = 0;
			}
			rc = HPACK_OK;
			if (index) {
				if (!hpack_table_get(t, index, &tn, &tnl, &tv, &tvl))
					return HPACK_EINDEX;
				nlen = tnl;
				if (dst && tnl > cap)
					rc = HPACK_ENOBUF;
				else if (dst && tnl)
					sk_memcpy(dst, tn, tnl);
			} else {
				rc = str_decode(blk, len, &p, dst, cap, &nlen);
			}
			if (rc == HPACK_OK)
				rc = str_decode(blk, len, &p, dst ? dst + nlen : NULL, dst ? cap - nlen : 0,
						&vlen);
			if (rc != HPACK_ENOBUF)
				break;
			if (where == DST_LIST)
				over = true;
			where++;
		}
		if (rc)
			return rc;
		if (rep == REP_INCR) {
			/* 6.2.1.  A field that fits neither the list nor the
			 * scratch buffer (> limit) is larger than the table:
			 * adding it empties the table (4.4) and reads no bytes. */
			hpack_table_insert(t, dst, nlen, dst ? dst + nlen : NULL, vlen);
		}
		if (where == DST_LIST) {
			uint64_t fsize = (uint64_t)nlen + vlen + HPACK_ENTRY_OVERHEAD;
			if (list_fits(l, fsize))
				list_add(l, dst, nlen, vlen, rep == REP_NEVER ? HPACK_FIELD_NEVER_INDEXED : 0);
			else
				over = true;
		}
	}
	if (d->update_required) {
		if (!updated)
			return HPACK_EUPDATE;
		d->update_required = false;
	}
	return over ? HPACK_ELIST : HPACK_OK;
}

int hpack_decode(struct hpack_dec *d, const uint8_t *blk, size_t len, struct hpack_list *l)
{
	l->n_fields = l->list_size = l->buf_used = 0;
	if (d->broken)
		return HPACK_EBROKEN;
	d->blocks++;
	int rc = decode_block(d, blk, len, l);
	if (rc == HPACK_ELIST)
		d->over_list++;
	else if (rc != HPACK_OK)
		d->broken = true;
	return rc;
}

/* ---- encoder ---- */

int hpack_enc_init(struct hpack_enc *e, uint32_t limit, uint8_t *bytes, uint32_t bytes_cap,
		   struct hpack_entry *ents, uint32_t ent_cap)
{
	sk_memset(e, 0, sizeof(*e));
	int rc = hpack_table_init(&e->t, limit, bytes, bytes_cap, ents, ent_cap);
	if (rc)
		return rc;
	/* The peer's decoder starts at 4096 (RFC 9113 6.5.2): a smaller
	 * table of ours must be announced, or the two evict differently. */
	e->t.max_size = SK_MIN(limit, HPACK_DEFAULT_TABLE_SIZE);
	if (e->t.max_size != HPACK_DEFAULT_TABLE_SIZE) {
		e->pending = true;
		e->pending_min = e->t.max_size;
	}
	return HPACK_OK;
}

void hpack_enc_set_peer_limit(struct hpack_enc *e, uint32_t peer_size)
{
	uint32_t size = SK_MIN(peer_size, e->t.limit);
	if (size == e->t.max_size && !e->pending)
		return;
	/* Evicting at each change leaves what evicting to the smallest does,
	 * which is what the peer does on reading update(pending_min). */
	hpack_table_set_max(&e->t, size);
	e->pending_min = e->pending ? SK_MIN(e->pending_min, size) : size;
	e->pending = true;
}

int hpack_enc_begin(struct hpack_enc *e, uint8_t *out, size_t cap, size_t *pos)
{
	if (!e->pending)
		return HPACK_OK;
	size_t p = *pos, n;
	if (e->pending_min < e->t.max_size) {
		n = hpack_int_encode(out + p, cap - p, e->pending_min, 5, 0x20);
		if (!n)
			return HPACK_ENOBUF;
		p += n;
	}
	n = hpack_int_encode(out + p, cap - p, e->t.max_size, 5, 0x20);
	if (!n)
		return HPACK_ENOBUF;
	*pos = p + n;
	e->pending = false;
	return HPACK_OK;
}

static size_t str_encode(const struct hpack_enc *e, uint8_t *out, size_t cap, const uint8_t *s,
			 size_t len)
{
	size_t hlen = hpack_huff_encoded_len(s, len);
	bool huff = e->huff == HPACK_HUFF_ALWAYS || (e->huff == HPACK_HUFF_AUTO && hlen < len);
	size_t body = huff ? hlen : len;
	if (body > HPACK_INT_MAX)
		return 0;
	size_t n = hpack_int_encode(out, cap, (uint32_t)body, 7, huff ? 0x80 : 0);
	if (!n || body > cap - n)
		return 0;
	if (huff)
		hpack_huff_encode(out + n, cap - n, s, len);
	else if (len)
		sk_memcpy(out + n, s, len);
	return n + body;
}

int hpack_enc_field(struct hpack_enc *e, uint8_t *out, size_t cap, size_t *pos,
		    const uint8_t *name, size_t name_len, const uint8_t *value, size_t value_len,
		    unsigned flags)
{
	if (*pos > cap || name_len > HPACK_INT_MAX / 2 || value_len > HPACK_INT_MAX / 2)
		return HPACK_ENOBUF;
	uint8_t *o = out + *pos;
	size_t room = cap - *pos, n;
	uint32_t name_idx;
	uint32_t idx = hpack_table_find(&e->t, name, (uint32_t)name_len, value, (uint32_t)value_len,
				       &name_idx);
	bool never = flags & HPACK_ENC_NEVER_INDEX;
	if (idx && !never) {
		n = hpack_int_encode(o, room, idx, 7, 0x80);
		if (!n)
			return HPACK_ENOBUF;
		*pos += n;
		return HPACK_OK;
	}
	uint64_t esize = (uint64_t)name_len + value_len + HPACK_ENTRY_OVERHEAD;
	bool insert = !never && !(flags & HPACK_ENC_NO_INDEX) && esize <= e->t.max_size;
	uint8_t first = never ? 0x10 : insert ? 0x40 : 0x00;
	unsigned prefix = insert ? 6 : 4;
	n = hpack_int_encode(o, room, name_idx, prefix, first);
	if (!n)
		return HPACK_ENOBUF;
	size_t m;
	if (!name_idx) {
		m = str_encode(e, o + n, room - n, name, name_len);
		if (!m)
			return HPACK_ENOBUF;
		n += m;
	}
	m = str_encode(e, o + n, room - n, value, value_len);
	if (!m)
		return HPACK_ENOBUF;
	n += m;
	/* Only now that the bytes are written: a refused field leaves the
	 * table as the peer's. */
	if (insert)
		hpack_table_insert(&e->t, name, (uint32_t)name_len, value, (uint32_t)value_len);
	*pos += n;
	return HPACK_OK;
}

/* ---- errors ---- */

const char *hpack_err_str(int err)
{
	switch (err) {
	case HPACK_OK: return "ok";
	case HPACK_ETRUNC: return "block ends inside a field";
	case HPACK_EINT: return "integer overflow";
	case HPACK_EINDEX: return "bad index";
	case HPACK_EHUFF: return "bad Huffman string (EOS or padding)";
	case HPACK_ESIZE: return "table size update above the limit";
	case HPACK_EUPDATE: return "table size update misplaced or missing";
	case HPACK_ELIST: return "header list over its bounds";
	case HPACK_EBROKEN: return "decoder stopped by an earlier error";
	case HPACK_ENOBUF: return "buffer too small";
	default: return "unknown HPACK error";
	}
}

uint32_t hpack_err_h2_code(int err)
{
	switch (err) {
	case HPACK_OK:
	case HPACK_ELIST:
	case HPACK_ENOBUF:
		return 0;
	default:
		return HPACK_H2_COMPRESSION_ERROR;
	}
}
