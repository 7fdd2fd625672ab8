/*
 * test_gitevidence.c - an attempt's change in its work tree: snapshot
 * at the start, diff stats at the end (docs/evidence.md).
 *
 * Every test gets a temp repo/ on main with one commit (.gitignore
 * ignoring *.log, a.txt with 3 lines, story.md, sub/c.txt) and an
 * untracked, not ignored .storyctl/ state dir; the snapshot is taken,
 * the "agent" changes files, and the figures are checked exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "state/gitevidence.h"
#include "tests/unit/fixture_fs.h"

#define EX ".storyctl"

struct fx {
	char root[PATH_MAX];
	char repo[PATH_MAX];
	char ex[PATH_MAX]; /* the state dir, absolute */
	char base[GITWORK_HEXSZ];
	struct gitevidence_watches *w; /* NULL, or the trees watched */
};

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	char *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	slash = strrchr(path, '/');
	*slash = '\0';
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* `git -C dir args...` (NULL-terminated) must exit 0; output dropped. */
static void
git_ok(const char *dir, ...)
{
	const char *argv[32];
	va_list ap;
	int argc = 0, status = 0, devnull;
	pid_t pid;

	argv[argc++] = "git";
	argv[argc++] = "-C";
	argv[argc++] = dir;
	va_start(ap, dir);
	while ((argv[argc] = va_arg(ap, const char *)) != NULL)
		assert_true(++argc < 31);
	va_end(ap);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
snapshot(struct fx *fx)
{
	struct sc_err err = {0, ""};

	if (gitevidence_snapshot(fx->base, fx->w, fx->repo, fx->ex, &err) != 0)
		fail_msg("gitevidence_snapshot: %s", err.msg);
	/* a tree id without a watch, a watched snapshot's name with one */
	if (fx->w == NULL)
		assert_int_equal(strlen(fx->base), 40);
	else
		assert_int_equal(strncmp(fx->base, GITEVIDENCE_WATCHED,
				     strlen(GITEVIDENCE_WATCHED)),
		    0);
}

static void
diff(struct gitevidence_diff *d, struct fx *fx)
{
	struct sc_err err = {0, ""};

	if (gitevidence_diff(
		d, fx->w, fx->repo, fx->base, fx->ex, "story.md", &err) != 0)
		fail_msg("gitevidence_diff: %s", err.msg);
}

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "%s/gitevidence-test-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->root));
	snprintf(fx->repo, sizeof(fx->repo), "%s/repo", fx->root);
	snprintf(fx->ex, sizeof(fx->ex), "%s/" EX, fx->repo);
	fxfs_git_env(fx->root);
	git_ok(fx->root, "init", "-q", "-b", "main", "repo", NULL);
	write_file(fx->repo, ".gitignore", "*.log\n");
	write_file(fx->repo, "a.txt", "1\n2\n3\n");
	write_file(fx->repo, "story.md", "# S\n\n## Tasks\n\n- [ ] one\n");
	write_file(fx->repo, "sub/c.txt", "c\n");
	git_ok(fx->repo, "add", "-A", NULL);
	git_ok(fx->repo, "commit", "-q", "-m", "init", NULL);
	write_file(fx->repo, EX "/state.db", "db\n");
	*state = fx;
	return 0;
}

/* The same, with the tree kept and watched between snapshots (as a
 * batch does): every test must give the same figures both ways. */
