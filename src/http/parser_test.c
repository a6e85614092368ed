/* parser_test.c — the request head parser: real clients' requests cut at
 * every byte, the malformed-request corpus (tests/http_bad_requests.txt),
 * the limits at and one past their values, keep-alive, and a benchmark.
 *
 * Every parse reads from an exact-size heap copy, so ASan reports a read
 * one byte past what the parser was given; the second call of a split
 * parse uses another copy at another address, which proves the results
 * are offsets, not pointers into the first buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/chunked.h"
#include "http/parser.h"

#define MAX_BODY (1u << 20) /* what the corpus's 413 entries assume (< 1 TiB) */

static uint8_t *copy_of(const void *p, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	assert_non_null(b);
	if (n)
		memcpy(b, p, n);
	return b;
}

/* One-shot parse of buf[0, n) from an exact-size copy. */
static int parse_once(struct http_req *r, const uint8_t *buf, size_t n)
{
	uint8_t *b = copy_of(buf, n);
	http_req_init(r, MAX_BODY);
	int ret = http_parse_head(r, b, n);
	free(b);
	return ret;
}

/* Everything a caller may look at must be equal. */
static void assert_same_req(const struct http_req *a, const struct http_req *b)
{
	assert_int_equal(a->err, b->err);
	assert_int_equal(a->status, b->status);
	if (a->err)
		return; /* results are undefined after an error */
	assert_int_equal(a->head_len, b->head_len);
	assert_int_equal(a->method, b->method);
	assert_int_equal(a->version, b->version);
	assert_memory_equal(&a->method_s, &b->method_s, sizeof(a->method_s));
	assert_memory_equal(&a->target, &b->target, sizeof(a->target));
	assert_int_equal(a->nheaders, b->nheaders);
	assert_memory_equal(a->headers, b->headers, a->nheaders * sizeof(a->headers[0]));
	assert_int_equal(a->has_content_length, b->has_content_length);
	assert_int_equal(a->content_length, b->content_length);
	assert_int_equal(a->chunked, b->chunked);
	assert_int_equal(a->keep_alive, b->keep_alive);
	assert_int_equal(a->has_host, b->has_host);
	assert_int_equal(a->expect_continue, b->expect_continue);
	assert_int_equal(a->expect_other, b->expect_other);
	assert_int_equal(a->conn_upgrade, b->conn_upgrade);
}

/* Feed buf[0, n) cut at every byte (the first k bytes, then all of it) and
 * one byte at a time; each must agree with the one-shot result `want`
 * (return value ret), and no prefix shorter than the verdict point may
 * give a verdict. */
static void check_cuts(const uint8_t *buf, size_t n, int ret, const struct http_req *want)
{
	/* The verdict point: the shortest prefix with a verdict. */
	size_t first = n;
	for (size_t k = 0; k <= n; k++) {
		struct http_req r;
		if (parse_once(&r, buf, k) != HTTP_NEED_MORE) {
			first = k;
			break;
		}
	}
	for (size_t k = 0; k < n; k++) {
		struct http_req r;
		http_req_init(&r, MAX_BODY);
		uint8_t *a = copy_of(buf, k);
		int r1 = http_parse_head(&r, a, k);
		free(a);
		if (k < first)
			assert_int_equal(r1, HTTP_NEED_MORE);
		else
			assert_int_equal(r1, ret);
		uint8_t *b = copy_of(buf, n);
		assert_int_equal(http_parse_head(&r, b, n), ret);
		/* A further call (sticky result) changes nothing. */
		assert_int_equal(http_parse_head(&r, b, n), ret);
		free(b);
		assert_same_req(&r, want);
	}
	/* One byte at a time, a fresh copy each time. */
	struct http_req r;
	http_req_init(&r, MAX_BODY);
	int got = HTTP_NEED_MORE;
	size_t k;
	for (k = 0; k <= n && got == HTTP_NEED_MORE; k++) {
		uint8_t *a = copy_of(buf, k);
		got = http_parse_head(&r, a, k);
		free(a);
	}
	assert_int_equal(got, ret);
	assert_int_equal(k - 1, first);
	assert_same_req(&r, want);
}

/* --- valid requests from real clients ----------------------------------- */

struct sample {
	const char *name;
	const char *head; /* the head, parsed */
	const char *rest; /* bytes after it (body, next request); not parsed */
	uint8_t method, version;
	const char *target;
	uint16_t nheaders;
	bool keep_alive, chunked, has_cl, expect_continue, upgrade;
	uint64_t cl;
	const char *hname, *hvalue; /* one header to look up, or NULL */
};

