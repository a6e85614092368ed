/* tap.c — tap:NAME, a TAP interface through /dev/net/tun.
 *
 * The cheapest device to set up and the most expensive per frame: one
 * read() or write() per frame, because a tun fd moves one frame per call.
 * Frames go straight between the kernel and the ring buffers (no extra
 * copy in user space).  The fd is non-blocking; rx_sync reads until EAGAIN
 * or until the rx ring is full, so an idle rx_sync still costs one read().
 *
 * Offloads (dev.h, docs/stack.md): unless offload_allow is 0 the TAP is
 * opened with IFF_VNET_HDR, a 12-byte virtio_net_hdr (struct ring_vnet's
 * layout) in front of every frame both ways, and TUNSETOFFLOAD lets the
 * kernel send frames with unfinished checksums (TUN_F_CSUM: marked
 * RING_SLOT_CSUM_OK) and TSO super-frames up to 64 KiB (TUN_F_TSO4/6: cut
 * into MTU-sized segments, dev_vnet.h).  rx is a readv into the header, the
 * slot's buffer and a scratch tail, so a frame that fits takes no copy.  tx
 * is one writev per frame: the slot's ring_vnet (or a zeroed header) and
 * the frame's slots (RING_SLOT_MORE), up to tso_max.  With offload_allow 0
 * there is no header at all and TUNSETOFFLOAD 0: frames as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dev_impl.h"
#include "dev_vnet.h"
#include "steer_bpf.h"

struct tap_dev {
	struct dev dev; /* first: the ops cast struct dev * back to this */
	struct dev_region region;
	int fd;
	bool vnet;          /* IFF_VNET_HDR: a 12-byte header on every frame */
	struct dev_cut cut; /* rx super-frames being cut (vnet only) */
	struct dev_txf txf; /* tx_sync's iovec, here to keep it off the stack */
};

static struct tap_dev *tap_of(struct dev *d)
{
	return (struct tap_dev *)d;
}

/* rx with IFF_VNET_HDR: readv puts the header in front, the frame in the
 * slot's buffer, and whatever is longer than a buffer (a super-frame, when
 * TUNSETOFFLOAD allowed TSO) in the scratch buffer after the same number of
 * bytes, so one memcpy of the slot's part makes the super-frame contiguous
 * for the cutter.  A frame that fits takes no copy at all. */
static int tap_rx_vnet(struct dev *d, struct tap_dev *t, uint32_t head, uint32_t *tail)
{
	struct ring *r = d->rx;
	int rc = 0;

	if (t->cut.pending && !dev_vnet_drain(d, &t->cut, tail, head, &rc))
		return rc;
	while (*tail - head < r->num_slots) {
		struct ring_slot *s = ring_slot(r, *tail);
		uint8_t hb[VNET_HLEN];
		struct vnet_hdr h;

		if (s->buf_idx >= r->nbufs)
			return -EINVAL;
		uint8_t *b = ring_buf(r, s->buf_idx);
		struct iovec iov[3] = {
			{hb, sizeof(hb)},
			{b, r->buf_size},
			{t->cut.buf + r->buf_size, DEV_VNET_SCRATCH - r->buf_size},
		};
		ssize_t n = readv(t->fd, iov, 3);
		d->stats.rx_syscalls++;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		size_t len = (size_t)n < VNET_HLEN ? 0 : (size_t)n - VNET_HLEN;
		if (len == 0 || len >= DEV_VNET_SCRATCH) {
			d->stats.rx_drops++; /* no frame, or cut by our buffers */
			continue;
		}
		vnet_hdr_read(hb, &h);
		const uint8_t *p = b;
		if (len > r->buf_size || h.gso_type != VNET_GSO_NONE) {
			memcpy(t->cut.buf, b, SK_MIN(len, (size_t)r->buf_size));
			p = t->cut.buf;
		}
		rc = dev_vnet_rx(d, &t->cut, &h, p, len, tail, head);
		if (rc < 0 || t->cut.pending)
			return rc; /* the ring is full of segments */
	}
	return 0;
}

