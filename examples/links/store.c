/* store.c — store.h on a fixed table and the C library's heap. */
#include "store.h"
#include <stdlib.h>
#include <string.h>

static struct link { char *url; unsigned long hits; } links[STORE_MAX];
static unsigned long nlinks;

unsigned long store_add(const char *url, size_t len)
{
	char *copy = nlinks < STORE_MAX ? malloc(len + 1) : NULL;
	if (!copy)
		return 0;
	memcpy(copy, url, len);
	copy[len] = 0;
	links[nlinks] = (struct link){copy, 0};
	return ++nlinks;
}

const char *store_follow(unsigned long id)
{
	return id && id <= nlinks ? (links[id - 1].hits++, links[id - 1].url) : NULL;
}

static int by_hits(const void *a, const void *b)
{
	unsigned long x = links[*(const unsigned *)a].hits, y = links[*(const unsigned *)b].hits;
	return x < y ? 1 : x > y ? -1 : 0;
}

void store_stats(struct store_stats *st)
{
	static unsigned order[STORE_MAX];
	*st = (struct store_stats){.links = nlinks};
	for (unsigned i = 0; i < nlinks; i++)
		order[i] = i, st->hits += links[i].hits;
	qsort(order, nlinks, sizeof(order[0]), by_hits);
	for (; st->ntop < nlinks && st->ntop < TOP_N; st->ntop++) {
		st->top_id[st->ntop] = order[st->ntop] + 1;
		st->top_hits[st->ntop] = links[order[st->ntop]].hits;
	}
}
