/* tcp6_test.c — the TCP engine over IPv6: the same engine and demux as
 * IPv4 (tcp_test.c), so these cover what differs: the pseudo header, the
 * MSS (1500 - 40 - 20), replies going out on the family they came in on
 * (RST, challenge ACK, SYN cookies), one listener for both families, and
 * the v4-mapped aliasing guard.  Explicit time, tcp_check after each step. */
#include "net/tcp_testlib.h"
#include "wire/icmp6.h"

#define PEER SK_IP4(198, 18, 0, 9)
#define PPORT 40000
#define LPORT 80
#define PISS 1000u

static struct tcp_opts syn_opts(uint32_t tsval)
{
	struct tcp_opts o;
	memset(&o, 0, sizeof(o));
	o.has_mss = true;
	o.mss = 1460; /* what a Linux peer on a 1500 link offers over IPv4; over IPv6 it says 1440 */
	o.has_ws = true;
	o.ws = 7;
	o.sack_perm = true;
	o.has_ts = true;
	o.ts_val = tsval;
	return o;
}

static struct sk_addr peer6(void)
{
	return tip6(PEER); /* 2001:2::9 */
}

static void test_v6_handshake_mss_and_accept(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	int ls = tcp_listen(&n->st, LPORT, 0);
	struct sk_addr p = peer6();
	struct tcp_opts o = syn_opts(5000);
	tnode_inject6(n, 0, &p, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, &o, NULL, 0);
	tcp_poll(&n->st, 0);
	assert_int_equal(tcp_check(&n->st), 0);
	assert_int_equal(n->nseg, 1);
	struct cap_seg *c = &n->segs[0];
	assert_true(c->v6);
	assert_true(sk_addr_eq(&c->dst6, &p));
	assert_int_equal(c->h.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(c->h.ack, PISS + 1);
	assert_true(c->h.opts.has_mss && c->h.opts.mss == 1440); /* 1500 - 40 - 20 */
	struct tcp_opts a = {.has_ts = true, .ts_val = 5001, .ts_ecr = c->h.opts.ts_val};
	tnode_inject6(n, MS, &p, PPORT, LPORT, TCP_ACK, PISS + 1, c->h.seq + 1, 1000, &a, NULL, 0);
	struct sk_addr ra;
	uint16_t rp;
	int s = tcp_accept(&n->st, ls, &ra, &rp);
	assert_true(s >= 0);
	assert_false(sk_addr_is_v4(&ra));
	assert_true(sk_addr_eq(&ra, &p));
	assert_int_equal(rp, PPORT);
	struct tcp_info in;
	assert_int_equal(tcp_info(&n->st, s, &in), 0);
	assert_int_equal(in.state, TCP_ESTABLISHED);
	assert_true(sk_addr_eq(&in.laddr, &n->ip6));
	/* The peer offered 1460 (more than fits): capped at ours, 1440. */
	assert_int_equal(in.snd_mss, 1440 - 12);
	/* Data: full segments of 1428 bytes, all over IPv6. */
	static uint8_t big[8000];
	memset(big, 'x', sizeof(big));
	tnode_clear(n);
	assert_int_equal(tcp_send(&n->st, s, big, sizeof(big)), (int)sizeof(big));
	tcp_poll(&n->st, 2 * MS);
	assert_int_equal(tcp_check(&n->st), 0);
	assert_true(n->nseg >= 5);
	for (size_t i = 0; i < n->nseg; i++) {
		assert_true(n->segs[i].v6);
		assert_true(n->segs[i].h.payload_len <= 1440 - 12);
	}
	assert_int_equal(n->segs[0].h.payload_len, 1440 - 12);
	tnode_free(n);
}

/* One listener, both families: a v4 and a v6 SYN with the same ports are
 * two connections, each answered on its own family with its own MSS. */
static void test_v6_listener_takes_both_families(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	int ls = tcp_listen(&n->st, LPORT, 0);
	struct sk_addr p = peer6();
	struct tcp_opts o = syn_opts(1);
	tnode_inject(n, 0, PEER, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, &o, NULL, 0);
	tnode_inject6(n, 0, &p, PPORT, LPORT, TCP_SYN, PISS + 7, 0, 65535, &o, NULL, 0);
	tcp_poll(&n->st, 0);
	assert_int_equal(tcp_check(&n->st), 0);
	assert_int_equal(n->nseg, 2);
	struct cap_seg *c4 = n->segs[0].v6 ? &n->segs[1] : &n->segs[0];
	struct cap_seg *c6 = n->segs[0].v6 ? &n->segs[0] : &n->segs[1];
	assert_false(c4->v6);
	assert_true(c6->v6);
	assert_int_equal(c4->dst, PEER);
	assert_int_equal(c4->h.ack, PISS + 1);
	assert_int_equal(c6->h.ack, PISS + 8);
	assert_int_equal(c4->h.opts.mss, 1460);
	assert_int_equal(c6->h.opts.mss, 1440);
	struct tcp_opts a4 = {.has_ts = true, .ts_val = 2, .ts_ecr = c4->h.opts.ts_val};
	struct tcp_opts a6 = {.has_ts = true, .ts_val = 2, .ts_ecr = c6->h.opts.ts_val};
	uint32_t s4 = c4->h.seq, s6 = c6->h.seq;
	tnode_inject6(n, MS, &p, PPORT, LPORT, TCP_ACK, PISS + 8, s6 + 1, 1000, &a6, "six", 3);
	tnode_inject(n, MS, PEER, PPORT, LPORT, TCP_ACK, PISS + 1, s4 + 1, 1000, &a4, "four", 4);
	struct sk_addr ra;
	int x = tcp_accept(&n->st, ls, &ra, NULL);
	assert_true(x >= 0);
	assert_false(sk_addr_is_v4(&ra));
	int y = tcp_accept(&n->st, ls, &ra, NULL);
	assert_true(y >= 0);
	assert_true(sk_addr_is_v4(&ra));
	assert_int_equal(sk_addr_ip4(&ra), PEER);
	char b[8];
	assert_int_equal(tcp_recv(&n->st, x, b, sizeof(b)), 3);
	assert_memory_equal(b, "six", 3);
	assert_int_equal(tcp_recv(&n->st, y, b, sizeof(b)), 4);
	assert_memory_equal(b, "four", 4);
	assert_int_equal(STAT(n, established), 2);
	tnode_free(n);
}

static void test_v6_closed_port_rst(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	struct sk_addr p = peer6();
	tnode_inject6(n, 0, &p, PPORT, 81, TCP_SYN, PISS, 0, 65535, NULL, NULL, 0);
	struct cap_seg *c = tnode_last(n);
	assert_true(c->v6 && sk_addr_eq(&c->dst6, &p));
	assert_int_equal(c->h.flags, TCP_RST | TCP_ACK);
	assert_int_equal(c->h.ack, PISS + 1);
	tnode_inject6(n, 0, &p, PPORT, 81, TCP_ACK, PISS, 777, 65535, NULL, NULL, 0);
	c = tnode_last(n);
	assert_true(c->v6);
	assert_int_equal(c->h.flags, TCP_RST);
	assert_int_equal(c->h.seq, 777);
	assert_int_equal(STAT(n, drop_no_socket), 2);
	tnode_free(n);
}

/* The checksum is over the IPv6 pseudo header: a segment summed with the
 * IPv4 one (the same bytes otherwise) is refused. */
static void test_v6_pseudo_header_checksum(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	tcp_listen(&n->st, LPORT, 0);
	struct sk_addr p = peer6();
	size_t len;
	const uint8_t *seg = tseg_build(csum_pseudo4(PEER, IP_A, IPV4_PROTO_TCP, 0), PPORT, LPORT,
					TCP_SYN, PISS, 0, 65535, NULL, NULL, 0, &len);
	tcp_input6(&n->st, 0, &p, &n->ip6, seg, len);
	tcp_poll(&n->st, 0);
	assert_int_equal(n->nseg, 0);
	assert_int_equal(STAT(n, drop_parse_csum), 1);
	tnode_free(n);
}

/* A v4-mapped source over IPv6 would alias the IPv4 peer's connections
 * (base/sk_addr.h): dropped before the demux. */
static void test_v6_mapped_source_dropped(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	tcp_listen(&n->st, LPORT, 0);
	struct sk_addr m = sk_addr_v4(PEER);
	tnode_inject6(n, 0, &m, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, NULL, NULL, 0);
	tcp_poll(&n->st, 0);
	assert_int_equal(n->nseg, 0);
	assert_int_equal(STAT(n, drop_parse_other), 1);
	assert_int_equal(STAT(n, passive_opens), 0);
	tnode_free(n);
}

static void tweak_small(struct tcp_config *c)
{
	c->max_sockets = 8;
}

/* SYN cookies over IPv6: the cookie hashes the 16-byte addresses, the
 * SYN-ACK and the RST for a bad cookie leave over IPv6, and the MSS comes
 * back as the v6 one. */
static void test_v6_syn_cookies(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, tweak_small);
	int ls = tcp_listen(&n->st, LPORT, 1);
	struct sk_addr p = peer6();
	struct tcp_opts o = syn_opts(7000);
	tnode_inject6(n, 0, &p, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, &o, NULL, 0);
	tcp_poll(&n->st, 0);
	assert_int_equal(n->nseg, 1);
	tnode_inject6(n, 0, &p, PPORT + 1, LPORT, TCP_SYN, 5555, 0, 65535, &o, NULL, 0);
	assert_int_equal(n->nseg, 2);
	assert_int_equal(STAT(n, cookies_sent), 1);
	struct cap_seg *c = &n->segs[1];
	assert_true(c->v6);
	assert_int_equal(c->h.flags, TCP_SYN | TCP_ACK);
	assert_int_equal(c->h.opts.mss, 1440);
	uint32_t cookie = c->h.seq;
	struct tcp_opts a = {.has_ts = true, .ts_val = 7001, .ts_ecr = c->h.opts.ts_val};
	/* The same cookie from the IPv4 twin of the tuple does not validate. */
	tnode_inject(n, MS, PEER, PPORT + 1, LPORT, TCP_ACK, 5556, cookie + 1, 1000, &a, NULL, 0);
	assert_int_equal(STAT(n, cookies_failed), 1);
	assert_false(tnode_last(n)->v6);
	/* A wrong one over IPv6: RST over IPv6. */
	tnode_inject6(n, MS, &p, PPORT + 1, LPORT, TCP_ACK, 5556, cookie + 2, 1000, &a, NULL, 0);
	assert_int_equal(STAT(n, cookies_failed), 2);
	assert_true(tnode_last(n)->v6);
	assert_int_equal(tnode_last(n)->h.flags, TCP_RST);
	/* The right one. */
	tnode_inject6(n, MS, &p, PPORT + 1, LPORT, TCP_ACK | TCP_PSH, 5556, cookie + 1, 1000, &a,
		      "hello", 5);
	assert_int_equal(STAT(n, cookies_validated), 1);
	assert_int_equal(tcp_check(&n->st), 0);
	int s = tcp_accept(&n->st, ls, NULL, NULL);
	assert_true(s >= 0);
	struct tcp_info in;
	tcp_info(&n->st, s, &in);
	assert_int_equal(in.state, TCP_ESTABLISHED);
	assert_true(sk_addr_eq(&in.raddr, &p));
	assert_int_equal(in.snd_mss, 1440 - 12);
	char buf[8];
	assert_int_equal(tcp_recv(&n->st, s, buf, sizeof(buf)), 5);
	tnode_free(n);
}

