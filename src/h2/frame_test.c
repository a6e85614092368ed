/* frame_test.c — HTTP/2 frames (RFC 9113): the preface at every cut, each
 * frame type emitted and parsed back, every frame cut at every byte (0,
 * "need more", until whole), and each error the RFC names with its code
 * and its scope (connection or stream).  Parses read exact-size heap
 * copies, so ASan reports any read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "h2/frame.h"

#define MAXF H2_MIN_MAX_FRAME_SIZE

static int parse_copy(const uint8_t *b, size_t n, uint32_t max, struct h2_frame *f)
{
	uint8_t *c = malloc(n ? n : 1);
	assert_non_null(c);
	memcpy(c, b, n);
	int rc = h2_frame_parse(c, n, max, f);
	/* Pointers into the copy would dangle: keep offsets only. */
	if (rc > 0 && f->data)
		f->data = b + (f->data - c);
	free(c);
	return rc;
}

/* Every proper prefix needs more; the whole parses to its length. */
static void parse_all_cuts(const uint8_t *b, size_t n, struct h2_frame *f)
{
	for (size_t cut = 0; cut < n; cut++)
		assert_int_equal(parse_copy(b, cut, MAXF, f), 0);
	assert_int_equal(parse_copy(b, n, MAXF, f), (int)n);
}

/* A frame from its parts. */
static size_t mk(uint8_t *b, uint8_t type, uint8_t flags, uint32_t sid, const char *payload, size_t plen)
{
	assert_int_equal(h2_frame_hdr_emit(b, 9, (uint32_t)plen, type, flags, sid), 9);
	if (plen)
		memcpy(b + 9, payload, plen);
	return 9 + plen;
}

static void expect_err(const uint8_t *b, size_t n, uint32_t code, bool stream)
{
	struct h2_frame f;
	int rc = parse_copy(b, n, MAXF, &f);
	assert_true(rc < 0);
	assert_int_equal(h2_err_code(rc), code);
	assert_int_equal(h2_err_is_stream(rc), stream);
}

static void test_preface(void **state)
{
	(void)state;
	const uint8_t *p = (const uint8_t *)H2_PREFACE;
	assert_int_equal(strlen(H2_PREFACE), H2_PREFACE_LEN);
	for (size_t cut = 0; cut < H2_PREFACE_LEN; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);
		memcpy(c, p, cut);
		assert_int_equal(h2_preface_parse(c, cut), 0);
		free(c);
	}
	uint8_t b[64];
	memcpy(b, p, H2_PREFACE_LEN);
	memcpy(b + H2_PREFACE_LEN, "\0\0\0\4\0\0\0\0\0", 9);
	assert_int_equal(h2_preface_parse(b, H2_PREFACE_LEN + 9), H2_PREFACE_LEN);
	/* An HTTP/1.1 request is told apart at its first byte that differs. */
	assert_int_equal(h2_preface_parse((const uint8_t *)"GET / HTTP/1.1\r\n", 16), -H2_PROTOCOL_ERROR);
	assert_int_equal(h2_preface_parse((const uint8_t *)"PRI * HTTP/1.1", 14), -H2_PROTOCOL_ERROR);
	assert_int_equal(h2_preface_parse((const uint8_t *)"P", 1), 0);
}

static void test_header(void **state)
{
	(void)state;
	uint8_t b[9];
	struct h2_frame_hdr h;
	assert_int_equal(h2_frame_hdr_emit(b, 9, 0x123456, 0xfa, 0xcd, 0x7fffffff), 9);
	assert_int_equal(h2_frame_hdr_parse(b, 9, H2_MAX_MAX_FRAME_SIZE, &h), 9);
	assert_int_equal(h.len, 0x123456);
	assert_int_equal(h.type, 0xfa);
	assert_int_equal(h.flags, 0xcd);
	assert_int_equal(h.stream_id, 0x7fffffff);
	/* The reserved bit is ignored on receipt (4.1). */
	b[5] |= 0x80;
	b[8] = 3;
	assert_int_equal(h2_frame_hdr_parse(b, 9, H2_MAX_MAX_FRAME_SIZE, &h), 9);
	assert_int_equal(h.stream_id, 0x7fffff03);
	for (size_t n = 0; n < 9; n++)
		assert_int_equal(h2_frame_hdr_parse(b, n, H2_MAX_MAX_FRAME_SIZE, &h), 0);
	/* Over our SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR, known from the
	 * header alone (before the payload is read). */
	assert_int_equal(h2_frame_hdr_emit(b, 9, MAXF + 1, H2_DATA, 0, 1), 9);
	assert_int_equal(h2_frame_hdr_parse(b, 9, MAXF, &h), -H2_FRAME_SIZE_ERROR);
	assert_int_equal(h2_frame_hdr_emit(b, 9, MAXF, H2_DATA, 0, 1), 9);
	assert_int_equal(h2_frame_hdr_parse(b, 9, MAXF, &h), 9);
	/* Emit refuses what cannot be sent. */
	assert_int_equal(h2_frame_hdr_emit(b, 8, 0, 0, 0, 0), 0);
	assert_int_equal(h2_frame_hdr_emit(b, 9, 1u << 24, 0, 0, 0), 0);
	assert_int_equal(h2_frame_hdr_emit(b, 9, 0, 0, 0, 0x80000000u), 0);
}

