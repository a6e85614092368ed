/* app.c — the application engine of app.h: one state machine per
 * connection on the loop API, the request head parsed by parser.c, chunked
 * bodies decoded by chunked.c, paths by target.c.
 *
 * A connection has two halves that move independently, so a handler can
 * answer while the body still arrives (an echo, a 413 at the first chunk):
 *   in   IN_HEAD -> IN_WAIT (head done, body not asked) -> IN_BODY -> IN_DONE,
 *        or IN_LINGER (after an error or an unread body: read and drop
 *        until the peer closes, so our answer is not destroyed by a RST);
 *   out  OUT_NONE -> OUT_FIXED (head + the application's body) or
 *        OUT_STREAM (head + pieces copied into obuf) -> OUT_DONE.
 * A request is over when in is IN_DONE (or lingering) and out is OUT_DONE
 * with nothing left to send; then on_done runs and the next pipelined
 * request is parsed (never before the previous answer has left, so obuf
 * holds one answer at a time).
 *
 * Re-entrancy: every change goes through conn_advance.  A call made while
 * the connection is already advancing (a handler answering from inside
 * the handler, a body callback writing) only marks it `again`; the
 * outermost advance loops until nothing moves.  A connection found dead is
 * released only when the outermost advance unwinds, so on_done never runs
 * under an application callback for the same request.
 *
 * Buffers: rbuf holds the head at [0, head_len) for the request's whole
 * life (the accessors point there); body bytes are read behind it and
 * the area [head_len, rbuf_size) is reused once every piece was taken.
 * rbuf, obuf and hdr are one buffer set of the app's pool, taken at the
 * first read (a stream's at its open) and given back when the connection
 * is idle again: a keep-alive answer gone with nothing pipelined behind
 * it (request_over), or a read between requests that found nothing.  An
 * idle keep-alive connection holds none, so memory follows the requests
 * in flight, not the connections open.
 */
#include "app.h"

#include "../base/fmt.h"
#include "../h2/conn.h"
#include "chunked.h"
#include "emit.h"
#include "file.h"
#include "target.h"

#define HTTP_APP_PATH_MAX 2048u  /* decoded path + NUL; longer: 414 */
#define DISCARD_MAX 65536u       /* an unread body this small is read and dropped */
#define CHUNK_OVERHEAD 25u       /* "ffffffffffffffff\r\n" ... "\r\n" + "0\r\n\r\n" */
#define DROP_BYTES 128u          /* names http_app_header_drop keeps, NUL after each */

enum { IN_HEAD, IN_WAIT, IN_BODY, IN_DONE, IN_LINGER, IN_H2 };
enum { OUT_NONE, OUT_FIXED, OUT_STREAM, OUT_DONE };
enum { BM_STREAM, BM_COLLECT, BM_DISCARD, BM_SKIP };

struct http_app_conn {
	struct http_app *app;
	struct http_app_conn *next_free; /* on the free list only */
	int sock;                        /* -1 when free */
	struct loop_peer peer;
	struct loop_timer timer;         /* armed at or before deadline(c) */
	/* One buffer set of the pool, or all three NULL (none held: rlen,
	 * olen and hdr_len are 0 and no request lives). */
	uint8_t *rbuf, *obuf;            /* rbuf_size, out_size bytes */
	char *hdr;                       /* hdr_size bytes: the application's
					  * lines, each with CRLF, [0, hdr_len) */
	uint32_t rlen;       /* rbuf[0, rlen) read */
	uint32_t ipos;       /* next raw byte not yet parsed/decoded; <= rlen */
	uint32_t doff, dlen; /* decoded body bytes not yet taken: rbuf[doff, doff+dlen) */
	uint32_t olen, opos; /* obuf[opos, olen) not yet sent */
	uint8_t in, out, bmode;
	bool live;           /* a request's head was dispatched and it is not over */
	uint32_t epoch;      /* live: app->epoch when it was dispatched (app->live_cur/old) */
	bool busy, again, dead;
	bool eof;            /* the peer's FIN was read */
	bool may_read;       /* edge contract: bytes may wait in the socket (a READ event
			      * came, or no short read since); false saves the read that
			      * would only say EAGAIN (one system call a request on linux) */
	bool close_after;    /* the answer says Connection: close */
	bool paused;         /* the body callback took less than offered */
	bool failed;         /* the engine answered an error / aborted: on_done(ok false) */
	bool hdr_full;       /* a header line did not fit hdr: the answer becomes a 500 */
	bool replaced;       /* the engine answered for the application (hdr_full): its
			      * stream calls take what they are given and send nothing */
	bool in_cb;          /* an application callback for this request runs */
	bool wfn_due;        /* the write callback is owed a call (room appeared) */
	bool head_req;       /* HEAD: the body is not sent */
	bool chunked_out;    /* the stream is chunk-coded */
	bool ended;          /* http_app_end was called (stream) */
	bool shut;           /* loop_shutdown done (lingering) */
	bool drain;          /* lingering must read until the peer closes */
	uint16_t path_len, rest_off;
	uint32_t hdr_len;
	uint32_t head_len;
	sk_time_ns head_start;   /* first byte of this head (or accept / end of previous) */
	sk_time_ns body_start;   /* head complete */
	sk_time_ns send_progress; /* the socket last took bytes (or the answer began) */
	sk_time_ns linger_start;
	/* --trace only (0 when off): cycles at the accept, and at the start of
	 * the parse of the request being answered (its complete head). */
	uint64_t t_accept, t_req;
	uint64_t body_left;  /* Content-Length bytes not yet read */
	uint64_t stream_left; /* known-length stream: bytes not yet written */
	struct http_chunked ch;
	const struct http_app_route *route;
	http_app_body_fn body_fn;
	void *body_ctx;
	uint8_t *cbuf;       /* collect: the application's buffer */
	size_t ccap, clen;
	http_app_collect_fn cdone;
	http_app_handler_fn skip_fn; /* BM_SKIP: the answer, after the body */
	void *cctx;
	/* http_app_body_read: the pool slot the body is collected into (held
	 * until the request is over, on_done included; NULL: none), and the
	 * application's callback. */
	uint8_t *slot;
	http_app_read_fn rdone;
	void *rctx;
	char nobody[1];      /* the "" of a read without a body */
	const uint8_t *fbody; /* OUT_FIXED: the application's body */
	size_t flen, fsent;
	/* OUT_FIXED by http_app_send_file: the entry fbody is a slice of, so
	 * flush may hand it to the loop's send_ref or sendfile op; else NULL. */
	const struct http_file *ffile;
	uint64_t stream_len;  /* OUT_STREAM: the length given (HTTP_APP_CHUNKED: none) */
	/* http_app_header_length_here: hdr[0, cl_at) goes before the engine's
	 * Content-Length line, the rest after it; without, cl_at is unused. */
	bool cl_mark;
	bool drop_server;     /* http_app_header_drop("Server"): no Server line */
	uint32_t cl_at;
	/* Names dropped (http_app_header_drop), lower case, each NUL-ended:
	 * drops[0, drops_len); a later http_app_header of one is not sent. */
	uint16_t drops_len;
	char drops[DROP_BYTES];
	http_app_write_fn wfn;
	void *wctx;
	http_app_done_fn done_fn;
	void *done_ctx;
	/* config.access only (else never read): */
	bool lg_raw;          /* no parsed head: log rbuf's first line as sent */
	bool lg_owed;         /* a stream's record, owed at its end */
	uint16_t lg_status;   /* ... its status */
	uint64_t body_out;    /* OUT_STREAM: body bytes taken by http_app_write (not HEAD) */
	/* HTTP/2 (docs/h2.md; the section "HTTP/2" below).  A connection
	 * whose first bytes are the preface holds a session (sess, in IN_H2):
	 * it reads into rbuf and writes from obuf.  Each stream's request
	 * runs on a state of its own with no socket (sock SOCK_H2): h2 is
	 * its session's connection, sid its stream.  Its head is written
	 * into rbuf as HTTP/1.1 and parsed as one, DATA is appended behind
	 * it, and its answer's head in obuf becomes HEADERS at flush. */
	struct http_app_h2 *sess;
	struct http_app_conn *h2;
	uint32_t sid;
	uint64_t h2_fly;      /* h2_flying: the bytes of the piece the engine holds */
	bool h2_may;          /* the preface may still come (first bytes, HTTP/2 on) */
	bool h2_eos;          /* the peer's END_STREAM (or trailers) came */
	bool h2_resp;         /* HEADERS handed to the engine */
	bool h2_end;          /* END_STREAM handed to the engine */
	bool h2_flying;       /* a body piece is the engine's until take_writable */
	bool h2_fly_obuf;     /* ... from obuf (else from fbody) */
	bool h2_blocked;      /* HEADERS found no room: retried after output */
	bool h2_orphan;       /* the stream or its session is gone: no engine call */
	uint64_t h2_rx;       /* body bytes of a body framed by END_STREAM only */
	/* The parsed head and the decoded path: in the buffer set too (set
	 * with rbuf; NULL without one), since only a request needs them. */
	struct http_req *req;
	char *path;           /* HTTP_APP_PATH_MAX bytes */
};

/* The request handle is the connection: one request at a time on it. */
struct http_app_req {
	struct http_app_conn c;
};
#define REQ(c) ((struct http_app_req *)(void *)(c))
#define CONN(r) (&(r)->c)

/* An HTTP/2 session: the engine of one connection (owner) and the stream
 * states it holds (str[0, n): each a connection state whose h2 is owner).
 * Invariant: a stream state is in str exactly while its h2 is owner and
 * it is not h2_orphan. */
#define H2_COUNTED 7u /* sess_count's sums */
struct http_app_h2 {
	struct h2_conn h;
	struct http_app_conn *owner;
	struct http_app_h2 *next_free;
	uint32_t n;
	bool closed;   /* the engine said CLOSE: nothing more is read */
	bool blocked;  /* a stream waits for room for its HEADERS */
	/* DATA that did not fit its stream's rbuf, still in the owner's
	 * rbuf at [held_off, held_off + held_len): nothing more is read until
	 * the stream takes it.  Only a client that sends before our SETTINGS
	 * arrive (within the default 65,535-byte window, more than we give)
	 * gets here. */
	bool held_eos;
	uint32_t held_sid, held_off, held_len;
	/* The engine's counters as last added to the app's (sess_count):
	 * counted[i] <= the engine's sum i, which only grows. */
	uint64_t counted[H2_COUNTED];
	struct {
		uint32_t sid;
		struct http_app_conn *c;
	} str[H2_STREAMS_CAP];
};
#define SOCK_H2 0x7fffffff      /* a stream's state: no socket of its own */
#define H2_HEAD_ROOM 16448u     /* rbuf kept for a stream's head: max_header_list + 64 */
#define H2_SESSIONS_DEFAULT 8u

static void conn_advance(struct http_app_conn *c);
static void conn_timer(struct loop_timer *t, sk_time_ns now);

static uint8_t lower(uint8_t ch)
{
	return ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch;
}

/* ---- config and memory ---- */

void http_app_config_default(struct http_app_config *cfg)
{
	sk_memset(cfg, 0, sizeof(*cfg));
	cfg->port = 80;
	cfg->max_conns = 256;
	cfg->max_body = 1u << 20;
	cfg->rbuf_size = 32768;
	cfg->out_size = 16384;
	cfg->hdr_size = 1024;
	cfg->header_timeout = 10 * SK_NS_PER_S;
	cfg->body_timeout = 60 * SK_NS_PER_S;
	cfg->send_timeout = 60 * SK_NS_PER_S;
	cfg->keepalive_timeout = 60 * SK_NS_PER_S;
	cfg->linger_timeout = 2 * SK_NS_PER_S;
	cfg->scheme = "http";
	cfg->body_slots = 0;
	cfg->body_size = 0;
	cfg->h2_sessions = H2_SESSIONS_DEFAULT;
}

#define ALIGN16(x) (((x) + 15u) & ~(size_t)15u)

static bool cfg_ok(const struct http_app_config *cfg)
{
	return cfg->max_conns >= 1 && cfg->max_conns <= (1u << 20) &&
	       cfg->rbuf_size >= HTTP_HEAD_MAX + 1024u && cfg->rbuf_size <= (1u << 24) &&
	       cfg->out_size >= 2048u && cfg->out_size <= (1u << 24) && cfg->max_body > 0 &&
	       cfg->hdr_size >= 256u && cfg->hdr_size <= cfg->out_size - 1024u &&
	       cfg->body_size <= (1u << 26) && cfg->body_slots <= (1u << 20) &&
	       cfg->h2_sessions <= 4096u &&
	       (cfg->h2_sessions == 0 || cfg->rbuf_size >= H2_HEAD_ROOM + 8192u);
}

#define SLOTS_DEFAULT 16u
/* Bytes of one slot of the body pool: the body, its NUL, room for the
 * free list's link. */
static size_t slot_bytes(const struct http_app_config *cfg)
{
	return ALIGN16((size_t)cfg->body_size + 1u < 16u ? 16u : (size_t)cfg->body_size + 1u);
}

void http_app_config_fit(struct http_app_config *cfg, const struct http_app_def *def)
{
	if (!def)
		return;
	if (def->body_size > cfg->body_size)
		cfg->body_size = def->body_size;
	if (cfg->body_size) {
		uint32_t n = def->body_slots ? def->body_slots : SLOTS_DEFAULT;
		if (n > cfg->body_slots)
			cfg->body_slots = n;
	}
	if (def->error_answer && !cfg->error_answer) {
		cfg->error_answer = def->error_answer;
		cfg->error_answer_ctx = def->error_answer_ctx;
	}
	http_app_config_hdr(cfg, def->hdr_size);
}

void http_app_config_hdr(struct http_app_config *cfg, uint32_t hdr_size)
{
	if (hdr_size <= cfg->hdr_size)
		return;
	cfg->hdr_size = hdr_size;
	if (cfg->out_size < cfg->hdr_size + 1024u)
		cfg->out_size = cfg->hdr_size + 1024u;
}

/* Bytes of one buffer set: rbuf, obuf, hdr, the parsed head, the path. */
static size_t bufs_size(const struct http_app_config *cfg)
{
	return ALIGN16(cfg->rbuf_size) + ALIGN16(cfg->out_size) + ALIGN16(cfg->hdr_size) +
	       ALIGN16(sizeof(struct http_req)) + HTTP_APP_PATH_MAX;
}

