/* bench_tls_gnutls.c — GnuTLS 3.7 (Debian's libgnutls28-dev, on nettle) as
 * a TLS 1.3 server, in cycles, in one process: the rows of
 * bench_tls_mem.h, driven by its bt_run.  Settings as skiff's OpenSSL
 * engine: ECDSA P-256, X25519, AES-128-GCM, session tickets (one key, made
 * at start).  The client is GnuTLS too, over the same pipes.  PSK without
 * (EC)DHE on resumption: both sides' priorities hold the PSK key exchange
 * only (+PSK, no ECDHE-PSK/DHE-PSK), so the client offers psk_ke alone. */
#include <errno.h>
#include <gnutls/gnutls.h>

#include "bench_tls_mem.h"

struct conn {
	struct bt_conn k; /* first: bt_run's calls get it back */
	gnutls_session_t sv, cl;
};

static struct conn *C(struct bt_conn *k)
{
	return (struct conn *)k;
}

static ssize_t io_pull(gnutls_transport_ptr_t arg, void *buf, size_t n)
{
	long r = bt_pipe_get(arg, buf, n);
	if (r == 0) {
		errno = EAGAIN;
		return -1;
	}
	return r;
}

static ssize_t io_push(gnutls_transport_ptr_t arg, const void *buf, size_t n)
{
	return bt_pipe_put(arg, buf, n);
}

/* 0 ms: nothing is coming that is not already in the pipe. */
static int io_pull_timeout(gnutls_transport_ptr_t arg, unsigned ms)
{
	(void)ms;
	struct bt_pipe *p = arg;
	return p->w > p->r;
}

static const char prio_dhe[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:"
			       "-GROUP-ALL:+GROUP-X25519";
static const char prio_ke[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:"
			      "-GROUP-ALL:+GROUP-X25519:-KX-ALL:+PSK";

static gnutls_certificate_credentials_t scred, ccred;
static gnutls_priority_t prio[2]; /* [psk_ke] */
static gnutls_datum_t ticket_key;

static void setup(void)
{
	printf("info|library|GnuTLS %s\n", gnutls_check_version(NULL));
	if (gnutls_global_init() < 0 || gnutls_certificate_allocate_credentials(&scred) < 0 ||
	    gnutls_certificate_allocate_credentials(&ccred) < 0 ||
	    gnutls_certificate_set_x509_key_file(scred, bt_cert, bt_key, GNUTLS_X509_FMT_PEM) < 0 ||
	    gnutls_session_ticket_key_generate(&ticket_key) < 0 ||
	    gnutls_priority_init(&prio[0], prio_dhe, NULL) < 0 ||
	    gnutls_priority_init(&prio[1], prio_ke, NULL) < 0)
		bt_die("gnutls setup");
}

static void teardown(void)
{
	gnutls_priority_deinit(prio[0]);
	gnutls_priority_deinit(prio[1]);
	gnutls_certificate_free_credentials(scred);
	gnutls_certificate_free_credentials(ccred);
	gnutls_free(ticket_key.data);
	gnutls_global_deinit();
}

static void setup_io(gnutls_session_t s, struct bt_pipe *in, struct bt_pipe *out)
{
	gnutls_transport_set_pull_function(s, io_pull);
	gnutls_transport_set_push_function(s, io_push);
	gnutls_transport_set_pull_timeout_function(s, io_pull_timeout);
	gnutls_transport_set_ptr2(s, in, out);
}

/* sess: a gnutls_datum_t of client_session's */
static void client_new(struct bt_conn *k, bool psk_ke, void *sess)
{
	const gnutls_datum_t *d = sess;
	if (gnutls_init(&C(k)->cl, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0 ||
	    gnutls_priority_set(C(k)->cl, prio[psk_ke]) < 0 ||
	    gnutls_credentials_set(C(k)->cl, GNUTLS_CRD_CERTIFICATE, ccred) < 0)
		bt_die("gnutls client");
	setup_io(C(k)->cl, &k->to_cl, &k->to_sv);
	if (d && gnutls_session_set_data(C(k)->cl, d->data, d->size) < 0)
		bt_die("gnutls_session_set_data");
}

static void server_new(struct bt_conn *k, bool psk_ke)
{
	int r = gnutls_init(&C(k)->sv, GNUTLS_SERVER | GNUTLS_NONBLOCK);
	if (r >= 0)
		r = gnutls_priority_set(C(k)->sv, prio[psk_ke]);
	if (r >= 0)
		r = gnutls_credentials_set(C(k)->sv, GNUTLS_CRD_CERTIFICATE, scred);
	if (r >= 0)
		r = gnutls_session_ticket_enable_server(C(k)->sv, &ticket_key);
	if (r < 0)
		bt_die("gnutls server");
	setup_io(C(k)->sv, &k->to_sv, &k->to_cl);
}

static bool step(gnutls_session_t s, const char *side)
{
	int r = gnutls_handshake(s);
	if (r != 0 && r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
		fprintf(stderr, "%s: %s\n", side, gnutls_strerror(r));
		bt_die("gnutls_handshake");
	}
	return r == 0;
}

static bool client_step(struct bt_conn *k)
{
	return step(C(k)->cl, "client");
}

static bool server_step(struct bt_conn *k)
{
	return step(C(k)->sv, "server");
}

static void *client_session(struct bt_conn *k)
{
	char b[64];
	gnutls_datum_t *d = malloc(sizeof(*d));
	if (!d)
		bt_die("out of memory");
	if (gnutls_record_recv(C(k)->cl, b, sizeof(b)) != GNUTLS_E_AGAIN)
		bt_die("client read after the handshake");
	if (gnutls_session_get_data2(C(k)->cl, d) < 0)
		bt_die("gnutls_session_get_data2");
	return d;
}

static void session_free(void *sess)
{
	gnutls_datum_t *d = sess;
	gnutls_free(d->data);
	free(d);
}

static const char *resume_wrong(struct bt_conn *k, bool psk_ke)
{
	if (!gnutls_session_is_resumed(C(k)->sv))
		return "a handshake did not resume";
	/* psk_ke: no group was negotiated. */
	if (psk_ke != (gnutls_group_get(C(k)->sv) == 0))
		return psk_ke ? "psk_ke: a key exchange took place" : "psk_dhe_ke: no key exchange";
	return NULL;
}

static void client_free(struct bt_conn *k)
{
	gnutls_deinit(C(k)->cl);
}

static void server_free(struct bt_conn *k)
{
	gnutls_deinit(C(k)->sv);
}

static long send_data(struct bt_conn *k, bool server, const void *b, size_t n)
{
	return gnutls_record_send(server ? C(k)->sv : C(k)->cl, b, n);
}

static long recv_data(struct bt_conn *k, bool server, void *b, size_t n)
{
	return gnutls_record_recv(server ? C(k)->sv : C(k)->cl, b, n);
}

BT_MAIN("gnutls", true)
