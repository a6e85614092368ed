/* tcp_cc_bbr.c — BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson,
 * "BBR: Congestion-Based Congestion Control", ACM Queue 2016, and
 * draft-cardwell-iccrg-bbr-congestion-control-00), in integers.
 *
 * The model is two numbers: BtlBw, the largest delivery rate seen over the
 * last 10 round trips, and RTprop, the smallest round trip seen over the
 * last 10 s.  Their product is the path's BDP.  The sender paces at
 * pacing_gain * BtlBw and keeps at most cwnd_gain * BDP (plus three send
 * quanta, for delayed and stretched ACKs) in flight.  Four states set the
 * gains: STARTUP (2/ln 2 for both: doubles the rate each round) until the
 * bandwidth stops growing by 25 % for three rounds; DRAIN (the inverse
 * gain) until the flight is down to one BDP; PROBE_BW, cycling the
 * pacing gain through 5/4, 3/4, then six rounds of 1, cwnd gain 2; and
 * PROBE_RTT, when RTprop has not been refreshed for 10 s: four segments
 * in flight for 200 ms and a round, to see the empty-queue round trip.
 *
 * Delivery rate (after draft-cheng-iccrg-delivery-rate-estimation, made
 * small): no per-segment record exists here, so a few new-data segments
 * in flight are markers, spaced about a quarter window apart.  When one is
 * delivered (cumulatively acked or SACKed: a marker above a hole must not
 * wait a repair round trip, which would stretch its interval and lower
 * its sample), the bytes delivered (acked or SACKed) since the previous
 * marker's ACK (or, for the first marker sent into an empty pipe, since
 * that send),
 * over the longer of the two intervals between the markers (as sent, as
 * acked), is one rate sample: the send interval keeps ACK compression from
 * inflating it, the ACK interval keeps a burst sent faster than the
 * bottleneck from doing so.  A marker's send-to-ACK time is the RTT
 * sample for RTprop, in microseconds (the timestamp option's
 * milliseconds are too coarse for a LAN).  A marker sent with nothing
 * more queued and room in cwnd is app-limited: its sample may raise
 * BtlBw but says nothing about a full pipe.  Markers older than a
 * delivered one and not delivered themselves are lost (or late): they
 * are dropped unsampled.  Rounds end on the first ACK or SACK of data
 * sent after the round began, so they go on while a hole holds snd_una.
 *
 * Loss: BBR v1 does not read loss as congestion, and owns its window in
 * a SACK recovery (owns_recovery_cwnd: the engine's PRR, which would take
 * the window down to ssthresh, stays out).  As the draft's section on
 * loss recovery has it: the engine starts the episode at the flight plus
 * a segment; for its first round (until data sent after the start is
 * delivered) the window is packet-conserving, never below the flight
 * plus what the ACK delivered; after that it grows by what is delivered
 * up to the model's target as outside recovery; the episode ends at the
 * larger of that and the window saved at its start (ssthresh() saves it,
 * and on_delivery keeps sk->ssthresh at that maximum, which the engine
 * restores at the end).  An episode the engine begins on the ACK that
 * ended the last (a hole above that one's end already lost) continues
 * BBR's recovery: no new conservation round, and the window comes back
 * from the engine's cut (BBR v1's recovery state is per ACK, so it never
 * sees such a gap).  After an RTO the window regrows from one segment
 * by what is delivered, up to the target, and once everything sent before
 * the timeout is acked it is back to at least the saved window.  The
 * draft also takes newly lost segments off the window on every ACK; the
 * engine does not report them, and pipe (which leaves lost holes out)
 * already makes room to resend them.
 *
 * Known gaps: no restart-from-idle pacing; no long-term (policer)
 * bandwidth mode of later versions. */
#include "tcp_cc.h"
#include "tcp_int.h"

