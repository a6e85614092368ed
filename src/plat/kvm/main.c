/* main.c — the unikernel: boot, find virtio-net, run the same stack and
 * HTTP server as `skiff serve --stack skiff` (src/net, src/loop/loop_skiff,
 * src/http/server, unchanged), plus ARP, ICMP and UDP echo on port 7.
 *
 * Kernel command line (QEMU -append; `skiff vm -- ARGS`), space-separated:
 *   ip=ADDR/LEN        default 10.0.2.15/24 (QEMU user networking)
 *   gw=ADDR            default 10.0.2.2
 *   mac=MAC            default: the device's, else random
 *   port=N             HTTP port (80)
 *   max-conns=N        connections served at once (2048); beyond it 503
 *   header-timeout=S   a request head must arrive within S s (10): 408
 *   keepalive-timeout=S  idle keep-alive connections close after S s (60)
 *   max-body=N         largest request body in bytes (1048576): 413
 *   tcp-sndbuf=N       TCP send buffer per socket (16384)
 *   tcp-rcvbuf=N       TCP receive buffer per socket (8192)
 *   spin-us=N          poll this long after work before parking (100)
 *   exit-after=S       exit 0 after S seconds (a safety net for tests)
 *   shutdown-port=N    a UDP datagram "exit [CODE]" to port N exits with
 *                      CODE (default 0).  Off unless given: anyone who can
 *                      reach the port can stop the guest.
 *   fault=ud|pf|gp|de  raise that CPU exception after boot (tests the
 *                      handler: registers on the console, exit 64+vector)
 *   stats              print the counters on exit
 *   no-msix            no device interrupt: park at most 1 ms (fallback)
 * There is no file system: the server answers its built-in "/" (the
 * 41-byte hello body) and 404 elsewhere; `skiff serve --root` has no
 * equivalent here.
 * Exit codes (isa-debug-exit): 0 clean, 1 setup error, 64+vector a CPU
 * exception; QEMU itself exits with 2*code+1.
 *
 * Memory: the virtio-net ring region is static (.bss); the TCP arena (a
 * socket pool of max-conns + 1024 + max-conns/4 sockets, as `skiff serve`
 * sizes it, each with its send and receive buffer), the loop's socket
 * table and timer heap, and the server's connection states (each with
 * its 32 KiB receive buffer) come from mem.c's bump allocator over guest
 * RAM, sized from the command line.  Defaults: 3584 sockets x 24 KiB +
 * 2048 connections x ~38 KiB = ~161 MiB, which leaves ~90 MiB of a
 * 256 MiB guest free; a configuration that does not fit stops the boot
 * with the numbers.
 *
 * The loop is loop_skiff's runner (loop_skiff.h says what one must do; it
 * mirrors apps/netloop.c + apps/serve_skiff.c, with hlt instead of ppoll):
 *   loop_skiff_turn (the Date header is refreshed there); poll the device
 *   only when its used ring moved (one load) or buffers wait to be
 *   re-posted, and feed the frames to the interface, which hands TCP
 *   segments to the engine; interface timers; application timers when
 *   due; tcp_poll, then tcp_events -> loop_skiff_dispatch and tcp_poll
 *   again, in bounded rounds; one tx_sync per turn for everything
 *   produced.  After work, spin (bounded) because the next frame usually
 *   follows.  Then park: arm the timer for the earliest deadline of the
 *   interface, TCP and the application (reloaded only when it moved),
 *   allow the rx interrupt, look at the queue once more, and `sti; hlt`
 *   only if it is still empty.  Interrupts are off at every other moment,
 *   so handlers never race the stack and the device never interrupts
 *   while we poll. */
#include "../../dev/virtio_net.h"
#include "../../http/date.h"
#include "../../http/server.h"
#include "../../loop/loop_skiff.h"
#include "../../net/iface.h"
#include "../../net/tcp_iface.h"
#include "../plat.h"
#include "cpu.h"
#include "kvm.h"
#include "virtio_pci.h"

#define ECHO_PORT 7
#define MSIX_ENTRY_RX 0
/* Defaults of the HTTP part; the command line overrides them. */
#define UK_MAX_CONNS 2048
#define UK_SNDBUF (16u * 1024) /* a response head + the hello body is ~200 B */
#define UK_RCVBUF (8u * 1024)  /* requests are small; a big head just takes
				* more than one window, the server reassembles */
