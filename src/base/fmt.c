/* fmt.c — sk_vfmt (fmt.h): one pass over the format, each conversion
 * rendered into a small scratch buffer (an integer's digits) or read in
 * place (a string), then padded to its width while it is copied out.
 * Bytes past cap are counted, not written, so the return says how long
 * the whole result is. */
#include "fmt.h"

struct fmt_out {
	char *buf;
	size_t cap, n; /* n: bytes of the whole result so far */
};

static void put(struct fmt_out *o, char ch)
{
	if (o->n + 1 < o->cap)
		o->buf[o->n] = ch;
	o->n++;
}

static void put_pad(struct fmt_out *o, char ch, size_t k)
{
	while (k--)
		put(o, ch);
}

/* s[0, len) padded to width: left (minus), else with zeros after the sign
 * (zero, integers only) or spaces before. */
static void put_field(struct fmt_out *o, const char *s, size_t len, size_t width, bool minus,
		      bool zero)
{
	size_t pad = width > len ? width - len : 0;
	if (!minus && !zero)
		put_pad(o, ' ', pad);
	if (zero && !minus && len && (s[0] == '-')) {
		put(o, *s++);
		len--;
	}
	if (zero && !minus)
		put_pad(o, '0', pad);
	for (size_t i = 0; i < len; i++)
		put(o, s[i]);
	if (minus)
		put_pad(o, ' ', pad);
}

static int read_num(const char **f)
{
	int v = 0;
	while (**f >= '0' && **f <= '9') {
		if (v < 100000)
			v = v * 10 + (**f - '0');
		(*f)++;
	}
	return v;
}

long sk_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct fmt_out o = {buf, cap, 0};
	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		bool minus = false, zero = false;
		for (;; f++) {
			if (*f == '-')
				minus = true;
			else if (*f == '0')
				zero = true;
			else
				break;
		}
		int width = 0, prec = -1;
		if (*f == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				minus = true;
				width = width == -2147483647 - 1 ? 0 : -width;
			}
			f++;
		} else {
			width = read_num(&f);
		}
		if (*f == '.') {
			f++;
			if (*f == '*') {
				prec = va_arg(ap, int);
				f++;
			} else {
				prec = read_num(&f);
			}
		}
		int len = 0; /* 0 int, 1 long, 2 long long, 3 size_t/ptrdiff_t, 4 intmax_t */
		int narrow = 0; /* 1 h, 2 hh */
		if (*f == 'l') {
			len = 1, f++;
			if (*f == 'l')
				len = 2, f++;
		} else if (*f == 'z' || *f == 't') {
			len = 3, f++;
		} else if (*f == 'j') {
			len = 4, f++;
		} else if (*f == 'h') {
			narrow = 1, f++;
			if (*f == 'h')
				narrow = 2, f++;
		}
		char tmp[48];
		switch (*f) {
		case '%':
			put(&o, '%');
			break;
		case 'c': {
			char ch = (char)va_arg(ap, int);
			put_field(&o, &ch, 1, (size_t)width, minus, false);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			size_t n = 0;
			while ((prec < 0 || n < (size_t)prec) && s[n])
				n++;
			put_field(&o, s, n, (size_t)width, minus, false);
			break;
		}
		case 'd':
		case 'i':
		case 'u':
		case 'x':
		case 'X': {
			bool sgn = *f == 'd' || *f == 'i';
			unsigned base = (*f == 'x' || *f == 'X') ? 16 : 10;
			const char *dig = *f == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
			uint64_t u;
			bool neg = false;
			if (sgn) {
				int64_t v = len == 0 ? va_arg(ap, int)
					  : len == 1 ? va_arg(ap, long)
					  : len == 2 ? va_arg(ap, long long)
					  : len == 3 ? (int64_t)va_arg(ap, ptrdiff_t)
						     : (int64_t)va_arg(ap, long long);
				if (narrow == 1)
					v = (short)v;
				else if (narrow == 2)
					v = (signed char)v;
				neg = v < 0;
				u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
			} else {
				u = len == 0 ? va_arg(ap, unsigned)
				  : len == 1 ? va_arg(ap, unsigned long)
				  : len == 2 ? va_arg(ap, unsigned long long)
				  : len == 3 ? (uint64_t)va_arg(ap, size_t)
					     : (uint64_t)va_arg(ap, unsigned long long);
				if (narrow == 1)
					u = (unsigned short)u;
				else if (narrow == 2)
					u = (unsigned char)u;
			}
			char *e = tmp + sizeof(tmp), *p = e;
			int nd = 0;
			do {
				*--p = dig[u % base];
				u /= base;
				nd++;
			} while (u && p > tmp + 1);
			if (prec == 0 && nd == 1 && *p == '0')
				p = e, nd = 0; /* "%.0d" of 0 is nothing, as in C */
			while (prec > nd && p > tmp + 1)
				*--p = '0', nd++;
			if (neg)
				*--p = '-';
			put_field(&o, p, (size_t)(e - p), (size_t)width, minus, zero && prec < 0);
			break;
		}
		default: /* outside the subset, or the format ended after '%' */
			if (cap)
				buf[0] = 0;
			return -1;
		}
	}
	if (cap)
		buf[o.n < cap ? o.n : cap - 1] = 0;
	return (long)o.n;
}

long sk_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	long n = sk_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}
