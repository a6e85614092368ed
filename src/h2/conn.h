/* conn.h — the HTTP/2 connection engine, server side (RFC 9113): bytes in,
 * events out; responses in, bytes out.  Sans I/O like the TLS engine
 * (tls/tls_engine.h): it never reads a socket or a clock (every call that
 * can act on time takes `now`, in nanoseconds of any monotonic clock), and
 * never allocates: struct h2_conn holds every table and buffer, sized at
 * compile time (H2_*_CAP below), so a connection's memory is bounded
 * whatever the peer sends.  Freestanding (base/ and h2/ only).
 *
 * Call order, per connection:
 *   h2_conn_init(c, &limits, now)      queues our SETTINGS (the server preface)
 *   loop:
 *     h2_conn_recv(c, buf, len, now, &ev)  -> bytes consumed; at most one event
 *         The caller keeps the bytes not consumed and calls again with them
 *         first and more after.  A frame is taken whole: the caller's input
 *         buffer must hold H2_RECV_MIN bytes.  recv consumes nothing (0, no
 *         event) when it needs more bytes, or when the output waiting in
 *         the engine is over half its room (drain first: a peer that does
 *         not read cannot make us queue ACKs without end).
 *     h2_conn_tick(c, now, &ev)          timers; call at h2_conn_deadline()
 *     h2_conn_respond / h2_conn_send_body / h2_conn_reset / h2_conn_consume
 *     h2_conn_output(c, out, cap, now)   -> bytes to send, written into out
 *     h2_conn_take_writable(c)           streams whose body was all sent
 *   until h2_conn_done(c): then send what output still gives and close.
 *
 * Events (struct h2_event), each about one stream (but GOAWAY and CLOSE):
 *   REQUEST   a request's header block is complete and valid (ev.req);
 *             end_stream: no body follows.
 *   DATA      a piece of the body (ev.data, ev.len: in the caller's input
 *             buffer, valid until it discards those bytes); end_stream on
 *             the last (len may be 0).  The handler calls h2_conn_consume
 *             with what it took: that is what reopens the windows.
 *   TRAILERS  the trailer section (ev.req's fields; no pseudo-headers); the
 *             body is complete.
 *   RESET     the stream is gone (peer's RST_STREAM, or our stream error or
 *             timeout): ev.code, ev.by_peer.  Only for streams the handler
 *             saw a REQUEST for; its calls on that id fail after this.
 *   GOAWAY    the peer's GOAWAY (ev.code): it opens no more streams.
 *   CLOSE     the connection is over (ev.code: our GOAWAY's code); send
 *             what h2_conn_output still gives, then close.
 * What the engine answers alone: SETTINGS ACK, PING ACK, WINDOW_UPDATE,
 * RST_STREAM for stream errors, 431 for a header list over the bounds,
 * GOAWAY for connection errors, floods and timeouts.
 */
#ifndef H2_CONN_H
#define H2_CONN_H

#include "base/sk.h"
#include "base/sk_err.h"
#include "h2/frame.h"
#include "h2/hpack.h"

/* Compile-time capacities (the memory of one struct h2_conn). */
#define H2_STREAMS_CAP 128u       /* limits.max_streams <= this */
#define H2_HPACK_LIMIT 4096u      /* both HPACK tables */
#define H2_HDR_BLOCK_CAP 32768u   /* a header block split over CONTINUATIONs */
#define H2_LIST_FIELDS 128u       /* fields of one decoded list */
#define H2_LIST_BUF_CAP 16384u    /* their strings */
#define H2_OUT_CAP 32768u         /* queued control and HEADERS frames */
#define H2_RESP_BLOCK_CAP 16384u  /* one encoded response header block */
#define H2_RECV_MIN (H2_FRAME_HDR_LEN + H2_MIN_MAX_FRAME_SIZE) /* see recv */

/* The configurable limits.  h2_limits_default() fills every field; zero in
 * a timeout or budget turns that defence off (tests do). */
