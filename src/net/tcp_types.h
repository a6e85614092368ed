/* tcp_types.h — the TCP engine's structures (included by tcp.h so callers
 * can embed struct tcp_stack; applications use only the functions). */
#ifndef NET_TCP_TYPES_H
#define NET_TCP_TYPES_H

#include "../base/sk.h"
#include "siphash.h"
#include "timer.h"

#define TCP_NIL UINT32_MAX
/* Out-of-order ranges a socket holds inline (receive side): 7, so that
 * with the pointer to a pooled board (TCP_SCORE_BIG ranges, the SACK
 * scoreboard's pool) tcp_sock stays at 888 bytes. */
#define TCP_OOO_MAX 7
/* SACKed ranges a socket holds inline (send side): 7, so that with the
 * pointer to a pooled board (below) tcp_sock stays at 888 bytes. */
#define TCP_SCORE_MAX 7
/* SACKed ranges of a pooled scoreboard (tcp_stack.scpool), taken when the
 * inline ones are not enough: 1 KiB, a hole at every other segment of a
 * 370 KB flight (256 segments), or 2 % loss in a 9 MB one. */
#define TCP_SCORE_BIG 128
#define TCP_REFS 2      /* ranges queued by reference (more: copied) */
#define TCP_DEFAULT_BACKLOG 1024

/* Intrusive circular doubly-linked list; an unlinked node has next == NULL. */
struct tcp_link {
	struct tcp_link *prev, *next;
};

struct tcp_range {
	uint32_t l, r; /* sequence range [l, r) */
};

/* Every counter, in print order.  X(name) */
#define TCP_STATS(X)                                                                      \
	X(seg_in) X(seg_out) X(bytes_in) X(bytes_out) X(out_err) X(polls) X(sockets_visited) \
	X(timer_fires) X(drop_parse_trunc) X(drop_parse_len) X(drop_parse_csum)              \
	X(drop_parse_opt) X(drop_parse_other) X(drop_no_socket) X(drop_listen_no_syn)        \
	X(drop_listen_overflow) X(drop_out_of_window) X(drop_paws) X(drop_no_ack)            \
	X(drop_ack_too_new) X(drop_ack_too_old) X(drop_synsent_bad_ack) X(drop_ooo_full)     \
	X(drop_rcv_closed) X(drop_syn_rcvd_bad_ack) X(drop_no_memory) X(rst_in) X(rst_out)  \
	X(rst_ignored) X(challenge_acks) X(challenge_acks_limited) X(oow_acks_limited) X(syn_in_window)          \
	X(active_opens) X(passive_opens) X(established) X(conn_reset) X(conn_timeout)        \
	X(conn_refused) X(tw_reuse) X(tw_recycled) X(retransmits) X(rto_fires)               \
	X(fast_retransmits) X(sack_retransmits) X(partial_acks) X(dup_acks_in)               \
	X(delayed_acks) X(quick_acks) X(acks_out) X(window_probes) X(window_updates)         \
	X(keepalive_probes) X(ooo_segments) X(cookies_sent) X(cookies_validated)             \
	X(cookies_failed) X(pmtu_updates) X(pmtu_ignored) X(icmp_ignored) X(icmp_soft_errors) \
	X(accept_queue_full)                                                                \
	X(eof_rearms) X(send_no_memory) X(sack_recoveries) X(limited_transmits)           \
	X(recovery_rtx) X(rto_rtx_skipped_sacked) X(sack_score_full) X(sack_score_grows) X(ooo_grows) X(lost_retransmits) X(rtx_chk_timeouts) X(tail_checks) X(tail_recoveries) X(recovery_chained) X(pace_wakes) X(spurious_undos) X(dsacks_out)            \
	X(dsacks_in) X(hystart_css) X(hystart_exits) X(tlp_probes) X(tlp_new_data) X(tlp_recoveries) X(tlp_repairs) \
	X(rcvbuf_grows) X(sndbuf_grows) X(buf_grow_refused) X(buf_shrinks) X(rbuf_fallbacks) \
	X(mem_pressure_entries) X(mem_hard_entries) X(tso_frames) X(tso_segs) X(tso_fallbacks) \
	X(csum_offloaded) X(rx_csum_trusted) X(send_ref_bytes) X(send_ref_copies)        \
	X(busy_us) X(rwnd_limited_us) X(sndbuf_limited_us) X(cwnd_limited_us) X(pace_limited_us)

struct sk_trace; /* base/hist.h */

struct tcp_stats {
#define TCP_STAT_FIELD(n) uint64_t n;
	TCP_STATS(TCP_STAT_FIELD)
#undef TCP_STAT_FIELD
};

