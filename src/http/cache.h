/* cache.h — an HTTP response cache engine (the core of RFC 9111) for a
 * shared cache (`skiff proxy --cache SIZE`).  Pure and freestanding like
 * the rest of src/http: no I/O, no allocation, no clock — every call that
 * needs the time takes `now`, WALL-CLOCK seconds since the Unix epoch
 * (HTTP dates are wall-clock; a monotonic loop time would not compare with
 * Expires).  The proxy owns the connections; this engine decides what may
 * be stored and served, holds the bytes, and counts.
 *
 * ---- Memory (one block, fixed chunks) ----
 *
 *   mem ──► [ entry table | hash buckets | chunk links | chunk 0 | chunk 1 | ... ]
 *   entry ──► meta chain:  key record, Vary records, header-field records
 *             body chain:  the body bytes, chunk after chunk
 *
 * The embedder gives ONE block of `size` bytes at http_cache_init (the
 * --cache SIZE); the engine carves it into a table of entries, a hash
 * table over them, and a pool of cfg.chunk_size-byte chunks, and never
 * asks for more.  An entry is metadata (times, status, flags) plus two
 * chains of chunks: its "meta" chain holds records, each `name\0value\0`
 * contiguous inside one chunk (so the proxy gets NUL-terminated views it
 * can hand to http_app_header without copying); its body chain holds the
 * body.  A record longer than a chunk makes the response not storable.
 * Nothing is ever visible half-written: an entry being filled is PENDING
 * and no lookup serves it; a fill that runs out of chunks (after evicting
 * what can be evicted) or is aborted is freed whole.
 *
 * Eviction is LRU over the stored (READY) entries: a hit moves an entry to
 * the front; when a fill needs a chunk and the pool is empty, the entry
 * at the back is unlinked (lookups no longer find it) and its chunks go
 * back to the pool — at once if nobody reads it, else at its last
 * http_cache_release.  Lookups are O(1): a hash of (method class, Host,
 * target) picks a bucket; the bucket's chain holds the variants (Vary) of
 * a key, newest first.
 *
 * ---- What is stored (RFC 9111 3; docs/cache.md has the table) ----
 * A response is stored only if ALL hold:
 *  - the request was GET (a HEAD request is served FROM a GET entry, but
 *    never fills one: its response has no body);
 *  - the request has no `Cache-Control: no-store`, and no Authorization
 *    unless the response says public, s-maxage or must-revalidate (3.5);
 *  - the status is final and one we understand: 200 203 204 300 301 302
 *    303 307 308 404 405 410 414 501;
 *  - the response has no no-store, no private (either form), no `Vary: *`,
 *    no Cache-Control element that does not parse, and no Set-Cookie
 *    unless it says public (then the Set-Cookie lines are NOT stored: a
 *    cookie was for one client);
 *  - it has explicit freshness (s-maxage, max-age, Expires: heuristic
 *    freshness is off), or else a validator (ETag, Last-Modified) and a
 *    status that is heuristically cacheable (200 203 204 300 301 308 404
 *    405 410 414 501): then it is stored stale and every use revalidates;
 *  - every record fits a chunk and the whole entry fits cfg.max_entry.
 * Stored header fields leave out what the proxy's engine writes itself or
 * that is hop-by-hop: Connection (and the fields it names), Keep-Alive,
 * Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade, Proxy-*,
 * Content-Length, Date and Age.  Date and Age are kept as numbers; the
 * proxy sends `Age: http_cache_age()` with a hit.
 *
 * ---- Freshness (RFC 9111 4.2) ----
 *   lifetime = s-maxage, else max-age, else Expires - Date (Date absent or
 *              invalid: the response time; Expires invalid, or two that
 *              differ: 0, already stale), else 0;
 *   age      = max(0, response_time - Date, Age + response_time -
 *              request_time) + now - response_time;
 *   fresh    = lifetime > age.
 * A lookup serves a stored response without going upstream (HIT) when it
 * is fresh, and the request allows: its max-age >= age, its min-fresh <=
 * lifetime - age; or stale within the request's max-stale when the
 * response has none of must-revalidate, proxy-revalidate, s-maxage,
 * no-cache.  A request with no-cache (or `Pragma: no-cache` and no
 * Cache-Control) and a response with no-cache are always revalidated.
 *
 * ---- Vary ----
 * The response's Vary names are stored with the request's values of those
 * fields (several lines joined with ",", lower-cased, OWS removed: so
 * "gzip, br" and "GZIP,br" are one variant).  A lookup matches a variant
 * when each named field has the same normalised value in the new request
 * (absent matches absent only).  `Vary: *` is never stored.
 *
 * ---- Calls, for one request in the proxy ----
 *   http_cache_lookup(c, &req, now, &look):
 *     HTTP_CACHE_HIT      look.entry is a READ REFERENCE (see Reading):
 *                         send it (X-Cache: HIT), then http_cache_release;
 *     HTTP_CACHE_STALE    a stored response needs revalidation:
 *                         look.etag / look.last_modified are its
 *                         validators (NUL-terminated or NULL, valid until
 *                         the next call into the cache: copy them into
 *                         If-None-Match / If-Modified-Since now); begin a
 *                         fill (which remembers the stale entry) and send
 *                         the conditional request upstream;
 *     HTTP_CACHE_PENDING  another request's fill for this key is in
 *                         flight: look.fill is it.  Queue the request on
 *                         the proxy's own state for that fill (find it
 *                         with http_cache_fill_user) and, when that fill
 *                         is over, run lookup again for each queued
 *                         request: HIT serves it, anything else it
 *                         forwards (see Coalescing);
 *     HTTP_CACHE_MISS     nothing usable: begin a fill, forward;
 *     HTTP_CACHE_PASS     the request may not use the cache (a method
 *                         other than GET/HEAD): forward, do not fill;
 *     HTTP_CACHE_GATEWAY_TIMEOUT  only-if-cached and nothing usable:
 *                         answer 504 (RFC 9111 5.2.1.7), do not forward.
 *
 *   A fill (the response coming back from upstream into the cache):
 *     f = http_cache_begin(c, &req, now)    when the request goes upstream
 *                                           (NULL: not fillable — forward
 *                                           uncached);
 *     http_cache_head(c, f, &req, &resp, now, &out)  the response head
 *         arrived (req: the same request as at begin);
 *         a 304 to a revalidation: the stored entry is refreshed instead
 *         (RFC 9111 4.3.4: the 304's fields replace stored ones of the
 *         same names, freshness recomputed), the fill is over, and the
 *         return is HTTP_CACHE_FILL_REFRESHED with *out a read reference
 *         to the refreshed entry, to send (X-Cache: REVALIDATED);
 *         storable: HTTP_CACHE_FILL_OK, feed the body;
 *         not storable: HTTP_CACHE_FILL_DROPPED, the fill is over.  A
 *         304 is DROPPED too when out is NULL, when the fill was not a
 *         revalidation (the client's own conditional request: pass the
 *         304 on), or when the stale entry was freed meanwhile (evicted
 *         and released): then the proxy has nothing to send and asks
 *         upstream again without validators.  A proxy that fills should
 *         not forward the client's own If-None-Match/If-Modified-Since;
 *     http_cache_body(c, f, data, len, now)    each piece of the body, as
 *         it is sent on to the client (copied; the cache keeps no pointer);
 *         HTTP_CACHE_FILL_OK or HTTP_CACHE_FILL_DROPPED (over the memory
 *         budget or cfg.max_entry: the fill is over);
 *     http_cache_end(c, f, now)     the body is complete: the entry becomes
 *         READY (lookups find it; an older entry of the same key and
 *         variant is replaced: unlinked, freed at its last release);
 *         HTTP_CACHE_FILL_STORED, the fill is over;
 *     http_cache_abort(c, f)        the upstream failed, the client went
 *         away before the body was whole, or a body of unknown length
 *         ended with the connection in doubt: freed whole, the fill is
 *         over.
 *   "The fill is over": the handle f is gone, the proxy must not use it
 *   again, and must now wake the requests it queued on f.  Every fill ends
 *   exactly once: by head/body returning REFRESHED or DROPPED, or by
 *   end/abort.  A fill's handle is an opaque pointer into the block.
 *
 * ---- Coalescing ----
 * While a fill for a key is in flight (from begin until it is over), every
 * lookup of that key, whatever its variant, returns PENDING with that fill
 * (unless a fresh matching entry gives a HIT, or the request says no-cache:
 * that one goes upstream itself, MISS or STALE):
 * concurrent misses make one upstream request.  When the fill is STORED or
 * REFRESHED, the queued requests' second lookup is a HIT (or, for a
 * variant the stored one does not match, or a request whose own
 * directives refuse it, a MISS/STALE: forward it).  When it was DROPPED
 * or aborted, the proxy forwards each queued request itself, uncached
 * (not through a new fill each, which would queue them one behind the
 * other).  http_cache_fill_set_user attaches the proxy's pointer (its
 * queue) to a fill.
 *
 * ---- Reading (sending a stored response) ----
 * A read reference (HIT, REFRESHED) keeps the entry's bytes valid and
 * unchanged until http_cache_release, even if the entry is evicted,
 * replaced or purged meanwhile (then it is freed at the last release).
 * Its stored fields never change while any reference is held (a 304
 * refresh of a read entry builds a new one).  Through it:
 *   http_cache_status, the fields through an iterator
 *   (http_cache_field_first / http_cache_field_next: views into chunks,
 *   NUL-terminated),
 *   http_cache_body_len, and the body in pieces: an iterator
 *   (http_cache_body_first / http_cache_body_next) gives views into the
 *   chunks, each piece one chunk's worth, in order.
 * The proxy may hold many references (one per client being sent to); each
 * lookup HIT takes one, each must be released once.
 *
 * ---- Purge and invalidation ----
 * http_cache_purge(c, host, target): every stored variant of the key is
 * unlinked (freed at last release); a fill in flight is not affected (what
 * it stores arrived after the purge).  The proxy also calls it for a
 * successful unsafe request (POST, PUT, DELETE, PATCH answered 2xx/3xx;
 * RFC 9111 4.4) on the target URI and on Location / Content-Location when
 * they name the same host.  http_cache_purge_request is the operator's
 * PURGE (docs/proxy.md): the same, counted apart.
 *
 * ---- Threads ----
 * One thread (the proxy's loop).  Nothing here blocks or calls back.
 */
