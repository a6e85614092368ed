/* file_answer.h — what a GET or HEAD of a site's file answers (RFC 9110),
 * decided for the files handler on app.c (http/files_handler.h), which
 * `skiff serve --root` and the unikernel's site run.  Pure: it reads the
 * request's fields, the lookup and the entries' validators, and fills a
 * struct http_file_answer; spelling the head and sending the body are the
 * caller's.  Freestanding like the parser: base/ and http/'s pure modules.
 *
 * The order of the checks (http_file_decide) is RFC 9110 13.2.2:
 *   1. If-Match (strong) false                           -> 412
 *   2. else If-Unmodified-Since, with a date, false      -> 412
 *   3. If-None-Match (weak) true                         -> 304 (GET, HEAD)
 *   4. else If-Modified-Since, with a date, not modified -> 304
 *   5. GET with Range: If-Range (an exact strong match of the ETag or of
 *      Last-Modified) false -> the full 200; else the Range (range.h)
 *      -> 206, 416 or (ignored) 200.
 * A HEAD never gets 206: RFC 9110 14.2 defines ranges for GET only; nor
 * does a precompressed variant (sent whole, without Accept-Ranges, as
 * nginx does).  Before those, the path: "/dir/" is "/dir/index.html" (403
 * for a directory without one, and for the root), "/dir" a 301 to "/dir/",
 * an entry with gz/br siblings the variant Accept-Encoding prefers.
 */
#ifndef HTTP_FILE_ANSWER_H
#define HTTP_FILE_ANSWER_H

#include "../base/sk.h"
#include "file.h"
#include "range.h"

/* One request field as sent: p[0, n), not terminated; p NULL: absent. */
struct http_file_val {
	const uint8_t *p;
	size_t n;
};

/* What the decision reads of a request: the method, the target as sent
 * (for a directory's Location) and the first line of each field below.
 * Fill it with http_file_ask_init and one http_file_ask_field per header
 * line, in the order sent (one pass, whatever the engine keeps). */
struct http_file_ask {
	uint8_t method;          /* HTTP_GET or HTTP_HEAD (others are the caller's 405) */
	const uint8_t *target;   /* the request-target as sent, target_len bytes */
	uint32_t target_len;
	struct http_file_val if_match, if_none_match, if_modified_since, if_unmodified_since,
		range, if_range, accept_encoding;
};

void http_file_ask_init(struct http_file_ask *q, uint8_t method, const uint8_t *target,
			uint32_t target_len);
/* One header line (name in any case): kept if it is one of the fields
 * above and the first of its name. */
void http_file_ask_field(struct http_file_ask *q, const uint8_t *name, size_t nlen,
			 const uint8_t *value, size_t vlen);

/* The answer.  Everything before rg is set by http_file_decide; rg[0,
 * nranges) only for a 206. */
struct http_file_answer {
	uint16_t status;  /* 200 206 301 304 403 404 412 414 416 */
	uint8_t coding;   /* enum http_coding (accept_enc.h) of the body sent */
	uint8_t nranges;  /* 206: 1 (single part) or more (multipart/byteranges) */
	bool vary;        /* the entry has a precompressed sibling: Vary: Accept-Encoding */
	const struct http_file *f;   /* 200/206/304/412/416: the entry the path named */
	const struct http_file *var; /* ... and the variant sent (f, f->gz or f->br) */
	const char *ctype;           /* f's, or application/octet-stream when f's is
				      * missing or longer than HTTP_EMIT_CTYPE_MAX */
	/* 301: Location is target[loc_off, loc_off + query_at) "/"
	 * target[loc_off + query_at, loc_off + loc_len): the path[?query] of
	 * the target as sent (origin-form, or past scheme://authority), with a
	 * '/' after the path.  Offsets into http_file_ask.target. */
	uint32_t loc_off, loc_len, query_at;
	/* 200/206/304/412/416: var's strong entity-tag, etag_len bytes and a
	 * NUL, or NULL (none).  It points at the entry's own (the source's, or
	 * the one http_file_prepare made), so neither the decision nor the
	 * ETag line copies or formats it; only an entry nobody prepared has it
	 * made here, in etag_buf (then the answer must not be copied). */
	const char *etag;
	size_t etag_len;
	char etag_buf[HTTP_ETAG_MAX + 1];
	struct http_range rg[HTTP_MAX_RANGES];
};

/* The boundary of multipart/byteranges (RFC 9110 14.6).  Fixed: the
 * parts' bytes are not searched for it (no server does); it is long and
 * odd enough not to be met by accident. */
#define HTTP_FILE_BOUNDARY "3d6b6a416f9e5c2a_skiff"

/* The longest Location of a 301 ("/dir" -> "/dir/"), the target's path
 * and query as sent: a longer one is answered 414. */
#define HTTP_LOCATION_MAX 512u

/* Decide the answer to q for the decoded path (http/target.h) path[0,
 * plen), NUL-terminated, which starts with '/'.  path is scratch: it must
 * have room for plen + 11 bytes (a directory's "index.html" and its NUL)
 * and is changed.  lookup must not be NULL. */
void http_file_decide(struct http_file_answer *a, const struct http_file_ask *q,
		      http_lookup_fn lookup, void *lookup_ctx, char *path, size_t plen);

/* A source making entries prepares each once, after it set mtime, len
 * and etag: the validators every answer would otherwise format go into one
 * arena per tree (or archive) the source allocates, sized by the sum of
 * http_file_prepare_len over its entries, and kept as long as the entries.
 * Bytes of the arena f needs: Last-Modified (HTTP_DATE_LEN and a NUL) and,
 * when f->etag is NULL, the mtime-len tag and its NUL; 0 when mtime is
 * unknown (no validators to make). */
size_t http_file_prepare_len(const struct http_file *f);
/* Write them at room (http_file_prepare_len(f) bytes) and point
 * f->last_modified and a NULL f->etag at them; returns the bytes used. */
size_t http_file_prepare(struct http_file *f, char *room);

/* Where the path[?query] of a target t[from, to) starts: at `from` in
 * origin-form, past scheme://authority in absolute-form. */
uint32_t http_file_origin_part(const uint8_t *t, uint32_t from, uint32_t to);

#endif
