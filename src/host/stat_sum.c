/* stat_sum.c — see stat_sum.h. */
#include "stat_sum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void stat_sum_add(void *sum, const char *name, uint64_t v)
{
	struct stat_sum *s = sum;
	size_t i = s->next;
	if (i >= s->n || strcmp(s->name[i], name) != 0)
		for (i = 0; i < s->n && strcmp(s->name[i], name) != 0; i++)
			;
	if (i == s->n) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 512;
			void *nn = realloc(s->name, cap * STAT_SUM_NAME);
			if (nn)
				s->name = nn;
			void *ns = nn ? realloc(s->sum, cap * sizeof(uint64_t)) : NULL;
			if (!ns) {
				s->failed = true;
				return;
			}
			s->sum = ns;
			s->cap = cap;
		}
		snprintf(s->name[i], STAT_SUM_NAME, "%s", name);
		s->sum[i] = 0;
		s->n++;
	}
	s->sum[i] += v;
	s->next = i + 1;
}

void stat_sum_emit(const struct stat_sum *s, void (*fn)(void *ctx, const char *name, uint64_t v),
		   void *ctx)
{
	for (size_t i = 0; !s->failed && i < s->n; i++)
		fn(ctx, s->name[i], s->sum[i]);
}

void stat_sum_free(struct stat_sum *s)
{
	free(s->name);
	free(s->sum);
	memset(s, 0, sizeof(*s));
}

void stat_sum_prefixed(void *prefix, const char *name, uint64_t v)
{
	struct stat_sum_prefix *p = prefix;
	char n[STAT_SUM_NAME + 16];
	snprintf(n, sizeof(n), "worker%u.%s", p->k, name);
	p->fn(p->ctx, n, v);
}
