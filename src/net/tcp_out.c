/* tcp_out.c — building and sending segments, tcp_output for one socket,
 * timers, and tcp_poll.
 *
 * RTO: RFC 6298 with a 200 ms floor (Linux's TCP_RTO_MIN) instead of the
 * RFC's 1 s: on LANs and in VMs 1 s turns every tail loss into a 1 s stall,
 * and Linux peers, whose behaviour we are measured against, use 200 ms.
 * As in Linux the floor is on the variation term, srtt + max(4 rttvar,
 * 200 ms): a floor on the whole RTO is under two round trips from ~100 ms
 * up, and there it fired before the ACK of a repair sent a round trip
 * after the last advance (at 50 ms one way, 1-2 % loss: 22 RTOs in 24
 * transfers against 2, as many as Linux's; bench-tcp.md).  Both bounds
 * come from the config.
 */
#include "../base/hist.h"
#include "tcp_cc.h"
#include "tcp_int.h"
#include "../wire/csum.h"
#include "../wire/ipv4.h"
#include "../wire/ipv6.h"

static sk_time_ns tcp_ms(uint32_t ms)
{
	return (sk_time_ns)ms * SK_NS_PER_MS;
}

/* Copy len bytes of sk's send stream from seq into frame f, starting at
 * byte `at` of buf[0] and going on through the next buffers: from the
 * send buffer, or from where a range queued by reference lives
 * (tcp_send_ref).  With `sum`, return their checksum (the pieces chained
 * at their offsets). */
static uint64_t tcp_fill(const struct tcp_tx_frame *f, uint32_t at, const struct tcp_sock *sk,
			 uint32_t seq, uint32_t len, bool sum)
{
	uint32_t bi = 0, bo = at, done = 0, ri = 0;
	uint64_t acc = 0;
	while (ri < sk->nref && tcp_seq_le(sk->ref[ri].seq + sk->ref[ri].len, seq))
		ri++;
	while (done < len) {
		while (bo >= f->cap[bi]) {
			bo = 0;
			if (++bi >= f->nbuf)
				return acc; /* cannot happen: the frame was reserved for len */
		}
		uint32_t n = SK_MIN(len - done, f->cap[bi] - bo);
		const uint8_t *src;
		if (ri < sk->nref && tcp_seq_ge(seq, sk->ref[ri].seq)) {
			uint32_t in = seq - sk->ref[ri].seq;
			src = sk->ref[ri].p + in;
			n = SK_MIN(n, sk->ref[ri].len - in);
		} else {
			uint32_t off = (sk->shead + (seq - sk->sbuf_seq)) % sk->scap;
			src = sk->sbuf + off;
			n = SK_MIN(n, sk->scap - off);
			if (ri < sk->nref)
				n = SK_MIN(n, sk->ref[ri].seq - seq);
		}
		uint8_t *d = f->buf[bi] + bo;
		if (sum)
			acc = csum_add_at(acc, csum_copy(d, src, n), done);
		else
			sk_memcpy(d, src, n);
		done += n;
		bo += n;
		seq += n;
		if (ri < sk->nref && seq == sk->ref[ri].seq + sk->ref[ri].len)
			ri++;
	}
	return acc;
}

/* Send one segment: header h and `len` payload bytes of sk's send buffer
 * from `seq` (sk NULL: none).  More than `seg` bytes go as one TSO frame
 * the device cuts into segments of `seg`; if none can be had now, one
 * segment goes and FIN is dropped from h.  Returns the payload bytes sent.
 * A failed send (no route, ring full) is a lost segment: the retransmit
 * timer covers it like any loss on the path, so it still counts as sent. */
static uint32_t tcp_out_seg(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *src,
			    const struct sk_addr *dst, struct tcp_hdr *h, const struct tcp_sock *sk,
			    uint32_t seq, uint32_t len, uint32_t seg)
{
	/* --trace "tcp_out": one segment, header and checksum through the IP
	 * layer's hand-off to the device ring. */
	uint64_t t0 = sk_trace_begin(st->trace);
	bool v4 = sk_likely(sk_addr_is_v4(dst));
	uint64_t pseudo = v4 ? csum_pseudo4(sk_addr_ip4(src), sk_addr_ip4(dst), IPV4_PROTO_TCP, 0)
			     : csum_pseudo6(src->b, dst->b, IPV6_NH_TCP, 0);
	uint32_t hlen = (uint32_t)tcp_hdr_len(h);
	if (!st->cfg.tx_begin) {
		/* Through a scratch segment (tests, and IP layers without frames). */
		if (len) {
			if (hlen + len > st->scratch_len) {
				st->stats.out_err++;
				return len;
			}
			struct tcp_tx_frame one = {.nbuf = 1};
			one.buf[0] = st->scratch;
			one.cap[0] = st->scratch_len;
			tcp_fill(&one, hlen, sk, seq, len, false);
		}
		size_t n = tcp_emit_ps(st->scratch, st->scratch_len, h, pseudo, (uint16_t)len);
		if (!n) {
			st->stats.out_err++;
			return len;
		}
		st->stats.seg_out++;
		st->stats.bytes_out += len;
		int r = v4 ? st->cfg.ip_output(st->cfg.out_ctx, now, sk_addr_ip4(src), sk_addr_ip4(dst),
					       st->scratch, n)
			   : st->cfg.ip6_output ? st->cfg.ip6_output(st->cfg.out_ctx, now, src, dst,
								  st->scratch, n)
						: -1;
		if (r < 0)
			st->stats.out_err++;
		sk_trace_end(st->trace, SK_TR_tcp_out, t0, 1);
		return len;
	}

	struct tcp_tx_frame f;
	int r = -2;
	if (st->cfg.tx_csum || len > seg) {
		r = st->cfg.tx_begin(st->cfg.out_ctx, now, src, dst, hlen + len, true, &f);
		if (r == -2 && len > seg) {
			st->stats.tso_fallbacks++;
			len = seg;
			h->flags &= (uint8_t)~TCP_FIN;
		}
	}
	if (r == -2)
		r = st->cfg.tx_begin(st->cfg.out_ctx, now, src, dst, hlen + len, false, &f);
	if (r < 0) {
		st->stats.out_err++;
		return len;
	}
	uint8_t *th = f.buf[0];
	tcp_emit_hdr(th, f.cap[0], h);
	if (f.offload) {
		/* The device sums from the header on and folds in what the field
		 * holds: the pseudo header with the whole segment's length (a
		 * TSO frame's, which the device adjusts per segment). */
		if (len)
			tcp_fill(&f, hlen, sk, seq, len, false);
		sk_put_be16(th + 16, (uint16_t)~csum_fold(pseudo + hlen + len));
		st->stats.csum_offloaded++;
	} else {
		uint64_t sum = csum_add(pseudo + hlen + len, th, hlen);
		if (len)
			sum = csum_add_at(sum, tcp_fill(&f, hlen, sk, seq, len, true), hlen);
		sk_put_be16(th + 16, csum_fold(sum));
	}
	f.hlen = (uint16_t)hlen;
	f.gso_size = len > seg ? (uint16_t)seg : 0;
	st->cfg.tx_finish(st->cfg.out_ctx, now, &f, hlen + len);
	st->stats.seg_out++;
	st->stats.bytes_out += len;
	if (f.gso_size) {
		st->stats.tso_frames++;
		st->stats.tso_segs += (len + seg - 1) / seg;
	}
	sk_trace_end(st->trace, SK_TR_tcp_out, t0, 1);
	return len;
}

