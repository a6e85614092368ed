/* proxy.c — the exchanges of proxy.h: a request from the application
 * engine, one upstream connection at a time, the answer back.
 *
 * An exchange's phases (x->phase):
 *   X_SEND  the head (and body pieces) go up; no response byte yet: a
 *           failure here may be retried (x_retry_ok);
 *   X_HEAD  response bytes arrived, the head is not complete: from here
 *           on nothing is retried;
 *   X_BODY  the head went to the client (http_app_stream), the body is
 *           pumped rx -> http_app_write;
 *   X_DONE  our side is finished (answered, or cut): waiting for the
 *           engine's on_done.
 * An upstream connection's states (uc->state): UC_FREE, UC_CONNECTING,
 * UC_BUSY (bound to x), UC_IDLE (in its upstream's pool).
 *
 * Re-entrancy: a call into the engine (http_app_send/write/end/abort,
 * http_app_body_resume) may run the client connection at once, so the
 * engine's on_done (x_done) may run inside it.  x_done only unbinds and
 * marks; the exchange is freed when the outermost proxy frame for it
 * unwinds (x_enter/x_leave).  Every caller checks x->r after such a call.
 *
 * Buffers: tx holds [0, headlen) the head toward the origin, kept while a
 * retry is possible, then body pieces (chunk-framed when the client's body
 * was chunked); [txpos, txlen) is unsent.  rx holds the origin's bytes:
 * [hstart, rpos) the head being parsed (kept whole: the forwarded fields
 * are read from it), then raw body bytes [rpos, rxlen) and decoded ones
 * [doff, doff + dlen) not yet taken by the client. */
#include "proxy.h"

#include "cache.h"
#include "chunked.h"
#include "emit.h"
#include "proxy_hdr.h"

enum { X_FREE, X_SEND, X_HEAD, X_BODY, X_DONE, X_WAIT, X_HIT };
enum { UC_FREE, UC_CONNECTING, UC_BUSY, UC_IDLE };

struct proxy_uconn {
	struct proxy *px;
	struct proxy_uconn *next;   /* the free list, or its upstream's idle list */
	struct proxy_xchg *x;       /* UC_CONNECTING / UC_BUSY: the exchange */
	struct loop_timer timer;    /* connect, first byte, body idle, pool idle */
	sk_time_ns since;           /* connect began / went idle */
	int sock;                   /* -1 when free */
	uint8_t state, up;
	bool reused;                /* taken from the pool for this exchange */
};

struct proxy_xchg {
	struct proxy *px;
	struct proxy_xchg *next_free;
	struct http_app_req *r;     /* NULL once the engine said the request is over */
	struct proxy_uconn *uc;     /* the upstream connection, or NULL */
	uint8_t phase;
	uint8_t bkind;              /* enum http_body_kind of the answer */
	uint8_t attempts;
	uint8_t busy;               /* proxy frames running for x (x_enter) */
	bool dead;                  /* on_done ran while busy: free at x_leave */
	bool head_req;
	bool body_started;          /* a byte of the client's body was taken */
	bool body_done;             /* ... and its end (the last chunk queued) */
	bool body_paused;           /* the body callback took less: resume on room */
	bool drop_body;             /* the rest of the client's body is read and dropped */
	bool req_chunked;
	bool up_eof;
	bool has_body;
	bool pumping;               /* x_pump runs: a nested x_room only marks again */
	bool again;
	uint32_t tried;             /* a bit per upstream tried */
	uint8_t *tx, *rx;
	uint32_t headlen, txlen, txpos;
	uint32_t hstart, rpos, rxlen, doff, dlen;
	uint64_t left;              /* HTTP_BODY_LENGTH: bytes not yet read */
	sk_time_ns sent_at;         /* the last request byte left (first-byte timer) */
	sk_time_ns last_rx;         /* the last origin byte arrived (idle timer) */
	/* The cache (proxy->cache set): */
	struct http_cache_entry *fill;  /* this exchange's fill in flight, or NULL */
	struct http_cache_entry *hit;   /* X_HIT: the read reference being sent */
	struct proxy_xchg *waiters;     /* requests queued on our fill (coalesced) */
	struct proxy_xchg *next_wait;   /* X_WAIT: the next one on owner's list */
	struct proxy_xchg *owner;       /* X_WAIT: whose fill we wait for */
	bool nofill;                    /* forward without filling (after a wait) */
	const uint8_t *hp;              /* X_HIT: the piece being sent */
	size_t hn;
	struct http_cache_iter it;
	struct http_resp resp;
	struct http_chunked ch;
};

#define CHUNK_FRAME 24u /* "ffffffffffffffff\r\n" + "\r\n" ... and "0\r\n\r\n" */

static void x_pump(struct proxy_xchg *x);
static void x_read(struct proxy_xchg *x);
static void x_attempt(struct proxy_xchg *x);
static void x_room(struct http_app_req *r, void *ctx);
static void x_unwait(struct proxy_xchg *x);
static void x_hit_release(struct proxy_xchg *x);
static void x_fill_abort(struct proxy_xchg *x);
static void uc_arm(struct proxy_uconn *uc);

/* ---- config and memory ---- */

void proxy_config_default(struct proxy_config *cfg)
{
	sk_memset(cfg, 0, sizeof(*cfg));
	cfg->balance = PROXY_RR;
	cfg->pool = 32;
	cfg->max_xchg = 256;
	cfg->rx_size = 32768;
	cfg->tx_size = HTTP_HEAD_MAX + 2048u + 16384u;
	cfg->connect_timeout = 5 * SK_NS_PER_S;
	cfg->first_byte_timeout = 60 * SK_NS_PER_S;
	cfg->idle_timeout = 60 * SK_NS_PER_S;
	cfg->fail_max = 3;
	cfg->fail_timeout = 10 * SK_NS_PER_S;
	cfg->via = "skiff";
	cfg->x_cache = true;
	/* PURGE from loopback only: 127.0.0.0/8 (mapped: /104) and ::1 */
	cfg->purge_allow[0] = (struct proxy_prefix){sk_addr_v4(0x7f000000u), 104};
	struct sk_addr one = {{0}};
	one.b[15] = 1;
	cfg->purge_allow[1] = (struct proxy_prefix){one, 128};
	cfg->npurge_allow = 2;
}

#define ALIGN16(x) (((x) + 15u) & ~(size_t)15u)

static bool cfg_ok(const struct proxy_config *c)
{
	return c->nup >= 1 && c->nup <= PROXY_MAX_UPSTREAMS && c->max_xchg >= 1 &&
	       c->max_xchg <= (1u << 20) && c->pool <= 65536 &&
	       c->rx_size >= HTTP_HEAD_MAX + 1024u && c->rx_size <= (1u << 24) &&
	       c->tx_size >= HTTP_HEAD_MAX + 2048u && c->tx_size <= (1u << 24) && c->fail_max >= 1 &&
	       c->via && c->balance <= PROXY_LEAST && c->npurge_allow <= PROXY_PURGE_ALLOW_MAX;
}

static uint32_t nuconn(const struct proxy_config *c)
{
	return c->max_xchg + c->nup * c->pool;
}

size_t proxy_mem_size(const struct proxy_config *cfg)
{
	if (!cfg_ok(cfg))
		return 0;
	return 16 + (size_t)cfg->max_xchg *
			    (ALIGN16(sizeof(struct proxy_xchg)) + ALIGN16(cfg->rx_size) +
			     ALIGN16(cfg->tx_size)) +
	       (size_t)nuconn(cfg) * ALIGN16(sizeof(struct proxy_uconn));
}

