/* uk_main.c — the unikernel's application: after the platform booted
 * (plat/kvm/start.c calls uk_app_main), find virtio-net, run the same
 * stack and HTTP engine as `skiff serve --stack skiff` (src/net,
 * src/loop/loop_skiff, src/http/app.c through the router, unchanged) with
 * the same run loop (runner/runner.h), plus ARP, ICMP and UDP echo on port
 * 7 (with ip6=, ND, ICMPv6 and UDP echo over IPv6 too).  What differs
 * from the hosted runtime is only what the platform gives: the device
 * (virtio-net over plat/kvm's PCI transport and MSI-X, or over MMIO
 * where the command line names a virtio_mmio.device= window, instead of
 * dev_open), memory (mem_alloc), the console and the command line.
 *
 * Kernel command line (QEMU -append; `skiff vm -- WORD...`): the words of
 * opt_cmd_uk in conf/opts.c, `skiff serve`'s options as name=value (ip=,
 * gw=, mac=, port=, max-conns=, header-timeout=, keepalive-timeout=,
 * max-body=, tcp-sndbuf=, tcp-rcvbuf=, spin-us=) and the guest's own
 * (exit-after=, shutdown-port=, fault=, stats, no-msix, no-event-idx,
 * offload=); `help` lists
 * them with their bounds and defaults.  Parsed and checked by the same
 * code as the hosted command line, so a bad value gets the same message,
 * and stops the boot (exit 1).
 *
 * What serves is the sites runtime (uk/uk_sites.h) on the configuration
 * model (conf/sites_conf.h), as `skiff serve` hosted, filled one of two
 * ways:
 *   - from the words (conf/sites_flags.h's sites_conf_from_guest, as the
 *     flags fill it hosted): one site on port=, answering from the site
 *     archive `skiff vm --root DIR` packs into the PVH module
 *     (archive/site_archive.h; QEMU -initrd, reserved from the heap,
 *     checked whole at boot, bodies slices of the module), or without one
 *     the built-in "/" (the 41-byte hello body) and 404 elsewhere; with
 *     `skiff vm --tls-cert F --tls-key F` (the PEM files appended to the
 *     module, uk/tls_bundle.h) a tls listener on tls-port= (BearSSL,
 *     tls/tls_bearssl.h), tls-redirect a site of the plain listener's
 *     own; metrics=PORT a listener whose one route is the metrics page;
 *   - from a configuration file: `skiff vm --config FILE` makes the module
 *     a bundle (archive/site_bundle.h) of the file, its folders and
 *     certificates, one engine per listener of the file, on each vCPU.
 * With more than one vCPU (the words or a configuration; uk_smp.h) each other vCPU runs
 * an instance of the same runtime on its own stack and queue pair, and
 * on the shutdown port's "exit" drains it there (uk_drain.h) while this
 * vCPU drains its own and then waits for them (drain_all).
 * An application image (mk/examples.mk: skiff_app linked in) is the same
 * with the words' site as route / { app; } (256 connections unless
 * max-conns= says; its init once, with the first listener's engine), or
 * the file's `app;` routes.  The proxy's image (build/skiff-proxy-uk.elf,
 * uk/uk_proxy.c) brings its own words (uk/uk_app.h's uk_app: the table
 * replaces opt_cmd_uk), and its words' site is route / { proxy ...; }
 * (256 connections unless max-conns= says), the cache taken last.
 * metrics=PORT is a listener of the model with every source: the words'
 * and a file's.
 * Exit codes (isa-debug-exit): 0 clean, 1 setup error, 64+vector a CPU
 * exception; QEMU itself exits with 2*code+1.
 *
 * Memory: the virtio-net ring region is static (.bss); the TCP arena (a
 * socket pool of max-conns + 1024 + max-conns/4 sockets, as `skiff serve`
 * sizes it, each with its send and receive buffer), the loop's socket
 * table and timer heap, and the engines' connection states (each with
 * its 32 KiB receive and 16 KiB output buffer) come from mem.c's bump
 * allocator over guest RAM, sized from the command line.  Defaults: 3584
 * sockets x 24 KiB + 2048 connections x ~52 KiB = ~189 MiB, which leaves
 * ~60 MiB of a 256 MiB guest free; a configuration that does not fit
 * stops the boot with the numbers.
 *
 * The loop is the runner (runner/runner.h: the turn, the learned spin, the
 * park), with loop_skiff's callbacks (loop_skiff_attach_runner), exactly as
 * host/serve_skiff.c runs it.  Its park is plat/kvm/park.c: arm the LAPIC
 * timer for the earliest deadline (of the interface, TCP, the application
 * and exit-after), let virtio-net arm its rx interrupt and look once more,
 * `sti; hlt` only if the queue is still empty.  Without MSI-X (no-msix)
 * the device has nothing to arm and the park polls at 1 kHz.  Interrupts
 * are off at every other moment, so handlers never race the stack and the
 * device never interrupts while the stack polls. */
