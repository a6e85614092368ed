/* store.h — the links: ids from 1, URLs copied (malloc), hits counted. */
#ifndef LINKS_STORE_H
#define LINKS_STORE_H
#include <stddef.h>
#define STORE_MAX 4096u
#define TOP_N 3u
struct store_stats {
	unsigned long links, hits, top_id[TOP_N], top_hits[TOP_N]; /* most hits first */
	unsigned ntop;
};
unsigned long store_add(const char *url, size_t len); /* its id; 0: full */
const char *store_follow(unsigned long id);           /* the URL, a hit; NULL: none */
void store_stats(struct store_stats *st);
#endif
