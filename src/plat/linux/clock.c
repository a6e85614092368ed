/* clock.c — plat.h on Linux. */
#include <errno.h>
#include <sys/random.h>
#include <time.h>

#include "../plat.h"

sk_time_ns plat_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (sk_time_ns)ts.tv_sec * SK_NS_PER_S + (sk_time_ns)ts.tv_nsec;
}

int plat_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
