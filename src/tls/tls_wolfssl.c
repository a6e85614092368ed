/* tls_wolfssl.c — the TLS engine on wolfSSL 5.5 (tls_wolfssl.h).
 *
 * Each connection is a WOLFSSL whose transport is w_recv/w_send over its
 * two tls_buf buffers: w_recv hands wolfSSL what waits in `in` (or says
 * WANT_READ), w_send appends to `out`, all of it, so wolfSSL never blocks
 * on output and out_peek/out_consume hand the records to the layer.
 *
 * Certificates: ctxs[0] is the default one; ctxs[i] (i >= 1) serves
 * names[i - 1].  Every context gets the same settings (ctx_setup).  The
 * servername callback, run by wolfSSL once the ClientHello's extensions
 * are read and before the certificate is chosen, moves the connection
 * onto ctxs[i] (wolfSSL_set_SSL_CTX).
 *
 * Tickets: sealed and opened by our callback (ticket_cb), under keys
 * of our own (struct tkeys: one set per generation of contexts, shared
 * by every certificate's context and by tls_wolfssl_server_share's), and
 * bound to the name the client asked for.  Resuming skips the
 * certificate, so a ticket made for b.test offered with the name a.test
 * would reach a.test on b.test's authentication: RFC 6066 3 (TLS 1.2)
 * and RFC 8446 4.2.11 and 4.6.1 (1.3) forbid it, and wolfSSL 5.5's own
 * callback does not check it.  So the name's SHA-256 is in the ticket's
 * AEAD additional data (and 4 bytes of it in the key name, to count the
 * refusals: tls.resume_refused_name); a ticket offered under another name
 * does not open, and the client gets a full handshake.  wolfSSL opens a
 * TLS 1.2 ticket as it reads the extensions, after the server_name one
 * when the client sent that first (as clients do; one sent before it
 * finds no name and gets a full handshake), and a TLS 1.3 one after the
 * servername callback.  wolfSSL's session-ID cache resumed a TLS 1.2
 * session ID under any name, the session ID context notwithstanding, so
 * with names it is off (tls_wolfssl_add_name); the name's hash is the
 * session ID context all the same (sni_select, conn_new). */
#include "tls_wolfssl.h"

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/chacha20_poly1305.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/sha256.h>
#include <wolfssl/openssl/evp.h>
#include <wolfssl/openssl/pem.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/sk_err.h"
#include "tls_alpn.h"
#include "tls_buf.h"
#include "tls_sni.h"

static const char cipher_list[] = "TLS13-AES128-GCM-SHA256:TLS13-AES256-GCM-SHA384:"
				  "TLS13-CHACHA20-POLY1305-SHA256:"
				  "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
				  "ECDHE-ECDSA-CHACHA20-POLY1305:"
				  "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:"
				  "ECDHE-RSA-CHACHA20-POLY1305";

/* The ticket keys of one generation of contexts (the top of this file).
 * Each key period (TK_PERIOD_S) has its key, HMAC-SHA256(master, id |
 * period): a ticket sealed in the period before still opens (and is
 * replaced), an older one does not.  Read-only once made, so the vCPUs
 * sharing it need no lock; freed by the last holder: the contexts that
 * seal with it and every connection (which may outlive a reload). */
#define TK_PERIOD_S 3600u
struct tkeys {
	int refs; /* atomic */
	unsigned char master[32];
	unsigned char id[4]; /* which master sealed a ticket (a reload makes another) */
	/* SHA-256 of no name (""): a connection's binding until its name is
	 * read (conn_name_hash), made once here rather than per connection */
	unsigned char nh_none[32];
};

struct tls_ctx {
	struct tls_ctx_head head; /* first: tls_host.h */
	struct tkeys *tk;         /* this generation's ticket keys (a reference) */
	WOLFSSL_CTX *ctxs[1 + TLS_SNI_MAX];
	char *names[TLS_SNI_MAX]; /* lower case, NUL-terminated */
	unsigned nnames;
	/* the hosted form's SNI files, to load them again (reload) */
	struct tls_sni sni_files[TLS_SNI_MAX];
	unsigned nsni_files;
	uint64_t sessions, tickets, resumed, sni_matched, sni_default, reloads, reload_failures;
	uint64_t refused_name; /* tickets made under another name (ticket_cb) */
	bool alpn_h2; /* offer h2 first (tls_wolfssl_alpn_h2) */
	struct tls_pool pool;
};

