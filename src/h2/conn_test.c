/* conn_test.c — the HTTP/2 engine (conn.h) driven by a scripted client:
 * frames built here (the client's HPACK encoder is hpack.h's), fed to
 * h2_conn_recv, the engine's output parsed back frame by frame.  Grouped
 * as RFC 9113 behaviours (preface, streams, request checks, flow control
 * both ways, header blocks, trailers, RST/GOAWAY), then one test per
 * defence with its limit and counter, then the timers, with explicit
 * times throughout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "h2/conn.h"
#include "http/parser.h"

#define MS 1000000ull
#define S 1000000000ull

/* One frame the engine sent. */
struct ofr {
	uint8_t type, flags;
	uint32_t sid, len, code, inc, last;
	uint8_t opaque[8];
};

struct evrec {
	struct h2_event ev;
	char method[16], path[64], authority[64];
	uint32_t nfields;
};

struct tc {
	struct h2_conn *c;
	struct h2_limits lim;
	uint64_t now;
	/* client encoder and decoder */
	struct hpack_enc enc;
	uint8_t enc_bytes[HPACK_TABLE_BYTES(4096)];
	struct hpack_entry enc_ents[HPACK_TABLE_ENTRIES(4096)];
	struct hpack_dec dec;
	uint8_t dec_bytes[HPACK_TABLE_BYTES(4096)];
	struct hpack_entry dec_ents[HPACK_TABLE_ENTRIES(4096)];
	uint8_t dec_tmp[HPACK_DEC_TMP_BYTES(4096)];
	/* what came out */
	struct ofr of[512];
	size_t nof;
	uint64_t data_bytes;        /* DATA payload seen, all streams */
	unsigned last_status;
	struct evrec ev[512];
	size_t nev;
	uint8_t in[1 << 17];
	size_t inlen;
	uint8_t out[1 << 18];
};

static struct tc *tc_new(void (*tweak)(struct h2_limits *))
{
	struct tc *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->c = calloc(1, sizeof(*t->c));
	assert_non_null(t->c);
	h2_limits_default(&t->lim);
	if (tweak)
		tweak(&t->lim);
	t->now = 1000 * S;
	assert_int_equal(h2_conn_init(t->c, &t->lim, t->now), 0);
	assert_int_equal(hpack_enc_init(&t->enc, 4096, t->enc_bytes, sizeof(t->enc_bytes), t->enc_ents,
					SK_ARRAY_LEN(t->enc_ents)), 0);
	assert_int_equal(hpack_dec_init(&t->dec, 4096, t->dec_bytes, sizeof(t->dec_bytes), t->dec_ents,
					SK_ARRAY_LEN(t->dec_ents), t->dec_tmp, sizeof(t->dec_tmp)), 0);
	return t;
}

static void tc_free(struct tc *t)
{
	free(t->c);
	free(t);
}

/* Drain the engine's output and parse it. */
static void drain(struct tc *t)
{
	for (;;) {
		size_t n = h2_conn_output(t->c, t->out, sizeof(t->out), t->now);
		if (n == 0)
			return;
		size_t off = 0;
		while (off < n) {
			struct h2_frame f;
			int rc = h2_frame_parse(t->out + off, n - off, H2_MAX_MAX_FRAME_SIZE, &f);
			assert_true(rc > 0);
			assert_true(t->nof < SK_ARRAY_LEN(t->of));
			struct ofr *o = &t->of[t->nof++];
			*o = (struct ofr){f.h.type, f.h.flags, f.h.stream_id, f.h.len, f.error_code,
					  f.window_increment, f.last_stream_id, {0}};
			if (f.h.type == H2_PING)
				memcpy(o->opaque, f.data, 8);
			if (f.h.type == H2_DATA)
				t->data_bytes += f.data_len;
			if (f.h.type == H2_HEADERS) {
				struct hpack_field fl[32];
				uint8_t buf[4096];
				struct hpack_list l = {fl, 32, buf, sizeof(buf), 1 << 20, 0, 0, 0};
				assert_true(f.h.flags & H2_FLAG_END_HEADERS);
				assert_int_equal(hpack_decode(&t->dec, f.data, f.data_len, &l), 0);
				assert_true(l.n_fields >= 1);
				assert_memory_equal(l.fields[0].name, ":status", 7);
				/* The value is not NUL-terminated: atoi read on into
				 * whatever the buffer held after it ("4316" once). */
				assert_int_equal(l.fields[0].value_len, 3);
				t->last_status = 0;
				for (uint32_t k = 0; k < 3; k++)
					t->last_status = t->last_status * 10 + (unsigned)(l.fields[0].value[k] - '0');
				for (uint32_t i = 0; i < l.n_fields; i++)
					for (uint32_t k = 0; k < l.fields[i].name_len; k++)
						assert_false(l.fields[i].name[k] >= 'A' &&
							     l.fields[i].name[k] <= 'Z');
			}
			off += (size_t)rc;
		}
	}
}

static void record(struct tc *t, const struct h2_event *ev)
{
	if (ev->type == H2_EV_NONE)
		return;
	assert_true(t->nev < SK_ARRAY_LEN(t->ev));
	struct evrec *r = &t->ev[t->nev++];
	memset(r, 0, sizeof(*r));
	r->ev = *ev;
	if (ev->req && ev->type == H2_EV_REQUEST) {
		const struct h2_req *q = ev->req;
		memcpy(r->method, q->method.value, q->method.value_len);
		if (q->path.value_len)
			memcpy(r->path, q->path.value, q->path.value_len);
		if (q->authority.value_len)
			memcpy(r->authority, q->authority.value, q->authority.value_len);
	}
	if (ev->req)
		r->nfields = ev->req->nfields;
	/* handlers consume what they get */
	if (ev->type == H2_EV_DATA)
		h2_conn_consume(t->c, ev->stream_id, ev->len);
}