struct tcp_sock {
	/* Identity.  In the hash table (chain `hnext`) from SYN_SENT / SYN_RECEIVED
	 * until freed; a listener is keyed with laddr = raddr = :: and rport = 0,
	 * so it takes SYNs of both families.  A connection's laddr and raddr
	 * are of one family (both v4-mapped, or neither): the family a segment
	 * came in on, which is the one its replies go out on. */
	struct sk_addr laddr, raddr;
	uint16_t lport, rport;
	uint32_t id;         /* own index in the pool */
	uint32_t hnext;      /* next in hash bucket, TCP_NIL at end */
	uint8_t state;       /* enum tcp_state; TCP_CLOSED also for free slots */
	bool in_use;
	/* What held the sender at its last output (enum tcp_limit); each
	 * output adds the time since limit_us (below) to the stack's busy_us
	 * and *_limited_us for the state that held until then
	 * (tcp_limit_set). */
	uint8_t limit;
	uint32_t fl;         /* TF_* */
	int err;             /* pending error (negative), reported once by recv/send */

	/* Lists: egress (output queued; linked <=> on st->egress), ready (app events
	 * pending), queue (listener's SYN or accept queue; free list; for an
	 * accepted or connected socket st->sbuf_wait), tw (orphaned
	 * TIME_WAIT, roughly oldest first, recycled when the pool is empty). */
	struct tcp_link eg, rd, q, tw;
	unsigned ev;         /* TCP_EV_* bits not yet handed out */
	uint32_t limit_us;   /* us (ns / 1000, mod 2^32) of the last output's count */
	void *user;
	struct tcp_sock *parent; /* listener of a child still in its queues */

	/* Listener only. */
	uint32_t backlog, syn_n, acc_n;
	/* Receive side, here for the hole before synq: the most a round trip
	 * has consumed (dynamic right-sizing, tcp_rbuf_tune; 0 none yet). */
	uint32_t rtune_space;
	struct tcp_link synq, accq; /* list heads */

	/* Send side (RFC 9293 3.3.1).  snd_una <= snd_nxt <= snd_max, where snd_max
	 * is the highest sequence ever sent (snd_nxt goes back after an RTO). */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2, max_sndwnd;
	/* Send ring: slen bytes from sbuf[shead], the first of which has sequence
	 * sbuf_seq (== snd_una once the SYN is acked).  FIN, when queued, has
	 * sequence sbuf_seq + slen.  sbuf != NULL <=> slen > 0: the buffer comes
	 * from st->spool when the app queues data and goes back when the last
	 * byte is acked (shead is then 0); an idle socket holds none. */
	uint8_t *sbuf;
	uint32_t scap, shead, slen, sbuf_seq;
	uint32_t smax; /* usable send-buffer size (<= scap) */
	/* When snd_max last moved (us, mod 2^32): everything above snd_una
	 * that was never resent was first sent at or before it, for the
	 * tail's rule in recovery (tcp_tail_check).  Here for the hole. */
	uint32_t new_us;
	/* Bytes queued by reference (tcp_send_ref): [seq, seq + len) are read
	 * from p when segments are built, not from sbuf, whose room they take
	 * (slen counts them) but whose bytes they leave unwritten.  Sorted,
	 * disjoint, inside [sbuf_seq, sbuf_seq + slen); trimmed as ACKs free
	 * the buffer, all gone when slen is 0 (tcp_sbuf_release).  Each byte
	 * held here is in st->ref_bytes. */
	struct tcp_ref {
		uint32_t seq, len;
		const uint8_t *p;
	} ref[TCP_REFS];
	/* scap > cfg.sndbuf: the buffer grew (tcp_buf_grow); with TF_SSLOT
	 * sbuf is a slot of st->bpool, otherwise the next take tries one.
	 * The same for rcap, rbuf and TF_RSLOT on the receive side. */

