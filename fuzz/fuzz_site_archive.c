/* fuzz_site_archive.c — the site archive reader (archive/site_archive.h) on
 * arbitrary images: the unikernel runs it on a boot module anyone could
 * have written.  Input: [mode][image...]; mode bit 0 repairs the header's
 * fixed fields (magic, version, entry size, total_len = the size) so the
 * fuzzer spends its time on the tables, not on the magic.  Checks, after a
 * successful sar_open on an exact-size copy (ASan catches any read past
 * it):
 *  - every entry's name and body lie inside the image, bodies inside the
 *    data area, in order and apart; names are clean and strictly sorted;
 *  - sar_find finds every entry at its own index, and the site's lookup
 *    returns that entry's bytes (a slice of the image, not a copy).
 * Build: make build/fuzz/fuzz_site_archive. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/site_archive.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = size - 1;
	uint8_t *img = malloc(n ? n : 1);
	if (!img)
		abort();
	memcpy(img, data + 1, n);
	if ((data[0] & 1) && n >= SAR_HEADER_LEN) {
		sar_put32(img, SAR_MAGIC);
		sar_put32(img + 4, SAR_VERSION);
		sar_put32(img + 12, SAR_ENTRY_LEN);
		sar_put64(img + 48, n);
	}
	struct sar_view v;
	char err[160];
	if (sar_open(&v, img, n, err, sizeof(err)) == 0) {
		CHECK(v.count <= (n - SAR_HEADER_LEN) / SAR_ENTRY_LEN);
		struct http_file *files = malloc(sar_site_mem(&v) ? sar_site_mem(&v) : 1);
		if (!files)
			abort();
		struct sar_site *site = malloc(sizeof(*site));
		if (!site)
			abort();
		sar_site_init(site, &v, files);
		const uint8_t *prev_end = img + v.data_off;
		struct sar_entry prev = {0};
		for (uint32_t i = 0; i < v.count; i++) {
			struct sar_entry e;
			sar_entry_at(&v, i, &e);
			CHECK((const uint8_t *)e.name >= v.names &&
			      (const uint8_t *)e.name + e.name_len <= v.names + v.names_len);
			CHECK(sar_name_ok(e.name, e.name_len));
			CHECK(e.data >= prev_end && e.data + e.len <= img + v.data_off + v.data_len);
			CHECK((uint64_t)(e.data - img) % SAR_ALIGN == 0);
			if (i) {
				size_t m = prev.name_len < e.name_len ? prev.name_len : e.name_len;
				int c = memcmp(prev.name, e.name, m);
				CHECK(c < 0 || (c == 0 && prev.name_len < e.name_len));
			}
			CHECK(sar_find(&v, e.name, e.name_len) == i);
			const struct http_file *f = sar_site_lookup(site, e.name, e.name_len);
			CHECK(f == &files[i] && f->data == e.data && f->len == e.len && f->ctype);
			/* Touch the body: every byte must be inside the copy. */
			volatile uint8_t sink = 0;
			for (uint64_t k = 0; k < e.len; k += 4096)
				sink ^= e.data[k];
			if (e.len)
				sink ^= e.data[e.len - 1];
			(void)sink;
			prev_end = e.data + e.len;
			prev = e;
		}
		CHECK(sar_find(&v, "/", 1) == -1);
		(void)sar_site_lookup(site, "/", 1);
		free(site);
		free(files);
	} else {
		CHECK(memchr(err, 0, sizeof(err)) && err[0]);
	}
	free(img);
	return 0;
}