static int tap_rx_sync(struct dev *d)
{
	struct tap_dev *t = tap_of(d);
	struct ring *r = d->rx;
	uint32_t head = ring_load(&r->head); /* slots released by the user */
	uint32_t tail = r->tail;
	int n = 0, rc = 0;

	d->stats.rx_syncs++;
	if (tail - head > r->num_slots)
		return -EINVAL; /* the user moved head past tail */
	if (t->vnet) {
		uint32_t t0 = tail;
		rc = tap_rx_vnet(d, t, head, &tail);
		ring_store(&r->tail, tail);
		return rc < 0 ? rc : (int)(tail - t0);
	}
	while (tail - head < r->num_slots) {
		struct ring_slot *s = ring_slot(r, tail);
		ssize_t len;

		if (s->buf_idx >= r->nbufs) {
			rc = -EINVAL; /* a swapped-in index that is not ours */
			break;
		}
		len = read(t->fd, ring_buf(r, s->buf_idx), r->buf_size);
		d->stats.rx_syscalls++;
		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				rc = -errno;
			break;
		}
		/* A frame longer than the buffer comes back cut; the stack must
		 * never see half a frame. */
		if ((size_t)len >= r->buf_size || len == 0) {
			d->stats.rx_drops++;
			continue;
		}
		s->len = (uint16_t)len;
		s->flags = 0;
		d->stats.rx_frames++;
		d->stats.rx_bytes += (uint64_t)len;
		tail++;
		n++;
	}
	ring_store(&r->tail, tail);
	return rc < 0 ? rc : n;
}

/* One write per frame: writev of the header and the frame's slots with
 * IFF_VNET_HDR (dev_vnet_tx_frame), a plain write of one slot without. */
static int tap_tx_sync(struct dev *d)
{
	struct tap_dev *t = tap_of(d);
	struct ring *r = d->tx;
	uint32_t head = ring_load(&r->head);
	/* Handed over and not yet sent: [tail - num_slots, head). */
	uint32_t i = r->tail - r->num_slots;
	int n = 0;

	d->stats.tx_syncs++;
	if (head - i > r->num_slots)
		return -EINVAL;
	while (i != head) {
		struct dev_txf *f = &t->txf;
		ssize_t w;

		i += dev_vnet_tx_frame(d, i, head, t->vnet ? VNET_HLEN : 0, f);
		if (!f->ok) {
			d->stats.tx_drops++;
			continue;
		}
		do {
			w = writev(t->fd, f->iov, f->niov);
			d->stats.tx_syscalls++;
		} while (w < 0 && errno == EINTR);
		/* No retry on EAGAIN: like a NIC with a full queue, the frame is
		 * lost and counted, and the caller is never made to wait. */
		if (w != (ssize_t)f->bytes) {
			d->stats.tx_drops++;
			continue;
		}
		dev_vnet_tx_count(d, f);
		n++;
	}
	ring_store(&r->tail, head + r->num_slots);
	return n;
}

static int tap_poll_fd(struct dev *d)
{
	return tap_of(d)->fd;
}

static void tap_close(struct dev *d)
{
	struct tap_dev *t = tap_of(d);

	if (t->fd >= 0)
		close(t->fd);
	dev_cut_free(&t->cut);
	dev_region_free(&t->region);
	free(t);
}

static const struct dev_ops tap_ops = {
	.kind = "tap",
	.rx_sync = tap_rx_sync,
	.tx_sync = tap_tx_sync,
	.poll_fd = tap_poll_fd,
	.close = tap_close,
};

/* Bring the link up: a TAP created by TUNSETIFF starts down, and a down
 * TAP drops everything the kernel would send us. */
static int link_up(const char *name, char *err, size_t errlen)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = 0;

	if (s < 0)
		return dev_err(err, errlen, "tap:%s: socket: %s", name, strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		rc = dev_err(err, errlen, "tap:%s: SIOCGIFFLAGS: %s", name, strerror(errno));
	} else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			rc = dev_err(err, errlen, "tap:%s: link up: %s", name, strerror(errno));
	}
	close(s);
	return rc;
}

