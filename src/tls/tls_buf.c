/* tls_buf.c — see tls_buf.h. */
#include "tls_buf.h"

#include <stdlib.h>
#include <string.h>

#include "tls_engine.h"

void tls_buf_release(struct tls_pool *pool, struct tls_buf *b)
{
	if (b->p && b->cap == TLS_BUF_SIZE && pool->n < TLS_POOL_MAX)
		pool->free[pool->n++] = b->p;
	else
		free(b->p);
	*b = (struct tls_buf){0};
}

int tls_buf_append(struct tls_pool *pool, struct tls_buf *b, const void *d, size_t n)
{
	if (!b->p) {
		if (n <= TLS_BUF_SIZE && pool->n) {
			b->p = pool->free[--pool->n];
			b->cap = TLS_BUF_SIZE;
		} else {
			b->cap = n <= TLS_BUF_SIZE ? TLS_BUF_SIZE : n;
			b->p = malloc(b->cap);
			if (!b->p) {
				b->cap = 0;
				return -1;
			}
		}
	}
	if (b->cap - b->len < n && b->off) { /* slide what waits to the front */
		memmove(b->p, b->p + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	if (b->cap - b->len < n) { /* back-pressure: grow, outside the pool */
		size_t cap = b->cap * 2;
		while (cap - b->len < n)
			cap *= 2;
		uint8_t *q = malloc(cap);
		if (!q)
			return -1;
		memcpy(q, b->p, b->len);
		struct tls_buf old = *b;
		tls_buf_release(pool, &old);
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	return 0;
}

void tls_buf_consume(struct tls_pool *pool, struct tls_buf *b, size_t n)
{
	b->off += n;
	if (b->off >= b->len)
		tls_buf_release(pool, b);
}

void tls_pool_drain(struct tls_pool *pool)
{
	while (pool->n)
		free(pool->free[--pool->n]);
}
