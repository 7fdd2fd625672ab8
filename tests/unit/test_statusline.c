/* test_statusline.c - the live status line's text
 * (docs/commands.md#the-live-status-line): it never reaches the last
 * column at any width, for 1 and 3 slots, long BMAD-style ids and UTF-8
 * ids; the richest form that fits is chosen; "+k more". */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "strategies/statusline.h"

static struct statusline_slot
running(const char *id, int attempt, int done, int total)
{
	struct statusline_slot s = {0};

	s.id = id;
	s.attempt = attempt;
	s.max_attempts = 5;
	s.role = "primary";
	s.agent = "claude";
	s.tasks_completed = done;
	s.tasks_total = total;
	s.ms = 80000;
	return s;
}

static struct statusline_slot
waiting(const char *id, int attempt)
{
	struct statusline_slot s = {0};

	s.id = id;
	s.waiting = true;
	s.attempt = attempt;
	s.max_attempts = 5;
	s.ms = 20000;
	return s;
}

static void
build(char *line, struct statusline_slot *sl, size_t n, int width, bool bold)
{
	struct statusline_in in = {0};

	in.slots = sl;
	in.nslots = n;
	in.width = width;
	in.bold = bold;
	statusline_build(line, STATUSLINE_BUF, &in);
}

static void
test_never_reaches_the_last_column(void **state)
{
	static const int widths[] = {2, 5, 12, 20, 40, 60, 80, 120, 200};
	static const char *const ids[][3] = {
	    {"1.1", "1.2", "1.3"},
	    {"1.2.very-long-story-name", "2.10.another-rather-long-story-id",
		"3.1.a-third-story-whose-name-goes-on-and-on-and-on"},
	    {"1.1-caf\xc3\xa9-cr\xc3\xa8me-br\xc3\xbbl\xc3\xa9"
	     "e",
		"2.1-\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae"
		"\xe3\x82\xb9\xe3\x83\x88\xe3\x83\xbc\xe3\x83\xaa\xe3\x83\xbc"
		"\xe5\x90\x8d\xe5\x89\x8d",
		"3.1-\xf0\x9f\x9a\x80-rocket-\xf0\x9f\x9a\x80-launch"},
	    {"a\033[31mred\033[0m-\x07"
	     "bell",
		"tab\there", "\xff\xfe-bad"},
	};
	char line[STATUSLINE_BUF];
	struct statusline_slot sl[3];
	size_t w, n, k, j;
	int bold;

	for (w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
		for (k = 0; k < sizeof(ids) / sizeof(ids[0]); k++)
			for (n = 1; n <= 3; n += 2)
				for (bold = 0; bold <= 1; bold++) {
					for (j = 0; j < n; j++)
						sl[j] =
						    running(ids[k][j], 2, 3, 9);
					if (n == 3)
						sl[2] = waiting(ids[k][2], 3);
					build(line, sl, n, widths[w], bold);
					if (statusline_width(line) >=
					    (size_t)widths[w])
						fail_msg("width %d, %zu slots, "
							 "ids %zu: '%s' "
							 "is %zu columns",
						    widths[w], n, k, line,
						    statusline_width(line));
					/* no control byte but the SGR
					 * escapes it adds itself */
					for (j = 0; line[j] != '\0'; j++)
						if ((unsigned char)line[j] <
							0x20 &&
						    !(line[j] == 0x1b &&
							line[j + 1] == '['))
							fail_msg("control in "
								 "'%s'",
							    line);
				}
}

static void
test_forms(void **state)
{
	static const struct {
		int width;
		size_t n;
		const char *want;
	} rows[] = {
	    {120, 1,
		"[1 running] 1.1 attempt 2/5 primary (claude) 3/9 tasks "
		"1m20s"},
	    {40, 1, "[1 running] 1.1 a2/5 3/9 1m20s"},
	    {30, 1, "[1 running] 1.1 a2 3/9"},
	    {200, 3,
		"[2 running, 1 waiting] 1.1 attempt 2/5 primary (claude) 3/9 "
		"tasks 1m20s \xc2\xb7 1.2 attempt 2/5 primary (claude) 3/9 "
		"tasks 1m20s \xc2\xb7 1.3 next attempt 3 in 20s"},
	    {80, 3,
		"[2 running, 1 waiting] 1.1 a2/5 3/9 1m20s \xc2\xb7 1.2 a2/5 "
		"3/9 1m20s \xc2\xb7 1.3 a3 in 20s"},
	    {60, 3,
		"[2 running, 1 waiting] 1.1 a2 3/9 \xc2\xb7 1.2 a2 3/9 "
		"\xc2\xb7 +1 more"},
	    {50, 3, "[2 running, 1 waiting] 1.1 a2 3/9 \xc2\xb7 +2 more"},
	    {20, 3, "[2 running, 1 wait\xe2\x80\xa6"},
	};
	char line[STATUSLINE_BUF];
	struct statusline_slot sl[3];
	size_t i;

	sl[0] = running("1.1", 2, 3, 9);
	sl[1] = running("1.2", 2, 3, 9);
	sl[2] = waiting("1.3", 3);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		build(line, sl, rows[i].n, rows[i].width, false);
		assert_string_equal(line, rows[i].want);
	}
}

static void
test_long_ids_are_shortened_not_dropped(void **state)
{
	char line[STATUSLINE_BUF];
	struct statusline_slot sl[3];

	sl[0] = running("1.2.very-long-story-name", 2, 3, 9);
	sl[1] = running("1.3.another-very-long-story-name", 1, 0, 4);
	sl[2] = running("1.4.yet-another-story", 1, 0, 4);
	build(line, sl, 3, 80, false);
	assert_string_equal(line,
	    "[3 running] 1.2.very-lon\xe2\x80\xa6 a2 3/9 \xc2\xb7 "
	    "1.3.another-\xe2\x80\xa6 a1 0/4 \xc2\xb7 "
	    "1.4.yet-anot\xe2\x80\xa6 a1 0/4");
	assert_true(statusline_width(line) < 80);
	/* one slot at 40 columns keeps the id's head */
	build(line, sl, 1, 40, false);
	assert_non_null(strstr(line, "1.2.very"));
	assert_non_null(strstr(line, "a2 3/9"));
	assert_true(statusline_width(line) < 40);
}

static void
test_width_counts_columns(void **state)
{
	assert_int_equal(statusline_width(""), 0);
	assert_int_equal(statusline_width("abc"), 3);
	assert_int_equal(statusline_width("caf\xc3\xa9"), 4);
	assert_int_equal(statusline_width("\xe6\x97\xa5\xe6\x9c\xac"), 4);
	assert_int_equal(statusline_width("\xf0\x9f\x9a\x80"), 2);
	assert_int_equal(statusline_width("\033[1mid\033[0m"), 2);
	assert_int_equal(statusline_width("\xff"), 1);
}

static void
test_nothing_busy_is_an_empty_line(void **state)
{
	char line[STATUSLINE_BUF];
	struct statusline_in in = {0};

	in.width = 80;
	statusline_build(line, sizeof(line), &in);
	assert_string_equal(line, "");
	in.cooldown_ms = 20000;
	statusline_build(line, sizeof(line), &in);
	assert_string_equal(line, "[breaker cooldown 20s]");
	in.width = 1;
	statusline_build(line, sizeof(line), &in);
	assert_string_equal(line, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_never_reaches_the_last_column),
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_long_ids_are_shortened_not_dropped),
	    cmocka_unit_test(test_width_counts_columns),
	    cmocka_unit_test(test_nothing_busy_is_an_empty_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
