/* iface_test.c — the interface against a fake device: frames go in with
 * iface_input (or through the rx ring), what the iface sends is read back
 * from the tx ring.  Every call gets an explicit `now`.
 *
 * The fake device and tx_next() are in iface_testlib.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/csum.h"

#include "net/iface_testlib.h"

/* ---- frame builders (via the wire emitters; the checks below re-parse) ---- */

static size_t mk_arp(uint8_t *fr, uint16_t op, const uint8_t *eth_dst, const uint8_t *sha,
		     uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	eth_emit(fr, 14, eth_dst, sha, ETH_TYPE_ARP);
	struct arp_pkt a = {.op = op, .spa = spa, .tpa = tpa};
	memcpy(a.sha, sha, 6);
	memcpy(a.tha, tha, 6);
	arp_emit(fr + 14, ARP_LEN, &a);
	memset(fr + 42, 0, 18);
	return 60;
}

static size_t mk_ip(uint8_t *fr, const uint8_t *dst_mac, const uint8_t *src_mac, uint32_t src,
		    uint32_t dst, uint8_t proto, uint16_t frag, const uint8_t *l4, size_t l4len)
{
	eth_emit(fr, 14, dst_mac, src_mac, ETH_TYPE_IPV4);
	struct ipv4_hdr h = {.id = 77, .frag = frag, .ttl = 64, .proto = proto, .src = src, .dst = dst};
	assert_int_equal(ipv4_emit(fr + 14, 20, &h, (uint16_t)l4len), 20);
	memcpy(fr + 34, l4, l4len);
	size_t len = 34 + l4len;
	if (len < 60) {
		memset(fr + len, 0, 60 - len);
		len = 60;
	}
	return len;
}

static size_t mk_udp(uint8_t *fr, const uint8_t *dst_mac, uint32_t src, uint32_t dst,
		     uint16_t sport, uint16_t dport, const uint8_t *data, size_t n)
{
	uint8_t seg[2048];
	memcpy(seg + 8, data, n);
	assert_int_equal(udp_emit(seg, sizeof(seg), sport, dport, src, dst, (uint16_t)n), 8 + n);
	return mk_ip(fr, dst_mac, PEER_MAC, src, dst, IPV4_PROTO_UDP, 0, seg, 8 + n);
}

static size_t mk_ping(uint8_t *fr, uint32_t src, uint16_t id, uint16_t seq, const uint8_t *payload,
		      size_t n)
{
	uint8_t msg[2048];
	assert_int_equal(icmp_emit_echo_request(msg, sizeof(msg), id, seq, payload, n), 8 + n);
	return mk_ip(fr, OUR_MAC, PEER_MAC, src, OUR_IP, IPV4_PROTO_ICMP, 0, msg, 8 + n);
}

/* Peer asks for us: answered, and the peer learned. Drains the reply. */
static void learn_peer(struct fake *f, sk_time_ns now, const uint8_t *mac, uint32_t ip)
{
	uint8_t fr[64];
	iface_input(&f->ifc, now, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, mac, ip, ZERO_MAC, OUR_IP));
	tx_skip_all(f);
}

/* Parse an IPv4 frame we sent; checks the header is sane. */
static const uint8_t *parse_ip_frame(const uint8_t *fr, size_t len, const uint8_t *want_dst_mac,
				     struct ipv4_hdr *h)
{
	struct eth_hdr eh;
	assert_int_equal(eth_parse(fr, len, &eh), WIRE_OK);
	assert_memory_equal(eh.dst, want_dst_mac, 6);
	assert_memory_equal(eh.src, OUR_MAC, 6);
	assert_int_equal(eh.type, ETH_TYPE_IPV4);
	assert_true(len >= ETH_MIN_FRAME);
	assert_int_equal(ipv4_parse(fr + 14, len - 14, h), WIRE_OK);
	assert_int_equal(h->src, OUR_IP);
	assert_int_equal(h->frag, IPV4_FLAG_DF);
	assert_int_equal(h->ttl, 64);
	return fr + 14 + h->hlen;
}

static bool is_arp_request_for(const uint8_t *fr, size_t len, uint32_t ip)
{
	struct eth_hdr eh;
	struct arp_pkt a;
	return eth_parse(fr, len, &eh) == WIRE_OK && eh.type == ETH_TYPE_ARP &&
	       eth_is_broadcast(eh.dst) && arp_parse(fr + 14, len - 14, &a) == WIRE_OK &&
	       a.op == ARP_OP_REQUEST && a.tpa == ip && a.spa == OUR_IP &&
	       memcmp(a.sha, OUR_MAC, 6) == 0;
}

static unsigned count_arp_requests(struct fake *f, uint32_t ip)
{
	unsigned n = 0;
	size_t len;
	const uint8_t *fr;
	while ((fr = tx_next(f, &len)))
		n += is_arp_request_for(fr, len, ip);
	return n;
}

static void echo_cb(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint16_t sport,
		    uint16_t dport, const uint8_t *data, size_t len)
{
	struct fake *f = ctx;
	f->udp_calls++;
	memcpy(f->udp_data, data, len);
	f->udp_len = len;
	assert_int_equal(udp_sendto(ifc, now, dport, src, sport, data, len), 0);
}

static void count_cb(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint16_t sport,
		     uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ifc, (void)now, (void)src, (void)sport, (void)dport, (void)data, (void)len;
	((struct fake *)ctx)->udp_calls++;
}

/* ---- ARP ---- */

static void test_init_state(void **state)
{
	struct fake *f = *state;
	assert_int_equal(iface_next_deadline(&f->ifc), SK_TIME_NEVER);
	assert_int_equal(f->ifc.mtu, 1500);
	assert_int_equal(f->ifc.bcast, SUBNET_BCAST);
	assert_int_equal(tx_count(f), 0);
}

static void test_arp_request_answered(void **state)
{
	struct fake *f = *state;
	uint8_t fr[64];
	iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, OUR_IP));
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	assert_int_equal(len, 60);
	struct eth_hdr eh;
	struct arp_pkt a;
	assert_int_equal(eth_parse(out, len, &eh), WIRE_OK);
	assert_memory_equal(eh.dst, PEER_MAC, 6);
	assert_memory_equal(eh.src, OUR_MAC, 6);
	assert_int_equal(eh.type, ETH_TYPE_ARP);
	assert_int_equal(arp_parse(out + 14, len - 14, &a), WIRE_OK);
	assert_int_equal(a.op, ARP_OP_REPLY);
	assert_memory_equal(a.sha, OUR_MAC, 6);
	assert_int_equal(a.spa, OUR_IP);
	assert_memory_equal(a.tha, PEER_MAC, 6);
	assert_int_equal(a.tpa, PEER_IP);
	for (size_t i = 42; i < 60; i++)
		assert_int_equal(out[i], 0); /* padding zeroed */
	assert_null(tx_next(f, &len));
	assert_int_equal(f->ifc.counters.arp_replies_tx, 1);
	assert_int_equal(f->ifc.counters.arp_learned, 1);
	/* The requester was learned (RFC 826): no ARP needed to answer it. */
	assert_int_equal(udp_sendto(&f->ifc, T0, 7, PEER_IP, 7, (const uint8_t *)"x", 1), 0);
	struct ipv4_hdr h;
	out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER_MAC, &h);
}

