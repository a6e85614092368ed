/* virtio_mmio_arg.c — see virtio_mmio_arg.h.  Every number is checked for
 * overflow as it is read; nothing is read past n. */
#include "virtio_mmio_arg.h"

/* A decimal or 0x-hex number at s[*i..n); at most max.  Returns 0 or -1. */
static int num(const char *s, size_t n, size_t *i, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t k = *i;
	if (k + 1 < n && s[k] == '0' && (s[k + 1] == 'x' || s[k + 1] == 'X')) {
		base = 16;
		k += 2;
	}
	size_t first = k;
	for (; k < n; k++) {
		char c = s[k];
		unsigned dgt;
		if (c >= '0' && c <= '9')
			dgt = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			dgt = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			dgt = (unsigned)(c - 'A' + 10);
		else
			break;
		if (v > (max - dgt) / base)
			return -1;
		v = v * base + dgt;
	}
	if (k == first)
		return -1;
	*i = k;
	*out = v;
	return 0;
}

int virtio_mmio_arg_parse(const char *s, size_t n, struct virtio_mmio_dev *d, const char **why)
{
	size_t i = 0;
	uint64_t size, base, irq, id;
	if (num(s, n, &i, VIRTIO_MMIO_MAX_SIZE, &size) < 0) {
		*why = "virtio_mmio.device: size is not a number up to 1M";
		return -1;
	}
	if (i < n && (s[i] == 'K' || s[i] == 'k' || s[i] == 'M' || s[i] == 'm' || s[i] == 'G' ||
		      s[i] == 'g')) {
		unsigned shift = s[i] == 'K' || s[i] == 'k' ? 10 : s[i] == 'M' || s[i] == 'm' ? 20 : 30;
		if (size > (uint64_t)VIRTIO_MMIO_MAX_SIZE >> shift) {
			*why = "virtio_mmio.device: size over 1M";
			return -1;
		}
		size <<= shift;
		i++;
	}
	if (size < VIRTIO_MMIO_MIN_SIZE) {
		*why = "virtio_mmio.device: size under 512 bytes (the registers need 0x100 and a config)";
		return -1;
	}
	if (i >= n || s[i] != '@') {
		*why = "virtio_mmio.device: expected SIZE@BASE:IRQ";
		return -1;
	}
	i++;
	if (num(s, n, &i, UINT64_MAX, &base) < 0) {
		*why = "virtio_mmio.device: base is not a 64-bit number";
		return -1;
	}
	if (base & 3 || base > UINT64_MAX - size) {
		*why = "virtio_mmio.device: base not 4-byte aligned, or the window wraps";
		return -1;
	}
	if (i >= n || s[i] != ':') {
		*why = "virtio_mmio.device: expected SIZE@BASE:IRQ";
		return -1;
	}
	i++;
	if (num(s, n, &i, VIRTIO_MMIO_MAX_IRQ, &irq) < 0) {
		*why = "virtio_mmio.device: irq is not a number up to 255";
		return -1;
	}
	if (i < n && s[i] == ':') { /* the instance id Linux takes: ignored */
		i++;
		if (num(s, n, &i, UINT32_MAX, &id) < 0) {
			*why = "virtio_mmio.device: id is not a number";
			return -1;
		}
	}
	if (i != n) {
		*why = "virtio_mmio.device: junk after SIZE@BASE:IRQ[:ID]";
		return -1;
	}
	d->base = base;
	d->size = (uint32_t)size;
	d->irq = (uint32_t)irq;
	return 0;
}

int virtio_mmio_args_take(char *cmdline, struct virtio_mmio_dev *out, unsigned max,
			  const char **why)
{
	static const char pre[] = VIRTIO_MMIO_ARG_PREFIX;
	const size_t plen = sizeof(pre) - 1;
	unsigned found = 0;
	size_t r = 0, w = 0; /* read and write positions: the rest moves down */
	for (;;) {
		while (cmdline[r] == ' ' || cmdline[r] == '\t')
			r++;
		if (!cmdline[r])
			break;
		size_t start = r;
		while (cmdline[r] && cmdline[r] != ' ' && cmdline[r] != '\t')
			r++;
		size_t len = r - start;
		bool ours = len >= plen;
		for (size_t k = 0; ours && k < plen; k++)
			ours = cmdline[start + k] == pre[k];
		if (ours) {
			if (found == max) {
				*why = "virtio_mmio.device: more devices than the guest takes";
				return -1;
			}
			if (virtio_mmio_arg_parse(cmdline + start + plen, len - plen, &out[found], why) < 0)
				return -1;
			found++;
			continue;
		}
		if (w)
			cmdline[w++] = ' ';
		for (size_t k = 0; k < len; k++) /* w <= start: a move down */
			cmdline[w++] = cmdline[start + k];
	}
	cmdline[w] = 0;
	return (int)found;
}
