/* sites_conf.c — the configuration file's parser (see sites_conf.h).
 *
 * Three stages, one pass over the text:
 *   lexer       next_tok: words, quoted strings (decoded into the arena),
 *               ';', '{', '}', the end; every token with its line:column
 *   statements  read_stmt: a directive's name, its arguments and what
 *               ended it (';', '{', '}' or the end of the file); then the
 *               directive's handler, found in one table by name and
 *               context, checks the arguments one by one and says where
 *               the ';' belongs when words follow that it does not take
 *   meaning     a route is checked when it closes (one handler, only its
 *               options); the sites and listeners after the whole file
 *               (every site has a listener and a route, tls listeners have
 *               certificates, a name once and one default per listener)
 *
 * Memory: the sites array first (as many as the file has 'site' words, at
 * most SCONF_MAX_SITES: a pre-pass counts them), then every string.  No
 * libc: base/sk.h's mem* builtins and opts.c's address parsers only. */
#include "sites_conf.h"

#include <stdarg.h>

#include "opts.h"

/* ---- the lexer ---- */

enum tok_kind { T_EOF, T_WORD, T_STR, T_SEMI, T_LBRACE, T_RBRACE };

struct tok {
	uint8_t kind;
	const char *s;       /* WORD: in the text; STR: decoded, in the arena (NUL-terminated) */
	size_t n;
	struct sconf_pos pos; /* the first byte */
	struct sconf_pos end; /* just after the last byte */
};

#define ARGS_MAX 16u

struct stmt {
	struct tok name;
	struct tok arg[ARGS_MAX];
	unsigned nargs;
	struct tok end;   /* T_SEMI, T_LBRACE, T_RBRACE or T_EOF */
	unsigned shown;   /* how many arguments %D prints */
};

/* A route's options: each given at most once, and only in a route of
 * its handler's kind (route_opts below says which). */
enum { RO_CACHE_CONTROL, RO_CACHE, RO_PROXY_HOST, RO_BODY_ON_GET, RO_BALANCE, RO_POOL,
       RO_CONNECT_TIMEOUT, RO_FIRST_BYTE_TIMEOUT, RO_UPSTREAM_IDLE_TIMEOUT, RO_FAIL_MAX,
       RO_FAIL_TIMEOUT, RO_X_CACHE, RO_PURGE_ALLOW, RO_N };

/* The route being parsed: what is needed to check it when it closes. */
struct route_state {
	struct sconf_pos handler;   /* line 0: none yet */
	const char *handler_name;
	struct sconf_pos opt[RO_N]; /* where each option was given (line 0: not) */
	struct sconf_pos header_area; /* any handler's */
};

/* Top-level directives given once: where each was first. */
enum { TOP_WORKERS, TOP_MAX_CONNS, TOP_HTTP2_SESSIONS, TOP_MAX_BODY, TOP_HEADER_TIMEOUT,
       TOP_BODY_TIMEOUT, TOP_SEND_TIMEOUT, TOP_KEEPALIVE_TIMEOUT, TOP_ACCESS_LOG, TOP_ERROR_LOG,
       TOP_HEADER_AREA, TOP_N };

struct parser {
	const char *text;
	size_t len, i;
	uint32_t line, col;
	bool decode;          /* false in the pre-pass: strings are skipped, not copied */
	char *arena;
	size_t asize, aused;
	const char *dir;
	size_t dirlen;
	struct sconf *c;
	struct sconf_err *err;
	unsigned site_cap;
	struct sconf_pos top_given[TOP_N];
	/* the site being parsed */
	struct sconf_site *site;
	struct sconf_pos site_tls, site_default;
	struct sconf_pos site_listen[SCONF_MAX_LISTEN]; /* this site's listen of listener i */
	struct route_state rs;
	struct sconf_route *route;
};

/* ---- messages ---- */

struct mbuf {
	char *b;
	size_t n, cap; /* cap includes the NUL */
};

static void mb_c(struct mbuf *m, char ch)
{
	if (m->n + 1 < m->cap)
		m->b[m->n++] = ch;
	m->b[m->n] = 0;
}

static void mb_s(struct mbuf *m, const char *s)
{
	while (*s)
		mb_c(m, *s++);
}

static void mb_u(struct mbuf *m, uint64_t v)
{
	char d[24];
	int k = 0;
	do {
		d[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k)
		mb_c(m, d[--k]);
}

/* Bytes from the file, printable: others as \xHH; at most 60, then "...". */
static void mb_text(struct mbuf *m, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		if (i == 60) {
			mb_s(m, "...");
			return;
		}
		uint8_t ch = (uint8_t)s[i];
		if (ch >= 0x20 && ch < 0x7f) {
			mb_c(m, (char)ch);
		} else {
			mb_s(m, "\\x");
			mb_c(m, hex[ch >> 4]);
			mb_c(m, hex[ch & 15]);
		}
	}
}

static void mb_tok(struct mbuf *m, const struct tok *t)
{
	switch (t->kind) {
	case T_EOF: mb_s(m, "the end of the file"); return;
	case T_SEMI: mb_s(m, "';'"); return;
	case T_LBRACE: mb_s(m, "'{'"); return;
	case T_RBRACE: mb_s(m, "'}'"); return;
	case T_STR: mb_s(m, "'\""); mb_text(m, t->s, t->n); mb_s(m, "\"'"); return;
	default: mb_c(m, '\''); mb_text(m, t->s, t->n); mb_c(m, '\''); return;
	}
}

static void mb_pos(struct mbuf *m, struct sconf_pos p)
{
	mb_u(m, p.line);
	mb_c(m, ':');
	mb_u(m, p.col);
}

/* The format: %s a C string, %S (const char *, size_t) file bytes, %u
 * unsigned, %X a byte as 0xHH, %U uint64_t, %P a struct sconf_pos as LINE:COL, %T a token as
 * 'text' (or ';', the end of the file...), %D a statement's name and its
 * first st->shown arguments, %%. */
static int fail(struct parser *p, struct sconf_pos pos, const char *fmt, ...)
{
	struct mbuf m = {p->err->msg, 0, sizeof(p->err->msg)};
	m.b[0] = 0;
	p->err->pos = pos;
	va_list ap;
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (*f != '%' || !f[1]) {
			mb_c(&m, *f);
			continue;
		}
		switch (*++f) {
		case 's': mb_s(&m, va_arg(ap, const char *)); break;
		case 'S': {
			const char *s = va_arg(ap, const char *);
			mb_text(&m, s, va_arg(ap, size_t));
			break;
		}
		case 'u': mb_u(&m, va_arg(ap, unsigned)); break;
		case 'X': {
			unsigned v = va_arg(ap, unsigned);
			mb_s(&m, "0x");
			mb_c(&m, "0123456789abcdef"[(v >> 4) & 15]);
			mb_c(&m, "0123456789abcdef"[v & 15]);
			break;
		}
		case 'U': mb_u(&m, va_arg(ap, uint64_t)); break;
		case 'P': mb_pos(&m, va_arg(ap, struct sconf_pos)); break;
		case 'T': mb_tok(&m, va_arg(ap, const struct tok *)); break;
		case 'D': {
			const struct stmt *st = va_arg(ap, const struct stmt *);
			mb_text(&m, st->name.s, st->name.n);
			for (unsigned i = 0; i < st->shown && i < st->nargs; i++) {
				mb_c(&m, ' ');
				if (st->arg[i].kind == T_STR)
					mb_c(&m, '"');
				mb_text(&m, st->arg[i].s, st->arg[i].n);
				if (st->arg[i].kind == T_STR)
					mb_c(&m, '"');
			}
			break;
		}
		default: mb_c(&m, *f); break;
		}
	}
	va_end(ap);
	return -1;
}

/* ---- the arena ---- */

static char *arena_take(struct parser *p, size_t n, struct sconf_pos pos)
{
	if (n > p->asize - p->aused) {
		fail(p, pos, "the configuration needs more memory than the %U bytes given "
			     "(sites_conf_arena_bound)", (uint64_t)p->asize);
		return NULL;
	}
	char *r = p->arena + p->aused;
	p->aused += n;
	return r;
}

/* The token as a NUL-terminated string in the arena (a quoted string is
 * there already). */
static const char *tok_cstr(struct parser *p, const struct tok *t)
{
	if (t->kind == T_STR)
		return t->s;
	char *s = arena_take(p, t->n + 1, t->pos);
	if (!s)
		return NULL;
	sk_memcpy(s, t->s, t->n);
	s[t->n] = 0;
	return s;
}

/* ---- lexing ---- */

static void adv(struct parser *p)
{
	if (p->text[p->i] == '\n') {
		p->line++;
		p->col = 1;
	} else {
		p->col++;
	}
	p->i++;
}

static struct sconf_pos here(const struct parser *p)
{
	return (struct sconf_pos){p->line, p->col};
}

static bool is_ctl(uint8_t ch)
{
	return ch < 0x20 || ch == 0x7f;
}

