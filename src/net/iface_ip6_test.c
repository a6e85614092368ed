/* iface_ip6_test.c — IPv6 on the interface against the fake device of
 * iface_testlib.h: DAD (its states and verdicts), NS/NA, the neighbour
 * cache (bound, LRU, rate-limited solicitations, STALE probes), ICMPv6
 * echo both ways, the rate-limited errors and the drops by reason.  Every
 * call gets an explicit `now`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "net/iface_testlib.h"

/* 2001:2::2/64 (us), 2001:2::1 (the peer), 2001:2::3 (another) */
static struct ipv6_addr A6(uint8_t last)
{
	struct ipv6_addr a = {{0x20, 0x01, 0x00, 0x02, [15] = last}};
	return a;
}

static struct ipv6_addr our_ll(void)
{
	struct ipv6_addr a;
	ipv6_link_local_from_mac(&a, OUR_MAC);
	return a;
}

struct dad_seen {
	unsigned calls, dups;
	struct ipv6_addr last;
};
static struct dad_seen dad;

static void dad_cb(void *ctx, struct iface *ifc, const struct ipv6_addr *a, bool dup)
{
	(void)ctx, (void)ifc;
	dad.calls++;
	dad.dups += dup;
	dad.last = *a;
}

static int setup6(void **state)
{
	struct iface_config cfg = {.ip6 = true, .nip6 = 1};
	cfg.ip6_addr[0].addr = A6(2);
	cfg.ip6_addr[0].prefix_len = 64;
	struct fake *f = fake_new_cfg(&cfg);
	memset(&dad, 0, sizeof(dad));
	iface_set_dad_handler(&f->ifc, dad_cb, NULL);
	*state = f;
	return 0;
}

/* ---- frame builders ---- */

static size_t mk_ip6(uint8_t *fr, const uint8_t *dst_mac, const uint8_t *src_mac,
		     const struct ipv6_addr *src, const struct ipv6_addr *dst, uint8_t next,
		     uint8_t hop, const uint8_t *l4, size_t n)
{
	eth_emit(fr, 14, dst_mac, src_mac, ETH_TYPE_IPV6);
	struct ipv6_hdr h = {.next = next, .hop_limit = hop, .src = *src, .dst = *dst};
	assert_int_equal(ipv6_emit(fr + 14, 40, &h, (uint16_t)n), 40);
	memcpy(fr + 54, l4, n);
	size_t len = 54 + n;
	if (len < 60) {
		memset(fr + len, 0, 60 - len);
		len = 60;
	}
	return len;
}

static void group_mac(uint8_t mac[6], const struct ipv6_addr *target)
{
	struct ipv6_addr g;
	ipv6_solicited_node(&g, target);
	ipv6_mcast_mac(mac, &g);
}

/* An NS for target from src (:: for DAD, then no SLLA) with mac's SLLA. */
static size_t mk_ns(uint8_t *fr, const uint8_t *mac, const struct ipv6_addr *src,
		    const struct ipv6_addr *target, const uint8_t *nonce, uint8_t hop)
{
	uint8_t m[64], gm[6];
	struct ipv6_addr dst;
	ipv6_solicited_node(&dst, target);
	group_mac(gm, target);
	bool unspec = ipv6_is_unspecified(src);
	size_t n = nd_emit_ns(m, sizeof(m), target, unspec ? NULL : mac, nonce, src, &dst);
	assert_true(n > 0);
	return mk_ip6(fr, gm, mac, src, &dst, IPV6_NH_ICMPV6, hop, m, n);
}

static size_t mk_na(uint8_t *fr, const uint8_t *eth_dst, const uint8_t *mac,
		    const struct ipv6_addr *src, const struct ipv6_addr *dst,
		    const struct ipv6_addr *target, uint8_t flags)
{
	uint8_t m[64];
	size_t n = nd_emit_na(m, sizeof(m), target, flags, mac, src, dst);
	assert_true(n > 0);
	return mk_ip6(fr, eth_dst, mac, src, dst, IPV6_NH_ICMPV6, 255, m, n);
}

static size_t mk_echo6(uint8_t *fr, const struct ipv6_addr *src, const struct ipv6_addr *dst,
		       uint16_t id, uint16_t seq, const uint8_t *data, size_t n)
{
	uint8_t m[1600];
	assert_int_equal(icmp6_emit_echo_request(m, sizeof(m), id, seq, data, n, src, dst), 8 + n);
	return mk_ip6(fr, OUR_MAC, PEER_MAC, src, dst, IPV6_NH_ICMPV6, 64, m, 8 + n);
}

/* A sent frame as IPv6: its header, and a pointer to the upper layer. */
static const uint8_t *parse6(const uint8_t *fr, size_t len, struct eth_hdr *eh, struct ipv6_hdr *h)
{
	assert_int_equal(eth_parse(fr, len, eh), WIRE_OK);
	assert_memory_equal(eh->src, OUR_MAC, 6);
	if (eh->type != ETH_TYPE_IPV6)
		return NULL;
	int rc = ipv6_parse(fr + 14, len - 14, h);
	/* an MLD report from :: is valid to send, but ipv6_parse takes the
	 * router alert in stride; everything we send parses */
	assert_int_equal(rc, WIRE_OK);
	return fr + 14 + h->l4_off;
}

/* The type of the ICMPv6 message in frame fr, or -1. */
static int icmp6_type(const uint8_t *fr, size_t len, struct ipv6_hdr *h)
{
	struct eth_hdr eh;
	const uint8_t *m = parse6(fr, len, &eh, h);
	if (!m || h->proto != IPV6_NH_ICMPV6)
		return -1;
	struct icmp6_hdr ih;
	assert_int_equal(icmp6_parse(m, h->l4_len, &h->src, &h->dst, &ih), WIRE_OK);
	return ih.type;
}

/* DAD through to the end: both addresses usable, tx drained. */
static void pass_dad(struct fake *f)
{
	iface_poll(&f->ifc, T0);
	iface_poll(&f->ifc, T0 + SEC);
	assert_int_equal(iface_ip6_tentative(&f->ifc), 0);
	tx_skip_all(f);
}

/* The peer 2001:2::1 asks for us: answered, the peer learned (STALE). */
static void learn_peer6(struct fake *f, sk_time_ns now, const uint8_t *mac, const struct ipv6_addr *ip)
{
	uint8_t fr[128];
	struct ipv6_addr t = A6(2);
	iface_input(&f->ifc, now, fr, mk_ns(fr, mac, ip, &t, NULL, 255));
	tx_skip_all(f);
}

/* ---- DAD ---- */

