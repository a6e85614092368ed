/* uk_smp.c — see uk_smp.h.
 *
 * Call order: uk_main.c (on the BSP) builds worker 0 and the device's
 * queue pairs, then uk_smp_start builds each other worker's stack here
 * (on the BSP: allocation and printing stay in one order) and hands its
 * loop to AP k with smp_run_on; uk_main runs worker 0; when that loop
 * ends, uk_smp_wake wakes the rest, which drain if asked (uk_drain.h),
 * while worker 0 drains its own; uk_smp_drain_begun gives their counts,
 * uk_smp_wait waits for them, uk_smp_drained sums their drains;
 * uk_smp_stats prints.
 *
 * A worker touches only its own struct uk_worker, its virtio_net pair and
 * its LAPIC, except for the ARP log (below) and the shared stop flag;
 * worker 0 reads a worker's `drained` as uk_drain_result says. */
#include "uk_smp.h"

#include "../http/date.h"
#include "../loop/loop_skiff.h"
#include "../runner/runner.h"
#include "../net/tcp_iface.h"
#include "../plat/kvm/kvm.h"
#include "../plat/plat.h"
#include "../wire/eth.h"
#include "uk_sites.h"

#define ECHO_PORT 7
#define ARP_LOG_SLOTS 32u  /* a burst of this many ARP frames between two turns loses the oldest */
#define ARP_FRAME_MAX 64u

struct uk_worker {
	unsigned index;            /* = its vCPU's */
	struct virtio_net *vn;
	struct iface *ifp;         /* &ifc, or worker 0's (uk_main.c's) */
	struct iface ifc;
	struct tcp_stack tcp;
	struct uk_sites *sites;    /* its instance of the sites runtime */
	struct loop *loop;
	struct runner run;
	struct dev_ops ops;        /* the pair's ops, rx_sync wrapped for the ARP log */
	const struct dev_ops *inner;
	uint32_t arp_read;         /* next ARP log entry to read */
	uint64_t arp_fed, arp_lost;
	uint64_t date_sec;
	int rc;
	struct uk_drain_result drained; /* its drain (worker 0's is uk_main's) */
	struct uk_alog alog;       /* its access log; loop NULL: none */
	struct sk_log elog;        /* its error log (its engines', its access log's) */
	char log_name[24];         /* elog's prefix: "skiff-uk: cpu K" */
};

/* The ARP log: many writers (any worker's receive path), every worker
 * reads.  Entry n goes to slot n % ARP_LOG_SLOTS; its seq is 2n+1 while
 * written and 2n+2 once complete, so a reader sees whether the slot still
 * holds entry n, was overwritten (lost: ARP asks again), or is not done. */
struct arp_slot {
	volatile uint32_t seq;
	uint8_t from;              /* the worker that received it */
	uint16_t len;
	uint8_t pkt[ARP_FRAME_MAX]; /* the whole frame: Ethernet header and ARP */
};
static struct {
	volatile uint32_t next;
	uint64_t posted;
	struct arp_slot s[ARP_LOG_SLOTS];
} arp_log;

static struct uk_worker *workers[KVM_MAX_CPUS];
static unsigned nworkers; /* worker 0 included */
static struct uk_smp_config cfg_copy; /* the caller's may be on its stack */
static const struct uk_smp_config *cfg = &cfg_copy;

static void arp_post(unsigned from, const uint8_t *pkt, size_t len)
{
	if (len > ARP_FRAME_MAX)
		len = ARP_FRAME_MAX;
	uint32_t n = __atomic_fetch_add(&arp_log.next, 1, __ATOMIC_ACQ_REL);
	struct arp_slot *s = &arp_log.s[n % ARP_LOG_SLOTS];
	__atomic_store_n(&s->seq, 2 * n + 1, __ATOMIC_RELEASE);
	s->from = (uint8_t)from;
	s->len = (uint16_t)len;
	sk_memcpy(s->pkt, pkt, len);
	__atomic_store_n(&s->seq, 2 * n + 2, __ATOMIC_RELEASE);
	__atomic_fetch_add(&arp_log.posted, 1, __ATOMIC_RELAXED);
	for (unsigned k = 0; k < nworkers; k++)
		if (k != from)
			smp_kick(k); /* a parked worker may be waiting for this reply */
}

