/* opts.h — skiff's one set of options: the table of every option the
 * commands and the unikernel take (name, value syntax, bounds, defaults,
 * help lines), the parsing and validation of their values, and the error
 * messages.  Freestanding (compiled into the core set and the unikernel),
 * so the hosted command line and the guest's mean the same thing:
 *
 *   skiff serve --ip 198.18.0.2/24 --gw 198.18.0.1 --max-conns=64
 *   skiff vm -- ip=198.18.0.2/24 gw=198.18.0.1 max-conns=64
 *
 * and a bad value gets the same message from both ("ip: '1.2.3' is not
 * ADDR/LEN (e.g. 198.18.0.2/24)"): the hosted side prints it after
 * "skiff CMD: " and exits 2 (host/cli.c), the guest after "skiff-uk: " and
 * stops at boot.  Messages name an option by its bare name, the one spelling
 * both command lines share.
 *
 * Use: opt_init(&o, &opt_cmd_serve) applies the command's defaults, then
 * opt_parse_argv (hosted: `--name value`, `--name=value`, `-c N`, flags
 * `--name`) or opt_parse_words (guest: `name=value`, flags `name`), then
 * the cross checks (opt_check_stack); the values are read from o.v[id].
 * Nothing here allocates or keeps a pointer past the strings it was given:
 * string values point into argv or the caller's command-line buffer. */
#ifndef CONF_OPTS_H
#define CONF_OPTS_H

#include "../base/sk.h"
#include "../base/sk_addr.h"

/* Every option, across commands.  Two commands' options share an id only
 * when they mean the same thing (ping's -c COUNT and load's -c N are two). */
enum opt_id {
	/* the stack on a device */
	OPT_STACK, OPT_DEV, OPT_IP, OPT_GW, OPT_MAC, OPT_PCAP, OPT_SPIN_US, OPT_STATS,
	OPT_IP6, OPT_GW6, OPT_OFFLOAD,
	/* the HTTP server (serve, the unikernel) */
	OPT_PORT, OPT_ROOT, OPT_CONFIG, OPT_MAX_CONNS, OPT_HEADER_TIMEOUT, OPT_KEEPALIVE_TIMEOUT, OPT_MAX_BODY,
	OPT_TCP_SNDBUF, OPT_TCP_RCVBUF, OPT_TCP_CC, OPT_TCP_BUF_MAX, OPT_TCP_MEM, OPT_TRACE, OPT_CACHE_CONTROL,
	OPT_SENDFILE, OPT_HTTP2,
	OPT_HTTP2_SESSIONS,
	/* HTTPS (serve; the unikernel: the port, timeout, redirect and its pool) */
	OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_PORT, OPT_TLS_HANDSHAKE_TIMEOUT, OPT_TLS_TICKET_ROTATE,
	OPT_TLS_REDIRECT, OPT_TLS_MAX_CONNS, OPT_TLS_SNI, OPT_TLS_ENGINE, OPT_TLS_ALPN,
	/* in production (serve) */
	OPT_ACCESS_LOG, OPT_ACCESS_LOG_FORMAT, OPT_DRAIN_TIMEOUT, OPT_LOG_LEVEL, OPT_ERROR_LOG,
	OPT_WORKERS,
	/* seeing a running server (serve; the unikernel's metrics port) */
	OPT_METRICS, OPT_METRICS_ALLOW_REMOTE, OPT_CONTROL, OPT_UK_METRICS,
	/* the unikernel */
	OPT_EXIT_AFTER, OPT_SHUTDOWN_PORT, OPT_FAULT, OPT_NO_MSIX, OPT_NO_EVENT_IDX,
	OPT_UK_ACCESS_LOG,
	/* load */
	OPT_LOAD_CONNS, OPT_LOAD_REQUESTS, OPT_LOAD_DURATION, OPT_LOAD_KEEPALIVE, OPT_LOAD_HOLD,
	OPT_LOAD_IPS, OPT_LOAD_TIMEOUT,
	/* ping */
	OPT_PING_COUNT, OPT_PING_INTERVAL, OPT_PING_SIZE, OPT_PING_TIMEOUT, OPT_PING_V6,
	/* tcp-client */
	OPT_TC_CONNECT, OPT_TC_SEND_FILE, OPT_TC_SEND_RANDOM, OPT_TC_SEED, OPT_TC_EXPECT_ECHO,
	OPT_TC_CONNS, OPT_TC_SEQUENTIAL, OPT_TC_PARALLEL, OPT_TC_TIMEOUT, OPT_TC_TCP_TRACE,
	/* applications on http/app.h (examples/) */
	OPT_BODY_TIMEOUT, OPT_SEND_TIMEOUT,
	/* proxy (an application on http/app.h: http/proxy.h) */
	OPT_UPSTREAM, OPT_BALANCE, OPT_POOL, OPT_CONNECT_TIMEOUT, OPT_FIRST_BYTE_TIMEOUT,
	OPT_UP_IDLE_TIMEOUT, OPT_FAIL_MAX, OPT_FAIL_TIMEOUT, OPT_CACHE, OPT_NO_X_CACHE,
	OPT_PURGE_ALLOW,
	/* impair (the impairing relay) */
	OPT_IMP_A, OPT_IMP_B, OPT_IMP_DIR, OPT_IMP_LOSS, OPT_IMP_DELAY, OPT_IMP_JITTER,
	OPT_IMP_REORDER, OPT_IMP_DUPLICATE, OPT_IMP_CORRUPT, OPT_IMP_RATE, OPT_IMP_LIMIT,
	OPT_IMP_SEED,
	/* switch and pktgen (ring slots: either's rings) */
	OPT_SLOTS, OPT_SW_PORTS, OPT_SW_PCAP_PORT, OPT_SW_AGE,
	OPT_PG_SIZE, OPT_PG_COUNT, OPT_PG_DST_MAC, OPT_PG_SRC_IP, OPT_PG_DST_IP, OPT_PG_SPORT,
	OPT_PG_DPORT, OPT_PG_BATCH,
	/* vm (QEMU's command line; the guest's words go after --) */
	OPT_VM_PUBLISH, OPT_VM_NET, OPT_VM_MEM, OPT_VM_SMP, OPT_VM_ACCEL, OPT_VM_MACHINE, OPT_VM_IMAGE,
	OPT_VM_PROXY, OPT_VM_DRY_RUN,
	OPT_N
};

