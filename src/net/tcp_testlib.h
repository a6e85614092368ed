/* tcp_testlib.h — helpers for the TCP unit tests (hosted; tests only).
 *
 * tnode: one engine whose output is captured (parsed) for inspection.
 * tnet:  two engines back to back through a deterministic lossy wire
 *        (drop / duplicate / reorder from a seeded PRNG, fixed latency).
 * Both speak IPv4 (IP_A, IP_B) and IPv6 (tip6(IP_A), tip6(IP_B), in
 * 2001:2::/48): the family of a connection is the one it was opened on.
 */
#ifndef NET_TCP_TESTLIB_H
#define NET_TCP_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/tcp_int.h"
#include "wire/csum.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"

#define MS SK_NS_PER_MS
#define IP_A SK_IP4(198, 18, 0, 1)
#define IP_B SK_IP4(198, 18, 0, 2)

/* The IPv6 twin of a test IPv4 address: 2001:2::<last byte>. */
static __attribute__((unused)) struct sk_addr tip6(uint32_t ip)
{
	const uint8_t b[16] = {0x20, 0x01, 0x00, 0x02, [15] = (uint8_t)ip};
	return sk_addr_v6(b);
}

struct cap_seg {
	uint32_t src, dst;
	bool v6;                   /* then src6/dst6, not src/dst */
	struct sk_addr src6, dst6;
	size_t len;
	sk_time_ns at;
	struct tcp_hdr h;
	uint8_t buf[9300];
};

struct tnode {
	struct tcp_stack st;
	void *arena;
	uint32_t ip;
	struct sk_addr ip6;
	struct cap_seg *segs;
	size_t nseg, capseg;
	/* Forwarding hook for tnet; NULL = capture only. */
	int (*fwd)(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst, const uint8_t *seg,
		   size_t len);
	int (*fwd6)(void *ctx, sk_time_ns now, const struct sk_addr *src, const struct sk_addr *dst,
		    const uint8_t *seg, size_t len);
	void *fwd_ctx;
};

static __attribute__((unused)) struct cap_seg *tnode_cap(struct tnode *n, sk_time_ns now,
							 const uint8_t *seg, size_t len)
{
	if (n->nseg == n->capseg) {
		n->capseg = n->capseg ? 2 * n->capseg : 64;
		n->segs = realloc(n->segs, n->capseg * sizeof(*n->segs));
		assert_non_null(n->segs);
	}
	struct cap_seg *c = &n->segs[n->nseg++];
	memset(c, 0, offsetof(struct cap_seg, buf));
	c->len = len;
	c->at = now;
	assert_true(len <= sizeof(c->buf));
	memcpy(c->buf, seg, len);
	return c;
}

static __attribute__((unused)) int tnode_output6(void *ctx, sk_time_ns now,
						 const struct sk_addr *src,
						 const struct sk_addr *dst, const uint8_t *seg,
						 size_t len)
{
	struct tnode *n = ctx;
	/* Out from our own IPv6 address, to an IPv6 peer, always. */
	assert_true(sk_addr_eq(src, &n->ip6));
	assert_false(sk_addr_is_v4(dst));
	if (n->fwd6)
		return n->fwd6(n->fwd_ctx, now, src, dst, seg, len);
	struct cap_seg *c = tnode_cap(n, now, seg, len);
	c->v6 = true;
	c->src6 = *src;
	c->dst6 = *dst;
	/* Every segment must parse with the IPv6 pseudo header. */
	assert_int_equal(tcp_parse_ps(c->buf, len, csum_pseudo6(src->b, dst->b, IPV6_NH_TCP, 0),
				      &c->h),
			 WIRE_OK);
	return 0;
}

static __attribute__((unused)) bool tnode_src6(void *ctx, const struct sk_addr *dst,
					       struct sk_addr *src)
{
	(void)dst;
	*src = ((struct tnode *)ctx)->ip6;
	return true;
}

