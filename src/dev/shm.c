/* shm.c — switch:NAME/PORT, a port of a running `skiff switch`.
 *
 * With dev_config nqueues N > 1 (a `--workers N` host), this opening is
 * queue `queue` of N of the port: an attachment of its own, with its own
 * region, eventfds and connection (swport.h QUEUES); the switch steers
 * each flow to one queue by wire/flow_hash.h.  Each worker opens its own.
 *
 * Attach: connect to the switch's abstract unix socket, ask for PORT, get
 * a memfd with a ring region and two eventfds (swport.h), map it, check
 * it with ring_region_check.  From then on frames move through shared
 * memory only: the switch fills our rx ring and drains our tx ring on its
 * own, so both syncs are a few loads and stores, and a syscall happens
 * only when one side sleeps:
 *   rx_sync  counts what arrived; after a park it also drains the eventfd
 *            and notices a switch that went away (-EPIPE).
 *   tx_sync  counts what was handed over; kicks the switch's eventfd only
 *            if the switch said it sleeps (SWPORT_KF_SLEEPING).
 *   poll_fd  ARMS the wake-up (rx->cur = tail seen, fence, look again) and
 *            returns an epoll fd that is readable on a kick or when the
 *            switch's socket closes.  Call it right before sleeping, as
 *            the runner (runner/runner.c) does; an fd fetched once and kept in an event loop
 *            would also need the arming (a dev op for it would be cleaner).
 * The switch validates everything we write; we trust what it wrote after
 * ring_region_check, as a netmap user trusts its kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "dev_impl.h"
#include "shm.h"

struct shm_dev {
	struct dev dev; /* first: the ops cast struct dev * back to this */
	void *mem;
	size_t size;
	int sock;    /* the attachment: the switch frees the port when it closes */
	int efd_in;  /* the switch kicks it: rx frames while we sleep */
	int efd_out; /* we kick it: tx frames while the switch sleeps */
	int epfd;    /* efd_in + sock, what poll_fd returns */
	bool armed;  /* poll_fd set a wake-up point since the last rx_sync */
	uint32_t rx_seen; /* rx tail up to which frames were counted */
	uint32_t tx_seen; /* tx head up to which frames were counted */
};

static struct shm_dev *shm_of(struct dev *d)
{
	return (struct shm_dev *)d;
}

bool shm_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > SWPORT_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

socklen_t shm_switch_addr(const char *name, size_t len, struct sockaddr_un *addr)
{
	size_t pl = strlen(SWPORT_SOCK_PREFIX);

	if (!shm_name_ok(name, len))
		return 0;
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	/* sun_path[0] == 0: the abstract namespace, gone with the socket. */
	memcpy(addr->sun_path + 1, SWPORT_SOCK_PREFIX, pl);
	memcpy(addr->sun_path + 1 + pl, name, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + pl + len);
}

