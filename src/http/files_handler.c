/* files_handler.c — see files_handler.h.  The lines of each answer keep
 * the order the former static-file engine wrote them in: the engine's
 * Content-Length goes after the type and Content-Range
 * (http_app_header_length_here) and its Connection line last. */
#include "files_handler.h"

#include "accept_enc.h"
#include "date.h"
#include "emit.h"
#include "file_answer.h"

/* The decoded path after the prefix, a leading '/', and room for a
 * directory's "index.html" and its NUL (file_answer.h). */
#define FILES_PATH_MAX (2048u + 16u)

/* Error bodies: http_app_send reads them until the request is over, so
 * they live here, not on the stack (the same words as emit.c's
 * http_emit_error_body). */
static const char *error_body(int status)
{
	switch (status) {
	case 301: return "301 Moved Permanently\n";
	case 403: return "403 Forbidden\n";
	case 404: return "404 Not Found\n";
	case 405: return "405 Method Not Allowed\n";
	case 412: return "412 Precondition Failed\n";
	case 414: return "414 URI Too Long\n";
	case 416: return "416 Range Not Satisfiable\n";
	default: return "500 Internal Server Error\n";
	}
}

/* Decide what r's request answers (the handler, and the multipart writer
 * again at each call: it keeps no state but the engine's count).  path
 * has FILES_PATH_MAX bytes.  false: a path too long to ask (414). */
static bool decide(struct http_app_req *r, const struct http_files *fh,
		   struct http_file_answer *a, char *path)
{
	size_t rl = 0;
	const char *rest = http_app_rest(r, &rl);
	size_t at = rl && rest[0] == '/' ? 0 : 1;
	if (at + rl + 11 > FILES_PATH_MAX)
		return false;
	path[0] = '/';
	sk_memcpy(path + at, rest, rl);
	path[at + rl] = 0;
	size_t tl = 0;
	const char *t = http_app_target(r, &tl);
	struct http_file_ask q;
	http_file_ask_init(&q, (uint8_t)http_app_method(r), (const uint8_t *)t, (uint32_t)tl);
	for (unsigned i = 0, n = http_app_nheaders(r); i < n; i++) {
		const char *nm, *v;
		size_t nl, vl;
		http_app_header_at(r, i, &nm, &nl, &v, &vl);
		http_file_ask_field(&q, (const uint8_t *)nm, nl, (const uint8_t *)v, vl);
	}
	http_file_decide(a, &q, fh->lookup, fh->lookup_ctx, path, at + rl);
	return true;
}

/* "bytes FIRST-LAST/LEN" into out (64 bytes). */
static void content_range(char *out, const struct http_range *rg, uint64_t len)
{
	struct http_out o = {(uint8_t *)out, (uint8_t *)out + 63};
	http_out_str(&o, "bytes ");
	http_out_u64(&o, rg->first);
	http_out_mem(&o, "-", 1);
	http_out_u64(&o, rg->last);
	http_out_mem(&o, "/", 1);
	http_out_u64(&o, len);
	*o.p = 0;
}

/* Validators, Vary and Cache-Control (RFC 9110 15.4.5: a 304 sends what
 * the 200 would). */
static int file_fields(struct http_app_req *r, const struct http_files *fh,
		       const struct http_file_answer *a)
{
	int rc = 0;
	const struct http_file *f = a->var;
	if (f->last_modified) {
		rc |= http_app_header(r, "Last-Modified", f->last_modified);
	} else if (f->mtime > 0) {
		char d[HTTP_DATE_LEN + 1];
		http_date_format((uint64_t)f->mtime, d);
		d[HTTP_DATE_LEN] = 0;
		rc |= http_app_header(r, "Last-Modified", d);
	}
	if (a->etag) /* decided once, for the conditionals: the entry's own */
		rc |= http_app_header(r, "ETag", a->etag);
	if (a->vary)
		rc |= http_app_header(r, "Vary", "Accept-Encoding");
	if (fh->cache_control && (a->status == 200 || a->status == 206 || a->status == 304))
		rc |= http_app_header(r, "Cache-Control", fh->cache_control);
	return rc;
}

static int coding_field(struct http_app_req *r, const struct http_file_answer *a)
{
	if (a->coding == HTTP_CODING_GZIP)
		return http_app_header(r, "Content-Encoding", "gzip");
	if (a->coding == HTTP_CODING_BR)
		return http_app_header(r, "Content-Encoding", "br");
	return 0;
}

/* ---- multipart/byteranges, through the engine's copying stream ---- */

/* Part i's head into buf (PART_MAX bytes); returns its length. */
#define PART_MAX (sizeof("\r\n--" HTTP_FILE_BOUNDARY "\r\nContent-Type: \r\nContent-Range: \r\n\r\n") + \
		  HTTP_EMIT_CTYPE_MAX + 64u)
static size_t part_head(uint8_t *buf, const struct http_file_answer *a, unsigned i)
{
	char cr[64];
	content_range(cr, &a->rg[i], a->var->len);
	struct http_out o = {buf, buf + PART_MAX};
	http_out_str(&o, "\r\n--" HTTP_FILE_BOUNDARY "\r\nContent-Type: ");
	http_out_str(&o, a->ctype);
	http_out_str(&o, "\r\nContent-Range: ");
	http_out_str(&o, cr);
	http_out_str(&o, "\r\n\r\n");
	return (size_t)(o.p - buf);
}

static const char multi_tail[] = "\r\n--" HTTP_FILE_BOUNDARY "--\r\n";

static uint64_t multipart_len(const struct http_file_answer *a)
{
	uint8_t tmp[PART_MAX];
	uint64_t total = sizeof(multi_tail) - 1;
	for (unsigned i = 0; i < a->nranges; i++)
		total += part_head(tmp, a, i) + (a->rg[i].last - a->rg[i].first + 1);
	return total;
}