/* The i-th HTTP/2 session of the pool: cfg.h2_sessions of them in mem,
 * behind the buffer sets and the body pool (http_app_mem_size).
 * A free one has no owner. */
static struct http_app_h2 *sess_at(const struct http_app *app, uint32_t i)
{
	const struct http_app_config *cfg = &app->cfg;
	uint8_t *h2p = app->bufs + (size_t)cfg->max_conns * bufs_size(cfg) +
		       (cfg->body_size ? (size_t)cfg->body_slots * slot_bytes(cfg) : 0);
	return (struct http_app_h2 *)(void *)(h2p + (size_t)i * ALIGN16(sizeof(struct http_app_h2)));
}

size_t http_app_mem_size(const struct http_app_config *cfg)
{
	if (!cfg_ok(cfg))
		return 0;
	size_t per = ALIGN16(sizeof(struct http_app_conn)) + bufs_size(cfg);
	size_t pool = cfg->body_size ? (size_t)cfg->body_slots * slot_bytes(cfg) : 0;
	return 16 + (size_t)cfg->max_conns * per + pool +
	       (size_t)cfg->h2_sessions * ALIGN16(sizeof(struct http_app_h2));
}

int http_app_init(struct http_app *app, void *mem, size_t size, const struct http_app_config *cfg,
		  const struct http_app_def *def, struct loop *loop)
{
	size_t need = http_app_mem_size(cfg);
	if (need == 0 || !def || (def->nroutes && !def->routes))
		return -SK_EINVAL;
	if (size < need)
		return -SK_ENOMEM;
	for (unsigned i = 0; i < def->nroutes; i++)
		if (!def->routes[i].path || def->routes[i].path[0] != '/' || !def->routes[i].fn)
			return -SK_EINVAL;
	sk_memset(app, 0, sizeof(*app));
	app->cfg = *cfg;
	app->def = def;
	app->loop = loop;
	app->lsock = -1;
	sk_memcpy(app->date, "Thu, 01 Jan 1970 00:00:00 GMT", 30);
	uintptr_t p = ((uintptr_t)mem + 15u) & ~(uintptr_t)15u;
	app->conns = (struct http_app_conn *)p;
	p += (uintptr_t)cfg->max_conns * ALIGN16(sizeof(struct http_app_conn));
	app->bufs = (uint8_t *)p;
	/* Neither states nor buffer sets are touched before they are used. */
	app->bufs_fresh = cfg->max_conns;
	app->states_fresh = cfg->max_conns;
	size_t bufsz = bufs_size(cfg);
	if (cfg->body_size) {
		uint8_t *pool = app->bufs + (size_t)cfg->max_conns * bufsz;
		for (uint32_t i = cfg->body_slots; i-- > 0;) {
			uint8_t *sl = pool + (size_t)i * slot_bytes(cfg);
			sk_memcpy(sl, &app->slot_free, sizeof(app->slot_free));
			app->slot_free = sl;
		}
	}
	for (uint32_t i = cfg->h2_sessions; i-- > 0;) {
		struct http_app_h2 *s = sess_at(app, i);
		s->owner = NULL;
		s->next_free = app->h2_free;
		app->h2_free = s;
	}
	if (def->init) {
		int r = def->init(app, def->init_ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

void http_app_set_date(struct http_app *app, const char *date29)
{
	sk_memcpy(app->date, date29, 29);
	app->date[29] = 0;
}

/* "prefix.name" into b (names are at most 31 bytes, prefixes 15). */
static const char *stat_name(char b[48], const char *prefix, const char *name)
{
	size_t k = 0;
	for (; *prefix && k < 15; prefix++)
		b[k++] = *prefix;
	b[k++] = '.';
	for (; *name && k < 47; name++)
		b[k++] = *name;
	b[k] = 0;
	return b;
}

void http_app_set_access(struct http_app *app, http_access_fn fn, void *ctx)
{
	app->cfg.access = fn;
	app->cfg.access_ctx = ctx;
}

void http_app_stats_emit(const struct http_app_stats *st, uint64_t open, const char *prefix,
			 void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	char b[48];
#define HTTP_APP_STAT_PRINT(n) fn(ctx, stat_name(b, prefix, #n), st->n);
	HTTP_APP_STATS(HTTP_APP_STAT_PRINT)
#undef HTTP_APP_STAT_PRINT
	fn(ctx, stat_name(b, prefix, "conns_open"), open);
}

void http_app_stats_add(struct http_app_stats *sum, uint64_t *open, const struct http_app *app)
{
#define HTTP_APP_STAT_ADD(n) sum->n += app->st.n;
	HTTP_APP_STATS(HTTP_APP_STAT_ADD)
#undef HTTP_APP_STAT_ADD
	*open += app->nconns;
}

void http_app_stats(const struct http_app *app,
		    void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	http_app_stats_emit(&app->st, app->nconns, "http", fn, ctx);
}

/* ---- the request's accessors ---- */

unsigned http_app_method(const struct http_app_req *r)
{
	return CONN(r)->req->method;
}

const char *http_app_target(const struct http_app_req *r, size_t *len)
{
	const struct http_app_conn *c = CONN(r);
	*len = c->req->target.len;
	return (const char *)c->rbuf + c->req->target.off;
}

const char *http_app_path(const struct http_app_req *r, size_t *len)
{
	if (len)
		*len = CONN(r)->path_len;
	return CONN(r)->path;
}

const char *http_app_rest(const struct http_app_req *r, size_t *len)
{
	const struct http_app_conn *c = CONN(r);
	if (len)
		*len = (size_t)(c->path_len - c->rest_off);
	return c->path + c->rest_off;
}

const char *http_app_query(const struct http_app_req *r, size_t *len)
{
	const struct http_app_conn *c = CONN(r);
	const char *t = (const char *)c->rbuf + c->req->target.off;
	for (size_t i = 0; i < c->req->target.len; i++)
		if (t[i] == '?') {
			*len = c->req->target.len - i - 1;
			return t + i + 1;
		}
	*len = 0;
	return NULL;
}

unsigned http_app_version(const struct http_app_req *r)
{
	return CONN(r)->req->version;
}

unsigned http_app_nheaders(const struct http_app_req *r)
{
	return CONN(r)->req->nheaders;
}

void http_app_header_at(const struct http_app_req *r, unsigned i, const char **name,
			size_t *nlen, const char **value, size_t *vlen)
{
	const struct http_app_conn *c = CONN(r);
	const struct http_header *h = &c->req->headers[i < c->req->nheaders ? i : 0];
	*name = (const char *)c->rbuf + h->name.off;
	*nlen = h->name.len;
	*value = (const char *)c->rbuf + h->value.off;
	*vlen = h->value.len;
}

const char *http_app_header_get(const struct http_app_req *r, const char *name, size_t *vlen)
{
	const struct http_app_conn *c = CONN(r);
	size_t n = sk_strlen(name);
	for (unsigned i = 0; i < c->req->nheaders; i++) {
		const struct http_header *h = &c->req->headers[i];
		if (h->name.len != n)
			continue;
		const uint8_t *p = c->rbuf + h->name.off;
		size_t k = 0;
		while (k < n && lower(p[k]) == lower((uint8_t)name[k]))
			k++;
		if (k == n) {
			if (vlen)
				*vlen = h->value.len;
			return (const char *)c->rbuf + h->value.off;
		}
	}
	return NULL;
}

const char *http_app_host(const struct http_app_req *r, size_t *vlen)
{
	const struct http_app_conn *c = CONN(r);
	if (!c->req->has_host)
		return NULL;
	if (vlen)
		*vlen = c->req->host.len;
	return (const char *)c->rbuf + c->req->host.off;
}

const struct sk_addr *http_app_peer(const struct http_app_req *r, uint16_t *port)
{
	if (port)
		*port = CONN(r)->peer.port;
	return &CONN(r)->peer.addr;
}

bool http_app_has_body(const struct http_app_req *r)
{
	const struct http_app_conn *c = CONN(r);
	return c->req->chunked || (c->req->has_content_length && c->req->content_length > 0);
}

uint64_t http_app_body_length(const struct http_app_req *r)
{
	const struct http_app_conn *c = CONN(r);
	if (c->req->chunked)
		return HTTP_APP_CHUNKED;
	return c->req->has_content_length ? c->req->content_length : 0;
}

struct loop *http_app_loop(const struct http_app_req *r)
{
	return CONN(r)->app->loop;
}

struct http_app *http_app_of(const struct http_app_req *r)
{
	return CONN(r)->app;
}

const char *http_app_scheme(const struct http_app_req *r)
{
	const char *s = CONN(r)->app->cfg.scheme;
	return s ? s : "http";
}

void http_app_on_done(struct http_app_req *r, http_app_done_fn fn, void *ctx)
{
	CONN(r)->done_fn = fn;
	CONN(r)->done_ctx = ctx;
}

/* ---- output ---- */

/* A stream's answer not all handed to its session's engine: a piece it
 * still holds, or the END_STREAM of a complete answer not yet handed.
 * Out of line: out_pending runs several times per request, and inlined
 * whole it was no longer inlined itself (+80 cycles per HTTP/1.1 answer
 * in bench_cost http). */
__attribute__((noinline, cold)) static bool h2_owed(const struct http_app_conn *c)
{
	return c->h2_flying || (!c->h2_end && (c->out == OUT_FIXED || c->out == OUT_DONE));
}

__attribute__((always_inline)) static inline bool out_pending(const struct http_app_conn *c)
{
	return c->opos < c->olen || (c->out == OUT_FIXED && c->fsent < c->flen) ||
	       (sk_unlikely(c->h2 != NULL) && h2_owed(c));
}

/* ---- buffer sets ---- */

/* A buffer set off the pool: the last one given back (its pages warm),
 * else one never used.  The caller holds a state or has checked that one
 * is free, and a state holds at most one set, so one is always there. */
static uint8_t *bufs_get(struct http_app *app)
{
	uint8_t *b = app->bufs_free;
	if (b) {
		sk_memcpy(&app->bufs_free, b, sizeof(app->bufs_free));
	} else {
		uint32_t i = app->cfg.max_conns - app->bufs_fresh--;
		b = app->bufs + (size_t)i * bufs_size(&app->cfg);
	}
	app->bufs_held++;
	return b;
}

static void bufs_ret(struct http_app *app, uint8_t *b)
{
	sk_memcpy(b, &app->bufs_free, sizeof(app->bufs_free));
	app->bufs_free = b;
	app->bufs_held--;
}

/* c takes set b: a request begins (its parse state fresh). */
static void bufs_attach(struct http_app_conn *c, uint8_t *b)
{
	const struct http_app_config *cfg = &c->app->cfg;
	c->rbuf = b;
	c->obuf = b + ALIGN16(cfg->rbuf_size);
	c->hdr = (char *)c->obuf + ALIGN16(cfg->out_size);
	c->req = (struct http_req *)(void *)(c->hdr + ALIGN16(cfg->hdr_size));
	c->path = (char *)c->req + ALIGN16(sizeof(struct http_req));
	http_req_init(c->req, cfg->max_body);
	c->req->accept_purge = cfg->accept_purge;
}

/* Give c's set back (it holds one and needs none): nothing read, nothing
 * to send, no header lines kept. */
static void bufs_put(struct http_app_conn *c)
{
	bufs_ret(c->app, c->rbuf);
	c->rbuf = c->obuf = NULL;
	c->hdr = c->path = NULL;
	c->req = NULL;
	c->rlen = c->ipos = c->olen = c->opos = c->hdr_len = 0;
}

/* The answer's file (http_app_send_file), counted while set: a tree the
 * host replaced may be unmapped only when no connection holds one. */
static void set_file(struct http_app_conn *c, const struct http_file *f)
{
	c->app->files_held += (uint32_t)(f != NULL) - (uint32_t)(c->ffile != NULL);
	c->ffile = f;
}

uint32_t http_app_files_held(const struct http_app *app)
{
	return app->files_held;
}

static void count_status(struct http_app *app, int status)
{
	if (status < 300)
		app->st.resp_2xx++;
	else if (status < 400)
		app->st.resp_3xx++;
	else if (status < 500)
		app->st.resp_4xx++;
	else
		app->st.resp_5xx++;
	switch (status) {
	case 400: app->st.resp_400++; break;
	case 404: app->st.resp_404++; break;
	case 405: app->st.resp_405++; break;
	case 408: app->st.resp_408++; break;
	case 413: app->st.resp_413++; break;
	case 500: app->st.resp_500++; break;
	case 503: app->st.resp_503++; break;
	default: break;
	}
}

/* ---- the access log (cfg.access; nothing here runs without it) ---- */

static struct http_access_str log_hdr(const struct http_app_conn *c, const char *lname, size_t n)
{
	const struct http_header *h = http_req_find(c->req, c->rbuf, lname, n);
	return h ? (struct http_access_str){c->rbuf + h->value.off, h->value.len}
		 : (struct http_access_str){NULL, 0};
}

/* One record for the answer of c's request.  The head is still in
 * rbuf[0, head_len) (the body is read behind it, and lingering reads,
 * which overwrite it, start only once the request is over).  A head the
 * parser refused (lg_raw) logs its first line as sent, up to a CR or LF,
 * one byte past what access.h keeps (so its cut shows). */
static void log_answer(struct http_app_conn *c, int status, uint64_t body_bytes)
{
	struct http_app *app = c->app;
	struct http_access rec = {.addr = c->peer.addr, .port = c->peer.port,
				  .status = (uint16_t)status, .body_bytes = body_bytes};
	if (c->lg_raw) {
		uint32_t n = 0, max = c->rlen < HTTP_ACCESS_LINE_MAX + 1u ? c->rlen
									: HTTP_ACCESS_LINE_MAX + 1u;
		while (n < max && c->rbuf[n] != '\r' && c->rbuf[n] != '\n')
			n++;
		if (c->rlen)
			rec.line = (struct http_access_str){c->rbuf, n};
	} else {
		/* From the method to the end of the version, which is exactly
		 * "HTTP/D.D" (parser.h). */
		const struct http_req *r = c->req;
		rec.line = (struct http_access_str){
			c->rbuf + r->method_s.off,
			(uint32_t)(r->target.off + r->target.len + 9u - r->method_s.off)};
		rec.referer = log_hdr(c, "referer", 7);
		rec.user_agent = log_hdr(c, "user-agent", 10);
	}
	app->cfg.access(app->cfg.access_ctx, &rec);
}

/* A stream's record, once: at its end, or when it is cut. */
static void log_stream(struct http_app_conn *c)
{
	if (c->lg_owed) {
		c->lg_owed = false;
		if (c->app->cfg.access) /* not taken away since (http_app_set_access) */
			log_answer(c, c->lg_status, c->body_out);
	}
}

/* Would a body the handler never asked for be read and dropped (keeping
 * the connection), or does the connection close after the answer? */
static bool unread_body_closes(const struct http_app_conn *c)
{
	if (c->in != IN_WAIT)
		return false;
	if (c->req->expect_continue || c->req->chunked)
		return true;
	return c->req->content_length > DISCARD_MAX;
}

/* The head of the answer into obuf at olen.  clen: the body's length, or
 * HTTP_APP_CHUNKED for a chunked / close-delimited stream. */
static void put_head(struct http_app_conn *c, int status, uint64_t clen)
{
	struct http_app *app = c->app;
	if (c->opos == c->olen)
		c->opos = c->olen = 0;
	if (!c->req->keep_alive || unread_body_closes(c) || c->failed || sk_unlikely(app->draining))
		c->close_after = true;
	c->chunked_out = false;
	bool no_body = status == 204 || status == 304;
	if (clen == HTTP_APP_CHUNKED && !no_body) {
		if (c->req->version >= 11 && !c->h2)
			c->chunked_out = true;
		else
			c->close_after = true; /* 1.0: the body ends with the connection */
	}
	struct http_out o = {c->obuf + c->olen, c->obuf + app->cfg.out_size};
	if (sk_likely(!c->drop_server)) {
		http_emit_status(&o, status, app->date);
	} else {
		/* http_emit_status's lines without "Server: skiff". */
		char code[4] = {(char)('0' + status / 100), (char)('0' + status / 10 % 10),
				(char)('0' + status % 10), ' '};
		http_out_str(&o, "HTTP/1.1 ");
		http_out_mem(&o, code, 4);
		http_out_str(&o, http_reason(status));
		http_out_str(&o, "\r\nDate: ");
		http_out_mem(&o, app->date, 29);
		http_out_str(&o, "\r\n");
	}
	uint32_t cl_at = c->cl_mark ? c->cl_at : c->hdr_len;
	http_out_mem(&o, c->hdr, cl_at);
	if (no_body) {
		/* neither length nor coding */
	} else if (c->chunked_out) {
		http_out_str(&o, "Transfer-Encoding: chunked\r\n");
	} else if (clen != HTTP_APP_CHUNKED) {
		http_out_str(&o, "Content-Length: ");
		http_out_u64(&o, clen);
		http_out_str(&o, "\r\n");
	}
	http_out_mem(&o, c->hdr + cl_at, c->hdr_len - cl_at);
	if (c->close_after)
		http_out_str(&o, "Connection: close\r\n");
	else if (c->req->version == 10)
		http_out_str(&o, "Connection: keep-alive\r\n");
	http_out_str(&o, "\r\n");
	c->olen = (uint32_t)(o.p - c->obuf);
	c->send_progress = loop_now(app->loop);
	count_status(app, status);
}

/* One write of iov[0, n): the last slice is the file's when the answer is
 * a file body (http_app_send_file) and the loop can take it by reference
 * (send_ref: a pinned mapping) or from the descriptor (sendfile); else a
 * writev, which copies. */
static long flush_call(struct http_app_conn *c, const struct loop_iov *iov, int n)
{
	struct loop *l = c->app->loop;
	const struct http_file *f = c->ffile;
	if (f && c->out == OUT_FIXED && c->fsent < c->flen) { /* the body is iov[n - 1] */
		const struct loop_iov *b = &iov[n - 1];
		if (f->pinned && loop_has_send_ref(l))
			return loop_send_ref(l, c->sock, iov, n - 1, b->base, b->len);
		if (f->fd > 0 && loop_has_sendfile(l))
			return loop_sendfile(l, c->sock, iov, n - 1, f->fd,
					     (uint64_t)((const uint8_t *)b->base - f->data), b->len);
	}
	return loop_writev(l, c->sock, iov, n);
}

static int h2_flush(struct http_app_conn *c);

/* Send what is queued.  Returns 1 when nothing is left, 0 when the socket
 * took less (wait for LOOP_EV_WRITE), < 0 on an error. */
static int flush(struct http_app_conn *c)
{
	if (sk_unlikely(c->h2 != NULL))
		return h2_flush(c);
	while (out_pending(c)) {
		struct loop_iov iov[2];
		int n = 0;
		if (c->opos < c->olen)
			iov[n++] = (struct loop_iov){c->obuf + c->opos, c->olen - c->opos};
		if (c->out == OUT_FIXED && c->fsent < c->flen)
			iov[n++] = (struct loop_iov){c->fbody + c->fsent, c->flen - c->fsent};
		size_t want = iov[0].len + (n > 1 ? iov[1].len : 0);
		long w = flush_call(c, iov, n);
		if (w == -SK_EAGAIN)
			return 0;
		if (w < 0)
			return (int)w;
		size_t k = (size_t)w;
		c->app->st.bytes_out += k;
		if (k)
			c->send_progress = loop_now(c->app->loop);
		size_t a = c->olen - c->opos;
		if (k >= a) {
			c->opos = c->olen = 0;
			c->fsent += k - a;
		} else {
			c->opos += (uint32_t)k;
		}
		if (k)
			c->wfn_due = true;
		if (k < want)
			return 0;
	}
	return 1;
}

/* Is v a header value we may send (no CR, LF or other control but TAB)? */
static bool value_ok(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (((uint8_t)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
			return false;
	return true;
}

/* The body and the Content-Type line of an answer of the engine's own:
 * the application's (config.error_answer), else the plain text of
 * emit.c.  body: HTTP_APP_ERROR_BODY_MAX bytes; the line goes to
 * hdr + *hdr_len (the header area, at least 256 bytes, is empty here). */
static size_t error_body(struct http_app *app, int status, uint8_t *body, char *hdr,
			 uint32_t *hdr_len)
{
	const char *ct = "text/plain";
	long n = -1;
	if (app->cfg.error_answer) {
		n = app->cfg.error_answer(app->cfg.error_answer_ctx, status, (char *)body,
					  HTTP_APP_ERROR_BODY_MAX, &ct);
		size_t tl = ct ? sk_strlen(ct) : 0;
		if (n < 0 || n > (long)HTTP_APP_ERROR_BODY_MAX || !ct || tl == 0 || tl > 128 ||
		    !value_ok(ct, tl)) {
			n = -1;
			ct = "text/plain";
		}
	}
	if (n < 0)
		n = (long)http_emit_error_body(body, HTTP_APP_ERROR_BODY_MAX, status);
	struct http_out o = {(uint8_t *)hdr + *hdr_len, (uint8_t *)hdr + 256};
	http_out_str(&o, "Content-Type: ");
	http_out_str(&o, ct);
	http_out_str(&o, "\r\n");
	*hdr_len = (uint32_t)(o.p - (uint8_t *)hdr);
	return (size_t)n;
}

/* An answer of the engine's own: a short body (error_body), the connection
 * closes. */
static void engine_answer(struct http_app_conn *c, int status)
{
	if (c->out != OUT_NONE) {
		/* Something already left: the only honest end is to cut it. */
		c->dead = true;
		c->failed = true;
		return;
	}
	c->failed = true;
	c->hdr_len = 0;
	c->cl_mark = false;
	uint8_t body[HTTP_APP_ERROR_BODY_MAX];
	size_t bl = error_body(c->app, status, body, c->hdr, &c->hdr_len);
	c->close_after = true;
	put_head(c, status, bl);
	if (sk_unlikely(c->app->cfg.access != NULL))
		log_answer(c, status, bl);
	struct http_out o = {c->obuf + c->olen, c->obuf + c->app->cfg.out_size};
	http_out_mem(&o, body, bl);
	c->olen = (uint32_t)(o.p - c->obuf);
	c->out = OUT_DONE;
	/* Whatever the peer still sends is read and dropped. */
	if (c->in != IN_DONE)
		c->in = IN_LINGER;
}

/* ---- the response API ---- */

/* Is name[0, nl) (any case) among the dropped names? */
static bool dropped(const struct http_app_conn *c, const char *name, size_t nl)
{
	for (uint32_t at = 0; at < c->drops_len;) {
		const char *d = c->drops + at;
		size_t dl = sk_strlen(d), j = 0;
		while (dl == nl && j < nl && lower((uint8_t)name[j]) == (uint8_t)d[j])
			j++;
		if (dl == nl && j == nl)
			return true;
		at += (uint32_t)dl + 1;
	}
	return false;
}

/* Is name[0, nl) one of the engine's framing lines, which an application
 * neither adds nor removes? */
static bool engine_line(const char *name, size_t nl)
{
	/* By length first: most names an application adds (Content-Type,
	 * Location, Cache-Control) match none of the four lengths. */
	const char *ours;
	switch (nl) {
	case 4: ours = "date"; break;
	case 10: ours = "connection"; break;
	case 14: ours = "content-length"; break;
	case 17: ours = "transfer-encoding"; break;
	default: return false;
	}
	size_t j = 0;
	while (j < nl && lower((uint8_t)name[j]) == (uint8_t)ours[j])
		j++;
	return j == nl;
}

static bool token_ok(const char *name, size_t nl)
{
	if (nl == 0)
		return false;
	for (size_t i = 0; i < nl; i++)
		if (!(http_char_class[(uint8_t)name[i]] & HTTP_C_TOKEN))
			return false;
	return true;
}

int http_app_header_drop(struct http_app_req *r, const char *name)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live)
		return -SK_EINVAL;
	size_t nl = sk_strlen(name);
	if (!token_ok(name, nl) || engine_line(name, nl))
		return -SK_EINVAL;
	static const char server[] = "server";
	size_t j = 0;
	while (nl == sizeof(server) - 1 && j < nl && lower((uint8_t)name[j]) == (uint8_t)server[j])
		j++;
	if (j == sizeof(server) - 1) {
		c->drop_server = true; /* the engine's own line; the application may add one */
	}
	if (dropped(c, name, nl))
		return 0;
	if (c->drops_len + nl + 1 > DROP_BYTES)
		return -SK_ENOBUFS;
	for (size_t i = 0; i < nl; i++)
		c->drops[c->drops_len + i] = (char)lower((uint8_t)name[i]);
	c->drops[c->drops_len + nl] = 0;
	c->drops_len = (uint16_t)(c->drops_len + nl + 1);
	/* Lines already added with that name go. */
	uint32_t in = 0, out = 0;
	while (in < c->hdr_len) {
		uint32_t e = in;
		while (c->hdr[e] != '\n')
			e++;
		e++; /* past the line's CRLF */
		bool gone = e - in > nl && c->hdr[in + nl] == ':' && dropped(c, c->hdr + in, nl);
		if (!gone) {
			if (out != in)
				sk_memmove(c->hdr + out, c->hdr + in, e - in);
			out += e - in;
		}
		if (c->cl_mark && c->cl_at == e)
			c->cl_at = out; /* the mark stays after the same lines */
		in = e;
	}
	c->hdr_len = out;
	return 0;
}

int http_app_header_length_here(struct http_app_req *r)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live)
		return -SK_EINVAL;
	c->cl_mark = true;
	c->cl_at = c->hdr_len;
	return 0;
}

void http_app_set_rest(struct http_app_req *r, size_t off)
{
	struct http_app_conn *c = CONN(r);
	c->rest_off = (uint16_t)(off < c->path_len ? off : c->path_len);
}

int http_app_close_after(struct http_app_req *r)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live)
		return -SK_EINVAL;
	c->close_after = true; /* put_head keeps it; request_over closes */
	return 0;
}

