/* park.c — plat_park and the stop-signal hold on Linux (plat.h,
 * stopsig.h): a ppoll on the device's fd with SIGINT/SIGTERM unblocked
 * only inside it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "../plat.h"
#include "stopsig.h"

bool plat_stopsig_hold(struct plat_stopsig *s, volatile int *stop)
{
	sigset_t stopsigs;
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	/* One call blocks them and returns the mask before: the wait mask is
	 * that without the stop signals (they may have been blocked already). */
	sigprocmask(SIG_BLOCK, &stopsigs, &s->before);
	s->wait = s->before;
	sigdelset(&s->wait, SIGINT);
	sigdelset(&s->wait, SIGTERM);
	if (*stop) {
		plat_stopsig_release(s);
		return false;
	}
	return true;
}

void plat_stopsig_release(const struct plat_stopsig *s)
{
	sigprocmask(SIG_SETMASK, &s->before, NULL);
}

int plat_park(sk_time_ns deadline, const struct plat_wake *w, volatile int *stop)
{
	/* The device first; the side fd, if any, after it (a negative fd is
	 * ignored by ppoll). */
	struct pollfd pfd[2] = {{.fd = w ? w->fd : -1, .events = POLLIN},
				{.fd = w && w->has_side ? w->side_fd : -1, .events = POLLIN}};
	sk_time_ns now = plat_now();
	if (deadline <= now)
		return PLAT_WOKE_NONE;
	if (pfd[0].fd < 0 && deadline - now > PLAT_PARK_POLL_NS)
		deadline = now + PLAT_PARK_POLL_NS; /* nothing would wake us: poll */
	struct timespec ts, *tsp = NULL;
	if (deadline != SK_TIME_NEVER) {
		sk_time_ns wait = deadline - now;
		ts.tv_sec = (time_t)(wait / SK_NS_PER_S);
		ts.tv_nsec = (long)(wait % SK_NS_PER_S);
		tsp = &ts;
	}
	struct plat_stopsig s;
	if (!plat_stopsig_hold(&s, stop))
		return PLAT_WOKE_STOP;
	int r = ppoll(pfd, 2, tsp, &s.wait);
	int err = errno;
	plat_stopsig_release(&s);
	if (r > 0)
		return pfd[0].revents ? PLAT_WOKE_FRAME : PLAT_WOKE_SIDE;
	if (r == 0)
		return PLAT_WOKE_TIMER;
	if (err == EINTR)
		return *stop ? PLAT_WOKE_STOP : PLAT_WOKE_OTHER;
	return -err;
}
