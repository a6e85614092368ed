/* swtable.c — see swtable.h. */
#include "swtable.h"

#define SWT_VALID (1ull << 63)

static uint64_t mac_key(const uint8_t m[SK_MAC_LEN])
{
	return SWT_VALID | (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 | (uint64_t)m[2] << 24 |
	       (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
}

/* First entry of the key's window.  Multiplicative hashing: the top bits of
 * key * odd seed depend on every bit of the key. */
static uint32_t window(const struct swt *t, uint64_t key)
{
	return (uint32_t)((key * t->seed) >> 40) & (SWT_ENTRIES - 1);
}

static bool live(const struct swt *t, const struct swt_entry *e, sk_time_ns now)
{
	/* seen <= now always for a monotonic clock; a `now` that went back
	 * (a test, a new clock) must not make entries immortal. */
	return e->key != 0 && (now < e->seen || now - e->seen < t->age_ns);
}

void swt_init(struct swt *t, uint64_t seed, sk_time_ns age_ns)
{
	sk_memset(t, 0, sizeof(*t));
	t->seed = seed | 1; /* odd: the multiplication is then a bijection */
	t->age_ns = age_ns ? age_ns : SWT_AGE_DEFAULT;
}

int swt_lookup(struct swt *t, const uint8_t mac[SK_MAC_LEN], sk_time_ns now)
{
	uint64_t key = mac_key(mac);
	uint32_t w = window(t, key);

	/* The whole window, no early stop at an empty entry: forget_port
	 * clears entries in place, so holes carry no meaning. */
	for (uint32_t i = 0; i < SWT_WAYS; i++) {
		struct swt_entry *e = &t->e[(w + i) & (SWT_ENTRIES - 1)];
		if (e->key != key)
			continue;
		if (!live(t, e, now)) {
			e->key = 0;
			t->c.expired++;
			return SWT_NONE;
		}
		return (int)e->port;
	}
	return SWT_NONE;
}

void swt_learn(struct swt *t, const uint8_t mac[SK_MAC_LEN], uint32_t port, sk_time_ns now)
{
	uint64_t key = mac_key(mac);
	uint32_t w = window(t, key);
	struct swt_entry *free_e = NULL, *oldest = NULL;

	for (uint32_t i = 0; i < SWT_WAYS; i++) {
		struct swt_entry *e = &t->e[(w + i) & (SWT_ENTRIES - 1)];
		if (e->key == key) {
			if (e->port != port) {
				e->port = port;
				t->c.moved++;
			}
			e->seen = now;
			return;
		}
		if (!live(t, e, now)) {
			if (free_e == NULL)
				free_e = e;
		} else if (oldest == NULL || e->seen < oldest->seen) {
			oldest = e;
		}
	}
	if (free_e != NULL) {
		if (free_e->key != 0)
			t->c.expired++;
	} else {
		free_e = oldest; /* SWT_WAYS >= 1, so the window had a live entry */
		t->c.evicted++;
	}
	free_e->key = key;
	free_e->port = port;
	free_e->seen = now;
	t->c.learned++;
}

void swt_forget_port(struct swt *t, uint32_t port)
{
	for (uint32_t i = 0; i < SWT_ENTRIES; i++)
		if (t->e[i].key != 0 && t->e[i].port == port)
			t->e[i].key = 0;
}

uint32_t swt_count(const struct swt *t, sk_time_ns now)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < SWT_ENTRIES; i++)
		n += live(t, &t->e[i], now);
	return n;
}
