/* cache_cc.c — see cache_cc.h.
 *
 * One pass over the list: skip OWS and commas, read a token, then an
 * optional "=" argument (token or quoted-string), then require OWS and a
 * comma or the end.  An element that breaks this is skipped up to the next
 * comma outside quotes, and marks the whole field INVALID. */
#include "cache_cc.h"

static inline bool is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* tchar (RFC 9110 5.6.2). */
static bool is_tchar(uint8_t c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
	case '-': case '.': case '^': case '_': case '`': case '|': case '~':
		return true;
	default:
		return false;
	}
}

static inline uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static bool name_is(const uint8_t *p, size_t n, const char *s)
{
	size_t i = 0;
	for (; i < n; i++)
		if (!s[i] || lower(p[i]) != (uint8_t)s[i])
			return false;
	return s[i] == 0;
}

void http_cc_init(struct http_cc *cc)
{
	sk_memset(cc, 0, sizeof(*cc));
}

bool http_cc_delta(const uint8_t *v, size_t n, uint32_t *out)
{
	size_t i = 0;
	while (i < n && is_ows(v[i]))
		i++;
	while (n > i && is_ows(v[n - 1]))
		n--;
	if (i == n)
		return false;
	uint64_t x = 0;
	for (; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
		if (x > HTTP_CC_DELTA_MAX)
			x = HTTP_CC_DELTA_MAX; /* sticky: stays bounded however long */
	}
	*out = (uint32_t)x;
	return true;
}

/* A directive with a delta-seconds argument: the first sets it, a second
 * takes the smaller (or the larger, for min-fresh) — never the laxer. */
static void set_delta(struct http_cc *cc, uint32_t flag, uint32_t *field, const uint8_t *a,
		      size_t alen, bool has_arg, bool keep_larger)
{
	uint32_t v = 0;
	if (!has_arg || !http_cc_delta(a, alen, &v)) {
		cc->flags |= HTTP_CC_INVALID;
		v = 0;
	}
	if (!(cc->flags & flag))
		*field = v;
	else if (keep_larger ? v > *field : v < *field)
		*field = v;
	cc->flags |= flag;
}

static void directive(struct http_cc *cc, const uint8_t *nm, size_t nlen, const uint8_t *a,
		      size_t alen, bool has_arg)
{
	if (name_is(nm, nlen, "max-age"))
		set_delta(cc, HTTP_CC_MAX_AGE, &cc->max_age, a, alen, has_arg, false);
	else if (name_is(nm, nlen, "s-maxage"))
		set_delta(cc, HTTP_CC_S_MAXAGE, &cc->s_maxage, a, alen, has_arg, false);
	else if (name_is(nm, nlen, "min-fresh"))
		set_delta(cc, HTTP_CC_MIN_FRESH, &cc->min_fresh, a, alen, has_arg, true);
	else if (name_is(nm, nlen, "max-stale")) {
		if (has_arg)
			set_delta(cc, HTTP_CC_MAX_STALE, &cc->max_stale, a, alen, true, false);
		else if (!(cc->flags & HTTP_CC_MAX_STALE)) {
			cc->max_stale = HTTP_CC_DELTA_MAX; /* any staleness */
			cc->flags |= HTTP_CC_MAX_STALE;
		}
	} else if (name_is(nm, nlen, "no-store"))
		cc->flags |= HTTP_CC_NO_STORE;
	else if (name_is(nm, nlen, "no-cache"))
		cc->flags |= HTTP_CC_NO_CACHE | (has_arg ? HTTP_CC_NO_CACHE_FIELDS : 0u);
	else if (name_is(nm, nlen, "private"))
		cc->flags |= HTTP_CC_PRIVATE;
	else if (name_is(nm, nlen, "public"))
		cc->flags |= HTTP_CC_PUBLIC;
	else if (name_is(nm, nlen, "must-revalidate"))
		cc->flags |= HTTP_CC_MUST_REVALIDATE;
	else if (name_is(nm, nlen, "proxy-revalidate"))
		cc->flags |= HTTP_CC_PROXY_REVALIDATE;
	else if (name_is(nm, nlen, "only-if-cached"))
		cc->flags |= HTTP_CC_ONLY_IF_CACHED;
	else if (name_is(nm, nlen, "no-transform"))
		cc->flags |= HTTP_CC_NO_TRANSFORM;
	/* anything else: an extension we do not implement, ignored (5.2.3) */
}

void http_cc_add(struct http_cc *cc, const uint8_t *v, size_t n)
{
	size_t i = 0;
	while (i < n) {
		if (is_ows(v[i]) || v[i] == ',') {
			i++;
			continue;
		}
		size_t ns = i;
		while (i < n && is_tchar(v[i]))
			i++;
		size_t nlen = i - ns;
		const uint8_t *arg = NULL;
		size_t alen = 0;
		bool has_arg = false, bad = nlen == 0;
		if (!bad && i < n && v[i] == '=') {
			i++;
			has_arg = true;
			if (i < n && v[i] == '"') {
				/* quoted-string: qdtext and quoted-pairs; the
				 * argument is what is inside (escapes left in: no
				 * argument we read can hold one legitimately). */
				size_t qs = ++i;
				while (i < n && v[i] != '"') {
					if (v[i] == '\\')
						i++;
					i++;
				}
				if (i >= n)
					bad = true; /* unterminated */
				else {
					arg = v + qs;
					alen = i - qs;
					i++;
				}
			} else {
				size_t as = i;
				while (i < n && is_tchar(v[i]))
					i++;
				arg = v + as;
				alen = i - as;
				if (alen == 0)
					bad = true;
			}
		}
		if (!bad) {
			while (i < n && is_ows(v[i]))
				i++;
			if (i < n && v[i] != ',')
				bad = true;
		}
		if (bad) {
			cc->flags |= HTTP_CC_INVALID;
			/* Skip to the next comma outside a quoted-string. */
			bool q = false;
			while (i < n && (q || v[i] != ',')) {
				if (v[i] == '"')
					q = !q;
				else if (q && v[i] == '\\')
					i++;
				i++;
			}
			continue;
		}
		directive(cc, v + ns, nlen, arg, alen, has_arg);
	}
}
