/* hpack_table.c — the static table (RFC 7541 Appendix A) and the dynamic
 * table (2.3.2, 4): indexing, insertion with eviction, size changes, search.
 *
 * The dynamic table keeps its entries' bytes back to back in one caller
 * buffer, oldest first: eviction moves data_start forward, insertion appends
 * at data_end.  When the end of the buffer is reached, the live bytes move to
 * the front (compaction).  The buffer is twice the largest table size
 * (HPACK_TABLE_BYTES), so a compaction of at most `limit` bytes happens at
 * most once per `limit` bytes inserted: linear cost, whatever the peer
 * sends.  The entry descriptors are a ring. */
#include "hpack.h"

struct hpack_static {
	const char *name, *value;
	uint8_t name_len, value_len;
};
#define S(n, v) { n, v, sizeof(n) - 1, sizeof(v) - 1 }
static const struct hpack_static hpack_static_table[HPACK_STATIC_COUNT] = {
	S(":authority", ""),
	S(":method", "GET"),
	S(":method", "POST"),
	S(":path", "/"),
	S(":path", "/index.html"),
	S(":scheme", "http"),
	S(":scheme", "https"),
	S(":status", "200"),
	S(":status", "204"),
	S(":status", "206"),
	S(":status", "304"),
	S(":status", "400"),
	S(":status", "404"),
	S(":status", "500"),
	S("accept-charset", ""),
	S("accept-encoding", "gzip, deflate"),
	S("accept-language", ""),
	S("accept-ranges", ""),
	S("accept", ""),
	S("access-control-allow-origin", ""),
	S("age", ""),
	S("allow", ""),
	S("authorization", ""),
	S("cache-control", ""),
	S("content-disposition", ""),
	S("content-encoding", ""),
	S("content-language", ""),
	S("content-length", ""),
	S("content-location", ""),
	S("content-range", ""),
	S("content-type", ""),
	S("cookie", ""),
	S("date", ""),
	S("etag", ""),
	S("expect", ""),
	S("expires", ""),
	S("from", ""),
	S("host", ""),
	S("if-match", ""),
	S("if-modified-since", ""),
	S("if-none-match", ""),
	S("if-range", ""),
	S("if-unmodified-since", ""),
	S("last-modified", ""),
	S("link", ""),
	S("location", ""),
	S("max-forwards", ""),
	S("proxy-authenticate", ""),
	S("proxy-authorization", ""),
	S("range", ""),
	S("referer", ""),
	S("refresh", ""),
	S("retry-after", ""),
	S("server", ""),
	S("set-cookie", ""),
	S("strict-transport-security", ""),
	S("transfer-encoding", ""),
	S("user-agent", ""),
	S("vary", ""),
	S("via", ""),
	S("www-authenticate", ""),
};
#undef S

int hpack_table_init(struct hpack_table *t, uint32_t limit, uint8_t *bytes, uint32_t bytes_cap,
		     struct hpack_entry *ents, uint32_t ent_cap)
{
	sk_memset(t, 0, sizeof(*t));
	if (limit > HPACK_INT_MAX / 2 || bytes_cap < HPACK_TABLE_BYTES(limit) ||
	    ent_cap < HPACK_TABLE_ENTRIES(limit) || (limit && (!bytes || !ents)))
		return HPACK_ENOBUF;
	t->bytes = bytes;
	t->ents = ents;
	t->bytes_cap = bytes_cap;
	t->ent_cap = ent_cap;
	t->limit = limit;
	t->max_size = limit;
	return HPACK_OK;
}

/* Slot of the i-th newest entry, i = 0 the newest (i < count). */
static uint32_t slot_of(const struct hpack_table *t, uint32_t i)
{
	return (t->ent_first + t->count - 1 - i) % t->ent_cap;
}

bool hpack_table_get(const struct hpack_table *t, uint32_t index, const uint8_t **name,
		     uint32_t *name_len, const uint8_t **value, uint32_t *value_len)
{
	if (index == 0)
		return false;
	if (index <= HPACK_STATIC_COUNT) {
		const struct hpack_static *s = &hpack_static_table[index - 1];
		*name = (const uint8_t *)s->name;
		*name_len = s->name_len;
		*value = (const uint8_t *)s->value;
		*value_len = s->value_len;
		return true;
	}
	uint32_t i = index - HPACK_STATIC_COUNT - 1;
	if (i >= t->count)
		return false;
	const struct hpack_entry *e = &t->ents[slot_of(t, i)];
	*name = t->bytes + e->off;
	*name_len = e->name_len;
	*value = t->bytes + e->off + e->name_len;
	*value_len = e->value_len;
	return true;
}