/* Feed what the others received to this worker's interface. */
static void arp_take(struct uk_worker *w, sk_time_ns now)
{
	uint32_t end = __atomic_load_n(&arp_log.next, __ATOMIC_ACQUIRE);
	while (w->arp_read != end) {
		uint32_t n = w->arp_read;
		struct arp_slot *s = &arp_log.s[n % ARP_LOG_SLOTS];
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (seq == 2 * n + 1)
			return; /* still being written: next turn */
		if (seq != 2 * n + 2) {
			w->arp_lost++; /* overwritten by a later one */
			w->arp_read++;
			continue;
		}
		uint8_t pkt[ARP_FRAME_MAX];
		uint16_t len = s->len;
		uint8_t from = s->from;
		sk_memcpy(pkt, s->pkt, len);
		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != seq) {
			w->arp_lost++;
			w->arp_read++;
			continue;
		}
		w->arp_read++;
		if (from == w->index)
			continue;
		/* A request (op 1) is passed on as a reply from its sender: the
		 * interface learns the sender (aimed at our address) and sends
		 * nothing; the worker that received it answers it. */
		if (len >= ETH_HLEN + 8 && pkt[ETH_HLEN + 6] == 0 && pkt[ETH_HLEN + 7] == 1)
			pkt[ETH_HLEN + 7] = 2;
		iface_input(w->ifp, now, pkt, len);
		w->arp_fed++;
	}
}

static struct uk_worker *worker_of(struct dev *d)
{
	for (unsigned k = 0; k < nworkers; k++)
		if (&workers[k]->vn->dev == d)
			return workers[k];
	return NULL;
}

/* The pair's rx_sync, then: post the ARP frames it brought, take the
 * others'.  The cost when there is none: one load and a compare. */
static int smp_rx_sync(struct dev *d)
{
	struct uk_worker *w = worker_of(d);
	struct ring *r = d->rx;
	uint32_t t0 = r->tail;
	int n = w->inner->rx_sync(d);
	if (n > 0) {
		for (uint32_t i = t0; i != r->tail; i++) {
			const struct ring_slot *s = ring_slot(r, i);
			const uint8_t *f = ring_buf(r, s->buf_idx);
			if (s->len >= ETH_HLEN + 28 && f[12] == 0x08 && f[13] == 0x06)
				arp_post(w->index, f, s->len);
		}
	}
	if (w->arp_read != __atomic_load_n(&arp_log.next, __ATOMIC_RELAXED))
		arp_take(w, plat_now());
	return n;
}

static void wrap_ops(struct uk_worker *w)
{
	w->inner = w->vn->dev.ops;
	w->ops = *w->inner;
	w->ops.rx_sync = smp_rx_sync;
	w->vn->dev.ops = &w->ops;
}

static void echo_udp(void *ctx, struct iface *i, sk_time_ns now, uint32_t src, uint16_t sport,
		     uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx;
	udp_sendto(i, now, dport, src, sport, data, len);
}

static void shutdown_udp(void *ctx, struct iface *i, sk_time_ns now, uint32_t src, uint16_t sport,
			 uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx;
	cfg->on_shutdown(NULL, i, now, src, sport, dport, data, len);
	if (*cfg->stop)
		smp_kick(0); /* worker 0 ends the run and stops the others */
}

static void refresh_date(void *ctx, sk_time_ns now)
{
	struct uk_worker *w = ctx;
	uint64_t sec = cfg->wall_sec(now);
	if (sec == w->date_sec)
		return;
	w->date_sec = sec;
	char buf[HTTP_DATE_LEN];
	http_date_format(sec, buf);
	uk_sites_set_date(w->sites, buf);
}

static int worker_run(void *ctx, struct loop *l, volatile int *stop)
{
	(void)l;
	struct uk_worker *w = ctx;
	return runner_run(&w->run, stop) == 0 ? 0 : -SK_ENETUNREACH;
}

static void worker_stats(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx)
{
	struct uk_worker *w = ctx;
	const struct dev_stats *s = &w->vn->dev.stats;
	fn(fctx, "dev.rx_frames", s->rx_frames);
	fn(fctx, "dev.tx_frames", s->tx_frames);
	fn(fctx, "virtio.irq_arms", w->vn->c.irq_arms);
	runner_stats(&w->run, fn, fctx);
	const struct kvm_cpu *c = smp_cpu(w->index);
	fn(fctx, "timer.loads", c->timer_loads);
	fn(fctx, "cpu.hlts", c->park_hlts);
	fn(fctx, "irq.virtio_net", c->irq_count[VEC_VIRTIO_NET]);
	fn(fctx, "arp.fed", w->arp_fed);
	fn(fctx, "arp.lost", w->arp_lost);
	iface_stats(&w->ifc, fn, fctx);
	tcp_stats(&w->tcp, fn, fctx);
}

static void worker_fatal(void *ctx, const char *msg)
{
	struct uk_worker *w = ctx;
	kprintf("skiff-uk: cpu %u: %s\n", w->index, msg);
	kvm_exit(KVM_EXIT_FATAL);
}

/* On AP k: the worker's loop until stop (or exit-after); then, if the
 * shutdown port asked, its own drain on its own loop; then its listener
 * and connections closed, what that queued sent. */
