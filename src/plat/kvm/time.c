/* time.c — the monotonic clock (TSC), the LAPIC and its one-shot timer,
 * and plat_now()/plat_random() for the core.
 *
 * TSC frequency: CPUID 0x15 (crystal * ratio) when it names the crystal,
 * else CPUID 0x16 (base MHz), else measured against PIT channel 2.  Under
 * QEMU TCG neither leaf exists and the PIT path runs (~60 ms at boot).
 * The clock assumes an invariant TSC, which KVM and TCG both provide.
 *
 * Timer: TSC-deadline mode when CPUID.1:ECX[24] says so (an absolute
 * deadline, one MSR write); otherwise LAPIC one-shot with a count
 * calibrated against the TSC by reads bracketed as the PIT's are
 * (calib.h): a rate measured too high makes every sleep that much too
 * long, so a timer due in 2 s fired after 4.  Either way the loaded deadline is
 * remembered and a re-arm with the same or a later value costs nothing
 * (timer_arm keeps the earlier one and lets it fire early): under
 * emulation the MSR/MMIO write is a device access (seed 000, 99fc1c4).
 * The interrupt forgets it, so a deadline that fired is loaded again.
 *
 * Every CPU has its own LAPIC at the same address (xAPIC MMIO is
 * per-CPU), so `lapic` is shared and what each timer holds is kept in
 * that CPU's kvm_cpu.  The TSC is one clock for all vCPUs (QEMU keeps
 * them in step; KVM syncs them at start), so plat_now() is too. */
#include "../plat.h"
#include "cpu.h"
#include "calib.h"
#include "kvm.h"

#define CALIB_WINDOWS 5      /* LAPIC calibration windows, at least */
#define CALIB_WINDOWS_MAX 40 /* ... and at most (160 ms) */
#define MSR_APIC_BASE 0x1b
#define MSR_TSC_DEADLINE 0x6e0
#define LAPIC_ID 0x20
#define LAPIC_EOI 0xb0
#define LAPIC_ICR_LO 0x300
#define LAPIC_ICR_HI 0x310
#define ICR_PENDING (1u << 12)
#define LAPIC_SVR 0xf0
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR 0x390
#define LAPIC_TIMER_DIV 0x3e0
#define LVT_MASKED (1u << 16)
#define LVT_TSC_DEADLINE (2u << 17)

static uint64_t tsc_hz, tsc_base;
static uint64_t ns_mult;     /* ns = (tsc - base) * ns_mult >> 32 */
static uint64_t tsc_mult;    /* tsc = ns * tsc_mult >> 24 */
static const char *tsc_source = "none";
static volatile uint8_t *lapic;
static bool deadline_mode;
static uint64_t apic_hz;     /* one-shot mode: LAPIC timer ticks per second */
static uint64_t apic_mult;   /* ticks = ns * apic_mult >> 24 */
static uint64_t apic_err_ppm; /* the calibration window's uncertainty */

static uint32_t lapic_read(unsigned reg) { return mmio_read32(lapic + reg); }
static void lapic_write(unsigned reg, uint32_t v) { mmio_write32(lapic + reg, v); }
void lapic_eoi(void) { lapic_write(LAPIC_EOI, 0); }
uint32_t lapic_id(void) { return lapic_read(LAPIC_ID) >> 24; }
uint64_t time_tsc_hz(void) { return tsc_hz; }
const char *time_source(void) { return tsc_source; }
bool time_deadline_mode(void) { return deadline_mode; }
uint64_t time_apic_hz(void) { return apic_hz; }
uint64_t time_apic_err_ppm(void) { return apic_err_ppm; }

/* Channel 2's count now: latched, then read low and high byte. */
static uint16_t pit_count(void)
{
	outb(0x43, 0x80); /* latch channel 2 */
	uint16_t lo = inb(0x42);
	return (uint16_t)(lo | (uint16_t)inb(0x42) << 8);
}

/* One TSC reading taken with a PIT count, and how long the pair took
 * (the reading's uncertainty, in TSC ticks). */
struct pit_stamp {
	uint64_t tsc, width;
	uint16_t count;
};

static struct pit_stamp pit_stamp(void)
{
	uint64_t a = rdtsc();
	uint16_t c = pit_count();
	uint64_t b = rdtsc();
	return (struct pit_stamp){a + (b - a) / 2, b - a, c};
}

/* TSC ticks per `pit_ticks` of the 1.193182 MHz PIT, channel 2 counting
 * down from 0xffff (mode 0, gated by port 0x61), over a window of at
 * least pit_ticks.  Both ends are a TSC reading beside a latched count, so
 * the vCPU thread being preempted inside the window stretches both clocks
 * alike; only a preemption between the two reads of one end errs, and
 * *err says how much the ends' pairs took.  A preemption longer than the
 * 55 ms the count takes to wrap makes the count's difference too small,
 * so that error only ever makes the result too large. */
