/* admin.c — see admin.h. */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../http/parser.h"
#include "../http/prom.h"
#include "admin.h"
#include "cli.h"
#include "../conf/opts.h"

enum client_kind { C_FREE = 0, C_METRICS, C_CONTROL };

/* One client: fd >= 0 iff kind != C_FREE.  `out` is the whole answer once
 * decided (malloc'ed, out_off of out_len sent); until then the request
 * head gathers in `in`. */
struct admin_client {
	int fd;
	uint8_t kind;
	sk_time_ns since;
	char *out;
	size_t out_len, out_off;
	size_t in_len;
	uint8_t in[8192];
};

struct admin {
	struct admin_config cfg;
	struct loop *loop;
	int epfd;
	int metrics_fd, control_fd; /* -1: not asked for */
	char control_path[108];     /* sun_path; "" when no control socket */
	struct loop_timer reaper;   /* armed while a client is open */
	unsigned nclients;
	struct admin_client c[ADMIN_CLIENTS];
	struct http_req req;
};

/* epoll's data: listeners by a tag, clients by slot. */
#define TAG_METRICS (ADMIN_CLIENTS + 1)
#define TAG_CONTROL (ADMIN_CLIENTS + 2)

int admin_fd(const struct admin *a)
{
	return a->epfd;
}

void admin_default_control(char *buf, size_t len, long pid)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg && *xdg)
		snprintf(buf, len, "%s/skiff/%ld.sock", xdg, pid);
	else if (geteuid() == 0)
		snprintf(buf, len, "/run/skiff/%ld.sock", pid);
	else
		snprintf(buf, len, "/tmp/skiff-%u/%ld.sock", (unsigned)geteuid(), pid);
}

static int ep_add(struct admin *a, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = {.events = events, .data.u64 = tag};
	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void client_close(struct admin *a, struct admin_client *c)
{
	if (c->kind == C_FREE)
		return;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	c->out = NULL;
	c->kind = C_FREE;
	c->fd = -1;
	a->nclients--;
}

static void reap(struct loop_timer *t, sk_time_ns now)
{
	struct admin *a = (struct admin *)(void *)((char *)t - offsetof(struct admin, reaper));
	for (unsigned i = 0; i < ADMIN_CLIENTS; i++)
		if (a->c[i].kind != C_FREE && now - a->c[i].since >= ADMIN_CLIENT_TIMEOUT_NS)
			client_close(a, &a->c[i]);
	if (a->nclients)
		loop_timer_set(a->loop, &a->reaper, now + SK_NS_PER_S);
}

/* Send what is left; close when done.  Level-triggered EPOLLOUT only while
 * something waits, so a done client never wakes the set. */
static void client_flush(struct admin *a, struct admin_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = (uint64_t)(c - a->c)};
			epoll_ctl(a->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		break; /* the peer went away */
	}
	/* Everything sent (or the peer is gone): FIN, then close. */
	shutdown(c->fd, SHUT_WR);
	client_close(a, c);
}

/* ---- the answers ---- */

static void stat_line(void *ctx, const char *name, uint64_t v)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)v);
}

