/* libc_check.c — the C library an application gets, checked where it
 * runs: GET /libc/SEED runs formatting, parsing, sorting, time, malloc and
 * the memory copies on inputs drawn from SEED and answers what came out,
 * one "name value..." line each.  tests/vm_libc.sh asks the image (musl in
 * the guest, docs/unikernel.md "A C library") and the hosted build (glibc)
 * and checks every line against Python's own computation of the same
 * inputs, so nothing here knows the right answers.
 *
 * The inputs come from one 64-bit LCG (Knuth's MMIX constants; the test
 * has the same three lines): x = x * 6364136223846793005 +
 * 1442695040888963407, a draw is x >> 33.  Hashes are FNV-1a 64. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* getentropy */

#include "http/app.h"

static uint64_t lcg;

static uint32_t draw(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(lcg >> 33);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}
#define FNV0 0xcbf29ce484222325ull

/* The answer so far: lines appended with out(). */
static char body[2048];
static size_t blen;

__attribute__((format(printf, 1, 2))) static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(body + blen, sizeof(body) - blen, fmt, ap);
	va_end(ap);
	if (n > 0)
		blen += (size_t)n < sizeof(body) - blen ? (size_t)n : sizeof(body) - blen - 1;
}

static void check_printf(void)
{
	int d = (int)(draw() % 2000001) - 1000000;
	unsigned x = draw();
	char word[8];
	snprintf(word, sizeof(word), "w%u", draw() % 100000);
	out("printf %d %s %x %f|%.3e|%g|%8.2f|%-7s|%+d|%lld|%llu\n", d, word, x, d / 1024.0,
	    d / 7.0, d / 3.0, d / 1000.0, word, d, (long long)d * 1000003, (unsigned long long)x << 20);
	/* Cut short on purpose (volatile: the compiler would warn): the
	 * return value is the length it would have had. */
	char small[8];
	volatile size_t cap = sizeof(small);
	int n = snprintf(small, cap, "%s-%d", "truncated", d);
	out("snprintf-trunc %d %s\n", n, small);
}

static void check_strtol(void)
{
	char s1[32], s2[32], s3[32], *end;
	long n = (long)(draw() % 1000000000) - 500000000;
	snprintf(s1, sizeof(s1), "  %ldxyz", n);
	unsigned h = draw();
	snprintf(s2, sizeof(s2), "0x%xg", h);
	unsigned o = draw() % 100000;
	snprintf(s3, sizeof(s3), "0%o9", o);
	long v1 = strtol(s1, &end, 10);
	long e1 = end - s1;
	long v2 = strtol(s2, &end, 0);
	long e2 = end - s2;
	long v3 = strtol(s3, &end, 0);
	long e3 = end - s3;
	errno = 0;
	long v4 = strtol("9223372036854775808", NULL, 10);
	int err4 = errno;
	unsigned long v5 = strtoul("-1", NULL, 10);
	unsigned long v6 = strtoul("zz", NULL, 36);
	out("strtol %ld %ld %ld %ld %ld %ld %ld %d %lu %lu\n", v1, e1, v2, e2, v3, e3, v4, err4, v5,
	    v6);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_qsort(void)
{
	enum { N = 2000, W = 200 };
	static int v[N];
	for (int i = 0; i < N; i++)
		v[i] = (int)draw() - (1 << 30);
	qsort(v, N, sizeof(v[0]), cmp_int);
	uint64_t h = FNV0;
	for (int i = 0; i < N; i++) {
		uint8_t le[4] = {(uint8_t)v[i], (uint8_t)(v[i] >> 8), (uint8_t)(v[i] >> 16),
				 (uint8_t)(v[i] >> 24)};
		h = fnv(h, le, 4);
	}
	static char words[W][12];
	static char *wp[W];
	for (int i = 0; i < W; i++) {
		snprintf(words[i], sizeof(words[i]), "%x", draw() % 0x100000);
		wp[i] = words[i];
	}
	qsort(wp, W, sizeof(wp[0]), cmp_str);
	uint64_t hw = FNV0;
	for (int i = 0; i < W; i++)
		hw = fnv(hw, wp[i], strlen(wp[i]) + 1);
	out("qsort %d %d %016llx %s %s %016llx\n", v[0], v[N - 1], (unsigned long long)h, wp[0],
	    wp[W - 1], (unsigned long long)hw);
}

static void check_time(void)
{
	uint64_t hi = draw(), lo = draw() & 3; /* two statements: a fixed order */
	time_t t = (time_t)((hi << 2 | lo) % 8000000000ull);
	struct tm tm;
	char buf[128];
	gmtime_r(&t, &tm);
	size_t n = strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %a %A %b %B %j %u %w %U %y %%", &tm);
	out("strftime %lld %zu %s\n", (long long)t, n, buf);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_MONOTONIC, &b);
	int mono_ok = b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec);
	out("clock %lld %d\n", (long long)time(NULL), mono_ok);
}

