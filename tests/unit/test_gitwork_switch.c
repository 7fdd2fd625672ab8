/*
 * test_gitwork_switch.c - a linked worktree kept from one story to the
 * next (state/gitwork_switch.c, docs/git-work.md#switching): its name
 * read back, moved, switched with leftovers planted in it, ignored
 * files kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/gitwork.h"
#include "tests/unit/fixture_fs.h"

struct fx {
	char root[PATH_MAX];
	char repo[PATH_MAX];
};

static void
git_ok(const char *dir, const char *a1, const char *a2, const char *a3,
    const char *a4, const char *a5)
{
	const char *argv[] = {"git", "-C", dir, a1, a2, a3, a4, a5, NULL};

	assert_int_equal(fxfs_run(NULL, 0, argv), 0);
}

static int
there(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	fxfs_join(path, dir, name);
	return lstat(path, &st) == 0;
}

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "/tmp/gitwork-switch-XXXXXX");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->root));
	fxfs_join(fx->repo, fx->root, "repo");
	fxfs_git_env(fx->root);
	git_ok(fx->root, "init", "-q", "-b", "main", "repo");
	fxfs_write_file(fx->repo, ".gitignore", "node_modules/\n.env\n");
	fxfs_write_file(fx->repo, "a.txt", "a\n");
	git_ok(fx->repo, "add", "-A", NULL, NULL, NULL);
	git_ok(fx->repo, "commit", "-q", "-m", "init", NULL);
	*state = fx;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *fx = *state;

	fxfs_rm_tree(fx->root);
	free(fx);
	return 0;
}

/* Story a's tree, switched to story b: tracked changes and untracked
 * files of a are gone (it left them uncommitted), ignored ones stay,
 * b's own files come; the branch a keeps only what was committed. */
static void
test_switch_leaves_nothing_of_the_last_story(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wt[PATH_MAX], moved[PATH_MAX], name[256], buf[256];
	int dirty = 1;

	fxfs_join(wt, fx->root, "wt/a");
	assert_int_equal(gitwork_worktree_add(fx->repo, "_slot1", wt,
			     "storyctl/story/a", "HEAD", &err),
	    0);
	assert_int_equal(
	    gitwork_worktree_name_at(name, sizeof(name), wt, &err), 0);
	assert_string_equal(name, "_slot1");
	/* b exists already with a file of its own */
	git_ok(fx->repo, "branch", "storyctl/story/b", NULL, NULL, NULL);
	fxfs_write_file(wt, "node_modules/dep/index.js", "dep\n");
	fxfs_write_file(wt, ".env", "SECRET=1\n");
	fxfs_write_file(wt, "a.txt", "changed by a\n");
	fxfs_write_file(wt, "left/over.txt", "a's leftover\n");
	assert_int_equal(
	    gitwork_worktree_switch(wt, "storyctl/story/b", "HEAD", NULL, &err),
	    0);
	assert_string_equal(
	    fxfs_read_file(buf, sizeof(buf), wt, "a.txt") > 0 ? buf : "",
	    "a\n");
	assert_false(there(wt, "left/over.txt"));
	assert_false(there(wt, "left"));
	assert_true(there(wt, "node_modules/dep/index.js"));
	assert_true(there(wt, ".env"));
	assert_int_equal(gitwork_is_dirty(&dirty, NULL, 0, wt, NULL, &err), 0);
	assert_int_equal(dirty, 0);
	assert_int_equal(gitwork_head(buf, name, sizeof(name), wt, &err), 0);
	assert_string_equal(name, "refs/heads/storyctl/story/b");
	/* a new branch starts at base; a's branch is free again */
	fxfs_join(moved, fx->root, "wt/.slot-1");
	assert_int_equal(
	    gitwork_worktree_move(fx->repo, "_slot1", moved, &err), 0);
	assert_false(there(fx->root, "wt/a"));
	assert_int_equal(gitwork_worktree_switch(
			     moved, "storyctl/story/c", "HEAD", NULL, &err),
	    0);
	/* a branch checked out elsewhere is refused */
	assert_int_equal(
	    gitwork_worktree_switch(moved, "main", "HEAD", NULL, &err),
	    SC_EDATA);
	assert_int_equal(gitwork_worktree_remove(fx->repo, "_slot1", &err), 0);
	assert_false(there(fx->root, "wt/.slot-1"));
}

