/* hoststack.c — see hoststack.h. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "../elog/elog.h"
#include "../plat/plat.h"
#include "../net/tcp_iface.h"
#include "cli.h"
#include "hoststack.h"

/* DAD's verdict on each IPv6 address, for the user and for the tests,
 * which wait for "usable" before they ping. */
static void on_dad(void *ctx, struct iface *ifc, const struct ipv6_addr *addr, bool dup)
{
	(void)ctx, (void)ifc;
	char s[OPT_IPV6_STRLEN];
	opt_format_ipv6(addr->b, s);
	if (dup) {
		fprintf(stderr, "skiff: ip6 %s: duplicate address detected (DAD), not used\n", s);
		printf("skiff: ip6 %s duplicate\n", s);
	} else {
		printf("skiff: ip6 %s usable\n", s);
	}
	fflush(stdout);
}

int hoststack_open(struct hoststack *hs, const struct hoststack_config *cfg, char *err,
		   size_t errlen)
{
	memset(hs, 0, sizeof(*hs));
	struct iface_config ic = cfg->ifc;
	struct dev_config dcfg = {.pcap_path = cfg->pcap_path, .queue = cfg->queue,
				  .nqueues = cfg->nqueues, .group = cfg->group,
				  .offload_allow = cfg->no_offload ? 0 : DEV_OFF_ALL};
	if (dev_open(cfg->dev_spec, &dcfg, &hs->dev, err, errlen) < 0)
		return -1;
	/* The device may insist on its own MAC (xdp sees frames only after the
	 * NIC's filter); otherwise --mac, otherwise the device's random one. */
	if (cfg->have_mac)
		memcpy(hs->dev->mac, ic.mac, 6);
	memcpy(ic.mac, hs->dev->mac, 6);
	if (plat_random(&ic.seed, sizeof(ic.seed)) < 0) {
		snprintf(err, errlen, "no randomness");
		goto fail;
	}
	hs->ifc = calloc(1, sizeof(*hs->ifc));
	if (!hs->ifc) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	sk_time_ns now = plat_now();
	iface_init(hs->ifc, hs->dev, &ic, now);
	iface_set_dad_handler(hs->ifc, on_dad, NULL);

	if (cfg->tcp) {
		struct tcp_config tc;
		tcp_config_default(&tc);
		tcp_iface_config(&tc, hs->ifc);
		if (cfg->tcp_max_sockets)
			tc.max_sockets = cfg->tcp_max_sockets;
		if (cfg->tcp_sndbuf)
			tc.sndbuf = cfg->tcp_sndbuf;
		if (cfg->tcp_rcvbuf)
			tc.rcvbuf = cfg->tcp_rcvbuf;
		tc.cc = cfg->tcp_cc;
		/* --workers: the connections this worker opens take only source
		 * ports whose flow hash the device steers back to its queue. */
		if (cfg->nqueues > 1) {
			tc.steer_workers = cfg->nqueues;
			tc.steer_self = cfg->queue;
		}
		/* A maximum no larger than the base buffers: nothing to grow. */
		if (cfg->tcp_buf_max > SK_MAX(tc.sndbuf, tc.rcvbuf)) {
			if (cfg->tcp_buf_max > cfg->tcp_mem) {
				snprintf(err, errlen, "--tcp-buf-max %u is above --tcp-mem %u",
					 cfg->tcp_buf_max, cfg->tcp_mem);
				goto fail;
			}
			tc.buf_max = cfg->tcp_buf_max;
			tc.mem_high = cfg->tcp_mem;
		}
		if (plat_random(tc.seed, sizeof(tc.seed)) < 0) {
			snprintf(err, errlen, "no randomness");
			goto fail;
		}
		hs->tcp_arena_size = tcp_arena_size(&tc);
		if (hs->tcp_arena_size == 0) {
			snprintf(err, errlen, "bad TCP configuration");
			goto fail;
		}
		/* Reserve address space only: untouched socket buffers cost no
		 * memory, so idle connections stay cheap. */
		hs->tcp_arena = mmap(NULL, hs->tcp_arena_size, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (hs->tcp_arena == MAP_FAILED) {
			hs->tcp_arena = NULL;
			snprintf(err, errlen, "cannot map %zu bytes for TCP", hs->tcp_arena_size);
			goto fail;
		}
		hs->tcp = calloc(1, sizeof(*hs->tcp));
		if (!hs->tcp) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		int rc = tcp_stack_init(hs->tcp, hs->tcp_arena, hs->tcp_arena_size, &tc, now);
		if (rc < 0) {
			snprintf(err, errlen, "TCP init failed (%d)", rc);
			goto fail;
		}
		if (tcp_iface_attach(hs->tcp, hs->ifc) < 0) {
			snprintf(err, errlen, "cannot attach TCP to the interface");
			goto fail;
		}
	}
	hs->loop.dev = hs->dev;
	hs->loop.ifc = hs->ifc;
	hs->loop.tcp = hs->tcp;
	hs->loop.spin_ns = cfg->spin_ns;
	hs->loop.spin_learn = cfg->spin_learn;
	return 0;
fail:
	hoststack_close(hs);
	return -1;
}

void hoststack_options(struct hoststack_config *cfg, struct opts *o)
{
	char err[256];
	cli_check(opt_check_stack(o, err, sizeof(err)), o->cmd->name, err);
	cfg->dev_spec = opt_str(o, OPT_DEV);
	cfg->pcap_path = opt_str(o, OPT_PCAP);
	cfg->ifc.ip = o->v[OPT_IP].ip;
	cfg->ifc.prefix_len = o->v[OPT_IP].len;
	cfg->ifc.gw = o->v[OPT_GW].ip;
	opt_ip6_config(o, &cfg->ifc);
	cfg->have_mac = opt_given(o, OPT_MAC);
	if (cfg->have_mac)
		memcpy(cfg->ifc.mac, o->v[OPT_MAC].mac, 6);
	opt_spin(o, &cfg->spin_ns, &cfg->spin_learn);
	cfg->tcp_cc = (uint8_t)opt_num(o, OPT_TCP_CC); /* 0, cubic, where not an option */
	cfg->tcp_buf_max = (uint32_t)opt_num(o, OPT_TCP_BUF_MAX); /* 0, off, likewise */
	cfg->tcp_mem = (uint32_t)opt_num(o, OPT_TCP_MEM);
	cfg->no_offload = opt_num(o, OPT_OFFLOAD) == 1; /* "off"; 0 ("on") where not an option */
}

int hoststack_run(struct hoststack *hs, volatile int *stop)
{
	if (runner_run(&hs->loop, stop) == 0)
		return 0;
	const struct runner *r = &hs->loop;
	if (r->err_what[0] == 'p')
		elog(SK_LOG_ERROR, NULL, "ppoll: %s", strerror(-r->err));
	else
		elog(SK_LOG_ERROR, NULL, "device %s: %s failed: %s", hs->dev->name, r->err_what,
		     strerror(-r->err));
	return -1;
}

void hoststack_announce(struct hoststack *hs)
{
	iface_announce(hs->ifc, plat_now());
	dev_tx_sync(hs->dev);
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

void hoststack_stats(struct hoststack *hs, void (*fn)(void *ctx, const char *name, uint64_t v),
		     void *ctx)
{
	dev_stats_each(hs->dev, fn, ctx);
	runner_stats(&hs->loop, fn, ctx);
	iface_stats(hs->ifc, fn, ctx);
	if (hs->tcp)
		tcp_stats(hs->tcp, fn, ctx);
}

void hoststack_print_stats(struct hoststack *hs, FILE *f)
{
	hoststack_stats(hs, print_stat, f);
}

void hoststack_close(struct hoststack *hs)
{
	if (hs->dev)
		dev_close(hs->dev);
	if (hs->tcp_arena)
		munmap(hs->tcp_arena, hs->tcp_arena_size);
	free(hs->tcp);
	free(hs->ifc);
	memset(hs, 0, sizeof(*hs));
}
