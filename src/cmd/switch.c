/* switch.c — `skiff switch NAME`: a learning bridge between processes over
 * shared memory (the hosted half of src/switch; the forwarding itself is
 * the freestanding engine in src/switch/sw.c).
 *
 * This file owns what the engine cannot: the control socket, a memfd and
 * two eventfds per attached queue of a port (a port of one queue is one
 * attachment; `--workers N` hosts attach each of their N workers as queue
 * i of N, see swport.h), and the run loop.
 *   loop: forward one batch from every attached port; after a turn with
 *   work keep polling for --spin-us (runner/spin.h: the next batch usually
 *   follows); look at the control fds
 *   every millisecond while busy; when idle, set SWPORT_KF_SLEEPING on
 *   every tx ring, look at the heads once more, and park in ppoll on the
 *   listening socket, every queue's connection and every queue's "kick the
 *   switch" eventfd, with SIGINT/SIGTERM let in only inside the wait
 *   (plat/linux/stopsig.h), so a stop is never slept through.
 *   attach: a connection sends a swport_hello (swport.h); the switch lays
 *   out a fresh region in a new memfd, attaches it to the engine and sends
 *   the fds back.  The connection is the attachment: when it hangs up (the
 *   process exited or was killed) the queue is detached and free again, and
 *   with its last queue the port.
 * No frame ever waits for a slow port: its ring fills and the engine drops.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "../dev/shm.h"
#include "../runner/spin.h"
#include "../plat/linux/stopsig.h"
#include "../plat/plat.h"
#include "../switch/sw.h"
#include "../host/cli.h"

#define SWITCH_PENDING_MAX 8u /* connections that have not said hello yet */
#define SWITCH_HELLO_NS (2 * SK_NS_PER_S)
#define SWITCH_CTL_NS SK_NS_PER_MS /* control fds looked at while busy */

/* The options table (conf/opts.c opt_cmd_switch) bounds --ports and
 * --pcap-port, and its help names the most queues and the longest NAME. */
_Static_assert(OPT_SW_PORTS_MAX == SW_PORTS_MAX, "opts.h OPT_SW_PORTS_MAX is SW_PORTS_MAX");
_Static_assert(SW_QUEUES_MAX == 8, "opt_cmd_switch's help says at most 8 queues");
_Static_assert(SWPORT_NAME_MAX == 32, "opt_cmd_switch's help says NAME is 1..32 bytes");

static volatile sig_atomic_t sw_stop, sw_dump;

static void on_stop(int sig)
{
	(void)sig;
	sw_stop = 1;
}

static void on_dump(int sig)
{
	(void)sig;
	sw_dump = 1;
}

/* One attachment: one queue of a port. */
struct hqueue {
	int conn;       /* the attachment; -1 = free */
	int efd_kick;   /* we write it: frames for a sleeping process */
	int efd_wake;   /* it writes it: frames for a sleeping switch */
	void *mem;
	size_t size;
};

struct hport {
	struct hqueue q[SW_QUEUES_MAX];
	unsigned nq;    /* queues while any is attached (the engine's copy rules) */
	unsigned nconn; /* queues attached */
};

struct pending {
	int fd;
	sk_time_ns since;
};

struct hswitch {
	const char *name;
	unsigned nports;
	uint32_t slots;
	int lfd;
	struct sw *sw;
	struct hport port[SW_PORTS_MAX];
	struct pending pend[SWITCH_PENDING_MAX];
	pcap_t *pcap;
	pcap_dumper_t *dumper;
	/* loop counters */
	uint64_t turns, busy_turns, parks, kicks_failed;
	struct spin spin;   /* when to spin and when to park (runner/spin.h) */
};

static void kick(void *ctx, unsigned port, unsigned queue)
{
	struct hswitch *h = ctx;
	uint64_t one = 1;

	/* EAGAIN means the counter is saturated: the process is awake anyway. */
	if (write(h->port[port].q[queue].efd_kick, &one, sizeof(one)) < 0 && errno != EAGAIN)
		h->kicks_failed++;
}