/* A list with the given paths. */
static void
list_of(struct strlist *l, const char *a, const char *b)
{
	assert_int_equal(strlist_push(l, a), 0);
	if (b != NULL)
		assert_int_equal(strlist_push(l, b), 0);
}

/*
 * With a watch's paths (docs/git-work.md#what-a-switch-looks-at): the
 * work commit stages the listed paths (the whole tree when a .gitignore
 * is among them), the switch writes the files the two commits differ in
 * and looks at the listed paths, and nothing else of the tree.
 */
static void
test_switch_with_paths(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct strlist only = {0}, dirty = {0}, none = {0};
	char wt[PATH_MAX], buf[256], ref[256], base[GITWORK_HEXSZ];
	int committed = 0;

	/* the main tree's HEAD, as the batch gives it */
	assert_int_equal(
	    gitwork_head(base, ref, sizeof(ref), fx->repo, &err), 0);
	fxfs_join(wt, fx->root, "wt/a");
	assert_int_equal(gitwork_worktree_add(fx->repo, "_slot1", wt,
			     "storyctl/story/a", "HEAD", &err),
	    0);
	fxfs_write_file(wt, "a-only.txt", "a's work\n");
	fxfs_write_file(wt, "unlisted.txt", "not in the list\n");
	list_of(&only, "a-only.txt", NULL);
	assert_int_equal(gitwork_commit_changed(&committed, wt, &only,
			     "story a", 1700000000, &err),
	    0);
	assert_int_equal(committed, 1);
	git_ok(fx->repo, "cat-file", "-e", "storyctl/story/a:a-only.txt", NULL,
	    NULL);
	/* a .gitignore among the paths: the whole tree is staged */
	fxfs_write_file(wt, ".gitignore", "node_modules/\n.env\n*.tmp\n");
	strlist_release(&only);
	list_of(&only, ".gitignore", NULL);
	assert_int_equal(gitwork_commit_changed(&committed, wt, &only,
			     "story a again", 1700000001, &err),
	    0);
	git_ok(fx->repo, "cat-file", "-e", "storyctl/story/a:unlisted.txt",
	    NULL, NULL);
	/* uncommitted leftovers the watch saw, and an ignored directory */
	fxfs_write_file(wt, "a.txt", "changed by a\n");
	fxfs_write_file(wt, "left/over.txt", "a's leftover\n");
	fxfs_write_file(wt, "node_modules/dep/index.js", "dep\n");
	list_of(&dirty, "a.txt", "left");
	assert_int_equal(
	    gitwork_worktree_switch(wt, "storyctl/story/b", base, &dirty, &err),
	    0);
	assert_string_equal(
	    fxfs_read_file(buf, sizeof(buf), wt, "a.txt") > 0 ? buf : "",
	    "a\n");
	assert_false(there(wt, "left/over.txt"));
	assert_false(there(wt, "a-only.txt")); /* a's commit, not b's */
	assert_false(there(wt, "unlisted.txt"));
	assert_true(there(wt, "node_modules/dep/index.js"));
	assert_int_equal(gitwork_head(buf, ref, sizeof(ref), wt, &err), 0);
	assert_string_equal(ref, "refs/heads/storyctl/story/b");
	/* nothing differs and nothing changed: only HEAD moves, and a
	 * file the list does not name is not looked at */
	fxfs_write_file(wt, "not-seen.txt", "x\n");
	assert_int_equal(
	    gitwork_worktree_switch(wt, "storyctl/story/c", base, &none, &err),
	    0);
	assert_int_equal(gitwork_head(buf, ref, sizeof(ref), wt, &err), 0);
	assert_string_equal(ref, "refs/heads/storyctl/story/c");
	assert_true(there(wt, "not-seen.txt"));
	strlist_release(&only);
	strlist_release(&dirty);
	assert_int_equal(gitwork_worktree_remove(fx->repo, "_slot1", &err), 0);
	assert_false(there(fx->root, "wt/a"));
}

