/* stopsig.h — waiting without sleeping through a stop signal (hosted).
 *
 * A handler for SIGINT/SIGTERM sets a flag the loop looks at.  A signal
 * that lands after the last look but before the wait starts would be
 * slept through (until a frame or a deadline, maybe never).  So the stop
 * signals are blocked for the last look and unblocked only inside the
 * wait, atomically (ppoll, epoll_pwait with a signal mask):
 *
 *   struct plat_stopsig s;
 *   if (!plat_stopsig_hold(&s, stop))  return;     already stopping
 *   ppoll(..., &s.wait);                            EINTR on a stop
 *   plat_stopsig_release(&s);
 *
 * A loop that waits every turn (loop_linux) may hold once around the
 * whole run instead; one that spins between waits (the runner) must
 * release while it works, or a stop under constant load would never be
 * delivered.  Used by plat/linux/park.c and loop_host/loop_linux.c. */
#ifndef PLAT_LINUX_STOPSIG_H
#define PLAT_LINUX_STOPSIG_H

#include <signal.h>
#include <stdbool.h>

struct plat_stopsig {
	sigset_t before; /* the mask before hold: what release restores */
	sigset_t wait;   /* before, with SIGINT and SIGTERM allowed: for the wait */
};

/* Block SIGINT and SIGTERM, then look at *stop: false (mask restored) if
 * it is set, true if the caller may wait with s->wait. */
bool plat_stopsig_hold(struct plat_stopsig *s, volatile int *stop);
void plat_stopsig_release(const struct plat_stopsig *s);

#endif
