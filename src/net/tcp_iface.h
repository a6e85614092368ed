/* tcp_iface.h — glue between the TCP engine and an iface (net/iface.h).
 *
 *   struct tcp_config cfg;
 *   tcp_config_default(&cfg);
 *   tcp_iface_config(&cfg, ifc);      // local_ip, mtu, ip(6)_output -> iface_ip(6)_output, src6
 *   cfg.seed[0..1] = random;          // plat
 *   tcp_stack_init(st, arena, tcp_arena_size(&cfg), &cfg, now);
 *   tcp_iface_attach(st, ifc);        // TCP over IPv4 and IPv6 -> tcp_input(6), ICMP errors -> tcp
 * Then in the loop, after iface_rx: tcp_poll(st, now); before iface's
 * dev_tx_sync, so one batch of ACKs leaves in one sync; park until
 * min(iface_next_deadline, tcp_next_deadline).
 */
#ifndef NET_TCP_IFACE_H
#define NET_TCP_IFACE_H

#include "iface.h"
#include "tcp.h"

void tcp_iface_config(struct tcp_config *cfg, struct iface *ifc);
int tcp_iface_attach(struct tcp_stack *st, struct iface *ifc);

#endif
