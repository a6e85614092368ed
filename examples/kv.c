/* kv.c — an in-memory key-value store on http/app.h.
 *
 *   PUT    /kv/KEY   store the body (0 B .. 1 MiB) as KEY's value: 201 new,
 *                    204 replaced; 413 over 1 MiB; 507 when the store is full
 *   GET    /kv/KEY   the value, with an ETag (If-None-Match: 304); 404
 *   HEAD   /kv/KEY   the same without the body
 *   DELETE /kv/KEY   204; 404
 *   GET    /kv/      the keys, one a line (chunked)
 *
 * Bounded, and freestanding like the engine (no malloc: it also runs in
 * the unikernel): KV_KEYS keys at most, and values held in a static pool
 * of KV_BLOCK-byte blocks (KV_POOL bytes).  A value is a chain of blocks,
 * so nothing is ever moved and the pool never fragments.
 *
 * Streaming both ways: a PUT's body goes into fresh blocks piece by piece
 * as it arrives (never buffered whole; a Content-Length that cannot fit is
 * refused with 507 before the client sends it), and replaces the old value
 * only when complete, so a GET sees the old value or the new one, never
 * half.  A GET streams the chain under back-pressure.  A value being sent
 * is held by a reference (kv_val.refs) until the request is over
 * (on_done), so a DELETE or PUT meanwhile never frees blocks still being
 * read.
 *
 * One store for all workers (hosted --workers N): see "workers" below.
 */
#include "http/app.h"
#include "http/etag.h"

#ifndef KV_POOL
#define KV_POOL (64u << 20)  /* bytes of values */
#endif
#define KV_BLOCK 4096u
#define KV_NBLOCKS (KV_POOL / KV_BLOCK)
#define KV_KEYS 4096u        /* keys at most */
#define KV_NVALS (KV_KEYS + 512u) /* values: current ones + ones still being sent or received */
#define KV_HASH (2u * KV_KEYS) /* open addressing, load <= 1/2 */
#define KV_KEY_MAX 250u
#define KV_VALUE_MAX (1u << 20)

struct kv_block {
	uint32_t next; /* index + 1 of the next block of the chain, 0 = last */
	uint8_t data[KV_BLOCK];
};

/* A value: immutable once complete. */
struct kv_val {
	uint32_t first, last; /* block chain (index + 1; 0 = none) */
	uint32_t len;
	uint32_t refs;        /* the key holding it + requests sending or building it */
	uint64_t hash;        /* FNV-1a 64 of the bytes: the ETag */
	uint32_t next_free;
};

struct kv_key {
	uint32_t val;         /* index + 1 in vals; 0 = empty; KV_TOMB = deleted */
	uint16_t klen;
	char key[KV_KEY_MAX + 1];
};
#define KV_TOMB UINT32_MAX

/* ---- workers ----
 * Hosted with --workers N (http_app_def.workers) the handlers below run
 * on N threads at once, and the store is one: every entry into this file
 * (a handler, a body piece, a write or done callback, the init) holds one
 * lock.  Entries nest (a write can end the request and run its done
 * callback), so the lock counts its depth per thread.  The store's work
 * is short (a lookup, a copy of one piece), so waiting is a spin that
 * yields.  The unikernel runs an application on one vCPU: no lock there. */
#if __STDC_HOSTED__
#include <sched.h>
#include <stdatomic.h>
static atomic_flag kv_lock = ATOMIC_FLAG_INIT;
static _Thread_local unsigned kv_depth;

static void kv_enter(void)
{
	if (kv_depth++ == 0)
		while (atomic_flag_test_and_set_explicit(&kv_lock, memory_order_acquire))
			sched_yield();
}

static void kv_leave(void)
{
	if (--kv_depth == 0)
		atomic_flag_clear_explicit(&kv_lock, memory_order_release);
}
#else
static void kv_enter(void)
{
}

