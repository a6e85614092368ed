/* parser.c — the HTTP/1.1 request head parser; the rules are in parser.h.
 *
 * Shape: a resumable state machine whose states are the parts of a head
 * (method, target, version, field name, OWS, value, LF).  Inside a state a
 * tight loop runs over bytes of one class (one table load and test per
 * byte, no calls); the loop ends on the first byte of another class, which
 * decides the next state or the error, or at the end of the data, where the
 * state and position are saved in the request and HTTP_NEED_MORE returned.
 * The next call jumps straight back into that state, so no byte is read
 * twice (apart from the at most 10 bytes of the version).  Work per field
 * (which header is it, what does it mean) happens once its line is
 * complete, in on_field().
 *
 * Limits are enforced by position, not by how the data arrived: a loop never
 * runs past the offset its section may not reach (lim), and reaching it is
 * the error.  So a head fed in pieces gets exactly the same verdict, at the
 * same byte, as the head fed at once; the unit tests and the fuzz target
 * check that.
 */
#include "parser.h"

/* Generated from the definitions next to HTTP_C_* in parser.h; the unit test
 * rebuilds it from those definitions and compares. */
const uint8_t http_char_class[256] = {
	/* 00 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 10 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 20 */ 0x0c, 0x27, 0x06, 0x07, 0x27, 0x27, 0x27, 0x27, 0x26, 0x26, 0x27, 0x67, 0x26, 0x67, 0x67, 0x06,
	/* 30 */ 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x26, 0x26, 0x06, 0x26, 0x06, 0x06,
	/* 40 */ 0x06, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67,
	/* 50 */ 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x26, 0x06, 0x26, 0x07, 0x27,
	/* 60 */ 0x07, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67,
	/* 70 */ 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x67, 0x06, 0x07, 0x06, 0x27, 0x00,
	/* 80 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* 90 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* a0 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* b0 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* c0 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* d0 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* e0 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
	/* f0 */ 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
};

#define CLS http_char_class

/* Positions are uint32_t and slices uint16_t: a head never needs more than
 * HTTP_HEAD_MAX bytes, so the parser looks at no more than that (and the
 * cap keeps every offset small whatever len the caller passes). */
_Static_assert(HTTP_HEAD_MAX < 65535u, "slices are 16-bit");
#define SCAN_CAP 65535u

enum phase {
	PH_START,   /* skipping empty lines; next: the method */
	PH_METHOD,  /* in the method token (mark: its start) */
	PH_TARGET,  /* in the target (mark: its start) */
	PH_VERSION, /* at the version (pos: its first byte) */
	PH_FIELD,   /* at the start of a field line or of the final CRLF */
	PH_NAME,    /* in a field name (mark: its start) */
	PH_OWS,     /* after the colon */
	PH_VALUE,   /* in a field value (mark: its start) */
	PH_LF,      /* after a field line's CR */
	PH_DONE,
};

void http_req_init(struct http_req *r, uint64_t max_body)
{
	/* Only the fixed part: the 800-byte header array is written as
	 * fields arrive and read only below nheaders. */
	sk_memset(r, 0, offsetof(struct http_req, headers));
	r->max_body = max_body;
}