static void test_dad_ok(void **state)
{
	struct fake *f = *state;
	struct iface *ifc = &f->ifc;
	assert_int_equal(ifc->naddr6, 2);
	struct ipv6_addr ll = our_ll();
	assert_true(ipv6_addr_eq(&ifc->addr6[0].a, &ll));
	assert_int_equal(iface_ip6_tentative(ifc), 2);
	assert_int_equal(iface_next_deadline(ifc), T0);
	/* Tentative: no source to send from, nothing accepted but ND. */
	struct ipv6_addr src, peer = A6(1);
	assert_false(iface_ip6_source(ifc, &peer, &src));
	assert_int_equal(icmp6_ping_send(ifc, T0, &peer, 1, 1, NULL, 0), -1);

	iface_poll(ifc, T0);
	/* MLDv2 report, then one probe per address: from ::, to the
	 * solicited-node group, hop limit 255, a nonce, no SLLA. */
	size_t len;
	const uint8_t *fr = tx_next(f, &len);
	struct ipv6_hdr h;
	assert_int_equal(icmp6_type(fr, len, &h), ICMP6_MLD2_REPORT);
	assert_true(h.router_alert);
	assert_int_equal(h.hop_limit, 1);
	assert_true(ipv6_is_unspecified(&h.src));
	for (unsigned i = 0; i < 2; i++) {
		fr = tx_next(f, &len);
		assert_non_null(fr);
		assert_int_equal(icmp6_type(fr, len, &h), ND_NS);
		assert_true(ipv6_is_unspecified(&h.src));
		assert_true(ipv6_is_solicited_node(&h.dst));
		struct nd_msg m;
		assert_int_equal(nd_parse(fr + 14 + h.l4_off, h.l4_len, &h, &m), WIRE_OK);
		assert_true(ipv6_addr_eq(&m.target, &ifc->addr6[i].a));
		assert_true(m.opts.has_nonce);
		assert_false(m.opts.has_slla);
		uint8_t gm[6];
		group_mac(gm, &m.target);
		assert_memory_equal(fr, gm, 6);
	}
	assert_null(tx_next(f, &len));
	assert_int_equal(ifc->counters.nd_dad_ns_tx, 2);
	assert_int_equal(iface_next_deadline(ifc), T0 + SEC);
	iface_poll(ifc, T0 + SEC - 1);
	assert_int_equal(iface_ip6_tentative(ifc), 2);
	iface_poll(ifc, T0 + SEC);
	assert_int_equal(iface_ip6_tentative(ifc), 0);
	assert_int_equal(ifc->counters.nd_dad_ok, 2);
	assert_int_equal(dad.calls, 2);
	assert_int_equal(dad.dups, 0);
	assert_int_equal(iface_next_deadline(ifc), SK_TIME_NEVER);
	assert_true(iface_ip6_source(ifc, &peer, &src));
	struct ipv6_addr g = A6(2);
	assert_true(ipv6_addr_eq(&src, &g));
	struct ipv6_addr lpeer = ll;
	lpeer.b[15] ^= 1;
	assert_true(iface_ip6_source(ifc, &lpeer, &src));
	assert_true(ipv6_addr_eq(&src, &ll));
}

static void test_dad_duplicate_by_na(void **state)
{
	struct fake *f = *state;
	struct iface *ifc = &f->ifc;
	iface_poll(ifc, T0);
	tx_skip_all(f);
	/* The holder of 2001:2::2 answers our probe to all nodes. */
	uint8_t fr[256], am[6];
	struct ipv6_addr t = A6(2);
	ipv6_mcast_mac(am, &ipv6_all_nodes);
	iface_input(ifc, T0 + 10 * MS, fr, mk_na(fr, am, PEER_MAC, &t, &ipv6_all_nodes, &t, ND_NA_OVERRIDE));
	assert_int_equal(ifc->counters.nd_dad_duplicate, 1);
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_DUPLICATE);
	assert_int_equal(dad.dups, 1);
	assert_true(ipv6_addr_eq(&dad.last, &t));
	iface_poll(ifc, T0 + SEC);
	assert_int_equal(ifc->addr6[0].state, IFACE_ADDR6_PREFERRED);
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_DUPLICATE);
	tx_skip_all(f);
	/* Never used: no echo reply from it, no source for global peers, and
	 * its solicited-node group is left. */
	struct ipv6_addr peer = A6(1);
	iface_input(ifc, T0 + 2 * SEC, fr, mk_echo6(fr, &peer, &t, 7, 1, (const uint8_t *)"x", 1));
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(ifc->counters.ip6_tentative, 1);
	struct ipv6_addr src;
	assert_false(iface_ip6_source(ifc, &peer, &src));
	/* A later NS for it is not ours to answer. */
	iface_input(ifc, T0 + 2 * SEC, fr, mk_ns(fr, PEER_MAC, &peer, &t, NULL, 255));
	assert_int_equal(tx_count(f), 0);
}

static void test_dad_duplicate_by_probe_and_loop(void **state)
{
	struct fake *f = *state;
	struct iface *ifc = &f->ifc;
	iface_poll(ifc, T0);
	tx_skip_all(f);
	uint8_t fr[256];
	struct ipv6_addr t = A6(2);
	/* Our own probe, looped back: same nonce, not a duplicate. */
	iface_input(ifc, T0, fr, mk_ns(fr, OTHER_MAC, &ipv6_unspecified, &t, ifc->addr6[1].nonce, 255));
	assert_int_equal(ifc->counters.nd_dad_looped, 1);
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_TENTATIVE);
	/* An NS from a node with an address says nothing about DAD. */
	struct ipv6_addr peer = A6(1);
	iface_input(ifc, T0, fr, mk_ns(fr, PEER_MAC, &peer, &t, NULL, 255));
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_TENTATIVE);
	assert_int_equal(tx_count(f), 0);
	/* Another node's probe for the same address, at the same time. */
	const uint8_t other_nonce[6] = {1, 2, 3, 4, 5, 6};
	iface_input(ifc, T0, fr, mk_ns(fr, PEER_MAC, &ipv6_unspecified, &t, other_nonce, 255));
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_DUPLICATE);
	assert_int_equal(ifc->counters.nd_dad_duplicate, 1);
	/* A forwarded probe (hop limit 64) would have been dropped first. */
	assert_int_equal(ifc->addr6[0].state, IFACE_ADDR6_TENTATIVE);
	struct ipv6_addr ll = our_ll();
	iface_input(ifc, T0, fr, mk_ns(fr, PEER_MAC, &ipv6_unspecified, &ll, other_nonce, 64));
	assert_int_equal(ifc->counters.nd_hop_limit, 1);
	assert_int_equal(ifc->addr6[0].state, IFACE_ADDR6_TENTATIVE);
}

