/* cache_cc.h — the Cache-Control field (RFC 9111 5.2), request and
 * response directives, and the delta-seconds of Age and max-age (1.2.2).
 * Pure and freestanding: field value in, directives out.
 *
 *   Cache-Control: max-age=60, s-maxage="120", no-cache="Set-Cookie, X"
 *
 * The field is 1#cache-directive; a directive is a token, optionally
 * "=" token / quoted-string; names are case-insensitive; OWS around the
 * commas and empty elements are allowed.  Every field line of a message is
 * fed to one struct http_cc (http_cc_add), in order: they combine as one
 * list (RFC 9110 5.3).
 *
 * Conservative readings (RFC 9111 4.2.1 lets a cache use the first value or
 * treat the response as stale; we take the safe side every time):
 *  - an element that does not parse (a stray byte, an unterminated quote):
 *    HTTP_CC_INVALID.  A response with it is not stored (cache.h); in a
 *    request the directives that did parse still count;
 *  - a delta-seconds argument that is not 1*DIGIT (quoted digits are
 *    accepted, 5.2: "a recipient MAY"): HTTP_CC_INVALID, and the directive
 *    counts with value 0 (max-age=x is max-age=0: stale at once);
 *  - values above 2^31 are 2147483648 (1.2.2);
 *  - a directive given twice with different values: max-age and s-maxage
 *    and a request's max-stale take the smaller, min-fresh the larger;
 *  - no-cache and private with a field list (5.2.2.4, 5.2.2.7) set the
 *    plain flag as well: we never serve the listed fields' response
 *    without revalidation, and never store a private one at all;
 *  - unknown directives are ignored with their arguments (quoted commas
 *    included).
 */
#ifndef HTTP_CACHE_CC_H
#define HTTP_CACHE_CC_H

#include "../base/sk.h"

#define HTTP_CC_DELTA_MAX 2147483648u /* 2^31: "infinity" (RFC 9111 1.2.2) */

enum {
	HTTP_CC_NO_STORE = 1u << 0,
	HTTP_CC_NO_CACHE = 1u << 1,        /* with or without a field list */
	HTTP_CC_NO_CACHE_FIELDS = 1u << 2, /* no-cache="..." (the qualified form) */
	HTTP_CC_PRIVATE = 1u << 3,         /* with or without a field list */
	HTTP_CC_PUBLIC = 1u << 4,
	HTTP_CC_MUST_REVALIDATE = 1u << 5,
	HTTP_CC_PROXY_REVALIDATE = 1u << 6,
	HTTP_CC_ONLY_IF_CACHED = 1u << 7,
	HTTP_CC_NO_TRANSFORM = 1u << 8,
	HTTP_CC_MAX_AGE = 1u << 9,   /* max_age valid */
	HTTP_CC_S_MAXAGE = 1u << 10, /* s_maxage valid */
	HTTP_CC_MAX_STALE = 1u << 11, /* max_stale valid (HTTP_CC_DELTA_MAX: no value, any) */
	HTTP_CC_MIN_FRESH = 1u << 12, /* min_fresh valid */
	HTTP_CC_INVALID = 1u << 15,  /* some element did not parse (see above) */
};

/* What the field lines of one message said.  Zero-initialised (http_cc_init)
 * means no directive at all. */
struct http_cc {
	uint32_t flags; /* HTTP_CC_* */
	uint32_t max_age, s_maxage, max_stale, min_fresh; /* seconds, valid per flags */
};

void http_cc_init(struct http_cc *cc);
/* Add one Cache-Control field line's value v[0, n) to cc. */
void http_cc_add(struct http_cc *cc, const uint8_t *v, size_t n);

/* delta-seconds (1*DIGIT) in v[0, n), OWS around allowed; above 2^31 is
 * 2^31.  false if it is not one (empty, a sign, a stray byte). */
bool http_cc_delta(const uint8_t *v, size_t n, uint32_t *out);

#endif
