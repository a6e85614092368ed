/* prom_server.h — GET /metrics on the loop API (loop/loop.h): the
 * unikernel's metrics= port, on skiff's own TCP, beside the HTTP server.
 *
 * Freestanding and allocation-free: the caller gives the memory (one
 * answer buffer per connection) and a fill function that writes the
 * exposition (http/prom.h) when a request asks for it, on the loop's
 * thread, so the counters are read consistent and only then.  Each client
 * gets one answer (prom_route decides it) and a close; at most
 * PROM_SERVER_CONNS at once (more are closed at accept), and one not done
 * within PROM_SERVER_TIMEOUT_NS is closed by a once-a-second timer that
 * runs only while a client is open.  Nothing here runs per request of the
 * main server. */
#ifndef HTTP_PROM_SERVER_H
#define HTTP_PROM_SERVER_H

#include "../loop/loop.h"
#include "parser.h"
#include "prom.h"

#define PROM_SERVER_CONNS 2
#define PROM_SERVER_TIMEOUT_NS (5 * SK_NS_PER_S)

typedef void prom_fill_fn(void *ctx, struct prom_out *o);

/* One client.  sock >= 0 iff in use; `out` (out_len bytes, out_off sent)
 * is set once the answer is decided, pointing into `buf`. */
struct prom_conn {
	int sock;
	sk_time_ns since;
	size_t in_len;
	const char *out;
	size_t out_len, out_off;
	char *buf; /* buf_size bytes of the caller's memory */
	uint8_t in[2048];
};

struct prom_server {
	struct loop *loop;
	int lsock;
	prom_fill_fn *fill;
	void *ctx;
	size_t buf_size;
	struct loop_timer reaper;
	struct prom_conn c[PROM_SERVER_CONNS];
	struct http_req req;
	/* counters */
	uint64_t scrapes, refused, errors;
};

/* Bytes of memory prom_server_start wants for answers of up to body_max. */
static inline size_t prom_server_mem_size(size_t body_max)
{
	return PROM_SERVER_CONNS * (body_max + PROM_HEAD_MAX);
}

/* Listen on port (all the loop's addresses).  0, or -SK_E*. */
int prom_server_start(struct prom_server *ps, struct loop *l, uint16_t port, void *mem,
		      size_t memsz, prom_fill_fn *fill, void *ctx);

/* "name value": prom.scrapes, prom.refused, prom.errors. */
void prom_server_stats(const struct prom_server *ps,
		       void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

#endif
