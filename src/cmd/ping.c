/* ping.c — `skiff ping`: ICMP echo from skiff's own stack, so two skiff
 * hosts can check each other without a Linux stack in between.
 *
 * Sends COUNT echo requests INTERVAL apart, each with a payload computed
 * from its sequence number, and checks every reply byte for byte against
 * what that request carried: a reply that comes back changed (or for the
 * wrong request) is an error, not just a number.  A reply later than the
 * timeout counts as lost, as with Linux's ping -W.  Exit 0 only when every
 * request got one intact reply in time.
 *
 * Runs on hoststack + the runner like `skiff echo` (so it answers ARP and
 * pings itself while it runs): sending is an app timer, replies come from
 * the interface's echo reply callback. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plat/plat.h"
#include "../host/cli.h"
#include "../host/hoststack.h"

/* IPv4 and ICMP headers: what an MTU leaves for the payload. */
#define PING_OVERHEAD 28u
#define PING_OVERHEAD6 48u /* IPv6 and ICMPv6 */
/* -6: how long the first request waits for DAD to make a source usable. */
#define PING_DAD_WAIT_NS (5 * SK_NS_PER_S)

static volatile sig_atomic_t ping_stop;

static void on_signal(int sig)
{
	(void)sig;
	ping_stop = 1;
}

enum ping_state {
	PING_UNSENT = 0,
	PING_OUTSTANDING,
	PING_OK,      /* one intact reply in time */
	PING_CORRUPT, /* a reply whose payload differs from the request's */
	PING_LATE,    /* the reply came after the timeout */
	PING_FAILED,  /* could not be sent (no room in the rings) */
};

struct ping_slot {
	sk_time_ns sent_at;
	uint8_t state; /* enum ping_state */
};

struct pinger {
	struct hoststack hs;
	uint32_t dst;
	bool v6;               /* -6: ICMPv6 to dst6 */
	struct ipv6_addr dst6;
	char dst_str[OPT_IPV6_STRLEN];
	sk_time_ns started;
	uint16_t id;
	uint32_t count, sent;
	size_t size;
	sk_time_ns interval, timeout;
	sk_time_ns next_send;
	struct ping_slot *slot; /* [count], request seq i+1 in slot[i] */
	uint8_t *payload;       /* scratch: size bytes */
	/* results */
	uint32_t received, corrupt, dups, late, failed, other;
	sk_time_ns rtt_min, rtt_max, rtt_sum;
	bool no_route;
};

/* The payload of request `seq`.  It depends on seq, so a reply carrying
 * another request's data is caught even when the sizes agree. */
static void fill_pattern(uint8_t *p, size_t len, uint16_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i ^ (i >> 8)) + (unsigned)seq * 97u);
}

/* First byte where data differs from request seq's payload, or len when equal. */
static size_t pattern_mismatch(const uint8_t *data, size_t len, uint16_t seq)
{
	for (size_t i = 0; i < len; i++)
		if (data[i] != (uint8_t)((i ^ (i >> 8)) + (unsigned)seq * 97u))
			return i;
	return len;
}

static bool all_answered(const struct pinger *p)
{
	if (p->sent < p->count)
		return false;
	for (uint32_t i = 0; i < p->count; i++)
		if (p->slot[i].state == PING_OUTSTANDING)
			return false;
	return true;
}

static void got_reply(struct pinger *p, sk_time_ns now, bool from_dst, uint16_t id, uint16_t seq,
		      const uint8_t *data, size_t len)
{
	/* Another pinger's reply (same host, other id) or a stray: not ours. */
	if (!from_dst || id != p->id || seq == 0 || seq > p->sent) {
		p->other++;
		return;
	}
	struct ping_slot *s = &p->slot[seq - 1];
	sk_time_ns rtt = now >= s->sent_at ? now - s->sent_at : 0;
	double ms = (double)rtt / 1e6;
	size_t common = SK_MIN(len, p->size);
	size_t bad = pattern_mismatch(data, common, seq);
	if (bad != common || len != p->size) {
		/* A changed reply is an error even after an intact one came. */
		if (s->state == PING_OK)
			p->received--;
		if (s->state != PING_CORRUPT)
			p->corrupt++;
		s->state = PING_CORRUPT;
		printf("%zu bytes from %s: icmp_seq=%u time=%.3f ms CORRUPT (sent %zu bytes, "
		       "first difference at byte %zu)\n",
		       len, p->dst_str, seq, ms, p->size, bad);
	} else if (s->state != PING_OUTSTANDING) {
		p->dups++;
		printf("%zu bytes from %s: icmp_seq=%u time=%.3f ms (DUP!)\n", len, p->dst_str, seq, ms);
	} else if (rtt > p->timeout) {
		s->state = PING_LATE;
		p->late++;
		printf("%zu bytes from %s: icmp_seq=%u time=%.3f ms (late: counted as lost)\n", len,
		       p->dst_str, seq, ms);
	} else {
		s->state = PING_OK;
		p->received++;
		if (p->received == 1 || rtt < p->rtt_min)
			p->rtt_min = rtt;
		if (rtt > p->rtt_max)
			p->rtt_max = rtt;
		p->rtt_sum += rtt;
		printf("%zu bytes from %s: icmp_seq=%u time=%.3f ms\n", len, p->dst_str, seq, ms);
	}
	fflush(stdout);
	if (all_answered(p))
		ping_stop = 1;
}

