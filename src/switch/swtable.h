/* swtable.h — the switch's MAC table: source MAC -> port, with aging.
 *
 * Fixed size (SWT_ENTRIES), no allocation, freestanding, takes `now`.
 * Open addressing with a bounded probe window: a MAC can only live in the
 * SWT_WAYS entries starting at its hash, so a lookup reads at most one or
 * two cache lines and never walks the table, and a flood of random source
 * MACs can only evict entries, never slow lookups down or grow memory.
 *   learn: refresh the MAC's entry (moving it if it changed port); else
 *          take an empty or expired entry of the window; else evict the
 *          oldest entry of the window (counted).
 *   lookup: a hit only if the entry was refreshed less than age_ns ago.
 * The hash is keyed with a random seed so that an attacker who does not
 * know it cannot aim all its MACs at one window.
 */
#ifndef SWITCH_SWTABLE_H
#define SWITCH_SWTABLE_H

#include "../base/sk.h"

#define SWT_ENTRIES 4096u /* power of two */
#define SWT_WAYS 8u       /* probe window */
#define SWT_NONE (-1)
#define SWT_AGE_DEFAULT (300ull * SK_NS_PER_S) /* as 802.1D bridges */

struct swt_entry {
	uint64_t key;     /* MAC in the low 48 bits | SWT_VALID; 0 = empty */
	sk_time_ns seen;  /* last time the MAC was a source */
	uint32_t port;
	uint32_t pad;
};

struct swt_counters {
	uint64_t learned;  /* new entries */
	uint64_t moved;    /* a MAC seen on a different port than its entry's */
	uint64_t evicted;  /* live entries pushed out of a full window */
	uint64_t expired;  /* aged-out entries reused or missed on lookup */
};

struct swt {
	uint64_t seed;   /* odd multiplier for the hash */
	sk_time_ns age_ns;
	struct swt_counters c;
	struct swt_entry e[SWT_ENTRIES];
};

void swt_init(struct swt *t, uint64_t seed, sk_time_ns age_ns);
/* The port a unicast MAC was last seen on, or SWT_NONE. */
int swt_lookup(struct swt *t, const uint8_t mac[SK_MAC_LEN], sk_time_ns now);
/* A frame from mac arrived on port. */
void swt_learn(struct swt *t, const uint8_t mac[SK_MAC_LEN], uint32_t port, sk_time_ns now);
/* Drop every entry pointing at port (it was detached). */
void swt_forget_port(struct swt *t, uint32_t port);
/* Live (not expired) entries: for tests and stats, walks the table. */
uint32_t swt_count(const struct swt *t, sk_time_ns now);

#endif
