/* site_pack.h — write a site archive (archive/site_archive.h) of a --root DIR
 * (the walk of host/site_tree.h): what `skiff vm --root DIR` hands the
 * unikernel as its boot module. */
#ifndef APPS_SITE_PACK_H
#define APPS_SITE_PACK_H

#include <stddef.h>
#include <stdint.h>

/* The guest maps only its RAM below 4 GiB and needs ~170 MiB of it for
 * its default pools: an archive above 3 GiB could never boot. */
#define SITE_PACK_MAX_BYTES (3ull << 30)

struct site_pack_info {
	uint64_t files, bytes; /* files packed, their bytes */
	uint64_t size;         /* the archive's size */
};

/* Pack dir into the open file fd, written from its current offset on (0
 * for `--root`; a --config bundle's aligned slot, archive/site_bundle.h):
 * the archive's offsets are relative to where it starts.  0, or -1 with a
 * message in err. */
int site_pack(const char *dir, int fd, struct site_pack_info *info, char *err, size_t errlen);

#endif
