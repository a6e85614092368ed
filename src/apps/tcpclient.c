/* tcpclient.c — `skiff tcp-client`: skiff's TCP engine as the active side,
 * so tests can drive it against a Linux server (the other direction of the
 * echo tests, and close-heavy loads where skiff holds the TIME_WAITs).
 *
 * Each connection connects, sends the whole payload (a file, or N seeded
 * pseudo-random bytes), half-closes, and reads until the peer's FIN.  What
 * was sent and what came back are hashed (SHA-256) as they stream, so the
 * payload never has to fit in memory twice.  With --expect-echo a
 * connection succeeds only if it got back exactly what it sent.
 *
 * Runs on hoststack + the runner like `skiff echo`: the engine's events come
 * to on_tcp; the start, the spacing of sequential connections and the
 * overall timeout are app timers. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../plat/plat.h"
#include "cli.h"
#include "hoststack.h"

/* ---- SHA-256, streaming: OpenSSL's libcrypto (EVP), never our own ---- */

/* One running digest.  `ctx` is NULL when not started or already finished. */
struct sha256 {
	EVP_MD_CTX *ctx;
};

static bool sha256_init(struct sha256 *s)
{
	s->ctx = EVP_MD_CTX_new();
	if (!s->ctx)
		return false;
	if (EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(s->ctx);
		s->ctx = NULL;
		return false;
	}
	return true;
}

static void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	if (s->ctx && len)
		EVP_DigestUpdate(s->ctx, data, len);
}

/* Hex digest into out[65] (empty if the digest never started); `s` is
 * consumed and freed. */
static void sha256_hex(struct sha256 *s, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	out[0] = 0;
	if (!s->ctx)
		return;
	if (EVP_DigestFinal_ex(s->ctx, md, &n) == 1 && n == 32)
		for (unsigned i = 0; i < n; i++)
			snprintf(out + 2 * i, 3, "%02x", md[i]);
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
}

/* ---- payload ---- */

/* splitmix64: a seeded, reproducible byte stream, so two runs (or a Linux
 * peer given the same seed) can produce the same data without a file. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define STAGE_SIZE 65536

struct conn {
	int sock;         /* -1 when not open */
	bool connected, shut, done, ok;
	uint64_t sent, received;
	uint64_t rng;     /* random payload: generator state */
	uint8_t *stage;   /* random payload: generated, not yet accepted by tcp_send */
	uint32_t stage_off, stage_len;
	struct sha256 hs, hr;
	sk_time_ns t_start;
	char err[96];
};

struct client {
	struct hoststack hs;
	uint32_t dst;
	uint16_t dport;
	const uint8_t *file; /* --send-file, mmap'ed (NULL: random) */
	uint64_t total;      /* bytes per connection */
	uint64_t seed;
	bool expect_echo;
	uint32_t conns, parallel; /* total connections, at most `parallel` open at once */
	uint32_t started, finished, failed;
	struct conn *c;
	sk_time_ns t0, t_end, deadline;
	bool timed_out;
	uint64_t bytes_sent, bytes_received;
	char hex_sent[65], hex_recv[65]; /* of the last connection */
	bool hashes_differ;  /* some connection's hashes differed from the first's */
	char first_err[128];
	uint64_t retries;    /* connect attempts that failed at once (pool, ports) */
};

static volatile sig_atomic_t client_stop;

static void on_signal(int sig)
{
	(void)sig;
	client_stop = 1;
}

static void conn_fail(struct conn *c, const char *why)
{
	if (!c->err[0])
		snprintf(c->err, sizeof(c->err), "%s", why);
	c->ok = false;
}

