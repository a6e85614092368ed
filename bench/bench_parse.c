/* bench_parse.c — what parsing one request head costs, in ns, for the two
 * requests the benchmarks and browsers send most: ab's (what `make bench`
 * drives) and a Firefox page load's (11 fields, 456 bytes).
 *
 *   make bench-parse          (build/bench/bench_parse [ITERS])
 *
 * Each sample parses the head ITERS/20 times from a fresh http_req (as the
 * server does per request); the line shows the median and the fastest of
 * 20 samples, and ns per byte for the larger request.  A parse that does
 * not consume the whole head is an error (exit 1), so a broken parser
 * cannot look fast.  This used to run inside the unit tests, where it
 * asserted nothing and slowed every pass; numbers belong here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/parser.h"

#define SAMPLES 20
#define MAX_BODY (1u << 20)

static const char ab_req[] = "GET / HTTP/1.0\r\nHost: 198.18.0.2\r\nUser-Agent: ApacheBench/2.3\r\n"
			     "Accept: */*\r\n\r\n";
static const char firefox_req[] =
	"GET /docs/index.html?lang=en HTTP/1.1\r\n"
	"Host: 198.18.0.2:8080\r\n"
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0\r\n"
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n"
	"Accept-Language: en-US,en;q=0.5\r\n"
	"Accept-Encoding: gzip, deflate\r\n"
	"Connection: keep-alive\r\n"
	"Upgrade-Insecure-Requests: 1\r\n"
	"Sec-Fetch-Dest: document\r\n"
	"Sec-Fetch-Mode: navigate\r\n"
	"Sec-Fetch-Site: none\r\n"
	"Sec-Fetch-User: ?1\r\n\r\n";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Median ns per parse over SAMPLES samples; *best gets the fastest. */
static double ns_per_parse(const char *req, long iters, double *best)
{
	size_t n = strlen(req);
	long per = iters / SAMPLES > 0 ? iters / SAMPLES : 1;
	double s[SAMPLES];
	struct http_req r;
	for (int k = 0; k < SAMPLES; k++) {
		long ok = 0;
		double t0 = now_ns();
		for (long i = 0; i < per; i++) {
			http_req_init(&r, MAX_BODY);
			ok += http_parse_head(&r, (const uint8_t *)req, n) == (int)n;
		}
		s[k] = (now_ns() - t0) / (double)per;
		if (ok != per) {
			fprintf(stderr, "bench_parse: the parser did not take the whole %zu-byte head\n", n);
			exit(1);
		}
	}
	qsort(s, SAMPLES, sizeof(s[0]), cmp_double);
	*best = s[0];
	return s[SAMPLES / 2];
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: bench_parse [ITERS]   (default 2000000 parses per request)\n");
		return 0;
	}
	long iters = argc > 1 ? atol(argv[1]) : 2000000;
	if (iters <= 0) {
		fprintf(stderr, "bench_parse: ITERS must be a positive number\n");
		return 2;
	}
	double ab_best, ff_best;
	double ab = ns_per_parse(ab_req, iters, &ab_best);
	double ff = ns_per_parse(firefox_req, iters, &ff_best);
	printf("request    bytes  median ns  best ns  ns/byte\n");
	printf("ab         %5zu  %9.1f  %7.1f  %7.2f\n", strlen(ab_req), ab, ab_best, ab / (double)strlen(ab_req));
	printf("firefox    %5zu  %9.1f  %7.1f  %7.2f\n", strlen(firefox_req), ff, ff_best,
	       ff / (double)strlen(firefox_req));
	return 0;
}
