/* shm.h — what `skiff switch` and its port device (switch:NAME/PORT,
 * shm.c) share on the hosted side: the switch's socket address and its
 * name rules.  The shared-memory contract itself is src/ring/swport.h.
 */
#ifndef DEV_SHM_H
#define DEV_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "../ring/swport.h"

/* A switch NAME: 1..SWPORT_NAME_MAX bytes of [A-Za-z0-9_.-]. */
bool shm_name_ok(const char *name, size_t len);

/* The abstract unix socket address of switch NAME (len bytes of name).
 * Returns the address length for bind/connect, or 0 for a bad name. */
socklen_t shm_switch_addr(const char *name, size_t len, struct sockaddr_un *addr);

#endif
