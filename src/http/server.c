/* server.c — the connection machine; see server.h.  The bytes of a
 * response head come from emit.c, the path of a target from target.c.
 *
 * Call order: the loop calls srv_on_accept (listener readiness),
 * conn_on_event (connection readiness) and conn_on_timer; the last two end
 * in conn_run(), the one place that moves a connection forward:
 *   conn_run -> conn_advance: flush -> process (parse, route, emit) -> read,
 *                             again, until the socket or the peer stops it,
 *                             and say why (enum conn_rest);
 *            -> the rest:     the deadline of that wait, the I/O buffer back
 *                             if nothing is pending, conn_assert.
 * Invariant: responses are appended only while the output batch started
 * empty in this pass, so pointers into hbuf never move under a partially
 * written batch.
 */
#include "server.h"

#include "../base/hist.h"
#include "accept_enc.h"
#include "date.h"
#include "emit.h"
#include "target.h"

#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

/* Where a connection is in its life.  The phase says what the next input
 * bytes mean and what the deadline of a wait for them is; unsent output
 * (iov) may be pending in every live phase but LINGER.
 *
 *   FREE --accept--> HEAD --head complete--> IDLE, BODY or CLOSING
 *   IDLE --first byte of the next request--> HEAD
 *   BODY --body read, deferred answer queued--> IDLE or CLOSING
 *   CLOSING --output flushed--> FREE, or LINGER --EOF, timeout--> FREE
 * An error, a timeout or a last response ("Connection: close") moves any
 * live phase to CLOSING (conn_last); a read error or EOF frees at once. */
enum conn_phase {
	P_FREE,    /* on the free list: sock -1, no buffer, no timer; the rest is stale */
	P_HEAD,    /* a request head is owed: a new connection, or the first
		    * bytes of one arrived; header_timeout runs from then */
	P_IDLE,    /* keep-alive between requests: no byte of the next one yet */
	P_BODY,    /* discarding a request body (body_left / chunk); `deferred`
		    * is the answer to send when it ends */
	P_CLOSING, /* the last response is queued; nothing more is read for
		    * meaning; once flushed: free, or LINGER if linger_after */
	P_LINGER,  /* half-closed: reading and discarding until EOF or linger_timeout */
};

/* What the connection's single deadline means when it passes. */
enum deadline_kind { D_HEADER, D_BODY, D_IDLE, D_WRITE, D_LINGER };

/* Why conn_advance stopped. */
enum conn_rest { R_GONE, R_WRITE, R_INPUT, R_LINGER };

/* --access-log only: where the log fields of a request are (access.h),
 * as offsets into the connection's rbuf (like an answer's loc_off: rbuf
 * does not move while an answer is owed) or, once the request's body is
 * being read, into its log scratch (srv->logs), which nothing else
 * writes.  A field is present iff its bit is in `has`. */
enum { LG_LINE = 1, LG_REF = 2, LG_UA = 4 };
struct log_ref {
	uint32_t line_off, ref_off, ua_off;
	uint16_t line_len, ref_len, ua_len;
	uint8_t has;     /* LG_* */
	bool scratch;    /* offsets into the scratch, not rbuf */
};

/* The answer to a request, decided when its head is complete (decide(),
 * which only reads) and sent when its body (if any) has been read and the
 * output batch has room for it: a malformed chunked body must get its 400,
 * not the answer the head alone deserved.  Everything it needs is in here
 * (or, for the 301's Location, in rbuf, which no read moves while an
 * answer is owed: see `owed`). */
struct answer {
	bool head_only;
	uint8_t ch;       /* enum http_conn_hdr */
	bool https;       /* 301 of https_redirect: to https://host, target as is */
	uint32_t host_off, host_len; /* ... the Host's name (no port) in rbuf */
	/* What a file answers (file_answer.h): status 200 206 301 304 403 404
	 * 412 416, or this engine's own 405 and 400/414 (close).  A 301's
	 * loc_off is kept as an offset into rbuf, not into the target. */
	struct http_file_answer fa;
	/* --access-log only (else never written, not even cleared). */
	struct log_ref lg;
};

struct http_conn {
	struct http_server *srv;
	struct loop_timer timer; /* live: armed, at <= deadline (lazy, see server.h) */
	sk_time_ns deadline;     /* the true deadline, of kind dkind */
	int sock;                /* -1 when FREE */
	uint8_t phase;           /* enum conn_phase */
	uint8_t dkind;           /* enum deadline_kind; D_LINGER <=> LINGER */
	bool may_read;           /* edge contract: unread bytes may wait in the socket */
	bool linger_after;       /* CLOSING: end with a lingering close (unread input possible) */
	bool body_chunked;       /* BODY: discarding a chunked request body */
	/* `deferred` is decided and due, waiting only for room in the output
	 * batch: then niov > 0, and it goes first once the batch is flushed,
	 * before any read (so rbuf, which its Location may point into, has
	 * not moved). */
	bool owed;
	uint16_t batch;          /* responses in the current output batch (0 if niov == 0) */
	struct answer deferred;  /* BODY or owed: the answer, sent when the body ends / room */
	uint64_t body_left;      /* BODY: Content-Length bytes still to discard */
	/* rbuf: HTTP_RBUF_SIZE bytes, [rpos, rlen) unprocessed; hbuf right
	 * behind it (HTTP_OUT_HEAD).  Both are one buffer from the server's
	 * pool, held iff there is unprocessed input or unsent output:
	 *   rbuf != NULL <=> rpos < rlen || niov > 0
	 * whenever the connection rests (conn_rest gives it back, conn_assert
	 * checks), so an idle connection holds none.  Without one, rpos, rlen
	 * and hlen are 0. */
	uint8_t *rbuf;
	uint8_t *hbuf;
	uint32_t rpos, rlen;
	/* Output batch: iov[iov_i, niov) still to send; hbuf[0, hlen) holds the
	 * heads (and inlined small bodies) the slices point into. */
	uint16_t niov, iov_i;
	uint32_t hlen;
	struct http_conn *next_free;
	struct http_chunked chunk;
	struct loop_iov iov[HTTP_OUT_IOV];
	/* iov_f[i]: the file iov[i] is a slice of, when the loop can send it
	 * from the file's descriptor (loop_sendfile; http_file.fd > 0), the
	 * slice's offset in the file being iov[i].base - iov_f[i]->data, or
	 * by reference (loop_send_ref; http_file.pinned); else NULL (memory:
	 * heads, inline bodies, files the loop must copy). */
	const struct http_file *iov_f[HTTP_OUT_IOV];
	struct http_req req;
	/* --trace only (0 when off): cycles at the accept, and at the start of
	 * the parse of the first request in the unsent output batch. */
	uint64_t t_accept, t_req;
	struct loop_peer peer;   /* from the accept, for the access log */
	/* --access-log only: the request the next response queued answers;
	 * cleared once logged, so a response to no request (a 408 before any
	 * byte) logs none. */
	struct log_ref lg;
};

static const struct http_file hello_file = {
	.data = (const uint8_t *)HTTP_HELLO_BODY,
	.len = HTTP_HELLO_LEN,
	.ctype = "text/plain",
};
_Static_assert(sizeof(HTTP_HELLO_BODY) - 1 == HTTP_HELLO_LEN, "seed 000's body is 41 bytes");

void http_server_config_default(struct http_server_config *cfg)
{
	sk_memset(cfg, 0, sizeof(*cfg));
	cfg->port = 80;
	cfg->max_conns = 4096;
	cfg->header_timeout = 10 * SK_NS_PER_S;
	cfg->keepalive_timeout = 60 * SK_NS_PER_S;
	cfg->linger_timeout = 2 * SK_NS_PER_S;
	cfg->max_body = 1u << 20;
}

#define ALIGN_UP(x, a) (((x) + (a)-1) & ~((size_t)(a)-1))

size_t http_server_mem_size(const struct http_server_config *cfg)
{
	return 64 + ALIGN_UP((size_t)cfg->max_conns * sizeof(struct http_conn), 64) +
	       (size_t)cfg->max_conns * HTTP_IOBUF_SIZE +
	       (cfg->access ? (size_t)cfg->max_conns * HTTP_ACCESS_SCRATCH : 0);
}

bool http_cache_control_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (n >= HTTP_CACHE_CONTROL_MAX || s[n] < 0x20 || s[n] > 0x7e)
			return false;
	return n > 0 && s[0] != ' ' && s[n - 1] != ' ';
}

