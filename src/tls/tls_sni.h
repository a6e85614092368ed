/* tls_sni.h — which certificate a client's server name (SNI) picks, by the
 * rules of tls_engine.h (struct tls_sni): an exact name (ignoring case)
 * first, then "*.DOMAIN" for exactly one label before DOMAIN.  Shared by
 * the hosted engines, so that both choose alike. */
#ifndef TLS_TLS_SNI_H
#define TLS_TLS_SNI_H

/* The index in names[0..n) (lower case, NUL-terminated) that `name` picks,
 * or -1 for none (then the default certificate). */
int tls_sni_pick(char *const *names, unsigned n, const char *name);
/* s in lower case, in place (the names as kept). */
void tls_sni_lower(char *s);

#endif
