/* proxy_hdr.c — the head rewriting of proxy_hdr.h.  Every output byte
 * comes from a field the request or response parser already accepted, or
 * from our own constants, so no CR, LF or NUL can reach a line that the
 * parsers did not check. */
#include "proxy_hdr.h"

#include "emit.h"
#include "parser.h"

static uint8_t lower(uint8_t ch)
{
	return ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch;
}

bool proxy_name_is(const char *name, size_t nlen, const char *lit)
{
	size_t i = 0;
	for (; i < nlen; i++)
		if (!lit[i] || lower((uint8_t)name[i]) != (uint8_t)lit[i])
			return false;
	return lit[i] == 0;
}

static bool token_eq(const char *a, size_t al, const char *b, size_t bl)
{
	if (al != bl)
		return false;
	for (size_t i = 0; i < al; i++)
		if (lower((uint8_t)a[i]) != lower((uint8_t)b[i]))
			return false;
	return true;
}

static void tokens_add(struct proxy_conn_tokens *ct, const char *v, size_t vlen)
{
	size_t i = 0;
	while (i < vlen) {
		while (i < vlen && (v[i] == ',' || v[i] == ' ' || v[i] == '\t'))
			i++;
		size_t s = i;
		while (i < vlen && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
			i++;
		size_t len = i - s;
		if (!len)
			continue;
		if (len > 64) {
			ct->overflow = true;
			continue;
		}
		bool seen = false;
		for (unsigned k = 0; k < ct->n && !seen; k++)
			seen = token_eq(ct->t[k].p, ct->t[k].len, v + s, len);
		if (seen)
			continue;
		if (ct->n == PROXY_CONN_TOKENS) {
			ct->overflow = true;
			continue;
		}
		ct->t[ct->n].p = v + s;
		ct->t[ct->n].len = (uint8_t)len;
		ct->n++;
	}
}

void proxy_conn_tokens(struct proxy_conn_tokens *ct, const struct proxy_field *f, unsigned n)
{
	ct->n = 0;
	ct->overflow = false;
	for (unsigned i = 0; i < n; i++)
		if (proxy_name_is(f[i].name, f[i].nlen, "connection"))
			tokens_add(ct, f[i].value, f[i].vlen);
}

bool proxy_hop_by_hop(const char *name, size_t nlen, const struct proxy_conn_tokens *ct)
{
	static const char *const fixed[] = {"connection", "keep-alive", "te", "trailer",
					    "upgrade", "proxy-connection"};
	for (unsigned k = 0; k < SK_ARRAY_LEN(fixed); k++)
		if (proxy_name_is(name, nlen, fixed[k]))
			return true;
	/* Proxy-*: Proxy-Authorization, Proxy-Authenticate, Proxy-Connection,
	 * and the Proxy header of httpoxy (CVE-2016-5385) */
	if (nlen >= 5 && proxy_name_is(name, 5, "proxy"))
		return true;
	if (ct)
		for (unsigned k = 0; k < ct->n; k++)
			if (token_eq(name, nlen, ct->t[k].p, ct->t[k].len))
				return true;
	return false;
}

static bool framing(const char *name, size_t nlen)
{
	return proxy_name_is(name, nlen, "content-length") ||
	       proxy_name_is(name, nlen, "transfer-encoding");
}

bool proxy_te_ok(const char *v, size_t vlen)
{
	return token_eq(v, vlen, "chunked", 7);
}

bool proxy_idempotent(unsigned method)
{
	switch (method) {
	case HTTP_GET:
	case HTTP_HEAD:
	case HTTP_PUT:
	case HTTP_DELETE:
	case HTTP_OPTIONS:
	case HTTP_TRACE:
		return true;
	default:
		return false;
	}
}

static void put_hex16(struct http_out *o, unsigned v)
{
	static const char hx[] = "0123456789abcdef";
	char b[4];
	int n = 0;
	for (int sh = 12; sh >= 0; sh -= 4)
		if ((v >> sh) || n || sh == 0)
			b[n++] = hx[(v >> sh) & 15];
	http_out_mem(o, b, (size_t)n);
}

size_t proxy_format_addr(const struct sk_addr *a, char out[40])
{
	struct http_out o = {(uint8_t *)out, (uint8_t *)out + 39};
	if (sk_addr_is_v4(a)) {
		uint32_t ip = sk_addr_ip4(a);
		for (int i = 3; i >= 0; i--) {
			http_out_u64(&o, (ip >> (8 * i)) & 255u);
			if (i)
				http_out_str(&o, ".");
		}
	} else {
		/* Groups uncompressed (a valid RFC 4291 form) */
		for (int i = 0; i < 8; i++) {
			if (i)
				http_out_str(&o, ":");
			put_hex16(&o, (unsigned)a->b[2 * i] << 8 | a->b[2 * i + 1]);
		}
	}
	size_t n = (size_t)(o.p - (uint8_t *)out);
	out[n] = 0;
	return n;
}

/* The values of every line named `lit`, joined with ", " (RFC 9110 5.3). */
static void put_joined(struct http_out *o, const struct proxy_field *f, unsigned n,
		       const char *lit)
{
	bool first = true;
	for (unsigned i = 0; i < n; i++) {
		if (!proxy_name_is(f[i].name, f[i].nlen, lit) || f[i].vlen == 0)
			continue;
		if (!first)
			http_out_str(o, ", ");
		http_out_mem(o, f[i].value, f[i].vlen);
		first = false;
	}
	if (!first)
		http_out_str(o, ", ");
}

long proxy_req_head(uint8_t *out, size_t cap, const struct proxy_req_info *ri,
		    const struct proxy_field *f, unsigned n)
{
	struct proxy_conn_tokens ct;
	proxy_conn_tokens(&ct, f, n);
	if (ct.overflow)
		return -SK_EINVAL;
	struct http_out o = {out, out + cap};
	http_out_mem(&o, ri->method, ri->mlen);
	http_out_str(&o, " ");
	http_out_mem(&o, ri->target, ri->tlen);
	http_out_str(&o, " HTTP/1.1\r\n");
	bool host = false;
	unsigned lines = 4; /* X-Forwarded-For, -Proto, Via, framing */
	for (unsigned i = 0; i < n && !host && !ri->host_replace; i++)
		host = proxy_name_is(f[i].name, f[i].nlen, "host");
	if (!host) {
		lines++;
		http_out_str(&o, "Host: ");
		http_out_str(&o, ri->host);
		http_out_str(&o, "\r\n");
	}
	for (unsigned i = 0; i < n; i++) {
		const char *nm = f[i].name;
		size_t nl = f[i].nlen;
		if (proxy_hop_by_hop(nm, nl, &ct) || framing(nm, nl) ||
		    proxy_name_is(nm, nl, "expect") || proxy_name_is(nm, nl, "x-forwarded-for") ||
		    proxy_name_is(nm, nl, "x-forwarded-proto") || proxy_name_is(nm, nl, "via") ||
		    (ri->host_replace && proxy_name_is(nm, nl, "host")))
			continue;
		/* An origin as strict as our parser takes HTTP_MAX_FIELDS lines */
		if (++lines > HTTP_MAX_FIELDS)
			return -SK_ENOBUFS;
		http_out_mem(&o, nm, nl);
		http_out_str(&o, ": ");
		http_out_mem(&o, f[i].value, f[i].vlen);
		http_out_str(&o, "\r\n");
	}
	char ab[40];
	size_t al = proxy_format_addr(ri->client, ab);
	http_out_str(&o, "X-Forwarded-For: ");
	put_joined(&o, f, n, "x-forwarded-for");
	http_out_mem(&o, ab, al);
	http_out_str(&o, "\r\nX-Forwarded-Proto: ");
	http_out_str(&o, ri->proto);
	http_out_str(&o, "\r\nVia: ");
	put_joined(&o, f, n, "via");
	http_out_str(&o, ri->version >= 11 ? "1.1 " : "1.0 ");
	http_out_str(&o, ri->via);
	http_out_str(&o, "\r\n");
	if (ri->body == PROXY_BODY_CHUNKED) {
		http_out_str(&o, "Transfer-Encoding: chunked\r\n");
	} else if (ri->body != PROXY_BODY_NONE) {
		http_out_str(&o, "Content-Length: ");
		http_out_u64(&o, ri->body);
		http_out_str(&o, "\r\n");
	}
	http_out_str(&o, "\r\n");
	/* http_out saturates at end: a head that reaches it may be cut */
	if (o.p >= o.end)
		return -SK_ENOBUFS;
	return (long)(o.p - out);
}

bool proxy_head_field(const uint8_t *head, size_t len, size_t *pos, struct proxy_field *f)
{
	size_t p = *pos;
	if (p == 0) {
		while (p + 1 < len && !(head[p] == '\r' && head[p + 1] == '\n'))
			p++;
		p += 2;
	}
	if (p + 1 >= len || (head[p] == '\r' && head[p + 1] == '\n')) {
		*pos = len;
		return false;
	}
	size_t ns = p;
	while (p < len && head[p] != ':')
		p++;
	f->name = (const char *)head + ns;
	f->nlen = p - ns;
	p++;
	while (p < len && (head[p] == ' ' || head[p] == '\t'))
		p++;
	size_t vs = p;
	while (p + 1 < len && !(head[p] == '\r' && head[p + 1] == '\n'))
		p++;
	size_t ve = p;
	while (ve > vs && (head[ve - 1] == ' ' || head[ve - 1] == '\t'))
		ve--;
	f->value = (const char *)head + vs;
	f->vlen = ve - vs;
	*pos = p + 2;
	return true;
}

bool proxy_resp_keep(const struct proxy_field *f, const struct proxy_conn_tokens *ct)
{
	return !proxy_hop_by_hop(f->name, f->nlen, ct) && !framing(f->name, f->nlen) &&
	       !proxy_name_is(f->name, f->nlen, "date");
}
