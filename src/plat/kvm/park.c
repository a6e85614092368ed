/* park.c — plat_park on kvm (plat.h): `sti; hlt` until an interrupt or
 * the LAPIC deadline.
 *
 * Interrupts are off at every other moment, so handlers never race the
 * stack and a device never interrupts while the loop polls.  The order:
 * program the timer for the deadline (time.c reloads it only when it
 * moved), let the device arm its interrupt and look at its queue once
 * more (w->arm), and halt only if that found nothing.  sti's shadow makes
 * `sti; hlt` atomic, so an interrupt raised after the arm wakes the halt
 * rather than being taken before it.  What woke us is told apart by the
 * handlers' counts (trap.c). */
#include "../plat.h"
#include "cpu.h"
#include "kvm.h"

int plat_park(sk_time_ns deadline, const struct plat_wake *w, volatile int *stop)
{
	if (*stop)
		return PLAT_WOKE_STOP;
	sk_time_ns now = plat_now();
	if (deadline <= now)
		return PLAT_WOKE_NONE;
	bool irq = w && w->arm;
	if (!irq && deadline - now > PLAT_PARK_POLL_NS)
		deadline = now + PLAT_PARK_POLL_NS; /* no interrupt: poll at 1 kHz */
	timer_arm(deadline);
	if (irq && w->arm(w->ctx)) {
		if (w->disarm)
			w->disarm(w->ctx);
		return PLAT_WOKE_NONE;
	}
	struct kvm_cpu *c = kvm_cpu_this();
	uint64_t dev0 = c->irq_count[VEC_VIRTIO_NET], ticks0 = c->irq_count[VEC_TIMER];
	c->park_hlts++;
	cpu_sti_hlt();
	cpu_cli();
	if (irq && w->disarm)
		w->disarm(w->ctx);
	if (c->irq_count[VEC_VIRTIO_NET] != dev0)
		return PLAT_WOKE_FRAME;
	if (c->irq_count[VEC_TIMER] != ticks0)
		return PLAT_WOKE_TIMER;
	return PLAT_WOKE_OTHER;
}
