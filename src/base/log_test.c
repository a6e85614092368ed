/* log_test.c — the error log's engine with explicit time: the level
 * filter, the line format (no forged lines), and the rate limit per key:
 * a burst goes out, the rest is counted and reported once, before the
 * key's next message or by the flush when its window ends; keys are
 * limited apart; a full key table evicts the idlest key and reports its
 * count first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/log.h"

#define S SK_NS_PER_S
#define MS SK_NS_PER_MS

struct cap {
	char lines[64][SK_LOG_LINE_MAX + 1];
	unsigned n;
};

static void sink(void *ctx, const char *line, size_t len)
{
	struct cap *c = ctx;
	assert_true(c->n < 64);
	assert_true(len >= 1 && line[len - 1] == '\n');
	memcpy(c->lines[c->n], line, len);
	c->lines[c->n][len] = 0;
	c->n++;
}

static void msg(struct sk_log *l, sk_time_ns now, enum sk_log_level lv, const char *key,
		const char *m)
{
	sk_log_msg(l, now, lv, key, m, strlen(m));
}

static void test_levels_and_format(void **state)
{
	(void)state;
	static struct cap c;
	struct sk_log l;
	sk_log_init(&l, "skiff serve", SK_LOG_WARN, 10, S, sink, &c);
	msg(&l, 0, SK_LOG_ERROR, NULL, "bad");
	msg(&l, 0, SK_LOG_WARN, NULL, "odd");
	msg(&l, 0, SK_LOG_INFO, NULL, "fyi"); /* above warn: dropped */
	msg(&l, 0, SK_LOG_DEBUG, NULL, "noise");
	assert_int_equal(c.n, 2);
	assert_string_equal(c.lines[0], "skiff serve: error: bad\n");
	assert_string_equal(c.lines[1], "skiff serve: warn: odd\n");
	assert_false(sk_log_on(&l, SK_LOG_INFO));
	assert_true(sk_log_on(&l, SK_LOG_ERROR));
	/* A newline in a message (a file name, a peer's bytes) cannot start
	 * a second line. */
	msg(&l, 0, SK_LOG_ERROR, NULL, "a\nskiff serve: error: forged\r\n");
	assert_int_equal(c.n, 3);
	assert_string_equal(c.lines[2], "skiff serve: error: a skiff serve: error: forged  \n");
	/* A message longer than a line is cut, and still ends the line. */
	static char big[3 * SK_LOG_LINE_MAX];
	memset(big, 'x', sizeof(big) - 1);
	msg(&l, 0, SK_LOG_ERROR, NULL, big);
	assert_int_equal(strlen(c.lines[3]), SK_LOG_LINE_MAX);
	sk_log_init(&l, NULL, SK_LOG_DEBUG, 0, 0, sink, &c);
	msg(&l, 0, SK_LOG_DEBUG, "k", "plain");
	assert_string_equal(c.lines[4], "debug: plain\n");
}

/* burst 3 per 1 s: 3 go out, 5 are held; the next one after the window
 * is preceded by one report of 5; within a window the count restarts. */
static void test_rate_limit(void **state)
{
	(void)state;
	static struct cap c;
	struct sk_log l;
	sk_log_init(&l, "p", SK_LOG_INFO, 3, S, sink, &c);
	for (int i = 0; i < 8; i++)
		msg(&l, 100 * MS + (sk_time_ns)i * MS, SK_LOG_WARN, "accept", "accept failed");
	assert_int_equal(c.n, 3);
	assert_int_equal(l.suppressed, 5);
	assert_int_equal(sk_log_next_deadline(&l), 1100 * MS);
	/* Still inside the window: held too. */
	msg(&l, 1099 * MS, SK_LOG_WARN, "accept", "accept failed");
	assert_int_equal(c.n, 3);
	/* The window is over: the report, then the message. */
	msg(&l, 1100 * MS, SK_LOG_WARN, "accept", "accept failed");
	assert_int_equal(c.n, 5);
	assert_string_equal(c.lines[3],
			    "p: warn: accept: suppressed 6 messages (more than 3 in 1000 ms)\n");
	assert_string_equal(c.lines[4], "p: warn: accept failed\n");
	assert_int_equal(sk_log_next_deadline(&l), SK_TIME_NEVER);
	/* Messages without a key are never limited. */
	for (int i = 0; i < 20; i++)
		msg(&l, 1200 * MS, SK_LOG_ERROR, NULL, "x");
	assert_int_equal(c.n, 25);
}

