/* cache_test.c — the cache engine (http/cache.h) on real header texts:
 * what is stored and what not (RFC 9111 3), freshness and age (4.2) with
 * the request's directives, Vary, HEAD from GET, coalescing states, 304
 * refresh (4.3.4), LRU eviction under a small budget, reads that outlive
 * eviction, abort, purge and the counters.  http_cache_check after every
 * step; time is explicit (wall-clock seconds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/cache.h"
#include "http/date.h"

#define T0 1700000000ull /* 2023-11-14 22:13:20 UTC */

/* A message's fields from "Name: value\n" lines (views into text). */
struct msg {
	char text[4096];
	struct http_cache_field f[64];
	unsigned n;
};

static void msg_set(struct msg *m, const char *lines)
{
	snprintf(m->text, sizeof(m->text), "%s", lines);
	m->n = 0;
	char *p = m->text;
	while (*p) {
		char *nl = strchr(p, '\n');
		char *colon = strchr(p, ':');
		assert_non_null(nl);
		assert_true(colon && colon < nl);
		char *v = colon + 1;
		while (*v == ' ')
			v++;
		m->f[m->n++] = (struct http_cache_field){p, (size_t)(colon - p), v, (size_t)(nl - v)};
		p = nl + 1;
	}
}

static uint8_t mem[256 * 1024];
static struct http_cache C;

static void setup_cache_max(size_t size, uint32_t chunk, uint64_t max_entry)
{
	struct http_cache_config cfg;
	http_cache_config_default(&cfg);
	cfg.chunk_size = chunk;
	cfg.max_entry = max_entry;
	assert_int_equal(http_cache_init(&C, mem, size, &cfg), 0);
	assert_int_equal(http_cache_check(&C), 0);
}

static void setup_cache(size_t size, uint32_t chunk)
{
	setup_cache_max(size, chunk, 0);
}

static struct http_cache_req req_of(unsigned method, const char *target, struct msg *m,
				    const char *fields)
{
	msg_set(m, fields);
	return (struct http_cache_req){method, "example.com", 11, target, strlen(target), m->f,
				       m->n};
}

/* Fill one response; returns what end (or head) said. */
static enum http_cache_fill_result fill(const struct http_cache_req *rq, uint16_t status,
					const char *fields, const char *body, uint64_t now)
{
	struct http_cache_entry *f = http_cache_begin(&C, rq, now);
	if (!f)
		return HTTP_CACHE_FILL_DROPPED;
	assert_int_equal(http_cache_check(&C), 0);
	struct msg rm;
	msg_set(&rm, fields);
	struct http_cache_resp rs = {status, rm.f, rm.n};
	struct http_cache_entry *out;
	enum http_cache_fill_result r = http_cache_head(&C, f, rq, &rs, now, &out);
	assert_int_equal(http_cache_check(&C), 0);
	if (r != HTTP_CACHE_FILL_OK)
		return r;
	size_t bl = strlen(body);
	/* in pieces of 7, to cross chunk boundaries at odd places */
	for (size_t o = 0; o < bl; o += 7) {
		r = http_cache_body(&C, f, body + o, SK_MIN((size_t)7, bl - o));
		if (r != HTTP_CACHE_FILL_OK)
			return r;
	}
	r = http_cache_end(&C, f, now);
	assert_int_equal(http_cache_check(&C), 0);
	return r;
}

static enum http_cache_result look(const struct http_cache_req *rq, uint64_t now,
				   struct http_cache_lookup *lk)
{
	enum http_cache_result r = http_cache_lookup(&C, rq, now, lk);
	assert_int_equal(http_cache_check(&C), 0);
	return r;
}

/* Lookup; on a HIT, compare the body and release.  Returns the result. */
static enum http_cache_result look_body(const struct http_cache_req *rq, uint64_t now,
					const char *want)
{
	struct http_cache_lookup lk;
	enum http_cache_result r = look(rq, now, &lk);
	if (r == HTTP_CACHE_HIT) {
		char got[8192];
		size_t n = 0;
		struct http_cache_iter it;
		const uint8_t *p;
		size_t pn;
		for (bool more = http_cache_body_first(&C, lk.entry, &it, &p, &pn); more;
		     more = http_cache_body_next(&C, &it, &p, &pn)) {
			assert_true(n + pn <= sizeof(got));
			memcpy(got + n, p, pn);
			n += pn;
		}
		assert_int_equal(n, http_cache_body_len(lk.entry));
		if (want) {
			assert_int_equal(n, strlen(want));
			assert_memory_equal(got, want, n);
		}
		http_cache_release(&C, lk.entry);
		assert_int_equal(http_cache_check(&C), 0);
	}
	return r;
}

static const char *field(const struct http_cache_entry *e, const char *name)
{
	struct http_cache_fiter it;
	const char *n, *v;
	for (bool more = http_cache_field_first(&C, e, &it, &n, &v); more;
	     more = http_cache_field_next(&C, &it, &n, &v))
		if (strcasecmp(n, name) == 0)
			return v;
	return NULL;
}

