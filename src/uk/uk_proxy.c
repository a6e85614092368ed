/* uk_proxy.c — `skiff proxy` in the unikernel: build/skiff-proxy-uk.elf is
 * skiff-uk.elf linked with this object (mk/unikernel.mk), whose uk_app
 * hooks (uk/uk_app.h) make the guest run the reverse proxy and cache of
 * http/proxy.h on skiff's own TCP, as proxy_cli.c does hosted:
 *
 *   skiff vm --proxy -p 8080:80 -- upstream=10.0.2.2:8000 cache=16M
 *
 * The words are the guest's (opt_cmd_uk) and the proxy's, the latter the
 * very entries `skiff proxy` uses (opt_cmd_proxy's: names, defaults,
 * bounds, messages), so `upstream=1.2.3` stops the boot with the message
 * `skiff proxy --upstream 1.2.3` exits 2 with.  Upstreams are numeric
 * IPv4 (no resolver in the guest); on QEMU's user network the host's
 * loopback is 10.0.2.2.  The exchanges' buffers and the cache come from
 * the guest's heap; a cache= larger than what is left stops the boot with
 * the numbers and what to change.  The cache's clock is the guest's wall
 * clock (RTC at boot + TSC). */
#include "../http/cache.h"
#include "../http/proxy.h"
#include "../plat/kvm/kvm.h"
#include "uk_app.h"

static struct proxy px;
static struct http_cache cache;
static struct http_app_def def;
static struct http_app_route route;

/* The proxy's words after the guest's: taken from `skiff proxy`'s table
 * by id, so a default or help line changed there changes here.  Only
 * those the guest applies (below); the stack, device, TLS-file and pcap
 * options are the VM's business (skiff vm's own options). */
static const uint8_t proxy_ids[] = {
	OPT_UPSTREAM, OPT_BALANCE, OPT_POOL, OPT_CONNECT_TIMEOUT, OPT_FIRST_BYTE_TIMEOUT,
	OPT_UP_IDLE_TIMEOUT, OPT_FAIL_MAX, OPT_FAIL_TIMEOUT, OPT_CACHE, OPT_NO_X_CACHE,
	OPT_BODY_TIMEOUT, OPT_SEND_TIMEOUT,
};
static struct opt_use uses[96];
static struct opt_cmd cmd;

static const struct opt_cmd *proxy_cmd(void)
{
	if (cmd.use)
		return &cmd;
	unsigned n = 0;
	for (unsigned i = 0; i < opt_cmd_uk.nuse && n < SK_ARRAY_LEN(uses); i++) {
		const struct opt_use *u = &opt_cmd_uk.use[i];
		if (u->id == OPT_CACHE_CONTROL) /* the static server's files only */
			continue;
		/* max-conns: the proxy's default (256, as uk_main.c gives an
		 * application image), shown as such. */
		for (unsigned j = 0; u->id == OPT_MAX_CONNS && j < opt_cmd_proxy.nuse; j++)
			if (opt_cmd_proxy.use[j].id == OPT_MAX_CONNS)
				u = &opt_cmd_proxy.use[j];
		uses[n++] = *u;
	}
	for (unsigned k = 0; k < SK_ARRAY_LEN(proxy_ids); k++)
		for (unsigned i = 0; i < opt_cmd_proxy.nuse && n < SK_ARRAY_LEN(uses); i++)
			if (opt_cmd_proxy.use[i].id == proxy_ids[k])
				uses[n++] = opt_cmd_proxy.use[i];
	cmd = opt_cmd_uk;
	cmd.synopsis = "skiff vm --proxy [VM OPTIONS] -- upstream=ADDR:PORT[,ADDR:PORT...] [WORD...]";
	cmd.about = "The unikernel's reverse proxy (docs/proxy.md, \"In the unikernel\"): skiff proxy on\n"
		    "skiff's own TCP in the guest, with ARP, ICMP and UDP echo on port 7.  Words are\n"
		    "NAME=VALUE (flags: NAME), the same names and values as skiff proxy's and skiff\n"
		    "serve's --NAME VALUE.  Upstreams are numeric IPv4 (QEMU's user network: the\n"
		    "host's 127.0.0.1 is 10.0.2.2).";
	cmd.use = uses;
	cmd.nuse = (uint8_t)n;
	return &cmd;
}

