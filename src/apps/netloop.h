/* netloop.h — the hosted run loop for one device, its interface and
 * (optionally) a TCP stack.
 *
 * Each turn: rx_sync; feed the rx ring to the interface (which hands TCP
 * segments to the TCP engine); run due timers; run the TCP engine, hand its
 * socket events to the application (on_tcp), run the application's due
 * timers, run the engine again for what the application sent; tx_sync once
 * for everything the turn produced.  After a turn with work it keeps
 * polling for a bounded time (spin_ns, ~100 us), because the next frame
 * usually follows soon; then it parks in ppoll() on the device's fd until a
 * frame arrives or the earliest deadline (interface, TCP, application).
 * poll() is level-triggered and the device's fd is asked for again before
 * every park (a switch port re-arms its wake-up point there), so a frame
 * that arrived between the last look and the park wakes it at once:
 * nothing is lost and an idle process uses no CPU.
 */
#ifndef APPS_NETLOOP_H
#define APPS_NETLOOP_H

#include <signal.h>

#include "../dev/dev.h"
#include "../net/iface.h"
#include "../net/tcp.h"

struct netloop;

/* Socket events popped from the TCP engine this turn. */
typedef void (*netloop_tcp_fn)(void *ctx, struct netloop *l, const struct tcp_event *ev, int n,
			       sk_time_ns now);
/* The application's own timers: the earliest deadline (SK_TIME_NEVER if
 * none), and running those due at `now`. */
typedef sk_time_ns (*netloop_deadline_fn)(void *ctx);
typedef void (*netloop_timers_fn)(void *ctx, sk_time_ns now);
/* Once per turn, before anything else (e.g. refresh a cached Date). */
typedef void (*netloop_turn_fn)(void *ctx, sk_time_ns now);

struct netloop {
	struct dev *dev;
	struct iface *ifc;
	struct tcp_stack *tcp;       /* NULL: no TCP */
	netloop_tcp_fn on_tcp;       /* optional */
	netloop_deadline_fn app_deadline; /* optional, with app_timers */
	netloop_timers_fn app_timers;
	netloop_turn_fn on_turn;     /* optional */
	void *ctx;                   /* passed to the callbacks */
	uint64_t spin_ns;            /* bounded spin after work; 0 = park at once */
	struct sk_trace *trace;      /* --trace (base/hist.h): the device and park
				      * stages are timed into it; NULL: off */
	/* counters */
	uint64_t turns;         /* loop iterations */
	uint64_t busy_turns;    /* turns that moved at least one frame or event */
	uint64_t parks;         /* times it slept in ppoll */
	uint64_t wakeups_frame; /* parks ended by the device fd */
	uint64_t wakeups_timer; /* parks ended by the deadline */
	uint64_t tcp_events;    /* socket events handed to the application */
};

/* Run until *stop becomes non-zero.  Returns 0, or -1 on a device error. */
int netloop_run(struct netloop *l, volatile sig_atomic_t *stop);

void netloop_print_stats(const struct netloop *l, void *file);

#endif
