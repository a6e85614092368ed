/* tls_wolfssl.h — a TLS engine (tls_engine.h) on wolfSSL 5.5 (Debian's
 * libwolfssl.a), the unikernel's TLS 1.3 (`make uk-tls13`,
 * build/skiff-uk-tls13.elf) and a hosted one for its unit test and fuzz
 * target.  wolfSSL never sees a socket: each connection's transport is a
 * pair of callbacks of ours over two buffers (records in, records out,
 * tls_buf.h), so the engine does no I/O.
 *
 * What it speaks, fixed here as the other engines' settings are: TLS 1.3
 * and 1.2; AES-128/256-GCM and ChaCha20-Poly1305 only, ECDHE only; X25519
 * then P-256; the server's order; ALPN http/1.1, h2 before it with
 * alpn_h2 (a client that offers neither gets none: not an error); no renegotiation; session
 * tickets, sealed by a callback of ours under a key of the hour (the one
 * before still opens) and bound to the name asked for (a ticket made
 * under another name: a full handshake), one NewSessionTicket sent right
 * after every TLS 1.3 handshake (wolfSSL sends it as the client's Finished
 * is read, before any application data).  Certificates by name (SNI): a
 * WOLFSSL_CTX per certificate; once the ClientHello is read, a name
 * tls_sni_pick finds moves the connection onto that context.  One set of
 * ticket keys for them all, so a session resumes under its name on TLS 1.2
 * as on 1.3, and under that name only.
 *
 * Memory: wolfSSL and this engine allocate (malloc); in the guest that is
 * musl's malloc, which the platform locks for every vCPU
 * (src/plat/kvm/musl/heap_lock.c).  Randomness: wolfSSL seeds its DRBG
 * from /dev/urandom, which the guest's libc.c answers from RDSEED/RDRAND.
 *
 * One thread per connection, as every engine; contexts may be shared by
 * the guest's vCPUs (wolfSSL locks its own shared state). */
#ifndef TLS_TLS_WOLFSSL_H
#define TLS_TLS_WOLFSSL_H

#include "tls_engine.h"

/* Once, before any context: wolfSSL's global set-up.  0, or -1 if
 * wolfSSL failed. */
int tls_wolfssl_init(void);

/* A server context on the PEM certificate chain (leaf first) and private
 * key (EC or RSA) given as bytes, which are not kept.  ticket_rotate_s is
 * not used (wolfSSL's ticket key lives an hour).  NULL and a message in
 * err on failure. */
struct tls_ctx *tls_wolfssl_server_pem(const void *cert_pem, size_t cert_len, const void *key_pem,
				       size_t key_len, char *err, size_t errlen);
/* One more certificate, for clients that ask for name[0, name_len)
 * (tls_engine.h's rules: ignoring case, "*.DOMAIN" for one label); at
 * most TLS_SNI_MAX.  0, or -1 with a message in err. */
int tls_wolfssl_add_name(struct tls_ctx *ctx, const char *name, size_t name_len,
			 const void *cert_pem, size_t cert_len, const void *key_pem, size_t key_len,
			 char *err, size_t errlen);
/* Offer h2 before http/1.1 in ALPN (tls_engine.h's alpn_h2; off until
 * this is called), for connections made from now on: the unikernel's
 * form sets it after tls_wolfssl_server_pem. */
void tls_wolfssl_alpn_h2(struct tls_ctx *ctx, bool on);
/* Another context on base's WOLFSSL_CTXs, for another vCPU (the
 * unikernel's workers, uk/uk_smp.h): the certificates and keys base parsed,
 * and its ticket keys (read-only, so no lock): a ticket either one sealed
 * under a name, the other opens under that name.  Its
 * own connection pool and counters, used by one vCPU at a time; the names
 * are copied.  Call it once base's names are added; each context is freed
 * on its own (wolfSSL counts references).  Not for the hosted form's
 * reload, which gives base new WOLFSSL_CTXs.  NULL and a message in err. */
struct tls_ctx *tls_wolfssl_server_share(struct tls_ctx *base, char *err, size_t errlen);
/* The hosted form: files, and the SNI certificates and alpn_h2 of o
 * (tls_engine.h). */
struct tls_ctx *tls_wolfssl_server(const char *cert_file, const char *key_file,
				   const struct tls_server_opts *o, char *err, size_t errlen);
void tls_wolfssl_free(struct tls_ctx *ctx);

/* Counters: tls.wolfssl_sessions (connections made), tls.tickets_sent
 * (TLS 1.3 handshakes that queued a ticket), tls.resumed_engine
 * (handshakes wolfSSL says resumed), tls.sni_matched, tls.sni_default,
 * tls.resume_refused_name (a ticket made under another name). */
void tls_wolfssl_stats(const struct tls_ctx *ctx,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg);

/* The CN-independent facts tests ask about: the SNI name the client sent
 * ("" if none) and the index of the certificate given (0: the default,
 * i: the i-th added). */
const char *tls_wolfssl_server_name(const struct tls_conn *c);
unsigned tls_wolfssl_cert(const struct tls_conn *c);

extern const struct tls_engine_ops tls_wolfssl_ops;

#endif
