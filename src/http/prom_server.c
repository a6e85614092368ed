/* prom_server.c — see prom_server.h. */
#include "prom_server.h"

static void conn_close(struct prom_server *ps, struct prom_conn *c)
{
	if (c->sock < 0)
		return;
	loop_close(ps->loop, c->sock);
	c->sock = -1;
	c->out = NULL;
}

static void reap(struct loop_timer *t, sk_time_ns now)
{
	struct prom_server *ps =
		(struct prom_server *)(void *)((char *)t - __builtin_offsetof(struct prom_server, reaper));
	bool open = false;
	for (unsigned i = 0; i < PROM_SERVER_CONNS; i++) {
		struct prom_conn *c = &ps->c[i];
		if (c->sock >= 0 && now - c->since >= PROM_SERVER_TIMEOUT_NS) {
			ps->errors++;
			conn_close(ps, c);
		}
		open = open || c->sock >= 0;
	}
	if (open)
		loop_timer_set(ps->loop, &ps->reaper, now + SK_NS_PER_S);
}

/* Send what is left; at the end a FIN, then the socket goes back. */
static void flush(struct prom_server *ps, struct prom_conn *c)
{
	while (c->out_off < c->out_len) {
		long n = loop_write(ps->loop, c->sock, c->out + c->out_off, c->out_len - c->out_off);
		if (n == -SK_EAGAIN)
			return; /* LOOP_EV_WRITE brings us back */
		if (n <= 0) {
			ps->errors++;
			conn_close(ps, c);
			return;
		}
		c->out_off += (size_t)n;
	}
	loop_shutdown(ps->loop, c->sock);
	conn_close(ps, c);
}

static void answer(struct prom_server *ps, struct prom_conn *c, int status, bool head)
{
	/* The body goes right after room for the head, so the two leave as
	 * one buffer: the head is written into that room's end. */
	char *body = c->buf + PROM_HEAD_MAX;
	size_t bl = 0;
	if (status == 200) {
		struct prom_out o;
		prom_init(&o, body, ps->buf_size - PROM_HEAD_MAX);
		ps->fill(ps->ctx, &o);
		if (o.truncated)
			status = 500;
		else
			bl = o.len;
		ps->scrapes += status == 200;
	}
	if (status != 200) {
		const char *t = prom_status_body(status);
		while (t[bl])
			bl++;
		sk_memcpy(body, t, bl);
	}
	char h[PROM_HEAD_MAX];
	size_t hl = prom_http_head(h, sizeof(h), status, bl);
	sk_memcpy(body - hl, h, hl);
	c->out = body - hl;
	c->out_len = hl + (head ? 0 : bl);
	c->out_off = 0;
	flush(ps, c);
}

static void on_event(void *user, int sock, unsigned events, sk_time_ns now)
{
	(void)now;
	(void)events;
	struct prom_server *ps = user;
	struct prom_conn *c = NULL;
	for (unsigned i = 0; i < PROM_SERVER_CONNS; i++)
		if (ps->c[i].sock == sock)
			c = &ps->c[i];
	if (!c)
		return; /* a stale event for a socket already closed */
	if (c->out) {
		flush(ps, c);
		return;
	}
	bool eof = false;
	for (;;) {
		size_t room = sizeof(c->in) - c->in_len;
		long n = room ? loop_read(ps->loop, sock, c->in + c->in_len, room) : -SK_EAGAIN;
		if (n > 0) {
			c->in_len += (size_t)n;
			if ((size_t)n < room)
				break; /* short read: the queue is empty (loop.h) */
			continue;
		}
		if (n == -SK_EAGAIN)
			break;
		if (n < 0) {
			conn_close(ps, c);
			return;
		}
		eof = true; /* the client closed its side: a whole request may still be in */
		break;
	}
	bool head;
	int status = prom_route(&ps->req, c->in, c->in_len, c->in_len == sizeof(c->in), &head);
	if (status)
		answer(ps, c, status, head);
	else if (eof)
		conn_close(ps, c); /* closed before a whole head: nothing to answer */
}

static void on_listen(void *user, int lsock, unsigned events, sk_time_ns now)
{
	(void)events;
	struct prom_server *ps = user;
	for (;;) {
		struct loop_peer peer;
		int s = loop_accept(ps->loop, lsock, &peer);
		if (s < 0)
			return;
		struct prom_conn *c = NULL;
		for (unsigned i = 0; i < PROM_SERVER_CONNS && !c; i++)
			if (ps->c[i].sock < 0)
				c = &ps->c[i];
		if (!c) {
			ps->refused++;
			loop_close(ps->loop, s);
			continue;
		}
		c->sock = s;
		c->since = now;
		c->in_len = 0;
		c->out = NULL;
		if (!loop_timer_armed(&ps->reaper))
			loop_timer_set(ps->loop, &ps->reaper, now + SK_NS_PER_S);
		if (loop_watch(ps->loop, s, on_event, ps) < 0) {
			ps->errors++;
			conn_close(ps, c);
		}
	}
}

int prom_server_start(struct prom_server *ps, struct loop *l, uint16_t port, void *mem,
		      size_t memsz, prom_fill_fn *fill, void *ctx)
{
	sk_memset(ps, 0, sizeof(*ps));
	if (memsz < PROM_SERVER_CONNS * (2 * PROM_HEAD_MAX))
		return -SK_EINVAL;
	ps->loop = l;
	ps->fill = fill;
	ps->ctx = ctx;
	ps->buf_size = memsz / PROM_SERVER_CONNS;
	ps->reaper.fn = reap;
	for (unsigned i = 0; i < PROM_SERVER_CONNS; i++) {
		ps->c[i].sock = -1;
		ps->c[i].buf = (char *)mem + i * ps->buf_size;
	}
	int s = loop_listen(l, 0, port, 16);
	if (s < 0)
		return s;
	ps->lsock = s;
	int r = loop_watch(l, s, on_listen, ps);
	if (r < 0) {
		loop_close(l, s);
		return r;
	}
	return 0;
}

void prom_server_stats(const struct prom_server *ps,
		       void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	fn(ctx, "prom.scrapes", ps->scrapes);
	fn(ctx, "prom.refused", ps->refused);
	fn(ctx, "prom.errors", ps->errors);
}
