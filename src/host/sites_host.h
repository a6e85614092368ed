/* sites_host.h — the one hosted runtime: the sites of a configuration file
 * (conf/sites_conf.h), or the one site a command line describes
 * (conf/sites_flags.h), on the one HTTP engine (http/app.h) through the
 * router (http/sites.h), on --stack linux or skiff, in a Linux process.
 * `skiff serve` (cmd/serve.c), `skiff proxy` (cmd/proxy_cli.c) and
 * application binaries (cmd/app_cli.c) are its front ends. */
#ifndef APPS_SITES_HOST_H
#define APPS_SITES_HOST_H

#include "../conf/opts.h"

struct http_app_def;

/* Run until SIGINT/SIGTERM; SIGHUP reloads the file (or the flags' site:
 * its folder and certificates).  o: the parsed options of `skiff serve`,
 * `skiff proxy` (every --upstream an address: the front end resolves
 * names) or an application binary; with --config the file's sites, else
 * the flags' one.  app: what `app;` routes run (the binary's skiff_app;
 * its init once per worker, its `workers` flag honoured; without
 * --config the flags' site runs it at /), or NULL, which refuses `app;`.
 * name: for messages ("skiff serve" when NULL).  Returns the exit
 * status. */
int sites_host_run(struct opts *o, const struct http_app_def *app, const char *name);

#endif