/* A header line that does not fit the area (overflow), or a formatted
 * value that is not a header value (a conversion outside base/fmt.h's
 * subset, CR or LF): counted, said in the error log (once per answer),
 * and the answer to come is the engine's 500. */
static void header_refused(struct http_app_conn *c, const char *name, size_t nl, bool overflow)
{
	struct http_app *app = c->app;
	c->hdr_full = true;
	if (overflow)
		app->st.header_overflow++;
	else
		app->st.header_invalid++;
	if (!app->cfg.error_log)
		return;
	char msg[256];
	struct http_out o = {(uint8_t *)msg, (uint8_t *)msg + sizeof(msg) - 1};
	http_out_str(&o, "the answer to ");
	http_out_mem(&o, c->path, c->path_len > 96 ? 96 : c->path_len);
	http_out_str(&o, c->path_len > 96 ? "... " : " ");
	http_out_str(&o, overflow ? "is a 500: its header line '"
				  : "is a 500: the value of its header line '");
	http_out_mem(&o, name, nl > 48 ? 48 : nl);
	if (overflow) {
		http_out_str(&o, "' does not fit the header area of ");
		http_out_u64(&o, app->cfg.hdr_size);
		http_out_str(&o, " bytes (raise the application's hdr_size)");
	} else {
		http_out_str(&o, "' is not one (a format outside http_app_headerf's, or CR/LF in it)");
	}
	size_t n = o.p <= o.end ? (size_t)(o.p - (uint8_t *)msg) : 0;
	msg[n] = 0;
	app->cfg.error_log(app->cfg.error_ctx, overflow ? "http.header_overflow" : "http.header_invalid",
			   msg);
}

/* Does v[0, n) hold a CR or an LF?  Eight bytes at a time: a byte of
 * w ^ 0x0d..0d is zero where w holds a CR, and (x - 0x01..01) & ~x &
 * 0x80..80 is nonzero exactly when some byte of x is zero.  A byte loop
 * cost about 11 instructions per byte of value here. */
static bool has_crlf(const char *v, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w, a, b;
		sk_memcpy(&w, v + i, 8);
		a = w ^ (ones * '\r');
		b = w ^ (ones * '\n');
		if (((a - ones) & ~a & highs) | ((b - ones) & ~b & highs))
			return true;
	}
	for (; i < n; i++)
		if (v[i] == '\r' || v[i] == '\n')
			return true;
	return false;
}

