/* log.h — the error log's engine: levels, a rate limit per message key,
 * and the line format; the sink (a file, standard error, the serial
 * console) is the caller's.  Freestanding and clock-free like the rest of
 * the core: time comes in as `now`, the text comes in already formatted
 * (hosted: elog/elog.h with vsnprintf; the unikernel: ksnprintf),
 * and a finished line goes out through one callback.
 *
 * A line:   PREFIX: LEVEL: MESSAGE\n        e.g.
 *           skiff serve: error: SIGHUP: certificate reload failed, ...
 * Rate limit: a message carries a key (a short constant string naming
 * what repeats, e.g. "reload.tls"; NULL: never limited).  In each window
 * (`window` ns, starting at the key's first message after the last window
 * ended) at most `burst` messages of a key go out; the rest are counted.
 * The count is reported in one line of the key's own level,
 *           PREFIX: LEVEL: KEY: suppressed K messages (more than B in W ms)
 * before the key's next message that goes out, or by sk_log_flush once
 * the window has ended (a timer of the caller's: sk_log_next_deadline
 * says when), so nothing is held back silently for long.
 * Keys are tracked in SK_LOG_KEYS slots; a new key takes a free slot or
 * the one idle longest (whose count, if any, is reported first).
 * One thread: the caller serialises calls. */
#ifndef BASE_LOG_H
#define BASE_LOG_H

#include "sk.h"

enum sk_log_level { SK_LOG_ERROR = 0, SK_LOG_WARN, SK_LOG_INFO, SK_LOG_DEBUG };
#define SK_LOG_LEVELS 4
/* "error", "warn", "info", "debug": the level words of --log-level. */
extern const char *const sk_log_level_names[SK_LOG_LEVELS];

#define SK_LOG_KEYS 16
#define SK_LOG_KEY_MAX 32    /* bytes of a key that count (and are printed) */
#define SK_LOG_LINE_MAX 1024 /* a whole line, '\n' included; a longer message is cut */

struct sk_log_key {
	char key[SK_LOG_KEY_MAX]; /* "" = a free slot */
	enum sk_log_level level;  /* of the last message: the report's */
	sk_time_ns start;         /* the window's start */
	uint32_t sent;            /* messages gone out in this window (<= burst) */
	uint32_t held;            /* messages held back, not yet reported */
};

typedef void (*sk_log_sink_fn)(void *ctx, const char *line, size_t len);

struct sk_log {
	/* set by sk_log_init; the caller may change level afterwards */
	enum sk_log_level level; /* messages of a level above it are dropped */
	uint32_t burst;          /* per key per window; 0: no limit */
	sk_time_ns window;
	const char *prefix;      /* e.g. "skiff serve"; NULL: none */
	sk_log_sink_fn sink;
	void *sink_ctx;
	struct sk_log_key keys[SK_LOG_KEYS];
	/* counters */
	uint64_t lines;          /* lines handed to the sink, reports included */
	uint64_t suppressed;     /* messages held back by the limit */
};

void sk_log_init(struct sk_log *l, const char *prefix, enum sk_log_level level, uint32_t burst,
		 sk_time_ns window, sk_log_sink_fn sink, void *sink_ctx);
/* Whether a message of `level` would be written at all (to skip
 * formatting one that would not). */
static inline bool sk_log_on(const struct sk_log *l, enum sk_log_level level)
{
	return l && level <= l->level;
}
/* The limiter alone: whether a message of key may go out at now.  When it
 * may and messages of the key were held back before it, their number is
 * put in *report (else 0) and the key's count starts again: the caller
 * reports it first.  key NULL or "": always, *report 0. */
bool sk_log_admit(struct sk_log *l, const char *key, enum sk_log_level level, sk_time_ns now,
		  uint32_t *report);
/* One message (len bytes, no newline needed): dropped above the level,
 * limited by key, written as one line. */
void sk_log_msg(struct sk_log *l, sk_time_ns now, enum sk_log_level level, const char *key,
		const char *msg, size_t len);
/* Report the counts of keys whose window ended by now (SK_TIME_NEVER:
 * every count, at exit). */
void sk_log_flush(struct sk_log *l, sk_time_ns now);
/* When the next count is due to be reported by sk_log_flush, or
 * SK_TIME_NEVER if none is held. */
sk_time_ns sk_log_next_deadline(const struct sk_log *l);
/* Format into buf (size >= 32): "PREFIX: LEVEL: " + msg cut to fit + '\n'.
 * Returns the length.  What sk_log_msg hands the sink (tests). */
size_t sk_log_format(const struct sk_log *l, enum sk_log_level level, const char *msg, size_t len,
		     char *buf, size_t size);

#endif
