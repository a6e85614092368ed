/* load_cli.c — `skiff load`: an HTTP/1.1 load generator on the loop API, so
 * the same code drives kernel sockets (--stack linux) and skiff's own TCP/IP
 * (--dev DEV --ip ADDR/LEN, through serve_skiff's loop on a hoststack).
 * Seed 002: ab and wrk could not load the servers they measured; a client
 * on a kernel-free stack can.
 *
 * This file is the command: options (conf/opts.h), the workers and the
 * report.  The requests themselves are load_conn.c's (load.h).
 *
 * --ips N (skiff stack on a switch only): N worker processes, worker i on
 * switch port PORT+i with address ADDR+i, each with its own stack and 1/N
 * of the connections and requests.  skiff's TCP engine has one local
 * address, and one address has ~28k ephemeral ports towards one server
 * port; separate hosts on separate ports need no change below the apps and
 * use both cores.  Results meet in a shared mapping.
 *
 * --workers N (either stack): N threads (host/workers.h), each its own
 * loop and 1/N of the connections and requests.  On skiff's stack they
 * are N queues of one device with one address and one MAC: worker k
 * opens queue k of N (in order, on the main thread), and its TCP picks
 * source ports whose flow hash (wire/flow_hash.h) the device steers back
 * to queue k (hoststack's steer fields), so the answers to its own
 * connections reach it; ARP answers meet on a shared neighbour board
 * (net/nbr_board.h).  A device that does not steer by that hash (xdp, a
 * TAP without its steering program) is refused.  On Linux's stack the
 * kernel picks the ports and delivers to the socket's thread.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../loop_host/loop_linux.h"
#include "../host/cli.h"
#include "../host/hoststack.h"
#include "load.h"
#include "../net/nbr_board.h"
#include "../plat/plat.h"
#include "../host/serve_skiff.h"
#include "../host/stat_sum.h"
#include "../host/workers.h"

#define LOAD_MAX_IPS 64 /* opts.c's bound on --ips */
/* Socket buffers on skiff's stack: serve's defaults (opts.c). */
#define LOAD_SNDBUF (64u * 1024)
#define LOAD_RCVBUF (32u * 1024)

static volatile int load_stop;

static void on_signal(int sig)
{
	load_stop = 1;
	workers_signal_stop(sig, false); /* --workers: each its own stop */
}

/* The command line, parsed. */
struct load_opts {
	const char *url;
	struct serve_skiff_config sc; /* stack skiff: device, interface, spin */
	struct sk_addr daddr;
	uint16_t dport;
	char host[300], path[1024];
	uint64_t conns, requests, duration_s, timeout_s;
	unsigned ips;
	unsigned workers; /* --workers: threads (1: none) */
	unsigned parts;   /* ips or workers: the connections and requests are shared out */
	bool keepalive, stats, hold, on_skiff;
};

