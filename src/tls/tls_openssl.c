/* tls_openssl.c — the hosted TLS engine (tls_engine.h) on OpenSSL 3, the
 * library nginx uses, so a comparison with nginx is one of everything
 * around the cryptography.  OpenSSL never sees a socket: each connection
 * has one BIO of our own (bio_*) over two buffers, records in and records
 * out, taken from the context's pool only while bytes wait in them; the
 * stream layer (loop_tls.c) fills the one from the socket and sends the
 * other straight from the buffer.
 *
 * Settings, fixed here rather than options, as the issue asks: TLS 1.2 and
 * 1.3; AES-128/256-GCM and ChaCha20-Poly1305 only; X25519, then P-256;
 * the server's order of preference; ALPN http/1.1, h2 before it when the
 * context was made with alpn_h2 (tls_alpn.h); no renegotiation and no
 * compression; session tickets (one per TLS 1.3 handshake) and the
 * server-side session cache for resumption by ID.  SSL_MODE_RELEASE_BUFFERS
 * gives OpenSSL's own record buffers back while a connection is idle, and
 * ours go back to the pool when empty, so an idle keep-alive connection
 * holds its SSL state, not 32 KiB of buffers.
 *
 * SNI: each certificate given by name has an SSL_CTX of its own, built as
 * the default one; the default's servername callback moves a connection
 * that asks for that name onto it (SSL_set_SSL_CTX) while the ClientHello
 * is read.  Sessions (the ID cache, the ticket keys) stay the default
 * context's, whichever certificate a connection got.
 *
 * A session resumes under the name it was made under only (RFC 6066 3
 * for TLS 1.2, RFC 8446 4.2.11 and 4.6.1 for 1.3): resuming skips the
 * certificate, so a session made for b.test offered with the name a.test
 * would reach a.test on b.test's authentication.  OpenSSL decides on
 * resumption before its servername callback runs (and in TLS 1.2 then
 * reports the session's name, not the one asked for), so the client-hello
 * callback (name_bind) reads the name itself and makes it the
 * connection's session ID context, which OpenSSL keeps in each session
 * and compares before it resumes one found by its ID or from a TLS 1.3
 * ticket; every ticket also carries it as its application data
 * (ticket_gen), which ticket_dec compares, for TLS 1.2 tickets too.  One
 * made under another name: a full handshake instead, with a.test's
 * certificate, counted as tls.resume_refused_name. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../base/sk_err.h"
#include "tls_alpn.h"
#include "tls_buf.h"
#include "tls_engine.h"
#include "tls_sni.h"

/* A session-ticket key: its name (in the ticket, to find it again), the
 * AES-256-CBC key that seals the ticket, the HMAC-SHA256 key over it. */
struct ticket_key {
	unsigned char name[16];
	unsigned char aes[32];
	unsigned char hmac[32];
};

/* One certificate by name: the name (lower case) and the files, kept to
 * load them again on reload, and its current SSL_CTX. */
struct sni_cert {
	char *name, *cert, *key;
	SSL_CTX *ssl;
};

struct tls_ctx {
	struct tls_ctx_head head; /* first: tls_host.h */
	/* The current generation: new connections are made from it.  A
	 * reload replaces it; connections made before keep the one they were
	 * made from (OpenSSL's reference count on SSL_CTX, tls_openssl_reload). */
	SSL_CTX *ssl;
	BIO_METHOD *meth;
	/* keys[0] seals new tickets; keys[1] (while have_prev) still opens
	 * the tickets sealed in the period before.  Rotated lazily, when a
	 * ticket is sealed or opened, by the monotonic clock. */
	struct ticket_key keys[2];
	bool have_prev;
	uint64_t rotate_ns, rotated_at;
	uint64_t rotations, sealed, opened, renewed, unknown;
	uint64_t reloads, reload_failures; /* tls_openssl_reload */
	struct sni_cert sni[TLS_SNI_MAX];
	char *sni_names[TLS_SNI_MAX]; /* sni[i].name, for tls_sni_pick */
	unsigned nsni;
	uint64_t sni_matched, sni_default;
	uint64_t refused_name; /* tickets made under another name (ticket_dec) */
	/* kTLS (see ktls_kernel): the kernel offers the tls ULP; handshakes
	 * after which OpenSSL sends through it, and those where it does not. */
	bool ktls_kernel;
	uint64_t ktls_tx, ktls_fallback;
	bool alpn_h2; /* tls_server_opts.alpn_h2, for every generation's alpn_select */
	struct tls_pool pool;
};

