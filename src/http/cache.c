/* cache.c — see cache.h.  The store: the block's layout, chains of chunks,
 * the hash table and LRU, fills and reads.  What fields mean is
 * cache_policy.c's.
 *
 * Call order of a fill: http_cache_begin -> new_entry -> put_record (key)
 * -> link; http_cache_head -> head_store (vary and field records) or
 * refresh (304); http_cache_body -> alloc_chunk (-> evict_tail) ->
 * copy; http_cache_end -> replace_older -> lru_push. */
#include "cache.h"

#include "cache_policy.h"
#include "date.h"

#define NONE UINT32_MAX
#define REC_HDR 4u       /* u16 name length, u16 value length */
#define REC_SKIP 0xffffu /* name length: the rest of this chunk is unused */
#define VARY_MAX 1024u   /* a normalised Vary value, with its 'A'/'P' byte */

enum ent_state {
	ENT_FREE,    /* on the free list; nothing else holds it */
	ENT_PENDING, /* a fill: in its bucket, not in the LRU, never served */
	ENT_READY,   /* stored: in its bucket and in the LRU */
	ENT_DEAD,    /* unlinked (evicted, replaced, purged) with refs > 0 */
};

enum {
	EF_HEADED = 1u << 0,     /* PENDING: head() stored the records */
	EF_REVALIDATE = 1u << 1, /* always revalidate: response no-cache (either form) */
	EF_NO_STALE = 1u << 2,   /* must-revalidate, proxy-revalidate or s-maxage */
	EF_VALIDATOR = 1u << 3,  /* has an ETag or Last-Modified record */
};

/* One entry.  Invariants (http_cache_check):
 *  - state FREE: on the entry free list (bnext links it), no chunks, refs 0;
 *  - PENDING and READY: in bucket hash & (nbuckets-1), chain through bnext;
 *    READY also in the LRU (lru_prev/lru_next), PENDING never;
 *  - DEAD: in no bucket and not in the LRU, refs > 0; freed when refs
 *    drops to 0;
 *  - the meta chain is never empty outside FREE: its first record is the
 *    key (host lower-cased \0 target \0), contiguous in meta_first; then
 *    nvary Vary records, then nfields field records;
 *  - body_len bytes fill the body chain from its first chunk, each chunk
 *    whole but the last; nchunks counts both chains;
 *  - gen changes every time the entry is freed, so a remembered
 *    (index, gen) pair (a fill's stale entry) never names a reused slot. */
struct http_cache_entry {
	uint64_t hash;
	uint32_t idx, gen;
	uint32_t bnext;
	uint32_t lru_prev, lru_next;
	uint32_t meta_first, meta_last, meta_used; /* bytes used in meta_last */
	uint32_t body_first, body_last;
	uint64_t body_len;
	uint32_t nchunks;
	uint32_t refs;
	uint32_t reval, reval_gen; /* PENDING: the stale entry being revalidated, or NONE */
	uint16_t status;
	uint16_t nvary, nfields;
	uint8_t state, flags;
	bool req_auth; /* PENDING: the request carried Authorization */
	uint64_t request_time, response_time, date_value, age_value, lifetime;
	void *user;
};

void http_cache_config_default(struct http_cache_config *cfg)
{
	cfg->chunk_size = 4096;
	cfg->max_entry = 0; /* size / 8 at init */
	cfg->max_entries = 0;
}

/* ---- layout ---- */

int http_cache_init(struct http_cache *c, void *mem, size_t size,
		    const struct http_cache_config *cfg)
{
	sk_memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	uint32_t cs = cfg->chunk_size;
	if (cs < 1024 || cs > (1u << 20) || cs % 64)
		return -SK_EINVAL;
	uintptr_t base = ((uintptr_t)mem + 63) & ~(uintptr_t)63;
	if (base - (uintptr_t)mem >= size)
		return -SK_EINVAL;
	size_t avail = size - (base - (uintptr_t)mem);
	/* Per chunk: the chunk, its link, at most one entry and two buckets. */
	size_t per = cs + sizeof(uint32_t) + sizeof(struct http_cache_entry) + 2 * sizeof(uint32_t);
	size_t n = avail / per;
	if (n < 2)
		return -SK_EINVAL;
	if (n > UINT32_MAX / 4)
		n = UINT32_MAX / 4;
	uint32_t nents = cfg->max_entries && cfg->max_entries < n ? cfg->max_entries : (uint32_t)n;
	uint32_t nb = 1;
	while (nb < nents)
		nb <<= 1;
	/* The bucket table may be up to twice nents; recount the chunks so
	 * everything fits what is left. */
	size_t fixed = (size_t)nents * sizeof(struct http_cache_entry) + (size_t)nb * 4;
	fixed = (fixed + 63) & ~(size_t)63;
	if (fixed >= avail)
		return -SK_EINVAL;
	size_t nch = (avail - fixed) / (cs + 4);
	while (nch > 0 && fixed + nch * 4 + 63 + nch * (size_t)cs > avail)
		nch--;
	if (nch < 2)
		return -SK_EINVAL;
	uint8_t *p = (uint8_t *)base;
	c->ents = (struct http_cache_entry *)p;
	c->nents = nents;
	p += (size_t)nents * sizeof(struct http_cache_entry);
	c->buckets = (uint32_t *)p;
	c->nbuckets = nb;
	p = (uint8_t *)base + fixed;
	c->links = (uint32_t *)p;
	c->nchunks = (uint32_t)nch;
	p += (nch * 4 + 63) & ~(size_t)63;
	c->chunks = p;
	if (!c->cfg.max_entry)
		c->cfg.max_entry = size / 8 > cs ? size / 8 : cs;

	for (uint32_t i = 0; i < nb; i++)
		c->buckets[i] = NONE;
	for (uint32_t i = 0; i < c->nchunks; i++)
		c->links[i] = i + 1 < c->nchunks ? i + 1 : NONE;
	c->chunk_free = 0;
	c->free_chunks = c->nchunks;
	for (uint32_t i = 0; i < nents; i++) {
		struct http_cache_entry *e = &c->ents[i];
		sk_memset(e, 0, sizeof(*e));
		e->idx = i;
		e->state = ENT_FREE;
		e->bnext = i + 1 < nents ? i + 1 : NONE;
		e->meta_first = e->meta_last = e->body_first = e->body_last = NONE;
		e->lru_prev = e->lru_next = e->reval = NONE;
	}
	c->ent_free = 0;
	c->lru_head = c->lru_tail = NONE;
	return 0;
}