int http_app_header(struct http_app_req *r, const char *name, const char *value)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live)
		return -SK_EINVAL;
	/* This runs for every header line of every answer: the name's length
	 * and its check in one pass, the value's a word at a time. */
	size_t nl = 0, vl;
	while (http_char_class[(uint8_t)name[nl]] & HTTP_C_TOKEN)
		nl++;
	if (nl == 0 || name[nl] != '\0')
		return -SK_EINVAL; /* empty, or a byte no token holds */
	vl = sk_strlen(value);
	if (has_crlf(value, vl))
		return -SK_EINVAL;
	if (engine_line(name, nl))
		return -SK_EINVAL;
	if (sk_unlikely(c->drops_len) && dropped(c, name, nl))
		return 0; /* a name the route removes: accepted, not sent */
	if (c->hdr_len + nl + vl + 4 > c->app->cfg.hdr_size) {
		/* Never an answer without a line the application meant to
		 * send (a 302 without its Location): the answer fails loudly. */
		if (!c->hdr_full)
			header_refused(c, name, nl, true);
		return -SK_ENOBUFS;
	}
	char *p = c->hdr + c->hdr_len;
	sk_memcpy(p, name, nl);
	p[nl] = ':';
	p[nl + 1] = ' ';
	sk_memcpy(p + nl + 2, value, vl);
	p[nl + 2 + vl] = '\r';
	p[nl + 3 + vl] = '\n';
	c->hdr_len = (uint32_t)(c->hdr_len + nl + vl + 4);
	return 0;
}

int http_app_headerf(struct http_app_req *r, const char *name, const char *fmt, ...)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live || !fmt)
		return -SK_EINVAL;
	size_t nl = sk_strlen(name);
	if (!token_ok(name, nl) || engine_line(name, nl))
		return -SK_EINVAL;
	if (sk_unlikely(c->drops_len) && dropped(c, name, nl))
		return 0;
	/* Straight into the area: "Name: " + value + NUL (the NUL's byte is
	 * the CR's, so the room asked is that of the whole line). */
	uint32_t room = c->app->cfg.hdr_size - c->hdr_len;
	char *p = c->hdr + c->hdr_len;
	long vl = -1;
	if (nl + 4 <= room) {
		va_list ap;
		va_start(ap, fmt);
		vl = sk_vfmt(p + nl + 2, room - nl - 3, fmt, ap);
		va_end(ap);
		if (vl < 0 || !value_ok(p + nl + 2, (size_t)vl < room - nl - 3 ? (size_t)vl : 0)) {
			if (!c->hdr_full)
				header_refused(c, name, nl, false);
			return -SK_EINVAL;
		}
	}
	if (vl < 0 || c->hdr_len + nl + (size_t)vl + 4 > c->app->cfg.hdr_size) {
		if (!c->hdr_full)
			header_refused(c, name, nl, true);
		return -SK_ENOBUFS;
	}
	if (sk_unlikely(c->hdr_full))
		return -SK_ENOBUFS; /* the answer is a 500 already: nothing more goes in */
	sk_memcpy(p, name, nl);
	p[nl] = ':';
	p[nl + 1] = ' ';
	p[nl + 2 + vl] = '\r';
	p[nl + 3 + vl] = '\n';
	c->hdr_len = (uint32_t)(c->hdr_len + nl + (size_t)vl + 4);
	return 0;
}

/* The answer after a header line did not fit: the engine's 500 instead,
 * the connection closed after it.  0 to the application, whose call did
 * what it could (it must not answer again, nor be cut for trying). */
static int replace_answer(struct http_app_conn *c)
{
	engine_answer(c, 500);
	c->replaced = true;
	conn_advance(c);
	return 0;
}

static int send_fixed(struct http_app_conn *c, int status, const void *body, size_t len,
		      const struct http_file *f)
{
	if (c->out != OUT_NONE || !c->live || status < 200 || status > 599 ||
	    (len && !body) || ((status == 204 || status == 304) && len))
		return -SK_EINVAL;
	if (sk_unlikely(c->hdr_full))
		return replace_answer(c);
	put_head(c, status, len);
	c->fbody = body;
	c->flen = c->head_req ? 0 : len;
	if (sk_unlikely(c->app->cfg.access != NULL))
		log_answer(c, status, c->flen);
	c->fsent = 0;
	set_file(c, f);
	c->out = OUT_FIXED;
	conn_advance(c);
	return 0;
}

int http_app_send(struct http_app_req *r, int status, const void *body, size_t len)
{
	return send_fixed(CONN(r), status, body, len, NULL);
}

int http_app_send_file(struct http_app_req *r, int status, const struct http_file *f,
		       uint64_t off, uint64_t len)
{
	if (!f || f->is_dir || off > f->len || len > f->len - off || (len && !f->data))
		return -SK_EINVAL;
	return send_fixed(CONN(r), status, len ? f->data + off : NULL, (size_t)len, f);
}

int http_app_stream(struct http_app_req *r, int status, uint64_t len, http_app_write_fn fn,
		    void *ctx)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live || status < 200 || status > 599 || status == 204 ||
	    status == 304)
		return -SK_EINVAL;
	if (sk_unlikely(c->hdr_full))
		return replace_answer(c);
	put_head(c, status, len);
	c->stream_left = len;
	c->stream_len = len;
	c->body_out = 0;
	c->lg_status = (uint16_t)status;
	c->lg_owed = c->app->cfg.access != NULL;
	c->wfn = fn;
	c->wctx = ctx;
	c->wfn_due = true;
	c->ended = false;
	c->out = OUT_STREAM;
	conn_advance(c);
	return 0;
}

uint64_t http_app_written(const struct http_app_req *r)
{
	const struct http_app_conn *c = CONN(r);
	if (c->out != OUT_STREAM && !(c->out == OUT_DONE && c->ended))
		return 0;
	return c->stream_len == HTTP_APP_CHUNKED ? 0 : c->stream_len - c->stream_left;
}

size_t http_app_writable(const struct http_app_req *r)
{
	const struct http_app_conn *c = CONN(r);
	if (c->out != OUT_STREAM || c->ended)
		return 0;
	if (c->head_req)
		return c->stream_left == HTTP_APP_CHUNKED ? SIZE_MAX : (size_t)c->stream_left;
	uint32_t used = c->olen - c->opos;
	if (sk_unlikely(c->h2_flying))
		used = c->olen; /* obuf[opos, olen) is the engine's: no slide */
	size_t room = c->app->cfg.out_size - used;
	room = room > CHUNK_OVERHEAD ? room - CHUNK_OVERHEAD : 0;
	if (c->stream_left != HTTP_APP_CHUNKED && room > c->stream_left)
		room = (size_t)c->stream_left;
	return room;
}

long http_app_write(struct http_app_req *r, const void *data, size_t len)
{
	struct http_app_conn *c = CONN(r);
	if (sk_unlikely(c->replaced))
		return (long)(len > 0x7fffffffu ? 0x7fffffffu : len); /* taken, not sent: the 500 went */
	if (c->out != OUT_STREAM || c->ended)
		return -SK_EINVAL;
	if (c->stream_left != HTTP_APP_CHUNKED && len > c->stream_left)
		return -SK_EINVAL;
	size_t n = http_app_writable(r);
	if (n > len)
		n = len;
	if (n == 0)
		return 0;
	if (c->stream_left != HTTP_APP_CHUNKED)
		c->stream_left -= n;
	if (c->head_req)
		return (long)n;
	c->body_out += n;
	/* Room is counted from what is unsent: slide it to the front first. */
	if (c->opos && !c->h2_flying) {
		sk_memmove(c->obuf, c->obuf + c->opos, c->olen - c->opos);
		c->olen -= c->opos;
		c->opos = 0;
	}
	struct http_out o = {c->obuf + c->olen, c->obuf + c->app->cfg.out_size};
	if (c->chunked_out) {
		http_out_hex(&o, n);
		http_out_str(&o, "\r\n");
	}
	http_out_mem(&o, data, n);
	if (c->chunked_out)
		http_out_str(&o, "\r\n");
	c->olen = (uint32_t)(o.p - c->obuf);
	conn_advance(c);
	return (long)n;
}

int http_app_end(struct http_app_req *r)
{
	struct http_app_conn *c = CONN(r);
	if (sk_unlikely(c->replaced))
		return 0;
	if (c->out != OUT_STREAM || c->ended)
		return -SK_EINVAL;
	c->ended = true;
	if (c->stream_left != HTTP_APP_CHUNKED && c->stream_left != 0 && !c->head_req) {
		/* Shorter than announced: the peer must not take it as whole. */
		c->dead = true;
		c->failed = true;
	} else if (c->chunked_out && !c->head_req) {
		struct http_out o = {c->obuf + c->olen, c->obuf + c->app->cfg.out_size};
		http_out_str(&o, "0\r\n\r\n");
		c->olen = (uint32_t)(o.p - c->obuf);
	}
	c->out = OUT_DONE;
	if (sk_unlikely(c->lg_owed))
		log_stream(c);
	conn_advance(c);
	return 0;
}

void http_app_abort(struct http_app_req *r)
{
	struct http_app_conn *c = CONN(r);
	if (!c->live)
		return;
	c->failed = true;
	c->dead = true;
	conn_advance(c);
}

/* ---- the request body ---- */

static void send_continue(struct http_app_conn *c)
{
	if (!c->req->expect_continue || c->out != OUT_NONE || c->req->version < 11 || c->h2)
		return; /* HTTP/2: the client sends the body on its window */
	static const char k[] = "HTTP/1.1 100 Continue\r\n\r\n";
	sk_memcpy(c->obuf + c->olen, k, sizeof(k) - 1);
	c->olen += sizeof(k) - 1;
	c->app->st.continues++;
}

static void body_begin(struct http_app_conn *c, uint8_t mode)
{
	c->bmode = mode;
	c->in = IN_BODY;
	c->paused = false;
	c->body_left = c->req->chunked ? 0 : c->req->content_length;
	if (c->req->chunked)
		http_chunked_init(&c->ch, c->app->cfg.max_body);
	c->body_start = loop_now(c->app->loop);
}

int http_app_body_stream(struct http_app_req *r, http_app_body_fn fn, void *ctx)
{
	struct http_app_conn *c = CONN(r);
	if (c->in != IN_WAIT || !fn)
		return -SK_EINVAL;
	c->body_fn = fn;
	c->body_ctx = ctx;
	send_continue(c);
	body_begin(c, BM_STREAM);
	conn_advance(c);
	return 0;
}

void http_app_body_resume(struct http_app_req *r)
{
	struct http_app_conn *c = CONN(r);
	if (c->in == IN_BODY && c->paused) {
		c->paused = false;
		conn_advance(c);
	}
}

int http_app_body_collect(struct http_app_req *r, void *buf, size_t cap, http_app_collect_fn done,
			  void *ctx)
{
	struct http_app_conn *c = CONN(r);
	if (c->in != IN_WAIT || !done || (cap && !buf))
		return -SK_EINVAL;
	c->cbuf = buf;
	c->ccap = cap;
	c->clen = 0;
	c->cdone = done;
	c->cctx = ctx;
	if (!c->req->chunked && c->req->content_length > cap) {
		/* Known too long: say so before the client sends it. */
		engine_answer(c, 413);
		conn_advance(c);
		return 0;
	}
	send_continue(c);
	body_begin(c, BM_COLLECT);
	conn_advance(c);
	return 0;
}

/* The collect of http_app_body_read is done: the body ends in a NUL. */
static void read_collected(struct http_app_req *r, void *ctx, size_t len)
{
	(void)ctx;
	struct http_app_conn *c = CONN(r);
	c->slot[len] = 0;
	c->rdone(r, c->rctx, (char *)c->slot, len);
}

int http_app_body_read(struct http_app_req *r, size_t limit, http_app_read_fn done, void *ctx)
{
	struct http_app_conn *c = CONN(r);
	struct http_app *app = c->app;
	bool none = !c->req->chunked && !(c->req->has_content_length && c->req->content_length);
	if (!done || !app->cfg.body_size || !c->live || c->slot || c->out != OUT_NONE ||
	    (c->in != IN_WAIT && !(none && c->in == IN_DONE)))
		return -SK_EINVAL;
	if (none) {
		/* No body: nothing to hold, the answer may come at once. */
		c->nobody[0] = 0;
		bool was = c->in_cb;
		c->in_cb = true;
		done(r, ctx, c->nobody, 0);
		c->in_cb = was;
		return 0;
	}
	if (limit == 0 || limit > app->cfg.body_size)
		limit = app->cfg.body_size;
	if (!c->req->chunked && c->req->content_length > limit) {
		engine_answer(c, 413); /* before the client sends it, no slot taken */
		conn_advance(c);
		return 0;
	}
	if (!app->slot_free) {
		app->st.body_pool_empty++;
		engine_answer(c, 503);
		conn_advance(c);
		return 0;
	}
	c->slot = app->slot_free;
	sk_memcpy(&app->slot_free, c->slot, sizeof(app->slot_free));
	app->slots_used++;
	c->rdone = done;
	c->rctx = ctx;
	return http_app_body_collect(r, c->slot, limit, read_collected, NULL);
}

int http_app_body_skip(struct http_app_req *r, http_app_handler_fn then, void *ctx)
{
	struct http_app_conn *c = CONN(r);
	if (!then)
		return -SK_EINVAL;
	if (c->in == IN_DONE)
		return then(r, ctx); /* no body */
	if (c->in != IN_WAIT)
		return -SK_EINVAL;
	c->skip_fn = then;
	c->cctx = ctx;
	send_continue(c);
	body_begin(c, BM_SKIP);
	conn_advance(c);
	return 0;
}

/* Offer the decoded bytes rbuf[doff, doff+dlen) to whoever takes them.
 * Returns false when the flow stops (paused, or an answer ended it). */