/* RFC 5961 over IPv6: an in-window RST draws a challenge ACK on IPv6; the
 * exact one resets. */
static void test_v6_challenge_ack_and_reset(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	int ls = tcp_listen(&n->st, LPORT, 0);
	struct sk_addr p = peer6();
	tnode_inject6(n, 0, &p, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, NULL, NULL, 0);
	tcp_poll(&n->st, 0);
	uint32_t iss = tnode_last(n)->h.seq;
	tnode_inject6(n, MS, &p, PPORT, LPORT, TCP_ACK, PISS + 1, iss + 1, 65535, NULL, NULL, 0);
	int s = tcp_accept(&n->st, ls, NULL, NULL);
	assert_true(s >= 0);
	tnode_clear(n);
	tnode_inject6(n, 2 * MS, &p, PPORT, LPORT, TCP_RST, PISS + 100, 0, 0, NULL, NULL, 0);
	tcp_poll(&n->st, 2 * MS);
	assert_int_equal(n->nseg, 1);
	assert_true(tnode_last(n)->v6);
	assert_int_equal(tnode_last(n)->h.flags, TCP_ACK);
	assert_int_equal(tnode_last(n)->h.ack, PISS + 1);
	assert_int_equal(STAT(n, challenge_acks), 1);
	tnode_inject6(n, 3 * MS, &p, PPORT, LPORT, TCP_RST, PISS + 1, 0, 0, NULL, NULL, 0);
	char b[4];
	assert_int_equal(tcp_recv(&n->st, s, b, sizeof(b)), -SK_ECONNRESET);
	assert_int_equal(tcp_close(&n->st, 3 * MS, s), 0);
	assert_int_equal(tcp_check(&n->st), 0);
	tnode_free(n);
}

