/* hist.h — fixed-size latency histograms and the request-path trace
 * (`skiff serve --trace`).
 *
 * Freestanding and allocation-free, like the rest of the core: a struct
 * sk_hist is a plain array the owner embeds, so recording a sample is an
 * index computation and an increment, never a call into the platform.
 * Integer only (the unikernel builds the core with -mgeneral-regs-only).
 *
 * Buckets are log-linear: values below 32 have a bucket each; above, every
 * power of two is split into 16 equal buckets, so a reported quantile is
 * within 1/32 (3.1 %) of a recorded value at any magnitude, from 1 cycle
 * to 2^64, in 976 buckets (about 4 KiB).  Count, sum, min and max are kept
 * exactly.
 *
 * The trace: the core reads no clock, so whoever wants timestamps hands the
 * core a struct sk_trace holding the cycle counter (plat_cycles on Linux).
 * Every traced stage tests that pointer, NULL meaning off: with tracing off
 * a stage costs one well-predicted branch at each end and nothing else.
 */
#ifndef BASE_HIST_H
#define BASE_HIST_H

#include "sk.h"

#define SK_HIST_SUB_BITS 4 /* 16 buckets per power of two */
#define SK_HIST_BUCKETS ((64 - SK_HIST_SUB_BITS + 1) << SK_HIST_SUB_BITS)

struct sk_hist {
	uint64_t count, sum, min, max;
	uint32_t b[SK_HIST_BUCKETS];
};

void sk_hist_reset(struct sk_hist *h);
void sk_hist_add(struct sk_hist *h, uint64_t v);
/* Add src's samples to dst (several workers' histograms into one). */
void sk_hist_merge(struct sk_hist *dst, const struct sk_hist *src);
/* The value at quantile num/den (1/2: median, 99/100: p99): the middle of
 * the bucket holding the ceil(count*num/den)-th smallest sample, clamped to
 * [min, max]; the smallest and largest ranks give min and max exactly.
 * 0 if empty. */
uint64_t sk_hist_quantile(const struct sk_hist *h, uint32_t num, uint32_t den);
/* Bucket arithmetic, exposed for the unit test. */
uint32_t sk_hist_index(uint64_t v);
uint64_t sk_hist_bucket_lo(uint32_t idx);
uint64_t sk_hist_bucket_width(uint32_t idx);

/* The traced stages, in print order.  X(name) */
#define SK_TRACE_STAGES(X)                                                             \
	X(rx_sync) X(ring_rx) X(ring_tx) X(tcp_in) X(tcp_out) X(http_request) X(conn)     \
	X(timer_arm) X(timer_cancel) X(park_wake)

enum sk_trace_stage {
#define SK_TRACE_ENUM(n) SK_TR_##n,
	SK_TRACE_STAGES(SK_TRACE_ENUM)
#undef SK_TRACE_ENUM
	SK_TR_N
};

struct sk_trace {
	uint64_t (*cycles)(void); /* required: a monotonic cycle counter */
	struct sk_hist h[SK_TR_N];
};

extern const char *const sk_trace_names[SK_TR_N];

/* The start of a stage: the counter, or 0 when tracing is off. */
static inline uint64_t sk_trace_begin(const struct sk_trace *tr)
{
	return sk_unlikely(tr != NULL) ? tr->cycles() : 0;
}

/* The end of a stage begun at t0: one sample of (now - t0) / per (per > 0:
 * a batch of `per` items, recorded as its cost per item). */
static inline void sk_trace_end(struct sk_trace *tr, enum sk_trace_stage s, uint64_t t0,
				uint64_t per)
{
	if (sk_unlikely(tr != NULL) && per)
		sk_hist_add(&tr->h[s], (tr->cycles() - t0) / per);
}

#endif
