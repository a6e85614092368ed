/* opts.c — see opts.h.  The table first, then the commands' lists, then the
 * value parsers, the two command-line parsers, the cross checks and the
 * help.  Freestanding: strings and numbers are handled here by hand. */
#include "../http/files_handler.h"
#include "../runner/spin.h"
#include "../net/iface.h"
#include "opts.h"
#include "../wire/ipv6.h"
#include "../wire/eth.h"
#include "../base/sk_addr.h"

/* ---- the table ---- */

static const char *const stack_choices[] = {"skiff", "linux", NULL};
static const char *const fault_choices[] = {"ud", "pf", "gp", "de", NULL};
static const char *const access_fmt_choices[] = {"combined", "json", NULL};
/* In the order of enum tcp_cc_algo (net/tcp.h). */
static const char *const tcp_cc_choices[] = {"cubic", "newreno", "bbr", NULL};
/* In enum sk_log_level's order (base/log.h): the value is the level. */
static const char *const log_level_choices[] = {"error", "warn", "info", "debug", NULL};
static const char *const dir_choices[] = {"a2b", "b2a", "both", NULL};
static const char *const balance_choices[] = {"rr", "least", NULL};
static const char *const on_off_choices[] = {"on", "off", NULL};
static const char *const accel_choices[] = {"auto", "kvm", "tcg", NULL};
/* skiff vm --machine: QEMU's pc (PCI, MSI-X) or microvm (virtio-mmio) */
static const char *const machine_choices[] = {"pc", "microvm", NULL};
/* tls/tls_host.h: the hosted TLS engines by name */
static const char *const tls_engine_choices[] = {"openssl", "gnutls", "wolfssl", NULL};
/* --tls-alpn: index 0 is the tls listener's http2 off (sites_flags.h);
 * index 1, the default, offers h2 (sites_conf.h's sconf_alpn_h2). */
static const char *const tls_alpn_choices[] = {"http/1.1", "h2,http/1.1", NULL};
/* OPT_K_NUM with choices: the one word it also takes, for OPT_NUM_AUTO. */
static const char *const auto_word[] = {"auto", NULL};

#define DEV_HELP "tap:NAME | packet:IFACE | xdp:IFACE | switch:NAME/PORT"