/* "ADDR:PORT", an IPv6 ADDR in brackets (a Host value, RFC 3986 3.2.2):
 * at most 1 + 39 + 2 + 5 bytes and the NUL, which struct proxy_up's 48
 * hold. */
static void put_host(char *out, const struct sk_addr *a, uint16_t port)
{
	bool v6 = !sk_addr_is_v4(a);
	size_t n = 0;
	if (v6)
		out[n++] = '[';
	n += proxy_format_addr(a, out + n);
	if (v6)
		out[n++] = ']';
	out[n++] = ':';
	char d[6];
	int k = 0;
	do {
		d[k++] = (char)('0' + port % 10);
		port /= 10;
	} while (port);
	while (k)
		out[n++] = d[--k];
	out[n] = 0;
}

int proxy_init(struct proxy *px, void *mem, size_t size, const struct proxy_config *cfg)
{
	size_t need = proxy_mem_size(cfg);
	if (!need)
		return -SK_EINVAL;
	if (size < need)
		return -SK_ENOMEM;
	sk_memset(px, 0, sizeof(*px));
	px->cfg = *cfg;
	for (unsigned i = 0; i < cfg->nup; i++) {
		px->up[i].addr = cfg->up_addr[i];
		px->up[i].port = cfg->up_port[i];
		put_host(px->up[i].host, &cfg->up_addr[i], cfg->up_port[i]);
	}
	uintptr_t p = ((uintptr_t)mem + 15u) & ~(uintptr_t)15u;
	px->xchg = (struct proxy_xchg *)p;
	p += (uintptr_t)cfg->max_xchg * ALIGN16(sizeof(struct proxy_xchg));
	px->uconn = (struct proxy_uconn *)p;
	px->nuconn = nuconn(cfg);
	p += (uintptr_t)px->nuconn * ALIGN16(sizeof(struct proxy_uconn));
	px->bufs = (uint8_t *)p;
	size_t per = ALIGN16(cfg->rx_size) + ALIGN16(cfg->tx_size);
	for (uint32_t i = cfg->max_xchg; i-- > 0;) {
		struct proxy_xchg *x = &px->xchg[i];
		sk_memset(x, 0, sizeof(*x));
		x->px = px;
		x->rx = px->bufs + (size_t)i * per;
		x->tx = x->rx + ALIGN16(cfg->rx_size);
		x->next_free = px->free_xchg;
		px->free_xchg = x;
	}
	for (uint32_t i = px->nuconn; i-- > 0;) {
		struct proxy_uconn *uc = &px->uconn[i];
		sk_memset(uc, 0, sizeof(*uc));
		uc->px = px;
		uc->sock = -1;
		uc->next = px->free_uconn;
		px->free_uconn = uc;
	}
	return 0;
}

void proxy_stats(const struct proxy *px, void (*fn)(void *ctx, const char *name, uint64_t v),
		 void *ctx)
{
#define PROXY_STAT_PRINT(n) fn(ctx, "proxy." #n, px->st.n);
	PROXY_STATS(PROXY_STAT_PRINT)
#undef PROXY_STAT_PRINT
	static const char *const what[] = {"requests", "failures", "downs"};
	for (unsigned u = 0; u < px->cfg.nup; u++) {
		const struct proxy_up *up = &px->up[u];
		const uint64_t n[] = {up->requests, up->failures, up->downs};
		/* "proxy.upstream." + host (< 48) + "." + what: fits 80. */
		char name[80] = "proxy.upstream.";
		size_t at = 15;
		for (size_t i = 0; i < sizeof(up->host) && up->host[i]; i++)
			name[at++] = up->host[i];
		name[at++] = '.';
		for (unsigned k = 0; k < 3; k++) {
			size_t w = at;
			for (const char *c = what[k]; *c; c++)
				name[w++] = *c;
			name[w] = 0;
			fn(ctx, name, n[k]);
		}
	}
}

/* ---- upstream connections ---- */

static void uc_close(struct proxy_uconn *uc)
{
	struct proxy *px = uc->px;
	if (uc->state == UC_FREE)
		return;
	if (uc->state == UC_IDLE) {
		struct proxy_up *u = &px->up[uc->up];
		for (struct proxy_uconn **pp = &u->idle; *pp; pp = &(*pp)->next)
			if (*pp == uc) {
				*pp = uc->next;
				u->nidle--;
				break;
			}
	}
	if (uc->x) {
		px->up[uc->up].active--;
		uc->x->uc = NULL;
		uc->x = NULL;
	}
	if (loop_timer_armed(&uc->timer))
		loop_timer_cancel(px->loop, &uc->timer);
	loop_close(px->loop, uc->sock);
	uc->sock = -1;
	uc->state = UC_FREE;
	uc->next = px->free_uconn;
	px->free_uconn = uc;
}

/* The exchange is finished with its connection: back to the pool when it
 * can carry another request, else closed. */
static void uc_release(struct proxy_xchg *x, bool keep)
{
	struct proxy_uconn *uc = x->uc;
	if (!uc)
		return;
	struct proxy *px = x->px;
	struct proxy_up *u = &px->up[uc->up];
	if (!keep || u->nidle >= px->cfg.pool) {
		uc_close(uc);
		return;
	}
	u->active--;
	uc->x = NULL;
	x->uc = NULL;
	uc->state = UC_IDLE;
	uc->since = loop_now(px->loop);
	uc->next = u->idle;
	u->idle = uc;
	u->nidle++;
	px->st.up_pooled++;
	uc_arm(uc);
}

static void x_enter(struct proxy_xchg *x)
{
	x->busy++;
}

static void x_free(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	if (x->uc)
		uc_close(x->uc);
	x->phase = X_FREE;
	x->r = NULL;
	x->next_free = px->free_xchg;
	px->free_xchg = x;
}

static void x_leave(struct proxy_xchg *x)
{
	if (--x->busy == 0 && x->dead)
		x_free(x);
}

/* The engine's on_done: the client's request is over. */
static void x_done(struct http_app_req *r, void *ctx, bool ok)
{
	(void)r;
	struct proxy_xchg *x = ctx;
	struct proxy *px = x->px;
	if (!ok && x->phase != X_DONE)
		px->st.client_gone++;
	if (x->uc)
		uc_close(x->uc); /* mid-exchange: it cannot carry another request */
	x->r = NULL;
	x->phase = X_DONE;
	if (px->cache) {
		x_unwait(x);
		x_hit_release(x);
		x_fill_abort(x);
	}
	if (x->busy)
		x->dead = true;
	else
		x_free(x);
}

/* ---- our own answers ---- */

static void x_answer(struct proxy_xchg *x, int status, const char *msg)
{
	struct proxy *px = x->px;
	if (x->uc)
		uc_close(x->uc);
	x->phase = X_DONE;
	if (px->cache)
		x_fill_abort(x);
	if (!x->r)
		return;
	switch (status) {
	case 501: px->st.resp_501++; break;
	case 502: px->st.resp_502++; break;
	case 503: px->st.resp_503++; break;
	case 504: px->st.resp_504++; break;
	default: break;
	}
	struct http_app_req *r = x->r;
	if (x->has_body && !x->body_done) {
		/* The answer does not need the rest of the body: read and drop
		 * it (the engine closes the connection after a long one). */
		x->drop_body = true;
		if (x->body_paused) {
			x->body_paused = false;
			http_app_body_resume(r);
			if (!x->r)
				return;
		}
	}
	http_app_header(r, "Content-Type", "text/plain");
	http_app_send(r, status, msg, sk_strlen(msg));
}

