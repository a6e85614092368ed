/* access.c — see access.h.  A record is written with a plain cursor: the
 * caller's cap is checked once against the bound HTTP_ACCESS_REC_MAX, so
 * no write below needs a check of its own. */
#include "access.h"
#include "../wire/ipv6.h"

_Static_assert(HTTP_ACCESS_REC_MAX >=
		       /* each logged byte at its widest (\u00HH), three cut marks */
		       6u * (HTTP_ACCESS_LINE_MAX + 2u * HTTP_ACCESS_FIELD_MAX) + 9u +
			       /* the time, an address, two ports/statuses, a u64, the keys */
			       HTTP_ACCESS_TIME_MAX + 15u + 5u + 5u + 20u +
			       sizeof("{\"time\":\"\",\"remote_addr\":\"\",\"remote_port\":,"
				      "\"request\":\"\",\"status\":,\"body_bytes_sent\":,"
				      "\"http_referer\":\"\",\"http_user_agent\":\"\"}\n"),
	       "HTTP_ACCESS_REC_MAX bounds the longest JSON record");

static const char hex_upper[] = "0123456789ABCDEF";
static const char hex_lower[] = "0123456789abcdef";

static char *put_mem(char *p, const char *s, size_t n)
{
	sk_memcpy(p, s, n);
	return p + n;
}

/* A literal: its length is known when compiled. */
#define PUT_LIT(p, lit) put_mem((p), (lit), sizeof(lit) - 1)

/* Bytes that both formats copy as they are: printable ASCII but '"' and
 * '\\'.  Runs of them (nearly every byte of a real request) are copied
 * whole; only the others go through the escaping below. */
static bool plain(uint8_t b)
{
	return b >= 0x20 && b < 0x7f && b != '"' && b != '\\';
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Two digits, zero-padded. */
static char *put_2(char *p, unsigned v)
{
	*p++ = (char)('0' + v / 10 % 10);
	*p++ = (char)('0' + v % 10);
	return p;
}

static char *put_ipv4(char *p, uint32_t a)
{
	for (int i = 3; i >= 0; i--) {
		p = put_u64(p, (a >> (8 * i)) & 0xff);
		if (i)
			*p++ = '.';
	}
	return p;
}

/* Bare, as nginx's $remote_addr writes it (no brackets): log parsers
 * of the combined format expect that. */
static char *put_ipv6(char *p, const uint8_t a[16])
{
	return p + ipv6_format(a, p);
}

static char *put_addr(char *p, const struct sk_addr *a)
{
	return sk_addr_is_v4(a) ? put_ipv4(p, sk_addr_ip4(a)) : put_ipv6(p, a->b);
}

/* A client's bytes inside "...", escaped for fmt, cut at max. */
static char *put_field(char *p, struct http_access_str s, uint32_t max, enum http_access_fmt fmt)
{
	*p++ = '"';
	if (fmt == HTTP_ACCESS_COMBINED && (!s.p || !s.len)) {
		*p++ = '-';
		*p++ = '"';
		return p;
	}
	uint32_t n = s.p ? s.len : 0;
	bool cut = n > max;
	if (cut)
		n = max;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t run = i;
		while (run < n && plain(s.p[run]))
			run++;
		if (run > i) {
			p = put_mem(p, (const char *)s.p + i, run - i);
			i = run;
			if (i == n)
				break;
		}
		uint8_t b = s.p[i];
		if (fmt == HTTP_ACCESS_COMBINED) {
			if (b == '"' || b == '\\' || b < 0x20 || b >= 0x7f) {
				*p++ = '\\';
				*p++ = 'x';
				*p++ = hex_upper[b >> 4];
				*p++ = hex_upper[b & 15];
			} else {
				*p++ = (char)b;
			}
			continue;
		}
		if (b == '"' || b == '\\') {
			*p++ = '\\';
			*p++ = (char)b;
		} else if (b == '\n') {
			p = put_mem(p, "\\n", 2);
		} else if (b == '\r') {
			p = put_mem(p, "\\r", 2);
		} else if (b == '\t') {
			p = put_mem(p, "\\t", 2);
		} else if (b < 0x20 || b >= 0x7f) {
			p = put_mem(p, "\\u00", 4);
			*p++ = hex_lower[b >> 4];
			*p++ = hex_lower[b & 15];
		} else {
			*p++ = (char)b;
		}
	}
	if (cut)
		p = put_mem(p, "...", 3);
	*p++ = '"';
	return p;
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian), by eras of
 * 400 years counted from March, so the leap day is the era's last. */
