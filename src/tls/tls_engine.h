/* tls_engine.h — the one interface the TLS stream layer (loop_tls.c)
 * drives, whichever library does the cryptography: records in, plaintext
 * out, plaintext in, records out, and the handshake's state.  No I/O: the
 * engine sees only bytes the layer hands it, and hands back the bytes the
 * layer must send, as the devices sit behind struct dev_ops.
 *
 * Engines: tls_openssl.c (hosted, OpenSSL 3, TLS 1.3 and 1.2),
 * tls_gnutls.c (hosted, GnuTLS 3.7, the same; --tls-engine gnutls) and
 * tls_bearssl.c (the unikernel's, BearSSL, TLS 1.2).  The hosted ones are
 * chosen by name through tls_host.h.
 *
 * Contract, per connection (struct tls_conn, owned by the engine):
 *   - records_in() takes ciphertext from the peer; it accepts all of it
 *     (the layer bounds how much it feeds before the application reads),
 *     up to in_room() bytes when the engine has that op (an engine over
 *     fixed buffers); without it, any amount.
 *   - step() runs the handshake as far as the input allows.  It returns
 *     TLS_OK (done, or waiting for input), TLS_ERR_* on a fatal error; the
 *     layer then sends what records_out() still gives (an alert) and ends
 *     the connection.
 *   - read() gives plaintext: > 0 bytes, 0 after the peer's close_notify,
 *     -SK_EAGAIN when it needs more records, or -SK_ECONNRESET on a fatal
 *     error (bad record, wrong MAC): tls_conn_error() then says which.
 *   - write() seals plaintext into records: all of it (<= TLS_MAX_WRITE),
 *     one record per call when it fits one (16 KiB), or -SK_E*.  An
 *     engine over fixed buffers may take less, or refuse with -SK_EAGAIN
 *     while records wait unsent (then the layer waits for the socket).
 *   - out_peek() shows the records waiting to be sent (a pointer into the
 *     engine's buffer, valid until the next call on the connection), and
 *     out_consume() drops what the layer sent.  The engine writes records
 *     straight into that buffer: no copy between it and the socket.
 *   - close_notify() queues our close_notify alert.
 *   - alpn() names the application protocol ALPN agreed (RFC 7301):
 *     "h2" or "http/1.1", a static string, or NULL before the handshake
 *     is done and when none was (the client offered none, or none we
 *     speak: the handshake goes on without ALPN, as nginx's does).  An
 *     engine offers h2 only when its context was made with alpn_h2 (in
 *     struct tls_server_opts, or the engine's own config); then the
 *     server's order wins: h2, then http/1.1.
 *   - half_duplex: the engine works over one buffer for both directions
 *     (BearSSL's "mono" mode, the unikernel's).  While plaintext it took
 *     in waits to be read it refuses write(), and records the layer held
 *     for it (pending_in) go in as its own records leave: neither makes an
 *     edge on the inner socket, so the layer watches for both
 *     (loop_tls.c's kick), at two pending_in() calls per event and per
 *     write.  A full-duplex engine (OpenSSL, GnuTLS, wolfSSL) leaves it
 *     false and pays none of that.
 * One thread: an engine and its connections are used from the loop's
 * thread only. */
#ifndef TLS_TLS_ENGINE_H
#define TLS_TLS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/sk.h"

#define TLS_MAX_WRITE 16384u /* one record's worth of plaintext */

enum tls_status {
	TLS_OK = 0,
	TLS_ERR_HANDSHAKE = 1, /* the peer's hello or keys were refused */
	TLS_ERR_PROTOCOL,      /* not TLS, a bad record, a wrong MAC */
	TLS_ERR_INTERNAL,      /* out of memory, library failure */
};

struct tls_ctx;
struct tls_conn;