static inline uint8_t *chunk(const struct http_cache *c, uint32_t i)
{
	return c->chunks + (size_t)i * c->cfg.chunk_size;
}

static void update_gauges(struct http_cache *c)
{
	c->st.bytes = (uint64_t)(c->nchunks - c->free_chunks) * c->cfg.chunk_size;
}

/* ---- chains, LRU, buckets ---- */

static void free_chain(struct http_cache *c, uint32_t first)
{
	while (first != NONE) {
		uint32_t next = c->links[first];
		c->links[first] = c->chunk_free;
		c->chunk_free = first;
		c->free_chunks++;
		first = next;
	}
}

static void lru_remove(struct http_cache *c, struct http_cache_entry *e)
{
	if (e->lru_prev != NONE)
		c->ents[e->lru_prev].lru_next = e->lru_next;
	else
		c->lru_head = e->lru_next;
	if (e->lru_next != NONE)
		c->ents[e->lru_next].lru_prev = e->lru_prev;
	else
		c->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NONE;
}

static void lru_push(struct http_cache *c, struct http_cache_entry *e)
{
	e->lru_prev = NONE;
	e->lru_next = c->lru_head;
	if (c->lru_head != NONE)
		c->ents[c->lru_head].lru_prev = e->idx;
	else
		c->lru_tail = e->idx;
	c->lru_head = e->idx;
}

static void bucket_remove(struct http_cache *c, struct http_cache_entry *e)
{
	uint32_t *pp = &c->buckets[e->hash & (c->nbuckets - 1)];
	while (*pp != NONE && *pp != e->idx)
		pp = &c->ents[*pp].bnext;
	if (*pp == e->idx)
		*pp = e->bnext;
	e->bnext = NONE;
}

static void free_entry(struct http_cache *c, struct http_cache_entry *e)
{
	free_chain(c, e->meta_first);
	free_chain(c, e->body_first);
	uint32_t idx = e->idx, gen = e->gen + 1;
	sk_memset(e, 0, sizeof(*e));
	e->idx = idx;
	e->gen = gen;
	e->state = ENT_FREE;
	e->meta_first = e->meta_last = e->body_first = e->body_last = NONE;
	e->lru_prev = e->lru_next = e->reval = NONE;
	e->bnext = c->ent_free;
	c->ent_free = idx;
	update_gauges(c);
}

/* Take a READY entry out of lookups; free it now or at its last release. */
static void unlink_ready(struct http_cache *c, struct http_cache_entry *e)
{
	bucket_remove(c, e);
	lru_remove(c, e);
	c->st.entries--;
	if (e->refs) {
		e->state = ENT_DEAD;
		return;
	}
	free_entry(c, e);
}

static bool evict_tail(struct http_cache *c)
{
	if (c->lru_tail == NONE)
		return false;
	c->st.evicted++;
	unlink_ready(c, &c->ents[c->lru_tail]);
	return true;
}

/* A free chunk, evicting from the LRU's back while none is free. */
static uint32_t alloc_chunk(struct http_cache *c)
{
	while (c->chunk_free == NONE)
		if (!evict_tail(c))
			return NONE;
	uint32_t i = c->chunk_free;
	c->chunk_free = c->links[i];
	c->links[i] = NONE;
	c->free_chunks--;
	update_gauges(c);
	return i;
}

static struct http_cache_entry *new_entry(struct http_cache *c)
{
	while (c->ent_free == NONE)
		if (!evict_tail(c))
			return NULL;
	struct http_cache_entry *e = &c->ents[c->ent_free];
	c->ent_free = e->bnext;
	e->bnext = NONE;
	return e;
}

/* ---- records ---- */

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Append a record name\0value\0 (name lower-cased when asked) to e's meta
 * chain, in one chunk.  false: too long for a chunk, over max_entry, or no
 * chunk to be had. */
