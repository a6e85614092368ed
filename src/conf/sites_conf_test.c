/* sites_conf_test.c — the configuration file's parser: every directive
 * parsed into the model, every error with its exact line:column and
 * message, the lexer's edges, the arena bound, and the site and route
 * lookups (Host and path). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/sites_conf.h"
#include "conf/opts.h"

static struct sconf conf;
static struct sconf_err err;
static char *arena;

static int parse_dir(const char *text, const char *dir)
{
	size_t len = strlen(text);
	size_t asize = sites_conf_arena_bound(len);
	free(arena);
	arena = malloc(asize);
	assert_non_null(arena);
	/* The text without a NUL after it: the parser must not need one. */
	char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, text, len);
	int rc = sites_conf_parse(copy, len, dir, arena, asize, &conf, &err);
	free(copy);
	return rc;
}

static const struct sconf *ok_dir(const char *text, const char *dir)
{
	int rc = parse_dir(text, dir);
	if (rc != 0)
		fail_msg("refused: %u:%u: %s\n--\n%s", err.pos.line, err.pos.col, err.msg, text);
	return &conf;
}

static const struct sconf *ok(const char *text)
{
	return ok_dir(text, "");
}

/* 0 when text is refused at line:col with msg in the message; else 1
 * and what came instead, printed. */
static int bad_check(const char *text, uint32_t line, uint32_t col, const char *msg)
{
	int rc = parse_dir(text, "");
	if (rc == 0) {
		print_error("accepted, expected %u:%u %s\n--\n%s\n", line, col, msg, text);
		return 1;
	}
	if (err.pos.line != line || err.pos.col != col || !strstr(err.msg, msg)) {
		print_error("got %u:%u: %s\nexpected %u:%u: ...%s...\n--\n%s\n", err.pos.line,
			    err.pos.col, err.msg, line, col, msg, text);
		return 1;
	}
	return 0;
}

static void bad_at(const char *text, uint32_t line, uint32_t col, const char *msg)
{
	if (bad_check(text, line, col, msg))
		fail();
}

#define SITE_HEAD "site a.test {\n  listen 127.0.0.1:8080;\n"
/* A route body inside a minimal site: the route opens on line 3, col 3. */
#define IN_ROUTE(body) SITE_HEAD "  route / { " body " }\n}\n"

/* ---- every directive into the model ---- */

static void test_example(void **state)
{
	(void)state;
	const struct sconf *c = ok_dir("# examples/sites.conf\n"
				       "max_body 1m;\n"
				       "site a.test {\n"
				       "    listen 127.0.0.1:8080;\n"
				       "    listen 127.0.0.1:8443 tls;\n"
				       "    tls certs/a.crt /abs/a.key;\n"
				       "    header X-Site a;\n"
				       "    route /        { files sites/a; }\n"
				       "    route /api/    { proxy 127.0.0.1:9090; cache 64m; }\n"
				       "    route /old/    { redirect 301 /new/$rest; }\n"
				       "    route = /health { return 200 \"ok\\n\"; }\n"
				       "}\n",
				       "/etc/skiff");
	assert_int_equal(c->nsites, 1);
	assert_int_equal(c->nlisten, 2);
	assert_int_equal(c->max_body, 1 << 20);
	const struct sconf_listen *l = &c->listen[1];
	assert_true(sk_addr_is_v4(&l->addr));
	assert_int_equal(sk_addr_ip4(&l->addr), SK_IP4(127, 0, 0, 1));
	assert_int_equal(l->port, 8443);
	assert_true(l->tls);
	assert_false(l->any || l->v6);
	assert_int_equal(l->pos.line, 5);
	assert_int_equal(l->pos.col, 5);
	assert_false(c->listen[0].tls);
	const struct sconf_site *s = &c->sites[0];
	assert_int_equal(s->nnames, 1);
	assert_string_equal(s->names[0], "a.test");
	assert_int_equal(s->listen_mask, 3);
	assert_string_equal(s->cert, "/etc/skiff/certs/a.crt");
	assert_string_equal(s->key, "/abs/a.key");
	assert_int_equal(s->nhdr, 1);
	assert_string_equal(s->hdr[0].name, "X-Site");
	assert_string_equal(s->hdr[0].value, "a");
	assert_int_equal(s->nroutes, 4);
	assert_int_equal(s->pos.line, 3);
	assert_int_equal(s->pos.col, 1);
	const struct sconf_route *r = &s->routes[0];
	assert_string_equal(r->path, "/");
	assert_false(r->exact);
	assert_int_equal(r->kind, SCONF_FILES);
	assert_string_equal(r->root, "/etc/skiff/sites/a");
	assert_null(r->cache_control);
	assert_int_equal(r->pos.line, 8);
	assert_int_equal(r->pos.col, 5);
	r = &s->routes[1];
	assert_int_equal(r->kind, SCONF_PROXY);
	assert_int_equal(r->nup, 1);
	assert_int_equal(r->up[0].port, 9090);
	assert_int_equal(sk_addr_ip4(&r->up[0].addr), SK_IP4(127, 0, 0, 1));
	assert_string_equal(r->up[0].text, "127.0.0.1:9090");
	assert_int_equal(r->cache_bytes, 64ull << 20);
	assert_false(r->host_upstream);
	assert_false(r->body_on_get);
	r = &s->routes[2];
	assert_int_equal(r->kind, SCONF_REDIRECT);
	assert_int_equal(r->status, 301);
	assert_string_equal(r->target, "/new/$rest");
	r = &s->routes[3];
	assert_true(r->exact);
	assert_string_equal(r->path, "/health");
	assert_int_equal(r->kind, SCONF_RETURN);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->body, "ok\n");
}

static void test_top_level(void **state)
{
	(void)state;
	const struct sconf *c = ok("workers 4;\nmax_conns 1000000;\nmax_body 64k;\n"
				   "header_timeout 500ms;\nbody_timeout 10s;\nsend_timeout 2m;\n"
				   "keepalive_timeout 1h;\naccess_log logs/access.log;\n"
				   "error_log /var/log/e.log;\n" SITE_HEAD "  route / { app; }\n}\n");
	assert_int_equal(c->workers, 4);
	assert_int_equal(c->max_conns, 1000000);
	assert_int_equal(c->http2_sessions, 0); /* not given: sites_conf_defaults' */
	assert_int_equal(c->max_body, 64 << 10);
	assert_int_equal(c->header_timeout, 500 * SK_NS_PER_MS);
	assert_int_equal(c->body_timeout, 10 * SK_NS_PER_S);
	assert_int_equal(c->send_timeout, 120 * SK_NS_PER_S);
	assert_int_equal(c->keepalive_timeout, 3600 * SK_NS_PER_S);
	assert_string_equal(c->access_log, "logs/access.log");
	assert_string_equal(c->error_log, "/var/log/e.log");
	assert_int_equal(c->access_log_pos.line, 8);
	assert_int_equal(c->error_log_pos.line, 9);

	c = ok("access_log off;\nerror_log stderr;\nmax_body 2g;\nheader_timeout 7;\n" SITE_HEAD
	       "  route / { app; }\n}\n");
	assert_null(c->access_log);
	assert_null(c->error_log);
	assert_int_equal(c->max_body, 2ull << 30);
	assert_int_equal(c->header_timeout, 7 * SK_NS_PER_S);
	assert_int_equal(c->workers, 0); /* not given */
	c = ok("http2_sessions 4096;\n" SITE_HEAD "  route / { app; }\n}\n");
	assert_int_equal(c->http2_sessions, 4096);
	c = ok("max_conns 10;\nhttp2_sessions 1;\n" SITE_HEAD "  route / { app; }\n}\n");
	assert_int_equal(c->http2_sessions, 1);
	assert_int_equal(c->max_conns, 10);
	c = ok("workers auto;\n" SITE_HEAD "  route / { app; }\n}\n");
	assert_int_equal(c->workers, SCONF_WORKERS_AUTO);

	/* Relative log paths join the folder. */
	c = ok_dir("access_log a.log;\n" SITE_HEAD "  route / { app; }\n}\n", "/srv/");
	assert_string_equal(c->access_log, "/srv/a.log");
	assert_false(c->access_log_json);
	c = ok("access_log a.log json;\n" SITE_HEAD "  route / { app; }\n}\n");
	assert_true(c->access_log_json);
	c = ok("access_log a.log combined;\n" SITE_HEAD "  route / { app; }\n}\n");
	assert_false(c->access_log_json);
}