/* The answer had begun: the only honest end is to cut it. */
static void x_cut(struct proxy_xchg *x)
{
	if (x->uc)
		uc_close(x->uc);
	x->phase = X_DONE;
	if (x->px->cache)
		x_fill_abort(x);
	if (x->px->hooks.resp_end)
		x->px->hooks.resp_end(x->px->hooks.ctx, x, false);
	if (x->r)
		http_app_abort(x->r);
}


/* ---- the cache (http/cache.h; proxy->cache set) ----
 * A lookup before forwarding: HIT is sent from the cache (X-Cache: HIT);
 * MISS and STALE begin a fill that the answer tees into (x_head_done,
 * x_pump, x_body_end), a STALE one with our own validators, whose 304
 * refreshes the entry (X-Cache: REVALIDATED); PENDING queues the request
 * on the fill's exchange (one upstream request for concurrent misses),
 * and when that fill is over each queued request looks again and is
 * served or forwarded uncached. */

static uint64_t wall_now(const struct proxy *px)
{
	int64_t t = (int64_t)(loop_now(px->loop) / SK_NS_PER_S) + px->cfg.wall_offset;
	return t > 0 ? (uint64_t)t : 0;
}

/* The request as the cache sees it (cf: HTTP_MAX_FIELDS). */
static void cache_req(struct http_app_req *r, struct http_cache_req *cr,
		      struct http_cache_field *cf)
{
	unsigned n = http_app_nheaders(r);
	if (n > HTTP_MAX_FIELDS)
		n = HTTP_MAX_FIELDS;
	for (unsigned i = 0; i < n; i++)
		http_app_header_at(r, i, &cf[i].name, &cf[i].nlen, &cf[i].value, &cf[i].vlen);
	size_t hl = 0, tl = 0;
	const char *h = http_app_host(r, &hl);
	cr->method = http_app_method(r);
	cr->host = h ? h : "";
	cr->host_len = h ? hl : 0;
	cr->target = http_app_target(r, &tl);
	cr->target_len = tl;
	cr->fields = cf;
	cr->nfields = n;
}

static void x_forward(struct proxy_xchg *x, const char *inm, const char *ims);
static void x_begin(struct proxy_xchg *x);

/* Our fill is over: every request queued on it looks again. */
static void x_wake(struct proxy_xchg *x)
{
	struct proxy_xchg *w = x->waiters;
	x->waiters = NULL;
	while (w) {
		struct proxy_xchg *next = w->next_wait;
		w->next_wait = NULL;
		w->owner = NULL;
		w->nofill = true;
		w->phase = X_SEND;
		x_enter(w);
		x_begin(w);
		x_leave(w);
		w = next;
	}
}

static void x_fill_abort(struct proxy_xchg *x)
{
	if (x->fill) {
		http_cache_abort(x->px->cache, x->fill);
		x->fill = NULL;
	}
	x_wake(x);
}

static void x_unwait(struct proxy_xchg *x)
{
	if (!x->owner)
		return;
	for (struct proxy_xchg **pp = &x->owner->waiters; *pp; pp = &(*pp)->next_wait)
		if (*pp == x) {
			*pp = x->next_wait;
			break;
		}
	x->owner = NULL;
	x->next_wait = NULL;
}

static void x_hit_release(struct proxy_xchg *x)
{
	if (x->hit) {
		http_cache_release(x->px->cache, x->hit);
		x->hit = NULL;
	}
}

/* A stored answer to the client, piece by piece as it takes them (the
 * engine copies each; the read reference is dropped after the last). */
static void x_hit_pump(struct proxy_xchg *x)
{
	if (x->pumping) {
		x->again = true;
		return;
	}
	x->pumping = true;
	do {
		x->again = false;
		while (x->phase == X_HIT && x->r) {
			if (x->hn) {
				long w = http_app_write(x->r, x->hp, x->hn);
				if (w < 0) {
					x_hit_release(x);
					x->phase = X_DONE;
					if (x->r)
						http_app_abort(x->r);
					break;
				}
				x->hp += w;
				x->hn -= (size_t)w;
				x->px->st.bytes_down += (uint64_t)w;
				if (x->hn)
					break;
			}
			if (!http_cache_body_next(x->px->cache, &x->it, &x->hp, &x->hn)) {
				x_hit_release(x);
				x->phase = X_DONE;
				if (x->r)
					http_app_end(x->r);
				break;
			}
		}
	} while (x->again && x->phase == X_HIT && x->r);
	x->pumping = false;
}

/* Answer from the read reference e (taken by a lookup or a refresh). */
static void x_serve_entry(struct proxy_xchg *x, struct http_cache_entry *e, const char *label,
			  uint64_t age)
{
	struct proxy *px = x->px;
	struct http_app_req *r = x->r;
	struct http_cache_fiter fi;
	const char *nm, *vv;
	for (bool more = http_cache_field_first(px->cache, e, &fi, &nm, &vv); more;
	     more = http_cache_field_next(px->cache, &fi, &nm, &vv))
		http_app_header(r, nm, vv); /* the engine's own names are refused: dropped */
	char ab[24];
	struct http_out o = {(uint8_t *)ab, (uint8_t *)ab + sizeof(ab) - 1};
	http_out_u64(&o, age);
	*o.p = 0;
	http_app_header(r, "Age", ab);
	if (px->cfg.x_cache)
		http_app_header(r, "X-Cache", label);
	uint16_t status = http_cache_status(e);
	uint64_t len = http_cache_body_len(e);
	const uint8_t *p0 = NULL;
	size_t n0 = 0;
	bool piece = !x->head_req && status != 204 && status != 304 &&
		     http_cache_body_first(px->cache, e, &x->it, &p0, &n0);
	if (!piece) {
		http_cache_release(px->cache, e);
		x->phase = X_DONE;
		if (status == 204 || status == 304) {
			http_app_send(r, status, NULL, 0);
		} else if (http_app_stream(r, status, len, NULL, NULL) == 0 && x->r) {
			http_app_end(r);
		}
		return;
	}
	x->hit = e;
	x->hp = p0;
	x->hn = n0;
	x->phase = X_HIT;
	http_app_stream(r, status, len, x_room, x);
}

