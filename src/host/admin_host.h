/* admin_host.h — a hosted server's --metrics page and control socket
 * (host/admin.h) started from its options, on its worker 0's loop: what
 * `skiff serve`, the applications and `skiff proxy` show, and what
 * `skiff stat` reads.
 *
 * The source's callbacks run on that loop's thread and read other
 * workers' counters without a lock: each counter is written by its own
 * worker's thread only, and 64-bit aligned loads are never torn, only a
 * little behind. */
#ifndef APPS_ADMIN_HOST_H
#define APPS_ADMIN_HOST_H

#include <stdbool.h>

#include "../conf/opts.h"
#include "../loop/loop.h"
#include "admin.h"

/* src shows the server, on loop (worker 0's; on_skiff: skiff's stack,
 * whose runner watches the admin's fd); `what` names it in messages and
 * in `skiff stat`'s header.  NULL when neither --metrics nor a control
 * socket is wanted (or the default control socket could not be made: a
 * warning in the error log); exits 1 on an explicit option that cannot be
 * served. */
struct admin *admin_start(const struct admin_source *src, struct loop *loop, bool on_skiff,
			  const struct opts *o, const char *what);

#endif
