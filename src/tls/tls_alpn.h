/* tls_alpn.h — ALPN (RFC 7301) as every engine (tls_engine.h) agrees it:
 * the server's order, h2 first when the listener speaks HTTP/2 (alpn_h2),
 * then http/1.1; a client that offers neither gets no ALPN and the
 * handshake goes on (as nginx's does), rather than the fatal
 * no_application_protocol alert RFC 7301 3.2 allows: a client that
 * offers only "foo" may still speak HTTP/1.1, or leave.
 *
 * The engines whose library asks us to choose (OpenSSL's and wolfSSL's
 * select callbacks) call tls_alpn_pick; GnuTLS and BearSSL are given the
 * list in the same order and choose by it themselves.  Every engine's
 * alpn() op names the result with tls_alpn_name: TLS_ALPN_H2,
 * TLS_ALPN_HTTP11 or NULL, whatever the library.
 *
 * Header-only and freestanding (no C library), for the unikernel too. */
#ifndef TLS_TLS_ALPN_H
#define TLS_TLS_ALPN_H

#include "../base/sk.h"

#define TLS_ALPN_H2 "h2"
#define TLS_ALPN_HTTP11 "http/1.1"

static inline bool tls_alpn_is(const uint8_t *p, size_t n, const char *name, size_t name_len)
{
	if (n != name_len)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)name[i])
			return false;
	return true;
}

/* The protocol to agree from the client's ProtocolNameList body in[0, len)
 * (each name a length byte and that many bytes): a pointer to the name in
 * `in` and its length in *n, or NULL when it offers none we speak (h2
 * counts only with `h2`).  A list cut short or holding an empty name is
 * refused whole (NULL): the libraries check the list before they call, so
 * this never happens with them. */
static inline const uint8_t *tls_alpn_pick(const uint8_t *in, size_t len, bool h2, uint8_t *n)
{
	const uint8_t *h1 = NULL;
	for (size_t i = 0; i < len;) {
		size_t k = in[i];
		if (k == 0 || k > len - i - 1)
			return NULL;
		const uint8_t *p = in + i + 1;
		if (h2 && tls_alpn_is(p, k, TLS_ALPN_H2, sizeof(TLS_ALPN_H2) - 1)) {
			*n = (uint8_t)k;
			return p; /* the server's first choice: no need to look further */
		}
		if (!h1 && tls_alpn_is(p, k, TLS_ALPN_HTTP11, sizeof(TLS_ALPN_HTTP11) - 1))
			h1 = p;
		i += 1 + k;
	}
	if (h1)
		*n = sizeof(TLS_ALPN_HTTP11) - 1;
	return h1;
}

/* What an engine's alpn() returns for the protocol its library agreed,
 * p[0, n) (p NULL or n 0: none): TLS_ALPN_H2, TLS_ALPN_HTTP11 (static
 * strings), or NULL (none, or one we never offer). */
static inline const char *tls_alpn_name(const void *p, size_t n)
{
	if (!p || !n)
		return NULL;
	if (tls_alpn_is(p, n, TLS_ALPN_H2, sizeof(TLS_ALPN_H2) - 1))
		return TLS_ALPN_H2;
	if (tls_alpn_is(p, n, TLS_ALPN_HTTP11, sizeof(TLS_ALPN_HTTP11) - 1))
		return TLS_ALPN_HTTP11;
	return NULL;
}

#endif
