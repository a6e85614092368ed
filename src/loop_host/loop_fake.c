/* loop_fake.c — see loop_fake.h.  Written against sk.h only (no OS
 * headers), like the code it drives. */
#include "loop_fake.h"

static struct loop_fake *FK(struct loop *l)
{
	return (struct loop_fake *)(void *)l;
}

/* A socket number the application may use (accepted or the listener). */
static struct loop_fake_sock *fk_sock(struct loop *l, int s)
{
	if (s < 0 || s >= LOOP_FAKE_NSOCK || !FK(l)->s[s].open)
		return NULL;
	return &FK(l)->s[s];
}

static void fk_sock_reset(struct loop_fake *f, int s);

static int fk_listen(struct loop *l, const struct sk_addr *addr, uint16_t port, int backlog)
{
	(void)addr, (void)port, (void)backlog;
	struct loop_fake_sock *k = &FK(l)->s[LOOP_FAKE_LSOCK];
	if (k->open)
		return -SK_EADDRINUSE;
	k->open = true;
	return LOOP_FAKE_LSOCK;
}

static int fk_accept(struct loop *l, int lsock, struct loop_peer *peer)
{
	struct loop_fake *f = FK(l);
	if (lsock != LOOP_FAKE_LSOCK || !f->s[lsock].open)
		return -SK_EINVAL;
	if (!f->npending)
		return -SK_EAGAIN;
	int s = f->pending[0];
	f->npending--;
	sk_memmove(f->pending, f->pending + 1, sizeof(f->pending[0]) * (size_t)f->npending);
	f->s[s].open = true;
	if (peer)
		*peer = (struct loop_peer){sk_addr_v4(SK_IP4(198, 18, 0, 1)), (uint16_t)(40000 + s)};
	return s;
}

static int fk_connect(struct loop *l, const struct sk_addr *addr, uint16_t port)
{
	(void)addr;
	struct loop_fake *f = FK(l);
	int s = f->connect_next;
	if (s <= LOOP_FAKE_LSOCK || s >= LOOP_FAKE_NSOCK || f->s[s].open)
		return -SK_EADDRNOTAVAIL; /* the test gave no socket for it */
	fk_sock_reset(f, s);
	f->s[s].open = true;
	f->s[s].connect_port = port;
	f->connect_next = s + 1;
	return s;
}

static int fk_watch(struct loop *l, int s, loop_event_fn fn, void *user)
{
	struct loop_fake_sock *k = fk_sock(l, s);
	if (!k)
		return -SK_EBADF;
	k->fn = fn;
	k->user = user;
	return 0;
}

static long fk_read(struct loop *l, int s, void *buf, size_t len)
{
	struct loop_fake_sock *k = fk_sock(l, s);
	if (!k)
		return -SK_EBADF;
	k->reads++;
	size_t avail = k->in_len - k->in_pos;
	if (!avail) {
		k->reads_empty += !k->eof;
		return k->eof ? 0 : -SK_EAGAIN;
	}
	size_t n = SK_MIN(avail, len);
	sk_memcpy(buf, k->in + k->in_pos, n);
	k->in_pos += n;
	return (long)n;
}

/* As a socket: takes what write_room allows, in order, and says how much. */
static long fk_writev(struct loop *l, int s, const struct loop_iov *iov, int iovcnt)
{
	struct loop_fake_sock *k = fk_sock(l, s);
	if (!k)
		return -SK_EBADF;
	if (k->shut)
		return -SK_EPIPE;
	size_t total = 0;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].len;
	total = SK_MIN(total, k->write_room);
	if (!total && iovcnt)
		return -SK_EAGAIN;
	if (!k->out_discard) {
		if (total > LOOP_FAKE_BUF - k->out_len)
			__builtin_trap(); /* the test sends more than out[] keeps */
		for (size_t i = 0, left = total; left; i++) {
			size_t n = SK_MIN(iov[i].len, left);
			sk_memcpy(k->out + k->out_len, iov[i].base, n);
			k->out_len += n;
			left -= n;
		}
		k->out[k->out_len] = 0;
	}
	if (k->write_room != SIZE_MAX)
		k->write_room -= total;
	k->out_bytes += total;
	k->writes++;
	return (long)total;
}

static int fk_shutdown(struct loop *l, int s)
{
	struct loop_fake_sock *k = fk_sock(l, s);
	if (!k)
		return -SK_EBADF;
	k->shut = true;
	return 0;
}

