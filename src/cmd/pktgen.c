/* pktgen.c — `skiff pktgen --dev DEV (tx|rx)`: raw frames at full rate, in
 * the spirit of netmap's pkt-gen, on any device dev_open knows (switch
 * ports, tap, packet, xdp).
 *
 *   tx: fill every free tx slot (up to --batch) with a valid Ethernet +
 *       IPv4 + UDP frame of --size bytes, hand them over with one head
 *       store and one tx_sync per batch, repeat.  The frame is built once;
 *       a slot's buffer is rewritten only when the device gave the slot a
 *       different buffer, so a frame costs a length store, not a copy.
 *   rx: count frames and bytes (and classify them by destination MAC:
 *       broadcast, multicast, to us, to others), releasing every batch at
 *       once; spin for a while after work (runner/spin.h, --spin-us), then park on the device's fd (plat_park: a stop
 *       signal is never slept through).
 *       It first sends one broadcast frame so a learning switch knows its
 *       MAC (unicast to it is then forwarded, not flooded).
 * Both print a rate line per second and a summary at the end, at --count,
 * --duration or SIGINT/SIGTERM.  Sizes are frame bytes without the FCS
 * (60 = a 64-byte frame on the wire); Gbit/s counts those bytes.
 * Addresses must stay inside 198.18.0.0/15 (RFC 2544 benchmarking), so a
 * mistyped device can never flood a real network with someone's address.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../dev/dev_open.h"
#include "../runner/spin.h"
#include "../plat/plat.h"
#include "../wire/eth.h"
#include "../wire/ipv4.h"
#include "../wire/udp.h"
#include "../host/cli.h"

static volatile sig_atomic_t pg_stop;

static void on_signal(int sig)
{
	(void)sig;
	pg_stop = 1;
}

struct pktgen {
	struct dev *dev;
	bool tx;
	unsigned size, batch;
	uint64_t count;       /* 0 = no limit */
	sk_time_ns duration;  /* 0 = no limit */
	sk_time_ns spin_ns;   /* the cap, when learning */
	bool spin_learn;      /* --spin-us auto */
	uint8_t dst_mac[SK_MAC_LEN];
	uint32_t src_ip, dst_ip;
	uint16_t sport, dport;
	uint8_t frame[ETH_MAX_FRAME];
	/* counters */
	uint64_t frames, bytes;
	uint64_t bcast, mcast, ucast_me, ucast_other; /* rx */
	uint64_t rx_ignored;  /* tx mode: frames that came in and were dropped */
	sk_time_ns t_first, t_last;
};

static int build_frame(struct pktgen *g)
{
	struct ipv4_hdr ih = {.id = 0, .frag = IPV4_FLAG_DF, .ttl = IPV4_DEFAULT_TTL,
			      .proto = IPV4_PROTO_UDP, .src = g->src_ip, .dst = g->dst_ip};
	uint8_t *p = g->frame;
	uint16_t payload = (uint16_t)(g->size - ETH_HLEN - IPV4_HLEN - UDP_HLEN);
	uint8_t *data = p + ETH_HLEN + IPV4_HLEN + UDP_HLEN;

	for (unsigned i = 0; i < payload; i++)
		data[i] = (uint8_t)('a' + i % 26);
	if (eth_emit(p, sizeof(g->frame), g->dst_mac, g->dev->mac, ETH_TYPE_IPV4) == 0 ||
	    ipv4_emit(p + ETH_HLEN, sizeof(g->frame) - ETH_HLEN, &ih, UDP_HLEN + payload) == 0 ||
	    udp_emit(p + ETH_HLEN + IPV4_HLEN, sizeof(g->frame) - ETH_HLEN - IPV4_HLEN, g->sport,
		     g->dport, g->src_ip, g->dst_ip, payload) == 0)
		return -1;
	return 0;
}

static double secs(sk_time_ns a, sk_time_ns b)
{
	return b > a ? (double)(b - a) / 1e9 : 0.0;
}

static void rate_line(const char *mode, uint64_t frames, uint64_t bytes, double s)
{
	if (s <= 0)
		s = 1e-9;
	printf("pktgen: %s %.3f Mpps %.3f Gbit/s (%llu frames)\n", mode, (double)frames / s / 1e6,
	       (double)bytes * 8 / s / 1e9, (unsigned long long)frames);
	fflush(stdout);
}

