/* echo.c — `skiff echo`: a host that answers ARP, ICMP echo and UDP echo
 * (port 7) on one device.  The first thing a Linux peer can talk to. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dev/dev_open.h"
#include "../net/iface.h"
#include "../plat/plat.h"
#include "cli.h"
#include "netloop.h"

#define ECHO_PORT 7

static volatile sig_atomic_t echo_stop;

static void on_signal(int sig)
{
	(void)sig;
	echo_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: skiff echo --dev DEV --ip ADDR/LEN [--gw ADDR] [--mac MAC] [--stats]\n"
		"                  [--pcap FILE] [--spin-us N]\n"
		"\n"
		"Answers ARP, ICMP echo and UDP echo (port 7) as ADDR on DEV.\n"
		"\n"
		"  --dev DEV      tap:NAME | packet:IFACE | xdp:IFACE | switch:NAME/PORT\n"
		"  --ip ADDR/LEN  this host's IPv4 address and prefix length\n"
		"  --gw ADDR      default gateway (optional)\n"
		"  --mac MAC      this host's MAC (default: random, locally administered)\n"
		"  --stats        print counters on exit\n"
		"  --pcap FILE    record every frame the device sees\n"
		"  --spin-us N    poll this long after work before parking (default 100)\n"
		"  -h, --help     this text\n"
		"\n"
		"Prints one line when ready; SIGINT or SIGTERM stops it (exit 0).\n");
}

static void echo_udp(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint16_t sport,
		     uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx;
	udp_sendto(ifc, now, dport, src, sport, data, len);
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

int cmd_echo(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", required_argument, NULL, 'd'},  {"ip", required_argument, NULL, 'i'},
		{"gw", required_argument, NULL, 'g'},   {"mac", required_argument, NULL, 'm'},
		{"stats", no_argument, NULL, 's'},      {"pcap", required_argument, NULL, 'p'},
		{"spin-us", required_argument, NULL, 'S'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dev_spec = NULL, *pcap = NULL;
	struct iface_config cfg = {0};
	bool have_ip = false, have_mac = false, stats = false;
	long spin_us = 100;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_spec = optarg; break;
		case 'i':
			if (cli_parse_cidr(optarg, &cfg.ip, &cfg.prefix_len) < 0)
				cli_usage_error("echo", "--ip wants ADDR/LEN (e.g. 198.18.0.2/24), not '%s'", optarg);
			have_ip = true;
			break;
		case 'g':
			if (cli_parse_ipv4(optarg, &cfg.gw) < 0)
				cli_usage_error("echo", "--gw wants an IPv4 address, not '%s'", optarg);
			break;
		case 'm':
			if (cli_parse_mac(optarg, cfg.mac) < 0)
				cli_usage_error("echo", "--mac wants a unicast MAC like 02:00:00:00:00:01, not '%s'", optarg);
			have_mac = true;
			break;
		case 's': stats = true; break;
		case 'p': pcap = optarg; break;
		case 'S': {
			char *end;
			spin_us = strtol(optarg, &end, 10);
			if (*end || end == optarg || spin_us < 0 || spin_us > 1000000)
				cli_usage_error("echo", "--spin-us wants 0..1000000, not '%s'", optarg);
			break;
		}
		case 'h': usage(stdout); return 0;
		default:
			cli_usage_error("echo", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_usage_error("echo", "unexpected argument '%s'", argv[optind]);
	if (!dev_spec)
		cli_usage_error("echo", "--dev is required");
	if (!have_ip)
		cli_usage_error("echo", "--ip is required");
	if (cfg.gw) {
		uint32_t mask = cfg.prefix_len == 32 ? ~0u : ~(~0u >> cfg.prefix_len);
		if ((cfg.gw & mask) != (cfg.ip & mask))
			cli_usage_error("echo", "--gw must be inside the --ip subnet");
	}

	char err[256];
	struct dev *dev;
	struct dev_config dcfg = {.pcap_path = pcap};
	if (dev_open(dev_spec, &dcfg, &dev, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff echo: %s\n", err);
		return 1;
	}
	if (!have_mac && cli_random_mac(cfg.mac) < 0) {
		fprintf(stderr, "skiff echo: no randomness for a MAC\n");
		return 1;
	}
	memcpy(dev->mac, cfg.mac, 6);
	if (plat_random(&cfg.seed, sizeof(cfg.seed)) < 0) {
		fprintf(stderr, "skiff echo: no randomness\n");
		return 1;
	}

	struct iface *ifc = calloc(1, sizeof(*ifc));
	if (!ifc) {
		fprintf(stderr, "skiff echo: out of memory\n");
		return 1;
	}
	sk_time_ns now = plat_now();
	iface_init(ifc, dev, &cfg, now);
	if (udp_bind(ifc, ECHO_PORT, echo_udp, NULL) < 0) {
		fprintf(stderr, "skiff echo: cannot bind UDP port %d\n", ECHO_PORT);
		return 1;
	}
	iface_announce(ifc, now);
	dev_tx_sync(dev);

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char ipbuf[16], macbuf[18];
	cli_format_ipv4(cfg.ip, ipbuf);
	cli_format_mac(cfg.mac, macbuf);
	printf("skiff echo: ready dev=%s ip=%s/%u mac=%s udp_echo=%d\n", dev->name, ipbuf,
	       cfg.prefix_len, macbuf, ECHO_PORT);
	fflush(stdout);

	struct netloop loop = {.dev = dev, .ifc = ifc, .spin_ns = (uint64_t)spin_us * SK_NS_PER_US};
	int rc = netloop_run(&loop, &echo_stop);
	if (stats) {
		dev_print_stats(dev, stdout);
		netloop_print_stats(&loop, stdout);
		iface_stats(ifc, print_stat, stdout);
	}
	fflush(stdout);
	dev_close(dev);
	free(ifc);
	return rc < 0 ? 1 : 0;
}