/* Before forwarding: may the cache answer, or is a fill for it running? */
static void x_begin(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	if (!x->r)
		return;
	if (!px->cache || http_app_has_body(x->r)) {
		/* A body (a GET's only with cfg.body_on_get) is not in the key:
		 * neither served from nor stored in the cache. */
		x_forward(x, NULL, NULL);
		return;
	}
	struct http_cache_field cf[HTTP_MAX_FIELDS];
	struct http_cache_req cr;
	cache_req(x->r, &cr, cf);
	uint64_t now = wall_now(px);
	struct http_cache_lookup lk;
	enum http_cache_result res = http_cache_lookup(px->cache, &cr, now, &lk);
	switch (res) {
	case HTTP_CACHE_HIT:
		x_serve_entry(x, lk.entry, "HIT", lk.age);
		return;
	case HTTP_CACHE_GATEWAY_TIMEOUT:
		x_answer(x, 504, "504 Gateway Timeout: only-if-cached, and nothing stored\n");
		return;
	case HTTP_CACHE_PENDING: {
		struct proxy_xchg *o = http_cache_fill_user(lk.fill);
		if (!x->nofill && o) {
			x->phase = X_WAIT;
			x->owner = o;
			x->next_wait = o->waiters;
			o->waiters = x;
			return;
		}
		x_forward(x, NULL, NULL);
		return;
	}
	case HTTP_CACHE_MISS:
	case HTTP_CACHE_STALE: {
		if (x->nofill) {
			x_forward(x, NULL, NULL);
			return;
		}
		/* The validators live until the next call into the cache. */
		char inm[1024], ims[128];
		bool has_inm = false, has_ims = false;
		if (res == HTTP_CACHE_STALE && lk.etag && sk_strlen(lk.etag) < sizeof(inm)) {
			sk_memcpy(inm, lk.etag, sk_strlen(lk.etag) + 1);
			has_inm = true;
		}
		if (res == HTTP_CACHE_STALE && lk.last_modified &&
		    sk_strlen(lk.last_modified) < sizeof(ims)) {
			sk_memcpy(ims, lk.last_modified, sk_strlen(lk.last_modified) + 1);
			has_ims = true;
		}
		x->fill = http_cache_begin(px->cache, &cr, now);
		if (x->fill)
			http_cache_fill_set_user(x->fill, x);
		x_forward(x, x->fill && has_inm ? inm : NULL, x->fill && has_ims ? ims : NULL);
		return;
	}
	default:
		x_forward(x, NULL, NULL);
		return;
	}
}

/* ---- sending up ---- */

static void x_flush(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	struct proxy_uconn *uc = x->uc;
	if (!uc || uc->state != UC_BUSY)
		return;
	while (x->txpos < x->txlen) {
		long w = loop_write(px->loop, uc->sock, x->tx + x->txpos, x->txlen - x->txpos);
		if (w == -SK_EAGAIN || w == 0)
			break;
		if (w < 0)
			return; /* the read side sees the error and decides */
		x->txpos += (uint32_t)w;
		px->st.bytes_up += (uint64_t)w;
		x->sent_at = loop_now(px->loop);
	}
	if (x->txpos < x->txlen)
		return;
	/* All sent.  The head is kept for a retry until a body byte went. */
	if (x->body_started) {
		x->txpos = x->txlen = x->headlen = 0;
	}
	if (x->body_paused && x->r) {
		x->body_paused = false;
		http_app_body_resume(x->r);
	}
}

/* The client's body, piece by piece, into tx (framed again when chunked). */
static long x_body(struct http_app_req *r, void *ctx, const uint8_t *data, size_t len, bool end)
{
	(void)r;
	struct proxy_xchg *x = ctx;
	if (x->drop_body || x->phase == X_DONE) {
		if (end)
			x->body_done = true;
		return (long)len;
	}
	uint32_t cap = x->px->cfg.tx_size;
	if (end) {
		x->body_done = true;
		if (x->req_chunked) {
			/* CHUNK_FRAME is always left free for this */
			sk_memcpy(x->tx + x->txlen, "0\r\n\r\n", 5);
			x->txlen += 5;
		}
		x_enter(x);
		x_flush(x);
		x_leave(x);
		return 0;
	}
	/* Copy what fits, send, and again while the socket takes it: only
	 * a full tx (whose drain raises LOOP_EV_WRITE, and x_flush resumes
	 * the body then) may leave part of the piece for later. */
	size_t took = 0;
	x_enter(x);
	for (;;) {
		/* Slide what is unsent to the front (never the head a retry needs). */
		if (x->body_started && x->txpos) {
			sk_memmove(x->tx, x->tx + x->txpos, x->txlen - x->txpos);
			x->txlen -= x->txpos;
			x->txpos = 0;
		}
		size_t room = cap - x->txlen;
		room = room > 2 * CHUNK_FRAME ? room - 2 * CHUNK_FRAME : 0;
		size_t n = len - took < room ? len - took : room;
		if (n == 0)
			break;
		struct http_out o = {x->tx + x->txlen, x->tx + cap};
		if (x->req_chunked) {
			http_out_hex(&o, n);
			http_out_str(&o, "\r\n");
		}
		http_out_mem(&o, data + took, n);
		if (x->req_chunked)
			http_out_str(&o, "\r\n");
		x->txlen = (uint32_t)(o.p - x->tx);
		x->body_started = true;
		took += n;
		x_flush(x);
		if (took == len || !x->uc || x->uc->state != UC_BUSY)
			break;
	}
	x_leave(x);
	if (took < len)
		x->body_paused = true;
	return (long)took;
}

/* ---- the origin's answer ---- */

/* Copy the field f NUL-terminated for http_app_header. */
static const char *cz(struct proxy *px, const char *s, size_t n, size_t at)
{
	sk_memcpy(px->scratch + at, s, n);
	px->scratch[at + n] = 0;
	return px->scratch + at;
}

/* The cache's part of a final head: true when it answered (a 304 that
 * refreshed the stored entry is sent from there). */
static bool x_cache_head(struct proxy_xchg *x, const struct proxy_field *f, unsigned n)
{
	struct proxy *px = x->px;
	struct http_app_req *r = x->r;
	uint16_t status = x->resp.status;
	unsigned m = http_app_method(r);
	if ((m == HTTP_POST || m == HTTP_PUT || m == HTTP_DELETE || m == HTTP_PATCH) &&
	    status >= 200 && status < 400) {
		/* RFC 9111 4.4: what an unsafe request changed is not served stale */
		size_t hl = 0, tl = 0;
		const char *h = http_app_host(r, &hl);
		const char *t = http_app_target(r, &tl);
		http_cache_purge(px->cache, h ? h : "", h ? hl : 0, t, tl);
	}
	if (!x->fill)
		return false;
	struct http_cache_field rf[HTTP_MAX_FIELDS], cf[HTTP_MAX_FIELDS];
	for (unsigned i = 0; i < n; i++)
		rf[i] = (struct http_cache_field){f[i].name, f[i].nlen, f[i].value, f[i].vlen};
	struct http_cache_resp cresp = {status, rf, n};
	struct http_cache_req cr;
	cache_req(r, &cr, cf);
	uint64_t now = wall_now(px);
	struct http_cache_entry *out = NULL;
	enum http_cache_fill_result fr = http_cache_head(px->cache, x->fill, &cr, &cresp, now, &out);
	if (fr == HTTP_CACHE_FILL_REFRESHED) {
		x->fill = NULL;
		proxy_up_ok(px, x->uc->up);
		bool keep = http_resp_keep_alive(&x->resp) && x->rpos == x->rxlen &&
			    (!x->has_body || x->body_done);
		uc_release(x, keep);
		x_serve_entry(x, out, "REVALIDATED", http_cache_age(out, now));
		x_wake(x);
		return true;
	}
	if (fr == HTTP_CACHE_FILL_DROPPED) {
		x->fill = NULL;
		x_wake(x);
		if (status == 304 && !http_app_header_get(r, "if-none-match", NULL) &&
		    !http_app_header_get(r, "if-modified-since", NULL)) {
			/* Our revalidation's 304, but the stale entry is gone:
			 * ask again, plainly (the client asked for the body). */
			bool keep = http_resp_keep_alive(&x->resp) && x->rpos == x->rxlen;
			uc_release(x, keep);
			x->nofill = true;
			x->tried = 0;
			x->attempts = 0;
			x_forward(x, NULL, NULL);
			return true;
		}
	}
	return false;
}

