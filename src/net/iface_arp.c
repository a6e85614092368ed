/* iface_arp.c — the ARP cache (RFC 826, RFC 1122 2.3.2), ARP input and
 * output, and the queue of datagrams waiting for a next hop to resolve.
 *
 * Cache: IFACE_ARP_SLOTS entries in a fixed array, found through a hash of
 * the address keyed by the seed (an attacker who does not know the seed
 * cannot aim many addresses at one chain), and ordered on two LRU lists (see
 * enum iface_arp_list).  Lookup is O(1) expected; eviction takes the tail of
 * a list, O(1).  Expiry is lazy: an entry is checked when output uses it, so
 * no timer walks the cache.
 *
 * Queue: IFACE_ARP_PENDING datagrams, copied.  Requests for one address go
 * out at most once per IFACE_ARP_RETRY_NS (from output and from iface_poll),
 * and a datagram is dropped after IFACE_ARP_QUEUE_NS without an answer.
 */
#include "iface_priv.h"

_Static_assert(IFACE_ARP_BUCKETS == 1u << IFACE_ARP_BUCKET_BITS, "bucket bits");
_Static_assert(IFACE_ARP_SLOTS + 2 < IFACE_ARP_NONE, "entry index must fit in uint16_t");

#define ARP_SENTINEL(list) (IFACE_ARP_SLOTS + (list))

static const uint8_t zero_mac[SK_MAC_LEN];

/* Multiply-shift hashing: the top bits of a keyed 64-bit product. */
static unsigned arp_hash(const struct iface *ifc, uint32_t ip)
{
	return (unsigned)((((uint64_t)ip ^ ifc->hash_k1) * ifc->hash_k2) >> (64 - IFACE_ARP_BUCKET_BITS));
}

static void lru_unlink(struct iface *ifc, unsigned i)
{
	struct iface_arp_entry *e = &ifc->arp[i];
	ifc->arp[e->prev].next = e->next;
	ifc->arp[e->next].prev = e->prev;
	ifc->arp_list_len[e->list]--;
}

static void lru_push_head(struct iface *ifc, unsigned i, unsigned list)
{
	struct iface_arp_entry *e = &ifc->arp[i];
	struct iface_arp_entry *s = &ifc->arp[ARP_SENTINEL(list)];
	e->list = (uint8_t)list;
	e->prev = (uint16_t)ARP_SENTINEL(list);
	e->next = s->next;
	ifc->arp[s->next].prev = (uint16_t)i;
	s->next = (uint16_t)i;
	ifc->arp_list_len[list]++;
}

/* Most recently used, and (if asked) promoted to the active list. */
static void arp_touch(struct iface *ifc, unsigned i, unsigned list)
{
	lru_unlink(ifc, i);
	lru_push_head(ifc, i, list);
}

void iface_arp_init(struct iface *ifc)
{
	for (unsigned b = 0; b < IFACE_ARP_BUCKETS; b++)
		ifc->arp_bucket[b] = IFACE_ARP_NONE;
	for (unsigned i = 0; i < IFACE_ARP_SLOTS; i++) {
		ifc->arp[i].state = IFACE_ARP_FREE;
		ifc->arp[i].hnext = (uint16_t)(i + 1 < IFACE_ARP_SLOTS ? i + 1 : IFACE_ARP_NONE);
	}
	ifc->arp_free = 0;
	ifc->arp_used = 0;
	for (unsigned l = 0; l < 2; l++) {
		struct iface_arp_entry *s = &ifc->arp[ARP_SENTINEL(l)];
		s->prev = s->next = (uint16_t)ARP_SENTINEL(l);
		ifc->arp_list_len[l] = 0;
	}
}

unsigned iface_arp_find(const struct iface *ifc, uint32_t ip)
{
	for (unsigned i = ifc->arp_bucket[arp_hash(ifc, ip)]; i != IFACE_ARP_NONE; i = ifc->arp[i].hnext)
		if (ifc->arp[i].ip == ip)
			return i;
	return IFACE_ARP_NONE;
}

static void arp_remove(struct iface *ifc, unsigned i)
{
	struct iface_arp_entry *e = &ifc->arp[i];
	uint16_t *pp = &ifc->arp_bucket[arp_hash(ifc, e->ip)];
	while (*pp != i)
		pp = &ifc->arp[*pp].hnext;
	*pp = e->hnext;
	lru_unlink(ifc, i);
	e->state = IFACE_ARP_FREE;
	e->hnext = ifc->arp_free;
	ifc->arp_free = (uint16_t)i;
	ifc->arp_used--;
}