static int proxy_setup(const struct opts *o, struct http_app_config *cfg, uint32_t *extra_socks,
		       const struct uk_app_env *env)
{
	struct proxy_config pc;
	proxy_config_default(&pc);
	if (!opt_given(o, OPT_UPSTREAM)) {
		/* As `skiff proxy` without --upstream (a usage error there). */
		kprintf("skiff-uk: upstream=ADDR:PORT[,ADDR:PORT...] is required\n");
		return -1;
	}
	uint32_t ip[OPT_ENDPOINTS_MAX];
	uint16_t port[OPT_ENDPOINTS_MAX];
	int n = opt_parse_endpoints(opt_str(o, OPT_UPSTREAM), ip, port, OPT_ENDPOINTS_MAX);
	if (n < 0) {
		/* The table took it (a name or [IPv6], which skiff proxy
		 * takes hosted); the guest has no resolver and no IPv6 here. */
		kprintf("skiff-uk: upstream: '%s': the guest takes numeric IPv4 upstreams only "
			"(no names, no [IPv6])\n",
			opt_str(o, OPT_UPSTREAM));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		pc.up_addr[i] = sk_addr_v4(ip[i]);
		pc.up_port[i] = port[i];
	}
	pc.nup = n > 0 ? (unsigned)n : 0;
	pc.balance = opt_num(o, OPT_BALANCE) == 1 ? PROXY_LEAST : PROXY_RR;
	pc.pool = (uint32_t)opt_num(o, OPT_POOL);
	pc.connect_timeout = opt_num(o, OPT_CONNECT_TIMEOUT) * SK_NS_PER_S;
	pc.first_byte_timeout = opt_num(o, OPT_FIRST_BYTE_TIMEOUT) * SK_NS_PER_S;
	pc.idle_timeout = opt_num(o, OPT_UP_IDLE_TIMEOUT) * SK_NS_PER_S;
	pc.fail_max = (uint32_t)opt_num(o, OPT_FAIL_MAX);
	pc.fail_timeout = opt_num(o, OPT_FAIL_TIMEOUT) * SK_NS_PER_S;
	pc.max_xchg = cfg->max_conns;
	pc.x_cache = !opt_given(o, OPT_NO_X_CACHE);
	pc.wall_offset = env->wall_offset;
	cfg->body_timeout = opt_num(o, OPT_BODY_TIMEOUT) * SK_NS_PER_S;
	cfg->send_timeout = opt_num(o, OPT_SEND_TIMEOUT) * SK_NS_PER_S;
	/* Every exchange may hold an upstream connection, and each pool its
	 * idle ones: sockets (and timers) beyond the clients'. */
	*extra_socks = cfg->max_conns + pc.nup * pc.pool;
	size_t sz = proxy_mem_size(&pc);
	if (sz == 0) {
		kprintf("skiff-uk: proxy: bad configuration (%u upstreams, %u exchanges)\n", pc.nup,
			pc.max_xchg);
		return -1;
	}
	if (proxy_init(&px, env->alloc("the proxy's exchanges", sz, "lower max-conns"), sz, &pc) < 0) {
		kprintf("skiff-uk: proxy: bad configuration\n");
		return -1;
	}
	proxy_app_config(&px, cfg);
	proxy_app_def(&px, &def, &route);
	uint64_t csz = opt_num(o, OPT_CACHE);
	char up[PROXY_MAX_UPSTREAMS * 24 + 1];
	size_t ul = 0;
	for (unsigned i = 0; i < pc.nup && ul < sizeof(up); i++)
		ul += (size_t)ksnprintf(up + ul, sizeof(up) - ul, "%s%s", i ? "," : "", px.up[i].host);
	kprintf("skiff-uk: proxy: upstream=%s balance=%s pool=%u; %u exchanges, %lu KiB; "
		"cache %lu KiB%s\n",
		up, pc.balance == PROXY_LEAST ? "least" : "rr", pc.pool, pc.max_xchg,
		(uint64_t)sz >> 10, csz >> 10, csz ? "" : " (off: cache=SIZE)");
	return 0;
}

/* The cache takes its memory last: with everything else sized, a cache=
 * the guest cannot hold is the one thing to lower (or --mem to raise). */
static int proxy_late(const struct opts *o, const struct uk_app_env *env)
{
	uint64_t csz = opt_num(o, OPT_CACHE);
	if (csz == 0)
		return 0;
	struct http_cache_config cc;
	http_cache_config_default(&cc);
	char what[64];
	ksnprintf(what, sizeof(what), "the cache (cache=%s)", opt_str(o, OPT_CACHE));
	void *cm = env->alloc(what, (size_t)csz, "lower cache=");
	if (http_cache_init(&cache, cm, (size_t)csz, &cc) < 0) {
		kprintf("skiff-uk: proxy: cannot set up a cache of %lu bytes\n", csz);
		return -1;
	}
	px.cache = &cache;
	return 0;
}

static void proxy_print(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	proxy_stats(&px, fn, ctx);
	if (px.cache)
		http_cache_stats(px.cache, fn, ctx);
	for (unsigned i = 0; i < px.cfg.nup; i++) {
		char name[96];
		ksnprintf(name, sizeof(name), "proxy.upstream.%s.requests", px.up[i].host);
		fn(ctx, name, px.up[i].requests);
		ksnprintf(name, sizeof(name), "proxy.upstream.%s.failures", px.up[i].host);
		fn(ctx, name, px.up[i].failures);
		ksnprintf(name, sizeof(name), "proxy.upstream.%s.downs", px.up[i].host);
		fn(ctx, name, px.up[i].downs);
	}
}

static void proxy_halt(void)
{
	proxy_stop(&px);
}

const struct uk_app_hooks uk_app = {
	.cmd = proxy_cmd,
	.def = &def,
	.setup = proxy_setup,
	.stats = proxy_print,
	.late = proxy_late,
	.stop = proxy_halt,
	.help_cmd = "skiff vm --proxy -- help",
};