static bool is_space(uint8_t ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static bool is_word_byte(uint8_t ch)
{
	return !is_space(ch) && !is_ctl(ch) && ch != ';' && ch != '{' && ch != '}' && ch != '"' &&
	       ch != '#';
}

static int next_tok(struct parser *p, struct tok *t)
{
	while (p->i < p->len) {
		uint8_t ch = (uint8_t)p->text[p->i];
		if (is_space(ch)) {
			adv(p);
		} else if (ch == '#') {
			while (p->i < p->len && p->text[p->i] != '\n')
				adv(p);
		} else {
			break;
		}
	}
	t->pos = here(p);
	t->s = p->text + p->i;
	t->n = 0;
	if (p->i >= p->len) {
		t->kind = T_EOF;
		t->end = t->pos;
		return 0;
	}
	uint8_t ch = (uint8_t)p->text[p->i];
	if (ch == ';' || ch == '{' || ch == '}') {
		t->kind = ch == ';' ? T_SEMI : ch == '{' ? T_LBRACE : T_RBRACE;
		t->n = 1;
		adv(p);
		t->end = here(p);
		return 0;
	}
	if (ch == '"') {
		t->kind = T_STR;
		adv(p);
		/* Decoded into the arena's free space; taken at the end. */
		char *out = p->decode && p->arena ? p->arena + p->aused : NULL;
		size_t room = out ? p->asize - p->aused : 0, k = 0;
		for (;;) {
			if (p->i >= p->len || p->text[p->i] == '\n')
				return fail(p, t->pos, "the quoted string has no closing '\"' on its line");
			uint8_t c = (uint8_t)p->text[p->i];
			struct sconf_pos cp = here(p);
			if (c == '"') {
				adv(p);
				break;
			}
			if (c == '\\') {
				if (p->i + 1 >= p->len || p->text[p->i + 1] == '\n')
					return fail(p, t->pos,
						    "the quoted string has no closing '\"' on its line");
				uint8_t e = (uint8_t)p->text[p->i + 1];
				if (e == '"' || e == '\\')
					c = e;
				else if (e == 'n')
					c = '\n';
				else if (e == 't')
					c = '\t';
				else if (is_ctl(e) || e >= 0x7f)
					return fail(p, cp, "unknown escape in a quoted string (expected "
							   "\\\" \\\\ \\n or \\t)");
				else
					return fail(p, cp, "unknown escape '\\%S' in a quoted string "
							   "(expected \\\" \\\\ \\n or \\t)",
						    p->text + p->i + 1, (size_t)1);
				adv(p);
				adv(p);
			} else if (is_ctl(c)) {
				return fail(p, cp, "a control byte (%X) in a quoted string: write \\n or "
						   "\\t for a newline or a tab", (unsigned)c);
			} else {
				adv(p);
			}
			if (p->decode) {
				if (k + 1 >= room)
					return fail(p, t->pos, "the configuration needs more memory than "
							       "the %U bytes given (sites_conf_arena_bound)",
						    (uint64_t)p->asize);
				out[k] = (char)c;
			}
			k++;
		}
		t->end = here(p);
		if (p->decode) {
			out[k] = 0;
			p->aused += k + 1;
			t->s = out;
		}
		t->n = k;
		return 0;
	}
	if (is_ctl(ch))
		return fail(p, t->pos, "a control byte (%X) where a word was expected", (unsigned)ch);
	t->kind = T_WORD;
	while (p->i < p->len && is_word_byte((uint8_t)p->text[p->i]))
		adv(p);
	t->n = (size_t)(p->text + p->i - t->s);
	t->end = here(p);
	return 0;
}

/* ---- small helpers ---- */

static bool tok_is(const struct tok *t, const char *w)
{
	size_t n = 0;
	while (w[n])
		n++;
	return (t->kind == T_WORD || t->kind == T_STR) && t->n == n && sk_memcmp(t->s, w, n) == 0;
}

static bool seq_n(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && sk_memcmp(a, b, an) == 0;
}

static bool cstreq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* The C string a equals s[0, n). */
static bool cstreq_n(const char *a, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && a[i] && a[i] == s[i])
		i++;
	return i == n && a[i] == 0;
}

static char lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
}

