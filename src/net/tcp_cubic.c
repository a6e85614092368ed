/* tcp_cubic.c — CUBIC (RFC 9438) with HyStart++ (RFC 9406), in integers
 * (the unikernel has no floating point): windows in bytes, time in ms.
 *
 * After a loss the window grows along W(t) = C (t - K)^3 + W_max, fast
 * while far below the window at the last loss, flat near it, probing
 * beyond it; where standard TCP would be faster (short RTTs), the
 * Reno-friendly estimate W_est wins.  Slow start ends early when the RTT
 * rises (HyStart++), before the queue overflows, rather than at the first
 * loss. */
#include "tcp_cc.h"
#include "tcp_int.h"

/* C = 0.4, beta = 0.7, alpha = 3 (1 - beta) / (1 + beta) = 9/17. */
#define CUBIC_C_NUM 4
#define CUBIC_C_DEN 10
#define CUBIC_BETA_NUM 7
#define CUBIC_BETA_DEN 10
#define CUBIC_ALPHA_NUM 9
#define CUBIC_ALPHA_DEN 17

/* RFC 9406 4.3's constants. */
#define HS_MIN_RTT_THRESH_US 4000u
#define HS_MAX_RTT_THRESH_US 16000u
#define HS_MIN_RTT_DIVISOR 8u
#define HS_N_RTT_SAMPLE 8u
#define HS_CSS_GROWTH_DIVISOR 4u
#define HS_CSS_ROUNDS 5u
#define HS_L 8u /* segments per ACK at most in slow start (not paced) */

/* The integer cube root, digit by digit (3 bits at a time). */
uint64_t tcp_icbrt(uint64_t x)
{
	uint64_t y = 0;
	for (int s = 63; s >= 0; s -= 3) {
		y += y;
		uint64_t b = 3 * y * (y + 1) + 1;
		if ((x >> s) >= b) {
			x -= b << s;
			y++;
		}
	}
	return y;
}

static void hystart_reset(struct tcp_cubic *c)
{
	c->round_on = false;
	c->cur_min_us = UINT32_MAX;
	c->last_min_us = UINT32_MAX;
	c->samples = 0;
	c->css = false;
	c->css_rounds = 0;
}

static void cubic_init(struct tcp_sock *sk, sk_time_ns now)
{
	(void)now;
	struct tcp_cubic *c = &sk->cc.cubic;
	sk_memset(c, 0, sizeof(*c));
	hystart_reset(c);
}

/* HyStart++ runs in the first slow start only: once a loss has set
 * ssthresh, slow start up to it is safe. */
static bool hystart_on(const struct tcp_sock *sk)
{
	return sk->ssthresh == UINT32_MAX && sk->cwnd < sk->ssthresh;
}

/* RFC 9406 4.2: a round ends when the data sent at its start is acked. */
static void hystart_round(struct tcp_sock *sk)
{
	struct tcp_cubic *c = &sk->cc.cubic;
	if (c->round_on && tcp_seq_lt(sk->snd_una, c->round_end))
		return;
	c->round_on = true;
	c->round_end = sk->snd_max;
	c->last_min_us = c->cur_min_us;
	c->cur_min_us = UINT32_MAX;
	c->samples = 0;
	if (c->css && ++c->css_rounds >= HS_CSS_ROUNDS)
		sk->ssthresh = sk->cwnd; /* leave slow start for avoidance */
}

static void cubic_on_rtt(struct tcp_sock *sk, uint32_t rtt_us, sk_time_ns now)
{
	(void)now;
	struct tcp_cubic *c = &sk->cc.cubic;
	if (!hystart_on(sk))
		return;
	if (rtt_us < c->cur_min_us)
		c->cur_min_us = rtt_us;
	if (c->samples < 255)
		c->samples++;
}

/* Starts the epoch at the first growth after a loss (RFC 9438 4.2). */
static void cubic_epoch(struct tcp_sock *sk, sk_time_ns now)
{
	struct tcp_cubic *c = &sk->cc.cubic;
	uint32_t mss = tcp_eff_mss(sk);
	c->epoch = now ? now : 1;
	if (sk->cwnd < c->w_max) {
		/* K = cbrt((W_max - cwnd) / C) seconds, here in ms:
		 * cbrt(segments / C * 10^9). */
		uint64_t x = (uint64_t)(c->w_max - sk->cwnd) * (1000000000ull * CUBIC_C_DEN / CUBIC_C_NUM) / mss;
		c->k_ms = (uint32_t)tcp_icbrt(x);
		c->origin = c->w_max;
	} else {
		c->k_ms = 0;
		c->origin = sk->cwnd;
	}
	c->w_est = sk->cwnd;
	c->est_acc = 0;
	sk->bytes_acked = 0;
}

/* W_cubic(t) in bytes, t in ms since the epoch. */
static uint64_t cubic_w(const struct tcp_sock *sk, int64_t t_ms)
{
	const struct tcp_cubic *c = &sk->cc.cubic;
	int64_t d = t_ms - (int64_t)c->k_ms;
	if (d > 30000)
		d = 30000; /* keeps d^3 * mss inside 64 bits */
	if (d < -30000)
		d = -30000;
	int64_t delta = d * d * d * (int64_t)tcp_eff_mss(sk) * CUBIC_C_NUM / CUBIC_C_DEN / 1000000000;
	int64_t w = (int64_t)c->origin + delta;
	return w > 0 ? (uint64_t)w : 0;
}

