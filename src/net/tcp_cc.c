/* tcp_cc.c — the congestion-control registry and NewReno, the reference
 * algorithm: slow start by RFC 3465 byte counting (one segment per ACK at
 * most), additive increase of one segment per window, halving on loss. */
#include "tcp_cc.h"
#include "tcp_int.h"

/* Pacing for the window-based algorithms, in slow start: the window over
 * the smoothed round trip, twice that while cwnd is under half of ssthresh
 * and 6/5 after (Linux's rates for every algorithm under fq).  Not to slow
 * the sender: the window still limits it and the rate runs ahead of it;
 * it spreads each round trip's window over the round trip (tcp_pace_depth:
 * eight batches or more) instead of sending it as one burst.  A burst that
 * the path does not spread reaches the receiver whole, and Linux's
 * receive-buffer tuning, which compares what the reader took in a round
 * trip with what is still queued, then saw a reader one burst behind and
 * kept its window at 80 KB for seconds (bench-tcp.md, "Fair seeds, and
 * pacing in slow start").  In congestion avoidance (cwnd at or above ssthresh) unpaced
 * again: there a paced sender on a busy host lost rate to late wake-ups
 * and the receiver's window has grown.  Before the first RTT sample:
 * unpaced (the initial window). */
void tcp_cc_pace_window(struct tcp_sock *sk)
{
	if (!sk->srtt_us)
		return;
	if (sk->cwnd >= sk->ssthresh) {
		sk->pacing_rate = 0;
		return;
	}
	uint64_t w = SK_MAX(sk->cwnd, sk->snd_max - sk->snd_una);
	uint64_t r = w * 1000000 / sk->srtt_us;
	r = sk->cwnd < sk->ssthresh / 2 ? 2 * r : r * 6 / 5;
	sk->pacing_rate = r ? r : 1;
}

static void newreno_init(struct tcp_sock *sk, sk_time_ns now)
{
	(void)sk;
	(void)now;
}

static unsigned newreno_on_ack(struct tcp_sock *sk, uint32_t acked, sk_time_ns now)
{
	(void)now;
	uint32_t mss = tcp_eff_mss(sk);
	if (sk->cwnd < sk->ssthresh) {
		sk->cwnd += SK_MIN(acked, mss); /* slow start */
	} else {
		sk->bytes_acked += acked; /* congestion avoidance, byte counting */
		if (sk->bytes_acked >= sk->cwnd) {
			sk->bytes_acked -= sk->cwnd;
			sk->cwnd += mss;
		}
	}
	sk->cwnd = SK_MIN(sk->cwnd, TCP_CWND_MAX);
	tcp_cc_pace_window(sk);
	return 0;
}

static void newreno_on_rtt(struct tcp_sock *sk, uint32_t rtt_us, sk_time_ns now)
{
	(void)sk;
	(void)rtt_us;
	(void)now;
}

static uint32_t newreno_ssthresh(struct tcp_sock *sk, uint32_t base, sk_time_ns now)
{
	(void)now;
	return SK_MAX(base / 2, 2 * tcp_eff_mss(sk)); /* RFC 5681 (4) */
}

static void newreno_on_rto(struct tcp_sock *sk, sk_time_ns now)
{
	(void)now;
	sk->bytes_acked = 0;
	tcp_cc_pace_window(sk);
}

const struct tcp_cc_ops tcp_cc_newreno = {
	.name = "newreno",
	.init = newreno_init,
	.on_ack = newreno_on_ack,
	.on_rtt = newreno_on_rtt,
	.ssthresh = newreno_ssthresh,
	.on_rto = newreno_on_rto,
	.on_undo = newreno_on_rto,
};

static const struct tcp_cc_ops *const algos[TCP_CC_COUNT] = {
	[TCP_CC_CUBIC] = &tcp_cc_cubic,
	[TCP_CC_NEWRENO] = &tcp_cc_newreno,
	[TCP_CC_BBR] = &tcp_cc_bbr,
};

const struct tcp_cc_ops *tcp_cc_get(uint8_t algo)
{
	return algo < TCP_CC_COUNT ? algos[algo] : &tcp_cc_cubic;
}

int tcp_cc_parse(const char *name)
{
	for (unsigned i = 0; i < TCP_CC_COUNT; i++) {
		const char *a = algos[i]->name, *b = name;
		while (*a && *a == *b) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return (int)i;
	}
	return -1;
}

const char *tcp_cc_name(unsigned algo)
{
	return tcp_cc_get((uint8_t)algo)->name;
}
