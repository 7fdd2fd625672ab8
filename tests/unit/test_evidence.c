/*
 * test_evidence.c - checked boxes against the change that backs them
 * (docs/evidence.md): the comparison of a story's boxes before and
 * after an attempt, the flags, require_diff's verdict and taking the
 * unbacked ticks back, as tables.  The boxes come from real markdown
 * through progress_items(), as the controller reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/evidence.h"

#define HEAD "# Story\n\n## Tasks\n\n"

struct ecase {
	const char *name;
	const char *before, *after;
	int files_changed; /* -1: not measured */
	bool require_diff;
	int ticked, unticked;
	const char *first_unticked;
	bool ticked_without_change, flag_unticked, no_evidence;
};

static const struct ecase cases[] = {
    {"nothing changed", HEAD "- [ ] a\n- [x] b\n", HEAD "- [ ] a\n- [x] b\n", 0,
	true, 0, 0, "", false, false, false},
    {"ticked with a change", HEAD "- [ ] a\n- [ ] b\n",
	HEAD "- [x] a\n- [ ] b\n", 2, true, 1, 0, "", false, false, false},
    {"ticked without a change", HEAD "- [ ] a\n- [ ] b\n",
	HEAD "- [x] a\n- [X] b\n", 0, false, 2, 0, "", true, false, false},
    {"require_diff: no evidence", HEAD "- [ ] a\n- [ ] b\n",
	HEAD "- [x] a\n- [ ] b\n", 0, true, 1, 0, "", true, false, true},
    {"not measured: nothing flagged", HEAD "- [ ] a\n", HEAD "- [x] a\n", -1,
	true, 1, 0, "", false, false, false},
    {"unticked", HEAD "- [x] a\n- [x] b\n- [ ] c\n",
	HEAD "- [ ] a\n- [x] b\n- [ ] c\n", 1, true, 0, 1, "a", false, true,
	false},
    {"unticked and ticked without change", HEAD "- [x] a\n- [ ] b\n",
	HEAD "- [ ] a\n- [x] b\n", 0, false, 1, 1, "a", true, true, false},
    {"subtasks count", HEAD "- [ ] a\n  - [ ] a1\n  - [x] a2\n",
	HEAD "- [ ] a\n  - [x] a1\n  - [ ] a2\n", 0, false, 1, 1, "a2", true,
	true, false},
    /* a box is known by its text, wherever it moved */
    {"reordered boxes are the same boxes", HEAD "- [x] a\n- [ ] b\n",
	HEAD "- [ ] b\n- [x] a\n", 0, true, 0, 0, "", false, false, false},
    {"an added box checked is ticked", HEAD "- [ ] a\n",
	HEAD "- [ ] a\n- [x] new\n", 0, true, 1, 0, "", true, false, true},
    {"an added open box is nothing", HEAD "- [ ] a\n",
	HEAD "- [ ] a\n- [ ] new\n", 0, true, 0, 0, "", false, false, false},
    {"a removed checked box is not unticked", HEAD "- [x] a\n- [ ] b\n",
	HEAD "- [ ] b\n", 0, true, 0, 0, "", false, false, false},
    {"duplicates pair in order", HEAD "- [x] same\n- [ ] same\n",
	HEAD "- [x] same\n- [x] same\n", 3, true, 1, 0, "", false, false,
	false},
    {"boxes outside the tasks and in code do not count",
	HEAD "- [ ] a\n\n```\n- [ ] code\n```\n\n## Notes\n\n- [ ] n\n",
	HEAD "- [ ] a\n\n```\n- [x] code\n```\n\n## Notes\n\n- [x] n\n", 0,
	true, 0, 0, "", false, false, false},
};

static void
items_of(struct progress_item **it, size_t *n, const char *text)
{
	struct sc_err err = {0, ""};

	assert_int_equal(
	    progress_items(it, n, NULL, text, strlen(text), NULL, &err), 0);
}

