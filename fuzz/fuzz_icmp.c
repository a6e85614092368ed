/* fuzz_icmp.c — icmp_parse and icmp_parse_error on arbitrary bytes; the
 * emitters fed with the same bytes (as echo request, as an original
 * datagram to quote) must produce messages that parse back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/csum.h"
#include "wire/icmp.h"
#include "wire/ipv4.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_reply(const uint8_t *buf, size_t size, const struct icmp_hdr *h)
{
	uint8_t *out = malloc(size);
	if (!out)
		return;
	CHECK(icmp_emit_echo_reply(out, size - 1, buf, size) == 0);
	CHECK(icmp_emit_echo_reply(out, size, buf, size) == size);
	CHECK(csum(out, size) == 0);
	struct icmp_hdr b;
	CHECK(icmp_parse(out, size, &b) == WIRE_OK);
	CHECK(b.type == ICMP_ECHO_REPLY && b.code == 0 && b.id == h->id && b.seq == h->seq);
	CHECK(memcmp(out + 8, buf + 8, size - 8) == 0);
	/* In place gives the same bytes. */
	uint8_t *in = malloc(size);
	if (in) {
		memcpy(in, buf, size);
		CHECK(icmp_emit_echo_reply(in, size, in, size) == size);
		CHECK(memcmp(in, out, size) == 0);
		free(in);
	}
	free(out);
}

static void fuzz_emit_error(const uint8_t *buf, size_t size)
{
	/* Treat the input as the datagram that caused an error. */
	size_t cap = ICMP_HLEN + 60 + 8;
	uint8_t *out = malloc(cap);
	if (!out)
		return;
	size_t n = icmp_emit_error(out, cap, ICMP_DEST_UNREACH, ICMP_UNREACH_FRAG_NEEDED, 1280, buf, size);
	if (n) {
		CHECK(n >= ICMP_HLEN + IPV4_HLEN && n <= cap);
		CHECK(memcmp(out + ICMP_HLEN, buf, n - ICMP_HLEN) == 0);
		struct icmp_hdr h;
		struct icmp_error e;
		CHECK(icmp_parse(out, n, &h) == WIRE_OK);
		int r = icmp_parse_error(out, n, &h, &e);
		CHECK(r == WIRE_OK || r == WIRE_ETRUNC); /* short quote of a TCP/UDP */
		if (r == WIRE_OK) {
			CHECK(e.mtu == 1280 && e.proto == buf[9]);
			CHECK(e.src == sk_get_be32(buf + 12) && e.dst == sk_get_be32(buf + 16));
		}
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct icmp_hdr h;
	if (icmp_parse(buf, size, &h) == WIRE_OK) {
		CHECK(h.payload_off + h.payload_len == size);
		struct icmp_error e;
		int r = icmp_parse_error(buf, size, &h, &e);
		CHECK(r == WIRE_OK || r == WIRE_EUNSUP || r == WIRE_ETRUNC || r == WIRE_EBADLEN ||
		      r == WIRE_EVERSION);
		if (h.type == ICMP_ECHO_REQUEST)
			fuzz_reply(buf, size, &h);
		else
			CHECK(icmp_emit_echo_reply(buf, size, buf, size) == 0);
		/* The same payload sent as a request parses back. */
		uint8_t *req = malloc(size);
		if (req) {
			CHECK(icmp_emit_echo_request(req, size, h.id, h.seq, buf + 8, size - 8) == size);
			struct icmp_hdr b;
			CHECK(icmp_parse(req, size, &b) == WIRE_OK && csum(req, size) == 0);
			CHECK(b.id == h.id && b.seq == h.seq && b.type == ICMP_ECHO_REQUEST);
			free(req);
		}
	}
	fuzz_emit_error(buf, size);
	free(buf);
	return 0;
}