/* An active entry nobody depends on any more: unconfirmed past its refresh
 * window, or incomplete with no request for as long as a datagram waits. */
static bool arp_idle(const struct iface_arp_entry *e, sk_time_ns now)
{
	if (e->state == IFACE_ARP_REACHABLE)
		return iface_elapsed(now, e->confirmed) >= IFACE_ARP_REACHABLE_NS + IFACE_ARP_REFRESH_NS;
	return !e->req_sent || iface_elapsed(now, e->req_at) >= IFACE_ARP_QUEUE_NS;
}

/* A new INCOMPLETE entry for ip on `list`, evicting if the table is full:
 * the probation tail first; the active tail only for our own traffic or
 * when it is idle.  Returns IFACE_ARP_NONE if unsolicited learning would have
 * to push out an active peer. */
static unsigned arp_alloc(struct iface *ifc, sk_time_ns now, uint32_t ip, unsigned list)
{
	if (ifc->arp_free == IFACE_ARP_NONE) {
		unsigned victim = IFACE_ARP_NONE;
		if (ifc->arp_list_len[IFACE_ARP_PROBATION]) {
			victim = ifc->arp[ARP_SENTINEL(IFACE_ARP_PROBATION)].prev;
		} else {
			unsigned t = ifc->arp[ARP_SENTINEL(IFACE_ARP_ACTIVE)].prev;
			if (list == IFACE_ARP_ACTIVE || arp_idle(&ifc->arp[t], now))
				victim = t;
		}
		if (victim == IFACE_ARP_NONE) {
			ifc->counters.arp_learn_refused++;
			return IFACE_ARP_NONE;
		}
		arp_remove(ifc, victim);
		ifc->counters.arp_evictions++;
	}
	unsigned i = ifc->arp_free;
	struct iface_arp_entry *e = &ifc->arp[i];
	ifc->arp_free = e->hnext;
	e->ip = ip;
	sk_memset(e->mac, 0, SK_MAC_LEN);
	e->state = IFACE_ARP_INCOMPLETE;
	e->req_sent = false;
	e->confirmed = 0;
	e->req_at = 0;
	unsigned b = arp_hash(ifc, ip);
	e->hnext = ifc->arp_bucket[b];
	ifc->arp_bucket[b] = (uint16_t)i;
	lru_push_head(ifc, i, list);
	ifc->arp_used++;
	return i;
}

/* One ARP packet from us (spa = our IP) in a tx slot. */
static bool arp_send(struct iface *ifc, uint16_t op, const uint8_t eth_dst[SK_MAC_LEN],
		     const uint8_t tha[SK_MAC_LEN], uint32_t tpa)
{
	size_t cap;
	uint8_t *f = iface_tx_begin(ifc, &cap);
	if (!f)
		return false;
	struct arp_pkt a = {.op = op, .spa = ifc->ip, .tpa = tpa};
	sk_memcpy(a.sha, ifc->mac, SK_MAC_LEN);
	sk_memcpy(a.tha, tha, SK_MAC_LEN);
	if (eth_emit(f, cap, eth_dst, ifc->mac, ETH_TYPE_ARP) == 0 ||
	    arp_emit(f + ETH_HLEN, cap - ETH_HLEN, &a) == 0)
		return false; /* cap >= ETH_MIN_FRAME was checked: cannot happen */
	iface_tx_commit(ifc, f, ETH_HLEN + ARP_LEN);
	return true;
}

/* Request entry i's address unless one went out less than a second ago.
 * The attempt counts even if the tx ring was full: retrying sooner would
 * break the rate limit, and the next retry comes from the queue timer. */
static void arp_request(struct iface *ifc, sk_time_ns now, unsigned i, bool count_limited)
{
	struct iface_arp_entry *e = &ifc->arp[i];
	if (e->req_sent && iface_elapsed(now, e->req_at) < IFACE_ARP_RETRY_NS) {
		if (count_limited)
			ifc->counters.arp_req_ratelimited++;
		return;
	}
	e->req_sent = true;
	e->req_at = now;
	if (arp_send(ifc, ARP_OP_REQUEST, eth_broadcast, zero_mac, e->ip))
		ifc->counters.arp_requests_tx++;
}

static void arp_solicit(struct iface *ifc, sk_time_ns now, uint32_t ip, bool count_limited)
{
	unsigned i = iface_arp_find(ifc, ip);
	if (i == IFACE_ARP_NONE)
		i = arp_alloc(ifc, now, ip, IFACE_ARP_ACTIVE); /* never fails for ACTIVE */
	else
		arp_touch(ifc, i, IFACE_ARP_ACTIVE); /* datagrams wait on it: keep it */
	if (i != IFACE_ARP_NONE)
		arp_request(ifc, now, i, count_limited);
}