enum opt_kind {
	OPT_K_FLAG,     /* no value */
	OPT_K_STR,      /* any non-empty text: a path, a device spec */
	OPT_K_NUM,      /* decimal, in [lo, hi]; or choices[0] (e.g. "auto"): OPT_NUM_AUTO */
	OPT_K_SIZE,     /* decimal with an optional K, M or G (x 1024^n), in [lo, hi] */
	OPT_K_U64,      /* any 64-bit value, decimal or 0x hex (seeds) */
	OPT_K_CIDR,     /* ADDR/LEN, ADDR a host; ADDR alone where OPT_USE_BARE */
	OPT_K_IPV4,     /* a host address */
	OPT_K_MAC,      /* unicast, not all-zero */
	OPT_K_CHOICE,   /* one of choices[]: num is the index */
	OPT_K_ENDPOINT, /* ADDR:PORT, ADDR a host */
	OPT_K_CIDR6,    /* IPv6 ADDR/LEN, repeatable (struct opts ip6[]) */
	OPT_K_IPV6,     /* an IPv6 unicast address */
	OPT_K_LOGSINK,  /* console, or udp:ADDR:PORT (num: 0 console, else the port; ip) */
	OPT_K_DEC,      /* decimal with at most 6 digits after a '.', in [lo, hi]; num, lo
			 * and hi in millionths of the unit (0.1 -> 100000) */
	OPT_K_SNI,      /* NAME:CERT:KEY, repeatable (struct opts sni[]) */
	OPT_K_ENDPOINTS, /* ADDR:PORT[,ADDR:PORT...], IPv4 hosts, at most OPT_ENDPOINTS_MAX
			  * (num: how many; opt_parse_endpoints gives them) */
	OPT_K_FWD,      /* HOST:GUEST[/udp|/tcp], ports 1..65535, repeatable (struct opts
			 * fwd[]) */
};

/* OPT_K_DEC: one unit in num. */
#define OPT_DEC_ONE 1000000u

