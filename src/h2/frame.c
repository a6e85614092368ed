/* frame.c — HTTP/2 frame parse and emit (RFC 9113 3.4, 4, 6).  Each check
 * cites the sentence of the RFC it enforces. */
#include "frame.h"

#define CONN(code) (-(int)(code))
#define STREAM(code) (-(int)((code) | H2_ESTREAM))

static uint32_t get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

int h2_preface_parse(const uint8_t *buf, size_t len)
{
	size_t n = SK_MIN(len, (size_t)H2_PREFACE_LEN);
	if (n && sk_memcmp(buf, H2_PREFACE, n) != 0)
		return CONN(H2_PROTOCOL_ERROR);
	return n == H2_PREFACE_LEN ? H2_PREFACE_LEN : 0;
}

int h2_frame_hdr_parse(const uint8_t *buf, size_t len, uint32_t max_frame_size,
		       struct h2_frame_hdr *h)
{
	if (len < H2_FRAME_HDR_LEN)
		return 0;
	h->len = get_be24(buf);
	h->type = buf[3];
	h->flags = buf[4];
	h->stream_id = sk_get_be32(buf + 5) & H2_STREAM_MASK;
	/* 4.2: "An endpoint MUST send an error code of FRAME_SIZE_ERROR if a
	 * frame exceeds the size defined in SETTINGS_MAX_FRAME_SIZE". */
	if (h->len > max_frame_size)
		return CONN(H2_FRAME_SIZE_ERROR);
	return H2_FRAME_HDR_LEN;
}

/* PADDED (6.1, 6.2): strip the Pad Length byte and the padding from
 * [*p, *p + *n).  "If the length of the padding is the length of the frame
 * payload or greater, the recipient MUST treat this as a connection error
 * of type PROTOCOL_ERROR." */
static int strip_padding(struct h2_frame *f, const uint8_t **p, uint32_t *n)
{
	if (!(f->h.flags & H2_FLAG_PADDED))
		return 0;
	if (*n < 1)
		return CONN(H2_FRAME_SIZE_ERROR);
	uint32_t pad = (*p)[0];
	if (pad >= f->h.len)
		return CONN(H2_PROTOCOL_ERROR);
	(*p)++;
	(*n)--;
	f->pad_len = pad + 1;
	return 0;
}

static void priority_fields(struct h2_frame *f, const uint8_t *p)
{
	uint32_t dep = sk_get_be32(p);
	f->exclusive = dep >> 31;
	f->dep_stream = dep & H2_STREAM_MASK;
	f->weight = p[4];
}

int h2_setting_check(const struct h2_setting *s)
{
	switch (s->id) {
	case H2_SETTINGS_ENABLE_PUSH:
		/* "Any value other than 0 or 1 MUST be treated as a
		 * connection error of type PROTOCOL_ERROR." */
		return s->value > 1 ? CONN(H2_PROTOCOL_ERROR) : 0;
	case H2_SETTINGS_INITIAL_WINDOW_SIZE:
		/* "Values above the maximum flow-control window size of
		 * 2^31-1 MUST be treated as a connection error of type
		 * FLOW_CONTROL_ERROR." */
		return s->value > H2_MAX_WINDOW ? CONN(H2_FLOW_CONTROL_ERROR) : 0;
	case H2_SETTINGS_MAX_FRAME_SIZE:
		/* "Values outside this range MUST be treated as a connection
		 * error of type PROTOCOL_ERROR." */
		return s->value < H2_MIN_MAX_FRAME_SIZE || s->value > H2_MAX_MAX_FRAME_SIZE
			       ? CONN(H2_PROTOCOL_ERROR) : 0;
	default:
		/* Unknown or unsupported identifiers MUST be ignored. */
		return 0;
	}
}

bool h2_settings_next(const uint8_t *data, uint32_t len, uint32_t *off, struct h2_setting *s)
{
	if (*off > len || len - *off < H2_SETTING_LEN)
		return false;
	s->id = sk_get_be16(data + *off);
	s->value = sk_get_be32(data + *off + 2);
	*off += H2_SETTING_LEN;
	return true;
}