static void test_arp_not_for_us_and_bad(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	uint8_t fr[64];
	/* between two other hosts: not answered, not learned */
	iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, SK_IP4(198, 18, 0, 9)));
	assert_int_equal(c->arp_not_for_us, 1);
	assert_int_equal(iface_arp_find(&f->ifc, PEER_IP), IFACE_ARP_NONE);
	/* truncated */
	mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, OUR_IP);
	iface_input(&f->ifc, T0, fr, 14 + 20);
	assert_int_equal(c->arp_bad, 1);
	/* someone else claims our address */
	iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, OTHER_MAC, OUR_IP, ZERO_MAC, OUR_IP));
	assert_int_equal(c->arp_conflict, 1);
	/* martian sender IP */
	iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, SK_IP4(127, 0, 0, 1), ZERO_MAC, OUR_IP));
	assert_int_equal(c->arp_bad_sender, 1);
	/* unknown opcode */
	mk_arp(fr, 3, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, OUR_IP);
	iface_input(&f->ifc, T0, fr, 60);
	assert_int_equal(c->arp_unsupported, 1);
	assert_int_equal(tx_count(f), 0);
	/* RFC 5227 probe (sender 0.0.0.0) for us: answered, nothing learned */
	iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, 0, ZERO_MAC, OUR_IP));
	assert_int_equal(tx_count(f), 1);
	assert_int_equal(f->ifc.arp_used, 0);
}

static void test_announce(void **state)
{
	struct fake *f = *state;
	iface_announce(&f->ifc, T0);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	assert_int_equal(len, 60);
	assert_true(is_arp_request_for(out, len, OUR_IP));
	assert_int_equal(f->ifc.counters.arp_requests_tx, 1);
}

static uint64_t rng_state = 0x1234567887654321ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_arp_flood_bounded(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	sk_time_ns now = T0;
	uint8_t fr[64];
	/* A resolved peer we talk to... */
	assert_int_equal(udp_sendto(&f->ifc, now, 7, PEER_IP, 7, (const uint8_t *)"a", 1), 0);
	assert_int_equal(count_arp_requests(f, PEER_IP), 1);
	iface_input(&f->ifc, now, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER_MAC, PEER_IP, OUR_MAC, OUR_IP));
	assert_int_equal(c->arp_queue_sent, 1);
	tx_skip_all(f);
	/* ...and one still resolving. */
	assert_int_equal(udp_sendto(&f->ifc, now, 7, PEER2_IP, 7, (const uint8_t *)"b", 1), 0);
	assert_int_equal(count_arp_requests(f, PEER2_IP), 1);

	/* 100,000 gratuitous ARPs from random addresses and MACs. */
	for (unsigned i = 0; i < 100000; i++) {
		uint64_t r = rnd();
		uint8_t mac[6] = {0x02, (uint8_t)(r >> 8), (uint8_t)(r >> 16), (uint8_t)(r >> 24),
				  (uint8_t)(r >> 32), (uint8_t)(r >> 40)};
		uint32_t ip = (uint32_t)(r >> 32) ^ (uint32_t)r;
		iface_input(&f->ifc, now, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, mac, ip, ZERO_MAC, ip));
		if (i % 1000 == 0)
			now += MS; /* 0.1 s of flood in all */
		assert_true(f->ifc.arp_used <= IFACE_ARP_SLOTS);
	}
	assert_int_equal(tx_count(f), 0); /* nothing answered */
	assert_int_equal(f->ifc.arp_used, IFACE_ARP_SLOTS);
	assert_true(c->arp_evictions > 90000);
	/* every learned entry is either still here or counted as evicted
	 * (+2: the two peers, created by our own output) */
	assert_int_equal(c->arp_learned + 2 - c->arp_evictions, f->ifc.arp_used);

	/* The peer we talk to kept its entry: sent at once, no ARP. */
	uint64_t requests = c->arp_requests_tx;
	assert_int_equal(udp_sendto(&f->ifc, now, 7, PEER_IP, 7, (const uint8_t *)"c", 1), 0);
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(c->arp_requests_tx, requests);
	/* The pending one still resolves: its entry survived the flood. */
	assert_int_not_equal(iface_arp_find(&f->ifc, PEER2_IP), IFACE_ARP_NONE);
	iface_input(&f->ifc, now, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER2_MAC, PEER2_IP, OUR_MAC, OUR_IP));
	out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER2_MAC, &h);
	assert_int_equal(h.dst, PEER2_IP);
}

static void test_arp_table_full_of_active_refuses_unsolicited(void **state)
{
	struct fake *f = *state;
	f->drain = true;
	uint8_t fr[64];
	/* Fill the whole table with peers we send to (active). */
	for (unsigned i = 0; i < IFACE_ARP_SLOTS; i++) {
		uint32_t ip = SK_IP4(10, 0, 0, 0) + i; /* off-link: learned via gratuitous ARP */
		uint8_t mac[6] = {0x02, 0, 0, 1, (uint8_t)(i >> 8), (uint8_t)i};
		iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, mac, ip, ZERO_MAC, ip));
		uint8_t got[6];
		assert_true(iface_arp_lookup(&f->ifc, T0, ip, got)); /* promotes */
	}
	assert_int_equal(f->ifc.arp_list_len[IFACE_ARP_ACTIVE], IFACE_ARP_SLOTS);
	/* A fresh gratuitous ARP cannot push an active peer out... */
	iface_input(&f->ifc, T0 + SEC, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, PEER_IP));
	assert_int_equal(f->ifc.counters.arp_learn_refused, 1);
	assert_int_equal(iface_arp_find(&f->ifc, PEER_IP), IFACE_ARP_NONE);
	/* ...unless that peer went quiet past its refresh window. */
	sk_time_ns later = T0 + IFACE_ARP_REACHABLE_NS + IFACE_ARP_REFRESH_NS;
	iface_input(&f->ifc, later, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, PEER_IP));
	assert_int_not_equal(iface_arp_find(&f->ifc, PEER_IP), IFACE_ARP_NONE);
	assert_int_equal(f->ifc.counters.arp_evictions, 1);
}

static void test_pending_queue_bound_and_rate(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	uint32_t dst = SK_IP4(198, 18, 0, 5);
	for (unsigned i = 0; i < 40; i++) {
		int rc = udp_sendto(&f->ifc, T0, 1000, dst, 9, (const uint8_t *)"q", 1);
		assert_int_equal(rc, i < IFACE_ARP_PENDING ? 0 : -3);
	}
	assert_int_equal(c->arp_queued, IFACE_ARP_PENDING);
	assert_int_equal(c->arp_queue_full, 40 - IFACE_ARP_PENDING);
	assert_int_equal(f->ifc.npending, IFACE_ARP_PENDING);
	/* one request, however many datagrams wait */
	assert_int_equal(c->arp_requests_tx, 1);
	assert_int_equal(c->arp_req_ratelimited, IFACE_ARP_PENDING - 1);
	assert_int_equal(count_arp_requests(f, dst), 1);
	assert_int_equal(iface_next_deadline(&f->ifc), T0 + SEC);

	iface_poll(&f->ifc, T0 + 500 * MS);
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(iface_next_deadline(&f->ifc), T0 + SEC);
	iface_poll(&f->ifc, T0 + SEC);
	assert_int_equal(count_arp_requests(f, dst), 1);
	assert_int_equal(iface_next_deadline(&f->ifc), T0 + 2 * SEC);
	iface_poll(&f->ifc, T0 + 2 * SEC);
	assert_int_equal(count_arp_requests(f, dst), 1);
	assert_int_equal(iface_next_deadline(&f->ifc), T0 + 3 * SEC);
	iface_poll(&f->ifc, T0 + 3 * SEC);
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(c->arp_queue_timeout, IFACE_ARP_PENDING);
	assert_int_equal(f->ifc.npending, 0);
	assert_int_equal(iface_next_deadline(&f->ifc), SK_TIME_NEVER);
	assert_int_equal(c->arp_requests_tx, 3);
	/* A late reply learns the address but has nothing to flush. */
	uint8_t fr[64];
	iface_input(&f->ifc, T0 + 3 * SEC, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER2_MAC, dst, OUR_MAC, OUR_IP));
	assert_int_equal(tx_count(f), 0);
}

