/* fuzz_tls_sni.c — the body of a ClientHello's server_name extension
 * (tls/tls_sni.h's tls_sni_from_ext, which the OpenSSL engine reads to
 * bind sessions to the name before OpenSSL does) on arbitrary bytes, and
 * the name it yields through tls_sni_pick and tls_sni_bind_text.  Checks:
 * a name is inside the input, non-empty, and exactly what the one entry
 * says; the pick is a valid index or -1; the bound text is the tag and the
 * name in lower case (or the tag and a NUL).  Build: make build/fuzz/fuzz_tls_sni. */
#include <stdint.h>
#include <string.h>

#include "tls/tls_sni.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *name = NULL;
	long n = tls_sni_from_ext(data, size, &name);
	CHECK(n == -1 || n > 0);
	if (n < 0)
		return 0;
	CHECK(name == data + 5 && (size_t)n == size - 5);
	CHECK(data[2] == 0 && (size_t)(data[3] << 8 | data[4]) == (size_t)n);
	static char buf[1 << 16];
	memcpy(buf, name, (size_t)n);
	buf[n] = 0;
	static char a[] = "a.test", w[] = "*.b.test";
	char *const names[] = {a, w};
	int i = tls_sni_pick(names, 2, buf);
	CHECK(i >= -1 && i < 2);
	/* the text the session is bound to: within its buffer, the tag and
	 * the name in lower case, or the tag and a NUL past 255 bytes */
	char text[TLS_SNI_BIND_MAX];
	size_t t = tls_sni_bind_text(text, name, n);
	CHECK(memcmp(text, TLS_SNI_TAG, TLS_SNI_TAG_LEN) == 0);
	if (n > TLS_SNI_NAME_MAX) {
		CHECK(t == TLS_SNI_TAG_LEN + 1 && text[TLS_SNI_TAG_LEN] == 0);
		return 0;
	}
	CHECK(t == TLS_SNI_TAG_LEN + (size_t)n);
	for (long k = 0; k < n; k++) {
		char c = (char)name[k], l = text[TLS_SNI_TAG_LEN + (size_t)k];
		CHECK(c >= 'A' && c <= 'Z' ? l == c + 32 : l == c);
	}
	return 0;
}
