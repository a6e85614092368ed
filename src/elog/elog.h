/* elog.h — the process's error log (hosted): base/log.h's engine with
 * vsnprintf in front and a descriptor behind (standard error, or a file
 * opened for appending).  One per process, so every hosted layer can
 * report a runtime error the same way (loop_linux, loop_tls, the apps);
 * before elog_open it writes warnings and errors to standard error under
 * "skiff".  In a file, each line starts with the UTC time
 * (2026-12-01T19:46:26Z).  The rate limit is fixed: ELOG_BURST lines per key per second
 * (log.h says how the rest are counted and reported).  Usage errors of
 * the command line are not runtime errors and do not come here (cli.h). */
#ifndef ELOG_ELOG_H
#define ELOG_ELOG_H

#include <stddef.h>

#include "../base/log.h"

#define ELOG_BURST 10

/* path NULL or "-": standard error.  -1 with a message in err if the file
 * cannot be opened. */
int elog_open(const char *prefix, const char *path, enum sk_log_level level, char *err,
	      size_t errlen);
/* Report the counts still held back and close the file. */
void elog_close(void);
bool elog_on(enum sk_log_level level);
/* key: what repeats ("tls.handshake"), NULL: never limited (log.h). */
void elog(enum sk_log_level level, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* For a timer: report the counts whose window has ended, and when the
 * next is due (SK_TIME_NEVER: none held). */
void elog_flush(sk_time_ns now);
sk_time_ns elog_next_deadline(void);
/* Messages held back so far: a caller that sees it grow arms its timer
 * for elog_next_deadline. */
uint64_t elog_suppressed(void);
/* log.lines, log.suppressed */
void elog_stats(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

#endif