static void test_dad_defended(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	uint8_t fr[256];
	struct ipv6_addr t = A6(2);
	const uint8_t nonce[6] = {9, 9, 9, 9, 9, 9};
	iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_ns(fr, PEER_MAC, &ipv6_unspecified, &t, nonce, 255));
	assert_int_equal(f->ifc.counters.nd_dad_defended, 1);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	struct ipv6_hdr h;
	assert_int_equal(icmp6_type(out, len, &h), ND_NA);
	assert_true(ipv6_addr_eq(&h.dst, &ipv6_all_nodes));
	assert_true(ipv6_addr_eq(&h.src, &t));
	assert_int_equal(h.hop_limit, 255);
	struct nd_msg m;
	assert_int_equal(nd_parse(out + 14 + h.l4_off, h.l4_len, &h, &m), WIRE_OK);
	assert_int_equal(m.na_flags, ND_NA_OVERRIDE);
	assert_memory_equal(m.opts.tlla, OUR_MAC, 6);
}

/* ---- NS/NA and the cache ---- */

static void test_ns_answered_and_learned(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	uint8_t fr[256];
	struct ipv6_addr t = A6(2), peer = A6(1);
	iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_ns(fr, PEER_MAC, &peer, &t, NULL, 255));
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	assert_memory_equal(out, PEER_MAC, 6);
	struct ipv6_hdr h;
	assert_int_equal(icmp6_type(out, len, &h), ND_NA);
	assert_true(ipv6_addr_eq(&h.dst, &peer));
	assert_true(ipv6_addr_eq(&h.src, &t));
	struct nd_msg m;
	assert_int_equal(nd_parse(out + 14 + h.l4_off, h.l4_len, &h, &m), WIRE_OK);
	assert_int_equal(m.na_flags, ND_NA_SOLICITED | ND_NA_OVERRIDE);
	assert_true(ipv6_addr_eq(&m.target, &t));
	assert_memory_equal(m.opts.tlla, OUR_MAC, 6);
	unsigned i = iface_nd_find(&f->ifc, &peer);
	assert_int_not_equal(i, IFACE_ND_NONE);
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_STALE);
	assert_int_equal(f->ifc.nd[i].list, IFACE_ARP_PROBATION);
	assert_memory_equal(f->ifc.nd[i].mac, PEER_MAC, 6);
	/* An NS for someone else's address: nothing learned, nothing sent. */
	struct ipv6_addr other = A6(3), third = A6(4);
	iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_ns(fr, PEER2_MAC, &third, &other, NULL, 255));
	assert_int_equal(f->ifc.counters.nd_not_for_us, 0); /* not even our group: eth drops it */
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(iface_nd_find(&f->ifc, &third), IFACE_ND_NONE);
}

static void test_echo6_reply_and_queue(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	struct ipv6_addr us = A6(2), peer = A6(1);
	uint8_t fr[1600], data[1400];
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	/* Unknown peer: the reply waits while we solicit it. */
	iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_echo6(fr, &peer, &us, 0x1234, 5, data, sizeof(data)));
	assert_int_equal(f->ifc.counters.icmp6_echo_requests, 1);
	assert_int_equal(f->ifc.npending6, 1);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	struct ipv6_hdr h;
	assert_int_equal(icmp6_type(out, len, &h), ND_NS);
	assert_true(ipv6_is_solicited_node(&h.dst));
	assert_true(ipv6_addr_eq(&h.src, &us));
	assert_null(tx_next(f, &len));
	/* The solicited NA completes the entry and flushes the queue. */
	iface_input(&f->ifc, T0 + 2 * SEC + MS, fr,
		    mk_na(fr, OUR_MAC, PEER_MAC, &peer, &us, &peer, ND_NA_SOLICITED | ND_NA_OVERRIDE));
	assert_int_equal(f->ifc.npending6, 0);
	assert_int_equal(f->ifc.counters.nd_queue_sent, 1);
	unsigned i = iface_nd_find(&f->ifc, &peer);
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_REACHABLE);
	out = tx_next(f, &len);
	assert_non_null(out);
	assert_memory_equal(out, PEER_MAC, 6);
	assert_int_equal(icmp6_type(out, len, &h), ICMP6_ECHO_REPLY);
	assert_true(ipv6_addr_eq(&h.src, &us));
	assert_true(ipv6_addr_eq(&h.dst, &peer));
	const uint8_t *m = out + 14 + h.l4_off;
	assert_int_equal(h.l4_len, 8 + sizeof(data));
	assert_int_equal(sk_get_be16(m + 4), 0x1234);
	assert_int_equal(sk_get_be16(m + 6), 5);
	assert_memory_equal(m + 8, data, sizeof(data));
	/* Known now: the next reply goes straight out. */
	iface_input(&f->ifc, T0 + 3 * SEC, fr, mk_echo6(fr, &peer, &us, 0x1234, 6, data, 10));
	out = tx_next(f, &len);
	assert_int_equal(icmp6_type(out, len, &h), ICMP6_ECHO_REPLY);
	assert_int_equal(f->ifc.counters.icmp6_echo_replies, 2);
	/* Echo to all-nodes is not answered. */
	uint8_t msg[16];
	size_t n = icmp6_emit_echo_request(msg, sizeof(msg), 1, 1, NULL, 0, &peer, &ipv6_all_nodes);
	uint8_t am[6];
	ipv6_mcast_mac(am, &ipv6_all_nodes);
	iface_input(&f->ifc, T0 + 3 * SEC, fr, mk_ip6(fr, am, PEER_MAC, &peer, &ipv6_all_nodes, IPV6_NH_ICMPV6, 64, msg, n));
	assert_int_equal(tx_count(f), 0);
	assert_int_equal(f->ifc.counters.icmp6_echo_mcast, 1);
}

struct reply6_seen {
	unsigned n;
	uint16_t id, seq;
	size_t len;
};

static void reply6_cb(void *ctx, struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
		      uint16_t id, uint16_t seq, const uint8_t *p, size_t len)
{
	(void)ifc, (void)now, (void)src, (void)p;
	struct reply6_seen *r = ctx;
	r->n++;
	r->id = id;
	r->seq = seq;
	r->len = len;
}

