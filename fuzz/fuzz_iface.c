/* fuzz_iface.c — a whole interface (ARP, IPv4, ICMP, UDP echo on port 7;
 * IPv6 with 2001:2::2/64 and a link-local address: DAD, ND, ICMPv6) fed
 * with a sequence of frames and actions, with time moving forward.
 *
 * Input: records of [ctl][len_hi][len_lo][len bytes].  ctl's low 5 bits
 * advance `now` by that many 100 ms steps (so 3 s ARP timeouts and the ICMP
 * token bucket are reached); its high 3 bits pick the action:
 *   0-2  iface_input on an exact-size heap copy (ASan sees one byte past)
 *   3    the frame through the rx ring and iface_rx
 *   4    the same, with the slot's buf_idx/len taken from the frame (a
 *        broken or hostile device)
 *   5    udp_sendto to an address from the bytes (output, ARP queue)
 *   6    iface_ip_output with a protocol from the bytes; or, when the
 *        first byte has its top bit set, icmp6_ping_send to the IPv6
 *        address in the next 16 (output, ND queue)
 *   7    flip whether the device's tx_sync frees slots (tx ring full path)
 * After each record, iface_poll runs if its deadline passed.  Invariants
 * on the tables are checked throughout.  Build: make build/fuzz/fuzz_iface.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/iface_priv.h"
#include "ring/ring.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

#define NSLOTS 32u
#define BUFSZ 2048u
#define OUR_IP SK_IP4(10, 0, 0, 2)

struct fuzz_dev {
	struct dev dev;
	bool drain;
};

static struct fuzz_dev *fd;
static void *region;
static size_t region_size;
static struct iface *ifc;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fz_rx_sync(struct dev *d)
{
	(void)d;
	return 0;
}

/* "Send" everything handed over, unless the test wants a stuck device. */
static int fz_tx_sync(struct dev *d)
{
	if (((struct fuzz_dev *)d)->drain)
		ring_store(&d->tx->tail, d->tx->head + d->tx->num_slots);
	return 0;
}

static int fz_poll_fd(struct dev *d)
{
	(void)d;
	return -1;
}

static void fz_close(struct dev *d)
{
	(void)d;
}

static const struct dev_ops fz_ops = {
	.kind = "fuzz", .rx_sync = fz_rx_sync, .tx_sync = fz_tx_sync,
	.poll_fd = fz_poll_fd, .close = fz_close,
};

static void echo(void *ctx, struct iface *i, sk_time_ns now, uint32_t src, uint16_t sport,
		 uint16_t dport, const uint8_t *buf, size_t len)
{
	(void)ctx;
	udp_sendto(i, now, dport, src, sport, buf, len);
}

static void once(void)
{
	fd = calloc(1, sizeof(*fd));
	ifc = calloc(1, sizeof(*ifc));
	region_size = (ring_region_size(NSLOTS, BUFSZ, 0) + 63) & ~(size_t)63;
	region = aligned_alloc(64, region_size);
	CHECK(fd && ifc && region_size && region);
}

static void check_invariants(void)
{
	CHECK(ifc->arp_used <= IFACE_ARP_SLOTS);
	CHECK((unsigned)ifc->arp_list_len[0] + ifc->arp_list_len[1] == ifc->arp_used);
	CHECK(ifc->npending <= IFACE_ARP_PENDING);
	unsigned used = 0;
	for (unsigned q = 0; q < IFACE_ARP_PENDING; q++)
		used += ifc->pending[q].used;
	CHECK(used == ifc->npending);
	CHECK((ifc->npending == 0) == (ifc->deadline == SK_TIME_NEVER));
	CHECK(ifc->nd_used <= IFACE_ND_SLOTS);
	CHECK((unsigned)ifc->nd_list_len[0] + ifc->nd_list_len[1] == ifc->nd_used);
	CHECK(ifc->npending6 <= IFACE_ND_PENDING);
	used = 0;
	for (unsigned q = 0; q < IFACE_ND_PENDING; q++)
		used += ifc->pending6[q].used;
	CHECK(used == ifc->npending6);
	/* Nothing pending and no address in DAD: no ND timer. */
	if (ifc->npending6 == 0 && iface_ip6_tentative(ifc) == 0 && !ifc->mld_due)
		CHECK(ifc->nd_deadline == SK_TIME_NEVER);
	unsigned usable = 0;
	for (unsigned a = 0; a < ifc->naddr6; a++)
		usable += ifc->addr6[a].state == IFACE_ADDR6_PREFERRED;
	CHECK(usable + iface_ip6_tentative(ifc) <= ifc->naddr6);
	struct ring *tx = fd->dev.tx;
	CHECK(tx->tail - tx->head <= tx->num_slots);
}

