/* proxy_cli.c — `skiff proxy`: the reverse proxy of http/proxy.h on the
 * hosted application runner (app_host.h), so it takes every stack option
 * an application takes and runs on --stack linux and --stack skiff alike;
 * this file only turns the upstream options into a struct proxy_config
 * and gives the proxy its memory.
 *
 * --workers N: one whole proxy a worker (app_host.c): its own exchanges,
 * its own pool of upstream connections (--pool is per worker and
 * upstream), its own health counts, and its own cache of --cache SIZE / N
 * bytes; nothing is shared between them, so a key may be fetched once
 * per worker (docs/proxy.md). */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "../http/cache.h"
#include "../http/proxy.h"
#include "app_host.h"
#include "cli.h"
#include "workers.h"

/* Worker k's proxy, cache and definition. */
struct proxy_worker {
	struct proxy px;
	struct http_cache cache;
	struct http_app_def def;
	struct http_app_route route;
};
static struct proxy_worker pws[WORKERS_MAX];

/* An upstream given by name: resolved once, here at start (getaddrinfo:
 * /etc/hosts, then DNS as nsswitch says).  The first IPv4 address, else
 * the first IPv6 one, so that a name with both (localhost) does not
 * depend on the resolver's order.  A name that does not resolve is a
 * usage error (exit 2). */
static struct sk_addr resolve_upstream(const char *name)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(name, NULL, &hints, &res);
	if (rc != 0)
		cli_usage_error("proxy", "--upstream: cannot resolve '%s': %s", name,
				gai_strerror(rc));
	const struct addrinfo *v6 = NULL, *v4 = NULL;
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET && !v4)
			v4 = ai;
		else if (ai->ai_family == AF_INET6 && !v6)
			v6 = ai;
	}
	struct sk_addr a = {{0}};
	if (v4) {
		const struct sockaddr_in *sin = (const void *)v4->ai_addr;
		a = sk_addr_v4(ntohl(sin->sin_addr.s_addr));
	} else if (v6) {
		const struct sockaddr_in6 *sin6 = (const void *)v6->ai_addr;
		a = sk_addr_v6(sin6->sin6_addr.s6_addr);
	}
	freeaddrinfo(res);
	if (sk_addr_is_any(&a))
		cli_usage_error("proxy", "--upstream: '%s' has no IPv4 or IPv6 address", name);
	return a;
}