static void test_ping6_send(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	struct ipv6_addr us = A6(2), peer = A6(1);
	learn_peer6(f, T0 + 2 * SEC, PEER_MAC, &peer);
	struct reply6_seen r = {0};
	iface_set_echo6_reply_handler(&f->ifc, reply6_cb, &r);
	const uint8_t data[4] = {1, 2, 3, 4};
	assert_int_equal(icmp6_ping_send(&f->ifc, T0 + 2 * SEC, &peer, 77, 3, data, 4), 0);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	struct ipv6_hdr h;
	assert_int_equal(icmp6_type(out, len, &h), ICMP6_ECHO_REQUEST);
	/* The peer's answer, made from our request. */
	uint8_t fr[256], msg[64];
	size_t n = icmp6_emit_echo_reply(msg, sizeof(msg), out + 14 + h.l4_off, h.l4_len, &peer, &us);
	assert_int_equal(n, 12);
	iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_ICMPV6, 64, msg, n));
	assert_int_equal(r.n, 1);
	assert_int_equal(r.id, 77);
	assert_int_equal(r.seq, 3);
	assert_int_equal(r.len, 4);
	/* A bad checksum is counted and not delivered. */
	msg[2] ^= 1;
	iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_ICMPV6, 64, msg, n));
	assert_int_equal(r.n, 1);
	assert_int_equal(f->ifc.counters.icmp6_csum, 1);
	/* Too big for the MTU, and to ourselves. */
	static uint8_t big[1500];
	assert_int_equal(icmp6_ping_send(&f->ifc, T0, &peer, 1, 1, big, 1453), -2);
	assert_int_equal(icmp6_ping_send(&f->ifc, T0, &us, 1, 1, NULL, 0), -1);
}

/* 10,000 NS from random sources: the cache stays at its size, churns
 * probation only, and a peer our traffic uses stays. */
static void test_nd_flood_bounded(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	f->drain = true;
	struct ipv6_addr us = A6(2), peer = A6(1);
	learn_peer6(f, T0 + 2 * SEC, PEER_MAC, &peer);
	uint8_t mac[6];
	assert_true(iface_nd_lookup(&f->ifc, T0 + 2 * SEC, &peer, mac)); /* now ACTIVE */
	tx_skip_all(f);
	uint8_t fr[256];
	uint32_t x = 1;
	for (unsigned k = 0; k < 10000; k++) {
		x = x * 1103515245u + 12345u;
		struct ipv6_addr src = A6(0);
		sk_put_be32(src.b + 8, x);
		sk_put_be32(src.b + 12, k + 100);
		uint8_t m6[6] = {0x02, 0x10, (uint8_t)(x >> 24), (uint8_t)(x >> 16), (uint8_t)(k >> 8), (uint8_t)k};
		iface_input(&f->ifc, T0 + 3 * SEC, fr, mk_ns(fr, m6, &src, &us, NULL, 255));
		assert_true(f->ifc.nd_used <= IFACE_ND_SLOTS);
		tx_skip_all(f);
	}
	assert_int_equal(f->ifc.nd_used, IFACE_ND_SLOTS);
	assert_int_equal(f->ifc.counters.nd_ns_rx, 10001);
	assert_int_equal(f->ifc.counters.nd_na_tx, 10001);
	assert_true(f->ifc.counters.nd_evictions >= 10000 - IFACE_ND_SLOTS);
	unsigned i = iface_nd_find(&f->ifc, &peer);
	assert_int_not_equal(i, IFACE_ND_NONE);
	assert_int_equal(f->ifc.nd[i].list, IFACE_ARP_ACTIVE);
	/* LRU: the newest sources are there, the oldest gone. */
	struct ipv6_addr first = A6(0);
	x = 1103515245u + 12345u;
	sk_put_be32(first.b + 8, x);
	sk_put_be32(first.b + 12, 100);
	assert_int_equal(iface_nd_find(&f->ifc, &first), IFACE_ND_NONE);
	/* 10,000 unsolicited NA for targets we never asked for: no entry. */
	unsigned before = f->ifc.nd_used;
	for (unsigned k = 0; k < 10000; k++) {
		struct ipv6_addr t = A6(0);
		sk_put_be32(t.b + 12, 0x10000 + k);
		iface_input(&f->ifc, T0 + 4 * SEC, fr, mk_na(fr, OUR_MAC, PEER2_MAC, &t, &us, &t, ND_NA_OVERRIDE));
	}
	assert_int_equal(f->ifc.nd_used, before);
	assert_int_equal(f->ifc.counters.nd_na_no_entry, 10000);
	assert_int_equal(tx_count(f), 0);
}

static void test_ns_ratelimit_and_queue_timeout(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	struct ipv6_addr peer = A6(1);
	sk_time_ns t = T0 + 2 * SEC;
	assert_int_equal(icmp6_ping_send(&f->ifc, t, &peer, 1, 1, NULL, 0), 0);
	assert_int_equal(icmp6_ping_send(&f->ifc, t + 100 * MS, &peer, 1, 2, NULL, 0), 0);
	assert_int_equal(f->ifc.counters.nd_ns_tx, 1);
	assert_int_equal(f->ifc.counters.nd_ns_ratelimited, 1);
	assert_int_equal(f->ifc.npending6, 2);
	assert_int_equal(iface_next_deadline(&f->ifc), t + SEC);
	iface_poll(&f->ifc, t + SEC);
	assert_int_equal(f->ifc.counters.nd_ns_tx, 2);
	iface_poll(&f->ifc, t + 2 * SEC);
	assert_int_equal(f->ifc.counters.nd_ns_tx, 3);
	iface_poll(&f->ifc, t + 3 * SEC + 100 * MS);
	assert_int_equal(f->ifc.npending6, 0);
	assert_int_equal(f->ifc.counters.nd_queue_timeout, 2);
	/* The queue has a bound. */
	for (unsigned k = 0; k < IFACE_ND_PENDING + 3; k++)
		icmp6_ping_send(&f->ifc, t + 4 * SEC, &peer, 1, (uint16_t)k, NULL, 0);
	assert_int_equal(f->ifc.npending6, IFACE_ND_PENDING);
	assert_int_equal(f->ifc.counters.nd_queue_full, 3);
}