static void evict_oldest(struct hpack_table *t)
{
	const struct hpack_entry *e = &t->ents[t->ent_first];
	uint32_t n = e->name_len + e->value_len;
	t->size -= n + HPACK_ENTRY_OVERHEAD;
	t->data_start += n;
	t->ent_first = (t->ent_first + 1) % t->ent_cap;
	t->count--;
	if (t->count == 0)
		t->data_start = t->data_end = 0;
}

static void evict_to(struct hpack_table *t, uint32_t size)
{
	while (t->size > size)
		evict_oldest(t);
}

void hpack_table_set_max(struct hpack_table *t, uint32_t max_size)
{
	if (max_size > t->limit)
		max_size = t->limit;
	t->max_size = max_size;
	evict_to(t, max_size);
}

void hpack_table_insert(struct hpack_table *t, const uint8_t *name, uint32_t name_len,
			const uint8_t *value, uint32_t value_len)
{
	uint64_t esize = (uint64_t)name_len + value_len + HPACK_ENTRY_OVERHEAD;
	/* 4.4: an entry larger than the table empties it and is not added. */
	if (esize > t->max_size) {
		evict_to(t, 0);
		return;
	}
	evict_to(t, t->max_size - (uint32_t)esize);
	uint32_t n = name_len + value_len;
	if (t->data_end + n > t->bytes_cap) {
		/* Compaction: live bytes + n <= max_size <= limit < bytes_cap. */
		uint32_t live = t->data_end - t->data_start;
		sk_memmove(t->bytes, t->bytes + t->data_start, live);
		for (uint32_t i = 0; i < t->count; i++)
			t->ents[(t->ent_first + i) % t->ent_cap].off -= t->data_start;
		t->data_start = 0;
		t->data_end = live;
	}
	/* count < ent_cap: count * 32 <= size - esize < max_size, and
	 * ent_cap > limit / 32. */
	struct hpack_entry *e = &t->ents[(t->ent_first + t->count) % t->ent_cap];
	e->off = t->data_end;
	e->name_len = name_len;
	e->value_len = value_len;
	if (name_len)
		sk_memcpy(t->bytes + t->data_end, name, name_len);
	if (value_len)
		sk_memcpy(t->bytes + t->data_end + name_len, value, value_len);
	t->data_end += n;
	t->size += (uint32_t)esize;
	t->count++;
}

static bool eq(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
	return alen == blen && (alen == 0 || sk_memcmp(a, b, alen) == 0);
}

uint32_t hpack_table_find(const struct hpack_table *t, const uint8_t *name, uint32_t name_len,
			  const uint8_t *value, uint32_t value_len, uint32_t *name_index)
{
	*name_index = 0;
	for (uint32_t i = 0; i < HPACK_STATIC_COUNT; i++) {
		const struct hpack_static *s = &hpack_static_table[i];
		if (!eq((const uint8_t *)s->name, s->name_len, name, name_len))
			continue;
		if (!*name_index)
			*name_index = i + 1;
		if (eq((const uint8_t *)s->value, s->value_len, value, value_len))
			return i + 1;
	}
	for (uint32_t i = 0; i < t->count; i++) {
		const struct hpack_entry *e = &t->ents[slot_of(t, i)];
		const uint8_t *p = t->bytes + e->off;
		if (!eq(p, e->name_len, name, name_len))
			continue;
		if (!*name_index)
			*name_index = HPACK_STATIC_COUNT + 1 + i;
		if (eq(p + e->name_len, e->value_len, value, value_len))
			return HPACK_STATIC_COUNT + 1 + i;
	}
	return 0;
}

int hpack_table_check(const struct hpack_table *t)
{
	SK_CHECK(t->max_size <= t->limit);
	SK_CHECK(t->size <= t->max_size);
	SK_CHECK(t->count <= t->ent_cap);
	SK_CHECK((uint64_t)t->count * HPACK_ENTRY_OVERHEAD <= t->size);
	SK_CHECK(t->count == 0 || t->ent_first < t->ent_cap);
	SK_CHECK(t->data_start <= t->data_end && t->data_end <= t->bytes_cap);
	uint64_t size = 0;
	uint32_t at = t->data_start;
	for (uint32_t i = 0; i < t->count; i++) {
		const struct hpack_entry *e = &t->ents[(t->ent_first + i) % t->ent_cap];
		SK_CHECK(e->off == at);
		at += e->name_len + e->value_len;
		size += (uint64_t)e->name_len + e->value_len + HPACK_ENTRY_OVERHEAD;
	}
	SK_CHECK(at == t->data_end);
	SK_CHECK(size == t->size);
	return 0;
}
