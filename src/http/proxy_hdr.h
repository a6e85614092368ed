/* proxy_hdr.h — what a reverse proxy changes in the heads it forwards
 * (RFC 9110 7.6): pure functions over slices, no I/O, no allocation, so
 * the proxy engine (proxy.c) and its fuzzer (fuzz/fuzz_proxy_hdr.c) run
 * the same code.
 *
 * Toward the origin (proxy_req_head) the proxy writes a new head:
 *   METHOD SP target SP "HTTP/1.1" CRLF
 *   the client's field lines, minus the hop-by-hop ones (Connection and
 *     every field it names, Keep-Alive, TE, Trailer, Upgrade, Proxy-*),
 *     minus the framing (Content-Length, Transfer-Encoding: the proxy
 *     writes its own), minus Expect (the proxy answered 100-continue
 *     itself) and minus the forwarding fields it rewrites;
 *   X-Forwarded-For: the client's earlier list, then the client's address;
 *   X-Forwarded-Proto: as configured ("http");
 *   Via: the earlier list, then "1.x NAME" (x: the version the client spoke);
 *   Content-Length: N, or Transfer-Encoding: chunked (the body re-framed);
 *   CRLF.
 * Host is kept as sent (the origin routes virtual hosts by it); an
 * HTTP/1.0 request without one gets the configured name.
 *
 * Toward the client (proxy_resp_keep) the origin's field lines pass
 * minus the same hop-by-hop set, minus the framing and minus Date (the
 * application engine writes its own Connection, framing and Date). */
#ifndef HTTP_PROXY_HDR_H
#define HTTP_PROXY_HDR_H

#include "../base/sk.h"
#include "../base/sk_addr.h"
#include "../base/sk_err.h"

/* One field line, as slices (not terminated). */
struct proxy_field {
	const char *name;
	size_t nlen;
	const char *value;
	size_t vlen;
};

/* The tokens of every Connection line of one head (RFC 9110 7.6.1): each
 * names a field that is hop-by-hop.  More than PROXY_CONN_TOKENS distinct
 * tokens, or one longer than 64 bytes: `overflow` (the caller refuses the
 * message rather than forward a field it could not strip). */
#define PROXY_CONN_TOKENS 16u
struct proxy_conn_tokens {
	uint8_t n;
	bool overflow;
	struct {
		const char *p; /* points into the head */
		uint8_t len;
	} t[PROXY_CONN_TOKENS];
};

/* Collect the tokens of every field named Connection in f[0, n). */
void proxy_conn_tokens(struct proxy_conn_tokens *ct, const struct proxy_field *f, unsigned n);

/* Is the field named name[0, nlen) hop-by-hop: one of the fixed set, or
 * named by ct (may be NULL)? */
bool proxy_hop_by_hop(const char *name, size_t nlen, const struct proxy_conn_tokens *ct);

/* Case-insensitive: name[0, nlen) == lit (lower case). */
bool proxy_name_is(const char *name, size_t nlen, const char *lit);

/* The request toward the origin. */
#define PROXY_BODY_NONE UINT64_MAX        /* no body */
#define PROXY_BODY_CHUNKED (UINT64_MAX - 1) /* length unknown: chunked */
struct proxy_req_info {
	const char *method; /* the token as sent */
	size_t mlen;
	const char *target; /* the request-target as sent */
	size_t tlen;
	unsigned version;   /* 10 or 11: what the client spoke (for Via) */
	const struct sk_addr *client;
	const char *proto;  /* X-Forwarded-Proto, NUL-terminated */
	const char *via;    /* our pseudonym in Via, NUL-terminated ("skiff") */
	uint64_t body;      /* the body's length, or PROXY_BODY_NONE / _CHUNKED */
	const char *host;   /* Host to send when the client sent none (HTTP/1.0):
			     * 1.1 needs one (RFC 9112 3.2); NUL-terminated */
	bool host_replace;  /* send `host` in place of the client's Host too (a
			     * route's `proxy_host upstream;`: an origin that
			     * routes by its own name) */
};

/* Write the head into out[0, cap).  Returns its length, -SK_ENOBUFS when
 * it does not fit (in cap, or in HTTP_MAX_FIELDS lines with ours), or -SK_EINVAL when the head cannot be forwarded safely
 * (Connection tokens overflow). */
long proxy_req_head(uint8_t *out, size_t cap, const struct proxy_req_info *ri,
		    const struct proxy_field *f, unsigned n);

/* May a request carrying this Transfer-Encoding value be forwarded?  Only
 * exactly "chunked" (any case): the proxy decodes chunked and re-frames;
 * another coding it would silently drop. */
bool proxy_te_ok(const char *v, size_t vlen);

/* The next field line of a response head that http/resp.c accepted
 * (CRLF lines, "name:" then OWS value OWS): *pos starts at 0 (the status
 * line is skipped) and moves on.  false at the blank line. */
bool proxy_head_field(const uint8_t *head, size_t len, size_t *pos, struct proxy_field *f);

/* Does this origin field reach the client? */
bool proxy_resp_keep(const struct proxy_field *f, const struct proxy_conn_tokens *ct);

/* The client's address as text (dotted quad, or RFC 5952 IPv6) into
 * out[0, 40); returns the length. */
size_t proxy_format_addr(const struct sk_addr *a, char out[40]);

/* Methods a proxy may send again after a failure (RFC 9110 9.2.2). */
bool proxy_idempotent(unsigned method);

#endif
