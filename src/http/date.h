/* date.h — the IMF-fixdate of the HTTP Date header (RFC 9110 5.6.7),
 * "Sun, 06 Nov 1994 08:49:37 GMT", from seconds since the Unix epoch.
 *
 * Freestanding (no gmtime, no locale), so the hosted server and the
 * unikernel format the header with the same code; the unikernel also
 * needs the inverse to turn its CMOS clock into epoch seconds. */
#ifndef HTTP_DATE_H
#define HTTP_DATE_H

#include "../base/sk.h"

#define HTTP_DATE_LEN 29u /* characters; no terminating NUL is written */

/* Format `unix_sec` (UTC) into out[0, HTTP_DATE_LEN).  Years past 9999
 * are clamped to the last second of 9999, so the length never changes. */
void http_date_format(uint64_t unix_sec, char out[HTTP_DATE_LEN]);

/* Seconds since the epoch of a UTC calendar time (year >= 1970, month
 * 1..12, day 1..31, hour 0..23, min 0..59, sec 0..60).  Out-of-range
 * fields are not checked: callers validate what they read. */
uint64_t http_date_from_civil(unsigned year, unsigned month, unsigned day, unsigned hour,
			      unsigned min, unsigned sec);

#endif
