/* tcp_cc_test.c — the congestion-control algorithms driven directly, with
 * a socket and a clock of our own: the CUBIC curve against RFC 9438's
 * formula, HyStart++'s exit on a rising RTT, the integer cube root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "net/tcp_cc.h"
#include "net/tcp_int.h"

#define MSS 1000u
#define MS SK_NS_PER_MS

static void sock_init(struct tcp_sock *sk, const struct tcp_cc_ops *cc)
{
	memset(sk, 0, sizeof(*sk));
	sk->snd_mss = MSS;
	sk->cwnd = 10 * MSS;
	sk->ssthresh = UINT32_MAX;
	sk->srtt_us = 100000; /* 100 ms */
	cc->init(sk, 0);
}

static void test_icbrt(void **state)
{
	(void)state;
	static const uint64_t xs[] = {0, 1, 7, 8, 9, 26, 27, 28, 1000, 999999, 1000000,
				      75000000000ull, 1ull << 62, UINT64_MAX};
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		uint64_t y = tcp_icbrt(xs[i]);
		assert_true(y * y * y <= xs[i]);
		/* (y + 1)^3 > x, computed without overflow near 2^64 */
		if (y < 2642245)
			assert_true((y + 1) * (y + 1) * (y + 1) > xs[i]);
	}
	assert_int_equal(tcp_icbrt(27), 3);
	assert_int_equal(tcp_icbrt(75000000000ull), 4217); /* K for 30 segments: 4.217 s */
}

/* A whole window of ACKs every RTT, one ACK per segment, for `ms`. */
static sk_time_ns run_acks(struct tcp_sock *sk, const struct tcp_cc_ops *cc, sk_time_ns now,
			   uint32_t ms)
{
	sk_time_ns end = now + (sk_time_ns)ms * MS;
	while (now < end) {
		uint32_t segs = sk->cwnd / MSS;
		for (uint32_t i = 0; i < segs; i++)
			cc->on_ack(sk, MSS, now);
		now += (sk_time_ns)sk->srtt_us * 1000;
	}
	return now;
}

/* RFC 9438: after a loss at W_max = 100 segments the window is 70; it
 * climbs back concavely, reaches W_max at about K = cbrt(30 / 0.4) =
 * 4.2 s, stays near it, then probes beyond (convex). */
static void test_cubic_curve(void **state)
{
	(void)state;
	const struct tcp_cc_ops *cc = &tcp_cc_cubic;
	struct tcp_sock sk;
	sock_init(&sk, cc);
	sk.cwnd = 100 * MSS;
	sk.ssthresh = cc->ssthresh(&sk, sk.cwnd, 0);
	assert_int_equal(sk.ssthresh, 70 * MSS);
	sk.cwnd = sk.ssthresh;
	sk_time_ns now = run_acks(&sk, cc, 1, 2000); /* t = 2 s: well up, short of W_max */
	uint32_t at2 = sk.cwnd / MSS;
	assert_true(at2 > 85 && at2 < 100);
	now = run_acks(&sk, cc, now, 2200); /* t ~ K */
	uint32_t atk = sk.cwnd / MSS;
	assert_true(atk >= 97 && atk <= 103);
	now = run_acks(&sk, cc, now, 1000); /* the plateau: little growth */
	assert_true(sk.cwnd / MSS - atk <= 3);
	run_acks(&sk, cc, now, 4000); /* t ~ 9 s: convex probing past W_max */
	assert_true(sk.cwnd / MSS > 120);
	/* Fast convergence: a loss below the last W_max remembers less. */
	uint32_t w = sk.cwnd;
	sk.cc.cubic.w_max = w + 50 * MSS;
	cc->ssthresh(&sk, w, 0);
	assert_int_equal(sk.cc.cubic.w_max, (uint32_t)((uint64_t)w * 17 / 20));
}

/* At a short RTT standard TCP grows faster than the cubic curve: the
 * Reno-friendly estimate keeps CUBIC at least that fast (RFC 9438 4.3). */
static void test_cubic_reno_friendly(void **state)
{
	(void)state;
	const struct tcp_cc_ops *cc = &tcp_cc_cubic;
	struct tcp_sock sk;
	sock_init(&sk, cc);
	sk.srtt_us = 1000; /* 1 ms */
	sk.cwnd = 100 * MSS;
	sk.ssthresh = cc->ssthresh(&sk, sk.cwnd, 0);
	sk.cwnd = sk.ssthresh;
	/* 200 RTTs at 1 ms: the cubic curve has barely moved (t << K), but
	 * alpha = 9/17 segment per RTT takes W_est from 70 to W_max = 100 in
	 * about 57 RTTs, and then one segment per RTT (alpha = 1) for the
	 * other 143: about 243. */
	run_acks(&sk, cc, 1, 200);
	uint32_t segs = sk.cwnd / MSS;
	assert_true(segs >= 235 && segs <= 250);
}

/* RFC 9406: rounds with a flat RTT stay in slow start (doubling); a
 * round whose minimum RTT rose by more than the threshold slows growth to
 * a quarter, and five such rounds end slow start without any loss. */
