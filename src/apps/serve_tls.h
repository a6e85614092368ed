/* serve_tls.h — `skiff serve --tls-cert F --tls-key F [--tls-port N]
 * [--tls-sni NAME:CERT:KEY]...`: a second HTTP server, the same code and
 * configuration as the plain one but on port N, running on a TLS loop
 * (tls/loop_tls.h) over the same loop.  The plain server keeps its port.
 * A hosted application (app_host.c) takes the TLS loop alone
 * (serve_tls_open) and runs a second engine of its own on it. */
#ifndef APPS_SERVE_TLS_H
#define APPS_SERVE_TLS_H

#include <stdio.h>

#include "../http/app.h"
#include "../http/server.h"
#include "../tls/tls_engine.h"
#include "../conf/opts.h"

struct serve_tls {
	struct tls_ctx *ctx;
	struct loop *loop; /* the TLS loop, over the serve loop */
	struct http_server *srv; /* serve_tls_start's; NULL after serve_tls_open alone */
	struct http_app *app;    /* the caller's engine on loop, if any (not owned): its stats */
	void *mem;
	size_t memsz;
	uint16_t port;
	const char *cert, *key; /* the files, as given (argv): read again on reload */
};

/* Whether the options ask for HTTPS; exits 2 (the usage error) on
 * --tls-cert without --tls-key, or the other way round. */
bool serve_tls_wanted(const struct opts *o);
/* Load the certificates and keys (--tls-cert/--tls-key, --tls-sni) and
 * make the TLS loop over inner; nothing listens yet.  http_port: --port,
 * which --tls-port must not be.  0, or -1 with a message in err. */
int serve_tls_open(struct serve_tls *t, struct loop *inner, uint16_t http_port,
		   const struct opts *o, char *err, size_t errlen);
/* serve_tls_open, then the HTTPS server listening on it.  0, or -1 with a
 * message in err (the caller exits 1). */
int serve_tls_start(struct serve_tls *t, struct loop *inner, const struct http_server_config *cfg,
		    const struct opts *o, char *err, size_t errlen);
/* SIGHUP: read the certificate chain and key files again
 * (tls_openssl_reload: new connections get them, open ones keep the old
 * ones).  -1 with a message in err: the old ones stay. */
int serve_tls_reload(struct serve_tls *t, char *err, size_t errlen);
/* Stop listening and print the https.* and tls.* counters (f NULL: none). */
void serve_tls_stop(struct serve_tls *t, FILE *f);
/* The https.* (the server's, or the application's in t->app), TLS loop
 * and tls.* counters through fn (nothing before serve_tls_open). */
void serve_tls_stats(struct serve_tls *t, void (*fn)(void *ctx, const char *name, uint64_t v),
		     void *ctx);
/* Give everything back (after the inner loop stopped running). */
void serve_tls_free(struct serve_tls *t);

#endif
