/* tcp_isn.c — keyed hashes of the 4-tuple: demux bucket, RFC 6528 initial
 * sequence numbers, per-connection timestamp offsets, and SYN cookies.
 *
 * All keys derive from cfg.seed, which the caller draws at random at start.
 */
#include "tcp_int.h"

/* The bytes hashed.  IPv4 (and a listener's ::): the two host-order
 * addresses and the ports (12 bytes, as before IPv6: v4 hashes cost what
 * they did); the extra words follow for cookies.  IPv6: both 16-byte
 * addresses. */
struct tcp_tuple {
	uint32_t laddr, raddr;
	uint16_t lport, rport;
	uint32_t extra[2];
};
struct tcp_tuple6 {
	uint8_t laddr[SK_ADDR_LEN], raddr[SK_ADDR_LEN];
	uint16_t lport, rport;
	uint32_t extra[2];
};

static uint64_t tcp_hash4(const struct siphash_key *k, const struct sk_addr *laddr, uint16_t lport,
			  const struct sk_addr *raddr, uint16_t rport, uint32_t x0, uint32_t x1,
			  size_t extra)
{
	/* A listener's key (:: both sides) takes the short form too: every
	 * SYN looks it up, and it is never an ISN's or a cookie's tuple, nor
	 * can it be confused with a v4 tuple (0.0.0.0 is never a connection's
	 * address; a shared bucket would cost a compare, not a wrong match). */
	if (sk_likely((sk_addr_is_v4(laddr) || sk_addr_is_any(laddr)) &&
		      (sk_addr_is_v4(raddr) || sk_addr_is_any(raddr)))) {
		struct tcp_tuple t = {sk_addr_ip4(laddr), sk_addr_ip4(raddr), lport, rport, {x0, x1}};
		return siphash24(k, &t, 12 + extra * 4);
	}
	struct tcp_tuple6 t;
	sk_memcpy(t.laddr, laddr->b, SK_ADDR_LEN);
	sk_memcpy(t.raddr, raddr->b, SK_ADDR_LEN);
	t.lport = lport;
	t.rport = rport;
	t.extra[0] = x0;
	t.extra[1] = x1;
	return siphash24(k, &t, 36 + extra * 4);
}

static struct siphash_key tcp_derive(const struct siphash_key *root, uint64_t label)
{
	struct siphash_key k;
	uint64_t a = label, b = ~label;
	k.k0 = siphash24(root, &a, sizeof(a));
	k.k1 = siphash24(root, &b, sizeof(b));
	return k;
}

void tcp_keys_init(struct tcp_stack *st)
{
	struct siphash_key root = {st->cfg.seed[0], st->cfg.seed[1]};
	st->hkey = tcp_derive(&root, 1);
	st->isnkey = tcp_derive(&root, 2);
	st->cookiekey = tcp_derive(&root, 3);
	st->tskey = tcp_derive(&root, 4);
}

uint32_t tcp_tuple_hash(const struct tcp_stack *st, const struct sk_addr *laddr, uint16_t lport,
			const struct sk_addr *raddr, uint16_t rport)
{
	return (uint32_t)tcp_hash4(&st->hkey, laddr, lport, raddr, rport, 0, 0, 0);
}

/* RFC 6528: ISN = M + F(4-tuple, key), M a 4 us clock.  Same tuple, later
 * time -> larger ISN, which is what lets TIME_WAIT reuse by sequence work. */
uint32_t tcp_isn(const struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
		 uint16_t lport, const struct sk_addr *raddr, uint16_t rport)
{
	uint32_t f = (uint32_t)tcp_hash4(&st->isnkey, laddr, lport, raddr, rport, 0, 0, 0);
	return f + (uint32_t)(now / (4 * SK_NS_PER_US));
}

/* RFC 7323 5.4 / 7.1: a random per-tuple offset hides our uptime.  It is a
 * pure function of the tuple so a SYN-cookie connection finds it again. */
uint32_t tcp_ts_offset(const struct tcp_stack *st, const struct sk_addr *laddr, uint16_t lport,
		       const struct sk_addr *raddr, uint16_t rport)
{
	return (uint32_t)tcp_hash4(&st->tskey, laddr, lport, raddr, rport, 0, 0, 0);
}

uint8_t tcp_wscale_for(uint32_t rcvbuf)
{
	uint8_t s = 0;
	while (s < 14 && (rcvbuf >> s) > 65535)
		s++;
	return s;
}

/* SYN cookie (our ISN when the queues are full):
 *   bits 31..27  counter of 64-second periods, mod 32
 *   bits 26..24  index into tcp_cookie_mss[]
 *   bits 23..0   SipHash(key, 4-tuple, peer ISN, counter, mss index)
 * Valid for the current and the previous period (64..128 s).  Window scale
 * and SACK-permitted travel in the low bits of our timestamp (tcp_out.c). */
static const uint16_t tcp_cookie_mss[8] = {536, 1200, 1360, 1400, 1440, 1452, 1460, 8960};
#define TCP_COOKIE_PERIOD (64 * SK_NS_PER_S)

static uint32_t tcp_cookie_hash(const struct tcp_stack *st, const struct sk_addr *laddr,
				uint16_t lport, const struct sk_addr *raddr, uint16_t rport,
				uint32_t peer_isn, uint32_t count, uint32_t idx)
{
	return (uint32_t)tcp_hash4(&st->cookiekey, laddr, lport, raddr, rport, peer_isn,
				   count << 3 | idx, 2) & 0xffffff;
}

uint32_t tcp_cookie_make(const struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
			 uint16_t lport, const struct sk_addr *raddr, uint16_t rport,
			 uint32_t peer_isn, uint16_t peer_mss, uint16_t *mss_out)
{
	uint32_t idx = 0;
	for (uint32_t i = 0; i < 8; i++)
		if (tcp_cookie_mss[i] <= peer_mss)
			idx = i;
	uint32_t count = (uint32_t)(now / TCP_COOKIE_PERIOD);
	*mss_out = tcp_cookie_mss[idx];
	return (count & 0x1f) << 27 | idx << 24 |
	       tcp_cookie_hash(st, laddr, lport, raddr, rport, peer_isn, count, idx);
}

uint16_t tcp_cookie_check(const struct tcp_stack *st, sk_time_ns now, const struct sk_addr *laddr,
			  uint16_t lport, const struct sk_addr *raddr, uint16_t rport,
			  uint32_t peer_isn, uint32_t cookie)
{
	uint32_t count = (uint32_t)(now / TCP_COOKIE_PERIOD);
	uint32_t idx = cookie >> 24 & 7;
	for (uint32_t age = 0; age < 2; age++) {
		uint32_t c = count - age;
		if ((c & 0x1f) != cookie >> 27)
			continue;
		if (tcp_cookie_hash(st, laddr, lport, raddr, rport, peer_isn, c, idx) ==
		    (cookie & 0xffffff))
			return tcp_cookie_mss[idx];
	}
	return 0;
}