int http_server_init(struct http_server *srv, void *mem, size_t size,
		     const struct http_server_config *cfg, struct loop *loop)
{
	if (!cfg->max_conns || !cfg->header_timeout || !cfg->keepalive_timeout)
		return -SK_EINVAL;
	if (cfg->cache_control && !http_cache_control_ok(cfg->cache_control))
		return -SK_EINVAL;
	if (size < http_server_mem_size(cfg))
		return -SK_ENOMEM;
	sk_memset(srv, 0, sizeof(*srv));
	srv->cfg = *cfg;
	if (!srv->cfg.linger_timeout)
		srv->cfg.linger_timeout = 2 * SK_NS_PER_S;
	srv->loop = loop;
	srv->lsock = -1;
	uintptr_t p = ALIGN_UP((uintptr_t)mem, 64);
	srv->conns = (struct http_conn *)p;
	srv->bufs = (uint8_t *)(p + ALIGN_UP((size_t)cfg->max_conns * sizeof(struct http_conn), 64));
	srv->logs = cfg->access ? srv->bufs + (size_t)cfg->max_conns * HTTP_IOBUF_SIZE : NULL;
	/* Connections are taken from the high-water mark first, then from the
	 * free list: init writes nothing into `mem`, so the pages of states
	 * never used are never touched (and never resident). */
	srv->nconns = 0;
	srv->free_list = NULL;
	sk_memcpy(srv->date, "Thu, 01 Jan 1970 00:00:00 GMT", 29);
	return 0;
}

void http_server_set_date(struct http_server *srv, const char *date29)
{
	sk_memcpy(srv->date, date29, 29);
}

/* ---- status counters ---- */

static void count_status(struct http_server_stats *st, int status)
{
	switch (status) {
	case 200: st->resp_200++; break;
	case 206: st->resp_206++; break;
	case 301: st->resp_301++; break;
	case 304: st->resp_304++; break;
	case 400: st->resp_400++; break;
	case 403: st->resp_403++; break;
	case 404: st->resp_404++; break;
	case 405: st->resp_405++; break;
	case 408: st->resp_408++; break;
	case 412: st->resp_412++; break;
	case 413: st->resp_413++; break;
	case 414: st->resp_414++; break;
	case 416: st->resp_416++; break;
	case 431: st->resp_431++; break;
	case 501: st->resp_501++; break;
	case 503: st->resp_503++; break;
	case 505: st->resp_505++; break;
	default: st->resp_other++; break;
	}
}

/* ---- access log (cfg.access; nothing here runs without it) ---- */

static uint8_t *log_scratch(const struct http_conn *c)
{
	return c->srv->logs + (size_t)(c - c->srv->conns) * HTTP_ACCESS_SCRATCH;
}

/* The fields of the head just parsed at rbuf + at (r's slices are
 * relative to it).  The request line runs from the method to the end of
 * the version, which is exactly "HTTP/D.D" (parser.h). */
static void log_ref_request(struct log_ref *lg, const struct http_req *r, const uint8_t *head,
			    uint32_t at)
{
	lg->has = LG_LINE;
	lg->scratch = false;
	lg->line_off = at + r->method_s.off;
	lg->line_len = (uint16_t)(r->target.off + r->target.len + 9u - r->method_s.off);
	const struct http_header *h = http_req_find(r, head, "referer", 7);
	if (h) {
		lg->has |= LG_REF;
		lg->ref_off = at + h->value.off;
		lg->ref_len = h->value.len;
	}
	h = http_req_find(r, head, "user-agent", 10);
	if (h) {
		lg->has |= LG_UA;
		lg->ua_off = at + h->value.off;
		lg->ua_len = h->value.len;
	}
}

/* A head the parser refused: its first line as sent, up to a CR or LF
 * (or what arrived of it), at most what the log keeps of a line. */
static void log_ref_raw(struct log_ref *lg, const uint8_t *rbuf, uint32_t at, uint32_t end)
{
	uint32_t n = 0, max = end - at < HTTP_ACCESS_LINE_MAX + 1u ? end - at
								  : HTTP_ACCESS_LINE_MAX + 1u;
	while (n < max && rbuf[at + n] != '\r' && rbuf[at + n] != '\n')
		n++;
	*lg = (struct log_ref){.has = LG_LINE, .line_off = at, .line_len = (uint16_t)n};
}

/* The answer waits for the request's body, whose bytes will overwrite the
 * head's in rbuf: keep the fields in the connection's scratch (each cut
 * one byte past what is logged, so the cut shows). */
static void log_ref_keep(struct http_conn *c, struct log_ref *lg)
{
	if (lg->scratch)
		return;
	uint8_t *sc = log_scratch(c);
	uint32_t at = 0;
	uint16_t *len[3] = {&lg->line_len, &lg->ref_len, &lg->ua_len};
	uint32_t *off[3] = {&lg->line_off, &lg->ref_off, &lg->ua_off};
	static const uint16_t max[3] = {HTTP_ACCESS_LINE_MAX + 1u, HTTP_ACCESS_FIELD_MAX + 1u,
					HTTP_ACCESS_FIELD_MAX + 1u};
	for (int i = 0; i < 3; i++) {
		if (!(lg->has & (1u << i)))
			continue;
		uint16_t n = *len[i] < max[i] ? *len[i] : max[i];
		sk_memcpy(sc + at, c->rbuf + *off[i], n);
		*off[i] = at;
		*len[i] = n;
		at += n;
	}
	lg->scratch = true;
}

static struct http_access_str log_str(const uint8_t *base, bool has, uint32_t off, uint16_t len)
{
	return has ? (struct http_access_str){base + off, len} : (struct http_access_str){NULL, 0};
}

/* The response just queued on c: one record, for c->lg's request. */
static void log_response(struct http_conn *c, int status, uint64_t body_bytes)
{
	struct http_server *srv = c->srv;
	static const struct log_ref none;
	const struct log_ref *lg = &c->lg;
	const uint8_t *base = lg->scratch ? log_scratch(c) : c->rbuf;
	if (!base)
		lg = &none; /* no buffer: nothing to point at (never expected) */
	struct http_access rec = {
		.addr = c->peer.addr,
		.port = c->peer.port,
		.status = (uint16_t)status,
		.body_bytes = body_bytes,
		.line = log_str(base, lg->has & LG_LINE, lg->line_off, lg->line_len),
		.referer = log_str(base, lg->has & LG_REF, lg->ref_off, lg->ref_len),
		.user_agent = log_str(base, lg->has & LG_UA, lg->ua_off, lg->ua_len),
	};
	srv->cfg.access(srv->cfg.access_ctx, &rec);
	c->lg = (struct log_ref){0};
}

/* ---- output batch ---- */

/* Room for an error answer (a short head, a short body) or a 100
 * Continue: what process() may queue before it knows the answer; the
 * answer itself is measured by answer_fits(). */
#define ERROR_ROOM 512u
static inline bool out_room(const struct http_conn *c)
{
	return c->hlen + ERROR_ROOM <= HTTP_OUT_HEAD && c->niov + 2u <= HTTP_OUT_IOV;
}

/* Append hbuf[from, hlen) to the batch, extending the last slice when it
 * ends right there (consecutive heads and inline bodies: one slice). */
static void out_hbuf_slice(struct http_conn *c, uint32_t from)
{
	const uint8_t *s = c->hbuf + from;
	if (c->niov && !c->iov_f[c->niov - 1] &&
	    (const uint8_t *)c->iov[c->niov - 1].base + c->iov[c->niov - 1].len == s) {
		c->iov[c->niov - 1].len += c->hlen - from;
		return;
	}
	c->iov_f[c->niov] = NULL;
	c->iov[c->niov++] = (struct loop_iov){s, c->hlen - from};
}

/* Append a body slice of f (NULL: plain memory).  It is marked for
 * loop_sendfile when f has a descriptor and the loop can send from one. */
static void out_body_slice(struct http_conn *c, const uint8_t *p, size_t len,
			   const struct http_file *f)
{
	struct loop *l = c->srv->loop;
	bool by_file = f && ((f->fd > 0 && loop_has_sendfile(l)) || (f->pinned && loop_has_send_ref(l)));
	c->iov_f[c->niov] = by_file ? f : NULL;
	c->iov[c->niov++] = (struct loop_iov){p, len};
}