static void worker_main(void *arg)
{
	struct uk_worker *w = arg;
	sk_time_ns now = plat_now();
	iface_announce(&w->ifc, now);
	dev_tx_sync(&w->vn->dev);
	w->rc = loop_run(w->loop, cfg->stop);
	unsigned drain_s = w->rc == 0 && cfg->drain_timeout ? cfg->drain_timeout() : 0;
	if (drain_s) {
		char label[16];
		ksnprintf(label, sizeof(label), "cpu %u: ", w->index);
		w->run.until = 0; /* exit-after no longer cuts it short: drain-timeout does */
		w->rc = uk_drain_run(w->loop, w->sites, &w->tcp, drain_s, label, &w->drained);
	} else {
		__atomic_store_n(&w->drained.state, UK_DRAIN_NONE, __ATOMIC_RELEASE);
	}
	uk_sites_stop(w->sites);
	if (w->alog.loop)
		uk_alog_flush(&w->alog); /* the last batch leaves with the FINs */
	now = plat_now();
	sk_log_flush(&w->elog, SK_TIME_NEVER); /* what the limit held back, counted */
	tcp_poll(&w->tcp, now);
	dev_tx_sync(&w->vn->dev);
}

static void console_sink(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	console_write(line, len);
}

static struct uk_worker *worker_build(unsigned k, struct virtio_net *vn)
{
	struct uk_worker *w = cfg->alloc("a worker", sizeof(*w));
	sk_memset(w, 0, sizeof(*w));
	w->index = k;
	w->vn = vn;
	w->ifp = &w->ifc;
	sk_time_ns now = plat_now();
	struct iface_config ic = *cfg->ifc;
	if (plat_random(&ic.seed, sizeof(ic.seed)) < 0)
		ic.seed = plat_cycles() ^ k;
	iface_init(&w->ifc, &vn->dev, &ic, now);
	if (udp_bind(&w->ifc, ECHO_PORT, echo_udp, NULL) < 0 ||
	    (cfg->shutdown_port && udp_bind(&w->ifc, cfg->shutdown_port, shutdown_udp, NULL) < 0)) {
		kprintf("skiff-uk: cpu %u: cannot bind UDP ports\n", k);
		kvm_exit(KVM_EXIT_FATAL);
	}
	/* Its sites first: they say what its loop needs. */
	struct uk_sites_need need;
	w->sites = uk_sites_worker(&need);
	if (!w->sites) {
		kprintf("skiff-uk: cpu %u: not booting\n", k);
		kvm_exit(KVM_EXIT_FATAL);
	}
	struct tcp_config tc = *cfg->tcp;
	tcp_iface_config(&tc, &w->ifc);
	if (plat_random(tc.seed, sizeof(tc.seed)) < 0) {
		tc.seed[0] = plat_cycles() ^ k;
		tc.seed[1] = plat_cycles() * 0x9e3779b97f4a7c15ull;
	}
	size_t tsz = tcp_arena_size(&tc);
	int rc = tcp_stack_init(&w->tcp, cfg->alloc("a worker's TCP arena", tsz), tsz, &tc, now);
	if (rc < 0 || tcp_iface_attach(&w->tcp, &w->ifc) < 0) {
		kprintf("skiff-uk: cpu %u: TCP init failed (%d)\n", k, rc);
		kvm_exit(KVM_EXIT_FATAL);
	}
	struct loop_skiff_config lsc = {
		.tcp = &w->tcp,
		.local_ip = ic.ip,
		.max_timers = need.conns + 16 + need.tls_conns + need.extra_socks, /* as uk_main.c's */
		.listen_backlog = cfg->listen_backlog,
		.now = now,
		.plat = {.run = worker_run, .stats = worker_stats, .fatal = worker_fatal, .ctx = w},
	};
	size_t lsz = loop_skiff_mem_size(&lsc);
	w->loop = loop_skiff_init(cfg->alloc("a worker's loop", lsz), lsz, &lsc);
	/* Its own error log, as worker 0's (rate-limited, to the console,
	 * whose lock keeps a line whole): a log has one writer. */
	ksnprintf(w->log_name, sizeof(w->log_name), "skiff-uk: cpu %u", k);
	sk_log_init(&w->elog, w->log_name, (enum sk_log_level)opt_num(cfg->opts, OPT_LOG_LEVEL), 10,
		    SK_NS_PER_S, console_sink, NULL);
	/* Its own access log, as worker 0's: on its loop and interface;
	 * before the engines are sized, as the hook takes scratch per
	 * connection. */
	const struct uk_alog *a0 = cfg->alog;
	if (w->loop && a0 && a0->loop)
		uk_alog_init(&w->alog, a0->fmt, a0->udp, a0->dst, a0->dport, &w->ifc, w->loop,
			     &w->elog, cfg->wall_sec);
	if (!w->loop ||
	    uk_sites_start(w->sites, w->loop, tc.max_sockets, cfg->opts,
			   w->alog.loop ? uk_alog_record : NULL, &w->alog, &w->elog) < 0 ||
	    uk_sites_late(w->sites) < 0) {
		kprintf("skiff-uk: cpu %u: its sites failed; not booting\n", k);
		kvm_exit(KVM_EXIT_FATAL);
	}
	w->loop->on_turn = refresh_date;
	w->loop->turn_ctx = w;
	refresh_date(w, now);
	w->run = (struct runner){.dev = &vn->dev, .ifc = &w->ifc, .tcp = &w->tcp, .until = cfg->until};
	w->run.spin_ns = cfg->spin_ns;
	w->run.spin_learn = cfg->spin_learn;
	loop_skiff_attach_runner(w->loop, &w->run);
	wrap_ops(w);
	return w;
}