/* Indexed by -err. */
static const struct {
	uint16_t status;
	const char *name;
} err_info[HTTP_NERR] = {
	[0] = { 0, "ok" },
	[-HTTP_NEED_MORE] = { 0, "need_more" },
	[-HTTP_E_LINE] = { 400, "request_line" },
	[-HTTP_E_METHOD] = { 400, "method" },
	[-HTTP_E_TARGET] = { 400, "target" },
	[-HTTP_E_VERSION] = { 400, "version" },
	[-HTTP_E_VERSION_UNSUP] = { 505, "version_unsupported" },
	[-HTTP_E_BARE_CR] = { 400, "bare_cr" },
	[-HTTP_E_BARE_LF] = { 400, "bare_lf" },
	[-HTTP_E_NUL] = { 400, "nul" },
	[-HTTP_E_CTL] = { 400, "ctl" },
	[-HTTP_E_FOLD] = { 400, "obs_fold" },
	[-HTTP_E_NAME] = { 400, "field_name" },
	[-HTTP_E_NAME_WS] = { 400, "field_name_ws" },
	[-HTTP_E_HOST_MISSING] = { 400, "host_missing" },
	[-HTTP_E_HOST_DUP] = { 400, "host_dup" },
	[-HTTP_E_HOST_BAD] = { 400, "host_bad" },
	[-HTTP_E_CL_BAD] = { 400, "cl_bad" },
	[-HTTP_E_CL_DUP] = { 400, "cl_dup" },
	[-HTTP_E_CL_TE] = { 400, "cl_te" },
	[-HTTP_E_TE_BAD] = { 400, "te_bad" },
	[-HTTP_E_TE_HTTP10] = { 400, "te_http10" },
	[-HTTP_E_TE_UNSUP] = { 501, "te_unsupported" },
	[-HTTP_E_CONNECTION] = { 400, "connection" },
	[-HTTP_E_EMPTY_LINES] = { 400, "empty_lines" },
	[-HTTP_E_URI_TOO_LONG] = { 414, "uri_too_long" },
	[-HTTP_E_FIELDS_TOO_LARGE] = { 431, "fields_too_large" },
	[-HTTP_E_TOO_MANY_FIELDS] = { 431, "too_many_fields" },
	[-HTTP_E_METHOD_UNKNOWN] = { 501, "method_unknown" },
	[-HTTP_E_BODY_TOO_LARGE] = { 413, "body_too_large" },
	[-HTTP_E_CHUNK_SIZE] = { 400, "chunk_size" },
	[-HTTP_E_CHUNK_EXT] = { 400, "chunk_ext" },
	[-HTTP_E_CHUNK_CRLF] = { 400, "chunk_crlf" },
	[-HTTP_E_TRAILER_TOO_LARGE] = { 431, "trailer_too_large" },
};

int http_err_status(int err)
{
	if (err >= 0 || err <= -HTTP_NERR)
		return 0;
	return err_info[-err].status;
}

const char *http_err_name(int err)
{
	if (err >= 0)
		return "ok";
	if (err <= -HTTP_NERR)
		return "unknown";
	return err_info[-err].name;
}

static const char *const method_names[] = {
	[HTTP_UNKNOWN] = "UNKNOWN", [HTTP_GET] = "GET",         [HTTP_HEAD] = "HEAD",
	[HTTP_POST] = "POST",       [HTTP_PUT] = "PUT",         [HTTP_DELETE] = "DELETE",
	[HTTP_OPTIONS] = "OPTIONS", [HTTP_PATCH] = "PATCH",     [HTTP_CONNECT] = "CONNECT",
	[HTTP_TRACE] = "TRACE",     [HTTP_PURGE] = "PURGE",
};

const char *http_method_name(enum http_method m)
{
	if ((unsigned)m >= SK_ARRAY_LEN(method_names))
		return "UNKNOWN";
	return method_names[m];
}

/* Compare n bytes with a lower-case literal, ignoring case (ASCII only:
 * field names are tokens, and RFC 9110 5.1 makes them case-insensitive). */
static inline bool eq_lower(const uint8_t *p, const char *lit, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if ((uint8_t)(c - 'A') < 26u)
			c |= 0x20;
		if (c != (uint8_t)lit[i])
			return false;
	}
	return true;
}

bool http_slice_eq_lower(const uint8_t *buf, struct http_slice s, const char *lit, size_t n)
{
	return s.len == n && eq_lower(buf + s.off, lit, n);
}

const struct http_header *http_req_find(const struct http_req *r, const uint8_t *buf,
					const char *name, size_t n)
{
	for (unsigned i = 0; i < r->nheaders; i++)
		if (http_slice_eq_lower(buf, r->headers[i].name, name, n))
			return &r->headers[i];
	return NULL;
}

