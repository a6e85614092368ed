/* resp.c — see resp.h.
 *
 * One switch per byte.  Responses to a load generator are short (a status
 * line and a handful of fields), and a byte-at-a-time machine is what lets
 * the caller drop every byte it has fed: there is no "go back to the
 * start of the token", so nothing of the head has to stay buffered. */
#include "resp.h"

enum {
	R_VERSION,   /* "HTTP/1.D SP", count = bytes matched */
	R_CODE,      /* count = digits read */
	R_AFTER_CODE, /* SP or CR */
	R_REASON,
	R_LINE_LF,   /* after the CR of the status line */
	R_LINE_START, /* a field line or the final CRLF */
	R_NAME,
	R_OWS,       /* after ':' */
	R_VALUE,
	R_VALUE_LF,
	R_END_LF,    /* after the CR of the empty line */
	R_DONE,
};

enum { F_OTHER, F_CL, F_TE, F_CONN };

void http_resp_init(struct http_resp *r)
{
	sk_memset(r, 0, sizeof(*r));
	r->state = R_VERSION;
}

static inline uint8_t lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

static bool eq_lower(const char *s, size_t n, const char *lit)
{
	size_t i = 0;
	for (; i < n && lit[i]; i++)
		if (lower((uint8_t)s[i]) != (uint8_t)lit[i])
			return false;
	return i == n && !lit[i];
}

/* Which kept field a complete name is. */
static uint8_t field_kind(const struct http_resp *r)
{
	if (r->nlen > sizeof(r->name))
		return F_OTHER;
	if (eq_lower(r->name, r->nlen, "content-length"))
		return F_CL;
	if (eq_lower(r->name, r->nlen, "transfer-encoding"))
		return F_TE;
	if (eq_lower(r->name, r->nlen, "connection"))
		return F_CONN;
	return F_OTHER;
}

