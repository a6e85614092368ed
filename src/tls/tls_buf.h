/* tls_buf.h — the record buffers of the hosted TLS engines (tls_openssl.c,
 * tls_gnutls.c): per connection one for records in and one for records
 * out, each held only while bytes wait in it, taken from the context's
 * pool of TLS_BUF_SIZE buffers (tls_engine.h) and given back as soon as it
 * is empty.  Back-pressure may grow one past TLS_BUF_SIZE; such a buffer
 * is freed, not pooled.  One thread, as the engines. */
#ifndef TLS_TLS_BUF_H
#define TLS_TLS_BUF_H

#include <stddef.h>
#include <stdint.h>

#define TLS_POOL_MAX 256 /* idle buffers kept for reuse */

struct tls_pool {
	unsigned n;
	uint8_t *free[TLS_POOL_MAX]; /* idle TLS_BUF_SIZE buffers */
};

/* Bytes [off, len) of p wait; p == NULL iff none do (then off = len = 0). */
struct tls_buf {
	uint8_t *p;
	size_t off, len, cap;
};

/* Append n bytes (taking a buffer from the pool if b has none).  0, or -1
 * out of memory (b unchanged). */
int tls_buf_append(struct tls_pool *pool, struct tls_buf *b, const void *d, size_t n);
/* Drop n waiting bytes; an emptied buffer goes back to the pool. */
void tls_buf_consume(struct tls_pool *pool, struct tls_buf *b, size_t n);
/* Give b's buffer back, whatever waits in it. */
void tls_buf_release(struct tls_pool *pool, struct tls_buf *b);
/* Free every pooled buffer (the context's end). */
void tls_pool_drain(struct tls_pool *pool);

static inline size_t tls_buf_waiting(const struct tls_buf *b)
{
	return b->len - b->off;
}

#endif
