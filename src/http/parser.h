/* parser.h — the HTTP/1.1 request head parser (RFC 9112, strict).
 *
 * Incremental and zero-copy: http_parse_head() is called each time more of
 * the request has arrived, with the whole buffered head so far, and returns
 *   > 0             the head is complete; that many bytes were consumed
 *                   (leading empty lines, request line, fields, final CRLF);
 *   HTTP_NEED_MORE  every byte given is a valid prefix of a head;
 *   < HTTP_NEED_MORE an error: http_err_status() is the status to answer
 *                   (400, 413, 414, 431, 501, 505) and http_err_name() a
 *                   short stable name for counters.  The server answers it
 *                   and closes the connection.
 * Results are slices: offsets into the caller's buffer, not pointers, so the
 * caller may move or compact the buffer between calls.  The one contract:
 * every call for the same request passes a buffer whose first bytes are the
 * same bytes as before (the head starts at buf[0]), only longer.
 *
 * Re-calling is cheap: the parser remembers its position and state (phase,
 * start of the token being read) and continues from the first byte it has
 * not seen, so a head that trickles in one byte at a time is still read once
 * in total.  Errors are sticky: a further call returns the same error.
 *
 * Strictness, and the choices the RFC leaves open:
 *  - lines end in CRLF; a bare LF is rejected (RFC 9112 2.2 lets a recipient
 *    accept it; we do not, so that no two parsers on the path disagree about
 *    where a line ends).  A bare CR or a NUL anywhere is rejected.
 *  - up to HTTP_MAX_EMPTY_LINES empty lines (CRLF) before the request line
 *    are skipped (2.2: SHOULD ignore at least one); more get 400.
 *  - the request line is method SP target SP version with single spaces.
 *    The method is a token; a valid token that is not one of the nine
 *    methods below gets 501 (once the rest of the head is known good).
 *    PURGE (a cache's operator method, not in RFC 9110) is one more, known
 *    only where the embedder asks for it (http_req.accept_purge, set after
 *    http_req_init: the proxy's); everywhere else it is a 501 like any
 *    other unknown token.
 *    The target is visible ASCII only (no CTL, SP, DEL or bytes >= 0x80),
 *    in origin-form ("/..."), absolute-form ("scheme:..."), "*" for OPTIONS
 *    only, or authority-form for CONNECT only.
 *  - the version is exactly "HTTP/" DIGIT "." DIGIT.  1.0 and 1.1 are read as
 *    such; 1.2-1.9 are read as 1.1 (RFC 9110 2.5: process as the highest
 *    minor version we implement); any other major version gets 505.
 *  - fields: the name is a token followed directly by ':' (whitespace before
 *    the colon, an empty name or a non-token byte get 400); a line starting
 *    with SP/HTAB (obs-fold, or whitespace after the request line) gets 400;
 *    values hold VCHAR, obs-text, SP and HTAB only; leading and trailing
 *    OWS is not part of the value slice.
 *  - Content-Length: 1 to 18 DIGITs.  A list ("5, 5"), a second
 *    Content-Length line (even with the same value: RFC 9110 8.6 allows
 *    either, and rejecting is the one that leaves no room for a parser on
 *    the path to disagree), a sign or anything else gets 400.  Above
 *    max_body: 413.
 *  - Transfer-Encoding: a comma list of tokens across all its lines; it must
 *    end in "chunked", which must appear once (else 400); another coding
 *    before it ("gzip, chunked") gets 501, since we decode none; any TE on
 *    HTTP/1.0 gets 400; TE together with Content-Length gets 400.
 *  - Host: more than one gets 400 on any version, none gets 400 on 1.1;
 *    the value may only hold URI host/port characters.
 *  - Connection: a list of tokens (else 400); "close", "keep-alive" and
 *    "upgrade" are recognised case-insensitively.
 * Limits (both detected while the head is still incomplete, so a client
 * cannot make us wait for a line that is already too long):
 *  - the request line holds at most HTTP_MAX_REQUEST_LINE bytes before its
 *    CRLF: one more gets 414;
 *  - the field lines (each with its CRLF, not the final empty line) hold at
 *    most HTTP_MAX_FIELDS_BYTES bytes, and at most HTTP_MAX_FIELDS lines:
 *    one more gets 431.
 * Given HTTP_HEAD_MAX bytes, the parser never answers HTTP_NEED_MORE, so a
 * receive buffer of that size always reaches a verdict.
 *
 * Freestanding: includes sk.h only, never allocates.
 */
