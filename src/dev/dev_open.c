/* dev_open.c — open a hosted device by its spec, and what backends share. */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "dev_impl.h"

int dev_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int dev_region_alloc(struct dev *d, struct dev_region *r, uint32_t num_slots, char *err,
		     size_t errlen)
{
	size_t size;
	void *mem;

	if (num_slots == 0)
		num_slots = RING_SLOTS_DEFAULT;
	size = ring_region_size(num_slots, RING_BUF_SIZE_DEFAULT, 0);
	if (size == 0)
		return dev_err(err, errlen, "bad ring size %u slots (a power of two >= 2)",
			       num_slots);
	/* mmap: page aligned (the ABI wants 64), zeroed, and the same kind of
	 * memory a shared region would be. */
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		   -1, 0);
	if (mem == MAP_FAILED)
		return dev_err(err, errlen, "ring mmap %zu bytes: %s", size, strerror(errno));
	if (ring_region_init(mem, size, num_slots, RING_BUF_SIZE_DEFAULT, 0) != 0) {
		munmap(mem, size);
		return dev_err(err, errlen, "ring_region_init failed");
	}
	r->mem = mem;
	r->size = size;
	d->rx = ring_region_rx(mem);
	d->tx = ring_region_tx(mem);
	return 0;
}

void dev_region_free(struct dev_region *r)
{
	if (r->mem != NULL)
		munmap(r->mem, r->size);
	r->mem = NULL;
	r->size = 0;
}

void dev_random_mac(uint8_t mac[SK_MAC_LEN])
{
	size_t got = 0;

	while (got < SK_MAC_LEN) {
		ssize_t n = getrandom(mac + got, SK_MAC_LEN - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (n < 0 && errno != EINTR)
			break; /* cannot happen for 6 bytes after boot; keep going */
	}
	/* Locally administered (bit 1), unicast (bit 0 clear): it can never
	 * collide with a vendor address. */
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02);
}

unsigned dev_rx_queues(const char *ifname)
{
	char path[96];
	unsigned n = 0;
	/* rx-0, rx-1, ...: numbered without gaps. */
	for (;;) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", ifname, n);
		if (access(path, F_OK) != 0)
			break;
		n++;
	}
	return n;
}

int dev_open(const char *spec, const struct dev_config *cfg, struct dev **out, char *err,
	     size_t errlen)
{
	static const struct dev_config defaults = {0};
	static const struct {
		const char *kind;
		int (*open)(const char *, const struct dev_config *, struct dev **, char *,
			    size_t);
	} kinds[] = {
		{"tap", tap_open},
		{"packet", packet_open},
		{"xdp", xdp_open},
		{"switch", switch_open},
	};
	const char *colon, *name;
	struct dev *d = NULL;
	bool is_switch;

	*out = NULL;
	if (cfg == NULL)
		cfg = &defaults;
	if (spec == NULL || (colon = strchr(spec, ':')) == NULL)
		return dev_err(err, errlen,
			       "device '%s': expected tap:NAME, packet:IFACE, xdp:IFACE or "
			       "switch:NAME/PORT",
			       spec ? spec : "");
	name = colon + 1;
	if (*name == '\0')
		return dev_err(err, errlen, "device '%s': empty interface name", spec);
	/* switch:NAME/PORT is not an interface name: switch_open checks it. */
	is_switch = colon - spec == 6 && memcmp(spec, "switch", 6) == 0;
	if (!is_switch && strlen(name) > IFNAMSIZ - 1)
		return dev_err(err, errlen, "device '%s': interface name longer than %d bytes",
			       spec, IFNAMSIZ - 1);
	/* The kernel would reject these too, but with a less clear message. */
	if (!is_switch && strpbrk(name, "/: \t\n") != NULL)
		return dev_err(err, errlen, "device '%s': bad character in interface name", spec);
	if (cfg->num_slots != 0 && ring_region_size(cfg->num_slots, RING_BUF_SIZE_DEFAULT, 0) == 0)
		return dev_err(err, errlen, "ring slots %u: must be a power of two >= 2",
			       cfg->num_slots);

	for (size_t i = 0; i < SK_ARRAY_LEN(kinds); i++) {
		size_t kl = strlen(kinds[i].kind);
		if ((size_t)(colon - spec) != kl || memcmp(spec, kinds[i].kind, kl) != 0)
			continue;
		if (kinds[i].open(name, cfg, &d, err, errlen) != 0)
			return -1;
		snprintf(d->name, sizeof(d->name), "%s", spec);
		if (cfg->pcap_path != NULL) {
			struct dev *w;
			if (pcap_wrap(d, cfg->pcap_path, &w, err, errlen) != 0) {
				dev_close(d);
				return -1;
			}
			d = w;
		}
		*out = d;
		return 0;
	}
	return dev_err(err, errlen,
		       "device '%s': unknown kind '%.*s' (tap, packet, xdp or switch)", spec,
		       (int)(colon - spec), spec);
}

void dev_stats_each(struct dev *d, void (*fn)(void *ctx, const char *name, uint64_t v),
		    void *ctx)
{
	const struct dev_stats *s = &d->stats;
	fn(ctx, "dev.rx_frames", s->rx_frames);
	fn(ctx, "dev.rx_bytes", s->rx_bytes);
	fn(ctx, "dev.rx_drops", s->rx_drops);
	fn(ctx, "dev.rx_syncs", s->rx_syncs);
	fn(ctx, "dev.rx_syscalls", s->rx_syscalls);
	fn(ctx, "dev.tx_frames", s->tx_frames);
	fn(ctx, "dev.tx_bytes", s->tx_bytes);
	fn(ctx, "dev.tx_drops", s->tx_drops);
	fn(ctx, "dev.tx_syncs", s->tx_syncs);
	fn(ctx, "dev.tx_syscalls", s->tx_syscalls);
	if (d->offload) {
		fn(ctx, "dev.offload", d->offload);
		fn(ctx, "dev.rx_csum_ok", s->rx_csum_ok);
		fn(ctx, "dev.rx_gso_frames", s->rx_gso_frames);
		fn(ctx, "dev.rx_gso_segs", s->rx_gso_segs);
		fn(ctx, "dev.rx_vnet_bad", s->rx_vnet_bad);
		fn(ctx, "dev.tx_csum_offload", s->tx_csum_offload);
		fn(ctx, "dev.tx_tso_frames", s->tx_tso_frames);
		fn(ctx, "dev.tx_tso_segs", s->tx_tso_segs);
	}
	if (d->ops->lower_drops)
		fn(ctx, "dev.rx_lower_drops", d->ops->lower_drops(d));
}

static void print_stat(void *ctx, const char *name, uint64_t value)
{
	fprintf(ctx, "%s %llu\n", name, (unsigned long long)value);
}

void dev_print_stats(struct dev *d, void *file)
{
	dev_stats_each(d, print_stat, file);
}
