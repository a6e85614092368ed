/* tcp.h — skiff's TCP engine and the socket API applications use.
 *
 * A pure engine: it never blocks, reads no clock and does no I/O.  Time comes
 * in as `now`; segments go out through cfg.ip_output; everything lives in an
 * arena given at init (a socket pool whose every slot owns a send and a
 * receive ring, a 4-tuple hash table and a deadline heap).
 *
 * Call order (the loop drives it):
 *   tcp_config_default(&cfg); set local_ip, seed, ip_output...
 *   tcp_stack_init(st, arena, tcp_arena_size(&cfg), &cfg, now)
 *   each turn: tcp_input(...) for every TCP datagram of the rx batch;
 *              tcp_poll(now)  -- runs due timers and sends what the batch
 *                                and the application queued (ACKs, data);
 *              tcp_events(...) -- hand readiness to the application;
 *              park until min(tcp_next_deadline(), iface's, a frame).
 * tcp_input never sends on behalf of a socket, so one rx batch produces one
 * ACK per connection; only stateless replies (RST to a closed port, SYN
 * cookies) leave from tcp_input directly.
 *
 * Work per call: tcp_input is O(1) (hash demux); tcp_poll visits only the
 * sockets whose deadline came due and those on the egress list (queued
 * output); idle sockets are never visited (stat "sockets_visited").
 *
 * Sockets are small integers (like fds).  Readiness is edge-triggered (like
 * EPOLLET): when a socket gains readable data, a FIN, an error, or (after a
 * send came up short) write space, it is put once on the stack's ready list;
 * tcp_events() pops it with the accumulated event bits.  Read/write until
 * -SK_EAGAIN.  A listener is re-queued after tcp_accept while connections
 * still wait.  An app never walks all sockets; the engine never walks them
 * either (see "sockets_visited").
 *
 * Semantics a second (Linux sockets) backend must match: non-blocking
 * everything; recv returns 0 at EOF for ever after; the first recv/send
 * after a reset/timeout returns the error once (-SK_ECONNRESET,
 * -SK_ETIMEDOUT, -SK_ECONNREFUSED); send after shutdown is -SK_EPIPE;
 * close with unread data sends RST (as Linux); listen backlog default 1024. 
 */
#ifndef NET_TCP_H
#define NET_TCP_H

#include "../base/sk.h"
#include "../base/sk_addr.h"
#include "../base/sk_err.h"

struct tcp_stack;

/* Both families go through one engine: a connection's addresses are struct
 * sk_addr (base/sk_addr.h: IPv4 mapped, IPv6 as is), one demux, one hash.
 * Only the edges are per family: tcp_input / tcp_input6 in, ip_output /
 * ip6_output out, so the IPv4 path hands the IP layer what it always did. */
typedef int (*tcp_ip_output_fn)(void *ctx, sk_time_ns now, uint32_t src, uint32_t dst,
				const uint8_t *seg, size_t len);
/* An IPv6 segment from src (one of ours) to dst. */
typedef int (*tcp_ip6_output_fn)(void *ctx, sk_time_ns now, const struct sk_addr *src,
				 const struct sk_addr *dst, const uint8_t *seg, size_t len);
/* The source address an active open to the IPv6 dst uses; false: none
 * usable (yet: DAD may still be running). */
typedef bool (*tcp_src6_fn)(void *ctx, const struct sk_addr *dst, struct sk_addr *src);

/* In-place output (tcp_iface.c): the IP layer reserves a frame for a
 * segment of l4_len bytes in the device's tx ring and says where its bytes
 * go -- the TCP header and the first payload bytes at buf[0], the rest on
 * through buf[1..nbuf-1], cap[i] bytes each -- so a segment is written
 * once, straight from the send buffer into the frame, its checksum summed
 * in the same pass (wire/csum.h csum_copy) or left to the device.
 *   offload false: one plain frame of at most one MTU.
 *   offload true:  an offload frame (ring.h RING_SLOT_VNET): TCP leaves the
 *                  checksum to the device (the field holds the pseudo
 *                  header's sum), and a frame longer than one segment is a
 *                  TSO frame the device cuts at gso_size.  -2: not
 *                  possible now (no such offload, a next hop still being
 *                  resolved): TCP sends a plain frame instead.
 * begin returns 0 or < 0 as ip_output (nothing reserved then); after a 0
 * TCP fills the bytes, sets hlen and gso_size, and calls finish once. */