static void test_store_and_hit(void **st)
{
	(void)st;
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	struct http_cache_req rq = req_of(HTTP_GET, "/a?x=1", &m, "Accept: */*\n");
	assert_int_equal(look_body(&rq, T0, NULL), HTTP_CACHE_MISS);
	char body[3000];
	for (size_t i = 0; i < sizeof(body) - 1; i++)
		body[i] = (char)('a' + i % 26);
	body[sizeof(body) - 1] = 0;
	assert_int_equal(fill(&rq, 200,
			      "Content-Type: text/plain\nCache-Control: max-age=60\n"
			      "Content-Length: 2999\nConnection: close, X-Hop\nX-Hop: 1\n"
			      "Keep-Alive: timeout=5\nDate: Tue, 14 Nov 2023 22:13:20 GMT\n"
			      "Proxy-Authenticate: Basic\nX-Kept: yes\n",
			      body, T0),
			 HTTP_CACHE_FILL_STORED);
	assert_int_equal(look_body(&rq, T0 + 1, body), HTTP_CACHE_HIT);
	struct http_cache_lookup lk;
	assert_int_equal(look(&rq, T0 + 5, &lk), HTTP_CACHE_HIT);
	assert_int_equal(lk.age, 5);
	assert_int_equal(http_cache_age(lk.entry, T0 + 5), 5);
	assert_int_equal(http_cache_status(lk.entry), 200);
	assert_int_equal(http_cache_nfields(lk.entry), 3); /* Content-Type, Cache-Control, X-Kept */
	assert_string_equal(field(lk.entry, "content-type"), "text/plain");
	assert_string_equal(field(lk.entry, "x-kept"), "yes");
	assert_null(field(lk.entry, "content-length"));
	assert_null(field(lk.entry, "connection"));
	assert_null(field(lk.entry, "x-hop")); /* named by Connection */
	assert_null(field(lk.entry, "keep-alive"));
	assert_null(field(lk.entry, "date"));
	assert_null(field(lk.entry, "proxy-authenticate"));
	http_cache_release(&C, lk.entry);
	/* Host is case-insensitive, the target is not. */
	struct http_cache_req r2 = rq;
	r2.host = "EXAMPLE.com";
	assert_int_equal(look_body(&r2, T0 + 1, body), HTTP_CACHE_HIT);
	r2 = req_of(HTTP_GET, "/A?x=1", &m, "");
	assert_int_equal(look_body(&r2, T0 + 1, NULL), HTTP_CACHE_MISS);
	assert_int_equal(C.st.hits, 3);
	assert_int_equal(C.st.stored, 1);
	assert_int_equal(C.st.entries, 1);
}

/* Bodies of 0 bytes, exactly one and two chunks, and one byte more. */
static void test_body_sizes(void **st)
{
	(void)st;
	static const size_t sizes[] = {0, 1, 1023, 1024, 1025, 2048, 2049};
	static char body[2100];
	for (unsigned i = 0; i < SK_ARRAY_LEN(sizes); i++) {
		setup_cache(sizeof(mem), 1024);
		memset(body, 0, sizeof(body));
		for (size_t k = 0; k < sizes[i]; k++)
			body[k] = (char)('A' + (k * 7 + i) % 26);
		struct msg m;
		struct http_cache_req rq = req_of(HTTP_GET, "/z", &m, "");
		assert_int_equal(fill(&rq, sizes[i] ? 200 : 204, "Cache-Control: max-age=9\n", body,
				      T0),
				 HTTP_CACHE_FILL_STORED);
		assert_int_equal(look_body(&rq, T0, body), HTTP_CACHE_HIT);
		/* meta chunk + ceil(size / 1024) body chunks */
		assert_int_equal(C.st.bytes, 1024 * (1 + (sizes[i] + 1023) / 1024));
	}
}

/* One response, then what a lookup at `at` says. */
static enum http_cache_result stored_then(const char *resp_fields, uint64_t at,
					  const char *req_fields)
{
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	struct http_cache_req rq = req_of(HTTP_GET, "/f", &m, "");
	if (fill(&rq, 200, resp_fields, "body", T0) != HTTP_CACHE_FILL_STORED)
		return (enum http_cache_result)-1;
	struct msg m2;
	struct http_cache_req r2 = req_of(HTTP_GET, "/f", &m2, req_fields);
	return look_body(&r2, at, "body");
}

static void test_freshness_lifetime(void **st)
{
	(void)st;
	enum http_cache_result H = HTTP_CACHE_HIT, S = HTTP_CACHE_STALE, M = HTTP_CACHE_MISS;
	assert_int_equal(stored_then("Cache-Control: max-age=60\n", T0 + 59, ""), H);
	assert_int_equal(stored_then("Cache-Control: max-age=60\n", T0 + 60, ""), M);
	assert_int_equal(stored_then("Cache-Control: max-age=60\nETag: \"v1\"\n", T0 + 60, ""), S);
	/* s-maxage wins over max-age for a shared cache. */
	assert_int_equal(stored_then("Cache-Control: max-age=600, s-maxage=10\n", T0 + 11, ""), M);
	assert_int_equal(stored_then("Cache-Control: max-age=5, s-maxage=100\n", T0 + 50, ""), H);
	/* max-age wins over Expires. */
	assert_int_equal(stored_then("Expires: Tue, 14 Nov 2023 22:13:30 GMT\n"
				     "Cache-Control: max-age=100\n",
				     T0 + 50, ""),
			 H);
	/* Expires - Date: 10 s, in each of the three date forms. */
	const char *ex[] = {"Expires: Tue, 14 Nov 2023 22:13:30 GMT\n",
			    "Expires: Tuesday, 14-Nov-23 22:13:30 GMT\n",
			    "Expires: Tue Nov 14 22:13:30 2023\n"};
	for (unsigned i = 0; i < 3; i++) {
		char f[200];
		snprintf(f, sizeof(f), "Date: Tue, 14 Nov 2023 22:13:20 GMT\n%s", ex[i]);
		assert_int_equal(stored_then(f, T0 + 9, ""), H);
		assert_int_equal(stored_then(f, T0 + 10, ""), M);
	}
	/* No Date: the response time stands for it. */
	assert_int_equal(stored_then("Expires: Tue, 14 Nov 2023 22:13:30 GMT\n", T0 + 9, ""), H);
	/* An invalid Expires ("0") is in the past; two that disagree too. */
	assert_int_equal(stored_then("Expires: 0\nETag: \"e\"\n", T0, ""), S);
	assert_int_equal(stored_then("Expires: Tue, 14 Nov 2023 22:13:30 GMT\n"
				     "Expires: Tue, 14 Nov 2023 22:15:30 GMT\nETag: \"e\"\n",
				     T0 + 1, ""),
			 S);
	/* Conflicting max-age: the smaller. */
	assert_int_equal(stored_then("Cache-Control: max-age=100\nCache-Control: max-age=10\n",
				     T0 + 20, ""),
			 M);
	/* An unparseable Cache-Control: not stored at all. */
	assert_int_equal(stored_then("Cache-Control: max-age=100 public\n", T0, ""),
			 (enum http_cache_result)-1);
}

