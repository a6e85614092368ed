/* netloop.h — the hosted run loop for one device and one interface.
 *
 * Each turn: rx_sync; feed the rx ring to the stack; run due timers;
 * tx_sync once for everything the turn produced.  After a turn with work it
 * keeps polling for a bounded time (spin_ns, ~100 us), because the next
 * frame usually follows soon; then it parks in ppoll() on the device's fd
 * until a frame arrives or the stack's next deadline.  poll() is level-
 * triggered, so a frame that arrived between the last look and the park
 * wakes it at once: nothing is lost and an idle process uses no CPU.
 */
#ifndef APPS_NETLOOP_H
#define APPS_NETLOOP_H

#include <signal.h>

#include "../dev/dev.h"
#include "../net/iface.h"

struct netloop {
	struct dev *dev;
	struct iface *ifc;
	uint64_t spin_ns;       /* bounded spin after work; 0 = park at once */
	/* counters */
	uint64_t turns;         /* loop iterations */
	uint64_t busy_turns;    /* turns that moved at least one frame */
	uint64_t parks;         /* times it slept in ppoll */
	uint64_t wakeups_frame; /* parks ended by the device fd */
	uint64_t wakeups_timer; /* parks ended by the deadline */
};

/* Run until *stop becomes non-zero.  Returns 0, or -1 on a device error. */
int netloop_run(struct netloop *l, volatile sig_atomic_t *stop);

void netloop_print_stats(const struct netloop *l, void *file);

#endif