#include "../dev/virtio_net.h"
#include "../http/app.h"
#include "../http/date.h"
#include "../loop/loop_skiff.h"
#include "../runner/runner.h"
#include "../net/iface.h"
#include "../net/tcp_iface.h"
#include "../plat/kvm/kvm.h"
#include "../dev/virtio_pci.h"
#include "../dev/virtio_mmio.h"
#include "../conf/virtio_mmio_arg.h"
#include "../plat/plat.h"
#include "../conf/opts.h"
#include "../archive/site_archive.h"
#include "tls_bundle.h"
#include "uk_alog.h"
#include "uk_app.h"
#include "uk_drain.h"
#include "uk_sites.h"
#include "uk_smp.h"

#define ECHO_PORT 7
#define MSIX_ENTRY_RX 0
/* The command line's defaults (2048 connections, 16 KiB/8 KiB socket
 * buffers: a response head + the hello body is ~200 B, requests are small)
 * are opt_cmd_uk's, in conf/opts.c. */
#define UK_BACKLOG 4096        /* as `skiff serve`: bursts queue, not cookies */
/* With workers, worker 0 waits for theirs this long past drain-timeout:
 * a drain that timed out closes at once, so this covers their wake-up. */
#define UK_DRAIN_WAIT_MARGIN_NS (2 * SK_NS_PER_S)
/* Without a drain, how long worker 0 waits for the others to stop. */
#define UK_STOP_WAIT_NS (2 * SK_NS_PER_S)

/* The ring region the device DMAs into: static, small (2 MiB). */
static uint8_t arena[2u << 20] __attribute__((aligned(4096)));
/* One per queue pair: [0] is this stack's; with more than one vCPU on a
 * multi-queue device, [k] is worker k's (uk_smp.h). */
static struct virtio_net vnets[KVM_MAX_CPUS];
static unsigned npairs = 1;
static struct iface ifc;
static struct tcp_stack tcp;
static struct loop *uk_loop;
/* The sites runtime (uk/uk_sites.h), worker 0's instance: what serves,
 * a configuration's sites or the words' one site (the model filled from
 * them: files, the built-in page, an application image's app; route or
 * the proxy image's proxy route). */
static struct uk_sites *sites;
/* An application image (mk/examples.mk: build/examples/NAME-uk.elf) is
 * this kernel linked with one more object that defines skiff_app
 * (http/app.h); the guest then runs the application as its site's
 * route / { app; }.  Weak: skiff-uk.elf has none, and its
 * address is NULL there. */
extern const struct http_app_def skiff_app __attribute__((weak));
/* An image with its own words (uk/uk_app.h: the proxy's,
 * build/skiff-proxy-uk.elf) defines uk_app instead. */
extern const struct uk_app_hooks uk_app __attribute__((weak));
/* The application linked into this image (&skiff_app), or NULL: it runs
 * on the sites runtime (the words' or the file's app; routes). */
static const struct http_app_def *app_def;
static struct runner run;
static uint64_t site_bytes; /* the boot module's size, 0 without one */
static volatile int stop;
static unsigned exit_code;
/* The shutdown port's "exit": a drain (uk_drain.h), as SIGTERM is for
 * `skiff serve`.  Set on whichever vCPU got the datagram, before stop. */
static bool drain_wanted;
/* The shutdown datagram said "stats": print the counters at exit. */
static bool stats_at_exit;
static struct uk_alog alog;
/* The error log (base/log.h) on the console: runtime warnings, such as a
 * refused access-log datagram, limited per kind. */
static struct sk_log elog;
/* The boot module is a configuration bundle (`skiff vm --config FILE`). */
static bool bundle;

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

/* Over IPv6 (ip6=): back from the address the datagram came to. */
static void echo_udp6(void *ctx, struct iface *i, sk_time_ns now, const struct ipv6_addr *src,
		      const struct ipv6_addr *dst, uint16_t sport, uint16_t dport, const uint8_t *data,
		      size_t len)
{
	(void)ctx;
	udp6_sendto(i, now, dport, dst, src, sport, data, len);
}

