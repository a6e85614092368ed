/* tcp_in.c — segment arrival (RFC 9293 3.10.7) with RFC 5961 hardening,
 * RFC 7323 PAWS, RFC 2018 SACK, RFC 5681/6582 congestion control on ACKs.
 *
 * tcp_input -> parse -> demux (hash) ->
 *   no connection: listener ? tcp_listen_input : RST reply
 *   SYN_SENT:      tcp_synsent_input
 *   otherwise:     tcp_sync_input -> PAWS -> acceptability -> RST -> SYN ->
 *                  ACK (tcp_ack_in) -> text (tcp_data_in) -> FIN
 * Nothing is sent from here for a connection: replies are queued
 * (TF_ACK_NOW + egress list) and leave in tcp_poll, one per batch.
 */
#include "../base/hist.h"
#include "tcp_cc.h"
#include "tcp_int.h"
#include "../wire/csum.h"
#include "../wire/icmp.h"
#include "../wire/icmp6.h"
#include "../wire/ipv4.h"
#include "../wire/ipv6.h"

static sk_time_ns tcp_ms(uint32_t ms)
{
	return (sk_time_ns)ms * SK_NS_PER_MS;
}

void tcp_keepalive_arm(struct tcp_sock *sk, sk_time_ns now)
{
	if (sk->fl & TF_KEEPALIVE)
		sk->keep_at = now + tcp_ms(sk->keep_idle_ms);
}

static uint32_t tcp_initial_cwnd(const struct tcp_sock *sk)
{
	return 10 * tcp_eff_mss(sk); /* RFC 6928 */
}

void tcp_open_from_syn(struct tcp_stack *st, struct tcp_sock *sk, const struct tcp_hdr *h,
		       sk_time_ns now)
{
	sk->irs = h->seq;
	sk->rcv_nxt = h->seq + 1;
	sk->rcv_adv = sk->rcv_nxt;
	sk->last_ack_sent = sk->rcv_nxt;
	uint32_t mss = h->opts.has_mss ? h->opts.mss : 536;
	mss = SK_MIN(mss, (uint32_t)tcp_our_mss(st, &sk->raddr));
	sk->snd_mss = (uint16_t)SK_MAX(mss, 64u);
	if (h->opts.has_ws) {
		sk->fl |= TF_WS;
		sk->snd_wscale = h->opts.ws;
	} else {
		sk->fl &= ~(uint32_t)TF_WS;
		sk->snd_wscale = 0;
		sk->rcv_wscale = 0;
	}
	if (h->opts.sack_perm)
		sk->fl |= TF_SACK;
	else
		sk->fl &= ~(uint32_t)TF_SACK;
	if (h->opts.has_ts) {
		sk->fl |= TF_TS;
		sk->ts_recent = h->opts.ts_val;
		sk->ts_recent_age = now;
	} else {
		sk->fl &= ~(uint32_t)TF_TS;
	}
	sk->snd_wnd = h->win; /* never scaled in a SYN (RFC 7323 2.2) */
	sk->max_sndwnd = sk->snd_wnd;
	sk->snd_wl1 = h->seq;
	sk->snd_wl2 = h->ack;
	sk->cwnd = tcp_initial_cwnd(sk);
	sk->recover = sk->iss;
	sk->rtx_hi = sk->snd_una; /* then it follows snd_una up (tcp_ack_in) */
}

static void tcp_count_parse_error(struct tcp_stack *st, int r)
{
	switch (r) {
	case WIRE_ETRUNC:
		st->stats.drop_parse_trunc++;
		break;
	case WIRE_EBADLEN:
		st->stats.drop_parse_len++;
		break;
	case WIRE_ECSUM:
		st->stats.drop_parse_csum++;
		break;
	case WIRE_EOPT:
		st->stats.drop_parse_opt++;
		break;
	default:
		st->stats.drop_parse_other++;
		break;
	}
}

/* ---- LISTEN ---- */

static void tcp_inherit(struct tcp_sock *sk, const struct tcp_sock *l)
{
	sk->fl |= l->fl & (TF_NODELAY | TF_KEEPALIVE | TF_SLOCK | TF_RLOCK);
	sk->smax = l->smax;
	sk->rmax = l->rmax;
	sk->keep_idle_ms = l->keep_idle_ms;
	sk->keep_intvl_ms = l->keep_intvl_ms;
	sk->keep_cnt = l->keep_cnt;
	sk->user_timeout_ms = l->user_timeout_ms;
	sk->fl |= TF_PASSIVE;
}

static void tcp_sync_input(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
			   const struct tcp_hdr *h, const uint8_t *data);

/* The third segment of a handshake we answered with a cookie. */
static void tcp_cookie_ack(struct tcp_stack *st, struct tcp_sock *l, sk_time_ns now,
			   const struct sk_addr *src, const struct sk_addr *dst,
			   const struct tcp_hdr *h, const uint8_t *data)
{
	uint16_t mss = 0;
	if (st->cfg.syn_cookies)
		mss = tcp_cookie_check(st, now, dst, h->dport, src, h->sport, h->seq - 1, h->ack - 1);
	if (!mss) {
		st->stats.cookies_failed++;
		tcp_reply_rst(st, now, dst, src, h);
		return;
	}
	if (l->acc_n >= l->backlog) {
		st->stats.accept_queue_full++;
		return;
	}
	struct tcp_sock *sk = tcp_sock_alloc(st);
	if (!sk) {
		st->stats.drop_no_memory++;
		return;
	}
	st->stats.cookies_validated++;
	tcp_conn_init(st, sk, now, dst, h->dport, src, h->sport);
	tcp_inherit(sk, l);
	sk->iss = h->ack - 1;
	sk->snd_una = sk->snd_nxt = sk->snd_max = h->ack;
	sk->sbuf_seq = h->ack;
	sk->irs = h->seq - 1;
	sk->rcv_nxt = h->seq;
	sk->rcv_adv = h->seq + SK_MIN(st->cfg.rcvbuf, 65535u);
	sk->last_ack_sent = h->seq;
	sk->snd_mss = SK_MIN(mss, tcp_our_mss(st, &sk->raddr));
	sk->snd_wscale = 0;
	sk->rcv_wscale = 0;
	if (h->opts.has_ts) {
		uint32_t bits = h->opts.ts_ecr & 0x3f;
		sk->fl |= TF_TS;
		sk->ts_recent = h->opts.ts_val;
		sk->ts_recent_age = now;
		if ((bits & 0xf) != 0xf) {
			sk->fl |= TF_WS;
			sk->snd_wscale = (uint8_t)SK_MIN(bits & 0xf, 14u);
			sk->rcv_wscale = st->rcv_wscale;
		}
		if (bits & 0x10)
			sk->fl |= TF_SACK;
	}
	sk->snd_wnd = (uint32_t)h->win << sk->snd_wscale;
	sk->max_sndwnd = sk->snd_wnd;
	sk->snd_wl1 = h->seq;
	sk->snd_wl2 = h->ack;
	sk->cwnd = tcp_initial_cwnd(sk);
	sk->recover = sk->iss;
	sk->rtx_hi = sk->snd_una; /* then it follows snd_una up (tcp_ack_in) */
	sk->state = TCP_ESTABLISHED;
	sk->quickacks = TCP_QUICKACKS;
	tcp_keepalive_arm(sk, now);
	tcp_hash_insert(st, sk);
	st->stats.passive_opens++;
	st->stats.established++;
	sk->parent = l;
	l->acc_n++;
	tcp_list_add_tail(&l->accq, &sk->q);
	tcp_event(st, l, TCP_EV_ACCEPT);
	if (h->payload_len || (h->flags & TCP_FIN))
		tcp_sync_input(st, sk, now, h, data);
	if (sk->in_use)
		tcp_timer_sync(st, sk);
}

