/* guest_main.c — the main of build/vm/skiff-serve-static, the HTTP app that
 * the Linux benchmark guest runs (bench/vm/, issue 7).
 *
 * It is `skiff serve` and nothing else: the same serve.c, sites runtime
 * (host/sites_host.c, http/app.c) and loop_host/loop_linux.c as
 * build/skiff, linked statically against libc only.
 * The full build/skiff also carries the AF_XDP and pcap devices and HTTPS,
 * whose libraries (libxdp, libbpf, libpcap, libelf, OpenSSL) have no place
 * in an initramfs; plain `skiff serve --stack linux` never uses them.  So this main
 * offers the one command, with the same arguments:
 *
 *   skiff-serve-static serve --stack linux --port 80
 *   skiff-serve-static --stack linux --port 80        (the same)
 *
 * With more than one vCPU, /init (bench/vm/init.c) runs one copy per vCPU
 * with SKIFF_GUEST_REUSEPORT=1 in the environment.  This build is linked
 * with -Wl,--wrap=bind (mk/benchvm.mk), so every bind(2) of loop_linux.c
 * passes through __wrap_bind below, which then sets SO_REUSEPORT on a TCP
 * socket: the copies' listeners on port 80 form one group and the kernel
 * hashes each new connection to one of them.  The guest binary alone does
 * this; build/skiff's listeners are untouched (a second `skiff serve` on
 * a taken port must still fail). */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../../src/host/cli.h"
#include "../../src/host/serve_skiff.h"
#include "../../src/host/tls_flags.h"
#include "../../src/host/sites_host.h"
#include "../../src/dev/dev_open.h"
#include "../../src/tls/tls_engine.h"

/* serve.c also offers --stack skiff, whose devices this build leaves out:
 * these stand in for host/serve_skiff.c and host/hoststack.c (the stack
 * options; serve_skiff_open below refuses the stack itself), so neither
 * is linked and nothing pulls in libxdp or libpcap. */
void hoststack_options(struct hoststack_config *cfg, struct opts *o)
{
	(void)cfg;
	(void)o;
}
struct loop *serve_skiff_open(const struct serve_skiff_config *cfg, char *err, size_t errlen)
{
	(void)cfg;
	snprintf(err, errlen, "--stack skiff is not in this build (use --stack linux)");
	return NULL;
}
void serve_skiff_describe(struct loop *l, char *buf, size_t len)
{
	(void)l;
	snprintf(buf, len, " dev=none");
}
/* serve.c asks how many queues an xdp: device has; there is no device
 * here, and dev_open.o would bring libxdp and libpcap in. */
unsigned dev_rx_queues(const char *ifname)
{
	(void)ifname;
	return 0;
}
const uint8_t *serve_skiff_mac(struct loop *l)
{
	(void)l;
	return NULL;
}
void serve_skiff_announce(struct loop *l)
{
	(void)l;
}
void serve_skiff_print_stats(struct loop *l, FILE *f)
{
	(void)l;
	(void)f;
}
const struct dev_stats *serve_skiff_dev_stats(struct loop *l)
{
	(void)l;
	return NULL;
}
uint32_t serve_skiff_unfinished(struct loop *l)
{
	(void)l;
	return 0;
}
/* The admin sockets (host/admin_host.c, --metrics and skiff stat) ask the
 * stack for these; with no skiff stack here there is nothing to give. */
void serve_skiff_stats(struct loop *l, void (*fn)(void *ctx, const char *name, uint64_t v),
		       void *ctx)
{
	(void)l;
	(void)fn;
	(void)ctx;
}
void serve_skiff_set_side(struct loop *l, int fd, void (*fn)(void *ctx, sk_time_ns now),
			  void *ctx)
{
	(void)l;
	(void)fd;
	(void)fn;
	(void)ctx;
}
bool serve_skiff_flow_steered(struct loop *l)
{
	(void)l;
	return false;
}
void serve_skiff_conns(struct loop *l, FILE *f)
{
	(void)l;
	(void)f;
}

/* The sites runtime (host/sites_host.c) opens a TLS listener with
 * OpenSSL's engine (tls/tls_openssl.c), which the initramfs does not
 * carry: these stand in for it, so libssl is not linked.  The flags' TLS
 * options are refused before (tls_flags_wanted below), so only an engine
 * that is never made is ever asked for. */
struct tls_ctx *tls_openssl_server(const char *cert_file, const char *key_file,
				   const struct tls_server_opts *o, char *err, size_t errlen)
{
	(void)cert_file;
	(void)key_file;
	(void)o;
	snprintf(err, errlen, "HTTPS is not in this build");
	return NULL;
}
void tls_openssl_free(struct tls_ctx *ctx)
{
	(void)ctx;
}
int tls_openssl_reload(struct tls_ctx *ctx, const char *cert_file, const char *key_file,
		       char *err, size_t errlen)
{
	(void)ctx;
	(void)cert_file;
	(void)key_file;
	snprintf(err, errlen, "HTTPS is not in this build");
	return -1;
}
void tls_openssl_stats(const struct tls_ctx *ctx,
		       void (*fn)(void *arg, const char *name, uint64_t v), void *arg)
{
	(void)ctx;
	(void)fn;
	(void)arg;
}
const struct tls_engine_ops tls_openssl_ops = {.name = "none"};

/* HTTPS needs OpenSSL, which the initramfs does not carry either, and
 * the benchmark serves plain HTTP: this stands in for host/tls_flags.c,
 * so any --tls-* option is refused with exit 2, as an unusable option is
 * in build/skiff. */
bool tls_flags_wanted(const struct opts *o)
{
	if (opt_given(o, OPT_TLS_CERT) || opt_given(o, OPT_TLS_KEY) || opt_given(o, OPT_TLS_PORT) ||
	    opt_given(o, OPT_TLS_HANDSHAKE_TIMEOUT) || opt_given(o, OPT_TLS_TICKET_ROTATE) ||
	    opt_given(o, OPT_TLS_REDIRECT) || opt_given(o, OPT_TLS_SNI)) {
		fprintf(stderr, "skiff serve: --tls-* is not in this build (no OpenSSL in the guest)\n");
		exit(2);
	}
	return false;
}

int __real_bind(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	const char *rp = getenv("SKIFF_GUEST_REUSEPORT");
	int type = 0;
	socklen_t tl = sizeof(type);
	if (rp && !strcmp(rp, "1") && sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) &&
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM) {
		int one = 1;
		/* Refused, the second copy's bind fails with EADDRINUSE and says
		 * so: a group that does not form is never silent. */
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
			perror("skiff-serve-static: SO_REUSEPORT");
	}
	return __real_bind(fd, sa, len);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	return cmd_serve(argc, argv);
}