static void tcp_out_raw(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *src,
			const struct sk_addr *dst, struct tcp_hdr *h)
{
	tcp_out_seg(st, now, src, dst, h, NULL, 0, 0, 1);
}

/* Window to advertise, already scaled down; updates rcv_adv.  The right
 * edge never moves left (RFC 9293 3.8.6.2.2: do not shrink the window). */
static uint16_t tcp_adv_window(const struct tcp_stack *st, struct tcp_sock *sk, bool syn)
{
	uint32_t right = sk->rcv_nxt + tcp_rcv_space(st, sk);
	if (tcp_seq_lt(right, sk->rcv_adv))
		right = sk->rcv_adv;
	uint32_t win = right - sk->rcv_nxt;
	uint32_t shift = (!syn && (sk->fl & TF_WS)) ? sk->rcv_wscale : 0;
	uint32_t scaled = win >> shift;
	if (scaled > 65535)
		scaled = 65535;
	uint32_t edge = sk->rcv_nxt + (scaled << shift);
	if (tcp_seq_gt(edge, sk->rcv_adv) || syn)
		sk->rcv_adv = edge;
	return (uint16_t)scaled;
}

/* Send one segment of the connection: `len` bytes of the send buffer from
 * `seq` (clamped to what fits with the options).  FIN is dropped from the
 * flags if the data had to be cut.  Returns the payload bytes sent. */
static uint32_t tcp_xmit(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t seq,
			 uint8_t flags, uint32_t len)
{
	struct tcp_hdr h;
	sk_memset(&h, 0, sizeof(h));
	h.sport = sk->lport;
	h.dport = sk->rport;
	h.seq = seq;
	h.flags = flags;
	if (flags & TCP_ACK)
		h.ack = sk->rcv_nxt;
	bool syn = flags & TCP_SYN;
	bool active_syn = syn && !(flags & TCP_ACK);
	h.win = tcp_adv_window(st, sk, syn);
	if (syn) {
		h.opts.has_mss = true;
		h.opts.mss = tcp_our_mss(st, &sk->raddr);
		if (active_syn || (sk->fl & TF_WS)) {
			h.opts.has_ws = true;
			h.opts.ws = sk->rcv_wscale;
		}
		h.opts.sack_perm = active_syn || (sk->fl & TF_SACK);
	}
	if (active_syn || (sk->fl & TF_TS)) {
		h.opts.has_ts = true;
		h.opts.ts_val = tcp_ts_now(sk, now);
		h.opts.ts_ecr = (flags & TCP_ACK) ? sk->ts_recent : 0;
	}
	if (!syn && (sk->fl & TF_SACK) && (sk->nooo || sk->dsack_pending)) {
		uint8_t n = 0;
		uint8_t maxb = (sk->fl & TF_TS) ? 3 : 4;
		if (sk->dsack_pending && (flags & TCP_ACK)) {
			/* RFC 2883 4: a duplicate we received goes first, once. */
			h.opts.sack[n].left = sk->dsack.l;
			h.opts.sack[n].right = sk->dsack.r;
			n++;
			sk->dsack_pending = false;
			st->stats.dsacks_out++;
		}
		/* RFC 2018 4: then the block holding the most recent segment. */
		uint8_t first = n;
		struct tcp_range last = sk->ooo_last;
		const struct tcp_range *oo = tcp_ooo_c(sk);
		for (uint8_t i = 0; i < sk->nooo; i++) {
			if (tcp_seq_le(oo[i].l, last.l) && tcp_seq_ge(oo[i].r, last.r)) {
				h.opts.sack[n].left = oo[i].l;
				h.opts.sack[n].right = oo[i].r;
				n++;
				break;
			}
		}
		for (uint8_t i = 0; i < sk->nooo && n < maxb; i++) {
			if (n > first && h.opts.sack[first].left == oo[i].l)
				continue;
			h.opts.sack[n].left = oo[i].l;
			h.opts.sack[n].right = oo[i].r;
			n++;
		}
		h.opts.nsack = n;
	}
	uint32_t optlen = (uint32_t)tcp_opts_len(&h.opts);
	uint32_t room = sk->snd_mss > optlen ? sk->snd_mss - optlen : 1;
	/* And what the MTU holds over this family (mtu - 40, or 60 over IPv6). */
	room = SK_MIN(room, (uint32_t)tcp_our_mss(st, &sk->raddr) - optlen);
	if (len > room) {
		/* More than a segment: one TSO frame where the device takes it,
		 * each of its segments `room` long with these same options. */
		uint32_t tso = sk_addr_is_v4(&sk->raddr) ? st->cfg.tso_max4 : st->cfg.tso_max6;
		uint32_t most = tso > TCP_HLEN + optlen + room && !syn ? tso - TCP_HLEN - optlen : room;
		if (len > most) {
			len = most;
			h.flags &= (uint8_t)~TCP_FIN;
		}
	}
	len = tcp_out_seg(st, now, &sk->laddr, &sk->raddr, &h, sk, seq, len, room);
	if (flags & TCP_ACK) {
		sk->last_ack_sent = sk->rcv_nxt;
		sk->rcv_unacked = 0;
		sk->fl &= ~(uint32_t)TF_ACK_NOW;
		sk->delack_at = SK_TIME_NEVER;
	}
	return len;
}