static void tcp_listen_input(struct tcp_stack *st, struct tcp_sock *l, sk_time_ns now,
			     const struct sk_addr *src, const struct sk_addr *dst,
			     const struct tcp_hdr *h, const uint8_t *data)
{
	if (h->flags & TCP_RST)
		return;
	if (h->flags & TCP_ACK) {
		if (h->flags & TCP_SYN) {
			tcp_reply_rst(st, now, dst, src, h);
			return;
		}
		tcp_cookie_ack(st, l, now, src, dst, h, data);
		return;
	}
	if (!(h->flags & TCP_SYN)) {
		st->stats.drop_listen_no_syn++;
		return;
	}
	bool full = l->syn_n >= l->backlog || l->acc_n >= l->backlog;
	struct tcp_sock *sk = full ? NULL : tcp_sock_alloc(st);
	if (!sk) {
		if (st->cfg.syn_cookies)
			tcp_reply_cookie(st, now, dst, src, h);
		else
			st->stats.drop_listen_overflow++;
		return;
	}
	tcp_conn_init(st, sk, now, dst, h->dport, src, h->sport);
	tcp_inherit(sk, l);
	sk->state = TCP_SYN_RECEIVED;
	tcp_open_from_syn(st, sk, h, now);
	sk->parent = l;
	l->syn_n++;
	tcp_list_add_tail(&l->synq, &sk->q);
	tcp_hash_insert(st, sk);
	st->stats.passive_opens++;
	tcp_egress(st, sk);
	tcp_timer_sync(st, sk);
}

/* ---- SYN_SENT (RFC 9293 3.10.7.3) ---- */

static void tcp_synsent_input(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
			      const struct tcp_hdr *h)
{
	bool ack = h->flags & TCP_ACK;
	if (ack && (tcp_seq_le(h->ack, sk->iss) || tcp_seq_gt(h->ack, sk->snd_max))) {
		st->stats.drop_synsent_bad_ack++;
		tcp_reply_rst(st, now, &sk->laddr, &sk->raddr, h);
		return;
	}
	if (h->flags & TCP_RST) {
		if (ack) {
			st->stats.rst_in++;
			st->stats.conn_refused++;
			tcp_conn_done(st, sk, -SK_ECONNREFUSED);
		}
		return;
	}
	if (!(h->flags & TCP_SYN))
		return;
	tcp_open_from_syn(st, sk, h, now);
	if (!ack) {
		/* Simultaneous open: answer with SYN-ACK from our ISS. */
		sk->state = TCP_SYN_RECEIVED;
		sk->snd_nxt = sk->iss;
		tcp_egress(st, sk);
		return;
	}
	if ((sk->fl & TF_TS) && h->opts.ts_ecr && sk->retries == 0)
		tcp_rtt_sample(st, sk, (sk_time_ns)(tcp_ts_now(sk, now) - h->opts.ts_ecr) * SK_NS_PER_MS);
	else if (sk->rtt_on && sk->retries == 0)
		tcp_rtt_sample(st, sk, now - sk->rtt_start);
	sk->rtt_on = false;
	sk->snd_una = h->ack;
	sk->rtx_at = SK_TIME_NEVER;
	sk->retries = 0;
	sk->backoff = 0;
	sk->state = TCP_ESTABLISHED;
	st->stats.established++;
	tcp_keepalive_arm(sk, now);
	tcp_ack_now(st, sk);
	tcp_event(st, sk, TCP_EV_WRITE);
}

/* ---- synchronized states ---- */

/* Insert [*l, *r) into the sorted, disjoint list a[0..n), merging every
 * range it overlaps or touches, in place; on return *l and *r are the
 * merged range.  Returns the new count, or -1, with the list as it was,
 * if the result would need more than max ranges.  Shared by the SACK
 * scoreboard and the out-of-order queue, which keep the same kind of
 * list. */
static int tcp_ranges_add(struct tcp_range *a, uint32_t n, uint32_t max, uint32_t *pl,
			  uint32_t *pr)
{
	uint32_t l = *pl, r = *pr, i = 0;
	while (i < n && tcp_seq_lt(a[i].r, l))
		i++; /* wholly below, not touching */
	uint32_t j = i;
	for (; j < n && !tcp_seq_gt(a[j].l, r); j++) {
		l = tcp_seq_min(l, a[j].l);
		r = tcp_seq_max(r, a[j].r);
	}
	uint32_t nn = n - (j - i) + 1; /* a[i, j) become one range */
	if (nn > max)
		return -1;
	if (j != i + 1)
		sk_memmove(&a[i + 1], &a[j], (n - j) * sizeof(a[0]));
	a[i] = (struct tcp_range){l, r};
	*pl = l;
	*pr = r;
	return (int)nn;
}

/* Add [l, r) to the SACK scoreboard, merging; when the inline ranges are
 * full, a board from the pool takes them; drop the block only if there
 * is none (or it is full too). */
static void tcp_score_add(struct tcp_stack *st, struct tcp_sock *sk, uint32_t l, uint32_t r)
{
	int n = tcp_ranges_add(tcp_score(sk), sk->nscore, tcp_score_cap(sk), &l, &r);
	if (n < 0 && tcp_score_take(st, sk))
		n = tcp_ranges_add(tcp_score(sk), sk->nscore, tcp_score_cap(sk), &l, &r);
	if (n < 0)
		st->stats.sack_score_full++;
	else
		sk->nscore = (uint16_t)n;
}

