/* emit.c — see emit.h. */
#include "emit.h"

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 412: return "Precondition Failed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 416: return "Range Not Satisfiable";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	/* Statuses only applications send (http/app.h). */
	case 302: return "Found";
	case 303: return "See Other";
	case 307: return "Temporary Redirect";
	case 401: return "Unauthorized";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 504: return "Gateway Timeout";
	case 507: return "Insufficient Storage";
	default: return "Error";
	}
}

void http_out_u64(struct http_out *o, uint64_t v)
{
	char tmp[20];
	int i = 20;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	http_out_mem(o, tmp + i, (size_t)(20 - i));
}

void http_out_hex(struct http_out *o, uint64_t v)
{
	char tmp[16];
	int i = 16;
	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	http_out_mem(o, tmp + i, (size_t)(16 - i));
}

static void put_u3(struct http_out *o, int status)
{
	char s[3] = {(char)('0' + status / 100), (char)('0' + status / 10 % 10),
		     (char)('0' + status % 10)};
	http_out_mem(o, s, 3);
}

void http_emit_status(struct http_out *o, int status, const char *date29)
{
	http_out_str(o, "HTTP/1.1 ");
	put_u3(o, status);
	http_out_mem(o, " ", 1);
	http_out_str(o, http_reason(status));
	http_out_str(o, "\r\nServer: skiff\r\nDate: ");
	http_out_mem(o, date29, 29);
	http_out_str(o, "\r\n");
}

size_t http_emit_head(uint8_t *buf, size_t cap, int status, const char *date29,
		      const char *ctype, uint64_t clen, enum http_conn_hdr ch, const char *extra)
{
	struct http_out o = {buf, buf + cap};
	http_emit_status(&o, status, date29);
	http_out_str(&o, "Content-Type: ");
	http_out_str(&o, ctype);
	http_out_str(&o, "\r\nContent-Length: ");
	http_out_u64(&o, clen);
	if (ch == HTTP_CH_CLOSE)
		http_out_str(&o, "\r\nConnection: close");
	else if (ch == HTTP_CH_KEEP_ALIVE)
		http_out_str(&o, "\r\nConnection: keep-alive");
	http_out_str(&o, "\r\n");
	if (extra)
		http_out_str(&o, extra);
	http_out_str(&o, "\r\n");
	return (size_t)(o.p - buf);
}

size_t http_emit_error_body(uint8_t *buf, size_t cap, int status)
{
	struct http_out o = {buf, buf + cap};
	put_u3(&o, status);
	http_out_mem(&o, " ", 1);
	http_out_str(&o, http_reason(status));
	http_out_mem(&o, "\n", 1);
	return (size_t)(o.p - buf);
}
