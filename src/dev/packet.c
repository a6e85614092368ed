/* packet.c — packet:IFACE, an AF_PACKET socket with a TPACKET_V2 rx ring.
 *
 * rx: the kernel writes each frame into the next slot of an mmap'ed ring
 * of fixed-size frames and flips that slot's tp_status to TP_STATUS_USER;
 * we hand the slot back by writing TP_STATUS_KERNEL.  rx_sync only reads
 * status words, so an idle rx_sync is a memory load, not a syscall; frames
 * are copied from the ring into rx slots (the copy keeps the ring ABI the
 * same for every device) and each ring slot goes back to the kernel at
 * once.
 *
 * Why V2 and not V3: V3 packs frames into blocks and hands a block over
 * only when it is full or when its retire timer fires (1 ms at least), and
 * poll() wakes only then.  At low rates, which is where a server spends
 * most of its life (one request in flight per connection), every frame
 * waited up to 1-2 ms: ab -c 1 got ~500 req/s on packet: against ~13,000
 * on tap: and xdp:.  V2 hands each frame over as soon as it is written and
 * poll() wakes for it; the cost is one status load per frame instead of
 * one per block, which is noise next to the copy.
 *
 * tx: sendmmsg() from the slot buffers, one syscall per batch of up to
 * TX_BATCH frames, no copy on our side; with offloads each message is the
 * vnet header and an iovec per slot of the frame.  (A TX_RING would also cost one
 * send() per batch but adds a copy into ring frames and a completion
 * protocol; sendmmsg is simpler.)
 *
 * The stack uses its own MAC, so the interface is put in promiscuous mode
 * through PACKET_ADD_MEMBERSHIP, which the kernel drops with the socket.
 * Our own transmissions would come back on the ring as PACKET_OUTGOING;
 * PACKET_IGNORE_OUTGOING (4.20+) stops that, and the rx path also checks
 * sll_pkttype for kernels without it.
 *
 * Offloads (dev.h, docs/stack.md): frames Linux sends over a veth with its
 * default offloads carry an unfinished checksum (TP_STATUS_CSUMNOTREADY)
 * and bulk data comes as the peer's TSO super-frames, whole.  Unless
 * offload_allow is 0 the socket gets PACKET_VNET_HDR (a 10-byte
 * virtio_net_hdr just before the MAC header in each ring frame) and
 * PACKET_COPY_THRESH (a frame too large for a ring frame comes cut short
 * there, TP_STATUS_COPY, and whole on the socket queue for recvmsg); rx
 * marks unfinished or verified checksums RING_SLOT_CSUM_OK and cuts
 * super-frames into MTU-sized segments (dev_vnet.h), and refuses lying
 * headers (rx_vnet_bad).  With offload_allow 0 none of it is set, and
 * such frames are dropped as before (tests/lib.sh's skt_offloads_off turns
 * them off on the peer).  Frames cut by the ring or larger than a ring
 * buffer, not GSO, are counted in rx_drops.
 * Frames the kernel drops because every ring slot is taken are in
 * getsockopt(PACKET_STATISTICS) (lower_drops), not in rx_drops.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev_impl.h"
#include "dev_vnet.h"
#include "steer_bpf.h"

/* Where the kernel puts an Ethernet frame in a V2 ring frame: the network
 * header at TPACKET_ALIGN(TPACKET2_HDRLEN + max(mac header, 16)), plus the
 * vnet header's 10 bytes with PACKET_VNET_HDR, and the MAC header
 * ETH_HLEN before it; the vnet header sits right before the MAC header
 * (net/packet/af_packet.c, tpacket_rcv; no tp_reserve).  The rx path reads
 * tp_mac rather than assume it; a ring frame holds any frame that fits a
 * ring buffer, with or without the vnet header. */
#define FRAME_NET_OFS (TPACKET_ALIGN(TPACKET2_HDRLEN + 16u) + VNET_HLEN_LEGACY)
#define FRAME_SIZE TPACKET_ALIGN(FRAME_NET_OFS + RING_BUF_SIZE_DEFAULT)
#define BLOCK_SIZE (1u << 16) /* a multiple of the page size */
#define FRAMES_PER_BLOCK (BLOCK_SIZE / FRAME_SIZE)
#define FRAMES_WANTED 4096u   /* room for bursts */
#define BLOCK_NR ((FRAMES_WANTED + FRAMES_PER_BLOCK - 1) / FRAMES_PER_BLOCK)
#define FRAME_NR (FRAMES_PER_BLOCK * BLOCK_NR)
#define TX_BATCH 64u