const struct opt_def opt_defs[OPT_N] = {
	[OPT_STACK] = {"stack", 0, OPT_K_CHOICE, "S", 0, 0, stack_choices,
		       "linux: kernel sockets; skiff: skiff's own TCP/IP on dev.\n"
		       "Default: skiff with dev, linux without"},
	[OPT_DEV] = {"dev", 0, OPT_K_STR, "DEV", 0, 0, NULL, DEV_HELP},
	[OPT_IP] = {"ip", 0, OPT_K_CIDR, "ADDR/LEN", 0, 0, NULL,
		    "this host's IPv4 address and prefix length"},
	[OPT_GW] = {"gw", 0, OPT_K_IPV4, "ADDR", 0, 0, NULL,
		    "default gateway, inside ip's subnet (optional)"},
	[OPT_MAC] = {"mac", 0, OPT_K_MAC, "MAC", 0, 0, NULL,
		     "this host's MAC (default: the device's, else random,\n"
		     "locally administered)"},
	[OPT_PCAP] = {"pcap", 0, OPT_K_STR, "FILE", 0, 0, NULL, "record every frame the device sees"},
	[OPT_SPIN_US] = {"spin-us", 0, OPT_K_NUM, "N|auto", 0, 1000000, auto_word,
			 "poll this many us after work before parking; auto:\n"
			 "learn it from the arrival gaps, up to 131 us (runner/spin.h)"},
	[OPT_WORKERS] = {"workers", 0, OPT_K_NUM, "N|auto", 1, 64, auto_word,
			 "share-nothing workers, each a whole server on its own\n"
			 "pinned thread and device queue; auto: one per online core\n"
			 "(docs/smp.md)"},
	[OPT_STATS] = {"stats", 0, OPT_K_FLAG, NULL, 0, 0, NULL, "print counters on exit"},
	[OPT_IP6] = {"ip6", 0, OPT_K_CIDR6, "ADDR/LEN|auto", 0, 0, NULL,
		     "an IPv6 address and on-link prefix length (repeatable,\n"
		     "at most 4), or auto: addresses from Router\n"
		     "Advertisements (SLAAC); turns IPv6 on, with a link-local\n"
		     "address from the MAC; each address is used only after DAD"},
	[OPT_GW6] = {"gw6", 0, OPT_K_IPV6, "ADDR", 0, 0, NULL,
		     "IPv6 default router (default: the one a Router\n"
		     "Advertisement names)"},

	[OPT_PORT] = {"port", 0, OPT_K_NUM, "N", 1, 65535, NULL, "TCP port to serve"},
	[OPT_ROOT] = {"root", 0, OPT_K_STR, "DIR", 0, 0, NULL,
		      "serve the files under DIR (no symlinks, no dotfiles)"},
	[OPT_CONFIG] = {"config", 0, OPT_K_STR, "FILE", 0, 0, NULL,
			"serve the sites, routes and listeners of FILE\n"
			"(docs/config.md; skiff check FILE validates it); the\n"
			"flags then only choose the stack and device"},
	[OPT_MAX_CONNS] = {"max-conns", 0, OPT_K_NUM, "N", 1, 1000000, NULL,
			   "connections served at once; beyond it a client gets\n"
			   "503 and a close"},
	[OPT_HEADER_TIMEOUT] = {"header-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
				"a request head must arrive within S s, else 408"},
	[OPT_BODY_TIMEOUT] = {"body-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
			      "a request body being read must be whole within S s, else 408"},
	[OPT_SEND_TIMEOUT] = {"send-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
			      "close a connection whose peer takes no byte of the answer\nfor S s"},
	[OPT_UPSTREAM] = {"upstream", 0, OPT_K_ENDPOINTS, "HOST:PORT[,...]", 0, 0, NULL,
			  "the servers requests go to (at most 16; required): an IPv4\n"
			  "address, [IPv6] or a name, resolved once at start"},
	[OPT_BALANCE] = {"balance", 0, OPT_K_CHOICE, "rr|least", 0, 0, balance_choices,
			 "round-robin, or the upstream with the fewest requests\nin flight"},
	[OPT_POOL] = {"pool", 0, OPT_K_NUM, "N", 0, 65536, NULL,
		      "idle keep-alive connections kept per upstream"},
	[OPT_CONNECT_TIMEOUT] = {"connect-timeout", 0, OPT_K_NUM, "S", 1, 3600, NULL,
				 "an upstream connection must be up within S s, else the\n"
				 "next upstream (idempotent requests) or 504"},
	[OPT_FIRST_BYTE_TIMEOUT] = {"first-byte-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
				    "the upstream's first answer byte within S s of the\n"
				    "request's last, else 504"},
	[OPT_UP_IDLE_TIMEOUT] = {"idle-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
				 "an upstream silent for S s inside a body is cut; a pooled\n"
				 "connection idle for S s is closed"},
	[OPT_FAIL_MAX] = {"fail-max", 0, OPT_K_NUM, "N", 1, 1000, NULL,
			  "failures in a row that mark an upstream down"},
	[OPT_FAIL_TIMEOUT] = {"fail-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
			      "a down upstream is tried again after S s"},
	[OPT_CACHE] = {"cache", 0, OPT_K_SIZE, "SIZE", 0, 1ull << 36, NULL,
		       "cache GET answers in SIZE bytes of memory (RFC 9111;\n0: no cache)"},
	[OPT_NO_X_CACHE] = {"no-x-cache", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			    "leave out the X-Cache: HIT|MISS|REVALIDATED field"},
	[OPT_PURGE_ALLOW] = {"purge-allow", 0, OPT_K_STR, "ADDR[/LEN][,...]|none", 0, 0, NULL,
			     "clients that may PURGE a cached key (IPv4 or IPv6\n"
			     "prefixes, at most 16; default loopback); none: 405"},
	[OPT_KEEPALIVE_TIMEOUT] = {"keepalive-timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
				   "idle keep-alive connections close after S s"},
	[OPT_MAX_BODY] = {"max-body", 0, OPT_K_SIZE, "N", 0, 1ull << 40, NULL,
			  "largest request body in bytes (K, M, G: x1024), else 413"},
	/* The engine wants at least 1 KiB; above 1 MiB per socket nothing this
	 * server sends could use it. */
	[OPT_TCP_SNDBUF] = {"tcp-sndbuf", 0, OPT_K_SIZE, "N", 1024, 1u << 20, NULL,
			    "TCP send buffer per socket in bytes (K, M: x1024)"},
	[OPT_TCP_RCVBUF] = {"tcp-rcvbuf", 0, OPT_K_SIZE, "N", 1024, 1u << 20, NULL,
			    "TCP receive buffer per socket in bytes (K, M: x1024)"},
	/* Grown buffers (tcp_config.buf_max, mem_high): a 4 MiB window is
	 * 320 Mbit/s at 100 ms; the budget bounds what all of them hold. */
	[OPT_TCP_BUF_MAX] = {"tcp-buf-max", 0, OPT_K_SIZE, "N", 0, 1u << 30, NULL,
			     "largest a TCP socket's send or receive buffer grows to\n"
			     "with the path (autotuning; 0: never past --tcp-sndbuf/-rcvbuf)"},
	[OPT_TCP_MEM] = {"tcp-mem", 0, OPT_K_SIZE, "N", 1u << 20, 1u << 31, NULL,
			 "budget of all grown TCP buffers: growth stops at 3/4 of it\n"
			 "and buffers shrink back until under 1/2 (as Linux's tcp_mem)"},
	[OPT_TCP_CC] = {"tcp-cc", 0, OPT_K_CHOICE, "cubic|newreno|bbr", 0, 0, tcp_cc_choices,
			"TCP congestion control: cubic (RFC 9438, with HyStart++\n"
			"slow start), newreno (RFC 5681/6582) or bbr (BBR v1,\n"
			"paced)"},
	[OPT_TRACE] = {"trace", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
		       "time the request path with the cycle counter and print\n"
		       "median and p99 of each stage at exit (see docs/cost.md);\n"
		       "with --config too (the sites' engine, http/app.c)"},

	[OPT_CACHE_CONTROL] = {"cache-control", 0, OPT_K_STR, "VALUE", 0, 0, NULL,
			       "send Cache-Control: VALUE with every file (200, 206,\n"
			       "304), e.g. 'max-age=3600'"},
	[OPT_SENDFILE] = {"sendfile", 0, OPT_K_CHOICE, "on|off", 0, 0, on_off_choices,
			  "(stack linux) send file bodies with sendfile(2) from the\n"
			  "page cache; off: writev from the file's mapping (a copy)"},

	[OPT_HTTP2] = {"http2", 0, OPT_K_CHOICE, "on|off", 0, 0, on_off_choices,
		       "HTTP/2 beside HTTP/1.1 on every listener: a connection\n"
		       "that opens with its preface (prior knowledge, or ALPN h2\n"
		       "under TLS, offered first) speaks it (docs/h2.md); off:\n"
		       "HTTP/1.1 only, and ALPN offers http/1.1 alone"},
	[OPT_HTTP2_SESSIONS] = {"http2-sessions", 0, OPT_K_NUM, "N", 1, 4096, NULL,
				"HTTP/2 connections each listener holds at once (a\n"
				"session of about 150 KiB each, at most max-conns); one\n"
				"more is closed (http.h2_sessions_refused)"},

	[OPT_TLS_CERT] = {"tls-cert", 0, OPT_K_STR, "FILE", 0, 0, NULL,
			  "serve HTTPS too, with this certificate chain (PEM:\n"
			  "the server's certificate first); needs --tls-key"},
	[OPT_TLS_KEY] = {"tls-key", 0, OPT_K_STR, "FILE", 0, 0, NULL,
			 "the certificate's private key (PEM: RSA or ECDSA P-256)"},
	[OPT_TLS_PORT] = {"tls-port", 0, OPT_K_NUM, "N", 1, 65535, NULL,
			  "TCP port for HTTPS"},
	[OPT_TLS_HANDSHAKE_TIMEOUT] = {"tls-handshake-timeout", 0, OPT_K_NUM, "S", 1, 3600, NULL,
				       "a TLS handshake must finish within S s, else the\n"
				       "connection closes"},
	[OPT_TLS_REDIRECT] = {"tls-redirect", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			      "answer every request on --port with a 301 to the same\n"
			      "target over HTTPS, and serve nothing else there"},
	[OPT_TLS_TICKET_ROTATE] = {"tls-ticket-rotate", 0, OPT_K_NUM, "S", 60, 604800, NULL,
				   "seal session tickets with a new random key every S s;\n"
				   "tickets of the key before still resume"},
	[OPT_TLS_MAX_CONNS] = {"tls-max-conns", 0, OPT_K_NUM, "N", 1, 65536, NULL,
			       "HTTPS connections at once (the unikernel's fixed pool:\n"
			       "~20.5 KiB each, with the HTTP connection's state besides);\n"
			       "beyond it a new one is closed at once"},
	[OPT_TLS_SNI] = {"tls-sni", 0, OPT_K_SNI, "NAME:CERT:KEY", 0, 0, NULL,
			 "for a client asking (SNI) for the server NAME, this\n"
			 "certificate chain and key (PEM) instead of --tls-cert's,\n"
			 "which stay the default (no name, or another one).  NAME a\n"
			 "host name, or *.DOMAIN for any one label before DOMAIN;\n"
			 "the text is cut at its first two colons.  Repeatable\n"
			 "(at most 8); needs --tls-cert and --tls-key"},
	[OPT_TLS_ENGINE] = {"tls-engine", 0, OPT_K_CHOICE, "openssl|gnutls|wolfssl", 0, 0,
			    tls_engine_choices,
			    "the library under HTTPS: openssl (OpenSSL 3), gnutls\n"
			    "(GnuTLS 3.7) or wolfssl (wolfSSL 5.5); the same\n"
			    "protocols, suites and tickets (docs/tls.md)"},
	[OPT_TLS_ALPN] = {"tls-alpn", 0, OPT_K_CHOICE, "http/1.1|h2,http/1.1", 0, 0,
			  tls_alpn_choices,
			  "the protocols ALPN offers, in the server's order; a\n"
			  "client offering none of them gets no ALPN and goes on.\n"
			  "http/1.1: HTTPS speaks HTTP/1.1 only (as --http2 off\n"
			  "there); --http2 off offers http/1.1 too (docs/tls.md)"},
	[OPT_ACCESS_LOG] = {"access-log", 0, OPT_K_STR, "FILE|-", 0, 0, NULL,
			    "log every response to FILE (appended to; '-': standard\n"
			    "output), buffered and written in batches (at least once\n"
			    "a second); a slow reader loses lines, counted in\n"
			    "access_log.dropped, never blocking the server.  Off\n"
			    "unless given"},
	[OPT_ACCESS_LOG_FORMAT] = {"access-log-format", 0, OPT_K_CHOICE, "combined|json", 0, 0,
				   access_fmt_choices,
				   "combined: nginx's combined line; json: one JSON object\n"
				   "per line (time, remote_addr, remote_port, request,\n"
				   "status, body_bytes_sent, http_referer, http_user_agent)"},
	[OPT_DRAIN_TIMEOUT] = {"drain-timeout", 0, OPT_K_NUM, "S", 0, 3600, NULL,
			       "on SIGTERM stop accepting, finish the requests in\n"
			       "flight, close idle connections, answer new requests with\n"
			       "Connection: close; exit 0 when all are done, or after S s\n"
			       "(0: at once).  SIGINT exits at once"},
	[OPT_UK_ACCESS_LOG] = {"access-log", 0, OPT_K_LOGSINK, "console|udp:ADDR:PORT", 0, 0, NULL,
			       "log every response (access-log-format) to the serial\n"
			       "console, or in UDP datagrams of whole lines (at most\n"
			       "1400 bytes each) to ADDR:PORT (on QEMU's user network\n"
			       "10.0.2.2 is the host's loopback), sent when full and at\n"
			       "least once a second.  Off unless given"},
	[OPT_LOG_LEVEL] = {"log-level", 0, OPT_K_CHOICE, "error|warn|info|debug", 0, 0,
			   log_level_choices,
			   "the error log's threshold: error (a part failed: a\n"
			   "reload, the loop), warn (the server goes on degraded),\n"
			   "info (a client's failure: a refused TLS handshake),\n"
			   "debug.  Each kind of message at most 10 a second, then\n"
			   "one line counts the suppressed ones"},
	[OPT_ERROR_LOG] = {"error-log", 0, OPT_K_STR, "FILE|-", 0, 0, NULL,
			   "write the error log to FILE (appended to; '-': standard\n"
			   "error, the default)"},
	[OPT_METRICS] = {"metrics", 0, OPT_K_ENDPOINT, "ADDR:PORT", 0, 0, NULL,
			 "serve every --stats counter (and --trace's histograms) to\n"
			 "GET /metrics in Prometheus' text format, on a kernel\n"
			 "socket at ADDR:PORT (both stacks), loopback only unless\n"
			 "--metrics-allow-remote.  Off unless given"},
	[OPT_METRICS_ALLOW_REMOTE] = {"metrics-allow-remote", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
				      "let --metrics listen on an address other than\n"
				      "127.0.0.0/8 (the counters show the traffic)"},
	[OPT_CONTROL] = {"control", 0, OPT_K_STR, "PATH|none", 0, 0, NULL,
			 "the control socket `skiff stat` reads (AF_UNIX, mode\n"
			 "0600; default $XDG_RUNTIME_DIR/skiff/PID.sock, as root\n"
			 "/run/skiff/PID.sock, else /tmp/skiff-UID/PID.sock);\n"
			 "none: no socket"},
	[OPT_UK_METRICS] = {"metrics", 0, OPT_K_NUM, "PORT", 1, 65535, NULL,
			    "serve every --stats counter to GET /metrics in\n"
			    "Prometheus' text format on TCP port PORT (skiff vm -p\n"
			    "HOST:PORT forwards it).  Off unless given"},

	[OPT_EXIT_AFTER] = {"exit-after", 0, OPT_K_NUM, "S", 1, 1000000000, NULL,
			    "exit 0 after S seconds (a safety net for tests)"},
	[OPT_SHUTDOWN_PORT] = {"shutdown-port", 0, OPT_K_NUM, "N", 1, 65535, NULL,
			       "a UDP datagram \"exit [CODE] [stats]\" to port N drains\n"
			       "(see drain-timeout), then exits with CODE (0 if none),\n"
			       "printing the counters if it says stats.  Off unless given\n"
			       "(skiff vm gives 65533 on --net user, for Ctrl-C): anyone\n"
			       "who can reach the port can stop the guest"},
	[OPT_FAULT] = {"fault", 0, OPT_K_CHOICE, "ud|pf|gp|de", 0, 0, fault_choices,
		       "raise that CPU exception after boot (tests the handler:\n"
		       "registers on the console, exit 64+vector)"},
	[OPT_NO_MSIX] = {"no-msix", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			 "no device interrupt: park at most 1 ms (fallback)"},
	[OPT_OFFLOAD] = {"offload", 0, OPT_K_CHOICE, "on|off", 0, 0, on_off_choices,
			 "the device's checksum and TCP segmentation offloads,\n"
			 "those it offers (dev.offload in the counters); off: none,\n"
			 "every frame as before them"},
	[OPT_NO_EVENT_IDX] = {"no-event-idx", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			      "suppress doorbells and interrupts with the virtqueue\n"
			      "flags, not VIRTIO_F_EVENT_IDX (for A/B runs)"},

	[OPT_LOAD_CONNS] = {"connections", 'c', OPT_K_NUM, "N", 1, 1000000, NULL,
			    "concurrent connections (required)"},
	[OPT_LOAD_REQUESTS] = {"requests", 'n', OPT_K_NUM, "N", 1, 1000000000000ull, NULL,
			       "stop after N requests (default: -d 10)"},
	[OPT_LOAD_DURATION] = {"duration", 'd', OPT_K_NUM, "S", 1, 86400, NULL, "run S seconds"},
	[OPT_LOAD_KEEPALIVE] = {"keepalive", 'k', OPT_K_FLAG, NULL, 0, 0, NULL,
				"reuse connections (else Connection: close, one per\n"
				"request)"},
	[OPT_LOAD_HOLD] = {"hold", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			   "(with -k) one request per connection, then keep every\n"
			   "connection open and idle until -d S or SIGINT/SIGTERM"},
	[OPT_LOAD_IPS] = {"ips", 0, OPT_K_NUM, "N", 1, 64, NULL,
			  "N client addresses ADDR, ADDR+1, ...: N worker processes,\n"
			  "on switch ports PORT, PORT+1, ... (dev switch: only)"},
	[OPT_LOAD_TIMEOUT] = {"timeout", 0, OPT_K_NUM, "S", 1, 3600, NULL,
			      "a request (connect included) fails after S s"},

	[OPT_PING_COUNT] = {"count", 'c', OPT_K_NUM, "N", 1, 65535, NULL, "requests to send"},
	[OPT_PING_INTERVAL] = {"interval", 'i', OPT_K_NUM, "MS", 1, 3600000, NULL,
			       "time between requests in ms"},
	[OPT_PING_SIZE] = {"size", 's', OPT_K_NUM, "N", 0, IFACE_MAX_MTU - 28, NULL,
			   "payload bytes per request (at most the MTU - 28)"},
	[OPT_PING_TIMEOUT] = {"timeout", 'W', OPT_K_NUM, "S", 1, 3600, NULL,
			      "a reply later than S s is lost"},
	[OPT_PING_V6] = {"ipv6", '6', OPT_K_FLAG, NULL, 0, 0, NULL,
			 "ICMPv6: DST is an IPv6 address (needs --ip6)"},

	[OPT_TC_CONNECT] = {"connect", 0, OPT_K_ENDPOINT, "ADDR:PORT", 0, 0, NULL,
			    "the server (required); [ADDR]:PORT for IPv6 (needs --ip6)"},
	[OPT_TC_SEND_FILE] = {"send-file", 0, OPT_K_STR, "FILE", 0, 0, NULL,
			      "send the contents of FILE"},
	[OPT_TC_SEND_RANDOM] = {"send-random", 0, OPT_K_SIZE, "N", 0, 1ull << 50, NULL,
				"send N pseudo-random bytes (K, M, G: x1024)"},
	[OPT_TC_SEED] = {"seed", 0, OPT_K_U64, "S", 0, 0, NULL,
			 "seed of the random payload (decimal or 0x hex)"},
	[OPT_TC_EXPECT_ECHO] = {"expect-echo", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
				"succeed only if exactly the sent bytes came back"},
	[OPT_TC_CONNS] = {"conns", 0, OPT_K_NUM, "N", 1, 100000000, NULL, "connections in all"},
	[OPT_TC_SEQUENTIAL] = {"sequential", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			       "one connection at a time (the default)"},
	[OPT_TC_PARALLEL] = {"parallel", 0, OPT_K_NUM, "P", 1, 65536, NULL,
			     "up to P connections at a time"},
	[OPT_TC_TIMEOUT] = {"timeout", 0, OPT_K_NUM, "S", 1, 86400, NULL,
			    "give up after S seconds in all"},
	[OPT_TC_TCP_TRACE] = {"tcp-trace", 0, OPT_K_STR, "FILE", 0, 0, NULL,
			      "every 10 ms, each open connection's cwnd, ssthresh, pipe,\n"
			      "windows, send buffer, RTT, pacing rate, bytes acked, what held\n"
			      "the sender (limit: tcp.h's enum tcp_limit), the loss state and\n"
			      "BBR's state and bandwidth estimate into FILE (TSV)"},

	/* impair: bounds in millionths (OPT_K_DEC).  A minute of delay is far
	 * beyond any path the tests model; 100 Gbit/s beyond any veth. */
	[OPT_IMP_A] = {"a", 0, OPT_K_STR, "IFACE", 0, 0, NULL, "interface A (required)"},
	[OPT_IMP_B] = {"b", 0, OPT_K_STR, "IFACE", 0, 0, NULL, "interface B (required)"},
	[OPT_IMP_DIR] = {"dir", 0, OPT_K_CHOICE, "a2b|b2a|both", 0, 0, dir_choices,
			 "the direction(s) impaired; the other passes untouched"},
	[OPT_IMP_LOSS] = {"loss", 0, OPT_K_DEC, "PCT", 0, 100ull * OPT_DEC_ONE, NULL,
			  "drop a frame with probability PCT %"},
	[OPT_IMP_DELAY] = {"delay", 0, OPT_K_DEC, "MS", 0, 60000ull * OPT_DEC_ONE, NULL,
			   "hold every frame MS ms"},
	[OPT_IMP_JITTER] = {"jitter", 0, OPT_K_DEC, "MS", 0, 60000ull * OPT_DEC_ONE, NULL,
			    "vary the delay uniformly by +-MS ms; frames keep their\n"
			    "order (unless reorder sends them ahead)"},
	[OPT_IMP_REORDER] = {"reorder", 0, OPT_K_DEC, "PCT", 0, 100ull * OPT_DEC_ONE, NULL,
			     "send PCT % of the frames at once, skipping the delay,\n"
			     "so they overtake the delayed ones (netem's reorder)"},
	[OPT_IMP_DUPLICATE] = {"duplicate", 0, OPT_K_DEC, "PCT", 0, 100ull * OPT_DEC_ONE, NULL,
			       "send PCT % of the frames twice"},
	[OPT_IMP_CORRUPT] = {"corrupt", 0, OPT_K_DEC, "PCT", 0, 100ull * OPT_DEC_ONE, NULL,
			     "flip one random bit after the Ethernet header of PCT %\n"
			     "of the frames"},
	[OPT_IMP_RATE] = {"rate", 0, OPT_K_DEC, "MBIT", 0, 100000ull * OPT_DEC_ONE, NULL,
			  "a bottleneck of MBIT Mbit/s per direction (a token\n"
			  "bucket one frame deep, its queue bounded by limit,\n"
			  "drop-tail); 0: none"},
	[OPT_IMP_LIMIT] = {"limit", 0, OPT_K_NUM, "N", 1, 1000000, NULL,
			   "frames held (delayed or queued) per direction; the next\n"
			   "is dropped (drop-tail)"},
	[OPT_IMP_SEED] = {"seed", 0, OPT_K_U64, "S", 0, 0, NULL,
			  "seed of the impairments' random choices (a stream per\n"
			  "direction): the same seed and the same frames give the\n"
			  "same impairments"},

	/* switch and pktgen.  The ring sizes ring_region_size accepts. */
	[OPT_SLOTS] = {"slots", 0, OPT_K_NUM, "N", 2, 32768, NULL, "slots per ring, a power of two"},
	[OPT_SW_PORTS] = {"ports", 0, OPT_K_NUM, "N", 1, OPT_SW_PORTS_MAX, NULL, "ports"},
	[OPT_SW_PCAP_PORT] = {"pcap-port", 0, OPT_K_NUM, "P", 0, OPT_SW_PORTS_MAX - 1, NULL,
			      "record the frames of port P (both directions) into\n"
			      "--pcap's FILE"},
	[OPT_SW_AGE] = {"age", 0, OPT_K_NUM, "S", 1, 1000000, NULL, "MAC table aging in seconds"},
	[OPT_PG_SIZE] = {"size", 0, OPT_K_NUM, "N", ETH_MIN_FRAME, ETH_HLEN + ETH_MTU, NULL,
			 "frame bytes without FCS (60: 64 on the wire)"},
	[OPT_PG_COUNT] = {"count", 0, OPT_K_NUM, "N", 1, UINT64_MAX, NULL,
			  "stop after N frames (default: no limit)"},
	/* Any destination a test may want to flood or steer: multicast too. */
	[OPT_PG_DST_MAC] = {"dst-mac", 0, OPT_K_MAC, "MAC", 0, 0, NULL,
			    "tx: destination MAC, any but all-zero"},
	/* The benchmarking range (RFC 2544), so that a mistyped device never
	 * floods a real network with someone's address. */
	[OPT_PG_SRC_IP] = {"src-ip", 0, OPT_K_IPV4, "ADDR", 0, 0, NULL,
			   "tx: UDP source, inside 198.18.0.0/15"},
	[OPT_PG_DST_IP] = {"dst-ip", 0, OPT_K_IPV4, "ADDR", 0, 0, NULL,
			   "tx: UDP destination, inside 198.18.0.0/15"},
	[OPT_PG_SPORT] = {"sport", 0, OPT_K_NUM, "N", 1, 65535, NULL, "tx: UDP source port"},
	[OPT_PG_DPORT] = {"dport", 0, OPT_K_NUM, "N", 1, 65535, NULL,
			  "tx: UDP destination port (9: discard)"},
	[OPT_PG_BATCH] = {"batch", 0, OPT_K_NUM, "N", 1, 4096, NULL, "frames per sync"},

	/* vm: how QEMU runs the guest.  -p is Docker's --publish, by its name. */
	[OPT_VM_PUBLISH] = {"publish", 'p', OPT_K_FWD, "HOST:GUEST[/PROTO]", 0, 0, NULL,
			    "forward 127.0.0.1:HOST to the guest's port GUEST (tcp\n"
			    "by default; repeatable, at most 16; user networking only)"},
	/* A TAP's name is at most IFNAMSIZ - 1 bytes; a comma would end
	 * QEMU's -netdev value. */
	[OPT_VM_NET] = {"net", 0, OPT_K_STR, "user|tap:NAME", 0, 0, NULL,
			"QEMU user networking (guest 10.0.2.15, gw 10.0.2.2) or\n"
			"an existing TAP device NAME"},
	/* QEMU's -m as given: a bare number is MiB there, so not OPT_K_SIZE. */
	[OPT_VM_MEM] = {"mem", 0, OPT_K_STR, "SIZE", 0, 0, NULL,
			"guest memory: up to 7 digits and K, M or G (e.g. 1G)"},
	[OPT_VM_SMP] = {"smp", 0, OPT_K_NUM, "N", 1, OPT_VM_SMP_MAX, NULL,
			"vCPUs: QEMU -smp N (TCG multi-threaded); the guest finds\n"
			"them in the ACPI MADT and starts each one; with --net\n"
			"tap:NAME (a multi_queue TAP) one queue pair and one HTTP\n"
			"stack per vCPU"},
	[OPT_VM_ACCEL] = {"accel", 0, OPT_K_CHOICE, "auto|kvm|tcg", 0, 0, accel_choices,
			  "auto takes KVM only if /dev/kvm is hardware KVM\n"
			  "(kvm_intel or kvm_amd loaded, kvm_pvm not), else TCG"},
	[OPT_VM_MACHINE] = {"machine", 0, OPT_K_CHOICE, "pc|microvm", 0, 0, machine_choices,
			    "pc: virtio-net on PCI with MSI-X; microvm: QEMU -M microvm,\n"
			    "Firecracker's device model: no PCI, no ACPI, virtio-net\n"
			    "over MMIO named on the kernel command line, its interrupt\n"
			    "through the I/O APIC, one vCPU (docs/microvm.md)"},
	[OPT_VM_IMAGE] = {"image", 0, OPT_K_STR, "PATH", 0, 0, NULL,
			  "kernel image (default: skiff-uk.elf next to this binary,\n"
			  "else ../lib/skiff/skiff-uk.elf from it, as installed)"},
	[OPT_VM_PROXY] = {"proxy", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			  "the reverse proxy's image, skiff-proxy-uk.elf, found the\n"
			  "same way: `skiff vm --proxy -- upstream=10.0.2.2:8000`\n"
			  "(docs/proxy.md; `-- help` lists its words)"},
	[OPT_VM_DRY_RUN] = {"dry-run", 0, OPT_K_FLAG, NULL, 0, 0, NULL,
			    "print the QEMU command line and exit (a --root archive\n"
			    "is left in place for it)"},
};

