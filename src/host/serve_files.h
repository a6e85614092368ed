/* serve_files.h — `skiff serve --root DIR`: every regular file under DIR
 * (host/site_tree.h's walk), mapped read-only (small ones copied), looked
 * up by path for the server; SIGHUP builds the tree again beside the old
 * one (serve_files.c says when the old one's memory is given back). */
#ifndef APPS_SERVE_FILES_H
#define APPS_SERVE_FILES_H

#include <stddef.h>

#include "../http/file.h"

struct file_cache;

/* Let the caches of this process keep up to `total` descriptors of
 * mapped files open for sendfile (http_file.fd; serve_files.c), counted
 * across every cache and tree not yet unmapped, at most `per_tree` in one
 * tree; 0 (the default): none, every body is sent from its mapping.  Call
 * before the first load. */
void file_cache_keep_fds(size_t total, size_t per_tree);
/* Load DIR.  NULL with a message in err on failure. */
struct file_cache *file_cache_load(const char *dir, char *err, size_t errlen);
/* http_lookup_fn for struct http_files (ctx: the cache): answers
 * from the current tree. */
const struct http_file *file_cache_lookup(void *ctx, const char *path, size_t len);
/* Walk DIR again into a new tree; on success it answers every lookup from
 * now on and the old one is retired.  -1 with a message in err (the old
 * tree stays current). */
int file_cache_reload(struct file_cache *fc, char *err, size_t errlen);
/* Give back what retired trees no connection can use any more:
 * no_output   no connection has unsent output or unprocessed input (the
 *             server's bufs_held is 0): their mappings and arenas;
 * no_conns    no connection at all: their descriptors too. */
void file_cache_quiesce(struct file_cache *fc, bool no_output, bool no_conns);

struct file_cache_info {
	uint64_t gen;       /* 1 + reloads that succeeded */
	size_t files;       /* in the current tree */
	uint64_t bytes;     /* their sizes */
	uint64_t mapped;    /* of which mapped (the rest copied) */
	size_t maps;
	size_t fds;         /* of the maps, descriptors kept for sendfile */
	size_t retired_mapped, retired_unmapped; /* older trees still held */
	uint64_t truncated_pages; /* pages read past a file cut short while
				   * mapped, served as zeros (serve_files.c) */
};
void file_cache_info(const struct file_cache *fc, struct file_cache_info *fi);
void file_cache_free(struct file_cache *fc);
/* The calling thread reads fc's mappings (serve --workers: each worker's
 * thread its own cache): a file truncated under it is patched, not fatal.
 * file_cache_load binds the thread that loads. */
void file_cache_bind_thread(struct file_cache *fc);

#endif
