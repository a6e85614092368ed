/* tls_host.h — the hosted TLS engines by name (--tls-engine): one place
 * where a runtime makes a server context, so that it never names a
 * library.  Whatever engine made a context, tls_host_ops/_reload/_stats/
 * _free find it through the context itself (struct tls_ctx_head).
 *
 *   openssl  tls_openssl.c, OpenSSL 3 (the default: the library users
 *            audit, and the one nginx uses)
 *   gnutls   tls_gnutls.c, GnuTLS 3.7
 *   wolfssl  tls_wolfssl.c, wolfSSL 5.5 (the unikernel's TLS 1.3 engine) */
#ifndef TLS_TLS_HOST_H
#define TLS_TLS_HOST_H

#include "tls_engine.h"

#define TLS_HOST_DEFAULT "openssl"

/* A server context of engine `engine` (NULL: TLS_HOST_DEFAULT), with the
 * certificate chain and key files and the options of tls_openssl_server.
 * NULL and a message in err on failure (an unknown engine's name too). */
struct tls_ctx *tls_host_server(const char *engine, const char *cert_file, const char *key_file,
				const struct tls_server_opts *o, char *err, size_t errlen);
/* The engine a context belongs to: for loop_tls_config.engine. */
const struct tls_engine_ops *tls_host_ops(const struct tls_ctx *ctx);
/* As tls_openssl_reload, tls_openssl_stats and tls_openssl_free, on the
 * context's own engine. */
int tls_host_reload(struct tls_ctx *ctx, const char *cert_file, const char *key_file, char *err,
		    size_t errlen);
void tls_host_stats(const struct tls_ctx *ctx,
		    void (*fn)(void *arg, const char *name, uint64_t v), void *arg);
void tls_host_free(struct tls_ctx *ctx);

#endif
