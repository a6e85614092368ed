/* bench_tls_gnutls.c — GnuTLS 3.7 (Debian's libgnutls28-dev, on nettle) as
 * a TLS 1.3 server, in cycles, in one process: the rows of
 * bench_tls_mem.h.  Settings as skiff's OpenSSL engine: ECDSA P-256,
 * X25519, AES-128-GCM, session tickets (one key, made at start).  The
 * client is GnuTLS too, over the same pipes.  PSK without (EC)DHE on
 * resumption: both sides' priorities hold the PSK key exchange only
 * (+PSK, no ECDHE-PSK/DHE-PSK), so the client offers psk_ke alone. */
#include <errno.h>
#include <gnutls/gnutls.h>

#include "bench_tls_mem.h"

struct conn {
	gnutls_session_t sv, cl;
	struct bt_pipe to_sv, to_cl;
};

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
static gnutls_priority_t prio[2];
static gnutls_datum_t ticket_key;
static uint64_t cyc; /* the server's cycles on the connection so far */

static void setup_io(gnutls_session_t s, struct bt_pipe *in, struct bt_pipe *out)
{
	gnutls_transport_set_pull_function(s, io_pull);
	gnutls_transport_set_push_function(s, io_push);
	gnutls_transport_set_pull_timeout_function(s, io_pull_timeout);
	gnutls_transport_set_ptr2(s, in, out);
}


static void conn_new(struct conn *k, bool psk_ke, const gnutls_datum_t *sess)
{
	k->to_sv.r = k->to_sv.w = k->to_cl.r = k->to_cl.w = 0;
	if (gnutls_init(&k->cl, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0 ||
	    gnutls_priority_set(k->cl, prio[psk_ke]) < 0 ||
	    gnutls_credentials_set(k->cl, GNUTLS_CRD_CERTIFICATE, ccred) < 0)
		bt_die("gnutls client");
	setup_io(k->cl, &k->to_cl, &k->to_sv);
	if (sess && gnutls_session_set_data(k->cl, sess->data, sess->size) < 0)
		bt_die("gnutls_session_set_data");
	uint64_t t0 = tsc();
	int r = gnutls_init(&k->sv, GNUTLS_SERVER | GNUTLS_NONBLOCK);
	if (r >= 0)
		r = gnutls_priority_set(k->sv, prio[psk_ke]);
	if (r >= 0)
		r = gnutls_credentials_set(k->sv, GNUTLS_CRD_CERTIFICATE, scred);
	if (r >= 0)
		r = gnutls_session_ticket_enable_server(k->sv, &ticket_key);
	if (r >= 0)
		setup_io(k->sv, &k->to_sv, &k->to_cl);
	cyc = tsc() - t0;
	if (r < 0)
		bt_die("gnutls server");
}

static void handshake(struct conn *k)
{
	bool cdone = false, sdone = false;
	for (int i = 0; i < 10 && !(cdone && sdone); i++) {
		if (!cdone) {
			int r = gnutls_handshake(k->cl);
			if (r == 0)
				cdone = true;
			else if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
				fprintf(stderr, "client: %s\n", gnutls_strerror(r));
				bt_die("gnutls_handshake (client)");
			}
		}
		if (!sdone && k->to_sv.w > k->to_sv.r) {
			uint64_t t0 = tsc();
			int r = gnutls_handshake(k->sv);
			cyc += tsc() - t0;
			if (r == 0)
				sdone = true;
			else if (r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED) {
				fprintf(stderr, "server: %s\n", gnutls_strerror(r));
				bt_die("gnutls_handshake (server)");
			}
		}
	}
	if (!cdone || !sdone)
		bt_die("handshake did not finish");
}

/* The client reads what came after the handshake (the ticket); its session. */
static void client_session(struct conn *k, gnutls_datum_t *out)
{
	char b[64];
	ssize_t r = gnutls_record_recv(k->cl, b, sizeof(b));
	if (r != GNUTLS_E_AGAIN)
		bt_die("client read after the handshake");
	if (gnutls_session_get_data2(k->cl, out) < 0)
		bt_die("gnutls_session_get_data2");
}

static void conn_free(struct conn *k)
{
	gnutls_deinit(k->cl);
	uint64_t t0 = tsc();
	gnutls_deinit(k->sv);
	cyc += tsc() - t0;
}