static void civil(uint64_t days, unsigned *y, unsigned *m, unsigned *d)
{
	uint64_t z = days + 719468; /* from 0000-03-01 */
	uint64_t era = z / 146097;
	uint64_t doe = z - era * 146097;
	uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	uint64_t mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = (unsigned)(yoe + era * 400 + (*m <= 2));
}

size_t http_access_time(uint64_t unix_sec, int32_t utc_off_s, enum http_access_fmt fmt,
			char out[HTTP_ACCESS_TIME_MAX])
{
	static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	if (utc_off_s <= -86400 || utc_off_s >= 86400)
		utc_off_s = 0;
	uint64_t t = unix_sec;
	if (utc_off_s < 0)
		t = t >= (uint64_t)-utc_off_s ? t - (uint64_t)-utc_off_s : 0;
	else
		t += (uint64_t)utc_off_s;
	/* Years past 9999 would widen the field: clamp to its last second. */
	if (t > 253402300799ull)
		t = 253402300799ull;
	unsigned y, m, d, sod = (unsigned)(t % 86400);
	civil(t / 86400, &y, &m, &d);
	unsigned off = (unsigned)(utc_off_s < 0 ? -utc_off_s : utc_off_s) / 60;
	char *p = out;
	if (fmt == HTTP_ACCESS_COMBINED) {
		p = put_2(p, d);
		*p++ = '/';
		p = put_mem(p, mon[m - 1], 3);
		*p++ = '/';
		p = put_2(p, y / 100);
		p = put_2(p, y % 100);
		*p++ = ':';
	} else {
		p = put_2(p, y / 100);
		p = put_2(p, y % 100);
		*p++ = '-';
		p = put_2(p, m);
		*p++ = '-';
		p = put_2(p, d);
		*p++ = 'T';
	}
	p = put_2(p, sod / 3600);
	*p++ = ':';
	p = put_2(p, sod / 60 % 60);
	*p++ = ':';
	p = put_2(p, sod % 60);
	if (fmt == HTTP_ACCESS_COMBINED)
		*p++ = ' ';
	*p++ = utc_off_s < 0 ? '-' : '+';
	p = put_2(p, off / 60);
	if (fmt == HTTP_ACCESS_JSON)
		*p++ = ':';
	p = put_2(p, off % 60);
	*p = 0;
	return (size_t)(p - out);
}

size_t http_access_format(uint8_t *out, size_t cap, const struct http_access *r,
			  enum http_access_fmt fmt, const char *time)
{
	if (cap < HTTP_ACCESS_REC_MAX)
		return 0;
	char *p = (char *)out;
	/* The time comes from the caller, trusted, but bounded all the same. */
	size_t tn = 0;
	while (time[tn] && tn < HTTP_ACCESS_TIME_MAX - 1)
		tn++;
	if (fmt == HTTP_ACCESS_COMBINED) {
		p = put_addr(p, &r->addr);
		p = PUT_LIT(p, " - - [");
		p = put_mem(p, time, tn);
		p = PUT_LIT(p, "] ");
		p = put_field(p, r->line, HTTP_ACCESS_LINE_MAX, fmt);
		*p++ = ' ';
		p = put_u64(p, r->status);
		*p++ = ' ';
		p = put_u64(p, r->body_bytes);
		*p++ = ' ';
		p = put_field(p, r->referer, HTTP_ACCESS_FIELD_MAX, fmt);
		*p++ = ' ';
		p = put_field(p, r->user_agent, HTTP_ACCESS_FIELD_MAX, fmt);
	} else {
		p = PUT_LIT(p, "{\"time\":\"");
		p = put_mem(p, time, tn);
		p = PUT_LIT(p, "\",\"remote_addr\":\"");
		p = put_addr(p, &r->addr);
		p = PUT_LIT(p, "\",\"remote_port\":");
		p = put_u64(p, r->port);
		p = PUT_LIT(p, ",\"request\":");
		p = put_field(p, r->line, HTTP_ACCESS_LINE_MAX, fmt);
		p = PUT_LIT(p, ",\"status\":");
		p = put_u64(p, r->status);
		p = PUT_LIT(p, ",\"body_bytes_sent\":");
		p = put_u64(p, r->body_bytes);
		p = PUT_LIT(p, ",\"http_referer\":");
		p = put_field(p, r->referer, HTTP_ACCESS_FIELD_MAX, fmt);
		p = PUT_LIT(p, ",\"http_user_agent\":");
		p = put_field(p, r->user_agent, HTTP_ACCESS_FIELD_MAX, fmt);
		*p++ = '}';
	}
	*p++ = '\n';
	return (size_t)(p - (char *)out);
}
