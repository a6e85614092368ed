/* access_log.c — see access_log.h. */
#include "access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(ACCESS_LOG_BUF >= 8 * HTTP_ACCESS_REC_MAX,
	       "a batch holds many records even at their longest");

struct access_log {
	int fd;
	bool own_fd;      /* opened here (a file, or stdout reopened): closed at the end */
	bool sock;        /* a socket: send(MSG_DONTWAIT), the descriptor stays blocking */
	enum http_access_fmt fmt;
	struct loop *loop;
	/* Armed iff len > 0: the flush of the batch at most ACCESS_LOG_FLUSH_NS
	 * after its first record. */
	struct loop_timer timer;
	/* buf[0, len) formatted, not yet written; `held` records are in it
	 * (a record partly written still counts as held). */
	uint8_t *buf;
	size_t len;
	uint64_t held;
	/* The time of the records, formatted once per second. */
	time_t sec;
	char time[HTTP_ACCESS_TIME_MAX];
	/* counters */
	uint64_t records, dropped, writes, bytes, write_errors;
};

/* Write as much of the buffer as the sink takes now.  Returns false on an
 * error that drops the batch. */
static bool flush(struct access_log *al)
{
	size_t off = 0;
	while (off < al->len) {
		ssize_t n = al->sock ? send(al->fd, al->buf + off, al->len - off,
					    MSG_DONTWAIT | MSG_NOSIGNAL)
				     : write(al->fd, al->buf + off, al->len - off);
		if (n > 0) {
			al->writes++;
			al->bytes += (uint64_t)n;
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break; /* the reader is slow: the rest waits for the next flush */
		/* Disk full, reader gone, ...: this batch is lost, counted. */
		al->write_errors++;
		al->dropped += al->held;
		al->held = 0;
		al->len = 0;
		return false;
	}
	if (off == al->len) {
		al->len = 0;
		al->held = 0;
	} else if (off) {
		memmove(al->buf, al->buf + off, al->len - off);
		al->len -= off;
	}
	return true;
}

static void on_timer(struct loop_timer *t, sk_time_ns now)
{
	struct access_log *al = (struct access_log *)(void *)((char *)t - offsetof(struct access_log, timer));
	flush(al);
	if (al->len) /* the reader took only part: look again a period later */
		loop_timer_set(al->loop, &al->timer, now + ACCESS_LOG_FLUSH_NS);
}

static void refresh_time(struct access_log *al)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	if (ts.tv_sec == al->sec && al->time[0])
		return;
	al->sec = ts.tv_sec;
	struct tm tm;
	long off = 0;
	if (localtime_r(&ts.tv_sec, &tm))
		off = tm.tm_gmtoff;
	http_access_time(ts.tv_sec > 0 ? (uint64_t)ts.tv_sec : 0, (int32_t)off, al->fmt, al->time);
}

void access_log_record(void *ctx, const struct http_access *rec)
{
	struct access_log *al = ctx;
	if (ACCESS_LOG_BUF - al->len < HTTP_ACCESS_REC_MAX)
		flush(al);
	if (ACCESS_LOG_BUF - al->len < HTTP_ACCESS_REC_MAX) {
		al->dropped++; /* the policy: drop, never block the loop */
		return;
	}
	refresh_time(al);
	size_t n = http_access_format(al->buf + al->len, ACCESS_LOG_BUF - al->len, rec, al->fmt,
				      al->time);
	if (!al->len && n)
		loop_timer_set(al->loop, &al->timer, loop_now(al->loop) + ACCESS_LOG_FLUSH_NS);
	al->len += n;
	al->held++;
	al->records++;
}

struct access_log *access_log_open(const char *path, enum http_access_fmt fmt, struct loop *loop,
				   char *err, size_t errlen)
{
	struct access_log *al = calloc(1, sizeof(*al));
	uint8_t *buf = malloc(ACCESS_LOG_BUF);
	if (!al || !buf) {
		snprintf(err, errlen, "access-log: out of memory");
		free(al);
		free(buf);
		return NULL;
	}
	al->buf = buf;
	al->fmt = fmt;
	al->loop = loop;
	al->timer = (struct loop_timer){.fn = on_timer};
	int fd = 1;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
		if (fd < 0) {
			snprintf(err, errlen, "access-log: cannot open %s: %s", path, strerror(errno));
			free(buf);
			free(al);
			return NULL;
		}
		al->own_fd = true;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISSOCK(st.st_mode)) {
			al->sock = true;
		} else if (al->own_fd) {
			/* Our own open file description: its flag is ours alone. */
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		} else {
			/* Standard output is shared (with the shell, a terminal):
			 * open the same pipe or terminal again, non-blocking, rather
			 * than change the flags of the description others use. */
			int nfd = open("/proc/self/fd/1", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			if (nfd >= 0) {
				fd = nfd;
				al->own_fd = true;
			}
		}
	}
	al->fd = fd;
	return al;
}

void access_log_close(struct access_log *al)
{
	if (!al || al->fd < 0)
		return;
	if (loop_timer_armed(&al->timer))
		loop_timer_cancel(al->loop, &al->timer);
	/* The last batch: wait for a slow reader, but not for ever. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (al->len && flush(al) && al->len) {
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= ACCESS_LOG_EXIT_WAIT_MS)
			break;
		struct pollfd p = {.fd = al->fd, .events = POLLOUT};
		poll(&p, 1, (int)(ACCESS_LOG_EXIT_WAIT_MS - ms));
	}
	if (al->len) {
		al->dropped += al->held;
		al->len = 0;
		al->held = 0;
	}
	if (al->own_fd)
		close(al->fd);
	al->fd = -1;
}

void access_log_free(struct access_log *al)
{
	if (!al)
		return;
	access_log_close(al);
	free(al->buf);
	free(al);
}

void access_log_stats(const struct access_log *al,
		      void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	fn(ctx, "access_log.records", al->records);
	fn(ctx, "access_log.dropped", al->dropped);
	fn(ctx, "access_log.writes", al->writes);
	fn(ctx, "access_log.bytes", al->bytes);
	fn(ctx, "access_log.write_errors", al->write_errors);
}
