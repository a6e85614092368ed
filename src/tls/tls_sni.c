/* tls_sni.c — see tls_sni.h. */
#include "tls_sni.h"

#include <stdbool.h>
#include <string.h>

static char lower(char c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

void tls_sni_lower(char *s)
{
	for (; *s; s++)
		*s = lower(*s);
}

static bool name_eq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != b[i])
			return false;
	return true;
}

int tls_sni_pick(char *const *names, unsigned n, const char *name)
{
	size_t len = strlen(name);
	for (unsigned i = 0; i < n; i++)
		if (names[i][0] != '*' && strlen(names[i]) == len && name_eq(name, names[i], len))
			return (int)i;
	const char *dot = memchr(name, '.', len);
	if (!dot || dot == name)
		return -1;
	size_t rest = len - (size_t)(dot - name); /* ".example.com" */
	for (unsigned i = 0; i < n; i++) {
		const char *w = names[i];
		if (w[0] == '*' && strlen(w + 1) == rest && name_eq(dot, w + 1, rest))
			return (int)i;
	}
	return -1;
}

long tls_sni_from_ext(const uint8_t *p, size_t n, const uint8_t **name)
{
	if (n < 2 || (size_t)(p[0] << 8 | p[1]) != n - 2)
		return -1; /* the list's length: the rest of the body */
	p += 2;
	n -= 2;
	if (n < 3 || p[0] != 0) /* name_type host_name */
		return -1;
	size_t len = (size_t)(p[1] << 8 | p[2]);
	if (len == 0 || len != n - 3)
		return -1; /* one entry, filling the list */
	*name = p + 3;
	return (long)len;
}

size_t tls_sni_bind_text(char out[TLS_SNI_BIND_MAX], const void *name, long len)
{
	if (len == 0)
		return 0;
	memcpy(out, TLS_SNI_TAG, TLS_SNI_TAG_LEN);
	if (len < 0 || len > TLS_SNI_NAME_MAX) {
		out[TLS_SNI_TAG_LEN] = 0;
		return TLS_SNI_TAG_LEN + 1;
	}
	const char *s = name;
	for (long i = 0; i < len; i++)
		out[TLS_SNI_TAG_LEN + (size_t)i] = lower(s[i]);
	return TLS_SNI_TAG_LEN + (size_t)len;
}
