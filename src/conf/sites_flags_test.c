/* sites_flags_test.c — `skiff serve`'s flags as the configuration model:
 * what each flag becomes, and the lookups on the result answering as the
 * flags' server would (every Host to the one site; --tls-sni names to
 * theirs; --tls-redirect's plain listener to its own); the guest's
 * words (sites_conf_from_guest) with the module's files and metrics=. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf/sites_flags.h"

static char err[256];
static struct sconf conf;
static uint8_t *arena;

static int build_cmd(const struct opt_cmd *cmd, bool on_skiff, bool app, const char *const *args)
{
	struct opts o;
	char *argv[32];
	int argc = 0;
	argv[argc++] = (char *)cmd->name;
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	assert_int_equal(opt_init(&o, cmd, err, sizeof(err)), OPT_OK);
	int prc = opt_parse_argv(&o, argc, argv, err, sizeof(err));
	if (prc != OPT_OK)
		print_error("%s\n", err);
	assert_int_equal(prc, OPT_OK);
	size_t sz = sites_flags_arena_bound();
	free(arena);
	arena = malloc(sz);
	assert_non_null(arena);
	return sites_conf_from_flags(&o, on_skiff, app, arena, sz, &conf, err, sizeof(err));
}

static int build(bool on_skiff, const char *const *args)
{
	return build_cmd(&opt_cmd_serve, on_skiff, false, args);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct sconf_route *route(unsigned li, const char *host, const char *path)
{
	const struct sconf_site *s = sites_conf_site(&conf, li, host, strlen(host));
	if (!s)
		return NULL;
	size_t rest = 0;
	return sites_conf_route(s, path, strlen(path), &rest);
}

static void test_root(void **st)
{
	(void)st;
	assert_int_equal(build(false, ARGS("--root", "www", "--port", "8080", "--ip", "127.0.0.1",
					   "--cache-control", "max-age=60", "--max-conns", "77",
					   "--header-timeout", "3", "--max-body", "1000")),
			 0);
	assert_int_equal(conf.nlisten, 1);
	assert_false(conf.listen[0].any);
	assert_int_equal(conf.listen[0].port, 8080);
	assert_memory_equal(&conf.listen[0].addr.b[12], ((uint8_t[]){127, 0, 0, 1}), 4);
	assert_int_equal(conf.nsites, 1);
	const struct sconf_route *r = route(0, "anything.test", "/a/b");
	assert_non_null(r);
	assert_int_equal(r->kind, SCONF_FILES);
	assert_string_equal(r->root, "www");
	assert_string_equal(r->cache_control, "max-age=60");
	assert_non_null(route(0, "", "/")); /* no Host: the same site */
	assert_int_equal(conf.max_conns, 77);
	assert_int_equal(conf.header_timeout, 3 * SK_NS_PER_S);
	assert_int_equal(conf.max_body, 1000);
	assert_int_equal(conf.workers, 1); /* not given: the default */
	assert_int_equal(build(false, ARGS("--root", "www", "--workers", "3")), 0);
	assert_int_equal(conf.workers, 3);
	assert_int_equal(build(false, ARGS("--root", "www", "--workers", "auto")), 0);
	assert_int_equal(conf.workers, SCONF_WORKERS_AUTO);
	assert_int_equal(build(false, ARGS("--root", "www", "--max-conns", "77")), 0);
	/* defaults for what serve has no flag for */
	assert_int_equal(conf.send_timeout, 60 * SK_NS_PER_S);
	/* on skiff's stack the listener takes every address */
	assert_int_equal(build(true, ARGS("--root", "www", "--port", "80", "--ip", "198.18.0.2/24")), 0);
	assert_true(conf.listen[0].any);
}

static void test_hello(void **st)
{
	(void)st;
	assert_int_equal(build(false, ARGS("--port", "8080")), 0);
	const struct sconf_route *r = route(0, "x", "/");
	assert_non_null(r);
	assert_int_equal(r->kind, SCONF_RETURN);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->body, HTTP_HELLO_BODY);
	assert_null(route(0, "x", "/other")); /* 404, as the built-in page */
}

