/* fuzz_proxy.c — the proxy's exchanges (http/proxy.h) on the fake loop,
 * driven by a script: clients (sockets 2..5) and the upstream connections
 * the proxy opens (sockets 8..15) both get bytes in any cut, events, end of
 * stream, resets, limited room, and time moves.
 *
 * Input: records [op][sock][arg][bytes...]:
 *   op%8 0  a client connects (sock%4 + 2)  4  advance time arg*100 ms
 *        1-2 arg+1 bytes to a client       5  a socket takes arg*37 bytes, WRITE
 *        3  arg+1 bytes from an upstream   6  end of stream (client or upstream)
 *                                          7  WRITE (a connect completes) or a reset
 * Checks after every step: http_app_check and proxy_check (every exchange
 * bound to at most one upstream connection, the pool's counts, buffers in
 * range; with the cache, for odd-sized inputs, http_cache_check too;
 * PURGE allowed when the size's bit 1 is set, else denied); at
 * the end http_app_stop and proxy_stop leave nothing open.
 * Build: make build/fuzz/fuzz_proxy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/cache.h"
#include "http/proxy.h"
#include "loop_host/loop_fake.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct loop_fake fk;
static struct http_app eng;
static struct proxy px;
static struct http_app_def def;
static struct http_app_route route;
static uint8_t *amem, *pmem;
static struct http_cache hc;
static uint8_t cmem[16 * 1024]; /* a tiny cache: eviction and dropped fills are reachable */
static size_t amemsz, pmemsz;

static void check(void)
{
	CHECK(http_app_check(&eng) == 0);
	CHECK(proxy_check(&px) == 0);
	if (px.cache)
		CHECK(http_cache_check(&hc) == 0);
}

static void start(bool cache, bool purge_ok)
{
	loop_fake_init(&fk, 1000 * SK_NS_PER_S);
	fk.connect_next = 8;
	struct proxy_config pc;
	proxy_config_default(&pc);
	pc.nup = 2;
	pc.up_addr[0] = sk_addr_v4(0x7f000001);
	pc.up_port[0] = 8080;
	pc.up_addr[1] = sk_addr_v4(0x7f000001);
	pc.up_port[1] = 8081;
	pc.max_xchg = 4;
	pc.pool = 1;
	pc.fail_max = 2;
	pc.connect_timeout = SK_NS_PER_S;
	pc.first_byte_timeout = 2 * SK_NS_PER_S;
	pc.idle_timeout = 3 * SK_NS_PER_S;
	pc.fail_timeout = 2 * SK_NS_PER_S;
	if (purge_ok) { /* the fake's clients are 198.18.0.1: allowed, else 403 */
		pc.purge_allow[0] = (struct proxy_prefix){sk_addr_v4(0xc6120000u), 96 + 15};
		pc.npurge_allow = 1;
	}
	pmemsz = proxy_mem_size(&pc);
	if (!pmem)
		pmem = malloc(pmemsz);
	CHECK(proxy_init(&px, pmem, pmemsz, &pc) == 0);
	if (cache) {
		struct http_cache_config cc;
		http_cache_config_default(&cc);
		cc.chunk_size = 1024;
		CHECK(http_cache_init(&hc, cmem, sizeof(cmem), &cc) == 0);
		px.cache = &hc;
	}
	struct http_app_config ac;
	http_app_config_default(&ac);
	ac.max_conns = 4;
	ac.max_body = 1u << 20;
	ac.header_timeout = 5 * SK_NS_PER_S;
	ac.body_timeout = 5 * SK_NS_PER_S;
	proxy_app_config(&px, &ac);
	proxy_app_def(&px, &def, &route);
	amemsz = http_app_mem_size(&ac);
	if (!amem)
		amem = malloc(amemsz);
	CHECK(http_app_init(&eng, amem, amemsz, &ac, &def, &fk.base) == 0);
	CHECK(http_app_start(&eng) == 0);
}

/* The fake's sockets are reused in turn: keep connect_next inside 8..15. */
static void next_up(void)
{
	if (fk.connect_next >= LOOP_FAKE_NSOCK)
		fk.connect_next = 8;
	for (int k = 0; k < 8 && fk.s[fk.connect_next].open; k++)
		fk.connect_next = fk.connect_next + 1 < LOOP_FAKE_NSOCK ? fk.connect_next + 1 : 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An odd-sized input runs with the cache (--cache); bit 1 of the size
	 * lets the clients PURGE (else the default list refuses them: 403) */
	start(size & 1, size & 2);
	size_t i = 0;
	while (i + 3 <= size) {
		uint8_t op = data[i] % 8, sk = data[i + 1], arg = data[i + 2];
		i += 3;
		int c = 2 + sk % 4, u = 8 + sk % 8;
		next_up();
		switch (op) {
		case 0:
			if (!fk.s[c].open)
				loop_fake_connect(&fk, c);
			break;
		case 1:
		case 2:
		case 3: {
			int s = op == 3 ? u : c;
			size_t n = (size_t)arg + 1;
			if (n > size - i)
				n = size - i;
			if (fk.s[s].open && !fk.s[s].eof &&
			    fk.s[s].in_len + n <= LOOP_FAKE_BUF)
				loop_fake_send(&fk, s, data + i, n);
			i += n;
			break;
		}
		case 4:
			loop_fake_advance(&fk, (sk_time_ns)arg * 100 * SK_NS_PER_MS);
			break;
		case 5: {
			int s = sk & 8 ? u : c;
			if (fk.s[s].open) {
				fk.s[s].write_room = (size_t)arg * 37;
				loop_fake_event(&fk, s, LOOP_EV_WRITE);
			}
			break;
		}
		case 6: {
			int s = sk & 8 ? u : c;
			if (fk.s[s].open && !fk.s[s].eof)
				loop_fake_eof(&fk, s);
			break;
		}
		case 7:
			if (fk.s[u].open)
				loop_fake_event(&fk, u, arg & 1 ? LOOP_EV_WRITE
							    : LOOP_EV_READ | LOOP_EV_ERROR);
			break;
		}
		/* a client whose output would overflow the fake starts over */
		for (int s = 2; s < LOOP_FAKE_NSOCK; s++)
			if (fk.s[s].out_len > LOOP_FAKE_BUF / 2) {
				fk.s[s].out_len = 0;
				fk.s[s].out[0] = 0;
			}
		check();
	}
	http_app_stop(&eng);
	proxy_stop(&px);
	for (int s = 2; s < LOOP_FAKE_NSOCK; s++)
		CHECK(!fk.s[s].open);
	return 0;
}