/* A count nobody follows is reported by the flush, once its window is
 * over (not before), and then the key starts afresh. */
static void test_flush(void **state)
{
	(void)state;
	static struct cap c;
	struct sk_log l;
	sk_log_init(&l, "p", SK_LOG_WARN, 1, 500 * MS, sink, &c);
	msg(&l, 10 * S, SK_LOG_ERROR, "tls", "handshake");
	msg(&l, 10 * S + 1, SK_LOG_ERROR, "tls", "handshake");
	msg(&l, 10 * S + 2, SK_LOG_ERROR, "tls", "handshake");
	assert_int_equal(c.n, 1);
	sk_log_flush(&l, 10 * S + 499 * MS);
	assert_int_equal(c.n, 1);
	assert_int_equal(sk_log_next_deadline(&l), 10 * S + 500 * MS);
	sk_log_flush(&l, 10 * S + 500 * MS);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.lines[1],
			    "p: error: tls: suppressed 2 messages (more than 1 in 500 ms)\n");
	sk_log_flush(&l, 20 * S);
	assert_int_equal(c.n, 2); /* reported once */
	msg(&l, 10 * S + 600 * MS, SK_LOG_ERROR, "tls", "handshake");
	assert_int_equal(c.n, 3);
	assert_string_equal(c.lines[2], "p: error: handshake\n");
	/* At exit every count goes, window over or not. */
	msg(&l, 10 * S + 601 * MS, SK_LOG_ERROR, "tls", "handshake");
	sk_log_flush(&l, SK_TIME_NEVER);
	assert_int_equal(c.n, 4);
	assert_string_equal(c.lines[3],
			    "p: error: tls: suppressed 1 message (more than 1 in 500 ms)\n");
}

/* Keys are limited apart; with every slot taken, a new key evicts the one
 * whose window began first, reporting its count before. */
static void test_keys(void **state)
{
	(void)state;
	static struct cap c;
	struct sk_log l;
	sk_log_init(&l, NULL, SK_LOG_WARN, 1, S, sink, &c);
	msg(&l, 0, SK_LOG_WARN, "a", "a1");
	msg(&l, 0, SK_LOG_WARN, "a", "a2"); /* held */
	msg(&l, 1, SK_LOG_WARN, "b", "b1");
	assert_int_equal(c.n, 2);
	char key[16];
	for (unsigned i = 0; i < SK_LOG_KEYS - 2; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		msg(&l, 2 + i, SK_LOG_WARN, key, key);
	}
	assert_int_equal(c.n, SK_LOG_KEYS);
	/* The table is full; "new" evicts "a" (window began at 0, first),
	 * whose held message is reported first. */
	msg(&l, 100, SK_LOG_WARN, "new", "n1");
	assert_int_equal(c.n, SK_LOG_KEYS + 2);
	assert_string_equal(c.lines[SK_LOG_KEYS], "warn: a: suppressed 1 message (more than 1 in 1000 ms)\n");
	assert_string_equal(c.lines[SK_LOG_KEYS + 1], "warn: n1\n");
	/* A key longer than the slot is one key, not a new one each time. */
	const char *longkey = "a-key-much-longer-than-thirty-two-bytes-of-slot";
	msg(&l, 200, SK_LOG_WARN, longkey, "l1");
	msg(&l, 201, SK_LOG_WARN, longkey, "l2");
	assert_int_equal(c.n, SK_LOG_KEYS + 3);
	assert_int_equal(l.suppressed, 2);
	uint32_t rep = 7;
	assert_true(sk_log_admit(&l, NULL, SK_LOG_WARN, 300, &rep));
	assert_int_equal(rep, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_and_format),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
