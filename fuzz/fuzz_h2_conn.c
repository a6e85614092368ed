/* fuzz_h2_conn.c — the HTTP/2 engine (h2/conn.h) driven by a script of
 * random steps: raw bytes, well-formed frames of any type, valid request
 * header blocks, and the handler's side (answers, body pieces, consumes,
 * resets, drains of any size, time passing, timers, shutdown).  After
 * every step the invariants are checked:
 *  - recv takes at most what it was given; events point inside the input;
 *  - streams held <= limits.max_streams, and the count matches the table;
 *  - every stream's id is odd and <= the highest the peer opened; windows
 *    (ours and the peer's, per stream and per connection) never above
 *    2^31-1, our receive windows never below what the RFC allows;
 *  - the output queue within its room; output never above the caller's
 *    cap, always whole valid frames, DATA within the peer's frame size;
 *  - both HPACK tables consistent (hpack_table_check).
 *
 * Input: byte 0 picks limits (bit 0: small windows, bit 1: 2 streams,
 * bit 2: tiny budgets, bit 3: start with the preface and SETTINGS); then
 * steps, each an op byte and its arguments (see step()).
 * Build: make build/fuzz/fuzz_h2_conn. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2/conn.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct h2_conn conn;
static struct hpack_enc enc;
static uint8_t enc_bytes[HPACK_TABLE_BYTES(4096)];
static struct hpack_entry enc_ents[HPACK_TABLE_ENTRIES(4096)];
static uint8_t in[1 << 17];
static size_t inlen;
static uint8_t out[1 << 17];
static uint8_t body[1 << 16];
static uint64_t now;

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

static uint16_t u16(struct rd *r) { return (uint16_t)(u8(r) << 8 | u8(r)); }

static void check_conn(void)
{
	const struct h2_conn *c = &conn;
	uint32_t held = 0;
	CHECK(c->nstreams <= c->lim.max_streams);
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++) {
		const struct h2_stream *s = &c->streams[i];
		if (s->state == H2_ST_FREE)
			continue;
		held++;
		CHECK(s->id & 1);
		CHECK(s->id <= c->last_peer_sid);
		CHECK(s->send_win <= (int64_t)H2_MAX_WINDOW);
		CHECK(s->send_win >= -(int64_t)H2_MAX_WINDOW);
		CHECK(s->recv_win <= (int64_t)H2_MAX_WINDOW);
		CHECK(s->recv_win >= -65535);
		for (uint32_t k = i + 1; k < H2_STREAMS_CAP; k++)
			CHECK(c->streams[k].state == H2_ST_FREE || c->streams[k].id != s->id);
	}
	CHECK(held == c->nstreams);
	CHECK(c->send_win <= (int64_t)H2_MAX_WINDOW);
	CHECK(c->recv_win >= 0 && c->recv_win <= (int64_t)H2_MAX_WINDOW);
	CHECK(c->out_off <= c->out_len && c->out_len <= H2_OUT_CAP);
	CHECK(hpack_table_check(&c->dec.t) == 0);
	CHECK(hpack_table_check(&c->enc.t) == 0);
}

/* Output is a byte stream (a small cap may cut a frame): what has come
 * out so far must parse as valid frames, as a client would read them.
 * Payloads are not kept: oskip counts the bytes of one still to come. */
static uint8_t ohdr[H2_FRAME_HDR_LEN];
static size_t ohlen, oskip;

static void check_output(size_t n, size_t cap)
{
	CHECK(n <= cap);
	for (size_t off = 0; off < n;) {
		if (oskip) {
			size_t k = n - off < oskip ? n - off : oskip;
			oskip -= k;
			off += k;
			continue;
		}
		ohdr[ohlen++] = out[off++];
		if (ohlen < H2_FRAME_HDR_LEN)
			continue;
		struct h2_frame_hdr h;
		CHECK(h2_frame_hdr_parse(ohdr, ohlen, H2_MAX_MAX_FRAME_SIZE, &h) == H2_FRAME_HDR_LEN);
		CHECK(h.type <= H2_CONTINUATION && h.type != H2_PUSH_PROMISE);
		if (h.type == H2_DATA)
			CHECK(h.len <= conn.peer_max_frame && (h.stream_id & 1));
		if (h.type == H2_HEADERS || h.type == H2_CONTINUATION)
			CHECK(h.len <= conn.peer_max_frame && (h.stream_id & 1));
		ohlen = 0;
		oskip = h.len;
	}
}