struct h2_limits {
	uint32_t max_streams;        /* SETTINGS_MAX_CONCURRENT_STREAMS; more: REFUSED_STREAM */
	uint32_t initial_window;     /* SETTINGS_INITIAL_WINDOW_SIZE (each stream's receive window) */
	uint32_t conn_window;        /* the connection's receive window */
	uint32_t max_header_list;    /* SETTINGS_MAX_HEADER_LIST_SIZE, and the decoded bound: 431 */
	uint32_t max_header_block;   /* HEADERS + CONTINUATION bytes (<= H2_HDR_BLOCK_CAP) */
	uint32_t max_header_frames;  /* frames in one header block (CONTINUATION flood) */
	/* Budgets: at most N of a kind per flood_window ns, else GOAWAY
	 * ENHANCE_YOUR_CALM. */
	uint64_t flood_window;
	uint32_t reset_budget;       /* RST_STREAM from the client (rapid reset) */
	uint32_t settings_budget;    /* SETTINGS frames */
	uint32_t ping_budget;        /* PING frames */
	uint32_t empty_data_budget;  /* DATA without payload nor END_STREAM */
	uint32_t window_update_budget; /* WINDOW_UPDATE frames */
	uint32_t priority_budget;    /* PRIORITY frames */
	/* Timeouts, ns. */
	uint64_t header_timeout;     /* preface + SETTINGS, and each header block, to complete */
	uint64_t idle_timeout;       /* no stream and no HEADERS/DATA: GOAWAY NO_ERROR */
	uint64_t settings_timeout;   /* our SETTINGS unacknowledged: SETTINGS_TIMEOUT */
	uint64_t stream_idle_timeout; /* a request body with no DATA for this long: RST CANCEL */
	uint64_t stall_timeout;      /* a response held at a zero window this long: RST CANCEL */
};
void h2_limits_default(struct h2_limits *l);

/* Counters: every refusal and defence has one. */
struct h2_stats {
	uint64_t frames_in, streams_opened, requests, resets_in;
	uint64_t conn_errors, stream_errors, malformed;
	uint64_t refused_streams;     /* over max_streams: REFUSED_STREAM */
	uint64_t rapid_reset;         /* reset_budget exceeded: GOAWAY */
	uint64_t header_block_large;  /* over max_header_block: GOAWAY */
	uint64_t continuation_flood;  /* over max_header_frames: GOAWAY */
	uint64_t header_list_large;   /* decoded list over bounds (HPACK bomb): 431 */
	uint64_t settings_flood, ping_flood, empty_data_flood, window_update_flood, priority_flood;
	uint64_t out_overflow;        /* control frames over the output room: GOAWAY */
	uint64_t header_timeouts, idle_timeouts, settings_timeouts;
	uint64_t stream_idle_resets, stall_resets;
	uint64_t flow_control_errors;
};

/* One header field: pointers into the engine (events) or the caller's
 * memory (responses). */
struct h2_field {
	const uint8_t *name, *value;
	uint32_t name_len, value_len;
};

/* A request head, valid from the event to the next call into the engine.
 * It maps onto what the HTTP/1.1 engine gives handlers (http/parser.h):
 * method -> the request line's method token, path -> its target,
 * authority -> Host (h2_req_to_h1 writes the equivalent HTTP/1.1 head). */
struct h2_req {
	struct h2_field method, scheme, authority, path; /* len 0: absent */
	const struct h2_field *fields; /* regular fields, lower-case names */
	uint32_t nfields;
	bool has_content_length;
	uint64_t content_length;
};

enum h2_ev_type {
	H2_EV_NONE = 0,
	H2_EV_REQUEST,
	H2_EV_DATA,
	H2_EV_TRAILERS,
	H2_EV_RESET,
	H2_EV_GOAWAY,
	H2_EV_CLOSE,
};

struct h2_event {
	uint8_t type;             /* enum h2_ev_type */
	bool end_stream;
	bool by_peer;             /* RESET: the peer's RST_STREAM */
	uint32_t stream_id;
	uint32_t code;            /* RESET, GOAWAY, CLOSE: the error code */
	const struct h2_req *req; /* REQUEST, TRAILERS */
	const uint8_t *data;      /* DATA */
	uint32_t len;
};

/* Stream states (RFC 9113 5.1) a slot can be in; idle and closed streams
 * hold no slot. */
enum h2_stream_state {
	H2_ST_FREE = 0,
	H2_ST_OPEN,
	H2_ST_HALF_CLOSED_REMOTE, /* the peer sent END_STREAM */
	H2_ST_HALF_CLOSED_LOCAL,  /* we sent END_STREAM */
};

