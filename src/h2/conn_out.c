/* conn_out.c — the HTTP/2 engine's output side: the queue of control and
 * HEADERS frames, responses encoded with HPACK, and DATA cut to the peer's
 * frame size and windows, round-robin over the streams.
 *
 * The queue, c->out[out_off, out_len), holds whole frames the engine wrote;
 * h2_conn_output copies it out first, then writes DATA straight from the
 * handler's memory into the caller's buffer (no copy inside the engine). */
#include "h2/conn.h"
#include "h2/conn_priv.h"

/* Room for n more bytes, keeping `keep` free; compacts the queue. */
static uint8_t *out_room(struct h2_conn *c, size_t n, size_t keep)
{
	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (H2_OUT_CAP - c->out_len < n + keep && c->out_off) {
		sk_memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (H2_OUT_CAP - c->out_len < n + keep)
		return NULL;
	return c->out + c->out_len;
}

static bool overflow(struct h2_conn *c)
{
	c->st.out_overflow++;
	h2_conn_error(c, H2_ENHANCE_YOUR_CALM);
	return false;
}

#define CTL(c, n, emit_call)                                                         \
	do {                                                                         \
		uint8_t *p_ = out_room((c), (n), H2_OUT_GOAWAY_RESERVE);             \
		if (!p_)                                                             \
			return overflow(c);                                          \
		size_t w_ = emit_call;                                               \
		(c)->out_len += (uint32_t)w_;                                        \
		return w_ != 0;                                                      \
	} while (0)

bool h2_out_settings(struct h2_conn *c, const struct h2_setting *s, size_t n)
{
	size_t len = H2_FRAME_HDR_LEN + n * H2_SETTING_LEN;
	CTL(c, len, h2_settings_emit(p_, len, s, n));
}

bool h2_out_settings_ack(struct h2_conn *c)
{
	CTL(c, H2_FRAME_HDR_LEN, h2_settings_ack_emit(p_, H2_FRAME_HDR_LEN));
}

bool h2_out_ping_ack(struct h2_conn *c, const uint8_t opaque[8])
{
	CTL(c, H2_FRAME_HDR_LEN + 8, h2_ping_emit(p_, H2_FRAME_HDR_LEN + 8, true, opaque));
}

bool h2_out_rst(struct h2_conn *c, uint32_t sid, uint32_t code)
{
	CTL(c, H2_FRAME_HDR_LEN + 4, h2_rst_stream_emit(p_, H2_FRAME_HDR_LEN + 4, sid, code));
}

bool h2_out_window_update(struct h2_conn *c, uint32_t sid, uint32_t inc)
{
	CTL(c, H2_FRAME_HDR_LEN + 4, h2_window_update_emit(p_, H2_FRAME_HDR_LEN + 4, sid, inc));
}

void h2_out_goaway(struct h2_conn *c, uint32_t last_sid, uint32_t code)
{
	c->goaway_sent = true;
	c->goaway_last = last_sid;
	uint8_t *p = out_room(c, H2_FRAME_HDR_LEN + 8, 0);
	if (p)
		c->out_len += (uint32_t)h2_goaway_emit(p, H2_FRAME_HDR_LEN + 8, last_sid, code, NULL, 0);
}

/* ---- streams' ends ---- */

/* END_STREAM sent (5.1): open -> half-closed (local); half-closed (remote)
 * -> closed. */
void h2_stream_local_end(struct h2_conn *c, struct h2_stream *s)
{
	if (s->state == H2_ST_OPEN)
		s->state = H2_ST_HALF_CLOSED_LOCAL;
	else if (s->state == H2_ST_HALF_CLOSED_REMOTE)
		h2_stream_free(c, s);
}

int h2_conn_reset(struct h2_conn *c, uint32_t sid, uint32_t code)
{
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s || c->phase == H2_PH_CLOSING)
		return -SK_ECONNRESET;
	h2_out_rst(c, sid, code);
	h2_stream_free(c, s);
	return 0;
}

/* ---- responses ---- */

/* 8.2.2: never sent on HTTP/2, whatever a handler written for HTTP/1.1
 * adds. */
