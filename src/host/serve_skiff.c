/* serve_skiff.c — see serve_skiff.h.
 *
 * loop_skiff on a hoststack, turned by the runner (runner/runner.h), as the
 * unikernel's is (uk/uk_main.c): loop_skiff_attach_runner connects the
 * two, and only the device and the memory differ.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../loop/loop_skiff.h"
#include "../elog/elog.h"
#include "../plat/plat.h"
#include "cli.h"
#include "hoststack.h"
#include "../conf/opts.h"
#include "serve_skiff.h"

/* Deep like loop_linux's (4096): a burst of connects is queued, not
 * answered with cookies; the pool below bounds it anyway. */
#define SERVE_BACKLOG 4096

struct serve_skiff {
	struct hoststack hs;
	uint32_t tcp_sockets; /* the engine's pool (its ids are 0 .. tcp_sockets-1) */
	struct loop *loop;
	void *mem;
	size_t memsz;
};

static int plat_run(void *ctx, struct loop *l, volatile int *stop)
{
	(void)l;
	struct serve_skiff *ss = ctx;
	/* A broken device ends the server: the error the loop API has for it. */
	return hoststack_run(&ss->hs, stop) < 0 ? -SK_ENETUNREACH : 0;
}

static void plat_fatal(void *ctx, const char *msg)
{
	(void)ctx;
	elog(SK_LOG_ERROR, NULL, "%s", msg);
	elog_close();
	abort();
}

static void plat_release(void *ctx, struct loop *l)
{
	(void)l;
	struct serve_skiff *ss = ctx;
	/* Whatever the server queued while stopping (FINs of the connections
	 * it closed) leaves before the device goes. */
	if (ss->hs.tcp) {
		tcp_poll(ss->hs.tcp, plat_now());
		dev_tx_sync(ss->hs.dev);
	}
	hoststack_close(&ss->hs);
	if (ss->mem)
		munmap(ss->mem, ss->memsz);
	free(ss);
}

struct loop *serve_skiff_open(const struct serve_skiff_config *cfg, char *err, size_t errlen)
{
	struct serve_skiff *ss = calloc(1, sizeof(*ss));
	if (!ss) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	struct hoststack_config hc = cfg->stack;
	hc.tcp = true;
	hc.tcp_max_sockets = opt_tcp_sockets(cfg->max_conns);
	ss->tcp_sockets = hc.tcp_max_sockets;
	hc.tcp_sndbuf = cfg->tcp_sndbuf;
	hc.tcp_rcvbuf = cfg->tcp_rcvbuf;
	if (hoststack_open(&ss->hs, &hc, err, errlen) < 0) {
		free(ss);
		return NULL;
	}
	/* --trace: the engine's segment stages and the runner's device and park
	 * stages (tcp_stack_init cleared the engine's pointer). */
	ss->hs.tcp->trace = cfg->trace;
	ss->hs.loop.trace = cfg->trace;
	struct loop_skiff_config lc = {
		.tcp = ss->hs.tcp,
		.local_ip = cfg->stack.ifc.ip,
		.max_timers = cfg->max_timers,
		.listen_backlog = SERVE_BACKLOG,
		.now = plat_now(),
		.plat = {.run = plat_run, .release = plat_release, .fatal = plat_fatal, .ctx = ss},
	};
	ss->memsz = loop_skiff_mem_size(&lc);
	ss->mem = mmap(NULL, ss->memsz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ss->mem == MAP_FAILED) {
		ss->mem = NULL;
		snprintf(err, errlen, "cannot map %zu bytes for the loop", ss->memsz);
		hoststack_close(&ss->hs);
		free(ss);
		return NULL;
	}
	ss->loop = loop_skiff_init(ss->mem, ss->memsz, &lc);
	if (!ss->loop) {
		snprintf(err, errlen, "cannot build the loop");
		munmap(ss->mem, ss->memsz);
		hoststack_close(&ss->hs);
		free(ss);
		return NULL;
	}
	loop_skiff_attach_runner(ss->loop, &ss->hs.loop);
	return ss->loop;
}

static struct serve_skiff *owner(struct loop *l)
{
	return loop_skiff_platform_ctx(l);
}

