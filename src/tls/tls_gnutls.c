/* tls_gnutls.c — the hosted TLS engine (tls_engine.h) on GnuTLS 3.7
 * (tls_gnutls.h).  GnuTLS never sees a socket: each session's transport
 * is a pair of functions of ours (g_pull, g_push) over two buffers,
 * records in and records out, taken from the context's pool only while
 * bytes wait in them (tls_buf.h), as in the OpenSSL engine.
 *
 * Settings, fixed here as the OpenSSL engine's are: TLS 1.2 and 1.3;
 * AES-128/256-GCM and ChaCha20-Poly1305 only, ECDHE only; X25519, then
 * P-256; the server's order of preference; ALPN http/1.1, h2 before it
 * with alpn_h2 (tls_alpn.h; GnuTLS chooses by our order); no
 * renegotiation (a client's request is answered with a no_renegotiation
 * warning); session tickets (one after every TLS 1.3 handshake, full or
 * resumed, sent as it finishes: GNUTLS_NO_AUTO_SEND_TICKET and
 * gnutls_session_ticket_send, so it is counted here).  No session-ID cache:
 * a TLS 1.2 client resumes with its ticket.
 *
 * Certificates live in a generation (struct gen): the default credentials
 * and one per SNI name.  A connection holds a reference to the generation
 * it was made from, so a reload frees the old credentials only when the
 * last connection using them ends.  SNI: once the ClientHello is read
 * (GnuTLS's post-client-hello callback), a name that tls_sni_pick finds
 * moves the session onto that name's credentials.
 *
 * Tickets are bound to the name asked for (RFC 6066 3, RFC 8446 4.2.11
 * and 4.6.1): a ticket skips the certificate, so one sealed for b.test
 * and offered with the name a.test would reach a.test on b.test's
 * authentication.  GnuTLS 3.7 refuses that in TLS 1.2 but not 1.3.  With
 * names configured, a connection's ticket key is set in that same
 * callback, which GnuTLS runs before it reads the ticket (its "TLS"
 * extensions): the master key itself for a client that names nothing,
 * else HMAC-SHA512(master, "skiff sni " name) (name_key).  A ticket made
 * under another name does not open: a full handshake (counted as
 * tls.tickets_unknown). */
#include "tls_gnutls.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/sk_err.h"
#include "tls_alpn.h"
#include "tls_buf.h"
#include "tls_sni.h"

/* The TLS 1.3 extension that carries a ticket offered (RFC 8446 4.2.11),
 * and TLS 1.2's (RFC 5077 3.2; empty when the client only asks for one). */
#define EXT_PRE_SHARED_KEY 41
#define EXT_SESSION_TICKET 35

