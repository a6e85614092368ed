/* iface_nd.c — Neighbour Discovery for a host (RFC 4861), Duplicate Address
 * Detection (RFC 4862 5.4), and the queue of packets waiting for a next hop.
 *
 * Cache: built as the ARP cache is (iface_arp.c): IFACE_ND_SLOTS entries in
 * a fixed array, a hash keyed by the seed (SipHash over the 16 bytes), two
 * LRU lists (PROBATION for entries learned from others' NS, ACTIVE for those
 * our traffic uses), so a flood of NS from random sources churns PROBATION
 * only.  An NA creates no entry (RFC 4861 7.2.5: an NA for a target with no
 * entry is ignored), so a flood of bogus NA costs nothing but its counter.
 * States: enum iface_nd_state in iface_types.h.  Expiry is lazy: an entry
 * is judged when output uses it.
 *
 * Queue: IFACE_ND_PENDING packets, copied; NS for one address at most once
 * per IFACE_ND_RETRANS_NS; a packet is dropped after IFACE_ND_QUEUE_NS.
 *
 * DAD: every address starts TENTATIVE.  iface_nd_poll joins our groups (an
 * MLDv2 report, so snooping switches forward the solicited-node groups),
 * then sends IFACE_DAD_TRANSMITS NS from :: with a nonce, RetransTimer
 * apart, and one RetransTimer after the last the address is PREFERRED.  An
 * NA for it, or another node's probe for it (a probe carrying our own nonce
 * is ours, looped back), makes it DUPLICATE: counted, reported through the
 * dad callback, and never used.
 *
 * Lifetimes: a SLAAC address keeps its prefix's valid and preferred
 * lifetimes, renewed by each RA under the two-hour rule (RFC 4862 5.5.3 e);
 * it is deprecated when the preferred one ends and removed (its group left)
 * when the valid one does.  A default router learned from an RA lasts its
 * router lifetime.  Each is a deadline of iface_nd_poll's.
 */
#include "../net/siphash.h"
#include "iface_priv.h"

_Static_assert(IFACE_ND_BUCKETS == 1u << IFACE_ND_BUCKET_BITS, "bucket bits");
_Static_assert(IFACE_ND_SLOTS + 2 < IFACE_ND_NONE, "entry index must fit in uint16_t");

#define ND_SENTINEL(list) (IFACE_ND_SLOTS + (list))

static sk_time_ns lifetimes_deadline(const struct iface *ifc);
static void lifetimes_poll(struct iface *ifc, sk_time_ns now);

static unsigned nd_hash(const struct iface *ifc, const struct ipv6_addr *ip)
{
	struct siphash_key k = {ifc->hash_k1, ifc->hash_k2};
	return (unsigned)(siphash24(&k, ip->b, IPV6_ADDR_LEN) >> (64 - IFACE_ND_BUCKET_BITS));
}

static void lru_unlink(struct iface *ifc, unsigned i)
{
	struct iface_nd_entry *e = &ifc->nd[i];
	ifc->nd[e->prev].next = e->next;
	ifc->nd[e->next].prev = e->prev;
	ifc->nd_list_len[e->list]--;
}

static void lru_push_head(struct iface *ifc, unsigned i, unsigned list)
{
	struct iface_nd_entry *e = &ifc->nd[i];
	struct iface_nd_entry *s = &ifc->nd[ND_SENTINEL(list)];
	e->list = (uint8_t)list;
	e->prev = (uint16_t)ND_SENTINEL(list);
	e->next = s->next;
	ifc->nd[s->next].prev = (uint16_t)i;
	s->next = (uint16_t)i;
	ifc->nd_list_len[list]++;
}

static void nd_touch(struct iface *ifc, unsigned i, unsigned list)
{
	lru_unlink(ifc, i);
	lru_push_head(ifc, i, list);
}