/* Feed bytes (appended to what is left), recording events, draining as
 * the engine asks. */
static void feed(struct tc *t, const void *b, size_t n)
{
	assert_true(t->inlen + n <= sizeof(t->in));
	memcpy(t->in + t->inlen, b, n);
	t->inlen += n;
	for (int guard = 0; guard < 100000; guard++) {
		struct h2_event ev;
		long used = h2_conn_recv(t->c, t->in, t->inlen, t->now, &ev);
		assert_true(used >= 0 && (size_t)used <= t->inlen);
		record(t, &ev);
		memmove(t->in, t->in + used, t->inlen - (size_t)used);
		t->inlen -= (size_t)used;
		if (ev.type == H2_EV_NONE && used == 0) {
			if (h2_conn_out_pending(t->c) == 0)
				break;
			drain(t);
		}
	}
	drain(t);
}

static void frame(struct tc *t, uint8_t type, uint8_t flags, uint32_t sid, const void *p, size_t n)
{
	uint8_t h[9];
	assert_int_equal(h2_frame_hdr_emit(h, 9, (uint32_t)n, type, flags, sid), 9);
	uint8_t *b = malloc(9 + n + 1);
	memcpy(b, h, 9);
	if (n)
		memcpy(b + 9, p, n);
	feed(t, b, 9 + n);
	free(b);
}

static void settings(struct tc *t, const struct h2_setting *s, size_t n)
{
	uint8_t b[128];
	size_t w = h2_settings_emit(b, sizeof(b), s, n);
	assert_true(w > 0);
	feed(t, b, w);
}

/* Preface, empty SETTINGS, ACK of the server's. */
static void start(struct tc *t)
{
	feed(t, H2_PREFACE, H2_PREFACE_LEN);
	settings(t, NULL, 0);
	frame(t, H2_SETTINGS, H2_FLAG_ACK, 0, NULL, 0);
}

struct kv {
	const char *n, *v;
};