static const struct sample samples[] = {
	{ "curl", "GET / HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: curl/7.88.1\r\n"
		  "Accept: */*\r\n\r\n", "",
	  HTTP_GET, 11, "/", 3, true, false, false, false, false, 0, "user-agent", "curl/7.88.1" },
	{ "curl -0", "GET /index.html HTTP/1.0\r\nHost: 198.18.0.2\r\nUser-Agent: curl/7.88.1\r\n"
		     "Accept: */*\r\n\r\n", "",
	  HTTP_GET, 10, "/index.html", 3, false, false, false, false, false, 0, "host", "198.18.0.2" },
	{ "ab", "GET / HTTP/1.0\r\nHost: 198.18.0.2\r\nUser-Agent: ApacheBench/2.3\r\n"
		"Accept: */*\r\n\r\n", "",
	  HTTP_GET, 10, "/", 3, false, false, false, false, false, 0, "accept", "*/*" },
	{ "ab -k", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 198.18.0.2\r\n"
		   "User-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n", "",
	  HTTP_GET, 10, "/", 4, true, false, false, false, false, 0, "connection", "Keep-Alive" },
	{ "wrk", "GET / HTTP/1.1\r\nHost: 198.18.0.2:80\r\n\r\n", "",
	  HTTP_GET, 11, "/", 1, true, false, false, false, false, 0, "host", "198.18.0.2:80" },
	{ "wrk close", "GET / HTTP/1.1\r\nHost: 198.18.0.2:80\r\nConnection: close\r\n\r\n", "",
	  HTTP_GET, 11, "/", 2, false, false, false, false, false, 0, NULL, NULL },
	{ "python http.client", "GET /x?a=1&b=%20 HTTP/1.1\r\nHost: 198.18.0.2\r\n"
				"Accept-Encoding: identity\r\n\r\n", "",
	  HTTP_GET, 11, "/x?a=1&b=%20", 2, true, false, false, false, false, 0,
	  "accept-encoding", "identity" },
	{ "h2load --h1", "GET / HTTP/1.1\r\nHost: 198.18.0.2\r\nUser-Agent: h2load nghttp2/1.52.0\r\n\r\n",
	  "GET / HTTP/1.1\r\nHost: 198.18.0.2\r\n",
	  HTTP_GET, 11, "/", 2, true, false, false, false, false, 0, NULL, NULL },
	{ "firefox", "GET /docs/index.html?lang=en HTTP/1.1\r\n"
		     "Host: 198.18.0.2:8080\r\n"
		     "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0\r\n"
		     "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n"
		     "Accept-Language: en-US,en;q=0.5\r\n"
		     "Accept-Encoding: gzip, deflate\r\n"
		     "Connection: keep-alive\r\n"
		     "Upgrade-Insecure-Requests: 1\r\n"
		     "Sec-Fetch-Dest: document\r\n"
		     "Sec-Fetch-Mode: navigate\r\n"
		     "Sec-Fetch-Site: none\r\n"
		     "Sec-Fetch-User: ?1\r\n\r\n", "",
	  HTTP_GET, 11, "/docs/index.html?lang=en", 11, true, false, false, false, false, 0,
	  "sec-fetch-user", "?1" },
	{ "chrome", "GET /favicon.ico HTTP/1.1\r\n"
		    "Host: localhost:8080\r\n"
		    "Connection: keep-alive\r\n"
		    "sec-ch-ua: \"Chromium\";v=\"116\", \"Not)A;Brand\";v=\"24\"\r\n"
		    "sec-ch-ua-mobile: ?0\r\n"
		    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
		    "Chrome/116.0.0.0 Safari/537.36\r\n"
		    "sec-ch-ua-platform: \"Linux\"\r\n"
		    "Accept: image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8\r\n"
		    "Referer: http://localhost:8080/\r\n"
		    "Accept-Encoding: gzip, deflate, br\r\n"
		    "Accept-Language: en-US,en;q=0.9\r\n"
		    "Cookie: a=b; session=0123456789abcdef\r\n\r\n", "",
	  HTTP_GET, 11, "/favicon.ico", 11, true, false, false, false, false, 0,
	  "cookie", "a=b; session=0123456789abcdef" },
	{ "curl POST", "POST /form HTTP/1.1\r\nHost: a\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
		       "Content-Length: 7\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n",
	  "a=1&b=2",
	  HTTP_POST, 11, "/form", 5, true, false, true, false, false, 7, "content-type",
	  "application/x-www-form-urlencoded" },
	{ "curl chunked", "PUT /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
			  "Expect: 100-continue\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n",
	  HTTP_PUT, 11, "/up", 3, true, true, false, true, false, 0, "expect", "100-continue" },
	{ "pipelined 1", "GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
	  "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	  HTTP_GET, 11, "/a", 1, true, false, false, false, false, 0, NULL, NULL },
	{ "pipelined 2", "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	  "GET /c HTTP/1.1\r\n",
	  HTTP_GET, 11, "/b", 2, false, false, false, false, false, 0, NULL, NULL },
	{ "options *", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "",
	  HTTP_OPTIONS, 11, "*", 1, true, false, false, false, false, 0, NULL, NULL },
	{ "absolute-form", "GET http://example.com/x?y=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", "",
	  HTTP_GET, 11, "http://example.com/x?y=1", 1, true, false, false, false, false, 0, NULL, NULL },
	{ "connect", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "",
	  HTTP_CONNECT, 11, "example.com:443", 1, true, false, false, false, false, 0, NULL, NULL },
	{ "leading CRLFs", "\r\n\r\nHEAD / HTTP/1.1\r\nHost: a\r\n\r\n", "",
	  HTTP_HEAD, 11, "/", 1, true, false, false, false, false, 0, NULL, NULL },
	{ "OWS and empty values", "DELETE /r HTTP/1.1\r\nHost:a\r\nX-A:   v  v \t \r\nX-Empty:\r\n"
				  "X-Sp:   \r\n\r\n", "",
	  HTTP_DELETE, 11, "/r", 4, true, false, false, false, false, 0, "x-a", "v  v" },
	{ "obs-text value", "GET / HTTP/1.1\r\nHost: a\r\nX-U: caf\xc3\xa9 \xff\r\n\r\n", "",
	  HTTP_GET, 11, "/", 2, true, false, false, false, false, 0, "x-u", "caf\xc3\xa9 \xff" },
	{ "HTTP/1.2 as 1.1", "PATCH /p HTTP/1.2\r\nHost: a\r\nContent-Length: 0\r\n\r\n", "",
	  HTTP_PATCH, 11, "/p", 2, true, false, true, false, false, 0, NULL, NULL },
	{ "1.0 without Host", "TRACE / HTTP/1.0\r\n\r\n", "",
	  HTTP_TRACE, 10, "/", 0, false, false, false, false, false, 0, NULL, NULL },
	{ "websocket", "GET /chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n"
		       "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", "",
	  HTTP_GET, 11, "/chat", 4, true, false, false, false, true, 0, "upgrade", "websocket" },
	{ "tokens in names", "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n!#$%&'*+-.^_`|~09az: x\r\n\r\n", "",
	  HTTP_GET, 11, "/", 2, true, false, false, false, false, 0, "!#$%&'*+-.^_`|~09az", "x" },
	{ "te chunked list", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,CHUNKED ,\r\n\r\n", "",
	  HTTP_POST, 11, "/", 2, true, true, false, false, false, 0, NULL, NULL },
	{ "big Content-Length == max", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 001048576\r\n\r\n", "",
	  HTTP_POST, 11, "/", 2, true, false, true, false, false, 1048576, NULL, NULL },
};

static void check_sample(const struct sample *s)
{
	size_t hl = strlen(s->head), rl = strlen(s->rest), n = hl + rl;
	uint8_t *buf = malloc(n + 1);
	memcpy(buf, s->head, hl);
	memcpy(buf + hl, s->rest, rl);

	struct http_req r;
	int ret = parse_once(&r, buf, n);
	if (ret != (int)hl)
		fail_msg("%s: got %d (%s), want %zu", s->name, ret, http_err_name(ret), hl);
	assert_int_equal(r.head_len, hl);
	assert_int_equal(r.method, s->method);
	assert_int_equal(r.version, s->version);
	assert_int_equal(r.target.len, strlen(s->target));
	assert_memory_equal(buf + r.target.off, s->target, r.target.len);
	assert_int_equal(r.nheaders, s->nheaders);
	assert_int_equal(r.keep_alive, s->keep_alive);
	assert_int_equal(r.chunked, s->chunked);
	assert_int_equal(r.has_content_length, s->has_cl);
	assert_int_equal(r.content_length, s->cl);
	assert_int_equal(r.expect_continue, s->expect_continue);
	assert_int_equal(r.conn_upgrade, s->upgrade);
	assert_int_equal(r.err, 0);
	for (unsigned i = 0; i < r.nheaders; i++) {
		const struct http_header *h = &r.headers[i];
		assert_true(h->name.len > 0);
		assert_true(h->name.off + h->name.len < hl);
		assert_true(h->value.off + h->value.len <= hl);
		assert_int_equal(buf[h->name.off + h->name.len], ':');
	}
	if (s->hname) {
		const struct http_header *h = http_req_find(&r, buf, s->hname, strlen(s->hname));
		assert_non_null(h);
		assert_int_equal(h->value.len, strlen(s->hvalue));
		assert_memory_equal(buf + h->value.off, s->hvalue, h->value.len);
	}
	assert_null(http_req_find(&r, buf, "x-not-there", 11));
	check_cuts(buf, n, ret, &r);
	free(buf);
}

static void test_samples(void **state)
{
	(void)state;
	for (size_t i = 0; i < SK_ARRAY_LEN(samples); i++)
		check_sample(&samples[i]);
}

/* A pipelined stream: each head from where the previous one ended, with
 * the buffer compacted in between (the next head moved to offset 0). */
static void test_pipelined_stream(void **state)
{
	(void)state;
	static const char stream[] = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
				     "\r\nHEAD /2 HTTP/1.1\r\nHost: a\r\n\r\n"
				     "POST /3 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
				     "GET /4 HTTP/1.0\r\n\r\n";
	static const char *const targets[] = { "/1", "/2", "/3", "/4" };
	size_t n = sizeof(stream) - 1, off = 0;
	for (unsigned i = 0; i < 4; i++) {
		struct http_req r;
		uint8_t *b = copy_of(stream + off, n - off);
		http_req_init(&r, MAX_BODY);
		int ret = http_parse_head(&r, b, n - off);
		assert_true(ret > 0);
		assert_int_equal(r.target.len, strlen(targets[i]));
		assert_memory_equal(b + r.target.off, targets[i], r.target.len);
		off += (size_t)ret + (r.has_content_length ? r.content_length : 0);
		free(b);
	}
	assert_int_equal(off, n);
}

/* --- the malformed corpus ----------------------------------------------- */

struct bad {
	int line;
	int status;
	char reason[32];
	uint8_t *req;
	size_t len;
};

static void put(uint8_t **b, size_t *n, size_t *cap, uint8_t c)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		*b = realloc(*b, *cap);
		assert_non_null(*b);
	}
	(*b)[(*n)++] = c;
}