struct tls_conn {
	WOLFSSL *ssl;
	struct tls_ctx *ctx;
	struct tls_buf in, out;
	int err;        /* enum tls_status of the last failure */
	bool done;      /* the handshake finished */
	unsigned cert;  /* the certificate given: 0 default, i: ctxs[i] */
	struct tkeys *tk; /* the ticket keys (a reference): its context's at conn_new */
	bool refused;     /* a ticket under another name, counted (wolfSSL may ask twice) */
	/* The name's SHA-256 (conn_name_hash), once the name is read; nh_from
	 * says which callback made it (NH_NONE: not yet, nh unset). */
	unsigned char nh[32];
	enum { NH_NONE, NH_TICKET, NH_SNI } nh_from;
};

/* ---- ticket keys and the ticket callback ---- */

/* Zeroes that the compiler keeps (keys about to be freed or dropped). */
static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;
	while (n--)
		*v++ = 0;
}

static struct tkeys *tk_new(void)
{
	struct tkeys *k = calloc(1, sizeof(*k));
	if (k && (wolfSSL_RAND_bytes(k->master, sizeof(k->master)) != 1 ||
		  wolfSSL_RAND_bytes(k->id, sizeof(k->id)) != 1 ||
		  wc_Sha256Hash((const byte *)"", 0, k->nh_none) != 0)) {
		free(k);
		return NULL;
	}
	if (k)
		k->refs = 1;
	return k;
}

static struct tkeys *tk_ref(struct tkeys *k)
{
	if (k)
		__atomic_add_fetch(&k->refs, 1, __ATOMIC_RELAXED);
	return k;
}

