/* tls_bearssl.c — the TLS engine (tls_engine.h) on BearSSL; see
 * tls_bearssl.h for what it speaks and what it holds.
 *
 * BearSSL is sans-I/O already: an engine over one caller-given buffer,
 * asked for its state (br_ssl_engine_current_state) and handing out
 * windows into that buffer: records to send (sendrec), room for records
 * received (recvrec), plaintext received (recvapp), room for plaintext
 * to send (sendapp).  This file maps those windows onto the engine ops.
 * Two things differ from OpenSSL's shape:
 *   - records_in() must take all it is given, but BearSSL takes records
 *     only while it has room (none at all while records wait to go out:
 *     the buffer is one, half duplex).  What it cannot take yet waits in
 *     an overflow buffer from the context's pool, held only while bytes
 *     wait there, and drained into BearSSL as its room comes back;
 *     in_room() tells the layer how much more it can give.
 *   - write() may refuse (-SK_EAGAIN) while the last record is still
 *     unsent: the layer then waits for the socket.
 *
 * Certificates by SNI: the context holds certs[0] (the default) and
 * those tls_bearssl_add_cert added, each decoded once into its own slot
 * of the caller's block; names[] maps a server name to a slot.  Every
 * connection's policy is sni_policy: its choose(), called by BearSSL once
 * the whole ClientHello is read (so the SNI name is known), looks the
 * name up, points the server context's own single-chain handler
 * (br_ssl_server_set_single_ec/_rsa) at that slot and lets it choose the
 * suite and sign.  A resumed session skips choose(): BearSSL looks the
 * session up before it reads the hello's extensions, so the name cannot
 * steer the cache; instead the session ID's last byte names the slot it
 * was made with (choose() writes it), and once the hello is read a
 * resumption whose name now asks for another certificate is refused
 * (RFC 6066 3 forbids resuming under another name's certificate).
 *
 * Invariants:
 *   - a connection is on the free list iff !in_use; conns_in_use counts
 *     the others;
 *   - c->cert < t->ncerts; names[i].cert < t->ncerts;
 *   - c->ovf != NULL iff bytes [ovf_off, ovf_len) wait unfed (ovf_off <
 *     ovf_len); those bytes come before any later records_in();
 *   - hs_done only goes from false to true. */
#include "tls_bearssl.h"

#include <bearssl.h>
#include <string.h>

#include "../base/sk_err.h"
#include "tls_alpn.h"

#define CHAIN_MAX 16384u   /* DER bytes of the certificate chain */
#define CHAIN_CERTS 8u
#define KEY_DER_MAX 8192u  /* a DER private key (RSA 4096 is ~2.4 KiB) */
#define OVF_SIZE TLS_BUF_SIZE
#define LRU_ENTRY 100u     /* BearSSL's LRU cache: bytes per session */
#define NAME_MAX_LEN 255u  /* BearSSL keeps an SNI name of up to 255 bytes */
#define CERTS_MAX (1u + TLS_SNI_MAX)
#define XSTR(x) STR(x)
#define STR(x) #x

/* One certificate chain and its key, decoded. */
struct cert {
	int key_type;              /* BR_KEYTYPE_EC or BR_KEYTYPE_RSA */
	unsigned issuer_key_type;  /* of the leaf's signer */
	br_skey_decoder_context skey; /* holds the private key's numbers */
	br_x509_certificate chain[CHAIN_CERTS];
	size_t nchain, der_len;
	unsigned char der[CHAIN_MAX];
};

/* A server name and the certificate it asks for: lower case, exact or
 * "*.rest" (one label, then ".rest"). */
struct sni_name {
	char name[NAME_MAX_LEN + 1];
	size_t len;
	unsigned cert;
};

struct tls_conn {
	br_ssl_server_context sc; /* first: the session cache gets &sc */
	const br_ssl_server_policy_class *policy; /* sni_policy; BearSSL gets &policy */
	struct tls_ctx *ctx;
	struct tls_conn *next_free;
	uint8_t *ovf;
	size_t ovf_off, ovf_len;
	int err;          /* enum tls_status of the failure, 0 while none */
	unsigned cert;    /* the certificate chosen, or the resumed session's */
	bool in_use, hs_done, resumed;
	bool name_checked; /* a resumption's name was checked against cert */
	bool muted;        /* refused before our hello left: nothing is sent */
	unsigned char iobuf[BR_SSL_BUFSIZE_MONO];
};

