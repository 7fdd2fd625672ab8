/* test_suggest.c - suggest_closest(): the "did you mean" of unknown
 * story ids (strategies/suggest.c), as a table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/suggest.h"

struct scase {
	const char *word;
	const char *want; /* NULL: no suggestion */
};

static const char *const ids[] = {"1.1", "1.2", "2.10", "1-1-user-auth",
    "1-2-login-form", "auth", "Setup", NULL};

static const struct scase cases[] = {
    /* the file name, with or without its directory, .md or .story */
    {"1.1.story", "1.1"},
    {"1.1.story.md", "1.1"},
    {"docs/stories/2.10.story.md", "2.10"},
    {"1-1-user-auth.md", "1-1-user-auth"},
    /* any case */
    {"setup", "Setup"},
    {"AUTH", "auth"},
    /* a prefix at a separator, either way round */
    {"1-1", "1-1-user-auth"},
    {"1-2-login-form-v2", "1-2-login-form"},
    /* several prefix matches: the nearest by distance, if any */
    {"1", NULL},
    /* a typo */
    {"1-1-user-aut", "1-1-user-auth"},
    {"1-2-logn-form", "1-2-login-form"},
    {"2.100", "2.10"},
    {"1.3", "1.1"},
    /* too far */
    {"zzzz", NULL},
    {"deploy-pipeline", NULL},
    {"", NULL},
    {".md", NULL},
};

static void
test_table(void **state)
{
	size_t i, n = 0;
	int got;

	while (ids[n] != NULL)
		n++;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		got = suggest_closest(cases[i].word, ids, n);
		if (cases[i].want == NULL && got >= 0)
			fail_msg(
			    "%s: got %s, want none", cases[i].word, ids[got]);
		if (cases[i].want != NULL &&
		    (got < 0 || strcmp(ids[got], cases[i].want) != 0))
			fail_msg("%s: got %s, want %s", cases[i].word,
			    got >= 0 ? ids[got] : "none", cases[i].want);
	}
}

static void
test_edges(void **state)
{
	char longw[300];

	assert_int_equal(suggest_closest(NULL, ids, 3), -1);
	assert_int_equal(suggest_closest("1.1", ids, 0), -1);
	/* a word longer than any id is not compared, and does not crash */
	memset(longw, 'a', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = '\0';
	assert_int_equal(suggest_closest(longw, ids, 7), -1);
	assert_int_equal(suggest_distance("kitten", "sitting"), 3);
	assert_int_equal(suggest_distance("", "abc"), 3);
	assert_int_equal(suggest_distance(longw, "a"), SIZE_MAX);
}

int
main(void)
{
	static const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
