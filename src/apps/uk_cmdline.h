/* uk_cmdline.h — the unikernel's command line (uk_main.c lists the keys
 * for users).  Freestanding: it runs in the guest, reporting on the
 * console (plat/kvm/kvm.h's kprintf). */
#ifndef APPS_UK_CMDLINE_H
#define APPS_UK_CMDLINE_H

#include "../base/sk.h"

struct uk_args {
	uint32_t ip, gw;
	uint8_t prefix_len;
	uint8_t mac[SK_MAC_LEN];
	bool have_mac;
	uint64_t spin_us;
	bool spin_learn;         /* spin-us=auto */
	uint64_t exit_after_s;   /* 0 = run forever */
	uint16_t shutdown_port;  /* 0 = none */
	const char *fault;       /* NULL, "ud", "pf", "gp", "de" */
	bool stats;
	bool no_msix;
	/* The HTTP server (0: uk_main.c's default) */
	uint16_t port;
	uint64_t max_conns;
	uint64_t header_timeout_s, keepalive_timeout_s;
	uint64_t max_body;
	bool have_max_body;      /* max-body=0 is a real limit (no bodies) */
	uint64_t tcp_sndbuf, tcp_rcvbuf; /* bytes per socket */
};

/* Parse "ip=10.0.2.15/24 gw=10.0.2.2 ..." into a (which holds the
 * defaults).  Unknown or malformed words are reported on the console and
 * make it return -1; the string is modified in place. */
int uk_cmdline_parse(char *s, struct uk_args *a);

#endif
