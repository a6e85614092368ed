/* chunked.h — the chunked transfer coding of request bodies (RFC 9112 7.1),
 * decoded incrementally and in place.
 *
 *   chunked-body = *chunk last-chunk trailer-section CRLF
 *   chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *
 * The decoder is a byte-exact state machine: it consumes every byte it is
 * given (it never asks to see a partial line again), so the caller may
 * drop or reuse consumed bytes and pass only new ones next time.  The
 * state is counters only, no offsets, so the buffer may move freely.
 *
 * Strictness:
 *  - chunk-size is 1 to 16 HEXDIGs (so it fits 64 bits; a longer one, even
 *    with leading zeros, gets 400); "0x", "+", "-", empty or whitespace
 *    before the digits get 400;
 *  - a chunk extension is BWS ";" and then field-value bytes up to the CR,
 *    at most HTTP_MAX_CHUNK_EXT bytes; it is skipped, not interpreted;
 *  - chunk data must be followed by exactly CRLF;
 *  - the trailer section follows the field-line rules of the head (token
 *    name, no whitespace before ':', no obs-fold, no CTL/NUL, CRLF only)
 *    and its limits (HTTP_MAX_FIELDS_BYTES, HTTP_MAX_FIELDS: 431); trailer
 *    fields are checked and discarded;
 *  - a running total above max_body gets 413 as soon as a chunk-size says
 *    so, before any of that chunk's data is read.
 */
#ifndef HTTP_CHUNKED_H
#define HTTP_CHUNKED_H

#include "parser.h"

#define HTTP_MAX_CHUNK_EXT 4096u /* extension bytes per chunk line */

struct http_chunked {
	uint64_t max_body; /* from init */
	uint64_t total;    /* data bytes decoded so far, all chunks */
	uint64_t size;     /* the chunk-size being read, then data left in it */
	uint32_t count;    /* hex digits or extension bytes of this line */
	uint32_t tbytes;   /* trailer field-line bytes so far */
	uint16_t fields;   /* trailer field lines so far */
	uint8_t state;
	bool done;         /* HTTP_DONE was returned */
	int8_t err;        /* sticky error, 0 if none */
};

void http_chunked_init(struct http_chunked *c, uint64_t max_body);

/* Decode the raw bytes buf[0, *len).  The decoded data is moved to the
 * front of buf: on return buf[0, *len) holds the data decoded by this call,
 * and *used is the number of raw bytes taken.  Returns
 *   HTTP_DONE       the body and its trailers are complete; bytes after
 *                   buf[*used] (a pipelined request) are untouched;
 *   HTTP_NEED_MORE  all bytes were used (*used == the input length);
 *   < HTTP_NEED_MORE an error (enum http_err; http_err_status() gives 400,
 *                   413 or 431); *used is the offset of the offending byte.
 * After HTTP_DONE or an error, further calls return the same and take
 * nothing. */
int http_chunked_decode(struct http_chunked *c, uint8_t *buf, size_t *len, size_t *used);

static inline bool http_chunked_done(const struct http_chunked *c)
{
	return c->done;
}

#endif
