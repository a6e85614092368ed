/* log.c — see log.h. */
#include "log.h"

const char *const sk_log_level_names[SK_LOG_LEVELS] = {"error", "warn", "info", "debug"};

void sk_log_init(struct sk_log *l, const char *prefix, enum sk_log_level level, uint32_t burst,
		 sk_time_ns window, sk_log_sink_fn sink, void *sink_ctx)
{
	sk_memset(l, 0, sizeof(*l));
	l->prefix = prefix;
	l->level = level;
	l->burst = burst;
	l->window = window ? window : SK_NS_PER_S;
	l->sink = sink;
	l->sink_ctx = sink_ctx;
}

static size_t str_len(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* Append up to n bytes of s at p, never past end; the new p. */
static char *put(char *p, char *end, const char *s, size_t n)
{
	while (n-- && *s && p < end)
		*p++ = *s++;
	return p;
}

static char *put_u64(char *p, char *end, uint64_t v)
{
	char d[20];
	int k = 0;
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 20);
	while (k && p < end)
		*p++ = d[--k];
	return p;
}

size_t sk_log_format(const struct sk_log *l, enum sk_log_level level, const char *msg, size_t len,
		     char *buf, size_t size)
{
	char *p = buf, *end = buf + size - 1; /* room for the '\n' */
	if (l->prefix) {
		p = put(p, end, l->prefix, SIZE_MAX);
		p = put(p, end, ": ", 2);
	}
	p = put(p, end, sk_log_level_names[level], SIZE_MAX);
	p = put(p, end, ": ", 2);
	/* The message as given, bytes not characters: a NUL inside ends it,
	 * and a newline inside would forge a second line, so it is a space. */
	for (size_t i = 0; i < len && msg[i] && p < end; i++)
		*p++ = msg[i] == '\n' || msg[i] == '\r' ? ' ' : msg[i];
	*p++ = '\n';
	return (size_t)(p - buf);
}

static void emit(struct sk_log *l, const char *line, size_t n)
{
	l->lines++;
	if (l->sink)
		l->sink(l->sink_ctx, line, n);
}

/* "KEY: suppressed K messages (more than B in W ms)" at the key's level. */
static void report(struct sk_log *l, const struct sk_log_key *k, uint32_t held)
{
	char msg[128], *p = msg, *end = msg + sizeof(msg);
	p = put(p, end, k->key, SK_LOG_KEY_MAX);
	p = put(p, end, ": suppressed ", 13);
	p = put_u64(p, end, held);
	p = put(p, end, held == 1 ? " message (more than " : " messages (more than ", 21);
	p = put_u64(p, end, l->burst);
	p = put(p, end, " in ", 4);
	p = put_u64(p, end, l->window / SK_NS_PER_MS);
	p = put(p, end, " ms)", 4);
	char line[SK_LOG_LINE_MAX];
	emit(l, line, sk_log_format(l, k->level, msg, (size_t)(p - msg), line, sizeof(line)));
}

/* Keys are compared on their first SK_LOG_KEY_MAX - 1 bytes, as stored. */
static bool key_eq(const struct sk_log_key *k, const char *key)
{
	for (size_t i = 0; i < SK_LOG_KEY_MAX - 1; i++) {
		if (k->key[i] != key[i])
			return false;
		if (!key[i])
			return true;
	}
	return true;
}

static struct sk_log_key *key_slot(struct sk_log *l, const char *key)
{
	struct sk_log_key *oldest = &l->keys[0];
	for (unsigned i = 0; i < SK_LOG_KEYS; i++) {
		struct sk_log_key *k = &l->keys[i];
		if (k->key[0] && key_eq(k, key))
			return k;
		if (!k->key[0])
			oldest = k;
		else if (oldest->key[0] && k->start < oldest->start)
			oldest = k;
	}
	/* A new key: a free slot, or the one whose window began longest ago,
	 * its count reported before it goes. */
	if (oldest->key[0] && oldest->held)
		report(l, oldest, oldest->held);
	sk_memset(oldest, 0, sizeof(*oldest));
	size_t n = str_len(key);
	if (n >= SK_LOG_KEY_MAX)
		n = SK_LOG_KEY_MAX - 1;
	sk_memcpy(oldest->key, key, n);
	return oldest;
}

bool sk_log_admit(struct sk_log *l, const char *key, enum sk_log_level level, sk_time_ns now,
		  uint32_t *rep)
{
	*rep = 0;
	if (!key || !key[0] || !l->burst)
		return true;
	struct sk_log_key *k = key_slot(l, key);
	k->level = level;
	if (!k->sent && !k->held) {
		k->start = now; /* the first message since the last window */
	} else if (now - k->start >= l->window) {
		k->start = now; /* a new window */
		k->sent = 0;
	}
	if (k->sent >= l->burst) {
		k->held++;
		l->suppressed++;
		return false;
	}
	k->sent++;
	*rep = k->held;
	k->held = 0;
	return true;
}

void sk_log_msg(struct sk_log *l, sk_time_ns now, enum sk_log_level level, const char *key,
		const char *msg, size_t len)
{
	if (!sk_log_on(l, level))
		return;
	uint32_t held;
	if (!sk_log_admit(l, key, level, now, &held))
		return;
	if (held) {
		struct sk_log_key *k = key_slot(l, key);
		report(l, k, held);
	}
	char line[SK_LOG_LINE_MAX];
	emit(l, line, sk_log_format(l, level, msg, len, line, sizeof(line)));
}

void sk_log_flush(struct sk_log *l, sk_time_ns now)
{
	for (unsigned i = 0; i < SK_LOG_KEYS; i++) {
		struct sk_log_key *k = &l->keys[i];
		if (!k->key[0] || !k->held)
			continue;
		if (now != SK_TIME_NEVER && now - k->start < l->window)
			continue;
		uint32_t held = k->held;
		k->held = 0;
		/* The next message of the key starts a new window. */
		k->sent = 0;
		report(l, k, held);
	}
}

sk_time_ns sk_log_next_deadline(const struct sk_log *l)
{
	sk_time_ns d = SK_TIME_NEVER;
	for (unsigned i = 0; i < SK_LOG_KEYS; i++) {
		const struct sk_log_key *k = &l->keys[i];
		if (k->key[0] && k->held && k->start + l->window < d)
			d = k->start + l->window;
	}
	return d;
}
