/* conn.c — the HTTP/2 engine's input side: the preface, frames by type,
 * stream states (RFC 9113 5.1), header blocks, the receive windows, the
 * defences' budgets, and the timers.  The output side (responses, DATA,
 * the queue) is conn_out.c; request checks are conn_req.c.
 *
 * h2_conn_recv -> on_frame -> on_data / on_headers (-> header_block_done)
 *              / on_settings / on_ping / on_rst / on_window_update / ... */
#include "h2/conn.h"
#include "h2/conn_priv.h"

#define NS_PER_S 1000000000ull

void h2_limits_default(struct h2_limits *l)
{
	*l = (struct h2_limits){
		.max_streams = 100,
		.initial_window = 65535,
		.conn_window = 1u << 20,
		.max_header_list = 16384,
		.max_header_block = 16384,
		.max_header_frames = 32,
		.flood_window = NS_PER_S,
		.reset_budget = 200,
		.settings_budget = 50,
		.ping_budget = 50,
		.empty_data_budget = 100,
		.window_update_budget = 2000,
		.priority_budget = 1000,
		.header_timeout = 10 * NS_PER_S,
		.idle_timeout = 60 * NS_PER_S,
		.settings_timeout = 10 * NS_PER_S,
		.stream_idle_timeout = 60 * NS_PER_S,
		.stall_timeout = 30 * NS_PER_S,
	};
}

int h2_conn_init(struct h2_conn *c, const struct h2_limits *l, uint64_t now)
{
	if (l->max_streams == 0 || l->max_streams > H2_STREAMS_CAP || l->initial_window > H2_MAX_WINDOW ||
	    l->conn_window > H2_MAX_WINDOW || l->conn_window < 65535 ||
	    l->max_header_block > H2_HDR_BLOCK_CAP || l->max_header_block == 0)
		return -SK_EINVAL;
	sk_memset(c, 0, offsetof(struct h2_conn, streams));
	sk_memset(c->streams, 0, sizeof(c->streams));
	c->lim = *l;
	c->phase = H2_PH_PREFACE;
	c->peer_max_frame = H2_MIN_MAX_FRAME_SIZE;
	c->peer_initial_window = 65535;
	c->send_win = 65535;
	c->recv_win = l->conn_window;
	c->start = c->last_rx = c->settings_sent = c->now = now;
	if (hpack_dec_init(&c->dec, H2_HPACK_LIMIT, c->dec_bytes, sizeof(c->dec_bytes), c->dec_ents,
			   SK_ARRAY_LEN(c->dec_ents), c->dec_tmp, sizeof(c->dec_tmp)) ||
	    hpack_enc_init(&c->enc, H2_HPACK_LIMIT, c->enc_bytes, sizeof(c->enc_bytes), c->enc_ents,
			   SK_ARRAY_LEN(c->enc_ents)))
		return -SK_EINVAL;
	/* The server preface (3.4): our SETTINGS first.  No push (8.4). */
	struct h2_setting s[] = {
		{H2_SETTINGS_MAX_CONCURRENT_STREAMS, l->max_streams},
		{H2_SETTINGS_INITIAL_WINDOW_SIZE, l->initial_window},
		{H2_SETTINGS_ENABLE_PUSH, 0},
		{H2_SETTINGS_MAX_HEADER_LIST_SIZE, l->max_header_list},
	};
	h2_out_settings(c, s, SK_ARRAY_LEN(s));
	/* The connection's window starts at 65535 (6.9.2); open it to ours. */
	if (l->conn_window > 65535)
		h2_out_window_update(c, 0, l->conn_window - 65535);
	return 0;
}

/* ---- streams ---- */

struct h2_stream *h2_stream_find(struct h2_conn *c, uint32_t sid)
{
	if (sid == 0)
		return NULL;
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++)
		if (c->streams[i].state != H2_ST_FREE && c->streams[i].id == sid)
			return &c->streams[i];
	return NULL;
}

const struct h2_stream *h2_conn_stream(const struct h2_conn *c, uint32_t sid)
{
	return h2_stream_find((struct h2_conn *)c, sid);
}

/* Free a slot: the stream is closed.  What the handler was given and did
 * not consume goes back to the connection's window, which no one else
 * would reopen. */