/* An ACK that cannot wait for the batch: the duplicate ACKs of out-of-order
 * data, which the sender counts one by one (RFC 5681 3.2, 4.2). */
/* Pure ACKs carry SND.MAX, not SND.NXT: after an RTO pulls SND.NXT back,
 * the peer may already hold data up to SND.MAX, and an ACK below its RCV.NXT
 * would be unacceptable there (RFC 9293 3.10.7.4) -- both sides would then
 * trade unacceptable ACKs forever. */
/* The SEQ of a segment without data in a synchronized state: snd_max,
 * unless that lies past the peer's window.  RFC 9293 MUST-34: the sender
 * is robust against a window the peer shrank, and a peer whose window is
 * zero accepts a segment only at its RCV.NXT (3.10.7.4); an ACK at
 * snd_max beyond that edge would be dropped unread, with the ACK it
 * carries, and a peer that needs it to free its buffer (so as to open its
 * window) would wait for ever.  Linux's tcp_acceptable_seq does the same. */
static uint32_t tcp_ack_seq(const struct tcp_sock *sk)
{
	uint32_t edge = sk->snd_una + sk->snd_wnd;
	return tcp_seq_gt(sk->snd_max, edge) ? edge : sk->snd_max;
}

void tcp_send_ack(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	tcp_xmit(st, sk, now, tcp_ack_seq(sk), TCP_ACK, 0);
	st->stats.acks_out++;
}

void tcp_ack_now(struct tcp_stack *st, struct tcp_sock *sk)
{
	sk->fl |= TF_ACK_NOW;
	tcp_egress(st, sk);
}

/* RFC 5961 7: challenge ACKs share one budget per second across the stack. */
void tcp_challenge_ack(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	if (now - st->chack_epoch >= SK_NS_PER_S || now < st->chack_epoch) {
		st->chack_epoch = now;
		st->chack_n = 0;
	}
	if (st->chack_n >= st->cfg.challenge_ack_per_s) {
		st->stats.challenge_acks_limited++;
		return;
	}
	st->chack_n++;
	st->stats.challenge_acks++;
	tcp_ack_now(st, sk);
}

/* RST from a connection we abort: <SEQ=SND.NXT><CTL=RST,ACK>. */
void tcp_send_rst(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	struct tcp_hdr h;
	sk_memset(&h, 0, sizeof(h));
	h.sport = sk->lport;
	h.dport = sk->rport;
	h.seq = sk->snd_max;
	h.ack = sk->rcv_nxt;
	h.flags = TCP_RST | TCP_ACK;
	st->stats.rst_out++;
	tcp_out_raw(st, now, &sk->laddr, &sk->raddr, &h);
}

/* RFC 9293 3.10.7.1: the reply to a segment for no connection. */
void tcp_reply_rst(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
		   const struct sk_addr *raddr, const struct tcp_hdr *in)
{
	if (in->flags & TCP_RST)
		return;
	struct tcp_hdr h;
	sk_memset(&h, 0, sizeof(h));
	h.sport = in->dport;
	h.dport = in->sport;
	if (in->flags & TCP_ACK) {
		h.seq = in->ack;
		h.flags = TCP_RST;
	} else {
		h.seq = 0;
		h.ack = in->seq + in->payload_len + !!(in->flags & TCP_SYN) + !!(in->flags & TCP_FIN);
		h.flags = TCP_RST | TCP_ACK;
	}
	st->stats.rst_out++;
	tcp_out_raw(st, now, laddr, raddr, &h);
}

/* Stateless SYN-ACK carrying a cookie.  Window scale and SACK-permitted
 * ride in the low 6 bits of our timestamp (bits 0..3 the shift, 15 = none;
 * bit 4 SACK); without timestamps they are not offered, as Linux does. */
void tcp_reply_cookie(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
		      const struct sk_addr *raddr, const struct tcp_hdr *in)
{
	struct tcp_hdr h;
	sk_memset(&h, 0, sizeof(h));
	h.sport = in->dport;
	h.dport = in->sport;
	uint16_t peer_mss = in->opts.has_mss ? in->opts.mss : 536;
	uint16_t mss;
	h.seq = tcp_cookie_make(st, now, laddr, in->dport, raddr, in->sport, in->seq, peer_mss,
				&mss);
	h.ack = in->seq + 1;
	h.flags = TCP_SYN | TCP_ACK;
	h.win = (uint16_t)SK_MIN(st->cfg.rcvbuf, 65535u);
	h.opts.has_mss = true;
	h.opts.mss = tcp_our_mss(st, raddr);
	if (in->opts.has_ts) {
		uint32_t bits = in->opts.has_ws ? in->opts.ws : 0xf;
		if (in->opts.sack_perm)
			bits |= 0x10;
		uint32_t tsv = (uint32_t)(now / SK_NS_PER_MS) +
			       tcp_ts_offset(st, laddr, in->dport, raddr, in->sport);
		h.opts.has_ts = true;
		h.opts.ts_val = (tsv & ~0x3fu) | bits;
		h.opts.ts_ecr = in->opts.ts_val;
		if (in->opts.has_ws) {
			h.opts.has_ws = true;
			h.opts.ws = st->rcv_wscale;
		}
		h.opts.sack_perm = in->opts.sack_perm;
	}
	st->stats.cookies_sent++;
	tcp_out_raw(st, now, laddr, raddr, &h);
}