static bool ieq_n(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

static bool pos_set(struct sconf_pos p)
{
	return p.line != 0;
}

/* The statement ends after its first `used` arguments with ';'. */
static int end_simple(struct parser *p, struct stmt *st, unsigned used)
{
	st->shown = used;
	struct sconf_pos at = used ? st->arg[used - 1].end : st->name.end;
	if (st->nargs > used)
		return fail(p, at, "expected ';' after '%D' (found %T)", st, &st->arg[used]);
	if (st->end.kind != T_SEMI)
		return fail(p, at, "expected ';' after '%D' (found %T)", st, &st->end);
	return 0;
}

/* The statement ends after its first `used` arguments with '{'. */
static int end_block(struct parser *p, struct stmt *st, unsigned used)
{
	st->shown = used;
	struct sconf_pos at = used ? st->arg[used - 1].end : st->name.end;
	if (st->nargs > used)
		return fail(p, at, "expected '{' after '%D' (found %T)", st, &st->arg[used]);
	if (st->end.kind != T_LBRACE)
		return fail(p, at, "expected '{' after '%D' (found %T)", st, &st->end);
	return 0;
}

/* Argument i, or a message naming what was expected there. */
static const struct tok *need_arg(struct parser *p, struct stmt *st, unsigned i, const char *what,
				  const char *usage)
{
	if (i < st->nargs)
		return &st->arg[i];
	st->shown = i;
	fail(p, st->end.pos, "expected %s after '%D' (%s), found %T", what, st, usage,
	     i < st->nargs ? &st->arg[i] : &st->end);
	return NULL;
}

static int twice(struct parser *p, struct stmt *st, struct sconf_pos *first, const char *where)
{
	if (pos_set(*first))
		return fail(p, st->name.pos, "'%S' is given twice%s (first at %P)", st->name.s,
			    st->name.n, where, *first);
	*first = st->name.pos;
	return 0;
}

/* ---- values ---- */

static int parse_dec(const char *s, size_t n, uint64_t *v)
{
	if (!n || n > 19)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return 0;
}

/* N in [lo, hi]. */
static int arg_num(struct parser *p, const struct tok *t, const struct stmt *st, uint64_t lo,
		   uint64_t hi, uint64_t *v)
{
	if (parse_dec(t->s, t->n, v) < 0)
		return fail(p, t->pos, "'%S' takes a number, not %T", st->name.s, st->name.n, t);
	if (*v < lo || *v > hi)
		return fail(p, t->pos, "'%S %S': out of range (%U..%U)", st->name.s, st->name.n,
			    t->s, t->n, lo, hi);
	return 0;
}

/* SIZE: digits with an optional k, m or g (x 1024^n), in [lo, hi]. */
static int arg_size(struct parser *p, const struct tok *t, const struct stmt *st, uint64_t lo,
		    uint64_t hi, uint64_t *v)
{
	size_t n = t->n;
	unsigned shift = 0;
	if (n > 1) {
		char u = lower(t->s[n - 1]);
		shift = u == 'k' ? 10 : u == 'm' ? 20 : u == 'g' ? 30 : 0;
		if (shift)
			n--;
	}
	uint64_t x;
	if (parse_dec(t->s, n, &x) < 0)
		return fail(p, t->pos, "'%S' takes a size (123, 64k, 1m, 2g), not %T", st->name.s,
			    st->name.n, t);
	if (x > (hi >> shift))
		return fail(p, t->pos, "'%S %S': too large (at most %U bytes)", st->name.s, st->name.n,
			    t->s, t->n, hi);
	x <<= shift;
	if (x < lo)
		return fail(p, t->pos, "'%S %S': too small (at least %U bytes)", st->name.s,
			    st->name.n, t->s, t->n, lo);
	*v = x;
	return 0;
}

/* TIME: digits with ms, s, m or h (a bare number: seconds), 1 ms..24 h. */
static int arg_time(struct parser *p, const struct tok *t, const struct stmt *st, sk_time_ns *v)
{
	size_t n = t->n;
	uint64_t unit = SK_NS_PER_S;
	if (n > 2 && t->s[n - 2] == 'm' && t->s[n - 1] == 's')
		unit = SK_NS_PER_MS, n -= 2;
	else if (n > 1 && t->s[n - 1] == 's')
		n--;
	else if (n > 1 && t->s[n - 1] == 'm')
		unit = 60 * SK_NS_PER_S, n--;
	else if (n > 1 && t->s[n - 1] == 'h')
		unit = 3600 * SK_NS_PER_S, n--;
	uint64_t x;
	if (parse_dec(t->s, n, &x) < 0)
		return fail(p, t->pos, "'%S' takes a time (500ms, 10s, 2m, 1h), not %T", st->name.s,
			    st->name.n, t);
	const uint64_t max = 86400 * SK_NS_PER_S;
	if (x > max / unit || x * unit > max)
		return fail(p, t->pos, "'%S %S': too long (at most 24h)", st->name.s, st->name.n, t->s,
			    t->n);
	if (x == 0)
		return fail(p, t->pos, "'%S %S': a time must be at least 1ms", st->name.s, st->name.n,
			    t->s, t->n);
	*v = x * unit;
	return 0;
}

/* A path, joined with the file's folder when relative. */
static int arg_path(struct parser *p, const struct tok *t, const struct stmt *st, const char **out)
{
	if (t->n == 0)
		return fail(p, t->pos, "'%S' takes a path, not an empty string", st->name.s,
			    st->name.n);
	for (size_t i = 0; i < t->n; i++)
		if (is_ctl((uint8_t)t->s[i]))
			return fail(p, t->pos, "a path cannot hold control bytes: %T", t);
	bool rel = t->s[0] != '/' && p->dirlen > 0;
	size_t total = t->n + (rel ? p->dirlen + 1 : 0);
	if (total > SCONF_PATH_MAX)
		return fail(p, t->pos, "path %T is too long (at most %u bytes with the file's folder)",
			    t, SCONF_PATH_MAX);
	if (!rel) {
		*out = tok_cstr(p, t);
		return *out ? 0 : -1;
	}
	char *s = arena_take(p, total + 1, t->pos);
	if (!s)
		return -1;
	size_t k = p->dirlen;
	sk_memcpy(s, p->dir, k);
	if (s[k - 1] != '/')
		s[k++] = '/';
	else
		total--;
	sk_memcpy(s + k, t->s, t->n);
	s[total] = 0;
	*out = s;
	return 0;
}

/* A DNS name (letters, digits, '-', '.'; labels of 1..63; at most 253),
 * optionally "*." before; lower-cased into the arena. */
static int arg_name(struct parser *p, const struct tok *t, const char **out)
{
	const char *s = t->s;
	size_t n = t->n, i = 0;
	if (n >= 2 && s[0] == '*' && s[1] == '.')
		i = 2;
	if (n == i)
		return fail(p, t->pos, "expected a site name (a.test, *.a.test), found %T", t);
	if (n > SCONF_NAME_MAX)
		return fail(p, t->pos, "site name %T is too long (at most %u bytes)", t,
			    SCONF_NAME_MAX);
	size_t label = 0;
	for (; i < n; i++) {
		char ch = s[i];
		if (ch == '.') {
			if (label == 0 || i + 1 == n)
				return fail(p, t->pos, "site name %T has an empty label%s", t,
					    i + 1 == n && label ? " (no trailing '.')" : "");
			if (s[i - 1] == '-')
				return fail(p, t->pos, "site name %T: a label cannot end with '-'", t);
			label = 0;
			continue;
		}
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '-';
		if (!ok) {
			if (ch == '*')
				return fail(p, t->pos, "site name %T: '*' only as the whole first label "
						       "('*.example.com')", t);
			return fail(p, t->pos, "site name %T: only letters, digits, '-' and '.' (a DNS "
					       "name, or '*.' and one)", t);
		}
		if (ch == '-' && label == 0)
			return fail(p, t->pos, "site name %T: a label cannot start with '-'", t);
		if (++label > 63)
			return fail(p, t->pos, "site name %T: a label is longer than 63 bytes", t);
	}
	if (s[n - 1] == '-')
		return fail(p, t->pos, "site name %T: a label cannot end with '-'", t);
	char *c = arena_take(p, n + 1, t->pos);
	if (!c)
		return -1;
	for (i = 0; i < n; i++)
		c[i] = lower(s[i]);
	c[n] = 0;
	*out = c;
	return 0;
}

/* ADDR:PORT: A.B.C.D:PORT, [IPv6]:PORT, or (listen only) *:PORT. */
static int arg_addr(struct parser *p, const struct tok *t, bool listen, struct sk_addr *a,
		    uint16_t *port, bool *any, bool *v6)
{
	const char *s = t->s;
	size_t n = t->n, hn; /* the host part: s[0, hn) */
	const char *what = listen ? "an address literal (A.B.C.D:PORT, [IPv6]:PORT or *:PORT)"
				  : "an address literal (A.B.C.D:PORT or [IPv6]:PORT)";
	*any = *v6 = false;
	sk_memset(a, 0, sizeof(*a));
	char buf[48];
	if (n && s[0] == '[') {
		size_t e = 1;
		while (e < n && s[e] != ']')
			e++;
		if (e == n || e - 1 >= sizeof(buf))
			return fail(p, t->pos, "expected %s, found %T", what, t);
		sk_memcpy(buf, s + 1, e - 1);
		buf[e - 1] = 0;
		uint8_t b[16];
		if (opt_parse_ipv6(buf, b) < 0)
			return fail(p, t->pos, "%T: '%S' is not an IPv6 address", t, buf, e - 1);
		*a = sk_addr_v6(b);
		*v6 = true;
		if (sk_addr_is_any(a)) {
			if (!listen)
				return fail(p, t->pos, "%T: an upstream needs an address, not [::]", t);
			*any = true;
		} else if (b[0] == 0xff) {
			return fail(p, t->pos, "%T: a multicast address", t);
		}
		hn = e + 1;
	} else if (n >= 1 && s[0] == '*') {
		if (!listen)
			return fail(p, t->pos, "%T: an upstream needs an address, not '*'", t);
		*any = true;
		hn = 1;
	} else {
		hn = 0;
		unsigned colons = 0;
		for (size_t i = 0; i < n; i++)
			colons += s[i] == ':';
		if (colons > 1)
			return fail(p, t->pos, "%T: an IPv6 address goes in brackets ([::1]:8080)", t);
		while (hn < n && s[hn] != ':')
			hn++;
		bool v4chars = hn > 0;
		for (size_t i = 0; i < hn; i++)
			v4chars = v4chars && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.');
		uint32_t ip;
		if (!v4chars || hn >= 16)
			return fail(p, t->pos, "expected %s, found %T (names are not resolved)", what, t);
		sk_memcpy(buf, s, hn);
		buf[hn] = 0;
		if (opt_parse_ipv4(buf, &ip) < 0)
			return fail(p, t->pos, "%T: '%S' is not an IPv4 address", t, s, hn);
		if (ip != 0 && !opt_ipv4_is_host(ip))
			return fail(p, t->pos, "%T: not a host address (multicast or class E)", t);
		if (ip == 0 && !listen)
			return fail(p, t->pos, "%T: an upstream needs an address, not 0.0.0.0", t);
		*a = sk_addr_v4(ip);
	}
	if (hn >= n || s[hn] != ':')
		return fail(p, t->pos, "expected ':PORT' after the address in %T", t);
	uint64_t v;
	if (parse_dec(s + hn + 1, n - hn - 1, &v) < 0 || v < 1 || v > 65535)
		return fail(p, t->pos, "%T: the port must be a number in 1..65535", t);
	*port = (uint16_t)v;
	return 0;
}

static bool is_tchar(char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
		return true;
	for (const char *q = "!#$%&'*+-.^_`|~"; *q; q++)
		if (*q == ch)
			return true;
	return false;
}

/* Printable ASCII only (VCHAR), plus SP and HTAB when `spaces`. */
static bool text_ok(const char *s, size_t n, bool spaces)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = (uint8_t)s[i];
		if (ch == ' ' || ch == '\t') {
			if (!spaces)
				return false;
		} else if (ch < 0x21 || ch > 0x7e) {
			return false;
		}
	}
	return true;
}

/* ---- directives ---- */

enum { C_TOP = 1, C_SITE = 2, C_ROUTE = 4 };

struct dir_def {
	const char *name;
	uint8_t ctx;
	int (*fn)(struct parser *p, struct stmt *st);
};

static int top_num(struct parser *p, struct stmt *st, int id, uint64_t lo, uint64_t hi,
		   uint64_t *v)
{
	if (twice(p, st, &p->top_given[id], "") < 0)
		return -1;
	const char *use = id == TOP_WORKERS ? "workers N;"
			  : id == TOP_HTTP2_SESSIONS ? "http2_sessions N;" : "max_conns N;";
	const struct tok *t = need_arg(p, st, 0, "a number", use);
	if (!t || arg_num(p, t, st, lo, hi, v) < 0)
		return -1;
	return end_simple(p, st, 1);
}

/* workers N|auto;  auto: one per core the process may run on. */
static int d_workers(struct parser *p, struct stmt *st)
{
	uint64_t v;
	if (st->nargs == 1 && st->arg[0].kind == T_WORD && tok_is(&st->arg[0], "auto")) {
		if (twice(p, st, &p->top_given[TOP_WORKERS], "") < 0)
			return -1;
		p->c->workers = SCONF_WORKERS_AUTO;
		return end_simple(p, st, 1);
	}
	if (top_num(p, st, TOP_WORKERS, 1, 64, &v) < 0)
		return -1;
	p->c->workers = (uint32_t)v;
	return 0;
}

static int d_max_conns(struct parser *p, struct stmt *st)
{
	uint64_t v;
	if (top_num(p, st, TOP_MAX_CONNS, 1, 1000000, &v) < 0)
		return -1;
	p->c->max_conns = (uint32_t)v;
	return 0;
}

