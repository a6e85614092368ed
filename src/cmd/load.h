/* load.h — `skiff load` in two rooms: the command line, the workers and
 * the report (load_cli.c), and the connection machine that makes the
 * requests on a loop (load_conn.c).  The machine knows nothing of options,
 * processes or printing results: it is given a loop, what to ask and how
 * often, and fills a struct load_result. */
#ifndef APPS_LOAD_H
#define APPS_LOAD_H

#include "../base/hist.h"
#include "../loop/loop.h"

/* Failed requests by kind.  X(name) */
#define LOAD_ERRS(X) X(connect) X(read) X(write) X(timeout) X(status) X(parse)

/* One worker's results; in a mapping shared between the workers' processes
 * when there are several (--ips), summed by the parent at the end.  Written
 * only by its worker, except `held`, which the parent reads while the
 * workers run (--hold). */
struct load_result {
	uint64_t ok, bytes;
#define LR_FIELD(n) uint64_t err_##n;
	LOAD_ERRS(LR_FIELD)
#undef LR_FIELD
	uint64_t status_class[6]; /* [1..5]: 1xx..5xx */
	uint64_t connects;
	uint64_t held;    /* --hold: connections idle after their request */
	uint64_t elapsed; /* ns from start to stop */
	int exit_code;    /* a worker that could not run: 1 */
	struct sk_hist lat; /* ns per request that got a response (base/hist.h) */
};

/* What one worker does. */
struct load_params {
	struct sk_addr daddr; /* the server, either family */
	uint16_t dport;
	const char *host;     /* the Host header */
	const char *path;     /* the request target */
	uint32_t conns;       /* connections, all allocated at start */
	uint64_t requests;    /* to start in all; UINT64_MAX: until stopped */
	sk_time_ns duration;  /* 0: until the requests are done */
	sk_time_ns timeout;   /* per request, connect included */
	bool keepalive;       /* else Connection: close, one connection per request */
	bool hold;            /* one request per connection, then keep it open, idle */
	bool say_held;        /* --hold: print a line when every connection is held */
};

/* Run p's connections on l until the requests are done, the duration is
 * over or *stop is set (by a signal, or by the machine when done).
 * Returns 0, or -1 when the loop failed or memory ran out (with a message
 * on stderr).  l stays the caller's. */
int load_run(struct loop *l, const struct load_params *p, struct load_result *res,
	     volatile int *stop);

#endif
