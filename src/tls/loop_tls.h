/* loop_tls.h — TLS as a loop (loop.h) over another loop: the stream layer
 * between TCP and HTTP.  An application (the HTTP server) that runs on the
 * loop loop_tls_create() returns speaks plaintext through the very same
 * API, and never sees a record; every connection it accepts there is a
 * TLS server connection on the inner loop (kernel sockets or skiff's own
 * stack, the same code).
 *
 * What it keeps per connection (struct tls_sock in loop_tls.c): the
 * engine's state, whose record buffers (in and out) come from a pool and go
 * back to it as soon as they are empty; and no plaintext copies (reads
 * decrypt into the caller's buffer; a write is sealed at once, one record
 * per call up to 16 KiB, straight into the engine's out buffer, which is
 * sent from where it lies).  Input is bounded:
 * at most TLS_IN_MAX bytes of records wait unopened before the layer stops
 * reading the inner socket, until the application reads.
 *
 * ALPN: loop_alpn (loop.h) names what a connection's handshake agreed
 * ("h2", "http/1.1" or NULL; tls_engine.h's alpn op), so the application
 * on this loop may ask it before its first read, which gives no byte
 * before the handshake is done.  What the engine offers is its
 * context's (tls_server_opts.alpn_h2).
 *
 * The handshake has its own deadline (handshake_timeout_ns): a client that
 * stalls it gets LOOP_EV_ERROR, then -SK_ETIMEDOUT from read; one that
 * ends its side (TCP FIN) before the handshake finished gets the error at
 * once (counted in tls.handshake_failed).  close_notify
 * goes out on loop_shutdown (and before a close that had not shut down);
 * the peer's ends the stream (read returns 0).  A TCP end without
 * close_notify also reads as 0, counted apart.
 *
 * Counters (loop_stats: the layer's own; the inner loop prints its own): tls.handshakes,
 * tls.resumed, tls.handshake_failed, tls.handshake_timeouts,
 * tls.protocol_errors, tls.close_notify_rx, tls.eof_no_close_notify,
 * tls.records_out_bytes, tls.writes_blocked, tls.kicks (loop_tls.c: events the
 * inner socket did not make), tls.orphans, tls.orphans_lost,
 * tls.conn_alloc_failed, tls.alpn_h2 and tls.alpn_http11 (handshakes
 * that agreed each; the rest agreed none).
 *
 * One thread, as every loop: the layer and the inner loop run on the
 * inner loop's thread. */
#ifndef TLS_LOOP_TLS_H
#define TLS_LOOP_TLS_H

#include "../loop/loop.h"
#include "tls_engine.h"

#define TLS_IN_MAX (64u << 10)  /* unopened records before reading pauses */
#define TLS_OUT_MAX (64u << 10) /* unsent records before writes say EAGAIN */

struct loop_tls_config {
	const struct tls_engine_ops *engine;
	struct tls_ctx *ctx;
	sk_time_ns handshake_timeout_ns; /* 0: 10 s */
};

/* A TLS loop over `inner` (not owned: destroy the TLS loop first, then
 * the inner one).  NULL and a message in err on failure. */
struct loop *loop_tls_create(struct loop *inner, const struct loop_tls_config *cfg, char *err,
			     size_t errlen);

/* The same over memory the caller gives (the unikernel has no heap):
 * a socket table for socket numbers below max_socks and at most
 * max_conns TLS connections at once (one more is refused and counted,
 * tls.conn_alloc_failed).  loop_tls_mem_size says how much; mem is
 * 16-byte aligned.  NULL on bad arguments.  Compiled with
 * -DLOOP_TLS_FIXED (mk/unikernel.mk) this is the only constructor and
 * the file needs no C library beyond memset/memcpy. */
size_t loop_tls_mem_size(size_t max_socks, size_t max_conns);
struct loop *loop_tls_init(void *mem, size_t size, struct loop *inner,
			   const struct loop_tls_config *cfg, size_t max_socks, size_t max_conns);

#endif