/* header_area: the top level's, raised per listener by its routes'. */
static void test_header_area(void **state)
{
	(void)state;
	const struct sconf *c = ok("header_area 2k;\n"
				   "site a.test { listen 127.0.0.1:1; route / { app; }\n"
				   "  route /big/ { app; header_area 16k; } }\n"
				   "site b.test { listen 127.0.0.1:2; route / { app; header_area 512; } }\n"
				   "site c.test { listen 127.0.0.1:3; route / { app; } }\n");
	assert_int_equal(c->header_area, 2048);
	assert_int_equal(c->sites[0].routes[0].header_area, 0);
	assert_int_equal(c->sites[0].routes[1].header_area, 16384);
	assert_int_equal(sites_conf_header_area(c, 0), 16384); /* the largest on the listener */
	assert_int_equal(sites_conf_header_area(c, 1), 2048);  /* a route's smaller one: the top's */
	assert_int_equal(sites_conf_header_area(c, 2), 2048);
	c = ok(SITE_HEAD "  route / { return 200; }\n}\n");
	assert_int_equal(sites_conf_header_area(c, 0), 0); /* none given: the engine's default */
}

/* http2: on by default, ALPN h2 on every tls listener that speaks it;
 * http2 off: HTTP/1.1 only, ALPN too. */
static void test_http2(void **state)
{
	(void)state;
	const struct sconf *c = ok("site a.test {\n"
				   "  listen 127.0.0.1:80;\n"
				   "  listen 127.0.0.1:443 tls;\n"
				   "  listen 127.0.0.1:8443 tls http2 on;\n"
				   "  listen 127.0.0.1:9443 tls http2 off;\n"
				   "  listen 127.0.0.1:81 http2 off;\n"
				   "  tls c.pem k.pem;\n"
				   "  route / { app; }\n"
				   "}\n"
				   "site b.test { listen 127.0.0.1:443 tls http2 on; tls c.pem k.pem;\n"
				   "  route / { app; } }\n");
	assert_int_equal(c->nlisten, 5);
	assert_false(c->listen[0].h2_off);
	assert_false(sconf_alpn_h2(&c->listen[0])); /* not tls */
	assert_false(c->listen[1].h2_off);
	assert_true(sconf_alpn_h2(&c->listen[1]));
	assert_true(sconf_alpn_h2(&c->listen[2]));
	assert_true(c->listen[3].h2_off);
	assert_false(sconf_alpn_h2(&c->listen[3]));
	assert_true(c->listen[4].h2_off);
	c = ok("site a.test { listen 127.0.0.1:443 tls; tls c.pem k.pem; route / { app; } }\n");
	assert_true(sconf_alpn_h2(&c->listen[0])); /* the default: h2, then http/1.1 */
	/* a site that says nothing agrees with one that said off */
	c = ok("site a.test { listen 127.0.0.1:443 tls http2 off; tls c.pem k.pem; route / { app; } }\n"
	       "site b.test { listen 127.0.0.1:443 tls; tls c.pem k.pem; route / { app; } }\n");
	assert_true(c->listen[0].h2_off);
	assert_false(sconf_alpn_h2(&c->listen[0]));
}

static void test_defaults(void **state)
{
	(void)state;
	struct sconf c;
	memset(&c, 0, sizeof(c));
	c.workers = 3;
	sites_conf_defaults(&c);
	assert_int_equal(c.workers, 3);
	assert_int_equal(c.max_conns, 4096);
	assert_int_equal(c.http2_sessions, 128); /* max_conns up to 128 */
	assert_int_equal(c.max_body, 1 << 20);
	assert_int_equal(c.header_timeout, 10 * SK_NS_PER_S);
	assert_int_equal(c.body_timeout, 60 * SK_NS_PER_S);
	assert_int_equal(c.send_timeout, 60 * SK_NS_PER_S);
	assert_int_equal(c.keepalive_timeout, 60 * SK_NS_PER_S);
	assert_null(c.access_log);
	assert_null(c.error_log);
	/* http2_sessions: never more than max_conns by default; a given one kept */
	memset(&c, 0, sizeof(c));
	c.max_conns = 50;
	sites_conf_defaults(&c);
	assert_int_equal(c.http2_sessions, 50);
	memset(&c, 0, sizeof(c));
	c.http2_sessions = 300;
	sites_conf_defaults(&c);
	assert_int_equal(c.http2_sessions, 300);
}

static void test_site_directives(void **state)
{
	(void)state;
	const struct sconf *c = ok("site A.Test *.b.test x-1.c {\n"
				   "  listen *:80;\n"
				   "  listen [::1]:8080;\n"
				   "  listen [::]:443 tls;\n"
				   "  listen 0.0.0.0:81;\n"
				   "  tls \"c rt.pem\" k.pem;\n"
				   "  default;\n"
				   "  header Strict-Transport-Security \"max-age=63072000; preload\";\n"
				   "  header -Server;\n"
				   "  route / { app; }\n"
				   "}\n"
				   "site d.test { listen *:80; route / { metrics; } }\n");
	assert_int_equal(c->nsites, 2);
	assert_int_equal(c->nlisten, 4);
	const struct sconf_site *s = &c->sites[0];
	assert_int_equal(s->nnames, 3);
	assert_string_equal(s->names[0], "a.test");
	assert_string_equal(s->names[1], "*.b.test");
	assert_string_equal(s->names[2], "x-1.c");
	assert_true(c->listen[0].any);
	assert_false(c->listen[0].v6);
	assert_int_equal(c->listen[0].port, 80);
	assert_true(c->listen[1].v6);
	assert_false(c->listen[1].any);
	assert_int_equal(c->listen[1].addr.b[15], 1);
	assert_true(c->listen[2].any && c->listen[2].v6 && c->listen[2].tls);
	assert_false(c->listen[3].any);
	assert_true(sk_addr_is_v4(&c->listen[3].addr));
	assert_string_equal(s->cert, "c rt.pem");
	assert_string_equal(s->key, "k.pem");
	assert_true(s->is_default);
	assert_int_equal(s->nhdr, 2);
	assert_string_equal(s->hdr[0].value, "max-age=63072000; preload");
	assert_string_equal(s->hdr[1].name, "Server");
	assert_null(s->hdr[1].value);
	/* *:80 in the second site is the same listener. */
	assert_int_equal(c->sites[1].listen_mask, 1);
	assert_int_equal(c->sites[1].routes[0].kind, SCONF_METRICS);
	assert_false(c->sites[1].is_default);
}

