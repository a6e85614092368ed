/* target.c — see target.h. */
#include "target.h"

/* Where the path of the target starts and ends (origin-form or
 * absolute-form; the query is cut off).  Returns false if there is none. */
static bool path_span(const uint8_t *t, size_t n, size_t *from, size_t *to)
{
	size_t i = 0;
	if (n == 0)
		return false;
	if (t[0] != '/') {
		/* absolute-form: scheme "://" authority [path] */
		while (i + 2 < n && !(t[i] == ':' && t[i + 1] == '/' && t[i + 2] == '/'))
			i++;
		if (i + 2 >= n)
			return false;
		i += 3;
		while (i < n && t[i] != '/' && t[i] != '?')
			i++;
	}
	*from = i;
	while (i < n && t[i] != '?')
		i++;
	*to = i;
	return true;
}

static inline int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int http_target_path(const uint8_t *t, size_t n, char *out, size_t cap, size_t *len)
{
	size_t from, to, k = 0;
	if (!path_span(t, n, &from, &to))
		return 400;
	if (cap < 2)
		return 414;
	if (from == to) /* "http://host" or "http://host?q" */
		out[k++] = '/';
	/* Decoding comes FIRST, so every check below sees the decoded bytes. */
	for (size_t i = from; i < to; i++) {
		uint8_t ch = t[i];
		if (ch == '%') {
			if (i + 2 >= to)
				return 400;
			int hi = hexval(t[i + 1]), lo = hexval(t[i + 2]);
			if (hi < 0 || lo < 0)
				return 400;
			ch = (uint8_t)(hi << 4 | lo);
			if (ch == 0)
				return 400;
			i += 2;
		}
		if (k + 1 >= cap)
			return 414;
		out[k++] = (char)ch;
	}
	if (k == 0 || out[0] != '/')
		return 400;
	for (size_t i = 0; i < k;) {
		size_t j = i + 1;
		while (j < k && out[j] != '/')
			j++;
		size_t seg = j - (i + 1);
		if ((seg == 1 && out[i + 1] == '.') ||
		    (seg == 2 && out[i + 1] == '.' && out[i + 2] == '.'))
			return 404;
		i = j;
	}
	out[k] = 0;
	*len = k;
	return 0;
}