void iface_nd_init(struct iface *ifc)
{
	for (unsigned b = 0; b < IFACE_ND_BUCKETS; b++)
		ifc->nd_bucket[b] = IFACE_ND_NONE;
	for (unsigned i = 0; i < IFACE_ND_SLOTS; i++) {
		ifc->nd[i].state = IFACE_ND_FREE;
		ifc->nd[i].hnext = (uint16_t)(i + 1 < IFACE_ND_SLOTS ? i + 1 : IFACE_ND_NONE);
	}
	ifc->nd_free = 0;
	ifc->nd_used = 0;
	for (unsigned l = 0; l < 2; l++) {
		struct iface_nd_entry *s = &ifc->nd[ND_SENTINEL(l)];
		s->prev = s->next = (uint16_t)ND_SENTINEL(l);
		ifc->nd_list_len[l] = 0;
	}
}

unsigned iface_nd_find(const struct iface *ifc, const struct ipv6_addr *ip)
{
	for (unsigned i = ifc->nd_bucket[nd_hash(ifc, ip)]; i != IFACE_ND_NONE; i = ifc->nd[i].hnext)
		if (ipv6_addr_eq(&ifc->nd[i].ip, ip))
			return i;
	return IFACE_ND_NONE;
}

static void nd_remove(struct iface *ifc, unsigned i)
{
	struct iface_nd_entry *e = &ifc->nd[i];
	uint16_t *pp = &ifc->nd_bucket[nd_hash(ifc, &e->ip)];
	while (*pp != i)
		pp = &ifc->nd[*pp].hnext;
	*pp = e->hnext;
	lru_unlink(ifc, i);
	e->state = IFACE_ND_FREE;
	e->hnext = ifc->nd_free;
	ifc->nd_free = (uint16_t)i;
	ifc->nd_used--;
}

/* An active entry nobody depends on any more (as arp_idle). */
static bool nd_idle(const struct iface_nd_entry *e, sk_time_ns now)
{
	if (e->state == IFACE_ND_REACHABLE)
		return iface_elapsed(now, e->confirmed) >= IFACE_ND_REACHABLE_NS;
	return !e->ns_sent || iface_elapsed(now, e->ns_at) >= IFACE_ND_QUEUE_NS;
}

/* A new INCOMPLETE entry on `list`; the eviction rules of arp_alloc. */
static unsigned nd_alloc(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *ip,
			 unsigned list)
{
	if (ifc->nd_free == IFACE_ND_NONE) {
		unsigned victim = IFACE_ND_NONE;
		if (ifc->nd_list_len[IFACE_ARP_PROBATION]) {
			victim = ifc->nd[ND_SENTINEL(IFACE_ARP_PROBATION)].prev;
		} else {
			unsigned t = ifc->nd[ND_SENTINEL(IFACE_ARP_ACTIVE)].prev;
			if (list == IFACE_ARP_ACTIVE || nd_idle(&ifc->nd[t], now))
				victim = t;
		}
		if (victim == IFACE_ND_NONE) {
			ifc->counters.nd_learn_refused++;
			return IFACE_ND_NONE;
		}
		nd_remove(ifc, victim);
		ifc->counters.nd_evictions++;
	}
	unsigned i = ifc->nd_free;
	struct iface_nd_entry *e = &ifc->nd[i];
	ifc->nd_free = e->hnext;
	e->ip = *ip;
	sk_memset(e->mac, 0, SK_MAC_LEN);
	e->state = IFACE_ND_INCOMPLETE;
	e->probes = 0;
	e->ns_sent = false;
	e->router = false;
	e->confirmed = 0;
	e->ns_at = 0;
	unsigned b = nd_hash(ifc, ip);
	e->hnext = ifc->nd_bucket[b];
	ifc->nd_bucket[b] = (uint16_t)i;
	lru_push_head(ifc, i, list);
	ifc->nd_used++;
	return i;
}

/* ---- messages out ---- */

/* An NS for target: to its solicited-node group (mac NULL) or unicast to
 * mac; from src, or from :: with our nonce for DAD (src NULL). */
