/* uk_app.h — an image that brings its own command-line words: the
 * reverse proxy's (build/skiff-proxy-uk.elf, uk/uk_proxy.c).  Such an
 * image is skiff-uk.elf linked with one object defining `uk_app` (weak in
 * uk_main.c; mk/unikernel.mk builds it).  Without it the guest is the
 * static server, or the application of `skiff_app` (http/app.h).
 *
 * The words only: what serves is the sites runtime (uk/uk_sites.h) for
 * every image, and the proxy's words fill its one site as `skiff proxy`'s
 * flags fill it hosted (conf/sites_flags.h: route / { proxy ...; }). */
#ifndef APPS_UK_APP_H
#define APPS_UK_APP_H

#include "../conf/opts.h"

struct uk_app_hooks {
	/* The table for the command line: a superset of opt_cmd_uk's words,
	 * the same entries of conf/opts.c the hosted command uses. */
	const struct opt_cmd *(*cmd)(void);
	/* How to list the words, for the bad-command-line line
	 * ("skiff vm --proxy -- help"). */
	const char *help_cmd;
	/* The words' site is the proxy's (uk_sites_env.proxy). */
	bool proxy;
};

#endif
