/* tcp_recovery.c — the sender's view of what the peer holds: the SACK
 * scoreboard's queries (RFC 6675's IsLost and pipe), Proportional Rate
 * Reduction (RFC 6937) and Eifel's undo of a spurious episode (RFC 3522).
 * Pure functions of the socket; tcp_in.c decides when, tcp_out.c sends. */
#include "tcp_cc.h"
#include "tcp_int.h"

uint32_t tcp_sacked_bytes(const struct tcp_sock *sk)
{
	const struct tcp_range *a = tcp_score_c(sk);
	uint32_t n = 0;
	for (uint32_t i = 0; i < sk->nscore; i++)
		n += a[i].r - a[i].l;
	return n;
}

uint32_t tcp_rack_edge(const struct tcp_sock *sk)
{
	if ((sk->fl & TF_RACK) && tcp_seq_gt(sk->rack_edge, sk->snd_una) &&
	    tcp_seq_le(sk->rack_edge, sk->snd_max))
		return sk->rack_edge;
	return sk->snd_una;
}

/* RFC 6675 4's IsLost(seq) holds when more than (DupThresh - 1) * SMSS
 * bytes, or DupThresh discontiguous ranges, are SACKed above seq.  The
 * scoreboard is sorted, so every hole below the returned sequence is lost
 * and none above it is yet. */
uint32_t tcp_lost_edge(const struct tcp_sock *sk)
{
	const struct tcp_range *a = tcp_score_c(sk);
	uint32_t mss = tcp_eff_mss(sk), above = 0;
	for (int i = (int)sk->nscore - 1; i >= 0; i--) {
		above += a[i].r - a[i].l;
		if (above > (TCP_DUPTHRESH - 1) * mss || (unsigned)(sk->nscore - i) >= TCP_DUPTHRESH)
			return tcp_seq_max(a[i].l, tcp_rack_edge(sk));
	}
	return tcp_rack_edge(sk);
}

/* The first range that ends above seq (nscore: none); binary search, as
 * a pooled board holds up to TCP_SCORE_BIG ranges and the send path asks
 * once per segment. */