static void
test_table(void **state)
{
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct ecase *c = &cases[k];
		struct progress_item *b = NULL, *a = NULL;
		size_t nb = 0, na = 0;
		struct evidence_boxes eb;
		struct evidence_verdict v;
		struct sc_err err = {0, ""};

		print_message("case: %s\n", c->name);
		items_of(&b, &nb, c->before);
		items_of(&a, &na, c->after);
		assert_int_equal(evidence_compare(&eb, b, nb, a, na, &err), 0);
		assert_int_equal(eb.ticked, c->ticked);
		assert_int_equal(eb.unticked, c->unticked);
		assert_string_equal(eb.first_unticked, c->first_unticked);
		assert_int_equal(eb.nlines, (size_t)c->ticked);
		evidence_judge(&v, &eb, c->files_changed, c->require_diff);
		assert_int_equal(
		    v.ticked_without_change, c->ticked_without_change);
		assert_int_equal(v.unticked, c->flag_unticked);
		assert_int_equal(v.no_evidence, c->no_evidence);
		free(b);
		free(a);
	}
}

/* The lines of the ticks, and taking them back: only those boxes open
 * again, every other byte (a note the agent wrote, a box that was
 * checked before) as it was; the counts are those of the start. */
static void
test_untick(void **state)
{
	const char *before = HEAD "- [x] done before\n- [ ] a\n  - [ ] a1\n"
				  "- [ ] b\n";
	const char *after = HEAD "- [x] done before\n- [x] a\n  - [X] a1\n"
				 "- [ ] b\n\nNote: [x] stays\n";
	struct progress_item *b = NULL, *a = NULL, *c = NULL;
	size_t nb = 0, na = 0, nc = 0, len = 0;
	struct evidence_boxes eb;
	struct sc_err err = {0, ""};
	struct progress p0, p1;
	char *out = NULL;
	int changed = 0;

	(void)state;
	items_of(&b, &nb, before);
	items_of(&a, &na, after);
	assert_int_equal(evidence_compare(&eb, b, nb, a, na, &err), 0);
	assert_int_equal(eb.ticked, 2);
	assert_int_equal(eb.nlines, 2);
	assert_int_equal(eb.lines[0], 6);
	assert_int_equal(eb.lines[1], 7);
	assert_int_equal(evidence_untick(&out, &len, &changed, after,
			     strlen(after), eb.lines, eb.nlines, &err),
	    0);
	assert_int_equal(changed, 2);
	assert_int_equal(len, strlen(after));
	assert_string_equal(out,
	    HEAD "- [x] done before\n- [ ] a\n  - [ ] a1\n"
		 "- [ ] b\n\nNote: [x] stays\n");
	progress_parse(&p0, before, strlen(before));
	items_of(&c, &nc, out);
	progress_parse(&p1, out, len);
	assert_int_equal(p1.counts.tasks_completed, p0.counts.tasks_completed);
	assert_int_equal(
	    p1.counts.subtasks_completed, p0.counts.subtasks_completed);
	free(out);
	free(a);
	free(b);
	free(c);
}

/* A line with no box, a line past the end, no trailing newline. */
static void
test_untick_edges(void **state)
{
	const char *text = "- [x] a\nplain\n- [X] b";
	const int lines[] = {2, 3, 99};
	struct sc_err err = {0, ""};
	char *out = NULL;
	size_t len = 0;
	int changed = 0;

	(void)state;
	assert_int_equal(evidence_untick(&out, &len, &changed, text,
			     strlen(text), lines, 3, &err),
	    0);
	assert_int_equal(changed, 1);
	assert_string_equal(out, "- [x] a\nplain\n- [ ] b");
	free(out);
	assert_int_equal(
	    evidence_untick(&out, &len, &changed, "", 0, lines, 3, &err), 0);
	assert_int_equal(changed, 0);
	assert_int_equal(len, 0);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_untick),
	    cmocka_unit_test(test_untick_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