struct tls_ctx {
	/* The session cache the servers see: ours, in front of the LRU,
	 * to count and to learn which connection resumed. */
	const br_ssl_session_cache_class *cache_vt;
	br_ssl_session_cache_lru lru;
	/* The LRU the servers use: &lru, or another context's
	 * (tls_bearssl_share_cache), then under lock/unlock (NULL: none). */
	br_ssl_session_cache_lru *cache;
	void (*lock)(void), (*unlock)(void);
	br_ec_impl ecdhe;          /* the default EC code, X25519 and P-256 only */
	uint16_t suites[6];        /* ECDSA's if a certificate is EC, RSA's if one is RSA */
	unsigned nsuites;
	struct cert *certs;        /* [0] the default; max_certs slots in the block */
	unsigned ncerts, max_certs;
	struct sni_name names[TLS_SNI_MAX];
	unsigned nnames;
	int (*random)(void *buf, size_t len);
	bool alpn_h2;              /* tls_bearssl_config.alpn_h2: offer h2 first */
	struct tls_conn *conns, *free_list;
	uint8_t **ovf_free;        /* a stack of free overflow buffers */
	unsigned n_ovf_free, n_ovf, max_conns;
	uint64_t in_use, pool_empty, ovf_taken, ovf_empty, saved, resumed, missed;
	uint64_t sni_matched, sni_default, sni_refused;
};

/* ALPN in the server's order (tls_alpn.h): BearSSL picks the first of
 * ours the client offers, and with no match (BR_OPT_FAIL_ON_ALPN_MISMATCH
 * unset) carries on without one.  Without alpn_h2 the list starts at
 * [1].  BearSSL takes it without const. */
static const char *alpn_names[] = {TLS_ALPN_H2, TLS_ALPN_HTTP11};

/* ---- errors, without a printf ---- */

static void set_err(char *err, size_t errlen, const char *a, const char *b)
{
	if (!errlen)
		return;
	size_t n = 0;
	for (const char *s = a; s && *s && n + 1 < errlen; s++)
		err[n++] = *s;
	for (const char *s = b; s && *s && n + 1 < errlen; s++)
		err[n++] = *s;
	err[n] = 0;
}

/* ---- the session cache: the LRU, counted ---- */

static struct tls_ctx *ctx_of_cache(const br_ssl_session_cache_class **vt)
{
	return (struct tls_ctx *)(void *)((char *)vt - offsetof(struct tls_ctx, cache_vt));
}

static void cache_save(const br_ssl_session_cache_class **vt, br_ssl_server_context *sc,
		       const br_ssl_session_parameters *params)
{
	struct tls_ctx *t = ctx_of_cache(vt);
	t->saved++;
	if (t->lock)
		t->lock();
	t->cache->vtable->save(&t->cache->vtable, sc, params);
	if (t->unlock)
		t->unlock();
}

static int cache_load(const br_ssl_session_cache_class **vt, br_ssl_server_context *sc,
		      br_ssl_session_parameters *params)
{
	struct tls_ctx *t = ctx_of_cache(vt);
	if (t->lock)
		t->lock();
	int r = t->cache->vtable->load(&t->cache->vtable, sc, params);
	if (t->unlock)
		t->unlock();
	struct tls_conn *c = (struct tls_conn *)(void *)sc; /* sc is its first member */
	if (r) {
		c->resumed = true;
		/* The certificate it was made with (written by sni_choose);
		 * checked against the name once the hello is read. */
		c->cert = params->session_id[31] < t->ncerts ? params->session_id[31] : 0;
		t->resumed++;
	} else {
		t->missed++;
	}
	return r;
}

static const br_ssl_session_cache_class cache_class = {
	.context_size = sizeof(const br_ssl_session_cache_class *),
	.save = cache_save,
	.load = cache_load,
};

/* ---- loading the chain and the key ---- */

struct pem_sink {
	unsigned char *p;
	size_t len, cap;
	bool overflow;
};

static void pem_put(void *ctx, const void *d, size_t n)
{
	struct pem_sink *s = ctx;
	if (s->cap - s->len < n) {
		s->overflow = true;
		return;
	}
	memcpy(s->p + s->len, d, n);
	s->len += n;
}

/* Every PEM object in (pem, len) whose name satisfies want() goes to
 * out(ctx, der, n) in turn.  Returns the number of objects, -1 on a PEM
 * error or an object too large for buf. */
static int pem_each(const void *pem, size_t len, bool (*want)(const char *name),
		    bool (*out)(void *ctx, const unsigned char *der, size_t n), void *ctx,
		    unsigned char *buf, size_t cap)
{
	br_pem_decoder_context pc;
	br_pem_decoder_init(&pc);
	const unsigned char *p = pem;
	struct pem_sink sink;
	bool inobj = false;
	int count = 0;
	/* A last newline, in case the file lacks one: the decoder ends an
	 * object's END line only on one. */
	for (int pass = 0; pass < 2; pass++) {
		const unsigned char *q = pass ? (const unsigned char *)"\n" : p;
		size_t n = pass ? 1 : len;
		while (n > 0) {
			size_t k = br_pem_decoder_push(&pc, q, n);
			q += k;
			n -= k;
			switch (br_pem_decoder_event(&pc)) {
			case BR_PEM_BEGIN_OBJ:
				inobj = want(br_pem_decoder_name(&pc));
				sink = (struct pem_sink){.p = buf, .cap = cap};
				br_pem_decoder_setdest(&pc, inobj ? pem_put : NULL, &sink);
				break;
			case BR_PEM_END_OBJ:
				if (inobj) {
					if (sink.overflow || !out(ctx, buf, sink.len))
						return -1;
					count++;
				}
				inobj = false;
				break;
			case BR_PEM_ERROR:
				return -1;
			default:
				break;
			}
		}
	}
	return count;
}