/* Wait, bounded, until the kernel marks the link running.  Attaching the
 * fd turns the carrier on, but the kernel applies that later, from its
 * link-watch work (up to a second when events come close together); until
 * then its transmit queue is a no-op and everything it sends us is dropped.
 * A DAD probe sent in that window goes out, and the neighbour's answer is
 * lost, so a duplicate address would pass as unique.  Past the bound we go
 * on: a link that never runs is the operator's to see (ip link). */
static void wait_running(const char *name)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (s < 0)
		return;
	for (int i = 0; i < 300; i++) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags & IFF_RUNNING))
			break;
		nanosleep(&tick, NULL);
	}
	close(s);
}

/* Workers: the TAP's steering program (steer_bpf.h) picks the queue of a
 * frame the kernel sends, as flow_hash_frame(frame) % queues; the kernel
 * numbers the queues in the order they were attached (tun_attach puts a
 * new one at index numqueues), and the callers open queue 0, 1, ... in
 * order on one thread, so queue k is worker k.  The program is the TAP's,
 * not the queue's: each opening sets it again, harmlessly, and the TAP
 * keeps its own reference, so our descriptor is closed at once.
 *
 * Loading an eBPF program needs CAP_BPF (or CAP_SYS_ADMIN) while
 * kernel.unprivileged_bpf_disabled is not 0 (Debian's default is 2);
 * CAP_NET_ADMIN alone is not enough.  Without it the kernel's own choice
 * steers (a flow still stays on one queue, by the kernel's hash), which
 * serves every connection that arrives but not one a worker opens itself:
 * one warning, and flow_steered false says so to the callers. */
static bool steer_attach(int fd, const char *name, const struct dev_config *cfg)
{
	static bool warned;
	int prog = steer_ebpf_load();
	int rc = prog >= 0 ? ioctl(fd, TUNSETSTEERINGEBPF, &prog) : -1;
	int e = prog < 0 ? -prog : errno;
	if (prog >= 0)
		close(prog);
	if (rc == 0)
		return true;
	if (!warned && cfg->queue == 0) {
		warned = true;
		fprintf(stderr, "tap:%s: warning: cannot %s the steering program: %s%s; the kernel "
				"steers the queues, and a worker cannot steer connections it opens "
				"(docs/smp.md)\n",
			name, prog < 0 ? "load" : "attach", strerror(e),
			prog < 0 && (e == EPERM || e == EACCES) ? " (needs CAP_BPF)" : "");
	}
	return false;
}

/* With IFF_VNET_HDR: the 12-byte header (virtio_net_hdr_v1, struct
 * ring_vnet's layout, so a tx frame's ring_vnet goes out as it is), and
 * TUNSETOFFLOAD for what the kernel may send us: TUN_F_CSUM (frames with
 * the checksum left unfinished, NEEDS_CSUM) and TUN_F_TSO4/6 (super-frames
 * up to 64 KiB, cut here).  What we send needs no TUNSETOFFLOAD: the kernel
 * takes a NEEDS_CSUM or GSO header from any IFF_VNET_HDR writer.  Without
 * offloads TUNSETOFFLOAD 0 clears what an earlier opening of a persistent
 * TAP may have left, so the frames are exactly as before. */