static uint64_t pit_measure(uint16_t pit_ticks, uint64_t *err)
{
	uint8_t p61 = inb(0x61);
	outb(0x61, (uint8_t)((p61 & ~0x02) | 0x01)); /* gate on, speaker off */
	outb(0x43, 0xb0);                              /* ch2, lo/hi, mode 0 */
	outb(0x42, 0xff);
	outb(0x42, 0xff);
	struct pit_stamp s0 = pit_stamp(), s1 = s0;
	/* The count starts on the first PIT clock after the load: wait until
	 * it has moved, so the start is a real count. */
	for (uint64_t spins = 0; s0.count == 0xffff && ++spins < 10000000ull;)
		s0 = pit_stamp();
	for (uint64_t spins = 0; ++spins < 100000000ull;) {
		s1 = pit_stamp();
		if ((uint16_t)(s0.count - s1.count) >= pit_ticks)
			break;
	}
	outb(0x61, p61);
	uint16_t n = (uint16_t)(s0.count - s1.count);
	*err = s0.width + s1.width;
	return n ? (s1.tsc - s0.tsc) * pit_ticks / n : 0;
}

/* The LAPIC timer's current count, read between two TSC reads. */
static struct calib_stamp apic_stamp(void)
{
	uint64_t a = rdtsc();
	uint32_t c = lapic_read(LAPIC_TIMER_CUR);
	uint64_t b = rdtsc();
	return (struct calib_stamp){a + (b - a) / 2, b - a, c};
}

static void calibrate_tsc(void)
{
	uint32_t r[4];
	cpuid(0, 0, r);
	uint32_t max = r[0];
	if (max >= 0x15) {
		cpuid(0x15, 0, r);
		if (r[0] && r[1] && r[2]) {
			tsc_hz = (uint64_t)r[2] * r[1] / r[0];
			tsc_source = "cpuid-0x15";
			return;
		}
	}
	if (max >= 0x16) {
		cpuid(0x16, 0, r);
		if (r[0] & 0xffff) {
			tsc_hz = (uint64_t)(r[0] & 0xffff) * 1000000ull;
			tsc_source = "cpuid-0x16";
			return;
		}
	}
	/* 10 ms windows: the first only warms up the emulator; of the next
	 * five, the smallest of those whose ends were read within 1% of the
	 * window (a wrapped count only errs high), else the tightest.  Waiting
	 * for the PIT's OUT pin instead (one end on the TSC alone) came out
	 * 40% long under TCG on a busy host, every window: the vCPU thread,
	 * preempted, saw the end late. */
	const uint16_t ticks = 11932;
	uint64_t e, best_err = UINT64_MAX, d = 0, tight = UINT64_MAX;
	pit_measure(ticks, &e);
	for (int i = 0; i < 5; i++) {
		uint64_t m = pit_measure(ticks, &e);
		if (!m)
			continue;
		if (e * 100 < m && m < tight)
			tight = m;
		if (e < best_err) {
			best_err = e;
			d = m;
		}
	}
	if (tight != UINT64_MAX)
		d = tight;
	tsc_hz = d * 1193182ull / ticks;
	tsc_source = "pit";
}

static void timer_irq(void *ctx)
{
	(void)ctx;
	struct kvm_cpu *c = kvm_cpu_this();
	c->timer_fires++;
	c->timer_loaded = SK_TIME_NEVER; /* fired: the next arm must reload */
}

int lapic_send_ipi(uint32_t apic_id, uint32_t icr_lo)
{
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, icr_lo);
	for (int i = 0; i < 1000000; i++) {
		if (!(lapic_read(LAPIC_ICR_LO) & ICR_PENDING))
			return 0;
		cpu_pause();
	}
	return -1;
}

/* An AP: the LAPIC is already mapped and its frequency measured by the
 * BSP (every LAPIC timer runs off the same bus clock). */
void time_init_ap(void)
{
	struct kvm_cpu *c = kvm_cpu_this();
	c->timer_loaded = SK_TIME_NEVER;
	uint64_t base = rdmsr(MSR_APIC_BASE);
	wrmsr(MSR_APIC_BASE, base | (1u << 11));
	lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
	lapic_write(0x80, 0);
	if (deadline_mode) {
		lapic_write(LAPIC_LVT_TIMER, VEC_TIMER | LVT_TSC_DEADLINE);
	} else {
		lapic_write(LAPIC_TIMER_DIV, 0xb);
		lapic_write(LAPIC_TIMER_INIT, 0);
		lapic_write(LAPIC_LVT_TIMER, VEC_TIMER);
	}
}