static uint32_t tcp_score_find(const struct tcp_sock *sk, uint32_t seq)
{
	const struct tcp_range *a = tcp_score_c(sk);
	uint32_t lo = 0, hi = sk->nscore;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (tcp_seq_le(a[mid].r, seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t tcp_next_hole(const struct tcp_sock *sk, uint32_t seq, uint32_t end, uint32_t *start)
{
	const struct tcp_range *a = tcp_score_c(sk);
	uint32_t i = tcp_score_find(sk, seq);
	if (i < sk->nscore && tcp_seq_le(a[i].l, seq))
		seq = a[i++].r; /* inside a range: the hole starts at its end */
	*start = seq;
	if (!tcp_seq_lt(seq, end))
		return 0;
	return (i < sk->nscore ? tcp_seq_min(a[i].l, end) : end) - seq;
}

/* The bytes of the holes in [seq, end): all of it less what is SACKed. */
static uint32_t tcp_hole_bytes(const struct tcp_sock *sk, uint32_t seq, uint32_t end)
{
	if (!tcp_seq_lt(seq, end))
		return 0;
	const struct tcp_range *a = tcp_score_c(sk);
	uint32_t sum = end - seq;
	for (uint32_t i = tcp_score_find(sk, seq); i < sk->nscore; i++) {
		if (!tcp_seq_lt(a[i].l, end))
			break;
		sum -= tcp_seq_min(a[i].r, end) - tcp_seq_max(a[i].l, seq);
	}
	return sum;
}

/* RFC 6675 4's pipe, counted in bytes: what is outstanding, less what the
 * peer SACKed, less the lost holes not resent yet.  A hole resent in this
 * episode (below rtx_hi) is in flight again, unless its retransmission
 * was found lost too (TF_RTX_REDO: the holes from rtx_hi to rtx_chk_end
 * wait to be resent once more, those from there to rtx_redo_hi are in
 * flight). */
uint32_t tcp_pipe(const struct tcp_sock *sk)
{
	uint32_t pipe = (sk->snd_max - sk->snd_una) - tcp_sacked_bytes(sk);
	uint32_t edge = tcp_lost_edge(sk);
	uint32_t seq = tcp_seq_max(sk->rtx_hi, sk->snd_una), lost = 0;
	if (sk->fl & TF_RTX_REDO) {
		lost = tcp_hole_bytes(sk, seq, sk->rtx_chk_end);
		seq = tcp_seq_max(seq, tcp_seq_max(sk->rtx_redo_hi, sk->rtx_chk_end));
	}
	lost += tcp_hole_bytes(sk, seq, edge);
	return pipe > lost ? pipe - lost : 0;
}

/* Lost retransmissions (RFC 8985 6.2).  A hole's retransmission is lost
 * when data sent after it has reached the peer and it has not, more than
 * a round trip (plus RACK's reordering allowance, a quarter of one) after
 * it left.  Without a send time per segment, one check at a time stands
 * for RACK's per-segment rule: the retransmission ending at rtx_chk_end
 * and every resent hole below it left at or before rtx_chk_us, when
 * snd_max was rtx_chk_snd; an ACK later than that allowance that shows
 * data above rtx_chk_snd delivered (first sent after them) finds a hole
 * still open below rtx_chk_end lost.  For BBR lateness alone does, as
 * it was measured; for CUBIC that lost at 10 ms (0.64x and 0.81x),
 * likely where a receiver's delayed ACK (40 ms on Linux) of data sent
 * before them is later than the allowance (a fit, not a capture).
 * Without this only the RTO finds it: at 1-2 % loss each way a
 * retransmission is lost in most transfers of a few MB, and the timeout
 * costs the window and 200 ms or more.  For every algorithm since
 * 2026-12-06 (BBR only before). */

/* RACK's reordering allowance here: a quarter of srtt, at least 1 ms. */
static uint32_t tcp_reo_wnd_us(const struct tcp_sock *sk)
{
	return SK_MAX(sk->srtt_us / 4, 1000u);
}

/* The wait after the check's retransmissions: a round trip plus RACK's
 * reordering allowance (a quarter of one, at least 1 ms) when an ACK
 * shows data sent after them delivered; with no ACK at all (the tail, or
 * a send buffer full behind the hole: nothing new goes out to be SACKed)
 * the timer waits for twice the variation more, still far below the
 * RTO's 200 ms floor at these round trips, and without its collapse of
 * the window. */
static uint32_t tcp_rtx_chk_wait_us(const struct tcp_sock *sk, bool timer)
{
	uint32_t w = sk->srtt_us + tcp_reo_wnd_us(sk);
	if (!timer)
		return w;
	w += 2 * sk->rttvar_us;
	/* A lone segment (and FIN) out, just resent: the peer may delay its
	 * ACK, as RFC 8985 7.2's probe timeout allows for one segment in
	 * flight; 40 ms is Linux's least delayed ACK and ours.  Without it
	 * the check resent a transfer's last segment whose ACK the test
	 * receiver had delayed (test_tail_lost_as_episode_ends).  Not for a
	 * tail check (timed from new_us, tcp_tail_check): a repair sent after
	 * the tail has arrived and the tail has not, delayed ACK or not. */
	if (sk->snd_max - sk->snd_una <= (uint32_t)tcp_eff_mss(sk) + 1 && sk->rtx_chk_us != sk->new_us)
		w += TCP_PEER_DELACK_US;
	return w;
}

/* When the pending check's timer is due (SK_TIME_NEVER: none applies). */
sk_time_ns tcp_rtx_chk_deadline(const struct tcp_sock *sk, sk_time_ns now)
{
	if (!(sk->fl & TF_RTX_CHK) || !sk->srtt_us || !tcp_seq_gt(sk->rtx_chk_end, sk->snd_una) ||
	    !tcp_sack_recovery(sk))
		return SK_TIME_NEVER;
	uint32_t age = (uint32_t)(now / SK_NS_PER_US) - sk->rtx_chk_us;
	uint32_t wait = tcp_rtx_chk_wait_us(sk, true);
	return now + (sk_time_ns)(age < wait ? wait - age : 0) * SK_NS_PER_US;
}

/* The check's timer goes before the RTO's deadline (tcp_rearm_rtx takes
 * the earlier of the two whenever it re-arms). */
static void tcp_rtx_chk_arm(struct tcp_sock *sk, sk_time_ns now)
{
	sk_time_ns at = tcp_rtx_chk_deadline(sk, now);
	if (at < sk->rtx_at) {
		sk->rtx_at = at;
		sk->fl = (sk->fl & ~(uint32_t)TF_PTO) | TF_RTX_TMR;
	}
}

/* A check from now: every hole below `end` was last sent at or before
 * `us`. */
static void tcp_rtx_chk_begin(struct tcp_sock *sk, sk_time_ns now, uint32_t end, uint32_t us)
{
	sk->rtx_chk_end = end;
	sk->rtx_chk_us = us;
	sk->rtx_chk_snd = sk->snd_max;
	sk->fl |= TF_RTX_CHK;
	tcp_rtx_chk_arm(sk, now);
}

/* The check found the holes below its end lost again: the retransmission
 * point goes back to resend them (tcp_output_data), and then up past the
 * holes resent after them (tcp_rtx_redo_done). */
static void tcp_rtx_lost_again(struct tcp_stack *st, struct tcp_sock *sk)
{
	st->stats.lost_retransmits++;
	sk->fl = (sk->fl & ~(uint32_t)TF_RTX_CHK) | TF_RTX_REDO;
	sk->rtx_redo_hi = tcp_seq_max(sk->rtx_hi, sk->rtx_chk_end);
	sk->rtx_hi = sk->snd_una;
}

/* A retransmission ending at `end` left now (rtx_last_us): it starts a
 * check unless one is under way (its holes are covered by the next one)
 * or holes found lost again are being resent (tcp_rtx_redo_done starts
 * the next). */
void tcp_rtx_check_start(struct tcp_sock *sk, sk_time_ns now, uint32_t end)
{
	uint32_t us = (uint32_t)(now / SK_NS_PER_US);
	sk->rtx_last_us = us;
	if (sk->fl & TF_RTX_REDO)
		return; /* the redo's resends: tcp_rtx_redo_done checks them */
	if (!(sk->fl & TF_RTX_CHK)) {
		tcp_rtx_chk_begin(sk, now, end, us);
		return;
	}
	/* A check is under way.  Resends of the same burst (within a quarter
	 * of RACK's allowance of its latest) join it, or the next check if
	 * that has begun; the time moves to the latest, so every hole stays
	 * at or before it (a join can only make the wait longer).  Later
	 * bursts are the next check's after that: rtx_last_us. */
	uint32_t near = tcp_reo_wnd_us(sk) / 4;
	if (!(sk->fl & TF_RTX_NX) && us - sk->rtx_chk_us <= near) {
		sk->rtx_chk_end = tcp_seq_max(sk->rtx_chk_end, end);
		sk->rtx_chk_us = us;
		sk->rtx_chk_snd = sk->snd_max;
	} else if (!(sk->fl & TF_RTX_NX)) {
		sk->rtx_nx_end = end;
		sk->rtx_nx_us = us;
		sk->fl |= TF_RTX_NX;
	} else if (us - sk->rtx_nx_us <= near) {
		sk->rtx_nx_end = tcp_seq_max(sk->rtx_nx_end, end);
		sk->rtx_nx_us = us;
	}
}

/* The check that was under way is over (or none began after a redo): the
 * next covers the first burst resent after it, from that burst's own
 * time, or else every hole resent above snd_una, from the latest resend. */
static void tcp_rtx_chk_next(struct tcp_sock *sk, sk_time_ns now)
{
	bool nx = sk->fl & TF_RTX_NX;
	sk->fl &= ~(uint32_t)(TF_RTX_CHK | TF_RTX_NX);
	if (!tcp_sack_recovery(sk))
		return;
	if (nx && tcp_seq_gt(sk->rtx_nx_end, sk->snd_una))
		tcp_rtx_chk_begin(sk, now, sk->rtx_nx_end, sk->rtx_nx_us);
	else if (tcp_seq_gt(sk->rtx_hi, sk->snd_una))
		tcp_rtx_chk_begin(sk, now, sk->rtx_hi, sk->rtx_last_us);
}

/* Every ACK (after its acknowledgment and SACK blocks are in): the check
 * is over when snd_una passes its end (the next one takes the holes
 * resent above it, if any); in a SACK recovery, an ACK that
 * delivered something past the allowance finds the holes below the end
 * lost again, and the retransmission point goes back to resend them
 * (tcp_output_data; the holes above them stay in flight). */
void tcp_rtx_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t delivered)
{
	if (!(sk->fl & TF_RTX_CHK))
		return;
	if (!tcp_seq_gt(sk->rtx_chk_end, sk->snd_una)) {
		/* Holes resent while it ran, above its end, had no check of
		 * their own: the next covers them.  Without it a lost one
		 * among them waited for the RTO, 200 ms or more (seen at
		 * 10 ms, 2 % loss). */
		tcp_rtx_chk_next(sk, now);
		if (!(sk->fl & TF_RTX_CHK))
			return;
	}
	if (!delivered || !sk->srtt_us || !tcp_sack_recovery(sk))
		return;
	uint32_t age = (uint32_t)(now / SK_NS_PER_US) - sk->rtx_chk_us;
	if (age <= tcp_rtx_chk_wait_us(sk, false))
		return;
	/* For CUBIC and NewReno, something first sent after the
	 * retransmissions has arrived, not only a late ACK (a receiver's
	 * delayed one, 40 ms on Linux, is later than the wait at short round
	 * trips) of data sent before.  BBR keeps lateness alone: with the
	 * stricter rule it moved 0.68-0.84x as much at 10 ms and at 50 ms
	 * 2 % (bench-tcp.md, "The lost-retransmission check for CUBIC"). */
	if (!tcp_cc(sk)->owns_recovery_cwnd) {
		uint32_t top = sk->nscore ? tcp_score_c(sk)[sk->nscore - 1].r : sk->snd_una;
		if (!tcp_seq_gt(tcp_seq_max(top, sk->snd_una), sk->rtx_chk_snd))
			return;
	}
	tcp_rtx_lost_again(st, sk);
}

/* The tail in a SACK episode (RFC 8985's rule, with the one send time
 * kept for new data).  Every resent hole is acked (rtx_hi at snd_una),
 * none is known lost, and the latest retransmission, which left after the
 * last new data (new_us), was delivered: so everything still outstanding
 * was sent before something that has arrived.  A check for lost
 * retransmissions then covers it as if it were resent at new_us: the
 * next ACK later than the check's allowance, or the check's timer, finds
 * it lost and resends it.  Nothing else would: no SACK comes from above
 * the transfer's last segment, and the TLP does not probe in recovery;
 * the RTO did, 200 ms later and with the window down to a segment
 * (bench-tcp at 10 ms and 2 %: 0.2 s of a 0.9 s transfer, the last
 * segment and its FIN lost after the holes' repair;
 * test_tail_lost_in_recovery). */
/* What both tail rules ask (BBR only, as measured; see tcp_tail_check):
 * something outstanding, every resent hole acked, the latest repair left
 * more than `after` us past the last new data, and no hole known lost.
 * The scoreboard's walk comes last: it runs on every ACK of an episode. */
static bool tcp_tail_after_repair(const struct tcp_sock *sk, int32_t after)
{
	return tcp_cc(sk)->owns_recovery_cwnd && sk->srtt_us && sk->snd_una != sk->snd_max &&
	       !tcp_seq_gt(sk->rtx_hi, sk->snd_una) && (int32_t)(sk->rtx_last_us - sk->new_us) > after &&
	       !tcp_seq_gt(tcp_lost_edge(sk), sk->snd_una);
}

void tcp_tail_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t delivered)
{
	/* BBR only, as measured: CUBIC moved the same (0.985 of before over
	 * 23 paired runs at 10 and 25 ms, 1-2 %) with seven spurious undos
	 * where it had one (bench-tcp.md, "The tail in an episode"). */
	if (!delivered || (sk->fl & (TF_RTX_CHK | TF_RTX_REDO)) || !tcp_sack_recovery(sk) ||
	    !tcp_tail_after_repair(sk, 0))
		return;
	st->stats.tail_checks++;
	tcp_rtx_chk_begin(sk, now, sk->snd_max, sk->new_us);
	tcp_rtx_check(st, sk, now, delivered);
}

/* The same rule on the ACK that ends an episode, for what it leaves
 * outstanding with nothing above it to SACK: the tail was sent (new_us)
 * more than RACK's reordering allowance (a quarter of srtt, at least
 * 1 ms) before the latest repair (rtx_last_us), which has arrived, and it
 * has not: lost by RFC 8985's rule (the repair's own round trip stands for
 * RACK.rtt on both sides).  The RACK edge at snd_max makes it so: the
 * engine begins an episode on this ACK that resends it (with the FIN, if
 * the FIN went with it).
 * Otherwise the TLP would find it, and for a single segment its timeout
 * waits for a delayed ACK as well (200 ms more): on the path at 10 ms
 * and 2 %, a transfer's last 344 bytes and FIN left 0.2 s after
 * everything else was acked, a third of the transfer's 0.59 s.  BBR only,
 * as tcp_tail_check. */
void tcp_tail_at_end(struct tcp_sock *sk)
{
	if (!(sk->fl & TF_SACK) || !tcp_tail_after_repair(sk, (int32_t)tcp_reo_wnd_us(sk)))
		return;
	sk->rack_edge = sk->snd_max;
	sk->fl |= TF_RACK;
}

/* The holes found lost again are all resent (or acked): the
 * retransmission point goes back up past the holes resent after them,
 * and a check covers the resends, the last of which left by now. */
void tcp_rtx_redo_done(struct tcp_sock *sk, sk_time_ns now)
{
	sk->fl &= ~(uint32_t)TF_RTX_REDO;
	sk->rtx_hi = tcp_seq_max(sk->rtx_hi, sk->rtx_redo_hi);
	if (tcp_seq_gt(sk->rtx_chk_end, sk->snd_una))
		tcp_rtx_chk_begin(sk, now, sk->rtx_chk_end, (uint32_t)(now / SK_NS_PER_US));
	else
		tcp_rtx_chk_next(sk, now);
}

/* The check's timer fired: no ACK came to apply the rule, and the hole
 * is still open after the (longer) wait: its retransmission is lost.
 * Then the RTO's deadline again, from now. */
void tcp_rtx_check_timer(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	sk_time_ns at = tcp_rtx_chk_deadline(sk, now);
	if (at != SK_TIME_NEVER && at <= now) {
		st->stats.rtx_chk_timeouts++;
		tcp_rtx_lost_again(st, sk);
		tcp_egress(st, sk);
	}
	tcp_rearm_rtx(st, sk, now);
}

/* RFC 6937 3, with the slow-start reduction bound (PRR-SSRB): while more
 * is in flight than ssthresh, send in proportion to what the peer
 * delivered, so the flight falls smoothly to ssthresh by the end of the
 * episode; below it, grow back towards ssthresh no faster than slow start.
 * cwnd becomes pipe plus this ACK's quota. */
void tcp_prr_ack(struct tcp_sock *sk, uint32_t delivered)
{
	uint32_t mss = tcp_eff_mss(sk);
	uint32_t pipe = tcp_pipe(sk);
	sk->prr_delivered += delivered;
	int64_t sndcnt;
	if (pipe > sk->ssthresh) {
		uint64_t fs = sk->recover_fs ? sk->recover_fs : 1;
		uint64_t want = ((uint64_t)sk->prr_delivered * sk->ssthresh + fs - 1) / fs;
		sndcnt = (int64_t)want - (int64_t)sk->prr_out;
	} else {
		int64_t limit = (int64_t)sk->prr_delivered - (int64_t)sk->prr_out;
		if (limit < (int64_t)delivered)
			limit = delivered;
		limit += mss;
		sndcnt = SK_MIN((int64_t)(sk->ssthresh - pipe), limit);
	}
	if (sndcnt < 0)
		sndcnt = 0;
	sk->cwnd = pipe + (uint32_t)sndcnt;
}

/* The algorithm's ssthresh for the flight, where FlightSize leaves out
 * what limited transmit sent (RFC 5681 3.2 step 2): that went past cwnd,
 * so the flight is capped at cwnd.  FlightSize is what was outstanding when
 * the loss happened: the flight at the last send (sent_flight), not the
 * live one a batch of cumulative ACKs ahead of the hole has already shrunk.
 * Not cwnd alone: an application-limited flow's cwnd overstates what it
 * had in the network (RFC 9438 4.6). */
uint32_t tcp_loss_ssthresh(struct tcp_sock *sk, sk_time_ns now)
{
	uint32_t flight = SK_MIN(SK_MAX(sk->snd_max - sk->snd_una, sk->sent_flight), sk->cwnd);
	return tcp_cc(sk)->ssthresh(sk, flight, now);
}

void tcp_recovery_enter(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	if (sk->dupacks >= TCP_DUPTHRESH)
		st->stats.fast_retransmits++;
	else if (tcp_rack_edge(sk) != sk->snd_una && (sk->fl & TF_TLP_OUT))
		st->stats.tlp_recoveries++; /* the probe's answer showed the holes */
	else if (tcp_rack_edge(sk) != sk->snd_una)
		st->stats.tail_recoveries++; /* tcp_tail_at_end found the tail lost */
	else
		st->stats.sack_recoveries++; /* IsLost before three duplicate ACKs */
	tcp_undo_save(sk);
	sk->ssthresh = tcp_loss_ssthresh(sk, now);
	sk->recover = sk->snd_max;
	sk->fl |= TF_RECOVERY | TF_RTX_ONE; /* RFC 6675 (4.3): the first hole now */
	/* Holes the last episode resent above its end are in flight still
	 * (rtx_hi follows snd_una up, and only a retransmission takes it past
	 * snd_una): resending them again would be spurious, and its ACK,
	 * echoing the older copy's timestamp, would undo this episode (RFC
	 * 3522) while a real loss is being repaired. */
	if (!tcp_seq_gt(sk->rtx_hi, sk->snd_una) || tcp_seq_gt(sk->rtx_hi, sk->snd_max))
		sk->rtx_hi = sk->snd_una;
	else if (!(sk->fl & (TF_RTX_CHK | TF_RTX_REDO)))
		/* ...and a check covers them, from when the last of them left.
		 * The last episode's check ended on the ACK that ended it, and
		 * began no next one out of recovery: a lost one among them then
		 * waited for the RTO, with no ACK to come at the tail
		 * (test_bbr_chained_episode_checks_kept_holes). */
		tcp_rtx_chk_begin(sk, now, sk->rtx_hi, sk->rtx_last_us);
	sk->recover_fs = sk->snd_max - sk->snd_una;
	sk->prr_delivered = 0;
	sk->prr_out = 0;
	tcp_prr_ack(sk, 0);
}

void tcp_undo_save(struct tcp_sock *sk)
{
	sk->undo_cwnd = sk->cwnd;
	sk->undo_ssthresh = sk->ssthresh;
	sk->fl = (sk->fl | TF_UNDO) & ~(uint32_t)TF_UNDO_ARMED;
}

void tcp_undo_arm(struct tcp_sock *sk, sk_time_ns now, uint32_t seq)
{
	if ((sk->fl & (TF_UNDO | TF_UNDO_ARMED | TF_TS)) != (TF_UNDO | TF_TS))
		return;
	sk->undo_ts = tcp_ts_now(sk, now);
	sk->undo_seq = seq;
	sk->fl |= TF_UNDO_ARMED;
}

/* The first ACK for the retransmitted sequence decides the episode: an echo
 * of a TSval older than the retransmission's was caused by the original,
 * so nothing was lost (RFC 3522 2).  Equal values say nothing: the
 * retransmission went out in the same millisecond. */
bool tcp_undo_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
		    const struct tcp_hdr *h)
{
	if (!(sk->fl & TF_UNDO_ARMED) || !tcp_seq_gt(h->ack, sk->undo_seq))
		return false;
	sk->fl &= ~(uint32_t)(TF_UNDO | TF_UNDO_ARMED);
	if (!h->opts.has_ts || !h->opts.ts_ecr || (int32_t)(h->opts.ts_ecr - sk->undo_ts) >= 0)
		return false;
	st->stats.spurious_undos++;
	sk->cwnd = SK_MAX(sk->cwnd, sk->undo_cwnd);
	sk->ssthresh = SK_MAX(sk->ssthresh, sk->undo_ssthresh);
	tcp_cc(sk)->on_undo(sk, now);
	sk->fl &= ~(uint32_t)(TF_RECOVERY | TF_RTX_ONE | TF_RACK);
	sk->dupacks = 0;
	sk->recover = h->ack; /* a real loss later in this window may recover */
	/* RFC 4015 3.1 after a spurious timeout: carry on with new data rather
	 * than resend what the peer holds. */
	if (tcp_seq_lt(sk->snd_nxt, sk->snd_max))
		sk->snd_nxt = sk->snd_max;
	return true;
}

