/* load_conn.c — `skiff load`'s connection machine (load.h), on the loop API,
 * so the same code drives kernel sockets and skiff's own TCP/IP.
 *
 * Shape:
 *  - C connections, each a small fixed struct (no receive buffer: every
 *    read goes into one shared scratch buffer and through the streaming
 *    response parser, http/resp.h, and the chunked decoder), all allocated
 *    at start.  Nothing is allocated per request: the request bytes are one
 *    string built at start, latencies go into a fixed log-bucket histogram
 *    (base/hist.h).
 *  - Keep-alive: a connection sends its next request as soon as the
 *    response is complete.  Close mode: "Connection: close", and every
 *    request gets a new connection.
 *  - At most LOAD_MAX_CONNECTING handshakes in flight: 100,000 connects at
 *    once would only overflow rings and SYN queues and then wait for
 *    retransmission timers; a bounded window paces itself.
 *  - One timer per connection, armed lazily: the true deadline lives in the
 *    connection and the timer is only moved when it fires early, so a
 *    request costs no heap operation (loop.h's advice).
 *  - hold: every connection makes one request and then stays open and
 *    idle until the duration ends or a signal (the server memory benchmark).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../http/chunked.h"
#include "../http/resp.h"
#include "../plat/plat.h"
#include "load.h"

#define LOAD_MAX_CONNECTING 256
#define LOAD_SCRATCH (64u * 1024)
#define LOAD_RETRY_NS (10 * SK_NS_PER_MS) /* pause after a failed connect */
/* How long the first connect may find no source address: skiff's IPv6
 * addresses are tentative until DAD passes (RFC 4862, about a second). */
#define LOAD_SRC_WAIT_NS (5 * SK_NS_PER_S)

enum { C_IDLE, C_CONNECTING, C_SENDING, C_READING, C_HELD, C_WAIT_RETRY };

struct conn {
	struct load *ld;
	int sock; /* -1: none */
	uint8_t state;
	bool queued;    /* on the wait-for-a-connect-slot stack */
	bool headed;    /* the response head is complete */
	uint8_t body;   /* enum http_body_kind */
	uint32_t sent;  /* bytes of the request written */
	uint64_t left;  /* HTTP_BODY_LENGTH: body bytes still to come */
	sk_time_ns t0;  /* request start (or connect start, in close mode) */
	sk_time_ns deadline; /* timeout or retry; SK_TIME_NEVER: none */
	struct loop_timer timer;
	struct http_resp resp;
	struct http_chunked ch;
};

struct load {
	struct loop *loop;
	struct conn *conns;
	uint32_t nconns;
	uint32_t next_start; /* conns[next_start..] not started yet */
	uint32_t connecting;
	/* Handshakes allowed in flight: 1 until the first connect succeeds
	 * (skiff's ARP queue holds 32 datagrams: a burst of SYNs before the
	 * server's MAC is known would mostly be dropped and wait 1 s for a
	 * retransmission), then LOAD_MAX_CONNECTING. */
	uint32_t window;
	uint32_t idle_ready; /* conns waiting for a connect slot: a stack */
	uint32_t *ready;
	uint64_t budget;     /* requests still to start (-n); UINT64_MAX with -d */
	uint64_t in_flight;
	struct sk_addr daddr;
	uint16_t dport;
	bool src_waited; /* the first connect waited for a source (DAD): the clock starts at it */
	bool keepalive, hold, say_held;
	sk_time_ns timeout, start, end;
	struct loop_timer end_timer;
	const char *req;
	uint32_t req_len;
	struct load_result *res;
	uint8_t *scratch;
	volatile int *stop;
};

static void conn_event(void *user, int sock, unsigned ev, sk_time_ns now);
static void conn_begin(struct load *ld, struct conn *c, sk_time_ns now);

static void set_deadline(struct load *ld, struct conn *c, sk_time_ns d)
{
	c->deadline = d;
	/* Lazy: only an unarmed timer or one set too late moves. */
	if (d != SK_TIME_NEVER && (!loop_timer_armed(&c->timer) || c->timer.deadline > d))
		loop_timer_set(ld->loop, &c->timer, d);
}

static bool finished(const struct load *ld)
{
	return ld->budget == 0 && ld->in_flight == 0;
}

static void maybe_stop(struct load *ld)
{
	if (!ld->hold && finished(ld))
		*ld->stop = 1;
	/* --hold: the run lasts until -d or a signal; tell the caller (the
	 * memory benchmark) when every connection is idle. */
	if (ld->hold && ld->say_held && ld->res->held == ld->nconns) {
		printf("skiff load: holding %u connections\n", ld->nconns);
		fflush(stdout);
		ld->say_held = false;
	}
}

