/* main.c — the unikernel: boot, find virtio-net, run the same stack as
 * `skiff echo` (ARP, ICMP echo, UDP echo on port 7) until told to stop.
 *
 * Kernel command line (QEMU -append; `skiff vm -- ARGS`), space-separated:
 *   ip=ADDR/LEN        default 10.0.2.15/24 (QEMU user networking)
 *   gw=ADDR            default 10.0.2.2
 *   mac=MAC            default: the device's, else random
 *   spin-us=N          poll this long after work before parking (100)
 *   exit-after=S       exit 0 after S seconds (a safety net for tests)
 *   shutdown-port=N    a UDP datagram "exit [CODE]" to port N exits with
 *                      CODE (default 0).  Off unless given: anyone who can
 *                      reach the port can stop the guest.
 *   fault=ud|pf|gp|de  raise that CPU exception after boot (tests the
 *                      handler: registers on the console, exit 64+vector)
 *   stats              print the counters on exit
 *   no-msix            no device interrupt: park at most 1 ms (fallback)
 * Exit codes (isa-debug-exit): 0 clean, 1 setup error, 64+vector a CPU
 * exception; QEMU itself exits with 2*code+1.
 *
 * The loop (mirrors src/apps/netloop.c, with hlt instead of ppoll):
 *   poll the device only when its used ring moved (one load) or buffers
 *   wait to be re-posted; feed the stack; run due timers; one tx_sync per
 *   turn for everything produced.  After work, spin (bounded) because the
 *   next frame usually follows.  Then park: arm the timer for the stack's
 *   next deadline (reloaded only when it moved), allow the rx interrupt,
 *   look at the queue once more, and `sti; hlt` only if it is still empty.
 *   Interrupts are off at every other moment, so handlers never race the
 *   stack and the device never interrupts while we poll. */
#include "../../dev/virtio_net.h"
#include "../../net/iface.h"
#include "../plat.h"
#include "cpu.h"
#include "kvm.h"
#include "virtio_pci.h"

#define ECHO_PORT 7
#define MSIX_ENTRY_RX 0

struct hvm_start_info {
	uint32_t magic; /* 0x336ec578 */
	uint32_t version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
#define HVM_START_MAGIC 0x336ec578u

struct loop_counters {
	uint64_t turns, busy_turns, parks, wakeups_frame, wakeups_timer, wakeups_other;
};

/* Static: the kernel has no allocator, and needs none. */
static uint8_t arena[2u << 20] __attribute__((aligned(4096)));
static struct virtio_net vnet;
static struct iface ifc;
static char cmdline[1024];
static struct loop_counters lc;
static bool stop;
static unsigned exit_code;

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
	stop = true;
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	(void)ctx;
	kprintf("%s %lu\n", name, value);
}

