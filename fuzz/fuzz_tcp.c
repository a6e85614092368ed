/* fuzz_tcp.c — tcp_parse on arbitrary bytes; emit round trip.
 *
 * Emit normalises options (fixed layout, unknown ones dropped, SACK blocks
 * beyond 40 bytes dropped), so the first round trip compares every field
 * but allows fewer SACK blocks; the second round trip must be exact. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/tcp.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define SRC 0x0a000001u
#define DST 0x0a000002u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_opts(const struct tcp_opts *a, const struct tcp_opts *b, int exact)
{
	CHECK(a->has_mss == b->has_mss && a->has_ws == b->has_ws);
	CHECK(a->sack_perm == b->sack_perm && a->has_ts == b->has_ts);
	CHECK(!a->has_mss || a->mss == b->mss);
	CHECK(!a->has_ws || a->ws == b->ws);
	CHECK(!a->has_ts || (a->ts_val == b->ts_val && a->ts_ecr == b->ts_ecr));
	CHECK(exact ? b->nsack == a->nsack : b->nsack <= a->nsack);
	for (int i = 0; i < b->nsack; i++)
		CHECK(a->sack[i].left == b->sack[i].left && a->sack[i].right == b->sack[i].right);
}

/* Emit h with its payload, re-parse into b, and check the checksum. */
static uint8_t *round_trip(const struct tcp_hdr *h, const uint8_t *payload, struct tcp_hdr *b,
			   size_t *total)
{
	size_t hl = tcp_hdr_len(h);
	CHECK(hl % 4 == 0 && hl >= TCP_HLEN && hl <= TCP_MAX_HLEN);
	*total = hl + h->payload_len;
	uint8_t *out = malloc(*total);
	if (!out)
		return NULL;
	memcpy(out + hl, payload, h->payload_len);
	CHECK(tcp_emit(out, *total, h, SRC, DST, h->payload_len) == *total);
	CHECK(tcp_emit(out, *total - 1, h, SRC, DST, h->payload_len) == 0);
	uint64_t s = csum_pseudo4(SRC, DST, 6, (uint16_t)*total);
	CHECK(csum_fold(csum_add(s, out, *total)) == 0);
	CHECK(tcp_parse(out, *total, SRC, DST, b) == WIRE_OK);
	CHECK(b->hlen == hl);
	CHECK(b->sport == h->sport && b->dport == h->dport && b->seq == h->seq &&
	      b->ack == h->ack && b->flags == h->flags && b->win == h->win && b->urg == h->urg);
	CHECK(b->payload_len == h->payload_len);
	CHECK(memcmp(out + b->payload_off, payload, h->payload_len) == 0);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	/* The option parser alone, on every byte of the input. */
	struct tcp_opts o;
	int ro = tcp_opts_parse(buf, size, &o);
	CHECK(ro == WIRE_OK || ro == WIRE_EOPT);
	CHECK(o.nsack <= TCP_MAX_SACK && (!o.has_ws || o.ws <= 14));

	struct tcp_hdr h;
	if (tcp_parse(buf, size, SRC, DST, &h) == WIRE_OK) {
		CHECK(h.hlen >= TCP_HLEN && h.hlen <= size);
		CHECK(h.payload_off + h.payload_len == size);
		const uint8_t *payload = buf + h.payload_off;
		struct tcp_hdr b, c;
		size_t n1, n2;
		uint8_t *o1 = round_trip(&h, payload, &b, &n1);
		if (o1) {
			check_opts(&h.opts, &b.opts, 0);
			uint8_t *o2 = round_trip(&b, payload, &c, &n2);
			if (o2) {
				check_opts(&b.opts, &c.opts, 1);
				CHECK(n1 == n2 && memcmp(o1, o2, n1) == 0); /* emit is a fixed point */
				free(o2);
			}
			free(o1);
		}
	}
	free(buf);
	return 0;
}