void h2_stream_free(struct h2_conn *c, struct h2_stream *s)
{
	h2_conn_credit(c, s->unconsumed);
	s->state = H2_ST_FREE;
	s->id = 0;
	if (--c->nstreams == 0 && c->now > c->last_rx)
		c->last_rx = c->now; /* idle from here */
}

/* Give n bytes back to the connection's receive window: a WINDOW_UPDATE
 * once half the window is owed, so that a trickle of consumes does not
 * become a flood of frames. */
void h2_conn_credit(struct h2_conn *c, uint32_t n)
{
	c->recv_credit += n;
	if (c->recv_credit && c->recv_credit >= c->lim.conn_window / 2) {
		if (h2_out_window_update(c, 0, c->recv_credit)) {
			c->recv_win += c->recv_credit;
			c->recv_credit = 0;
		}
	}
}

void h2_conn_consume(struct h2_conn *c, uint32_t sid, uint32_t n)
{
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s)
		return; /* freed: its bytes went back then */
	if (n > s->unconsumed)
		n = s->unconsumed;
	s->unconsumed -= n;
	h2_conn_credit(c, n);
	if (s->state == H2_ST_OPEN || s->state == H2_ST_HALF_CLOSED_LOCAL) {
		s->recv_credit += n;
		uint32_t win = c->lim.initial_window;
		if (s->recv_credit && s->recv_credit >= win / 2 + (win == 0)) {
			if (h2_out_window_update(c, sid, s->recv_credit)) {
				s->recv_win += s->recv_credit;
				s->recv_credit = 0;
			}
		}
	}
}

/* ---- errors ---- */

/* A connection error (5.4.1): GOAWAY with the last stream we processed,
 * then nothing more is read.  The CLOSE event follows. */
void h2_conn_error(struct h2_conn *c, uint32_t code)
{
	if (c->phase == H2_PH_CLOSING)
		return;
	c->st.conn_errors += code != H2_NO_ERROR;
	c->phase = H2_PH_CLOSING;
	c->close_code = code;
	h2_out_goaway(c, c->last_peer_sid, code);
}

/* A stream error (5.4.2): RST_STREAM, the slot freed; a RESET event for a
 * stream the handler knows. */
static void stream_error(struct h2_conn *c, uint32_t sid, uint32_t code, struct h2_event *ev)
{
	c->st.stream_errors++;
	h2_out_rst(c, sid, code);
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s)
		return;
	if (s->announced)
		*ev = (struct h2_event){.type = H2_EV_RESET, .stream_id = sid, .code = code};
	h2_stream_free(c, s);
}

/* Over budget within the window? */
static bool spend(struct h2_conn *c, struct h2_budget *b, uint32_t budget, uint64_t now)
{
	if (budget == 0)
		return false;
	if (now - b->start >= c->lim.flood_window) {
		b->start = now;
		b->n = 0;
	}
	return ++b->n > budget;
}

static bool calm(struct h2_conn *c, struct h2_budget *b, uint32_t budget, uint64_t now,
		 uint64_t *counter)
{
	if (!spend(c, b, budget, now))
		return false;
	(*counter)++;
	h2_conn_error(c, H2_ENHANCE_YOUR_CALM);
	return true;
}

/* ---- frames ---- */

static void on_settings(struct h2_conn *c, const struct h2_frame *f, uint64_t now)
{
	if (f->h.flags & H2_FLAG_ACK) {
		if (!c->settings_acked) {
			c->settings_acked = true;
			/* Until now the peer could count on a 65535 stream
			 * window; from here on, ours. */
			int64_t d = (int64_t)c->lim.initial_window - 65535;
			if (d < 0)
				for (uint32_t i = 0; i < H2_STREAMS_CAP; i++)
					if (c->streams[i].state != H2_ST_FREE)
						c->streams[i].recv_win += d;
		}
		return;
	}
	if (calm(c, &c->b_settings, c->lim.settings_budget, now, &c->st.settings_flood))
		return;
	uint32_t off = 0;
	struct h2_setting s;
	while (h2_settings_next(f->data, f->data_len, &off, &s)) {
		switch (s.id) {
		case H2_SETTINGS_HEADER_TABLE_SIZE:
			hpack_enc_set_peer_limit(&c->enc, s.value);
			break;
		case H2_SETTINGS_INITIAL_WINDOW_SIZE: {
			/* 6.9.2: every stream's send window moves by the
			 * difference, and may go negative; above 2^31-1 is a
			 * FLOW_CONTROL_ERROR. */
			int64_t d = (int64_t)s.value - c->peer_initial_window;
			for (uint32_t i = 0; i < H2_STREAMS_CAP; i++) {
				struct h2_stream *st = &c->streams[i];
				if (st->state == H2_ST_FREE)
					continue;
				if (st->send_win + d > H2_MAX_WINDOW) {
					c->st.flow_control_errors++;
					h2_conn_error(c, H2_FLOW_CONTROL_ERROR);
					return;
				}
				st->send_win += d;
			}
			c->peer_initial_window = s.value;
			break;
		}
		case H2_SETTINGS_MAX_FRAME_SIZE:
			c->peer_max_frame = s.value;
			break;
		default:
			break; /* push off, their stream limit, list size: ours to ignore */
		}
	}
	h2_out_settings_ack(c);
}

