/* tls_gnutls.h — the hosted TLS engine on GnuTLS 3.7 (tls_gnutls.c), the
 * same contract as the OpenSSL one (tls_engine.h): TLS 1.2 and 1.3,
 * AES-GCM and ChaCha20-Poly1305, X25519 then P-256, ALPN http/1.1 (h2
 * first with alpn_h2), certificates by name (SNI), session tickets, reload.  Chosen with
 * --tls-engine gnutls (tls_host.h).
 *
 * Tickets differ from the OpenSSL engine's in who rotates the key: GnuTLS
 * derives each period's key from one random master key (a new one at
 * start and at each reload) and the period's number, and still opens the
 * tickets of the period before.  The period is ticket_rotate_s (rounded
 * down to a multiple of 3 s), counted from the epoch, and a ticket lives
 * ticket_rotate_s / 3 (GnuTLS's period is three ticket lifetimes): so a
 * ticket resumes for its whole life, whichever side of a key change it
 * was sealed on, and never under a third key. */
#ifndef TLS_TLS_GNUTLS_H
#define TLS_TLS_GNUTLS_H

#include "tls_engine.h"

/* As tls_openssl_server: NULL and a message in err on failure. */
struct tls_ctx *tls_gnutls_server(const char *cert_file, const char *key_file,
				  const struct tls_server_opts *o, char *err, size_t errlen);
void tls_gnutls_free(struct tls_ctx *ctx);
/* As tls_openssl_reload: all certificates or none; a new master key, so
 * no ticket sealed before resumes. */
int tls_gnutls_reload(struct tls_ctx *ctx, const char *cert_file, const char *key_file,
		      char *err, size_t errlen);
/* tls.gnutls_sessions (connections this engine took: which engine ran),
 * tls.ticket_rotations (key periods begun while serving), tls.tickets_sealed,
 * tls.tickets_opened, tls.tickets_unknown (a ticket offered that did not
 * resume: a full handshake), tls.reloads, tls.reload_failures; with SNI
 * certificates tls.sni_matched and tls.sni_default.  (No
 * tls.tickets_renewed: GnuTLS does not say which period's key opened a
 * ticket.) */
void tls_gnutls_stats(const struct tls_ctx *ctx,
		      void (*fn)(void *arg, const char *name, uint64_t v), void *arg);
extern const struct tls_engine_ops tls_gnutls_ops;

#endif