static unsigned cubic_grow(struct tcp_sock *sk, uint32_t acked, sk_time_ns now)
{
	struct tcp_cubic *c = &sk->cc.cubic;
	uint32_t mss = tcp_eff_mss(sk);
	unsigned ev = 0;
	if (sk->cwnd < sk->ssthresh) {
		uint32_t inc = SK_MIN(acked, HS_L * mss);
		if (hystart_on(sk)) {
			hystart_round(sk);
			if (!c->css && c->samples >= HS_N_RTT_SAMPLE &&
			    c->cur_min_us != UINT32_MAX && c->last_min_us != UINT32_MAX) {
				uint32_t th = c->last_min_us / HS_MIN_RTT_DIVISOR;
				th = SK_MAX(HS_MIN_RTT_THRESH_US, SK_MIN(th, HS_MAX_RTT_THRESH_US));
				if (c->cur_min_us >= c->last_min_us + th) {
					c->css = true; /* the queue is building */
					c->css_rounds = 0;
					c->css_base_us = c->cur_min_us;
					ev |= TCP_CC_EV_CSS;
				}
			} else if (c->css && c->samples >= HS_N_RTT_SAMPLE &&
				   c->cur_min_us < c->css_base_us) {
				c->css = false; /* a false alarm: back to slow start */
			}
			if (c->css)
				inc /= HS_CSS_GROWTH_DIVISOR;
		}
		sk->cwnd = SK_MIN(sk->cwnd + inc, TCP_CWND_MAX);
		if (sk->cwnd < sk->ssthresh || sk->ssthresh == UINT32_MAX)
			return ev;
		/* HyStart++ set ssthresh: avoidance from here. */
		c->w_max = sk->cwnd;
		c->epoch = 0;
		return ev | TCP_CC_EV_SS_EXIT;
	}
	if (!c->epoch)
		cubic_epoch(sk, now);
	/* Reno-friendly estimate (RFC 9438 4.3): alpha segments per window,
	 * 1 once past the window of the last loss. */
	c->est_acc += acked;
	uint64_t per = c->w_est >= c->w_max ? sk->cwnd
					    : (uint64_t)sk->cwnd * CUBIC_ALPHA_DEN / CUBIC_ALPHA_NUM;
	while (c->est_acc >= per && per) {
		c->est_acc -= (uint32_t)per;
		c->w_est += mss;
	}
	/* The cubic target one RTT ahead (RFC 9438 4.2), bounded to 1.5 cwnd
	 * so a long-idle epoch cannot burst. */
	int64_t t = (int64_t)((now - c->epoch) / SK_NS_PER_MS) + sk->srtt_us / 1000;
	uint64_t target = cubic_w(sk, t);
	if (target < sk->cwnd)
		target = sk->cwnd;
	if (target > (uint64_t)sk->cwnd * 3 / 2)
		target = (uint64_t)sk->cwnd * 3 / 2;
	if (c->w_est > target) {
		sk->cwnd = SK_MAX(sk->cwnd, c->w_est); /* the Reno-friendly region */
	} else {
		uint64_t acc = (target - sk->cwnd) * acked + sk->bytes_acked;
		sk->cwnd += (uint32_t)(acc / sk->cwnd);
		sk->bytes_acked = (uint32_t)(acc % sk->cwnd);
	}
	sk->cwnd = SK_MIN(sk->cwnd, TCP_CWND_MAX);
	return 0;
}

static unsigned cubic_on_ack(struct tcp_sock *sk, uint32_t acked, sk_time_ns now)
{
	unsigned ev = cubic_grow(sk, acked, now);
	tcp_cc_pace_window(sk);
	return ev;
}

static uint32_t cubic_ssthresh(struct tcp_sock *sk, uint32_t base, sk_time_ns now)
{
	(void)now;
	struct tcp_cubic *c = &sk->cc.cubic;
	/* RFC 9438 4.7 fast convergence: a window that fell short of the
	 * last one gives up more, so a new flow gets its share. */
	if (base < c->w_max)
		c->w_max = (uint32_t)((uint64_t)base * (CUBIC_BETA_DEN + CUBIC_BETA_NUM) / (2 * CUBIC_BETA_DEN));
	else
		c->w_max = base;
	c->epoch = 0;
	c->css = false;
	return SK_MAX((uint32_t)((uint64_t)base * CUBIC_BETA_NUM / CUBIC_BETA_DEN), 2 * tcp_eff_mss(sk));
}

static void cubic_on_rto(struct tcp_sock *sk, sk_time_ns now)
{
	(void)now;
	sk->cc.cubic.epoch = 0;
	sk->bytes_acked = 0;
	tcp_cc_pace_window(sk);
}

static void cubic_on_undo(struct tcp_sock *sk, sk_time_ns now)
{
	(void)now;
	struct tcp_cubic *c = &sk->cc.cubic;
	c->epoch = 0; /* restart from the restored window, W_max kept */
	if (c->w_max < sk->cwnd)
		c->w_max = sk->cwnd;
}

const struct tcp_cc_ops tcp_cc_cubic = {
	.name = "cubic",
	.init = cubic_init,
	.on_ack = cubic_on_ack,
	.on_rtt = cubic_on_rtt,
	.ssthresh = cubic_ssthresh,
	.on_rto = cubic_on_rto,
	.on_undo = cubic_on_undo,
};