/* ---- the commands ---- */

/* The learned spin: at `ab -c 1` it matches a fixed 100 us spin hosted,
 * spends about half the CPU on a slow client, and under TCG (where a
 * guest's spin is emulated and takes the host CPU QEMU's own threads
 * need) it serves more; docs/bench-http.md, 2026-12-01.  The load generator keeps a
 * fixed spin: it is there to be fast, not frugal. */
#define SPIN_DEFAULT "auto"
#define SPIN_LOAD_DEFAULT "100"

static const struct opt_use echo_use[] = {
	{OPT_DEV, 0, NULL, NULL},
	{OPT_IP, 0, NULL, NULL},
	{OPT_GW, 0, NULL, NULL},
	{OPT_IP6, 0, NULL, NULL},
	{OPT_GW6, 0, NULL, NULL},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, NULL},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
	{OPT_TCP_CC, 0, "cubic", NULL},
	{OPT_WORKERS, 0, "1", NULL},
	{OPT_TCP_BUF_MAX, 0, "4M", NULL},
	{OPT_TCP_MEM, 0, "64M", NULL},
};

const struct opt_cmd opt_cmd_echo = {
	.name = "echo",
	.synopsis = "skiff echo --dev DEV --ip ADDR/LEN [--gw ADDR] [--ip6 ADDR/LEN]... [--gw6 ADDR]\n"
		    "                  [--mac MAC] [--stats] [--pcap FILE] [--offload on|off] [--spin-us N]\n"
		    "                  [--tcp-cc cubic|newreno|bbr] [--workers N|auto] [--tcp-buf-max N]\n"
		    "                  [--tcp-mem N]",
	.about = "Answers ARP, ICMP echo, UDP and TCP echo (port 7) and TCP discard (port 9)\n"
		 "as ADDR on DEV; with --ip6 also neighbour discovery, ICMPv6 echo and the same\n"
		 "UDP and TCP ports over IPv6.",
	.use = echo_use,
	.nuse = SK_ARRAY_LEN(echo_use),
	.footer = "Prints one line when ready; SIGINT or SIGTERM stops it (exit 0).",
};

static const struct opt_use tcp_client_use[] = {
	{OPT_DEV, 0, NULL, NULL},
	{OPT_IP, 0, NULL, NULL},
	{OPT_GW, 0, NULL, NULL},
	{OPT_IP6, 0, NULL, NULL},
	{OPT_GW6, 0, NULL, NULL},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_TC_CONNECT, 0, NULL, NULL},
	{OPT_TC_SEND_FILE, 0, NULL, NULL},
	{OPT_TC_SEND_RANDOM, 0, NULL, NULL},
	{OPT_TC_SEED, 0, "1", NULL},
	{OPT_TC_EXPECT_ECHO, 0, NULL, NULL},
	{OPT_TC_CONNS, 0, "1", NULL},
	{OPT_TC_SEQUENTIAL, 0, NULL, NULL},
	{OPT_TC_PARALLEL, 0, NULL, NULL},
	{OPT_TC_TIMEOUT, 0, "60", NULL},
	{OPT_TC_TCP_TRACE, 0, NULL, NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, NULL},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
	{OPT_TCP_CC, 0, "cubic", NULL},
	{OPT_TCP_BUF_MAX, 0, "4M", NULL},
	{OPT_TCP_MEM, 0, "64M", NULL},
};

const struct opt_cmd opt_cmd_tcp_client = {
	.name = "tcp-client",
	.synopsis =
		"skiff tcp-client --dev DEV --ip ADDR/LEN [--gw ADDR] [--ip6 ADDR/LEN]...\n"
		"                        [--gw6 ADDR] [--mac MAC] --connect ADDR:PORT\n"
		"                        (--send-file FILE | --send-random N\n"
		"                        [--seed S]) [--expect-echo] [--conns N [--sequential |\n"
		"                        --parallel P]] [--timeout S] [--tcp-trace FILE]\n"
		"                        [--stats] [--pcap FILE]\n"
		"                        [--offload on|off]\n"
		"                        [--spin-us N] [--tcp-cc cubic|newreno|bbr] [--tcp-buf-max N]\n"
		"                        [--tcp-mem N]",
	.about = "Runs skiff's own TCP as the client: each connection sends the payload, half-closes\n"
		 "and reads until the server closes, hashing (SHA-256) what it sent and what came back.",
	.use = tcp_client_use,
	.nuse = SK_ARRAY_LEN(tcp_client_use),
	.footer = "Prints one result line:\n"
		  "  skiff tcp-client: conns=N ok=N failed=N sent=B received=B secs=S mbit_s=R\n"
		  "                    sha256_sent=HEX sha256_received=HEX [error=...]\n"
		  "(the hashes of the last connection).  Exit 0 if every connection succeeded, 1 if\n"
		  "one failed or the time ran out, 2 on bad arguments.",
};

static const struct opt_use ping_use[] = {
	{OPT_DEV, 0, NULL, NULL},
	{OPT_IP, 0, NULL, NULL},
	{OPT_GW, 0, NULL, NULL},
	{OPT_IP6, 0, NULL, NULL},
	{OPT_GW6, 0, NULL, NULL},
	{OPT_PING_V6, 0, NULL, NULL},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_PING_COUNT, 0, "4", NULL},
	{OPT_PING_INTERVAL, 0, "1000", NULL},
	{OPT_PING_SIZE, 0, "56", NULL},
	{OPT_PING_TIMEOUT, 0, "2", NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, NULL},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
};

const struct opt_cmd opt_cmd_ping = {
	.name = "ping",
	.synopsis = "skiff ping --dev DEV --ip ADDR/LEN [--gw ADDR] [--ip6 ADDR/LEN]... [--gw6 ADDR]\n"
		    "                  [-6] [--mac MAC] [-c N] [-i MS] [-s N] [-W S] [--stats]\n"
		    "                  [--pcap FILE] [--offload on|off] [--spin-us N] DST",
	.about = "Sends N ICMP echo requests to DST from skiff's own stack as ADDR on DEV,\n"
		 "and checks every reply's payload byte for byte against its request.  With -6,\n"
		 "ICMPv6 echo to an IPv6 DST, once DAD has made a source address usable.",
	.use = ping_use,
	.nuse = SK_ARRAY_LEN(ping_use),
	.max_args = 1,
	.footer = "Prints a line per reply and a summary; exit 0 when every request got one\n"
		  "intact reply in time, 1 otherwise, 2 on a bad argument.",
};

static const struct opt_use serve_use[] = {
	{OPT_STACK, 0, NULL, NULL},
	{OPT_DEV, 0, NULL, "(stack skiff) tap:NAME | packet:IFACE | xdp:IFACE |\nswitch:NAME/PORT"},
	{OPT_IP, OPT_USE_BARE, NULL,
	 "skiff: this host's address and prefix (ADDR/LEN,\n"
	 "required); linux: the address to bind (default any)"},
	{OPT_GW, 0, NULL, "(stack skiff) default gateway, inside ip's subnet"},
	{OPT_IP6, 0, NULL, "(stack skiff) also this IPv6 address (repeatable), or\n"
			   "auto (SLAAC): the server listens on both families"},
	{OPT_GW6, 0, NULL, "(stack skiff) IPv6 default router"},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_PORT, 0, "80", NULL},
	{OPT_ROOT, 0, NULL, NULL},
	{OPT_CONFIG, 0, NULL, NULL},
	{OPT_CACHE_CONTROL, 0, NULL, NULL},
	{OPT_SENDFILE, 0, "on", NULL},
	{OPT_HTTP2, 0, "on", NULL},
	{OPT_TLS_CERT, 0, NULL, NULL},
	{OPT_TLS_KEY, 0, NULL, NULL},
	{OPT_TLS_PORT, 0, "443", NULL},
	{OPT_TLS_HANDSHAKE_TIMEOUT, 0, "10", NULL},
	{OPT_TLS_TICKET_ROTATE, 0, "3600", NULL},
	{OPT_TLS_REDIRECT, 0, NULL, NULL},
	{OPT_TLS_SNI, 0, NULL, NULL},
	{OPT_TLS_ENGINE, 0, "openssl", NULL},
	{OPT_TLS_ALPN, 0, "h2,http/1.1", NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, "(stack skiff) record every frame the device sees"},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_MAX_CONNS, 0, "4096", NULL},
	{OPT_HEADER_TIMEOUT, 0, "10", NULL},
	{OPT_KEEPALIVE_TIMEOUT, 0, "60", NULL},
	{OPT_MAX_BODY, 0, "1048576", NULL},
	/* An HTTP connection receives small requests: 32 KiB of receive ring
	 * (the engine's default is 128 KiB each way, for bulk transfer).  Pages
	 * of the arena become resident only as a socket's rings wrap through
	 * them, so a smaller ring bounds what an idle (but once busy)
	 * connection holds.  The send ring stays at 128 KiB: a 100 KiB answer
	 * then leaves in one send on a new connection, where 64 KiB took two
	 * sends, a partial one and a ring grow (12-14% more server CPU per
	 * 100 KiB request on skiff's stack, measured 2026-12-04; serve --root
	 * had run with 128 KiB since the workers commit dropped the flags). */
	{OPT_TCP_SNDBUF, 0, "131072", NULL},
	{OPT_TCP_RCVBUF, 0, "32768", NULL},
	{OPT_TCP_CC, 0, "cubic", NULL},
	{OPT_TCP_BUF_MAX, 0, "4M", NULL},
	{OPT_TCP_MEM, 0, "64M", NULL},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
	{OPT_TRACE, 0, NULL, NULL},
	{OPT_ACCESS_LOG, 0, NULL, NULL},
	{OPT_ACCESS_LOG_FORMAT, 0, "combined", NULL},
	{OPT_DRAIN_TIMEOUT, 0, "10", NULL},
	{OPT_LOG_LEVEL, 0, "warn", NULL},
	{OPT_ERROR_LOG, 0, NULL, NULL},
	{OPT_METRICS, 0, NULL, NULL},
	{OPT_METRICS_ALLOW_REMOTE, 0, NULL, NULL},
	{OPT_CONTROL, 0, NULL, NULL},
	{OPT_WORKERS, 0, "1", NULL},
};

const struct opt_cmd opt_cmd_serve = {
	.name = "serve",
	.synopsis =
		"skiff serve [--stack skiff|linux] [--dev DEV] [--ip ADDR/LEN] [--gw ADDR]\n"
		"                   [--ip6 ADDR/LEN]... [--gw6 ADDR] [--mac MAC] [--port N]\n"
		"                   [--root DIR | --config FILE] [--stats] [--pcap FILE]\n"
		"                   [--offload on|off] [--max-conns N] [--header-timeout S]\n"
		"                   [--keepalive-timeout S] [--max-body N] [--tcp-sndbuf N]\n"
		"                   [--tcp-rcvbuf N] [--spin-us N]\n"
		"                   [--tcp-cc cubic|newreno|bbr] [--tcp-buf-max N] [--tcp-mem N]\n"
		"                   [--trace] [--cache-control VALUE] [--sendfile on|off]\n"
		"                   [--http2 on|off]\n"
		"                   [--tls-cert FILE --tls-key FILE [--tls-port N]\n"
		"                    [--tls-handshake-timeout S] [--tls-ticket-rotate S]\n"
		"                    [--tls-redirect] [--tls-sni NAME:CERT:KEY]...]\n"
		"                   [--tls-engine openssl|gnutls|wolfssl]\n"
		"                   [--tls-alpn http/1.1|h2,http/1.1]\n"
		"                   [--access-log FILE|- [--access-log-format combined|json]]\n"
		"                   [--drain-timeout S] [--log-level error|warn|info|debug]\n"
		"                   [--error-log FILE|-]\n"
		"                   [--metrics ADDR:PORT [--metrics-allow-remote]] [--control PATH|none]\n"
		"                   [--workers N|auto]",
	.about = "Serves HTTP/1.1 and HTTP/2 (GET, HEAD): '/' answers a 41-byte hello world, or with --root\n"
		 "every file under DIR (mapped read-only, not copied; SIGHUP re-reads DIR).  dev,\n"
		 "gw, ip6, gw6, mac, pcap, tcp-sndbuf, tcp-rcvbuf, tcp-cc, tcp-buf-max, tcp-mem\n"
		 "and spin-us go with --stack skiff, whose listener takes IPv4 and (with --ip6)\n"
		 "IPv6.  The unikernel takes the same options as words: skiff vm -- ip=ADDR/LEN\n"
		 "max-conns=N ...",
	.use = serve_use,
	.nuse = SK_ARRAY_LEN(serve_use),
	.footer = "Prints one line when listening.  SIGTERM drains (see drain-timeout), then\n"
		  "exits 0; SIGINT stops it at once (exit 0).  SIGHUP reloads --root and the\n"
		  "tls-cert/tls-key files within a second: new requests get the new tree, new\n"
		  "connections the new certificate (open ones keep theirs); a part that fails\n"
		  "to load is reported and the one in use kept.",
};

