/* sk_err.h — errno-style error codes shared by every layer, freestanding.
 *
 * Functions return a negative code (-SK_EAGAIN ...).  The values are Linux's
 * errno numbers, so the Linux-sockets backend of the loop API can return
 * -errno unchanged.  They live in base/ because both net/tcp.h and
 * loop/loop.h speak them and loop.h must not depend on net/.
 */
#ifndef BASE_SK_ERR_H
#define BASE_SK_ERR_H

#define SK_EBADF 9
#define SK_EAGAIN 11
#define SK_ENOMEM 12
#define SK_EINVAL 22
#define SK_EMFILE 24
#define SK_EPIPE 32
#define SK_EMSGSIZE 90
#define SK_EOPNOTSUPP 95
#define SK_EADDRINUSE 98
#define SK_EADDRNOTAVAIL 99
#define SK_ENETUNREACH 101
#define SK_ECONNABORTED 103
#define SK_ECONNRESET 104
#define SK_ENOBUFS 105
#define SK_EISCONN 106
#define SK_ENOTCONN 107
#define SK_ETIMEDOUT 110
#define SK_ECONNREFUSED 111
#define SK_EHOSTUNREACH 113
#define SK_EALREADY 114
#define SK_EINPROGRESS 115

#endif