static void tk_unref(struct tkeys *k)
{
	if (!k || __atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	wipe(k, sizeof(*k));
	free(k);
}

/* SHA-256 of the name the client asked for, in lower case (of "" for none:
 * a hash no name gives), made once per connection.  wolfSSL reads the name
 * with the ClientHello's extensions; sni_select (from_sni) and ticket_cb
 * each want the hash, up to three times a resumed handshake.  A TLS 1.2
 * ticket may be opened as the extensions are read, before sni_select (the
 * top of this file): its hash, of that ClientHello's name, stands for
 * sni_select's too.  sni_select makes it again only for a second
 * ClientHello (after a HelloRetryRequest), whose name might differ.  No
 * name yet: nothing kept (a server_name read later has its own hash).
 * NULL: a name over 255 bytes (no host name is: RFC 6066 3), or wolfCrypt
 * failed. */
static const unsigned char *conn_name_hash(struct tls_conn *c, WOLFSSL *ssl, bool from_sni)
{
	if (c->nh_from == NH_TICKET || (c->nh_from == NH_SNI && !from_sni)) {
		if (from_sni)
			c->nh_from = NH_SNI;
		return c->nh;
	}
	const char *name = wolfSSL_get_servername(ssl, WOLFSSL_SNI_HOST_NAME);
	size_t len = name ? strlen(name) : 0;
	if (len == 0)
		return c->tk ? c->tk->nh_none : NULL;
	if (len > TLS_SNI_NAME_MAX)
		return NULL;
	/* the name alone, as before the text had its tag (tls_sni.h) */
	char text[TLS_SNI_BIND_MAX];
	size_t n = tls_sni_bind_text(text, name, (long)len);
	if (wc_Sha256Hash((const byte *)text + TLS_SNI_TAG_LEN, (word32)(n - TLS_SNI_TAG_LEN),
			  c->nh) != 0)
		return NULL;
	c->nh_from = from_sni ? NH_SNI : NH_TICKET;
	return c->nh;
}

/* wolfSSL's ticket callback (SessionTicketEncCb): seal (enc) or open the
 * ticket in place with ChaCha20-Poly1305 under the period's key.  Key
 * name: id (4), period (8, big-endian), the name's hash (4); IV: 12
 * random bytes, then zeros; additional data: key name, IV and the name's
 * whole hash; the tag in mac[0..16).  Opening: another master (a reload
 * since), a key older than the period before, or another name: REJECT,
 * a full handshake; the period before: CREATE (a new ticket). */
static int ticket_cb(WOLFSSL *ssl, unsigned char key_name[WOLFSSL_TICKET_NAME_SZ],
		     unsigned char iv[WOLFSSL_TICKET_IV_SZ], unsigned char mac[WOLFSSL_TICKET_MAC_SZ],
		     int enc, unsigned char *ticket, int in_len, int *out_len, void *arg)
{
	(void)arg;
	struct tls_conn *c = wolfSSL_get_app_data(ssl);
	const struct tkeys *k = c ? c->tk : NULL;
	const unsigned char *nh = k ? conn_name_hash(c, ssl, false) : NULL;
	unsigned char key[32], aad[WOLFSSL_TICKET_NAME_SZ + WOLFSSL_TICKET_IV_SZ + 32];
	if (!nh || in_len < 0)
		return WOLFSSL_TICKET_RET_FATAL;
	uint64_t now = (uint64_t)time(NULL) / TK_PERIOD_S, p = 0;
	if (enc) {
		memcpy(key_name, k->id, 4);
		for (int i = 0; i < 8; i++)
			key_name[4 + i] = (unsigned char)(now >> (56 - 8 * i));
		memcpy(key_name + 12, nh, 4);
		memset(iv, 0, WOLFSSL_TICKET_IV_SZ);
		if (wolfSSL_RAND_bytes(iv, CHACHA20_POLY1305_AEAD_IV_SIZE) != 1)
			return WOLFSSL_TICKET_RET_FATAL;
	} else {
		for (int i = 0; i < 8; i++)
			p = p << 8 | key_name[4 + i];
		if (memcmp(key_name, k->id, 4) != 0 || (p != now && p + 1 != now))
			return WOLFSSL_TICKET_RET_REJECT; /* a key gone: a full handshake */
		if (memcmp(key_name + 12, nh, 4) != 0) {
			if (!c->refused) /* made under another name */
				c->ctx->refused_name++;
			c->refused = true;
			return WOLFSSL_TICKET_RET_REJECT;
		}
	}
	Hmac h;
	int r = wc_HmacInit(&h, NULL, INVALID_DEVID);
	if (r == 0) {
		r = wc_HmacSetKey(&h, WC_SHA256, k->master, sizeof(k->master));
		if (r == 0)
			r = wc_HmacUpdate(&h, key_name, 12);
		if (r == 0)
			r = wc_HmacFinal(&h, key);
		wc_HmacFree(&h);
	}
	if (r != 0)
		return WOLFSSL_TICKET_RET_FATAL;
	memcpy(aad, key_name, WOLFSSL_TICKET_NAME_SZ);
	memcpy(aad + WOLFSSL_TICKET_NAME_SZ, iv, WOLFSSL_TICKET_IV_SZ);
	memcpy(aad + WOLFSSL_TICKET_NAME_SZ + WOLFSSL_TICKET_IV_SZ, nh, 32);
	if (enc) {
		r = wc_ChaCha20Poly1305_Encrypt(key, iv, aad, sizeof(aad), ticket, (word32)in_len, ticket,
						mac);
		memset(mac + CHACHA20_POLY1305_AEAD_AUTHTAG_SIZE, 0,
		       WOLFSSL_TICKET_MAC_SZ - CHACHA20_POLY1305_AEAD_AUTHTAG_SIZE);
	} else {
		r = wc_ChaCha20Poly1305_Decrypt(key, iv, aad, sizeof(aad), ticket, (word32)in_len, mac,
						ticket);
	}
	wipe(key, sizeof(key));
	if (r != 0)
		return enc ? WOLFSSL_TICKET_RET_FATAL : WOLFSSL_TICKET_RET_REJECT;
	*out_len = in_len;
	return enc || p == now ? WOLFSSL_TICKET_RET_OK : WOLFSSL_TICKET_RET_CREATE;
}

int tls_wolfssl_init(void)
{
	return wolfSSL_Init() == WOLFSSL_SUCCESS ? 0 : -1;
}

/* ---- the transport ---- */

static int w_recv(WOLFSSL *ssl, char *buf, int sz, void *arg)
{
	(void)ssl;
	struct tls_conn *c = arg;
	size_t n = tls_buf_waiting(&c->in);
	if (n == 0)
		return WOLFSSL_CBIO_ERR_WANT_READ;
	if (n > (size_t)sz)
		n = (size_t)sz;
	memcpy(buf, c->in.p + c->in.off, n);
	tls_buf_consume(&c->ctx->pool, &c->in, n);
	return (int)n;
}

static int w_send(WOLFSSL *ssl, char *buf, int sz, void *arg)
{
	(void)ssl;
	struct tls_conn *c = arg;
	if (sz <= 0)
		return 0;
	if (tls_buf_append(&c->ctx->pool, &c->out, buf, (size_t)sz) < 0)
		return WOLFSSL_CBIO_ERR_GENERAL; /* out of memory: the connection fails */
	return sz;
}

/* ---- contexts ---- */

/* ALPN (tls_alpn.h): h2 (with alpn_h2), then http/1.1.  The
 * connection's context says, as sni_select's (a shared WOLFSSL_CTX's
 * argument is the context it was set up for: tls_wolfssl_server_share). */
static int alpn_select(WOLFSSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	const struct tls_conn *c = wolfSSL_get_app_data(ssl);
	const struct tls_ctx *t = c ? c->ctx : arg;
	const uint8_t *p = tls_alpn_pick(in, inlen, t->alpn_h2, outlen);
	if (!p)
		return SSL_TLSEXT_ERR_NOACK; /* no protocol agreed: HTTP/1.1 all the same */
	*out = p;
	return SSL_TLSEXT_ERR_OK;
}

static int sni_select(WOLFSSL *ssl, int *ad, void *arg)
{
	(void)ad;
	struct tls_conn *c = wolfSSL_get_app_data(ssl);
	/* The connection's context counts (a shared WOLFSSL_CTX's argument
	 * is the context it was set up for: tls_wolfssl_server_share). */
	struct tls_ctx *t = c ? c->ctx : arg;
	const char *name = wolfSSL_get_servername(ssl, WOLFSSL_SNI_HOST_NAME);
	int i = name && t->nnames ? tls_sni_pick(t->names, t->nnames, name) : -1;
	/* A session found by its ID resumes under its own name only (the
	 * top of this file): the name's hash is the session ID context,
	 * which wolfSSL keeps in each session it caches and compares. */
	const unsigned char *nh = c ? conn_name_hash(c, ssl, true) : NULL;
	if (!nh || wolfSSL_set_session_id_context(ssl, nh, 32) != WOLFSSL_SUCCESS)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	if (i < 0) {
		t->sni_default++;
		return 0;
	}
	t->sni_matched++;
	if (!wolfSSL_set_SSL_CTX(ssl, t->ctxs[1 + i]))
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	if (c)
		c->cert = 1u + (unsigned)i;
	return 0;
}

/* Whether the key is the leaf certificate's: a signature made with it
 * verifies under the certificate's public key.  (wolfSSL 5.5.4's
 * wolfSSL_CTX_check_private_key compares only the key types for EC, so it
 * passes an EC key of another certificate; measured.) */
static bool key_matches(const void *cert, size_t cert_len, const void *key, size_t key_len)
{
	static const unsigned char msg[] = "skiff: does the key match?";
	unsigned char sig[1024];
	size_t sl = sizeof(sig);
	bool ok = false;
	WOLFSSL_X509 *x = wolfSSL_X509_load_certificate_buffer(cert, (int)cert_len,
								WOLFSSL_FILETYPE_PEM);
	WOLFSSL_BIO *b = wolfSSL_BIO_new_mem_buf(key, (int)key_len);
	WOLFSSL_EVP_PKEY *k = b ? wolfSSL_PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	WOLFSSL_EVP_PKEY *pub = x ? wolfSSL_X509_get_pubkey(x) : NULL;
	WOLFSSL_EVP_MD_CTX *m = wolfSSL_EVP_MD_CTX_new();
	if (k && pub && m && wolfSSL_EVP_DigestSignInit(m, NULL, wolfSSL_EVP_sha256(), NULL, k) == 1 &&
	    wolfSSL_EVP_DigestSignUpdate(m, msg, sizeof(msg)) == 1 &&
	    wolfSSL_EVP_DigestSignFinal(m, sig, &sl) == 1) {
		wolfSSL_EVP_MD_CTX_free(m);
		m = wolfSSL_EVP_MD_CTX_new();
		ok = m && wolfSSL_EVP_DigestVerifyInit(m, NULL, wolfSSL_EVP_sha256(), NULL, pub) == 1 &&
		     wolfSSL_EVP_DigestVerifyUpdate(m, msg, sizeof(msg)) == 1 &&
		     wolfSSL_EVP_DigestVerifyFinal(m, sig, sl) == 1;
	}
	wolfSSL_EVP_MD_CTX_free(m);
	wolfSSL_EVP_PKEY_free(pub);
	wolfSSL_EVP_PKEY_free(k);
	wolfSSL_BIO_free(b);
	wolfSSL_X509_free(x);
	return ok;
}

static WOLFSSL_CTX *ctx_setup(struct tls_ctx *t, const void *cert, size_t cert_len, const void *key,
			      size_t key_len, char *err, size_t errlen)
{
	WOLFSSL_CTX *w = wolfSSL_CTX_new(wolfSSLv23_server_method());
	if (!w) {
		snprintf(err, errlen, "tls: wolfSSL_CTX_new failed");
		return NULL;
	}
	int groups[] = {WOLFSSL_ECC_X25519, WOLFSSL_ECC_SECP256R1};
	const char *what = NULL;
	if (wolfSSL_CTX_SetMinVersion(w, WOLFSSL_TLSV1_2) != WOLFSSL_SUCCESS)
		what = "minimum version";
	else if (wolfSSL_CTX_set_cipher_list(w, cipher_list) != WOLFSSL_SUCCESS)
		what = "cipher list";
	else if (wolfSSL_CTX_set_groups(w, groups, 2) != WOLFSSL_SUCCESS)
		what = "groups";
	else if (wolfSSL_CTX_use_certificate_chain_buffer(w, cert, (long)cert_len) != WOLFSSL_SUCCESS)
		what = "the certificate chain (PEM)";
	else if (wolfSSL_CTX_use_PrivateKey_buffer(w, key, (long)key_len, WOLFSSL_FILETYPE_PEM) !=
		 WOLFSSL_SUCCESS)
		what = "the private key (PEM)";
	else if (wolfSSL_CTX_check_private_key(w) != WOLFSSL_SUCCESS ||
		 !key_matches(cert, cert_len, key, key_len))
		what = "key";
	if (what && !strcmp(what, "key")) {
		snprintf(err, errlen, "tls: the key does not match the certificate");
		wolfSSL_CTX_free(w);
		return NULL;
	}
	if (what) {
		snprintf(err, errlen, "tls: wolfSSL: %s refused", what);
		wolfSSL_CTX_free(w);
		return NULL;
	}
	wolfSSL_CTX_set_verify(w, WOLFSSL_VERIFY_NONE, NULL);
	wolfSSL_CTX_set_options(w, WOLFSSL_OP_CIPHER_SERVER_PREFERENCE);
	wolfSSL_CTX_SetIORecv(w, w_recv);
	wolfSSL_CTX_SetIOSend(w, w_send);
	wolfSSL_CTX_set_alpn_select_cb(w, alpn_select, t);
	wolfSSL_CTX_set_servername_callback(w, sni_select);
	wolfSSL_CTX_set_servername_arg(w, t);
	wolfSSL_CTX_set_TicketEncCb(w, ticket_cb); /* the keys: the connection's */
	return w;
}

struct tls_ctx *tls_wolfssl_server_pem(const void *cert_pem, size_t cert_len, const void *key_pem,
				       size_t key_len, char *err, size_t errlen)
{
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	t->head.ops = &tls_wolfssl_ops;
	t->tk = tk_new();
	if (!t->tk) {
		snprintf(err, errlen, "tls: no ticket key (randomness)");
		free(t);
		return NULL;
	}
	t->ctxs[0] = ctx_setup(t, cert_pem, cert_len, key_pem, key_len, err, errlen);
	if (!t->ctxs[0]) {
		tk_unref(t->tk);
		free(t);
		return NULL;
	}
	return t;
}

struct tls_ctx *tls_wolfssl_server_share(struct tls_ctx *base, char *err, size_t errlen)
{
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	t->head.ops = &tls_wolfssl_ops;
	for (unsigned i = 0; i < base->nnames; i++) {
		size_t n = strlen(base->names[i]) + 1;
		t->names[i] = malloc(n);
		if (!t->names[i]) {
			for (unsigned j = 0; j < i; j++)
				free(t->names[j]);
			free(t);
			snprintf(err, errlen, "tls: out of memory");
			return NULL;
		}
		memcpy(t->names[i], base->names[i], n);
	}
	/* All or nothing: each reference taken is one tls_wolfssl_free drops. */
	for (unsigned i = 0; i <= base->nnames; i++)
		if (wolfSSL_CTX_up_ref(base->ctxs[i]) != WOLFSSL_SUCCESS) {
			for (unsigned j = 0; j < i; j++)
				wolfSSL_CTX_free(base->ctxs[j]);
			for (unsigned j = 0; j < base->nnames; j++)
				free(t->names[j]);
			free(t);
			snprintf(err, errlen, "tls: wolfSSL_CTX_up_ref failed");
			return NULL;
		}
	for (unsigned i = 0; i <= base->nnames; i++)
		t->ctxs[i] = base->ctxs[i];
	t->tk = tk_ref(base->tk); /* a ticket either one sealed, the other opens */
	t->nnames = base->nnames;
	t->alpn_h2 = base->alpn_h2;
	return t;
}

int tls_wolfssl_add_name(struct tls_ctx *t, const char *name, size_t name_len,
			 const void *cert_pem, size_t cert_len, const void *key_pem, size_t key_len,
			 char *err, size_t errlen)
{
	if (t->nnames >= TLS_SNI_MAX || name_len == 0) {
		snprintf(err, errlen, "tls: %s", name_len ? "too many SNI names" : "an empty SNI name");
		return -1;
	}
	char *n = malloc(name_len + 1);
	if (!n) {
		snprintf(err, errlen, "tls: out of memory");
		return -1;
	}
	memcpy(n, name, name_len);
	n[name_len] = 0;
	tls_sni_lower(n);
	WOLFSSL_CTX *w = ctx_setup(t, cert_pem, cert_len, key_pem, key_len, err, errlen);
	if (!w) {
		free(n);
		return -1;
	}
	/* No resumption by session ID once there are names: wolfSSL 5.5.4
	 * looks a TLS 1.2 session ID up in its cache (one per process) under
	 * any name, the session ID context notwithstanding (measured:
	 * suite_sni_resume_other_name), and RFC 6066 3 forbids resuming under
	 * another name.  A TLS 1.2 client resumes with its ticket, which is
	 * bound to the name (ticket_cb), as with GnuTLS. */
	wolfSSL_CTX_set_session_cache_mode(w, WOLFSSL_SESS_CACHE_OFF);
	wolfSSL_CTX_set_session_cache_mode(t->ctxs[0], WOLFSSL_SESS_CACHE_OFF);
	t->ctxs[1 + t->nnames] = w;
	t->names[t->nnames++] = n;
	return 0;
}

void tls_wolfssl_alpn_h2(struct tls_ctx *t, bool on)
{
	t->alpn_h2 = on;
}

void tls_wolfssl_free(struct tls_ctx *t)
{
	if (!t)
		return;
	for (unsigned i = t->nnames + 1; i-- > 0;)
		wolfSSL_CTX_free(t->ctxs[i]);
	tk_unref(t->tk);
	for (unsigned i = 0; i < t->nnames; i++)
		free(t->names[i]);
	for (unsigned i = 0; i < t->nsni_files; i++) {
		free((char *)t->sni_files[i].name);
		free((char *)t->sni_files[i].cert);
		free((char *)t->sni_files[i].key);
	}
	tls_pool_drain(&t->pool);
	free(t);
}

void tls_wolfssl_stats(const struct tls_ctx *t,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg)
{
	fn(arg, "tls.wolfssl_sessions", t->sessions);
	fn(arg, "tls.tickets_sent", t->tickets);
	fn(arg, "tls.resumed_engine", t->resumed);
	fn(arg, "tls.reloads", t->reloads);
	fn(arg, "tls.reload_failures", t->reload_failures);
	if (t->nnames) {
		fn(arg, "tls.sni_matched", t->sni_matched);
		fn(arg, "tls.sni_default", t->sni_default);
		fn(arg, "tls.resume_refused_name", t->refused_name);
	}
}

/* ---- connections ---- */

static struct tls_conn *w_conn_new(struct tls_ctx *t)
{
	struct tls_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = t;
	c->ssl = wolfSSL_new(t->ctxs[0]);
	if (!c->ssl) {
		free(c);
		return NULL;
	}
	c->tk = tk_ref(t->tk);
	/* The session ID context of no name (sni_select sets the name's), so
	 * that a session found by ID never resumes across names, whether or
	 * not wolfSSL calls the servername callback. */
	if (!c->tk ||
	    wolfSSL_set_session_id_context(c->ssl, c->tk->nh_none, sizeof(c->tk->nh_none)) !=
		    WOLFSSL_SUCCESS) {
		wolfSSL_free(c->ssl);
		tk_unref(c->tk);
		free(c);
		return NULL;
	}
	wolfSSL_set_app_data(c->ssl, c);
	wolfSSL_SetIOReadCtx(c->ssl, c);
	wolfSSL_SetIOWriteCtx(c->ssl, c);
	t->sessions++;
	return c;
}

static void w_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	wolfSSL_free(c->ssl);
	tk_unref(c->tk);
	tls_buf_release(&c->ctx->pool, &c->in);
	tls_buf_release(&c->ctx->pool, &c->out);
	free(c);
}