/* Give the socket back and account for the connection. */
static void conn_finish(struct client *cl, struct conn *c, sk_time_ns now)
{
	if (c->sock >= 0) {
		if (c->ok)
			tcp_close(cl->hs.tcp, now, c->sock);
		else
			tcp_abort(cl->hs.tcp, now, c->sock);
		c->sock = -1;
	}
	if (c->ok && cl->expect_echo && c->received != c->sent)
		conn_fail(c, "echo length differs");
	char hs[65], hr[65];
	sha256_hex(&c->hs, hs);
	sha256_hex(&c->hr, hr);
	if (c->ok && cl->expect_echo && strcmp(hs, hr) != 0)
		conn_fail(c, "echo sha256 differs");
	if (cl->finished > 0 && (strcmp(hs, cl->hex_sent) != 0 || strcmp(hr, cl->hex_recv) != 0))
		cl->hashes_differ = true;
	memcpy(cl->hex_sent, hs, sizeof(hs));
	memcpy(cl->hex_recv, hr, sizeof(hr));
	cl->bytes_sent += c->sent;
	cl->bytes_received += c->received;
	cl->finished++;
	if (!c->ok) {
		cl->failed++;
		if (!cl->first_err[0])
			snprintf(cl->first_err, sizeof(cl->first_err), "connection %u: %s",
				 cl->finished, c->err);
	}
	c->done = true;
	free(c->stage);
	c->stage = NULL;
}

static bool conn_start(struct client *cl, struct conn *c, sk_time_ns now)
{
	int s = tcp_connect(cl->hs.tcp, now, cl->dst, cl->dport);
	if (s < 0)
		return false; /* pool or ports exhausted for now: retried next turn */
	memset(c, 0, sizeof(*c));
	c->sock = s;
	c->ok = true;
	c->rng = cl->seed;
	c->t_start = now;
	if (!sha256_init(&c->hs) || !sha256_init(&c->hr)) {
		char unused[65];
		sha256_hex(&c->hs, unused); /* frees whichever started */
		sha256_hex(&c->hr, unused);
		tcp_abort(cl->hs.tcp, now, s);
		c->sock = -1;
		return false;
	}
	if (!cl->file) {
		c->stage = malloc(STAGE_SIZE);
		if (!c->stage) {
			char unused[65];
			sha256_hex(&c->hs, unused);
			sha256_hex(&c->hr, unused);
			tcp_abort(cl->hs.tcp, now, s);
			c->sock = -1;
			return false;
		}
	}
	tcp_set_user(cl->hs.tcp, s, c);
	cl->started++;
	return true;
}

/* Open connections until `parallel` are in flight or all have started. */
static void start_more(struct client *cl, sk_time_ns now)
{
	for (uint32_t i = 0; i < cl->parallel && cl->started < cl->conns; i++) {
		struct conn *c = &cl->c[i];
		if (c->sock >= 0 && !c->done)
			continue;
		if (!conn_start(cl, c, now)) {
			cl->retries++;
			return;
		}
	}
}

/* Push payload until the send buffer is full or everything is queued; then
 * half-close. */
static void conn_send(struct client *cl, struct conn *c, sk_time_ns now)
{
	struct tcp_stack *tcp = cl->hs.tcp;
	(void)now;
	while (!c->shut && c->sent < cl->total) {
		const uint8_t *p;
		size_t n;
		if (cl->file) {
			p = cl->file + c->sent;
			n = (size_t)SK_MIN(cl->total - c->sent, (uint64_t)1 << 20);
		} else {
			if (c->stage_off == c->stage_len) {
				uint64_t left = cl->total - c->sent;
				uint32_t len = (uint32_t)SK_MIN(left, (uint64_t)STAGE_SIZE);
				for (uint32_t k = 0; k < len; k += 8) {
					uint64_t r = splitmix64(&c->rng);
					memcpy(c->stage + k, &r, SK_MIN(8u, len - k));
				}
				c->stage_off = 0;
				c->stage_len = len;
			}
			p = c->stage + c->stage_off;
			n = c->stage_len - c->stage_off;
		}
		int r = tcp_send(tcp, c->sock, p, n);
		if (r == -SK_EAGAIN)
			return; /* TCP_EV_WRITE brings us back */
		if (r < 0) {
			conn_fail(c, "send failed");
			return;
		}
		sha256_update(&c->hs, p, (size_t)r);
		c->sent += (uint64_t)r;
		if (!cl->file)
			c->stage_off += (uint32_t)r;
		if ((size_t)r < n)
			return;
	}
	if (!c->shut && c->sent == cl->total) {
		tcp_shutdown(tcp, c->sock, TCP_SHUT_WR);
		c->shut = true;
	}
}