static void tweak_no_src6(struct tcp_config *c)
{
	c->src6 = NULL;
}

/* Active open over IPv6: from the address src6 picks, the v6 MSS offered;
 * no source, no connect. */
static void test_v6_connect(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	struct sk_addr p = peer6();
	int s = tcp_connect_addr(&n->st, 0, &p, 443);
	assert_true(s >= 0);
	tcp_poll(&n->st, 0);
	struct cap_seg *c = tnode_last(n);
	assert_true(c->v6 && sk_addr_eq(&c->src6, &n->ip6) && sk_addr_eq(&c->dst6, &p));
	assert_int_equal(c->h.flags, TCP_SYN);
	assert_int_equal(c->h.opts.mss, 1440);
	struct tcp_opts o = syn_opts(9);
	o.mss = 1440;
	tnode_inject6(n, MS, &p, 443, c->h.sport, TCP_SYN | TCP_ACK, PISS, c->h.seq + 1, 65535, &o,
		      NULL, 0);
	struct tcp_info in;
	tcp_info(&n->st, s, &in);
	assert_int_equal(in.state, TCP_ESTABLISHED);
	assert_int_equal(in.snd_mss, 1440 - 12);
	struct sk_addr any = {{0}};
	assert_int_equal(tcp_connect_addr(&n->st, 0, &any, 443), -SK_EINVAL);
	tnode_free(n);
	n = tnode_new(IP_A, tweak_no_src6);
	assert_int_equal(tcp_connect_addr(&n->st, 0, &p, 443), -SK_EADDRNOTAVAIL);
	tnode_free(n);
}