static int d_http2_sessions(struct parser *p, struct stmt *st)
{
	uint64_t v;
	if (top_num(p, st, TOP_HTTP2_SESSIONS, 1, SCONF_HTTP2_SESSIONS_MAX, &v) < 0)
		return -1;
	p->c->http2_sessions = (uint32_t)v;
	return 0;
}

static int d_max_body(struct parser *p, struct stmt *st)
{
	if (twice(p, st, &p->top_given[TOP_MAX_BODY], "") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "a size", "max_body SIZE;");
	/* 1: zero in the model means "not given" (the default). */
	if (!t || arg_size(p, t, st, 1, 1ull << 40, &p->c->max_body) < 0)
		return -1;
	return end_simple(p, st, 1);
}

/* The engine's area per answer is 256 bytes at least (its own lines need
 * none of it) and 64 KiB at most (it is reserved per connection). */
#define SCONF_HEADER_AREA_MIN 256u
#define SCONF_HEADER_AREA_MAX 65536u

static int header_area(struct parser *p, struct stmt *st, struct sconf_pos *given,
		       const char *where, uint32_t *out)
{
	if (twice(p, st, given, where) < 0)
		return -1;
	uint64_t v;
	const struct tok *t = need_arg(p, st, 0, "a size", "header_area 4k;");
	if (!t || arg_size(p, t, st, SCONF_HEADER_AREA_MIN, SCONF_HEADER_AREA_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return end_simple(p, st, 1);
}

static int d_header_area(struct parser *p, struct stmt *st)
{
	return header_area(p, st, &p->top_given[TOP_HEADER_AREA], "", &p->c->header_area);
}

static int d_route_header_area(struct parser *p, struct stmt *st)
{
	return header_area(p, st, &p->rs.header_area, " in a route", &p->route->header_area);
}

static int top_time(struct parser *p, struct stmt *st, int id, sk_time_ns *v)
{
	if (twice(p, st, &p->top_given[id], "") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "a time", "500ms, 10s, 2m or 1h");
	if (!t || arg_time(p, t, st, v) < 0)
		return -1;
	return end_simple(p, st, 1);
}

static int d_header_timeout(struct parser *p, struct stmt *st)
{
	return top_time(p, st, TOP_HEADER_TIMEOUT, &p->c->header_timeout);
}

static int d_body_timeout(struct parser *p, struct stmt *st)
{
	return top_time(p, st, TOP_BODY_TIMEOUT, &p->c->body_timeout);
}

static int d_send_timeout(struct parser *p, struct stmt *st)
{
	return top_time(p, st, TOP_SEND_TIMEOUT, &p->c->send_timeout);
}

static int d_keepalive_timeout(struct parser *p, struct stmt *st)
{
	return top_time(p, st, TOP_KEEPALIVE_TIMEOUT, &p->c->keepalive_timeout);
}

/* access_log PATH [combined|json]|off;  error_log PATH|stderr; */
static int top_log(struct parser *p, struct stmt *st, int id, const char *word, const char **v)
{
	if (twice(p, st, &p->top_given[id], "") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, id == TOP_ACCESS_LOG ? "a path or 'off'"
								       : "a path or 'stderr'",
				       id == TOP_ACCESS_LOG ? "access_log PATH [combined|json]|off;"
							    : "error_log PATH|stderr;");
	if (!t)
		return -1;
	if (id == TOP_ACCESS_LOG)
		p->c->access_log_pos = st->name.pos;
	else
		p->c->error_log_pos = st->name.pos;
	if (t->kind == T_WORD && tok_is(t, word)) {
		*v = NULL;
		return end_simple(p, st, 1);
	}
	if (arg_path(p, t, st, v) < 0)
		return -1;
	/* access_log PATH combined|json: the line's format (combined by default) */
	if (id == TOP_ACCESS_LOG && st->nargs > 1 && st->arg[1].kind == T_WORD) {
		if (tok_is(&st->arg[1], "json"))
			p->c->access_log_json = true;
		else if (!tok_is(&st->arg[1], "combined"))
			return fail(p, st->arg[1].pos,
				    "expected 'combined' or 'json' after 'access_log PATH' (found %T)",
				    &st->arg[1]);
		return end_simple(p, st, 2);
	}
	return end_simple(p, st, 1);
}

static int d_access_log(struct parser *p, struct stmt *st)
{
	return top_log(p, st, TOP_ACCESS_LOG, "off", &p->c->access_log);
}

static int d_error_log(struct parser *p, struct stmt *st)
{
	return top_log(p, st, TOP_ERROR_LOG, "stderr", &p->c->error_log);
}

/* header NAME VALUE;  header -NAME; */
static int header_line(struct parser *p, struct stmt *st, struct sconf_header *hdr,
		       unsigned *nhdr, const char *where)
{
	const struct tok *t = need_arg(p, st, 0, "a header name", "header NAME VALUE; or header -NAME;");
	if (!t)
		return -1;
	bool del = t->n > 0 && t->s[0] == '-';
	const char *nm = t->s + del;
	size_t nn = t->n - del;
	if (nn == 0)
		return fail(p, t->pos, "expected a header name, found %T", t);
	for (size_t i = 0; i < nn; i++)
		if (!is_tchar(nm[i]))
			return fail(p, t->pos, "header name %T: only letters, digits and !#$%%&'*+-.^_`|~", t);
	static const char *const engine[] = {"content-length", "transfer-encoding", "connection",
					     "date"};
	for (size_t i = 0; i < SK_ARRAY_LEN(engine); i++)
		if (nn == sk_strlen(engine[i]) && ieq_n(nm, engine[i], nn))
			return fail(p, t->pos, "header %S is the server's own: it cannot be %s",
				    nm, nn, del ? "removed" : "set");
	if (*nhdr >= SCONF_MAX_HEADERS)
		return fail(p, st->name.pos, "too many header lines %s (at most %u)", where,
			    SCONF_MAX_HEADERS);
	struct sconf_header *h = &hdr[*nhdr];
	char *name = arena_take(p, nn + 1, t->pos);
	if (!name)
		return -1;
	sk_memcpy(name, nm, nn);
	name[nn] = 0;
	h->name = name;
	h->value = NULL;
	if (del) {
		if (end_simple(p, st, 1) < 0)
			return -1;
	} else {
		const struct tok *v = need_arg(p, st, 1, "a value", "header NAME VALUE;");
		if (!v)
			return -1;
		if (v->n > SCONF_VALUE_MAX)
			return fail(p, v->pos, "header value too long (at most %u bytes)",
				    SCONF_VALUE_MAX);
		if (!text_ok(v->s, v->n, true))
			return fail(p, v->pos, "header value %T: printable ASCII, spaces and tabs only", v);
		if (end_simple(p, st, 2) < 0 || !(h->value = tok_cstr(p, v)))
			return -1;
	}
	(*nhdr)++;
	return 0;
}

static const char *site_name(const struct sconf_site *s)
{
	return s->nnames ? s->names[0] : "?";
}

static int d_site(struct parser *p, struct stmt *st);
static int d_route(struct parser *p, struct stmt *st);

static int d_listen(struct parser *p, struct stmt *st)
{
	const struct tok *t = need_arg(p, st, 0, "an address",
				       "listen ADDR:PORT [tls] [http2 on|off];");
	if (!t)
		return -1;
	struct sconf_listen l;
	sk_memset(&l, 0, sizeof(l));
	if (arg_addr(p, t, true, &l.addr, &l.port, &l.any, &l.v6) < 0)
		return -1;
	unsigned used = 1;
	if (st->nargs > 1 && tok_is(&st->arg[1], "tls"))
		l.tls = true, used = 2;
	bool h2_given = false;
	if (st->nargs > used && tok_is(&st->arg[used], "http2")) {
		if (st->nargs > used + 1 && tok_is(&st->arg[used + 1], "off"))
			l.h2_off = true;
		else if (!(st->nargs > used + 1 && tok_is(&st->arg[used + 1], "on")))
			return fail(p, st->arg[used].pos, "'http2' takes on or off "
							  "(listen ADDR:PORT [tls] http2 off;)");
		used += 2;
		h2_given = true;
	}
	if (end_simple(p, st, used) < 0)
		return -1;
	struct sconf *c = p->c;
	unsigned i;
	for (i = 0; i < c->nlisten; i++) {
		const struct sconf_listen *o = &c->listen[i];
		if (o->port == l.port && o->any == l.any && (l.any || sk_addr_eq(&o->addr, &l.addr)))
			break;
	}
	if (i == c->nlisten) {
		if (c->nlisten >= SCONF_MAX_LISTEN)
			return fail(p, t->pos, "too many listeners (at most %u distinct ADDR:PORT)",
				    SCONF_MAX_LISTEN);
		l.pos = st->name.pos;
		c->listen[c->nlisten++] = l;
	} else if (h2_given && c->listen[i].h2_off != l.h2_off) {
		return fail(p, st->name.pos, "listener %S has http2 %s here but %s before (every "
					     "site on it must agree)", t->s, t->n, l.h2_off ? "off" : "on",
			    c->listen[i].h2_off ? "off" : "on");
	} else if (c->listen[i].tls != l.tls) {
		return fail(p, st->name.pos, "listener %S is %s here but %s at %P (every site on it "
					     "must agree)", t->s, t->n, l.tls ? "tls" : "not tls",
			    c->listen[i].tls ? "tls" : "not tls", c->listen[i].pos);
	}
	if (p->site->listen_mask & (1u << i))
		return fail(p, st->name.pos, "site '%s' listens on %S twice (first at %P)",
			    site_name(p->site), t->s, t->n, p->site_listen[i]);
	p->site->listen_mask |= 1u << i;
	p->site_listen[i] = st->name.pos;
	return 0;
}

static int d_tls(struct parser *p, struct stmt *st)
{
	if (twice(p, st, &p->site_tls, " in a site") < 0)
		return -1;
	const struct tok *cert = need_arg(p, st, 0, "a certificate file", "tls CERT KEY;");
	const struct tok *key = cert ? need_arg(p, st, 1, "a key file", "tls CERT KEY;") : NULL;
	if (!key || end_simple(p, st, 2) < 0)
		return -1;
	if (arg_path(p, cert, st, &p->site->cert) < 0 || arg_path(p, key, st, &p->site->key) < 0)
		return -1;
	return 0;
}

static int d_default(struct parser *p, struct stmt *st)
{
	if (twice(p, st, &p->site_default, " in a site") < 0 || end_simple(p, st, 0) < 0)
		return -1;
	p->site->is_default = true;
	return 0;
}

static int d_site_header(struct parser *p, struct stmt *st)
{
	return header_line(p, st, p->site->hdr, &p->site->nhdr, "in a site");
}

/* Route directives. */

static int handler(struct parser *p, struct stmt *st, enum sconf_kind kind)
{
	if (pos_set(p->rs.handler))
		return fail(p, st->name.pos, "route '%s' has a second handler '%S' (it has '%s' at %P; "
					     "one per route)", p->route->path, st->name.s, st->name.n,
			    p->rs.handler_name, p->rs.handler);
	p->rs.handler = st->name.pos;
	p->route->kind = kind;
	return 0;
}

static const char *const kind_names[] = {"?", "files", "proxy", "redirect", "return", "metrics",
					  "app"};

/* Each route option (RO_*): its name and the handler it belongs to. */
static const struct {
	const char *name;
	uint8_t kind;
} route_opts[RO_N] = {
	[RO_CACHE_CONTROL] = {"cache_control", SCONF_FILES},
	[RO_CACHE] = {"cache", SCONF_PROXY},
	[RO_PROXY_HOST] = {"proxy_host", SCONF_PROXY},
	[RO_BODY_ON_GET] = {"body_on_get", SCONF_PROXY},
	[RO_BALANCE] = {"balance", SCONF_PROXY},
	[RO_POOL] = {"pool", SCONF_PROXY},
	[RO_CONNECT_TIMEOUT] = {"connect_timeout", SCONF_PROXY},
	[RO_FIRST_BYTE_TIMEOUT] = {"first_byte_timeout", SCONF_PROXY},
	[RO_UPSTREAM_IDLE_TIMEOUT] = {"upstream_idle_timeout", SCONF_PROXY},
	[RO_FAIL_MAX] = {"fail_max", SCONF_PROXY},
	[RO_FAIL_TIMEOUT] = {"fail_timeout", SCONF_PROXY},
	[RO_X_CACHE] = {"x_cache", SCONF_PROXY},
	[RO_PURGE_ALLOW] = {"purge_allow", SCONF_PROXY},
};

static int d_files(struct parser *p, struct stmt *st)
{
	if (handler(p, st, SCONF_FILES) < 0)
		return -1;
	p->rs.handler_name = "files";
	const struct tok *t = need_arg(p, st, 0, "a folder", "files DIR;");
	if (!t || end_simple(p, st, 1) < 0)
		return -1;
	return arg_path(p, t, st, &p->route->root);
}

static int d_proxy(struct parser *p, struct stmt *st)
{
	if (handler(p, st, SCONF_PROXY) < 0)
		return -1;
	p->rs.handler_name = "proxy";
	if (!need_arg(p, st, 0, "an upstream ADDR:PORT", "proxy ADDR:PORT [ADDR:PORT...];"))
		return -1;
	struct sconf_route *r = p->route;
	unsigned i;
	for (i = 0; i < st->nargs; i++) {
		const struct tok *t = &st->arg[i];
		/* A word that is no ADDR:PORT after the first: a ';' forgotten
		 * ("proxy 127.0.0.1:9090\n cache 64m;"). */
		bool addr_like = false;
		for (size_t k = 0; k < t->n; k++)
			addr_like = addr_like || t->s[k] == ':';
		if (i > 0 && !addr_like)
			break;
		if (i >= SCONF_MAX_UPSTREAMS)
			return fail(p, t->pos, "too many upstreams (at most %u)", SCONF_MAX_UPSTREAMS);
		bool any, v6;
		struct sconf_upstream *u = &r->up[i];
		if (arg_addr(p, t, false, &u->addr, &u->port, &any, &v6) < 0)
			return -1;
		for (unsigned j = 0; j < i; j++)
			if (r->up[j].port == u->port && sk_addr_eq(&r->up[j].addr, &u->addr))
				return fail(p, t->pos, "upstream %T is named twice", t);
		if (!(u->text = tok_cstr(p, t)))
			return -1;
	}
	r->nup = i;
	return end_simple(p, st, i);
}

/* $host, $request_uri and $rest only. */
static int check_vars(struct parser *p, const struct tok *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->s[i] != '$')
			continue;
		size_t j = i + 1;
		while (j < t->n && ((t->s[j] >= 'a' && t->s[j] <= 'z') || t->s[j] == '_'))
			j++;
		const char *v = t->s + i + 1;
		size_t vn = j - i - 1;
		if (!seq_n(v, vn, "host", 4) && !seq_n(v, vn, "request_uri", 11) &&
		    !seq_n(v, vn, "rest", 4))
			return fail(p, t->pos, "unknown variable '$%S' in %T (expected $host, "
					       "$request_uri or $rest)", v, vn, t);
		i = j - 1;
	}
	return 0;
}