static void test_age(void **st)
{
	(void)st;
	/* Age from upstream counts (corrected_age_value). */
	assert_int_equal(stored_then("Cache-Control: max-age=60\nAge: 50\n", T0 + 9, ""),
			 HTTP_CACHE_HIT);
	assert_int_equal(stored_then("Cache-Control: max-age=60\nAge: 50\n", T0 + 10, ""),
			 HTTP_CACHE_MISS);
	/* A Date in the past: apparent age. */
	assert_int_equal(stored_then("Cache-Control: max-age=60\n"
				     "Date: Tue, 14 Nov 2023 22:12:40 GMT\n",
				     T0 + 19, ""),
			 HTTP_CACHE_HIT);
	assert_int_equal(stored_then("Cache-Control: max-age=60\n"
				     "Date: Tue, 14 Nov 2023 22:12:40 GMT\n",
				     T0 + 20, ""),
			 HTTP_CACHE_MISS);
	/* A Date in the future: no negative age. */
	assert_int_equal(stored_then("Cache-Control: max-age=60\n"
				     "Date: Tue, 14 Nov 2023 23:13:20 GMT\n",
				     T0 + 59, ""),
			 HTTP_CACHE_HIT);
	/* Response delay: request sent at T0, response at T0+5, Age 10. */
	setup_cache(sizeof(mem), 1024);
	struct msg m, rm;
	struct http_cache_req rq = req_of(HTTP_GET, "/d", &m, "");
	struct http_cache_entry *f = http_cache_begin(&C, &rq, T0);
	msg_set(&rm, "Cache-Control: max-age=100\nAge: 10\n");
	struct http_cache_resp rs = {200, rm.f, rm.n};
	assert_int_equal(http_cache_head(&C, f, &rq, &rs, T0 + 5, NULL), HTTP_CACHE_FILL_OK);
	assert_int_equal(http_cache_end(&C, f, T0 + 5), HTTP_CACHE_FILL_STORED);
	struct http_cache_lookup lk;
	assert_int_equal(look(&rq, T0 + 5, &lk), HTTP_CACHE_HIT);
	assert_int_equal(lk.age, 15);
	http_cache_release(&C, lk.entry);
}

static void test_request_directives(void **st)
{
	(void)st;
	const char *r60 = "Cache-Control: max-age=60\nETag: \"x\"\n";
	enum http_cache_result H = HTTP_CACHE_HIT, S = HTTP_CACHE_STALE;
	assert_int_equal(stored_then(r60, T0 + 30, "Cache-Control: max-age=30\n"), H);
	assert_int_equal(stored_then(r60, T0 + 31, "Cache-Control: max-age=30\n"), S);
	assert_int_equal(stored_then(r60, T0 + 30, "Cache-Control: min-fresh=30\n"), H);
	assert_int_equal(stored_then(r60, T0 + 31, "Cache-Control: min-fresh=30\n"), S);
	assert_int_equal(stored_then(r60, T0 + 70, "Cache-Control: max-stale=10\n"), H);
	assert_int_equal(stored_then(r60, T0 + 71, "Cache-Control: max-stale=10\n"), S);
	assert_int_equal(stored_then(r60, T0 + 9999, "Cache-Control: max-stale\n"), H);
	/* must-revalidate, proxy-revalidate and s-maxage forbid serving stale. */
	const char *nostale[] = {"Cache-Control: max-age=60, must-revalidate\nETag: \"x\"\n",
				 "Cache-Control: max-age=60, proxy-revalidate\nETag: \"x\"\n",
				 "Cache-Control: s-maxage=60\nETag: \"x\"\n"};
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(stored_then(nostale[i], T0 + 61, "Cache-Control: max-stale\n"), S);
	/* no-cache in the request, or Pragma without Cache-Control: revalidate. */
	assert_int_equal(stored_then(r60, T0 + 1, "Cache-Control: no-cache\n"), S);
	assert_int_equal(stored_then(r60, T0 + 1, "Pragma: no-cache\n"), S);
	assert_int_equal(stored_then(r60, T0 + 1, "Pragma: no-cache\nCache-Control: max-age=100\n"),
			 H);
	/* no-cache without a validator: a plain miss. */
	assert_int_equal(stored_then("Cache-Control: max-age=60\n", T0 + 1,
				     "Cache-Control: no-cache\n"),
			 HTTP_CACHE_MISS);
	/* only-if-cached: a hit if fresh, else 504, never forwarded. */
	assert_int_equal(stored_then(r60, T0 + 1, "Cache-Control: only-if-cached\n"), H);
	assert_int_equal(stored_then(r60, T0 + 61, "Cache-Control: only-if-cached\n"),
			 HTTP_CACHE_GATEWAY_TIMEOUT);
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	struct http_cache_req rq = req_of(HTTP_GET, "/none", &m, "Cache-Control: only-if-cached\n");
	assert_int_equal(look_body(&rq, T0, NULL), HTTP_CACHE_GATEWAY_TIMEOUT);
	/* request no-store: served if there, never filled. */
	rq = req_of(HTTP_GET, "/none", &m, "Cache-Control: no-store\n");
	assert_null(http_cache_begin(&C, &rq, T0));
	assert_int_equal(stored_then(r60, T0 + 1, "Cache-Control: no-store\n"), H);
}