static void test_data(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_data_hdr_emit(b, sizeof(b), 1, 5, true), 9);
	memcpy(b + 9, "hello", 5);
	parse_all_cuts(b, 14, &f);
	assert_int_equal(f.h.type, H2_DATA);
	assert_int_equal(f.h.flags, H2_FLAG_END_STREAM);
	assert_int_equal(f.data_len, 5);
	assert_memory_equal(f.data, "hello", 5);
	assert_int_equal(h2_data_hdr_emit(b, sizeof(b), 0, 5, true), 0);
	/* Padded: pad length 3, "hi", 3 zero bytes. */
	size_t n = mk(b, H2_DATA, H2_FLAG_PADDED, 1, "\3hi\0\0\0", 6);
	parse_all_cuts(b, n, &f);
	assert_int_equal(f.data_len, 2);
	assert_memory_equal(f.data, "hi", 2);
	assert_int_equal(f.pad_len, 4);
	/* All padding, no data: pad length = payload - 1 is allowed. */
	n = mk(b, H2_DATA, H2_FLAG_PADDED, 1, "\5\0\0\0\0\0", 6);
	assert_int_equal(parse_copy(b, n, MAXF, &f), (int)n);
	assert_int_equal(f.data_len, 0);
	/* Padding = payload length or more: PROTOCOL_ERROR (connection). */
	n = mk(b, H2_DATA, H2_FLAG_PADDED, 1, "\6\0\0\0\0\0", 6);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	n = mk(b, H2_DATA, H2_FLAG_PADDED, 1, "\xff", 1);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	/* No room for the Pad Length field. */
	n = mk(b, H2_DATA, H2_FLAG_PADDED, 1, "", 0);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	/* On stream 0. */
	n = mk(b, H2_DATA, 0, 0, "x", 1);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	/* Empty DATA is a frame (the engine counts floods of them). */
	n = mk(b, H2_DATA, 0, 3, "", 0);
	assert_int_equal(parse_copy(b, n, MAXF, &f), 9);
	assert_int_equal(f.data_len, 0);
}

static void test_headers(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_headers_hdr_emit(b, sizeof(b), 3, 1, false, true), 9);
	b[9] = 0x82;
	parse_all_cuts(b, 10, &f);
	assert_int_equal(f.h.type, H2_HEADERS);
	assert_int_equal(f.h.flags, H2_FLAG_END_HEADERS);
	assert_int_equal(f.data_len, 1);
	assert_int_equal(f.data[0], 0x82);
	assert_false(f.has_priority);
	assert_int_equal(h2_headers_hdr_emit(b, sizeof(b), 0, 1, false, true), 0);
	/* Padded and with priority: pad 2, exclusive dependency on 1,
	 * weight 15, block "\x82\x84", 2 bytes of padding. */
	size_t n = mk(b, H2_HEADERS, H2_FLAG_PADDED | H2_FLAG_PRIORITY | H2_FLAG_END_HEADERS, 3,
		      "\2\x80\0\0\1\x0f\x82\x84\0\0", 10);
	parse_all_cuts(b, n, &f);
	assert_true(f.has_priority);
	assert_true(f.exclusive);
	assert_int_equal(f.dep_stream, 1);
	assert_int_equal(f.weight, 15);
	assert_int_equal(f.data_len, 2);
	assert_memory_equal(f.data, "\x82\x84", 2);
	assert_int_equal(f.pad_len, 3);
	/* Padding eating into the priority fields: PROTOCOL_ERROR. */
	n = mk(b, H2_HEADERS, H2_FLAG_PADDED | H2_FLAG_PRIORITY, 3, "\4\0\0\0\1\x0f\0\0", 8);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	/* Padding longer than the payload. */
	n = mk(b, H2_HEADERS, H2_FLAG_PADDED, 3, "\3\x82\0", 3);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	/* Priority fields cut short (no padding): FRAME_SIZE_ERROR. */
	n = mk(b, H2_HEADERS, H2_FLAG_PRIORITY, 3, "\0\0\0", 3);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	/* Depending on itself: a stream error. */
	n = mk(b, H2_HEADERS, H2_FLAG_PRIORITY, 3, "\0\0\0\3\x0f\x82", 6);
	expect_err(b, n, H2_PROTOCOL_ERROR, true);
	/* Stream 0. */
	n = mk(b, H2_HEADERS, 0, 0, "\x82", 1);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
}