/* Methods are case-sensitive (RFC 9110 9.1). */
static uint8_t method_of(const uint8_t *m, uint32_t n)
{
#define IS(lit) (sk_memcmp(m, lit, sizeof(lit) - 1) == 0)
	switch (n) {
	case 3:
		return IS("GET") ? HTTP_GET : IS("PUT") ? HTTP_PUT : HTTP_UNKNOWN;
	case 4:
		return IS("HEAD") ? HTTP_HEAD : IS("POST") ? HTTP_POST : HTTP_UNKNOWN;
	case 5:
		return IS("PATCH")   ? HTTP_PATCH
		       : IS("TRACE") ? HTTP_TRACE
		       : IS("PURGE") ? HTTP_PURGE
				     : HTTP_UNKNOWN;
	case 6:
		return IS("DELETE") ? HTTP_DELETE : HTTP_UNKNOWN;
	case 7:
		return IS("OPTIONS") ? HTTP_OPTIONS : IS("CONNECT") ? HTTP_CONNECT : HTTP_UNKNOWN;
	}
	return HTTP_UNKNOWN;
#undef IS
}

/* The target's form (RFC 9112 3.2), checked once it is complete: the bytes
 * were already checked by the scan loop. */
static int check_target(const struct http_req *r, const uint8_t *t, uint32_t n)
{
	if (t[0] == '/')
		return r->method == HTTP_CONNECT ? HTTP_E_TARGET : 0;
	if (t[0] == '*')
		return n == 1 && r->method == HTTP_OPTIONS ? 0 : HTTP_E_TARGET;
	if (r->method == HTTP_CONNECT)
		return 0; /* authority-form: host:port */
	/* absolute-form: scheme ":" ..., the scheme starting with ALPHA. */
	if (!((t[0] | 0x20) >= 'a' && (t[0] | 0x20) <= 'z'))
		return HTTP_E_TARGET;
	for (uint32_t i = 1; i < n; i++) {
		if (t[i] == ':')
			return 0;
		if (!(CLS[t[i]] & HTTP_C_SCHEME))
			return HTTP_E_TARGET;
	}
	return HTTP_E_TARGET;
}

/* The version "HTTP/" DIGIT "." DIGIT CRLF, of which avail (<= 10) bytes
 * are here.  Checked byte by byte in order, so a prefix that is already
 * wrong is rejected at once, with the same error a complete one gets. */
static int check_version(const uint8_t *v, uint32_t avail)
{
	static const char want[] = "HTTP/1.1\r\n";
	for (uint32_t i = 0; i < avail; i++) {
		uint8_t c = v[i];
		if (i == 5 || i == 7) {
			if (c < '0' || c > '9')
				return HTTP_E_VERSION;
		} else if (c != (uint8_t)want[i]) {
			if (i == 8) /* "HTTP/1.1 ", "HTTP/1.1\n", "HTTP/1.10" */
				return c == '\n' ? HTTP_E_BARE_LF :
				       c == ' ' ? HTTP_E_LINE : HTTP_E_VERSION;
			if (i == 9)
				return HTTP_E_BARE_CR;
			if (i == 0 && c == ' ') /* "GET /  HTTP/1.1" */
				return HTTP_E_LINE;
			return HTTP_E_VERSION;
		}
	}
	return 0;
}

/* Walk a comma-separated list (RFC 9110 5.6.1) of tokens in the value vs,
 * running body with tok/tlen set to each element.  Empty elements are
 * skipped, as 5.6.1.2 asks; an element that is not one token makes the
 * enclosing function return bad.  A macro so the body can return too. */
#define FOR_EACH_TOKEN(buf, vs, bad, tok, tlen, body)                             \
	do {                                                                      \
		const uint8_t *v_ = (buf) + (vs).off, *e_ = v_ + (vs).len;        \
		while (v_ < e_) {                                                 \
			while (v_ < e_ && (*v_ == ',' || (CLS[*v_] & HTTP_C_WS))) \
				v_++;                                             \
			const uint8_t *s_ = v_;                                   \
			while (v_ < e_ && (CLS[*v_] & HTTP_C_TOKEN))              \
				v_++;                                             \
			if (v_ == s_) {                                           \
				if (v_ < e_)                                      \
					return (bad);                             \
				break;                                            \
			}                                                         \
			const uint8_t *tok = s_;                                  \
			size_t tlen = (size_t)(v_ - s_);                          \
			body;                                                     \
			while (v_ < e_ && (CLS[*v_] & HTTP_C_WS))                 \
				v_++;                                             \
			if (v_ < e_ && *v_ != ',')                                \
				return (bad);                                     \
		}                                                                 \
	} while (0)