/* The head is complete and final (not 1xx): the answer to the client. */
static void x_head_done(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	struct http_app_req *r = x->r;
	const uint8_t *head = x->rx + x->hstart;
	size_t hlen = x->rpos - x->hstart;
	uint16_t status = x->resp.status;
	if (status == 101) {
		px->st.up_bad_response++;
		proxy_up_failed(px, x->uc->up, loop_now(px->loop));
		x_answer(x, 502, "502 Bad Gateway: the upstream switched protocols\n");
		return;
	}
	struct proxy_field f[HTTP_MAX_FIELDS];
	unsigned n = 0;
	size_t pos = 0;
	while (n < HTTP_MAX_FIELDS && proxy_head_field(head, hlen, &pos, &f[n]))
		n++;
	struct proxy_conn_tokens ct;
	proxy_conn_tokens(&ct, f, n);
	if (ct.overflow) {
		px->st.up_bad_response++;
		x_answer(x, 502, "502 Bad Gateway: the upstream's Connection names too much\n");
		return;
	}
	if (px->cache && x_cache_head(x, f, n))
		return;
	/* Via: the origin's list, then us */
	size_t vl = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!proxy_resp_keep(&f[i], &ct))
			continue;
		if (proxy_name_is(f[i].name, f[i].nlen, "via")) {
			if (f[i].vlen && vl + f[i].vlen + 2 < 1024) {
				sk_memcpy(px->scratch + vl, f[i].value, f[i].vlen);
				vl += f[i].vlen;
				px->scratch[vl++] = ',';
				px->scratch[vl++] = ' ';
			}
			continue;
		}
	}
	char via[1100];
	sk_memcpy(via, px->scratch, vl);
	const char *me = px->cfg.via;
	via[vl++] = '1';
	via[vl++] = '.';
	via[vl++] = x->resp.version >= 11 ? '1' : '0';
	via[vl++] = ' ';
	size_t ml = sk_strlen(me);
	if (ml > 40)
		ml = 40;
	sk_memcpy(via + vl, me, ml);
	vl += ml;
	via[vl] = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!proxy_resp_keep(&f[i], &ct) || proxy_name_is(f[i].name, f[i].nlen, "via"))
			continue;
		const char *nm = cz(px, f[i].name, f[i].nlen, 0);
		const char *vv = cz(px, f[i].value, f[i].vlen, f[i].nlen + 1);
		if (http_app_header(r, nm, vv) < 0) {
			px->st.up_bad_response++;
			x_answer(x, 502, "502 Bad Gateway: the upstream's head is too large\n");
			return;
		}
	}
	http_app_header(r, "Via", via);
	if (px->cache && px->cfg.x_cache)
		http_app_header(r, "X-Cache", "MISS");
	proxy_up_ok(px, x->uc->up);
	if (px->hooks.resp_head)
		px->hooks.resp_head(px->hooks.ctx, x, r, &x->resp, head, hlen);
	enum http_body_kind k = http_resp_body(&x->resp, x->head_req);
	x->bkind = (uint8_t)k;
	if (k == HTTP_BODY_NONE) {
		/* Nothing follows the head: the connection may carry another
		 * request when the origin says so, nothing extra came, and the
		 * client's body went up whole. */
		bool keep = http_resp_keep_alive(&x->resp) && x->rpos == x->rxlen &&
			    (!x->has_body || x->body_done);
		uc_release(x, keep);
		x->phase = X_DONE;
		if (x->fill) {
			http_cache_end(px->cache, x->fill, wall_now(px));
			x->fill = NULL;
			x_wake(x);
		}
		if (px->hooks.resp_end)
			px->hooks.resp_end(px->hooks.ctx, x, true);
		if (status == 204 || status == 304 || status < 200) {
			http_app_send(r, status < 200 ? 502 : status, NULL, 0);
		} else {
			uint64_t cl = x->resp.has_content_length ? x->resp.content_length
								 : HTTP_APP_CHUNKED;
			if (http_app_stream(r, status, cl, NULL, NULL) == 0 && x->r)
				http_app_end(r);
		}
		return;
	}
	x->phase = X_BODY;
	uint64_t len = HTTP_APP_CHUNKED;
	if (k == HTTP_BODY_LENGTH) {
		len = x->resp.content_length;
		x->left = len;
	} else if (k == HTTP_BODY_CHUNKED) {
		http_chunked_init(&x->ch, UINT64_MAX);
	}
	x->dlen = 0;
	if (status == 204 || status == 304) {
		/* resp.c gives these no body; never reached */
		x_answer(x, 502, "502 Bad Gateway\n");
		return;
	}
	/* The head is no longer needed: the body moves to the front. */
	uint32_t left = x->rxlen - x->rpos;
	if (left)
		sk_memmove(x->rx, x->rx + x->rpos, left);
	x->rxlen = left;
	x->rpos = 0;
	x->hstart = 0;
	/* x_room runs from here on whenever the client took some */
	http_app_stream(r, status, len, x_room, x);
}

/* Feed what arrived to the head parser; on to the body when complete. */
static void x_parse_head(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	while (x->phase == X_HEAD && x->rpos < x->rxlen) {
		size_t used = 0;
		int rc = http_resp_head(&x->resp, x->rx + x->rpos, x->rxlen - x->rpos, &used);
		if (rc == HTTP_NEED_MORE) {
			x->rpos = x->rxlen;
			return;
		}
		if (rc != HTTP_DONE) {
			px->st.up_bad_response++;
			proxy_up_failed(px, x->uc->up, loop_now(px->loop));
			x_answer(x, 502,
				 "502 Bad Gateway: the upstream's answer cannot be framed safely\n");
			return;
		}
		x->rpos += (uint32_t)used;
		if (x->resp.status >= 100 && x->resp.status < 200 && x->resp.status != 101) {
			/* An interim answer (100, 103): not forwarded, the final
			 * one follows. */
			uint32_t left = x->rxlen - x->rpos;
			sk_memmove(x->rx, x->rx + x->rpos, left);
			x->rxlen = left;
			x->rpos = x->hstart = 0;
			http_resp_init(&x->resp);
			continue;
		}
		x_head_done(x);
		return;
	}
}

/* The body is all here: end the answer, give the connection back. */
static void x_body_end(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	bool keep = x->bkind != HTTP_BODY_CLOSE && !x->up_eof && http_resp_keep_alive(&x->resp) &&
		    x->rpos == x->rxlen && (!x->has_body || x->body_done);
	uc_release(x, keep);
	x->phase = X_DONE;
	if (x->fill) {
		/* A body that ended with the connection may be cut: not stored */
		if (x->bkind == HTTP_BODY_CLOSE)
			http_cache_abort(px->cache, x->fill);
		else
			http_cache_end(px->cache, x->fill, wall_now(px));
		x->fill = NULL;
		x_wake(x);
	}
	if (px->hooks.resp_end)
		px->hooks.resp_end(px->hooks.ctx, x, true);
	if (x->r)
		http_app_end(x->r);
}

/* rx -> the client, as far as the client takes.  http_app_write may run
 * the client's connection, whose write callback (x_room) then comes back
 * here: that nested call only marks `again`, and the outer one goes on. */
static void x_pump_once(struct proxy_xchg *x);
static void x_pump(struct proxy_xchg *x)
{
	if (x->pumping) {
		x->again = true;
		return;
	}
	x->pumping = true;
	do {
		x->again = false;
		x_pump_once(x);
	} while (x->again && x->phase == X_BODY && x->r);
	x->pumping = false;
}

