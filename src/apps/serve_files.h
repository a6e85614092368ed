/* serve_files.h — `skiff serve --root DIR`: every regular file under DIR,
 * read into memory once at start, looked up by path for the server. */
#ifndef APPS_SERVE_FILES_H
#define APPS_SERVE_FILES_H

#include <stddef.h>

#include "../http/server.h"

struct file_cache;

/* Load DIR.  NULL with a message in err on failure. */
struct file_cache *file_cache_load(const char *dir, char *err, size_t errlen);
/* http_lookup_fn for struct http_server_config (ctx: the cache). */
const struct http_file *file_cache_lookup(void *ctx, const char *path, size_t len);
size_t file_cache_count(const struct file_cache *fc);
size_t file_cache_bytes(const struct file_cache *fc);
void file_cache_free(struct file_cache *fc);

#endif
