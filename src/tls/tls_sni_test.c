/* tls_sni_test.c — the choice of a certificate by name (tls_sni_pick) and
 * the server_name extension's body read as OpenSSL reads it
 * (tls_sni_from_ext, RFC 6066 3): one host_name entry filling the list,
 * anything else refused; and the text a session is bound to
 * (tls_sni_bind_text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tls_sni.h"

static void test_pick(void **state)
{
	(void)state;
	static char a[] = "a.test", w[] = "*.b.test";
	char *const names[] = {a, w};
	assert_int_equal(tls_sni_pick(names, 2, "a.test"), 0);
	assert_int_equal(tls_sni_pick(names, 2, "A.TEST"), 0);
	assert_int_equal(tls_sni_pick(names, 2, "x.b.test"), 1);
	assert_int_equal(tls_sni_pick(names, 2, "b.test"), -1);
	assert_int_equal(tls_sni_pick(names, 2, "y.x.b.test"), -1);
	assert_int_equal(tls_sni_pick(names, 2, ""), -1);
}

static void test_from_ext(void **state)
{
	(void)state;
	const uint8_t *name = NULL;
	static const uint8_t one[] = {0, 9, 0, 0, 6, 'a', '.', 't', 'e', 's', 't'};
	assert_int_equal(tls_sni_from_ext(one, sizeof(one), &name), 6);
	assert_memory_equal(name, "a.test", 6);
	/* the list's length wrong, short or long */
	static const uint8_t len_short[] = {0, 8, 0, 0, 6, 'a', '.', 't', 'e', 's', 't'};
	static const uint8_t len_long[] = {0, 10, 0, 0, 6, 'a', '.', 't', 'e', 's', 't'};
	/* the name's length past the list, or short of it (a second entry) */
	static const uint8_t name_long[] = {0, 9, 0, 0, 7, 'a', '.', 't', 'e', 's', 't'};
	static const uint8_t two[] = {0, 12, 0, 0, 1, 'a', 0, 0, 4, 'b', '.', 'c', 'd'};
	/* another name_type; an empty name; nothing */
	static const uint8_t type1[] = {0, 5, 1, 0, 2, 'a', 'b'};
	static const uint8_t empty[] = {0, 3, 0, 0, 0};
	static const uint8_t *bad[] = {len_short, len_long, name_long, two, type1, empty, one};
	static const size_t badn[] = {sizeof(len_short), sizeof(len_long), sizeof(name_long),
				      sizeof(two), sizeof(type1), sizeof(empty), 1};
	for (unsigned i = 0; i < sizeof(badn) / sizeof(badn[0]); i++)
		assert_int_equal(tls_sni_from_ext(bad[i], badn[i], &name), -1);
	assert_int_equal(tls_sni_from_ext(one, 0, &name), -1);
}

/* The text a session is bound to: the tag and the name in lower case; no
 * name nothing; a name that is none (unread, or over 255 bytes) the tag
 * and a NUL, which no name gives; the longest name whole. */
static void test_bind_text(void **state)
{
	(void)state;
	char out[TLS_SNI_BIND_MAX];
	assert_int_equal(tls_sni_bind_text(out, "A.Test", 6), 16);
	assert_memory_equal(out, "skiff sni a.test", 16);
	/* only A-Z change: digits, '-', '.', bytes over 127 stay */
	static const char odd[] = {'Z', '-', '9', (char)0xC4, '.', '_'};
	static const char odd_low[] = {'z', '-', '9', (char)0xC4, '.', '_'};
	assert_int_equal(tls_sni_bind_text(out, odd, 6), 16);
	assert_memory_equal(out + 10, odd_low, 6);
	assert_int_equal(tls_sni_bind_text(out, "x", 0), 0);
	static const char none[] = "skiff sni ";
	assert_int_equal(tls_sni_bind_text(out, "x", -1), 11);
	assert_memory_equal(out, none, 11); /* with its NUL */
	char name[TLS_SNI_NAME_MAX + 1];
	memset(name, 'Q', sizeof(name));
	assert_int_equal(tls_sni_bind_text(out, name, TLS_SNI_NAME_MAX + 1), 11);
	assert_memory_equal(out, none, 11);
	assert_int_equal(tls_sni_bind_text(out, name, TLS_SNI_NAME_MAX), sizeof(out));
	for (size_t i = 10; i < sizeof(out); i++)
		assert_int_equal(out[i], 'q');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_from_ext),
		cmocka_unit_test(test_bind_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