/* Queue one response: head, and the body unless head_only. */
static void respond(struct http_conn *c, int status, const char *ctype, const uint8_t *body,
		    uint64_t blen, bool head_only, enum http_conn_hdr ch, const char *extra)
{
	struct http_server *srv = c->srv;
	uint32_t from = c->hlen;
	c->hlen += (uint32_t)http_emit_head(c->hbuf + c->hlen, HTTP_OUT_HEAD - c->hlen, status,
					     srv->date, ctype, blen, ch, extra);
	if (!head_only && blen && blen <= HTTP_INLINE_BODY) {
		/* Small bodies ride in the head's slice: one contiguous piece. */
		sk_memcpy(c->hbuf + c->hlen, body, blen);
		c->hlen += (uint32_t)blen;
		out_hbuf_slice(c, from);
	} else {
		out_hbuf_slice(c, from);
		if (!head_only && blen)
			out_body_slice(c, body, (size_t)blen, NULL);
	}
	count_status(&srv->st, status);
	if (++c->batch > 1)
		srv->st.requests_pipelined++;
	if (sk_unlikely(srv->cfg.access != NULL))
		log_response(c, status, head_only ? 0 : blen);
}

/* The response just queued is the last.  A body still to come is not
 * read for meaning (it could not be framed, or no one will answer it);
 * the connection ends once the output is flushed, lingering if the
 * client may still be sending. */
static void conn_last(struct http_conn *c, bool linger)
{
	/* Once a lingering close is due, a later last answer keeps it. */
	c->linger_after = linger || (c->phase == P_CLOSING && c->linger_after);
	c->phase = P_CLOSING;
	c->body_left = 0;
	c->body_chunked = false;
}

/* An error response; the connection ends after it, lingering. */
static void respond_error(struct http_conn *c, int status, bool head_only, const char *extra)
{
	uint8_t body[HTTP_EMIT_ERROR_BODY_MAX];
	size_t blen = http_emit_error_body(body, sizeof(body), status);
	/* body[] is copied into hbuf (blen <= HTTP_INLINE_BODY), so the stack
	 * buffer may go. */
	respond(c, status, "text/plain", body, blen, head_only, HTTP_CH_CLOSE, extra);
	conn_last(c, true);
}

/* ---- deadlines ---- */

/* The loop's timer ops, timed under --trace (the arm and cancel rows). */
static void srv_timer_set(struct http_server *srv, struct loop_timer *t, sk_time_ns at)
{
	uint64_t t0 = sk_trace_begin(srv->cfg.trace);
	loop_timer_set(srv->loop, t, at);
	sk_trace_end(srv->cfg.trace, SK_TR_timer_arm, t0, 1);
}

static void srv_timer_cancel(struct http_server *srv, struct loop_timer *t)
{
	/* Only a cancel that removes something is a sample. */
	bool armed = loop_timer_armed(t);
	uint64_t t0 = sk_trace_begin(srv->cfg.trace);
	loop_timer_cancel(srv->loop, t);
	if (armed)
		sk_trace_end(srv->cfg.trace, SK_TR_timer_cancel, t0, 1);
}

static void set_deadline(struct http_conn *c, sk_time_ns at, enum deadline_kind kind)
{
	c->deadline = at;
	c->dkind = (uint8_t)kind;
	/* Lazy: only an earlier deadline moves the heap entry. */
	if (!loop_timer_armed(&c->timer) || c->timer.deadline > at)
		srv_timer_set(c->srv, &c->timer, at);
}

/* The deadline while waiting for input, by what the input would be. */
static void wait_input_deadline(struct http_conn *c, sk_time_ns now)
{
	const struct http_server_config *cfg = &c->srv->cfg;
	switch (c->phase) {
	case P_HEAD:
		/* From the first byte (or the accept): trickling does not extend it. */
		if (c->dkind != D_HEADER)
			set_deadline(c, now + cfg->header_timeout, D_HEADER);
		break;
	case P_BODY:
		set_deadline(c, now + cfg->header_timeout, D_BODY);
		break;
	default:
		/* Idle from now on; lazy, so refreshing it per request is free.
		 * Draining: idle means closed, after the grace. */
		set_deadline(c, now + (sk_unlikely(c->srv->draining) ? HTTP_DRAIN_IDLE_GRACE
								    : cfg->keepalive_timeout),
			     D_IDLE);
		break;
	}
}

/* ---- I/O buffers ---- */

/* Take the connection's buffer (no-op if it holds one).  Never fails: each
 * connection holds at most one and there is one per connection; the LIFO
 * list first, so only as many buffers as were ever in use at once are
 * touched. */
static void conn_buf_take(struct http_conn *c)
{
	struct http_server *srv = c->srv;
	if (c->rbuf)
		return;
	uint8_t *b = srv->buf_free;
	if (b)
		sk_memcpy(&srv->buf_free, b, sizeof(srv->buf_free)); /* the link in the free buffer */
	else
		b = srv->bufs + (size_t)srv->buf_hwm++ * HTTP_IOBUF_SIZE;
	srv->bufs_held++;
	c->rbuf = b;
	c->hbuf = b + HTTP_RBUF_SIZE;
	c->rpos = c->rlen = 0;
}

/* Give the buffer back if nothing in it matters any more: every byte read
 * was consumed (no partial request) and no output points into hbuf. */
static void conn_buf_release(struct http_conn *c)
{
	struct http_server *srv = c->srv;
	if (!c->rbuf || c->rpos != c->rlen || c->niov)
		return;
	sk_memcpy(c->rbuf, &srv->buf_free, sizeof(srv->buf_free));
	srv->buf_free = c->rbuf;
	srv->bufs_held--;
	c->rbuf = c->hbuf = NULL;
	c->rpos = c->rlen = 0;
	c->hlen = 0;
}

/* ---- invariants ---- */

/* Everything one connection promises, O(1).  0, or -(the line of the
 * broken promise), as tcp_check(). */
static int conn_check(const struct http_conn *c)
{
	if (c->phase == P_FREE) {
		SK_CHECK(c->sock == -1 && !c->rbuf && !c->niov);
		SK_CHECK(!loop_timer_armed(&c->timer));
		return 0;
	}
	SK_CHECK(c->phase <= P_LINGER);
	SK_CHECK(c->rpos <= c->rlen && c->rlen <= HTTP_RBUF_SIZE);
	SK_CHECK(c->iov_i <= c->niov && c->niov <= HTTP_OUT_IOV && c->hlen <= HTTP_OUT_HEAD);
	/* The buffer is held iff input is unprocessed or output unsent. */
	SK_CHECK(!c->rbuf == !(c->rpos < c->rlen || c->niov));
	SK_CHECK(c->rbuf ? c->hbuf == c->rbuf + HTTP_RBUF_SIZE
			   : !c->hbuf && !c->rlen && !c->hlen);
	SK_CHECK(c->niov || (!c->batch && !c->hlen && !c->iov_i));
	SK_CHECK(!c->owed || c->niov); /* owed only behind a batch that must go first */
	/* Every live connection has a deadline armed, never later than the true one. */
	SK_CHECK(loop_timer_armed(&c->timer) && c->timer.deadline <= c->deadline);
	SK_CHECK((c->phase == P_BODY) == (c->body_left || c->body_chunked));
	SK_CHECK((c->phase == P_LINGER) == (c->dkind == D_LINGER));
	switch (c->phase) {
	case P_IDLE:
	case P_BODY:
		/* Resting here, every buffered byte was used, or output waits. */
		SK_CHECK(c->rpos == c->rlen || c->niov);
		break;
	case P_CLOSING:
		SK_CHECK(c->rpos == c->rlen); /* nothing after the last request counts */
		break;
	case P_LINGER:
		SK_CHECK(!c->rbuf); /* discards go to the shared scratch */
		break;
	default:
		break;
	}
	return 0;
}

/* At every rest, the part that is nearly free (the buffer invariant and
 * the bounds that keep reads and writes inside it), in every build: a
 * broken one would hand a buffer to another connection while slices still
 * point into it.  The rest of conn_check runs in http_server_check. */
static inline void conn_assert(const struct http_conn *c)
{
	if (sk_unlikely(!c->rbuf != !(c->rpos < c->rlen || c->niov) || c->rlen > HTTP_RBUF_SIZE ||
			c->niov > HTTP_OUT_IOV))
		__builtin_trap();
}

/* ---- connection lifecycle ---- */

static void conn_on_event(void *user, int sock, unsigned events, sk_time_ns now);
static void conn_on_timer(struct loop_timer *t, sk_time_ns now);
static void srv_accept_all(struct http_server *srv, sk_time_ns now);

