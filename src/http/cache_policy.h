/* cache_policy.h — what a message's header fields mean to the cache
 * (RFC 9111 3, 4.1, 4.2), apart from where entries live: the engine in
 * cache.c feeds fields here and keeps the verdicts.  Internal to
 * src/http/cache*.c (and their tests); the proxy uses cache.h. */
#ifndef HTTP_CACHE_POLICY_H
#define HTTP_CACHE_POLICY_H

#include "cache.h"

/* What the fields of one response said, field line by field line. */
struct http_cache_info {
	struct http_cc cc;
	bool vary_star;       /* Vary: * */
	bool set_cookie;
	bool has_etag, has_last_modified;
	bool expires_seen;    /* an Expires line was there */
	bool expires_bad;     /* one did not parse, or two disagree: already stale */
	uint64_t expires;
	bool date_seen, date_bad;
	uint64_t date;
	bool age_seen;
	uint32_t age;         /* the largest valid Age (bad ones are ignored) */
};

void http_cache_info_init(struct http_cache_info *in);
void http_cache_info_add(struct http_cache_info *in, const char *name, size_t nlen,
			 const char *value, size_t vlen);

/* Explicit freshness (s-maxage, max-age, Expires)? */
bool http_cache_info_explicit(const struct http_cache_info *in);
/* Freshness lifetime in seconds (4.2.1), date_value the Date (or the
 * response time when Date is absent or bad). */
uint64_t http_cache_lifetime(const struct http_cache_info *in, uint64_t date_value);

/* Final statuses we store (with explicit freshness), and the heuristically
 * cacheable ones (RFC 9110 15.1), stored on a validator alone. */
bool http_cache_status_storable(unsigned status);
bool http_cache_status_heuristic(unsigned status);

/* Is this field never stored (hop-by-hop, framing, Date, Age)? */
bool http_cache_field_skipped(const char *name, size_t nlen);
/* Does a Connection field's value list this name? */
bool http_cache_list_has(const char *list, size_t llen, const char *name, size_t nlen);

/* Case-insensitive compares: two names, a name with a lower-case literal. */
bool http_cache_name_eq(const char *a, size_t alen, const char *b, size_t blen);
bool http_cache_name_is(const char *name, size_t nlen, const char *lit);

/* The normalised value of the request's `name` fields for a Vary match:
 * 'A' alone when absent, else 'P' then the lines joined by ',' with OWS
 * around commas and at the ends removed (lower-cased for the Accept*
 * fields, whose values are case-insensitive tokens).  Returns the length,
 * or -1 when it does not fit cap. */
int http_cache_vary_value(const struct http_cache_req *req, const char *name, size_t nlen,
			  char *out, size_t cap);

/* The request's directives: Cache-Control, and `Pragma: no-cache` as
 * no-cache when there is no Cache-Control (RFC 9111 5.4). */
void http_cache_req_cc(const struct http_cache_req *req, struct http_cc *cc);
bool http_cache_req_has(const struct http_cache_req *req, const char *lname);

#endif