static void test_pending_per_address_and_order(void **state)
{
	struct fake *f = *state;
	uint32_t a = SK_IP4(198, 18, 0, 5), b = SK_IP4(198, 18, 0, 6);
	assert_int_equal(udp_sendto(&f->ifc, T0, 1000, a, 9, (const uint8_t *)"1", 1), 0);
	assert_int_equal(udp_sendto(&f->ifc, T0, 1000, b, 9, (const uint8_t *)"x", 1), 0);
	assert_int_equal(udp_sendto(&f->ifc, T0 + 10 * MS, 1000, a, 9, (const uint8_t *)"2", 1), 0);
	assert_int_equal(udp_sendto(&f->ifc, T0 + 20 * MS, 1000, a, 9, (const uint8_t *)"3", 1), 0);
	assert_int_equal(f->ifc.counters.arp_requests_tx, 2); /* one per address */
	tx_skip_all(f);
	uint8_t fr[64];
	iface_input(&f->ifc, T0 + 30 * MS, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER2_MAC, a, OUR_MAC, OUR_IP));
	for (char want = '1'; want <= '3'; want++) {
		size_t len;
		struct ipv4_hdr h;
		const uint8_t *out = tx_next(f, &len);
		assert_non_null(out);
		const uint8_t *l4 = parse_ip_frame(out, len, PEER2_MAC, &h);
		assert_int_equal(h.dst, a);
		assert_int_equal(l4[8], want);
	}
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(f->ifc.npending, 1); /* b still waits */
	assert_int_equal(iface_next_deadline(&f->ifc), T0 + SEC);
}

static void test_arp_expiry_and_refresh(void **state)
{
	struct fake *f = *state;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	sk_time_ns t = T0 + IFACE_ARP_REACHABLE_NS + SEC;
	/* stale: still sent, and a refresh request goes out */
	assert_int_equal(udp_sendto(&f->ifc, t, 7, PEER_IP, 7, (const uint8_t *)"s", 1), 0);
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	assert_true(is_arp_request_for(out, len, PEER_IP));
	out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER_MAC, &h);
	/* no answer: after the refresh window the datagram waits for ARP */
	t = T0 + IFACE_ARP_REACHABLE_NS + IFACE_ARP_REFRESH_NS;
	assert_int_equal(udp_sendto(&f->ifc, t, 7, PEER_IP, 7, (const uint8_t *)"s", 1), 0);
	assert_int_equal(f->ifc.counters.arp_expired, 1);
	assert_int_equal(f->ifc.npending, 1);
	assert_int_equal(count_arp_requests(f, PEER_IP), 1);
	/* the peer answers, moved to a new MAC */
	uint8_t fr[64];
	iface_input(&f->ifc, t, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER2_MAC, PEER_IP, OUR_MAC, OUR_IP));
	out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER2_MAC, &h);
}

/* ---- ICMP ---- */

static void check_ping(struct fake *f, size_t n)
{
	uint8_t payload[1500], fr[1600];
	for (size_t i = 0; i < n; i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	iface_input(&f->ifc, T0, fr, mk_ping(fr, PEER_IP, 0x1234, 9, payload, n));
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	assert_int_equal(tx_count(f), 0);
	const uint8_t *icmp = parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(h.dst, PEER_IP);
	assert_int_equal(h.proto, IPV4_PROTO_ICMP);
	assert_int_equal(h.total_len, 20 + 8 + n);
	assert_int_equal(len, SK_MAX((size_t)60, 14 + 20 + 8 + n));
	assert_int_equal(icmp[0], ICMP_ECHO_REPLY);
	assert_int_equal(icmp[1], 0);
	assert_int_equal(sk_get_be16(icmp + 4), 0x1234);
	assert_int_equal(sk_get_be16(icmp + 6), 9);
	assert_int_equal(csum(icmp, 8 + n), 0);
	assert_memory_equal(icmp + 8, payload, n);
}

static void test_ping_reply(void **state)
{
	struct fake *f = *state;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	check_ping(f, 0);
	check_ping(f, 56);
	check_ping(f, 1400);      /* ping -s 1400 */
	check_ping(f, 1500 - 28); /* a full MTU */
	assert_int_equal(f->ifc.counters.icmp_echo_replies, 4);
	assert_int_equal(f->ifc.counters.icmp_echo_requests, 4);
}

static void test_ping_unresolved_is_queued(void **state)
{
	struct fake *f = *state;
	uint8_t fr[1600], payload[100] = {1, 2, 3};
	iface_input(&f->ifc, T0, fr, mk_ping(fr, PEER_IP, 1, 1, payload, sizeof(payload)));
	assert_int_equal(count_arp_requests(f, PEER_IP), 1);
	iface_input(&f->ifc, T0 + MS, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER_MAC, PEER_IP, OUR_MAC, OUR_IP));
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	const uint8_t *icmp = parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(icmp[0], ICMP_ECHO_REPLY);
	assert_memory_equal(icmp + 8, payload, sizeof(payload));
}

/* iface_config.glean (serve --workers): an on-link source is learned from
 * the frame itself, so the answer needs no ARP; off-link ones are not (the
 * frame's MAC is a router's, not the source's), nor is anything while off. */
static void test_glean(void **state)
{
	struct fake *f = *state;
	uint8_t fr[1600], payload[8] = {1};
	f->ifc.glean = true;
	iface_input(&f->ifc, T0, fr, mk_ping(fr, PEER_IP, 1, 1, payload, sizeof(payload)));
	assert_int_equal(count_arp_requests(f, PEER_IP), 0);
	assert_int_equal(f->ifc.counters.arp_gleaned, 1);
	assert_int_equal(f->ifc.counters.icmp_echo_replies, 1);
	/* A known peer: confirmed, not counted again. */
	iface_input(&f->ifc, T0 + MS, fr, mk_ping(fr, PEER_IP, 1, 2, payload, sizeof(payload)));
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	const uint8_t *icmp = parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(icmp[0], ICMP_ECHO_REPLY);
	assert_int_equal(f->ifc.counters.arp_gleaned, 1);
	/* Off-link: answered through the gateway, the source not learned. */
	uint32_t far = SK_IP4(203, 0, 113, 5);
	iface_input(&f->ifc, T0 + 2 * MS, fr, mk_ping(fr, far, 1, 3, payload, sizeof(payload)));
	assert_int_equal(f->ifc.counters.arp_gleaned, 1);
	assert_int_equal(iface_arp_find(&f->ifc, far), IFACE_ARP_NONE);
	/* Off: only ARP teaches. */
	f->ifc.glean = false;
	uint32_t other = SK_IP4(198, 18, 0, 9);
	iface_input(&f->ifc, T0 + 3 * MS, fr, mk_ping(fr, other, 1, 4, payload, sizeof(payload)));
	assert_int_equal(f->ifc.counters.arp_gleaned, 1);
	assert_int_equal(count_arp_requests(f, other), 1);
}