static void conn_free(struct http_conn *c, sk_time_ns now)
{
	struct http_server *srv = c->srv;
	srv_timer_cancel(srv, &c->timer);
	loop_close(srv->loop, c->sock);
	if (c->t_accept)
		sk_trace_end(srv->cfg.trace, SK_TR_conn, c->t_accept, 1);
	c->phase = P_FREE;
	c->sock = -1;
	c->rpos = c->rlen = 0; /* unprocessed input and unsent output die here */
	c->niov = c->iov_i = 0;
	c->batch = 0;
	c->owed = false;
	conn_buf_release(c);
	c->next_free = srv->free_list;
	srv->free_list = c;
	srv->nconns--;
	srv->st.conns_closed++;
	if (sk_unlikely(srv->draining) && !srv->nconns && srv->drain_done) {
		void (*done)(void *) = srv->drain_done;
		srv->drain_done = NULL;
		done(srv->drain_ctx);
	}
	/* A listener whose accept failed for lack of descriptors has lost its
	 * edge; one just came free, so look again.  (This may reuse c.) */
	if (srv->accept_blocked) {
		srv->accept_blocked = false;
		srv_accept_all(srv, now);
	}
}

static struct http_conn *conn_alloc(struct http_server *srv)
{
	struct http_conn *c = srv->free_list;
	if (c) {
		srv->free_list = c->next_free;
		return c;
	}
	/* Never used yet: take the next above the high-water mark. */
	if (srv->hwm < srv->cfg.max_conns)
		return &srv->conns[srv->hwm++];
	return NULL;
}

/* One call of the batch's output: iov[iov_i, end) with writev, or, when
 * a slice in it is marked (iov_f), the memory slices before it and then
 * it with loop_send_ref or loop_sendfile (end is just past it).  Returns
 * what the loop returned. */
static long flush_some(struct http_conn *c, uint16_t *end)
{
	struct loop *l = c->srv->loop;
	uint16_t i = c->iov_i;
	while (i < c->niov && !c->iov_f[i])
		i++;
	if (i == c->niov) {
		*end = c->niov;
		return loop_writev(l, c->sock, c->iov + c->iov_i, (int)(c->niov - c->iov_i));
	}
	const struct http_file *f = c->iov_f[i];
	*end = (uint16_t)(i + 1);
	if (f->pinned && loop_has_send_ref(l))
		return loop_send_ref(l, c->sock, c->iov + c->iov_i, (int)(i - c->iov_i),
				     c->iov[i].base, c->iov[i].len);
	uint64_t off = (uint64_t)((const uint8_t *)c->iov[i].base - f->data);
	return loop_sendfile(l, c->sock, c->iov + c->iov_i, (int)(i - c->iov_i), f->fd, off,
			     c->iov[i].len);
}

/* Writes the batch.  1: all sent; 0: the socket is full (wait for WRITE);
 * -1: the connection is gone.  Without sendfile slices that is one writev;
 * each sendfile slice takes a call of its own (with the heads before it),
 * so this goes on while every call took all it was offered. */
static int conn_flush(struct http_conn *c)
{
	struct http_server *srv = c->srv;
	for (;;) {
		uint16_t end;
		long n = flush_some(c, &end);
		if (n == -SK_EAGAIN)
			return 0;
		if (n < 0) {
			srv->st.write_errors++;
			return -1;
		}
		srv->st.writes++;
		srv->st.bytes_out += (uint64_t)n;
		if (c->t_req) {
			/* A keep-alive batch: from the parse of its first request to
			 * the writev that took it, per response (ab -k: one). */
			if (c->phase != P_CLOSING)
				sk_trace_end(srv->cfg.trace, SK_TR_http_request, c->t_req, c->batch);
			c->t_req = 0;
		}
		uint16_t i = c->iov_i;
		size_t left = (size_t)n;
		while (i < end && left >= c->iov[i].len) {
			left -= c->iov[i].len;
			i++;
		}
		if (i == c->niov) {
			c->niov = c->iov_i = 0;
			c->hlen = 0;
			c->batch = 0;
			return 1;
		}
		c->iov_i = i;
		if (i == end)
			continue; /* that call took all: the next slices */
		c->iov[i].base = (const uint8_t *)c->iov[i].base + left;
		c->iov[i].len -= left;
		srv->st.write_partial++;
		return 0;
	}
}

/* CLOSING, flushed, and the client may still be sending: half-close,
 * then swallow what it sends until it closes.  Closing with unread input
 * would send a RST that can destroy the response in flight (RFC 9112 9.6). */
static void conn_linger(struct http_conn *c, sk_time_ns now)
{
	struct http_server *srv = c->srv;
	srv->st.lingers++;
	loop_shutdown(srv->loop, c->sock);
	c->phase = P_LINGER;
	c->may_read = true;
	set_deadline(c, now + srv->cfg.linger_timeout, D_LINGER);
}

static enum conn_rest linger_drain(struct http_conn *c, sk_time_ns now)
{
	struct http_server *srv = c->srv;
	while (c->may_read) {
		/* Discarded: the shared scratch will do. */
		long n = loop_read(srv->loop, c->sock, srv->path, sizeof(srv->path));
		if (n == -SK_EAGAIN || (n > 0 && (size_t)n < sizeof(srv->path))) {
			c->may_read = false;
			break;
		}
		if (n <= 0) { /* end of stream or error: done */
			conn_free(c, now);
			return R_GONE;
		}
	}
	return R_LINGER;
}

/* ---- requests ---- */

/* ---- static files: what a GET or HEAD answers (RFC 9110) ----
 *
 * decide() only reads (the request, the lookup, the clock-free validators)
 * and fills a struct answer, the file part of it by file_answer.c (shared
 * with the files handler on app.c; the order of the checks is written
 * there); answer_bytes() says what sending it takes; emit_answer() writes
 * it. */

static const struct http_header *hdr(const struct http_req *r, const uint8_t *buf,
				     const char *name, size_t n)
{
	return http_req_find(r, buf, name, n);
}
#define HDR(name) hdr(r, buf, name, sizeof(name) - 1)

/* https_redirect: every request, any method, is sent to the same target
 * on https://HOST (the Host's name; its port replaced by the HTTPS one).
 * The parser has already kept the Host to URI host/port characters, so it
 * cannot break the header; without one (HTTP/1.0) there is no name to
 * send: 400. */
static void decide_redirect(struct http_server *srv, const struct http_req *r,
			    const uint8_t *buf, struct answer *a)
{
	const struct http_header *h = HDR("host");
	if (!h || h->value.len == 0) {
		a->fa.status = 400;
		srv->st.redirect_no_host++;
		return;
	}
	uint32_t ho = h->value.off, hl = h->value.len, n = 0;
	if (buf[ho] == '[') { /* an IPv6 literal keeps its brackets */
		while (n < hl && buf[ho + n] != ']')
			n++;
		n += n < hl;
	} else {
		while (n < hl && buf[ho + n] != ':')
			n++;
	}
	uint32_t to = r->target.off + r->target.len, from = http_file_origin_part(buf, r->target.off, to);
	if (r->target.len == 1 && buf[r->target.off] == '*')
		from = to; /* OPTIONS *: to "/" */
	if (sizeof("https://:65535/") - 1 + n + (to - from) > HTTP_LOCATION_MAX) {
		a->fa.status = 414; /* a Location we will not write */
		return;
	}
	a->fa.status = 301;
	a->https = true;
	a->host_off = ho;
	a->host_len = n;
	a->fa.loc_off = from;
	a->fa.loc_len = to - from;
	a->fa.query_at = a->fa.loc_len;
	srv->st.redirects_https++;
}

/* Which entry a path names, and what kind of answer that is
 * (file_answer.c decides; the fields it reads are gathered here in one
 * pass over the head). */
static void decide_path(struct http_server *srv, const struct http_req *r, const uint8_t *buf,
			size_t plen, struct answer *a)
{
	if (!srv->cfg.lookup) {
		a->fa.status = 404;
		if (plen == 1) { /* the built-in "/" */
			a->fa.f = a->fa.var = &hello_file;
			a->fa.ctype = hello_file.ctype;
			a->fa.status = 200;
		}
		return;
	}
	struct http_file_ask q;
	http_file_ask_init(&q, r->method, buf + r->target.off, r->target.len);
	for (unsigned i = 0; i < r->nheaders; i++) {
		const struct http_header *h = &r->headers[i];
		http_file_ask_field(&q, buf + h->name.off, h->name.len, buf + h->value.off,
				    h->value.len);
	}
	http_file_decide(&a->fa, &q, srv->cfg.lookup, srv->cfg.lookup_ctx, srv->path, plen);
	a->fa.loc_off += r->target.off; /* 301: into buf, as the caller keeps it */
}

/* The answer to the head in buf (whose target and fields are slices of
 * it).  Reads only: a caller that finds no room drops it and decides
 * again later. */
