/* sk_addr.h — an IP address of either family: how the TCP engine keys a
 * connection and how the loop and http layers see a peer.
 *
 * One 16-byte form for both families so that a 4-tuple is one key, one
 * compare and one hash whatever the family (no second TCP for IPv6):
 *   IPv6   the address as on the wire (network byte order);
 *   IPv4   the IPv4-mapped form ::ffff:a.b.c.d (RFC 4291 2.5.5.2), the
 *          IPv4 address in b[12..15], network byte order.
 * Invariant: an IPv4 address is always stored mapped, and a mapped address
 * always means IPv4 (the IPv6 input path drops packets that carry one, RFC
 * 4291 2.5.5.2 / RFC 6890: they never appear on a wire).  So two addresses
 * are equal exactly when their 16 bytes are, and the family is a property
 * of the bytes, not a second field to keep in step.  All zero (::) is "no
 * address" / "any"; it is never a peer.
 */
#ifndef SK_ADDR_H
#define SK_ADDR_H

#include "sk.h"

#define SK_ADDR_LEN 16

struct sk_addr {
	uint8_t b[SK_ADDR_LEN];
};

/* IPv4 (host order, as everywhere above wire) to its mapped form. */
static inline struct sk_addr sk_addr_v4(uint32_t ip)
{
	struct sk_addr a = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0}};
	sk_put_be32(a.b + 12, ip);
	return a;
}

/* An IPv6 address as on the wire (16 bytes). */
static inline struct sk_addr sk_addr_v6(const uint8_t b[SK_ADDR_LEN])
{
	struct sk_addr a;
	sk_memcpy(a.b, b, SK_ADDR_LEN);
	return a;
}

static inline bool sk_addr_is_v4(const struct sk_addr *a)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return sk_memcmp(a->b, pfx, 12) == 0;
}

/* The IPv4 address (host order) of a mapped address; meaningless otherwise. */
static inline uint32_t sk_addr_ip4(const struct sk_addr *a)
{
	return sk_get_be32(a->b + 12);
}

static inline bool sk_addr_eq(const struct sk_addr *x, const struct sk_addr *y)
{
	return sk_memcmp(x->b, y->b, SK_ADDR_LEN) == 0;
}

static inline bool sk_addr_is_any(const struct sk_addr *a)
{
	static const uint8_t zero[SK_ADDR_LEN];
	return sk_memcmp(a->b, zero, SK_ADDR_LEN) == 0;
}

#endif
