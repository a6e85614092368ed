/* workers.c — the generic part of --workers (workers.h): planning,
 * pinning, the flags the handlers set, the wake-up, the threads. */
#include "workers.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../dev/dev_open.h"
#include "../conf/opts.h"

/* The process's set: written before the handlers can run on it (and
 * before any thread starts), read by the handlers. */
static char *ws_base;
static size_t ws_stride, ws_off;
static volatile unsigned ws_n;
/* One wake-up round per signal number (workers.h). */
static atomic_int ws_woke[65];

static unsigned allowed_cpus(int *cpus, unsigned max)
{
	cpu_set_t set;
	unsigned n = 0;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

unsigned workers_plan(uint64_t want, const char *dev, const char *who, int cpus[WORKERS_MAX],
		      unsigned *ncpus)
{
	*ncpus = allowed_cpus(cpus, WORKERS_MAX);
	unsigned n = want == OPT_NUM_AUTO ? (*ncpus ? *ncpus : 1) : (unsigned)want;
	if (n > WORKERS_MAX)
		n = WORKERS_MAX;
	if (n > 1 && dev && strncmp(dev, "xdp:", 4) == 0) {
		/* One AF_XDP socket per rx queue, and a flow reaches only the
		 * socket of the queue the device put it on: no more workers than
		 * queues (docs/smp.md). */
		unsigned q = dev_rx_queues(dev + 4);
		if (q && q < n) {
			fprintf(stderr,
				"%s: warning: %s has %u rx queue%s: using %u worker%s, not %u "
				"(a veth gets more with numrxqueues/numtxqueues)\n",
				who, dev, q, q == 1 ? "" : "s", q, q == 1 ? "" : "s", n);
			n = q;
		}
	}
	return n;
}

void workers_publish(void *base, size_t stride, size_t off, unsigned n)
{
	if (n == 0)
		ws_n = 0; /* first: a handler running now sees no set */
	ws_base = base;
	ws_stride = stride;
	ws_off = off;
	ws_n = n;
}

unsigned workers_count(void)
{
	return ws_n;
}

struct worker *workers_at(unsigned i)
{
	return (struct worker *)(void *)(ws_base + (size_t)i * ws_stride + ws_off);
}

static void wake(int sig)
{
	unsigned n = ws_n;
	if (n < 2 || sig <= 0 || sig >= 65 || atomic_exchange(&ws_woke[sig], 1))
		return;
	pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
	for (unsigned i = 0; i < n; i++) {
		pid_t t = (pid_t)atomic_load(&workers_at(i)->tid);
		/* 0: not running yet; it will see the flag before it waits. */
		if (t && t != self)
			syscall(SYS_tgkill, pid, t, sig);
	}
}

void workers_signal_stop(int sig, bool drain_too)
{
	unsigned n = ws_n;
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = workers_at(i);
		if (drain_too)
			w->drain_stop = 1;
		w->stop = 1;
	}
	wake(sig);
}

void workers_signal_reload(void)
{
	unsigned n = ws_n;
	for (unsigned i = 0; i < n; i++)
		workers_at(i)->reload = 1;
}

struct thread_args {
	struct worker *w;
	int (*run)(struct worker *w, void *ctx);
	void *ctx;
	void (*pin_failed)(int cpu);
};

static void start_here(struct thread_args *a)
{
	struct worker *w = a->w;
	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		/* Best effort: unpinned, a worker still works, only less well. */
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0 && a->pin_failed)
			a->pin_failed(w->cpu);
	}
	w->rc = a->run(w, a->ctx);
}

static void *thread_main(void *arg)
{
	start_here(arg);
	return NULL;
}

int workers_run(int (*run)(struct worker *w, void *ctx), void *ctx, const char *who,
		void (*pin_failed)(int cpu))
{
	unsigned n = ws_n;
	struct thread_args args[WORKERS_MAX];
	for (unsigned i = 0; i < n && i < WORKERS_MAX; i++)
		args[i] = (struct thread_args){workers_at(i), run, ctx, pin_failed};
	unsigned started = 1;
	for (unsigned i = 1; i < n; i++, started++) {
		if (pthread_create(&workers_at(i)->thread, NULL, thread_main, &args[i]) != 0) {
			fprintf(stderr, "%s: cannot start worker %u\n", who, i);
			for (unsigned k = 0; k < n; k++)
				workers_at(k)->stop = workers_at(k)->drain_stop = 1;
			break;
		}
	}
	start_here(&args[0]);
	int rc = args[0].w->rc;
	for (unsigned i = 1; i < started; i++) {
		pthread_join(workers_at(i)->thread, NULL);
		if (workers_at(i)->rc < 0 && rc >= 0)
			rc = workers_at(i)->rc;
	}
	return rc;
}
