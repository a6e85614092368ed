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
 * certificates and keys again (new connections get them).
 *
 * --workers N (docs/smp.md): N whole copies of all that, one a worker
 * (apps/workers.h), each on its own pinned thread with its own loop: on
 * --stack linux an SO_REUSEPORT listener each (the kernel spreads the
 * connections), on --stack skiff its own queue of the device (the device
 * spreads the flows) and a TCP engine whose outgoing connections pick
 * source ports that hash back to it.  Each worker's engine runs the
 * application's init; the application's handlers then run on N threads
 * at once, so only an application that says it may (def->workers) gets
 * more than one.  --max-conns is the process's: shared out.
 *
 * --access-log (as serve: apps/access_log.h): each worker its own log on
 * the same file (O_APPEND, whole batches of lines), fed by its engines'
 * config.access (the HTTPS one's too).
 *
 * Stopping, as serve: SIGINT stops at once.  SIGTERM drains: the first
 * loop_run ends (wk.stop), then each worker runs http_app_drain on its
 * engines and a second loop_run until wk.drain_stop, which the last
 * connection's end sets, or --drain-timeout, or a SIGINT.  On skiff's
 * stack the application's own sockets (a proxy's pooled upstream
 * connections) are closed once the engines are empty (the hooks' stop),
 * and the drain then waits until TCP has delivered what the closed
 * sockets still hold (the kernel does that for --stack linux). */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "../http/app.h"
#include "../http/date.h"
#include "access_log.h"
#include "sites_host.h"
#include "app_host.h"
#include "../loop_host/loop_linux.h"
#include "../plat/plat.h"
#include "cli.h"
#include "hoststack.h"
#include "../conf/opts.h"
#include "serve_skiff.h"
#include "serve_tls.h"
#include "stat_sum.h"
#include "workers.h"

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

struct app_date {
	struct http_app *app, *app_tls; /* app_tls: NULL without --tls-cert */
	time_t sec;
};

/* SIGHUP with HTTPS: looked at once a second by a timer, as serve does (a
 * signal alone does not end a turn of the loop); each worker reloads its
 * own, worker 0 says so. */
struct app_reload {
	struct loop_timer timer; /* first: the timer callback finds the rest */
	struct loop *loop;
	struct serve_tls *tls;
	const char *name;
	volatile sig_atomic_t *flag; /* the worker's: set by on_hup */
	bool quiet;                  /* workers > 0: failures only */
};

/* One worker: an engine (and the HTTPS one) on its own loop.  Built on
 * the main thread, one after another; run on its own thread. */
struct app_worker {
	struct worker wk;        /* first: id, cpu, the flags, the thread */
	struct loop *loop;
	const struct http_app_def *def;
	struct http_app app, app_tls;
	struct http_app_def def_tls;
	void *mem, *mem_tls;     /* reserved, not touched */
	size_t memsz, memsz_tls;
	struct serve_tls tls;    /* tls.app NULL until HTTPS started */
	struct app_date dd;
	struct app_reload watch;
	struct access_log *alog; /* --access-log: its own fd, O_APPEND */
	bool started, tls_started;
	bool halted;             /* the engines stopped and the hooks' stop ran */
	/* The drain's outcome, for the line printed once all are done. */
	bool drain_ran, drain_finished, drain_timed_out;
	double drain_ms;
	unsigned drain_left;
};

/* SIGTERM came (the drain follows the first loop_run): set by the
 * handler, read by the workers once their loop_run returned. */
static volatile sig_atomic_t app_term;

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		app_term = 1;
	/* SIGINT sets drain_stop too: immediate, before or during a drain. */
	workers_signal_stop(sig, sig != SIGTERM);
}

static void on_hup(int sig)
{
	(void)sig;
	workers_signal_reload();
}

