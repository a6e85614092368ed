/* fortify.c — glibc's checked string and format functions, which Debian's
 * libwolfssl.a (built with _FORTIFY_SOURCE for glibc) calls and musl does
 * not have.  Each checks what glibc's checks (the destination's size the
 * compiler knew), stops the guest if the check fails, and does the work
 * with musl's function.  libc.c has the memory ones (__memcpy_chk, ...),
 * which every image needs for BearSSL. */
#include <stdarg.h>

#include "musl.h"
#include "../kvm.h"

struct _IO_FILE;
int vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int vfprintf(struct _IO_FILE *f, const char *fmt, va_list ap);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t n);
char *strcat(char *d, const char *s);
char *strncat(char *d, const char *s, size_t n);
char *strncpy(char *d, const char *s, size_t n);

long __fdelt_chk(long d);
int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...);
int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, va_list ap);
int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...);
int __fprintf_chk(struct _IO_FILE *f, int flag, const char *fmt, ...);
int __vfprintf_chk(struct _IO_FILE *f, int flag, const char *fmt, va_list ap);
char *__strcat_chk(char *d, const char *s, size_t dlen);
char *__strncat_chk(char *d, const char *s, size_t n, size_t dlen);
char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen);

__attribute__((noreturn)) static void fail(const char *what)
{
	kprintf("skiff-uk: %s: stopping\n", what);
	kvm_exit(KVM_EXIT_FATAL);
}

/* FD_SET's index check (an fd_set holds 1024). */
long __fdelt_chk(long d)
{
	if (d < 0 || d >= 1024)
		fail("FD_SET past the end of its set");
	return d / 64;
}

int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, va_list ap)
{
	(void)flag;
	if (n > slen)
		fail("snprintf past the end of its destination");
	return vsnprintf(s, n, fmt, ap);
}

int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vsnprintf_chk(s, n, flag, slen, fmt, ap);
	va_end(ap);
	return r;
}

int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(s, slen, fmt, ap);
	va_end(ap);
	if (r >= 0 && (size_t)r >= slen)
		fail("sprintf past the end of its destination");
	return r;
}

int __vfprintf_chk(struct _IO_FILE *f, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	return vfprintf(f, fmt, ap);
}

int __fprintf_chk(struct _IO_FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vfprintf_chk(f, flag, fmt, ap);
	va_end(ap);
	return r;
}

char *__strcat_chk(char *d, const char *s, size_t dlen)
{
	if (strlen(d) + strlen(s) + 1 > dlen)
		fail("strcat past the end of its destination");
	return strcat(d, s);
}

char *__strncat_chk(char *d, const char *s, size_t n, size_t dlen)
{
	if (strlen(d) + strnlen(s, n) + 1 > dlen)
		fail("strncat past the end of its destination");
	return strncat(d, s, n);
}

char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen)
{
	if (n > dlen)
		fail("strncpy past the end of its destination");
	return strncpy(d, s, n);
}