static const char prio_str[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:"
			       "-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
			       "-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"
			       "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:%SERVER_PRECEDENCE";

/* One generation of certificates (see the top). */
struct gen {
	unsigned refs; /* the context's, while current, and one per connection */
	gnutls_certificate_credentials_t def;
	gnutls_certificate_credentials_t by_name[TLS_SNI_MAX];
	unsigned nby_name;
};

struct tls_ctx {
	struct tls_ctx_head head; /* first: tls_host.h */
	struct gen *gen;          /* the current one: new connections take it */
	gnutls_priority_t prio;
	gnutls_datum_t master;    /* the ticket master key (tls_gnutls.h) */
	unsigned lifetime_s;      /* a ticket's life: the key period / 3 */
	uint64_t period_s, period; /* the key period's length and the one seen last */
	/* SNI: the names (lower case) and files, kept to load them again */
	char *sni_names[TLS_SNI_MAX], *sni_cert[TLS_SNI_MAX], *sni_key[TLS_SNI_MAX];
	unsigned nsni;
	uint64_t sessions; /* GnuTLS sessions made (tls.gnutls_sessions) */
	uint64_t rotations, sealed, opened, unknown, reloads, reload_failures;
	uint64_t sni_matched, sni_default;
	bool alpn_h2; /* tls_server_opts.alpn_h2: offer h2 first */
	struct tls_pool pool;
};

struct tls_conn {
	gnutls_session_t s;
	struct tls_ctx *ctx;
	struct gen *gen;
	struct tls_buf in, out;
	int err;      /* enum tls_status of the last failure */
	bool done;    /* the handshake finished */
	bool offered; /* the ClientHello offered a ticket */
	/* With names: the ticket key set for the name (name_key), so that a
	 * second ClientHello (after a HelloRetryRequest) names the same. */
	bool keyed;
	unsigned char key[64];
	uint8_t head_seen; /* of the first record's first two bytes (hello_head) */
};

/* ---- generations ---- */

static void gen_unref(struct gen *g)
{
	if (!g || --g->refs)
		return;
	if (g->def)
		gnutls_certificate_free_credentials(g->def);
	for (unsigned i = 0; i < g->nby_name; i++)
		gnutls_certificate_free_credentials(g->by_name[i]);
	free(g);
}

/* One certificate chain and key into new credentials; NULL with a message
 * in err. */
static gnutls_certificate_credentials_t cred_load(const char *cert_file, const char *key_file,
						  char *err, size_t errlen)
{
	gnutls_certificate_credentials_t c;
	if (gnutls_certificate_allocate_credentials(&c) < 0) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	int r = gnutls_certificate_set_x509_key_file2(c, cert_file, key_file, GNUTLS_X509_FMT_PEM,
						      NULL, 0);
	if (r < 0) {
		if (r == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
			snprintf(err, errlen, "tls: the key does not match the certificate %s: %s",
				 key_file, cert_file);
		else
			snprintf(err, errlen, "tls: certificate %s or key %s: %s", cert_file, key_file,
				 gnutls_strerror(r));
		gnutls_certificate_free_credentials(c);
		return NULL;
	}
	return c;
}

static struct gen *gen_load(const struct tls_ctx *t, const char *cert_file, const char *key_file,
			    char *err, size_t errlen)
{
	struct gen *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	g->refs = 1;
	if (!(g->def = cred_load(cert_file, key_file, err, errlen)))
		goto fail;
	for (; g->nby_name < t->nsni; g->nby_name++)
		if (!(g->by_name[g->nby_name] =
			      cred_load(t->sni_cert[g->nby_name], t->sni_key[g->nby_name], err, errlen)))
			goto fail;
	return g;
fail:
	gen_unref(g);
	return NULL;
}

/* ---- tickets ---- */

static int master_new(struct tls_ctx *t)
{
	if (t->master.data) {
		gnutls_memset(t->master.data, 0, t->master.size);
		gnutls_free(t->master.data);
		t->master.data = NULL;
	}
	return gnutls_session_ticket_key_generate(&t->master);
}

/* Count the key periods begun (GnuTLS changes the key by itself, by the
 * wall clock: tls_gnutls.h). */
static void period_seen(struct tls_ctx *t)
{
	uint64_t p = (uint64_t)time(NULL) / t->period_s;
	if (p != t->period) {
		if (t->period)
			t->rotations++;
		t->period = p;
	}
}

static int ext_seen(void *arg, unsigned id, const unsigned char *data, unsigned size)
{
	(void)data;
	struct tls_conn *c = arg;
	if (id == EXT_PRE_SHARED_KEY || (id == EXT_SESSION_TICKET && size > 0))
		c->offered = true;
	return 0;
}

/* Every handshake message, both ways: a ClientHello offering a ticket
 * (for tls.tickets_unknown) and each NewSessionTicket sent. */
static int hs_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
		   const gnutls_datum_t *msg)
{
	struct tls_conn *c = gnutls_session_get_ptr(s);
	if (htype == GNUTLS_HANDSHAKE_CLIENT_HELLO && incoming && when == GNUTLS_HOOK_PRE)
		gnutls_ext_raw_parse(c, ext_seen, msg, GNUTLS_EXT_RAW_FLAG_TLS_CLIENT_HELLO);
	else if (htype == GNUTLS_HANDSHAKE_NEW_SESSION_TICKET && !incoming && when == GNUTLS_HOOK_POST)
		c->ctx->sealed++;
	return 0;
}

/* ---- SNI ---- */

/* The ticket key for the name asked for (the top of this file): the
 * master key when there is none (len 0), else HMAC-SHA512(master, "skiff
 * sni " name) in lower case (tls_sni_bind_text), a key of the master's
 * size (64 bytes); a name too long to read (len < 0) gets the tag and a
 * NUL, which no name gives.  Set once per connection; a second
 * ClientHello naming another name is refused (RFC 8446 4.1.2: it must not
 * change). */
static int name_key(struct tls_conn *c, const char *name, long len)
{
	struct tls_ctx *t = c->ctx;
	unsigned char key[64];
	if (t->master.size != sizeof(key))
		return GNUTLS_E_INTERNAL_ERROR;
	if (len == 0) {
		memcpy(key, t->master.data, sizeof(key));
	} else {
		char text[TLS_SNI_BIND_MAX];
		size_t n = tls_sni_bind_text(text, name, len);
		if (gnutls_hmac_fast(GNUTLS_MAC_SHA512, t->master.data, t->master.size, text, n, key) < 0)
			return GNUTLS_E_INTERNAL_ERROR;
	}
	if (c->keyed) {
		int same = memcmp(key, c->key, sizeof(key)) == 0;
		gnutls_memset(key, 0, sizeof(key));
		return same ? 0 : GNUTLS_E_RECEIVED_ILLEGAL_PARAMETER;
	}
	gnutls_datum_t d = {key, sizeof(key)};
	int r = gnutls_session_ticket_enable_server(c->s, &d);
	memcpy(c->key, key, sizeof(key));
	gnutls_memset(key, 0, sizeof(key));
	c->keyed = r >= 0;
	return r < 0 ? GNUTLS_E_INTERNAL_ERROR : 0;
}

static int on_client_hello(gnutls_session_t s)
{
	struct tls_conn *c = gnutls_session_get_ptr(s);
	struct tls_ctx *t = c->ctx;
	char name[256];
	size_t len = sizeof(name);
	unsigned type;
	int i = -1;
	long klen = 0; /* the name for the ticket key: none */
	int r = gnutls_server_name_get(s, name, &len, &type, 0);
	if (r == 0 && type == GNUTLS_NAME_DNS && len < sizeof(name)) {
		name[len] = 0;
		i = tls_sni_pick(t->sni_names, t->nsni, name);
		klen = (long)len;
	} else if (r != GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) {
		klen = -1; /* a name, but not one we can read */
	}
	if ((r = name_key(c, name, klen)) < 0)
		return r;
	if (i < 0 || (unsigned)i >= c->gen->nby_name) {
		t->sni_default++;
		return 0;
	}
	t->sni_matched++;
	return gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, c->gen->by_name[i]);
}