static void test_tls_sni_redirect(void **st)
{
	(void)st;
	assert_int_equal(build(false, ARGS("--root", "www", "--port", "8080", "--tls-cert", "c.pem",
					   "--tls-key", "k.pem", "--tls-port", "8443",
					   "--tls-sni", "B.Test:b.crt:b.key", "--tls-sni",
					   "*.c.test:c.crt:c.key")),
			 0);
	assert_int_equal(conf.nlisten, 2);
	assert_true(conf.listen[1].tls);
	assert_int_equal(conf.listen[1].port, 8443);
	assert_true(sconf_alpn_h2(&conf.listen[1])); /* --tls-alpn's default: h2,http/1.1 */
	assert_false(conf.listen[1].h2_off);
	/* both listeners serve the files; the SNI sites only on the tls one */
	assert_int_equal(route(0, "b.test", "/x")->kind, SCONF_FILES);
	const struct sconf_site *b = sites_conf_site(&conf, 1, "b.test", 6);
	assert_string_equal(b->names[0], "b.test");
	assert_string_equal(b->cert, "b.crt");
	assert_string_equal(b->key, "b.key");
	assert_int_equal(b->routes[0].kind, SCONF_FILES);
	const struct sconf_site *c = sites_conf_site(&conf, 1, "x.c.test", 8);
	assert_string_equal(c->cert, "c.crt");
	const struct sconf_site *d = sites_conf_site(&conf, 1, "other", 5);
	assert_string_equal(d->cert, "c.pem");
	assert_ptr_equal(sites_conf_site(&conf, 0, "b.test", 6), d);

	assert_int_equal(build(false, ARGS("--root", "www", "--tls-cert", "c.pem", "--tls-key",
					   "k.pem", "--tls-port", "8443", "--tls-redirect")),
			 0);
	const struct sconf_route *r = route(0, "a.test", "/x");
	assert_int_equal(r->kind, SCONF_REDIRECT);
	assert_int_equal(r->status, 301);
	assert_string_equal(r->target, "https://$host:8443$request_uri");
	assert_int_equal(route(1, "a.test", "/x")->kind, SCONF_FILES);
	assert_int_equal(build(false, ARGS("--tls-cert", "c.pem", "--tls-key", "k.pem",
					   "--tls-redirect")),
			 0);
	assert_string_equal(route(0, "a.test", "/x")->target, "https://$host$request_uri");

	/* --tls-alpn h2,http/1.1: the tls listener offers h2, the plain one
	 * has nothing to offer it with */
	assert_int_equal(build(false, ARGS("--tls-cert", "c.pem", "--tls-key", "k.pem",
					   "--tls-alpn", "h2,http/1.1")),
			 0);
	assert_true(sconf_alpn_h2(&conf.listen[1]));
	assert_false(sconf_alpn_h2(&conf.listen[0]));
	/* --tls-alpn http/1.1: HTTPS is HTTP/1.1 only, the plain port keeps h2c */
	assert_int_equal(build(false, ARGS("--tls-cert", "c.pem", "--tls-key", "k.pem",
					   "--tls-alpn", "http/1.1")),
			 0);
	assert_false(sconf_alpn_h2(&conf.listen[1]));
	assert_true(conf.listen[1].h2_off);
	assert_false(conf.listen[0].h2_off);
	/* --http2 off: both HTTP/1.1 only, ALPN http/1.1 whatever --tls-alpn */
	assert_int_equal(build(false, ARGS("--tls-cert", "c.pem", "--tls-key", "k.pem",
					   "--http2", "off")),
			 0);
	assert_false(sconf_alpn_h2(&conf.listen[1]));
	assert_true(conf.listen[0].h2_off);
}

/* The guest's words (opt_cmd_uk) with the module's files named by the
 * runtime: the same model as the flags', plus metrics=PORT's listener. */
static int build_guest(const char *words, const struct sites_guest_src *g)
{
	static struct opts o; /* string values point into line */
	static char line[256];
	snprintf(line, sizeof(line), "%s", words);
	assert_int_equal(opt_init(&o, &opt_cmd_uk, err, sizeof(err)), OPT_OK);
	int prc = opt_parse_words(&o, line, err, sizeof(err));
	if (prc != OPT_OK)
		print_error("%s\n", err);
	assert_int_equal(prc, OPT_OK);
	size_t sz = sites_flags_arena_bound();
	free(arena);
	arena = malloc(sz);
	assert_non_null(arena);
	return sites_conf_from_guest(&o, g, arena, sz, &conf, err, sizeof(err));
}

