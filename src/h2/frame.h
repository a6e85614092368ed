/* frame.h — HTTP/2 frames (RFC 9113 sections 3.4, 4, 6): the connection
 * preface, the frame header, every frame type's payload checks, and emit.
 * Pure functions over caller bytes: no allocation, no state, freestanding.
 *
 * Parse results.  A parse returns the bytes it took (> 0), 0 when the
 * buffer holds less than the whole thing (read more and call again), or a
 * negative error: -(H2 error code), ORed with H2_ESTREAM when RFC 9113 makes
 * it a stream error (RST_STREAM on h2_frame.h.stream_id) rather than a
 * connection error (GOAWAY).  h2_err_code() and h2_err_is_stream() take it
 * apart.  A parse never reads past `len`.
 *
 * What is checked here is what one frame shows alone (lengths, stream 0 or
 * not, padding, SETTINGS values, a self-dependency).  What needs the
 * connection's state (stream states, CONTINUATION sequencing, flow-control
 * windows, floods) is the engine's.
 */
#ifndef H2_FRAME_H
#define H2_FRAME_H

#include "base/sk.h"

/* The client's connection preface (3.4), 24 bytes, then a SETTINGS frame. */
#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24

#define H2_FRAME_HDR_LEN 9
/* SETTINGS_MAX_FRAME_SIZE bounds (4.2, 6.5.2). */
#define H2_MIN_MAX_FRAME_SIZE 16384u
#define H2_MAX_MAX_FRAME_SIZE 16777215u
#define H2_MAX_WINDOW 0x7fffffffu
#define H2_STREAM_MASK 0x7fffffffu /* the reserved bit is ignored (4.1) */

enum h2_frame_type {
	H2_DATA = 0x0,
	H2_HEADERS = 0x1,
	H2_PRIORITY = 0x2,
	H2_RST_STREAM = 0x3,
	H2_SETTINGS = 0x4,
	H2_PUSH_PROMISE = 0x5,
	H2_PING = 0x6,
	H2_GOAWAY = 0x7,
	H2_WINDOW_UPDATE = 0x8,
	H2_CONTINUATION = 0x9,
};

/* Flags (6.x); END_STREAM and ACK share a bit on different frames. */
#define H2_FLAG_END_STREAM 0x01
#define H2_FLAG_ACK 0x01
#define H2_FLAG_END_HEADERS 0x04
#define H2_FLAG_PADDED 0x08
#define H2_FLAG_PRIORITY 0x20

/* Error codes (7). */
enum h2_error {
	H2_NO_ERROR = 0x0,
	H2_PROTOCOL_ERROR = 0x1,
	H2_INTERNAL_ERROR = 0x2,
	H2_FLOW_CONTROL_ERROR = 0x3,
	H2_SETTINGS_TIMEOUT = 0x4,
	H2_STREAM_CLOSED = 0x5,
	H2_FRAME_SIZE_ERROR = 0x6,
	H2_REFUSED_STREAM = 0x7,
	H2_CANCEL = 0x8,
	H2_COMPRESSION_ERROR = 0x9,
	H2_CONNECT_ERROR = 0xa,
	H2_ENHANCE_YOUR_CALM = 0xb,
	H2_INADEQUATE_SECURITY = 0xc,
	H2_HTTP_1_1_REQUIRED = 0xd,
};
#define H2_ESTREAM 0x100
static inline uint32_t h2_err_code(int rc) { return (uint32_t)(-rc) & 0xff; }
static inline bool h2_err_is_stream(int rc) { return rc < 0 && ((-rc) & H2_ESTREAM); }

/* SETTINGS identifiers (6.5.2). */
enum h2_setting_id {
	H2_SETTINGS_HEADER_TABLE_SIZE = 0x1,
	H2_SETTINGS_ENABLE_PUSH = 0x2,
	H2_SETTINGS_MAX_CONCURRENT_STREAMS = 0x3,
	H2_SETTINGS_INITIAL_WINDOW_SIZE = 0x4,
	H2_SETTINGS_MAX_FRAME_SIZE = 0x5,
	H2_SETTINGS_MAX_HEADER_LIST_SIZE = 0x6,
};
#define H2_SETTING_LEN 6

struct h2_frame_hdr {
	uint32_t len;        /* payload length, 24 bits */
	uint8_t type, flags;
	uint32_t stream_id;  /* reserved bit cleared */
};

