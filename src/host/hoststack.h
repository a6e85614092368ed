/* hoststack.h — skiff's stack in a Linux process: one device, its IPv4
 * interface and optionally a TCP engine, opened together from command-line
 * values and run by the runner (runner/runner.h).  Shared by the commands
 * that run on skiff's own stack (echo, ping, tcp-client, serve --stack
 * skiff, load). */
#ifndef APPS_HOSTSTACK_H
#define APPS_HOSTSTACK_H

#include <stdbool.h>
#include <stdio.h>

#include "../dev/dev_open.h"
#include "../net/iface.h"
#include "../net/tcp.h"
#include "../runner/runner.h"
#include "../conf/opts.h"

struct hoststack_config {
	const char *dev_spec;      /* --dev */
	const char *pcap_path;     /* --pcap, or NULL */
	struct iface_config ifc;   /* ip, prefix_len, gw; mac if have_mac */
	bool have_mac;             /* else: the device's (xdp) or a random one */
	bool tcp;                  /* open a TCP engine too */
	uint32_t tcp_max_sockets;  /* 0 = default */
	uint32_t tcp_sndbuf, tcp_rcvbuf; /* 0 = default */
	uint8_t tcp_cc;            /* enum tcp_cc_algo (--tcp-cc) */
	uint32_t tcp_buf_max;      /* --tcp-buf-max: 0 = buffers never grow */
	uint32_t tcp_mem;          /* --tcp-mem: budget of the grown buffers */
	sk_time_ns spin_ns;
	bool spin_learn;           /* --spin-us auto: learn the spin below 100 us */
	/* --workers: this stack is worker `queue` of nqueues on one device
	 * (dev_open.h's struct dev_config); 0/1 = the only one. */
	uint16_t queue, nqueues, group;
	/* --offload off: no checksum or segmentation offloads on the device
	 * (frames exactly as before #31); on by default. */
	bool no_offload;
};

struct hoststack {
	struct dev *dev;
	struct iface *ifc;
	struct tcp_stack *tcp; /* NULL unless cfg.tcp */
	void *tcp_arena;       /* mmap'ed: pages are touched only as sockets use them */
	size_t tcp_arena_size;
	struct runner loop;    /* dev, ifc, tcp and spin_ns filled in; add callbacks */
};

/* The stack options of a command (conf/opts.h: dev, pcap, ip, gw, mac,
 * spin-us) into cfg, after opt_check_stack: dev and ip/LEN given, gw inside
 * the subnet.  A bad combination is a usage error of o's command (exit 2).
 * The rest of cfg (tcp, pool sizes) is the caller's. */
void hoststack_options(struct hoststack_config *cfg, struct opts *o);

/* Returns 0, or -1 with a one-line reason in err. */
int hoststack_open(struct hoststack *hs, const struct hoststack_config *cfg, char *err,
		   size_t errlen);
/* runner_run, with a device or park error reported on stderr as
 * "skiff: device NAME: rx failed: REASON".  Returns 0 or -1. */
int hoststack_run(struct hoststack *hs, volatile int *stop);
/* Gratuitous ARP, sent at once. */
void hoststack_announce(struct hoststack *hs);
/* "name value" lines: device, loop, interface, TCP. */
void hoststack_print_stats(struct hoststack *hs, FILE *f);
/* The same counters through fn (device, runner, interface, TCP). */
void hoststack_stats(struct hoststack *hs, void (*fn)(void *ctx, const char *name, uint64_t v),
		     void *ctx);
void hoststack_close(struct hoststack *hs);

#endif