static void arp_flush(struct iface *ifc, sk_time_ns now, uint32_t ip,
		      const uint8_t mac[SK_MAC_LEN]);

/* iface_config.board: tell the other workers what an ARP packet taught
 * us.  Rare: never on a cache hit. */
static void arp_publish(struct iface *ifc, const struct iface_arp_entry *e)
{
	if (ifc->board)
		(void)nbr_board_publish(ifc->board, e->ip, e->mac, e->confirmed);
}

/* A local miss, or a stale entry: take ip from the board if another worker
 * confirmed it more recently than we did (and within the reachable time).
 * The entry goes on the active list (our own traffic needs it) with the
 * board's time, so it expires when the original does; what waited for it
 * is sent.  Returns the entry, or IFACE_ARP_NONE. */
static unsigned arp_from_board(struct iface *ifc, sk_time_ns now, uint32_t ip)
{
	uint8_t mac[SK_MAC_LEN];
	sk_time_ns conf;
	if (!ifc->board || !nbr_board_read(ifc->board, ip, mac, &conf) ||
	    iface_elapsed(now, conf) >= IFACE_ARP_REACHABLE_NS)
		return IFACE_ARP_NONE;
	unsigned i = iface_arp_find(ifc, ip);
	if (i != IFACE_ARP_NONE && ifc->arp[i].state == IFACE_ARP_REACHABLE &&
	    (int64_t)(conf - ifc->arp[i].confirmed) <= 0)
		return IFACE_ARP_NONE; /* ours is as new */
	if (i == IFACE_ARP_NONE)
		i = arp_alloc(ifc, now, ip, IFACE_ARP_ACTIVE); /* never fails for ACTIVE */
	if (i == IFACE_ARP_NONE)
		return IFACE_ARP_NONE;
	struct iface_arp_entry *e = &ifc->arp[i];
	sk_memcpy(e->mac, mac, SK_MAC_LEN);
	e->state = IFACE_ARP_REACHABLE;
	e->confirmed = conf;
	arp_touch(ifc, i, IFACE_ARP_ACTIVE);
	ifc->counters.arp_board_hits++;
	arp_flush(ifc, now, ip, e->mac);
	return i;
}

bool iface_arp_lookup(struct iface *ifc, sk_time_ns now, uint32_t ip, uint8_t mac[SK_MAC_LEN])
{
	unsigned i = iface_arp_find(ifc, ip);
	if (i == IFACE_ARP_NONE || ifc->arp[i].state != IFACE_ARP_REACHABLE) {
		unsigned j = sk_likely(!ifc->board) ? IFACE_ARP_NONE : arp_from_board(ifc, now, ip);
		if (j == IFACE_ARP_NONE) {
			if (i != IFACE_ARP_NONE)
				arp_touch(ifc, i, IFACE_ARP_ACTIVE); /* datagrams wait on it */
			return false;
		}
		i = j;
	}
	struct iface_arp_entry *e = &ifc->arp[i];
	arp_touch(ifc, i, IFACE_ARP_ACTIVE);
	sk_time_ns age = iface_elapsed(now, e->confirmed);
	if (age >= IFACE_ARP_REACHABLE_NS && ifc->board && arp_from_board(ifc, now, ip) == i)
		age = iface_elapsed(now, e->confirmed); /* another worker heard the refresh */
	if (age >= IFACE_ARP_REACHABLE_NS) {
		if (age >= IFACE_ARP_REACHABLE_NS + IFACE_ARP_REFRESH_NS) {
			/* Refreshes went unanswered: the peer may be gone or
			 * have moved; stop using the old MAC. */
			e->state = IFACE_ARP_INCOMPLETE;
			ifc->counters.arp_expired++;
			return false;
		}
		/* Stale but probably right: keep sending while we ask, so a
		 * busy peer sees no gap every minute. */
		arp_request(ifc, now, i, false);
	}
	sk_memcpy(mac, e->mac, SK_MAC_LEN);
	return true;
}

/* Recompute the cached deadline: the min over the queue of its expiry and of
 * its next hop's next allowed request.  At most IFACE_ARP_PENDING lookups. */