static void test_response_no_cache(void **st)
{
	(void)st;
	/* no-cache (both forms): stored, but every use revalidates. */
	assert_int_equal(stored_then("Cache-Control: no-cache, max-age=60\nETag: \"n\"\n", T0 + 1, ""),
			 HTTP_CACHE_STALE);
	assert_int_equal(stored_then("Cache-Control: no-cache=\"Set-Cookie\", max-age=60\n"
				     "ETag: \"n\"\n",
				     T0 + 1, ""),
			 HTTP_CACHE_STALE);
	assert_int_equal(stored_then("Cache-Control: no-cache\nLast-Modified: "
				     "Tue, 14 Nov 2023 20:00:00 GMT\n",
				     T0 + 1, "Cache-Control: max-stale\n"),
			 HTTP_CACHE_STALE);
}

/* Storability (RFC 9111 3), one case per rule. */
struct sto_case {
	unsigned method;
	const char *req;
	uint16_t status;
	const char *resp;
	bool stored;
};

static void test_storable(void **st)
{
	(void)st;
	static const struct sto_case cases[] = {
		{HTTP_GET, "", 200, "Cache-Control: max-age=60\n", true},
		{HTTP_GET, "", 200, "Expires: Tue, 14 Nov 2023 23:13:20 GMT\n", true},
		{HTTP_GET, "", 200, "Cache-Control: s-maxage=60\n", true},
		/* heuristics off: nothing explicit, no validator */
		{HTTP_GET, "", 200, "Content-Type: text/html\n", false},
		{HTTP_GET, "", 200, "Cache-Control: public\n", false},
		/* a validator alone, on a heuristically cacheable status */
		{HTTP_GET, "", 200, "ETag: \"v\"\n", true},
		{HTTP_GET, "", 200, "Last-Modified: Tue, 14 Nov 2023 20:00:00 GMT\n", true},
		{HTTP_GET, "", 302, "ETag: \"v\"\n", false},
		{HTTP_GET, "", 302, "Cache-Control: max-age=60\n", true},
		{HTTP_GET, "", 404, "Cache-Control: max-age=60\n", true},
		{HTTP_GET, "", 301, "Cache-Control: max-age=60\n", true},
		{HTTP_GET, "", 206, "Cache-Control: max-age=60\n", false},
		{HTTP_GET, "", 500, "Cache-Control: max-age=60\n", false},
		{HTTP_GET, "", 503, "Cache-Control: max-age=60\n", false},
		{HTTP_GET, "", 299, "Cache-Control: max-age=60\n", false},
		{HTTP_GET, "", 200, "Cache-Control: max-age=60, no-store\n", false},
		{HTTP_GET, "", 200, "Cache-Control: max-age=60\nCache-Control: no-store\n", false},
		{HTTP_GET, "", 200, "Cache-Control: private, max-age=60\n", false},
		{HTTP_GET, "", 200, "Cache-Control: private=\"X\", max-age=60\n", false},
		{HTTP_GET, "", 200, "Cache-Control: public, private, max-age=60\n", false},
		{HTTP_GET, "", 200, "Cache-Control: max-age=60\nSet-Cookie: a=b\n", false},
		{HTTP_GET, "", 200, "Cache-Control: public, max-age=60\nSet-Cookie: a=b\n", true},
		{HTTP_GET, "", 200, "Cache-Control: max-age=60\nVary: *\n", false},
		{HTTP_GET, "", 200, "Cache-Control: max-age=60\nVary: Accept, *\n", false},
		{HTTP_GET, "Authorization: Basic eDp5\n", 200, "Cache-Control: max-age=60\n", false},
		{HTTP_GET, "Authorization: Basic eDp5\n", 200, "Cache-Control: public, max-age=60\n",
		 true},
		{HTTP_GET, "Authorization: Basic eDp5\n", 200, "Cache-Control: s-maxage=60\n", true},
		{HTTP_GET, "Authorization: Basic eDp5\n", 200,
		 "Cache-Control: max-age=60, must-revalidate\n", true},
		{HTTP_GET, "Cache-Control: no-store\n", 200, "Cache-Control: max-age=60\n", false},
		{HTTP_HEAD, "", 200, "Cache-Control: max-age=60\n", false},
		{HTTP_POST, "", 200, "Cache-Control: max-age=60\n", false},
	};
	for (unsigned i = 0; i < SK_ARRAY_LEN(cases); i++) {
		const struct sto_case *k = &cases[i];
		setup_cache(sizeof(mem), 1024);
		struct msg m;
		struct http_cache_req rq = req_of(k->method, "/s", &m, k->req);
		enum http_cache_fill_result r = fill(&rq, k->status, k->resp, "xyz", T0);
		if ((r == HTTP_CACHE_FILL_STORED) != k->stored)
			fail_msg("case %u: %u %s -> %d", i, k->status, k->resp, r);
		assert_int_equal(C.st.entries, k->stored ? 1 : 0);
		if (!k->stored)
			assert_int_equal(C.st.bytes, 0); /* nothing half-stored */
	}
	/* public with Set-Cookie: stored, the cookie not. */
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	struct http_cache_req rq = req_of(HTTP_GET, "/c", &m, "");
	assert_int_equal(fill(&rq, 200, "Cache-Control: public, max-age=60\nSet-Cookie: s=1\nX: y\n",
			      "b", T0),
			 HTTP_CACHE_FILL_STORED);
	struct http_cache_lookup lk;
	assert_int_equal(look(&rq, T0, &lk), HTTP_CACHE_HIT);
	assert_null(field(lk.entry, "set-cookie"));
	assert_string_equal(field(lk.entry, "x"), "y");
	http_cache_release(&C, lk.entry);
}

