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
 * Invariants:
 *   - a connection is on the free list iff !in_use; conns_in_use counts
 *     the others;
 *   - c->ovf != NULL iff bytes [ovf_off, ovf_len) wait unfed (ovf_off <
 *     ovf_len); those bytes come before any later records_in();
 *   - hs_done only goes from false to true. */
#include "tls_bearssl.h"

#include <bearssl.h>
#include <string.h>

#include "../base/sk_err.h"

#define CHAIN_MAX 16384u   /* DER bytes of the certificate chain */
#define CHAIN_CERTS 8u
#define KEY_DER_MAX 8192u  /* a DER private key (RSA 4096 is ~2.4 KiB) */
#define OVF_SIZE TLS_BUF_SIZE
#define LRU_ENTRY 100u     /* BearSSL's LRU cache: bytes per session */

struct tls_conn {
	br_ssl_server_context sc; /* first: the session cache gets &sc */
	struct tls_ctx *ctx;
	struct tls_conn *next_free;
	uint8_t *ovf;
	size_t ovf_off, ovf_len;
	int err;          /* enum tls_status of the failure, 0 while none */
	bool in_use, hs_done, resumed;
	unsigned char iobuf[BR_SSL_BUFSIZE_MONO];
};

struct tls_ctx {
	/* The session cache the servers see: ours, in front of the LRU,
	 * to count and to learn which connection resumed. */
	const br_ssl_session_cache_class *cache_vt;
	br_ssl_session_cache_lru lru;
	br_ec_impl ecdhe;          /* the default EC code, X25519 and P-256 only */
	uint16_t suites[3];
	int key_type;              /* BR_KEYTYPE_EC or BR_KEYTYPE_RSA */
	unsigned issuer_key_type;  /* of the leaf's signer */
	br_skey_decoder_context skey; /* holds the private key's numbers */
	br_x509_certificate chain[CHAIN_CERTS];
	size_t nchain, der_len;
	unsigned char der[CHAIN_MAX];
	int (*random)(void *buf, size_t len);
	struct tls_conn *conns, *free_list;
	uint8_t **ovf_free;        /* a stack of free overflow buffers */
	unsigned n_ovf_free, n_ovf, max_conns;
	uint64_t in_use, pool_empty, ovf_taken, ovf_empty, saved, resumed, missed;
};

static const char alpn_http11[] = "http/1.1";
static const char *alpn_names[] = {alpn_http11}; /* BearSSL takes it without const */

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
	t->lru.vtable->save(&t->lru.vtable, sc, params);
}

static int cache_load(const br_ssl_session_cache_class **vt, br_ssl_server_context *sc,
		      br_ssl_session_parameters *params)
{
	struct tls_ctx *t = ctx_of_cache(vt);
	int r = t->lru.vtable->load(&t->lru.vtable, sc, params);
	struct tls_conn *c = (struct tls_conn *)(void *)sc; /* sc is its first member */
	if (r) {
		c->resumed = true;
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
	struct tls_ctx *t = ctx;
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
	struct tls_ctx *t = ctx;
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
static const char *check_leaf(struct tls_ctx *t)
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

size_t tls_bearssl_mem_size(const struct tls_bearssl_config *cfg)
{
	size_t no = n_overflow(cfg);
	return align16(sizeof(struct tls_ctx)) +
	       align16((size_t)cfg->max_conns * sizeof(struct tls_conn)) +
	       align16(no * sizeof(uint8_t *)) + no * align16(OVF_SIZE) +
	       align16((size_t)n_sessions(cfg) * LRU_ENTRY);
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
	t->cache_vt = &cache_class;
	t->random = cfg->random;
	t->max_conns = cfg->max_conns;
	for (unsigned i = cfg->max_conns; i-- > 0;) {
		t->conns[i].next_free = t->free_list;
		t->free_list = &t->conns[i];
	}

	static unsigned char buf[CHAIN_MAX]; /* one PEM object's DER at a time */
	if (pem_each(cert_pem, cert_len, is_cert, add_cert, t, buf, sizeof(buf)) < 1) {
		set_err(err, errlen,
			"tls: certificate: no PEM CERTIFICATE, or a chain over 16 KiB / 8 certificates",
			NULL);
		return NULL;
	}
	if (pem_each(key_pem, key_len, is_key, add_key, t, buf, KEY_DER_MAX) != 1) {
		set_err(err, errlen, "tls: private key: not one PEM EC or RSA key BearSSL reads", NULL);
		return NULL;
	}
	t->key_type = br_skey_decoder_key_type(&t->skey);
	if (t->key_type != BR_KEYTYPE_EC && t->key_type != BR_KEYTYPE_RSA) {
		set_err(err, errlen, "tls: private key: neither EC nor RSA", NULL);
		return NULL;
	}
	const char *why = check_leaf(t);
	if (why) {
		set_err(err, errlen, "tls: ", why);
		return NULL;
	}
	/* ECDHE on X25519 or P-256 only, whatever else the code could do. */
	t->ecdhe = *br_ec_get_default();
	t->ecdhe.supported_curves &= (1u << BR_EC_curve25519) | (1u << BR_EC_secp256r1);
	if (t->key_type == BR_KEYTYPE_EC) {
		t->suites[0] = BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
		t->suites[1] = BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384;
		t->suites[2] = BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256;
	} else {
		t->suites[0] = BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256;
		t->suites[1] = BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384;
		t->suites[2] = BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256;
	}
	return t;
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
	br_ssl_engine_set_suites(e, t->suites, 3);
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
	if (t->key_type == BR_KEYTYPE_EC)
		br_ssl_server_set_single_ec(sc, t->chain, t->nchain, br_skey_decoder_get_ec(&t->skey),
					    BR_KEYTYPE_SIGN, t->issuer_key_type, br_ec_get_default(),
					    br_ecdsa_sign_asn1_get_default());
	else
		br_ssl_server_set_single_rsa(sc, t->chain, t->nchain, br_skey_decoder_get_rsa(&t->skey),
					     BR_KEYTYPE_SIGN, br_rsa_private_get_default(),
					     br_rsa_pkcs1_sign_get_default());
	br_ssl_engine_set_all_flags(e, BR_OPT_ENFORCE_SERVER_PREFERENCES | BR_OPT_NO_RENEGOTIATION);
	br_ssl_engine_set_protocol_names(e, alpn_names, 1);
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
	if (!(br_ssl_engine_current_state(e) & BR_SSL_SENDREC))
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
};
