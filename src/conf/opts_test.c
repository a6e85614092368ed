/* opts_test.c — the options module: every option with a good and a bad
 * value and the exact message, both command-line forms, the guest's words
 * giving the same messages as the hosted argv, the cross checks, the help
 * matching the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/iface.h"
#include "net/tcp.h"

#include "conf/opts.h"
#include "base/sk_addr.h"

static const struct opt_cmd *const cmds[] = {&opt_cmd_echo, &opt_cmd_tcp_client, &opt_cmd_ping,
					      &opt_cmd_serve, &opt_cmd_load, &opt_cmd_uk,
					      &opt_cmd_stat, &opt_cmd_app, &opt_cmd_impair,
					      &opt_cmd_proxy, &opt_cmd_switch, &opt_cmd_pktgen,
					      &opt_cmd_vm};

static char err[256];

static struct opts fresh(const struct opt_cmd *c)
{
	struct opts o;
	assert_int_equal(opt_init(&o, c, err, sizeof(err)), OPT_OK);
	return o;
}

/* Set name=value on cmd; returns the message ("" when accepted). */
static const char *try_set(const struct opt_cmd *c, const char *name, const char *value,
			   struct opts *out)
{
	struct opts o = fresh(c);
	err[0] = 0;
	int rc = opt_set(&o, name, value, err, sizeof(err));
	if (rc == OPT_OK) {
		assert_string_equal(err, "");
		if (out)
			*out = o;
	} else {
		assert_int_equal(rc, OPT_ERROR);
		assert_true(err[0] != 0);
	}
	return err;
}

/* ---- every option: a good value (and what it parses to), bad values and
 * their messages ---- */

struct good {
	const struct opt_cmd *cmd;
	const char *name, *value;
	enum opt_id id;
	uint64_t num;  /* NUM, SIZE, U64, CHOICE, ENDPOINT port, FLAG 1 */
	uint32_t ip;
	uint8_t len;
};

#define IP4(a, b, c, d) SK_IP4(a, b, c, d)

