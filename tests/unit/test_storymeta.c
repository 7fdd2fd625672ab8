/* test_storymeta.c - storymeta_parse(): a story's Status as BMAD v4 and
 * v6 write it (strategies/storymeta.c, docs/stories.md), as a table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strategies/storymeta.h"

struct mcase {
	const char *name;
	const char *text;
	const char *status;
	bool draft;
};

static const struct mcase cases[] = {
    {"v6 line after the title",
	"# Story 1.2: Login\n\nStatus: ready-for-dev\n\n## Story\n\nAs a "
	"user\n\n## Tasks / Subtasks\n\n- [ ] a\n",
	"ready-for-dev", false},
    {"v6 drafted", "# Story 1.3\n\nStatus: drafted\n\n## Tasks\n\n- [ ] a\n",
	"drafted", true},
    {"v4 heading and paragraph",
	"# Story 1.1: Project setup\n\n## Status\n\nDraft\n\n## Story\n\n"
	"**As a** dev\n",
	"Draft", true},
    {"v4 approved", "# Story 2.10\n\n## Status\n\nApproved\n", "Approved",
	false},
    {"v4 status heading with a colon", "## Status:\n\nInProgress\n",
	"InProgress", false},
    {"v4 status as a list item", "## Status\n\n- Review\n", "Review", false},
    {"status in the heading", "# Story 3.1\n\n## Status: Draft\n", "Draft",
	true},
    {"bold label", "# Story 1.1\n\n**Status:** Draft\n", "Draft", true},
    {"bold label colon outside", "# Story 1.1\n\n**Status**: Done\n", "Done",
	false},
    {"metadata block, status on its second line",
	"# Story 4.2\n\n**Epic:** 4\n**Status:** Ready for Review\n\n## "
	"Story\n",
	"Ready for Review", false},
    {"metadata as a list", "# Story\n\n- Epic: 4\n- Status: Draft\n", "Draft",
	true},
    {"any case", "# S\n\nSTATUS: DRAFT\n", "DRAFT", true},
    {"draft with more words", "# S\n\nStatus: Draft (awaiting PO review)\n",
	"Draft (awaiting PO review)", true},
    {"drafting is not draft", "# S\n\nStatus: Drafting\n", "Drafting", false},
    {"not a draft", "# S\n\nStatus: review\n", "review", false},
    {"no status", "# Story\n\n## Tasks\n\n- [ ] a\n", "", false},
    {"empty", "", "", false},
    {"a status in a code block is not the story's",
	"# S\n\n```\nStatus: Draft\n```\n\n## Tasks\n\n- [ ] a\n", "", false},
    {"a status in a block quote is not the story's", "# S\n\n> Status: Draft\n",
	"", false},
    {"a status in HTML is not the story's", "# S\n\n<!--\nStatus: Draft\n-->\n",
	"", false},
    {"a status line below a section is not the story's",
	"# Story\n\n## Dev Notes\n\nStatus: 404 when missing\n", "", false},
    {"the first wins", "# S\n\nStatus: ready-for-dev\n\n## Status\n\nDraft\n",
	"ready-for-dev", false},
    {"the v4 heading below other sections still counts",
	"# Story 1.1\n\n## Story\n\nAs a user\n\n## Status\n\nDraft\n", "Draft",
	true},
    {"CRLF and BOM", "\xEF\xBB\xBF# S\r\n\r\nStatus: drafted\r\n", "drafted",
	true},
    {"setext title", "Story 1.1\n=========\n\nStatus: Draft\n", "Draft", true},
    {"control characters cleaned", "# S\n\nStatus: Dr\x1b[31m\n", "Dr", false},
    {"long value cut",
	"# S\n\nStatus: in progress and waiting for the review of the "
	"architect\n",
	"in progress and waiting for the", false},
};

static void
test_table(void **state)
{
	struct storymeta m;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		storymeta_parse(&m, cases[i].text, strlen(cases[i].text));
		if (strcmp(m.status, cases[i].status) != 0 ||
		    m.draft != cases[i].draft)
			fail_msg("%s: got \"%s\" draft %d, want \"%s\" %d",
			    cases[i].name, m.status, m.draft, cases[i].status,
			    cases[i].draft);
	}
}

static void
test_is_draft(void **state)
{
	assert_true(storymeta_is_draft("Draft"));
	assert_true(storymeta_is_draft("drafted"));
	assert_true(storymeta_is_draft("  DRAFT - see notes"));
	assert_false(storymeta_is_draft("Drafts"));
	assert_false(storymeta_is_draft("Approved"));
	assert_false(storymeta_is_draft(""));
	assert_false(storymeta_is_draft(NULL));
}

static void
test_nul_bytes(void **state)
{
	static const char text[] = "# S\n\nStatus: Dra\0ft\n";
	struct storymeta m;

	storymeta_parse(&m, text, sizeof(text) - 1);
	/* cmark makes NUL U+FFFD; never a cut string */
	assert_true(strlen(m.status) > 3);
	assert_false(m.draft);
	storymeta_parse(&m, NULL, 10);
	assert_string_equal(m.status, "");
}

int
main(void)
{
	static const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_is_draft),
	    cmocka_unit_test(test_nul_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
