/* siphash.c — SipHash-2-4: 2 compression rounds per 8-byte word, 4
 * finalisation rounds.  Words are read little-endian, as the spec says. */
#include "siphash.h"

static inline uint64_t sip_rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t sip_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = sip_rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = sip_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = sip_rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = sip_rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = sip_rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = sip_rotl(s->v2, 32);
}

uint64_t siphash24(const struct siphash_key *key, const void *data, size_t len)
{
	const uint8_t *p = data;
	struct sip_state s = {
		key->k0 ^ 0x736f6d6570736575ull,
		key->k1 ^ 0x646f72616e646f6dull,
		key->k0 ^ 0x6c7967656e657261ull,
		key->k1 ^ 0x7465646279746573ull,
	};
	size_t full = len & ~(size_t)7;
	for (size_t i = 0; i < full; i += 8) {
		uint64_t m = sip_le64(p + i);
		s.v3 ^= m;
		sip_round(&s);
		sip_round(&s);
		s.v0 ^= m;
	}
	/* Last word: the remaining bytes, and the length mod 256 in the top byte. */
	uint64_t b = (uint64_t)len << 56;
	for (size_t i = 0; i < (len & 7); i++)
		b |= (uint64_t)p[full + i] << (8 * i);
	s.v3 ^= b;
	sip_round(&s);
	sip_round(&s);
	s.v0 ^= b;
	s.v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
