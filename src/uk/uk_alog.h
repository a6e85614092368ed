/* uk_alog.h — the unikernel's access log (access-log=console or
 * access-log=udp:ADDR:PORT): the records of http/access.h, the same lines
 * as `skiff serve --access-log`, to the serial console or in UDP
 * datagrams.
 *
 * Batching: records are appended to one buffer and written when the next
 * would not fit, and at most UK_ALOG_FLUSH_NS after the first record of a
 * batch (a loop timer), and at exit.  A datagram holds whole lines only
 * (at most UK_ALOG_DGRAM bytes: one Ethernet frame, so it is never
 * fragmented; a receiver splits it on '\n'); a record longer than that
 * goes alone, cut to fit and still ending in '\n' (access_log.cut).  A
 * datagram the interface refuses (no route, queue full) is lost and its
 * records counted in access_log.dropped, with a warning in the error log
 * (rate-limited): the server is never held up by its log.  The console
 * costs a port write per byte (a VM exit each): it is for a few requests
 * and for debugging; under load use UDP. */
#ifndef APPS_UK_ALOG_H
#define APPS_UK_ALOG_H

#include "../base/log.h"
#include "../http/access.h"
#include "../loop/loop.h"
#include "../net/iface.h"

#define UK_ALOG_DGRAM 1400u
#define UK_ALOG_CONSOLE 16384u
#define UK_ALOG_FLUSH_NS SK_NS_PER_S
#define UK_ALOG_SPORT 40514 /* the datagrams' source port */

struct uk_alog {
	enum http_access_fmt fmt;
	bool udp;                 /* else the console */
	uint32_t dst;             /* udp: the sink, host order */
	uint16_t dport;
	struct iface *ifc;        /* udp */
	struct loop *loop;        /* its clock and the flush timer */
	struct sk_log *elog;      /* warnings; may be NULL */
	uint64_t (*wall)(sk_time_ns now); /* Unix seconds at now */
	/* Armed iff len > 0. */
	struct loop_timer timer;
	/* buf[0, len): whole lines not yet written (at most cap bytes). */
	uint8_t buf[UK_ALOG_CONSOLE];
	size_t len, cap;
	uint64_t held;            /* records in buf */
	uint64_t sec;             /* the second `time` holds */
	char time[HTTP_ACCESS_TIME_MAX];
	uint8_t rec[HTTP_ACCESS_REC_MAX]; /* one record, formatted */
	/* counters */
	uint64_t records, dropped, writes, bytes, cut;
};

/* udp: dst:dport over ifc; else the console. */
void uk_alog_init(struct uk_alog *a, enum http_access_fmt fmt, bool udp, uint32_t dst,
		  uint16_t dport, struct iface *ifc, struct loop *loop, struct sk_log *elog,
		  uint64_t (*wall)(sk_time_ns now));
/* http_access_fn (http/app.h): ctx is the struct uk_alog. */
void uk_alog_record(void *ctx, const struct http_access *rec);
/* Write what is buffered now (at exit). */
void uk_alog_flush(struct uk_alog *a);
/* access_log.records, .dropped, .writes, .bytes, .cut */
void uk_alog_stats(const struct uk_alog *a, void (*fn)(void *ctx, const char *name, uint64_t v),
		   void *ctx);

#endif
