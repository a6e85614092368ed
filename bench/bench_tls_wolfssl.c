/* bench_tls_wolfssl.c — wolfSSL 5.5 (Debian's libwolfssl, linked
 * statically) as a TLS 1.3 server, in cycles, in one process: the rows of
 * bench_tls_mem.h, driven by its bt_run.  Settings as skiff's OpenSSL
 * engine: ECDSA P-256, X25519, AES-128-GCM, session tickets (wolfSSL's
 * default ticket callback and keys).  The client is wolfSSL too, over the
 * same pipes. */
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>

#include "bench_tls_mem.h"

struct conn {
	struct bt_conn k; /* first: bt_run's calls get it back */
	WOLFSSL *sv, *cl;
};

static struct conn *C(struct bt_conn *k)
{
	return (struct conn *)k;
}

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

/* Server and client contexts, [psk_ke]: the psk_ke row's apart. */
static WOLFSSL_CTX *sctx[2], *cctx[2];

static void setup(void)
{
	printf("info|library|wolfSSL %s\n", wolfSSL_lib_version());
	if (wolfSSL_Init() != WOLFSSL_SUCCESS)
		bt_die("wolfSSL_Init");
	for (int i = 0; i < 2; i++) {
		sctx[i] = ctx_new(true, i);
		cctx[i] = ctx_new(false, i);
	}
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++) {
		wolfSSL_CTX_free(sctx[i]);
		wolfSSL_CTX_free(cctx[i]);
	}
	wolfSSL_Cleanup();
}

static void client_new(struct bt_conn *k, bool psk_ke, void *sess)
{
	WOLFSSL *cl = C(k)->cl = wolfSSL_new(cctx[psk_ke]);
	if (!cl || wolfSSL_UseKeyShare(cl, WOLFSSL_ECC_X25519) != WOLFSSL_SUCCESS)
		bt_die("wolfSSL client");
	wolfSSL_SetIOReadCtx(cl, &k->to_cl);
	wolfSSL_SetIOWriteCtx(cl, &k->to_sv);
	if (sess && wolfSSL_set_session(cl, sess) != WOLFSSL_SUCCESS)
		bt_die("wolfSSL_set_session");
}

static void server_new(struct bt_conn *k, bool psk_ke)
{
	WOLFSSL *sv = C(k)->sv = wolfSSL_new(sctx[psk_ke]);
	if (!sv)
		bt_die("wolfSSL server");
	wolfSSL_SetIOReadCtx(sv, &k->to_sv);
	wolfSSL_SetIOWriteCtx(sv, &k->to_cl);
}

static bool client_step(struct bt_conn *k)
{
	int r = wolfSSL_connect(C(k)->cl);
	if (r != WOLFSSL_SUCCESS && wolfSSL_get_error(C(k)->cl, r) != WOLFSSL_ERROR_WANT_READ)
		bt_die("wolfSSL_connect");
	return r == WOLFSSL_SUCCESS;
}

static bool server_step(struct bt_conn *k)
{
	int r = wolfSSL_accept(C(k)->sv);
	if (r != WOLFSSL_SUCCESS && wolfSSL_get_error(C(k)->sv, r) != WOLFSSL_ERROR_WANT_READ)
		bt_die("wolfSSL_accept");
	return r == WOLFSSL_SUCCESS;
}

static void *client_session(struct bt_conn *k)
{
	char b[64];
	int r = wolfSSL_read(C(k)->cl, b, sizeof(b));
	if (r > 0 || wolfSSL_get_error(C(k)->cl, r) != WOLFSSL_ERROR_WANT_READ)
		bt_die("client read after the handshake");
	return wolfSSL_get1_session(C(k)->cl);
}

static void session_free(void *sess)
{
	wolfSSL_SESSION_free(sess);
}

static const char *resume_wrong(struct bt_conn *k, bool psk_ke)
{
	(void)psk_ke;
	return wolfSSL_session_reused(C(k)->sv) ? NULL : "a handshake did not resume";
}

static void client_free(struct bt_conn *k)
{
	wolfSSL_free(C(k)->cl);
}

static void server_free(struct bt_conn *k)
{
	wolfSSL_free(C(k)->sv);
}

static long send_data(struct bt_conn *k, bool server, const void *b, size_t n)
{
	return wolfSSL_write(server ? C(k)->sv : C(k)->cl, b, (int)n);
}

static long recv_data(struct bt_conn *k, bool server, void *b, size_t n)
{
	return wolfSSL_read(server ? C(k)->sv : C(k)->cl, b, (int)n);
}

BT_MAIN("wolfssl", true)