static void test_priority(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_priority_emit(b, sizeof(b), 5, false, 3, 200), 14);
	parse_all_cuts(b, 14, &f);
	assert_int_equal(f.h.type, H2_PRIORITY);
	assert_false(f.exclusive);
	assert_int_equal(f.dep_stream, 3);
	assert_int_equal(f.weight, 200);
	assert_int_equal(h2_priority_emit(b, sizeof(b), 5, false, 5, 0), 0);
	assert_int_equal(h2_priority_emit(b, 13, 5, false, 3, 0), 0);
	size_t n = mk(b, H2_PRIORITY, 0, 5, "\0\0\0\3", 4);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, true);
	n = mk(b, H2_PRIORITY, 0, 5, "\0\0\0\3\0\0", 6);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, true);
	n = mk(b, H2_PRIORITY, 0, 0, "\0\0\0\3\0", 5);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	n = mk(b, H2_PRIORITY, 0, 5, "\x80\0\0\5\0", 5);
	expect_err(b, n, H2_PROTOCOL_ERROR, true);
}

static void test_rst_stream(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_rst_stream_emit(b, sizeof(b), 7, H2_CANCEL), 13);
	parse_all_cuts(b, 13, &f);
	assert_int_equal(f.h.type, H2_RST_STREAM);
	assert_int_equal(f.h.stream_id, 7);
	assert_int_equal(f.error_code, H2_CANCEL);
	assert_int_equal(h2_rst_stream_emit(b, sizeof(b), 0, H2_CANCEL), 0);
	size_t n = mk(b, H2_RST_STREAM, 0, 7, "\0\0\0", 3);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	n = mk(b, H2_RST_STREAM, 0, 0, "\0\0\0\x08", 4);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
}

