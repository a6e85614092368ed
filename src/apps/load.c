/* load.c — `skiff load`: an HTTP/1.1 load generator on the loop API, so the
 * same code drives kernel sockets (--stack linux) and skiff's own TCP/IP
 * (--dev DEV --ip ADDR/LEN, through serve_skiff's loop on a hoststack).
 * Seed 002: ab and wrk could not load the servers they measured; a client
 * on a kernel-free stack can.
 *
 * Shape:
 *  - C connections, each a small fixed struct (no receive buffer: every
 *    read goes into one shared scratch buffer and through the streaming
 *    response parser, http/resp.h, and the chunked decoder), all allocated
 *    at start.  Nothing is allocated per request: the request bytes are one
 *    string built at start, latencies go into a fixed log-bucket histogram.
 *  - Keep-alive (-k): a connection sends its next request as soon as the
 *    response is complete.  Close mode: "Connection: close", and every
 *    request gets a new connection.
 *  - At most LOAD_MAX_CONNECTING handshakes in flight: 100,000 connects at
 *    once would only overflow rings and SYN queues and then wait for
 *    retransmission timers; a bounded window paces itself.
 *  - One timer per connection, armed lazily: the true deadline lives in the
 *    connection and the timer is only moved when it fires early, so a
 *    request costs no heap operation (loop.h's advice).
 *  - --ips N (skiff stack on a switch only): N worker processes, worker i
 *    on switch port PORT+i with address ADDR+i, each with its own stack and
 *    1/N of the connections and requests.  skiff's TCP engine has one
 *    local address, and one address has ~28k ephemeral ports towards one
 *    server port; separate hosts on separate ports need no change below
 *    the apps and use both cores.  Results meet in a shared mapping.
 *  - --hold: every connection makes one request and then stays open and
 *    idle until -d or a signal (the server memory benchmark).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../http/chunked.h"
#include "../http/resp.h"
#include "../loop/loop_linux.h"
#include "../plat/plat.h"
#include "cli.h"
#include "serve_skiff.h"

#define LOAD_MAX_CONNECTING 256
#define LOAD_SCRATCH (64u * 1024)
#define LOAD_MAX_IPS 64
#define LOAD_RETRY_NS (10 * SK_NS_PER_MS) /* pause after a failed connect */

/* ---- latency histogram: 16 linear sub-buckets per power of two of ns
 * (error < 1/16), 0 .. 2^44 ns (~4.9 h): fixed size, no allocation. ---- */
#define HIST_SUB_BITS 4
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((44 - HIST_SUB_BITS + 1) * HIST_SUB)

static unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb >= 44)
		return HIST_BUCKETS - 1;
	unsigned shift = msb - HIST_SUB_BITS;
	return (shift + 1) * HIST_SUB + (unsigned)((v >> shift) & (HIST_SUB - 1));
}

/* The upper bound of a bucket: a percentile never reads low. */
static uint64_t hist_value(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	unsigned shift = i / HIST_SUB - 1;
	uint64_t base = (uint64_t)(HIST_SUB + i % HIST_SUB) << shift;
	return base + ((1ull << shift) - 1);
}

#define LOAD_ERRS(X) X(connect) X(read) X(write) X(timeout) X(status) X(parse)

/* One worker's results; in a shared mapping when there are several. */
struct load_result {
	uint64_t ok, bytes;
#define LR_FIELD(n) uint64_t err_##n;
	LOAD_ERRS(LR_FIELD)
#undef LR_FIELD
	uint64_t status_class[6]; /* [1..5]: 1xx..5xx */
	uint64_t connects, lat_max;
	uint64_t held;    /* --hold: connections idle after their request */
	uint64_t elapsed; /* ns from start to stop */
	int exit_code;    /* a worker that could not run: 1 */
	uint64_t hist[HIST_BUCKETS];
};

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
	uint32_t daddr;
	uint16_t dport;
	bool keepalive, hold, say_held;
	sk_time_ns timeout, start, end;
	struct loop_timer end_timer;
	const char *req;
	uint32_t req_len;
	struct load_result *res;
	uint8_t *scratch;
	volatile int *stop;
};

