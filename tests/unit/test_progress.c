/* test_progress.c - progress_parse(): SPEC 2 task counting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/progress.h"

struct pcase {
	const char *name;
	const char *text;
	int total;
	int done;
	const char *stalled;
};

static const struct pcase cases[] = {
    {"empty", "", 0, 0, ""},
    {"no tasks", "# Story\n\nSome prose.\n- a list item\n", 0, 0, ""},
    {"basic", "- [ ] one\n- [x] two\n- [X] three\n", 3, 2, "one"},
    {"all done", "- [x] a\n- [X] b\n", 2, 2, ""},
    {"star and plus bullets", "* [x] a\n+ [ ] b\n* [ ] c\n", 3, 1, "b"},
    {"indented subtasks not counted",
	"- [x] a\n  - [ ] sub\n\t- [ ] tabsub\n    - [ ] deep\n- [ ] b\n", 2, 1,
	"b"},
    {"indented only", "  - [ ] a\n\t- [x] b\n", 0, 0, ""},
    {"numbered list is no task", "1. [ ] one\n2) [x] two\n- [ ] real\n", 1, 0,
	"real"},
    {"no space after bullet", "-[ ] a\n*[x] b\n- [ ] c\n", 1, 0, "c"},
    {"no space after box", "- [ ]a\n- [x]b\n", 0, 0, ""},
    {"empty task text", "- [x] a\n- [ ]\n- [ ] c\n", 3, 1, "task 2"},
    {"empty task text with blanks", "- [ ]   \n", 1, 0, "task 1"},
    {"other box content", "- [-] a\n- [o] b\n- [] c\n- [ x] d\n", 0, 0, ""},
    {"several blanks after bullet", "-   [ ] wide\n-\t[x] tab\n", 2, 1, "wide"},
    {"stalled text trimmed", "- [x] a\n- [ ]   spaced out \t \n", 2, 1,
	"spaced out"},
    {"crlf", "- [x] a\r\n- [ ] b\r\n- [ ] c\r\n", 3, 1, "b"},
    /* issue 11: a UTF-8 byte-order mark hides nothing */
    {"bom before a task", "\xEF\xBB\xBF- [ ] a\n- [x] b", 2, 1, "a"},
    {"bom before the tasks heading",
	"\xEF\xBB\xBF## Tasks\n- [ ] a\n## Notes\n- [x] b\n", 1, 0, "a"},
    {"bom and crlf", "\xEF\xBB\xBF- [x] a\r\n- [ ] b\r\n", 2, 1, "b"},
    {"bom in the middle is text", "- [ ] a\n\xEF\xBB\xBF- [x] b\n", 1, 0, "a"},
    {"crlf empty text", "- [ ]\r\n", 1, 0, "task 1"},
    {"no trailing newline", "- [x] a\n- [ ] last", 2, 1, "last"},
    {"no trailing newline checked", "- [ ] a\n- [X]", 2, 1, "a"},
    {"fenced code ignored",
	"- [ ] a\n```markdown\n- [ ] in code\n- [x] in code\n```\n- [x] "
	"b\n",
	2, 1, "a"},
    {"tilde fence ignored", "~~~\n- [ ] x\n~~~\n- [ ] y\n", 1, 0, "y"},
    {"fence closes only with same char",
	"```\n- [ ] x\n~~~\n- [ ] y\n```\n- [ ] z\n", 1, 0, "z"},
    {"longer fence needs longer close", "````\n```\n- [ ] x\n````\n- [ ] y\n",
	1, 0, "y"},
    {"unclosed fence hides the rest", "- [x] a\n```\n- [ ] b\n", 1, 1, ""},
    {"heading in fence is no scope",
	"```\n## Tasks\n```\n- [ ] a\n## Other\n- [ ] b\n", 2, 0, "a"},
    {"tasks heading scopes",
	"- [ ] before\n## Tasks / Subtasks\n- [x] t1\n- [ ] t2\n"
	"## Dev Notes\n- [ ] after\n",
	2, 1, "t2"},
    {"tasks heading upper case h1",
	"- [ ] before\n# TASKS\n- [ ] t1\n# Notes\n- [ ] after\n", 1, 0, "t1"},
    {"tasks heading h3 lower case",
	"## Story\n- [ ] x\n### tasks\n- [x] t1\n#### Detail\n- [ ] t2\n"
	"### Notes\n- [ ] y\n",
	2, 1, "t2"},
    {"deeper headings stay in scope",
	"## Tasks\n### Task 1\n- [x] a\n### Task 2\n- [ ] b\n## End\n"
	"- [ ] c\n",
	2, 1, "b"},
    {"higher heading ends scope", "### Tasks\n- [x] a\n# Top\n- [ ] b\n", 1, 1,
	""},
    {"first tasks heading only",
	"## Tasks\n- [x] a\n## Notes\n## More tasks\n- [ ] b\n", 1, 1, ""},
    {"tasks heading with no tasks", "- [ ] a\n## Tasks\nnone yet\n", 0, 0, ""},
    {"tasks heading closing hashes", "## Tasks ##\n- [ ] a\n", 1, 0, "a"},
    {"hashtag is no heading", "#tasks\n- [ ] a\n## Other\n- [ ] b\n", 2, 0,
	"a"},
    {"seven hashes is no heading",
	"####### Tasks\n- [ ] a\n## Other\n- [x] b\n", 2, 1, "a"},
    {"heading indented up to three",
	"   ## Tasks\n- [ ] a\n## X\n- [ ] "
	"b\n",
	1, 0, "a"},
    {"subtasks heading counts as tasks heading",
	"- [ ] x\n## Subtasks\n- [ ] a\n", 1, 0, "a"},
    {"control chars in stalled",
	"- [ ] a\x01"
	"b\x7f"
	"c\n",
	1, 0, "a b c"},
    {"invalid utf8 replaced",
	"- [ ] a\xff\xfe"
	"b\xc3\n",
	1, 0, "a??b?"},
    {"overlong and surrogate rejected", "- [ ] \xc0\xaf\xed\xa0\x80x\n", 1, 0,
	"?????x"},
    {"valid utf8 kept", "- [ ] caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80\n", 1,
	0, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80"},
    {"blockquote task not counted", "> - [ ] quoted\n- [ ] real\n", 1, 0,
	"real"},
};

