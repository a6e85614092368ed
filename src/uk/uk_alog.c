/* uk_alog.c — see uk_alog.h. */
#include "uk_alog.h"

#include "../plat/kvm/kvm.h"

static void send_batch(struct uk_alog *a)
{
	if (!a->len)
		return;
	sk_time_ns now = loop_now(a->loop);
	if (!a->udp) {
		console_write((const char *)a->buf, a->len);
	} else {
		int r = udp_sendto(a->ifc, now, UK_ALOG_SPORT, a->dst, a->dport, a->buf, a->len);
		if (r < 0) {
			a->dropped += a->held;
			if (sk_log_on(a->elog, SK_LOG_WARN)) {
				char m[128];
				int n = ksnprintf(m, sizeof(m),
						  "access-log: datagram to the sink refused (%d): %lu records lost",
						  r, a->held);
				sk_log_msg(a->elog, now, SK_LOG_WARN, "access_log.udp", m,
					   n > 0 ? (size_t)n : 0);
			}
			a->len = 0;
			a->held = 0;
			return;
		}
	}
	a->writes++;
	a->bytes += a->len;
	a->len = 0;
	a->held = 0;
}

static void on_timer(struct loop_timer *t, sk_time_ns now)
{
	(void)now;
	struct uk_alog *a = (struct uk_alog *)(void *)((char *)t - offsetof(struct uk_alog, timer));
	send_batch(a);
}

void uk_alog_init(struct uk_alog *a, enum http_access_fmt fmt, bool udp, uint32_t dst,
		  uint16_t dport, struct iface *ifc, struct loop *loop, struct sk_log *elog,
		  uint64_t (*wall)(sk_time_ns now))
{
	sk_memset(a, 0, sizeof(*a));
	a->fmt = fmt;
	a->udp = udp;
	a->dst = dst;
	a->dport = dport;
	a->ifc = ifc;
	a->loop = loop;
	a->elog = elog;
	a->wall = wall;
	a->cap = udp ? UK_ALOG_DGRAM : UK_ALOG_CONSOLE;
	a->timer.fn = on_timer;
	a->sec = UINT64_MAX;
}

void uk_alog_record(void *ctx, const struct http_access *rec)
{
	struct uk_alog *a = ctx;
	sk_time_ns now = loop_now(a->loop);
	uint64_t sec = a->wall(now);
	if (sec != a->sec) {
		a->sec = sec;
		http_access_time(sec, 0, a->fmt, a->time);
	}
	size_t n = http_access_format(a->rec, sizeof(a->rec), rec, a->fmt, a->time);
	if (!n)
		return;
	if (n > a->cap) { /* alone, cut, still one line */
		n = a->cap;
		a->rec[n - 1] = '\n';
		a->cut++;
	}
	if (a->len + n > a->cap)
		send_batch(a);
	if (!a->len) {
		if (loop_timer_armed(&a->timer))
			loop_timer_cancel(a->loop, &a->timer);
		loop_timer_set(a->loop, &a->timer, now + UK_ALOG_FLUSH_NS);
	}
	sk_memcpy(a->buf + a->len, a->rec, n);
	a->len += n;
	a->held++;
	a->records++;
}

void uk_alog_flush(struct uk_alog *a)
{
	if (loop_timer_armed(&a->timer))
		loop_timer_cancel(a->loop, &a->timer);
	send_batch(a);
}

void uk_alog_stats(const struct uk_alog *a, void (*fn)(void *ctx, const char *name, uint64_t v),
		   void *ctx)
{
	fn(ctx, "access_log.records", a->records);
	fn(ctx, "access_log.dropped", a->dropped);
	fn(ctx, "access_log.writes", a->writes);
	fn(ctx, "access_log.bytes", a->bytes);
	fn(ctx, "access_log.cut", a->cut);
}
