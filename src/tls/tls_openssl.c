/* tls_openssl.c — the hosted TLS engine (tls_engine.h) on OpenSSL 3, the
 * library nginx uses, so a comparison with nginx is one of everything
 * around the cryptography.  OpenSSL never sees a socket: each connection
 * has two memory BIOs, records in and records out, and the stream layer
 * (loop_tls.c) moves bytes between them and the loop.
 *
 * Settings, fixed here rather than options, as the issue asks: TLS 1.2 and
 * 1.3; AES-128/256-GCM and ChaCha20-Poly1305 only; X25519, then P-256;
 * the server's order of preference; ALPN http/1.1; no renegotiation and no
 * compression; session tickets (one per TLS 1.3 handshake) and the
 * server-side session cache for resumption by ID.  SSL_MODE_RELEASE_BUFFERS
 * gives the record buffers back while a connection is idle, so an idle
 * keep-alive connection holds its SSL state, not 32 KiB of buffers. */
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/sk_err.h"
#include "tls_engine.h"

struct tls_ctx {
	SSL_CTX *ssl;
};

struct tls_conn {
	SSL *ssl;
	BIO *rbio, *wbio; /* owned by ssl */
	int err;          /* enum tls_status of the last failure */
};

static const char tls12_ciphers[] = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
				    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
				    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
static const char tls13_suites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
				   "TLS_CHACHA20_POLY1305_SHA256";

/* ALPN: http/1.1 when the client offers it; a client that offers only
 * others (h2) gets no ALPN and may go on with HTTP/1.1 or leave. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	static const unsigned char want[] = "\x08http/1.1";
	unsigned char *o = NULL;
	if (SSL_select_next_proto(&o, outlen, want, sizeof(want) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

static void ssl_err(char *err, size_t errlen, const char *what, const char *file)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";
	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(err, errlen, "%s%s%s: %s", what, file ? " " : "", file ? file : "",
		 e ? buf : "failed");
	ERR_clear_error();
}

struct tls_ctx *tls_openssl_server(const char *cert_file, const char *key_file, char *err,
				   size_t errlen)
{
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	SSL_CTX *c = t->ssl = SSL_CTX_new(TLS_server_method());
	if (!c) {
		ssl_err(err, errlen, "tls: SSL_CTX_new", NULL);
		free(t);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION);
	SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				       SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_set_cipher_list(c, tls12_ciphers) != 1 ||
	    SSL_CTX_set_ciphersuites(c, tls13_suites) != 1 ||
	    SSL_CTX_set1_groups_list(c, "X25519:P-256") != 1) {
		ssl_err(err, errlen, "tls: cipher settings", NULL);
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(c, cert_file) != 1) {
		ssl_err(err, errlen, "tls: certificate", cert_file);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(c, key_file, SSL_FILETYPE_PEM) != 1) {
		ssl_err(err, errlen, "tls: private key", key_file);
		goto fail;
	}
	if (SSL_CTX_check_private_key(c) != 1) {
		ssl_err(err, errlen, "tls: the key does not match the certificate", key_file);
		goto fail;
	}
	SSL_CTX_set_alpn_select_cb(c, alpn_select, NULL);
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER);
	SSL_CTX_set_session_id_context(c, (const unsigned char *)"skiff", 5);
	SSL_CTX_set_num_tickets(c, 1);
	return t;
fail:
	SSL_CTX_free(c);
	free(t);
	return NULL;
}

void tls_openssl_free(struct tls_ctx *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ssl);
	free(t);
}

static struct tls_conn *o_conn_new(struct tls_ctx *t)
{
	struct tls_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ssl = SSL_new(t->ssl);
	c->rbio = BIO_new(BIO_s_mem());
	c->wbio = BIO_new(BIO_s_mem());
	if (!c->ssl || !c->rbio || !c->wbio) {
		SSL_free(c->ssl);
		BIO_free(c->rbio);
		BIO_free(c->wbio);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	/* An empty input BIO means "more later", never end of file. */
	BIO_set_mem_eof_return(c->rbio, -1);
	BIO_set_mem_eof_return(c->wbio, -1);
	SSL_set_bio(c->ssl, c->rbio, c->wbio);
	SSL_set_accept_state(c->ssl);
	return c;
}