static __attribute__((unused)) int tnode_output(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst, const uint8_t *seg,
			size_t len)
{
	struct tnode *n = ctx;
	if (n->fwd)
		return n->fwd(n->fwd_ctx, now, src, dst, seg, len);
	struct cap_seg *c = tnode_cap(n, now, seg, len);
	c->src = src;
	c->dst = dst;
	/* Every segment the engine emits must parse, checksum included. */
	assert_int_equal(tcp_parse(c->buf, len, src, dst, &c->h), WIRE_OK);
	return 0;
}

static __attribute__((unused)) struct tnode *tnode_new(uint32_t ip, void (*tweak)(struct tcp_config *))
{
	struct tnode *n = calloc(1, sizeof(*n));
	assert_non_null(n);
	struct tcp_config cfg;
	tcp_config_default(&cfg);
	cfg.local_ip = ip;
	cfg.max_sockets = 64;
	cfg.sndbuf = 64 * 1024;
	cfg.rcvbuf = 64 * 1024;
	cfg.seed[0] = 0x0123456789abcdefull ^ ip;
	cfg.seed[1] = 0xfedcba9876543210ull;
	cfg.ip_output = tnode_output;
	cfg.ip6_output = tnode_output6;
	cfg.src6 = tnode_src6;
	cfg.out_ctx = n;
	if (tweak)
		tweak(&cfg);
	size_t sz = tcp_arena_size(&cfg);
	n->arena = malloc(sz);
	assert_non_null(n->arena);
	n->ip = ip;
	n->ip6 = tip6(ip);
	assert_int_equal(tcp_stack_init(&n->st, n->arena, sz, &cfg, 0), 0);
	return n;
}

static __attribute__((unused)) void tnode_free(struct tnode *n)
{
	free(n->arena);
	free(n->segs);
	free(n);
}

static __attribute__((unused)) void tnode_clear(struct tnode *n)
{
	n->nseg = 0;
}

static __attribute__((unused)) struct cap_seg *tnode_last(struct tnode *n)
{
	assert_true(n->nseg > 0);
	return &n->segs[n->nseg - 1];
}

/* Build one segment into a static buffer (pseudo: the address sum). */
static __attribute__((unused)) const uint8_t *tseg_build(uint64_t pseudo, uint16_t sport,
							 uint16_t dport, uint8_t flags, uint32_t seq,
							 uint32_t ack, uint16_t win,
							 const struct tcp_opts *opts,
							 const void *data, size_t len, size_t *total)
{
	static uint8_t buf[9300];
	struct tcp_hdr h;
	memset(&h, 0, sizeof(h));
	h.sport = sport;
	h.dport = dport;
	h.seq = seq;
	h.ack = ack;
	h.flags = flags;
	h.win = win;
	if (opts)
		h.opts = *opts;
	size_t hl = tcp_hdr_len(&h);
	if (len)
		memcpy(buf + hl, data, len);
	*total = tcp_emit_ps(buf, sizeof(buf), &h, pseudo, (uint16_t)len);
	assert_true(*total > 0);
	return buf;
}

/* Build and feed one segment from (src:sport) to the node. */
static __attribute__((unused)) void tnode_inject(struct tnode *n, sk_time_ns now, uint32_t src, uint16_t sport,
			 uint16_t dport, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t win,
			 const struct tcp_opts *opts, const void *data, size_t len)
{
	size_t total;
	const uint8_t *buf = tseg_build(csum_pseudo4(src, n->ip, IPV4_PROTO_TCP, 0), sport, dport,
					flags, seq, ack, win, opts, data, len, &total);
	tcp_input(&n->st, now, src, n->ip, buf, total);
}

/* The same over IPv6, to the node's IPv6 address. */
static __attribute__((unused)) void tnode_inject6(struct tnode *n, sk_time_ns now,
						  const struct sk_addr *src, uint16_t sport,
						  uint16_t dport, uint8_t flags, uint32_t seq,
						  uint32_t ack, uint16_t win,
						  const struct tcp_opts *opts, const void *data,
						  size_t len)
{
	size_t total;
	const uint8_t *buf = tseg_build(csum_pseudo6(src->b, n->ip6.b, IPV6_NH_TCP, 0), sport,
					dport, flags, seq, ack, win, opts, data, len, &total);
	tcp_input6(&n->st, now, src, &n->ip6, buf, total);
}