static int hexdig(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Unescape one REQUEST field (format at the top of the corpus file). */
static void unescape(const char *s, int line, uint8_t **out, size_t *len)
{
	uint8_t *b = NULL;
	size_t n = 0, cap = 0, rep_start = 0;
	long rep = -1;
	while (*s) {
		if (*s != '\\') {
			put(&b, &n, &cap, (uint8_t)*s++);
			continue;
		}
		s++;
		switch (*s) {
		case 'r': put(&b, &n, &cap, '\r'); s++; break;
		case 'n': put(&b, &n, &cap, '\n'); s++; break;
		case 't': put(&b, &n, &cap, '\t'); s++; break;
		case '0': put(&b, &n, &cap, 0); s++; break;
		case '\\': put(&b, &n, &cap, '\\'); s++; break;
		case 'x': {
			int hi = hexdig(s[1]), lo = hi < 0 ? -1 : hexdig(s[2]);
			if (lo < 0)
				fail_msg("corpus line %d: bad \\x escape", line);
			put(&b, &n, &cap, (uint8_t)(hi << 4 | lo));
			s += 3;
			break;
		}
		case '{': {
			char *end;
			rep = strtol(s + 1, &end, 10);
			if (*end != '}' || rep < 1 || rep_start == SIZE_MAX)
				fail_msg("corpus line %d: bad \\{N}", line);
			rep_start = n;
			s = end + 1;
			break;
		}
		case '}': {
			if (rep < 1)
				fail_msg("corpus line %d: \\} without \\{N}", line);
			size_t seg = n - rep_start;
			for (long i = 1; i < rep; i++)
				for (size_t j = 0; j < seg; j++)
					put(&b, &n, &cap, b[rep_start + j]);
			rep = -1;
			s++;
			break;
		}
		default:
			fail_msg("corpus line %d: unknown escape \\%c", line, *s);
		}
	}
	if (rep != -1)
		fail_msg("corpus line %d: unclosed \\{N}", line);
	*out = b;
	*len = n;
}

static FILE *open_corpus(void)
{
	const char *env = getenv("HTTP_BAD_REQUESTS");
	FILE *f = fopen(env ? env : "tests/http_bad_requests.txt", "r");
	if (!f) /* run from build/test/ */
		f = fopen("../../tests/http_bad_requests.txt", "r");
	if (!f)
		fail_msg("tests/http_bad_requests.txt not found (run from the repository root, "
			 "or set HTTP_BAD_REQUESTS)");
	return f;
}

static size_t load_corpus(struct bad **out)
{
	FILE *f = open_corpus();
	static char line[1 << 16];
	struct bad *v = NULL;
	size_t n = 0;
	int lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t l = strlen(line);
		if (l && line[l - 1] == '\n')
			line[--l] = 0;
		if (l == 0 || line[0] == '#')
			continue;
		struct bad b = { .line = lineno };
		int used = 0;
		if (sscanf(line, "%d %31s %n", &b.status, b.reason, &used) != 2 || used == 0)
			fail_msg("corpus line %d: want STATUS REASON REQUEST", lineno);
		/* %n after a space skipped all spaces: step back to exactly one. */
		const char *req = strchr(line, ' ');
		req = strchr(req + 1, ' ') + 1;
		if (l && line[l - 1] == ' ')
			fail_msg("corpus line %d: ends in a space (write \\x20)", lineno);
		unescape(req, lineno, &b.req, &b.len);
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n++] = b;
	}
	fclose(f);
	*out = v;
	return n;
}

