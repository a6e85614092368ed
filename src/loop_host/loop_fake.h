/* loop_fake.h — a loop.h backend for unit tests and benchmarks: no network,
 * no clock, no thread.
 *
 * Sockets are byte queues: the test appends a client's bytes to a socket's
 * input (loop_fake_push, loop_fake_send) and reads what the application
 * wrote from its output; a connection arrives when the test says
 * (loop_fake_connect); time moves only in loop_fake_advance, which fires the
 * due timers.  Callbacks run inside those calls, on the caller's stack, so a
 * test can check the application's state right after each step.
 *
 * One listener (LOOP_FAKE_LSOCK); accepted sockets are the numbers the test
 * picks, 2 .. LOOP_FAKE_NSOCK-1.  An active open (loop_connect) gets socket
 * connect_next, then the next number, and is "connecting" until the test
 * raises LOOP_EV_WRITE on it (connected) or LOOP_EV_ERROR | LOOP_EV_READ
 * with eof (refused); connect_next 0 (the default) refuses every open with
 * -SK_EADDRNOTAVAIL.  Writes may be limited (write_room) to
 * force partial sends and -SK_EAGAIN.  A test that breaks the fake's own
 * limits (output beyond LOOP_FAKE_BUF, a full timer heap, too many pending
 * connections) stops with __builtin_trap(): that is a bug in the test.
 *
 * Users: src/http/app_test.c, files_handler_test.c, proxy_test.c, bench/bench_cost.c.
 */
#ifndef LOOP_HOST_LOOP_FAKE_H
#define LOOP_HOST_LOOP_FAKE_H

#include "../loop/loop.h"
#include "../loop/timerq.h"

#define LOOP_FAKE_NSOCK 16
#define LOOP_FAKE_LSOCK 1 /* the listener loop_listen returns */
#define LOOP_FAKE_BUF 65536u
#define LOOP_FAKE_TIMERS 64u

/* One socket.  The test owns `in` (appends), the application `out` (the
 * fake appends what it writes); the flags are the fake's. */
struct loop_fake_sock {
	bool open;           /* listening, or accepted and not yet closed */
	bool shut;           /* loop_shutdown was called */
	bool eof;            /* the client closed: reads return 0 once in[] is drained */
	bool out_discard;    /* keep no output, count it only (a benchmark's endless stream) */
	loop_event_fn fn;    /* from loop_watch; NULL when closed or never watched */
	void *user;
	size_t in_len, in_pos; /* in[in_pos, in_len) not yet read */
	size_t out_len;      /* out[0, out_len) written */
	uint64_t out_bytes;  /* bytes writev accepted, kept or not */
	int writes;          /* writev calls that returned >= 0 */
	int reads;           /* read calls */
	int reads_empty;     /* of those, -SK_EAGAIN (a read the edge contract could save) */
	size_t write_room;   /* bytes writev still accepts (SIZE_MAX: no limit) */
	uint16_t connect_port; /* an active open: the port it was asked for */
	char *in;            /* LOOP_FAKE_BUF bytes in the fake's in_buf */
	/* Every byte written, in order, with a NUL behind it so a test may
	 * search it with str* functions (LOOP_FAKE_BUF + 1 bytes in out_buf). */
	char *out;
};

struct loop_fake {
	struct loop base;
	sk_time_ns now;      /* loop_now(); moved by loop_fake_advance */
	struct timerq tq;
	struct loop_timer *heap[LOOP_FAKE_TIMERS];
	int pending[LOOP_FAKE_NSOCK]; /* connected, waiting in accept, oldest first */
	int npending;
	int connect_next;    /* the socket the next loop_connect gets; 0: refused */
	struct loop_fake_sock s[LOOP_FAKE_NSOCK];
	/* The sockets' bytes, apart from their small state above, so the
	 * state of all of them shares a few cache lines. */
	char in_buf[LOOP_FAKE_NSOCK][LOOP_FAKE_BUF];
	char out_buf[LOOP_FAKE_NSOCK][LOOP_FAKE_BUF + 1];
};

/* A fresh fake whose clock reads `now`. */
void loop_fake_init(struct loop_fake *f, sk_time_ns now);

/* A client connects on socket s (2 .. LOOP_FAKE_NSOCK-1; its state is
 * reset): queued for accept, and the listener's callback runs (if it is
 * watched).  Returns s. */
int loop_fake_connect(struct loop_fake *f, int s);

/* Append a client's bytes to s's input, with no event. */
void loop_fake_push(struct loop_fake *f, int s, const void *data, size_t len);
/* Run s's callback with `events` if it is watched (a READ after a push, a
 * WRITE after write_room was raised, ...). */
void loop_fake_event(struct loop_fake *f, int s, unsigned events);
/* loop_fake_push, then LOOP_EV_READ. */
void loop_fake_send(struct loop_fake *f, int s, const void *data, size_t len);
/* The client closes its side: reads return 0 after the input, LOOP_EV_READ. */
void loop_fake_eof(struct loop_fake *f, int s);

/* Time moves by dt; every timer due by then fires, in deadline order. */
void loop_fake_advance(struct loop_fake *f, sk_time_ns dt);

#endif