struct opt_def {
	const char *name;    /* "max-conns": --max-conns, max-conns= */
	char short_name;     /* 'c' for -c, or 0 */
	uint8_t kind;        /* enum opt_kind */
	const char *meta;    /* the value in the help: "N", "ADDR/LEN" */
	uint64_t lo, hi;     /* OPT_K_NUM, OPT_K_SIZE */
	const char *const *choices; /* OPT_K_CHOICE, NULL-terminated */
	const char *help;    /* '\n' between lines */
};

extern const struct opt_def opt_defs[OPT_N];

/* One option of one command. */
#define OPT_USE_BARE 1u /* OPT_K_CIDR: ADDR without /LEN is accepted (len 0) */
struct opt_use {
	uint8_t id;          /* enum opt_id */
	uint8_t flags;       /* OPT_USE_* */
	const char *dflt;    /* parsed like a given value at opt_init; NULL: none */
	const char *help;    /* NULL: the definition's */
};

struct opt_cmd {
	const char *name;     /* "serve"; "skiff-uk" for the guest */
	bool guest;           /* name=value words, not --name value */
	const char *synopsis; /* the usage line(s), without "usage: " */
	const char *about;    /* paragraph after it, or NULL */
	const struct opt_use *use;
	uint8_t nuse;
	uint8_t max_args;     /* positional arguments (URL, DST) */
	const char *footer;   /* after the options, or NULL */
	/* Non-NULL: the words after "--" are not parsed but handed over whole
	 * (struct opts rest), and this names them in the message for a word
	 * before it ("guest arguments": vm's kernel command line). */
	const char *rest;
};

extern const struct opt_cmd opt_cmd_echo, opt_cmd_tcp_client, opt_cmd_ping, opt_cmd_serve,
	opt_cmd_load, opt_cmd_uk, opt_cmd_stat, opt_cmd_app, opt_cmd_impair, opt_cmd_proxy;
extern const struct opt_cmd opt_cmd_switch, opt_cmd_pktgen, opt_cmd_vm;
/* The switch's ports (--ports, --pcap-port): switch/sw.h's SW_PORTS_MAX,
 * which cmd/switch.c asserts equal. */
#define OPT_SW_PORTS_MAX 64u
/* skiff vm --smp: the guest starts at most this many vCPUs (= KVM_MAX_CPUS,
 * plat/kvm/kvm.h). */
#define OPT_VM_SMP_MAX 16u

/* A value.  Which fields mean something depends on the kind. */
/* The value of an OPT_K_NUM given as its word (spin-us auto). */
#define OPT_NUM_AUTO UINT64_MAX

struct opt_val {
	const char *str;     /* the text (given or default); NULL: neither */
	uint64_t num;        /* NUM, SIZE, U64; DEC: millionths; CHOICE: index;
			      * ENDPOINT, LOGSINK: port; FLAG: 1 */
	uint32_t ip;         /* CIDR, IPV4, ENDPOINT, LOGSINK: host order */
	uint8_t len;         /* CIDR: prefix length 1..32, 0 when given bare */
	uint8_t mac[SK_MAC_LEN];
	uint8_t ip6[16];     /* CIDR6, IPV6, ENDPOINT with v6: the address as on the wire */
	bool v6;             /* ENDPOINT: given as [ADDR]:PORT, an IPv6 address (in ip6) */
	bool given;          /* on the command line (not only the default) */
	bool set;            /* given or defaulted */
};

#define OPT_MAX_ARGS 4
/* Most --ip6 one command line gives (the interface's IFACE_IP6_CFG_MAX). */
#define OPT_IP6_MAX 4
struct opt_ip6 {
	uint8_t addr[16]; /* as on the wire */
	uint8_t len;      /* 1..128 */
};
/* Most --tls-sni one command line gives. */
#define OPT_SNI_MAX 8
/* One --tls-sni NAME:CERT:KEY: the whole text (the command line's), cut at
 * its first two colons: NAME is s[0, name_len), CERT s[name_len + 1,
 * key_off - 1), KEY s[key_off...]. */
