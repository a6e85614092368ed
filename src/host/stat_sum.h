/* stat_sum.h — "name value" counters of several workers summed by name
 * (serve and echo --workers, docs/smp.md): feed each worker's list through
 * stat_sum_add (the stats-callback shape), then emit the sums in the first
 * list's order.  Every worker runs the same code with the same options, so
 * the lists match and each add is one compare; a name only one has is
 * still found by search. */
#ifndef APPS_STAT_SUM_H
#define APPS_STAT_SUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STAT_SUM_NAME 96 /* proxy.upstream.[IPv6]:PORT.failures fits */

struct stat_sum {
	char (*name)[STAT_SUM_NAME];
	uint64_t *sum;
	size_t n, cap;
	size_t next;  /* where the next name of this list is expected */
	bool failed;  /* out of memory: emit prints nothing */
};

/* Before each worker's list. */
static inline void stat_sum_source(struct stat_sum *s)
{
	s->next = 0;
}
void stat_sum_add(void *sum, const char *name, uint64_t v);
void stat_sum_emit(const struct stat_sum *s, void (*fn)(void *ctx, const char *name, uint64_t v),
		   void *ctx);
void stat_sum_free(struct stat_sum *s);

/* fn's lines again with "workerK." before each name. */
struct stat_sum_prefix {
	void (*fn)(void *ctx, const char *name, uint64_t v);
	void *ctx;
	unsigned k;
};
void stat_sum_prefixed(void *prefix, const char *name, uint64_t v);

#endif
