/* dev_vnet.c — the offload paths tap: and packet: share (dev_vnet.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev_vnet.h"

int dev_cut_init(struct dev_cut *c)
{
	memset(c, 0, sizeof(*c));
	c->buf = malloc(DEV_VNET_SCRATCH);
	return c->buf ? 0 : -1;
}

void dev_cut_free(struct dev_cut *c)
{
	free(c->buf);
	c->buf = NULL;
	c->pending = false;
}

bool dev_vnet_drain(struct dev *d, struct dev_cut *c, uint32_t *tail, uint32_t head, int *rc)
{
	struct ring *r = d->rx;
	/* The segments' checksums were computed by vnet_seg: valid whatever
	 * the stack does; CSUM_OK only spares it the second pass. */
	uint16_t fl = (d->offload & DEV_OFF_RX_CSUM) ? RING_SLOT_CSUM_OK : 0;

	while (c->pending && *tail - head < r->num_slots) {
		struct ring_slot *s = ring_slot(r, *tail);
		if (s->buf_idx >= r->nbufs) {
			*rc = -EINVAL; /* a swapped-in index that is not ours */
			return false;
		}
		size_t n = vnet_seg(&c->f, c->buf, c->next, ring_buf(r, s->buf_idx), r->buf_size);
		if (n != 0) {
			s->len = (uint16_t)n;
			s->flags = fl;
			d->stats.rx_frames++;
			d->stats.rx_bytes += n;
			d->stats.rx_gso_segs++;
			if (fl)
				d->stats.rx_csum_ok++;
			(*tail)++;
		} else {
			d->stats.rx_drops++; /* vnet_parse checked they fit: not reached */
		}
		if (++c->next >= c->f.nsegs)
			c->pending = false;
	}
	return !c->pending;
}

int dev_vnet_rx(struct dev *d, struct dev_cut *c, const struct vnet_hdr *h, const uint8_t *p,
		size_t len, uint32_t *tail, uint32_t head)
{
	struct ring *r = d->rx;
	struct vnet_frame f = {.nsegs = 1};
	int rc = 0;

	if (h != NULL && vnet_parse(h, p, len, r->buf_size, &f) != WIRE_OK) {
		d->stats.rx_vnet_bad++;
		return 0;
	}
	if (!f.gso) {
		if (len == 0 || len > r->buf_size || *tail - head >= r->num_slots) {
			d->stats.rx_drops++; /* larger than a buffer, not GSO: cut by no one */
			return 0;
		}
		struct ring_slot *s = ring_slot(r, *tail);
		if (s->buf_idx >= r->nbufs)
			return -EINVAL;
		uint8_t *dst = ring_buf(r, s->buf_idx);
		if (dst != p)
			memcpy(dst, p, len);
		s->len = (uint16_t)len;
		s->flags = 0;
		if (f.csum_ok && (d->offload & DEV_OFF_RX_CSUM)) {
			s->flags = RING_SLOT_CSUM_OK;
			d->stats.rx_csum_ok++;
		} else if (h != NULL && (h->flags & VNET_F_NEEDS_CSUM)) {
			/* Not allowed to tell the stack: finish the checksum
			 * here (vnet_parse checked the field is in the frame),
			 * so the stack verifies a real one. */
			(void)vnet_csum_finish(dst, len, h->csum_start, h->csum_offset);
		}
		d->stats.rx_frames++;
		d->stats.rx_bytes += len;
		(*tail)++;
		return 0;
	}
	if (!(d->offload & DEV_OFF_RX_GSO) || c->buf == NULL || c->pending ||
	    len > DEV_VNET_SCRATCH) {
		d->stats.rx_drops++;
		return 0;
	}
	if (p != c->buf)
		memcpy(c->buf, p, len);
	c->f = f;
	c->next = 0;
	c->pending = true;
	d->stats.rx_gso_frames++;
	dev_vnet_drain(d, c, tail, head, &rc);
	return rc;
}

static void add_iov(struct dev_txf *t, const void *b, size_t n)
{
	t->iov[t->niov].iov_base = (void *)b;
	t->iov[t->niov].iov_len = n;
	t->niov++;
	t->bytes += n;
}