static bool hop_by_hop(const uint8_t *p, size_t n)
{
	static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
					    "transfer-encoding", "upgrade"};
	for (size_t i = 0; i < SK_ARRAY_LEN(names); i++) {
		size_t l = __builtin_strlen(names[i]);
		if (n != l)
			continue;
		size_t k = 0;
		while (k < n && (p[k] | 0x20) == names[i][k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}

#define NAME_MAX_LEN 256u

int h2_conn_respond(struct h2_conn *c, uint32_t sid, unsigned status, const struct h2_field *f,
		    size_t n, bool end_stream)
{
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s || c->phase == H2_PH_CLOSING)
		return -SK_ECONNRESET;
	if (s->responded || status < 200 || status > 999)
		return -SK_EINVAL;
	/* Check everything and bound the block before the encoder's table
	 * changes: after the first field, there is no way back. */
	size_t est = 32;
	for (size_t i = 0; i < n; i++) {
		if (f[i].name_len == 0 || f[i].name_len > NAME_MAX_LEN)
			return -SK_EINVAL;
		for (uint32_t k = 0; k < f[i].value_len; k++)
			if (f[i].value[k] == 0 || f[i].value[k] == '\r' || f[i].value[k] == '\n')
				return -SK_EINVAL;
		est += (size_t)f[i].name_len + f[i].value_len + 12;
	}
	if (est > H2_RESP_BLOCK_CAP)
		return -SK_EINVAL;
	size_t frames = est / c->peer_max_frame + 1;
	if (!out_room(c, est + frames * H2_FRAME_HDR_LEN, H2_OUT_CTL_RESERVE))
		return -SK_EAGAIN;

	size_t pos = 0;
	uint8_t *b = c->blk;
	hpack_enc_begin(&c->enc, b, H2_RESP_BLOCK_CAP, &pos);
	uint8_t st[3] = {(uint8_t)('0' + status / 100), (uint8_t)('0' + status / 10 % 10),
			 (uint8_t)('0' + status % 10)};
	hpack_enc_field(&c->enc, b, H2_RESP_BLOCK_CAP, &pos, (const uint8_t *)":status", 7, st, 3, 0);
	for (size_t i = 0; i < n; i++) {
		uint8_t lname[NAME_MAX_LEN];
		for (uint32_t k = 0; k < f[i].name_len; k++) {
			uint8_t ch = f[i].name[k];
			lname[k] = ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch | 0x20) : ch;
		}
		if (hop_by_hop(lname, f[i].name_len))
			continue;
		hpack_enc_field(&c->enc, b, H2_RESP_BLOCK_CAP, &pos, lname, f[i].name_len,
				f[i].value, f[i].value_len, 0);
	}
	/* Frame it: HEADERS, then CONTINUATIONs, each within the peer's
	 * SETTINGS_MAX_FRAME_SIZE. */
	size_t off = 0;
	bool first = true;
	do {
		size_t chunk = pos - off;
		if (chunk > c->peer_max_frame)
			chunk = c->peer_max_frame;
		bool last = off + chunk == pos;
		uint8_t *p = c->out + c->out_len;
		size_t room = H2_OUT_CAP - c->out_len;
		size_t w = first ? h2_headers_hdr_emit(p, room, sid, (uint32_t)chunk, end_stream, last)
				 : h2_continuation_hdr_emit(p, room, sid, (uint32_t)chunk, last);
		sk_memcpy(p + w, b + off, chunk);
		c->out_len += (uint32_t)(w + chunk);
		off += chunk;
		first = false;
	} while (off < pos);
	s->responded = true;
	if (end_stream) {
		s->body_end = true;
		h2_stream_local_end(c, s);
	}
	return 0;
}

int h2_conn_send_body(struct h2_conn *c, uint32_t sid, const void *data, size_t len, bool end)
{
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s || c->phase == H2_PH_CLOSING)
		return -SK_ECONNRESET;
	if (!s->responded || s->body_end)
		return -SK_EINVAL;
	if (s->body_set)
		return -SK_EAGAIN;
	s->body = data;
	s->body_len = len;
	s->body_end = end;
	s->body_set = true;
	s->writable = false;
	return 0;
}

uint32_t h2_conn_take_writable(struct h2_conn *c)
{
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++) {
		struct h2_stream *s = &c->streams[i];
		if (s->state != H2_ST_FREE && s->writable) {
			s->writable = false;
			return s->id;
		}
	}
	return 0;
}

/* One DATA frame for s into out[*n, cap), if the windows and the room
 * allow.  true: progress was made. */
static bool data_frame(struct h2_conn *c, struct h2_stream *s, uint8_t *out, size_t cap, size_t *n,
		       uint64_t now)
{
	if (s->body_len == 0 && !s->body_end) {
		s->body_set = false; /* an empty piece: nothing to send */
		s->writable = true;
		return true;
	}
	if (cap - *n < H2_FRAME_HDR_LEN)
		return false;
	int64_t w = s->send_win < c->send_win ? s->send_win : c->send_win;
	size_t take = s->body_len;
	if (w < 0)
		w = 0;
	if ((uint64_t)take > (uint64_t)w)
		take = (size_t)w;
	if (take > c->peer_max_frame)
		take = c->peer_max_frame;
	if (take > cap - *n - H2_FRAME_HDR_LEN)
		take = cap - *n - H2_FRAME_HDR_LEN;
	if (take == 0 && s->body_len) {
		if (w == 0 && !s->blocked_since)
			s->blocked_since = now ? now : 1;
		return false;
	}
	bool fin = take == s->body_len && s->body_end;
	*n += h2_data_hdr_emit(out + *n, cap - *n, s->id, (uint32_t)take, fin);
	if (take)
		sk_memcpy(out + *n, s->body, take); /* body may be NULL with len 0 */
	*n += take;
	s->body += take;
	s->body_len -= take;
	s->send_win -= (int64_t)take;
	c->send_win -= (int64_t)take;
	s->blocked_since = 0;
	if (s->body_len == 0) {
		s->body_set = false;
		s->writable = true;
		if (fin)
			h2_stream_local_end(c, s);
	}
	return true;
}

size_t h2_conn_output(struct h2_conn *c, uint8_t *out, size_t cap, uint64_t now)
{
	c->now = now;
	size_t n = h2_conn_out_pending(c);
	if (n > cap)
		n = cap;
	sk_memcpy(out, c->out + c->out_off, n);
	c->out_off += (uint32_t)n;
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len || c->phase == H2_PH_CLOSING)
		return n; /* the queue first; no DATA after a connection error */
	bool progress = true;
	while (progress && cap - n > H2_FRAME_HDR_LEN) {
		progress = false;
		for (uint32_t k = 0; k < H2_STREAMS_CAP; k++) {
			uint32_t i = (c->rr + k) % H2_STREAMS_CAP;
			struct h2_stream *s = &c->streams[i];
			if (s->state == H2_ST_FREE || !s->body_set)
				continue;
			if (data_frame(c, s, out, cap, &n, now)) {
				progress = true;
				c->rr = i + 1;
			}
		}
	}
	return n;
}
