/* conn_req.c — a decoded header list checked as a request head or a
 * trailer section (RFC 9113 8.2, 8.3), and the equivalent HTTP/1.1 head.
 * Pure: no state, no allocation.  Every refusal here is "malformed" (8.1.1):
 * a stream error PROTOCOL_ERROR, which the engine sends. */
#include "h2/conn.h"

#define MALFORMED (-(int)H2_PROTOCOL_ERROR)

static bool eq(const uint8_t *p, uint32_t n, const char *lit)
{
	size_t l = __builtin_strlen(lit);
	return n == l && sk_memcmp(p, lit, l) == 0;
}

/* 8.2.1: a name holds no byte 0x00-0x20, no upper case, no 0x7f-0xff (the
 * leading ':' of a pseudo-header is checked by the caller); a value holds
 * no NUL, CR or LF and neither starts nor ends with SP or HTAB. */
static bool name_ok(const uint8_t *p, uint32_t n, uint32_t from)
{
	if (n == 0)
		return false;
	for (uint32_t i = from; i < n; i++) {
		uint8_t b = p[i];
		if (b <= 0x20 || (b >= 'A' && b <= 'Z') || b >= 0x7f || b == ':')
			return false;
	}
	return true;
}

static bool value_ok(const uint8_t *p, uint32_t n)
{
	if (n && (p[0] == ' ' || p[0] == '\t' || p[n - 1] == ' ' || p[n - 1] == '\t'))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (p[i] == 0 || p[i] == '\r' || p[i] == '\n')
			return false;
	return true;
}

/* 8.2.2: fields that only mean something on one HTTP/1.1 connection. */
static bool connection_specific(const uint8_t *p, uint32_t n)
{
	return eq(p, n, "connection") || eq(p, n, "keep-alive") || eq(p, n, "proxy-connection") ||
	       eq(p, n, "transfer-encoding") || eq(p, n, "upgrade");
}

/* Content-Length: 1 to 18 digits, as the HTTP/1.1 parser takes it. */
static bool parse_cl(const uint8_t *p, uint32_t n, uint64_t *v)
{
	if (n == 0 || n > 18)
		return false;
	uint64_t x = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(p[i] - '0');
	}
	*v = x;
	return true;
}

/* The regular fields from index i on: names, values, the 8.2.2 rules,
 * content-length.  pseudo_ok false: a pseudo-header here is malformed. */
static int regular(const struct hpack_list *l, uint32_t i, struct h2_req *r, struct h2_field *out,
		   uint32_t cap)
{
	r->fields = out;
	r->nfields = 0;
	for (; i < l->n_fields; i++) {
		const struct hpack_field *f = &l->fields[i];
		if (f->name_len && f->name[0] == ':')
			return MALFORMED; /* 8.3: pseudo-headers come first, and not in trailers */
		if (!name_ok(f->name, f->name_len, 0) || !value_ok(f->value, f->value_len))
			return MALFORMED;
		if (connection_specific(f->name, f->name_len))
			return MALFORMED;
		/* 8.2.2: "The only exception to this is the TE header field,
		 * which MAY be present ... but it MUST NOT contain any value
		 * other than "trailers"." */
		if (eq(f->name, f->name_len, "te") && !eq(f->value, f->value_len, "trailers"))
			return MALFORMED;
		if (eq(f->name, f->name_len, "content-length")) {
			uint64_t v;
			/* One line only, as HTTP/1.1's parser: two are refused
			 * even when equal, so no parser on the path disagrees. */
			if (r->has_content_length || !parse_cl(f->value, f->value_len, &v))
				return MALFORMED;
			r->has_content_length = true;
			r->content_length = v;
		}
		if (r->nfields == cap)
			return MALFORMED;
		out[r->nfields++] = (struct h2_field){f->name, f->value, f->name_len, f->value_len};
	}
	return 0;
}

