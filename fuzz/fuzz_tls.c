/* fuzz_tls.c — the TLS record path (tls/tls_engine.h, the OpenSSL engine;
 * fuzz_tls_gnutls.c includes this file for the GnuTLS one) on arbitrary
 * client bytes: what a client sends to port 443 is the first
 * thing anyone on the internet can reach.  Input: [cuts][bytes...]; the
 * bytes reach a fresh server connection in pieces whose sizes come from
 * `cuts` (so records split across reads are explored), each piece
 * followed by the layer's own sequence: records_in, step, read until it
 * stops, out_peek/out_consume until empty (in parts).  Checks: lengths
 * returned are within what was asked, and the records are readable.
 * The certificate and key are made at start (tls/tls_testcert.h): no key
 * is kept.  Build: make build/fuzz/fuzz_tls. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sk_err.h"
#include "tls/tls_engine.h"
#include "tls/tls_host.h"
#include "tls/tls_testcert.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The engine (tls/tls_host.h); NULL: the default, OpenSSL. */
#ifndef FUZZ_TLS_ENGINE
#define FUZZ_TLS_ENGINE NULL
#endif

static struct tls_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tls_testcert_engine = FUZZ_TLS_ENGINE;
	/* h2 offered, as a server speaking HTTP/2 will: the ClientHello's
	 * ALPN list goes through the whole choice (tls_alpn.h). */
	static const struct tls_server_opts so = {.alpn_h2 = true};
	ctx = tls_testcert_server(&so);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t cuts = data[0];
	data++;
	size--;
	const struct tls_engine_ops *e = tls_host_ops(ctx);
	struct tls_conn *c = e->conn_new(ctx);
	CHECK(c);
	static uint8_t buf[1 << 15];
	size_t off = 0;
	unsigned turn = 0;
	while (off < size) {
		/* Piece sizes 1..256, varied by the cut byte and the turn. */
		size_t piece = ((size_t)((cuts * (turn + 1)) & 0xff)) + 1;
		if (piece > size - off)
			piece = size - off;
		turn++;
		CHECK(e->records_in(c, data + off, piece) == (long)piece);
		off += piece;
		int st = e->step(c);
		/* ALPN: nothing before the handshake is done, then one of ours */
		const char *alpn = e->alpn(c);
		CHECK(!alpn || (e->handshake_done(c) &&
				(!strcmp(alpn, "h2") || !strcmp(alpn, "http/1.1"))));
		long r;
		while ((r = e->read(c, buf, sizeof(buf))) > 0)
			CHECK((size_t)r <= sizeof(buf));
		const uint8_t *p;
		for (size_t n = e->out_peek(c, &p); n; n = e->out_peek(c, &p)) {
			CHECK(p != NULL);
			memcpy(buf, p, n < sizeof(buf) ? n : sizeof(buf)); /* ASan: all readable */
			e->out_consume(c, n < 700 ? n : 700); /* partial sends too */
		}
		if (st != TLS_OK || (r < 0 && r != -SK_EAGAIN))
			break; /* as the layer does: the connection ends */
	}
	e->close_notify(c);
	const uint8_t *p;
	for (size_t n = e->out_peek(c, &p); n; n = e->out_peek(c, &p))
		e->out_consume(c, n);
	e->conn_free(c);
	return 0;
}
