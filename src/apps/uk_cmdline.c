/* uk_cmdline.c — the unikernel's command line: space-separated key=value
 * words.  Keys (uk_main.c documents them for users): ip=ADDR/LEN gw=ADDR mac=MAC
 * spin-us=N exit-after=SECONDS shutdown-port=N fault=ud|pf|gp|de stats
 * no-msix, and the HTTP server's port=N max-conns=N header-timeout=S
 * keepalive-timeout=S max-body=N tcp-sndbuf=N tcp-rcvbuf=N.  A malformed
 * or unknown word is an error: a typo must not boot a guest with defaults
 * the user did not ask for. */
#include "../plat/kvm/kvm.h"
#include "uk_cmdline.h"

static bool streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

static int parse_ipv4(const char *s, uint32_t *ip)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		uint32_t part = 0;
		int digits = 0;
		while (*s >= '0' && *s <= '9' && digits < 4) {
			part = part * 10 + (uint32_t)(*s++ - '0');
			digits++;
		}
		if (!digits || part > 255)
			return -1;
		v = v << 8 | part;
		if (i < 3 && *s++ != '.')
			return -1;
	}
	if (*s)
		return -1;
	*ip = v;
	return 0;
}

static int parse_hex2(const char *s)
{
	int v = 0;
	for (int i = 0; i < 2; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		int b = parse_hex2(s);
		if (b < 0)
			return -1;
		mac[i] = (uint8_t)b;
		s += 2;
		if (i < 5 && *s++ != ':')
			return -1;
	}
	if (*s || (mac[0] & 1))
		return -1;
	return 0;
}

static int parse_word(char *w, struct uk_args *a)
{
	char *val = w;
	while (*val && *val != '=')
		val++;
	if (*val)
		*val++ = 0;
	uint64_t n;
	if (streq(w, "ip")) {
		char *slash = val;
		while (*slash && *slash != '/')
			slash++;
		if (!*slash)
			return -1;
		*slash = 0;
		if (parse_ipv4(val, &a->ip) < 0 || parse_u64(slash + 1, 32, &n) < 0 || n == 0)
			return -1;
		a->prefix_len = (uint8_t)n;
		return 0;
	}
	if (streq(w, "gw"))
		return parse_ipv4(val, &a->gw);
	if (streq(w, "mac")) {
		a->have_mac = true;
		return parse_mac(val, a->mac);
	}
	if (streq(w, "spin-us")) {
		a->spin_learn = streq(val, "auto");
		return a->spin_learn ? 0 : parse_u64(val, 1000000, &a->spin_us);
	}
	if (streq(w, "exit-after"))
		return parse_u64(val, 1000000000, &a->exit_after_s);
	if (streq(w, "shutdown-port")) {
		if (parse_u64(val, 65535, &n) < 0 || n == 0)
			return -1;
		a->shutdown_port = (uint16_t)n;
		return 0;
	}
	if (streq(w, "fault")) {
		static const char *const kinds[] = {"ud", "pf", "gp", "de"};
		for (size_t i = 0; i < SK_ARRAY_LEN(kinds); i++)
			if (streq(val, kinds[i]))
				a->fault = kinds[i];
		return a->fault ? 0 : -1;
	}
	if (streq(w, "port")) {
		if (parse_u64(val, 65535, &n) < 0 || n == 0)
			return -1;
		a->port = (uint16_t)n;
		return 0;
	}
	/* Bounds as `skiff serve`'s options; whether it fits in RAM is
	 * decided at boot, against the memory map. */
	if (streq(w, "max-conns"))
		return parse_u64(val, 1000000, &a->max_conns) < 0 || !a->max_conns ? -1 : 0;
	if (streq(w, "header-timeout"))
		return parse_u64(val, 86400, &a->header_timeout_s) < 0 || !a->header_timeout_s ? -1 : 0;
	if (streq(w, "keepalive-timeout"))
		return parse_u64(val, 86400, &a->keepalive_timeout_s) < 0 || !a->keepalive_timeout_s
			       ? -1
			       : 0;
	if (streq(w, "max-body")) {
		a->have_max_body = true;
		return parse_u64(val, 1ull << 40, &a->max_body);
	}
	/* The engine wants at least 1 KiB; above 1 MiB per socket nothing
	 * this server sends could use it. */
	if (streq(w, "tcp-sndbuf"))
		return parse_u64(val, 1u << 20, &a->tcp_sndbuf) < 0 || a->tcp_sndbuf < 1024 ? -1 : 0;
	if (streq(w, "tcp-rcvbuf"))
		return parse_u64(val, 1u << 20, &a->tcp_rcvbuf) < 0 || a->tcp_rcvbuf < 1024 ? -1 : 0;
	if (streq(w, "stats") && !*val) {
		a->stats = true;
		return 0;
	}
	if (streq(w, "no-msix") && !*val) {
		a->no_msix = true;
		return 0;
	}
	return -1;
}

int uk_cmdline_parse(char *s, struct uk_args *a)
{
	int rc = 0;
	while (*s) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		char *w = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = 0;
		char copy[64];
		size_t n = 0;
		while (w[n] && n < sizeof(copy) - 1) {
			copy[n] = w[n];
			n++;
		}
		copy[n] = 0;
		if (parse_word(w, a) < 0) {
			kprintf("skiff-uk: bad command-line word '%s'\n", copy);
			rc = -1;
		}
	}
	return rc;
}