static void on_ping(struct h2_conn *c, const struct h2_frame *f, uint64_t now)
{
	if (f->h.flags & H2_FLAG_ACK)
		return;
	if (calm(c, &c->b_ping, c->lim.ping_budget, now, &c->st.ping_flood))
		return;
	h2_out_ping_ack(c, f->data);
}

static void on_window_update(struct h2_conn *c, const struct h2_frame *f, uint64_t now,
			     struct h2_event *ev)
{
	if (calm(c, &c->b_wu, c->lim.window_update_budget, now, &c->st.window_update_flood))
		return;
	uint32_t sid = f->h.stream_id;
	if (sid == 0) {
		if (c->send_win + f->window_increment > H2_MAX_WINDOW) {
			c->st.flow_control_errors++;
			h2_conn_error(c, H2_FLOW_CONTROL_ERROR);
			return;
		}
		c->send_win += f->window_increment;
		return;
	}
	if (sid > c->last_peer_sid) {
		h2_conn_error(c, H2_PROTOCOL_ERROR); /* 5.1: idle */
		return;
	}
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s)
		return; /* closed: may still come (5.1) */
	if (s->send_win + f->window_increment > H2_MAX_WINDOW) {
		c->st.flow_control_errors++;
		stream_error(c, sid, H2_FLOW_CONTROL_ERROR, ev);
		return;
	}
	s->send_win += f->window_increment;
}

static void on_rst(struct h2_conn *c, const struct h2_frame *f, uint64_t now, struct h2_event *ev)
{
	uint32_t sid = f->h.stream_id;
	if (sid > c->last_peer_sid) {
		h2_conn_error(c, H2_PROTOCOL_ERROR); /* 6.4: idle stream */
		return;
	}
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s)
		return;
	c->st.resets_in++;
	if (s->announced)
		*ev = (struct h2_event){.type = H2_EV_RESET, .stream_id = sid, .code = f->error_code,
					.by_peer = true};
	h2_stream_free(c, s);
	/* CVE-2023-44487: each reset stream cost us a request's work. */
	if (calm(c, &c->b_reset, c->lim.reset_budget, now, &c->st.rapid_reset))
		*ev = (struct h2_event){0};
}

static void on_data(struct h2_conn *c, const struct h2_frame *f, uint64_t now, struct h2_event *ev)
{
	uint32_t sid = f->h.stream_id;
	uint32_t flen = f->h.len; /* padding counts against the windows (6.1) */
	if (sid > c->last_peer_sid) {
		h2_conn_error(c, H2_PROTOCOL_ERROR); /* 5.1: DATA on an idle stream */
		return;
	}
	if (flen > c->recv_win) {
		c->st.flow_control_errors++;
		h2_conn_error(c, H2_FLOW_CONTROL_ERROR);
		return;
	}
	c->recv_win -= flen;
	bool end = f->h.flags & H2_FLAG_END_STREAM;
	if (f->data_len == 0 && !end &&
	    calm(c, &c->b_empty, c->lim.empty_data_budget, now, &c->st.empty_data_flood))
		return;
	struct h2_stream *s = h2_stream_find(c, sid);
	if (!s || s->state == H2_ST_HALF_CLOSED_REMOTE) {
		/* 6.1: not open or half-closed (local): STREAM_CLOSED.  The
		 * bytes are ours to give back. */
		h2_conn_credit(c, flen);
		stream_error(c, sid, H2_STREAM_CLOSED, ev);
		return;
	}
	if (flen > s->recv_win) {
		c->st.flow_control_errors++;
		h2_conn_credit(c, flen);
		stream_error(c, sid, H2_FLOW_CONTROL_ERROR, ev);
		return;
	}
	s->recv_win -= flen;
	s->last_rx = now;
	s->data_rx += f->data_len;
	/* 8.1.1: content-length against the DATA received. */
	if (s->has_cl && (s->data_rx > s->content_length || (end && s->data_rx != s->content_length))) {
		c->st.malformed++;
		h2_conn_credit(c, flen);
		stream_error(c, sid, H2_PROTOCOL_ERROR, ev);
		return;
	}
	/* Padding is consumed here; the data when the handler says so. */
	s->unconsumed += f->data_len;
	if (flen - f->data_len) {
		h2_conn_credit(c, flen - f->data_len);
		s->recv_credit += flen - f->data_len;
	}
	*ev = (struct h2_event){.type = H2_EV_DATA, .stream_id = sid, .data = f->data,
				.len = f->data_len, .end_stream = end};
	if (end)
		h2_stream_remote_end(c, s);
}

