/* workers.h — the share-nothing workers of `skiff serve`, `skiff echo` and
 * the hosted applications (--workers N, docs/smp.md): how many, which CPU
 * each is pinned to, the per-worker stop, drain and reload flags the signal
 * handlers set, the wake-up of workers parked in their own waits, and the
 * threads (worker 0 is the main thread; 1..N-1 are started once all are
 * built, and joined).  What a worker *is* (a server, an echo host, an
 * application engine) is the caller's: it embeds a struct worker and
 * gives a run function.
 *
 * One set per process: the handlers find it through workers_publish. */
#ifndef APPS_WORKERS_H
#define APPS_WORKERS_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define WORKERS_MAX 64

struct worker {
	unsigned id;    /* 0: the main thread */
	int cpu;        /* pinned to it; -1: not pinned (one worker) */
	/* Set by the signal handlers (any thread), read by this worker's
	 * loop; only ever set, never cleared while running (the loop looks
	 * at them with the signals blocked, plat/linux/stopsig.h). */
	volatile int stop, drain_stop;
	volatile sig_atomic_t reload;
	atomic_int tid; /* its thread's, for the wake-up; 0 until it runs */
	pthread_t thread;
	int rc;         /* what its run function returned */
};

/* --workers as asked (opt_num of OPT_WORKERS, OPT_NUM_AUTO for auto),
 * bounded by WORKERS_MAX and, for an xdp: device (dev may be NULL), by its
 * rx queues (one AF_XDP socket a queue; warned on stderr as `who`).
 * cpus[] gets the allowed CPUs in order, *ncpus their count. */
unsigned workers_plan(uint64_t want, const char *dev, const char *who, int cpus[WORKERS_MAX],
		      unsigned *ncpus);

/* The CPU worker i of n is pinned to: -1 for one worker. */
static inline int workers_cpu(unsigned i, unsigned n, const int *cpus, unsigned ncpus)
{
	return n > 1 && ncpus ? cpus[i % ncpus] : -1;
}

/* The set the handlers act on: n workers, each at (char *)base + i*stride
 * + off (its struct worker inside the caller's).  Call with the workers
 * built so far (the handlers see those), and with n = 0 once the threads
 * are joined (the handlers touch nothing from then on). */
void workers_publish(void *base, size_t stride, size_t off, unsigned n);
unsigned workers_count(void);
struct worker *workers_at(unsigned i);

/* For signal handlers (async-signal-safe): set every worker's stop (and
 * drain_stop with drain_too) and wake the parked ones; set every
 * worker's reload.  The wake-up is one round per signal number: the
 * handler that runs first sends the signal on to every other worker's
 * thread (a parked worker sleeps in ppoll or epoll_pwait, which only a
 * signal to its own thread ends); the handlers those run see the round
 * taken and send nothing. */
void workers_signal_stop(int sig, bool drain_too);
void workers_signal_reload(void);

/* Run: start workers 1..n-1 on their threads (each stores its tid, pins
 * itself, then run(w, ctx)), run worker 0 on this thread likewise, join
 * the others.  A thread that cannot start stops every worker.  pin_failed
 * (may be NULL) is told of a CPU that could not be taken (a worker still
 * works unpinned, only less well).  Returns worker 0's run value, or the
 * first negative one of the others. */
int workers_run(int (*run)(struct worker *w, void *ctx), void *ctx, const char *who,
		void (*pin_failed)(int cpu));

#endif