/* The verdict on a whole request: the head's error, or the chunked body's,
 * decoded from an exact-size copy; 0 if nothing was wrong. */
static int verdict(const uint8_t *req, size_t n, size_t body_cut)
{
	struct http_req r;
	int ret = parse_once(&r, req, n);
	if (ret < 0 || !r.chunked)
		return ret < 0 ? ret : 0;
	/* The body, in two pieces cut at body_cut (clamped). */
	size_t blen = n - (size_t)ret, cut = body_cut < blen ? body_cut : blen;
	struct http_chunked c;
	http_chunked_init(&c, MAX_BODY);
	uint8_t *a = copy_of(req + ret, cut), *b = copy_of(req + ret + cut, blen - cut);
	size_t len = cut, used;
	int e = http_chunked_decode(&c, a, &len, &used);
	if (e == HTTP_NEED_MORE) {
		assert_int_equal(used, cut);
		len = blen - cut;
		e = http_chunked_decode(&c, b, &len, &used);
	}
	free(a);
	free(b);
	return e == HTTP_DONE || e == HTTP_NEED_MORE ? 0 : e;
}

static void test_bad_corpus(void **state)
{
	(void)state;
	struct bad *v;
	size_t n = load_corpus(&v);
	assert_true(n >= 40);
	size_t cut_checked = 0;
	for (size_t i = 0; i < n; i++) {
		struct bad *b = &v[i];
		int e = verdict(b->req, b->len, 0);
		if (e >= 0 || http_err_status(e) != b->status || strcmp(http_err_name(e), b->reason))
			fail_msg("corpus line %d: got %d %s, want %d %s", b->line, http_err_status(e),
				 http_err_name(e), b->status, b->reason);
		/* The status must also be what the struct says. */
		struct http_req r;
		int ret = parse_once(&r, b->req, b->len);
		if (ret < 0) {
			assert_int_equal(r.status, b->status);
			assert_int_equal(r.err, ret);
			/* Every cut gives the same verdict (the big ones: a
			 * sample of cuts, they are the same loop). */
			if (b->len < 2000) {
				check_cuts(b->req, b->len, ret, &r);
				cut_checked++;
			}
		} else {
			/* A body error: the same at every cut of the body. */
			for (size_t k = 0; k <= b->len - (size_t)ret; k++)
				assert_int_equal(verdict(b->req, b->len, k), e);
		}
		free(b->req);
	}
	free(v);
	print_message("bad-request corpus: %zu entries, %zu cut at every byte\n", n, cut_checked);
}