#ifndef HTTP_PARSER_H
#define HTTP_PARSER_H

#include "../base/sk.h"

#define HTTP_MAX_REQUEST_LINE 8192u  /* bytes before the CRLF; more: 414 */
#define HTTP_MAX_FIELDS_BYTES 16384u /* field lines with their CRLFs; more: 431 */
#define HTTP_MAX_FIELDS 100u         /* field lines; more: 431 */
#define HTTP_MAX_EMPTY_LINES 8u      /* CRLFs skipped before the request line */
/* The longest head that can be accepted, and so the buffer size at which
 * the parser is guaranteed to decide. */
#define HTTP_HEAD_MAX (2u * HTTP_MAX_EMPTY_LINES + HTTP_MAX_REQUEST_LINE + 2u + \
		       HTTP_MAX_FIELDS_BYTES + 2u)

enum http_method {
	HTTP_UNKNOWN = 0, /* a valid token we do not know: 501 */
	HTTP_GET,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_PUT,
	HTTP_DELETE,
	HTTP_OPTIONS,
	HTTP_PATCH,
	HTTP_CONNECT,
	HTTP_TRACE,
	HTTP_PURGE,       /* only with http_req.accept_purge; else HTTP_UNKNOWN */
};

/* Results of the parser and of the chunked decoder (chunked.h).  Every
 * error maps to one status (http_err_status) and one name (http_err_name). */
enum http_err {
	HTTP_DONE = 1,                /* chunked.h: the body is complete */
	HTTP_NEED_MORE = -1,          /* no verdict yet: call again with more */
	HTTP_E_LINE = -2,             /* 400 request line shape (spaces, CRLF) */
	HTTP_E_METHOD = -3,           /* 400 method is not a token */
	HTTP_E_TARGET = -4,           /* 400 target bytes or form */
	HTTP_E_VERSION = -5,          /* 400 not HTTP/DIGIT.DIGIT */
	HTTP_E_VERSION_UNSUP = -6,    /* 505 major version other than 1 */
	HTTP_E_BARE_CR = -7,          /* 400 CR not followed by LF */
	HTTP_E_BARE_LF = -8,          /* 400 LF not preceded by CR */
	HTTP_E_NUL = -9,              /* 400 NUL byte */
	HTTP_E_CTL = -10,             /* 400 control character in a field value */
	HTTP_E_FOLD = -11,            /* 400 line starts with SP/HTAB (obs-fold) */
	HTTP_E_NAME = -12,            /* 400 field name empty, not a token, no ':' */
	HTTP_E_NAME_WS = -13,         /* 400 whitespace between name and ':' */
	HTTP_E_HOST_MISSING = -14,    /* 400 HTTP/1.1 without Host */
	HTTP_E_HOST_DUP = -15,        /* 400 two Host lines */
	HTTP_E_HOST_BAD = -16,        /* 400 Host value not host[:port] bytes */
	HTTP_E_CL_BAD = -17,          /* 400 Content-Length not 1*18DIGIT */
	HTTP_E_CL_DUP = -18,          /* 400 two Content-Length lines */
	HTTP_E_CL_TE = -19,           /* 400 Content-Length and Transfer-Encoding */
	HTTP_E_TE_BAD = -20,          /* 400 TE not ending in one chunked */
	HTTP_E_TE_HTTP10 = -21,       /* 400 Transfer-Encoding on HTTP/1.0 */
	HTTP_E_TE_UNSUP = -22,        /* 501 a coding other than chunked */
	HTTP_E_CONNECTION = -23,      /* 400 Connection not a token list */
	HTTP_E_EMPTY_LINES = -24,     /* 400 too many CRLFs before the request */
	HTTP_E_URI_TOO_LONG = -25,    /* 414 request line too long */
	HTTP_E_FIELDS_TOO_LARGE = -26, /* 431 field lines over the byte limit */
	HTTP_E_TOO_MANY_FIELDS = -27, /* 431 more than HTTP_MAX_FIELDS lines */
	HTTP_E_METHOD_UNKNOWN = -28,  /* 501 method token we do not implement */
	HTTP_E_BODY_TOO_LARGE = -29,  /* 413 Content-Length or chunked total */
	HTTP_E_CHUNK_SIZE = -30,      /* 400 chunk-size not 1*16HEXDIG */
	HTTP_E_CHUNK_EXT = -31,       /* 400 chunk extension bytes or length */
	HTTP_E_CHUNK_CRLF = -32,      /* 400 no CRLF after chunk data */
	HTTP_E_TRAILER_TOO_LARGE = -33, /* 431 trailer section over the byte limit */
};
#define HTTP_NERR 34 /* errors are -2 .. -(HTTP_NERR - 1) */