static bool put_record(struct http_cache *c, struct http_cache_entry *e, const char *name,
		       size_t nlen, const char *value, size_t vlen, bool lower_name)
{
	uint32_t cs = c->cfg.chunk_size;
	size_t need = REC_HDR + nlen + 1 + vlen + 1;
	if (nlen >= REC_SKIP || vlen > 0xffffu || need > cs)
		return false;
	if (e->meta_last == NONE || e->meta_used + need > cs) {
		if ((uint64_t)(e->nchunks + 1) * cs > c->cfg.max_entry)
			return false;
		uint32_t k = alloc_chunk(c);
		if (k == NONE)
			return false;
		if (e->meta_last == NONE)
			e->meta_first = k;
		else {
			if (cs - e->meta_used >= REC_HDR) {
				uint8_t *q = chunk(c, e->meta_last) + e->meta_used;
				q[0] = q[1] = 0xff; /* REC_SKIP */
			}
			c->links[e->meta_last] = k;
		}
		e->meta_last = k;
		e->meta_used = 0;
		e->nchunks++;
	}
	uint8_t *p = chunk(c, e->meta_last) + e->meta_used;
	p[0] = (uint8_t)nlen, p[1] = (uint8_t)(nlen >> 8);
	p[2] = (uint8_t)vlen, p[3] = (uint8_t)(vlen >> 8);
	for (size_t i = 0; i < nlen; i++) {
		uint8_t ch = (uint8_t)name[i];
		p[REC_HDR + i] = lower_name && ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch;
	}
	p[REC_HDR + nlen] = 0;
	sk_memcpy(p + REC_HDR + nlen + 1, value, vlen);
	p[REC_HDR + nlen + 1 + vlen] = 0;
	e->meta_used += (uint32_t)need;
	return true;
}

/* A cursor over records: (chunk, off).  rec_at gives the record there, or
 * moves on to the next chunk first when this one's rest is unused. */
static bool rec_at(const struct http_cache *c, uint32_t *ch, uint32_t *off, const char **name,
		   size_t *nlen, const char **value, size_t *vlen)
{
	uint32_t cs = c->cfg.chunk_size;
	for (;;) {
		if (*ch == NONE)
			return false;
		const uint8_t *p = chunk(c, *ch) + *off;
		if (cs - *off < REC_HDR || get16(p) == REC_SKIP) {
			*ch = c->links[*ch];
			*off = 0;
			continue;
		}
		*nlen = get16(p);
		*vlen = get16(p + 2);
		*name = (const char *)p + REC_HDR;
		*value = *name + *nlen + 1;
		*off += (uint32_t)(REC_HDR + *nlen + 1 + *vlen + 1);
		return true;
	}
}

/* Skip the key and Vary records: the cursor then points at field 0. */
static void fields_start(const struct http_cache *c, const struct http_cache_entry *e,
			 uint32_t *ch, uint32_t *off)
{
	const char *n, *v;
	size_t nl, vl;
	*ch = e->meta_first;
	*off = 0;
	for (unsigned i = 0; i < 1u + e->nvary; i++)
		(void)rec_at(c, ch, off, &n, &nl, &v, &vl);
}

/* ---- keys ---- */

static uint64_t key_hash(const char *host, size_t hl, const char *target, size_t tl)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < hl; i++) {
		uint8_t ch = (uint8_t)host[i];
		h = (h ^ (ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch)) * 1099511628211ull;
	}
	h = (h ^ 0) * 1099511628211ull;
	for (size_t i = 0; i < tl; i++)
		h = (h ^ (uint8_t)target[i]) * 1099511628211ull;
	return h;
}

static bool key_match(const struct http_cache *c, const struct http_cache_entry *e, uint64_t h,
		      const char *host, size_t hl, const char *target, size_t tl)
{
	if (e->hash != h)
		return false;
	const uint8_t *p = chunk(c, e->meta_first);
	if (get16(p) != hl || get16(p + 2) != tl)
		return false;
	const uint8_t *kh = p + REC_HDR, *kt = kh + hl + 1;
	for (size_t i = 0; i < hl; i++) {
		uint8_t ch = (uint8_t)host[i];
		if (kh[i] != (ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch))
			return false;
	}
	return sk_memcmp(kt, target, tl) == 0;
}

/* Does the request select this READY entry's variant? */
static bool vary_match(const struct http_cache *c, const struct http_cache_entry *e,
		       const struct http_cache_req *req)
{
	uint32_t ch = e->meta_first, off = 0;
	const char *n, *v;
	size_t nl, vl;
	(void)rec_at(c, &ch, &off, &n, &nl, &v, &vl); /* the key */
	for (unsigned i = 0; i < e->nvary; i++) {
		if (!rec_at(c, &ch, &off, &n, &nl, &v, &vl))
			return false;
		char buf[VARY_MAX];
		int len = http_cache_vary_value(req, n, nl, buf, sizeof(buf));
		if (len < 0 || (size_t)len != vl || sk_memcmp(buf, v, vl) != 0)
			return false;
	}
	return true;
}

/* Are the Vary records of a and b the same bytes (one variant)? */
static bool same_variant(const struct http_cache *c, const struct http_cache_entry *a,
			 const struct http_cache_entry *b)
{
	if (a->nvary != b->nvary)
		return false;
	uint32_t ca = a->meta_first, oa = 0, cb = b->meta_first, ob = 0;
	const char *na, *va, *nb, *vb;
	size_t nla, vla, nlb, vlb;
	for (unsigned i = 0; i < 1u + a->nvary; i++) {
		if (!rec_at(c, &ca, &oa, &na, &nla, &va, &vla) ||
		    !rec_at(c, &cb, &ob, &nb, &nlb, &vb, &vlb))
			return false;
		if (i && (nla != nlb || vla != vlb || sk_memcmp(na, nb, nla) ||
			  sk_memcmp(va, vb, vla)))
			return false;
	}
	return true;
}

/* ---- freshness ---- */

static uint64_t current_age(const struct http_cache_entry *e, uint64_t now)
{
	uint64_t apparent = e->response_time > e->date_value ? e->response_time - e->date_value : 0;
	uint64_t delay = e->response_time > e->request_time ? e->response_time - e->request_time : 0;
	uint64_t corrected = e->age_value + delay;
	uint64_t initial = apparent > corrected ? apparent : corrected;
	uint64_t resident = now > e->response_time ? now - e->response_time : 0;
	return initial + resident;
}

