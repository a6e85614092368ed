/* serve.c — `skiff serve`: the HTTP/1.1 server (http/server.c) on a loop
 * backend chosen by --stack: `linux` (kernel sockets, epoll,
 * loop_host/loop_linux.c) or `skiff` (skiff's own TCP/IP on a --dev,
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
#include <unistd.h>

#include "../base/hist.h"
#include "../http/date.h"
#include "../http/server.h"
#include "../loop_host/loop_linux.h"
#include "../elog/elog.h"
#include "../plat/plat.h"
#include "access_log.h"
#include "cli.h"
#include "hoststack.h"
#include "serve_admin.h"
#include "serve_files.h"
#include "serve_skiff.h"
#include "serve_tls.h"
#include "sites_host.h"
#include "trace_print.h"
#include "workers.h"

/* ---- the workers (--workers N, docs/smp.md) ----
 * A worker is a whole server on its own thread: its own loop (kernel
 * sockets with an SO_REUSEPORT listener, or skiff's stack on its own
 * device queue), HTTP server(s), file cache, access log, trace and
 * timers.  Worker 0 is the main thread; the rest are started once all are
 * built, pinned one per allowed CPU.  Nothing any worker writes on the
 * per-request path is another's: the kernel (or the device) steers each
 * flow to one of them.  What they do share: the options (read-only), the
 * error log (a lock; rare lines), and the stop and reload flags of
 * each one's struct worker (apps/workers.h: the threads, the pinning and
 * the wake-up are that module's), which the signal handler sets. */
struct serve_worker;

/* The process's, written before any thread starts, read by the handlers. */
static struct serve_worker *workers;
static unsigned nworkers;
static volatile sig_atomic_t serve_term;

/* Stopping.  Both signals end the first loop_run (w->stop).  SIGTERM
 * then drains (a second loop_run, until w->drain_stop); SIGINT sets
 * drain_stop too, so it is immediate whenever it comes, before or during
 * a drain.  The flags are only set, never cleared: the loop looks at them
 * with the signals blocked (plat/linux/stopsig.h), so none can be lost
 * between a look and a wait. */
static void on_signal(int sig);
static void on_hup(int sig);

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

/* ---- --trace ----
 * The histograms the core fills (base/hist.h), one set per worker (in
 * its struct serve_worker), merged when printed (apps/trace_print.h, the
 * calibration and the lines, shared with sites_host.c). */

/* The Date header changes once a second: format it only then.  The
 * coarse realtime clock is read through the vDSO, not a system call. */
struct date_cache {
	struct http_server *srv, *srv_tls; /* srv_tls: NULL without --tls-cert */
	time_t sec;
	/* The error log's counts of suppressed messages are reported when
	 * their window ends (base/log.h): this timer is armed only while some
	 * are held, seen by the count growing (one compare a turn).  Worker 0
	 * only (the log is the process's): loop NULL on the others. */
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
 * files.  The handler only sets each worker's reload flag; a timer looks
 * at it once a second (not in on_turn: the kernel-socket loop does not run
 * a turn for a signal alone, and a SIGHUP may land just before a wait), so
 * the work is done in the loop, between events, on both stacks.  With
 * --workers each worker reloads its own tree and certificate on its own
 * thread; worker 0 says so.  What each part gives to whom:
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
	volatile sig_atomic_t *flag; /* the worker's: set by on_hup */
	bool quiet;                  /* workers > 0: failures only */
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
			if (!w->quiet) {
				print_root("skiff serve: SIGHUP: root reloaded: ", w->fc);
				printf("\n");
			}
		} else {
			elog(SK_LOG_ERROR, "reload.root",
			     "SIGHUP: reload failed, still serving the previous tree: %s", err);
		}
	}
	if (w->tls) {
		if (serve_tls_reload(w->tls, err, sizeof(err)) == 0) {
			if (!w->quiet)
				printf("skiff serve: SIGHUP: certificate reloaded: %s\n", w->tls->cert);
		} else {
			elog(SK_LOG_ERROR, "reload.tls",
			     "SIGHUP: certificate reload failed, still serving the previous one: %s",
			     err);
		}
	}
	fflush(stdout);
}

