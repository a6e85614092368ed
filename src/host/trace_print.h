/* trace_print.h — the front end of --trace (base/hist.h), one for every
 * runtime that has it: `skiff serve`, with flags or `--config FILE`
 * (host/sites_host.c, http/app.c).
 *
 * The core only counts cycles, each worker into its own struct sk_trace
 * (cycles = trace_cycles).  This calibrates the counter against
 * CLOCK_MONOTONIC at start (trace_start) and again over the whole run at
 * exit, and prints the workers' histograms merged (trace_print), or
 * serves them on /metrics (trace_prom).
 *
 * The lines trace_print writes (bench/http/cost.py and the tests read them):
 *   trace tsc_ghz=G ns_per_cycle=N empty_region_cycles=E
 *   trace STAGE samples=S median=M p99=P max=X mean=A cycles median_ns=MN p99_ns=PN
 *     (one per stage of SK_TRACE_STAGES, in its order; an empty one with 0s)
 *   trace syscalls_per_request=R rx=RX tx=TX requests=Q
 *     (only with the device's counters: skiff's stack) */
#ifndef APPS_TRACE_PRINT_H
#define APPS_TRACE_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "../base/hist.h"
#include "../dev/dev.h"
#include "../http/prom.h"

struct tsc_cal {
	uint64_t c0, n0;      /* at start, for the whole-run figure at exit */
	double ns_per_cycle;  /* from the 50 ms calibration at start */
	uint64_t empty;       /* median cycles of an empty timed region */
};

/* The counter a worker's struct sk_trace reads (plat_cycles). */
uint64_t trace_cycles(void);

/* 50 ms of calibration, and the cost of an empty timed region.  Once, on
 * the main thread, before the workers run. */
void trace_start(struct tsc_cal *cal);

/* The n workers' traces t[0..n) merged into dst (zeroed first). */
void trace_merge(struct sk_trace *dst, struct sk_trace *const *t, unsigned n);

/* The lines above for trace (the workers' merged), with req requests and,
 * when ds is not NULL, the devices' system calls (the sum of the
 * workers'). */
void trace_print(const struct tsc_cal *cal, const struct sk_trace *trace, uint64_t req,
		 const struct dev_stats *ds, FILE *f);

/* /metrics: one histogram skiff_trace_STAGE_cycles per stage, the n
 * workers' merged (a copy, read as the counters are: each worker writes
 * its own only). */
void trace_prom(struct prom_out *o, struct sk_trace *const *t, unsigned n);

#endif
