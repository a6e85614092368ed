/* site_archive_test.c — the archive reader against hand-built images (one
 * valid, then each check broken on purpose), the name rules, the site's
 * lookup, and the packer's output read back (site_pack.c + site_tree.c on
 * a temporary directory). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "archive/site_archive.h"
#include "cmd/site_pack.h"

/* ---- a tiny builder: names must be given sorted ---- */

struct tfile {
	const char *name;
	const char *body;
};

static uint64_t up(uint64_t v)
{
	return (v + SAR_ALIGN - 1) & ~(uint64_t)(SAR_ALIGN - 1);
}

/* Build an image of n files into a malloc'd buffer; *size its length. */
static uint8_t *build(const struct tfile *f, uint32_t n, uint64_t *size)
{
	uint64_t names_off = SAR_HEADER_LEN + (uint64_t)n * SAR_ENTRY_LEN, names_len = 0;
	for (uint32_t i = 0; i < n; i++)
		names_len += strlen(f[i].name);
	uint64_t data_off = up(names_off + names_len), off = data_off;
	for (uint32_t i = 0; i < n; i++)
		off = up(off) + strlen(f[i].body);
	uint8_t *b = calloc(1, off + 1);
	assert_non_null(b);
	uint64_t at = data_off, nat = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = b + SAR_HEADER_LEN + i * SAR_ENTRY_LEN;
		size_t nl = strlen(f[i].name), bl = strlen(f[i].body);
		at = up(at);
		sar_put32(e, (uint32_t)nat);
		sar_put32(e + 4, (uint32_t)nl);
		sar_put64(e + 8, at);
		sar_put64(e + 16, bl);
		sar_put64(e + 24, 1700000000 + i);
		sar_put32(e + 32, 0644);
		memcpy(b + names_off + nat, f[i].name, nl);
		memcpy(b + at, f[i].body, bl);
		nat += nl;
		at += bl;
	}
	sar_put32(b, SAR_MAGIC);
	sar_put32(b + 4, SAR_VERSION);
	sar_put32(b + 8, n);
	sar_put32(b + 12, SAR_ENTRY_LEN);
	sar_put64(b + 16, names_off);
	sar_put64(b + 24, names_len);
	sar_put64(b + 32, data_off);
	sar_put64(b + 40, off - data_off);
	sar_put64(b + 48, off);
	*size = off;
	return b;
}

static const struct tfile three[] = {
	{"/a.css", "body{}"},
	{"/index.html", "<h1>home</h1>"},
	{"/sub/index.html", "<p>sub</p>"},
};

static uint8_t *three_image(uint64_t *size)
{
	return build(three, 3, size);
}