static bool body_offer(struct http_app_conn *c)
{
	while (c->dlen) {
		const uint8_t *d = c->rbuf + c->doff;
		size_t n = c->dlen;
		long took;
		if (c->bmode == BM_DISCARD || c->bmode == BM_SKIP) {
			took = (long)n;
		} else if (c->bmode == BM_COLLECT) {
			if (c->clen + n > c->ccap) {
				c->dlen = 0; /* dropped with the rest (a lingering read) */
				engine_answer(c, 413);
				return false;
			}
			sk_memcpy(c->cbuf + c->clen, d, n);
			c->clen += n;
			took = (long)n;
		} else {
			c->in_cb = true;
			took = c->body_fn(REQ(c), c->body_ctx, d, n, false);
			c->in_cb = false;
			if (took < 0 || (size_t)took > n) {
				c->dlen = 0;
				engine_answer(c, 500);
				return false;
			}
			if (c->in != IN_BODY)
				return false;
		}
		c->app->st.bytes_in_body += (uint64_t)took;
		c->doff += (uint32_t)took;
		c->dlen -= (uint32_t)took;
		if ((size_t)took < n) {
			c->paused = true;
			return false;
		}
	}
	return true;
}

static bool body_complete(const struct http_app_conn *c)
{
	if (c->dlen)
		return false;
	if (!c->req->chunked)
		return c->body_left == 0;
	if (sk_unlikely(c->h2 != NULL))
		return c->h2_eos && c->ipos == c->rlen; /* framed by END_STREAM */
	return http_chunked_done(&c->ch);
}

/* The body's end: the application hears of it once. */
static void body_end(struct http_app_conn *c)
{
	c->in = IN_DONE;
	if (c->bmode == BM_STREAM) {
		c->in_cb = true;
		c->body_fn(REQ(c), c->body_ctx, NULL, 0, true);
		c->in_cb = false;
	} else if (c->bmode == BM_COLLECT) {
		c->in_cb = true;
		c->cdone(REQ(c), c->cctx, c->clen);
		c->in_cb = false;
	} else if (c->bmode == BM_SKIP) {
		c->app->st.bodies_discarded++;
		c->in_cb = true;
		int rc = c->skip_fn(REQ(c), c->cctx);
		c->in_cb = false;
		if (rc < 0)
			engine_answer(c, 500);
	} else {
		c->app->st.bodies_discarded++;
	}
}

/* Turn raw bytes rbuf[ipos, rlen) into decoded ones.  false: an error
 * answer was queued. */
static bool body_decode(struct http_app_conn *c)
{
	size_t avail = c->rlen - c->ipos;
	if (!c->req->chunked) {
		size_t k = avail < c->body_left ? avail : (size_t)c->body_left;
		c->doff = c->ipos;
		c->dlen = (uint32_t)k;
		c->ipos += (uint32_t)k;
		c->body_left -= k;
		return true;
	}
	if (sk_unlikely(c->h2 != NULL)) {
		/* HTTP/2 without content-length: the bytes are the body. */
		c->h2_rx += avail;
		if (c->h2_rx > c->app->cfg.max_body) {
			engine_answer(c, 413);
			return false;
		}
		c->doff = c->ipos;
		c->dlen = (uint32_t)avail;
		c->ipos = c->rlen;
		return true;
	}
	size_t dl = avail, used = 0;
	int r = http_chunked_decode(&c->ch, c->rbuf + c->ipos, &dl, &used);
	if (r < HTTP_NEED_MORE) {
		engine_answer(c, http_err_status(r));
		return false;
	}
	c->doff = c->ipos;
	c->dlen = (uint32_t)dl;
	c->ipos += (uint32_t)used;
	return true;
}

/* ---- input ---- */

/* Read into rbuf[rlen, cap).  1: bytes came, 0: nothing now (EAGAIN),
 * -1: end of stream, < -1: an error. */
static int conn_read(struct http_app_conn *c)
{
	if (sk_unlikely(c->h2 != NULL))
		return c->h2_eos || c->h2_orphan ? -1 : 0; /* DATA comes from the session */
	uint32_t cap = c->app->cfg.rbuf_size;
	if (c->rlen >= cap || !c->may_read)
		return 0;
	if (!c->rbuf)
		bufs_attach(c, bufs_get(c->app)); /* a request's first bytes may come */
	uint32_t want = cap - c->rlen;
	long n = loop_read(c->app->loop, c->sock, c->rbuf + c->rlen, want);
	if (n > 0) {
		c->rlen += (uint32_t)n;
		if ((uint32_t)n < want)
			c->may_read = false; /* drained: the next arrival is a new edge */
		return 1;
	}
	if (n == 0) {
		c->eof = true;
		return -1;
	}
	if (n == -SK_EAGAIN) {
		c->may_read = false;
		if (c->rlen == 0 && c->in == IN_HEAD)
			bufs_put(c); /* nothing came: stay idle without one */
		return 0;
	}
	return (int)n < -1 ? (int)n : -2;
}

static const struct http_app_route *route_find(struct http_app_conn *c,
					       const struct http_app_def *def, unsigned method,
					       bool *path_seen, char *allow, size_t allow_cap)
{
	const struct http_app_route *get_match = NULL;
	size_t al = 0;
	*path_seen = false;
	for (unsigned i = 0; i < def->nroutes; i++) {
		const struct http_app_route *rt = &def->routes[i];
		size_t pl = sk_strlen(rt->path);
		bool m = rt->prefix ? (c->path_len >= pl && sk_memcmp(c->path, rt->path, pl) == 0)
				    : (c->path_len == pl && sk_memcmp(c->path, rt->path, pl) == 0);
		if (!m)
			continue;
		if (rt->method == HTTP_APP_ANY || rt->method == method) {
			c->rest_off = rt->prefix ? (uint16_t)pl : c->path_len;
			return rt;
		}
		if (method == HTTP_HEAD && rt->method == HTTP_GET && !get_match) {
			get_match = rt;
			c->rest_off = rt->prefix ? (uint16_t)pl : c->path_len;
		}
		*path_seen = true;
		const char *mn = http_method_name((enum http_method)rt->method);
		size_t ml = sk_strlen(mn);
		if (al + ml + 3 < allow_cap) {
			if (al) {
				allow[al++] = ',';
				allow[al++] = ' ';
			}
			sk_memcpy(allow + al, mn, ml);
			al += ml;
		}
	}
	allow[al] = 0;
	return get_match;
}

/* No route: 405 with the methods that would match the path, else 404. */
static void no_route(struct http_app_conn *c, bool seen, const char *allow)
{
	static const char nf[] = "404 Not Found\n", na[] = "405 Method Not Allowed\n";
	if (c->app->cfg.error_answer && c->out == OUT_NONE && c->hdr_len == 0) {
		/* The application's body, copied into obuf by a stream. */
		uint8_t body[HTTP_APP_ERROR_BODY_MAX];
		int st = seen ? 405 : 404;
		size_t bl = error_body(c->app, st, body, c->hdr, &c->hdr_len);
		if (seen)
			http_app_header(REQ(c), "Allow", allow);
		http_app_stream(REQ(c), st, bl, NULL, NULL);
		http_app_write(REQ(c), body, bl); /* the head's room (out_size >= 2 KiB) holds it */
		http_app_end(REQ(c));
		return;
	}
	http_app_header(REQ(c), "Content-Type", "text/plain");
	if (seen) {
		http_app_header(REQ(c), "Allow", allow);
		http_app_send(REQ(c), 405, na, sizeof(na) - 1);
	} else {
		http_app_send(REQ(c), 404, nf, sizeof(nf) - 1);
	}
}

int http_app_routes_run(struct http_app_req *r, const struct http_app_def *def)
{
	struct http_app_conn *c = CONN(r);
	if (c->out != OUT_NONE || !c->live)
		return -SK_EINVAL;
	bool seen = false;
	char allow[128];
	const struct http_app_route *rt = route_find(c, def, c->req->method, &seen, allow,
						     sizeof(allow));
	if (!rt) {
		no_route(c, seen, allow);
		return 0;
	}
	c->route = rt;
	return rt->fn(r, rt->ctx);
}

/* A request begins (a head dispatched, or one the engine answers itself):
 * counted in the current epoch until unlive. */
static void make_live(struct http_app *app, struct http_app_conn *c)
{
	c->live = true;
	c->epoch = app->epoch;
	app->live_cur++;
}

/* A complete head: decode the path, find the route, run the handler. */
static void dispatch(struct http_app_conn *c, int n)
{
	struct http_app *app = c->app;
	app->st.requests++;
	c->head_len = (uint32_t)n;
	c->ipos = (uint32_t)n;
	make_live(app, c);
	c->failed = false;
	c->close_after = false;
	c->hdr_len = 0;
	c->hdr_full = c->replaced = false;
	c->cl_mark = false;
	c->drop_server = false;
	c->drops_len = 0;
	set_file(c, NULL);
	c->lg_raw = false;
	c->lg_owed = false;
	c->out = OUT_NONE;
	c->done_fn = NULL;
	c->wfn = NULL;
	c->body_fn = NULL;
	c->cdone = NULL;
	c->dlen = 0;
	c->head_req = c->req->method == HTTP_HEAD;
	c->body_start = loop_now(app->loop);
	if (sk_unlikely(c->h2 != NULL)) {
		/* The access log's line says the version the client spoke. */
		sk_memcpy(c->rbuf + c->req->target.off + c->req->target.len + 1, "HTTP/2.0", 8);
	}
	bool has_body = c->req->chunked || (c->req->has_content_length && c->req->content_length);
	c->in = has_body ? IN_WAIT : IN_DONE;
	size_t pl = 0;
	int st = http_target_path(c->rbuf + c->req->target.off, c->req->target.len, c->path,
				  HTTP_APP_PATH_MAX, &pl);
	if (st && st != 404) {
		engine_answer(c, st); /* 400, 414: the connection ends */
		return;
	}
	c->path_len = (uint16_t)(st ? 0 : pl);
	if (st)
		c->path[0] = 0; /* target.c leaves garbage on an error */
	const struct http_app_route *rt = NULL;
	bool seen = false;
	char allow[128];
	/* A "." or ".." segment (404): an ordinary not-found, which keeps
	 * the connection. */
	if (!st)
		rt = route_find(c, app->def, c->req->method, &seen, allow, sizeof(allow));
	c->route = rt;
	if (!rt) {
		no_route(c, seen, allow);
		return;
	}
	c->in_cb = true;
	int rc = rt->fn(REQ(c), rt->ctx);
	c->in_cb = false;
	if (rc < 0 && !c->replaced)
		engine_answer(c, 500);
}

/* The request is over: tell the application, then set up the next. */
/* A live request ends: out of its epoch's count. */
static void unlive(struct http_app *app, struct http_app_conn *c)
{
	c->live = false;
	if (c->epoch == app->epoch)
		app->live_cur--;
	else
		app->live_old--;
}

void http_app_epoch_next(struct http_app *app)
{
	app->epoch++;
	app->live_old += app->live_cur;
	app->live_cur = 0;
}

uint32_t http_app_live_old(const struct http_app *app)
{
	return app->live_old;
}

/* The request is over (on_done has run): its body slot goes back. */
static void slot_put(struct http_app_conn *c)
{
	if (!c->slot)
		return;
	struct http_app *app = c->app;
	sk_memcpy(c->slot, &app->slot_free, sizeof(app->slot_free));
	app->slot_free = c->slot;
	app->slots_used--;
	c->slot = NULL;
}

static void request_over(struct http_app_conn *c)
{
	struct http_app *app = c->app;
	unlive(app, c);
	set_file(c, NULL); /* the answer has left whole: nothing points into the file now */
	if (c->failed)
		app->st.aborted++;
	if (c->done_fn) {
		http_app_done_fn fn = c->done_fn;
		c->done_fn = NULL;
		fn(REQ(c), c->done_ctx, !c->failed);
	}
	slot_put(c);
	sk_time_ns now = loop_now(app->loop);
	if (sk_unlikely(c->h2 != NULL)) {
		c->dead = true; /* a stream's state serves one request */
		return;
	}
	if (c->close_after || c->dead) {
		/* Nothing unread after a clean answer: close at once.  Else the
		 * peer may still be sending: half-close and drop what comes, so
		 * a RST does not destroy the answer (RFC 9112 9.6). */
		c->drain = c->failed || c->in != IN_DONE || c->ipos != c->rlen;
		c->in = IN_LINGER;
		c->linger_start = now;
		return;
	}
	/* The next request starts with none of this one's header state. */
	c->drop_server = false;
	c->drops_len = 0;
	c->cl_mark = false;
	set_file(c, NULL);
	/* Keep-alive: the next request's bytes go to the front. */
	uint32_t left = c->rlen - c->ipos;
	if (left) {
		sk_memmove(c->rbuf, c->rbuf + c->ipos, left);
		c->rlen = left;
		c->ipos = 0;
		http_req_init(c->req, app->cfg.max_body);
		c->req->accept_purge = app->cfg.accept_purge;
	} else {
		/* Idle until the next request: its first read takes a set. */
		bufs_put(c);
	}
	c->in = IN_HEAD;
	c->out = OUT_NONE;
	c->head_start = now;
}

/* A state off the free list, else a fresh one (one is there: the caller
 * checked state_free), counted in nconns, every field zeroed except what
 * the state owns for its life: its timer (disarmed by conn_release, slot
 * 0).  It holds no buffer set (conn_read or stream_open attaches one).  For a connection (on_accept) and a stream
 * (stream_open) alike, so the two cannot drift; conn_release gives it back.
 * Inline: it runs once per connection and once per stream. */
/* A state may be taken: a used one given back, or a fresh one. */
static inline bool state_free(const struct http_app *app)
{
	return app->free_list || app->states_fresh;
}

/* The end of the states ever used: conns[0, states_end) are each free or
 * a connection's; walks stop there. */
static inline uint32_t states_end(const struct http_app *app)
{
	return app->cfg.max_conns - app->states_fresh;
}

static inline struct http_app_conn *state_take(struct http_app *app)
{
	struct http_app_conn *c = app->free_list;
	struct loop_timer t = {0};
	if (c) {
		app->free_list = c->next_free;
		t = c->timer;
	} else {
		/* Fresh states are taken in order: conns[0, states_used) were used. */
		c = &app->conns[app->cfg.max_conns - app->states_fresh--];
	}
	app->nconns++;
	sk_memset(c, 0, sizeof(*c)); /* no buffer set */
	c->app = app;
	c->timer = t;
	c->timer.fn = conn_timer;
	return c;
}

