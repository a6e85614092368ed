/* chunked_test.c — the chunked body decoder: good bodies cut at every byte
 * and fed one byte at a time, bad bodies, the size, extension and trailer
 * limits, 413, and what is left after the body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/chunked.h"

struct outcome {
	int ret;
	size_t used;    /* raw bytes taken in total */
	size_t dlen;    /* decoded bytes in total */
	uint8_t *data;  /* the decoded bytes (malloc'd) */
};

/* Decode body[0, n) fed as pieces ending at the offsets in cuts[] (the
 * last piece runs to n), each piece an exact-size heap copy of only the
 * bytes not yet taken.  Stops at the first result other than need-more. */
static struct outcome decode_pieces(const uint8_t *body, size_t n, uint64_t max,
				    const size_t *cuts, size_t ncuts)
{
	struct http_chunked c;
	http_chunked_init(&c, max);
	struct outcome o = { HTTP_NEED_MORE, 0, 0, malloc(n + 1) };
	size_t at = 0;
	for (size_t i = 0; i <= ncuts && o.ret == HTTP_NEED_MORE; i++) {
		size_t end = i < ncuts ? cuts[i] : n;
		if (end < at)
			continue;
		size_t len = end - at, used = 0;
		uint8_t *b = malloc(len ? len : 1);
		memcpy(b, body + at, len);
		o.ret = http_chunked_decode(&c, b, &len, &used);
		assert_true(len <= used);
		if (o.ret == HTTP_NEED_MORE)
			assert_int_equal(used, end - at);
		memcpy(o.data + o.dlen, b, len);
		o.dlen += len;
		at += used;
		free(b);
	}
	o.used = at;
	assert_int_equal(o.ret == HTTP_DONE, http_chunked_done(&c));
	if (o.ret == HTTP_DONE || o.ret < HTTP_NEED_MORE) {
		/* Sticky: a further call takes nothing and says the same. */
		uint8_t x = '5';
		size_t len = 1, used = 9;
		assert_int_equal(http_chunked_decode(&c, &x, &len, &used), o.ret);
		assert_int_equal(len, 0);
		assert_int_equal(used, 0);
	}
	return o;
}

static struct outcome decode_all(const uint8_t *body, size_t n, uint64_t max)
{
	return decode_pieces(body, n, max, NULL, 0);
}

static void assert_same(const struct outcome *a, const struct outcome *b)
{
	assert_int_equal(a->ret, b->ret);
	assert_int_equal(a->used, b->used);
	assert_int_equal(a->dlen, b->dlen);
	assert_memory_equal(a->data, b->data, a->dlen);
}

/* Whole, cut at every byte (two pieces), cut at every pair of bytes for
 * short bodies, and one byte at a time: all the same. */
static void check_cuts(const uint8_t *body, size_t n, uint64_t max, const struct outcome *want)
{
	for (size_t k = 0; k <= n; k++) {
		struct outcome o = decode_pieces(body, n, max, &k, 1);
		assert_same(&o, want);
		free(o.data);
	}
	if (n <= 80)
		for (size_t k = 0; k <= n; k++)
			for (size_t j = k; j <= n; j++) {
				size_t cuts[2] = { k, j };
				struct outcome o = decode_pieces(body, n, max, cuts, 2);
				assert_same(&o, want);
				free(o.data);
			}
	size_t *every = malloc((n + 1) * sizeof(*every));
	for (size_t k = 0; k <= n; k++)
		every[k] = k;
	struct outcome o = decode_pieces(body, n, max, every, n + 1);
	assert_same(&o, want);
	free(o.data);
	free(every);
}

/* String literals with their length, so bodies may hold NUL. */
#define B(s) s, sizeof(s) - 1

static const struct {
	const char *body;
	size_t len;
	const char *data;
	const char *after; /* bytes that must be left over */
} good[] = {
	{ B("5\r\nhello\r\n0\r\n\r\n"), "hello", "" },
	{ B("0\r\n\r\n"), "", "" },
	{ B("3;ext=1\r\nabc\r\n4 ; a=\"q ; x\"\r\ndefg\r\n0\r\nTrailer: x\r\n\r\n"), "abcdefg", "" },
	{ B("A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n"), "0123456789abcdefghij", "" },
	{ B("0005\r\nhello\r\n000\r\n\r\n"), "hello", "" },
	{ B("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n"), "\r\n", "" },
	{ B("2\r\nhi\r\n0;last\r\nX-Sum: 12  \r\nY:\r\n\r\nGET / HTTP/1.1\r\n"), "hi",
	  "GET / HTTP/1.1\r\n" },
	{ B("1\r\nx\r\n0\r\n\r\n0\r\n\r\n"), "x", "0\r\n\r\n" },
	{ B("000000000000000F\r\n0123456789abcde\r\n0\r\n\r\n"), "0123456789abcde", "" },
	{ B("3\t;\tx\r\nabc\r\n0\r\n\r\n"), "abc", "" },
};