/* RFC 8985 7.2: the probe timeout, two round trips, plus the peer's
 * delayed-ACK allowance when only one segment is out (its ACK may be
 * held), at most the RTO; 0 when no probe applies: not SACK, no RTT yet, already in
 * recovery or after a timeout, or a probe is unanswered. */
sk_time_ns tcp_pto(const struct tcp_stack *st, const struct tcp_sock *sk)
{
	/* Any synchronized state: the closing ones too, where a transfer's
	 * tail is (the app closes after its last write), or a lost last
	 * segment waits for the RTO there. */
	if (!(sk->fl & TF_SACK) || (sk->fl & (TF_RECOVERY | TF_TLP_OUT)) || sk->backoff ||
	    !sk->srtt_us || !tcp_synchronized(sk))
		return 0;
	sk_time_ns pto = 2 * (sk_time_ns)sk->srtt_us * SK_NS_PER_US;
	if (sk->snd_max - sk->snd_una <= tcp_eff_mss(sk))
		pto += 200 * SK_NS_PER_MS; /* RFC 8985's WCDelAckT */
	if (pto < 10 * SK_NS_PER_MS)
		pto = 10 * SK_NS_PER_MS;
	(void)st;
	/* RFC 8985 7.2: where the RTO would come first, the probe takes its
	 * place, and a lone tail loss costs no window collapse. */
	return pto < sk->rto ? pto : sk->rto;
}
