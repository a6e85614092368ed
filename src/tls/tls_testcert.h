/* tls_testcert.h — a server context on a key and a self-signed certificate
 * made now, in memory, for the TLS unit tests, the fuzz target and the
 * micro-benchmark: no key is ever kept or committed.  ECDSA P-256, CN
 * "skiff-test", valid for a day.  The PEM files the engine loads are
 * written to temporary files and removed at once; an engine that takes
 * PEM bytes (BearSSL) gets them in memory (tls_testcert_pem).  Exits on
 * failure (these are tests, and nothing can go on without it). */
#ifndef TLS_TLS_TESTCERT_H
#define TLS_TLS_TESTCERT_H

#include "tls_engine.h"

#include <openssl/ssl.h>

/* The engine tls_testcert_server makes the context with (tls_host.h:
 * "openssl", "gnutls"; NULL: the default).  The pair below drives
 * whichever engine made the context. */
extern const char *tls_testcert_engine;
struct tls_ctx *tls_testcert_server(const struct tls_server_opts *o);
/* A new key and a certificate for CN cn, written to two temporary files
 * whose names are put in cert and key (the caller unlinks them). */
void tls_testcert_files(const char *cn, char cert[32], char key[32]);
/* The same in memory: a new key (ECDSA P-256, or RSA 2048 with rsa) and a
 * certificate for CN cn, as PEM text, each NUL-terminated and its length
 * beside it (tls_bearssl_server's arguments). */
struct tls_testpem {
	char cert[8192], key[8192];
	size_t cert_len, key_len;
};
void tls_testcert_pem(struct tls_testpem *p, const char *cn, bool rsa);
/* tls_host_reload onto a new key and certificate made the same way. */
int tls_testcert_reload(struct tls_ctx *t, char *err, size_t errlen);

/* An OpenSSL client context for TLS `version` (TLS1_2_VERSION or
 * TLS1_3_VERSION), no certificate checks (the certificate is made up). */
SSL_CTX *tls_testcert_client(int version);

/* One client (OpenSSL on memory BIOs) against one server connection of
 * the engine, in this process.  `clock` (may be NULL) times the server
 * engine's calls only, into server_cycles. */
struct tls_testpair {
	const struct tls_engine_ops *e; /* the server context's engine */
	SSL *cl;
	BIO *c_in, *c_out; /* the client's: records to it, records from it */
	struct tls_conn *sv;
	uint64_t (*clock)(void);
	uint64_t server_cycles;
};
void tls_testpair_new(struct tls_testpair *p, SSL_CTX *cctx, struct tls_ctx *sctx,
		      SSL_SESSION *sess, uint64_t (*clock)(void));
void tls_testpair_free(struct tls_testpair *p);
/* The client's records into the server (and, with app, the server reads
 * what they carry); the server's records to the client. */
void tls_testpair_to_server(struct tls_testpair *p, bool app);
void tls_testpair_to_client(struct tls_testpair *p);
/* Both sides through the handshake; false if it did not finish. */
bool tls_testpair_handshake(struct tls_testpair *p);
/* A byte from the server (so the client reads the ticket sent before it),
 * then the client's session, for resumption. */
SSL_SESSION *tls_testpair_session(struct tls_testpair *p);
/* The client's session once it has read what the server sent so far,
 * the server writing no application data (a byte would carry along a
 * ticket queued for it): the tickets sent with the handshake alone. */
SSL_SESSION *tls_testpair_session_unasked(struct tls_testpair *p);
/* The SHA-256 of the certificate the client of p was shown. */
void tls_testpair_peer_fp(const struct tls_testpair *p, unsigned char fp[32]);
/* Data both ways on an established pair ("old" to the client, "still"
 * back); false if either did not arrive intact. */
bool tls_testpair_exchange(struct tls_testpair *p);
/* A connection naming `name` in its SNI (NULL: none): the CN of the
 * certificate it was shown, into cn (n bytes); false unless the handshake
 * and an exchange on it succeeded. */
bool tls_testpair_shown_cn(SSL_CTX *cctx, struct tls_ctx *sctx, const char *name, char *cn,
			   size_t n);
/* An --tls-sni entry: name, certificate and key files. */
struct tls_sni tls_testcert_sni(const char *name, const char *cert, const char *key);

#endif