struct opt_sni {
	const char *s;
	uint16_t name_len, key_off;
};
/* Most -p forwards one `skiff vm` takes. */
#define OPT_FWD_MAX 16
/* One -p HOST:GUEST[/udp|/tcp]. */
struct opt_fwd {
	uint16_t host, guest;
	bool udp;
};
struct opts {
	const struct opt_cmd *cmd;
	struct opt_val v[OPT_N];
	/* OPT_K_CIDR6 values in the order given (v[OPT_IP6] holds the last);
	 * OPT_K_IPV6 values go to v[id].ip6 */
	struct opt_ip6 ip6[OPT_IP6_MAX];
	unsigned nip6;
	bool ip6_auto;     /* --ip6 auto: SLAAC from Router Advertisements */
	/* OPT_K_SNI values in the order given (v[OPT_TLS_SNI] holds the last) */
	struct opt_sni sni[OPT_SNI_MAX];
	unsigned nsni;
	/* OPT_K_FWD values in the order given (v[id] holds the last) */
	struct opt_fwd fwd[OPT_FWD_MAX];
	unsigned nfwd;
	const char *args[OPT_MAX_ARGS]; /* positional arguments, in order */
	unsigned nargs;
	/* cmd->rest: the words after "--", as given (argv's) */
	char *const *rest;
	unsigned nrest;
};

/* Results of the parsers. */
#define OPT_OK 0
#define OPT_ERROR (-1)  /* the message is in err */
#define OPT_HELP 1      /* -h, --help, or the guest word "help" */

/* Clear o and apply cmd's defaults.  Returns OPT_OK, or OPT_ERROR for a
 * default that does not parse (a bug; the unit test parses them all). */
int opt_init(struct opts *o, const struct opt_cmd *cmd, char *err, size_t errlen);

/* argv[0] is the command's name and is skipped.  Options and positional
 * arguments mix (GNU style); after "--" everything is positional.  Stops at
 * the first error. */
int opt_parse_argv(struct opts *o, int argc, char *const *argv, char *err, size_t errlen);

/* The guest's command line: words split on spaces and tabs, each
 * name=value or a flag's bare name.  The string is modified in place (the
 * values point into it).  Stops at the first error. */
int opt_parse_words(struct opts *o, char *line, char *err, size_t errlen);

/* Set one option by name as a command line would ("ip", "198.18.0.2/24";
 * value NULL for a flag). */
int opt_set(struct opts *o, const char *name, const char *value, char *err, size_t errlen);

/* After parsing, for a command on skiff's stack: dev (if the command takes
 * it) and ip are there, ip has its /LEN, and a given gw lies inside ip's
 * subnet (a default gw outside it is dropped: the guest's 10.0.2.2 only
 * applies on QEMU's user network). */
int opt_check_stack(struct opts *o, char *err, size_t errlen);

/* "NAME goes with WHAT" for the first of ids[] that was given, else OPT_OK.
 * For options that only make sense with another (stack skiff). */
int opt_only_with(const struct opts *o, const uint8_t *ids, size_t n, const char *what,
		  char *err, size_t errlen);

/* --metrics ADDR:PORT: ADDR on loopback (127.0.0.0/8) unless
 * --metrics-allow-remote, which goes only with --metrics. */
int opt_check_metrics(const struct opts *o, char *err, size_t errlen);

/* The help text, written in pieces through w. */
typedef void opt_write_fn(void *ctx, const char *s, size_t n);
void opt_help(const struct opt_cmd *cmd, opt_write_fn *w, void *ctx);

/* TCP sockets for an HTTP server of max_conns connections: every served
 * connection, plus room for what the server no longer holds but TCP still
 * does (connections it closed, in FIN_WAIT or TIME_WAIT: the oldest
 * TIME_WAIT is recycled when the pool runs out), the listener, handshakes
 * in progress and the refused ones that get their 503.  The one formula for
 * `skiff serve --stack skiff`, `skiff load` and the unikernel.  max-conns'
 * bound (1,000,000) keeps it far below 2^32. */
uint32_t opt_tcp_sockets(uint32_t max_conns);

/* --spin-us / spin-us=: the spin cap in ns, and whether to learn below it
 * ("auto": learned up to SPIN_AUTO_CAP_NS, runner/spin.h). */