static void on_icmp_error(void *ctx, struct iface *ifc, sk_time_ns now, const struct icmp_error *e)
{
	(void)ifc, (void)now;
	struct fake *f = ctx;
	f->icmp_errors++;
	f->last_error = *e;
}

static void test_icmp_error_input(void **state)
{
	struct fake *f = *state;
	iface_set_icmp_error_handler(&f->ifc, on_icmp_error, f);
	/* a port unreachable quoting a UDP datagram we sent */
	uint8_t orig[28], msg[64], fr[128];
	struct ipv4_hdr oh = {.id = 5, .frag = IPV4_FLAG_DF, .ttl = 64, .proto = IPV4_PROTO_UDP, .src = OUR_IP, .dst = PEER_IP};
	ipv4_emit(orig, 20, &oh, 8);
	sk_put_be16(orig + 20, 5000);
	sk_put_be16(orig + 22, 53);
	sk_put_be16(orig + 24, 8);
	sk_put_be16(orig + 26, 0);
	size_t n = icmp_emit_error(msg, sizeof(msg), ICMP_DEST_UNREACH, ICMP_UNREACH_PORT, 0, orig, 28);
	assert_int_equal(n, 36);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, n));
	assert_int_equal(f->ifc.counters.icmp_errors_rx, 1);
	assert_int_equal(f->icmp_errors, 1);
	assert_int_equal(f->last_error.sport, 5000);
	assert_int_equal(f->last_error.dport, 53);
	assert_int_equal(f->last_error.proto, IPV4_PROTO_UDP);
	/* quoting someone else's datagram: ignored */
	oh.src = PEER2_IP;
	ipv4_emit(orig, 20, &oh, 8);
	n = icmp_emit_error(msg, sizeof(msg), ICMP_DEST_UNREACH, ICMP_UNREACH_PORT, 0, orig, 28);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, n));
	assert_int_equal(f->ifc.counters.icmp_bad_error, 1);
	assert_int_equal(f->icmp_errors, 1);
	/* never answered with an error of our own */
	assert_int_equal(tx_count(f), 0);
}

/* ---- ping: echo requests out, replies in ---- */

static void on_echo_reply(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint16_t id,
			  uint16_t seq, const uint8_t *payload, size_t len)
{
	(void)ifc, (void)now;
	struct fake *f = ctx;
	f->replies++;
	f->reply_src = src;
	f->reply_id = id;
	f->reply_seq = seq;
	assert_true(len <= sizeof(f->reply_data));
	memcpy(f->reply_data, payload, len);
	f->reply_len = len;
}

/* The request we just sent, checked field by field; returns its ICMP bytes. */
static const uint8_t *check_request(struct fake *f, uint16_t id, uint16_t seq,
				    const uint8_t *payload, size_t n, size_t *icmp_len)
{
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	const uint8_t *icmp = parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(h.dst, PEER_IP);
	assert_int_equal(h.proto, IPV4_PROTO_ICMP);
	assert_int_equal(h.total_len, 20 + 8 + n);
	struct icmp_hdr ih;
	assert_int_equal(icmp_parse(icmp, 8 + n, &ih), WIRE_OK); /* checksum too */
	assert_int_equal(ih.type, ICMP_ECHO_REQUEST);
	assert_int_equal(ih.code, 0);
	assert_int_equal(ih.id, id);
	assert_int_equal(ih.seq, seq);
	assert_int_equal(ih.payload_len, n);
	if (n)
		assert_memory_equal(icmp + 8, payload, n);
	*icmp_len = 8 + n;
	return icmp;
}

static void test_ping_send(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	static uint8_t payload[1500];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	size_t sizes[] = {0, 1, 56, 1400, 1500 - 28}, ilen;
	for (size_t k = 0; k < SK_ARRAY_LEN(sizes); k++) {
		size_t n = sizes[k];
		assert_int_equal(icmp_ping_send(&f->ifc, T0, PEER_IP, 0xbeef, (uint16_t)(k + 1),
						n ? payload : NULL, n), 0);
		check_request(f, 0xbeef, (uint16_t)(k + 1), payload, n, &ilen);
	}
	assert_int_equal(c->icmp_echo_requests_tx, SK_ARRAY_LEN(sizes));
	/* One byte over the MTU: refused, not fragmented; so is a length
	 * that would wrap the ICMP length. */
	assert_int_equal(icmp_ping_send(&f->ifc, T0, PEER_IP, 1, 1, payload, 1500 - 27), -2);
	assert_int_equal(icmp_ping_send(&f->ifc, T0, PEER_IP, 1, 1, payload, SIZE_MAX - 4), -2);
	/* Ourselves, loopback: no route (we have no loopback output). */
	assert_int_equal(icmp_ping_send(&f->ifc, T0, OUR_IP, 1, 1, payload, 8), -1);
	assert_int_equal(icmp_ping_send(&f->ifc, T0, SK_IP4(127, 0, 0, 1), 1, 1, payload, 8), -1);
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(c->icmp_echo_requests_tx, SK_ARRAY_LEN(sizes));
}

static void test_ping_send_unresolved_is_queued(void **state)
{
	struct fake *f = *state;
	uint8_t fr[64], payload[32] = {9, 8, 7};
	assert_int_equal(icmp_ping_send(&f->ifc, T0, PEER_IP, 5, 6, payload, sizeof(payload)), 0);
	assert_int_equal(count_arp_requests(f, PEER_IP), 1);
	iface_input(&f->ifc, T0 + MS, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER_MAC, PEER_IP, OUR_MAC, OUR_IP));
	size_t ilen;
	check_request(f, 5, 6, payload, sizeof(payload), &ilen);
}

static void test_echo_reply_delivered(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	iface_set_echo_reply_handler(&f->ifc, on_echo_reply, f);
	uint8_t payload[1400], msg[2048], fr[1600];
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i ^ 0x5a);
	/* A round trip: our request, turned into a reply as a peer does. */
	assert_int_equal(icmp_ping_send(&f->ifc, T0, PEER_IP, 0x4242, 17, payload, sizeof(payload)), 0);
	size_t ilen;
	const uint8_t *req = check_request(f, 0x4242, 17, payload, sizeof(payload), &ilen);
	assert_int_equal(icmp_emit_echo_reply(msg, sizeof(msg), req, ilen), ilen);
	iface_input(&f->ifc, T0 + MS, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, ilen));
	assert_int_equal(f->replies, 1);
	assert_int_equal(f->reply_src, PEER_IP);
	assert_int_equal(f->reply_id, 0x4242);
	assert_int_equal(f->reply_seq, 17);
	assert_int_equal(f->reply_len, sizeof(payload));
	assert_memory_equal(f->reply_data, payload, sizeof(payload));
	assert_int_equal(c->icmp_echo_replies_rx, 1);
	assert_int_equal(tx_count(f), 0); /* a reply is never answered */

	/* An empty payload is delivered as such. */
	assert_int_equal(icmp_emit_echo_request(msg, sizeof(msg), 1, 2, NULL, 0), 8);
	assert_int_equal(icmp_emit_echo_reply(msg, sizeof(msg), msg, 8), 8);
	iface_input(&f->ifc, T0 + MS, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, 8));
	assert_int_equal(f->replies, 2);
	assert_int_equal(f->reply_len, 0);
	assert_int_equal(f->reply_seq, 2);

	/* No handler: still counted, nothing called. */
	iface_set_echo_reply_handler(&f->ifc, NULL, NULL);
	iface_input(&f->ifc, T0 + MS, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, 8));
	assert_int_equal(f->replies, 2);
	assert_int_equal(c->icmp_echo_replies_rx, 3);
}

