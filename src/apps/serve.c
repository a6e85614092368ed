/* serve.c — `skiff serve`: the HTTP/1.1 server (http/server.c) on a loop
 * backend chosen by --stack: `linux` (kernel sockets, epoll,
 * loop/loop_linux.c) or `skiff` (skiff's own TCP/IP on a --dev,
 * loop/loop_skiff.c run by apps/serve_skiff.c).  Everything after the
 * loop is built is the same code for both. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "../base/hist.h"
#include "../http/date.h"
#include "../http/server.h"
#include "../loop/loop_linux.h"
#include "../plat/plat.h"
#include "cli.h"
#include "serve_files.h"
#include "serve_skiff.h"

static volatile int serve_stop;

static void on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: skiff serve [--stack skiff|linux] [--dev DEV] [--ip ADDR/LEN] [--gw ADDR]\n"
		"                   [--port N] [--root DIR] [--stats] [--pcap FILE] [--max-conns N]\n"
		"                   [--header-timeout S] [--keepalive-timeout S] [--max-body N]\n"
		"                   [--spin-us N] [--trace]\n"
		"\n"
		"Serves HTTP/1.1 (GET, HEAD): '/' answers a 41-byte hello world, or with --root\n"
		"every file under DIR (loaded into memory at start).\n"
		"\n"
		"  --stack S              linux: kernel sockets (epoll); skiff: skiff's own TCP/IP\n"
		"                         on --dev.  Default: skiff with --dev, linux without\n"
		"  --dev DEV              tap:NAME | packet:IFACE | xdp:IFACE | switch:NAME/PORT\n"
		"                         (--stack skiff)\n"
		"  --ip ADDR[/LEN]        skiff: this host's address and prefix (ADDR/LEN,\n"
		"                         required); linux: the address to bind (default any)\n"
		"  --gw ADDR              default gateway                        (--stack skiff)\n"
		"  --port N               TCP port (default 80)\n"
		"  --root DIR             serve the files under DIR (no symlinks, no dotfiles)\n"
		"  --stats                print counters on exit\n"
		"  --pcap FILE            record every frame                     (--stack skiff)\n"
		"  --max-conns N          connections served at once (default 4096); beyond it a\n"
		"                         client gets 503 and a close\n"
		"  --header-timeout S     a request head must arrive within S s (default 10): 408\n"
		"  --keepalive-timeout S  idle keep-alive connections close after S s (default 60)\n"
		"  --max-body N           largest request body in bytes (default 1048576): 413\n"
		"  --spin-us N|auto       skiff: poll this long after work before parking\n"
		"                         (default 100); auto: learn it from the arrival gaps\n"
		"  --trace                time the request path with the cycle counter and print\n"
		"                         median and p99 of each stage at exit (see docs/cost.md)\n"
		"  -h, --help             this text\n"
		"\n"
		"Prints one line when listening; SIGINT or SIGTERM stops it (exit 0).\n");
}

static long parse_num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		cli_usage_error("serve", "%s wants a number in %ld..%ld, not '%s'", opt, lo, hi, s);
	return v;
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

/* ---- --trace ----
 * The histograms the core fills (base/hist.h); static, so off costs no
 * memory either.  The core only counts cycles: ns come from a calibration
 * of the counter against CLOCK_MONOTONIC, here and at exit. */
static struct sk_trace trace;

