/* flow_hash.h — the one flow hash that picks a worker (docs/smp.md).
 *
 * With --workers N the frames of one TCP or UDP flow must all reach the
 * worker that holds its state, and a worker that opens a connection itself
 * (the proxy's upstreams, skiff load) must be able to pick a source port
 * whose answers come back to it (F-Stack's lesson: the kernel's own flow
 * hash is seeded at random and cannot be computed from user space).  So
 * skiff steers with a hash of its own, defined here once and computed in
 * three places that must agree bit for bit:
 *   - the devices' steering programs (packet: a classic BPF fanout
 *     program; tap: the TAP's steering eBPF program), written in BPF;
 *   - the switch, which spreads one port's frames over its N rings;
 *   - the TCP engine, which tests candidate source ports at connect.
 *
 * The hash (all values as BPF loads them: big-endian fields read as host
 * integers):
 *   x = XOR of the 32-bit words of both addresses (IPv4: 2 words; IPv6: 8)
 *   x ^= sport ^ dport                   (0 for a frame without ports)
 *   x *= 0x9E3779B1                      (mod 2^32)
 *   x ^= x >> 16
 *   worker = x % N
 * XOR makes it symmetric: a flow and its reverse give the same value, so
 * the tuple a worker sends with and the frames it receives agree.  It is a
 * steering hash, not a defence: an attacker who picks ports can aim at one
 * worker, as with any RSS without a secret key; the workers' own limits
 * (SYN cookies, --max-conns each) bound what that buys.
 *
 * Which frames have ports: TCP (6) and UDP (17) over IPv4 when the packet
 * is not a fragment (MF clear and offset 0), and over IPv6 when the fixed
 * header's next header is TCP or UDP.  Every other IPv4 or IPv6 frame
 * hashes with ports 0 (so every fragment of a datagram, and ICMP between
 * two hosts, goes to one worker), and a frame that is neither (ARP) is
 * worker 0's.  Freestanding, pure.
 */
#ifndef WIRE_FLOW_HASH_H
#define WIRE_FLOW_HASH_H

#include "../base/sk.h"
#include "../base/sk_addr.h"

#define FLOW_HASH_MUL 0x9E3779B1u

/* The mixing step over the XOR of the address words and the ports. */
static inline uint32_t flow_hash_mix(uint32_t x, uint16_t sport, uint16_t dport)
{
	x ^= (uint32_t)(sport ^ dport);
	x *= FLOW_HASH_MUL;
	return x ^ (x >> 16);
}

/* XOR of an address's words as the hash reads them: an IPv4 (mapped)
 * address is its one word, an IPv6 address its four. */
static inline uint32_t flow_hash_addr_words(const struct sk_addr *a)
{
	if (sk_addr_is_v4(a))
		return sk_get_be32(a->b + 12);
	return sk_get_be32(a->b) ^ sk_get_be32(a->b + 4) ^ sk_get_be32(a->b + 8) ^
	       sk_get_be32(a->b + 12);
}

/* The hash of a TCP/UDP 4-tuple, either direction. */
static inline uint32_t flow_hash_tuple(const struct sk_addr *a, uint16_t pa,
				       const struct sk_addr *b, uint16_t pb)
{
	return flow_hash_mix(flow_hash_addr_words(a) ^ flow_hash_addr_words(b), pa, pb);
}

/* The worker of hash h among n (n >= 1). */
static inline unsigned flow_hash_worker(uint32_t h, unsigned n)
{
	return n > 1 ? h % n : 0;
}

/* The hash of an Ethernet frame (14-byte header, no VLAN tag: skiff's
 * devices see none), exactly as the steering programs compute it.  Reads
 * only within len; a frame too short for what it claims hashes as far as
 * it can be read (ports 0, or 0 for a short IP header). */
static inline uint32_t flow_hash_frame(const uint8_t *f, size_t len)
{
	if (len < 14)
		return 0;
	uint16_t type = sk_get_be16(f + 12);
	const uint8_t *ip = f + 14;
	size_t n = len - 14;
	uint32_t x;
	uint16_t sp = 0, dp = 0;
	if (type == 0x0800) {
		if (n < 20)
			return 0;
		x = sk_get_be32(ip + 12) ^ sk_get_be32(ip + 16);
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
		bool frag = (sk_get_be16(ip + 6) & 0x3fff) != 0;
		if ((ip[9] == 6 || ip[9] == 17) && !frag && ihl >= 20 && n >= ihl + 4) {
			sp = sk_get_be16(ip + ihl);
			dp = sk_get_be16(ip + ihl + 2);
		}
	} else if (type == 0x86dd) {
		if (n < 40)
			return 0;
		x = 0;
		for (size_t i = 8; i < 40; i += 4)
			x ^= sk_get_be32(ip + i);
		if ((ip[6] == 6 || ip[6] == 17) && n >= 44) {
			sp = sk_get_be16(ip + 40);
			dp = sk_get_be16(ip + 42);
		}
	} else {
		return 0;
	}
	return flow_hash_mix(x, sp, dp);
}

#endif