#define TCP_TX_BUFS 40
#define TCP_TX_PRIV 160
struct tcp_tx_frame {
	uint8_t *buf[TCP_TX_BUFS];
	uint32_t cap[TCP_TX_BUFS];
	uint32_t nbuf;
	bool offload;        /* as asked */
	uint16_t hlen;       /* (TCP) the TCP header's bytes */
	uint16_t gso_size;   /* (TCP) payload bytes per segment; 0: one segment */
	_Alignas(8) uint8_t priv[TCP_TX_PRIV]; /* the IP layer's, between the calls */
};
typedef int (*tcp_tx_begin_fn)(void *ctx, sk_time_ns now, const struct sk_addr *src,
			       const struct sk_addr *dst, uint32_t l4_len, bool offload,
			       struct tcp_tx_frame *f);
typedef void (*tcp_tx_finish_fn)(void *ctx, sk_time_ns now, struct tcp_tx_frame *f,
				 uint32_t l4_len);

struct tcp_config {
	uint32_t local_ip;        /* host order; source of active opens */
	uint32_t max_sockets;     /* pool: listeners, SYN_RECEIVED, open, TIME_WAIT (2048) */
	uint32_t sndbuf, rcvbuf;  /* bytes per buffer (slot size; setopt may lower) (128 KiB) */
	/* Buffers in each of the send and receive pools (0: max_sockets).  A
	 * socket holds a buffer only while data is queued in that direction;
	 * fewer than max_sockets saves arena but lets a busy moment run out:
	 * a send then returns -SK_EAGAIN (TCP_EV_WRITE when one frees) and an
	 * arriving segment is dropped (tcp_drop_no_memory; the peer resends). */
	uint32_t bufs;
	/* Buffers sized by the path (0: off, every socket keeps sndbuf /
	 * rcvbuf).  A busy socket's buffer grows past its base up to buf_max:
	 * the receive buffer to twice what the app read in a round trip, more
	 * while that grows (dynamic right-sizing), the send buffer to twice what may be in
	 * flight (cwnd, ssthresh, a paced sender's rate x srtt).  A grown
	 * buffer is one of buf_slots slots of buf_max bytes (0: mem_high /
	 * 256 KiB, at least 2, at most max_sockets), held only while data is
	 * queued.  The bytes held in slots are budgeted, as Linux's tcp_mem:
	 * above mem_pressure (0: 3/4 of mem_high) nothing grows and buffers
	 * shrink back to the base as they drain, until the use is below
	 * mem_low (0: mem_high / 2); at mem_high a slot is taken only to keep
	 * a window already advertised.  The window scale is chosen from
	 * buf_max. */
	uint32_t buf_max, buf_slots;
	uint32_t mem_low, mem_pressure, mem_high;
	uint16_t mtu;             /* IP MTU: our MSS is mtu - 40 (IPv4), mtu - 60 (IPv6) */
	uint16_t eph_lo, eph_hi;  /* ephemeral port range for connect */
	/* Source-port steering (docs/smp.md, wire/flow_hash.h): with
	 * steer_workers > 1 this engine is worker steer_self of that many,
	 * whose device queue receives exactly the flows whose flow hash
	 * picks it, so an active open takes only a port whose 4-tuple
	 * hashes to steer_self: the answers come back here.  0 or 1: any
	 * free port. */
	uint16_t steer_workers, steer_self;
	uint64_t seed[2];         /* random key: hash, ISN, cookies, timestamps */
	uint32_t msl_ms;          /* TIME_WAIT lasts 2*msl (default 30 s -> 60 s, as Linux) */
	uint32_t rto_init_ms;     /* 1000 (RFC 6298 2.1) */
	uint32_t rto_min_ms;      /* 200: RTO >= srtt + this, like Linux (RFC 6298: 1 s; tcp_rtt_sample) */
	uint32_t rto_max_ms;      /* 60000 */
	uint32_t delack_ms;       /* 40 */
	uint32_t user_timeout_ms; /* give up on unacknowledged data after this (300 s) */
	uint32_t fin2_timeout_ms; /* orphaned FIN_WAIT_2 lifetime (60 s) */
	uint32_t challenge_ack_per_s; /* RFC 5961 7: global limit (1000) */
	uint8_t syn_retries;      /* 6 */
	uint8_t max_retries;      /* 15 */
	bool syn_cookies;         /* true: cookies when the queues or the pool are full */
	uint8_t cc;               /* enum tcp_cc_algo (TCP_CC_CUBIC) */
	tcp_ip_output_fn ip_output;
	/* IPv6 (optional: NULL and a v6 segment is counted in out_err; no
	 * v6 segment comes in unless the IP layer calls tcp_input6). */
	tcp_ip6_output_fn ip6_output;
	tcp_src6_fn src6;         /* for tcp_connect_addr to IPv6; NULL: none */
	void *out_ctx;            /* for all of these */
	/* In-place output (optional; NULL: ip_output from a scratch segment). */
	tcp_tx_begin_fn tx_begin;
	tcp_tx_finish_fn tx_finish;
	/* What the device does, through tx_begin's offload frames: tx_csum,
	 * it finishes checksums; tso_max4 / tso_max6, the largest TSO frame
	 * as TCP bytes (header and payload; 0: no TSO for that family). */
	bool tx_csum;
	uint32_t tso_max4, tso_max6;
};