static void arp_update_deadline(struct iface *ifc, sk_time_ns now)
{
	sk_time_ns d = SK_TIME_NEVER;
	for (unsigned q = 0; q < IFACE_ARP_PENDING && ifc->npending; q++) {
		const struct iface_pending *p = &ifc->pending[q];
		if (!p->used)
			continue;
		d = SK_MIN(d, p->expire);
		unsigned i = iface_arp_find(ifc, p->nexthop);
		if (i != IFACE_ARP_NONE && ifc->arp[i].req_sent)
			d = SK_MIN(d, ifc->arp[i].req_at + IFACE_ARP_RETRY_NS);
		else /* evicted meanwhile: ask again after the usual interval, never
		      * "now", which would make the loop spin */
			d = SK_MIN(d, now + IFACE_ARP_RETRY_NS);
	}
	/* The answer may reach another worker: look at the board soon. */
	if (ifc->board && ifc->npending)
		d = SK_MIN(d, now + IFACE_ARP_BOARD_POLL_NS);
	ifc->deadline = d;
}

static void pending_free(struct iface *ifc, struct iface_pending *p)
{
	p->used = false;
	ifc->npending--;
}

/* Send every datagram queued for ip, oldest first. */
static void arp_flush(struct iface *ifc, sk_time_ns now, uint32_t ip, const uint8_t mac[SK_MAC_LEN])
{
	if (ifc->npending == 0)
		return;
	bool any = false;
	for (;;) {
		struct iface_pending *oldest = NULL;
		for (unsigned q = 0; q < IFACE_ARP_PENDING; q++) {
			struct iface_pending *p = &ifc->pending[q];
			if (p->used && p->nexthop == ip &&
			    (!oldest || (int32_t)(p->seq - oldest->seq) < 0))
				oldest = p;
		}
		if (!oldest)
			break;
		any = true;
		size_t cap;
		uint8_t *f = iface_tx_begin(ifc, &cap); /* a full ring is counted there */
		if (f && cap >= ETH_HLEN + (size_t)oldest->len) {
			eth_emit(f, cap, mac, ifc->mac, ETH_TYPE_IPV4);
			sk_memcpy(f + ETH_HLEN, oldest->data, oldest->len);
			iface_tx_commit(ifc, f, ETH_HLEN + (size_t)oldest->len);
			ifc->counters.arp_queue_sent++;
		} else if (f) {
			ifc->counters.ip_too_big++; /* tx buffers shrank under us */
		}
		pending_free(ifc, oldest);
	}
	if (any)
		arp_update_deadline(ifc, now);
}

int iface_arp_queue_slot(struct iface *ifc)
{
	if (ifc->npending < IFACE_ARP_PENDING)
		for (unsigned q = 0; q < IFACE_ARP_PENDING; q++)
			if (!ifc->pending[q].used)
				return (int)q;
	ifc->counters.arp_queue_full++;
	return -1;
}

void iface_arp_queue_commit(struct iface *ifc, sk_time_ns now, unsigned q, uint32_t nexthop,
			    size_t len)
{
	struct iface_pending *p = &ifc->pending[q];
	p->used = true;
	p->len = (uint16_t)len;
	p->nexthop = nexthop;
	p->expire = now + IFACE_ARP_QUEUE_NS;
	p->seq = ifc->pending_seq++;
	ifc->npending++;
	ifc->counters.arp_queued++;
	arp_solicit(ifc, now, nexthop, true);
	arp_update_deadline(ifc, now);
}

void iface_arp_poll(struct iface *ifc, sk_time_ns now)
{
	for (unsigned q = 0; q < IFACE_ARP_PENDING && ifc->npending; q++) {
		struct iface_pending *p = &ifc->pending[q];
		if (!p->used)
			continue;
		if (now >= p->expire) {
			pending_free(ifc, p);
			ifc->counters.arp_queue_timeout++;
			continue;
		}
		if (ifc->board && arp_from_board(ifc, now, p->nexthop) != IFACE_ARP_NONE)
			continue; /* another worker heard the answer: sent */
		unsigned i = iface_arp_find(ifc, p->nexthop);
		if (i != IFACE_ARP_NONE && ifc->arp[i].state == IFACE_ARP_REACHABLE) {
			/* Resolved while its flush could not run (cannot happen
			 * today; cheap insurance against a stuck queue). */
			arp_flush(ifc, now, p->nexthop, ifc->arp[i].mac);
			continue;
		}
		arp_solicit(ifc, now, p->nexthop, false);
	}
	arp_update_deadline(ifc, now);
}

/* RFC 826 "merge": refresh what we know of spa; learn a new neighbour only
 * from a packet aimed at us or a gratuitous announcement, into probation. */