static void x_pump_once(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	while (x->phase == X_BODY && x->r) {
		if (x->dlen == 0) {
			uint32_t avail = x->rxlen - x->rpos;
			if (x->bkind == HTTP_BODY_LENGTH) {
				uint32_t k = avail < x->left ? avail : (uint32_t)x->left;
				x->doff = x->rpos;
				x->dlen = k;
				x->rpos += k;
				x->left -= k;
			} else if (x->bkind == HTTP_BODY_CHUNKED) {
				size_t dl = avail, used = 0;
				int rc = http_chunked_decode(&x->ch, x->rx + x->rpos, &dl, &used);
				if (rc < HTTP_NEED_MORE) {
					px->st.up_bad_response++;
					if (x->uc)
						proxy_up_failed(px, x->uc->up, loop_now(px->loop));
					x_cut(x);
					return;
				}
				x->doff = x->rpos;
				x->dlen = (uint32_t)dl;
				x->rpos += (uint32_t)used;
			} else {
				x->doff = x->rpos;
				x->dlen = avail;
				x->rpos = x->rxlen;
			}
		}
		if (x->dlen) {
			long w = http_app_write(x->r, x->rx + x->doff, x->dlen);
			if (w < 0) {
				x_cut(x);
				return;
			}
			if (w > 0) {
				if (px->hooks.resp_body)
					px->hooks.resp_body(px->hooks.ctx, x, x->rx + x->doff,
							    (size_t)w);
				if (x->fill && http_cache_body(px->cache, x->fill, x->rx + x->doff,
							       (size_t)w) == HTTP_CACHE_FILL_DROPPED) {
					x->fill = NULL;
					x_wake(x);
				}
				px->st.bytes_down += (uint64_t)w;
			}
			x->doff += (uint32_t)w;
			x->dlen -= (uint32_t)w;
			if (x->dlen)
				return; /* the client is slower: wait for room */
			continue;
		}
		bool complete = (x->bkind == HTTP_BODY_LENGTH && x->left == 0) ||
				(x->bkind == HTTP_BODY_CHUNKED && http_chunked_done(&x->ch)) ||
				(x->bkind == HTTP_BODY_CLOSE && x->up_eof && x->rpos == x->rxlen);
		if (complete) {
			x_body_end(x);
			return;
		}
		if (x->rpos == x->rxlen) {
			x->rpos = x->rxlen = 0;
			if (x->up_eof) {
				/* the origin died inside the body */
				px->st.up_died++;
				if (x->uc)
					proxy_up_failed(px, x->uc->up, loop_now(px->loop));
				x_cut(x);
			}
			return;
		}
	}
}

/* Would another attempt be safe? */
static bool x_retry_ok(const struct proxy_xchg *x)
{
	return x->r && x->phase == X_SEND && !x->body_started &&
	       proxy_idempotent(http_app_method(x->r)) && x->attempts <= x->px->cfg.nup;
}

/* The upstream connection failed before any response byte. */
static void x_upfail(struct proxy_xchg *x, int status, const char *msg, bool count)
{
	struct proxy *px = x->px;
	struct proxy_uconn *uc = x->uc;
	bool reused = uc && uc->reused;
	if (uc) {
		if (count && !reused)
			proxy_up_failed(px, uc->up, loop_now(px->loop));
		if (reused)
			x->tried &= ~(1u << uc->up); /* a stale pooled one: try it fresh */
		uc_close(uc);
	}
	if (x_retry_ok(x)) {
		px->st.retries++;
		x_attempt(x);
		return;
	}
	x_answer(x, status, msg);
}

static void x_read(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	while (x->uc && x->uc->state == UC_BUSY && x->r &&
	       (x->phase == X_SEND || x->phase == X_HEAD || x->phase == X_BODY)) {
		if (x->phase == X_BODY && x->dlen)
			return; /* the client has not taken what is here */
		uint32_t cap = px->cfg.rx_size;
		if (x->rxlen >= cap)
			return;
		long n = loop_read(px->loop, x->uc->sock, x->rx + x->rxlen, cap - x->rxlen);
		if (n == -SK_EAGAIN)
			return;
		if (n < 0 || n == 0) {
			if (x->phase == X_SEND) {
				x_upfail(x, 502,
					 "502 Bad Gateway: the upstream closed or reset the connection\n",
					 true);
				return;
			}
			if (x->phase == X_HEAD) {
				px->st.up_died++;
				proxy_up_failed(px, x->uc->up, loop_now(px->loop));
				x_answer(x, 502, "502 Bad Gateway: the upstream's answer was cut short\n");
				return;
			}
			x->up_eof = true;
			x_pump(x);
			return;
		}
		x->rxlen += (uint32_t)n;
		x->last_rx = loop_now(px->loop);
		if (x->phase == X_SEND)
			x->phase = X_HEAD;
		if (x->phase == X_HEAD)
			x_parse_head(x);
		if (x->phase == X_BODY)
			x_pump(x);
		if (x->uc)
			uc_arm(x->uc);
	}
}

/* The client took some of the answer: more may move, from the cache (a
 * hit) or from the origin's connection. */
static void x_room(struct http_app_req *r, void *ctx)
{
	(void)r;
	struct proxy_xchg *x = ctx;
	if (x->pumping) {
		x->again = true;
		return;
	}
	x_enter(x);
	if (x->phase == X_HIT) {
		x_hit_pump(x);
	} else {
		x_pump(x);
		x_read(x);
		if (x->uc)
			uc_arm(x->uc);
	}
	x_leave(x);
}

static void uc_event(void *user, int sock, unsigned events, sk_time_ns now)
{
	(void)now;
	struct proxy_uconn *uc = user;
	if (uc->state == UC_FREE || sock != uc->sock)
		return; /* stale */
	struct proxy *px = uc->px;
	if (uc->state == UC_IDLE) {
		/* An idle connection has nothing to say: a close, a reset or
		 * stray bytes all end it. */
		uint8_t b[64];
		long n = loop_read(px->loop, uc->sock, b, sizeof(b));
		if (n != -SK_EAGAIN)
			uc_close(uc);
		return;
	}
	struct proxy_xchg *x = uc->x;
	x_enter(x);
	if (uc->state == UC_CONNECTING) {
		if (events & LOOP_EV_ERROR) {
			px->st.up_connect_fail++;
			x_upfail(x, 502, "502 Bad Gateway: no upstream could be reached\n", true);
			x_leave(x);
			return;
		}
		if (!(events & LOOP_EV_WRITE)) {
			x_leave(x);
			return;
		}
		uc->state = UC_BUSY;
		x->sent_at = now;
	}
	x_flush(x);
	x_read(x);
	if (x->uc)
		uc_arm(x->uc);
	x_leave(x);
}

/* ---- timers ---- */

static sk_time_ns uc_deadline(const struct proxy_uconn *uc)
{
	const struct proxy_config *c = &uc->px->cfg;
	const struct proxy_xchg *x = uc->x;
	switch (uc->state) {
	case UC_CONNECTING:
		return uc->since + c->connect_timeout;
	case UC_IDLE:
		return uc->since + c->idle_timeout;
	case UC_BUSY:
		if (x->phase == X_SEND || x->phase == X_HEAD)
			return x->sent_at + c->first_byte_timeout;
		if (x->phase == X_BODY && !x->dlen)
			return x->last_rx + c->idle_timeout;
		return 0; /* the client is slow: its own send timeout governs */
	default:
		return 0;
	}
}