static double vf[BT_HS], vr[BT_HS], vs[BT_REC], vo[BT_REC];

static void resumed_rows(const char *name, bool psk_ke)
{
	static struct conn k;
	gnutls_datum_t sess;
	conn_new(&k, psk_ke, NULL);
	handshake(&k);
	client_session(&k, &sess);
	conn_free(&k);
	for (int i = 0; i < BT_HS + BT_WARM; i++) {
		conn_new(&k, psk_ke, &sess);
		handshake(&k);
		if (!gnutls_session_is_resumed(k.sv))
			bt_die("a handshake did not resume");
		/* psk_ke: no group was negotiated. */
		if (psk_ke != (gnutls_group_get(k.sv) == 0))
			bt_die(psk_ke ? "psk_ke: a key exchange took place" : "psk_dhe_ke: no key exchange");
		gnutls_free(sess.data);
		client_session(&k, &sess); /* a ticket is for one use */
		conn_free(&k);
		if (i >= BT_WARM)
			vr[i - BT_WARM] = (double)cyc;
	}
	report(name, vr, BT_HS);
	gnutls_free(sess.data);
}

int main(void)
{
	bt_calibrate();
	printf("info|tsc_ghz|%.3f\n", 1.0 / ns_per_cycle);
	printf("info|library|GnuTLS %s\n", gnutls_check_version(NULL));
	bt_cert_make();
	if (gnutls_global_init() < 0 || gnutls_certificate_allocate_credentials(&scred) < 0 ||
	    gnutls_certificate_allocate_credentials(&ccred) < 0 ||
	    gnutls_certificate_set_x509_key_file(scred, bt_cert, bt_key, GNUTLS_X509_FMT_PEM) < 0 ||
	    gnutls_session_ticket_key_generate(&ticket_key) < 0 ||
	    gnutls_priority_init(&prio[0], prio_dhe, NULL) < 0 ||
	    gnutls_priority_init(&prio[1], prio_ke, NULL) < 0)
		bt_die("gnutls setup");
	bt_cert_remove();
	static struct conn k;
	for (int i = 0; i < BT_HS + BT_WARM; i++) {
		conn_new(&k, false, NULL);
		handshake(&k);
		conn_free(&k);
		if (i >= BT_WARM)
			vf[i - BT_WARM] = (double)cyc;
	}
	report("gnutls full handshake (server, TLS 1.3, ECDSA P-256, X25519)", vf, BT_HS);
	resumed_rows("gnutls resumed handshake, psk_dhe_ke (X25519)", false);
	resumed_rows("gnutls resumed handshake, psk_ke (no key exchange)", true);

	gnutls_datum_t sess;
	conn_new(&k, false, NULL);
	handshake(&k);
	client_session(&k, &sess);
	gnutls_free(sess.data);
	static uint8_t plain[16384], back[16384];
	memset(plain, 'a', sizeof(plain));
	for (int i = 0; i < BT_REC; i++) {
		uint64_t t0 = tsc();
		ssize_t w = gnutls_record_send(k.sv, plain, sizeof(plain));
		vs[i] = (double)(tsc() - t0) / 16.0;
		if (w != (ssize_t)sizeof(plain))
			bt_die("seal");
		while (gnutls_record_recv(k.cl, back, sizeof(back)) > 0)
			;
	}
	report("gnutls seal, per KiB (16 KiB record, AES-128-GCM)", vs, BT_REC);
	for (int i = 0; i < BT_REC; i++) {
		if (gnutls_record_send(k.cl, plain, sizeof(plain)) != (ssize_t)sizeof(plain))
			bt_die("client write");
		size_t got = 0;
		uint64_t t0 = tsc();
		while (got < sizeof(plain)) {
			ssize_t r = gnutls_record_recv(k.sv, back, sizeof(back));
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		vo[i] = (double)(tsc() - t0) / 16.0;
		if (got != sizeof(plain))
			bt_die("open");
	}
	report("gnutls open, per KiB (16 KiB record, AES-128-GCM)", vo, BT_REC);
	conn_free(&k);
	gnutls_priority_deinit(prio[0]);
	gnutls_priority_deinit(prio[1]);
	gnutls_certificate_free_credentials(scred);
	gnutls_certificate_free_credentials(ccred);
	gnutls_free(ticket_key.data);
	gnutls_global_deinit();
	return 0;
}