/* --- limits --------------------------------------------------------------- */

static uint8_t *build(size_t *len, const char *pre, size_t fill, char c, const char *post)
{
	size_t a = strlen(pre), z = strlen(post);
	uint8_t *b = malloc(a + fill + z);
	memcpy(b, pre, a);
	memset(b + a, c, fill);
	memcpy(b + a + fill, post, z);
	*len = a + fill + z;
	return b;
}

static void test_request_line_limit(void **state)
{
	(void)state;
	struct http_req r;
	size_t n;
	/* "GET /" + fill + " HTTP/1.1" is 14 + fill bytes before the CRLF. */
	for (size_t line = HTTP_MAX_REQUEST_LINE - 1; line <= HTTP_MAX_REQUEST_LINE + 1; line++) {
		uint8_t *b = build(&n, "GET /", line - 14, 'a', " HTTP/1.1\r\nHost: a\r\n\r\n");
		int ret = parse_once(&r, b, n);
		if (line <= HTTP_MAX_REQUEST_LINE) {
			assert_int_equal(ret, (int)n);
			assert_int_equal(r.target.len, line - 13);
		} else {
			assert_int_equal(ret, HTTP_E_URI_TOO_LONG);
			assert_int_equal(r.status, 414);
		}
		free(b);
	}
	/* A line with no end: 414 as soon as the limit is reached, not later. */
	uint8_t *b = build(&n, "GET /", 20000, 'a', "");
	for (size_t k = HTTP_MAX_REQUEST_LINE - 2; k <= HTTP_MAX_REQUEST_LINE + 2; k++) {
		int ret = parse_once(&r, b, k);
		assert_int_equal(ret, k < HTTP_MAX_REQUEST_LINE ? HTTP_NEED_MORE : HTTP_E_URI_TOO_LONG);
	}
	free(b);
	/* The same for a method that never ends. */
	b = build(&n, "", 9000, 'G', "");
	assert_int_equal(parse_once(&r, b, HTTP_MAX_REQUEST_LINE - 1), HTTP_NEED_MORE);
	assert_int_equal(parse_once(&r, b, HTTP_MAX_REQUEST_LINE), HTTP_E_URI_TOO_LONG);
	free(b);
	/* A complete line of exactly the limit, waiting for its LF / fields. */
	b = build(&n, "GET /", HTTP_MAX_REQUEST_LINE - 14, 'a', " HTTP/1.1\r");
	assert_int_equal(parse_once(&r, b, n), HTTP_NEED_MORE);
	free(b);
}

static void test_fields_limit(void **state)
{
	(void)state;
	struct http_req r;
	size_t n;
	/* Field lines: "Host: a\r\n" (9) + "X: " fill "\r\n" (5 + fill). */
	static const char rl[] = "GET / HTTP/1.1\r\n";
	for (size_t fb = HTTP_MAX_FIELDS_BYTES - 1; fb <= HTTP_MAX_FIELDS_BYTES + 1; fb++) {
		char pre[64];
		snprintf(pre, sizeof(pre), "%sHost: a\r\nX: ", rl);
		uint8_t *b = build(&n, pre, fb - 14, 'v', "\r\n\r\n");
		int ret = parse_once(&r, b, n);
		if (fb <= HTTP_MAX_FIELDS_BYTES) {
			assert_int_equal(ret, (int)n);
			assert_int_equal(r.headers[1].value.len, fb - 14);
		} else {
			assert_int_equal(ret, HTTP_E_FIELDS_TOO_LARGE);
			assert_int_equal(r.status, 431);
		}
		/* Without the final CRLF: still waiting at the limit, 431 past it. */
		ret = parse_once(&r, b, n - 2);
		assert_int_equal(ret, fb <= HTTP_MAX_FIELDS_BYTES ? HTTP_NEED_MORE : HTTP_E_FIELDS_TOO_LARGE);
		free(b);
	}
	/* A value that never ends: 431 at the limit, whatever comes later. */
	uint8_t *b = build(&n, "GET / HTTP/1.1\r\nX: ", 20000, 'v', "");
	size_t hs = sizeof(rl) - 1;
	assert_int_equal(parse_once(&r, b, hs + HTTP_MAX_FIELDS_BYTES - 1), HTTP_NEED_MORE);
	assert_int_equal(parse_once(&r, b, hs + HTTP_MAX_FIELDS_BYTES), HTTP_E_FIELDS_TOO_LARGE);
	free(b);
}