struct tls_conn {
	SSL *ssl;
	BIO *bio;       /* ours, both directions, owned by ssl */
	struct tls_ctx *ctx;
	struct tls_buf in, out;
	int err;        /* enum tls_status of the last failure */
	/* The session ID context name_bind set: SHA-256 of the name asked
	 * for, or SID_NONAME; sid_len 0 before the ClientHello. */
	unsigned char sid[SSL_MAX_SID_CTX_LENGTH];
	unsigned sid_len;
};

/* The session ID context of every SSL_CTX, and of a connection that asks
 * for no name (as before names were bound: sessions made then resume). */
static const unsigned char SID_NONAME[] = "skiff";

/* ---- the BIO: OpenSSL reads records from c->in, writes them to c->out ---- */

static int bio_write(BIO *b, const char *d, int n)
{
	struct tls_conn *c = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	if (n <= 0)
		return 0;
	return tls_buf_append(&c->ctx->pool, &c->out, d, (size_t)n) == 0 ? n : -1;
}

static int bio_read(BIO *b, char *d, int n)
{
	struct tls_conn *c = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	size_t have = c->in.len - c->in.off;
	if (have == 0) {
		BIO_set_retry_read(b); /* more later: never end of file */
		return -1;
	}
	size_t k = have < (size_t)n ? have : (size_t)n;
	memcpy(d, c->in.p + c->in.off, k);
	tls_buf_consume(&c->ctx->pool, &c->in, k);
	return (int)k;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	(void)ptr;
	struct tls_conn *c = BIO_get_data(b);
	switch (cmd) {
	case BIO_CTRL_FLUSH: return 1;
	case BIO_CTRL_PENDING: return c ? (long)(c->in.len - c->in.off) : 0;
	case BIO_CTRL_WPENDING: return c ? (long)(c->out.len - c->out.off) : 0;
	default: return 0;
	}
}

static int bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static int bio_destroy(BIO *b)
{
	BIO_set_data(b, NULL); /* the buffers belong to the connection */
	return 1;
}

static const char tls12_ciphers[] = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
				    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
				    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
static const char tls13_suites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
				   "TLS_CHACHA20_POLY1305_SHA256";

/* ALPN (tls_alpn.h): h2 (with alpn_h2), then http/1.1; a client that
 * offers neither gets no ALPN and may go on with HTTP/1.1 or leave.  arg
 * is the tls_ctx, whichever generation or SNI certificate the connection
 * is on. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl;
	const struct tls_ctx *t = arg;
	const uint8_t *p = tls_alpn_pick(in, inlen, t->alpn_h2, outlen);
	if (!p)
		return SSL_TLSEXT_ERR_NOACK;
	*out = p;
	return SSL_TLSEXT_ERR_OK;
}

/* ---- session tickets under rotating keys ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool key_new(struct ticket_key *k)
{
	return RAND_bytes(k->name, sizeof(k->name)) == 1 && RAND_bytes(k->aes, sizeof(k->aes)) == 1 &&
	       RAND_bytes(k->hmac, sizeof(k->hmac)) == 1;
}

static void rotate(struct tls_ctx *t, unsigned periods)
{
	if (periods >= 2) { /* idle for two periods: the old key is too old too */
		OPENSSL_cleanse(&t->keys[1], sizeof(t->keys[1]));
		t->have_prev = false;
	} else {
		t->keys[1] = t->keys[0];
		t->have_prev = true;
	}
	if (!key_new(&t->keys[0]))
		abort(); /* no randomness: sealing tickets with a known key would be worse */
	t->rotations++;
}

static void rotate_due(struct tls_ctx *t)
{
	uint64_t now = mono_ns(), gone = now - t->rotated_at;
	if (gone < t->rotate_ns)
		return;
	uint64_t periods = gone / t->rotate_ns;
	rotate(t, periods >= 2 ? 2 : 1);
	t->rotated_at += periods * t->rotate_ns;
}

void tls_openssl_rotate(struct tls_ctx *t)
{
	rotate(t, 1);
	t->rotated_at = mono_ns();
}

static int hmac_key(EVP_MAC_CTX *h, unsigned char *key)
{
	static char digest[] = "SHA256";
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key, 32),
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
		OSSL_PARAM_construct_end(),
	};
	return EVP_MAC_CTX_set_params(h, p);
}

/* OpenSSL's ticket callback: 1 sealed/opened, 2 opened and to be replaced
 * (OpenSSL then issues a new ticket: under TLS 1.3 always, under 1.2 when
 * it was sealed with the old key), 0 no such key (a full handshake), -1
 * failure. */