/* ---- the context ---- */

struct tls_ctx *tls_gnutls_server(const char *cert_file, const char *key_file,
				  const struct tls_server_opts *o, char *err, size_t errlen)
{
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "tls: out of memory");
		return NULL;
	}
	t->head.ops = &tls_gnutls_ops;
	t->alpn_h2 = o && o->alpn_h2;
	uint32_t rot = o && o->ticket_rotate_s ? o->ticket_rotate_s : 3600;
	t->lifetime_s = rot / 3 ? rot / 3 : 1;
	t->period_s = (uint64_t)t->lifetime_s * 3;
	period_seen(t);
	const char *at = NULL;
	int r = gnutls_priority_init(&t->prio, prio_str, &at);
	if (r < 0) {
		snprintf(err, errlen, "tls: GnuTLS priorities at '%s': %s", at ? at : "?",
			 gnutls_strerror(r));
		goto fail;
	}
	if (master_new(t) < 0) {
		snprintf(err, errlen, "tls: no randomness for the ticket key");
		goto fail;
	}
	if (o && o->nsni > TLS_SNI_MAX) {
		snprintf(err, errlen, "tls: at most %u certificates by name", TLS_SNI_MAX);
		goto fail;
	}
	for (unsigned i = 0; o && i < o->nsni; i++) {
		t->sni_names[i] = strndup(o->sni[i].name, o->sni[i].name_len);
		t->sni_cert[i] = strndup(o->sni[i].cert, o->sni[i].cert_len);
		t->sni_key[i] = strdup(o->sni[i].key);
		t->nsni++;
		if (!t->sni_names[i] || !t->sni_cert[i] || !t->sni_key[i]) {
			snprintf(err, errlen, "tls: out of memory");
			goto fail;
		}
		tls_sni_lower(t->sni_names[i]);
	}
	if (!(t->gen = gen_load(t, cert_file, key_file, err, errlen)))
		goto fail;
	return t;