static void sess_end(struct http_app_conn *c);
static void stream_end(struct http_app_conn *c);

static void conn_release(struct http_app_conn *c)
{
	struct http_app *app = c->app;
	if (sk_unlikely(c->sess != NULL))
		sess_end(c); /* its streams first: each is over, aborted */
	if (c->live) {
		if (sk_unlikely(c->lg_owed))
			log_stream(c); /* a stream cut: what was written */
		c->failed = true;
		unlive(app, c);
		app->st.aborted++;
		if (c->done_fn) {
			http_app_done_fn fn = c->done_fn;
			c->done_fn = NULL;
			fn(REQ(c), c->done_ctx, false);
		}
	}
	slot_put(c);
	set_file(c, NULL);
	if (loop_timer_armed(&c->timer)) {
		/* Only a cancel that removes something is a sample. */
		uint64_t t0 = sk_trace_begin(app->cfg.trace);
		loop_timer_cancel(app->loop, &c->timer);
		sk_trace_end(app->cfg.trace, SK_TR_timer_cancel, t0, 1);
	}
	if (sk_unlikely(c->h2 != NULL)) {
		stream_end(c);
	} else {
		loop_close(app->loop, c->sock);
		if (c->t_accept)
			sk_trace_end(app->cfg.trace, SK_TR_conn, c->t_accept, 1);
		app->st.conns_closed++;
	}
	if (c->rbuf)
		bufs_put(c);
	c->sock = -1;
	app->nconns--;
	c->next_free = app->free_list;
	app->free_list = c;
	if (sk_unlikely(app->draining) && !app->nconns && app->drain_done) {
		void (*done)(void *) = app->drain_done;
		app->drain_done = NULL;
		done(app->drain_ctx);
	}
}

/* The earliest deadline the connection's state has; 0: none (waiting for
 * the application, which owns the time it takes). */
static sk_time_ns sess_deadline(const struct http_app_conn *c);

static sk_time_ns conn_deadline(const struct http_app_conn *c)
{
	const struct http_app_config *cfg = &c->app->cfg;
	if (sk_unlikely(c->sess != NULL))
		return sess_deadline(c);
	sk_time_ns d = 0;
#define EARLIER(x) do { sk_time_ns x_ = (x); if (!d || x_ < d) d = x_; } while (0)
	if (out_pending(c))
		EARLIER(c->send_progress + cfg->send_timeout);
	switch (c->in) {
	case IN_HEAD:
		if (out_pending(c))
			break;
		EARLIER(c->head_start + (c->rlen ? cfg->header_timeout : cfg->keepalive_timeout));
		if (sk_unlikely(c->app->draining) && !c->rlen) {
			/* Idle while draining: closed after the grace. */
			sk_time_ns from = c->head_start > c->app->drain_at ? c->head_start
									   : c->app->drain_at;
			EARLIER(from + HTTP_APP_DRAIN_IDLE_GRACE);
		}
		break;
	case IN_BODY:
		EARLIER(c->body_start + cfg->body_timeout);
		break;
	case IN_LINGER:
		if (!c->live)
			EARLIER(c->linger_start + cfg->linger_timeout);
		break;
	default:
		break;
	}
#undef EARLIER
	return d;
}

/* ---- HTTP/2 (docs/h2.md) ----
 *
 * A session is a connection whose first bytes were the preface: its
 * state's rbuf is the engine's input and obuf its output (sess_step).
 * Each request is a stream state taken from the same pool as connections
 * (stream_open), which runs the HTTP/1.1 machinery above unchanged but
 * for the few places that touch the transport: conn_read (DATA comes from
 * the session), flush (h2_flush: the head becomes HEADERS, the body goes
 * by reference to the engine), request_over (the state is released) and
 * conn_release (stream_end). */

/* The HTTP/2 paths stay out of the HTTP/1.1 ones: inlined (each has one
 * caller), they cost HTTP/1.1 answers about 50 instructions more in
 * conn_advance (bench_cost http-files under callgrind). */
#define H2_COLD __attribute__((noinline, cold))

static const char h2_preface[24] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* 1: rbuf holds the preface, 0: a prefix of it (more must come), -1: not it. */
static int preface_seen(const struct http_app_conn *c)
{
	uint32_t n = c->rlen < sizeof(h2_preface) ? c->rlen : (uint32_t)sizeof(h2_preface);
	if (sk_memcmp(c->rbuf, h2_preface, n) != 0)
		return -1;
	return n == sizeof(h2_preface) ? 1 : 0;
}

/* The stream's receive window: what rbuf holds behind the longest head. */
static uint32_t h2_window(const struct http_app *app)
{
	return app->cfg.rbuf_size - H2_HEAD_ROOM;
}

H2_COLD static void sess_begin(struct http_app_conn *c)
{
	struct http_app *app = c->app;
	struct http_app_h2 *s = app->h2_free;
	sk_time_ns now = loop_now(app->loop);
	c->h2_may = false;
	struct h2_limits lim;
	h2_limits_default(&lim);
	lim.initial_window = h2_window(app);
	lim.max_header_list = H2_HEAD_ROOM - 64u;
	lim.header_timeout = app->cfg.header_timeout;
	lim.idle_timeout = app->cfg.keepalive_timeout;
	lim.stream_idle_timeout = app->cfg.body_timeout;
	lim.stall_timeout = app->cfg.send_timeout;
	if (!s || h2_conn_init(&s->h, &lim, now) < 0) {
		app->st.h2_sessions_refused++;
		c->dead = true;
		return;
	}
	app->h2_free = s->next_free;
	app->h2_used++;
	app->st.h2_sessions++;
	s->owner = c;
	s->next_free = NULL;
	s->n = 0;
	s->closed = s->blocked = false;
	s->held_len = 0;
	sk_memset(s->counted, 0, sizeof(s->counted));
	c->sess = s;
	c->in = IN_H2;
	c->ipos = 0; /* the engine reads the preface itself */
	if (sk_unlikely(app->draining))
		h2_conn_shutdown(&s->h, now);
}

static struct http_app_conn *stream_find(struct http_app_h2 *s, uint32_t sid)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->str[i].sid == sid)
			return s->str[i].c;
	return NULL;
}

static void stream_unlink(struct http_app_h2 *s, const struct http_app_conn *c)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->str[i].c == c) {
			s->str[i] = s->str[--s->n];
			return;
		}
}

/* A stream's REQUEST: a state of the pool runs it, its head written as
 * HTTP/1.1 (h2_req_to_h1) and parsed by the same parser. */
static void stream_open(struct http_app_conn *sc, const struct h2_event *ev)
{
	struct http_app *app = sc->app;
	struct http_app_h2 *s = sc->sess;
	if (!state_free(app) || s->n >= H2_STREAMS_CAP) {
		h2_conn_reset(&s->h, ev->stream_id, H2_REFUSED_STREAM);
		app->st.h2_streams_refused++;
		return;
	}
	size_t room = app->cfg.rbuf_size - h2_window(app);
	uint8_t *b = bufs_get(app); /* a state is free, so a set is */
	size_t n = h2_req_to_h1(ev->req, b, room);
	if (n && !ev->req->has_content_length && !ev->end_stream) {
		/* A body framed by END_STREAM only: the handlers see a body
		 * of unknown length (HTTP_APP_CHUNKED), body_decode takes the
		 * bytes as they are. */
		static const char te[] = "transfer-encoding: chunked\r\n\r\n";
		if (n - 2 + sizeof(te) - 1 <= room) {
			sk_memcpy(b + n - 2, te, sizeof(te) - 1);
			n += sizeof(te) - 3;
		} else {
			n = 0;
		}
	}
	if (n == 0) {
		/* Its head does not fit the room kept for one. */
		bufs_ret(app, b);
		h2_conn_respond(&s->h, ev->stream_id, 431, NULL, 0, true);
		count_status(app, 431);
		return;
	}
	struct http_app_conn *c = state_take(app);
	bufs_attach(c, b);
	app->st.h2_streams++;
	c->sock = SOCK_H2;
	c->peer = sc->peer;
	c->h2 = sc;
	c->sid = ev->stream_id;
	c->h2_eos = ev->end_stream;
	c->in = IN_HEAD;
	c->out = OUT_NONE;
	c->head_start = loop_now(app->loop);
	c->rlen = (uint32_t)n;
	s->str[s->n].sid = c->sid;
	s->str[s->n].c = c;
	s->n++;
	conn_advance(c);
}

/* The handler took every byte read of the body: the windows reopen. */
H2_COLD static void h2_taken(struct http_app_conn *c)
{
	if (c->h2_orphan || c->rlen <= c->head_len)
		return;
	h2_conn_consume(&c->h2->sess->h, c->sid, c->rlen - c->head_len);
	conn_advance(c->h2); /* its WINDOW_UPDATE */
}

static void sess_event(struct http_app_conn *sc, const struct h2_event *ev)
{
	struct http_app_h2 *s = sc->sess;
	struct http_app_conn *c;
	switch (ev->type) {
	case H2_EV_REQUEST:
		stream_open(sc, ev);
		break;
	case H2_EV_DATA:
		c = stream_find(s, ev->stream_id);
		if (!c || c->in == IN_LINGER) {
			/* No one reads it (the answer is made): its window
			 * reopens at once. */
			h2_conn_consume(&s->h, ev->stream_id, ev->len);
			break;
		}
		if (c->rlen + ev->len > sc->app->cfg.rbuf_size) {
			/* More than our window (sent before our SETTINGS came):
			 * what fits now, the rest held (held_push). */
			uint32_t room = sc->app->cfg.rbuf_size - c->rlen;
			sk_memcpy(c->rbuf + c->rlen, ev->data, room);
			c->rlen += room;
			s->held_sid = ev->stream_id;
			s->held_off = (uint32_t)(ev->data - sc->rbuf) + room;
			s->held_len = ev->len - room;
			s->held_eos = ev->end_stream;
			conn_advance(c);
			break;
		}
		sk_memcpy(c->rbuf + c->rlen, ev->data, ev->len);
		c->rlen += ev->len;
		c->h2_eos = c->h2_eos || ev->end_stream;
		conn_advance(c);
		break;
	case H2_EV_TRAILERS:
		c = stream_find(s, ev->stream_id);
		if (c) {
			c->h2_eos = true; /* trailers end the body; they are not passed on */
			conn_advance(c);
		}
		break;
	case H2_EV_RESET:
		c = stream_find(s, ev->stream_id);
		if (c) {
			stream_unlink(s, c);
			c->h2_orphan = c->failed = c->dead = true;
			conn_advance(c);
		}
		break;
	case H2_EV_CLOSE:
		s->closed = true;
		break;
	default: /* GOAWAY: the engine takes no new stream, the rest finish */
		break;
	}
}

/* The piece a stream handed was all written: the next one may go. */
static void sess_writable(struct http_app_conn *sc, uint32_t sid, sk_time_ns now)
{
	struct http_app_conn *c = stream_find(sc->sess, sid);
	if (!c || !c->h2_flying)
		return;
	if (c->h2_fly_obuf) {
		c->opos += (uint32_t)c->h2_fly;
		if (c->opos == c->olen)
			c->opos = c->olen = 0;
	} else {
		c->fsent += c->h2_fly;
	}
	c->app->st.bytes_out += c->h2_fly;
	c->h2_flying = false;
	c->h2_fly = 0;
	c->send_progress = now;
	c->wfn_due = true;
	conn_advance(c);
}

/* Held DATA into its stream as room appears (or dropped, its window
 * reopened, when the stream is gone or reads no more).  true: moved. */
static bool held_push(struct http_app_conn *sc)
{
	struct http_app_h2 *s = sc->sess;
	struct http_app_conn *k = stream_find(s, s->held_sid);
	if (!k || k->in == IN_LINGER) {
		h2_conn_consume(&s->h, s->held_sid, s->held_len);
		s->held_len = 0;
		return true;
	}
	uint32_t room = sc->app->cfg.rbuf_size - k->rlen;
	uint32_t n = room < s->held_len ? room : s->held_len;
	if (n == 0)
		return false;
	sk_memcpy(k->rbuf + k->rlen, sc->rbuf + s->held_off, n);
	k->rlen += n;
	s->held_off += n;
	s->held_len -= n;
	if (s->held_len == 0)
		k->h2_eos = k->h2_eos || s->held_eos;
	conn_advance(k);
	return true;
}

/* The engine's defence counters join the app's as they move, so that the
 * metrics page shows an attack while its connection is open (an HPACK bomb's
 * 431s, stalled streams, refused ones), not only once it ends: each sum
 * against what was added before, once per sess_step or timer (a few adds;
 * HTTP/1.1 never comes here).  REFUSED_STREAM over the engine's limit joins
 * h2_streams_refused, beside the refusals for want of a state. */
H2_COLD static void sess_count(struct http_app_conn *c)
{
	struct http_app_stats *as = &c->app->st;
	struct http_app_h2 *s = c->sess;
	const struct h2_stats *st = &s->h.st;
	const uint64_t sum[H2_COUNTED] = {
		st->conn_errors,
		st->stream_errors, /* malformed requests among them, once each */
		st->rapid_reset,
		st->settings_flood + st->ping_flood + st->empty_data_flood + st->window_update_flood +
			st->priority_flood + st->out_overflow,
		st->header_block_large + st->continuation_flood + st->header_list_large,
		st->header_timeouts + st->idle_timeouts + st->settings_timeouts +
			st->stream_idle_resets + st->stall_resets,
		st->refused_streams,
	};
	uint64_t *const to[H2_COUNTED] = {
		&as->h2_conn_errors, &as->h2_stream_errors, &as->h2_rapid_reset, &as->h2_floods,
		&as->h2_header_large, &as->h2_timeouts, &as->h2_streams_refused,
	};
	for (uint32_t i = 0; i < H2_COUNTED; i++) {
		*to[i] += sum[i] - s->counted[i];
		s->counted[i] = sum[i];
	}
}

/* The session is over and its GOAWAY written: it ends, and the connection
 * closes as HTTP/1.1's does after an error (IN_LINGER in conn_step): FIN,
 * then read and drop until the peer closes or linger_timeout.  Closing
 * with input unread (a flood's frames behind the one that ended it, a
 * request sent before our GOAWAY arrived) makes the kernel send RST, and a
 * client that gets RST drops what it had not read yet: the GOAWAY that
 * says why, the last answers (RFC 9113 6.8, RFC 9112 9.6). */