/* Read what has arrived; returns true at end of stream or on an error. */
static bool conn_recv(struct client *cl, struct conn *c)
{
	uint8_t buf[65536];
	for (;;) {
		int n = tcp_recv(cl->hs.tcp, c->sock, buf, sizeof(buf));
		if (n == -SK_EAGAIN)
			return false;
		if (n == 0)
			return true;
		if (n < 0) {
			char why[64];
			snprintf(why, sizeof(why), "recv error %d after %llu bytes", n,
				 (unsigned long long)c->received);
			conn_fail(c, why);
			return true;
		}
		sha256_update(&c->hr, buf, (size_t)n);
		c->received += (uint64_t)n;
		if (cl->expect_echo && c->received > c->sent) {
			conn_fail(c, "got back more than was sent");
			return true;
		}
	}
}

static void on_tcp(void *ctx, struct runner *l, const struct tcp_event *ev, int n, sk_time_ns now)
{
	struct client *cl = ctx;
	(void)l;
	for (int i = 0; i < n; i++) {
		struct conn *c = ev[i].user;
		if (!c || c->done || c->sock != ev[i].sock)
			continue;
		if (ev[i].events & TCP_EV_WRITE)
			c->connected = true;
		bool end = conn_recv(cl, c);
		if (!end && c->ok && c->connected)
			conn_send(cl, c, now);
		if (end && c->ok && !c->connected)
			conn_fail(c, "connection failed");
		if (end || !c->ok)
			conn_finish(cl, c, now);
	}
	start_more(cl, now);
	if (cl->finished == cl->conns) {
		cl->t_end = now;
		client_stop = 1;
	}
}

static sk_time_ns app_deadline(void *ctx)
{
	struct client *cl = ctx;
	/* 0 until the first connection is started; afterwards, retry a start
	 * that found no free socket soon, else only the overall timeout. */
	if (cl->started == 0)
		return 0;
	if (cl->started < cl->conns && cl->started - cl->finished < cl->parallel)
		return plat_now() + SK_NS_PER_MS;
	return cl->deadline;
}

static void app_timers(void *ctx, sk_time_ns now)
{
	struct client *cl = ctx;
	if (now >= cl->deadline) {
		cl->timed_out = true;
		cl->t_end = now;
		client_stop = 1;
		return;
	}
	start_more(cl, now);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: skiff tcp-client --dev DEV --ip ADDR/LEN [--gw ADDR] [--mac MAC]\n"
		"                        --connect IP:PORT (--send-file F | --send-random N [--seed S])\n"
		"                        [--expect-echo] [--conns N [--sequential | --parallel P]]\n"
		"                        [--timeout SEC] [--stats] [--pcap FILE] [--spin-us N]\n"
		"\n"
		"Runs skiff's own TCP as the client: each connection sends the payload, half-closes\n"
		"and reads until the server closes, hashing (SHA-256) what it sent and what came back.\n"
		"\n"
		"  --dev DEV          tap:NAME | packet:IFACE | xdp:IFACE | switch:NAME/PORT\n"
		"  --ip ADDR/LEN      this host's IPv4 address and prefix length\n"
		"  --gw ADDR          default gateway (optional)\n"
		"  --mac MAC          this host's MAC (default: random, locally administered)\n"
		"  --connect IP:PORT  the server\n"
		"  --send-file F      send the contents of file F\n"
		"  --send-random N    send N pseudo-random bytes (suffix k, M, G: KiB, MiB, GiB)\n"
		"  --seed S           seed of the random payload (default 1)\n"
		"  --expect-echo      succeed only if exactly the sent bytes came back\n"
		"  --conns N          connections in all (default 1)\n"
		"  --sequential       one connection at a time (the default)\n"
		"  --parallel P       up to P connections at a time\n"
		"  --timeout SEC      give up after SEC seconds in all (default 60)\n"
		"  --stats            print counters on exit\n"
		"  --pcap FILE        record every frame the device sees\n"
		"  --spin-us N|auto   poll this long after work before parking (default 100);\n"
		"                     auto: learn it from the arrival gaps\n"
		"  -h, --help         this text\n"
		"\n"
		"Prints one result line:\n"
		"  skiff tcp-client: conns=N ok=N failed=N sent=B received=B secs=S mbit_s=R\n"
		"                    sha256_sent=HEX sha256_received=HEX [error=...]\n"
		"(the hashes of the last connection).  Exit 0 if every connection succeeded, 1 if\n"
		"one failed or the time ran out, 2 on bad arguments.\n");
}