static int d_redirect(struct parser *p, struct stmt *st)
{
	if (handler(p, st, SCONF_REDIRECT) < 0)
		return -1;
	p->rs.handler_name = "redirect";
	const struct tok *code = need_arg(p, st, 0, "a status code", "redirect CODE TARGET;");
	if (!code)
		return -1;
	uint64_t v;
	if (parse_dec(code->s, code->n, &v) < 0 ||
	    (v != 301 && v != 302 && v != 303 && v != 307 && v != 308))
		return fail(p, code->pos, "redirect: expected a code of 301, 302, 303, 307 or 308, "
					  "found %T", code);
	const struct tok *t = need_arg(p, st, 1, "a target", "redirect CODE TARGET;");
	if (!t)
		return -1;
	if (t->n == 0 || t->n > SCONF_VALUE_MAX || !text_ok(t->s, t->n, false))
		return fail(p, t->pos, "redirect target %T: 1..%u printable ASCII bytes, no spaces", t,
			    SCONF_VALUE_MAX);
	if (check_vars(p, t) < 0 || end_simple(p, st, 2) < 0)
		return -1;
	p->route->status = (uint16_t)v;
	return (p->route->target = tok_cstr(p, t)) ? 0 : -1;
}

static int d_return(struct parser *p, struct stmt *st)
{
	if (handler(p, st, SCONF_RETURN) < 0)
		return -1;
	p->rs.handler_name = "return";
	const struct tok *code = need_arg(p, st, 0, "a status code", "return CODE [BODY];");
	if (!code)
		return -1;
	uint64_t v;
	if (parse_dec(code->s, code->n, &v) < 0 || v < 200 || v > 599)
		return fail(p, code->pos, "return: expected a code in 200..599, found %T", code);
	p->route->status = (uint16_t)v;
	if (st->nargs < 2)
		return end_simple(p, st, 1);
	const struct tok *b = &st->arg[1];
	if (v == 204 || v == 304)
		return fail(p, b->pos, "return %U takes no body", v);
	if (b->n > SCONF_VALUE_MAX)
		return fail(p, b->pos, "return body too long (at most %u bytes)", SCONF_VALUE_MAX);
	if (end_simple(p, st, 2) < 0)
		return -1;
	return (p->route->body = tok_cstr(p, b)) ? 0 : -1;
}

static int d_metrics(struct parser *p, struct stmt *st)
{
	if (handler(p, st, SCONF_METRICS) < 0)
		return -1;
	p->rs.handler_name = "metrics";
	return end_simple(p, st, 0);
}

static int d_app(struct parser *p, struct stmt *st)
{
	if (handler(p, st, SCONF_APP) < 0)
		return -1;
	p->rs.handler_name = "app";
	return end_simple(p, st, 0);
}