/* One stream.  Invariants: id odd and <= conn.last_peer_sid when state !=
 * FREE; send_win, recv_win <= 2^31-1 (send_win may be negative after a
 * SETTINGS_INITIAL_WINDOW_SIZE decrease); unconsumed <= what was received. */
struct h2_stream {
	uint32_t id;
	uint8_t state;            /* enum h2_stream_state */
	bool announced;           /* the handler saw its REQUEST */
	bool responded;           /* our HEADERS were queued */
	bool body_end;            /* END_STREAM goes with the end of body */
	bool body_set;            /* a body piece is pending (maybe empty, with end) */
	bool writable;            /* the pending piece was all sent: take_writable */
	bool has_cl;
	bool trailers_seen;
	int64_t send_win, recv_win;
	uint32_t recv_credit;     /* consumed, not yet given back by WINDOW_UPDATE */
	uint32_t unconsumed;      /* delivered in DATA events, not consumed */
	uint64_t content_length, data_rx;
	const uint8_t *body;      /* (handler's memory) the pending piece */
	size_t body_len;
	uint64_t last_rx;         /* last frame from the peer on it */
	uint64_t blocked_since;   /* body pending at a zero window since (0: not) */
};

struct h2_budget {
	uint64_t start;
	uint32_t n;
};

enum h2_conn_phase {
	H2_PH_PREFACE = 0, /* waiting for the client preface */
	H2_PH_SETTINGS,    /* preface seen, its SETTINGS frame must follow */
	H2_PH_OPEN,
	H2_PH_CLOSING,     /* our GOAWAY for an error is queued: nothing more is read */
};

struct h2_conn {
	struct h2_limits lim;
	struct h2_stats st;
	uint8_t phase;             /* enum h2_conn_phase */
	bool close_reported;       /* the CLOSE event was given */
	bool goaway_sent;          /* drain or error: no new stream after goaway_last */
	bool peer_goaway;
	bool settings_acked;       /* the peer acknowledged our SETTINGS */
	uint32_t close_code;
	uint32_t goaway_last;      /* the last-stream-id of our GOAWAY */
	uint32_t last_peer_sid;    /* highest stream id the peer opened */
	uint32_t nstreams;         /* slots not FREE; <= lim.max_streams */
	uint32_t rr;               /* round-robin cursor of output */
	/* The peer's settings. */
	uint32_t peer_max_frame, peer_initial_window;
	/* Flow control.  Invariants: send_win <= 2^31-1; recv_win <= 2^31-1. */
	int64_t send_win, recv_win;
	uint32_t recv_credit;      /* consumed, not yet given back */
	/* A header block being assembled (HEADERS without END_HEADERS). */
	uint32_t hb_sid, hb_len, hb_frames;
	bool hb_active, hb_end_stream;
	uint32_t hb_refuse;        /* non-zero: the block is decoded, then the stream refused
	                            * with this code (5.3.1: HEADERS depending on itself) */
	uint64_t hb_start;
	/* Time. */
	uint64_t start, last_rx, settings_sent;
	uint64_t now;              /* the latest `now` given to any call */
	                           /* last_rx also moves when the last stream closes: idle
	                            * counts from then */
	struct h2_budget b_reset, b_settings, b_ping, b_empty, b_wu, b_prio;
	/* Output queue: control and HEADERS frames, [out_off, out_len). */
	uint32_t out_off, out_len;
	struct h2_req req;         /* the last REQUEST/TRAILERS event's */
	struct h2_stream streams[H2_STREAMS_CAP];
	struct hpack_dec dec;
	struct hpack_enc enc;
	struct hpack_list list;
	uint8_t dec_bytes[HPACK_TABLE_BYTES(H2_HPACK_LIMIT)];
	struct hpack_entry dec_ents[HPACK_TABLE_ENTRIES(H2_HPACK_LIMIT)];
	uint8_t dec_tmp[HPACK_DEC_TMP_BYTES(H2_HPACK_LIMIT)];
	uint8_t enc_bytes[HPACK_TABLE_BYTES(H2_HPACK_LIMIT)];
	struct hpack_entry enc_ents[HPACK_TABLE_ENTRIES(H2_HPACK_LIMIT)];
	struct hpack_field fields[H2_LIST_FIELDS];
	struct h2_field req_fields[H2_LIST_FIELDS];
	uint8_t list_buf[H2_LIST_BUF_CAP];
	uint8_t hb[H2_HDR_BLOCK_CAP];
	uint8_t blk[H2_RESP_BLOCK_CAP];
	uint8_t out[H2_OUT_CAP];
};

