/* tcp_demux.c — finding a segment's socket (the 4-tuple hash), and the
 * lists and readiness a connection moves through: egress, ready, timers,
 * TIME_WAIT, the accept queue, and the end of a connection. */
#include "tcp_cc.h"
#include "tcp_int.h"

static uint32_t tcp_bucket(const struct tcp_stack *st, const struct sk_addr *laddr,
			   uint16_t lport, const struct sk_addr *raddr, uint16_t rport)
{
	return tcp_tuple_hash(st, laddr, lport, raddr, rport) & st->hash_mask;
}

struct tcp_sock *tcp_lookup(struct tcp_stack *st, const struct sk_addr *laddr, uint16_t lport,
			    const struct sk_addr *raddr, uint16_t rport)
{
	uint32_t i = st->hash[tcp_bucket(st, laddr, lport, raddr, rport)];
	while (i != TCP_NIL) {
		struct tcp_sock *sk = &st->socks[i];
		if (sk->lport == lport && sk->rport == rport && sk_addr_eq(&sk->raddr, raddr) &&
		    sk_addr_eq(&sk->laddr, laddr))
			return sk;
		i = sk->hnext;
	}
	return NULL;
}

struct tcp_sock *tcp_lookup_listener(struct tcp_stack *st, uint16_t lport)
{
	static const struct sk_addr any; /* ::, the key of every listener */
	struct tcp_sock *sk = tcp_lookup(st, &any, lport, &any, 0);
	return sk && sk->state == TCP_LISTEN ? sk : NULL;
}

void tcp_hash_insert(struct tcp_stack *st, struct tcp_sock *sk)
{
	uint32_t b = tcp_bucket(st, &sk->laddr, sk->lport, &sk->raddr, sk->rport);
	sk->hnext = st->hash[b];
	st->hash[b] = sk->id;
}

void tcp_hash_remove(struct tcp_stack *st, struct tcp_sock *sk)
{
	uint32_t *pp = &st->hash[tcp_bucket(st, &sk->laddr, sk->lport, &sk->raddr, sk->rport)];
	while (*pp != TCP_NIL) {
		if (*pp == sk->id) {
			*pp = sk->hnext;
			sk->hnext = TCP_NIL;
			return;
		}
		pp = &st->socks[*pp].hnext;
	}
}

void tcp_conn_init(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now,
		   const struct sk_addr *laddr, uint16_t lport, const struct sk_addr *raddr,
		   uint16_t rport)
{
	sk->laddr = *laddr;
	sk->lport = lport;
	sk->raddr = *raddr;
	sk->rport = rport;
	sk->iss = tcp_isn(st, now, laddr, lport, raddr, rport);
	sk->snd_una = sk->snd_nxt = sk->snd_max = sk->iss;
	sk->sbuf_seq = sk->iss + 1;
	sk->ts_off = tcp_ts_offset(st, laddr, lport, raddr, rport);
	sk->snd_mss = 536; /* RFC 9293 3.7.1 default until the peer says */
	sk->rcv_wscale = st->rcv_wscale;
	sk->rto = (sk_time_ns)st->cfg.rto_init_ms * SK_NS_PER_MS;
	sk->ssthresh = UINT32_MAX;
	sk->cc_algo = st->cfg.cc < TCP_CC_COUNT ? st->cfg.cc : TCP_CC_CUBIC;
	tcp_cc(sk)->init(sk, now);
	sk->quickacks = TCP_QUICKACKS;
	sk->last_rcv = now;
}

/* ---- lists, events, timers ---- */

void tcp_event(struct tcp_stack *st, struct tcp_sock *sk, unsigned ev)
{
	if (sk->fl & TF_ORPHAN)
		return;
	if (sk->parent) /* not yet accepted: the listener speaks for it */
		return;
	sk->ev |= ev;
	if (!tcp_linked(&sk->rd))
		tcp_list_add_tail(&st->ready, &sk->rd);
}

void tcp_egress(struct tcp_stack *st, struct tcp_sock *sk)
{
	if (!tcp_linked(&sk->eg))
		tcp_list_add_tail(&st->egress, &sk->eg);
}

void tcp_timer_sync(struct tcp_stack *st, struct tcp_sock *sk)
{
	sk_time_ns t = sk->rtx_at;
	t = SK_MIN(t, sk->persist_at);
	t = SK_MIN(t, sk->delack_at);
	t = SK_MIN(t, sk->keep_at);
	t = SK_MIN(t, sk->tw_at);
	if (sk->fl & TF_PACE_WAIT)
		t = SK_MIN(t, tcp_pace_wake(sk));
	if (timer_heap_get(&st->timers, sk->id) != t)
		timer_heap_set(&st->timers, sk->id, t);
}

static void tcp_timers_off(struct tcp_sock *sk)
{
	sk->rtx_at = sk->persist_at = sk->delack_at = sk->keep_at = sk->tw_at = SK_TIME_NEVER;
	sk->fl &= ~(uint32_t)TF_PACE_WAIT;
}

/* The connection is over (CLOSED).  An orphan or an unaccepted child is
 * freed; otherwise the app keeps the slot until tcp_close, and sees `err`. */
void tcp_conn_done(struct tcp_stack *st, struct tcp_sock *sk, int err)
{
	if ((sk->fl & TF_ORPHAN) || sk->parent) {
		tcp_sock_free(st, sk);
		return;
	}
	tcp_hash_remove(st, sk);
	tcp_list_del(&sk->eg);
	tcp_list_del(&sk->tw);
	tcp_timers_off(sk);
	tcp_timer_sync(st, sk);
	sk->state = TCP_CLOSED;
	if (err)
		sk->err = err;
	tcp_event(st, sk, TCP_EV_READ | TCP_EV_WRITE | (err ? TCP_EV_ERROR : 0));
}

void tcp_enter_time_wait(struct tcp_stack *st, struct tcp_sock *sk, sk_time_ns now)
{
	sk->state = TCP_TIME_WAIT;
	sk->rtx_at = sk->persist_at = sk->keep_at = SK_TIME_NEVER;
	sk->tw_at = now + 2ull * st->cfg.msl_ms * SK_NS_PER_MS;
	tcp_list_del(&sk->tw);
	if (sk->fl & TF_ORPHAN) /* only orphans may be recycled */
		tcp_list_add_tail(&st->tw, &sk->tw);
	tcp_event(st, sk, TCP_EV_READ);
}

/* A passive child finished its handshake: into the accept queue. */
void tcp_child_established(struct tcp_stack *st, struct tcp_sock *sk)
{
	struct tcp_sock *l = sk->parent;
	st->stats.established++;
	if (!l) {
		tcp_event(st, sk, TCP_EV_WRITE);
		return;
	}
	l->syn_n--;
	tcp_list_del(&sk->q);
	l->acc_n++;
	tcp_list_add_tail(&l->accq, &sk->q);
	tcp_event(st, l, TCP_EV_ACCEPT);
}
