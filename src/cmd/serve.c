/* serve.c — `skiff serve`: the command's front end.  Every site it serves,
 * the one its flags describe (conf/sites_flags.h: --root, the built-in
 * page, --tls-*) or the many of a file (--config FILE, docs/config.md),
 * runs in the one hosted runtime (host/sites_host.c) on the one HTTP
 * engine (http/app.c), on either stack; so do `skiff proxy`
 * (cmd/proxy_cli.c) and application binaries (cmd/app_cli.c). */
#include "../host/cli.h"
#include "../host/sites_host.h"

int cmd_serve(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_serve, argc, argv);
	return sites_host_run(&o, NULL, NULL);
}