static void shutdown_udp(void *ctx, struct iface *i, sk_time_ns now, uint32_t src, uint16_t sport,
			 uint16_t dport, const uint8_t *data, size_t len)
{
	(void)ctx, (void)i, (void)now, (void)src, (void)sport, (void)dport;
	if (len < 4 || sk_memcmp(data, "exit", 4))
		return;
	unsigned code = 0;
	size_t k = 4;
	for (; k < len && data[k] == ' '; k++)
		;
	for (; k < len && data[k] >= '0' && data[k] <= '9'; k++)
		if (code < 1000)
			code = code * 10 + (unsigned)(data[k] - '0');
	/* "exit [CODE] stats": the counters at exit too, as the word stats
	 * prints them (skiff vm's Ctrl-C asks so). */
	for (; k < len && data[k] == ' '; k++)
		;
	if (len - k >= 5 && !sk_memcmp(data + k, "stats", 5))
		stats_at_exit = true;
	exit_code = code > 127 ? 127 : code; /* QEMU's status is 2*code+1 in 8 bits */
	__atomic_store_n(&drain_wanted, true, __ATOMIC_RELAXED);
	/* Release: another vCPU that sees stop sees the code and the drain. */
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
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
	const struct dev_stats *s = &vnets[0].dev.stats;
	fn(fctx, "dev.rx_frames", s->rx_frames);
	fn(fctx, "dev.rx_bytes", s->rx_bytes);
	fn(fctx, "dev.rx_drops", s->rx_drops);
	fn(fctx, "dev.rx_syncs", s->rx_syncs);
	fn(fctx, "dev.tx_frames", s->tx_frames);
	fn(fctx, "dev.tx_bytes", s->tx_bytes);
	fn(fctx, "dev.tx_drops", s->tx_drops);
	fn(fctx, "dev.tx_syncs", s->tx_syncs);
	fn(fctx, "dev.offload", vnets[0].dev.offload); /* DEV_OFF_* negotiated */
	fn(fctx, "dev.rx_csum_ok", s->rx_csum_ok);
	fn(fctx, "dev.rx_vnet_bad", s->rx_vnet_bad);
	fn(fctx, "dev.tx_csum_offload", s->tx_csum_offload);
	fn(fctx, "dev.tx_tso_frames", s->tx_tso_frames);
	fn(fctx, "dev.tx_tso_segs", s->tx_tso_segs);
	fn(fctx, "virtio.tx_vnet_bad", vnets[0].c.tx_vnet_bad);
	fn(fctx, "virtio.tx_chain_descs", vnets[0].c.tx_chain_descs);
	fn(fctx, "virtio.event_idx", vnets[0].event_idx);
	fn(fctx, "virtio.notifies", vnets[0].c.notifies);
	fn(fctx, "virtio.notify_skipped", vnets[0].c.notify_skipped);
	fn(fctx, "virtio.irq_arms", vnets[0].c.irq_arms);
	fn(fctx, "virtio.irq_arm_races", vnets[0].c.irq_arm_races);
	fn(fctx, "virtio.rx_bad_len", vnets[0].c.rx_bad_len);
	fn(fctx, "virtio.bad_used", vnets[0].c.bad_used);
	/* The queues' indexes as they are now (gauges, not counts): what a
	 * guest that stopped answering was waiting on.  tx: avail_idx past
	 * used_idx with avail_event behind them is the device owing work it
	 * was told of; avail_event at avail_idx, a doorbell owed; unposted,
	 * frames waiting for descriptors the device still holds (nothing
	 * interrupts when it frees them: the next sync takes them).  rx:
	 * used_idx past last_used, frames arrived and not yet read. */
	const struct virtio_net *vq0 = &vnets[0];
	fn(fctx, "virtio.tx_avail_idx", vq0->txq.avail_idx);
	fn(fctx, "virtio.tx_used_idx", vq0->txq.used ? vq0->txq.used->idx : 0);
	fn(fctx, "virtio.tx_last_used", vq0->txq.last_used);
	fn(fctx, "virtio.tx_avail_event", vq0->txq.avail_event ? *vq0->txq.avail_event : 0);
	fn(fctx, "virtio.tx_desc_free", vq0->tx.nfree);
	fn(fctx, "virtio.tx_unposted", vq0->dev.tx ? ring_load(&vq0->dev.tx->head) - vq0->tx_sub : 0);
	fn(fctx, "virtio.rx_used_idx", vq0->rxq.used ? vq0->rxq.used->idx : 0);
	fn(fctx, "virtio.rx_last_used", vq0->rxq.last_used);
	fn(fctx, "virtio.rx_armed", vq0->armed);
	runner_stats(&run, fn, fctx);
	/* The CPU this stack runs on (the BSP): the metrics page may be
	 * built on another. */
	const struct kvm_cpu *c = smp_cpu(0);
	fn(fctx, "timer.loads", c->timer_loads);
	fn(fctx, "timer.skips", c->timer_skips);
	fn(fctx, "timer.fires", c->timer_fires);
	/* What the emulator sees besides the doorbells: each hlt is an exit
	 * (and a host wake-up to leave it), each interrupt an injection. */
	fn(fctx, "cpu.hlts", c->park_hlts);
	fn(fctx, "irq.virtio_net", c->irq_count[VEC_VIRTIO_NET]);
	fn(fctx, "irq.timer", c->irq_count[VEC_TIMER]);
	iface_stats(&ifc, fn, fctx);
	tcp_stats(&tcp, fn, fctx);
}

/* This vCPU's every counter, for --stats at exit and the metrics page: the
 * sites' (engines, handlers, proxies, TLS), the access log's, the loop's
 * (with plat_stats above). */
static void uk_stats(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	uk_sites_stats(sites, fn, ctx);
	if (alog.loop)
		uk_alog_stats(&alog, fn, ctx);
	loop_stats(uk_loop, fn, ctx);
}

/* The metrics page's counters: every vCPU's, vCPU 0's as uk_stats names
 * them and each other's as cpuK.* (uk_smp_stats), whichever vCPU builds
 * the page (every worker has the metrics listener).  Another vCPU's are
 * read while it runs: each is an aligned 64-bit word, loaded whole, and
 * may be a turn old; nothing is walked that its owner changes. */
static void uk_page_stats(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx)
{
	uk_stats(fn, ctx);
	if (npairs > 1)
		uk_smp_stats(fn, ctx);
}

static void plat_fatal(void *ctx, const char *msg)
{
	(void)ctx;
	kprintf("skiff-uk: %s\n", msg);
	kvm_exit(KVM_EXIT_FATAL);
}

static uint64_t wall_sec(sk_time_ns now)
{
	return wall_base + (now > wall_at ? (now - wall_at) / SK_NS_PER_S : 0);
}