static int d_route_header(struct parser *p, struct stmt *st)
{
	return header_line(p, st, p->route->hdr, &p->route->nhdr, "in a route");
}

static int d_cache_control(struct parser *p, struct stmt *st)
{
	if (twice(p, st, &p->rs.opt[RO_CACHE_CONTROL], " in a route") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "a value", "cache_control VALUE;");
	if (!t)
		return -1;
	if (t->n == 0 || t->n > SCONF_VALUE_MAX || !text_ok(t->s, t->n, true))
		return fail(p, t->pos, "cache_control %T: 1..%u printable ASCII bytes", t,
			    SCONF_VALUE_MAX);
	if (end_simple(p, st, 1) < 0)
		return -1;
	return (p->route->cache_control = tok_cstr(p, t)) ? 0 : -1;
}

static int d_cache(struct parser *p, struct stmt *st)
{
	if (twice(p, st, &p->rs.opt[RO_CACHE], " in a route") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "a size or 'off'", "cache SIZE|off;");
	if (!t)
		return -1;
	if (tok_is(t, "off"))
		p->route->cache_bytes = 0;
	else if (arg_size(p, t, st, 0, 1ull << 36, &p->route->cache_bytes) < 0)
		return -1;
	return end_simple(p, st, 1);
}

/* NAME A|B;  *v = the argument is b.  what: "A or B", usage: "NAME A|B;". */
static int choice(struct parser *p, struct stmt *st, int id, const char *a, const char *b,
		  const char *what, const char *usage, bool *v)
{
	if (twice(p, st, &p->rs.opt[id], " in a route") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, what, usage);
	if (!t)
		return -1;
	if (tok_is(t, a))
		*v = false;
	else if (tok_is(t, b))
		*v = true;
	else
		return fail(p, t->pos, "'%S' takes '%s' or '%s', not %T", st->name.s, st->name.n, a, b,
			    t);
	return end_simple(p, st, 1);
}

static int d_proxy_host(struct parser *p, struct stmt *st)
{
	return choice(p, st, RO_PROXY_HOST, "keep", "upstream", "keep or upstream",
		      "proxy_host keep|upstream;", &p->route->host_upstream);
}

static int d_body_on_get(struct parser *p, struct stmt *st)
{
	return choice(p, st, RO_BODY_ON_GET, "refuse", "allow", "refuse or allow",
		      "body_on_get refuse|allow;", &p->route->body_on_get);
}

/* The proxy's upstream options: `skiff proxy`'s flags (conf/opts.c), with
 * the flags' ranges; a TIME as the file writes times (arg_time). */

static int d_balance(struct parser *p, struct stmt *st)
{
	bool least;
	if (choice(p, st, RO_BALANCE, "rr", "least", "rr or least", "balance rr|least;", &least) < 0)
		return -1;
	p->route->balance = least ? SCONF_BALANCE_LEAST : SCONF_BALANCE_RR;
	return 0;
}

static int d_x_cache(struct parser *p, struct stmt *st)
{
	bool off;
	if (choice(p, st, RO_X_CACHE, "on", "off", "on or off", "x_cache on|off;", &off) < 0)
		return -1;
	p->route->no_x_cache = off;
	return 0;
}

static int route_num(struct parser *p, struct stmt *st, int id, uint64_t lo, uint64_t hi,
		     const char *usage, uint64_t *v)
{
	if (twice(p, st, &p->rs.opt[id], " in a route") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "a number", usage);
	if (!t || arg_num(p, t, st, lo, hi, v) < 0)
		return -1;
	return end_simple(p, st, 1);
}

static int d_pool(struct parser *p, struct stmt *st)
{
	uint64_t v;
	if (route_num(p, st, RO_POOL, 0, 65536, "pool N;", &v) < 0)
		return -1;
	p->route->pool = (uint32_t)v;
	p->route->pool_given = true;
	return 0;
}

static int d_fail_max(struct parser *p, struct stmt *st)
{
	uint64_t v;
	if (route_num(p, st, RO_FAIL_MAX, 1, 1000, "fail_max N;", &v) < 0)
		return -1;
	p->route->fail_max = (uint32_t)v;
	return 0;
}

/* TIME, at most max_s seconds (the flag's upper bound). */
static int route_time(struct parser *p, struct stmt *st, int id, uint64_t max_s, sk_time_ns *v)
{
	if (twice(p, st, &p->rs.opt[id], " in a route") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "a time", "500ms, 10s, 2m or 1h");
	if (!t || arg_time(p, t, st, v) < 0)
		return -1;
	if (*v > max_s * SK_NS_PER_S)
		return fail(p, t->pos, "'%S %S': too long (at most %Us)", st->name.s, st->name.n,
			    t->s, t->n, max_s);
	return end_simple(p, st, 1);
}

static int d_connect_timeout(struct parser *p, struct stmt *st)
{
	return route_time(p, st, RO_CONNECT_TIMEOUT, 3600, &p->route->connect_timeout);
}

static int d_first_byte_timeout(struct parser *p, struct stmt *st)
{
	return route_time(p, st, RO_FIRST_BYTE_TIMEOUT, 86400, &p->route->first_byte_timeout);
}

static int d_upstream_idle_timeout(struct parser *p, struct stmt *st)
{
	return route_time(p, st, RO_UPSTREAM_IDLE_TIMEOUT, 86400,
			  &p->route->upstream_idle_timeout);
}

static int d_fail_timeout(struct parser *p, struct stmt *st)
{
	return route_time(p, st, RO_FAIL_TIMEOUT, 86400, &p->route->fail_timeout);
}

/* purge_allow ADDR[/LEN] [ADDR[/LEN]...];  purge_allow none;
 * IPv4 or IPv6 (no brackets) prefixes, as --purge-allow's list but
 * separated by spaces. */
static int d_purge_allow(struct parser *p, struct stmt *st)
{
	if (twice(p, st, &p->rs.opt[RO_PURGE_ALLOW], " in a route") < 0)
		return -1;
	const struct tok *t = need_arg(p, st, 0, "an address prefix or 'none'",
				       "purge_allow ADDR[/LEN]...|none;");
	if (!t)
		return -1;
	struct sconf_route *r = p->route;
	r->purge_allow_given = true;
	r->npurge_allow = 0;
	if (t->kind == T_WORD && tok_is(t, "none"))
		return end_simple(p, st, 1);
	unsigned i;
	for (i = 0; i < st->nargs; i++) {
		t = &st->arg[i];
		/* A word with neither '.' nor ':' after the first is no address:
		 * a ';' forgotten ("purge_allow ::1\n cache 1m;"). */
		bool addr_like = false, comma = false;
		for (size_t k = 0; k < t->n; k++) {
			addr_like = addr_like || t->s[k] == '.' || t->s[k] == ':';
			comma = comma || t->s[k] == ',';
		}
		if (i > 0 && !addr_like)
			break;
		if (comma)
			return fail(p, t->pos, "%T: separate the prefixes with spaces, not ','", t);
		if (i >= SCONF_MAX_PURGE_ALLOW)
			return fail(p, t->pos, "too many prefixes in 'purge_allow' (at most %u)",
				    SCONF_MAX_PURGE_ALLOW);
		char buf[64];
		struct opt_prefix pp;
		if (t->n == 0 || t->n >= sizeof(buf))
			return fail(p, t->pos, "'purge_allow' takes ADDR[/LEN] (127.0.0.0/8, ::1, "
					       "2001:db8::/32) or none, not %T", t);
		sk_memcpy(buf, t->s, t->n);
		buf[t->n] = 0;
		if (opt_parse_prefixes(buf, &pp, 1) != 1)
			return fail(p, t->pos, "'purge_allow' takes ADDR[/LEN] (127.0.0.0/8, ::1, "
					       "2001:db8::/32) or none, not %T", t);
		r->purge_allow[i].addr = pp.addr;
		r->purge_allow[i].len = pp.len;
	}
	r->npurge_allow = i;
	return end_simple(p, st, i);
}

