/* serve.c — `skiff serve`: the HTTP/1.1 server (http/server.c) on a loop
 * backend chosen by --stack: `linux` (kernel sockets, epoll,
 * loop/loop_linux.c) or `skiff` (skiff's own TCP/IP on a --dev,
 * loop/loop_skiff.c run by apps/serve_skiff.c).  Everything after the
 * loop is built is the same code for both. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
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
#include "../plat/linux/elog.h"
#include "../plat/plat.h"
#include "access_log.h"
#include "cli.h"
#include "hoststack.h"
#include "serve_admin.h"
#include "serve_files.h"
#include "serve_skiff.h"
#include "serve_tls.h"

/* Stopping.  Both signals end the first loop_run (serve_stop).  SIGTERM
 * then drains (a second loop_run, until drain_stop); SIGINT sets
 * drain_stop too, so it is immediate whenever it comes, before or during
 * a drain.  The flags are only set, never cleared: the loop looks at them
 * with the signals blocked (plat/linux/stopsig.h), so none can be lost
 * between a look and a wait. */
static volatile int serve_stop, drain_stop;
static volatile sig_atomic_t serve_term, serve_reload;

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		serve_term = 1;
	else
		drain_stop = 1;
	serve_stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	serve_reload = 1;
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
	struct http_server *srv, *srv_tls; /* srv_tls: NULL without --tls-cert */
	time_t sec;
	/* The error log's counts of suppressed messages are reported when
	 * their window ends (base/log.h): this timer is armed only while some
	 * are held, seen by the count growing (one compare a turn). */
	struct loop *loop;
	struct loop_timer log_timer;
	uint64_t log_held;
};

static void log_tick(struct loop_timer *t, sk_time_ns now)
{
	struct date_cache *dc =
		(struct date_cache *)(void *)((char *)t - offsetof(struct date_cache, log_timer));
	elog_flush(now);
	sk_time_ns d = elog_next_deadline();
	if (d != SK_TIME_NEVER)
		loop_timer_set(dc->loop, &dc->log_timer, d);
}

static void refresh_date(void *ctx, sk_time_ns now)
{
	struct date_cache *dc = ctx;
	if (sk_unlikely(elog_suppressed() != dc->log_held) && dc->loop) {
		dc->log_held = elog_suppressed();
		sk_time_ns d = elog_next_deadline();
		if (d != SK_TIME_NEVER && !loop_timer_armed(&dc->log_timer))
			loop_timer_set(dc->loop, &dc->log_timer, d > now ? d : now);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec == dc->sec)
		return;
	dc->sec = ts.tv_sec;
	/* The same formatter as the unikernel's (http/date.c). */
	char buf[HTTP_DATE_LEN];
	http_date_format(ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 0, buf);
	http_server_set_date(dc->srv, buf);
	if (dc->srv_tls)
		http_server_set_date(dc->srv_tls, buf);
}

/* ---- reload (SIGHUP) ----
 * What SIGHUP reads again: --root's tree and the --tls-cert/--tls-key
 * files.  The handler only sets serve_reload; a timer looks at it once a
 * second (not in on_turn: the kernel-socket loop does not run a turn for
 * a signal alone, and a SIGHUP may land just before a wait), so the work
 * is done in the loop, between events, on both stacks.  What each part
 * gives to whom:
 *   the tree         every request looked up from then on, on new and
 *                    open connections alike (a response already queued
 *                    finishes from the old tree, whose memory is given
 *                    back once the server shows nothing can still point
 *                    into it: serve_files.c struct fc_tree);
 *   the certificate  every connection accepted from then on; an open TLS
 *                    connection keeps the chain and key of its handshake
 *                    to the end (tls_openssl_reload).
 * Each part is loaded beside the one in use and replaces it only whole: a
 * part that fails to load (a missing root, a bad certificate, a key that
 * does not match) leaves what is in use, says so, and the other part
 * still reloads.  The timer runs only when there is something to reload:
 * one wakeup a second. */
struct reload_watch {
	struct file_cache *fc;  /* NULL without --root */
	struct serve_tls *tls;  /* NULL without --tls-cert */
	struct http_server *srv, *srv_tls;
	struct loop *loop;
	struct loop_timer timer;
};

static void print_root(const char *what, const struct file_cache *fc)
{
	struct file_cache_info fi;
	file_cache_info(fc, &fi);
	printf("%sfiles=%zu bytes=%llu mapped=%llu maps=%zu gen=%llu", what, fi.files,
	       (unsigned long long)fi.bytes, (unsigned long long)fi.mapped, fi.maps,
	       (unsigned long long)fi.gen);
}