static void on_event(const struct h2_event *ev)
{
	if (ev->type == H2_EV_DATA) {
		CHECK(ev->len == 0 || (ev->data >= in && ev->data + ev->len <= in + inlen));
	}
	if (ev->type == H2_EV_REQUEST) {
		CHECK(ev->req && ev->req->method.value_len > 0);
	}
}

static void feed(const uint8_t *b, size_t n)
{
	if (n > sizeof(in) - inlen)
		n = sizeof(in) - inlen;
	memcpy(in + inlen, b, n);
	inlen += n;
	for (int guard = 0; guard < 64; guard++) {
		struct h2_event ev;
		long used = h2_conn_recv(&conn, in, inlen, now, &ev);
		CHECK(used >= 0 && (size_t)used <= inlen);
		on_event(&ev);
		check_conn();
		memmove(in, in + used, inlen - (size_t)used);
		inlen -= (size_t)used;
		if (ev.type == H2_EV_NONE && used == 0) {
			if (h2_conn_out_pending(&conn) == 0)
				break;
			check_output(h2_conn_output(&conn, out, sizeof(out), now), sizeof(out));
		}
	}
}

static void frame(uint8_t type, uint8_t flags, uint32_t sid, const uint8_t *p, size_t n)
{
	static uint8_t b[9 + 4096];
	if (n > 4096)
		n = 4096;
	h2_frame_hdr_emit(b, sizeof(b), (uint32_t)n, type, flags, sid);
	if (n)
		memcpy(b + 9, p, n);
	feed(b, 9 + n);
}

/* An open stream's id, picked by k (0: none). */
static uint32_t pick(uint8_t k)
{
	if (!conn.nstreams)
		return 0;
	uint32_t want = k % conn.nstreams;
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++)
		if (conn.streams[i].state != H2_ST_FREE && want-- == 0)
			return conn.streams[i].id;
	return 0;
}

static void request(struct rd *r)
{
	static const char *const names[] = {":method", ":scheme", ":path", ":authority",
					    "content-length", "te", "accept", "cookie", "x-big",
					    "connection", "Host"};
	static const char *const vals[] = {"GET", "POST", "https", "/", "/x", "a.org", "0", "5",
					   "trailers", "*/*", ""};
	uint8_t blk[2048];
	size_t pos = 0;
	uint32_t sid = (uint32_t)(u16(r) | 1);
	uint8_t flags = u8(r);
	bool valid = !(flags & 0x80);
	if (hpack_enc_begin(&enc, blk, sizeof(blk), &pos))
		return;
	if (valid) {
		hpack_enc_field(&enc, blk, sizeof(blk), &pos, (const uint8_t *)":method", 7,
				(const uint8_t *)((flags & 1) ? "POST" : "GET"), (flags & 1) ? 4 : 3, 0);
		hpack_enc_field(&enc, blk, sizeof(blk), &pos, (const uint8_t *)":scheme", 7,
				(const uint8_t *)"https", 5, 0);
		hpack_enc_field(&enc, blk, sizeof(blk), &pos, (const uint8_t *)":path", 5,
				(const uint8_t *)"/p", 2, 0);
	}
	for (uint8_t k = u8(r) % 6; k > 0; k--) {
		const char *n = names[u8(r) % SK_ARRAY_LEN(names)];
		const char *v = vals[u8(r) % SK_ARRAY_LEN(vals)];
		size_t vl = strlen(v);
		if (!strcmp(n, "x-big")) {
			v = (const char *)body;
			vl = u8(r) * 8u;
		}
		if (hpack_enc_field(&enc, blk, sizeof(blk), &pos, (const uint8_t *)n, strlen(n),
				    (const uint8_t *)v, vl, 0))
			break;
	}
	uint8_t fl = (uint8_t)((flags & 2 ? H2_FLAG_END_STREAM : 0));
	if (flags & 4 && pos > 2) {
		/* split over a CONTINUATION */
		frame(H2_HEADERS, fl, sid, blk, pos / 2);
		frame(H2_CONTINUATION, H2_FLAG_END_HEADERS, sid, blk + pos / 2, pos - pos / 2);
	} else {
		frame(H2_HEADERS, (uint8_t)(fl | H2_FLAG_END_HEADERS), sid, blk, pos);
	}
}

