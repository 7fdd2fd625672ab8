/* test_apikey.c - the service's keys (state/apikey.c): generation,
 * hashing, constant-time matching and names (docs/api.md#keys). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "state/apikey.h"

/* A new key is "sc_" and 43 base64url characters; two differ. */
static void
test_generate(void **state)
{
	char a[APIKEY_LEN + 1], b[APIKEY_LEN + 1];
	struct sc_err err = {0};
	size_t i;

	assert_int_equal(apikey_generate(a, sizeof(a), &err), 0);
	assert_int_equal(apikey_generate(b, sizeof(b), &err), 0);
	assert_int_equal(strlen(a), APIKEY_LEN);
	assert_memory_equal(a, "sc_", 3);
	for (i = 3; i < APIKEY_LEN; i++)
		assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
				       "nopqrstuvwxyz0123456789-_",
		    a[i]));
	assert_string_not_equal(a, b);
	/* a buffer that cannot hold one is a bug of the caller's */
	assert_int_equal(apikey_generate(a, APIKEY_LEN, &err), SC_ESOFTWARE);
}

/* The hash is SHA-256 in lowercase hex (the test vector of "abc"). */
static void
test_hash(void **state)
{
	char h[65];

	assert_int_equal(apikey_hash(h, "abc", NULL), 0);
	assert_string_equal(h,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* The stored hash matches its key and nothing else: another key, a
 * prefix, a longer string, the hash itself, an empty or overlong key. */
static void
test_match(void **state)
{
	struct key_row rows[3];
	char key[APIKEY_LEN + 1], other[APIKEY_LEN + 1], longer[300];
	struct sc_err err = {0};

	memset(rows, 0, sizeof(rows));
	assert_int_equal(apikey_generate(key, sizeof(key), &err), 0);
	assert_int_equal(apikey_generate(other, sizeof(other), &err), 0);
	assert_int_equal(apikey_hash(rows[0].sha256, "sc_first", &err), 0);
	assert_int_equal(apikey_hash(rows[1].sha256, key, &err), 0);
	assert_int_equal(apikey_hash(rows[2].sha256, "sc_third", &err), 0);
	assert_int_equal(apikey_match(rows, 3, key), 1);
	assert_int_equal(apikey_match(rows, 3, "sc_third"), 2);
	assert_int_equal(apikey_match(rows, 3, other), -1);
	assert_int_equal(apikey_match(rows, 3, rows[1].sha256), -1);
	key[APIKEY_LEN - 1] = '\0';
	assert_int_equal(apikey_match(rows, 3, key), -1);
	assert_int_equal(apikey_match(rows, 3, ""), -1);
	assert_int_equal(apikey_match(rows, 3, NULL), -1);
	assert_int_equal(apikey_match(rows, 0, "sc_first"), -1);
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(apikey_hash(rows[0].sha256, longer, &err), 0);
	assert_int_equal(apikey_match(rows, 1, longer), -1); /* overlong */
}

static void
test_names(void **state)
{
	struct sc_err err = {0};
	char big[80];

	assert_int_equal(apikey_name_check("ci", &err), 0);
	assert_int_equal(apikey_name_check("dash-board_1.x", &err), 0);
	assert_int_equal(apikey_name_check("", &err), SC_EUSAGE);
	assert_int_equal(apikey_name_check("../x", &err), SC_EUSAGE);
	assert_int_equal(apikey_name_check(".hidden", &err), SC_EUSAGE);
	assert_int_equal(apikey_name_check("a b", &err), SC_EUSAGE);
	assert_int_equal(apikey_name_check("a/b", &err), SC_EUSAGE);
	assert_non_null(strstr(err.msg, "key name 'a/b'"));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(apikey_name_check(big, &err), SC_EUSAGE);
	big[64] = '\0';
	assert_int_equal(apikey_name_check(big, &err), SC_EUSAGE);
	big[63] = '\0';
	assert_int_equal(apikey_name_check(big, &err), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_generate),
	    cmocka_unit_test(test_hash),
	    cmocka_unit_test(test_match),
	    cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
