/* sites_host.h — `skiff serve --config FILE`: the sites of a configuration
 * file (conf/sites_conf.h) on the one HTTP engine (http/app.h) through the
 * router (http/sites.h), on --stack linux or skiff, in a Linux process. */
#ifndef APPS_SITES_HOST_H
#define APPS_SITES_HOST_H

#include "../conf/opts.h"

struct http_app_def;

/* Run until SIGINT/SIGTERM; SIGHUP reloads the file.  o: the parsed
 * options (--config given) of `skiff serve` or of an application binary
 * (apps/app_host.c).  app: what the file's `app;` routes run (the
 * binary's skiff_app; its init once per worker, its `workers` flag
 * honoured), or NULL, which refuses `app;`.  name: for messages ("skiff
 * serve" when NULL).  Returns the exit status. */
int sites_host_run(struct opts *o, const struct http_app_def *app, const char *name);

#endif
