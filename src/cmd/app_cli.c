/* app_cli.c — skiff_app_main (http/app.h): an application binary's
 * command line as a front end of the sites runtime (host/sites_host.h).
 * Without --config its flags are one site whose one route runs the
 * application (`route / { app; }`, conf/sites_flags.h); with --config the
 * file's `app;` routes do.  Either way the same engine, workers, TLS,
 * drain, reload and counters as `skiff serve`. */
#include <stdlib.h>
#include <string.h>

#include "../conf/opts.h"
#include "../http/app.h"
#include "../host/cli.h"
#include "../host/sites_host.h"

int skiff_app_main(const struct http_app_def *def, int argc, char **argv)
{
	/* The binary is its own program: its messages and its help name it
	 * as it was run (build/app/counter: "counter"), not `skiff app`. */
	const char *name = argc > 0 && argv[0] && argv[0][0] ? argv[0] : def->name ? def->name : "app";
	const char *slash = strrchr(name, '/');
	if (slash && slash[1])
		name = slash + 1;
	static struct opt_cmd cmd;
	cmd = opt_cmd_app;
	cmd.name = name;
	/* "APP [--config FILE] ...": the synopsis with its name. */
	const char *syn = opt_cmd_app.synopsis;
	if (!strncmp(syn, "APP", 3)) {
		size_t nl = strlen(name), sl = strlen(syn + 3);
		char *s = malloc(nl + sl + 1);
		if (s) {
			memcpy(s, name, nl);
			memcpy(s + nl, syn + 3, sl + 1);
			cmd.synopsis = s;
		}
	}
	cli_program(name);
	static struct opts o;
	cli_parse(&o, &cmd, argc, argv);
	return sites_host_run(&o, def, def->name ? def->name : name);
}
