/* iface_testlib.h — the fake device and the tx ring reader that the iface
 * unit tests share (iface_test.c: IPv4, iface_ip6_test.c: IPv6).
 *
 * The fake device is the test itself: tx_sync does nothing (so a full ring
 * stays full) unless `drain` is set; tx_next() reads the oldest unread tx
 * slot and gives it back to the iface, as a device completing a send would.
 * Include after <cmocka.h>. */
#ifndef NET_IFACE_TESTLIB_H
#define NET_IFACE_TESTLIB_H

#include <stdlib.h>
#include <string.h>

#include "net/iface_priv.h"

#define NSLOTS 64u
#define BUFSZ 2048u
#define T0 (1000 * SK_NS_PER_S)
#define MS SK_NS_PER_MS
#define SEC SK_NS_PER_S

static const uint8_t OUR_MAC[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t PEER_MAC[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t PEER2_MAC[6] = {0x02, 0, 0, 0, 0, 0x03};
static const uint8_t OTHER_MAC[6] = {0x02, 0, 0, 0, 0, 0x99};
static const uint8_t ZERO_MAC[6];
#define OUR_IP SK_IP4(198, 18, 0, 2)
#define PEER_IP SK_IP4(198, 18, 0, 1)
#define PEER2_IP SK_IP4(198, 18, 0, 3)
#define GW_IP SK_IP4(198, 18, 0, 1)
#define SUBNET_BCAST SK_IP4(198, 18, 0, 255)

struct fake {
	struct dev dev; /* first: the ops get a struct dev * */
	void *mem;
	unsigned tx_syncs;
	bool drain;     /* tx_sync gives every handed-over slot back */
	uint32_t seen;  /* next tx slot tx_next() reads */
	struct iface ifc;
	/* what the UDP callbacks saw */
	unsigned udp_calls;
	uint8_t udp_data[2048];
	size_t udp_len;
	unsigned icmp_errors;
	struct icmp_error last_error;
	/* what the echo reply callback saw */
	unsigned replies;
	uint32_t reply_src;
	uint16_t reply_id, reply_seq;
	uint8_t reply_data[2048];
	size_t reply_len;
};

__attribute__((unused)) static int fake_rx_sync(struct dev *d)
{
	(void)d;
	return 0;
}

__attribute__((unused)) static int fake_tx_sync(struct dev *d)
{
	struct fake *f = (struct fake *)d;
	f->tx_syncs++;
	if (f->drain) {
		struct ring *tx = d->tx;
		int n = (int)(tx->head - f->seen);
		f->seen = tx->head;
		ring_store(&tx->tail, tx->head + tx->num_slots);
		return n;
	}
	return 0;
}

__attribute__((unused)) static int fake_poll_fd(struct dev *d)
{
	(void)d;
	return -1;
}

__attribute__((unused)) static void fake_close(struct dev *d)
{
	(void)d;
}

static const struct dev_ops fake_ops = {
	.kind = "fake",
	.rx_sync = fake_rx_sync,
	.tx_sync = fake_tx_sync,
	.poll_fd = fake_poll_fd,
	.close = fake_close,
};

/* A fake device with an iface of cfg (mac, ip, prefix and seed filled in
 * unless cfg sets them). */
__attribute__((unused)) static struct fake *fake_new_cfg(const struct iface_config *in)
{
	struct fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	size_t size = ring_region_size(NSLOTS, BUFSZ, 0);
	assert_true(size > 0);
	size = (size + 63) & ~(size_t)63;
	f->mem = aligned_alloc(64, size);
	assert_non_null(f->mem);
	assert_int_equal(ring_region_init(f->mem, size, NSLOTS, BUFSZ, 0), 0);
	f->dev.ops = &fake_ops;
	f->dev.rx = ring_region_rx(f->mem);
	f->dev.tx = ring_region_tx(f->mem);
	f->dev.mtu = 1500;
	strcpy(f->dev.name, "fake");
	struct iface_config cfg = *in;
	if (!cfg.ip) {
		cfg.ip = OUR_IP;
		cfg.prefix_len = 24;
	}
	if (!cfg.seed)
		cfg.seed = 42;
	memcpy(cfg.mac, OUR_MAC, 6);
	iface_init(&f->ifc, &f->dev, &cfg, T0);
	return f;
}

__attribute__((unused)) static struct fake *fake_new(uint32_t gw)
{
	struct iface_config cfg = {.gw = gw};
	return fake_new_cfg(&cfg);
}

__attribute__((unused)) static int setup(void **state)
{
	*state = fake_new(GW_IP);
	return 0;
}

__attribute__((unused)) static int teardown(void **state)
{
	struct fake *f = *state;
	free(f->mem);
	free(f);
	return 0;
}

/* The next frame the iface sent, or NULL; its slot goes back to the iface. */
__attribute__((unused)) static const uint8_t *tx_next(struct fake *f, size_t *len)
{
	struct ring *tx = f->dev.tx;
	if (f->seen == tx->head)
		return NULL;
	struct ring_slot *s = ring_slot(tx, f->seen);
	*len = s->len;
	f->seen++;
	ring_store(&tx->tail, f->seen + tx->num_slots);
	return ring_buf(tx, s->buf_idx);
}

__attribute__((unused)) static unsigned tx_count(struct fake *f)
{
	return f->dev.tx->head - f->seen;
}

__attribute__((unused)) static void tx_skip_all(struct fake *f)
{
	size_t len;
	while (tx_next(f, &len))
		;
}

#endif