static void test_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < SK_ARRAY_LEN(good); i++) {
		const uint8_t *b = (const uint8_t *)good[i].body;
		size_t n = good[i].len;
		struct outcome o = decode_all(b, n, UINT64_MAX);
		if (o.ret != HTTP_DONE)
			fail_msg("good[%zu]: %s", i, http_err_name(o.ret));
		assert_int_equal(o.dlen, strlen(good[i].data));
		assert_memory_equal(o.data, good[i].data, o.dlen);
		assert_int_equal(n - o.used, strlen(good[i].after));
		assert_memory_equal(b + o.used, good[i].after, n - o.used);
		check_cuts(b, n, UINT64_MAX, &o);
		free(o.data);
	}
}

static const struct {
	const char *body;
	size_t len;
	int err;
} bad[] = {
	{ B("0x5\r\nhello\r\n0\r\n\r\n"), HTTP_E_CHUNK_SIZE },
	{ B("+5\r\nhello\r\n0\r\n\r\n"), HTTP_E_CHUNK_SIZE },
	{ B("-5\r\nhello\r\n0\r\n\r\n"), HTTP_E_CHUNK_SIZE },
	{ B("\r\n"), HTTP_E_CHUNK_SIZE },
	{ B(";x\r\n"), HTTP_E_CHUNK_SIZE },
	{ B(" 5\r\nhello\r\n"), HTTP_E_CHUNK_SIZE },
	{ B("5 \r\nhello\r\n"), HTTP_E_CHUNK_EXT },
	{ B("5 x\r\nhello\r\n"), HTTP_E_CHUNK_EXT },
	{ B("5g\r\n"), HTTP_E_CHUNK_SIZE },
	{ B("00000000000000001\r\nx\r\n"), HTTP_E_CHUNK_SIZE },
	{ B("5;\x01\r\nhello\r\n"), HTTP_E_CHUNK_EXT },
	{ B("5;a\0\r\nhello\r\n"), HTTP_E_CHUNK_EXT },
	{ B("5;a\nhello\r\n"), HTTP_E_BARE_LF },
	{ B("5\nhello\r\n"), HTTP_E_BARE_LF },
	{ B("5\rhello\r\n"), HTTP_E_BARE_CR },
	{ B("5\r\nhelloX\r\n"), HTTP_E_CHUNK_CRLF },
	{ B("5\r\nhello\n0\r\n\r\n"), HTTP_E_CHUNK_CRLF },
	{ B("5\r\nhello\rX"), HTTP_E_CHUNK_CRLF },
	{ B("0\r\n\n"), HTTP_E_BARE_LF },
	{ B("0\r\n\rX"), HTTP_E_BARE_CR },
	{ B("0\r\n X: y\r\n\r\n"), HTTP_E_FOLD },
	{ B("0\r\nX : y\r\n\r\n"), HTTP_E_NAME_WS },
	{ B("0\r\n: y\r\n\r\n"), HTTP_E_NAME },
	{ B("0\r\nX(: y\r\n\r\n"), HTTP_E_NAME },
	{ B("0\r\nX\r\n\r\n"), HTTP_E_NAME },
	{ B("0\r\nX: a\x01\r\n\r\n"), HTTP_E_CTL },
	{ B("0\r\nX: a\0\r\n\r\n"), HTTP_E_NUL },
	{ B("0\r\nX\0: a\r\n\r\n"), HTTP_E_NUL },
	{ B("0\r\nX: a\n\r\n"), HTTP_E_BARE_LF },
	{ B("0\r\nX: a\rb\r\n\r\n"), HTTP_E_BARE_CR },
	{ B("0\r\n\r\r"), HTTP_E_BARE_CR },
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < SK_ARRAY_LEN(bad); i++) {
		const uint8_t *b = (const uint8_t *)bad[i].body;
		size_t n = bad[i].len;
		struct outcome o = decode_all(b, n, UINT64_MAX);
		if (o.ret != bad[i].err)
			fail_msg("bad[%zu]: %s, want %s", i, http_err_name(o.ret), http_err_name(bad[i].err));
		assert_int_equal(http_err_status(o.ret), 400);
		check_cuts(b, n, UINT64_MAX, &o);
		free(o.data);
	}
}

/* Sizes: 16 digits at most; 413 as soon as the running total passes the
 * maximum, before the chunk's data. */
static void test_size_limits(void **state)
{
	(void)state;
	struct outcome o;
	const char *b = "fffffffffffffff0\r\n";
	o = decode_all((const uint8_t *)b, strlen(b), UINT64_MAX);
	assert_int_equal(o.ret, HTTP_NEED_MORE); /* waiting for 2^64-16 bytes */
	free(o.data);
	b = "ffffffffffffffff0\r\n";
	o = decode_all((const uint8_t *)b, strlen(b), UINT64_MAX);
	assert_int_equal(o.ret, HTTP_E_CHUNK_SIZE);
	free(o.data);

	/* max 11: 5 + 6 fits, 5 + 7 does not. */
	b = "5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n";
	o = decode_all((const uint8_t *)b, strlen(b), 11);
	assert_int_equal(o.ret, HTTP_DONE);
	assert_int_equal(o.dlen, 11);
	free(o.data);
	o = decode_all((const uint8_t *)b, strlen(b), 10);
	assert_int_equal(o.ret, HTTP_E_BODY_TOO_LARGE);
	assert_int_equal(http_err_status(o.ret), 413);
	assert_int_equal(o.dlen, 5);
	assert_int_equal(o.used, 10); /* at the '6', before its data */
	check_cuts((const uint8_t *)b, strlen(b), 10, &o);
	free(o.data);
	/* A long size string is refused at the digit that passes the limit. */
	b = "100000\r\n";
	o = decode_all((const uint8_t *)b, strlen(b), 65535);
	assert_int_equal(o.ret, HTTP_E_BODY_TOO_LARGE);
	assert_int_equal(o.used, 4);
	free(o.data);
	o = decode_all((const uint8_t *)"0\r\n\r\n", 5, 0);
	assert_int_equal(o.ret, HTTP_DONE);
	free(o.data);
}

