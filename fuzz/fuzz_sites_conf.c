/* fuzz_sites_conf.c — the configuration file's parser (conf/sites_conf.h)
 * on arbitrary bytes.
 * Input: [flags][text...]; flags bit 0: relative paths joined with a
 * folder ("conf/x"), bit 1: a second parse into a quarter of the bound
 * (the out-of-memory path).
 * Checks: no read past the exact-size copy of the text (ASan); with the
 * arena sites_conf_arena_bound gives, never "needs more memory"; an error
 * has a position inside the text (line >= 1, col >= 1) and a message; a
 * parsed file's strings all lie in the arena, NUL-terminated; every site
 * is found by each of its names on each of its listeners (or by a better
 * match), every route by its own path.
 * Build: make build/fuzz/fuzz_sites_conf. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/sites_conf.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *arena_lo, *arena_hi;

static void check_str(const char *s)
{
	if (!s)
		return;
	CHECK(s >= arena_lo && s < arena_hi);
	CHECK(memchr(s, 0, (size_t)(arena_hi - s)) != NULL);
}

/* The proxy's upstream options: only on a proxy route, in the flags'
 * ranges (zero: not given), a prefix's bits past its length clear. */
static void check_proxy_opts(const struct sconf_route *rt)
{
	const sk_time_ns day = 86400 * SK_NS_PER_S;
	if (rt->kind != SCONF_PROXY) {
		CHECK(!rt->balance && !rt->pool_given && !rt->pool && !rt->connect_timeout);
		CHECK(!rt->first_byte_timeout && !rt->upstream_idle_timeout && !rt->fail_max);
		CHECK(!rt->fail_timeout && !rt->no_x_cache && !rt->purge_allow_given);
	}
	CHECK(rt->balance <= SCONF_BALANCE_LEAST);
	CHECK(rt->pool <= 65536 && (rt->pool_given || rt->pool == 0));
	CHECK(rt->connect_timeout <= 3600 * SK_NS_PER_S);
	CHECK(rt->first_byte_timeout <= day && rt->upstream_idle_timeout <= day);
	CHECK(rt->fail_timeout <= day && rt->fail_max <= 1000);
	CHECK(rt->npurge_allow <= SCONF_MAX_PURGE_ALLOW);
	CHECK(rt->purge_allow_given || rt->npurge_allow == 0);
	for (unsigned i = 0; i < rt->npurge_allow; i++) {
		const struct sconf_prefix *px = &rt->purge_allow[i];
		CHECK(px->len <= 128);
		for (unsigned b = px->len; b < 128; b++)
			CHECK(!(px->addr.b[b / 8] & (0x80u >> (b % 8))));
	}
}

static void check_parsed(const struct sconf *c)
{
	CHECK(c->nsites >= 1 && c->nsites <= SCONF_MAX_SITES);
	CHECK(c->nlisten >= 1 && c->nlisten <= SCONF_MAX_LISTEN);
	check_str(c->access_log);
	check_str(c->error_log);
	for (unsigned i = 0; i < c->nsites; i++) {
		const struct sconf_site *s = &c->sites[i];
		CHECK(s->nnames >= 1 && s->nnames <= SCONF_MAX_NAMES);
		CHECK(s->nroutes >= 1 && s->nroutes <= SCONF_MAX_ROUTES);
		CHECK(s->listen_mask != 0 && s->listen_mask < (1u << c->nlisten));
		CHECK(!s->cert == !s->key);
		check_str(s->cert);
		check_str(s->key);
		for (unsigned h = 0; h < s->nhdr; h++)
			check_str(s->hdr[h].name), check_str(s->hdr[h].value);
		for (unsigned k = 0; k < s->nnames; k++) {
			const char *nm = s->names[k];
			check_str(nm);
			size_t n = strlen(nm);
			CHECK(n >= 1 && n <= SCONF_NAME_MAX);
			for (unsigned li = 0; li < c->nlisten; li++) {
				if (!(s->listen_mask & (1u << li)))
					continue;
				/* "*.x" answers for "a.x"; a name for itself. */
				char host[SCONF_NAME_MAX + 8];
				size_t hn = 0;
				if (nm[0] == '*') {
					host[hn++] = 'q';
					memcpy(host + hn, nm + 1, n - 1);
					hn += n - 1;
				} else {
					memcpy(host, nm, n);
					hn = n;
				}
				memcpy(host + hn, ".:80", 4); /* trailing dot and a port: ignored */
				const struct sconf_site *f = sites_conf_site(c, li, host, hn + 4);
				CHECK(f != NULL);
				CHECK(nm[0] == '*' || f == s);
			}
		}
		for (unsigned r = 0; r < s->nroutes; r++) {
			const struct sconf_route *rt = &s->routes[r];
			check_str(rt->path);
			check_str(rt->root);
			check_str(rt->cache_control);
			check_str(rt->target);
			check_str(rt->body);
			CHECK(rt->kind >= SCONF_FILES && rt->kind <= SCONF_APP);
			CHECK(rt->nup <= SCONF_MAX_UPSTREAMS);
			CHECK(rt->kind != SCONF_PROXY || rt->nup >= 1);
			for (unsigned u = 0; u < rt->nup; u++)
				check_str(rt->up[u].text);
			for (unsigned h = 0; h < rt->nhdr; h++)
				check_str(rt->hdr[h].name), check_str(rt->hdr[h].value);
			check_proxy_opts(rt);
			size_t rest = 0, pl = strlen(rt->path);
			const struct sconf_route *f = sites_conf_route(s, rt->path, pl, &rest);
			CHECK(f != NULL && rest <= pl);
			CHECK(!rt->exact || f == rt);
		}
	}
	/* A Host nobody names, an IPv6 literal: the default site or none. */
	const struct sconf_site *d = sites_conf_site(c, 0, "[::1]:8080", 10);
	CHECK(!d || d->is_default);
	CHECK(sites_conf_site(c, SCONF_MAX_LISTEN, "a", 1) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	size_t n = size - 1;
	char *text = malloc(n ? n : 1);
	if (!text)
		abort();
	memcpy(text, data + 1, n);
	const char *dir = flags & 1 ? "conf/x" : "";
	/* The arena at the end of a static buffer, so a write past asize
	 * lands in the global's redzone (ASan), without a megabyte malloc
	 * and free per input (which made it 40 times slower). */
	static char big[8u << 20];
	size_t asize = sites_conf_arena_bound(n);
	char *arena;
	bool heap = asize > sizeof(big);
	if (!heap) {
		arena = big + sizeof(big) - asize;
	} else {
		arena = malloc(asize);
		if (!arena)
			abort();
	}
	struct sconf c;
	struct sconf_err err;
	arena_lo = arena;
	arena_hi = arena + asize;
	if (sites_conf_parse(text, n, dir, arena, asize, &c, &err) == 0) {
		check_parsed(&c);
		sites_conf_defaults(&c);
		CHECK(c.workers && c.max_conns && c.max_body && c.header_timeout);
	} else {
		CHECK(err.pos.line >= 1 && err.pos.col >= 1);
		CHECK(err.msg[0] != 0 && memchr(err.msg, 0, sizeof(err.msg)));
		/* (At the start: a message may quote the file's own words.) */
		CHECK(strncmp(err.msg, "the configuration needs more memory", 35) != 0);
	}
	if (flags & 2) {
		size_t small = asize / 4;
		if (sites_conf_parse(text, n, dir, arena, small, &c, &err) < 0)
			CHECK(err.msg[0] != 0);
	}
	if (heap)
		free(arena);
	free(text);
	return 0;
}