static void test_route_directives(void **state)
{
	(void)state;
	const struct sconf *c = ok(SITE_HEAD
				   "  route /s/ { files /srv/s; cache_control \"public, max-age=60\"; "
				   "header X-A 1; header -X-B; }\n"
				   "  route /p/ { proxy 127.0.0.1:1 [2001:2::1]:8080 10.0.0.2:3; cache off; "
				   "proxy_host upstream; body_on_get allow; }\n"
				   "  route /q/ { proxy_host keep; body_on_get refuse; cache 0; proxy 127.0.0.1:2; }\n"
				   "  route /r { redirect 308 https://$host$request_uri; }\n"
				   "  route = /e { return 204; }\n"
				   "  route /t { return 599 ''; }\n"
				   "  route /m { metrics; }\n"
				   "  route /a { app; }\n"
				   "}\n");
	const struct sconf_site *s = &c->sites[0];
	assert_int_equal(s->nroutes, 8);
	const struct sconf_route *r = &s->routes[0];
	assert_string_equal(r->root, "/srv/s");
	assert_string_equal(r->cache_control, "public, max-age=60");
	assert_int_equal(r->nhdr, 2);
	assert_string_equal(r->hdr[0].name, "X-A");
	assert_string_equal(r->hdr[0].value, "1");
	assert_null(r->hdr[1].value);
	r = &s->routes[1];
	assert_int_equal(r->nup, 3);
	assert_false(sk_addr_is_v4(&r->up[1].addr));
	assert_int_equal(r->up[1].port, 8080);
	assert_string_equal(r->up[1].text, "[2001:2::1]:8080");
	assert_int_equal(r->cache_bytes, 0);
	assert_true(r->host_upstream);
	assert_true(r->body_on_get);
	r = &s->routes[2];
	assert_false(r->host_upstream);
	assert_false(r->body_on_get);
	assert_int_equal(r->kind, SCONF_PROXY);
	r = &s->routes[3];
	assert_int_equal(r->status, 308);
	assert_string_equal(r->target, "https://$host$request_uri");
	r = &s->routes[4];
	assert_int_equal(r->status, 204);
	assert_null(r->body);
	r = &s->routes[5];
	assert_int_equal(r->status, 599);
	assert_string_equal(r->body, "''");
	assert_int_equal(s->routes[6].kind, SCONF_METRICS);
	assert_int_equal(s->routes[7].kind, SCONF_APP);
}

/* The proxy's upstream options: `skiff proxy`'s flags as directives, each
 * into its field; a proxy route without them has every field zero (not
 * given: router/sites_proxy.c keeps the flags' defaults). */
static void test_proxy_options(void **state)
{
	(void)state;
	const struct sconf *c = ok(SITE_HEAD
				   "  route /a/ {\n"
				   "    proxy 127.0.0.1:1 127.0.0.1:2;\n"
				   "    balance least;\n"
				   "    pool 0;\n"
				   "    connect_timeout 1h;\n"
				   "    first_byte_timeout 24h;\n"
				   "    upstream_idle_timeout 500ms;\n"
				   "    fail_max 1000;\n"
				   "    fail_timeout 2m;\n"
				   "    x_cache off;\n"
				   "    purge_allow 127.0.0.0/8 ::1 2001:db8::/32 198.18.0.3 10.1.2.3/0;\n"
				   "  }\n"
				   "  route /b/ { proxy 127.0.0.1:1; }\n"
				   "  route /c/ { purge_allow none; x_cache on; balance rr; pool 65536; "
				   "fail_max 1; proxy 127.0.0.1:1; connect_timeout 1ms; }\n"
				   "}\n");
	const struct sconf_site *s = &c->sites[0];
	const struct sconf_route *r = &s->routes[0];
	assert_int_equal(r->kind, SCONF_PROXY);
	assert_int_equal(r->balance, SCONF_BALANCE_LEAST);
	assert_true(r->pool_given);
	assert_int_equal(r->pool, 0);
	assert_int_equal(r->connect_timeout, 3600 * SK_NS_PER_S);
	assert_int_equal(r->first_byte_timeout, 86400 * SK_NS_PER_S);
	assert_int_equal(r->upstream_idle_timeout, 500 * SK_NS_PER_MS);
	assert_int_equal(r->fail_max, 1000);
	assert_int_equal(r->fail_timeout, 120 * SK_NS_PER_S);
	assert_true(r->no_x_cache);
	assert_true(r->purge_allow_given);
	assert_int_equal(r->npurge_allow, 5);
	/* 127.0.0.0/8: the mapped address, /104 */
	struct sk_addr a = sk_addr_v4(SK_IP4(127, 0, 0, 0));
	assert_memory_equal(&r->purge_allow[0].addr, &a, sizeof(a));
	assert_int_equal(r->purge_allow[0].len, 104);
	/* ::1/128 */
	memset(&a, 0, sizeof(a));
	a.b[15] = 1;
	assert_memory_equal(&r->purge_allow[1].addr, &a, sizeof(a));
	assert_int_equal(r->purge_allow[1].len, 128);
	/* 2001:db8::/32 */
	memset(&a, 0, sizeof(a));
	a.b[0] = 0x20, a.b[1] = 0x01, a.b[2] = 0x0d, a.b[3] = 0xb8;
	assert_memory_equal(&r->purge_allow[2].addr, &a, sizeof(a));
	assert_int_equal(r->purge_allow[2].len, 32);
	/* one IPv4 address: /128 of the mapped form */
	a = sk_addr_v4(SK_IP4(198, 18, 0, 3));
	assert_memory_equal(&r->purge_allow[3].addr, &a, sizeof(a));
	assert_int_equal(r->purge_allow[3].len, 128);
	/* /0 of IPv4: every IPv4 address, the host bits cleared */
	a = sk_addr_v4(0);
	assert_memory_equal(&r->purge_allow[4].addr, &a, sizeof(a));
	assert_int_equal(r->purge_allow[4].len, 96);
	/* none given: every field zero */
	r = &s->routes[1];
	assert_int_equal(r->balance, SCONF_BALANCE_RR);
	assert_false(r->pool_given);
	assert_int_equal(r->pool, 0);
	assert_int_equal(r->connect_timeout, 0);
	assert_int_equal(r->first_byte_timeout, 0);
	assert_int_equal(r->upstream_idle_timeout, 0);
	assert_int_equal(r->fail_max, 0);
	assert_int_equal(r->fail_timeout, 0);
	assert_false(r->no_x_cache);
	assert_false(r->purge_allow_given);
	assert_int_equal(r->npurge_allow, 0);
	/* before `proxy` too; the other ends of the ranges; none */
	r = &s->routes[2];
	assert_int_equal(r->kind, SCONF_PROXY);
	assert_true(r->purge_allow_given);
	assert_int_equal(r->npurge_allow, 0);
	assert_false(r->no_x_cache);
	assert_int_equal(r->balance, SCONF_BALANCE_RR);
	assert_true(r->pool_given);
	assert_int_equal(r->pool, 65536);
	assert_int_equal(r->fail_max, 1);
	assert_int_equal(r->connect_timeout, SK_NS_PER_MS);
}