static bool is_cert(const char *name)
{
	return !strcmp(name, "CERTIFICATE") || !strcmp(name, "X509 CERTIFICATE");
}

static bool is_key(const char *name)
{
	return !strcmp(name, "PRIVATE KEY") || !strcmp(name, "EC PRIVATE KEY") ||
	       !strcmp(name, "RSA PRIVATE KEY");
}

static bool add_cert(void *ctx, const unsigned char *der, size_t n)
{
	struct cert *t = ctx;
	if (t->nchain == CHAIN_CERTS || CHAIN_MAX - t->der_len < n)
		return false;
	memcpy(t->der + t->der_len, der, n);
	t->chain[t->nchain].data = t->der + t->der_len;
	t->chain[t->nchain].data_len = n;
	t->nchain++;
	t->der_len += n;
	return true;
}

static bool add_key(void *ctx, const unsigned char *der, size_t n)
{
	struct cert *t = ctx;
	br_skey_decoder_init(&t->skey);
	br_skey_decoder_push(&t->skey, der, n);
	return br_skey_decoder_last_error(&t->skey) == 0;
}

static void no_dn(void *ctx, const void *buf, size_t len)
{
	(void)ctx, (void)buf, (void)len;
}

static size_t strip_zeros(const unsigned char **p, size_t n)
{
	while (n > 0 && **p == 0)
		(*p)++, n--;
	return n;
}

/* The leaf's public key is the private key's; and what signed the leaf
 * (the policy needs it for ECDH suites, which we do not offer, but it
 * must be given). */
static const char *check_leaf(struct cert *t)
{
	static br_x509_decoder_context dc; /* 1.2 KiB: kept off the stack */
	br_x509_decoder_init(&dc, no_dn, NULL);
	br_x509_decoder_push(&dc, t->chain[0].data, t->chain[0].data_len);
	const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	if (!pk || br_x509_decoder_last_error(&dc) != 0)
		return "the certificate does not decode";
	t->issuer_key_type = (unsigned)br_x509_decoder_get_signer_key_type(&dc);
	if (pk->key_type != t->key_type)
		return "the key does not match the certificate (key types differ)";
	if (t->key_type == BR_KEYTYPE_EC) {
		const br_ec_private_key *sk = br_skey_decoder_get_ec(&t->skey);
		unsigned char q[BR_EC_KBUF_PUB_MAX_SIZE];
		br_ec_public_key pub;
		size_t n = br_ec_compute_pub(br_ec_get_default(), &pub, q, sk);
		if (n == 0 || pub.curve != pk->key.ec.curve || n != pk->key.ec.qlen ||
		    memcmp(q, pk->key.ec.q, n) != 0)
			return "the key does not match the certificate";
		return NULL;
	}
	const br_rsa_private_key *sk = br_skey_decoder_get_rsa(&t->skey);
	static unsigned char nbuf[1024];
	br_rsa_compute_modulus mod = br_rsa_compute_modulus_get_default();
	size_t nlen = mod(NULL, sk);
	if (nlen == 0 || nlen > sizeof(nbuf) || mod(nbuf, sk) != nlen)
		return "the RSA key cannot be used";
	const unsigned char *a = nbuf, *b = pk->key.rsa.n;
	size_t la = strip_zeros(&a, nlen), lb = strip_zeros(&b, pk->key.rsa.nlen);
	if (la != lb || memcmp(a, b, la) != 0)
		return "the key does not match the certificate";
	return NULL;
}

/* ---- the context ---- */

static size_t align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static unsigned n_overflow(const struct tls_bearssl_config *cfg)
{
	return cfg->overflow ? cfg->overflow : cfg->max_conns / 4 + 2;
}

static unsigned n_sessions(const struct tls_bearssl_config *cfg)
{
	return cfg->sessions ? cfg->sessions : 2 * cfg->max_conns + 64;
}

size_t tls_bearssl_conn_bytes(void)
{
	return sizeof(struct tls_conn);
}

static unsigned n_certs(const struct tls_bearssl_config *cfg)
{
	return cfg->certs ? cfg->certs : 1;
}

size_t tls_bearssl_mem_size(const struct tls_bearssl_config *cfg)
{
	size_t no = n_overflow(cfg);
	return align16(sizeof(struct tls_ctx)) +
	       align16((size_t)cfg->max_conns * sizeof(struct tls_conn)) +
	       align16(no * sizeof(uint8_t *)) + no * align16(OVF_SIZE) +
	       align16((size_t)n_sessions(cfg) * LRU_ENTRY) +
	       (size_t)n_certs(cfg) * align16(sizeof(struct cert));
}

