/* file.h — what a site's file is to the HTTP code: struct http_file, an
 * entry a source (serve's file cache, the unikernel's archive) hands out,
 * and http_lookup_fn, how the files handler (http/files_handler.h) asks
 * for one; what a GET or HEAD of an entry answers is http/file_answer.h.
 * Freestanding: base/ only.
 */
#ifndef HTTP_FILE_H
#define HTTP_FILE_H

#include "../base/sk.h"

/* One entry of the application's site: a file (data, len, ctype), or a
 * directory.  The application owns every entry and everything it points
 * to, for the server's lifetime (or until it swaps its whole table between
 * loop turns); the server only reads them and sends slices of data.
 *
 * Contract for sources (hosted file cache, the unikernel's archive, ...):
 * data/len/ctype are required for a file; every other field may be left
 * zero (a designated initializer that names only data/len/ctype is a
 * valid entry), and zero always means "unknown / none" with a sane answer:
 *   mtime 0      no Last-Modified, and no date conditionals
 *                (If-Modified-Since / If-Unmodified-Since / a date
 *                If-Range are then false: full 200, or 412 for IUS);
 *   etag NULL    the server derives a strong ETag "<mtime hex>-<len hex>"
 *                when mtime is known (what nginx sends, so caches see the
 *                same form), else sends none (then If-None-Match and
 *                If-Match can match only "*");
 *   last_modified NULL  formatted from mtime per answer (a source that
 *                makes many answers prepares it and the ETag once:
 *                http_file_prepare, file_answer.h);
 *   gz/br NULL   no precompressed sibling;
 *   is_dir false a file.
 */
struct http_file {
	const uint8_t *data; /* len bytes; NULL allowed when len == 0 or is_dir */
	size_t len;
	const char *ctype;   /* "text/html; charset=utf-8", ... (http/mime.h); NUL-terminated */
	/* Seconds since the Unix epoch of the last change, 0 = unknown.  The
	 * Last-Modified header and the date conditionals use it. */
	int64_t mtime;
	/* NULL, or a complete strong entity-tag, quotes included ("\"abc\""),
	 * at most HTTP_ETAG_MAX bytes of etagc (no '"' inside, no W/): a
	 * source that can do better than mtime+len (a content hash computed
	 * when the archive is built) sets it; http_file_prepare points a NULL
	 * one at the mtime-len tag it makes. */
	const char *etag;
	/* Last-Modified's value (HTTP_DATE_LEN bytes and a NUL), made from
	 * mtime once by http_file_prepare (file_answer.h) where a source
	 * makes the entry; NULL (a source that does not prepare, a test's
	 * table, mtime unknown): formatted per answer from mtime.  It and a
	 * made etag live in the source's arena for the tree (one allocation
	 * per load), not in the entry, which stays at 72 bytes. */
	const char *last_modified;
	/* The same content precompressed: file.gz (Content-Encoding: gzip) and
	 * file.br (br), each a full entry of its own (its len, mtime, etag),
	 * served instead of this one when Accept-Encoding allows; every
	 * response for an entry with a sibling carries Vary: Accept-Encoding.
	 * The sibling's ctype is ignored (this entry's is sent).  NULL: none. */
	const struct http_file *gz, *br;
	/* > 0: an open descriptor of the same bytes as data[0, len), offset 0
	 * at data[0]; a loop with the sendfile op (loop.h; --stack linux)
	 * then sends the body from it (no copy through user memory), else
	 * from data.  It must stay open as long as data stays mapped.  0:
	 * none (a source never offers descriptor 0). */
	int fd;
	/* A directory: never served as a body.  The server answers "/dir"
	 * with 301 to "/dir/", and "/dir/" with the lookup of "/dir/index.html"
	 * (403 when the directory has none).  data/len/ctype are ignored. */
	bool is_dir;
	/* data[0, len) stays mapped and unchanged until its owner sees the
	 * loop hold no reference (loop_refs_held() 0: serve's file cache keeps
	 * a retired tree mapped until then), or for the life of the process
	 * (an archive in memory).  A loop with the send_ref op (loop.h; the
	 * skiff stack) then queues the body by reference instead of copying
	 * it.  false: the bytes may go when the response is written. */
	bool pinned;
};

/* The longest ETag a source may give, quotes included. */
#define HTTP_ETAG_MAX 64u

/* Map a decoded path to an entry, or NULL (404).  The path starts with
 * '/', has no "." or ".." segments and no NUL, and is NUL-terminated at
 * path[len].  The server never asks a path ending in '/': for "/a/" it
 * asks "/a/index.html", then "/a" to tell 403 (a directory without an
 * index) from 404; for "/" it asks "/index.html" (the root is always a
 * directory: 403 without one).  A source that knows no directories
 * answers NULL for them: "/dir" is then a 404, not a 301. */
typedef const struct http_file *(*http_lookup_fn)(void *ctx, const char *path, size_t len);

#endif