/* `skiff stat`'s text: a header, the connections, the counters. */
static char *control_text(struct admin *a, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	fprintf(f, "# %s pid %ld\n", a->cfg.what, (long)getpid());
	if (a->cfg.src.conns)
		a->cfg.src.conns(a->cfg.src.ctx, f);
	fprintf(f, "# counters\n");
	a->cfg.src.stats(a->cfg.src.ctx, stat_line, f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The exposition, grown until it fits. */
static char *metrics_body(struct admin *a, size_t *len)
{
	for (size_t cap = 64 * 1024; cap <= 64u * 1024 * 1024; cap *= 2) {
		char *b = malloc(cap);
		if (!b)
			return NULL;
		struct prom_out o;
		prom_init(&o, b, cap);
		a->cfg.src.stats(a->cfg.src.ctx, prom_stat, &o);
		if (a->cfg.src.hists)
			a->cfg.src.hists(a->cfg.src.ctx, &o);
		if (!o.truncated) {
			*len = o.len;
			return b;
		}
		free(b);
	}
	return NULL;
}

/* The whole answer: head, then the body unless HEAD. */
static char *http_answer(int status, const char *body, size_t body_len, bool head_only,
			 size_t *len)
{
	char hdr[PROM_HEAD_MAX];
	size_t hl = prom_http_head(hdr, sizeof(hdr), status, body_len);
	size_t bl = head_only ? 0 : body_len;
	char *out = malloc(hl + bl + 1);
	if (!out)
		return NULL;
	memcpy(out, hdr, hl);
	if (bl)
		memcpy(out + hl, body, bl);
	*len = hl + bl;
	return out;
}

/* eof: the client closed its side (a whole request may still be in). */
static void metrics_request(struct admin *a, struct admin_client *c, bool eof)
{
	bool head;
	int status = prom_route(&a->req, c->in, c->in_len, c->in_len == sizeof(c->in), &head);
	if (!status) {
		if (eof)
			client_close(a, c); /* closed before a whole head: nothing to answer */
		return; /* else wait for the rest of the head */
	}
	char *body = NULL;
	size_t bl = 0;
	if (status == 200 && !(body = metrics_body(a, &bl)))
		status = 500;
	if (status == 200) {
		c->out = http_answer(200, body, bl, head, &c->out_len);
	} else {
		const char *t = prom_status_body(status);
		c->out = http_answer(status, t, strlen(t), head, &c->out_len);
	}
	free(body);
	if (!c->out) {
		client_close(a, c);
		return;
	}
	c->out_off = 0;
	/* Read no more: the answer is decided. */
	struct epoll_event ev = {.events = 0, .data.u64 = (uint64_t)(c - a->c)};
	epoll_ctl(a->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	client_flush(a, c);
}

static void client_readable(struct admin *a, struct admin_client *c)
{
	for (;;) {
		if (c->in_len == sizeof(c->in)) {
			metrics_request(a, c, false);
			return;
		}
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		if (n > 0) {
			c->in_len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			metrics_request(a, c, false);
			return;
		}
		if (n == 0) {
			metrics_request(a, c, true); /* `printf 'GET ...' | nc` closes after */
			return;
		}
		client_close(a, c);
		return;
	}
}

static void accept_all(struct admin *a, int lfd, enum client_kind kind, sk_time_ns now)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or an error the next edge retries */
		struct admin_client *c = NULL;
		for (unsigned i = 0; i < ADMIN_CLIENTS && !c; i++)
			if (a->c[i].kind == C_FREE)
				c = &a->c[i];
		if (!c) {
			close(fd); /* all taken: the reaper frees a stuck one */
			continue;
		}
		*c = (struct admin_client){.fd = fd, .kind = (uint8_t)kind, .since = now};
		a->nclients++;
		if (!loop_timer_armed(&a->reaper))
			loop_timer_set(a->loop, &a->reaper, now + SK_NS_PER_S);
		uint64_t slot = (uint64_t)(c - a->c);
		if (kind == C_CONTROL) {
			/* No request: connecting asks for the report. */
			if (ep_add(a, fd, 0, slot) < 0) {
				client_close(a, c);
				continue;
			}
			c->out = control_text(a, &c->out_len);
			if (!c->out) {
				client_close(a, c);
				continue;
			}
			client_flush(a, c);
		} else {
			if (ep_add(a, fd, EPOLLIN | EPOLLRDHUP, slot) < 0) {
				client_close(a, c);
				continue;
			}
			client_readable(a, c);
		}
	}
}

void admin_poll(struct admin *a, sk_time_ns now)
{
	struct epoll_event ev[16];
	int n;
	/* A few rounds at most: a listener that stays readable because accept
	 * fails (EMFILE) must not hold the loop; the next wakeup retries. */
	for (int round = 0; round < 4 && (n = epoll_wait(a->epfd, ev, 16, 0)) > 0; round++) {
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			if (tag == TAG_METRICS) {
				accept_all(a, a->metrics_fd, C_METRICS, now);
				continue;
			}
			if (tag == TAG_CONTROL) {
				accept_all(a, a->control_fd, C_CONTROL, now);
				continue;
			}
			if (tag >= ADMIN_CLIENTS)
				continue;
			struct admin_client *c = &a->c[tag];
			if (c->kind == C_FREE)
				continue; /* closed earlier in this batch */
			if (c->out)
				client_flush(a, c);
			else
				client_readable(a, c);
		}
	}
}

/* ---- opening ---- */

static int open_metrics(struct admin *a, char *err, size_t errlen)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "metrics: socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = htons(a->cfg.metrics_port),
				  .sin_addr.s_addr = htonl(a->cfg.metrics_ip)};
	char ipb[16];
	cli_format_ipv4(a->cfg.metrics_ip, ipb);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 64) < 0) {
		snprintf(err, errlen, "metrics: cannot listen on %s:%u: %s", ipb,
			 a->cfg.metrics_port, strerror(errno));
		close(fd);
		return -1;
	}
	a->metrics_fd = fd;
	return ep_add(a, fd, EPOLLIN, TAG_METRICS);
}

