/* range.h — the Range request field (RFC 9110 14.2), bytes unit only.
 * Pure and freestanding: the field value and the representation's length
 * in, the ranges to send (or a verdict) out.  No state, no allocation.
 *
 *   Range: bytes=0-99, 200-, -50
 *
 * The choices RFC 9110 leaves open are made as nginx makes them, so that a
 * cache or client sees the same answers from either server:
 *  - another unit (or no "bytes=") is ignored: the full 200 (14.2 MUST);
 *  - a syntax error anywhere rejects the whole field: 416 (14.2 MAY
 *    reject an invalid ranges-specifier);
 *  - a range whose first byte is past the end, or first > last, or a
 *    zero suffix ("-0") is left out; none left: 416;
 *  - last-pos past the end is clipped to len - 1; a suffix longer than
 *    the representation is all of it;
 *  - more than max ranges, or ranges that add up to more than len
 *    (overlaps, the cheap amplification), are ignored: the full 200;
 *  - a zero-length representation: a range that starts at 0 ("0-",
 *    "-5") is ignored (full, empty 200), any other is 416.
 * Where this differs from nginx, on purpose (RFC 9110 asks it):
 *  - numbers are 1*DIGIT of any length and saturate at UINT64_MAX instead
 *    of failing: "0-99999999999999999999" is a valid range to the end;
 *  - SP and HTAB are both OWS around '-' and ',' (nginx: SP only), and
 *    empty list elements ("0-1,,2-3") are skipped (RFC 9110 5.6.1.2).
 * Ranges are returned in request order, not merged (neither does nginx).
 */
#ifndef HTTP_RANGE_H
#define HTTP_RANGE_H

#include "../base/sk.h"

/* The most ranges one request may ask for before its Range is ignored;
 * each part of a multipart/byteranges answer costs the files handler a
 * part head and a slice of the file in its stream. */
#define HTTP_MAX_RANGES 8u

/* [first, last] inclusive, first <= last < len. */
struct http_range {
	uint64_t first, last;
};

enum http_range_verdict {
	HTTP_RANGE_IGNORE = 0, /* send the full representation (200) */
	HTTP_RANGE_OK = 1,     /* send *nranges ranges (206) */
	HTTP_RANGE_UNSATISFIABLE = 2, /* 416 with Content-Range: bytes * / len */
};

/* Parse the field value v[0, n) (OWS already trimmed or not) against a
 * representation of len bytes.  On HTTP_RANGE_OK, out[0, *nranges) hold
 * 1..max ranges (max <= HTTP_MAX_RANGES is the caller's choice). */
enum http_range_verdict http_range_parse(const uint8_t *v, size_t n, uint64_t len,
					 struct http_range *out, unsigned max,
					 unsigned *nranges);

#endif