static void test_lexer(void **state)
{
	(void)state;
	/* Comments anywhere, CRLF, tabs, no space before '{' or ';', escapes. */
	const struct sconf *c = ok("# a comment\r\n"
				   "site\ta.test{listen 127.0.0.1:1;# listen 127.0.0.1:2;\r\n"
				   "route /{return 200 \"a\\\"b\\\\c\\td\\ne#f;{}\";}}");
	const struct sconf_site *s = &c->sites[0];
	assert_int_equal(c->nlisten, 1);
	assert_string_equal(s->routes[0].body, "a\"b\\c\td\ne#f;{}");
	assert_int_equal(s->routes[0].pos.line, 3);
	assert_int_equal(s->routes[0].pos.col, 1);
	/* A word ends at '#': the rest of the line is a comment. */
	c = ok("site a.test { listen 127.0.0.1:1; route /x#y\n { app; } }");
	assert_string_equal(c->sites[0].routes[0].path, "/x");
}

/* ---- errors: the exact position and message ---- */

struct bad {
	const char *text;
	uint32_t line, col;
	const char *msg;
};

static const struct bad bads[] = {
	/* lexing */
	{"site a.test {\n  listen 127.0.0.1:1;\n  route / { return 200 \"abc; }\n}\n", 3, 24,
	 "the quoted string has no closing '\"' on its line"},
	{"workers \"4", 1, 9, "no closing"},
	{"workers \"4\\", 1, 9, "no closing"},
	{IN_ROUTE("return 200 \"a\\qb\";"), 3, 26, "unknown escape '\\q' in a quoted string"},
	{IN_ROUTE("return 200 \"a\tb\";"), 3, 26, "a control byte (0x09) in a quoted string"},
	{"workers 1;\n\x01", 2, 1, "a control byte (0x01) where a word was expected"},
	{"workers 1\x7f;", 1, 10, "a control byte (0x7f)"},
	/* statements */
	{"}", 1, 1, "unexpected '}' (no block is open)"},
	{";", 1, 1, "expected a directive at the top level, found ';'"},
	{"{", 1, 1, "expected a directive at the top level, found '{'"},
	{"\"site\" a {", 1, 1, "found a quoted string '\"site\"'"},
	{"site a.test {\n  listen 127.0.0.1:8080\n  route / { app; }\n}\n", 2, 24,
	 "expected ';' after 'listen 127.0.0.1:8080' (found 'route')"},
	{"workers 2 {", 1, 10, "expected ';' after 'workers 2' (found '{')"},
	{"workers 2", 1, 10, "expected ';' after 'workers 2' (found the end of the file)"},
	{IN_ROUTE("files a"), 3, 20, "expected ';' after 'files a' (found '}')"},
	{"site a.test;", 1, 12, "expected '{' after 'site a.test' (found ';')"},
	{SITE_HEAD "  route / { app; }\n", 4, 1, "expected '}' to close 'site' opened at 1:1, found the end"},
	{SITE_HEAD "  route / { app;\n}\n", 5, 1, "expected '}' to close 'site' opened at 1:1"},
	{SITE_HEAD "  route / { app;\n", 4, 1, "expected '}' to close 'route' opened at 3:3"},
	{"workers 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17;", 1, 48, "too many arguments to 'workers' (at most 16)"},
	/* directives in the wrong place, unknown ones */
	{"rooot /x;", 1, 1, "unknown directive 'rooot' at the top level (expected one of site, workers, "
			    "max_conns, http2_sessions, max_body, header_area, header_timeout, body_timeout, send_timeout, "
			    "keepalive_timeout, access_log, error_log)"},
	{SITE_HEAD "  rooot /x;\n", 3, 3, "unknown directive 'rooot' in site (expected one of listen, tls, "
					  "default, header, route)"},
	{IN_ROUTE("rooot sites/a;"), 3, 13, "unknown directive 'rooot' in route (expected one of files, "
					     "proxy, redirect, return, metrics, app, header, header_area, cache, "
					     "cache_control, proxy_host, body_on_get, balance, pool, "
					     "connect_timeout, first_byte_timeout, upstream_idle_timeout, "
					     "fail_max, fail_timeout, x_cache, purge_allow)"},
	{"Workers 1;", 1, 1, "unknown directive 'Workers'"},
	{"listen 127.0.0.1:80;", 1, 1, "'listen' goes in a site, not at the top level"},
	{SITE_HEAD "  files /x;\n", 3, 3, "'files' goes in a route, not in a site"},
	{IN_ROUTE("workers 2;"), 3, 13, "'workers' goes at the top level, not in a route"},
	{IN_ROUTE("route /x { app; }"), 3, 13, "'route' goes in a site, not in a route"},
	{SITE_HEAD "  site b.test { }\n", 3, 3, "'site' goes at the top level, not in a site"},
	/* top-level values */
	{"workers;", 1, 8, "expected a number after 'workers' (workers N;), found ';'"},
	{"workers x;", 1, 9, "'workers' takes a number, not 'x'"},
	{"workers 0;", 1, 9, "'workers 0': out of range (1..64)"},
	{"workers 65;", 1, 9, "out of range (1..64)"},
	{"workers 99999999999999999999;", 1, 9, "takes a number"},
	{"workers 2;\nworkers 3;", 2, 1, "'workers' is given twice (first at 1:1)"},
	{"max_conns 1000001;", 1, 11, "out of range (1..1000000)"},
	{"http2_sessions 0;", 1, 16, "'http2_sessions 0': out of range (1..4096)"},
	{"http2_sessions 4097;", 1, 16, "out of range (1..4096)"},
	{"http2_sessions;", 1, 15, "expected a number after 'http2_sessions' (http2_sessions N;)"},
	{"http2_sessions 8;\nhttp2_sessions 9;", 2, 1, "'http2_sessions' is given twice (first at 1:1)"},
	{IN_ROUTE("http2_sessions 8;"), 3, 13, "'http2_sessions' goes at the top level, not in a route"},
	{"max_body 0;", 1, 10, "'max_body 0': too small (at least 1 bytes)"},
	{"header_area 255;", 1, 13, "'header_area 255': too small (at least 256 bytes)"},
	{"header_area 65k;", 1, 13, "'header_area 65k': too large (at most 65536 bytes)"},
	{"header_area 1k;\nheader_area 2k;", 2, 1, "'header_area' is given twice (first at 1:1)"},
	{IN_ROUTE("app; header_area 1k; header_area 2k;"), 3, 34,
	 "'header_area' is given twice in a route (first at 3:18)"},
	{IN_ROUTE("app; header_area;"), 3, 29, "expected a size after 'header_area' (header_area 4k;)"},
	{"max_body 2t;", 1, 10, "'max_body' takes a size (123, 64k, 1m, 2g), not '2t'"},
	{"max_body 1025g;", 1, 10, "'max_body 1025g': too large"},
	{"max_body k;", 1, 10, "takes a size"},
	{"header_timeout 0s;", 1, 16, "a time must be at least 1ms"},
	{"header_timeout 25h;", 1, 16, "'header_timeout 25h': too long (at most 24h)"},
	{"body_timeout 10d;", 1, 14, "'body_timeout' takes a time (500ms, 10s, 2m, 1h), not '10d'"},
	{"send_timeout ms;", 1, 14, "takes a time"},
	{"keepalive_timeout;", 1, 18, "expected a time after 'keepalive_timeout'"},
	{"access_log \"\";", 1, 12, "'access_log' takes a path, not an empty string"},
	{"error_log a b;", 1, 12, "expected ';' after 'error_log a' (found 'b')"},
	{"access_log a xml;", 1, 14, "expected 'combined' or 'json' after 'access_log PATH' (found 'xml')"},
	{"access_log a json x;", 1, 18, "expected ';' after 'access_log a json' (found 'x')"},
	{"access_log off json;", 1, 15, "expected ';' after 'access_log off' (found 'json')"},
	{"access_log off;\naccess_log off;", 2, 1, "'access_log' is given twice (first at 1:1)"},
	{"error_log \"a\\nb\";", 1, 11, "a path cannot hold control bytes"},
	/* site names */
	{"site {", 1, 6, "expected a site name after 'site' (site NAME... { ... }), found '{'"},
	{"site a_b {", 1, 6, "site name 'a_b': only letters, digits, '-' and '.'"},
	{"site a.test. {", 1, 6, "site name 'a.test.' has an empty label (no trailing '.')"},
	{"site a..b {", 1, 6, "has an empty label"},
	{"site .a {", 1, 6, "has an empty label"},
	{"site a.*.b {", 1, 6, "'*' only as the whole first label"},
	{"site * {", 1, 6, "'*' only as the whole first label"},
	{"site *. {", 1, 6, "expected a site name"},
	{"site -a.b {", 1, 6, "a label cannot start with '-'"},
	{"site a-.b {", 1, 6, "a label cannot end with '-'"},
	{"site a.b- {", 1, 6, "a label cannot end with '-'"},
	{"site a.test A.TEST {", 1, 13, "site name 'A.TEST' is given twice"},
	{"site a b c d e f g h i {", 1, 22, "too many names for one site (at most 8)"},
	{"site aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.b {", 1, 6,
	 "a label is longer than 63 bytes"},
	/* listen */
	{"site a {\n  listen;", 2, 9, "expected an address after 'listen' (listen ADDR:PORT [tls] [http2 on|off];)"},
	{"site a {\n  listen localhost:8080;", 2, 10,
	 "expected an address literal (A.B.C.D:PORT, [IPv6]:PORT or *:PORT), found 'localhost:8080'"},
	{"site a {\n  listen 127.0.0.1;", 2, 10, "expected ':PORT' after the address in '127.0.0.1'"},
	{"site a {\n  listen 127.0.0.1:0;", 2, 10, "the port must be a number in 1..65535"},
	{"site a {\n  listen 127.0.0.1:65536;", 2, 10, "the port must be a number in 1..65535"},
	{"site a {\n  listen 127.0.0.1:;", 2, 10, "the port must be"},
	{"site a {\n  listen 127.0.0.256:80;", 2, 10, "'127.0.0.256' is not an IPv4 address"},
	{"site a {\n  listen 224.0.0.1:80;", 2, 10, "not a host address"},
	{"site a {\n  listen ::1:80;", 2, 10, "an IPv6 address goes in brackets"},
	{"site a {\n  listen [::1:80;", 2, 10, "expected an address literal"},
	{"site a {\n  listen [::g]:80;", 2, 10, "'::g' is not an IPv6 address"},
	{"site a {\n  listen [ff02::1]:80;", 2, 10, "a multicast address"},
	{"site a {\n  listen [::1]80;", 2, 10, "expected ':PORT' after the address"},
	{"site a {\n  listen 127.0.0.1:80 tsl;", 2, 22, "expected ';' after 'listen 127.0.0.1:80' (found 'tsl')"},
	{"site a {\n  listen 127.0.0.1:80;\n  listen 127.0.0.1:80;", 3, 3,
	 "site 'a' listens on 127.0.0.1:80 twice (first at 2:3)"},
	{"site a { listen 127.0.0.1:80 tls; tls c k; route / { app; } }\n"
	 "site b { listen 127.0.0.1:80; route / { app; } }", 2, 10,
	 "listener 127.0.0.1:80 is not tls here but tls at 1:10 (every site on it must agree)"},
	{"site a {\n  listen 127.0.0.1:80 http2 maybe;", 2, 23,
	 "'http2' takes on or off (listen ADDR:PORT [tls] http2 off;)"},
	{"site a { listen 127.0.0.1:80 http2 off; route / { app; } }\n"
	 "site b { listen 127.0.0.1:80 http2 on; route / { app; } }", 2, 10,
	 "listener 127.0.0.1:80 has http2 on here but off before (every site on it must agree)"},
	{"site a { listen 127.0.0.1:1; listen 127.0.0.1:2; listen 127.0.0.1:3; listen 127.0.0.1:4;\n"
	 "listen 127.0.0.1:5; listen 127.0.0.1:6; listen 127.0.0.1:7; listen 127.0.0.1:8;\n"
	 "listen 127.0.0.1:9; listen 127.0.0.1:10; listen 127.0.0.1:11; listen 127.0.0.1:12;\n"
	 "listen 127.0.0.1:13; listen 127.0.0.1:14; listen 127.0.0.1:15; listen 127.0.0.1:16;\n"
	 "listen 127.0.0.1:17;", 5, 8, "too many listeners (at most 16 distinct ADDR:PORT)"},
	/* tls, default, header */
	{"site a {\n  tls c;", 2, 8, "expected a key file after 'tls c' (tls CERT KEY;)"},
	{"site a {\n  tls c k x;", 2, 10, "expected ';' after 'tls c k' (found 'x')"},
	{"site a {\n  tls c k;\n  tls c k;", 3, 3, "'tls' is given twice in a site (first at 2:3)"},
	{"site a {\n  default;\n  default;", 3, 3, "'default' is given twice in a site"},
	{"site a {\n  default x;", 2, 10, "expected ';' after 'default' (found 'x')"},
	{"site a {\n  header;", 2, 9, "expected a header name after 'header'"},
	{"site a {\n  header X-A;", 2, 13, "expected a value after 'header X-A' (header NAME VALUE;)"},
	{"site a {\n  header X(A) v;", 2, 10, "header name 'X(A)': only letters, digits and"},
	{"site a {\n  header - v;", 2, 10, "expected a header name, found '-'"},
	{"site a {\n  header -X-A v;", 2, 14, "expected ';' after 'header -X-A' (found 'v')"},
	{"site a {\n  header content-length 5;", 2, 10, "header content-length is the server's own: it cannot be set"},
	{"site a {\n  header -Date;", 2, 10, "header Date is the server's own: it cannot be removed"},
	{"site a {\n  header Transfer-Encoding x;", 2, 10, "the server's own"},
	{"site a {\n  header Connection x;", 2, 10, "the server's own"},
	{"site a {\n  header X-A \"a\\nb\";", 2, 14, "header value '\"a\\x0ab\"': printable ASCII, spaces and tabs only"},
	{"site a {\n  header X-A \xc3\xa9;", 2, 14, "printable ASCII"},
	/* route */
	{"site a {\n  route x { app; }", 2, 9, "a route's path starts with '/': 'x'"},
	{"site a {\n  route { app; }", 2, 9, "expected a path after 'route' (route [=] PATH { ... }), found '{'"},
	{"site a {\n  route = { app; }", 2, 11, "expected a path after 'route ='"},
	{"site a {\n  route /a?b { app; }", 2, 9, "no '?', spaces or control bytes"},
	{"site a {\n  route \"/a b\" { app; }", 2, 9, "no '?', spaces"},
	{"site a {\n  route /a /b { app; }", 2, 11, "expected '{' after 'route /a' (found '/b')"},
	{"site a {\n  route /a;", 2, 11, "expected '{' after 'route /a' (found ';')"},
	{"site a.test {\n  listen 127.0.0.1:1;\n  route /api/ { app; }\n  route /x { app; }\n"
	 "  route /api/ { app; }\n}", 5, 3, "route '/api/' is twice in site 'a.test' (first at 3:3)"},
	{"site a.test {\n  listen 127.0.0.1:1;\n  route = /x { app; }\n  route = /x { app; }\n}", 4, 3,
	 "route '= /x' is twice in site 'a.test' (first at 3:3)"},
	{SITE_HEAD "  route / { }\n}\n", 3, 3,
	 "route '/' has no handler (expected one of files, proxy, redirect, return, metrics, app)"},
	{SITE_HEAD "  route / { header X-A b; }\n}\n", 3, 3, "route '/' has no handler"},
	{IN_ROUTE("app; files /x;"), 3, 18, "route '/' has a second handler 'files' (it has 'app' at 3:13; one per route)"},
	{IN_ROUTE("files;"), 3, 18, "expected a folder after 'files' (files DIR;), found ';'"},
	{IN_ROUTE("files a b;"), 3, 20, "expected ';' after 'files a' (found 'b')"},
	{IN_ROUTE("proxy;"), 3, 18, "expected an upstream ADDR:PORT after 'proxy'"},
	{IN_ROUTE("proxy *:80;"), 3, 19, "an upstream needs an address, not '*'"},
	{IN_ROUTE("proxy [::]:80;"), 3, 19, "an upstream needs an address, not [::]"},
	{IN_ROUTE("proxy 0.0.0.0:80;"), 3, 19, "an upstream needs an address, not 0.0.0.0"},
	{IN_ROUTE("proxy backend:80;"), 3, 19, "expected an address literal (A.B.C.D:PORT or [IPv6]:PORT), found 'backend:80'"},
	{IN_ROUTE("proxy 127.0.0.1:1 127.0.0.1:1;"), 3, 31, "upstream '127.0.0.1:1' is named twice"},
	{IN_ROUTE("proxy 127.0.0.1:1 cache 1m;"), 3, 30, "expected ';' after 'proxy 127.0.0.1:1' (found 'cache')"},
	{IN_ROUTE("proxy 127.0.0.1:1 127.0.0.1:2 127.0.0.1:3 127.0.0.1:4 127.0.0.1:5 127.0.0.1:6 "
		  "127.0.0.1:7 127.0.0.1:8 127.0.0.1:9 127.0.0.1:10 127.0.0.1:11 127.0.0.1:12 "
		  "127.0.0.1:13 127.0.0.1:14 127.0.0.1:15 127.0.0.1:16 127.0.0.1:17;"), 3, 218,
	 "too many arguments to 'proxy' (at most 16)"},
	{IN_ROUTE("redirect 300 /x;"), 3, 22, "redirect: expected a code of 301, 302, 303, 307 or 308, found '300'"},
	{IN_ROUTE("redirect 301;"), 3, 25, "expected a target after 'redirect 301' (redirect CODE TARGET;)"},
	{IN_ROUTE("redirect 301 \"/a b\";"), 3, 26, "redirect target '\"/a b\"': 1..1024 printable ASCII bytes, no spaces"},
	{IN_ROUTE("redirect 301 /x/$uri;"), 3, 26, "unknown variable '$uri' in '/x/$uri' (expected $host, $request_uri or $rest)"},
	{IN_ROUTE("redirect 301 /x/$;"), 3, 26, "unknown variable '$'"},
	{IN_ROUTE("return;"), 3, 19, "expected a status code after 'return' (return CODE [BODY];)"},
	{IN_ROUTE("return 199;"), 3, 20, "return: expected a code in 200..599, found '199'"},
	{IN_ROUTE("return 600;"), 3, 20, "return: expected a code in 200..599"},
	{IN_ROUTE("return 204 x;"), 3, 24, "return 204 takes no body"},
	{IN_ROUTE("return 304 \"\";"), 3, 24, "return 304 takes no body"},
	{IN_ROUTE("return 200 a b;"), 3, 25, "expected ';' after 'return 200 a' (found 'b')"},
	{IN_ROUTE("metrics x;"), 3, 20, "expected ';' after 'metrics' (found 'x')"},
	{IN_ROUTE("app { }"), 3, 16, "expected ';' after 'app' (found '{')"},
	{IN_ROUTE("files /x; cache 1m;"), 3, 23, "'cache' is an option of 'proxy' routes; route '/' has 'files'"},
	{IN_ROUTE("proxy_host keep; app;"), 3, 13, "'proxy_host' is an option of 'proxy' routes; route '/' has 'app'"},
	{IN_ROUTE("body_on_get allow; return 200;"), 3, 13, "'body_on_get' is an option of 'proxy' routes"},
	{IN_ROUTE("cache_control x; proxy 127.0.0.1:1;"), 3, 13, "'cache_control' is an option of 'files' routes; route '/' has 'proxy'"},
	{IN_ROUTE("proxy 127.0.0.1:1; cache 1m; cache 2m;"), 3, 42, "'cache' is given twice in a route (first at 3:32)"},
	{IN_ROUTE("proxy 127.0.0.1:1; cache 65g;"), 3, 38, "'cache 65g': too large (at most 68719476736 bytes)"},
	{IN_ROUTE("proxy 127.0.0.1:1; proxy_host client;"), 3, 43, "'proxy_host' takes 'keep' or 'upstream', not 'client'"},
	{IN_ROUTE("proxy 127.0.0.1:1; body_on_get yes;"), 3, 44, "'body_on_get' takes 'refuse' or 'allow', not 'yes'"},
	{IN_ROUTE("files /x; cache_control \"\";"), 3, 37, "cache_control '\"\"': 1..1024 printable ASCII bytes"},
	/* the proxy's upstream options (skiff proxy's flags) */
	{IN_ROUTE("files /x; balance least;"), 3, 23, "'balance' is an option of 'proxy' routes; route '/' has 'files'"},
	{IN_ROUTE("pool 4; app;"), 3, 13, "'pool' is an option of 'proxy' routes; route '/' has 'app'"},
	{IN_ROUTE("return 200; connect_timeout 1s;"), 3, 25, "'connect_timeout' is an option of 'proxy' routes; route '/' has 'return'"},
	{IN_ROUTE("first_byte_timeout 1s; metrics;"), 3, 13, "'first_byte_timeout' is an option of 'proxy' routes; route '/' has 'metrics'"},
	{IN_ROUTE("upstream_idle_timeout 1s; redirect 301 /x;"), 3, 13, "'upstream_idle_timeout' is an option of 'proxy' routes; route '/' has 'redirect'"},
	{IN_ROUTE("files /x; fail_max 2;"), 3, 23, "'fail_max' is an option of 'proxy' routes"},
	{IN_ROUTE("files /x; fail_timeout 2s;"), 3, 23, "'fail_timeout' is an option of 'proxy' routes"},
	{IN_ROUTE("files /x; x_cache off;"), 3, 23, "'x_cache' is an option of 'proxy' routes"},
	{IN_ROUTE("files /x; purge_allow none;"), 3, 23, "'purge_allow' is an option of 'proxy' routes"},
	{IN_ROUTE("proxy 127.0.0.1:1; balance least; balance rr;"), 3, 47, "'balance' is given twice in a route (first at 3:32)"},
	{IN_ROUTE("proxy 127.0.0.1:1; pool 1; pool 2;"), 3, 40, "'pool' is given twice in a route (first at 3:32)"},
	{IN_ROUTE("proxy 127.0.0.1:1; connect_timeout 1s; connect_timeout 2s;"), 3, 52, "'connect_timeout' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; first_byte_timeout 1s; first_byte_timeout 1s;"), 3, 55, "'first_byte_timeout' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; upstream_idle_timeout 1s; upstream_idle_timeout 1s;"), 3, 58, "'upstream_idle_timeout' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; fail_max 1; fail_max 1;"), 3, 44, "'fail_max' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; fail_timeout 1s; fail_timeout 1s;"), 3, 49, "'fail_timeout' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; x_cache off; x_cache on;"), 3, 45, "'x_cache' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow none; purge_allow ::1;"), 3, 50, "'purge_allow' is given twice in a route"},
	{IN_ROUTE("proxy 127.0.0.1:1; balance;"), 3, 39, "expected rr or least after 'balance' (balance rr|least;), found ';'"},
	{IN_ROUTE("proxy 127.0.0.1:1; balance random;"), 3, 40, "'balance' takes 'rr' or 'least', not 'random'"},
	{IN_ROUTE("proxy 127.0.0.1:1; balance rr least;"), 3, 42, "expected ';' after 'balance rr' (found 'least')"},
	{IN_ROUTE("proxy 127.0.0.1:1; pool;"), 3, 36, "expected a number after 'pool' (pool N;), found ';'"},
	{IN_ROUTE("proxy 127.0.0.1:1; pool x;"), 3, 37, "'pool' takes a number, not 'x'"},
	{IN_ROUTE("proxy 127.0.0.1:1; pool 65537;"), 3, 37, "'pool 65537': out of range (0..65536)"},
	{IN_ROUTE("proxy 127.0.0.1:1; pool -1;"), 3, 37, "'pool' takes a number, not '-1'"},
	{IN_ROUTE("proxy 127.0.0.1:1; fail_max 0;"), 3, 41, "'fail_max 0': out of range (1..1000)"},
	{IN_ROUTE("proxy 127.0.0.1:1; fail_max 1001;"), 3, 41, "'fail_max 1001': out of range (1..1000)"},
	{IN_ROUTE("proxy 127.0.0.1:1; fail_max 3 4;"), 3, 42, "expected ';' after 'fail_max 3' (found '4')"},
	{IN_ROUTE("proxy 127.0.0.1:1; connect_timeout 61m;"), 3, 48, "'connect_timeout 61m': too long (at most 3600s)"},
	{IN_ROUTE("proxy 127.0.0.1:1; connect_timeout 0;"), 3, 48, "'connect_timeout 0': a time must be at least 1ms"},
	{IN_ROUTE("proxy 127.0.0.1:1; first_byte_timeout 25h;"), 3, 51, "'first_byte_timeout 25h': too long (at most 24h)"},
	{IN_ROUTE("proxy 127.0.0.1:1; upstream_idle_timeout 5x;"), 3, 54, "'upstream_idle_timeout' takes a time (500ms, 10s, 2m, 1h), not '5x'"},
	{IN_ROUTE("proxy 127.0.0.1:1; fail_timeout;"), 3, 44, "expected a time after 'fail_timeout' (500ms, 10s, 2m or 1h), found ';'"},
	{IN_ROUTE("proxy 127.0.0.1:1; x_cache no;"), 3, 40, "'x_cache' takes 'on' or 'off', not 'no'"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow;"), 3, 43, "expected an address prefix or 'none' after 'purge_allow' (purge_allow ADDR[/LEN]...|none;), found ';'"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow 10.0.0.0/33;"), 3, 44, "'purge_allow' takes ADDR[/LEN] (127.0.0.0/8, ::1, 2001:db8::/32) or none, not '10.0.0.0/33'"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow ::1 [::2];"), 3, 48, "'purge_allow' takes ADDR[/LEN]"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow ::1/129;"), 3, 44, "not '::1/129'"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow localhost;"), 3, 44, "not 'localhost'"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow 10.0.0.1,::1;"), 3, 44, "'10.0.0.1,::1': separate the prefixes with spaces, not ','"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow ::1 none;"), 3, 47, "expected ';' after 'purge_allow ::1' (found 'none')"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow none ::1;"), 3, 48, "expected ';' after 'purge_allow none' (found '::1')"},
	{IN_ROUTE("proxy 127.0.0.1:1; purge_allow ::1\n cache 1m;"), 3, 47, "expected ';' after 'purge_allow ::1' (found 'cache')"},
	/* the checks after the file */
	{"", 1, 1, "no 'site' in the file"},
	{"# nothing\nworkers 1;\n", 3, 1, "no 'site' in the file"},
	{"site a.test { route / { app; } }", 1, 1, "site 'a.test' has no 'listen'"},
	{"site a.test { listen 127.0.0.1:1; }", 1, 1, "site 'a.test' has no route"},
	{"workers 1;\nsite a.test b.test {\n  listen 127.0.0.1:8080;\n  listen 127.0.0.1:8443 tls;\n"
	 "  route / { app; }\n}\n", 2, 1,
	 "site 'a.test': listener 127.0.0.1:8443 is tls but the site has no 'tls CERT KEY'"},
	{"site a.test { listen 127.0.0.1:1; tls c k; route / { app; } }", 1, 1,
	 "site 'a.test' has 'tls CERT KEY' but no tls listener"},
	{"site a.test { listen [::1]:1 tls; route / { app; } }", 1, 1, "listener [::1]:1 is tls"},
	{"site a.test { listen *:1 tls; route / { app; } }", 1, 1, "listener *:1 is tls"},
	{"site a.test { listen 127.0.0.1:1; route / { app; } }\n"
	 "site b.test A.test { listen 127.0.0.1:2; listen 127.0.0.1:1; route / { app; } }", 2, 1,
	 "name 'a.test' is on listener 127.0.0.1:1 twice: in this site and in the site at 1:1"},
	{"site a.test { listen 127.0.0.1:1; default; route / { app; } }\n"
	 "site b.test { listen 127.0.0.1:1; default; route / { app; } }", 2, 1,
	 "listener 127.0.0.1:1 has two default sites: 'b.test' and 'a.test' (at 1:1)"},
};