static long w_records_in(struct tls_conn *c, const void *buf, size_t len)
{
	if (tls_buf_append(&c->ctx->pool, &c->in, buf, len) < 0)
		return -SK_ENOMEM;
	return (long)len;
}

/* A wolfSSL error that is the peer's fault (a bad record, a bad hello)
 * or ours (memory). */
static int fail_kind(int e)
{
	return e == MEMORY_E || e == MEMORY_ERROR ? TLS_ERR_INTERNAL : TLS_ERR_PROTOCOL;
}

static int w_step(struct tls_conn *c)
{
	if (c->done)
		return TLS_OK;
	if (c->err)
		return c->err;
	int r = wolfSSL_accept(c->ssl);
	if (r == WOLFSSL_SUCCESS) {
		c->done = true;
		if (wolfSSL_session_reused(c->ssl))
			c->ctx->resumed++;
		if (wolfSSL_version(c->ssl) == TLS1_3_VERSION)
			c->ctx->tickets++; /* queued by wolfSSL with the handshake's end */
		return TLS_OK;
	}
	int e = wolfSSL_get_error(c->ssl, r);
	if (e == WOLFSSL_ERROR_WANT_READ || e == WOLFSSL_ERROR_WANT_WRITE)
		return TLS_OK;
	c->err = e == MEMORY_E ? TLS_ERR_INTERNAL : TLS_ERR_HANDSHAKE;
	return c->err;
}