static void capture(void *ctx, unsigned port, bool to_port, const uint8_t *frame, size_t len)
{
	struct hswitch *h = ctx;
	struct pcap_pkthdr ph;

	(void)port;
	(void)to_port;
	gettimeofday(&ph.ts, NULL);
	ph.caplen = ph.len = (bpf_u_int32)len;
	pcap_dump((u_char *)h->dumper, &ph, frame);
}

static void print_stat(void *ctx, const char *name, uint64_t v)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)v);
}

static void print_stats(struct hswitch *h, FILE *f)
{
	struct sw *s = h->sw;

	for (unsigned p = 0; p < h->nports; p++) {
		const struct sw_port_stats *st = &s->port[p].st;
		if (st->attaches == 0)
			continue;
#define P(field) fprintf(f, "port.%u." #field " %llu\n", p, (unsigned long long)st->field)
		fprintf(f, "port.%u.attached %d\n", p, s->port[p].attached ? 1 : 0);
		P(attaches);
		P(rx_frames);
		P(rx_bytes);
		P(tx_frames);
		P(tx_bytes);
		P(flooded);
		P(drop_full);
		P(drop_bad_slot);
		P(drop_runt);
		P(drop_same_port);
		P(drop_bad_rx);
		P(bad_index);
		P(kicks);
		P(drop_no_queue);
#undef P
		/* Per queue, for a port that had more than one. */
		for (unsigned i = 0; s->port[p].nq_max > 1 && i < s->port[p].nq_max; i++) {
			const struct sw_queue *q = &s->port[p].q[i];
			fprintf(f, "port.%u.q%u.rx_frames %llu\n", p, i, (unsigned long long)q->taken);
			fprintf(f, "port.%u.q%u.tx_frames %llu\n", p, i,
				(unsigned long long)q->delivered);
			fprintf(f, "port.%u.q%u.kicks %llu\n", p, i, (unsigned long long)q->kicks);
		}
	}
	fprintf(f, "table.entries %u\n", swt_count(&s->table, plat_now()));
	fprintf(f, "table.learned %llu\n", (unsigned long long)s->table.c.learned);
	fprintf(f, "table.moved %llu\n", (unsigned long long)s->table.c.moved);
	fprintf(f, "table.evicted %llu\n", (unsigned long long)s->table.c.evicted);
	fprintf(f, "table.expired %llu\n", (unsigned long long)s->table.c.expired);
	fprintf(f, "loop.turns %llu\n", (unsigned long long)h->turns);
	fprintf(f, "loop.busy_turns %llu\n", (unsigned long long)h->busy_turns);
	fprintf(f, "loop.parks %llu\n", (unsigned long long)h->parks);
	spin_stats(&h->spin, "loop", print_stat, f);
	fflush(f);
}

static void queue_free(struct hswitch *h, unsigned p, unsigned qi)
{
	struct hqueue *hp = &h->port[p].q[qi];

	sw_queue_detach(h->sw, p, qi);
	if (hp->conn >= 0 && --h->port[p].nconn == 0)
		h->port[p].nq = 0;
	if (hp->mem != NULL)
		munmap(hp->mem, hp->size);
	if (hp->conn >= 0)
		close(hp->conn);
	if (hp->efd_kick >= 0)
		close(hp->efd_kick);
	if (hp->efd_wake >= 0)
		close(hp->efd_wake);
	hp->mem = NULL;
	hp->conn = hp->efd_kick = hp->efd_wake = -1;
}