static void test_methods(void **st)
{
	(void)st;
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	struct http_cache_req get = req_of(HTTP_GET, "/h", &m, "");
	assert_int_equal(fill(&get, 200, "Cache-Control: max-age=60\n", "full body", T0),
			 HTTP_CACHE_FILL_STORED);
	struct msg m2;
	struct http_cache_req head = req_of(HTTP_HEAD, "/h", &m2, "");
	assert_int_equal(look_body(&head, T0 + 1, "full body"), HTTP_CACHE_HIT);
	struct http_cache_req post = req_of(HTTP_POST, "/h", &m2, "");
	assert_int_equal(look_body(&post, T0 + 1, NULL), HTTP_CACHE_PASS);
	post.method = HTTP_DELETE;
	assert_int_equal(look_body(&post, T0 + 1, NULL), HTTP_CACHE_PASS);
	/* A HEAD miss never fills. */
	head.target = "/other";
	head.target_len = 6;
	assert_int_equal(look_body(&head, T0 + 1, NULL), HTTP_CACHE_MISS);
	assert_null(http_cache_begin(&C, &head, T0));
}

static void test_vary(void **st)
{
	(void)st;
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	const char *rf = "Cache-Control: max-age=60\nVary: Accept-Encoding\nContent-Encoding: gzip\n";
	struct http_cache_req gz = req_of(HTTP_GET, "/v", &m, "Accept-Encoding: gzip, br\n");
	assert_int_equal(fill(&gz, 200, rf, "GZ", T0), HTTP_CACHE_FILL_STORED);
	struct msg m2;
	struct http_cache_req q = req_of(HTTP_GET, "/v", &m2, "Accept-Encoding: GZIP,br\n");
	assert_int_equal(look_body(&q, T0 + 1, "GZ"), HTTP_CACHE_HIT); /* normalised */
	q = req_of(HTTP_GET, "/v", &m2, "Accept-Encoding: gzip\nAccept-Encoding: br\n");
	assert_int_equal(look_body(&q, T0 + 1, "GZ"), HTTP_CACHE_HIT); /* lines joined */
	q = req_of(HTTP_GET, "/v", &m2, "Accept-Encoding: br, gzip\n");
	assert_int_equal(look_body(&q, T0 + 1, NULL), HTTP_CACHE_MISS); /* order matters */
	q = req_of(HTTP_GET, "/v", &m2, "");
	assert_int_equal(look_body(&q, T0 + 1, NULL), HTTP_CACHE_MISS); /* absent != present */
	/* The identity variant beside it; both stay, each found by its own. */
	assert_int_equal(fill(&q, 200, "Cache-Control: max-age=60\nVary: accept-encoding\n", "ID",
			      T0 + 2),
			 HTTP_CACHE_FILL_STORED);
	assert_int_equal(look_body(&q, T0 + 3, "ID"), HTTP_CACHE_HIT);
	assert_int_equal(look_body(&gz, T0 + 3, "GZ"), HTTP_CACHE_HIT);
	assert_int_equal(C.st.entries, 2);
	/* A new response for one variant replaces that variant only. */
	assert_int_equal(fill(&gz, 200, rf, "GZ2", T0 + 4), HTTP_CACHE_FILL_STORED);
	assert_int_equal(C.st.entries, 2);
	assert_int_equal(C.st.replaced, 1);
	assert_int_equal(look_body(&gz, T0 + 5, "GZ2"), HTTP_CACHE_HIT);
	assert_int_equal(look_body(&q, T0 + 5, "ID"), HTTP_CACHE_HIT);
	/* Vary on two fields, one of them case-sensitive. */
	q = req_of(HTTP_GET, "/w", &m2, "Accept-Language: en\nX-Mode: A\n");
	assert_int_equal(fill(&q, 200, "Cache-Control: max-age=60\nVary: Accept-Language, X-Mode\n",
			      "w", T0),
			 HTTP_CACHE_FILL_STORED);
	struct msg m3;
	struct http_cache_req q2 = req_of(HTTP_GET, "/w", &m3, "X-Mode: A\nAccept-Language: EN\n");
	assert_int_equal(look_body(&q2, T0 + 1, "w"), HTTP_CACHE_HIT);
	q2 = req_of(HTTP_GET, "/w", &m3, "X-Mode: a\nAccept-Language: en\n");
	assert_int_equal(look_body(&q2, T0 + 1, NULL), HTTP_CACHE_MISS);
	/* Purge takes every variant. */
	assert_int_equal(http_cache_purge(&C, "example.com", 11, "/v", 2), 2);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(look_body(&gz, T0 + 5, NULL), HTTP_CACHE_MISS);
	assert_int_equal(C.st.purged, 2);
	/* An operator's PURGE: counted apart, even when nothing was stored. */
	assert_int_equal(C.st.purges, 0);
	assert_int_equal(http_cache_purge_request(&C, "EXAMPLE.com", 11, "/v", 2), 0);
	assert_int_equal(C.st.purges, 1);
	assert_int_equal(C.st.purged, 2);
}