/* END_STREAM from the peer (5.1): open -> half-closed (remote);
 * half-closed (local) -> closed. */
void h2_stream_remote_end(struct h2_conn *c, struct h2_stream *s)
{
	if (s->state == H2_ST_OPEN)
		s->state = H2_ST_HALF_CLOSED_REMOTE;
	else if (s->state == H2_ST_HALF_CLOSED_LOCAL)
		h2_stream_free(c, s);
}

/* A complete header block for sid: decode (always, to keep HPACK in step),
 * then a new request, trailers, or a refusal. */
static void header_block_done(struct h2_conn *c, uint32_t sid, const uint8_t *blk, uint32_t len,
			      bool end_stream, uint64_t now, struct h2_event *ev)
{
	c->list = (struct hpack_list){.fields = c->fields, .max_fields = H2_LIST_FIELDS,
				      .buf = c->list_buf, .buf_cap = H2_LIST_BUF_CAP,
				      .max_list = c->lim.max_header_list};
	uint32_t refuse = c->hb_refuse;
	c->hb_refuse = 0;
	int rc = hpack_decode(&c->dec, blk, len, &c->list);
	if (rc != HPACK_OK && rc != HPACK_ELIST) {
		h2_conn_error(c, H2_COMPRESSION_ERROR);
		return;
	}
	if (refuse) {
		/* Decoded (the table stays in step), then refused as a
		 * stream error; a new id still counts as opened (5.1.1). */
		if (!h2_stream_find(c, sid) && sid > c->last_peer_sid &&
		    !(c->goaway_sent && sid > c->goaway_last))
			c->last_peer_sid = sid;
		stream_error(c, sid, refuse, ev);
		return;
	}
	struct h2_stream *s = h2_stream_find(c, sid);
	if (s) {
		/* Trailers (8.1): on an open stream, with END_STREAM. */
		if (s->state != H2_ST_OPEN && s->state != H2_ST_HALF_CLOSED_LOCAL) {
			stream_error(c, sid, H2_STREAM_CLOSED, ev);
			return;
		}
		s->last_rx = now;
		if (!end_stream || rc == HPACK_ELIST ||
		    h2_trailers_from_list(&c->list, &c->req, c->req_fields, H2_LIST_FIELDS)) {
			c->st.malformed++;
			stream_error(c, sid, H2_PROTOCOL_ERROR, ev);
			return;
		}
		if (s->has_cl && s->data_rx != s->content_length) {
			c->st.malformed++;
			stream_error(c, sid, H2_PROTOCOL_ERROR, ev);
			return;
		}
		*ev = (struct h2_event){.type = H2_EV_TRAILERS, .stream_id = sid, .req = &c->req,
					.end_stream = true};
		h2_stream_remote_end(c, s);
		return;
	}
	if (sid <= c->last_peer_sid) {
		/* 5.1: closed; HEADERS cannot reopen it. */
		h2_conn_error(c, H2_STREAM_CLOSED);
		return;
	}
	if (c->goaway_sent && sid > c->goaway_last)
		return; /* 6.8: after our GOAWAY, new streams are ignored */
	c->last_peer_sid = sid;
	if (c->nstreams >= c->lim.max_streams) {
		c->st.refused_streams++;
		c->st.stream_errors++;
		h2_out_rst(c, sid, H2_REFUSED_STREAM);
		return;
	}
	struct h2_stream *n = NULL;
	for (uint32_t i = 0; i < H2_STREAMS_CAP && !n; i++)
		if (c->streams[i].state == H2_ST_FREE)
			n = &c->streams[i];
	*n = (struct h2_stream){
		.id = sid,
		.state = end_stream ? H2_ST_HALF_CLOSED_REMOTE : H2_ST_OPEN,
		.send_win = c->peer_initial_window,
		.recv_win = c->settings_acked || c->lim.initial_window > 65535 ? c->lim.initial_window
									 : 65535,
		.last_rx = now,
	};
	c->nstreams++;
	c->st.streams_opened++;
	if (rc == HPACK_ELIST) {
		/* An HPACK bomb, or just too much: 431 (RFC 6585), the
		 * connection goes on. */
		c->st.header_list_large++;
		n->announced = false;
		if (h2_conn_respond(c, sid, 431, NULL, 0, true) != 0)
			h2_out_rst(c, sid, H2_REFUSED_STREAM);
		else if (!end_stream)
			h2_out_rst(c, sid, H2_NO_ERROR); /* 8.1: stop sending the body */
		if (h2_stream_find(c, sid))
			h2_stream_free(c, n);
		return;
	}
	if (h2_req_from_list(&c->list, &c->req, c->req_fields, H2_LIST_FIELDS) ||
	    (end_stream && c->req.has_content_length && c->req.content_length != 0)) {
		c->st.malformed++;
		stream_error(c, sid, H2_PROTOCOL_ERROR, ev);
		return;
	}
	n->has_cl = c->req.has_content_length;
	n->content_length = c->req.content_length;
	n->announced = true;
	c->st.requests++;
	*ev = (struct h2_event){.type = H2_EV_REQUEST, .stream_id = sid, .req = &c->req,
				.end_stream = end_stream};
}