unsigned uk_smp_start(struct virtio_net *vns, unsigned n, struct iface *ifc0,
		      const struct uk_smp_config *c)
{
	cfg_copy = *c;
	static struct uk_worker w0; /* worker 0's ARP reader; its stack is uk_main's */
	w0.index = 0;
	w0.vn = &vns[0];
	nworkers = 1;
	workers[0] = &w0;
	if (n > KVM_MAX_CPUS)
		n = KVM_MAX_CPUS;
	for (unsigned k = 1; k < n; k++)
		workers[nworkers++] = worker_build(k, &vns[k]);
	/* Worker 0's interface lives in uk_main; its receive path posts and
	 * takes ARP frames like the others'. */
	w0.ifp = ifc0;
	wrap_ops(&w0);
	unsigned started = 0;
	for (unsigned k = 1; k < nworkers; k++) {
		if (smp_run_on(k, worker_main, workers[k]) == 0)
			started++;
		else
			kprintf("skiff-uk: cpu %u: could not be given its worker\n", k);
	}
	return started;
}

void uk_smp_wake(void)
{
	for (unsigned k = 1; k < nworkers; k++)
		smp_kick(k);
}

unsigned uk_smp_drain_begun(unsigned *conns, sk_time_ns until)
{
	unsigned n = 0;
	for (unsigned k = 1; k < nworkers; k++) {
		struct uk_worker *w = workers[k];
		int st;
		while ((st = __atomic_load_n(&w->drained.state, __ATOMIC_ACQUIRE)) == UK_DRAIN_NOT_YET &&
		       !smp_idle(k) && plat_now() < until)
			__builtin_ia32_pause();
		conns[k] = st == UK_DRAIN_BEGUN || st == UK_DRAIN_ENDED ? w->drained.conns : 0;
		n += st == UK_DRAIN_BEGUN || st == UK_DRAIN_ENDED;
	}
	return n;
}

unsigned uk_smp_wait(sk_time_ns until)
{
	unsigned stopped = 0;
	for (unsigned k = 1; k < nworkers; k++) {
		while (!smp_idle(k) && plat_now() < until)
			__builtin_ia32_pause();
		if (smp_idle(k))
			stopped++;
		else
			kprintf("skiff-uk: cpu %u did not stop\n", k);
	}
	return stopped;
}

unsigned uk_smp_drained(struct uk_drain_result *sum)
{
	unsigned n = 0;
	for (unsigned k = 1; k < nworkers; k++) {
		const struct uk_drain_result *r = &workers[k]->drained;
		int st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		if (st == UK_DRAIN_ENDED) {
			sum->conns += r->conns;
			sum->left += r->left;
			sum->finished = sum->finished && r->finished;
			if (r->ms > sum->ms)
				sum->ms = r->ms;
			n++;
		} else if (st == UK_DRAIN_BEGUN) { /* still draining: not stopped in time */
			sum->conns += r->conns;
			sum->left += r->conns;
			sum->finished = false;
			n++;
		}
	}
	return n;
}

struct prefix_fwd {
	void (*fn)(void *ctx, const char *name, uint64_t v);
	void *ctx;
	unsigned k;
};

static void prefixed(void *ctx, const char *name, uint64_t v)
{
	const struct prefix_fwd *f = ctx;
	char n[112];
	ksnprintf(n, sizeof(n), "cpu%u.%s", f->k, name);
	f->fn(f->ctx, n, v);
}

void uk_smp_stats(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	fn(ctx, "smp.workers", nworkers);
	fn(ctx, "smp.arp_posted", arp_log.posted);
	fn(ctx, "cpu0.arp.fed", workers[0] ? workers[0]->arp_fed : 0);
	for (unsigned k = 1; k < nworkers; k++) {
		struct prefix_fwd f = {fn, ctx, k};
		uk_sites_stats(workers[k]->sites, prefixed, &f);
		if (workers[k]->alog.loop)
			uk_alog_stats(&workers[k]->alog, prefixed, &f);
		loop_stats(workers[k]->loop, prefixed, &f);
	}
}