/* Congestion control (tcp_cc.h): CUBIC (RFC 9438, with HyStart++, RFC
 * 9406) by default; NewReno (RFC 5681/6582) or BBR v1 by choice.  BBR
 * paces at its model's rate, the others at the window's in slow start. */
enum tcp_cc_algo { TCP_CC_CUBIC, TCP_CC_NEWRENO, TCP_CC_BBR, TCP_CC_COUNT };
/* "cubic" / "newreno" / "bbr" -> the enum, or -1. */
int tcp_cc_parse(const char *name);
const char *tcp_cc_name(unsigned algo);

void tcp_config_default(struct tcp_config *cfg);
size_t tcp_arena_size(const struct tcp_config *cfg);

/* Returns 0, or -SK_EINVAL (bad config) / -SK_ENOMEM (arena too small). */
int tcp_stack_init(struct tcp_stack *st, void *arena, size_t arena_size,
		   const struct tcp_config *cfg, sk_time_ns now);

/* ---- the engine side (called by the loop / the IP layer) ---- */

/* One TCP segment of an IPv4 datagram the IP layer validated. */
void tcp_input(struct tcp_stack *st, sk_time_ns now, uint32_t src, uint32_t dst,
	       const uint8_t *seg, size_t len);
/* One TCP segment of an IPv6 packet the IP layer validated (dst one of our
 * unicast addresses).  A v4-mapped source is dropped (drop_parse_other):
 * it would alias an IPv4 peer (base/sk_addr.h). */
void tcp_input6(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *src,
		const struct sk_addr *dst, const uint8_t *seg, size_t len);

/* Run due timers, then send for every socket on the egress list. */
void tcp_poll(struct tcp_stack *st, sk_time_ns now);

/* Earliest time tcp_poll has work: 0 if output is queued, SK_TIME_NEVER if
 * nothing is scheduled.  O(1). */
sk_time_ns tcp_next_deadline(const struct tcp_stack *st);

/* ICMP error about a datagram we sent (iface's icmp-error handler, when
 * e->proto is TCP): frag-needed lowers the path MSS and resends; port or
 * protocol unreachable aborts a connection in SYN_SENT (-SK_ECONNREFUSED);
 * anything else is a soft error (counted; the timers decide).  Ignored
 * unless the quoted sequence number is in flight (RFC 5927). */
struct icmp_error;
void tcp_icmp_error(struct tcp_stack *st, sk_time_ns now, const struct icmp_error *e);
/* The same for ICMPv6 (iface's icmp6-error handler): Packet Too Big lowers
 * the connection's MSS to MTU - 60 and resends what is in flight, unless
 * the MTU is under 1280 (RFC 8200 5, RFC 8201 4) or not below the current
 * path (pmtu_ignored); port unreachable or administratively prohibited
 * aborts a connection in SYN_SENT; the rest are soft errors.  Ignored
 * (icmp_ignored) unless it quotes a connection we have and a sequence
 * number in flight. */
struct icmp6_error;
void tcp_icmp6_error(struct tcp_stack *st, sk_time_ns now, const struct icmp6_error *e);

