/* app.h — write an HTTP application for skiff: routes, requests and
 * responses, with bodies streamed both ways.  This one header is the whole
 * API; the same handlers run unchanged on Linux sockets, on skiff's own
 * TCP/IP stack in a Linux process, and inside the unikernel.
 *
 * A first application (docs/app.md walks through a longer one; `make
 * check` builds this one and runs the commands below it, tools/doc_examples.py):
 *
 * ---- Example: hello.c ----
 *   #include "http/app.h"
 *
 *   static int hello(struct http_app_req *r, void *ctx)
 *   {
 *           (void)ctx;
 *           http_app_header(r, "Content-Type", "text/plain");
 *           return http_app_send(r, 200, "hello\n", 6);
 *   }
 *   static const struct http_app_route routes[] = {
 *           {HTTP_GET, "/", false, hello, NULL},
 *   };
 *   const struct http_app_def skiff_app = {.routes = routes, .nroutes = 1, .name = "hello"};
 *
 *   $ make -C $SKIFF app APP=$PWD/hello.c
 *   $ $SKIFF/build/app/hello --port 8080 &
 *   $ curl http://127.0.0.1:8080/               # hello
 *
 * That is the whole program: an application defines the one symbol
 * `skiff_app` and no main.  Linked with skiff's hosted library it becomes
 * a Linux program (cmd/app_main.c: main calls skiff_app_main, which takes
 * `skiff serve`'s options, --stack linux|skiff, --dev, --ip, ...); an
 * embedder may instead drive the engine itself (http_app_init/start on any
 * struct loop, as the unit tests do on loop_fake).
 *
 * ---- Threads and calls ----
 * One loop, one thread (loop/loop.h): every function here is called from
 * the loop's thread, inside a callback the engine made (a handler, a body
 * or write callback) or inside another loop callback (a timer the
 * application armed, another socket's readiness).  Nothing blocks: a
 * handler that must wait for something returns 0 and answers later.
 *
 * ---- Routes ----
 * A route is a method and a path.  `path` is compared with the request's
 * DECODED path (percent-decoding done, query cut off, "." and ".."
 * segments refused with 404 before routing, a not-found like any other
 * that keeps the connection):
 *   prefix false  the path must be equal ("/kv/" matches "/kv/" only);
 *   prefix true   the path must start with it ("/kv/" matches "/kv/a/b";
 *                 http_app_rest gives "a/b", the path parameter).
 * The first route in table order whose method and path match wins; the
 * method HTTP_APP_ANY matches every method.  A path that some route
 * matches but not with this method gets 405 (with an Allow line listing
 * the methods that would match); no match at all gets 404.  A HEAD
 * request matches a GET route when no HEAD route matches: the handler
 * answers as for GET and the engine sends the head only.
 *
 * ---- One request's life (struct http_app_req) ----
 *   1. the head is complete: the handler runs, with the head readable
 *      through the accessors below;
 *   2. the handler may ask for the body (http_app_body_stream, or
 *      http_app_body_collect into a buffer it gives), at once or later;
 *   3. the handler answers, at once or later (http_app_send, or
 *      http_app_stream + http_app_write ... + http_app_end);
 *   4. when the answer has been handed to the socket whole and the body
 *      has been read (or discarded), or when the connection ends early,
 *      the request is over: the on_done callback (http_app_on_done), if
 *      one was set, runs once, with ok true (answered whole) or false
 *      (aborted: peer closed, reset, timeout, an error status sent by the
 *      engine).  After on_done returns, `r` is gone: no call may use it.
 *      A request is never over while a call the engine made into the
 *      application for it is still running.
 * A request is not over until the handler answers, so an async handler
 * keeps `r` until it calls http_app_send/http_app_end (or until on_done
 * tells it the connection went away: set on_done when you answer later).
 * Called from outside the engine's callbacks for r (a timer, another
 * socket), http_app_send, http_app_write, http_app_end and
 * http_app_body_resume run the connection at once, so the request may be
 * over, on_done included, when they return: do not use r after them there.
 *
 * ---- Memory and ownership ----
 * The engine never allocates: the embedder gives one block at init
 * (http_app_mem_size), holding every connection's state and buffers.
 * Per connection: the state (656 bytes on x86_64), and one buffer set:
 * rbuf_size bytes for the head and body pieces, out_size bytes for the
 * answer's head and streamed body, hdr_size bytes for the application's
 * header lines, the parsed head and the decoded path (3 KiB); and once,
 * the body pool of http_app_body_read (body_slots x body_size).  A
 * connection holds a buffer set only while it has bytes or a request:
 * from its first byte read until it is idle again (nothing unparsed,
 * nothing to send, no request), so an idle keep-alive connection holds
 * only its state.  States and sets are reused last-in first-out, and one
 * never used is never touched: memory follows the connections that came
 * and the requests in flight, not max_conns.
 * Everything a request accessor returns points into the connection's
 * buffers and lives until on_done (or, without on_done, until the request
 * is over): copy what you keep longer.  Everything the application passes
 * in (header values, streamed data) is copied when the call returns,
 * EXCEPT the body of http_app_send, which the engine sends from the
 * application's memory and reads until the request is over: it must stay
 * valid and unchanged until then (use on_done to know when).  The buffer
 * given to http_app_body_collect belongs to the application; the engine
 * writes into it until the completion callback runs (or the request is
 * over) and never after.
 *
 * ---- Limits (struct http_app_config; the hosted binary's options) ----
 *   max_conns          connection states; more connections get 503;
 *   max_body           any request body (Content-Length or chunked total)
 *                      longer than this gets 413 (--max-body);
 *   header_timeout     accept (or end of the previous request) to a
 *                      complete head: 408 (--header-timeout);
 *   body_timeout       from the handler asking for the body (or the engine
 *                      starting to discard it) to its last byte: 408
 *                      (--body-timeout);
 *   send_timeout       no byte of the answer accepted by the socket for
 *                      this long (a peer that stopped reading): the
 *                      connection is closed (--send-timeout);
 *   keepalive_timeout  idle between requests: closed silently.
 * The engine's answers of its own: 400 (a head or chunked body that does
 * not parse, and the other parser verdicts: 414, 431, 501, 505), 408, 413,
 * 500 (a handler or body callback returned < 0 before answering), each
 * ending the connection after the answer (the request is over with ok
 * false); 404 and 405 (no route), which keep it; 503 (every connection
 * state taken: answered at accept and closed).
 *
 * ---- The access log and the drain (struct http_app_config, http_app_drain) ----
 * config.access, when set, is called once per answer (the engine's own
 * too, a refused 503 included) with one record (http/access.h): a whole
 * answer (http_app_send, http_app_send_file, the engine's errors) when it
 * is queued; a streamed one when it ends (http_app_end), or when it is
 * cut (http_app_abort, the peer gone, a timeout) with the body bytes
 * written until then.  A request that never got an answer logs nothing.
 * http_app_drain is a graceful stop: see it below.
 *
 * ---- Bodies in (request) ----
 * Framed by Content-Length or chunked (the chunked coding is decoded; the
 * application sees data only).  The engine reads a body only when the
 * handler asks, so memory per connection stays bounded whatever its
 * size:
 *   http_app_body_stream  every piece, as it arrives, to a callback; the
 *                         piece points into rbuf and lives during the call;
 *                         the callback takes what it can and the rest
 *                         waits (back-pressure: TCP's window closes) until
 *                         http_app_body_resume;
 *   http_app_body_collect the whole body into the application's buffer of
 *                         `cap` bytes, then one callback; a longer body
 *                         gets 413 from the engine (the request is over,
 *                         ok false, and the callback never runs).
 * `Expect: 100-continue`: the engine sends "100 Continue" when the
 * handler first asks for the body, and never if it answers without
 * reading it (then the connection closes after the answer, so the unsent
 * body is never read).  A handler that answers without asking for the body
 * of a request that has one: the engine reads and drops the body when its
 * Content-Length is at most 64 KiB and keeps the connection; a longer or
 * chunked one closes the connection after the answer ("Connection: close"
 * says so).  Decide before answering: the answer's head carries that.
 *
 * ---- Bodies out (response) ----
 *   http_app_send    status and a whole body of known length;
 *   http_app_stream  status and either a known length or HTTP_APP_CHUNKED
 *                    (the chunked coding on HTTP/1.1; on HTTP/1.0 the body
 *                    ends with the connection), then the body produced in
 *                    pieces by http_app_write, ended by http_app_end.
 * Back-pressure: http_app_write copies what fits in the connection's output
 * buffer and returns how much it took (0 when full); the engine calls the
 * stream's write callback again whenever the socket took some of it and
 * there is room: produce more there (it is also called once a known length
 * is all written, so a 0-byte stream too gets its http_app_end).
 * Content-Length, Transfer-Encoding, Connection and Date are the engine's;
 * an application's header with one of those names is refused (-SK_EINVAL).
 * A write past a known length is refused (-SK_EINVAL); a known-length
 * stream ended short is an application bug: the engine closes the
 * connection (the peer sees a truncated body, never a wrong one).
 *
 * ---- Errors ----
 * Calls return 0 (or a count) or a negative -SK_E* from base/sk_err.h:
 * -SK_EINVAL for a call in the wrong state (answering twice, a header after
 * the answer started) or a header the engine refuses (its own names, a bad
 * name or value: not sent, the answer goes on without it).  -SK_ENOBUFS
 * for a header line beyond the header area (http_app_config's hdr_size,
 * http_app_def's hdr_size): that answer is then the engine's 500 with the
 * connection closed, whatever the application sends (its send, stream,
 * write and end calls return as if they worked; nothing of it is sent),
 * counted in http.header_overflow and said in the error log: never an
 * answer without a line the application meant (a 302 without Location).
 * http_app_headerf fails the same way, also for a value that is not one
 * (http.header_invalid).  The 500 leaves when the application answers
 * (its send or stream call) or its handler returns < 0: so answer as you
 * would have; a request left unanswered stays open as any other does.
 *
 * ---- The helper kit ----
 * Three helpers for the common case, on every form (they are the
 * engine's, so the hosted stacks and the unikernel behave alike):
 *   http_app_body_read   the whole body into memory the engine owns: a
 *                        slot of a bounded pool in the engine's block
 *                        (http_app_def.body_size bytes each, body_slots
 *                        of them, default 16; no allocation per request).
 *                        The body arrives NUL-terminated, writable, and
 *                        lives until on_done has run; then the slot goes
 *                        back.  Over the limit (body_size, or the call's
 *                        own smaller limit: per route): 413, before the
 *                        body is sent when Content-Length says so.  No
 *                        free slot: 503, counted in http.body_pool_empty.
 *   http_app_headerf     a header value formatted as by printf (base/fmt.h's
 *                        subset, checked by the compiler), written straight
 *                        into the header area; a value that does not fit
 *                        or is no header value fails as loudly as an
 *                        overflow (Errors, below).
 *   error_answer         (http_app_def) the body and type of every answer
 *                        the engine makes itself: 400, 404, 405, 408, 413,
 *                        414, 431, 500, 501, 503, 505; e.g. JSON for an API.
 *                        Up to HTTP_APP_ERROR_BODY_MAX bytes; the hook
 *                        declines (< 0) to keep the engine's text.
 * Under a configuration file's router (`app;` routes, router/sites.h) the
 * runtimes size the engines for the application's pool and take its hook
 * (http_app_config_fit), so they apply to every answer those engines make
 * themselves.
 *
 * ---- Limits, by their names ----
 *   http_app_config / hosted option   default   over it
 *   max_conns      --max-conns           256       503 at accept
 *   max_body       --max-body            1 MiB     413
 *   rbuf_size                            32 KiB    (holds the head)
 *   out_size                             16 KiB    (answer head + stream)
 *   hdr_size       http_app_def.hdr_size 1 KiB     500, http.header_overflow
 *   body_size      http_app_def.body_size 0 (none) 413 (http_app_body_read)
 *   body_slots     http_app_def.body_slots 16      503, http.body_pool_empty
 *   the parser's (http/parser.h): request line 8 KiB (HTTP_MAX_REQUEST_LINE):
 *   414; header lines 16 KiB (HTTP_MAX_FIELDS_BYTES) or 100 of them
 *   (HTTP_MAX_FIELDS): 431; a decoded path of 2 KiB: 414; an unknown
 *   method: 501; a version other than 1.0/1.1: 505.
 *
 * Freestanding: base/ and loop/loop.h and http/parser.h (for enum
 * http_method) only (http/file.h for http_app_send_file's entry,
 * http/access.h for the access log's record), no libc, no clock (time is
 * the loop's), so it links into the unikernel.
 */
