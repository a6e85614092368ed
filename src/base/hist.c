/* hist.c — see hist.h. */
#include "hist.h"

const char *const sk_trace_names[SK_TR_N] = {
#define SK_TRACE_NAME(n) #n,
	SK_TRACE_STAGES(SK_TRACE_NAME)
#undef SK_TRACE_NAME
};

#define SUB (1u << SK_HIST_SUB_BITS)

void sk_hist_reset(struct sk_hist *h)
{
	sk_memset(h, 0, sizeof(*h));
}

/* Values below 2*SUB map to themselves.  Above, with e the index of the top
 * bit, the bucket is picked by e and the SK_HIST_SUB_BITS bits below the
 * top one; buckets of magnitude e are 2^(e - SUB_BITS) wide. */
uint32_t sk_hist_index(uint64_t v)
{
	if (v < 2 * SUB)
		return (uint32_t)v;
	uint32_t e = 63u - (uint32_t)__builtin_clzll(v);
	uint32_t sub = (uint32_t)(v >> (e - SK_HIST_SUB_BITS)) & (SUB - 1);
	return ((e - SK_HIST_SUB_BITS + 1) << SK_HIST_SUB_BITS) | sub;
}

uint64_t sk_hist_bucket_lo(uint32_t idx)
{
	if (idx < 2 * SUB)
		return idx;
	uint32_t e = (idx >> SK_HIST_SUB_BITS) + SK_HIST_SUB_BITS - 1;
	return (uint64_t)(SUB + (idx & (SUB - 1))) << (e - SK_HIST_SUB_BITS);
}

uint64_t sk_hist_bucket_width(uint32_t idx)
{
	if (idx < 2 * SUB)
		return 1;
	uint32_t e = (idx >> SK_HIST_SUB_BITS) + SK_HIST_SUB_BITS - 1;
	return (uint64_t)1 << (e - SK_HIST_SUB_BITS);
}

void sk_hist_add(struct sk_hist *h, uint64_t v)
{
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
	uint32_t *b = &h->b[sk_hist_index(v)];
	if (*b != UINT32_MAX) /* saturate rather than wrap: 4 G samples a bucket */
		(*b)++;
}

void sk_hist_merge(struct sk_hist *dst, const struct sk_hist *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (uint32_t i = 0; i < SK_HIST_BUCKETS; i++) {
		uint64_t n = (uint64_t)dst->b[i] + src->b[i];
		dst->b[i] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n; /* saturate, as sk_hist_add */
	}
}

uint64_t sk_hist_quantile(const struct sk_hist *h, uint32_t num, uint32_t den)
{
	if (h->count == 0 || den == 0)
		return 0;
	if (num > den)
		num = den;
	/* ceil(count * num / den) without overflow for any realistic count:
	 * counts stay far below 2^32 samples, num/den below 2^32. */
	uint64_t rank = (h->count * num + den - 1) / den;
	/* The extremes are known exactly: no need for a bucket's middle. */
	if (rank <= 1)
		return h->min;
	if (rank >= h->count)
		return h->max;
	uint64_t seen = 0;
	for (uint32_t i = 0; i < SK_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t v = sk_hist_bucket_lo(i) + (sk_hist_bucket_width(i) - 1) / 2;
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max; /* saturated buckets: the walk can fall short */
}