static int ticket_cb(SSL *s, unsigned char name[16], unsigned char *iv, EVP_CIPHER_CTX *cctx,
		     EVP_MAC_CTX *hctx, int enc)
{
	struct tls_ctx *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
	rotate_due(t);
	if (enc) {
		const struct ticket_key *k = &t->keys[0];
		memcpy(name, k->name, sizeof(k->name));
		if (RAND_bytes(iv, 16) != 1 ||
		    EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1 ||
		    hmac_key(hctx, t->keys[0].hmac) != 1)
			return -1;
		t->sealed++;
		return 1;
	}
	for (int i = 0; i < (t->have_prev ? 2 : 1); i++) {
		struct ticket_key *k = &t->keys[i];
		if (memcmp(name, k->name, sizeof(k->name)) != 0)
			continue;
		if (EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1 ||
		    hmac_key(hctx, k->hmac) != 1)
			return -1;
		t->opened++;
		if (i == 1)
			t->renewed++;
		/* TLS 1.3: 2 for every ticket, so that each resumed handshake
		 * ends with a new ticket.  With 1, OpenSSL 3.0 sends none
		 * after a resumption made through this callback (nginx, on
		 * OpenSSL's own keys, does send one), and a client that uses each ticket once
		 * (RFC 8446 C.4, as browsers do) or that never sends on the
		 * connection (a preconnect: a ticket that waits for the first
		 * response never comes) falls back to a full handshake next
		 * time.  TLS 1.2 keeps its ticket unless its key is the old
		 * one. */
		return i == 0 && SSL_version(s) != TLS1_3_VERSION ? 1 : 2;
	}
	t->unknown++;
	return 0;
}

void tls_openssl_stats(const struct tls_ctx *t,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg)
{
	fn(arg, "tls.ticket_rotations", t->rotations);
	fn(arg, "tls.tickets_sealed", t->sealed);
	fn(arg, "tls.tickets_opened", t->opened);
	fn(arg, "tls.tickets_renewed", t->renewed);
	fn(arg, "tls.tickets_unknown", t->unknown);
	fn(arg, "tls.reloads", t->reloads);
	fn(arg, "tls.reload_failures", t->reload_failures);
	fn(arg, "tls.ktls_kernel", t->ktls_kernel);
	fn(arg, "tls.ktls_tx", t->ktls_tx);
	fn(arg, "tls.ktls_fallback", t->ktls_fallback);
	if (t->nsni) {
		fn(arg, "tls.sni_matched", t->sni_matched);
		fn(arg, "tls.sni_default", t->sni_default);
		fn(arg, "tls.resume_refused_name", t->refused_name);
	}
}

/* ---- SNI ---- */

/* First thing once the ClientHello is in, before OpenSSL looks for the
 * session to resume: the session ID context for the name asked for
 * (lower case), SHA-256("skiff sni " name) (tls_sni_bind_text), so that
 * only a session made under the same name resumes (the top of this file).
 * No name: "skiff".  A server_name OpenSSL would refuse (malformed, or a
 * name over 255 bytes) gets a context no session has; the handshake fails
 * at OpenSSL's own check. */