/* Decode a chain and its key into slot k; NULL, or what is wrong. */
static const char *load_cert(struct cert *k, const void *cert_pem, size_t cert_len,
			     const void *key_pem, size_t key_len)
{
	static unsigned char buf[CHAIN_MAX]; /* one PEM object's DER at a time */
	memset(k, 0, sizeof(*k));
	if (pem_each(cert_pem, cert_len, is_cert, add_cert, k, buf, sizeof(buf)) < 1)
		return "certificate: no PEM CERTIFICATE, or a chain over 16 KiB / 8 certificates";
	if (pem_each(key_pem, key_len, is_key, add_key, k, buf, KEY_DER_MAX) != 1)
		return "private key: not one PEM EC or RSA key BearSSL reads";
	k->key_type = br_skey_decoder_key_type(&k->skey);
	if (k->key_type != BR_KEYTYPE_EC && k->key_type != BR_KEYTYPE_RSA)
		return "private key: neither EC nor RSA";
	return check_leaf(k);
}

/* The suites every certificate's key can sign for, in the server's
 * order: each connection's single-chain handler then picks among those
 * of its own key type. */
static void set_suites(struct tls_ctx *t)
{
	static const uint16_t ec[3] = {BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
				       BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
				       BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256};
	static const uint16_t rsa[3] = {BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
					BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
					BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256};
	bool has_ec = false, has_rsa = false;
	for (unsigned i = 0; i < t->ncerts; i++) {
		has_ec |= t->certs[i].key_type == BR_KEYTYPE_EC;
		has_rsa |= t->certs[i].key_type == BR_KEYTYPE_RSA;
	}
	t->nsuites = 0;
	/* The default certificate's kind first. */
	bool ec_first = t->certs[0].key_type == BR_KEYTYPE_EC;
	for (int pass = 0; pass < 2; pass++) {
		bool want_ec = (pass == 0) == ec_first;
		if (want_ec ? !has_ec : !has_rsa)
			continue;
		memcpy(t->suites + t->nsuites, want_ec ? ec : rsa, sizeof(ec));
		t->nsuites += 3;
	}
}

struct tls_ctx *tls_bearssl_server(void *mem, size_t mem_size, const struct tls_bearssl_config *cfg,
				   const void *cert_pem, size_t cert_len, const void *key_pem,
				   size_t key_len, char *err, size_t errlen)
{
	if (!mem || !cfg || !cfg->max_conns || !cfg->random || mem_size < tls_bearssl_mem_size(cfg) ||
	    ((uintptr_t)mem & 15)) {
		set_err(err, errlen, "tls: no memory or configuration for the BearSSL engine", NULL);
		return NULL;
	}
	if (n_certs(cfg) > CERTS_MAX) {
		set_err(err, errlen, "tls: more than 1 + " XSTR(TLS_SNI_MAX) " certificates on one "
			"context", NULL);
		return NULL;
	}
	memset(mem, 0, tls_bearssl_mem_size(cfg));
	uint8_t *m = mem;
	struct tls_ctx *t = (struct tls_ctx *)(void *)m;
	m += align16(sizeof(*t));
	t->conns = (struct tls_conn *)(void *)m;
	m += align16((size_t)cfg->max_conns * sizeof(struct tls_conn));
	t->n_ovf = n_overflow(cfg);
	t->ovf_free = (uint8_t **)(void *)m;
	m += align16(t->n_ovf * sizeof(uint8_t *));
	for (unsigned i = 0; i < t->n_ovf; i++, m += align16(OVF_SIZE))
		t->ovf_free[t->n_ovf_free++] = m;
	size_t store = (size_t)n_sessions(cfg) * LRU_ENTRY;
	br_ssl_session_cache_lru_init(&t->lru, m, store);
	m += align16(store);
	t->certs = (struct cert *)(void *)m;
	t->max_certs = n_certs(cfg);
	t->cache_vt = &cache_class;
	t->cache = &t->lru;
	t->random = cfg->random;
	t->alpn_h2 = cfg->alpn_h2;
	t->max_conns = cfg->max_conns;
	for (unsigned i = cfg->max_conns; i-- > 0;) {
		t->conns[i].next_free = t->free_list;
		t->free_list = &t->conns[i];
	}
	const char *why = load_cert(&t->certs[0], cert_pem, cert_len, key_pem, key_len);
	if (why) {
		set_err(err, errlen, "tls: ", why);
		return NULL;
	}
	t->ncerts = 1;
	set_suites(t);
	/* ECDHE on X25519 or P-256 only, whatever else the code could do. */
	t->ecdhe = *br_ec_get_default();
	t->ecdhe.supported_curves &= (1u << BR_EC_curve25519) | (1u << BR_EC_secp256r1);
	return t;
}

int tls_bearssl_add_cert(struct tls_ctx *t, const void *cert_pem, size_t cert_len,
			 const void *key_pem, size_t key_len, char *err, size_t errlen)
{
	if (t->ncerts == t->max_certs || t->in_use) {
		set_err(err, errlen, t->in_use ? "tls: a certificate added while connections are open"
					       : "tls: more certificates than tls_bearssl_config.certs "
						 "made room for",
			NULL);
		return -1;
	}
	const char *why = load_cert(&t->certs[t->ncerts], cert_pem, cert_len, key_pem, key_len);
	if (why) {
		set_err(err, errlen, "tls: ", why);
		return -1;
	}
	t->ncerts++;
	set_suites(t);
	return (int)t->ncerts - 1;
}