static bool w_handshake_done(const struct tls_conn *c)
{
	return c->done;
}

static long w_read(struct tls_conn *c, void *buf, size_t len)
{
	if (c->err)
		return -SK_ECONNRESET;
	if (!c->done)
		return -SK_EAGAIN;
	if (len > 0x7fffffff)
		len = 0x7fffffff;
	int r = wolfSSL_read(c->ssl, buf, (int)len);
	if (r > 0)
		return r;
	int e = wolfSSL_get_error(c->ssl, r);
	if (e == WOLFSSL_ERROR_WANT_READ || e == WOLFSSL_ERROR_WANT_WRITE)
		return -SK_EAGAIN;
	if (e == WOLFSSL_ERROR_ZERO_RETURN)
		return 0;
	c->err = fail_kind(e);
	return -SK_ECONNRESET;
}

static long w_write(struct tls_conn *c, const void *buf, size_t len)
{
	if (c->err)
		return -SK_ECONNRESET;
	if (!c->done)
		return -SK_EPIPE;
	if (len > TLS_MAX_WRITE)
		len = TLS_MAX_WRITE;
	if (len == 0)
		return 0;
	int r = wolfSSL_write(c->ssl, buf, (int)len);
	if (r > 0)
		return r;
	c->err = fail_kind(wolfSSL_get_error(c->ssl, r));
	return -SK_ECONNRESET;
}

