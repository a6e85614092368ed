/* tcp_cc.h — congestion control behind one ops struct, as the devices are:
 * an algorithm is one file that fills struct tcp_cc_ops.  The engine keeps
 * the mechanics (loss detection, recovery, PRR, undo, the RTO) and asks the
 * algorithm only how the window grows and how far it falls.
 *
 * Contract.  Every hook runs inside the engine, with the socket's state
 * consistent, and does no I/O; time is the engine's `now`.  A hook may
 * change sk->cwnd, sk->ssthresh, sk->pacing_rate and sk->cc (its own
 * room), nothing else.
 *   init      at connection set-up, after the initial window is set.
 *   on_ack    an ACK advanced snd_una by `acked` bytes outside recovery:
 *             grow cwnd (slow start below ssthresh, avoidance above);
 *             returns TCP_CC_EV_* bits for the engine's counters.
 *   on_rtt    one RTT sample in microseconds (for delay-based slow start).
 *   ssthresh  a loss: return the new ssthresh for a window of `base` bytes
 *             (min(flight, cwnd); RFC 5681 3.2 step 2) and remember what
 *             the algorithm needs of the event.
 *   on_rto    a retransmission timeout (after ssthresh): restart.
 *   on_undo   the engine found the last loss spurious and restored
 *             cwnd/ssthresh: drop what ssthresh() remembered.
 * Pacing.  An algorithm that sets sk->pacing_rate (bytes per second; 0
 * is off) has the engine space its data
 * segments from a token bucket filled at that rate, one quantum
 * (tcp_pace_depth) deep: over any interval at most the rate times its
 * length plus one quantum (tcp_out.c); a held socket waits on its timer,
 * not in a loop.  BBR paces at its model's rate; CUBIC and NewReno
 * at the window's in slow start (tcp_cc_pace_window), unpaced in
 * avoidance (a rate of 0 from on_ack: the engine drops a pending wait).
 * Only a
 * paced socket gets the two hooks that feed a rate model (both may be
 * NULL; only BBR has them):
 *   on_send   a segment of new data [seq, seq + len) left now.
 *   on_delivery  every acceptable ACK, in recovery or not, after the
 *             engine has processed its acknowledgment and SACK blocks
 *             but before SACK recovery sends on it: `delivered` bytes
 *             reached the peer with it (cumulatively or by SACK).
 * Recovery's window.  The engine's PRR sets cwnd on every ACK of a SACK
 * recovery, falling to ssthresh: right for an algorithm that reads loss
 * as congestion.  One that sets owns_recovery_cwnd (and on_delivery)
 * keeps cwnd in its own hands instead: PRR stays out, on_delivery sets
 * the window the engine's recovery sends in.  The engine still sets cwnd
 * to PRR's packet-conserving start when an episode begins (pipe plus a
 * segment) and to ssthresh when it ends.  Every algorithm gets the
 * engine's check for lost retransmissions (tcp_recovery.c, RFC 8985 6.2),
 * which resends them before the RTO, in the window recovery has (PRR's,
 * or the algorithm's own). */
#ifndef NET_TCP_CC_H
#define NET_TCP_CC_H

#include "tcp.h"
#include "tcp_types.h"

enum {
	TCP_CC_EV_CSS = 1u << 0,      /* HyStart++ saw the RTT rise: slower slow start */
	TCP_CC_EV_SS_EXIT = 1u << 1,  /* ... and ended slow start without a loss */
};

struct tcp_cc_ops {
	const char *name;
	void (*init)(struct tcp_sock *sk, sk_time_ns now);
	unsigned (*on_ack)(struct tcp_sock *sk, uint32_t acked, sk_time_ns now); /* TCP_CC_EV_* */
	void (*on_rtt)(struct tcp_sock *sk, uint32_t rtt_us, sk_time_ns now);
	uint32_t (*ssthresh)(struct tcp_sock *sk, uint32_t base, sk_time_ns now);
	void (*on_rto)(struct tcp_sock *sk, sk_time_ns now);
	void (*on_undo)(struct tcp_sock *sk, sk_time_ns now);
	void (*on_send)(struct tcp_sock *sk, uint32_t seq, uint32_t len, sk_time_ns now);
	void (*on_delivery)(struct tcp_sock *sk, uint32_t delivered, sk_time_ns now);
	/* Optional, for tcp_info: the model's state by name and its
	 * bandwidth estimate in bytes/s (NULL and 0 when it has none yet). */
	const char *(*model)(const struct tcp_sock *sk, uint64_t *bw);
	bool owns_recovery_cwnd; /* see "Recovery's window" above */
};

extern const struct tcp_cc_ops tcp_cc_newreno; /* RFC 5681 with RFC 3465 byte counting */
extern const struct tcp_cc_ops tcp_cc_cubic;   /* RFC 9438 with RFC 9406 HyStart++ */
extern const struct tcp_cc_ops tcp_cc_bbr;     /* BBR v1 (Cardwell et al. 2016), paced */

/* The ops of enum tcp_cc_algo (tcp.h). */
const struct tcp_cc_ops *tcp_cc_get(uint8_t algo);
static inline const struct tcp_cc_ops *tcp_cc(const struct tcp_sock *sk)
{
	return tcp_cc_get(sk->cc_algo);
}

/* CUBIC's and NewReno's pacing rate from the window in slow start, 0 in
 * avoidance (tcp_cc.c). */
void tcp_cc_pace_window(struct tcp_sock *sk);

/* The integer cube root (tcp_cubic.c; exposed for its unit test). */
uint64_t tcp_icbrt(uint64_t x);

#endif
