/* sites_host.h — `skiff serve --config FILE`: the sites of a configuration
 * file (conf/sites_conf.h) on the one HTTP engine (http/app.h) through the
 * router (http/sites.h), on --stack linux or skiff, in a Linux process. */
#ifndef APPS_SITES_HOST_H
#define APPS_SITES_HOST_H

#include "../conf/opts.h"

/* Run until SIGINT/SIGTERM; SIGHUP reloads the file.  o: the parsed
 * `skiff serve` options (--config given).  Returns the exit status. */
int sites_host_run(struct opts *o);

#endif
