/* iface.c — interface setup, the rx ring walk, Ethernet demux, tx slots,
 * timers and counters.
 *
 *   iface_rx -> iface_input -> iface_arp_input | iface_ip_input | iface_ip6_input
 *   output: iface_ip_begin -> iface_tx_begin ... iface_tx_commit
 */
#include "iface_priv.h"

/* splitmix64: spreads one seed into independent-looking keys. */
static uint64_t mix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t prefix_mask(uint8_t prefix_len)
{
	if (prefix_len == 0)
		return 0; /* a shift by 32 would be undefined */
	if (prefix_len >= 32)
		return ~0u;
	return ~0u << (32 - prefix_len);
}

bool iface_ip_martian(const struct iface *ifc, uint32_t a)
{
	return a == 0 || a == 0xffffffffu || (a >> 24) == 127 || (a >> 28) == 0xe ||
	       (ifc->bcast != 0 && a == ifc->bcast);
}

void iface_init(struct iface *ifc, struct dev *dev, const struct iface_config *cfg,
		sk_time_ns now)
{
	sk_memset(ifc, 0, sizeof(*ifc));
	ifc->dev = dev;

	static const uint8_t zero_mac[SK_MAC_LEN];
	/* The config names the MAC; a config without one uses the device's. */
	sk_memcpy(ifc->mac, iface_mac_eq(cfg->mac, zero_mac) ? dev->mac : cfg->mac, SK_MAC_LEN);
	ifc->ip = cfg->ip;
	ifc->mask = prefix_mask(cfg->prefix_len);
	ifc->gw = cfg->gw;
	ifc->glean = cfg->glean;
	ifc->board = cfg->board;
	/* /31 (RFC 3021) and /32 have no broadcast address. */
	ifc->bcast = cfg->prefix_len <= 30 ? (cfg->ip | ~ifc->mask) : 0;

	uint32_t mtu = cfg->mtu ? cfg->mtu : dev->mtu;
	if (mtu == 0 || mtu > IFACE_MAX_MTU)
		mtu = IFACE_MAX_MTU;
	/* A frame must fit in one tx buffer; the queue buffers hold IFACE_MAX_MTU. */
	if (dev->tx && dev->tx->buf_size < ETH_HLEN + mtu)
		mtu = dev->tx->buf_size > ETH_HLEN ? dev->tx->buf_size - ETH_HLEN : 0;
	ifc->mtu = (uint16_t)mtu;

	uint64_t st = cfg->seed;
	ifc->hash_k1 = mix64(&st);
	ifc->hash_k2 = mix64(&st) | 1;
	ifc->ip_id = (uint16_t)mix64(&st);

	ifc->deadline = SK_TIME_NEVER;
	ifc->icmp_credit_ns = (uint64_t)IFACE_ICMP_BURST * (SK_NS_PER_S / IFACE_ICMP_RATE);
	ifc->icmp_last = now;
	iface_arp_init(ifc);
	iface_ip6_init(ifc, cfg, now);
}

void iface_input(struct iface *ifc, sk_time_ns now, const uint8_t *frame, size_t len)
{
	struct iface_counters *c = &ifc->counters;
	struct eth_hdr eh;
	c->rx_frames++;
	int rc = eth_parse(frame, len, &eh);
	if (rc != WIRE_OK) {
		if (rc == WIRE_EUNSUP)
			c->eth_unsupported++;
		else
			c->eth_bad_len++;
		return;
	}
	if (!iface_mac_eq(eh.dst, ifc->mac)) {
		if (eth_is_broadcast(eh.dst)) {
			/* accepted */
		} else if (eth_is_multicast(eh.dst)) {
			/* The IPv6 groups we joined (all-nodes, solicited-node). */
			if (eh.type != ETH_TYPE_IPV6 || !iface_ip6_mac_joined(ifc, eh.dst)) {
				c->eth_multicast++;
				return;
			}
		} else {
			c->eth_not_for_us++;
			return;
		}
	}
	/* Our own MAC as source means a loop or a clone; a group source is invalid. */
	if (eth_is_multicast(eh.src) || iface_mac_eq(eh.src, ifc->mac)) {
		c->eth_bad_src++;
		return;
	}
	if (eh.has_vlan) {
		c->eth_vlan++;
		return;
	}
	const uint8_t *payload = frame + eh.hlen;
	size_t plen = len - eh.hlen;
	switch (eh.type) {
	case ETH_TYPE_ARP:
		iface_arp_input(ifc, now, payload, plen);
		break;
	case ETH_TYPE_IPV4:
		iface_ip_input(ifc, now, &eh, payload, plen);
		break;
	case ETH_TYPE_IPV6:
		iface_ip6_input(ifc, now, &eh, payload, plen);
		break;
	default:
		c->eth_unknown_type++;
		break;
	}
}

