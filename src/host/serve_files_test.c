/* serve_files_test.c — `skiff serve --root`'s tree on a temporary
 * directory: small files copied, large ones mapped, directories answer
 * their index.html, what must not be served is absent; a reload swaps the
 * tree while the old one's bytes stay readable until the server is quiet,
 * and a failed reload keeps the old tree. */
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

#include "host/serve_files.h"

static char dir[64];

static void put(const char *rel, const void *data, size_t len)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/skiff-fc-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char p[256];
	snprintf(p, sizeof(p), "%s/sub", dir);
	return mkdir(p, 0755);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static uint8_t big[100000];

static void test_load_reload(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	put("index.html", "<h1>a</h1>", 10);
	put("sub/index.html", "sub", 3);
	put("sub/big.bin", big, sizeof(big));
	put(".hidden", "no", 2);
	char p[256];
	snprintf(p, sizeof(p), "%s/passwd", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);

	char err[256];
	struct file_cache *fc = file_cache_load(dir, err, sizeof(err));
	if (!fc)
		fail_msg("load: %s", err);
	struct file_cache_info fi;
	file_cache_info(fc, &fi);
	assert_int_equal(fi.files, 3);
	assert_int_equal(fi.maps, 1); /* only big.bin is mapped */
	assert_int_equal(fi.mapped, sizeof(big));
	assert_int_equal(fi.gen, 1);

	const struct http_file *f = file_cache_lookup(fc, "/", 1);
	assert_non_null(f);
	assert_memory_equal(f->data, "<h1>a</h1>", 10);
	assert_string_equal(f->ctype, "text/html; charset=utf-8");
	f = file_cache_lookup(fc, "/sub/", 5);
	assert_non_null(f);
	assert_int_equal(f->len, 3);
	const struct http_file *old_big = file_cache_lookup(fc, "/sub/big.bin", 12);
	assert_non_null(old_big);
	assert_memory_equal(old_big->data, big, sizeof(big));
	assert_null(file_cache_lookup(fc, "/.hidden", 8));
	assert_null(file_cache_lookup(fc, "/passwd", 7));
	/* A directory is an entry of its own (the server answers 301/403),
	 * with its validators and type for the files. */
	f = file_cache_lookup(fc, "/sub", 4);
	assert_non_null(f);
	assert_true(f->is_dir);
	assert_true(old_big->mtime > 0 && !old_big->is_dir);
	/* Prepared at load (the tree's validators' arena): Last-Modified
	 * from the file's time, the mtime-len tag. */
	char want[64];
	assert_non_null(old_big->last_modified);
	assert_int_equal(strlen(old_big->last_modified), 29);
	snprintf(want, sizeof(want), "\"%llx-%zx\"", (unsigned long long)old_big->mtime,
		 sizeof(big));
	assert_string_equal(old_big->etag, want);

	/* Replace big.bin (a new file: the old mapping keeps the old bytes)
	 * and add one; reload. */
	snprintf(p, sizeof(p), "%s/sub/big.bin", dir);
	assert_int_equal(unlink(p), 0);
	put("sub/big.bin", "small now", 9);
	put("new.txt", "new", 3);
	if (file_cache_reload(fc, err, sizeof(err)) < 0)
		fail_msg("reload: %s", err);
	file_cache_info(fc, &fi);
	assert_int_equal(fi.files, 4);
	assert_int_equal(fi.gen, 2);
	assert_int_equal(fi.retired_mapped, 1);
	f = file_cache_lookup(fc, "/sub/big.bin", 12);
	assert_int_equal(f->len, 9);
	assert_non_null(file_cache_lookup(fc, "/new.txt", 8));
	/* A response still being written reads the old tree's bytes. */
	assert_int_equal(old_big->len, sizeof(big));
	assert_memory_equal(old_big->data, big, sizeof(big));

	/* Output pending: nothing given back. */
	file_cache_quiesce(fc, false, false);
	file_cache_info(fc, &fi);
	assert_int_equal(fi.retired_mapped, 1);
	/* No output, connections left: the bytes go, the descriptor stays
	 * valid and empty (a deferred answer may still read it). */
	file_cache_quiesce(fc, true, false);
	file_cache_info(fc, &fi);
	assert_int_equal(fi.retired_mapped, 0);
	assert_int_equal(fi.retired_unmapped, 1);
	assert_int_equal(old_big->len, 0);
	/* No connections: all of it. */
	file_cache_quiesce(fc, true, true);
	file_cache_info(fc, &fi);
	assert_int_equal(fi.retired_unmapped, 0);

	/* A reload that cannot walk keeps the current tree. */
	char moved[80];
	snprintf(moved, sizeof(moved), "%s.moved", dir);
	assert_int_equal(rename(dir, moved), 0);
	assert_int_equal(file_cache_reload(fc, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--root"));
	assert_int_equal(rename(moved, dir), 0);
	file_cache_info(fc, &fi);
	assert_int_equal(fi.gen, 2);
	assert_non_null(file_cache_lookup(fc, "/new.txt", 8));
	file_cache_free(fc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_load_reload, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