/* Take every waiting rx frame (tx mode: just release them). */
static void drain_rx(struct pktgen *g, sk_time_ns now)
{
	struct ring *r = g->dev->rx;
	uint32_t head = r->head, tail = ring_load(&r->tail);

	if (tail - head > r->num_slots)
		return;
	for (; head != tail; head++) {
		struct ring_slot *s = ring_slot(r, head);
		const uint8_t *f;

		if (g->tx) {
			g->rx_ignored++;
			continue;
		}
		if (s->buf_idx >= r->nbufs || s->len < ETH_HLEN || s->len > r->buf_size)
			continue;
		f = ring_buf(r, s->buf_idx);
		if (eth_is_broadcast(f))
			g->bcast++;
		else if (eth_is_multicast(f))
			g->mcast++;
		else if (memcmp(f, g->dev->mac, SK_MAC_LEN) == 0)
			g->ucast_me++;
		else
			g->ucast_other++;
		g->frames++;
		g->bytes += s->len;
		if (g->t_first == 0)
			g->t_first = now;
		g->t_last = now;
	}
	ring_store(&r->head, head);
}

/* Put n copies of the frame in the tx ring from head; slot_buf remembers
 * which buffer each slot held when we last wrote the frame into it. */
static unsigned fill_tx(struct pktgen *g, uint32_t *slot_buf, unsigned n)
{
	struct ring *r = g->dev->tx;
	uint32_t head = r->head;
	unsigned done = 0;

	for (; done < n; done++, head++) {
		struct ring_slot *s = ring_slot(r, head);
		uint32_t pos = head & (r->num_slots - 1);

		if (s->buf_idx >= r->nbufs || g->size > r->buf_size)
			break;
		if (slot_buf[pos] != s->buf_idx) {
			memcpy(ring_buf(r, s->buf_idx), g->frame, g->size);
			slot_buf[pos] = s->buf_idx;
		}
		s->len = (uint16_t)g->size;
		s->flags = 0;
	}
	ring_store(&r->head, head);
	return done;
}

static int run_tx(struct pktgen *g, sk_time_ns start, sk_time_ns end)
{
	struct dev *d = g->dev;
	uint32_t *slot_buf = malloc(d->tx->num_slots * sizeof(uint32_t));
	sk_time_ns now = start, next_report = start + SK_NS_PER_S;
	uint64_t rep_frames = 0, rep_bytes = 0;
	int rc = 0;

	if (slot_buf == NULL)
		return -ENOMEM;
	memset(slot_buf, 0xff, d->tx->num_slots * sizeof(uint32_t));
	g->t_first = start;
	while (!pg_stop && (g->count == 0 || g->frames < g->count) && now < end) {
		uint64_t want = g->batch;
		unsigned n;

		if (ring_avail(d->rx)) {
			if ((rc = dev_rx_sync(d)) < 0)
				break;
			drain_rx(g, now);
		}
		if (g->count != 0 && g->count - g->frames < want)
			want = g->count - g->frames;
		if (want > ring_avail(d->tx))
			want = ring_avail(d->tx);
		n = want ? fill_tx(g, slot_buf, (unsigned)want) : 0;
		if ((rc = dev_tx_sync(d)) < 0)
			break;
		rc = 0;
		g->frames += n;
		g->bytes += (uint64_t)n * g->size;
		/* The ring is full: the other side is behind.  Yield rather
		 * than spin, so a receiver sharing this core gets to run
		 * (returns at once when nothing else is runnable). */
		if (n == 0)
			sched_yield();
		now = plat_now();
		if (now >= next_report) {
			rate_line("tx", g->frames - rep_frames, g->bytes - rep_bytes,
				  secs(next_report - SK_NS_PER_S, now));
			rep_frames = g->frames;
			rep_bytes = g->bytes;
			next_report = now + SK_NS_PER_S;
		}
	}
	g->t_last = now;
	free(slot_buf);
	return rc;
}

static int run_rx(struct pktgen *g, sk_time_ns start, sk_time_ns end)
{
	struct dev *d = g->dev;
	sk_time_ns now = start, next_report = start + SK_NS_PER_S;
	struct spin sp;
	spin_init(&sp, g->spin_ns, g->spin_learn);
	uint64_t rep_frames = 0, rep_bytes = 0;

	/* Be seen: one broadcast frame, so a learning switch knows our MAC. */
	memset(g->dst_mac, 0xff, SK_MAC_LEN);
	if (build_frame(g) == 0 && ring_avail(d->tx)) {
		struct ring *r = d->tx;
		struct ring_slot *s = ring_slot(r, r->head);
		if (s->buf_idx < r->nbufs && g->size <= r->buf_size) {
			memcpy(ring_buf(r, s->buf_idx), g->frame, g->size);
			s->len = (uint16_t)g->size;
			ring_store(&r->head, r->head + 1);
		}
	}
	if (dev_tx_sync(d) < 0)
		return -EIO;
	while (!pg_stop && (g->count == 0 || g->frames < g->count) && now < end) {
		int n = dev_rx_sync(d);
		uint64_t before = g->frames;

		if (n < 0)
			return n;
		now = plat_now();
		if (ring_avail(d->rx))
			drain_rx(g, now);
		if (now >= next_report) {
			rate_line("rx", g->frames - rep_frames, g->bytes - rep_bytes,
				  secs(next_report - SK_NS_PER_S, now));
			rep_frames = g->frames;
			rep_bytes = g->bytes;
			next_report = now + SK_NS_PER_S;
		}
		enum spin_step step = spin_after(&sp, g->frames != before, now);
		if (step == SPIN_WORK)
			continue;
		if (step == SPIN_SPIN) {
			sched_yield(); /* as in run_tx: let a sender on this core run */
			continue;
		}
		/* Park until a frame, the next report or the end. */
		struct plat_wake w = {.fd = dev_poll_fd(d)};
		int woke = plat_park(next_report < end ? next_report : end, &w, &pg_stop);
		if (woke < 0)
			return woke;
	}
	return 0;
}