static void uc_arm(struct proxy_uconn *uc)
{
	sk_time_ns d = uc_deadline(uc);
	if (d == 0)
		return;
	if (!loop_timer_armed(&uc->timer) || uc->timer.deadline > d)
		loop_timer_set(uc->px->loop, &uc->timer, d);
}

static void uc_timer(struct loop_timer *t, sk_time_ns now)
{
	struct proxy_uconn *uc =
		(struct proxy_uconn *)(void *)((char *)t - offsetof(struct proxy_uconn, timer));
	struct proxy *px = uc->px;
	sk_time_ns d = uc_deadline(uc);
	if (d == 0 || uc->state == UC_FREE)
		return;
	if (now < d) {
		loop_timer_set(px->loop, &uc->timer, d);
		return;
	}
	if (uc->state == UC_IDLE) {
		uc_close(uc);
		return;
	}
	struct proxy_xchg *x = uc->x;
	x_enter(x);
	if (uc->state == UC_CONNECTING) {
		px->st.up_timeout_connect++;
		x_upfail(x, 504, "504 Gateway Timeout: connecting to the upstream timed out\n", true);
	} else if (x->phase == X_SEND || x->phase == X_HEAD) {
		px->st.up_timeout_first_byte++;
		proxy_up_failed(px, uc->up, now);
		if (x->phase == X_HEAD)
			x_answer(x, 502, "502 Bad Gateway: the upstream's head did not complete\n");
		else
			x_answer(x, 504, "504 Gateway Timeout: the upstream did not answer in time\n");
	} else {
		px->st.up_timeout_idle++;
		proxy_up_failed(px, uc->up, now);
		x_cut(x);
	}
	x_leave(x);
}

/* ---- attempts ---- */

static struct proxy_uconn *uc_new(struct proxy *px, unsigned up)
{
	struct proxy_up *u = &px->up[up];
	if (u->idle) {
		struct proxy_uconn *uc = u->idle;
		u->idle = uc->next;
		u->nidle--;
		uc->reused = true;
		uc->state = UC_BUSY;
		px->st.up_reused++;
		return uc;
	}
	struct proxy_uconn *uc = px->free_uconn;
	if (!uc)
		return NULL;
	int s = loop_connect(px->loop, &u->addr, u->port);
	if (s < 0)
		return NULL;
	px->free_uconn = uc->next;
	uc->sock = s;
	uc->up = (uint8_t)up;
	uc->reused = false;
	uc->state = UC_CONNECTING;
	uc->since = loop_now(px->loop);
	uc->timer.fn = uc_timer;
	uc->timer.slot = 0;
	px->st.up_connects++;
	if (loop_watch(px->loop, s, uc_event, uc) < 0) {
		uc_close(uc);
		return NULL;
	}
	return uc;
}

static void x_attempt(struct proxy_xchg *x)
{
	struct proxy *px = x->px;
	for (;;) {
		sk_time_ns now = loop_now(px->loop);
		int up = proxy_up_pick(px, x->tried, now);
		if (up < 0) {
			x_answer(x, 502, "502 Bad Gateway: no upstream could be reached\n");
			return;
		}
		x->tried |= 1u << up;
		x->attempts++;
		struct proxy_uconn *uc = uc_new(px, (unsigned)up);
		if (!uc) {
			px->st.up_connect_fail++;
			proxy_up_failed(px, (unsigned)up, now);
			continue;
		}
		px->up[up].requests++;
		px->up[up].active++;
		uc->x = x;
		x->uc = uc;
		x->phase = X_SEND;
		x->txpos = 0;
		x->rxlen = x->rpos = x->hstart = x->dlen = 0;
		x->up_eof = false;
		x->sent_at = now;
		http_resp_init(&x->resp);
		if (uc->state == UC_BUSY) {
			x_flush(x);
			x_read(x); /* a stale pooled connection may say so at once */
		}
		if (x->uc == uc)
			uc_arm(uc);
		return;
	}
}

/* ---- the handler ---- */

/* Build the head toward the origin and send it: inm / ims are the
 * cache's validators for a revalidation (then the client's own
 * conditionals are left out: the answer fills the cache, RFC 9111 4.3.1). */
static void x_forward(struct proxy_xchg *x, const char *inm, const char *ims)
{
	struct proxy *px = x->px;
	struct http_app_req *r = x->r;
	if (!r)
		return;
	x->phase = X_SEND;
	struct proxy_field f[HTTP_MAX_FIELDS + 2];
	unsigned n = 0, nh = http_app_nheaders(r);
	if (nh > HTTP_MAX_FIELDS)
		nh = HTTP_MAX_FIELDS;
	for (unsigned i = 0; i < nh; i++) {
		http_app_header_at(r, i, &f[n].name, &f[n].nlen, &f[n].value, &f[n].vlen);
		if (x->fill && (proxy_name_is(f[n].name, f[n].nlen, "if-none-match") ||
				proxy_name_is(f[n].name, f[n].nlen, "if-modified-since")))
			continue;
		n++;
	}
	if (inm)
		f[n++] = (struct proxy_field){"If-None-Match", 13, inm, sk_strlen(inm)};
	if (ims)
		f[n++] = (struct proxy_field){"If-Modified-Since", 17, ims, sk_strlen(ims)};
	x->has_body = http_app_has_body(r);
	uint64_t bl = http_app_body_length(r);
	x->req_chunked = x->has_body && bl == HTTP_APP_CHUNKED;
	size_t tl;
	const char *target = http_app_target(r, &tl);
	const char *mname = http_method_name((enum http_method)http_app_method(r));
	struct proxy_req_info ri = {
		mname, sk_strlen(mname), target, tl, http_app_version(r), http_app_peer(r, NULL),
		http_app_scheme(r), px->cfg.via,
		!x->has_body ? (http_app_method(r) == HTTP_POST || http_app_method(r) == HTTP_PUT
				? 0 : PROXY_BODY_NONE)
			     : x->req_chunked ? PROXY_BODY_CHUNKED : bl,
		px->up[0].host, px->cfg.host_upstream};
	/* Host for a 1.0 request without one: the first upstream's (the same
	 * for every attempt, as the head is written once). */
	long hl = proxy_req_head(x->tx, px->cfg.tx_size - 2 * CHUNK_FRAME, &ri, f, n);
	if (hl < 0) {
		x_answer(x, hl == -SK_ENOBUFS ? 431 : 400,
			 hl == -SK_ENOBUFS ? "431 Request Header Fields Too Large\n"
					   : "400 Bad Request: too many Connection options\n");
		return;
	}
	x->headlen = x->txlen = (uint32_t)hl;
	px->st.forwarded++;
	x_attempt(x);
	if (x->r && x->has_body && x->phase != X_DONE)
		http_app_body_stream(r, x_body, x);
}

/* ---- PURGE (see proxy.h) ---- */

bool proxy_prefix_match(const struct proxy_prefix *p, const struct sk_addr *a)
{
	unsigned len = p->len > 128 ? 128 : p->len, i = 0;
	for (; len >= 8; len -= 8, i++)
		if (a->b[i] != p->addr.b[i])
			return false;
	if (len == 0)
		return true;
	uint8_t m = (uint8_t)(0xffu << (8 - len));
	return (a->b[i] & m) == (p->addr.b[i] & m);
}

