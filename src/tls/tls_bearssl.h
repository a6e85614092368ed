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
 * AES-256-GCM and ChaCha20-Poly1305 in the server's order; ALPN http/1.1,
 * h2 before it with alpn_h2 (tls_alpn.h);
 * the certificate chosen by the SNI name (tls_bearssl_add_cert/_name: a
 * default one and up to TLS_SNI_MAX names for others); no
 * renegotiation; close_notify both ways.  Resumption by session ID only,
 * from one LRU cache per context (or one context's shared by several,
 * tls_bearssl_share_cache): BearSSL 0.6 has no session tickets; a
 * session resumes only under a name that asks for the certificate it
 * was made with (else the connection is refused: BearSSL cannot fall
 * back to a full handshake once it found the session).
 *
 * Memory: everything lives in the caller's block (tls_bearssl_mem_size):
 * the context, its certificates (decoded chains and keys, 18,736 B
 * each), a pool of max_conns connections
 * and a few shared input-overflow buffers, and the session cache.  Each
 * connection holds, for its whole life, BearSSL's server context and
 * one "mono" I/O buffer (BR_SSL_BUFSIZE_MONO, 16709 B): BearSSL keeps the
 * buffer it was given until the connection ends, so the record buffer
 * cannot go back to a pool while the connection idles; mono (one buffer
 * for both directions, half duplex) rather than bidi halves it.
 * tls_bearssl_conn_bytes() says what one connection costs (20,904 B).
 *
 * One thread, as every engine. */
#ifndef TLS_TLS_BEARSSL_H
#define TLS_TLS_BEARSSL_H

#include "tls_engine.h"

struct tls_bearssl_config {
	unsigned max_conns;    /* connections at once (the pool) */
	unsigned overflow;     /* shared input-overflow buffers; 0: max_conns / 4 + 2 */
	unsigned sessions;     /* session-ID cache entries; 0: 2 * max_conns + 64 */
	unsigned certs;        /* certificates held: the default and those added
				* (tls_bearssl_add_cert); at most 1 + TLS_SNI_MAX; 0: 1 */
	/* Fills buf with len random bytes (each connection's DRBG seed);
	 * 0 on success.  The unikernel's is plat_random (RDSEED/RDRAND). */
	int (*random)(void *buf, size_t len);
	/* ALPN offers h2 before http/1.1 (tls_engine.h's alpn_h2): only
	 * where the HTTP engine above speaks HTTP/2. */
	bool alpn_h2;
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

/* Certificates chosen by SNI name, added after tls_bearssl_server and
 * before the first connection.  add_cert decodes one more chain and key
 * (as tls_bearssl_server does, into the room cfg->certs made) and returns
 * its index (the default is 0), or -1 with a message in err.  add_name
 * makes a client that asks for name[0, len) get certificate `cert`
 * (compared ignoring case; "*.example.com" stands for any one label
 * before ".example.com", an exact name wins over it); at most
 * TLS_SNI_MAX names; 0, or -1 with a message.  A client that sends no
 * name, or one no name matches, gets the default.  The bytes are copied:
 * neither PEM nor name is kept. */
int tls_bearssl_add_cert(struct tls_ctx *ctx, const void *cert_pem, size_t cert_len,
			 const void *key_pem, size_t key_len, char *err, size_t errlen);
int tls_bearssl_add_name(struct tls_ctx *ctx, const char *name, size_t len, unsigned cert,
			 char *err, size_t errlen);

/* Make t resume from owner's session cache, and save into it (the
 * unikernel's vCPUs, uk/uk_smp.h: a session made on one resumes on
 * another), lock and unlock taken around each use of it, by either
 * context (owner's take them from now on too).  Before either has a
 * connection.  Only the cache is shared: each context's connections,
 * counters and certificates stay its own, and each is used by one thread.
 * Both must hold the same certificates in the same order (a session ID
 * names its certificate by index); t's own cache goes unused (give it
 * sessions = 1). */
void tls_bearssl_share_cache(struct tls_ctx *t, struct tls_ctx *owner, void (*lock)(void),
			     void (*unlock)(void));

/* The context's counters: tls.conns_in_use, tls.conn_pool_empty,
 * tls.overflow_taken, tls.overflow_pool_empty, tls.sessions_saved,
 * tls.sessions_resumed, tls.sessions_missed; with names added
 * tls.sni_matched (a name found: its certificate), tls.sni_default (no
 * name, or none matched: the default) and tls.sni_resume_refused (a
 * session offered under a name asking for another certificate). */
void tls_bearssl_stats(const struct tls_ctx *ctx,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg);

/* The SNI name the client sent ("" if none), once the hello is read. */
const char *tls_bearssl_server_name(const struct tls_conn *c);
/* The index of the certificate the connection was given (0: the
 * default), once the hello is read. */
unsigned tls_bearssl_cert(const struct tls_conn *c);
/* The cipher suite agreed (BearSSL's BR_TLS_* number), 0 before. */
unsigned tls_bearssl_suite(const struct tls_conn *c);

extern const struct tls_engine_ops tls_bearssl_ops;

#endif
