/* tcp_sack_test.c — the sender's SACK scoreboard against a receiver that
 * reports only its latest blocks.
 *
 * The pair: engine A sends; the peer is a model of a Linux-like receiver,
 * in this file: it keeps every out-of-order range (no limit) and puts on
 * each ACK at most 3 SACK blocks (what fits beside timestamps), the block
 * holding the segment that just came first, then the most recently
 * changed others (RFC 2018 4).  A fixed one-way delay each way, no
 * bandwidth limit; in one window of the flight every third segment's
 * first transmission is dropped, so the window holds far more holes than
 * the scoreboard's inline ranges.  A range the sender forgets is never
 * reported again, so it would later look lost and be resent: the tests
 * check that nothing the receiver SACKed is resent, that the sender's
 * SACKed bytes are exactly the receiver's out-of-order bytes on every
 * ACK, and that pipe (RFC 6675 4) is what the receiver's state says. */
#include "tcp_testlib.h"

#define PEER SK_IP4(198, 18, 0, 9)
#define PPORT 40000
#define LPORT 80
#define PISS 1000u
#define DELAY (10 * MS) /* one way */
#define MSS 1448u       /* 1460 less the timestamp option */
#define NRANGE 4096
#define NQ 65536

struct rng {
	uint32_t l, r, stamp;
};

/* A data segment on its way to the receiver, or an ACK on its way back. */
struct ev {
	sk_time_ns at;
	uint32_t seq, len, tsval;     /* data */
	/* ACK: the receiver's out-of-order bytes then, and the bytes of the
	 * holes RFC 6675 calls lost by them */
	uint32_t ack, ooo_bytes, lost_bytes;
	struct tcp_opts o;
	bool check_pipe;              /* the last ACK of the held batch */
};

struct pair {
	struct tnode *n;
	int s;
	sk_time_ns now;
	uint32_t iss;                 /* A's first data sequence */
	uint32_t total, queued;       /* bytes the app sends, bytes handed to A */
	/* Receiver */
	uint32_t rcv_nxt, clock;
	struct rng ooo[NRANGE];       /* sorted, disjoint, non-touching, above rcv_nxt */
	uint32_t nooo;
	struct tcp_range reported[NRANGE]; /* union of every SACK block sent */
	uint32_t nrep;
	uint32_t ts_recent;
	/* Wire */
	struct ev data[NQ], acks[NQ];
	uint32_t dh, dt, ah, at;
	uint32_t sent_max;            /* highest end A has sent: a lower start is a resend */
	/* Impairment and batch: first transmissions of the segments starting
	 * in [drop_lo, drop_hi) at an offset of 1 mod 3 segments are lost;
	 * the ACKs of all segments in that window reach A at one instant, with
	 * no send in between (A's output runs at tcp_poll), and pipe is
	 * checked then. */
	uint32_t drop_lo, drop_hi;
	bool holding;
	uint32_t held_from;           /* first held ACK's index in acks[] */
	/* Results */
	uint32_t dropped, resent, needless, pipe_checks, acks_checked;
};

static void pair_ack_gen(struct pair *p, uint32_t seq, uint32_t end);
static uint32_t lost_holes(const struct pair *p);

static uint32_t ooo_bytes(const struct pair *p)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nooo; i++)
		n += p->ooo[i].r - p->ooo[i].l;
	return n;
}

static bool overlaps_reported(const struct pair *p, uint32_t l, uint32_t r)
{
	for (uint32_t i = 0; i < p->nrep; i++)
		if (tcp_seq_lt(p->reported[i].l, r) && tcp_seq_gt(p->reported[i].r, l))
			return true;
	return false;
}

static void report_add(struct pair *p, uint32_t l, uint32_t r)
{
	/* Keep it simple: merge into a sorted list. */
	uint32_t i = 0;
	while (i < p->nrep && tcp_seq_lt(p->reported[i].r, l))
		i++;
	uint32_t j = i;
	while (j < p->nrep && !tcp_seq_gt(p->reported[j].l, r)) {
		l = tcp_seq_min(l, p->reported[j].l);
		r = tcp_seq_max(r, p->reported[j].r);
		j++;
	}
	assert_true(p->nrep - (j - i) + 1 <= NRANGE);
	memmove(&p->reported[i + 1], &p->reported[j], (p->nrep - j) * sizeof(p->reported[0]));
	p->reported[i] = (struct tcp_range){l, r};
	p->nrep = p->nrep - (j - i) + 1;
}