/* The payload checks of one type; p/n is the whole payload. */
static int parse_payload(struct h2_frame *f, const uint8_t *p, uint32_t n)
{
	uint32_t sid = f->h.stream_id;
	int rc;
	switch (f->h.type) {
	case H2_DATA:
		/* 6.1: "If a DATA frame is received whose Stream Identifier
		 * field is 0x00, the recipient MUST respond with a connection
		 * error of type PROTOCOL_ERROR." */
		if (sid == 0)
			return CONN(H2_PROTOCOL_ERROR);
		if ((rc = strip_padding(f, &p, &n)))
			return rc;
		f->data = p;
		f->data_len = n - (f->pad_len ? f->pad_len - 1 : 0);
		return 0;
	case H2_HEADERS:
		/* 6.2: stream 0 is a PROTOCOL_ERROR connection error. */
		if (sid == 0)
			return CONN(H2_PROTOCOL_ERROR);
		if ((rc = strip_padding(f, &p, &n)))
			return rc;
		if (f->pad_len)
			n -= f->pad_len - 1;
		if (f->h.flags & H2_FLAG_PRIORITY) {
			/* "Padding that exceeds the size remaining for the
			 * header block fragment MUST be treated as a
			 * PROTOCOL_ERROR." */
			if (n < 5)
				return CONN(f->pad_len ? H2_PROTOCOL_ERROR : H2_FRAME_SIZE_ERROR);
			f->has_priority = true;
			priority_fields(f, p);
			p += 5;
			n -= 5;
			/* 5.3.1: "A stream cannot depend on itself. An endpoint
			 * MUST treat this as a stream error of type
			 * PROTOCOL_ERROR." */
			if (f->dep_stream == sid)
				return STREAM(H2_PROTOCOL_ERROR);
		}
		f->data = p;
		f->data_len = n;
		return 0;
	case H2_PRIORITY:
		/* 6.3: stream 0 -> PROTOCOL_ERROR (connection); "A PRIORITY
		 * frame with a length other than 5 octets MUST be treated as a
		 * stream error of type FRAME_SIZE_ERROR." */
		if (sid == 0)
			return CONN(H2_PROTOCOL_ERROR);
		if (n != 5)
			return STREAM(H2_FRAME_SIZE_ERROR);
		priority_fields(f, p);
		if (f->dep_stream == sid)
			return STREAM(H2_PROTOCOL_ERROR);
		return 0;
	case H2_RST_STREAM:
		/* 6.4: stream 0 -> PROTOCOL_ERROR; "A RST_STREAM frame with a
		 * length other than 4 octets MUST be treated as a connection
		 * error of type FRAME_SIZE_ERROR." */
		if (sid == 0)
			return CONN(H2_PROTOCOL_ERROR);
		if (n != 4)
			return CONN(H2_FRAME_SIZE_ERROR);
		f->error_code = sk_get_be32(p);
		return 0;
	case H2_SETTINGS:
		/* 6.5: not on a stream (PROTOCOL_ERROR); an ACK with a payload,
		 * or a length not a multiple of 6: FRAME_SIZE_ERROR. */
		if (sid != 0)
			return CONN(H2_PROTOCOL_ERROR);
		if ((f->h.flags & H2_FLAG_ACK) && n != 0)
			return CONN(H2_FRAME_SIZE_ERROR);
		if (n % H2_SETTING_LEN)
			return CONN(H2_FRAME_SIZE_ERROR);
		for (uint32_t off = 0; off < n; off += H2_SETTING_LEN) {
			struct h2_setting s = { sk_get_be16(p + off), sk_get_be32(p + off + 2) };
			if ((rc = h2_setting_check(&s)))
				return rc;
		}
		f->data = p;
		f->data_len = n;
		return 0;
	case H2_PUSH_PROMISE:
		/* 8.4: "A client cannot push. Thus, servers MUST treat the
		 * receipt of a PUSH_PROMISE frame as a connection error of
		 * type PROTOCOL_ERROR." */
		return CONN(H2_PROTOCOL_ERROR);
	case H2_PING:
		/* 6.7: on a stream -> PROTOCOL_ERROR; "a length field value
		 * other than 8 MUST be treated as a connection error of type
		 * FRAME_SIZE_ERROR." */
		if (sid != 0)
			return CONN(H2_PROTOCOL_ERROR);
		if (n != 8)
			return CONN(H2_FRAME_SIZE_ERROR);
		f->data = p;
		f->data_len = 8;
		return 0;
	case H2_GOAWAY:
		/* 6.8: connection-wide: a stream id is a PROTOCOL_ERROR.  The
		 * fixed part is 8 octets. */
		if (sid != 0)
			return CONN(H2_PROTOCOL_ERROR);
		if (n < 8)
			return CONN(H2_FRAME_SIZE_ERROR);
		f->last_stream_id = sk_get_be32(p) & H2_STREAM_MASK;
		f->error_code = sk_get_be32(p + 4);
		f->data = p + 8;
		f->data_len = n - 8;
		return 0;
	case H2_WINDOW_UPDATE:
		/* 6.9: "A WINDOW_UPDATE frame with a length other than 4
		 * octets MUST be treated as a connection error of type
		 * FRAME_SIZE_ERROR."  An increment of 0 is a PROTOCOL_ERROR:
		 * a stream error on a stream, a connection error on 0. */
		if (n != 4)
			return CONN(H2_FRAME_SIZE_ERROR);
		f->window_increment = sk_get_be32(p) & H2_STREAM_MASK;
		if (f->window_increment == 0)
			return sid ? STREAM(H2_PROTOCOL_ERROR) : CONN(H2_PROTOCOL_ERROR);
		return 0;
	case H2_CONTINUATION:
		/* 6.10: stream 0 -> PROTOCOL_ERROR. */
		if (sid == 0)
			return CONN(H2_PROTOCOL_ERROR);
		f->data = p;
		f->data_len = n;
		return 0;
	default:
		/* 5.5: "Implementations MUST ignore and discard frames of
		 * unknown types." */
		f->data = p;
		f->data_len = n;
		return 0;
	}
}

