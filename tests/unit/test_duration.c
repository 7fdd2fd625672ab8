/* test_duration.c - duration_parse(): a duration typed on the command
 * line (strategies/duration.c, docs/commands.md#log), as a table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/duration.h"

struct dcase {
	const char *text;
	int ok;
	int64_t ms;
};

static const struct dcase cases[] = {
    {"30m", 1, 30 * 60000},
    {"2h", 1, 2 * 3600000},
    {"1h30m", 1, 90 * 60000},
    {"90s", 1, 90000},
    {"250ms", 1, 250},
    {"1m500ms", 1, 60500},
    {"2d", 1, 2 * 86400000LL},
    {"0s", 1, 0},
    {"", 0, 0},
    {"30", 0, 0},
    {"m", 0, 0},
    {"-5m", 0, 0},
    {"+5m", 0, 0},
    {"1.5h", 0, 0},
    {"5 m", 0, 0},
    {"5x", 0, 0},
    {"5min", 0, 0},
    {"2026-11-24T21:00:00Z", 0, 0},
    {"99999999999999999999s", 0, 0},
    {"40000d", 0, 0},
};

static void
test_duration_parse_table(void **state)
{
	size_t i;
	int64_t ms;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ms = -1;
		rc = duration_parse(&ms, cases[i].text);
		if (rc != (cases[i].ok ? 0 : -1) || ms != cases[i].ms)
			fail_msg("'%s': rc %d ms %lld", cases[i].text, rc,
			    (long long)ms);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_duration_parse_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