void opt_spin(const struct opts *o, sk_time_ns *cap, bool *learn);

/* Values as the stack wants them. */
static inline bool opt_given(const struct opts *o, enum opt_id id)
{
	return o->v[id].given;
}

static inline uint64_t opt_num(const struct opts *o, enum opt_id id)
{
	return o->v[id].num;
}

static inline const char *opt_str(const struct opts *o, enum opt_id id)
{
	return o->v[id].str;
}

/* The pure parsers under the table, shared with host/cli.c.  0 or -1. */
int opt_parse_ipv4(const char *s, uint32_t *ip);
int opt_parse_mac(const char *s, uint8_t mac[SK_MAC_LEN]);
/* A host address: not 0, not multicast or class E. */
bool opt_ipv4_is_host(uint32_t ip);
/* Decimal, no sign, no overflow. */
int opt_parse_dec(const char *s, uint64_t *v);
/* "D[.F]", F at most 6 digits, into millionths ("0.1" -> 100000). */
int opt_parse_dec6(const char *s, uint64_t *v);
/* OPT_K_ENDPOINTS: "127.0.0.1:8080,127.0.0.2:8080" into ip[], port[] (host
 * order), at most max.  The count (>= 1), or -1.  IPv4 only: the form
 * for a caller that cannot resolve names or speak IPv6. */
#define OPT_ENDPOINTS_MAX 16u
int opt_parse_endpoints(const char *s, uint32_t *ip, uint16_t *port, unsigned max);
/* The same list, each item ADDR:PORT (an IPv4 host), [ADDR6]:PORT (an IPv6
 * unicast address, ::1 too: RFC 3986 3.2.2 brackets), or NAME:PORT (a host
 * name, letters digits '-' '.', at most 63 bytes, left for the hosted
 * caller to resolve: getaddrinfo).  The count (>= 1), or -1.
 * opt_parse_endpoints is this one, refusing names and IPv6. */
#define OPT_NAME_MAX 64u
struct opt_endpoint {
	struct sk_addr addr;     /* IPv4 mapped or IPv6; :: when name[0] */
	uint16_t port;
	char name[OPT_NAME_MAX]; /* "" or the host name as given */
};
int opt_parse_endpoints_any(const char *s, struct opt_endpoint *ep, unsigned max);
/* --purge-allow: "none" (0), or ADDR[/LEN][,ADDR[/LEN]...], IPv4 (/0..32)
 * or IPv6 (/0..128, no brackets) prefixes, at most max; LEN absent: the
 * one address.  Into p[], each len over the 16 bytes of struct sk_addr
 * (an IPv4 /n is 96 + n), the bits past len cleared.  The count, or -1. */
#define OPT_PREFIXES_MAX 16u
struct opt_prefix {
	struct sk_addr addr;
	uint8_t len;
};
int opt_parse_prefixes(const char *s, struct opt_prefix *p, unsigned max);
/* "198.18.0.2" into out[16]. */
void opt_format_ipv4(uint32_t ip, char out[16]);
/* RFC 4291 2.2 text (hex groups, one "::"; no embedded IPv4).  0 or -1. */
int opt_parse_ipv6(const char *s, uint8_t a[16]);
/* RFC 5952 text (lower case, the longest run of zero groups as "::"). */
#define OPT_IPV6_STRLEN 40
void opt_format_ipv6(const uint8_t a[16], char out[OPT_IPV6_STRLEN]);
/* A peer or local endpoint of either family: "198.18.0.1:40000" or, IPv6
 * in brackets (RFC 3986 3.2.2, so the port is unambiguous),
 * "[2001:2::1]:40000"; port 0 leaves the port (and the brackets) out. */
#define OPT_ADDR_STRLEN (OPT_IPV6_STRLEN + 8)
struct sk_addr;
void opt_format_addr(const struct sk_addr *a, uint16_t port, char out[OPT_ADDR_STRLEN]);

/* The IPv6 options (ip6, repeatable, or auto; gw6) into an interface's
 * config: IPv6 on when any ip6 was given.  For the hosted stack and the unikernel. */
struct iface_config;
void opt_ip6_config(const struct opts *o, struct iface_config *ic);

#endif
