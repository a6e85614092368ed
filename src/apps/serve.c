/* serve.c — `skiff serve`: the command's front end.  Every site it serves,
 * the one its flags describe (conf/sites_flags.h: --root, the built-in
 * page, --tls-*) or the many of a file (--config FILE, docs/config.md),
 * runs in the one hosted runtime (apps/sites_host.c) on the one HTTP
 * engine (http/app.c), on either stack.  What is left here are the checks
 * of the command line that the model cannot express. */
#include <stdio.h>

#include "cli.h"
#include "serve_tls.h"
#include "sites_host.h"

int cmd_serve(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_serve, argc, argv);
	if (!opt_given(&o, OPT_CONFIG)) {
		/* --tls-cert and --tls-key together, and the other --tls-* only
		 * with them (exit 2); a TLS port of its own. */
		if (serve_tls_wanted(&o) && opt_num(&o, OPT_TLS_PORT) == opt_num(&o, OPT_PORT))
			cli_usage_error("serve", "--tls-port %llu is --port too: give each its own",
					(unsigned long long)opt_num(&o, OPT_PORT));
		if (!opt_given(&o, OPT_ACCESS_LOG) && opt_given(&o, OPT_ACCESS_LOG_FORMAT))
			cli_usage_error("serve", "access-log-format goes with access-log");
	}
	return sites_host_run(&o, NULL, NULL);
}