#ifndef HTTP_CACHE_H
#define HTTP_CACHE_H

#include "../base/sk.h"
#include "../base/sk_err.h"
#include "cache_cc.h"
#include "parser.h"

/* One header field line, as the proxy has it (views, not terminated). */
struct http_cache_field {
	const char *name;
	size_t nlen;
	const char *value;
	size_t vlen;
};

/* The request, as the proxy received it.  The views are read during the
 * call only. */
struct http_cache_req {
	unsigned method;             /* enum http_method */
	const char *host;            /* the Host field (or the authority), as sent */
	size_t host_len;
	const char *target;          /* the request-target (origin-form, with query) */
	size_t target_len;
	const struct http_cache_field *fields; /* every request field line */
	unsigned nfields;
};

/* The response head from upstream: its end-to-end fields (hop-by-hop may
 * be left in: the cache filters them too). */
struct http_cache_resp {
	uint16_t status;
	const struct http_cache_field *fields;
	unsigned nfields;
};

enum http_cache_result {
	HTTP_CACHE_MISS,
	HTTP_CACHE_HIT,
	HTTP_CACHE_STALE,
	HTTP_CACHE_PENDING,
	HTTP_CACHE_PASS,
	HTTP_CACHE_GATEWAY_TIMEOUT,
};