static size_t w_out_peek(const struct tls_conn *c, const uint8_t **p)
{
	*p = c->out.p ? c->out.p + c->out.off : NULL;
	return tls_buf_waiting(&c->out);
}

static void w_out_consume(struct tls_conn *c, size_t n)
{
	tls_buf_consume(&c->ctx->pool, &c->out, n);
}

static size_t w_pending_in(const struct tls_conn *c)
{
	return tls_buf_waiting(&c->in);
}

static void w_close_notify(struct tls_conn *c)
{
	if (!c->err && c->done)
		wolfSSL_shutdown(c->ssl); /* the first call queues our close_notify */
}

static int w_error(const struct tls_conn *c)
{
	return c->err;
}

static bool w_resumed(const struct tls_conn *c)
{
	return c->done && wolfSSL_session_reused(c->ssl);
}

static const char *w_version(const struct tls_conn *c)
{
	return wolfSSL_get_version(c->ssl);
}

static const char *w_alpn(const struct tls_conn *c)
{
	char *p = NULL;
	unsigned short n = 0;
	if (!c->done || wolfSSL_ALPN_GetProtocol(c->ssl, &p, &n) != WOLFSSL_SUCCESS)
		return NULL;
	return tls_alpn_name(p, n);
}

const char *tls_wolfssl_server_name(const struct tls_conn *c)
{
	const char *n = wolfSSL_get_servername(c->ssl, WOLFSSL_SNI_HOST_NAME);
	return n ? n : "";
}