static void test_echo_reply_bad_csum_dropped(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	iface_set_echo_reply_handler(&f->ifc, on_echo_reply, f);
	uint8_t payload[64], msg[128], fr[256];
	memset(payload, 0xa5, sizeof(payload));
	assert_int_equal(icmp_emit_echo_request(msg, sizeof(msg), 7, 8, payload, sizeof(payload)), 72);
	assert_int_equal(icmp_emit_echo_reply(msg, sizeof(msg), msg, 72), 72);
	msg[8 + 10] ^= 0x01; /* one payload bit flipped in transit */
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, 72));
	assert_int_equal(f->replies, 0);
	assert_int_equal(c->icmp_csum, 1);
	assert_int_equal(c->icmp_echo_replies_rx, 0);
	/* Repaired, the same reply gets through: the drop was the checksum. */
	msg[8 + 10] ^= 0x01;
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, 72));
	assert_int_equal(f->replies, 1);
	assert_int_equal(c->icmp_echo_replies_rx, 1);
}

/* ---- UDP ---- */

static void test_udp_echo(void **state)
{
	struct fake *f = *state;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	assert_int_equal(udp_bind(&f->ifc, 7, echo_cb, f), 0);
	uint8_t data[1000], fr[1600];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ 0x5a);
	iface_input(&f->ifc, T0, fr, mk_udp(fr, OUR_MAC, PEER_IP, OUR_IP, 40000, 7, data, sizeof(data)));
	assert_int_equal(f->udp_calls, 1);
	assert_int_equal(f->udp_len, sizeof(data));
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	const uint8_t *seg = parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(h.proto, IPV4_PROTO_UDP);
	assert_int_equal(h.dst, PEER_IP);
	struct udp_hdr uh;
	assert_int_equal(udp_parse(seg, h.payload_len, h.src, h.dst, &uh), WIRE_OK);
	assert_true(uh.csum != 0);
	assert_int_equal(uh.sport, 7);
	assert_int_equal(uh.dport, 40000);
	assert_int_equal(uh.payload_len, sizeof(data));
	assert_memory_equal(seg + 8, data, sizeof(data));
	assert_int_equal(f->ifc.counters.udp_rx, 1);
	assert_int_equal(f->ifc.counters.udp_tx, 1);
	/* broadcast datagram to a bound port is delivered too */
	iface_input(&f->ifc, T0, fr, mk_udp(fr, eth_broadcast, PEER_IP, SUBNET_BCAST, 40000, 7, data, 4));
	assert_int_equal(f->udp_calls, 2);
}

static void test_udp_bind_table(void **state)
{
	struct fake *f = *state;
	assert_int_equal(udp_bind(&f->ifc, 0, count_cb, f), -1);
	assert_int_equal(udp_bind(&f->ifc, 5, NULL, f), -1);
	for (unsigned i = 0; i < IFACE_MAX_UDP_PORTS; i++)
		assert_int_equal(udp_bind(&f->ifc, (uint16_t)(100 + i), count_cb, f), 0);
	assert_int_equal(udp_bind(&f->ifc, 100, count_cb, f), -1); /* taken */
	assert_int_equal(udp_bind(&f->ifc, 999, count_cb, f), -1); /* full */
	udp_unbind(&f->ifc, 103);
	assert_int_equal(udp_bind(&f->ifc, 999, count_cb, f), 0);
	uint8_t fr[128];
	iface_input(&f->ifc, T0, fr, mk_udp(fr, OUR_MAC, PEER_IP, OUR_IP, 1, 999, (const uint8_t *)"z", 1));
	assert_int_equal(f->udp_calls, 1);
	/* sendto errors */
	struct iface_counters *c = &f->ifc.counters;
	static uint8_t big[1500];
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, PEER_IP, 1, big, 1500 - 28 + 1), -2);
	assert_int_equal(c->ip_too_big, 1);
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, OUR_IP, 1, big, 1), -1);
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, SK_IP4(224, 0, 0, 1), 1, big, 1), -1);
	assert_int_equal(c->ip_no_route, 2);
	/* broadcast: no ARP, broadcast MAC */
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, 0xffffffffu, 1, big, 1), 0);
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, eth_broadcast, &h);
}

static void test_gateway_routing(void **state)
{
	struct fake *f = *state;
	uint32_t far = SK_IP4(8, 8, 8, 8);
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, far, 53, (const uint8_t *)"g", 1), 0);
	assert_int_equal(count_arp_requests(f, GW_IP), 1);
	uint8_t fr[64];
	iface_input(&f->ifc, T0, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER_MAC, GW_IP, OUR_MAC, OUR_IP));
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(h.dst, far);

	/* without a gateway, off-link is unreachable */
	struct fake *g = fake_new(0);
	assert_int_equal(udp_sendto(&g->ifc, T0, 1, far, 53, (const uint8_t *)"g", 1), -1);
	assert_int_equal(g->ifc.counters.ip_no_route, 1);
	assert_int_equal(tx_count(g), 0);
	free(g->mem);
	free(g);
}

/* ---- the workers' neighbour board (iface_config.board) ---- */

static void free_fake(struct fake *f)
{
	free(f->mem);
	free(f);
}

/* Worker B asks for a next hop; the reply is heard by worker A (the device
 * steers ARP to one worker).  A publishes it, B takes it from the board at
 * its next poll and sends what waited; a later miss on B (after eviction)
 * is satisfied from the board without a request.  Off (NULL) changes
 * nothing. */
