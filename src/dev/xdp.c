/* xdp.c — xdp:IFACE, an AF_XDP socket on queue 0 (or, for serve
 * --workers, queue dev_config.queue: one socket and UMEM per worker, all
 * through the one program libxdp attaches) through libxdp.
 *
 * libxdp loads its default XDP program (xsk_def_xdp_prog, which redirects
 * every frame of a queue that has a socket in its xsks_map, and passes the
 * rest to Linux) and binds the socket.  We try, in order:
 *   1. driver (native) XDP, zero-copy      — real NICs with XSK support;
 *   2. driver XDP, copy mode               — veth and most virtual devices;
 *   3. generic (skb) XDP, copy mode        — anything.
 * On a veth end inside a namespace (kernel 6.18) step 2 is what works: veth
 * has native XDP but no zero-copy.  Receiving needs nothing on the peer:
 * veth runs our program on frames the peer transmits.  (A peer XDP program
 * or GRO is only needed for XDP_REDIRECT *into* a veth, which we never do:
 * copy-mode tx builds an skb and hands it to the veth driver.)  Attaching
 * native XDP to a veth turns TSO off on the peer (checked with
 * ETHTOOL_GTSO), so the peer's kernel segments before the veth and no
 * super-frame reaches us; checksum offload is still the scripts' job.
 *
 * Frames are copied between UMEM frames and the ring's buffers, both ways.
 * This keeps one ring ABI for every device; putting the ring's buffer pool
 * inside the UMEM would remove the copies and is the obvious next step.
 *
 * Syscalls: rx costs none (ring peeks) unless the fill ring asks for a
 * wake-up; tx costs one sendto() per batch when the tx ring asks for one,
 * which in copy mode is always (the kernel then sends up to its tx budget
 * per call, historically 32 frames, so large batches take several kicks).
 *
 * The MAC is the interface's own: XDP sees frames after the NIC's address
 * filter, and the stack owns the interface's queues anyway.
 *
 * bpffs: `ip netns exec` mounts a fresh /sys without /sys/fs/bpf, so libxdp
 * cannot use its multi-program dispatcher and attaches xsk_def_prog alone
 * ("legacy" mode, one XDP program per interface).  That is fine for us.
 *
 * Cleanup: close deletes the socket, and libxdp detaches its program with
 * it (checked: `ip link` shows no prog/xdp after close).  After a crash the
 * program stays attached (harmless: with no socket in its map it passes
 * every frame to Linux), and in legacy mode libxdp will not attach over it
 * (EBUSY); so when every attempt fails we detach whatever XDP program is on
 * the interface, once, and try again (clear_stale_prog).  Tested with a
 * SIGKILLed run in tests/dev_smoke.sh.
 *
 * Privileges (measured on kernel 6.18, libxdp 1.3, as a non-root user in
 * a namespace; docs/operations.md "Install and capabilities"): CAP_NET_RAW (the xsk
 * socket) and CAP_NET_ADMIN (attaching to the interface) are not enough.
 * Loading the program takes CAP_BPF and CAP_PERFMON (the verifier refuses
 * the dispatcher's pointer comparison without CAP_PERFMON), and then libxdp
 * reads the attached program back by id (BPF_PROG_GET_FD_BY_ID), which
 * the kernel allows only with CAP_SYS_ADMIN; CAP_SYS_ADMIN covers all
 * three.  The UMEM (8 MiB) is locked memory charged to the user: without
 * CAP_IPC_LOCK, RLIMIT_MEMLOCK must hold several of them, because a failed
 * attempt's UMEM is still charged when the next attempt registers its own
 * (an 8 MiB limit passes the first, zero-copy attempt's registration and
 * fails the second's with ENOBUFS).  xdp_open names the missing privilege
 * in its error (why_failed).
 *
 * Kernel-side losses (xsk rx ring full, fill ring empty) are counted by
 * the kernel (getsockopt XDP_STATISTICS), not in dev.rx_drops: reading
 * them costs a syscall.
 */
#include <errno.h>
#include <stdarg.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "dev_impl.h"

#define XFRAME_SIZE 2048u   /* the smallest UMEM frame; a 1514-byte frame fits */
#define XRING 2048u         /* every xsk ring (fill, comp, rx, tx) */
#define NFRAMES (2u * XRING) /* first half rx (fill), second half tx */

