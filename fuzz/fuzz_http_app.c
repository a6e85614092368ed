/* fuzz_http_app.c — the application engine's request path (http/app.h)
 * on the fake loop, driven by a script of socket operations: connections,
 * bytes in any cut, time, a socket that takes little, end of stream,
 * resets.  The application is examples/kv.c (a 32 KiB pool, so 507 is
 * reachable) plus an echo, a body collector, an answer from a timer and
 * the helper kit: /r reads its body from the engine's pool (2 slots of
 * 100 bytes, so 413 and 503 are reachable) and answers a 302 whose
 * Location is formatted from it (http_app_headerf: overflow and CR/LF
 * are reachable), and every engine answer goes through the error hook.
 *
 * Input: records [op][sock][arg][bytes...]:
 *   op%8 0  connect sock            4  advance time arg*50 ms
 *        1-3 send arg+1 bytes        5  the socket takes arg*37 bytes, WRITE
 *        6  end of stream           7  a reset (READ|ERROR)
 * Checks, after every step: http_app_check (every connection's invariants,
 * timer armed for every deadline); at the end http_app_stop leaves no
 * connection and every request's on_done ran exactly once (no leak, no
 * double call: counted), every body slot is back in the pool, and kv's
 * reference counts add up (every block back in the pool after its keys
 * are deleted).
 * Build: make build/fuzz/fuzz_http_app.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/app.h"
#include "loop_host/loop_fake.h"

#define KV_POOL (32u * 1024u)
#include "../examples/kv.c"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct loop_fake fk;
static struct http_app eng;
static uint8_t *mem;
static size_t memsz;
static int begun, done;
static struct http_app_req *pending;
static struct loop_timer later_timer;

static void count_done(struct http_app_req *r, void *ctx, bool ok)
{
	(void)ctx, (void)ok;
	done++;
	if (r == pending)
		pending = NULL;
}

static long echo_piece(struct http_app_req *r, void *ctx, const uint8_t *d, size_t n, bool end)
{
	(void)ctx;
	if (end) {
		http_app_end(r);
		return 0;
	}
	return http_app_write(r, d, n);
}

static void echo_room(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_body_resume(r);
}

static int h_echo(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	begun++;
	http_app_on_done(r, count_done, NULL);
	if (!http_app_has_body(r))
		return http_app_send(r, 200, "", 0);
	CHECK(http_app_body_stream(r, echo_piece, NULL) == 0);
	return http_app_stream(r, 200, http_app_body_length(r), echo_room, NULL);
}

static uint8_t cbuf[2048];
static void collected(struct http_app_req *r, void *ctx, size_t len)
{
	(void)ctx;
	CHECK(len <= sizeof(cbuf));
	http_app_send(r, 200, cbuf, len);
}

static int h_collect(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	begun++;
	http_app_on_done(r, count_done, NULL);
	if (!http_app_has_body(r))
		return http_app_send(r, 204, NULL, 0);
	return http_app_body_collect(r, cbuf, sizeof(cbuf), collected, NULL);
}

static void later_fire(struct loop_timer *t, sk_time_ns now)
{
	(void)t, (void)now;
	if (pending)
		http_app_send(pending, 200, "later\n", 6);
}

static int h_later(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	begun++;
	http_app_on_done(r, count_done, NULL);
	if (pending)
		return http_app_send(r, 503, "", 0);
	pending = r;
	loop_timer_set(&fk.base, &later_timer, fk.now + 200 * SK_NS_PER_MS);
	return 0;
}

static void read_done(struct http_app_req *r, void *ctx, char *body, size_t len)
{
	(void)ctx;
	CHECK(body[len] == 0 && len <= 100);
	/* The body as the Location: long ones overflow the area, CR/LF and
	 * other controls are refused; both make the answer the engine's 500. */
	http_app_headerf(r, "Location", "/l/%s/%zu/%.*s", body, len, (int)(len % 7), body);
	http_app_send(r, 302, "", 0);
}

static int h_read(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	begun++;
	http_app_on_done(r, count_done, NULL);
	size_t n;
	const char *q = http_app_query(r, &n);
	return http_app_body_read(r, q && n ? (size_t)(q[0] & 0x7f) : 0, read_done, NULL);
}

static long fz_error(void *ctx, int status, char *buf, size_t cap, const char **ct)
{
	(void)ctx;
	if (status % 3 == 0)
		return -1; /* the engine's own */
	*ct = "application/json";
	size_t n = 0;
	const char *pre = "{\"error\":";
	while (*pre && n < cap)
		buf[n++] = *pre++;
	for (int d = 100; d && n < cap; d /= 10)
		buf[n++] = (char)('0' + status / d % 10);
	if (n < cap)
		buf[n++] = '}';
	return (long)n;
}

