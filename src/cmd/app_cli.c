/* app_cli.c — skiff_app_main (http/app.h): an application binary's
 * command line as a front end of the sites runtime (host/sites_host.h).
 * Without --config its flags are one site whose one route runs the
 * application (`route / { app; }`, conf/sites_flags.h); with --config the
 * file's `app;` routes do.  Either way the same engine, workers, TLS,
 * drain, reload and counters as `skiff serve`. */
#include "../conf/opts.h"
#include "../http/app.h"
#include "../host/cli.h"
#include "../host/sites_host.h"

int skiff_app_main(const struct http_app_def *def, int argc, char **argv)
{
	static struct opts o;
	cli_parse(&o, &opt_cmd_app, argc, argv);
	return sites_host_run(&o, def, def->name ? def->name : "app");
}