static volatile int load_stop;

static void on_signal(int sig)
{
	(void)sig;
	load_stop = 1;
}

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
	int s = loop_connect(ld->loop, ld->daddr, ld->dport);
	if (s >= 0 && loop_watch(ld->loop, s, conn_event, c) < 0) {
		loop_close(ld->loop, s);
		s = -SK_EBADF;
	}
	c->state = C_CONNECTING;
	if (s < 0) {
		conn_fail(ld, c, &ld->res->err_connect, now);
		return;
	}
	c->sock = s;
	ld->connecting++;
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
	r->hist[hist_index(lat)]++;
	if (lat > r->lat_max)
		r->lat_max = lat;
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
	(void)t;
	(void)now;
	load_stop = 1;
}

/* ---- options ---- */

struct load_opts {
	const char *url, *dev, *pcap;
	uint32_t daddr, ip, gw;
	uint16_t dport;
	uint8_t plen;
	char host[300], path[1024];
	uint64_t conns, requests, duration_s, timeout_s;
	unsigned ips;
	bool keepalive, stats, hold, on_skiff;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: skiff load URL -c N [-n N | -d S] [-k] [--hold]\n"
		"                  [--dev DEV --ip ADDR/LEN [--gw ADDR] [--ips N] | --stack linux]\n"
		"                  [--timeout S] [--stats]\n"
		"\n"
		"HTTP/1.1 load generator: N connections issue GET URL, keep-alive or a new\n"
		"connection per request, and report requests/s, transfer, latency p50/p99/max and\n"
		"failed requests by kind (connect, read, write, timeout, status, parse).  Exit 0\n"
		"only if no request failed.\n"
		"\n"
		"  URL                http://IPV4[:PORT][/PATH] (no DNS)\n"
		"  -c, --connections N  concurrent connections (1..1000000)\n"
		"  -n, --requests N   stop after N requests (default: -d 10)\n"
		"  -d, --duration S   run S seconds\n"
		"  -k, --keepalive    reuse connections (else Connection: close, one per request)\n"
		"  --hold             (with -k) one request per connection, then keep every\n"
		"                     connection open and idle until -d S or SIGINT/SIGTERM\n"
		"  --stack S          linux: kernel sockets; skiff: skiff's own TCP/IP on --dev.\n"
		"                     Default: skiff with --dev, linux without\n"
		"  --dev DEV          tap:NAME | packet:IFACE | xdp:IFACE | switch:NAME/PORT\n"
		"  --ip ADDR/LEN      this client's address (--stack skiff)\n"
		"  --gw ADDR          default gateway (--stack skiff)\n"
		"  --ips N            N client addresses ADDR, ADDR+1, ...: N worker processes, on\n"
		"                     switch ports PORT, PORT+1, ... (--dev switch: only)\n"
		"  --pcap FILE        record every frame (--stack skiff, one address)\n"
		"  --timeout S        a request (connect included) fails after S s (default 10)\n"
		"  --stats            print the stack's counters at the end\n"
		"  -h, --help         this text\n");
}

static void parse_url(struct load_opts *o, const char *url)
{
	const char *p = url;
	if (strncmp(p, "http://", 7))
		cli_usage_error("load", "URL must start with http:// (got '%s')", url);
	p += 7;
	size_t hl = strcspn(p, "/");
	if (hl == 0 || hl >= sizeof(o->host))
		cli_usage_error("load", "URL '%s' has no host", url);
	memcpy(o->host, p, hl);
	o->host[hl] = 0;
	const char *path = p + hl;
	if (!*path)
		path = "/";
	if (strlen(path) >= sizeof(o->path))
		cli_usage_error("load", "URL path too long");
	for (const char *q = path; *q; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f)
			cli_usage_error("load", "URL path has a space or control byte");
	strcpy(o->path, path);
	char hostonly[300];
	strcpy(hostonly, o->host);
	char *colon = strchr(hostonly, ':');
	o->dport = 80;
	if (colon) {
		*colon = 0;
		o->dport = (uint16_t)cli_parse_ulong("load", "URL port", colon + 1, 1, 65535);
	}
	if (cli_parse_ipv4(hostonly, &o->daddr) < 0)
		cli_usage_error("load", "URL host must be an IPv4 address, not '%s'", hostonly);
}

