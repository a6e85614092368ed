/* emit.h — the bytes of a response head, and the short body of an error
 * answer, written into a buffer the caller gives.  Pure and freestanding:
 * no state, no allocation; the engine (app.c) and its handlers decide what
 * to say, this file only spells it.
 *
 *   HTTP/1.1 SP status SP reason CRLF
 *   Server: skiff CRLF  Date: <29 bytes> CRLF
 *   Content-Type: <ctype> CRLF  Content-Length: <n> CRLF
 *   [Connection: close | keep-alive CRLF]  [extra lines]  CRLF
 */
#ifndef HTTP_EMIT_H
#define HTTP_EMIT_H

#include "../base/sk.h"

/* A head from http_emit_head (errors, the 503 of a refused connection) is
 * at most this long: the content type and the extra lines come from the
 * server, never from a request.  The heads of file answers, written with
 * the cursor below, are bounded by the files handler's header area. */
#define HTTP_EMIT_HEAD_MAX 512u
/* The longest Content-Type the server sends (a longer one from a source is
 * replaced by application/octet-stream). */
#define HTTP_EMIT_CTYPE_MAX 128u
/* An error body ("404 Not Found\n") is at most this long. */
#define HTTP_EMIT_ERROR_BODY_MAX 64u

/* The Connection header of a response. */
enum http_conn_hdr {
	HTTP_CH_NONE,       /* nothing: the version's default holds */
	HTTP_CH_CLOSE,      /* "Connection: close": the last response */
	HTTP_CH_KEEP_ALIVE, /* "Connection: keep-alive": 1.0 clients that asked */
};

/* A cursor that never writes past its end: a write that does not fit
 * moves p to end and writes nothing (the callers size their buffers, so
 * this is a fail-safe, never a truncated head on the wire in practice). */
struct http_out {
	uint8_t *p, *end;
};

/* Inline: every head is a run of these, mostly with literals, whose
 * lengths then fold to constants. */
static inline void http_out_mem(struct http_out *o, const void *s, size_t n)
{
	if (sk_unlikely((size_t)(o->end - o->p) < n)) {
		o->p = o->end; /* the callers size their buffers; never reached */
		return;
	}
	sk_memcpy(o->p, s, n);
	o->p += n;
}

static inline void http_out_str(struct http_out *o, const char *s)
{
	http_out_mem(o, s, sk_strlen(s));
}
void http_out_u64(struct http_out *o, uint64_t v);
void http_out_hex(struct http_out *o, uint64_t v); /* lower case, no leading zeros */

/* "HTTP/1.1 <status> <reason>" CRLF "Server: skiff" CRLF "Date: <date29>" CRLF */
void http_emit_status(struct http_out *o, int status, const char *date29);

/* The reason phrase of the statuses the server sends ("Error" for others). */
const char *http_reason(int status);

/* Write the head into buf[0, cap) and return its length.  date29 is the
 * IMF-fixdate (exactly 29 bytes); extra is NULL or whole header lines,
 * each ending in CRLF.  A cap below what the head needs truncates it (the
 * callers give HTTP_EMIT_HEAD_MAX, which is always enough). */
size_t http_emit_head(uint8_t *buf, size_t cap, int status, const char *date29,
		      const char *ctype, uint64_t clen, enum http_conn_hdr ch, const char *extra);

/* Write the body of an error answer, "<status> <reason>\n"; returns its
 * length (at most HTTP_EMIT_ERROR_BODY_MAX). */
size_t http_emit_error_body(uint8_t *buf, size_t cap, int status);

#endif
