/* prom.c — see prom.h. */
#include "prom.h"

#include "app.h"
#include "parser.h"

static void page_done(struct http_app_req *r, void *page, bool ok)
{
	(void)r, (void)ok;
	((struct prom_page *)page)->busy = false;
}

int prom_page_handle(struct http_app_req *r, void *page)
{
	struct prom_page *p = page;
	unsigned m = http_app_method(r);
	if (m != HTTP_GET && m != HTTP_HEAD) {
		http_app_header(r, "Allow", "GET, HEAD");
		return http_app_send(r, 405, NULL, 0);
	}
	if (p->busy)
		return http_app_send(r, 503, NULL, 0);
	struct prom_out o;
	prom_init(&o, p->buf, p->cap);
	p->stats(p->ctx, prom_stat, &o);
	p->busy = true;
	http_app_on_done(r, page_done, p);
	http_app_header(r, "Content-Type", PROM_CONTENT_TYPE);
	return http_app_send(r, 200, o.buf, o.len);
}

void prom_init(struct prom_out *o, char *buf, size_t cap)
{
	o->buf = buf;
	o->cap = cap;
	o->len = 0;
	o->truncated = false;
}

/* ---- appending: a line is built in a scratch buffer, then copied whole
 * or not at all, so a full buffer never ends inside a line ---- */

struct line {
	char b[512];
	size_t n;
	bool over;
};

static void l_str(struct line *l, const char *s)
{
	for (; *s; s++) {
		if (l->n + 1 >= sizeof(l->b)) {
			l->over = true;
			return;
		}
		l->b[l->n++] = *s;
	}
}