static void on_headers(struct h2_conn *c, const struct h2_frame *f, uint64_t now,
		       struct h2_event *ev)
{
	uint32_t sid = f->h.stream_id;
	if ((sid & 1) == 0) {
		h2_conn_error(c, H2_PROTOCOL_ERROR); /* 5.1.1: clients use odd ids */
		return;
	}
	bool end_stream = f->h.flags & H2_FLAG_END_STREAM;
	if (f->h.flags & H2_FLAG_END_HEADERS) {
		header_block_done(c, sid, f->data, f->data_len, end_stream, now, ev);
		return;
	}
	if (f->data_len > c->lim.max_header_block) {
		c->st.header_block_large++;
		h2_conn_error(c, H2_ENHANCE_YOUR_CALM);
		return;
	}
	sk_memcpy(c->hb, f->data, f->data_len);
	c->hb_active = true;
	c->hb_sid = sid;
	c->hb_len = f->data_len;
	c->hb_frames = 1;
	c->hb_end_stream = end_stream;
	c->hb_start = now;
}

static void on_continuation(struct h2_conn *c, const struct h2_frame *f, uint64_t now,
			    struct h2_event *ev)
{
	if (!c->hb_active || f->h.stream_id != c->hb_sid) {
		h2_conn_error(c, H2_PROTOCOL_ERROR); /* 6.10 */
		return;
	}
	if (++c->hb_frames > c->lim.max_header_frames && c->lim.max_header_frames) {
		c->st.continuation_flood++;
		h2_conn_error(c, H2_ENHANCE_YOUR_CALM);
		return;
	}
	if (f->data_len > c->lim.max_header_block - c->hb_len) {
		c->st.header_block_large++;
		h2_conn_error(c, H2_ENHANCE_YOUR_CALM);
		return;
	}
	sk_memcpy(c->hb + c->hb_len, f->data, f->data_len);
	c->hb_len += f->data_len;
	if (f->h.flags & H2_FLAG_END_HEADERS) {
		c->hb_active = false;
		header_block_done(c, c->hb_sid, c->hb, c->hb_len, c->hb_end_stream, now, ev);
	}
}

/* A HEADERS the parse refused as a stream error (a priority on its own
 * stream): its field block is found again in the payload (padding and
 * priority fields already checked by the parse) and decoded, so that HPACK
 * stays in step, then the stream is refused. */