struct tls_engine_ops {
	const char *name;
	bool half_duplex; /* one buffer, both directions: see the contract above */
	struct tls_conn *(*conn_new)(struct tls_ctx *ctx);
	void (*conn_free)(struct tls_conn *c);
	long (*records_in)(struct tls_conn *c, const void *buf, size_t len);
	size_t (*in_room)(const struct tls_conn *c); /* NULL: records_in takes any amount */
	int (*step)(struct tls_conn *c);
	bool (*handshake_done)(const struct tls_conn *c);
	long (*read)(struct tls_conn *c, void *buf, size_t len);
	long (*write)(struct tls_conn *c, const void *buf, size_t len);
	size_t (*out_peek)(const struct tls_conn *c, const uint8_t **p);
	void (*out_consume)(struct tls_conn *c, size_t n);
	size_t (*pending_in)(const struct tls_conn *c); /* ciphertext not yet opened */
	void (*close_notify)(struct tls_conn *c);
	int (*error)(const struct tls_conn *c);     /* enum tls_status of the last failure */
	bool (*resumed)(const struct tls_conn *c);  /* the handshake resumed a session */
	const char *(*version)(const struct tls_conn *c);
	const char *(*alpn)(const struct tls_conn *c); /* see the contract above */
	/* The context's own operations, for a runtime that holds contexts of
	 * any hosted engine (tls_host.h); NULL in the unikernel's. */
	void (*ctx_free)(struct tls_ctx *ctx);
	int (*ctx_reload)(struct tls_ctx *ctx, const char *cert_file, const char *key_file,
			  char *err, size_t errlen);
	void (*ctx_stats)(const struct tls_ctx *ctx,
			  void (*fn)(void *arg, const char *name, uint64_t v), void *arg);
};

/* A hosted engine's struct tls_ctx begins with this, so that whoever holds
 * a context finds its engine (tls_host.h) without keeping it apart. */
struct tls_ctx_head {
	const struct tls_engine_ops *ops;
};

/* Buffers: a connection holds an input and an output buffer only while
 * bytes wait in them, taken from the context's pool (TLS_BUF_SIZE each,
 * one record and its overhead; larger when back-pressure piles up more,
 * and then not pooled). */
#define TLS_BUF_SIZE 17408u

/* A certificate chosen by server name (SNI, RFC 6066 3): a client that
 * asks for `name` (compared ignoring case; "*.example.com" stands for any
 * one label before example.com, an exact name wins over it) gets this
 * chain and key; any other client the default ones.  Lengths, not NULs,
 * end name and cert (they are cut out of one command-line word); key is
 * NUL-terminated.  The engine keeps its own copies. */
#define TLS_SNI_MAX 8
struct tls_sni {
	const char *name;
	size_t name_len;
	const char *cert;
	size_t cert_len;
	const char *key;
};

struct tls_server_opts {
	/* Session tickets are sealed with a key that is replaced every
	 * ticket_rotate_s seconds (0: 3600); a ticket sealed with the key
	 * before still resumes (and gets a new one), an older one does not. */
	uint32_t ticket_rotate_s;
	const struct tls_sni *sni; /* nsni (<= TLS_SNI_MAX) certificates by name */
	unsigned nsni;
	/* ALPN offers h2 before http/1.1 (a client offering both gets h2).
	 * Off: http/1.1 only.  Set it only where the HTTP engine above
	 * speaks HTTP/2 on this listener: a client told "h2" sends nothing
	 * else. */
	bool alpn_h2;
};

/* The server side: certificate chain and key (PEM files), TLS 1.2-1.3,
 * AES-GCM and ChaCha20-Poly1305, X25519 then P-256, ALPN http/1.1 (h2
 * first with o->alpn_h2), tickets under rotating keys and a session
 * cache, no renegotiation.  o may be NULL (defaults).  NULL and a
 * message in err on failure. */
struct tls_ctx *tls_openssl_server(const char *cert_file, const char *key_file,
				   const struct tls_server_opts *o, char *err, size_t errlen);
void tls_openssl_free(struct tls_ctx *ctx);
/* SIGHUP: load the chain and key again (the same settings), and every
 * SNI certificate from its files as first given: all of them or, if one
 * fails, none.  Connections
 * made from now on use the new ones; open connections keep the ones they
 * were made with until they close (each holds a reference).  Ticket keys
 * are replaced, so no client resumes a session made under the old
 * certificate.  -1 with a message in err: nothing changes. */
int tls_openssl_reload(struct tls_ctx *ctx, const char *cert_file, const char *key_file,
		       char *err, size_t errlen);
/* Replace the ticket key now, as the timer would (tests). */
void tls_openssl_rotate(struct tls_ctx *ctx);
/* The context's counters: tls.ticket_rotations, tls.tickets_sealed,
 * tls.tickets_opened, tls.tickets_renewed (opened with the previous key),
 * tls.tickets_unknown (no key for them: a full handshake), tls.reloads,
 * tls.reload_failures; with SNI certificates tls.sni_matched (a name
 * found: its certificate) and tls.sni_default (no name, or none of them:
 * the default certificate), tls.resume_refused_name (a ticket made under
 * another name: a full handshake, tls_openssl.c). */
void tls_openssl_stats(const struct tls_ctx *ctx,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg);
extern const struct tls_engine_ops tls_openssl_ops;

#endif