/* "123", "20M", "1G" -> bytes.  Returns 0 or -1. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	unsigned shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'M')
		shift = 20;
	else if (*end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s || *end || errno || *s == '-' || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* "198.18.0.1:7" -> host-order address and port. */
static int parse_endpoint(const char *s, uint32_t *ip, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s || colon - s >= 16)
		return -1;
	char host[16];
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	uint32_t p;
	if (cli_parse_ipv4(host, ip) < 0 || *ip == 0 || parse_u32(colon + 1, 1, 65535, &p) < 0)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

int cmd_tcp_client(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", required_argument, NULL, 'd'},     {"ip", required_argument, NULL, 'i'},
		{"gw", required_argument, NULL, 'g'},      {"mac", required_argument, NULL, 'm'},
		{"connect", required_argument, NULL, 'c'}, {"send-file", required_argument, NULL, 'f'},
		{"send-random", required_argument, NULL, 'r'}, {"seed", required_argument, NULL, 'e'},
		{"expect-echo", no_argument, NULL, 'E'},   {"conns", required_argument, NULL, 'n'},
		{"sequential", no_argument, NULL, 'q'},    {"parallel", required_argument, NULL, 'P'},
		{"timeout", required_argument, NULL, 't'}, {"stats", no_argument, NULL, 's'},
		{"pcap", required_argument, NULL, 'p'},    {"spin-us", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	static struct client cl; /* static: large, and on_signal's flag lives beside it */
	memset(&cl, 0, sizeof(cl));
	struct hoststack_config cfg = {HOSTSTACK_CONFIG_DEFAULTS, .tcp = true};
	bool have_ip = false, have_dst = false, have_random = false, stats = false;
	bool sequential = false, have_parallel = false;
	const char *file = NULL;
	uint32_t timeout_s = 60;
	cl.conns = 1;
	cl.parallel = 1;
	cl.seed = 1;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (hoststack_option("tcp-client", c, optarg, &cfg, &have_ip))
			continue;
		switch (c) {
		case 'c':
			if (parse_endpoint(optarg, &cl.dst, &cl.dport) < 0)
				cli_usage_error("tcp-client", "--connect wants IP:PORT (e.g. 198.18.0.1:7), not '%s'", optarg);
			have_dst = true;
			break;
		case 'f': file = optarg; break;
		case 'r':
			if (parse_size(optarg, &cl.total) < 0)
				cli_usage_error("tcp-client", "--send-random wants a byte count like 1048576 or 20M, not '%s'", optarg);
			have_random = true;
			break;
		case 'e': {
			char *end;
			errno = 0;
			cl.seed = strtoull(optarg, &end, 0);
			if (end == optarg || *end || errno || *optarg == '-')
				cli_usage_error("tcp-client", "--seed wants an unsigned integer, not '%s'", optarg);
			break;
		}
		case 'E': cl.expect_echo = true; break;
		case 'n':
			if (parse_u32(optarg, 1, 100000000, &cl.conns) < 0)
				cli_usage_error("tcp-client", "--conns wants 1..100000000, not '%s'", optarg);
			break;
		case 'q': sequential = true; break;
		case 'P':
			if (parse_u32(optarg, 1, 65536, &cl.parallel) < 0)
				cli_usage_error("tcp-client", "--parallel wants 1..65536, not '%s'", optarg);
			have_parallel = true;
			break;
		case 't':
			if (parse_u32(optarg, 1, 86400, &timeout_s) < 0)
				cli_usage_error("tcp-client", "--timeout wants 1..86400 seconds, not '%s'", optarg);
			break;
		case 's': stats = true; break;
		case 'h': usage(stdout); return 0;
		default:
			cli_usage_error("tcp-client", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		cli_usage_error("tcp-client", "unexpected argument '%s'", argv[optind]);
	hoststack_check_options("tcp-client", &cfg, have_ip);
	if (!have_dst)
		cli_usage_error("tcp-client", "--connect is required");
	if (!!file == have_random)
		cli_usage_error("tcp-client", "give exactly one of --send-file and --send-random");
	if (sequential && have_parallel)
		cli_usage_error("tcp-client", "--sequential and --parallel exclude each other");
	if (cl.parallel > cl.conns)
		cl.parallel = cl.conns;

	int fd = -1;
	void *map = NULL;
	if (file) {
		struct stat sb;
		fd = open(file, O_RDONLY);
		if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
			fprintf(stderr, "skiff tcp-client: cannot read '%s': %s\n", file,
				fd < 0 ? strerror(errno) : "not a regular file");
			if (fd >= 0)
				close(fd);
			return 1;
		}
		cl.total = (uint64_t)sb.st_size;
		if (cl.total) {
			map = mmap(NULL, (size_t)cl.total, PROT_READ, MAP_PRIVATE, fd, 0);
			if (map == MAP_FAILED) {
				fprintf(stderr, "skiff tcp-client: cannot map '%s': %s\n", file, strerror(errno));
				close(fd);
				return 1;
			}
			cl.file = map;
		} else {
			static const uint8_t empty[1];
			cl.file = empty;
		}
	}
	cl.c = calloc(cl.parallel, sizeof(*cl.c));
	if (!cl.c) {
		fprintf(stderr, "skiff tcp-client: out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < cl.parallel; i++)
		cl.c[i].sock = -1;

	char err[256];
	if (hoststack_open(&cl.hs, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff tcp-client: %s\n", err);
		free(cl.c);
		return 1;
	}
	cl.hs.loop.on_tcp = on_tcp;
	cl.hs.loop.app_deadline = app_deadline;
	cl.hs.loop.app_timers = app_timers;
	cl.hs.loop.ctx = &cl;
	hoststack_announce(&cl.hs);

	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	cl.t0 = plat_now();
	cl.deadline = cl.t0 + (sk_time_ns)timeout_s * SK_NS_PER_S;
	int rc = hoststack_run(&cl.hs, &client_stop);
	if (!cl.t_end)
		cl.t_end = plat_now();
	/* Connections still open (timeout, signal) count as failed, with what
	 * they moved so far. */
	for (uint32_t i = 0; i < cl.parallel; i++) {
		struct conn *cn = &cl.c[i];
		if (cn->sock >= 0 && !cn->done) {
			char why[96];
			snprintf(why, sizeof(why), "unfinished (sent %llu, received %llu)",
				 (unsigned long long)cn->sent, (unsigned long long)cn->received);
			conn_fail(cn, cl.timed_out ? why : "interrupted");
			conn_finish(&cl, cn, cl.t_end);
		}
	}
	/* Let the aborts and FINs of the last turn leave. */
	tcp_poll(cl.hs.tcp, plat_now());
	dev_tx_sync(cl.hs.dev);

	double secs = (double)(cl.t_end - cl.t0) / 1e9;
	uint32_t ok = cl.finished - cl.failed;
	bool all_ok = rc == 0 && !cl.timed_out && cl.finished == cl.conns && cl.failed == 0;
	printf("skiff tcp-client: conns=%u ok=%u failed=%u sent=%llu received=%llu secs=%.3f "
	       "mbit_s=%.1f sha256_sent=%s sha256_received=%s%s%s%s%s\n",
	       cl.conns, ok, cl.conns - ok, (unsigned long long)cl.bytes_sent,
	       (unsigned long long)cl.bytes_received, secs,
	       secs > 0 ? (double)(cl.bytes_sent + cl.bytes_received) * 8 / secs / 1e6 : 0.0,
	       cl.finished ? cl.hex_sent : "-", cl.finished ? cl.hex_recv : "-",
	       cl.hashes_differ ? " note=hashes_differ_between_connections" : "",
	       cl.timed_out ? " error=timeout" : "", cl.first_err[0] ? " first_error=" : "",
	       cl.first_err[0] ? cl.first_err : "");
	if (stats) {
		printf("client.connect_retries %llu\n", (unsigned long long)cl.retries);
		hoststack_print_stats(&cl.hs, stdout);
	}
	fflush(stdout);
	hoststack_close(&cl.hs);
	free(cl.c);
	if (map)
		munmap(map, (size_t)cl.total);
	if (fd >= 0)
		close(fd);
	return all_ok ? 0 : 1;
}