unsigned iface_rx(struct iface *ifc, sk_time_ns now)
{
	struct ring *rx = ifc->dev->rx;
	uint32_t head = rx->head;
	uint32_t tail = ring_load(&rx->tail);
	/* A device that claims more than a ring's worth is broken; never walk
	 * slots twice in one call. */
	if (tail - head > rx->num_slots)
		tail = head + rx->num_slots;
	unsigned n = 0;
	for (; head != tail; head++, n++) {
		struct ring_slot *s = ring_slot(rx, head);
		/* Read the slot once: the device side may share this memory,
		 * and what we checked must be what we use. */
		uint32_t idx = __atomic_load_n(&s->buf_idx, __ATOMIC_RELAXED);
		uint32_t len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
		uint16_t fl = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
		if (idx >= rx->nbufs || len > rx->buf_size) {
			ifc->counters.dev_bad_slot++;
			continue;
		}
		/* Only the device's own kernel or host sets CSUM_OK (ring.h), and
		 * only on a device that says it may. */
		ifc->rx_csum_ok = (fl & RING_SLOT_CSUM_OK) && (ifc->dev->offload & DEV_OFF_RX_CSUM);
		if (ifc->rx_csum_ok)
			ifc->counters.rx_csum_ok++;
		iface_input(ifc, now, ring_buf(rx, idx), len);
	}
	ifc->rx_csum_ok = false;
	ring_store(&rx->head, head);
	return n;
}