/* Put one frame into the next rx slot, as a device would. */
static void rx_put(const uint8_t *frame, size_t len, bool hostile)
{
	struct ring *rx = fd->dev.rx; /* empty: iface_rx runs after every put */
	struct ring_slot *s = ring_slot(rx, rx->tail);
	/* A well-behaved device keeps its buffer indices; restore them so that
	 * a hostile record cannot leave the ring broken for the next one. */
	s->buf_idx = (uint32_t)(rx->tail & (NSLOTS - 1));
	size_t n = len < BUFSZ ? len : BUFSZ;
	memcpy(ring_buf(rx, s->buf_idx), frame, n);
	s->len = (uint16_t)n;
	if (hostile && len >= 6) {
		s->buf_idx = sk_get_be32(frame) % (rx->nbufs + 4);
		s->len = sk_get_be16(frame + 4);
	}
	ring_store(&rx->tail, rx->tail + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fd)
		once();
	memset(fd, 0, sizeof(*fd));
	fd->drain = true;
	CHECK(ring_region_init(region, region_size, NSLOTS, BUFSZ, 0) == 0);
	fd->dev.ops = &fz_ops;
	fd->dev.rx = ring_region_rx(region);
	fd->dev.tx = ring_region_tx(region);
	fd->dev.mtu = 1500;
	struct iface_config cfg = {
		.mac = {0x02, 0, 0, 0, 0, 0x02},
		.ip = OUR_IP,
		.prefix_len = 24,
		.gw = SK_IP4(10, 0, 0, 1),
		.seed = 1,
		.ip6 = true,
		.nip6 = 1,
		.ip6_addr = {{.addr = {{0x20, 0x01, 0, 2, [15] = 2}}, .prefix_len = 64}},
		.gw6 = {{0xfe, 0x80, [15] = 1}},
	};
	sk_time_ns now = 1000 * SK_NS_PER_S;
	iface_init(ifc, &fd->dev, &cfg, now);
	CHECK(udp_bind(ifc, 7, echo, NULL) == 0);
	iface_announce(ifc, now);

	while (size >= 3) {
		uint8_t ctl = data[0];
		size_t len = sk_get_be16(data + 1) % 1600;
		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		const uint8_t *frame = data;
		data += len;
		size -= len;

		now += (sk_time_ns)(ctl & 0x1f) * 100 * SK_NS_PER_MS;
		switch (ctl >> 5) {
		case 0:
		case 1:
		case 2: {
			uint8_t *copy = malloc(len ? len : 1);
			CHECK(copy);
			memcpy(copy, frame, len);
			iface_input(ifc, now, copy, len);
			free(copy);
			break;
		}
		case 3:
		case 4:
			rx_put(frame, len, (ctl >> 5) == 4);
			iface_rx(ifc, now);
			break;
		case 5:
			if (len >= 6)
				udp_sendto(ifc, now, 7, sk_get_be32(frame), sk_get_be16(frame + 4),
					   frame + 6, len - 6);
			break;
		case 6:
			if (len >= 17 && (frame[0] & 0x80)) {
				struct ipv6_addr dst;
				memcpy(dst.b, frame + 1, 16);
				icmp6_ping_send(ifc, now, &dst, 1, 1, frame + 17, len - 17);
			} else if (len >= 5)
				iface_ip_output(ifc, now, sk_get_be32(frame), frame[4], frame + 5, len - 5);
			break;
		case 7:
			fd->drain = !fd->drain;
			break;
		}
		if (iface_next_deadline(ifc) <= now)
			iface_poll(ifc, now);
		/* poll must move the deadline past now, or the loop would spin */
		CHECK(iface_next_deadline(ifc) > now);
		check_invariants();
	}
	return 0;
}
