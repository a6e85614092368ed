/* app_host.c — skiff_app_main (http/app.h): an application on the
 * engine of http/app.c, in a Linux process, on the same two stacks as
 * `skiff serve` and built from the same pieces: the options module
 * (opt_cmd_app: serve's stack and HTTP options), loop_linux for --stack
 * linux, serve_skiff_open (the device, the interface, TCP, the runner)
 * for --stack skiff.  Nothing here knows the application.
 *
 * HTTPS (--tls-cert/--tls-key, as serve: serve_tls.h): a second engine on
 * a TLS loop over the same loop, on --tls-port, with the same routes; the
 * application's init runs once, for the first (plain) engine, so its
 * state is one whichever port a request came in on.  SIGHUP reads the
 * certificates and keys again (new connections get them). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "../http/app.h"
#include "../http/date.h"
#include "app_host.h"
#include "../loop/loop_linux.h"
#include "../plat/plat.h"
#include "cli.h"
#include "hoststack.h"
#include "opts.h"
#include "serve_skiff.h"
#include "serve_tls.h"

static volatile int app_stop;
static volatile sig_atomic_t app_hup;

static void on_signal(int sig)
{
	(void)sig;
	app_stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	app_hup = 1;
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

struct app_date {
	struct http_app *app, *app_tls; /* app_tls: NULL without --tls-cert */
	time_t sec;
};

/* SIGHUP with HTTPS: looked at once a second by a timer, as serve does (a
 * signal alone does not end a turn of the loop). */
struct app_reload {
	struct loop_timer timer; /* first: the timer callback finds the rest */
	struct loop *loop;
	struct serve_tls *tls;
	const char *name;
};

static void reload_tick(struct loop_timer *t, sk_time_ns now)
{
	struct app_reload *w = (struct app_reload *)(void *)t;
	if (app_hup) {
		app_hup = 0;
		char err[256];
		if (serve_tls_reload(w->tls, err, sizeof(err)) == 0)
			printf("%s: SIGHUP: certificate reloaded: %s\n", w->name, w->tls->cert);
		else
			fprintf(stderr, "%s: SIGHUP: %s (the old certificates stay)\n", w->name, err);
		fflush(stdout);
	}
	loop_timer_set(w->loop, &w->timer, now + SK_NS_PER_S);
}

/* The Date header changes once a second: format it only then. */
static void refresh_date(void *ctx, sk_time_ns now)
{
	(void)now;
	struct app_date *d = ctx;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec == d->sec)
		return;
	d->sec = ts.tv_sec;
	char buf[HTTP_DATE_LEN];
	http_date_format(ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 0, buf);
	http_app_set_date(d->app, buf);
	if (d->app_tls)
		http_app_set_date(d->app_tls, buf);
}

/* The HTTPS engine: the same routes and limits on the TLS loop.  0, or 1
 * with a message printed. */