void tls_bearssl_share_cache(struct tls_ctx *t, struct tls_ctx *owner, void (*lock)(void),
			     void (*unlock)(void))
{
	owner->lock = t->lock = lock;
	owner->unlock = t->unlock = unlock;
	t->cache = &owner->lru;
}

/* The first c in p[0, n), or NULL (the guest's libc has no memchr). */
static const char *find_char(const char *p, size_t n, char ch)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] == ch)
			return p + i;
	return NULL;
}

static char lower(char ch)
{
	return (char)(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
}

/* a[0, n) equals b[0, n) (lower case), ignoring a's case. */
static bool name_eq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(a[i]) != b[i])
			return false;
	return true;
}

int tls_bearssl_add_name(struct tls_ctx *t, const char *name, size_t len, unsigned cert,
			 char *err, size_t errlen)
{
	if (t->nnames == TLS_SNI_MAX) {
		set_err(err, errlen, "tls: more than " XSTR(TLS_SNI_MAX) " certificate names on one "
			"context", NULL);
		return -1;
	}
	bool wild = len >= 2 && name[0] == '*' && name[1] == '.';
	if (len == 0 || len > NAME_MAX_LEN || (wild && len < 3) ||
	    find_char(wild ? name + 1 : name, wild ? len - 1 : len, '*')) {
		set_err(err, errlen, "tls: a certificate name is empty, longer than 255 bytes, or has "
			"a '*' elsewhere than a leading \"*.\"", NULL);
		return -1;
	}
	if (cert >= t->ncerts) {
		set_err(err, errlen, "tls: a name for a certificate not added", NULL);
		return -1;
	}
	struct sni_name *e = &t->names[t->nnames++];
	for (size_t i = 0; i < len; i++)
		e->name[i] = lower(name[i]);
	e->name[len] = 0;
	e->len = len;
	e->cert = cert;
	return 0;
}

/* The certificate a client's name asks for (as the OpenSSL engine's:
 * an exact name first, then "*.rest" covering exactly one label before
 * ".rest"); -1: none, the default serves it. */
static int cert_by_name(const struct tls_ctx *t, const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return -1;
	for (unsigned i = 0; i < t->nnames; i++)
		if (t->names[i].name[0] != '*' && t->names[i].len == n &&
		    name_eq(name, t->names[i].name, n))
			return (int)t->names[i].cert;
	const char *dot = find_char(name, n, '.');
	if (!dot || dot == name)
		return -1;
	size_t rest = n - (size_t)(dot - name); /* ".example.com" */
	for (unsigned i = 0; i < t->nnames; i++)
		if (t->names[i].name[0] == '*' && t->names[i].len - 1 == rest &&
		    name_eq(dot, t->names[i].name + 1, rest))
			return (int)t->names[i].cert;
	return -1;
}

void tls_bearssl_stats(const struct tls_ctx *t, void (*fn)(void *arg, const char *name, uint64_t v),
		       void *arg)
{
	fn(arg, "tls.conns_in_use", t->in_use);
	fn(arg, "tls.conn_pool_empty", t->pool_empty);
	fn(arg, "tls.overflow_taken", t->ovf_taken);
	fn(arg, "tls.overflow_pool_empty", t->ovf_empty);
	fn(arg, "tls.sessions_saved", t->saved);
	fn(arg, "tls.sessions_resumed", t->resumed);
	fn(arg, "tls.sessions_missed", t->missed);
	if (t->nnames) {
		fn(arg, "tls.sni_matched", t->sni_matched);
		fn(arg, "tls.sni_default", t->sni_default);
		fn(arg, "tls.sni_resume_refused", t->sni_refused);
	}
}

/* ---- connections ---- */

static br_ssl_engine_context *eng(const struct tls_conn *c)
{
	return (br_ssl_engine_context *)&c->sc.eng; /* BearSSL's queries take no const */
}

static void ovf_release(struct tls_conn *c)
{
	if (c->ovf)
		c->ctx->ovf_free[c->ctx->n_ovf_free++] = c->ovf;
	c->ovf = NULL;
	c->ovf_off = c->ovf_len = 0;
}

/* ---- the certificate, by the client's name ---- */

static struct tls_conn *conn_of_policy(const br_ssl_server_policy_class **pctx)
{
	return (struct tls_conn *)(void *)((char *)pctx - offsetof(struct tls_conn, policy));
}

/* Point the server context's own single-chain handler at certificate i,
 * and keep our policy in front of it (set_single_* installs its own). */