static const struct opt_use load_use[] = {
	{OPT_LOAD_CONNS, 0, NULL, NULL},
	{OPT_LOAD_REQUESTS, 0, NULL, NULL},
	{OPT_LOAD_DURATION, 0, NULL, NULL},
	{OPT_LOAD_KEEPALIVE, 0, NULL, NULL},
	{OPT_LOAD_HOLD, 0, NULL, NULL},
	{OPT_STACK, 0, NULL, NULL},
	{OPT_DEV, 0, NULL, NULL},
	{OPT_IP, 0, NULL, "this client's address (stack skiff)"},
	{OPT_GW, 0, NULL, "(stack skiff) default gateway, inside ip's subnet"},
	{OPT_IP6, 0, NULL, "(stack skiff) also this IPv6 address (repeatable), or\n"
			   "auto (SLAAC): for an http://[v6]/ URL"},
	{OPT_GW6, 0, NULL, "(stack skiff) IPv6 default router"},
	{OPT_MAC, 0, NULL, "(stack skiff, one address) this client's MAC"},
	{OPT_LOAD_IPS, 0, NULL, NULL},
	{OPT_WORKERS, 0, "1",
	 "threads, each its own loop and 1/N of the connections and\n"
	 "requests; auto: one per online core.  skiff: queue k of N of\n"
	 "one device (packet:, tap:, switch:; not xdp:, nor a TAP\n"
	 "without its steering program: exit 2), one address, source\n"
	 "ports steered back to each worker (docs/smp.md); linux: the\n"
	 "kernel's sockets and ports.  Not with ips, hold, pcap, ip6"},
	{OPT_PCAP, 0, NULL, "(stack skiff, one address) record every frame"},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_SPIN_US, 0, SPIN_LOAD_DEFAULT, "(stack skiff) poll this many us after work before parking"},
	{OPT_LOAD_TIMEOUT, 0, "10", NULL},
	{OPT_STATS, 0, NULL, "print the stack's counters at the end"},
};

const struct opt_cmd opt_cmd_load = {
	.name = "load",
	.synopsis = "skiff load URL -c N [-n N | -d S] [-k] [--hold]\n"
		    "                  [--dev DEV --ip ADDR/LEN [--gw ADDR] [--ip6 ADDR/LEN]... [--gw6 ADDR]\n"
		    "                  [--mac MAC] [--ips N] [--pcap FILE] [--offload on|off]\n"
		    "                  [--spin-us N] | --stack linux]\n"
		    "                  [--workers N|auto] [--timeout S] [--stats]",
	.about = "HTTP/1.1 load generator: N connections issue GET URL, keep-alive or a new\n"
		 "connection per request, and report requests/s, transfer, latency p50/p99/max and\n"
		 "failed requests by kind (connect, read, write, timeout, status, parse).  Exit 0\n"
		 "only if no request failed.  URL is http://IPV4[:PORT][/PATH] (no DNS).",
	.use = load_use,
	.nuse = SK_ARRAY_LEN(load_use),
	.max_args = 1,
	.footer = NULL,
};

static const struct opt_use impair_use[] = {
	{OPT_IMP_A, 0, NULL, NULL},
	{OPT_IMP_B, 0, NULL, NULL},
	{OPT_IMP_DIR, 0, "both", NULL},
	{OPT_IMP_LOSS, 0, "0", NULL},
	{OPT_IMP_DELAY, 0, "0", NULL},
	{OPT_IMP_JITTER, 0, "0", NULL},
	{OPT_IMP_REORDER, 0, "0", NULL},
	{OPT_IMP_DUPLICATE, 0, "0", NULL},
	{OPT_IMP_CORRUPT, 0, "0", NULL},
	{OPT_IMP_RATE, 0, "0", NULL},
	/* netem's default is 1,000 frames; at 50 ms one way that caps a path
	 * at ~29 MiB/s, below what Linux reaches on a veth, so the default
	 * leaves the bench room (8,192 frames: ~240 MiB/s at 50 ms). */
	{OPT_IMP_LIMIT, 0, "8192", NULL},
	{OPT_IMP_SEED, 0, "1", NULL},
};

const struct opt_cmd opt_cmd_impair = {
	.name = "impair",
	.synopsis = "skiff impair --a IFACE --b IFACE [--dir a2b|b2a|both] [--loss PCT]\n"
		    "                    [--delay MS] [--jitter MS] [--reorder PCT] [--duplicate PCT]\n"
		    "                    [--corrupt PCT] [--rate MBIT] [--limit N] [--seed S]",
	.about = "A netem-like impairing relay for the test namespaces: every frame read from one\n"
		 "interface (AF_PACKET) is written to the other, impaired on the way in the\n"
		 "directions dir names: lost, duplicated, corrupted, rate-limited, delayed (with\n"
		 "jitter), or sent ahead of the delayed ones (reorder).  PCT and MS take decimals\n"
		 "(0.1).",
	.use = impair_use,
	.nuse = SK_ARRAY_LEN(impair_use),
	.footer = "Prints \"relay: ready\" once both interfaces are open; SIGINT or SIGTERM stops\n"
		  "it (exit 0) with one line of counters: relay: a2b=N b2a=N lost=N ...",
};

/* The unikernel: `skiff serve --stack skiff` in a guest, on QEMU's user
 * network by default.  Its RAM sizes the defaults (smaller pools than the
 * hosted server's). */
static const struct opt_use uk_use[] = {
	{OPT_IP, 0, "10.0.2.15/24", NULL},
	{OPT_GW, 0, "10.0.2.2", "default gateway, inside ip's subnet (the default\n"
				"applies only when it is)"},
	{OPT_IP6, 0, NULL, NULL},
	{OPT_GW6, 0, NULL, NULL},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_PORT, 0, "80", NULL},
	{OPT_MAX_CONNS, 0, "2048", NULL},
	{OPT_HTTP2_SESSIONS, 0, "8", NULL}, /* the guest's memory: 8 sessions, ~1.2 MiB */
	{OPT_CACHE_CONTROL, 0, NULL, NULL},
	{OPT_HEADER_TIMEOUT, 0, "10", NULL},
	{OPT_KEEPALIVE_TIMEOUT, 0, "60", NULL},
	{OPT_MAX_BODY, 0, "1048576", NULL},
	{OPT_TCP_SNDBUF, 0, "16384", NULL},
	{OPT_TCP_RCVBUF, 0, "8192", NULL},
	{OPT_TCP_CC, 0, "cubic", NULL},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
	{OPT_EXIT_AFTER, 0, NULL, NULL},
	{OPT_SHUTDOWN_PORT, 0, NULL, NULL},
	{OPT_UK_ACCESS_LOG, 0, NULL, NULL},
	{OPT_ACCESS_LOG_FORMAT, 0, "combined", NULL},
	{OPT_DRAIN_TIMEOUT, 0, "10", "on the shutdown port's \"exit\", stop accepting, finish\n"
				     "the requests in flight, close idle connections, answer\n"
				     "new requests with Connection: close; exit after all are\n"
				     "done, or after S s (0: at once)"},
	{OPT_LOG_LEVEL, 0, "warn", "the error log's threshold (on the console); each kind\n"
				   "of message at most 10 a second, then a count"},
	{OPT_UK_METRICS, 0, NULL, NULL},
	{OPT_FAULT, 0, NULL, NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_NO_MSIX, 0, NULL, NULL},
	{OPT_NO_EVENT_IDX, 0, NULL, NULL},
	{OPT_OFFLOAD, 0, "on", "virtio-net's offloads, those the host offers: CSUM and\n"
			      "HOST_TSO4/6 (tx), GUEST_CSUM (rx); off: none, frames\n"
			      "as before them"},
	/* HTTPS: on when `skiff vm --tls-cert F --tls-key F` put the files
	 * into the boot module (uk/tls_bundle.h); BearSSL, TLS 1.2. */
	{OPT_TLS_PORT, 0, "443", "TCP port for HTTPS (with skiff vm --tls-cert/--tls-key)"},
	{OPT_TLS_HANDSHAKE_TIMEOUT, 0, "10", NULL},
	{OPT_TLS_REDIRECT, 0, NULL, NULL},
	{OPT_TLS_MAX_CONNS, 0, "256", NULL},
	{OPT_TLS_ALPN, 0, "h2,http/1.1", NULL},
	{OPT_HTTP2, 0, "on", NULL},
};

const struct opt_cmd opt_cmd_uk = {
	.name = "skiff-uk",
	.guest = true,
	.synopsis = "skiff vm [VM OPTIONS] -- [WORD...]",
	.about = "The unikernel's command line: the HTTP server of skiff serve --stack skiff, with\n"
		 "ARP, ICMP and UDP echo on port 7, on the virtio-net device.  Words are NAME=VALUE\n"
		 "(flags: NAME), the same names and values as skiff serve's --NAME VALUE.",
	.use = uk_use,
	.nuse = SK_ARRAY_LEN(uk_use),
	.footer = "A bad word stops the boot with its message (exit 1).",
};

/* `skiff stat`: no options, one argument. */
const struct opt_cmd opt_cmd_stat = {
	.name = "stat",
	.synopsis = "skiff stat PID|SOCKET",
	.about = "Prints a running skiff serve's TCP connections (state, Recv-Q, Send-Q, the\n"
		 "4-tuple, then rtt, rto, cwnd, ssthresh, windows and retransmits, as ss -tin\n"
		 "does for Linux's) and every --stats counter, read from its control socket\n"
		 "(serve --control).  PID: the socket at the default path of that process;\n"
		 "SOCKET: a path.  On --stack linux the connections are the kernel's: ss -tin.",
	.use = NULL,
	.nuse = 0,
	.max_args = 1,
	.footer = "Exit 0, or 1 when nobody answers on the socket.",
};

/* An application on http/app.h (examples/, docs/app.md): serve's stack
 * and HTTP options, and the two limits only a handler's bodies need. */
static const struct opt_use app_use[] = {
	{OPT_CONFIG, 0, NULL,
	 "serve the sites of a configuration file (docs/config.md),\n"
	 "whose `app;` routes run this application; the flags that\n"
	 "the file says (port, tls-*, limits, logs, workers) are\n"
	 "refused with it.  SIGHUP reloads it"},
	{OPT_STACK, 0, NULL, NULL},
	{OPT_DEV, 0, NULL, "(stack skiff) tap:NAME | packet:IFACE | xdp:IFACE |\nswitch:NAME/PORT"},
	{OPT_IP, OPT_USE_BARE, NULL,
	 "skiff: this host's address and prefix (ADDR/LEN,\n"
	 "required); linux: the address to bind (default any)"},
	{OPT_GW, 0, NULL, "(stack skiff) default gateway, inside ip's subnet"},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_PORT, 0, "80", NULL},
	{OPT_TLS_CERT, 0, NULL, NULL},
	{OPT_TLS_KEY, 0, NULL, NULL},
	{OPT_TLS_PORT, 0, "443", NULL},
	{OPT_TLS_HANDSHAKE_TIMEOUT, 0, "10", NULL},
	{OPT_TLS_TICKET_ROTATE, 0, "3600", NULL},
	{OPT_TLS_SNI, 0, NULL, NULL},
	{OPT_TLS_ENGINE, 0, "openssl", NULL},
	{OPT_TLS_ALPN, 0, "h2,http/1.1", NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, "(stack skiff) record every frame the device sees"},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_MAX_CONNS, 0, "256", NULL},
	{OPT_HEADER_TIMEOUT, 0, "10", NULL},
	{OPT_BODY_TIMEOUT, 0, "60", NULL},
	{OPT_SEND_TIMEOUT, 0, "60", NULL},
	{OPT_KEEPALIVE_TIMEOUT, 0, "60", NULL},
	{OPT_MAX_BODY, 0, "1048576", NULL},
	{OPT_HTTP2, 0, "on", NULL},
	{OPT_TCP_SNDBUF, 0, "65536", NULL},
	{OPT_TCP_RCVBUF, 0, "65536", NULL},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
	{OPT_ACCESS_LOG, 0, NULL, NULL},
	{OPT_ACCESS_LOG_FORMAT, 0, "combined", NULL},
	{OPT_DRAIN_TIMEOUT, 0, "10", NULL},
	{OPT_WORKERS, 0, "1",
	 "share-nothing workers, each an engine on its own\n"
	 "pinned thread (linux: an SO_REUSEPORT listener; skiff: a\n"
	 "device queue); auto: one per online core.  Only for an\n"
	 "application that allows it (docs/smp.md)"},
};

const struct opt_cmd opt_cmd_app = {
	.name = "app",
	.synopsis = "APP [--config FILE] [--stack skiff|linux] [--dev DEV] [--ip ADDR/LEN]\n"
		    "           [--gw ADDR] [--mac MAC]\n"
		    "           [--port N] [--stats] [--pcap FILE] [--offload on|off] [--max-conns N]\n"
		    "           [--tls-cert FILE --tls-key FILE [--tls-port N]\n"
		    "            [--tls-handshake-timeout S] [--tls-ticket-rotate S]\n"
		    "            [--tls-sni NAME:CERT:KEY]... [--tls-engine openssl|gnutls|wolfssl]\n"
		    "            [--tls-alpn http/1.1|h2,http/1.1]]\n"
		    "           [--header-timeout S] [--body-timeout S] [--send-timeout S]\n"
		    "           [--keepalive-timeout S] [--max-body N] [--http2 on|off]\n"
		    "           [--tcp-sndbuf N] [--tcp-rcvbuf N] [--spin-us N]\n"
		    "           [--access-log FILE|- [--access-log-format combined|json]]\n"
		    "           [--drain-timeout S] [--workers N|auto]",
	.about = "An HTTP application on skiff (http/app.h, docs/app.md), on the kernel's sockets\n"
		 "(--stack linux, the default without --dev) or on skiff's own stack on a device.\n"
		 "With --tls-cert and --tls-key it serves HTTPS on --tls-port as well (the same\n"
		 "routes); SIGHUP then reads the certificates and keys again.",
	.use = app_use,
	.nuse = SK_ARRAY_LEN(app_use),
	.footer = "Prints one line when listening.  SIGTERM drains (see drain-timeout), then\n"
		  "exits 0; SIGINT stops it at once (exit 0).",
};

/* `skiff proxy` (http/proxy.h, docs/proxy.md): the application options,
 * and the upstreams'. */