static int purge_send(struct http_app_req *r, int status, const char *msg)
{
	http_app_header(r, "Content-Type", "text/plain");
	return http_app_send(r, status, msg, sk_strlen(msg));
}

/* Answered here, without an exchange: PURGE never goes upstream. */
static int proxy_purge(struct proxy *px, struct http_app_req *r)
{
	if (!px->cache || px->cfg.npurge_allow == 0) {
		/* 405 must name what the target takes (RFC 9110 15.5.6): what
		 * the proxy forwards. */
		http_app_header(r, "Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH, TRACE");
		return purge_send(r, 405, px->cache ? "405 Method Not Allowed: PURGE is off "
							"(--purge-allow none)\n"
						    : "405 Method Not Allowed: PURGE needs a cache "
						      "(--cache SIZE)\n");
	}
	const struct sk_addr *peer = http_app_peer(r, NULL);
	bool ok = false;
	for (unsigned i = 0; i < px->cfg.npurge_allow && !ok; i++)
		ok = proxy_prefix_match(&px->cfg.purge_allow[i], peer);
	if (!ok) {
		px->st.purge_denied++;
		return purge_send(r, 403, "403 Forbidden: PURGE is not allowed from this address\n");
	}
	size_t hl = 0, tl = 0;
	const char *h = http_app_host(r, &hl);
	const char *t = http_app_target(r, &tl);
	unsigned n = http_cache_purge_request(px->cache, h ? h : "", h ? hl : 0, t, tl);
	if (n == 0)
		return purge_send(r, 404, "404 Not Found: nothing stored for this key\n");
	/* The body is sent from our memory (a literal); the count goes in a
	 * header, which the engine copies. */
	char nb[24];
	struct http_out o = {(uint8_t *)nb, (uint8_t *)nb + sizeof(nb) - 1};
	http_out_u64(&o, n);
	*o.p = 0;
	http_app_header(r, "X-Purged", nb);
	return purge_send(r, 200, "200 OK: purged every stored variant of this key\n");
}

/* The 400 for a body on a method whose content has no defined meaning
 * (proxy.h), or NULL when the method may carry one. */
static const char *body_refusal(unsigned method)
{
	switch (method) {
	case HTTP_GET: return "400 Bad Request: a GET request may not carry a body here\n";
	case HTTP_HEAD: return "400 Bad Request: a HEAD request may not carry a body here\n";
	case HTTP_DELETE: return "400 Bad Request: a DELETE request may not carry a body here\n";
	case HTTP_OPTIONS: return "400 Bad Request: an OPTIONS request may not carry a body here\n";
	case HTTP_TRACE: return "400 Bad Request: a TRACE request may not carry a body here\n";
	default: return NULL;
	}
}

static int proxy_handle(struct http_app_req *r, void *ctx)
{
	struct proxy *px = ctx;
	px->st.requests++;
	unsigned method = http_app_method(r);
	if (method == HTTP_PURGE)
		return proxy_purge(px, r);
	const char *refusal = body_refusal(method);
	if (refusal && !px->cfg.body_on_get && http_app_has_body(r)) {
		/* Before the cache and before an exchange: nothing goes up, and
		 * no stored answer stands for a request we do not take.  The
		 * body is never asked for and the connection ends after the
		 * answer: what follows a body nobody expected is not trusted
		 * as the next request (proxy.h). */
		px->st.body_on_get_refused++;
		http_app_close_after(r);
		http_app_header(r, "Content-Type", "text/plain");
		return http_app_send(r, 400, refusal, sk_strlen(refusal));
	}
	if (px->hooks.lookup && px->hooks.lookup(px->hooks.ctx, r))
		return 0;
	struct proxy_xchg *x = px->free_xchg;
	if (!x) {
		static const char m[] = "503 Service Unavailable: the proxy is full\n";
		px->st.resp_503++;
		http_app_header(r, "Content-Type", "text/plain");
		return http_app_send(r, 503, m, sizeof(m) - 1);
	}
	px->free_xchg = x->next_free;
	uint8_t *rx = x->rx, *tx = x->tx;
	sk_memset(x, 0, offsetof(struct proxy_xchg, resp));
	x->px = px;
	x->rx = rx;
	x->tx = tx;
	x->r = r;
	x->phase = X_SEND;
	x->head_req = http_app_method(r) == HTTP_HEAD;
	http_app_on_done(r, x_done, x);
	x_enter(x);
	size_t tel;
	const char *te = http_app_header_get(r, "transfer-encoding", &tel);
	if (te && !proxy_te_ok(te, tel))
		x_answer(x, 501, "501 Not Implemented: a transfer coding other than chunked\n");
	else
		x_begin(x);
	x_leave(x);
	return 0;
}

static int proxy_attach(struct http_app *app, void *ctx)
{
	struct proxy *px = ctx;
	px->loop = app->loop;
	return 0;
}

void proxy_app_config(const struct proxy *px, struct http_app_config *acfg)
{
	(void)px;
	acfg->accept_purge = true; /* answered by proxy_purge, even when off (405) */
	acfg->hdr_size = HTTP_MAX_FIELDS_BYTES + 1024u;
	if (acfg->out_size < acfg->hdr_size + 16384u)
		acfg->out_size = acfg->hdr_size + 16384u;
}

void proxy_app_def(struct proxy *px, struct http_app_def *def, struct http_app_route *route)
{
	*route = (struct http_app_route){HTTP_APP_ANY, "/", true, proxy_handle, px};
	*def = (struct http_app_def){.routes = route, .nroutes = 1, .name = "proxy",
				      .init = proxy_attach, .init_ctx = px};
}

void proxy_stop(struct proxy *px)
{
	for (uint32_t i = 0; i < px->nuconn; i++)
		if (px->uconn[i].state != UC_FREE)
			uc_close(&px->uconn[i]);
}

/* ---- checking ---- */

#define CHECK(cond) do { if (!(cond)) return -__LINE__; } while (0)

int proxy_check(const struct proxy *px)
{
	uint32_t active[PROXY_MAX_UPSTREAMS] = {0}, idle[PROXY_MAX_UPSTREAMS] = {0};
	for (uint32_t i = 0; i < px->nuconn; i++) {
		const struct proxy_uconn *uc = &px->uconn[i];
		CHECK((uc->state == UC_FREE) == (uc->sock < 0));
		if (uc->state == UC_FREE)
			continue;
		CHECK(uc->up < px->cfg.nup);
		if (uc->state == UC_IDLE) {
			CHECK(!uc->x);
			idle[uc->up]++;
		} else {
			CHECK(uc->x && uc->x->uc == uc);
			active[uc->up]++;
		}
	}
	for (unsigned u = 0; u < px->cfg.nup; u++) {
		CHECK(px->up[u].active == active[u]);
		CHECK(px->up[u].nidle == idle[u] && idle[u] <= px->cfg.pool);
	}
	for (uint32_t i = 0; i < px->cfg.max_xchg; i++) {
		const struct proxy_xchg *x = &px->xchg[i];
		if (x->phase == X_FREE)
			continue;
		CHECK(x->busy == 0 && !x->dead);
		CHECK(x->r != NULL);
		CHECK(x->txpos <= x->txlen && x->txlen <= px->cfg.tx_size);
		CHECK(x->rpos <= x->rxlen && x->rxlen <= px->cfg.rx_size);
		CHECK(!x->uc || x->uc->x == x);
	}
	return 0;
}
