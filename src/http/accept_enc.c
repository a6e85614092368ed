/* accept_enc.c — see accept_enc.h. */
#include "accept_enc.h"

static inline bool is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

static inline uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c | 0x20) : c;
}

static bool tok_eq(const uint8_t *v, size_t n, const char *lit)
{
	size_t i = 0;
	for (; i < n && lit[i]; i++)
		if (lower(v[i]) != (uint8_t)lit[i])
			return false;
	return i == n && !lit[i];
}

/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in
 * thousandths; -1 if v[0, n) is not one. */
static int qvalue(const uint8_t *v, size_t n)
{
	if (n == 0 || (v[0] != '0' && v[0] != '1'))
		return -1;
	int q = (v[0] - '0') * 1000;
	if (n == 1)
		return q;
	if (v[1] != '.' || n > 5)
		return -1;
	int scale = 100;
	for (size_t i = 2; i < n; i++, scale /= 10) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		q += (v[i] - '0') * scale;
	}
	return q > 1000 ? -1 : q;
}

/* tchar, the bytes of a coding's name and of parameter names. */
static inline bool is_tchar(uint8_t c)
{
	if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
		return true;
	switch (c) {
	case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
	case '-': case '.': case '^': case '_': case '`': case '|': case '~':
		return true;
	default:
		return false;
	}
}

void http_accept_enc_parse(const uint8_t *v, size_t n, struct http_accept_enc *ae)
{
	ae->q_gzip = ae->q_br = ae->q_star = ae->q_identity = -1;
	size_t i = 0;
	while (i < n) {
		/* One element: [OWS] coding [OWS ";" OWS "q=" qvalue] [OWS], up to ','. */
		size_t end = i;
		while (end < n && v[end] != ',')
			end++;
		size_t k = i;
		while (k < end && is_ows(v[k]))
			k++;
		size_t c0 = k;
		while (k < end && is_tchar(v[k]))
			k++;
		size_t c1 = k;
		while (k < end && is_ows(v[k]))
			k++;
		int q = 1000;
		bool ok = c1 > c0;
		if (ok && k < end) {
			ok = false;
			if (v[k] == ';') {
				k++;
				while (k < end && is_ows(v[k]))
					k++;
				if (end - k >= 2 && lower(v[k]) == 'q' && v[k + 1] == '=') {
					k += 2;
					size_t q0 = k;
					while (k < end && !is_ows(v[k]))
						k++;
					q = qvalue(v + q0, k - q0);
					while (k < end && is_ows(v[k]))
						k++;
					ok = q >= 0 && k == end;
				}
			}
		}
		if (ok) {
			const uint8_t *c = v + c0;
			size_t cn = c1 - c0;
			int16_t *slot = NULL;
			if (tok_eq(c, cn, "gzip") || tok_eq(c, cn, "x-gzip"))
				slot = &ae->q_gzip;
			else if (tok_eq(c, cn, "br"))
				slot = &ae->q_br;
			else if (tok_eq(c, cn, "identity"))
				slot = &ae->q_identity;
			else if (tok_eq(c, cn, "*"))
				slot = &ae->q_star;
			/* Named twice: the higher weight (either reading is fair; this
			 * one does not depend on the order). */
			if (slot && q > *slot)
				*slot = (int16_t)q;
		}
		i = end + 1;
	}
}

int http_accept_enc_q(const struct http_accept_enc *ae, int q)
{
	if (q >= 0)
		return q;
	return ae->q_star >= 0 ? ae->q_star : 0;
}

enum http_coding http_accept_enc_choose(const struct http_accept_enc *ae, bool have_gzip,
					bool have_br)
{
	int qg = have_gzip ? http_accept_enc_q(ae, ae->q_gzip) : 0;
	int qb = have_br ? http_accept_enc_q(ae, ae->q_br) : 0;
	if (qb > 0 && qb >= qg)
		return HTTP_CODING_BR;
	if (qg > 0)
		return HTTP_CODING_GZIP;
	return HTTP_CODING_IDENTITY;
}
