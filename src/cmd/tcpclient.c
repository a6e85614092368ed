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
 * to on_tcp; the start, the spacing of sequential connections, the
 * overall timeout and --tcp-trace's samples are app timers.
 *
 * --tcp-trace FILE: every TRACE_NS, one TSV line per open connection with
 * what tcp_info says of it (what `skiff stat` shows of a server's), so a
 * benchmark can see a transfer's window, flight and RTT over time. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../plat/plat.h"
#include "../host/cli.h"
#include "../host/hoststack.h"

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
	uint64_t traced_acked; /* --tcp-trace: the last `acked` written */
	char err[96];
};

struct client {
	struct hoststack hs;
	struct sk_addr dst; /* either family; v6 needs --ip6 */
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
	uint64_t retries;    /* connect attempts that failed at once (pool, ports, no v6 source yet) */
	sk_time_ns retry_at; /* after a failed start: when to try again */
	FILE *trace;         /* --tcp-trace, or NULL */
	sk_time_ns trace_at; /* the next sample */
};

/* 10 ms: a few samples per round trip on the bench's paths (20-100 ms),
 * and a 30 s transfer is 3,000 lines a connection. */
#define TRACE_NS (10 * SK_NS_PER_MS)

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

static void trace_line(struct client *cl, struct conn *c, sk_time_ns now);