/* Slots of memory, each filled with bytes that say which slot and which
 * generation; every realloc must keep the prefix, every free finds its
 * bytes intact.  The counts let the test replay the same choices. */
static void check_malloc(void)
{
	enum { SLOTS = 64, OPS = 3000 };
	static unsigned char *p[SLOTS];
	static size_t sz[SLOTS];
	static unsigned gen[SLOTS];
	unsigned long mallocs = 0, reallocs = 0, frees = 0, bad = 0;
	unsigned long long bytes = 0;
	for (int op = 0; op < OPS; op++) {
		unsigned r = draw(), s = r % SLOTS;
		size_t want = (r >> 8) % 3 == 0 ? 1 + draw() % (256 << 10) : 1 + draw() % 512;
		if (!p[s]) {
			p[s] = malloc(want);
			mallocs++;
		} else {
			for (size_t i = 0; i < sz[s]; i++)
				bad += p[s][i] != (unsigned char)(s * 7 + gen[s] + i);
			if ((r >> 16) & 1) {
				unsigned char *q = realloc(p[s], want);
				reallocs++;
				if (!q) {
					bad++;
					continue;
				}
				size_t keep = want < sz[s] ? want : sz[s];
				for (size_t i = 0; i < keep; i++)
					bad += q[i] != (unsigned char)(s * 7 + gen[s] + i);
				p[s] = q;
			} else {
				free(p[s]);
				frees++;
				p[s] = NULL;
				continue;
			}
		}
		if (!p[s]) {
			bad++;
			continue;
		}
		sz[s] = want;
		gen[s]++;
		bytes += want;
		for (size_t i = 0; i < want; i++)
			p[s][i] = (unsigned char)(s * 7 + gen[s] + i);
	}
	for (int s = 0; s < SLOTS; s++) {
		free(p[s]);
		p[s] = NULL;
		sz[s] = 0;
		gen[s] = 0;
	}
	errno = 0;
	void *huge = malloc((size_t)1 << 40);
	int huge_errno = errno;
	free(huge);
	out("malloc %lu %lu %lu %llu %lu %d %d\n", mallocs, reallocs, frees, bytes, bad,
	    huge == NULL, huge_errno);
}

/* memcpy of every size 0..4096 between offsets that walk through every
 * alignment, checked byte by byte with guards on both sides; then memmove
 * of every size inside one buffer, overlapping both ways, whose final
 * bytes the test computes with slice assignment. */