fail:
	tls_gnutls_free(t);
	return NULL;
}

int tls_gnutls_reload(struct tls_ctx *t, const char *cert_file, const char *key_file, char *err,
		      size_t errlen)
{
	struct gen *g = gen_load(t, cert_file, key_file, err, errlen);
	if (!g) {
		t->reload_failures++;
		return -1;
	}
	/* As the OpenSSL engine: a ticket skips the certificate, so none
	 * sealed under the old one may resume.  A new master key. */
	if (master_new(t) < 0)
		abort(); /* no randomness: sealing tickets with a known key would be worse */
	gen_unref(t->gen);
	t->gen = g;
	t->reloads++;
	return 0;
}

void tls_gnutls_free(struct tls_ctx *t)
{
	if (!t)
		return;
	gen_unref(t->gen);
	if (t->prio)
		gnutls_priority_deinit(t->prio);
	if (t->master.data) {
		gnutls_memset(t->master.data, 0, t->master.size);
		gnutls_free(t->master.data);
	}
	for (unsigned i = 0; i < t->nsni; i++) {
		free(t->sni_names[i]);
		free(t->sni_cert[i]);
		free(t->sni_key[i]);
	}
	tls_pool_drain(&t->pool);
	free(t);
}

void tls_gnutls_stats(const struct tls_ctx *t,
		      void (*fn)(void *arg, const char *name, uint64_t v), void *arg)
{
	fn(arg, "tls.gnutls_sessions", t->sessions);
	fn(arg, "tls.ticket_rotations", t->rotations);
	fn(arg, "tls.tickets_sealed", t->sealed);
	fn(arg, "tls.tickets_opened", t->opened);
	fn(arg, "tls.tickets_unknown", t->unknown);
	fn(arg, "tls.reloads", t->reloads);
	fn(arg, "tls.reload_failures", t->reload_failures);
	if (t->nsni) {
		fn(arg, "tls.sni_matched", t->sni_matched);
		fn(arg, "tls.sni_default", t->sni_default);
	}
}

/* ---- the transport: GnuTLS reads c->in and writes c->out ---- */

static ssize_t g_pull(gnutls_transport_ptr_t p, void *d, size_t n)
{
	struct tls_conn *c = p;
	size_t have = tls_buf_waiting(&c->in);
	if (have == 0) {
		gnutls_transport_set_errno(c->s, EAGAIN); /* more later: never end of file */
		return -1;
	}
	size_t k = have < n ? have : n;
	memcpy(d, c->in.p + c->in.off, k);
	tls_buf_consume(&c->ctx->pool, &c->in, k);
	return (ssize_t)k;
}

static ssize_t g_push(gnutls_transport_ptr_t p, const void *d, size_t n)
{
	struct tls_conn *c = p;
	if (tls_buf_append(&c->ctx->pool, &c->out, d, n) < 0) {
		gnutls_transport_set_errno(c->s, ENOMEM);
		return -1;
	}
	return (ssize_t)n;
}

/* ---- connections ---- */

