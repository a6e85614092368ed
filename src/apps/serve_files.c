/* serve_files.c — the file cache behind `skiff serve --root DIR`.
 *
 * Every regular file under DIR is read into memory at start, so serving a
 * file is a hash lookup and a slice pointing at its bytes: no open, stat or
 * read per request, and the server's writev sends head and body together.
 *
 * Nothing outside DIR can be served, by construction: the table holds only
 * what the walk found, and the walk
 *   - never follows a symbolic link (fstatat with AT_SYMLINK_NOFOLLOW skips
 *     them; files and directories are opened with O_NOFOLLOW relative to
 *     their parent's descriptor, so a link swapped in during the walk makes
 *     the open fail rather than lead elsewhere);
 *   - skips names starting with '.' (no ".git", no "..");
 * and the server looks paths up only after percent-decoding them and
 * refusing "." and ".." segments (http/target.c).
 * Limits: FC_MAX_FILES files, FC_MAX_BYTES bytes in total, FC_MAX_DEPTH
 * levels; beyond them skiff refuses to start rather than serve a part.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve_files.h"

#define FC_MAX_FILES 100000u
#define FC_MAX_BYTES (2ull << 30)
#define FC_MAX_DEPTH 32
#define FC_MAX_PATH 4096

struct fc_entry {
	char *path; /* "/a/b.html" */
	size_t plen;
	uint64_t hash;
	struct http_file file;
};

struct file_cache {
	struct fc_entry *e;
	size_t n, cap;
	uint64_t bytes;
	uint32_t *table; /* open addressing: index + 1, 0 = empty */
	size_t tmask;
	char key[FC_MAX_PATH + 16];
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static const char *content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{"html", "text/html; charset=utf-8"}, {"htm", "text/html; charset=utf-8"},
		{"css", "text/css"}, {"js", "text/javascript"}, {"mjs", "text/javascript"},
		{"json", "application/json"}, {"txt", "text/plain; charset=utf-8"},
		{"xml", "application/xml"}, {"svg", "image/svg+xml"}, {"png", "image/png"},
		{"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
		{"webp", "image/webp"}, {"ico", "image/x-icon"}, {"pdf", "application/pdf"},
		{"wasm", "application/wasm"}, {"woff", "font/woff"}, {"woff2", "font/woff2"},
		{"mp4", "video/mp4"}, {"webm", "video/webm"}, {"mp3", "audio/mpeg"},
		{"csv", "text/csv"}, {"md", "text/markdown"}, {"gz", "application/gzip"},
		{"zip", "application/zip"}, {"tar", "application/x-tar"},
	};
	const char *dot = strrchr(name, '.');
	if (dot && dot != name)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcasecmp(dot + 1, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

static int read_all(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int add_file(struct file_cache *fc, int dirfd, const char *name, const char *path,
		    char *err, size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return 0; /* vanished or changed type under us: not served */
	}
	if (fc->n >= FC_MAX_FILES || fc->bytes + (uint64_t)st.st_size > FC_MAX_BYTES) {
		snprintf(err, errlen, "--root holds more than %u files or %llu bytes", FC_MAX_FILES,
			 (unsigned long long)FC_MAX_BYTES);
		close(fd);
		return -1;
	}
	size_t len = (size_t)st.st_size;
	uint8_t *data = malloc(len ? len : 1);
	if (!data || read_all(fd, data, len) < 0) {
		snprintf(err, errlen, "cannot read %s: %s", path, data ? strerror(errno) : "no memory");
		free(data);
		close(fd);
		return -1;
	}
	close(fd);
	if (fc->n == fc->cap) {
		size_t cap = fc->cap ? 2 * fc->cap : 64;
		struct fc_entry *e = realloc(fc->e, cap * sizeof(*e));
		if (!e) {
			free(data);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		fc->e = e;
		fc->cap = cap;
	}
	struct fc_entry *e = &fc->e[fc->n++];
	e->path = strdup(path);
	e->plen = strlen(path);
	e->hash = fnv1a(path, e->plen);
	e->file = (struct http_file){.data = data, .len = len, .ctype = content_type(name)};
	fc->bytes += len;
	return e->path ? 0 : -1;
}

/* Walk the directory open as dirfd (consumed), whose URL path is `prefix`
 * ("" for the root). */
static int walk(struct file_cache *fc, int dirfd, const char *prefix, int depth, char *err,
		size_t errlen)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		snprintf(err, errlen, "cannot read directory %s/: %s", prefix, strerror(errno));
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[FC_MAX_PATH];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", prefix, de->d_name) >= sizeof(path))
			continue;
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			rc = add_file(fc, dirfd, de->d_name, path, err, errlen);
		} else if (S_ISDIR(st.st_mode) && depth < FC_MAX_DEPTH) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				rc = walk(fc, sub, path, depth + 1, err, errlen);
		}
		/* symbolic links, devices, sockets, FIFOs: never served */
	}
	closedir(d);
	return rc;
}

static const struct fc_entry *find(const struct file_cache *fc, const char *path, size_t len)
{
	uint64_t h = fnv1a(path, len);
	for (size_t i = h & fc->tmask;; i = (i + 1) & fc->tmask) {
		uint32_t k = fc->table[i];
		if (!k)
			return NULL;
		const struct fc_entry *e = &fc->e[k - 1];
		if (e->hash == h && e->plen == len && !memcmp(e->path, path, len))
			return e;
	}
}

const struct http_file *file_cache_lookup(void *ctx, const char *path, size_t len)
{
	struct file_cache *fc = ctx;
	if (len && path[len - 1] == '/') {
		/* A directory: its index.html. */
		if (len + 10 > sizeof(fc->key))
			return NULL;
		memcpy(fc->key, path, len);
		memcpy(fc->key + len, "index.html", 10);
		path = fc->key;
		len += 10;
	}
	const struct fc_entry *e = find(fc, path, len);
	return e ? &e->file : NULL;
}

struct file_cache *file_cache_load(const char *dir, char *err, size_t errlen)
{
	struct file_cache *fc = calloc(1, sizeof(*fc));
	if (!fc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "--root %s: %s", dir, strerror(errno));
		free(fc);
		return NULL;
	}
	if (walk(fc, fd, "", 0, err, errlen) < 0) {
		file_cache_free(fc);
		return NULL;
	}
	size_t tsize = 16;
	while (tsize < 2 * fc->n)
		tsize *= 2;
	fc->table = calloc(tsize, sizeof(*fc->table));
	if (!fc->table) {
		snprintf(err, errlen, "out of memory");
		file_cache_free(fc);
		return NULL;
	}
	fc->tmask = tsize - 1;
	for (size_t i = 0; i < fc->n; i++) {
		size_t j = fc->e[i].hash & fc->tmask;
		while (fc->table[j])
			j = (j + 1) & fc->tmask;
		fc->table[j] = (uint32_t)i + 1;
	}
	return fc;
}

size_t file_cache_count(const struct file_cache *fc)
{
	return fc->n;
}

size_t file_cache_bytes(const struct file_cache *fc)
{
	return (size_t)fc->bytes;
}

void file_cache_free(struct file_cache *fc)
{
	if (!fc)
		return;
	for (size_t i = 0; i < fc->n; i++) {
		free(fc->e[i].path);
		free((void *)fc->e[i].file.data);
	}
	free(fc->e);
	free(fc->table);
	free(fc);
}
