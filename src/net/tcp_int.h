/* tcp_int.h — internals shared by the tcp_*.c files (not for applications).
 *
 * Files: tcp_pool.c (arena, socket pool, buffer pools, tcp_check),
 * tcp_demux.c (4-tuple hash, lists, events, connection transitions),
 * tcp_api.c (the socket API of tcp.h),
 * tcp_in.c (tcp_input and the RFC 9293 3.10.7 segment arrival rules),
 * tcp_out.c (segment building, tcp_output, tcp_poll, timers),
 * tcp_isn.c (RFC 6528 ISN, timestamps clock, SYN cookies).
 * Flow: tcp_input -> demux -> tcp_listen_input | tcp_synsent_input |
 * tcp_sync_input -> (tcp_ack_in, tcp_data_in, fin) -> tcp_egress(sk);
 * tcp_poll -> timers due -> tcp_output(sk) for each on the egress list.
 */
#ifndef NET_TCP_INT_H
#define NET_TCP_INT_H

#include "tcp.h"
#include "../wire/tcp.h"

/* tcp_sock.fl */
enum {
	TF_NODELAY = 1u << 0,
	TF_KEEPALIVE = 1u << 1,
	TF_ORPHAN = 1u << 2,     /* app closed it: free when the connection ends */
	TF_FIN_QUEUED = 1u << 3, /* shutdown(write): FIN after the queued data */
	TF_FIN_RCVD = 1u << 4,   /* peer's FIN processed (rcv_nxt counts it) */
	TF_FIN_PENDING = 1u << 5,/* peer's FIN seen at fin_seq, data before it missing */
	TF_ACK_NOW = 1u << 6,    /* send an ACK at the next flush */
	TF_PASSIVE = 1u << 7,    /* child of a listener */
	TF_RECOVERY = 1u << 8,   /* in fast recovery until snd_una >= recover */
	TF_TS = 1u << 9,         /* timestamps negotiated */
	TF_SACK = 1u << 10,      /* SACK-permitted negotiated */
	TF_WS = 1u << 11,        /* window scaling negotiated */
	TF_RTX_ONE = 1u << 12,   /* retransmit one segment at rtx_hi (fast rtx) */
	TF_RCV_SHUT = 1u << 13,  /* app closed with data unread: RST on new data */
	TF_PROBE = 1u << 14,     /* send a zero-window or keep-alive probe */
	TF_ACCEPTED = 1u << 15,  /* handed to the app (or active open) */
	TF_WANT_WRITE = 1u << 16,/* a send came up short: raise TCP_EV_WRITE on space */
	TF_UNDO = 1u << 17,      /* a loss episode that may prove spurious (undo_*) */
	TF_UNDO_ARMED = 1u << 18,/* ... and undo_ts is set: its first rtx went out */
	TF_PTO = 1u << 19,       /* rtx_at is a tail loss probe's deadline, not the RTO */
	TF_TLP_OUT = 1u << 20,   /* a probe is unanswered (tlp_end) */
	TF_TLP_NEW = 1u << 21,   /* the probe is one new segment past cwnd */
	TF_RACK = 1u << 22,      /* rack_edge is set (this episode) */
	TF_SSLOT = 1u << 23,     /* sbuf is a slot of st->bpool (scap bytes of it) */
	TF_RSLOT = 1u << 24,     /* rbuf is a slot of st->bpool */
	TF_SLOCK = 1u << 25,     /* TCP_SO_SNDBUF set: the send buffer never grows */
	TF_RLOCK = 1u << 26,     /* TCP_SO_RCVBUF set: the receive buffer never grows */
	TF_PACE_WAIT = 1u << 27, /* data waits for tcp_pace_wake: a timer */
	TF_RTX_CHK = 1u << 28,   /* rtx_chk_end/us: resent holes to check (tcp_types.h) */
	TF_RTX_REDO = 1u << 29,  /* resending holes found lost again, up to rtx_chk_end */
	TF_RTX_TMR = 1u << 30,   /* rtx_at is the check's deadline, before the RTO's */
	TF_RTX_NX = 1u << 31,    /* rtx_nx_end/us: the next check (with CHK or REDO) */
};

#define TCP_QUICKACKS 16
#define TCP_CWND_MAX (1u << 30)
#define TCP_TS_24DAYS (24ull * 86400 * SK_NS_PER_S)