static const br_ssl_server_policy_class **use_cert(struct tls_conn *c, unsigned i)
{
	const struct cert *k = &c->ctx->certs[i];
	br_ssl_server_context *sc = &c->sc;
	if (k->key_type == BR_KEYTYPE_EC)
		br_ssl_server_set_single_ec(sc, k->chain, k->nchain, br_skey_decoder_get_ec(&k->skey),
					    BR_KEYTYPE_SIGN, k->issuer_key_type, br_ec_get_default(),
					    br_ecdsa_sign_asn1_get_default());
	else
		br_ssl_server_set_single_rsa(sc, k->chain, k->nchain, br_skey_decoder_get_rsa(&k->skey),
					     BR_KEYTYPE_SIGN, br_rsa_private_get_default(),
					     br_rsa_pkcs1_sign_get_default());
	br_ssl_server_set_policy(sc, &c->policy);
	return &sc->chain_handler.vtable;
}

/* The certificate for the name BearSSL read (counted); the default when
 * there is none or no certificate has it. */
static unsigned choose_cert(struct tls_conn *c)
{
	struct tls_ctx *t = c->ctx;
	int i = cert_by_name(t, br_ssl_engine_get_server_name(&c->sc.eng));
	if (i < 0) {
		t->sni_default++;
		return 0;
	}
	t->sni_matched++;
	return (unsigned)i;
}

static int sni_choose(const br_ssl_server_policy_class **pctx, const br_ssl_server_context *cc,
		      br_ssl_server_choices *choices)
{
	struct tls_conn *c = conn_of_policy(pctx);
	if (c->resumed) { /* looked up, then dropped (its suite or version): a full handshake */
		c->resumed = false;
		c->ctx->resumed--;
		c->ctx->missed++;
	}
	c->cert = choose_cert(c);
	const br_ssl_server_policy_class **in = use_cert(c, c->cert);
	if (!(*in)->choose(in, cc, choices))
		return 0;
	/* The new session's ID (made just before this call, sent after it)
	 * names the certificate in its last byte, for a resumption's check. */
	c->sc.eng.session.session_id[31] = (unsigned char)c->cert;
	return 1;
}

static uint32_t sni_do_keyx(const br_ssl_server_policy_class **pctx, unsigned char *data,
			    size_t *len)
{
	const br_ssl_server_policy_class **in = &conn_of_policy(pctx)->sc.chain_handler.vtable;
	return (*in)->do_keyx(in, data, len);
}

static size_t sni_do_sign(const br_ssl_server_policy_class **pctx, unsigned algo_id,
			  unsigned char *data, size_t hv_len, size_t len)
{
	const br_ssl_server_policy_class **in = &conn_of_policy(pctx)->sc.chain_handler.vtable;
	return (*in)->do_sign(in, algo_id, data, hv_len, len);
}

static const br_ssl_server_policy_class sni_policy = {
	.context_size = sizeof(const br_ssl_server_policy_class *),
	.choose = sni_choose,
	.do_keyx = sni_do_keyx,
	.do_sign = sni_do_sign,
};

/* A resumption, once the hello is read (our answer to it is queued): the
 * name must ask for the certificate the session was made with.  Else
 * refused, before the answer leaves (RFC 6066 3 wants a full handshake
 * then, which BearSSL cannot fall back to once it has resumed). */
static void check_resumed_name(struct tls_conn *c)
{
	c->name_checked = true;
	struct tls_ctx *t = c->ctx;
	if (t->ncerts < 2)
		return;
	if (choose_cert(c) == c->cert)
		return;
	t->sni_refused++;
	c->muted = true;
	c->err = TLS_ERR_HANDSHAKE;
	ovf_release(c);
}

/* The failure, if BearSSL has one: a handshake's before the session is
 * up, the record layer's after. */
static int note(struct tls_conn *c)
{
	if (c->err)
		return c->err;
	unsigned st = br_ssl_engine_current_state(eng(c));
	if (br_ssl_engine_last_error(eng(c)) != BR_ERR_OK) {
		c->err = c->hs_done ? TLS_ERR_PROTOCOL : TLS_ERR_HANDSHAKE;
		ovf_release(c);
		return c->err;
	}
	if (c->resumed && !c->name_checked && (st & (BR_SSL_SENDREC | BR_SSL_SENDAPP | BR_SSL_RECVAPP))) {
		check_resumed_name(c);
		if (c->err)
			return c->err;
	}
	if (st & (BR_SSL_SENDAPP | BR_SSL_RECVAPP))
		c->hs_done = true;
	return TLS_OK;
}

/* Feed what waits in the overflow buffer to BearSSL, as far as it takes. */
static void pump(struct tls_conn *c)
{
	br_ssl_engine_context *e = eng(c);
	while (c->ovf && (br_ssl_engine_current_state(e) & BR_SSL_RECVREC)) {
		size_t room;
		unsigned char *p = br_ssl_engine_recvrec_buf(e, &room);
		size_t k = c->ovf_len - c->ovf_off;
		if (k > room)
			k = room;
		memcpy(p, c->ovf + c->ovf_off, k);
		c->ovf_off += k;
		if (c->ovf_off == c->ovf_len)
			ovf_release(c);
		br_ssl_engine_recvrec_ack(e, k);
	}
	note(c);
}