static void test_board_shares_answers(void **state)
{
	(void)state;
	static struct nbr_board board;
	nbr_board_init(&board, 7);
	struct iface_config cfg = {.gw = GW_IP, .board = &board};
	struct fake *a = fake_new_cfg(&cfg), *b = fake_new_cfg(&cfg);
	uint32_t far = SK_IP4(203, 0, 113, 9);

	/* B: an off-link datagram waits for the gateway; one request out. */
	assert_int_equal(udp_sendto(&b->ifc, T0, 1, far, 53, (const uint8_t *)"g", 1), 0);
	assert_int_equal(count_arp_requests(b, GW_IP), 1);
	assert_int_equal(b->ifc.npending, 1);
	/* The board is polled soon, not at the 1 s retry. */
	assert_true(iface_next_deadline(&b->ifc) <= T0 + IFACE_ARP_BOARD_POLL_NS);
	iface_poll(&b->ifc, T0 + IFACE_ARP_BOARD_POLL_NS);
	assert_int_equal(b->ifc.npending, 1); /* nothing on the board yet */
	assert_int_equal(tx_count(b), 0);     /* and no second request */

	/* A hears the reply (to B's request: tpa is ours, so A learns it). */
	uint8_t fr[64];
	sk_time_ns t = T0 + 2 * MS;
	iface_input(&a->ifc, t, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER_MAC, GW_IP, OUR_MAC, OUR_IP));
	assert_int_equal(a->ifc.counters.arp_learned, 1);
	uint8_t mac[6];
	sk_time_ns conf;
	assert_true(nbr_board_read(&board, GW_IP, mac, &conf));
	assert_memory_equal(mac, PEER_MAC, 6);
	assert_int_equal(conf, t);

	/* B's poll: taken from the board, the datagram sent to the gateway. */
	iface_poll(&b->ifc, t + IFACE_ARP_BOARD_POLL_NS);
	assert_int_equal(b->ifc.npending, 0);
	assert_int_equal(b->ifc.counters.arp_board_hits, 1);
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(b, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(h.dst, far);
	assert_int_equal(tx_count(b), 0);
	/* Resolved: no more board polling. */
	assert_true(iface_next_deadline(&b->ifc) == SK_TIME_NEVER);

	/* A learns another on-link peer; B's first datagram to it goes out at
	 * once, with no request. */
	iface_input(&a->ifc, t, fr, mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER2_MAC, PEER2_IP, ZERO_MAC, OUR_IP));
	tx_skip_all(a);
	assert_int_equal(udp_sendto(&b->ifc, t + MS, 1, PEER2_IP, 7, (const uint8_t *)"p", 1), 0);
	out = tx_next(b, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER2_MAC, &h);
	assert_int_equal(tx_count(b), 0);
	assert_int_equal(b->ifc.counters.arp_requests_tx, 1); /* only the first */
	assert_int_equal(b->ifc.counters.arp_board_hits, 2);

	/* A board entry older than the reachable time is not taken: B asks.
	 * (Its own copy expires with it: installed with A's time.) */
	sk_time_ns late = t + IFACE_ARP_REACHABLE_NS + IFACE_ARP_REFRESH_NS;
	assert_int_equal(udp_sendto(&b->ifc, late, 1, PEER2_IP, 7, (const uint8_t *)"p", 1), 0);
	assert_int_equal(count_arp_requests(b, PEER2_IP), 1);
	assert_int_equal(b->ifc.counters.arp_board_hits, 2);
	/* A refresh heard by A (the peer answers B's request) reaches B. */
	iface_input(&a->ifc, late + MS, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER2_MAC, PEER2_IP, OUR_MAC, OUR_IP));
	iface_poll(&b->ifc, late + 2 * MS);
	assert_int_equal(b->ifc.counters.arp_board_hits, 3);
	out = tx_next(b, &len);
	assert_non_null(out);
	parse_ip_frame(out, len, PEER2_MAC, &h);

	/* A stale (not yet expired) local entry takes a newer board entry
	 * instead of asking. */
	sk_time_ns stale = late + MS + IFACE_ARP_REACHABLE_NS + SEC;
	iface_input(&a->ifc, stale - MS, fr, mk_arp(fr, ARP_OP_REPLY, OUR_MAC, PEER2_MAC, PEER2_IP, OUR_MAC, OUR_IP));
	assert_int_equal(udp_sendto(&b->ifc, stale, 1, PEER2_IP, 7, (const uint8_t *)"p", 1), 0);
	assert_int_equal(count_arp_requests(b, PEER2_IP), 0);
	assert_int_equal(b->ifc.counters.arp_board_hits, 4);

	/* Off: a third interface without the board asks for itself. */
	struct fake *c = fake_new(GW_IP);
	assert_int_equal(udp_sendto(&c->ifc, t, 1, PEER2_IP, 7, (const uint8_t *)"p", 1), 0);
	assert_int_equal(count_arp_requests(c, PEER2_IP), 1);
	assert_int_equal(c->ifc.counters.arp_board_hits, 0);
	free_fake(a);
	free_fake(b);
	free_fake(c);
}

/* The board itself: bounded (a window of NBR_BOARD_PROBE slots per
 * address, the oldest replaced), newest wins, an older publication does
 * not overwrite a newer one, and a slot held by a writer is skipped. */
static void test_board_slots(void **state)
{
	(void)state;
	static struct nbr_board board;
	nbr_board_init(&board, 9);
	uint8_t mac[6];
	sk_time_ns conf;
	assert_false(nbr_board_read(&board, PEER_IP, mac, &conf));
	assert_true(nbr_board_publish(&board, PEER_IP, PEER_MAC, T0));
	assert_false(nbr_board_publish(&board, PEER_IP, PEER_MAC, T0)); /* nothing new */
	assert_true(nbr_board_publish(&board, PEER_IP, PEER2_MAC, T0 + 1)); /* moved */
	assert_true(nbr_board_read(&board, PEER_IP, mac, &conf));
	assert_memory_equal(mac, PEER2_MAC, 6);
	assert_int_equal(conf, T0 + 1);
	/* Many addresses: never more than the slots, every read consistent. */
	for (uint32_t i = 0; i < 4 * NBR_BOARD_SLOTS; i++) {
		uint8_t m[6] = {2, 0, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i, 1};
		nbr_board_publish(&board, SK_IP4(10, 0, 0, 0) + i + 1, m, T0 + 10 + i);
	}
	unsigned found = 0;
	for (uint32_t i = 0; i < 4 * NBR_BOARD_SLOTS; i++) {
		uint32_t ip = SK_IP4(10, 0, 0, 0) + i + 1;
		if (!nbr_board_read(&board, ip, mac, &conf))
			continue;
		found++;
		assert_int_equal(conf, T0 + 10 + i);
		assert_int_equal(mac[4], (uint8_t)i);
	}
	assert_true(found <= NBR_BOARD_SLOTS);
	assert_true(found >= NBR_BOARD_SLOTS / 2); /* the newest displaced the oldest */
	/* A slot a writer holds (odd sequence): a read finds nothing rather
	 * than a torn entry; a publication goes to another slot of the window
	 * and the read finds that one. */
	nbr_board_init(&board, 9);
	assert_true(nbr_board_publish(&board, PEER_IP, PEER_MAC, T0));
	unsigned held = NBR_BOARD_SLOTS;
	for (unsigned k = 0; k < NBR_BOARD_SLOTS; k++)
		if (board.slot[k].ip == PEER_IP)
			held = k;
	assert_true(held < NBR_BOARD_SLOTS);
	board.slot[held].seq |= 1;
	assert_false(nbr_board_read(&board, PEER_IP, mac, &conf));
	assert_true(nbr_board_publish(&board, PEER_IP, PEER2_MAC, T0 + 5));
	assert_true(nbr_board_read(&board, PEER_IP, mac, &conf));
	assert_memory_equal(mac, PEER2_MAC, 6);
	/* Released, the held slot's older entry does not win over the newer. */
	board.slot[held].seq += 1;
	assert_true(nbr_board_read(&board, PEER_IP, mac, &conf));
	assert_memory_equal(mac, PEER2_MAC, 6);
	assert_int_equal(conf, T0 + 5);
}