static void o_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl); /* and both BIOs */
	free(c);
}

static long o_records_in(struct tls_conn *c, const void *buf, size_t len)
{
	if (len > INT_MAX)
		len = INT_MAX;
	int n = BIO_write(c->rbio, buf, (int)len);
	return n < 0 ? -SK_ENOMEM : n;
}

/* Why a call failed: a failure before the handshake finished is the
 * handshake's (garbage, a hello we refuse); after, the record layer's. */
static int o_fail(struct tls_conn *c)
{
	c->err = SSL_is_init_finished(c->ssl) ? TLS_ERR_PROTOCOL : TLS_ERR_HANDSHAKE;
	ERR_clear_error();
	return c->err;
}

static int o_step(struct tls_conn *c)
{
	if (c->err)
		return c->err;
	if (SSL_is_init_finished(c->ssl))
		return TLS_OK;
	int r = SSL_do_handshake(c->ssl);
	if (r == 1)
		return TLS_OK;
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return TLS_OK;
	return o_fail(c);
}

static bool o_handshake_done(const struct tls_conn *c)
{
	return SSL_is_init_finished(c->ssl) && !c->err;
}

static long o_read(struct tls_conn *c, void *buf, size_t len)
{
	if (c->err)
		return -SK_ECONNRESET;
	if (len > INT_MAX)
		len = INT_MAX;
	int r = SSL_read(c->ssl, buf, (int)len);
	if (r > 0)
		return r;
	switch (SSL_get_error(c->ssl, r)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return -SK_EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return 0; /* close_notify */
	default:
		o_fail(c);
		return -SK_ECONNRESET;
	}
}

static long o_write(struct tls_conn *c, const void *buf, size_t len)
{
	if (c->err)
		return -SK_ECONNRESET;
	if (len > TLS_MAX_WRITE)
		len = TLS_MAX_WRITE;
	if (len == 0)
		return 0;
	int r = SSL_write(c->ssl, buf, (int)len);
	if (r > 0)
		return r;
	int e = SSL_get_error(c->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return -SK_EAGAIN;
	o_fail(c);
	return -SK_ECONNRESET;
}

static size_t o_pending_out(const struct tls_conn *c)
{
	return BIO_ctrl_pending(c->wbio);
}

static size_t o_records_out(struct tls_conn *c, void *buf, size_t cap)
{
	if (cap > INT_MAX)
		cap = INT_MAX;
	int n = BIO_read(c->wbio, buf, (int)cap);
	return n > 0 ? (size_t)n : 0;
}

static size_t o_pending_in(const struct tls_conn *c)
{
	return BIO_ctrl_pending(c->rbio);
}

static void o_close_notify(struct tls_conn *c)
{
	if (!c->err && SSL_is_init_finished(c->ssl))
		SSL_shutdown(c->ssl); /* the first call queues our close_notify */
	ERR_clear_error();
}

static int o_error(const struct tls_conn *c)
{
	return c->err;
}

static bool o_resumed(const struct tls_conn *c)
{
	return SSL_session_reused(c->ssl) == 1;
}

static const char *o_version(const struct tls_conn *c)
{
	return SSL_get_version(c->ssl);
}

const struct tls_engine_ops tls_openssl_ops = {
	.name = "openssl",
	.conn_new = o_conn_new,
	.conn_free = o_conn_free,
	.records_in = o_records_in,
	.step = o_step,
	.handshake_done = o_handshake_done,
	.read = o_read,
	.write = o_write,
	.pending_out = o_pending_out,
	.records_out = o_records_out,
	.pending_in = o_pending_in,
	.close_notify = o_close_notify,
	.error = o_error,
	.resumed = o_resumed,
	.version = o_version,
};