static int name_bind(SSL *s, int *alert, void *arg)
{
	(void)arg;
	struct tls_conn *c = SSL_get_app_data(s);
	const unsigned char *ext, *name = NULL;
	size_t n;
	long len = 0;
	if (SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &ext, &n) == 1)
		len = tls_sni_from_ext(ext, n, &name);
	unsigned char sid[SSL_MAX_SID_CTX_LENGTH];
	unsigned sid_len = sizeof(SID_NONAME) - 1;
	memcpy(sid, SID_NONAME, sid_len);
	char text[TLS_SNI_BIND_MAX];
	/* A malformed extension (len -1) gives the tag with its NUL and no
	 * name: a context no name gives (tls_sni_bind_text). */
	size_t tn = len != 0 ? tls_sni_bind_text(text, name, len) : 0;
	if (tn && (EVP_Digest(text, tn, sid, &sid_len, EVP_sha256(), NULL) != 1 ||
		   sid_len > sizeof(sid))) {
		*alert = SSL_AD_INTERNAL_ERROR;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (SSL_set_session_id_context(s, sid, sid_len) != 1) {
		*alert = SSL_AD_INTERNAL_ERROR;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (c) {
		memcpy(c->sid, sid, sid_len);
		c->sid_len = sid_len;
	}
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* A ticket about to be sealed: the name's context (name_bind) goes into
 * it as the ticket's application data.  OpenSSL compares the session ID
 * context of a TLS 1.3 ticket (and of a session found by its ID), but a
 * TLS 1.2 ticket's comes back empty (measured, OpenSSL 3.0), so
 * ticket_dec compares this instead, for both versions. */
static int ticket_gen(SSL *s, void *arg)
{
	(void)arg;
	const struct tls_conn *c = SSL_get_app_data(s);
	SSL_SESSION *ss = SSL_get_session(s);
	return c && ss && SSL_SESSION_set1_ticket_appdata(ss, c->sid, c->sid_len) == 1;
}

/* A ticket opened (ticket_cb's keys): OpenSSL's own answer, except that
 * one made under another name (its application data is not this
 * connection's session ID context: ticket_gen) is refused and counted,
 * a full handshake and a new ticket. */
static SSL_TICKET_RETURN ticket_dec(SSL *s, SSL_SESSION *ss, const unsigned char *keyname,
				    size_t keyname_len, SSL_TICKET_STATUS st, void *arg)
{
	(void)keyname;
	(void)keyname_len;
	struct tls_ctx *t = arg;
	const struct tls_conn *c = SSL_get_app_data(s);
	switch (st) {
	case SSL_TICKET_SUCCESS:
	case SSL_TICKET_SUCCESS_RENEW: {
		void *id = NULL;
		size_t len = 0;
		if (!c || !c->sid_len || !ss || SSL_SESSION_get0_ticket_appdata(ss, &id, &len) != 1 ||
		    len != c->sid_len || memcmp(id, c->sid, len) != 0) {
			t->refused_name++;
			return SSL_TICKET_RETURN_IGNORE_RENEW;
		}
		return st == SSL_TICKET_SUCCESS ? SSL_TICKET_RETURN_USE : SSL_TICKET_RETURN_USE_RENEW;
	}
	case SSL_TICKET_EMPTY:
	case SSL_TICKET_NO_DECRYPT: return SSL_TICKET_RETURN_IGNORE_RENEW;
	default: return SSL_TICKET_RETURN_ABORT;
	}
}

/* While the ClientHello is read: the certificate the name asks for. */
static int sni_cb(SSL *s, int *alert, void *arg)
{
	(void)alert;
	struct tls_ctx *t = arg;
	const char *name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
	int i = name ? tls_sni_pick(t->sni_names, t->nsni, name) : -1;
	struct sni_cert *e = i >= 0 ? &t->sni[i] : NULL;
	if (!e) {
		t->sni_default++;
		return SSL_TLSEXT_ERR_NOACK; /* the default certificate */
	}
	if (SSL_set_SSL_CTX(s, e->ssl) != e->ssl)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	t->sni_matched++;
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

/* One SSL_CTX: the settings above, the certificate chain and the key.
 * Built for the start and again for each reload; NULL with a message in
 * err if the files do not load or do not match. */
static SSL_CTX *ssl_ctx_build(struct tls_ctx *t, const char *cert_file, const char *key_file,
			      char *err, size_t errlen)
{
	SSL_CTX *c = SSL_CTX_new(TLS_server_method());
	if (!c) {
		ssl_err(err, errlen, "tls: SSL_CTX_new", NULL);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION);
	SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				       SSL_OP_NO_COMPRESSION);
	/* kTLS where the kernel has it (every suite above is one kTLS
	 * takes: AES-GCM and ChaCha20-Poly1305; their order is not changed
	 * for it).  OpenSSL then tries, at each key change, to hand the
	 * keys to the write BIO (BIO_set_ktls); o_step counts whether it
	 * took.  It cannot take with this engine's own BIO (bio_ctrl declines
	 * BIO_CTRL_SET_KTLS): that needs OpenSSL writing to the socket itself
	 * (docs/tls.md), so today every connection counts as a fallback. */
	if (t->ktls_kernel)
		SSL_CTX_set_options(c, SSL_OP_ENABLE_KTLS);
	/* NO_AUTO_CHAIN: the chain sent is the one in the certificate file,
	 * as given; without it OpenSSL tries, on every handshake, to complete
	 * the chain from a trust store we never load (bench_tls, 5 alternating
	 * runs: median full handshake 1.29 -> 1.20 M cycles, within the noise
	 * of this machine). */
	SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_NO_AUTO_CHAIN);
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
	SSL_CTX_set_alpn_select_cb(c, alpn_select, t);
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER);
	SSL_CTX_set_session_id_context(c, SID_NONAME, sizeof(SID_NONAME) - 1);
	SSL_CTX_set_num_tickets(c, 1);
	/* Every generation's callback finds the one tls_ctx (its keys and
	 * counters), whichever SSL_CTX a connection was made from. */
	SSL_CTX_set_app_data(c, t);
	if (SSL_CTX_set_tlsext_ticket_key_evp_cb(c, ticket_cb) != 1) {
		ssl_err(err, errlen, "tls: ticket key callback", NULL);
		goto fail;
	}
	if (t->nsni) {
		SSL_CTX_set_tlsext_servername_callback(c, sni_cb);
		SSL_CTX_set_tlsext_servername_arg(c, t);
		/* sessions bound to the name (the top of this file) */
		SSL_CTX_set_client_hello_cb(c, name_bind, t);
		if (SSL_CTX_set_session_ticket_cb(c, ticket_gen, ticket_dec, t) != 1) {
			ssl_err(err, errlen, "tls: ticket callback", NULL);
			goto fail;
		}
	}
	return c;
fail:
	SSL_CTX_free(c);
	return NULL;
}