static const struct opt_use proxy_use[] = {
	{OPT_UPSTREAM, 0, NULL, NULL},
	{OPT_BALANCE, 0, "rr", NULL},
	{OPT_POOL, 0, "32", NULL},
	{OPT_CONNECT_TIMEOUT, 0, "5", NULL},
	{OPT_FIRST_BYTE_TIMEOUT, 0, "60", NULL},
	{OPT_UP_IDLE_TIMEOUT, 0, "60", NULL},
	{OPT_FAIL_MAX, 0, "3", NULL},
	{OPT_FAIL_TIMEOUT, 0, "10", NULL},
	{OPT_CACHE, 0, "0", NULL},
	{OPT_NO_X_CACHE, 0, NULL, NULL},
	{OPT_PURGE_ALLOW, 0, "127.0.0.0/8,::1", NULL},
	{OPT_STACK, 0, NULL, NULL},
	{OPT_DEV, 0, NULL, "(stack skiff) tap:NAME | packet:IFACE | xdp:IFACE |\nswitch:NAME/PORT"},
	{OPT_IP, OPT_USE_BARE, NULL,
	 "skiff: this host's address and prefix (ADDR/LEN,\n"
	 "required); linux: the address to bind (default any)"},
	{OPT_GW, 0, NULL, "(stack skiff) default gateway, inside ip's subnet"},
	{OPT_IP6, 0, NULL, "(stack skiff) also this IPv6 address (repeatable), or\n"
			   "auto (SLAAC): for an [IPv6] upstream"},
	{OPT_GW6, 0, NULL, "(stack skiff) IPv6 default router"},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_PORT, 0, "80", NULL},
	{OPT_TLS_CERT, 0, NULL, NULL},
	{OPT_TLS_KEY, 0, NULL, NULL},
	{OPT_TLS_PORT, 0, "443", NULL},
	{OPT_TLS_HANDSHAKE_TIMEOUT, 0, "10", NULL},
	{OPT_TLS_TICKET_ROTATE, 0, "3600", NULL},
	{OPT_TLS_SNI, 0, NULL, NULL},
	{OPT_TLS_ENGINE, 0, "openssl", NULL},
	{OPT_TLS_ALPN, 0, "h2,http/1.1", NULL},
	{OPT_STATS, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, "(stack skiff) record every frame the device sees"},
	{OPT_OFFLOAD, 0, "on", "(stack skiff) the device\'s checksum and TCP segmentation\n"
				  "offloads (tap:, packet:); off: every frame as before them"},
	{OPT_MAX_CONNS, 0, "256", NULL},
	{OPT_HEADER_TIMEOUT, 0, "10", NULL},
	{OPT_BODY_TIMEOUT, 0, "60", NULL},
	{OPT_SEND_TIMEOUT, 0, "60", NULL},
	{OPT_KEEPALIVE_TIMEOUT, 0, "60", NULL},
	{OPT_MAX_BODY, 0, "1048576", NULL},
	{OPT_TCP_SNDBUF, 0, "65536", NULL},
	{OPT_TCP_RCVBUF, 0, "65536", NULL},
	{OPT_SPIN_US, 0, SPIN_DEFAULT, NULL},
	{OPT_ACCESS_LOG, 0, NULL, NULL},
	{OPT_ACCESS_LOG_FORMAT, 0, "combined", NULL},
	{OPT_DRAIN_TIMEOUT, 0, "10", NULL},
	{OPT_WORKERS, 0, "1",
	 "share-nothing proxies, each on its own pinned thread with\n"
	 "its own upstream pools and a cache of --cache / N; auto:\n"
	 "one per online core (docs/proxy.md)"},
};

const struct opt_cmd opt_cmd_proxy = {
	.name = "proxy",
	.synopsis = "skiff proxy --upstream HOST:PORT[,HOST:PORT...] [--balance rr|least] [--pool N]\n"
		    "           [--connect-timeout S] [--first-byte-timeout S] [--idle-timeout S]\n"
		    "           [--fail-max N] [--fail-timeout S] [--cache SIZE] [--no-x-cache]\n"
		    "           [--purge-allow ADDR[/LEN][,...]|none] [--port N] [--stack skiff|linux]\n"
		    "           [--tls-cert FILE --tls-key FILE [--tls-port N]\n"
		    "            [--tls-handshake-timeout S] [--tls-ticket-rotate S]\n"
		    "            [--tls-sni NAME:CERT:KEY]... [--tls-engine openssl|gnutls|wolfssl]\n"
		    "            [--tls-alpn http/1.1|h2,http/1.1]]\n"
		    "           [--dev DEV] [--ip ADDR/LEN] [--gw ADDR] [--ip6 ADDR/LEN]... [--gw6 ADDR]\n"
		    "           [--mac MAC] [--stats]\n"
		    "           [--pcap FILE] [--offload on|off] [--max-conns N]\n"
		    "           [--header-timeout S] [--body-timeout S]\n"
		    "           [--send-timeout S] [--keepalive-timeout S] [--max-body N]\n"
		    "           [--tcp-sndbuf N] [--tcp-rcvbuf N] [--spin-us N]\n"
		    "           [--access-log FILE|- [--access-log-format combined|json]]\n"
		    "           [--drain-timeout S] [--workers N|auto]",
	.about = "A reverse proxy (docs/proxy.md): every request is parsed strictly and forwarded\n"
		 "to an upstream, the answer parsed strictly and framed again; hop-by-hop fields\n"
		 "removed, X-Forwarded-For, X-Forwarded-Proto and Via added.  On the kernel's\n"
		 "sockets (--stack linux) or on skiff's own stack, whose TCP then carries the\n"
		 "upstream connections too.  With --tls-cert and --tls-key it takes HTTPS on\n"
		 "--tls-port as well (X-Forwarded-Proto: https); upstreams stay plain HTTP.",
	.use = proxy_use,
	.nuse = SK_ARRAY_LEN(proxy_use),
	.footer = "Prints one line when listening.  SIGTERM drains (see drain-timeout; an\n"
		  "exchange with an upstream in flight finishes), then exits 0; SIGINT stops it\n"
		  "at once (exit 0).",
};

/* `skiff switch NAME` (switch/sw.h, cmd/switch.c). */
static const struct opt_use switch_use[] = {
	{OPT_SW_PORTS, 0, "8", NULL},
	{OPT_SLOTS, 0, "1024", "slots per ring of a port, a power of two"},
	{OPT_SW_PCAP_PORT, 0, NULL, NULL},
	{OPT_PCAP, 0, NULL, "where --pcap-port's frames go (libpcap format)"},
	{OPT_STATS, 0, NULL, "print the counters on exit (SIGUSR1 prints them any time)"},
	{OPT_SPIN_US, 0, "100", NULL},
	{OPT_SW_AGE, 0, "300", NULL},
};

const struct opt_cmd opt_cmd_switch = {
	.name = "switch",
	.synopsis = "skiff switch NAME [--ports N] [--slots N] [--pcap-port P --pcap FILE]\n"
		    "                    [--stats] [--spin-us N] [--age S]",
	.about = "A learning Ethernet switch over shared memory.  Processes attach with\n"
		 "--dev switch:NAME/PORT (PORT 0..N-1); frames are copied between ports in\n"
		 "batches, unknown and broadcast destinations are flooded, and a full port\n"
		 "drops (counted) instead of slowing anyone down.  A host with --workers N\n"
		 "attaches each worker as a queue of one port (at most 8); the switch\n"
		 "steers each flow to one queue by its flow hash (ARP to queue 0).  NAME is\n"
		 "1..32 bytes of A-Z a-z 0-9 _ . -",
	.use = switch_use,
	.nuse = SK_ARRAY_LEN(switch_use),
	.max_args = 1,
	.footer = "Prints one line when ready; SIGINT or SIGTERM stops it (exit 0).",
};

/* `skiff pktgen --dev DEV tx|rx` (cmd/pktgen.c). */
static const struct opt_use pktgen_use[] = {
	{OPT_DEV, 0, NULL, NULL},
	{OPT_PG_SIZE, 0, "60", NULL},
	{OPT_PG_COUNT, 0, NULL, NULL},
	{OPT_LOAD_DURATION, 0, NULL, "stop after S seconds (default: no limit)"},
	{OPT_PG_DST_MAC, 0, "ff:ff:ff:ff:ff:ff", NULL},
	{OPT_MAC, 0, NULL, NULL},
	{OPT_PG_SRC_IP, 0, "198.18.0.1", NULL},
	{OPT_PG_DST_IP, 0, "198.18.0.2", NULL},
	{OPT_PG_SPORT, 0, "9", NULL},
	{OPT_PG_DPORT, 0, "9", NULL},
	{OPT_PG_BATCH, 0, "512", NULL},
	{OPT_SLOTS, 0, NULL, "ring slots, a power of two (default: the device's)"},
	{OPT_SPIN_US, 0, "1000", "rx: poll this many us after work before parking; auto:\n"
				 "learn it from the arrival gaps, up to 131 us (runner/spin.h)"},
	{OPT_STATS, 0, NULL, "print the device counters at the end"},
};

const struct opt_cmd opt_cmd_pktgen = {
	.name = "pktgen",
	.synopsis = "skiff pktgen --dev DEV (tx|rx) [--size N] [--count N] [--duration S]\n"
		    "                    [--dst-mac MAC] [--mac MAC] [--src-ip ADDR] [--dst-ip ADDR]\n"
		    "                    [--sport N] [--dport N] [--batch N] [--slots N] [--spin-us N]\n"
		    "                    [--stats]",
	.about = "Sends (tx) or receives (rx) raw frames as fast as the device goes and reports\n"
		 "Mpps and Gbit/s every second and at the end.  tx sends one Ethernet + IPv4 +\n"
		 "UDP frame of --size bytes over and over; rx counts what arrives by destination\n"
		 "MAC (broadcast, multicast, to it, to others), after one broadcast frame that\n"
		 "teaches a learning switch its MAC.",
	.use = pktgen_use,
	.nuse = SK_ARRAY_LEN(pktgen_use),
	.max_args = 1,
	.footer = "The last line is the summary: frames, bytes, seconds, Mpps, Gbit/s.  Exit 0;\n"
		  "1 when the device fails; 2 on a bad argument.",
};

/* `skiff vm [-- GUEST ARGS]` (cmd/vm.c): QEMU's side; the guest's words
 * after -- are opt_cmd_uk's, checked by the guest at boot. */
static const struct opt_use vm_use[] = {
	{OPT_VM_PUBLISH, 0, NULL, NULL},
	{OPT_VM_NET, 0, "user", NULL},
	{OPT_VM_MEM, 0, "256M", NULL},
	{OPT_VM_SMP, 0, "1", NULL},
	{OPT_ROOT, 0, NULL, "serve the files under DIR (no symlinks, no dotfiles):\n"
			    "packed into a read-only archive the guest gets at boot\n"
			    "(-initrd); the guest needs --mem of about 170M + the\n"
			    "tree's size"},
	{OPT_TLS_CERT, 0, NULL, "serve HTTPS too (BearSSL, TLS 1.2) with this certificate\n"
				"chain (PEM, the server's first); needs --tls-key"},
	{OPT_TLS_KEY, 0, NULL, "its private key (PEM: ECDSA P-256 or RSA); both files go\n"
			       "into the boot module (-initrd) after the --root archive"},
	{OPT_CONFIG, 0, NULL, "serve the sites of a configuration file (docs/config.md;\n"
			      "docs/unikernel.md \"skiff vm --config\"): the file, its\n"
			      "`files` folders and its certificates go into the boot\n"
			      "module, and each listener's ADDR:PORT on the host is\n"
			      "forwarded to the guest's PORT; replaces --root, --tls-*\n"
			      "and the guest's port="},
	{OPT_TLS_PORT, 0, "443", "the guest's HTTPS port (guest word tls-port=N); needs\n"
				 "--tls-cert"},
	{OPT_TLS_REDIRECT, 0, NULL, "port 80 answers 301 to https:// (guest word\n"
				    "tls-redirect); needs --tls-cert"},
	{OPT_VM_ACCEL, 0, "auto", NULL},
	{OPT_VM_MACHINE, 0, "pc", NULL},
	{OPT_VM_IMAGE, 0, NULL, NULL},
	{OPT_VM_PROXY, 0, NULL, NULL},
	{OPT_VM_DRY_RUN, 0, NULL, NULL},
};

const struct opt_cmd opt_cmd_vm = {
	.name = "vm",
	.synopsis = "skiff vm [-p HOST:GUEST[/udp|/tcp]]... [--net user|tap:NAME] [--mem SIZE] [--smp N]\n"
		    "                [--root DIR] [--accel auto|kvm|tcg] [--machine pc|microvm]\n"
		    "                [--image PATH | --proxy] [--dry-run]\n"
		    "                [--tls-cert FILE --tls-key FILE [--tls-port N] [--tls-redirect]]\n"
		    "                [--config FILE]\n"
		    "                [-- GUEST ARGS...]",
	.about = "Boots the skiff unikernel under qemu-system-x86_64 with a virtio-net NIC; the\n"
		 "guest's serial console is this terminal.  Exits with the guest's exit code.",
	.use = vm_use,
	.nuse = SK_ARRAY_LEN(vm_use),
	.max_args = 0,
	.rest = "guest arguments",
	.footer = "GUEST ARGS go to the kernel command line: ip=ADDR/LEN gw=ADDR mac=MAC port=N\n"
		  "max-conns=N header-timeout=S keepalive-timeout=S max-body=N tcp-sndbuf=N\n"
		  "tcp-rcvbuf=N spin-us=N exit-after=SECONDS shutdown-port=N fault=ud|pf|gp|de\n"
		  "stats no-msix no-event-idx tls-port=N tls-handshake-timeout=S tls-redirect\n"
		  "tls-max-conns=N tls-alpn=http/1.1|h2,http/1.1 http2=on|off offload=on|off.\n"
		  "The guest serves HTTP/1.1 and HTTP/2 on port 80 (the files of --root, or the\n"
		  "built-in 41-byte '/') and UDP echo on 7: `skiff vm -p 8080:80` gives\n"
		  "http://127.0.0.1:8080/.\n"
		  "Ctrl-C (SIGINT) stops the guest as its shutdown port does: it drains, prints\n"
		  "its counters and exits 0 (on --net user: shutdown-port=65533 unless the words\n"
		  "name one, forwarded from a free UDP port of 127.0.0.1); a second Ctrl-C, or a\n"
		  "guest still running 30 s later, stops QEMU.\n"
		  "Environment: SKIFF_QEMU overrides the QEMU binary.",
};

_Static_assert(OPT_N <= 256, "an option id fits struct opt_use's uint8_t");
_Static_assert(OPT_IP6_MAX <= IFACE_IP6_CFG_MAX, "every --ip6 fits the interface");

void opt_ip6_config(const struct opts *o, struct iface_config *ic)
{
	ic->ip6 = o->nip6 > 0 || o->ip6_auto;
	ic->ip6_slaac = o->ip6_auto;
	ic->nip6 = (uint8_t)o->nip6;
	for (unsigned i = 0; i < o->nip6; i++) {
		sk_memcpy(ic->ip6_addr[i].addr.b, o->ip6[i].addr, 16);
		ic->ip6_addr[i].prefix_len = o->ip6[i].len;
	}
	if (o->v[OPT_GW6].set)
		sk_memcpy(ic->gw6.b, o->v[OPT_GW6].ip6, 16);
}

uint32_t opt_tcp_sockets(uint32_t max_conns)
{
	return max_conns + 1024 + max_conns / 4;
}

/* ---- text ---- */

static size_t slen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static bool seq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* a[0..n) equals the whole of b */
static bool seqn(const char *a, size_t n, const char *b)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i] || !b[i])
			return false;
	return b[n] == 0;
}

/* A host name as a client sends it in SNI (RFC 6066 3: no trailing dot):
 * labels of letters, digits and '-' (not first or last), at most 63 each
 * and 253 in all; or "*." and such a name, of two labels at least. */
static bool sni_name_ok(const char *s, size_t n)
{
	size_t i = 0, labels = 0;
	bool wild = n > 2 && s[0] == '*' && s[1] == '.';
	if (wild)
		i = 2;
	if (n == 0 || n > 253)
		return false;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != '.') {
			char ch = s[j];
			bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				  (ch >= '0' && ch <= '9') || ch == '-';
			if (!ok)
				return false;
			j++;
		}
		if (j == i || j - i > 63 || s[i] == '-' || s[j - 1] == '-')
			return false;
		labels++;
		if (j == n)
			break;
		i = j + 1;
		if (i == n)
			return false; /* a trailing dot */
	}
	return !wild || labels >= 2;
}