/* Forget what snd_una passed; the pooled board goes back once half the
 * inline room would do (not at the edge, where an episode would take and
 * give it back on alternate ACKs). */
static void tcp_score_trim(struct tcp_stack *st, struct tcp_sock *sk)
{
	struct tcp_range *a = tcp_score(sk);
	uint32_t i = 0;
	while (i < sk->nscore && tcp_seq_le(a[i].r, sk->snd_una))
		i++;
	if (i) {
		sk_memmove(a, &a[i], (sk->nscore - i) * sizeof(a[0]));
		sk->nscore = (uint16_t)(sk->nscore - i);
	}
	if (sk->nscore && tcp_seq_lt(a[0].l, sk->snd_una))
		a[0].l = sk->snd_una;
	if (sk->xscore && sk->nscore <= TCP_SCORE_MAX / 2)
		tcp_score_release(st, sk);
}

/* Returns false if the socket is gone. */
static bool tcp_ack_in(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
		       const struct tcp_hdr *h)
{
	uint32_t ack = h->ack;
	uint32_t win = (uint32_t)h->win << sk->snd_wscale;
	uint32_t mss = tcp_eff_mss(sk);
	bool pure = h->payload_len == 0 && !(h->flags & (TCP_SYN | TCP_FIN));
	bool same_win = win == sk->snd_wnd;
	bool sack_news = false;
	bool sack = sk->fl & TF_SACK;
	bool ended = false; /* this ACK ended a loss episode */
	uint32_t una0 = sk->snd_una;
	uint32_t sacked0 = sack ? tcp_sacked_bytes(sk) : 0;

	if (sack && h->opts.nsack) {
		for (uint8_t i = 0; i < h->opts.nsack && i < TCP_MAX_SACK; i++) {
			uint32_t l = h->opts.sack[i].left, r = h->opts.sack[i].right;
			if (i == 0 && tcp_seq_lt(l, r) && tcp_seq_le(r, ack) &&
			    tcp_seq_ge(l, sk->snd_una - (1u << 30)))
				st->stats.dsacks_in++; /* RFC 2883: a duplicate it got */
			if (!tcp_seq_lt(l, r) || tcp_seq_le(r, sk->snd_una) ||
			    tcp_seq_gt(r, sk->snd_max) || tcp_seq_lt(l, sk->snd_una - (1u << 30)))
				continue;
			tcp_score_add(st, sk, tcp_seq_max(l, sk->snd_una), r);
		}
		/* Ranges only grow or merge here: the board changed iff it
		 * holds more bytes. */
		sack_news = tcp_sacked_bytes(sk) != sacked0;
	}
	/* A duplicate ACK: for RFC 5681 one without data that leaves the window
	 * alone; for RFC 6675 2 any that SACKs something new, data or not (a
	 * peer that is sending too acknowledges with data). */
	bool dup_cand = ack == sk->snd_una && sk->snd_una != sk->snd_max &&
			(sack_news || (pure && same_win));

	if (tcp_seq_gt(ack, sk->snd_una)) {
		uint32_t acked = ack - sk->snd_una;
		if ((sk->fl & TF_TS) && h->opts.has_ts && h->opts.ts_ecr) {
			uint32_t r = tcp_ts_now(sk, now) - h->opts.ts_ecr;
			if (r < 600000)
				tcp_rtt_sample(st, sk, (sk_time_ns)r * SK_NS_PER_MS);
		} else if (sk->rtt_on && tcp_seq_gt(ack, sk->rtt_seq)) {
			tcp_rtt_sample(st, sk, now - sk->rtt_start);
			sk->rtt_on = false;
		}
		uint32_t freed = 0;
		if (tcp_seq_gt(ack, sk->sbuf_seq)) {
			freed = SK_MIN(ack - sk->sbuf_seq, sk->slen);
			sk->shead = (sk->shead + freed) % sk->scap;
			sk->slen -= freed;
			sk->sbuf_seq += freed;
			if (sk->nref)
				tcp_refs_trim(st, sk);
			tcp_sbuf_release(st, sk); /* all acked: back to the pool */
			if (st->mem_state != TCP_MEM_NORMAL)
				tcp_buf_shrink(st, sk);
		}
		sk->snd_una = ack;
		if (tcp_seq_lt(sk->snd_nxt, ack))
			sk->snd_nxt = ack;
		sk->rtx_hi = tcp_seq_max(sk->rtx_hi, ack);
		tcp_score_trim(st, sk);
		if (sk->backoff && sk->srtt_us) {
			sk->backoff = 0;
			tcp_rtt_sample(st, sk, (sk_time_ns)sk->srtt_us * SK_NS_PER_US);
		}
		sk->backoff = 0;
		sk->retries = 0;
		sk->first_rtx = SK_TIME_NEVER;

		tcp_undo_check(st, sk, now, h);
		if ((sk->fl & TF_TLP_OUT) && tcp_seq_ge(ack, sk->tlp_end)) {
			/* The probe's ACK covers the tail: the probe repaired it
			 * (or the tail was only late). */
			sk->fl &= ~(uint32_t)TF_TLP_OUT;
			if (!(sk->fl & TF_RECOVERY))
				st->stats.tlp_repairs++;
		}
		if (sk->fl & TF_RECOVERY) {
			if (tcp_seq_ge(ack, sk->recover)) {
				/* The end of the episode.  SACK (RFC 6937 3.1): cwnd =
				 * ssthresh, PRR has already brought the flight towards
				 * it.  Bounding it by the flight would leave one segment
				 * when the ACK for the retransmission covers everything
				 * at once, and slow start from there after every loss.
				 * NewReno: RFC 6582 3.2 step 6, option (2), bounded by
				 * the flight against a burst. */
				sk->fl &= ~(uint32_t)(TF_RECOVERY | TF_RACK);
				ended = true;
				if (sk->fl & TF_SACK)
					sk->cwnd = sk->ssthresh;
				else
					sk->cwnd = SK_MIN(sk->ssthresh, (sk->snd_max - sk->snd_una) + mss);
				sk->dupacks = 0;
			} else if (sack) {
				/* PRR sets the window below, from what was delivered. */
			} else {
				/* Partial ACK: the next hole is lost too (step 5). */
				st->stats.partial_acks++;
				sk->rtx_hi = ack;
				sk->fl |= TF_RTX_ONE;
				sk->cwnd = sk->cwnd > acked ? sk->cwnd - acked : mss;
				if (acked >= mss)
					sk->cwnd += mss;
			}
		} else {
			sk->dupacks = 0;
			unsigned ev = tcp_cc(sk)->on_ack(sk, acked, now);
			if (!sk->pacing_rate)
				sk->fl &= ~(uint32_t)TF_PACE_WAIT; /* unpaced from here */
			if (ev & TCP_CC_EV_CSS)
				st->stats.hystart_css++;
			if (ev & TCP_CC_EV_SS_EXIT)
				st->stats.hystart_exits++;
		}
		if (sk->snd_una == sk->snd_max)
			sk->rtx_at = SK_TIME_NEVER;
		else
			tcp_rearm_rtx(st, sk, now);
		if (freed && (sk->fl & TF_WANT_WRITE) && sk->smax - sk->slen >= sk->smax / 3) {
			sk->fl &= ~(uint32_t)TF_WANT_WRITE;
			tcp_event(st, sk, TCP_EV_WRITE);
		}
		if (tcp_seq_lt(sk->snd_nxt, sk->sbuf_seq + sk->slen + !!(sk->fl & TF_FIN_QUEUED)) ||
		    (sk->fl & TF_RTX_ONE))
			tcp_egress(st, sk);

		if ((sk->fl & TF_FIN_QUEUED) && sk->slen == 0 && sk->snd_una == sk->sbuf_seq + 1) {
			switch (sk->state) {
			case TCP_FIN_WAIT_1:
				sk->state = TCP_FIN_WAIT_2;
				if (sk->fl & TF_ORPHAN)
					sk->tw_at = now + tcp_ms(st->cfg.fin2_timeout_ms);
				break;
			case TCP_CLOSING:
				tcp_enter_time_wait(st, sk, now);
				break;
			case TCP_LAST_ACK:
				tcp_conn_done(st, sk, 0);
				return false;
			default:
				break;
			}
		}
	} else if (dup_cand) {
		st->stats.dup_acks_in++;
		if (sack) {
			if (sk->dupacks < 255)
				sk->dupacks++;
			/* RFC 3042: the first two may each let one new segment out
			 * (tcp_output_data adds them to the window). */
			if (!(sk->fl & TF_RECOVERY) && sk->dupacks < TCP_DUPTHRESH)
				tcp_egress(st, sk);
		} else if (sk->fl & TF_RECOVERY) {
			sk->cwnd += mss; /* RFC 6582 3.2 step 4: inflate */
			tcp_egress(st, sk);
		} else if (++sk->dupacks == 3 && tcp_seq_gt(ack, sk->recover)) {
			st->stats.fast_retransmits++;
			tcp_undo_save(sk);
			sk->ssthresh = tcp_loss_ssthresh(sk, now);
			sk->recover = sk->snd_max;
			sk->fl |= TF_RECOVERY | TF_RTX_ONE;
			sk->cwnd = sk->ssthresh + 3 * mss;
			sk->rtx_hi = sk->snd_una;
			tcp_egress(st, sk);
		}
	}

	/* What this ACK delivered: the cumulative advance and the SACKed bytes
	 * it added (those it covered were counted when SACKed). */
	int64_t dd = (int64_t)(sk->snd_una - una0) +
		     (sack ? (int64_t)tcp_sacked_bytes(sk) - (int64_t)sacked0 : 0);
	uint32_t delivered = dd > 0 ? (uint32_t)dd : 0;

	/* A retransmission lost again (RFC 8985 6.2): its hole goes back to
	 * lost before the window is set and recovery sends on this ACK. */
	if (sk_unlikely(sk->fl & TF_RTX_CHK))
		tcp_rtx_check(st, sk, now, delivered);

	/* A paced algorithm's rate model sees every ACK (tcp_cc.h), before
	 * the recovery below sends: an algorithm that owns its window in
	 * recovery sets it here, and the sends of this ACK use it. */
	const struct tcp_cc_ops *cc = tcp_cc(sk);
	bool model = sk_unlikely(sk->pacing_rate != 0) && cc->on_delivery;
	if (model)
		cc->on_delivery(sk, delivered, now);

	/* SACK loss recovery (RFC 6675 with PRR): entered on DupThresh
	 * duplicate ACKs or as soon as the scoreboard shows the first hole
	 * lost, whichever comes first; then every ACK sets the window from
	 * what it delivered (PRR), unless the algorithm owns the window in
	 * recovery (it did so in on_delivery above).  Not below `recover`:
	 * one reduction per window. */
	if (sack && sk->snd_una != sk->snd_max) {
		if ((sk->fl & TF_TLP_OUT) && sack_news && !(sk->fl & TF_RECOVERY) && sk->nscore) {
			/* The answer to the probe SACKs data sent after the holes,
			 * which are older than a round trip by now (RACK). */
			sk->rack_edge = tcp_score(sk)[sk->nscore - 1].l;
			sk->fl |= TF_RACK;
		}
		if (!(sk->fl & TF_RECOVERY)) {
			if (ended)
				tcp_tail_at_end(sk);
			/* At `recover` already: the byte there and all after it
			 * were first sent after the last episode began, so a
			 * hole there is a new loss (with SACK it is known which
			 * data is lost; RFC 6582's "past recover" is for dupacks
			 * that cannot tell windows apart).  Waiting for snd_una
			 * to pass it would wait for that hole's repair: the TLP
			 * or the RTO (test_loss_at_recovery_point). */
			if (tcp_seq_ge(sk->snd_una, sk->recover) &&
			    (sk->dupacks >= TCP_DUPTHRESH ||
			     tcp_seq_gt(tcp_lost_edge(sk), sk->snd_una))) {
				if (ended)
					st->stats.recovery_chained++;
				tcp_recovery_enter(st, sk, now);
				tcp_egress(st, sk);
			}
		} else {
			tcp_tail_check(st, sk, now, delivered);
			if (!(model && cc->owns_recovery_cwnd))
				tcp_prr_ack(sk, delivered);
			tcp_egress(st, sk);
		}
	}

	/* The app waits for room while a hole holds snd_una: nothing is
	 * freed, and the buffer was tuned only when the app sent, so it stayed
	 * full behind the hole with the window open (seen at 10 ms, 2 %: 26 ms
	 * with 752 bytes unsent).  The SACKs grow it here (tcp_sbuf_tune:
	 * what is held and a round trip's more), and the app hears of the
	 * room once it is a third of the buffer or half a round trip's worth
	 * (with much held behind the hole, a third may never come free). */
	if (sk_unlikely(sk->fl & TF_WANT_WRITE) && sack_news) {
		tcp_sbuf_tune(st, sk);
		uint32_t room = sk->smax - sk->slen;
		if (room >= sk->smax / 3 || room >= tcp_sbuf_round(sk) / 2) {
			sk->fl &= ~(uint32_t)TF_WANT_WRITE;
			tcp_event(st, sk, TCP_EV_WRITE);
		}
	}

	/* Everything sent is acked and nothing waits: the sender is idle (a
	 * state held until now counts to here, not to the next send). */
	if (sk->limit != TCP_LIM_NONE && sk->snd_una == sk->snd_max &&
	    !tcp_seq_lt(sk->snd_max, sk->sbuf_seq + sk->slen))
		tcp_limit_set(st, sk, now, TCP_LIM_NONE);

	/* Window update.  RFC 9293's WL1/WL2 rule would let a reordered older
	 * ACK with the same SEQ/ACK shrink the window (and stall a sender with
	 * nothing in flight); like Linux, a same-SEQ, same-ACK segment may only
	 * open it.  Only an ACK at or past snd_una counts (RFC 9293 3.10.7.4:
	 * SND.UNA =< SEG.ACK; an older one "can be ignored"): the window is
	 * used from snd_una (tcp_out.c), so an older ACK's window would move
	 * the right edge past anything the peer offered.  WL1 alone does not
	 * rule it out: a retransmission from the peer (low SEQ, new ACK) sets
	 * WL1 back, and its delayed original (higher SEQ, older ACK, the window
	 * of that time) then passes "WL1 < SEG.SEQ" (tests/tcp.sh
	 * tap.client.reorder stalled on it, skiff sending 30 KB beyond the
	 * peer's window: tcp_test.c test_est_stale_ack_window). */
	if (!tcp_seq_lt(ack, sk->snd_una) &&
	    (tcp_seq_lt(sk->snd_wl1, h->seq) || tcp_seq_lt(sk->snd_wl2, ack) ||
	     (sk->snd_wl1 == h->seq && sk->snd_wl2 == ack && win > sk->snd_wnd))) {
		if (win > sk->snd_wnd)
			tcp_egress(st, sk);
		sk->snd_wnd = win;
		sk->snd_wl1 = h->seq;
		sk->snd_wl2 = ack;
		sk->max_sndwnd = SK_MAX(sk->max_sndwnd, win);
		if (win && sk->persist_at != SK_TIME_NEVER) {
			sk->persist_at = SK_TIME_NEVER;
			sk->backoff = 0;
			tcp_egress(st, sk);
		}
	}
	return true;
}

