/* emit.c — see emit.h. */
#include "emit.h"

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* A cursor that never writes past its end. */
struct out {
	uint8_t *p, *end;
};

static inline void put(struct out *o, const void *s, size_t n)
{
	if ((size_t)(o->end - o->p) < n) {
		o->p = o->end; /* the callers size their buffers; never reached */
		return;
	}
	sk_memcpy(o->p, s, n);
	o->p += n;
}

static inline void put_str(struct out *o, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	put(o, s, n);
}

static void put_u64(struct out *o, uint64_t v)
{
	char tmp[20];
	int i = 20;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, tmp + i, (size_t)(20 - i));
}

static void put_u3(struct out *o, int status)
{
	char s[3] = {(char)('0' + status / 100), (char)('0' + status / 10 % 10),
		     (char)('0' + status % 10)};
	put(o, s, 3);
}

size_t http_emit_head(uint8_t *buf, size_t cap, int status, const char *date29,
		      const char *ctype, uint64_t clen, enum http_conn_hdr ch, const char *extra)
{
	struct out o = {buf, buf + cap};
	put_str(&o, "HTTP/1.1 ");
	put_u3(&o, status);
	put(&o, " ", 1);
	put_str(&o, http_reason(status));
	put_str(&o, "\r\nServer: skiff\r\nDate: ");
	put(&o, date29, 29);
	put_str(&o, "\r\nContent-Type: ");
	put_str(&o, ctype);
	put_str(&o, "\r\nContent-Length: ");
	put_u64(&o, clen);
	if (ch == HTTP_CH_CLOSE)
		put_str(&o, "\r\nConnection: close");
	else if (ch == HTTP_CH_KEEP_ALIVE)
		put_str(&o, "\r\nConnection: keep-alive");
	put_str(&o, "\r\n");
	if (extra)
		put_str(&o, extra);
	put_str(&o, "\r\n");
	return (size_t)(o.p - buf);
}

size_t http_emit_error_body(uint8_t *buf, size_t cap, int status)
{
	struct out o = {buf, buf + cap};
	put_u3(&o, status);
	put(&o, " ", 1);
	put_str(&o, http_reason(status));
	put(&o, "\n", 1);
	return (size_t)(o.p - buf);
}