/* The receiver gets [seq, end): it keeps it, and acknowledges. */
static void rcv_data(struct pair *p, uint32_t seq, uint32_t end, uint32_t tsval)
{
	if (overlaps_reported(p, seq, end))
		p->needless++;
	if (tcp_seq_le(seq, p->rcv_nxt))
		p->ts_recent = tsval; /* RFC 7323: in-order data moves TS.Recent */
	if (tcp_seq_gt(end, p->rcv_nxt)) {
		uint32_t l = tcp_seq_max(seq, p->rcv_nxt), r = end, stamp = ++p->clock;
		uint32_t i = 0;
		while (i < p->nooo && tcp_seq_lt(p->ooo[i].r, l))
			i++;
		uint32_t j = i;
		while (j < p->nooo && !tcp_seq_gt(p->ooo[j].l, r)) {
			l = tcp_seq_min(l, p->ooo[j].l);
			r = tcp_seq_max(r, p->ooo[j].r);
			j++;
		}
		assert_true(p->nooo - (j - i) + 1 <= NRANGE);
		memmove(&p->ooo[i + 1], &p->ooo[j], (p->nooo - j) * sizeof(p->ooo[0]));
		p->ooo[i] = (struct rng){l, r, stamp};
		p->nooo = p->nooo - (j - i) + 1;
		/* In order now: the first range joins the stream. */
		if (p->nooo && !tcp_seq_gt(p->ooo[0].l, p->rcv_nxt)) {
			p->rcv_nxt = p->ooo[0].r;
			memmove(&p->ooo[0], &p->ooo[1], (p->nooo - 1) * sizeof(p->ooo[0]));
			p->nooo--;
		}
	}
	pair_ack_gen(p, seq, end);
}

/* An ACK: the latest 3 blocks, the newest (the one just changed) first. */
static void pair_ack_gen(struct pair *p, uint32_t seq, uint32_t end)
{
	struct ev *a = &p->acks[p->at % NQ];
	assert_true(p->at - p->ah < NQ);
	memset(a, 0, sizeof(*a));
	a->at = p->now + DELAY;
	a->ack = p->rcv_nxt;
	a->ooo_bytes = ooo_bytes(p);
	a->lost_bytes = lost_holes(p);
	a->o = (struct tcp_opts){.has_ts = true, .ts_val = (uint32_t)(p->now / MS) + 7,
				 .ts_ecr = p->ts_recent};
	bool used[NRANGE] = {0};
	for (uint32_t k = 0; k < 3; k++) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < p->nooo; i++)
			if (!used[i] && (best == UINT32_MAX || p->ooo[i].stamp > p->ooo[best].stamp))
				best = i;
		if (best == UINT32_MAX)
			break;
		used[best] = true;
		a->o.sack[k].left = p->ooo[best].l;
		a->o.sack[k].right = p->ooo[best].r;
		a->o.nsack = (uint8_t)(k + 1);
		report_add(p, p->ooo[best].l, p->ooo[best].r);
	}
	bool in_win = tcp_seq_ge(seq, p->drop_lo) && tcp_seq_lt(seq, p->drop_hi);
	if (in_win && !p->holding) {
		p->holding = true;
		p->held_from = p->at;
	}
	if (p->holding && (!in_win || tcp_seq_ge(end, p->drop_hi))) {
		/* The batch is complete: every held ACK arrives with the last. */
		uint32_t last = in_win ? p->at : p->at - 1;
		for (uint32_t k = p->held_from; k != last + 1; k++)
			p->acks[k % NQ].at = p->acks[last % NQ].at;
		p->acks[last % NQ].check_pipe = true;
		p->holding = false;
		p->drop_lo = p->drop_hi; /* once */
	}
	p->at++;
}

/* A's output since the last call onto the wire (or lost). */
static void pair_drain(struct pair *p)
{
	for (size_t i = 0; i < p->n->nseg; i++) {
		struct cap_seg *c = &p->n->segs[i];
		uint32_t len = c->h.payload_len;
		if (!len)
			continue;
		uint32_t seq = c->h.seq, end = seq + len;
		bool resend = tcp_seq_lt(seq, p->sent_max);
		if (resend)
			p->resent++;
		else
			p->sent_max = end;
		if (!resend && tcp_seq_ge(seq, p->drop_lo) && tcp_seq_lt(seq, p->drop_hi) &&
		    (seq - p->drop_lo) / MSS % 3 == 1) {
			p->dropped++;
			continue;
		}
		struct ev *d = &p->data[p->dt % NQ];
		assert_true(p->dt - p->dh < NQ);
		memset(d, 0, sizeof(*d));
		d->at = p->now + DELAY;
		d->seq = seq;
		d->len = len;
		d->tsval = c->h.opts.ts_val;
		p->dt++;
	}
	tnode_clear(p->n);
}

