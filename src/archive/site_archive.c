/* site_archive.c — the reader of skiff's site archive; the layout and what
 * is checked are in site_archive.h.  Call order: sar_open once (the whole
 * image is checked there, so the per-request paths do no bounds checks of
 * their own), then sar_find / sar_entry_at per request. */
#include "site_archive.h"

#include "../http/file_answer.h"
#include "../http/mime.h"

/* ---- the error line, without libc ---- */

struct msg {
	char *buf;
	size_t len, cap;
};

static void m_str(struct msg *m, const char *s)
{
	while (*s && m->len + 1 < m->cap)
		m->buf[m->len++] = *s++;
	if (m->cap)
		m->buf[m->len] = 0;
}

static void m_num(struct msg *m, uint64_t v)
{
	char t[21];
	size_t n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char s[22];
	for (size_t i = 0; i < n; i++)
		s[i] = t[n - 1 - i];
	s[n] = 0;
	m_str(m, s);
}

/* "entry N: " prefix, then the text. */
static int fail_entry(struct msg *m, uint32_t i, const char *what)
{
	m_str(m, "entry ");
	m_num(m, i);
	m_str(m, ": ");
	m_str(m, what);
	return -1;
}

static int fail(struct msg *m, const char *what)
{
	m_str(m, what);
	return -1;
}

/* ---- names ---- */

bool sar_name_ok(const char *name, size_t len)
{
	if (len < 2 || len > SAR_MAX_NAME || name[0] != '/' || name[len - 1] == '/')
		return false;
	size_t seg = 1; /* start of the current segment */
	for (size_t i = 1; i <= len; i++) {
		if (i == len || name[i] == '/') {
			size_t n = i - seg;
			if (n == 0)
				return false; /* "//" */
			if (name[seg] == '.' && (n == 1 || (n == 2 && name[seg + 1] == '.')))
				return false; /* "." or ".." */
			seg = i + 1;
			continue;
		}
		uint8_t c = (uint8_t)name[i];
		if (c < 0x20 || c == 0x7f)
			return false; /* NUL and the other control bytes */
	}
	return true;
}

/* a < b bytewise, the shorter first on a common prefix. */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n ? sk_memcmp(a, b, n) : 0;
	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

/* ---- open ---- */

int sar_open(struct sar_view *v, const void *image, uint64_t size, char *err, size_t errlen)
{
	struct msg m = {err, 0, errlen};
	if (errlen)
		err[0] = 0;
	const uint8_t *b = image;
	if (!b || size < SAR_HEADER_LEN)
		return fail(&m, "shorter than the 64-byte header (truncated?)");
	if (sar_get32(b) != SAR_MAGIC)
		return fail(&m, "bad magic: not a skiff site archive");
	if (sar_get32(b + 4) != SAR_VERSION) {
		m_str(&m, "version ");
		m_num(&m, sar_get32(b + 4));
		return fail(&m, ", this build reads version 1");
	}
	uint32_t count = sar_get32(b + 8);
	uint64_t names_off = sar_get64(b + 16), names_len = sar_get64(b + 24);
	uint64_t data_off = sar_get64(b + 32), data_len = sar_get64(b + 40);
	uint64_t total = sar_get64(b + 48);
	if (sar_get32(b + 12) != SAR_ENTRY_LEN)
		return fail(&m, "entry size is not 40");
	if (sar_get64(b + 56))
		return fail(&m, "reserved header field is not 0");
	if (total != size) {
		m_str(&m, "the header says ");
		m_num(&m, total);
		m_str(&m, " bytes, the image has ");
		m_num(&m, size);
		return fail(&m, " (truncated or padded)");
	}
	if (count > SAR_MAX_ENTRIES)
		return fail(&m, "more than 1000000 entries");
	/* The regions, in order, each inside the image.  Every sum is checked
	 * against size first, so none can wrap. */
	uint64_t table_end = SAR_HEADER_LEN + (uint64_t)count * SAR_ENTRY_LEN;
	if (table_end > size)
		return fail(&m, "the entry table runs past the end (truncated?)");
	if (names_off < table_end || names_off > size || names_len > size - names_off)
		return fail(&m, "the name table is outside the image or overlaps the entry table");
	if (data_off < names_off + names_len || data_off > size || data_len > size - data_off)
		return fail(&m, "the data area is outside the image or overlaps the name table");
	if (data_off % SAR_ALIGN)
		return fail(&m, "the data area is not 64-byte aligned");

	*v = (struct sar_view){
		.base = b, .size = size, .count = count, .entries = b + SAR_HEADER_LEN,
		.names = b + names_off, .names_len = names_len, .data_off = data_off,
		.data_len = data_len,
	};
	const char *prev = NULL;
	uint32_t prev_len = 0;
	uint64_t data_end = data_off + data_len, next_body = data_off;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = v->entries + (uint64_t)i * SAR_ENTRY_LEN;
		uint32_t no = sar_get32(e), nl = sar_get32(e + 4);
		uint64_t doff = sar_get64(e + 8), dlen = sar_get64(e + 16);
		if (sar_get32(e + 32) & ~0777u)
			return fail_entry(&m, i, "mode has bits beyond 0777");
		if (sar_get32(e + 36))
			return fail_entry(&m, i, "reserved field is not 0");
		if (nl == 0 || nl > SAR_MAX_NAME || no > names_len || nl > names_len - no)
			return fail_entry(&m, i, "name is outside the name table");
		const char *name = (const char *)v->names + no;
		if (!sar_name_ok(name, nl))
			return fail_entry(&m, i, "name is not a clean path (want /a/b: no '..', '.', "
						 "'//', NUL or control bytes, no trailing '/')");
		if (prev && name_cmp(prev, prev_len, name, nl) >= 0)
			return fail_entry(&m, i, "names are not sorted (or one is repeated)");
		if (doff % SAR_ALIGN)
			return fail_entry(&m, i, "data_off is not 64-byte aligned");
		if (doff < next_body || doff > data_end || dlen > data_end - doff) {
			m_str(&m, "entry ");
			m_num(&m, i);
			m_str(&m, ": data_off ");
			m_num(&m, doff);
			m_str(&m, " + data_len ");
			m_num(&m, dlen);
			return fail(&m, " is outside the data area or overlaps the previous body");
		}
		next_body = doff + dlen;
		prev = name;
		prev_len = nl;
	}
	return 0;
}