static void headers_refused(struct h2_conn *c, struct h2_frame *f, const uint8_t *payload,
			    uint32_t code, uint64_t now, struct h2_event *ev)
{
	const uint8_t *p = payload;
	uint32_t n = f->h.len;
	if (f->h.flags & H2_FLAG_PADDED) {
		uint32_t pad = p[0];
		p++;
		n -= 1 + pad;
	}
	if (f->h.flags & H2_FLAG_PRIORITY) {
		p += 5;
		n -= 5;
	}
	f->data = p;
	f->data_len = n;
	c->hb_refuse = code;
	on_headers(c, f, now, ev);
}

static void on_frame(struct h2_conn *c, const struct h2_frame *f, uint64_t now, struct h2_event *ev)
{
	c->st.frames_in++;
	/* Only request traffic keeps a connection from idling: a peer that
	 * PINGs once a minute does not hold a connection without end. */
	if (f->h.type == H2_HEADERS || f->h.type == H2_DATA || f->h.type == H2_CONTINUATION)
		c->last_rx = now;
	if (c->hb_active && f->h.type != H2_CONTINUATION) {
		h2_conn_error(c, H2_PROTOCOL_ERROR); /* 6.2: only CONTINUATION may follow */
		return;
	}
	switch (f->h.type) {
	case H2_DATA:
		on_data(c, f, now, ev);
		break;
	case H2_HEADERS:
		on_headers(c, f, now, ev);
		break;
	case H2_PRIORITY:
		/* Accepted and ignored (RFC 9113 5.3.2), within a budget. */
		calm(c, &c->b_prio, c->lim.priority_budget, now, &c->st.priority_flood);
		break;
	case H2_RST_STREAM:
		on_rst(c, f, now, ev);
		break;
	case H2_SETTINGS:
		on_settings(c, f, now);
		break;
	case H2_PING:
		on_ping(c, f, now);
		break;
	case H2_GOAWAY:
		c->peer_goaway = true;
		*ev = (struct h2_event){.type = H2_EV_GOAWAY, .code = f->error_code};
		break;
	case H2_WINDOW_UPDATE:
		on_window_update(c, f, now, ev);
		break;
	case H2_CONTINUATION:
		on_continuation(c, f, now, ev);
		break;
	default:
		break; /* 5.5: unknown types are ignored */
	}
}

static void close_event(struct h2_conn *c, struct h2_event *ev)
{
	if (ev->type == H2_EV_NONE && c->phase == H2_PH_CLOSING && !c->close_reported) {
		c->close_reported = true;
		*ev = (struct h2_event){.type = H2_EV_CLOSE, .code = c->close_code};
	}
}

long h2_conn_recv(struct h2_conn *c, const uint8_t *buf, size_t len, uint64_t now,
		  struct h2_event *ev)
{
	*ev = (struct h2_event){0};
	c->now = now;
	size_t used = 0;
	while (c->phase != H2_PH_CLOSING && ev->type == H2_EV_NONE) {
		/* Back-pressure: a peer that does not read stops being read. */
		if (h2_conn_out_pending(c) > H2_OUT_CAP / 2)
			break;
		if (c->phase == H2_PH_PREFACE) {
			int rc = h2_preface_parse(buf + used, len - used);
			if (rc == 0)
				break;
			if (rc < 0) {
				h2_conn_error(c, H2_PROTOCOL_ERROR);
				break;
			}
			used += (size_t)rc;
			c->phase = H2_PH_SETTINGS;
			continue;
		}
		struct h2_frame f;
		int rc = h2_frame_parse(buf + used, len - used, H2_MIN_MAX_FRAME_SIZE, &f);
		if (rc == 0)
			break;
		if (rc < 0 && !h2_err_is_stream(rc)) {
			h2_conn_error(c, h2_err_code(rc));
			break;
		}
		used += rc > 0 ? (size_t)rc : H2_FRAME_HDR_LEN + f.h.len;
		if (c->phase == H2_PH_SETTINGS) {
			/* 3.4: the preface's SETTINGS comes first. */
			if (f.h.type != H2_SETTINGS || (f.h.flags & H2_FLAG_ACK)) {
				h2_conn_error(c, H2_PROTOCOL_ERROR);
				break;
			}
			c->phase = H2_PH_OPEN;
		}
		if (rc < 0) {
			/* A stream error found by the parse (PRIORITY,
			 * HEADERS priority, WINDOW_UPDATE 0).  A HEADERS so
			 * refused cannot be decoded: HPACK would fall out of
			 * step, so that one ends the connection. */
			c->st.frames_in++;
			if (c->hb_active)
				h2_conn_error(c, H2_PROTOCOL_ERROR); /* 6.2 */
			else if (f.h.type == H2_HEADERS)
				headers_refused(c, &f, buf + used - f.h.len, h2_err_code(rc), now, ev);
			else
				stream_error(c, f.h.stream_id, h2_err_code(rc), ev);
			continue;
		}
		on_frame(c, &f, now, ev);
	}
	close_event(c, ev);
	if (c->phase == H2_PH_CLOSING)
		return (long)len; /* nothing more is read: take it all */
	return (long)used;
}