static bool nd_send_ns(struct iface *ifc, const struct ipv6_addr *target, const uint8_t *mac,
		       const struct ipv6_addr *src, const uint8_t *nonce)
{
	struct ipv6_addr dst;
	uint8_t gmac[SK_MAC_LEN];
	if (mac) {
		dst = *target;
	} else {
		ipv6_solicited_node(&dst, target);
		ipv6_mcast_mac(gmac, &dst);
		mac = gmac;
	}
	struct iface_ip6_out o;
	const struct ipv6_addr *s = src ? src : &ipv6_unspecified;
	if (iface_ip6_begin_mac(ifc, mac, s, &dst, ND_NS_LEN + ND_OPT_LLA_LEN + 8, &o) != 0)
		return false;
	/* RFC 4861 4.3: no source link-layer option from ::. */
	size_t n = nd_emit_ns(o.l4, o.cap, target, src ? ifc->mac : NULL, nonce, s, &dst);
	if (n == 0)
		return false;
	o.hop_limit = ND_HOP_LIMIT;
	iface_ip6_finish(ifc, 0, &o, IPV6_NH_ICMPV6, n);
	return true;
}

static bool nd_send_na(struct iface *ifc, const uint8_t mac[SK_MAC_LEN], const struct ipv6_addr *dst,
		       const struct ipv6_addr *target, uint8_t flags)
{
	struct iface_ip6_out o;
	if (iface_ip6_begin_mac(ifc, mac, target, dst, ND_NA_LEN + ND_OPT_LLA_LEN, &o) != 0)
		return false;
	size_t n = nd_emit_na(o.l4, o.cap, target, flags, ifc->mac, target, dst);
	if (n == 0)
		return false;
	o.hop_limit = ND_HOP_LIMIT;
	iface_ip6_finish(ifc, 0, &o, IPV6_NH_ICMPV6, n);
	ifc->counters.nd_na_tx++;
	return true;
}

/* Our source for an NS about target: the one output to it would use, else
 * the link-local address if usable. */
static bool nd_ns_source(const struct iface *ifc, const struct ipv6_addr *target,
			 struct ipv6_addr *src)
{
	if (iface_ip6_source(ifc, target, src))
		return true;
	if (ifc->naddr6 && ifc->addr6[0].state == IFACE_ADDR6_PREFERRED) {
		*src = ifc->addr6[0].a;
		return true;
	}
	return false;
}

/* Solicit entry i: multicast while INCOMPLETE, unicast probe while STALE;
 * at most one NS per RetransTimer (the attempt counts even if the ring was
 * full, as for ARP). */
static void nd_solicit_entry(struct iface *ifc, sk_time_ns now, unsigned i, bool count_limited)
{
	struct iface_nd_entry *e = &ifc->nd[i];
	if (e->ns_sent && iface_elapsed(now, e->ns_at) < IFACE_ND_RETRANS_NS) {
		if (count_limited)
			ifc->counters.nd_ns_ratelimited++;
		return;
	}
	struct ipv6_addr src;
	if (!nd_ns_source(ifc, &e->ip, &src))
		return;
	e->ns_sent = true;
	e->ns_at = now;
	bool unicast = e->state == IFACE_ND_STALE;
	if (unicast)
		e->probes++;
	if (nd_send_ns(ifc, &e->ip, unicast ? e->mac : NULL, &src, NULL))
		ifc->counters.nd_ns_tx++;
}

static void nd_solicit(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *ip,
		       bool count_limited)
{
	unsigned i = iface_nd_find(ifc, ip);
	if (i == IFACE_ND_NONE)
		i = nd_alloc(ifc, now, ip, IFACE_ARP_ACTIVE); /* never fails for ACTIVE */
	else
		nd_touch(ifc, i, IFACE_ARP_ACTIVE);
	if (i != IFACE_ND_NONE)
		nd_solicit_entry(ifc, now, i, count_limited);
}

