/* etag.h — entity-tags (RFC 9110 8.8.3) and the lists of them that
 * If-Match and If-None-Match carry (13.1.1, 13.1.2).  Pure and
 * freestanding: field value in, verdict out.
 *
 *   If-None-Match: "a", W/"b" , "c"      If-Match: *
 *
 * A list is 1#entity-tag or "*" alone; OWS around the commas and empty
 * elements are allowed (5.6.1.2).  An element that is not an entity-tag
 * makes the whole field invalid: it then matches nothing (If-None-Match:
 * the full answer; If-Match: 412), which is what nginx does with the
 * lists it cannot read, and the safe side for a write precondition.
 */
#ifndef HTTP_ETAG_H
#define HTTP_ETAG_H

#include "../base/sk.h"

enum http_etag_cmp {
	HTTP_ETAG_STRONG, /* 8.8.3.2: both strong and the same opaque-tag (If-Match, If-Range) */
	HTTP_ETAG_WEAK,   /* the same opaque-tag, W/ ignored on either side (If-None-Match) */
};

/* Does list v[0, n) match etag[0, elen) (a complete entity-tag, "\"x\""
 * or "W/\"x\"")?  "*" matches any current representation: exists says if
 * there is one.  etag NULL (the resource has none): only "*" matches. */
bool http_etag_list_match(const uint8_t *v, size_t n, const char *etag, size_t elen,
			  enum http_etag_cmp cmp, bool exists);

/* Is v[0, n) exactly one entity-tag (for If-Range, 13.1.5: an
 * entity-tag or an HTTP-date; a date never starts with '"' or "W/")? */
bool http_etag_is_one(const uint8_t *v, size_t n);

#endif