static void step(struct rd *r)
{
	uint8_t op = u8(r) % 13;
	switch (op) {
	case 0: { /* raw bytes */
		size_t n = u8(r);
		if (n > r->n)
			n = r->n;
		feed(r->p, n);
		r->p += n;
		r->n -= n;
		break;
	}
	case 1: { /* a frame of any type with a payload from the input */
		uint8_t type = u8(r) % 11, flags = u8(r);
		uint32_t sid = u8(r) % 4 == 0 ? 0 : u16(r);
		size_t n = u8(r);
		if (n > r->n)
			n = r->n;
		frame(type, flags, sid, r->p, n);
		r->p += n;
		r->n -= n;
		break;
	}
	case 2:
		request(r);
		break;
	case 3: { /* DATA on a stream */
		uint32_t sid = u8(r) & 1 ? pick(u8(r)) : u16(r);
		size_t n = u16(r) % 20000;
		frame(H2_DATA, u8(r) & H2_FLAG_END_STREAM, sid, body, n);
		break;
	}
	case 4: { /* answer */
		uint32_t sid = pick(u8(r));
		uint8_t f = u8(r);
		struct h2_field fl[2] = {
			{(const uint8_t *)"Content-Type", (const uint8_t *)"text/plain", 12, 10},
			{(const uint8_t *)"x-long", body, 6, (uint32_t)(u8(r) * 16u)},
		};
		h2_conn_respond(&conn, sid, 200 + (f % 4) * 100, fl, 1 + (f >> 7), f & 1);
		break;
	}
	case 5: { /* body piece */
		uint32_t sid = pick(u8(r));
		size_t n = u16(r);
		h2_conn_send_body(&conn, sid, body, n, u8(r) & 1);
		break;
	}
	case 6:
		h2_conn_consume(&conn, pick(u8(r)), u16(r));
		break;
	case 7:
		h2_conn_reset(&conn, pick(u8(r)), u8(r));
		break;
	case 8: { /* output into a buffer of some size */
		size_t cap = (size_t)u16(r) + 1;
		if (cap > sizeof(out))
			cap = sizeof(out);
		check_output(h2_conn_output(&conn, out, cap, now), cap);
		while (h2_conn_take_writable(&conn))
			;
		break;
	}
	case 9:
		now += (uint64_t)u8(r) * 100000000ull; /* up to 25.5 s */
		break;
	case 10: {
		struct h2_event ev;
		for (int k = 0; k < 200; k++) {
			h2_conn_tick(&conn, now, &ev);
			on_event(&ev);
			if (ev.type == H2_EV_NONE)
				break;
		}
		/* the deadline is in the future once the timers ran */
		CHECK(conn.phase == H2_PH_CLOSING || h2_conn_deadline(&conn) > now);
		break;
	}
	case 11:
		h2_conn_shutdown(&conn, now);
		break;
	case 12: { /* a SETTINGS frame of chosen values */
		struct h2_setting s = {(uint16_t)(1 + u8(r) % 6), 0};
		s.value = (uint32_t)u16(r) << (u8(r) % 16);
		uint8_t b[9 + 6];
		if (h2_settings_emit(b, sizeof(b), &s, 1))
			feed(b, sizeof(b));
		break;
	}
	}
	check_conn();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = {data, size};
	uint8_t cfg = u8(&r);
	struct h2_limits l;
	h2_limits_default(&l);
	if (cfg & 1) {
		l.initial_window = 1000;
		l.conn_window = 65535;
	}
	if (cfg & 2)
		l.max_streams = 2;
	if (cfg & 4) {
		l.reset_budget = l.settings_budget = l.ping_budget = 3;
		l.empty_data_budget = l.window_update_budget = l.priority_budget = 3;
		l.max_header_frames = 3;
		l.max_header_list = 512;
	}
	now = 1000000000ull;
	inlen = 0;
	ohlen = oskip = 0;
	CHECK(h2_conn_init(&conn, &l, now) == 0);
	CHECK(hpack_enc_init(&enc, 4096, enc_bytes, sizeof(enc_bytes), enc_ents,
			     SK_ARRAY_LEN(enc_ents)) == 0);
	memset(body, 'b', sizeof(body));
	if (cfg & 8) {
		feed((const uint8_t *)H2_PREFACE, H2_PREFACE_LEN);
		frame(H2_SETTINGS, 0, 0, NULL, 0);
		frame(H2_SETTINGS, H2_FLAG_ACK, 0, NULL, 0);
	}
	for (int steps = 0; r.n && steps < 400; steps++)
		step(&r);
	/* whatever happened, the output drains to an end */
	for (int k = 0; k < 1000; k++) {
		size_t n = h2_conn_output(&conn, out, sizeof(out), now);
		check_output(n, sizeof(out));
		if (n == 0)
			break;
	}
	check_conn();
	return 0;
}
