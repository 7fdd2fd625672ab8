/* test_sprintstatus.c - sprint_status_parse(): BMAD v6's
 * sprint-status.yaml read with libyaml (strategies/sprintstatus.c).
 * Fixtures: tests/fixtures/bmad/, written in the shape of the files
 * BMAD's sprint-planning workflow generates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/fixture_fs.h"

#include "strategies/sprintstatus.h"

static void
assert_entries(const struct sprint_status *s, const char *const *want)
{
	size_t i;

	for (i = 0; want[i] != NULL; i += 2) {
		if (i / 2 >= s->n)
			fail_msg("only %zu entries, want %s", s->n, want[i]);
		assert_string_equal(s->entries[i / 2].key, want[i]);
		assert_string_equal(s->entries[i / 2].status, want[i + 1]);
	}
	assert_int_equal(s->n, i / 2);
}

static void
test_v6(void **state)
{
	static const char *const want[] = {"1-1-project-scaffolding", "done",
	    "1-2-sign-up-with-email", "done", "1-3-sign-in-and-sessions",
	    "review", "2-1-recipe-list", "in-progress", "2-2-add-a-recipe",
	    "ready-for-dev", "2-3-edit-a-recipe", "backlog", "3-1-share-link",
	    "backlog", NULL};
	struct sprint_status s;
	struct sc_err err;
	size_t len;
	char *text = fxfs_fixture_read("bmad", "sprint-status-v6.yaml", &len);

	if (sprint_status_parse(&s, text, len, &err) != 0)
		fail_msg("%s", err.msg);
	/* epics and retrospectives are not stories; the file's order */
	assert_entries(&s, want);
	assert_string_equal(
	    s.story_location, "_bmad-output/implementation-artifacts");
	sprint_status_release(&s);
	sprint_status_release(&s); /* twice: a no-op */
	free(text);
}

static void
test_v6_drafted(void **state)
{
	static const char *const want[] = {"1-1-fetch-station-data", "done",
	    "1-2-parse-harmonics", "in-progress", "1-3-predict-high-water",
	    "drafted", "1-4-chart-view", "backlog", "2-1-offline-cache",
	    "backlog", NULL};
	struct sprint_status s;
	struct sc_err err;
	size_t len;
	char *text =
	    fxfs_fixture_read("bmad", "sprint-status-v6-drafted.yaml", &len);

	if (sprint_status_parse(&s, text, len, &err) != 0)
		fail_msg("%s", err.msg);
	assert_entries(&s, want);
	assert_string_equal(
	    s.story_location, "{project-root}/docs/sprint-artifacts");
	sprint_status_release(&s);
	free(text);
}

struct ycase {
	const char *name;
	const char *yaml;
	const char *err; /* substring of the message, NULL: parses */
	size_t n; /* entries when it parses */
};

static const struct ycase cases[] = {
    {"flow map and quoted values",
	"development_status: {epic-1: done, \"1-1-a\": 'ready-for-dev', "
	"1-2-b: done}\n",
	NULL, 2},
    {"nested values are not stories",
	"development_status:\n  1-1-a: {status: done}\n  1-2-b: [x]\n"
	"  1-3-c: done\n",
	NULL, 1},
    {"other keys with nested values are skipped",
	"meta:\n  a: [1, {b: 2}]\nstory_location: [x]\n"
	"development_status:\n  1-1-a: done\n",
	NULL, 1},
    {"an empty development_status", "development_status:\n", NULL, 0},
    {"anchors and aliases",
	"development_status:\n  1-1-a: &s done\n"
	"  1-2-b: *s\n",
	NULL, 1},
    {"a complex key is skipped",
	"development_status:\n  ? [a, b]\n  : done\n  1-1-a: done\n", NULL, 1},
    {"only the first document",
	"development_status:\n  1-1-a: done\n"
	"---\ndevelopment_status:\n  2-1-b: done\n",
	NULL, 1},
    {"broken yaml", "development_status:\n  1-1-a: done\n   bad: [\n", "line ",
	0},
    {"tab indentation", "development_status:\n\t1-1-a: done\n", "line 2", 0},
    {"not a map", "- a\n- b\n", "not a YAML map", 0},
    {"empty file", "", "not a YAML map", 0},
    {"no development_status", "project: x\n", "no development_status", 0},
    {"development_status a list", "development_status:\n  - 1-1-a\n",
	"development_status is not a map", 0},
};

