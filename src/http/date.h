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

/* Read an HTTP-date (RFC 9110 5.6.7) from s[0, n): the IMF-fixdate
 * above, and the two obsolete forms a recipient MUST accept,
 *   rfc850-date  "Sunday, 06-Nov-94 08:49:37 GMT"  (years 70-99 are 19xx,
 *                00-69 20xx: the 50-years rule without a clock)
 *   asctime      "Sun Nov  6 08:49:37 1994"
 * The weekday name is checked for its form, not for agreeing with the
 * date (a recipient has no use for the disagreement).  Fields out of range
 * (day 31 of a 30-day month, hour 24, year before 1970 or after 9999),
 * bytes before or after it other than OWS: false.  true: *unix_sec set. */
bool http_date_parse(const uint8_t *s, size_t n, uint64_t *unix_sec);

#endif
