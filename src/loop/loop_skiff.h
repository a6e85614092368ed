/* loop_skiff.h — the loop API (loop.h) on skiff's own TCP engine (net/tcp.h).
 *
 * Freestanding, like the engine and the server above it: no OS headers, no
 * clock, no allocation.  The backend is the part that is the same
 * everywhere: the op mapping (listen/accept/read/writev/... onto tcp_*),
 * the per-socket callback table, event dispatch and the timer heap.  What
 * differs per platform -- reading the clock, moving frames, parking -- is a
 * the platform's run function (struct loop_skiff_platform.run).  Both the
 * hosted server (host/serve_skiff.c) and the unikernel (uk/uk_main.c)
 * run it with the one run loop, runner/runner.h, over their own device and
 * plat.h's park.
 *
 * What a runner must do, every turn, with the platform's `now`:
 *   loop_skiff_turn(l, now);                   first: `now` and loop->on_turn
 *   feed received frames to the stack          (iface_rx -> tcp_input)
 *   if (loop_skiff_next_deadline(l) <= now)
 *           loop_skiff_timers(l, now);          the application's timers
 *   tcp_poll; then for every batch of tcp_events():
 *           loop_skiff_dispatch(l, ev, n, now); then tcp_poll again
 *   transmit; park until a frame or the earliest of the interface's,
 *   tcp_next_deadline() and loop_skiff_next_deadline(); stop when *stop.
 * runner.h's turn is exactly that: loop_skiff_attach_runner sets its
 * callbacks, and the platform's run is runner_run.
 */
#ifndef LOOP_LOOP_SKIFF_H
#define LOOP_LOOP_SKIFF_H

#include "../net/tcp.h"
#include "loop.h"
#include "../runner/runner.h"

/* Supplied by the platform.  Only `run` is required. */
struct loop_skiff_platform {
	/* Drive the turns above until *stop; return 0 or -SK_E*. */
	int (*run)(void *ctx, struct loop *l, volatile int *stop);
	/* loop_destroy(): give back what the platform set up (memory, device). */
	void (*release)(void *ctx, struct loop *l);
	/* Extra "name value" counters (device, runner, interface, TCP). */
	void (*stats)(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v),
		      void *fctx);
	/* A broken promise that must not go on (the timer heap overflowed):
	 * report and stop the program.  NULL: __builtin_trap(). */
	void (*fatal)(void *ctx, const char *msg);
	void *ctx;
};

struct loop_skiff_config {
	struct tcp_stack *tcp;  /* initialised; the backend owns its sockets */
	uint32_t local_ip;      /* loop_listen(addr) must be 0 or this */
	uint32_t max_timers;    /* timers the application may have armed at once */
	int listen_backlog;     /* loop_listen(.., <= 0): this; <= 0 here: TCP's default */
	sk_time_ns now;         /* loop_now() until the first turn */
	struct loop_skiff_platform plat;
};

/* Bytes loop_skiff_init needs (state, a callback slot per TCP socket, the
 * timer heap). */
size_t loop_skiff_mem_size(const struct loop_skiff_config *cfg);

/* Build the loop in `mem` (any alignment).  NULL if cfg is unusable or mem
 * too small.  loop->name is "skiff". */
struct loop *loop_skiff_init(void *mem, size_t size, const struct loop_skiff_config *cfg);

/* ---- for the runner ---- */

/* Start of a turn: remember `now` (what loop_now and close use), run
 * loop->on_turn. */
void loop_skiff_turn(struct loop *l, sk_time_ns now);
/* Hand one batch of tcp_events() to the watched callbacks. */
void loop_skiff_dispatch(struct loop *l, const struct tcp_event *ev, int n, sk_time_ns now);
/* The application's earliest timer (SK_TIME_NEVER: none), and firing the
 * due ones. */
sk_time_ns loop_skiff_next_deadline(struct loop *l);
void loop_skiff_timers(struct loop *l, sk_time_ns now);

/* Point the runner's callbacks (on_turn, on_tcp, app_deadline,
 * app_timers, ctx) at this loop: a runner with r->tcp == this loop's
 * engine then does every turn the list above asks for. */
void loop_skiff_attach_runner(struct loop *l, struct runner *r);

/* The engine under the loop, and the platform's ctx. */
struct tcp_stack *loop_skiff_tcp(struct loop *l);
void *loop_skiff_platform_ctx(struct loop *l);

#endif