static const struct good goods[] = {
	{&opt_cmd_serve, "stack", "linux", OPT_STACK, 1, 0, 0},
	{&opt_cmd_serve, "stack", "skiff", OPT_STACK, 0, 0, 0},
	{&opt_cmd_serve, "dev", "tap:sk0", OPT_DEV, 0, 0, 0},
	{&opt_cmd_echo, "ip", "198.18.0.2/24", OPT_IP, 0, IP4(198, 18, 0, 2), 24},
	{&opt_cmd_echo, "ip", "10.0.0.1/32", OPT_IP, 0, IP4(10, 0, 0, 1), 32},
	{&opt_cmd_echo, "ip", "223.255.255.254/1", OPT_IP, 0, IP4(223, 255, 255, 254), 1},
	{&opt_cmd_serve, "ip", "198.18.0.2", OPT_IP, 0, IP4(198, 18, 0, 2), 0},
	{&opt_cmd_serve, "gw", "198.18.0.1", OPT_GW, 0, IP4(198, 18, 0, 1), 0},
	{&opt_cmd_echo, "ip6", "2001:2::2/64", OPT_IP6, 0, 0, 64},
	{&opt_cmd_uk, "ip6", "2001:2:0:1::5/128", OPT_IP6, 0, 0, 128},
	{&opt_cmd_echo, "ip6", "auto", OPT_IP6, 0, 0, 0},
	{&opt_cmd_ping, "gw6", "fe80::1", OPT_GW6, 0, 0, 0},
	{&opt_cmd_ping, "ipv6", NULL, OPT_PING_V6, 1, 0, 0},
	{&opt_cmd_uk, "mac", "02:00:00:AA:bb:0c", OPT_MAC, 0, 0, 0},
	{&opt_cmd_echo, "pcap", "/tmp/x.pcap", OPT_PCAP, 0, 0, 0},
	{&opt_cmd_echo, "spin-us", "0", OPT_SPIN_US, 0, 0, 0},
	{&opt_cmd_uk, "spin-us", "1000000", OPT_SPIN_US, 1000000, 0, 0},
	{&opt_cmd_echo, "spin-us", "auto", OPT_SPIN_US, OPT_NUM_AUTO, 0, 0},
	{&opt_cmd_uk, "spin-us", "auto", OPT_SPIN_US, OPT_NUM_AUTO, 0, 0},
	{&opt_cmd_uk, "stats", NULL, OPT_STATS, 1, 0, 0},
	{&opt_cmd_serve, "workers", "1", OPT_WORKERS, 1, 0, 0},
	{&opt_cmd_serve, "workers", "64", OPT_WORKERS, 64, 0, 0},
	{&opt_cmd_serve, "workers", "auto", OPT_WORKERS, OPT_NUM_AUTO, 0, 0},
	{&opt_cmd_echo, "workers", "2", OPT_WORKERS, 2, 0, 0},
	{&opt_cmd_uk, "port", "65535", OPT_PORT, 65535, 0, 0},
	{&opt_cmd_serve, "root", "www", OPT_ROOT, 0, 0, 0},
	{&opt_cmd_serve, "config", "sites.conf", OPT_CONFIG, 0, 0, 0},
	{&opt_cmd_serve, "cache-control", "max-age=3600, public", OPT_CACHE_CONTROL, 0, 0, 0},
	{&opt_cmd_uk, "cache-control", "no-cache", OPT_CACHE_CONTROL, 0, 0, 0},
	{&opt_cmd_serve, "tls-cert", "chain.pem", OPT_TLS_CERT, 0, 0, 0},
	{&opt_cmd_serve, "tls-key", "key.pem", OPT_TLS_KEY, 0, 0, 0},
	{&opt_cmd_serve, "tls-port", "8443", OPT_TLS_PORT, 8443, 0, 0},
	{&opt_cmd_serve, "tls-handshake-timeout", "3600", OPT_TLS_HANDSHAKE_TIMEOUT, 3600, 0, 0},
	{&opt_cmd_serve, "tls-ticket-rotate", "60", OPT_TLS_TICKET_ROTATE, 60, 0, 0},
	{&opt_cmd_serve, "tls-redirect", NULL, OPT_TLS_REDIRECT, 1, 0, 0},
	/* num: where the options module cut the text (key_off << 16 | name_len) */
	{&opt_cmd_serve, "tls-sni", "a.example:a.pem:a.key", OPT_TLS_SNI, 16u << 16 | 9, 0, 0},
	{&opt_cmd_app, "tls-sni", "*.Example.COM:/c:d/k:x", OPT_TLS_SNI, 17u << 16 | 13, 0, 0},
	{&opt_cmd_app, "tls-cert", "c.pem", OPT_TLS_CERT, 0, 0, 0},
	{&opt_cmd_app, "tls-port", "8443", OPT_TLS_PORT, 8443, 0, 0},
	{&opt_cmd_uk, "tls-port", "8443", OPT_TLS_PORT, 8443, 0, 0},
	{&opt_cmd_uk, "tls-handshake-timeout", "1", OPT_TLS_HANDSHAKE_TIMEOUT, 1, 0, 0},
	{&opt_cmd_uk, "tls-redirect", NULL, OPT_TLS_REDIRECT, 1, 0, 0},
	{&opt_cmd_uk, "tls-max-conns", "65536", OPT_TLS_MAX_CONNS, 65536, 0, 0},
	{&opt_cmd_serve, "access-log", "-", OPT_ACCESS_LOG, 0, 0, 0},
	{&opt_cmd_serve, "access-log", "/var/log/skiff/access.log", OPT_ACCESS_LOG, 0, 0, 0},
	{&opt_cmd_serve, "access-log-format", "combined", OPT_ACCESS_LOG_FORMAT, 0, 0, 0},
	{&opt_cmd_serve, "access-log-format", "json", OPT_ACCESS_LOG_FORMAT, 1, 0, 0},
	{&opt_cmd_serve, "tcp-cc", "newreno", OPT_TCP_CC, TCP_CC_NEWRENO, 0, 0},
	{&opt_cmd_uk, "tcp-cc", "cubic", OPT_TCP_CC, TCP_CC_CUBIC, 0, 0},
	{&opt_cmd_echo, "tcp-cc", "newreno", OPT_TCP_CC, TCP_CC_NEWRENO, 0, 0},
	{&opt_cmd_serve, "tcp-cc", "bbr", OPT_TCP_CC, TCP_CC_BBR, 0, 0},
	{&opt_cmd_uk, "tcp-cc", "bbr", OPT_TCP_CC, TCP_CC_BBR, 0, 0},
	{&opt_cmd_echo, "tcp-buf-max", "0", OPT_TCP_BUF_MAX, 0, 0, 0},
	{&opt_cmd_echo, "tcp-buf-max", "16M", OPT_TCP_BUF_MAX, 16u << 20, 0, 0},
	{&opt_cmd_serve, "tcp-buf-max", "1G", OPT_TCP_BUF_MAX, 1u << 30, 0, 0},
	{&opt_cmd_tcp_client, "tcp-mem", "1M", OPT_TCP_MEM, 1u << 20, 0, 0},
	{&opt_cmd_serve, "tcp-mem", "2G", OPT_TCP_MEM, 1ull << 31, 0, 0},
	{&opt_cmd_serve, "drain-timeout", "0", OPT_DRAIN_TIMEOUT, 0, 0, 0},
	{&opt_cmd_uk, "access-log", "console", OPT_UK_ACCESS_LOG, 0, 0, 0},
	{&opt_cmd_uk, "access-log", "udp:10.0.2.2:5140", OPT_UK_ACCESS_LOG, 5140, SK_IP4(10, 0, 2, 2), 0},
	{&opt_cmd_uk, "access-log-format", "json", OPT_ACCESS_LOG_FORMAT, 1, 0, 0},
	{&opt_cmd_uk, "drain-timeout", "0", OPT_DRAIN_TIMEOUT, 0, 0, 0},
	{&opt_cmd_uk, "log-level", "info", OPT_LOG_LEVEL, 2, 0, 0},
	{&opt_cmd_serve, "log-level", "error", OPT_LOG_LEVEL, 0, 0, 0},
	{&opt_cmd_serve, "log-level", "warn", OPT_LOG_LEVEL, 1, 0, 0},
	{&opt_cmd_serve, "log-level", "debug", OPT_LOG_LEVEL, 3, 0, 0},
	{&opt_cmd_serve, "error-log", "-", OPT_ERROR_LOG, 0, 0, 0},
	{&opt_cmd_serve, "error-log", "/var/log/skiff/error.log", OPT_ERROR_LOG, 0, 0, 0},
	{&opt_cmd_serve, "drain-timeout", "3600", OPT_DRAIN_TIMEOUT, 3600, 0, 0},
	{&opt_cmd_serve, "metrics", "127.0.0.1:9100", OPT_METRICS, 9100, IP4(127, 0, 0, 1), 0},
	{&opt_cmd_serve, "metrics", "198.18.0.2:65535", OPT_METRICS, 65535, IP4(198, 18, 0, 2), 0},
	{&opt_cmd_serve, "metrics-allow-remote", NULL, OPT_METRICS_ALLOW_REMOTE, 1, 0, 0},
	{&opt_cmd_serve, "control", "/run/skiff/web.sock", OPT_CONTROL, 0, 0, 0},
	{&opt_cmd_serve, "control", "none", OPT_CONTROL, 0, 0, 0},
	{&opt_cmd_uk, "metrics", "9100", OPT_UK_METRICS, 9100, 0, 0},
	{&opt_cmd_uk, "metrics", "1", OPT_UK_METRICS, 1, 0, 0},
	{&opt_cmd_uk, "max-conns", "1000000", OPT_MAX_CONNS, 1000000, 0, 0},
	{&opt_cmd_uk, "http2-sessions", "4096", OPT_HTTP2_SESSIONS, 4096, 0, 0},
	{&opt_cmd_serve, "header-timeout", "1", OPT_HEADER_TIMEOUT, 1, 0, 0},
	{&opt_cmd_app, "body-timeout", "2", OPT_BODY_TIMEOUT, 2, 0, 0},
	{&opt_cmd_app, "send-timeout", "86400", OPT_SEND_TIMEOUT, 86400, 0, 0},
	{&opt_cmd_proxy, "upstream", "127.0.0.1:8080", OPT_UPSTREAM, 1, 0, 0},
	{&opt_cmd_proxy, "upstream", "127.0.0.1:1,10.0.0.2:65535,198.18.0.1:80", OPT_UPSTREAM, 3, 0,
	 0},
	{&opt_cmd_proxy, "upstream", "app.internal:8080,[2001:2::5]:8080,127.0.0.1:8081", OPT_UPSTREAM,
	 3, 0, 0},
	{&opt_cmd_proxy, "upstream", "localhost:1,[::1]:65535", OPT_UPSTREAM, 2, 0, 0},
	{&opt_cmd_proxy, "purge-allow", "none", OPT_PURGE_ALLOW, 0, 0, 0},
	{&opt_cmd_proxy, "purge-allow", "127.0.0.0/8,::1,198.18.0.1,2001:2::/48", OPT_PURGE_ALLOW, 0, 0,
	 0},
	{&opt_cmd_proxy, "balance", "least", OPT_BALANCE, 1, 0, 0},
	{&opt_cmd_proxy, "balance", "rr", OPT_BALANCE, 0, 0, 0},
	{&opt_cmd_serve, "sendfile", "off", OPT_SENDFILE, 1, 0, 0},
	{&opt_cmd_serve, "sendfile", "on", OPT_SENDFILE, 0, 0, 0},
	{&opt_cmd_serve, "http2", "off", OPT_HTTP2, 1, 0, 0},
	{&opt_cmd_app, "http2", "on", OPT_HTTP2, 0, 0, 0},
	{&opt_cmd_serve, "tls-engine", "gnutls", OPT_TLS_ENGINE, 1, 0, 0},
	{&opt_cmd_serve, "tls-engine", "openssl", OPT_TLS_ENGINE, 0, 0, 0},
	{&opt_cmd_serve, "tls-alpn", "h2,http/1.1", OPT_TLS_ALPN, 1, 0, 0},
	{&opt_cmd_uk, "tls-alpn", "http/1.1", OPT_TLS_ALPN, 0, 0, 0},
	{&opt_cmd_proxy, "pool", "0", OPT_POOL, 0, 0, 0},
	{&opt_cmd_proxy, "pool", "65536", OPT_POOL, 65536, 0, 0},
	{&opt_cmd_proxy, "connect-timeout", "3600", OPT_CONNECT_TIMEOUT, 3600, 0, 0},
	{&opt_cmd_proxy, "first-byte-timeout", "1", OPT_FIRST_BYTE_TIMEOUT, 1, 0, 0},
	{&opt_cmd_proxy, "idle-timeout", "86400", OPT_UP_IDLE_TIMEOUT, 86400, 0, 0},
	{&opt_cmd_proxy, "fail-max", "1000", OPT_FAIL_MAX, 1000, 0, 0},
	{&opt_cmd_proxy, "fail-timeout", "1", OPT_FAIL_TIMEOUT, 1, 0, 0},
	{&opt_cmd_proxy, "cache", "256M", OPT_CACHE, 256ull << 20, 0, 0},
	{&opt_cmd_proxy, "cache", "0", OPT_CACHE, 0, 0, 0},
	{&opt_cmd_proxy, "no-x-cache", NULL, OPT_NO_X_CACHE, 1, 0, 0},
	{&opt_cmd_proxy, "max-conns", "64", OPT_MAX_CONNS, 64, 0, 0},
	{&opt_cmd_uk, "keepalive-timeout", "86400", OPT_KEEPALIVE_TIMEOUT, 86400, 0, 0},
	{&opt_cmd_uk, "max-body", "0", OPT_MAX_BODY, 0, 0, 0},
	{&opt_cmd_serve, "max-body", "1G", OPT_MAX_BODY, 1ull << 30, 0, 0},
	{&opt_cmd_serve, "max-body", "1024G", OPT_MAX_BODY, 1ull << 40, 0, 0},
	{&opt_cmd_uk, "tcp-sndbuf", "1K", OPT_TCP_SNDBUF, 1024, 0, 0},
	{&opt_cmd_serve, "tcp-sndbuf", "1M", OPT_TCP_SNDBUF, 1 << 20, 0, 0},
	{&opt_cmd_uk, "tcp-rcvbuf", "4k", OPT_TCP_RCVBUF, 4096, 0, 0},
	{&opt_cmd_serve, "trace", NULL, OPT_TRACE, 1, 0, 0},
	{&opt_cmd_uk, "exit-after", "1000000000", OPT_EXIT_AFTER, 1000000000, 0, 0},
	{&opt_cmd_uk, "shutdown-port", "9", OPT_SHUTDOWN_PORT, 9, 0, 0},
	{&opt_cmd_uk, "fault", "de", OPT_FAULT, 3, 0, 0},
	{&opt_cmd_uk, "no-msix", NULL, OPT_NO_MSIX, 1, 0, 0},
	{&opt_cmd_uk, "no-event-idx", NULL, OPT_NO_EVENT_IDX, 1, 0, 0},
	{&opt_cmd_uk, "offload", "off", OPT_OFFLOAD, 1, 0, 0},
	{&opt_cmd_uk, "offload", "on", OPT_OFFLOAD, 0, 0, 0},
	{&opt_cmd_load, "connections", "1000000", OPT_LOAD_CONNS, 1000000, 0, 0},
	{&opt_cmd_load, "requests", "1000000000000", OPT_LOAD_REQUESTS, 1000000000000ull, 0, 0},
	{&opt_cmd_load, "duration", "86400", OPT_LOAD_DURATION, 86400, 0, 0},
	{&opt_cmd_load, "keepalive", NULL, OPT_LOAD_KEEPALIVE, 1, 0, 0},
	{&opt_cmd_load, "hold", NULL, OPT_LOAD_HOLD, 1, 0, 0},
	{&opt_cmd_load, "ips", "64", OPT_LOAD_IPS, 64, 0, 0},
	{&opt_cmd_load, "timeout", "3600", OPT_LOAD_TIMEOUT, 3600, 0, 0},
	{&opt_cmd_ping, "count", "65535", OPT_PING_COUNT, 65535, 0, 0},
	{&opt_cmd_ping, "interval", "3600000", OPT_PING_INTERVAL, 3600000, 0, 0},
	{&opt_cmd_ping, "size", "1472", OPT_PING_SIZE, 1472, 0, 0},
	{&opt_cmd_ping, "size", "0", OPT_PING_SIZE, 0, 0, 0},
	{&opt_cmd_ping, "timeout", "3600", OPT_PING_TIMEOUT, 3600, 0, 0},
	{&opt_cmd_tcp_client, "connect", "198.18.0.1:7", OPT_TC_CONNECT, 7, IP4(198, 18, 0, 1), 0},
	{&opt_cmd_tcp_client, "connect", "[2001:2::1]:7007", OPT_TC_CONNECT, 7007, 0, 0},
	{&opt_cmd_tcp_client, "ip6", "2001:2::2/64", OPT_IP6, 0, 0, 64},
	{&opt_cmd_tcp_client, "gw6", "2001:2::1", OPT_GW6, 0, 0, 0},
	{&opt_cmd_load, "ip6", "2001:2::9/64", OPT_IP6, 0, 0, 64},
	{&opt_cmd_load, "ip6", "auto", OPT_IP6, 0, 0, 0},
	{&opt_cmd_load, "gw6", "2001:2::1", OPT_GW6, 0, 0, 0},
	{&opt_cmd_tcp_client, "send-file", "f", OPT_TC_SEND_FILE, 0, 0, 0},
	{&opt_cmd_tcp_client, "tcp-trace", "t.tsv", OPT_TC_TCP_TRACE, 0, 0, 0},
	{&opt_cmd_tcp_client, "send-random", "20M", OPT_TC_SEND_RANDOM, 20u << 20, 0, 0},
	{&opt_cmd_tcp_client, "send-random", "0", OPT_TC_SEND_RANDOM, 0, 0, 0},
	{&opt_cmd_tcp_client, "seed", "0xffffffffffffffff", OPT_TC_SEED, UINT64_MAX, 0, 0},
	{&opt_cmd_tcp_client, "seed", "18446744073709551615", OPT_TC_SEED, UINT64_MAX, 0, 0},
	{&opt_cmd_tcp_client, "expect-echo", NULL, OPT_TC_EXPECT_ECHO, 1, 0, 0},
	{&opt_cmd_tcp_client, "conns", "100000000", OPT_TC_CONNS, 100000000, 0, 0},
	{&opt_cmd_tcp_client, "sequential", NULL, OPT_TC_SEQUENTIAL, 1, 0, 0},
	{&opt_cmd_tcp_client, "parallel", "65536", OPT_TC_PARALLEL, 65536, 0, 0},
	{&opt_cmd_tcp_client, "timeout", "86400", OPT_TC_TIMEOUT, 86400, 0, 0},
	{&opt_cmd_impair, "a", "vm0", OPT_IMP_A, 0, 0, 0},
	{&opt_cmd_impair, "b", "sk0", OPT_IMP_B, 0, 0, 0},
	{&opt_cmd_impair, "dir", "b2a", OPT_IMP_DIR, 1, 0, 0},
	{&opt_cmd_impair, "loss", "2", OPT_IMP_LOSS, 2000000, 0, 0},
	{&opt_cmd_impair, "loss", "0.1", OPT_IMP_LOSS, 100000, 0, 0},
	{&opt_cmd_impair, "loss", "100", OPT_IMP_LOSS, 100000000, 0, 0},
	{&opt_cmd_impair, "delay", "5", OPT_IMP_DELAY, 5000000, 0, 0},
	{&opt_cmd_impair, "delay", "0.000001", OPT_IMP_DELAY, 1, 0, 0},
	{&opt_cmd_impair, "delay", "60000", OPT_IMP_DELAY, 60000000000ull, 0, 0},
	{&opt_cmd_impair, "jitter", "1.5", OPT_IMP_JITTER, 1500000, 0, 0},
	{&opt_cmd_impair, "reorder", "5", OPT_IMP_REORDER, 5000000, 0, 0},
	{&opt_cmd_impair, "duplicate", "1.0", OPT_IMP_DUPLICATE, 1000000, 0, 0},
	{&opt_cmd_impair, "corrupt", "0.05", OPT_IMP_CORRUPT, 50000, 0, 0},
	{&opt_cmd_impair, "rate", "100", OPT_IMP_RATE, 100000000, 0, 0},
	{&opt_cmd_impair, "rate", "0", OPT_IMP_RATE, 0, 0, 0},
	{&opt_cmd_impair, "limit", "1", OPT_IMP_LIMIT, 1, 0, 0},
	{&opt_cmd_impair, "seed", "0x2a", OPT_IMP_SEED, 42, 0, 0},
	{&opt_cmd_switch, "ports", "64", OPT_SW_PORTS, 64, 0, 0},
	{&opt_cmd_switch, "ports", "1", OPT_SW_PORTS, 1, 0, 0},
	{&opt_cmd_switch, "slots", "32768", OPT_SLOTS, 32768, 0, 0},
	{&opt_cmd_switch, "slots", "2", OPT_SLOTS, 2, 0, 0},
	{&opt_cmd_pktgen, "slots", "256", OPT_SLOTS, 256, 0, 0},
	{&opt_cmd_switch, "pcap-port", "0", OPT_SW_PCAP_PORT, 0, 0, 0},
	{&opt_cmd_switch, "pcap-port", "63", OPT_SW_PCAP_PORT, 63, 0, 0},
	{&opt_cmd_switch, "pcap", "sw.pcap", OPT_PCAP, 0, 0, 0},
	{&opt_cmd_switch, "age", "1", OPT_SW_AGE, 1, 0, 0},
	{&opt_cmd_switch, "age", "1000000", OPT_SW_AGE, 1000000, 0, 0},
	{&opt_cmd_switch, "spin-us", "auto", OPT_SPIN_US, OPT_NUM_AUTO, 0, 0},
	{&opt_cmd_switch, "stats", NULL, OPT_STATS, 1, 0, 0},
	{&opt_cmd_pktgen, "dev", "switch:sw/0", OPT_DEV, 0, 0, 0},
	{&opt_cmd_pktgen, "size", "60", OPT_PG_SIZE, 60, 0, 0},
	{&opt_cmd_pktgen, "size", "1514", OPT_PG_SIZE, 1514, 0, 0},
	{&opt_cmd_pktgen, "count", "1", OPT_PG_COUNT, 1, 0, 0},
	{&opt_cmd_pktgen, "count", "18446744073709551615", OPT_PG_COUNT, UINT64_MAX, 0, 0},
	{&opt_cmd_pktgen, "duration", "86400", OPT_LOAD_DURATION, 86400, 0, 0},
	{&opt_cmd_pktgen, "dst-mac", "ff:ff:ff:ff:ff:ff", OPT_PG_DST_MAC, 0, 0, 0},
	{&opt_cmd_pktgen, "dst-mac", "01:00:5E:00:00:01", OPT_PG_DST_MAC, 0, 0, 0},
	{&opt_cmd_pktgen, "dst-mac", "02:00:00:5e:00:99", OPT_PG_DST_MAC, 0, 0, 0},
	{&opt_cmd_pktgen, "mac", "02:00:00:5e:00:44", OPT_MAC, 0, 0, 0},
	{&opt_cmd_pktgen, "src-ip", "198.18.0.0", OPT_PG_SRC_IP, 0, IP4(198, 18, 0, 0), 0},
	{&opt_cmd_pktgen, "src-ip", "198.19.255.255", OPT_PG_SRC_IP, 0, IP4(198, 19, 255, 255), 0},
	{&opt_cmd_pktgen, "dst-ip", "198.18.1.1", OPT_PG_DST_IP, 0, IP4(198, 18, 1, 1), 0},
	{&opt_cmd_pktgen, "sport", "1", OPT_PG_SPORT, 1, 0, 0},
	{&opt_cmd_pktgen, "dport", "65535", OPT_PG_DPORT, 65535, 0, 0},
	{&opt_cmd_pktgen, "batch", "1", OPT_PG_BATCH, 1, 0, 0},
	{&opt_cmd_pktgen, "batch", "4096", OPT_PG_BATCH, 4096, 0, 0},
	{&opt_cmd_pktgen, "spin-us", "0", OPT_SPIN_US, 0, 0, 0},
	{&opt_cmd_pktgen, "stats", NULL, OPT_STATS, 1, 0, 0},
	/* vm: QEMU's side (num: a -p's HOST port). */
	{&opt_cmd_vm, "publish", "8080:80", OPT_VM_PUBLISH, 8080, 0, 0},
	{&opt_cmd_vm, "publish", "1:65535/udp", OPT_VM_PUBLISH, 1, 0, 0},
	{&opt_cmd_vm, "publish", "65535:7/tcp", OPT_VM_PUBLISH, 65535, 0, 0},
	{&opt_cmd_vm, "net", "user", OPT_VM_NET, 0, 0, 0},
	{&opt_cmd_vm, "net", "tap:vt0", OPT_VM_NET, 0, 0, 0},
	{&opt_cmd_vm, "net", "tap:123456789012345", OPT_VM_NET, 0, 0, 0},
	{&opt_cmd_vm, "mem", "256M", OPT_VM_MEM, 0, 0, 0},
	{&opt_cmd_vm, "mem", "1g", OPT_VM_MEM, 0, 0, 0},
	{&opt_cmd_vm, "mem", "1234567", OPT_VM_MEM, 0, 0, 0},
	{&opt_cmd_vm, "mem", "262144K", OPT_VM_MEM, 0, 0, 0},
	{&opt_cmd_vm, "smp", "1", OPT_VM_SMP, 1, 0, 0},
	{&opt_cmd_vm, "smp", "16", OPT_VM_SMP, 16, 0, 0},
	{&opt_cmd_vm, "accel", "auto", OPT_VM_ACCEL, 0, 0, 0},
	{&opt_cmd_vm, "accel", "tcg", OPT_VM_ACCEL, 2, 0, 0},
	{&opt_cmd_vm, "machine", "microvm", OPT_VM_MACHINE, 1, 0, 0},
	{&opt_cmd_vm, "image", "build/skiff-uk.elf", OPT_VM_IMAGE, 0, 0, 0},
	{&opt_cmd_vm, "proxy", NULL, OPT_VM_PROXY, 1, 0, 0},
	{&opt_cmd_vm, "dry-run", NULL, OPT_VM_DRY_RUN, 1, 0, 0},
	{&opt_cmd_vm, "root", "site", OPT_ROOT, 0, 0, 0},
	{&opt_cmd_vm, "config", "sites.conf", OPT_CONFIG, 0, 0, 0},
	{&opt_cmd_vm, "tls-port", "8443", OPT_TLS_PORT, 8443, 0, 0},
	{&opt_cmd_vm, "tls-redirect", NULL, OPT_TLS_REDIRECT, 1, 0, 0},
};