/* Write from where the engine's count says, as far as there is room: the
 * layout (part heads, parts, tail) is decided again from the request,
 * which lives until the answer ends. */
static void multipart_more(struct http_app_req *r, void *ctx)
{
	const struct http_files *fh = ctx;
	struct http_file_answer a;
	char path[FILES_PATH_MAX];
	if (!decide(r, fh, &a, path) || a.status != 206 || a.nranges < 2) {
		http_app_abort(r); /* the site changed under the answer: cut it */
		return;
	}
	uint64_t pos = http_app_written(r), at = 0;
	uint8_t head[PART_MAX];
	for (unsigned i = 0; i <= a.nranges; i++) {
		/* Segment 2i: part i's head (or, at i == nranges, the tail);
		 * segment 2i+1: part i's bytes. */
		for (int k = 0; k < 2; k++) {
			const uint8_t *p;
			uint64_t len;
			if (k == 0) {
				if (i == a.nranges) {
					p = (const uint8_t *)multi_tail;
					len = sizeof(multi_tail) - 1;
				} else {
					len = part_head(head, &a, i);
					p = head;
				}
			} else {
				if (i == a.nranges)
					break;
				p = a.var->data + a.rg[i].first;
				len = a.rg[i].last - a.rg[i].first + 1;
			}
			if (pos < at + len) {
				uint64_t off = pos - at;
				long n = http_app_write(r, p + off, (size_t)(len - off));
				if (n < 0) {
					http_app_abort(r);
					return;
				}
				pos += (uint64_t)n;
				if ((uint64_t)n < len - off)
					return; /* full: called again when there is room */
			}
			at += len;
		}
	}
	http_app_end(r);
}

/* ---- the handler ---- */

static int send_error(struct http_app_req *r, int status)
{
	const char *b = error_body(status);
	return http_app_send(r, status, b, sk_strlen(b));
}

int http_files_handle(struct http_app_req *r, void *ctx)
{
	const struct http_files *fh = ctx;
	unsigned m = http_app_method(r);
	int rc = 0;
	if (m != HTTP_GET && m != HTTP_HEAD) {
		rc |= http_app_header(r, "Content-Type", "text/plain");
		rc |= http_app_header_length_here(r);
		rc |= http_app_header(r, "Allow", "GET, HEAD");
		return rc < 0 ? rc : send_error(r, 405);
	}
	struct http_file_answer a;
	char path[FILES_PATH_MAX];
	if (!decide(r, fh, &a, path)) {
		rc |= http_app_header(r, "Content-Type", "text/plain");
		return rc < 0 ? rc : send_error(r, 414);
	}
	const struct http_file *v = a.var;
	char cr[64];
	switch (a.status) {
	case 200:
	case 206: {
		uint64_t off = 0, len = v->len;
		if (a.status == 206 && a.nranges > 1) {
			rc |= http_app_header(r, "Content-Type", "multipart/byteranges; boundary="
							 HTTP_FILE_BOUNDARY);
			rc |= http_app_header_length_here(r);
			rc |= file_fields(r, fh, &a);
			rc |= coding_field(r, &a);
			if (rc < 0)
				return rc;
			return http_app_stream(r, 206, multipart_len(&a), multipart_more, (void *)fh);
		}
		rc |= http_app_header(r, "Content-Type", a.ctype);
		if (a.status == 206) {
			content_range(cr, &a.rg[0], v->len);
			rc |= http_app_header(r, "Content-Range", cr);
			off = a.rg[0].first;
			len = a.rg[0].last - a.rg[0].first + 1;
		}
		rc |= http_app_header_length_here(r);
		if (a.coding == HTTP_CODING_IDENTITY)
			rc |= http_app_header(r, "Accept-Ranges", "bytes");
		rc |= file_fields(r, fh, &a);
		rc |= coding_field(r, &a);
		return rc < 0 ? rc : http_app_send_file(r, a.status, v, off, len);
	}
	case 304:
		/* No body, and no Content-Type / Content-Length of one. */
		rc |= file_fields(r, fh, &a);
		return rc < 0 ? rc : http_app_send(r, 304, NULL, 0);
	case 301: {
		/* The target as sent, a '/' after its path (file_answer.h). */
		size_t tl = 0;
		const char *t = http_app_target(r, &tl);
		char loc[HTTP_LOCATION_MAX + 2];
		sk_memcpy(loc, t + a.loc_off, a.query_at);
		loc[a.query_at] = '/';
		sk_memcpy(loc + a.query_at + 1, t + a.loc_off + a.query_at, a.loc_len - a.query_at);
		loc[a.loc_len + 1] = 0;
		rc |= http_app_header(r, "Location", loc);
		rc |= http_app_header(r, "Content-Type", "text/plain");
		return rc < 0 ? rc : send_error(r, 301);
	}
	default: /* 403 404 412 414 416 */
		rc |= http_app_header(r, "Content-Type", "text/plain");
		rc |= http_app_header_length_here(r);
		if (a.status == 416) {
			struct http_out o = {(uint8_t *)cr, (uint8_t *)cr + 63};
			http_out_str(&o, "bytes */");
			http_out_u64(&o, v->len);
			*o.p = 0;
			rc |= http_app_header(r, "Content-Range", cr);
		}
		if (a.status == 412 || a.status == 416)
			rc |= file_fields(r, fh, &a);
		return rc < 0 ? rc : send_error(r, a.status);
	}
}

bool http_cache_control_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (n >= HTTP_CACHE_CONTROL_MAX || s[n] < 0x20 || s[n] > 0x7e)
			return false;
	return n > 0 && s[0] != ' ' && s[n - 1] != ' ';
}