	/* Receive side.  rlen unread in-order bytes at rbuf[rhead]; the byte with
	 * sequence rcv_nxt goes at rhead + rlen.  Out-of-order data is stored at
	 * its place beyond that and listed in nooo ranges (sorted, disjoint,
	 * above rcv_nxt): in ooo_in or, while xooo != NULL, in that board of
	 * TCP_SCORE_BIG ranges from st->scpool (tcp_ooo(sk) is whichever holds
	 * them).  A segment is dropped for want of a range only if the board
	 * is full or the pool empty (drop_ooo_full): each drop is a
	 * retransmission the sender did not need (with a range per hole, a
	 * queue overflow that drops every third segment of a window, or
	 * reordering, went past eight ranges and tripled the resends).  rcv_adv: right edge advertised (never moves left).
	 * rbuf != NULL <=> rlen > 0 || nooo > 0: taken from st->rpool when data
	 * arrives, given back when the app has read everything and no
	 * out-of-order range is held (rhead is then 0). */
	uint32_t irs, rcv_nxt, rcv_adv;
	uint32_t rcv_unacked;      /* bytes received since our last ACK */
	uint8_t *rbuf;
	uint32_t rcap, rhead, rlen;
	uint32_t rmax; /* usable receive-buffer size (<= rcap) */
	/* Dynamic right-sizing: since rtune_at the app consumed up to
	 * sequence rtune_seq's successors (consumed = rcv_nxt - rlen);
	 * rcv_rtt_us: round trip seen from the receive side (timestamps),
	 * 0 none yet. */
	uint32_t rtune_seq, rcv_rtt_us;
	sk_time_ns rtune_at;
	struct tcp_range ooo_in[TCP_OOO_MAX];
	struct tcp_range *xooo;
	uint8_t nooo;
	uint8_t nref;       /* ref[] in use (send side, above) */
	uint8_t quickacks;  /* ACK every segment while > 0 (connection start) */
	struct tcp_range ooo_last; /* most recent OOO block: first SACK block */
	uint32_t fin_seq;          /* valid with TF_FIN_RCVD_PENDING */
	sk_time_ns oow_last;       /* last ACK for an unacceptable segment; 0 none */

	/* Options.  snd_mss: peer's MSS capped by our MTU, options excluded. */
	uint16_t snd_mss;
	uint8_t snd_wscale, rcv_wscale;
	uint32_t ts_recent, ts_off, last_ack_sent;
	sk_time_ns ts_recent_age;

	/* SACK scoreboard: nscore sorted, disjoint, non-touching ranges in
	 * (snd_una, snd_max], in score_in or, while xscore != NULL, in that
	 * board of TCP_SCORE_BIG ranges from st->scpool (tcp_score(sk) is
	 * whichever holds them).  A range is forgotten only when acked (or
	 * after a second RTO, RFC 2018 8's reneging): receivers report just
	 * their 3-4 latest blocks, so one dropped for want of room would
	 * later look lost and be resent, and pipe would come out wrong.  The
	 * board is taken when the inline ranges overflow (a loss episode
	 * with many holes) and goes back once few are left; an idle or
	 * loss-free socket never holds one.  With the pool empty a block
	 * that does not fit is dropped (sack_score_full), as before. */
	struct tcp_range score_in[TCP_SCORE_MAX];
	struct tcp_range *xscore;

