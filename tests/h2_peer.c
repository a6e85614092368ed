/* h2_peer.c — skiff's HTTP/2 engine (src/h2/conn.h) on a loopback TCP
 * socket, answering with a small deterministic handler, so that real
 * clients can talk to it (tests/h2_interop.py drives it with python3-h2;
 * curl --http2-prior-knowledge and h2load work too).  h2c only: no TLS.
 *
 *   h2_peer [--port N] [--max-streams N] [--window N] [--conn-window N]
 *           [--stall-ms N] [--reset-budget N] [--ping-budget N]
 *
 * Prints "port N" on stdout once listening (N chosen by the kernel when
 * --port is 0, the default), then serves connections (up to MAXC at once)
 * on 127.0.0.1 until killed.  When a connection ends it prints one line to
 * stdout: "closed code=NAME requests=N rapid_reset=N ping_flood=N ...".
 *
 * The handler, by path:
 *   /big?N     200, N bytes (byte i = 'a' + i % 26), content-length N
 *   /rst       200 headers, then the stream reset by us (CANCEL)
 *   /trailers  200; the request's trailer names are echoed in the body
 *   otherwise  200 once the body ended: "method=M path=P authority=A
 *              len=N sum=S\n", S the sum of the body's bytes mod 2^32
 * DATA is consumed as it comes (h2_conn_consume), which reopens windows.
 * Build: make build/test/h2_peer (mk/h2.mk). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "h2/conn.h"

#define MAXC 8
#define BIG_MAX (8u << 20)
#define RBUF (64u * 1024u)
#define WBUF (64u * 1024u)

struct req_state {
	uint32_t sid;
	char method[32], path[256], authority[128], trailers[256];
	uint64_t len;
	uint32_t sum;
	char resp[768];
};

struct client {
	int fd;
	struct h2_conn h2;
	uint8_t rbuf[RBUF];
	size_t rlen;
	uint8_t wbuf[WBUF];
	size_t woff, wlen;
	struct req_state reqs[H2_STREAMS_CAP];
};

static struct client *clients[MAXC];
static struct h2_limits limits;
static uint8_t big[BIG_MAX];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fputs("usage: h2_peer [--port N] [--max-streams N] [--window N] [--conn-window N]\n"
	      "               [--stall-ms N] [--reset-budget N] [--ping-budget N]\n"
	      "skiff's HTTP/2 engine (h2c, prior knowledge) on 127.0.0.1, with a small\n"
	      "deterministic handler, for interop tests (tests/h2_interop.py).\n"
	      "Prints \"port N\" once listening, and one \"closed ...\" line per connection.\n",
	      f);
}

static struct req_state *rs_get(struct client *cl, uint32_t sid, bool make)
{
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++)
		if (cl->reqs[i].sid == sid)
			return &cl->reqs[i];
	if (!make)
		return NULL;
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++)
		if (cl->reqs[i].sid == 0) {
			memset(&cl->reqs[i], 0, sizeof(cl->reqs[i]));
			cl->reqs[i].sid = sid;
			return &cl->reqs[i];
		}
	return NULL;
}

static void copy_field(char *dst, size_t cap, const struct h2_field *f)
{
	size_t n = f->value_len < cap - 1 ? f->value_len : cap - 1;
	if (n)
		memcpy(dst, f->value, n);
	dst[n] = 0;
}

static struct h2_field hdr(const char *n, const char *v)
{
	return (struct h2_field){(const uint8_t *)n, (const uint8_t *)v, (uint32_t)strlen(n),
				 (uint32_t)strlen(v)};
}

static void answer_final(struct client *cl, struct req_state *rs)
{
	snprintf(rs->resp, sizeof(rs->resp), "method=%s path=%s authority=%s len=%llu sum=%u%s%s\n",
		 rs->method, rs->path, rs->authority, (unsigned long long)rs->len, rs->sum,
		 rs->trailers[0] ? " trailers=" : "", rs->trailers);
	char cl_s[24];
	snprintf(cl_s, sizeof(cl_s), "%zu", strlen(rs->resp));
	struct h2_field f[] = {hdr("Content-Type", "text/plain"), hdr("Content-Length", cl_s),
			       hdr("Connection", "keep-alive") /* dropped by the engine */};
	if (h2_conn_respond(&cl->h2, rs->sid, 200, f, 3, false) == 0)
		h2_conn_send_body(&cl->h2, rs->sid, rs->resp, strlen(rs->resp), true);
}