/* Insert [l, r) into the out-of-order list; when the inline ranges are
 * full, a board from the pool takes them.  False if there is none (or it
 * is full too). */
static bool tcp_ooo_add(struct tcp_stack *st, struct tcp_sock *sk, uint32_t l, uint32_t r)
{
	int n = tcp_ranges_add(tcp_ooo(sk), sk->nooo, tcp_ooo_cap(sk), &l, &r);
	if (n < 0 && tcp_ooo_take(st, sk))
		n = tcp_ranges_add(tcp_ooo(sk), sk->nooo, tcp_ooo_cap(sk), &l, &r);
	if (n < 0)
		return false;
	sk->nooo = (uint8_t)n;
	sk->ooo_last = (struct tcp_range){l, r};
	return true;
}

static void tcp_data_in(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t seq,
			const uint8_t *p, uint32_t n)
{
	if (tcp_seq_lt(seq, sk->rcv_nxt)) {
		uint32_t d = sk->rcv_nxt - seq;
		if (sk->fl & TF_SACK) {
			/* RFC 2883: tell the sender what arrived twice, so it can
			 * see a retransmission was spurious. */
			sk->dsack = (struct tcp_range){seq, seq + SK_MIN(d, n)};
			sk->dsack_pending = true;
		}
		if (d >= n) {
			tcp_ack_now(st, sk); /* a pure duplicate: the peer missed our ACK */
			return;
		}
		p += d;
		n -= d;
		seq = sk->rcv_nxt;
	}
	uint32_t off = seq - sk->rcv_nxt;
	uint32_t lim = SK_MIN(sk->rcap - sk->rlen, sk->rcv_adv - sk->rcv_nxt);
	if (tcp_seq_lt(sk->rcv_adv, sk->rcv_nxt))
		lim = 0;
	if (off >= lim) {
		st->stats.drop_out_of_window++;
		tcp_ack_now(st, sk);
		return;
	}
	n = SK_MIN(n, lim - off);
	if (!tcp_rbuf_take(st, sk)) {
		/* Pool empty (only if configured below one buffer per socket):
		 * drop, the peer resends; our window already said 0 if it could. */
		st->stats.drop_no_memory++;
		return;
	}
	if (off >= sk->rcap - sk->rlen) {
		/* A grown side got only a base buffer back (no slot free): what
		 * lies beyond it is dropped unacknowledged, the peer resends. */
		st->stats.drop_no_memory++;
		tcp_rbuf_release(st, sk);
		return;
	}
	n = SK_MIN(n, sk->rcap - sk->rlen - off);
	if (off && (sk->fl & TF_SACK)) {
		const struct tcp_range *oo = tcp_ooo_c(sk);
		for (uint8_t i = 0; i < sk->nooo; i++)
			if (tcp_seq_le(oo[i].l, seq) && tcp_seq_ge(oo[i].r, seq + n)) {
				sk->dsack = (struct tcp_range){seq, seq + n}; /* RFC 2883 4.1.2 */
				sk->dsack_pending = true;
			}
	}
	if (off) {
		/* Out of order: keep it only if it fits the range list. */
		if (!tcp_ooo_add(st, sk, seq, seq + n)) {
			st->stats.drop_ooo_full++;
			tcp_rbuf_release(st, sk);
			tcp_send_ack(st, sk, now);
			return;
		}
		st->stats.ooo_segments++;
	}
	uint32_t pos = (sk->rhead + sk->rlen + off) % sk->rcap;
	uint32_t first = SK_MIN(n, sk->rcap - pos);
	sk_memcpy(sk->rbuf + pos, p, first);
	sk_memcpy(sk->rbuf, p + first, n - first);
	if (off) {
		/* RFC 5681 4.2: an immediate duplicate ACK per out-of-order segment,
		 * not one per batch: the sender counts them. */
		tcp_send_ack(st, sk, now);
		return;
	}
	bool filled_hole = sk->nooo != 0;
	sk->rcv_nxt += n;
	sk->rlen += n;
	sk->rcv_unacked += n;
	struct tcp_range *oo = tcp_ooo(sk);
	uint32_t k = 0;
	while (k < sk->nooo && tcp_seq_le(oo[k].l, sk->rcv_nxt)) {
		if (tcp_seq_gt(oo[k].r, sk->rcv_nxt)) {
			uint32_t adv = oo[k].r - sk->rcv_nxt;
			sk->rlen += adv;
			sk->rcv_nxt += adv;
			sk->rcv_unacked += adv;
		}
		k++;
	}
	if (k) {
		sk->nooo = (uint8_t)(sk->nooo - k);
		sk_memmove(oo, oo + k, sk->nooo * sizeof(oo[0]));
	}
	/* The board goes back once half the inline room would do (not at
	 * the edge, where holes filled and opened would take and give it
	 * back on alternate segments). */
	if (sk->xooo && sk->nooo <= TCP_OOO_MAX / 2)
		tcp_ooo_release(st, sk);
	tcp_event(st, sk, TCP_EV_READ);
	tcp_rbuf_tune(st, sk, now);
	if (filled_hole) {
		tcp_ack_now(st, sk);
	} else if (sk->quickacks) {
		sk->quickacks--;
		st->stats.quick_acks++;
		tcp_ack_now(st, sk);
	} else if (sk->rcv_unacked >= 2 * tcp_eff_mss(sk)) {
		tcp_ack_now(st, sk); /* RFC 5681 4.2: at least every second full segment */
	} else if (sk->delack_at == SK_TIME_NEVER) {
		sk->delack_at = now + tcp_ms(st->cfg.delack_ms);
	}
}