static void reload_now(struct reload_watch *w)
{
	char err[512];
	if (w->fc) {
		if (file_cache_reload(w->fc, err, sizeof(err)) == 0) {
			print_root("skiff serve: SIGHUP: root reloaded: ", w->fc);
			printf("\n");
		} else {
			elog(SK_LOG_ERROR, "reload.root",
			     "SIGHUP: reload failed, still serving the previous tree: %s", err);
		}
	}
	if (w->tls) {
		if (serve_tls_reload(w->tls, err, sizeof(err)) == 0)
			printf("skiff serve: SIGHUP: certificate reloaded: %s\n", w->tls->cert);
		else
			elog(SK_LOG_ERROR, "reload.tls",
			     "SIGHUP: certificate reload failed, still serving the previous one: %s",
			     err);
	}
	fflush(stdout);
}

static void reload_tick(struct loop_timer *t, sk_time_ns now)
{
	struct reload_watch *w =
		(struct reload_watch *)(void *)((char *)t - offsetof(struct reload_watch, timer));
	if (serve_reload) {
		serve_reload = 0;
		reload_now(w);
	}
	if (w->fc) {
		/* Both servers' buffers may point into the old tree. */
		uint32_t held = w->srv->bufs_held + (w->srv_tls ? w->srv_tls->bufs_held : 0);
		uint32_t conns = w->srv->nconns + (w->srv_tls ? w->srv_tls->nconns : 0);
		file_cache_quiesce(w->fc, held == 0, conns == 0);
	}
	loop_timer_set(w->loop, &w->timer, now + SK_NS_PER_S);
}

/* ---- the drain (SIGTERM) ----
 * http_server_drain does the HTTP part; this bounds it with
 * --drain-timeout and, on skiff's stack, waits after the last connection
 * until TCP has delivered what the closed sockets still hold (the kernel
 * does that on its own for --stack linux).  With --tls-cert both servers
 * drain; it ends when both are empty. */
struct drain {
	struct loop *loop;
	struct http_server *srv, *srv_tls; /* srv_tls: NULL without --tls-cert */
	unsigned busy;              /* servers not yet empty */
	bool on_skiff;
	bool timed_out;             /* the deadline ended it */
	bool finished;              /* everything was delivered */
	struct loop_timer deadline; /* --drain-timeout from the SIGTERM */
	struct loop_timer tcp_poll; /* skiff: every 10 ms once the server is empty */
};

#define DRAIN_TCP_POLL_NS (10 * SK_NS_PER_MS)

static void drain_tcp_poll(struct loop_timer *t, sk_time_ns now)
{
	struct drain *d = (struct drain *)(void *)((char *)t - offsetof(struct drain, tcp_poll));
	if (serve_skiff_unfinished(d->loop) == 0) {
		d->finished = true;
		drain_stop = 1;
	} else {
		loop_timer_set(d->loop, &d->tcp_poll, now + DRAIN_TCP_POLL_NS);
	}
}

static void drain_conns_done(void *ctx)
{
	struct drain *d = ctx;
	if (--d->busy)
		return;
	if (!d->on_skiff) {
		d->finished = true;
		drain_stop = 1;
	} else {
		drain_tcp_poll(&d->tcp_poll, plat_now());
	}
}

static void drain_deadline(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct drain *d = (struct drain *)(void *)((char *)t - offsetof(struct drain, deadline));
	d->timed_out = true;
	drain_stop = 1;
}