/* Drop the connection; start the next request on a new one if any. */
static void conn_drop(struct load *ld, struct conn *c, sk_time_ns now, bool again)
{
	if (c->sock >= 0) {
		if (c->state == C_CONNECTING && ld->connecting)
			ld->connecting--;
		loop_close(ld->loop, c->sock);
		c->sock = -1;
	}
	c->state = C_IDLE;
	c->deadline = SK_TIME_NEVER;
	if (again && ld->budget && !*ld->stop)
		conn_begin(ld, c, now);
}

/* A request that will not complete: count it by kind. */
static void conn_fail(struct load *ld, struct conn *c, uint64_t *counter, sk_time_ns now)
{
	bool was_connecting = c->state == C_CONNECTING || c->state == C_WAIT_RETRY;
	(*counter)++;
	ld->in_flight--;
	conn_drop(ld, c, now, false);
	if (ld->hold) {
		maybe_stop(ld);
		return;
	}
	if (was_connecting && ld->budget) {
		/* Do not hammer a refusing peer: retry after a pause. */
		c->state = C_WAIT_RETRY;
		set_deadline(ld, c, now + LOAD_RETRY_NS);
		return;
	}
	if (ld->budget && !*ld->stop)
		conn_begin(ld, c, now);
	maybe_stop(ld);
}

static void start_pending(struct load *ld, sk_time_ns now);

static void send_request(struct load *ld, struct conn *c, sk_time_ns now)
{
	while (c->sent < ld->req_len) {
		long n = loop_write(ld->loop, c->sock, ld->req + c->sent, ld->req_len - c->sent);
		if (n == -SK_EAGAIN)
			return; /* LOOP_EV_WRITE will call again */
		if (n < 0) {
			conn_fail(ld, c, &ld->res->err_write, now);
			return;
		}
		c->sent += (uint32_t)n;
	}
	c->state = C_READING;
}

/* Begin a request on c: on its open connection (keep-alive) or a new one. */
static void conn_begin(struct load *ld, struct conn *c, sk_time_ns now)
{
	if (!ld->budget)
		return;
	if (c->sock < 0 && ld->connecting >= ld->window) {
		/* No connect slot: wait on the stack; start_pending resumes. */
		if (!c->queued) {
			c->queued = true;
			ld->ready[ld->idle_ready++] = (uint32_t)(c - ld->conns);
		}
		return;
	}
	ld->budget--;
	ld->in_flight++;
	c->t0 = now;
	c->sent = 0;
	c->headed = false;
	http_resp_init(&c->resp);
	set_deadline(ld, c, now + ld->timeout);
	if (c->sock >= 0) {
		c->state = C_SENDING;
		send_request(ld, c, now);
		return;
	}
	int s = loop_connect(ld->loop, &ld->daddr, ld->dport);
	if (s >= 0 && loop_watch(ld->loop, s, conn_event, c) < 0) {
		loop_close(ld->loop, s);
		s = -SK_EBADF;
	}
	c->state = C_CONNECTING;
	if (s == -SK_EADDRNOTAVAIL && ld->window == 1 && now - ld->start < LOAD_SRC_WAIT_NS) {
		/* No usable source yet (DAD still running), before any connect
		 * succeeded: not a failed request; the same one again soon. */
		ld->budget++;
		ld->in_flight--;
		ld->src_waited = true;
		c->state = C_WAIT_RETRY;
		set_deadline(ld, c, now + LOAD_RETRY_NS);
		return;
	}
	if (s < 0) {
		conn_fail(ld, c, &ld->res->err_connect, now);
		return;
	}
	c->sock = s;
	ld->connecting++;
	if (ld->src_waited && ld->res->connects == 0)
		ld->start = now; /* the rate counts from the first connect, not from DAD */
	ld->res->connects++;
}

/* Connections waiting for a connect slot, then fresh ones. */
static void start_pending(struct load *ld, sk_time_ns now)
{
	while (ld->connecting < ld->window && ld->idle_ready && !*ld->stop) {
		struct conn *c = &ld->conns[ld->ready[--ld->idle_ready]];
		c->queued = false;
		if (c->state == C_IDLE && c->sock < 0)
			conn_begin(ld, c, now);
	}
	while (ld->connecting < ld->window && ld->next_start < ld->nconns &&
	       ld->budget && !*ld->stop)
		conn_begin(ld, &ld->conns[ld->next_start++], now);
}