static void tcp_fin_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	if (!(sk->fl & TF_FIN_PENDING) || sk->rcv_nxt != sk->fin_seq)
		return;
	sk->fl &= ~(uint32_t)TF_FIN_PENDING;
	sk->fl |= TF_FIN_RCVD;
	sk->rcv_nxt++;
	sk->nooo = 0; /* anything "after" the FIN is bogus */
	tcp_ooo_release(st, sk);
	tcp_rbuf_release(st, sk);
	tcp_ack_now(st, sk);
	tcp_event(st, sk, TCP_EV_READ);
	switch (sk->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		sk->state = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT_1:
		sk->state = TCP_CLOSING; /* our FIN not acked yet (else FIN_WAIT_2) */
		break;
	case TCP_FIN_WAIT_2:
		tcp_enter_time_wait(st, sk, now);
		break;
	default:
		break;
	}
}

/* The duplicate ACK answering an unacceptable segment.  For segments
 * without data it is limited to one per 500 ms per connection (as Linux's
 * tcp_oow_rate_limited): two stacks that disagree must not trade ACKs
 * forever, and a spoofer gets no 1:1 reflector.  Old data is always
 * answered: its sender needs the ACK it missed. */
static void tcp_oow_ack(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
			uint32_t seg_len)
{
	if (seg_len == 0 && sk->oow_last && now - sk->oow_last < 500 * SK_NS_PER_MS) {
		st->stats.oow_acks_limited++;
		return;
	}
	sk->oow_last = now ? now : 1;
	tcp_ack_now(st, sk);
}