static void
test_cases(void **state)
{
	struct sprint_status s;
	struct sc_err err;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct ycase *c = &cases[i];
		err_clear(&err);
		rc = sprint_status_parse(&s, c->yaml, strlen(c->yaml), &err);
		if (c->err == NULL && rc != 0)
			fail_msg("%s: %s", c->name, err.msg);
		if (c->err != NULL &&
		    (rc != SC_EDATA || strstr(err.msg, c->err) == NULL))
			fail_msg("%s: rc %d \"%s\", want \"%s\"", c->name, rc,
			    err.msg, c->err);
		if (c->err == NULL && s.n != c->n)
			fail_msg(
			    "%s: %zu entries, want %zu", c->name, s.n, c->n);
		if (c->err != NULL)
			assert_null(s.entries);
		sprint_status_release(&s);
	}
}

static void
test_story_keys(void **state)
{
	assert_true(sprint_status_is_story_key("1-1-user-auth"));
	assert_true(sprint_status_is_story_key("10-2-x"));
	assert_false(sprint_status_is_story_key("epic-1"));
	assert_false(sprint_status_is_story_key("epic-12"));
	assert_false(sprint_status_is_story_key("epic-1-retrospective"));
	assert_false(sprint_status_is_story_key("1-retrospective"));
	assert_false(sprint_status_is_story_key(""));
}

/* BMAD v4's core-config.yaml: where its stories are. */
static void
test_top_scalar(void **state)
{
	static const char core[] =
	    "markdownExploder: true\n"
	    "prd:\n  prdFile: docs/prd.md\n  prdSharded: true\n"
	    "devLoadAlwaysFiles:\n  - docs/architecture/coding-standards.md\n"
	    "devStoryLocation: docs/stories # where the SM writes them\n"
	    "slashPrefix: BMad\n";
	struct sc_err err;
	char *v = NULL;

	assert_int_equal(
	    yaml_top_scalar(&v, core, strlen(core), "devStoryLocation", &err),
	    0);
	assert_string_equal(v, "docs/stories");
	free(v);
	assert_int_equal(
	    yaml_top_scalar(&v, core, strlen(core), "prdFile", &err), 0);
	assert_null(v); /* nested, not top-level */
	assert_int_equal(
	    yaml_top_scalar(&v, core, strlen(core), "prd", &err), 0);
	assert_null(v); /* not a scalar */
	assert_int_equal(yaml_top_scalar(&v, "a: [\n", 6, "a", &err), SC_EDATA);
	assert_null(v);
	assert_int_equal(yaml_top_scalar(&v, "- x\n", 4, "a", &err), SC_EDATA);
}

/* A key's number: its leading numbers (docs/stories.md "BMAD v6"). */
static void
test_key_number(void **state)
{
	static const char *const tab[] = {"1-1-user-auth", "1.1",
	    "3-2-1-update-api", "3.2.1", "1-10-2fa-setup", "1.10", "01-02-x",
	    "1.2", "0-1-package-scaffold", "0.1", "12-3", "12.3", "epic-1",
	    NULL, "1-foo", NULL, "2fa-1-x", NULL, "tech-spec", NULL,
	    "1-23456789012345678901234567890123456789-x", NULL, NULL, NULL};
	char buf[STORY_NUMBER_MAX];
	size_t i;

	for (i = 0; tab[i] != NULL; i += 2) {
		if (tab[i + 1] == NULL) {
			if (sprint_key_number(buf, tab[i]))
				fail_msg("%s: got %s, want none", tab[i], buf);
			assert_string_equal(buf, "");
			continue;
		}
		if (!sprint_key_number(buf, tab[i]))
			fail_msg("%s: no number", tab[i]);
		assert_string_equal(buf, tab[i + 1]);
	}
}