static int fk_close(struct loop *l, int s)
{
	struct loop_fake_sock *k = fk_sock(l, s);
	if (!k)
		return -SK_EBADF;
	k->open = false;
	k->fn = NULL;
	k->user = NULL;
	return 0;
}

static void fk_timer_set(struct loop *l, struct loop_timer *t, sk_time_ns deadline)
{
	if (timerq_set(&FK(l)->tq, t, deadline) < 0)
		__builtin_trap(); /* more timers than LOOP_FAKE_TIMERS */
}

static void fk_timer_cancel(struct loop *l, struct loop_timer *t)
{
	timerq_cancel(&FK(l)->tq, t);
}

static int fk_run(struct loop *l, volatile int *stop)
{
	(void)l, (void)stop;
	return -SK_EOPNOTSUPP; /* the test is the loop: loop_fake_send, _advance */
}

static sk_time_ns fk_now(struct loop *l)
{
	return FK(l)->now;
}

static void fk_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v),
		     void *ctx)
{
	(void)l, (void)fn, (void)ctx;
}

static void fk_destroy(struct loop *l)
{
	(void)l;
}

static const struct loop_ops fake_ops = {
	.listen = fk_listen,
	.accept = fk_accept,
	.connect = fk_connect,
	.watch = fk_watch,
	.read = fk_read,
	.writev = fk_writev,
	.shutdown = fk_shutdown,
	.close = fk_close,
	.timer_set = fk_timer_set,
	.timer_cancel = fk_timer_cancel,
	.run = fk_run,
	.now = fk_now,
	.stats = fk_stats,
	.destroy = fk_destroy,
};

static void fk_sock_reset(struct loop_fake *f, int s)
{
	struct loop_fake_sock *k = &f->s[s];
	/* The buffers are not cleared: only [0, len) of them means anything. */
	k->in = f->in_buf[s];
	k->out = f->out_buf[s];
	k->open = k->shut = k->eof = k->out_discard = false;
	k->fn = NULL;
	k->user = NULL;
	k->in_len = k->in_pos = k->out_len = 0;
	k->out[0] = 0;
	k->out_bytes = 0;
	k->writes = 0;
	k->write_room = SIZE_MAX;
	k->connect_port = 0;
}

void loop_fake_init(struct loop_fake *f, sk_time_ns now)
{
	f->base = (struct loop){.ops = &fake_ops, .name = "fake"};
	for (int i = 0; i < LOOP_FAKE_NSOCK; i++)
		fk_sock_reset(f, i);
	f->npending = 0;
	f->connect_next = 0;
	timerq_init(&f->tq, f->heap, LOOP_FAKE_TIMERS);
	f->now = now;
}

void loop_fake_event(struct loop_fake *f, int s, unsigned events)
{
	struct loop_fake_sock *k = &f->s[s];
	if (k->fn)
		k->fn(k->user, s, events, f->now);
}

int loop_fake_connect(struct loop_fake *f, int s)
{
	if (s <= LOOP_FAKE_LSOCK || s >= LOOP_FAKE_NSOCK || f->npending == LOOP_FAKE_NSOCK)
		__builtin_trap();
	fk_sock_reset(f, s);
	f->pending[f->npending++] = s;
	loop_fake_event(f, LOOP_FAKE_LSOCK, LOOP_EV_ACCEPT);
	return s;
}

void loop_fake_push(struct loop_fake *f, int s, const void *data, size_t len)
{
	struct loop_fake_sock *k = &f->s[s];
	if (k->in_pos == k->in_len) /* all read: start over, so a benchmark never fills in[] */
		k->in_pos = k->in_len = 0;
	if (len > LOOP_FAKE_BUF - k->in_len)
		__builtin_trap();
	sk_memcpy(k->in + k->in_len, data, len);
	k->in_len += len;
}

void loop_fake_send(struct loop_fake *f, int s, const void *data, size_t len)
{
	loop_fake_push(f, s, data, len);
	loop_fake_event(f, s, LOOP_EV_READ);
}

void loop_fake_eof(struct loop_fake *f, int s)
{
	f->s[s].eof = true;
	loop_fake_event(f, s, LOOP_EV_READ);
}

void loop_fake_advance(struct loop_fake *f, sk_time_ns dt)
{
	f->now += dt;
	struct loop_timer *t;
	while ((t = timerq_pop_due(&f->tq, f->now)) != NULL)
		t->fn(t, f->now);
}
