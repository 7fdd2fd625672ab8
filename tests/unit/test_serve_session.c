/* test_serve_session.c - the dashboard's sessions (controller/serve/serve_session.c)
 * with a made-up clock: ids, lookup, expiry, eviction, the end of a
 * session; and the sign-in form's body (controller/serve/serve_page.c)
 * (docs/api.md#the-dashboard). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "controller/serve/serve_page.h"
#include "controller/serve/serve_session.h"

static const struct serve_session_key KEY = {
    "dash", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"};

/* An id is 64 lowercase hex digits, two differ, and each finds its key;
 * an id one digit off, cut short or longer finds nothing. */
static void
test_ids(void **state)
{
	struct serve_sessions *t = NULL;
	struct serve_session_key k;
	struct sc_err err = {0};
	char a[SERVE_SESSION_ID_LEN + 1], b[SERVE_SESSION_ID_LEN + 1],
	    x[SERVE_SESSION_ID_LEN + 2];
	size_t i;

	assert_int_equal(serve_sessions_new(&t, &err), 0);
	assert_int_equal(serve_session_add(t, a, &KEY, 1000, &err), 0);
	assert_int_equal(serve_session_add(t, b, &KEY, 1000, &err), 0);
	assert_int_equal(strlen(a), SERVE_SESSION_ID_LEN);
	for (i = 0; i < SERVE_SESSION_ID_LEN; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	assert_string_not_equal(a, b);
	assert_int_equal(serve_session_count(t), 2);
	memset(&k, 0, sizeof(k));
	assert_int_equal(serve_session_find(t, &k, a, 1001), 0);
	assert_string_equal(k.name, "dash");
	assert_string_equal(k.sha256, KEY.sha256);
	/* the key's hash is not the id */
	assert_string_not_equal(a, KEY.sha256);
	snprintf(x, sizeof(x), "%s", a);
	x[10] = x[10] == '0' ? '1' : '0';
	assert_int_equal(serve_session_find(t, &k, x, 1001), -1);
	snprintf(x, sizeof(x), "%.63s", a);
	assert_int_equal(serve_session_find(t, &k, x, 1001), -1);
	snprintf(x, sizeof(x), "%s0", a);
	assert_int_equal(serve_session_find(t, &k, x, 1001), -1);
	assert_int_equal(serve_session_find(t, &k, "", 1001), -1);
	assert_int_equal(serve_session_find(t, &k, NULL, 1001), -1);
	serve_sessions_free(t);
}

/* A session lives SERVE_SESSION_TTL_S from its sign-in: a second before
 * its end it is found, at its end it is refused and dropped. */
static void
test_expiry(void **state)
{
	struct serve_sessions *t = NULL;
	struct serve_session_key k;
	struct sc_err err = {0};
	char a[SERVE_SESSION_ID_LEN + 1], b[SERVE_SESSION_ID_LEN + 1];

	assert_int_equal(serve_sessions_new(&t, &err), 0);
	assert_int_equal(SERVE_SESSION_TTL_S, 12 * 3600);
	assert_int_equal(serve_session_add(t, a, &KEY, 5000, &err), 0);
	assert_int_equal(serve_session_add(t, b, &KEY, 6000, &err), 0);
	assert_int_equal(
	    serve_session_find(t, &k, a, 5000 + SERVE_SESSION_TTL_S - 1), 0);
	assert_int_equal(
	    serve_session_find(t, &k, a, 5000 + SERVE_SESSION_TTL_S), -1);
	assert_int_equal(serve_session_count(t), 1);
	/* and it stays gone, even if the clock went back */
	assert_int_equal(serve_session_find(t, &k, a, 5000), -1);
	/* an expired session is dropped when another signs in */
	assert_int_equal(
	    serve_session_add(t, a, &KEY, 6000 + SERVE_SESSION_TTL_S + 1, &err),
	    0);
	assert_int_equal(serve_session_count(t), 1);
	assert_int_equal(serve_session_find(t, &k, b, 6000), -1);
	serve_sessions_free(t);
}

/* A full table loses its oldest session, and only that one. */
static void
test_evict(void **state)
{
	struct serve_sessions *t = NULL;
	struct serve_session_key k;
	struct sc_err err = {0};
	char first[SERVE_SESSION_ID_LEN + 1], second[SERVE_SESSION_ID_LEN + 1],
	    id[SERVE_SESSION_ID_LEN + 1];
	int i;

	assert_int_equal(serve_sessions_new(&t, &err), 0);
	assert_int_equal(serve_session_add(t, first, &KEY, 100, &err), 0);
	assert_int_equal(serve_session_add(t, second, &KEY, 101, &err), 0);
	for (i = 2; i < SERVE_SESSION_MAX; i++)
		assert_int_equal(
		    serve_session_add(t, id, &KEY, 100 + i, &err), 0);
	assert_int_equal(serve_session_count(t), SERVE_SESSION_MAX);
	assert_int_equal(serve_session_find(t, &k, first, 500), 0);
	assert_int_equal(serve_session_add(t, id, &KEY, 600, &err), 0);
	assert_int_equal(serve_session_count(t), SERVE_SESSION_MAX);
	assert_int_equal(serve_session_find(t, &k, first, 601), -1);
	assert_int_equal(serve_session_find(t, &k, second, 601), 0);
	assert_int_equal(serve_session_find(t, &k, id, 601), 0);
	serve_sessions_free(t);
}

/* A session whose key was revoked is dropped by the server: gone. */
static void
test_drop(void **state)
{
	struct serve_sessions *t = NULL;
	struct serve_session_key k;
	struct sc_err err = {0};
	char a[SERVE_SESSION_ID_LEN + 1], b[SERVE_SESSION_ID_LEN + 1];

	assert_int_equal(serve_sessions_new(&t, &err), 0);
	assert_int_equal(serve_session_add(t, a, &KEY, 10, &err), 0);
	assert_int_equal(serve_session_add(t, b, &KEY, 10, &err), 0);
	serve_session_drop(t, a);
	serve_session_drop(t, "not a session");
	assert_int_equal(serve_session_find(t, &k, a, 11), -1);
	assert_int_equal(serve_session_find(t, &k, b, 11), 0);
	assert_int_equal(serve_session_count(t), 1);
	serve_sessions_free(t);
	serve_sessions_free(NULL);
}

/* The form's body: "key" among other fields, + and %HH decoded; none,
 * empty, a NUL or too long is -1 with nothing kept. */
static void
test_form_key(void **state)
{
	char out[16], big[64];

#define FORM(s) serve_page_form_key(out, sizeof(out), (s), strlen(s))
	assert_int_equal(FORM("key=sc_abc-_1"), 0);
	assert_string_equal(out, "sc_abc-_1");
	assert_int_equal(FORM("a=1&key=sc%5Fx+y&b=2"), 0);
	assert_string_equal(out, "sc_x y");
	assert_int_equal(FORM("keyx=1&key=k"), 0);
	assert_string_equal(out, "k");
	assert_int_equal(FORM("key=%zz"), 0);
	assert_string_equal(out, "%zz");
	assert_int_equal(FORM("key="), -1);
	assert_int_equal(FORM("akey=1"), -1);
	assert_int_equal(FORM(""), -1);
	assert_int_equal(FORM("key=a%00b"), -1);
	assert_string_equal(out, "");
	assert_int_equal(FORM("key=0123456789abcdef"), -1);
	assert_string_equal(out, "");
	assert_int_equal(FORM("key=0123456789abcde"), 0);
#undef FORM
	/* the length given bounds the read: no NUL needed */
	memset(big, 'k', sizeof(big));
	memcpy(big, "key=ab", 6);
	assert_int_equal(serve_page_form_key(out, sizeof(out), big, 6), 0);
	assert_string_equal(out, "ab");
	assert_int_equal(serve_page_form_key(out, sizeof(out), NULL, 0), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),
	    cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_evict),
	    cmocka_unit_test(test_drop),
	    cmocka_unit_test(test_form_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