uint64_t http_cache_age(const struct http_cache_entry *e, uint64_t now)
{
	return current_age(e, now);
}

static bool servable(const struct http_cache_entry *e, const struct http_cc *rq, uint64_t now,
		     uint64_t *age_out)
{
	uint64_t age = current_age(e, now);
	*age_out = age;
	if ((e->flags & EF_REVALIDATE) || (rq->flags & HTTP_CC_NO_CACHE))
		return false;
	if ((rq->flags & HTTP_CC_MAX_AGE) && age > rq->max_age)
		return false;
	if (e->lifetime > age) {
		if ((rq->flags & HTTP_CC_MIN_FRESH) && e->lifetime - age < rq->min_fresh)
			return false;
		return true;
	}
	/* Stale: only within the request's max-stale, and never when the
	 * response forbids serving it stale (5.2.2.2, 5.2.2.8, 5.2.2.10). */
	if (!(rq->flags & HTTP_CC_MAX_STALE) || (e->flags & EF_NO_STALE) ||
	    (rq->flags & HTTP_CC_MIN_FRESH))
		return false;
	return age - e->lifetime <= rq->max_stale;
}

/* Find a field record by (lower-case) name in a READY entry. */
static const char *field_find(const struct http_cache *c, const struct http_cache_entry *e,
			      const char *lname)
{
	uint32_t ch, off;
	fields_start(c, e, &ch, &off);
	const char *n, *v;
	size_t nl, vl;
	for (unsigned i = 0; i < e->nfields; i++) {
		if (!rec_at(c, &ch, &off, &n, &nl, &v, &vl))
			break;
		if (http_cache_name_is(n, nl, lname))
			return v;
	}
	return NULL;
}

/* ---- lookup ---- */

enum http_cache_result http_cache_lookup(struct http_cache *c, const struct http_cache_req *req,
					 uint64_t now, struct http_cache_lookup *out)
{
	sk_memset(out, 0, sizeof(*out));
	if (req->method != HTTP_GET && req->method != HTTP_HEAD)
		return HTTP_CACHE_PASS;
	struct http_cc rq;
	http_cache_req_cc(req, &rq);
	uint64_t h = key_hash(req->host, req->host_len, req->target, req->target_len);
	struct http_cache_entry *cand = NULL, *pend = NULL;
	for (uint32_t i = c->buckets[h & (c->nbuckets - 1)]; i != NONE; i = c->ents[i].bnext) {
		struct http_cache_entry *e = &c->ents[i];
		if (!key_match(c, e, h, req->host, req->host_len, req->target, req->target_len))
			continue;
		if (e->state == ENT_PENDING) {
			if (!pend)
				pend = e;
		} else if (!cand && vary_match(c, e, req)) {
			cand = e; /* the newest matching variant */
		}
	}
	uint64_t age = 0;
	if (cand && servable(cand, &rq, now, &age)) {
		cand->refs++;
		lru_remove(c, cand);
		lru_push(c, cand);
		out->entry = cand;
		out->age = age;
		c->st.hits++;
		return HTTP_CACHE_HIT;
	}
	/* A no-cache request goes upstream itself: waiting for a fill only to
	 * revalidate after it would double its latency. */
	if (pend && !(rq.flags & HTTP_CC_NO_CACHE)) {
		out->fill = pend;
		c->st.coalesced++;
		return HTTP_CACHE_PENDING;
	}
	if (rq.flags & HTTP_CC_ONLY_IF_CACHED) {
		c->st.misses++;
		return HTTP_CACHE_GATEWAY_TIMEOUT;
	}
	if (cand && (cand->flags & EF_VALIDATOR)) {
		out->etag = field_find(c, cand, "etag");
		out->last_modified = field_find(c, cand, "last-modified");
		c->st.stale++;
		return HTTP_CACHE_STALE;
	}
	c->st.misses++;
	return HTTP_CACHE_MISS;
}

/* ---- fills ---- */

static void drop_pending(struct http_cache *c, struct http_cache_entry *f)
{
	bucket_remove(c, f);
	free_entry(c, f);
}

struct http_cache_entry *http_cache_begin(struct http_cache *c, const struct http_cache_req *req,
					  uint64_t now)
{
	struct http_cc rq;
	http_cache_req_cc(req, &rq);
	if (req->method != HTTP_GET || (rq.flags & HTTP_CC_NO_STORE)) {
		c->st.uncacheable++;
		return NULL;
	}
	struct http_cache_entry *f = new_entry(c);
	if (!f) {
		c->st.fill_dropped++;
		return NULL;
	}
	f->state = ENT_PENDING;
	f->reval = NONE;
	if (!put_record(c, f, req->host, req->host_len, req->target, req->target_len, true)) {
		free_entry(c, f);
		c->st.uncacheable++;
		return NULL;
	}
	f->hash = key_hash(req->host, req->host_len, req->target, req->target_len);
	f->request_time = now;
	f->req_auth = http_cache_req_has(req, "authorization");
	/* The stale entry this fill would revalidate (what lookup answered
	 * STALE for), remembered by index and generation. */
	for (uint32_t i = c->buckets[f->hash & (c->nbuckets - 1)]; i != NONE; i = c->ents[i].bnext) {
		struct http_cache_entry *e = &c->ents[i];
		if (e->state == ENT_READY && (e->flags & EF_VALIDATOR) &&
		    key_match(c, e, f->hash, req->host, req->host_len, req->target,
			      req->target_len) &&
		    vary_match(c, e, req)) {
			f->reval = e->idx;
			f->reval_gen = e->gen;
			break;
		}
	}
	uint32_t *b = &c->buckets[f->hash & (c->nbuckets - 1)];
	f->bnext = *b;
	*b = f->idx;
	return f;
}