#ifndef HTTP_APP_H
#define HTTP_APP_H

#include "../base/hist.h"
#include "../base/sk.h"
#include "../base/sk_addr.h"
#include "../base/sk_err.h"
#include "../loop/loop.h"
#include "access.h"
#include "parser.h"

/* Methods are enum http_method of http/parser.h: HTTP_GET, HTTP_PUT, ... */
#define HTTP_APP_ANY 0xffu /* a route for every method */

struct http_app;
struct http_app_req;

/* Runs when a request's head is complete and matched this route.  Return
 * 0 (answered, or will answer later) or < 0: the engine answers 500 if
 * nothing was answered yet, else ends the connection. */
typedef int (*http_app_handler_fn)(struct http_app_req *r, void *ctx);

/* The error-answer hook (http_app_def.error_answer, see The helper kit):
 * write the body of the engine's own answer `status` into buf[0, cap)
 * and return its length (0..cap), and set *content_type to its media
 * type (a string that lives as long as the engine; "text/plain" is
 * preset); < 0 or > cap: the engine's own body.  Called from the loop's
 * thread, with no request to touch: it must not call the engine. */
#define HTTP_APP_ERROR_BODY_MAX 512u
typedef long (*http_app_error_fn)(void *ctx, int status, char *buf, size_t cap,
				  const char **content_type);