/* ---- one worker: a loop, the connections, a run ---- */

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

static int run_worker(const struct load_opts *o, unsigned idx, struct load_result *res)
{
	uint64_t share_c = o->conns / o->ips + (idx < o->conns % o->ips ? 1 : 0);
	uint64_t share_n = o->requests == UINT64_MAX
				   ? UINT64_MAX
				   : o->requests / o->ips + (idx < o->requests % o->ips ? 1 : 0);
	if (o->hold)
		share_n = share_c;
	char err[256];
	struct loop *l;
	uint32_t max_timers = (uint32_t)share_c + 16;
	char devspec[256];
	if (o->on_skiff) {
		const char *spec = o->dev;
		if (o->ips > 1) {
			/* switch:NAME/PORT -> switch:NAME/(PORT+idx) */
			const char *slash = strrchr(o->dev, '/');
			unsigned long port = strtoul(slash + 1, NULL, 10);
			snprintf(devspec, sizeof(devspec), "%.*s/%lu", (int)(slash - o->dev), o->dev,
				 port + idx);
			spec = devspec;
		}
		struct serve_skiff_config sc = {
			.dev_spec = spec,
			.pcap_path = o->pcap,
			.ip = o->ip + idx,
			.prefix_len = o->plen,
			.gw = o->gw,
			.max_conns = (uint32_t)share_c,
			.max_timers = max_timers,
			.spin_ns = 100 * SK_NS_PER_US,
		};
		l = serve_skiff_open(&sc, err, sizeof(err));
	} else {
		struct loop_linux_config lc = {.max_timers = max_timers};
		l = loop_linux_create(&lc, err, sizeof(err));
	}
	if (!l) {
		fprintf(stderr, "skiff load: %s\n", err);
		res->exit_code = 1;
		return 1;
	}
	if (o->on_skiff)
		serve_skiff_announce(l);

	struct load *ld = calloc(1, sizeof(*ld));
	char *req = malloc(strlen(o->path) + strlen(o->host) + 96);
	if (!ld || !req) {
		fprintf(stderr, "skiff load: out of memory\n");
		loop_destroy(l);
		res->exit_code = 1;
		return 1;
	}
	/* Connection states: reserved, touched only as used. */
	size_t csz = share_c * sizeof(struct conn) + share_c * sizeof(uint32_t) + LOAD_SCRATCH;
	void *mem = mmap(NULL, csz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "skiff load: cannot map %zu bytes\n", csz);
		loop_destroy(l);
		res->exit_code = 1;
		return 1;
	}
	ld->loop = l;
	ld->conns = mem;
	ld->ready = (uint32_t *)(ld->conns + share_c);
	ld->scratch = (uint8_t *)(ld->ready + share_c);
	ld->nconns = (uint32_t)share_c;
	ld->budget = share_n;
	ld->daddr = o->daddr;
	ld->dport = o->dport;
	ld->keepalive = o->keepalive;
	ld->hold = o->hold;
	ld->timeout = o->timeout_s * SK_NS_PER_S;
	ld->res = res;
	ld->stop = &load_stop;
	ld->window = 1;
	ld->say_held = o->hold && o->ips == 1;
	ld->req_len = (uint32_t)sprintf(req, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", o->path,
					o->host, o->keepalive ? "" : "Connection: close\r\n");
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
	if (o->duration_s) {
		ld->end = now + o->duration_s * SK_NS_PER_S;
		ld->end_timer.fn = end_timer;
		loop_timer_set(l, &ld->end_timer, ld->end);
	}
	start_pending(ld, now);
	int rc = ld->nconns == 0 ? 0 : loop_run(l, &load_stop);
	res->elapsed = plat_now() - ld->start;
	if (o->stats) {
		if (o->on_skiff)
			serve_skiff_print_stats(l, stdout);
		else
			loop_stats(l, print_stat, stdout);
		fflush(stdout);
	}
	for (uint32_t i = 0; i < ld->nconns; i++)
		if (ld->conns[i].sock >= 0)
			loop_close(l, ld->conns[i].sock);
	loop_destroy(l);
	munmap(mem, csz);
	free(req);
	free(ld);
	if (rc < 0)
		res->exit_code = 1;
	return rc < 0 ? 1 : 0;
}