/* Analyse fields (the response's, or a stored entry's records plus a 304's)
 * into metadata.  Returns whether storing is allowed. */
static bool judge(const struct http_cache_info *in, unsigned status, bool req_auth)
{
	uint32_t fl = in->cc.flags;
	if (!http_cache_status_storable(status))
		return false;
	if (fl & (HTTP_CC_NO_STORE | HTTP_CC_PRIVATE | HTTP_CC_INVALID))
		return false;
	if (in->vary_star)
		return false;
	if (in->set_cookie && !(fl & HTTP_CC_PUBLIC))
		return false;
	if (req_auth && !(fl & (HTTP_CC_PUBLIC | HTTP_CC_S_MAXAGE | HTTP_CC_MUST_REVALIDATE)))
		return false;
	bool validator = in->has_etag || in->has_last_modified;
	if (http_cache_info_explicit(in))
		return true; /* lifetime 0 (Expires in the past) is kept only for revalidation: */
	return validator && http_cache_status_heuristic(status);
}

static void set_times(struct http_cache_entry *e, const struct http_cache_info *in,
		      uint64_t request_time, uint64_t now)
{
	e->request_time = request_time;
	e->response_time = now;
	e->date_value = in->date_seen && !in->date_bad ? in->date : now;
	e->age_value = in->age_seen ? in->age : 0;
	e->lifetime = http_cache_lifetime(in, e->date_value);
	uint32_t fl = in->cc.flags;
	e->flags &= (uint8_t)~(EF_REVALIDATE | EF_NO_STALE | EF_VALIDATOR);
	if (fl & HTTP_CC_NO_CACHE)
		e->flags |= EF_REVALIDATE;
	if (fl & (HTTP_CC_MUST_REVALIDATE | HTTP_CC_PROXY_REVALIDATE | HTTP_CC_S_MAXAGE))
		e->flags |= EF_NO_STALE;
	if (in->has_etag || in->has_last_modified)
		e->flags |= EF_VALIDATOR;
}

/* Is field (name) one a stored response keeps?  conn: the Connection
 * values (hop-by-hop names), public: Set-Cookie is then dropped. */
static bool keep_field(const char *name, size_t nlen, const struct http_cache_resp *resp)
{
	if (http_cache_field_skipped(name, nlen) || http_cache_name_is(name, nlen, "set-cookie"))
		return false;
	for (unsigned k = 0; k < resp->nfields; k++) {
		const struct http_cache_field *f = &resp->fields[k];
		if (http_cache_name_is(f->name, f->nlen, "connection") &&
		    http_cache_list_has(f->value, f->vlen, name, nlen))
			return false;
	}
	return true;
}

/* Vary records from the response's Vary lines and the request's values. */
static bool put_vary(struct http_cache *c, struct http_cache_entry *f,
		     const struct http_cache_req *req, const struct http_cache_resp *resp)
{
	for (unsigned k = 0; k < resp->nfields; k++) {
		const struct http_cache_field *vf = &resp->fields[k];
		if (!http_cache_name_is(vf->name, vf->nlen, "vary"))
			continue;
		size_t i = 0;
		while (i < vf->vlen) {
			char ch = vf->value[i];
			if (ch == ' ' || ch == '\t' || ch == ',') {
				i++;
				continue;
			}
			size_t s = i;
			while (i < vf->vlen && vf->value[i] != ' ' && vf->value[i] != '\t' &&
			       vf->value[i] != ',')
				i++;
			char buf[VARY_MAX];
			int len = http_cache_vary_value(req, vf->value + s, i - s, buf, sizeof(buf));
			if (len < 0 || f->nvary == 0xffffu ||
			    !put_record(c, f, vf->value + s, i - s, buf, (size_t)len, true))
				return false;
			f->nvary++;
		}
	}
	return true;
}

/* The 304 path: f becomes the refreshed copy of stale entry s.  *out gets
 * a read reference to what the proxy should send. */