/* Does the kernel have kTLS (the tcp "tls" upper-layer protocol)?  Asked
 * as OpenSSL's socket BIO would set it up: TCP_ULP "tls" on a TCP socket,
 * which loads the module if it can; on an unconnected socket a kernel
 * with it says ENOTCONN, one without ENOENT.  (tcp_available_ulp lists
 * only the modules loaded so far.) */
static bool ktls_kernel(void)
{
#ifdef TCP_ULP
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	int r = setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls"));
	int e = errno;
	close(fd);
	return r == 0 || e == ENOTCONN;
#else
	return false;
#endif
}

struct tls_ctx *tls_openssl_server(const char *cert_file, const char *key_file,
				   const struct tls_server_opts *o, char *err, size_t errlen)
{
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	t->head.ops = &tls_openssl_ops;
	t->ktls_kernel = ktls_kernel();
	t->alpn_h2 = o && o->alpn_h2;
	t->meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "skiff");
	if (!t->meth || BIO_meth_set_write(t->meth, bio_write) != 1 ||
	    BIO_meth_set_read(t->meth, bio_read) != 1 || BIO_meth_set_ctrl(t->meth, bio_ctrl) != 1 ||
	    BIO_meth_set_create(t->meth, bio_create) != 1 ||
	    BIO_meth_set_destroy(t->meth, bio_destroy) != 1) {
		ssl_err(err, errlen, "tls: BIO_meth_new", NULL);
		goto fail;
	}
	t->rotate_ns = (uint64_t)(o && o->ticket_rotate_s ? o->ticket_rotate_s : 3600) * 1000000000ull;
	t->rotated_at = mono_ns();
	if (!key_new(&t->keys[0])) {
		ssl_err(err, errlen, "tls: no randomness for the ticket key", NULL);
		goto fail;
	}
	if (o && o->nsni > TLS_SNI_MAX) {
		snprintf(err, errlen, "tls: at most %u certificates by name", TLS_SNI_MAX);
		goto fail;
	}
	for (unsigned i = 0; o && i < o->nsni; i++) {
		struct sni_cert *e = &t->sni[t->nsni++];
		e->name = strndup(o->sni[i].name, o->sni[i].name_len);
		e->cert = strndup(o->sni[i].cert, o->sni[i].cert_len);
		e->key = strdup(o->sni[i].key);
		if (!e->name || !e->cert || !e->key) {
			snprintf(err, errlen, "tls: out of memory");
			goto fail;
		}
		tls_sni_lower(e->name);
		t->sni_names[t->nsni - 1] = e->name;
		e->ssl = ssl_ctx_build(t, e->cert, e->key, err, errlen);
		if (!e->ssl)
			goto fail;
	}
	t->ssl = ssl_ctx_build(t, cert_file, key_file, err, errlen);
	if (!t->ssl)
		goto fail;
	return t;
fail:
	tls_openssl_free(t);
	return NULL;
}

