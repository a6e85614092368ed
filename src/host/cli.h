/* cli.h — argument helpers shared by the skiff commands.  Every command
 * prints a clear message and exits 2 on a bad argument (cli_usage_error). */
#ifndef APPS_CLI_H
#define APPS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../conf/opts.h"

/* "198.18.0.1" -> host order (strict dotted quad).  Returns 0 or -1. */
int cli_parse_ipv4(const char *s, uint32_t *ip);
/* "02:00:00:aa:bb:cc" -> 6 bytes; refuses multicast and all-zero. Returns 0 or -1. */
int cli_parse_mac(const char *s, uint8_t mac[6]);
/* A decimal number in [lo, hi] for option `opt` of command `cmd`, or a
 * usage error (exit 2). */
unsigned long cli_parse_ulong(const char *cmd, const char *opt, const char *s, unsigned long lo,
			      unsigned long hi);

/* The commands on the options module (conf/opts.h): opt_init and
 * opt_parse_argv for cmd; --help prints the help on stdout and exits 0, a
 * bad option is a usage error (exit 2) with the module's message. */
void cli_parse(struct opts *o, const struct opt_cmd *cmd, int argc, char **argv);
void cli_help(const struct opt_cmd *cmd, FILE *f);
/* A usage error with err's message when rc < 0 (opt_check_stack, ...). */
void cli_check(int rc, const char *cmd, const char *err);

/* A random locally administered unicast MAC. */
int cli_random_mac(uint8_t mac[6]);

void cli_format_ipv4(uint32_t ip, char out[16]);
void cli_format_mac(const uint8_t mac[6], char out[18]);

/* The process is a program of its own, not a skiff command (an
 * application binary, skiff_app_main): usage errors for the command
 * named name print "NAME: MSG" and "Try 'NAME --help'." */
void cli_program(const char *name);

/* Print "skiff CMD: MSG" and a pointer to --help on stderr, exit 2 (for
 * cli_program's name: "CMD: MSG"). */
__attribute__((noreturn, format(printf, 2, 3))) void cli_usage_error(const char *cmd,
								     const char *fmt, ...);

int cmd_echo(int argc, char **argv);
int cmd_switch(int argc, char **argv);
int cmd_pktgen(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_vm(int argc, char **argv);
int cmd_tcp_client(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_impair(int argc, char **argv);
int cmd_proxy(int argc, char **argv);
int cmd_check(int argc, char **argv);

#endif
