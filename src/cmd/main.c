/* main.c — the skiff command line: one binary, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "../host/cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"echo", cmd_echo, "answer ARP, ICMP echo and UDP echo (port 7) on a device"},
	{"switch", cmd_switch, "a learning Ethernet switch over shared memory (switch:NAME/PORT)"},
	{"pktgen", cmd_pktgen, "send or receive raw frames at full rate; reports Mpps, Gbit/s"},
	{"proxy", cmd_proxy, "reverse proxy in front of HTTP servers (--upstream ADDR:PORT,...)"},
	{"serve", cmd_serve, "HTTP/1.1 server (GET, HEAD; --root DIR) on --stack linux or skiff"},
	{"check", cmd_check, "validate a configuration file (docs/config.md), as nginx -t"},
	{"stat", cmd_stat, "a running skiff serve's connections and counters (its control socket)"},
	{"vm", cmd_vm, "boot the skiff unikernel under QEMU (virtio-net, user net or TAP)"},
	{"tcp-client", cmd_tcp_client, "skiff's TCP as a client: send a payload, check the echo (sha256)"},
	{"load", cmd_load, "HTTP/1.1 load generator (keep-alive or close) on --stack linux or skiff"},
	{"ping", cmd_ping, "ICMP echo from skiff's stack; checks every reply's payload"},
	{"impair", cmd_impair, "a netem-like impairing relay between two interfaces (tests)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: skiff COMMAND [options]   (skiff COMMAND --help for its options)\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nDEV is tap:NAME | packet:IFACE | xdp:IFACE | switch:NAME/PORT\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "skiff: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