/* The engines' runtime errors (uk_sites_env.error_log): ctx is the error
 * log of the vCPU the engine runs on (elog, or a worker's, uk_smp.c). */
static void error_log(void *ctx, const char *key, const char *msg)
{
	size_t n = 0;
	while (msg[n])
		n++;
	sk_log_msg(ctx, plat_now(), SK_LOG_ERROR, key, msg, n);
}

static void console_sink(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	console_write(line, len);
}

/* The shutdown port asked for a drain: its drain-timeout, else 0.  Any
 * vCPU may ask (uk_smp.c after its loop ended): drain_wanted was stored
 * before stop, with release. */
static unsigned drain_s_opt; /* drain-timeout=, set before the loops run */
static unsigned drain_timeout(void)
{
	return __atomic_load_n(&drain_wanted, __ATOMIC_ACQUIRE) ? drain_s_opt : 0;
}

/* The drain with workers (uk_smp.h): each drains its own connections on
 * its own vCPU while this one drains worker 0's; then the summary, in
 * the words of the one-vCPU drain (uk_drain.h) with the counts summed. */
static int drain_all(struct loop *loop, unsigned workers, unsigned drain_s)
{
	sk_time_ns t0 = plat_now();
	unsigned conns[KVM_MAX_CPUS] = {0};
	/* Their counts for the first line: each begins as soon as it sees
	 * stop, well within this bound (else it counts 0 here). */
	uk_smp_drain_begun(conns, t0 + 500 * SK_NS_PER_MS);
	conns[0] = uk_sites_nconns(sites);
	unsigned total = 0;
	char per[KVM_MAX_CPUS * 24];
	size_t pl = 0;
	for (unsigned k = 0; k <= workers; k++) {
		total += conns[k];
		pl += (size_t)ksnprintf(per + pl, sizeof(per) - pl, "%s%u on cpu %u", k ? ", " : "",
					conns[k], k);
	}
	kprintf("skiff-uk: shutdown: draining %u connections (drain-timeout %u s): %s\n", total,
		drain_s, per);
	struct uk_drain_result r0 = {0};
	int rc = uk_drain_run(loop, sites, &tcp, drain_s, "cpu 0: ", &r0);
	/* Theirs end by drain-timeout at the latest, then close at once. */
	uk_smp_wait(t0 + (sk_time_ns)drain_s * SK_NS_PER_S + UK_DRAIN_WAIT_MARGIN_NS);
	struct uk_drain_result sum = r0;
	uk_smp_drained(&sum);
	uint64_t ms = (plat_now() - t0) / SK_NS_PER_MS;
	if (sum.finished)
		kprintf("skiff-uk: drained in %lu ms\n", ms);
	else
		kprintf("skiff-uk: drain-timeout after %lu ms: closing %u connections\n", ms, sum.left);
	return rc;
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
	uint64_t sec = wall_sec(now);
	if (sec == date_sec)
		return;
	date_sec = sec;
	char buf[HTTP_DATE_LEN];
	http_date_format(sec, buf);
	uk_sites_set_date(sites, buf);
}

/* loop_skiff's run: the runner, until stop, exit-after or a broken ring. */
static int plat_run(void *ctx, struct loop *l, volatile int *stopp)
{
	(void)ctx, (void)l;
	if (runner_run(&run, stopp) == 0)
		return 0;
	kprintf("skiff-uk: %s: %s ring broken (%d)\n", vnets[0].dev.name, run.err_what, run.err);
	exit_code = KVM_EXIT_FATAL;
	return -SK_ENETUNREACH; /* as serve_skiff.c: the device is gone */
}

/* hint: what to lower first (a route's own, e.g. the proxy's "lower
 * cache="); NULL: the sizes every guest has. */
static void *alloc_hint(const char *what, size_t size, const char *hint)
{
	void *p = mem_alloc(size, 4096);
	if (!p) {
		struct mem_info mi;
		mem_info(&mi);
		kprintf("skiff-uk: out of memory: %s needs %lu KiB, %lu KiB free of %lu MiB RAM, "
			"%lu MiB of it the site archive "
			"(%s, or give the guest more --mem)\n",
			what, (uint64_t)size >> 10, mi.heap_free >> 10, mi.ram >> 20, site_bytes >> 20,
			hint ? hint : "lower max-conns / tcp-sndbuf / tcp-rcvbuf");
		kvm_exit(KVM_EXIT_FATAL);
	}
	return p;
}

static void *alloc_or_die(const char *what, size_t size)
{
	return alloc_hint(what, size, NULL);
}

/* The TLS files' bytes in the module, if `skiff vm --tls-cert/--tls-key`
 * put them there. */
struct tls_files {
	const uint8_t *cert, *key;
	uint32_t cert_len, key_len;
};

/* Each connection's DRBG seed: RDSEED/RDRAND only; the TSC fallback of
 * plat_random is not good enough for keys. */
static bool have_hw_random(void)
{
	uint32_t r[4];
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(1), "c"(0));
	return (r[2] >> 30) & 1;
}

static void console_out(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	console_write(s, n);
}

/* The virtio-mmio device's registers, for its interrupt handler. */
static struct virtio_regs mmio_regs;