static void test_field_count_limit(void **state)
{
	(void)state;
	struct http_req r;
	for (unsigned nf = HTTP_MAX_FIELDS - 1; nf <= HTTP_MAX_FIELDS + 1; nf++) {
		char *b = malloc(64 + 8 * nf);
		size_t n = (size_t)sprintf(b, "GET / HTTP/1.1\r\nHost: a\r\n");
		for (unsigned i = 1; i < nf; i++)
			n += (size_t)sprintf(b + n, "X: %u\r\n", i % 10);
		n += (size_t)sprintf(b + n, "\r\n");
		int ret = parse_once(&r, (uint8_t *)b, n);
		if (nf <= HTTP_MAX_FIELDS) {
			assert_int_equal(ret, (int)n);
			assert_int_equal(r.nheaders, nf);
		} else {
			assert_int_equal(ret, HTTP_E_TOO_MANY_FIELDS);
			assert_int_equal(r.status, 431);
			/* Decided at the first byte of the extra line. */
			size_t at = n - 2 - 6;
			assert_int_equal(parse_once(&r, (uint8_t *)b, at), HTTP_NEED_MORE);
			assert_int_equal(parse_once(&r, (uint8_t *)b, at + 1), HTTP_E_TOO_MANY_FIELDS);
		}
		free(b);
	}
}