static const struct http_app_route fz_routes[] = {
	{HTTP_POST, "/r", false, h_read, NULL},
	{HTTP_APP_ANY, "/echo", false, h_echo, NULL},
	{HTTP_POST, "/c", false, h_collect, NULL},
	{HTTP_GET, "/later", false, h_later, NULL},
	{HTTP_GET, "/kv/", false, kv_list, NULL},
	{HTTP_GET, "/kv/", true, kv_get, NULL},
	{HTTP_PUT, "/kv/", true, kv_put, NULL},
	{HTTP_DELETE, "/kv/", true, kv_delete, NULL},
};
static const struct http_app_def def = {.routes = fz_routes, .nroutes = SK_ARRAY_LEN(fz_routes),
					.name = "fuzz", .init = kv_start, .body_size = 100,
					.body_slots = 2, .hdr_size = 256, .error_answer = fz_error};

static void kv_reset(void)
{
	sk_memset(table, 0, sizeof(table));
	sk_memset(vals, 0, sizeof(vals));
	sk_memset(get_slots, 0, sizeof(get_slots));
	sk_memset(put_slots, 0, sizeof(put_slots));
	sk_memset(lists, 0, sizeof(lists));
	block_free = val_free = nkeys = ntombs = blocks_free_count = 0;
	kv_init();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kv_reset();
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	struct http_app_config cfg;
	http_app_config_default(&cfg);
	cfg.max_conns = 4;
	cfg.out_size = 2048;
	cfg.max_body = 8192;
	cfg.header_timeout = SK_NS_PER_S;
	cfg.body_timeout = 2 * SK_NS_PER_S;
	cfg.send_timeout = 2 * SK_NS_PER_S;
	cfg.keepalive_timeout = 3 * SK_NS_PER_S;
	cfg.hdr_size = 256;
	http_app_config_fit(&cfg, &def);
	if (!mem) {
		memsz = http_app_mem_size(&cfg);
		mem = malloc(memsz);
		CHECK(mem);
	}
	CHECK(http_app_init(&eng, mem, memsz, &cfg, &def, &fk.base) == 0);
	CHECK(http_app_start(&eng) == 0);
	later_timer = (struct loop_timer){.fn = later_fire};
	begun = done = 0;
	pending = NULL;
	size_t i = 0;
	while (i + 3 <= size) {
		unsigned op = data[i] % 8, s = 2 + data[i + 1] % 6, arg = data[i + 2];
		i += 3;
		struct loop_fake_sock *k = &fk.s[s];
		switch (op) {
		case 0:
			if (!k->open && !k->fn) {
				loop_fake_connect(&fk, (int)s);
				fk.s[s].out_discard = true;
			}
			break;
		case 1: case 2: case 3: {
			size_t n = (size_t)arg + 1;
			if (n > size - i)
				n = size - i;
			if (k->open && !k->eof && k->in_len + n <= LOOP_FAKE_BUF)
				loop_fake_send(&fk, (int)s, data + i, n);
			i += n;
			break;
		}
		case 4:
			loop_fake_advance(&fk, (sk_time_ns)arg * 50 * SK_NS_PER_MS);
			break;
		case 5:
			if (k->open) {
				k->write_room = arg == 255 ? SIZE_MAX : (size_t)arg * 37;
				loop_fake_event(&fk, (int)s, LOOP_EV_WRITE);
			}
			break;
		case 6:
			if (k->open && !k->eof)
				loop_fake_eof(&fk, (int)s);
			break;
		default:
			if (k->open)
				loop_fake_event(&fk, (int)s, LOOP_EV_READ | LOOP_EV_ERROR);
			break;
		}
		CHECK(http_app_check(&eng) == 0);
	}
	if (loop_timer_armed(&later_timer))
		loop_timer_cancel(&fk.base, &later_timer);
	http_app_stop(&eng);
	CHECK(eng.nconns == 0);
	CHECK(eng.slots_used == 0);
	CHECK(pending == NULL);
	/* kv: every reference a request held was given back. */
	for (uint32_t v = 0; v < KV_NVALS; v++)
		CHECK(!get_slots[v].busy && !put_slots[v].busy);
	uint32_t held = 0;
	for (uint32_t h = 0; h < KV_HASH; h++)
		if (table[h].val && table[h].val != KV_TOMB) {
			CHECK(vals[table[h].val - 1].refs == 1);
			held += (vals[table[h].val - 1].len + KV_BLOCK - 1) / KV_BLOCK;
		}
	CHECK(held + blocks_free_count == KV_NBLOCKS);
	CHECK(done == begun); /* each request of ours: on_done once */
	return 0;
}
