/* range.c — see range.h. */
#include "range.h"

static inline bool is_ows(uint8_t c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_ows(const uint8_t *v, size_t n, size_t i)
{
	while (i < n && is_ows(v[i]))
		i++;
	return i;
}

/* 1*DIGIT at v[*i], saturating at UINT64_MAX.  false if no digit. */
static bool read_num(const uint8_t *v, size_t n, size_t *i, uint64_t *out)
{
	size_t k = *i;
	uint64_t x = 0;
	if (k >= n || !is_digit(v[k]))
		return false;
	for (; k < n && is_digit(v[k]); k++) {
		unsigned d = (unsigned)(v[k] - '0');
		if (x > (UINT64_MAX - d) / 10)
			x = UINT64_MAX;
		else
			x = x * 10 + d;
	}
	*i = k;
	*out = x;
	return true;
}

enum http_range_verdict http_range_parse(const uint8_t *v, size_t n, uint64_t len,
					 struct http_range *out, unsigned max,
					 unsigned *nranges)
{
	static const char unit[] = "bytes=";
	size_t i = skip_ows(v, n, 0);
	*nranges = 0;
	if (n - i < sizeof(unit) - 1)
		return HTTP_RANGE_IGNORE;
	for (size_t k = 0; k < sizeof(unit) - 1; k++)
		if ((v[i + k] | (unit[k] == '=' ? 0 : 0x20)) != (uint8_t)unit[k])
			return HTTP_RANGE_IGNORE;
	i += sizeof(unit) - 1;

	unsigned got = 0;
	uint64_t total = 0;
	bool empty_from_zero = false, any = false;
	for (;;) {
		i = skip_ows(v, n, i);
		if (i < n && v[i] == ',') { /* an empty list element */
			i++;
			continue;
		}
		if (i == n)
			break;
		uint64_t first, last = UINT64_MAX;
		bool suffix = v[i] == '-';
		if (suffix) {
			i = skip_ows(v, n, i + 1);
			if (!read_num(v, n, &i, &last))
				return HTTP_RANGE_UNSATISFIABLE;
			/* The last `last` bytes. */
			first = last < len ? len - last : 0;
			if (last == 0)
				first = len; /* "-0": nothing */
			last = len ? len - 1 : 0;
		} else {
			if (!read_num(v, n, &i, &first))
				return HTTP_RANGE_UNSATISFIABLE;
			i = skip_ows(v, n, i);
			if (i == n || v[i] != '-')
				return HTTP_RANGE_UNSATISFIABLE;
			i = skip_ows(v, n, i + 1);
			if (i < n && is_digit(v[i]))
				read_num(v, n, &i, &last);
			if (last >= len)
				last = len ? len - 1 : 0;
		}
		i = skip_ows(v, n, i);
		if (i < n && v[i] != ',')
			return HTTP_RANGE_UNSATISFIABLE;
		any = true;
		if (len == 0) {
			/* Nothing is satisfiable; one that starts at 0 is ignored
			 * instead (nginx: the empty 200 is the answer). */
			if (first == 0)
				empty_from_zero = true;
		} else if (first < len && first <= last) {
			if (got < max && got < HTTP_MAX_RANGES)
				out[got] = (struct http_range){first, last};
			got++;
			/* Saturating: only "more than len" matters. */
			uint64_t sz = last - first + 1;
			total = total > UINT64_MAX - sz ? UINT64_MAX : total + sz;
		}
		if (i < n)
			i++; /* the ',' */
	}
	if (!any)
		return HTTP_RANGE_UNSATISFIABLE; /* "bytes=" or "bytes= , ," */
	if (empty_from_zero)
		return HTTP_RANGE_IGNORE;
	if (got == 0)
		return HTTP_RANGE_UNSATISFIABLE;
	if (got > max || got > HTTP_MAX_RANGES || total > len)
		return HTTP_RANGE_IGNORE;
	*nranges = got;
	return HTTP_RANGE_OK;
}
