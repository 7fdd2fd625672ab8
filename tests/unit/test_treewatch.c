/*
 * test_treewatch.c - a work tree's changed paths from inotify
 * (state/treewatch.h, docs/evidence.md#cost): what each kind of change
 * reports, what is left out, and when the answer is "look at it all".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "state/fsutil.h"
#include "state/treewatch.h"

struct fx {
	char root[PATH_MAX];
	char ex[PATH_MAX];
	struct treewatch *tw;
};

static void
put(struct fx *fx, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fx->root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void
dir(struct fx *fx, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fx->root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* What the watch says now, as "full", "gone" or the paths joined by
 * spaces. */
static const char *
take(struct fx *fx)
{
	static char out[4096];
	struct strlist paths = {0};
	struct sc_err err = {0, ""};
	bool full, gone;
	size_t i;

	assert_int_equal(treewatch_take(fx->tw, &paths, &full, &gone, &err), 0);
	out[0] = '\0';
	if (full || gone)
		snprintf(out, sizeof(out), "%s", full ? "full" : "gone");
	for (i = 0; i < paths.n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
		    i > 0 ? " " : "", paths.items[i]);
	strlist_release(&paths);
	return out;
}

static int
setup(void **state)
{
	struct fx *fx;
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	struct sc_err err = {0, ""};
	int probe = inotify_init1(IN_CLOEXEC);

	/* a kernel or sandbox without inotify: treewatch says "full"
	 * every time, which gitevidence's tests cover */
	if (probe < 0)
		skip();
	close(probe);
	fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "%s/treewatch-test-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->root));
	snprintf(fx->ex, sizeof(fx->ex), "%s/.storyctl", fx->root);
	dir(fx, ".git");
	dir(fx, ".storyctl");
	dir(fx, "sub");
	put(fx, "a.txt", "a\n");
	put(fx, "sub/b.txt", "b\n");
	assert_int_equal(treewatch_open(&fx->tw, fx->root, fx->ex, &err), 0);
	assert_string_equal(treewatch_root(fx->tw), fx->root);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	treewatch_free(fx->tw);
	fsutil_rm_tree(fx->root);
	free(fx);
	return 0;
}

/* The first take knows nothing yet; then nothing changed is nothing. */
static void
test_first_take_is_full(void **state)
{
	struct fx *fx = *state;

	assert_string_equal(take(fx), "full");
	assert_string_equal(take(fx), "");
}

/* Written, created, deleted, chmod'ed, in the root and below: each path
 * once, sorted. */
static void
test_files(void **state)
{
	struct fx *fx = *state;
	char p[PATH_MAX];

	take(fx);
	put(fx, "a.txt", "a2\n");
	put(fx, "a.txt", "a3\n");
	put(fx, "sub/new.txt", "n\n");
	snprintf(p, sizeof(p), "%s/sub/b.txt", fx->root);
	assert_int_equal(unlink(p), 0);
	assert_string_equal(take(fx), "a.txt sub/b.txt sub/new.txt");
	snprintf(p, sizeof(p), "%s/a.txt", fx->root);
	assert_int_equal(chmod(p, 0755), 0);
	assert_string_equal(take(fx), "a.txt");
}

/* A new directory is watched at once, and counts as a whole: files
 * created in it before its watch existed are not lost. */
static void
test_new_directory(void **state)
{
	struct fx *fx = *state;

	take(fx);
	dir(fx, "d");
	dir(fx, "d/e");
	put(fx, "d/e/f.txt", "f\n");
	assert_string_equal(take(fx), "d");
	put(fx, "d/e/f.txt", "f2\n");
	assert_string_equal(take(fx), "d/e/f.txt");
}

/* .git and the state dir are not part of the tree. */
static void
test_left_out(void **state)
{
	struct fx *fx = *state;

	take(fx);
	put(fx, ".git/index", "x\n");
	put(fx, ".storyctl/state.db", "x\n");
	dir(fx, "sub/.git");
	assert_string_equal(take(fx), "");
}

/* A directory renamed keeps its watches under the old names: look at
 * the whole tree, then follow the new names. */
static void
test_moved_directory_is_full(void **state)
{
	struct fx *fx = *state;
	char a[PATH_MAX], b[PATH_MAX];

	take(fx);
	snprintf(a, sizeof(a), "%s/sub", fx->root);
	snprintf(b, sizeof(b), "%s/moved", fx->root);
	assert_int_equal(rename(a, b), 0);
	assert_string_equal(take(fx), "full");
	put(fx, "moved/b.txt", "b2\n");
	assert_string_equal(take(fx), "moved/b.txt");
	treewatch_forget(fx->tw);
	assert_string_equal(take(fx), "full");
}

/* The root removed: the watch is dead. */
static void
test_root_gone(void **state)
{
	struct fx *fx = *state;

	take(fx);
	fsutil_rm_tree(fx->root);
	assert_string_equal(take(fx), "gone");
}

/* The caller moves the root (a slot's worktree parked and taken again,
 * docs/git-work.md#what-a-switch-looks-at): the watch goes on under the
 * new name, and a directory made afterwards is watched under it too;
 * a move the caller did not announce is the tree gone. */
static void
test_root_moved(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char to[PATH_MAX + 8];

	assert_string_equal(take(fx), "full");
	snprintf(to, sizeof(to), "%s.moved", fx->root);
	assert_int_equal(rename(fx->root, to), 0);
	assert_int_equal(treewatch_moved(fx->tw, to, &err), 0);
	assert_string_equal(treewatch_root(fx->tw), to);
	snprintf(fx->root, sizeof(fx->root), "%s", to);
	put(fx, "sub/b.txt", "b2\n");
	dir(fx, "new");
	assert_string_equal(take(fx), "new sub/b.txt");
	/* "new" was watched from its new path */
	put(fx, "new/c.txt", "c\n");
	assert_string_equal(take(fx), "new/c.txt");
	/* moved twice before a take: both moves are the caller's */
	snprintf(to, sizeof(to), "%s.2", fx->root);
	assert_int_equal(rename(fx->root, to), 0);
	assert_int_equal(treewatch_moved(fx->tw, to, &err), 0);
	snprintf(fx->root, sizeof(fx->root), "%s", to);
	snprintf(to, sizeof(to), "%s.3", fx->root);
	assert_int_equal(rename(fx->root, to), 0);
	assert_int_equal(treewatch_moved(fx->tw, to, &err), 0);
	snprintf(fx->root, sizeof(fx->root), "%s", to);
	put(fx, "a.txt", "a2\n");
	assert_string_equal(take(fx), "a.txt");
	/* a move nobody announced */
	snprintf(to, sizeof(to), "%s.4", fx->root);
	assert_int_equal(rename(fx->root, to), 0);
	snprintf(fx->root, sizeof(fx->root), "%s", to);
	assert_string_equal(take(fx), "gone");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_first_take_is_full, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_files, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_new_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_left_out, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_moved_directory_is_full, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_gone, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_root_moved, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
