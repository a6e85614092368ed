/* netloop.c — see netloop.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../plat/plat.h"
#include "netloop.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#endif
}

int netloop_run(struct netloop *l, volatile sig_atomic_t *stop)
{
	struct dev *d = l->dev;
	sk_time_ns spin_until = 0;
	while (!*stop) {
		sk_time_ns now = plat_now();
		l->turns++;
		int n = dev_rx_sync(d);
		if (n < 0) {
			fprintf(stderr, "skiff: device %s: rx failed: %s\n", d->name, strerror(-n));
			return -1;
		}
		unsigned work = 0;
		if (ring_avail(d->rx))
			work = iface_rx(l->ifc, now);
		if (iface_next_deadline(l->ifc) <= now)
			iface_poll(l->ifc, now);
		n = dev_tx_sync(d);
		if (n < 0) {
			fprintf(stderr, "skiff: device %s: tx failed: %s\n", d->name, strerror(-n));
			return -1;
		}
		if (work) {
			l->busy_turns++;
			spin_until = now + l->spin_ns;
			continue;
		}
		if (now < spin_until) {
			cpu_relax();
			continue;
		}
		/* Park until a frame or the next deadline. */
		sk_time_ns deadline = iface_next_deadline(l->ifc);
		struct timespec ts, *tsp = NULL;
		if (deadline != SK_TIME_NEVER) {
			sk_time_ns wait = deadline > now ? deadline - now : 0;
			ts.tv_sec = (time_t)(wait / SK_NS_PER_S);
			ts.tv_nsec = (long)(wait % SK_NS_PER_S);
			tsp = &ts;
		}
		struct pollfd pfd = {.fd = dev_poll_fd(d), .events = POLLIN};
		l->parks++;
		int r = ppoll(&pfd, pfd.fd >= 0 ? 1 : 0, tsp, NULL);
		if (r > 0)
			l->wakeups_frame++;
		else if (r == 0)
			l->wakeups_timer++;
		else if (errno != EINTR) {
			fprintf(stderr, "skiff: ppoll: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

void netloop_print_stats(const struct netloop *l, void *file)
{
	FILE *f = file;
	fprintf(f, "loop.turns %llu\n", (unsigned long long)l->turns);
	fprintf(f, "loop.busy_turns %llu\n", (unsigned long long)l->busy_turns);
	fprintf(f, "loop.parks %llu\n", (unsigned long long)l->parks);
	fprintf(f, "loop.wakeups_frame %llu\n", (unsigned long long)l->wakeups_frame);
	fprintf(f, "loop.wakeups_timer %llu\n", (unsigned long long)l->wakeups_timer);
}