/* Past a malformed slot: the rest of its chain (slots marked MORE, and the
 * one after the last of them), never past head. */
static uint32_t skip_chain(struct ring *r, uint32_t i, uint32_t n, uint32_t head, bool more)
{
	while (more && i + n != head) {
		more = (ring_slot(r, i + n)->flags & RING_SLOT_MORE) != 0;
		n++;
	}
	return n;
}

uint32_t dev_vnet_tx_frame(struct dev *d, uint32_t i, uint32_t head, size_t vhlen,
			   struct dev_txf *t)
{
	static const uint8_t zero[VNET_HLEN];
	struct ring *r = d->tx;
	uint32_t n = 0;

	t->niov = 0;
	t->bytes = 0;
	t->frame_len = 0;
	t->ok = false;
	memset(&t->h, 0, sizeof(t->h));
	for (;;) {
		struct ring_slot *s = ring_slot(r, i + n);
		uint16_t fl = s->flags;
		bool more = (fl & RING_SLOT_MORE) != 0;
		n++;
		if (s->buf_idx >= r->nbufs || s->len == 0 || s->len > r->buf_size ||
		    (vhlen == 0 && (fl & (RING_SLOT_MORE | RING_SLOT_VNET))) ||
		    (n > 1 && (fl & RING_SLOT_VNET)) ||
		    (n == 1 && (fl & RING_SLOT_VNET) && s->len < VNET_HLEN) ||
		    t->niov + 2 > DEV_VNET_TX_IOV)
			return skip_chain(r, i, n, head, more);
		const uint8_t *b = ring_buf(r, s->buf_idx);
		size_t len = s->len;
		if (n == 1 && vhlen) {
			if (fl & RING_SLOT_VNET) {
				vnet_hdr_read(b, &t->h);
				add_iov(t, b, vhlen);
				b += VNET_HLEN;
				len -= VNET_HLEN;
			} else {
				add_iov(t, zero, vhlen);
			}
		}
		if (len) {
			add_iov(t, b, len);
			t->frame_len += len;
		}
		if (!more)
			break;
		if (i + n == head)
			return n; /* MORE on the last slot handed over: no end */
	}

	/* Only what the device advertised, and nothing the kernel would have to
	 * refuse: the checksum field inside the frame, a TSO frame within
	 * tso_max, a frame of several slots only for TSO. */
	uint8_t gso = t->h.gso_type & (uint8_t)~VNET_GSO_ECN;
	bool needs = (t->h.flags & VNET_F_NEEDS_CSUM) != 0;
	if (t->h.flags & ~VNET_F_NEEDS_CSUM)
		return n;
	if (needs && (!(d->offload & DEV_OFF_TX_CSUM) ||
		      (size_t)t->h.csum_start + t->h.csum_offset + 2 > t->frame_len))
		return n;
	if (gso == VNET_GSO_NONE) {
		if (t->h.gso_type != VNET_GSO_NONE || t->frame_len > r->buf_size)
			return n;
	} else {
		uint32_t want = gso == VNET_GSO_TCPV4 ? DEV_OFF_TSO4
			      : gso == VNET_GSO_TCPV6 ? DEV_OFF_TSO6 : 0;
		if (!want || !(d->offload & want) || t->h.gso_size == 0 ||
		    t->frame_len > d->tso_max || t->h.hdr_len > t->frame_len)
			return n;
	}
	t->ok = true;
	return n;
}

void dev_vnet_tx_count(struct dev *d, const struct dev_txf *t)
{
	d->stats.tx_frames++;
	d->stats.tx_bytes += t->frame_len;
	if (t->h.flags & VNET_F_NEEDS_CSUM)
		d->stats.tx_csum_offload++;
	if ((t->h.gso_type & (uint8_t)~VNET_GSO_ECN) != VNET_GSO_NONE) {
		d->stats.tx_tso_frames++;
		d->stats.tx_tso_segs += vnet_tx_segs(&t->h, t->frame_len);
	}
}