static void test_errors(void **state)
{
	(void)state;
	int failed = 0;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		failed += bad_check(bads[i].text, bads[i].line, bads[i].col, bads[i].msg);
	assert_int_equal(failed, 0);
}

/* The same name on two listeners, two defaults on two listeners, the same
 * path exact and prefix: all fine. */
static void test_allowed(void **state)
{
	(void)state;
	const struct sconf *c = ok("site a.test { listen 127.0.0.1:1; default; route /x { app; } "
				   "route = /x { app; } }\n"
				   "site a.test { listen 127.0.0.1:2; default; route / { app; } }\n");
	assert_int_equal(c->nsites, 2);
	assert_int_equal(c->sites[1].listen_mask, 2);
}

static void test_limits(void **state)
{
	(void)state;
	char buf[16384];
	size_t n = 0;
	/* 64 sites pass, a 65th is refused. */
	size_t n64 = 0;
	for (int i = 0; i < 65; i++) {
		n64 = n;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "site s%d { listen 127.0.0.1:1; route / { app; } }\n", i);
	}
	bad_at(buf, 65, 1, "too many sites (at most 64)");
	buf[n64] = 0; /* the 65th line cut off */
	assert_int_equal(ok(buf)->nsites, 64);
	/* 32 routes, 16 headers. */
	n = (size_t)snprintf(buf, sizeof(buf), "site a { listen 127.0.0.1:1;\n");
	for (int i = 0; i < 33; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "route /%d { app; }\n", i);
	bad_at(buf, 34, 1, "too many routes in site 'a' (at most 32)");
	n = (size_t)snprintf(buf, sizeof(buf), "site a { listen 127.0.0.1:1;\n");
	for (int i = 0; i < 17; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "header X-%d v;\n", i);
	bad_at(buf, 18, 1, "too many header lines in a site (at most 16)");
	/* A path joined with a long folder. */
	char dir[1100];
	memset(dir, 'd', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = 0;
	assert_int_equal(parse_dir(IN_ROUTE("files x;"), dir), -1);
	assert_non_null(strstr(err.msg, "is too long (at most 1024 bytes with the file's folder)"));
	/* A value over 1024 bytes. */
	n = (size_t)snprintf(buf, sizeof(buf), SITE_HEAD "  header X-A ");
	memset(buf + n, 'v', 1025);
	n += 1025;
	snprintf(buf + n, sizeof(buf) - n, ";\n");
	bad_at(buf, 3, 14, "header value too long (at most 1024 bytes)");
}