static void test_settings(void **state)
{
	(void)state;
	uint8_t b[128];
	struct h2_frame f;
	const struct h2_setting s[] = {
		{ H2_SETTINGS_HEADER_TABLE_SIZE, 4096 }, { H2_SETTINGS_ENABLE_PUSH, 0 },
		{ H2_SETTINGS_MAX_CONCURRENT_STREAMS, 100 }, { H2_SETTINGS_INITIAL_WINDOW_SIZE, H2_MAX_WINDOW },
		{ H2_SETTINGS_MAX_FRAME_SIZE, H2_MAX_MAX_FRAME_SIZE }, { H2_SETTINGS_MAX_HEADER_LIST_SIZE, 65536 },
		{ 0x99, 12345 }, /* unknown: ignored, not refused */
	};
	size_t n = h2_settings_emit(b, sizeof(b), s, SK_ARRAY_LEN(s));
	assert_int_equal(n, 9 + 6 * SK_ARRAY_LEN(s));
	parse_all_cuts(b, n, &f);
	assert_int_equal(f.h.type, H2_SETTINGS);
	assert_int_equal(f.h.stream_id, 0);
	uint32_t off = 0;
	struct h2_setting got;
	for (size_t i = 0; i < SK_ARRAY_LEN(s); i++) {
		assert_true(h2_settings_next(f.data, f.data_len, &off, &got));
		assert_int_equal(got.id, s[i].id);
		assert_int_equal(got.value, s[i].value);
	}
	assert_false(h2_settings_next(f.data, f.data_len, &off, &got));
	assert_int_equal(h2_settings_emit(b, n - 1, s, SK_ARRAY_LEN(s)), 0);
	/* ACK: empty. */
	assert_int_equal(h2_settings_ack_emit(b, sizeof(b)), 9);
	parse_all_cuts(b, 9, &f);
	assert_int_equal(f.h.flags, H2_FLAG_ACK);
	/* An ACK with a payload; a length not a multiple of 6. */
	n = mk(b, H2_SETTINGS, H2_FLAG_ACK, 0, "\0\1\0\0\0\0", 6);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	n = mk(b, H2_SETTINGS, 0, 0, "\0\1\0\0\0", 5);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	/* On a stream. */
	n = mk(b, H2_SETTINGS, 0, 1, "", 0);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	/* Values (6.5.2). */
	const struct {
		struct h2_setting s;
		uint32_t code;
	} bad[] = {
		{ { H2_SETTINGS_ENABLE_PUSH, 2 }, H2_PROTOCOL_ERROR },
		{ { H2_SETTINGS_INITIAL_WINDOW_SIZE, H2_MAX_WINDOW + 1 }, H2_FLOW_CONTROL_ERROR },
		{ { H2_SETTINGS_MAX_FRAME_SIZE, H2_MIN_MAX_FRAME_SIZE - 1 }, H2_PROTOCOL_ERROR },
		{ { H2_SETTINGS_MAX_FRAME_SIZE, H2_MAX_MAX_FRAME_SIZE + 1 }, H2_PROTOCOL_ERROR },
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++) {
		uint8_t p[12];
		/* A good setting first: the bad one is found wherever it is. */
		sk_put_be16(p, H2_SETTINGS_MAX_CONCURRENT_STREAMS);
		sk_put_be32(p + 2, 10);
		sk_put_be16(p + 6, bad[i].s.id);
		sk_put_be32(p + 8, bad[i].s.value);
		n = mk(b, H2_SETTINGS, 0, 0, (const char *)p, 12);
		expect_err(b, n, bad[i].code, false);
		assert_int_equal(h2_setting_check(&bad[i].s), -(int)bad[i].code);
		/* And emit will not send it. */
		assert_int_equal(h2_settings_emit(b, sizeof(b), &bad[i].s, 1), 0);
	}
}

static void test_push_promise_refused(void **state)
{
	(void)state;
	uint8_t b[64];
	size_t n = mk(b, H2_PUSH_PROMISE, H2_FLAG_END_HEADERS, 1, "\0\0\0\2\x82", 5);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	/* Refused only when whole: a partial one still asks for more. */
	struct h2_frame f;
	assert_int_equal(parse_copy(b, n - 1, MAXF, &f), 0);
}

static void test_ping(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_ping_emit(b, sizeof(b), true, (const uint8_t *)"12345678"), 17);
	parse_all_cuts(b, 17, &f);
	assert_int_equal(f.h.type, H2_PING);
	assert_int_equal(f.h.flags, H2_FLAG_ACK);
	assert_memory_equal(f.data, "12345678", 8);
	assert_int_equal(h2_ping_emit(b, 16, false, (const uint8_t *)"12345678"), 0);
	size_t n = mk(b, H2_PING, 0, 0, "1234567", 7);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	n = mk(b, H2_PING, 0, 0, "123456789", 9);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	n = mk(b, H2_PING, 0, 1, "12345678", 8);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
}

static void test_goaway(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	size_t n = h2_goaway_emit(b, sizeof(b), 11, H2_ENHANCE_YOUR_CALM, (const uint8_t *)"calm", 4);
	assert_int_equal(n, 21);
	parse_all_cuts(b, n, &f);
	assert_int_equal(f.h.type, H2_GOAWAY);
	assert_int_equal(f.last_stream_id, 11);
	assert_int_equal(f.error_code, H2_ENHANCE_YOUR_CALM);
	assert_int_equal(f.data_len, 4);
	assert_memory_equal(f.data, "calm", 4);
	n = h2_goaway_emit(b, sizeof(b), 0, H2_NO_ERROR, NULL, 0);
	assert_int_equal(n, 17);
	assert_int_equal(parse_copy(b, n, MAXF, &f), 17);
	assert_int_equal(f.data_len, 0);
	assert_int_equal(h2_goaway_emit(b, 16, 0, 0, NULL, 0), 0);
	n = mk(b, H2_GOAWAY, 0, 0, "\0\0\0\1\0\0\0", 7);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
	n = mk(b, H2_GOAWAY, 0, 3, "\0\0\0\1\0\0\0\0", 8);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
}