_Static_assert(FRAME_SIZE % TPACKET_ALIGNMENT == 0, "tp_frame_size must be aligned");
_Static_assert(FRAMES_PER_BLOCK >= 1, "a block must hold a frame");

struct packet_dev {
	struct dev dev; /* first */
	struct dev_region region;
	int fd;
	uint8_t *map;  /* the rx ring: BLOCK_NR blocks of FRAMES_PER_BLOCK frames */
	size_t map_size;
	uint32_t next; /* the ring frame we read next, 0 .. FRAME_NR-1 */
	uint64_t kdrops; /* PACKET_STATISTICS drops; the kernel resets them on each read */
	bool vnet;          /* PACKET_VNET_HDR: a 10-byte header on every frame */
	struct dev_cut cut; /* rx super-frames being cut, and TP_STATUS_COPY frames */
	struct dev_txf txf[TX_BATCH]; /* tx_sync's frames: their iovecs */
	struct mmsghdr msgs[TX_BATCH];
};

static struct packet_dev *pk_of(struct dev *d)
{
	return (struct packet_dev *)d;
}

/* Frames do not straddle blocks; the tail of each block is unused. */
static struct tpacket2_hdr *frame(struct packet_dev *p, uint32_t i)
{
	return (struct tpacket2_hdr *)(p->map + (size_t)(i / FRAMES_PER_BLOCK) * BLOCK_SIZE +
				       (size_t)(i % FRAMES_PER_BLOCK) * FRAME_SIZE);
}

/* Copy ring frame h (status st) into buffer dst; returns the length, or 0
 * to drop it. */
static uint32_t frame_copy(const struct tpacket2_hdr *h, uint32_t st, uint8_t *dst,
			   uint32_t buf_size)
{
	const uint8_t *src = (const uint8_t *)h + h->tp_mac;
	uint32_t len = h->tp_snaplen;

	if (len != h->tp_len || len == 0 || len > buf_size ||
	    (size_t)h->tp_mac + len > FRAME_SIZE)
		return 0; /* cut by the ring, or larger than a buffer */
	if (!(st & TP_STATUS_VLAN_VALID)) {
		memcpy(dst, src, len);
		return len;
	}
	/* The kernel strips an 802.1Q/802.1ad tag into the metadata; put it
	 * back so the stack sees the frame as it was on the wire. */
	if (len < 12 || len + 4 > buf_size)
		return 0;
	uint16_t tpid = (st & TP_STATUS_VLAN_TPID_VALID) ? h->tp_vlan_tpid : 0x8100;
	uint16_t tci = h->tp_vlan_tci;
	memcpy(dst, src, 12);
	dst[12] = (uint8_t)(tpid >> 8);
	dst[13] = (uint8_t)tpid;
	dst[14] = (uint8_t)(tci >> 8);
	dst[15] = (uint8_t)tci;
	memcpy(dst + 16, src + 12, len - 12);
	return len + 4;
}

/* One ring frame with PACKET_VNET_HDR: its header is the 10 bytes before
 * the MAC header.  A frame larger than a ring frame (a super-frame from the
 * peer's TSO or GRO: a veth passes them whole) is cut short in the ring
 * and marked TP_STATUS_COPY: the whole of it waits on the socket's queue
 * (PACKET_COPY_THRESH), where recvmsg takes it, header first, into the
 * cutter's scratch.  The queue is filled in ring order, before the status
 * flips (tpacket_rcv), so the frame at the queue's head is this one.
 * (recvmsg gives no VLAN tag the kernel stripped: a tagged super-frame
 * comes untagged; PACKET_AUXDATA would carry it, and skiff uses none.) */