/* ---- report ---- */

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static uint64_t percentile(const struct load_result *r, uint64_t total, double q)
{
	uint64_t want = (uint64_t)((double)total * q + 0.999999);
	if (want == 0)
		want = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += r->hist[i];
		if (seen >= want) {
			uint64_t v = hist_value(i);
			return v < r->lat_max ? v : r->lat_max;
		}
	}
	return r->lat_max;
}

static int report(const struct load_opts *o, const struct load_result *w, unsigned n)
{
	struct load_result t;
	memset(&t, 0, sizeof(t));
	for (unsigned k = 0; k < n; k++) {
		t.ok += w[k].ok;
		t.bytes += w[k].bytes;
#define LR_SUM(x) t.err_##x += w[k].err_##x;
		LOAD_ERRS(LR_SUM)
#undef LR_SUM
		for (int j = 0; j < 6; j++)
			t.status_class[j] += w[k].status_class[j];
		t.connects += w[k].connects;
		t.held += w[k].held;
		if (w[k].lat_max > t.lat_max)
			t.lat_max = w[k].lat_max;
		if (w[k].elapsed > t.elapsed)
			t.elapsed = w[k].elapsed;
		if (w[k].exit_code)
			t.exit_code = 1;
		for (unsigned i = 0; i < HIST_BUCKETS; i++)
			t.hist[i] += w[k].hist[i];
	}
	uint64_t failed = 0;
#define LR_FAILED(x) failed += t.err_##x;
	LOAD_ERRS(LR_FAILED)
#undef LR_FAILED
	uint64_t done = t.ok + t.err_status; /* requests that got a response */
	double secs = (double)t.elapsed / 1e9;
	if (secs <= 0)
		secs = 1e-9;
	uint64_t p50 = done ? percentile(&t, done, 0.50) : 0;
	uint64_t p99 = done ? percentile(&t, done, 0.99) : 0;
	printf("skiff load: %s, %llu connections, %s, stack=%s%s, %.2f s\n", o->url,
	       (unsigned long long)o->conns, o->keepalive ? "keep-alive" : "close",
	       o->on_skiff ? "skiff" : "linux", o->ips > 1 ? " (several addresses)" : "", secs);
	printf("  requests  %llu ok, %llu failed (connect %llu, read %llu, write %llu, timeout %llu,"
	       " status %llu, parse %llu)\n",
	       (unsigned long long)t.ok, (unsigned long long)failed,
	       (unsigned long long)t.err_connect, (unsigned long long)t.err_read,
	       (unsigned long long)t.err_write, (unsigned long long)t.err_timeout,
	       (unsigned long long)t.err_status, (unsigned long long)t.err_parse);
	printf("  rate      %.1f requests/s, %.2f MB/s (%.2f MB), %llu connects\n",
	       (double)done / secs, (double)t.bytes / secs / 1e6, (double)t.bytes / 1e6,
	       (unsigned long long)t.connects);
	printf("  latency   p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", ms(p50), ms(p99),
	       ms(t.lat_max));
	printf("  status    1xx %llu, 2xx %llu, 3xx %llu, 4xx %llu, 5xx %llu\n",
	       (unsigned long long)t.status_class[1], (unsigned long long)t.status_class[2],
	       (unsigned long long)t.status_class[3], (unsigned long long)t.status_class[4],
	       (unsigned long long)t.status_class[5]);
	if (o->hold)
		printf("  held      %llu connections\n", (unsigned long long)t.held);
	printf("skiff load: summary requests=%llu ok=%llu failed=%llu rps=%.1f bytes=%llu "
	       "p50_us=%.1f p99_us=%.1f max_us=%.1f connect=%llu read=%llu write=%llu "
	       "timeout=%llu status=%llu parse=%llu held=%llu secs=%.3f\n",
	       (unsigned long long)(done + failed - t.err_status), (unsigned long long)t.ok,
	       (unsigned long long)failed, (double)done / secs, (unsigned long long)t.bytes,
	       (double)p50 / 1e3, (double)p99 / 1e3, (double)t.lat_max / 1e3,
	       (unsigned long long)t.err_connect, (unsigned long long)t.err_read,
	       (unsigned long long)t.err_write, (unsigned long long)t.err_timeout,
	       (unsigned long long)t.err_status, (unsigned long long)t.err_parse,
	       (unsigned long long)t.held, secs);
	if (t.exit_code)
		return 1;
	if (failed) {
		printf("skiff load: FAILED: %llu requests failed\n", (unsigned long long)failed);
		return 1;
	}
	if (o->hold && t.held < o->conns) {
		printf("skiff load: FAILED: held %llu of %llu connections\n",
		       (unsigned long long)t.held, (unsigned long long)o->conns);
		return 1;
	}
	if (done == 0) {
		printf("skiff load: FAILED: no request completed\n");
		return 1;
	}
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{"connections", required_argument, NULL, 'c'},
		{"requests", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 'd'},
		{"keepalive", no_argument, NULL, 'k'},
		{"hold", no_argument, NULL, 'H'},
		{"stack", required_argument, NULL, 'S'},
		{"dev", required_argument, NULL, 'D'},
		{"ip", required_argument, NULL, 'i'},
		{"gw", required_argument, NULL, 'g'},
		{"ips", required_argument, NULL, 'I'},
		{"pcap", required_argument, NULL, 'P'},
		{"timeout", required_argument, NULL, 't'},
		{"stats", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct load_opts o;
	memset(&o, 0, sizeof(o));
	o.ips = 1;
	o.timeout_s = 10;
	o.requests = UINT64_MAX;
	const char *stack = NULL;
	bool have_ip = false, have_gw = false, have_n = false, have_d = false;
	int c;
	opterr = 0;
	/* GNU getopt permutes: options before or after the URL. */
	while ((c = getopt_long(argc, argv, "c:n:d:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o.conns = cli_parse_ulong("load", "-c", optarg, 1, 1000000); break;
		case 'n':
			o.requests = cli_parse_ulong("load", "-n", optarg, 1, 1000000000000ul);
			have_n = true;
			break;
		case 'd':
			o.duration_s = cli_parse_ulong("load", "-d", optarg, 1, 86400);
			have_d = true;
			break;
		case 'k': o.keepalive = true; break;
		case 'H': o.hold = true; break;
		case 'S':
			if (strcmp(optarg, "skiff") && strcmp(optarg, "linux"))
				cli_usage_error("load", "--stack wants skiff or linux, not '%s'", optarg);
			stack = optarg;
			break;
		case 'D': o.dev = optarg; break;
		case 'i':
			if (cli_parse_cidr(optarg, &o.ip, &o.plen) < 0)
				cli_usage_error("load", "--ip wants ADDR/LEN (e.g. 198.18.0.1/24), not '%s'",
						optarg);
			have_ip = true;
			break;
		case 'g':
			if (cli_parse_ipv4(optarg, &o.gw) < 0)
				cli_usage_error("load", "--gw wants an IPv4 address, not '%s'", optarg);
			have_gw = true;
			break;
		case 'I': o.ips = (unsigned)cli_parse_ulong("load", "--ips", optarg, 1, LOAD_MAX_IPS); break;
		case 'P': o.pcap = optarg; break;
		case 't': o.timeout_s = cli_parse_ulong("load", "--timeout", optarg, 1, 3600); break;
		case 's': o.stats = true; break;
		case 'h': usage(stdout); return 0;
		default:
			cli_usage_error("load", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o.url = argv[optind++];
	if (optind < argc)
		cli_usage_error("load", "unexpected argument '%s' (URL once, options anywhere)",
				argv[optind]);
	if (!o.url)
		cli_usage_error("load", "missing URL (http://IPV4[:PORT]/PATH)");
	parse_url(&o, o.url);
	if (!o.conns)
		cli_usage_error("load", "-c N is required");
	if (have_n && have_d)
		cli_usage_error("load", "-n and -d exclude each other");
	if (!have_n && !have_d && !o.hold)
		o.duration_s = 10;
	if (o.hold && !o.keepalive)
		cli_usage_error("load", "--hold needs -k");
	if (o.hold && have_n)
		cli_usage_error("load", "--hold makes one request per connection; no -n");
	if (have_n && o.requests < o.conns)
		o.conns = o.requests; /* no connection without a request */
	if (!stack)
		stack = o.dev ? "skiff" : "linux";
	o.on_skiff = !strcmp(stack, "skiff");
	if (o.on_skiff) {
		if (!o.dev)
			cli_usage_error("load", "--stack skiff needs --dev DEV");
		if (!have_ip)
			cli_usage_error("load", "--stack skiff needs --ip ADDR/LEN");
		uint32_t mask = o.plen == 32 ? ~0u : ~(~0u >> o.plen);
		if (have_gw && (o.gw & mask) != (o.ip & mask))
			cli_usage_error("load", "--gw must be inside the --ip subnet");
		if (o.ips > 1) {
			const char *slash = strrchr(o.dev, '/');
			if (strncmp(o.dev, "switch:", 7) || !slash || !slash[1])
				cli_usage_error("load", "--ips N needs --dev switch:NAME/PORT (one port each)");
			cli_parse_ulong("load", "--dev port", slash + 1, 0, 4096);
			if (((o.ip + o.ips - 1) & mask) != (o.ip & mask))
				cli_usage_error("load", "--ips %u leaves the --ip subnet", o.ips);
			if (o.pcap)
				cli_usage_error("load", "--pcap goes with one address");
			if (o.ips > o.conns)
				cli_usage_error("load", "--ips %u is more than -c", o.ips);
		}
	} else {
		if (o.dev || have_ip || have_gw || o.pcap || o.ips > 1)
			cli_usage_error("load", "--dev, --ip, --gw, --ips and --pcap go with --stack skiff");
		raise_nofile();
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	size_t rsz = (size_t)o.ips * sizeof(struct load_result);
	struct load_result *res = mmap(NULL, rsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				       -1, 0);
	if (res == MAP_FAILED) {
		fprintf(stderr, "skiff load: cannot map results\n");
		return 1;
	}
	if (o.ips == 1) {
		run_worker(&o, 0, res);
	} else {
		pid_t pids[LOAD_MAX_IPS];
		unsigned started = 0;
		for (unsigned i = 0; i < o.ips; i++) {
			fflush(stdout);
			pid_t p = fork();
			if (p == 0)
				_exit(run_worker(&o, i, &res[i]));
			if (p < 0) {
				fprintf(stderr, "skiff load: fork: %s\n", strerror(errno));
				res[i].exit_code = 1;
				load_stop = 1;
				break;
			}
			pids[started++] = p;
		}
		/* Workers stop on their own (-n, -d) or on our signal, which
		 * we pass on. */
		unsigned left = started;
		bool told = false, held_told = false;
		while (left) {
			if (load_stop && !told) {
				for (unsigned i = 0; i < started; i++)
					kill(pids[i], SIGTERM);
				told = true;
			}
			if (o.hold && !held_told) {
				uint64_t h = 0;
				for (unsigned i = 0; i < o.ips; i++)
					h += __atomic_load_n(&res[i].held, __ATOMIC_RELAXED);
				if (h >= o.conns) {
					printf("skiff load: holding %llu connections\n",
					       (unsigned long long)h);
					fflush(stdout);
					held_told = true;
				}
			}
			int st;
			pid_t p = waitpid(-1, &st, WNOHANG);
			if (p > 0) {
				left--;
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					for (unsigned i = 0; i < started; i++)
						if (pids[i] == p)
							res[i].exit_code = 1;
				continue;
			}
			usleep(20000);
		}
	}
	int rc = report(&o, res, o.ips);
	munmap(res, rsz);
	return rc;
}