/* VEC_VIRTIO_NET from the I/O APIC: clear the device's InterruptStatus so
 * that it lowers its line before the EOI; the loop, woken from its park,
 * reads the queues. */
static void mmio_irq(void *ctx)
{
	struct virtio_regs *r = ctx;
	r->t->irq_ack(r);
}

/* The command line, read by the options module (conf/opts.h) with the
 * table `skiff serve` uses: the same names, values, checks and messages.
 * A bad word is a clear stop before anything is set up; the word `help`
 * prints the options.  Returns OPT_OK, OPT_HELP or OPT_ERROR. */
static int read_options(struct opts *o, char *cmdline)
{
	char err[200];
	const struct opt_cmd *cmd = &uk_app ? uk_app.cmd() : &opt_cmd_uk;
	int r = opt_init(o, cmd, err, sizeof(err));
	if (r == OPT_OK)
		r = opt_parse_words(o, cmdline, err, sizeof(err));
	if (r == OPT_HELP) {
		opt_help(cmd, console_out, NULL);
		return OPT_HELP;
	}
	if (r == OPT_OK)
		r = opt_check_stack(o, err, sizeof(err));
	if (r == OPT_OK)
		return OPT_OK;
	kprintf("skiff-uk: %s\n", err);
	kprintf("skiff-uk: bad command line, not booting (`%s` lists the words)\n",
		&uk_app && uk_app.help_cmd ? uk_app.help_cmd : "skiff vm -- help");
	return OPT_ERROR;
}