static int start_https(struct serve_tls *tls, struct http_app *app, void **mem, size_t *memsz,
		       const struct http_app_config *cfg, const struct http_app_def *def,
		       struct loop *loop, const struct opts *o, const char *name)
{
	char err[256];
	if (serve_tls_open(tls, loop, cfg->port, o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	static struct http_app_def def_tls;
	def_tls = *def;
	def_tls.init = NULL; /* ran with the plain engine: one state */
	struct http_app_config c = *cfg;
	c.port = tls->port;
	c.scheme = "https"; /* a proxy's X-Forwarded-Proto */
	*memsz = http_app_mem_size(&c);
	*mem = mmap(NULL, *memsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (*mem == MAP_FAILED) {
		*mem = NULL;
		fprintf(stderr, "%s: cannot reserve %zu bytes for HTTPS connections\n", name, *memsz);
		return 1;
	}
	int r = http_app_init(app, *mem, *memsz, &c, &def_tls, tls->loop);
	if (r == 0)
		r = http_app_start(app);
	if (r < 0) {
		fprintf(stderr, "%s: cannot start HTTPS on port %u: %s\n", name, c.port, strerror(-r));
		return 1;
	}
	tls->app = app;
	return 0;
}

int skiff_app_main(const struct http_app_def *def, int argc, char **argv)
{
	struct app_host_hooks h = {.cmd = &opt_cmd_app};
	return app_host_run(def, &h, argc, argv);
}

int app_host_run(const struct http_app_def *def, const struct app_host_hooks *h, int argc,
		 char **argv)
{
	struct opts o;
	cli_parse(&o, h->cmd, argc, argv);
	bool tls_on = serve_tls_wanted(&o);
	const char *name = def->name ? def->name : "app";
	char err[256];
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	if (o.v[OPT_IP].set)
		cfg.addr = o.v[OPT_IP].ip;
	cfg.port = (uint16_t)opt_num(&o, OPT_PORT);
	cfg.max_conns = (uint32_t)opt_num(&o, OPT_MAX_CONNS);
	cfg.max_body = opt_num(&o, OPT_MAX_BODY);
	cfg.header_timeout = opt_num(&o, OPT_HEADER_TIMEOUT) * SK_NS_PER_S;
	cfg.body_timeout = opt_num(&o, OPT_BODY_TIMEOUT) * SK_NS_PER_S;
	cfg.send_timeout = opt_num(&o, OPT_SEND_TIMEOUT) * SK_NS_PER_S;
	cfg.keepalive_timeout = opt_num(&o, OPT_KEEPALIVE_TIMEOUT) * SK_NS_PER_S;
	if (cfg.max_body == 0)
		cli_usage_error(h->cmd->name, "max-body must be at least 1");
	/* As serve: skiff's stack when given a device, the kernel's without. */
	bool on_skiff = opt_given(&o, OPT_STACK) ? opt_num(&o, OPT_STACK) == 0
						 : opt_given(&o, OPT_DEV);
	struct serve_skiff_config scfg = {.stack = {.tcp = true}};
	if (on_skiff) {
		hoststack_options(&scfg.stack, &o);
	} else {
		static const uint8_t skiff_only[] = {OPT_DEV,     OPT_GW,         OPT_MAC,
						     OPT_PCAP,    OPT_SPIN_US,    OPT_TCP_SNDBUF,
						     OPT_TCP_RCVBUF};
		int r = opt_only_with(&o, skiff_only, sizeof(skiff_only),
				      "stack skiff (stack linux uses the kernel's interfaces)", err,
				      sizeof(err));
		cli_check(r, h->cmd->name, err);
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64 &&
		    cfg.max_conns > rl.rlim_cur - 32)
			cfg.max_conns = (uint32_t)(rl.rlim_cur - 32);
	}
	uint32_t extra_socks = 0;
	if (h->setup) {
		int sr = h->setup(h->ctx, &o, &cfg, &extra_socks);
		if (sr)
			return sr;
	}
	/* With HTTPS: its engine's connections and their handshake timers too;
	 * and one per socket the application opens itself (a proxy's
	 * upstream connections). */
	uint32_t max_timers = (tls_on ? 3 : 1) * cfg.max_conns + extra_socks + 64;
	struct loop *loop;
	if (on_skiff) {
		scfg.max_conns = cfg.max_conns + extra_socks;
		scfg.max_timers = max_timers;
		scfg.tcp_sndbuf = (uint32_t)opt_num(&o, OPT_TCP_SNDBUF);
		scfg.tcp_rcvbuf = (uint32_t)opt_num(&o, OPT_TCP_RCVBUF);
		loop = serve_skiff_open(&scfg, err, sizeof(err));
	} else {
		struct loop_linux_config lcfg = {.max_timers = max_timers};
		loop = loop_linux_create(&lcfg, err, sizeof(err));
	}
	if (!loop) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	/* Reserved, not touched: only connections in use become resident. */
	size_t memsz = http_app_mem_size(&cfg);
	void *mem = memsz ? mmap(NULL, memsz, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
			  : MAP_FAILED;
	static struct http_app app;
	if (mem == MAP_FAILED) {
		fprintf(stderr, "%s: cannot reserve %zu bytes for %u connections\n", name, memsz,
			cfg.max_conns);
		loop_destroy(loop);
		return 1;
	}
	int r = http_app_init(&app, mem, memsz, &cfg, def, loop);
	if (r == 0)
		r = http_app_start(&app);
	if (r < 0) {
		char ipb[16];
		cli_format_ipv4(cfg.addr, ipb);
		fprintf(stderr, "%s: cannot start on %s:%u: %s\n", name, ipb, cfg.port,
			strerror(-r));
		loop_destroy(loop);
		munmap(mem, memsz);
		return 1;
	}
	static struct serve_tls tls;
	static struct http_app app_tls;
	void *mem_tls = NULL;
	size_t memsz_tls = 0;
	if (tls_on && start_https(&tls, &app_tls, &mem_tls, &memsz_tls, &cfg, def, loop, &o, name)) {
		http_app_stop(&app);
		if (tls.app)
			http_app_stop(&app_tls);
		serve_tls_free(&tls);
		loop_destroy(loop);
		munmap(mem, memsz);
		if (mem_tls)
			munmap(mem_tls, memsz_tls);
		return 1;
	}
	struct app_date dd = {.app = &app, .app_tls = tls_on ? &app_tls : NULL, .sec = 0};
	static struct app_reload watch;
	if (tls_on) {
		watch = (struct app_reload){.timer = {.fn = reload_tick}, .loop = loop, .tls = &tls,
					    .name = name};
		loop_timer_set(loop, &watch.timer, loop_now(loop) + SK_NS_PER_S);
	}
	refresh_date(&dd, 0);
	loop->on_turn = refresh_date;
	loop->turn_ctx = &dd;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction hup = {.sa_handler = tls_on ? on_hup : SIG_IGN};
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);
	signal(SIGPIPE, SIG_IGN);

	char ipb[16], devb[160] = " dev=kernel";
	cli_format_ipv4(cfg.addr, ipb);
	if (on_skiff) {
		serve_skiff_describe(loop, devb, sizeof(devb));
		serve_skiff_announce(loop);
	}
	char httpsb[24] = "";
	if (tls_on)
		snprintf(httpsb, sizeof(httpsb), " https=%u", tls.port);
	printf("%s: listening on %s:%u%s stack=%s%s max_conns=%u\n", name, ipb, cfg.port, httpsb,
	       loop->name, devb, cfg.max_conns);
	fflush(stdout);
	int rc = loop_run(loop, &app_stop);
	http_app_stop(&app);
	if (tls_on) {
		http_app_stop(&app_tls);
		if (loop_timer_armed(&watch.timer))
			loop_timer_cancel(loop, &watch.timer);
	}
	if (h->stop)
		h->stop(h->ctx);
	if (opt_given(&o, OPT_STATS)) {
		http_app_stats(&app, print_stat, stdout);
		if (tls_on)
			serve_tls_stats(&tls, print_stat, stdout);
		if (h->stats)
			h->stats(h->ctx, print_stat, stdout);
		if (on_skiff)
			serve_skiff_print_stats(loop, stdout);
		else
			loop_stats(loop, print_stat, stdout);
	}
	fflush(stdout);
	if (tls_on)
		serve_tls_free(&tls); /* the TLS loop before the one under it */
	loop_destroy(loop);
	munmap(mem, memsz);
	if (mem_tls)
		munmap(mem_tls, memsz_tls);
	return rc < 0 ? 1 : 0;
}