static bool sni_same_name(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++) {
		char x = a[i], y = b[i];
		x = (char)(x >= 'A' && x <= 'Z' ? x + 32 : x);
		y = (char)(y >= 'A' && y <= 'Z' ? y + 32 : y);
		if (x != y)
			return false;
	}
	return true;
}

/* A bounded string builder: always NUL-terminated, truncates quietly. */
struct sbuf {
	char *p;
	size_t cap, len;
};

static void put(struct sbuf *b, const char *s)
{
	if (!b->cap)
		return;
	for (; *s && b->len + 1 < b->cap; s++)
		b->p[b->len++] = *s;
	b->p[b->len] = 0;
}

static void put_n(struct sbuf *b, const char *s, size_t n)
{
	if (!b->cap)
		return;
	for (size_t i = 0; i < n && s[i] && b->len + 1 < b->cap; i++)
		b->p[b->len++] = s[i];
	b->p[b->len] = 0;
}

static void put_u64(struct sbuf *b, uint64_t v)
{
	char d[21];
	int i = 20;
	d[i] = 0;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(b, d + i);
}

void opt_format_ipv4(uint32_t ip, char out[16])
{
	struct sbuf b = {out, 16, 0};
	for (int i = 3; i >= 0; i--) {
		put_u64(&b, (ip >> (8 * i)) & 255);
		if (i)
			put(&b, ".");
	}
}

void opt_format_ipv6(const uint8_t a[16], char out[OPT_IPV6_STRLEN])
{
	ipv6_format(a, out);
}

void opt_format_addr(const struct sk_addr *a, uint16_t port, char out[OPT_ADDR_STRLEN])
{
	struct sbuf b = {out, OPT_ADDR_STRLEN, 0};
	char s[OPT_IPV6_STRLEN];
	bool v4 = sk_addr_is_v4(a);
	if (v4)
		opt_format_ipv4(sk_addr_ip4(a), s);
	else
		opt_format_ipv6(a->b, s);
	if (port && !v4)
		put(&b, "[");
	put(&b, s);
	if (port && !v4)
		put(&b, "]");
	if (port) {
		put(&b, ":");
		put_u64(&b, port);
	}
}

static void put_ip(struct sbuf *b, uint32_t ip)
{
	char s[16];
	opt_format_ipv4(ip, s);
	put(b, s);
}

/* "NAME: 'VALUE' " — the start of every value message. */
static struct sbuf msg_value(char *err, size_t errlen, const struct opt_def *d, const char *val)
{
	struct sbuf b = {err, errlen, 0};
	if (errlen)
		err[0] = 0;
	put(&b, d->name);
	put(&b, ": '");
	put(&b, val);
	put(&b, "' ");
	return b;
}

/* ---- the value parsers ---- */

int opt_parse_dec(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		uint64_t d = (uint64_t)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_u64_any(const char *s, uint64_t *v)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return opt_parse_dec(s, v);
	s += 2;
	if (!*s)
		return -1;
	uint64_t x = 0;
	for (; *s; s++) {
		int h = hexdigit(*s);
		if (h < 0 || x >> 60)
			return -1;
		x = x << 4 | (uint64_t)h;
	}
	*v = x;
	return 0;
}

int opt_parse_dec6(const char *s, uint64_t *v)
{
	char whole[21];
	size_t n = 0;
	while (s[n] && s[n] != '.')
		n++;
	if (n == 0 || n >= sizeof(whole))
		return -1;
	sk_memcpy(whole, s, n);
	whole[n] = 0;
	uint64_t w, f = 0;
	if (opt_parse_dec(whole, &w) < 0 || w > UINT64_MAX / OPT_DEC_ONE)
		return -1;
	if (s[n] == '.') {
		const char *p = s + n + 1;
		unsigned digits = 0;
		uint64_t scale = OPT_DEC_ONE;
		for (; *p; p++, digits++) {
			if (*p < '0' || *p > '9' || digits == 6)
				return -1;
			scale /= 10;
			f += (uint64_t)(*p - '0') * scale;
		}
		if (!digits)
			return -1;
	}
	if (w * OPT_DEC_ONE > UINT64_MAX - f)
		return -1;
	*v = w * OPT_DEC_ONE + f;
	return 0;
}

/* A value in millionths as the shortest decimal: 100000 -> "0.1". */
static void put_dec6(struct sbuf *b, uint64_t v)
{
	put_u64(b, v / OPT_DEC_ONE);
	uint64_t f = v % OPT_DEC_ONE;
	if (!f)
		return;
	char d[8] = {'.'};
	int n = 1;
	for (uint64_t scale = OPT_DEC_ONE / 10; f; scale /= 10) {
		d[n++] = (char)('0' + f / scale);
		f %= scale;
	}
	d[n] = 0;
	put(b, d);
}

/* N, NK, NM or NG: K/k, M, G multiply by 1024, 1024^2, 1024^3. */
static int parse_size(const char *s, uint64_t *v)
{
	char digits[24];
	size_t n = slen(s);
	unsigned shift = 0;
	if (n && (s[n - 1] == 'K' || s[n - 1] == 'k'))
		shift = 10;
	else if (n && s[n - 1] == 'M')
		shift = 20;
	else if (n && s[n - 1] == 'G')
		shift = 30;
	if (shift)
		n--;
	if (n == 0 || n >= sizeof(digits))
		return -1;
	sk_memcpy(digits, s, n);
	digits[n] = 0;
	uint64_t x;
	if (opt_parse_dec(digits, &x) < 0 || x > (UINT64_MAX >> shift))
		return -1;
	*v = x << shift;
	return 0;
}

/* Strict dotted quad: four decimal parts 0..255, no leading zeros (which
 * some parsers read as octal), nothing else. */
int opt_parse_ipv4(const char *s, uint32_t *ip)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		uint32_t part = 0;
		int digits = 0;
		const char *start = s;
		while (*s >= '0' && *s <= '9' && digits < 3) {
			part = part * 10 + (uint32_t)(*s++ - '0');
			digits++;
		}
		if (!digits || part > 255 || (digits > 1 && *start == '0'))
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

int opt_parse_ipv6(const char *s, uint8_t a[16])
{
	unsigned g[8];
	int n = 0, gap = -1;
	const char *p = s;
	if (p[0] == ':') {
		if (p[1] != ':')
			return -1;
		gap = 0;
		p += 2;
	}
	while (*p) {
		unsigned v = 0;
		int digits = 0;
		while (hexdigit(*p) >= 0) {
			if (++digits > 4)
				return -1;
			v = v << 4 | (unsigned)hexdigit(*p++);
		}
		if (!digits || n >= 8)
			return -1;
		g[n++] = v;
		if (!*p)
			break;
		if (*p++ != ':')
			return -1;
		if (*p == ':') {
			if (gap >= 0)
				return -1;
			gap = n;
			p++;
		} else if (!*p) {
			return -1; /* a trailing single ':' */
		}
	}
	if (gap < 0 ? n != 8 : n > 7)
		return -1;
	sk_memset(a, 0, 16);
	int tail = gap < 0 ? 0 : n - gap;
	for (int i = 0; i < n; i++) {
		int pos = gap < 0 || i < gap ? i : 8 - tail + (i - gap);
		a[2 * pos] = (uint8_t)(g[i] >> 8);
		a[2 * pos + 1] = (uint8_t)g[i];
	}
	return 0;
}

/* Unicast, global scope: not ::, ::1, a group or link-local (fe80::/10, the
 * interface derives its own). */
static bool ipv6_is_host(const uint8_t a[16], bool link_local_ok)
{
	unsigned any = 0;
	for (int i = 0; i < 15; i++)
		any |= a[i];
	if (!any && a[15] <= 1)
		return false;
	if (a[0] == 0xff)
		return false;
	return link_local_ok || !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

bool opt_ipv4_is_host(uint32_t ip)
{
	return ip != 0 && (ip >> 28) < 0xe;
}

/* "02:00:00:aa:bb:cc" (two hex digits a byte, either case), not all-zero:
 * any destination, multicast too.  0 or -1. */
static int parse_mac_any(const char *s, uint8_t mac[SK_MAC_LEN])
{
	uint8_t m[SK_MAC_LEN];
	for (int i = 0; i < SK_MAC_LEN; i++) {
		int hi = hexdigit(s[0]), lo = hi < 0 ? -1 : hexdigit(s[1]);
		if (lo < 0)
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i < SK_MAC_LEN - 1 && *s++ != ':')
			return -1;
	}
	if (*s)
		return -1;
	unsigned any = 0;
	for (int i = 0; i < SK_MAC_LEN; i++)
		any |= m[i];
	if (!any)
		return -1;
	sk_memcpy(mac, m, SK_MAC_LEN);
	return 0;
}

int opt_parse_mac(const char *s, uint8_t mac[SK_MAC_LEN])
{
	uint8_t m[SK_MAC_LEN];
	if (parse_mac_any(s, m) < 0 || (m[0] & 1))
		return -1;
	sk_memcpy(mac, m, SK_MAC_LEN);
	return 0;
}

static uint32_t prefix_mask(uint8_t len)
{
	return len == 0 ? 0 : len >= 32 ? ~0u : ~(~0u >> len);
}

static const char HOST_WHY[] = "is not a host address (not 0, multicast or class E)";

/* ADDR/LEN (ADDR alone when bare is allowed). */
static int parse_cidr(const struct opt_def *d, const char *s, bool bare, struct opt_val *v,
		      char *err, size_t errlen)
{
	char addr[16];
	size_t n = 0;
	while (s[n] && s[n] != '/')
		n++;
	uint64_t len = 0;
	bool ok = n < sizeof(addr);
	if (ok) {
		sk_memcpy(addr, s, n);
		addr[n] = 0;
		ok = opt_parse_ipv4(addr, &v->ip) == 0;
	}
	if (ok && s[n] == '/')
		ok = opt_parse_dec(s + n + 1, &len) == 0 && len >= 1 && len <= 32 &&
		     (s[n + 1] != '0');
	else if (ok)
		ok = bare;
	if (!ok) {
		struct sbuf b = msg_value(err, errlen, d, s);
		put(&b, bare ? "is not ADDR[/LEN] (e.g. 198.18.0.2/24)"
			     : "is not ADDR/LEN (e.g. 198.18.0.2/24)");
		return OPT_ERROR;
	}
	if (!opt_ipv4_is_host(v->ip)) {
		struct sbuf b = msg_value(err, errlen, d, s);
		put(&b, HOST_WHY);
		return OPT_ERROR;
	}
	v->len = (uint8_t)len;
	return OPT_OK;
}

/* ADDR:PORT, an IPv4 address and a port 1..65535, into v->ip and v->num. */
static bool parse_endpoint(const char *s, struct opt_val *v)
{
	size_t n = slen(s), colon = n;
	while (colon && s[colon - 1] != ':')
		colon--;
	char addr[16];
	uint64_t port = 0;
	if (colon <= 1 || colon - 1 >= sizeof(addr))
		return false;
	sk_memcpy(addr, s, colon - 1);
	addr[colon - 1] = 0;
	if (opt_parse_ipv4(addr, &v->ip) != 0 || opt_parse_dec(s + colon, &port) != 0 || port < 1 ||
	    port > 65535)
		return false;
	v->num = port;
	return true;
}

/* A host name (RFC 1123 2.1): labels of letters, digits and '-', not
 * beginning or ending with '-', joined by '.'; not all digits and dots
 * (that is a bad IPv4 address, not a name). */
static bool host_name_ok(const char *s, size_t n)
{
	if (n == 0 || n >= OPT_NAME_MAX)
		return false;
	bool alpha = false;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool al = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!al && !(c >= '0' && c <= '9') && !(c == '-' && label > 0))
			return false;
		alpha |= al || c == '-';
		label++;
	}
	return alpha && label > 0 && s[n - 1] != '-';
}

/* One item of opt_parse_endpoints_any. */
static bool parse_endpoint_any(const char *s, struct opt_endpoint *ep)
{
	size_t n = slen(s), colon = n;
	while (colon && s[colon - 1] != ':')
		colon--;
	uint64_t port = 0;
	if (colon <= 1 || opt_parse_dec(s + colon, &port) != 0 || port < 1 || port > 65535)
		return false;
	size_t hl = colon - 1; /* the host part, s[0, hl) */
	sk_memset(ep, 0, sizeof(*ep));
	ep->port = (uint16_t)port;
	char h[OPT_NAME_MAX];
	if (s[0] == '[') {
		/* [ADDR6]: ::1 too (an upstream on this host); not ::, a
		 * group, or an IPv4-mapped one (write IPv4 as such) */
		uint8_t a6[16];
		if (hl < 3 || s[hl - 1] != ']' || hl - 2 >= sizeof(h))
			return false;
		sk_memcpy(h, s + 1, hl - 2);
		h[hl - 2] = 0;
		if (opt_parse_ipv6(h, a6) != 0 || a6[0] == 0xff)
			return false;
		ep->addr = sk_addr_v6(a6);
		return !sk_addr_is_any(&ep->addr) && !sk_addr_is_v4(&ep->addr);
	}
	if (hl >= sizeof(h))
		return false;
	sk_memcpy(h, s, hl);
	h[hl] = 0;
	uint32_t ip;
	if (opt_parse_ipv4(h, &ip) == 0) {
		ep->addr = sk_addr_v4(ip);
		return opt_ipv4_is_host(ip);
	}
	if (!host_name_ok(h, hl))
		return false;
	sk_memcpy(ep->name, h, hl + 1);
	return true;
}

int opt_parse_endpoints_any(const char *s, struct opt_endpoint *ep, unsigned max)
{
	unsigned n = 0;
	size_t i = 0;
	for (;;) {
		char one[OPT_NAME_MAX + 8];
		size_t k = 0;
		while (s[i] && s[i] != ',') {
			if (k + 1 >= sizeof(one))
				return -1;
			one[k++] = s[i++];
		}
		one[k] = 0;
		if (n == max || !parse_endpoint_any(one, &ep[n]))
			return -1;
		n++;
		if (!s[i])
			return (int)n;
		i++; /* the comma: another must follow */
	}
}

int opt_parse_endpoints(const char *s, uint32_t *ip, uint16_t *port, unsigned max)
{
	struct opt_endpoint ep[OPT_ENDPOINTS_MAX];
	int n = opt_parse_endpoints_any(s, ep, max < OPT_ENDPOINTS_MAX ? max : OPT_ENDPOINTS_MAX);
	for (int i = 0; i < n; i++) {
		if (ep[i].name[0] || !sk_addr_is_v4(&ep[i].addr))
			return -1;
		ip[i] = sk_addr_ip4(&ep[i].addr);
		port[i] = ep[i].port;
	}
	return n;
}