/* Too small an arena: a message, not a crash; the bound always suffices. */
static void test_arena(void **state)
{
	(void)state;
	const char *t = IN_ROUTE("files some/where;");
	size_t len = strlen(t), bound = sites_conf_arena_bound(len);
	char *a = malloc(bound);
	assert_non_null(a);
	for (size_t sz = 0; sz < bound; sz += sz < 20000 ? 1 : 997) {
		int rc = sites_conf_parse(t, len, "d", sz ? a : NULL, sz, &conf, &err);
		if (rc < 0)
			assert_non_null(strstr(err.msg, "needs more memory"));
	}
	assert_int_equal(sites_conf_parse(t, len, "d", a, bound, &conf, &err), 0);
	assert_string_equal(conf.sites[0].routes[0].root, "d/some/where");
	/* A misaligned arena. */
	assert_int_equal(sites_conf_parse(t, len, "d", a + 1, bound - 1, &conf, &err), 0);
	assert_int_equal((uintptr_t)conf.sites % _Alignof(struct sconf_site), 0);
	free(a);
}

/* ---- lookups ---- */

static const char *site_of(const struct sconf *c, unsigned li, const char *host)
{
	const struct sconf_site *s = sites_conf_site(c, li, host, strlen(host));
	return s ? s->names[0] : "(none)";
}