enum { BBR_STARTUP, BBR_DRAIN, BBR_PROBE_BW, BBR_PROBE_RTT };
enum {
	BBR_F_TRAIN = 1u << 0,      /* l_* hold the last acked marker */
	BBR_F_FILLED = 1u << 1,     /* the pipe was found full (startup is over) */
	BBR_F_ROUND_START = 1u << 2,/* this ACK began a round */
	BBR_F_RTT_ROUND = 1u << 3,  /* PROBE_RTT: a round passed at the low window */
	BBR_F_LAST_APP = 1u << 4,   /* the latest rate sample was app-limited */
	BBR_F_REC = 1u << 5,        /* in a SACK recovery (BBR's window) */
	BBR_F_CONSERVE = 1u << 6,   /* ... its first round: packet conservation */
	BBR_F_RTO = 1u << 7,        /* regrowing after a timeout */
};

#define BBR_UNIT 256u                 /* gains in 1/256 */
#define BBR_HIGH_GAIN 739u            /* 2 / ln 2 = 2.885 */
#define BBR_DRAIN_GAIN 89u            /* ln 2 / 2 = 0.347 */
#define BBR_CWND_GAIN 512u            /* 2 */
#define BBR_CYCLE_LEN 8u
static const uint16_t bbr_cycle_gain[BBR_CYCLE_LEN] = {320, 192, 256, 256, 256, 256, 256, 256};
#define BBR_BW_ROUNDS 10u
#define BBR_MIN_RTT_WIN (10 * SK_NS_PER_S)
#define BBR_PROBE_RTT_TIME (200 * SK_NS_PER_MS)
#define BBR_MIN_CWND_SEGS 4u
#define BBR_INIT_CWND_SEGS 10u
#define BBR_FULL_BW_NUM 5u /* growth of 5/4 a round ... */
#define BBR_FULL_BW_DEN 4u
#define BBR_FULL_BW_ROUNDS 3u /* ... missing three times: full */
#define BBR_MARKS 4u

static uint32_t bbr_us(sk_time_ns now)
{
	return (uint32_t)(now / SK_NS_PER_US);
}

static uint32_t bbr_btl_bw(const struct tcp_bbr *b)
{
	uint32_t m = 0;
	for (unsigned i = 0; i < BBR_BW_ROUNDS; i++)
		m = SK_MAX(m, b->bw[i]);
	return m;
}

static void bbr_bw_sample(struct tcp_bbr *b, uint32_t bw, bool app)
{
	if (app) {
		b->fl |= BBR_F_LAST_APP;
		if (bw < bbr_btl_bw(b))
			return; /* an app-limited sample only raises the estimate */
	} else {
		b->fl &= ~BBR_F_LAST_APP;
	}
	uint32_t *slot = &b->bw[b->round % BBR_BW_ROUNDS];
	if (bw > *slot)
		*slot = bw;
}

/* gain * BDP + 3 quanta in bytes (the draft's BBRInflight); the initial
 * window until there is a model. */
static uint32_t bbr_inflight(const struct tcp_sock *sk, uint32_t gain)
{
	const struct tcp_bbr *b = &sk->cc.bbr;
	uint32_t mss = tcp_eff_mss(sk);
	uint32_t bw = bbr_btl_bw(b);
	if (!bw || b->min_rtt_us == UINT32_MAX)
		return BBR_INIT_CWND_SEGS * mss;
	uint64_t bdp = (uint64_t)bw * b->min_rtt_us / 1000000;
	uint64_t w = bdp * gain / BBR_UNIT + 3ull * tcp_pace_quantum(sk);
	return (uint32_t)SK_MIN(w, (uint64_t)TCP_CWND_MAX);
}

static uint32_t bbr_pacing_gain(const struct tcp_bbr *b)
{
	switch (b->mode) {
	case BBR_STARTUP:
		return BBR_HIGH_GAIN;
	case BBR_DRAIN:
		return BBR_DRAIN_GAIN;
	case BBR_PROBE_BW:
		return bbr_cycle_gain[b->cycle];
	default:
		return BBR_UNIT;
	}
}

