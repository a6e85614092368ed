/* siphash.h — SipHash-2-4 (Aumasson, Bernstein 2012), a keyed 64-bit PRF.
 *
 * Used by TCP for the demux hash (so a remote host cannot aim segments at
 * one bucket), for RFC 6528 initial sequence numbers and for SYN cookies.
 * Freestanding, no allocation; ~20 ns for the 12-byte 4-tuple.
 */
#ifndef NET_SIPHASH_H
#define NET_SIPHASH_H

#include "../base/sk.h"

struct siphash_key {
	uint64_t k0, k1;
};

uint64_t siphash24(const struct siphash_key *key, const void *data, size_t len);

#endif