static void on_reply(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint16_t id,
		     uint16_t seq, const uint8_t *data, size_t len)
{
	(void)ifc;
	struct pinger *p = ctx;
	got_reply(p, now, !p->v6 && src == p->dst, id, seq, data, len);
}

static void on_reply6(void *ctx, struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
		      uint16_t id, uint16_t seq, const uint8_t *data, size_t len)
{
	(void)ifc;
	struct pinger *p = ctx;
	got_reply(p, now, p->v6 && ipv6_addr_eq(src, &p->dst6), id, seq, data, len);
}

static void send_one(struct pinger *p, sk_time_ns now)
{
	uint16_t seq = (uint16_t)(p->sent + 1);
	struct ping_slot *s = &p->slot[p->sent++];
	fill_pattern(p->payload, p->size, seq);
	s->sent_at = now;
	int rc = p->v6 ? icmp6_ping_send(p->hs.ifc, now, &p->dst6, p->id, seq, p->payload, p->size)
		       : icmp_ping_send(p->hs.ifc, now, p->dst, p->id, seq, p->payload, p->size);
	if (rc == 0) {
		s->state = PING_OUTSTANDING;
		return;
	}
	s->state = PING_FAILED;
	p->failed++;
	if (rc == -1) { /* checked before starting, so the route went away: give up */
		p->no_route = true;
		ping_stop = 1;
	}
	printf("icmp_seq=%u: not sent (%s)\n", seq,
	       rc == -1 ? "no route" : rc == -2 ? "too big" : "no room in the tx ring or ARP queue");
	fflush(stdout);
}

static sk_time_ns app_deadline(void *ctx)
{
	struct pinger *p = ctx;
	if (p->sent < p->count)
		return p->next_send;
	/* The last request's timeout; earlier ones expire before it. */
	return p->slot[p->count - 1].sent_at + p->timeout;
}

static void app_timers(void *ctx, sk_time_ns now)
{
	struct pinger *p = ctx;
	struct ipv6_addr src;
	if (p->v6 && p->sent == 0 && now >= p->next_send &&
	    !iface_ip6_source(p->hs.ifc, &p->dst6, &src)) {
		/* Our addresses are tentative until DAD passes (RFC 4862):
		 * wait for one, but not for ever, and not for a duplicate. */
		if (iface_ip6_tentative(p->hs.ifc) && now - p->started < PING_DAD_WAIT_NS) {
			p->next_send = now + 50 * SK_NS_PER_MS;
			return;
		}
		printf("ping: no usable IPv6 source address for %s (DAD found a duplicate, or "
		       "no address of that scope)\n", p->dst_str);
		fflush(stdout);
		p->no_route = true;
		ping_stop = 1;
		return;
	}
	if (p->sent < p->count && now >= p->next_send) {
		send_one(p, now);
		/* Keep the spacing after a late wake-up instead of bursting to
		 * catch up: a burst would measure the rings, not the path. */
		p->next_send += p->interval;
		if (p->next_send < now)
			p->next_send = now;
	}
	if (p->sent == p->count && (all_answered(p) || now >= app_deadline(p)))
		ping_stop = 1;
}

static void print_summary(const struct pinger *p)
{
	uint32_t tx = p->sent, lost = tx - p->received;
	printf("--- %s ping statistics ---\n", p->dst_str);
	printf("%u transmitted, %u received, ", tx, p->received);
	if (tx == 0 || (uint64_t)lost * 100 % tx == 0)
		printf("%u%% loss", tx ? (unsigned)((uint64_t)lost * 100 / tx) : 0u);
	else
		printf("%.1f%% loss", 100.0 * lost / tx);
	if (p->received)
		printf(", rtt min/avg/max = %.3f/%.3f/%.3f ms", (double)p->rtt_min / 1e6,
		       (double)p->rtt_sum / p->received / 1e6, (double)p->rtt_max / 1e6);
	if (p->corrupt)
		printf(", %u corrupt", p->corrupt);
	if (p->dups)
		printf(", %u duplicates", p->dups);
	if (p->late)
		printf(", %u late", p->late);
	if (p->failed)
		printf(", %u not sent", p->failed);
	printf("\n");
}