static struct tls_conn *g_conn_new(struct tls_ctx *t)
{
	struct tls_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ctx = t;
	period_seen(t);
	/* Our order wins (GNUTLS_ALPN_SERVER_PRECEDENCE); a client that
	 * offers neither gets none, the handshake going on (no
	 * GNUTLS_ALPN_MANDATORY). */
	static const gnutls_datum_t alpn[] = {
		{(unsigned char *)TLS_ALPN_H2, sizeof(TLS_ALPN_H2) - 1},
		{(unsigned char *)TLS_ALPN_HTTP11, sizeof(TLS_ALPN_HTTP11) - 1},
	};
	int r = gnutls_init(&c->s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_AUTO_SEND_TICKET);
	if (r < 0) {
		free(c);
		return NULL;
	}
	if (gnutls_priority_set(c->s, t->prio) < 0 ||
	    gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, t->gen->def) < 0 ||
	    /* with names, the key comes with the name (on_client_hello) */
	    (!t->nsni && gnutls_session_ticket_enable_server(c->s, &t->master) < 0) ||
	    gnutls_alpn_set_protocols(c->s, t->alpn_h2 ? alpn : alpn + 1, t->alpn_h2 ? 2 : 1,
				      GNUTLS_ALPN_SERVER_PRECEDENCE) < 0) {
		gnutls_deinit(c->s);
		free(c);
		return NULL;
	}
	c->gen = t->gen;
	c->gen->refs++;
	t->sessions++;
	gnutls_db_set_cache_expiration(c->s, (int)t->lifetime_s);
	/* The layer's deadline (--tls-handshake-timeout) governs, not GnuTLS's. */
	gnutls_handshake_set_timeout(c->s, GNUTLS_INDEFINITE_TIMEOUT);
	gnutls_session_set_ptr(c->s, c);
	gnutls_transport_set_ptr(c->s, c);
	gnutls_transport_set_pull_function(c->s, g_pull);
	gnutls_transport_set_push_function(c->s, g_push);
	gnutls_handshake_set_hook_function(c->s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_BOTH, hs_hook);
	if (t->nsni)
		gnutls_handshake_set_post_client_hello_function(c->s, on_client_hello);
	return c;
}

static void g_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	gnutls_deinit(c->s);
	gnutls_memset(c->key, 0, sizeof(c->key));
	gen_unref(c->gen);
	tls_buf_release(&c->ctx->pool, &c->in);
	tls_buf_release(&c->ctx->pool, &c->out);
	free(c);
}

/* The first record must be a handshake record of TLS (content type 22,
 * major version 3): anything else is refused at its first byte.  GnuTLS
 * would take a first byte with the high bit set as the start of an SSL 2.0
 * ClientHello and wait for up to 32 KiB of it, so a quarter of random
 * byte streams sat until the handshake timeout instead of being refused at
 * once, as OpenSSL refuses them (tests/tls.sh hostile). */
static bool hello_head(struct tls_conn *c, const uint8_t *b, size_t len)
{
	static const uint8_t want[2] = {22, 3};
	for (size_t i = 0; i < len && c->head_seen < 2; i++, c->head_seen++)
		if (b[i] != want[c->head_seen])
			return false;
	return true;
}

static long g_records_in(struct tls_conn *c, const void *buf, size_t len)
{
	if (c->head_seen < 2 && !c->err && !hello_head(c, buf, len))
		c->err = TLS_ERR_HANDSHAKE; /* step and every later call say so */
	return tls_buf_append(&c->ctx->pool, &c->in, buf, len) == 0 ? (long)len : -SK_ENOMEM;
}

/* A fatal error: before the handshake finished it is the handshake's
 * (garbage, a hello we refuse), after it the record layer's.  The alert
 * that fits it is queued for the layer to send. */
static int g_fail(struct tls_conn *c, int r)
{
	c->err = c->done ? TLS_ERR_PROTOCOL : TLS_ERR_HANDSHAKE;
	if (r == GNUTLS_E_MEMORY_ERROR || r == GNUTLS_E_INTERNAL_ERROR)
		c->err = TLS_ERR_INTERNAL;
	gnutls_alert_send_appropriate(c->s, r);
	return c->err;
}

static void finished(struct tls_conn *c)
{
	struct tls_ctx *t = c->ctx;
	c->done = true;
	if (gnutls_session_is_resumed(c->s))
		t->opened++;
	else if (c->offered)
		t->unknown++;
	/* TLS 1.3: the ticket now, not with the first response, so that a
	 * client that never sends (a preconnect) has one; after a resumed
	 * handshake too, for a client that uses each ticket once (RFC 8446
	 * C.4).  (TLS 1.2's went out inside the handshake, when asked for.) */
	if (gnutls_protocol_get_version(c->s) == GNUTLS_TLS1_3)
		gnutls_session_ticket_send(c->s, 1, 0);
}

static int g_step(struct tls_conn *c)
{
	if (c->err)
		return c->err;
	if (c->done)
		return TLS_OK;
	for (;;) {
		size_t before = tls_buf_waiting(&c->in);
		int r = gnutls_handshake(c->s);
		if (r == 0) {
			finished(c);
			return TLS_OK;
		}
		if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
			return TLS_OK; /* waiting for records */
		if (gnutls_error_is_fatal(r))
			return g_fail(c, r);
		/* A warning (an alert the peer may send): go on, while it
		 * takes input, so that a flood of them cannot spin here. */
		if (tls_buf_waiting(&c->in) == before)
			return TLS_OK;
	}
}

