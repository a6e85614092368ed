/* nbr_board.c — the workers' shared neighbour board (nbr_board.h). */
#include "nbr_board.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void nbr_board_init(struct nbr_board *b, uint64_t seed)
{
	sk_memset(b, 0, sizeof(*b));
	b->k1 = mix64(&seed);
	b->k2 = mix64(&seed) | 1;
}

/* The first slot of ip's window: keyed multiply-shift, so addresses an
 * outsider picks cannot be aimed at one window. */
static unsigned board_home(const struct nbr_board *b, uint32_t ip)
{
	_Static_assert((NBR_BOARD_SLOTS & (NBR_BOARD_SLOTS - 1)) == 0, "power of two");
	return (unsigned)((((uint64_t)ip ^ b->k1) * b->k2) >> 40) & (NBR_BOARD_SLOTS - 1);
}

static uint64_t mac_pack(const uint8_t m[SK_MAC_LEN])
{
	uint64_t v = 0;
	for (unsigned i = 0; i < SK_MAC_LEN; i++)
		v = v << 8 | m[i];
	return v;
}

static void mac_unpack(uint64_t v, uint8_t m[SK_MAC_LEN])
{
	for (unsigned i = SK_MAC_LEN; i-- > 0; v >>= 8)
		m[i] = (uint8_t)v;
}

/* One consistent snapshot of slot s, or false (busy through the retries). */
static bool slot_read(const struct nbr_board_slot *s, uint32_t *ip, uint64_t *mac, uint64_t *conf)
{
	for (int tries = 0; tries < 4; tries++) {
		uint32_t q1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (q1 & 1)
			continue;
		*ip = LD(&s->ip);
		*mac = LD(&s->mac);
		*conf = LD(&s->confirmed);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LD(&s->seq) == q1)
			return true;
	}
	return false;
}

bool nbr_board_publish(struct nbr_board *b, uint32_t ip, const uint8_t mac[SK_MAC_LEN],
		       sk_time_ns confirmed)
{
	if (ip == 0)
		return false;
	unsigned h = board_home(b, ip), pick = NBR_BOARD_SLOTS;
	uint64_t oldest = UINT64_MAX;
	/* Our own entry if the window has it, else an empty slot, else the
	 * oldest (a snapshot: a race only changes which slot we take). */
	for (unsigned k = 0; k < NBR_BOARD_PROBE; k++) {
		unsigned i = (h + k) & (NBR_BOARD_SLOTS - 1);
		uint32_t sip;
		uint64_t smac, sconf;
		if (!slot_read(&b->slot[i], &sip, &smac, &sconf))
			continue;
		if (sip == ip) {
			if (sconf >= confirmed && smac == mac_pack(mac))
				return false; /* nothing newer to say */
			pick = i;
			break;
		}
		uint64_t age = sip == 0 ? 0 : sconf + 1; /* empty slots first */
		if (age < oldest) {
			oldest = age;
			pick = i;
		}
	}
	if (pick == NBR_BOARD_SLOTS)
		return false;
	struct nbr_board_slot *s = &b->slot[pick];
	uint32_t q = LD(&s->seq);
	if ((q & 1) || !__atomic_compare_exchange_n(&s->seq, &q, q + 1, false, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return false; /* another writer: drop this one (see the header) */
	/* The release fence orders the odd sequence before the field stores,
	 * for a reader that sees a new field and then re-reads the sequence. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	ST(&s->ip, ip);
	ST(&s->mac, mac_pack(mac));
	ST(&s->confirmed, confirmed);
	__atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
	return true;
}

bool nbr_board_read(const struct nbr_board *b, uint32_t ip, uint8_t mac[SK_MAC_LEN],
		    sk_time_ns *confirmed)
{
	if (ip == 0)
		return false;
	unsigned h = board_home(b, ip);
	bool found = false;
	uint64_t best = 0, best_mac = 0;
	/* Two writers racing on an empty window can leave ip in two slots:
	 * take the newer. */
	for (unsigned k = 0; k < NBR_BOARD_PROBE; k++) {
		uint32_t sip;
		uint64_t smac, sconf;
		if (!slot_read(&b->slot[(h + k) & (NBR_BOARD_SLOTS - 1)], &sip, &smac, &sconf) ||
		    sip != ip)
			continue;
		if (!found || sconf > best) {
			found = true;
			best = sconf;
			best_mac = smac;
		}
	}
	if (found) {
		mac_unpack(best_mac, mac);
		*confirmed = best;
	}
	return found;
}