static void test_guest(void **st)
{
	(void)st;
	/* no module: the built-in page on port 80, the guest's 2048 connections */
	struct sites_guest_src g = {0};
	assert_int_equal(build_guest("", &g), 0);
	assert_int_equal(conf.nlisten, 1);
	assert_true(conf.listen[0].any);
	assert_int_equal(conf.listen[0].port, 80);
	assert_int_equal(conf.max_conns, 2048);
	assert_int_equal(conf.http2_sessions, 8); /* the word's default: the guest's memory */
	assert_int_equal(route(0, "x", "/")->kind, SCONF_RETURN);
	assert_null(route(0, "x", "/other"));
	assert_int_equal(build_guest("http2-sessions=32", &g), 0);
	assert_int_equal(conf.http2_sessions, 32);
	static struct opts bad;
	char big[] = "http2-sessions=4097"; /* past the engine's bound */
	assert_int_equal(opt_init(&bad, &opt_cmd_uk, err, sizeof(err)), OPT_OK);
	assert_int_not_equal(opt_parse_words(&bad, big, err, sizeof(err)), OPT_OK);

	/* the archive, the PEM files, tls-redirect and metrics=9100 */
	g = (struct sites_guest_src){.root = "(archive)", .cert = "(c)", .key = "(k)",
				     .metrics = 9100};
	assert_int_equal(build_guest("port=8080 tls-port=8443 tls-redirect max-conns=64 "
				     "cache-control=no-cache tls-alpn=h2,http/1.1", &g),
			 0);
	assert_int_equal(conf.nlisten, 3);
	assert_int_equal(conf.listen[0].port, 8080);
	assert_true(conf.listen[1].tls);
	assert_true(sconf_alpn_h2(&conf.listen[1]));
	assert_int_equal(conf.listen[1].port, 8443);
	assert_false(conf.listen[2].tls);
	assert_int_equal(conf.listen[2].port, 9100);
	assert_int_equal(conf.max_conns, 64);
	assert_string_equal(route(0, "a", "/x")->target, "https://$host:8443$request_uri");
	const struct sconf_route *f = route(1, "a", "/x");
	assert_int_equal(f->kind, SCONF_FILES);
	assert_string_equal(f->root, "(archive)");
	assert_string_equal(f->cache_control, "no-cache");
	const struct sconf_site *t = sites_conf_site(&conf, 1, "a", 1);
	assert_string_equal(t->cert, "(c)");
	assert_string_equal(t->key, "(k)");
	/* the metrics listener: its page, nothing else; on no other listener */
	assert_int_equal(route(2, "a", "/metrics")->kind, SCONF_METRICS);
	assert_null(route(2, "a", "/"));
	assert_null(route(2, "a", "/metrics/x"));
	assert_int_equal(route(0, "a", "/metrics")->kind, SCONF_REDIRECT);
	assert_int_equal(route(1, "a", "/metrics")->kind, SCONF_FILES);

	/* an application image: its site is route / { app; } on every path
	 * (uk_sites names no root for it: the application answers them all) */
	g = (struct sites_guest_src){.app = true};
	assert_int_equal(build_guest("", &g), 0);
	assert_int_equal(route(0, "x", "/any/path")->kind, SCONF_APP);

	/* the guest's TLS defaults: h2 then http/1.1; tls-alpn=http/1.1 and
	 * http2=off make it HTTP/1.1 (the latter on port 80 too) */
	g = (struct sites_guest_src){.cert = "(c)", .key = "(k)"};
	assert_int_equal(build_guest("", &g), 0);
	assert_true(sconf_alpn_h2(&conf.listen[1]));
	assert_false(conf.listen[0].h2_off);
	assert_int_equal(build_guest("tls-alpn=http/1.1", &g), 0);
	assert_false(sconf_alpn_h2(&conf.listen[1]));
	assert_false(conf.listen[0].h2_off);
	assert_int_equal(build_guest("http2=off", &g), 0);
	assert_false(sconf_alpn_h2(&conf.listen[1]));
	assert_true(conf.listen[0].h2_off);

	/* a certificate without its key: no HTTPS (the runtime names both) */
	g = (struct sites_guest_src){.cert = "(c)"};
	assert_int_equal(build_guest("", &g), 0);
	assert_int_equal(conf.nlisten, 1);
}

