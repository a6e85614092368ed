/* conn_priv.h — what conn.c (input, timers) and conn_out.c (output) share
 * inside the HTTP/2 engine; not for callers of conn.h. */
#ifndef H2_CONN_PRIV_H
#define H2_CONN_PRIV_H

#include "h2/conn.h"

/* Bytes of the output queue kept for a GOAWAY (17 + no debug data), so that
 * a connection error can always be told. */
#define H2_OUT_GOAWAY_RESERVE 64u
/* Room a response's HEADERS leaves for the control frames after it. */
#define H2_OUT_CTL_RESERVE 1024u

struct h2_stream *h2_stream_find(struct h2_conn *c, uint32_t sid);
void h2_stream_free(struct h2_conn *c, struct h2_stream *s);
void h2_stream_remote_end(struct h2_conn *c, struct h2_stream *s);
void h2_stream_local_end(struct h2_conn *c, struct h2_stream *s);
void h2_conn_credit(struct h2_conn *c, uint32_t n);
void h2_conn_error(struct h2_conn *c, uint32_t code);

/* Queue a control frame.  false: no room (the connection then ends with
 * ENHANCE_YOUR_CALM: the peer sends more than it reads). */
bool h2_out_settings(struct h2_conn *c, const struct h2_setting *s, size_t n);
bool h2_out_settings_ack(struct h2_conn *c);
bool h2_out_ping_ack(struct h2_conn *c, const uint8_t opaque[8]);
bool h2_out_rst(struct h2_conn *c, uint32_t sid, uint32_t code);
bool h2_out_window_update(struct h2_conn *c, uint32_t sid, uint32_t inc);
/* GOAWAY: also sets goaway_sent and goaway_last. */
void h2_out_goaway(struct h2_conn *c, uint32_t last_sid, uint32_t code);

#endif