enum http_cache_fill_result {
	HTTP_CACHE_FILL_OK,        /* go on: more body, then end */
	HTTP_CACHE_FILL_STORED,    /* end: READY; the fill is over */
	HTTP_CACHE_FILL_REFRESHED, /* head: a 304 refreshed the stale entry; over */
	HTTP_CACHE_FILL_DROPPED,   /* head/body: not stored; the fill is over */
};

struct http_cache_entry; /* opaque: a stored entry, or a fill in flight */

struct http_cache_lookup {
	struct http_cache_entry *entry; /* HIT: a read reference; else NULL */
	struct http_cache_entry *fill;  /* PENDING: the fill in flight */
	const char *etag;               /* STALE: validators, or NULL */
	const char *last_modified;
	uint64_t age;                   /* HIT: current age, seconds */
};

struct http_cache_config {
	uint32_t chunk_size;   /* bytes per chunk, 1 KiB .. 1 MiB, multiple of 64; default 4 KiB */
	uint64_t max_entry;    /* one entry's records + body; default size / 8 */
	uint32_t max_entries;  /* 0: one per chunk (every entry holds at least one) */
};

void http_cache_config_default(struct http_cache_config *cfg);

/* The counters, in print order ("cache.<name>"). bytes and entries are
 * levels (gauges): chunk bytes held by entries, and entries stored. */
#define HTTP_CACHE_STATS(X)                                                                 \
	X(hits) X(misses) X(stale) X(revalidated) X(coalesced) X(stored) X(replaced) X(evicted) \
	X(purged) X(purges) X(uncacheable) X(fill_dropped) X(fill_aborted) X(bytes) X(entries)