static bool g_handshake_done(const struct tls_conn *c)
{
	return c->done && !c->err;
}

static long g_read(struct tls_conn *c, void *buf, size_t len)
{
	if (c->err)
		return -SK_ECONNRESET;
	for (;;) {
		size_t before = tls_buf_waiting(&c->in);
		ssize_t r = gnutls_record_recv(c->s, buf, len);
		if (r >= 0)
			return (long)r; /* 0: the peer's close_notify */
		if (r == GNUTLS_E_REHANDSHAKE)
			/* No renegotiation (RFC 5746 is no reason to allow it):
			 * a warning, and the connection goes on. */
			gnutls_alert_send(c->s, GNUTLS_AL_WARNING, GNUTLS_A_NO_RENEGOTIATION);
		else if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED && gnutls_error_is_fatal(r)) {
			g_fail(c, (int)r);
			return -SK_ECONNRESET;
		}
		/* AGAIN after a record that carried no data (a ticket, a key
		 * update, a warning): read on while records wait, else the
		 * layer would wait for input that is already here. */
		if (tls_buf_waiting(&c->in) == 0 || tls_buf_waiting(&c->in) == before)
			return -SK_EAGAIN;
	}
}

static long g_write(struct tls_conn *c, const void *buf, size_t len)
{
	if (c->err)
		return -SK_ECONNRESET;
	if (len > TLS_MAX_WRITE)
		len = TLS_MAX_WRITE;
	if (len == 0)
		return 0;
	ssize_t r = gnutls_record_send(c->s, buf, len);
	if (r > 0)
		return (long)r;
	if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
		return -SK_EAGAIN;
	g_fail(c, (int)r);
	return -SK_ECONNRESET;
}

static size_t g_out_peek(const struct tls_conn *c, const uint8_t **p)
{
	*p = c->out.p ? c->out.p + c->out.off : NULL;
	return tls_buf_waiting(&c->out);
}

static void g_out_consume(struct tls_conn *c, size_t n)
{
	tls_buf_consume(&c->ctx->pool, &c->out, n);
}

static size_t g_pending_in(const struct tls_conn *c)
{
	return tls_buf_waiting(&c->in);
}

static void g_close_notify(struct tls_conn *c)
{
	if (!c->err && c->done)
		gnutls_bye(c->s, GNUTLS_SHUT_WR); /* queues our close_notify */
}

static int g_error(const struct tls_conn *c)
{
	return c->err;
}

static bool g_resumed(const struct tls_conn *c)
{
	return gnutls_session_is_resumed(c->s) != 0;
}

/* The names OpenSSL gives, so that logs read the same either way. */
static const char *g_version(const struct tls_conn *c)
{
	switch (gnutls_protocol_get_version(c->s)) {
	case GNUTLS_TLS1_3: return "TLSv1.3";
	case GNUTLS_TLS1_2: return "TLSv1.2";
	default: return "unknown";
	}
}

static const char *g_alpn(const struct tls_conn *c)
{
	gnutls_datum_t d;
	if (!c->done || gnutls_alpn_get_selected_protocol(c->s, &d) < 0)
		return NULL;
	return tls_alpn_name(d.data, d.size);
}

const struct tls_engine_ops tls_gnutls_ops = {
	.name = "gnutls",
	.conn_new = g_conn_new,
	.conn_free = g_conn_free,
	.records_in = g_records_in,
	.step = g_step,
	.handshake_done = g_handshake_done,
	.read = g_read,
	.write = g_write,
	.out_peek = g_out_peek,
	.out_consume = g_out_consume,
	.pending_in = g_pending_in,
	.close_notify = g_close_notify,
	.error = g_error,
	.resumed = g_resumed,
	.version = g_version,
	.alpn = g_alpn,
	.ctx_free = tls_gnutls_free,
	.ctx_reload = tls_gnutls_reload,
	.ctx_stats = tls_gnutls_stats,
};