unsigned tls_wolfssl_cert(const struct tls_conn *c)
{
	return c->cert;
}

/* ---- the hosted form: files ---- */

#ifndef TLS_WOLFSSL_NO_FILES
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t cap = 0, n = 0;
	if (!f) {
		snprintf(err, errlen, "tls: %s: cannot open", path);
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			char *nb = cap <= (1u << 24) ? realloc(b, cap) : NULL;
			if (!nb) {
				free(b);
				fclose(f);
				snprintf(err, errlen, "tls: %s: too big", path);
				return NULL;
			}
			b = nb;
		}
		size_t r = fread(b + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	*len = n;
	return b;
}

/* The files a refused certificate or key came from, after the reason. */
static void name_files(char *err, size_t errlen, const char *cert_file, const char *key_file)
{
	size_t n = strlen(err);
	if (n < errlen)
		snprintf(err + n, errlen - n, " (%s, %s)", cert_file, key_file);
}

static int load_pair(const char *cert_file, const char *key_file, char **cert, size_t *cl,
		     char **key, size_t *kl, char *err, size_t errlen)
{
	*cert = slurp(cert_file, cl, err, errlen);
	if (!*cert)
		return -1;
	*key = slurp(key_file, kl, err, errlen);
	if (!*key) {
		free(*cert);
		return -1;
	}
	return 0;
}

