/* echo.c — a streaming upload echo on http/app.h: POST (or PUT) /echo
 * answers with the request's body, byte for byte, as it arrives.  Nothing
 * is buffered beyond the engine's per-connection buffers, whatever the
 * size: each piece of the body is copied into the answer (http_app_write),
 * and when the answer's buffer is full the body stops being read until the
 * socket has taken some of it (the write callback resumes it).  That is
 * back-pressure both ways: a client that sends 10 GiB and reads slowly
 * holds the same few KiB here as one that sends 10 bytes.
 *
 * A Content-Length body is answered with the same Content-Length; a
 * chunked one with a chunked answer. */
#include "http/app.h"

static long echo_piece(struct http_app_req *r, void *ctx, const uint8_t *data, size_t len,
		       bool end)
{
	(void)ctx;
	if (end) {
		http_app_end(r);
		return 0;
	}
	/* What does not fit now is offered again after http_app_body_resume. */
	return http_app_write(r, data, len);
}

/* Room in the answer again: let the body flow. */
static void echo_room(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	http_app_body_resume(r);
}

static int echo(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	if (!http_app_has_body(r))
		return http_app_send(r, 200, "", 0);
	/* Ask for the body first: that sends 100 Continue if the client waits
	 * for it, and tells the engine the body will be read. */
	int rc = http_app_body_stream(r, echo_piece, NULL);
	if (rc < 0)
		return rc;
	http_app_header(r, "Content-Type", "application/octet-stream");
	return http_app_stream(r, 200, http_app_body_length(r), echo_room, NULL);
}

static const struct http_app_route routes[] = {
	{HTTP_POST, "/echo", false, echo, NULL},
	{HTTP_PUT, "/echo", false, echo, NULL},
};

const struct http_app_def skiff_app = {.routes = routes, .nroutes = SK_ARRAY_LEN(routes),
				      .name = "echo", .workers = true};
