/* runner.h — the run loop: one device, its interface, optionally a TCP
 * engine and an application, turned over plat.h's clock and park.
 *
 * Freestanding (plat.h is all it needs from below), so it is the same
 * code in every hosted command on skiff's stack (serve --stack skiff,
 * echo, tcp-client, load, ping) and in the unikernel.  A turn:
 *   1. now = plat_now(); on_turn (e.g. loop_skiff_turn: the Date header)
 *   2. dev_rx_sync; iface_rx feeds the rx ring to the interface, which
 *      hands TCP segments to the engine (tcp_input)
 *   3. interface timers; the application's due timers
 *   4. tcp_poll; then, in bounded rounds, tcp_events -> on_tcp and
 *      tcp_poll again for what the application sent
 *   5. one dev_tx_sync for everything the turn produced
 *   6. work done: turn again at once.  Otherwise spin (plat_relax) while
 *      the spin budget lasts, because the next frame may follow soon;
 *      then park (plat_park) until a frame or the earliest deadline of
 *      the interface, TCP, the application and `until`.
 * The device's wake-up source is asked for again right before every park
 * (a switch port re-arms its wake-up point there, virtio-net enables its
 * interrupt and looks once more), so a frame that arrived between the
 * last look and the park ends it at once: nothing is lost, and an idle
 * runner uses no CPU.
 *
 * The spin adapts to the arrival gaps (spin_ns is its cap): see
 * struct runner_spin and runner.c.
 */
#ifndef LOOP_RUNNER_H
#define LOOP_RUNNER_H

#include "../base/hist.h"
#include "../dev/dev.h"
#include "../net/iface.h"
#include "../net/tcp.h"

struct runner;

/* Socket events popped from the TCP engine this turn. */
typedef void (*runner_tcp_fn)(void *ctx, struct runner *r, const struct tcp_event *ev, int n,
			      sk_time_ns now);
/* The application's own timers: the earliest deadline (SK_TIME_NEVER if
 * none), and running those due at `now`. */
typedef sk_time_ns (*runner_deadline_fn)(void *ctx);
typedef void (*runner_timers_fn)(void *ctx, sk_time_ns now);
/* Once per turn, before anything else (e.g. refresh a cached Date). */
typedef void (*runner_turn_fn)(void *ctx, sk_time_ns now);

/* The learned spin.  A "gap" is the time from the last turn with work to
 * the next one, sampled whenever work follows at least one idle turn.
 * Gaps are counted in power-of-two buckets (hist[k]: gaps below
 * 2^(k+RUNNER_GAP_SHIFT0) ns, the last bucket everything longer), halved
 * every RUNNER_SPIN_EPOCH samples so the picture follows the load.  At
 * each epoch the budget becomes the bucket bound B (or 0) that minimises
 * the expected cost per gap: a gap shorter than B costs its length in
 * spinning, a longer one B plus the cost of a park and wake-up
 * (RUNNER_PARK_COST_NS).  Bounded by the cap (runner.spin_ns). */
#define RUNNER_GAP_SHIFT0 10 /* first bucket: gaps under 1.02 us */
#define RUNNER_GAP_BUCKETS 12 /* ... up to 2.1 ms, then "longer" */
struct runner_spin {
	uint32_t hist[RUNNER_GAP_BUCKETS + 1];
	uint32_t samples;         /* since the last epoch */
	uint64_t epochs;          /* times the budget was re-learned */
	sk_time_ns budget;        /* the spin after work now; starts at the cap */
	sk_time_ns last_work;     /* `now` of the last turn with work */
	bool idle_since;          /* a turn without work came after it */
};

struct runner {
	struct dev *dev;
	struct iface *ifc;
	struct tcp_stack *tcp;       /* NULL: no TCP */
	runner_tcp_fn on_tcp;        /* optional */
	runner_deadline_fn app_deadline; /* optional, with app_timers */
	runner_timers_fn app_timers;
	runner_turn_fn on_turn;      /* optional */
	void *ctx;                   /* passed to the callbacks */
	uint64_t spin_ns;            /* cap on the spin after work; 0 = park at once */
	sk_time_ns until;            /* return 0 once plat_now() reaches it
				      * (exit-after); 0 = SK_TIME_NEVER */
	struct sk_trace *trace;      /* --trace (base/hist.h): the device and park
				      * stages are timed into it; NULL: off */
	/* set when runner_run returns < 0 */
	const char *err_what;        /* "rx", "tx" or "park" */
	int err;                     /* the negative code */
	/* counters */
	uint64_t turns;         /* loop iterations */
	uint64_t busy_turns;    /* turns that moved at least one frame or event */
	uint64_t parks;         /* times it slept in plat_park */
	uint64_t wakeups_frame; /* parks ended by the device */
	uint64_t wakeups_timer; /* parks ended by the deadline */
	uint64_t wakeups_other; /* parks ended otherwise (a signal, another interrupt) */
	uint64_t tcp_events;    /* socket events handed to the application */
	uint64_t spin_turns;    /* idle turns spent spinning */
	uint64_t spin_hits;     /* spins that ended in work */
	uint64_t spin_misses;   /* spins that ran out: a park followed */
	struct runner_spin spin;
};

/* Run until *stop becomes non-zero or `until`.  Returns 0, or -1 on a
 * device or park error (err_what and err say which). */
int runner_run(struct runner *r, volatile int *stop);

/* "name value" counters: loop.turns ... loop.spin_budget_ns. */
void runner_stats(const struct runner *r, void (*fn)(void *ctx, const char *name, uint64_t v),
		  void *ctx);

/* The spin learning, exposed for the unit test: one gap sample, and the
 * budget the current histogram gives for cap. */
void runner_spin_sample(struct runner_spin *s, sk_time_ns gap, sk_time_ns cap);
sk_time_ns runner_spin_choose(const struct runner_spin *s, sk_time_ns cap);

#endif