struct xdp_dev {
	struct dev dev; /* first */
	struct dev_region region;
	uint8_t *umem_area;
	size_t umem_size;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, xtx;
	struct xsk_ring_cons comp, xrx;
	int fd;
	uint32_t tx_next;  /* next handed-over ring slot not yet queued to xtx */
	uint32_t tx_nfree; /* free tx UMEM frames, a stack of addresses */
	uint64_t tx_free[XRING];
	/* rx UMEM frames we are done with but could not put in the fill ring
	 * yet: the kernel publishes its fill consumer index lazily, so the
	 * ring can look full while the frames sit in the rx ring. */
	uint32_t refill_n;
	uint64_t refill[XRING];
	const char *mode;  /* which of the attempts above worked */
};

static struct xdp_dev *xd_of(struct dev *d)
{
	return (struct xdp_dev *)d;
}

/* Give done rx frames back to the kernel, as many as the fill ring takes. */
static void refill(struct xdp_dev *x)
{
	uint32_t fidx = 0, n;

	if (x->refill_n == 0)
		return;
	n = xsk_prod_nb_free(&x->fill, x->refill_n);
	if (n > x->refill_n)
		n = x->refill_n;
	if (n == 0 || xsk_ring_prod__reserve(&x->fill, n, &fidx) != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fill, fidx + i) = x->refill[--x->refill_n];
	xsk_ring_prod__submit(&x->fill, n);
	if (xsk_ring_prod__needs_wakeup(&x->fill)) {
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		x->dev.stats.rx_syscalls++;
	}
}

static int xdp_rx_sync(struct dev *d)
{
	struct xdp_dev *x = xd_of(d);
	struct ring *r = d->rx;
	uint32_t head = ring_load(&r->head);
	uint32_t tail = r->tail;
	uint32_t room, got, idx = 0;
	int n = 0;

	d->stats.rx_syncs++;
	if (tail - head > r->num_slots)
		return -EINVAL;
	room = r->num_slots - (tail - head);
	got = room ? xsk_ring_cons__peek(&x->xrx, room, &idx) : 0;
	for (uint32_t i = 0; i < got; i++) {
		const struct xdp_desc *desc = xsk_ring_cons__rx_desc(&x->xrx, idx + i);
		uint64_t addr = desc->addr;
		struct ring_slot *s = ring_slot(r, tail);

		if (desc->len == 0 || desc->len > r->buf_size || s->buf_idx >= r->nbufs) {
			d->stats.rx_drops++;
		} else {
			memcpy(ring_buf(r, s->buf_idx), xsk_umem__get_data(x->umem_area, addr),
			       desc->len);
			s->len = (uint16_t)desc->len;
			s->flags = 0;
			d->stats.rx_frames++;
			d->stats.rx_bytes += desc->len;
			tail++;
			n++;
		}
		/* The address may point past the frame start (headroom); the fill
		 * ring wants the frame itself.  There are XRING rx frames in all,
		 * so the stash cannot overflow. */
		x->refill[x->refill_n++] = addr - addr % XFRAME_SIZE;
	}
	if (got) {
		xsk_ring_cons__release(&x->xrx, got);
		ring_store(&r->tail, tail);
	}
	refill(x);
	return n;
}

/* Move completed tx UMEM frames back to the free stack. */
static void reap_completions(struct xdp_dev *x)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&x->comp, XRING, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->tx_free[x->tx_nfree++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	if (n)
		xsk_ring_cons__release(&x->comp, n);
}

/* Tell the kernel the tx ring has work.  Copy mode sends at most its tx
 * budget per call and answers EAGAIN while more is queued, so we kick again
 * until the kernel has taken every descriptor, bounded by what one full
 * ring could need. */
static void tx_kick(struct xdp_dev *x)
{
	for (uint32_t tries = 0; tries < XRING / 32 + 1; tries++) {
		if (!xsk_ring_prod__needs_wakeup(&x->xtx))
			return;
		int rc = (int)sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		x->dev.stats.tx_syscalls++;
		if (rc >= 0 || (errno != EAGAIN && errno != EBUSY && errno != EINTR))
			return;
		/* EAGAIN / EBUSY: the kernel stopped early; go on only if it
		 * really left descriptors behind. */
		if (xsk_prod_nb_free(&x->xtx, XRING) == XRING)
			return;
	}
}

/* Queue handed-over slots [tx_next, head) as tx descriptors; returns how
 * many were queued.  Stops early when UMEM frames or descriptors run out:
 * those slots stay handed over (tail does not move past them), which is
 * the ring's back-pressure, and the next tx_sync retries them. */
