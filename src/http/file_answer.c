/* file_answer.c — see file_answer.h. */
#include "file_answer.h"

#include "accept_enc.h"
#include "date.h"
#include "emit.h"
#include "etag.h"
#include "parser.h"

void http_file_ask_init(struct http_file_ask *q, uint8_t method, const uint8_t *target,
			uint32_t target_len)
{
	sk_memset(q, 0, sizeof(*q));
	q->method = method;
	q->target = target;
	q->target_len = target_len;
}

static bool name_is(const uint8_t *name, size_t nlen, const char *lc, size_t n)
{
	if (nlen != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = name[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (uint8_t)(ch + 32);
		if (ch != (uint8_t)lc[i])
			return false;
	}
	return true;
}

void http_file_ask_field(struct http_file_ask *q, const uint8_t *name, size_t nlen,
			 const uint8_t *value, size_t vlen)
{
	struct http_file_val *v;
	/* By length first: most lines of a request (Host, User-Agent,
	 * Accept, ...) are dismissed without a byte compared. */
	switch (nlen) {
#define IS(lit) name_is(name, nlen, lit, sizeof(lit) - 1)
	case 5: v = IS("range") ? &q->range : NULL; break;
	case 8: v = IS("if-match") ? &q->if_match : IS("if-range") ? &q->if_range : NULL; break;
	case 13: v = IS("if-none-match") ? &q->if_none_match : NULL; break;
	case 15: v = IS("accept-encoding") ? &q->accept_encoding : NULL; break;
	case 17: v = IS("if-modified-since") ? &q->if_modified_since : NULL; break;
	case 19: v = IS("if-unmodified-since") ? &q->if_unmodified_since : NULL; break;
	default: v = NULL; break;
#undef IS
	}
	if (v && !v->p) { /* the first line of a name counts, as http_req_find */
		v->p = value;
		v->n = vlen;
	}
}

/* The strong ETag "<mtime hex>-<len hex>" of an entry whose source gave
 * none, into out[HTTP_ETAG_MAX + 1], NUL-terminated, when the time is
 * known (what nginx sends); 0 when there is none. */
static size_t make_etag(const struct http_file *f, char *out)
{
	if (f->mtime <= 0) {
		out[0] = 0;
		return 0;
	}
	struct http_out o = {(uint8_t *)out, (uint8_t *)out + HTTP_ETAG_MAX};
	http_out_mem(&o, "\"", 1);
	http_out_hex(&o, (uint64_t)f->mtime);
	http_out_mem(&o, "-", 1);
	http_out_hex(&o, f->len);
	http_out_mem(&o, "\"", 1);
	*o.p = 0;
	return (size_t)(o.p - (uint8_t *)out);
}

/* a->etag for a->var: the entry's own tag where it has one (the source's,
 * or the prepared one), else made in a->etag_buf. */
static void find_etag(struct http_file_answer *a)
{
	const struct http_file *f = a->var;
	const char *given = f->etag;
	if (!given) {
		a->etag_len = make_etag(f, a->etag_buf);
		a->etag = a->etag_len ? a->etag_buf : NULL;
		return;
	}
	size_t n = 0;
	while (given[n] && n < HTTP_ETAG_MAX)
		n++;
	a->etag_len = n;
	a->etag = given;
	if (given[n]) { /* longer than a source may give: the first HTTP_ETAG_MAX bytes */
		sk_memcpy(a->etag_buf, given, n);
		a->etag_buf[n] = 0;
		a->etag = a->etag_buf;
	}
}

/* Every entry a source prepares costs this much and its arena bytes
 * (72 on LP64, as before the validators were cached: files_handler_test
 * says the arena's per entry). */
_Static_assert(sizeof(void *) != 8 || sizeof(struct http_file) <= 72,
	       "struct http_file stays small: validators go to the source's arena");

size_t http_file_prepare_len(const struct http_file *f)
{
	if (f->mtime <= 0)
		return 0;
	char tag[HTTP_ETAG_MAX + 1];
	return HTTP_DATE_LEN + 1 + (f->etag ? 0 : make_etag(f, tag) + 1);
}

size_t http_file_prepare(struct http_file *f, char *room)
{
	if (f->mtime <= 0)
		return 0;
	char *p = room;
	http_date_format((uint64_t)f->mtime, p);
	p[HTTP_DATE_LEN] = 0;
	f->last_modified = p;
	p += HTTP_DATE_LEN + 1;
	if (!f->etag) {
		f->etag = p;
		p += make_etag(f, p) + 1;
	}
	return (size_t)(p - room);
}

uint32_t http_file_origin_part(const uint8_t *t, uint32_t from, uint32_t to)
{
	if (t[from] == '/')
		return from;
	uint32_t i = from;
	while (i + 2 < to && !(t[i] == ':' && t[i + 1] == '/' && t[i + 2] == '/'))
		i++;
	i += 3;
	while (i < to && t[i] != '/' && t[i] != '?')
		i++;
	return i;
}

#define VAL(v) (v).p, (v).n

/* The conditionals and the Range, on the variant chosen (steps 1-5). */
static void decide_file(const struct http_file_ask *q, struct http_file_answer *a)
{
	const struct http_file *v = a->var;
	find_etag(a);
	const char *et = a->etag;
	const size_t elen = a->etag_len;
	const uint64_t lm = v->mtime > 0 ? (uint64_t)v->mtime : 0;
	uint64_t t;

	if (q->if_match.p) {
		if (!http_etag_list_match(VAL(q->if_match), et, elen, HTTP_ETAG_STRONG, true)) {
			a->status = 412;
			return;
		}
	} else if (q->if_unmodified_since.p && lm &&
		   http_date_parse(VAL(q->if_unmodified_since), &t) && lm > t) {
		a->status = 412;
		return;
	}
	if (q->if_none_match.p) {
		if (http_etag_list_match(VAL(q->if_none_match), et, elen, HTTP_ETAG_WEAK, true)) {
			a->status = 304;
			return;
		}
	} else if (q->if_modified_since.p && lm && http_date_parse(VAL(q->if_modified_since), &t) &&
		   lm <= t) {
		a->status = 304;
		return;
	}
	a->status = 200;
	/* A precompressed variant is sent whole (14.2: a server MAY ignore
	 * Range), as nginx does: a range of gzip bytes is of use to few
	 * clients and a trap for caches that mix the two. */
	if (q->method != HTTP_GET || a->coding != HTTP_CODING_IDENTITY || !q->range.p)
		return;
	if (q->if_range.p) {
		bool ok;
		if (http_etag_is_one(VAL(q->if_range))) /* one tag (never "*"), compared strongly */
			ok = http_etag_list_match(VAL(q->if_range), et, elen, HTTP_ETAG_STRONG, true);
		else
			ok = lm && http_date_parse(VAL(q->if_range), &t) && t == lm;
		if (!ok)
			return; /* the representation changed: all of it */
	}
	unsigned n = 0;
	switch (http_range_parse(VAL(q->range), v->len, a->rg, HTTP_MAX_RANGES, &n)) {
	case HTTP_RANGE_OK:
		a->status = 206;
		a->nranges = (uint8_t)n;
		break;
	case HTTP_RANGE_UNSATISFIABLE:
		a->status = 416;
		break;
	default:
		break;
	}
}

void http_file_decide(struct http_file_answer *a, const struct http_file_ask *q,
		      http_lookup_fn lookup, void *lookup_ctx, char *path, size_t plen)
{
	const struct http_file *f;
	a->status = 404;
	a->coding = HTTP_CODING_IDENTITY;
	a->nranges = 0;
	a->vary = false;
	a->f = a->var = NULL;
	a->ctype = NULL;
	a->loc_off = a->loc_len = a->query_at = 0;
	a->etag = NULL;
	a->etag_len = 0;
	if (path[plen - 1] == '/') {
		/* A directory's index; without one, 403 if it is a directory. */
		sk_memcpy(path + plen, "index.html", 11); /* room: see file_answer.h */
		f = lookup(lookup_ctx, path, plen + 10);
		if (!f || f->is_dir) {
			path[plen - 1] = 0;
			const struct http_file *d = plen == 1 ? NULL : lookup(lookup_ctx, path, plen - 1);
			if (plen == 1 || (d && d->is_dir))
				a->status = 403;
			return;
		}
	} else {
		f = lookup(lookup_ctx, path, plen);
		if (!f)
			return;
		if (f->is_dir) {
			/* "/dir" -> "/dir/": the target as sent, a '/' after its path. */
			const uint8_t *t = q->target;
			uint32_t to = q->target_len, from = http_file_origin_part(t, 0, to), at = from;
			while (at < to && t[at] != '?')
				at++;
			if (to - from + 1 > HTTP_LOCATION_MAX) {
				a->status = 414; /* a Location we will not write */
				return;
			}
			a->status = 301;
			a->loc_off = from;
			a->loc_len = to - from;
			a->query_at = at - from;
			return;
		}
	}
	a->f = a->var = f;
	a->ctype = f->ctype;
	size_t ct = 0;
	while (a->ctype && a->ctype[ct] && ct <= HTTP_EMIT_CTYPE_MAX)
		ct++;
	if (!a->ctype || ct > HTTP_EMIT_CTYPE_MAX)
		a->ctype = "application/octet-stream"; /* a source's type we do not send */
	if (f->gz || f->br) {
		a->vary = true;
		struct http_accept_enc ae = {-1, -1, -1, -1};
		if (q->accept_encoding.p)
			http_accept_enc_parse(VAL(q->accept_encoding), &ae);
		a->coding = (uint8_t)http_accept_enc_choose(&ae, f->gz != NULL, f->br != NULL);
		if (a->coding == HTTP_CODING_GZIP)
			a->var = f->gz;
		else if (a->coding == HTTP_CODING_BR)
			a->var = f->br;
	}
	decide_file(q, a);
}