/* skiff proxy's flags: one proxy route at /, every flag (defaults too)
 * a directive of it; the proxy command's own max-conns default. */
static void test_proxy(void **st)
{
	(void)st;
	assert_int_equal(build_cmd(&opt_cmd_proxy, false, false,
				   ARGS("--upstream", "127.0.0.1:9090,[::1]:9091", "--cache", "8M",
					"--balance", "least", "--pool", "0", "--connect-timeout", "2",
					"--fail-max", "7", "--no-x-cache", "--purge-allow", "none",
					"--body-timeout", "9", "--send-timeout", "11")),
			 0);
	assert_int_equal(conf.max_conns, 256); /* proxy's default, not serve's 4096 */
	assert_int_equal(conf.body_timeout, 9 * SK_NS_PER_S);
	assert_int_equal(conf.send_timeout, 11 * SK_NS_PER_S);
	const struct sconf_route *r = route(0, "any.example", "/api/x");
	assert_non_null(r);
	assert_int_equal(r->kind, SCONF_PROXY);
	assert_false(r->exact);
	assert_int_equal(r->nup, 2);
	assert_string_equal(r->up[0].text, "127.0.0.1:9090");
	assert_int_equal(r->up[1].port, 9091);
	assert_string_equal(r->up[1].text, "[::1]:9091");
	assert_int_equal(r->cache_bytes, 8u << 20);
	assert_int_equal(r->balance, SCONF_BALANCE_LEAST);
	assert_true(r->pool_given);
	assert_int_equal(r->pool, 0);
	assert_int_equal(r->connect_timeout, 2 * SK_NS_PER_S);
	assert_int_equal(r->first_byte_timeout, 60 * SK_NS_PER_S); /* the flag's default */
	assert_int_equal(r->fail_max, 7);
	assert_true(r->no_x_cache);
	assert_true(r->purge_allow_given);
	assert_int_equal(r->npurge_allow, 0);
	assert_false(r->body_on_get); /* GET with a body refused, as skiff proxy always did */

	/* Defaults: the loopback purge list, a cache off, round-robin. */
	assert_int_equal(build_cmd(&opt_cmd_proxy, true, false, ARGS("--upstream", "127.0.0.1:1")), 0);
	r = route(0, "h", "/");
	assert_int_equal(r->cache_bytes, 0);
	assert_int_equal(r->balance, SCONF_BALANCE_RR);
	assert_int_equal(r->pool, 32);
	assert_int_equal(r->npurge_allow, 2);
	assert_false(r->no_x_cache);

	/* A name reaches this module only unresolved: refused, said why. */
	assert_int_equal(build_cmd(&opt_cmd_proxy, false, false, ARGS("--upstream", "backend:80")), -1);
	assert_non_null(strstr(err, "a name is not resolved here: backend"));
}

/* An application binary's flags: its routes at /, every path. */
static void test_app(void **st)
{
	(void)st;
	assert_int_equal(build_cmd(&opt_cmd_app, false, true, ARGS("--port", "8081")), 0);
	assert_int_equal(conf.max_conns, 256);
	assert_int_equal(conf.listen[0].port, 8081);
	const struct sconf_route *r = route(0, "x", "/any/path");
	assert_non_null(r);
	assert_int_equal(r->kind, SCONF_APP);
	/* Without an application linked in, the same flags give the hello page. */
	assert_int_equal(build_cmd(&opt_cmd_app, false, false, ARGS("--port", "8081")), 0);
	assert_int_equal(route(0, "x", "/")->kind, SCONF_RETURN);
}

static void test_arena_too_small(void **st)
{
	(void)st;
	struct opts o;
	assert_int_equal(opt_init(&o, &opt_cmd_serve, err, sizeof(err)), OPT_OK);
	uint8_t small[64];
	assert_int_equal(sites_conf_from_flags(&o, false, false, small, sizeof(small), &conf, err,
					       sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "arena"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_tls_sni_redirect),
		cmocka_unit_test(test_guest),
		cmocka_unit_test(test_proxy),
		cmocka_unit_test(test_app),
		cmocka_unit_test(test_arena_too_small),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(arena);
	return rc;
}