struct http_app_route {
	uint8_t method;   /* enum http_method, or HTTP_APP_ANY */
	const char *path; /* starts with '/'; NUL-terminated */
	bool prefix;      /* path is a prefix (see Routes above) */
	http_app_handler_fn fn;
	void *ctx;        /* given to fn */
};

/* What an application is: its routes (read during the engine's whole life,
 * never copied) and a name for messages. */
struct http_app_def {
	const struct http_app_route *routes;
	unsigned nroutes;
	const char *name;
	/* Optional: runs once before the first connection, with the engine,
	 * for an application that wants the loop (timers) or its own state;
	 * returns 0 or < 0 to refuse to start. */
	int (*init)(struct http_app *app, void *ctx);
	void *init_ctx;
	/* Whether the host may run it on several workers at once (hosted
	 * --workers N, docs/smp.md): N engines, each with its own init, whose
	 * handlers and callbacks run on N threads at the same time.  true
	 * only for an application whose handlers share nothing writable or
	 * guard what they share; false: the host refuses --workers > 1. */
	bool workers;
	/* The header area its answers need: http_app_config's hdr_size (the
	 * lines of http_app_header, per answer), 0 for the default 1 KiB.  A
	 * line that does not fit makes the answer a 500 (counted in
	 * http.header_overflow, said in the error log), never an answer
	 * without it.  The runtimes size their engines for it
	 * (http_app_config_fit). */
	uint32_t hdr_size;
	/* The body pool of http_app_body_read (see The helper kit): the
	 * longest body one read may collect (its limit, bytes; 0: the
	 * application reads none that way) and how many may be held at once
	 * (0: 16).  The runtimes size their engines for it
	 * (http_app_config_fit). */
	uint32_t body_size;
	uint32_t body_slots;
	/* The engine's own answers, shaped (see The helper kit); NULL: its
	 * plain-text bodies. */
	http_app_error_fn error_answer;
	void *error_answer_ctx;
};