static size_t block(struct tc *t, uint8_t *b, size_t cap, const struct kv *kv, size_t n)
{
	size_t pos = 0;
	assert_int_equal(hpack_enc_begin(&t->enc, b, cap, &pos), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(hpack_enc_field(&t->enc, b, cap, &pos, (const uint8_t *)kv[i].n,
						 strlen(kv[i].n), (const uint8_t *)kv[i].v,
						 strlen(kv[i].v), 0), 0);
	return pos;
}

static void headers(struct tc *t, uint32_t sid, const struct kv *kv, size_t n, bool end)
{
	uint8_t b[8192];
	size_t len = block(t, b, sizeof(b), kv, n);
	frame(t, H2_HEADERS, (uint8_t)(H2_FLAG_END_HEADERS | (end ? H2_FLAG_END_STREAM : 0)), sid, b, len);
}

static const struct kv GET[] = {{":method", "GET"}, {":scheme", "https"}, {":path", "/a"},
				{":authority", "example.org"}};

static void get(struct tc *t, uint32_t sid, bool end) { headers(t, sid, GET, 4, end); }

static const struct ofr *last_of(struct tc *t, uint8_t type)
{
	for (size_t i = t->nof; i-- > 0;)
		if (t->of[i].type == type)
			return &t->of[i];
	return NULL;
}

static const struct evrec *last_ev(struct tc *t, uint8_t type)
{
	for (size_t i = t->nev; i-- > 0;)
		if (t->ev[i].ev.type == type)
			return &t->ev[i];
	return NULL;
}

static void expect_goaway(struct tc *t, uint32_t code)
{
	const struct ofr *g = last_of(t, H2_GOAWAY);
	assert_non_null(g);
	assert_int_equal(g->code, code);
	assert_true(h2_conn_done(t->c));
	assert_non_null(last_ev(t, H2_EV_CLOSE));
}

static void expect_rst(struct tc *t, uint32_t sid, uint32_t code)
{
	const struct ofr *r = last_of(t, H2_RST_STREAM);
	assert_non_null(r);
	assert_int_equal(r->sid, sid);
	assert_int_equal(r->code, code);
	assert_null(last_of(t, H2_GOAWAY));
}

static struct h2_field F(const char *n, const char *v)
{
	return (struct h2_field){(const uint8_t *)n, (const uint8_t *)v, (uint32_t)strlen(n),
				 (uint32_t)strlen(v)};
}

/* ---- RFC 9113 behaviours ---- */

static void test_preface(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	drain(t);
	/* 3.4: our SETTINGS first, push off, then the connection window */
	assert_int_equal(t->of[0].type, H2_SETTINGS);
	assert_int_equal(t->of[0].len, 4 * 6);
	assert_int_equal(t->of[1].type, H2_WINDOW_UPDATE);
	assert_int_equal(t->of[1].inc, t->lim.conn_window - 65535);
	start(t);
	const struct ofr *ack = last_of(t, H2_SETTINGS);
	assert_true(ack->flags & H2_FLAG_ACK);
	assert_true(t->c->settings_acked);
	/* PING answered with the same opaque data */
	frame(t, H2_PING, 0, 0, "12345678", 8);
	const struct ofr *p = last_of(t, H2_PING);
	assert_true(p->flags & H2_FLAG_ACK);
	assert_memory_equal(p->opaque, "12345678", 8);
	tc_free(t);

	/* a wrong preface, and a first frame other than SETTINGS */
	t = tc_new(NULL);
	feed(t, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27);
	expect_goaway(t, H2_PROTOCOL_ERROR);
	tc_free(t);
	t = tc_new(NULL);
	feed(t, H2_PREFACE, H2_PREFACE_LEN);
	frame(t, H2_PING, 0, 0, "12345678", 8);
	expect_goaway(t, H2_PROTOCOL_ERROR);
	tc_free(t);
}

static void test_request_response(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	get(t, 1, true);
	const struct evrec *r = last_ev(t, H2_EV_REQUEST);
	assert_non_null(r);
	assert_int_equal(r->ev.stream_id, 1);
	assert_true(r->ev.end_stream);
	assert_string_equal(r->method, "GET");
	assert_string_equal(r->path, "/a");
	assert_string_equal(r->authority, "example.org");
	assert_int_equal(h2_conn_nstreams(t->c), 1);
	struct h2_field f[] = {F("Content-Type", "text/plain"), F("Transfer-Encoding", "chunked")};
	assert_int_equal(h2_conn_respond(t->c, 1, 200, f, 2, false), 0);
	assert_int_equal(h2_conn_respond(t->c, 1, 200, f, 2, false), -SK_EINVAL);
	assert_int_equal(h2_conn_send_body(t->c, 1, "hello", 5, true), 0);
	drain(t);
	assert_int_equal(t->last_status, 200);
	const struct ofr *d = last_of(t, H2_DATA);
	assert_int_equal(d->len, 5);
	assert_true(d->flags & H2_FLAG_END_STREAM);
	/* both ends closed: the slot is free, calls on it fail */
	assert_int_equal(h2_conn_nstreams(t->c), 0);
	assert_int_equal(h2_conn_send_body(t->c, 1, "x", 1, true), -SK_ECONNRESET);
	/* a HEADERS-only answer */
	get(t, 3, true);
	assert_int_equal(h2_conn_respond(t->c, 3, 204, NULL, 0, true), 0);
	drain(t);
	assert_int_equal(t->last_status, 204);
	assert_int_equal(h2_conn_nstreams(t->c), 0);
	assert_int_equal(t->c->st.requests, 2);
	tc_free(t);
}

static void test_stream_ids(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	get(t, 2, true); /* 5.1.1: even */
	expect_goaway(t, H2_PROTOCOL_ERROR);
	tc_free(t);
	t = tc_new(NULL);
	start(t);
	get(t, 5, true);
	get(t, 3, true); /* lower than one already opened: closed */
	expect_goaway(t, H2_STREAM_CLOSED);
	assert_int_equal(last_of(t, H2_GOAWAY)->last, 5);
	tc_free(t);
	/* DATA, RST_STREAM and WINDOW_UPDATE on an idle stream */
	uint8_t four[4] = {0, 0, 0, 1};
	for (int k = 0; k < 3; k++) {
		t = tc_new(NULL);
		start(t);
		frame(t, k == 0 ? H2_DATA : k == 1 ? H2_RST_STREAM : H2_WINDOW_UPDATE, 0, 7, four, 4);
		expect_goaway(t, H2_PROTOCOL_ERROR);
		tc_free(t);
	}
}

static int check_list(const struct kv *kv, size_t n)
{
	struct hpack_field fl[16];
	for (size_t i = 0; i < n; i++)
		fl[i] = (struct hpack_field){(const uint8_t *)kv[i].n, (const uint8_t *)kv[i].v,
					     (uint32_t)strlen(kv[i].n), (uint32_t)strlen(kv[i].v), 0};
	struct hpack_list l = {fl, 16, NULL, 0, 0, (uint32_t)n, 0, 0};
	struct h2_req r;
	struct h2_field out[16];
	return h2_req_from_list(&l, &r, out, 16);
}

static void test_request_checks(void **state)
{
	(void)state;
	const int M = -(int)H2_PROTOCOL_ERROR;
	struct kv ok[] = {{":method", "GET"}, {":scheme", "https"}, {":path", "/"},
			  {":authority", "a"}, {"accept", "*/*"}, {"te", "trailers"}};
	assert_int_equal(check_list(ok, 6), 0);
	assert_int_equal(check_list(ok, 3), 0); /* :authority optional */
	struct kv cases[][5] = {
		{{":method", "GET"}, {":scheme", "https"}},                                  /* no :path */
		{{":method", "GET"}, {":path", "/"}},                                        /* no :scheme */
		{{":scheme", "https"}, {":path", "/"}},                                      /* no :method */
		{{":method", "GET"}, {":scheme", "https"}, {":path", ""}},                   /* empty path */
		{{":method", "GET"}, {":scheme", "https"}, {":path", "x"}},                  /* not / */
		{{":method", "GET"}, {":method", "GET"}, {":scheme", "https"}, {":path", "/"}}, /* dup */
		{{":method", "GET"}, {":scheme", "https"}, {"a", "b"}, {":path", "/"}},      /* order */
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {":status", "200"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"Accept", "x"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"connection", "close"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"keep-alive", "1"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"proxy-connection", "a"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"transfer-encoding", "chunked"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"upgrade", "h2c"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"te", "gzip"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"x", " lead"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"x", "a\nb"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"content-length", "1x"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"content-length", "1"},
		 {"content-length", "1"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {":authority", "a"},
		 {"host", "b"}},                                                            /* 8.3.1 */
		{{":method", "CONNECT"}, {":authority", "a:443"}, {":path", "/"}},           /* 8.5 */
		{{":method", "G T"}, {":scheme", "https"}, {":path", "/"}},
		{{":method", "GET"}, {":scheme", "https"}, {":path", "/a b"}},
	};
	size_t lens[] = {2, 2, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 3, 3, 3};
	assert_int_equal(SK_ARRAY_LEN(lens), SK_ARRAY_LEN(cases));
	for (size_t i = 0; i < SK_ARRAY_LEN(cases); i++) {
		if (check_list(cases[i], lens[i]) != M)
			fail_msg("case %zu accepted", i);
	}
	struct kv connect[] = {{":method", "CONNECT"}, {":authority", "a:443"}};
	assert_int_equal(check_list(connect, 2), 0);
	struct kv opt[] = {{":method", "OPTIONS"}, {":scheme", "http"}, {":path", "*"}};
	assert_int_equal(check_list(opt, 3), 0);

	/* the HTTP/1.1 head: host from :authority, cookies joined, te dropped */
	struct kv h[] = {{":method", "POST"}, {":scheme", "https"}, {":path", "/p?q=1"},
			 {":authority", "ex.org"}, {"cookie", "a=1"}, {"te", "trailers"},
			 {"cookie", "b=2"}, {"content-length", "3"}};
	struct hpack_field fl[16];
	for (size_t i = 0; i < 8; i++)
		fl[i] = (struct hpack_field){(const uint8_t *)h[i].n, (const uint8_t *)h[i].v,
					     (uint32_t)strlen(h[i].n), (uint32_t)strlen(h[i].v), 0};
	struct hpack_list l = {fl, 16, NULL, 0, 0, 8, 0, 0};
	struct h2_req r;
	struct h2_field out[16];
	assert_int_equal(h2_req_from_list(&l, &r, out, 16), 0);
	assert_true(r.has_content_length);
	assert_int_equal(r.content_length, 3);
	uint8_t b[256];
	size_t n = h2_req_to_h1(&r, b, sizeof(b));
	const char *want = "POST /p?q=1 HTTP/1.1\r\nhost: ex.org\r\ncookie: a=1; b=2\r\n"
			   "content-length: 3\r\n\r\n";
	assert_int_equal(n, strlen(want));
	assert_memory_equal(b, want, n);
	assert_int_equal(h2_req_to_h1(&r, b, 10), 0);
	/* and the HTTP/1.1 engine's strict parser takes it as the same request */
	static struct http_req hr;
	http_req_init(&hr, 1 << 20);
	assert_int_equal(http_parse_head(&hr, b, n), (int)n);
	assert_int_equal(hr.method, HTTP_POST);
	assert_int_equal(hr.target.len, 6);
	assert_memory_equal(b + hr.target.off, "/p?q=1", 6);
	assert_true(hr.has_host);
	assert_true(hr.has_content_length);
	assert_int_equal(hr.content_length, 3);
	const struct http_header *ck = http_req_find(&hr, b, "cookie", 6);
	assert_non_null(ck);
	assert_int_equal(ck->value.len, 8);
}

static void test_malformed_on_wire(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	struct kv bad[] = {{":method", "GET"}, {":scheme", "https"}, {":path", "/"},
			   {"connection", "close"}};
	headers(t, 1, bad, 4, true);
	expect_rst(t, 1, H2_PROTOCOL_ERROR);
	assert_null(last_ev(t, H2_EV_REQUEST)); /* the handler never saw it */
	assert_int_equal(t->c->st.malformed, 1);
	/* content-length against DATA: short, long, and on a HEADERS with END_STREAM */
	struct kv cl[] = {{":method", "POST"}, {":scheme", "https"}, {":path", "/"},
			  {"content-length", "4"}};
	headers(t, 3, cl, 4, false);
	frame(t, H2_DATA, H2_FLAG_END_STREAM, 3, "abc", 3);
	expect_rst(t, 3, H2_PROTOCOL_ERROR);
	assert_int_equal(last_ev(t, H2_EV_RESET)->ev.stream_id, 3);
	headers(t, 5, cl, 4, false);
	frame(t, H2_DATA, 0, 5, "abcde", 5);
	expect_rst(t, 5, H2_PROTOCOL_ERROR);
	headers(t, 7, cl, 4, true);
	expect_rst(t, 7, H2_PROTOCOL_ERROR);
	headers(t, 9, cl, 4, false);
	frame(t, H2_DATA, 0, 9, "ab", 2);
	frame(t, H2_DATA, H2_FLAG_END_STREAM, 9, "cd", 2);
	const struct evrec *d = last_ev(t, H2_EV_DATA);
	assert_int_equal(d->ev.stream_id, 9);
	assert_true(d->ev.end_stream);
	assert_int_equal(t->c->st.malformed, 4);
	assert_false(h2_conn_done(t->c));
	tc_free(t);
}

static void lim_small_window(struct h2_limits *l) { l->initial_window = 100; }
static void lim_conn_window(struct h2_limits *l)
{
	l->conn_window = 65535;
	l->initial_window = 1 << 20;
}

static void test_flow_send(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	struct h2_setting s = {H2_SETTINGS_INITIAL_WINDOW_SIZE, 100};
	settings(t, &s, 1);
	get(t, 1, true);
	static uint8_t body[1000];
	assert_int_equal(h2_conn_respond(t->c, 1, 200, NULL, 0, false), 0);
	assert_int_equal(h2_conn_send_body(t->c, 1, body, sizeof(body), true), 0);
	drain(t);
	assert_int_equal(t->data_bytes, 100); /* the stream's window */
	assert_int_equal(h2_conn_take_writable(t->c), 0);
	/* 6.9.2: the window goes negative on a decrease */
	s.value = 50;
	settings(t, &s, 1);
	assert_int_equal(h2_conn_stream(t->c, 1)->send_win, -50);
	uint8_t inc[4] = {0, 0, 0, 60};
	frame(t, H2_WINDOW_UPDATE, 0, 1, inc, 4);
	assert_int_equal(t->data_bytes, 110);
	/* the connection window (65535) binds too */
	s.value = 1 << 20;
	settings(t, &s, 1);
	drain(t);
	assert_int_equal(t->data_bytes, 1000);
	assert_true(last_of(t, H2_DATA)->flags & H2_FLAG_END_STREAM);
	/* DATA frames no larger than the peer's max frame size */
	get(t, 3, true);
	static uint8_t big[70000];
	assert_int_equal(h2_conn_respond(t->c, 3, 200, NULL, 0, false), 0);
	assert_int_equal(h2_conn_send_body(t->c, 3, big, sizeof(big), true), 0);
	drain(t);
	for (size_t i = 0; i < t->nof; i++)
		assert_true(t->of[i].len <= H2_MIN_MAX_FRAME_SIZE);
	assert_int_equal(t->data_bytes, 1000 + 65535 - 1000); /* connection window spent */
	uint8_t cinc[4] = {0, 1, 0, 0};
	frame(t, H2_WINDOW_UPDATE, 0, 0, cinc, 4);
	assert_int_equal(t->data_bytes, 1000 + 70000);
	/* overflow past 2^31-1: stream error on a stream, connection error on 0 */
	get(t, 5, false);
	uint8_t huge[4] = {0x7f, 0xff, 0xff, 0xff};
	frame(t, H2_WINDOW_UPDATE, 0, 5, huge, 4);
	expect_rst(t, 5, H2_FLOW_CONTROL_ERROR);
	frame(t, H2_WINDOW_UPDATE, 0, 0, huge, 4);
	expect_goaway(t, H2_FLOW_CONTROL_ERROR);
	tc_free(t);
}

static void test_flow_recv(void **state)
{
	(void)state;
	struct tc *t = tc_new(lim_small_window);
	start(t);
	static uint8_t body[200];
	struct kv post[] = {{":method", "POST"}, {":scheme", "https"}, {":path", "/"}};
	headers(t, 1, post, 3, false);
	/* 60 bytes consumed: past half of 100, a WINDOW_UPDATE for the stream */
	frame(t, H2_DATA, 0, 1, body, 60);
	const struct ofr *wu = last_of(t, H2_WINDOW_UPDATE);
	assert_int_equal(wu->sid, 1);
	assert_int_equal(wu->inc, 60);
	frame(t, H2_DATA, 0, 1, body, 100);
	assert_int_equal(last_ev(t, H2_EV_DATA)->ev.len, 100);
	/* more than the window: FLOW_CONTROL_ERROR on the stream */
	headers(t, 3, post, 3, false);
	frame(t, H2_DATA, 0, 3, body, 101);
	expect_rst(t, 3, H2_FLOW_CONTROL_ERROR);
	assert_int_equal(last_ev(t, H2_EV_RESET)->ev.code, H2_FLOW_CONTROL_ERROR);
	tc_free(t);

	/* the connection's window (65535 here; the stream's is larger), with
	 * a handler that does not consume: raw recv, no record() */
	t = tc_new(lim_conn_window);
	start(t);
	headers(t, 1, post, 3, false);
	static uint8_t fr[9 + 16384];
	h2_data_hdr_emit(fr, sizeof(fr), 1, 16384, false);
	for (int i = 0; i < 3; i++) {
		struct h2_event ev;
		assert_int_equal(h2_conn_recv(t->c, fr, sizeof(fr), t->now, &ev), (long)sizeof(fr));
		assert_int_equal(ev.type, H2_EV_DATA);
	}
	assert_null(last_of(t, H2_GOAWAY));
	feed(t, fr, sizeof(fr)); /* 65536 > 65535 */
	expect_goaway(t, H2_FLOW_CONTROL_ERROR);
	assert_int_equal(t->c->st.flow_control_errors, 2 - 1);
	tc_free(t);
}

static void test_continuation_and_trailers(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	uint8_t b[512];
	size_t n = block(t, b, sizeof(b), GET, 4);
	frame(t, H2_HEADERS, 0, 1, b, 3);
	frame(t, H2_CONTINUATION, 0, 1, b + 3, 3);
	assert_null(last_ev(t, H2_EV_REQUEST));
	frame(t, H2_CONTINUATION, H2_FLAG_END_HEADERS, 1, b + 6, n - 6);
	assert_string_equal(last_ev(t, H2_EV_REQUEST)->path, "/a");
	/* trailers: a second block with END_STREAM */
	struct kv post[] = {{":method", "POST"}, {":scheme", "https"}, {":path", "/t"}};
	headers(t, 3, post, 3, false);
	frame(t, H2_DATA, 0, 3, "xy", 2);
	struct kv tr[] = {{"x-sum", "1"}};
	headers(t, 3, tr, 1, true);
	const struct evrec *e = last_ev(t, H2_EV_TRAILERS);
	assert_non_null(e);
	assert_int_equal(e->nfields, 1);
	/* trailers without END_STREAM, or with a pseudo-header: malformed */
	headers(t, 5, post, 3, false);
	headers(t, 5, tr, 1, false);
	expect_rst(t, 5, H2_PROTOCOL_ERROR);
	headers(t, 7, post, 3, false);
	headers(t, 7, post, 3, true);
	expect_rst(t, 7, H2_PROTOCOL_ERROR);
	/* another frame inside a header block: connection error */
	n = block(t, b, sizeof(b), GET, 4);
	frame(t, H2_HEADERS, 0, 9, b, 2);
	frame(t, H2_PING, 0, 0, "12345678", 8);
	expect_goaway(t, H2_PROTOCOL_ERROR);
	tc_free(t);
}

static void test_rst_goaway_misc(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	get(t, 1, false);
	uint8_t code[4] = {0, 0, 0, H2_CANCEL};
	frame(t, H2_RST_STREAM, 0, 1, code, 4);
	const struct evrec *r = last_ev(t, H2_EV_RESET);
	assert_true(r->ev.by_peer);
	assert_int_equal(r->ev.code, H2_CANCEL);
	assert_int_equal(h2_conn_nstreams(t->c), 0);
	/* DATA on the reset stream: STREAM_CLOSED */
	frame(t, H2_DATA, 0, 1, "x", 1);
	expect_rst(t, 1, H2_STREAM_CLOSED);
	/* PRIORITY, HEADERS with priority and unknown frame types are ignored */
	uint8_t prio[5] = {0, 0, 0, 0, 15};
	frame(t, H2_PRIORITY, 0, 3, prio, 5);
	frame(t, 0x20, 0, 0, "abc", 3);
	assert_false(h2_conn_done(t->c));
	/* 5.3.1: HEADERS depending on its own stream is a stream error; its
	 * block is still decoded, so the entry it added serves the next one */
	struct kv xa[] = {{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"x-a", "1"}};
	uint8_t pb[256] = {0, 0, 0, 9, 15};
	size_t pn = block(t, pb + 5, sizeof(pb) - 5, xa, 4);
	frame(t, H2_HEADERS, H2_FLAG_END_HEADERS | H2_FLAG_PRIORITY | H2_FLAG_END_STREAM, 9, pb,
	      5 + pn);
	expect_rst(t, 9, H2_PROTOCOL_ERROR);
	headers(t, 11, xa, 4, true);
	assert_int_equal(last_ev(t, H2_EV_REQUEST)->ev.stream_id, 11);
	assert_int_equal(last_ev(t, H2_EV_REQUEST)->nfields, 1);
	assert_int_equal(h2_conn_respond(t->c, 11, 200, NULL, 0, true), 0);
	/* our drain: GOAWAY NO_ERROR with the last stream; newer ones ignored */
	get(t, 13, true);
	h2_conn_shutdown(t->c, t->now);
	drain(t);
	const struct ofr *g = last_of(t, H2_GOAWAY);
	assert_int_equal(g->code, H2_NO_ERROR);
	assert_int_equal(g->last, 13);
	size_t nreq = t->c->st.requests;
	get(t, 15, true);
	assert_int_equal(t->c->st.requests, nreq);
	assert_false(h2_conn_done(t->c)); /* stream 13 still open */
	assert_int_equal(h2_conn_respond(t->c, 13, 200, NULL, 0, true), 0);
	drain(t);
	assert_true(h2_conn_done(t->c));
	tc_free(t);
	/* the peer's GOAWAY; PUSH_PROMISE refused */
	t = tc_new(NULL);
	start(t);
	uint8_t ga[8] = {0};
	frame(t, H2_GOAWAY, 0, 0, ga, 8);
	assert_non_null(last_ev(t, H2_EV_GOAWAY));
	assert_true(h2_conn_done(t->c));
	tc_free(t);
	t = tc_new(NULL);
	start(t);
	uint8_t pp[4] = {0, 0, 0, 2};
	frame(t, H2_PUSH_PROMISE, H2_FLAG_END_HEADERS, 1, pp, 4);
	expect_goaway(t, H2_PROTOCOL_ERROR);
	tc_free(t);
}

/* ---- defences ---- */

static void lim_budgets(struct h2_limits *l)
{
	l->reset_budget = 10;
	l->settings_budget = 5;
	l->ping_budget = 5;
	l->empty_data_budget = 5;
	l->window_update_budget = 5;
	l->priority_budget = 5;
	l->flood_window = S;
}

static void test_rapid_reset(void **state)
{
	(void)state;
	struct tc *t = tc_new(lim_budgets);
	start(t);
	uint8_t code[4] = {0, 0, 0, H2_CANCEL};
	uint32_t sid = 1;
	/* 10 per second is fine, second after second */
	for (int sec = 0; sec < 3; sec++, t->now += S)
		for (int i = 0; i < 10; i++, sid += 2) {
			get(t, sid, true);
			frame(t, H2_RST_STREAM, 0, sid, code, 4);
		}
	assert_false(h2_conn_done(t->c));
	for (int i = 0; i < 11; i++, sid += 2) {
		get(t, sid, true);
		frame(t, H2_RST_STREAM, 0, sid, code, 4);
	}
	expect_goaway(t, H2_ENHANCE_YOUR_CALM);
	assert_int_equal(t->c->st.rapid_reset, 1);
	assert_int_equal(t->c->st.resets_in, 41);
	tc_free(t);
}

static void flood(uint8_t type, uint8_t flags, uint32_t sid, const void *p, size_t n,
		  size_t off_counter)
{
	struct tc *t = tc_new(lim_budgets);
	start(t);
	if (sid)
		get(t, sid, false);
	/* start() spent one SETTINGS of the budget */
	int allowed = type == H2_SETTINGS ? 4 : 5;
	for (int i = 0; i < allowed; i++)
		frame(t, type, flags, sid, p, n);
	assert_false(h2_conn_done(t->c));
	frame(t, type, flags, sid, p, n);
	expect_goaway(t, H2_ENHANCE_YOUR_CALM);
	assert_int_equal(*(uint64_t *)((uint8_t *)&t->c->st + off_counter), 1);
	tc_free(t);
}

static void test_floods(void **state)
{
	(void)state;
	uint8_t inc[4] = {0, 0, 0, 1};
	uint8_t prio[5] = {0, 0, 0, 0, 15};
	flood(H2_SETTINGS, 0, 0, NULL, 0, offsetof(struct h2_stats, settings_flood));
	flood(H2_PING, 0, 0, "12345678", 8, offsetof(struct h2_stats, ping_flood));
	flood(H2_DATA, 0, 1, NULL, 0, offsetof(struct h2_stats, empty_data_flood));
	flood(H2_WINDOW_UPDATE, 0, 0, inc, 4, offsetof(struct h2_stats, window_update_flood));
	flood(H2_PRIORITY, 0, 3, prio, 5, offsetof(struct h2_stats, priority_flood));
}

static void lim_blocks(struct h2_limits *l)
{
	l->max_header_frames = 4;
	l->max_header_block = 1000;
}

static void test_continuation_flood(void **state)
{
	(void)state;
	/* empty CONTINUATIONs that never end: counted by frames */
	struct tc *t = tc_new(lim_blocks);
	start(t);
	frame(t, H2_HEADERS, 0, 1, "\x82", 1);
	for (int i = 0; i < 3; i++)
		frame(t, H2_CONTINUATION, 0, 1, NULL, 0);
	assert_false(h2_conn_done(t->c));
	frame(t, H2_CONTINUATION, 0, 1, NULL, 0);
	expect_goaway(t, H2_ENHANCE_YOUR_CALM);
	assert_int_equal(t->c->st.continuation_flood, 1);
	tc_free(t);
	/* a block over its byte limit */
	t = tc_new(lim_blocks);
	start(t);
	static uint8_t junk[600];
	frame(t, H2_HEADERS, 0, 1, junk, 600);
	frame(t, H2_CONTINUATION, 0, 1, junk, 600);
	expect_goaway(t, H2_ENHANCE_YOUR_CALM);
	assert_int_equal(t->c->st.header_block_large, 1);
	tc_free(t);
}

static void test_hpack_bomb(void **state)
{
	(void)state;
	struct tc *t = tc_new(NULL);
	start(t);
	/* one 4000-byte entry in the table, then a block naming it 100 times:
	 * 400 bytes on the wire, 400 KB decoded */
	static char v[4001];
	memset(v, 'v', 4000);
	struct kv first[] = {{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"x-b", v}};
	headers(t, 1, first, 4, true);
	assert_non_null(last_ev(t, H2_EV_REQUEST));
	uint8_t b[512];
	size_t n = 0;
	b[n++] = 0x82; /* :method GET */
	b[n++] = 0x87; /* :scheme https */
	b[n++] = 0x84; /* :path / */
	for (int i = 0; i < 100; i++)
		b[n++] = 0x80 | 62; /* the newest dynamic entry */
	frame(t, H2_HEADERS, H2_FLAG_END_HEADERS | H2_FLAG_END_STREAM, 3, b, n);
	drain(t);
	assert_int_equal(t->last_status, 431);
	assert_int_equal(t->c->st.header_list_large, 1);
	assert_int_equal(t->c->st.requests, 1);
	/* the table stayed in step: the connection serves the next request */
	assert_int_equal(h2_conn_respond(t->c, 1, 200, NULL, 0, true), 0);
	get(t, 5, true);
	assert_int_equal(last_ev(t, H2_EV_REQUEST)->ev.stream_id, 5);
	assert_false(h2_conn_done(t->c));
	tc_free(t);
}

static void lim_two(struct h2_limits *l) { l->max_streams = 2; }

static void test_max_streams(void **state)
{
	(void)state;
	struct tc *t = tc_new(lim_two);
	start(t);
	get(t, 1, false);
	get(t, 3, false);
	get(t, 5, false);
	expect_rst(t, 5, H2_REFUSED_STREAM);
	assert_int_equal(t->c->st.refused_streams, 1);
	assert_int_equal(h2_conn_nstreams(t->c), 2);
	/* one closes: the next is taken */
	uint8_t code[4] = {0, 0, 0, H2_CANCEL};
	frame(t, H2_RST_STREAM, 0, 1, code, 4);
	get(t, 7, false);
	assert_int_equal(last_ev(t, H2_EV_REQUEST)->ev.stream_id, 7);
	assert_int_equal(h2_conn_nstreams(t->c), 2);
	tc_free(t);
}

static void test_backpressure(void **state)
{
	(void)state;
	/* a peer that sends PINGs and never reads: we stop reading once the
	 * queue is half full, and the queue stays within its room */
	struct tc *t = tc_new(NULL);
	t->lim.ping_budget = 0;
	t->c->lim.ping_budget = 0;
	start(t);
	static uint8_t pings[17 * 4000];
	for (int i = 0; i < 4000; i++)
		h2_ping_emit(pings + 17 * i, 17, false, (const uint8_t *)"abcdefgh");
	struct h2_event ev;
	long used = h2_conn_recv(t->c, pings, sizeof(pings), t->now, &ev);
	assert_true(used > 0 && used < (long)sizeof(pings));
	assert_true(h2_conn_out_pending(t->c) <= H2_OUT_CAP);
	assert_int_equal(h2_conn_recv(t->c, pings + used, sizeof(pings) - (size_t)used, t->now, &ev), 0);
	assert_false(h2_conn_done(t->c));
	tc_free(t);
}

/* ---- timers ---- */

static void tick_all(struct tc *t)
{
	struct h2_event ev;
	do {
		h2_conn_tick(t->c, t->now, &ev);
		record(t, &ev);
	} while (ev.type != H2_EV_NONE);
	drain(t);
}

static void test_timeouts(void **state)
{
	(void)state;
	/* no preface: the header timeout */
	struct tc *t = tc_new(NULL);
	uint64_t d = h2_conn_deadline(t->c);
	assert_int_equal(d, t->now + t->lim.header_timeout);
	t->now = d - 1;
	tick_all(t);
	assert_false(h2_conn_done(t->c));
	t->now = d;
	tick_all(t);
	assert_true(h2_conn_done(t->c));
	assert_int_equal(t->c->st.header_timeouts, 1);
	tc_free(t);
	/* SETTINGS never acknowledged */
	t = tc_new(NULL);
	feed(t, H2_PREFACE, H2_PREFACE_LEN);
	settings(t, NULL, 0);
	t->now += t->lim.settings_timeout;
	tick_all(t);
	expect_goaway(t, H2_SETTINGS_TIMEOUT);
	assert_int_equal(t->c->st.settings_timeouts, 1);
	tc_free(t);
	/* idle: no stream, no frame */
	t = tc_new(NULL);
	start(t);
	assert_int_equal(h2_conn_deadline(t->c), t->now + t->lim.idle_timeout);
	get(t, 1, true);
	assert_int_equal(h2_conn_respond(t->c, 1, 200, NULL, 0, true), 0);
	drain(t);
	t->now += t->lim.idle_timeout / 2;
	frame(t, H2_PING, 0, 0, "12345678", 8); /* a PING does not keep it */
	t->now += t->lim.idle_timeout / 2;
	tick_all(t);
	expect_goaway(t, H2_NO_ERROR);
	assert_int_equal(t->c->st.idle_timeouts, 1);
	tc_free(t);
	/* a header block that never ends */
	t = tc_new(NULL);
	start(t);
	frame(t, H2_HEADERS, 0, 1, "\x82", 1);
	assert_int_equal(h2_conn_deadline(t->c), t->now + t->lim.header_timeout);
	t->now += t->lim.header_timeout;
	tick_all(t);
	expect_goaway(t, H2_ENHANCE_YOUR_CALM);
	tc_free(t);
	/* a request body that stops coming: the stream is reset, not the connection */
	t = tc_new(NULL);
	start(t);
	struct kv post[] = {{":method", "POST"}, {":scheme", "https"}, {":path", "/"}};
	headers(t, 1, post, 3, false);
	t->now += t->lim.stream_idle_timeout;
	tick_all(t);
	expect_rst(t, 1, H2_CANCEL);
	assert_int_equal(last_ev(t, H2_EV_RESET)->ev.stream_id, 1);
	assert_int_equal(t->c->st.stream_idle_resets, 1);
	tc_free(t);
}

static void test_stall(void **state)
{
	(void)state;
	/* a client that keeps its window at 0 holds the response */
	struct tc *t = tc_new(NULL);
	start(t);
	struct h2_setting s = {H2_SETTINGS_INITIAL_WINDOW_SIZE, 0};
	settings(t, &s, 1);
	get(t, 1, true);
	static uint8_t body[100];
	assert_int_equal(h2_conn_respond(t->c, 1, 200, NULL, 0, false), 0);
	assert_int_equal(h2_conn_send_body(t->c, 1, body, 100, true), 0);
	drain(t);
	assert_int_equal(t->data_bytes, 0);
	uint64_t d = h2_conn_deadline(t->c);
	assert_int_equal(d, t->now + t->lim.stall_timeout);
	t->now = d;
	tick_all(t);
	expect_rst(t, 1, H2_CANCEL);
	assert_int_equal(t->c->st.stall_resets, 1);
	assert_int_equal(h2_conn_nstreams(t->c), 0);
	tc_free(t);
}

static void test_init_limits(void **state)
{
	(void)state;
	struct h2_conn *c = calloc(1, sizeof(*c));
	struct h2_limits l;
	h2_limits_default(&l);
	l.max_streams = H2_STREAMS_CAP + 1;
	assert_int_equal(h2_conn_init(c, &l, 0), -SK_EINVAL);
	h2_limits_default(&l);
	l.max_header_block = H2_HDR_BLOCK_CAP + 1;
	assert_int_equal(h2_conn_init(c, &l, 0), -SK_EINVAL);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preface),
		cmocka_unit_test(test_request_response),
		cmocka_unit_test(test_stream_ids),
		cmocka_unit_test(test_request_checks),
		cmocka_unit_test(test_malformed_on_wire),
		cmocka_unit_test(test_flow_send),
		cmocka_unit_test(test_flow_recv),
		cmocka_unit_test(test_continuation_and_trailers),
		cmocka_unit_test(test_rst_goaway_misc),
		cmocka_unit_test(test_rapid_reset),
		cmocka_unit_test(test_floods),
		cmocka_unit_test(test_continuation_flood),
		cmocka_unit_test(test_hpack_bomb),
		cmocka_unit_test(test_max_streams),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_stall),
		cmocka_unit_test(test_init_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