static void reload_tick(struct loop_timer *t, sk_time_ns now)
{
	struct reload_watch *w =
		(struct reload_watch *)(void *)((char *)t - offsetof(struct reload_watch, timer));
	if (*w->flag) {
		*w->flag = 0;
		reload_now(w);
	}
	if (w->fc) {
		/* Both servers' buffers may point into the old tree. */
		uint32_t held = w->srv->bufs_held + (w->srv_tls ? w->srv_tls->bufs_held : 0);
		/* And TCP may still send (or resend) file bytes it took by
		 * reference (loop_send_ref), after the server is done. */
		if (loop_refs_held(w->loop))
			held++;
		uint32_t conns = w->srv->nconns + (w->srv_tls ? w->srv_tls->nconns : 0);
		file_cache_quiesce(w->fc, held == 0, conns == 0);
	}
	loop_timer_set(w->loop, &w->timer, now + SK_NS_PER_S);
}

/* ---- a worker ---- */
struct serve_worker {
	struct worker wk;         /* id, cpu, the flags, the thread (workers.h) */
	unsigned id;              /* wk.id */
	struct loop *loop;
	struct http_server *srv;
	void *mem;                /* srv's connection states, reserved */
	size_t memsz;
	struct serve_tls tls;     /* tls.srv NULL without --tls-cert */
	struct file_cache *fc;    /* its own copy of --root: reloaded by its thread */
	struct access_log *alog;  /* its own fd, O_APPEND: whole batches of lines */
	struct sk_trace trace;    /* --trace */
	struct date_cache dc;
	struct reload_watch watch;
	struct serve_view view;
	/* The drain's outcome, for the line printed once all are done. */
	bool drain_ran, drain_finished, drain_timed_out;
	double drain_ms;
	unsigned drain_left;
};

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		serve_term = 1;
	workers_signal_stop(sig, sig != SIGTERM);
}

static void on_hup(int sig)
{
	(void)sig;
	workers_signal_reload();
}

/* ---- the drain (SIGTERM) ----
 * http_server_drain does the HTTP part; this bounds it with
 * --drain-timeout and, on skiff's stack, waits after the last connection
 * until TCP has delivered what the closed sockets still hold (the kernel
 * does that on its own for --stack linux).  With --tls-cert both servers
 * drain; it ends when both are empty.  Each worker drains its own. */
struct drain {
	struct loop *loop;
	struct http_server *srv, *srv_tls; /* srv_tls: NULL without --tls-cert */
	volatile int *stop;         /* the worker's drain_stop */
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
		*d->stop = 1;
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
		*d->stop = 1;
	} else {
		drain_tcp_poll(&d->tcp_poll, plat_now());
	}
}

static void drain_deadline(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct drain *d = (struct drain *)(void *)((char *)t - offsetof(struct drain, deadline));
	d->timed_out = true;
	*d->stop = 1;
}

static unsigned worker_conns(const struct serve_worker *w)
{
	return w->srv->nconns + (w->tls.srv ? w->tls.srv->nconns : 0);
}