static int shm_rx_sync(struct dev *d)
{
	struct shm_dev *m = shm_of(d);
	struct ring *r = d->rx;
	uint32_t tail, n;

	d->stats.rx_syncs++;
	if (m->armed) {
		uint64_t v;
		char c;
		ssize_t got;

		m->armed = false;
		if (read(m->efd_in, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		got = recv(m->sock, &c, 1, MSG_DONTWAIT);
		d->stats.rx_syscalls += 2;
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			return -EPIPE; /* the switch is gone */
	}
	tail = ring_load(&r->tail);
	if (tail - r->head > r->num_slots)
		return -EINVAL;
	n = tail - m->rx_seen;
	for (uint32_t i = m->rx_seen; i != tail; i++)
		d->stats.rx_bytes += ring_slot(r, i)->len;
	d->stats.rx_frames += n;
	m->rx_seen = tail;
	return (int)n;
}

static int shm_tx_sync(struct dev *d)
{
	struct shm_dev *m = shm_of(d);
	struct ring *r = d->tx;
	uint32_t head = r->head, n = head - m->tx_seen;

	d->stats.tx_syncs++;
	if (n == 0)
		return 0;
	/* The switch reads head whenever it is awake, not only at our sync, so
	 * it may free slots while we fill them: a busy turn (100,000 handshakes)
	 * can hand over more than num_slots frames between two syncs.  That is
	 * not an error; only the last num_slots slots still hold their lengths. */
	uint32_t from = n > r->num_slots ? head - r->num_slots : m->tx_seen;
	for (uint32_t i = from; i != head; i++)
		d->stats.tx_bytes += ring_slot(r, i)->len;
	d->stats.tx_frames += n;
	m->tx_seen = head;
	/* head (published by the user with a release store) before kflags:
	 * the switch either sees our frames when it looks again, or we see
	 * that it sleeps. */
	swport_fence();
	if (__atomic_load_n(&r->kflags, __ATOMIC_RELAXED) & SWPORT_KF_SLEEPING) {
		uint64_t one = 1;
		if (write(m->efd_out, &one, sizeof(one)) < 0 && errno != EAGAIN)
			return -errno;
		d->stats.tx_syscalls++;
	}
	return (int)n;
}

static int shm_poll_fd(struct dev *d)
{
	struct shm_dev *m = shm_of(d);
	struct ring *r = d->rx;
	uint32_t tail = ring_load(&r->tail);

	/* Wake me once tail moves past what I saw; then look once more, so a
	 * frame published between the look and the store is not slept on. */
	__atomic_store_n(&r->cur, tail, __ATOMIC_RELAXED);
	swport_fence();
	if (ring_load(&r->tail) != r->head) {
		uint64_t one = 1;
		if (write(m->efd_in, &one, sizeof(one)) == (ssize_t)sizeof(one))
			d->stats.rx_syscalls++;
	}
	m->armed = true;
	return m->epfd;
}

static void shm_release(struct shm_dev *m)
{
	if (m->mem != NULL)
		munmap(m->mem, m->size);
	if (m->epfd >= 0)
		close(m->epfd);
	if (m->efd_in >= 0)
		close(m->efd_in);
	if (m->efd_out >= 0)
		close(m->efd_out);
	if (m->sock >= 0)
		close(m->sock);
	free(m);
}

static void shm_close(struct dev *d)
{
	shm_release(shm_of(d));
}

static const struct dev_ops shm_ops = {
	.kind = "switch",
	.rx_sync = shm_rx_sync,
	.tx_sync = shm_tx_sync,
	.poll_fd = shm_poll_fd,
	.close = shm_close,
};

/* Send the hello, receive the reply and its three fds. */
static int handshake(struct shm_dev *m, const char *spec, uint32_t port,
		     const struct dev_config *cfg, struct swport_reply *rep, int fds[3], char *err,
		     size_t errlen)
{
	struct swport_hello hello = {
		.magic = SWPORT_MAGIC,
		.version = SWPORT_VERSION,
		.port = port,
		.num_slots = cfg->num_slots,
		.queue = cfg->nqueues > 1 ? cfg->queue : 0,
		.nqueues = cfg->nqueues > 1 ? cfg->nqueues : 1,
	};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct iovec iov = {rep, sizeof(*rep)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c;
	ssize_t n;

	if (send(m->sock, &hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
		return dev_err(err, errlen, "%s: send: %s", spec, strerror(errno));
	memset(rep, 0, sizeof(*rep));
	do
		n = recvmsg(m->sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return dev_err(err, errlen, "%s: no answer from the switch: %s", spec,
			       strerror(errno));
	/* Take the fds first, whatever else is wrong, so none leaks. */
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(3 * sizeof(int)))
			memcpy(fds, CMSG_DATA(c), 3 * sizeof(int));
	}
	if ((size_t)n == sizeof(*rep) && rep->magic == SWPORT_MAGIC &&
	    rep->version != SWPORT_VERSION) {
		rep->msg[sizeof(rep->msg) - 1] = 0;
		return dev_err(err, errlen,
			       "%s: the switch speaks port protocol version %u, this skiff %u "
			       "(restart the switch with this build): %s",
			       spec, rep->version, SWPORT_VERSION, rep->msg);
	}
	if ((size_t)n != sizeof(*rep) || rep->magic != SWPORT_MAGIC)
		return dev_err(err, errlen, "%s: bad answer from the switch", spec);
	if (rep->status != 0) {
		rep->msg[sizeof(rep->msg) - 1] = 0;
		return dev_err(err, errlen, "%s: %s", spec, rep->msg);
	}
	if ((msg.msg_flags & MSG_CTRUNC) || fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
		return dev_err(err, errlen, "%s: the switch sent no region", spec);
	return 0;
}

int switch_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
		size_t errlen)
{
	const char *slash = strrchr(name, '/');
	char spec[96];
	struct sockaddr_un addr;
	socklen_t alen;
	struct swport_reply rep;
	struct timeval tv = {.tv_sec = 5};
	struct epoll_event ev;
	struct stat st;
	int fds[3] = {-1, -1, -1};
	struct shm_dev *m;
	unsigned long port;
	char *end;

	snprintf(spec, sizeof(spec), "switch:%s", name);
	if (slash == NULL || slash[1] == '\0')
		return dev_err(err, errlen, "device '%s': expected switch:NAME/PORT", spec);
	errno = 0;
	port = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || errno != 0 || slash[1] < '0' || slash[1] > '9' || port >= 1024)
		return dev_err(err, errlen, "device '%s': PORT must be a port number", spec);
	alen = shm_switch_addr(name, (size_t)(slash - name), &addr);
	if (alen == 0)
		return dev_err(err, errlen,
			       "device '%s': switch NAME must be 1..%d bytes of A-Z a-z 0-9 _ . -",
			       spec, SWPORT_NAME_MAX);

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return dev_err(err, errlen, "%s: out of memory", spec);
	m->sock = m->efd_in = m->efd_out = m->epfd = -1;
	m->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (m->sock < 0) {
		dev_err(err, errlen, "%s: socket: %s", spec, strerror(errno));
		goto fail;
	}
	/* A switch that accepts and then hangs must not hang us forever. */
	setsockopt(m->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(m->sock, (struct sockaddr *)&addr, alen) < 0) {
		dev_err(err, errlen, "%s: no switch '%.*s' is running (%s); start `skiff switch %.*s`",
			spec, (int)(slash - name), name, strerror(errno), (int)(slash - name), name);
		goto fail;
	}
	if (handshake(m, spec, (uint32_t)port, cfg, &rep, fds, err, errlen) != 0)
		goto fail;
	m->efd_in = fds[1];
	m->efd_out = fds[2];
	fds[1] = fds[2] = -1;
	if (fstat(fds[0], &st) < 0 || rep.size == 0 || (uint64_t)st.st_size < rep.size ||
	    rep.size > SIZE_MAX) {
		dev_err(err, errlen, "%s: the region is smaller than announced", spec);
		goto fail;
	}
	m->size = (size_t)rep.size;
	m->mem = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fds[0], 0);
	if (m->mem == MAP_FAILED) {
		m->mem = NULL;
		dev_err(err, errlen, "%s: mmap: %s", spec, strerror(errno));
		goto fail;
	}
	if (ring_region_check(m->mem, m->size) != 0) {
		dev_err(err, errlen, "%s: the switch's region fails ring_region_check", spec);
		goto fail;
	}
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.fd = m->efd_in;
	if (m->epfd < 0 || epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->efd_in, &ev) < 0) {
		dev_err(err, errlen, "%s: epoll: %s", spec, strerror(errno));
		goto fail;
	}
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.fd = m->sock;
	if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->sock, &ev) < 0) {
		dev_err(err, errlen, "%s: epoll: %s", spec, strerror(errno));
		goto fail;
	}
	close(fds[0]); /* the mapping keeps the memory */
	m->dev.ops = &shm_ops;
	m->dev.rx = ring_region_rx(m->mem);
	m->dev.tx = ring_region_tx(m->mem);
	m->rx_seen = ring_load(&m->dev.rx->tail);
	m->tx_seen = m->dev.tx->head;
	m->dev.mtu = 1500;
	m->dev.flow_steered = true; /* the switch steers by flow_hash (above) */
	dev_random_mac(m->dev.mac);
	*out = &m->dev;
	return 0;
fail:
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	shm_release(m);
	return -1;
}