static void test_good_values(void **state)
{
	(void)state;
	bool covered[OPT_N] = {false};
	for (size_t i = 0; i < SK_ARRAY_LEN(goods); i++) {
		const struct good *g = &goods[i];
		struct opts o;
		const char *m = try_set(g->cmd, g->name, g->value, &o);
		if (*m)
			fail_msg("%s %s=%s refused: %s", g->cmd->name, g->name, g->value, m);
		const struct opt_val *v = &o.v[g->id];
		assert_true(v->given && v->set);
		assert_int_equal(v->num, g->num);
		assert_int_equal(v->ip, g->ip);
		assert_int_equal(v->len, g->len);
		if (g->value)
			assert_ptr_equal(v->str, g->value); /* points at the caller's text */
		covered[g->id] = true;
	}
	/* [v6]:PORT: the address in ip6, marked v6; a v4 one is not. */
	struct opts o6;
	assert_string_equal(try_set(&opt_cmd_tcp_client, "connect", "[2001:2::1]:7", &o6), "");
	const uint8_t want6[16] = {0x20, 0x01, 0, 2, [15] = 1};
	assert_true(o6.v[OPT_TC_CONNECT].v6);
	assert_memory_equal(o6.v[OPT_TC_CONNECT].ip6, want6, 16);
	assert_string_equal(try_set(&opt_cmd_tcp_client, "connect", "198.18.0.1:7", &o6), "");
	assert_false(o6.v[OPT_TC_CONNECT].v6);
	struct opts o;
	try_set(&opt_cmd_uk, "mac", "02:00:00:AA:bb:0c", &o);
	static const uint8_t mac[6] = {2, 0, 0, 0xaa, 0xbb, 0x0c};
	assert_memory_equal(o.v[OPT_MAC].mac, mac, 6);
	/* pktgen's destination may be multicast (the bytes as given). */
	try_set(&opt_cmd_pktgen, "dst-mac", "01:00:5E:00:00:01", &o);
	static const uint8_t mcast[6] = {1, 0, 0x5e, 0, 0, 1};
	assert_memory_equal(o.v[OPT_PG_DST_MAC].mac, mcast, 6);
	for (int id = 0; id < OPT_N; id++)
		if (!covered[id])
			fail_msg("option %s has no good-value case", opt_defs[id].name);
}

struct bad {
	const struct opt_cmd *cmd;
	const char *name, *value;
	const char *msg;
};