#define UK_BACKLOG 4096        /* as `skiff serve`: bursts queue, not cookies */
#define UK_EVENTS 64

struct hvm_start_info {
	uint32_t magic; /* 0x336ec578 */
	uint32_t version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
#define HVM_START_MAGIC 0x336ec578u

struct loop_counters {
	uint64_t turns, busy_turns, parks, wakeups_frame, wakeups_timer, wakeups_other;
	uint64_t tcp_events;
};

/* The ring region the device DMAs into: static, small (2 MiB). */
static uint8_t arena[2u << 20] __attribute__((aligned(4096)));
static struct virtio_net vnet;
static struct iface ifc;
static struct tcp_stack tcp;
static struct http_server srv;
static char cmdline[1024];
static struct loop_counters lc;
static volatile int stop;
static unsigned exit_code;
static bool have_irq;
static uint64_t spin_ns;
static sk_time_ns exit_at = SK_TIME_NEVER;

/* Wall clock: the RTC's second at boot, advanced by the TSC. */
static uint64_t wall_base;  /* Unix seconds read from the RTC */
static sk_time_ns wall_at;  /* plat_now() when it was read */
static uint64_t date_sec;   /* the second the Date header holds */

void kmain(uint32_t start_info);

static void echo_udp(void *ctx, struct iface *i, sk_time_ns now, uint32_t src, uint16_t sport,
		     uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx;
	udp_sendto(i, now, dport, src, sport, data, len);
}

static void shutdown_udp(void *ctx, struct iface *i, sk_time_ns now, uint32_t src, uint16_t sport,
			 uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx, (void)i, (void)now, (void)src, (void)sport, (void)dport;
	if (len < 4 || sk_memcmp(data, "exit", 4))
		return;
	unsigned code = 0;
	for (size_t k = 4; k < len; k++)
		if (data[k] >= '0' && data[k] <= '9' && code < 100)
			code = code * 10 + (unsigned)(data[k] - '0');
	exit_code = code > 127 ? 127 : code; /* QEMU's status is 2*code+1 in 8 bits */
	stop = 1;
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	(void)ctx;
	kprintf("%s %lu\n", name, value);
}

/* loop_skiff's platform counters: device, driver, this loop, timer, the
 * interface and TCP (the names match `skiff serve --stats` where they
 * mean the same thing). */
static void plat_stats(void *ctx, void (*fn)(void *fctx, const char *name, uint64_t v), void *fctx)
{
	(void)ctx;
	const struct dev_stats *s = &vnet.dev.stats;
	fn(fctx, "dev.rx_frames", s->rx_frames);
	fn(fctx, "dev.rx_bytes", s->rx_bytes);
	fn(fctx, "dev.rx_drops", s->rx_drops);
	fn(fctx, "dev.rx_syncs", s->rx_syncs);
	fn(fctx, "dev.tx_frames", s->tx_frames);
	fn(fctx, "dev.tx_bytes", s->tx_bytes);
	fn(fctx, "dev.tx_drops", s->tx_drops);
	fn(fctx, "dev.tx_syncs", s->tx_syncs);
	fn(fctx, "virtio.notifies", vnet.c.notifies);
	fn(fctx, "virtio.notify_skipped", vnet.c.notify_skipped);
	fn(fctx, "virtio.irq_arms", vnet.c.irq_arms);
	fn(fctx, "virtio.irq_arm_races", vnet.c.irq_arm_races);
	fn(fctx, "virtio.rx_bad_len", vnet.c.rx_bad_len);
	fn(fctx, "virtio.bad_used", vnet.c.bad_used);
	fn(fctx, "loop.turns", lc.turns);
	fn(fctx, "loop.busy_turns", lc.busy_turns);
	fn(fctx, "loop.parks", lc.parks);
	fn(fctx, "loop.wakeups_frame", lc.wakeups_frame);
	fn(fctx, "loop.wakeups_timer", lc.wakeups_timer);
	fn(fctx, "loop.wakeups_other", lc.wakeups_other);
	fn(fctx, "loop.tcp_events", lc.tcp_events);
	fn(fctx, "timer.loads", timer_loads);
	fn(fctx, "timer.skips", timer_skips);
	fn(fctx, "timer.fires", timer_fires);
	iface_stats(&ifc, fn, fctx);
	tcp_stats(&tcp, fn, fctx);
}

static void plat_fatal(void *ctx, const char *msg)
{
	(void)ctx;
	kprintf("skiff-uk: %s\n", msg);
	kvm_exit(KVM_EXIT_FATAL);
}

static void raise_fault(const char *kind)
{
	kprintf("skiff-uk: raising fault=%s as asked\n", kind);
	if (kind[0] == 'u')
		__asm__ volatile("ud2");
	else if (kind[0] == 'p')
		*(volatile uint64_t *)(uintptr_t)0x7fc0000000ull = 1; /* 511 GiB: never mapped */
	else if (kind[0] == 'g')
		*(volatile uint64_t *)(uintptr_t)0x8000000000000000ull = 1; /* non-canonical */
	else
		__asm__ volatile("xor %%ecx, %%ecx; div %%ecx" ::: "eax", "ecx", "edx");
}

static void format_ip(uint32_t ip, char out[16])
{
	ksnprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* loop->on_turn: the Date header changes once a second, so it is
 * formatted only then; the rest of the time this is one division. */
static void refresh_date(void *ctx, sk_time_ns now)
{
	(void)ctx;
	uint64_t sec = wall_base + (now > wall_at ? (now - wall_at) / SK_NS_PER_S : 0);
	if (sec == date_sec)
		return;
	date_sec = sec;
	char buf[HTTP_DATE_LEN];
	http_date_format(sec, buf);
	http_server_set_date(&srv, buf);
}

static sk_time_ns min_time(sk_time_ns a, sk_time_ns b)
{
	return a < b ? a : b;
}

/* The TCP engine and the application until neither has more to do now
 * (netloop's run_tcp).  Returns the number of events handed over. */
static unsigned run_tcp(struct loop *l, sk_time_ns now)
{
	struct tcp_event ev[UK_EVENTS];
	unsigned total = 0;
	if (tcp_next_deadline(&tcp) <= now)
		tcp_poll(&tcp, now);
	/* Bounded: what is left after 16 rounds waits a turn, so the device
	 * is never starved by an application that keeps making events. */
	for (int round = 0; round < 16; round++) {
		int n = tcp_events(&tcp, ev, UK_EVENTS);
		if (n <= 0)
			break;
		total += (unsigned)n;
		loop_skiff_dispatch(l, ev, n, now);
		if (tcp_next_deadline(&tcp) <= now)
			tcp_poll(&tcp, now);
	}
	return total;
}

/* loop_skiff's runner (see the top of this file). */
static int plat_run(void *ctx, struct loop *l, volatile int *stopp)
{
	(void)ctx;
	struct virtio_net *vn = &vnet;
	struct dev *d = &vn->dev;
	sk_time_ns spin_until = 0;
	bool repost = false; /* the stack released rx slots: post them again */
	while (!*stopp) {
		sk_time_ns now = plat_now();
		if (now >= exit_at)
			break;
		lc.turns++;
		loop_skiff_turn(l, now);
		unsigned work = 0;
		if (repost || virtio_net_rx_ready(vn)) {
			if (dev_rx_sync(d) < 0) {
				kprintf("skiff-uk: %s: rx ring broken\n", d->name);
				exit_code = KVM_EXIT_FATAL;
				return -SK_ENETUNREACH; /* as serve_skiff.c: the device is gone */
			}
			repost = false;
			if (ring_avail(d->rx)) {
				work = iface_rx(&ifc, now);
				repost = true;
			}
		}
		if (iface_next_deadline(&ifc) <= now)
			iface_poll(&ifc, now);
		if (loop_skiff_next_deadline(l) <= now)
			loop_skiff_timers(l, now);
		unsigned ev = run_tcp(l, now);
		lc.tcp_events += ev;
		work += ev;
		if (d->tx->head != vn->tx_sub && dev_tx_sync(d) < 0) {
			kprintf("skiff-uk: %s: tx ring broken\n", d->name);
			exit_code = KVM_EXIT_FATAL;
			return -SK_ENETUNREACH; /* as serve_skiff.c: the device is gone */
		}
		if (work || repost) {
			lc.busy_turns += work != 0;
			if (work)
				spin_until = now + spin_ns;
			continue;
		}
		if (now < spin_until) {
			cpu_pause();
			continue;
		}
		/* Park until a frame, the earliest deadline or exit-after. */
		sk_time_ns deadline = min_time(iface_next_deadline(&ifc), tcp_next_deadline(&tcp));
		deadline = min_time(deadline, loop_skiff_next_deadline(l));
		deadline = min_time(deadline, exit_at);
		if (deadline <= now)
			continue; /* a timer is due: no park */
		if (!have_irq && deadline - now > SK_NS_PER_MS)
			deadline = now + SK_NS_PER_MS; /* no interrupt: poll at 1 kHz */
		timer_arm(deadline);
		if (virtio_net_irq_arm(vn)) {
			virtio_net_irq_disarm(vn);
			continue;
		}
		uint64_t frames0 = trap_irq_count[VEC_VIRTIO_NET], ticks0 = trap_irq_count[VEC_TIMER];
		lc.parks++;
		cpu_sti_hlt();
		cpu_cli();
		virtio_net_irq_disarm(vn);
		if (trap_irq_count[VEC_VIRTIO_NET] != frames0)
			lc.wakeups_frame++;
		else if (trap_irq_count[VEC_TIMER] != ticks0)
			lc.wakeups_timer++;
		else
			lc.wakeups_other++;
	}
	return 0;
}

static void *alloc_or_die(const char *what, size_t size)
{
	void *p = mem_alloc(size, 4096);
	if (!p) {
		struct mem_info mi;
		mem_info(&mi);
		kprintf("skiff-uk: out of memory: %s needs %lu KiB, %lu KiB free of %lu MiB RAM "
			"(lower max-conns / tcp-sndbuf / tcp-rcvbuf, or give the guest more --mem)\n",
			what, (uint64_t)size >> 10, mi.heap_free >> 10, mi.ram >> 20);
		kvm_exit(KVM_EXIT_FATAL);
	}
	return p;
}

void kmain(uint32_t start_info)
{
	console_init();
	trap_init();
	kprintf("\nskiff-uk: booting\n");

	const struct hvm_start_info *si = (const void *)(uintptr_t)start_info;
	if (si->magic != HVM_START_MAGIC) {
		kprintf("skiff-uk: not started through PVH (bad start_info magic)\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	if (si->cmdline_paddr) {
		const char *src = (const char *)(uintptr_t)si->cmdline_paddr;
		size_t n = 0;
		while (src[n] && n < sizeof(cmdline) - 1) {
			cmdline[n] = src[n];
			n++;
		}
		cmdline[n] = 0;
	}
	kprintf("skiff-uk: cmdline '%s'\n", cmdline);
	struct kvm_args a = {
		.ip = SK_IP4(10, 0, 2, 15), .prefix_len = 24, .gw = SK_IP4(10, 0, 2, 2), .spin_us = 100,
	};
	if (cmdline_parse(cmdline, &a) < 0)
		kvm_exit(KVM_EXIT_FATAL);
	uint32_t mask = a.prefix_len == 32 ? ~0u : ~(~0u >> a.prefix_len);
	if (a.gw && (a.gw & mask) != (a.ip & mask)) {
		kprintf("skiff-uk: gw must be inside the ip subnet\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	/* The memory map lives in firmware memory the heap may cover: read
	 * it before anything is allocated. */
	if (mem_init(si->version >= 1 ? si->memmap_paddr : 0, si->version >= 1 ? si->memmap_entries : 0) < 0) {
		kprintf("skiff-uk: no usable RAM above the image\n");
		kvm_exit(KVM_EXIT_FATAL);
	}

	if (time_init() < 0) {
		kprintf("skiff-uk: no usable TSC/LAPIC timer\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	kprintf("skiff-uk: tsc %lu kHz (%s), timer %s\n", time_tsc_hz() / 1000, time_source(),
		time_deadline_mode() ? "tsc-deadline" : "lapic one-shot");
	struct rtc_time rt;
	wall_at = plat_now();
	if (rtc_read(&rt) == 0) {
		wall_base = http_date_from_civil(rt.year, rt.month, rt.day, rt.hour, rt.min, rt.sec);
	} else {
		kprintf("skiff-uk: RTC unreadable: Date headers start at the epoch\n");
		wall_base = 0;
	}
	if (a.fault)
		raise_fault(a.fault);

	struct pci_dev pd;
	struct virtio_pci_regs regs;
	const char *why = "no virtio-net device";
	if (virtio_pci_find_net(&pd) < 0 || virtio_pci_map(&pd, &regs, &why) < 0) {
		kprintf("skiff-uk: %s\n", why);
		kvm_exit(KVM_EXIT_FATAL);
	}
	have_irq = !a.no_msix && pci_msix_setup(&pd, MSIX_ENTRY_RX, VEC_VIRTIO_NET, lapic_id()) == 0;
	char name[32];
	ksnprintf(name, sizeof(name), "virtio-net@%02x:%02x.%x", pd.bus, pd.dev, pd.fn);
	struct virtio_net_params p = {
		.regs = regs, .arena = arena, .arena_size = sizeof(arena),
		.rx_msix = have_irq ? MSIX_ENTRY_RX : VIRTIO_MSI_NO_VECTOR, .name = name,
	};
	if (virtio_net_arena_size() > sizeof(arena) || virtio_net_init(&vnet, &p, &why) < 0) {
		kprintf("skiff-uk: %s: %s\n", name, why);
		kvm_exit(KVM_EXIT_FATAL);
	}
	struct dev *d = &vnet.dev;

	struct iface_config cfg = {.ip = a.ip, .prefix_len = a.prefix_len, .gw = a.gw};
	if (a.have_mac)
		sk_memcpy(cfg.mac, a.mac, SK_MAC_LEN);
	else if (vnet.have_mac)
		sk_memcpy(cfg.mac, d->mac, SK_MAC_LEN);
	else if (plat_random(cfg.mac, SK_MAC_LEN) == 0)
		cfg.mac[0] = (uint8_t)((cfg.mac[0] & 0xfc) | 0x02);
	sk_memcpy(d->mac, cfg.mac, SK_MAC_LEN);
	if (plat_random(&cfg.seed, sizeof(cfg.seed)) < 0)
		cfg.seed = rdtsc();

	sk_time_ns now = plat_now();
	iface_init(&ifc, d, &cfg, now);
	if (udp_bind(&ifc, ECHO_PORT, echo_udp, NULL) < 0 ||
	    (a.shutdown_port && udp_bind(&ifc, a.shutdown_port, shutdown_udp, NULL) < 0)) {
		kprintf("skiff-uk: cannot bind UDP ports\n");
		kvm_exit(KVM_EXIT_FATAL);
	}

	/* The HTTP server's configuration, as `skiff serve` builds it. */
	struct http_server_config hc;
	http_server_config_default(&hc);
	hc.addr = a.ip;
	hc.port = a.port ? a.port : 80;
	hc.max_conns = a.max_conns ? (uint32_t)a.max_conns : UK_MAX_CONNS;
	if (a.header_timeout_s)
		hc.header_timeout = (sk_time_ns)a.header_timeout_s * SK_NS_PER_S;
	if (a.keepalive_timeout_s)
		hc.keepalive_timeout = (sk_time_ns)a.keepalive_timeout_s * SK_NS_PER_S;
	if (a.have_max_body)
		hc.max_body = a.max_body;

	/* TCP: every served connection, plus what the server no longer holds
	 * but TCP still does (FIN_WAIT, TIME_WAIT: the oldest TIME_WAIT is
	 * recycled when the pool runs out), the listener, handshakes and the
	 * refused ones getting their 503 -- serve_skiff.c's formula. */
	struct tcp_config tc;
	tcp_config_default(&tc);
	tcp_iface_config(&tc, &ifc);
	tc.max_sockets = hc.max_conns + 1024 + hc.max_conns / 4;
	tc.sndbuf = a.tcp_sndbuf ? (uint32_t)a.tcp_sndbuf : UK_SNDBUF;
	tc.rcvbuf = a.tcp_rcvbuf ? (uint32_t)a.tcp_rcvbuf : UK_RCVBUF;
	if (plat_random(tc.seed, sizeof(tc.seed)) < 0) {
		tc.seed[0] = rdtsc();
		tc.seed[1] = rdtsc() * 0x9e3779b97f4a7c15ull;
	}
	size_t tcp_sz = tcp_arena_size(&tc);
	void *tcp_mem = alloc_or_die("the TCP arena", tcp_sz);
	int rc = tcp_stack_init(&tcp, tcp_mem, tcp_sz, &tc, now);
	if (rc < 0 || tcp_iface_attach(&tcp, &ifc) < 0) {
		kprintf("skiff-uk: TCP init failed (%d)\n", rc);
		kvm_exit(KVM_EXIT_FATAL);
	}
	struct loop_skiff_config lsc = {
		.tcp = &tcp,
		.local_ip = a.ip,
		.max_timers = hc.max_conns + 16, /* one per connection, a few spare */
		.listen_backlog = UK_BACKLOG,
		.now = now,
		.plat = {.run = plat_run, .stats = plat_stats, .fatal = plat_fatal},
	};
	size_t loop_sz = loop_skiff_mem_size(&lsc);
	struct loop *loop = loop_skiff_init(alloc_or_die("the loop", loop_sz), loop_sz, &lsc);
	size_t srv_sz = http_server_mem_size(&hc);
	void *srv_mem = alloc_or_die("the HTTP connections", srv_sz);
	if (!loop || (rc = http_server_init(&srv, srv_mem, srv_sz, &hc, loop)) < 0 ||
	    (rc = http_server_start(&srv)) < 0) {
		kprintf("skiff-uk: HTTP server on port %u failed (%d)\n", hc.port, rc);
		kvm_exit(KVM_EXIT_FATAL);
	}
	refresh_date(NULL, now);
	loop->on_turn = refresh_date;

	trap_set_handler(VEC_VIRTIO_NET, NULL, NULL); /* counted in trap_irq_count; the loop polls */
	iface_announce(&ifc, now);
	dev_tx_sync(d);

	struct mem_info mi;
	mem_info(&mi);
	kprintf("skiff-uk: memory: %lu MiB RAM (%s), image+bss to %lu KiB; heap at %lu KiB: "
		"tcp %lu KiB (%u sockets x %u+%u B), loop %lu KiB, http %lu KiB (%u conns); "
		"%lu MiB free\n",
		mi.ram >> 20, mi.source, mi.image_end >> 10, mi.heap_base >> 10,
		(uint64_t)tcp_sz >> 10, tc.max_sockets, tc.sndbuf, tc.rcvbuf, (uint64_t)loop_sz >> 10,
		(uint64_t)srv_sz >> 10, hc.max_conns, mi.heap_free >> 20);
	char ip[16], gw[16], date[HTTP_DATE_LEN + 1];
	format_ip(a.ip, ip);
	format_ip(a.gw, gw);
	sk_memcpy(date, srv.date, HTTP_DATE_LEN);
	date[HTTP_DATE_LEN] = 0;
	kprintf("skiff-uk: clock %s (RTC + TSC)\n", date);
	const uint8_t *m = cfg.mac;
	kprintf("skiff-uk: ready ip=%s/%u gw=%s mac=%02x:%02x:%02x:%02x:%02x:%02x http=%u "
		"udp_echo=%d max_conns=%u dev=%s irq=%s boot_ms=%lu\n",
		ip, a.prefix_len, gw, m[0], m[1], m[2], m[3], m[4], m[5], hc.port, ECHO_PORT,
		hc.max_conns, d->name, have_irq ? "msix" : "none(poll 1ms)",
		(uint64_t)(plat_now() / SK_NS_PER_MS));

	spin_ns = a.spin_us * SK_NS_PER_US;
	exit_at = a.exit_after_s ? now + a.exit_after_s * SK_NS_PER_S : SK_TIME_NEVER;
	rc = loop_run(loop, &stop);
	/* Close the listener and every connection; what that queued (FINs)
	 * leaves before the guest goes. */
	http_server_stop(&srv);
	now = plat_now();
	tcp_poll(&tcp, now);
	if (d->tx->head != vnet.tx_sub)
		dev_tx_sync(d);
	if (a.stats) {
		http_server_stats(&srv, print_stat, NULL);
		loop_stats(loop, print_stat, NULL);
	}
	if (rc < 0 && !exit_code)
		exit_code = KVM_EXIT_FATAL;
	kprintf("skiff-uk: exit %u\n", exit_code);
	dev_close(d);
	kvm_exit(exit_code);
}