int h2_frame_parse(const uint8_t *buf, size_t len, uint32_t max_frame_size, struct h2_frame *f)
{
	sk_memset(f, 0, sizeof(*f));
	int rc = h2_frame_hdr_parse(buf, len, max_frame_size, &f->h);
	if (rc <= 0)
		return rc;
	if (len - H2_FRAME_HDR_LEN < f->h.len)
		return 0;
	rc = parse_payload(f, buf + H2_FRAME_HDR_LEN, f->h.len);
	if (rc)
		return rc;
	return (int)(H2_FRAME_HDR_LEN + f->h.len);
}

/* ---- emit ---- */

size_t h2_frame_hdr_emit(uint8_t *buf, size_t cap, uint32_t len, uint8_t type, uint8_t flags,
			 uint32_t stream_id)
{
	if (cap < H2_FRAME_HDR_LEN || len > H2_MAX_MAX_FRAME_SIZE || stream_id > H2_STREAM_MASK)
		return 0;
	buf[0] = (uint8_t)(len >> 16);
	buf[1] = (uint8_t)(len >> 8);
	buf[2] = (uint8_t)len;
	buf[3] = type;
	buf[4] = flags;
	sk_put_be32(buf + 5, stream_id);
	return H2_FRAME_HDR_LEN;
}

/* A frame of a fixed-size payload: header checks plus room for it. */
static uint8_t *fixed(uint8_t *buf, size_t cap, uint32_t len, uint8_t type, uint8_t flags,
		      uint32_t stream_id)
{
	if (cap < H2_FRAME_HDR_LEN + (size_t)len ||
	    !h2_frame_hdr_emit(buf, cap, len, type, flags, stream_id))
		return NULL;
	return buf + H2_FRAME_HDR_LEN;
}

size_t h2_data_hdr_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t len, bool end_stream)
{
	if (stream_id == 0)
		return 0;
	return h2_frame_hdr_emit(buf, cap, len, H2_DATA, end_stream ? H2_FLAG_END_STREAM : 0, stream_id);
}

size_t h2_headers_hdr_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t len,
			   bool end_stream, bool end_headers)
{
	if (stream_id == 0)
		return 0;
	uint8_t flags = (uint8_t)((end_stream ? H2_FLAG_END_STREAM : 0) |
				  (end_headers ? H2_FLAG_END_HEADERS : 0));
	return h2_frame_hdr_emit(buf, cap, len, H2_HEADERS, flags, stream_id);
}