static void reply(int fd, int status, const int *fds, uint64_t size, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void reply(int fd, int status, const int *fds, uint64_t size, const char *fmt, ...)
{
	struct swport_reply r;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct iovec iov = {&r, sizeof(r)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	va_list ap;

	memset(&r, 0, sizeof(r));
	r.magic = SWPORT_MAGIC;
	r.version = SWPORT_VERSION;
	r.status = status;
	r.size = size;
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	if (fds != NULL) {
		struct cmsghdr *c;
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(3 * sizeof(int));
		memcpy(CMSG_DATA(c), fds, 3 * sizeof(int));
	}
	/* A peer that vanished already: its hang-up detaches the port. */
	(void)sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* A hello arrived on a pending connection: attach it, or answer why not.
 * Returns true if fd now belongs to a port. */
static bool attach(struct hswitch *h, int fd, const struct swport_hello *hello)
{
	char memname[64];
	struct hqueue *hp;
	uint32_t slots;
	size_t size;
	int memfd = -1, fds[3];
	unsigned p, qi, nq;

	p = hello->port;
	if (p >= h->nports) {
		reply(fd, ERANGE, NULL, 0, "no port %u: switch '%s' has ports 0..%u", p, h->name,
		      h->nports - 1);
		return false;
	}
	nq = hello->nqueues ? hello->nqueues : 1;
	qi = hello->queue;
	if (nq > SW_QUEUES_MAX || qi >= nq) {
		reply(fd, ERANGE, NULL, 0, "queue %u of %u: a port has 1..%u queues", qi, nq,
		      SW_QUEUES_MAX);
		return false;
	}
	if (h->port[p].nconn > 0 && h->port[p].nq != nq) {
		reply(fd, EBUSY, NULL, 0, "port %u of switch '%s' is in use with %u queue%s, not %u",
		      p, h->name, h->port[p].nq, h->port[p].nq == 1 ? "" : "s", nq);
		return false;
	}
	hp = &h->port[p].q[qi];
	if (hp->conn >= 0) {
		if (nq == 1)
			reply(fd, EBUSY, NULL, 0, "port %u of switch '%s' is in use", p, h->name);
		else
			reply(fd, EBUSY, NULL, 0, "queue %u of port %u of switch '%s' is in use", qi,
			      p, h->name);
		return false;
	}
	slots = hello->num_slots ? hello->num_slots : h->slots;
	size = ring_region_size(slots, RING_BUF_SIZE_DEFAULT, 0);
	if (size == 0 || slots > 32768) {
		reply(fd, EINVAL, NULL, 0, "bad ring size %u (a power of two, 2..32768)", slots);
		return false;
	}
	snprintf(memname, sizeof(memname), "skiff-%s-%u.%u", h->name, p, qi);
	memfd = memfd_create(memname, MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)size) < 0) {
		reply(fd, ENOMEM, NULL, 0, "memfd: %s", strerror(errno));
		goto fail;
	}
	hp->mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, memfd, 0);
	if (hp->mem == MAP_FAILED) {
		hp->mem = NULL;
		reply(fd, ENOMEM, NULL, 0, "mmap: %s", strerror(errno));
		goto fail;
	}
	hp->size = size;
	hp->efd_kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	hp->efd_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (hp->efd_kick < 0 || hp->efd_wake < 0) {
		reply(fd, ENOMEM, NULL, 0, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (ring_region_init(hp->mem, size, slots, RING_BUF_SIZE_DEFAULT, 0) != 0 ||
	    sw_queue_attach(h->sw, p, qi, nq, hp->mem, size) != 0) {
		reply(fd, EINVAL, NULL, 0, "cannot lay out the port's region");
		goto fail;
	}
	hp->conn = fd;
	h->port[p].nq = nq;
	h->port[p].nconn++;
	fds[0] = memfd;
	fds[1] = hp->efd_kick;
	fds[2] = hp->efd_wake;
	reply(fd, 0, fds, size, "ok");
	close(memfd); /* our mapping and the peer's fd keep the memory */
	if (nq == 1)
		printf("skiff switch: port %u attached (%u slots)\n", p, slots);
	else
		printf("skiff switch: port %u queue %u of %u attached (%u slots)\n", p, qi, nq,
		       slots);
	fflush(stdout);
	return true;
fail:
	if (memfd >= 0)
		close(memfd);
	queue_free(h, p, qi);
	return false;
}

static void pending_add(struct hswitch *h, int fd, sk_time_ns now)
{
	for (unsigned i = 0; i < SWITCH_PENDING_MAX; i++) {
		if (h->pend[i].fd < 0) {
			h->pend[i].fd = fd;
			h->pend[i].since = now;
			return;
		}
	}
	close(fd); /* too many half-open attaches: the peer sees a hang-up */
}

static void pending_read(struct hswitch *h, unsigned i)
{
	/* Room for a longer hello than ours: a hello of another version is
	 * told so by its version field, whatever its size (version 1's had no
	 * queue fields), and never read as ours. */
	union {
		struct swport_hello hello;
		uint8_t raw[2 * sizeof(struct swport_hello)];
	} in;
	int fd = h->pend[i].fd;
	ssize_t n = recv(fd, &in, sizeof(in), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	h->pend[i].fd = -1;
	if (n >= 8 && in.hello.magic == SWPORT_MAGIC && in.hello.version != SWPORT_VERSION) {
		reply(fd, EPROTO, NULL, 0,
		      "switch protocol version %u, this switch speaks %u: run the same skiff build",
		      in.hello.version, SWPORT_VERSION);
	} else if (n == (ssize_t)sizeof(in.hello) && in.hello.magic == SWPORT_MAGIC) {
		if (attach(h, fd, &in.hello))
			return;
	} else if (n >= 0) {
		reply(fd, EPROTO, NULL, 0, "bad hello");
	}
	close(fd);
}

/* Look at the control fds (timeout_ms 0: just look; -1 or more: park).
 * While parked, a kick from any port's eventfd ends the wait. */
static void control(struct hswitch *h, int timeout_ms, sk_time_ns now)
{
	struct pollfd pfd[1 + SWITCH_PENDING_MAX + 2 * SW_PORTS_MAX * SW_QUEUES_MAX];
	/* -1 listen, -2-i pending i; else 2 * (p * SW_QUEUES_MAX + q) for queue
	 * q of port p's connection, + 1 for its wake eventfd. */
	int who[SK_ARRAY_LEN(pfd)];
	nfds_t n = 0;

	pfd[n] = (struct pollfd){.fd = h->lfd, .events = POLLIN};
	who[n++] = -1;
	for (unsigned i = 0; i < SWITCH_PENDING_MAX; i++) {
		if (h->pend[i].fd < 0)
			continue;
		if (now - h->pend[i].since > SWITCH_HELLO_NS) {
			close(h->pend[i].fd);
			h->pend[i].fd = -1;
			continue;
		}
		pfd[n] = (struct pollfd){.fd = h->pend[i].fd, .events = POLLIN};
		who[n++] = -2 - (int)i;
	}
	for (unsigned p = 0; p < h->nports; p++) {
		for (unsigned q = 0; h->port[p].nconn > 0 && q < h->port[p].nq; q++) {
			const struct hqueue *hq = &h->port[p].q[q];
			int code = 2 * (int)(p * SW_QUEUES_MAX + q);
			if (hq->conn < 0)
				continue;
			pfd[n] = (struct pollfd){.fd = hq->conn, .events = POLLIN};
			who[n++] = code;
			if (timeout_ms != 0) {
				pfd[n] = (struct pollfd){.fd = hq->efd_wake, .events = POLLIN};
				who[n++] = code + 1;
			}
		}
	}
	int r;
	if (timeout_ms == 0) {
		r = poll(pfd, n, 0);
	} else {
		struct plat_stopsig sigs;
		if (!plat_stopsig_hold(&sigs, &sw_stop))
			return;
		struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
		r = ppoll(pfd, n, timeout_ms < 0 ? NULL : &ts, &sigs.wait);
		plat_stopsig_release(&sigs);
	}
	if (r <= 0)
		return;
	for (nfds_t i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (who[i] == -1) {
			int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd >= 0)
				pending_add(h, fd, now);
		} else if (who[i] <= -2) {
			pending_read(h, (unsigned)(-2 - who[i]));
		} else if (who[i] & 1) {
			uint64_t v;
			unsigned p = (unsigned)(who[i] >> 1) / SW_QUEUES_MAX;
			struct hqueue *hq = &h->port[p].q[(unsigned)(who[i] >> 1) % SW_QUEUES_MAX];
			if (hq->efd_wake >= 0)
				(void)read(hq->efd_wake, &v, sizeof(v));
		} else {
			/* The switch sends nothing after the reply, so readable
			 * means the peer closed: the process is gone. */
			char c;
			unsigned p = (unsigned)(who[i] >> 1) / SW_QUEUES_MAX;
			unsigned q = (unsigned)(who[i] >> 1) % SW_QUEUES_MAX;
			struct hqueue *hq = &h->port[p].q[q];
			unsigned nq = h->port[p].nq;
			if (hq->conn < 0)
				continue; /* freed earlier in this loop */
			if (recv(hq->conn, &c, 1, MSG_DONTWAIT) == -1 &&
			    (errno == EAGAIN || errno == EINTR))
				continue;
			/* Frames it handed over before exiting still go out, as a
			 * NIC sends its queue: a sender that fills its ring and
			 * exits must not lose the last batch.  Bounded by the
			 * ring: the dead process cannot add more. */
			for (unsigned k = 0; k <= h->slots / SW_BATCH + 64; k++)
				if (sw_forward(h->sw, p, now) == 0)
					break;
			queue_free(h, p, q);
			if (nq == 1)
				printf("skiff switch: port %u detached\n", p);
			else
				printf("skiff switch: port %u queue %u of %u detached\n", p, q, nq);
			fflush(stdout);
		}
	}
}

static void run(struct hswitch *h, sk_time_ns spin_cap, bool spin_learn)
{
	sk_time_ns last_ctl = 0;
	spin_init(&h->spin, spin_cap, spin_learn);

	while (!sw_stop) {
		sk_time_ns now = plat_now();
		unsigned work = 0;

		h->turns++;
		for (uint64_t m = h->sw->attached; m != 0; m &= m - 1)
			work += sw_forward(h->sw, (unsigned)__builtin_ctzll(m), now);
		if (sw_dump) {
			sw_dump = 0;
			print_stats(h, stdout);
		}
		enum spin_step step = spin_after(&h->spin, work != 0, now);
		if (step == SPIN_WORK)
			h->busy_turns++;
		if (step != SPIN_PARK) {
			if (now - last_ctl >= SWITCH_CTL_NS) {
				last_ctl = now;
				control(h, 0, now);
			}
			if (step == SPIN_SPIN)
				plat_relax();
			continue;
		}
		/* Idle: ask for kicks, look once more, then sleep. */
		sw_set_sleeping(h->sw, true);
		bool late = false;
		for (uint64_t m = h->sw->attached; m != 0 && !late; m &= m - 1)
			late = sw_pending(h->sw, (unsigned)__builtin_ctzll(m)) != 0;
		if (!late) {
			h->parks++;
			/* 1 s: pending connections time out even with no traffic. */
			control(h, 1000, now);
		}
		sw_set_sleeping(h->sw, false);
		last_ctl = plat_now();
	}
}

int cmd_switch(int argc, char **argv)
{
	struct opts o;
	struct hswitch h = {.lfd = -1};
	struct sockaddr_un addr;
	socklen_t alen;
	uint64_t seed;

	/* Bounds, defaults, --help and the messages: the options table
	 * (conf/opts.c opt_cmd_switch); the switch checks what joins two. */
	cli_parse(&o, &opt_cmd_switch, argc, argv);
	if (o.nargs == 0)
		cli_usage_error("switch", "NAME is required");
	h.name = o.args[0];
	h.nports = (unsigned)opt_num(&o, OPT_SW_PORTS);
	h.slots = (uint32_t)opt_num(&o, OPT_SLOTS);
	const char *pcap_path = opt_given(&o, OPT_PCAP) ? opt_str(&o, OPT_PCAP) : NULL;
	long pcap_port = opt_given(&o, OPT_SW_PCAP_PORT) ? (long)opt_num(&o, OPT_SW_PCAP_PORT) : -1;
	bool stats = opt_given(&o, OPT_STATS);
	uint64_t age_s = opt_num(&o, OPT_SW_AGE);
	sk_time_ns spin_cap;
	bool spin_learn;
	opt_spin(&o, &spin_cap, &spin_learn);
	alen = shm_switch_addr(h.name, strlen(h.name), &addr);
	if (alen == 0)
		cli_usage_error("switch", "NAME must be 1..%d bytes of A-Z a-z 0-9 _ . -",
				SWPORT_NAME_MAX);
	if ((pcap_path == NULL) != (pcap_port < 0))
		cli_usage_error("switch", "--pcap and --pcap-port go together");
	if (pcap_port >= (long)h.nports)
		cli_usage_error("switch", "--pcap-port %ld: the switch has ports 0..%u", pcap_port,
				h.nports - 1);

	h.sw = calloc(1, sizeof(*h.sw));
	if (h.sw == NULL || plat_random(&seed, sizeof(seed)) < 0) {
		fprintf(stderr, "skiff switch: out of memory or randomness\n");
		return 1;
	}
	sw_init(h.sw, h.nports, seed, (sk_time_ns)age_s * SK_NS_PER_S, kick, &h);
	for (unsigned p = 0; p < SW_PORTS_MAX; p++)
		for (unsigned q = 0; q < SW_QUEUES_MAX; q++)
			h.port[p].q[q].conn = h.port[p].q[q].efd_kick = h.port[p].q[q].efd_wake = -1;
	for (unsigned i = 0; i < SWITCH_PENDING_MAX; i++)
		h.pend[i].fd = -1;
	if (pcap_path != NULL) {
		h.pcap = pcap_open_dead(DLT_EN10MB, 65535);
		h.dumper = h.pcap ? pcap_dump_open(h.pcap, pcap_path) : NULL;
		if (h.dumper == NULL) {
			fprintf(stderr, "skiff switch: pcap %s: %s\n", pcap_path,
				h.pcap ? pcap_geterr(h.pcap) : "out of memory");
			return 1;
		}
		h.sw->capture = capture;
		h.sw->capture_ctx = &h;
		h.sw->capture_port = (unsigned)pcap_port;
	}

	h.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h.lfd < 0 || bind(h.lfd, (struct sockaddr *)&addr, alen) < 0 || listen(h.lfd, 16) < 0) {
		fprintf(stderr, "skiff switch: %s: %s\n", h.name,
			errno == EADDRINUSE ? "a switch of that name is already running"
					    : strerror(errno));
		return 1;
	}

	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_dump;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf("skiff switch: %s ready, %u ports (--dev switch:%s/0..%u)\n", h.name, h.nports,
	       h.name, h.nports - 1);
	fflush(stdout);
	run(&h, spin_cap, spin_learn);

	if (stats)
		print_stats(&h, stdout);
	for (unsigned p = 0; p < h.nports; p++)
		for (unsigned q = 0; q < SW_QUEUES_MAX; q++)
			if (h.port[p].q[q].conn >= 0)
				queue_free(&h, p, q);
	for (unsigned i = 0; i < SWITCH_PENDING_MAX; i++)
		if (h.pend[i].fd >= 0)
			close(h.pend[i].fd);
	close(h.lfd);
	if (h.dumper != NULL)
		pcap_dump_close(h.dumper);
	if (h.pcap != NULL)
		pcap_close(h.pcap);
	free(h.sw);
	return 0;
}
