/* test_recovery.c - how start-up closes an attempt a dead controller
 * left running (strategies/recovery.c, docs/reliability.md
 * #controller-deaths): a table of deaths and what each becomes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "strategies/recovery.h"

struct row {
	const char *name;
	struct recovery_in in;
	enum outcome outcome;
	enum error_code code;
	const char *const says[4]; /* substrings of the message */
};

static const struct row rows[] = {
    {"first death: interrupted, not a crash", {3, 4242, false, "", 0, 0},
	OUTCOME_INTERRUPTED, ERRC_INTERRUPTED,
	{"controller (pid 4242) died", "not counted", "runs again", NULL}},
    {"first death, pid never known", {1, 0, false, NULL, 0, 0},
	OUTCOME_INTERRUPTED, ERRC_INTERRUPTED,
	{"pid unknown", NULL, NULL, NULL}},
    {"a stop on a full disk: interrupted, with the error",
	{2, 77, true, "state.db: database or disk is full", 0, 0},
	OUTCOME_INTERRUPTED, ERRC_INTERRUPTED,
	{"(pid 77) stopped on an error during this attempt and could not "
	 "record its end: state.db: database or disk is full",
	    "not counted", NULL, NULL}},
    {"second death of the same number: a counted crash naming both",
	{4, 900, false, "", 1, 800}, OUTCOME_CRASH, ERRC_CRASH,
	{"attempt 4 for the second time", "pid 800 then pid 900",
	    "counted as a crash", NULL}},
    {"second death, the second a stop on an error",
	{4, 901, true, "disk is full", 1, 800}, OUTCOME_CRASH, ERRC_CRASH,
	{"pid 800 then pid 901", "stopped on an error: disk is full", NULL,
	    NULL}},
    {"a third (after an older version's rows) is a crash too",
	{1, 5, false, "", 2, 4}, OUTCOME_CRASH, ERRC_CRASH,
	{"second time", NULL, NULL, NULL}},
};

static void
test_table(void **state)
{
	struct recovery_out out;
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		recovery_close(&out, &r->in);
		if (out.outcome != r->outcome || out.code != r->code)
			fail_msg("%s: outcome %d code %d", r->name,
			    (int)out.outcome, (int)out.code);
		for (k = 0; k < 4 && r->says[k] != NULL; k++)
			if (strstr(out.message, r->says[k]) == NULL)
				fail_msg("%s: \"%s\" not in \"%s\"", r->name,
				    r->says[k], out.message);
	}
}

/* A why as long as any keeps the message bounded and terminated. */
static void
test_long_why_bounded(void **state)
{
	struct recovery_in in = {1, 1, true, NULL, 1, 2};
	struct recovery_out out;
	char why[2000];

	(void)state;
	memset(why, 'x', sizeof(why) - 1);
	why[sizeof(why) - 1] = '\0';
	in.stop_why = why;
	recovery_close(&out, &in);
	assert_true(strlen(out.message) < sizeof(out.message));
	in.earlier_deaths = 0;
	recovery_close(&out, &in);
	assert_true(strlen(out.message) < sizeof(out.message));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_long_why_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