static int drain(struct http_server *srv, struct http_server *srv_tls, struct loop *loop,
		 bool on_skiff, unsigned timeout_s)
{
	struct drain d = {.loop = loop, .srv = srv, .srv_tls = srv_tls, .busy = srv_tls ? 2 : 1,
			  .on_skiff = on_skiff,
			  .deadline = {.fn = drain_deadline}, .tcp_poll = {.fn = drain_tcp_poll}};
	/* The clock, not loop_now: skiff's loop caches the time of its last
	 * turn, which may be long before the signal. */
	sk_time_ns t0 = plat_now();
	printf("skiff serve: SIGTERM: draining %u connections (drain-timeout %u s)\n",
	       srv->nconns + (srv_tls ? srv_tls->nconns : 0), timeout_s);
	fflush(stdout);
	loop_timer_set(loop, &d.deadline, t0 + (sk_time_ns)timeout_s * SK_NS_PER_S);
	http_server_drain(srv, t0, drain_conns_done, &d);
	if (srv_tls)
		http_server_drain(srv_tls, t0, drain_conns_done, &d);
	int rc = loop_run(loop, &drain_stop);
	if (loop_timer_armed(&d.deadline))
		loop_timer_cancel(loop, &d.deadline);
	if (loop_timer_armed(&d.tcp_poll))
		loop_timer_cancel(loop, &d.tcp_poll);
	double ms = (double)(plat_now() - t0) / 1e6;
	unsigned left = srv->nconns + (srv_tls ? srv_tls->nconns : 0);
	if (d.finished)
		printf("skiff serve: drained in %.0f ms\n", ms);
	else if (d.timed_out)
		printf("skiff serve: drain-timeout after %.0f ms: closing %u connections\n", ms, left);
	else
		printf("skiff serve: SIGINT: stopping now, %u connections open\n", left);
	fflush(stdout);
	return rc;
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
	struct opts o;
	cli_parse(&o, &opt_cmd_serve, argc, argv);
	char err[256];
	/* The error log first: what goes wrong from here on is reported there
	 * (usage errors above and below stay on standard error, exit 2). */
	if (elog_open("skiff serve", opt_str(&o, OPT_ERROR_LOG),
		      (enum sk_log_level)opt_num(&o, OPT_LOG_LEVEL), err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff serve: %s\n", err);
		return 1;
	}
	bool stats = opt_given(&o, OPT_STATS), tracing = opt_given(&o, OPT_TRACE);
	const char *root = opt_str(&o, OPT_ROOT);
	bool tls_on = serve_tls_wanted(&o);
	struct http_server_config cfg;
	http_server_config_default(&cfg);
	opt_http_config(&o, &cfg);
	/* Default: skiff's stack when given a device, the kernel's without. */
	bool on_skiff = opt_given(&o, OPT_STACK) ? opt_num(&o, OPT_STACK) == 0
						 : opt_given(&o, OPT_DEV);
	struct serve_skiff_config scfg = {.stack = {.tcp = true}};
	if (on_skiff) {
		hoststack_options(&scfg.stack, &o);
	} else {
		static const uint8_t skiff_only[] = {OPT_DEV,     OPT_GW,         OPT_MAC,
						     OPT_PCAP,    OPT_SPIN_US,    OPT_TCP_SNDBUF,
						     OPT_TCP_RCVBUF, OPT_IP6,     OPT_GW6,
						     OPT_TCP_CC};
		int r = opt_only_with(&o, skiff_only, sizeof(skiff_only),
				      "stack skiff (stack linux uses the kernel's interfaces)", err,
				      sizeof(err));
		cli_check(r, "serve", err);
		/* Each connection is a descriptor: as many as allowed. */
		rlim_t nofile = raise_nofile();
		if (nofile < 64 || cfg.max_conns > nofile - 32) {
			uint32_t cap = nofile > 64 ? (uint32_t)(nofile - 32) : 32;
			fprintf(stderr,
				"skiff serve: max-conns %u is above the open-files limit; using %u\n",
				cfg.max_conns, cap);
			cfg.max_conns = cap;
		}
	}
	cli_check(opt_check_metrics(&o, err, sizeof(err)), "serve", err);
	const char *alog_path = opt_str(&o, OPT_ACCESS_LOG);
	if (!alog_path && opt_given(&o, OPT_ACCESS_LOG_FORMAT))
		cli_usage_error("serve", "access-log-format goes with access-log");
	struct tsc_cal cal = {0};
	if (tracing) {
		trace_start(&cal);
		cfg.trace = &trace;
	}

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
		scfg.max_conns = cfg.max_conns;
		scfg.max_timers = max_timers;
		scfg.tcp_sndbuf = (uint32_t)opt_num(&o, OPT_TCP_SNDBUF);
		scfg.tcp_rcvbuf = (uint32_t)opt_num(&o, OPT_TCP_RCVBUF);
		scfg.trace = cfg.trace;
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
	struct access_log *alog = NULL;
	if (alog_path) {
		enum http_access_fmt fmt = opt_num(&o, OPT_ACCESS_LOG_FORMAT) == 1 ? HTTP_ACCESS_JSON
										   : HTTP_ACCESS_COMBINED;
		alog = access_log_open(alog_path, fmt, loop, err, sizeof(err));
		if (!alog) {
			fprintf(stderr, "skiff serve: %s\n", err);
			loop_destroy(loop);
			file_cache_free(fc);
			return 1;
		}
		cfg.access = access_log_record;
		cfg.access_ctx = alog;
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
	/* --tls-redirect: the plain port only points to the HTTPS one. */
	if (tls_on && opt_given(&o, OPT_TLS_REDIRECT))
		cfg.https_redirect_port = (uint16_t)opt_num(&o, OPT_TLS_PORT);
	int r = http_server_init(srv, mem, memsz, &cfg, loop);
	if (r == 0)
		r = http_server_start(srv);
	if (r < 0) {
		char ipb[16];
		cli_format_ipv4(cfg.addr, ipb);
		fprintf(stderr, "skiff serve: cannot listen on %s:%u: %s\n", ipb, cfg.port,
			strerror(-r));
		loop_destroy(loop);
		munmap(mem, memsz);
		free(srv);
		file_cache_free(fc);
		return 1;
	}
	static struct serve_tls tls;
	if (tls_on && serve_tls_start(&tls, loop, &cfg, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "skiff serve: %s\n", err);
		http_server_stop(srv);
		loop_destroy(loop);
		munmap(mem, memsz);
		free(srv);
		file_cache_free(fc);
		return 1;
	}
	static struct date_cache dc;
	dc = (struct date_cache){.srv = srv, .srv_tls = tls.srv, .sec = 0, .loop = loop,
				 .log_timer = {.fn = log_tick}};
	refresh_date(&dc, plat_now());
	loop->on_turn = refresh_date;
	loop->turn_ctx = &dc;

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Nothing to reload (no --root, no --tls-cert): SIGHUP is ignored
	 * rather than left to end the process. */
	static struct reload_watch watch;
	struct sigaction hup = {.sa_handler = fc || tls_on ? on_hup : SIG_IGN};
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);
	if (fc || tls_on) {
		watch = (struct reload_watch){.fc = fc, .tls = tls_on ? &tls : NULL, .srv = srv,
					      .srv_tls = tls.srv, .loop = loop,
					      .timer = {.fn = reload_tick}};
		loop_timer_set(loop, &watch.timer, plat_now() + SK_NS_PER_S);
	}

	/* --metrics and the control socket (apps/admin.h): they read the
	 * counters in place, on this thread. */
	static struct serve_view view;
	view = (struct serve_view){.srv = srv, .tls = tls_on ? &tls : NULL, .alog = alog, .fc = fc,
				   .loop = loop, .on_skiff = on_skiff, .trace = cfg.trace};
	struct admin *adm = serve_admin_start(&view, &o);

	char ipb[16], devb[160] = " dev=kernel";
	cli_format_ipv4(cfg.addr, ipb);
	if (on_skiff) {
		serve_skiff_describe(loop, devb, sizeof(devb));
		/* Tell the link who we are before anyone asks. */
		serve_skiff_announce(loop);
	}
	printf("skiff serve: listening on %s:%u stack=%s%s max_conns=%u", ipb, cfg.port,
	       loop->name, devb, cfg.max_conns);
	if (tls_on)
		printf(" https=%u", tls.port);
	/* The engine's listener takes both families: say where IPv6 reaches it
	 * (usable once DAD passes: a "skiff: ip6 ADDR usable" line follows). */
	const struct iface_config *ic = &scfg.stack.ifc;
	for (unsigned i = 0; on_skiff && i < ic->nip6; i++) {
		char a6[OPT_ADDR_STRLEN];
		struct sk_addr a = sk_addr_v6(ic->ip6_addr[i].addr.b);
		opt_format_addr(&a, cfg.port, a6);
		printf(" ip6=%s", a6);
	}
	if (on_skiff && ic->ip6_slaac)
		printf(" ip6=auto");
	if (fc) {
		printf(" root=%s ", root);
		print_root("", fc);
	}
	if (opt_given(&o, OPT_METRICS)) {
		char mb[16];
		cli_format_ipv4(o.v[OPT_METRICS].ip, mb);
		printf(" metrics=%s:%u", mb, (unsigned)o.v[OPT_METRICS].num);
	}
	if (admin_control_path(adm))
		printf(" control=%s", admin_control_path(adm));
	printf("\n");
	fflush(stdout);

	int rc = loop_run(loop, &serve_stop);
	unsigned drain_s = (unsigned)opt_num(&o, OPT_DRAIN_TIMEOUT);
	if (rc == 0 && serve_term && drain_s)
		rc = drain(srv, tls_on ? tls.srv : NULL, loop, on_skiff, drain_s);
	if ((fc || tls_on) && loop_timer_armed(&watch.timer))
		loop_timer_cancel(loop, &watch.timer);
	if (loop_timer_armed(&dc.log_timer))
		loop_timer_cancel(loop, &dc.log_timer);
	http_server_stop(srv);
	admin_close(adm);
	if (tls_on)
		serve_tls_stop(&tls, NULL);
	access_log_close(alog); /* its last batch, before the counters are printed */
	elog_close();           /* the counts still held back, likewise */
	if (stats)
		serve_view_stats(&view, print_stat, stdout); /* the list /metrics serves */
	if (tracing)
		trace_print(&cal, srv, loop, on_skiff, stdout);
	fflush(stdout);
	if (tls_on)
		serve_tls_free(&tls);
	loop_destroy(loop);
	access_log_free(alog);
	munmap(mem, memsz);
	free(srv);
	file_cache_free(fc);
	return rc < 0 ? 1 : 0;
}