static void test_stale_probes_then_incomplete(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	struct ipv6_addr us = A6(2), peer = A6(1);
	uint8_t fr[256], mac[6];
	sk_time_ns t = T0 + 2 * SEC;
	assert_int_equal(icmp6_ping_send(&f->ifc, t, &peer, 1, 1, NULL, 0), 0);
	iface_input(&f->ifc, t, fr, mk_na(fr, OUR_MAC, PEER_MAC, &peer, &us, &peer, ND_NA_SOLICITED | ND_NA_OVERRIDE));
	tx_skip_all(f);
	unsigned i = iface_nd_find(&f->ifc, &peer);
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_REACHABLE);
	assert_true(iface_nd_lookup(&f->ifc, t + 29 * SEC, &peer, mac));
	assert_int_equal(tx_count(f), 0);
	/* Past REACHABLE_TIME: STALE, still used; the first probe waits
	 * DELAY_FIRST_PROBE_TIME (RFC 4861 7.3.3), then unicast NS. */
	t += 31 * SEC;
	assert_true(iface_nd_lookup(&f->ifc, t, &peer, mac));
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_STALE);
	assert_int_equal(tx_count(f), 0);
	t += IFACE_ND_DELAY_NS;
	for (unsigned p = 0; p < IFACE_ND_MAX_PROBES; p++) {
		assert_true(iface_nd_lookup(&f->ifc, t + p * SEC, &peer, mac));
		assert_int_equal(f->ifc.nd[i].state, IFACE_ND_STALE);
		size_t len;
		const uint8_t *out = tx_next(f, &len);
		assert_non_null(out);
		struct ipv6_hdr h;
		assert_int_equal(icmp6_type(out, len, &h), ND_NS);
		assert_true(ipv6_addr_eq(&h.dst, &peer));
		assert_memory_equal(out, PEER_MAC, 6);
		/* within the second: no second probe */
		assert_true(iface_nd_lookup(&f->ifc, t + p * SEC + 10 * MS, &peer, mac));
		assert_int_equal(tx_count(f), 0);
	}
	/* Unanswered: INCOMPLETE again. */
	assert_false(iface_nd_lookup(&f->ifc, t + IFACE_ND_MAX_PROBES * SEC, &peer, mac));
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_INCOMPLETE);
	assert_int_equal(f->ifc.counters.nd_expired, 1);
	/* An NA without override and another MAC does not take over a known entry. */
	iface_input(&f->ifc, t, fr, mk_na(fr, OUR_MAC, PEER_MAC, &peer, &us, &peer, ND_NA_SOLICITED));
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_REACHABLE);
	iface_input(&f->ifc, t, fr, mk_na(fr, OUR_MAC, PEER2_MAC, &peer, &us, &peer, ND_NA_SOLICITED));
	assert_memory_equal(f->ifc.nd[i].mac, PEER_MAC, 6);
	assert_int_equal(f->ifc.nd[i].state, IFACE_ND_STALE);
	assert_int_equal(f->ifc.counters.nd_na_ignored, 1);
}

/* ---- drops by reason, errors ---- */

static void test_drops_by_reason(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	struct iface_counters *c = &f->ifc.counters;
	struct ipv6_addr us = A6(2), peer = A6(1), other = A6(9);
	uint8_t fr[256], l4[64] = {0};
	size_t n;
	/* a fragment (offset 8) */
	l4[0] = IPV6_NH_ICMPV6;
	sk_put_be16(l4 + 2, 8);
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_FRAGMENT, 64, l4, 16);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_frag_dropped, 1);
	/* routing type 0, no segments left */
	memset(l4, 0, sizeof(l4));
	l4[0] = IPV6_NH_NONE;
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_ROUTING, 64, l4, 8);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_route_dropped, 1);
	/* hop-by-hop after a destination options header */
	memset(l4, 0, sizeof(l4));
	l4[0] = IPV6_NH_HOPOPTS;
	l4[2] = IPV6_OPT_PADN;
	l4[3] = 4;
	l4[8] = IPV6_NH_NONE;
	l4[10] = IPV6_OPT_PADN;
	l4[11] = 4;
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_DSTOPTS, 64, l4, 16);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_bad_ext, 1);
	/* truncated, wrong version, not for us, multicast source */
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_NONE, 64, l4, 0);
	iface_input(&f->ifc, T0, fr, 14 + 30);
	assert_int_equal(c->ip6_truncated, 1);
	fr[14] = 0x45;
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_version, 1);
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &other, IPV6_NH_NONE, 64, l4, 0);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_not_for_us, 1);
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &ipv6_all_nodes, &us, IPV6_NH_NONE, 64, l4, 0);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_bad_addr, 1);
	/* from our own address */
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &us, &us, IPV6_NH_NONE, 64, l4, 0);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->ip6_bad_src, 1);
	/* ICMPv6 shorter than its header; an ND message with a zero-length option */
	n = mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_ICMPV6, 64, l4, 4);
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->icmp6_truncated, 1);
	uint8_t m[64];
	size_t mn = nd_emit_ns(m, sizeof(m), &us, PEER_MAC, NULL, &peer, &us);
	m[ND_NS_LEN + 1] = 0;
	icmp6_seal(m, mn, &peer, &us);
	iface_input(&f->ifc, T0, fr, mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_ICMPV6, 255, m, mn));
	assert_int_equal(c->nd_bad_opt, 1);
	/* a group we did not join (link layer) */
	uint8_t gm[6] = {0x33, 0x33, 0, 0, 0, 0x42};
	n = mk_ip6(fr, gm, PEER_MAC, &peer, &us, IPV6_NH_NONE, 64, l4, 0);
	uint64_t mc = c->eth_multicast;
	iface_input(&f->ifc, T0, fr, n);
	assert_int_equal(c->eth_multicast, mc + 1);
	/* Of all these, only the misplaced hop-by-hop header gets an answer
	 * (RFC 8200 4: parameter problem, unrecognised next header), which
	 * waits for the peer's address. */
	assert_int_equal(c->icmp6_errors_tx, 1);
	assert_int_equal(f->ifc.npending6, 1);
	assert_int_equal(c->nd_ns_tx, 1);
}

/* UDP over IPv6 to a port nobody bound: port unreachable, through the bucket. */
static void test_errors_ratelimited(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	f->drain = true;
	struct ipv6_addr us = A6(2), peer = A6(1);
	learn_peer6(f, T0 + 2 * SEC, PEER_MAC, &peer);
	uint8_t fr[256], seg[16] = {0};
	assert_int_equal(udp_emit6(seg, sizeof(seg), 9, 7, peer.b, us.b, 8), 16);
	for (unsigned k = 0; k < 100; k++)
		iface_input(&f->ifc, T0 + 2 * SEC, fr, mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_UDP, 64, seg, 16));
	assert_int_equal(f->ifc.counters.udp_no_port, 100);
	assert_int_equal(f->ifc.counters.icmp6_errors_tx, IFACE_ICMP_BURST);
	assert_int_equal(f->ifc.counters.icmp6_ratelimited, 100 - IFACE_ICMP_BURST);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	(void)out;
	/* a second later there is credit again */
	iface_input(&f->ifc, T0 + 3 * SEC, fr, mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_UDP, 64, seg, 16));
	assert_int_equal(f->ifc.counters.icmp6_errors_tx, IFACE_ICMP_BURST + 1);
}

