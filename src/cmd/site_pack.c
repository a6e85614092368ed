/* site_pack.c — a site archive from a directory.  The layout is
 * archive/site_archive.h's; this writes header, entry table and name table
 * from the sorted walk (host/site_tree.h), then each body in the same order
 * at the next 64-byte boundary.  A file that changed size between the walk
 * and the copy fails the pack (a short archive would be refused at boot
 * anyway; better to say which file). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../archive/site_archive.h"
#include "site_pack.h"
#include "../host/site_tree.h"

static uint64_t align_up(uint64_t v)
{
	return (v + SAR_ALIGN - 1) & ~(uint64_t)(SAR_ALIGN - 1);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Copy exactly len bytes of the file at path into out. */
static int copy_body(const struct site_list *l, const struct site_file *f, int out, uint8_t *buf,
		     size_t bufsz, char *err, size_t errlen)
{
	int fd = site_open(l, f->path);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot open %s: %s", f->path, fd < 0 ? strerror(errno) : "not a regular file any more");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	uint64_t left = f->size;
	while (left) {
		ssize_t n = read(fd, buf, left < bufsz ? (size_t)left : bufsz);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "%s: %s while packing", f->path,
				 n < 0 ? strerror(errno) : "shrank");
			close(fd);
			return -1;
		}
		if (write_all(out, buf, (size_t)n) < 0) {
			snprintf(err, errlen, "writing the archive: %s", strerror(errno));
			close(fd);
			return -1;
		}
		left -= (uint64_t)n;
	}
	close(fd);
	if ((uint64_t)st.st_size != f->size) {
		snprintf(err, errlen, "%s changed size while packing", f->path);
		return -1;
	}
	return 0;
}

int site_pack(const char *dir, int out, struct site_pack_info *info, char *err, size_t errlen)
{
	struct site_list l;
	if (site_list_load(&l, dir, err, errlen) < 0)
		return -1;
	int rc = -1;
	uint8_t *head = NULL, *buf = NULL;
	uint64_t names_len = 0;
	for (size_t i = 0; i < l.n; i++)
		names_len += l.f[i].plen;
	uint64_t names_off = SAR_HEADER_LEN + (uint64_t)l.n * SAR_ENTRY_LEN;
	uint64_t data_off = align_up(names_off + names_len), off = data_off;
	if (l.bytes > SITE_PACK_MAX_BYTES || names_len > UINT32_MAX) {
		snprintf(err, errlen, "--root %s holds %llu bytes: more than the guest can map (%llu)",
			 dir, (unsigned long long)l.bytes, (unsigned long long)SITE_PACK_MAX_BYTES);
		goto out;
	}
	size_t head_len = (size_t)data_off;
	head = calloc(1, head_len);
	buf = malloc(1 << 20);
	if (!head || !buf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	uint64_t name_at = 0;
	for (size_t i = 0; i < l.n; i++) {
		const struct site_file *f = &l.f[i];
		uint8_t *e = head + SAR_HEADER_LEN + i * SAR_ENTRY_LEN;
		off = align_up(off);
		sar_put32(e, (uint32_t)name_at);
		sar_put32(e + 4, (uint32_t)f->plen);
		sar_put64(e + 8, off);
		sar_put64(e + 16, f->size);
		sar_put64(e + 24, (uint64_t)f->mtime);
		sar_put32(e + 32, f->mode);
		memcpy(head + names_off + name_at, f->path, f->plen);
		name_at += f->plen;
		off += f->size;
	}
	uint64_t total = off;
	sar_put32(head, SAR_MAGIC);
	sar_put32(head + 4, SAR_VERSION);
	sar_put32(head + 8, (uint32_t)l.n);
	sar_put32(head + 12, SAR_ENTRY_LEN);
	sar_put64(head + 16, names_off);
	sar_put64(head + 24, names_len);
	sar_put64(head + 32, data_off);
	sar_put64(head + 40, total - data_off);
	sar_put64(head + 48, total);
	if (write_all(out, head, head_len) < 0) {
		snprintf(err, errlen, "writing the archive: %s", strerror(errno));
		goto out;
	}
	static const uint8_t zeros[SAR_ALIGN];
	uint64_t at = data_off;
	for (size_t i = 0; i < l.n; i++) {
		uint64_t pad = align_up(at) - at;
		if (pad && write_all(out, zeros, (size_t)pad) < 0) {
			snprintf(err, errlen, "writing the archive: %s", strerror(errno));
			goto out;
		}
		at += pad;
		if (copy_body(&l, &l.f[i], out, buf, 1 << 20, err, errlen) < 0)
			goto out;
		at += l.f[i].size;
	}
	if (info)
		*info = (struct site_pack_info){.files = l.n, .bytes = l.bytes, .size = total};
	rc = 0;
out:
	free(head);
	free(buf);
	site_list_free(&l);
	return rc;
}