/* ---- the request ---- */

/* The method (enum http_method; HTTP_UNKNOWN never reaches a handler: 501). */
unsigned http_app_method(const struct http_app_req *r);
/* The request-target as sent ("/kv/a%20b?x=1"), *len bytes, not terminated. */
const char *http_app_target(const struct http_app_req *r, size_t *len);
/* The decoded path ("/kv/a b"), NUL-terminated; len may be NULL. */
const char *http_app_path(const struct http_app_req *r, size_t *len);
/* The path after the matched route's prefix ("a b" for the route "/kv/"),
 * NUL-terminated; "" for an exact route. */
const char *http_app_rest(const struct http_app_req *r, size_t *len);
/* The query after '?', raw (not decoded), *len bytes; NULL if none. */
const char *http_app_query(const struct http_app_req *r, size_t *len);
/* 10 or 11. */
unsigned http_app_version(const struct http_app_req *r);
/* Header lines in the order sent, i < http_app_nheaders.  Names as sent
 * (compare them ignoring case), values without surrounding whitespace;
 * neither is terminated. */
unsigned http_app_nheaders(const struct http_app_req *r);
void http_app_header_at(const struct http_app_req *r, unsigned i, const char **name,
			size_t *nlen, const char **value, size_t *vlen);
/* The value of the first line named `name` (any case), or NULL. */
const char *http_app_header_get(const struct http_app_req *r, const char *name, size_t *vlen);
/* The Host line's value (what http_app_header_get(r, "host", vlen) finds,
 * without the search: the parser keeps it, and refuses a second), or NULL. */
const char *http_app_host(const struct http_app_req *r, size_t *vlen);
/* The peer (IPv4 mapped, base/sk_addr.h) and its port. */
const struct sk_addr *http_app_peer(const struct http_app_req *r, uint16_t *port);
/* Does the request have a body?  Its length, when framed by
 * Content-Length; HTTP_APP_CHUNKED when chunked (length unknown). */
#define HTTP_APP_CHUNKED UINT64_MAX
bool http_app_has_body(const struct http_app_req *r);
uint64_t http_app_body_length(const struct http_app_req *r);
/* The loop and the engine the request came from (for timers). */
struct loop *http_app_loop(const struct http_app_req *r);
struct http_app *http_app_of(const struct http_app_req *r);
/* "http" or "https": the engine's config.scheme (how the client reached
 * it; a proxy's X-Forwarded-Proto). */
const char *http_app_scheme(const struct http_app_req *r);

/* ---- the request body ---- */

/* Called with each piece of the body (len > 0), then once with len 0 and
 * end true (its return value ignored).  data lives during the call.
 * Return how many bytes were taken, 0..len: fewer than len stops the flow
 * (back-pressure: nothing more is read, and TCP's window closes) until
 * http_app_body_resume, and the rest of the piece is offered again then.
 * < 0: an error (500 if nothing was answered yet, else the connection
 * ends). */
typedef long (*http_app_body_fn)(struct http_app_req *r, void *ctx, const uint8_t *data,
				 size_t len, bool end);
/* Stream the body to fn.  Once per request; 0 or -SK_EINVAL (no body, or
 * already asked).  Asked from inside the handler, the first piece comes
 * after the handler returns; asked later, pieces may arrive inside this
 * call. */
int http_app_body_stream(struct http_app_req *r, http_app_body_fn fn, void *ctx);
void http_app_body_resume(struct http_app_req *r);

/* Collect the whole body into buf[0, cap) (the application's memory) and
 * call done(r, ctx, len) once it is there.  A longer body: 413 (see above). */
typedef void (*http_app_collect_fn)(struct http_app_req *r, void *ctx, size_t len);
int http_app_body_collect(struct http_app_req *r, void *buf, size_t cap, http_app_collect_fn done,
			  void *ctx);

/* The helper kit's read (see The helper kit): the whole body, at most
 * `limit` bytes (0, or more than the pool's body_size: body_size), into
 * a slot of the engine's body pool, then done(r, ctx, body, len) with
 * body[len] == 0 (a request without a body: at once, inside this call,
 * with "" and 0).  The slot is the engine's: body is valid, and the
 * application may write into it (a JSON scanner that ends strings in
 * place), until on_done has run; the engine frees it after that.
 * Content-Length over the limit: 413 at once (before the client sends
 * it, no slot taken); a chunked body that grows over it: 413 then.  No
 * free slot: 503 (counted in http.body_pool_empty).  0, or -SK_EINVAL (a
 * body already asked for, no done, no pool: body_size 0). */