/* An RA from fe80::1 (PEER_MAC) with one autonomous on-link /64,
 * 2001:2:0:1::/64, and the given lifetimes (seconds). */
static void send_ra(struct fake *f, sk_time_ns now, uint16_t router_s, uint32_t valid_s,
		    uint32_t preferred_s)
{
	struct ipv6_addr rtr = {{0xfe, 0x80, [15] = 1}};
	uint8_t ra[64] = {ND_RA, 0, 0, 0, 64, 0};
	sk_put_be16(ra + 6, router_s);
	uint8_t *o = ra + ND_RA_LEN;
	o[0] = ND_OPT_SLLA, o[1] = 1;
	memcpy(o + 2, PEER_MAC, 6);
	o += 8;
	o[0] = ND_OPT_PREFIX, o[1] = 4, o[2] = 64, o[3] = ND_PREFIX_ONLINK | ND_PREFIX_AUTO;
	sk_put_be32(o + 4, valid_s);
	sk_put_be32(o + 8, preferred_s);
	struct ipv6_addr pfx = {{0x20, 0x01, 0, 2, 0, 0, 0, 1}};
	memcpy(o + 16, pfx.b, 16);
	size_t n = ND_RA_LEN + 8 + 32;
	icmp6_seal(ra, n, &rtr, &ipv6_all_nodes);
	uint8_t fr[256], am[6];
	ipv6_mcast_mac(am, &ipv6_all_nodes);
	iface_input(&f->ifc, now, fr, mk_ip6(fr, am, PEER_MAC, &rtr, &ipv6_all_nodes, IPV6_NH_ICMPV6, 255, ra, n));
}

/* A registered IPv6 protocol (TCP, as tcp_iface.c registers it): unicast
 * to us reaches the handler with both addresses; to a group it does not;
 * iface_ip6_output sends from the source it is given, only one of ours;
 * without a handler TCP is a closed port again. */
struct l4_seen {
	unsigned calls;
	struct ipv6_addr src, dst;
	size_t len;
	uint8_t first;
};
static struct l4_seen l4s;

static void tcp6_cb(void *ctx, struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
		    const struct ipv6_addr *dst, const uint8_t *l4, size_t len)
{
	(void)ctx, (void)ifc, (void)now;
	l4s.calls++;
	l4s.src = *src;
	l4s.dst = *dst;
	l4s.len = len;
	l4s.first = len ? l4[0] : 0;
}

static void test_proto6_handler_and_output(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	f->drain = true;
	memset(&l4s, 0, sizeof(l4s));
	struct ipv6_addr us = A6(2), peer = A6(1), other = A6(3);
	learn_peer6(f, T0 + 2 * SEC, PEER_MAC, &peer);
	tx_skip_all(f);
	struct iface_counters *c = &f->ifc.counters;
	assert_int_equal(iface_set_proto6_handler(&f->ifc, IPV6_NH_UDP, tcp6_cb, NULL), -1);
	assert_int_equal(iface_set_proto6_handler(&f->ifc, IPV6_NH_ICMPV6, tcp6_cb, NULL), -1);
	assert_int_equal(iface_set_proto6_handler(&f->ifc, IPV6_NH_TCP, tcp6_cb, NULL), 0);
	uint8_t fr[256], seg[20] = {0x9c, 0x40, 0, 80};
	iface_input(&f->ifc, T0 + 2 * SEC, fr,
		    mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_TCP, 64, seg, 20));
	assert_int_equal(l4s.calls, 1);
	assert_true(ipv6_addr_eq(&l4s.src, &peer) && ipv6_addr_eq(&l4s.dst, &us));
	assert_int_equal(l4s.len, 20);
	assert_int_equal(l4s.first, 0x9c);
	/* To all-nodes: not TCP's. */
	uint8_t gm[6];
	ipv6_mcast_mac(gm, &ipv6_all_nodes);
	iface_input(&f->ifc, T0 + 2 * SEC, fr,
		    mk_ip6(fr, gm, PEER_MAC, &peer, &ipv6_all_nodes, IPV6_NH_TCP, 64, seg, 20));
	assert_int_equal(l4s.calls, 1);
	assert_int_equal(c->ip6_l4_mcast, 1);
	assert_int_equal(c->icmp6_errors_tx, 0);
	/* Output from our address, to the learned peer: one frame. */
	static const uint8_t payload[24] = {1, 2, 3, 4, 5};
	assert_int_equal(iface_ip6_output(&f->ifc, T0 + 2 * SEC, &us, &peer, IPV6_NH_TCP, payload,
					  sizeof(payload)),
			 0);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	struct ipv6_hdr h;
	assert_int_equal(ipv6_parse(out + 14, len - 14, &h), WIRE_OK);
	assert_int_equal(h.proto, IPV6_NH_TCP);
	assert_true(ipv6_addr_eq(&h.src, &us) && ipv6_addr_eq(&h.dst, &peer));
	assert_int_equal(h.l4_len, sizeof(payload));
	assert_memory_equal(out + 14 + h.l4_off, payload, sizeof(payload));
	/* Not from an address we do not hold (the checksum would lie). */
	uint64_t nr = c->ip6_no_route;
	assert_int_equal(iface_ip6_output(&f->ifc, T0 + 2 * SEC, &other, &peer, IPV6_NH_TCP, payload,
					  sizeof(payload)),
			 -1);
	assert_int_equal(c->ip6_no_route, nr + 1);
	assert_null(tx_next(f, &len));
	/* To a neighbour not yet resolved: queued, one buffer (tcp_iface.c
	 * reads nslots on both paths; the first SYN of an active open over
	 * IPv6 goes this way). */
	struct ipv6_addr fresh = A6(5);
	struct iface_ip6_out o;
	memset(&o, 0xa5, sizeof(o));
	assert_int_equal(iface_ip6_begin_from(&f->ifc, T0 + 2 * SEC, &us, &fresh, 20, &o), 0);
	assert_null(o.frame);
	assert_int_equal(o.nslots, 1);
	iface_ip6_finish(&f->ifc, T0 + 2 * SEC, &o, IPV6_NH_TCP, 20);
	/* The vnet path never queues: no offloads on this device. */
	assert_int_equal(iface_ip6_begin_vnet(&f->ifc, T0 + 2 * SEC, &us, &peer, 20, &o), -2);
	tx_skip_all(f);
	/* Handler gone: a closed port again. */
	assert_int_equal(iface_set_proto6_handler(&f->ifc, IPV6_NH_TCP, NULL, NULL), 0);
	iface_input(&f->ifc, T0 + 3 * SEC, fr,
		    mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_TCP, 64, seg, 20));
	assert_int_equal(l4s.calls, 1);
	assert_int_equal(c->icmp6_errors_tx, 1);
}