/* A piece of the caller's buffer.  16 bits suffice: every accepted head is
 * shorter than HTTP_HEAD_MAX. */
struct http_slice {
	uint16_t off;
	uint16_t len;
};

struct http_header {
	struct http_slice name;  /* a token, as sent (compare case-insensitively) */
	struct http_slice value; /* without leading/trailing OWS; may be empty */
};

/* One request head.  Fields above `headers` are reset by http_req_init();
 * the results are valid once http_parse_head() returned > 0. */
struct http_req {
	/* Results. */
	uint16_t head_len;          /* bytes consumed, == the return value */
	uint8_t method;             /* enum http_method */
	uint8_t version;            /* 10 or 11 */
	struct http_slice method_s; /* the method token as sent */
	struct http_slice target;
	uint16_t nheaders;
	bool has_content_length;
	bool chunked;         /* Transfer-Encoding ends in chunked (body: chunked.h) */
	bool keep_alive;      /* 1.1 unless "close"; 1.0 only with "keep-alive" */
	bool has_host;
	struct http_slice host; /* the Host line's value, valid if has_host */
	bool expect_continue; /* Expect: 100-continue */
	bool expect_other;    /* another Expect value (the server may answer 417) */
	bool conn_close, conn_keep_alive, conn_upgrade; /* Connection tokens seen */
	uint64_t content_length; /* valid if has_content_length */
	uint64_t max_body;       /* from http_req_init: more gets 413 */
	bool accept_purge;       /* the caller's, after http_req_init (false): PURGE is
				  * a method, not a 501 */
	/* After an error: the error code and the status to answer. */
	int16_t err;
	uint16_t status;
	/* Parser state (private): where to continue.  pos is the next byte to
	 * read, mark the start of the token being read, lim the offset the
	 * current section may not reach (request line or field lines). */
	uint32_t pos, mark, lim;
	uint8_t phase;
	uint8_t empty_lines;
	bool te_seen, te_other;
	/* Not reset by init: only [0, nheaders) is meaningful. */
	struct http_header headers[HTTP_MAX_FIELDS];
};

/* Prepare r for a new request (also between pipelined requests).  max_body
 * is the largest Content-Length accepted (UINT64_MAX: no limit). */
void http_req_init(struct http_req *r, uint64_t max_body);

/* Parse the head in buf[0, len).  See the top of this file. */
int http_parse_head(struct http_req *r, const uint8_t *buf, size_t len);

/* The status code to answer for an error (400, 413, 414, 431, 501, 505),
 * or 0 if err is not an error. */
int http_err_status(int err);
/* A short stable name ("bare_lf", "cl_dup", ...) for counters; "ok" for
 * HTTP_DONE/0/positive, "need_more", or "unknown". */
const char *http_err_name(int err);
/* "GET", ... or "UNKNOWN". */
const char *http_method_name(enum http_method m);

/* The first header whose name equals name (n bytes, lower case) ignoring
 * case, or NULL. */
const struct http_header *http_req_find(const struct http_req *r, const uint8_t *buf,
					const char *name, size_t n);
/* Case-insensitive comparison of a slice with a lower-case literal. */
bool http_slice_eq_lower(const uint8_t *buf, struct http_slice s, const char *lit, size_t n);

/* Character classes, one bit each, shared with chunked.c.  Bytes are looked
 * up in one table so the hot loops do one load and one test per byte. */
#define HTTP_C_TOKEN 0x01u  /* tchar (RFC 9110 5.6.2) */
#define HTTP_C_TARGET 0x02u /* 0x21-0x7e: allowed in the request target */
#define HTTP_C_VALUE 0x04u  /* field-vchar, obs-text, SP, HTAB */
#define HTTP_C_WS 0x08u     /* SP, HTAB */
#define HTTP_C_HEX 0x10u    /* HEXDIG */
#define HTTP_C_HOST 0x20u   /* unreserved, sub-delims, '%', ':', '[', ']' */
#define HTTP_C_SCHEME 0x40u /* ALPHA, DIGIT, '+', '-', '.' */
extern const uint8_t http_char_class[256];

#endif