/* A Packet Too Big about an established v6 connection (what
 * iface_icmp6.c hands over once the quote is from our address). */
static struct icmp6_error ptb(const struct tnode *n, const struct sk_addr *p, uint32_t mtu,
			      uint32_t seq)
{
	struct icmp6_error e;
	memset(&e, 0, sizeof(e));
	e.type = ICMP6_PACKET_TOO_BIG;
	e.mtu = mtu;
	memcpy(e.src.b, n->ip6.b, 16);
	memcpy(e.dst.b, p->b, 16);
	e.proto = IPV6_NH_TCP;
	e.sport = LPORT;
	e.dport = PPORT;
	e.tcp_seq = seq;
	return e;
}

/* Path MTU from Packet Too Big (RFC 8201): only for a connection we have
 * and a sequence number in flight, never under 1280, never upwards; then
 * the MSS is MTU - 60 and what was in flight goes again at that size. */
static void test_v6_packet_too_big(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	int ls = tcp_listen(&n->st, LPORT, 0);
	struct sk_addr p = peer6();
	struct tcp_opts o = syn_opts(5000);
	tnode_inject6(n, 0, &p, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, &o, NULL, 0);
	tcp_poll(&n->st, 0);
	uint32_t iss = tnode_last(n)->h.seq;
	struct tcp_opts a = {.has_ts = true, .ts_val = 5001, .ts_ecr = tnode_last(n)->h.opts.ts_val};
	tnode_inject6(n, MS, &p, PPORT, LPORT, TCP_ACK, PISS + 1, iss + 1, 65535, &a, NULL, 0);
	int s = tcp_accept(&n->st, ls, NULL, NULL);
	assert_true(s >= 0);
	static uint8_t big[6000];
	memset(big, 'y', sizeof(big));
	tnode_clear(n);
	assert_int_equal(tcp_send(&n->st, s, big, sizeof(big)), (int)sizeof(big));
	tcp_poll(&n->st, 2 * MS);
	assert_true(n->nseg >= 4);
	assert_int_equal(n->segs[0].h.payload_len, 1440 - 12);
	uint32_t una = iss + 1;

	/* Lies first: none of them changes anything. */
	struct icmp6_error e = ptb(n, &p, 1400, una + 100000); /* not in flight */
	tcp_icmp6_error(&n->st, 3 * MS, &e);
	e = ptb(n, &p, 1400, una - 1); /* already acknowledged */
	tcp_icmp6_error(&n->st, 3 * MS, &e);
	e = ptb(n, &p, 1400, una);
	e.dport = PPORT + 1; /* no such connection */
	tcp_icmp6_error(&n->st, 3 * MS, &e);
	assert_int_equal(STAT(n, icmp_ignored), 3);
	e = ptb(n, &p, 1000, una); /* under 1280: RFC 8200 5 */
	tcp_icmp6_error(&n->st, 3 * MS, &e);
	e = ptb(n, &p, 1500, una); /* not smaller than the link */
	tcp_icmp6_error(&n->st, 3 * MS, &e);
	assert_int_equal(STAT(n, pmtu_ignored), 2);
	assert_int_equal(STAT(n, pmtu_updates), 0);
	struct tcp_info in;
	tcp_info(&n->st, s, &in);
	assert_int_equal(in.snd_mss, 1440 - 12);

	/* The real one, quoting a segment in flight: 1400 - 60 = 1340. */
	tnode_clear(n);
	e = ptb(n, &p, 1400, una + 1428);
	tcp_icmp6_error(&n->st, 3 * MS, &e);
	assert_int_equal(STAT(n, pmtu_updates), 1);
	tcp_poll(&n->st, 3 * MS);
	assert_int_equal(tcp_check(&n->st), 0);
	tcp_info(&n->st, s, &in);
	assert_int_equal(in.snd_mss, 1340 - 12);
	assert_true(n->nseg >= 1);
	assert_int_equal(n->segs[0].h.seq, una); /* from snd_una again */
	for (size_t i = 0; i < n->nseg; i++) {
		assert_true(n->segs[i].v6);
		assert_true(n->segs[i].h.payload_len <= 1340 - 12);
		assert_true(n->segs[i].len <= 1400 - 40);
	}
	assert_int_equal(n->segs[0].h.payload_len, 1340 - 12);
	/* A later, larger one cannot raise it again; the minimum is taken. */
	e = ptb(n, &p, 1450, una);
	tcp_icmp6_error(&n->st, 4 * MS, &e);
	e = ptb(n, &p, IPV6_MIN_MTU, una);
	tcp_icmp6_error(&n->st, 4 * MS, &e);
	assert_int_equal(STAT(n, pmtu_ignored), 3);
	assert_int_equal(STAT(n, pmtu_updates), 2);
	tcp_info(&n->st, s, &in);
	assert_int_equal(in.snd_mss, 1220 - 12);
	/* Other errors are soft once established. */
	e = ptb(n, &p, 0, una);
	e.type = ICMP6_DEST_UNREACH;
	e.code = ICMP6_UNREACH_PORT;
	tcp_icmp6_error(&n->st, 4 * MS, &e);
	assert_int_equal(STAT(n, icmp_soft_errors), 1);
	tcp_info(&n->st, s, &in);
	assert_int_equal(in.state, TCP_ESTABLISHED);
	tnode_free(n);
}