struct tsc_cal {
	uint64_t c0, n0;      /* at start, for the whole-run figure at exit */
	double ns_per_cycle;  /* from the 50 ms calibration at start */
	uint64_t empty;       /* median cycles of an empty timed region */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t cycles_fn(void)
{
	return plat_cycles();
}

static void trace_start(struct tsc_cal *cal)
{
	trace.cycles = cycles_fn;
	/* 50 ms of spinning: long enough for a few ppm on a constant TSC. */
	uint64_t n0 = mono_ns(), c0 = plat_cycles(), n1, c1;
	do {
		n1 = mono_ns();
		c1 = plat_cycles();
	} while (n1 - n0 < 50 * SK_NS_PER_MS);
	cal->ns_per_cycle = (double)(n1 - n0) / (double)(c1 - c0);
	/* What one begin/end pair adds to every sample: reported, not
	 * subtracted (a live sample is timed once, not in a loop). */
	static struct sk_hist empty;
	for (int i = 0; i < 10001; i++) {
		uint64_t a = trace.cycles();
		sk_hist_add(&empty, trace.cycles() - a);
	}
	cal->empty = sk_hist_quantile(&empty, 1, 2);
	cal->c0 = plat_cycles();
	cal->n0 = mono_ns();
}

static void trace_print(const struct tsc_cal *cal, const struct http_server *srv,
			struct loop *loop, bool on_skiff, FILE *f)
{
	double npc = cal->ns_per_cycle;
	uint64_t c1 = plat_cycles(), n1 = mono_ns();
	/* A run of a second or more calibrates better than 50 ms. */
	if (n1 - cal->n0 >= SK_NS_PER_S && c1 > cal->c0)
		npc = (double)(n1 - cal->n0) / (double)(c1 - cal->c0);
	fprintf(f, "trace tsc_ghz=%.4f ns_per_cycle=%.5f empty_region_cycles=%llu\n", 1.0 / npc,
		npc, (unsigned long long)cal->empty);
	for (int s = 0; s < SK_TR_N; s++) {
		const struct sk_hist *h = &trace.h[s];
		uint64_t med = sk_hist_quantile(h, 1, 2), p99 = sk_hist_quantile(h, 99, 100);
		fprintf(f,
			"trace %s samples=%llu median=%llu p99=%llu max=%llu mean=%.1f cycles "
			"median_ns=%.1f p99_ns=%.1f\n",
			sk_trace_names[s], (unsigned long long)h->count, (unsigned long long)med,
			(unsigned long long)p99, (unsigned long long)h->max,
			h->count ? (double)h->sum / (double)h->count : 0.0, (double)med * npc,
			(double)p99 * npc);
	}
	if (on_skiff) {
		const struct dev_stats *ds = serve_skiff_dev_stats(loop);
		uint64_t req = srv->st.requests;
		fprintf(f, "trace syscalls_per_request=%.3f rx=%.3f tx=%.3f requests=%llu\n",
			req ? (double)(ds->rx_syscalls + ds->tx_syscalls) / (double)req : 0.0,
			req ? (double)ds->rx_syscalls / (double)req : 0.0,
			req ? (double)ds->tx_syscalls / (double)req : 0.0,
			(unsigned long long)req);
	}
}

/* The Date header changes once a second: format it only then.  The
 * coarse realtime clock is read through the vDSO, not a system call. */
struct date_cache {
	struct http_server *srv;
	time_t sec;
};

static void refresh_date(void *ctx, sk_time_ns now)
{
	(void)now;
	struct date_cache *dc = ctx;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec == dc->sec)
		return;
	dc->sec = ts.tv_sec;
	/* The same formatter as the unikernel's (http/date.c). */
	char buf[HTTP_DATE_LEN];
	http_date_format(ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 0, buf);
	http_server_set_date(dc->srv, buf);
}

