/* cache_policy.c — see cache_policy.h. */
#include "cache_policy.h"

#include "date.h"

static inline uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static inline bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

bool http_cache_name_is(const char *name, size_t nlen, const char *lit)
{
	size_t i = 0;
	for (; i < nlen; i++)
		if (!lit[i] || lower((uint8_t)name[i]) != (uint8_t)lit[i])
			return false;
	return lit[i] == 0;
}

bool http_cache_name_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (lower((uint8_t)a[i]) != lower((uint8_t)b[i]))
			return false;
	return true;
}

void http_cache_info_init(struct http_cache_info *in)
{
	sk_memset(in, 0, sizeof(*in));
	http_cc_init(&in->cc);
}

static bool tokens_star(const char *v, size_t n)
{
	/* Vary = "*" / 1#field-name: a "*" element anywhere means "*". */
	size_t i = 0;
	while (i < n) {
		while (i < n && (is_ows(v[i]) || v[i] == ','))
			i++;
		size_t s = i;
		while (i < n && !is_ows(v[i]) && v[i] != ',')
			i++;
		if (i - s == 1 && v[s] == '*')
			return true;
	}
	return false;
}

void http_cache_info_add(struct http_cache_info *in, const char *name, size_t nlen,
			 const char *value, size_t vlen)
{
	const uint8_t *v = (const uint8_t *)value;
	if (http_cache_name_is(name, nlen, "cache-control")) {
		http_cc_add(&in->cc, v, vlen);
	} else if (http_cache_name_is(name, nlen, "expires")) {
		uint64_t t;
		if (!http_date_parse(v, vlen, &t))
			in->expires_bad = true; /* "0", "-1", garbage: in the past (5.3) */
		else if (in->expires_seen && t != in->expires)
			in->expires_bad = true;
		else
			in->expires = t;
		in->expires_seen = true;
	} else if (http_cache_name_is(name, nlen, "date")) {
		uint64_t t;
		if (!http_date_parse(v, vlen, &t) || (in->date_seen && t != in->date))
			in->date_bad = true;
		else
			in->date = t;
		in->date_seen = true;
	} else if (http_cache_name_is(name, nlen, "age")) {
		uint32_t a;
		if (http_cc_delta(v, vlen, &a) && (!in->age_seen || a > in->age)) {
			in->age = a;
			in->age_seen = true;
		}
	} else if (http_cache_name_is(name, nlen, "vary")) {
		if (tokens_star(value, vlen))
			in->vary_star = true;
	} else if (http_cache_name_is(name, nlen, "set-cookie")) {
		in->set_cookie = true;
	} else if (http_cache_name_is(name, nlen, "etag")) {
		in->has_etag = true;
	} else if (http_cache_name_is(name, nlen, "last-modified")) {
		in->has_last_modified = true;
	}
}

bool http_cache_info_explicit(const struct http_cache_info *in)
{
	return (in->cc.flags & (HTTP_CC_S_MAXAGE | HTTP_CC_MAX_AGE)) || in->expires_seen;
}

uint64_t http_cache_lifetime(const struct http_cache_info *in, uint64_t date_value)
{
	if (in->cc.flags & HTTP_CC_S_MAXAGE)
		return in->cc.s_maxage; /* a shared cache's own (5.2.2.10) */
	if (in->cc.flags & HTTP_CC_MAX_AGE)
		return in->cc.max_age;
	if (in->expires_seen) {
		if (in->expires_bad || in->expires <= date_value)
			return 0;
		return in->expires - date_value;
	}
	return 0; /* heuristic freshness is off */
}

bool http_cache_status_storable(unsigned s)
{
	switch (s) {
	case 200: case 203: case 204: case 300: case 301: case 302: case 303: case 307:
	case 308: case 404: case 405: case 410: case 414: case 501:
		return true;
	default:
		return false; /* 206 (we never combine ranges), 304, 1xx, 5xx, unknown */
	}
}

bool http_cache_status_heuristic(unsigned s)
{
	switch (s) {
	case 200: case 203: case 204: case 300: case 301: case 308: case 404: case 405:
	case 410: case 414: case 501:
		return true;
	default:
		return false;
	}
}

bool http_cache_field_skipped(const char *name, size_t nlen)
{
	static const char *const skip[] = {
		"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade",
		"content-length", "date", "age",
	};
	for (unsigned i = 0; i < SK_ARRAY_LEN(skip); i++)
		if (http_cache_name_is(name, nlen, skip[i]))
			return true;
	/* Proxy-* (Proxy-Connection, Proxy-Authenticate, ...): hop-by-hop. */
	return nlen >= 6 && http_cache_name_eq(name, 6, "proxy-", 6);
}

bool http_cache_list_has(const char *list, size_t llen, const char *name, size_t nlen)
{
	size_t i = 0;
	while (i < llen) {
		while (i < llen && (is_ows(list[i]) || list[i] == ','))
			i++;
		size_t s = i;
		while (i < llen && !is_ows(list[i]) && list[i] != ',')
			i++;
		if (i > s && http_cache_name_eq(list + s, i - s, name, nlen))
			return true;
	}
	return false;
}

int http_cache_vary_value(const struct http_cache_req *req, const char *name, size_t nlen,
			  char *out, size_t cap)
{
	bool fold = nlen >= 6 && http_cache_name_eq(name, 6, "accept", 6);
	size_t o = 0;
	if (cap < 1)
		return -1;
	out[o++] = 'A';
	for (unsigned k = 0; k < req->nfields; k++) {
		const struct http_cache_field *f = &req->fields[k];
		if (!http_cache_name_eq(f->name, f->nlen, name, nlen))
			continue;
		size_t s = 0, e = f->vlen;
		while (s < e && is_ows(f->value[s]))
			s++;
		while (e > s && is_ows(f->value[e - 1]))
			e--;
		if (out[0] == 'A')
			out[0] = 'P';
		else {
			if (o >= cap)
				return -1;
			out[o++] = ',';
		}
		for (size_t i = s; i < e; i++) {
			char ch = f->value[i];
			if (is_ows(ch)) {
				/* OWS next to a comma goes; inside a value it stays. */
				size_t j = i;
				while (j < e && is_ows(f->value[j]))
					j++;
				if ((o > 0 && out[o - 1] == ',') || (j < e && f->value[j] == ',')) {
					i = j - 1;
					continue;
				}
			}
			if (o >= cap)
				return -1;
			out[o++] = fold ? (char)lower((uint8_t)ch) : ch;
		}
	}
	return (int)o;
}

bool http_cache_req_has(const struct http_cache_req *req, const char *lname)
{
	for (unsigned k = 0; k < req->nfields; k++)
		if (http_cache_name_is(req->fields[k].name, req->fields[k].nlen, lname))
			return true;
	return false;
}

void http_cache_req_cc(const struct http_cache_req *req, struct http_cc *cc)
{
	http_cc_init(cc);
	bool any = false, pragma = false;
	for (unsigned k = 0; k < req->nfields; k++) {
		const struct http_cache_field *f = &req->fields[k];
		if (http_cache_name_is(f->name, f->nlen, "cache-control")) {
			http_cc_add(cc, (const uint8_t *)f->value, f->vlen);
			any = true;
		} else if (http_cache_name_is(f->name, f->nlen, "pragma") &&
			   http_cache_list_has(f->value, f->vlen, "no-cache", 8)) {
			pragma = true;
		}
	}
	if (!any && pragma)
		cc->flags |= HTTP_CC_NO_CACHE;
}
