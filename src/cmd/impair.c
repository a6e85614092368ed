/* impair.c — skiff impair: a netem-like impairing relay between two
 * interfaces of a test namespace (tests/lib.sh skt_relay_start).  The test
 * kernel has no sch_netem, so the tests impair the wire here: every frame
 * read from one interface is written to the other, and in the directions
 * --dir names it may be lost, duplicated, corrupted, rate-limited, delayed
 * (with jitter) or sent ahead of the delayed ones (reorder).
 *
 * It replaces tests/tcp_impair.py, which used 65% of a core at 33 MiB/s
 * and so became the bottleneck it was meant to model.  The per-frame work
 * here is a ring status load, one copy into a preallocated slot, a few
 * PRNG draws, a heap push and pop, and a share of one sendmmsg():
 *
 *   rx   an AF_PACKET socket per interface with a TPACKET_V2 rx ring
 *        (src/dev/packet.c says why V2 and not V3: V3 hands frames over
 *        per block, adding up to a millisecond of latency the relay would
 *        add to every path it models).  An idle check is a memory load.
 *   hold every frame is copied from the ring into a slot of a pool sized
 *        at start (2 x limit + batches); the ring frame goes back to the
 *        kernel at once.  No allocation per frame.
 *   when a binary heap of slot indices ordered by (due, seq), released
 *        in windows (WINDOW_MAX_NS, below).  Without
 *        --reorder the due times of a direction never decrease (jitter is
 *        clamped to the previous due), so frames keep their order, as the
 *        Python relay's delay did; with --reorder, the frames sent ahead
 *        and the jitter both reorder, as netem's do.
 *   rate a token bucket one frame deep per direction (netem's rate:
 *        serialisation at MBIT): a frame leaves the bottleneck at
 *        max(now, previous departure) + len * 8 / rate, then the delay
 *        starts.  --limit bounds the frames a direction holds (delayed or
 *        queued); the next one is dropped (drop-tail, limit_drops).
 *   tx   sendmmsg() per output interface, in batches of up to TX_BATCH.
 *
 * The random choices come from splitmix64, a stream per direction seeded
 * from --seed, drawn only for the impairments that are on, in a fixed
 * order per frame: the same seed and the same frames of a direction give
 * that direction the same impairments, however the other direction's
 * frames interleave with them.
 *
 * Counters (one line on SIGTERM/SIGINT, the Python relay's names first):
 *   a2b, b2a   frames read from A, from B
 *   lost dup corrupt reordered delayed send_err   as the Python relay's
 *   limit_drops  dropped because the direction held --limit frames
 *   oversize     larger than a slot (or cut by the ring): dropped
 *   kernel_drops frames the kernel dropped because a ring was full
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../host/cli.h"
#include "../conf/opts.h"

/* The rx ring: 2 KiB frames (a 1514-byte frame, a VLAN tag and the
 * kernel's header fit), 32 to a 64 KiB block, 4,096 frames: bursts of a
 * few milliseconds at veth speed. */
#define RING_FRAME 2048u
#define RING_BLOCK (1u << 16)
#define RING_FRAMES 4096u
#define SLOT_DATA 2048u /* the largest frame relayed; larger ones: oversize */
#define TX_BATCH 64u
#define RX_BUDGET 256u  /* frames per interface per turn, so neither starves */
/* The longest sleep: SIGTERM is seen within it even if it lands between
 * the flag check and ppoll. */
#define IDLE_NS 100000000ull
/* Held frames leave in windows (struct imp.window_ns): a wakeup sends
 * every frame due within half a window either side of it.  Waking once per
 * frame cost ~5 us of system time a frame (a 5 ms delay doubled the
 * relay's CPU against none).  The window is a tenth of the delay, at most
 * WINDOW_MAX_NS, so a delay is kept to +-5% (+-250 us at most, plus the
 * kernel's 50 us timer slack); the Python relay's was 0..1 ms late. */
#define WINDOW_MAX_NS 500000ull

_Static_assert(RING_BLOCK % RING_FRAME == 0, "frames must tile a block");

enum { DIR_A2B, DIR_B2A };

/* One interface.  The ring is shared with the kernel: a frame is ours
 * while its tp_status has TP_STATUS_USER, the kernel's once we write
 * TP_STATUS_KERNEL. */
struct imp_port {
	const char *name;
	int fd;
	uint8_t *map;     /* RING_FRAMES frames of RING_FRAME bytes */
	size_t map_size;
	uint32_t next;    /* the ring frame we read next */
	/* frames to send on this port: slot indices, in order */
	uint32_t tx[TX_BATCH];
	uint32_t ntx;
	struct mmsghdr msg[TX_BATCH];
	struct iovec iov[TX_BATCH];
};