/* One cmocka test per table row, so a failure names its case. */
static void
test_case(void **state)
{
	const struct pcase *c = *state;
	struct progress p;

	progress_parse(&p, c->text, strlen(c->text));
	assert_int_equal(p.tasks_total, c->total);
	assert_int_equal(p.tasks_completed, c->done);
	assert_string_equal(p.stalled_task, c->stalled);
}

static void
test_null_and_zero_length(void **state)
{
	struct progress p;

	memset(&p, 0x55, sizeof(p));
	progress_parse(&p, NULL, 0);
	assert_int_equal(p.tasks_total, 0);
	assert_int_equal(p.tasks_completed, 0);
	assert_string_equal(p.stalled_task, "");

	/* len bounds the text even when more bytes follow */
	progress_parse(&p, "- [ ] a\n- [ ] b\n", 8);
	assert_int_equal(p.tasks_total, 1);
	assert_string_equal(p.stalled_task, "a");
}

static void
test_nul_bytes(void **state)
{
	static const char text[] = "- [x] a\n- [ ] b\0c\n\0\0- [ ] d\n- [x] e";
	struct progress p;

	progress_parse(&p, text, sizeof(text) - 1);
	/* the line starting with NULs is no task */
	assert_int_equal(p.tasks_total, 3);
	assert_int_equal(p.tasks_completed, 2);
	assert_string_equal(p.stalled_task, "b c");
}