unsigned uk_app_main(const struct kvm_start *st)
{
	static struct opts o; /* string values point into st->cmdline */
	app_def = &skiff_app ? &skiff_app : NULL;
	/* The VMM's virtio_mmio.device= words are the platform's, not
	 * options: taken out before the options parser sees the line. */
	static struct virtio_mmio_dev mmio[VIRTIO_MMIO_DEV_MAX];
	const char *mwhy = NULL;
	int nmmio = virtio_mmio_args_take(st->cmdline, mmio, VIRTIO_MMIO_DEV_MAX, &mwhy);
	if (nmmio < 0) {
		kprintf("skiff-uk: %s; not booting\n", mwhy);
		return KVM_EXIT_FATAL;
	}
	int r = read_options(&o, st->cmdline);
	if (r != OPT_OK)
		return r == OPT_HELP ? KVM_EXIT_OK : KVM_EXIT_FATAL;
	const uint32_t ip_addr = o.v[OPT_IP].ip, gw_addr = o.v[OPT_GW].ip;
	const uint8_t prefix_len = o.v[OPT_IP].len;
	wall_at = st->rtc_at;
	if (st->rtc_ok) {
		wall_base = http_date_from_civil(st->rtc.year, st->rtc.month, st->rtc.day,
						 st->rtc.hour, st->rtc.min, st->rtc.sec);
	} else {
		kprintf("skiff-uk: RTC unreadable: Date headers start at the epoch\n");
		wall_base = 0;
	}
	if (opt_given(&o, OPT_FAULT))
		trap_raise(opt_str(&o, OPT_FAULT));
	sk_log_init(&elog, "skiff-uk", (enum sk_log_level)opt_num(&o, OPT_LOG_LEVEL), 10,
		    SK_NS_PER_S, console_sink, NULL);

	struct pci_dev pd = {0};
	struct virtio_regs regs;
	const char *why = "no virtio-net device";
	bool have_irq = false, line_irq = false;
	char name[40];
	if (nmmio > 0) {
		/* A VMM that names virtio-mmio windows (Firecracker, QEMU's
		 * microvm) has no PCI: the first network device among them.
		 * No MSI-X on MMIO: its line interrupt goes through the I/O
		 * APIC, level-triggered, and mmio_irq acks it; no-msix (or no
		 * I/O APIC) and the loop polls. */
		int found = 1, at = 0;
		for (int i = 0; i < nmmio && found == 1; i++) {
			found = virtio_mmio_probe(mmio[i].base, mmio[i].size, VIRTIO_ID_NET, &regs, &why);
			at = i;
		}
		if (found != 0) {
			kprintf("skiff-uk: %s\n", found == 1 ? "no virtio-net among the virtio_mmio.device= windows" : why);
			kvm_exit(KVM_EXIT_FATAL);
		}
		ksnprintf(name, sizeof(name), "virtio-net@mmio:%lx", mmio[at].base);
		mmio_regs = regs;
		const char *iwhy = NULL;
		if (!opt_given(&o, OPT_NO_MSIX)) {
			line_irq = ioapic_route(mmio[at].irq, VEC_VIRTIO_NET, lapic_id(), true, &iwhy) == 0;
			if (!line_irq)
				kprintf("skiff-uk: %s: %s: polling\n", name, iwhy);
		}
	} else {
		if (virtio_pci_find_net(&pd) < 0 || virtio_pci_map(&pd, &regs, &why) < 0) {
			kprintf("skiff-uk: %s\n", why);
			kvm_exit(KVM_EXIT_FATAL);
		}
		have_irq = !opt_given(&o, OPT_NO_MSIX) && pci_msix_setup(&pd, MSIX_ENTRY_RX, VEC_VIRTIO_NET, lapic_id()) == 0;
		ksnprintf(name, sizeof(name), "virtio-net@%02x:%02x.%x", pd.bus, pd.dev, pd.fn);
	}
	/* More than one vCPU: ask for a queue pair each (the static server's
	 * words or a configuration; an application image stays on this CPU).  Pair k's rx interrupt is MSI-X
	 * entry k on vCPU k's LAPIC; its ring region comes from the heap. */
	bundle = uk_sites_is_bundle(st->module, st->module_len);
	if (bundle && &uk_app) {
		kprintf("skiff-uk: the boot module is a configuration (skiff vm --config): this is "
			"the proxy's image, whose words configure it; a configuration's proxy "
			"routes run on skiff-uk.elf; not booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	unsigned want = st->cpus > 1 && !app_def && !&uk_app ? st->cpus : 1;
	static struct virtio_net_params ps[KVM_MAX_CPUS];
	for (unsigned k = 0; k < want; k++) {
		ps[k] = (struct virtio_net_params){
			.regs = regs, .arena = arena, .arena_size = sizeof(arena),
			.rx_msix = have_irq ? (uint16_t)(MSIX_ENTRY_RX + k) : VIRTIO_MSI_NO_VECTOR, .name = name,
			.rx_line_irq = line_irq,
			.no_event_idx = opt_given(&o, OPT_NO_EVENT_IDX),
			/* offload=off (choice 1): none, frames as before */
			.offload_allow = opt_num(&o, OPT_OFFLOAD) == 1 ? 0 : DEV_OFF_ALL,
		};
		if (k) {
			ps[k].arena_size = virtio_net_arena_size();
			ps[k].arena = alloc_or_die("a queue pair's rings", ps[k].arena_size);
			if (have_irq && pci_msix_add(&pd, MSIX_ENTRY_RX + k, VEC_VIRTIO_NET, smp_cpu(k)->apic_id) < 0)
				ps[k].rx_msix = VIRTIO_MSI_NO_VECTOR; /* too few vectors: that pair polls */
		}
	}
	if (virtio_net_arena_size() > sizeof(arena) || virtio_net_init_mq(vnets, want, ps, &npairs, &why) < 0) {
		kprintf("skiff-uk: %s: %s\n", name, why);
		kvm_exit(KVM_EXIT_FATAL);
	}
	if (want > 1)
		kprintf("skiff-uk: %s: %u queue pairs for %u vCPUs%s\n", name, npairs, want,
			npairs == 1 ? " (the device has one: the other vCPUs stay idle)" : "");
	struct dev *d = &vnets[0].dev;

	struct iface_config cfg = {.ip = ip_addr, .prefix_len = prefix_len, .gw = gw_addr};
	opt_ip6_config(&o, &cfg); /* ip6=, gw6=: IPv6 beside IPv4 when given */
	if (opt_given(&o, OPT_MAC))
		sk_memcpy(cfg.mac, o.v[OPT_MAC].mac, SK_MAC_LEN);
	else if (vnets[0].have_mac)
		sk_memcpy(cfg.mac, d->mac, SK_MAC_LEN);
	else if (plat_random(cfg.mac, SK_MAC_LEN) == 0)
		cfg.mac[0] = (uint8_t)((cfg.mac[0] & 0xfc) | 0x02);
	sk_memcpy(d->mac, cfg.mac, SK_MAC_LEN);
	if (plat_random(&cfg.seed, sizeof(cfg.seed)) < 0)
		cfg.seed = plat_cycles();

	sk_time_ns now = plat_now();
	iface_init(&ifc, d, &cfg, now);
	if (udp_bind(&ifc, ECHO_PORT, echo_udp, NULL) < 0 ||
	    (cfg.ip6 && udp6_bind(&ifc, ECHO_PORT, echo_udp6, NULL) < 0) ||
	    (opt_given(&o, OPT_SHUTDOWN_PORT) &&
	     udp_bind(&ifc, (uint16_t)opt_num(&o, OPT_SHUTDOWN_PORT), shutdown_udp, NULL) < 0)) {
		kprintf("skiff-uk: cannot bind UDP ports\n");
		kvm_exit(KVM_EXIT_FATAL);
	}

	/* The module: the TLS files at its end (if any), the site before. */
	uint64_t site_len = st->module_len;
	struct tls_files tf = {0};
	int tb = bundle ? 0
			: tls_bundle_split(st->module, st->module_len, &site_len, &tf.cert,
					   &tf.cert_len, &tf.key, &tf.key_len);
	if (tb < 0) {
		kprintf("skiff-uk: the boot module's TLS footer does not fit it; not booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	bool tls_on = tb == 1;
	if (!tls_on && !bundle && (opt_given(&o, OPT_TLS_PORT) || opt_given(&o, OPT_TLS_REDIRECT) ||
			opt_given(&o, OPT_TLS_HANDSHAKE_TIMEOUT) || opt_given(&o, OPT_TLS_MAX_CONNS) ||
			opt_given(&o, OPT_TLS_ALPN))) {
		kprintf("skiff-uk: tls-port, tls-handshake-timeout, tls-redirect, tls-max-conns and "
			"tls-alpn need the certificate and key (skiff vm --tls-cert F --tls-key F); not "
			"booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	/* What serves: the sites runtime (uk_sites.h) for a configuration and
	 * for the words, which fill the same model (an application image's
	 * as route / { app; }, the proxy image's as route / { proxy ...; }).
	 * The sites say what TCP and the loop need; the proxies take their
	 * exchanges from the heap now. */
	site_bytes = st->module_len;
	struct uk_sites_env senv = {
		.alloc = alloc_hint,
		.wall_offset = (int64_t)wall_base - (int64_t)(wall_at / SK_NS_PER_S),
		.gw = gw_addr,
		.all_stats = uk_page_stats,
		.vcpus = npairs,
		.app = app_def, /* the file's app; routes */
		.proxy = &uk_app && uk_app.proxy,
		.error_log = error_log,
	};
	struct uk_sites_words w = {
		.site = site_len ? st->module : NULL, .site_len = site_len,
		.cert = tls_on ? tf.cert : NULL, .cert_len = tf.cert_len,
		.key = tls_on ? tf.key : NULL, .key_len = tf.key_len,
		.metrics_port = opt_given(&o, OPT_UK_METRICS) ? (uint16_t)opt_num(&o, OPT_UK_METRICS) : 0,
	};
	drain_s_opt = (unsigned)opt_num(&o, OPT_DRAIN_TIMEOUT);
	struct uk_sites_need need = {0};
	sites = bundle ? uk_sites_setup(st->module, st->module_len, &o, &senv, &need)
		       : uk_sites_setup_words(&w, &o, &senv, &need);
	if (!sites)
		kvm_exit(KVM_EXIT_FATAL);
	if (need.ntls && !have_hw_random()) {
		kprintf("skiff-uk: HTTPS needs RDRAND (QEMU: -cpu max or host); not booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	/* The client connections the engines hold, over every listener. */
	const uint32_t nconns = need.conns;

	/* TCP: the pool `skiff serve --stack skiff` sizes (opt_tcp_sockets). */
	struct tcp_config tc;
	tcp_config_default(&tc);
	tcp_iface_config(&tc, &ifc);
	tc.max_sockets = opt_tcp_sockets(nconns) + need.extra_socks;
	tc.sndbuf = (uint32_t)opt_num(&o, OPT_TCP_SNDBUF);
	tc.rcvbuf = (uint32_t)opt_num(&o, OPT_TCP_RCVBUF);
	tc.cc = (uint8_t)opt_num(&o, OPT_TCP_CC);
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
		.local_ip = ip_addr,
		/* one per connection (an HTTPS one: two, the handshake's and
		 * the engine's), the proxies' upstream connections, a few
		 * spare */
		.max_timers = nconns + 16 + need.tls_conns + need.extra_socks,
		.listen_backlog = UK_BACKLOG,
		.now = now,
		.plat = {.run = plat_run, .stats = plat_stats, .fatal = plat_fatal},
	};
	size_t loop_sz = loop_skiff_mem_size(&lsc);
	struct loop *loop = loop_skiff_init(alloc_or_die("the loop", loop_sz), loop_sz, &lsc);
	if (loop && opt_given(&o, OPT_UK_ACCESS_LOG)) {
		/* Before the engines are sized: the hook takes scratch per connection. */
		const struct opt_val *v = &o.v[OPT_UK_ACCESS_LOG];
		uk_alog_init(&alog,
			     opt_num(&o, OPT_ACCESS_LOG_FORMAT) == 1 ? HTTP_ACCESS_JSON
								    : HTTP_ACCESS_COMBINED,
			     v->num != 0, v->ip, (uint16_t)v->num, &ifc, loop, &elog, wall_sec);
	}
	if (!loop || uk_sites_start(sites, loop, tc.max_sockets, &o,
				    alog.loop ? uk_alog_record : NULL, &alog, &elog) < 0) {
		kprintf("skiff-uk: not booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	size_t srv_sz = uk_sites_engine_bytes(sites);
	refresh_date(NULL, now);
	loop->on_turn = refresh_date;
	uk_loop = loop;
	/* Last: what may take the rest of the heap (the proxies' caches). */
	if (uk_sites_late(sites) < 0) {
		kprintf("skiff-uk: not booting\n");
		kvm_exit(KVM_EXIT_FATAL);
	}

	run = (struct runner){
		.dev = d, .ifc = &ifc, .tcp = &tcp,
		.until = opt_given(&o, OPT_EXIT_AFTER) ? now + opt_num(&o, OPT_EXIT_AFTER) * SK_NS_PER_S : 0,
	};
	opt_spin(&o, &run.spin_ns, &run.spin_learn);
	/* Counted in kvm_cpu.irq_count; the loop polls the queues.  A line
	 * interrupt (MMIO) is level-triggered: acked at the device before
	 * trap_dispatch's EOI, or it would come straight back. */
	trap_set_handler(VEC_VIRTIO_NET, line_irq ? mmio_irq : NULL, line_irq ? &mmio_regs : NULL);
	iface_announce(&ifc, now);
	dev_tx_sync(d);

	struct mem_info mi;
	mem_info(&mi);
	kprintf("skiff-uk: memory: %lu MiB RAM (%s), image+bss to %lu KiB; heap at %lu KiB: "
		"tcp %lu KiB (%u sockets x %u+%u B), loop %lu KiB, http %lu KiB (%u conns); "
		"%lu MiB free\n",
		mi.ram >> 20, mi.source, mi.image_end >> 10, mi.heap_base >> 10,
		(uint64_t)tcp_sz >> 10, tc.max_sockets, tc.sndbuf, tc.rcvbuf, (uint64_t)loop_sz >> 10,
		(uint64_t)srv_sz >> 10, nconns, mi.heap_free >> 20);
	char ip[16], gw[16], date[HTTP_DATE_LEN + 1];
	format_ip(ip_addr, ip);
	format_ip(gw_addr, gw);
	http_date_format(wall_sec(plat_now()), date);
	date[HTTP_DATE_LEN] = 0;
	kprintf("skiff-uk: clock %s (RTC + TSC)\n", date);
	const uint8_t *m = cfg.mac;
	char http[16 * 16];
	if (bundle)
		uk_sites_describe(http, sizeof(http));
	else
		ksnprintf(http, sizeof(http), "%u", (unsigned)opt_num(&o, OPT_PORT));
	kprintf("skiff-uk: ready ip=%s/%u gw=%s mac=%02x:%02x:%02x:%02x:%02x:%02x %s=%s "
		"udp_echo=%d max_conns=%u dev=%s irq=%s boot_ms=%lu",
		ip, prefix_len, gw, m[0], m[1], m[2], m[3], m[4], m[5], bundle ? "sites" : "http",
		http, ECHO_PORT,
		nconns, d->name, have_irq ? "msix" : line_irq ? "ioapic" : "none(poll 1ms)",
		(uint64_t)(plat_now() / SK_NS_PER_MS));
	if (opt_given(&o, OPT_UK_METRICS))
		kprintf(" metrics=%u", (unsigned)opt_num(&o, OPT_UK_METRICS));
	kprintf("\n");

	unsigned workers = 0;
	if (npairs > 1) {
		/* Each other vCPU: its own stack, and its own instance of the
		 * sites runtime on its pair (built here, on this vCPU). */
		struct uk_smp_config sc = {
			.ifc = &cfg, .tcp = &tc, .opts = &o,
			.shutdown_port = opt_given(&o, OPT_SHUTDOWN_PORT) ? (uint16_t)opt_num(&o, OPT_SHUTDOWN_PORT) : 0,
			.on_shutdown = shutdown_udp, .until = run.until,
			.spin_ns = run.spin_ns, .spin_learn = run.spin_learn,
			.listen_backlog = UK_BACKLOG, .wall_sec = wall_sec, .alloc = alloc_or_die,
			.stop = &stop, .drain_timeout = drain_timeout,
			.alog = alog.loop ? &alog : NULL,
		};
		struct mem_info before, after;
		mem_info(&before);
		workers = uk_smp_start(vnets, npairs, &ifc, &sc);
		mem_info(&after);
		/* What a worker took of the heap (its TCP arena, loop, engines,
		 * TLS state): the figure to give --mem per vCPU by. */
		kprintf("skiff-uk: %u workers on vCPUs 1..%u, one queue pair and one stack each "
			"(%lu KiB each; %lu MiB free)\n", workers, npairs - 1,
			(uint64_t)((after.heap_used - before.heap_used) / (npairs - 1)) >> 10,
			after.heap_free >> 20);
	}
	loop_skiff_attach_runner(loop, &run);
	rc = loop_run(loop, &stop);
	unsigned drain_s = rc == 0 ? drain_timeout() : 0;
	if (workers) {
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		uk_smp_wake(); /* each drains its own, if asked, as this one does */
	}
	if (drain_s)
		run.until = 0; /* exit-after no longer cuts it short: drain-timeout does */
	if (drain_s && workers) {
		rc = drain_all(loop, workers, drain_s);
	} else if (drain_s) {
		kprintf("skiff-uk: shutdown: draining %u connections (drain-timeout %u s)\n",
			uk_sites_nconns(sites), drain_s);
		struct uk_drain_result r0 = {0};
		rc = uk_drain_run(loop, sites, &tcp, drain_s, "", &r0);
	} else if (workers) {
		/* Theirs may drain though this one's loop failed. */
		unsigned s = drain_timeout();
		uk_smp_wait(plat_now() + (s ? (sk_time_ns)s * SK_NS_PER_S + UK_DRAIN_WAIT_MARGIN_NS
					   : UK_STOP_WAIT_NS));
	}
	/* Close the listener and every connection; what that queued (FINs)
	 * leaves before the guest goes. */
	uk_sites_stop(sites); /* the engines, then the proxies' upstream connections */
	if (alog.loop)
		uk_alog_flush(&alog); /* the last batch leaves with the FINs */
	now = plat_now();
	tcp_poll(&tcp, now);
	dev_tx_sync(d);
	sk_log_flush(&elog, SK_TIME_NEVER);
	if (opt_given(&o, OPT_STATS) || stats_at_exit) {
		uk_stats(print_stat, NULL);
		if (workers)
			uk_smp_stats(print_stat, NULL);
	}
	if (rc < 0 && !exit_code)
		exit_code = KVM_EXIT_FATAL;
	kprintf("skiff-uk: exit %u\n", exit_code);
	dev_close(d);
	return exit_code;
}