static void l_u64(struct line *l, uint64_t v)
{
	char d[20];
	int nd = 0;
	do {
		d[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char s[21];
	int k = 0;
	while (nd)
		s[k++] = d[--nd];
	s[k] = 0;
	l_str(l, s);
}

static void l_emit(struct prom_out *o, struct line *l)
{
	l_str(l, "\n");
	if (o->truncated || l->over || o->len + l->n > o->cap) {
		o->truncated = true;
		return;
	}
	sk_memcpy(o->buf + o->len, l->b, l->n);
	o->len += l->n;
}

/* ---- names ---- */

/* Whole tokens ('_'-separated) of a --stats name that Prometheus' rules
 * (promtool's lint) read as abbreviated units, and what they mean here:
 * "us" in not_for_us is this host; "ns" inside a name is ND's Neighbor
 * Solicitation; a final "ns" is nanoseconds, exported in seconds (the
 * base unit) by prom_stat. */
static const char *token_for(const char *t, size_t n, bool last, bool *in_ns)
{
	if (n == 2 && t[0] == 'u' && t[1] == 's')
		return "self";
	if (n == 2 && t[0] == 'n' && t[1] == 's') {
		if (last) {
			*in_ns = true;
			return "seconds";
		}
		return "solicit";
	}
	return NULL;
}

static size_t name_of(char *out, size_t cap, const char *stat, bool counter, bool *in_ns)
{
	static const char prefix[] = "skiff_";
	size_t n = 0;
	*in_ns = false;
	for (const char *p = prefix; *p; p++) {
		if (n + 1 >= cap)
			return 0;
		out[n++] = *p;
	}
	for (const char *p = stat; *p;) {
		/* One token: up to the next character that becomes '_'. */
		const char *q = p;
		while (*q && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			      (*q >= '0' && *q <= '9')))
			q++;
		const char *t = token_for(p, (size_t)(q - p), *q == 0, in_ns);
		size_t tl = t ? 0 : (size_t)(q - p);
		if (t)
			while (t[tl])
				tl++;
		if (n + tl + 1 >= cap)
			return 0;
		sk_memcpy(out + n, t ? t : p, tl);
		n += tl;
		if (*q) {
			out[n++] = '_';
			q++;
		}
		p = q;
	}
	if (counter) {
		/* A name that already ends in _total keeps one. */
		static const char total[] = "_total";
		size_t tl = sizeof(total) - 1;
		if (!(n >= tl && sk_memcmp(out + n - tl, total, tl) == 0)) {
			if (n + tl + 1 > cap)
				return 0;
			sk_memcpy(out + n, total, tl);
			n += tl;
		}
	}
	out[n] = 0;
	return n;
}

size_t prom_name(char *out, size_t cap, const char *stat, bool counter)
{
	bool in_ns;
	return name_of(out, cap, stat, counter, &in_ns);
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* The part after the first '.', or the whole name: "https.conns_open"
 * and "http.conns_open" are the same kind of value. */
static const char *after_dot(const char *s)
{
	for (const char *p = s; *p; p++)
		if (*p == '.')
			return p + 1;
	return s;
}

bool prom_stat_is_gauge(const char *name)
{
	/* Levels among the --stats values, by the name their layer gives
	 * them (http/app.c, net/iface.c, runner/spin.c, http/cache.c,
	 * net/tcp_api.c, uk/uk_main.c).  Everything else only ever grows. */
	static const char *const whole[] = {
		"arp.entries", "arp.pending", "nd.entries", "nd.pending", "ip6.addrs_usable",
		"loop.spin_budget_ns", "cache.bytes", "cache.entries", "tcp_mem_used", "tcp_mem_state",
		"tcp_pacing_rate_max",
		/* the unikernel's virtqueue indexes at this moment (uk/uk_main.c) */
		"virtio.tx_avail_idx", "virtio.tx_used_idx", "virtio.tx_last_used",
		"virtio.tx_avail_event", "virtio.tx_desc_free", "virtio.tx_unposted",
		"virtio.rx_used_idx", "virtio.rx_last_used", "virtio.rx_armed",
	};
	for (unsigned i = 0; i < SK_ARRAY_LEN(whole); i++)
		if (str_eq(name, whole[i]))
			return true;
	return str_eq(after_dot(name), "conns_open");
}

/* ---- metrics ---- */

static void header(struct prom_out *o, const char *pname, const char *type, const char *help1,
		   const char *help2)
{
	struct line l = {.n = 0};
	l_str(&l, "# HELP ");
	l_str(&l, pname);
	l_str(&l, " ");
	l_str(&l, help1);
	if (help2)
		l_str(&l, help2);
	l_emit(o, &l);
	l.n = 0;
	l_str(&l, "# TYPE ");
	l_str(&l, pname);
	l_str(&l, " ");
	l_str(&l, type);
	l_emit(o, &l);
}

void prom_stat(void *ctx, const char *name, uint64_t value)
{
	struct prom_out *o = ctx;
	bool gauge = prom_stat_is_gauge(name);
	char pname[160];
	bool in_ns;
	if (!name_of(pname, sizeof(pname), name, !gauge, &in_ns)) {
		o->truncated = true;
		return;
	}
	/* HELP texts cannot name more than the enumeration knows: point at
	 * the --stats line this is, where the layer documents it.  The names
	 * hold no '\\' or newline, the two characters HELP must escape. */
	header(o, pname, gauge ? "gauge" : "counter", "skiff --stats ", name);
	struct line l = {.n = 0};
	l_str(&l, pname);
	l_str(&l, " ");
	if (in_ns) {
		/* Nanoseconds as seconds, exactly: whole part, nine decimals. */
		l_u64(&l, value / SK_NS_PER_S);
		char frac[11] = ".000000000";
		uint64_t f = value % SK_NS_PER_S;
		for (int i = 9; i >= 1; i--, f /= 10)
			frac[i] = (char)('0' + f % 10);
		l_str(&l, frac);
	} else {
		l_u64(&l, value);
	}
	l_emit(o, &l);
}

void prom_hist(struct prom_out *o, const char *name, const char *unit, const char *help,
	       const struct sk_hist *h)
{
	char base[160];
	size_t n = prom_name(base, sizeof(base), name, false);
	size_t ul = 0;
	while (unit[ul])
		ul++;
	if (!n || n + 1 + ul + 1 > sizeof(base)) {
		o->truncated = true;
		return;
	}
	base[n++] = '_';
	sk_memcpy(base + n, unit, ul + 1);
	header(o, base, "histogram", help, NULL);
	/* Cumulative: walk the buckets once, in order, and report the running
	 * count at every power of two. */
	uint64_t cum = 0;
	uint32_t idx = 0;
	for (int k = PROM_HIST_K_MIN; k <= PROM_HIST_K_MAX; k++) {
		uint64_t bound = 1ull << k;
		while (idx < SK_HIST_BUCKETS && sk_hist_bucket_lo(idx) < bound)
			cum += h->b[idx++];
		struct line l = {.n = 0};
		l_str(&l, base);
		l_str(&l, "_bucket{le=\"");
		l_u64(&l, bound - 1);
		l_str(&l, "\"} ");
		l_u64(&l, cum);
		l_emit(o, &l);
	}
	struct line l = {.n = 0};
	l_str(&l, base);
	l_str(&l, "_bucket{le=\"+Inf\"} ");
	l_u64(&l, h->count);
	l_emit(o, &l);
	l.n = 0;
	l_str(&l, base);
	l_str(&l, "_sum ");
	l_u64(&l, h->sum);
	l_emit(o, &l);
	l.n = 0;
	l_str(&l, base);
	l_str(&l, "_count ");
	l_u64(&l, h->count);
	l_emit(o, &l);
}

/* ---- GET /metrics ---- */

int prom_route(struct http_req *r, const uint8_t *buf, size_t len, bool full, bool *head)
{
	*head = false;
	http_req_init(r, 0);
	int n = http_parse_head(r, buf, len);
	if (n == HTTP_NEED_MORE)
		return full ? 431 : 0;
	if (n < 0) {
		int st = http_err_status(n);
		return st ? st : 400;
	}
	if (r->method != HTTP_GET && r->method != HTTP_HEAD)
		return 405;
	*head = r->method == HTTP_HEAD;
	const uint8_t *t = buf + r->target.off;
	size_t tl = r->target.len;
	for (size_t i = 0; i < tl; i++)
		if (t[i] == '?') {
			tl = i; /* a query (Prometheus' params) changes nothing */
			break;
		}
	return tl == 8 && sk_memcmp(t, "/metrics", 8) == 0 ? 200 : 404;
}

const char *prom_status_body(int status)
{
	switch (status) {
	case 404: return "GET /metrics\n";
	case 405: return "GET /metrics (or HEAD)\n";
	case 431: return "request head too large\n";
	case 500: return "the counters did not fit the buffer\n";
	default: return "bad request\n";
	}
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 505: return "HTTP Version Not Supported";
	default: return "Bad Request";
	}
}

size_t prom_http_head(char *out, size_t cap, int status, size_t body_len)
{
	struct line l = {.n = 0};
	l_str(&l, "HTTP/1.1 ");
	l_u64(&l, (uint64_t)status);
	l_str(&l, " ");
	l_str(&l, reason(status));
	l_str(&l, "\r\nContent-Type: ");
	l_str(&l, status == 200 ? PROM_CONTENT_TYPE : "text/plain; charset=utf-8");
	l_str(&l, "\r\nContent-Length: ");
	l_u64(&l, body_len);
	if (status == 405)
		l_str(&l, "\r\nAllow: GET, HEAD");
	l_str(&l, "\r\nConnection: close\r\n\r\n");
	if (l.over || l.n > cap)
		return 0;
	sk_memcpy(out, l.b, l.n);
	return l.n;
}