bool iface_nd_lookup(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *ip,
		     uint8_t mac[SK_MAC_LEN])
{
	unsigned i = iface_nd_find(ifc, ip);
	if (i == IFACE_ND_NONE)
		return false;
	struct iface_nd_entry *e = &ifc->nd[i];
	nd_touch(ifc, i, IFACE_ARP_ACTIVE);
	if (e->state == IFACE_ND_INCOMPLETE)
		return false;
	if (e->state == IFACE_ND_REACHABLE &&
	    iface_elapsed(now, e->confirmed) >= IFACE_ND_REACHABLE_NS) {
		e->state = IFACE_ND_STALE; /* RFC 4861 7.3.3 */
		e->probes = 0;
		e->ns_sent = false;
	}
	if (e->state == IFACE_ND_STALE) {
		if (e->probes >= IFACE_ND_MAX_PROBES &&
		    iface_elapsed(now, e->ns_at) >= IFACE_ND_RETRANS_NS) {
			/* Probes went unanswered: the peer is gone or moved. */
			e->state = IFACE_ND_INCOMPLETE;
			e->probes = 0;
			e->ns_sent = false;
			ifc->counters.nd_expired++;
			return false;
		}
		if (!e->ns_sent) {
			/* DELAY: the first probe in IFACE_ND_DELAY_NS, by
			 * dating a virtual NS so that the rate limit holds it. */
			e->ns_sent = true;
			e->ns_at = now + IFACE_ND_DELAY_NS - IFACE_ND_RETRANS_NS;
		} else {
			/* PROBE: keep sending on the old address while we ask. */
			nd_solicit_entry(ifc, now, i, false);
		}
	}
	sk_memcpy(mac, e->mac, SK_MAC_LEN);
	return true;
}

/* ---- the queue ---- */

void iface_nd_update_deadline(struct iface *ifc, sk_time_ns now)
{
	sk_time_ns d = ifc->mld_due ? now : lifetimes_deadline(ifc);
	if (ifc->rs_left && !ifc->ra_seen)
		d = SK_MIN(d, ifc->rs_at);
	for (unsigned a = 0; a < ifc->naddr6; a++)
		if (ifc->addr6[a].state == IFACE_ADDR6_TENTATIVE)
			d = SK_MIN(d, ifc->addr6[a].dad_at);
	for (unsigned q = 0; q < IFACE_ND_PENDING && ifc->npending6; q++) {
		const struct iface_pending6 *p = &ifc->pending6[q];
		if (!p->used)
			continue;
		d = SK_MIN(d, p->expire);
		unsigned i = iface_nd_find(ifc, &p->nexthop);
		if (i != IFACE_ND_NONE && ifc->nd[i].ns_sent)
			d = SK_MIN(d, ifc->nd[i].ns_at + IFACE_ND_RETRANS_NS);
		else
			d = SK_MIN(d, now + IFACE_ND_RETRANS_NS);
	}
	ifc->nd_deadline = d;
}

static void pending6_free(struct iface *ifc, struct iface_pending6 *p)
{
	p->used = false;
	ifc->npending6--;
}

static void nd_flush(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *ip,
		     const uint8_t mac[SK_MAC_LEN])
{
	if (ifc->npending6 == 0)
		return;
	bool any = false;
	for (;;) {
		struct iface_pending6 *oldest = NULL;
		for (unsigned q = 0; q < IFACE_ND_PENDING; q++) {
			struct iface_pending6 *p = &ifc->pending6[q];
			if (p->used && ipv6_addr_eq(&p->nexthop, ip) &&
			    (!oldest || (int32_t)(p->seq - oldest->seq) < 0))
				oldest = p;
		}
		if (!oldest)
			break;
		any = true;
		size_t cap;
		uint8_t *f = iface_tx_begin(ifc, &cap);
		if (f && cap >= ETH_HLEN + (size_t)oldest->len) {
			eth_emit(f, cap, mac, ifc->mac, ETH_TYPE_IPV6);
			sk_memcpy(f + ETH_HLEN, oldest->data, oldest->len);
			iface_tx_commit(ifc, f, ETH_HLEN + (size_t)oldest->len);
			ifc->counters.nd_queue_sent++;
		} else if (f) {
			ifc->counters.ip6_too_big++;
		}
		pending6_free(ifc, oldest);
	}
	if (any)
		iface_nd_update_deadline(ifc, now);
}

int iface_nd_queue_slot(struct iface *ifc)
{
	if (ifc->npending6 < IFACE_ND_PENDING)
		for (unsigned q = 0; q < IFACE_ND_PENDING; q++)
			if (!ifc->pending6[q].used)
				return (int)q;
	ifc->counters.nd_queue_full++;
	return -1;
}