static void test_port_unreachable_ratelimited(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	uint8_t fr[128], data[32];
	memset(data, 0xab, sizeof(data));
	size_t flen = mk_udp(fr, OUR_MAC, PEER_IP, OUR_IP, 3333, 9999, data, sizeof(data));
	iface_input(&f->ifc, T0, fr, flen);
	size_t len;
	struct ipv4_hdr h;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	const uint8_t *icmp = parse_ip_frame(out, len, PEER_MAC, &h);
	assert_int_equal(h.proto, IPV4_PROTO_ICMP);
	assert_int_equal(h.payload_len, 8 + 20 + 8);
	assert_int_equal(icmp[0], ICMP_DEST_UNREACH);
	assert_int_equal(icmp[1], ICMP_UNREACH_PORT);
	assert_int_equal(csum(icmp, h.payload_len), 0);
	assert_memory_equal(icmp + 8, fr + 14, 28); /* IP header + 8 bytes quoted */
	assert_int_equal(c->udp_no_port, 1);
	assert_int_equal(c->icmp_unreach_tx, 1);

	/* a burst at one instant: BURST in all, the rest withheld */
	for (unsigned i = 0; i < 100; i++)
		iface_input(&f->ifc, T0, fr, flen);
	assert_int_equal(c->icmp_unreach_tx, IFACE_ICMP_BURST);
	assert_int_equal(c->icmp_ratelimited, 100 - (IFACE_ICMP_BURST - 1));
	tx_skip_all(f);
	/* 100 ms refill 10 tokens at 100/s */
	for (unsigned i = 0; i < 30; i++)
		iface_input(&f->ifc, T0 + 100 * MS, fr, flen);
	assert_int_equal(c->icmp_unreach_tx, IFACE_ICMP_BURST + 10);
	tx_skip_all(f);
	/* never for broadcast: IP broadcast, or link broadcast */
	uint64_t sent = c->icmp_unreach_tx, nop = c->udp_no_port;
	iface_input(&f->ifc, T0 + 10 * SEC, fr, mk_udp(fr, eth_broadcast, PEER_IP, 0xffffffffu, 68, 67, data, 4));
	iface_input(&f->ifc, T0 + 10 * SEC, fr, mk_udp(fr, eth_broadcast, PEER_IP, OUR_IP, 1, 2, data, 4));
	assert_int_equal(c->udp_no_port, nop + 2);
	assert_int_equal(c->icmp_unreach_tx, sent);
	assert_int_equal(tx_count(f), 0);
}

/* ---- input validation ---- */

static void test_not_for_us_and_malformed(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	uint8_t fr[256], good[256], data[8] = {0};
	size_t glen = mk_udp(good, OUR_MAC, PEER_IP, OUR_IP, 1, 2, data, 8);

	iface_input(&f->ifc, T0, good, 10);
	assert_int_equal(c->eth_bad_len, 1);

	memcpy(fr, good, glen);
	memcpy(fr, OTHER_MAC, 6);
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->eth_not_for_us, 1);

	memcpy(fr, good, glen);
	fr[0] = 0x01; /* multicast */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->eth_multicast, 1);

	memcpy(fr, good, glen);
	memcpy(fr + 6, OUR_MAC, 6); /* our own frame looped back */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->eth_bad_src, 1);

	memcpy(fr, good, glen);
	sk_put_be16(fr + 12, 0x88b5); /* local experimental */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->eth_unknown_type, 1);

	memcpy(fr, good, glen);
	sk_put_be16(fr + 12, 0x86dd); /* IPv6 on an IPv4-only interface */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->eth_v6_off, 1);

	memcpy(fr, good, glen);
	sk_put_be16(fr + 12, 0x0100); /* 802.3 length */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->eth_unsupported, 1);

	/* VLAN tagged */
	memcpy(fr, good, 12);
	sk_put_be16(fr + 12, ETH_TYPE_VLAN);
	sk_put_be16(fr + 14, 5);
	memcpy(fr + 16, good + 12, glen - 12);
	iface_input(&f->ifc, T0, fr, glen + 4);
	assert_int_equal(c->eth_vlan, 1);

	/* IPv4 to someone else */
	iface_input(&f->ifc, T0, fr, mk_udp(fr, OUR_MAC, PEER_IP, SK_IP4(198, 18, 0, 7), 1, 2, data, 8));
	assert_int_equal(c->ip_not_for_us, 1);

	memcpy(fr, good, glen);
	fr[14] = 0x65; /* version 6 */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->ip_version, 1);

	memcpy(fr, good, glen);
	fr[14 + 8] ^= 1; /* TTL changed: header checksum wrong */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->ip_csum, 1);

	iface_input(&f->ifc, T0, good, 14 + 30); /* cut inside the datagram */
	assert_int_equal(c->ip_truncated, 1);

	memcpy(fr, good, glen);
	fr[14] = 0x44; /* IHL 4 */
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->ip_bad_len, 1);

	/* martian sources */
	iface_input(&f->ifc, T0, fr, mk_udp(fr, OUR_MAC, OUR_IP, OUR_IP, 1, 2, data, 8));
	iface_input(&f->ifc, T0, fr, mk_udp(fr, OUR_MAC, SK_IP4(127, 0, 0, 1), OUR_IP, 1, 2, data, 8));
	iface_input(&f->ifc, T0, fr, mk_udp(fr, OUR_MAC, SK_IP4(224, 0, 0, 5), OUR_IP, 1, 2, data, 8));
	assert_int_equal(c->ip_bad_src, 3);

	/* UDP checksum */
	memcpy(fr, good, glen);
	fr[14 + 20 + 8] ^= 0xff;
	iface_input(&f->ifc, T0, fr, glen);
	assert_int_equal(c->udp_csum, 1);

	/* ICMP checksum */
	uint8_t msg[16];
	icmp_emit_echo_request(msg, sizeof(msg), 1, 1, data, 8);
	msg[9] ^= 1;
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_ICMP, 0, msg, 16));
	assert_int_equal(c->icmp_csum, 1);

	/* ICMP to broadcast: ignored (no smurf amplification) */
	icmp_emit_echo_request(msg, sizeof(msg), 1, 1, data, 8);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, eth_broadcast, PEER_MAC, PEER_IP, SUBNET_BCAST, IPV4_PROTO_ICMP, 0, msg, 16));
	assert_int_equal(c->ip_bcast_not_udp, 1);

	/* a protocol nobody handles */
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, 99, 0, data, 8));
	assert_int_equal(c->ip_unknown_proto, 1);

	assert_int_equal(tx_count(f), 0);
	/* passed the IP checks: bad UDP csum, bad ICMP csum, broadcast ICMP, proto 99 */
	assert_int_equal(c->ip_rx, 4);
}

static void test_fragments_dropped(void **state)
{
	struct fake *f = *state;
	assert_int_equal(udp_bind(&f->ifc, 7, count_cb, f), 0);
	uint8_t seg[16] = {0}, fr[128];
	sk_put_be16(seg + 2, 7);
	sk_put_be16(seg + 4, 16);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_UDP, IPV4_FLAG_MF, seg, 16));
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_UDP, 185, seg, 16));
	assert_int_equal(f->ifc.counters.ip_frag_dropped, 2);
	assert_int_equal(f->udp_calls, 0);
	assert_int_equal(tx_count(f), 0);
}

/* ---- device rings ---- */