static void parse_url(struct load_opts *o, const char *url)
{
	const char *p = url;
	if (strncmp(p, "http://", 7))
		cli_usage_error("load", "URL must start with http:// (got '%s')", url);
	p += 7;
	size_t hl = strcspn(p, "/");
	if (hl == 0 || hl >= sizeof(o->host))
		cli_usage_error("load", "URL '%s' has no host", url);
	memcpy(o->host, p, hl);
	o->host[hl] = 0;
	const char *path = p + hl;
	if (!*path)
		path = "/";
	if (strlen(path) >= sizeof(o->path))
		cli_usage_error("load", "URL path too long");
	for (const char *q = path; *q; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
			cli_usage_error("load", "URL path has a space or control byte");
	strcpy(o->path, path);
	char hostonly[300];
	strcpy(hostonly, o->host);
	/* IPv6 in brackets (RFC 3986 3.2.2): http://[2001:2::2]:8080/ */
	char *h = hostonly, *rest = hostonly;
	if (*h == '[') {
		char *close = strchr(h, ']');
		if (!close)
			cli_usage_error("load", "URL host '%s' has no closing ']'", o->host);
		*close = 0;
		h++;
		rest = close + 1;
		if (*rest && *rest != ':')
			cli_usage_error("load", "URL host '%s': only :PORT may follow ']'", o->host);
	}
	char *colon = strchr(rest, ':');
	o->dport = 80;
	if (colon) {
		*colon = 0;
		o->dport = (uint16_t)cli_parse_ulong("load", "URL port", colon + 1, 1, 65535);
	}
	if (h != hostonly) {
		uint8_t a6[16];
		if (opt_parse_ipv6(h, a6) < 0)
			cli_usage_error("load", "URL host must be an IPv4 or [IPv6] address, not '[%s]'", h);
		o->daddr = sk_addr_v6(a6);
		return;
	}
	uint32_t ip;
	if (cli_parse_ipv4(hostonly, &ip) < 0)
		cli_usage_error("load", "URL host must be an IPv4 or [IPv6] address, not '%s'", hostonly);
	o->daddr = sk_addr_v4(ip);
}

/* ---- one worker: a loop, the connections, a run ---- */

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

/* One worker: its loop and what it asks.  Built on the main thread,
 * run on its own (--workers) or in its own process (--ips). */
struct load_worker {
	struct worker wk;        /* --workers: the stop the handler sets */
	struct loop *l;
	struct load_params p;
	struct load_result *res; /* in the shared mapping */
};

/* Open worker idx of o->parts: 0, or 1 with the reason on stderr.  w0 is
 * the first worker (already open) for --workers' one MAC. */
static int worker_open(const struct load_opts *o, unsigned idx, struct load_worker *w,
		       const struct load_worker *w0, struct nbr_board *board)
{
	unsigned parts = o->parts;
	uint64_t share_c = o->conns / parts + (idx < o->conns % parts ? 1 : 0);
	uint64_t share_n = o->requests == UINT64_MAX
				   ? UINT64_MAX
				   : o->requests / parts + (idx < o->requests % parts ? 1 : 0);
	if (o->hold)
		share_n = share_c;
	char err[256];
	struct loop *l;
	uint32_t max_timers = (uint32_t)share_c + 16;
	char devspec[256];
	if (o->on_skiff) {
		struct serve_skiff_config sc = o->sc;
		if (o->workers > 1) {
			/* Queue idx of one device, one host on the link. */
			sc.stack.queue = (uint16_t)idx;
			sc.stack.nqueues = (uint16_t)o->workers;
			sc.stack.group = (uint16_t)(getpid() & 0xffff);
			sc.stack.ifc.glean = true;
			sc.stack.ifc.board = board;
			if (idx > 0) {
				sc.stack.have_mac = true;
				memcpy(sc.stack.ifc.mac, serve_skiff_mac(w0->l), 6);
			}
		}
		if (o->ips > 1) {
			/* switch:NAME/PORT -> switch:NAME/(PORT+idx) */
			const char *dev = sc.stack.dev_spec, *slash = strrchr(dev, '/');
			unsigned long port = strtoul(slash + 1, NULL, 10);
			snprintf(devspec, sizeof(devspec), "%.*s/%lu", (int)(slash - dev), dev,
				 port + idx);
			sc.stack.dev_spec = devspec;
			sc.stack.ifc.ip += idx;
		}
		sc.max_conns = (uint32_t)share_c;
		sc.max_timers = max_timers;
		l = serve_skiff_open(&sc, err, sizeof(err));
	} else {
		struct loop_linux_config lc = {.max_timers = max_timers};
		l = loop_linux_create(&lc, err, sizeof(err));
	}
	if (!l) {
		fprintf(stderr, "skiff load: %s\n", err);
		w->res->exit_code = 1;
		return 1;
	}
	w->l = l;
	if (o->on_skiff && idx == 0)
		serve_skiff_announce(l);

	w->p = (struct load_params){
		.daddr = o->daddr,
		.dport = o->dport,
		.host = o->host,
		.path = o->path,
		.conns = (uint32_t)share_c,
		.requests = share_n,
		.duration = o->duration_s * SK_NS_PER_S,
		.timeout = o->timeout_s * SK_NS_PER_S,
		.keepalive = o->keepalive,
		.hold = o->hold,
		.say_held = o->hold && o->parts == 1,
	};
	return 0;
}

static void worker_stats(const struct load_opts *o, const struct load_worker *w,
			 void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	if (o->on_skiff)
		serve_skiff_stats(w->l, fn, ctx);
	else
		loop_stats(w->l, fn, ctx);
}

/* --ips: one worker in this process, from open to close. */
static int run_worker(const struct load_opts *o, unsigned idx, struct load_result *res)
{
	struct load_worker w = {.res = res};
	if (worker_open(o, idx, &w, NULL, NULL))
		return 1;
	int rc = load_run(w.l, &w.p, res, &load_stop);
	if (o->stats) {
		if (o->on_skiff)
			serve_skiff_print_stats(w.l, stdout);
		else
			loop_stats(w.l, print_stat, stdout);
		fflush(stdout);
	}
	loop_destroy(w.l);
	if (rc < 0)
		res->exit_code = 1;
	return rc < 0 ? 1 : 0;
}

/* --workers: workers_run's, on the worker's own thread. */
static struct load_worker *lws;
static int worker_thread(struct worker *wk, void *ctx)
{
	(void)ctx;
	struct load_worker *w = &lws[wk->id];
	int rc = load_run(w->l, &w->p, w->res, &w->wk.stop);
	if (rc < 0)
		w->res->exit_code = 1;
	return rc;
}

/* --workers N > 1: open the N in order (a device's queues are taken one
 * after another), run them on their threads, print their counters (the
 * sums, then each worker's as workerK.NAME), close them.  0, 1 (could
 * not run) or 2 (the device does not steer by skiff's hash). */
static int run_workers(const struct load_opts *o, struct load_result *res, int *cpus,
		       unsigned ncpus, const char *dev)
{
	static struct nbr_board board;
	if (o->on_skiff) {
		uint64_t seed;
		if (plat_random(&seed, sizeof(seed)) < 0) {
			fprintf(stderr, "skiff load: no randomness\n");
			return 1;
		}
		nbr_board_init(&board, seed);
	}
	unsigned n = o->workers;
	struct load_worker *ws = calloc(n, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "skiff load: out of memory\n");
		return 1;
	}
	lws = ws;
	int rc = 0;
	unsigned built = 0;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		ws[i].wk.id = i;
		ws[i].wk.cpu = workers_cpu(i, n, cpus, ncpus);
		ws[i].res = &res[i];
		workers_publish(ws, sizeof(*ws), offsetof(struct load_worker, wk), i + 1);
		rc = worker_open(o, i, &ws[i], &ws[0], &board);
		if (rc == 0)
			built++;
		if (rc == 0 && i == 0 && o->on_skiff && !serve_skiff_flow_steered(ws[0].l)) {
			/* The answers to worker k's connections would reach
			 * whichever worker the device's own hash picks. */
			fprintf(stderr, "skiff load: %s does not steer by skiff's flow hash: a "
					"worker's connections would not get their answers; use "
					"--workers 1, --ips (switch:) or another device (docs/smp.md)\n",
				dev);
			rc = 2;
		}
	}
	if (rc == 0) {
		if (load_stop)
			workers_signal_stop(SIGTERM, false); /* a signal while opening */
		if (workers_run(worker_thread, NULL, "skiff load", NULL) < 0)
			rc = 1;
	}
	workers_publish(NULL, 0, 0, 0);
	if (rc != 2 && o->stats && built == n) {
		struct stat_sum sum = {0};
		for (unsigned i = 0; i < n; i++) {
			stat_sum_source(&sum);
			worker_stats(o, &ws[i], stat_sum_add, &sum);
		}
		stat_sum_emit(&sum, print_stat, stdout);
		stat_sum_free(&sum);
		for (unsigned i = 0; i < n; i++) {
			struct stat_sum_prefix px = {.fn = print_stat, .ctx = stdout, .k = i};
			worker_stats(o, &ws[i], stat_sum_prefixed, &px);
		}
		fflush(stdout);
	}
	for (unsigned i = built; i-- > 0;)
		loop_destroy(ws[i].l);
	free(ws);
	lws = NULL;
	if (rc == 1)
		for (unsigned i = 0; i < n; i++)
			res[i].exit_code = res[i].exit_code ? res[i].exit_code : (i < built ? 0 : 1);
	return rc;
}