static struct tcp_sock *pair_conn(struct pair *p)
{
	for (uint32_t i = 0; i < p->n->st.cfg.max_sockets; i++) {
		struct tcp_sock *sk = &p->n->st.socks[i];
		if (sk->in_use && sk->state == TCP_ESTABLISHED)
			return sk;
	}
	fail();
	return NULL;
}

/* RFC 6675 4's IsLost from the receiver's state: the holes below the
 * point above which DupThresh ranges or more than 2 segments are SACKed.
 * Pipe is then what is outstanding, less what the receiver holds out of
 * order, less these. */
static uint32_t lost_holes(const struct pair *p)
{
	uint32_t above = 0, edge = p->rcv_nxt;
	for (int i = (int)p->nooo - 1; i >= 0; i--) {
		above += p->ooo[i].r - p->ooo[i].l;
		if (above > 2 * MSS || p->nooo - (uint32_t)i >= 3) {
			edge = p->ooo[i].l;
			break;
		}
	}
	uint32_t lost = edge - p->rcv_nxt;
	for (uint32_t i = 0; i < p->nooo && tcp_seq_lt(p->ooo[i].l, edge); i++)
		lost -= p->ooo[i].r - p->ooo[i].l;
	return lost;
}

static void pair_feed(struct pair *p)
{
	static uint8_t buf[65536];
	while (p->queued < p->total) {
		uint32_t n = SK_MIN((uint32_t)sizeof(buf), p->total - p->queued);
		for (uint32_t i = 0; i < n; i++)
			buf[i] = (uint8_t)((p->queued + i) * 7 + 1);
		int r = tcp_send(&p->n->st, p->s, buf, n);
		if (r <= 0)
			break;
		p->queued += (uint32_t)r;
	}
}

static uint8_t pair_cc;
static void tweak_sender(struct tcp_config *c)
{
	c->max_sockets = 8;
	c->sndbuf = 2u << 20; /* the flight is never bound by the buffer */
	c->rcvbuf = 64 * 1024;
	c->cc = pair_cc;
}

static struct pair *pair_open(uint8_t cc, uint32_t total)
{
	struct pair *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	pair_cc = cc;
	p->n = tnode_new(IP_A, tweak_sender);
	p->total = total;
	int ls = tcp_listen(&p->n->st, LPORT, 0);
	assert_true(ls >= 0);
	struct tcp_opts o = {.has_mss = true, .mss = 1460, .has_ws = true, .ws = 7,
			     .sack_perm = true, .has_ts = true, .ts_val = 1};
	tnode_inject(p->n, 0, PEER, PPORT, LPORT, TCP_SYN, PISS, 0, 65535, &o, NULL, 0);
	tcp_poll(&p->n->st, 0);
	struct tcp_hdr *h = &tnode_last(p->n)->h;
	p->iss = h->seq + 1;
	p->rcv_nxt = p->iss;
	p->sent_max = p->iss;
	p->ts_recent = h->opts.ts_val;
	o = (struct tcp_opts){.has_ts = true, .ts_val = 2, .ts_ecr = p->ts_recent};
	p->now = DELAY * 2;
	tnode_inject(p->n, p->now, PEER, PPORT, LPORT, TCP_ACK, PISS + 1, p->iss, 65535, &o, NULL,
		     0);
	p->s = tcp_accept(&p->n->st, ls, NULL, NULL);
	assert_true(p->s >= 0);
	struct tcp_event ev[4];
	tcp_events(&p->n->st, ev, 4);
	tnode_clear(p->n);
	return p;
}

/* Every event in time order until all is acknowledged (or the limit).
 * strict: the scoreboard's promises are checked on every ACK. */