static void decide(struct http_server *srv, const struct http_req *r, const uint8_t *buf,
		   struct answer *a)
{
	sk_memset(a, 0, offsetof(struct answer, fa.rg));
	a->head_only = r->method == HTTP_HEAD;
	a->ch = HTTP_CH_NONE;
	/* "Connection: close" takes effect when the answer is queued
	 * (emit_answer), after the body: the body must be read to answer. */
	if (!r->keep_alive)
		a->ch = HTTP_CH_CLOSE;
	else if (r->version == 10)
		a->ch = HTTP_CH_KEEP_ALIVE;
	if (srv->cfg.https_redirect_port) {
		decide_redirect(srv, r, buf, a);
		return;
	}
	if (r->method != HTTP_GET && r->method != HTTP_HEAD) {
		a->fa.status = 405;
		return;
	}
	size_t plen = 0;
	int st = http_target_path(buf + r->target.off, r->target.len, srv->path,
				  sizeof(srv->path) - 16, &plen);
	if (st != 0) {
		a->fa.status = (uint16_t)st;
		return;
	}
	decide_path(srv, r, buf, plen, a);
}

/* Bytes of hbuf and slices an answer takes, at most: every line
 * emit_answer may write, at its longest (a decimal u64 is 20 digits), so
 * the estimate is a bound by construction and a batch of small answers
 * still packs many per writev. */
#define BOUNDARY HTTP_FILE_BOUNDARY
#define HEAD_FIXED (sizeof("HTTP/1.1 200 Range Not Satisfiable\r\nServer: skiff\r\nDate: \r\n") - 1 + \
		    29 + sizeof("Content-Type: \r\nContent-Length: \r\nAccept-Ranges: bytes\r\n") - 1 + 20 + \
		    sizeof("Last-Modified: \r\nETag: \r\nVary: Accept-Encoding\r\n") - 1 + 29 + \
		    HTTP_ETAG_MAX + sizeof("Content-Encoding: gzip\r\nConnection: keep-alive\r\n") - 1 + \
		    sizeof("Content-Range: bytes -/\r\nCache-Control: \r\nLocation: /\r\n\r\n") - 1 + 60 + \
		    sizeof("Content-Type: multipart/byteranges; boundary=" BOUNDARY) - 1)
#define PART_FIXED (sizeof("\r\n--" BOUNDARY "\r\nContent-Type: \r\nContent-Range: bytes -/\r\n\r\n") - 1 + 60)
#define MULTI_TAIL (sizeof("\r\n--" BOUNDARY "--\r\n") - 1)

static uint32_t answer_bytes(const struct http_server *srv, const struct answer *a,
			     uint32_t *iov)
{
	uint32_t ct = 0, cc = 0;
	if (a->fa.ctype)
		while (a->fa.ctype[ct])
			ct++;
	if (srv->cfg.cache_control)
		while (srv->cfg.cache_control[cc])
			cc++;
	uint32_t head = (uint32_t)HEAD_FIXED + ct + cc + a->fa.loc_len +
			(a->https ? (uint32_t)sizeof("https://:65535") - 1 + a->host_len : 0);
	*iov = 2;
	if (a->fa.status == 206 && a->fa.nranges > 1) {
		*iov = 2u + 2u * a->fa.nranges;
		return head + a->fa.nranges * ((uint32_t)PART_FIXED + ct) + (uint32_t)MULTI_TAIL;
	}
	return head + HTTP_INLINE_BODY;
}

static bool answer_fits(const struct http_conn *c, const struct answer *a)
{
	uint32_t iov, bytes = answer_bytes(c->srv, a, &iov);
	return c->hlen + bytes <= HTTP_OUT_HEAD && c->niov + iov <= HTTP_OUT_IOV;
}
_Static_assert(HEAD_FIXED + HTTP_EMIT_CTYPE_MAX + HTTP_CACHE_CONTROL_MAX + HTTP_LOCATION_MAX +
			       HTTP_INLINE_BODY <= HTTP_OUT_HEAD &&
		       HEAD_FIXED + HTTP_EMIT_CTYPE_MAX + HTTP_CACHE_CONTROL_MAX +
			       HTTP_MAX_RANGES * (PART_FIXED + HTTP_EMIT_CTYPE_MAX) + MULTI_TAIL <=
		       HTTP_OUT_HEAD &&
		       2u + 2u * HTTP_MAX_RANGES <= HTTP_OUT_IOV,
	       "an empty batch has room for any answer");

/* The lines every answer about a file carries: validators, Vary,
 * Cache-Control (RFC 9110 15.4.5: a 304 sends what the 200 would). */
static void put_file_fields(struct http_out *o, const struct http_server *srv,
			    const struct answer *a)
{
	char etag[HTTP_ETAG_MAX];
	size_t elen = http_file_etag(a->fa.var, etag);
	if (a->fa.var->mtime > 0) {
		char d[HTTP_DATE_LEN];
		http_date_format((uint64_t)a->fa.var->mtime, d);
		http_out_str(o, "Last-Modified: ");
		http_out_mem(o, d, HTTP_DATE_LEN);
		http_out_str(o, "\r\n");
	}
	if (elen) {
		http_out_str(o, "ETag: ");
		http_out_mem(o, etag, elen);
		http_out_str(o, "\r\n");
	}
	if (a->fa.vary)
		http_out_str(o, "Vary: Accept-Encoding\r\n");
	if (srv->cfg.cache_control && (a->fa.status == 200 || a->fa.status == 206 || a->fa.status == 304)) {
		http_out_str(o, "Cache-Control: ");
		http_out_str(o, srv->cfg.cache_control);
		http_out_str(o, "\r\n");
	}
}

static void put_conn(struct http_out *o, enum http_conn_hdr ch)
{
	if (ch == HTTP_CH_CLOSE)
		http_out_str(o, "Connection: close\r\n");
	else if (ch == HTTP_CH_KEEP_ALIVE)
		http_out_str(o, "Connection: keep-alive\r\n");
}

static void put_content_range(struct http_out *o, const struct http_range *rg, uint64_t len)
{
	http_out_str(o, "Content-Range: bytes ");
	http_out_u64(o, rg->first);
	http_out_mem(o, "-", 1);
	http_out_u64(o, rg->last);
	http_out_mem(o, "/", 1);
	http_out_u64(o, len);
	http_out_str(o, "\r\n");
}

/* Queue hbuf[from, hlen) then a body slice: small bodies are copied
 * behind the head (one contiguous piece), large ones stay slices of the
 * source. */
static void queue_body(struct http_conn *c, uint32_t from, const uint8_t *body, uint64_t blen,
		       const struct http_file *f)
{
	if (blen && blen <= HTTP_INLINE_BODY && c->hlen + blen <= HTTP_OUT_HEAD) {
		sk_memcpy(c->hbuf + c->hlen, body, blen);
		c->hlen += (uint32_t)blen;
		out_hbuf_slice(c, from);
	} else {
		out_hbuf_slice(c, from);
		if (blen)
			out_body_slice(c, body, (size_t)blen, f);
	}
}

static void count_answer(struct http_conn *c, int status)
{
	count_status(&c->srv->st, status);
	if (++c->batch > 1)
		c->srv->st.requests_pipelined++;
}

/* multipart/byteranges (RFC 9110 14.6): the part heads go into hbuf, the
 * parts stay slices of the file.  The boundary is fixed: the parts' bytes
 * are not searched for it (no server does); it is long and odd enough not
 * to be met by accident. */
