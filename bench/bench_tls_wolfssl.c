/* bench_tls_wolfssl.c — wolfSSL 5.5 (Debian's libwolfssl, linked
 * statically) as a TLS 1.3 server, in cycles, in one process: the rows of
 * bench_tls_mem.h.  Settings as skiff's OpenSSL engine: ECDSA P-256,
 * X25519, AES-128-GCM, session tickets (wolfSSL's default ticket
 * callback and keys).  The client is wolfSSL too, over the same pipes. */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include "bench_tls_mem.h"

struct conn {
	WOLFSSL *sv, *cl;
	struct bt_pipe to_sv, to_cl;
};

static int io_recv(WOLFSSL *s, char *buf, int sz, void *arg)
{
	(void)s;
	long n = bt_pipe_get(arg, buf, (size_t)sz);
	return n ? (int)n : WOLFSSL_CBIO_ERR_WANT_READ;
}

static int io_send(WOLFSSL *s, char *buf, int sz, void *arg)
{
	(void)s;
	long n = bt_pipe_put(arg, buf, (size_t)sz);
	return n ? (int)n : WOLFSSL_CBIO_ERR_WANT_WRITE;
}

static WOLFSSL_CTX *ctx_new(bool server, bool psk_ke)
{
	WOLFSSL_CTX *c = wolfSSL_CTX_new(server ? wolfTLSv1_3_server_method() : wolfTLSv1_3_client_method());
	int groups[] = {WOLFSSL_ECC_X25519};
	if (!c || wolfSSL_CTX_set_cipher_list(c, "TLS13-AES128-GCM-SHA256") != WOLFSSL_SUCCESS ||
	    wolfSSL_CTX_set_groups(c, groups, 1) != WOLFSSL_SUCCESS)
		bt_die("wolfSSL context");
	if (server && (wolfSSL_CTX_use_certificate_chain_file(c, bt_cert) != WOLFSSL_SUCCESS ||
		       wolfSSL_CTX_use_PrivateKey_file(c, bt_key, WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS))
		bt_die("wolfSSL certificate");
	if (!server)
		wolfSSL_CTX_set_verify(c, WOLFSSL_VERIFY_NONE, NULL);
	if (psk_ke && wolfSSL_CTX_no_dhe_psk(c) != 0)
		bt_die("wolfSSL_CTX_no_dhe_psk");
	wolfSSL_CTX_SetIORecv(c, io_recv);
	wolfSSL_CTX_SetIOSend(c, io_send);
	return c;
}

static uint64_t cyc; /* the server's cycles on the connection so far */

static void conn_new(struct conn *k, WOLFSSL_CTX *sc, WOLFSSL_CTX *cc, WOLFSSL_SESSION *sess)
{
	k->to_sv.r = k->to_sv.w = k->to_cl.r = k->to_cl.w = 0;
	k->cl = wolfSSL_new(cc);
	if (!k->cl || wolfSSL_UseKeyShare(k->cl, WOLFSSL_ECC_X25519) != WOLFSSL_SUCCESS)
		bt_die("wolfSSL client");
	wolfSSL_SetIOReadCtx(k->cl, &k->to_cl);
	wolfSSL_SetIOWriteCtx(k->cl, &k->to_sv);
	if (sess && wolfSSL_set_session(k->cl, sess) != WOLFSSL_SUCCESS)
		bt_die("wolfSSL_set_session");
	uint64_t t0 = tsc();
	k->sv = wolfSSL_new(sc);
	if (k->sv) {
		wolfSSL_SetIOReadCtx(k->sv, &k->to_sv);
		wolfSSL_SetIOWriteCtx(k->sv, &k->to_cl);
	}
	cyc = tsc() - t0;
	if (!k->sv)
		bt_die("wolfSSL server");
}

/* Both sides to the end of the handshake, the server's ticket included. */
static void handshake(struct conn *k)
{
	bool cdone = false, sdone = false;
	for (int i = 0; i < 10 && !(cdone && sdone); i++) {
		if (!cdone) {
			int r = wolfSSL_connect(k->cl);
			if (r == WOLFSSL_SUCCESS)
				cdone = true;
			else if (wolfSSL_get_error(k->cl, r) != WOLFSSL_ERROR_WANT_READ)
				bt_die("wolfSSL_connect");
		}
		if (!sdone && k->to_sv.w > k->to_sv.r) {
			uint64_t t0 = tsc();
			int r = wolfSSL_accept(k->sv);
			cyc += tsc() - t0;
			if (r == WOLFSSL_SUCCESS)
				sdone = true;
			else if (wolfSSL_get_error(k->sv, r) != WOLFSSL_ERROR_WANT_READ)
				bt_die("wolfSSL_accept");
		}
	}
	if (!cdone || !sdone)
		bt_die("handshake did not finish");
}

/* The client reads what came after the handshake (the ticket); its session. */
static WOLFSSL_SESSION *client_session(struct conn *k)
{
	char b[64];
	int r = wolfSSL_read(k->cl, b, sizeof(b));
	if (r > 0 || wolfSSL_get_error(k->cl, r) != WOLFSSL_ERROR_WANT_READ)
		bt_die("client read after the handshake");
	return wolfSSL_get1_session(k->cl);
}

static void conn_free(struct conn *k)
{
	wolfSSL_free(k->cl);
	uint64_t t0 = tsc();
	wolfSSL_free(k->sv);
	cyc += tsc() - t0;
}

static double vf[BT_HS], vr[BT_HS], vs[BT_REC], vo[BT_REC];

static void resumed_rows(const char *name, bool psk_ke)
{
	WOLFSSL_CTX *sc = ctx_new(true, psk_ke), *cc = ctx_new(false, psk_ke);
	static struct conn k;
	WOLFSSL_SESSION *sess = NULL;
	conn_new(&k, sc, cc, NULL);
	handshake(&k);
	sess = client_session(&k);
	conn_free(&k);
	for (int i = 0; i < BT_HS + BT_WARM; i++) {
		conn_new(&k, sc, cc, sess);
		handshake(&k);
		if (!wolfSSL_session_reused(k.sv))
			bt_die("a handshake did not resume");
		WOLFSSL_SESSION *next = client_session(&k); /* a ticket is for one use */
		wolfSSL_SESSION_free(sess);
		sess = next;
		conn_free(&k);
		if (i >= BT_WARM)
			vr[i - BT_WARM] = (double)cyc;
	}
	report(name, vr, BT_HS);
	wolfSSL_SESSION_free(sess);
	wolfSSL_CTX_free(sc);
	wolfSSL_CTX_free(cc);
}

int main(void)
{
	bt_calibrate();
	printf("info|tsc_ghz|%.3f\n", 1.0 / ns_per_cycle);
	printf("info|library|wolfSSL %s\n", wolfSSL_lib_version());
	bt_cert_make();
	if (wolfSSL_Init() != WOLFSSL_SUCCESS)
		bt_die("wolfSSL_Init");
	WOLFSSL_CTX *sc = ctx_new(true, false), *cc = ctx_new(false, false);
	static struct conn k;
	for (int i = 0; i < BT_HS + BT_WARM; i++) {
		conn_new(&k, sc, cc, NULL);
		handshake(&k);
		conn_free(&k);
		if (i >= BT_WARM)
			vf[i - BT_WARM] = (double)cyc;
	}
	report("wolfssl full handshake (server, TLS 1.3, ECDSA P-256, X25519)", vf, BT_HS);
	resumed_rows("wolfssl resumed handshake, psk_dhe_ke (X25519)", false);
	resumed_rows("wolfssl resumed handshake, psk_ke (no key exchange)", true);

	conn_new(&k, sc, cc, NULL);
	handshake(&k);
	wolfSSL_SESSION_free(client_session(&k));
	static uint8_t plain[16384], back[16384];
	memset(plain, 'a', sizeof(plain));
	for (int i = 0; i < BT_REC; i++) {
		uint64_t t0 = tsc();
		int w = wolfSSL_write(k.sv, plain, sizeof(plain));
		vs[i] = (double)(tsc() - t0) / 16.0;
		if (w != (int)sizeof(plain))
			bt_die("seal");
		while (wolfSSL_read(k.cl, back, sizeof(back)) > 0)
			;
	}
	report("wolfssl seal, per KiB (16 KiB record, AES-128-GCM)", vs, BT_REC);
	for (int i = 0; i < BT_REC; i++) {
		if (wolfSSL_write(k.cl, plain, sizeof(plain)) != (int)sizeof(plain))
			bt_die("client write");
		size_t got = 0;
		uint64_t t0 = tsc();
		while (got < sizeof(plain)) {
			int r = wolfSSL_read(k.sv, back, sizeof(back));
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		vo[i] = (double)(tsc() - t0) / 16.0;
		if (got != sizeof(plain))
			bt_die("open");
	}
	report("wolfssl open, per KiB (16 KiB record, AES-128-GCM)", vo, BT_REC);
	conn_free(&k);
	wolfSSL_CTX_free(sc);
	wolfSSL_CTX_free(cc);
	wolfSSL_Cleanup();
	bt_cert_remove();
	return 0;
}