static void on_request(struct client *cl, const struct h2_event *ev)
{
	struct req_state *rs = rs_get(cl, ev->stream_id, true);
	if (!rs) {
		h2_conn_reset(&cl->h2, ev->stream_id, H2_INTERNAL_ERROR);
		return;
	}
	copy_field(rs->method, sizeof(rs->method), &ev->req->method);
	copy_field(rs->path, sizeof(rs->path), &ev->req->path);
	copy_field(rs->authority, sizeof(rs->authority), &ev->req->authority);
	if (strncmp(rs->path, "/big?", 5) == 0) {
		unsigned long n = strtoul(rs->path + 5, NULL, 10);
		if (n > BIG_MAX)
			n = BIG_MAX;
		char cl_s[24];
		snprintf(cl_s, sizeof(cl_s), "%lu", n);
		struct h2_field f[] = {hdr("content-type", "application/octet-stream"),
				       hdr("content-length", cl_s)};
		if (h2_conn_respond(&cl->h2, rs->sid, 200, f, 2, false) == 0)
			h2_conn_send_body(&cl->h2, rs->sid, big, n, true);
		rs->sid = 0; /* nothing more to do for it */
		return;
	}
	if (strcmp(rs->path, "/rst") == 0) {
		struct h2_field f[] = {hdr("content-type", "text/plain")};
		h2_conn_respond(&cl->h2, rs->sid, 200, f, 1, false);
		h2_conn_send_body(&cl->h2, rs->sid, big, 100, false);
		return; /* reset once the piece is out (main loop) */
	}
	if (ev->end_stream)
		answer_final(cl, rs);
}

static void on_event(struct client *cl, const struct h2_event *ev)
{
	struct req_state *rs;
	switch (ev->type) {
	case H2_EV_REQUEST:
		on_request(cl, ev);
		break;
	case H2_EV_DATA:
		h2_conn_consume(&cl->h2, ev->stream_id, ev->len);
		rs = rs_get(cl, ev->stream_id, false);
		if (!rs)
			break;
		rs->len += ev->len;
		for (uint32_t i = 0; i < ev->len; i++)
			rs->sum += ev->data[i];
		if (ev->end_stream)
			answer_final(cl, rs);
		break;
	case H2_EV_TRAILERS:
		rs = rs_get(cl, ev->stream_id, false);
		if (!rs)
			break;
		for (uint32_t i = 0; i < ev->req->nfields; i++) {
			size_t o = strlen(rs->trailers);
			const struct h2_field *f = &ev->req->fields[i];
			if (o + f->name_len + 2 < sizeof(rs->trailers)) {
				if (o)
					rs->trailers[o++] = ',';
				memcpy(rs->trailers + o, f->name, f->name_len);
				rs->trailers[o + f->name_len] = 0;
			}
		}
		answer_final(cl, rs);
		break;
	case H2_EV_RESET:
		rs = rs_get(cl, ev->stream_id, false);
		if (rs)
			rs->sid = 0;
		break;
	default:
		break;
	}
}

