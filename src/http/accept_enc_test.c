/* accept_enc_test.c — Accept-Encoding weights and the choice of a sibling:
 * q-values at their edges, q=0 refusing, "*", bad elements skipped, and
 * every cut of a field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/accept_enc.h"

static struct http_accept_enc ae;

static void parse(const char *v)
{
	http_accept_enc_parse((const uint8_t *)v, strlen(v), &ae);
}

static enum http_coding pick(const char *v, bool gz, bool br)
{
	parse(v);
	return http_accept_enc_choose(&ae, gz, br);
}

static void test_weights(void **st)
{
	(void)st;
	parse("gzip");
	assert_int_equal(ae.q_gzip, 1000);
	assert_int_equal(ae.q_br, -1);
	parse("gzip;q=0.5, br;q=0.25, identity;q=0, *;q=0.001");
	assert_int_equal(ae.q_gzip, 500);
	assert_int_equal(ae.q_br, 250);
	assert_int_equal(ae.q_identity, 0);
	assert_int_equal(ae.q_star, 1);
	parse("GZIP ; Q=0.5");
	assert_int_equal(ae.q_gzip, 500);
	parse("x-gzip;q=1.000");
	assert_int_equal(ae.q_gzip, 1000);
	parse("gzip;q=0.");
	assert_int_equal(ae.q_gzip, 0);
	/* Bad weights: the element is skipped, the rest still counts. */
	parse("gzip;q=1.5, br");
	assert_int_equal(ae.q_gzip, -1);
	assert_int_equal(ae.q_br, 1000);
	parse("gzip;q=1.001");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzip;q=0.0001");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzip;q=2");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzip;q=-1");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzip;q=");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzip;level=9");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzip x");
	assert_int_equal(ae.q_gzip, -1);
	parse("gzipx, br");
	assert_int_equal(ae.q_gzip, -1);
	/* Named twice: the higher. */
	parse("gzip;q=0, gzip;q=0.3");
	assert_int_equal(ae.q_gzip, 300);
	parse("");
	assert_true(ae.q_gzip == -1 && ae.q_br == -1 && ae.q_star == -1);
	parse(",,, ,");
	assert_true(ae.q_gzip == -1 && ae.q_star == -1);
}

static void test_choose(void **st)
{
	(void)st;
	assert_int_equal(pick("gzip", true, false), HTTP_CODING_GZIP);
	assert_int_equal(pick("gzip", false, true), HTTP_CODING_IDENTITY);
	assert_int_equal(pick("gzip, br", true, true), HTTP_CODING_BR);     /* tie: br */
	assert_int_equal(pick("gzip, br;q=0.9", true, true), HTTP_CODING_GZIP);
	assert_int_equal(pick("br", true, true), HTTP_CODING_BR);
	assert_int_equal(pick("gzip;q=0", true, false), HTTP_CODING_IDENTITY); /* q=0 refuses */
	assert_int_equal(pick("gzip;q=0.001", true, false), HTTP_CODING_GZIP);
	assert_int_equal(pick("*", true, false), HTTP_CODING_GZIP);
	assert_int_equal(pick("*;q=0", true, true), HTTP_CODING_IDENTITY);
	assert_int_equal(pick("gzip;q=0, *", true, true), HTTP_CODING_BR);
	assert_int_equal(pick("identity", true, true), HTTP_CODING_IDENTITY);
	assert_int_equal(pick("deflate, compress", true, true), HTTP_CODING_IDENTITY);
	assert_int_equal(pick("", true, true), HTTP_CODING_IDENTITY);
	/* identity refused and nothing else acceptable: identity all the same. */
	assert_int_equal(pick("identity;q=0", true, false), HTTP_CODING_IDENTITY);
	assert_int_equal(pick("gzip", false, false), HTTP_CODING_IDENTITY);
}

static void test_cuts(void **st)
{
	(void)st;
	const char *v = "deflate;q=0.9, gzip ; q=0.500 ,br;q=0";
	size_t n = strlen(v);
	for (size_t cut = 0; cut <= n; cut++) {
		uint8_t *b = test_malloc(cut ? cut : 1);
		memcpy(b, v, cut);
		http_accept_enc_parse(b, cut, &ae);
		assert_true(ae.q_gzip >= -1 && ae.q_gzip <= 1000);
		assert_true(ae.q_br == -1 || ae.q_br == 0 || ae.q_br == 1000); /* "...,br" is whole */
		test_free(b);
	}
	parse(v);
	assert_int_equal(ae.q_gzip, 500);
	assert_int_equal(ae.q_br, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_cuts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