struct http_cache_stats {
#define HTTP_CACHE_STAT_FIELD(n) uint64_t n;
	HTTP_CACHE_STATS(HTTP_CACHE_STAT_FIELD)
#undef HTTP_CACHE_STAT_FIELD
};

/* The engine: fields are the engine's (cache.c documents their
 * invariants); an embedder allocates it and reads `st`. */
struct http_cache {
	struct http_cache_config cfg;
	struct http_cache_entry *ents; /* nents, in mem */
	uint32_t nents;
	uint32_t *buckets;             /* nbuckets (a power of two), entry index or NONE */
	uint32_t nbuckets;
	uint32_t *links;               /* nchunks: next chunk in a chain, or NONE */
	uint8_t *chunks;               /* nchunks * chunk_size bytes */
	uint32_t nchunks;
	uint32_t free_chunks;          /* chunks on the free list */
	uint32_t chunk_free;           /* free-list head */
	uint32_t ent_free;             /* free entry list head */
	uint32_t lru_head, lru_tail;   /* READY linked entries, most recent first */
	struct http_cache_stats st;
};

/* Lay the cache out in mem[0, size) (any alignment; the caller's until it
 * stops using the cache).  0, or -SK_EINVAL (a config out of range, or a
 * block too small for two chunks). */
int http_cache_init(struct http_cache *c, void *mem, size_t size,
		    const struct http_cache_config *cfg);

enum http_cache_result http_cache_lookup(struct http_cache *c, const struct http_cache_req *req,
					 uint64_t now, struct http_cache_lookup *out);

/* Fills (see Calls above). */
struct http_cache_entry *http_cache_begin(struct http_cache *c, const struct http_cache_req *req,
					  uint64_t now);
enum http_cache_fill_result http_cache_head(struct http_cache *c, struct http_cache_entry *f,
					    const struct http_cache_req *req,
					    const struct http_cache_resp *resp, uint64_t now,
					    struct http_cache_entry **out);
enum http_cache_fill_result http_cache_body(struct http_cache *c, struct http_cache_entry *f,
					    const void *data, size_t len);
enum http_cache_fill_result http_cache_end(struct http_cache *c, struct http_cache_entry *f,
					   uint64_t now);
void http_cache_abort(struct http_cache *c, struct http_cache_entry *f);
void http_cache_fill_set_user(struct http_cache_entry *f, void *user);
void *http_cache_fill_user(const struct http_cache_entry *f);

/* Reading, through a read reference. */
uint16_t http_cache_status(const struct http_cache_entry *e);
/* The stored header fields, in order: first/next give each (name, value),
 * NUL-terminated views into the chunks, and return false after the last. */
struct http_cache_fiter {
	uint32_t chunk, off, left;
};
unsigned http_cache_nfields(const struct http_cache_entry *e);
bool http_cache_field_first(const struct http_cache *c, const struct http_cache_entry *e,
			    struct http_cache_fiter *it, const char **name, const char **value);
bool http_cache_field_next(const struct http_cache *c, struct http_cache_fiter *it,
			   const char **name, const char **value);
uint64_t http_cache_body_len(const struct http_cache_entry *e);
/* Current age (RFC 9111 4.2.3), seconds, for the Age field. */
uint64_t http_cache_age(const struct http_cache_entry *e, uint64_t now);

/* A position in an entry's body.  first/next return false at the end;
 * else (*p, *n) is the next piece (n > 0), a view into a chunk. */
struct http_cache_iter {
	uint32_t chunk;
	uint64_t left;
};
bool http_cache_body_first(const struct http_cache *c, const struct http_cache_entry *e,
			   struct http_cache_iter *it, const uint8_t **p, size_t *n);
bool http_cache_body_next(const struct http_cache *c, struct http_cache_iter *it,
			  const uint8_t **p, size_t *n);

void http_cache_release(struct http_cache *c, struct http_cache_entry *e);

/* Unlink every stored variant of (host, target);
 * returns how many. */
unsigned http_cache_purge(struct http_cache *c, const char *host, size_t host_len,
			  const char *target, size_t target_len);
/* The same for an operator's PURGE request (the proxy's method): counted
 * in `purges` (each request, whether it found something or not; `purged`
 * counts the entries). */
unsigned http_cache_purge_request(struct http_cache *c, const char *host, size_t host_len,
				  const char *target, size_t target_len);

/* Counters, "cache.<name> value". */
void http_cache_stats(const struct http_cache *c,
		      void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

/* Every invariant (chains, counts, LRU, free lists): 0 or -(line in cache.c). */
int http_cache_check(const struct http_cache *c);

#endif
