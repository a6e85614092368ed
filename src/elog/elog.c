/* elog.c — see elog.h. */
#include "elog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../plat/plat.h"

static struct sk_log elog_l;
static bool elog_ready;
static int elog_fd = 2;
/* serve --workers: every worker thread may report; the rate limiter's
 * state is one for the process.  Error lines are rare and never on the
 * per-request path, so one lock costs nothing that matters. */
static pthread_mutex_t elog_mu = PTHREAD_MUTEX_INITIALIZER;

/* One write per line: error lines are rare, and with O_APPEND a line is
 * never interleaved with another writer's.  In a file each line starts
 * with the UTC time (standard error has none: journald or the terminal's
 * reader adds its own).  A failing sink is ignored: there is nowhere left
 * to report it. */
static void fd_sink(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	char stamp[32];
	size_t slen = 0;
	if (elog_fd != 2) {
		struct timespec ts;
		struct tm tm;
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		slen = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	}
	struct iovec iov[2] = {{stamp, slen}, {(void *)line, len}};
	int i = slen ? 0 : 1;
	while (i < 2) {
		ssize_t n = writev(elog_fd, iov + i, 2 - i);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		while (i < 2 && (size_t)n >= iov[i].iov_len)
			n -= (ssize_t)iov[i++].iov_len;
		if (i < 2) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
}

static struct sk_log *get(void)
{
	if (!elog_ready) {
		sk_log_init(&elog_l, "skiff", SK_LOG_WARN, ELOG_BURST, SK_NS_PER_S, fd_sink, NULL);
		elog_ready = true;
	}
	return &elog_l;
}

int elog_open(const char *prefix, const char *path, enum sk_log_level level, char *err,
	      size_t errlen)
{
	if (path && strcmp(path, "-") != 0) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			snprintf(err, errlen, "error-log: cannot open %s: %s", path, strerror(errno));
			return -1;
		}
		elog_fd = fd;
	}
	sk_log_init(&elog_l, prefix, level, ELOG_BURST, SK_NS_PER_S, fd_sink, NULL);
	elog_ready = true;
	return 0;
}

void elog_close(void)
{
	if (!elog_ready)
		return;
	sk_log_flush(&elog_l, SK_TIME_NEVER);
	if (elog_fd != 2)
		close(elog_fd);
	elog_fd = 2;
}

bool elog_on(enum sk_log_level level)
{
	return sk_log_on(get(), level);
}

void elog(enum sk_log_level level, const char *key, const char *fmt, ...)
{
	struct sk_log *l = get();
	if (!sk_log_on(l, level))
		return;
	char msg[SK_LOG_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1;
	pthread_mutex_lock(&elog_mu);
	sk_log_msg(l, plat_now(), level, key, msg, len);
	pthread_mutex_unlock(&elog_mu);
}

void elog_flush(sk_time_ns now)
{
	struct sk_log *l = get();
	pthread_mutex_lock(&elog_mu);
	sk_log_flush(l, now);
	pthread_mutex_unlock(&elog_mu);
}

sk_time_ns elog_next_deadline(void)
{
	return sk_log_next_deadline(get());
}

uint64_t elog_suppressed(void)
{
	return elog_l.suppressed;
}

void elog_stats(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	fn(ctx, "log.lines", get()->lines);
	fn(ctx, "log.suppressed", get()->suppressed);
}