static void client_close(int i)
{
	struct client *cl = clients[i];
	const struct h2_stats *s = &cl->h2.st;
	printf("closed code=%s requests=%llu resets_in=%llu rapid_reset=%llu ping_flood=%llu "
	       "settings_flood=%llu refused=%llu malformed=%llu stall_resets=%llu "
	       "header_list_large=%llu continuation_flood=%llu\n",
	       h2_error_str(cl->h2.close_code), (unsigned long long)s->requests,
	       (unsigned long long)s->resets_in, (unsigned long long)s->rapid_reset,
	       (unsigned long long)s->ping_flood, (unsigned long long)s->settings_flood,
	       (unsigned long long)s->refused_streams, (unsigned long long)s->malformed,
	       (unsigned long long)s->stall_resets, (unsigned long long)s->header_list_large,
	       (unsigned long long)s->continuation_flood);
	fflush(stdout);
	/* A lingering close: a close() with the peer's bytes unread sends RST,
	 * and a RST makes the peer's kernel drop what it had not yet read (our
	 * GOAWAY: a flood's 200 SETTINGS frames are still arriving when the
	 * engine gives up).  So: FIN after the GOAWAY, then read and drop until
	 * the peer closes or a second passes, then close.  Blocking is fine in
	 * this test server; the peer closes as soon as it has read the GOAWAY. */
	shutdown(cl->fd, SHUT_WR);
	struct timeval tv = {.tv_sec = 1};
	setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int fl = fcntl(cl->fd, F_GETFL);
	if (fl >= 0)
		fcntl(cl->fd, F_SETFL, fl & ~O_NONBLOCK);
	char sink[4096];
	while (read(cl->fd, sink, sizeof(sink)) > 0)
		;
	close(cl->fd);
	free(cl);
	clients[i] = NULL;
}

/* Run the engine: input, events, timers, output.  false: close it. */
static bool client_run(struct client *cl, uint64_t now)
{
	struct h2_event ev;
	for (;;) {
		long used = h2_conn_recv(&cl->h2, cl->rbuf, cl->rlen, now, &ev);
		if (used > 0) {
			/* Events' data points into rbuf: handle before moving. */
			on_event(cl, &ev);
			memmove(cl->rbuf, cl->rbuf + used, cl->rlen - (size_t)used);
			cl->rlen -= (size_t)used;
		} else {
			on_event(cl, &ev);
		}
		if (ev.type == H2_EV_NONE) {
			if (h2_conn_out_pending(&cl->h2) == 0 || cl->wlen)
				break;
			/* recv waits for the queue to drain: drain it. */
			if (cl->wlen == 0) {
				cl->woff = 0;
				cl->wlen = h2_conn_output(&cl->h2, cl->wbuf, WBUF, now);
			}
			break;
		}
	}
	do
		h2_conn_tick(&cl->h2, now, &ev), on_event(cl, &ev);
	while (ev.type != H2_EV_NONE);
	for (uint32_t sid; (sid = h2_conn_take_writable(&cl->h2));) {
		struct req_state *rs = rs_get(cl, sid, false);
		if (rs && strcmp(rs->path, "/rst") == 0) {
			h2_conn_reset(&cl->h2, sid, H2_CANCEL);
			rs->sid = 0;
		}
	}
	if (cl->wlen == 0) {
		cl->woff = 0;
		cl->wlen = h2_conn_output(&cl->h2, cl->wbuf, WBUF, now);
	}
	/* A stream the engine closed (answered whole, or reset) frees its
	 * state here, once its answer's memory is no longer read. */
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++)
		if (cl->reqs[i].sid && !h2_conn_stream(&cl->h2, cl->reqs[i].sid))
			cl->reqs[i].sid = 0;
	while (cl->woff < cl->wlen) {
		ssize_t w = write(cl->fd, cl->wbuf + cl->woff, cl->wlen - cl->woff);
		if (w < 0) {
			if (errno == EAGAIN)
				break;
			return false;
		}
		cl->woff += (size_t)w;
		if (cl->woff == cl->wlen) {
			cl->woff = 0;
			cl->wlen = h2_conn_output(&cl->h2, cl->wbuf, WBUF, now);
		}
	}
	if (cl->woff == cl->wlen)
		cl->woff = cl->wlen = 0;
	return !(h2_conn_done(&cl->h2) && cl->wlen == 0 && h2_conn_out_pending(&cl->h2) == 0);
}