static uint64_t emit_multipart(struct http_conn *c, const struct answer *a, struct http_out *o,
			       uint32_t from)
{
	const struct http_file *v = a->fa.var;
	const char *ctype = a->fa.ctype;
	/* The length first: every part head, every part, the tail. */
	uint64_t total = sizeof("\r\n--" BOUNDARY "--\r\n") - 1;
	uint8_t tmp[PART_FIXED + HTTP_EMIT_CTYPE_MAX];
	size_t ph[HTTP_MAX_RANGES];
	for (unsigned i = 0; i < a->fa.nranges; i++) {
		struct http_out t = {tmp, tmp + sizeof(tmp)};
		http_out_str(&t, "\r\n--" BOUNDARY "\r\nContent-Type: ");
		http_out_str(&t, ctype);
		http_out_str(&t, "\r\n");
		put_content_range(&t, &a->fa.rg[i], v->len);
		http_out_str(&t, "\r\n");
		ph[i] = (size_t)(t.p - tmp);
		total += ph[i] + (a->fa.rg[i].last - a->fa.rg[i].first + 1);
	}
	http_out_str(o, "Content-Type: multipart/byteranges; boundary=" BOUNDARY "\r\nContent-Length: ");
	http_out_u64(o, total);
	http_out_str(o, "\r\n");
	put_file_fields(o, c->srv, a);
	if (a->fa.coding == HTTP_CODING_GZIP)
		http_out_str(o, "Content-Encoding: gzip\r\n");
	else if (a->fa.coding == HTTP_CODING_BR)
		http_out_str(o, "Content-Encoding: br\r\n");
	put_conn(o, a->ch);
	http_out_str(o, "\r\n");
	c->hlen = (uint32_t)(o->p - c->hbuf);
	for (unsigned i = 0; i < a->fa.nranges; i++) {
		struct http_out t = {c->hbuf + c->hlen, c->hbuf + HTTP_OUT_HEAD};
		http_out_str(&t, "\r\n--" BOUNDARY "\r\nContent-Type: ");
		http_out_str(&t, ctype);
		http_out_str(&t, "\r\n");
		put_content_range(&t, &a->fa.rg[i], v->len);
		http_out_str(&t, "\r\n");
		c->hlen = (uint32_t)(t.p - c->hbuf);
		out_hbuf_slice(c, from);
		out_body_slice(c, v->data + a->fa.rg[i].first,
			       (size_t)(a->fa.rg[i].last - a->fa.rg[i].first + 1), v);
		from = c->hlen;
	}
	struct http_out t = {c->hbuf + c->hlen, c->hbuf + HTTP_OUT_HEAD};
	http_out_str(&t, "\r\n--" BOUNDARY "--\r\n");
	c->hlen = (uint32_t)(t.p - c->hbuf);
	out_hbuf_slice(c, from);
	c->srv->st.resp_multipart++;
	return total;
}

/* Queue a decided answer (answer_fits() said there is room). */
static void emit_answer(struct http_conn *c, const struct answer *a)
{
	struct http_server *srv = c->srv;
	int status = a->fa.status;
	struct answer last_one;
	if (sk_unlikely(srv->draining) && a->ch != HTTP_CH_CLOSE) {
		/* Draining: this answer ends its connection. */
		last_one = *a;
		last_one.ch = HTTP_CH_CLOSE;
		a = &last_one;
	}
	if (sk_unlikely(srv->cfg.access != NULL))
		c->lg = a->lg; /* the errors below log through respond() */
	if (status == 405) {
		/* A method we know but do not serve. */
		respond_error(c, 405, a->head_only, "Allow: GET, HEAD\r\n");
		return;
	}
	if (status == 400 || status == 414) {
		respond_error(c, status, a->head_only, NULL);
		return;
	}
	uint32_t from = c->hlen;
	struct http_out o = {c->hbuf + c->hlen, c->hbuf + HTTP_OUT_HEAD};
	http_emit_status(&o, status, srv->date);
	const struct http_file *v = a->fa.var;
	const uint8_t *body = NULL;
	uint64_t blen = 0;
	uint8_t ebody[HTTP_EMIT_ERROR_BODY_MAX];
	if (status == 206 && a->fa.nranges > 1) {
		blen = emit_multipart(c, a, &o, from);
		count_answer(c, 206);
		if (sk_unlikely(srv->cfg.access != NULL))
			log_response(c, 206, blen);
		goto last;
	}
	switch (status) {
	case 200:
	case 206:
		body = v->data;
		blen = v->len;
		http_out_str(&o, "Content-Type: ");
		http_out_str(&o, a->fa.ctype);
		http_out_str(&o, "\r\n");
		if (status == 206) {
			put_content_range(&o, &a->fa.rg[0], v->len);
			body += a->fa.rg[0].first;
			blen = a->fa.rg[0].last - a->fa.rg[0].first + 1;
		}
		http_out_str(&o, "Content-Length: ");
		http_out_u64(&o, blen);
		http_out_str(&o, "\r\n");
		if (srv->cfg.lookup) {
			/* (The built-in "/" keeps seed 000's exact head.) */
			if (a->fa.coding == HTTP_CODING_IDENTITY)
				http_out_str(&o, "Accept-Ranges: bytes\r\n");
			put_file_fields(&o, srv, a);
		}
		if (a->fa.coding == HTTP_CODING_GZIP) {
			http_out_str(&o, "Content-Encoding: gzip\r\n");
			srv->st.resp_gzip++;
		} else if (a->fa.coding == HTTP_CODING_BR) {
			http_out_str(&o, "Content-Encoding: br\r\n");
			srv->st.resp_br++;
		}
		break;
	case 304:
		/* No body, and no Content-Type / Content-Length of one. */
		put_file_fields(&o, srv, a);
		break;
	case 301: {
		const uint8_t *t = c->rbuf + a->fa.loc_off;
		http_out_str(&o, "Location: ");
		if (a->https) {
			http_out_str(&o, "https://");
			http_out_mem(&o, c->rbuf + a->host_off, a->host_len);
			if (srv->cfg.https_redirect_port != 443) {
				http_out_str(&o, ":");
				http_out_u64(&o, srv->cfg.https_redirect_port);
			}
			if (a->fa.loc_len == 0 || t[0] != '/')
				http_out_str(&o, "/");
			http_out_mem(&o, t, a->fa.loc_len);
		} else {
			http_out_mem(&o, t, a->fa.query_at);
			http_out_mem(&o, "/", 1);
			http_out_mem(&o, t + a->fa.query_at, a->fa.loc_len - a->fa.query_at);
		}
		http_out_str(&o, "\r\n");
	}
		/* fall through */
	default: /* 403 404 412 416, and the 301's short text body */
		blen = http_emit_error_body(ebody, sizeof(ebody), status);
		body = ebody;
		http_out_str(&o, "Content-Type: text/plain\r\nContent-Length: ");
		http_out_u64(&o, blen);
		http_out_str(&o, "\r\n");
		if (status == 416) {
			http_out_str(&o, "Content-Range: bytes */");
			http_out_u64(&o, v->len);
			http_out_str(&o, "\r\n");
		}
		if (status == 412 || status == 416)
			put_file_fields(&o, srv, a);
		break;
	}
	put_conn(&o, a->ch);
	http_out_str(&o, "\r\n");
	c->hlen = (uint32_t)(o.p - c->hbuf);
	queue_body(c, from, body, a->head_only ? 0 : blen,
		   status == 200 || status == 206 ? v : NULL);
	count_answer(c, status);
	if (sk_unlikely(srv->cfg.access != NULL))
		log_response(c, status, a->head_only ? 0 : blen);
last:
	/* The client asked to close: this answer is the last.  Close at once
	 * only if nothing can be left unread: no bytes behind this request (or
	 * its body), a drained socket. */
	if (a->ch == HTTP_CH_CLOSE)
		conn_last(c, c->rpos < c->rlen || c->may_read);
}

/* Send the answer now if the batch has room, else owe it: it goes first
 * after the flush. */
static void answer_now_or_owe(struct http_conn *c, const struct answer *a)
{
	if (c->niov && !answer_fits(c, a)) {
		if (&c->deferred != a)
			c->deferred = *a;
		c->owed = true;
		c->srv->st.answers_owed++;
		return;
	}
	emit_answer(c, a);
}

/* A complete head was decided into a: send it now, owe it, or (BODY)
 * send it after the body. */
static void handle_request(struct http_conn *c, struct answer *a)
{
	struct http_server *srv = c->srv;
	const struct http_req *r = &c->req;
	srv->st.requests++;

	/* Bodies are read and thrown away, to find the next request (the
	 * parser has already refused bad framing). */
	c->phase = P_IDLE;
	if (r->chunked) {
		c->body_chunked = true;
		http_chunked_init(&c->chunk, srv->cfg.max_body);
		c->phase = P_BODY;
	} else if (r->has_content_length && r->content_length) {
		c->body_left = r->content_length;
		c->phase = P_BODY;
	}
	if (c->phase == P_BODY) {
		if (a->fa.status == 301) {
			/* Its Location lives in rbuf, which reading the body
			 * would move: answer now (or first after the flush),
			 * and end the connection, lingering. */
			a->ch = HTTP_CH_CLOSE;
			conn_last(c, true);
			answer_now_or_owe(c, a);
			return;
		}
		if (a->fa.status == 206 && a->fa.nranges > 1)
			a->fa.status = 200; /* may ignore a Range (14.2): the room it needs is not kept */
		if (sk_unlikely(srv->cfg.access != NULL))
			log_ref_keep(c, &a->lg);
		c->deferred = *a;
		if (r->expect_continue && c->rpos == c->rlen) {
			/* The client waits for this before it sends the body. */
			static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
			uint32_t from = c->hlen;
			sk_memcpy(c->hbuf + c->hlen, cont, sizeof(cont) - 1);
			c->hlen += sizeof(cont) - 1;
			out_hbuf_slice(c, from);
		}
		return;
	}
	answer_now_or_owe(c, a);
}