int h2_req_from_list(const struct hpack_list *l, struct h2_req *r, struct h2_field *out,
		     uint32_t cap)
{
	sk_memset(r, 0, sizeof(*r));
	uint32_t i = 0;
	for (; i < l->n_fields && l->fields[i].name_len && l->fields[i].name[0] == ':'; i++) {
		const struct hpack_field *f = &l->fields[i];
		struct h2_field *dst;
		if (eq(f->name, f->name_len, ":method"))
			dst = &r->method;
		else if (eq(f->name, f->name_len, ":scheme"))
			dst = &r->scheme;
		else if (eq(f->name, f->name_len, ":authority"))
			dst = &r->authority;
		else if (eq(f->name, f->name_len, ":path"))
			dst = &r->path;
		else
			return MALFORMED; /* 8.3: unknown, or a response's :status */
		if (dst->name)
			return MALFORMED; /* "MUST NOT ... more than once" */
		if (!value_ok(f->value, f->value_len))
			return MALFORMED;
		*dst = (struct h2_field){f->name, f->value, f->name_len, f->value_len};
	}
	int rc = regular(l, i, r, out, cap);
	if (rc)
		return rc;
	if (!r->method.name || r->method.value_len == 0)
		return MALFORMED;
	for (uint32_t k = 0; k < r->method.value_len; k++) {
		uint8_t b = r->method.value[k];
		if (b <= 0x20 || b >= 0x7f || b == '(' || b == ')' || b == ',' || b == '/' ||
		    b == ':' || b == ';' || b == '<' || b == '=' || b == '>' || b == '?' ||
		    b == '@' || b == '[' || b == '\\' || b == ']' || b == '{' || b == '}' || b == '"')
			return MALFORMED; /* a method is a token (RFC 9110 9.1) */
	}
	if (eq(r->method.value, r->method.value_len, "CONNECT")) {
		/* 8.5: :authority only; no :scheme, no :path. */
		if (r->scheme.name || r->path.name || !r->authority.name)
			return MALFORMED;
	} else {
		/* 8.3.1: :method, :scheme and :path, with a non-empty :path;
		 * for http and https it is "/..." or "*" (OPTIONS). */
		if (!r->scheme.name || !r->path.name || r->path.value_len == 0)
			return MALFORMED;
		bool web = eq(r->scheme.value, r->scheme.value_len, "http") ||
			   eq(r->scheme.value, r->scheme.value_len, "https");
		if (web && r->path.value[0] != '/' &&
		    !(eq(r->path.value, r->path.value_len, "*") &&
		      eq(r->method.value, r->method.value_len, "OPTIONS")))
			return MALFORMED;
		for (uint32_t k = 0; k < r->path.value_len; k++)
			if (r->path.value[k] <= 0x20 || r->path.value[k] >= 0x7f)
				return MALFORMED; /* the HTTP/1.1 target's bytes */
	}
	/* 8.3.1: a Host that names another entity than :authority. */
	for (uint32_t k = 0; k < r->nfields; k++) {
		const struct h2_field *f = &r->fields[k];
		if (!eq(f->name, f->name_len, "host"))
			continue;
		if (r->authority.name && (f->value_len != r->authority.value_len ||
					  sk_memcmp(f->value, r->authority.value, f->value_len)))
			return MALFORMED;
	}
	return 0;
}

int h2_trailers_from_list(const struct hpack_list *l, struct h2_req *r, struct h2_field *out,
			  uint32_t cap)
{
	sk_memset(r, 0, sizeof(*r));
	int rc = regular(l, 0, r, out, cap);
	if (rc)
		return rc;
	/* A content-length in trailers would re-frame a body already read. */
	return r->has_content_length ? MALFORMED : 0;
}

/* ---- the HTTP/1.1 head ---- */

struct w {
	uint8_t *p;
	size_t cap, n;
	bool short_;
};

static void put(struct w *w, const void *s, size_t n)
{
	if (w->short_ || w->cap - w->n < n) {
		w->short_ = true;
		return;
	}
	if (n)
		sk_memcpy(w->p + w->n, s, n);
	w->n += n;
}

static void puts_(struct w *w, const char *s) { put(w, s, __builtin_strlen(s)); }

size_t h2_req_to_h1(const struct h2_req *r, uint8_t *out, size_t cap)
{
	struct w w = {out, cap, 0, false};
	put(&w, r->method.value, r->method.value_len);
	puts_(&w, " ");
	if (r->path.name)
		put(&w, r->path.value, r->path.value_len);
	else
		put(&w, r->authority.value, r->authority.value_len); /* CONNECT */
	puts_(&w, " HTTP/1.1\r\n");
	bool host = false;
	for (uint32_t k = 0; k < r->nfields; k++)
		host |= eq(r->fields[k].name, r->fields[k].name_len, "host");
	if (!host && r->authority.name) {
		puts_(&w, "host: ");
		put(&w, r->authority.value, r->authority.value_len);
		puts_(&w, "\r\n");
	}
	bool cookie = false;
	for (uint32_t k = 0; k < r->nfields; k++) {
		const struct h2_field *f = &r->fields[k];
		if (eq(f->name, f->name_len, "cookie")) {
			if (cookie)
				continue;
			/* 8.2.3: crumbs are joined with "; " into one line. */
			cookie = true;
			puts_(&w, "cookie: ");
			bool first = true;
			for (uint32_t j = k; j < r->nfields; j++) {
				const struct h2_field *g = &r->fields[j];
				if (!eq(g->name, g->name_len, "cookie"))
					continue;
				if (!first)
					puts_(&w, "; ");
				first = false;
				put(&w, g->value, g->value_len);
			}
			puts_(&w, "\r\n");
			continue;
		}
		if (eq(f->name, f->name_len, "te"))
			continue; /* "trailers" means nothing to HTTP/1.1's handlers */
		put(&w, f->name, f->name_len);
		puts_(&w, ": ");
		put(&w, f->value, f->value_len);
		puts_(&w, "\r\n");
	}
	puts_(&w, "\r\n");
	return w.short_ ? 0 : w.n;
}