void sar_entry_at(const struct sar_view *v, uint32_t i, struct sar_entry *out)
{
	const uint8_t *e = v->entries + (uint64_t)i * SAR_ENTRY_LEN;
	*out = (struct sar_entry){
		.name = (const char *)v->names + sar_get32(e),
		.name_len = sar_get32(e + 4),
		.data = v->base + sar_get64(e + 8),
		.len = sar_get64(e + 16),
		.mtime = (int64_t)sar_get64(e + 24),
		.mode = sar_get32(e + 32),
	};
}

int64_t sar_find(const struct sar_view *v, const char *path, size_t len)
{
	uint32_t lo = 0, hi = v->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = v->entries + (uint64_t)mid * SAR_ENTRY_LEN;
		int c = name_cmp((const char *)v->names + sar_get32(e), sar_get32(e + 4), path, len);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* ---- the site ---- */

/* Entry i of v as the site serves it, before its validators. */
static struct http_file site_file(const struct sar_view *v, uint32_t i)
{
	struct sar_entry e;
	sar_entry_at(v, i, &e);
	return (struct http_file){
		.data = e.data,
		.len = (size_t)e.len,
		.ctype = sar_content_type(e.name, e.name_len),
		.mtime = e.mtime > 0 ? e.mtime : 0, /* Last-Modified, the ETag */
		/* The archive is the view's for as long as the site is
		 * served (the unikernel's: the life of the guest). */
		.pinned = true,
	};
}

uint64_t sar_site_mem(const struct sar_view *v)
{
	uint64_t n = (uint64_t)v->count * sizeof(struct http_file);
	for (uint32_t i = 0; i < v->count; i++) {
		struct http_file f = site_file(v, i);
		n += http_file_prepare_len(&f);
	}
	return n;
}

void sar_site_init(struct sar_site *s, const struct sar_view *v, struct http_file *files)
{
	s->v = *v;
	s->files = files;
	char *vals = (char *)(files + v->count); /* sar_site_mem: right after the entries */
	for (uint32_t i = 0; i < v->count; i++) {
		files[i] = site_file(v, i);
		vals += http_file_prepare(&files[i], vals); /* its validators, once */
	}
	/* "x.gz" / "x.br" beside "x": x's precompressed siblings. */
	for (uint32_t i = 0; i < v->count; i++) {
		struct sar_entry e;
		sar_entry_at(v, i, &e);
		size_t n = e.name_len;
		if (n <= 3 || e.name[n - 3] != '.' || !((e.name[n - 2] == 'g' && e.name[n - 1] == 'z') ||
							 (e.name[n - 2] == 'b' && e.name[n - 1] == 'r')))
			continue;
		int64_t b = sar_find(v, e.name, n - 3);
		if (b < 0)
			continue;
		if (e.name[n - 2] == 'g')
			files[b].gz = &files[i];
		else
			files[b].br = &files[i];
	}
}

/* The archive holds files only; a directory is a name some file's path
 * continues with '/'.  Names are sorted bytewise, so the files under
 * "path/" are a run starting at the first name >= "path/". */
static bool is_dir(const struct sar_view *v, char *key, const char *path, size_t len)
{
	if (len + 1 > SAR_MAX_NAME + 16)
		return false;
	sk_memcpy(key, path, len);
	key[len] = '/';
	uint32_t lo = 0, hi = v->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = v->entries + (uint64_t)mid * SAR_ENTRY_LEN;
		if (name_cmp((const char *)v->names + sar_get32(e), sar_get32(e + 4), key, len + 1) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == v->count)
		return false;
	const uint8_t *e = v->entries + (uint64_t)lo * SAR_ENTRY_LEN;
	return sar_get32(e + 4) > len + 1 &&
	       sk_memcmp((const char *)v->names + sar_get32(e), key, len + 1) == 0;
}

static const struct http_file sar_dir = {.ctype = HTTP_MIME_DEFAULT, .is_dir = true};

const struct http_file *sar_site_lookup(void *ctx, const char *path, size_t len)
{
	struct sar_site *s = ctx;
	if (len && path[len - 1] == '/') {
		/* A directory: its index.html. */
		if (len + 10 > sizeof(s->key))
			return NULL;
		sk_memcpy(s->key, path, len);
		sk_memcpy(s->key + len, "index.html", 10);
		path = s->key;
		len += 10;
	}
	int64_t i = sar_find(&s->v, path, len);
	if (i >= 0)
		return &s->files[i];
	return is_dir(&s->v, s->key, path, len) ? &sar_dir : NULL;
}

/* ---- content types ---- */

const char *sar_content_type(const char *name, size_t len)
{
	return http_mime_type(name, len);
}