/* Counters as "name value" lines (same shape as iface_stats). */
typedef void (*tcp_stat_fn)(void *ctx, const char *name, uint64_t value);
void tcp_stats(const struct tcp_stack *st, tcp_stat_fn fn, void *ctx);

/* ---- the socket API (called by applications) ---- */

/* Listen on `port` (any local address of either family).  backlog <= 0 means the default
 * (1024); it bounds both the SYN queue and the accept queue; beyond it
 * SYNs are answered with cookies.  Returns a socket or a negative code. */
int tcp_listen(struct tcp_stack *st, uint16_t port, int backlog);

/* Next established connection of a listener, or -SK_EAGAIN. */
int tcp_accept(struct tcp_stack *st, int lsock, struct sk_addr *raddr, uint16_t *rport);

/* Non-blocking active open to dst, IPv4 (from cfg.local_ip) or IPv6 (from
 * the address cfg.src6 picks; -SK_EADDRNOTAVAIL if none).  Returns the
 * socket; it reports TCP_EV_WRITE when established, TCP_EV_ERROR on
 * failure.  tcp_connect is the IPv4 shorthand. */
int tcp_connect_addr(struct tcp_stack *st, sk_time_ns now, const struct sk_addr *dst,
		     uint16_t dport);
int tcp_connect(struct tcp_stack *st, sk_time_ns now, uint32_t dst, uint16_t dport);

/* Bytes read (> 0), 0 at end of stream, or -SK_EAGAIN / -SK_ECONNRESET /
 * -SK_ETIMEDOUT / -SK_ENOTCONN ... */
int tcp_recv(struct tcp_stack *st, int sock, void *buf, size_t len);

struct tcp_iov {
	const void *base;
	size_t len;
};
/* Copy as much as fits into the send buffer; bytes accepted or -SK_EAGAIN,
 * -SK_EPIPE (after shutdown), -SK_ENOTCONN ...  Slices are queued as one
 * stream, so slices that fit in one segment leave in one segment. */
int tcp_send(struct tcp_stack *st, int sock, const void *buf, size_t len);
int tcp_sendv(struct tcp_stack *st, int sock, const struct tcp_iov *iov, int iovcnt);
/* Queue len bytes at p BY REFERENCE: they take send-buffer room as copied
 * bytes do, but segments are built from p itself (one copy, into the
 * frame, instead of two).  The caller promises the bytes stay valid and
 * unchanged until tcp_refs_held() is 0 (retransmissions read them again;
 * a socket closed with them unsent still sends them in the background).
 * Returns the bytes accepted, or what tcp_sendv returns; past TCP_REFS
 * ranges that cannot be joined to the last one, the bytes are copied
 * (counted in send_ref_copies). */
int tcp_send_ref(struct tcp_stack *st, int sock, const void *p, size_t len);
/* Bytes queued by reference that no ACK or socket end has let go yet. */
uint64_t tcp_refs_held(const struct tcp_stack *st);

/* Free bytes in the send buffer (an echo can recv exactly that much).  When
 * 0, TCP_EV_WRITE follows once space frees up. */
int tcp_send_space(struct tcp_stack *st, int sock);

#define TCP_SHUT_WR 1
/* Send FIN after the queued data (half-close). */
int tcp_shutdown(struct tcp_stack *st, int sock, int how);

/* Give the socket back: graceful close (FIN after queued data; RST if
 * unread data remains, as Linux does).  The engine finishes the connection
 * on its own; the id must not be used again. */
int tcp_close(struct tcp_stack *st, sk_time_ns now, int sock);
/* Send RST and free at once. */
int tcp_abort(struct tcp_stack *st, sk_time_ns now, int sock);

enum tcp_sockopt {
	TCP_SO_NODELAY,       /* 1: Nagle off */
	TCP_SO_KEEPALIVE,     /* 1: on (default off) */
	TCP_SO_KEEPIDLE_MS,   /* 7200000 */
	TCP_SO_KEEPINTVL_MS,  /* 75000 */
	TCP_SO_KEEPCNT,       /* 9 */
	TCP_SO_SNDBUF,        /* bytes, <= cfg.sndbuf */
	TCP_SO_RCVBUF,        /* bytes, <= cfg.rcvbuf, before the handshake */
	TCP_SO_USER_TIMEOUT_MS,
};
int tcp_setsockopt(struct tcp_stack *st, int sock, enum tcp_sockopt opt, int value);
int tcp_getsockopt(const struct tcp_stack *st, int sock, enum tcp_sockopt opt);

