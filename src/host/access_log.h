/* access_log.h — `skiff serve --access-log FILE|-`: the I/O side of the
 * access log.  The server hands out one record per response
 * (http/app.h, config.access); this formats it (http/access.h) into a
 * buffer and writes the buffer in batches:
 *   - when the next record might not fit (ACCESS_LOG_BUF bytes, hundreds
 *     of records),
 *   - at most ACCESS_LOG_FLUSH_NS after the first record of a batch, from
 *     a loop timer (armed only while records wait, so an idle server has
 *     no wakeup for it),
 *   - and at exit (access_log_close).
 * Never one write per request.
 *
 * Never blocking the loop: a FIFO, terminal or socket is written without
 * blocking (its own non-blocking descriptor: /proc/self/fd/N reopened for
 * "-" on a pipe or terminal, send(MSG_DONTWAIT) on a socket).  What it
 * does not take stays in the buffer for the next flush; a record that
 * does not fit behind it is DROPPED and counted (access_log.dropped):
 * a slow reader of the log costs log lines, never requests.  A regular
 * file is written directly (the page cache takes a batch at once).  At
 * exit, what is left is written waiting at most ACCESS_LOG_EXIT_WAIT_MS
 * for the reader; anything still unwritten then is counted as dropped.
 * A write error (disk full, reader gone) drops that batch, counted in
 * access_log.write_errors and access_log.dropped.
 *
 * One loop, one thread: no locks. */
#ifndef APPS_ACCESS_LOG_H
#define APPS_ACCESS_LOG_H

#include <stdint.h>

#include "../http/access.h"
#include "../loop/loop.h"

#define ACCESS_LOG_BUF (256u * 1024u)
#define ACCESS_LOG_FLUSH_NS SK_NS_PER_S
#define ACCESS_LOG_EXIT_WAIT_MS 2000

struct access_log;

/* Open the log: path "-" is standard output, else a file (created 0640,
 * appended to).  NULL with a one-line reason in err. */
struct access_log *access_log_open(const char *path, enum http_access_fmt fmt, struct loop *loop,
				   char *err, size_t errlen);

/* The server's hook (http_access_fn): ctx is the struct access_log. */
void access_log_record(void *ctx, const struct http_access *rec);

/* At exit: write what is buffered (waiting, bounded, for a slow reader),
 * cancel the timer, close the file (never standard output itself).  The
 * counters stay readable until access_log_free.  NULL: no-op. */
void access_log_close(struct access_log *al);
void access_log_free(struct access_log *al);

/* access_log.records (formatted), .dropped, .writes, .bytes (written),
 * .write_errors. */
void access_log_stats(const struct access_log *al,
		      void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

#endif