static void test_site_lookup(void **state)
{
	(void)state;
	const struct sconf *c = ok("site a.test { listen 127.0.0.1:80; listen 127.0.0.1:81; route / { app; } }\n"
				   "site *.a.test { listen 127.0.0.1:80; route / { app; } }\n"
				   "site *.x.a.test { listen 127.0.0.1:80; route / { app; } }\n"
				   "site dflt.test { listen 127.0.0.1:80; default; route / { app; } }\n"
				   "site b.test { listen 127.0.0.1:81; route / { app; } }\n");
	assert_string_equal(site_of(c, 0, "a.test"), "a.test");
	assert_string_equal(site_of(c, 0, "A.TeSt"), "a.test");
	assert_string_equal(site_of(c, 0, "a.test:8080"), "a.test");
	assert_string_equal(site_of(c, 0, "a.test."), "a.test");
	assert_string_equal(site_of(c, 0, "a.test.:80"), "a.test");
	assert_string_equal(site_of(c, 0, "www.a.test"), "*.a.test");
	assert_string_equal(site_of(c, 0, "q.w.a.test"), "*.a.test");
	assert_string_equal(site_of(c, 0, "y.x.a.test"), "*.x.a.test");
	assert_string_equal(site_of(c, 0, "x.a.test"), "*.a.test");
	assert_string_equal(site_of(c, 0, ".a.test"), "dflt.test");
	assert_string_equal(site_of(c, 0, "aa.test"), "dflt.test");
	assert_string_equal(site_of(c, 0, "b.test"), "dflt.test");
	assert_string_equal(site_of(c, 0, ""), "dflt.test");
	assert_string_equal(site_of(c, 0, "[::1]:80"), "dflt.test");
	assert_string_equal(site_of(c, 0, "[a.test]"), "dflt.test");
	assert_string_equal(site_of(c, 0, "dflt.test"), "dflt.test");
	/* Listener 81: no default, no wildcard. */
	assert_string_equal(site_of(c, 1, "b.test"), "b.test");
	assert_string_equal(site_of(c, 1, "a.test"), "a.test");
	assert_string_equal(site_of(c, 1, "www.a.test"), "(none)");
	assert_string_equal(site_of(c, 1, "[::1]"), "(none)");
	assert_string_equal(site_of(c, 2, "a.test"), "(none)");
	assert_string_equal(site_of(c, 99, "a.test"), "(none)");
	/* The length, not a NUL, ends the host. */
	assert_ptr_equal(sites_conf_site(c, 1, "b.testXYZ", 6), &c->sites[4]);
}