static void
test_binary_garbage(void **state)
{
	unsigned char buf[4096];
	struct progress p;
	uint32_t x = 12345;
	size_t i;

	/* deterministic pseudo-random bytes with some newlines and boxes */
	for (i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	memcpy(buf + 100, "\n- [ ] \xff\xff\n", 11);
	progress_parse(&p, (const char *)buf, sizeof(buf));
	assert_true(p.tasks_total >= 1);
	assert_true(p.tasks_completed <= p.tasks_total);
	assert_true(strlen(p.stalled_task) < PROGRESS_TASK_MAX);
}

static void
test_truncation_at_utf8_boundary(void **state)
{
	char text[2 * PROGRESS_TASK_MAX + 16];
	struct progress p;
	size_t i, n, len;

	/* "- [ ] " then many 3-byte characters: the cut must not split one */
	memcpy(text, "- [ ] x", 7);
	n = 7;
	for (i = 0; i < PROGRESS_TASK_MAX / 3 + 5; i++) {
		memcpy(text + n, "\xe2\x82\xac", 3);
		n += 3;
	}
	text[n] = '\0';
	progress_parse(&p, text, n);
	assert_int_equal(p.tasks_total, 1);
	len = strlen(p.stalled_task);
	assert_true(len <= PROGRESS_TASK_MAX - 1);
	assert_true(len > PROGRESS_TASK_MAX - 5);
	/* 1 byte "x" then whole 3-byte characters */
	assert_int_equal((len - 1) % 3, 0);
	assert_memory_equal(p.stalled_task + len - 3, "\xe2\x82\xac", 3);
}

static void
test_long_ascii_truncated(void **state)
{
	char text[1024];
	struct progress p;

	memset(text, 'a', sizeof(text));
	memcpy(text, "- [ ] ", 6);
	progress_parse(&p, text, sizeof(text));
	assert_int_equal(p.tasks_total, 1);
	assert_int_equal(strlen(p.stalled_task), PROGRESS_TASK_MAX - 1);
}

static void
test_big_counts(void **state)
{
	static const char item[] = "- [x] done\n";
	char text[sizeof(item) * 1000 + 16];
	struct progress p;
	size_t i, n = 0;

	for (i = 0; i < 1000; i++) {
		memcpy(text + n, item, sizeof(item) - 1);
		n += sizeof(item) - 1;
	}
	memcpy(text + n, "- [ ] open", 10);
	n += 10;
	progress_parse(&p, text, n);
	assert_int_equal(p.tasks_total, 1001);
	assert_int_equal(p.tasks_completed, 1000);
	assert_string_equal(p.stalled_task, "open");
}

static void
test_story_file_shape(void **state)
{
	/* the shape of a BMAD-style story file */
	static const char text[] = "# Story 1.2: Login\n\n"
				   "Status: ready-for-dev\n\n"
				   "## Story\n\nAs a user ...\n\n"
				   "## Acceptance Criteria\n\n"
				   "1. [ ] numbered criterion\n"
				   "- [ ] criterion that looks like a task\n\n"
				   "## Tasks / Subtasks\n\n"
				   "- [x] Task 1: Create the form (AC: 1)\n"
				   "  - [x] Subtask 1.1\n"
				   "  - [ ] Subtask 1.2\n"
				   "- [ ] Task 2: Validate input (AC: 2)\n"
				   "  - [ ] Subtask 2.1\n"
				   "- [ ] Task 3: Tests\n\n"
				   "## Dev Notes\n\n"
				   "```bash\n- [ ] not a task\n```\n"
				   "- [ ] note item\n";
	struct progress p;

	progress_parse(&p, text, sizeof(text) - 1);
	assert_int_equal(p.tasks_total, 3);
	assert_int_equal(p.tasks_completed, 1);
	assert_string_equal(p.stalled_task, "Task 2: Validate input (AC: 2)");
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_null_and_zero_length),
	    cmocka_unit_test(test_nul_bytes),
	    cmocka_unit_test(test_binary_garbage),
	    cmocka_unit_test(test_truncation_at_utf8_boundary),
	    cmocka_unit_test(test_long_ascii_truncated),
	    cmocka_unit_test(test_big_counts),
	    cmocka_unit_test(test_story_file_shape),
	};
	enum { NCASES = sizeof(cases) / sizeof(cases[0]) };
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	struct CMUnitTest tests[NCASES + NFIXED];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < NCASES; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = test_case;
		tests[i].initial_state = (void *)&cases[i];
	}
	for (i = 0; i < NFIXED; i++)
		tests[NCASES + i] = fixed[i];
	return _cmocka_run_group_tests(
	    "progress", tests, NCASES + NFIXED, NULL, NULL);
}
