/* resp.h — the HTTP/1.1 RESPONSE head parser (RFC 9112), for clients
 * (`skiff load`).  Strict, incremental, and a byte-exact stream consumer
 * like chunked.h: it consumes every byte it is given and keeps only
 * counters and the few field values it needs, so a client holds no receive
 * buffer per connection — it reads into one shared scratch buffer, feeds
 * the parser, and forgets the bytes.  This is what lets a load generator
 * keep 100,000 idle connections for the cost of a small struct each.
 *
 *   status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF
 *
 * Strictness (a load generator that accepts garbage measures garbage):
 *  - lines end in CRLF: a bare LF or bare CR, a NUL anywhere: error;
 *  - the version is exactly "HTTP/1." DIGIT (another major version: 505's
 *    code, HTTP_E_VERSION_UNSUP); 1.0 is read as 1.0, 1.1-1.9 as 1.1;
 *  - the status code is exactly 3 DIGITs, 100..599; the SP before the
 *    reason may be missing only if the reason is empty ("HTTP/1.1 200\r\n",
 *    which RFC 9112 4 asks a client to accept); the reason holds
 *    HTAB / SP / VCHAR / obs-text only;
 *  - field lines follow the request parser's rules: token name directly
 *    followed by ':', no obs-fold, value bytes VCHAR/obs-text/SP/HTAB,
 *    OWS trimmed; at most HTTP_MAX_FIELDS lines and HTTP_HEAD_MAX bytes;
 *  - Content-Length: 1*18DIGIT, once (a second line, a list: error);
 *  - Transfer-Encoding: exactly "chunked" (case-insensitive; we decode no
 *    other coding, and a list would need one), once; with Content-Length:
 *    error;
 *  - Connection: a token list; "close" and "keep-alive" are recognised.
 * The values of those three fields are kept (at most HTTP_RESP_MAX_VALUE
 * bytes, more is an error); other fields are checked and dropped.
 *
 * Errors are enum http_err codes from parser.h, sticky, and name the first
 * offending byte (*used).  Freestanding: sk.h only, no allocation.
 */
#ifndef HTTP_RESP_H
#define HTTP_RESP_H

#include "parser.h"

#define HTTP_RESP_MAX_VALUE 64u /* kept bytes of Content-Length/TE/Connection */

enum http_body_kind {
	HTTP_BODY_NONE,    /* 1xx, 204, 304, or the answer to HEAD */
	HTTP_BODY_LENGTH,  /* content_length bytes */
	HTTP_BODY_CHUNKED, /* chunked.h */
	HTTP_BODY_CLOSE,   /* until the server closes */
};

struct http_resp {
	/* Results, valid once http_resp_head() returned HTTP_DONE. */
	uint16_t status;
	uint8_t version; /* 10 or 11 */
	bool has_content_length, chunked, conn_close, conn_keep_alive;
	uint64_t content_length;
	uint32_t head_len; /* bytes consumed by the whole head */
	int16_t err;       /* sticky error, 0 if none */
	/* Private state. */
	uint8_t state;
	uint8_t field;     /* which kept field the current line is */
	uint8_t nlen;      /* name bytes seen (capped) */
	uint8_t vlen;      /* value bytes kept */
	uint8_t vtrail;    /* trailing whitespace bytes at the end of val */
	uint16_t nfields;
	uint32_t count;    /* position inside the status line */
	char name[20];     /* lower-cased name prefix (enough for the kept ones) */
	char val[HTTP_RESP_MAX_VALUE];
};

void http_resp_init(struct http_resp *r);

/* Consume buf[0, len).  Returns HTTP_DONE when the head is complete (*used
 * is the number of bytes of buf that belonged to it; the body starts at
 * buf[*used]), HTTP_NEED_MORE when every byte was taken (*used == len), or
 * an error (< HTTP_NEED_MORE; *used is the offending byte's offset).  After
 * HTTP_DONE or an error, further calls return the same and take nothing. */
int http_resp_head(struct http_resp *r, const uint8_t *buf, size_t len, size_t *used);

/* How the body is delimited (RFC 9112 6.3), for a complete head.
 * head_request: the request was HEAD (no body whatever the fields say). */
enum http_body_kind http_resp_body(const struct http_resp *r, bool head_request);

/* May the connection carry another request after this response? */
bool http_resp_keep_alive(const struct http_resp *r);

#endif