H2_COLD static void sess_linger(struct http_app_conn *c, sk_time_ns now)
{
	sess_end(c);
	c->rlen = c->ipos = 0;
	c->opos = c->olen = 0;
	c->in = IN_LINGER;
	c->drain = !c->eof;
	c->linger_start = now;
	c->again = true; /* conn_advance runs conn_step's linger */
}

/* The session: input to events, events to streams, output to the socket,
 * until nothing moves. */
H2_COLD static void sess_step(struct http_app_conn *c)
{
	struct http_app *app = c->app;
	struct http_app_h2 *s = c->sess;
	for (int guard = 0; guard < 100000 && !c->dead; guard++) {
		bool moved = false;
		sk_time_ns now = loop_now(app->loop);
		if (sk_unlikely(s->held_len) && !s->closed)
			moved = held_push(c);
		if (!s->closed && !s->held_len) {
			struct h2_event ev;
			long used = h2_conn_recv(&s->h, c->rbuf + c->ipos, c->rlen - c->ipos, now, &ev);
			if (ev.type != H2_EV_NONE) {
				sess_event(c, &ev); /* DATA is copied before ipos moves */
				moved = true;
			}
			c->ipos += (uint32_t)used;
			moved = moved || used > 0;
			if (!moved && h2_conn_out_pending(&s->h) <= H2_OUT_CAP / 2 && !s->closed) {
				/* It waits for bytes: a whole frame always fits. */
				if (c->ipos) {
					sk_memmove(c->rbuf, c->rbuf + c->ipos, c->rlen - c->ipos);
					c->rlen -= c->ipos;
					c->ipos = 0;
				}
				int rr = conn_read(c);
				if (rr == 1) {
					moved = true;
				} else if (rr < 0) {
					c->dead = true; /* the peer closed or reset */
					break;
				}
			}
		}
		if (c->opos == c->olen) {
			c->opos = 0;
			c->olen = (uint32_t)h2_conn_output(&s->h, c->obuf, app->cfg.out_size, now);
			for (uint32_t sid; (sid = h2_conn_take_writable(&s->h)) != 0;) {
				sess_writable(c, sid, now);
				moved = true;
			}
			/* A last piece whose stream the engine closed as it wrote
			 * it (both ends done) shows in no take_writable. */
			for (uint32_t i = 0; i < s->n; i++) {
				struct http_app_conn *k = s->str[i].c;
				if (k->h2_flying && k->h2_end && !h2_conn_stream(&s->h, k->sid)) {
					sess_writable(c, k->sid, now);
					moved = true;
					i = (uint32_t)-1; /* the table may have changed */
				}
			}
			if (s->blocked) {
				s->blocked = false;
				for (uint32_t i = 0; i < s->n; i++)
					if (s->str[i].c->h2_blocked) {
						s->str[i].c->h2_blocked = false;
						conn_advance(s->str[i].c);
					}
			}
		}
		if (c->opos < c->olen) {
			struct loop_iov iov = {c->obuf + c->opos, c->olen - c->opos};
			long w = loop_writev(app->loop, c->sock, &iov, 1);
			if (w > 0) {
				c->opos += (uint32_t)w;
				app->st.bytes_out += (uint64_t)w;
				c->send_progress = now;
				if (c->opos == c->olen)
					c->opos = c->olen = 0;
				moved = true;
			} else if (w != -SK_EAGAIN) {
				app->st.write_errors++;
				c->dead = true;
				break;
			}
		}
		if (c->olen == 0 && h2_conn_out_pending(&s->h) == 0 &&
		    (h2_conn_done(&s->h) || s->closed)) {
			sess_linger(c, now); /* GOAWAY sent and every stream over */
			return;               /* sess_end counted the last of it */
		}
		if (!moved && !c->again)
			break;
		c->again = false;
	}
	sess_count(c);
}

H2_COLD static sk_time_ns sess_deadline(const struct http_app_conn *c)
{
	sk_time_ns d = 0;
	if (c->opos < c->olen)
		d = c->send_progress + c->app->cfg.send_timeout;
	uint64_t h = h2_conn_deadline(&c->sess->h);
	if (h != UINT64_MAX && (d == 0 || h < d))
		d = h ? h : 1;
	return d;
}

H2_COLD static void sess_timer(struct http_app_conn *c, sk_time_ns now)
{
	struct http_app *app = c->app;
	if (c->opos < c->olen && c->send_progress + app->cfg.send_timeout <= now) {
		app->st.timeout_send++;
		c->dead = true;
	} else {
		struct h2_event ev;
		do {
			h2_conn_tick(&c->sess->h, now, &ev);
			if (ev.type != H2_EV_NONE)
				sess_event(c, &ev);
		} while (ev.type != H2_EV_NONE && !c->dead);
	}
	sess_count(c);
	if (c->dead && !c->busy) {
		conn_release(c);
		return;
	}
	conn_advance(c);
}

/* The session's connection is released: its streams are over (aborted),
 * the last of its counters join the engine's. */
H2_COLD static void sess_end(struct http_app_conn *c)
{
	struct http_app *app = c->app;
	struct http_app_h2 *s = c->sess;
	sess_count(c);
	while (s->n) {
		struct http_app_conn *k = s->str[--s->n].c;
		k->h2_orphan = k->failed = k->dead = true;
		if (!k->busy)
			conn_release(k); /* a busy one goes when its advance unwinds */
	}
	c->sess = NULL;
	s->owner = NULL;
	s->next_free = app->h2_free;
	app->h2_free = s;
	app->h2_used--;
}

/* A stream's state is released: the stream ends in the engine too (a
 * complete answer (an error's too) with the request's body unread:
 * RST_STREAM NO_ERROR, RFC 9113 8.1; an answer cut short: CANCEL). */
H2_COLD static void stream_end(struct http_app_conn *c)
{
	if (!c->h2_orphan) {
		struct http_app_h2 *s = c->h2->sess;
		stream_unlink(s, c);
		if (h2_conn_stream(&s->h, c->sid))
			h2_conn_reset(&s->h, c->sid,
				      c->h2_end && !c->h2_flying ? H2_NO_ERROR : H2_CANCEL);
		conn_advance(c->h2);
	}
	c->h2 = NULL;
	c->h2_orphan = false;
}

/* The HTTP/1.1 head put_head wrote at b[0, n): status and fields
 * (pointing into b).  Returns the head's length, 0 if it is not one. */
static uint32_t head_fields(const uint8_t *b, uint32_t n, unsigned *status, struct h2_field *f,
			    size_t cap, size_t *nf)
{
	if (n < 16 || b[8] != ' ')
		return 0;
	*status = (unsigned)(b[9] - '0') * 100u + (unsigned)(b[10] - '0') * 10u +
		  (unsigned)(b[11] - '0');
	uint32_t i = 12;
	while (i + 1 < n && !(b[i] == '\r' && b[i + 1] == '\n'))
		i++;
	i += 2;
	size_t k = 0;
	for (;;) {
		if (i + 2 > n)
			return 0;
		if (b[i] == '\r' && b[i + 1] == '\n') {
			*nf = k;
			return i + 2;
		}
		uint32_t ns = i;
		while (i < n && b[i] != ':')
			i++;
		if (i >= n)
			return 0;
		uint32_t nl = i - ns;
		i++;
		while (i < n && (b[i] == ' ' || b[i] == '\t'))
			i++;
		uint32_t vs = i;
		while (i + 1 < n && !(b[i] == '\r' && b[i + 1] == '\n'))
			i++;
		if (i + 1 >= n)
			return 0;
		uint32_t ve = i;
		i += 2;
		if (k == cap)
			return 0;
		f[k++] = (struct h2_field){b + ns, b + vs, nl, ve - vs};
	}
}

/* flush for a stream: the head in obuf becomes HEADERS (the engine drops
 * Connection, Keep-Alive, Transfer-Encoding), then each piece of the
 * body (obuf's, then the application's or the file's memory) is handed
 * by reference and stays the engine's until take_writable says it was
 * written (sess_writable); END_STREAM ends the body.  Returns as flush. */
H2_COLD static int h2_flush(struct http_app_conn *c)
{
	if (c->h2_orphan)
		return -SK_ECONNRESET;
	if (c->h2_flying || c->h2_blocked)
		return 0;
	struct http_app_h2 *s = c->h2->sess;
	int rc;
	if (!c->h2_resp) {
		struct h2_field f[64];
		unsigned status = 0;
		size_t nf = 0;
		uint32_t hl = head_fields(c->obuf + c->opos, c->olen - c->opos, &status, f, 64, &nf);
		if (hl == 0)
			return -SK_EINVAL;
		bool end = c->opos + hl == c->olen &&
			   (c->out == OUT_DONE || (c->out == OUT_FIXED && c->flen == 0));
		rc = h2_conn_respond(&s->h, c->sid, status, f, nf, end);
		if (rc == -SK_EAGAIN) {
			c->h2_blocked = s->blocked = true;
			conn_advance(c->h2);
			return 0;
		}
		if (rc < 0)
			return rc;
		c->h2_resp = true;
		c->h2_end = end;
		c->opos += hl;
		if (c->opos == c->olen)
			c->opos = c->olen = 0;
		c->send_progress = loop_now(c->app->loop);
	}
	const void *p = c->obuf; /* never NULL, even for an empty last piece (the
				   * engine advances the pointer by what it took) */
	size_t len = 0;
	bool end = true, from_obuf = false;
	if (c->opos < c->olen) {
		p = c->obuf + c->opos;
		len = c->olen - c->opos;
		from_obuf = true;
		end = c->out == OUT_DONE || (c->out == OUT_FIXED && c->fsent >= c->flen);
	} else if (c->out == OUT_FIXED && c->fsent < c->flen) {
		p = c->fbody + c->fsent;
		len = c->flen - c->fsent;
	} else if (c->h2_end || !(c->out == OUT_FIXED || c->out == OUT_DONE)) {
		conn_advance(c->h2);
		return 1;
	}
	rc = h2_conn_send_body(&s->h, c->sid, p, len, end);
	if (rc < 0)
		return rc == -SK_EAGAIN ? 0 : rc;
	c->h2_flying = true;
	c->h2_fly = len;
	c->h2_fly_obuf = from_obuf;
	c->h2_end = end;
	conn_advance(c->h2);
	return 0;
}

/* One pass over both halves until nothing moves. */
static void conn_step(struct http_app_conn *c)
{
	struct http_app *app = c->app;
	for (int guard = 0; guard < 100000 && !c->dead; guard++) {
		bool moved = false;
		if (out_pending(c)) {
			int f = flush(c);
			if (f < 0) {
				app->st.write_errors++; /* reset, or the socket failed */
				c->dead = true;
				break;
			}
			moved = moved || f > 0;
		}
		if (c->out == OUT_FIXED && !out_pending(c)) {
			c->out = OUT_DONE; /* the application's body has left whole */
			moved = true;
		}
		/* The write callback, when there is room, or when a known length
		 * is all written (a 0-byte stream too): only it can end it. */
		if (c->out == OUT_STREAM && c->wfn && c->wfn_due && !c->ended &&
		    (http_app_writable(REQ(c)) > 0 || c->stream_left == 0)) {
			c->wfn_due = false;
			c->in_cb = true;
			c->wfn(REQ(c), c->wctx);
			c->in_cb = false;
			moved = true;
			continue;
		}
		switch (c->in) {
		case IN_HEAD: {
			if (out_pending(c))
				break;
			bool wait = false;
			if (sk_unlikely(c->h2_may) && c->rlen) {
				int p = preface_seen(c);
				if (p > 0) {
					sess_begin(c);
					c->again = true; /* conn_advance runs the session */
					return;
				}
				wait = p == 0;
				c->h2_may = wait;
			}
			uint64_t t0 = sk_trace_begin(app->cfg.trace);
			int n = c->rlen && !wait ? http_parse_head(c->req, c->rbuf, c->rlen)
						 : HTTP_NEED_MORE;
			if (n > 0) {
				c->t_req = t0; /* a complete head: its parse starts the sample */
				dispatch(c, n);
				moved = true;
				break;
			}
			if (n < HTTP_NEED_MORE) {
				make_live(app, c);
				c->lg_raw = true;
				c->lg_owed = false;
				c->head_req = false;
				c->out = OUT_NONE;
				c->hdr_len = 0;
				app->st.requests++;
				engine_answer(c, http_err_status(n));
				moved = true;
				break;
			}
			uint32_t before = c->rlen;
			int rr = conn_read(c);
			if (rr == 1) {
				/* header_timeout runs from a request's first byte */
				if (before == 0)
					c->head_start = loop_now(app->loop);
				moved = true;
			} else if (rr < 0) {
				c->dead = true; /* closed (or reset) between requests or mid-head */
			}
			break;
		}
		case IN_BODY:
			if (c->paused)
				break;
			if (!body_offer(c)) {
				moved = c->in != IN_BODY;
				break;
			}
			if (body_complete(c)) {
				body_end(c);
				moved = true;
				break;
			}
			if (c->ipos < c->rlen) {
				body_decode(c);
				moved = true;
				break;
			}
			/* Everything read was taken: reuse the body area. */
			if (sk_unlikely(c->h2 != NULL))
				h2_taken(c);
			c->rlen = c->ipos = c->head_len;
			{
				int rr = conn_read(c);
				if (rr == 1)
					moved = true;
				else if (rr < 0) {
					c->failed = true;
					c->dead = true; /* the body was cut short */
				}
			}
			break;
		case IN_WAIT:
		case IN_DONE:
			/* The request's head (and body, if asked) is read and
			 * its answer waits for room: take what came behind it
			 * (the body no one asked for yet, a pipelined request)
			 * into the buffer now, used once the answer has left.  A
			 * half-duplex TLS engine (BearSSL's) refuses our writes
			 * while plaintext it took in waits to be read, and no
			 * edge follows: not reading here stalled the answer
			 * until the send timeout (loop_tls_test.c).  At EOF the
			 * answer still goes; the next read there ends it. */
			if (c->may_read && !c->eof && sk_likely(c->h2 == NULL) && out_pending(c)) {
				int rr = conn_read(c);
				if (rr == 1)
					moved = true;
				else if (rr < -1)
					c->dead = true; /* reset */
			}
			break;
		case IN_LINGER:
			if (c->live || out_pending(c))
				break;
			if (!c->shut) {
				if (c->eof || !c->drain) {
					c->dead = true;
					break;
				}
				loop_shutdown(app->loop, c->sock);
				c->shut = true;
			}
			{
				/* Read and drop: the rbuf's content is no longer needed. */
				c->rlen = c->ipos = 0;
				int rr = conn_read(c);
				c->rlen = c->ipos = 0;
				if (rr == 1)
					moved = true;
				else if (rr < 0)
					c->dead = true;
			}
			break;
		default:
			break;
		}
		if (c->dead)
			break;
		/* The answer has left: is the request over? */
		if (c->live && c->out == OUT_DONE && !out_pending(c)) {
			if (c->t_req) {
				/* Keep-alive answers only (not an
				 * error's, not one that closes).  Elapsed time: a
				 * handler that answers later (a proxy's upstream, a
				 * body it reads first) has that wait in its sample. */
				if (!c->failed && !c->close_after)
					sk_trace_end(app->cfg.trace, SK_TR_http_request, c->t_req, 1);
				c->t_req = 0;
			}
			if (c->in == IN_WAIT) {
				if (unread_body_closes(c) || c->close_after) {
					c->close_after = true;
					c->in = IN_LINGER;
				} else {
					body_begin(c, BM_DISCARD);
				}
				moved = true;
			}
			if (c->in == IN_DONE || c->in == IN_LINGER) {
				request_over(c);
				moved = true;
			}
		}
		if (!moved && !c->again)
			break;
		c->again = false;
	}
}