static void tcp_sync_input(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
			   const struct tcp_hdr *h, const uint8_t *data)
{
	uint32_t seq = h->seq;
	uint32_t plen = h->payload_len;
	uint8_t f = h->flags;
	uint32_t seg_len = plen + !!(f & TCP_SYN) + !!(f & TCP_FIN);

	/* Our SYN-ACK was lost and the peer sends its SYN again. */
	if (sk->state == TCP_SYN_RECEIVED && (f & TCP_SYN) && !(f & (TCP_ACK | TCP_RST)) &&
	    seq == sk->irs) {
		sk->snd_nxt = sk->iss;
		tcp_egress(st, sk);
		return;
	}

	/* PAWS (RFC 7323 5.3); a ts_recent idle for 24 days is stale. */
	if ((sk->fl & TF_TS) && h->opts.has_ts && !(f & TCP_RST) &&
	    tcp_seq_lt(h->opts.ts_val, sk->ts_recent) && now - sk->ts_recent_age < TCP_TS_24DAYS) {
		st->stats.drop_paws++;
		tcp_oow_ack(st, sk, now, seg_len);
		return;
	}

	/* Acceptability (RFC 9293 3.10.7.4, first check). */
	uint32_t wnd = tcp_seq_gt(sk->rcv_adv, sk->rcv_nxt) ? sk->rcv_adv - sk->rcv_nxt : 0;
	bool ok;
	bool ack_only = false;
	if (seg_len == 0)
		ok = wnd == 0 ? seq == sk->rcv_nxt
			      : tcp_seq_ge(seq, sk->rcv_nxt) && tcp_seq_lt(seq, sk->rcv_nxt + wnd);
	else
		ok = wnd != 0 &&
		     ((tcp_seq_ge(seq, sk->rcv_nxt) && tcp_seq_lt(seq, sk->rcv_nxt + wnd)) ||
		      (tcp_seq_ge(seq + seg_len - 1, sk->rcv_nxt) &&
		       tcp_seq_lt(seq + seg_len - 1, sk->rcv_nxt + wnd)));
	if (!ok && wnd == 0 && seq == sk->rcv_nxt && (f & TCP_ACK) && !(f & (TCP_RST | TCP_SYN))) {
		ok = true; /* zero window: still take the ACK (3.10.7.4) */
		ack_only = true;
	}
	if (!ok) {
		st->stats.drop_out_of_window++;
		if ((sk->fl & TF_SACK) && plen && !(f & (TCP_RST | TCP_SYN)) &&
		    tcp_seq_le(seq + plen, sk->rcv_nxt) &&
		    tcp_seq_ge(seq, sk->rcv_nxt - (1u << 30))) {
			/* RFC 2883: data we already had, so a retransmission the
			 * sender may call spurious. */
			sk->dsack = (struct tcp_range){seq, seq + plen};
			sk->dsack_pending = true;
		}
		if (!(f & TCP_RST))
			tcp_oow_ack(st, sk, now, seg_len);
		return;
	}
	sk->last_rcv = now;
	sk->keep_probes = 0;

	if ((sk->fl & TF_TS) && h->opts.has_ts && tcp_seq_le(seq, sk->last_ack_sent) &&
	    tcp_seq_ge(h->opts.ts_val, sk->ts_recent)) {
		sk->ts_recent = h->opts.ts_val;
		sk->ts_recent_age = now;
	}
	/* The receive side's round trip, for right-sizing (a receiver that
	 * sends nothing has no srtt): data echoes the TSval of an ACK of ours,
	 * which the peer answered.  The low end counts (the peer may have
	 * waited for its app), so a smaller sample is taken at once. */
	if ((sk->fl & TF_TS) && h->opts.has_ts && h->opts.ts_ecr && plen && st->bpool.n) {
		uint32_t r = tcp_ts_now(sk, now) - h->opts.ts_ecr;
		if (r < 60000) {
			uint32_t us = SK_MAX(r, 1u) * 1000;
			if (!sk->rcv_rtt_us || us < sk->rcv_rtt_us)
				sk->rcv_rtt_us = us;
			else
				sk->rcv_rtt_us += (us - sk->rcv_rtt_us) / 8;
		}
	}

	/* RST (RFC 5961 3.2): exact match resets, in-window earns a challenge. */
	if (f & TCP_RST) {
		if (seq != sk->rcv_nxt) {
			st->stats.rst_ignored++;
			tcp_challenge_ack(st, sk, now);
			return;
		}
		st->stats.rst_in++;
		switch (sk->state) {
		case TCP_SYN_RECEIVED:
			if (sk->fl & TF_PASSIVE) {
				tcp_sock_free(st, sk); /* back to LISTEN: the listener forgets it */
			} else {
				st->stats.conn_refused++;
				tcp_conn_done(st, sk, -SK_ECONNREFUSED);
			}
			return;
		case TCP_CLOSING:
		case TCP_LAST_ACK:
		case TCP_TIME_WAIT:
			tcp_conn_done(st, sk, 0);
			return;
		default:
			st->stats.conn_reset++;
			tcp_conn_done(st, sk, -SK_ECONNRESET);
			return;
		}
	}

	/* SYN in a synchronized state (RFC 5961 4.2): challenge ACK. */
	if (f & TCP_SYN) {
		st->stats.syn_in_window++;
		tcp_challenge_ack(st, sk, now);
		return;
	}
	if (!(f & TCP_ACK)) {
		st->stats.drop_no_ack++;
		return;
	}

	if (sk->state == TCP_SYN_RECEIVED) {
		if (!tcp_seq_lt(sk->snd_una, h->ack) || tcp_seq_gt(h->ack, sk->snd_max)) {
			st->stats.drop_syn_rcvd_bad_ack++;
			tcp_reply_rst(st, now, &sk->laddr, &sk->raddr, h);
			return;
		}
		if (sk->parent && sk->parent->acc_n >= sk->parent->backlog) {
			st->stats.accept_queue_full++; /* stay; the SYN-ACK timer retries */
			return;
		}
		sk->state = (sk->fl & TF_FIN_QUEUED) ? TCP_FIN_WAIT_1 : TCP_ESTABLISHED;
		sk->snd_wnd = (uint32_t)h->win << sk->snd_wscale;
		sk->max_sndwnd = sk->snd_wnd;
		sk->snd_wl1 = seq;
		sk->snd_wl2 = h->ack;
		sk->retries = 0;
		tcp_keepalive_arm(sk, now);
		tcp_child_established(st, sk);
	}

	/* ACK acceptability (RFC 5961 5.2). */
	if (tcp_seq_gt(h->ack, sk->snd_max)) {
		st->stats.drop_ack_too_new++;
		tcp_ack_now(st, sk);
		return;
	}
	if (tcp_seq_lt(h->ack, sk->snd_una - sk->max_sndwnd)) {
		st->stats.drop_ack_too_old++;
		tcp_challenge_ack(st, sk, now);
		return;
	}
	if (!tcp_ack_in(st, sk, now, h))
		return;
	if (sk->state == TCP_TIME_WAIT) {
		if (f & TCP_FIN) { /* retransmitted FIN: ACK it, restart 2*MSL */
			tcp_enter_time_wait(st, sk, now);
			tcp_ack_now(st, sk);
		}
		return;
	}
	if (ack_only) {
		tcp_ack_now(st, sk); /* tell the prober the window is still zero */
		return;
	}

	if (plen) {
		switch (sk->state) {
		case TCP_ESTABLISHED:
		case TCP_FIN_WAIT_1:
		case TCP_FIN_WAIT_2:
			if ((sk->fl & TF_RCV_SHUT) && tcp_seq_gt(seq + plen, sk->rcv_nxt)) {
				/* Closed by the app: new data can never be read. */
				st->stats.drop_rcv_closed++;
				tcp_send_rst(st, sk, now);
				tcp_conn_done(st, sk, -SK_ECONNRESET);
				return;
			}
			tcp_data_in(st, sk, now, seq, data, plen);
			break;
		default:
			break; /* after the peer's FIN: ignore */
		}
	}
	if ((f & TCP_FIN) && !(sk->fl & TF_FIN_RCVD)) {
		uint32_t fs = seq + plen;
		if (tcp_seq_le(fs, sk->rcv_adv)) {
			sk->fin_seq = fs;
			sk->fl |= TF_FIN_PENDING;
			if (fs != sk->rcv_nxt)
				tcp_ack_now(st, sk);
		}
	}
	tcp_fin_check(st, sk, now);
}