static void test_ext_limit(void **state)
{
	(void)state;
	for (size_t ext = HTTP_MAX_CHUNK_EXT - 1; ext <= HTTP_MAX_CHUNK_EXT + 1; ext++) {
		size_t n = 0;
		uint8_t *b = malloc(ext + 32);
		b[n++] = '1';
		b[n++] = ';';
		memset(b + n, 'e', ext);
		n += ext;
		memcpy(b + n, "\r\nx\r\n0\r\n\r\n", 10);
		n += 10;
		struct outcome o = decode_all(b, n, UINT64_MAX);
		assert_int_equal(o.ret, ext <= HTTP_MAX_CHUNK_EXT ? HTTP_DONE : HTTP_E_CHUNK_EXT);
		if (o.ret < 0)
			assert_int_equal(o.used, 2 + HTTP_MAX_CHUNK_EXT);
		free(o.data);
		free(b);
	}
}

static void test_trailer_limits(void **state)
{
	(void)state;
	/* 100 trailer lines are fine, the first byte of the 101st is not. */
	for (unsigned nf = HTTP_MAX_FIELDS; nf <= HTTP_MAX_FIELDS + 1; nf++) {
		char *b = malloc(16 + 6 * nf);
		size_t n = (size_t)sprintf(b, "0\r\n");
		for (unsigned i = 0; i < nf; i++)
			n += (size_t)sprintf(b + n, "T: v\r\n");
		n += (size_t)sprintf(b + n, "\r\n");
		struct outcome o = decode_all((uint8_t *)b, n, UINT64_MAX);
		assert_int_equal(o.ret, nf <= HTTP_MAX_FIELDS ? HTTP_DONE : HTTP_E_TOO_MANY_FIELDS);
		if (o.ret < 0)
			assert_int_equal(o.used, n - 8);
		free(o.data);
		free(b);
	}
	/* Trailer bytes: "T: " fill "\r\n" is 5 + fill. */
	for (size_t tb = HTTP_MAX_FIELDS_BYTES - 1; tb <= HTTP_MAX_FIELDS_BYTES + 1; tb++) {
		uint8_t *b = malloc(tb + 16);
		size_t n = 0;
		memcpy(b, "0\r\nT: ", 6);
		n = 6;
		memset(b + n, 'v', tb - 5);
		n += tb - 5;
		memcpy(b + n, "\r\n\r\n", 4);
		n += 4;
		struct outcome o = decode_all(b, n, UINT64_MAX);
		assert_int_equal(o.ret, tb <= HTTP_MAX_FIELDS_BYTES ? HTTP_DONE : HTTP_E_TRAILER_TOO_LARGE);
		if (o.ret < 0) {
			assert_int_equal(http_err_status(o.ret), 431);
			assert_int_equal(o.used, 3 + HTTP_MAX_FIELDS_BYTES); /* the LF */
		}
		free(o.data);
		free(b);
	}
}

/* A big body in uneven pieces: every data byte arrives, in order. */
static void test_big_body(void **state)
{
	(void)state;
	size_t cap = 1 << 20, n = 0, dn = 0;
	uint8_t *b = malloc(cap), *want = malloc(cap);
	uint32_t x = 12345;
	for (unsigned chunk = 1; n + 9000 < cap; chunk = chunk * 7 % 8191 + 1) {
		n += (size_t)sprintf((char *)b + n, "%x\r\n", chunk);
		for (unsigned i = 0; i < chunk; i++) {
			x = x * 1103515245u + 12345u;
			want[dn++] = b[n++] = (uint8_t)(x >> 16);
		}
		b[n++] = '\r';
		b[n++] = '\n';
	}
	memcpy(b + n, "0\r\n\r\n", 5);
	n += 5;
	size_t cuts[64];
	for (size_t i = 0; i < 64; i++)
		cuts[i] = n * (i * i) / (64 * 64);
	struct outcome o = decode_pieces(b, n, UINT64_MAX, cuts, 64);
	assert_int_equal(o.ret, HTTP_DONE);
	assert_int_equal(o.used, n);
	assert_int_equal(o.dlen, dn);
	assert_memory_equal(o.data, want, dn);
	free(o.data);
	free(b);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_size_limits),
		cmocka_unit_test(test_ext_limit),
		cmocka_unit_test(test_trailer_limits),
		cmocka_unit_test(test_big_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