static void test_hystart(void **state)
{
	(void)state;
	const struct tcp_cc_ops *cc = &tcp_cc_cubic;
	struct tcp_sock sk;
	sock_init(&sk, cc);
	uint32_t rtt = 20000;
	sk_time_ns now = 1;
	unsigned ev = 0;
	int rounds = 0;
	while (sk.ssthresh == UINT32_MAX && rounds < 40) {
		/* one round: the data sent at its start is acked by its end */
		uint32_t segs = sk.cwnd / MSS;
		uint32_t before = sk.cwnd;
		sk.snd_max = sk.snd_una + sk.cwnd;
		for (uint32_t i = 0; i < segs; i++) {
			cc->on_rtt(&sk, rtt, now);
			sk.snd_una += MSS;
			ev |= cc->on_ack(&sk, MSS, now);
			sk.snd_max = sk.snd_una + sk.cwnd; /* the ACK clocks out more */
		}
		now += (sk_time_ns)rtt * 1000;
		rounds++;
		if (rounds < 6)
			assert_true(sk.cwnd >= 2 * before - MSS); /* slow start doubles */
		if (rounds == 6)
			rtt += 8000; /* the queue starts to build: +8 ms > 20/8 */
	}
	assert_true(ev & TCP_CC_EV_CSS);
	assert_true(ev & TCP_CC_EV_SS_EXIT);
	assert_true(sk.ssthresh != UINT32_MAX);
	assert_true(rounds <= 6 + 1 + 5 + 1);
}

static void test_newreno(void **state)
{
	(void)state;
	const struct tcp_cc_ops *cc = &tcp_cc_newreno;
	struct tcp_sock sk;
	sock_init(&sk, cc);
	assert_int_equal(cc->ssthresh(&sk, 40 * MSS, 0), 20 * MSS);
	sk.ssthresh = 20 * MSS;
	sk.cwnd = 20 * MSS;
	run_acks(&sk, cc, 1, 1000); /* 10 RTTs: one segment each */
	assert_int_equal(sk.cwnd, 30 * MSS);
	assert_int_equal(tcp_cc_parse("newreno"), TCP_CC_NEWRENO);
	assert_int_equal(tcp_cc_parse("cubic"), TCP_CC_CUBIC);
	assert_int_equal(tcp_cc_parse("cubi"), -1);
	assert_int_equal(tcp_cc_parse("cubicc"), -1);
	assert_string_equal(tcp_cc_name(TCP_CC_NEWRENO), "newreno");
}

/* CUBIC and NewReno pace in slow start at the window's rate (2x while
 * cwnd is under half of ssthresh, 6/5 after), from max(cwnd, flight), in
 * a bucket of an eighth of a round trip; in avoidance they are unpaced
 * (tcp_cc_pace_window). */
static void test_window_pacing(void **state)
{
	(void)state;
	const struct tcp_cc_ops *algos[] = {&tcp_cc_cubic, &tcp_cc_newreno};
	for (size_t i = 0; i < 2; i++) {
		struct tcp_sock sk;
		sock_init(&sk, algos[i]);
		sk.cc_algo = i ? TCP_CC_NEWRENO : TCP_CC_CUBIC;
		assert_int_equal(sk.pacing_rate, 0); /* the initial window leaves unpaced */
		algos[i]->on_ack(&sk, MSS, 1 * MS);
		/* 11 segments over 100 ms, doubled: 220 kB/s; an eighth of the
		 * round trip at it is 2,750 B, two whole segments. */
		assert_int_equal(sk.cwnd, 11 * MSS);
		assert_int_equal(sk.pacing_rate, 2 * 11 * MSS * 10);
		assert_int_equal(tcp_pace_depth(&sk), 2 * MSS);
		/* A flight above cwnd (limited transmit) sets the rate. */
		sk.snd_una = 1000;
		sk.snd_max = 1000 + 40 * MSS;
		algos[i]->on_ack(&sk, 0, 2 * MS);
		assert_int_equal(sk.pacing_rate, 2 * 40 * MSS * 10);
		/* 800 kB/s: a millisecond's quantum is two segments, an eighth of
		 * the round trip ten; BBR's bucket would keep the two. */
		assert_int_equal(tcp_pace_depth(&sk), 10 * MSS);
		sk.cc_algo = TCP_CC_BBR;
		assert_int_equal(tcp_pace_depth(&sk), 2 * MSS);
		sk.cc_algo = i ? TCP_CC_NEWRENO : TCP_CC_CUBIC;
		/* Above half of ssthresh: 6/5. */
		sk.snd_max = sk.snd_una;
		sk.ssthresh = 20 * MSS;
		algos[i]->on_ack(&sk, MSS, 3 * MS);
		assert_int_equal(sk.cwnd, 12 * MSS);
		assert_int_equal(sk.pacing_rate, 12 * MSS * 10 * 6 / 5);
		/* Avoidance: unpaced. */
		sk.cwnd = 20 * MSS;
		algos[i]->on_ack(&sk, MSS, 4 * MS);
		assert_int_equal(sk.pacing_rate, 0);
		/* A timeout's loss window paces its slow start again. */
		sk.cwnd = MSS;
		algos[i]->on_rto(&sk, 5 * MS);
		assert_int_equal(sk.pacing_rate, 2 * MSS * 10);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icbrt),
		cmocka_unit_test(test_cubic_curve),
		cmocka_unit_test(test_cubic_reno_friendly),
		cmocka_unit_test(test_hystart),
		cmocka_unit_test(test_newreno),
		cmocka_unit_test(test_window_pacing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