static struct tls_conn *b_conn_new(struct tls_ctx *t)
{
	struct tls_conn *c = t->free_list;
	if (!c) {
		t->pool_empty++;
		return NULL;
	}
	unsigned char seed[32];
	if (t->random(seed, sizeof(seed)) != 0)
		return NULL;
	t->free_list = c->next_free;
	c->next_free = NULL;
	c->ctx = t;
	c->in_use = true;
	c->err = 0;
	c->hs_done = c->resumed = false;
	c->ovf = NULL;
	c->ovf_off = c->ovf_len = 0;
	t->in_use++;

	br_ssl_server_context *sc = &c->sc;
	br_ssl_engine_context *e = &sc->eng;
	br_ssl_server_zero(sc);
	br_ssl_engine_set_versions(e, BR_TLS12, BR_TLS12);
	br_ssl_engine_set_suites(e, t->suites, t->nsuites);
	br_ssl_engine_set_ec(e, &t->ecdhe);
	/* The hashes a client may name for the signature. */
	br_ssl_engine_set_hash(e, br_sha1_ID, &br_sha1_vtable);
	br_ssl_engine_set_hash(e, br_sha224_ID, &br_sha224_vtable);
	br_ssl_engine_set_hash(e, br_sha256_ID, &br_sha256_vtable);
	br_ssl_engine_set_hash(e, br_sha384_ID, &br_sha384_vtable);
	br_ssl_engine_set_hash(e, br_sha512_ID, &br_sha512_vtable);
	br_ssl_engine_set_prf_sha256(e, &br_tls12_sha256_prf);
	br_ssl_engine_set_prf_sha384(e, &br_tls12_sha384_prf);
	br_ssl_engine_set_default_aes_gcm(e); /* AES-NI and PCLMUL when the CPU has them */
	br_ssl_engine_set_default_chapol(e);
	c->cert = 0;
	c->name_checked = c->muted = false;
	c->policy = &sni_policy;
	br_ssl_server_set_policy(sc, &c->policy);
	br_ssl_engine_set_all_flags(e, BR_OPT_ENFORCE_SERVER_PREFERENCES | BR_OPT_NO_RENEGOTIATION);
	br_ssl_engine_set_protocol_names(e, t->alpn_h2 ? alpn_names : alpn_names + 1,
					 t->alpn_h2 ? 2 : 1);
	br_ssl_server_set_cache(sc, &t->cache_vt);
	br_ssl_engine_set_buffer(e, c->iobuf, sizeof(c->iobuf), 0);
	br_ssl_engine_inject_entropy(e, seed, sizeof(seed));
	memset(seed, 0, sizeof(seed));
	if (!br_ssl_server_reset(sc)) {
		c->in_use = false;
		c->next_free = t->free_list;
		t->free_list = c;
		t->in_use--;
		return NULL;
	}
	return c;
}

static void b_conn_free(struct tls_conn *c)
{
	if (!c || !c->in_use)
		return;
	struct tls_ctx *t = c->ctx;
	ovf_release(c);
	c->in_use = false;
	c->next_free = t->free_list;
	t->free_list = c;
	t->in_use--;
}

static bool closed(const struct tls_conn *c)
{
	return br_ssl_engine_current_state(eng(c)) & BR_SSL_CLOSED;
}

static size_t b_in_room(const struct tls_conn *c)
{
	if (c->err || closed(c))
		return OVF_SIZE; /* dropped */
	size_t room = 0;
	if (!c->ovf && (br_ssl_engine_current_state(eng(c)) & BR_SSL_RECVREC))
		br_ssl_engine_recvrec_buf(eng(c), &room);
	if (c->ovf)
		room += OVF_SIZE - (c->ovf_len - c->ovf_off);
	else if (c->ctx->n_ovf_free)
		room += OVF_SIZE;
	return room;
}

static long b_records_in(struct tls_conn *c, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t n = len;
	if (c->err || closed(c))
		return (long)len; /* nothing reads them any more */
	pump(c);
	br_ssl_engine_context *e = eng(c);
	while (n && !c->ovf && !c->err && (br_ssl_engine_current_state(e) & BR_SSL_RECVREC)) {
		size_t room;
		unsigned char *q = br_ssl_engine_recvrec_buf(e, &room);
		size_t k = n < room ? n : room;
		memcpy(q, p, k);
		br_ssl_engine_recvrec_ack(e, k);
		p += k;
		n -= k;
		note(c);
	}
	if (n == 0 || c->err || closed(c))
		return (long)len;
	struct tls_ctx *t = c->ctx;
	if (!c->ovf) {
		if (!t->n_ovf_free) {
			t->ovf_empty++;
			return -SK_ENOMEM;
		}
		c->ovf = t->ovf_free[--t->n_ovf_free];
		c->ovf_off = c->ovf_len = 0;
		t->ovf_taken++;
	}
	if (c->ovf_off) { /* slide what waits to the front */
		memmove(c->ovf, c->ovf + c->ovf_off, c->ovf_len - c->ovf_off);
		c->ovf_len -= c->ovf_off;
		c->ovf_off = 0;
	}
	if (OVF_SIZE - c->ovf_len < n)
		return -SK_ENOMEM; /* more than in_room() said */
	memcpy(c->ovf + c->ovf_len, p, n);
	c->ovf_len += n;
	return (long)len;
}