static enum http_cache_fill_result refresh(struct http_cache *c, struct http_cache_entry *f,
					   struct http_cache_entry *s,
					   const struct http_cache_resp *resp, uint64_t now,
					   struct http_cache_entry **out)
{
	s->refs++; /* hold s while f is built: evictions may unlink it, not free it */
	bool ok = true;
	struct http_cache_info in;
	http_cache_info_init(&in);
	/* Vary records as s has them. */
	uint32_t ch = s->meta_first, off = 0;
	const char *n, *v;
	size_t nl, vl;
	(void)rec_at(c, &ch, &off, &n, &nl, &v, &vl);
	for (unsigned i = 0; ok && i < s->nvary; i++) {
		ok = rec_at(c, &ch, &off, &n, &nl, &v, &vl) && put_record(c, f, n, nl, v, vl, false);
		f->nvary++;
	}
	/* s's fields that the 304 does not replace (4.3.4), then the 304's. */
	for (unsigned i = 0; ok && i < s->nfields; i++) {
		if (!rec_at(c, &ch, &off, &n, &nl, &v, &vl)) {
			ok = false;
			break;
		}
		bool replaced = false;
		for (unsigned k = 0; k < resp->nfields && !replaced; k++)
			replaced = http_cache_name_eq(resp->fields[k].name, resp->fields[k].nlen, n,
						      nl) &&
				   keep_field(n, nl, resp);
		if (replaced)
			continue;
		http_cache_info_add(&in, n, nl, v, vl);
		ok = put_record(c, f, n, nl, v, vl, false);
		f->nfields++;
	}
	for (unsigned k = 0; ok && k < resp->nfields; k++) {
		const struct http_cache_field *rf = &resp->fields[k];
		http_cache_info_add(&in, rf->name, rf->nlen, rf->value, rf->vlen);
		if (!keep_field(rf->name, rf->nlen, resp))
			continue;
		ok = put_record(c, f, rf->name, rf->nlen, rf->value, rf->vlen, false);
		f->nfields++;
	}
	/* The body: moved when nobody else reads s, else copied. */
	if (ok && s->refs == 1) {
		f->body_first = s->body_first, f->body_last = s->body_last;
		f->body_len = s->body_len;
		uint32_t nb = 0;
		for (uint32_t k = s->body_first; k != NONE; k = c->links[k])
			nb++;
		f->nchunks += nb;
		s->nchunks -= nb;
		s->body_first = s->body_last = NONE;
		s->body_len = 0;
	} else if (ok) {
		struct http_cache_iter it;
		const uint8_t *p;
		size_t pn;
		for (bool more = http_cache_body_first(c, s, &it, &p, &pn); ok && more;
		     more = http_cache_body_next(c, &it, &p, &pn))
			ok = http_cache_body(c, f, p, pn) == HTTP_CACHE_FILL_OK;
		if (!ok) {
			/* http_cache_body dropped f already. */
			f = NULL;
		}
	}
	c->st.revalidated++;
	if (!ok) {
		/* No room for the refreshed copy: refresh s's freshness in
		 * place (its fields stay as they were) and send s. */
		if (f)
			drop_pending(c, f);
		if (s->state == ENT_READY) {
			struct http_cache_info in2;
			http_cache_info_init(&in2);
			for (unsigned k = 0; k < resp->nfields; k++)
				http_cache_info_add(&in2, resp->fields[k].name, resp->fields[k].nlen,
						    resp->fields[k].value, resp->fields[k].vlen);
			if (http_cache_info_explicit(&in2))
				set_times(s, &in2, s->request_time, now);
			else {
				s->response_time = now;
				s->date_value = now;
				s->age_value = 0;
			}
		}
		*out = s; /* the hold taken above becomes the caller's reference */
		return HTTP_CACHE_FILL_REFRESHED;
	}
	f->status = s->status;
	set_times(f, &in, f->request_time, now);
	bool storable = judge(&in, f->status, f->req_auth);
	http_cache_release(c, s);
	if (!storable) {
		/* Sent once, never stored; and s, which the 304 outdated (and
		 * whose body f may have taken), goes too. */
		if (s->state == ENT_READY)
			unlink_ready(c, s);
		bucket_remove(c, f);
		f->state = ENT_DEAD;
		f->refs = 1;
		*out = f;
		return HTTP_CACHE_FILL_REFRESHED;
	}
	f->flags |= EF_HEADED;
	(void)http_cache_end(c, f, now);
	c->st.stored--; /* counted as revalidated, not as a new store */
	f->refs++;
	*out = f;
	return HTTP_CACHE_FILL_REFRESHED;
}

/* Is the NUL-terminated stored value z exactly the n bytes at v? */
static bool str_is(const char *z, const char *v, size_t n)
{
	size_t i = 0;
	while (i < n && z[i] && z[i] == v[i])
		i++;
	return i == n && z[i] == 0;
}

/* For a 304 whose revalidated entry went: the READY entry of f's key and
 * the request's variant that the 304's validator selects (RFC 9111
 * 4.3.4): the same strong ETag, or, when neither has an ETag, the same
 * Last-Modified.  NULL when none does (the 304 is then DROPPED). */
static struct http_cache_entry *same_validator(struct http_cache *c,
					       const struct http_cache_entry *f,
					       const struct http_cache_req *req,
					       const struct http_cache_resp *resp)
{
	const char *etag = NULL, *lm = NULL;
	size_t el = 0, ll = 0;
	for (unsigned k = 0; k < resp->nfields; k++) {
		const struct http_cache_field *rf = &resp->fields[k];
		if (http_cache_name_is(rf->name, rf->nlen, "etag"))
			etag = rf->value, el = rf->vlen;
		else if (http_cache_name_is(rf->name, rf->nlen, "last-modified"))
			lm = rf->value, ll = rf->vlen;
	}
	if (etag && el >= 2 && etag[0] == 'W' && etag[1] == '/')
		return NULL; /* a weak validator selects nothing for update */
	if (!etag && !lm)
		return NULL;
	for (uint32_t i = c->buckets[f->hash & (c->nbuckets - 1)]; i != NONE; i = c->ents[i].bnext) {
		struct http_cache_entry *e = &c->ents[i];
		if (e == f || e->state != ENT_READY || !(e->flags & EF_VALIDATOR) ||
		    !key_match(c, e, f->hash, req->host, req->host_len, req->target,
			       req->target_len) ||
		    !vary_match(c, e, req))
			continue;
		const char *se = field_find(c, e, "etag");
		if (etag) {
			if (se && str_is(se, etag, el))
				return e;
			continue;
		}
		const char *sl = field_find(c, e, "last-modified");
		if (!se && sl && str_is(sl, lm, ll))
			return e;
	}
	return NULL;
}

