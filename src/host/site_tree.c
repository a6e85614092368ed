/* site_tree.c — the walk of a --root DIR; the rules are in site_tree.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../archive/site_archive.h"
#include "site_tree.h"

static int add(struct site_list *l, const char *path, const struct stat *st, char *err,
	       size_t errlen)
{
	if (l->n >= SITE_MAX_FILES) {
		snprintf(err, errlen, "--root holds more than %u files", SITE_MAX_FILES);
		return -1;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct site_file *f = realloc(l->f, cap * sizeof(*f));
		if (!f) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		l->f = f;
		l->cap = cap;
	}
	struct site_file *f = &l->f[l->n];
	f->plen = strlen(path);
	f->path = strdup(path);
	if (!f->path) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	f->size = (uint64_t)st->st_size;
	f->mtime = (int64_t)st->st_mtime;
	f->mode = (uint32_t)st->st_mode & 0777u;
	l->bytes += f->size;
	l->n++;
	return 0;
}

/* Walk the directory open as dirfd (consumed), whose URL path is prefix
 * ("" for the root). */
static int walk(struct site_list *l, int dirfd, const char *prefix, int depth, char *err,
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
		char path[SAR_MAX_NAME + 1];
		int n = snprintf(path, sizeof(path), "%s/%s", prefix, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue; /* too long for a URL path we serve */
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			if (sar_name_ok(path, (size_t)n))
				rc = add(l, path, &st, err, errlen);
		} else if (S_ISDIR(st.st_mode) && depth < SITE_MAX_DEPTH) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				rc = walk(l, sub, path, depth + 1, err, errlen);
		}
		/* symbolic links, devices, sockets, FIFOs: never served */
	}
	closedir(d);
	return rc;
}

static int by_path(const void *a, const void *b)
{
	/* Paths hold no NUL: strcmp is the archive's bytewise order. */
	return strcmp(((const struct site_file *)a)->path, ((const struct site_file *)b)->path);
}

int site_list_load(struct site_list *l, const char *dir, char *err, size_t errlen)
{
	*l = (struct site_list){.rootfd = -1};
	l->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->rootfd < 0) {
		snprintf(err, errlen, "--root %s: %s", dir, strerror(errno));
		return -1;
	}
	int fd = dup(l->rootfd);
	if (fd < 0 || walk(l, fd, "", 0, err, errlen) < 0) {
		if (fd < 0)
			snprintf(err, errlen, "--root %s: %s", dir, strerror(errno));
		site_list_free(l);
		return -1;
	}
	if (l->n)
		qsort(l->f, l->n, sizeof(*l->f), by_path);
	return 0;
}

void site_list_free(struct site_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].path);
	free(l->f);
	if (l->rootfd >= 0)
		close(l->rootfd);
	*l = (struct site_list){.rootfd = -1};
}

int site_open(const struct site_list *l, const char *path)
{
	char buf[SAR_MAX_NAME + 1];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof(buf) || path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	memcpy(buf, path + 1, len); /* with the NUL */
	/* The last component with O_NONBLOCK: a FIFO swapped in for a file
	 * must not block the open (the caller's fstat then refuses it). */
	int dirfd = l->rootfd;
	char *name = buf;
	for (;;) {
		char *slash = strchr(name, '/');
		if (slash)
			*slash = 0;
		int fd = openat(dirfd, name,
				(slash ? O_DIRECTORY : O_NONBLOCK) | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (dirfd != l->rootfd)
			close(dirfd);
		if (fd < 0 || !slash) {
			errno = e;
			return fd;
		}
		dirfd = fd;
		name = slash + 1;
	}
}