static void test_coalescing(void **st)
{
	(void)st;
	setup_cache(sizeof(mem), 1024);
	struct msg m, rm;
	struct http_cache_req rq = req_of(HTTP_GET, "/co", &m, "");
	struct http_cache_lookup lk;
	assert_int_equal(look(&rq, T0, &lk), HTTP_CACHE_MISS);
	struct http_cache_entry *f = http_cache_begin(&C, &rq, T0);
	assert_non_null(f);
	int queue;
	http_cache_fill_set_user(f, &queue);
	/* Concurrent lookups see PENDING with the fill, before and after the
	 * head, until the end. */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(look(&rq, T0, &lk), HTTP_CACHE_PENDING);
		assert_ptr_equal(lk.fill, f);
		assert_ptr_equal(http_cache_fill_user(lk.fill), &queue);
		assert_null(lk.entry);
	}
	/* A no-cache request does not wait for the fill: it goes upstream. */
	struct msg mn;
	struct http_cache_req nc = req_of(HTTP_GET, "/co", &mn, "Cache-Control: no-cache\n");
	assert_int_equal(look(&nc, T0, &lk), HTTP_CACHE_MISS);
	msg_set(&rm, "Cache-Control: max-age=60\n");
	struct http_cache_resp rs = {200, rm.f, rm.n};
	assert_int_equal(http_cache_head(&C, f, &rq, &rs, T0, NULL), HTTP_CACHE_FILL_OK);
	assert_int_equal(http_cache_body(&C, f, "abc", 3), HTTP_CACHE_FILL_OK);
	assert_int_equal(look(&rq, T0, &lk), HTTP_CACHE_PENDING); /* never half visible */
	assert_int_equal(http_cache_end(&C, f, T0), HTTP_CACHE_FILL_STORED);
	assert_int_equal(look_body(&rq, T0, "abc"), HTTP_CACHE_HIT); /* the waiters' re-lookup */
	assert_int_equal(C.st.coalesced, 101);

	/* A fill that turns out not storable: dropped at the head, and the
	 * next lookup is a MISS (the proxy forwards its waiters). */
	struct http_cache_req r2 = req_of(HTTP_GET, "/nc", &m, "");
	f = http_cache_begin(&C, &r2, T0);
	assert_int_equal(look(&r2, T0, &lk), HTTP_CACHE_PENDING);
	msg_set(&rm, "Cache-Control: private, max-age=60\n");
	rs = (struct http_cache_resp){200, rm.f, rm.n};
	assert_int_equal(http_cache_head(&C, f, &r2, &rs, T0, NULL), HTTP_CACHE_FILL_DROPPED);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(look(&r2, T0, &lk), HTTP_CACHE_MISS);
	/* An aborted fill: gone whole. */
	f = http_cache_begin(&C, &r2, T0);
	msg_set(&rm, "Cache-Control: max-age=60\n");
	rs = (struct http_cache_resp){200, rm.f, rm.n};
	assert_int_equal(http_cache_head(&C, f, &r2, &rs, T0, NULL), HTTP_CACHE_FILL_OK);
	char big[5000];
	memset(big, 'z', sizeof(big));
	assert_int_equal(http_cache_body(&C, f, big, sizeof(big)), HTTP_CACHE_FILL_OK);
	http_cache_abort(&C, f);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(look(&r2, T0, &lk), HTTP_CACHE_MISS);
	assert_int_equal(C.st.entries, 1);
	assert_int_equal(C.st.bytes, 2048); /* only /co's: a meta chunk and a body chunk */
}

/* Entries of ~1 chunk in a pool of a few chunks: the least recently used
 * goes first. */