/* The retransmission deadline, or a tail loss probe's before it where one
 * applies (RFC 8985 7.2): one timer serves both, TF_PTO says which. */
void tcp_rearm_rtx(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	sk_time_ns pto = tcp_pto(st, sk);
	sk->fl &= ~(uint32_t)TF_RTX_TMR;
	if (pto) {
		sk->rtx_at = now + pto;
		sk->fl |= TF_PTO;
	} else {
		sk->rtx_at = now + sk->rto;
		sk->fl &= ~(uint32_t)TF_PTO;
		/* A lost retransmission's check comes first (tcp_recovery.c). */
		sk_time_ns chk = tcp_rtx_chk_deadline(sk, now);
		if (chk < sk->rtx_at) {
			sk->rtx_at = chk;
			sk->fl |= TF_RTX_TMR;
		}
	}
}

/* RFC 8985 7.3: the probe.  Holes below the highest SACK have now been
 * out for two round trips while later data arrived: RACK calls them lost,
 * and recovery repairs them.  Otherwise one new segment if the peer's
 * window has room, else the last segment again, so that the answer, an
 * ACK or a SACK, shows what the tail lost. */
static void tcp_tlp_fire(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	if (sk->snd_una == sk->snd_max)
		return;
	st->stats.tlp_probes++;
	sk->fl |= TF_TLP_OUT;
	sk->tlp_end = sk->snd_max;
	uint32_t data_end = sk->sbuf_seq + sk->slen;
	if (sk->nscore) {
		sk->rack_edge = tcp_score(sk)[sk->nscore - 1].l;
		sk->fl |= TF_RACK;
		tcp_recovery_enter(st, sk, now);
	} else if (tcp_seq_lt(sk->snd_nxt, data_end) &&
		   tcp_seq_lt(sk->snd_nxt, sk->snd_una + sk->snd_wnd)) {
		st->stats.tlp_new_data++;
		sk->fl |= TF_TLP_NEW;
	} else {
		bool fin = (sk->fl & TF_FIN_QUEUED) && tcp_seq_gt(sk->snd_max, data_end);
		uint32_t end = fin ? data_end : sk->snd_max;
		uint32_t len = SK_MIN(tcp_eff_mss(sk), end - sk->snd_una);
		tcp_xmit(st, sk, now, end - len, TCP_ACK | (fin ? TCP_FIN : 0), len);
		st->stats.retransmits++;
		sk->nrtx++;
		sk->rtt_on = false; /* Karn */
	}
	tcp_rearm_rtx(st, sk, now); /* the RTO now: TF_TLP_OUT rules out a second probe */
	tcp_egress(st, sk);
}

/* RFC 6298 2.2-2.4 (alpha 1/8, beta 1/4, K 4), clamped to the config. */
void tcp_rtt_sample(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns rtt)
{
	uint32_t r = (uint32_t)SK_MIN(rtt / SK_NS_PER_US, (sk_time_ns)UINT32_MAX / 8);
	if (r == 0)
		r = 1;
	if (sk->srtt_us == 0) {
		sk->srtt_us = r;
		sk->rttvar_us = r / 2;
	} else {
		uint32_t d = sk->srtt_us > r ? sk->srtt_us - r : r - sk->srtt_us;
		sk->rttvar_us = (3 * sk->rttvar_us + d) / 4;
		sk->srtt_us = (7 * sk->srtt_us + r) / 8;
	}
	tcp_cc(sk)->on_rtt(sk, r, 0);
	sk_time_ns var = SK_MAX((sk_time_ns)4 * sk->rttvar_us * SK_NS_PER_US, tcp_ms(st->cfg.rto_min_ms));
	sk_time_ns rto = (sk_time_ns)sk->srtt_us * SK_NS_PER_US + var;
	rto = SK_MIN(rto, tcp_ms(st->cfg.rto_max_ms));
	sk->rto = rto;
	sk->backoff = 0;
}

/* Pacing (tcp_cc.h): a token bucket of depth tcp_pace_depth (one
 * quantum), filled at pacing_rate.  pace_at is when it is full: each send
 * moves it on by its length at the rate, from now if it was already full.
 * Data goes in batches; a batch starts once tcp_pace_wake has come (half
 * the bucket filled) and takes what the bucket holds, whole segments;
 * *left is what the current batch may still send.  So over any interval
 * the bytes sent are at most the rate times its length plus one quantum,
 * and a socket woken late (the loop's timer, a busy CPU) by up to half a
 * quantum's time still sends at its rate: with batches only once the
 * bucket was full, every late wake-up was rate lost (bench-tcp.md, "The
 * bandwidth estimate").  A held socket sends no data now: TF_PACE_WAIT
 * puts tcp_pace_wake among its timers, and tcp_timers_run queues it again
 * then. */
static bool tcp_pace_hold(struct tcp_sock *sk, sk_time_ns now, uint32_t *left, uint32_t depth)
{
	uint32_t mss = tcp_eff_mss(sk);
	if (*left >= mss)
		return false;
	if (now < tcp_pace_wake(sk)) {
		sk->fl |= TF_PACE_WAIT;
		return true;
	}
	/* The bucket: its depth less what the schedule is still ahead of now
	 * (rounded up).  At most tcp_pace_wake's lead ahead, so at least half
	 * the depth in whole segments, and no overflow. */
	uint64_t owed = 0;
	if (sk->pace_at > now)
		owed = ((sk->pace_at - now) * sk->pacing_rate + SK_NS_PER_S - 1) / SK_NS_PER_S;
	uint32_t tok = owed < depth ? depth - (uint32_t)owed : 0;
	tok -= tok % mss;
	*left = tok > mss ? tok : mss;
	return false;
}