static void record(struct load *ld, struct conn *c, sk_time_ns now)
{
	uint64_t lat = now - c->t0;
	struct load_result *r = ld->res;
	sk_hist_add(&r->lat, lat);
	unsigned cls = c->resp.status / 100;
	r->status_class[cls < 6 ? cls : 0]++;
	if (c->resp.status >= 200 && c->resp.status < 400)
		r->ok++;
	else
		r->err_status++;
	ld->in_flight--;
}

/* The response is complete: account, then the next request. */
static void response_done(struct load *ld, struct conn *c, sk_time_ns now)
{
	record(ld, c, now);
	bool reuse = ld->keepalive && http_resp_keep_alive(&c->resp);
	c->deadline = SK_TIME_NEVER;
	if (ld->hold && reuse) {
		c->state = C_HELD;
		ld->res->held++;
		maybe_stop(ld);
		return;
	}
	if (reuse && ld->budget && !*ld->stop) {
		conn_begin(ld, c, now);
		return;
	}
	conn_drop(ld, c, now, !ld->hold);
	maybe_stop(ld);
}

/* Feed freshly read bytes; returns false once c is no longer reading. */
static bool feed(struct load *ld, struct conn *c, uint8_t *p, size_t n, sk_time_ns now)
{
	while (n) {
		if (c->state != C_READING && c->state != C_SENDING) {
			/* Bytes nobody asked for (after a response, on an idle or
			 * held connection): the server is broken. */
			if (c->state == C_HELD)
				ld->res->held--;
			c->state = C_READING;
			ld->in_flight++;
			conn_fail(ld, c, &ld->res->err_parse, now);
			return false;
		}
		size_t used;
		if (!c->headed) {
			int v = http_resp_head(&c->resp, p, n, &used);
			if (v == HTTP_NEED_MORE)
				return true;
			if (v != HTTP_DONE) {
				conn_fail(ld, c, &ld->res->err_parse, now);
				return false;
			}
			p += used;
			n -= used;
			/* An interim response (100 Continue): the real one follows. */
			if (c->resp.status < 200 && c->resp.status != 101) {
				http_resp_init(&c->resp);
				continue;
			}
			c->headed = true;
			c->body = (uint8_t)http_resp_body(&c->resp, false);
			c->left = c->resp.content_length;
			if (c->body == HTTP_BODY_CHUNKED)
				http_chunked_init(&c->ch, UINT64_MAX);
		}
		switch (c->body) {
		case HTTP_BODY_NONE:
			break;
		case HTTP_BODY_LENGTH: {
			uint64_t take = n < c->left ? n : c->left;
			c->left -= take;
			p += take;
			n -= (size_t)take;
			if (c->left)
				return true;
			break;
		}
		case HTTP_BODY_CHUNKED: {
			size_t len = n;
			int v = http_chunked_decode(&c->ch, p, &len, &used);
			p += used;
			n -= used;
			if (v == HTTP_NEED_MORE)
				return true;
			if (v != HTTP_DONE) {
				conn_fail(ld, c, &ld->res->err_parse, now);
				return false;
			}
			break;
		}
		case HTTP_BODY_CLOSE:
			return true; /* complete at end of stream */
		}
		response_done(ld, c, now);
		if (c->sock < 0)
			return false;
		/* More bytes on a held connection are caught at the top. */
	}
	return true;
}

static void conn_read(struct load *ld, struct conn *c, sk_time_ns now)
{
	for (;;) {
		long n = loop_read(ld->loop, c->sock, ld->scratch, LOAD_SCRATCH);
		if (n == -SK_EAGAIN)
			return;
		if (n < 0) {
			if (c->state == C_HELD || c->state == C_IDLE) {
				conn_drop(ld, c, now, false);
				return;
			}
			conn_fail(ld, c, &ld->res->err_read, now);
			return;
		}
		if (n == 0) {
			if (c->state == C_READING && c->headed && c->body == HTTP_BODY_CLOSE) {
				record(ld, c, now);
				conn_drop(ld, c, now, !ld->hold);
				maybe_stop(ld);
				return;
			}
			if (c->state == C_HELD) {
				/* The server closed an idle connection: no longer held. */
				ld->res->held--;
				conn_drop(ld, c, now, false);
				return;
			}
			conn_fail(ld, c, &ld->res->err_read, now);
			return;
		}
		ld->res->bytes += (uint64_t)n;
		if (!feed(ld, c, ld->scratch, (size_t)n, now))
			return;
		if (c->sock < 0)
			return;
		if ((size_t)n < LOAD_SCRATCH)
			return; /* short read: the queue is empty (loop.h) */
	}
}