static inline void tcp_list_init(struct tcp_link *h)
{
	h->prev = h->next = h;
}
static inline bool tcp_list_empty(const struct tcp_link *h)
{
	return h->next == h;
}
static inline bool tcp_linked(const struct tcp_link *n)
{
	return n->next != NULL;
}
static inline void tcp_list_add_tail(struct tcp_link *h, struct tcp_link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}
static inline void tcp_list_del(struct tcp_link *n)
{
	if (!n->next)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = NULL;
}
#define tcp_container(ptr, field) \
	((struct tcp_sock *)(void *)((char *)(ptr) - offsetof(struct tcp_sock, field)))

static inline uint32_t tcp_seq_max(uint32_t a, uint32_t b)
{
	return tcp_seq_gt(a, b) ? a : b;
}
static inline uint32_t tcp_seq_min(uint32_t a, uint32_t b)
{
	return tcp_seq_lt(a, b) ? a : b;
}

/* Payload bytes of a full data segment (MSS minus the timestamp option). */
static inline uint32_t tcp_eff_mss(const struct tcp_sock *sk)
{
	return sk->snd_mss - ((sk->fl & TF_TS) ? 12u : 0u);
}
/* The most a paced socket sends at once: a millisecond at the pacing
 * rate, at least one segment (two above ~1.2 Mbit/s), at most 64 KiB. */
static inline uint32_t tcp_pace_quantum(const struct tcp_sock *sk)
{
	uint32_t mss = tcp_eff_mss(sk);
	uint64_t q = sk->pacing_rate / 1000;
	if (q < 2u * mss)
		return sk->pacing_rate < 150000 ? mss : 2u * mss;
	return q > 65536 ? 65536u : (uint32_t)q;
}
/* The pacing bucket's depth: tcp_pace_quantum in whole segments (at least
 * one).  Over any interval a paced socket sends at most pacing_rate times
 * its length plus this (tcp_out.c, tcp_pace_hold).  A socket paced by its
 * window (CUBIC, NewReno: tcp_cc_pace_window) holds at least an eighth of
 * a round trip at its rate: its pacing is only to spread each window over
 * the round trip, in eight batches or more, and a bucket of a millisecond
 * lost most of the rate to late wake-ups on a busy host (in the parallel
 * bench-tcp grid a sender paced at 6-8 MB/s moved 2.2, its flight a third
 * of its window).  BBR keeps the millisecond: its rate is its model. */
static inline uint32_t tcp_pace_depth(const struct tcp_sock *sk)
{
	uint32_t mss = tcp_eff_mss(sk);
	uint64_t q = tcp_pace_quantum(sk);
	if (sk->cc_algo != TCP_CC_BBR)
		q = SK_MAX(q, sk->pacing_rate * sk->srtt_us / 8000000);
	q = SK_MIN(q, (uint64_t)UINT32_MAX / 2);
	return q - q % mss > mss ? (uint32_t)(q - q % mss) : mss;
}
/* When a paced socket held back (TF_PACE_WAIT) may send again: once half
 * the bucket (whole segments, at least one) has filled, which is before
 * pace_at, the time it is full, by what the rest takes at the rate.  A
 * wake-up that much late still finds its time's worth in the bucket, so
 * the loop's latency costs no rate; a prompt one sends half a bucket. */
static inline sk_time_ns tcp_pace_wake(const struct tcp_sock *sk)
{
	if (sk->pacing_rate == 0)
		return sk->pace_at;
	uint32_t mss = tcp_eff_mss(sk), q = tcp_pace_depth(sk);
	uint32_t half = q / 2 - (q / 2) % mss;
	uint32_t w = half > mss ? half : mss;
	sk_time_ns lead = (sk_time_ns)(q - w) * SK_NS_PER_S / sk->pacing_rate;
	return sk->pace_at > lead ? sk->pace_at - lead : 0;
}
/* The SACK scoreboard's ranges (nscore of them) and its room. */
static inline struct tcp_range *tcp_score(struct tcp_sock *sk)
{
	return sk->xscore ? sk->xscore : sk->score_in;
}
static inline const struct tcp_range *tcp_score_c(const struct tcp_sock *sk)
{
	return sk->xscore ? sk->xscore : sk->score_in;
}
static inline uint32_t tcp_score_cap(const struct tcp_sock *sk)
{
	return sk->xscore ? TCP_SCORE_BIG : TCP_SCORE_MAX;
}
/* The out-of-order ranges (nooo of them) and their room. */
static inline struct tcp_range *tcp_ooo(struct tcp_sock *sk)
{
	return sk->xooo ? sk->xooo : sk->ooo_in;
}
static inline const struct tcp_range *tcp_ooo_c(const struct tcp_sock *sk)
{
	return sk->xooo ? sk->xooo : sk->ooo_in;
}
static inline uint32_t tcp_ooo_cap(const struct tcp_sock *sk)
{
	return sk->xooo ? TCP_SCORE_BIG : TCP_OOO_MAX;
}
/* Bytes in flight (sent, not cumulatively acked). */
static inline uint32_t tcp_flight(const struct tcp_sock *sk)
{
	return sk->snd_nxt - sk->snd_una;
}
static inline bool tcp_synchronized(const struct tcp_sock *sk)
{
	return sk->state >= TCP_ESTABLISHED;
}
/* In a loss episode repaired from the peer's SACK blocks (RFC 6675), not
 * NewReno's. */