/* ---- entry ---- */

static bool tcp_tw_reusable(const struct tcp_sock *sk, const struct tcp_hdr *h)
{
	if ((sk->fl & TF_TS) && h->opts.has_ts)
		return tcp_seq_gt(h->opts.ts_val, sk->ts_recent);
	return tcp_seq_gt(h->seq, sk->rcv_nxt);
}

/* Both families: src/dst as struct sk_addr, `pseudo` the pseudo header's
 * address sum for the checksum (wire/tcp.h tcp_parse_ps). */
static void tcp_input_addr(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *src,
			   const struct sk_addr *dst, uint64_t pseudo, const uint8_t *seg,
			   size_t len, uint64_t t0)
{
	struct tcp_hdr h;
	int r = st->rx_csum_ok ? tcp_parse_nocsum(seg, len, &h) : tcp_parse_ps(seg, len, pseudo, &h);
	if (st->rx_csum_ok)
		st->stats.rx_csum_trusted++;
	if (r != WIRE_OK) {
		tcp_count_parse_error(st, r);
		return;
	}
	st->stats.bytes_in += h.payload_len;
	const uint8_t *data = seg + h.payload_off;
	struct tcp_sock *sk = tcp_lookup(st, dst, h.dport, src, h.sport);
	if (sk && sk->state == TCP_TIME_WAIT &&
	    (h.flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN && tcp_tw_reusable(sk, &h) &&
	    tcp_lookup_listener(st, h.dport)) {
		/* RFC 9293 3.10.7.4 / RFC 6191: a new incarnation may start from
		 * TIME_WAIT if it is clearly newer. */
		st->stats.tw_reuse++;
		tcp_conn_done(st, sk, 0); /* freed, or out of the demux if the app holds it */
		sk = NULL;
	}
	if (!sk) {
		struct tcp_sock *l = tcp_lookup_listener(st, h.dport);
		if (l) {
			tcp_listen_input(st, l, now, src, dst, &h, data);
		} else {
			st->stats.drop_no_socket++;
			tcp_reply_rst(st, now, dst, src, &h);
		}
		return;
	}
	if (sk->state == TCP_LISTEN)
		return; /* cannot happen: listeners have raddr 0 */
	bool est = sk->state == TCP_ESTABLISHED;
	if (sk->state == TCP_SYN_SENT)
		tcp_synsent_input(st, sk, now, &h);
	else
		tcp_sync_input(st, sk, now, &h, data);
	if (sk->in_use)
		tcp_timer_sync(st, sk);
	if (est && !(h.flags & (TCP_SYN | TCP_RST)))
		sk_trace_end(st->trace, SK_TR_tcp_in, t0, 1);
}

void tcp_input(struct tcp_stack *st, sk_time_ns now, uint32_t src, uint32_t dst,
	       const uint8_t *seg, size_t len)
{
	/* --trace "tcp_in": parse, checksum, lookup and processing of a segment
	 * that finds its socket ESTABLISHED (data or ACK), recorded below. */
	uint64_t t0 = sk_trace_begin(st->trace);
	st->stats.seg_in++;
	struct sk_addr s = sk_addr_v4(src), d = sk_addr_v4(dst);
	tcp_input_addr(st, now, &s, &d, csum_pseudo4(src, dst, IPV4_PROTO_TCP, 0), seg, len, t0);
}

void tcp_input6(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *src,
		const struct sk_addr *dst, const uint8_t *seg, size_t len)
{
	uint64_t t0 = sk_trace_begin(st->trace);
	st->stats.seg_in++;
	if (sk_addr_is_v4(src) || sk_addr_is_v4(dst) || sk_addr_is_any(src)) {
		st->stats.drop_parse_other++; /* would alias an IPv4 peer */
		return;
	}
	tcp_input_addr(st, now, src, dst, csum_pseudo6(src->b, dst->b, IPV6_NH_TCP, 0), seg, len,
		       t0);
}

/* The connection an ICMP error is about, or NULL: it must quote a segment
 * of one we have, with a sequence number we have in flight (RFC 5927 4.1,
 * RFC 5961's spirit): a blind attacker must guess the 4-tuple and a
 * sequence number within snd_una..snd_max. */
static struct tcp_sock *tcp_icmp_sock(struct tcp_stack *st, const struct sk_addr *src,
				      uint16_t sport, const struct sk_addr *dst, uint16_t dport,
				      uint32_t seq)
{
	struct tcp_sock *sk = tcp_lookup(st, src, sport, dst, dport);
	if (!sk || sk->state == TCP_LISTEN || tcp_seq_lt(seq, sk->snd_una) ||
	    tcp_seq_gt(seq, sk->snd_max)) {
		st->stats.icmp_ignored++;
		return NULL;
	}
	return sk;
}

/* A smaller path MTU: segments of at most mss from now on, and what is in
 * flight is sent again at that size (the too-big ones were dropped on the
 * way; RFC 1191 / RFC 8201 5.2).  Never raises the MSS. */
static void tcp_pmtu_lower(struct tcp_stack *st, struct tcp_sock *sk, uint32_t mss)
{
	if (mss >= sk->snd_mss) {
		st->stats.pmtu_ignored++; /* stale, or trying to raise it */
		return;
	}
	st->stats.pmtu_updates++;
	sk->snd_mss = (uint16_t)mss;
	sk->snd_nxt = sk->snd_una; /* resend what was too big */
	tcp_egress(st, sk);
}

void tcp_icmp_error(struct tcp_stack *st, sk_time_ns now, const struct icmp_error *e)
{
	(void)now;
	if (e->proto != IPV4_PROTO_TCP)
		return;
	struct sk_addr src = sk_addr_v4(e->src), dst = sk_addr_v4(e->dst);
	struct tcp_sock *sk = tcp_icmp_sock(st, &src, e->sport, &dst, e->dport, e->tcp_seq);
	if (!sk)
		return;
	if (e->type == ICMP_DEST_UNREACH && e->code == ICMP_UNREACH_FRAG_NEEDED) {
		if (e->mtu < 576 || e->mtu >= st->cfg.mtu) {
			st->stats.pmtu_ignored++;
			return;
		}
		tcp_pmtu_lower(st, sk, (uint32_t)e->mtu - 40);
		return;
	}
	if (sk->state == TCP_SYN_SENT && e->type == ICMP_DEST_UNREACH &&
	    (e->code == 2 || e->code == ICMP_UNREACH_PORT)) {
		st->stats.conn_refused++;
		tcp_conn_done(st, sk, -SK_ECONNREFUSED);
		return;
	}
	st->stats.icmp_soft_errors++; /* RFC 5461: soft in synchronized states */
}

void tcp_icmp6_error(struct tcp_stack *st, sk_time_ns now, const struct icmp6_error *e)
{
	(void)now;
	if (e->proto != IPV6_NH_TCP)
		return;
	struct sk_addr src = sk_addr_v6(e->src.b), dst = sk_addr_v6(e->dst.b);
	if (sk_addr_is_v4(&src) || sk_addr_is_v4(&dst))
		return; /* v4-mapped: would alias an IPv4 connection */
	struct tcp_sock *sk = tcp_icmp_sock(st, &src, e->sport, &dst, e->dport, e->tcp_seq);
	if (!sk)
		return;
	if (e->type == ICMP6_PACKET_TOO_BIG) {
		/* No IPv6 link is under 1280 (RFC 8200 5): a smaller MTU is a
		 * forgery or a broken router, and RFC 8201 4 forbids going
		 * below 1280 anyway; ignored, as Linux does. */
		if (e->mtu < IPV6_MIN_MTU || e->mtu >= st->cfg.mtu) {
			st->stats.pmtu_ignored++;
			return;
		}
		tcp_pmtu_lower(st, sk, e->mtu - IPV6_HLEN - 20);
		return;
	}
	/* Port unreachable, or administratively prohibited, to a SYN: the
	 * peer's stack said no (RFC 4443 3.1); later, soft (RFC 5461). */
	if (sk->state == TCP_SYN_SENT && e->type == ICMP6_DEST_UNREACH &&
	    (e->code == ICMP6_UNREACH_PORT || e->code == ICMP6_UNREACH_ADMIN)) {
		st->stats.conn_refused++;
		tcp_conn_done(st, sk, -SK_ECONNREFUSED);
		return;
	}
	st->stats.icmp_soft_errors++;
}