/* Descriptors: as many as allowed, since each connection is one. */
static rlim_t raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"stack", required_argument, NULL, 'S'},
		{"dev", required_argument, NULL, 'd'},
		{"ip", required_argument, NULL, 'i'},
		{"gw", required_argument, NULL, 'g'},
		{"port", required_argument, NULL, 'p'},
		{"root", required_argument, NULL, 'r'},
		{"stats", no_argument, NULL, 's'},
		{"pcap", required_argument, NULL, 'P'},
		{"max-conns", required_argument, NULL, 'm'},
		{"header-timeout", required_argument, NULL, 'H'},
		{"keepalive-timeout", required_argument, NULL, 'K'},
		{"max-body", required_argument, NULL, 'B'},
		{"spin-us", required_argument, NULL, 'U'},
		{"trace", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *stack = NULL, *dev = NULL, *root = NULL, *pcap = NULL;
	bool stats = false, tracing = false, have_gw = false, have_ip = false, have_plen = false, have_spin = false;
	long spin_us = 100;
	bool spin_learn = false;
	uint32_t ip = 0, gw = 0;
	uint8_t plen = 32;
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			if (strcmp(optarg, "skiff") && strcmp(optarg, "linux"))
				cli_usage_error("serve", "--stack wants skiff or linux, not '%s'", optarg);
			stack = optarg;
			break;
		case 'd': dev = optarg; break;
		case 'i':
			if (cli_parse_cidr(optarg, &ip, &plen) == 0)
				have_plen = true;
			else if (cli_parse_ipv4(optarg, &ip) < 0)
				cli_usage_error("serve", "--ip wants ADDR[/LEN] (e.g. 198.18.0.2/24), not '%s'",
						optarg);
			have_ip = true;
			break;
		case 'g':
			if (cli_parse_ipv4(optarg, &gw) < 0)
				cli_usage_error("serve", "--gw wants an IPv4 address, not '%s'", optarg);
			have_gw = true;
			break;
		case 'p': cfg.port = (uint16_t)parse_num("--port", optarg, 1, 65535); break;
		case 'r': root = optarg; break;
		case 's': stats = true; break;
		case 'P': pcap = optarg; break;
		case 'm': cfg.max_conns = (uint32_t)parse_num("--max-conns", optarg, 1, 1000000); break;
		case 'H':
			cfg.header_timeout =
				(sk_time_ns)parse_num("--header-timeout", optarg, 1, 86400) * SK_NS_PER_S;
			break;
		case 'K':
			cfg.keepalive_timeout =
				(sk_time_ns)parse_num("--keepalive-timeout", optarg, 1, 86400) * SK_NS_PER_S;
			break;
		case 'B':
			cfg.max_body = (uint64_t)parse_num("--max-body", optarg, 0, 1L << 40);
			break;
		case 'U':
			spin_learn = strcmp(optarg, "auto") == 0;
			if (!spin_learn)
				spin_us = parse_num("--spin-us", optarg, 0, 1000000);
			have_spin = true;
			break;
		case 'T': tracing = true; break;
		case 'h': usage(stdout); return 0;
		default:
			cli_usage_error("serve", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
	if (!stack)
		stack = dev ? "skiff" : "linux";
	bool on_skiff = !strcmp(stack, "skiff");
	if (on_skiff) {
		if (!dev)
			cli_usage_error("serve", "--stack skiff needs --dev DEV");
		if (!have_ip || !have_plen)
			cli_usage_error("serve", "--stack skiff needs --ip ADDR/LEN (e.g. 198.18.0.2/24)");
		uint32_t mask = plen == 32 ? ~0u : ~(~0u >> plen);
		if (have_gw && (gw & mask) != (ip & mask))
			cli_usage_error("serve", "--gw must be inside the --ip subnet");
	} else {
		if (dev || have_gw || pcap || have_spin)
			cli_usage_error("serve", "--dev, --gw, --pcap and --spin-us go with --stack "
						 "skiff; --stack linux uses the kernel's interfaces");
		/* Each connection is a descriptor: as many as allowed. */
		rlim_t nofile = raise_nofile();
		if (nofile < 64 || cfg.max_conns > nofile - 32) {
			uint32_t cap = nofile > 64 ? (uint32_t)(nofile - 32) : 32;
			fprintf(stderr,
				"skiff serve: --max-conns %u is above the open-files limit; using %u\n",
				cfg.max_conns, cap);
			cfg.max_conns = cap;
		}
	}
	cfg.addr = have_ip ? ip : 0;
	struct tsc_cal cal = {0};
	if (tracing) {
		trace_start(&cal);
		cfg.trace = &trace;
	}

	char err[256];
	struct file_cache *fc = NULL;
	if (root) {
		fc = file_cache_load(root, err, sizeof(err));
		if (!fc) {
			fprintf(stderr, "skiff serve: %s\n", err);
			return 1;
		}
		cfg.lookup = file_cache_lookup;
		cfg.lookup_ctx = fc;
	}

	/* One timer per connection state, and a few spare. */
	uint32_t max_timers = cfg.max_conns + 16;
	struct loop *loop;
	if (on_skiff) {
		struct serve_skiff_config scfg = {
			.dev_spec = dev,
			.pcap_path = pcap,
			.ip = ip,
			.prefix_len = plen,
			.gw = have_gw ? gw : 0,
			.max_conns = cfg.max_conns,
			.max_timers = max_timers,
			.spin_ns = (uint64_t)spin_us * SK_NS_PER_US,
			.spin_learn = spin_learn,
			.trace = cfg.trace,
		};
		loop = serve_skiff_open(&scfg, err, sizeof(err));
	} else {
		struct loop_linux_config lcfg = {.max_timers = max_timers};
		loop = loop_linux_create(&lcfg, err, sizeof(err));
	}
	if (!loop) {
		fprintf(stderr, "skiff serve: %s\n", err);
		file_cache_free(fc);
		return 1;
	}
	/* Connection states and buffers: reserved, not touched, so only the
	 * connections actually used become resident. */
	size_t memsz = http_server_mem_size(&cfg);
	void *mem = mmap(NULL, memsz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct http_server *srv = calloc(1, sizeof(*srv));
	if (mem == MAP_FAILED || !srv) {
		fprintf(stderr, "skiff serve: cannot reserve %zu bytes for %u connections\n", memsz,
			cfg.max_conns);
		loop_destroy(loop); /* skiff: closes the device too */
		return 1;
	}
	int r = http_server_init(srv, mem, memsz, &cfg, loop);
	if (r == 0)
		r = http_server_start(srv);
	if (r < 0) {
		char ipb[16];
		cli_format_ipv4(cfg.addr, ipb);
		fprintf(stderr, "skiff serve: cannot listen on %s:%u: %s\n", ipb, cfg.port,
			strerror(-r));
		loop_destroy(loop);
		return 1;
	}
	struct date_cache dc = {.srv = srv, .sec = 0};
	refresh_date(&dc, 0);
	loop->on_turn = refresh_date;
	loop->turn_ctx = &dc;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char ipb[16], devb[160] = " dev=kernel";
	cli_format_ipv4(cfg.addr, ipb);
	if (on_skiff) {
		serve_skiff_describe(loop, devb, sizeof(devb));
		/* Tell the link who we are before anyone asks. */
		serve_skiff_announce(loop);
	}
	printf("skiff serve: listening on %s:%u stack=%s%s max_conns=%u", ipb, cfg.port,
	       loop->name, devb, cfg.max_conns);
	if (fc)
		printf(" root=%s files=%zu bytes=%zu", root, file_cache_count(fc),
		       file_cache_bytes(fc));
	printf("\n");
	fflush(stdout);

	int rc = loop_run(loop, &serve_stop);
	http_server_stop(srv);
	if (stats) {
		http_server_stats(srv, print_stat, stdout);
		if (on_skiff)
			serve_skiff_print_stats(loop, stdout);
		else
			loop_stats(loop, print_stat, stdout);
	}
	if (tracing)
		trace_print(&cal, srv, loop, on_skiff, stdout);
	fflush(stdout);
	loop_destroy(loop);
	munmap(mem, memsz);
	free(srv);
	file_cache_free(fc);
	return rc < 0 ? 1 : 0;
}