int cmd_ping(int argc, char **argv)
{
	struct pinger p;
	memset(&p, 0, sizeof(p));
	struct opts o;
	cli_parse(&o, &opt_cmd_ping, argc, argv);
	if (!o.nargs)
		cli_usage_error("ping", "DST is required");
	struct hoststack_config cfg = {.tcp = false};
	hoststack_options(&cfg, &o);
	bool stats = opt_given(&o, OPT_STATS);
	uint64_t count = opt_num(&o, OPT_PING_COUNT), interval_ms = opt_num(&o, OPT_PING_INTERVAL);
	uint64_t size = opt_num(&o, OPT_PING_SIZE), timeout_s = opt_num(&o, OPT_PING_TIMEOUT);
	uint32_t mask = cfg.ifc.prefix_len == 32 ? ~0u : ~(~0u >> cfg.ifc.prefix_len);
	const char *dst = o.args[0];
	p.v6 = opt_given(&o, OPT_PING_V6);
	if (p.v6) {
		if (o.nip6 == 0 && !o.ip6_auto)
			cli_usage_error("ping", "-6 needs --ip6 ADDR/LEN (IPv6 is off without it)");
		if (opt_parse_ipv6(dst, p.dst6.b) < 0 || !ipv6_is_unicast(&p.dst6))
			cli_usage_error("ping", "DST wants a unicast IPv6 address, not '%s'", dst);
		for (unsigned i = 0; i < o.nip6; i++)
			if (memcmp(o.ip6[i].addr, p.dst6.b, 16) == 0)
				cli_usage_error("ping", "DST is this host's own address (skiff has no loopback)");
		opt_format_ipv6(p.dst6.b, p.dst_str);
	}
	/* One host: not ourselves (no loopback), not a group or a broadcast
	 * (replies to those are not ours to take). */
	if (p.v6) {
		/* checked above */
	} else if (cli_parse_ipv4(dst, &p.dst) < 0 || p.dst == 0 || (p.dst >> 28) >= 0xe ||
	    (p.dst >> 24) == 127)
		cli_usage_error("ping", "DST wants a unicast IPv4 address, not '%s'", dst);
	if (!p.v6 && p.dst == cfg.ifc.ip)
		cli_usage_error("ping", "DST is this host's own address (skiff has no loopback)");
	if (!p.v6 && mask != ~0u && mask != ~1u && (p.dst & ~mask) == ~mask)
		cli_usage_error("ping", "DST is the subnet broadcast address");
	if (!p.v6 && (p.dst & mask) != (cfg.ifc.ip & mask) && !cfg.ifc.gw)
		cli_usage_error("ping", "DST is off ip's subnet and there is no gw");
	if (!p.v6)
		cli_format_ipv4(p.dst, p.dst_str);

	p.count = (uint32_t)count;
	p.size = size;
	p.interval = (sk_time_ns)interval_ms * SK_NS_PER_MS;
	p.timeout = (sk_time_ns)timeout_s * SK_NS_PER_S;
	p.slot = calloc(p.count, sizeof(*p.slot));
	p.payload = malloc(p.size ? p.size : 1);
	if (!p.slot || !p.payload) {
		fprintf(stderr, "skiff ping: out of memory\n");
		return 1;
	}
	/* A random id, so two pingers on one host (or a restarted one) do
	 * not take each other's replies. */
	if (plat_random(&p.id, sizeof(p.id)) < 0) {
		fprintf(stderr, "skiff ping: no randomness\n");
		return 1;
	}

	char err[256];
	if (hoststack_open(&p.hs, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff ping: %s\n", err);
		return 1;
	}
	unsigned overhead = p.v6 ? PING_OVERHEAD6 : PING_OVERHEAD;
	if (p.size + overhead > p.hs.ifc->mtu) {
		fprintf(stderr, "skiff ping: size %zu does not fit the MTU %u (at most %u)\n", p.size,
			p.hs.ifc->mtu, p.hs.ifc->mtu - overhead);
		hoststack_close(&p.hs);
		return 2;
	}
	iface_set_echo_reply_handler(p.hs.ifc, on_reply, &p);
	iface_set_echo6_reply_handler(p.hs.ifc, on_reply6, &p);
	p.hs.loop.app_deadline = app_deadline;
	p.hs.loop.app_timers = app_timers;
	p.hs.loop.ctx = &p;
	hoststack_announce(&p.hs);

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	char ipbuf[16], macbuf[18];
	cli_format_ipv4(cfg.ifc.ip, ipbuf);
	cli_format_mac(p.hs.dev->mac, macbuf);
	printf("PING %s from %s/%u dev=%s mac=%s id=0x%04x: %zu data bytes, %u requests\n",
	       p.dst_str, ipbuf, cfg.ifc.prefix_len, p.hs.dev->name, macbuf, p.id, p.size, p.count);
	fflush(stdout);

	p.next_send = p.started = plat_now(); /* the first request at once (-6: after DAD) */
	int rc = hoststack_run(&p.hs, &ping_stop);
	print_summary(&p);
	if (stats)
		hoststack_print_stats(&p.hs, stdout);
	fflush(stdout);
	bool ok = rc == 0 && !p.no_route && p.sent == p.count && p.received == p.count &&
		  p.corrupt == 0;
	hoststack_close(&p.hs);
	free(p.slot);
	free(p.payload);
	return ok ? 0 : 1;
}