static int tap_offload(struct tap_dev *t, const char *name, uint32_t allow, char *err,
		       size_t errlen)
{
	unsigned long tun = 0;
	int sz = VNET_HLEN;

	/* The kernel sends TSO only with TUN_F_CSUM: with RX_GSO but not
	 * RX_CSUM the unfinished checksums are finished here (dev_vnet.h)
	 * instead of being left to the stack. */
	if (allow & (DEV_OFF_RX_CSUM | DEV_OFF_RX_GSO))
		tun |= TUN_F_CSUM;
	if (allow & DEV_OFF_RX_GSO)
		tun |= TUN_F_TSO4 | TUN_F_TSO6;
	if (allow && ioctl(t->fd, TUNSETVNETHDRSZ, &sz) < 0)
		return dev_err(err, errlen, "tap:%s: TUNSETVNETHDRSZ %d: %s", name, sz,
			       strerror(errno));
	if (ioctl(t->fd, TUNSETOFFLOAD, tun) < 0) {
		if (tun == 0 || ioctl(t->fd, TUNSETOFFLOAD, tun & TUN_F_CSUM) < 0)
			return dev_err(err, errlen, "tap:%s: TUNSETOFFLOAD %#lx: %s", name, tun,
				       strerror(errno));
		allow &= ~DEV_OFF_RX_GSO; /* a kernel without TSO to a TAP */
	}
	if (allow && dev_cut_init(&t->cut) != 0)
		return dev_err(err, errlen, "tap:%s: out of memory", name);
	t->vnet = allow != 0;
	t->dev.offload = allow;
	t->dev.tso_max = (allow & (DEV_OFF_TSO4 | DEV_OFF_TSO6)) ? 65535u + 14u : 0;
	return 0;
}

int tap_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
	     size_t errlen)
{
	struct tap_dev *t;
	struct ifreq ifr;

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return dev_err(err, errlen, "tap:%s: out of memory", name);
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		/* Not a capability: the node's mode.  udev's default rules make it
		 * 0666 (TUNSETIFF is what CAP_NET_ADMIN guards); without udev it
		 * stays the kernel's 0600, root's alone. */
		dev_err(err, errlen, "tap:%s: open /dev/net/tun: %s%s", name, strerror(errno),
			errno == EACCES ? " (a non-root user needs it mode 0666, as udev makes it)" : "");
		goto fail;
	}
	/* IFF_NO_PI: plain Ethernet frames, no 4-byte packet-info prefix.
	 * TUNSETIFF creates the interface, or attaches to an existing TAP of
	 * that name (persistent or owned by a previous open). */
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	/* Offloads (dev.h): TSO needs the checksum offload under it. */
	uint32_t allow = cfg->offload_allow & DEV_OFF_ALL;
	if (!(allow & DEV_OFF_TX_CSUM))
		allow &= ~(DEV_OFF_TSO4 | DEV_OFF_TSO6);
	if (allow)
		ifr.ifr_flags |= IFF_VNET_HDR;
	/* Workers (dev_open.h): one queue of a multi-queue TAP each; the
	 * kernel picks the queue of a frame it sends by the flow's hash. */
	if (cfg->nqueues > 1)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
		dev_err(err, errlen, "tap:%s: TUNSETIFF: %s%s%s", name, strerror(errno),
			errno == EPERM ? " (needs CAP_NET_ADMIN)" : "",
			errno == EINVAL && cfg->nqueues > 1
				? " (workers need a multi-queue TAP: ip tuntap add ... multi_queue)"
				: "");
		goto fail;
	}
	if (tap_offload(t, ifr.ifr_name, allow, err, errlen) != 0)
		goto fail;
	if (link_up(ifr.ifr_name, err, errlen) != 0)
		goto fail;
	wait_running(ifr.ifr_name);
	if (dev_region_alloc(&t->dev, &t->region, cfg->num_slots, err, errlen) != 0)
		goto fail;
	t->dev.ops = &tap_ops;
	t->dev.mtu = 1500;
	t->dev.flow_steered = cfg->nqueues <= 1 || steer_attach(t->fd, ifr.ifr_name, cfg);
	/* The stack's own MAC, not the kernel side's: the TAP is a cable
	 * between two hosts, each with its own address. */
	dev_random_mac(t->dev.mac);
	*out = &t->dev;
	return 0;
fail:
	if (t->fd >= 0)
		close(t->fd);
	dev_cut_free(&t->cut);
	dev_region_free(&t->region);
	free(t);
	return -1;
}
