/* fuzz_h2_frame.c — the HTTP/2 frame parser (h2/frame.h) on arbitrary
 * bytes, as a connection's input after the preface.
 *
 * Input: [cfg][bytes...].  cfg's bit 0 picks our SETTINGS_MAX_FRAME_SIZE
 * (16384, or the largest); bit 1 makes the bytes start with the preface
 * check.  Frames are parsed back to back from an exact-size copy.  Checks:
 *  - no read outside the copy (ASan), no overflow (UBSan);
 *  - a parsed frame is 9 + its length, within the buffer; its payload
 *    slices lie inside the payload; padding and data add up;
 *  - every proper prefix of a parsed frame asks for more (0): the verdict
 *    does not depend on how the bytes were cut;
 *  - an error names a known code, stream errors only where RFC 9113 allows
 *    them (PRIORITY, HEADERS, WINDOW_UPDATE on a stream);
 *  - what emit can write back (SETTINGS, PING, GOAWAY, RST_STREAM,
 *    WINDOW_UPDATE, PRIORITY) is written back byte for byte, but for the
 *    reserved bits that parse ignores.
 * Build: make build/fuzz/fuzz_h2_frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2/frame.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const uint8_t *p, size_t n, const uint8_t *lo, const uint8_t *hi)
{
	CHECK(n == 0 || (p >= lo && p + n <= hi));
}

/* Emit what the parse read and compare with the original bytes. */
static void reemit(const uint8_t *raw, const struct h2_frame *f)
{
	static uint8_t out[H2_FRAME_HDR_LEN + H2_MAX_MAX_FRAME_SIZE];
	size_t n = 0;
	uint8_t hdr_flags_mask = 0;
	switch (f->h.type) {
	case H2_SETTINGS:
		if (f->h.flags & H2_FLAG_ACK) {
			n = h2_settings_ack_emit(out, sizeof(out));
			hdr_flags_mask = H2_FLAG_ACK;
			break;
		} else {
			struct h2_setting s[64];
			size_t k = 0;
			uint32_t off = 0;
			while (k < SK_ARRAY_LEN(s) && h2_settings_next(f->data, f->data_len, &off, &s[k]))
				k++;
			if (off != f->data_len)
				return; /* more settings than we keep here */
			n = h2_settings_emit(out, sizeof(out), s, k);
			CHECK(n == H2_FRAME_HDR_LEN + f->h.len);
		}
		break;
	case H2_PING:
		n = h2_ping_emit(out, sizeof(out), f->h.flags & H2_FLAG_ACK, f->data);
		hdr_flags_mask = H2_FLAG_ACK;
		break;
	case H2_GOAWAY:
		n = h2_goaway_emit(out, sizeof(out), f->last_stream_id, f->error_code, f->data, f->data_len);
		break;
	case H2_RST_STREAM:
		n = h2_rst_stream_emit(out, sizeof(out), f->h.stream_id, f->error_code);
		break;
	case H2_WINDOW_UPDATE:
		n = h2_window_update_emit(out, sizeof(out), f->h.stream_id, f->window_increment);
		break;
	case H2_PRIORITY:
		n = h2_priority_emit(out, sizeof(out), f->h.stream_id, f->exclusive, f->dep_stream, f->weight);
		break;
	default:
		return;
	}
	CHECK(n == H2_FRAME_HDR_LEN + f->h.len);
	/* Header: the same but for flags we do not define and the reserved bit. */
	CHECK(!memcmp(out, raw, 4));
	CHECK(out[4] == (raw[4] & hdr_flags_mask));
	CHECK((sk_get_be32(out + 5) & H2_STREAM_MASK) == (sk_get_be32(raw + 5) & H2_STREAM_MASK));
	const uint8_t *p = raw + H2_FRAME_HDR_LEN, *q = out + H2_FRAME_HDR_LEN;
	if (f->h.type == H2_GOAWAY || f->h.type == H2_WINDOW_UPDATE) {
		/* The reserved bit of the stream id / increment. */
		CHECK((p[0] & 0x7f) == q[0] && !memcmp(p + 1, q + 1, f->h.len - 1));
	} else if (f->h.len) {
		CHECK(!memcmp(p, q, f->h.len));
	}
}

static void check_frame(const uint8_t *buf, size_t len, const struct h2_frame *f, int rc, uint32_t max)
{
	CHECK((size_t)rc == H2_FRAME_HDR_LEN + (size_t)f->h.len && (size_t)rc <= len);
	CHECK(f->h.len <= max && f->h.stream_id <= H2_STREAM_MASK);
	const uint8_t *lo = buf + H2_FRAME_HDR_LEN, *hi = buf + rc;
	if (f->data)
		inside(f->data, f->data_len, lo, hi);
	CHECK(f->data_len <= f->h.len);
	if (f->h.type == H2_DATA || f->h.type == H2_HEADERS)
		CHECK(f->data_len + f->pad_len + (f->has_priority ? 5u : 0u) == f->h.len);
	if (f->h.type == H2_WINDOW_UPDATE)
		CHECK(f->window_increment >= 1 && f->window_increment <= H2_MAX_WINDOW);
	CHECK(f->h.type != H2_PUSH_PROMISE);
	/* Every proper prefix: "more, please". */
	struct h2_frame g;
	for (size_t cut = 0; cut < (size_t)rc; cut += 1 + cut / 8)
		CHECK(h2_frame_parse(buf, cut, max, &g) == 0);
	reemit(buf, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint32_t max = (data[0] & 1) ? H2_MAX_MAX_FRAME_SIZE : H2_MIN_MAX_FRAME_SIZE;
	size_t n = size - 1;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, n);
	size_t at = 0;
	if (data[0] & 2) {
		int rc = h2_preface_parse(buf, n);
		CHECK(rc == 0 || rc == H2_PREFACE_LEN || rc == -H2_PROTOCOL_ERROR);
		if (rc <= 0)
			goto out;
		at = (size_t)rc;
	}
	while (at < n) {
		struct h2_frame f;
		int rc = h2_frame_parse(buf + at, n - at, max, &f);
		if (rc == 0)
			break;
		if (rc < 0) {
			uint32_t code = h2_err_code(rc);
			CHECK(code == H2_PROTOCOL_ERROR || code == H2_FRAME_SIZE_ERROR ||
			      code == H2_FLOW_CONTROL_ERROR);
			if (h2_err_is_stream(rc))
				CHECK(f.h.stream_id != 0 && (f.h.type == H2_PRIORITY || f.h.type == H2_HEADERS ||
							     f.h.type == H2_WINDOW_UPDATE));
			break;
		}
		check_frame(buf + at, n - at, &f, rc, max);
		at += (size_t)rc;
	}
out:
	free(buf);
	return 0;
}
