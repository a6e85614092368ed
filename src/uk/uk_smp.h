/* uk_smp.h — the unikernel's other vCPUs as workers (issue 17): one
 * complete stack per vCPU (its virtio-net queue pair, interface, TCP
 * tables and pools, timers, its instance of the sites runtime
 * (uk/uk_sites.h: the engines, router and handlers), runner), sharing nothing
 * writable on the per-request path.  The device spreads flows over the
 * queue pairs (VIRTIO_NET_F_MQ; on a TAP the host kernel's flow hash and
 * the queue the guest last sent a flow on), so each connection lives and
 * dies on one vCPU.  Worker 0 is uk_main.c's own stack on the BSP;
 * workers 1..n-1 are built here from the same configuration and run on
 * the APs (plat/kvm smp_run_on).
 *
 * What is shared, and why:
 *   - ARP.  Every worker has the same IP and MAC, but the host steers an
 *     ARP frame by a hash that knows no flow, so the reply to worker k's
 *     request may reach worker j.  Each worker's receive path copies the
 *     ARP frames it sees into a small broadcast log (lossy, ARP retries);
 *     every other worker feeds them to its own interface on its next turn,
 *     a request as what it tells (a reply from its sender, so only the
 *     vCPU that got it answers), and the writer wakes them.  Learning
 *     rather than one shared table: the table stays single-writer, and
 *     the path for a frame stays the interface's own.
 *   - The shutdown port: a datagram to it on any worker stops them all,
 *     and with "exit" each worker then drains its own connections on its
 *     own vCPU (uk/uk_drain.h), all at once; worker 0 waits for them
 *     (drain-timeout and a margin) and prints the summary.
 *   - Read-only after boot: the configuration model (the file's,
 *     `skiff vm --config`, or filled from the words), the site archives, the wall clock's base; with wolfSSL the
 *     WOLFSSL_CTXs (certificates, keys, and the ticket key wolfSSL keeps
 *     in them under their own lock: a ticket sealed on one vCPU opens on
 *     another).
 *   - HTTPS: every worker has its own TLS listener, TLS loop and engine
 *     (uk_sites.c); BearSSL's session cache is worker 0's, taken under a
 *     spin lock once per handshake, so a session resumes on any vCPU.
 *   - Every worker has the metrics listener too; its page is every
 *     worker's counters (uk_main.c's uk_page_stats), read while they run.
 * Not shared (left to each worker, said in the README): IPv6 neighbour
 * discovery; the access log (each worker its own uk_alog, set up as
 * worker 0's, on its own interface and loop; the console's lock keeps a
 * batch whole); the error log (each worker its own sk_log, "skiff-uk:
 * cpu K" lines, rate-limited on its own). */
#ifndef APPS_UK_SMP_H
#define APPS_UK_SMP_H

#include "../conf/opts.h"
#include "../dev/virtio_net.h"
#include "../net/iface.h"
#include "../net/tcp.h"
#include "uk_alog.h"
#include "uk_drain.h"

struct uk_smp_config {
	const struct iface_config *ifc;         /* worker 0's; each worker reseeds */
	const struct tcp_config *tcp;           /* sizes, buffers, cc; each reseeds */
	const struct opts *opts;                /* the words (uk_sites_start's) */
	uint16_t shutdown_port;                 /* 0: none */
	udp_recv_fn on_shutdown;                /* uk_main's handler: sets the exit code and stop */
	sk_time_ns until;                       /* exit-after, or 0 */
	sk_time_ns spin_ns;
	bool spin_learn;
	int listen_backlog;
	uint64_t (*wall_sec)(sk_time_ns now);   /* for the Date header */
	void *(*alloc)(const char *what, size_t size); /* stops the boot if it cannot */
	volatile int *stop;                     /* shared: any worker may set it */
	/* Worker 0's access log (access-log=), or NULL: each worker logs its
	 * own requests the same way, from its own buffer and interface. */
	const struct uk_alog *alog;
	/* After its loop ended: the drain-timeout in seconds if the
	 * shutdown port asked for a drain, else 0 (stop at once). */
	unsigned (*drain_timeout)(void);
};

/* Workers 1..n-1 on vns[1..n-1], each started on AP k.  Also attaches the
 * ARP log to worker 0 (vns[0], ifc0), which runs in uk_main.c.  Returns
 * the workers started besides worker 0. */
unsigned uk_smp_start(struct virtio_net *vns, unsigned n, struct iface *ifc0,
		      const struct uk_smp_config *c);
/* After worker 0's loop ended and stop is set: wake the others, whose
 * loops end too; each then drains (if drain_timeout says so) and stops. */
void uk_smp_wake(void);
/* Wait until every other worker has begun its drain, or will not drain,
 * or `until` (plat_now's clock) passed.  conns[k] (k = 1..n-1): worker
 * k's connections when its drain began, 0 if it did not begin.  Returns
 * the workers draining. */
unsigned uk_smp_drain_begun(unsigned *conns, sk_time_ns until);
/* Wait for the others to stop, until `until`.  Returns the ones that
 * stopped; those that did not are named on the console. */
unsigned uk_smp_wait(sk_time_ns until);
/* After uk_smp_wait: the others' drains summed into *sum (conns and
 * left added, finished only if every one that drained finished and
 * stopped, ms the longest).  Returns the workers that drained. */
unsigned uk_smp_drained(struct uk_drain_result *sum);
/* Every worker's counters (1..n-1) as cpuK.NAME, and the ARP log's. */
void uk_smp_stats(void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);

#endif
