/* echo.c — `skiff echo`: a host that answers ARP, ICMP echo, UDP and TCP
 * echo (port 7) and TCP discard (port 9) on one device, over IPv4 and, with
 * --ip6, IPv6 (ND, ICMPv6 echo, the same ports).  The first thing a
 * Linux peer can talk to. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hoststack.h"

#define ECHO_PORT 7
#define DISCARD_PORT 9

static volatile sig_atomic_t echo_stop;

static void on_signal(int sig)
{
	(void)sig;
	echo_stop = 1;
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

int cmd_echo(int argc, char **argv)
{
	struct opts o;
	cli_parse(&o, &opt_cmd_echo, argc, argv);
	struct hoststack_config cfg = {.tcp = true};
	hoststack_options(&cfg, &o);
	bool stats = opt_given(&o, OPT_STATS);

	char err[256];
	struct hoststack hs;
	if (hoststack_open(&hs, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff echo: %s\n", err);
		return 1;
	}
	int le = tcp_listen(hs.tcp, ECHO_PORT, 0), ld = tcp_listen(hs.tcp, DISCARD_PORT, 0);
	if (udp_bind(hs.ifc, ECHO_PORT, echo_udp, NULL) < 0 ||
	    (cfg.ifc.ip6 && udp6_bind(hs.ifc, ECHO_PORT, echo_udp6, NULL) < 0) || le < 0 || ld < 0) {
		fprintf(stderr, "skiff echo: cannot bind ports %d and %d\n", ECHO_PORT, DISCARD_PORT);
		hoststack_close(&hs);
		return 1;
	}
	tcp_set_user(hs.tcp, le, (void *)&roles[ROLE_ECHO_LISTENER]);
	tcp_set_user(hs.tcp, ld, (void *)&roles[ROLE_DISCARD_LISTENER]);
	hs.loop.on_tcp = echo_tcp;
	hoststack_announce(&hs);

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char ipbuf[16], macbuf[18];
	cli_format_ipv4(cfg.ifc.ip, ipbuf);
	cli_format_mac(hs.dev->mac, macbuf);
	printf("skiff echo: ready dev=%s ip=%s/%u mac=%s udp_echo=%d tcp_echo=%d tcp_discard=%d",
	       hs.dev->name, ipbuf, cfg.ifc.prefix_len, macbuf, ECHO_PORT, ECHO_PORT, DISCARD_PORT);
	/* UDP echo, TCP echo and discard serve both families. */
	for (unsigned i = 0; i < cfg.ifc.nip6; i++) {
		char a6[OPT_ADDR_STRLEN];
		struct sk_addr a = sk_addr_v6(cfg.ifc.ip6_addr[i].addr.b);
		opt_format_addr(&a, 0, a6);
		printf(" ip6=%s/%u", a6, cfg.ifc.ip6_addr[i].prefix_len);
	}
	if (cfg.ifc.ip6_slaac)
		printf(" ip6=auto");
	printf("\n");
	fflush(stdout);

	int rc = hoststack_run(&hs, &echo_stop);
	if (stats)
		hoststack_print_stats(&hs, stdout);
	fflush(stdout);
	hoststack_close(&hs);
	return rc < 0 ? 1 : 0;
}
