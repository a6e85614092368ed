/* wire.h — results shared by every wire parser.
 *
 * Every parser: checks lengths before it reads a field, never reads outside
 * [buf, buf+len), never allocates, and returns WIRE_OK or one of the negative
 * codes below; callers count drops by code (net/iface keeps one counter per
 * reason).  Emit functions write into a caller buffer of `cap` bytes and
 * return the number of bytes written, or 0 if it does not fit.
 */
#ifndef WIRE_H
#define WIRE_H

#include "../base/sk.h"

enum wire_err {
	WIRE_OK = 0,
	WIRE_ETRUNC = -1,   /* buffer shorter than the header or than a length field says */
	WIRE_EBADLEN = -2,  /* a length field is impossible (too small, inconsistent) */
	WIRE_ECSUM = -3,    /* checksum mismatch */
	WIRE_EVERSION = -4, /* wrong version / hardware or protocol type */
	WIRE_EUNSUP = -5,   /* well-formed but not something we handle */
	WIRE_EOPT = -6,     /* malformed option */
	WIRE_EFRAG = -7,    /* IPv4 or IPv6 fragment (skiff drops fragments; see docs/ipv6.md and docs/stack.md) */
	WIRE_EBADADDR = -8, /* forbidden address (e.g. broadcast source) */
	WIRE_EEXT = -9,     /* IPv6 extension header out of place (hop-by-hop not first) */
	WIRE_ELIMIT = -10,  /* more extension headers, options or bytes of them than we walk */
	WIRE_EROUTE = -11,  /* IPv6 routing header we must not process (type 0, or segments left) */
	WIRE_EHOPLIMIT = -12, /* ND message whose hop limit is not 255: it was forwarded */
	WIRE_ECODE = -13,   /* ICMPv6 code that the message type does not allow */
};
#define WIRE_NERR 14

/* Short stable name of an error, for counters and logs. */
const char *wire_strerror(int err);

/* Checksum verification can be turned off for fuzz builds only, so that a
 * fuzzer reaches the code behind the checksum (smoltcp does the same). */
#ifdef SK_FUZZING
#define WIRE_VERIFY_CSUM 0
#else
#define WIRE_VERIFY_CSUM 1
#endif

#endif