static const struct bad bads[] = {
	{&opt_cmd_serve, "stack", "foo", "stack: 'foo' is not one of skiff or linux"},
	{&opt_cmd_serve, "stack", "Skiff", "stack: 'Skiff' is not one of skiff or linux"},
	{&opt_cmd_serve, "dev", "", "dev: needs a value (DEV)"},
	{&opt_cmd_serve, "dev", NULL, "dev: needs a value (DEV)"},
	{&opt_cmd_echo, "ip", "198.18.0.2", "ip: '198.18.0.2' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_echo, "ip", "198.18.0.2/0", "ip: '198.18.0.2/0' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_echo, "ip", "198.18.0.2/33", "ip: '198.18.0.2/33' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_echo, "ip", "198.18.0.2/024", "ip: '198.18.0.2/024' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_echo, "ip", "198.18.0.2/", "ip: '198.18.0.2/' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_echo, "ip", "198.18.0/24", "ip: '198.18.0/24' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_uk, "ip", "256.1.1.1/24", "ip: '256.1.1.1/24' is not ADDR/LEN (e.g. 198.18.0.2/24)"},
	{&opt_cmd_uk, "ip", "0.0.0.0/24",
	 "ip: '0.0.0.0/24' is not a host address (not 0, multicast or class E)"},
	{&opt_cmd_uk, "ip", "224.0.0.1/24",
	 "ip: '224.0.0.1/24' is not a host address (not 0, multicast or class E)"},
	{&opt_cmd_uk, "ip", "240.0.0.1/24",
	 "ip: '240.0.0.1/24' is not a host address (not 0, multicast or class E)"},
	{&opt_cmd_serve, "ip", "300.1.1.1", "ip: '300.1.1.1' is not ADDR[/LEN] (e.g. 198.18.0.2/24)"},
	{&opt_cmd_uk, "gw", "10.0.2", "gw: '10.0.2' is not an IPv4 address (e.g. 198.18.0.1)"},
	{&opt_cmd_uk, "gw", "010.0.2.2", "gw: '010.0.2.2' is not an IPv4 address (e.g. 198.18.0.1)"},
	{&opt_cmd_uk, "gw", "10.0.2.2/24", "gw: '10.0.2.2/24' is not an IPv4 address (e.g. 198.18.0.1)"},
	{&opt_cmd_uk, "gw", "0.0.0.0",
	 "gw: '0.0.0.0' is not a host address (not 0, multicast or class E)"},
	{&opt_cmd_uk, "mac", "01:00:00:00:00:01",
	 "mac: '01:00:00:00:00:01' is not a unicast MAC (e.g. 02:00:00:00:00:01)"},
	{&opt_cmd_uk, "mac", "00:00:00:00:00:00",
	 "mac: '00:00:00:00:00:00' is not a unicast MAC (e.g. 02:00:00:00:00:01)"},
	{&opt_cmd_uk, "mac", "2:0:0:0:0:1", "mac: '2:0:0:0:0:1' is not a unicast MAC (e.g. 02:00:00:00:00:01)"},
	{&opt_cmd_uk, "mac", "02:00:00:00:00:01:", "mac: '02:00:00:00:00:01:' is not a unicast MAC (e.g. 02:00:00:00:00:01)"},
	{&opt_cmd_uk, "mac", "zz", "mac: 'zz' is not a unicast MAC (e.g. 02:00:00:00:00:01)"},
	{&opt_cmd_echo, "pcap", "", "pcap: needs a value (FILE)"},
	{&opt_cmd_serve, "workers", "0", "workers: '0' is not a number in 1..64 or auto"},
	{&opt_cmd_serve, "workers", "65", "workers: '65' is not a number in 1..64 or auto"},
	{&opt_cmd_serve, "workers", "two", "workers: 'two' is not a number in 1..64 or auto"},
	{&opt_cmd_serve, "workers", NULL, "workers: needs a value (N|auto)"},
	{&opt_cmd_echo, "workers", "-1", "workers: '-1' is not a number in 1..64 or auto"},
	{&opt_cmd_uk, "spin-us", "1000001", "spin-us: '1000001' is not a number in 0..1000000 or auto"},
	{&opt_cmd_uk, "spin-us", "-1", "spin-us: '-1' is not a number in 0..1000000 or auto"},
	{&opt_cmd_uk, "spin-us", "Auto", "spin-us: 'Auto' is not a number in 0..1000000 or auto"},
	{&opt_cmd_uk, "spin-us", "+1", "spin-us: '+1' is not a number in 0..1000000 or auto"},
	{&opt_cmd_uk, "spin-us", " 1", "spin-us: ' 1' is not a number in 0..1000000 or auto"},
	{&opt_cmd_uk, "stats", "1", "stats: takes no value, not '1'"},
	{&opt_cmd_uk, "stats", "", "stats: takes no value, not ''"},
	{&opt_cmd_uk, "port", "0", "port: '0' is not a number in 1..65535"},
	{&opt_cmd_uk, "port", "65536", "port: '65536' is not a number in 1..65535"},
	{&opt_cmd_uk, "port", "18446744073709551616",
	 "port: '18446744073709551616' is not a number in 1..65535"},
	{&opt_cmd_serve, "root", "", "root: needs a value (DIR)"},
	{&opt_cmd_serve, "config", "", "config: needs a value (FILE)"},
	{&opt_cmd_serve, "tls-cert", "", "tls-cert: needs a value (FILE)"},
	{&opt_cmd_serve, "tls-key", "", "tls-key: needs a value (FILE)"},
	{&opt_cmd_serve, "tls-port", "0", "tls-port: '0' is not a number in 1..65535"},
	{&opt_cmd_serve, "tls-handshake-timeout", "0",
	 "tls-handshake-timeout: '0' is not a number in 1..3600"},
	{&opt_cmd_serve, "tls-ticket-rotate", "59",
	 "tls-ticket-rotate: '59' is not a number in 60..604800"},
	{&opt_cmd_serve, "tls-redirect", "1", "tls-redirect: takes no value, not '1'"},
	{&opt_cmd_serve, "tls-sni", "", "tls-sni: needs a value (NAME:CERT:KEY)"},
	{&opt_cmd_serve, "tls-sni", "a.example:a.pem",
	 "tls-sni: 'a.example:a.pem' is not NAME:CERT:KEY (e.g. www.example.com:www.pem:www.key)"},
	{&opt_cmd_serve, "tls-sni", "a.example::a.key",
	 "tls-sni: 'a.example::a.key' is not NAME:CERT:KEY (e.g. www.example.com:www.pem:www.key)"},
	{&opt_cmd_serve, "tls-sni", "a.example:a.pem:",
	 "tls-sni: 'a.example:a.pem:' is not NAME:CERT:KEY (e.g. www.example.com:www.pem:www.key)"},
	{&opt_cmd_serve, "tls-sni", ":a.pem:a.key",
	 "tls-sni: ':a.pem:a.key' does not start with a host name (letters, digits, '-', '.'; or *.DOMAIN)"},
	{&opt_cmd_app, "tls-sni", "a_b.example:a.pem:a.key",
	 "tls-sni: 'a_b.example:a.pem:a.key' does not start with a host name (letters, digits, '-', '.'; or *.DOMAIN)"},
	{&opt_cmd_app, "tls-sni", "example.:a.pem:a.key",
	 "tls-sni: 'example.:a.pem:a.key' does not start with a host name (letters, digits, '-', '.'; or *.DOMAIN)"},
	{&opt_cmd_app, "tls-sni", "*.com:a.pem:a.key",
	 "tls-sni: '*.com:a.pem:a.key' does not start with a host name (letters, digits, '-', '.'; or *.DOMAIN)"},
	{&opt_cmd_app, "tls-sni", "-a.example:a.pem:a.key",
	 "tls-sni: '-a.example:a.pem:a.key' does not start with a host name (letters, digits, '-', '.'; or *.DOMAIN)"},
	{&opt_cmd_uk, "tls-sni", "a.example:a.pem:a.key", "unknown option 'tls-sni'"},
	{&opt_cmd_app, "tls-redirect", NULL, "unknown option 'tls-redirect'"},
	{&opt_cmd_uk, "tls-port", "65536", "tls-port: '65536' is not a number in 1..65535"},
	{&opt_cmd_uk, "tls-redirect", "yes", "tls-redirect: takes no value, not 'yes'"},
	{&opt_cmd_uk, "tls-max-conns", "0", "tls-max-conns: '0' is not a number in 1..65536"},
	{&opt_cmd_uk, "tls-max-conns", "65537", "tls-max-conns: '65537' is not a number in 1..65536"},
	{&opt_cmd_uk, "tls-cert", "x.pem", "unknown option 'tls-cert'"}, /* the files come in the module */
	{&opt_cmd_serve, "cache-control", "", "cache-control: needs a value (VALUE)"},
	{&opt_cmd_serve, "cache-control", "a\r\nSet-Cookie: x",
	 "cache-control: 'a\r\nSet-Cookie: x' is not a header value (printable ASCII, at most 256 "
	 "bytes)"},
	{&opt_cmd_uk, "cache-control", " max-age=1",
	 "cache-control: ' max-age=1' is not a header value (printable ASCII, at most 256 bytes)"},
	{&opt_cmd_uk, "max-conns", "0", "max-conns: '0' is not a number in 1..1000000"},
	{&opt_cmd_uk, "max-conns", "1000001", "max-conns: '1000001' is not a number in 1..1000000"},
	{&opt_cmd_uk, "http2-sessions", "0", "http2-sessions: '0' is not a number in 1..4096"},
	{&opt_cmd_uk, "header-timeout", "0", "header-timeout: '0' is not a number in 1..86400"},
	{&opt_cmd_app, "body-timeout", "0", "body-timeout: '0' is not a number in 1..86400"},
	{&opt_cmd_app, "send-timeout", "2s", "send-timeout: '2s' is not a number in 1..86400"},
	{&opt_cmd_proxy, "upstream", "127.0.0.1",
	 "upstream: '127.0.0.1' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "127.0.0.1:80,",
	 "upstream: '127.0.0.1:80,' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "0.0.0.0:80",
	 "upstream: '0.0.0.0:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "127.0.0.1:0",
	 "upstream: '127.0.0.1:0' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream",
	 "1.1.1.1:1,1.1.1.1:2,1.1.1.1:3,1.1.1.1:4,1.1.1.1:5,1.1.1.1:6,1.1.1.1:7,1.1.1.1:8,1.1.1.1:9,"
	 "1.1.1.1:10,1.1.1.1:11,1.1.1.1:12,1.1.1.1:13,1.1.1.1:14,1.1.1.1:15,1.1.1.1:16,1.1.1.1:17",
	 "upstream: '1.1.1.1:1,1.1.1.1:2,1.1.1.1:3,1.1.1.1:4,1.1.1.1:5,1.1.1.1:6,1.1.1.1:7,1.1.1.1:8,"
	 "1.1.1.1:9,1.1.1.1:10,1.1.1.1:11,1.1.1.1:12,1.1.1.1:13,1.1.1.1:14,1.1.1.1:15,1.1.1.1:16,"
	 "1.1.1.1:17' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "[::]:80",
	 "upstream: '[::]:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "[ff02::1]:80",
	 "upstream: '[ff02::1]:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "[::1]80",
	 "upstream: '[::1]80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "[::1:80",
	 "upstream: '[::1:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "-app:80",
	 "upstream: '-app:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "app-:80",
	 "upstream: 'app-:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "a..b:80",
	 "upstream: 'a..b:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "1.2.3:80",
	 "upstream: '1.2.3:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "app_x:80",
	 "upstream: 'app_x:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "[]:80",
	 "upstream: '[]:80' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "upstream", "app:0",
	 "upstream: 'app:0' is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)"},
	{&opt_cmd_proxy, "purge-allow", "127.0.0.1/33",
	 "purge-allow: '127.0.0.1/33' is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, at most 16)"},
	{&opt_cmd_proxy, "purge-allow", "::1/129",
	 "purge-allow: '::1/129' is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, at most 16)"},
	{&opt_cmd_proxy, "purge-allow", "localhost",
	 "purge-allow: 'localhost' is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, at most 16)"},
	{&opt_cmd_proxy, "purge-allow", "1.2.3.4/",
	 "purge-allow: '1.2.3.4/' is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, at most 16)"},
	{&opt_cmd_proxy, "purge-allow", "::ffff:1.2.3.4",
	 "purge-allow: '::ffff:1.2.3.4' is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, at most 16)"},
	{&opt_cmd_proxy, "purge-allow", "127.0.0.1,",
	 "purge-allow: '127.0.0.1,' is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, at most 16)"},
	{&opt_cmd_proxy, "balance", "random", "balance: 'random' is not one of rr or least"},
	{&opt_cmd_serve, "sendfile", "yes", "sendfile: 'yes' is not one of on or off"},
	{&opt_cmd_serve, "http2", "maybe", "http2: 'maybe' is not one of on or off"},
	{&opt_cmd_serve, "tls-engine", "boringssl",
	 "tls-engine: 'boringssl' is not one of openssl, gnutls or wolfssl"},
	{&opt_cmd_serve, "tls-alpn", "h2",
	 "tls-alpn: 'h2' is not one of http/1.1 or h2,http/1.1"},
	{&opt_cmd_proxy, "pool", "65537", "pool: '65537' is not a number in 0..65536"},
	{&opt_cmd_proxy, "connect-timeout", "0", "connect-timeout: '0' is not a number in 1..3600"},
	{&opt_cmd_proxy, "first-byte-timeout", "0",
	 "first-byte-timeout: '0' is not a number in 1..86400"},
	{&opt_cmd_proxy, "idle-timeout", "x", "idle-timeout: 'x' is not a number in 1..86400"},
	{&opt_cmd_proxy, "fail-max", "0", "fail-max: '0' is not a number in 1..1000"},
	{&opt_cmd_proxy, "fail-timeout", "86401", "fail-timeout: '86401' is not a number in 1..86400"},
	{&opt_cmd_proxy, "cache", "65G", "cache: '65G' is not a size in 0..68719476736 bytes (K, M, G: x1024)"},
	{&opt_cmd_proxy, "cache", "1T", "cache: '1T' is not a size in 0..68719476736 bytes (K, M, G: x1024)"},
	{&opt_cmd_proxy, "no-x-cache", "1", "no-x-cache: takes no value, not '1'"},
	{&opt_cmd_app, "upstream", "127.0.0.1:80", "unknown option 'upstream'"},
	{&opt_cmd_uk, "keepalive-timeout", "86401",
	 "keepalive-timeout: '86401' is not a number in 1..86400"},
	{&opt_cmd_uk, "max-body", "1025G",
	 "max-body: '1025G' is not a size in 0..1099511627776 bytes (K, M, G: x1024)"},
	{&opt_cmd_uk, "max-body", "1T",
	 "max-body: '1T' is not a size in 0..1099511627776 bytes (K, M, G: x1024)"},
	{&opt_cmd_uk, "max-body", "K", "max-body: 'K' is not a size in 0..1099511627776 bytes (K, M, G: x1024)"},
	{&opt_cmd_uk, "tcp-sndbuf", "1023",
	 "tcp-sndbuf: '1023' is not a size in 1024..1048576 bytes (K, M, G: x1024)"},
	{&opt_cmd_uk, "tcp-sndbuf", "2M",
	 "tcp-sndbuf: '2M' is not a size in 1024..1048576 bytes (K, M, G: x1024)"},
	{&opt_cmd_uk, "tcp-rcvbuf", "1m",
	 "tcp-rcvbuf: '1m' is not a size in 1024..1048576 bytes (K, M, G: x1024)"},
	{&opt_cmd_echo, "tcp-buf-max", "2G",
	 "tcp-buf-max: '2G' is not a size in 0..1073741824 bytes (K, M, G: x1024)"},
	{&opt_cmd_serve, "tcp-buf-max", "-1",
	 "tcp-buf-max: '-1' is not a size in 0..1073741824 bytes (K, M, G: x1024)"},
	{&opt_cmd_tcp_client, "tcp-mem", "1023K",
	 "tcp-mem: '1023K' is not a size in 1048576..2147483648 bytes (K, M, G: x1024)"},
	{&opt_cmd_echo, "tcp-mem", "3G",
	 "tcp-mem: '3G' is not a size in 1048576..2147483648 bytes (K, M, G: x1024)"},
	{&opt_cmd_serve, "trace", "yes", "trace: takes no value, not 'yes'"},
	{&opt_cmd_serve, "metrics-allow-remote", "yes",
	 "metrics-allow-remote: takes no value, not 'yes'"},
	{&opt_cmd_serve, "access-log", "", "access-log: needs a value (FILE|-)"},
	{&opt_cmd_serve, "tcp-cc", "reno", "tcp-cc: 'reno' is not one of cubic, newreno or bbr"},
	{&opt_cmd_uk, "tcp-cc", "BBR", "tcp-cc: 'BBR' is not one of cubic, newreno or bbr"},
	{&opt_cmd_serve, "access-log-format", "JSON",
	 "access-log-format: 'JSON' is not one of combined or json"},
	{&opt_cmd_serve, "drain-timeout", "3601", "drain-timeout: '3601' is not a number in 0..3600"},
	{&opt_cmd_serve, "drain-timeout", "-1", "drain-timeout: '-1' is not a number in 0..3600"},
	{&opt_cmd_uk, "access-log", "-",
	 "access-log: '-' is not console or udp:ADDR:PORT (e.g. udp:10.0.2.2:5140)"},
	{&opt_cmd_uk, "access-log", "udp:10.0.2.2",
	 "access-log: 'udp:10.0.2.2' is not console or udp:ADDR:PORT (e.g. udp:10.0.2.2:5140)"},
	{&opt_cmd_uk, "access-log", "udp:10.0.2.2:0",
	 "access-log: 'udp:10.0.2.2:0' is not console or udp:ADDR:PORT (e.g. udp:10.0.2.2:5140)"},
	{&opt_cmd_uk, "access-log", "tcp:10.0.2.2:514",
	 "access-log: 'tcp:10.0.2.2:514' is not console or udp:ADDR:PORT (e.g. udp:10.0.2.2:5140)"},
	{&opt_cmd_uk, "drain-timeout", "3601", "drain-timeout: '3601' is not a number in 0..3600"},
	{&opt_cmd_serve, "log-level", "notice",
	 "log-level: 'notice' is not one of error, warn, info or debug"},
	{&opt_cmd_serve, "log-level", "", "log-level: needs a value (error|warn|info|debug)"},
	{&opt_cmd_serve, "error-log", "", "error-log: needs a value (FILE|-)"},
	{&opt_cmd_uk, "exit-after", "0", "exit-after: '0' is not a number in 1..1000000000"},
	{&opt_cmd_uk, "shutdown-port", "0", "shutdown-port: '0' is not a number in 1..65535"},
	{&opt_cmd_uk, "fault", "xx", "fault: 'xx' is not one of ud, pf, gp or de"},
	{&opt_cmd_uk, "no-msix", "1", "no-msix: takes no value, not '1'"},
	{&opt_cmd_uk, "no-event-idx", "on", "no-event-idx: takes no value, not 'on'"},
	{&opt_cmd_uk, "offload", "tso", "offload: 'tso' is not one of on or off"},
	{&opt_cmd_load, "connections", "0", "connections: '0' is not a number in 1..1000000"},
	{&opt_cmd_load, "requests", "0", "requests: '0' is not a number in 1..1000000000000"},
	{&opt_cmd_load, "duration", "86401", "duration: '86401' is not a number in 1..86400"},
	{&opt_cmd_load, "keepalive", "1", "keepalive: takes no value, not '1'"},
	{&opt_cmd_load, "hold", "1", "hold: takes no value, not '1'"},
	{&opt_cmd_load, "ips", "65", "ips: '65' is not a number in 1..64"},
	{&opt_cmd_load, "timeout", "3601", "timeout: '3601' is not a number in 1..3600"},
	{&opt_cmd_ping, "count", "65536", "count: '65536' is not a number in 1..65535"},
	{&opt_cmd_ping, "interval", "0", "interval: '0' is not a number in 1..3600000"},
	{&opt_cmd_ping, "size", "1473", "size: '1473' is not a number in 0..1472"},
	{&opt_cmd_ping, "timeout", "0", "timeout: '0' is not a number in 1..3600"},
	{&opt_cmd_tcp_client, "connect", "198.18.0.1", "connect: '198.18.0.1' is not ADDR:PORT (e.g. 198.18.0.1:7, [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "198.18.0.1:0", "connect: '198.18.0.1:0' is not ADDR:PORT (e.g. 198.18.0.1:7, [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", ":7", "connect: ':7' is not ADDR:PORT (e.g. 198.18.0.1:7, [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "2001:2::1:7", "connect: '2001:2::1:7' is not ADDR:PORT (e.g. 198.18.0.1:7, [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "[2001:2::1]", "connect: '[2001:2::1]' is not [ADDR]:PORT (e.g. [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "[2001:2::1]:0", "connect: '[2001:2::1]:0' is not [ADDR]:PORT (e.g. [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "[2001:2::1:7", "connect: '[2001:2::1:7' is not [ADDR]:PORT (e.g. [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "[]:7", "connect: '[]:7' is not [ADDR]:PORT (e.g. [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "[2001:2:::1]:7", "connect: '[2001:2:::1]:7' is not [ADDR]:PORT (e.g. [2001:2::1]:7)"},
	{&opt_cmd_tcp_client, "connect", "[ff02::1]:7", "connect: '[ff02::1]:7' is not a unicast address (not ::, ::1 or ff00::/8)"},
	{&opt_cmd_tcp_client, "connect", "[::]:7", "connect: '[::]:7' is not a unicast address (not ::, ::1 or ff00::/8)"},
	{&opt_cmd_tcp_client, "ip6", "2001:2::2", "ip6: '2001:2::2' is not ADDR/LEN (e.g. 2001:2::2/64)"},
	{&opt_cmd_load, "ip6", "fe80::1/64",
	 "ip6: 'fe80::1/64' is not a global unicast address (not ::, ::1, ff00::/8 or fe80::/10)"},
	{&opt_cmd_load, "gw6", "ff02::2", "gw6: 'ff02::2' is not a unicast address (not ::, ::1 or ff00::/8)"},
	{&opt_cmd_serve, "metrics", "127.0.0.1", "metrics: '127.0.0.1' is not ADDR:PORT (e.g. 198.18.0.1:7)"},
	{&opt_cmd_serve, "metrics", "9100", "metrics: '9100' is not ADDR:PORT (e.g. 198.18.0.1:7)"},
	{&opt_cmd_serve, "metrics", "[::1]:9100", "metrics: '[::1]:9100' is not ADDR:PORT (e.g. 198.18.0.1:7)"},
	{&opt_cmd_serve, "metrics", "127.0.0.1:65536",
	 "metrics: '127.0.0.1:65536' is not ADDR:PORT (e.g. 198.18.0.1:7)"},
	{&opt_cmd_serve, "metrics", "0.0.0.0:9100",
	 "metrics: '0.0.0.0:9100' is not a host address (not 0, multicast or class E)"},
	{&opt_cmd_serve, "metrics", "", "metrics: needs a value (ADDR:PORT)"},
	{&opt_cmd_serve, "control", "", "control: needs a value (PATH|none)"},
	{&opt_cmd_uk, "metrics", "0", "metrics: '0' is not a number in 1..65535"},
	{&opt_cmd_uk, "metrics", "127.0.0.1:9100",
	 "metrics: '127.0.0.1:9100' is not a number in 1..65535"},
	{&opt_cmd_tcp_client, "connect", "0.0.0.0:7",
	 "connect: '0.0.0.0:7' is not a host address (not 0, multicast or class E)"},
	{&opt_cmd_tcp_client, "send-file", "", "send-file: needs a value (FILE)"},
	{&opt_cmd_tcp_client, "tcp-trace", "", "tcp-trace: needs a value (FILE)"},
	{&opt_cmd_tcp_client, "send-random", "1x",
	 "send-random: '1x' is not a size in 0..1125899906842624 bytes (K, M, G: x1024)"},
	{&opt_cmd_tcp_client, "send-random", "17179869184G",
	 "send-random: '17179869184G' is not a size in 0..1125899906842624 bytes (K, M, G: x1024)"},
	{&opt_cmd_tcp_client, "seed", "0x", "seed: '0x' is not a 64-bit number (decimal or 0x hex)"},
	{&opt_cmd_tcp_client, "seed", "0x10000000000000000",
	 "seed: '0x10000000000000000' is not a 64-bit number (decimal or 0x hex)"},
	{&opt_cmd_tcp_client, "seed", "-1", "seed: '-1' is not a 64-bit number (decimal or 0x hex)"},
	{&opt_cmd_tcp_client, "expect-echo", "x", "expect-echo: takes no value, not 'x'"},
	{&opt_cmd_tcp_client, "conns", "0", "conns: '0' is not a number in 1..100000000"},
	{&opt_cmd_tcp_client, "sequential", "x", "sequential: takes no value, not 'x'"},
	{&opt_cmd_tcp_client, "parallel", "65537", "parallel: '65537' is not a number in 1..65536"},
	{&opt_cmd_tcp_client, "timeout", "86401", "timeout: '86401' is not a number in 1..86400"},
	{&opt_cmd_echo, "ip6", "2001:2::2", "ip6: '2001:2::2' is not ADDR/LEN (e.g. 2001:2::2/64)"},
	{&opt_cmd_echo, "ip6", "2001:2::2/129", "ip6: '2001:2::2/129' is not ADDR/LEN (e.g. 2001:2::2/64)"},
	{&opt_cmd_echo, "ip6", "2001:2::2/0", "ip6: '2001:2::2/0' is not ADDR/LEN (e.g. 2001:2::2/64)"},
	{&opt_cmd_echo, "ip6", "2001:2:::2/64", "ip6: '2001:2:::2/64' is not ADDR/LEN (e.g. 2001:2::2/64)"},
	{&opt_cmd_uk, "ip6", "fe80::1/64",
	 "ip6: 'fe80::1/64' is not a global unicast address (not ::, ::1, ff00::/8 or fe80::/10)"},
	{&opt_cmd_uk, "ip6", "ff02::1/64",
	 "ip6: 'ff02::1/64' is not a global unicast address (not ::, ::1, ff00::/8 or fe80::/10)"},
	{&opt_cmd_echo, "gw6", "1.2.3.4", "gw6: '1.2.3.4' is not an IPv6 address (e.g. 2001:2::1)"},
	{&opt_cmd_echo, "gw6", "::", "gw6: '::' is not a unicast address (not ::, ::1 or ff00::/8)"},
	{&opt_cmd_ping, "ipv6", "x", "ipv6: takes no value, not 'x'"},
	{&opt_cmd_impair, "a", "", "a: needs a value (IFACE)"},
	{&opt_cmd_impair, "b", NULL, "b: needs a value (IFACE)"},
	{&opt_cmd_impair, "dir", "ab", "dir: 'ab' is not one of a2b, b2a or both"},
	{&opt_cmd_impair, "loss", "100.5",
	 "loss: '100.5' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "loss", "-1", "loss: '-1' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "loss", ".5", "loss: '.5' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "loss", "1.", "loss: '1.' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "loss", "1e-3",
	 "loss: '1e-3' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "delay", "0.0000001",
	 "delay: '0.0000001' is not a number in 0..60000 (at most 6 decimals)"},
	{&opt_cmd_impair, "delay", "60000.000001",
	 "delay: '60000.000001' is not a number in 0..60000 (at most 6 decimals)"},
	{&opt_cmd_impair, "delay", "99999999999999999999",
	 "delay: '99999999999999999999' is not a number in 0..60000 (at most 6 decimals)"},
	{&opt_cmd_impair, "jitter", "1,5", "jitter: '1,5' is not a number in 0..60000 (at most 6 decimals)"},
	{&opt_cmd_impair, "reorder", "101", "reorder: '101' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "duplicate", "x", "duplicate: 'x' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "corrupt", "1.2.3",
	 "corrupt: '1.2.3' is not a number in 0..100 (at most 6 decimals)"},
	{&opt_cmd_impair, "rate", "100001",
	 "rate: '100001' is not a number in 0..100000 (at most 6 decimals)"},
	{&opt_cmd_impair, "limit", "0", "limit: '0' is not a number in 1..1000000"},
	{&opt_cmd_impair, "seed", "x", "seed: 'x' is not a 64-bit number (decimal or 0x hex)"},
	{&opt_cmd_switch, "ports", "0", "ports: '0' is not a number in 1..64"},
	{&opt_cmd_switch, "ports", "65", "ports: '65' is not a number in 1..64"},
	{&opt_cmd_switch, "slots", "1", "slots: '1' is not a number in 2..32768"},
	{&opt_cmd_switch, "slots", "65536", "slots: '65536' is not a number in 2..32768"},
	{&opt_cmd_switch, "slots", "1000", "slots: '1000' is not a power of two in 2..32768"},
	{&opt_cmd_pktgen, "slots", "3", "slots: '3' is not a power of two in 2..32768"},
	{&opt_cmd_pktgen, "slots", "4k", "slots: '4k' is not a number in 2..32768"},
	{&opt_cmd_switch, "pcap-port", "64", "pcap-port: '64' is not a number in 0..63"},
	{&opt_cmd_switch, "pcap-port", "-1", "pcap-port: '-1' is not a number in 0..63"},
	{&opt_cmd_switch, "pcap", "", "pcap: needs a value (FILE)"},
	{&opt_cmd_switch, "age", "0", "age: '0' is not a number in 1..1000000"},
	{&opt_cmd_switch, "age", "1000001", "age: '1000001' is not a number in 1..1000000"},
	{&opt_cmd_switch, "spin-us", "1000001",
	 "spin-us: '1000001' is not a number in 0..1000000 or auto"},
	{&opt_cmd_switch, "stats", "1", "stats: takes no value, not '1'"},
	{&opt_cmd_switch, "dev", "switch:sw/0", "unknown option 'dev'"},
	{&opt_cmd_pktgen, "dev", "", "dev: needs a value (DEV)"},
	{&opt_cmd_pktgen, "size", "59", "size: '59' is not a number in 60..1514"},
	{&opt_cmd_pktgen, "size", "1515", "size: '1515' is not a number in 60..1514"},
	{&opt_cmd_pktgen, "count", "0", "count: '0' is not a number in 1..18446744073709551615"},
	{&opt_cmd_pktgen, "count", "18446744073709551616",
	 "count: '18446744073709551616' is not a number in 1..18446744073709551615"},
	{&opt_cmd_pktgen, "duration", "0", "duration: '0' is not a number in 1..86400"},
	{&opt_cmd_pktgen, "dst-mac", "00:00:00:00:00:00",
	 "dst-mac: '00:00:00:00:00:00' is not a MAC other than all-zero (e.g. ff:ff:ff:ff:ff:ff)"},
	{&opt_cmd_pktgen, "dst-mac", "ff:ff:ff:ff:ff",
	 "dst-mac: 'ff:ff:ff:ff:ff' is not a MAC other than all-zero (e.g. ff:ff:ff:ff:ff:ff)"},
	{&opt_cmd_pktgen, "dst-mac", "f:ff:ff:ff:ff:ff:f",
	 "dst-mac: 'f:ff:ff:ff:ff:ff:f' is not a MAC other than all-zero (e.g. ff:ff:ff:ff:ff:ff)"},
	{&opt_cmd_pktgen, "mac", "ff:ff:ff:ff:ff:ff",
	 "mac: 'ff:ff:ff:ff:ff:ff' is not a unicast MAC (e.g. 02:00:00:00:00:01)"},
	{&opt_cmd_pktgen, "src-ip", "10.0.0.1",
	 "src-ip: '10.0.0.1' is not inside 198.18.0.0/15 (the benchmarking range)"},
	{&opt_cmd_pktgen, "src-ip", "198.20.0.1",
	 "src-ip: '198.20.0.1' is not inside 198.18.0.0/15 (the benchmarking range)"},
	{&opt_cmd_pktgen, "dst-ip", "198.18.0", "dst-ip: '198.18.0' is not an IPv4 address (e.g. 198.18.0.1)"},
	{&opt_cmd_pktgen, "dst-ip", "198.17.255.255",
	 "dst-ip: '198.17.255.255' is not inside 198.18.0.0/15 (the benchmarking range)"},
	{&opt_cmd_pktgen, "sport", "0", "sport: '0' is not a number in 1..65535"},
	{&opt_cmd_pktgen, "dport", "65536", "dport: '65536' is not a number in 1..65535"},
	{&opt_cmd_pktgen, "batch", "0", "batch: '0' is not a number in 1..4096"},
	{&opt_cmd_pktgen, "batch", "4097", "batch: '4097' is not a number in 1..4096"},
	{&opt_cmd_pktgen, "spin-us", "x", "spin-us: 'x' is not a number in 0..1000000 or auto"},
	{&opt_cmd_pktgen, "stats", "", "stats: takes no value, not ''"},
	{&opt_cmd_pktgen, "ip", "198.18.0.1/24", "unknown option 'ip'"},
	{&opt_cmd_vm, "publish", "80", "publish: '80' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "0:80", "publish: '0:80' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "8080:65536",
	 "publish: '8080:65536' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "8080:080080",
	 "publish: '8080:080080' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "8080:80/sctp",
	 "publish: '8080:80/sctp' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "8080:80/", "publish: '8080:80/' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "+80:80", "publish: '+80:80' is not HOST:GUEST[/udp|/tcp] with ports 1..65535"},
	{&opt_cmd_vm, "publish", "", "publish: needs a value (HOST:GUEST[/PROTO])"},
	{&opt_cmd_vm, "net", "tap:", "net: 'tap:' is not user or tap:NAME (NAME 1..15 bytes, no comma)"},
	{&opt_cmd_vm, "net", "tap:1234567890123456",
	 "net: 'tap:1234567890123456' is not user or tap:NAME (NAME 1..15 bytes, no comma)"},
	{&opt_cmd_vm, "net", "tap:a,script=x",
	 "net: 'tap:a,script=x' is not user or tap:NAME (NAME 1..15 bytes, no comma)"},
	{&opt_cmd_vm, "net", "bridge", "net: 'bridge' is not user or tap:NAME (NAME 1..15 bytes, no comma)"},
	{&opt_cmd_vm, "mem", "12345678",
	 "mem: '12345678' is not a size like 256M or 1G (up to 7 digits; K, M or G)"},
	{&opt_cmd_vm, "mem", "1T", "mem: '1T' is not a size like 256M or 1G (up to 7 digits; K, M or G)"},
	{&opt_cmd_vm, "mem", "M", "mem: 'M' is not a size like 256M or 1G (up to 7 digits; K, M or G)"},
	{&opt_cmd_vm, "mem", "1GG", "mem: '1GG' is not a size like 256M or 1G (up to 7 digits; K, M or G)"},
	/* smp keeps the words skiff vm gave before the table (tests/vm_smp.sh). */
	{&opt_cmd_vm, "smp", "0", "--smp wants a number of vCPUs 1..16, not '0'"},
	{&opt_cmd_vm, "smp", "17", "--smp wants a number of vCPUs 1..16, not '17'"},
	{&opt_cmd_vm, "smp", "2x", "--smp wants a number of vCPUs 1..16, not '2x'"},
	{&opt_cmd_vm, "smp", "", "--smp wants a number of vCPUs 1..16, not ''"},
	{&opt_cmd_vm, "accel", "hvf", "accel: 'hvf' is not one of auto, kvm or tcg"},
	{&opt_cmd_vm, "machine", "q35", "machine: 'q35' is not one of pc or microvm"},
	{&opt_cmd_vm, "image", "", "image: needs a value (PATH)"},
	{&opt_cmd_vm, "proxy", "1", "proxy: takes no value, not '1'"},
	{&opt_cmd_vm, "dry-run", "yes", "dry-run: takes no value, not 'yes'"},
	{&opt_cmd_vm, "tls-port", "0", "tls-port: '0' is not a number in 1..65535"},
	{&opt_cmd_vm, "stats", NULL, "unknown option 'stats'"},
	/* An option of another command is unknown here. */
	{&opt_cmd_echo, "port", "80", "unknown option 'port'"},
	{&opt_cmd_uk, "dev", "tap:x", "unknown option 'dev'"},
	{&opt_cmd_uk, "no-such-key", "1", "unknown option 'no-such-key'"},
};

static void test_bad_values(void **state)
{
	(void)state;
	bool covered[OPT_N] = {false};
	for (size_t i = 0; i < SK_ARRAY_LEN(bads); i++) {
		const struct bad *b = &bads[i];
		const char *m = try_set(b->cmd, b->name, b->value, NULL);
		if (strcmp(m, b->msg))
			fail_msg("%s %s=%s: got \"%s\", want \"%s\"", b->cmd->name, b->name,
				 b->value ? b->value : "(none)", m, b->msg);
		for (int id = 0; id < OPT_N; id++)
			if (!strcmp(opt_defs[id].name, b->name))
				covered[id] = true;
	}
	for (int id = 0; id < OPT_N; id++)
		if (!covered[id])
			fail_msg("option %s has no bad-value case", opt_defs[id].name);
}

/* ---- the two command lines ---- */

static int parse(struct opts *o, const struct opt_cmd *c, const char *const *args)
{
	char *argv[64];
	int argc = 0;
	argv[argc++] = (char *)c->name;
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	*o = fresh(c);
	err[0] = 0;
	return opt_parse_argv(o, argc, argv, err, sizeof(err));
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_argv_forms(void **state)
{
	(void)state;
	struct opts o;
	/* --name value, --name=value, flags, positional anywhere. */
	assert_int_equal(parse(&o, &opt_cmd_load,
			       ARGS("-c", "8", "http://198.18.0.2/", "--timeout=5", "-k", "--stats")),
			 OPT_OK);
	assert_int_equal(opt_num(&o, OPT_LOAD_CONNS), 8);
	assert_int_equal(opt_num(&o, OPT_LOAD_TIMEOUT), 5);
	assert_true(opt_given(&o, OPT_LOAD_KEEPALIVE) && opt_given(&o, OPT_STATS));
	assert_false(opt_given(&o, OPT_LOAD_HOLD));
	assert_int_equal(o.nargs, 1);
	assert_string_equal(o.args[0], "http://198.18.0.2/");
	/* -cN, bundled flags with a value last, the last of a repeated option. */
	assert_int_equal(parse(&o, &opt_cmd_load, ARGS("-c16", "-kn", "100", "-c", "4", "u")), OPT_OK);
	assert_int_equal(opt_num(&o, OPT_LOAD_CONNS), 4);
	assert_int_equal(opt_num(&o, OPT_LOAD_REQUESTS), 100);
	assert_true(opt_given(&o, OPT_LOAD_KEEPALIVE));
	/* The default is set but not given. */
	assert_true(o.v[OPT_LOAD_TIMEOUT].set);
	assert_false(opt_given(&o, OPT_LOAD_TIMEOUT));
	assert_int_equal(opt_num(&o, OPT_LOAD_TIMEOUT), 10);
	/* After --, everything is positional; "-" is positional. */
	assert_int_equal(parse(&o, &opt_cmd_ping, ARGS("--", "-c")), OPT_OK);
	assert_string_equal(o.args[0], "-c");
	assert_int_equal(parse(&o, &opt_cmd_ping, ARGS("-")), OPT_OK);
	assert_string_equal(o.args[0], "-");
	/* Help, wherever it comes. */
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--port", "80", "--help")), OPT_HELP);
	assert_int_equal(parse(&o, &opt_cmd_ping, ARGS("-h")), OPT_HELP);
	assert_int_equal(parse(&o, &opt_cmd_load, ARGS("-kh")), OPT_HELP);
	/* Errors. */
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--bogus")), OPT_ERROR);
	assert_string_equal(err, "unknown option 'bogus'");
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--bogus=1")), OPT_ERROR);
	assert_string_equal(err, "unknown option 'bogus'");
	assert_int_equal(parse(&o, &opt_cmd_load, ARGS("-x")), OPT_ERROR);
	assert_string_equal(err, "unknown option '-x'");
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--port")), OPT_ERROR);
	assert_string_equal(err, "port: needs a value (N)");
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--port=")), OPT_ERROR);
	assert_string_equal(err, "port: needs a value (N)");
	assert_int_equal(parse(&o, &opt_cmd_load, ARGS("-c")), OPT_ERROR);
	assert_string_equal(err, "connections: needs a value (N)");
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--stats=1")), OPT_ERROR);
	assert_string_equal(err, "stats: takes no value, not '1'");
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("extra")), OPT_ERROR);
	assert_string_equal(err, "unexpected argument 'extra'");
	assert_int_equal(parse(&o, &opt_cmd_load, ARGS("u1", "u2")), OPT_ERROR);
	assert_string_equal(err, "unexpected argument 'u2'");
	/* switch NAME and pktgen's mode: one positional among the options. */
	assert_int_equal(parse(&o, &opt_cmd_switch, ARGS("sw0", "--ports", "4", "--stats")), OPT_OK);
	assert_int_equal(o.nargs, 1);
	assert_string_equal(o.args[0], "sw0");
	assert_int_equal(opt_num(&o, OPT_SW_PORTS), 4);
	assert_int_equal(opt_num(&o, OPT_SLOTS), 1024);
	assert_int_equal(opt_num(&o, OPT_SW_AGE), 300);
	assert_int_equal(opt_num(&o, OPT_SPIN_US), 100);
	assert_false(opt_given(&o, OPT_SW_PCAP_PORT) || opt_given(&o, OPT_PCAP));
	assert_int_equal(parse(&o, &opt_cmd_switch, ARGS("a", "b")), OPT_ERROR);
	assert_string_equal(err, "unexpected argument 'b'");
	assert_int_equal(parse(&o, &opt_cmd_pktgen,
			       ARGS("--dev", "switch:sw0/3", "tx", "--count", "300", "--dst-mac",
				    "02:00:00:5e:00:11", "--src-ip", "198.18.1.2", "--dport", "7")),
			 OPT_OK);
	assert_string_equal(o.args[0], "tx");
	assert_string_equal(opt_str(&o, OPT_DEV), "switch:sw0/3");
	assert_int_equal(opt_num(&o, OPT_PG_COUNT), 300);
	assert_int_equal(o.v[OPT_PG_SRC_IP].ip, SK_IP4(198, 18, 1, 2));
	assert_int_equal(o.v[OPT_PG_DST_IP].ip, SK_IP4(198, 18, 0, 2)); /* the default */
	assert_int_equal(opt_num(&o, OPT_PG_DPORT), 7);
	assert_int_equal(opt_num(&o, OPT_PG_SPORT), 9);
	assert_int_equal(opt_num(&o, OPT_PG_SIZE), 60);
	assert_int_equal(opt_num(&o, OPT_PG_BATCH), 512);
	assert_int_equal(opt_num(&o, OPT_SPIN_US), 1000);
	assert_false(opt_given(&o, OPT_SLOTS) || opt_given(&o, OPT_LOAD_DURATION));
	assert_int_equal(parse(&o, &opt_cmd_pktgen, ARGS("rx", "-d", "2")), OPT_OK);
	assert_int_equal(opt_num(&o, OPT_LOAD_DURATION), 2);
	assert_int_equal(parse(&o, &opt_cmd_pktgen, ARGS("--dev", "tap:x", "rx", "tx")), OPT_ERROR);
	assert_string_equal(err, "unexpected argument 'tx'");
	/* vm: -p repeated (each kept, in order), the defaults, and the words
	 * after -- handed over unparsed (options there are the guest's). */
	assert_int_equal(parse(&o, &opt_cmd_vm,
			       ARGS("-p", "8080:80", "-p9000:9/udp", "--publish=1:2/tcp", "--smp",
				    "2", "--", "ip=198.18.0.2/24", "--mem", "-p", "x")),
			 OPT_OK);
	assert_int_equal(o.nfwd, 3);
	assert_true(o.fwd[0].host == 8080 && o.fwd[0].guest == 80 && !o.fwd[0].udp);
	assert_true(o.fwd[1].host == 9000 && o.fwd[1].guest == 9 && o.fwd[1].udp);
	assert_true(o.fwd[2].host == 1 && o.fwd[2].guest == 2 && !o.fwd[2].udp);
	assert_int_equal(opt_num(&o, OPT_VM_SMP), 2);
	assert_string_equal(opt_str(&o, OPT_VM_MEM), "256M");
	assert_string_equal(opt_str(&o, OPT_VM_NET), "user");
	assert_string_equal(opt_str(&o, OPT_VM_ACCEL), "auto");
	assert_false(opt_given(&o, OPT_TLS_PORT) || opt_given(&o, OPT_VM_IMAGE));
	assert_int_equal(o.nrest, 4);
	assert_string_equal(o.rest[0], "ip=198.18.0.2/24");
	assert_string_equal(o.rest[3], "x");
	assert_int_equal(o.nargs, 0);
	assert_int_equal(parse(&o, &opt_cmd_vm, ARGS("--dry-run")), OPT_OK);
	assert_int_equal(o.nrest + o.nfwd, 0);
	assert_int_equal(parse(&o, &opt_cmd_vm, ARGS("--dry-run", "--")), OPT_OK);
	assert_int_equal(o.nrest, 0);
	/* A word before -- is not the guest's. */
	assert_int_equal(parse(&o, &opt_cmd_vm, ARGS("exit-after=3")), OPT_ERROR);
	assert_string_equal(err, "unexpected argument 'exit-after=3' (guest arguments go after --)");
	/* A value may be "--" itself when it is the next word. */
	assert_int_equal(parse(&o, &opt_cmd_vm, ARGS("--image", "--", "--", "x")), OPT_OK);
	assert_string_equal(opt_str(&o, OPT_VM_IMAGE), "--");
	assert_int_equal(o.nrest, 1);
	{
		const char *many[OPT_FWD_MAX * 2 + 3];
		char ports[OPT_FWD_MAX + 1][16];
		for (int i = 0; i <= OPT_FWD_MAX; i++) {
			snprintf(ports[i], sizeof(ports[i]), "%d:80", 1000 + i);
			many[2 * i] = "-p";
			many[2 * i + 1] = ports[i];
		}
		many[2 * OPT_FWD_MAX + 2] = NULL;
		many[2 * OPT_FWD_MAX] = NULL; /* 16: all taken */
		assert_int_equal(parse(&o, &opt_cmd_vm, many), OPT_OK);
		assert_int_equal(o.nfwd, OPT_FWD_MAX);
		assert_int_equal(o.fwd[OPT_FWD_MAX - 1].host, 1000 + OPT_FWD_MAX - 1);
		many[2 * OPT_FWD_MAX] = "-p"; /* 17: one too many */
		assert_int_equal(parse(&o, &opt_cmd_vm, many), OPT_ERROR);
		assert_string_equal(err, "publish: '1016:80' is one too many (at most 16)");
	}
	/* No prefixes: --max-c is not --max-conns. */
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--max-c", "5")), OPT_ERROR);
	assert_string_equal(err, "unknown option 'max-c'");
	/* A value may start with '-' when it is the next word. */
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--root", "-dir")), OPT_OK);
	assert_string_equal(opt_str(&o, OPT_ROOT), "-dir");
}

static void test_words(void **state)
{
	(void)state;
	struct opts o = fresh(&opt_cmd_uk);
	char line[] = "  ip=198.18.0.2/24\tgw=198.18.0.1 mac=02:00:00:00:00:09 stats  max-conns=64 ";
	assert_int_equal(opt_parse_words(&o, line, err, sizeof(err)), OPT_OK);
	assert_int_equal(o.v[OPT_IP].ip, SK_IP4(198, 18, 0, 2));
	assert_int_equal(o.v[OPT_IP].len, 24);
	assert_int_equal(o.v[OPT_GW].ip, SK_IP4(198, 18, 0, 1));
	assert_true(opt_given(&o, OPT_STATS) && opt_given(&o, OPT_MAC));
	assert_int_equal(opt_num(&o, OPT_MAX_CONNS), 64);
	assert_int_equal(opt_num(&o, OPT_TCP_SNDBUF), 16384); /* the guest's default */
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_OK);

	char help[] = "port=8080 help";
	o = fresh(&opt_cmd_uk);
	assert_int_equal(opt_parse_words(&o, help, err, sizeof(err)), OPT_HELP);
	char empty[] = "   ";
	o = fresh(&opt_cmd_uk);
	assert_int_equal(opt_parse_words(&o, empty, err, sizeof(err)), OPT_OK);
	assert_int_equal(o.v[OPT_IP].ip, SK_IP4(10, 0, 2, 15)); /* defaults */
	assert_int_equal(o.v[OPT_GW].ip, SK_IP4(10, 0, 2, 2));
	char noval[] = "port";
	o = fresh(&opt_cmd_uk);
	assert_int_equal(opt_parse_words(&o, noval, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "port: needs a value (N)");
	char stops[] = "port=0 fault=xx";
	o = fresh(&opt_cmd_uk);
	assert_int_equal(opt_parse_words(&o, stops, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "port: '0' is not a number in 1..65535"); /* the first */
}

/* The point of the module: a bad value of an option the guest and
 * `skiff serve` share gets the same message from `skiff serve --NAME VALUE`
 * as from the guest's NAME=VALUE. */
static void test_same_message_hosted_and_guest(void **state)
{
	(void)state;
	size_t compared = 0;
	for (size_t i = 0; i < SK_ARRAY_LEN(bads); i++) {
		const struct bad *b = &bads[i];
		if (!b->value || !*b->value || strchr(b->value, ' '))
			continue; /* a word has no space */
		if (b->cmd != &opt_cmd_uk && b->cmd != &opt_cmd_serve)
			continue;
		bool in_both = false;
		for (unsigned k = 0; k < opt_cmd_uk.nuse; k++)
			for (unsigned j = 0; j < opt_cmd_serve.nuse; j++)
				if (opt_cmd_uk.use[k].id == opt_cmd_serve.use[j].id &&
				    !strcmp(opt_defs[opt_cmd_uk.use[k].id].name, b->name) &&
				    opt_cmd_uk.use[k].flags == opt_cmd_serve.use[j].flags)
					in_both = true;
		if (!in_both)
			continue;
		char hosted[256], word[128];
		struct opts o;
		char dashed[64];
		/* --name value and --name=value alike (a flag's value can only be
		 * given the second way). */
		bool flag = false;
		for (int id = 0; id < OPT_N; id++)
			if (!strcmp(opt_defs[id].name, b->name) && opt_defs[id].kind == OPT_K_FLAG)
				flag = true;
		if (flag || i % 2) {
			snprintf(dashed, sizeof(dashed), "--%s=%s", b->name, b->value);
			assert_int_equal(parse(&o, &opt_cmd_serve, ARGS(dashed)), OPT_ERROR);
		} else {
			snprintf(dashed, sizeof(dashed), "--%s", b->name);
			if (parse(&o, &opt_cmd_serve, ARGS(dashed, b->value)) != OPT_ERROR)
				fail_msg("serve %s %s accepted", dashed, b->value);
		}
		snprintf(hosted, sizeof(hosted), "%s", err);
		snprintf(word, sizeof(word), "%s=%s", b->name, b->value);
		o = fresh(&opt_cmd_uk);
		assert_int_equal(opt_parse_words(&o, word, err, sizeof(err)), OPT_ERROR);
		assert_string_equal(hosted, err);
		assert_string_equal(err, b->msg);
		compared++;
	}
	assert_true(compared >= 20);
	/* The gateway outside the subnet, both ways. */
	struct opts o;
	assert_int_equal(parse(&o, &opt_cmd_serve,
			       ARGS("--dev", "tap:x", "--ip", "198.18.0.2/24", "--gw", "198.18.1.1")),
			 OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_ERROR);
	char hosted[256];
	snprintf(hosted, sizeof(hosted), "%s", err);
	char line[] = "ip=198.18.0.2/24 gw=198.18.1.1";
	o = fresh(&opt_cmd_uk);
	assert_int_equal(opt_parse_words(&o, line, err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, hosted);
	assert_string_equal(err, "gw: 198.18.1.1 is outside ip's subnet 198.18.0.0/24");
}

/* ---- cross checks ---- */

static void test_check_stack(void **state)
{
	(void)state;
	struct opts o;
	assert_int_equal(parse(&o, &opt_cmd_echo, ARGS("--ip", "198.18.0.2/24")), OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "dev is required (DEV)");
	assert_int_equal(parse(&o, &opt_cmd_echo, ARGS("--dev", "tap:x")), OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "ip is required (ADDR/LEN)");
	/* serve takes a bare address (to bind with stack linux), not for a stack. */
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--dev", "tap:x", "--ip", "198.18.0.2")),
			 OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "ip: '198.18.0.2' is not ADDR/LEN (e.g. 198.18.0.2/24)");
	/* A gw inside: kept.  /32: only the address itself is inside. */
	assert_int_equal(parse(&o, &opt_cmd_echo,
			       ARGS("--dev", "d", "--ip", "198.18.0.2/24", "--gw", "198.18.0.254")),
			 OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_OK);
	assert_int_equal(o.v[OPT_GW].ip, SK_IP4(198, 18, 0, 254));
	assert_int_equal(parse(&o, &opt_cmd_echo,
			       ARGS("--dev", "d", "--ip", "10.1.2.3/32", "--gw", "10.1.2.4")),
			 OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "gw: 10.1.2.4 is outside ip's subnet 10.1.2.3/32");
	assert_int_equal(parse(&o, &opt_cmd_echo,
			       ARGS("--dev", "d", "--ip", "10.1.2.3/1", "--gw", "100.1.2.4")),
			 OPT_OK);
	assert_int_equal(opt_check_stack(&o, err, sizeof(err)), OPT_OK);
	/* The guest's default gw (QEMU's 10.0.2.2) is dropped on another
	 * network instead of refusing the boot; a given one is not. */
	struct opts g = fresh(&opt_cmd_uk);
	char line[] = "ip=198.18.0.2/24";
	assert_int_equal(opt_parse_words(&g, line, err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_check_stack(&g, err, sizeof(err)), OPT_OK);
	assert_false(g.v[OPT_GW].set);
	assert_int_equal(g.v[OPT_GW].ip, 0);
	g = fresh(&opt_cmd_uk);
	assert_int_equal(opt_check_stack(&g, err, sizeof(err)), OPT_OK);
	assert_int_equal(g.v[OPT_GW].ip, SK_IP4(10, 0, 2, 2));
}

/* --metrics: loopback unless --metrics-allow-remote, which needs it. */
static void test_check_metrics(void **state)
{
	(void)state;
	static const struct {
		const char *argv[4];
		const char *msg; /* NULL: accepted */
	} cases[] = {
		{{"serve", NULL}, NULL},
		{{"serve", "--metrics", "127.0.0.1:9100", NULL}, NULL},
		{{"serve", "--metrics", "127.255.0.9:9100", NULL}, NULL},
		{{"serve", "--metrics", "198.18.0.2:9100", NULL},
		 "metrics: '198.18.0.2:9100' is not on loopback (127.0.0.0/8); add "
		 "metrics-allow-remote to serve the counters to other hosts"},
		{{"serve", "--metrics", "198.18.0.2:9100", "--metrics-allow-remote"}, NULL},
		{{"serve", "--metrics-allow-remote", NULL}, "metrics-allow-remote goes with metrics"},
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(cases); i++) {
		struct opts o = fresh(&opt_cmd_serve);
		int argc = 0;
		while (argc < 4 && cases[i].argv[argc])
			argc++;
		assert_int_equal(opt_parse_argv(&o, argc, (char *const *)cases[i].argv, err,
						sizeof(err)),
				 OPT_OK);
		err[0] = 0;
		int r = opt_check_metrics(&o, err, sizeof(err));
		if (!cases[i].msg) {
			assert_int_equal(r, OPT_OK);
		} else {
			assert_int_equal(r, OPT_ERROR);
			assert_string_equal(err, cases[i].msg);
		}
	}
}

static void test_only_with(void **state)
{
	(void)state;
	struct opts o;
	static const uint8_t ids[] = {OPT_DEV, OPT_SPIN_US};
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--port", "8080")), OPT_OK);
	/* spin-us has a default: only a given one counts. */
	assert_int_equal(opt_only_with(&o, ids, 2, "stack skiff", err, sizeof(err)), OPT_OK);
	assert_int_equal(parse(&o, &opt_cmd_serve, ARGS("--spin-us", "5")), OPT_OK);
	assert_int_equal(opt_only_with(&o, ids, 2, "stack skiff", err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "spin-us goes with stack skiff");
}

static void test_http_config_and_pool(void **state)
{
	(void)state;
	struct opts o;
	assert_int_equal(parse(&o, &opt_cmd_serve,
			       ARGS("--ip", "198.18.0.2", "--port", "8080", "--max-conns", "100",
				    "--header-timeout", "3", "--keepalive-timeout=4", "--max-body", "2K")),
			 OPT_OK);
	const struct opt_val *v = o.v;
	assert_true(v[OPT_IP].set && v[OPT_PORT].set && v[OPT_MAX_CONNS].set);
	assert_int_equal(v[OPT_IP].ip, SK_IP4(198, 18, 0, 2));
	assert_int_equal(v[OPT_PORT].num, 8080);
	assert_int_equal(v[OPT_MAX_CONNS].num, 100);
	assert_int_equal(v[OPT_HEADER_TIMEOUT].num, 3);
	assert_int_equal(v[OPT_KEEPALIVE_TIMEOUT].num, 4);
	assert_int_equal(v[OPT_MAX_BODY].num, 2048);
	/* Defaults, from the table: serve's and the guest's differ (RAM). */
	o = fresh(&opt_cmd_serve);
	assert_false(o.v[OPT_IP].set);
	assert_true(o.v[OPT_PORT].set && o.v[OPT_MAX_CONNS].set && o.v[OPT_MAX_BODY].set);
	assert_int_equal(o.v[OPT_PORT].num, 80);
	assert_int_equal(o.v[OPT_MAX_CONNS].num, 4096);
	assert_int_equal(o.v[OPT_MAX_BODY].num, 1048576);
	o = fresh(&opt_cmd_uk);
	assert_int_equal(o.v[OPT_MAX_CONNS].num, 2048);
	assert_true(o.v[OPT_IP].set);
	assert_int_equal(o.v[OPT_IP].ip, SK_IP4(10, 0, 2, 15));
	/* The socket pool: connections + a quarter for TIME_WAIT + 1024. */
	assert_int_equal(opt_tcp_sockets(2048), 2048 + 512 + 1024);
	assert_int_equal(opt_tcp_sockets(1), 1025);
	assert_int_equal(opt_tcp_sockets(1000000), 1000000 + 250000 + 1024);
}

/* ---- the table itself ---- */

static void collect(void *ctx, const char *s, size_t n)
{
	char *buf = ctx;
	size_t have = strlen(buf);
	assert_true(have + n < 16384);
	memcpy(buf + have, s, n);
	buf[have + n] = 0;
}

static void test_table_and_help(void **state)
{
	(void)state;
	static char help[16384];
	for (size_t c = 0; c < SK_ARRAY_LEN(cmds); c++) {
		const struct opt_cmd *cmd = cmds[c];
		struct opts o;
		/* Every default parses. */
		assert_int_equal(opt_init(&o, cmd, err, sizeof(err)), OPT_OK);
		help[0] = 0;
		opt_help(cmd, collect, help);
		assert_true(!strncmp(help, "usage: ", 7));
		for (unsigned i = 0; i < cmd->nuse; i++) {
			const struct opt_use *u = &cmd->use[i];
			const struct opt_def *d = &opt_defs[u->id];
			assert_non_null(d->name);
			assert_non_null(d->help);
			assert_true(d->kind == OPT_K_FLAG || d->meta);
			if (u->dflt)
				assert_true(o.v[u->id].set && !o.v[u->id].given);
			/* No two options of a command share a name or a letter. */
			for (unsigned j = 0; j < i; j++) {
				const struct opt_def *e = &opt_defs[cmd->use[j].id];
				assert_string_not_equal(d->name, e->name);
				assert_true(!d->short_name || d->short_name != e->short_name);
			}
			assert_true(d->short_name != 'h');
			/* The help lists it in the command line's spelling, and a
			 * hosted synopsis names every option. */
			char want[64];
			if (cmd->guest)
				snprintf(want, sizeof(want), "\n  %s%s", d->name,
					 d->kind == OPT_K_FLAG ? " " : "=");
			else
				snprintf(want, sizeof(want), "--%s%s", d->name,
					 d->kind == OPT_K_FLAG ? " " : " ");
			/* A name that fills the option column ends its line. */
			char want_nl[64];
			snprintf(want_nl, sizeof(want_nl), "\n  --%s\n", d->name);
			if (!strstr(help, want) && (cmd->guest || !strstr(help, want_nl)))
				fail_msg("%s: help lacks '%s'", cmd->name, want);
			if (!cmd->guest) {
				char syn[40], syn2[8], syn3[8];
				snprintf(syn, sizeof(syn), "--%s", d->name);
				snprintf(syn2, sizeof(syn2), "-%c ", d->short_name);
				snprintf(syn3, sizeof(syn3), "-%c]", d->short_name);
				if (!strstr(cmd->synopsis, syn) &&
				    !(d->short_name && (strstr(cmd->synopsis, syn2) ||
							strstr(cmd->synopsis, syn3))))
					fail_msg("%s: synopsis lacks %s", cmd->name, syn);
			}
			/* The bounds and the default are in the help. */
			if (d->kind == OPT_K_NUM || d->kind == OPT_K_SIZE) {
				char b[64];
				snprintf(b, sizeof(b), "%llu..%llu", (unsigned long long)d->lo,
					 (unsigned long long)d->hi);
				assert_non_null(strstr(help, b));
			}
			if (u->dflt) {
				char b[64];
				snprintf(b, sizeof(b), "default %s)", u->dflt);
				assert_non_null(strstr(help, b));
			}
		}
		/* Lines fit a terminal. */
		for (const char *p = help; *p;) {
			const char *e = strchr(p, '\n');
			assert_non_null(e);
			if (e - p > 90)
				fail_msg("%s: help line too long: %.*s", cmd->name, (int)(e - p), p);
			p = e + 1;
		}
	}
	/* The unikernel's help in its own spelling. */
	help[0] = 0;
	opt_help(&opt_cmd_uk, collect, help);
	assert_non_null(strstr(help, "\n  ip=ADDR/LEN "));
	assert_non_null(strstr(help, "\n  no-msix "));
	assert_non_null(strstr(help, "\n  help "));
}

/* ---- the pure parsers ---- */

static void test_parsers(void **state)
{
	(void)state;
	/* Decimals in millionths, to the last bit of 64. */
	uint64_t d;
	assert_int_equal(opt_parse_dec6("0.000001", &d), 0);
	assert_int_equal(d, 1);
	assert_int_equal(opt_parse_dec6("007.50", &d), 0);
	assert_int_equal(d, 7500000);
	assert_int_equal(opt_parse_dec6("18446744073709.551615", &d), 0);
	assert_int_equal(d, UINT64_MAX);
	static const char *const bad_dec[] = {"", ".", "1.", ".1", "1.0000001", "18446744073709.551616",
					      "18446744073710", "1 ", "-0", "1e3", "0x1", "1..2"};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad_dec); i++)
		if (opt_parse_dec6(bad_dec[i], &d) == 0)
			fail_msg("opt_parse_dec6 accepted '%s'", bad_dec[i]);
	/* Upstreams of every form; the IPv4-only form refuses the others. */
	struct opt_endpoint oep[OPT_ENDPOINTS_MAX];
	assert_int_equal(opt_parse_endpoints_any("app.internal:8080,[2001:2::5]:8081,127.0.0.1:1", oep,
						 OPT_ENDPOINTS_MAX),
			 3);
	assert_string_equal(oep[0].name, "app.internal");
	assert_int_equal(oep[0].port, 8080);
	assert_true(sk_addr_is_any(&oep[0].addr));
	assert_string_equal(oep[1].name, "");
	assert_false(sk_addr_is_v4(&oep[1].addr));
	assert_int_equal(oep[1].addr.b[0], 0x20);
	assert_int_equal(oep[1].addr.b[3], 0x02);
	assert_int_equal(oep[1].addr.b[15], 0x05);
	assert_int_equal(oep[1].port, 8081);
	assert_true(sk_addr_is_v4(&oep[2].addr));
	assert_int_equal(sk_addr_ip4(&oep[2].addr), SK_IP4(127, 0, 0, 1));
	uint32_t eip[2];
	uint16_t eport[2];
	assert_int_equal(opt_parse_endpoints("127.0.0.1:80,198.18.0.1:81", eip, eport, 2), 2);
	assert_int_equal(eip[1], SK_IP4(198, 18, 0, 1));
	assert_int_equal(eport[1], 81);
	assert_int_equal(opt_parse_endpoints("127.0.0.1:80,198.18.0.1:81", eip, eport, 1), -1);
	assert_int_equal(opt_parse_endpoints("localhost:80", eip, eport, 2), -1);
	assert_int_equal(opt_parse_endpoints("[::1]:80", eip, eport, 2), -1);
	/* Prefixes over the 16 bytes: IPv4 /n is 96 + n, host bits cleared. */
	struct opt_prefix pf[OPT_PREFIXES_MAX];
	assert_int_equal(opt_parse_prefixes("none", pf, OPT_PREFIXES_MAX), 0);
	assert_int_equal(opt_parse_prefixes("127.1.2.3/8,::1,2001:2::ff/48,198.18.0.1", pf,
					    OPT_PREFIXES_MAX),
			 4);
	assert_int_equal(pf[0].len, 104);
	assert_int_equal(sk_addr_ip4(&pf[0].addr), SK_IP4(127, 0, 0, 0));
	assert_int_equal(pf[1].len, 128);
	assert_int_equal(pf[1].addr.b[15], 1);
	assert_int_equal(pf[2].len, 48);
	assert_int_equal(pf[2].addr.b[15], 0);
	assert_int_equal(pf[3].len, 128);
	assert_int_equal(opt_parse_prefixes("0.0.0.0/0", pf, 1), 1);
	assert_int_equal(pf[0].len, 96);
	assert_int_equal(opt_parse_prefixes("::1,::2", pf, 1), -1);
	uint32_t ip;
	assert_int_equal(opt_parse_ipv4("0.0.0.0", &ip), 0);
	assert_int_equal(ip, 0);
	assert_int_equal(opt_parse_ipv4("255.255.255.255", &ip), 0);
	assert_int_equal(ip, 0xffffffffu);
	static const char *const bad_ip[] = {"", "1", "1.2.3", "1.2.3.4.5", "1.2.3.256", "1.2.3.4 ",
					     " 1.2.3.4", "01.2.3.4", "1.2.3.0x4", "1..3.4", "1.2.3.",
					     "1.2.3.1234", "a.b.c.d"};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad_ip); i++)
		if (opt_parse_ipv4(bad_ip[i], &ip) == 0)
			fail_msg("'%s' parsed as an address", bad_ip[i]);
	assert_true(opt_ipv4_is_host(SK_IP4(1, 0, 0, 0)));
	assert_true(opt_ipv4_is_host(SK_IP4(223, 255, 255, 255)));
	assert_false(opt_ipv4_is_host(0));
	assert_false(opt_ipv4_is_host(SK_IP4(224, 0, 0, 0)));
	assert_false(opt_ipv4_is_host(SK_IP4(255, 255, 255, 255)));
	uint64_t v;
	assert_int_equal(opt_parse_dec("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(opt_parse_dec("18446744073709551616", &v), -1);
	assert_int_equal(opt_parse_dec("", &v), -1);
	assert_int_equal(opt_parse_dec("1 ", &v), -1);
	char s[16];
	opt_format_ipv4(SK_IP4(198, 18, 0, 2), s);
	assert_string_equal(s, "198.18.0.2");
	opt_format_ipv4(0xffffffffu, s);
	assert_string_equal(s, "255.255.255.255");
	/* Endpoints of either family: IPv6 in brackets when a port follows. */
	char ep[OPT_ADDR_STRLEN];
	struct sk_addr e4 = sk_addr_v4(SK_IP4(198, 18, 0, 1));
	opt_format_addr(&e4, 40000, ep);
	assert_string_equal(ep, "198.18.0.1:40000");
	opt_format_addr(&e4, 0, ep);
	assert_string_equal(ep, "198.18.0.1");
	struct sk_addr e6 = sk_addr_v6((const uint8_t[16]){0x20, 0x01, 0, 2, [15] = 1});
	opt_format_addr(&e6, 80, ep);
	assert_string_equal(ep, "[2001:2::1]:80");
	opt_format_addr(&e6, 0, ep);
	assert_string_equal(ep, "2001:2::1");
	static const uint8_t longest[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
	struct sk_addr el = sk_addr_v6(longest);
	opt_format_addr(&el, 65535, ep);
	assert_string_equal(ep, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe]:65535");
	/* IPv6 text, both ways (RFC 4291 2.2 in, RFC 5952 out). */
	static const struct {
		const char *in, *out;
	} v6[] = {
		{"::", "::"}, {"::1", "::1"}, {"1::", "1::"}, {"2001:2::2", "2001:2::2"},
		{"2001:0002:0000:0000:0000:0000:0000:0002", "2001:2::2"},
		{"FE80::F4BE:CBFF:FE9D:8028", "fe80::f4be:cbff:fe9d:8028"},
		{"1:0:0:2:0:0:0:3", "1:0:0:2::3"}, {"1:0:1:1:1:1:1:1", "1:0:1:1:1:1:1:1"},
		{"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"}, {"0:0:1::", "0:0:1::"},
	};
	for (size_t i = 0; i < SK_ARRAY_LEN(v6); i++) {
		uint8_t a[16];
		char t[OPT_IPV6_STRLEN];
		if (opt_parse_ipv6(v6[i].in, a) < 0)
			fail_msg("'%s' did not parse", v6[i].in);
		opt_format_ipv6(a, t);
		if (strcmp(t, v6[i].out))
			fail_msg("'%s' formats as '%s', want '%s'", v6[i].in, t, v6[i].out);
	}
	static const char *const bad6[] = {"", ":", ":::", "1:::2", "1::2::3", "1:2:3:4:5:6:7",
					   "1:2:3:4:5:6:7:8:9", "12345::", "1:", ":1", "g::",
					   "1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:7:8::"};
	for (size_t i = 0; i < SK_ARRAY_LEN(bad6); i++) {
		uint8_t a[16];
		if (opt_parse_ipv6(bad6[i], a) == 0)
			fail_msg("'%s' parsed as an IPv6 address", bad6[i]);
	}
	/* --ip6 repeats (up to OPT_IP6_MAX, no twice the same) into ip6[]. */
	struct opts r = fresh(&opt_cmd_echo);
	assert_int_equal(opt_set(&r, "ip6", "2001:2::2/64", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "ip6", "2001:2:1::2/48", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "ip6", "2001:2::2/64", err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "ip6: '2001:2::2/64' is given twice");
	assert_int_equal(r.nip6, 2);
	assert_int_equal(r.ip6[1].len, 48);
	assert_int_equal(opt_set(&r, "ip6", "2001:2::3/64", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "ip6", "2001:2::4/64", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "ip6", "2001:2::5/64", err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "ip6: '2001:2::5/64' is one too many (at most 4)");
	struct iface_config ic;
	memset(&ic, 0, sizeof(ic));
	opt_ip6_config(&r, &ic);
	assert_true(ic.ip6);
	assert_int_equal(ic.nip6, 4);
	assert_int_equal(ic.ip6_addr[1].prefix_len, 48);
	assert_int_equal(ic.ip6_addr[3].addr.b[15], 4);
	/* --tls-sni repeats (up to OPT_SNI_MAX, a name once, any case) into sni[]. */
	r = fresh(&opt_cmd_serve);
	assert_int_equal(opt_set(&r, "tls-sni", "a.example:a.pem:a.key", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "tls-sni", "*.b.example:b.pem:b:key", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "tls-sni", "A.Example:c.pem:c.key", err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "tls-sni: 'A.Example:c.pem:c.key' names a server given before");
	assert_int_equal(r.nsni, 2);
	assert_int_equal(r.sni[1].name_len, 11);
	assert_string_equal(r.sni[1].s + r.sni[1].key_off, "b:key"); /* KEY: the rest */
	static char words[OPT_SNI_MAX][32]; /* the values must outlive the parse */
	for (unsigned i = 2; i < OPT_SNI_MAX; i++) {
		snprintf(words[i], sizeof(words[i]), "n%u.example:c.pem:c.key", i);
		assert_int_equal(opt_set(&r, "tls-sni", words[i], err, sizeof(err)), OPT_OK);
	}
	assert_int_equal(opt_set(&r, "tls-sni", "z.example:z.pem:z.key", err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "tls-sni: 'z.example:z.pem:z.key' is one too many (at most 8)");
	/* gw6 goes with ip6 */
	r = fresh(&opt_cmd_echo);
	assert_int_equal(opt_set(&r, "dev", "tap:x", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "ip", "198.18.0.2/24", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "gw6", "fe80::1", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_check_stack(&r, err, sizeof(err)), OPT_ERROR);
	assert_string_equal(err, "gw6 goes with ip6");
	memset(&ic, 0, sizeof(ic));
	r = fresh(&opt_cmd_echo);
	opt_ip6_config(&r, &ic);
	assert_false(ic.ip6);
	/* auto: SLAAC, alone or beside static addresses */
	assert_int_equal(opt_set(&r, "ip6", "auto", err, sizeof(err)), OPT_OK);
	assert_int_equal(opt_set(&r, "ip6", "2001:2::2/64", err, sizeof(err)), OPT_OK);
	assert_true(r.ip6_auto);
	assert_int_equal(r.nip6, 1);
	opt_ip6_config(&r, &ic);
	assert_true(ic.ip6 && ic.ip6_slaac);
	assert_int_equal(ic.nip6, 1);
	/* Messages are cut, never overrun. */
	struct opts o = fresh(&opt_cmd_uk);
	char tiny[8];
	assert_int_equal(opt_set(&o, "port", "0", tiny, sizeof(tiny)), OPT_ERROR);
	assert_string_equal(tiny, "port: '");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_argv_forms),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_same_message_hosted_and_guest),
		cmocka_unit_test(test_check_stack),
		cmocka_unit_test(test_only_with),
		cmocka_unit_test(test_check_metrics),
		cmocka_unit_test(test_http_config_and_pool),
		cmocka_unit_test(test_table_and_help),
		cmocka_unit_test(test_parsers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