static int tx_queue(struct xdp_dev *x, uint32_t head)
{
	struct dev *d = &x->dev;
	struct ring *r = d->tx;
	uint32_t queued = 0, idx = 0;

	while (x->tx_next != head) {
		struct ring_slot *s = ring_slot(r, x->tx_next);

		if (s->buf_idx >= r->nbufs || s->len == 0 || s->len > XFRAME_SIZE) {
			d->stats.tx_drops++;
			x->tx_next++;
			continue;
		}
		if (x->tx_nfree == 0 || xsk_ring_prod__reserve(&x->xtx, 1, &idx) != 1)
			break;
		uint64_t addr = x->tx_free[--x->tx_nfree];
		struct xdp_desc *desc = xsk_ring_prod__tx_desc(&x->xtx, idx);
		memcpy(xsk_umem__get_data(x->umem_area, addr), ring_buf(r, s->buf_idx), s->len);
		desc->addr = addr;
		desc->len = s->len;
		desc->options = 0;
		d->stats.tx_frames++;
		d->stats.tx_bytes += s->len;
		x->tx_next++;
		queued++;
	}
	/* Reserved one at a time, published at once: the kernel sees the
	 * whole batch. */
	if (queued)
		xsk_ring_prod__submit(&x->xtx, queued);
	return (int)queued;
}

static int xdp_tx_sync(struct dev *d)
{
	struct xdp_dev *x = xd_of(d);
	struct ring *r = d->tx;
	uint32_t head = ring_load(&r->head);
	int sent;

	d->stats.tx_syncs++;
	if (head - (r->tail - r->num_slots) > r->num_slots)
		return -EINVAL;
	reap_completions(x);
	sent = tx_queue(x, head);
	if (sent)
		tx_kick(x);
	if (x->tx_next != head) {
		/* Out of UMEM frames or descriptors: the kick above (or this
		 * one) lets copy mode complete some; take them and go once
		 * more.  No further retry: the caller's next sync does it. */
		if (!sent)
			tx_kick(x);
		reap_completions(x);
		int more = tx_queue(x, head);
		if (more)
			tx_kick(x);
		sent += more;
	}
	/* The slots up to tx_next were copied out: they are free again. */
	ring_store(&r->tail, x->tx_next + r->num_slots);
	return sent;
}

static int xdp_poll_fd(struct dev *d)
{
	return xd_of(d)->fd;
}

static void xdp_teardown(struct xdp_dev *x)
{
	if (x->xsk != NULL)
		xsk_socket__delete(x->xsk);
	x->xsk = NULL;
	if (x->umem != NULL)
		xsk_umem__delete(x->umem);
	x->umem = NULL;
}

static void xdp_close(struct dev *d)
{
	struct xdp_dev *x = xd_of(d);

	xdp_teardown(x);
	if (x->umem_area != NULL)
		munmap(x->umem_area, x->umem_size);
	dev_region_free(&x->region);
	free(x);
}

/* Frames the kernel could not give us: rx ring full, fill ring empty,
 * invalid descriptors.  The kernel keeps these totals for the socket. */
static uint64_t xdp_lower_drops(struct dev *d)
{
	struct xdp_dev *x = (struct xdp_dev *)d;
	struct xdp_statistics st;
	socklen_t len = sizeof(st);
	d->stats.rx_syscalls++;
	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
		return 0;
	return st.rx_dropped + st.rx_invalid_descs + st.rx_ring_full + st.rx_fill_ring_empty_descs;
}

static const struct dev_ops xdp_ops = {
	.lower_drops = xdp_lower_drops,
	.kind = "xdp",
	.rx_sync = xdp_rx_sync,
	.tx_sync = xdp_tx_sync,
	.poll_fd = xdp_poll_fd,
	.close = xdp_close,
};

/* libxdp and libbpf report through print callbacks.  Their warnings are
 * expected on the way to a working mode (no bpffs inside `ip netns exec`,
 * so no dispatcher; sections libbpf 1.1 does not know), so we keep only the
 * last one and show it if every attempt fails.  SKIFF_XDP_DEBUG=1 prints
 * them all, and each attempt's result. */
static char last_warning[160];
/* Set when any warning of this open said a privilege was missing: libxdp
 * reports some EPERMs only in a warning and returns another error. */
static bool warned_denied;

static bool xdp_debug(void)
{
	return getenv("SKIFF_XDP_DEBUG") != NULL;
}

static void keep_warning(const char *fmt, va_list ap)
{
	va_list ap2;
	size_t n;

	va_copy(ap2, ap);
	if (xdp_debug())
		vfprintf(stderr, fmt, ap2);
	va_end(ap2);
	vsnprintf(last_warning, sizeof(last_warning), fmt, ap);
	if (strstr(last_warning, "Operation not permitted") || strstr(last_warning, "Permission denied"))
		warned_denied = true;
	n = strlen(last_warning);
	while (n > 0 && last_warning[n - 1] == '\n')
		last_warning[--n] = '\0';
}

