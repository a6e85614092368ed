/* trace_print.c — see trace_print.h. */
#include <stdlib.h>
#include <time.h>

#include "../plat/plat.h"
#include "trace_print.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t trace_cycles(void)
{
	return plat_cycles();
}

void trace_start(struct tsc_cal *cal)
{
	/* 50 ms of spinning: long enough for a few ppm on a constant TSC. */
	uint64_t n0 = mono_ns(), c0 = plat_cycles(), n1, c1;
	do {
		n1 = mono_ns();
		c1 = plat_cycles();
	} while (n1 - n0 < 50 * SK_NS_PER_MS);
	cal->ns_per_cycle = (double)(n1 - n0) / (double)(c1 - c0);
	/* What one begin/end pair adds to every sample: reported, not
	 * subtracted (a live sample is timed once, not in a loop). */
	struct sk_hist *empty = calloc(1, sizeof(*empty));
	for (int i = 0; empty && i < 10001; i++) {
		uint64_t a = trace_cycles();
		sk_hist_add(empty, trace_cycles() - a);
	}
	cal->empty = empty ? sk_hist_quantile(empty, 1, 2) : 0;
	free(empty);
	cal->c0 = plat_cycles();
	cal->n0 = mono_ns();
}

void trace_merge(struct sk_trace *dst, struct sk_trace *const *t, unsigned n)
{
	for (int s = 0; s < SK_TR_N; s++) {
		sk_hist_reset(&dst->h[s]);
		for (unsigned k = 0; k < n; k++)
			sk_hist_merge(&dst->h[s], &t[k]->h[s]);
	}
}

void trace_print(const struct tsc_cal *cal, const struct sk_trace *trace, uint64_t req,
		 const struct dev_stats *ds, FILE *f)
{
	double npc = cal->ns_per_cycle;
	uint64_t c1 = plat_cycles(), n1 = mono_ns();
	/* A run of a second or more calibrates better than 50 ms. */
	if (n1 - cal->n0 >= SK_NS_PER_S && c1 > cal->c0)
		npc = (double)(n1 - cal->n0) / (double)(c1 - cal->c0);
	fprintf(f, "trace tsc_ghz=%.4f ns_per_cycle=%.5f empty_region_cycles=%llu\n", 1.0 / npc,
		npc, (unsigned long long)cal->empty);
	for (int s = 0; s < SK_TR_N; s++) {
		const struct sk_hist *h = &trace->h[s];
		uint64_t med = sk_hist_quantile(h, 1, 2), p99 = sk_hist_quantile(h, 99, 100);
		fprintf(f,
			"trace %s samples=%llu median=%llu p99=%llu max=%llu mean=%.1f cycles "
			"median_ns=%.1f p99_ns=%.1f\n",
			sk_trace_names[s], (unsigned long long)h->count, (unsigned long long)med,
			(unsigned long long)p99, (unsigned long long)h->max,
			h->count ? (double)h->sum / (double)h->count : 0.0, (double)med * npc,
			(double)p99 * npc);
	}
	if (ds) {
		fprintf(f, "trace syscalls_per_request=%.3f rx=%.3f tx=%.3f requests=%llu\n",
			req ? (double)(ds->rx_syscalls + ds->tx_syscalls) / (double)req : 0.0,
			req ? (double)ds->rx_syscalls / (double)req : 0.0,
			req ? (double)ds->tx_syscalls / (double)req : 0.0,
			(unsigned long long)req);
	}
}

void trace_prom(struct prom_out *o, struct sk_trace *const *t, unsigned n)
{
	if (n == 0)
		return;
	for (int s = 0; s < SK_TR_N; s++) {
		char name[64], help[160];
		snprintf(name, sizeof(name), "trace.%s", sk_trace_names[s]);
		snprintf(help, sizeof(help),
			 "--trace stage %s in TSC cycles per item (docs/cost.md)", sk_trace_names[s]);
		struct sk_hist h = t[0]->h[s];
		for (unsigned k = 1; k < n; k++)
			sk_hist_merge(&h, &t[k]->h[s]);
		prom_hist(o, name, "cycles", help, &h);
	}
}