static void arp_learn(struct iface *ifc, sk_time_ns now, const struct arp_pkt *a, bool create)
{
	unsigned i = iface_arp_find(ifc, a->spa);
	if (i != IFACE_ARP_NONE) {
		arp_touch(ifc, i, ifc->arp[i].list);
		ifc->counters.arp_updated++;
	} else {
		if (!create)
			return;
		i = arp_alloc(ifc, now, a->spa, IFACE_ARP_PROBATION);
		if (i == IFACE_ARP_NONE)
			return;
		ifc->counters.arp_learned++;
	}
	struct iface_arp_entry *e = &ifc->arp[i];
	sk_memcpy(e->mac, a->sha, SK_MAC_LEN);
	e->state = IFACE_ARP_REACHABLE;
	e->confirmed = now;
	arp_publish(ifc, e);
	/* Datagrams may wait for spa even without an entry (it was evicted). */
	arp_flush(ifc, now, a->spa, e->mac);
}

void iface_arp_glean(struct iface *ifc, sk_time_ns now, uint32_t ip, const uint8_t mac[SK_MAC_LEN])
{
	unsigned i = iface_arp_find(ifc, ip);
	struct iface_arp_entry *e = i != IFACE_ARP_NONE ? &ifc->arp[i] : NULL;
	/* The common case, a known peer: one lookup and a compare. */
	if (e && e->state == IFACE_ARP_REACHABLE && iface_mac_eq(e->mac, mac)) {
		e->confirmed = now;
		return;
	}
	if (iface_mac_eq(mac, zero_mac) || iface_mac_eq(mac, ifc->mac) || (mac[0] & 1))
		return;
	/* New ones go into probation, like unsolicited ARP: a flood of
	 * sources cannot push out the peers in use. */
	if (!e) {
		i = arp_alloc(ifc, now, ip, IFACE_ARP_PROBATION);
		if (i == IFACE_ARP_NONE)
			return;
		e = &ifc->arp[i];
	} else {
		arp_touch(ifc, i, e->list);
	}
	ifc->counters.arp_gleaned++;
	sk_memcpy(e->mac, mac, SK_MAC_LEN);
	e->state = IFACE_ARP_REACHABLE;
	e->confirmed = now;
	/* Not published to the board: a gleaned source teaches every worker
	 * it talks to by its own frames, and a flood of new (spoofed) sources
	 * must not become a stream of writes to memory the workers share. */
	arp_flush(ifc, now, ip, e->mac);
}

void iface_arp_input(struct iface *ifc, sk_time_ns now, const uint8_t *pkt, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	struct arp_pkt a;
	int rc = arp_parse(pkt, len, &a);
	if (rc != WIRE_OK) {
		if (rc == WIRE_EUNSUP)
			c->arp_unsupported++;
		else if (rc == WIRE_EBADADDR)
			c->arp_bad_sender++;
		else
			c->arp_bad++;
		return;
	}
	if (a.op == ARP_OP_REQUEST)
		c->arp_requests_rx++;
	else
		c->arp_replies_rx++;

	if (a.spa == ifc->ip) {
		/* Another station uses our address (our own frames were
		 * dropped by source MAC already).  Not learned, not answered. */
		c->arp_conflict++;
		return;
	}
	/* spa 0 is an RFC 5227 probe: answer it if it asks for us, learn nothing. */
	if ((a.spa != 0 && iface_ip_martian(ifc, a.spa)) || iface_mac_eq(a.sha, zero_mac) ||
	    iface_mac_eq(a.sha, ifc->mac)) {
		c->arp_bad_sender++;
		return;
	}
	bool for_us = a.tpa == ifc->ip;
	bool gratuitous = a.spa != 0 && a.spa == a.tpa;
	if (a.spa != 0)
		arp_learn(ifc, now, &a, for_us || gratuitous);

	if (for_us) {
		if (a.op == ARP_OP_REQUEST &&
		    arp_send(ifc, ARP_OP_REPLY, a.sha, a.sha, a.spa))
			c->arp_replies_tx++;
	} else if (!gratuitous) {
		c->arp_not_for_us++;
	}
}

void iface_announce(struct iface *ifc, sk_time_ns now)
{
	(void)now;
	/* A request for our own address (RFC 5227 announcement): peers with a
	 * stale entry for us update it; the reply to it, if any, is a conflict. */
	if (arp_send(ifc, ARP_OP_REQUEST, eth_broadcast, zero_mac, ifc->ip))
		ifc->counters.arp_requests_tx++;
}