enum http_cache_fill_result http_cache_head(struct http_cache *c, struct http_cache_entry *f,
					    const struct http_cache_req *req,
					    const struct http_cache_resp *resp, uint64_t now,
					    struct http_cache_entry **out)
{
	if (out)
		*out = NULL;
	if (resp->status == 304 && f->reval != NONE && out) {
		struct http_cache_entry *s = &c->ents[f->reval];
		if (s->gen == f->reval_gen && (s->state == ENT_READY || s->state == ENT_DEAD))
			return refresh(c, f, s, resp, now, out);
		/* The entry this fill revalidated is gone: under concurrent
		 * no-cache requests another revalidation's 304 made a refreshed
		 * copy and the copy replaced it.  The 304 still updates the
		 * stored response its validator selects (RFC 9111 4.3.4);
		 * dropping it instead made the proxy ask the upstream twice. */
		s = same_validator(c, f, req, resp);
		if (s)
			return refresh(c, f, s, resp, now, out);
	}
	struct http_cache_info in;
	http_cache_info_init(&in);
	for (unsigned k = 0; k < resp->nfields; k++)
		http_cache_info_add(&in, resp->fields[k].name, resp->fields[k].nlen,
				    resp->fields[k].value, resp->fields[k].vlen);
	if (!judge(&in, resp->status, f->req_auth)) {
		c->st.uncacheable++;
		drop_pending(c, f);
		return HTTP_CACHE_FILL_DROPPED;
	}
	bool ok = put_vary(c, f, req, resp);
	for (unsigned k = 0; ok && k < resp->nfields; k++) {
		const struct http_cache_field *rf = &resp->fields[k];
		if (!keep_field(rf->name, rf->nlen, resp))
			continue;
		ok = f->nfields < 0xffffu &&
		     put_record(c, f, rf->name, rf->nlen, rf->value, rf->vlen, false);
		f->nfields++;
	}
	if (!ok) {
		c->st.fill_dropped++;
		drop_pending(c, f);
		return HTTP_CACHE_FILL_DROPPED;
	}
	f->status = resp->status;
	set_times(f, &in, f->request_time, now);
	f->flags |= EF_HEADED;
	return HTTP_CACHE_FILL_OK;
}

enum http_cache_fill_result http_cache_body(struct http_cache *c, struct http_cache_entry *f,
					    const void *data, size_t len)
{
	uint32_t cs = c->cfg.chunk_size;
	const uint8_t *d = data;
	while (len) {
		uint32_t used = (uint32_t)(f->body_len % cs);
		if (f->body_last == NONE || used == 0) {
			uint32_t k = NONE;
			if ((uint64_t)(f->nchunks + 1) * cs <= c->cfg.max_entry)
				k = alloc_chunk(c);
			if (k == NONE) {
				c->st.fill_dropped++;
				drop_pending(c, f);
				return HTTP_CACHE_FILL_DROPPED;
			}
			if (f->body_last == NONE)
				f->body_first = k;
			else
				c->links[f->body_last] = k;
			f->body_last = k;
			f->nchunks++;
		}
		size_t n = SK_MIN(len, (size_t)(cs - used));
		sk_memcpy(chunk(c, f->body_last) + used, d, n);
		f->body_len += n;
		d += n;
		len -= n;
	}
	return HTTP_CACHE_FILL_OK;
}

enum http_cache_fill_result http_cache_end(struct http_cache *c, struct http_cache_entry *f,
					   uint64_t now)
{
	(void)now;
	if (!(f->flags & EF_HEADED)) {
		/* end before head: nothing to store. */
		c->st.fill_aborted++;
		drop_pending(c, f);
		return HTTP_CACHE_FILL_DROPPED;
	}
	/* Older entries of the same key and variant, and the stale entry this
	 * answered for, are replaced (4.3.3: the newer response wins). */
	uint32_t i = c->buckets[f->hash & (c->nbuckets - 1)];
	while (i != NONE) {
		struct http_cache_entry *e = &c->ents[i];
		i = e->bnext;
		if (e == f || e->state != ENT_READY || e->hash != f->hash)
			continue;
		bool same_key = e->idx == f->reval && e->gen == f->reval_gen;
		if (!same_key) {
			const uint8_t *a = chunk(c, e->meta_first), *b = chunk(c, f->meta_first);
			size_t kl = REC_HDR + get16(a) + 1 + get16(a + 2) + 1;
			same_key = get16(a) == get16(b) && get16(a + 2) == get16(b + 2) &&
				   sk_memcmp(a, b, kl) == 0 && same_variant(c, e, f);
		}
		if (same_key) {
			c->st.replaced++;
			unlink_ready(c, e);
		}
	}
	f->state = ENT_READY;
	f->reval = NONE;
	f->user = NULL;
	lru_push(c, f);
	c->st.stored++;
	c->st.entries++;
	return HTTP_CACHE_FILL_STORED;
}

void http_cache_abort(struct http_cache *c, struct http_cache_entry *f)
{
	c->st.fill_aborted++;
	drop_pending(c, f);
}

void http_cache_fill_set_user(struct http_cache_entry *f, void *user)
{
	f->user = user;
}

void *http_cache_fill_user(const struct http_cache_entry *f)
{
	return f->user;
}

/* ---- reading ---- */

uint16_t http_cache_status(const struct http_cache_entry *e)
{
	return e->status;
}

unsigned http_cache_nfields(const struct http_cache_entry *e)
{
	return e->nfields;
}

bool http_cache_field_first(const struct http_cache *c, const struct http_cache_entry *e,
			    struct http_cache_fiter *it, const char **name, const char **value)
{
	fields_start(c, e, &it->chunk, &it->off);
	it->left = e->nfields;
	return http_cache_field_next(c, it, name, value);
}

bool http_cache_field_next(const struct http_cache *c, struct http_cache_fiter *it,
			   const char **name, const char **value)
{
	size_t nl, vl;
	if (!it->left || !rec_at(c, &it->chunk, &it->off, name, &nl, value, &vl))
		return false;
	it->left--;
	return true;
}