/* ---- report ---- */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static int report(const struct load_opts *o, const struct load_result *w, unsigned n)
{
	struct load_result t;
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < n; k++) {
		t.ok += w[k].ok;
		t.bytes += w[k].bytes;
#define LR_SUM(x) t.err_##x += w[k].err_##x;
		LOAD_ERRS(LR_SUM)
#undef LR_SUM
		for (int j = 0; j < 6; j++)
			t.status_class[j] += w[k].status_class[j];
		t.connects += w[k].connects;
		t.held += w[k].held;
		if (w[k].elapsed > t.elapsed)
			t.elapsed = w[k].elapsed;
		if (w[k].exit_code)
			t.exit_code = 1;
		sk_hist_merge(&t.lat, &w[k].lat);
	}
	uint64_t failed = 0;
#define LR_FAILED(x) failed += t.err_##x;
	LOAD_ERRS(LR_FAILED)
#undef LR_FAILED
	uint64_t done = t.ok + t.err_status; /* requests that got a response */
	double secs = (double)t.elapsed / 1e9;
	if (secs <= 0)
		secs = 1e-9;
	uint64_t p50 = sk_hist_quantile(&t.lat, 1, 2), p99 = sk_hist_quantile(&t.lat, 99, 100);
	printf("skiff load: %s, %llu connections, %s, stack=%s%s, %.2f s\n", o->url,
	       (unsigned long long)o->conns, o->keepalive ? "keep-alive" : "close",
	       o->on_skiff ? "skiff" : "linux", o->ips > 1 ? " (several addresses)" : "", secs);
	if (o->workers > 1)
		printf("  workers   %u\n", o->workers);
	printf("  requests  %llu ok, %llu failed (connect %llu, read %llu, write %llu, timeout %llu,"
	       " status %llu, parse %llu)\n",
	       (unsigned long long)t.ok, (unsigned long long)failed,
	       (unsigned long long)t.err_connect, (unsigned long long)t.err_read,
	       (unsigned long long)t.err_write, (unsigned long long)t.err_timeout,
	       (unsigned long long)t.err_status, (unsigned long long)t.err_parse);
	printf("  rate      %.1f requests/s, %.2f MB/s (%.2f MB), %llu connects\n",
	       (double)done / secs, (double)t.bytes / secs / 1e6, (double)t.bytes / 1e6,
	       (unsigned long long)t.connects);
	printf("  latency   p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", ms(p50), ms(p99),
	       ms(t.lat.max));
	printf("  status    1xx %llu, 2xx %llu, 3xx %llu, 4xx %llu, 5xx %llu\n",
	       (unsigned long long)t.status_class[1], (unsigned long long)t.status_class[2],
	       (unsigned long long)t.status_class[3], (unsigned long long)t.status_class[4],
	       (unsigned long long)t.status_class[5]);
	if (o->hold)
		printf("  held      %llu connections\n", (unsigned long long)t.held);
	/* Each worker's share (--workers, --ips): did they all work? */
	for (unsigned k = 0; n > 1 && k < n; k++) {
		uint64_t wf = 0;
#define LR_WFAILED(x) wf += w[k].err_##x;
		LOAD_ERRS(LR_WFAILED)
#undef LR_WFAILED
		printf("  worker %u  %llu ok, %llu failed, %llu connects\n", k,
		       (unsigned long long)w[k].ok, (unsigned long long)wf,
		       (unsigned long long)w[k].connects);
	}
	printf("skiff load: summary requests=%llu ok=%llu failed=%llu rps=%.1f bytes=%llu "
	       "p50_us=%.1f p99_us=%.1f max_us=%.1f connect=%llu read=%llu write=%llu "
	       "timeout=%llu status=%llu parse=%llu held=%llu secs=%.3f\n",
	       (unsigned long long)(done + failed - t.err_status), (unsigned long long)t.ok,
	       (unsigned long long)failed, (double)done / secs, (unsigned long long)t.bytes,
	       (double)p50 / 1e3, (double)p99 / 1e3, (double)t.lat.max / 1e3,
	       (unsigned long long)t.err_connect, (unsigned long long)t.err_read,
	       (unsigned long long)t.err_write, (unsigned long long)t.err_timeout,
	       (unsigned long long)t.err_status, (unsigned long long)t.err_parse,
	       (unsigned long long)t.held, secs);
	if (t.exit_code)
		return 1;
	if (failed) {
		printf("skiff load: FAILED: %llu requests failed\n", (unsigned long long)failed);
		return 1;
	}
	if (o->hold && t.held < o->conns) {
		printf("skiff load: FAILED: held %llu of %llu connections\n",
		       (unsigned long long)t.held, (unsigned long long)o->conns);
		return 1;
	}
	if (done == 0) {
		printf("skiff load: FAILED: no request completed\n");
		return 1;
	}
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_load(int argc, char **argv)
{
	struct opts op;
	cli_parse(&op, &opt_cmd_load, argc, argv);
	char err[256];
	struct load_opts o;
	memset(&o, 0, sizeof(o));
	/* Options before or after the URL. */
	if (!op.nargs)
		cli_usage_error("load", "URL is required (http://IPV4[:PORT][/PATH] or http://[IPV6]...)");
	o.url = op.args[0];
	parse_url(&o, o.url);
	if (!opt_given(&op, OPT_LOAD_CONNS))
		cli_usage_error("load", "connections is required (-c N)");
	o.conns = opt_num(&op, OPT_LOAD_CONNS);
	bool have_n = opt_given(&op, OPT_LOAD_REQUESTS), have_d = opt_given(&op, OPT_LOAD_DURATION);
	o.requests = have_n ? opt_num(&op, OPT_LOAD_REQUESTS) : UINT64_MAX;
	o.duration_s = opt_num(&op, OPT_LOAD_DURATION);
	o.keepalive = opt_given(&op, OPT_LOAD_KEEPALIVE);
	o.hold = opt_given(&op, OPT_LOAD_HOLD);
	o.ips = opt_given(&op, OPT_LOAD_IPS) ? (unsigned)opt_num(&op, OPT_LOAD_IPS) : 1;
	o.timeout_s = opt_num(&op, OPT_LOAD_TIMEOUT);
	if (opt_given(&op, OPT_WORKERS) && opt_given(&op, OPT_LOAD_IPS))
		cli_usage_error("load", "workers and ips exclude each other (ips: one address and "
					"one process a switch port; workers: one address, queues of one "
					"device)");
	o.stats = opt_given(&op, OPT_STATS);
	if (have_n && have_d)
		cli_usage_error("load", "requests and duration exclude each other");
	if (!have_n && !have_d && !o.hold)
		o.duration_s = 10;
	if (o.hold && !o.keepalive)
		cli_usage_error("load", "hold needs keepalive (-k)");
	if (o.hold && have_n)
		cli_usage_error("load", "hold makes one request per connection; no requests (-n)");
	if (have_n && o.requests < o.conns)
		o.conns = o.requests; /* no connection without a request */
	/* Default: skiff's stack when given a device, the kernel's without. */
	o.on_skiff = opt_given(&op, OPT_STACK) ? opt_num(&op, OPT_STACK) == 0
					       : opt_given(&op, OPT_DEV);
	if (o.on_skiff && !sk_addr_is_v4(&o.daddr) && op.nip6 == 0 && !op.ip6_auto)
		cli_usage_error("load", "an IPv6 URL on skiff's stack needs --ip6");
	if (o.on_skiff) {
		o.sc.stack.tcp = true;
		hoststack_options(&o.sc.stack, &op);
		o.sc.tcp_sndbuf = LOAD_SNDBUF;
		o.sc.tcp_rcvbuf = LOAD_RCVBUF;
		if (o.ips > 1) {
			const char *dev = o.sc.stack.dev_spec, *slash = strrchr(dev, '/');
			if (strncmp(dev, "switch:", 7) || !slash || !slash[1])
				cli_usage_error("load", "ips needs dev switch:NAME/PORT (one port each)");
			cli_parse_ulong("load", "dev's port", slash + 1, 0, 4096);
			uint8_t len = o.sc.stack.ifc.prefix_len;
			uint32_t ip = o.sc.stack.ifc.ip, mask = len == 32 ? ~0u : ~(~0u >> len);
			if (((ip + o.ips - 1) & mask) != (ip & mask))
				cli_usage_error("load", "ips %u leaves ip's subnet", o.ips);
			/* One address: the workers' --ip6 would collide (DAD). */
			static const uint8_t one_address[] = {OPT_PCAP, OPT_MAC, OPT_IP6, OPT_GW6};
			cli_check(opt_only_with(&op, one_address, sizeof(one_address), "one address",
						err, sizeof(err)), "load", err);
			if (o.ips > o.conns)
				cli_usage_error("load", "ips %u is more than connections (-c)", o.ips);
		}
	} else {
		static const uint8_t skiff_only[] = {OPT_DEV,  OPT_IP,      OPT_GW,       OPT_IP6, OPT_GW6,
						     OPT_MAC, OPT_PCAP, OPT_SPIN_US, OPT_LOAD_IPS};
		cli_check(opt_only_with(&op, skiff_only, sizeof(skiff_only), "stack skiff", err,
					sizeof(err)), "load", err);
		raise_nofile();
	}

	int cpus[WORKERS_MAX];
	unsigned ncpus = 0;
	uint64_t want_w = opt_num(&op, OPT_WORKERS);
	if ((want_w == OPT_NUM_AUTO || want_w > 1) && o.on_skiff &&
	    !strncmp(o.sc.stack.dev_spec, "xdp:", 4))
		cli_usage_error("load", "workers on xdp: the NIC's hash, not skiff's, picks the "
					"queue of a worker's answers: use packet:, tap: or switch: "
					"(docs/smp.md)");
	o.workers = workers_plan(want_w, o.on_skiff ? o.sc.stack.dev_spec : NULL,
				 "skiff load", cpus, &ncpus);
	if (o.workers > o.conns)
		o.workers = (unsigned)o.conns; /* each worker at least one connection */
	if (o.workers > 1) {
		if (o.hold)
			cli_usage_error("load", "hold goes with workers 1");
		if (o.on_skiff && opt_given(&op, OPT_PCAP))
			cli_usage_error("load", "pcap goes with workers 1 (one file, one writer)");
		if (o.on_skiff && (op.nip6 || op.ip6_auto))
			cli_usage_error("load", "ip6 goes with workers 1 on stack skiff: IPv6 neighbour "
						"discovery is not shared between workers (docs/smp.md)");
	}
	o.parts = o.workers > 1 ? o.workers : o.ips;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	size_t rsz = (size_t)o.parts * sizeof(struct load_result);
	struct load_result *res = mmap(NULL, rsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				       -1, 0);
	if (res == MAP_FAILED) {
		fprintf(stderr, "skiff load: cannot map results\n");
		return 1;
	}
	if (o.workers > 1) {
		int wr = run_workers(&o, res, cpus, ncpus, o.sc.stack.dev_spec);
		if (wr == 2) {
			munmap(res, rsz);
			return 2;
		}
	} else if (o.ips == 1) {
		run_worker(&o, 0, res);
	} else {
		pid_t pids[LOAD_MAX_IPS];
		unsigned started = 0;
		for (unsigned i = 0; i < o.ips; i++) {
			fflush(stdout);
			pid_t p = fork();
			if (p == 0)
				_exit(run_worker(&o, i, &res[i]));
			if (p < 0) {
				fprintf(stderr, "skiff load: fork: %s\n", strerror(errno));
				res[i].exit_code = 1;
				load_stop = 1;
				break;
			}
			pids[started++] = p;
		}
		/* Workers stop on their own (-n, -d) or on our signal, which
		 * we pass on. */
		unsigned left = started;
		bool told = false, held_told = false;
		while (left) {
			if (load_stop && !told) {
				for (unsigned i = 0; i < started; i++)
					kill(pids[i], SIGTERM);
				told = true;
			}
			if (o.hold && !held_told) {
				uint64_t h = 0;
				for (unsigned i = 0; i < o.ips; i++)
					h += __atomic_load_n(&res[i].held, __ATOMIC_RELAXED);
				if (h >= o.conns) {
					printf("skiff load: holding %llu connections\n",
					       (unsigned long long)h);
					fflush(stdout);
					held_told = true;
				}
			}
			int st;
			pid_t p = waitpid(-1, &st, WNOHANG);
			if (p > 0) {
				left--;
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					for (unsigned i = 0; i < started; i++)
						if (pids[i] == p)
							res[i].exit_code = 1;
				continue;
			}
			usleep(20000);
		}
	}
	int rc = report(&o, res, o.parts);
	munmap(res, rsz);
	return rc;
}