static int drain(struct serve_worker *w, bool on_skiff, unsigned timeout_s)
{
	struct http_server *srv = w->srv, *srv_tls = w->tls.srv;
	struct drain d = {.loop = w->loop, .srv = srv, .srv_tls = srv_tls,
			  .stop = &w->wk.drain_stop,
			  .busy = srv_tls ? 2 : 1, .on_skiff = on_skiff,
			  .deadline = {.fn = drain_deadline}, .tcp_poll = {.fn = drain_tcp_poll}};
	/* The clock, not loop_now: skiff's loop caches the time of its last
	 * turn, which may be long before the signal. */
	sk_time_ns t0 = plat_now();
	if (w->id == 0) {
		/* Every worker's count, read from here: a moment's view. */
		unsigned n = 0;
		for (unsigned i = 0; i < nworkers; i++)
			n += worker_conns(&workers[i]);
		printf("skiff serve: SIGTERM: draining %u connections (drain-timeout %u s)\n", n,
		       timeout_s);
		fflush(stdout);
	}
	loop_timer_set(w->loop, &d.deadline, t0 + (sk_time_ns)timeout_s * SK_NS_PER_S);
	http_server_drain(srv, t0, drain_conns_done, &d);
	if (srv_tls)
		http_server_drain(srv_tls, t0, drain_conns_done, &d);
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
static void drain_report(void)
{
	bool finished = true, timed_out = false;
	double ms = 0;
	unsigned left = 0;
	for (unsigned i = 0; i < nworkers; i++) {
		const struct serve_worker *w = &workers[i];
		if (!w->drain_ran)
			continue;
		finished &= w->drain_finished;
		timed_out |= w->drain_timed_out;
		ms = w->drain_ms > ms ? w->drain_ms : ms;
		left += w->drain_left;
	}
	if (finished)
		printf("skiff serve: drained in %.0f ms\n", ms);
	else if (timed_out)
		printf("skiff serve: drain-timeout after %.0f ms: closing %u connections\n", ms, left);
	else
		printf("skiff serve: SIGINT: stopping now, %u connections open\n", left);
	fflush(stdout);
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

/* What every worker is built from: the options, read-only once parsed. */
struct serve_plan {
	struct opts *o;
	struct http_server_config cfg;    /* per worker (max_conns already shared out) */
	struct serve_skiff_config scfg;   /* on_skiff */
	bool on_skiff, tls_on, tracing;
	const char *root, *alog_path;
	unsigned n;                       /* workers */
	struct nbr_board *board;          /* on_skiff and n > 1: the workers' neighbour board */
};

/* Build worker w (on the main thread, one after another: a device's
 * queues are opened in order).  0, or 1 with the reason on stderr. */
static int worker_open(struct serve_worker *w, struct serve_plan *p)
{
	char err[256];
	struct http_server_config cfg = p->cfg;
	w->wk.stop = w->wk.drain_stop = 0;
	if (p->tracing) {
		w->trace.cycles = trace_cycles;
		cfg.trace = &w->trace;
	}
	if (p->root) {
		w->fc = file_cache_load(p->root, err, sizeof(err));
		if (!w->fc) {
			fprintf(stderr, "skiff serve: %s\n", err);
			return 1;
		}
		cfg.lookup = file_cache_lookup;
		cfg.lookup_ctx = w->fc;
	}
	/* One timer per connection state, and a few spare. */
	uint32_t max_timers = cfg.max_conns + 16;
	if (p->on_skiff) {
		struct serve_skiff_config scfg = p->scfg;
		scfg.max_conns = cfg.max_conns;
		scfg.max_timers = max_timers;
		scfg.trace = cfg.trace;
		scfg.stack.queue = (uint16_t)w->id;
		scfg.stack.nqueues = (uint16_t)p->n;
		scfg.stack.group = (uint16_t)(getpid() & 0xffff);
		scfg.stack.ifc.glean = p->n > 1;
		scfg.stack.ifc.board = p->board;
		if (w->id > 0) {
			/* One host on the link: every worker answers as worker 0. */
			scfg.stack.have_mac = true;
			memcpy(scfg.stack.ifc.mac, serve_skiff_mac(workers[0].loop), 6);
		}
		w->loop = serve_skiff_open(&scfg, err, sizeof(err));
	} else {
		struct loop_linux_config lcfg = {.max_timers = max_timers, .reuseport = p->n > 1};
		w->loop = loop_linux_create(&lcfg, err, sizeof(err));
	}
	if (!w->loop) {
		fprintf(stderr, "skiff serve: %s\n", err);
		return 1;
	}
	if (p->alog_path) {
		enum http_access_fmt fmt = opt_num(p->o, OPT_ACCESS_LOG_FORMAT) == 1
						   ? HTTP_ACCESS_JSON
						   : HTTP_ACCESS_COMBINED;
		w->alog = access_log_open(p->alog_path, fmt, w->loop, err, sizeof(err));
		if (!w->alog) {
			fprintf(stderr, "skiff serve: %s\n", err);
			return 1;
		}
		cfg.access = access_log_record;
		cfg.access_ctx = w->alog;
	}
	/* Connection states and buffers: reserved, not touched, so only the
	 * connections actually used become resident. */
	w->memsz = http_server_mem_size(&cfg);
	w->mem = mmap(NULL, w->memsz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	w->srv = calloc(1, sizeof(*w->srv));
	if (w->mem == MAP_FAILED || !w->srv) {
		if (w->mem == MAP_FAILED)
			w->mem = NULL;
		fprintf(stderr, "skiff serve: cannot reserve %zu bytes for %u connections\n",
			w->memsz, cfg.max_conns);
		return 1;
	}
	/* --tls-redirect: the plain port only points to the HTTPS one. */
	if (p->tls_on && opt_given(p->o, OPT_TLS_REDIRECT))
		cfg.https_redirect_port = (uint16_t)opt_num(p->o, OPT_TLS_PORT);
	int r = http_server_init(w->srv, w->mem, w->memsz, &cfg, w->loop);
	if (r == 0)
		r = http_server_start(w->srv);
	if (r < 0) {
		char ipb[16];
		cli_format_ipv4(cfg.addr, ipb);
		fprintf(stderr, "skiff serve: cannot listen on %s:%u: %s\n", ipb, cfg.port,
			strerror(-r));
		free(w->srv);
		w->srv = NULL;
		return 1;
	}
	if (p->tls_on && serve_tls_start(&w->tls, w->loop, &cfg, p->o, err, sizeof(err)) != 0) {
		fprintf(stderr, "skiff serve: %s\n", err);
		return 1;
	}
	w->dc = (struct date_cache){.srv = w->srv, .srv_tls = w->tls.srv, .sec = 0,
				    .loop = w->id == 0 ? w->loop : NULL,
				    .log_timer = {.fn = log_tick}};
	refresh_date(&w->dc, plat_now());
	w->loop->on_turn = refresh_date;
	w->loop->turn_ctx = &w->dc;
	if (w->fc || p->tls_on) {
		w->watch = (struct reload_watch){.fc = w->fc, .tls = p->tls_on ? &w->tls : NULL,
						 .srv = w->srv, .srv_tls = w->tls.srv,
						 .loop = w->loop, .timer = {.fn = reload_tick},
						 .flag = &w->wk.reload, .quiet = w->id > 0};
		loop_timer_set(w->loop, &w->watch.timer, plat_now() + SK_NS_PER_S);
	}
	w->view = (struct serve_view){.srv = w->srv, .tls = p->tls_on ? &w->tls : NULL,
				      .alog = w->alog, .fc = w->fc, .loop = w->loop,
				      .on_skiff = p->on_skiff, .trace = cfg.trace};
	return 0;
}

/* Give back what worker_open built, whatever it got to. */
static void worker_free(struct serve_worker *w)
{
	if (w->tls.srv || w->tls.ctx)
		serve_tls_free(&w->tls);
	if (w->loop)
		loop_destroy(w->loop); /* skiff: closes the device too */
	access_log_free(w->alog);
	if (w->mem)
		munmap(w->mem, w->memsz);
	free(w->srv);
	file_cache_free(w->fc);
}

/* The worker's whole run on its thread: serve, drain on SIGTERM, stop. */
static int worker_run(struct serve_worker *w, bool on_skiff, bool tls_on, unsigned drain_s)
{
	int rc = loop_run(w->loop, &w->wk.stop);
	if (rc == 0 && serve_term && drain_s)
		rc = drain(w, on_skiff, drain_s);
	if ((w->fc || tls_on) && loop_timer_armed(&w->watch.timer))
		loop_timer_cancel(w->loop, &w->watch.timer);
	if (loop_timer_armed(&w->dc.log_timer))
		loop_timer_cancel(w->loop, &w->dc.log_timer);
	http_server_stop(w->srv);
	return rc;
}

struct run_args {
	bool on_skiff, tls_on;
	unsigned drain_s;
};

static void pin_failed(int cpu)
{
	elog(SK_LOG_WARN, "workers", "cannot pin worker to cpu %d", cpu);
}

/* workers_run's: on each worker's own thread. */
static int worker_thread(struct worker *wk, void *ctx)
{
	const struct run_args *a = ctx;
	struct serve_worker *w = &workers[wk->id];
	if (w->fc)
		file_cache_bind_thread(w->fc);
	return worker_run(w, a->on_skiff, a->tls_on, a->drain_s);
}

int cmd_serve(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_serve, argc, argv);
	/* Every site, a file's or the flags' one (conf/sites_flags.h), runs on
	 * the one HTTP engine (http/app.c) in apps/sites_host.c.  --trace
	 * still runs http/server.c below, until the engine records its
	 * stages. */
	if (opt_given(&o, OPT_CONFIG))
		return sites_host_run(&o, NULL, NULL);
	if (!opt_given(&o, OPT_TRACE)) {
		if (serve_tls_wanted(&o) && opt_num(&o, OPT_TLS_PORT) == opt_num(&o, OPT_PORT))
			cli_usage_error("serve", "--tls-port %llu is --port too: give each its own",
					(unsigned long long)opt_num(&o, OPT_PORT));
		return sites_host_run(&o, NULL, NULL);
	}
	char err[256];
	/* The error log first: what goes wrong from here on is reported there
	 * (usage errors above and below stay on standard error, exit 2). */
	if (elog_open("skiff serve", opt_str(&o, OPT_ERROR_LOG),
		      (enum sk_log_level)opt_num(&o, OPT_LOG_LEVEL), err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff serve: %s\n", err);
		return 1;
	}
	struct serve_plan p = {.o = &o};
	bool stats = opt_given(&o, OPT_STATS);
	p.tracing = opt_given(&o, OPT_TRACE);
	p.root = opt_str(&o, OPT_ROOT);
	p.tls_on = serve_tls_wanted(&o);
	struct http_server_config *cfg = &p.cfg;
	http_server_config_default(cfg);
	opt_http_config(&o, cfg);
	/* Default: skiff's stack when given a device, the kernel's without. */
	p.on_skiff = opt_given(&o, OPT_STACK) ? opt_num(&o, OPT_STACK) == 0
					      : opt_given(&o, OPT_DEV);
	p.scfg = (struct serve_skiff_config){.stack = {.tcp = true}};
	if (p.on_skiff) {
		hoststack_options(&p.scfg.stack, &o);
		static const uint8_t linux_only[] = {OPT_SENDFILE};
		cli_check(opt_only_with(&o, linux_only, sizeof(linux_only),
					"stack linux (skiff's stack sends from the mapping)", err,
					sizeof(err)),
			  "serve", err);
	} else {
		static const uint8_t skiff_only[] = {OPT_DEV,     OPT_GW,         OPT_MAC,
						     OPT_PCAP,    OPT_SPIN_US,    OPT_TCP_SNDBUF,
						     OPT_TCP_RCVBUF, OPT_IP6,     OPT_GW6,
						     OPT_TCP_CC,  OPT_TCP_BUF_MAX, OPT_TCP_MEM};
		int r = opt_only_with(&o, skiff_only, sizeof(skiff_only),
				      "stack skiff (stack linux uses the kernel's interfaces)", err,
				      sizeof(err));
		cli_check(r, "serve", err);
		/* Each connection is a descriptor: as many as allowed. */
		rlim_t nofile = raise_nofile();
		if (nofile < 64 || cfg->max_conns > nofile - 32) {
			uint32_t cap = nofile > 64 ? (uint32_t)(nofile - 32) : 32;
			fprintf(stderr,
				"skiff serve: max-conns %u is above the open-files limit; using %u\n",
				cfg->max_conns, cap);
			cfg->max_conns = cap;
		}
	}
	cli_check(opt_check_metrics(&o, err, sizeof(err)), "serve", err);
	p.alog_path = opt_str(&o, OPT_ACCESS_LOG);
	if (!p.alog_path && opt_given(&o, OPT_ACCESS_LOG_FORMAT))
		cli_usage_error("serve", "access-log-format goes with access-log");

	int cpus[WORKERS_MAX];
	unsigned ncpus;
	p.n = workers_plan(opt_num(&o, OPT_WORKERS), p.on_skiff ? opt_str(&o, OPT_DEV) : NULL,
			   "skiff serve", cpus, &ncpus);
	if (p.n > SERVE_MAX_WORKERS)
		p.n = SERVE_MAX_WORKERS;
	if (p.n > 1 && opt_given(&o, OPT_PCAP))
		cli_usage_error("serve", "pcap goes with workers 1 (one file, one writer)");
	if (p.n > 1 && p.on_skiff && p.scfg.stack.ifc.ip6)
		cli_usage_error("serve", "ip6 goes with workers 1 on stack skiff: IPv6 neighbour "
					 "discovery is not shared between workers (docs/smp.md)");
	/* The workers share what ARP teaches them (net/nbr_board.h): the reply
	 * to a worker's request for the gateway reaches whichever worker the
	 * device gives ARP frames to, and the others take it from the board.
	 * Static: untouched (no resident page) with one worker. */
	static struct nbr_board board;
	if (p.n > 1 && p.on_skiff) {
		uint64_t seed;
		if (plat_random(&seed, sizeof(seed)) < 0) {
			fprintf(stderr, "skiff serve: no randomness\n");
			return 1;
		}
		nbr_board_init(&board, seed);
		p.board = &board;
	}
	/* max-conns is the server's: shared out, so N workers hold no more. */
	uint32_t total_conns = cfg->max_conns;
	if (p.n > 1)
		cfg->max_conns = (cfg->max_conns + p.n - 1) / p.n;
	/* sendfile (--stack linux, --sendfile on): mapped files keep their
	 * descriptors, within a budget that leaves the connections theirs:
	 * a quarter of the open-files limit, never into what max-conns and a
	 * margin need; each tree at most half of it per worker, so a reload
	 * finds room beside the tree it replaces (serve_files.c). */
	if (!p.on_skiff && p.root && opt_num(&o, OPT_SENDFILE) == 0) {
		struct rlimit rl;
		uint64_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
		uint64_t need = (uint64_t)total_conns + 256;
		uint64_t budget = lim / 4;
		if (budget > 65536)
			budget = 65536;
		if (lim < need + budget)
			budget = lim > need ? lim - need : 0;
		file_cache_keep_fds((size_t)budget, (size_t)(budget / 2 / p.n));
	}
	struct tsc_cal cal = {0};
	if (p.tracing)
		trace_start(&cal);

	struct serve_worker *ws = calloc(p.n, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "skiff serve: out of memory\n");
		return 1;
	}
	workers = ws;
	int rc = 0;
	for (unsigned i = 0; i < p.n && rc == 0; i++) {
		ws[i].id = ws[i].wk.id = i;
		ws[i].wk.cpu = workers_cpu(i, p.n, cpus, ncpus);
		nworkers = i + 1; /* the handlers see the ones built */
		workers_publish(ws, sizeof(*ws), offsetof(struct serve_worker, wk), nworkers);
		rc = worker_open(&ws[i], &p);
	}
	if (rc) {
		for (unsigned i = 0; i < nworkers; i++)
			worker_free(&ws[i]);
		nworkers = 0;
		workers_publish(NULL, 0, 0, 0);
		workers = NULL;
		free(ws);
		return 1;
	}
	if (ws[0].fc)
		file_cache_bind_thread(ws[0].fc);

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Nothing to reload (no --root, no --tls-cert): SIGHUP is ignored
	 * rather than left to end the process. */
	struct sigaction hup = {.sa_handler = p.root || p.tls_on ? on_hup : SIG_IGN};
	sigemptyset(&hup.sa_mask);
	sigaction(SIGHUP, &hup, NULL);

	/* --metrics and the control socket (apps/admin.h): on worker 0's
	 * loop, reading every worker's counters in place. */
	static struct serve_multi multi;
	multi.n = p.n;
	for (unsigned i = 0; i < p.n; i++)
		multi.v[i] = &ws[i].view;
	struct admin *adm = serve_admin_start(&multi, &o);

	struct serve_worker *w0 = &ws[0];
	char ipb[16], devb[160] = " dev=kernel";
	cli_format_ipv4(cfg->addr, ipb);
	if (p.on_skiff) {
		serve_skiff_describe(w0->loop, devb, sizeof(devb));
		/* Tell the link who we are before anyone asks. */
		serve_skiff_announce(w0->loop);
	}
	printf("skiff serve: listening on %s:%u stack=%s%s max_conns=%u", ipb, cfg->port,
	       w0->loop->name, devb, total_conns);
	if (p.n > 1 || opt_given(&o, OPT_WORKERS))
		printf(" workers=%u", p.n);
	if (p.tls_on)
		printf(" https=%u", w0->tls.port);
	/* The engine's listener takes both families: say where IPv6 reaches it
	 * (usable once DAD passes: a "skiff: ip6 ADDR usable" line follows). */
	const struct iface_config *ic = &p.scfg.stack.ifc;
	for (unsigned i = 0; p.on_skiff && i < ic->nip6; i++) {
		char a6[OPT_ADDR_STRLEN];
		struct sk_addr a = sk_addr_v6(ic->ip6_addr[i].addr.b);
		opt_format_addr(&a, cfg->port, a6);
		printf(" ip6=%s", a6);
	}
	if (p.on_skiff && ic->ip6_slaac)
		printf(" ip6=auto");
	if (w0->fc) {
		printf(" root=%s ", p.root);
		print_root("", w0->fc);
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

	struct run_args ra = {.on_skiff = p.on_skiff, .tls_on = p.tls_on,
			      .drain_s = (unsigned)opt_num(&o, OPT_DRAIN_TIMEOUT)};
	rc = workers_run(worker_thread, &ra, "skiff serve", pin_failed);
	bool drained = false;
	for (unsigned i = 0; i < p.n; i++)
		drained |= ws[i].drain_ran;
	if (drained)
		drain_report();
	admin_close(adm);
	for (unsigned i = 0; i < p.n; i++) {
		if (p.tls_on)
			serve_tls_stop(&ws[i].tls, NULL);
		access_log_close(ws[i].alog); /* its last batch, before the counters are printed */
	}
	elog_close(); /* the counts still held back, likewise */
	if (stats) {
		multi.per_worker = true;
		serve_multi_stats(&multi, print_stat, stdout); /* the list /metrics serves */
	}
	if (p.tracing) {
		struct sk_trace *t = calloc(1, sizeof(*t));
		struct sk_trace *tv[WORKERS_MAX];
		struct dev_stats ds = {0};
		uint64_t req = 0;
		for (unsigned i = 0; t && i < p.n; i++) {
			tv[i] = &ws[i].trace;
			req += ws[i].srv->st.requests;
			if (p.on_skiff) {
				const struct dev_stats *d = serve_skiff_dev_stats(ws[i].loop);
				ds.rx_syscalls += d->rx_syscalls;
				ds.tx_syscalls += d->tx_syscalls;
			}
		}
		if (t) {
			trace_merge(t, tv, p.n);
			trace_print(&cal, t, req, p.on_skiff ? &ds : NULL, stdout);
		}
		free(t);
	}
	fflush(stdout);
	nworkers = 0; /* the handlers touch no worker from here on */
	workers_publish(NULL, 0, 0, 0);
	for (unsigned i = 0; i < p.n; i++)
		worker_free(&ws[i]);
	free(ws);
	return rc < 0 ? 1 : 0;
}