static void test_window_update(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_window_update_emit(b, sizeof(b), 0, H2_MAX_WINDOW), 13);
	parse_all_cuts(b, 13, &f);
	assert_int_equal(f.h.type, H2_WINDOW_UPDATE);
	assert_int_equal(f.window_increment, H2_MAX_WINDOW);
	assert_int_equal(h2_window_update_emit(b, sizeof(b), 1, 0), 0);
	assert_int_equal(h2_window_update_emit(b, sizeof(b), 1, H2_MAX_WINDOW + 1), 0);
	/* The reserved bit is ignored. */
	size_t n = mk(b, H2_WINDOW_UPDATE, 0, 1, "\x80\0\0\x10", 4);
	assert_int_equal(parse_copy(b, n, MAXF, &f), 13);
	assert_int_equal(f.window_increment, 16);
	/* 0: a stream error on a stream, a connection error on stream 0. */
	n = mk(b, H2_WINDOW_UPDATE, 0, 1, "\0\0\0\0", 4);
	expect_err(b, n, H2_PROTOCOL_ERROR, true);
	n = mk(b, H2_WINDOW_UPDATE, 0, 0, "\x80\0\0\0", 4);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
	n = mk(b, H2_WINDOW_UPDATE, 0, 1, "\0\0\1", 3);
	expect_err(b, n, H2_FRAME_SIZE_ERROR, false);
}

static void test_continuation(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	assert_int_equal(h2_continuation_hdr_emit(b, sizeof(b), 3, 2, true), 9);
	memcpy(b + 9, "\x84\x86", 2);
	parse_all_cuts(b, 11, &f);
	assert_int_equal(f.h.type, H2_CONTINUATION);
	assert_int_equal(f.h.flags, H2_FLAG_END_HEADERS);
	assert_int_equal(f.data_len, 2);
	assert_int_equal(h2_continuation_hdr_emit(b, sizeof(b), 0, 2, true), 0);
	size_t n = mk(b, H2_CONTINUATION, 0, 0, "\x82", 1);
	expect_err(b, n, H2_PROTOCOL_ERROR, false);
}

static void test_unknown_type(void **state)
{
	(void)state;
	uint8_t b[64];
	struct h2_frame f;
	size_t n = mk(b, 0xfe, 0xff, 9, "whatever", 8);
	parse_all_cuts(b, n, &f);
	assert_int_equal(f.h.type, 0xfe);
	assert_int_equal(f.data_len, 8);
}

/* Frames back to back, as they arrive: each parse takes exactly one. */
static void test_sequence(void **state)
{
	(void)state;
	uint8_t b[256];
	size_t n = 0;
	struct h2_setting s = { H2_SETTINGS_MAX_CONCURRENT_STREAMS, 100 };
	n += h2_settings_emit(b + n, sizeof(b) - n, &s, 1);
	n += h2_window_update_emit(b + n, sizeof(b) - n, 0, 1 << 20);
	n += h2_headers_hdr_emit(b + n, sizeof(b) - n, 1, 1, true, true);
	b[n++] = 0x82;
	n += h2_ping_emit(b + n, sizeof(b) - n, false, (const uint8_t *)"abcdefgh");
	n += h2_goaway_emit(b + n, sizeof(b) - n, 1, 0, NULL, 0);
	const uint8_t types[] = { H2_SETTINGS, H2_WINDOW_UPDATE, H2_HEADERS, H2_PING, H2_GOAWAY };
	size_t at = 0;
	for (size_t i = 0; i < SK_ARRAY_LEN(types); i++) {
		struct h2_frame f;
		int rc = parse_copy(b + at, n - at, MAXF, &f);
		assert_true(rc > 0);
		assert_int_equal(f.h.type, types[i]);
		at += (size_t)rc;
	}
	assert_int_equal(at, n);
}

static void test_error_names(void **state)
{
	(void)state;
	assert_string_equal(h2_error_str(H2_PROTOCOL_ERROR), "PROTOCOL_ERROR");
	assert_string_equal(h2_error_str(H2_HTTP_1_1_REQUIRED), "HTTP_1_1_REQUIRED");
	assert_string_equal(h2_error_str(0xe), "UNKNOWN_ERROR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preface),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_rst_stream),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_push_promise_refused),
		cmocka_unit_test(test_ping),
		cmocka_unit_test(test_goaway),
		cmocka_unit_test(test_window_update),
		cmocka_unit_test(test_continuation),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_error_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