static uint32_t bbr_cwnd_gain(const struct tcp_bbr *b)
{
	switch (b->mode) {
	case BBR_STARTUP:
	case BBR_DRAIN:
		return BBR_HIGH_GAIN;
	case BBR_PROBE_BW:
		return BBR_CWND_GAIN;
	default:
		return BBR_UNIT;
	}
}

/* Before the first rate sample: the initial window over the handshake's
 * round trip (1 ms if none), at the startup gain. */
static void bbr_nominal_rate(struct tcp_sock *sk)
{
	uint64_t rtt_us = sk->srtt_us ? sk->srtt_us : 1000;
	uint64_t w = (uint64_t)SK_MAX(sk->cwnd, BBR_INIT_CWND_SEGS * tcp_eff_mss(sk));
	uint64_t r = w * 1000000 / rtt_us * BBR_HIGH_GAIN / BBR_UNIT;
	sk->pacing_rate = r ? r : 1;
}

static void bbr_init(struct tcp_sock *sk, sk_time_ns now)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	sk_memset(b, 0, sizeof(*b));
	b->min_rtt_us = UINT32_MAX;
	b->min_rtt_at = now;
	b->round_end = sk->snd_max;
	b->mode = BBR_STARTUP;
	sk->pace_at = 0;
	bbr_nominal_rate(sk);
}

/* Whether everything below `end` reached the peer, or at least the
 * segment ending there: cumulatively acked, or inside a SACKed range. */
static bool bbr_delivered_to(const struct tcp_sock *sk, uint32_t end)
{
	if (tcp_seq_ge(sk->snd_una, end))
		return true;
	const struct tcp_range *a = tcp_score_c(sk);
	for (uint32_t i = 0; i < sk->nscore; i++)
		if (tcp_seq_lt(a[i].l, end) && tcp_seq_ge(a[i].r, end))
			return true;
	return false;
}

/* Data past `seq` has reached the peer (acked, or SACKed: the scoreboard
 * is sorted, its last range the highest).  Strictly past: `seq` is
 * snd_max when a round (or an episode) began, and an ACK up to it
 * delivers only what was sent before.  (With "at or past", a round whose
 * flight was nearly acked when it began ended on the ACK of that rest,
 * 0.3 ms later at a 2.7 ms round trip: startup counted its three rounds
 * without growth in a fraction of the time, and left at a sixth of the
 * path's rate at 1 ms.) */
static bool bbr_delivered_past(const struct tcp_sock *sk, uint32_t seq)
{
	if (tcp_seq_gt(sk->snd_una, seq))
		return true;
	return sk->nscore && tcp_seq_gt(tcp_score_c(sk)[sk->nscore - 1].r, seq);
}

/* Markers (see the top): the first of a train, or one about a quarter
 * window past the last, while a slot is free. */