/* A parked worktree made ahead: git's record first, HEAD detached at
 * base, no branch left behind, then its files, clean
 * (docs/git-work.md#made-ahead). */
static void
test_add_detached(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wt[PATH_MAX], hex[GITWORK_HEXSZ], main_hex[GITWORK_HEXSZ];
	char ref[256];
	int dirty = 1;

	fxfs_join(wt, fx->root, "wt/.slot-2");
	assert_int_equal(gitwork_worktree_add_detached(
			     fx->repo, "_slot2-1", wt, "HEAD", &err),
	    0);
	assert_false(there(wt, "a.txt")); /* git's record only */
	assert_int_equal(gitwork_worktree_fill(wt, &err), 0);
	assert_true(there(wt, "a.txt"));
	assert_int_equal(gitwork_head(hex, ref, sizeof(ref), wt, &err), 0);
	assert_string_equal(ref, "");
	assert_int_equal(
	    gitwork_head(main_hex, ref, sizeof(ref), fx->repo, &err), 0);
	assert_string_equal(hex, main_hex);
	assert_int_equal(gitwork_is_dirty(&dirty, NULL, 0, wt, NULL, &err), 0);
	assert_int_equal(dirty, 0);
	assert_int_not_equal(
	    fxfs_run(NULL, 0,
		(const char *[]){"git", "-C", fx->repo, "rev-parse", "--verify",
		    "-q", "refs/heads/storyctl/slot/_slot2-1", NULL}),
	    0);
	assert_int_equal(
	    gitwork_worktree_switch(wt, "storyctl/story/d", "HEAD", NULL, &err),
	    0);
	assert_int_equal(
	    gitwork_worktree_remove(fx->repo, "_slot2-1", &err), 0);
	assert_false(there(fx->root, "wt/.slot-2"));
}

/* git's records of worktrees whose directory is gone: pruned under the
 * given directory only (docs/git-work.md#what-survives-a-crash). */
static void
test_prune_gone(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wt[PATH_MAX], other[PATH_MAX], kept[PATH_MAX], under[PATH_MAX];
	int pruned = -1;

	fxfs_join(under, fx->root, "wt");
	fxfs_join(wt, fx->root, "wt/x");
	fxfs_join(kept, fx->root, "wt/k");
	fxfs_join(other, fx->root, "elsewhere/y");
	assert_int_equal(gitwork_worktree_add(fx->repo, "x", wt,
			     "storyctl/story/x", "HEAD", &err),
	    0);
	assert_int_equal(gitwork_worktree_add(fx->repo, "k", kept,
			     "storyctl/story/k", "HEAD", &err),
	    0);
	assert_int_equal(gitwork_worktree_add(fx->repo, "y", other,
			     "storyctl/story/y", "HEAD", &err),
	    0);
	fxfs_rm_tree(wt);
	fxfs_rm_tree(other);
	assert_int_equal(
	    gitwork_worktrees_prune_gone(&pruned, fx->repo, under, &err), 0);
	assert_int_equal(pruned, 1);
	assert_false(there(fx->repo, ".git/worktrees/x"));
	assert_true(there(fx->repo, ".git/worktrees/k")); /* still there */
	assert_true(there(fx->repo, ".git/worktrees/y")); /* not ours */
	assert_int_equal(
	    gitwork_worktrees_prune_gone(&pruned, fx->repo, under, &err), 0);
	assert_int_equal(pruned, 0);
}

/* What worktree.copy may copy: only what git ignores. */
static void
test_path_ignored(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char name[64];
	int ign = -1;

	assert_int_equal(gitwork_path_ignored(&ign, fx->repo, ".env", &err), 0);
	assert_int_equal(ign, 1);
	assert_int_equal(
	    gitwork_path_ignored(&ign, fx->repo, "notes.local", &err), 0);
	assert_int_equal(ign, 0);
	assert_int_equal(
	    gitwork_worktree_name_at(name, sizeof(name), fx->repo, &err),
	    SC_EDATA);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_switch_leaves_nothing_of_the_last_story, fx_setup,
		fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_switch_with_paths, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_add_detached, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_prune_gone, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_path_ignored, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
