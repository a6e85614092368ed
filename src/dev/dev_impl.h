/* dev_impl.h — what the hosted device backends share (Linux only).
 *
 * Audience: the files in src/dev, not the stack.  The stack sees struct dev
 * (dev.h) and dev_open (dev_open.h); each backend file implements one
 * *_open function declared here, and dev_open.c picks one by the spec.
 */
#ifndef DEV_IMPL_H
#define DEV_IMPL_H

#include "dev_open.h"

/* The memory behind a device's two rings: one mmap'ed ring region. */
struct dev_region {
	void *mem;
	size_t size;
};

/* Map and lay out a region with num_slots per ring (0 = default) and point
 * d->rx / d->tx at it.  Returns 0 or -1 with err set. */
int dev_region_alloc(struct dev *d, struct dev_region *r, uint32_t num_slots, char *err,
		     size_t errlen);
void dev_region_free(struct dev_region *r);

/* A random locally administered unicast MAC (getrandom). */
void dev_random_mac(uint8_t mac[SK_MAC_LEN]);

/* snprintf into err, if err is not NULL. Always returns -1, so that error
 * paths read `return dev_err(...)`. */
int dev_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Backends: name is the part of the spec after "kind:", already checked
 * to be 1 .. IFNAMSIZ-1 bytes. */
int tap_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
	     size_t errlen);
int packet_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
		size_t errlen);
int xdp_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
	     size_t errlen);
/* name is "NAME/PORT" here (the spec's '/' is allowed for this kind). */
int switch_open(const char *name, const struct dev_config *cfg, struct dev **out, char *err,
		size_t errlen);
/* Wrap inner in a recorder writing every rx and tx frame to path.  On
 * success the wrapper owns inner; on failure inner is left open. */
int pcap_wrap(struct dev *inner, const char *path, struct dev **out, char *err, size_t errlen);

#endif
