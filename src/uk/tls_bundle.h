/* tls_bundle.h — how `skiff vm --tls-cert F --tls-key F` carries the two
 * PEM files into the guest: appended to the boot module (QEMU -initrd),
 * after the site archive if there is one (or alone), with a footer at the
 * very end:
 *
 *   [site archive][certificate PEM][key PEM][footer, 24 bytes]
 *   footer: "SKIFFTLS" (8), cert_len (u32 LE), key_len (u32 LE),
 *           version 1 (u32 LE), 0 (u32)
 *
 * The guest finds the footer, takes the two files and gives the bytes
 * before them to the site archive reader, so the archive's format does
 * not change.  The module's bytes are untrusted: every length is checked
 * against what is there.  Freestanding (vm.c writes it, uk_main.c reads). */
#ifndef APPS_TLS_BUNDLE_H
#define APPS_TLS_BUNDLE_H

#include "../base/sk.h"

#define TLS_BUNDLE_FOOTER 24u
#define TLS_BUNDLE_MAX_FILE (256u << 10) /* a PEM chain or key larger is refused */

static inline uint32_t tls_bundle_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void tls_bundle_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* The footer for files of these lengths. */
static inline void tls_bundle_footer(uint8_t f[TLS_BUNDLE_FOOTER], uint32_t cert_len,
				     uint32_t key_len)
{
	static const char magic[8] = {'S', 'K', 'I', 'F', 'F', 'T', 'L', 'S'};
	for (unsigned i = 0; i < 8; i++)
		f[i] = (uint8_t)magic[i];
	tls_bundle_put32(f + 8, cert_len);
	tls_bundle_put32(f + 12, key_len);
	tls_bundle_put32(f + 16, 1);
	tls_bundle_put32(f + 20, 0);
}

/* Split a module: 1 with the files found (*rest_len: the bytes before
 * them), 0 if there is no footer (*rest_len = len), -1 if there is one
 * but its lengths do not fit the module. */
static inline int tls_bundle_split(const uint8_t *m, uint64_t len, uint64_t *rest_len,
				   const uint8_t **cert, uint32_t *cert_len, const uint8_t **key,
				   uint32_t *key_len)
{
	*rest_len = len;
	if (!m || len < TLS_BUNDLE_FOOTER)
		return 0;
	const uint8_t *f = m + len - TLS_BUNDLE_FOOTER;
	static const char magic[8] = {'S', 'K', 'I', 'F', 'F', 'T', 'L', 'S'};
	for (unsigned i = 0; i < 8; i++)
		if (f[i] != (uint8_t)magic[i])
			return 0;
	uint32_t cl = tls_bundle_le32(f + 8), kl = tls_bundle_le32(f + 12);
	if (tls_bundle_le32(f + 16) != 1 || cl == 0 || kl == 0 || cl > TLS_BUNDLE_MAX_FILE ||
	    kl > TLS_BUNDLE_MAX_FILE || (uint64_t)cl + kl > len - TLS_BUNDLE_FOOTER)
		return -1;
	*rest_len = len - TLS_BUNDLE_FOOTER - kl - cl;
	*cert = m + *rest_len;
	*cert_len = cl;
	*key = *cert + cl;
	*key_len = kl;
	return 1;
}

#endif
