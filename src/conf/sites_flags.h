/* sites_flags.h — the one-site case of `skiff serve`'s flags (and of the
 * unikernel's boot words, the same options module) as the configuration
 * model of sites_conf.h, so that a command line and a file fill ONE
 * structure (issue 32: "the command-line flags and the unikernel's boot
 * words become thin ways to fill it").
 *
 * What the flags say, as a file would say it:
 *   --port P [--ip A]        listen A:P (A only on --stack linux: on skiff's
 *                            stack the interface owns its address, and the
 *                            listener takes every address; without --ip,
 *                            every address)
 *   --root DIR               route / { files DIR; } with --cache-control as
 *                            its cache_control; else
 *   --upstream A:P,...       (`skiff proxy`) route / { proxy A:P ...; } with
 *                            --cache, --balance, --pool, the timeouts,
 *                            --fail-max, --no-x-cache and --purge-allow as
 *                            its directives (every one, defaults too);
 *                            addresses only (the hosted front end resolves
 *                            names first); else
 *   app                      (an application binary) route / { app; };
 *                            else the built-in page:
 *                            route = / { return 200 HTTP_HELLO_BODY; }
 *                            (any other path: 404)
 *   --tls-cert C --tls-key K a tls listener on --tls-port, the site's
 *                            certificate C K
 *   --http2 off              every listener's http2 off (HTTP/1.1 only)
 *   --tls-alpn http/1.1      the tls listener's http2 off (its ALPN then
 *                            offers http/1.1 only; default h2,http/1.1)
 *   --tls-sni NAME:C:K       a site named NAME on the tls listener only,
 *                            with certificate C K and the same routes
 *   --tls-redirect           the plain listener's requests answered by a
 *                            site of its own: route / { redirect 301
 *                            https://$host[:TLS_PORT]$request_uri; }
 *   --workers, --max-conns, --header-timeout, --body-timeout, --send-timeout,
 *   --keepalive-timeout, --max-body, --access-log, --error-log
 *                            the server-wide fields (a command's defaults
 *                            count: skiff proxy's max-conns is 256)
 * The site the flags describe has no name and is its listeners' default
 * (every Host).  Strings point into the options (the command line) or
 * into the arena; the sites array is in the arena.
 *
 * Freestanding, as the parser.
 */
#ifndef CONF_SITES_FLAGS_H
#define CONF_SITES_FLAGS_H

#include "opts.h"
#include "sites_conf.h"

/* The page `skiff serve` answers at / without --root, --upstream or an
 * application (seed 000's body). */
#define HTTP_HELLO_BODY "Hello, world! This is skiff serving you.\n"
#define HTTP_HELLO_LEN 41u

/* Bytes of arena sites_conf_from_flags needs at most. */
size_t sites_flags_arena_bound(void);

/* Fill *out from o (a parsed `skiff serve`, `skiff proxy`, application
 * or guest command line).  on_skiff: skiff's own stack (the listener
 * takes every address).  app: an application is linked in, which the
 * site runs without --root or --upstream.  0, or -1 with a message in
 * err (an arena too small, an upstream given by name). */
int sites_conf_from_flags(const struct opts *o, bool on_skiff, bool app, void *arena, size_t size,
			  struct sconf *out, char *err, size_t errlen);

/* ---- the unikernel's boot words (uk/uk_sites.c) ----
 * The guest's words are `skiff serve`'s minus the files: its site archive
 * and PEM files come in the boot module (`skiff vm --root DIR --tls-cert
 * C --tls-key K`), so the runtime names them here, and the model's
 * strings are its keys for them: */
struct sites_guest_src {
	const char *root;  /* the site archive: route / { files ROOT; }; NULL: the built-in page */
	const char *cert;  /* the PEM files: a tls listener on tls-port=; NULL: none */
	const char *key;
	uint16_t metrics;  /* metrics=PORT: a listener whose one site answers
			    * route = /metrics { metrics; } (any other path: 404); 0: none */
	bool app;          /* an application image: route / { app; } without root */
};

/* sites_conf_from_flags(o, true, ...) as if --root ROOT --tls-cert CERT
 * --tls-key KEY were given, then the metrics listener; max_conns is the
 * word's (its default is the guest's, 2048).  0, or -1 with the message. */
int sites_conf_from_guest(const struct opts *o, const struct sites_guest_src *g, void *arena,
			  size_t size, struct sconf *out, char *err, size_t errlen);

/* metrics=PORT in the model: a listener on every address at port whose
 * one site (the listener's default) answers route = /metrics { metrics; }
 * (any other path: 404).  room is c->sites[c->nsites], which the caller
 * has room for; nsites grows by one.  0, or -1 with the message (no room
 * for a listener). */
int sites_conf_add_metrics(struct sconf *c, struct sconf_site *room, uint16_t port, char *err,
			   size_t errlen);

#endif