static void test_empty_lines_limit(void **state)
{
	(void)state;
	struct http_req r;
	for (unsigned k = HTTP_MAX_EMPTY_LINES; k <= HTTP_MAX_EMPTY_LINES + 1; k++) {
		char s[128] = "";
		for (unsigned i = 0; i < k; i++)
			strcat(s, "\r\n");
		strcat(s, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
		int ret = parse_once(&r, (const uint8_t *)s, strlen(s));
		assert_int_equal(ret, k <= HTTP_MAX_EMPTY_LINES ? (int)strlen(s) : HTTP_E_EMPTY_LINES);
	}
}

static void test_body_limit(void **state)
{
	(void)state;
	struct http_req r;
	char s[128];
	for (uint64_t cl = MAX_BODY - 1; cl <= MAX_BODY + 1; cl++) {
		int n = sprintf(s, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %llu\r\n\r\n",
				(unsigned long long)cl);
		int ret = parse_once(&r, (const uint8_t *)s, (size_t)n);
		assert_int_equal(ret, cl <= MAX_BODY ? n : HTTP_E_BODY_TOO_LARGE);
		if (ret < 0)
			assert_int_equal(r.status, 413);
	}
	/* 18 digits are the most a Content-Length may have. */
	http_req_init(&r, UINT64_MAX);
	const char *ok = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999999999\r\n\r\n";
	assert_int_equal(http_parse_head(&r, (const uint8_t *)ok, strlen(ok)), (int)strlen(ok));
	assert_int_equal(r.content_length, 999999999999999999ull);
}

/* The largest acceptable head is exactly HTTP_HEAD_MAX bytes, and with
 * HTTP_HEAD_MAX bytes of anything the parser always decides. */
static void test_head_max(void **state)
{
	(void)state;
	uint8_t *b = malloc(HTTP_HEAD_MAX);
	size_t n = 0;
	for (unsigned i = 0; i < HTTP_MAX_EMPTY_LINES; i++)
		b[n++] = '\r', b[n++] = '\n';
	memcpy(b + n, "GET /", 5);
	n += 5;
	memset(b + n, 'a', HTTP_MAX_REQUEST_LINE - 14);
	n += HTTP_MAX_REQUEST_LINE - 14;
	memcpy(b + n, " HTTP/1.1\r\nHost: a\r\nX: ", 23);
	n += 23;
	size_t fill = HTTP_HEAD_MAX - n - 4;
	memset(b + n, 'v', fill);
	n += fill;
	memcpy(b + n, "\r\n\r\n", 4);
	n += 4;
	assert_int_equal(n, HTTP_HEAD_MAX);
	struct http_req r;
	assert_int_equal(parse_once(&r, b, n), (int)n);
	assert_int_equal(parse_once(&r, b, n - 1), HTTP_NEED_MORE);
	/* Garbage of every single byte value, and a valid prefix that stalls. */
	for (int c = 0; c < 256; c++) {
		memset(b, c, HTTP_HEAD_MAX);
		assert_int_not_equal(parse_once(&r, b, HTTP_HEAD_MAX), HTTP_NEED_MORE);
	}
	memcpy(b, "GET / HTTP/1.1\r\nX: ", 19);
	memset(b + 19, 'v', HTTP_HEAD_MAX - 19);
	assert_int_not_equal(parse_once(&r, b, HTTP_HEAD_MAX), HTTP_NEED_MORE);
	free(b);
}

/* --- derived facts -------------------------------------------------------- */

static void test_keep_alive(void **state)
{
	(void)state;
	static const struct {
		int version;
		const char *fields; /* extra field lines */
		int want;           /* keep_alive, or a negative error */
	} t[] = {
		{ 11, "", 1 },
		{ 11, "Connection: close\r\n", 0 },
		{ 11, "Connection: Close\r\n", 0 },
		{ 11, "Connection: CLOSE\r\n", 0 },
		{ 11, "Connection: keep-alive, Upgrade\r\n", 1 },
		{ 11, "Connection: Upgrade, close\r\n", 0 },
		{ 11, "Connection: keep-alive\r\nConnection: close\r\n", 0 },
		{ 11, "Connection: close2\r\n", 1 },
		{ 11, "Connection:\r\n", 1 },
		{ 11, "Connection: ,\r\n", 1 },
		{ 11, "Connection: keep-alive;x\r\n", HTTP_E_CONNECTION },
		{ 11, "Connection: \"close\"\r\n", HTTP_E_CONNECTION },
		{ 10, "", 0 },
		{ 10, "Connection: keep-alive\r\n", 1 },
		{ 10, "Connection: Keep-Alive\r\n", 1 },
		{ 10, "Connection: KEEP-ALIVE\r\n", 1 },
		{ 10, "Connection: keep-alive, close\r\n", 0 },
		{ 10, "Connection: close\r\nConnection: keep-alive\r\n", 0 },
		{ 10, "Connection: Upgrade,  keep-alive \r\n", 1 },
		{ 10, "Connection: ,, keep-alive ,,\r\n", 1 },
		{ 10, "Connection: keepalive\r\n", 0 },
		{ 10, "Keep-Alive: timeout=5\r\n", 0 },
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(t); i++) {
		char s[256];
		int n = snprintf(s, sizeof(s), "GET / HTTP/1.%d\r\nHost: a\r\n%s\r\n",
				 t[i].version % 10, t[i].fields);
		struct http_req r;
		int ret = parse_once(&r, (const uint8_t *)s, (size_t)n);
		if (t[i].want < 0) {
			assert_int_equal(ret, t[i].want);
			continue;
		}
		if (ret != n || r.keep_alive != t[i].want)
			fail_msg("case %zu: ret %d keep_alive %d, want %d", i, ret, r.keep_alive, t[i].want);
		check_cuts((const uint8_t *)s, (size_t)n, ret, &r);
	}
}

static void test_expect(void **state)
{
	(void)state;
	struct http_req r;
	const char *s = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n";
	assert_int_equal(parse_once(&r, (const uint8_t *)s, strlen(s)), (int)strlen(s));
	assert_true(r.expect_continue);
	assert_false(r.expect_other);
	s = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 3\r\n\r\n";
	assert_int_equal(parse_once(&r, (const uint8_t *)s, strlen(s)), (int)strlen(s));
	assert_false(r.expect_continue);
	assert_true(r.expect_other);
}

/* Every method name and its enum; unknown tokens parse but get 501. */
static void test_methods(void **state)
{
	(void)state;
	for (int m = HTTP_GET; m <= HTTP_TRACE; m++) {
		char s[128];
		const char *name = http_method_name((enum http_method)m);
		const char *target = m == HTTP_CONNECT ? "a:1" : m == HTTP_OPTIONS ? "*" : "/";
		int n = sprintf(s, "%s %s HTTP/1.1\r\nHost: a\r\n\r\n", name, target);
		struct http_req r;
		assert_int_equal(parse_once(&r, (const uint8_t *)s, (size_t)n), n);
		assert_int_equal(r.method, m);
		assert_int_equal(r.method_s.len, strlen(name));
	}
	/* PURGE: 501 like any unknown token, unless the embedder takes it;
	 * then exactly "PURGE" (case-sensitive), nothing near it. */
	{
		static const char pg[] = "PURGE /x HTTP/1.1\r\nHost: a\r\n\r\n";
		struct http_req r;
		assert_int_equal(parse_once(&r, (const uint8_t *)pg, strlen(pg)), HTTP_E_METHOD_UNKNOWN);
		assert_int_equal(r.status, 501);
		http_req_init(&r, 1024);
		r.accept_purge = true;
		assert_int_equal(http_parse_head(&r, (const uint8_t *)pg, strlen(pg)), (int)strlen(pg));
		assert_int_equal(r.method, HTTP_PURGE);
		assert_string_equal(http_method_name(HTTP_PURGE), "PURGE");
		static const char *const pnear[] = {"purge", "PURGES", "PURG", "PURGE\x01"};
		for (size_t i = 0; i < SK_ARRAY_LEN(pnear); i++) {
			char s[128];
			int n = sprintf(s, "%s /x HTTP/1.1\r\nHost: a\r\n\r\n", pnear[i]);
			http_req_init(&r, 1024);
			r.accept_purge = true;
			int rc = http_parse_head(&r, (const uint8_t *)s, (size_t)n);
			assert_true(rc == HTTP_E_METHOD_UNKNOWN || rc == HTTP_E_METHOD);
		}
	}
	assert_string_equal(http_method_name(HTTP_UNKNOWN), "UNKNOWN");
	assert_string_equal(http_method_name((enum http_method)99), "UNKNOWN");
	/* Names one letter off, and prefixes/extensions of real ones. */
	static const char *const near[] = { "GEt", "GETS", "GE", "POS", "HEADS", "OPTION", "M-SEARCH" };
	for (size_t i = 0; i < SK_ARRAY_LEN(near); i++) {
		char s[128];
		int n = sprintf(s, "%s / HTTP/1.1\r\nHost: a\r\n\r\n", near[i]);
		struct http_req r;
		assert_int_equal(parse_once(&r, (const uint8_t *)s, (size_t)n), HTTP_E_METHOD_UNKNOWN);
		assert_int_equal(r.status, 501);
	}
}

/* The class table matches the RFC definitions it was generated from. */
static void test_char_classes(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		bool digit = c >= '0' && c <= '9';
		bool token = alpha || digit || (c && strchr("!#$%&'*+-.^_`|~", c));
		bool vchar = c >= 0x21 && c <= 0x7e;
		unsigned want = (token ? HTTP_C_TOKEN : 0) | (vchar ? HTTP_C_TARGET : 0) |
				(vchar || c >= 0x80 || c == ' ' || c == '\t' ? HTTP_C_VALUE : 0) |
				(c == ' ' || c == '\t' ? HTTP_C_WS : 0) |
				(digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ? HTTP_C_HEX : 0) |
				(alpha || digit || (c && strchr("-._~!$&'()*+,;=%:[]", c)) ? HTTP_C_HOST : 0) |
				(alpha || digit || (c && strchr("+-.", c)) ? HTTP_C_SCHEME : 0);
		if (http_char_class[c] != want)
			fail_msg("class of 0x%02x: 0x%02x, want 0x%02x", c, http_char_class[c], want);
	}
}