static void pair_run(struct pair *p, sk_time_ns limit, bool strict)
{
	pair_feed(p);
	tcp_poll(&p->n->st, p->now);
	pair_drain(p);
	while (p->now < limit) {
		sk_time_ns t = tcp_next_deadline(&p->n->st);
		if (p->dh != p->dt && p->data[p->dh % NQ].at < t)
			t = p->data[p->dh % NQ].at;
		if (p->ah != p->at && p->acks[p->ah % NQ].at < t)
			t = p->acks[p->ah % NQ].at;
		if (t == SK_TIME_NEVER)
			break;
		if (t > p->now)
			p->now = t;
		while (p->dh != p->dt && p->data[p->dh % NQ].at <= p->now) {
			struct ev *d = &p->data[p->dh++ % NQ];
			rcv_data(p, d->seq, d->seq + d->len, d->tsval);
		}
		/* Every ACK due now goes in before A sends again. */
		while (p->ah != p->at && p->acks[p->ah % NQ].at <= p->now) {
			struct ev *a = &p->acks[p->ah++ % NQ];
			tnode_inject(p->n, p->now, PEER, PPORT, LPORT, TCP_ACK, PISS + 1, a->ack,
				     65535, &a->o, NULL, 0);
			if (!strict)
				continue;
			struct tcp_sock *sk = pair_conn(p);
			/* The sender remembers everything the receiver reported. */
			assert_int_equal(tcp_sacked_bytes(sk), a->ooo_bytes);
			p->acks_checked++;
			if (!a->check_pipe)
				continue;
			/* The batch is in; nothing resent yet in the episode: no
			 * poll since it began. */
			assert_int_equal(sk->snd_una, a->ack);
			assert_int_equal(sk->rtx_hi, sk->snd_una);
			assert_true(a->lost_bytes > 0);
			assert_int_equal(tcp_pipe(sk),
					 sk->snd_max - a->ack - a->ooo_bytes - a->lost_bytes);
			p->pipe_checks++;
		}
		pair_feed(p);
		tcp_poll(&p->n->st, p->now);
		if (strict) /* (not with the pool emptied by hand) */
			assert_int_equal(tcp_check(&p->n->st), 0);
		pair_drain(p);
		if (p->rcv_nxt == p->iss + p->total && p->dh == p->dt && p->ah == p->at)
			break;
	}
}

static void pair_close(struct pair *p)
{
	tnode_free(p->n);
	free(p);
}

/* 30 holes in one window of 90 segments, with the flight at ~320 segments
 * (slow start, no bandwidth limit: the window at 400 segments in). */
static void many_holes_case(uint8_t cc)
{
	struct pair *p = pair_open(cc, 1200 * MSS);
	p->drop_lo = p->iss + 400 * MSS;
	p->drop_hi = p->drop_lo + 90 * MSS;
	pair_run(p, 30 * SK_NS_PER_S, true);
	if (getenv("TCP_SACK_TEST_VERBOSE"))
		printf("  cc %u: dropped %u resent %u needless %u acks %u full %llu grows %llu "
		       "rto %llu done %.3f s\n",
		       cc, p->dropped, p->resent, p->needless, p->acks_checked,
		       (unsigned long long)STAT(p->n, sack_score_full),
		       (unsigned long long)STAT(p->n, sack_score_grows),
		       (unsigned long long)STAT(p->n, rto_fires), (double)p->now / SK_NS_PER_S);
	assert_int_equal(p->rcv_nxt, p->iss + p->total); /* all delivered */
	assert_int_equal(p->dropped, 30);
	assert_int_equal(p->pipe_checks, 1);
	assert_int_equal(p->needless, 0); /* nothing SACKed went again */
	assert_int_equal(p->resent, 30); /* each hole once, nothing else */
	assert_int_equal(STAT(p->n, sack_score_full), 0);
	assert_true(STAT(p->n, sack_score_grows) >= 1);
	assert_int_equal(STAT(p->n, rto_fires), 0);
	/* The pooled board went back when the episode ended. */
	assert_null(pair_conn(p)->xscore);
	assert_int_equal(p->n->st.scpool.navail, p->n->st.scpool.n);
	pair_close(p);
}

static void test_many_holes_cubic(void **state)
{
	(void)state;
	many_holes_case(TCP_CC_CUBIC);
}

static void test_many_holes_bbr(void **state)
{
	(void)state;
	many_holes_case(TCP_CC_BBR);
}

/* With the pool empty (every board held), a block that does not fit is
 * dropped and counted, as before the pool: bounded memory, no failure. */
static void test_pool_empty_falls_back(void **state)
{
	(void)state;
	struct pair *p = pair_open(TCP_CC_CUBIC, 1200 * MSS);
	struct tcp_bufpool *pool = &p->n->st.scpool;
	uint32_t n = pool->navail;
	pool->navail = 0; /* as if every board were held */
	uint32_t hw = pool->hw;
	uint8_t *fl = pool->free;
	pool->hw = pool->n;
	pool->free = NULL;
	p->drop_lo = p->iss + 400 * MSS;
	p->drop_hi = p->drop_lo + 90 * MSS;
	/* No pipe or SACKed-bytes promise now: only integrity and the count. */
	pair_run(p, 60 * SK_NS_PER_S, false);
	assert_int_equal(p->rcv_nxt, p->iss + p->total);
	assert_true(STAT(p->n, sack_score_full) > 0);
	assert_int_equal(STAT(p->n, sack_score_grows), 0);
	assert_null(pair_conn(p)->xscore);
	pool->navail = n;
	pool->hw = hw;
	pool->free = fl;
	assert_int_equal(tcp_check(&p->n->st), 0);
	pair_close(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_holes_cubic),
		cmocka_unit_test(test_many_holes_bbr),
		cmocka_unit_test(test_pool_empty_falls_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
