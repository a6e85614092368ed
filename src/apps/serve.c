/* serve.c — `skiff serve`: the command's front end.  Every site it serves,
 * the one its flags describe (conf/sites_flags.h: --root, the built-in
 * page, --tls-*) or the many of a file (--config FILE, docs/config.md),
 * runs in the one hosted runtime (apps/sites_host.c) on the one HTTP
 * engine (http/app.c), on either stack; so do `skiff proxy`
 * (apps/proxy_cli.c) and application binaries (apps/app_cli.c). */
#include "cli.h"
#include "sites_host.h"

int cmd_serve(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_serve, argc, argv);
	return sites_host_run(&o, NULL, NULL);
}