/* A complete kept field value, OWS trimmed.  Returns 0 or an error. */
static int field_done(struct http_resp *r)
{
	const char *v = r->val;
	size_t n = (size_t)(r->vlen - r->vtrail);
	switch (r->field) {
	case F_CL: {
		if (r->has_content_length)
			return HTTP_E_CL_DUP;
		if (r->chunked)
			return HTTP_E_CL_TE;
		if (n == 0 || n > 18)
			return HTTP_E_CL_BAD;
		uint64_t x = 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i] < '0' || v[i] > '9')
				return HTTP_E_CL_BAD;
			x = x * 10 + (uint64_t)(v[i] - '0');
		}
		r->has_content_length = true;
		r->content_length = x;
		return 0;
	}
	case F_TE:
		if (r->chunked)
			return HTTP_E_TE_BAD;
		if (r->has_content_length)
			return HTTP_E_CL_TE;
		if (!eq_lower(v, n, "chunked"))
			return HTTP_E_TE_UNSUP;
		if (r->version == 10)
			return HTTP_E_TE_HTTP10;
		r->chunked = true;
		return 0;
	case F_CONN: {
		/* #token: elements separated by OWS "," OWS; empty elements are
		 * allowed by the list rule (RFC 9110 5.6.1). */
		size_t i = 0;
		while (i < n) {
			while (i < n && (v[i] == ',' || v[i] == ' ' || v[i] == '\t'))
				i++;
			size_t s = i;
			while (i < n && (http_char_class[(uint8_t)v[i]] & HTTP_C_TOKEN))
				i++;
			if (i == s)
				return i < n ? HTTP_E_CONNECTION : 0;
			if (eq_lower(v + s, i - s, "close"))
				r->conn_close = true;
			else if (eq_lower(v + s, i - s, "keep-alive"))
				r->conn_keep_alive = true;
			while (i < n && (v[i] == ' ' || v[i] == '\t'))
				i++;
			if (i < n && v[i] != ',')
				return HTTP_E_CONNECTION;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int fail(struct http_resp *r, int err, size_t at, size_t *used)
{
	r->err = (int16_t)err;
	*used = at;
	return err;
}

int http_resp_head(struct http_resp *r, const uint8_t *buf, size_t len, size_t *used)
{
	if (r->err) {
		*used = 0;
		return r->err;
	}
	if (r->state == R_DONE) {
		*used = 0;
		return HTTP_DONE;
	}
	static const char ver[] = "HTTP/1.";
	for (size_t i = 0; i < len; i++) {
		uint8_t c = buf[i];
		if (c == 0)
			return fail(r, HTTP_E_NUL, i, used);
		if (++r->head_len > HTTP_HEAD_MAX)
			return fail(r, HTTP_E_FIELDS_TOO_LARGE, i, used);
		uint8_t cls = http_char_class[c];
		switch (r->state) {
		case R_VERSION:
			if (r->count < 7) {
				if (c != (uint8_t)ver[r->count])
					return fail(r, r->count == 5 && c >= '0' && c <= '9'
							       ? HTTP_E_VERSION_UNSUP
							       : HTTP_E_VERSION,
						    i, used);
			} else if (r->count == 7) {
				if (c < '0' || c > '9')
					return fail(r, HTTP_E_VERSION, i, used);
				r->version = c == '0' ? 10 : 11;
			} else if (c != ' ') {
				return fail(r, HTTP_E_LINE, i, used);
			}
			if (++r->count == 9) {
				r->state = R_CODE;
				r->count = 0;
			}
			break;
		case R_CODE:
			if (c < '0' || c > '9' || (r->count == 0 && (c < '1' || c > '5')))
				return fail(r, HTTP_E_LINE, i, used);
			r->status = (uint16_t)(r->status * 10 + (c - '0'));
			if (++r->count == 3)
				r->state = R_AFTER_CODE;
			break;
		case R_AFTER_CODE:
			if (c == ' ')
				r->state = R_REASON;
			else if (c == '\r')
				r->state = R_LINE_LF;
			else
				return fail(r, c == '\n' ? HTTP_E_BARE_LF : HTTP_E_LINE, i, used);
			break;
		case R_REASON:
			if (c == '\r')
				r->state = R_LINE_LF;
			else if (!(cls & HTTP_C_VALUE))
				return fail(r, c == '\n' ? HTTP_E_BARE_LF : HTTP_E_CTL, i, used);
			break;
		case R_LINE_LF:
		case R_VALUE_LF:
			if (c != '\n')
				return fail(r, HTTP_E_BARE_CR, i, used);
			if (r->state == R_VALUE_LF) {
				int e = field_done(r);
				if (e)
					return fail(r, e, i, used);
			}
			r->state = R_LINE_START;
			break;
		case R_LINE_START:
			if (c == '\r') {
				r->state = R_END_LF;
				break;
			}
			if (c == ' ' || c == '\t')
				return fail(r, HTTP_E_FOLD, i, used);
			if (!(cls & HTTP_C_TOKEN))
				return fail(r, c == '\n' ? HTTP_E_BARE_LF : HTTP_E_NAME, i, used);
			if (++r->nfields > HTTP_MAX_FIELDS)
				return fail(r, HTTP_E_TOO_MANY_FIELDS, i, used);
			r->nlen = 0;
			r->vlen = 0;
			r->vtrail = 0;
			r->state = R_NAME;
			/* fall through: the byte is the name's first */
			__attribute__((fallthrough));
		case R_NAME:
			if (cls & HTTP_C_TOKEN) {
				if (r->nlen < sizeof(r->name))
					r->name[r->nlen] = (char)c;
				if (r->nlen < 255)
					r->nlen++;
			} else if (c == ':') {
				r->field = field_kind(r);
				r->state = R_OWS;
			} else {
				return fail(r, (c == ' ' || c == '\t') ? HTTP_E_NAME_WS : HTTP_E_NAME,
					    i, used);
			}
			break;
		case R_OWS:
			if (c == ' ' || c == '\t')
				break;
			r->state = R_VALUE;
			/* fall through: the value's first byte */
			__attribute__((fallthrough));
		case R_VALUE:
			if (c == '\r') {
				r->state = R_VALUE_LF;
				break;
			}
			if (!(cls & HTTP_C_VALUE))
				return fail(r, c == '\n' ? HTTP_E_BARE_LF : HTTP_E_CTL, i, used);
			if (r->field != F_OTHER) {
				if (r->vlen >= HTTP_RESP_MAX_VALUE)
					return fail(r, r->field == F_CL	  ? HTTP_E_CL_BAD
						       : r->field == F_TE ? HTTP_E_TE_UNSUP
									  : HTTP_E_CONNECTION,
						    i, used);
				r->val[r->vlen++] = (char)c;
				/* Trailing OWS is not part of the value. */
				r->vtrail = (c == ' ' || c == '\t') ? (uint8_t)(r->vtrail + 1) : 0;
			}
			break;
		case R_END_LF:
			if (c != '\n')
				return fail(r, HTTP_E_BARE_CR, i, used);
			r->state = R_DONE;
			*used = i + 1;
			return HTTP_DONE;
		default:
			return fail(r, HTTP_E_LINE, i, used);
		}
	}
	*used = len;
	return HTTP_NEED_MORE;
}

enum http_body_kind http_resp_body(const struct http_resp *r, bool head_request)
{
	if (head_request || r->status < 200 || r->status == 204 || r->status == 304)
		return HTTP_BODY_NONE;
	if (r->chunked)
		return HTTP_BODY_CHUNKED;
	if (r->has_content_length)
		return HTTP_BODY_LENGTH;
	return HTTP_BODY_CLOSE;
}

bool http_resp_keep_alive(const struct http_resp *r)
{
	if (r->conn_close)
		return false;
	/* Without a length the body ends at close: nothing can follow, whatever
	 * Connection says (a 1.0 "keep-alive" without Content-Length included;
	 * the fuzzer found that case). */
	if (http_resp_body(r, false) == HTTP_BODY_CLOSE)
		return false;
	if (r->version == 10)
		return r->conn_keep_alive;
	return true;
}