static __attribute__((unused)) uint64_t tstat(const struct tcp_stack *st, size_t off)
{
	return *(const uint64_t *)(const void *)((const char *)&st->stats + off);
}
#define STAT(n, field) tstat(&(n)->st, offsetof(struct tcp_stats, field))

/* ---- two engines back to back ---- */

struct tpkt {
	sk_time_ns at;
	uint32_t src, dst;
	bool v6;                   /* then src6/dst6 */
	struct sk_addr src6, dst6;
	uint16_t len;
	uint64_t order;
	uint8_t data[9216];
};

static __attribute__((unused)) int tpkt_cmp(const void *x, const void *y)
{
	const struct tpkt *a = x, *b = y;
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

struct tnet {
	struct tnode *a, *b;
	struct tpkt *q;
	size_t nq, capq;
	uint64_t rng;
	unsigned loss_pm, dup_pm, reorder_pm; /* per mille */
	sk_time_ns latency;
	uint64_t sent, dropped, duped, reordered, pushed;
	sk_time_ns a_late; /* A's timers fire this late (a busy host's loop) */
	bool down; /* drop everything */
	bool trace; /* print every segment to stderr */
};

static __attribute__((unused)) uint32_t tnet_rand(struct tnet *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (uint32_t)(w->rng >> 16);
}

static __attribute__((unused)) struct tpkt *tnet_push(struct tnet *w, sk_time_ns at, uint32_t src, uint32_t dst,
		      const uint8_t *seg, size_t len)
{
	if (w->nq == w->capq) {
		w->capq = w->capq ? 2 * w->capq : 256;
		w->q = realloc(w->q, w->capq * sizeof(*w->q));
		assert_non_null(w->q);
	}
	struct tpkt *p = &w->q[w->nq++];
	assert_true(len <= sizeof(p->data));
	p->at = at;
	p->src = src;
	p->dst = dst;
	p->len = (uint16_t)len;
	p->order = w->pushed++;
	p->v6 = false;
	memcpy(p->data, seg, len);
	return p;
}

/* The wire of both families: src6/dst6 NULL for IPv4. */
static __attribute__((unused)) int tnet_wire(struct tnet *w, sk_time_ns now, uint32_t src, uint32_t dst,
		       const struct sk_addr *src6, const struct sk_addr *dst6,
		       const uint8_t *seg, size_t len)
{
	w->sent++;
	if (w->trace) {
		struct tcp_hdr h;
		uint64_t ps = src6 ? csum_pseudo6(src6->b, dst6->b, IPV6_NH_TCP, 0)
				   : csum_pseudo4(src, dst, IPV4_PROTO_TCP, 0);
		bool from_a = src6 ? sk_addr_eq(src6, &w->a->ip6) : src == IP_A;
		if (tcp_parse_ps(seg, len, ps, &h) == 0)
			fprintf(stderr, "%10.3f %c>%c%s %s%s%s%s seq %u ack %u win %u len %u sack %u ts %u/%u\n",
				now / 1e6, from_a ? 'A' : 'B', from_a ? 'B' : 'A', src6 ? " v6" : "",
				h.flags & TCP_SYN ? "S" : "", h.flags & TCP_FIN ? "F" : "",
				h.flags & TCP_RST ? "R" : "", h.flags & TCP_ACK ? "." : "", h.seq,
				h.ack, h.win, h.payload_len, h.opts.nsack, h.opts.ts_val, h.opts.ts_ecr);
	}
	if (w->down || (w->loss_pm && tnet_rand(w) % 1000 < w->loss_pm)) {
		w->dropped++;
		return 0;
	}
	sk_time_ns at = now + w->latency;
	if (w->reorder_pm && tnet_rand(w) % 1000 < w->reorder_pm) {
		at += w->latency / 2 + 1 * MS; /* overtaken by later segments */
		w->reordered++;
	}
	int copies = 1;
	if (w->dup_pm && tnet_rand(w) % 1000 < w->dup_pm) {
		w->duped++;
		copies = 2;
	}
	for (int i = 0; i < copies; i++) {
		struct tpkt *p = tnet_push(w, at + (sk_time_ns)i * 100 * SK_NS_PER_US, src, dst, seg, len);
		if (src6) {
			p->v6 = true;
			p->src6 = *src6;
			p->dst6 = *dst6;
		}
	}
	return 0;
}

static __attribute__((unused)) int tnet_output(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst, const uint8_t *seg,
		       size_t len)
{
	return tnet_wire(ctx, now, src, dst, NULL, NULL, seg, len);
}

static __attribute__((unused)) int tnet_output6(void *ctx, sk_time_ns now,
						const struct sk_addr *src,
						const struct sk_addr *dst, const uint8_t *seg,
						size_t len)
{
	return tnet_wire(ctx, now, 0, 0, src, dst, seg, len);
}

static __attribute__((unused)) struct tnet *tnet_new(void (*tweak)(struct tcp_config *))
{
	struct tnet *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	w->a = tnode_new(IP_A, tweak);
	w->b = tnode_new(IP_B, tweak);
	w->a->fwd = w->b->fwd = tnet_output;
	w->a->fwd6 = w->b->fwd6 = tnet_output6;
	w->a->fwd_ctx = w->b->fwd_ctx = w;
	w->rng = 0x9e3779b97f4a7c15ull;
	w->latency = 1 * MS;
	return w;
}

static __attribute__((unused)) void tnet_free(struct tnet *w)
{
	tnode_free(w->a);
	tnode_free(w->b);
	free(w->q);
	free(w);
}

/* Advance to the next event (packet arrival or engine deadline, at most
 * `limit`), deliver what is due, poll both engines. */
static __attribute__((unused)) sk_time_ns tnet_step(struct tnet *w, sk_time_ns now, sk_time_ns limit)
{
	sk_time_ns t = limit;
	for (size_t i = 0; i < w->nq; i++)
		t = SK_MIN(t, w->q[i].at);
	sk_time_ns ta = tcp_next_deadline(&w->a->st);
	t = SK_MIN(t, ta > SK_TIME_NEVER - w->a_late ? ta : ta + w->a_late);
	t = SK_MIN(t, tcp_next_deadline(&w->b->st));
	if (t > now)
		now = t;
	/* Deliver what is due, in arrival order (stable for equal times). */
	size_t ndue = 0;
	for (size_t i = 0; i < w->nq; i++)
		if (w->q[i].at <= now)
			ndue++;
	if (ndue) {
		struct tpkt *due = malloc(ndue * sizeof(*due));
		assert_non_null(due);
		size_t k = 0, keep = 0;
		for (size_t i = 0; i < w->nq; i++) {
			if (w->q[i].at <= now)
				due[k++] = w->q[i];
			else
				w->q[keep++] = w->q[i];
		}
		w->nq = keep;
		qsort(due, ndue, sizeof(*due), tpkt_cmp);
		for (size_t i = 0; i < ndue; i++) {
			if (due[i].v6) {
				struct tnode *n = sk_addr_eq(&due[i].dst6, &w->a->ip6)   ? w->a
						  : sk_addr_eq(&due[i].dst6, &w->b->ip6) ? w->b
											 : NULL;
				if (n)
					tcp_input6(&n->st, now, &due[i].src6, &due[i].dst6,
						   due[i].data, due[i].len);
				continue;
			}
			if (due[i].dst != IP_A && due[i].dst != IP_B)
				continue; /* to a spoofed address: lost */
			struct tnode *n = due[i].dst == IP_A ? w->a : w->b;
			tcp_input(&n->st, now, due[i].src, due[i].dst, due[i].data, due[i].len);
		}
		free(due);
	}
	tcp_poll(&w->a->st, now);
	tcp_poll(&w->b->st, now);
	assert_int_equal(tcp_check(&w->a->st), 0);
	assert_int_equal(tcp_check(&w->b->st), 0);
	return now;
}

#endif
