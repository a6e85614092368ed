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
 * The spin adapts to the arrival gaps (spin_ns is its cap): spin.h.
 */
#ifndef RUNNER_RUNNER_H
#define RUNNER_RUNNER_H

#include "../base/hist.h"
#include "../dev/dev.h"
#include "../net/iface.h"
#include "../net/tcp.h"
#include "spin.h"

struct runner;

#define RUNNER_SIDE_EVERY_NS (10 * SK_NS_PER_MS)

/* Socket events popped from the TCP engine this turn. */
typedef void (*runner_tcp_fn)(void *ctx, struct runner *r, const struct tcp_event *ev, int n,
			      sk_time_ns now);
/* The application's own timers: the earliest deadline (SK_TIME_NEVER if
 * none), and running those due at `now`. */
typedef sk_time_ns (*runner_deadline_fn)(void *ctx);
typedef void (*runner_timers_fn)(void *ctx, sk_time_ns now);
/* Once per turn, before anything else (e.g. refresh a cached Date). */
typedef void (*runner_turn_fn)(void *ctx, sk_time_ns now);

struct runner {
	struct dev *dev;
	struct iface *ifc;
	struct tcp_stack *tcp;       /* NULL: no TCP */
	runner_tcp_fn on_tcp;        /* optional */
	runner_deadline_fn app_deadline; /* optional, with app_timers */
	runner_timers_fn app_timers;
	runner_turn_fn on_turn;      /* optional */
	void *ctx;                   /* passed to the callbacks */
	sk_time_ns spin_ns;          /* cap on the spin after work; 0 = park at once */
	bool spin_learn;             /* learn the spin below the cap (spin.h); false:
				      * always spin_ns */
	sk_time_ns until;            /* return 0 once plat_now() reaches it
				      * (exit-after); 0 = SK_TIME_NEVER */
	struct sk_trace *trace;      /* --trace (base/hist.h): the device and park
				      * stages are timed into it; NULL: off */
	/* Optional: a second thing to wait on besides the device (hosted: the
	 * admin sockets' epoll fd, host/admin.h).  on_side(side_ctx, now) runs
	 * when a park ends on side_fd, and while the runner is too busy to
	 * park at most every RUNNER_SIDE_EVERY_NS: one compare per turn,
	 * nothing per frame or request.  on_side NULL: none. */
	void (*on_side)(void *side_ctx, sk_time_ns now);
	void *side_ctx;
	int side_fd;
	sk_time_ns side_next;        /* the runner's: the next look while busy */
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
	struct spin spin;       /* set up by runner_run from spin_ns */
};

/* Run until *stop becomes non-zero or `until`.  Returns 0, or -1 on a
 * device or park error (err_what and err say which). */
int runner_run(struct runner *r, volatile int *stop);

/* "name value" counters: loop.turns ... loop.tcp_events, then the
 * spin's (loop.spin_turns ... loop.spin_budget_ns). */
void runner_stats(const struct runner *r, void (*fn)(void *ctx, const char *name, uint64_t v),
		  void *ctx);

#endif