static int xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level <= LIBXDP_WARN)
		keep_warning(fmt, ap);
	return 0;
}

static int bpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level <= LIBBPF_WARN)
		keep_warning(fmt, ap);
	return 0;
}

/* Create the UMEM and a socket with one attach/bind mode. */
static int xdp_try(struct xdp_dev *x, const char *name, uint32_t queue, uint32_t xdp_flags,
		   uint16_t bind_flags)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XRING,
		.comp_size = XRING,
		.frame_size = XFRAME_SIZE,
		.frame_headroom = 0,
		.flags = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = XRING,
		.tx_size = XRING,
		.libxdp_flags = 0,
		.xdp_flags = xdp_flags,
		.bind_flags = (uint16_t)(bind_flags | XDP_USE_NEED_WAKEUP),
	};
	int rc;

	rc = xsk_umem__create(&x->umem, x->umem_area, x->umem_size, &x->fill, &x->comp, &ucfg);
	if (rc != 0) {
		x->umem = NULL;
		return rc;
	}
	rc = xsk_socket__create(&x->xsk, name, queue, x->umem, &x->xrx, &x->xtx, &scfg);
	if (rc != 0) {
		x->xsk = NULL;
		xdp_teardown(x);
		return rc;
	}
	return 0;
}

/* A previous run that crashed left libxdp's program attached.  Normally
 * xsk_socket__create reuses it; if every attempt failed we detach whatever
 * XDP program is on the interface, once, and try again.  Only called after
 * a failure, and the interface is ours by the --dev contract. */
static int clear_stale_prog(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	int rc = -1;

	if (mp == NULL || libxdp_get_error(mp))
		return -1;
	if (xdp_multiprog__main_prog(mp) != NULL)
		rc = xdp_multiprog__detach(mp);
	xdp_multiprog__close(mp);
	libxdp_clean_references(ifindex);
	return rc;
}

/* Whether this process has capability CAP in its effective set. */
static bool have_cap(unsigned cap)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0 || cap >= 64)
		return false;
	return (data[cap / 32].effective >> (cap % 32)) & 1u;
}

/* The error once every attempt failed.  What is missing, when we can tell
 * (see "Privileges" above); else the last error and libxdp's last warning.
 * A missing privilege hides behind other errors (a half-attached program
 * makes the next mode EBUSY), so we go by what any attempt saw, not the
 * last one's code. */