static void bbr_on_send(struct tcp_sock *sk, uint32_t seq, uint32_t len, sk_time_ns now)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	uint32_t mss = tcp_eff_mss(sk);
	if (sk->snd_una == seq) {
		/* Nothing was in flight: the pipe emptied (idle, a slow app, or
		 * a window sent and acked whole).  A sample across the gap would
		 * mean nothing, so the train starts again here, at this send
		 * (draft-cheng's P.delivered_time and first_sent_time, set to
		 * now when nothing is in flight): the first marker's ACK gives
		 * the bytes delivered since over its own round trip.  Without
		 * it the train began at that ACK, and a window sent in one
		 * pacing quantum and acked in one batch gave no sample at all
		 * (both intervals 0), round after round: BBR stayed at its
		 * initial window with no estimate (3.7 s for 20 MiB at 1 ms
		 * with a deeper bucket; test_bbr_samples_a_window_acked_whole). */
		b->mk_n = 0;
		b->l_delivered = b->delivered;
		b->l_ack_us = b->l_sent_us = bbr_us(now);
		b->fl |= BBR_F_TRAIN;
	}
	if (b->mk_n == BBR_MARKS)
		return;
	if (b->mk_n) {
		uint32_t last = b->mk_end[(b->mk_head + b->mk_n - 1) % BBR_MARKS];
		if (seq + len - last < SK_MAX(mss, sk->cwnd / BBR_MARKS))
			return;
	}
	unsigned i = (b->mk_head + b->mk_n) % BBR_MARKS;
	b->mk_end[i] = seq + len;
	b->mk_sent_us[i] = bbr_us(now);
	/* App-limited: nothing more queued and room in cwnd.  So is a
	 * marker that ends within a segment of the peer's window while that
	 * window is below cwnd: the receiver, not the path, holds the flight,
	 * and its sample says nothing about a full pipe (startup ended on
	 * such rounds at 10 ms 2 %, the receiver's window at 120-135 KB and
	 * the estimate a fifth of what the path carried). */
	uint32_t end = seq + len, wnd_end = sk->snd_una + sk->snd_wnd;
	bool app = end == sk->sbuf_seq + sk->slen && end - sk->snd_una < sk->cwnd;
	app = app || (sk->snd_wnd < sk->cwnd && tcp_seq_gt(end + mss, wnd_end));
	if (app)
		b->mk_app |= (uint8_t)(1u << i);
	else
		b->mk_app &= (uint8_t)~(1u << i);
	b->mk_n++;
}

/* Pops the markers delivered by now (and the lost ones older than
 * them): rate samples into the filter, the smallest send-to-ACK time into
 * *rtt_us (UINT32_MAX: none). */
static void bbr_sample(struct tcp_sock *sk, sk_time_ns now, uint32_t *rtt_us)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	uint32_t t = bbr_us(now);
	*rtt_us = UINT32_MAX;
	for (;;) {
		unsigned k = 0;
		while (k < b->mk_n && !bbr_delivered_to(sk, b->mk_end[(b->mk_head + k) % BBR_MARKS]))
			k++;
		if (k == b->mk_n)
			return; /* none delivered yet */
		/* The k before it are in holes: lost, or late.  Either way
		 * their own ACK would time a repair, not the path. */
		b->mk_head = (uint8_t)((b->mk_head + k) % BBR_MARKS);
		b->mk_n = (uint8_t)(b->mk_n - k);
		unsigned i = b->mk_head;
		uint32_t sent = b->mk_sent_us[i];
		bool app = b->mk_app & (1u << i);
		b->mk_head = (uint8_t)((i + 1) % BBR_MARKS);
		b->mk_n--;
		*rtt_us = SK_MIN(*rtt_us, SK_MAX(t - sent, 1u));
		if (b->fl & BBR_F_TRAIN) {
			uint32_t bytes = b->delivered - b->l_delivered;
			uint32_t iv = SK_MAX(t - b->l_ack_us, sent - b->l_sent_us);
			if (bytes && iv) {
				uint64_t bw = (uint64_t)bytes * 1000000 / iv;
				bbr_bw_sample(b, (uint32_t)SK_MIN(bw, (uint64_t)UINT32_MAX), app);
			}
		}
		b->l_delivered = b->delivered;
		b->l_ack_us = t;
		b->l_sent_us = sent;
		b->fl |= BBR_F_TRAIN;
	}
}

/* A round ends when an ACK delivers data sent after it began. */
static void bbr_round(struct tcp_sock *sk, uint32_t delivered)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	b->fl &= ~BBR_F_ROUND_START;
	if (!delivered || !bbr_delivered_past(sk, b->round_end))
		return;
	b->round_end = sk->snd_max;
	b->round++;
	b->bw[b->round % BBR_BW_ROUNDS] = 0; /* the slot of the round 10 ago */
	b->fl |= BBR_F_ROUND_START;
}