/* mkdir -p for the control socket's directory, 0700 where it creates. */
static void make_parent(const char *path)
{
	char d[sizeof(((struct sockaddr_un *)0)->sun_path)];
	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(d, 0700);
		*p = '/';
	}
}

static int open_control(struct admin *a, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (strlen(a->cfg.control) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control: path too long (%zu bytes at most): %s",
			 sizeof(sun.sun_path) - 1, a->cfg.control);
		return -1;
	}
	memcpy(sun.sun_path, a->cfg.control, strlen(a->cfg.control) + 1);
	make_parent(sun.sun_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control: socket: %s", strerror(errno));
		return -1;
	}
	/* A socket file left by a process that died: nobody answers on it.
	 * One that answers belongs to a live server: leave it. */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&sun, sizeof(sun)) < 0 && errno == ECONNREFUSED)
			unlink(sun.sun_path);
		close(probe);
	}
	/* 0600 from the start: the umask covers the window before chmod. */
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r < 0 || chmod(sun.sun_path, 0600) < 0 || listen(fd, 16) < 0) {
		snprintf(err, errlen, "control: cannot listen on %s: %s", sun.sun_path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(a->control_path, sizeof(a->control_path), "%s", sun.sun_path);
	a->control_fd = fd;
	return ep_add(a, fd, EPOLLIN, TAG_CONTROL);
}

struct admin *admin_open(const struct admin_config *cfg, struct loop *loop, char *err,
			 size_t errlen)
{
	struct admin *a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->cfg = *cfg;
	a->loop = loop;
	a->metrics_fd = a->control_fd = -1;
	a->reaper.fn = reap;
	for (unsigned i = 0; i < ADMIN_CLIENTS; i++)
		a->c[i].fd = -1;
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epfd < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		free(a);
		return NULL;
	}
	if ((cfg->metrics && open_metrics(a, err, errlen) < 0) ||
	    (cfg->control && open_control(a, err, errlen) < 0)) {
		admin_close(a);
		return NULL;
	}
	return a;
}

const char *admin_control_path(const struct admin *a)
{
	return a && a->control_path[0] ? a->control_path : NULL;
}

void admin_close(struct admin *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < ADMIN_CLIENTS; i++)
		client_close(a, &a->c[i]);
	if (loop_timer_armed(&a->reaper))
		loop_timer_cancel(a->loop, &a->reaper);
	if (a->metrics_fd >= 0)
		close(a->metrics_fd);
	if (a->control_fd >= 0) {
		close(a->control_fd);
		unlink(a->control_path);
	}
	close(a->epfd);
	free(a);
}

/* ---- skiff stat ---- */

/* Try the default path of `pid` under each place a server may have put
 * it (the server's environment may differ from ours: root vs user). */
static int connect_path(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int cmd_stat(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_stat, argc, argv);
	if (o.nargs != 1)
		cli_usage_error("stat", "give the PID of a skiff serve or its control socket's path");
	const char *arg = o.args[0];
	bool is_pid = *arg != 0;
	for (const char *p = arg; *p; p++)
		is_pid = is_pid && *p >= '0' && *p <= '9';
	char paths[3][128];
	int npaths = 0;
	if (is_pid) {
		long pid = strtol(arg, NULL, 10);
		admin_default_control(paths[npaths++], sizeof(paths[0]), pid);
		snprintf(paths[npaths++], sizeof(paths[0]), "/run/skiff/%ld.sock", pid);
		snprintf(paths[npaths++], sizeof(paths[0]), "/tmp/skiff-%u/%ld.sock",
			 (unsigned)geteuid(), pid);
	} else {
		snprintf(paths[npaths++], sizeof(paths[0]), "%s", arg);
	}
	int fd = -1, err = 0;
	const char *used = paths[0];
	for (int i = 0; i < npaths && fd < 0; i++) {
		fd = connect_path(paths[i]);
		if (fd < 0 && (i == 0 || errno != ENOENT))
			err = errno, used = paths[i];
		else if (fd >= 0)
			used = paths[i];
	}
	if (fd < 0) {
		fprintf(stderr, "skiff stat: nobody answers on %s: %s%s\n", used, strerror(err),
			is_pid ? " (was it started with --control none, or as another user?)" : "");
		return 1;
	}
	char buf[65536];
	ssize_t n;
	size_t total = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		if (n > 0 && fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
		total += n > 0 ? (size_t)n : 0;
	}
	close(fd);
	if (fflush(stdout) != 0 || total == 0) {
		fprintf(stderr, "skiff stat: %s: no answer\n", used);
		return 1;
	}
	return 0;
}
