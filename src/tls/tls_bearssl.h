/* tls_bearssl.h — the unikernel's TLS engine (tls_engine.h) on BearSSL
 * 0.6 (Debian's libbearssl.a), which allocates nothing, does no I/O and
 * needs only memcpy, memmove, memset, memcmp and strlen from a C library:
 * it runs in the guest, where there is no malloc and no file system.
 * Built hosted too (its unit test, the fuzz target and the ASan pass);
 * `skiff serve` keeps OpenSSL.
 *
 * What it speaks, fixed here as the issue asks: TLS 1.2 only (BearSSL has
 * no 1.3); ECDHE over X25519 or P-256 (no other curve is offered); an
 * ECDSA P-256 or RSA certificate (PEM, with its chain); AES-128-GCM,
 * AES-256-GCM and ChaCha20-Poly1305 in the server's order; ALPN http/1.1;
 * the SNI name is read (one certificate serves every name); no
 * renegotiation; close_notify both ways.  Resumption by session ID only,
 * from one LRU cache per context: BearSSL 0.6 has no session tickets.
 *
 * Memory: everything lives in the caller's block (tls_bearssl_mem_size):
 * the context (decoded chain and key), a pool of max_conns connections
 * and a few shared input-overflow buffers, and the session cache.  Each
 * connection holds, for its whole life, BearSSL's server context and
 * one "mono" I/O buffer (BR_SSL_BUFSIZE_MONO, 16709 B): BearSSL keeps the
 * buffer it was given until the connection ends, so the record buffer
 * cannot go back to a pool while the connection idles; mono (one buffer
 * for both directions, half duplex) rather than bidi halves it.
 * tls_bearssl_conn_bytes() says what one connection costs (20,888 B).
 *
 * One thread, as every engine. */
#ifndef TLS_TLS_BEARSSL_H
#define TLS_TLS_BEARSSL_H

#include "tls_engine.h"

struct tls_bearssl_config {
	unsigned max_conns;    /* connections at once (the pool) */
	unsigned overflow;     /* shared input-overflow buffers; 0: max_conns / 4 + 2 */
	unsigned sessions;     /* session-ID cache entries; 0: 2 * max_conns + 64 */
	/* Fills buf with len random bytes (each connection's DRBG seed);
	 * 0 on success.  The unikernel's is plat_random (RDSEED/RDRAND). */
	int (*random)(void *buf, size_t len);
};

/* Bytes a connection holds while it lives, idle or not. */
size_t tls_bearssl_conn_bytes(void);

/* Bytes of memory tls_bearssl_server needs for cfg (16-byte aligned). */
size_t tls_bearssl_mem_size(const struct tls_bearssl_config *cfg);

/* A server context in mem (mem_size bytes, 16-byte aligned), on the PEM
 * certificate chain (leaf first) and private key (EC or RSA; "PRIVATE
 * KEY", "EC PRIVATE KEY" or "RSA PRIVATE KEY") given as bytes; the key
 * must match the leaf's public key.  NULL and a message in err on
 * failure.  The PEM bytes are not kept. */
struct tls_ctx *tls_bearssl_server(void *mem, size_t mem_size, const struct tls_bearssl_config *cfg,
				   const void *cert_pem, size_t cert_len, const void *key_pem,
				   size_t key_len, char *err, size_t errlen);

/* The context's counters: tls.conns_in_use, tls.conn_pool_empty,
 * tls.overflow_taken, tls.overflow_pool_empty, tls.sessions_saved,
 * tls.sessions_resumed, tls.sessions_missed. */
void tls_bearssl_stats(const struct tls_ctx *ctx,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg);

/* The SNI name the client sent ("" if none), once the hello is read. */
const char *tls_bearssl_server_name(const struct tls_conn *c);
/* The cipher suite agreed (BearSSL's BR_TLS_* number), 0 before. */
unsigned tls_bearssl_suite(const struct tls_conn *c);

extern const struct tls_engine_ops tls_bearssl_ops;

#endif