static void kv_leave(void)
{
}
#endif

static struct kv_block blocks[KV_NBLOCKS];
static struct kv_val vals[KV_NVALS];
static struct kv_key table[KV_HASH];
static uint32_t block_free, val_free, nkeys, ntombs, blocks_free_count;
static bool kv_ready;

static void kv_init(void)
{
	for (uint32_t i = KV_NBLOCKS; i-- > 0;) {
		blocks[i].next = block_free;
		block_free = i + 1;
	}
	blocks_free_count = KV_NBLOCKS;
	for (uint32_t i = KV_NVALS; i-- > 0;) {
		vals[i].next_free = val_free;
		val_free = i + 1;
	}
	kv_ready = true;
}

static uint32_t block_alloc(void)
{
	uint32_t b = block_free;
	if (b) {
		block_free = blocks[b - 1].next;
		blocks[b - 1].next = 0;
		blocks_free_count--;
	}
	return b;
}

static uint32_t val_alloc(void)
{
	uint32_t v = val_free;
	if (v) {
		val_free = vals[v - 1].next_free;
		vals[v - 1] = (struct kv_val){.refs = 1, .hash = 0xcbf29ce484222325ull};
	}
	return v;
}

static void val_unref(uint32_t v)
{
	struct kv_val *x = &vals[v - 1];
	if (--x->refs)
		return;
	for (uint32_t b = x->first; b;) {
		uint32_t n = blocks[b - 1].next;
		blocks[b - 1].next = block_free;
		block_free = b;
		blocks_free_count++;
		b = n;
	}
	x->next_free = val_free;
	val_free = v;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The slot of key, or (insert) the first free slot on its probe path. */
static struct kv_key *find(const char *key, size_t klen, bool insert)
{
	uint32_t i = (uint32_t)fnv(0xcbf29ce484222325ull, (const uint8_t *)key, klen) % KV_HASH;
	struct kv_key *tomb = NULL;
	for (uint32_t n = 0; n < KV_HASH; n++, i = (i + 1) % KV_HASH) {
		struct kv_key *k = &table[i];
		if (k->val == 0)
			return insert ? (tomb ? tomb : k) : NULL;
		if (k->val == KV_TOMB) {
			if (!tomb)
				tomb = k;
			continue;
		}
		if (k->klen == klen && sk_memcmp(k->key, key, klen) == 0)
			return k;
	}
	return insert ? tomb : NULL;
}

/* Deleted slots lengthen probes: once they are many, rebuild the table
 * in place (re-insert every live key; KV_HASH steps, rare). */
static void rehash(void)
{
	static struct kv_key old[KV_HASH];
	sk_memcpy(old, table, sizeof(table));
	sk_memset(table, 0, sizeof(table));
	for (uint32_t i = 0; i < KV_HASH; i++)
		if (old[i].val && old[i].val != KV_TOMB)
			*find(old[i].key, old[i].klen, true) = old[i];
	ntombs = 0;
}

static void etag_of(const struct kv_val *v, char out[19])
{
	static const char hex[] = "0123456789abcdef";
	out[0] = '"';
	for (int i = 0; i < 16; i++)
		out[1 + i] = hex[(v->hash >> (60 - 4 * i)) & 15];
	out[17] = '"';
	out[18] = 0;
}

/* The key of /kv/KEY: 1..KV_KEY_MAX bytes, no control bytes (a key is
 * one line of the listing). */
static const char *key_of(struct http_app_req *r, size_t *klen)
{
	const char *k = http_app_rest(r, klen);
	if (*klen == 0 || *klen > KV_KEY_MAX)
		return NULL;
	for (size_t i = 0; i < *klen; i++)
		if ((uint8_t)k[i] < 0x20 || k[i] == 0x7f)
			return NULL;
	return k;
}

static int text(struct http_app_req *r, int status, const char *msg)
{
	http_app_header(r, "Content-Type", "text/plain");
	size_t n = 0;
	while (msg[n])
		n++;
	return http_app_send(r, status, msg, n);
}

/* ---- GET ---- */

/* One request sending a value: where it is in the chain.  Lives in the
 * per-connection table below (one request at a time per connection). */
struct kv_get {
	uint32_t val, block, off; /* block: index + 1 of the block being sent */
	bool busy;
};
static struct kv_get get_slots[KV_NVALS];

static void get_done_in(struct http_app_req *r, void *ctx, bool ok)
{
	(void)r;
	(void)ok;
	struct kv_get *g = ctx;
	val_unref(g->val);
	g->busy = false;
}

static void get_done(struct http_app_req *r, void *ctx, bool ok)
{
	kv_enter();
	get_done_in(r, ctx, ok);
	kv_leave();
}

static void get_more_in(struct http_app_req *r, void *ctx)
{
	struct kv_get *g = ctx;
	while (g->block) {
		const struct kv_val *v = &vals[g->val - 1];
		uint32_t in_block = g->block == v->last && v->len % KV_BLOCK ? v->len % KV_BLOCK
									      : KV_BLOCK;
		long n = http_app_write(r, blocks[g->block - 1].data + g->off, in_block - g->off);
		if (n <= 0)
			return; /* full: called again when there is room */
		g->off += (uint32_t)n;
		if (g->off == in_block) {
			g->block = blocks[g->block - 1].next;
			g->off = 0;
		}
	}
	http_app_end(r);
}

static void get_more(struct http_app_req *r, void *ctx)
{
	kv_enter();
	get_more_in(r, ctx);
	kv_leave();
}

static int kv_get_in(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	size_t klen;
	const char *key = key_of(r, &klen);
	if (!key)
		return text(r, 400, "bad key\n");
	struct kv_key *k = find(key, klen, false);
	if (!k)
		return text(r, 404, "no such key\n");
	struct kv_val *v = &vals[k->val - 1];
	char etag[19];
	etag_of(v, etag);
	http_app_header(r, "ETag", etag);
	size_t inm_len;
	const char *inm = http_app_header_get(r, "If-None-Match", &inm_len);
	if (inm && http_etag_list_match((const uint8_t *)inm, inm_len, etag, 18, HTTP_ETAG_WEAK, true))
		return http_app_send(r, 304, NULL, 0);
	/* A free sending slot: there are more than connections can use. */
	struct kv_get *g = NULL;
	for (uint32_t i = 0; i < KV_NVALS && !g; i++)
		if (!get_slots[i].busy)
			g = &get_slots[i];
	if (!g)
		return text(r, 503, "busy\n");
	*g = (struct kv_get){.val = k->val, .block = v->first, .off = 0, .busy = true};
	v->refs++;
	http_app_on_done(r, get_done, g);
	http_app_header(r, "Content-Type", "application/octet-stream");
	return http_app_stream(r, 200, v->len, get_more, g);
}

static int kv_get(struct http_app_req *r, void *ctx)
{
	kv_enter();
	int rc = kv_get_in(r, ctx);
	kv_leave();
	return rc;
}

/* ---- PUT ---- */

struct kv_put {
	uint32_t val;  /* the value being built; 0 after it was stored or dropped */
	bool busy, failed;
	char key[KV_KEY_MAX + 1];
	uint16_t klen;
};
static struct kv_put put_slots[KV_NVALS];

static void put_done_in(struct http_app_req *r, void *ctx, bool ok)
{
	(void)r;
	(void)ok;
	struct kv_put *p = ctx;
	if (p->val)
		val_unref(p->val); /* never stored: its blocks go back */
	p->val = 0;
	p->busy = false;
}

static void put_done(struct http_app_req *r, void *ctx, bool ok)
{
	kv_enter();
	put_done_in(r, ctx, ok);
	kv_leave();
}

/* Store the complete value under the key; 201 or 204, or 507. */
static void put_commit(struct http_app_req *r, struct kv_put *p)
{
	struct kv_key *k = find(p->key, p->klen, false);
	bool fresh = !k;
	if (!k) {
		if (nkeys >= KV_KEYS) {
			text(r, 507, "store full (keys)\n");
			return;
		}
		if (ntombs > KV_KEYS / 2)
			rehash();
		k = find(p->key, p->klen, true);
		if (k->val == KV_TOMB)
			ntombs--;
		sk_memcpy(k->key, p->key, p->klen);
		k->key[p->klen] = 0;
		k->klen = p->klen;
		nkeys++;
	} else {
		val_unref(k->val);
	}
	k->val = p->val; /* the key takes the builder's reference */
	p->val = 0;
	char etag[19];
	etag_of(&vals[k->val - 1], etag);
	http_app_header(r, "ETag", etag);
	http_app_send(r, fresh ? 201 : 204, NULL, 0);
}

static long put_piece_in(struct http_app_req *r, void *ctx, const uint8_t *data,
			 size_t len, bool end)
{
	struct kv_put *p = ctx;
	if (p->failed)
		return (long)len; /* answered already: drop the rest */
	if (end) {
		put_commit(r, p);
		return 0;
	}
	struct kv_val *v = &vals[p->val - 1];
	if (v->len + len > KV_VALUE_MAX) {
		p->failed = true;
		text(r, 413, "a value holds at most 1 MiB\n");
		return (long)len;
	}
	v->hash = fnv(v->hash, data, len);
	size_t done = 0;
	while (done < len) {
		uint32_t used = v->len % KV_BLOCK;
		if (v->last == 0 || (used == 0 && v->len > 0)) {
			uint32_t b = block_alloc();
			if (!b) {
				p->failed = true;
				text(r, 507, "store full\n");
				return (long)len;
			}
			if (v->last)
				blocks[v->last - 1].next = b;
			else
				v->first = b;
			v->last = b;
		}
		size_t n = KV_BLOCK - used;
		if (n > len - done)
			n = len - done;
		sk_memcpy(blocks[v->last - 1].data + used, data + done, n);
		v->len += (uint32_t)n;
		done += n;
	}
	return (long)len;
}

static long put_piece(struct http_app_req *r, void *ctx, const uint8_t *data, size_t len,
		  bool end)
{
	kv_enter();
	long rc = put_piece_in(r, ctx, data, len, end);
	kv_leave();
	return rc;
}

static int kv_put_in(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	size_t klen;
	const char *key = key_of(r, &klen);
	if (!key)
		return text(r, 400, "bad key\n");
	uint64_t clen = http_app_body_length(r);
	if (clen != HTTP_APP_CHUNKED && clen > KV_VALUE_MAX)
		return text(r, 413, "a value holds at most 1 MiB\n");
	/* Known length: refuse at once what the pool cannot hold, before the
	 * client sends it (with Expect: 100-continue it never does). */
	if (clen != HTTP_APP_CHUNKED && (clen + KV_BLOCK - 1) / KV_BLOCK > blocks_free_count)
		return text(r, 507, "store full\n");
	if (!find(key, klen, false) && nkeys >= KV_KEYS)
		return text(r, 507, "store full (keys)\n");
	struct kv_put *p = NULL;
	for (uint32_t i = 0; i < KV_NVALS && !p; i++)
		if (!put_slots[i].busy)
			p = &put_slots[i];
	uint32_t v = p ? val_alloc() : 0;
	if (!v)
		return text(r, 503, "busy\n");
	p->busy = true;
	p->failed = false;
	p->val = v;
	sk_memcpy(p->key, key, klen);
	p->klen = (uint16_t)klen;
	http_app_on_done(r, put_done, p);
	if (!http_app_has_body(r)) {
		put_commit(r, p);
		return 0;
	}
	return http_app_body_stream(r, put_piece, p);
}

static int kv_put(struct http_app_req *r, void *ctx)
{
	kv_enter();
	int rc = kv_put_in(r, ctx);
	kv_leave();
	return rc;
}

/* ---- DELETE ---- */

static int kv_delete_in(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	size_t klen;
	const char *key = key_of(r, &klen);
	if (!key)
		return text(r, 400, "bad key\n");
	struct kv_key *k = find(key, klen, false);
	if (!k)
		return text(r, 404, "no such key\n");
	val_unref(k->val);
	k->val = KV_TOMB;
	nkeys--;
	ntombs++;
	return http_app_send(r, 204, NULL, 0);
}

static int kv_delete(struct http_app_req *r, void *ctx)
{
	kv_enter();
	int rc = kv_delete_in(r, ctx);
	kv_leave();
	return rc;
}

/* ---- GET /kv/: the listing, one key a line ---- */

struct kv_list {
	uint32_t slot;
	bool busy;
};
static struct kv_list lists[64];

static void list_done_in(struct http_app_req *r, void *ctx, bool ok)
{
	(void)r;
	(void)ok;
	((struct kv_list *)ctx)->busy = false;
}

static void list_done(struct http_app_req *r, void *ctx, bool ok)
{
	kv_enter();
	list_done_in(r, ctx, ok);
	kv_leave();
}

/* Keys added or removed while a listing is sent may or may not be in it;
 * every key present throughout is, once. */
static void list_more_in(struct http_app_req *r, void *ctx)
{
	struct kv_list *l = ctx;
	for (; l->slot < KV_HASH; l->slot++) {
		const struct kv_key *k = &table[l->slot];
		if (k->val == 0 || k->val == KV_TOMB)
			continue;
		/* One write per line: one chunk per key, not two. */
		char line[KV_KEY_MAX + 1];
		if (http_app_writable(r) < (size_t)k->klen + 1)
			return;
		sk_memcpy(line, k->key, k->klen);
		line[k->klen] = '\n';
		http_app_write(r, line, (size_t)k->klen + 1);
	}
	http_app_end(r);
}

static void list_more(struct http_app_req *r, void *ctx)
{
	kv_enter();
	list_more_in(r, ctx);
	kv_leave();
}

static int kv_list_in(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	struct kv_list *l = NULL;
	for (unsigned i = 0; i < SK_ARRAY_LEN(lists) && !l; i++)
		if (!lists[i].busy)
			l = &lists[i];
	if (!l)
		return text(r, 503, "busy\n");
	*l = (struct kv_list){.slot = 0, .busy = true};
	http_app_on_done(r, list_done, l);
	http_app_header(r, "Content-Type", "text/plain");
	return http_app_stream(r, 200, HTTP_APP_CHUNKED, list_more, l);
}

static int kv_list(struct http_app_req *r, void *ctx)
{
	kv_enter();
	int rc = kv_list_in(r, ctx);
	kv_leave();
	return rc;
}

static int kv_start_in(struct http_app *app, void *ctx)
{
	(void)app;
	(void)ctx;
	if (!kv_ready)
		kv_init();
	return 0;
}

static int kv_start(struct http_app *app, void *ctx)
{
	kv_enter();
	int rc = kv_start_in(app, ctx);
	kv_leave();
	return rc;
}

/* Table order matters: "/kv/" exactly is the listing, longer paths keys. */
static const struct http_app_route routes[] = {
	{HTTP_GET, "/kv/", false, kv_list, NULL},
	{HTTP_GET, "/kv/", true, kv_get, NULL},
	{HTTP_PUT, "/kv/", true, kv_put, NULL},
	{HTTP_DELETE, "/kv/", true, kv_delete, NULL},
};

const struct http_app_def skiff_app = {.routes = routes, .nroutes = SK_ARRAY_LEN(routes),
				       .name = "kv", .init = kv_start, .workers = true};