/* What a file name says of its number: BMAD v4's names, v6's. */
static void
test_name_number(void **state)
{
	static const struct {
		const char *name;
		enum story_name kind;
		const char *num;
	} tab[] = {
	    {"1.1.story.md", STORY_NAME_V4, "1.1"},
	    {"2.6-story.md", STORY_NAME_V4, "2.6"},
	    {"1.1_Story.md", STORY_NAME_V4, "1.1"},
	    {"1.1.md", STORY_NAME_V4, "1.1"},
	    {"1-1.md", STORY_NAME_V4, "1.1"},
	    {"1-1.STORY.md", STORY_NAME_V4, "1.1"},
	    {"3.2.1.story.md", STORY_NAME_V4, "3.2.1"},
	    {"10.02.story.md", STORY_NAME_V4, "10.2"},
	    {"1-1-user-auth.md", STORY_NAME_NUMBERED, "1.1"},
	    {"1.1.login.md", STORY_NAME_NUMBERED, "1.1"},
	    {"3-2-1-update-api.md", STORY_NAME_NUMBERED, "3.2.1"},
	    {"1.1.story.txt", STORY_NAME_OTHER, ""},
	    {"1.story.md", STORY_NAME_OTHER, ""},
	    {"1.1story.md", STORY_NAME_OTHER, ""},
	    {"epic-1-retro.md", STORY_NAME_OTHER, ""},
	    {"README.md", STORY_NAME_OTHER, ""},
	    {"1.1.md.bak", STORY_NAME_OTHER, ""},
	    {"1.1-.md", STORY_NAME_OTHER, ""},
	};
	char buf[STORY_NUMBER_MAX];
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (story_name_number(buf, tab[i].name) != tab[i].kind)
			fail_msg("%s: kind %d, want %d", tab[i].name,
			    (int)story_name_number(buf, tab[i].name),
			    (int)tab[i].kind);
		assert_string_equal(buf, tab[i].num);
	}
}

/* A key and a file name: exact, v4 with its number, its number under
 * another title, none. */
static void
test_name_match(void **state)
{
	static const struct {
		const char *key, *name;
		enum sprint_match want;
	} tab[] = {
	    {"1-1-user-auth", "1-1-user-auth.md", SPRINT_MATCH_EXACT},
	    {"1-1-user-auth", "1.1.story.md", SPRINT_MATCH_V4},
	    {"1-1-user-auth", "1.1.md", SPRINT_MATCH_V4},
	    {"1-1-user-auth", "1.1-story.md", SPRINT_MATCH_V4},
	    {"1-1-user-auth", "1-1.md", SPRINT_MATCH_V4},
	    {"1-1-user-auth", "01.01.story.md", SPRINT_MATCH_V4},
	    {"2-6-export", "2.6-story.md", SPRINT_MATCH_V4},
	    {"1-1-user-auth", "1-1-login.md", SPRINT_MATCH_NUMBER},
	    {"1-1-user-auth", "1.10.story.md", SPRINT_MATCH_NONE},
	    {"1-1-user-auth", "11.story.md", SPRINT_MATCH_NONE},
	    {"1-1-user-auth", "1.1.1.story.md", SPRINT_MATCH_NONE},
	    {"1-1-user-auth", "1-1-user-auth.md.bak", SPRINT_MATCH_NONE},
	    {"1-1-user-auth", "1-1-user-auth", SPRINT_MATCH_NONE},
	    {"3-2-1-update-api", "3.2.1.story.md", SPRINT_MATCH_V4},
	    {"3-2-1-update-api", "3.2.story.md", SPRINT_MATCH_NONE},
	    {"3-2-jd-parsing", "3.2.story.md", SPRINT_MATCH_V4},
	    {"3-2-jd-parsing", "3.2.1.story.md", SPRINT_MATCH_NONE},
	    {"setup", "setup.md", SPRINT_MATCH_EXACT},
	    {"setup", "1.1.story.md", SPRINT_MATCH_NONE},
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (sprint_name_match(tab[i].key, tab[i].name) != tab[i].want)
			fail_msg("%s ~ %s: %d, want %d", tab[i].key,
			    tab[i].name,
			    (int)sprint_name_match(tab[i].key, tab[i].name),
			    (int)tab[i].want);
}

int
main(void)
{
	static const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v6),
	    cmocka_unit_test(test_v6_drafted),
	    cmocka_unit_test(test_cases),
	    cmocka_unit_test(test_story_keys),
	    cmocka_unit_test(test_top_scalar),
	    cmocka_unit_test(test_key_number),
	    cmocka_unit_test(test_name_number),
	    cmocka_unit_test(test_name_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