/* The impairments of one direction, and its state.  Probabilities are in
 * 2^-32 units (a draw's top 32 bits below p: 0 never, 2^32 always). */
struct imp_dir {
	bool on;          /* --dir names this direction */
	uint64_t p_loss, p_dup, p_corrupt, p_reorder;
	uint64_t delay_ns, jitter_ns;
	uint64_t rate_bps; /* 0: no bottleneck */
	uint32_t limit;    /* most frames held (in the heap) */
	uint32_t held;     /* in the heap now */
	uint64_t last_dep; /* the bottleneck's last departure */
	uint64_t last_due; /* the last delayed frame's due time (FIFO clamp) */
	int out;           /* the port it sends on */
	uint64_t rng;      /* this direction's own stream (below) */
};

/* A held frame.  Free slots are on the free stack; a slot is either free,
 * in the heap, or in one port's tx batch. */
struct imp_slot {
	uint64_t due;
	uint64_t seq;  /* arrival order: ties in the heap keep it */
	uint16_t len;
	uint8_t dir;
};

struct imp_counters {
	uint64_t rx[2], lost, dup, corrupt, reordered, delayed, send_err, limit_drops, oversize,
		kernel_drops;
};

struct imp {
	struct imp_port port[2];
	struct imp_dir dir[2];
	struct imp_slot *slot;
	uint8_t *data;      /* nslots x SLOT_DATA */
	size_t data_size;
	uint32_t *free;     /* stack of free slot indices */
	uint32_t nfree, nslots;
	uint32_t *heap;     /* min-heap of slot indices by (due, seq) */
	uint32_t nheap;
	uint64_t seq;
	uint64_t window_ns; /* see WINDOW_MAX_NS */
	struct imp_counters c;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64: small, fast, and its whole state is the seed. */
static uint64_t rnd(struct imp_dir *d)
{
	uint64_t z = (d->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* True with probability p / 2^32.  No draw when p is 0 (as the Python
 * relay), so a run's draws depend only on the impairments that are on. */
static bool chance(struct imp_dir *d, uint64_t p)
{
	return p && (rnd(d) >> 32) < p;
}

/* Percent in millionths (OPT_K_DEC) -> 2^-32 units. */
static uint64_t prob32(uint64_t pct_micro)
{
	return (uint64_t)(((unsigned __int128)pct_micro << 32) / (100ull * OPT_DEC_ONE));
}

static uint8_t *slot_data(struct imp *m, uint32_t i)
{
	return m->data + (size_t)i * SLOT_DATA;
}

/* ---- the heap ---- */

static bool before(const struct imp *m, uint32_t a, uint32_t b)
{
	const struct imp_slot *x = &m->slot[a], *y = &m->slot[b];
	return x->due < y->due || (x->due == y->due && x->seq < y->seq);
}

static void heap_push(struct imp *m, uint32_t s)
{
	uint32_t i = m->nheap++;
	while (i) {
		uint32_t up = (i - 1) / 2;
		if (!before(m, s, m->heap[up]))
			break;
		m->heap[i] = m->heap[up];
		i = up;
	}
	m->heap[i] = s;
}

static uint32_t heap_pop(struct imp *m)
{
	uint32_t top = m->heap[0], last = m->heap[--m->nheap], i = 0, n = m->nheap;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && before(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!before(m, m->heap[c], last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (n)
		m->heap[i] = last;
	return top;
}

/* ---- tx ---- */

static void tx_flush(struct imp *m, struct imp_port *p)
{
	uint32_t n = p->ntx, done = 0;
	for (uint32_t i = 0; i < n; i++) {
		p->iov[i].iov_base = slot_data(m, p->tx[i]);
		p->iov[i].iov_len = m->slot[p->tx[i]].len;
		memset(&p->msg[i], 0, sizeof(p->msg[i]));
		p->msg[i].msg_hdr.msg_iov = &p->iov[i];
		p->msg[i].msg_hdr.msg_iovlen = 1;
	}
	while (done < n) {
		int r = sendmmsg(p->fd, p->msg + done, n - done, MSG_DONTWAIT);
		if (r > 0) {
			done += (uint32_t)r;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else { /* the first frame failed (a full queue): it is lost */
			m->c.send_err++;
			done++;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		m->free[m->nfree++] = p->tx[i];
	p->ntx = 0;
}

static void tx_push(struct imp *m, int port, uint32_t s)
{
	struct imp_port *p = &m->port[port];
	p->tx[p->ntx++] = s;
	if (p->ntx == TX_BATCH)
		tx_flush(m, p);
}

/* ---- one frame ---- */

static uint32_t slot_get(struct imp *m)
{
	return m->nfree ? m->free[--m->nfree] : UINT32_MAX;
}

/* Schedule slot s (filled, direction d) to leave at `due`: at once, or
 * through the heap. */
static void schedule(struct imp *m, struct imp_dir *d, uint32_t s, uint64_t due, uint64_t now)
{
	if (due <= now) {
		tx_push(m, d->out, s);
		return;
	}
	m->slot[s].due = due;
	m->slot[s].seq = m->seq++;
	d->held++;
	heap_push(m, s);
}

/* A frame of direction di, already copied into slot s, read at `at`
 * (now).  The ring's timestamp was tried as the arrival time, with the
 * relay not waking for arrivals while it held frames: skiff's echo through
 * 1 ms each way fell from 25 to 0.19 MiB/s with a CUBIC peer, cause not
 * yet found, so the relay reads every arrival at once. */
static void impair_frame(struct imp *m, int di, uint32_t s, uint64_t at, uint64_t now)
{
	struct imp_dir *d = &m->dir[di];
	if (!d->on) {
		tx_push(m, d->out, s);
		return;
	}
	if (chance(d, d->p_loss)) {
		m->c.lost++;
		m->free[m->nfree++] = s;
		return;
	}
	unsigned copies = 1;
	if (chance(d, d->p_dup)) {
		copies = 2;
		m->c.dup++;
	}
	uint16_t len = m->slot[s].len;
	if (chance(d, d->p_corrupt) && len > ETH_HLEN) {
		uint64_t r = rnd(d);
		uint32_t bit_at = ETH_HLEN + (uint32_t)((r >> 3) % (len - ETH_HLEN));
		slot_data(m, s)[bit_at] ^= (uint8_t)(1u << (r & 7));
		m->c.corrupt++;
	}
	bool delaying = d->delay_ns || d->jitter_ns;
	bool ahead = delaying && chance(d, d->p_reorder);
	uint64_t extra = 0;
	if (delaying && !ahead) {
		int64_t x = (int64_t)d->delay_ns;
		if (d->jitter_ns)
			x += (int64_t)(rnd(d) % (2 * d->jitter_ns + 1)) - (int64_t)d->jitter_ns;
		extra = x > 0 ? (uint64_t)x : 0;
		m->c.delayed++;
	} else if (ahead) {
		m->c.reordered++;
	}
	for (unsigned k = 0; k < copies; k++) {
		uint32_t t = s;
		if (k) { /* the duplicate: a slot of its own */
			t = slot_get(m);
			if (t == UINT32_MAX) {
				m->c.limit_drops++;
				break;
			}
			memcpy(slot_data(m, t), slot_data(m, s), len);
			m->slot[t] = m->slot[s];
		}
		bool held = d->rate_bps || (delaying && !ahead);
		if (held && d->held >= d->limit) {
			m->c.limit_drops++;
			m->free[m->nfree++] = t;
			continue;
		}
		uint64_t dep = at;
		if (d->rate_bps) {
			dep = (d->last_dep > at ? d->last_dep : at) +
			      (uint64_t)len * 8u * 1000000000ull / d->rate_bps;
			d->last_dep = dep;
		}
		uint64_t due = dep + extra;
		if (delaying && !ahead) {
			if (!d->p_reorder && due < d->last_due)
				due = d->last_due; /* FIFO: jitter does not reorder */
			if (due > d->last_due)
				d->last_due = due;
		}
		schedule(m, d, t, due, now);
	}
}

/* ---- rx ---- */

static struct tpacket2_hdr *ring_frame(struct imp_port *p, uint32_t i)
{
	return (struct tpacket2_hdr *)(p->map + (size_t)i * RING_FRAME);
}

/* Copy ring frame h into slot s, putting back a VLAN tag the kernel moved
 * into the metadata.  Returns the length, 0 if it does not fit. */
static uint32_t ring_copy(const struct tpacket2_hdr *h, uint32_t st, uint8_t *dst)
{
	const uint8_t *src = (const uint8_t *)h + h->tp_mac;
	uint32_t len = h->tp_snaplen;
	if (len != h->tp_len || len < ETH_HLEN || len > SLOT_DATA ||
	    (size_t)h->tp_mac + len > RING_FRAME)
		return 0;
	if (!(st & TP_STATUS_VLAN_VALID)) {
		memcpy(dst, src, len);
		return len;
	}
	if (len + 4 > SLOT_DATA)
		return 0;
	uint16_t tpid = (st & TP_STATUS_VLAN_TPID_VALID) ? h->tp_vlan_tpid : ETH_P_8021Q;
	memcpy(dst, src, 12);
	dst[12] = (uint8_t)(tpid >> 8);
	dst[13] = (uint8_t)tpid;
	dst[14] = (uint8_t)(h->tp_vlan_tci >> 8);
	dst[15] = (uint8_t)h->tp_vlan_tci;
	memcpy(dst + 16, src + 12, len - 12);
	return len + 4;
}

/* Up to RX_BUDGET frames from port pi; returns how many were taken. */
static unsigned rx_port(struct imp *m, int pi, uint64_t now)
{
	struct imp_port *p = &m->port[pi];
	unsigned n = 0;
	while (n < RX_BUDGET) {
		struct tpacket2_hdr *h = ring_frame(p, p->next);
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		if (!(st & TP_STATUS_USER))
			break;
		const struct sockaddr_ll *sll =
			(const void *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
		if (sll->sll_pkttype != PACKET_OUTGOING) {
			m->c.rx[pi]++;
			uint32_t s = slot_get(m);
			uint32_t len = s == UINT32_MAX ? 0 : ring_copy(h, st, slot_data(m, s));
			if (s == UINT32_MAX) {
				m->c.limit_drops++;
			} else if (!len) {
				m->c.oversize++;
				m->free[m->nfree++] = s;
			} else {
				m->slot[s].len = (uint16_t)len;
				m->slot[s].dir = (uint8_t)pi;
			}
			__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
			if (s != UINT32_MAX && len)
				impair_frame(m, pi, s, now, now);
		} else {
			__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		}
		p->next = (p->next + 1) % RING_FRAMES;
		n++;
	}
	return n;
}

/* Frames due by now into their ports' batches. */
static void release_due(struct imp *m, uint64_t now)
{
	while (m->nheap && m->slot[m->heap[0]].due <= now) {
		uint32_t s = heap_pop(m);
		struct imp_dir *d = &m->dir[m->slot[s].dir];
		d->held--;
		tx_push(m, d->out, s);
	}
}

/* ---- setup ---- */

static int port_open(struct imp_port *p, const char *name, char *err, size_t errlen)
{
	int v = TPACKET_V2, one = 1, buf = 8 << 20;
	p->name = name;
	p->fd = -1;
	unsigned ifindex = if_nametoindex(name);
	if (!ifindex) {
		snprintf(err, errlen, "%s: no such interface", name);
		return -1;
	}
	/* Protocol 0: nothing arrives before the bind names the interface. */
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (p->fd < 0) {
		snprintf(err, errlen, "%s: socket: %s", name, strerror(errno));
		return -1;
	}
	struct tpacket_req req = {
		.tp_block_size = RING_BLOCK,
		.tp_block_nr = RING_FRAMES / (RING_BLOCK / RING_FRAME),
		.tp_frame_size = RING_FRAME,
		.tp_frame_nr = RING_FRAMES,
	};
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0 ||
	    setsockopt(p->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		snprintf(err, errlen, "%s: TPACKET_V2 rx ring: %s", name, strerror(errno));
		return -1;
	}
	/* Best effort: the rx path skips PACKET_OUTGOING anyway. */
	(void)setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	(void)setsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	p->map_size = (size_t)RING_FRAMES * RING_FRAME;
	p->map = mmap(NULL, p->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, p->fd, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		snprintf(err, errlen, "%s: mmap: %s", name, strerror(errno));
		return -1;
	}
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)ifindex,
	};
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		snprintf(err, errlen, "%s: bind: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

static void dir_config(struct imp_dir *d, const struct opts *o, bool on, int out)
{
	d->on = on;
	d->out = out;
	d->p_loss = prob32(opt_num(o, OPT_IMP_LOSS));
	d->p_dup = prob32(opt_num(o, OPT_IMP_DUPLICATE));
	d->p_corrupt = prob32(opt_num(o, OPT_IMP_CORRUPT));
	d->p_reorder = prob32(opt_num(o, OPT_IMP_REORDER));
	/* ms in millionths is ns */
	d->delay_ns = opt_num(o, OPT_IMP_DELAY);
	d->jitter_ns = opt_num(o, OPT_IMP_JITTER);
	/* Mbit/s in millionths is bit/s */
	d->rate_bps = opt_num(o, OPT_IMP_RATE);
	d->limit = (uint32_t)opt_num(o, OPT_IMP_LIMIT);
}

static void print_counters(struct imp *m)
{
	for (int i = 0; i < 2; i++) {
		struct tpacket_stats st;
		socklen_t sl = sizeof(st);
		if (getsockopt(m->port[i].fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl) == 0)
			m->c.kernel_drops += st.tp_drops;
	}
	const struct imp_counters *c = &m->c;
	printf("relay: a2b=%llu b2a=%llu lost=%llu dup=%llu corrupt=%llu reordered=%llu "
	       "delayed=%llu send_err=%llu limit_drops=%llu oversize=%llu kernel_drops=%llu\n",
	       (unsigned long long)c->rx[0], (unsigned long long)c->rx[1],
	       (unsigned long long)c->lost, (unsigned long long)c->dup,
	       (unsigned long long)c->corrupt, (unsigned long long)c->reordered,
	       (unsigned long long)c->delayed, (unsigned long long)c->send_err,
	       (unsigned long long)c->limit_drops, (unsigned long long)c->oversize,
	       (unsigned long long)c->kernel_drops);
	fflush(stdout);
}

int cmd_impair(int argc, char **argv)
{
	struct opts o;
	char err[256];
	static struct imp m;
	cli_parse(&o, &opt_cmd_impair, argc, argv);
	if (!opt_given(&o, OPT_IMP_A) || !opt_given(&o, OPT_IMP_B))
		cli_usage_error("impair", "--a and --b are required");
	if (!strcmp(opt_str(&o, OPT_IMP_A), opt_str(&o, OPT_IMP_B)))
		cli_usage_error("impair", "--a and --b must be two interfaces");

	uint64_t dir = opt_num(&o, OPT_IMP_DIR); /* a2b, b2a, both */
	dir_config(&m.dir[DIR_A2B], &o, dir != 1, 1);
	dir_config(&m.dir[DIR_B2A], &o, dir != 0, 0);
	/* A stream per direction: which of a direction's frames are lost
	 * depends on that direction's frames only, not on how the other's
	 * (a transfer's ACKs) interleave with them. */
	uint64_t seed = opt_num(&o, OPT_IMP_SEED);
	m.dir[DIR_A2B].rng = seed;
	m.dir[DIR_B2A].rng = seed ^ 0xd1b54a32d192ed03ull;
	const struct imp_dir *d0 = &m.dir[0];
	m.window_ns = d0->delay_ns / 10 < WINDOW_MAX_NS ? d0->delay_ns / 10 : WINDOW_MAX_NS;

	/* Every frame a direction may hold, the batches, a duplicate. */
	uint64_t n = 2 * (uint64_t)m.dir[0].limit + 2 * TX_BATCH + 2;
	m.nslots = (uint32_t)n;
	m.slot = calloc(n, sizeof(*m.slot));
	m.free = calloc(n, sizeof(*m.free));
	m.heap = calloc(n, sizeof(*m.heap));
	m.data_size = (size_t)n * SLOT_DATA;
	/* Pages become resident as slots are first used. */
	m.data = mmap(NULL, m.data_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!m.slot || !m.free || !m.heap || m.data == MAP_FAILED) {
		fprintf(stderr, "skiff impair: out of memory for %u slots\n", m.nslots);
		return 1;
	}
	for (uint32_t i = 0; i < m.nslots; i++)
		m.free[i] = m.nslots - 1 - i;
	m.nfree = m.nslots;

	for (int i = 0; i < 2; i++)
		if (port_open(&m.port[i], opt_str(&o, i ? OPT_IMP_B : OPT_IMP_A), err,
			      sizeof(err)) < 0) {
			fprintf(stderr, "skiff impair: %s\n", err);
			return 1;
		}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	printf("relay: ready\n");
	fflush(stdout);
	struct pollfd pfd[2] = {{m.port[0].fd, POLLIN, 0}, {m.port[1].fd, POLLIN, 0}};
	while (!stop_flag) {
		uint64_t now = now_ns();
		unsigned ga = rx_port(&m, 0, now), gb = rx_port(&m, 1, now);
		release_due(&m, now_ns() + m.window_ns / 2);
		for (int i = 0; i < 2; i++)
			if (m.port[i].ntx)
				tx_flush(&m, &m.port[i]);
		if (ga || gb)
			continue;
		uint64_t wait = IDLE_NS;
		if (m.nheap) {
			uint64_t due = m.slot[m.heap[0]].due, t = now_ns();
			if (due <= t + m.window_ns / 2)
				continue;
			due += m.window_ns / 2; /* the window's middle */
			wait = due - t < wait ? due - t : wait;
		}
		struct timespec ts = {(time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull)};
		(void)ppoll(pfd, 2, &ts, NULL);
	}
	print_counters(&m);
	return 0;
}