/* Give the socket back and account for the connection. */
static void conn_finish(struct client *cl, struct conn *c, sk_time_ns now)
{
	if (cl->trace)
		trace_line(cl, c, now); /* its last line: the bytes acked at the end */
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
	int s = tcp_connect_addr(cl->hs.tcp, now, &cl->dst, cl->dport);
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
		bool first = cl->started == 0;
		if (!conn_start(cl, c, now)) {
			cl->retries++;
			cl->retry_at = now + SK_NS_PER_MS;
			return;
		}
		if (first && cl->retries)
			cl->t0 = now; /* waited for DAD: the rate counts from the first connect */
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

/* One line for an open connection: ms since the start, its number, then
 * tcp_info's fields (bytes, microseconds, bytes/s), then `acked`: the
 * payload the peer has acknowledged, what was handed to tcp_send less what
 * the stack still holds (unsent, and sent but unacked).  unacked counts
 * sequence space, so while a SYN or FIN is unacked it reads one byte low
 * (clamped at 0); the line never shows less than the last one did (a FIN
 * sent would otherwise take a byte back), so it is the progress curve,
 * exact once everything is acked (tests/trace_check.py). */
static void trace_line(struct client *cl, struct conn *c, sk_time_ns now)
{
	struct tcp_info in;
	if (c->sock < 0 || c->done || tcp_info(cl->hs.tcp, c->sock, &in) != 0)
		return;
	uint64_t held = (uint64_t)in.unsent + in.unacked;
	uint64_t acked = c->sent > held ? c->sent - held : 0;
	acked = SK_MAX(acked, c->traced_acked);
	c->traced_acked = acked;
	char bw[24] = "";
	if (in.cc_mode)
		snprintf(bw, sizeof(bw), "%llu", (unsigned long long)in.cc_bw);
	fprintf(cl->trace,
		"%.1f\t%u\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%s\t%s\t%s\t%s\n",
		(double)(now - cl->t0) / 1e6, (unsigned)(c - cl->c), tcp_state_name(in.state),
		in.cwnd, in.ssthresh, in.pipe, in.unacked, in.unsent, in.sndbuf, in.snd_wnd,
		in.rcv_wnd, in.srtt_us, in.rto_ms, (unsigned long long)in.pacing_rate,
		(unsigned long long)in.retransmits, (unsigned long long)acked,
		tcp_limit_name((enum tcp_limit)in.limit), in.recovery ? "recovery" : "open", bw,
		in.cc_mode ? in.cc_mode : "");
}

static void trace_sample(struct client *cl, sk_time_ns now)
{
	for (uint32_t i = 0; i < cl->parallel; i++)
		trace_line(cl, &cl->c[i], now);
}

static sk_time_ns app_deadline(void *ctx)
{
	struct client *cl = ctx;
	sk_time_ns d = cl->deadline;
	if (cl->trace && cl->started > 0)
		d = SK_MIN(d, cl->trace_at);
	/* 0 until the first connection is started (in 1 ms if it could not
	 * be: no usable IPv6 source while DAD runs); afterwards, retry a start
	 * that found no free socket soon, else only the overall timeout. */
	if (cl->started == 0)
		return cl->retries ? cl->retry_at : 0; /* fixed: the runner compares it with its now */
	if (cl->started < cl->conns && cl->started - cl->finished < cl->parallel)
		return SK_MIN(d, plat_now() + SK_NS_PER_MS);
	return d;
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
	if (cl->trace && cl->started > 0 && now >= cl->trace_at) {
		trace_sample(cl, now);
		/* From now: a late turn skips samples rather than bunching them. */
		cl->trace_at = now + TRACE_NS;
	}
	start_more(cl, now);
}

int cmd_tcp_client(int argc, char **argv)
{
	static struct client cl; /* static: large, and on_signal's flag lives beside it */
	memset(&cl, 0, sizeof(cl));
	struct opts o;
	cli_parse(&o, &opt_cmd_tcp_client, argc, argv);
	struct hoststack_config cfg = {.tcp = true};
	hoststack_options(&cfg, &o);
	if (!opt_given(&o, OPT_TC_CONNECT))
		cli_usage_error("tcp-client", "connect is required (ADDR:PORT)");
	if (o.v[OPT_TC_CONNECT].v6) {
		if (o.nip6 == 0 && !o.ip6_auto)
			cli_usage_error("tcp-client", "an IPv6 connect needs --ip6");
		cl.dst = sk_addr_v6(o.v[OPT_TC_CONNECT].ip6);
	} else {
		cl.dst = sk_addr_v4(o.v[OPT_TC_CONNECT].ip);
	}
	cl.dport = (uint16_t)opt_num(&o, OPT_TC_CONNECT);
	const char *file = opt_str(&o, OPT_TC_SEND_FILE);
	bool have_random = opt_given(&o, OPT_TC_SEND_RANDOM);
	if (!!file == have_random)
		cli_usage_error("tcp-client", "give exactly one of send-file and send-random");
	cl.total = opt_num(&o, OPT_TC_SEND_RANDOM);
	cl.seed = opt_num(&o, OPT_TC_SEED);
	cl.expect_echo = opt_given(&o, OPT_TC_EXPECT_ECHO);
	cl.conns = (uint32_t)opt_num(&o, OPT_TC_CONNS);
	if (opt_given(&o, OPT_TC_SEQUENTIAL) && opt_given(&o, OPT_TC_PARALLEL))
		cli_usage_error("tcp-client", "sequential and parallel exclude each other");
	cl.parallel = opt_given(&o, OPT_TC_PARALLEL) ? (uint32_t)opt_num(&o, OPT_TC_PARALLEL) : 1;
	if (cl.parallel > cl.conns)
		cl.parallel = cl.conns;
	uint32_t timeout_s = (uint32_t)opt_num(&o, OPT_TC_TIMEOUT);
	const char *trace_path = opt_str(&o, OPT_TC_TCP_TRACE);
	bool stats = opt_given(&o, OPT_STATS);

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
	if (trace_path) {
		cl.trace = fopen(trace_path, "w");
		if (!cl.trace) {
			fprintf(stderr, "skiff tcp-client: cannot write '%s': %s\n", trace_path,
				strerror(errno));
			if (map)
				munmap(map, (size_t)cl.total);
			if (fd >= 0)
				close(fd);
			return 1;
		}
		fprintf(cl.trace, "ms\tconn\tstate\tcwnd\tssthresh\tpipe\tunacked\tunsent\tsndbuf"
				  "\tsnd_wnd\trcv_wnd\tsrtt_us\trto_ms\tpacing_rate\tretransmits\tacked"
				  "\tlimit\tca_state\tbbr_bw\tbbr_mode\n");
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
	cl.trace_at = cl.t0;
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
	if (cl.trace)
		fclose(cl.trace);
	free(cl.c);
	if (map)
		munmap(map, (size_t)cl.total);
	if (fd >= 0)
		close(fd);
	return all_ok ? 0 : 1;
}