/* One ADDR[/LEN] of opt_parse_prefixes. */
static bool parse_prefix(const char *s, struct opt_prefix *p)
{
	size_t n = 0;
	while (s[n] && s[n] != '/')
		n++;
	char a[48];
	if (n == 0 || n >= sizeof(a))
		return false;
	sk_memcpy(a, s, n);
	a[n] = 0;
	uint32_t ip;
	uint8_t a6[16];
	unsigned max, base;
	if (opt_parse_ipv4(a, &ip) == 0) {
		p->addr = sk_addr_v4(ip);
		max = 32;
		base = 96;
	} else if (opt_parse_ipv6(a, a6) == 0) {
		p->addr = sk_addr_v6(a6);
		if (sk_addr_is_v4(&p->addr))
			return false; /* ::ffff:a.b.c.d is IPv4: written as such */
		max = 128;
		base = 0;
	} else {
		return false;
	}
	uint64_t len = max;
	if (s[n] == '/' && (opt_parse_dec(s + n + 1, &len) != 0 || len > max))
		return false;
	p->len = (uint8_t)(base + len);
	for (unsigned bit = p->len; bit < 128; bit++)
		p->addr.b[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	return true;
}

int opt_parse_prefixes(const char *s, struct opt_prefix *p, unsigned max)
{
	if (seq(s, "none"))
		return 0;
	unsigned n = 0;
	size_t i = 0;
	for (;;) {
		char one[56];
		size_t k = 0;
		while (s[i] && s[i] != ',') {
			if (k + 1 >= sizeof(one))
				return -1;
			one[k++] = s[i++];
		}
		one[k] = 0;
		if (n == max || !parse_prefix(one, &p[n]))
			return -1;
		n++;
		if (!s[i])
			return (int)n;
		i++;
	}
}

/* skiff vm's -p: HOST:GUEST[/udp|/tcp], ports 1..65535 in decimal (at most
 * 5 digits, no sign).  0 or -1. */
static int parse_port5(const char *s, const char *end, uint16_t *out)
{
	uint32_t v = 0;
	if (s == end || end - s > 5)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint32_t)(*s - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int parse_fwd(const char *s, struct opt_fwd *f)
{
	const char *colon = s;
	while (*colon && *colon != ':')
		colon++;
	if (!*colon)
		return -1;
	const char *slash = colon;
	while (*slash && *slash != '/')
		slash++;
	f->udp = false;
	if (*slash) {
		if (seq(slash, "/udp"))
			f->udp = true;
		else if (!seq(slash, "/tcp"))
			return -1;
	}
	if (parse_port5(s, colon, &f->host) < 0 || parse_port5(colon + 1, slash, &f->guest) < 0)
		return -1;
	return 0;
}

/* skiff vm --net: user, or tap:NAME with NAME 1..15 bytes (IFNAMSIZ - 1)
 * and no comma (it would end QEMU's -netdev value). */
static bool vm_net_ok(const char *s)
{
	if (seq(s, "user"))
		return true;
	if (!(s[0] == 't' && s[1] == 'a' && s[2] == 'p' && s[3] == ':'))
		return false;
	size_t n = slen(s + 4);
	if (n == 0 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[4 + i] == ',')
			return false;
	return true;
}

/* skiff vm --mem: what QEMU's -m takes, as given: 1..7 digits, then
 * nothing (MiB) or one of K M G in either case. */
static bool vm_mem_ok(const char *s)
{
	size_t n = slen(s), i = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || i > 7)
		return false;
	if (i == n)
		return true;
	char c = s[i];
	return i == n - 1 && (c == 'K' || c == 'M' || c == 'G' || c == 'k' || c == 'm' || c == 'g');
}

/* skiff vm --smp's message, in the words it had before the table (scripts
 * and tests/vm_smp.sh look for them), for a bad value and an empty one. */
static int vm_smp_error(char *err, size_t errlen, const char *s)
{
	struct sbuf b = {err, errlen, 0};
	put(&b, "--smp wants a number of vCPUs 1..");
	put_u64(&b, OPT_VM_SMP_MAX);
	put(&b, ", not '");
	put(&b, s ? s : "");
	put(&b, "'");
	return OPT_ERROR;
}

/* Parse `s` as option d's value into v. */
static int parse_value(const struct opt_def *d, const struct opt_use *u, const char *s,
		       struct opt_val *v, char *err, size_t errlen)
{
	struct sbuf b;
	switch (d->kind) {
	case OPT_K_FLAG:
		v->num = 1;
		return OPT_OK;
	case OPT_K_STR:
		if (d == &opt_defs[OPT_CACHE_CONTROL] && !http_cache_control_ok(s)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not a header value (printable ASCII, at most 256 bytes)");
			return OPT_ERROR;
		}
		if (d == &opt_defs[OPT_VM_NET] && !vm_net_ok(s)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not user or tap:NAME (NAME 1..15 bytes, no comma)");
			return OPT_ERROR;
		}
		if (d == &opt_defs[OPT_VM_MEM] && !vm_mem_ok(s)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not a size like 256M or 1G (up to 7 digits; K, M or G)");
			return OPT_ERROR;
		}
		if (d == &opt_defs[OPT_PURGE_ALLOW]) {
			struct opt_prefix pp[OPT_PREFIXES_MAX];
			if (opt_parse_prefixes(s, pp, OPT_PREFIXES_MAX) < 0) {
				b = msg_value(err, errlen, d, s);
				put(&b, "is not none or ADDR[/LEN][,...] (IPv4 or IPv6 prefixes, "
					"at most 16)");
				return OPT_ERROR;
			}
		}
		return OPT_OK; /* non-empty: checked by the caller */
	case OPT_K_NUM:
		if (d == &opt_defs[OPT_SLOTS] && opt_parse_dec(s, &v->num) == 0 &&
		    v->num >= d->lo && v->num <= d->hi && (v->num & (v->num - 1))) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not a power of two in 2..32768");
			return OPT_ERROR;
		}
		if (opt_parse_dec(s, &v->num) == 0 && v->num >= d->lo && v->num <= d->hi)
			return OPT_OK;
		if (d == &opt_defs[OPT_VM_SMP])
			return vm_smp_error(err, errlen, s);
		if (d->choices && seq(s, d->choices[0])) {
			v->num = OPT_NUM_AUTO;
			return OPT_OK;
		}
		b = msg_value(err, errlen, d, s);
		put(&b, "is not a number in ");
		put_u64(&b, d->lo);
		put(&b, "..");
		put_u64(&b, d->hi);
		if (d->choices) {
			put(&b, " or ");
			put(&b, d->choices[0]);
		}
		return OPT_ERROR;
	case OPT_K_SIZE:
		if (parse_size(s, &v->num) == 0 && v->num >= d->lo && v->num <= d->hi)
			return OPT_OK;
		b = msg_value(err, errlen, d, s);
		put(&b, "is not a size in ");
		put_u64(&b, d->lo);
		put(&b, "..");
		put_u64(&b, d->hi);
		put(&b, " bytes (K, M, G: x1024)");
		return OPT_ERROR;
	case OPT_K_DEC:
		if (opt_parse_dec6(s, &v->num) == 0 && v->num >= d->lo && v->num <= d->hi)
			return OPT_OK;
		b = msg_value(err, errlen, d, s);
		put(&b, "is not a number in ");
		put_dec6(&b, d->lo);
		put(&b, "..");
		put_dec6(&b, d->hi);
		put(&b, " (at most 6 decimals)");
		return OPT_ERROR;
	case OPT_K_SNI: {
		/* NAME:CERT:KEY, cut at the first two colons */
		size_t n = 0, c2;
		while (s[n] && s[n] != ':')
			n++;
		c2 = s[n] ? n + 1 : n;
		while (s[c2] && s[c2] != ':')
			c2++;
		if (!s[n] || !s[c2] || c2 == n + 1 || !s[c2 + 1] || c2 + 1 > 0xffff) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not NAME:CERT:KEY (e.g. www.example.com:www.pem:www.key)");
			return OPT_ERROR;
		}
		if (!sni_name_ok(s, n)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "does not start with a host name (letters, digits, '-', '.'; or *.DOMAIN)");
			return OPT_ERROR;
		}
		v->num = (uint64_t)(c2 + 1) << 16 | n;
		return OPT_OK;
	}
	case OPT_K_U64:
		if (parse_u64_any(s, &v->num) == 0)
			return OPT_OK;
		b = msg_value(err, errlen, d, s);
		put(&b, "is not a 64-bit number (decimal or 0x hex)");
		return OPT_ERROR;
	case OPT_K_CIDR:
		return parse_cidr(d, s, u->flags & OPT_USE_BARE, v, err, errlen);
	case OPT_K_IPV4:
		if (opt_parse_ipv4(s, &v->ip) < 0) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not an IPv4 address (e.g. 198.18.0.1)");
			return OPT_ERROR;
		}
		if (!opt_ipv4_is_host(v->ip)) {
			b = msg_value(err, errlen, d, s);
			put(&b, HOST_WHY);
			return OPT_ERROR;
		}
		if ((d == &opt_defs[OPT_PG_SRC_IP] || d == &opt_defs[OPT_PG_DST_IP]) &&
		    (v->ip & 0xfffe0000u) != SK_IP4(198, 18, 0, 0)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not inside 198.18.0.0/15 (the benchmarking range)");
			return OPT_ERROR;
		}
		return OPT_OK;
	case OPT_K_CIDR6: {
		if (seq(s, "auto"))
			return OPT_OK; /* SLAAC: no address of its own (len 0) */
		char addr[OPT_IPV6_STRLEN];
		size_t n = 0;
		while (s[n] && s[n] != '/')
			n++;
		uint64_t len = 0;
		bool ok = n < sizeof(addr) && s[n] == '/';
		if (ok) {
			sk_memcpy(addr, s, n);
			addr[n] = 0;
			ok = opt_parse_ipv6(addr, v->ip6) == 0 && opt_parse_dec(s + n + 1, &len) == 0 &&
			     len >= 1 && len <= 128 && s[n + 1] != '0';
		}
		if (!ok) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not ADDR/LEN (e.g. 2001:2::2/64)");
			return OPT_ERROR;
		}
		if (!ipv6_is_host(v->ip6, false)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not a global unicast address (not ::, ::1, ff00::/8 or fe80::/10)");
			return OPT_ERROR;
		}
		v->len = (uint8_t)len;
		return OPT_OK;
	}
	case OPT_K_IPV6:
		if (opt_parse_ipv6(s, v->ip6) < 0) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not an IPv6 address (e.g. 2001:2::1)");
			return OPT_ERROR;
		}
		if (!ipv6_is_host(v->ip6, true)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not a unicast address (not ::, ::1 or ff00::/8)");
			return OPT_ERROR;
		}
		return OPT_OK;
	case OPT_K_MAC:
		if (d == &opt_defs[OPT_PG_DST_MAC]) {
			if (parse_mac_any(s, v->mac) == 0)
				return OPT_OK;
			b = msg_value(err, errlen, d, s);
			put(&b, "is not a MAC other than all-zero (e.g. ff:ff:ff:ff:ff:ff)");
			return OPT_ERROR;
		}
		if (opt_parse_mac(s, v->mac) == 0)
			return OPT_OK;
		b = msg_value(err, errlen, d, s);
		put(&b, "is not a unicast MAC (e.g. 02:00:00:00:00:01)");
		return OPT_ERROR;
	case OPT_K_CHOICE:
		for (uint64_t i = 0; d->choices[i]; i++)
			if (seq(s, d->choices[i])) {
				v->num = i;
				return OPT_OK;
			}
		b = msg_value(err, errlen, d, s);
		put(&b, "is not one of ");
		for (size_t i = 0; d->choices[i]; i++) {
			if (i)
				put(&b, d->choices[i + 1] ? ", " : " or ");
			put(&b, d->choices[i]);
		}
		return OPT_ERROR;
	case OPT_K_ENDPOINT:
		/* [v6]:PORT only where the command connects over its own stack
		 * (tcp-client); --metrics binds a kernel IPv4 socket. */
		if (d == &opt_defs[OPT_TC_CONNECT] && s[0] == '[') {
			/* [ADDR]:PORT, as in a URL (RFC 3986 3.2.2) */
			size_t close = 1;
			while (s[close] && s[close] != ']')
				close++;
			char addr6[48];
			uint64_t port = 0;
			bool ok = s[close] == ']' && s[close + 1] == ':' && close - 1 < sizeof(addr6) &&
				  close > 1;
			if (ok) {
				sk_memcpy(addr6, s + 1, close - 1);
				addr6[close - 1] = 0;
				ok = opt_parse_ipv6(addr6, v->ip6) == 0 &&
				     opt_parse_dec(s + close + 2, &port) == 0 && port >= 1 && port <= 65535;
			}
			if (!ok) {
				b = msg_value(err, errlen, d, s);
				put(&b, "is not [ADDR]:PORT (e.g. [2001:2::1]:7)");
				return OPT_ERROR;
			}
			if (!ipv6_is_host(v->ip6, true)) {
				b = msg_value(err, errlen, d, s);
				put(&b, "is not a unicast address (not ::, ::1 or ff00::/8)");
				return OPT_ERROR;
			}
			v->v6 = true;
			v->num = port;
			return OPT_OK;
		}
		v->v6 = false;
		if (!parse_endpoint(s, v)) {
			b = msg_value(err, errlen, d, s);
			put(&b, d == &opt_defs[OPT_TC_CONNECT]
					? "is not ADDR:PORT (e.g. 198.18.0.1:7, [2001:2::1]:7)"
					: "is not ADDR:PORT (e.g. 198.18.0.1:7)");
			return OPT_ERROR;
		}
		if (!opt_ipv4_is_host(v->ip)) {
			b = msg_value(err, errlen, d, s);
			put(&b, HOST_WHY);
			return OPT_ERROR;
		}
		return OPT_OK;
	case OPT_K_ENDPOINTS: {
		struct opt_endpoint eps[OPT_ENDPOINTS_MAX];
		int n = opt_parse_endpoints_any(s, eps, OPT_ENDPOINTS_MAX);
		if (n < 0) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not HOST:PORT[,...] (IPv4, [IPv6] or a name; at most 16)");
			return OPT_ERROR;
		}
		v->num = (uint64_t)n;
		return OPT_OK;
	}
	case OPT_K_FWD: {
		struct opt_fwd f;
		if (parse_fwd(s, &f) < 0) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not HOST:GUEST[/udp|/tcp] with ports 1..65535");
			return OPT_ERROR;
		}
		v->num = f.host;
		return OPT_OK;
	}
	case OPT_K_LOGSINK:
		if (seq(s, "console")) {
			v->num = 0;
			return OPT_OK;
		}
		if (!(s[0] == 'u' && s[1] == 'd' && s[2] == 'p' && s[3] == ':') ||
		    !parse_endpoint(s + 4, v)) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is not console or udp:ADDR:PORT (e.g. udp:10.0.2.2:5140)");
			return OPT_ERROR;
		}
		if (!opt_ipv4_is_host(v->ip)) {
			b = msg_value(err, errlen, d, s);
			put(&b, HOST_WHY);
			return OPT_ERROR;
		}
		return OPT_OK;
	}
	return OPT_ERROR;
}

/* ---- setting options ---- */

static const struct opt_use *find_long(const struct opt_cmd *c, const char *name, size_t n)
{
	for (unsigned i = 0; i < c->nuse; i++)
		if (seqn(name, n, opt_defs[c->use[i].id].name))
			return &c->use[i];
	return NULL;
}