uint64_t http_cache_body_len(const struct http_cache_entry *e)
{
	return e->body_len;
}

bool http_cache_body_first(const struct http_cache *c, const struct http_cache_entry *e,
			   struct http_cache_iter *it, const uint8_t **p, size_t *n)
{
	it->chunk = e->body_first;
	it->left = e->body_len;
	return http_cache_body_next(c, it, p, n);
}

bool http_cache_body_next(const struct http_cache *c, struct http_cache_iter *it,
			  const uint8_t **p, size_t *n)
{
	if (!it->left || it->chunk == NONE)
		return false;
	*p = chunk(c, it->chunk);
	*n = (size_t)SK_MIN(it->left, (uint64_t)c->cfg.chunk_size);
	it->left -= *n;
	it->chunk = c->links[it->chunk];
	return true;
}

void http_cache_release(struct http_cache *c, struct http_cache_entry *e)
{
	if (e->refs && --e->refs == 0 && e->state == ENT_DEAD)
		free_entry(c, e);
}

/* ---- purge, stats, check ---- */

unsigned http_cache_purge(struct http_cache *c, const char *host, size_t host_len,
			  const char *target, size_t target_len)
{
	uint64_t h = key_hash(host, host_len, target, target_len);
	unsigned n = 0;
	uint32_t i = c->buckets[h & (c->nbuckets - 1)];
	while (i != NONE) {
		struct http_cache_entry *e = &c->ents[i];
		i = e->bnext;
		if (e->state == ENT_READY && key_match(c, e, h, host, host_len, target, target_len)) {
			unlink_ready(c, e);
			n++;
		}
	}
	c->st.purged += n;
	return n;
}

unsigned http_cache_purge_request(struct http_cache *c, const char *host, size_t host_len,
				  const char *target, size_t target_len)
{
	c->st.purges++;
	return http_cache_purge(c, host, host_len, target, target_len);
}

void http_cache_stats(const struct http_cache *c,
		      void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
#define HTTP_CACHE_STAT_PRINT(n) fn(ctx, "cache." #n, c->st.n);
	HTTP_CACHE_STATS(HTTP_CACHE_STAT_PRINT)
#undef HTTP_CACHE_STAT_PRINT
}

static uint32_t chain_len(const struct http_cache *c, uint32_t first, uint32_t *last)
{
	uint32_t n = 0;
	*last = NONE;
	for (uint32_t k = first; k != NONE && n <= c->nchunks; k = c->links[k]) {
		*last = k;
		n++;
	}
	return n;
}

int http_cache_check(const struct http_cache *c)
{
	uint32_t held = 0, ready = 0, in_lru = 0, in_buckets = 0, nfree = 0;
	for (uint32_t i = 0; i < c->nents; i++) {
		const struct http_cache_entry *e = &c->ents[i];
		SK_CHECK(e->idx == i);
		if (e->state == ENT_FREE) {
			SK_CHECK(e->meta_first == NONE && e->body_first == NONE && !e->refs);
			continue;
		}
		SK_CHECK(e->meta_first != NONE);
		uint32_t ml, bl;
		uint32_t nm = chain_len(c, e->meta_first, &ml);
		uint32_t nb = chain_len(c, e->body_first, &bl);
		SK_CHECK(ml == e->meta_last);
		SK_CHECK(bl == e->body_last);
		SK_CHECK(nm + nb == e->nchunks);
		uint32_t cs = c->cfg.chunk_size;
		SK_CHECK(e->body_len <= (uint64_t)nb * cs && e->body_len + cs > (uint64_t)nb * cs);
		held += nm + nb;
		if (e->state == ENT_READY)
			ready++;
		if (e->state == ENT_DEAD)
			SK_CHECK(e->refs > 0);
		if (e->state == ENT_PENDING)
			SK_CHECK(e->lru_prev == NONE && e->lru_next == NONE && c->lru_head != i);
	}
	for (uint32_t i = c->ent_free; i != NONE && nfree <= c->nents; i = c->ents[i].bnext) {
		SK_CHECK(c->ents[i].state == ENT_FREE);
		nfree++;
	}
	for (uint32_t b = 0; b < c->nbuckets; b++)
		for (uint32_t i = c->buckets[b]; i != NONE; i = c->ents[i].bnext) {
			const struct http_cache_entry *e = &c->ents[i];
			SK_CHECK(e->state == ENT_READY || e->state == ENT_PENDING);
			SK_CHECK((e->hash & (c->nbuckets - 1)) == b);
			SK_CHECK(++in_buckets <= c->nents);
		}
	uint32_t prev = NONE;
	for (uint32_t i = c->lru_head; i != NONE; i = c->ents[i].lru_next) {
		SK_CHECK(c->ents[i].state == ENT_READY);
		SK_CHECK(c->ents[i].lru_prev == prev);
		prev = i;
		SK_CHECK(++in_lru <= c->nents);
	}
	SK_CHECK(prev == c->lru_tail);
	SK_CHECK(in_lru == ready);
	SK_CHECK(ready == c->st.entries);
	uint32_t fc = 0;
	for (uint32_t k = c->chunk_free; k != NONE && fc <= c->nchunks; k = c->links[k])
		fc++;
	SK_CHECK(fc == c->free_chunks);
	SK_CHECK(held + fc == c->nchunks);
	SK_CHECK(c->st.bytes == (uint64_t)held * c->cfg.chunk_size);
	uint32_t used = 0;
	for (uint32_t i = 0; i < c->nents; i++)
		used += c->ents[i].state != ENT_FREE;
	SK_CHECK(used + nfree == c->nents);
	return 0;
}