static void print_stats(void)
{
	const struct dev_stats *s = &vnet.dev.stats;
	kprintf("dev.rx_frames %lu\ndev.rx_bytes %lu\ndev.rx_drops %lu\ndev.rx_syncs %lu\n",
		s->rx_frames, s->rx_bytes, s->rx_drops, s->rx_syncs);
	kprintf("dev.tx_frames %lu\ndev.tx_bytes %lu\ndev.tx_drops %lu\ndev.tx_syncs %lu\n",
		s->tx_frames, s->tx_bytes, s->tx_drops, s->tx_syncs);
	kprintf("virtio.notifies %lu\nvirtio.notify_skipped %lu\nvirtio.irq_arms %lu\n"
		"virtio.irq_arm_races %lu\nvirtio.rx_bad_len %lu\nvirtio.bad_used %lu\n",
		vnet.c.notifies, vnet.c.notify_skipped, vnet.c.irq_arms, vnet.c.irq_arm_races,
		vnet.c.rx_bad_len, vnet.c.bad_used);
	kprintf("loop.turns %lu\nloop.busy_turns %lu\nloop.parks %lu\nloop.wakeups_frame %lu\n"
		"loop.wakeups_timer %lu\nloop.wakeups_other %lu\n",
		lc.turns, lc.busy_turns, lc.parks, lc.wakeups_frame, lc.wakeups_timer,
		lc.wakeups_other);
	kprintf("timer.loads %lu\ntimer.skips %lu\ntimer.fires %lu\n", timer_loads, timer_skips,
		timer_fires);
	iface_stats(&ifc, print_stat, NULL);
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

static void run(struct virtio_net *vn, struct iface *i, uint64_t spin_ns, sk_time_ns exit_at,
		bool have_irq)
{
	struct dev *d = &vn->dev;
	sk_time_ns spin_until = 0;
	bool repost = false; /* the stack released rx slots: post them again */
	while (!stop) {
		sk_time_ns now = plat_now();
		if (now >= exit_at)
			break;
		lc.turns++;
		unsigned work = 0;
		if (repost || virtio_net_rx_ready(vn)) {
			if (dev_rx_sync(d) < 0) {
				kprintf("skiff-uk: %s: rx ring broken\n", d->name);
				exit_code = KVM_EXIT_FATAL;
				return;
			}
			repost = false;
			if (ring_avail(d->rx)) {
				work = iface_rx(i, now);
				repost = true;
			}
		}
		if (iface_next_deadline(i) <= now)
			iface_poll(i, now);
		if (d->tx->head != vn->tx_sub && dev_tx_sync(d) < 0) {
			kprintf("skiff-uk: %s: tx ring broken\n", d->name);
			exit_code = KVM_EXIT_FATAL;
			return;
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
		/* Park until a frame, the stack's next deadline or exit-after. */
		sk_time_ns deadline = iface_next_deadline(i);
		if (exit_at < deadline)
			deadline = exit_at;
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

	if (time_init() < 0) {
		kprintf("skiff-uk: no usable TSC/LAPIC timer\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	kprintf("skiff-uk: tsc %lu kHz (%s), timer %s\n", time_tsc_hz() / 1000, time_source(),
		time_deadline_mode() ? "tsc-deadline" : "lapic one-shot");
	if (a.fault)
		raise_fault(a.fault);

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
		cfg.seed = rdtsc();

	sk_time_ns now = plat_now();
	iface_init(&ifc, d, &cfg, now);
	if (udp_bind(&ifc, ECHO_PORT, echo_udp, NULL) < 0 ||
	    (a.shutdown_port && udp_bind(&ifc, a.shutdown_port, shutdown_udp, NULL) < 0)) {
		kprintf("skiff-uk: cannot bind UDP ports\n");
		kvm_exit(KVM_EXIT_FATAL);
	}
	trap_set_handler(VEC_VIRTIO_NET, NULL, NULL); /* counted in trap_irq_count; the loop polls */
	iface_announce(&ifc, now);
	dev_tx_sync(d);

	char ip[16], gw[16];
	format_ip(a.ip, ip);
	format_ip(a.gw, gw);
	const uint8_t *m = cfg.mac;
	kprintf("skiff-uk: ready ip=%s/%u gw=%s mac=%02x:%02x:%02x:%02x:%02x:%02x udp_echo=%d "
		"dev=%s irq=%s boot_ms=%lu\n",
		ip, a.prefix_len, gw, m[0], m[1], m[2], m[3], m[4], m[5], ECHO_PORT, d->name,
		have_irq ? "msix" : "none(poll 1ms)", (uint64_t)(plat_now() / SK_NS_PER_MS));

	sk_time_ns exit_at = a.exit_after_s ? now + a.exit_after_s * SK_NS_PER_S : SK_TIME_NEVER;
	run(&vnet, &ifc, a.spin_us * SK_NS_PER_US, exit_at, have_irq);
	if (a.stats)
		print_stats();
	kprintf("skiff-uk: exit %u\n", exit_code);
	dev_close(d);
	kvm_exit(exit_code);
}
