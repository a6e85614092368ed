/* accept_enc.h — Accept-Encoding (RFC 9110 12.5.3): which of the
 * precompressed siblings of a file the client takes.  Pure and
 * freestanding.
 *
 *   Accept-Encoding: gzip;q=0.8, br, *;q=0
 *
 * Each element is a coding with an optional weight (";" "q=" qvalue,
 * OWS around the ';'); qvalues are kept in thousandths (0..1000).
 * "x-gzip" is gzip (12.5.3 SHOULD).  An element that cannot be read
 * (a bad qvalue, a stray byte) is skipped, not the whole field: one
 * unknown extension must not turn compression off.  A coding not listed
 * takes the weight of "*" if that is listed, else 0 (not acceptable).
 * No field at all: identity only (a server MAY send any coding, but a
 * client that says nothing is safest served what it certainly reads; nginx
 * does the same).
 */
#ifndef HTTP_ACCEPT_ENC_H
#define HTTP_ACCEPT_ENC_H

#include "../base/sk.h"

/* What one field said: -1 where a coding was not named. */
struct http_accept_enc {
	int16_t q_gzip, q_br, q_star, q_identity;
};

void http_accept_enc_parse(const uint8_t *v, size_t n, struct http_accept_enc *ae);

/* The weight (0..1000) the client gives coding `c`, after "*". */
int http_accept_enc_q(const struct http_accept_enc *ae, int q);

enum http_coding { HTTP_CODING_IDENTITY, HTTP_CODING_GZIP, HTTP_CODING_BR };

/* The coding to send, given which siblings exist: the acceptable one
 * (weight > 0) with the highest weight, br before gzip on a tie; identity
 * when neither is acceptable (even if the client refused identity: an
 * answer it may not decode beats a 406 for a static file). */
enum http_coding http_accept_enc_choose(const struct http_accept_enc *ae, bool have_gzip,
					bool have_br);

#endif