void iface_nd_queue_commit(struct iface *ifc, sk_time_ns now, unsigned q,
			   const struct ipv6_addr *nexthop, size_t len)
{
	struct iface_pending6 *p = &ifc->pending6[q];
	p->used = true;
	p->len = (uint16_t)len;
	p->nexthop = *nexthop;
	p->expire = now + IFACE_ND_QUEUE_NS;
	p->seq = ifc->pending6_seq++;
	ifc->npending6++;
	ifc->counters.nd_queued++;
	nd_solicit(ifc, now, nexthop, true);
	iface_nd_update_deadline(ifc, now);
}

/* ---- DAD ---- */

static void dad_verdict(struct iface *ifc, sk_time_ns now, unsigned a, bool dup)
{
	struct iface_addr6 *x = &ifc->addr6[a];
	x->state = dup ? IFACE_ADDR6_DUPLICATE : IFACE_ADDR6_PREFERRED;
	if (dup)
		ifc->counters.nd_dad_duplicate++;
	else
		ifc->counters.nd_dad_ok++;
	/* SLAAC: ask for routers once we can speak (RFC 4861 6.3.7, from
	 * the link-local address, so the RA can come back unicast or not). */
	if (!dup && a == 0 && ifc->slaac && !ifc->ra_seen) {
		ifc->rs_left = IFACE_RS_MAX;
		ifc->rs_at = now;
	}
	if (ifc->dad_fn)
		ifc->dad_fn(ifc->dad_ctx, ifc, &x->a, dup);
}

static void dad_poll(struct iface *ifc, sk_time_ns now)
{
	for (unsigned a = 0; a < ifc->naddr6; a++) {
		struct iface_addr6 *x = &ifc->addr6[a];
		if (x->state != IFACE_ADDR6_TENTATIVE || now < x->dad_at)
			continue;
		if (x->dad_sent < IFACE_DAD_TRANSMITS) {
			x->dad_sent++;
			x->dad_at = now + IFACE_ND_RETRANS_NS;
			if (nd_send_ns(ifc, &x->a, NULL, NULL, x->nonce))
				ifc->counters.nd_dad_ns_tx++;
		} else {
			dad_verdict(ifc, now, a, false);
		}
	}
}

static void nd_send_rs(struct iface *ifc, sk_time_ns now)
{
	ifc->rs_left--;
	ifc->rs_at = now + IFACE_RS_INTERVAL_NS;
	uint8_t mac[SK_MAC_LEN];
	ipv6_mcast_mac(mac, &ipv6_all_routers);
	struct iface_ip6_out o;
	if (iface_ip6_begin_mac(ifc, mac, &ifc->addr6[0].a, &ipv6_all_routers,
				ND_RS_LEN + ND_OPT_LLA_LEN, &o) != 0)
		return;
	size_t n = nd_emit_rs(o.l4, o.cap, ifc->mac, &o.src, &o.dst);
	if (n == 0)
		return;
	o.hop_limit = ND_HOP_LIMIT;
	iface_ip6_finish(ifc, now, &o, IPV6_NH_ICMPV6, n);
	ifc->counters.nd_rs_tx++;
}

void iface_set_dad_handler(struct iface *ifc, iface_dad_fn fn, void *ctx)
{
	ifc->dad_fn = fn;
	ifc->dad_ctx = ctx;
}

void iface_nd_poll(struct iface *ifc, sk_time_ns now)
{
	if (!ifc->ip6)
		return;
	if (ifc->mld_due) {
		ifc->mld_due = false;
		iface_mld_report(ifc, now);
	}
	dad_poll(ifc, now);
	lifetimes_poll(ifc, now);
	if (ifc->rs_left && !ifc->ra_seen && now >= ifc->rs_at)
		nd_send_rs(ifc, now);
	for (unsigned q = 0; q < IFACE_ND_PENDING && ifc->npending6; q++) {
		struct iface_pending6 *p = &ifc->pending6[q];
		if (!p->used)
			continue;
		if (now >= p->expire) {
			pending6_free(ifc, p);
			ifc->counters.nd_queue_timeout++;
			continue;
		}
		unsigned i = iface_nd_find(ifc, &p->nexthop);
		if (i != IFACE_ND_NONE && ifc->nd[i].state != IFACE_ND_INCOMPLETE) {
			nd_flush(ifc, now, &p->nexthop, ifc->nd[i].mac);
			continue;
		}
		nd_solicit(ifc, now, &p->nexthop, false);
	}
	iface_nd_update_deadline(ifc, now);
}

