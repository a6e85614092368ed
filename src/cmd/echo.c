/* echo.c — `skiff echo`: a host that answers ARP, ICMP echo, UDP and TCP
 * echo (port 7) and TCP discard (port 9) on one device, over IPv4 and, with
 * --ip6, IPv6 (ND, ICMPv6 echo, the same ports).  The first thing a
 * Linux peer can talk to.
 *
 * --workers N: N whole hosts on N queues of the device, one pinned thread
 * each, as serve's workers (docs/smp.md); worker 0 is the main thread. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plat/plat.h"
#include "../host/cli.h"
#include "../host/hoststack.h"
#include "../host/stat_sum.h"
#include "../host/workers.h"

#define ECHO_PORT 7
#define DISCARD_PORT 9
/* Each worker's stop flag (workers.h) is set by the handler, which wakes
 * the workers parked in their own ppoll. */
static void on_signal(int sig)
{
	workers_signal_stop(sig, false);
}

static void echo_udp(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint16_t sport,
		     uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx;
	udp_sendto(ifc, now, dport, src, sport, data, len);
}

/* Over IPv6: back from the address the datagram came to. */
static void echo_udp6(void *ctx, struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
		      const struct ipv6_addr *dst, uint16_t sport, uint16_t dport,
		      const uint8_t *data, size_t len)
{
	(void)ctx;
	udp6_sendto(ifc, now, dport, dst, src, sport, data, len);
}

/* What a TCP socket is to this app; stored as the socket's user pointer. */
enum echo_role { ROLE_ECHO_LISTENER, ROLE_DISCARD_LISTENER, ROLE_ECHO, ROLE_DISCARD };
static const enum echo_role roles[] = {ROLE_ECHO_LISTENER, ROLE_DISCARD_LISTENER, ROLE_ECHO,
				       ROLE_DISCARD};

/* Echo: move what has arrived back out, as far as send space allows.  With
 * edge-triggered events the socket is drained here; when send space runs
 * out the rest waits for TCP_EV_WRITE, which comes back here. */
static void echo_pump(struct tcp_stack *tcp, int s, sk_time_ns now)
{
	uint8_t buf[16384];
	for (;;) {
		int space = tcp_send_space(tcp, s);
		if (space <= 0)
			return; /* wait for TCP_EV_WRITE (or the error it becomes) */
		int n = tcp_recv(tcp, s, buf, SK_MIN((size_t)space, sizeof(buf)));
		if (n == -SK_EAGAIN)
			return;
		if (n <= 0) { /* end of stream (all echoed) or an error */
			tcp_close(tcp, now, s);
			return;
		}
		if (tcp_send(tcp, s, buf, (size_t)n) != n) {
			tcp_abort(tcp, now, s);
			return;
		}
	}
}

static void discard_pump(struct tcp_stack *tcp, int s, sk_time_ns now)
{
	uint8_t buf[16384];
	for (;;) {
		int n = tcp_recv(tcp, s, buf, sizeof(buf));
		if (n == -SK_EAGAIN)
			return;
		if (n <= 0) {
			tcp_close(tcp, now, s);
			return;
		}
	}
}

static void echo_tcp(void *ctx, struct runner *l, const struct tcp_event *ev, int n, sk_time_ns now)
{
	(void)ctx;
	struct tcp_stack *tcp = l->tcp;
	for (int i = 0; i < n; i++) {
		const enum echo_role *role = ev[i].user;
		if (!role)
			continue;
		switch (*role) {
		case ROLE_ECHO_LISTENER:
		case ROLE_DISCARD_LISTENER:
			for (;;) {
				struct sk_addr addr;
				uint16_t port;
				int s = tcp_accept(tcp, ev[i].sock, &addr, &port);
				if (s < 0)
					break;
				tcp_set_user(tcp, s, (void *)&roles[*role == ROLE_ECHO_LISTENER ? 2 : 3]);
				if (*role == ROLE_ECHO_LISTENER)
					echo_pump(tcp, s, now);
				else
					discard_pump(tcp, s, now);
			}
			break;
		case ROLE_ECHO:
			echo_pump(tcp, ev[i].sock, now);
			break;
		case ROLE_DISCARD:
			discard_pump(tcp, ev[i].sock, now);
			break;
		}
	}
}

struct echo_worker {
	struct worker wk; /* id, cpu, stop, the thread (workers.h) */
	struct hoststack hs;
};

static int echo_run(struct worker *wk, void *ctx)
{
	(void)ctx;
	struct echo_worker *w = (struct echo_worker *)(void *)wk; /* wk is first */
	return hoststack_run(&w->hs, &w->wk.stop);
}