static void conn_event(void *user, int sock, unsigned ev, sk_time_ns now)
{
	struct conn *c = user;
	struct load *ld = c->ld;
	if (sock != c->sock)
		return; /* stale */
	if (c->state == C_CONNECTING) {
		if (ev & LOOP_EV_ERROR) {
			char b[1];
			loop_read(ld->loop, sock, b, 0); /* take the reason */
			ld->connecting--;
			loop_close(ld->loop, c->sock);
			c->sock = -1;
			conn_fail(ld, c, &ld->res->err_connect, now);
			start_pending(ld, now);
			return;
		}
		if (!(ev & LOOP_EV_WRITE))
			return;
		ld->connecting--;
		ld->window = LOAD_MAX_CONNECTING;
		c->state = C_SENDING;
		send_request(ld, c, now);
		start_pending(ld, now);
		if (c->sock != sock)
			return;
	} else if ((ev & LOOP_EV_WRITE) && c->state == C_SENDING) {
		send_request(ld, c, now);
		if (c->sock != sock)
			return;
	}
	if (ev & LOOP_EV_READ)
		conn_read(ld, c, now);
}

static void conn_timer(struct loop_timer *t, sk_time_ns now)
{
	struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, timer));
	struct load *ld = c->ld;
	if (c->deadline == SK_TIME_NEVER)
		return;
	if (c->deadline > now) {
		loop_timer_set(ld->loop, t, c->deadline);
		return;
	}
	c->deadline = SK_TIME_NEVER;
	if (c->state == C_WAIT_RETRY) {
		c->state = C_IDLE;
		if (ld->budget && !*ld->stop)
			conn_begin(ld, c, now);
		maybe_stop(ld);
		return;
	}
	if (c->state == C_CONNECTING || c->state == C_SENDING || c->state == C_READING)
		conn_fail(ld, c, &ld->res->err_timeout, now);
	start_pending(ld, now);
}

static void end_timer(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct load *ld = (struct load *)((char *)t - offsetof(struct load, end_timer));
	*ld->stop = 1;
}

int load_run(struct loop *l, const struct load_params *p, struct load_result *res,
	     volatile int *stop)
{
	struct load *ld = calloc(1, sizeof(*ld));
	char *req = malloc(strlen(p->path) + strlen(p->host) + 96);
	/* Connection states: reserved, touched only as used. */
	size_t n = p->conns;
	size_t csz = n * sizeof(struct conn) + n * sizeof(uint32_t) + LOAD_SCRATCH;
	void *mem = mmap(NULL, csz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!ld || !req || mem == MAP_FAILED) {
		fprintf(stderr, "skiff load: out of memory (%zu bytes for %zu connections)\n", csz, n);
		if (mem != MAP_FAILED)
			munmap(mem, csz);
		free(req);
		free(ld);
		return -1;
	}
	ld->loop = l;
	ld->conns = mem;
	ld->ready = (uint32_t *)(ld->conns + n);
	ld->scratch = (uint8_t *)(ld->ready + n);
	ld->nconns = p->conns;
	ld->budget = p->requests;
	ld->daddr = p->daddr;
	ld->dport = p->dport;
	ld->keepalive = p->keepalive;
	ld->hold = p->hold;
	ld->timeout = p->timeout;
	ld->res = res;
	ld->stop = stop;
	ld->window = 1;
	ld->say_held = p->say_held;
	ld->req_len = (uint32_t)sprintf(req, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", p->path,
					p->host, p->keepalive ? "" : "Connection: close\r\n");
	ld->req = req;
	for (uint32_t i = 0; i < ld->nconns; i++) {
		struct conn *c = &ld->conns[i];
		c->ld = ld;
		c->sock = -1;
		c->deadline = SK_TIME_NEVER;
		c->timer.fn = conn_timer;
	}
	sk_time_ns now = plat_now(); /* both backends' clock */
	ld->start = now;
	ld->end = SK_TIME_NEVER;
	if (p->duration) {
		ld->end = now + p->duration;
		ld->end_timer.fn = end_timer;
		loop_timer_set(l, &ld->end_timer, ld->end);
	}
	start_pending(ld, now);
	int rc = ld->nconns == 0 ? 0 : loop_run(l, stop);
	res->elapsed = plat_now() - ld->start;
	/* The loop outlives this: leave nothing of ours in it. */
	for (uint32_t i = 0; i < ld->nconns; i++) {
		struct conn *c = &ld->conns[i];
		if (c->sock >= 0)
			loop_close(l, c->sock);
		if (loop_timer_armed(&c->timer))
			loop_timer_cancel(l, &c->timer);
	}
	if (loop_timer_armed(&ld->end_timer))
		loop_timer_cancel(l, &ld->end_timer);
	munmap(mem, csz);
	free(req);
	free(ld);
	return rc < 0 ? -1 : 0;
}
