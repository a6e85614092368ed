/* uk_proxy.c — `skiff proxy` in the unikernel: build/skiff-proxy-uk.elf is
 * skiff-uk.elf linked with this object (mk/unikernel.mk), whose words
 * (uk/uk_app.h) make the guest's one site the reverse proxy and cache of
 * http/proxy.h on skiff's own TCP, as `skiff proxy`'s flags make it
 * hosted: route / { proxy ...; } of the configuration model, on the sites
 * runtime (uk/uk_sites.h) every image runs:
 *
 *   skiff vm --proxy -p 8080:80 -- upstream=10.0.2.2:8000 cache=16M
 *
 * The words are the guest's (opt_cmd_uk) and the proxy's, the latter the
 * very entries `skiff proxy` uses (opt_cmd_proxy's: names, defaults,
 * bounds, messages), so `upstream=1.2.3` stops the boot with the message
 * `skiff proxy --upstream 1.2.3` exits 2 with.  Upstreams are numeric
 * IPv4 (no resolver in the guest); on QEMU's user network the host's
 * loopback is 10.0.2.2.  The exchanges' buffers and the cache come from
 * the guest's heap, the cache last: a cache= larger than what is left
 * stops the boot with the numbers and what to change.  The cache's clock
 * is the guest's wall clock (RTC at boot + TSC).  With the TLS files
 * (skiff vm --tls-cert/--tls-key) the same site answers on tls-port=, and
 * metrics=PORT is a listener of its own, as in every image. */
#include "uk_app.h"

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

const struct uk_app_hooks uk_app = {
	.cmd = proxy_cmd,
	.help_cmd = "skiff vm --proxy -- help",
	.proxy = true,
};