/* ---- messages in ---- */

/* Learn (ip, mac) as STALE from an NS or RA (RFC 4861 7.2.3, 6.3.4):
 * a changed address goes STALE, a new entry starts on probation. */
static void nd_learn_stale(struct iface *ifc, sk_time_ns now, const struct ipv6_addr *ip,
			   const uint8_t mac[SK_MAC_LEN])
{
	unsigned i = iface_nd_find(ifc, ip);
	if (i == IFACE_ND_NONE) {
		i = nd_alloc(ifc, now, ip, IFACE_ARP_PROBATION);
		if (i == IFACE_ND_NONE)
			return;
		ifc->counters.nd_learned++;
	} else {
		nd_touch(ifc, i, ifc->nd[i].list);
		ifc->counters.nd_updated++;
		if (ifc->nd[i].state != IFACE_ND_INCOMPLETE && iface_mac_eq(ifc->nd[i].mac, mac))
			return; /* nothing new */
	}
	struct iface_nd_entry *e = &ifc->nd[i];
	sk_memcpy(e->mac, mac, SK_MAC_LEN);
	e->state = IFACE_ND_STALE;
	e->probes = 0;
	e->ns_sent = false;
	nd_flush(ifc, now, ip, e->mac);
}

static void nd_ns_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
			const struct ipv6_hdr *h, const struct nd_msg *m)
{
	struct iface_counters *c = &ifc->counters;
	c->nd_ns_rx++;
	int a = iface_addr6_find(ifc, &m->target);
	if (a < 0 || ifc->addr6[a].state == IFACE_ADDR6_DUPLICATE) {
		c->nd_not_for_us++;
		return;
	}
	struct iface_addr6 *x = &ifc->addr6[a];
	bool from_unspec = ipv6_is_unspecified(&h->src);
	if (x->state == IFACE_ADDR6_TENTATIVE) {
		/* RFC 4862 5.4.3: only another node's DAD probe says anything;
		 * an NS from a node that has an address is not answered. */
		if (!from_unspec)
			return;
		if (m->opts.has_nonce && sk_memcmp(m->opts.nonce, x->nonce, ND_NONCE_LEN) == 0) {
			c->nd_dad_looped++;
			return;
		}
		dad_verdict(ifc, now, (unsigned)a, true);
		return;
	}
	if (from_unspec) {
		/* Someone probes our address: defend it to all nodes (7.2.4). */
		uint8_t gmac[SK_MAC_LEN];
		ipv6_mcast_mac(gmac, &ipv6_all_nodes);
		if (nd_send_na(ifc, gmac, &ipv6_all_nodes, &x->a, ND_NA_OVERRIDE))
			c->nd_dad_defended++;
		return;
	}
	if (m->opts.has_slla)
		nd_learn_stale(ifc, now, &h->src, m->opts.slla);
	/* The answer goes where the solicitation says; a unicast NUD probe
	 * may carry no link-layer option, then the cache or the frame tells. */
	uint8_t mac[SK_MAC_LEN];
	unsigned i;
	if (m->opts.has_slla)
		sk_memcpy(mac, m->opts.slla, SK_MAC_LEN);
	else if ((i = iface_nd_find(ifc, &h->src)) != IFACE_ND_NONE &&
		 ifc->nd[i].state != IFACE_ND_INCOMPLETE)
		sk_memcpy(mac, ifc->nd[i].mac, SK_MAC_LEN);
	else
		sk_memcpy(mac, eh->src, SK_MAC_LEN);
	nd_send_na(ifc, mac, &h->src, &x->a, ND_NA_SOLICITED | ND_NA_OVERRIDE);
}