/* ---- timers ---- */

static uint64_t at(uint64_t from, uint64_t d) { return d ? from + d : UINT64_MAX; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

uint64_t h2_conn_deadline(const struct h2_conn *c)
{
	if (c->phase == H2_PH_CLOSING)
		return UINT64_MAX;
	uint64_t d = UINT64_MAX;
	if (c->phase != H2_PH_OPEN)
		d = min64(d, at(c->start, c->lim.header_timeout));
	if (c->hb_active)
		d = min64(d, at(c->hb_start, c->lim.header_timeout));
	if (!c->settings_acked)
		d = min64(d, at(c->settings_sent, c->lim.settings_timeout));
	if (c->nstreams == 0)
		d = min64(d, at(c->last_rx, c->lim.idle_timeout));
	for (uint32_t i = 0; i < H2_STREAMS_CAP; i++) {
		const struct h2_stream *s = &c->streams[i];
		if (s->state == H2_ST_FREE)
			continue;
		if (s->state == H2_ST_OPEN || s->state == H2_ST_HALF_CLOSED_LOCAL)
			d = min64(d, at(s->last_rx, c->lim.stream_idle_timeout));
		if (s->blocked_since)
			d = min64(d, at(s->blocked_since, c->lim.stall_timeout));
	}
	return d;
}

static bool due(uint64_t from, uint64_t d, uint64_t now) { return d && now - from >= d; }

void h2_conn_tick(struct h2_conn *c, uint64_t now, struct h2_event *ev)
{
	*ev = (struct h2_event){0};
	c->now = now;
	if (c->phase != H2_PH_CLOSING) {
		if ((c->phase != H2_PH_OPEN && due(c->start, c->lim.header_timeout, now)) ||
		    (c->hb_active && due(c->hb_start, c->lim.header_timeout, now))) {
			c->st.header_timeouts++;
			h2_conn_error(c, c->phase == H2_PH_OPEN ? H2_ENHANCE_YOUR_CALM : H2_NO_ERROR);
		} else if (!c->settings_acked && due(c->settings_sent, c->lim.settings_timeout, now)) {
			c->st.settings_timeouts++;
			h2_conn_error(c, H2_SETTINGS_TIMEOUT);
		} else if (c->nstreams == 0 && due(c->last_rx, c->lim.idle_timeout, now)) {
			c->st.idle_timeouts++;
			h2_conn_error(c, H2_NO_ERROR);
		}
	}
	for (uint32_t i = 0; i < H2_STREAMS_CAP && c->phase != H2_PH_CLOSING; i++) {
		struct h2_stream *s = &c->streams[i];
		if (s->state == H2_ST_FREE)
			continue;
		if ((s->state == H2_ST_OPEN || s->state == H2_ST_HALF_CLOSED_LOCAL) &&
		    due(s->last_rx, c->lim.stream_idle_timeout, now)) {
			c->st.stream_idle_resets++;
			stream_error(c, s->id, H2_CANCEL, ev);
		} else if (s->blocked_since && due(s->blocked_since, c->lim.stall_timeout, now)) {
			/* A peer that keeps its window shut holds our
			 * response, and the stream's slot, without end. */
			c->st.stall_resets++;
			stream_error(c, s->id, H2_CANCEL, ev);
		}
		if (ev->type != H2_EV_NONE)
			return;
	}
	close_event(c, ev);
}

void h2_conn_shutdown(struct h2_conn *c, uint64_t now)
{
	(void)now;
	if (c->goaway_sent || c->phase == H2_PH_CLOSING)
		return;
	h2_out_goaway(c, c->last_peer_sid, H2_NO_ERROR);
}

bool h2_conn_done(const struct h2_conn *c)
{
	if (c->phase == H2_PH_CLOSING)
		return true;
	return (c->goaway_sent || c->peer_goaway) && c->nstreams == 0;
}
