/* tls_host.c — see tls_host.h. */
#include "tls_host.h"

#include <stdio.h>
#include <string.h>

#include "tls_gnutls.h"
#include "tls_wolfssl.h"

struct tls_ctx *tls_host_server(const char *engine, const char *cert_file, const char *key_file,
				const struct tls_server_opts *o, char *err, size_t errlen)
{
	if (!engine)
		engine = TLS_HOST_DEFAULT;
	if (!strcmp(engine, "openssl"))
		return tls_openssl_server(cert_file, key_file, o, err, errlen);
	if (!strcmp(engine, "gnutls"))
		return tls_gnutls_server(cert_file, key_file, o, err, errlen);
	if (!strcmp(engine, "wolfssl"))
		return tls_wolfssl_server(cert_file, key_file, o, err, errlen);
	snprintf(err, errlen, "tls: no engine '%s' (openssl, gnutls or wolfssl)", engine);
	return NULL;
}

const struct tls_engine_ops *tls_host_ops(const struct tls_ctx *ctx)
{
	return ((const struct tls_ctx_head *)(const void *)ctx)->ops;
}

int tls_host_reload(struct tls_ctx *ctx, const char *cert_file, const char *key_file, char *err,
		    size_t errlen)
{
	return tls_host_ops(ctx)->ctx_reload(ctx, cert_file, key_file, err, errlen);
}

void tls_host_stats(const struct tls_ctx *ctx,
		    void (*fn)(void *arg, const char *name, uint64_t v), void *arg)
{
	tls_host_ops(ctx)->ctx_stats(ctx, fn, arg);
}

void tls_host_free(struct tls_ctx *ctx)
{
	if (ctx)
		tls_host_ops(ctx)->ctx_free(ctx);
}