size_t h2_continuation_hdr_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t len,
				bool end_headers)
{
	if (stream_id == 0)
		return 0;
	return h2_frame_hdr_emit(buf, cap, len, H2_CONTINUATION, end_headers ? H2_FLAG_END_HEADERS : 0,
				 stream_id);
}

size_t h2_priority_emit(uint8_t *buf, size_t cap, uint32_t stream_id, bool exclusive,
			uint32_t dep_stream, uint8_t weight)
{
	if (stream_id == 0 || dep_stream == stream_id || dep_stream > H2_STREAM_MASK)
		return 0;
	uint8_t *p = fixed(buf, cap, 5, H2_PRIORITY, 0, stream_id);
	if (!p)
		return 0;
	sk_put_be32(p, dep_stream | (exclusive ? 0x80000000u : 0));
	p[4] = weight;
	return H2_FRAME_HDR_LEN + 5;
}

size_t h2_rst_stream_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t error_code)
{
	if (stream_id == 0)
		return 0;
	uint8_t *p = fixed(buf, cap, 4, H2_RST_STREAM, 0, stream_id);
	if (!p)
		return 0;
	sk_put_be32(p, error_code);
	return H2_FRAME_HDR_LEN + 4;
}

size_t h2_settings_emit(uint8_t *buf, size_t cap, const struct h2_setting *s, size_t n)
{
	if (n > H2_MAX_MAX_FRAME_SIZE / H2_SETTING_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (h2_setting_check(&s[i]))
			return 0;
	uint32_t len = (uint32_t)(n * H2_SETTING_LEN);
	uint8_t *p = fixed(buf, cap, len, H2_SETTINGS, 0, 0);
	if (!p)
		return 0;
	for (size_t i = 0; i < n; i++) {
		sk_put_be16(p + i * H2_SETTING_LEN, s[i].id);
		sk_put_be32(p + i * H2_SETTING_LEN + 2, s[i].value);
	}
	return H2_FRAME_HDR_LEN + len;
}

size_t h2_settings_ack_emit(uint8_t *buf, size_t cap)
{
	return fixed(buf, cap, 0, H2_SETTINGS, H2_FLAG_ACK, 0) ? H2_FRAME_HDR_LEN : 0;
}

size_t h2_ping_emit(uint8_t *buf, size_t cap, bool ack, const uint8_t opaque[8])
{
	uint8_t *p = fixed(buf, cap, 8, H2_PING, ack ? H2_FLAG_ACK : 0, 0);
	if (!p)
		return 0;
	sk_memcpy(p, opaque, 8);
	return H2_FRAME_HDR_LEN + 8;
}

size_t h2_goaway_emit(uint8_t *buf, size_t cap, uint32_t last_stream_id, uint32_t error_code,
		      const uint8_t *debug, size_t debug_len)
{
	if (last_stream_id > H2_STREAM_MASK || debug_len > H2_MAX_MAX_FRAME_SIZE - 8)
		return 0;
	uint8_t *p = fixed(buf, cap, (uint32_t)(8 + debug_len), H2_GOAWAY, 0, 0);
	if (!p)
		return 0;
	sk_put_be32(p, last_stream_id);
	sk_put_be32(p + 4, error_code);
	if (debug_len)
		sk_memcpy(p + 8, debug, debug_len);
	return H2_FRAME_HDR_LEN + 8 + debug_len;
}

size_t h2_window_update_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t increment)
{
	if (increment == 0 || increment > H2_MAX_WINDOW)
		return 0;
	uint8_t *p = fixed(buf, cap, 4, H2_WINDOW_UPDATE, 0, stream_id);
	if (!p)
		return 0;
	sk_put_be32(p, increment);
	return H2_FRAME_HDR_LEN + 4;
}

const char *h2_error_str(uint32_t code)
{
	static const char *const names[] = {
		"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
		"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
		"CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
		"INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
	};
	return code < SK_ARRAY_LEN(names) ? names[code] : "UNKNOWN_ERROR";
}
