/* tcp_cc.c — the congestion-control registry and NewReno, the reference
 * algorithm: slow start by RFC 3465 byte counting (one segment per ACK at
 * most), additive increase of one segment per window, halving on loss. */
#include "tcp_cc.h"
#include "tcp_int.h"

/* Pacing for the window-based algorithms: the window over the smoothed
 * round trip, twice that in slow start's first half and 6/5 after it (as
 * Linux paces every algorithm under fq).  Not to slow the sender: the
 * window still limits it, and the rate runs ahead of it.  It spreads each
 * round trip's window over the round trip instead of sending it as one
 * burst.  A burst, delivered at once by a path that does not spread it,
 * reaches the receiver's queue whole; Linux's receive-buffer tuning then
 * measures a reader always one burst behind and did not grow its window
 * for seconds (80 KB at 50 ms one way: bench-tcp.md, "Pacing every
 * algorithm").  Before the first RTT sample: unpaced (the initial window). */
void tcp_cc_pace_window(struct tcp_sock *sk)
{
	if (!sk->srtt_us)
		return;
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