/* Every directive, in the order the "expected one of" lists print them. */
static const struct dir_def dirs[] = {
	{"site", C_TOP, d_site},
	{"workers", C_TOP, d_workers},
	{"max_conns", C_TOP, d_max_conns},
	{"http2_sessions", C_TOP, d_http2_sessions},
	{"max_body", C_TOP, d_max_body},
	{"header_area", C_TOP, d_header_area},
	{"header_timeout", C_TOP, d_header_timeout},
	{"body_timeout", C_TOP, d_body_timeout},
	{"send_timeout", C_TOP, d_send_timeout},
	{"keepalive_timeout", C_TOP, d_keepalive_timeout},
	{"access_log", C_TOP, d_access_log},
	{"error_log", C_TOP, d_error_log},
	{"listen", C_SITE, d_listen},
	{"tls", C_SITE, d_tls},
	{"default", C_SITE, d_default},
	{"header", C_SITE, d_site_header},
	{"route", C_SITE, d_route},
	{"files", C_ROUTE, d_files},
	{"proxy", C_ROUTE, d_proxy},
	{"redirect", C_ROUTE, d_redirect},
	{"return", C_ROUTE, d_return},
	{"metrics", C_ROUTE, d_metrics},
	{"app", C_ROUTE, d_app},
	{"header", C_ROUTE, d_route_header},
	{"header_area", C_ROUTE, d_route_header_area},
	{"cache", C_ROUTE, d_cache},
	{"cache_control", C_ROUTE, d_cache_control},
	{"proxy_host", C_ROUTE, d_proxy_host},
	{"body_on_get", C_ROUTE, d_body_on_get},
	{"balance", C_ROUTE, d_balance},
	{"pool", C_ROUTE, d_pool},
	{"connect_timeout", C_ROUTE, d_connect_timeout},
	{"first_byte_timeout", C_ROUTE, d_first_byte_timeout},
	{"upstream_idle_timeout", C_ROUTE, d_upstream_idle_timeout},
	{"fail_max", C_ROUTE, d_fail_max},
	{"fail_timeout", C_ROUTE, d_fail_timeout},
	{"x_cache", C_ROUTE, d_x_cache},
	{"purge_allow", C_ROUTE, d_purge_allow},
};

static const char *ctx_name(unsigned ctx)
{
	return ctx == C_TOP ? "at the top level" : ctx == C_SITE ? "in a site" : "in a route";
}

static int unknown(struct parser *p, const struct stmt *st, unsigned ctx)
{
	for (size_t i = 0; i < SK_ARRAY_LEN(dirs); i++)
		if (seq_n(st->name.s, st->name.n, dirs[i].name, sk_strlen(dirs[i].name)))
			return fail(p, st->name.pos, "'%S' goes %s, not %s", st->name.s, st->name.n,
				    ctx_name(dirs[i].ctx), ctx_name(ctx));
	/* "unknown directive 'rooot' in route (expected one of files, ...)" */
	char list[320];
	struct mbuf m = {list, 0, sizeof(list)};
	list[0] = 0;
	for (size_t i = 0; i < SK_ARRAY_LEN(dirs); i++) {
		if (dirs[i].ctx != ctx)
			continue;
		if (m.n)
			mb_s(&m, ", ");
		mb_s(&m, dirs[i].name);
	}
	return fail(p, st->name.pos, "unknown directive %T %s (expected one of %s)", &st->name,
		    ctx == C_TOP ? "at the top level" : ctx == C_SITE ? "in site" : "in route", list);
}

/* Reads one statement: 1 and *st; 0 at the end of the block (the '}', or
 * the end of the file at the top level) with st->end; -1 on error. */
static int read_stmt(struct parser *p, struct stmt *st, unsigned ctx)
{
	st->nargs = 0;
	st->shown = 0;
	if (next_tok(p, &st->name) < 0)
		return -1;
	switch (st->name.kind) {
	case T_EOF:
	case T_RBRACE:
		st->end = st->name;
		return 0;
	case T_WORD:
		break;
	case T_STR:
		return fail(p, st->name.pos, "expected a directive %s, found a quoted string %T",
			    ctx_name(ctx), &st->name);
	default:
		return fail(p, st->name.pos, "expected a directive %s, found %T", ctx_name(ctx),
			    &st->name);
	}
	for (;;) {
		struct tok t;
		if (next_tok(p, &t) < 0)
			return -1;
		if (t.kind == T_WORD || t.kind == T_STR) {
			if (st->nargs >= ARGS_MAX)
				return fail(p, t.pos, "too many arguments to '%S' (at most %u)",
					    st->name.s, st->name.n, ARGS_MAX);
			st->arg[st->nargs++] = t;
			continue;
		}
		st->end = t;
		return 1;
	}
}

/* The statements of one block up to its '}' (or the file's end at the
 * top level). */
static int parse_block(struct parser *p, unsigned ctx, const struct stmt *opener)
{
	struct stmt st;
	for (;;) {
		int r = read_stmt(p, &st, ctx);
		if (r < 0)
			return -1;
		if (r == 0) {
			if (ctx == C_TOP && st.end.kind == T_RBRACE)
				return fail(p, st.end.pos, "unexpected '}' (no block is open)");
			if (ctx != C_TOP && st.end.kind == T_EOF)
				return fail(p, st.end.pos, "expected '}' to close '%S' opened at %P, "
							   "found the end of the file",
					    opener->name.s, opener->name.n, opener->name.pos);
			return 0;
		}
		const struct dir_def *d = NULL;
		for (size_t i = 0; i < SK_ARRAY_LEN(dirs) && !d; i++)
			if ((dirs[i].ctx & ctx) &&
			    seq_n(st.name.s, st.name.n, dirs[i].name, sk_strlen(dirs[i].name)))
				d = &dirs[i];
		if (!d)
			return unknown(p, &st, ctx);
		if (d->fn(p, &st) < 0)
			return -1;
	}
}

static int d_site(struct parser *p, struct stmt *st)
{
	struct sconf *c = p->c;
	if (c->nsites >= p->site_cap)
		return fail(p, st->name.pos, "too many sites (at most %u)", SCONF_MAX_SITES);
	if (!need_arg(p, st, 0, "a site name", "site NAME... { ... }"))
		return -1;
	struct sconf_site *s = &c->sites[c->nsites];
	sk_memset(s, 0, sizeof(*s));
	s->pos = st->name.pos;
	unsigned i;
	for (i = 0; i < st->nargs; i++) {
		const struct tok *t = &st->arg[i];
		if (i >= SCONF_MAX_NAMES)
			return fail(p, t->pos, "too many names for one site (at most %u)",
				    SCONF_MAX_NAMES);
		if (arg_name(p, t, &s->names[i]) < 0)
			return -1;
		for (unsigned j = 0; j < i; j++)
			if (cstreq(s->names[j], s->names[i]))
				return fail(p, t->pos, "site name %T is given twice", t);
		s->nnames = i + 1;
	}
	if (end_block(p, st, i) < 0)
		return -1;
	c->nsites++;
	p->site = s;
	p->site_tls = p->site_default = (struct sconf_pos){0, 0};
	return parse_block(p, C_SITE, st);
}

static int d_route(struct parser *p, struct stmt *st)
{
	struct sconf_site *s = p->site;
	unsigned i = 0;
	bool exact = false;
	if (st->nargs > 0 && tok_is(&st->arg[0], "=") && st->arg[0].kind == T_WORD)
		exact = true, i = 1;
	const struct tok *t = need_arg(p, st, i, "a path", "route [=] PATH { ... }");
	if (!t)
		return -1;
	if (t->n == 0 || t->s[0] != '/')
		return fail(p, t->pos, "a route's path starts with '/': %T", t);
	if (t->n > SCONF_PATH_MAX)
		return fail(p, t->pos, "route path too long (at most %u bytes)", SCONF_PATH_MAX);
	for (size_t k = 0; k < t->n; k++) {
		uint8_t ch = (uint8_t)t->s[k];
		if (ch == '?' || is_ctl(ch) || ch == ' ')
			return fail(p, t->pos, "route path %T: no '?', spaces or control bytes (it is "
					       "matched against the path without the query)", t);
	}
	if (end_block(p, st, i + 1) < 0)
		return -1;
	for (unsigned k = 0; k < s->nroutes; k++)
		if (s->routes[k].exact == exact && cstreq_n(s->routes[k].path, t->s, t->n))
			return fail(p, st->name.pos, "route '%s%S' is twice in site '%s' (first at %P)",
				    exact ? "= " : "", t->s, t->n, site_name(s), s->routes[k].pos);
	if (s->nroutes >= SCONF_MAX_ROUTES)
		return fail(p, st->name.pos, "too many routes in site '%s' (at most %u)",
			    site_name(s), SCONF_MAX_ROUTES);
	struct sconf_route *r = &s->routes[s->nroutes];
	sk_memset(r, 0, sizeof(*r));
	r->exact = exact;
	r->pos = st->name.pos;
	if (!(r->path = tok_cstr(p, t)))
		return -1;
	s->nroutes++;
	p->route = r;
	sk_memset(&p->rs, 0, sizeof(p->rs));
	if (parse_block(p, C_ROUTE, st) < 0)
		return -1;
	/* The route closed: one handler, and only its options. */
	if (!pos_set(p->rs.handler))
		return fail(p, r->pos, "route '%s' has no handler (expected one of files, proxy, "
				       "redirect, return, metrics, app)", r->path);
	for (unsigned k = 0; k < RO_N; k++)
		if (pos_set(p->rs.opt[k]) && route_opts[k].kind != r->kind)
			return fail(p, p->rs.opt[k], "'%s' is an option of '%s' routes; route '%s' has "
						     "'%s'", route_opts[k].name,
				    kind_names[route_opts[k].kind], r->path, kind_names[r->kind]);
	return 0;
}

/* ---- the checks after the file ---- */

static void fmt_listen(const struct sconf_listen *l, char out[OPT_ADDR_STRLEN])
{
	if (l->any) {
		struct mbuf m = {out, 0, OPT_ADDR_STRLEN};
		mb_s(&m, "*:");
		mb_u(&m, l->port);
		return;
	}
	opt_format_addr(&l->addr, l->port, out);
}