static void bbr_enter_probe_bw(struct tcp_sock *sk, sk_time_ns now)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	b->mode = BBR_PROBE_BW;
	/* A random phase other than the 3/4 one (the draft's choice), from
	 * what is random about the connection. */
	uint32_t r = (sk->iss ^ sk->ts_off ^ b->round) % (BBR_CYCLE_LEN - 1);
	b->cycle = (uint8_t)((BBR_CYCLE_LEN - 1 - r + 1) % BBR_CYCLE_LEN);
	b->cycle_at = now;
}

static void bbr_check_cycle(struct tcp_sock *sk, uint32_t prior_inflight, sk_time_ns now)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	if (b->mode != BBR_PROBE_BW)
		return;
	uint32_t gain = bbr_cycle_gain[b->cycle];
	bool full = b->min_rtt_us != UINT32_MAX &&
		    now - b->cycle_at > (sk_time_ns)b->min_rtt_us * SK_NS_PER_US;
	bool next;
	if (gain == BBR_UNIT)
		next = full;
	else if (gain > BBR_UNIT)
		next = full && ((sk->fl & TF_RECOVERY) || prior_inflight >= bbr_inflight(sk, gain));
	else
		next = full || prior_inflight <= bbr_inflight(sk, BBR_UNIT);
	if (next) {
		b->cycle = (uint8_t)((b->cycle + 1) % BBR_CYCLE_LEN);
		b->cycle_at = now;
	}
}

static void bbr_check_full_pipe(struct tcp_bbr *b)
{
	if ((b->fl & (BBR_F_FILLED | BBR_F_LAST_APP)) || !(b->fl & BBR_F_ROUND_START))
		return;
	uint32_t bw = bbr_btl_bw(b);
	if ((uint64_t)bw * BBR_FULL_BW_DEN >= (uint64_t)b->full_bw * BBR_FULL_BW_NUM) {
		b->full_bw = bw; /* still growing */
		b->full_cnt = 0;
		return;
	}
	if (++b->full_cnt >= BBR_FULL_BW_ROUNDS)
		b->fl |= BBR_F_FILLED;
}

static void bbr_save_cwnd(struct tcp_sock *sk)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	if (!(sk->fl & TF_RECOVERY) && !(b->fl & BBR_F_RTO) && b->mode != BBR_PROBE_RTT)
		b->prior_cwnd = sk->cwnd;
	else
		b->prior_cwnd = SK_MAX(b->prior_cwnd, sk->cwnd);
}

static void bbr_probe_rtt(struct tcp_sock *sk, bool expired, uint32_t inflight, sk_time_ns now)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	uint32_t mss = tcp_eff_mss(sk);
	if (b->mode != BBR_PROBE_RTT && expired) {
		bbr_save_cwnd(sk);
		b->mode = BBR_PROBE_RTT;
		b->probe_rtt_done = 0;
	}
	if (b->mode != BBR_PROBE_RTT)
		return;
	if (!b->probe_rtt_done) {
		if (inflight <= BBR_MIN_CWND_SEGS * mss) {
			b->probe_rtt_done = now + BBR_PROBE_RTT_TIME;
			b->fl &= ~BBR_F_RTT_ROUND;
			b->round_end = sk->snd_max;
		}
		return;
	}
	if (b->fl & BBR_F_ROUND_START)
		b->fl |= BBR_F_RTT_ROUND;
	if ((b->fl & BBR_F_RTT_ROUND) && now >= b->probe_rtt_done) {
		b->min_rtt_at = now;
		sk->cwnd = SK_MAX(sk->cwnd, b->prior_cwnd);
		if (b->fl & BBR_F_FILLED) {
			bbr_enter_probe_bw(sk, now);
		} else {
			b->mode = BBR_STARTUP;
		}
	}
}

/* The window outside recovery and after its first round: grows by what is
 * delivered; once the pipe was found full, no further than the target;
 * before, no further than the target unless it is already past it. */
