/* site_bundle.h — how `skiff vm --config FILE` carries a configuration into
 * the guest: one boot module (QEMU -initrd) holding the file's text, one
 * site archive (site_archive.h) per distinct `files` folder it names, and
 * every certificate and key file it names, each a "part" found by name.
 *
 * Layout (integers little-endian; offsets from the module's start; the
 * module is exactly total_len bytes):
 *
 *   0   header, SB_HEADER_LEN (32) bytes
 *         0  magic      "SKIFFCFG" (8 bytes)
 *         8  u32 version  SB_VERSION (1)
 *        12  u32 count    parts, 1..SB_MAX_PARTS
 *        16  u32 flags    SB_F_*
 *        20  u32 reserved 0
 *        24  u64 total_len
 *   32  part table: count entries of SB_PART_LEN (32) bytes
 *         0  u32 kind       SB_CONF, SB_ARCHIVE or SB_PEM
 *         4  u32 name_len   0..SB_MAX_NAME
 *         8  u64 name_off   the name's bytes (not NUL-terminated)
 *        16  u64 data_off   the part's bytes (an archive's: a multiple of
 *        24  u64 data_len     SB_ALIGN, so its bodies stay cache-aligned)
 *   then the names, then the parts' data.
 *
 * Names: a part is found by the path the configuration's parser produces
 * for it (sites_conf_parse joins a relative path with the file's folder),
 * so the guest, parsing the same text with the same folder, asks for
 * exactly the names the packer wrote.  The SB_CONF part (exactly one, the
 * first) holds the file's text and is named by that folder.
 *
 * The module is untrusted (anyone could have edited the temporary file):
 * sb_open checks every field and that every name and part lies inside the
 * module; what a part holds is checked by its own reader (sar_open for an
 * archive, the parser for the text, BearSSL for a PEM file).
 * Freestanding: the packer (cmd/vm.c) writes it, the guest
 * (uk/uk_sites.c) reads it. */
#ifndef ARCHIVE_SITE_BUNDLE_H
#define ARCHIVE_SITE_BUNDLE_H

#include "../base/sk.h"

#define SB_HEADER_LEN 32u
#define SB_PART_LEN 32u
#define SB_VERSION 1u
#define SB_MAX_PARTS 1024u
#define SB_MAX_NAME 1024u
#define SB_ALIGN 4096u

enum sb_kind {
	SB_CONF = 1,    /* the configuration file's text; name: its folder */
	SB_ARCHIVE = 2, /* a site archive of a `files` folder; name: the folder */
	SB_PEM = 3,     /* a certificate chain or key file; name: its path */
};

/* QEMU user networking: the guest's gateway (gw=, 10.0.2.2) is the host's
 * 127.0.0.1, so a proxy upstream the file names at 127.0.0.1 is reached
 * there.  Without it (TAP) a loopback upstream is refused at boot. */
#define SB_F_USER_NET 1u

static const char sb_magic[8] = {'S', 'K', 'I', 'F', 'F', 'C', 'F', 'G'};

struct sb_part {
	uint32_t kind;
	const char *name;
	uint32_t name_len;
	const uint8_t *data;
	uint64_t len;
};

struct sb_view {
	const uint8_t *base;
	uint64_t size;
	uint32_t count, flags;
};

static inline uint32_t sb_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t sb_get64(const uint8_t *p)
{
	return (uint64_t)sb_get32(p) | (uint64_t)sb_get32(p + 4) << 32;
}

static inline void sb_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static inline void sb_put64(uint8_t *p, uint64_t v)
{
	sb_put32(p, (uint32_t)v);
	sb_put32(p + 4, (uint32_t)(v >> 32));
}

/* Does the module start like a bundle (so it is one, or a broken one)? */
static inline bool sb_is_bundle(const void *m, uint64_t len)
{
	return m && len >= 8 && sk_memcmp(m, sb_magic, 8) == 0;
}

/* Is [off, off + len) inside [0, size)? */
static inline bool sb_inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Check the header, the table and every part's bounds.  0, or -1 with the
 * reason in *why (a static string). */
static inline int sb_open(struct sb_view *v, const void *m, uint64_t len, const char **why)
{
	const uint8_t *b = m;
	*why = NULL;
	if (!sb_is_bundle(m, len) || len < SB_HEADER_LEN)
		*why = "no bundle header";
	else if (sb_get32(b + 8) != SB_VERSION)
		*why = "unknown bundle version";
	else if (sb_get64(b + 24) != len)
		*why = "total_len is not the module's size";
	else if (sb_get32(b + 12) == 0 || sb_get32(b + 12) > SB_MAX_PARTS ||
		 !sb_inside(SB_HEADER_LEN, (uint64_t)sb_get32(b + 12) * SB_PART_LEN, len))
		*why = "part count out of range";
	if (*why)
		return -1;
	v->base = b;
	v->size = len;
	v->count = sb_get32(b + 12);
	v->flags = sb_get32(b + 16);
	for (uint32_t i = 0; i < v->count; i++) {
		const uint8_t *e = b + SB_HEADER_LEN + (uint64_t)i * SB_PART_LEN;
		uint32_t kind = sb_get32(e), nl = sb_get32(e + 4);
		if (kind < SB_CONF || kind > SB_PEM || (kind == SB_CONF) != (i == 0))
			*why = "a part's kind is unknown, or the text is not the first part";
		else if (nl > SB_MAX_NAME || !sb_inside(sb_get64(e + 8), nl, len))
			*why = "a part's name is outside the module";
		else if (!sb_inside(sb_get64(e + 16), sb_get64(e + 24), len))
			*why = "a part's data is outside the module";
		else if (kind == SB_ARCHIVE && sb_get64(e + 16) % SB_ALIGN)
			*why = "an archive part is not aligned";
		if (*why)
			return -1;
	}
	return 0;
}

static inline void sb_part_at(const struct sb_view *v, uint32_t i, struct sb_part *p)
{
	const uint8_t *e = v->base + SB_HEADER_LEN + (uint64_t)i * SB_PART_LEN;
	p->kind = sb_get32(e);
	p->name_len = sb_get32(e + 4);
	p->name = (const char *)(v->base + sb_get64(e + 8));
	p->data = v->base + sb_get64(e + 16);
	p->len = sb_get64(e + 24);
}

/* The part of this kind named exactly name (NUL-terminated); false if none. */
static inline bool sb_find(const struct sb_view *v, uint32_t kind, const char *name,
			   struct sb_part *p)
{
	size_t n = 0;
	while (name[n])
		n++;
	for (uint32_t i = 0; i < v->count; i++) {
		sb_part_at(v, i, p);
		if (p->kind == kind && p->name_len == n && sk_memcmp(p->name, name, n) == 0)
			return true;
	}
	return false;
}

#endif