void serve_skiff_describe(struct loop *l, char *buf, size_t len)
{
	struct serve_skiff *ss = owner(l);
	char mac[18];
	cli_format_mac(ss->hs.dev->mac, mac);
	snprintf(buf, len, " dev=%s mac=%s", ss->hs.dev->name, mac);
}

const uint8_t *serve_skiff_mac(struct loop *l)
{
	return owner(l)->hs.ifc->mac;
}

void serve_skiff_announce(struct loop *l)
{
	hoststack_announce(&owner(l)->hs);
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

const struct dev_stats *serve_skiff_dev_stats(struct loop *l)
{
	return &owner(l)->hs.dev->stats;
}

bool serve_skiff_flow_steered(struct loop *l)
{
	return owner(l)->hs.dev->flow_steered;
}

void serve_skiff_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v),
		       void *ctx)
{
	hoststack_stats(&owner(l)->hs, fn, ctx);
	loop_stats(l, fn, ctx);
}

void serve_skiff_print_stats(struct loop *l, FILE *f)
{
	serve_skiff_stats(l, print_stat, f);
}

void serve_skiff_set_side(struct loop *l, int fd, void (*fn)(void *ctx, sk_time_ns now),
			  void *ctx)
{
	struct runner *r = &owner(l)->hs.loop;
	r->side_fd = fd;
	r->side_ctx = ctx;
	r->side_next = 0;
	r->on_side = fn;
}

/* ss's short state names. */
static const char *ss_state(enum tcp_state s)
{
	switch (s) {
	case TCP_LISTEN: return "LISTEN";
	case TCP_SYN_SENT: return "SYN-SENT";
	case TCP_SYN_RECEIVED: return "SYN-RECV";
	case TCP_ESTABLISHED: return "ESTAB";
	case TCP_FIN_WAIT_1: return "FIN-WAIT-1";
	case TCP_FIN_WAIT_2: return "FIN-WAIT-2";
	case TCP_CLOSE_WAIT: return "CLOSE-WAIT";
	case TCP_CLOSING: return "CLOSING";
	case TCP_LAST_ACK: return "LAST-ACK";
	case TCP_TIME_WAIT: return "TIME-WAIT";
	default: return "UNCONN";
	}
}

void serve_skiff_conns(struct loop *l, FILE *f)
{
	struct serve_skiff *ss = owner(l);
	uint32_t n = 0;
	fprintf(f, "# connections (skiff's TCP)\n");
	fprintf(f, "%-11s %7s %7s %-40s %s\n", "State", "Recv-Q", "Send-Q",
		"Local Address:Port", "Peer Address:Port");
	for (uint32_t s = 0; s < ss->tcp_sockets; s++) {
		struct tcp_info ti;
		if (tcp_info(ss->hs.tcp, (int)s, &ti) < 0)
			continue;
		n++;
		char la[OPT_ADDR_STRLEN], ra[OPT_ADDR_STRLEN];
		opt_format_addr(&ti.laddr, ti.lport, la);
		if (ti.state == TCP_LISTEN)
			snprintf(ra, sizeof(ra), "*:*");
		else
			opt_format_addr(&ti.raddr, ti.rport, ra);
		fprintf(f, "%-11s %7u %7u %-40s %s\n", ss_state(ti.state), ti.unread,
			ti.unacked + ti.unsent, la, ra);
		if (ti.state == TCP_LISTEN)
			continue;
		fprintf(f, "\t%s%s", ti.ts ? "ts " : "", ti.sack ? "sack " : "");
		if (ti.ws)
			fprintf(f, "wscale:%u,%u ", ti.snd_wscale, ti.rcv_wscale);
		fprintf(f,
			"rto:%u rtt:%u.%03u mss:%u cwnd:%u ssthresh:%u snd_wnd:%u rcv_wnd:%u "
			"unacked:%u unsent:%u retrans:%llu\n",
			ti.rto_ms, ti.srtt_us / 1000, ti.srtt_us % 1000, ti.snd_mss, ti.cwnd,
			ti.ssthresh, ti.snd_wnd, ti.rcv_wnd, ti.unacked, ti.unsent,
			(unsigned long long)ti.retransmits);
	}
	fprintf(f, "# %u sockets of %u\n", n, ss->tcp_sockets);
}

uint32_t serve_skiff_unfinished(struct loop *l)
{
	return tcp_unfinished(owner(l)->hs.tcp);
}