static void bbr_grow(struct tcp_sock *sk, uint32_t delivered)
{
	const struct tcp_bbr *b = &sk->cc.bbr;
	uint32_t target = bbr_inflight(sk, bbr_cwnd_gain(b));
	uint64_t w = (uint64_t)sk->cwnd + delivered;
	if (b->fl & BBR_F_FILLED)
		w = SK_MIN(w, (uint64_t)target);
	else if (sk->cwnd >= target)
		w = sk->cwnd;
	sk->cwnd = (uint32_t)SK_MIN(w, (uint64_t)TCP_CWND_MAX);
}

/* The window (see the top for recovery and timeouts).  A NewReno
 * recovery (no SACK) stays the engine's, as before. */
static void bbr_set_cwnd(struct tcp_sock *sk, uint32_t delivered, uint32_t inflight)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	if ((b->fl & BBR_F_RTO) && tcp_seq_ge(sk->snd_una, b->rec_end)) {
		/* Everything sent before the timeout is acked. */
		b->fl &= (uint8_t)~BBR_F_RTO;
		sk->cwnd = SK_MAX(sk->cwnd, b->prior_cwnd);
	}
	bool chained = b->rec_ended;
	b->rec_ended = 0;
	if (tcp_sack_recovery(sk)) {
		if (!(b->fl & BBR_F_REC) && chained) {
			/* The engine began this episode on the ACK that ended
			 * the last (a hole above its end was already lost): to
			 * BBR it is the same recovery, long past its first
			 * round, so no new round of packet conservation.  The
			 * engine's start cut the window to the flight plus a
			 * segment for that ACK's sends; the window it cut (as
			 * BBR had set it on the ending ACK: restored, then
			 * grown to at most the target) is undo_cwnd. */
			b->fl |= BBR_F_REC;
			b->rec_end = sk->snd_max;
			sk->cwnd = SK_MAX(sk->cwnd, sk->undo_cwnd);
		} else if (!(b->fl & BBR_F_REC)) {
			b->fl |= BBR_F_REC | BBR_F_CONSERVE;
			b->rec_end = sk->snd_max;
		} else if ((b->fl & BBR_F_CONSERVE) && bbr_delivered_past(sk, b->rec_end)) {
			b->fl &= (uint8_t)~BBR_F_CONSERVE;
		}
		if (b->fl & BBR_F_CONSERVE)
			sk->cwnd = SK_MAX(sk->cwnd, inflight + delivered);
		else
			bbr_grow(sk, delivered);
		/* The engine ends the episode at ssthresh: at least the saved
		 * window, and never below what BBR has grown to since. */
		sk->ssthresh = SK_MAX(b->prior_cwnd, sk->cwnd);
		return;
	}
	if (b->fl & BBR_F_REC) {
		/* The episode ended (or was undone): the engine set cwnd to
		 * ssthresh, at least the saved window. */
		b->fl &= (uint8_t)~(BBR_F_REC | BBR_F_CONSERVE);
		sk->cwnd = SK_MAX(sk->cwnd, b->prior_cwnd);
		b->rec_ended = 1;
	}
	if (!(sk->fl & TF_RECOVERY))
		bbr_grow(sk, delivered);
}