int time_init(void)
{
	tsc_base = rdtsc();
	calibrate_tsc();
	if (tsc_hz < 1000000ull || tsc_hz > 100000000000ull)
		return -1;
	ns_mult = (SK_NS_PER_S << 32) / tsc_hz;
	tsc_mult = (tsc_hz << 24) / SK_NS_PER_S;

	uint64_t base = rdmsr(MSR_APIC_BASE);
	wrmsr(MSR_APIC_BASE, base | (1u << 11)); /* xAPIC enabled */
	lapic = mmu_map_mmio(base & ~0xfffull, 4096);
	if (!lapic)
		return -1;
	lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
	lapic_write(0x80, 0); /* task priority: accept every vector */
	kvm_cpu_this()->timer_loaded = SK_TIME_NEVER;
	trap_set_handler(VEC_TIMER, timer_irq, NULL);

	uint32_t r[4];
	cpuid(1, 0, r);
	deadline_mode = (r[2] >> 24) & 1;
	if (deadline_mode) {
		lapic_write(LAPIC_LVT_TIMER, VEC_TIMER | LVT_TSC_DEADLINE);
		return 0;
	}
	/* One-shot fallback: LAPIC ticks (divide by 1) against the TSC, over
	 * windows of 4 ms, each end a count read between two TSC reads; the
	 * window read most tightly wins (calib.h).  At least CALIB_WINDOWS
	 * (the first also warms the emulator's translation of this code),
	 * more while none was read within 1%, up to CALIB_WINDOWS_MAX. */
	lapic_write(LAPIC_TIMER_DIV, 0xb);
	lapic_write(LAPIC_LVT_TIMER, VEC_TIMER | LVT_MASKED);
	struct calib_window w[CALIB_WINDOWS_MAX];
	uint64_t span = tsc_hz / 250;
	int n = 0;
	do {
		lapic_write(LAPIC_TIMER_INIT, 0xffffffffu);
		w[n].a = apic_stamp();
		do
			w[n].b = apic_stamp();
		while (w[n].b.tsc - w[n].a.tsc < span);
		n++;
		apic_hz = calib_pick(w, n, tsc_hz, &apic_err_ppm);
	} while (n < CALIB_WINDOWS_MAX && (n < CALIB_WINDOWS || apic_err_ppm >= 10000));
	lapic_write(LAPIC_TIMER_INIT, 0);
	if (!apic_hz)
		return -1;
	apic_mult = (apic_hz << 24) / SK_NS_PER_S;
	lapic_write(LAPIC_LVT_TIMER, VEC_TIMER); /* one-shot, unmasked */
	return 0;
}

sk_time_ns plat_now(void)
{
	return (sk_time_ns)(((unsigned __int128)(rdtsc() - tsc_base) * ns_mult) >> 32);
}

/* Lazily, as the HTTP server's timers are: a timer already loaded for an
 * earlier moment stays.  If it fires first, the park returns early, the
 * loop finds nothing due, and the next arm loads the true deadline (the
 * handler forgets `loaded`).  So a request that moves a deadline later
 * (a retransmission timer pushed on by each ACK) costs no reprogramming,
 * which is an MSR or MMIO write the emulator traps; only an earlier
 * deadline reloads. */
void timer_arm(sk_time_ns deadline)
{
	/* loaded == NEVER: nothing is loaded; skip only if nothing is wanted */
	struct kvm_cpu *c = kvm_cpu_this();
	if (deadline >= c->timer_loaded) {
		c->timer_skips++;
		return;
	}
	c->timer_loaded = deadline;
	c->timer_loads++;
	if (deadline_mode) {
		uint64_t tsc = 0; /* 0 disarms */
		if (deadline != SK_TIME_NEVER)
			tsc = tsc_base + (uint64_t)(((unsigned __int128)deadline * tsc_mult) >> 24);
		wrmsr(MSR_TSC_DEADLINE, tsc);
		return;
	}
	uint32_t count = 0; /* 0 stops the one-shot timer */
	if (deadline != SK_TIME_NEVER) {
		sk_time_ns now = plat_now();
		uint64_t ns = deadline > now ? deadline - now : 0;
		uint64_t ticks = (uint64_t)(((unsigned __int128)ns * apic_mult) >> 24);
		count = ticks == 0 ? 1 : ticks > 0xffffffffu ? 0xffffffffu : (uint32_t)ticks;
	}
	lapic_write(LAPIC_TIMER_INIT, count);
}

/* RDRAND when the CPU has it (QEMU TCG's -cpu max does); otherwise the
 * low TSC bits sampled around PIT reads — weak, and said so at boot. */
static bool have_rdrand(void)
{
	uint32_t r[4];
	cpuid(1, 0, r);
	return (r[2] >> 30) & 1;
}

int plat_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	bool hw = have_rdrand();
	while (len) {
		uint64_t v = 0;
		if (hw) {
			uint8_t ok = 0;
			for (int i = 0; i < 10 && !ok; i++)
				__asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
			if (!ok)
				return -1;
		} else {
			for (int i = 0; i < 8; i++) {
				(void)inb(0x40);
				v = (v << 8 | v >> 56) ^ rdtsc() ^ (v * 0x9e3779b97f4a7c15ull);
			}
		}
		size_t n = len < 8 ? len : 8;
		sk_memcpy(p, &v, n);
		p += n;
		len -= n;
	}
	return 0;
}