struct tls_ctx *tls_wolfssl_server(const char *cert_file, const char *key_file,
				   const struct tls_server_opts *o, char *err, size_t errlen)
{
	static bool inited;
	if (!inited) {
		if (tls_wolfssl_init() < 0) {
			snprintf(err, errlen, "tls: wolfSSL_Init failed");
			return NULL;
		}
		inited = true;
	}
	char *cert, *key;
	size_t cl, kl;
	if (load_pair(cert_file, key_file, &cert, &cl, &key, &kl, err, errlen) < 0)
		return NULL;
	struct tls_ctx *t = tls_wolfssl_server_pem(cert, cl, key, kl, err, errlen);
	if (!t)
		name_files(err, errlen, cert_file, key_file);
	else
		t->alpn_h2 = o && o->alpn_h2;
	free(cert);
	free(key);
	for (unsigned i = 0; t && o && i < o->nsni; i++) {
		const struct tls_sni *s = &o->sni[i];
		char cf[4096];
		if (s->cert_len >= sizeof(cf)) {
			snprintf(err, errlen, "tls: an SNI certificate's name is too long");
			goto fail;
		}
		memcpy(cf, s->cert, s->cert_len);
		cf[s->cert_len] = 0;
		if (load_pair(cf, s->key, &cert, &cl, &key, &kl, err, errlen) < 0)
			goto fail;
		int r = tls_wolfssl_add_name(t, s->name, s->name_len, cert, cl, key, kl, err, errlen);
		if (r < 0)
			name_files(err, errlen, cf, s->key);
		free(cert);
		free(key);
		if (r < 0)
			goto fail;
	}
	for (unsigned i = 0; t && o && i < o->nsni; i++) {
		const struct tls_sni *s = &o->sni[i];
		struct tls_sni *k = &t->sni_files[t->nsni_files];
		k->name = strndup(s->name, s->name_len);
		k->name_len = s->name_len;
		k->cert = strndup(s->cert, s->cert_len);
		k->cert_len = s->cert_len;
		k->key = strdup(s->key);
		t->nsni_files++;
		if (!k->name || !k->cert || !k->key) {
			snprintf(err, errlen, "tls: out of memory");
			goto fail;
		}
	}
	return t;
fail:
	tls_wolfssl_free(t);
	return NULL;
}

/* A new set of WOLFSSL_CTXs from the files, moved into t; the old ones
 * are freed here, but wolfSSL counts the connections that use one, so
 * an open connection keeps its own until it ends.  Tickets: the new
 * contexts have new ticket keys, so no session made before resumes. */
static int w_reload(struct tls_ctx *t, const char *cert_file, const char *key_file, char *err,
		    size_t errlen)
{
	struct tls_server_opts o = {.sni = t->sni_files, .nsni = t->nsni_files};
	struct tls_ctx *n = tls_wolfssl_server(cert_file, key_file, &o, err, errlen);
	if (!n) {
		t->reload_failures++;
		return -1;
	}
	for (unsigned i = 0; i <= t->nnames; i++) {
		WOLFSSL_CTX *w = t->ctxs[i];
		t->ctxs[i] = n->ctxs[i];
		n->ctxs[i] = w;
	}
	struct tkeys *k = t->tk; /* new keys with the new contexts */
	t->tk = n->tk;
	n->tk = k;
	/* the callbacks' argument is the context they were set up for */
	for (unsigned i = 0; i <= t->nnames; i++) {
		wolfSSL_CTX_set_alpn_select_cb(t->ctxs[i], alpn_select, t);
		wolfSSL_CTX_set_servername_arg(t->ctxs[i], t);
	}
	tls_wolfssl_free(n);
	t->reloads++;
	return 0;
}
#endif

const struct tls_engine_ops tls_wolfssl_ops = {
	.name = "wolfssl",
	.conn_new = w_conn_new,
	.conn_free = w_conn_free,
	.records_in = w_records_in,
	.in_room = NULL,
	.step = w_step,
	.handshake_done = w_handshake_done,
	.read = w_read,
	.write = w_write,
	.out_peek = w_out_peek,
	.out_consume = w_out_consume,
	.pending_in = w_pending_in,
	.close_notify = w_close_notify,
	.error = w_error,
	.resumed = w_resumed,
	.version = w_version,
	.alpn = w_alpn,
#ifndef TLS_WOLFSSL_NO_FILES
	.ctx_free = tls_wolfssl_free,
	.ctx_reload = w_reload,
	.ctx_stats = tls_wolfssl_stats,
#endif
};
