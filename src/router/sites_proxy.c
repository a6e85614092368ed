/* sites_proxy.c — a proxy route of the configuration (conf/sites_conf.h)
 * as http/proxy.h's struct proxy_config (router/sites.h).
 *
 * The route's options are `skiff proxy`'s flags written as directives; a
 * field the route leaves zero (pool and purge_allow: not given) keeps
 * proxy_config_default's value, which is the flag's default (conf/opts.c's
 * proxy options; sites_proxy_test.c holds the two together).
 *
 * Freestanding, as the router. */
#include "sites.h"

#include "../http/proxy.h"

_Static_assert(SCONF_MAX_UPSTREAMS <= PROXY_MAX_UPSTREAMS, "a route's upstreams fit the proxy");
_Static_assert(SCONF_MAX_PURGE_ALLOW <= PROXY_PURGE_ALLOW_MAX, "purge_allow fits the proxy");

void sites_proxy_config(const struct sconf_route *rt, struct proxy_config *pc)
{
	proxy_config_default(pc);
	for (unsigned i = 0; i < rt->nup; i++) {
		pc->up_addr[i] = rt->up[i].addr;
		pc->up_port[i] = rt->up[i].port;
	}
	pc->nup = rt->nup;
	pc->body_on_get = rt->body_on_get;
	pc->host_upstream = rt->host_upstream;
	pc->balance = rt->balance == SCONF_BALANCE_LEAST ? PROXY_LEAST : PROXY_RR;
	if (rt->pool_given)
		pc->pool = rt->pool;
	if (rt->connect_timeout)
		pc->connect_timeout = rt->connect_timeout;
	if (rt->first_byte_timeout)
		pc->first_byte_timeout = rt->first_byte_timeout;
	if (rt->upstream_idle_timeout)
		pc->idle_timeout = rt->upstream_idle_timeout;
	if (rt->fail_max)
		pc->fail_max = rt->fail_max;
	if (rt->fail_timeout)
		pc->fail_timeout = rt->fail_timeout;
	if (rt->no_x_cache)
		pc->x_cache = false;
	if (rt->purge_allow_given) {
		for (unsigned i = 0; i < rt->npurge_allow; i++)
			pc->purge_allow[i] = (struct proxy_prefix){rt->purge_allow[i].addr,
								   rt->purge_allow[i].len};
		pc->npurge_allow = rt->npurge_allow;
	}
}

bool sites_proxy_same(const struct sconf_route *a, const struct sconf_route *b)
{
	if (a->nup != b->nup || a->cache_bytes != b->cache_bytes ||
	    a->host_upstream != b->host_upstream || a->body_on_get != b->body_on_get ||
	    a->balance != b->balance || a->pool_given != b->pool_given || a->pool != b->pool ||
	    a->connect_timeout != b->connect_timeout ||
	    a->first_byte_timeout != b->first_byte_timeout ||
	    a->upstream_idle_timeout != b->upstream_idle_timeout || a->fail_max != b->fail_max ||
	    a->fail_timeout != b->fail_timeout || a->no_x_cache != b->no_x_cache ||
	    a->purge_allow_given != b->purge_allow_given || a->npurge_allow != b->npurge_allow)
		return false;
	for (unsigned i = 0; i < a->nup; i++)
		if (!sk_addr_eq(&a->up[i].addr, &b->up[i].addr) || a->up[i].port != b->up[i].port)
			return false;
	for (unsigned i = 0; i < a->npurge_allow; i++)
		if (!sk_addr_eq(&a->purge_allow[i].addr, &b->purge_allow[i].addr) ||
		    a->purge_allow[i].len != b->purge_allow[i].len)
			return false;
	return true;
}
