/* cli.c — argument parsing shared by the commands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plat/plat.h"
#include "cli.h"
#include "../conf/opts.h"

/* The parsers are the options module's (conf/opts.c), so a value means
 * the same on every command line. */
int cli_parse_ipv4(const char *s, uint32_t *ip)
{
	return opt_parse_ipv4(s, ip);
}

int cli_parse_mac(const char *s, uint8_t mac[6])
{
	return opt_parse_mac(s, mac);
}

unsigned long cli_parse_ulong(const char *cmd, const char *opt, const char *s, unsigned long lo,
			      unsigned long hi)
{
	uint64_t v;
	if (opt_parse_dec(s, &v) < 0 || v < lo || v > hi)
		cli_usage_error(cmd, "%s: '%s' is not a number in %lu..%lu", opt, s, lo, hi);
	return (unsigned long)v;
}

static void write_file(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, ctx);
}

void cli_help(const struct opt_cmd *cmd, FILE *f)
{
	opt_help(cmd, write_file, f);
}

void cli_parse(struct opts *o, const struct opt_cmd *cmd, int argc, char **argv)
{
	char err[256];
	if (opt_init(o, cmd, err, sizeof(err)) < 0)
		cli_usage_error(cmd->name, "%s", err);
	int r = opt_parse_argv(o, argc, argv, err, sizeof(err));
	if (r == OPT_HELP) {
		cli_help(cmd, stdout);
		exit(0);
	}
	if (r < 0)
		cli_usage_error(cmd->name, "%s", err);
}

void cli_check(int rc, const char *cmd, const char *err)
{
	if (rc < 0)
		cli_usage_error(cmd, "%s", err);
}

int cli_random_mac(uint8_t mac[6])
{
	if (plat_random(mac, 6) < 0)
		return -1;
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02); /* unicast, locally administered */
	return 0;
}

void cli_format_ipv4(uint32_t ip, char out[16])
{
	opt_format_ipv4(ip, out);
}

void cli_format_mac(const uint8_t m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static const char *program;

void cli_program(const char *name)
{
	program = name;
}

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	const char *pre = program && !strcmp(cmd, program) ? "" : "skiff ";
	fprintf(stderr, "%s%s: ", pre, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s%s --help'.\n", pre, cmd);
	exit(2);
}