/* A parsed frame.  Pointers are into the caller's buffer.  Which fields
 * are set depends on h.type:
 *   DATA            data/data_len (padding removed), pad_len
 *   HEADERS         data/data_len: the field block fragment; pad_len;
 *                   has_priority, exclusive, dep_stream, weight
 *   PRIORITY        exclusive, dep_stream, weight
 *   RST_STREAM      error_code
 *   SETTINGS        data/data_len: the settings (h2_settings_next); ACK: empty
 *   PING            data: the 8 opaque bytes
 *   GOAWAY          last_stream_id, error_code, data/data_len: debug data
 *   WINDOW_UPDATE   window_increment (1 .. 2^31-1)
 *   CONTINUATION    data/data_len: the fragment
 *   unknown types   data/data_len: the payload, to be ignored (5.5)
 * PUSH_PROMISE is refused by the parse (a client cannot push, 8.4). */
struct h2_frame {
	struct h2_frame_hdr h;
	const uint8_t *data;
	uint32_t data_len;
	uint32_t pad_len;        /* padding bytes, plus the Pad Length byte when PADDED */
	bool has_priority, exclusive;
	uint32_t dep_stream;
	uint8_t weight;          /* as sent: the weight minus one */
	uint32_t error_code;
	uint32_t last_stream_id;
	uint32_t window_increment;
};

struct h2_setting {
	uint16_t id;
	uint32_t value;
};

/* The preface: H2_PREFACE_LEN when buf starts with it, 0 when buf is a
 * proper prefix of it (read more), -H2_PROTOCOL_ERROR when not (3.4). */
int h2_preface_parse(const uint8_t *buf, size_t len);

/* The 9-byte header: H2_FRAME_HDR_LEN, 0 if len < 9, or -H2_FRAME_SIZE_ERROR
 * when the length is above max_frame_size (our SETTINGS_MAX_FRAME_SIZE;
 * always a connection error here, which 4.2 and 5.4 allow). */
int h2_frame_hdr_parse(const uint8_t *buf, size_t len, uint32_t max_frame_size,
		       struct h2_frame_hdr *h);
/* A whole frame: 9 + payload when it is all in buf and valid, 0 when more is
 * needed, or an error as above.  The parse is the same whatever the cut. */
int h2_frame_parse(const uint8_t *buf, size_t len, uint32_t max_frame_size, struct h2_frame *f);

/* Walk a SETTINGS payload already checked by h2_frame_parse: true with the
 * next setting and *off advanced, false at the end. */
bool h2_settings_next(const uint8_t *data, uint32_t len, uint32_t *off, struct h2_setting *s);
/* One setting's value check (6.5.2): 0, or -(the connection error code). */
int h2_setting_check(const struct h2_setting *s);

/* ---- emit: each returns the bytes written, 0 when cap is short or the
 * arguments are outside what the RFC allows (nothing is written then). */

size_t h2_frame_hdr_emit(uint8_t *buf, size_t cap, uint32_t len, uint8_t type, uint8_t flags,
			 uint32_t stream_id);
/* DATA and HEADERS: the header only, for a payload the caller puts at
 * buf + 9 (no copy); no padding, no priority (we send neither). */
size_t h2_data_hdr_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t len, bool end_stream);
size_t h2_headers_hdr_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t len,
			   bool end_stream, bool end_headers);
size_t h2_continuation_hdr_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t len,
				bool end_headers);
size_t h2_priority_emit(uint8_t *buf, size_t cap, uint32_t stream_id, bool exclusive,
			uint32_t dep_stream, uint8_t weight);
size_t h2_rst_stream_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t error_code);
size_t h2_settings_emit(uint8_t *buf, size_t cap, const struct h2_setting *s, size_t n);
size_t h2_settings_ack_emit(uint8_t *buf, size_t cap);
size_t h2_ping_emit(uint8_t *buf, size_t cap, bool ack, const uint8_t opaque[8]);
size_t h2_goaway_emit(uint8_t *buf, size_t cap, uint32_t last_stream_id, uint32_t error_code,
		      const uint8_t *debug, size_t debug_len);
size_t h2_window_update_emit(uint8_t *buf, size_t cap, uint32_t stream_id, uint32_t increment);

/* A name for an error code ("PROTOCOL_ERROR"), for logs and tests. */
const char *h2_error_str(uint32_t code);

#endif