/* UDP over IPv6: a bound port gets the datagram, the reply leaves from the
 * address asked, checksummed over the v6 pseudo header; a zero checksum
 * is refused (RFC 8200 8.1); a group destination is not served. */
static void udp6_echo_cb(void *ctx, struct iface *ifc, sk_time_ns now, const struct ipv6_addr *src,
			 const struct ipv6_addr *dst, uint16_t sport, uint16_t dport,
			 const uint8_t *data, size_t len)
{
	(void)ctx;
	l4s.calls++;
	assert_int_equal(udp6_sendto(ifc, now, dport, dst, src, sport, data, len), 0);
}

static void test_udp6_echo(void **state)
{
	struct fake *f = *state;
	pass_dad(f);
	f->drain = true;
	memset(&l4s, 0, sizeof(l4s));
	struct ipv6_addr us = A6(2), peer = A6(1);
	learn_peer6(f, T0 + 2 * SEC, PEER_MAC, &peer);
	tx_skip_all(f);
	struct iface_counters *c = &f->ifc.counters;
	assert_int_equal(udp6_bind(&f->ifc, 7, udp6_echo_cb, NULL), 0);
	assert_int_equal(udp6_bind(&f->ifc, 7, udp6_echo_cb, NULL), -1);
	uint8_t fr[256], seg[64] = {0};
	memcpy(seg + 8, "ping over v6", 12);
	assert_int_equal(udp_emit6(seg, sizeof(seg), 5000, 7, peer.b, us.b, 12), 20);
	iface_input(&f->ifc, T0 + 2 * SEC, fr,
		    mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_UDP, 64, seg, 20));
	assert_int_equal(l4s.calls, 1);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	struct ipv6_hdr h;
	assert_int_equal(ipv6_parse(out + 14, len - 14, &h), WIRE_OK);
	assert_int_equal(h.proto, IPV6_NH_UDP);
	assert_true(ipv6_addr_eq(&h.src, &us) && ipv6_addr_eq(&h.dst, &peer));
	struct udp_hdr uh;
	assert_int_equal(udp_parse6(out + 14 + h.l4_off, h.l4_len, us.b, peer.b, &uh), WIRE_OK);
	assert_int_equal(uh.sport, 7);
	assert_int_equal(uh.dport, 5000);
	assert_memory_equal(out + 14 + h.l4_off + 8, "ping over v6", 12);
	/* Zero checksum: dropped and counted, no answer. */
	sk_put_be16(seg + 6, 0);
	iface_input(&f->ifc, T0 + 2 * SEC, fr,
		    mk_ip6(fr, OUR_MAC, PEER_MAC, &peer, &us, IPV6_NH_UDP, 64, seg, 20));
	assert_int_equal(c->udp_csum, 1);
	/* To all-nodes: not served. */
	uint8_t gm[6];
	ipv6_mcast_mac(gm, &ipv6_all_nodes);
	assert_int_equal(udp_emit6(seg, sizeof(seg), 5000, 7, peer.b, ipv6_all_nodes.b, 12), 20);
	iface_input(&f->ifc, T0 + 2 * SEC, fr,
		    mk_ip6(fr, gm, PEER_MAC, &peer, &ipv6_all_nodes, IPV6_NH_UDP, 64, seg, 20));
	assert_int_equal(c->ip6_l4_mcast, 1);
	assert_int_equal(l4s.calls, 1);
	assert_null(tx_next(f, &len));
	udp6_unbind(&f->ifc, 7);
	assert_int_equal(udp6_bind(&f->ifc, 7, udp6_echo_cb, NULL), 0);
}

/* --ip6 auto: RS once the link-local address is usable, an address from
 * the RA's prefix (tentative, then usable), the RA's router as gw6. */
static void test_slaac(void **state)
{
	(void)state;
	struct iface_config cfg = {.ip6 = true, .ip6_slaac = true};
	struct fake *f = fake_new_cfg(&cfg);
	struct iface *ifc = &f->ifc;
	assert_int_equal(ifc->naddr6, 1);
	iface_poll(ifc, T0);
	tx_skip_all(f); /* MLD, DAD probe */
	iface_poll(ifc, T0 + SEC);
	size_t len;
	const uint8_t *out = tx_next(f, &len);
	assert_non_null(out);
	struct ipv6_hdr h;
	assert_int_equal(icmp6_type(out, len, &h), ND_RS);
	assert_true(ipv6_addr_eq(&h.dst, &ipv6_all_routers));
	struct ipv6_addr ll = our_ll();
	assert_true(ipv6_addr_eq(&h.src, &ll));
	assert_int_equal(iface_next_deadline(ifc), T0 + SEC + IFACE_RS_INTERVAL_NS);
	/* The router answers. */
	struct ipv6_addr rtr = {{0xfe, 0x80, [15] = 1}};
	struct ipv6_addr pfx = {{0x20, 0x01, 0, 2, 0, 0, 0, 1}};
	send_ra(f, T0 + 2 * SEC, 1800, 86400, 14400);
	assert_int_equal(ifc->counters.nd_ra_rx, 1);
	assert_int_equal(ifc->counters.nd_slaac_addrs, 1);
	assert_int_equal(ifc->counters.nd_router_learned, 1);
	assert_true(ipv6_addr_eq(&ifc->gw6, &rtr));
	assert_int_equal(ifc->naddr6, 2);
	struct ipv6_addr want = pfx;
	ipv6_iid_from_mac(want.b + 8, OUR_MAC);
	assert_true(ipv6_addr_eq(&ifc->addr6[1].a, &want));
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_TENTATIVE);
	/* The same RA again forms nothing new; no more RS after an RA. */
	send_ra(f, T0 + 2 * SEC, 1800, 86400, 14400);
	assert_int_equal(ifc->naddr6, 2);
	iface_poll(ifc, T0 + 2 * SEC);
	iface_poll(ifc, T0 + 3 * SEC);
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_PREFERRED);
	iface_poll(ifc, T0 + 10 * SEC);
	assert_int_equal(ifc->counters.nd_rs_tx, 1);
	/* Off-link destinations go to the router now. */
	struct ipv6_addr far = {{0x20, 0x01, 0, 2, 0, 9, [15] = 1}}, src;
	assert_true(iface_ip6_source(ifc, &far, &src));
	assert_true(ipv6_addr_eq(&src, &want));
	tx_skip_all(f);
	assert_int_equal(icmp6_ping_send(ifc, T0 + 10 * SEC, &far, 1, 1, NULL, 0), 0);
	out = tx_next(f, &len);
	assert_memory_equal(out, PEER_MAC, 6); /* the router's, learned from its SLLA */
	assert_int_equal(icmp6_type(out, len, &h), ICMP6_ECHO_REQUEST);
	assert_true(ipv6_addr_eq(&h.dst, &far));
	free(f->mem);
	free(f);
}