static int on_content_length(struct http_req *r, const uint8_t *buf, struct http_slice v)
{
	if (r->has_content_length)
		return HTTP_E_CL_DUP;
	/* 18 digits cannot overflow 64 bits; nobody sends a longer one. */
	if (v.len == 0 || v.len > 18)
		return HTTP_E_CL_BAD;
	uint64_t n = 0;
	for (unsigned i = 0; i < v.len; i++) {
		unsigned d = (unsigned)buf[v.off + i] - '0';
		if (d > 9)
			return HTTP_E_CL_BAD;
		n = n * 10 + d;
	}
	r->has_content_length = true;
	r->content_length = n;
	return 0;
}

static int on_transfer_encoding(struct http_req *r, const uint8_t *buf, struct http_slice v)
{
	if (r->version == 10)
		return HTTP_E_TE_HTTP10;
	r->te_seen = true;
	FOR_EACH_TOKEN(buf, v, HTTP_E_TE_BAD, t, n, {
		if (r->chunked) /* something after chunked, or chunked twice */
			return HTTP_E_TE_BAD;
		if (n == 7 && eq_lower(t, "chunked", 7))
			r->chunked = true;
		else
			r->te_other = true;
	});
	return 0;
}

static int on_connection(struct http_req *r, const uint8_t *buf, struct http_slice v)
{
	FOR_EACH_TOKEN(buf, v, HTTP_E_CONNECTION, t, n, {
		if (n == 5 && eq_lower(t, "close", 5))
			r->conn_close = true;
		else if (n == 10 && eq_lower(t, "keep-alive", 10))
			r->conn_keep_alive = true;
		else if (n == 7 && eq_lower(t, "upgrade", 7))
			r->conn_upgrade = true;
	});
	return 0;
}

static int on_host(struct http_req *r, const uint8_t *buf, struct http_slice v)
{
	if (r->has_host)
		return HTTP_E_HOST_DUP;
	r->has_host = true;
	r->host = v;
	for (unsigned i = 0; i < v.len; i++)
		if (!(CLS[buf[v.off + i]] & HTTP_C_HOST))
			return HTTP_E_HOST_BAD;
	return 0;
}

/* A complete field line: the few names that change how the message is
 * framed or answered.  Dispatch on the length first, so most fields cost
 * one switch. */
static int on_field(struct http_req *r, const uint8_t *buf, const struct http_header *h)
{
	const uint8_t *nm = buf + h->name.off;
	switch (h->name.len) {
	case 4:
		if (eq_lower(nm, "host", 4))
			return on_host(r, buf, h->value);
		break;
	case 6:
		if (eq_lower(nm, "expect", 6)) {
			if (http_slice_eq_lower(buf, h->value, "100-continue", 12))
				r->expect_continue = true;
			else
				r->expect_other = true;
		}
		break;
	case 10:
		if (eq_lower(nm, "connection", 10))
			return on_connection(r, buf, h->value);
		break;
	case 14:
		if (eq_lower(nm, "content-length", 14))
			return on_content_length(r, buf, h->value);
		break;
	case 17:
		if (eq_lower(nm, "transfer-encoding", 17))
			return on_transfer_encoding(r, buf, h->value);
		break;
	}
	return 0;
}

/* The head is complete and every line was good: the facts that need all
 * of it.  Order: framing errors (400) before what we cannot do (501)
 * before what we will not take (413). */
static int finish(struct http_req *r)
{
	if (r->version == 11 && !r->has_host)
		return HTTP_E_HOST_MISSING;
	if (r->te_seen) {
		if (r->has_content_length)
			return HTTP_E_CL_TE;
		if (!r->chunked)
			return HTTP_E_TE_BAD;
		if (r->te_other)
			return HTTP_E_TE_UNSUP;
	}
	if (r->method == HTTP_PURGE && !r->accept_purge)
		r->method = HTTP_UNKNOWN; /* not this embedder's method */
	if (r->method == HTTP_UNKNOWN)
		return HTTP_E_METHOD_UNKNOWN;
	if (r->has_content_length && r->content_length > r->max_body)
		return HTTP_E_BODY_TOO_LARGE;
	if (r->version == 11)
		r->keep_alive = !r->conn_close;
	else
		r->keep_alive = r->conn_keep_alive && !r->conn_close;
	return 0;
}

