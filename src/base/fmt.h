/* fmt.h — printf's common subset into a caller's buffer, freestanding (no
 * libc, no allocation), so the core can format where the unikernel has no
 * stdio of its own: http_app_headerf's header values.
 *
 * Conversions: %d %i %u %x %X %c %s %%, with the flags '-' and '0', a
 * width (digits or *), a precision for %s (.N or .*: at most N bytes) and
 * for the integers (at least N digits), and the length modifiers hh h l
 * ll z j t.  Anything else (%f, %p, %n, %e, a lone % at the end) is
 * refused whole: the caller sees an error, never a half-formatted value.
 * %s of NULL prints "(null)" as glibc and musl do. */
#ifndef BASE_FMT_H
#define BASE_FMT_H

#include <stdarg.h>

#include "sk.h"

/* Format into buf[0, cap): returns the length the whole result has (as
 * vsnprintf), with buf NUL-terminated when cap > 0 and the result cut at
 * cap - 1; or -1 for a conversion outside the subset (buf then holds ""
 * when cap > 0).  A result >= cap means it did not fit. */
long sk_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
long sk_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
