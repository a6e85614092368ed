/* access.h — one access-log record as one line of text: nginx's
 * `combined` format or a JSON object, from what the server knows about a
 * response (the engine's config.access hook, http/app.h, hands out struct
 * http_access).
 *
 * Pure and freestanding: no clock (the caller passes the time, already
 * formatted by http_access_time once a second), no I/O, no allocation.
 * The buffering and the writes are the application's (host/access_log.c).
 *
 *   combined  198.18.0.1 - - [01/Dec/2026:16:12:23 +0000] "GET / HTTP/1.1" 200 41 "-" "curl/8.5.0"
 *             (an IPv6 client as 2001:2::1, RFC 5952 text without brackets, as
 *             nginx writes $remote_addr, in both formats)
 *   json      {"time":"2026-12-01T16:12:23+00:00","remote_addr":"198.18.0.1","remote_port":40123,
 *             "request":"GET / HTTP/1.1","status":200,"body_bytes_sent":41,"http_referer":"",
 *             "http_user_agent":"curl/8.5.0"}   (one line)
 *
 * Every byte that comes from the client is escaped, so no request can end
 * a line early, forge a field or break the JSON:
 *   combined  '"', '\\', bytes below 0x20 and from 0x7f up: \xHH (nginx's
 *             escaping); an absent or empty field is "-";
 *   json      '"' and '\\' backslashed; \n \r \t; other bytes below 0x20,
 *             0x7f and bytes from 0x80 up: \u00HH (each byte read as
 *             Latin-1, so the output is ASCII and always valid JSON, even
 *             from bytes that are not UTF-8); an absent field is "".
 * Fields longer than their limit (HTTP_ACCESS_LINE_MAX, _FIELD_MAX input
 * bytes) are cut there and end in "..." (outside the escaping, so a reader
 * sees the cut), which bounds a record at HTTP_ACCESS_REC_MAX bytes. */
#ifndef HTTP_ACCESS_H
#define HTTP_ACCESS_H

#include "../base/sk.h"
#include "../base/sk_addr.h"

/* A piece of the request: bytes, or p == NULL when the request had none. */
struct http_access_str {
	const uint8_t *p;
	uint32_t len;
};

/* One response, as the server queued it.  Everything points into the
 * server's buffers and is valid only during the hook's call. */
struct http_access {
	struct sk_addr addr;  /* the client, either family; IPv6 is logged in brackets */
	uint16_t port;
	uint16_t status;
	uint64_t body_bytes;  /* bytes of body in the response (0 for HEAD, 304) */
	/* The request line as sent, without its CRLF (for a head the parser
	 * refused: its first line, up to a CR or LF); absent when no request
	 * was read (a 408 before any byte, a refused connection). */
	struct http_access_str line;
	struct http_access_str referer;    /* the Referer value; absent: none */
	struct http_access_str user_agent; /* the User-Agent value; absent: none */
};

enum http_access_fmt {
	HTTP_ACCESS_COMBINED, /* nginx's log_format combined */
	HTTP_ACCESS_JSON,     /* one JSON object per line */
};

#define HTTP_ACCESS_LINE_MAX 2048u  /* request line bytes logged */
#define HTTP_ACCESS_FIELD_MAX 1024u /* Referer, User-Agent bytes logged */
#define HTTP_ACCESS_TIME_MAX 32u    /* a time string from http_access_time, NUL included */
/* The longest record, '\n' included: each logged byte escaped at its
 * widest (6 in JSON), the cut marks, and the fixed parts. */
#define HTTP_ACCESS_REC_MAX \
	(6u * (HTTP_ACCESS_LINE_MAX + 2u * HTTP_ACCESS_FIELD_MAX) + 3u * 3u + HTTP_ACCESS_TIME_MAX + 256u)

/* The time of a record for fmt: "01/Dec/2026:16:12:23 +0000" (combined,
 * $time_local) or "2026-12-01T16:12:23+00:00" (json, $time_iso8601), for
 * unix_sec in the zone utc_off_s seconds east of UTC (|offset| < 24 h).
 * Writes a NUL-terminated string into out; returns its length. */
size_t http_access_time(uint64_t unix_sec, int32_t utc_off_s, enum http_access_fmt fmt,
			char out[HTTP_ACCESS_TIME_MAX]);

/* Write the record, '\n' included, into out[0, cap) and return its
 * length.  time is from http_access_time for the same fmt.  cap must be at
 * least HTTP_ACCESS_REC_MAX, else nothing is written and 0 is returned (a
 * rule that does not depend on the record, so a caller cannot be
 * surprised by a long one, and no record is ever cut short). */
size_t http_access_format(uint8_t *out, size_t cap, const struct http_access *r,
			  enum http_access_fmt fmt, const char *time);

#endif
