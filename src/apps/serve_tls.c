/* serve_tls.c — HTTPS beside HTTP for `skiff serve` and the hosted
 * applications (serve_tls.h). */
#include "serve_tls.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../tls/loop_tls.h"
#include "cli.h"

bool serve_tls_wanted(const struct opts *o)
{
	bool cert = opt_given(o, OPT_TLS_CERT), key = opt_given(o, OPT_TLS_KEY);
	const char *cmd = o->cmd->name;
	if (cert != key) {
		fprintf(stderr, "skiff %s: --%s needs --%s too\n", cmd, cert ? "tls-cert" : "tls-key",
			cert ? "tls-key" : "tls-cert");
		exit(2);
	}
	if (!cert && (opt_given(o, OPT_TLS_PORT) || opt_given(o, OPT_TLS_HANDSHAKE_TIMEOUT) ||
		      opt_given(o, OPT_TLS_TICKET_ROTATE) || opt_given(o, OPT_TLS_REDIRECT) ||
		      opt_given(o, OPT_TLS_SNI))) {
		fprintf(stderr, "skiff %s: --tls-port, --tls-handshake-timeout, --tls-ticket-rotate, "
				"--tls-redirect and --tls-sni need --tls-cert and --tls-key\n", cmd);
		exit(2);
	}
	return cert;
}

int serve_tls_open(struct serve_tls *t, struct loop *inner, uint16_t http_port,
		   const struct opts *o, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->port = (uint16_t)opt_num(o, OPT_TLS_PORT);
	if (t->port == http_port) {
		snprintf(err, errlen, "--tls-port %u is --port too: give each its own", t->port);
		return -1;
	}
	/* --tls-sni NAME:CERT:KEY, cut where the options module found the colons */
	struct tls_sni sni[OPT_SNI_MAX];
	for (unsigned i = 0; i < o->nsni; i++) {
		const struct opt_sni *e = &o->sni[i];
		sni[i] = (struct tls_sni){.name = e->s, .name_len = e->name_len,
					  .cert = e->s + e->name_len + 1,
					  .cert_len = (size_t)(e->key_off - e->name_len - 2),
					  .key = e->s + e->key_off};
	}
	struct tls_server_opts so = {.ticket_rotate_s = (uint32_t)opt_num(o, OPT_TLS_TICKET_ROTATE),
				     .sni = sni, .nsni = o->nsni};
	t->cert = opt_str(o, OPT_TLS_CERT);
	t->key = opt_str(o, OPT_TLS_KEY);
	t->ctx = tls_openssl_server(t->cert, t->key, &so, err, errlen);
	if (!t->ctx)
		return -1;
	struct loop_tls_config lc = {
		.engine = &tls_openssl_ops,
		.ctx = t->ctx,
		.handshake_timeout_ns = opt_num(o, OPT_TLS_HANDSHAKE_TIMEOUT) * SK_NS_PER_S,
	};
	t->loop = loop_tls_create(inner, &lc, err, errlen);
	if (!t->loop) {
		serve_tls_free(t);
		return -1;
	}
	return 0;
}

int serve_tls_start(struct serve_tls *t, struct loop *inner, const struct http_server_config *cfg,
		    const struct opts *o, char *err, size_t errlen)
{
	if (serve_tls_open(t, inner, cfg->port, o, err, errlen) < 0)
		return -1;
	struct http_server_config c = *cfg;
	c.port = t->port;
	c.https_redirect_port = 0; /* the HTTPS side serves */
	t->memsz = http_server_mem_size(&c);
	t->mem = mmap(NULL, t->memsz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	t->srv = calloc(1, sizeof(*t->srv));
	if (t->mem == MAP_FAILED || !t->srv) {
		t->mem = t->mem == MAP_FAILED ? NULL : t->mem;
		snprintf(err, errlen, "cannot reserve %zu bytes for HTTPS connections", t->memsz);
		goto fail;
	}
	int r = http_server_init(t->srv, t->mem, t->memsz, &c, t->loop);
	if (r == 0)
		r = http_server_start(t->srv);
	if (r < 0) {
		snprintf(err, errlen, "cannot listen on port %u for HTTPS: %s", t->port, strerror(-r));
		goto fail;
	}
	return 0;
fail:
	serve_tls_free(t);
	return -1;
}

int serve_tls_reload(struct serve_tls *t, char *err, size_t errlen)
{
	return tls_openssl_reload(t->ctx, t->cert, t->key, err, errlen);
}

/* The HTTPS server's counters under https.*, beside the plain one's http.* */
struct https_names {
	void (*fn)(void *ctx, const char *name, uint64_t v);
	void *ctx;
};

static void rename_https(void *ctx, const char *name, uint64_t v)
{
	struct https_names *hn = ctx;
	char b[96];
	snprintf(b, sizeof(b), "https.%s", strncmp(name, "http.", 5) == 0 ? name + 5 : name);
	hn->fn(hn->ctx, b, v);
}

static void print_plain(void *ctx, const char *name, uint64_t v)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)v);
}

void serve_tls_stats(struct serve_tls *t, void (*fn)(void *ctx, const char *name, uint64_t v),
		     void *ctx)
{
	if (!t->loop)
		return;
	struct https_names hn = {fn, ctx};
	if (t->srv)
		http_server_stats(t->srv, rename_https, &hn);
	if (t->app)
		http_app_stats(t->app, rename_https, &hn);
	loop_stats(t->loop, fn, ctx);
	tls_openssl_stats(t->ctx, fn, ctx);
}

void serve_tls_stop(struct serve_tls *t, FILE *f)
{
	if (!t->srv)
		return;
	http_server_stop(t->srv);
	if (f)
		serve_tls_stats(t, print_plain, f);
}

void serve_tls_free(struct serve_tls *t)
{
	if (t->loop)
		loop_destroy(t->loop);
	if (t->mem)
		munmap(t->mem, t->memsz);
	free(t->srv);
	tls_openssl_free(t->ctx);
	memset(t, 0, sizeof(*t));
}
