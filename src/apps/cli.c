/* cli.c — argument parsing shared by the commands. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plat/plat.h"
#include "cli.h"

int cli_parse_ipv4(const char *s, uint32_t *ip)
{
	struct in_addr a;
	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

int cli_parse_cidr(const char *s, uint32_t *ip, uint8_t *prefix)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = 0;
	char *end;
	long p = strtol(slash + 1, &end, 10);
	if (*end || end == slash + 1 || p < 1 || p > 32)
		return -1;
	if (cli_parse_ipv4(buf, ip) < 0)
		return -1;
	/* An address must be a host: not 0, not multicast or class E. */
	if (*ip == 0 || (*ip >> 28) >= 0xe)
		return -1;
	*prefix = (uint8_t)p;
	return 0;
}

int cli_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &tail) != 6)
		return -1;
	unsigned any = 0;
	for (int i = 0; i < 6; i++) {
		mac[i] = (uint8_t)v[i];
		any |= v[i];
	}
	if (!any || (mac[0] & 1))
		return -1;
	return 0;
}

unsigned long cli_parse_ulong(const char *cmd, const char *opt, const char *s, unsigned long lo,
			      unsigned long hi)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	/* strtoul accepts a sign and wraps negatives: refuse them here. */
	if (*s == '\0' || *s == '-' || *s == '+' || *end != '\0' || errno != 0 || v < lo || v > hi)
		cli_usage_error(cmd, "%s wants a number %lu..%lu, not '%s'", opt, lo, hi, s);
	return v;
}

int cli_random_mac(uint8_t mac[6])
{
	if (plat_random(mac, 6) < 0)
		return -1;
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02); /* unicast, locally administered */
	return 0;
}

void cli_format_ipv4(uint32_t ip, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

void cli_format_mac(const uint8_t m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "skiff %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'skiff %s --help'.\n", cmd);
	exit(2);
}
