/* site_tree.h — the files a `--root DIR` serves, found by one walk that
 * `skiff serve --root` (serve_files.c, which maps them) and `skiff vm
 * --root` (site_pack.c, which packs them) share, so both serve the same set:
 *
 *   - regular files only; symbolic links are never followed (fstatat with
 *     AT_SYMLINK_NOFOLLOW skips them; directories are opened with
 *     O_NOFOLLOW relative to their parent's descriptor);
 *   - names starting with '.' are skipped (no ".git", no "..");
 *   - a path the archive could not hold (archive/site_archive.h sar_name_ok:
 *     control bytes, longer than 1024) is skipped;
 *   - at most SITE_MAX_FILES files and SITE_MAX_DEPTH levels: beyond them
 *     the walk fails rather than serve a part.
 * The walk holds one descriptor per directory level (at most
 * SITE_MAX_DEPTH + 1) and none per file.  The list is sorted by path
 * (bytewise), the archive's order. */
#ifndef APPS_SITE_TREE_H
#define APPS_SITE_TREE_H

#include <stddef.h>
#include <stdint.h>

#define SITE_MAX_FILES 1000000u
#define SITE_MAX_DEPTH 32

struct site_file {
	char *path;      /* "/a/b.html", malloc'd */
	size_t plen;
	uint64_t size;   /* st_size at the walk */
	int64_t mtime;   /* st_mtime, Unix seconds */
	uint32_t mode;   /* st_mode & 0777 */
};

struct site_list {
	struct site_file *f;
	size_t n, cap;
	uint64_t bytes;  /* sum of sizes */
	int rootfd;      /* DIR, open (O_DIRECTORY) until site_list_free */
};

/* Walk dir into l.  0, or -1 with a message in err (l is then empty). */
int site_list_load(struct site_list *l, const char *dir, char *err, size_t errlen);
void site_list_free(struct site_list *l);

/* Open the regular file at path ("/a/b") under l->rootfd read-only, one
 * component at a time with O_NOFOLLOW, so a link swapped in after the walk
 * makes the open fail instead of leading outside DIR.  A descriptor, or -1
 * with errno set. */
int site_open(const struct site_list *l, const char *path);

#endif