static int
fx_setup_watch(void **state)
{
	struct fx *fx;
	struct sc_err err = {0, ""};

	fx_setup(state);
	fx = *state;
	assert_int_equal(gitevidence_watches_new(&fx->w, &err), 0);
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *fx = *state;

	gitevidence_watches_free(fx->w);

	nftw(fx->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* Nothing changed: no file, no line. */
static void
test_nothing(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;

	snapshot(fx);
	diff(&d, fx);
	assert_int_equal(d.files_changed, 0);
	assert_int_equal(d.lines_added, 0);
	assert_int_equal(d.lines_removed, 0);
	assert_int_equal(d.nlisted, 0);
}

/* Only the story file, the state dir and ignored files changed: they
 * are not evidence, and HEAD, the index and the tree are untouched. */
static void
test_story_state_ignored_left_out(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;

	snapshot(fx);
	write_file(fx->repo, "story.md", "# S\n\n## Tasks\n\n- [x] one\n");
	write_file(fx->repo, EX "/state.db", "db2\nmore\n");
	write_file(fx->repo, EX "/logs/a.log", "x\n");
	write_file(fx->repo, "build.log", "noise\n");
	diff(&d, fx);
	assert_int_equal(d.files_changed, 0);
	/* the snapshot staged nothing for real */
	git_ok(fx->repo, "diff", "--cached", "--quiet", NULL);
}

/* Modified, added (untracked), deleted: each file and line counted. */
static void
test_counts(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	char p[PATH_MAX];

	snapshot(fx);
	write_file(fx->repo, "a.txt", "1\nTWO\n3\n4\n"); /* +2 -1 */
	write_file(fx->repo, "new/n.c", "int x;\nint y;\nint z;\n"); /* +3 */
	snprintf(p, sizeof(p), "%s/sub/c.txt", fx->repo);
	assert_int_equal(unlink(p), 0); /* -1 */
	diff(&d, fx);
	assert_int_equal(d.files_changed, 3);
	assert_int_equal(d.lines_added, 5);
	assert_int_equal(d.lines_removed, 2);
	assert_int_equal(d.nlisted, 3);
	/* path order */
	assert_string_equal(d.listed[0].path, "a.txt");
	assert_int_equal(d.listed[0].status, 'M');
	assert_int_equal(d.listed[0].added, 2);
	assert_int_equal(d.listed[0].removed, 1);
	assert_string_equal(d.listed[1].path, "new/n.c");
	assert_int_equal(d.listed[1].status, 'A');
	assert_int_equal(d.listed[1].added, 3);
	assert_string_equal(d.listed[2].path, "sub/c.txt");
	assert_int_equal(d.listed[2].status, 'D');
	assert_int_equal(d.listed[2].removed, 1);
}

/* What the tree held before the attempt (uncommitted work of an earlier
 * attempt) does not count again; what the agent committed does. */
static void
test_base_is_the_start_not_head(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;

	write_file(fx->repo, "old.txt", "earlier\nattempt\n");
	write_file(fx->repo, "a.txt", "1\n2\n3\nearlier\n");
	snapshot(fx);
	write_file(fx->repo, "b.txt", "b\n");
	git_ok(fx->repo, "add", "b.txt", NULL);
	git_ok(fx->repo, "commit", "-q", "-m", "agent", NULL);
	diff(&d, fx);
	assert_int_equal(d.files_changed, 1);
	assert_int_equal(d.lines_added, 1);
	assert_int_equal(d.lines_removed, 0);
	assert_string_equal(d.listed[0].path, "b.txt");
}

/* A rename is one file; a binary file counts with no lines; the story
 * file given as an absolute path is left out too. */
static void
test_rename_binary_absolute_story(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	struct sc_err err = {0, ""};
	char from[PATH_MAX], to[PATH_MAX], story[PATH_MAX];
	FILE *f;

	snapshot(fx);
	snprintf(from, sizeof(from), "%s/sub/c.txt", fx->repo);
	snprintf(to, sizeof(to), "%s/sub/d.txt", fx->repo);
	assert_int_equal(rename(from, to), 0);
	snprintf(to, sizeof(to), "%s/img.bin", fx->repo);
	f = fopen(to, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite("\0\1\2\0", 1, 4, f), 4);
	assert_int_equal(fclose(f), 0);
	write_file(fx->repo, "story.md", "changed\n");
	snprintf(story, sizeof(story), "%s/story.md", fx->repo);
	assert_int_equal(gitevidence_diff(&d, fx->w, fx->repo, fx->base, fx->ex,
			     story, &err),
	    0);
	assert_int_equal(d.files_changed, 2);
	assert_int_equal(d.lines_added, 0);
	assert_int_equal(d.lines_removed, 0);
	assert_string_equal(d.listed[0].path, "img.bin");
	assert_true(d.listed[0].binary);
	assert_string_equal(d.listed[1].path, "sub/d.txt");
	assert_int_equal(d.listed[1].status, 'R');
}

/* More files than the list holds: the totals count them all. */
static void
test_list_is_bounded(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	char name[64];
	int i;

	snapshot(fx);
	for (i = 0; i < GITEVIDENCE_LIST_MAX + 5; i++) {
		snprintf(name, sizeof(name), "gen/f%02d.txt", i);
		write_file(fx->repo, name, "x\n");
	}
	diff(&d, fx);
	assert_int_equal(d.files_changed, GITEVIDENCE_LIST_MAX + 5);
	assert_int_equal(d.lines_added, GITEVIDENCE_LIST_MAX + 5);
	assert_int_equal(d.nlisted, GITEVIDENCE_LIST_MAX);
}

/* Snapshot after snapshot, as attempt after attempt: each diff counts
 * only what changed since its own start, including a file changed
 * back to what the index of the repository holds. */
static void
test_snapshots_in_a_row(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	char p[PATH_MAX];

	snapshot(fx);
	write_file(fx->repo, "a.txt", "1\n2\n3\n4\n");
	diff(&d, fx);
	assert_int_equal(d.files_changed, 1);
	assert_int_equal(d.lines_added, 1);
	snapshot(fx);
	diff(&d, fx);
	assert_int_equal(d.files_changed, 0);
	snapshot(fx);
	write_file(fx->repo, "a.txt", "1\n2\n3\n");
	write_file(fx->repo, "sub/deep/e.txt", "e\n");
	diff(&d, fx);
	assert_int_equal(d.files_changed, 2);
	assert_int_equal(d.lines_added, 1);
	assert_int_equal(d.lines_removed, 1);
	assert_string_equal(d.listed[0].path, "a.txt");
	assert_string_equal(d.listed[1].path, "sub/deep/e.txt");
	snapshot(fx);
	/* a file written again with the same bytes is no change */
	write_file(fx->repo, "sub/deep/e.txt", "e\n");
	snprintf(p, sizeof(p), "%s/sub/deep/e.txt", fx->repo);
	assert_int_equal(chmod(p, 0755), 0); /* but a mode is */
	diff(&d, fx);
	assert_int_equal(d.files_changed, 1);
	assert_int_equal(d.lines_added, 0);
	assert_string_equal(d.listed[0].path, "sub/deep/e.txt");
}

/* A directory renamed, a file replaced by a directory, a directory
 * removed with what it held, a nested repository: counted as a full
 * look at the tree counts them. */
static void
test_dirs_moved_and_replaced(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	char from[PATH_MAX], to[PATH_MAX];

	write_file(fx->repo, "lib/x.c", "x\n");
	write_file(fx->repo, "lib/y.c", "y\n");
	snapshot(fx);
	snprintf(from, sizeof(from), "%s/lib", fx->repo);
	snprintf(to, sizeof(to), "%s/src", fx->repo);
	assert_int_equal(rename(from, to), 0);
	write_file(fx->repo, "src/z.c", "z\n");
	diff(&d, fx);
	assert_int_equal(d.files_changed, 3); /* 2 renamed, 1 added */
	snapshot(fx);
	snprintf(from, sizeof(from), "%s/a.txt", fx->repo);
	assert_int_equal(unlink(from), 0);
	write_file(fx->repo, "a.txt/inner.txt", "i\n");
	snprintf(from, sizeof(from), "%s/src/x.c", fx->repo);
	assert_int_equal(unlink(from), 0);
	snprintf(from, sizeof(from), "%s/src/y.c", fx->repo);
	assert_int_equal(unlink(from), 0);
	snprintf(from, sizeof(from), "%s/src/z.c", fx->repo);
	assert_int_equal(unlink(from), 0);
	snprintf(from, sizeof(from), "%s/src", fx->repo);
	assert_int_equal(rmdir(from), 0);
	git_ok(fx->repo, "init", "-q", "nested", NULL);
	write_file(fx->repo, "nested/n.txt", "n\n");
	diff(&d, fx);
	/* a.txt deleted, a.txt/inner.txt added, src/{x,y,z}.c deleted */
	assert_int_equal(d.files_changed, 5);
	assert_int_equal(d.lines_added, 1);
	assert_int_equal(d.lines_removed, 6);
}

/* Forty attempts in a row, each changing one file, in a directory or
 * beside it: each counts that one file (the trees a kept tree hashes
 * are dropped and made again every so often on the way). */
static void
test_many_attempts(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	char name[64], text[64];
	int i;

	for (i = 0; i < 40; i++) {
		snapshot(fx);
		snprintf(name, sizeof(name),
		    i % 3 == 0 ? "a.txt" : "sub/f%d.txt", i % 5);
		snprintf(text, sizeof(text), "round %d\n", i);
		write_file(fx->repo, name, text);
		diff(&d, fx);
		assert_int_equal(d.files_changed, 1);
		assert_string_equal(d.listed[0].path, name);
	}
}

/* Not a repository, a bad or lost snapshot: errors, not figures. */
static void
test_errors(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	struct sc_err err = {0, ""};
	char hex[GITWORK_HEXSZ];

	assert_int_equal(
	    gitevidence_snapshot(hex, fx->w, "/", NULL, &err), SC_EDATA);
	assert_int_equal(gitevidence_diff(&d, fx->w, fx->repo, "nothex", fx->ex,
			     "story.md", &err),
	    SC_ESOFTWARE);
	assert_int_equal(gitevidence_diff(&d, fx->w, fx->repo,
			     "0123456789012345678901234567890123456789", fx->ex,
			     "story.md", &err),
	    SC_EIO);
	assert_non_null(strstr(err.msg, "snapshot"));
}

/* The diff as text (docs/evidence.md#the-attempts-diff): `git diff -M`'s
 * patch of the counted files only, hunks, a rename, a binary file. */
static void
test_patch_text(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	struct gitevidence_patch pt = {STRBUF_INIT, 0, false, 0};
	struct sc_err err = {0, ""};
	char from[PATH_MAX], to[PATH_MAX];
	const char *t;
	FILE *f;

	snapshot(fx);
	write_file(fx->repo, "a.txt", "1\nTWO\n3\n");
	snprintf(from, sizeof(from), "%s/sub/c.txt", fx->repo);
	snprintf(to, sizeof(to), "%s/sub/d.txt", fx->repo);
	assert_int_equal(rename(from, to), 0);
	snprintf(to, sizeof(to), "%s/img.bin", fx->repo);
	assert_non_null(f = fopen(to, "wb"));
	assert_int_equal(fwrite("\0\1\2\0", 1, 4, f), 4);
	assert_int_equal(fclose(f), 0);
	write_file(fx->repo, "story.md", "changed\n");
	write_file(fx->repo, EX "/logs/x", "state\n");
	assert_int_equal(gitevidence_diff_patch(&d, &pt, fx->w, fx->repo,
			     fx->base, fx->ex, "story.md", &err),
	    0);
	t = pt.text.buf;
	assert_int_equal(d.files_changed, 3);
	assert_int_equal(pt.files, 3);
	assert_false(pt.cut);
	assert_int_equal(
	    strncmp(t, "diff --git a/a.txt b/a.txt\nindex ", 33), 0);
	assert_non_null(strstr(t,
	    "\n--- a/a.txt\n+++ b/a.txt\n"
	    "@@ -1,3 +1,3 @@\n 1\n-2\n+TWO\n 3\n"));
	assert_non_null(strstr(t,
	    "\ndiff --git a/img.bin b/img.bin\n"
	    "new file mode 100644\n"));
	assert_non_null(
	    strstr(t, "Binary files /dev/null and b/img.bin differ\n"));
	assert_non_null(strstr(t,
	    "\ndiff --git a/sub/c.txt b/sub/d.txt\n"
	    "similarity index 100%\n"
	    "rename from sub/c.txt\nrename to sub/d.txt\n"));
	assert_null(strstr(t, "story.md"));
	assert_null(strstr(t, EX));
	gitevidence_patch_release(&pt);
	gitevidence_patch_release(NULL);
}

/* Bounded: whole lines up to max, the files beyond it not counted as
 * shown; the counts still hold every file. */
static void
test_patch_bounded(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	struct gitevidence_patch pt = {STRBUF_INIT, 300, false, 0};
	struct sc_err err = {0, ""};
	char big[4096];
	size_t n = 0;
	int i;

	for (i = 0; i < 200; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "line %d\n", i);
	snapshot(fx);
	write_file(fx->repo, "a.txt", big);
	write_file(fx->repo, "z.txt", "after\n");
	assert_int_equal(gitevidence_diff_patch(&d, &pt, fx->w, fx->repo,
			     fx->base, fx->ex, "story.md", &err),
	    0);
	assert_int_equal(d.files_changed, 2);
	assert_int_equal(d.lines_added, 201);
	assert_true(pt.cut);
	assert_int_equal(pt.files, 0);
	assert_true(pt.text.len > 100 && pt.text.len <= 300);
	assert_int_equal(pt.text.buf[pt.text.len - 1], '\n');
	assert_null(strstr(pt.text.buf, "z.txt"));
	gitevidence_patch_release(&pt);
}

/* Where a diff is kept: its log's name, ".diff" for ".log". */
static void
test_patch_path(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(gitevidence_patch_path(out, sizeof(out),
			     "/s/.storyctl/logs/1.2.a3.1700000000000.log"),
	    0);
	assert_string_equal(out, "/s/.storyctl/logs/1.2.a3.1700000000000.diff");
	assert_int_equal(gitevidence_patch_path(out, sizeof(out), "x.txt"), -1);
	assert_int_equal(gitevidence_patch_path(out, sizeof(out), ""), -1);
	assert_int_equal(gitevidence_patch_path(out, 6, "a.log"), -1);
	assert_int_equal(gitevidence_patch_path(out, 7, "a.log"), 0);
	assert_string_equal(out, "a.diff");
}

/* What changed since gitevidence_changed()'s answer, joined by spaces,
 * or "unknown". */
static const char *
changed(struct fx *fx)
{
	static char out[1024];
	struct strlist paths = {0};
	struct sc_err err = {0, ""};
	bool known = true;
	size_t i;

	assert_int_equal(
	    gitevidence_changed(&paths, &known, fx->w, fx->repo, &err), 0);
	snprintf(out, sizeof(out), "%s", known ? "" : "unknown");
	for (i = 0; i < paths.n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
		    i > 0 ? " " : "", paths.items[i]);
	strlist_release(&paths);
	return out;
}

/*
 * A slot's worktree (docs/git-work.md#what-a-switch-looks-at): the
 * changes since a mark are known, also across the snapshots of an
 * attempt and a move of the tree, and the snapshot after the move still
 * counts what changed before it.
 */
static void
test_mark_and_move(void **state)
{
	struct fx *fx = *state;
	struct gitevidence_diff d;
	struct sc_err err = {0, ""};
	char state_dir[PATH_MAX], moved[PATH_MAX];

	/* the state dir outside the tree, as a worktree's is */
	snprintf(state_dir, sizeof(state_dir), "%s/state", fx->root);
	snprintf(fx->ex, sizeof(fx->ex), "%s", state_dir);
	assert_string_equal(changed(fx), "unknown"); /* never marked */
	assert_int_equal(gitevidence_mark(fx->w, fx->repo, state_dir, &err), 0);
	assert_string_equal(changed(fx), "");
	snapshot(fx);
	write_file(fx->repo, "a.txt", "1\nTWO\n3\n");
	assert_string_equal(changed(fx), "a.txt");
	snprintf(moved, sizeof(moved), "%s/moved", fx->root);
	assert_int_equal(rename(fx->repo, moved), 0);
	assert_int_equal(
	    gitevidence_watches_move(fx->w, fx->repo, moved, &err), 0);
	snprintf(fx->repo, sizeof(fx->repo), "%s", moved);
	write_file(fx->repo, "new/n.c", "int x;\n");
	/* the directory stands for what was made in it before its watch */
	assert_string_equal(changed(fx), "a.txt new");
	/* the watch's paths went to changed(): the snapshot sees them */
	diff(&d, fx);
	assert_int_equal(d.files_changed, 2);
	assert_int_equal(d.lines_added, 2);
	assert_int_equal(d.lines_removed, 1);
	/* a new mark starts afresh; the old name is no longer known */
	assert_int_equal(gitevidence_mark(fx->w, fx->repo, state_dir, &err), 0);
	assert_string_equal(changed(fx), "");
	write_file(fx->repo, "sub/c.txt", "c2\n");
	assert_string_equal(changed(fx), "sub/c.txt");
	gitevidence_watches_drop(fx->w, fx->repo);
	assert_string_equal(changed(fx), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_nothing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_story_state_ignored_left_out, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_counts, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_base_is_the_start_not_head, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_rename_binary_absolute_story, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_list_is_bounded, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_errors, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_snapshots_in_a_row, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_dirs_moved_and_replaced, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_many_attempts, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_patch_text, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_patch_bounded, fx_setup, fx_teardown),
	    cmocka_unit_test(test_patch_path),
	    {"watched: test_patch_text", test_patch_text, fx_setup_watch,
		fx_teardown, NULL},
	    {"watched: test_patch_bounded", test_patch_bounded, fx_setup_watch,
		fx_teardown, NULL},
	    {"watched: test_nothing", test_nothing, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_story_state_ignored_left_out",
		test_story_state_ignored_left_out, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_counts", test_counts, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_base_is_the_start_not_head",
		test_base_is_the_start_not_head, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_rename_binary_absolute_story",
		test_rename_binary_absolute_story, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_list_is_bounded", test_list_is_bounded,
		fx_setup_watch, fx_teardown, NULL},
	    {"watched: test_errors", test_errors, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_snapshots_in_a_row", test_snapshots_in_a_row,
		fx_setup_watch, fx_teardown, NULL},
	    {"watched: test_dirs_moved_and_replaced",
		test_dirs_moved_and_replaced, fx_setup_watch, fx_teardown,
		NULL},
	    {"watched: test_many_attempts", test_many_attempts, fx_setup_watch,
		fx_teardown, NULL},
	    {"watched: test_mark_and_move", test_mark_and_move, fx_setup_watch,
		fx_teardown, NULL},
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
