/* etag.c — see etag.h. */
#include "etag.h"

/* etagc = "!" / %x23-7E / obs-text (no '"', no CTL, no SP). */
static inline bool is_etagc(uint8_t c)
{
	return c == 0x21 || (c >= 0x23 && c != 0x7f);
}

static inline bool is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* One entity-tag at v[*i]: sets [*o, *o + *olen) to the opaque-tag with
 * its quotes and *weak.  false if v[*i] does not start one. */
static bool read_tag(const uint8_t *v, size_t n, size_t *i, size_t *o, size_t *olen, bool *weak)
{
	size_t k = *i;
	*weak = false;
	if (n - k >= 2 && v[k] == 'W' && v[k + 1] == '/') {
		*weak = true;
		k += 2;
	}
	if (k >= n || v[k] != '"')
		return false;
	size_t start = k++;
	while (k < n && is_etagc(v[k]))
		k++;
	if (k >= n || v[k] != '"')
		return false;
	k++;
	*o = start;
	*olen = k - start;
	*i = k;
	return true;
}

bool http_etag_is_one(const uint8_t *v, size_t n)
{
	size_t i = 0, o, olen;
	bool weak;
	while (i < n && is_ows(v[i]))
		i++;
	if (!read_tag(v, n, &i, &o, &olen, &weak))
		return false;
	while (i < n && is_ows(v[i]))
		i++;
	return i == n;
}

static bool mem_eq(const uint8_t *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != (uint8_t)b[i])
			return false;
	return true;
}

bool http_etag_list_match(const uint8_t *v, size_t n, const char *etag, size_t elen,
			  enum http_etag_cmp cmp, bool exists)
{
	size_t i = 0;
	while (i < n && is_ows(v[i]))
		i++;
	if (i < n && v[i] == '*') {
		size_t k = i + 1;
		while (k < n && is_ows(v[k]))
			k++;
		return k == n && exists; /* "*" alone; in a list it is invalid */
	}
	/* Our own tag, split into weakness and opaque-tag. */
	bool eweak = false;
	if (etag && elen >= 2 && etag[0] == 'W' && etag[1] == '/') {
		eweak = true;
		etag += 2;
		elen -= 2;
	}
	bool match = false, any = false;
	while (i < n) {
		if (is_ows(v[i]) || v[i] == ',') {
			i++;
			continue;
		}
		size_t o, olen;
		bool weak;
		if (!read_tag(v, n, &i, &o, &olen, &weak))
			return false; /* not a list of entity-tags: matches nothing */
		any = true;
		/* Something other than OWS or ',' right after a tag: invalid. */
		if (i < n && !is_ows(v[i]) && v[i] != ',')
			return false;
		if (!etag || olen != elen || !mem_eq(v + o, etag, elen))
			continue;
		if (cmp == HTTP_ETAG_WEAK || (!weak && !eweak))
			match = true;
	}
	return any && match;
}