uint8_t *iface_tx_begin_n(struct iface *ifc, uint32_t n)
{
	struct ring *tx = ifc->dev->tx;
	if (n == 0 || n > tx->num_slots) {
		ifc->counters.dev_bad_slot++;
		return NULL;
	}
	if (ring_avail(tx) < n) {
		ifc->counters.tx_full_syncs++;
		dev_tx_sync(ifc->dev);
		if (ring_avail(tx) < n) {
			ifc->counters.tx_ring_full++;
			return NULL;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		if (ring_slot(tx, tx->head + i)->buf_idx >= tx->nbufs) {
			ifc->counters.dev_bad_slot++;
			return NULL;
		}
	}
	if (tx->buf_size < ETH_MIN_FRAME) {
		ifc->counters.dev_bad_slot++;
		return NULL;
	}
	return ring_buf(tx, ring_slot(tx, tx->head)->buf_idx);
}

uint8_t *iface_tx_buf(struct iface *ifc, uint32_t i)
{
	struct ring *tx = ifc->dev->tx;
	return ring_buf(tx, ring_slot(tx, tx->head + i)->buf_idx);
}

uint8_t *iface_tx_begin(struct iface *ifc, size_t *cap)
{
	uint8_t *f = iface_tx_begin_n(ifc, 1);
	if (f)
		*cap = ifc->dev->tx->buf_size;
	return f;
}

void iface_tx_commit(struct iface *ifc, uint8_t *frame, size_t len)
{
	struct ring *tx = ifc->dev->tx;
	if (len < ETH_MIN_FRAME) {
		/* Zero the pad: stale buffer bytes would leak an old frame. */
		sk_memset(frame + len, 0, ETH_MIN_FRAME - len);
		len = ETH_MIN_FRAME;
	}
	struct ring_slot *s = ring_slot(tx, tx->head);
	s->len = (uint16_t)len;
	s->flags = 0; /* a slot may have carried an offload frame's flags */
	ring_store(&tx->head, tx->head + 1);
	ifc->counters.tx_frames++;
}

void iface_tx_commit_vnet(struct iface *ifc, uint32_t n, size_t len)
{
	struct ring *tx = ifc->dev->tx;
	uint32_t head = tx->head;
	for (uint32_t i = 0; i < n; i++) {
		struct ring_slot *s = ring_slot(tx, head + i);
		uint32_t part = (uint32_t)SK_MIN(len, (size_t)tx->buf_size);
		s->len = (uint16_t)part;
		s->flags = (uint16_t)((i == 0 ? RING_SLOT_VNET : 0) | (i + 1 < n ? RING_SLOT_MORE : 0));
		len -= part;
	}
	ring_store(&tx->head, head + n);
	ifc->counters.tx_frames++;
	ifc->counters.tx_vnet_frames++;
	if (n > 1)
		ifc->counters.tx_tso_frames++;
}

void iface_poll(struct iface *ifc, sk_time_ns now)
{
	if (ifc->deadline <= now)
		iface_arp_poll(ifc, now);
	if (ifc->nd_deadline <= now)
		iface_nd_poll(ifc, now);
}

sk_time_ns iface_next_deadline(const struct iface *ifc)
{
	return SK_MIN(ifc->deadline, ifc->nd_deadline);
}

void iface_stats(const struct iface *ifc, iface_stat_fn fn, void *ctx)
{
	const struct iface_counters *c = &ifc->counters;
#define IFACE_COUNTER_EMIT(field, name) fn(ctx, name, c->field);
	IFACE_COUNTERS(IFACE_COUNTER_EMIT)
#undef IFACE_COUNTER_EMIT
	/* gauges */
	fn(ctx, "arp.entries", ifc->arp_used);
	fn(ctx, "arp.pending", ifc->npending);
	fn(ctx, "nd.entries", ifc->nd_used);
	fn(ctx, "nd.pending", ifc->npending6);
	unsigned usable = 0;
	for (unsigned i = 0; i < ifc->naddr6; i++)
		usable += ifc->addr6[i].state == IFACE_ADDR6_PREFERRED;
	fn(ctx, "ip6.addrs_usable", usable);
}

int iface_set_proto_handler(struct iface *ifc, uint8_t proto, iface_proto_fn fn, void *ctx)
{
	/* ICMP and UDP are ours; 0 marks a free slot. */
	if (proto == 0 || proto == IPV4_PROTO_ICMP || proto == IPV4_PROTO_UDP)
		return -1;
	struct iface_proto_handler *slot = NULL;
	for (unsigned i = 0; i < IFACE_MAX_PROTO_HANDLERS; i++) {
		if (ifc->proto[i].proto == proto) {
			slot = &ifc->proto[i];
			break;
		}
		if (!slot && ifc->proto[i].proto == 0)
			slot = &ifc->proto[i];
	}
	if (!slot)
		return -1;
	if (!fn) {
		slot->proto = 0;
		slot->fn = NULL;
		slot->ctx = NULL;
		return 0;
	}
	slot->proto = proto;
	slot->fn = fn;
	slot->ctx = ctx;
	return 0;
}

void iface_set_icmp_error_handler(struct iface *ifc, iface_icmp_error_fn fn, void *ctx)
{
	ifc->icmp_error_fn = fn;
	ifc->icmp_error_ctx = ctx;
}

void iface_set_icmp6_error_handler(struct iface *ifc, iface_icmp6_error_fn fn, void *ctx)
{
	ifc->icmp6_error_fn = fn;
	ifc->icmp6_error_ctx = ctx;
}
