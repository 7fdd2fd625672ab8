/* test_config_worktree.c - the "worktree" section of storyctl.json: a
 * slot's setup argv, when it runs, the globs it copies
 * (docs/configuration.md#worktree). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"

struct tmp {
	char dir[PATH_MAX];
	char cfg[PATH_MAX + 16];
};

static int
tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	char templ[] = "/tmp/test_config_worktree.XXXXXX";

	if (t == NULL || mkdtemp(templ) == NULL) {
		free(t);
		return -1;
	}
	snprintf(t->dir, sizeof(t->dir), "%s", templ);
	snprintf(t->cfg, sizeof(t->cfg), "%s/storyctl.json", t->dir);
	*state = t;
	return 0;
}

static int
tmp_teardown(void **state)
{
	struct tmp *t = *state;

	unlink(t->cfg);
	rmdir(t->dir);
	free(t);
	return 0;
}

/* Load {"stories": [], "worktree": <wt>}. */
static int
load_wt(struct config *c, struct sc_err *err, struct tmp *t, const char *wt)
{
	FILE *f = fopen(t->cfg, "w");

	assert_non_null(f);
	fprintf(f, "{\"stories\": [], \"worktree\": %s}\n", wt);
	assert_int_equal(fclose(f), 0);
	memset(c, 0, sizeof(*c));
	err_clear(err);
	return config_load(c, t->cfg, err);
}

static void
test_worktree_keys(void **state)
{
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;

	assert_int_equal(
	    load_wt(&c, &err, t,
		"{\"setup\": [\"npm\", \"ci\"], \"setup_on\": "
		"[\"switch\", \"create\"], \"copy\": [\".env*\"]}"),
	    0);
	assert_int_equal(c.worktree.setup.n, 2);
	assert_string_equal(c.worktree.setup.items[1], "ci");
	assert_true(c.worktree.setup_on_create);
	assert_true(c.worktree.setup_on_switch);
	assert_int_equal(c.worktree.copy.n, 1);
	config_release(&c);
	/* the default: on create only */
	assert_int_equal(load_wt(&c, &err, t, "{\"setup\": [\"make\"]}"), 0);
	assert_true(c.worktree.setup_on_create);
	assert_false(c.worktree.setup_on_switch);
	config_release(&c);
	assert_int_equal(
	    load_wt(&c, &err, t, "{\"setup_on\": [\"switch\"]}"), 0);
	assert_false(c.worktree.setup_on_create);
	config_release(&c);
}

static void
test_worktree_errors(void **state)
{
	static const struct {
		const char *json, *msg;
	} bad[] = {
	    {"[]", "worktree: "},
	    {"{\"setup\": []}", "worktree.setup: must not be empty"},
	    {"{\"setup\": [\"\"]}", "the program name must not be empty"},
	    {"{\"setup_on\": [\"always\"]}", "\"always\" is not"},
	    {"{\"copy\": [\"../secrets\"]}", "stay inside it"},
	    {"{\"copy\": [\"/etc/passwd\"]}", "stay inside it"},
	    {"{\"copy\": [\".git/config\"]}", "git's own files"},
	    {"{\"copy\": [\"\"]}", "must not be empty"},
	    {"{\"teardown\": [\"x\"]}", "teardown"},
	};
	struct tmp *t = *state;
	struct config c;
	struct sc_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load_wt(&c, &err, t, bad[i].json), SC_EDATA);
		if (strstr(err.msg, bad[i].msg) == NULL)
			fail_msg("%s: %s", bad[i].json, err.msg);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_worktree_keys, tmp_setup, tmp_teardown),
	    cmocka_unit_test_setup_teardown(
		test_worktree_errors, tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
