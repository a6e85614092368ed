/* bench_report.h — what the micro-benchmarks of the cost report
 * (bench_cost.c, bench_tls.c) share: the lfenced cycle counter and the
 * "row|name|samples|med_cyc|p99_cyc|med_ns|p99_ns" line bench/http/cost.py
 * reads.  Header-only: each benchmark is one program. */
#ifndef BENCH_BENCH_REPORT_H
#define BENCH_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static inline uint64_t tsc(void)
{
	_mm_lfence();
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
}

/* ns per cycle of tsc(), set by the benchmark's calibration. */
static double ns_per_cycle;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v; prints the median and the 99th percentile of n samples. */
static void report(const char *name, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	double med = v[n / 2], p99 = v[(size_t)((double)n * 0.99)];
	printf("row|%s|%zu|%.1f|%.1f|%.1f|%.1f\n", name, n, med, p99, med * ns_per_cycle,
	       p99 * ns_per_cycle);
	fflush(stdout);
}

#endif