/* BODY: skip request-body bytes in the buffer; at its end send the
 * deferred answer.  Returns true when the body is done, false if more is
 * needed or the connection ends (CLOSING).  Needs out_room(). */
static bool discard_body(struct http_conn *c)
{
	uint32_t avail = c->rlen - c->rpos;
	if (c->body_left) {
		uint32_t take = c->body_left < avail ? (uint32_t)c->body_left : avail;
		c->rpos += take;
		c->body_left -= take;
		if (c->body_left)
			return false;
	} else {
		size_t len = avail, used = 0;
		int r = http_chunked_decode(&c->chunk, c->rbuf + c->rpos, &len, &used);
		c->rpos += (uint32_t)used;
		if (r == HTTP_NEED_MORE)
			return false;
		c->body_chunked = false;
		if (r != HTTP_DONE) {
			c->srv->st.parse_err[-r < HTTP_NERR ? -r : 0]++;
			if (sk_unlikely(c->srv->cfg.access != NULL))
				c->lg = c->deferred.lg; /* the 400 answers the request whose body it is */
			int status = http_err_status(r);
			respond_error(c, status ? status : 400, false, NULL);
			c->rpos = c->rlen;
			return false;
		}
	}
	c->srv->st.bodies_discarded++;
	c->phase = P_IDLE;
	answer_now_or_owe(c, &c->deferred);
	return true;
}

/* Answer every complete request in the buffer, in order, into one batch. */
static void process(struct http_conn *c, sk_time_ns now)
{
	struct http_server *srv = c->srv;
	if (c->owed) {
		if (c->niov && !answer_fits(c, &c->deferred))
			return;
		c->owed = false;
		emit_answer(c, &c->deferred);
	}
	while (c->rpos < c->rlen && c->phase != P_CLOSING && !c->owed) {
		if (!out_room(c))
			return; /* flush this batch first; conn_advance comes back */
		if (c->phase == P_BODY) {
			if (!discard_body(c))
				return;
			continue;
		}
		const uint8_t *p = c->rbuf + c->rpos;
		uint64_t t0 = sk_trace_begin(srv->cfg.trace);
		int r = http_parse_head(&c->req, p, c->rlen - c->rpos);
		if (r == HTTP_NEED_MORE) {
			if (c->phase == P_IDLE) {
				/* The first bytes of a request start its clock. */
				c->phase = P_HEAD;
				set_deadline(c, now + srv->cfg.header_timeout, D_HEADER);
			}
			return;
		}
		if (r < 0) {
			srv->st.parse_err[-r < HTTP_NERR ? -r : 0]++;
			if (sk_unlikely(srv->cfg.access != NULL))
				log_ref_raw(&c->lg, c->rbuf, c->rpos, c->rlen);
			int status = http_err_status(r);
			respond_error(c, status ? status : 400, false, NULL);
			c->rpos = c->rlen; /* nothing after a bad head can be framed */
			return;
		}
		if (t0 && !c->t_req)
			c->t_req = t0; /* a complete head: its parse starts the sample */
		struct answer a;
		decide(srv, &c->req, p, &a);
		/* The Location of a 301 is kept as an offset into rbuf. */
		a.fa.loc_off += c->rpos;
		if (sk_unlikely(srv->cfg.access != NULL))
			log_ref_request(&a.lg, &c->req, p, c->rpos);
		c->rpos += (uint32_t)r;
		handle_request(c, &a);
		http_req_init(&c->req, srv->cfg.max_body);
	}
	if (c->phase == P_CLOSING)
		c->rpos = c->rlen;
}

/* Move the unprocessed tail to the front so a read always has room. */
static void compact(struct http_conn *c)
{
	if (c->rpos == c->rlen) {
		c->rpos = c->rlen = 0;
	} else if (c->rpos) {
		sk_memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
		c->rlen -= c->rpos;
		c->rpos = 0;
	}
}

/* Move the connection forward as far as the socket and the peer allow;
 * say why it stopped.  After R_GONE, c is free (or already reused). */
static enum conn_rest conn_advance(struct http_conn *c, sk_time_ns now)
{
	struct http_server *srv = c->srv;
	for (;;) {
		if (c->phase == P_LINGER)
			return linger_drain(c, now);
		if (c->niov) {
			int r = conn_flush(c);
			if (r < 0) {
				conn_free(c, now);
				return R_GONE;
			}
			if (r == 0)
				return R_WRITE;
		}
		if (c->owed) {
			process(c, now); /* the batch is empty: the owed answer fits */
			continue;
		}
		if (c->phase == P_CLOSING) {
			if (!c->linger_after) {
				conn_free(c, now);
				return R_GONE;
			}
			conn_linger(c, now);
			return R_LINGER;
		}
		if (c->rpos < c->rlen) {
			process(c, now);
			if (c->niov || c->phase == P_CLOSING)
				continue;
		}
		if (!c->may_read)
			return R_INPUT;
		conn_buf_take(c); /* given back at the rest if the read brings nothing */
		compact(c);
		size_t space = HTTP_RBUF_SIZE - c->rlen;
		if (space == 0) {
			/* Unreachable: the parser decides within HTTP_HEAD_MAX bytes
			 * and bodies are consumed as they come.  Fail safe. */
			respond_error(c, 431, false, NULL);
			c->rpos = c->rlen;
			continue;
		}
		long n = loop_read(srv->loop, c->sock, c->rbuf + c->rlen, space);
		if (n > 0) {
			c->rlen += (uint32_t)n;
			if ((size_t)n < space)
				c->may_read = false; /* drained: the next arrival is a new edge */
			continue;
		}
		if (n == -SK_EAGAIN) {
			c->may_read = false;
			continue;
		}
		/* End of stream or an error: nothing more will come, and nothing
		 * is owed (the output was flushed above). */
		if (n == 0 && c->phase == P_HEAD && c->rlen)
			srv->st.eof_in_head++;
		if (n < 0)
			srv->st.read_errors++;
		conn_free(c, now);
		return R_GONE;
	}
}

static void conn_run(struct http_conn *c, sk_time_ns now)
{
	enum conn_rest why = conn_advance(c, now);
	if (why == R_GONE)
		return;
	if (why == R_WRITE) {
		/* A client that stops reading gets keepalive_timeout from the
		 * last progress. */
		set_deadline(c, now + c->srv->cfg.keepalive_timeout, D_WRITE);
	} else if (why == R_INPUT) {
		wait_input_deadline(c, now);
	}
	conn_buf_release(c); /* no-op unless nothing is pending: then hold nothing */
	conn_assert(c);
}

static void conn_on_event(void *user, int sock, unsigned events, sk_time_ns now)
{
	struct http_conn *c = user;
	if (c->phase == P_FREE || c->sock != sock)
		return; /* stale: this state was freed (and maybe reused) */
	if (events & (LOOP_EV_READ | LOOP_EV_ERROR))
		c->may_read = true;
	conn_run(c, now);
}

static void conn_on_timer(struct loop_timer *t, sk_time_ns now)
{
	struct http_conn *c = container_of(t, struct http_conn, timer);
	struct http_server *srv = c->srv;
	if (c->phase == P_FREE)
		return;
	if (now < c->deadline) {
		/* Fired at an old, earlier deadline: re-arm to the true one. */
		srv->st.timer_rearms++;
		srv_timer_set(srv, &c->timer, c->deadline);
		return;
	}
	switch (c->dkind) {
	case D_HEADER:
	case D_BODY:
		srv->st.timeout_header++;
		/* 408, then a lingering close.  The output is empty here: a
		 * pending write would have set D_WRITE. */
		conn_buf_take(c); /* the 408's head goes into hbuf */
		if (c->dkind == D_BODY && srv->cfg.access)
			c->lg = c->deferred.lg; /* the request whose body stopped */
		respond_error(c, 408, false, NULL);
		c->rpos = c->rlen;
		conn_run(c, now);
		return;
	case D_IDLE:
		if (srv->draining)
			srv->st.drain_idle_closed++;
		else
			srv->st.timeout_idle++;
		break;
	case D_WRITE:
		srv->st.timeout_write++;
		break;
	default:
		srv->st.timeout_linger++;
		break;
	}
	conn_free(c, now);
}