/* Readiness. */
#define TCP_EV_READ 0x01   /* data or end of stream */
#define TCP_EV_WRITE 0x02  /* connected, or send space freed */
#define TCP_EV_ACCEPT 0x04 /* listener: a connection waits in tcp_accept */
#define TCP_EV_ERROR 0x08  /* reset, refused, timed out: recv/send return it */
struct tcp_event {
	int sock;
	unsigned events;
	void *user;
};
/* Pop up to `max` ready sockets.  Returns how many were stored. */
int tcp_events(struct tcp_stack *st, struct tcp_event *ev, int max);
void tcp_set_user(struct tcp_stack *st, int sock, void *user);

/* Introspection for tests, tools and `ss`-like output. */
enum tcp_state {
	TCP_CLOSED, TCP_LISTEN, TCP_SYN_SENT, TCP_SYN_RECEIVED, TCP_ESTABLISHED,
	TCP_FIN_WAIT_1, TCP_FIN_WAIT_2, TCP_CLOSE_WAIT, TCP_CLOSING, TCP_LAST_ACK,
	TCP_TIME_WAIT,
};
struct tcp_info {
	enum tcp_state state;
	struct sk_addr laddr, raddr;
	uint16_t lport, rport;
	uint16_t snd_mss;      /* payload of a full segment, options excluded */
	uint8_t snd_wscale, rcv_wscale;
	bool ts, sack, ws;
	uint32_t cwnd, ssthresh, snd_wnd, rcv_wnd;
	uint32_t srtt_us, rto_ms;
	uint32_t unacked, unsent, unread;
	uint64_t retransmits;
	uint32_t pipe;        /* RFC 6675's pipe: bytes thought in flight */
	uint32_t sndbuf;      /* the send buffer's usable size now (it grows) */
	uint64_t pacing_rate; /* bytes/s; 0: not paced */
	uint8_t limit;        /* enum tcp_limit: what held the sender last */
	bool recovery;        /* in a loss recovery episode (fast recovery) */
	/* The congestion control's model, if it has one (BBR): its state
	 * ("startup", "drain", "probe_bw", "probe_rtt") and its bandwidth
	 * estimate in bytes/s; NULL and 0 otherwise. */
	const char *cc_mode;
	uint64_t cc_bw;
};
int tcp_info(const struct tcp_stack *st, int sock, struct tcp_info *info);
/* Sockets that still owe the peer something (data or a FIN not yet
 * acknowledged, a handshake or close in progress): SYN_RECEIVED,
 * ESTABLISHED, FIN_WAIT_1, CLOSE_WAIT, CLOSING, LAST_ACK.  A graceful
 * drain waits for 0 before the process (or guest) goes.  O(max_sockets). */
uint32_t tcp_unfinished(const struct tcp_stack *st);
const char *tcp_state_name(enum tcp_state s);

/* What held a sender at its last output, as Linux's TCP_INFO chronographs
 * (tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited) count it, with
 * skiff's window and pacing apart.  Busy: something unacked or unsent.
 * Within busy: data waits on the peer's window (RWND), on cwnd or the
 * recovery's budget (CWND), or on the pacing release time (PACE);
 * everything queued is out and the app waits for room in the send buffer
 * (SNDBUF); or none of these (BUSY: in flight, the app has no more yet).
 * The stack's counters busy_us and rwnd_, sndbuf_, cwnd_, pace_limited_us
 * sum the time each lasted over its connections, up to each one's last
 * output (71 minutes or more without one count modulo 2^32 us; a reset
 * connection's last stretch is not counted). */
enum tcp_limit { TCP_LIM_NONE, TCP_LIM_BUSY, TCP_LIM_RWND, TCP_LIM_SNDBUF, TCP_LIM_CWND, TCP_LIM_PACE };
const char *tcp_limit_name(enum tcp_limit l);

/* Check every invariant of every socket (O(sockets); tests and fuzzers).
 * Returns 0, or minus the source line of the first broken one. */
int tcp_check(const struct tcp_stack *st);

#include "tcp_types.h"

#endif