static int proxy_setup(void *ctx, const struct opts *o, unsigned worker, unsigned nworkers,
		       struct http_app_config *cfg, uint32_t *extra_socks,
		       const struct http_app_def **def)
{
	(void)ctx;
	struct proxy_worker *pw = &pws[worker];
	struct proxy *px = &pw->px;
	struct proxy_config pc;
	proxy_config_default(&pc);
	if (!opt_given(o, OPT_UPSTREAM))
		cli_usage_error("proxy", "--upstream ADDR:PORT[,ADDR:PORT...] is required");
	struct opt_endpoint ep[OPT_ENDPOINTS_MAX];
	int n = opt_parse_endpoints_any(opt_str(o, OPT_UPSTREAM), ep, OPT_ENDPOINTS_MAX);
	for (int i = 0; i < n; i++) {
		pc.up_addr[i] = ep[i].name[0] ? resolve_upstream(ep[i].name) : ep[i].addr;
		pc.up_port[i] = ep[i].port;
	}
	pc.nup = n > 0 ? (unsigned)n : 0;
	/* --purge-allow replaces the default list (loopback) */
	struct opt_prefix pp[OPT_PREFIXES_MAX];
	int np = opt_parse_prefixes(opt_str(o, OPT_PURGE_ALLOW), pp, OPT_PREFIXES_MAX);
	pc.npurge_allow = np > 0 ? (unsigned)np : 0;
	for (int i = 0; i < np; i++)
		pc.purge_allow[i] = (struct proxy_prefix){pp[i].addr, pp[i].len};
	pc.balance = opt_num(o, OPT_BALANCE) == 1 ? PROXY_LEAST : PROXY_RR;
	pc.pool = (uint32_t)opt_num(o, OPT_POOL);
	pc.connect_timeout = opt_num(o, OPT_CONNECT_TIMEOUT) * SK_NS_PER_S;
	pc.first_byte_timeout = opt_num(o, OPT_FIRST_BYTE_TIMEOUT) * SK_NS_PER_S;
	pc.idle_timeout = opt_num(o, OPT_UP_IDLE_TIMEOUT) * SK_NS_PER_S;
	pc.fail_max = (uint32_t)opt_num(o, OPT_FAIL_MAX);
	pc.fail_timeout = opt_num(o, OPT_FAIL_TIMEOUT) * SK_NS_PER_S;
	/* On the kernel's sockets every exchange holds a second descriptor,
	 * and the pools theirs. */
	bool on_skiff = opt_given(o, OPT_STACK) ? opt_num(o, OPT_STACK) == 0 : opt_given(o, OPT_DEV);
	struct rlimit rl;
	if (!on_skiff && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		/* The descriptors are the process's: each worker its share. */
		uint64_t lim = rl.rlim_cur / nworkers, pools = (uint64_t)pc.nup * pc.pool;
		uint64_t fit = lim > 64 + pools ? (lim - 64 - pools) / 2 : 1;
		if (cfg->max_conns > fit)
			cfg->max_conns = (uint32_t)(fit ? fit : 1);
	}
	pc.max_xchg = cfg->max_conns;
	*extra_socks = cfg->max_conns + pc.nup * pc.pool;
	size_t sz = proxy_mem_size(&pc);
	void *mem = sz ? mmap(NULL, sz, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
		       : MAP_FAILED;
	if (mem == MAP_FAILED) {
		fprintf(stderr, "proxy: cannot reserve memory for %u exchanges\n", pc.max_xchg);
		return 1;
	}
	if (proxy_init(px, mem, sz, &pc) < 0) {
		fprintf(stderr, "proxy: bad configuration\n");
		return 1;
	}
	proxy_app_config(px, cfg);
	/* The cache's clock is the wall's (HTTP dates): an offset from the
	 * loop's monotonic one. */
	struct timespec rt, mt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	px->cfg.wall_offset = (int64_t)rt.tv_sec - (int64_t)mt.tv_sec;
	px->cfg.x_cache = !opt_given(o, OPT_NO_X_CACHE);
	uint64_t csz = opt_num(o, OPT_CACHE) / nworkers;
	if (csz) {
		void *cm = mmap(NULL, csz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct http_cache_config cc;
		http_cache_config_default(&cc);
		if (cm == MAP_FAILED || http_cache_init(&pw->cache, cm, csz, &cc) < 0) {
			fprintf(stderr, "proxy: cannot set up a cache of %llu bytes\n",
				(unsigned long long)csz);
			return 1;
		}
		px->cache = &pw->cache;
	}
	proxy_app_def(px, &pw->def, &pw->route);
	pw->def.workers = true; /* each worker its own struct proxy */
	*def = &pw->def;
	return 0;
}

static void proxy_print(void *ctx, unsigned worker,
			void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx)
{
	(void)ctx;
	const struct proxy *px = &pws[worker].px;
	proxy_stats(px, fn, fctx);
	if (px->cache)
		http_cache_stats(px->cache, fn, fctx);
	for (unsigned i = 0; i < px->cfg.nup; i++) {
		char name[96];
		snprintf(name, sizeof(name), "proxy.upstream.%s.requests", px->up[i].host);
		fn(fctx, name, px->up[i].requests);
		snprintf(name, sizeof(name), "proxy.upstream.%s.failures", px->up[i].host);
		fn(fctx, name, px->up[i].failures);
		snprintf(name, sizeof(name), "proxy.upstream.%s.downs", px->up[i].host);
		fn(fctx, name, px->up[i].downs);
	}
}

static void proxy_halt(void *ctx, unsigned worker)
{
	(void)ctx;
	proxy_stop(&pws[worker].px);
}

int cmd_proxy(int argc, char **argv)
{
	/* The definition each worker runs is its own (proxy_setup); this one
	 * only names the command and allows the workers. */
	static struct http_app_def def;
	static struct http_app_route route;
	proxy_app_def(&pws[0].px, &def, &route);
	def.workers = true;
	struct app_host_hooks h = {&opt_cmd_proxy, proxy_setup, proxy_print, proxy_halt, NULL, true};
	return app_host_run(&def, &h, argc, argv);
}