static int packet_rx_vnet(struct packet_dev *p, const struct tpacket2_hdr *h, uint32_t st,
			  uint32_t *tail, uint32_t head)
{
	struct dev *d = &p->dev;
	struct ring *r = d->rx;
	uint8_t hb[VNET_HLEN_LEGACY];
	struct vnet_hdr vh;
	uint8_t *dst;
	uint32_t len;

	if (st & TP_STATUS_COPY) {
		struct iovec iov[2] = {{hb, sizeof(hb)}, {p->cut.buf, DEV_VNET_SCRATCH}};
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
		ssize_t n;
		do {
			n = recvmsg(p->fd, &m, MSG_DONTWAIT);
			d->stats.rx_syscalls++;
		} while (n < 0 && errno == EINTR);
		if (n < (ssize_t)sizeof(hb) || (m.msg_flags & MSG_TRUNC)) {
			d->stats.rx_drops++;
			return 0;
		}
		vnet_hdr_read(hb, &vh);
		dst = p->cut.buf;
		len = (uint32_t)n - (uint32_t)sizeof(hb);
	} else {
		if (h->tp_mac < TPACKET2_HDRLEN + VNET_HLEN_LEGACY) {
			d->stats.rx_drops++;
			return 0;
		}
		vnet_hdr_read((const uint8_t *)h + h->tp_mac - VNET_HLEN_LEGACY, &vh);
		struct ring_slot *s = ring_slot(r, *tail);
		if (s->buf_idx >= r->nbufs)
			return -EINVAL;
		bool gso = vh.gso_type != VNET_GSO_NONE;
		dst = gso ? p->cut.buf : ring_buf(r, s->buf_idx);
		len = frame_copy(h, st, dst, gso ? DEV_VNET_SCRATCH : r->buf_size);
		if (len == 0) {
			d->stats.rx_drops++;
			return 0;
		}
		/* frame_copy put a stripped VLAN tag back: the offsets move. */
		if (st & TP_STATUS_VLAN_VALID)
			vh.csum_start = (uint16_t)(vh.csum_start + 4);
	}
	/* The kernel's word that the checksum is fine (CHECKSUM_UNNECESSARY),
	 * where the header does not already say NEEDS_CSUM. */
	if ((st & TP_STATUS_CSUM_VALID) && !(vh.flags & VNET_F_NEEDS_CSUM))
		vh.flags |= VNET_F_DATA_VALID;
	return dev_vnet_rx(d, &p->cut, &vh, dst, len, tail, head);
}

