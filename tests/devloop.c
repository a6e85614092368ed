/* devloop.c — a minimal responder for testing the hosted devices against
 * real Linux (tests/dev_smoke.sh).  Not the stack: raw byte edits only.
 *
 *   devloop DEV IP SECONDS [--pcap FILE] [--burst N]
 *
 * Answers ARP requests and ICMP echo requests for IP until SECONDS pass or
 * SIGTERM/SIGINT, then prints the device counters and "devloop.*" lines.
 * --burst N at the end sends N broadcast frames (an ARP announcement each) in
 * ring-sized batches, to exercise batched tx.
 *
 * Built and run by `make dev-smoke` (mk/dev.mk), a phase of `make test`.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev/dev_open.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* One's-complement add, RFC 1624 style. */
static uint16_t csum_adjust(uint16_t check, uint16_t old_word, uint16_t new_word)
{
	uint32_t s = (uint16_t)~check + (uint32_t)(uint16_t)~old_word + new_word;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

struct counts {
	uint64_t arp_replies, echo_replies, ignored, burst_sent;
};

/* Turn a request in buf into its answer in place; returns the length to
 * send, or 0 to send nothing. */
static uint16_t answer(uint8_t *f, uint16_t len, const uint8_t mac[6], uint32_t ip,
		       struct counts *c)
{
	uint16_t type;

	if (len < 14)
		return 0;
	type = sk_get_be16(f + 12);
	if (type == 0x0806 && len >= 42 && sk_get_be16(f + 20) == 1 &&
	    sk_get_be32(f + 38) == ip) {
		uint8_t sha[6], spa[4];
		memcpy(sha, f + 22, 6);
		memcpy(spa, f + 28, 4);
		memcpy(f, sha, 6);
		memcpy(f + 6, mac, 6);
		sk_put_be16(f + 20, 2);
		memcpy(f + 22, mac, 6);
		sk_put_be32(f + 28, ip);
		memcpy(f + 32, sha, 6);
		memcpy(f + 38, spa, 4);
		c->arp_replies++;
		return 42;
	}
	if (type == 0x0800 && len >= 14 + 20 + 8 && (f[14] >> 4) == 4 && f[14 + 9] == 1 &&
	    sk_get_be32(f + 14 + 16) == ip) {
		unsigned ihl = (f[14] & 15u) * 4;
		uint8_t *icmp = f + 14 + ihl;
		if (ihl < 20 || 14u + ihl + 8 > len || icmp[0] != 8)
			return 0;
		uint8_t tmp[6];
		memcpy(tmp, f + 6, 6);
		memcpy(f, tmp, 6);
		memcpy(f + 6, mac, 6);
		uint8_t a[4];
		memcpy(a, f + 14 + 12, 4);
		memcpy(f + 14 + 12, f + 14 + 16, 4);
		memcpy(f + 14 + 16, a, 4);
		uint16_t old = sk_get_be16(icmp);
		icmp[0] = 0;
		sk_put_be16(icmp + 2, csum_adjust(sk_get_be16(icmp + 2), old, sk_get_be16(icmp)));
		c->echo_replies++;
		return len;
	}
	c->ignored++;
	return 0;
}

static void put_announce(uint8_t *f, const uint8_t mac[6], uint32_t ip)
{
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	sk_put_be16(f + 12, 0x0806);
	sk_put_be16(f + 14, 1);
	sk_put_be16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	sk_put_be16(f + 20, 1);
	memcpy(f + 22, mac, 6);
	sk_put_be32(f + 28, ip);
	memset(f + 32, 0, 6);
	sk_put_be32(f + 38, ip);
	memset(f + 42, 0, 18); /* pad to 60 */
}

int main(int argc, char **argv)
{
	struct dev_config cfg = {0};
	struct counts c = {0};
	struct in_addr a;
	struct dev *d;
	char err[256];
	uint64_t burst = 0, deadline;
	int rc = 0;

	if (argc < 4 || inet_pton(AF_INET, argv[2], &a) != 1) {
		fprintf(stderr, "usage: devloop DEV IP SECONDS [--pcap FILE] [--burst N]\n");
		return 2;
	}
	for (int i = 4; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--pcap") == 0)
			cfg.pcap_path = argv[i + 1];
		else if (strcmp(argv[i], "--burst") == 0)
			burst = strtoull(argv[i + 1], NULL, 10);
	}
	uint32_t ip = ntohl(a.s_addr);
	if (dev_open(argv[1], &cfg, &d, err, sizeof(err)) != 0) {
		fprintf(stderr, "devloop: %s\n", err);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	fprintf(stderr, "devloop: %s up, mac %02x:%02x:%02x:%02x:%02x:%02x\n", argv[1], d->mac[0],
		d->mac[1], d->mac[2], d->mac[3], d->mac[4], d->mac[5]);

	deadline = now_ns() + strtoull(argv[3], NULL, 10) * SK_NS_PER_S;
	while (!stop && now_ns() < deadline) {
		struct pollfd pfd = {.fd = dev_poll_fd(d), .events = POLLIN};
		int n = dev_rx_sync(d);
		if (n < 0) {
			fprintf(stderr, "devloop: rx_sync: %s\n", strerror(-n));
			rc = 1;
			break;
		}
		struct ring *rx = d->rx, *tx = d->tx;
		uint32_t queued = 0;
		while (ring_avail(rx) > 0) {
			struct ring_slot *s = ring_slot(rx, rx->head);
			uint8_t *f = ring_buf(rx, s->buf_idx);
			/* answer in place, then copy to a tx slot */
			uint16_t len = answer(f, s->len, d->mac, ip, &c);
			if (len && ring_avail(tx) > 0) {
				struct ring_slot *t = ring_slot(tx, tx->head);
				memcpy(ring_buf(tx, t->buf_idx), f, len);
				t->len = len;
				ring_store(&tx->head, tx->head + 1);
				queued++;
			}
			ring_store(&rx->head, rx->head + 1);
		}
		if (queued && dev_tx_sync(d) < 0) {
			rc = 1;
			break;
		}
		if (n == 0)
			poll(&pfd, 1, 100);
	}
	/* The burst goes last, after the probes, so that the peer's rx
	 * counter read around the run sees all of it. */
	uint64_t bend = now_ns() + 2 * SK_NS_PER_S; /* never hang on a stuck tx */
	while (burst > 0 && now_ns() < bend) {
		uint32_t n = 0;
		while (n < burst && ring_avail(d->tx) > 0) {
			struct ring_slot *s = ring_slot(d->tx, d->tx->head);
			put_announce(ring_buf(d->tx, s->buf_idx), d->mac, ip);
			s->len = 60;
			ring_store(&d->tx->head, d->tx->head + 1);
			n++;
		}
		burst -= n;
		c.burst_sent += n;
		if (dev_tx_sync(d) < 0) {
			rc = 1;
			break;
		}
	}

	/* let the last tx complete (xdp copy mode may still hold some) */
	dev_tx_sync(d);
	if (c.burst_sent) {
		/* a TAP vanishes on close: give the script a moment to read the
		 * peer's counters */
		fprintf(stderr, "devloop: burst done\n");
		struct timespec ts = {.tv_sec = 1};
		nanosleep(&ts, NULL);
	}
	dev_print_stats(d, stdout);
	printf("devloop.arp_replies %llu\ndevloop.echo_replies %llu\ndevloop.ignored %llu\n"
	       "devloop.burst_sent %llu\n",
	       (unsigned long long)c.arp_replies, (unsigned long long)c.echo_replies,
	       (unsigned long long)c.ignored, (unsigned long long)c.burst_sent);
	dev_close(d);
	return rc;
}