typedef void (*http_app_read_fn)(struct http_app_req *r, void *ctx, char *body, size_t len);
int http_app_body_read(struct http_app_req *r, size_t limit, http_app_read_fn done, void *ctx);

/* Read the body and drop it, then call then(r, ctx) to answer (as a
 * handler: < 0 gets the engine's 500): for a
 * handler that never uses a body (files, a redirect, a fixed answer) but
 * wants the request framed whole first, as a server answers after the
 * request it read.  So a body that breaks its framing (a bad chunk, a
 * trailer over the limits, longer than max_body) gets the engine's 400,
 * 413 or 431 instead of an answer followed by a closed connection, and a
 * chunked body does not cost the keep-alive.  "100 Continue" is sent, as
 * for any read.  A request without a body: `then` runs inside this
 * call, and its result is returned. */
int http_app_body_skip(struct http_app_req *r, http_app_handler_fn then, void *ctx);

/* ---- the response ---- */

/* Add a header line to the answer (before http_app_send/http_app_stream).
 * Both are copied; value must hold no CR, LF or NUL (-SK_EINVAL).  A name
 * dropped by http_app_header_drop is accepted (0) and not sent. */
int http_app_header(struct http_app_req *r, const char *name, const char *value);
/* http_app_header with a value formatted as by printf, in the subset of
 * base/fmt.h (%s %d %u %x %c %%, widths, precisions, l ll z h hh j t;
 * the compiler checks the arguments).  The value is formatted straight
 * into the header area.  It fails as loudly as an overflow: a value
 * that does not fit (-SK_ENOBUFS, counted in http.header_overflow), a
 * conversion outside the subset or a value holding CR or LF
 * (-SK_EINVAL, counted in http.header_invalid) makes the answer the
 * engine's 500, said in the error log, never an answer without the line
 * (a 302 without Location).  A bad name, one of the engine's own names or
 * a call in the wrong state is -SK_EINVAL and nothing else, as for
 * http_app_header. */