static int check_sites(struct parser *p)
{
	struct sconf *c = p->c;
	char a[OPT_ADDR_STRLEN];
	for (unsigned i = 0; i < c->nsites; i++) {
		const struct sconf_site *s = &c->sites[i];
		if (!s->listen_mask)
			return fail(p, s->pos, "site '%s' has no 'listen'", site_name(s));
		if (!s->nroutes)
			return fail(p, s->pos, "site '%s' has no route", site_name(s));
		bool any_tls = false;
		for (unsigned li = 0; li < c->nlisten; li++) {
			if (!(s->listen_mask & (1u << li)) || !c->listen[li].tls)
				continue;
			any_tls = true;
			if (!s->cert) {
				fmt_listen(&c->listen[li], a);
				return fail(p, s->pos, "site '%s': listener %s is tls but the site has "
						       "no 'tls CERT KEY'", site_name(s), a);
			}
		}
		if (s->cert && !any_tls)
			return fail(p, s->pos, "site '%s' has 'tls CERT KEY' but no tls listener "
					       "('listen ADDR:PORT tls;')", site_name(s));
		/* Against the sites before it: a name once, one default per listener. */
		for (unsigned j = 0; j < i; j++) {
			const struct sconf_site *o = &c->sites[j];
			uint32_t both = s->listen_mask & o->listen_mask;
			if (!both)
				continue;
			unsigned li = 0;
			while (!(both & (1u << li)))
				li++;
			fmt_listen(&c->listen[li], a);
			if (s->is_default && o->is_default)
				return fail(p, s->pos, "listener %s has two default sites: '%s' and '%s' "
						       "(at %P)", a, site_name(s), site_name(o), o->pos);
			for (unsigned x = 0; x < s->nnames; x++)
				for (unsigned y = 0; y < o->nnames; y++)
					if (cstreq(s->names[x], o->names[y]))
						return fail(p, s->pos, "name '%s' is on listener %s "
								       "twice: in this site and in "
								       "the site at %P",
							    s->names[x], a, o->pos);
		}
	}
	return 0;
}

/* ---- the API ---- */

/* The most sites a text of len bytes can open: count_sites counts the
 * words "site", each 4 bytes and a separator. */
static size_t sites_cap(size_t len)
{
	size_t n = len / 5 + 1;
	return n < SCONF_MAX_SITES ? n : SCONF_MAX_SITES;
}

size_t sites_conf_arena_bound(size_t len)
{
	/* The sites; every token copied once (NUL included: at most twice the
	 * text); each path joined with the folder (a path needs at least 7
	 * bytes of text: "tls a b;" holds two in 8). */
	return 16 + sites_cap(len) * sizeof(struct sconf_site) + 2 * len + 2 +
	       (len / 4 + 4) * (SCONF_PATH_MAX + 1);
}

void sites_conf_defaults(struct sconf *c)
{
	if (!c->workers)
		c->workers = 1;
	if (!c->max_conns)
		c->max_conns = 4096;
	if (!c->http2_sessions)
		c->http2_sessions = c->max_conns < SCONF_HTTP2_SESSIONS_DEFAULT
					    ? c->max_conns : SCONF_HTTP2_SESSIONS_DEFAULT;
	if (!c->max_body)
		c->max_body = 1ull << 20;
	if (!c->header_timeout)
		c->header_timeout = 10 * SK_NS_PER_S;
	if (!c->body_timeout)
		c->body_timeout = 60 * SK_NS_PER_S;
	if (!c->send_timeout)
		c->send_timeout = 60 * SK_NS_PER_S;
	if (!c->keepalive_timeout)
		c->keepalive_timeout = 60 * SK_NS_PER_S;
}

/* The pre-pass: how many "site" words the text holds (up to the first
 * lexing error, where the real pass stops too). */
static unsigned count_sites(const char *text, size_t len)
{
	struct sconf_err e;
	struct parser q;
	sk_memset(&q, 0, sizeof(q));
	q.text = text;
	q.len = len;
	q.line = q.col = 1;
	q.err = &e;
	unsigned n = 0;
	struct tok t;
	while (next_tok(&q, &t) == 0 && t.kind != T_EOF)
		n += t.kind == T_WORD && t.n == 4 && !sk_memcmp(t.s, "site", 4);
	return n;
}

int sites_conf_parse(const char *text, size_t len, const char *dir, void *arena,
		     size_t arena_size, struct sconf *out, struct sconf_err *err)
{
	struct parser p;
	sk_memset(&p, 0, sizeof(p));
	sk_memset(out, 0, sizeof(*out));
	sk_memset(err, 0, sizeof(*err));
	p.text = text;
	p.len = len;
	p.line = p.col = 1;
	p.decode = true;
	p.c = out;
	p.err = err;
	p.dir = dir ? dir : "";
	p.dirlen = sk_strlen(p.dir);
	p.arena = arena;
	p.asize = arena_size;
	unsigned cap = count_sites(text, len);
	p.site_cap = cap < SCONF_MAX_SITES ? cap : SCONF_MAX_SITES;
	/* The sites first, aligned for the struct. */
	if (p.site_cap) {
		size_t pad = (size_t)(-(uintptr_t)arena & (_Alignof(struct sconf_site) - 1));
		size_t need = pad + (size_t)p.site_cap * sizeof(struct sconf_site);
		if (!arena || need > arena_size)
			return fail(&p, (struct sconf_pos){1, 1}, "the configuration needs more memory "
					"than the %U bytes given (sites_conf_arena_bound)",
				    (uint64_t)arena_size);
		out->sites = (struct sconf_site *)(void *)(p.arena + pad);
		p.aused = need;
	}
	if (parse_block(&p, C_TOP, NULL) < 0)
		return -1;
	if (out->nsites == 0)
		return fail(&p, here(&p), "no 'site' in the file (a server needs at least one)");
	return check_sites(&p);
}

/* ---- lookups ---- */

static bool name_eq(const char *name, const char *h, size_t hn)
{
	size_t n = sk_strlen(name);
	return n == hn && ieq_n(name, h, hn);
}

const struct sconf_site *sites_conf_site(const struct sconf *c, unsigned li, const char *host,
					 size_t hlen)
{
	if (li >= c->nlisten || li >= 32)
		return NULL;
	/* The name without ":port" and one trailing '.'; an IPv6 literal
	 * ("[::1]:8080") is no name: only the default site answers it. */
	size_t n = 0;
	bool literal = hlen > 0 && host[0] == '[', scanned = false;
	uint32_t bit = 1u << li;
	const struct sconf_site *best = NULL, *dflt = NULL;
	size_t best_len = 0;
	for (unsigned i = 0; i < c->nsites; i++) {
		const struct sconf_site *s = &c->sites[i];
		if (!(s->listen_mask & bit))
			continue;
		if (s->is_default && !dflt)
			dflt = s;
		if (literal || s->nnames == 0)
			continue;
		if (!scanned) { /* once, and only for a site with names */
			while (n < hlen && host[n] != ':')
				n++;
			if (n > 0 && host[n - 1] == '.')
				n--;
			scanned = true;
		}
		if (n == 0)
			continue;
		for (unsigned k = 0; k < s->nnames; k++) {
			const char *nm = s->names[k];
			if (nm[0] != '*') {
				if (name_eq(nm, host, n))
					return s;
				continue;
			}
			/* "*.a.test": one label or more, then ".a.test". */
			size_t sl = sk_strlen(nm) - 1; /* ".a.test" */
			if (n > sl && sl > best_len && ieq_n(host + n - sl, nm + 1, sl)) {
				best = s;
				best_len = sl;
			}
		}
	}
	return best ? best : dflt;
}

uint32_t sites_conf_header_area(const struct sconf *c, unsigned li)
{
	uint32_t a = c->header_area;
	for (unsigned i = 0; i < c->nsites; i++) {
		const struct sconf_site *s = &c->sites[i];
		if (li >= 32 || !(s->listen_mask & (1u << li)))
			continue;
		for (unsigned k = 0; k < s->nroutes; k++)
			if (s->routes[k].header_area > a)
				a = s->routes[k].header_area;
	}
	return a;
}

const struct sconf_route *sites_conf_route(const struct sconf_site *s, const char *path,
					   size_t plen, size_t *rest_off)
{
	const struct sconf_route *best = NULL;
	size_t best_len = 0;
	for (unsigned i = 0; i < s->nroutes; i++) {
		const struct sconf_route *r = &s->routes[i];
		size_t n = sk_strlen(r->path);
		if (r->exact) {
			if (n == plen && !sk_memcmp(r->path, path, n)) {
				if (rest_off)
					*rest_off = plen;
				return r;
			}
		} else if (n <= plen && (!best || n > best_len) && !sk_memcmp(r->path, path, n)) {
			best = r;
			best_len = n;
		}
	}
	if (best && rest_off)
		*rest_off = best_len;
	return best;
}
