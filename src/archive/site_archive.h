/* site_archive.h — skiff's site archive ("SKAR"): a read-only, indexed
 * image of a directory tree, packed on the host (cmd/site_pack.c, for
 * `skiff vm --root DIR`) and served by the unikernel straight out of the
 * memory QEMU loaded it into (PVH module, `-initrd`).  Bodies are slices of
 * the image: nothing is copied at request time.
 *
 * Layout (every integer little-endian; offsets are from the start of the
 * image; the image is exactly `total_len` bytes):
 *
 *   0   header, SAR_HEADER_LEN (64) bytes
 *         0  u32 magic        SAR_MAGIC ("SKAR")
 *         4  u32 version      SAR_VERSION (1)
 *         8  u32 count        entries, <= SAR_MAX_ENTRIES
 *        12  u32 entry_len    SAR_ENTRY_LEN (40): room to grow
 *        16  u64 names_off    the name table: names_len bytes of paths,
 *        24  u64 names_len      not NUL-terminated, referenced by entries
 *        32  u64 data_off     the data area: bodies, each starting at a
 *        40  u64 data_len       multiple of SAR_ALIGN from the image start
 *        48  u64 total_len    == the size of the image
 *        56  u64 reserved     0
 *   64  entry table: count entries of SAR_ENTRY_LEN bytes
 *         0  u32 name_off     into the name table
 *         4  u32 name_len     1..SAR_MAX_NAME
 *         8  u64 data_off     absolute; a multiple of SAR_ALIGN
 *        16  u64 data_len
 *        24  i64 mtime        Unix seconds (the file's st_mtime)
 *        32  u32 mode         st_mode permission bits (0777 mask)
 *        36  u32 reserved     0
 *   then the name table, then (aligned) the data area; the packer writes
 *   them in this order but the reader only requires what follows.
 *
 * What sar_open checks, treating the image as hostile (it came from a file
 * anyone could have edited): the header's fields and the three regions lie
 * inside the image, in the order header < entry table <= names <= data,
 * without overlapping; every name is inside the name table and is a clean
 * URL path (see sar_name_ok); entries are sorted by name, strictly
 * (bytewise), so lookups are a binary search and no path appears twice;
 * every body is inside the data area, aligned, and starts at or after the
 * end of the previous entry's body (bodies follow the entry order and never
 * overlap).  A check that fails names the entry and the field.  After
 * sar_open succeeds, no accessor can read outside the image.
 *
 * Freestanding (core set: compiled into the unikernel and fuzzed): no OS
 * headers, no allocation; it reads the caller's bytes and nothing else. */
#ifndef ARCHIVE_SITE_ARCHIVE_H
#define ARCHIVE_SITE_ARCHIVE_H

#include "../base/sk.h"
#include "../http/file.h"

#define SAR_MAGIC 0x52414b53u /* "SKAR" in memory order */
#define SAR_VERSION 1u
#define SAR_HEADER_LEN 64u
#define SAR_ENTRY_LEN 40u
#define SAR_ALIGN 64u            /* bodies start on a cache line */
#define SAR_MAX_ENTRIES 1000000u /* as `skiff serve --root`'s limit order */
#define SAR_MAX_NAME 1024u       /* a path, with its leading '/' */

/* A checked image.  Points into the caller's bytes, which must stay in
 * place (and unmodified) as long as the view is used. */
struct sar_view {
	const uint8_t *base;
	uint64_t size;
	uint32_t count;
	const uint8_t *entries; /* base + SAR_HEADER_LEN */
	const uint8_t *names;   /* base + names_off */
	uint64_t names_len;
	uint64_t data_off, data_len;
};

/* One entry, read out of the table (name and body point into the image). */
struct sar_entry {
	const char *name; /* "/a/b.html", not NUL-terminated */
	uint32_t name_len;
	const uint8_t *data;
	uint64_t len;
	int64_t mtime;
	uint32_t mode;
};

/* Check the whole image.  0, or -1 with a one-line reason in err
 * ("entry 3: data_off 4096 + data_len 99 is past the data area's end"). */
int sar_open(struct sar_view *v, const void *image, uint64_t size, char *err, size_t errlen);

/* Entry i (< v->count) of an opened view. */
void sar_entry_at(const struct sar_view *v, uint32_t i, struct sar_entry *e);

/* The index of the entry named exactly path[0, len), or -1. */
int64_t sar_find(const struct sar_view *v, const char *path, size_t len);

/* A name the archive may hold, and the only kind `skiff vm --root` packs:
 * starts with '/', does not end with one, no empty, "." or ".." segment
 * (so no "//"), no NUL, no control byte (< 0x20, 0x7f), at most
 * SAR_MAX_NAME bytes.  http/target.c hands lookups paths of the same shape,
 * so every entry is reachable and nothing else is. */
bool sar_name_ok(const char *name, size_t len);

/* A Content-Type for a file name, by its extension (case-insensitive);
 * "application/octet-stream" when unknown.  Shared by the unikernel and
 * `skiff serve --root`: http/mime.c's table. */
const char *sar_content_type(const char *name, size_t len);

/* A site served from an opened archive: the server's lookup over it.  The
 * struct http_file of each entry is built once (sar_site_init), in memory
 * the caller gives; lookups then binary-search the archive's sorted table
 * and return one of them, whose data points into the image.
 * Ownership: the caller keeps the image, `files` and the site itself alive
 * for as long as the server runs. */
struct sar_site {
	struct sar_view v;
	struct http_file *files;    /* v.count of them, files[i] for entry i */
	char key[SAR_MAX_NAME + 16]; /* scratch: a directory's ".../index.html" */
};

/* Bytes of `files` sar_site_init needs for v: the entries, then their
 * validators (http_file_prepare's arena, one allocation with them). */
uint64_t sar_site_mem(const struct sar_view *v);

void sar_site_init(struct sar_site *s, const struct sar_view *v, struct http_file *files);

/* http_lookup_fn (ctx: the struct sar_site): the file at path, or for a
 * path ending in '/' (a directory) its index.html; for a directory's own
 * path (a prefix of some file's, up to a '/') an is_dir entry, so the
 * files handler answers 301 / 403 (http/file_answer.h); NULL when absent.  Entries
 * carry the archive's mtimes and their .gz/.br siblings. */
const struct http_file *sar_site_lookup(void *ctx, const char *path, size_t len);

/* Little-endian field access, for the packer and the tests. */
static inline uint32_t sar_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t sar_get64(const uint8_t *p)
{
	return (uint64_t)sar_get32(p) | (uint64_t)sar_get32(p + 4) << 32;
}

static inline void sar_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static inline void sar_put64(uint8_t *p, uint64_t v)
{
	sar_put32(p, (uint32_t)v);
	sar_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