static int conn_open(struct http_server *srv, int sock, const struct loop_peer *peer,
		     sk_time_ns now)
{
	struct http_conn *c = conn_alloc(srv);
	if (!c)
		return -SK_ENOMEM;
	c->srv = srv;
	c->timer = (struct loop_timer){.fn = conn_on_timer};
	c->sock = sock;
	c->phase = P_HEAD; /* a new connection owes us a request head */
	c->may_read = false;
	c->linger_after = c->body_chunked = false;
	c->owed = false;
	c->batch = 0;
	c->body_left = 0;
	c->rbuf = c->hbuf = NULL; /* taken when the first bytes are read */
	c->rpos = c->rlen = 0;
	c->niov = c->iov_i = 0;
	c->hlen = 0;
	c->t_accept = sk_trace_begin(srv->cfg.trace);
	c->t_req = 0;
	c->peer = *peer;
	c->lg = (struct log_ref){0};
	http_req_init(&c->req, srv->cfg.max_body);
	srv->nconns++;
	srv->st.conns_accepted++;
	set_deadline(c, now + srv->cfg.header_timeout, D_HEADER);
	int r = loop_watch(srv->loop, sock, conn_on_event, c);
	if (r < 0) {
		conn_free(c, now);
		return r;
	}
	conn_assert(c);
	return 0;
}

/* All states are taken: answer 503 and close.  What the client already
 * sent is read first, so the close is a FIN, not a RST that could
 * destroy the answer. */
static void refuse(struct http_server *srv, int sock, const struct loop_peer *peer)
{
	uint8_t head[HTTP_EMIT_HEAD_MAX + HTTP_EMIT_ERROR_BODY_MAX];
	long got = loop_read(srv->loop, sock, srv->path, sizeof(srv->path));
	uint8_t body[HTTP_EMIT_ERROR_BODY_MAX];
	size_t blen = http_emit_error_body(body, sizeof(body), 503);
	size_t hlen = http_emit_head(head, HTTP_EMIT_HEAD_MAX, 503, srv->date, "text/plain", blen,
				     HTTP_CH_CLOSE, NULL);
	sk_memcpy(head + hlen, body, blen);
	loop_write(srv->loop, sock, head, hlen + blen);
	loop_close(srv->loop, sock);
	srv->st.conns_refused++;
	srv->st.resp_503++;
	if (sk_unlikely(srv->cfg.access != NULL)) {
		/* The first line of what it sent, if anything. */
		const uint8_t *q = (const uint8_t *)srv->path;
		uint32_t n = 0, max = got > 0 ? (uint32_t)got : 0;
		while (n < max && n <= HTTP_ACCESS_LINE_MAX && q[n] != '\r' && q[n] != '\n')
			n++;
		struct http_access rec = {.addr = peer->addr, .port = peer->port, .status = 503,
					  .body_bytes = blen, .line = {max ? q : NULL, n}};
		srv->cfg.access(srv->cfg.access_ctx, &rec);
	}
}

/* Edge contract: take every pending connection. */
static void srv_accept_all(struct http_server *srv, sk_time_ns now)
{
	if (srv->lsock < 0)
		return;
	for (;;) {
		struct loop_peer peer;
		int s = loop_accept(srv->loop, srv->lsock, &peer);
		if (s == -SK_EAGAIN)
			return;
		if (s < 0) {
			/* Out of descriptors or memory: conn_free looks again. */
			srv->st.accept_errors++;
			srv->accept_blocked = true;
			return;
		}
		if (!srv->free_list && srv->hwm == srv->cfg.max_conns) {
			refuse(srv, s, &peer);
			continue;
		}
		conn_open(srv, s, &peer, now);
	}
}

static void srv_on_accept(void *user, int sock, unsigned events, sk_time_ns now)
{
	(void)sock;
	(void)events;
	srv_accept_all(user, now);
}

int http_server_start(struct http_server *srv)
{
	int s = loop_listen(srv->loop, &(struct sk_addr){0}, srv->cfg.port, srv->cfg.backlog);
	if (s < 0)
		return s;
	srv->lsock = s;
	int r = loop_watch(srv->loop, s, srv_on_accept, srv);
	if (r < 0) {
		loop_close(srv->loop, s);
		srv->lsock = -1;
		return r;
	}
	return 0;
}

void http_server_stop(struct http_server *srv)
{
	sk_time_ns now = loop_now(srv->loop);
	/* A drain cut short (its timeout, SIGINT) is not a drain done: its
	 * callback, whose context may be gone, is not called. */
	srv->drain_done = NULL;
	if (srv->lsock >= 0) {
		loop_close(srv->loop, srv->lsock);
		srv->lsock = -1;
	}
	srv->accept_blocked = false;
	for (uint32_t i = 0; i < srv->hwm; i++)
		if (srv->conns[i].phase != P_FREE)
			conn_free(&srv->conns[i], now);
}

void http_server_drain(struct http_server *srv, sk_time_ns now, void (*done)(void *ctx),
		       void *ctx)
{
	if (srv->draining)
		return;
	srv_accept_all(srv, now);
	if (srv->lsock >= 0) {
		loop_close(srv->loop, srv->lsock);
		srv->lsock = -1;
	}
	srv->accept_blocked = false;
	srv->draining = true;
	for (uint32_t i = 0; i < srv->hwm; i++) {
		struct http_conn *c = &srv->conns[i];
		/* Idle: between requests with nothing pending, or accepted with
		 * no byte yet (neither holds a buffer).  Lazy set_deadline: only
		 * an earlier deadline moves. */
		if ((c->phase == P_IDLE || c->phase == P_HEAD) && !c->rbuf)
			set_deadline(c, now + HTTP_DRAIN_IDLE_GRACE, D_IDLE);
	}
	if (!srv->nconns) {
		done(ctx);
		return;
	}
	srv->drain_done = done;
	srv->drain_ctx = ctx;
}

void http_server_stats(const struct http_server *srv,
		       void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
#define HTTP_STAT_PRINT(n) fn(ctx, "http." #n, srv->st.n);
	HTTP_SERVER_STATS(HTTP_STAT_PRINT)
#undef HTTP_STAT_PRINT
	fn(ctx, "http.conns_open", srv->nconns);
	/* Parse errors by name, only those that happened. */
	char name[64];
	for (int i = 1; i < HTTP_NERR; i++) {
		if (!srv->st.parse_err[i])
			continue;
		const char *e = http_err_name(-i);
		size_t k = 0;
		for (const char *q = "http.parse_err."; *q; q++)
			name[k++] = *q;
		for (; *e && k + 1 < sizeof(name); e++)
			name[k++] = *e;
		name[k] = 0;
		fn(ctx, name, srv->st.parse_err[i]);
	}
}

int http_server_check(const struct http_server *srv)
{
	const uint32_t max = srv->cfg.max_conns;
	const uint8_t *bufs_end = srv->bufs + (size_t)max * HTTP_IOBUF_SIZE;
	uint32_t live = 0, held = 0, nfree = 0, nbuf_free = 0;
	SK_CHECK(srv->hwm <= max && srv->buf_hwm <= max);
	for (uint32_t i = 0; i < srv->hwm; i++) {
		const struct http_conn *c = &srv->conns[i];
		int r = conn_check(c);
		if (r)
			return r;
		if (c->phase == P_FREE)
			continue;
		live++;
		if (c->rbuf) {
			held++;
			SK_CHECK(c->rbuf >= srv->bufs && c->rbuf < bufs_end);
			SK_CHECK((size_t)(c->rbuf - srv->bufs) % HTTP_IOBUF_SIZE == 0);
		}
	}
	SK_CHECK(live == srv->nconns && held == srv->bufs_held);
	for (const struct http_conn *c = srv->free_list; c; c = c->next_free) {
		SK_CHECK(++nfree <= srv->hwm && c->phase == P_FREE);
	}
	SK_CHECK(nfree + live == srv->hwm);
	/* Every buffer below buf_hwm is held or on the free list: none lost. */
	for (const uint8_t *b = srv->buf_free; b;) {
		SK_CHECK(++nbuf_free <= srv->buf_hwm);
		SK_CHECK(b >= srv->bufs && b < bufs_end);
		SK_CHECK((size_t)(b - srv->bufs) % HTTP_IOBUF_SIZE == 0);
		const uint8_t *next;
		sk_memcpy(&next, b, sizeof(next)); /* the link in the free buffer */
		b = next;
	}
	SK_CHECK(nbuf_free + held == srv->buf_hwm);
	return 0;
}