static void reload_tick(struct loop_timer *t, sk_time_ns now)
{
	struct app_reload *w = (struct app_reload *)(void *)t;
	if (*w->flag) {
		*w->flag = 0;
		char err[256];
		if (serve_tls_reload(w->tls, err, sizeof(err)) == 0) {
			if (!w->quiet)
				printf("%s: SIGHUP: certificate reloaded: %s\n", w->name, w->tls->cert);
		} else {
			fprintf(stderr, "%s: SIGHUP: %s (the old certificates stay)\n", w->name, err);
		}
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
		       struct http_app_def *def_tls, struct loop *loop, const struct opts *o,
		       const char *name)
{
	char err[256];
	if (serve_tls_open(tls, loop, cfg->port, o, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	*def_tls = *def;
	def_tls->init = NULL; /* ran with the plain engine: one state */
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
	int r = http_app_init(app, *mem, *memsz, &c, def_tls, tls->loop);
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

/* What every worker is built from: read-only once planned. */
struct app_plan {
	const struct opts *o;
	const struct app_host_hooks *h;
	const struct http_app_def *def;
	const char *name;
	struct http_app_config cfg;      /* per worker: max_conns shared out */
	struct serve_skiff_config scfg;  /* on_skiff */
	bool on_skiff, tls_on;
	unsigned n;
	struct nbr_board *board;         /* on_skiff and n > 1: the workers' neighbour board */
	const char *alog_path;           /* --access-log, or NULL */
	enum http_access_fmt alog_fmt;
	unsigned drain_s;                /* --drain-timeout */
};

static struct app_worker *aws; /* the workers, for worker_thread */

/* Build worker w (on the main thread, in order: a device's queues are
 * opened one after another).  0, or an exit status with the reason
 * printed. */
static int worker_open(struct app_worker *w, struct app_worker *w0, const struct app_plan *p)
{
	char err[256];
	const char *name = p->name;
	struct http_app_config cfg = p->cfg;
	uint32_t extra_socks = 0;
	w->def = p->def;
	if (p->h->setup) {
		int sr = p->h->setup(p->h->ctx, p->o, w->wk.id, p->n, &cfg, &extra_socks, &w->def);
		if (sr)
			return sr;
	}
	/* With HTTPS: its engine's connections and their handshake timers too;
	 * and one per socket the application opens itself (a proxy's
	 * upstream connections). */
	uint32_t max_timers = (p->tls_on ? 3 : 1) * cfg.max_conns + extra_socks + 64;
	if (p->on_skiff) {
		struct serve_skiff_config scfg = p->scfg;
		scfg.max_conns = cfg.max_conns + extra_socks;
		scfg.max_timers = max_timers;
		if (p->n > 1) {
			scfg.stack.queue = (uint16_t)w->wk.id;
			scfg.stack.nqueues = (uint16_t)p->n;
			scfg.stack.group = (uint16_t)(getpid() & 0xffff);
			scfg.stack.ifc.glean = true;
			scfg.stack.ifc.board = p->board; /* what ARP teaches one worker, all know */
		}
		if (w != w0) {
			/* One host on the link: every worker answers as worker 0. */
			scfg.stack.have_mac = true;
			memcpy(scfg.stack.ifc.mac, serve_skiff_mac(w0->loop), 6);
		}
		w->loop = serve_skiff_open(&scfg, err, sizeof(err));
	} else {
		struct loop_linux_config lcfg = {.max_timers = max_timers, .reuseport = p->n > 1};
		w->loop = loop_linux_create(&lcfg, err, sizeof(err));
	}
	if (!w->loop) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	if (p->alog_path) {
		w->alog = access_log_open(p->alog_path, p->alog_fmt, w->loop, err, sizeof(err));
		if (!w->alog) {
			fprintf(stderr, "%s: %s\n", name, err);
			return 1;
		}
		cfg.access = access_log_record; /* both engines: start_https copies cfg */
		cfg.access_ctx = w->alog;
	}
	/* Reserved, not touched: only connections in use become resident. */
	w->memsz = http_app_mem_size(&cfg);
	w->mem = w->memsz ? mmap(NULL, w->memsz, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
			  : MAP_FAILED;
	if (w->mem == MAP_FAILED) {
		w->mem = NULL;
		fprintf(stderr, "%s: cannot reserve %zu bytes for %u connections\n", name, w->memsz,
			cfg.max_conns);
		return 1;
	}
	int r = http_app_init(&w->app, w->mem, w->memsz, &cfg, w->def, w->loop);
	if (r == 0)
		r = http_app_start(&w->app);
	if (r < 0) {
		char ipb[16];
		cli_format_ipv4(cfg.addr, ipb);
		fprintf(stderr, "%s: cannot start on %s:%u: %s\n", name, ipb, cfg.port,
			strerror(-r));
		return 1;
	}
	w->started = true;
	if (p->tls_on) {
		int tr = start_https(&w->tls, &w->app_tls, &w->mem_tls, &w->memsz_tls, &cfg, w->def,
				     &w->def_tls, w->loop, p->o, name);
		w->tls_started = w->tls.app != NULL;
		if (tr)
			return 1;
		w->watch = (struct app_reload){.timer = {.fn = reload_tick}, .loop = w->loop,
					       .tls = &w->tls, .name = name, .flag = &w->wk.reload,
					       .quiet = w != w0};
		loop_timer_set(w->loop, &w->watch.timer, loop_now(w->loop) + SK_NS_PER_S);
	}
	w->dd = (struct app_date){.app = &w->app, .app_tls = p->tls_on ? &w->app_tls : NULL};
	refresh_date(&w->dd, 0);
	w->loop->on_turn = refresh_date;
	w->loop->turn_ctx = &w->dd;
	return 0;
}

/* Stop what worker w holds, on its thread (the application's sockets are
 * its loop's): the engines (each request's on_done with ok false), then
 * the hooks' stop.  Once. */
static void worker_halt(struct app_worker *w, const struct app_plan *p)
{
	if (w->halted)
		return;
	w->halted = true;
	http_app_stop(&w->app);
	if (w->tls_started)
		http_app_stop(&w->app_tls);
	if (p->h->stop)
		p->h->stop(p->h->ctx, w->wk.id);
}

/* ---- the drain (SIGTERM), as serve's ---- */
struct app_drain {
	struct app_worker *w;
	const struct app_plan *p;
	unsigned busy;              /* engines not yet empty */
	bool timed_out;             /* the deadline ended it */
	bool finished;              /* everything was delivered */
	struct loop_timer deadline; /* --drain-timeout from the SIGTERM */
	struct loop_timer tcp_poll; /* skiff: once the engines are empty, every 10 ms */
};

#define DRAIN_TCP_POLL_NS (10 * SK_NS_PER_MS)

static void drain_tcp_poll(struct loop_timer *t, sk_time_ns now)
{
	struct app_drain *d =
		(struct app_drain *)(void *)((char *)t - offsetof(struct app_drain, tcp_poll));
	/* No request is left, so nothing uses the application's own
	 * connections (a proxy's pool): they go, with their FINs. */
	worker_halt(d->w, d->p);
	if (serve_skiff_unfinished(d->w->loop) == 0) {
		d->finished = true;
		d->w->wk.drain_stop = 1;
	} else {
		loop_timer_set(d->w->loop, &d->tcp_poll, now + DRAIN_TCP_POLL_NS);
	}
}

/* http_app_drain's done, once per engine: from inside the engine, so the
 * rest waits for a timer. */
static void drain_conns_done(void *ctx)
{
	struct app_drain *d = ctx;
	if (--d->busy)
		return;
	if (!d->p->on_skiff) {
		d->finished = true;
		d->w->wk.drain_stop = 1;
	} else {
		loop_timer_set(d->w->loop, &d->tcp_poll, plat_now());
	}
}

static void drain_deadline(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct app_drain *d =
		(struct app_drain *)(void *)((char *)t - offsetof(struct app_drain, deadline));
	d->timed_out = true;
	d->w->wk.drain_stop = 1;
}

static unsigned worker_conns(const struct app_worker *w)
{
	return w->app.nconns + (w->tls_started ? w->app_tls.nconns : 0);
}

static int drain(struct app_worker *w, const struct app_plan *p)
{
	struct app_drain d = {.w = w, .p = p, .busy = w->tls_started ? 2 : 1,
			      .deadline = {.fn = drain_deadline}, .tcp_poll = {.fn = drain_tcp_poll}};
	/* The clock, not loop_now: skiff's loop caches the time of its last
	 * turn, which may be long before the signal. */
	sk_time_ns t0 = plat_now();
	if (w->wk.id == 0) {
		unsigned n = 0; /* every worker's, read from here: a moment's view */
		for (unsigned i = 0; i < p->n; i++)
			n += worker_conns(&aws[i]);
		printf("%s: SIGTERM: draining %u connections (drain-timeout %u s)\n", p->name, n,
		       p->drain_s);
		fflush(stdout);
	}
	loop_timer_set(w->loop, &d.deadline, t0 + (sk_time_ns)p->drain_s * SK_NS_PER_S);
	http_app_drain(&w->app, t0, drain_conns_done, &d);
	if (w->tls_started)
		http_app_drain(&w->app_tls, t0, drain_conns_done, &d);
	int rc = loop_run(w->loop, &w->wk.drain_stop);
	if (loop_timer_armed(&d.deadline))
		loop_timer_cancel(w->loop, &d.deadline);
	if (loop_timer_armed(&d.tcp_poll))
		loop_timer_cancel(w->loop, &d.tcp_poll);
	w->drain_ran = true;
	w->drain_ms = (double)(plat_now() - t0) / 1e6;
	w->drain_left = worker_conns(w);
	w->drain_finished = d.finished;
	w->drain_timed_out = d.timed_out;
	return rc;
}

/* One line for the drain of all workers: drained only if every one was. */
static void drain_report(const struct app_worker *ws, const struct app_plan *p)
{
	bool finished = true, timed_out = false;
	double ms = 0;
	unsigned left = 0;
	for (unsigned i = 0; i < p->n; i++) {
		const struct app_worker *w = &ws[i];
		if (!w->drain_ran)
			continue;
		finished &= w->drain_finished;
		timed_out |= w->drain_timed_out;
		ms = w->drain_ms > ms ? w->drain_ms : ms;
		left += w->drain_left;
	}
	if (finished)
		printf("%s: drained in %.0f ms\n", p->name, ms);
	else if (timed_out)
		printf("%s: drain-timeout after %.0f ms: closing %u connections\n", p->name, ms,
		       left);
	else
		printf("%s: SIGINT: stopping now, %u connections open\n", p->name, left);
	fflush(stdout);
}

/* workers_run's, on the worker's own thread: run, drain on SIGTERM, then
 * stop what it holds there. */
static int worker_thread(struct worker *wk, void *ctx)
{
	const struct app_plan *p = ctx;
	struct app_worker *w = &aws[wk->id];
	int rc = loop_run(w->loop, &w->wk.stop);
	if (rc == 0 && app_term && p->drain_s)
		rc = drain(w, p);
	worker_halt(w, p);
	w->started = false;
	if (w->tls_started) {
		w->tls_started = false;
		if (loop_timer_armed(&w->watch.timer))
			loop_timer_cancel(w->loop, &w->watch.timer);
	}
	return rc;
}

/* Give back what worker_open built, whatever it got to. */
static void worker_free(struct app_worker *w, const struct app_plan *p)
{
	if (w->started && !w->halted) {
		http_app_stop(&w->app);
		if (p->h->stop)
			p->h->stop(p->h->ctx, w->wk.id);
	}
	if (w->tls_started && !w->halted)
		http_app_stop(&w->app_tls);
	if (w->tls.ctx || w->tls.loop)
		serve_tls_free(&w->tls); /* the TLS loop before the one under it */
	if (w->loop)
		loop_destroy(w->loop);
	access_log_free(w->alog);
	if (w->mem)
		munmap(w->mem, w->memsz);
	if (w->mem_tls)
		munmap(w->mem_tls, w->memsz_tls);
}

/* One worker's counters: the engine's, HTTPS's, the application's, the
 * stack's (the order --stats always had). */
static void worker_stats(const struct app_worker *w, const struct app_plan *p,
			 void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	http_app_stats(&w->app, fn, ctx);
	if (p->tls_on)
		serve_tls_stats((struct serve_tls *)&w->tls, fn, ctx);
	if (w->alog)
		access_log_stats(w->alog, fn, ctx);
	if (p->h->stats)
		p->h->stats(p->h->ctx, w->wk.id, fn, ctx);
	if (p->on_skiff)
		serve_skiff_stats(w->loop, fn, ctx);
	else
		loop_stats(w->loop, fn, ctx);
}

int app_host_run(const struct http_app_def *def, const struct app_host_hooks *h, int argc,
		 char **argv)
{
	struct opts o;
	cli_parse(&o, h->cmd, argc, argv);
	/* A configuration file: its sites on the one runtime, whose `app;`
	 * routes run this application (apps/sites_host.h). */
	if (opt_given(&o, OPT_CONFIG))
		return sites_host_run(&o, def, def->name ? def->name : "app");
	struct app_plan p = {.o = &o, .h = h, .def = def};
	p.tls_on = serve_tls_wanted(&o);
	const char *name = p.name = def->name ? def->name : "app";
	char err[256];
	struct http_app_config *cfg = &p.cfg;
	http_app_config_default(cfg);
	if (o.v[OPT_IP].set)
		cfg->addr = o.v[OPT_IP].ip;
	cfg->port = (uint16_t)opt_num(&o, OPT_PORT);
	cfg->max_conns = (uint32_t)opt_num(&o, OPT_MAX_CONNS);
	cfg->max_body = opt_num(&o, OPT_MAX_BODY);
	cfg->header_timeout = opt_num(&o, OPT_HEADER_TIMEOUT) * SK_NS_PER_S;
	cfg->body_timeout = opt_num(&o, OPT_BODY_TIMEOUT) * SK_NS_PER_S;
	cfg->send_timeout = opt_num(&o, OPT_SEND_TIMEOUT) * SK_NS_PER_S;
	cfg->keepalive_timeout = opt_num(&o, OPT_KEEPALIVE_TIMEOUT) * SK_NS_PER_S;
	if (cfg->max_body == 0)
		cli_usage_error(h->cmd->name, "max-body must be at least 1");
	p.alog_path = opt_str(&o, OPT_ACCESS_LOG);
	if (!p.alog_path && opt_given(&o, OPT_ACCESS_LOG_FORMAT))
		cli_usage_error(h->cmd->name, "access-log-format goes with access-log");
	p.alog_fmt = opt_num(&o, OPT_ACCESS_LOG_FORMAT) == 1 ? HTTP_ACCESS_JSON
							      : HTTP_ACCESS_COMBINED;
	p.drain_s = (unsigned)opt_num(&o, OPT_DRAIN_TIMEOUT);
	/* As serve: skiff's stack when given a device, the kernel's without. */
	p.on_skiff = opt_given(&o, OPT_STACK) ? opt_num(&o, OPT_STACK) == 0 : opt_given(&o, OPT_DEV);
	p.scfg = (struct serve_skiff_config){.stack = {.tcp = true}};
	if (p.on_skiff) {
		hoststack_options(&p.scfg.stack, &o);
		p.scfg.tcp_sndbuf = (uint32_t)opt_num(&o, OPT_TCP_SNDBUF);
		p.scfg.tcp_rcvbuf = (uint32_t)opt_num(&o, OPT_TCP_RCVBUF);
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
		    cfg->max_conns > rl.rlim_cur - 32)
			cfg->max_conns = (uint32_t)(rl.rlim_cur - 32);
	}
	int cpus[WORKERS_MAX];
	unsigned ncpus;
	p.n = workers_plan(opt_num(&o, OPT_WORKERS), p.on_skiff ? opt_str(&o, OPT_DEV) : NULL, name,
			   cpus, &ncpus);
	if (p.n > 1 && !def->workers)
		cli_usage_error(h->cmd->name, "this application's handlers share state unguarded "
					      "(http_app_def.workers is false): workers 1 only");
	if (p.n > 1 && opt_given(&o, OPT_PCAP))
		cli_usage_error(h->cmd->name, "pcap goes with workers 1 (one file, one writer)");
	if (p.n > 1 && p.on_skiff && p.scfg.stack.ifc.ip6)
		cli_usage_error(h->cmd->name, "ip6 goes with workers 1 on stack skiff: IPv6 neighbour "
					      "discovery is not shared between workers (docs/smp.md)");
	/* The workers share what ARP teaches them (net/nbr_board.h), as
	 * serve's: a worker connecting to an upstream resolves it even when
	 * the ARP reply lands on another worker.  Static: untouched with one. */
	static struct nbr_board board;
	if (p.n > 1 && p.on_skiff) {
		uint64_t seed;
		if (plat_random(&seed, sizeof(seed)) < 0) {
			fprintf(stderr, "%s: no randomness\n", name);
			return 1;
		}
		nbr_board_init(&board, seed);
		p.board = &board;
	}
	/* max-conns is the process's: shared out, so N workers hold no more. */
	uint32_t total_conns = cfg->max_conns;
	if (p.n > 1)
		cfg->max_conns = (cfg->max_conns + p.n - 1) / p.n;

	struct app_worker *ws = calloc(p.n, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "%s: out of memory\n", name);
		return 1;
	}
	aws = ws;
	int rc = 0;
	unsigned built = 0;
	for (unsigned i = 0; i < p.n && rc == 0; i++, built++) {
		ws[i].wk.id = i;
		ws[i].wk.cpu = workers_cpu(i, p.n, cpus, ncpus);
		workers_publish(ws, sizeof(*ws), offsetof(struct app_worker, wk), i + 1);
		rc = worker_open(&ws[i], &ws[0], &p);
		if (rc == 0 && i == 0 && p.n > 1 && p.on_skiff && h->connects &&
		    !serve_skiff_flow_steered(ws[0].loop)) {
			/* The answers to a worker's own connections would reach
			 * whichever worker the device's hash picks (xdp; a TAP whose
			 * steering program could not be loaded). */
			fprintf(stderr, "%s: %s does not steer by skiff's flow hash: the workers' own "
					"connections would not get their answers; use --workers 1 or "
					"another device (docs/smp.md)\n", name, opt_str(&o, OPT_DEV));
			rc = 1;
		}
	}
	if (rc) {
		workers_publish(NULL, 0, 0, 0);
		for (unsigned i = 0; i < built; i++)
			worker_free(&ws[i], &p);
		free(ws);
		aws = NULL;
		return rc;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction hup = {.sa_handler = p.tls_on ? on_hup : SIG_IGN};
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct app_worker *w0 = &ws[0];
	char ipb[16], devb[160] = " dev=kernel";
	cli_format_ipv4(cfg->addr, ipb);
	if (p.on_skiff) {
		serve_skiff_describe(w0->loop, devb, sizeof(devb));
		serve_skiff_announce(w0->loop);
	}
	char httpsb[24] = "";
	if (p.tls_on)
		snprintf(httpsb, sizeof(httpsb), " https=%u", w0->tls.port);
	char workersb[24] = "";
	if (p.n > 1 || opt_given(&o, OPT_WORKERS))
		snprintf(workersb, sizeof(workersb), " workers=%u", p.n);
	printf("%s: listening on %s:%u%s stack=%s%s max_conns=%u%s\n", name, ipb, cfg->port, httpsb,
	       w0->loop->name, devb, total_conns, workersb);
	fflush(stdout);
	rc = workers_run(worker_thread, &p, name, NULL);
	workers_publish(NULL, 0, 0, 0);
	bool drained = false;
	for (unsigned i = 0; i < p.n; i++)
		drained |= ws[i].drain_ran;
	if (drained)
		drain_report(ws, &p);
	for (unsigned i = 0; i < p.n; i++)
		access_log_close(ws[i].alog); /* its last batch, before the counters */
	if (opt_given(&o, OPT_STATS) && p.n == 1) {
		worker_stats(w0, &p, print_stat, stdout);
	} else if (opt_given(&o, OPT_STATS)) {
		/* The sums, then each worker's own (serve --stats' shape). */
		struct stat_sum sum = {0};
		for (unsigned i = 0; i < p.n; i++) {
			stat_sum_source(&sum);
			worker_stats(&ws[i], &p, stat_sum_add, &sum);
		}
		stat_sum_emit(&sum, print_stat, stdout);
		stat_sum_free(&sum);
		for (unsigned i = 0; i < p.n; i++) {
			struct stat_sum_prefix px = {.fn = print_stat, .ctx = stdout, .k = i};
			worker_stats(&ws[i], &p, stat_sum_prefixed, &px);
		}
	}
	fflush(stdout);
	for (unsigned i = 0; i < p.n; i++)
		worker_free(&ws[i], &p);
	free(ws);
	aws = NULL;
	return rc < 0 ? 1 : 0;
}
