/* pcap.c — a recorder around another device: every frame the inner device
 * receives (new rx slots after its rx_sync) and every frame handed over for
 * sending (tx slots before its tx_sync) goes to a pcap file.  rx frames are
 * recorded when rx_sync returns, whichever inner sync put them in the ring.
 *
 * The wrapper shares the inner device's rings (d->rx, d->tx are the same
 * pointers), so the stack cannot tell it is there; only the syncs pass
 * through here.  Timestamps are the time of the sync, which is when the
 * stack sees the frame.  The file is flushed after every sync that wrote to
 * it, so a capture survives a crash; it is a debugging aid, its syscalls are
 * not counted in the device's stats.
 *
 * Offloads (dev.h) pass through: the wrapper advertises what the inner
 * device does.  Frames are recorded as the stack sees them on the wire: a
 * tx frame of several slots (RING_SLOT_MORE) joined into one record,
 * without the struct ring_vnet in front (RING_SLOT_VNET), so a TSO frame
 * shows as the one large TCP segment the stack handed over, as a capture
 * on a Linux interface with TSO shows it.  rx frames are one slot each,
 * already cut to MTU size by the device.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "dev_impl.h"

struct pcap_dev {
	struct dev dev; /* first */
	struct dev *inner;
	pcap_t *pc;
	pcap_dumper_t *dumper;
	uint32_t rx_seen; /* rx slots before this one were recorded */
	uint32_t tx_seen; /* tx slots before this one were recorded */
	uint8_t *join;    /* a multi-slot tx frame, joined (PCAP_JOIN bytes) */
};

/* The largest frame a device takes (dev.h: tso_max <= 65535 + 14), and a
 * snap length that never cuts one. */
#define PCAP_JOIN (65536u + 64u)
#define PCAP_SNAPLEN 262144

static struct pcap_dev *pc_of(struct dev *d)
{
	return (struct pcap_dev *)d;
}

static void record(struct pcap_dev *p, struct ring *r, uint32_t i, const struct timeval *tv)
{
	struct ring_slot *s = ring_slot(r, i);
	struct pcap_pkthdr h;

	if (s->buf_idx >= r->nbufs || s->len > r->buf_size)
		return; /* the inner device drops it; nothing sane to record */
	h.ts = *tv;
	h.caplen = s->len;
	h.len = s->len;
	pcap_dump((u_char *)p->dumper, &h, ring_buf(r, s->buf_idx));
}

/* The wrapper's counters are the inner device's: the stack prints ours. */
static void mirror(struct pcap_dev *p)
{
	p->dev.stats = p->inner->stats;
}

/* The tx frame starting at slot i (before head): its slots joined, the
 * ring_vnet left out.  Returns the slots it took. */
static uint32_t record_tx(struct pcap_dev *p, struct ring *r, uint32_t i, uint32_t head,
			  const struct timeval *tv)
{
	struct ring_slot *s = ring_slot(r, i);
	struct pcap_pkthdr h;
	uint32_t n = 0;
	size_t len = 0;

	if (!(s->flags & (RING_SLOT_MORE | RING_SLOT_VNET))) {
		record(p, r, i, tv);
		return 1;
	}
	for (;;) {
		s = ring_slot(r, i + n);
		n++;
		if (s->buf_idx < r->nbufs && s->len <= r->buf_size) {
			const uint8_t *b = ring_buf(r, s->buf_idx);
			size_t l = s->len;
			if (n == 1 && (s->flags & RING_SLOT_VNET)) {
				size_t skip = SK_MIN(l, sizeof(struct ring_vnet));
				b += skip;
				l -= skip;
			}
			l = SK_MIN(l, PCAP_JOIN - len);
			memcpy(p->join + len, b, l);
			len += l;
		}
		if (!(s->flags & RING_SLOT_MORE) || i + n == head)
			break;
	}
	h.ts = *tv;
	h.caplen = (bpf_u_int32)len;
	h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)p->dumper, &h, p->join);
	return n;
}

static int rec_rx_sync(struct dev *d)
{
	struct pcap_dev *p = pc_of(d);
	struct ring *r = d->rx;
	int n = dev_rx_sync(p->inner);
	uint32_t tail = r->tail;

	/* From our own cursor, not the tail before the call: a device may also
	 * deliver frames in tx_sync (a loopback, a switch port). */
	if (tail != p->rx_seen) {
		struct timeval tv;
		gettimeofday(&tv, NULL);
		for (uint32_t i = p->rx_seen; i != tail; i++)
			record(p, r, i, &tv);
		pcap_dump_flush(p->dumper);
		p->rx_seen = tail;
	}
	mirror(p);
	return n;
}

static int rec_tx_sync(struct dev *d)
{
	struct pcap_dev *p = pc_of(d);
	struct ring *r = d->tx;
	uint32_t head = ring_load(&r->head);
	int n;

	if (head != p->tx_seen && head - p->tx_seen <= r->num_slots) {
		struct timeval tv;
		gettimeofday(&tv, NULL);
		for (uint32_t i = p->tx_seen; i != head;)
			i += record_tx(p, r, i, head, &tv);
		pcap_dump_flush(p->dumper);
	}
	p->tx_seen = head;
	n = dev_tx_sync(p->inner);
	mirror(p);
	return n;
}

static int rec_poll_fd(struct dev *d)
{
	return dev_poll_fd(pc_of(d)->inner);
}

static void rec_close(struct dev *d)
{
	struct pcap_dev *p = pc_of(d);

	pcap_dump_close(p->dumper);
	pcap_close(p->pc);
	dev_close(p->inner);
	free(p->join);
	free(p);
}

static const struct dev_ops rec_ops = {
	.kind = "pcap",
	.rx_sync = rec_rx_sync,
	.tx_sync = rec_tx_sync,
	.poll_fd = rec_poll_fd,
	.close = rec_close,
};

int pcap_wrap(struct dev *inner, const char *path, struct dev **out, char *err, size_t errlen)
{
	struct pcap_dev *p = calloc(1, sizeof(*p));

	if (p == NULL || (p->join = malloc(PCAP_JOIN)) == NULL) {
		free(p);
		return dev_err(err, errlen, "pcap %s: out of memory", path);
	}
	p->pc = pcap_open_dead(DLT_EN10MB, PCAP_SNAPLEN);
	if (p->pc == NULL) {
		free(p->join);
		free(p);
		return dev_err(err, errlen, "pcap %s: pcap_open_dead failed", path);
	}
	p->dumper = pcap_dump_open(p->pc, path);
	if (p->dumper == NULL) {
		dev_err(err, errlen, "pcap %s: %s", path, pcap_geterr(p->pc));
		pcap_close(p->pc);
		free(p->join);
		free(p);
		return -1;
	}
	p->inner = inner;
	p->dev.ops = &rec_ops;
	p->dev.rx = inner->rx;
	p->dev.tx = inner->tx;
	memcpy(p->dev.mac, inner->mac, SK_MAC_LEN);
	p->dev.mtu = inner->mtu;
	p->dev.flow_steered = inner->flow_steered;
	p->dev.offload = inner->offload;
	p->dev.tso_max = inner->tso_max;
	p->dev.stats = inner->stats;
	memcpy(p->dev.name, inner->name, sizeof(p->dev.name));
	p->rx_seen = inner->rx->tail;
	p->tx_seen = ring_load(&inner->tx->head);
	*out = &p->dev;
	return 0;
}