/* 0, or -SK_EINVAL for limits out of range (max_streams 0 or over the cap,
 * a window over 2^31-1, max_header_block over the cap). */
int h2_conn_init(struct h2_conn *c, const struct h2_limits *l, uint64_t now);
long h2_conn_recv(struct h2_conn *c, const uint8_t *buf, size_t len, uint64_t now,
		  struct h2_event *ev);
/* Timers due at now: at most one event (RESET or CLOSE); call until NONE. */
void h2_conn_tick(struct h2_conn *c, uint64_t now, struct h2_event *ev);
/* The next time h2_conn_tick has work (UINT64_MAX: none). */
uint64_t h2_conn_deadline(const struct h2_conn *c);

/* Answer stream sid: :status plus fields (names any case: sent lower-case;
 * connection-specific fields are dropped).  end_stream: no body.  0,
 * -SK_ECONNRESET (no such stream, or reset), -SK_EINVAL (answered already, a
 * field too long), -SK_EAGAIN (no room now: drain output and retry). */
int h2_conn_respond(struct h2_conn *c, uint32_t sid, unsigned status, const struct h2_field *f,
		    size_t n, bool end_stream);
/* Hand the next piece of the body: data stays the caller's and must stay
 * valid until the stream shows in h2_conn_take_writable (all sent) or is
 * reset.  end: the last piece (len may be 0).  0, -SK_ECONNRESET, -SK_EINVAL
 * (not answered, ended), -SK_EAGAIN (a piece is still pending). */
int h2_conn_send_body(struct h2_conn *c, uint32_t sid, const void *data, size_t len, bool end);
/* A stream whose pending piece was all sent since the last call (its flag
 * is cleared), or 0. */
uint32_t h2_conn_take_writable(struct h2_conn *c);
/* The handler took n bytes of stream sid's DATA: the windows reopen.  An
 * id that is gone is ignored: what it had not consumed went back to the
 * connection's window when it closed. */
void h2_conn_consume(struct h2_conn *c, uint32_t sid, uint32_t n);
/* Reset a stream from the handler's side (RST_STREAM code). */
int h2_conn_reset(struct h2_conn *c, uint32_t sid, uint32_t code);
/* Graceful drain: GOAWAY NO_ERROR with the last stream id seen; streams up
 * to it finish, later ones are ignored. */
void h2_conn_shutdown(struct h2_conn *c, uint64_t now);
/* Write up to cap bytes of frames into out: queued control and HEADERS
 * frames first, then DATA round-robin within the windows.  Returns bytes
 * written. */
size_t h2_conn_output(struct h2_conn *c, uint8_t *out, size_t cap, uint64_t now);
/* Bytes h2_conn_output would give now (queued frames; DATA not counted). */
static inline size_t h2_conn_out_pending(const struct h2_conn *c) { return c->out_len - c->out_off; }
/* The connection is over: no stream left and our or the peer's GOAWAY sent
 * or received, or a connection error. */
bool h2_conn_done(const struct h2_conn *c);
/* Open streams. */
static inline uint32_t h2_conn_nstreams(const struct h2_conn *c) { return c->nstreams; }
const struct h2_stream *h2_conn_stream(const struct h2_conn *c, uint32_t sid);

/* ---- request validation (conn_req.c), pure ---- */

/* Check a decoded list as a request head (RFC 9113 8.2, 8.3) and fill r
 * (fields point into list; out holds r->fields' slots, cap of them).
 * 0, or -H2_PROTOCOL_ERROR (malformed: a stream error). */
int h2_req_from_list(const struct hpack_list *list, struct h2_req *r, struct h2_field *out,
		     uint32_t cap);
/* The same for a trailer section: no pseudo-header. */
int h2_trailers_from_list(const struct hpack_list *list, struct h2_req *r, struct h2_field *out,
			  uint32_t cap);
/* The equivalent HTTP/1.1 head ("METHOD path HTTP/1.1\r\nhost: ...\r\n...\r\n")
 * for handlers that read http_req (http/parser.h parses it): bytes written,
 * 0 if cap is short.  Cookie fields are joined with "; " (RFC 9113 8.2.3). */
size_t h2_req_to_h1(const struct h2_req *r, uint8_t *out, size_t cap);

#endif