static void nd_na_input(struct iface *ifc, sk_time_ns now, const struct nd_msg *m)
{
	struct iface_counters *c = &ifc->counters;
	c->nd_na_rx++;
	int a = iface_addr6_find(ifc, &m->target);
	if (a >= 0) {
		/* Another node holds one of our addresses. */
		if (ifc->addr6[a].state == IFACE_ADDR6_TENTATIVE)
			dad_verdict(ifc, now, (unsigned)a, true);
		else
			c->nd_conflict++;
		return;
	}
	unsigned i = iface_nd_find(ifc, &m->target);
	if (i == IFACE_ND_NONE) {
		c->nd_na_no_entry++;
		return;
	}
	struct iface_nd_entry *e = &ifc->nd[i];
	bool solicited = m->na_flags & ND_NA_SOLICITED, override = m->na_flags & ND_NA_OVERRIDE;
	e->router = m->na_flags & ND_NA_ROUTER;
	if (e->state == IFACE_ND_INCOMPLETE) {
		/* 7.2.5: without the address an NA cannot complete an entry. */
		if (!m->opts.has_tlla) {
			c->nd_na_ignored++;
			return;
		}
		sk_memcpy(e->mac, m->opts.tlla, SK_MAC_LEN);
		e->state = solicited ? IFACE_ND_REACHABLE : IFACE_ND_STALE;
	} else {
		bool changed = m->opts.has_tlla && !iface_mac_eq(e->mac, m->opts.tlla);
		if (changed && !override) {
			/* 7.2.5: keep the address we have, but doubt it. */
			if (e->state == IFACE_ND_REACHABLE)
				e->state = IFACE_ND_STALE;
			c->nd_na_ignored++;
			return;
		}
		if (changed)
			sk_memcpy(e->mac, m->opts.tlla, SK_MAC_LEN);
		if (solicited)
			e->state = IFACE_ND_REACHABLE;
		else if (changed)
			e->state = IFACE_ND_STALE;
	}
	e->confirmed = now;
	e->probes = 0;
	e->ns_sent = e->state == IFACE_ND_STALE ? false : e->ns_sent;
	c->nd_updated++;
	nd_flush(ifc, now, &m->target, e->mac);
}

/* ---- lifetimes (RFC 4862 5.5.3 e, 5.5.4; RFC 4861 6.3.4) ---- */

#define ND_LIFETIME_FOREVER 0xffffffffu
#define ND_TWO_HOURS_NS (7200ull * SK_NS_PER_S)

static sk_time_ns nd_until(sk_time_ns now, uint32_t secs)
{
	return secs == ND_LIFETIME_FOREVER ? SK_TIME_NEVER : now + (sk_time_ns)secs * SK_NS_PER_S;
}

/* An RA for a prefix we formed an address from.  The preferred lifetime
 * is taken as it comes.  The valid one may grow at any time, but may only
 * shrink to two hours at the least: an unauthenticated RA cannot take an
 * address away sooner (the "two-hour rule"), so a forged RA with lifetime
 * 0 does not cut a host off. */
static void slaac_renew(struct iface *ifc, sk_time_ns now, struct iface_addr6 *x,
			const struct nd_prefix *p)
{
	sk_time_ns vu = nd_until(now, p->valid);
	sk_time_ns left = x->valid_until > now ? x->valid_until - now : 0;
	if (p->valid > 7200 || vu > x->valid_until)
		x->valid_until = vu;
	else if (left > ND_TWO_HOURS_NS)
		x->valid_until = now + ND_TWO_HOURS_NS;
	/* else: two hours or less left, and kept as they are */
	x->preferred_until = SK_MIN(nd_until(now, p->preferred), x->valid_until);
	if (x->deprecated && now < x->preferred_until)
		x->deprecated = false;
	ifc->counters.nd_slaac_refreshed++;
}

/* Deprecate, remove and forget what has run out. */
static void lifetimes_poll(struct iface *ifc, sk_time_ns now)
{
	for (unsigned a = 1; a < ifc->naddr6;) {
		struct iface_addr6 *x = &ifc->addr6[a];
		if (now >= x->valid_until) {
			iface_ip6_addr_remove(ifc, now, a);
			ifc->counters.nd_slaac_expired++;
			continue;
		}
		if (!x->deprecated && now >= x->preferred_until) {
			x->deprecated = true;
			ifc->counters.nd_slaac_deprecated++;
		}
		a++;
	}
	if (ifc->gw6_from_ra && now >= ifc->gw6_until) {
		ifc->gw6 = ipv6_unspecified;
		ifc->gw6_from_ra = false;
		ifc->counters.nd_router_expired++;
	}
}