static void test_route_lookup(void **state)
{
	(void)state;
	const struct sconf *c = ok(SITE_HEAD "  route / { app; }\n  route /api/ { app; }\n"
				   "  route /api/v2/ { app; }\n  route = /api/ { app; }\n"
				   "  route /img { app; }\n}\n");
	const struct sconf_site *s = &c->sites[0];
	size_t rest = 99;
	struct {
		const char *path;
		int route;
		size_t rest;
	} cases[] = {
		{"/", 0, 1},          {"/index.html", 0, 1}, {"/api/", 3, 5},
		{"/api/x", 1, 5},     {"/api/v2/", 2, 8},    {"/api/v2/y/z", 2, 8},
		{"/api", 0, 1},       {"/img", 4, 4},        {"/imgs/a", 4, 4},
		{"/api/v2", 1, 5},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sconf_route *r =
			sites_conf_route(s, cases[i].path, strlen(cases[i].path), &rest);
		assert_ptr_equal(r, &s->routes[cases[i].route]);
		assert_int_equal(rest, cases[i].rest);
	}
	assert_ptr_equal(sites_conf_route(s, "/api/v2", 4, &rest), &s->routes[0]); /* "/api" */
	/* No "/" route: a path outside every route gets none. */
	c = ok(SITE_HEAD "  route /a/ { app; }\n}\n");
	assert_null(sites_conf_route(&c->sites[0], "/b", 2, &rest));
	assert_null(sites_conf_route(&c->sites[0], "", 0, NULL));
	assert_non_null(sites_conf_route(&c->sites[0], "/a/", 3, NULL));
}

static int teardown(void **state)
{
	(void)state;
	free(arena);
	arena = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_top_level),
		cmocka_unit_test(test_header_area),
		cmocka_unit_test(test_http2),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_site_directives),
		cmocka_unit_test(test_route_directives),
		cmocka_unit_test(test_proxy_options),
		cmocka_unit_test(test_lexer),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_site_lookup),
		cmocka_unit_test(test_route_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