/* `len` bytes left at `now`: the bucket is full again len / rate later
 * than it was, or than now if it was full already. */
static void tcp_pace_sent(struct tcp_sock *sk, sk_time_ns now, uint32_t len, uint32_t *left)
{
	sk_time_ns from = sk->pace_at > now ? sk->pace_at : now;
	sk->pace_at = from + ((sk_time_ns)len * SK_NS_PER_S + sk->pacing_rate - 1) / sk->pacing_rate;
	*left -= SK_MIN(len, *left);
}

/* The chronographs (enum tcp_limit in tcp.h): every output adds the time
 * since the last one to the counters of the state that held until now, so
 * they are current to the last output (a read while a state lasts).  Idle
 * counts nowhere: an output that finds and leaves the socket idle (a pure
 * ACK of a receiver) does nothing, and leaving idle starts the clock. */
void tcp_limit_set(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, enum tcp_limit l)
{
	if (sk->limit == TCP_LIM_NONE && l == TCP_LIM_NONE)
		return;
	uint32_t t = (uint32_t)(now / SK_NS_PER_US);
	if (sk->limit != TCP_LIM_NONE) {
		uint64_t *held[] = {[TCP_LIM_RWND] = &st->stats.rwnd_limited_us,
				    [TCP_LIM_SNDBUF] = &st->stats.sndbuf_limited_us,
				    [TCP_LIM_CWND] = &st->stats.cwnd_limited_us,
				    [TCP_LIM_PACE] = &st->stats.pace_limited_us};
		uint64_t dt = t - sk->limit_us;
		st->stats.busy_us += dt;
		if (held[sk->limit])
			*held[sk->limit] += dt;
	}
	sk->limit = (uint8_t)l;
	sk->limit_us = t;
}

/* Why the output below stopped: data still waits (on the pacing release
 * time, the peer's window, or else cwnd or recovery's budget; a runt held
 * by Nagle or SWS avoidance is only busy), or everything queued is out
 * and the app waits for room (the send buffer), or has no more yet. */
static enum tcp_limit tcp_limit_at_stop(const struct tcp_sock *sk, uint32_t data_end, bool held)
{
	uint32_t mss = tcp_eff_mss(sk);
	if (tcp_seq_lt(sk->snd_nxt, data_end)) {
		uint32_t next = SK_MIN(mss, data_end - sk->snd_nxt);
		if (held)
			return TCP_LIM_PACE;
		if (sk->snd_nxt - sk->snd_una + next > sk->snd_wnd)
			return TCP_LIM_RWND;
		if (next < mss && sk->snd_nxt != sk->snd_una)
			return TCP_LIM_BUSY;
		return TCP_LIM_CWND;
	}
	if (sk->snd_una == sk->snd_max)
		return TCP_LIM_NONE;
	return (sk->fl & TF_WANT_WRITE) ? TCP_LIM_SNDBUF : TCP_LIM_BUSY;
}