int http_app_headerf(struct http_app_req *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Remove a header name from the answer (before it starts): lines of that
 * name (any case) already added are taken out, and those added later are
 * not sent, for this answer.  "Server" removes the engine's own Server
 * line too.  The engine's framing lines
 * (Content-Length, Transfer-Encoding, Connection, Date) cannot be removed
 * (-SK_EINVAL).  Up to about 128 bytes of names per request (-SK_ENOBUFS
 * beyond).  For a router's per-route "header -Name" (http/sites.c): it
 * drops first, the handler adds after. */
int http_app_header_drop(struct http_app_req *r, const char *name);
/* Where the engine's Content-Length line goes among the application's
 * lines: after those added so far (default: after all of them).  Order
 * means nothing to HTTP (RFC 9110 5.3); the files handler uses it to keep
 * the order of lines `skiff serve --root` has always sent.  0 or
 * -SK_EINVAL (the answer started). */
int http_app_header_length_here(struct http_app_req *r);
/* For a router that matched a prefix of its own inside a route's handler
 * (http/sites.c): http_app_rest gives the path from byte `off` on
 * (clamped to the path's length). */
void http_app_set_rest(struct http_app_req *r, size_t off);
/* Run another application's routes for this request, from inside a
 * handler (a router's `app;` route, router/sites.h): its table is matched
 * against the whole path as the engine matches its own (Routes above),
 * http_app_rest then says what follows the matched prefix, and the
 * route's handler runs with its ctx; its return is returned.  No match:
 * 404, or 405 with Allow, answered here (0).  -SK_EINVAL once the answer
 * has started. */
int http_app_routes_run(struct http_app_req *r, const struct http_app_def *def);
/* End the connection after this answer: the head says "Connection: close"
 * and the request's unread body, if any, is never read (a proxy refusing
 * a GET with a body does not trust the framing behind it).  0, or
 * -SK_EINVAL once the answer's head is queued (too late to say so). */
int http_app_close_after(struct http_app_req *r);
/* The whole answer: status (200..599, not 1xx) and body[0, len), sent
 * from the application's memory (see Memory above).  For HEAD only the
 * head leaves. */
int http_app_send(struct http_app_req *r, int status, const void *body, size_t len);

/* The whole answer with a body that is a slice of a site's entry
 * (http/file.h): f->data[off, off + len).  As http_app_send, and the
 * engine may hand the slice to the loop instead of copying it (loop.h):
 * by reference (send_ref) when f->pinned and the loop has that op, from
 * f's descriptor (sendfile) when f->fd > 0 and the loop has that op, else
 * a write from the mapping.  f's contract (file.h) keeps data valid;
 * a file found shorter than promised by sendfile ends the connection
 * (the peer sees a truncated body).  -SK_EINVAL also for a directory or
 * a slice past f->len. */
struct http_file;
int http_app_send_file(struct http_app_req *r, int status, const struct http_file *f,
		       uint64_t off, uint64_t len);

/* A streamed answer: len is the body's length or HTTP_APP_CHUNKED.  fn is
 * called (from the loop) whenever there is room for more; call
 * http_app_write there, or from anywhere else, and http_app_end after the
 * last byte.  fn may be NULL for an application that writes from its own
 * events (then it must watch http_app_writable or the return counts). */
typedef void (*http_app_write_fn)(struct http_app_req *r, void *ctx);
int http_app_stream(struct http_app_req *r, int status, uint64_t len, http_app_write_fn fn,
		    void *ctx);
/* Copy up to len bytes of body; returns how many were taken (0: full,
 * wait for fn), or -SK_EINVAL (no stream, or past its length). */
long http_app_write(struct http_app_req *r, const void *data, size_t len);
/* Body bytes of a known-length stream taken by http_app_write so far (0
 * for a chunked one): where a producer that keeps no state of its own
 * resumes (the files handler's multipart/byteranges). */
uint64_t http_app_written(const struct http_app_req *r);
/* Body bytes http_app_write would take now. */
size_t http_app_writable(const struct http_app_req *r);
/* For HEAD the body is never sent, so http_app_end may come at once after
 * http_app_stream with a known length (the head carries that length). */
int http_app_end(struct http_app_req *r);
/* Cut the answer: the connection closes at once (what was queued may
 * not leave), and
 * the request is over with ok false (on_done runs).  For an answer that
 * cannot be finished honestly (a proxy whose origin died mid-body): the
 * peer sees a truncated body or a missing last chunk, never a whole one. */
void http_app_abort(struct http_app_req *r);

/* Called once when the request is over (see One request's life).  Set it
 * any time before; a second call replaces the first. */
typedef void (*http_app_done_fn)(struct http_app_req *r, void *ctx, bool ok);
void http_app_on_done(struct http_app_req *r, http_app_done_fn fn, void *ctx);

/* ---- the engine (for embedders: skiff_app_main does this) ---- */

/* The access log's hook.  Called once per answer (see The access log above), in the order the
 * answers go out on each connection.  The record points into the
 * engine's buffers, valid during the call only: format or copy it there.
 * It must not call the engine back.  It cannot tell whether the client
 * then received the body (a connection that dies mid-body is logged
 * with the bytes queued). */
typedef void (*http_access_fn)(void *ctx, const struct http_access *rec);

struct http_app_config {
	struct sk_addr addr; /* listen address, either family; all zero (::) = any */
	uint16_t port;
	int backlog;    /* <= 0: the loop's default */
	uint32_t max_conns;
	uint64_t max_body;             /* default 1 MiB */
	uint32_t rbuf_size;            /* default 32 KiB (>= the parser's HTTP_HEAD_MAX + 1 KiB) */
	uint32_t out_size;             /* default 16 KiB (>= 2 KiB) */
	uint32_t hdr_size;             /* the application's header lines per answer:
					* default 1 KiB (256 .. out_size - 1 KiB);
					* a proxy forwarding an origin's head wants more */
	sk_time_ns header_timeout;     /* default 10 s */
	sk_time_ns body_timeout;       /* default 60 s */
	sk_time_ns send_timeout;       /* default 60 s */
	sk_time_ns keepalive_timeout;  /* default 60 s */
	sk_time_ns linger_timeout;     /* default 2 s: reading what follows an error */
	const char *scheme;            /* what the client's connection speaks, as the
					* request's URI scheme: "http" (default, and
					* for NULL) or "https" when the embedder runs
					* this engine on a TLS loop; http_app_scheme */
	bool accept_purge;             /* PURGE reaches the routes (http_req.accept_purge;
					* the proxy's); default false: 501 */
	/* NULL: no access log, and the engine does no work for one (a
	 * predicted branch per answer).  No memory of its own: the record's
	 * request line, Referer and User-Agent are read from the head, which
	 * stays in rbuf for the request's whole life. */
	http_access_fn access;
	void *access_ctx;
	/* The error log: a runtime error of an answer (key: what repeats,
	 * for the log's rate limit, e.g. "http.header_overflow"; msg: one
	 * line, NUL-terminated, valid during the call).  NULL: counted only. */
	void (*error_log)(void *ctx, const char *key, const char *msg);
	void *error_ctx;
	/* The body pool (http_app_body_read): body_slots slots of body_size
	 * bytes (+1 for the NUL), in the engine's block.  Default 0 and 0:
	 * no pool.  http_app_config_fit takes them from the application. */
	uint32_t body_size;
	uint32_t body_slots;
	/* The error-answer hook (http_app_def.error_answer; config_fit
	 * copies it): every answer the engine makes itself (400, 404, 405,
	 * 408, 413, 414, 431, 500, 501, 503, 505) gets its body and type
	 * from it.  NULL: the plain-text ones. */
	http_app_error_fn error_answer;
	void *error_answer_ctx;
	/* --trace (base/hist.h): the engine's stages, under the names the
	 * former static-file engine gave them: http_request (a keep-alive
	 * request: the parse of its complete head to the write that took its
	 * answer's last byte), conn (accept to close), timer_arm and
	 * timer_cancel.  NULL: off, one predicted branch per stage.  Written
	 * by this engine only: one per loop (worker), never shared between
	 * threads.  The others (rx_sync .. tcp_out,
	 * park_wake) are the runner's and TCP's, which the runtime hands the
	 * same trace (host/sites_host.c).  On a TLS loop the write is the TLS
	 * layer's (the record sealed, then its socket write). */
	struct sk_trace *trace;
	/* HTTP/2 (docs/h2.md): sessions held at once, each an HTTP/2
	 * connection's engine (h2/conn.h, about 140 KiB) in the engine's
	 * block.  A connection whose first bytes are the HTTP/2 preface
	 * (RFC 9113 3.4: prior knowledge on a plain port, or ALPN h2 under
	 * TLS) takes one; anything else is HTTP/1.1 as before.  Each of its
	 * streams takes a connection state of max_conns for its request, so
	 * max_conns bounds both.  Default 8; 0 turns HTTP/2 off (the preface
	 * then gets HTTP/1.1's 505).  None free: the connection is closed
	 * (http.h2_sessions_refused); no state for a stream, or a stream over
	 * SETTINGS_MAX_CONCURRENT_STREAMS: RST_STREAM REFUSED_STREAM
	 * (http.h2_streams_refused). */
	uint32_t h2_sessions;
};

void http_app_config_default(struct http_app_config *cfg);
/* Raise cfg's hdr_size (and out_size, which must hold it and 1 KiB more)
 * and its body pool (body_size, body_slots) to what def asks for, and
 * take def's error_answer hook when cfg has none; NULL def: nothing. */
void http_app_config_fit(struct http_app_config *cfg, const struct http_app_def *def);
/* Raise cfg's hdr_size (and out_size with it) to at least hdr_size: a
 * configuration file's `header_area` (conf/sites_conf.h). */
void http_app_config_hdr(struct http_app_config *cfg, uint32_t hdr_size);
/* Bytes of memory http_app_init needs (0: a limit out of range). */
size_t http_app_mem_size(const struct http_app_config *cfg);
/* The engine lives in mem (size bytes, any alignment, owned by the caller
 * until http_app_stop).  Runs def->init.  0 or -SK_EINVAL / -SK_ENOMEM. */
int http_app_init(struct http_app *app, void *mem, size_t size, const struct http_app_config *cfg,
		  const struct http_app_def *def, struct loop *loop);
int http_app_start(struct http_app *app);
/* Closes the listener and every connection (each request's on_done runs
 * with ok false). */
void http_app_stop(struct http_app *app);
/* A graceful stop (SIGTERM): what is in flight finishes, nothing new
 * starts.
 *   - Connections the listener holds are accepted, then it is closed.
 *   - Every answer queued from now on says "Connection: close" and ends
 *     its connection; one that started before (a long stream, a proxy's
 *     exchange) finishes, and its connection closes once idle, below.
 *   - A connection idle between requests (or accepted, no byte yet) is
 *     closed once it has been idle HTTP_APP_DRAIN_IDLE_GRACE from now
 *     (counted in drain_idle_closed): closing it at once would race a
 *     request already on its way, which its client would see fail;
 *     within the grace that request is answered, with the close.
 *   - Requests being read, answers being written and lingering closes
 *     finish on their own timeouts.
 * done(ctx) runs once when no connection is left: at once (inside this
 * call) if there is none, else from inside the loop's callbacks.  The
 * caller bounds the whole drain with a timer of its own; http_app_stop
 * closes whatever is left, and then done is not called.  now: the time
 * of the signal (skiff's loop_now may be older).  A second call does
 * nothing. */
#define HTTP_APP_DRAIN_IDLE_GRACE (500 * SK_NS_PER_MS)
void http_app_drain(struct http_app *app, sk_time_ns now, void (*done)(void *ctx), void *ctx);
/* A reload (SIGHUP): every open HTTP/2 session is asked to end, so its
 * client reconnects and meets what the reload changed (a certificate, a
 * route), as nginx's old workers end theirs.  Each sends GOAWAY NO_ERROR
 * whose last stream id is the last the client opened (RFC 9113 6.8): the
 * streams already open finish, a later one is refused by the engine, and
 * once none is left the connection closes as a session after an error
 * does (FIN, then read until the peer closes or linger_timeout).  Counted
 * in h2_goaway_reload (a session that had sent its GOAWAY already, drain
 * or error, is not).  Nothing else changes: HTTP/1.1 connections, the
 * listener and sessions opened after this call go on as before.  now: the
 * time of the reload.  From the loop's thread, between events or inside
 * its callbacks. */
void http_app_goaway(struct http_app *app, sk_time_ns now);
/* The IMF-fixdate for Date (29 characters), when the second changes. */
void http_app_set_date(struct http_app *app, const char *date29);
/* Set cfg.access and cfg.access_ctx from now on (fn NULL: off, and no
 * work per answer): a host whose access log a reload turns on or off.
 * Answers already made keep theirs; a stream cut after the hook was
 * taken away is not logged.  From the loop's thread, between events or
 * inside its callbacks. */
void http_app_set_access(struct http_app *app, http_access_fn fn, void *ctx);
struct http_app_stats;
/* Counters, "http.NAME value" (HTTP_APP_STATS, then http.conns_open): the
 * names `skiff serve` has always printed for its connections, since every
 * runtime serves on this engine. */
void http_app_stats(const struct http_app *app,
		    void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);
/* Add app's counters into *sum, and its open connections into *open: a
 * host with several engines (one per listener) prints them as one with
 * http_app_stats_emit, under "PREFIX.NAME" (PREFIX at most 15 bytes;
 * the hosts print the plain listeners' as "http" and the TLS ones' as
 * "https", as every runtime has). */
void http_app_stats_add(struct http_app_stats *sum, uint64_t *open, const struct http_app *app);
void http_app_stats_emit(const struct http_app_stats *st, uint64_t open, const char *prefix,
			 void (*fn)(void *ctx, const char *name, uint64_t v), void *ctx);
/* Connections whose answer is a file (http_app_send_file) not yet handed
 * to the socket whole: while not 0, the file's memory is still read. */
uint32_t http_app_files_held(const struct http_app *app);
/* Epochs, for a host that swaps what its handlers use between loop turns
 * (router/sites.h's generations): http_app_epoch_next starts a new epoch,
 * and http_app_live_old counts the requests dispatched before the last
 * epoch_next that are not over yet (on_done has not run).  What those
 * requests' handlers may still use can go once it is 0 in every engine,
 * whether or not keep-alive connections stay open, and however many
 * epochs began meanwhile.  O(1) each. */
void http_app_epoch_next(struct http_app *app);
uint32_t http_app_live_old(const struct http_app *app);
/* Every invariant of every connection: 0 or -(line in app.c). */
int http_app_check(const struct http_app *app);

/* The counters, in print order. */
#define HTTP_APP_STATS(X)                                                                  \
	X(conns_accepted) X(conns_refused) X(conns_closed) X(requests) X(resp_2xx) X(resp_3xx) \
	X(resp_4xx) X(resp_5xx) X(resp_400) X(resp_404) X(resp_405) X(resp_408) X(resp_413)     \
	X(resp_500) X(resp_503) X(continues) X(bodies_discarded) X(aborted) X(timeout_header)   \
	X(timeout_body) X(timeout_send) X(timeout_idle) X(bytes_in_body) X(bytes_out)          \
	X(write_errors) X(drain_idle_closed) X(header_overflow) X(header_invalid)                \
	X(body_pool_empty) X(h2_sessions) X(h2_sessions_refused) X(h2_streams)                   \
	X(h2_streams_refused) X(h2_conn_errors) X(h2_stream_errors) X(h2_rapid_reset)            \
	X(h2_floods) X(h2_header_large) X(h2_timeouts) X(h2_goaway_reload)

struct http_app_stats {
#define HTTP_APP_STAT_FIELD(n) uint64_t n;
	HTTP_APP_STATS(HTTP_APP_STAT_FIELD)
#undef HTTP_APP_STAT_FIELD
};

struct http_app_conn;
/* The engine's state: fields are the engine's; an embedder only allocates
 * it (statically or inside its own structs) and reads `st`. */
struct http_app {
	struct http_app_config cfg;
	const struct http_app_def *def;
	struct loop *loop;
	int lsock;
	uint32_t nconns;
	uint32_t files_held;          /* connections whose answer is a file body not yet all sent */
	struct http_app_conn *conns;  /* cfg.max_conns, in mem */
	struct http_app_conn *free_list; /* states used and given back */
	uint8_t *bufs;                /* the buffer sets (see bufs_free below) */
	/* The body pool's free slots, linked through their first bytes (a
	 * slot in use is a connection's, until its request is over). */
	uint8_t *slot_free;
	uint32_t slots_used;
	/* HTTP/2 sessions (cfg.h2_sessions, in mem): the free ones, linked. */
	struct http_app_h2 *h2_free;
	uint32_t h2_used;
	char date[30];
	/* http_app_drain: the listener is closed, every answer is the last
	 * on its connection, idle ones close after the grace from drain_at;
	 * drain_done runs (once) when none is left. */
	bool draining;
	/* Requests not over, started in the current epoch and before it
	 * (http_app_epoch_next); each connection's request says which. */
	uint32_t epoch, live_cur, live_old;
	sk_time_ns drain_at;
	void (*drain_done)(void *ctx);
	void *drain_ctx;
	struct http_app_stats st;
	/* Buffer sets (rbuf_size + out_size + hdr_size each, cfg.max_conns of
	 * them at bufs, so a state never waits for one): bufs_fresh is the
	 * count never handed out (taken in order, untouched until then),
	 * bufs_free the returned ones, linked through their first bytes,
	 * bufs_held those a state holds.  fresh + free + held == max_conns. */
	uint8_t *bufs_free;
	uint32_t bufs_fresh, bufs_held;
	/* Connection states never used: conns[max_conns - states_fresh, ...)
	 * (taken in order, untouched until then, so a server sized for many
	 * connections does not touch the states of those that never came). */
	uint32_t states_fresh;
};

/* ---- the program ---- */

/* An application defines this one symbol (and no main). */
extern const struct http_app_def skiff_app;
/* Hosted (libskiff-host.a, cmd/app_cli.c): `skiff serve`'s options,
 * stacks and runtime (host/sites_host.c) around the engine, the flags one
 * site whose route / runs def (or --config FILE, whose `app;` routes do);
 * returns the exit status.  cmd/app_main.c's
 * main is `return skiff_app_main(&skiff_app, argc, argv);`. */
int skiff_app_main(const struct http_app_def *def, int argc, char **argv);

#endif
