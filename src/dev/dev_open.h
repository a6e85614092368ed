/* dev_open.h — open a hosted device by its --dev spec (Linux only).
 *
 *   tap:NAME       a TAP interface (created if missing), IFF_NO_PI
 *   packet:IFACE   AF_PACKET with a TPACKET_V2 mmap'ed receive ring
 *   xdp:IFACE      AF_XDP through libxdp (copy mode where zero-copy is not
 *                  offered), queue 0 (struct dev_config: one queue of N)
 * and, around any of them, a pcap recorder when pcap_path is set.
 */
#ifndef DEV_OPEN_H
#define DEV_OPEN_H

#include "dev.h"

struct dev_config {
	uint32_t num_slots;    /* per ring; 0 = RING_SLOTS_DEFAULT */
	const char *pcap_path; /* NULL = no capture */
	/* One of nqueues openings of the same device by share-nothing workers
	 * (docs/smp.md), each steered its own share of the flows by the kernel:
	 *   tap     IFF_MULTI_QUEUE, one queue fd each (the TAP must be made
	 *           multi-queue: created by the first open, or `ip tuntap add
	 *           ... multi_queue`), steered by flow_hash when the eBPF
	 *           program loads (CAP_BPF);
	 *   packet  PACKET_FANOUT_CBPF, all sockets in fanout group `group`,
	 *           steered by wire/flow_hash.h (steer_bpf.h);
	 *   xdp     an AF_XDP socket on rx queue `queue` (xdp_queues says how
	 *           many the device has).
	 * Queue k must be the k-th opening (open them in order on one thread):
	 * the kernel numbers fanout members and TAP queues by join order.
	 * dev.flow_steered says whether the flow hash picks this queue.
	 * nqueues 0 or 1: one opening, as before (queue 0, no fanout). */
	uint16_t queue, nqueues;
	uint16_t group;
	/* DEV_OFF_* the device may use (it negotiates what it can of these):
	 * DEV_OFF_ALL by default, 0 for --offload off (frames as before). */
	uint32_t offload_allow;
};

/* xdp: the rx queues IFACE has (sysfs), 0 when unknown. */
unsigned dev_rx_queues(const char *ifname);

/* Returns 0 and *out, or -1 with a one-line reason in err. */
int dev_open(const char *spec, const struct dev_config *cfg, struct dev **out, char *err,
	     size_t errlen);

/* One line per counter, "name value", into a FILE* passed as void* so this
 * header needs no stdio. */
void dev_print_stats(struct dev *d, void *file);
/* The same counters through fn (the --stats enumeration shape). */
void dev_stats_each(struct dev *d, void (*fn)(void *ctx, const char *name, uint64_t v),
		    void *ctx);

#endif