int cmd_pktgen(int argc, char **argv)
{
	static struct pktgen g; /* the frame buffer: keep it off the stack */
	struct opts o;
	struct dev_config dcfg = {0};
	char err[256];
	int rc;

	/* Bounds, defaults, --help and the messages: the options table
	 * (conf/opts.c opt_cmd_pktgen), which also keeps --src-ip and
	 * --dst-ip inside 198.18.0.0/15. */
	cli_parse(&o, &opt_cmd_pktgen, argc, argv);
	if (o.nargs == 0)
		cli_usage_error("pktgen", "tx or rx is required");
	if (!strcmp(o.args[0], "tx"))
		g.tx = true;
	else if (strcmp(o.args[0], "rx") != 0)
		cli_usage_error("pktgen", "mode must be tx or rx, not '%s'", o.args[0]);
	if (!opt_given(&o, OPT_DEV))
		cli_usage_error("pktgen", "--dev is required");
	const char *dev_spec = opt_str(&o, OPT_DEV);
	g.size = (unsigned)opt_num(&o, OPT_PG_SIZE);
	g.count = opt_given(&o, OPT_PG_COUNT) ? opt_num(&o, OPT_PG_COUNT) : 0;
	g.duration = opt_given(&o, OPT_LOAD_DURATION)
			     ? (sk_time_ns)opt_num(&o, OPT_LOAD_DURATION) * SK_NS_PER_S
			     : 0;
	memcpy(g.dst_mac, o.v[OPT_PG_DST_MAC].mac, SK_MAC_LEN);
	g.src_ip = o.v[OPT_PG_SRC_IP].ip;
	g.dst_ip = o.v[OPT_PG_DST_IP].ip;
	g.sport = (uint16_t)opt_num(&o, OPT_PG_SPORT);
	g.dport = (uint16_t)opt_num(&o, OPT_PG_DPORT);
	g.batch = (unsigned)opt_num(&o, OPT_PG_BATCH);
	if (opt_given(&o, OPT_SLOTS))
		dcfg.num_slots = (uint32_t)opt_num(&o, OPT_SLOTS);
	opt_spin(&o, &g.spin_ns, &g.spin_learn);
	bool stats = opt_given(&o, OPT_STATS);

	if (dev_open(dev_spec, &dcfg, &g.dev, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff pktgen: %s\n", err);
		return 1;
	}
	if (opt_given(&o, OPT_MAC))
		memcpy(g.dev->mac, o.v[OPT_MAC].mac, SK_MAC_LEN);
	if (g.tx && build_frame(&g) < 0) {
		fprintf(stderr, "skiff pktgen: cannot build a %u-byte frame\n", g.size);
		dev_close(g.dev);
		return 1;
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	char macbuf[18];
	cli_format_mac(g.dev->mac, macbuf);
	printf("skiff pktgen: ready dev=%s mode=%s size=%u mac=%s\n", g.dev->name, g.tx ? "tx" : "rx",
	       g.size, macbuf);
	fflush(stdout);

	sk_time_ns start = plat_now();
	sk_time_ns end = g.duration ? start + g.duration : SK_TIME_NEVER;
	rc = g.tx ? run_tx(&g, start, end) : run_rx(&g, start, end);
	if (rc < 0)
		fprintf(stderr, "skiff pktgen: device %s: %s\n", g.dev->name, strerror(-rc));

	double s = secs(g.t_first, g.t_last);
	if (s <= 0)
		s = 1e-9;
	if (!g.tx)
		printf("pktgen: rx classes bcast=%llu mcast=%llu ucast_me=%llu ucast_other=%llu\n",
		       (unsigned long long)g.bcast, (unsigned long long)g.mcast,
		       (unsigned long long)g.ucast_me, (unsigned long long)g.ucast_other);
	if (stats)
		dev_print_stats(g.dev, stdout);
	printf("pktgen: %s summary frames=%llu bytes=%llu seconds=%.3f mpps=%.3f gbps=%.3f\n",
	       g.tx ? "tx" : "rx", (unsigned long long)g.frames, (unsigned long long)g.bytes, s,
	       (double)g.frames / s / 1e6, (double)g.bytes * 8 / s / 1e9);
	fflush(stdout);
	dev_close(g.dev);
	return rc < 0 ? 1 : 0;
}