static const struct opt_use *find_short(const struct opt_cmd *c, char ch)
{
	for (unsigned i = 0; i < c->nuse; i++)
		if (opt_defs[c->use[i].id].short_name == ch)
			return &c->use[i];
	return NULL;
}

static int unknown(char *err, size_t errlen, const char *prefix, const char *name, size_t n)
{
	struct sbuf b = {err, errlen, 0};
	put(&b, "unknown option '");
	put(&b, prefix);
	put_n(&b, name, n);
	put(&b, "'");
	return OPT_ERROR;
}

/* Give option u the value s (NULL: none given), as the user did (given)
 * or as a default. */
static int assign(struct opts *o, const struct opt_use *u, const char *s, bool given, char *err,
		  size_t errlen)
{
	const struct opt_def *d = &opt_defs[u->id];
	struct sbuf b = {err, errlen, 0};
	if (d->kind == OPT_K_FLAG && s) {
		put(&b, d->name);
		put(&b, ": takes no value, not '");
		put(&b, s);
		put(&b, "'");
		return OPT_ERROR;
	}
	if (d->kind != OPT_K_FLAG && (!s || !*s)) {
		if (d == &opt_defs[OPT_VM_SMP])
			return vm_smp_error(err, errlen, s);
		put(&b, d->name);
		put(&b, ": needs a value (");
		put(&b, d->meta);
		put(&b, ")");
		return OPT_ERROR;
	}
	struct opt_val v;
	sk_memset(&v, 0, sizeof(v));
	if (parse_value(d, u, s, &v, err, errlen) < 0)
		return OPT_ERROR;
	v.str = s ? s : d->name;
	v.given = given;
	v.set = true;
	if (d->kind == OPT_K_CIDR6 && v.len == 0) {
		o->ip6_auto = true;
	} else if (d->kind == OPT_K_CIDR6) {
		/* Repeatable: each one is another address. */
		for (unsigned i = 0; i < o->nip6; i++)
			if (sk_memcmp(o->ip6[i].addr, v.ip6, 16) == 0) {
				b = msg_value(err, errlen, d, s);
				put(&b, "is given twice");
				return OPT_ERROR;
			}
		if (o->nip6 >= OPT_IP6_MAX) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is one too many (at most ");
			put_u64(&b, OPT_IP6_MAX);
			put(&b, ")");
			return OPT_ERROR;
		}
		sk_memcpy(o->ip6[o->nip6].addr, v.ip6, 16);
		o->ip6[o->nip6].len = v.len;
		o->nip6++;
	} else if (d->kind == OPT_K_SNI) {
		/* Repeatable: each one is another name (never the same twice). */
		struct opt_sni e = {s, (uint16_t)(v.num & 0xffff), (uint16_t)(v.num >> 16)};
		for (unsigned i = 0; i < o->nsni; i++)
			if (sni_same_name(o->sni[i].s, o->sni[i].name_len, e.s, e.name_len)) {
				b = msg_value(err, errlen, d, s);
				put(&b, "names a server given before");
				return OPT_ERROR;
			}
		if (o->nsni >= OPT_SNI_MAX) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is one too many (at most ");
			put_u64(&b, OPT_SNI_MAX);
			put(&b, ")");
			return OPT_ERROR;
		}
		o->sni[o->nsni++] = e;
	} else if (d->kind == OPT_K_FWD) {
		/* Repeatable: each one is another forward. */
		if (o->nfwd >= OPT_FWD_MAX) {
			b = msg_value(err, errlen, d, s);
			put(&b, "is one too many (at most ");
			put_u64(&b, OPT_FWD_MAX);
			put(&b, ")");
			return OPT_ERROR;
		}
		struct opt_fwd *f = &o->fwd[o->nfwd++];
		parse_fwd(s, f); /* parse_value took it */
	}
	o->v[u->id] = v;
	return OPT_OK;
}

int opt_init(struct opts *o, const struct opt_cmd *cmd, char *err, size_t errlen)
{
	sk_memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	for (unsigned i = 0; i < cmd->nuse; i++)
		if (cmd->use[i].dflt && assign(o, &cmd->use[i], cmd->use[i].dflt, false, err, errlen) < 0)
			return OPT_ERROR;
	return OPT_OK;
}

int opt_set(struct opts *o, const char *name, const char *value, char *err, size_t errlen)
{
	size_t n = slen(name);
	const struct opt_use *u = find_long(o->cmd, name, n);
	if (!u)
		return unknown(err, errlen, "", name, n);
	return assign(o, u, value, true, err, errlen);
}

static int positional(struct opts *o, const char *a, char *err, size_t errlen)
{
	if (o->nargs >= o->cmd->max_args || o->nargs >= OPT_MAX_ARGS) {
		struct sbuf b = {err, errlen, 0};
		put(&b, "unexpected argument '");
		put(&b, a);
		put(&b, "'");
		if (o->cmd->rest) {
			put(&b, " (");
			put(&b, o->cmd->rest);
			put(&b, " go after --)");
		}
		return OPT_ERROR;
	}
	o->args[o->nargs++] = a;
	return OPT_OK;
}

int opt_parse_argv(struct opts *o, int argc, char *const *argv, char *err, size_t errlen)
{
	bool only_args = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_args || a[0] != '-' || a[1] == 0) {
			if (positional(o, a, err, errlen) < 0)
				return OPT_ERROR;
			continue;
		}
		if (a[1] == '-' && a[2] == 0) {
			if (o->cmd->rest) { /* the rest is the caller's, unparsed */
				o->rest = argv + i + 1;
				o->nrest = (unsigned)(argc - i - 1);
				return OPT_OK;
			}
			only_args = true;
			continue;
		}
		if (a[1] == '-') { /* --name, --name=value, --name value */
			const char *name = a + 2, *eq = name;
			while (*eq && *eq != '=')
				eq++;
			size_t n = (size_t)(eq - name);
			if (seqn(name, n, "help"))
				return OPT_HELP;
			const struct opt_use *u = find_long(o->cmd, name, n);
			if (!u)
				return unknown(err, errlen, "", name, n);
			const char *val = *eq ? eq + 1 : NULL;
			if (!val && opt_defs[u->id].kind != OPT_K_FLAG && i + 1 < argc)
				val = argv[++i];
			if (assign(o, u, val, true, err, errlen) < 0)
				return OPT_ERROR;
			continue;
		}
		/* -c N, -cN, -k, and flags bundled: -kc N */
		for (const char *p = a + 1; *p; p++) {
			if (*p == 'h')
				return OPT_HELP;
			const struct opt_use *u = find_short(o->cmd, *p);
			if (!u)
				return unknown(err, errlen, "-", p, 1);
			if (opt_defs[u->id].kind == OPT_K_FLAG) {
				if (assign(o, u, NULL, true, err, errlen) < 0)
					return OPT_ERROR;
				continue;
			}
			const char *val = p[1] ? p + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (assign(o, u, val, true, err, errlen) < 0)
				return OPT_ERROR;
			break;
		}
	}
	return OPT_OK;
}

int opt_parse_words(struct opts *o, char *s, char *err, size_t errlen)
{
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
		char *eq = w;
		while (*eq && *eq != '=')
			eq++;
		size_t n = (size_t)(eq - w);
		if (seqn(w, n, "help"))
			return OPT_HELP;
		const struct opt_use *u = find_long(o->cmd, w, n);
		if (!u)
			return unknown(err, errlen, "", w, n);
		const char *val = NULL;
		if (*eq) {
			*eq = 0;
			val = eq + 1;
		}
		if (assign(o, u, val, true, err, errlen) < 0)
			return OPT_ERROR;
	}
	return OPT_OK;
}

/* ---- cross checks ---- */

static bool takes(const struct opt_cmd *c, enum opt_id id)
{
	for (unsigned i = 0; i < c->nuse; i++)
		if (c->use[i].id == id)
			return true;
	return false;
}

static int required(char *err, size_t errlen, enum opt_id id)
{
	struct sbuf b = {err, errlen, 0};
	put(&b, opt_defs[id].name);
	put(&b, " is required (");
	put(&b, opt_defs[id].meta);
	put(&b, ")");
	return OPT_ERROR;
}

int opt_check_stack(struct opts *o, char *err, size_t errlen)
{
	if (takes(o->cmd, OPT_DEV) && !o->v[OPT_DEV].set)
		return required(err, errlen, OPT_DEV);
	struct opt_val *ip = &o->v[OPT_IP], *gw = &o->v[OPT_GW];
	if (!ip->set)
		return required(err, errlen, OPT_IP);
	if (ip->len == 0) {
		struct sbuf b = msg_value(err, errlen, &opt_defs[OPT_IP], ip->str);
		put(&b, "is not ADDR/LEN (e.g. 198.18.0.2/24)");
		return OPT_ERROR;
	}
	if (o->v[OPT_GW6].given && o->nip6 == 0 && !o->ip6_auto) {
		struct sbuf b = {err, errlen, 0};
		put(&b, "gw6 goes with ip6");
		return OPT_ERROR;
	}
	uint32_t mask = prefix_mask(ip->len);
	if (gw->set && (gw->ip & mask) != (ip->ip & mask)) {
		if (!gw->given) { /* a default for another network */
			sk_memset(gw, 0, sizeof(*gw));
			return OPT_OK;
		}
		struct sbuf b = {err, errlen, 0};
		put(&b, "gw: ");
		put_ip(&b, gw->ip);
		put(&b, " is outside ip's subnet ");
		put_ip(&b, ip->ip & mask);
		put(&b, "/");
		put_u64(&b, ip->len);
		return OPT_ERROR;
	}
	return OPT_OK;
}

int opt_only_with(const struct opts *o, const uint8_t *ids, size_t n, const char *what,
		  char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (o->v[ids[i]].given) {
			struct sbuf b = {err, errlen, 0};
			put(&b, opt_defs[ids[i]].name);
			put(&b, " goes with ");
			put(&b, what);
			return OPT_ERROR;
		}
	return OPT_OK;
}

int opt_check_metrics(const struct opts *o, char *err, size_t errlen)
{
	const struct opt_val *m = &o->v[OPT_METRICS];
	if (!m->given) {
		static const uint8_t ids[] = {OPT_METRICS_ALLOW_REMOTE};
		return opt_only_with(o, ids, sizeof(ids), "metrics", err, errlen);
	}
	if ((m->ip >> 24) != 127 && !o->v[OPT_METRICS_ALLOW_REMOTE].given) {
		struct sbuf b = msg_value(err, errlen, &opt_defs[OPT_METRICS], m->str);
		put(&b, "is not on loopback (127.0.0.0/8); add metrics-allow-remote to serve "
			"the counters to other hosts");
		return OPT_ERROR;
	}
	return OPT_OK;
}

/* ---- help ---- */

#define HELP_COL 24

static void w_str(opt_write_fn *w, void *ctx, const char *s)
{
	w(ctx, s, slen(s));
}

static void w_pad(opt_write_fn *w, void *ctx, size_t n)
{
	static const char spaces[] = "                                ";
	while (n) {
		size_t k = SK_MIN(n, sizeof(spaces) - 1);
		w(ctx, spaces, k);
		n -= k;
	}
}

/* The value as the help shows it. */
static const char *help_meta(const struct opt_use *u)
{
	const struct opt_def *d = &opt_defs[u->id];
	return d->kind == OPT_K_CIDR && (u->flags & OPT_USE_BARE) ? "ADDR[/LEN]" : d->meta;
}

/* "  --name VALUE   help...  (lo..hi, default D)": the bounds and the
 * default come from the table, so the help cannot drift from what the
 * parser accepts. */
static void help_line(const struct opt_cmd *c, const struct opt_use *u, opt_write_fn *w,
		      void *ctx)
{
	const struct opt_def *d = &opt_defs[u->id];
	char label[64];
	struct sbuf b = {label, sizeof(label), 0};
	put(&b, "  ");
	if (c->guest) {
		put(&b, d->name);
		if (d->kind != OPT_K_FLAG) {
			put(&b, "=");
			put(&b, help_meta(u));
		}
	} else {
		if (d->short_name) {
			char s[5] = {'-', d->short_name, ',', ' ', 0};
			put(&b, s);
		}
		put(&b, "--");
		put(&b, d->name);
		if (d->kind != OPT_K_FLAG) {
			put(&b, " ");
			put(&b, help_meta(u));
		}
	}
	w_str(w, ctx, label);
	if (b.len + 2 > HELP_COL) {
		w_str(w, ctx, "\n");
		w_pad(w, ctx, HELP_COL);
	} else {
		w_pad(w, ctx, HELP_COL - b.len);
	}
	const char *h = u->help ? u->help : d->help;
	size_t last = 0;
	while (*h) {
		const char *e = h;
		while (*e && *e != '\n')
			e++;
		w(ctx, h, (size_t)(e - h));
		last = (size_t)(e - h);
		if (!*e)
			break;
		w_str(w, ctx, "\n");
		w_pad(w, ctx, HELP_COL);
		h = e + 1;
	}
	char tail[80];
	struct sbuf t = {tail, sizeof(tail), 0};
	if (d->kind == OPT_K_NUM || d->kind == OPT_K_SIZE) {
		put_u64(&t, d->lo);
		put(&t, "..");
		put_u64(&t, d->hi);
	} else if (d->kind == OPT_K_DEC) {
		put_dec6(&t, d->lo);
		put(&t, "..");
		put_dec6(&t, d->hi);
	}
	if (u->dflt) {
		put(&t, t.len ? ", default " : "default ");
		put(&t, u->dflt);
	}
	if (t.len) {
		if (HELP_COL + last + 3 + t.len > 88) {
			w_str(w, ctx, "\n");
			w_pad(w, ctx, HELP_COL);
			w_str(w, ctx, "(");
		} else {
			w_str(w, ctx, " (");
		}
		w_str(w, ctx, tail);
		w_str(w, ctx, ")");
	}
	w_str(w, ctx, "\n");
}

void opt_help(const struct opt_cmd *c, opt_write_fn *w, void *ctx)
{
	w_str(w, ctx, "usage: ");
	w_str(w, ctx, c->synopsis);
	w_str(w, ctx, "\n\n");
	if (c->about) {
		w_str(w, ctx, c->about);
		w_str(w, ctx, "\n\n");
	}
	for (unsigned i = 0; i < c->nuse; i++)
		help_line(c, &c->use[i], w, ctx);
	w_str(w, ctx, c->guest ? "  help" : "  -h, --help");
	w_pad(w, ctx, HELP_COL - (c->guest ? 6 : 12));
	w_str(w, ctx, "this text\n");
	if (c->footer) {
		w_str(w, ctx, "\n");
		w_str(w, ctx, c->footer);
		w_str(w, ctx, "\n");
	}
}

void opt_spin(const struct opts *o, sk_time_ns *cap, bool *learn)
{
	*learn = opt_num(o, OPT_SPIN_US) == OPT_NUM_AUTO;
	*cap = *learn ? SPIN_AUTO_CAP_NS : (sk_time_ns)opt_num(o, OPT_SPIN_US) * SK_NS_PER_US;
}