/* The loop's timer ops, timed under --trace (the arm and cancel rows). */
static void app_timer_set(struct http_app *app, struct loop_timer *t, sk_time_ns at)
{
	uint64_t t0 = sk_trace_begin(app->cfg.trace);
	loop_timer_set(app->loop, t, at);
	sk_trace_end(app->cfg.trace, SK_TR_timer_arm, t0, 1);
}

static void conn_arm(struct http_app_conn *c)
{
	sk_time_ns d = conn_deadline(c);
	if (d == 0)
		return; /* a stale earlier timer finds nothing due and stops */
	if (!loop_timer_armed(&c->timer) || c->timer.deadline > d)
		app_timer_set(c->app, &c->timer, d);
}

static void conn_advance(struct http_app_conn *c)
{
	if (c->busy) {
		c->again = true;
		return;
	}
	if (c->sock < 0)
		return;
	c->busy = true;
	do {
		c->again = false;
		if (sk_unlikely(c->sess != NULL))
			sess_step(c);
		else
			conn_step(c);
	} while (c->again && !c->dead);
	c->busy = false;
	if (c->dead)
		conn_release(c);
	else
		conn_arm(c);
}

static void conn_timer(struct loop_timer *t, sk_time_ns now)
{
	struct http_app_conn *c =
		(struct http_app_conn *)(void *)((char *)t - offsetof(struct http_app_conn, timer));
	struct http_app *app = c->app;
	sk_time_ns d = conn_deadline(c);
	if (d == 0)
		return;
	if (now < d) {
		app_timer_set(app, &c->timer, d);
		return;
	}
	if (sk_unlikely(c->sess != NULL)) {
		sess_timer(c, now);
		return;
	}
	if (out_pending(c) && c->send_progress + app->cfg.send_timeout <= now) {
		app->st.timeout_send++;
		c->failed = true;
		c->dead = true;
	} else if (c->in == IN_HEAD) {
		if (c->rlen) {
			app->st.timeout_header++;
			make_live(app, c);
			c->lg_raw = true;
			c->lg_owed = false;
			c->out = OUT_NONE;
			c->hdr_len = 0;
			engine_answer(c, 408);
		} else {
			if (sk_unlikely(app->draining))
				app->st.drain_idle_closed++;
			else
				app->st.timeout_idle++;
			c->dead = true;
		}
	} else if (c->in == IN_BODY) {
		app->st.timeout_body++;
		engine_answer(c, 408);
	} else {
		c->dead = true; /* the linger ended */
	}
	if (c->dead && !c->busy) {
		conn_release(c);
		return;
	}
	conn_advance(c);
}

static void conn_event(void *user, int sock, unsigned events, sk_time_ns now)
{
	(void)sock;
	(void)now;
	struct http_app_conn *c = user;
	if (c->sock < 0)
		return;
	if ((events & LOOP_EV_ERROR) && !c->busy) {
		/* Reset: reads and writes would only say so. */
		c->failed = true;
		conn_release(c);
		return;
	}
	if (events & (LOOP_EV_READ | LOOP_EV_ERROR))
		c->may_read = true;
	conn_advance(c);
}

/* ---- the listener ---- */

/* Every connection state is taken: 503 and close.  What the client
 * already sent is read first, so the close is less
 * likely a RST that destroys the answer, and the log gets its first line. */
static void refuse(struct http_app *app, int s, const struct loop_peer *peer)
{
	static const char msg[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				  "Connection: close\r\n\r\n";
	uint8_t got[HTTP_ACCESS_LINE_MAX + 2u];
	long n = loop_read(app->loop, s, got, sizeof(got));
	if (app->cfg.error_answer) {
		/* The application's body: built here, no connection state to
		 * hold it (the socket's buffer takes it whole). */
		uint8_t out[HTTP_APP_ERROR_BODY_MAX + 512u], body[HTTP_APP_ERROR_BODY_MAX];
		char ct[256];
		uint32_t cl = 0;
		size_t bl = error_body(app, 503, body, ct, &cl);
		struct http_out o = {out, out + sizeof(out)};
		http_out_str(&o, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: ");
		http_out_u64(&o, bl);
		http_out_str(&o, "\r\nConnection: close\r\n");
		http_out_mem(&o, ct, cl);
		http_out_str(&o, "\r\n");
		http_out_mem(&o, body, bl);
		loop_write(app->loop, s, out, (size_t)(o.p - out));
	} else {
		loop_write(app->loop, s, msg, sizeof(msg) - 1);
	}
	loop_shutdown(app->loop, s);
	loop_close(app->loop, s);
	app->st.conns_refused++;
	app->st.resp_503++;
	app->st.resp_5xx++;
	if (sk_unlikely(app->cfg.access != NULL)) {
		uint32_t k = 0, max = n > 0 ? (uint32_t)n : 0;
		while (k < max && got[k] != '\r' && got[k] != '\n')
			k++;
		struct http_access rec = {.addr = peer->addr, .port = peer->port, .status = 503,
					  .line = {max ? got : NULL, k}};
		app->cfg.access(app->cfg.access_ctx, &rec);
	}
}

static void on_accept(void *user, int lsock, unsigned events, sk_time_ns now)
{
	(void)events;
	struct http_app *app = user;
	for (;;) {
		struct loop_peer peer;
		int s = loop_accept(app->loop, lsock, &peer);
		if (s < 0)
			return;
		if (!state_free(app)) {
			refuse(app, s, &peer);
			continue;
		}
		struct http_app_conn *c = state_take(app);
		app->st.conns_accepted++;
		c->sock = s;
		c->peer = peer;
		c->may_read = true; /* what came with the handshake raised no event of its own */
		c->h2_may = app->cfg.h2_sessions != 0;
		c->in = IN_HEAD;
		c->out = OUT_NONE;
		c->head_start = now;
		c->t_accept = sk_trace_begin(app->cfg.trace);
		if (loop_watch(app->loop, s, conn_event, c) < 0) {
			c->dead = true;
			conn_release(c);
			continue;
		}
		conn_advance(c);
	}
}

int http_app_start(struct http_app *app)
{
	int s = loop_listen(app->loop, &app->cfg.addr, app->cfg.port, app->cfg.backlog);
	if (s < 0)
		return s;
	app->lsock = s;
	return loop_watch(app->loop, s, on_accept, app);
}

void http_app_stop(struct http_app *app)
{
	/* A drain cut short (its timeout, SIGINT) is not a drain done: its
	 * callback, whose context may be gone, is not called. */
	app->drain_done = NULL;
	for (uint32_t i = 0, end = states_end(app); i < end; i++) {
		struct http_app_conn *c = &app->conns[i];
		/* A stream's state goes with its session's connection. */
		if (c->sock >= 0 && !c->busy && !c->h2)
			conn_release(c);
	}
	if (app->lsock >= 0) {
		loop_close(app->loop, app->lsock);
		app->lsock = -1;
	}
}

void http_app_drain(struct http_app *app, sk_time_ns now, void (*done)(void *ctx), void *ctx)
{
	if (app->draining)
		return;
	app->draining = true;
	app->drain_at = now;
	if (app->lsock >= 0) {
		/* What the kernel (or skiff's TCP) completed but nobody accepted
		 * would be reset with its request in it: take it first. */
		on_accept(app, app->lsock, LOOP_EV_READ, now);
		loop_close(app->loop, app->lsock);
		app->lsock = -1;
	}
	for (uint32_t i = 0, end = states_end(app); i < end; i++) {
		struct http_app_conn *c = &app->conns[i];
		/* Idle ones get the grace's deadline (conn_deadline; lazy: only
		 * an earlier one moves the timer).  An HTTP/2 session sends
		 * GOAWAY: its streams finish, no new one starts. */
		if (c->sock >= 0 && !c->busy && c->sess) {
			h2_conn_shutdown(&c->sess->h, now);
			conn_advance(c);
		} else if (c->sock >= 0 && !c->busy) {
			conn_arm(c);
		}
	}
	if (!app->nconns) {
		done(ctx);
		return;
	}
	app->drain_done = done;
	app->drain_ctx = ctx;
}

void http_app_goaway(struct http_app *app, sk_time_ns now)
{
	/* The pool's slots, not the connections': h2_sessions (8 by default)
	 * where max_conns may be thousands.  A session that ends here goes
	 * back to the free list; its slot is passed with no owner. */
	for (uint32_t i = 0; i < app->cfg.h2_sessions; i++) {
		struct http_app_h2 *s = sess_at(app, i);
		if (!s->owner)
			continue;
		bool sent = s->h.goaway_sent;
		h2_conn_shutdown(&s->h, now); /* nothing if over or said */
		if (sent || !s->h.goaway_sent)
			continue;
		app->st.h2_goaway_reload++;
		conn_advance(s->owner); /* written now; lingers at once if no stream is open */
	}
}

/* ---- checking ---- */

#define CHECK(cond) do { if (!(cond)) return -__LINE__; } while (0)

int http_app_check(const struct http_app *app)
{
	uint32_t used = 0, nfree = 0, files = 0, live_cur = 0, live_old = 0, slots = 0;
	uint32_t held = 0;
	for (const struct http_app_conn *c = app->free_list; c; c = c->next_free) {
		CHECK(c->sock < 0 && !c->rbuf);
		CHECK(++nfree <= app->cfg.max_conns);
	}
	for (uint32_t i = 0, end = states_end(app); i < end; i++) {
		const struct http_app_conn *c = &app->conns[i];
		if (c->sock < 0)
			continue;
		used++;
		CHECK(!c->busy && !c->dead);
		/* Without a buffer set: nothing read, nothing to send, no request. */
		held += c->rbuf != NULL;
		CHECK(c->rbuf || (!c->rlen && !c->olen && !c->hdr_len && !c->live && !c->sess &&
				  !c->h2 && !out_pending(c)));
		CHECK(c->rlen <= app->cfg.rbuf_size);
		CHECK(c->ipos <= c->rlen);
		CHECK(c->dlen == 0 || c->doff + c->dlen <= c->rlen);
		CHECK(c->opos <= c->olen && c->olen <= app->cfg.out_size);
		CHECK(c->in <= IN_H2 && c->out <= OUT_DONE);
		CHECK((c->in == IN_H2) == (c->sess != NULL));
		CHECK(!c->sess || c->sess->owner == c);
		if (c->h2) {
			/* A stream's state: in its session's table, once. */
			CHECK(c->sock == SOCK_H2 && !c->h2_orphan && c->h2->sess);
			uint32_t k = 0;
			for (uint32_t j = 0; j < c->h2->sess->n; j++)
				k += c->h2->sess->str[j].c == c && c->h2->sess->str[j].sid == c->sid;
			CHECK(k == 1);
		}
		CHECK(!c->live || c->in != IN_HEAD);
		CHECK(c->out != OUT_FIXED || c->fsent <= c->flen);
		CHECK(c->in != IN_BODY || c->ipos >= c->head_len);
		CHECK(!c->ffile || c->live); /* held only while its request lives */
		files += c->ffile != NULL;
		CHECK(!c->slot || c->live); /* a body slot is held only while its request lives */
		slots += c->slot != NULL;
		if (c->live && c->epoch == app->epoch)
			live_cur++;
		else if (c->live)
			live_old++;
		/* A connection that waits for the peer has its timer armed. */
		sk_time_ns d = conn_deadline(c);
		CHECK(d == 0 || (loop_timer_armed(&c->timer) && c->timer.deadline <= d));
	}
	CHECK(used == app->nconns);
	CHECK(app->states_fresh <= app->cfg.max_conns);
	CHECK(used + nfree + app->states_fresh == app->cfg.max_conns);
	/* Every buffer set is fresh, free or held by one state. */
	CHECK(held == app->bufs_held);
	uint32_t bfree = 0;
	for (const uint8_t *b = app->bufs_free; b; sk_memcpy(&b, b, sizeof(const uint8_t *)))
		CHECK(++bfree <= app->cfg.max_conns);
	CHECK(app->bufs_fresh + bfree + held == app->cfg.max_conns);
	CHECK(files == app->files_held);
	CHECK(live_cur == app->live_cur && live_old == app->live_old);
	/* Every slot of the body pool is free or held by one connection. */
	CHECK(slots == app->slots_used);
	uint32_t sfree = 0;
	for (const uint8_t *sl = app->slot_free; sl; sk_memcpy(&sl, sl, sizeof(const uint8_t *)))
		CHECK(++sfree <= app->cfg.body_slots);
	CHECK(app->cfg.body_size == 0 || sfree + slots == app->cfg.body_slots);
	return 0;
}