static void tcp_output_data(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	bool fin_q = sk->fl & TF_FIN_QUEUED;
	uint32_t data_end = sk->sbuf_seq + sk->slen;
	uint32_t mss = tcp_eff_mss(sk);
	uint32_t nxt0 = sk->snd_nxt, max0 = sk->snd_max;
	/* New data goes in TSO frames where the device cuts them (tcp_xmit
	 * sizes each), else a segment at a time. */
	uint32_t tso = sk_addr_is_v4(&sk->raddr) ? st->cfg.tso_max4 : st->cfg.tso_max6;
	uint32_t burst = tso > mss ? tso : mss;
	/* Paced (BBR, and CUBIC and NewReno in slow start: tcp_cc.h): one quantum
	 * at a time, none before pace_at.  Off, this is the only test the
	 * send path pays. */
	bool paced = sk->pacing_rate != 0;
	const struct tcp_cc_ops *cc = NULL;
	uint32_t quantum = 0, pace_left = 0;
	bool held = false; /* the pacing release time stopped a send */
	if (paced) {
		cc = tcp_cc(sk);
		if (sk->pacing_rate > st->pacing_rate_max)
			st->pacing_rate_max = sk->pacing_rate;
		quantum = tcp_pace_depth(sk);
		burst = SK_MIN(burst, quantum);
		sk->fl &= ~(uint32_t)TF_PACE_WAIT;
		if ((held = tcp_pace_hold(sk, now, &pace_left, quantum)))
			goto sent;
	}

	/* SACK recovery (RFC 6675 5 (C)): lost holes first, then new data, as
	 * long as PRR's window has room above pipe; the first hole goes out
	 * whatever the window (TF_RTX_ONE, the fast retransmit). */
	bool sack_rec = tcp_sack_recovery(sk);
	uint32_t budget = 0;
	if (sack_rec) {
		bool force = sk->fl & TF_RTX_ONE;
		sk->fl &= ~(uint32_t)TF_RTX_ONE;
		uint32_t pipe = tcp_pipe(sk);
		budget = sk->cwnd > pipe ? sk->cwnd - pipe : 0;
		uint32_t edge = tcp_seq_min(tcp_lost_edge(sk), data_end);
		for (;;) {
			uint32_t start, from = tcp_seq_max(sk->rtx_hi, sk->snd_una);
			bool redo = sk->fl & TF_RTX_REDO;
			/* Holes whose retransmission was lost (tcp_rtx_check)
			 * first, whatever the edge: they are lost. */
			uint32_t n = tcp_next_hole(sk, from,
						   redo ? tcp_seq_min(sk->rtx_chk_end, data_end) : edge,
						   &start);
			if (redo && !n) {
				tcp_rtx_redo_done(sk, now);
				continue;
			}
			n = SK_MIN(n, mss);
			if (!n || (!force && budget < n))
				break;
			if (paced && (held = tcp_pace_hold(sk, now, &pace_left, quantum)))
				break;
			/* The FIN went with the end of the data: it goes again
			 * with it (tcp_xmit drops it if the segment is cut). */
			bool fin = fin_q && start + n == data_end && tcp_seq_gt(sk->snd_max, data_end);
			n = tcp_xmit(st, sk, now, start, TCP_ACK | (fin ? TCP_FIN : 0), n);
			if (paced)
				tcp_pace_sent(sk, now, n, &pace_left);
			tcp_undo_arm(sk, now, start);
			force = false;
			sk->rtx_hi = start + n;
			tcp_rtx_check_start(sk, now, start + n);
			budget = budget > n ? budget - n : 0;
			sk->prr_out += n;
			st->stats.retransmits++;
			st->stats.sack_retransmits++;
			st->stats.recovery_rtx++;
			sk->nrtx++;
			sk->rtt_on = false; /* Karn */
			if (sk->rtx_at == SK_TIME_NEVER)
				tcp_rearm_rtx(st, sk, now);
		}
	} else if (sk->fl & TF_RTX_ONE) {
		/* NewReno fast retransmit / partial ACK: one segment at rtx_hi. */
		sk->fl &= ~(uint32_t)TF_RTX_ONE;
		uint32_t start;
		uint32_t from = tcp_seq_max(sk->rtx_hi, sk->snd_una);
		uint32_t n = tcp_next_hole(sk, from, tcp_seq_min(sk->snd_max, data_end), &start);
		if (n) {
			n = tcp_xmit(st, sk, now, start, TCP_ACK, SK_MIN(n, mss));
			if (paced)
				tcp_pace_sent(sk, now, n, &pace_left);
			tcp_undo_arm(sk, now, start);
			sk->rtx_hi = start + n;
			st->stats.retransmits++;
			if (sk->nscore) /* the hole was chosen from the peer's SACK blocks */
				st->stats.sack_retransmits++;
			sk->nrtx++;
			sk->rtt_on = false; /* Karn */
			if (sk->rtx_at == SK_TIME_NEVER)
				tcp_rearm_rtx(st, sk, now);
		} else if (fin_q && sk->snd_una == data_end && tcp_seq_gt(sk->snd_max, data_end)) {
			tcp_xmit(st, sk, now, data_end, TCP_ACK | TCP_FIN, 0);
			st->stats.retransmits++;
		}
	}

	/* The window for new data (and for what an RTO resends): in SACK
	 * recovery what PRR left; otherwise cwnd, plus one segment for each of
	 * the first two duplicate ACKs (RFC 3042 limited transmit). */
	uint32_t lim;
	if (sack_rec)
		lim = SK_MIN(sk->snd_wnd, (sk->snd_nxt - sk->snd_una) + budget);
	else
		lim = SK_MIN(sk->snd_wnd,
			     sk->cwnd + ((sk->fl & TF_RECOVERY) ? 0 : SK_MIN(sk->dupacks, 2u) * mss));
	if (sk->fl & TF_TLP_NEW) {
		/* The probe: one new segment past cwnd (RFC 8985 7.3). */
		sk->fl &= ~(uint32_t)TF_TLP_NEW;
		lim = SK_MIN(sk->snd_wnd, (sk->snd_nxt - sk->snd_una) + mss);
	}
	while (tcp_seq_lt(sk->snd_nxt, data_end)) {
		if (paced && (held = tcp_pace_hold(sk, now, &pace_left, quantum)))
			break;
		if (sk->nscore && tcp_seq_lt(sk->snd_nxt, sk->snd_max)) {
			/* Resending after an RTO: skip what the peer SACKed (RFC
			 * 6675 5.1: use the SACK information that is still valid). */
			uint32_t start;
			tcp_next_hole(sk, sk->snd_nxt, sk->snd_max, &start);
			start = tcp_seq_min(start, data_end);
			if (start != sk->snd_nxt) {
				st->stats.rto_rtx_skipped_sacked += start - sk->snd_nxt;
				sk->snd_nxt = start;
				continue;
			}
		}
		uint32_t avail = data_end - sk->snd_nxt;
		if (sk->nscore && tcp_seq_lt(sk->snd_nxt, sk->snd_max)) {
			uint32_t start, hole = tcp_next_hole(sk, sk->snd_nxt, data_end, &start);
			if (hole)
				avail = SK_MIN(avail, hole);
		}
		uint32_t wnd_end = sk->snd_una + lim;
		if (!tcp_seq_lt(sk->snd_nxt, wnd_end))
			break;
		uint32_t room = wnd_end - sk->snd_nxt;
		uint32_t n = SK_MIN(SK_MIN(avail, room), burst);
		if (paced)
			n = SK_MIN(n, pace_left); /* the batch's rest (at least a segment) */
		bool in_flight = sk->snd_nxt != sk->snd_una;
		if (n > mss && n % mss &&
		    (n < avail || (in_flight && !(sk->fl & TF_NODELAY) && !fin_q)))
			n -= n % mss; /* whole segments: the runt waits as it would alone */
		bool rtx = tcp_seq_lt(sk->snd_nxt, sk->snd_max);
		bool hole_cut = avail < data_end - sk->snd_nxt; /* a SACKed range follows */
		if (n < mss && !hole_cut) {
			/* Sender SWS avoidance: a window-limited runt waits for ACKs. */
			if (n < avail && in_flight && n < sk->max_sndwnd / 2)
				break;
			/* Nagle (RFC 9293 3.7.4): one small segment in flight at a
			 * time, unless NODELAY or the FIN follows it. */
			if (n == avail && in_flight && !(sk->fl & TF_NODELAY) && !fin_q)
				break;
		}
		bool last = sk->snd_nxt + n == data_end;
		uint8_t fl = TCP_ACK | (last ? TCP_PSH : 0) | ((last && fin_q) ? TCP_FIN : 0);
		uint32_t sent = tcp_xmit(st, sk, now, sk->snd_nxt, fl, n);
		if (paced) {
			tcp_pace_sent(sk, now, sent, &pace_left);
			if (!rtx && cc->on_send)
				cc->on_send(sk, sk->snd_nxt, sent, now);
		}
		if (sack_rec)
			sk->prr_out += sent;
		else if (!rtx && tcp_seq_gt(sk->snd_nxt + sent, sk->snd_una + sk->cwnd))
			st->stats.limited_transmits++;
		if (rtx) {
			tcp_undo_arm(sk, now, sk->snd_nxt);
			st->stats.retransmits++;
			sk->nrtx++;
		} else if (!sk->rtt_on && !(sk->fl & TF_TS)) {
			sk->rtt_start = now;
			sk->rtt_on = true;
			sk->rtt_seq = sk->snd_nxt;
		}
		sk->snd_nxt += sent;
		if (sk->snd_nxt == data_end && fin_q && (fl & TCP_FIN) && sent == n)
			sk->snd_nxt++; /* the FIN went with it */
		sk->snd_max = tcp_seq_max(sk->snd_max, sk->snd_nxt);
		if (sk->rtx_at == SK_TIME_NEVER)
			tcp_rearm_rtx(st, sk, now);
	}

	if (fin_q && sk->snd_nxt == data_end) {
		/* FIN alone (everything before it already sent); it needs no window. */
		tcp_xmit(st, sk, now, data_end, TCP_ACK | TCP_FIN, 0);
		if (tcp_seq_lt(data_end, sk->snd_max))
			st->stats.retransmits++;
		sk->snd_nxt = data_end + 1;
		sk->snd_max = tcp_seq_max(sk->snd_max, sk->snd_nxt);
		if (sk->rtx_at == SK_TIME_NEVER)
			tcp_rearm_rtx(st, sk, now);
	}

sent:
	tcp_limit_set(st, sk, now, tcp_limit_at_stop(sk, data_end, held));
	if (sk->snd_nxt != nxt0)
		sk->sent_flight = sk->snd_max - sk->snd_una; /* tcp_types.h */
	if (sk->snd_max != max0)
		sk->new_us = (uint32_t)(now / SK_NS_PER_US);

	/* Persist (RFC 9293 3.8.6.1): data waits on a zero window, nothing is in
	 * flight to bring an ACK: probe on a backed-off timer. */
	if (sk->snd_una != sk->snd_max) {
		/* Anything outstanding has a retransmit timer, whatever else happened. */
		if (sk->rtx_at == SK_TIME_NEVER)
			tcp_rearm_rtx(st, sk, now);
		sk->persist_at = SK_TIME_NEVER;
	} else if (sk->snd_wnd == 0 && tcp_seq_lt(sk->snd_nxt, data_end)) {
		if (sk->persist_at == SK_TIME_NEVER) {
			sk_time_ns d = sk->rto << SK_MIN(sk->backoff, 10);
			sk->persist_at = now + SK_MIN(d, tcp_ms(st->cfg.rto_max_ms));
		}
		sk->rtx_at = SK_TIME_NEVER;
	} else {
		sk->persist_at = SK_TIME_NEVER;
	}
}

