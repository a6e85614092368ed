/* tls_sni.h — which certificate a client's server name (SNI) picks, by the
 * rules of tls_engine.h (struct tls_sni): an exact name (ignoring case)
 * first, then "*.DOMAIN" for exactly one label before DOMAIN.  Shared by
 * the hosted engines, so that both choose alike. */
#ifndef TLS_TLS_SNI_H
#define TLS_TLS_SNI_H

#include <stddef.h>
#include <stdint.h>

/* The index in names[0..n) (lower case, NUL-terminated) that `name` picks,
 * or -1 for none (then the default certificate). */
int tls_sni_pick(char *const *names, unsigned n, const char *name);
/* s in lower case, in place (the names as kept). */
void tls_sni_lower(char *s);

/* The host name in the body of a ClientHello's server_name extension
 * (RFC 6066 3: a ServerNameList of {name_type, HostName<1..2^16-1>}),
 * read as OpenSSL does: exactly one entry, of type host_name (0).  Its
 * length (> 0), with *name pointing into p (not NUL-terminated, case as
 * sent); -1 when the body is not that.  For an engine that must know the
 * name before its library has read it (tls_openssl.c's session binding). */
long tls_sni_from_ext(const uint8_t *p, size_t n, const uint8_t **name);

/* A session is bound to the name asked for (tls_openssl.c, tls_gnutls.c,
 * tls_wolfssl.c): each engine hashes this text with its own library, in
 * one call.  A host name is at most 255 bytes (RFC 6066 3, RFC 1035
 * 2.3.4). */
#define TLS_SNI_NAME_MAX 255
#define TLS_SNI_TAG "skiff sni "
#define TLS_SNI_TAG_LEN (sizeof(TLS_SNI_TAG) - 1)
#define TLS_SNI_BIND_MAX (TLS_SNI_TAG_LEN + TLS_SNI_NAME_MAX)
/* Into out: the tag TLS_SNI_TAG and the name's len bytes in lower case;
 * the text's length, TLS_SNI_TAG_LEN + len.  No name (len 0): nothing,
 * 0 (each engine binds that its own way).  A name that is none (len < 0:
 * a server_name not read; len > TLS_SNI_NAME_MAX): the tag and a NUL,
 * TLS_SNI_TAG_LEN + 1, a text no name gives. */
size_t tls_sni_bind_text(char out[TLS_SNI_BIND_MAX], const void *name, long len);

#endif