	/* Congestion control (RFC 5681, 6582).  rtx_hi: the retransmission
	 * point; holes below it were resent in this episode. */
	uint32_t cwnd, ssthresh, bytes_acked, recover, rtx_hi;
	/* Lost retransmissions (RFC 8985 6.2's rule, one check at a time;
	 * tcp_recovery.c).  With TF_RTX_CHK: every hole below rtx_chk_end
	 * was last sent at or before rtx_chk_us (us, mod 2^32); one still
	 * open when the peer delivers something more than a round trip
	 * later was lost again.  With TF_RTX_REDO: such holes are being
	 * resent from rtx_hi up to rtx_chk_end, and then the pointer goes
	 * back up to rtx_redo_hi (the holes between were resent later and
	 * are in flight).  rtx_chk_snd, with TF_RTX_CHK: snd_max when the
	 * check began; data above it was first sent after the check's
	 * retransmissions, and for CUBIC and NewReno only its delivery shows
	 * them lost (RFC 8985's rule: something sent later arrived).  The two
	 * flags are never set together, so the two share their room. */
	uint32_t rtx_chk_end;
	union {
		uint32_t rtx_redo_hi; /* TF_RTX_REDO */
		uint32_t rtx_chk_snd; /* TF_RTX_CHK */
	};
	uint16_t nscore;
	uint8_t dupacks;
	/* Congestion control's own room (tcp_cc.h), for the algorithm in
	 * cc_algo (enum tcp_cc_algo); only that algorithm's file touches it. */
	uint8_t cc_algo;
	union {
		struct tcp_cubic {
			/* RFC 9438: the window at the last loss (w_max), the
			 * epoch's start (0: none yet) and K, the Reno-friendly
			 * estimate w_est (bytes; est_acc its fraction). */
			uint32_t w_max, w_est, est_acc, k_ms, origin;
			sk_time_ns epoch;
			/* RFC 9406 HyStart++: this round ends at round_end; the
			 * minimum RTT of this and the last round (UINT32_MAX:
			 * none yet), the baseline of conservative slow start. */
			uint32_t round_end, cur_min_us, last_min_us, css_base_us;
			uint8_t samples, css_rounds;
			bool css, round_on;
		} cubic;
		struct tcp_bbr {
			/* Delivery-rate markers (tcp_cc_bbr.c): up to
			 * TCP_BBR_MARKS new-data segments in flight, oldest at
			 * mk_head, each with the sequence past its end and its
			 * send time (ns / 1000, mod 2^32); bit i of mk_app: sent
			 * app-limited.  The train starts at the last acked
			 * marker, or at the first send into an empty pipe
			 * (valid with BBR_F_TRAIN): `delivered` then, its ack
			 * and send times. */
			uint32_t mk_end[4], mk_sent_us[4];
			uint32_t l_delivered, l_ack_us, l_sent_us;
			uint32_t delivered; /* bytes acked or SACKed, mod 2^32 */
			/* BtlBw: the largest rate (bytes/s) of each of the last
			 * 10 rounds, slot round % 10; a round ends when
			 * snd_una reaches round_end or a SACK passes it. */
			uint32_t bw[10];
			uint32_t round, round_end;
			uint32_t min_rtt_us; /* RTprop; UINT32_MAX none yet */
			uint32_t full_bw, prior_cwnd;
			/* While BBR_F_REC (a SACK recovery) or BBR_F_RTO (after a
			 * timeout): the snd_max of its start. */
			uint32_t rec_end;
			sk_time_ns min_rtt_at, probe_rtt_done, cycle_at;
			uint8_t mode, cycle, full_cnt, fl, mk_head, mk_n, mk_app;
			/* The last on_delivery saw the engine end a SACK
			 * recovery: an episode found on the next one began on
			 * that same ACK (chained, tcp_cc_bbr.c). */
			uint8_t rec_ended;
		} bbr;
	} cc;
	/* Pacing (tcp_cc.h): 0 off (CUBIC, NewReno); else bytes per second,
	 * set by the algorithm.  pace_at: when the pacing bucket is full
	 * (tcp_out.c); while TF_PACE_WAIT, tcp_pace_wake (half a quantum's
	 * time before it) is also one of the timers. */
	uint64_t pacing_rate;
	sk_time_ns pace_at;
	/* SACK loss recovery (RFC 6675 with RFC 6937 PRR), valid while
	 * TF_RECOVERY on a TF_SACK connection: recover_fs is the flight at the
	 * start (PRR's RecoverFS), prr_delivered what the peer got since and
	 * prr_out what we sent since. */
	uint32_t recover_fs, prr_delivered, prr_out;
	/* The flight (snd_max - snd_una) right after the last output that sent
	 * data: RFC 5681's FlightSize for a loss seen later.  A batch of ACKs
	 * shrinks the live flight before the SACK that shows the hole, and the
	 * send path only runs after the batch (tcp_egress queues), so the live
	 * value undercounts what was outstanding when the loss happened. */
	uint32_t sent_flight;
	/* Undo (RFC 3522 Eifel detection with timestamps): while TF_UNDO, the
	 * first retransmission of the episode carried TSval undo_ts; an ACK past
	 * undo_seq echoing an older TSval proves the original arrived, and the
	 * window before the episode (undo_cwnd, undo_ssthresh) comes back. */
	uint32_t undo_ts, undo_seq, undo_cwnd, undo_ssthresh;
	/* Tail loss probe (RFC 8985 7): while TF_TLP_OUT, a probe went out
	 * with everything below tlp_end sent before it.  rack_edge: holes
	 * below it are lost by RACK's rule (sent before a segment the peer
	 * has since SACKed, and longer ago than a round trip), valid with
	 * TF_RACK, cleared when the episode ends. */
	uint32_t tlp_end, rack_edge;
	/* A D-SACK block (RFC 2883) for the next ACK: a duplicate we received. */
	struct tcp_range dsack;