static void test_tx_ring_full(void **state)
{
	struct fake *f = *state;
	struct iface_counters *c = &f->ifc.counters;
	learn_peer(f, T0, PEER_MAC, PEER_IP);
	/* nobody reads the ring and tx_sync frees nothing */
	for (unsigned i = 0; i < NSLOTS; i++)
		assert_int_equal(udp_sendto(&f->ifc, T0, 1, PEER_IP, 2, (const uint8_t *)"f", 1), 0);
	assert_int_equal(f->tx_syncs, 0);
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, PEER_IP, 2, (const uint8_t *)"f", 1), -3);
	assert_int_equal(f->tx_syncs, 1); /* synced once, still full */
	assert_int_equal(c->tx_full_syncs, 1);
	assert_int_equal(c->tx_ring_full, 1);
	/* replies are dropped the same way, counted */
	uint8_t fr[128];
	iface_input(&f->ifc, T0, fr, mk_ping(fr, PEER_IP, 1, 1, NULL, 0));
	assert_int_equal(c->tx_ring_full, 2);
	assert_int_equal(c->icmp_tx_failed, 1);
	/* a device that does send on sync: the next frame gets through */
	f->drain = true;
	assert_int_equal(udp_sendto(&f->ifc, T0, 1, PEER_IP, 2, (const uint8_t *)"f", 1), 0);
	assert_int_equal(f->tx_syncs, 3);
	assert_int_equal(c->tx_frames, 1 + NSLOTS + 1);
}

/* Device side of rx: put a frame in the next rx slot. */
static void rx_put(struct fake *f, const uint8_t *fr, size_t len)
{
	struct ring *rx = f->dev.rx;
	struct ring_slot *s = ring_slot(rx, rx->tail);
	memcpy(ring_buf(rx, s->buf_idx), fr, len);
	s->len = (uint16_t)len;
	ring_store(&rx->tail, rx->tail + 1);
}

static void test_rx_ring(void **state)
{
	struct fake *f = *state;
	struct ring *rx = f->dev.rx;
	uint8_t fr[64];
	mk_arp(fr, ARP_OP_REQUEST, eth_broadcast, PEER_MAC, PEER_IP, ZERO_MAC, OUR_IP);
	rx_put(f, fr, 60);
	rx_put(f, fr, 60);
	ring_slot(rx, 1)->buf_idx = rx->nbufs; /* a broken device */
	rx_put(f, fr, 60);
	ring_slot(rx, 2)->len = (uint16_t)(BUFSZ + 1);
	rx_put(f, fr, 60);
	assert_int_equal(iface_rx(&f->ifc, T0), 4);
	assert_int_equal(rx->head, 4);
	assert_int_equal(f->ifc.counters.dev_bad_slot, 2);
	assert_int_equal(f->ifc.counters.rx_frames, 2);
	assert_int_equal(f->ifc.counters.arp_replies_tx, 2);
	assert_int_equal(tx_count(f), 2);
	assert_int_equal(iface_rx(&f->ifc, T0), 0);
	/* many frames, wrapping the ring */
	ring_slot(rx, 1)->buf_idx = 1;
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned i = 0; i < NSLOTS; i++)
			rx_put(f, fr, 60);
		f->drain = true;
		assert_int_equal(iface_rx(&f->ifc, T0), NSLOTS);
	}
	assert_int_equal(f->ifc.counters.arp_replies_tx, 2 + 3 * NSLOTS);
}

/* ---- counters ---- */

struct stat_seen {
	unsigned n;
	const char *names[256];
	uint64_t values[256];
};

static void stat_cb(void *ctx, const char *name, uint64_t value)
{
	struct stat_seen *s = ctx;
	assert_true(s->n < 256);
	s->names[s->n] = name;
	s->values[s->n++] = value;
}

static uint64_t stat_get(const struct stat_seen *s, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return s->values[i];
	fail_msg("no counter %s", name);
	return 0;
}

static void test_stats(void **state)
{
	struct fake *f = *state;
	uint8_t fr[128] = {0}, seg[16] = {0};
	iface_input(&f->ifc, T0, fr, 5);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_UDP, IPV4_FLAG_MF, seg, 16));
	struct stat_seen s = {0};
	iface_stats(&f->ifc, stat_cb, &s);
	assert_int_equal(s.n, sizeof(struct iface_counters) / sizeof(uint64_t) + 5);
	for (unsigned i = 0; i < s.n; i++)
		for (unsigned j = i + 1; j < s.n; j++)
			assert_true(strcmp(s.names[i], s.names[j]) != 0);
	assert_int_equal(stat_get(&s, "eth.bad_len"), 1);
	assert_int_equal(stat_get(&s, "ip.frag_dropped"), 1);
	assert_int_equal(stat_get(&s, "iface.rx_frames"), 2);
	const char *must[] = {"arp.evictions", "icmp.echo_replies", "udp.no_port", "ip.csum",
			      "icmp.ratelimited", "iface.bad_slot", "iface.tx_ring_full", "arp.queue_timeout",
			      "arp.entries", "arp.pending", "nd.entries", "nd.pending",
			      "ip6.addrs_usable", "nd.dad_duplicate", "ip6.frag_dropped"};
	for (size_t i = 0; i < SK_ARRAY_LEN(must); i++)
		stat_get(&s, must[i]);
}

static void proto_cb(void *ctx, struct iface *ifc, sk_time_ns now, uint32_t src, uint32_t dst,
		     const uint8_t *l4, size_t len)
{
	(void)ifc, (void)now, (void)l4;
	struct fake *f = ctx;
	assert_int_equal(src, PEER_IP);
	assert_int_equal(dst, OUR_IP);
	f->udp_calls++;
	f->udp_len = len;
}

static void test_proto_handler(void **state)
{
	struct fake *f = *state;
	uint8_t fr[128], seg[20] = {0};
	assert_int_equal(iface_set_proto_handler(&f->ifc, IPV4_PROTO_UDP, proto_cb, f), -1);
	assert_int_equal(iface_set_proto_handler(&f->ifc, IPV4_PROTO_TCP, proto_cb, f), 0);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_TCP, 0, seg, 20));
	assert_int_equal(f->udp_calls, 1);
	assert_int_equal(f->udp_len, 20);
	assert_int_equal(iface_set_proto_handler(&f->ifc, IPV4_PROTO_TCP, NULL, NULL), 0);
	iface_input(&f->ifc, T0, fr, mk_ip(fr, OUR_MAC, PEER_MAC, PEER_IP, OUR_IP, IPV4_PROTO_TCP, 0, seg, 20));
	assert_int_equal(f->udp_calls, 1);
	assert_int_equal(f->ifc.counters.ip_unknown_proto, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_request_answered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_not_for_us_and_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_announce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_flood_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_table_full_of_active_refuses_unsolicited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_queue_bound_and_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_per_address_and_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_expiry_and_refresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping_unresolved_is_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_glean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_icmp_error_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ping_send_unresolved_is_queued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_echo_reply_delivered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_echo_reply_bad_csum_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_bind_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gateway_routing, setup, teardown),
		cmocka_unit_test(test_board_shares_answers),
		cmocka_unit_test(test_board_slots),
		cmocka_unit_test_setup_teardown(test_port_unreachable_ratelimited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_for_us_and_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fragments_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_ring_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rx_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proto_handler, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