int main(int argc, char **argv)
{
	unsigned port = 0;
	h2_limits_default(&limits);
	limits.stall_timeout = 2000000000ull;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		unsigned long v = strtoul(argv[++i], NULL, 10);
		if (!strcmp(a, "--port"))
			port = (unsigned)v;
		else if (!strcmp(a, "--max-streams"))
			limits.max_streams = (uint32_t)v;
		else if (!strcmp(a, "--window"))
			limits.initial_window = (uint32_t)v;
		else if (!strcmp(a, "--conn-window"))
			limits.conn_window = (uint32_t)v;
		else if (!strcmp(a, "--stall-ms"))
			limits.stall_timeout = (uint64_t)v * 1000000ull;
		else if (!strcmp(a, "--reset-budget"))
			limits.reset_budget = (uint32_t)v;
		else if (!strcmp(a, "--ping-budget"))
			limits.ping_budget = (uint32_t)v;
		else {
			fprintf(stderr, "h2_peer: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
	}
	for (size_t i = 0; i < BIG_MAX; i++)
		big[i] = (uint8_t)('a' + i % 26);
	signal(SIGPIPE, SIG_IGN);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 16) ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl)) {
		perror("h2_peer: listen");
		return 1;
	}
	printf("port %u\n", ntohs(sa.sin_port));
	fflush(stdout);
	for (;;) {
		struct pollfd pf[MAXC + 1];
		int map[MAXC + 1];
		int n = 0;
		uint64_t now = now_ns(), deadline = UINT64_MAX;
		pf[n] = (struct pollfd){.fd = ls, .events = POLLIN};
		map[n++] = -1;
		for (int i = 0; i < MAXC; i++) {
			struct client *cl = clients[i];
			if (!cl)
				continue;
			uint64_t d = h2_conn_deadline(&cl->h2);
			deadline = d < deadline ? d : deadline;
			short evs = cl->rlen < RBUF ? POLLIN : 0;
			if (cl->wlen > cl->woff)
				evs |= POLLOUT;
			pf[n] = (struct pollfd){.fd = cl->fd, .events = evs};
			map[n++] = i;
		}
		int timeout = -1;
		if (deadline != UINT64_MAX)
			timeout = deadline <= now ? 0 : (int)((deadline - now) / 1000000ull + 1);
		if (timeout < 0 || timeout > 100)
			timeout = 100; /* window updates that reopen a stalled body */
		if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return 1;
		now = now_ns();
		for (int k = 0; k < n; k++) {
			if (map[k] < 0) {
				if (!(pf[k].revents & POLLIN))
					continue;
				int fd = accept(ls, NULL, NULL);
				if (fd < 0)
					continue;
				int slot = -1;
				for (int i = 0; i < MAXC && slot < 0; i++)
					if (!clients[i])
						slot = i;
				struct client *cl = slot < 0 ? NULL : calloc(1, sizeof(*cl));
				if (!cl) {
					close(fd);
					continue;
				}
				fcntl(fd, F_SETFL, O_NONBLOCK);
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				cl->fd = fd;
				if (h2_conn_init(&cl->h2, &limits, now)) {
					fprintf(stderr, "h2_peer: bad limits\n");
					return 2;
				}
				clients[slot] = cl;
				continue;
			}
			struct client *cl = clients[map[k]];
			bool ok = true;
			if (pf[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = read(cl->fd, cl->rbuf + cl->rlen, RBUF - cl->rlen);
				if (r == 0 || (r < 0 && errno != EAGAIN))
					ok = false;
				else if (r > 0)
					cl->rlen += (size_t)r;
			}
			if (ok)
				ok = client_run(cl, now);
			if (!ok)
				client_close(map[k]);
		}
	}
}