static void bbr_on_delivery(struct tcp_sock *sk, uint32_t delivered, sk_time_ns now)
{
	struct tcp_bbr *b = &sk->cc.bbr;
	uint32_t mss = tcp_eff_mss(sk);
	uint32_t inflight = tcp_pipe(sk);
	uint32_t prior_inflight = inflight + delivered;
	b->delivered += delivered;

	/* The model: rounds, BtlBw, then the states. */
	uint32_t rtt_us;
	bbr_round(sk, delivered);
	bbr_sample(sk, now, &rtt_us);
	bbr_check_cycle(sk, prior_inflight, now);
	bbr_check_full_pipe(b);
	if (b->mode == BBR_STARTUP && (b->fl & BBR_F_FILLED))
		b->mode = BBR_DRAIN;
	if (b->mode == BBR_DRAIN && inflight <= bbr_inflight(sk, BBR_UNIT))
		bbr_enter_probe_bw(sk, now);
	/* RTprop: a smaller sample, or any once the last is 10 s old. */
	bool expired = now - b->min_rtt_at > BBR_MIN_RTT_WIN;
	if (rtt_us != UINT32_MAX && (rtt_us <= b->min_rtt_us || expired)) {
		b->min_rtt_us = rtt_us;
		b->min_rtt_at = now;
	}
	bbr_probe_rtt(sk, expired, inflight, now);

	/* Control: pacing rate (never lowered in startup: an early sample
	 * may be short), then the window. */
	uint32_t bw = bbr_btl_bw(b);
	if (bw) {
		uint64_t rate = (uint64_t)bw * bbr_pacing_gain(b) / BBR_UNIT;
		if (rate && ((b->fl & BBR_F_FILLED) || rate > sk->pacing_rate))
			sk->pacing_rate = rate;
	}
	bbr_set_cwnd(sk, delivered, inflight);
	sk->cwnd = SK_MAX(sk->cwnd, BBR_MIN_CWND_SEGS * mss);
	if (b->mode == BBR_PROBE_RTT)
		sk->cwnd = SK_MIN(sk->cwnd, BBR_MIN_CWND_SEGS * mss);
}

static unsigned bbr_on_ack(struct tcp_sock *sk, uint32_t acked, sk_time_ns now)
{
	(void)sk;
	(void)acked;
	(void)now;
	return 0; /* on_delivery, which sees every ACK, does the work */
}

static void bbr_on_rtt(struct tcp_sock *sk, uint32_t rtt_us, sk_time_ns now)
{
	(void)rtt_us;
	(void)now;
	if (!bbr_btl_bw(&sk->cc.bbr))
		bbr_nominal_rate(sk);
}

/* A loss is not a signal here: keep the window, remember it. */
static uint32_t bbr_ssthresh(struct tcp_sock *sk, uint32_t base, sk_time_ns now)
{
	(void)base;
	(void)now;
	bbr_save_cwnd(sk);
	return SK_MAX(sk->cc.bbr.prior_cwnd, BBR_MIN_CWND_SEGS * tcp_eff_mss(sk));
}

/* Everything in flight is resent: the markers time nothing now.  The
 * engine set cwnd to one segment; the episode lasts until what was sent
 * before it is acked (then the saved window comes back). */
static void bbr_on_rto(struct tcp_sock *sk, sk_time_ns now)
{
	(void)now;
	struct tcp_bbr *b = &sk->cc.bbr;
	b->mk_n = 0;
	b->fl &= (uint8_t)~(BBR_F_TRAIN | BBR_F_REC | BBR_F_CONSERVE);
	b->fl |= BBR_F_RTO;
	b->rec_end = sk->snd_max;
}

static const char *bbr_model(const struct tcp_sock *sk, uint64_t *bw)
{
	static const char *const names[] = {"startup", "drain", "probe_bw", "probe_rtt"};
	const struct tcp_bbr *b = &sk->cc.bbr;
	*bw = bbr_btl_bw(b);
	return b->mode < SK_ARRAY_LEN(names) ? names[b->mode] : "?";
}

static void bbr_on_undo(struct tcp_sock *sk, sk_time_ns now)
{
	(void)sk;
	(void)now;
}

const struct tcp_cc_ops tcp_cc_bbr = {
	.name = "bbr",
	.init = bbr_init,
	.on_ack = bbr_on_ack,
	.on_rtt = bbr_on_rtt,
	.ssthresh = bbr_ssthresh,
	.on_rto = bbr_on_rto,
	.on_undo = bbr_on_undo,
	.on_send = bbr_on_send,
	.on_delivery = bbr_on_delivery,
	.model = bbr_model,
	.owns_recovery_cwnd = true,
};