static int packet_rx_sync(struct dev *d)
{
	struct packet_dev *p = pk_of(d);
	struct ring *r = d->rx;
	uint32_t head = ring_load(&r->head);
	uint32_t tail = r->tail, t0 = tail;
	int rc = 0;

	d->stats.rx_syncs++;
	if (tail - head > r->num_slots)
		return -EINVAL;
	if (p->cut.pending && !dev_vnet_drain(d, &p->cut, &tail, head, &rc))
		goto out;
	while (tail - head < r->num_slots) {
		struct tpacket2_hdr *h = frame(p, p->next);
		/* Acquire: the frame and its header are visible once the
		 * status is. */
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		const struct sockaddr_ll *sll;

		if (!(st & TP_STATUS_USER))
			break;
		sll = (const struct sockaddr_ll *)((uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
		if (sll->sll_pkttype == PACKET_OUTGOING) {
			/* our own tx, on kernels without IGNORE_OUTGOING; a
			 * large one also went to the socket queue: take it off,
			 * or the queue and the ring fall out of step. */
			if (st & TP_STATUS_COPY) {
				uint8_t sink[VNET_HLEN_LEGACY];
				(void)recv(p->fd, sink, sizeof(sink), MSG_DONTWAIT | MSG_TRUNC);
				d->stats.rx_syscalls++;
			}
		} else if (p->vnet) {
			rc = packet_rx_vnet(p, h, st, &tail, head);
			if (rc < 0)
				break; /* leave the frame in the ring: nothing taken */
		} else {
			struct ring_slot *s = ring_slot(r, tail);
			if (s->buf_idx >= r->nbufs) {
				/* Leave the frame in the ring: nothing taken. */
				rc = -EINVAL;
				break;
			}
			uint32_t len = frame_copy(h, st, ring_buf(r, s->buf_idx), r->buf_size);
			if (len == 0) {
				d->stats.rx_drops++;
			} else {
				s->len = (uint16_t)len;
				s->flags = 0;
				d->stats.rx_frames++;
				d->stats.rx_bytes += len;
				tail++;
			}
		}
		/* Release: our reads of the frame happen before the kernel
		 * may reuse it. */
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		p->next = p->next + 1 == FRAME_NR ? 0 : p->next + 1;
		if (p->cut.pending)
			break; /* the ring is full of segments; the rest next time */
	}
out:
	ring_store(&r->tail, tail);
	return rc < 0 ? rc : (int)(tail - t0);
}

/* One message per frame: with PACKET_VNET_HDR its 10-byte header first
 * (the first 10 of the slot's ring_vnet, or zeros), then the frame's slots,
 * one iovec each (dev_vnet_tx_frame). */
static int packet_tx_sync(struct dev *d)
{
	struct packet_dev *p = pk_of(d);
	struct ring *r = d->tx;
	uint32_t head = ring_load(&r->head);
	uint32_t i = r->tail - r->num_slots; /* first handed-over slot */
	struct mmsghdr *msgs = p->msgs;
	int sent = 0;

	d->stats.tx_syncs++;
	if (head - i > r->num_slots)
		return -EINVAL;
	while (i != head) {
		unsigned int m = 0, done = 0;

		while (i != head && m < TX_BATCH) {
			struct dev_txf *f = &p->txf[m];
			i += dev_vnet_tx_frame(d, i, head, p->vnet ? VNET_HLEN_LEGACY : 0, f);
			if (!f->ok) {
				d->stats.tx_drops++;
				continue;
			}
			memset(&msgs[m], 0, sizeof(msgs[m]));
			msgs[m].msg_hdr.msg_iov = f->iov;
			msgs[m].msg_hdr.msg_iovlen = (size_t)f->niov;
			m++;
		}
		/* sendmmsg stops at the first failing message; that one is
		 * dropped and the rest go in the next call. */
		while (done < m) {
			int k = sendmmsg(p->fd, msgs + done, m - done, MSG_DONTWAIT);
			d->stats.tx_syscalls++;
			if (k < 0) {
				if (errno == EINTR)
					continue;
				d->stats.tx_drops++;
				done++;
				continue;
			}
			for (int j = 0; j < k; j++)
				dev_vnet_tx_count(d, &p->txf[done + (unsigned)j]);
			sent += k;
			done += (unsigned)k;
		}
	}
	ring_store(&r->tail, head + r->num_slots);
	return sent;
}

static int packet_poll_fd(struct dev *d)
{
	return pk_of(d)->fd;
}

static void packet_close(struct dev *d)
{
	struct packet_dev *p = pk_of(d);

	if (p->map != NULL)
		munmap(p->map, p->map_size);
	if (p->fd >= 0)
		close(p->fd);
	dev_cut_free(&p->cut);
	dev_region_free(&p->region);
	free(p);
}

/* Frames the kernel dropped because our mmap'ed ring was full. */
static uint64_t packet_lower_drops(struct dev *d)
{
	struct packet_dev *p = pk_of(d);
	struct tpacket_stats st; /* the V2 layout */
	socklen_t len = sizeof(st);
	if (getsockopt(p->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
		p->kdrops += st.tp_drops;
	d->stats.rx_syscalls++;
	return p->kdrops;
}

static const struct dev_ops packet_ops = {
	.lower_drops = packet_lower_drops,
	.kind = "packet",
	.rx_sync = packet_rx_sync,
	.tx_sync = packet_tx_sync,
	.poll_fd = packet_poll_fd,
	.close = packet_close,
};

static uint16_t iface_mtu(int fd, const char *name)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0 || ifr.ifr_mtu <= 0)
		return 1500;
	return (uint16_t)SK_MIN(ifr.ifr_mtu, 1500);
}

/* Offloads (dev.h), set before the ring exists (the kernel refuses
 * PACKET_VNET_HDR once it does).  The kernel hands AF_PACKET whatever the
 * interface received, offloads or not: frames whose checksum its sender
 * left unfinished (a veth peer's CHECKSUM_PARTIAL, TP_STATUS_CSUMNOTREADY)
 * and super-frames (a veth passes its peer's TSO frames whole).  The vnet
 * header tells us which and where; PACKET_COPY_THRESH sends a frame too
 * large for a ring frame to the socket queue whole instead of cutting it
 * short, and a large receive buffer gives that queue room for a few.  On
 * tx the kernel takes NEEDS_CSUM and TCP GSO headers from us as they are
 * (packet_snd).  Without offloads none of this is set: frames as before. */
static int packet_offload(struct packet_dev *p, const char *name, uint32_t allow, char *err,
			  size_t errlen)
{
	int one = 1, rcvbuf = 4 << 20;

	allow &= DEV_OFF_ALL;
	if (!(allow & DEV_OFF_TX_CSUM))
		allow &= ~(DEV_OFF_TSO4 | DEV_OFF_TSO6);
	if (allow == 0)
		return 0;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0)
		return dev_err(err, errlen, "packet:%s: PACKET_VNET_HDR: %s", name, strerror(errno));
	if (allow & DEV_OFF_RX_GSO) {
		if (setsockopt(p->fd, SOL_PACKET, PACKET_COPY_THRESH, &one, sizeof(one)) < 0)
			return dev_err(err, errlen, "packet:%s: PACKET_COPY_THRESH: %s", name,
				       strerror(errno));
		/* FORCE needs CAP_NET_ADMIN; else what net.core.rmem_max allows. */
		if (setsockopt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
			(void)setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	if (dev_cut_init(&p->cut) != 0)
		return dev_err(err, errlen, "packet:%s: out of memory", name);
	p->vnet = true;
	p->dev.offload = allow;
	p->dev.tso_max = (allow & (DEV_OFF_TSO4 | DEV_OFF_TSO6)) ? 65535u + 14u : 0;
	return 0;
}

int packet_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
		size_t errlen)
{
	struct packet_dev *p;
	struct tpacket_req req;
	struct packet_mreq mr;
	struct sockaddr_ll sll;
	int ifindex, v = TPACKET_V2, one = 1;

	ifindex = (int)if_nametoindex(name);
	if (ifindex == 0)
		return dev_err(err, errlen, "packet:%s: no such interface", name);
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return dev_err(err, errlen, "packet:%s: out of memory", name);
	/* Protocol 0: receive nothing until bind, so the ring never holds
	 * frames of other interfaces from before the bind. */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (p->fd < 0) {
		dev_err(err, errlen, "packet:%s: socket: %s%s", name, strerror(errno),
			errno == EPERM ? " (needs CAP_NET_RAW)" : "");
		goto fail;
	}
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) {
		dev_err(err, errlen, "packet:%s: TPACKET_V2: %s", name, strerror(errno));
		goto fail;
	}
	if (packet_offload(p, name, cfg->offload_allow, err, errlen) != 0)
		goto fail;
	/* Best effort: the rx path filters PACKET_OUTGOING anyway. */
	(void)setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));

	memset(&req, 0, sizeof(req));
	req.tp_block_size = BLOCK_SIZE;
	req.tp_block_nr = BLOCK_NR;
	req.tp_frame_size = FRAME_SIZE;
	req.tp_frame_nr = FRAME_NR;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		dev_err(err, errlen, "packet:%s: PACKET_RX_RING: %s", name, strerror(errno));
		goto fail;
	}
	p->map_size = (size_t)BLOCK_SIZE * BLOCK_NR;
	p->map = mmap(NULL, p->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, p->fd,
		      0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		dev_err(err, errlen, "packet:%s: mmap rx ring: %s", name, strerror(errno));
		goto fail;
	}

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		dev_err(err, errlen, "packet:%s: bind: %s", name, strerror(errno));
		goto fail;
	}
	/* Workers (dev_open.h): every socket joins one fanout group, and the
	 * group's classic BPF program (steer_bpf.h) hands each frame to
	 * member flow_hash_frame(frame) % members.  The kernel keeps the
	 * members in an array in the order they joined (a new member goes at
	 * index num_members, and the program's return value modulo that count
	 * indexes it: af_packet.c, __fanout_link and fanout_demux_bpf), and the
	 * callers open queue 0, 1, ... in order on one thread, so member k is
	 * queue k.  Until the program is set (the first member, just below)
	 * the kernel sends every frame to member 0.  Joined after bind, as the
	 * kernel requires. */
	if (cfg->nqueues > 1) {
		struct sock_filter prog[STEER_BPF_MAX];
		struct sock_fprog fp = {.len = (unsigned short)steer_cbpf_build(prog, STEER_BPF_MAX),
					.filter = prog};
		int fan = (int)cfg->group | (PACKET_FANOUT_CBPF << 16);
		if (setsockopt(p->fd, SOL_PACKET, PACKET_FANOUT, &fan, sizeof(fan)) < 0) {
			dev_err(err, errlen, "packet:%s: PACKET_FANOUT group %u: %s", name,
				cfg->group, strerror(errno));
			goto fail;
		}
		if (fp.len == 0 ||
		    setsockopt(p->fd, SOL_PACKET, PACKET_FANOUT_DATA, &fp, sizeof(fp)) < 0) {
			dev_err(err, errlen, "packet:%s: PACKET_FANOUT_DATA (steering program): %s",
				name, fp.len ? strerror(errno) : "not built");
			goto fail;
		}
	}
	p->dev.flow_steered = true; /* one queue, or the program above */
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
		dev_err(err, errlen, "packet:%s: promiscuous mode: %s", name, strerror(errno));
		goto fail;
	}
	if (dev_region_alloc(&p->dev, &p->region, cfg->num_slots, err, errlen) != 0)
		goto fail;
	p->dev.ops = &packet_ops;
	p->dev.mtu = iface_mtu(p->fd, name);
	dev_random_mac(p->dev.mac);
	*out = &p->dev;
	return 0;
fail:
	if (p->map != NULL)
		munmap(p->map, p->map_size);
	if (p->fd >= 0)
		close(p->fd);
	dev_cut_free(&p->cut);
	dev_region_free(&p->region);
	free(p);
	return -1;
}