static void expect_bad(const uint8_t *b, uint64_t size, const char *needle)
{
	struct sar_view v;
	char err[200];
	assert_int_equal(sar_open(&v, b, size, err, sizeof(err)), -1);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

/* ---- tests ---- */

static void test_valid_and_lookup(void **state)
{
	(void)state;
	uint64_t size;
	uint8_t *b = three_image(&size);
	struct sar_view v;
	char err[200];
	assert_int_equal(sar_open(&v, b, size, err, sizeof(err)), 0);
	assert_int_equal(v.count, 3);
	assert_int_equal(sar_find(&v, "/index.html", 11), 1);
	assert_int_equal(sar_find(&v, "/a.css", 6), 0);
	assert_int_equal(sar_find(&v, "/sub/index.html", 15), 2);
	assert_int_equal(sar_find(&v, "/nope", 5), -1);
	assert_int_equal(sar_find(&v, "/index.htm", 10), -1);
	struct sar_entry e;
	sar_entry_at(&v, 1, &e);
	assert_int_equal(e.len, 13);
	assert_memory_equal(e.data, "<h1>home</h1>", 13);
	assert_int_equal(e.mtime, 1700000001);
	assert_int_equal(e.mode, 0644);
	assert_int_equal((uintptr_t)(e.data - b) % SAR_ALIGN, 0);

	struct sar_site s;
	/* The entries and their validators' arena: Last-Modified (30 bytes)
	 * and the mtime-len ETag of each of the three files. */
	uint64_t mem = sar_site_mem(&v);
	assert_int_equal(mem, 3 * sizeof(struct http_file) + 3 * 30 +
				      sizeof("\"6553f100-6\"") + sizeof("\"6553f101-d\"") +
				      sizeof("\"6553f102-a\""));
	struct http_file *files = malloc(mem);
	assert_non_null(files);
	sar_site_init(&s, &v, files);
	const struct http_file *f = sar_site_lookup(&s, "/", 1);
	assert_non_null(f);
	assert_ptr_equal(f->data, e.data); /* a slice of the image, not a copy */
	assert_string_equal(f->ctype, "text/html; charset=utf-8");
	f = sar_site_lookup(&s, "/sub/", 5);
	assert_non_null(f);
	assert_int_equal(f->len, 10);
	assert_int_equal(f->mtime, 1700000000 + 2); /* the archive's times */
	/* The directory itself: a directory entry (the server's 301/403). */
	f = sar_site_lookup(&s, "/sub", 4);
	assert_non_null(f);
	assert_true(f->is_dir);
	assert_null(sar_site_lookup(&s, "/su", 3));      /* a prefix, not at a '/' */
	assert_null(sar_site_lookup(&s, "/a.css/x", 8));
	assert_false(sar_site_lookup(&s, "/a.css", 6)->is_dir);
	f = sar_site_lookup(&s, "/a.css", 6);
	assert_non_null(f);
	assert_string_equal(f->ctype, "text/css; charset=utf-8");
	/* Prepared once: the validators every answer sends, in the arena. */
	assert_string_equal(f->last_modified, "Tue, 14 Nov 2023 22:13:20 GMT");
	assert_string_equal(f->etag, "\"6553f100-6\"");
	assert_true(f->etag > (const char *)(files + 3) && f->etag < (const char *)files + mem);
	free(files);
	free(b);
}

static void test_empty_archive(void **state)
{
	(void)state;
	uint64_t size;
	uint8_t *b = build(NULL, 0, &size);
	struct sar_view v;
	char err[200];
	assert_int_equal(sar_open(&v, b, size, err, sizeof(err)), 0);
	assert_int_equal(v.count, 0);
	assert_int_equal(sar_find(&v, "/", 1), -1);
	free(b);
}

static void test_truncated_everywhere(void **state)
{
	(void)state;
	uint64_t size;
	uint8_t *b = three_image(&size);
	struct sar_view v;
	char err[200];
	/* Every shorter length is refused (the header's total_len says more). */
	for (uint64_t n = 0; n < size; n++)
		assert_int_equal(sar_open(&v, b, n, err, sizeof(err)), -1);
	expect_bad(b, 10, "shorter than the 64-byte header");
	expect_bad(b, size - 1, "truncated");
	free(b);
}

static void test_header_lies(void **state)
{
	(void)state;
	uint64_t size;
	uint8_t *b = three_image(&size);
	uint8_t *c = malloc(size);
#define MUTATE(stmt, needle)                 \
	do {                                 \
		memcpy(c, b, size);          \
		stmt;                        \
		expect_bad(c, size, needle); \
	} while (0)
	MUTATE(c[0] ^= 1, "bad magic");
	MUTATE(sar_put32(c + 4, 2), "version 2");
	MUTATE(sar_put32(c + 12, 48), "entry size");
	MUTATE(sar_put64(c + 56, 1), "reserved header");
	MUTATE(sar_put64(c + 48, size + 1), "the header says");
	MUTATE(sar_put32(c + 8, 0xffffffffu), "more than 1000000");
	MUTATE(sar_put32(c + 8, 100000), "entry table runs past");
	MUTATE(sar_put64(c + 16, 64), "name table"); /* overlaps the entries */
	MUTATE(sar_put64(c + 24, UINT64_MAX - 10), "name table");
	MUTATE(sar_put64(c + 32, 0), "data area");
	MUTATE(sar_put64(c + 40, UINT64_MAX), "data area");
	MUTATE(sar_put64(c + 32, sar_get64(b + 32) + 1), "data area"); /* overlap check first */
	free(c);
	free(b);
}

static void test_entry_lies(void **state)
{
	(void)state;
	uint64_t size;
	uint8_t *b = three_image(&size);
	uint8_t *c = malloc(size);
	uint8_t *e0 = c + SAR_HEADER_LEN, *e1 = e0 + SAR_ENTRY_LEN, *e2 = e1 + SAR_ENTRY_LEN;
	MUTATE(sar_put32(e1, 0xfffffff0u), "entry 1: name is outside");
	MUTATE(sar_put32(e1 + 4, 0), "entry 1: name is outside");
	MUTATE(sar_put32(e2 + 4, 5000), "entry 2: name is outside");
	MUTATE(sar_put64(e1 + 8, sar_get64(e1 + 8) + 1), "entry 1: data_off is not");
	MUTATE(sar_put64(e1 + 8, UINT64_MAX & ~63ull), "entry 1: data_off");
	MUTATE(sar_put64(e1 + 16, size), "entry 1: data_off");
	MUTATE(sar_put64(e1 + 16, UINT64_MAX), "entry 1: data_off");
	/* Bodies that overlap: entry 1 starts inside entry 0's. */
	MUTATE(sar_put64(e1 + 8, sar_get64(e0 + 8)), "overlaps the previous body");
	MUTATE(sar_put64(e0 + 16, 200), "overlaps the previous body");
	MUTATE(sar_put32(e0 + 32, 0100644), "mode");
	MUTATE(sar_put32(e0 + 36, 1), "reserved field");
	/* Names: unsorted, repeated. */
	MUTATE((sar_put32(e1, sar_get32(e0)), sar_put32(e1 + 4, sar_get32(e0 + 4))), "not sorted");
	MUTATE((sar_put32(e0, sar_get32(e1)), sar_put32(e0 + 4, sar_get32(e1 + 4))), "not sorted");
	/* Names that are not clean paths, written into the name table. */
	uint64_t names = sar_get64(b + 16);
	MUTATE(memcpy(c + names, "/a/../", 6), "entry 0: name is not a clean path");
	MUTATE(c[names + 2] = 0, "entry 0: name is not a clean path");
	MUTATE(c[names] = 'x', "entry 0: name is not a clean path");
#undef MUTATE
	free(c);
	free(b);
}

static void test_names(void **state)
{
	(void)state;
	static const char *good[] = {"/a", "/index.html", "/a/b/c.txt", "/..a", "/a..", "/.a", "/a b"};
	static const char *bad[] = {"", "/", "a", "//a", "/a//b", "/a/", "/.", "/..", "/a/./b",
				    "/a/../b", "/a/..", "/a\x01", "/a\x7f"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!sar_name_ok(good[i], strlen(good[i])))
			fail_msg("'%s' should be a good name", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sar_name_ok(bad[i], strlen(bad[i])))
			fail_msg("'%s' should be refused", bad[i]);
	assert_false(sar_name_ok("/a\0b", 4));
	char longname[SAR_MAX_NAME + 2];
	memset(longname, 'x', sizeof(longname));
	longname[0] = '/';
	assert_true(sar_name_ok(longname, SAR_MAX_NAME));
	assert_false(sar_name_ok(longname, SAR_MAX_NAME + 1));
}

static void test_content_types(void **state)
{
	(void)state;
	assert_string_equal(sar_content_type("/x/a.PNG", 8), "image/png");
	assert_string_equal(sar_content_type("/x.y/README", 11), "application/octet-stream");
	assert_string_equal(sar_content_type("/.css", 5), "application/octet-stream");
	assert_string_equal(sar_content_type("/a.htm", 6), "text/html; charset=utf-8");
	assert_string_equal(sar_content_type("/a.jsx", 6), "application/octet-stream");
}

/* ---- the packer, read back ---- */

static void put(const char *dir, const char *rel, const void *data, size_t len)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void test_pack_roundtrip(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-sar-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[512];
	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.git", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	static uint8_t big[200000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	put(dir, "index.html", "<h1>x</h1>", 10);
	put(dir, "empty", "", 0);
	put(dir, "sub/big.bin", big, sizeof(big));
	put(dir, ".hidden", "secret", 6);
	put(dir, ".git/config", "secret", 6);
	snprintf(p, sizeof(p), "%s/link", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);

	char out[] = "/tmp/skiff-sar-out.XXXXXX";
	int fd = mkstemp(out);
	assert_true(fd >= 0);
	char err[256];
	struct site_pack_info info;
	if (site_pack(dir, fd, &info, err, sizeof(err)) < 0)
		fail_msg("site_pack: %s", err);
	close(fd);
	assert_int_equal(info.files, 3);
	assert_int_equal(info.bytes, 10 + sizeof(big));

	FILE *f = fopen(out, "rb");
	assert_non_null(f);
	uint8_t *img = malloc(info.size);
	assert_int_equal(fread(img, 1, info.size, f), info.size);
	assert_int_equal(fgetc(f), EOF);
	fclose(f);
	struct sar_view v;
	if (sar_open(&v, img, info.size, err, sizeof(err)) < 0)
		fail_msg("sar_open: %s", err);
	assert_int_equal(v.count, 3);
	struct sar_entry e;
	int64_t i = sar_find(&v, "/sub/big.bin", 12);
	assert_true(i >= 0);
	sar_entry_at(&v, (uint32_t)i, &e);
	assert_int_equal(e.len, sizeof(big));
	assert_memory_equal(e.data, big, sizeof(big));
	i = sar_find(&v, "/empty", 6);
	assert_true(i >= 0);
	sar_entry_at(&v, (uint32_t)i, &e);
	assert_int_equal(e.len, 0);
	assert_int_equal(sar_find(&v, "/.hidden", 8), -1);
	assert_int_equal(sar_find(&v, "/link", 5), -1);
	assert_int_equal(sar_find(&v, "/.git/config", 12), -1);
	free(img);
	unlink(out);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_and_lookup), cmocka_unit_test(test_empty_archive),
		cmocka_unit_test(test_truncated_everywhere), cmocka_unit_test(test_header_lies),
		cmocka_unit_test(test_entry_lies), cmocka_unit_test(test_names),
		cmocka_unit_test(test_content_types), cmocka_unit_test(test_pack_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