static void test_err_names(void **state)
{
	(void)state;
	for (int e = -2; e > -HTTP_NERR; e--) {
		int st = http_err_status(e);
		assert_true(st == 400 || st == 413 || st == 414 || st == 431 || st == 501 || st == 505);
		const char *nm = http_err_name(e);
		assert_non_null(nm);
		for (int f = -2; f > e; f--)
			assert_string_not_equal(nm, http_err_name(f));
	}
	assert_int_equal(http_err_status(HTTP_NEED_MORE), 0);
	assert_int_equal(http_err_status(10), 0);
	assert_int_equal(http_err_status(-HTTP_NERR), 0);
	assert_string_equal(http_err_name(HTTP_NEED_MORE), "need_more");
	assert_string_equal(http_err_name(-HTTP_NERR), "unknown");
	assert_string_equal(http_err_name(HTTP_DONE), "ok");
}

/* A caller passing a huge len (more than a head can be) is capped, not
 * trusted: results stay 16-bit offsets. */
static void test_huge_len(void **state)
{
	(void)state;
	size_t n = 200000;
	uint8_t *b = malloc(n);
	memset(b, 'x', n);
	static const char h[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	memcpy(b, h, sizeof(h) - 1);
	struct http_req r;
	http_req_init(&r, 0);
	assert_int_equal(http_parse_head(&r, b, n), (int)sizeof(h) - 1);
	free(b);
}

/* A caller that passes fewer bytes than before (a bug on its side) gets
 * "need more", not a read past its buffer; the full head still parses. */
static void test_shorter_len(void **state)
{
	(void)state;
	static const char h[] = "GET / HTTP/1.1\r\nHost: a\r\nX-Long: vvvvvvvvvv\r\n\r\n";
	struct http_req r;
	http_req_init(&r, 0);
	uint8_t *b = copy_of(h, 40);
	assert_int_equal(http_parse_head(&r, b, 40), HTTP_NEED_MORE);
	free(b);
	b = copy_of(h, 10);
	assert_int_equal(http_parse_head(&r, b, 10), HTTP_NEED_MORE);
	free(b);
	b = copy_of(h, sizeof(h) - 1);
	assert_int_equal(http_parse_head(&r, b, sizeof(h) - 1), (int)sizeof(h) - 1);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_char_classes),
		cmocka_unit_test(test_err_names),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_pipelined_stream),
		cmocka_unit_test(test_bad_corpus),
		cmocka_unit_test(test_request_line_limit),
		cmocka_unit_test(test_fields_limit),
		cmocka_unit_test(test_field_count_limit),
		cmocka_unit_test(test_empty_lines_limit),
		cmocka_unit_test(test_body_limit),
		cmocka_unit_test(test_head_max),
		cmocka_unit_test(test_keep_alive),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_huge_len),
		cmocka_unit_test(test_shorter_len),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