void tcp_output(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	switch (sk->state) {
	case TCP_CLOSED:
	case TCP_LISTEN:
		sk->fl &= ~(uint32_t)(TF_ACK_NOW | TF_PROBE);
		return;
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		if (sk->snd_nxt == sk->iss) {
			uint8_t fl = TCP_SYN | (sk->state == TCP_SYN_RECEIVED ? TCP_ACK : 0);
			tcp_xmit(st, sk, now, sk->iss, fl, 0);
			if (tcp_seq_lt(sk->iss, sk->snd_max)) {
				st->stats.retransmits++;
			} else {
				sk->rtt_start = now; /* Karn: only the first SYN is timed */
				sk->rtt_on = true;
				sk->rtt_seq = sk->iss;
			}
			sk->snd_nxt = sk->iss + 1;
			sk->snd_max = tcp_seq_max(sk->snd_max, sk->snd_nxt);
			if (sk->rtx_at == SK_TIME_NEVER)
				tcp_rearm_rtx(st, sk, now);
		} else if (sk->state == TCP_SYN_RECEIVED && (sk->fl & TF_ACK_NOW)) {
			tcp_xmit(st, sk, now, sk->snd_max, TCP_ACK, 0);
		}
		sk->fl &= ~(uint32_t)(TF_ACK_NOW | TF_PROBE);
		break;
	case TCP_TIME_WAIT:
		if (sk->fl & TF_ACK_NOW) {
			tcp_xmit(st, sk, now, tcp_ack_seq(sk), TCP_ACK, 0);
			st->stats.acks_out++;
		}
		break;
	default: {
		uint64_t before = st->stats.seg_out;
		if (sk->fl & TF_PROBE) {
			/* Zero-window / keep-alive probe: an old sequence the peer must ACK. */
			sk->fl &= ~(uint32_t)TF_PROBE;
			tcp_xmit(st, sk, now, sk->snd_una - 1, TCP_ACK, 0);
		}
		tcp_output_data(st, sk, now);
		if ((sk->fl & TF_ACK_NOW) && st->stats.seg_out == before) {
			tcp_xmit(st, sk, now, tcp_ack_seq(sk), TCP_ACK, 0);
			st->stats.acks_out++;
		}
		break;
	}
	}
	sk->fl &= ~(uint32_t)TF_ACK_NOW;
	tcp_timer_sync(st, sk);
}

/* ---- timers ---- */

