/* steer_bpf.h — the devices' steering programs: wire/flow_hash.h's
 * flow_hash_frame, written in BPF so the kernel picks a worker's queue by
 * skiff's own hash (docs/smp.md "Steering").  One builder per flavour; each
 * fills a caller's array and returns the instruction count.  Hosted only
 * (Linux's BPF encodings).  The programs return the hash; the kernel takes
 * it modulo the number of queues (packet fanout members, TAP queues), and
 * queue k is the k-th opening, so worker k gets flow_hash_worker(h, n) == k.
 */
#ifndef DEV_STEER_BPF_H
#define DEV_STEER_BPF_H

#include <linux/bpf.h>
#include <linux/filter.h>
#include <stddef.h>

/* Room enough for either program. */
#define STEER_BPF_MAX 128

/* Classic BPF for PACKET_FANOUT_CBPF (packet:).  The IP header is read
 * relative to the skb's network header (SKF_NET_OFF) and the EtherType
 * from skb->protocol (SKF_AD_PROTOCOL), so the program is right wherever
 * the skb's data starts; the frame's length is skb->len, which on the
 * receive path (the one fanout serves: data at the network header) is the
 * IP packet's length plus any Ethernet padding, as flow_hash_frame's
 * len - 14. */
size_t steer_cbpf_build(struct sock_filter *out, size_t cap);

/* eBPF, BPF_PROG_TYPE_SOCKET_FILTER, for TUNSETSTEERINGEBPF (tap:).  The
 * TAP runs it on a frame the kernel sends into it, data at the Ethernet
 * header: legacy packet loads (BPF_LD_ABS/IND, which end the program with
 * 0 on a read past the end, as flow_hash_frame returns 0 for a short IP
 * header) and __sk_buff.len for the length checks. */
size_t steer_ebpf_build(struct bpf_insn *out, size_t cap);

/* Load the eBPF program: a program fd, or -errno.  Needs CAP_BPF (or
 * CAP_SYS_ADMIN) unless kernel.unprivileged_bpf_disabled is 0. */
int steer_ebpf_load(void);

#endif