static sk_time_ns lifetimes_deadline(const struct iface *ifc)
{
	sk_time_ns d = ifc->gw6_from_ra ? ifc->gw6_until : SK_TIME_NEVER;
	for (unsigned a = 1; a < ifc->naddr6; a++) {
		const struct iface_addr6 *x = &ifc->addr6[a];
		d = SK_MIN(d, x->deprecated ? x->valid_until : x->preferred_until);
	}
	return d;
}

static void nd_ra_input(struct iface *ifc, sk_time_ns now, const struct ipv6_hdr *h,
			const struct nd_msg *m)
{
	ifc->counters.nd_ra_rx++;
	ifc->ra_seen = true;
	if (m->opts.has_slla)
		nd_learn_stale(ifc, now, &h->src, m->opts.slla);
	/* SLAAC (RFC 4862 5.5.3): an autonomous /64 with a valid lifetime
	 * gives the address prefix + our interface identifier, tentative
	 * until DAD passes.  A prefix of another length cannot take a 64-bit
	 * identifier, the link-local prefix is ours already (b), and a
	 * preferred lifetime over the valid one is a bad option (c): skipped.
	 * An address formed before has its lifetimes renewed (e).  Prefixes
	 * without the A flag are not kept on-link. */
	for (unsigned p = 0; ifc->slaac && p < m->opts.nprefix; p++) {
		const struct nd_prefix *x = &m->opts.prefix[p];
		if (!x->autonomous || x->len != 64 || ipv6_is_link_local(&x->prefix) ||
		    x->preferred > x->valid)
			continue;
		struct ipv6_addr a = x->prefix;
		ipv6_iid_from_mac(a.b + 8, ifc->mac);
		int i = iface_addr6_find(ifc, &a);
		if (i >= 0) {
			if (ifc->addr6[i].slaac)
				slaac_renew(ifc, now, &ifc->addr6[i], x);
			continue;
		}
		if (x->valid == 0)
			continue;
		if (!iface_ip6_addr_add(ifc, &a, x->onlink ? 64 : 128, now)) {
			ifc->counters.nd_slaac_full++;
			continue;
		}
		struct iface_addr6 *n = &ifc->addr6[ifc->naddr6 - 1];
		n->slaac = true;
		n->valid_until = nd_until(now, x->valid);
		n->preferred_until = nd_until(now, x->preferred);
		ifc->counters.nd_slaac_addrs++;
	}
	/* A default router (RFC 4861 6.3.4) when none was configured, for as
	 * long as its lifetime says; every RA from it renews that, and lifetime
	 * 0 ends it at once. */
	if (m->router_lifetime && ipv6_is_unspecified(&ifc->gw6)) {
		ifc->gw6 = h->src;
		ifc->gw6_from_ra = true;
		ifc->counters.nd_router_learned++;
	}
	if (ifc->gw6_from_ra && ipv6_addr_eq(&ifc->gw6, &h->src)) {
		if (m->router_lifetime) {
			ifc->gw6_until = now + (sk_time_ns)m->router_lifetime * SK_NS_PER_S;
		} else {
			ifc->gw6 = ipv6_unspecified;
			ifc->gw6_from_ra = false;
		}
	}
}

void iface_nd_input(struct iface *ifc, sk_time_ns now, const struct eth_hdr *eh,
		    const struct ipv6_hdr *h, const uint8_t *msg, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	struct nd_msg m;
	int rc = nd_parse(msg, len, h, &m);
	switch (rc) {
	case WIRE_OK: break;
	case WIRE_EHOPLIMIT: c->nd_hop_limit++; return;
	case WIRE_ECODE: c->nd_bad_code++; return;
	case WIRE_EOPT:
	case WIRE_ELIMIT: c->nd_bad_opt++; return;
	case WIRE_EBADADDR: c->nd_bad_addr++; return;
	default: c->nd_truncated++; return;
	}
	switch (m.type) {
	case ND_NS: nd_ns_input(ifc, now, eh, h, &m); break;
	case ND_NA: nd_na_input(ifc, now, &m); break;
	case ND_RA: nd_ra_input(ifc, now, h, &m); break;
	default: c->nd_other++; break;
	}
	iface_nd_update_deadline(ifc, now);
}