int tls_openssl_reload(struct tls_ctx *t, const char *cert_file, const char *key_file, char *err,
		       size_t errlen)
{
	SSL_CTX *c = ssl_ctx_build(t, cert_file, key_file, err, errlen);
	SSL_CTX *by_name[TLS_SNI_MAX] = {0};
	for (unsigned i = 0; c && i < t->nsni; i++)
		if (!(by_name[i] = ssl_ctx_build(t, t->sni[i].cert, t->sni[i].key, err, errlen))) {
			for (unsigned j = 0; j < i; j++)
				SSL_CTX_free(by_name[j]);
			SSL_CTX_free(c);
			c = NULL;
		}
	if (!c) {
		t->reload_failures++;
		return -1;
	}
	for (unsigned i = 0; i < t->nsni; i++) { /* as the default one, below */
		SSL_CTX_free(t->sni[i].ssl);
		t->sni[i].ssl = by_name[i];
	}
	/* Our reference goes; each SSL made from the old SSL_CTX holds one of
	 * its own (SSL_new takes it, SSL_free drops it), so the old chain and
	 * key live exactly as long as the last connection that uses them. */
	SSL_CTX_free(t->ssl);
	t->ssl = c;
	/* A session resumed from a ticket skips the certificate: a client
	 * would go on trusting the old one.  New keys, no previous one: the
	 * next handshake of every client is a full one, with the new chain. */
	OPENSSL_cleanse(&t->keys[1], sizeof(t->keys[1]));
	t->have_prev = false;
	if (!key_new(&t->keys[0]))
		abort(); /* as in rotate() */
	t->rotated_at = mono_ns();
	t->reloads++;
	return 0;
}

void tls_openssl_free(struct tls_ctx *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ssl);
	for (unsigned i = 0; i < t->nsni; i++) {
		SSL_CTX_free(t->sni[i].ssl);
		free(t->sni[i].name);
		free(t->sni[i].cert);
		free(t->sni[i].key);
	}
	BIO_meth_free(t->meth);
	OPENSSL_cleanse(t->keys, sizeof(t->keys));
	tls_pool_drain(&t->pool);
	free(t);
}

static struct tls_conn *o_conn_new(struct tls_ctx *t)
{
	struct tls_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = t;
	c->ssl = SSL_new(t->ssl);
	c->bio = BIO_new(t->meth);
	if (!c->ssl || !c->bio) {
		SSL_free(c->ssl);
		BIO_free(c->bio);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	BIO_set_data(c->bio, c);
	SSL_set_app_data(c->ssl, c); /* name_bind, ticket_dec */
	SSL_set_bio(c->ssl, c->bio, c->bio); /* one BIO, one reference taken */
	SSL_set_accept_state(c->ssl);
	return c;
}

static void o_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl); /* and the BIO */
	tls_buf_release(&c->ctx->pool, &c->in);
	tls_buf_release(&c->ctx->pool, &c->out);
	free(c);
}

static long o_records_in(struct tls_conn *c, const void *buf, size_t len)
{
	if (len > INT_MAX)
		len = INT_MAX;
	return tls_buf_append(&c->ctx->pool, &c->in, buf, len) == 0 ? (long)len : -SK_ENOMEM;
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
	if (r == 1) {
		/* Did kTLS take (SSL_OP_ENABLE_KTLS, ktls_kernel)?  OpenSSL
		 * installs it on the write BIO at the application key change. */
		if (BIO_get_ktls_send(SSL_get_wbio(c->ssl)))
			c->ctx->ktls_tx++;
		else
			c->ctx->ktls_fallback++;
		return TLS_OK;
	}
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

static size_t o_out_peek(const struct tls_conn *c, const uint8_t **p)
{
	*p = c->out.p ? c->out.p + c->out.off : NULL;
	return c->out.len - c->out.off;
}

static void o_out_consume(struct tls_conn *c, size_t n)
{
	tls_buf_consume(&c->ctx->pool, &c->out, n);
}

static size_t o_pending_in(const struct tls_conn *c)
{
	return c->in.len - c->in.off;
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

static const char *o_alpn(const struct tls_conn *c)
{
	/* OpenSSL knows its choice once the ClientHello is read; the
	 * contract (tls_engine.h) names none before the handshake is done. */
	if (!o_handshake_done(c))
		return NULL;
	const unsigned char *p;
	unsigned n;
	SSL_get0_alpn_selected(c->ssl, &p, &n);
	return tls_alpn_name(p, n);
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
	.out_peek = o_out_peek,
	.out_consume = o_out_consume,
	.pending_in = o_pending_in,
	.close_notify = o_close_notify,
	.error = o_error,
	.resumed = o_resumed,
	.version = o_version,
	.alpn = o_alpn,
	.ctx_free = tls_openssl_free,
	.ctx_reload = tls_openssl_reload,
	.ctx_stats = tls_openssl_stats,
};