static int why_failed(const char *name, unsigned queue, int rc, bool denied, bool nobufs,
		      char *err, size_t errlen)
{
	bool admin = have_cap(CAP_SYS_ADMIN);
	struct rlimit rl;

	if (nobufs && !have_cap(CAP_IPC_LOCK) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		return dev_err(err, errlen,
			       "xdp:%s: UMEM: %s: the %zu MiB UMEM is locked memory and "
			       "RLIMIT_MEMLOCK is %llu KiB: allow 64 MiB (LimitMEMLOCK=64M) or "
			       "give CAP_IPC_LOCK%s",
			       name, strerror(ENOBUFS), (size_t)NFRAMES * XFRAME_SIZE >> 20,
			       (unsigned long long)rl.rlim_cur >> 10,
			       admin ? "" : "; AF_XDP also needs CAP_SYS_ADMIN");
	if ((denied || rc == -EPERM || rc == -EACCES) && !admin)
		return dev_err(err, errlen,
			       "xdp:%s: AF_XDP socket on queue %u: not permitted: besides CAP_NET_RAW "
			       "and CAP_NET_ADMIN it needs CAP_SYS_ADMIN (libxdp loads an XDP "
			       "program and reads it back by id)",
			       name, queue);
	return dev_err(err, errlen, "xdp:%s: AF_XDP socket on queue %u: %s%s%s", name, queue,
		       strerror(-rc), last_warning[0] ? "; libxdp: " : "", last_warning);
}

int xdp_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
	     size_t errlen)
{
	static const struct {
		uint32_t xdp_flags;
		uint16_t bind_flags;
		const char *mode;
	} tries[] = {
		{XDP_FLAGS_DRV_MODE, XDP_ZEROCOPY, "native zero-copy"},
		{XDP_FLAGS_DRV_MODE, XDP_COPY, "native copy"},
		{XDP_FLAGS_SKB_MODE, XDP_COPY, "generic copy"},
	};
	struct xdp_dev *x;
	struct ifreq ifr;
	int ifindex, rc = -ENODEV, s;
	uint32_t fidx = 0;
	bool denied = false, nobufs = false;

	ifindex = (int)if_nametoindex(name);
	if (ifindex == 0)
		return dev_err(err, errlen, "xdp:%s: no such interface", name);
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return dev_err(err, errlen, "xdp:%s: out of memory", name);
	x->fd = -1;
	x->umem_size = (size_t)NFRAMES * XFRAME_SIZE;
	x->umem_area = mmap(NULL, x->umem_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->umem_area == MAP_FAILED) {
		x->umem_area = NULL;
		dev_err(err, errlen, "xdp:%s: UMEM mmap: %s", name, strerror(errno));
		goto fail;
	}
	libxdp_set_print(xdp_print);
	libbpf_set_print(bpf_print);
	last_warning[0] = '\0';
	warned_denied = false;
	/* Queue 0 busy (EBUSY on every mode) right after another process's
	 * socket on it closed: the kernel frees an AF_XDP socket after its
	 * owner has exited, so a server restarted at once can find the queue
	 * still taken.  Try again for up to 2 s before calling it taken. */
	for (int busy = 0; busy < 40 && x->xsk == NULL; busy++) {
		if (busy) {
			if (rc != -EBUSY || denied || warned_denied || nobufs)
				break;
			usleep(50 * 1000);
		}
		for (int pass = 0; pass < 2 && x->xsk == NULL; pass++) {
			for (size_t i = 0; i < SK_ARRAY_LEN(tries); i++) {
				rc = xdp_try(x, name, cfg->queue, tries[i].xdp_flags,
					     tries[i].bind_flags);
				if (xdp_debug())
					fprintf(stderr, "xdp:%s: %s: %s\n", name, tries[i].mode,
						rc ? strerror(-rc) : "ok");
				if (rc == 0) {
					x->mode = tries[i].mode;
					break;
				}
				denied |= rc == -EPERM || rc == -EACCES;
				nobufs |= rc == -ENOBUFS;
			}
			/* Queue > 0 (a worker, dev_open.h): the program on the
			 * interface is queue 0's socket's, never stale. */
			if (x->xsk == NULL && (pass > 0 || busy > 0 || cfg->queue > 0 ||
					       clear_stale_prog(ifindex) != 0))
				break;
		}
	}
	if (x->xsk == NULL) {
		why_failed(name, cfg->queue, rc, denied || warned_denied, nobufs, err, errlen);
		goto fail;
	}
	x->fd = xsk_socket__fd(x->xsk);

	/* Every rx frame starts in the fill ring; every tx frame is free. */
	if (xsk_ring_prod__reserve(&x->fill, XRING, &fidx) != XRING) {
		dev_err(err, errlen, "xdp:%s: fill ring smaller than expected", name);
		goto fail;
	}
	for (uint32_t i = 0; i < XRING; i++)
		*xsk_ring_prod__fill_addr(&x->fill, fidx + i) = (uint64_t)i * XFRAME_SIZE;
	xsk_ring_prod__submit(&x->fill, XRING);
	for (uint32_t i = 0; i < XRING; i++)
		x->tx_free[i] = (uint64_t)(XRING + i) * XFRAME_SIZE;
	x->tx_nfree = XRING;

	if (dev_region_alloc(&x->dev, &x->region, cfg->num_slots, err, errlen) != 0)
		goto fail;
	x->dev.ops = &xdp_ops;
	x->dev.mtu = 1500;
	/* The NIC's RSS (or, on a veth, the kernel) picks the rx queue, with
	 * its own key: no program of ours can move a frame to another queue's
	 * socket (an XSKMAP redirect reaches only the socket bound to the
	 * queue the frame came in on).  So with more than one queue the
	 * device does not steer by flow_hash (docs/smp.md "Steering"). */
	x->dev.flow_steered = cfg->nqueues <= 1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s >= 0 && ioctl(s, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(x->dev.mac, ifr.ifr_hwaddr.sa_data, SK_MAC_LEN);
	else
		dev_random_mac(x->dev.mac);
	if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		x->dev.mtu = (uint16_t)SK_MIN(ifr.ifr_mtu, 1500);
	if (s >= 0)
		close(s);
	if (xdp_debug())
		fprintf(stderr, "xdp:%s: AF_XDP %s mode, queue %u\n", name, x->mode, cfg->queue);
	*out = &x->dev;
	return 0;
fail:
	xdp_teardown(x);
	if (x->umem_area != NULL)
		munmap(x->umem_area, x->umem_size);
	dev_region_free(&x->region);
	free(x);
	return -1;
}