static void tcp_rto_fire(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	st->stats.rto_fires++;
	if (sk->state == TCP_SYN_SENT || sk->state == TCP_SYN_RECEIVED) {
		if (++sk->retries > st->cfg.syn_retries) {
			st->stats.conn_timeout++;
			tcp_conn_done(st, sk, -SK_ETIMEDOUT);
			return;
		}
		sk->backoff++;
		sk->rto = SK_MIN(sk->rto * 2, tcp_ms(st->cfg.rto_max_ms));
		sk->snd_nxt = sk->iss;
		sk->rtt_on = false;
		tcp_egress(st, sk);
		return;
	}
	if (sk->snd_una == sk->snd_max || sk->state == TCP_TIME_WAIT)
		return;
	if (sk->first_rtx == SK_TIME_NEVER)
		sk->first_rtx = now;
	if (sk->retries >= st->cfg.max_retries ||
	    (sk->user_timeout_ms && now - sk->first_rtx >= tcp_ms(sk->user_timeout_ms))) {
		st->stats.conn_timeout++;
		tcp_send_rst(st, sk, now);
		tcp_conn_done(st, sk, -SK_ETIMEDOUT);
		return;
	}
	sk->retries++;
	uint32_t mss = tcp_eff_mss(sk);
	if (sk->backoff == 0) { /* RFC 5681 (4): only for the first timeout */
		/* The window before the loss, unless a fast recovery already
		 * saved it (RFC 3522: undo to where the episode began). */
		if (!(sk->fl & TF_RECOVERY))
			tcp_undo_save(sk);
		else
			sk->fl &= ~(uint32_t)TF_UNDO_ARMED;
		sk->ssthresh = tcp_loss_ssthresh(sk, now);
		/* RFC 6675 5.1: keep the SACK information; the resend skips
		 * what the peer holds. */
	} else {
		/* A second timeout with it kept: the receiver may have reneged
		 * (RFC 2018 8), so forget it and resend everything. */
		sk->nscore = 0;
		tcp_score_release(st, sk);
		sk->fl &= ~(uint32_t)(TF_UNDO | TF_UNDO_ARMED);
	}
	sk->cwnd = mss; /* loss window */
	tcp_cc(sk)->on_rto(sk, now);
	sk->fl &= ~(uint32_t)(TF_RECOVERY | TF_RTX_ONE | TF_TLP_OUT | TF_TLP_NEW | TF_RACK |
			      TF_RTX_CHK | TF_RTX_REDO | TF_RTX_TMR | TF_RTX_NX);
	sk->dupacks = 0;
	sk->recover = sk->snd_max; /* RFC 6582 4: no fast retransmit below this */
	sk->snd_nxt = sk->snd_una;
	sk->rtx_hi = sk->snd_una;
	if (sk->snd_wnd == 0)
		sk->fl |= TF_RTX_ONE; /* the window shrank to 0: the head segment is the probe */
	sk->rtt_on = false;
	sk->backoff++;
	sk->rto = SK_MIN(sk->rto * 2, tcp_ms(st->cfg.rto_max_ms));
	tcp_egress(st, sk);
}

static void tcp_timers_run(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	if (sk->tw_at <= now) {
		sk->tw_at = SK_TIME_NEVER;
		tcp_conn_done(st, sk, 0);
		return;
	}
	if (sk->rtx_at <= now) {
		sk->rtx_at = SK_TIME_NEVER;
		if (sk->fl & TF_PTO) {
			sk->fl &= ~(uint32_t)TF_PTO;
			tcp_tlp_fire(st, sk, now);
		} else if (sk->fl & TF_RTX_TMR) {
			sk->fl &= ~(uint32_t)TF_RTX_TMR;
			tcp_rtx_check_timer(st, sk, now);
		} else {
			tcp_rto_fire(st, sk, now);
		}
		if (!sk->in_use || sk->state == TCP_CLOSED)
			return;
	}
	if (sk->persist_at <= now) {
		sk->persist_at = SK_TIME_NEVER;
		if (sk->snd_wnd == 0 && sk->slen) {
			st->stats.window_probes++;
			sk->fl |= TF_PROBE;
			if (sk->backoff < 16)
				sk->backoff++;
			tcp_egress(st, sk);
		}
	}
	if ((sk->fl & TF_PACE_WAIT) && tcp_pace_wake(sk) <= now) {
		st->stats.pace_wakes++;
		sk->fl &= ~(uint32_t)TF_PACE_WAIT;
		tcp_egress(st, sk);
	}
	if (sk->delack_at <= now) {
		sk->delack_at = SK_TIME_NEVER;
		st->stats.delayed_acks++;
		tcp_ack_now(st, sk);
	}
	if (sk->keep_at <= now) {
		sk->keep_at = SK_TIME_NEVER;
		if ((sk->fl & TF_KEEPALIVE) && tcp_synchronized(sk) && sk->state != TCP_TIME_WAIT) {
			sk_time_ns idle_end = sk->last_rcv + tcp_ms(sk->keep_idle_ms);
			if (sk->keep_probes == 0 && idle_end > now) {
				sk->keep_at = idle_end; /* lazily re-armed: traffic moved it */
			} else if (sk->snd_una != sk->snd_max) {
				sk->keep_at = now + tcp_ms(sk->keep_idle_ms); /* RTO is in charge */
			} else if (sk->keep_probes >= sk->keep_cnt) {
				st->stats.conn_timeout++;
				tcp_send_rst(st, sk, now);
				tcp_conn_done(st, sk, -SK_ETIMEDOUT);
				return;
			} else {
				sk->keep_probes++;
				st->stats.keepalive_probes++;
				sk->fl |= TF_PROBE;
				tcp_egress(st, sk);
				sk->keep_at = now + tcp_ms(sk->keep_intvl_ms);
			}
		}
	}
	tcp_timer_sync(st, sk);
}

void tcp_poll(struct tcp_stack *st, sk_time_ns now)
{
	st->stats.polls++;
	uint32_t id;
	while (timer_heap_pop_due(&st->timers, now, &id)) {
		st->stats.sockets_visited++;
		st->stats.timer_fires++;
		tcp_timers_run(st, &st->socks[id], now);
	}
	while (!tcp_list_empty(&st->egress)) {
		struct tcp_sock *sk = tcp_container(st->egress.next, eg);
		tcp_list_del(&sk->eg);
		st->stats.sockets_visited++;
		tcp_output(st, sk, now);
	}
}

sk_time_ns tcp_next_deadline(const struct tcp_stack *st)
{
	if (!tcp_list_empty(&st->egress))
		return 0;
	return timer_heap_min(&st->timers);
}