static int b_step(struct tls_conn *c)
{
	pump(c);
	return note(c);
}

static bool b_handshake_done(const struct tls_conn *c)
{
	return c->hs_done && !c->err;
}

static long b_read(struct tls_conn *c, void *buf, size_t len)
{
	pump(c);
	if (c->err)
		return -SK_ECONNRESET;
	br_ssl_engine_context *e = eng(c);
	unsigned st = br_ssl_engine_current_state(e);
	if (st & BR_SSL_RECVAPP) {
		size_t n;
		unsigned char *p = br_ssl_engine_recvapp_buf(e, &n);
		if (n > len)
			n = len;
		memcpy(buf, p, n);
		br_ssl_engine_recvapp_ack(e, n);
		pump(c); /* the buffer's room is back: what waited can go in */
		return (long)n;
	}
	/* The peer's close_notify: BearSSL answers it with ours, then closes;
	 * shutdown_recv (set when it arrived) says so before it is sent. */
	if ((st & BR_SSL_CLOSED) || e->shutdown_recv)
		return 0;
	return -SK_EAGAIN;
}

static long b_write(struct tls_conn *c, const void *buf, size_t len)
{
	if (note(c))
		return -SK_ECONNRESET;
	if (closed(c) || eng(c)->shutdown_recv)
		return -SK_EPIPE; /* after a clean close (theirs or ours): not an error of the peer's */
	br_ssl_engine_context *e = eng(c);
	if (!(br_ssl_engine_current_state(e) & BR_SSL_SENDAPP))
		return -SK_EAGAIN; /* the last record is still in the buffer */
	if (len > TLS_MAX_WRITE)
		len = TLS_MAX_WRITE;
	if (len == 0)
		return 0;
	size_t room;
	unsigned char *p = br_ssl_engine_sendapp_buf(e, &room);
	if (len > room)
		len = room;
	memcpy(p, buf, len);
	br_ssl_engine_sendapp_ack(e, len);
	br_ssl_engine_flush(e, 0); /* one record per write */
	return (long)len;
}

static size_t b_out_peek(const struct tls_conn *c, const uint8_t **p)
{
	*p = NULL;
	br_ssl_engine_context *e = eng(c);
	if (c->muted || !(br_ssl_engine_current_state(e) & BR_SSL_SENDREC))
		return 0;
	size_t n;
	*p = br_ssl_engine_sendrec_buf(e, &n);
	return n;
}

static void b_out_consume(struct tls_conn *c, size_t n)
{
	if (n)
		br_ssl_engine_sendrec_ack(eng(c), n);
	pump(c); /* in mono mode, room for records comes back only now */
}

static size_t b_pending_in(const struct tls_conn *c)
{
	return c->ovf ? c->ovf_len - c->ovf_off : 0;
}

static void b_close_notify(struct tls_conn *c)
{
	if (!c->err)
		br_ssl_engine_close(eng(c));
}

static int b_error(const struct tls_conn *c)
{
	return c->err;
}

static bool b_resumed(const struct tls_conn *c)
{
	return c->resumed;
}

static const char *b_version(const struct tls_conn *c)
{
	(void)c;
	return "TLSv1.2";
}

/* BearSSL's answer is one of alpn_names, itself one of tls_alpn.h's. */
static const char *b_alpn(const struct tls_conn *c)
{
	return c->hs_done ? br_ssl_engine_get_selected_protocol((br_ssl_engine_context *)&c->sc.eng)
			  : NULL;
}

unsigned tls_bearssl_cert(const struct tls_conn *c)
{
	return c->cert;
}

const char *tls_bearssl_server_name(const struct tls_conn *c)
{
	return br_ssl_engine_get_server_name(&c->sc.eng);
}

unsigned tls_bearssl_suite(const struct tls_conn *c)
{
	return c->hs_done ? c->sc.eng.session.cipher_suite : 0;
}

const struct tls_engine_ops tls_bearssl_ops = {
	.name = "bearssl",
	.half_duplex = true, /* mono mode: one buffer (tls_engine.h) */
	.conn_new = b_conn_new,
	.conn_free = b_conn_free,
	.records_in = b_records_in,
	.in_room = b_in_room,
	.step = b_step,
	.handshake_done = b_handshake_done,
	.read = b_read,
	.write = b_write,
	.out_peek = b_out_peek,
	.out_consume = b_out_consume,
	.pending_in = b_pending_in,
	.close_notify = b_close_notify,
	.error = b_error,
	.resumed = b_resumed,
	.version = b_version,
	.alpn = b_alpn,
};