/* Port unreachable to our SYN over IPv6 refuses the connect. */
static void test_v6_connect_unreachable(void **state)
{
	(void)state;
	struct tnode *n = tnode_new(IP_A, NULL);
	struct sk_addr p = peer6();
	int s = tcp_connect_addr(&n->st, 0, &p, 443);
	assert_true(s >= 0);
	tcp_poll(&n->st, 0);
	struct cap_seg *c = tnode_last(n);
	struct icmp6_error e = ptb(n, &p, 0, c->h.seq);
	e.type = ICMP6_DEST_UNREACH;
	e.code = ICMP6_UNREACH_PORT;
	e.sport = c->h.sport;
	e.dport = 443;
	tcp_icmp6_error(&n->st, MS, &e);
	assert_int_equal(STAT(n, conn_refused), 1);
	char b[4];
	assert_int_equal(tcp_recv(&n->st, s, b, sizeof(b)), -SK_ECONNREFUSED);
	assert_int_equal(tcp_check(&n->st), 0);
	tnode_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v6_handshake_mss_and_accept),
		cmocka_unit_test(test_v6_listener_takes_both_families),
		cmocka_unit_test(test_v6_closed_port_rst),
		cmocka_unit_test(test_v6_pseudo_header_checksum),
		cmocka_unit_test(test_v6_mapped_source_dropped),
		cmocka_unit_test(test_v6_syn_cookies),
		cmocka_unit_test(test_v6_challenge_ack_and_reset),
		cmocka_unit_test(test_v6_connect),
		cmocka_unit_test(test_v6_packet_too_big),
		cmocka_unit_test(test_v6_connect_unreachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