static inline struct http_slice slice(uint32_t from, uint32_t to)
{
	return (struct http_slice){ (uint16_t)from, (uint16_t)(to - from) };
}

/* The error for an unexpected byte c where dflt would be the general one:
 * NUL and bare LF get their own names wherever they are found. */
static inline int bad_byte(uint8_t c, int dflt)
{
	return c == 0 ? HTTP_E_NUL : c == '\n' ? HTTP_E_BARE_LF : dflt;
}

int http_parse_head(struct http_req *r, const uint8_t *buf, size_t len)
{
	if (r->err != 0)
		return r->err;
	if (r->phase == PH_DONE)
		return r->head_len;

	uint32_t n = len > SCAN_CAP ? SCAN_CAP : (uint32_t)len;
	uint32_t p = r->pos, mark = r->mark, lim = r->lim, stop;
	/* Fewer bytes than last time breaks the contract in parser.h; say
	 * "more" rather than read where the buffer no longer is. */
	if (n < p)
		return HTTP_NEED_MORE;
	uint8_t phase = r->phase, c;
	struct http_header *h = &r->headers[r->nheaders < HTTP_MAX_FIELDS ? r->nheaders : 0];
	int err;

	switch (phase) {
	case PH_START: goto start;
	case PH_METHOD: goto method;
	case PH_TARGET: goto target;
	case PH_VERSION: goto version;
	case PH_FIELD: goto field;
	case PH_NAME: goto name;
	case PH_OWS: goto ows;
	case PH_VALUE: goto value;
	case PH_LF: goto lf;
	default: err = HTTP_E_LINE; goto fail; /* a corrupt struct, not input */
	}

start:
	phase = PH_START;
	for (;;) {
		if (p >= n)
			goto more;
		c = buf[p];
		if (c != '\r')
			break;
		if (p + 1 >= n)
			goto more;
		if (buf[p + 1] != '\n') {
			err = HTTP_E_BARE_CR;
			goto fail;
		}
		if (++r->empty_lines > HTTP_MAX_EMPTY_LINES) {
			err = HTTP_E_EMPTY_LINES;
			goto fail;
		}
		p += 2;
	}
	mark = p;
	lim = p + HTTP_MAX_REQUEST_LINE; /* where the CR must be, at the latest */

method:
	phase = PH_METHOD;
	stop = n < lim ? n : lim;
	while (p < stop && (CLS[buf[p]] & HTTP_C_TOKEN))
		p++;
	if (p == stop) {
		if (stop == lim) {
			err = HTTP_E_URI_TOO_LONG;
			goto fail;
		}
		goto more;
	}
	if (buf[p] != ' ' || p == mark) {
		c = buf[p];
		err = bad_byte(c, c == '\r' ? HTTP_E_LINE : HTTP_E_METHOD);
		goto fail;
	}
	r->method_s = slice(mark, p);
	r->method = method_of(buf + mark, p - mark);
	mark = ++p;

target:
	phase = PH_TARGET;
	stop = n < lim ? n : lim;
	while (p < stop && (CLS[buf[p]] & HTTP_C_TARGET))
		p++;
	if (p == stop) {
		if (stop == lim) {
			err = HTTP_E_URI_TOO_LONG;
			goto fail;
		}
		goto more;
	}
	c = buf[p];
	if (c != ' ' || p == mark) {
		err = bad_byte(c, c == '\r' || c == ' ' ? HTTP_E_LINE : HTTP_E_TARGET);
		goto fail;
	}
	r->target = slice(mark, p);
	if ((err = check_target(r, buf + mark, p - mark)) != 0)
		goto fail;
	p++;

version:
	phase = PH_VERSION;
	if (p + 8 > lim) { /* no room for the version before the CR */
		err = HTTP_E_URI_TOO_LONG;
		goto fail;
	}
	if ((err = check_version(buf + p, SK_MIN(n - p, 10u))) != 0)
		goto fail;
	if (n - p < 10)
		goto more;
	if (buf[p + 5] != '1') {
		err = HTTP_E_VERSION_UNSUP;
		goto fail;
	}
	r->version = buf[p + 7] == '0' ? 10 : 11;
	p += 10;
	lim = p + HTTP_MAX_FIELDS_BYTES; /* no field byte may sit at lim or later */

field:
	phase = PH_FIELD;
	if (p >= n)
		goto more;
	c = buf[p];
	if (c == '\r') {
		if (p + 1 >= n)
			goto more;
		if (buf[p + 1] != '\n') {
			err = HTTP_E_BARE_CR;
			goto fail;
		}
		p += 2;
		goto done;
	}
	if (p >= lim) {
		err = HTTP_E_FIELDS_TOO_LARGE;
		goto fail;
	}
	if (r->nheaders >= HTTP_MAX_FIELDS) {
		err = HTTP_E_TOO_MANY_FIELDS;
		goto fail;
	}
	if (CLS[c] & HTTP_C_WS) {
		err = HTTP_E_FOLD;
		goto fail;
	}
	h = &r->headers[r->nheaders];
	mark = p;

name:
	phase = PH_NAME;
	stop = n < lim ? n : lim;
	while (p < stop && (CLS[buf[p]] & HTTP_C_TOKEN))
		p++;
	if (p == stop) {
		if (stop == lim) {
			err = HTTP_E_FIELDS_TOO_LARGE;
			goto fail;
		}
		goto more;
	}
	c = buf[p];
	if (c != ':' || p == mark) {
		err = bad_byte(c, (CLS[c] & HTTP_C_WS) ? HTTP_E_NAME_WS : HTTP_E_NAME);
		goto fail;
	}
	h->name = slice(mark, p);
	p++;

ows:
	phase = PH_OWS;
	stop = n < lim ? n : lim;
	while (p < stop && (CLS[buf[p]] & HTTP_C_WS))
		p++;
	if (p == stop) {
		if (stop == lim) {
			err = HTTP_E_FIELDS_TOO_LARGE;
			goto fail;
		}
		goto more;
	}
	mark = p;

value:
	phase = PH_VALUE;
	stop = n < lim ? n : lim;
	/* The hot loop: most bytes of a head are field values. */
	while (p + 4 <= stop && (CLS[buf[p]] & CLS[buf[p + 1]] & CLS[buf[p + 2]] &
				 CLS[buf[p + 3]] & HTTP_C_VALUE))
		p += 4;
	while (p < stop && (CLS[buf[p]] & HTTP_C_VALUE))
		p++;
	if (p == stop) {
		if (stop == lim) {
			err = HTTP_E_FIELDS_TOO_LARGE;
			goto fail;
		}
		goto more;
	}
	c = buf[p];
	if (c != '\r') {
		err = bad_byte(c, HTTP_E_CTL);
		goto fail;
	}
	{
		uint32_t end = p;
		while (end > mark && (CLS[buf[end - 1]] & HTTP_C_WS))
			end--;
		h->value = slice(mark, end);
	}
	p++;

lf:
	phase = PH_LF;
	if (p >= lim) { /* the LF would be one byte over the limit */
		err = HTTP_E_FIELDS_TOO_LARGE;
		goto fail;
	}
	if (p >= n)
		goto more;
	if (buf[p] != '\n') {
		err = HTTP_E_BARE_CR;
		goto fail;
	}
	p++;
	if ((err = on_field(r, buf, h)) != 0)
		goto fail;
	r->nheaders++;
	goto field;

done:
	r->head_len = (uint16_t)p;
	r->pos = p;
	if ((err = finish(r)) != 0)
		goto fail;
	r->phase = PH_DONE;
	return (int)p;

more:
	r->pos = p;
	r->mark = mark;
	r->lim = lim;
	r->phase = phase;
	return HTTP_NEED_MORE;

fail:
	r->pos = p; /* where it went wrong, for a debugger */
	r->err = (int16_t)err;
	r->status = (uint16_t)http_err_status(err);
	return err;
}