static void test_lru(void **st)
{
	(void)st;
	/* 16 chunks of 1 KiB, roughly */
	setup_cache(16 * (1024 + 4 + 160 + 8) + 256, 1024);
	uint32_t nch = C.nchunks;
	assert_true(nch >= 8 && nch <= 16);
	char body[600];
	memset(body, 'q', sizeof(body) - 1);
	body[sizeof(body) - 1] = 0;
	struct msg m;
	char t[16];
	/* Each entry: one meta chunk and one body chunk. */
	unsigned n = nch / 2;
	for (unsigned i = 0; i < n; i++) {
		snprintf(t, sizeof(t), "/%u", i);
		struct http_cache_req rq = req_of(HTTP_GET, t, &m, "");
		assert_int_equal(fill(&rq, 200, "Cache-Control: max-age=600\n", body, T0),
				 HTTP_CACHE_FILL_STORED);
	}
	assert_int_equal(C.st.evicted, 0);
	/* Touch /0: /1 is now the oldest. */
	struct http_cache_req r0 = req_of(HTTP_GET, "/0", &m, "");
	assert_int_equal(look_body(&r0, T0 + 1, body), HTTP_CACHE_HIT);
	struct msg m2;
	struct http_cache_req nw = req_of(HTTP_GET, "/new", &m2, "");
	assert_int_equal(fill(&nw, 200, "Cache-Control: max-age=600\n", body, T0 + 2),
			 HTTP_CACHE_FILL_STORED);
	assert_true(C.st.evicted >= 1);
	struct http_cache_req r1 = req_of(HTTP_GET, "/1", &m, "");
	assert_int_equal(look_body(&r1, T0 + 3, NULL), HTTP_CACHE_MISS);
	r0 = req_of(HTTP_GET, "/0", &m, "");
	assert_int_equal(look_body(&r0, T0 + 3, body), HTTP_CACHE_HIT);
	assert_int_equal(look_body(&nw, T0 + 3, body), HTTP_CACHE_HIT);
	/* An entry bigger than max_entry (size / 8) is dropped, not stored. */
	char huge[8000];
	memset(huge, 'h', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = 0;
	struct http_cache_req rh = req_of(HTTP_GET, "/huge", &m, "");
	assert_int_equal(fill(&rh, 200, "Cache-Control: max-age=600\n", huge, T0),
			 HTTP_CACHE_FILL_DROPPED);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(look_body(&rh, T0, NULL), HTTP_CACHE_MISS);
}

static void test_read_across_eviction(void **st)
{
	(void)st;
	setup_cache_max(12 * (1024 + 4 + 160 + 8) + 256, 1024, 4096);
	char body[2000];
	for (size_t i = 0; i < sizeof(body) - 1; i++)
		body[i] = (char)('0' + i % 10);
	body[sizeof(body) - 1] = 0;
	struct msg m;
	struct http_cache_req ra = req_of(HTTP_GET, "/held", &m, "");
	assert_int_equal(fill(&ra, 200, "Cache-Control: max-age=600\n", body, T0),
			 HTTP_CACHE_FILL_STORED);
	struct http_cache_lookup lk;
	assert_int_equal(look(&ra, T0, &lk), HTTP_CACHE_HIT);
	struct http_cache_entry *held = lk.entry;
	/* A second reader of the same entry. */
	struct http_cache_lookup lk2;
	assert_int_equal(look(&ra, T0, &lk2), HTTP_CACHE_HIT);
	assert_ptr_equal(lk2.entry, held);
	/* Fill until /held is evicted. */
	char t[16];
	for (unsigned i = 0; C.st.evicted == 0 && i < 100; i++) {
		snprintf(t, sizeof(t), "/f%u", i);
		struct msg mi;
		struct http_cache_req ri = req_of(HTTP_GET, t, &mi, "");
		(void)fill(&ri, 200, "Cache-Control: max-age=600\n", "small", T0 + 1);
	}
	assert_true(C.st.evicted >= 1);
	struct http_cache_req rb = req_of(HTTP_GET, "/held", &m, "");
	assert_int_equal(look_body(&rb, T0 + 1, NULL), HTTP_CACHE_MISS);
	/* The readers still see the whole body. */
	char got[4096];
	size_t n = 0;
	struct http_cache_iter it;
	const uint8_t *p;
	size_t pn;
	for (bool more = http_cache_body_first(&C, held, &it, &p, &pn); more;
	     more = http_cache_body_next(&C, &it, &p, &pn)) {
		memcpy(got + n, p, pn);
		n += pn;
	}
	assert_int_equal(n, strlen(body));
	assert_memory_equal(got, body, n);
	uint32_t free_before = C.free_chunks;
	http_cache_release(&C, held);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(C.free_chunks, free_before); /* one reader left */
	http_cache_release(&C, lk2.entry);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(C.free_chunks, free_before + 3); /* freed at the last release */
}

/* Revalidate /r: lookup STALE, begin, head with `status` and fields. */
static enum http_cache_fill_result revalidate(struct http_cache_req *rq, uint16_t status,
					      const char *fields, uint64_t now,
					      struct http_cache_entry **out, const char *etag)
{
	struct http_cache_lookup lk;
	assert_int_equal(look(rq, now, &lk), HTTP_CACHE_STALE);
	if (etag)
		assert_string_equal(lk.etag, etag);
	struct http_cache_entry *f = http_cache_begin(&C, rq, now);
	assert_non_null(f);
	assert_int_equal(look(rq, now, &lk), HTTP_CACHE_PENDING);
	struct msg rm;
	msg_set(&rm, fields);
	struct http_cache_resp rs = {status, rm.f, rm.n};
	enum http_cache_fill_result r = http_cache_head(&C, f, rq, &rs, now, out);
	assert_int_equal(http_cache_check(&C), 0);
	if (r == HTTP_CACHE_FILL_OK) {
		assert_int_equal(http_cache_body(&C, f, "NEW", 3), HTTP_CACHE_FILL_OK);
		r = http_cache_end(&C, f, now);
	}
	return r;
}

static void test_304_refresh(void **st)
{
	(void)st;
	for (int held = 0; held < 2; held++) {
		setup_cache(sizeof(mem), 1024);
		struct msg m;
		struct http_cache_req rq = req_of(HTTP_GET, "/r", &m, "Accept-Encoding: gzip\n");
		char body[2500];
		memset(body, 'B', sizeof(body) - 1);
		body[sizeof(body) - 1] = 0;
		assert_int_equal(fill(&rq, 200,
				      "Cache-Control: max-age=10\nETag: \"v1\"\n"
				      "Last-Modified: Tue, 14 Nov 2023 20:00:00 GMT\n"
				      "X-Old: keep\nX-Swap: old\nVary: Accept-Encoding\n",
				      body, T0),
				 HTTP_CACHE_FILL_STORED);
		struct http_cache_lookup lk = {0};
		if (held) /* a reader still sending the old one */
			assert_int_equal(look(&rq, T0, &lk), HTTP_CACHE_HIT);
		struct http_cache_lookup sl;
		assert_int_equal(look(&rq, T0 + 20, &sl), HTTP_CACHE_STALE);
		assert_string_equal(sl.last_modified, "Tue, 14 Nov 2023 20:00:00 GMT");
		struct http_cache_entry *out;
		assert_int_equal(revalidate(&rq, 304,
					    "Cache-Control: max-age=100\nETag: \"v1\"\nX-Swap: new\n"
					    "Date: Tue, 14 Nov 2023 22:13:40 GMT\nConnection: close\n",
					    T0 + 20, &out, "\"v1\""),
				 HTTP_CACHE_FILL_REFRESHED);
		assert_non_null(out);
		assert_int_equal(http_cache_status(out), 200);
		assert_string_equal(field(out, "x-swap"), "new");
		assert_string_equal(field(out, "x-old"), "keep");
		assert_string_equal(field(out, "cache-control"), "max-age=100");
		assert_null(field(out, "connection"));
		assert_int_equal(http_cache_body_len(out), strlen(body));
		http_cache_release(&C, out);
		assert_int_equal(http_cache_check(&C), 0);
		if (held) {
			/* the old reader's view is unchanged */
			assert_string_equal(field(lk.entry, "x-swap"), "old");
			assert_int_equal(http_cache_body_len(lk.entry), strlen(body));
			http_cache_release(&C, lk.entry);
			assert_int_equal(http_cache_check(&C), 0);
		}
		assert_int_equal(C.st.entries, 1);
		assert_int_equal(C.st.revalidated, 1);
		assert_int_equal(look_body(&rq, T0 + 110, body), HTTP_CACHE_HIT); /* fresh for 100 */
		assert_int_equal(look_body(&rq, T0 + 121, NULL), HTTP_CACHE_STALE);
		/* A non-304 answer replaces it. */
		assert_int_equal(revalidate(&rq, 200, "Cache-Control: max-age=50\nETag: \"v2\"\n",
					    T0 + 130, &out, "\"v1\""),
				 HTTP_CACHE_FILL_STORED);
		assert_int_equal(C.st.entries, 1);
		assert_int_equal(look_body(&rq, T0 + 131, "NEW"), HTTP_CACHE_HIT);
		/* A 304 that makes the response no-store: sent once, not kept. */
		assert_int_equal(revalidate(&rq, 304, "Cache-Control: no-store\n", T0 + 190, &out,
					    "\"v2\""),
				 HTTP_CACHE_FILL_REFRESHED);
		assert_non_null(out);
		assert_int_equal(http_cache_body_len(out), 3);
		http_cache_release(&C, out);
		assert_int_equal(http_cache_check(&C), 0);
		assert_int_equal(C.st.entries, 0);
		assert_int_equal(C.st.bytes, 0);
	}
}

/* Two no-cache requests revalidate one stale entry at once (the proxy under
 * ab -c 16 with Cache-Control: no-cache): the first 304 makes a refreshed
 * copy that replaces the entry, and the second 304, whose entry is gone,
 * must refresh the copy its ETag selects (RFC 9111 4.3.4), not be
 * DROPPED (which sent the request upstream a second time).  A 304 whose
 * validator selects nothing stored is still DROPPED. */
static void test_304_concurrent(void **st)
{
	(void)st;
	setup_cache(sizeof(mem), 1024);
	struct msg m;
	struct http_cache_req rq = req_of(HTTP_GET, "/c", &m, "Cache-Control: no-cache\n");
	assert_int_equal(fill(&rq, 200, "Cache-Control: max-age=3600\nETag: \"e1\"\n", "BODY",
			      T0),
			 HTTP_CACHE_FILL_STORED);
	struct http_cache_lookup lk;
	assert_int_equal(look(&rq, T0 + 1, &lk), HTTP_CACHE_STALE);
	struct http_cache_entry *fa = http_cache_begin(&C, &rq, T0 + 1);
	assert_int_equal(look(&rq, T0 + 1, &lk), HTTP_CACHE_STALE); /* no-cache: no wait */
	struct http_cache_entry *fb = http_cache_begin(&C, &rq, T0 + 1);
	assert_int_equal(look(&rq, T0 + 1, &lk), HTTP_CACHE_STALE);
	struct http_cache_entry *fc = http_cache_begin(&C, &rq, T0 + 1);
	assert_non_null(fa);
	assert_non_null(fb);
	assert_non_null(fc);
	assert_int_equal(http_cache_check(&C), 0);
	struct msg rm;
	msg_set(&rm, "Cache-Control: max-age=3600\nETag: \"e1\"\n");
	struct http_cache_resp r304 = {304, rm.f, rm.n};
	struct http_cache_entry *out;
	assert_int_equal(http_cache_head(&C, fa, &rq, &r304, T0 + 2, &out),
			 HTTP_CACHE_FILL_REFRESHED);
	http_cache_release(&C, out);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(http_cache_head(&C, fb, &rq, &r304, T0 + 2, &out),
			 HTTP_CACHE_FILL_REFRESHED);
	assert_non_null(out);
	assert_int_equal(http_cache_body_len(out), 4);
	http_cache_release(&C, out);
	assert_int_equal(http_cache_check(&C), 0);
	/* a 304 naming another ETag selects nothing: DROPPED */
	struct msg om;
	msg_set(&om, "ETag: \"other\"\n");
	struct http_cache_resp o304 = {304, om.f, om.n};
	assert_int_equal(http_cache_head(&C, fc, &rq, &o304, T0 + 2, &out),
			 HTTP_CACHE_FILL_DROPPED);
	assert_int_equal(http_cache_check(&C), 0);
	assert_int_equal(C.st.entries, 1);
	assert_int_equal(C.st.revalidated, 2);
	struct http_cache_req plain = req_of(HTTP_GET, "/c", &m, "Accept: */*\n");
	assert_int_equal(look_body(&plain, T0 + 3, "BODY"), HTTP_CACHE_HIT);
}

static void count_stat(void *ctx, const char *name, uint64_t v)
{
	(void)v;
	assert_true(strncmp(name, "cache.", 6) == 0);
	(*(unsigned *)ctx)++;
}

static void test_stats(void **st)
{
	(void)st;
	setup_cache(sizeof(mem), 1024);
	unsigned n = 0;
	http_cache_stats(&C, count_stat, &n);
	assert_int_equal(n, 15);
	struct http_cache_config cfg;
	http_cache_config_default(&cfg);
	assert_int_equal(http_cache_init(&C, mem, 100, &cfg), -SK_EINVAL);
	cfg.chunk_size = 1000;
	assert_int_equal(http_cache_init(&C, mem, sizeof(mem), &cfg), -SK_EINVAL);
	/* any alignment */
	cfg.chunk_size = 1024;
	assert_int_equal(http_cache_init(&C, mem + 3, sizeof(mem) - 3, &cfg), 0);
	assert_int_equal(http_cache_check(&C), 0);
	struct msg m;
	struct http_cache_req rq = req_of(HTTP_GET, "/", &m, "");
	assert_int_equal(fill(&rq, 200, "Cache-Control: max-age=1\n", "x", T0),
			 HTTP_CACHE_FILL_STORED);
	assert_true((uintptr_t)C.chunks + (size_t)C.nchunks * 1024 <= (uintptr_t)mem + sizeof(mem));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_and_hit),
		cmocka_unit_test(test_body_sizes),
		cmocka_unit_test(test_freshness_lifetime),
		cmocka_unit_test(test_age),
		cmocka_unit_test(test_request_directives),
		cmocka_unit_test(test_response_no_cache),
		cmocka_unit_test(test_storable),
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_vary),
		cmocka_unit_test(test_coalescing),
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_read_across_eviction),
		cmocka_unit_test(test_304_refresh),
		cmocka_unit_test(test_304_concurrent),
		cmocka_unit_test(test_stats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