static inline bool tcp_sack_recovery(const struct tcp_sock *sk)
{
	return (sk->fl & (TF_RECOVERY | TF_SACK)) == (TF_RECOVERY | TF_SACK);
}

/* tcp_pool.c */
struct tcp_sock *tcp_sock_alloc(struct tcp_stack *st);
void tcp_sock_free(struct tcp_stack *st, struct tcp_sock *sk);
/* Off its listener's SYN or accept queue (no-op without a parent). */
void tcp_unlink_parent(struct tcp_sock *sk);
/* Buffers from the pools.  take: false if the pool is empty.  The release
 * functions return the buffer once the invariant on the fields says it
 * holds nothing (slen == 0; rlen == 0 and nooo == 0). */
bool tcp_rbuf_take(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_rbuf_release(struct tcp_stack *st, struct tcp_sock *sk);
bool tcp_sbuf_take(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_sbuf_release(struct tcp_stack *st, struct tcp_sock *sk);
/* Let go of the references below sbuf_seq (all of them once slen is 0). */
void tcp_refs_trim(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_sbuf_wait(struct tcp_stack *st, struct tcp_sock *sk);
/* A large scoreboard for the socket (its ranges move there): false if it
 * has one or the pool is empty.  Release: back to the inline ranges, which
 * must hold nscore (no-op without a board). */
bool tcp_score_take(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_score_release(struct tcp_stack *st, struct tcp_sock *sk);
/* The same for the out-of-order ranges (a board from the same pool). */
bool tcp_ooo_take(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_ooo_release(struct tcp_stack *st, struct tcp_sock *sk);
uint32_t tcp_rcv_space(const struct tcp_stack *st, const struct tcp_sock *sk);
/* The budget of grown buffers (tcp_config.buf_max): normal, pressure (no
 * growth, shrink as data drains), hard (at mem_high). */
enum tcp_mem_state { TCP_MEM_NORMAL, TCP_MEM_PRESSURE, TCP_MEM_HARD };
/* Grow the send (send) or receive buffer to `want` bytes (clamped to
 * buf_max), if autotuning is on, the socket is not locked, the budget is
 * normal and a slot is free.  Data queued keeps its place in the stream. */
bool tcp_buf_grow(struct tcp_stack *st, struct tcp_sock *sk, bool send, uint32_t want);
/* The send buffer may hold twice what may be in flight (tcp_sbuf_round:
 * cwnd, ssthresh once a loss set it, a paced sender's rate times the round
 * trip), and at least what is held unacked and a round trip's more (called
 * before the app queues, and on SACKs while the app waits for room). */
void tcp_sbuf_tune(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_limit_set(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, enum tcp_limit l);
uint64_t tcp_sbuf_round(const struct tcp_sock *sk); /* what a round trip may send */
/* Dynamic right-sizing, on in-order data: once a round trip has passed,
 * grow the receive buffer to twice what the app consumed in it, and while
 * that grows round on round, by twice the growth more (slow start). */
void tcp_rbuf_tune(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
/* Under pressure: move a slot's data back to a base buffer once it fits
 * (the window already advertised included). */
void tcp_buf_shrink(struct tcp_stack *st, struct tcp_sock *sk);

/* tcp_demux.c */
struct tcp_sock *tcp_lookup(struct tcp_stack *st, const struct sk_addr *laddr, uint16_t lport,
			    const struct sk_addr *raddr, uint16_t rport);
struct tcp_sock *tcp_lookup_listener(struct tcp_stack *st, uint16_t lport);
void tcp_hash_insert(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_hash_remove(struct tcp_stack *st, struct tcp_sock *sk); /* harmless if not inserted */
void tcp_conn_init(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
		   const struct sk_addr *laddr, uint16_t lport, const struct sk_addr *raddr,
		   uint16_t rport);
void tcp_event(struct tcp_stack *st, struct tcp_sock *sk, unsigned ev);
void tcp_egress(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_timer_sync(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_conn_done(struct tcp_stack *st, struct tcp_sock *sk, int err);
void tcp_enter_time_wait(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_child_established(struct tcp_stack *st, struct tcp_sock *sk);

/* tcp_isn.c */
void tcp_keys_init(struct tcp_stack *st);
/* All take the tuple as (laddr, lport, raddr, rport).  An IPv4 tuple is
 * hashed as the 12 bytes it always was (the same ISNs, buckets and cookies
 * as before IPv6); any other as its 36. */
uint32_t tcp_isn(const struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
		 uint16_t lport, const struct sk_addr *raddr, uint16_t rport);
uint32_t tcp_tuple_hash(const struct tcp_stack *st, const struct sk_addr *laddr, uint16_t lport,
			const struct sk_addr *raddr, uint16_t rport);
uint32_t tcp_ts_offset(const struct tcp_stack *st, const struct sk_addr *laddr, uint16_t lport,
		       const struct sk_addr *raddr, uint16_t rport);
uint32_t tcp_cookie_make(const struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
			 uint16_t lport, const struct sk_addr *raddr, uint16_t rport,
			 uint32_t peer_isn, uint16_t peer_mss, uint16_t *mss_out);
/* Returns the MSS encoded, or 0 if the cookie is not valid. */
uint16_t tcp_cookie_check(const struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
			  uint16_t lport, const struct sk_addr *raddr, uint16_t rport,
			  uint32_t peer_isn, uint32_t cookie);
uint8_t tcp_wscale_for(uint32_t rcvbuf);

/* Our MSS towards a peer: the IPv6 header is 20 bytes longer (1500 ->
 * 1460 over IPv4, 1440 over IPv6). */
static inline uint16_t tcp_our_mss(const struct tcp_stack *st, const struct sk_addr *peer)
{
	return sk_addr_is_v4(peer) ? st->mss : (uint16_t)(st->mss - 20);
}

static inline uint32_t tcp_ts_now(const struct tcp_sock *sk, sk_time_ns now)
{
	return (uint32_t)(now / SK_NS_PER_MS) + sk->ts_off;
}

/* tcp_out.c */
void tcp_output(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_ack_now(struct tcp_stack *st, struct tcp_sock *sk);
void tcp_send_ack(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_challenge_ack(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_send_rst(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_reply_rst(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
		   const struct sk_addr *raddr, const struct tcp_hdr *h);
void tcp_reply_cookie(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
		      const struct sk_addr *raddr, const struct tcp_hdr *h);
void tcp_rtt_sample(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns rtt);
void tcp_rearm_rtx(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);

/* tcp_recovery.c: SACK loss recovery.  TCP_DUPTHRESH is RFC 6675's
 * DupThresh. */
#define TCP_DUPTHRESH 3u
/* The delayed ACK a lone segment may meet at the peer (Linux's least, and
 * cfg.delack_ms's default): tcp_recovery.c's check waits for it too. */
#define TCP_PEER_DELACK_US 40000u
uint32_t tcp_sacked_bytes(const struct tcp_sock *sk);
uint32_t tcp_lost_edge(const struct tcp_sock *sk);
uint32_t tcp_rack_edge(const struct tcp_sock *sk);
sk_time_ns tcp_pto(const struct tcp_stack *st, const struct tcp_sock *sk);
/* Length of the next hole at or above `seq` not covered by the SACK
 * scoreboard, limited to `end`; *start gets its first sequence. */
uint32_t tcp_next_hole(const struct tcp_sock *sk, uint32_t seq, uint32_t end, uint32_t *start);
uint32_t tcp_pipe(const struct tcp_sock *sk);
void tcp_rtx_check_start(struct tcp_sock *sk, sk_time_ns now, uint32_t end);
void tcp_rtx_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t delivered);
void tcp_tail_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now, uint32_t delivered);
void tcp_tail_at_end(struct tcp_sock *sk);
void tcp_rtx_redo_done(struct tcp_sock *sk, sk_time_ns now);
sk_time_ns tcp_rtx_chk_deadline(const struct tcp_sock *sk, sk_time_ns now);
void tcp_rtx_check_timer(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_prr_ack(struct tcp_sock *sk, uint32_t delivered);
uint32_t tcp_loss_ssthresh(struct tcp_sock *sk, sk_time_ns now);
void tcp_recovery_enter(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now);
void tcp_undo_save(struct tcp_sock *sk);
void tcp_undo_arm(struct tcp_sock *sk, sk_time_ns now, uint32_t seq);
bool tcp_undo_check(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
		    const struct tcp_hdr *h);

/* tcp_in.c */
void tcp_keepalive_arm(struct tcp_sock *sk, sk_time_ns now);
void tcp_open_from_syn(struct tcp_stack *st, struct tcp_sock *sk, const struct tcp_hdr *h,
		       sk_time_ns now);

#endif
