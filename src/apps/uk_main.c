/* uk_main.c — the unikernel's application: after the platform booted
 * (plat/kvm/start.c calls uk_app_main), find virtio-net, run the same
 * stack and HTTP server as `skiff serve --stack skiff` (src/net,
 * src/loop/loop_skiff, src/http/server, unchanged) with the same run loop
 * (loop/runner.h), plus ARP, ICMP and UDP echo on port 7.  What differs
 * from the hosted main is only what the platform gives: the device
 * (virtio-net over plat/kvm's PCI transport and MSI-X instead of
 * dev_open), memory (mem_alloc), the console and the command line.
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
 *   spin-us=N|auto     poll this long after work before parking (100);
 *                      auto: learn it from the arrival gaps (loop/spin.h)
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
 * The loop is the runner (loop/runner.h: the turn, the learned spin, the
 * park), with loop_skiff's callbacks (loop_skiff_attach_runner), exactly as
 * apps/serve_skiff.c runs it.  Its park is plat/kvm/park.c: arm the LAPIC
 * timer for the earliest deadline (of the interface, TCP, the application
 * and exit-after), let virtio-net arm its rx interrupt and look once more,
 * `sti; hlt` only if the queue is still empty.  Without MSI-X (no-msix)
 * the device has nothing to arm and the park polls at 1 kHz.  Interrupts
 * are off at every other moment, so handlers never race the stack and the
 * device never interrupts while the stack polls. */
#include "../dev/virtio_net.h"
#include "../http/date.h"
#include "../http/server.h"
#include "../loop/loop_skiff.h"
#include "../loop/runner.h"
#include "../net/iface.h"
#include "../net/tcp_iface.h"
#include "../plat/kvm/kvm.h"
#include "../plat/kvm/virtio_pci.h"
#include "../plat/plat.h"
#include "uk_cmdline.h"

#define ECHO_PORT 7
#define MSIX_ENTRY_RX 0
/* Defaults of the HTTP part; the command line overrides them. */
#define UK_MAX_CONNS 2048
#define UK_SNDBUF (16u * 1024) /* a response head + the hello body is ~200 B */
#define UK_RCVBUF (8u * 1024)  /* requests are small; a big head just takes
				* more than one window, the server reassembles */
#define UK_BACKLOG 4096        /* as `skiff serve`: bursts queue, not cookies */

/* The ring region the device DMAs into: static, small (2 MiB). */
static uint8_t arena[2u << 20] __attribute__((aligned(4096)));
static struct virtio_net vnet;
static struct iface ifc;
static struct tcp_stack tcp;
static struct http_server srv;
static struct runner run;
static volatile int stop;
static unsigned exit_code;

/* Wall clock: the RTC's second at boot, advanced by the TSC. */
static uint64_t wall_base;  /* Unix seconds read from the RTC */
static sk_time_ns wall_at;  /* plat_now() when it was read */
static uint64_t date_sec;   /* the second the Date header holds */

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
	runner_stats(&run, fn, fctx);
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

/* loop_skiff's run: the runner, until stop, exit-after or a broken ring. */
static int plat_run(void *ctx, struct loop *l, volatile int *stopp)
{
	(void)ctx, (void)l;
	if (runner_run(&run, stopp) == 0)
		return 0;
	kprintf("skiff-uk: %s: %s ring broken (%d)\n", vnet.dev.name, run.err_what, run.err);
	exit_code = KVM_EXIT_FATAL;
	return -SK_ENETUNREACH; /* as serve_skiff.c: the device is gone */
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

unsigned uk_app_main(const struct kvm_start *st)
{
	struct uk_args a = {
		.ip = SK_IP4(10, 0, 2, 15), .prefix_len = 24, .gw = SK_IP4(10, 0, 2, 2), .spin_us = 100,
	};
	if (uk_cmdline_parse(st->cmdline, &a) < 0)
		return KVM_EXIT_FATAL;
	uint32_t mask = a.prefix_len == 32 ? ~0u : ~(~0u >> a.prefix_len);
	if (a.gw && (a.gw & mask) != (a.ip & mask)) {
		kprintf("skiff-uk: gw must be inside the ip subnet\n");
		return KVM_EXIT_FATAL;
	}
	wall_at = st->rtc_at;
	if (st->rtc_ok) {
		wall_base = http_date_from_civil(st->rtc.year, st->rtc.month, st->rtc.day,
						 st->rtc.hour, st->rtc.min, st->rtc.sec);
	} else {
		kprintf("skiff-uk: RTC unreadable: Date headers start at the epoch\n");
		wall_base = 0;
	}
	if (a.fault)
		trap_raise(a.fault);

	struct pci_dev pd;
	struct virtio_pci_regs regs;
	const char *why = "no virtio-net device";
	if (virtio_pci_find_net(&pd) < 0 || virtio_pci_map(&pd, &regs, &why) < 0) {
		kprintf("skiff-uk: %s\n", why);
		kvm_exit(KVM_EXIT_FATAL);
	}
	bool have_irq = !a.no_msix && pci_msix_setup(&pd, MSIX_ENTRY_RX, VEC_VIRTIO_NET, lapic_id()) == 0;
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
		cfg.seed = plat_cycles();

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
		tc.seed[0] = plat_cycles();
		tc.seed[1] = plat_cycles() * 0x9e3779b97f4a7c15ull;
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

	run = (struct runner){
		.dev = d, .ifc = &ifc, .tcp = &tcp, .spin_ns = a.spin_us * SK_NS_PER_US,
		.spin_learn = a.spin_learn,
		.until = a.exit_after_s ? now + a.exit_after_s * SK_NS_PER_S : 0,
	};
	loop_skiff_attach_runner(loop, &run);
	rc = loop_run(loop, &stop);
	/* Close the listener and every connection; what that queued (FINs)
	 * leaves before the guest goes. */
	http_server_stop(&srv);
	now = plat_now();
	tcp_poll(&tcp, now);
	dev_tx_sync(d);
	if (a.stats) {
		http_server_stats(&srv, print_stat, NULL);
		loop_stats(loop, print_stat, NULL);
	}
	if (rc < 0 && !exit_code)
		exit_code = KVM_EXIT_FATAL;
	kprintf("skiff-uk: exit %u\n", exit_code);
	dev_close(d);
	return exit_code;
}
