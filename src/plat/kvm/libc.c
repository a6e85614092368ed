/* libc.c — the few C library functions a freestanding kernel still needs.
 * gcc and clang emit calls to memcpy, memset, memmove and memcmp for
 * struct copies, zeroing and the core's sk_mem* builtins, even with
 * -ffreestanding.  memcpy and memset move 8-byte words (memword.h: under
 * TCG, `rep movsb` runs a byte per step, 25-45x slower, measured there);
 * an overlapping memmove keeps `rep movsb`, forward or backward (rare:
 * no hot path moves overlapping bytes). */
#include "../../base/sk.h"
#include "kvm.h"
#include "memword.h"
#include "../plat.h"

void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	return mw_copy(d, s, n);
}

void *memmove(void *d, const void *s, size_t n)
{
	void *ret = d;
	if ((uintptr_t)d - (uintptr_t)s >= n && (uintptr_t)s - (uintptr_t)d >= n) {
		/* No overlap at all: memcpy's words (which read the last word
		 * first and so must not see overlap in either direction). */
		return mw_copy(d, s, n);
	} else if ((uintptr_t)d - (uintptr_t)s >= n) {
		/* d below s: a forward byte copy never clobbers what it reads. */
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n)::"memory");
	} else {
		const uint8_t *se = (const uint8_t *)s + n - 1;
		uint8_t *de = (uint8_t *)d + n - 1;
		__asm__ volatile("std; rep movsb; cld" : "+D"(de), "+S"(se), "+c"(n)::"memory");
	}
	return ret;
}

void *memset(void *d, int c, size_t n)
{
	return mw_set(d, c, n);
}

int memcmp(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *p = a, *q = b; /* volatile: keep it a loop, not a call */
	for (size_t i = 0; i < n; i++)
		if (p[i] != q[i])
			return p[i] < q[i] ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (((const volatile char *)s)[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

/* ---- what Debian's libbearssl.a (user-space code) links against ----
 * It was built with _FORTIFY_SOURCE and -fstack-protector-strong, and
 * its system-randomness seeder (never used here: every connection's DRBG
 * is seeded from RDRAND through br_ssl_engine_inject_entropy) opens
 * /dev/urandom.  These answer those calls: the checked copies check, a
 * smashed stack stops the guest, and there is no file to open. */
void *__memcpy_chk(void *restrict d, const void *restrict s, size_t n, size_t dlen);
void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen);
void *__memset_chk(void *d, int c, size_t n, size_t dlen);
void __stack_chk_fail(void);
int *__errno_location(void);
int open(const char *path, int flags, ...);
long read(int fd, void *buf, size_t n);
int close(int fd);

__attribute__((noreturn)) static void chk_fail(const char *what)
{
	kprintf("skiff-uk: %s: stopping\n", what);
	kvm_exit(KVM_EXIT_FATAL);
}

void *__memcpy_chk(void *restrict d, const void *restrict s, size_t n, size_t dlen)
{
	if (n > dlen)
		chk_fail("memcpy past the end of its destination");
	return memcpy(d, s, n);
}

void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen)
{
	if (n > dlen)
		chk_fail("memmove past the end of its destination");
	return memmove(d, s, n);
}

void *__memset_chk(void *d, int c, size_t n, size_t dlen)
{
	if (n > dlen)
		chk_fail("memset past the end of its destination");
	return memset(d, c, n);
}

void __stack_chk_fail(void)
{
	chk_fail("stack smashing detected (canary at %fs:0x28)");
}

/* errno, per vCPU.  In an image with musl this one is linked, not
 * musl's (which answers from its thread block, %fs:0 + 0x34): a symbol an
 * object defines is never looked for in an archive, and musl's own code
 * reaches errno only through a call (___errno_location, its internal
 * name, which musl/init.c answers with this one; no %fs:0x34 in its
 * objects).  Both would be per vCPU; this one serves BearSSL in every
 * image alike. */
int *__errno_location(void)
{
	return &kvm_cpu_this()->errno_val;
}

/* One file exists: /dev/urandom, whose reads are plat_random's bytes
 * (RDSEED/RDRAND).  wolfSSL (the TLS 1.3 image, tls_wolfssl.h) seeds its
 * DRBG by reading it; the fd is a number no other file uses, and every
 * open gives the same one (reads have no position). */
#define URANDOM_FD 0x7572

int open(const char *path, int flags, ...)
{
	(void)flags;
	static const char urandom[] = "/dev/urandom";
	if (path && !strcmp(path, urandom))
		return URANDOM_FD;
	*__errno_location() = 2; /* ENOENT: no file system */
	return -1;
}

long read(int fd, void *buf, size_t n)
{
	if (fd == URANDOM_FD) {
		if (n > 0x7fffffff)
			n = 0x7fffffff;
		if (plat_random(buf, n) == 0)
			return (long)n;
		*__errno_location() = 5; /* EIO: no hardware randomness */
		return -1;
	}
	*__errno_location() = 9; /* EBADF */
	return -1;
}

int close(int fd)
{
	if (fd == URANDOM_FD)
		return 0;
	*__errno_location() = 9;
	return -1;
}
