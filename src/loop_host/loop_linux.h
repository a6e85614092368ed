/* loop_linux.h — the loop API (loop.h) on Linux kernel sockets: epoll,
 * non-blocking sockets, TCP_NODELAY.  Hosted; see loop_linux.c. */
#ifndef LOOP_HOST_LOOP_LINUX_H
#define LOOP_HOST_LOOP_LINUX_H

#include "../loop/loop.h"

struct loop_linux_config {
	uint32_t max_timers; /* timers the application may have armed at once */
	int listen_backlog;  /* default for loop_listen(.., backlog <= 0): 4096 */
	/* SO_REUSEPORT on listeners: one per worker on the same port, and the
	 * kernel spreads connections over them by the 4-tuple's hash
	 * (serve --workers, docs/smp.md). */
	bool reuseport;
};

/* Create the loop, or NULL with a message in err. */
struct loop *loop_linux_create(const struct loop_linux_config *cfg, char *err, size_t errlen);

#endif