	/* RTT / RTO (RFC 6298); srtt_us == 0: no sample yet. */
	uint32_t srtt_us, rttvar_us, rtt_seq;
	uint32_t rtx_chk_us; /* with rtx_chk_end, above */
	sk_time_ns rto, rtt_start; /* valid while rtt_on: rtt_seq sent at rtt_start */
	bool dsack_pending; /* with dsack, above */
	bool rtt_on;
	uint8_t backoff, retries;
	/* When the latest retransmission of a hole left (us, mod 2^32): every
	 * hole below rtx_hi was last sent at or before it, so a check that
	 * ends can hand the holes resent above it to the next (tcp_recovery.c). */
	uint32_t rtx_last_us;
	/* With TF_RTX_NX, the next check: the holes resent in the first burst
	 * after the running check's (or the redo's) began, every hole from
	 * that check's end up to rtx_nx_end was last sent at or before
	 * rtx_nx_us (us, mod 2^32).  Without it the next check took them all
	 * from rtx_last_us, the latest resend, and a lost one among the
	 * first waited for the resends after it: up to a round trip more
	 * with the receiver's window shut behind it (tcp_recovery.c). */
	uint32_t rtx_nx_end, rtx_nx_us;
	uint64_t nrtx;

	/* Timers: absolute deadlines or SK_TIME_NEVER; the socket's heap entry is
	 * their minimum.  tw_at covers TIME_WAIT and orphaned FIN_WAIT_2. */
	sk_time_ns rtx_at, persist_at, delack_at, keep_at, tw_at;
	sk_time_ns first_rtx, last_rcv;
	uint32_t keep_idle_ms, keep_intvl_ms, user_timeout_ms;
	uint8_t keep_cnt, keep_probes;
};

/* Fixed-size buffers carved from the arena.  Buffers [0, hw) have been
 * handed out at least once; the free ones among them form a LIFO list
 * linked through their first bytes, so the most recently used (cache-warm,
 * pages resident) buffer goes out next.  Buffers [hw, n) were never
 * touched: with a lazily mapped arena their pages cost nothing. */
struct tcp_bufpool {
	uint8_t *base;
	uint8_t *free;  /* LIFO head, NULL if empty */
	size_t stride;  /* buffer size rounded up to the arena alignment */
	uint32_t n, hw;
	uint32_t navail; /* free: on the list + never used (n - hw) */
};

struct tcp_stack {
	struct tcp_config cfg;
	struct tcp_sock *socks; /* [cfg.max_sockets] */
	uint32_t *hash;         /* buckets: head socket id or TCP_NIL */
	uint32_t hash_mask;
	struct timer_heap timers;
	struct tcp_link egress; /* sockets with output to send */
	struct tcp_link ready;  /* sockets with app events */
	struct tcp_link tw;     /* TIME_WAIT sockets, oldest first */
	struct tcp_link free;   /* free slots (via q) */
	uint32_t nfree;
	struct tcp_bufpool spool, rpool; /* send / receive buffers */
	/* Grown buffers (cfg.buf_max; n == 0: autotuning off).  mem_used:
	 * the capacity (scap / rcap) of every slot held, the budget's use;
	 * mem_state: enum tcp_mem_state, moved only by tcp_mem_add. */
	struct tcp_bufpool bpool;
	/* Large range boards (TCP_SCORE_BIG ranges each): SACK scoreboards
	 * (tcp_sock.xscore) and out-of-order lists (tcp_sock.xooo). */
	struct tcp_bufpool scpool;
	uint64_t mem_used;
	uint8_t mem_state;
	/* The highest pacing rate (bytes/s) any send of this stack was paced
	 * at (0 until then; BBR paces, and CUBIC and NewReno in slow start,
	 * tcp_cc.h): what bounds the bursts a capture
	 * may see (tests/tcp.sh's pacing check), as the engine reports no
	 * per-send rate. */
	uint64_t pacing_rate_max;
	struct tcp_link sbuf_wait; /* sockets refused a send buffer (via q) */
	uint8_t *scratch;       /* one outgoing segment (cfg.ip_output only) */
	uint32_t scratch_len;
	struct siphash_key hkey, isnkey, cookiekey, tskey;
	uint16_t mss;           /* ours over IPv4: mtu - 40 (IPv6: 20 less, tcp_our_mss) */
	uint8_t rcv_wscale;     /* ours, from cfg.rcvbuf */
	uint16_t eph_next;
	sk_time_ns chack_epoch; /* challenge-ACK budget second */
	uint32_t chack_n;
	/* The segment tcp_input is given came with a checksum the device
	 * vouched for (tcp_iface.c, from iface's rx_csum_ok): not verified. */
	bool rx_csum_ok;
	uint64_t ref_bytes;     /* bytes every socket holds by reference (tcp_refs_held) */
	struct tcp_stats stats;
	/* --trace: segment in (established) and out are timed into it; NULL
	 * (what tcp_stack_init leaves) means off.  Set after init. */
	struct sk_trace *trace;
};

#endif