/* RFC 4862 5.5.3-5.5.4 and RFC 4861 6.3.4: the SLAAC address is deprecated
 * when its preferred lifetime ends (still the source if nothing else is),
 * a shorter valid lifetime does not cut the last two hours, an RA renews
 * the preferred one, and the address goes when the valid one ends; the
 * router goes when its lifetime does.  Each is the iface's next deadline. */
static void test_slaac_lifetimes(void **state)
{
	(void)state;
	struct iface_config cfg = {.ip6 = true, .ip6_slaac = true};
	struct fake *f = fake_new_cfg(&cfg);
	struct iface *ifc = &f->ifc;
	iface_poll(ifc, T0);
	iface_poll(ifc, T0 + SEC);
	tx_skip_all(f);
	send_ra(f, T0 + 2 * SEC, 30, 60, 20);
	assert_int_equal(ifc->naddr6, 2);
	assert_true(ifc->gw6_from_ra);
	iface_poll(ifc, T0 + 2 * SEC);
	iface_poll(ifc, T0 + 3 * SEC);
	assert_int_equal(ifc->addr6[1].state, IFACE_ADDR6_PREFERRED);
	assert_int_equal(iface_next_deadline(ifc), T0 + 22 * SEC); /* preferred */
	struct ipv6_addr far = {{0x20, 0x01, 0, 2, 0, 9, [15] = 1}}, src;
	iface_poll(ifc, T0 + 22 * SEC);
	assert_int_equal(ifc->counters.nd_slaac_deprecated, 1);
	assert_true(ifc->addr6[1].deprecated);
	assert_true(iface_ip6_source(ifc, &far, &src)); /* the only global one */
	assert_true(ipv6_addr_eq(&src, &ifc->addr6[1].a));
	assert_int_equal(iface_next_deadline(ifc), T0 + 32 * SEC); /* the router */
	iface_poll(ifc, T0 + 32 * SEC);
	assert_int_equal(ifc->counters.nd_router_expired, 1);
	assert_true(ipv6_is_unspecified(&ifc->gw6));
	assert_false(ifc->gw6_from_ra);
	/* 22 s left: an RA saying 10 s leaves it (two-hour rule); its
	 * preferred 5 s un-deprecates it. */
	send_ra(f, T0 + 40 * SEC, 0, 10, 5);
	assert_int_equal(ifc->counters.nd_slaac_refreshed, 1);
	assert_int_equal(ifc->addr6[1].valid_until, T0 + 62 * SEC);
	assert_int_equal(ifc->addr6[1].preferred_until, T0 + 45 * SEC);
	assert_false(ifc->addr6[1].deprecated);
	assert_true(ipv6_is_unspecified(&ifc->gw6)); /* lifetime 0: not taken */
	iface_poll(ifc, T0 + 45 * SEC);
	assert_int_equal(ifc->counters.nd_slaac_deprecated, 2);
	uint64_t reports = ifc->counters.icmp6_mld_reports_tx;
	tx_skip_all(f);
	iface_poll(ifc, T0 + 62 * SEC);
	assert_int_equal(ifc->counters.nd_slaac_expired, 1);
	assert_int_equal(ifc->naddr6, 1);
	assert_false(iface_ip6_source(ifc, &far, &src));
	/* Its solicited-node group is the link-local's too: no leave. */
	assert_int_equal(ifc->counters.icmp6_mld_reports_tx, reports);
	assert_int_equal(iface_next_deadline(ifc), SK_TIME_NEVER);
	/* A new RA forms it again; with a day left, an RA (forged, say)
	 * saying 0 s cuts it to two hours, not to nothing. */
	send_ra(f, T0 + 70 * SEC, 0, 86400, 86400);
	assert_int_equal(ifc->naddr6, 2);
	assert_int_equal(ifc->counters.nd_slaac_addrs, 2);
	send_ra(f, T0 + 80 * SEC, 0, 0, 0);
	assert_int_equal(ifc->naddr6, 2);
	assert_int_equal(ifc->addr6[1].valid_until, T0 + 80 * SEC + 7200 * SEC);
	assert_int_equal(ifc->addr6[1].preferred_until, T0 + 80 * SEC);
	/* Infinite lifetimes never expire. */
	send_ra(f, T0 + 90 * SEC, 0, 0xffffffffu, 0xffffffffu);
	assert_int_equal(ifc->addr6[1].valid_until, SK_TIME_NEVER);
	assert_int_equal(ifc->addr6[1].preferred_until, SK_TIME_NEVER);
	/* A preferred lifetime over the valid one: the option is ignored. */
	send_ra(f, T0 + 91 * SEC, 0, 100, 200);
	assert_int_equal(ifc->counters.nd_slaac_refreshed, 3);
	free(f->mem);
	free(f);
}

static void test_v6_off(void **state)
{
	struct fake *f = *state; /* setup: IPv4 only */
	struct ipv6_addr peer = A6(1), us = A6(2);
	uint8_t fr[128];
	iface_input(&f->ifc, T0, fr, mk_echo6(fr, &peer, &us, 1, 1, NULL, 0));
	assert_int_equal(f->ifc.counters.eth_v6_off, 1);
	assert_int_equal(icmp6_ping_send(&f->ifc, T0, &peer, 1, 1, NULL, 0), -4);
	assert_int_equal(iface_next_deadline(&f->ifc), SK_TIME_NEVER);
	assert_int_equal(tx_count(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dad_ok, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_dad_duplicate_by_na, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_dad_duplicate_by_probe_and_loop, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_dad_defended, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_ns_answered_and_learned, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_echo6_reply_and_queue, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_ping6_send, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_nd_flood_bounded, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_ns_ratelimit_and_queue_timeout, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_stale_probes_then_incomplete, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_drops_by_reason, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_errors_ratelimited, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_proto6_handler_and_output, setup6, teardown),
		cmocka_unit_test_setup_teardown(test_udp6_echo, setup6, teardown),
		cmocka_unit_test(test_slaac),
		cmocka_unit_test(test_slaac_lifetimes),
		cmocka_unit_test_setup_teardown(test_v6_off, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