/* One worker's host: the device queue, the ports, the callbacks. */
static int echo_open(struct echo_worker *w, const struct hoststack_config *cfg)
{
	char err[256];
	if (hoststack_open(&w->hs, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff echo: %s\n", err);
		return -1;
	}
	struct hoststack *hs = &w->hs;
	int le = tcp_listen(hs->tcp, ECHO_PORT, 0), ld = tcp_listen(hs->tcp, DISCARD_PORT, 0);
	if (udp_bind(hs->ifc, ECHO_PORT, echo_udp, NULL) < 0 ||
	    (cfg->ifc.ip6 && udp6_bind(hs->ifc, ECHO_PORT, echo_udp6, NULL) < 0) || le < 0 ||
	    ld < 0) {
		fprintf(stderr, "skiff echo: cannot bind ports %d and %d\n", ECHO_PORT, DISCARD_PORT);
		hoststack_close(hs);
		return -1;
	}
	tcp_set_user(hs->tcp, le, (void *)&roles[ROLE_ECHO_LISTENER]);
	tcp_set_user(hs->tcp, ld, (void *)&roles[ROLE_DISCARD_LISTENER]);
	hs->loop.on_tcp = echo_tcp;
	return 0;
}

static void echo_print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

int cmd_echo(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_echo, argc, argv);
	struct hoststack_config cfg = {.tcp = true};
	hoststack_options(&cfg, &o);
	bool stats = opt_given(&o, OPT_STATS);

	/* --workers: as serve's (one per allowed CPU for auto). */
	int cpus[WORKERS_MAX];
	unsigned ncpus;
	unsigned n = workers_plan(opt_num(&o, OPT_WORKERS), cfg.dev_spec, "skiff echo", cpus,
				  &ncpus);
	if (n > 1 && opt_given(&o, OPT_PCAP))
		cli_usage_error("echo", "pcap goes with workers 1 (one file, one writer)");
	if (n > 1 && cfg.ifc.ip6)
		cli_usage_error("echo", "ip6 goes with workers 1: IPv6 neighbour discovery is not "
					"shared between workers (docs/smp.md)");
	/* The workers' neighbour board (net/nbr_board.h), as serve's. */
	static struct nbr_board board;
	if (n > 1) {
		uint64_t seed;
		if (plat_random(&seed, sizeof(seed)) < 0) {
			fprintf(stderr, "skiff echo: no randomness\n");
			return 1;
		}
		nbr_board_init(&board, seed);
	}
	struct echo_worker *ws = calloc(n, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "skiff echo: out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct hoststack_config wc = cfg;
		if (n > 1) {
			wc.queue = (uint16_t)i;
			wc.nqueues = (uint16_t)n;
			wc.group = (uint16_t)(getpid() & 0xffff);
			wc.ifc.glean = true;
			wc.ifc.board = &board; /* what ARP teaches one worker, all know */
		}
		if (i > 0) {
			wc.have_mac = true;
			memcpy(wc.ifc.mac, ws[0].hs.ifc->mac, 6);
		}
		ws[i].wk.id = i;
		ws[i].wk.cpu = workers_cpu(i, n, cpus, ncpus);
		if (echo_open(&ws[i], &wc) < 0) {
			for (unsigned k = 0; k < i; k++)
				hoststack_close(&ws[k].hs);
			free(ws);
			return 1;
		}
	}
	struct hoststack *hs0 = &ws[0].hs;
	hoststack_announce(hs0);

	workers_publish(ws, sizeof(*ws), offsetof(struct echo_worker, wk), n);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char ipbuf[16], macbuf[18];
	cli_format_ipv4(cfg.ifc.ip, ipbuf);
	cli_format_mac(hs0->dev->mac, macbuf);
	printf("skiff echo: ready dev=%s ip=%s/%u mac=%s udp_echo=%d tcp_echo=%d tcp_discard=%d",
	       hs0->dev->name, ipbuf, cfg.ifc.prefix_len, macbuf, ECHO_PORT, ECHO_PORT, DISCARD_PORT);
	/* UDP echo, TCP echo and discard serve both families. */
	for (unsigned i = 0; i < cfg.ifc.nip6; i++) {
		char a6[OPT_ADDR_STRLEN];
		struct sk_addr a = sk_addr_v6(cfg.ifc.ip6_addr[i].addr.b);
		opt_format_addr(&a, 0, a6);
		printf(" ip6=%s/%u", a6, cfg.ifc.ip6_addr[i].prefix_len);
	}
	if (cfg.ifc.ip6_slaac)
		printf(" ip6=auto");
	if (n > 1 || opt_given(&o, OPT_WORKERS))
		printf(" workers=%u", n);
	printf("\n");
	fflush(stdout);

	int rc = workers_run(echo_run, NULL, "skiff echo", NULL);
	workers_publish(NULL, 0, 0, 0);
	if (stats && n == 1) {
		hoststack_print_stats(hs0, stdout);
	} else if (stats) {
		/* The sums, then each worker's own (serve --stats' shape). */
		struct stat_sum sum = {0};
		for (unsigned i = 0; i < n; i++) {
			stat_sum_source(&sum);
			hoststack_stats(&ws[i].hs, stat_sum_add, &sum);
		}
		stat_sum_emit(&sum, echo_print_stat, stdout);
		stat_sum_free(&sum);
		for (unsigned i = 0; i < n; i++) {
			struct stat_sum_prefix p = {.fn = echo_print_stat, .ctx = stdout, .k = i};
			hoststack_stats(&ws[i].hs, stat_sum_prefixed, &p);
		}
	}
	fflush(stdout);
	for (unsigned i = 0; i < n; i++)
		hoststack_close(&ws[i].hs);
	free(ws);
	return rc < 0 ? 1 : 0;
}