static void check_memcpy(void)
{
	enum { MAX = 4096, PAD = 64 };
	static unsigned char src[MAX + 2 * PAD], dst[MAX + 2 * PAD], mv[2 * MAX + 2 * PAD];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)draw();
	for (size_t i = 0; i < sizeof(mv); i++)
		mv[i] = (unsigned char)draw();
	unsigned long bad = 0;
	for (size_t n = 0; n <= MAX; n++) {
		size_t so = n % 17, doff = (n / 17) % 19;
		memset(dst, 0xa5, sizeof(dst));
		void *r = memcpy(dst + PAD + doff, src + so, n);
		bad += r != dst + PAD + doff;
		for (size_t i = 0; i < sizeof(dst); i++) {
			unsigned char want = i >= PAD + doff && i < PAD + doff + n
						     ? src[so + i - PAD - doff]
						     : 0xa5;
			bad += dst[i] != want;
		}
		size_t a = draw() % (sizeof(mv) - n + 1), b = draw() % (sizeof(mv) - n + 1);
		memmove(mv + a, mv + b, n);
	}
	out("memcpy %lu %016llx\n", bad, (unsigned long long)fnv(FNV0, mv, sizeof(mv)));
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* strtod, sscanf, bsearch, calloc, getentropy, and a file that cannot be
 * opened (hosted: no such file; in the guest: no files at all, ENOSYS). */
static void check_more(void)
{
	char num[48], *end;
	unsigned m = draw() % 100000; /* one draw per statement: a fixed order */
	unsigned frac = draw() % 1000;
	unsigned ex = draw() % 20;
	snprintf(num, sizeof(num), "%u.%03ue-%u!", m, frac, ex);
	double v = strtod(num, &end);
	int a = 0;
	char w[3] = "";
	double f = 0;
	int got = sscanf("12 ab 3.5", "%d %2s %lf", &a, w, &f);
	static uint32_t keys[257];
	for (int i = 0; i < 257; i++)
		keys[i] = draw();
	qsort(keys, 257, sizeof(keys[0]), cmp_u32);
	uint32_t want = keys[draw() % 257];
	const uint32_t *hit = bsearch(&want, keys, 257, sizeof(keys[0]), cmp_u32);
	size_t n = 1 + draw() % 100000;
	unsigned char *z = calloc(n, 1);
	size_t nonzero = 0;
	for (size_t i = 0; z && i < n; i++)
		nonzero += z[i] != 0;
	free(z);
	unsigned char rnd[32];
	int ent = getentropy(rnd, sizeof(rnd));
	FILE *fp = fopen("/nonexistent/libc_check", "r");
	out("more %s %.17g %ld %d %d %s %.17g %ld %d %zu %d %d\n", num, v, (long)(end - num), got,
	    a, w, f, hit ? (long)(hit - keys) : -1l, hit ? *hit == want : 0, nonzero, ent,
	    fp == NULL);
	if (fp)
		fclose(fp);
}

static int libc_check(struct http_app_req *r, void *ctx)
{
	(void)ctx;
	const char *rest = http_app_rest(r, NULL);
	char *end;
	errno = 0;
	unsigned long long seed = strtoull(rest, &end, 10);
	if (!*rest || *end || errno)
		return http_app_send(r, 400, "GET /libc/SEED, SEED a decimal number\n", 38);
	lcg = seed;
	blen = 0;
	body[0] = 0;
	out("seed %llu\n", seed);
	check_printf();
	check_strtol();
	check_qsort();
	check_time();
	check_malloc();
	check_memcpy();
	check_more();
	printf("libc_check: seed %llu answered, %zu bytes\n", seed, blen);
	fflush(stdout);
	http_app_header(r, "Content-Type", "text/plain; charset=utf-8");
	int rc = http_app_stream(r, 200, blen, NULL, NULL);
	if (rc < 0)
		return rc;
	/* Under 2 KiB: an empty output buffer takes it whole (out_size). */
	if (http_app_write(r, body, blen) != (long)blen)
		return -SK_EINVAL;
	return http_app_end(r);
}

static const struct http_app_route routes[] = {
	{HTTP_GET, "/libc/", true, libc_check, NULL},
};

const struct http_app_def skiff_app = {.routes = routes, .nroutes = SK_ARRAY_LEN(routes),
				       .name = "libc_check"};
