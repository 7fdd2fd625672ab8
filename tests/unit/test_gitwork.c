/*
 * test_gitwork.c - work tree primitives: dirty detection, committing
 * everything, hard reset plus clean, linked worktrees.
 *
 * Every test gets a fresh temp directory holding repo/ (a repository on
 * main with one commit: .gitignore ignoring *.log, a.txt, b.txt,
 * sub/c.txt) and an untracked, NOT ignored state dir repo/.storyctl/
 * with state.db, so that only the exclude_dir argument keeps it out.
 * The results are checked with the git command line.
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

#include "state/gitwork.h"
#include "tests/unit/fixture_fs.h"

#define EX ".storyctl"
#define NOW 1700000000

struct fx {
	char root[PATH_MAX]; /* realpath of the temp dir */
	char repo[PATH_MAX]; /* root/repo */
	const void *prestate; /* the table row, for table-driven tests */
};

/* The file's text (at most 4095 bytes) into buf; "" when missing. */
static const char *
read_file(char *buf, size_t len, const char *dir, const char *name)
{
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	buf[0] = '\0';
	fxfs_join(path, dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return buf;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int
exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	fxfs_join(path, dir, name);
	return lstat(path, &st) == 0;
}

static void
remove_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	fxfs_join(path, dir, name);
	assert_int_equal(unlink(path), 0);
}

/*
 * Run `git -C dir args...` (NULL-terminated); its stdout, trailing
 * newlines cut, into out (outlen bytes, may be NULL).  Returns the exit
 * status.
 */
static int
git_v(char *out, size_t outlen, const char *dir, va_list ap)
{
	const char *argv[32];
	int argc = 0;

	argv[argc++] = "git";
	argv[argc++] = "-C";
	argv[argc++] = dir;
	while ((argv[argc] = va_arg(ap, const char *)) != NULL)
		assert_true(++argc < 31);
	return fxfs_run(out, outlen, argv);
}

static int
git(char *out, size_t outlen, const char *dir, ...)
{
	va_list ap;
	int rc;

	va_start(ap, dir);
	rc = git_v(out, outlen, dir, ap);
	va_end(ap);
	return rc;
}

/* The same, asserting exit status 0. */
static void
git_ok(char *out, size_t outlen, const char *dir, ...)
{
	va_list ap;
	int rc;

	va_start(ap, dir);
	rc = git_v(out, outlen, dir, ap);
	va_end(ap);
	assert_int_equal(rc, 0);
}

/* `git rev-parse rev` into hex (GITWORK_HEXSZ bytes). */
static void
rev(char *hex, const char *dir, const char *r)
{
	char buf[256];

	git_ok(buf, sizeof(buf), dir, "rev-parse", "--verify", "-q", r, NULL);
	assert_int_equal(strlen(buf), 40);
	memcpy(hex, buf, GITWORK_HEXSZ);
}

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	fx->prestate = *state;
	snprintf(tmpl, sizeof(tmpl), "%s/gitwork-test-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->root));
	fxfs_join(fx->repo, fx->root, "repo");
	/* no user or system configuration leaks in */
	fxfs_git_env(fx->root);
	git_ok(NULL, 0, fx->root, "init", "-q", "-b", "main", "repo", NULL);
	fxfs_write_file(fx->repo, ".gitignore", "*.log\n");
	fxfs_write_file(fx->repo, "a.txt", "a\n");
	fxfs_write_file(fx->repo, "b.txt", "b\n");
	fxfs_write_file(fx->repo, "sub/c.txt", "c\n");
	git_ok(NULL, 0, fx->repo, "add", "-A", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "init", NULL);
	fxfs_write_file(fx->repo, EX "/state.db", "db\n");
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

/* is_dirty that must succeed; returns *out_dirty. */
static int
dirty(const char *dir, const char *ex, char *why, size_t whylen)
{
	struct sc_err err = {0, ""};
	int d = -1;

	if (gitwork_is_dirty(&d, why, whylen, dir, ex, &err) != 0)
		fail_msg("gitwork_is_dirty: %s", err.msg);
	assert_true(d == 0 || d == 1);
	return d;
}

static void
commit_all(const char *dir, const char *branch, const char *msg,
    int want_committed, char *hex)
{
	struct sc_err err = {0, ""};
	int committed = -1;

	if (gitwork_commit_all(
		&committed, hex, dir, branch, EX, msg, NOW, &err) != 0)
		fail_msg("gitwork_commit_all: %s", err.msg);
	assert_int_equal(committed, want_committed);
	if (hex != NULL)
		assert_int_equal(strlen(hex), want_committed ? 40 : 0);
}

/* `git status --porcelain` without the state dir. */
static void
porcelain(char *out, size_t len, const char *dir)
{
	git_ok(out, len, dir, "status", "--porcelain", "--", ".",
	    ":(exclude)" EX, NULL);
}

/* ---- is_dirty ---------------------------------------------------- */

static void
test_clean_repo(void **state)
{
	struct fx *fx = *state;
	char why[256], abs[PATH_MAX];

	assert_int_equal(dirty(fx->repo, EX, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(dirty(fx->repo, "./" EX "/", why, sizeof(why)), 0);
	fxfs_join(abs, fx->repo, EX);
	assert_int_equal(dirty(fx->repo, abs, why, sizeof(why)), 0);
	/* the state dir is not ignored here: only exclude_dir hides it */
	assert_int_equal(dirty(fx->repo, NULL, why, sizeof(why)), 1);
	assert_string_equal(why, "untracked " EX "/state.db");
	/* a sibling whose name merely starts like the state dir counts */
	fxfs_write_file(fx->repo, EX "x/f", "f\n");
	assert_int_equal(dirty(fx->repo, EX, why, sizeof(why)), 1);
	assert_string_equal(why, "untracked " EX "x/f");
}

struct dirty_case {
	const char *name;
	void (*act)(struct fx *);
	int dirty;
	const char *why;
};

static void
act_modify(struct fx *fx)
{
	fxfs_write_file(fx->repo, "a.txt", "changed\n");
}

static void
act_untracked(struct fx *fx)
{
	fxfs_write_file(fx->repo, "new.txt", "n\n");
}

static void
act_untracked_dir(struct fx *fx)
{
	fxfs_write_file(fx->repo, "newdir/deep/n.txt", "n\n");
}

static void
act_staged_new(struct fx *fx)
{
	fxfs_write_file(fx->repo, "new.txt", "n\n");
	git_ok(NULL, 0, fx->repo, "add", "new.txt", NULL);
}

static void
act_staged_mod(struct fx *fx)
{
	fxfs_write_file(fx->repo, "sub/c.txt", "changed\n");
	git_ok(NULL, 0, fx->repo, "add", "sub/c.txt", NULL);
}

static void
act_deleted(struct fx *fx)
{
	remove_file(fx->repo, "b.txt");
}

static void
act_ignored(struct fx *fx)
{
	fxfs_write_file(fx->repo, "build.log", "l\n");
	fxfs_write_file(fx->repo, "logs/x.log", "l\n");
}

static void
act_excluded(struct fx *fx)
{
	fxfs_write_file(fx->repo, EX "/logs/attempt-1.txt", "x\n");
	fxfs_write_file(fx->repo, EX "/worktrees/x/f", "x\n");
}

static const struct dirty_case dirty_cases[] = {
    {"modified", act_modify, 1, "modified a.txt"},
    {"untracked", act_untracked, 1, "untracked new.txt"},
    {"untracked dir", act_untracked_dir, 1, "untracked newdir/deep/n.txt"},
    {"staged new", act_staged_new, 1, "added new.txt"},
    {"staged modified", act_staged_mod, 1, "staged sub/c.txt"},
    {"deleted", act_deleted, 1, "deleted b.txt"},
    {"ignored", act_ignored, 0, ""},
    {"excluded", act_excluded, 0, ""},
};

static void
test_dirty_case(void **state)
{
	struct fx *fx = *state;
	const struct dirty_case *c = fx->prestate;
	char why[256];

	c->act(fx);
	if (dirty(fx->repo, EX, why, sizeof(why)) != c->dirty)
		fail_msg("%s: want dirty=%d, why '%s'", c->name, c->dirty, why);
	assert_string_equal(why, c->why);
	/* a NULL why is allowed */
	assert_int_equal(dirty(fx->repo, EX, NULL, 0), c->dirty);
}

static void
test_dirty_why_many(void **state)
{
	struct fx *fx = *state;
	char why[256], tiny[8];

	fxfs_write_file(fx->repo, "n1", "1\n");
	fxfs_write_file(fx->repo, "n2", "2\n");
	fxfs_write_file(fx->repo, "n3", "3\n");
	fxfs_write_file(fx->repo, "n4", "4\n");
	fxfs_write_file(fx->repo, "n5", "5\n");
	assert_int_equal(dirty(fx->repo, EX, why, sizeof(why)), 1);
	assert_string_equal(why,
	    "untracked n1, untracked n2, untracked n3 "
	    "and 2 more");
	assert_int_equal(dirty(fx->repo, EX, tiny, sizeof(tiny)), 1);
	assert_string_equal(tiny, "untrack");
}

static void
test_dirty_subdir_and_errors(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char sub[PATH_MAX], none[PATH_MAX], why[64];
	int d = -1;

	fxfs_join(sub, fx->repo, "sub");
	assert_int_equal(dirty(sub, EX, why, sizeof(why)), 0);
	fxfs_write_file(fx->repo, "a.txt", "x\n");
	assert_int_equal(dirty(sub, EX, why, sizeof(why)), 1);
	/* paths are relative to the work tree root, not to repo_dir */
	assert_string_equal(why, "modified a.txt");

	assert_int_equal(
	    gitwork_is_dirty(&d, why, sizeof(why), fx->root, EX, &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, fx->root));
	assert_non_null(strstr(err.msg, "not a git repository"));
	fxfs_join(none, fx->root, "missing");
	assert_int_equal(
	    gitwork_is_dirty(&d, NULL, 0, none, EX, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, none));
	assert_int_equal(
	    gitwork_is_dirty(&d, NULL, 0, fx->repo, "../x", &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "../x"));
	assert_int_equal(
	    gitwork_is_dirty(&d, NULL, 0, fx->repo, "./", &err), SC_EDATA);
	assert_int_equal(
	    gitwork_is_dirty(NULL, NULL, 0, fx->repo, EX, &err), SC_ESOFTWARE);
}

/* ---- head and branch_tip ----------------------------------------- */

static void
test_head(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char hex[GITWORK_HEXSZ], want[GITWORK_HEXSZ], ref[64], small[8];
	char unborn[PATH_MAX];

	rev(want, fx->repo, "HEAD");
	assert_int_equal(
	    gitwork_head(hex, ref, sizeof(ref), fx->repo, &err), 0);
	assert_string_equal(hex, want);
	assert_string_equal(ref, "refs/heads/main");
	assert_int_equal(
	    gitwork_head(hex, small, sizeof(small), fx->repo, &err),
	    SC_ESOFTWARE);
	assert_non_null(strstr(err.msg, "refs/heads/main"));

	git_ok(NULL, 0, fx->repo, "checkout", "-q", "--detach", NULL);
	assert_int_equal(
	    gitwork_head(hex, ref, sizeof(ref), fx->repo, &err), 0);
	assert_string_equal(hex, want);
	assert_string_equal(ref, "");

	fxfs_join(unborn, fx->root, "unborn");
	git_ok(NULL, 0, fx->root, "init", "-q", "-b", "trunk", "unborn", NULL);
	assert_int_equal(gitwork_head(hex, ref, sizeof(ref), unborn, &err), 0);
	assert_string_equal(hex, "");
	assert_string_equal(ref, "refs/heads/trunk");
}

static void
test_branch_tip(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char hex[GITWORK_HEXSZ], want[GITWORK_HEXSZ];
	int found = -1;

	rev(want, fx->repo, "HEAD");
	assert_int_equal(
	    gitwork_branch_tip(hex, &found, fx->repo, "main", &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(hex, want);
	assert_int_equal(gitwork_branch_tip(
			     hex, &found, fx->repo, "storyctl/wip/none", &err),
	    0);
	assert_int_equal(found, 0);
	assert_string_equal(hex, "");
	assert_int_equal(
	    gitwork_branch_tip(hex, &found, fx->repo, "bad..name", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "bad..name"));
}

/* ---- commit_all -------------------------------------------------- */

static void
test_commit_current_branch(void **state)
{
	struct fx *fx = *state;
	char old[GITWORK_HEXSZ], hex[GITWORK_HEXSZ], now[GITWORK_HEXSZ];
	char out[4096], buf[256];

	rev(old, fx->repo, "HEAD");
	fxfs_write_file(fx->repo, "a.txt", "a2\n"); /* modified */
	remove_file(fx->repo, "b.txt"); /* deleted */
	fxfs_write_file(fx->repo, "new.txt", "new\n"); /* new */
	fxfs_write_file(fx->repo, "sub/deep/d.txt", "d\n"); /* new, new dir */
	fxfs_write_file(fx->repo, "x.log", "ignored\n"); /* ignored */
	fxfs_write_file(fx->repo, EX "/state.db", "db2\n"); /* excluded */
	commit_all(fx->repo, NULL, "story 1-1: done\n\n", 1, hex);

	rev(now, fx->repo, "HEAD");
	assert_string_equal(hex, now);
	rev(buf, fx->repo, "HEAD^");
	assert_string_equal(buf, old);
	git_ok(out, sizeof(out), fx->repo, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(out, "refs/heads/main");
	git_ok(out, sizeof(out), fx->repo, "ls-tree", "-r", "--name-only",
	    "HEAD", NULL);
	assert_string_equal(out,
	    ".gitignore\na.txt\nnew.txt\nsub/c.txt\n"
	    "sub/deep/d.txt");
	git_ok(out, sizeof(out), fx->repo, "show", "HEAD:a.txt", NULL);
	assert_string_equal(out, "a2");
	/* index matches HEAD, work tree matches the index */
	assert_int_equal(
	    git(NULL, 0, fx->repo, "diff", "--cached", "--quiet", NULL), 0);
	porcelain(out, sizeof(out), fx->repo);
	assert_string_equal(out, "");
	/* the ignored file and the state dir are still there, untouched */
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, "x.log"), "ignored\n");
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, EX "/state.db"), "db2\n");
	git_ok(out, sizeof(out), fx->repo, "log", "-1",
	    "--format=%an <%ae>|%cn <%ce>|%at|%ct|%ad|%B", "--date=raw", NULL);
	assert_string_equal(out,
	    "storyctl <storyctl@localhost>|storyctl <storyctl@localhost>|"
	    "1700000000|1700000000|1700000000 +0000|story 1-1: done");
	assert_int_equal(dirty(fx->repo, EX, NULL, 0), 0);
}

static void
test_commit_nothing(void **state)
{
	struct fx *fx = *state;
	char old[GITWORK_HEXSZ], now[GITWORK_HEXSZ], hex[GITWORK_HEXSZ];
	struct sc_err err = {0, ""};
	int committed = -1;

	rev(old, fx->repo, "HEAD");
	fxfs_write_file(fx->repo, "x.log", "ignored\n");
	fxfs_write_file(fx->repo, EX "/more", "m\n");
	commit_all(fx->repo, NULL, "nothing", 0, hex);
	rev(now, fx->repo, "HEAD");
	assert_string_equal(now, old);
	/* nothing on a new branch creates no branch either */
	commit_all(fx->repo, "storyctl/wip/empty", "nothing", 0, NULL);
	assert_int_not_equal(git(NULL, 0, fx->repo, "rev-parse", "--verify",
				 "-q", "refs/heads/storyctl/wip/empty", NULL),
	    0);
	/* an empty message is a bug in the caller */
	assert_int_equal(gitwork_commit_all(&committed, NULL, fx->repo, NULL,
			     EX, " \n\n", NOW, &err),
	    SC_ESOFTWARE);
	assert_int_equal(gitwork_commit_all(&committed, NULL, fx->repo,
			     "bad..branch", EX, "m", NOW, &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "bad..branch"));
}

static void
test_commit_other_branch(void **state)
{
	struct fx *fx = *state;
	char head[GITWORK_HEXSZ], hex[GITWORK_HEXSZ], hex2[GITWORK_HEXSZ];
	char buf[GITWORK_HEXSZ], out[4096];

	rev(head, fx->repo, "HEAD");
	fxfs_write_file(fx->repo, "a.txt", "wip\n");
	fxfs_write_file(fx->repo, "new.txt", "new\n");
	commit_all(
	    fx->repo, "storyctl/wip/x", "story x: deferred (wip)", 1, hex);
	rev(buf, fx->repo, "refs/heads/storyctl/wip/x");
	assert_string_equal(buf, hex);
	rev(buf, fx->repo, "storyctl/wip/x^");
	assert_string_equal(buf, head);
	/* the current branch, HEAD, index and work tree are as they were */
	rev(buf, fx->repo, "HEAD");
	assert_string_equal(buf, head);
	rev(buf, fx->repo, "refs/heads/main");
	assert_string_equal(buf, head);
	git_ok(out, sizeof(out), fx->repo, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(out, "refs/heads/main");
	porcelain(out, sizeof(out), fx->repo);
	assert_string_equal(out, " M a.txt\n?? new.txt");
	git_ok(out, sizeof(out), fx->repo, "ls-tree", "-r", "--name-only",
	    "storyctl/wip/x", NULL);
	assert_string_equal(
	    out, ".gitignore\na.txt\nb.txt\nnew.txt\nsub/c.txt");
	/* a second commit builds on the branch tip, not on HEAD */
	fxfs_write_file(fx->repo, "b.txt", "wip2\n");
	commit_all(fx->repo, "storyctl/wip/x", "again", 1, hex2);
	rev(buf, fx->repo, "storyctl/wip/x^");
	assert_string_equal(buf, hex);
	git_ok(
	    out, sizeof(out), fx->repo, "show", "storyctl/wip/x:b.txt", NULL);
	assert_string_equal(out, "wip2");
	/* naming the checked-out branch is committing on HEAD */
	commit_all(fx->repo, "main", "on main", 1, hex);
	rev(buf, fx->repo, "HEAD");
	assert_string_equal(buf, hex);
	porcelain(out, sizeof(out), fx->repo);
	assert_string_equal(out, "");
}

static void
test_commit_unborn(void **state)
{
	struct fx *fx = *state;
	char dir[PATH_MAX], out[256], hex[GITWORK_HEXSZ];

	fxfs_join(dir, fx->root, "fresh");
	git_ok(NULL, 0, fx->root, "init", "-q", "-b", "main", "fresh", NULL);
	commit_all(dir, NULL, "empty", 0, NULL);
	fxfs_write_file(dir, "f.txt", "f\n");
	commit_all(dir, NULL, "first", 1, hex);
	git_ok(out, sizeof(out), dir, "rev-list", "--count", "HEAD", NULL);
	assert_string_equal(out, "1");
	rev(out, dir, "refs/heads/main");
	assert_string_equal(out, hex);
}

static void
test_commit_refuses_tracked_state_dir(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char old[GITWORK_HEXSZ], now[GITWORK_HEXSZ];
	int committed = -1;

	git_ok(NULL, 0, fx->repo, "add", EX "/state.db", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "oops", NULL);
	rev(old, fx->repo, "HEAD");
	fxfs_write_file(fx->repo, "a.txt", "x\n");
	assert_int_equal(gitwork_commit_all(&committed, NULL, fx->repo, NULL,
			     EX, "m", NOW, &err),
	    SC_EDATA);
	assert_int_equal(committed, 0);
	assert_non_null(strstr(err.msg, EX " is tracked"));
	rev(now, fx->repo, "HEAD");
	assert_string_equal(now, old);
}

/* ---- reset_hard -------------------------------------------------- */

static void
test_reset_hard(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char head[GITWORK_HEXSZ], buf[256], out[1024];

	rev(head, fx->repo, "HEAD");
	fxfs_write_file(fx->repo, "a.txt", "changed\n");
	remove_file(fx->repo, "b.txt");
	fxfs_write_file(fx->repo, "staged.txt", "s\n");
	git_ok(NULL, 0, fx->repo, "add", "staged.txt", NULL);
	fxfs_write_file(fx->repo, "newdir/deep/n.txt", "n\n");
	fxfs_write_file(fx->repo, "mixed/u.txt", "u\n");
	fxfs_write_file(fx->repo, "mixed/keep.log", "k\n");
	fxfs_write_file(fx->repo, "x.log", "ignored\n");
	fxfs_write_file(fx->repo, EX "/state.db", "db2\n");
	fxfs_write_file(fx->repo, EX "/new", "n\n");

	if (gitwork_reset_hard(fx->repo, head, EX, &err) != 0)
		fail_msg("gitwork_reset_hard: %s", err.msg);
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, "a.txt"), "a\n");
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, "b.txt"), "b\n");
	assert_false(exists(fx->repo, "staged.txt"));
	assert_false(exists(fx->repo, "newdir"));
	assert_false(exists(fx->repo, "mixed/u.txt"));
	/* ignored files and the state dir are never touched */
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, "mixed/keep.log"), "k\n");
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, "x.log"), "ignored\n");
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, EX "/state.db"), "db2\n");
	assert_true(exists(fx->repo, EX "/new"));
	porcelain(out, sizeof(out), fx->repo);
	assert_string_equal(out, "");
	rev(buf, fx->repo, "HEAD");
	assert_string_equal(buf, head);
	assert_int_equal(dirty(fx->repo, EX, NULL, 0), 0);
}

static void
test_reset_hard_older_commit(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char first[GITWORK_HEXSZ], buf[GITWORK_HEXSZ], out[256];

	rev(first, fx->repo, "HEAD");
	fxfs_write_file(fx->repo, "second.txt", "2\n");
	fxfs_write_file(fx->repo, "a.txt", "a2\n");
	commit_all(fx->repo, NULL, "second", 1, NULL);
	fxfs_write_file(fx->repo, "third.txt", "3\n");
	if (gitwork_reset_hard(fx->repo, first, EX, &err) != 0)
		fail_msg("gitwork_reset_hard: %s", err.msg);
	rev(buf, fx->repo, "refs/heads/main");
	assert_string_equal(buf, first);
	assert_false(exists(fx->repo, "second.txt"));
	assert_false(exists(fx->repo, "third.txt"));
	assert_string_equal(
	    read_file(out, sizeof(out), fx->repo, "a.txt"), "a\n");
	git_ok(out, sizeof(out), fx->repo, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(out, "refs/heads/main");
}

/* Nested repositories count as dirty but are never committed or
 * cleaned (git clean keeps them without -ff). */
static void
test_nested_repo(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char nested[PATH_MAX], why[128];

	fxfs_join(nested, fx->repo, "vendor/lib");
	git_ok(NULL, 0, fx->repo, "init", "-q", "vendor/lib", NULL);
	fxfs_write_file(nested, "lib.c", "int x;\n");
	assert_int_equal(dirty(fx->repo, EX, why, sizeof(why)), 1);
	assert_string_equal(why, "untracked vendor/lib/");
	fxfs_write_file(fx->repo, "top.txt", "t\n");
	commit_all(fx->repo, NULL, "with a nested repo beside", 1, NULL);
	git_ok(
	    why, sizeof(why), fx->repo, "ls-tree", "--name-only", "HEAD", NULL);
	assert_string_equal(why, ".gitignore\na.txt\nb.txt\nsub\ntop.txt");
	if (gitwork_reset_hard(fx->repo, "HEAD", EX, &err) != 0)
		fail_msg("gitwork_reset_hard: %s", err.msg);
	assert_true(exists(nested, "lib.c"));
	assert_true(exists(nested, ".git"));
}

/* A detached HEAD moves with the commit and stays detached. */
static void
test_commit_detached(void **state)
{
	struct fx *fx = *state;
	char main_tip[GITWORK_HEXSZ], hex[GITWORK_HEXSZ], buf[GITWORK_HEXSZ];

	rev(main_tip, fx->repo, "main");
	git_ok(NULL, 0, fx->repo, "checkout", "-q", "--detach", NULL);
	fxfs_write_file(fx->repo, "d.txt", "d\n");
	commit_all(fx->repo, NULL, "detached", 1, hex);
	rev(buf, fx->repo, "HEAD");
	assert_string_equal(buf, hex);
	rev(buf, fx->repo, "HEAD^");
	assert_string_equal(buf, main_tip);
	rev(buf, fx->repo, "main");
	assert_string_equal(buf, main_tip);
	assert_int_not_equal(
	    git(NULL, 0, fx->repo, "symbolic-ref", "-q", "HEAD", NULL), 0);
}

static void
test_reset_hard_errors(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char head[GITWORK_HEXSZ], buf[256];
	const char *bad = "0123456789012345678901234567890123456789";

	assert_int_equal(gitwork_reset_hard(fx->repo, bad, EX, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, bad));
	assert_int_equal(
	    gitwork_reset_hard(fx->repo, "not-a-rev", EX, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "not-a-rev"));

	/* a tracked state dir: refused before anything changes */
	git_ok(NULL, 0, fx->repo, "add", EX "/state.db", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "oops", NULL);
	rev(head, fx->repo, "HEAD~1");
	fxfs_write_file(fx->repo, "a.txt", "changed\n");
	fxfs_write_file(fx->repo, "u.txt", "u\n");
	assert_int_equal(
	    gitwork_reset_hard(fx->repo, head, EX, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, EX));
	assert_string_equal(
	    read_file(buf, sizeof(buf), fx->repo, "a.txt"), "changed\n");
	assert_true(exists(fx->repo, "u.txt"));
	assert_true(exists(fx->repo, EX "/state.db"));
}

/* ---- worktrees --------------------------------------------------- */

static void
wt_add(struct fx *fx, const char *name, const char *path, const char *branch,
    const char *base)
{
	struct sc_err err = {0, ""};

	if (gitwork_worktree_add(fx->repo, name, path, branch, base, &err) != 0)
		fail_msg("gitwork_worktree_add: %s", err.msg);
}

/* A new worktree is checked out without libgit2's filters only when no
 * filter could apply (docs/git-work.md#checkout-filters): a
 * .gitattributes asking for CRLF, in a subdirectory, or core.autocrlf
 * still gets CRLF; a plain repository gets the blob's bytes. */
static void
test_worktree_filters(void **state)
{
	struct fx *fx = *state;
	char buf[256], wa[PATH_MAX], wb[PATH_MAX], wc[PATH_MAX];

	fxfs_join(wa, fx->root, "wa");
	fxfs_join(wb, fx->root, "wb");
	fxfs_join(wc, fx->root, "wc");
	fxfs_write_file(fx->repo, "sub/lines.txt", "one\ntwo\n");
	git_ok(NULL, 0, fx->repo, "add", "-A", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "lines", NULL);
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	assert_string_equal(
	    read_file(buf, sizeof(buf), wa, "sub/lines.txt"), "one\ntwo\n");
	/* attributes deep in the tree */
	fxfs_write_file(
	    fx->repo, "sub/.gitattributes", "*.txt text eol=crlf\n");
	git_ok(NULL, 0, fx->repo, "add", "-A", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "crlf", NULL);
	wt_add(fx, "storyctl/story/b", wb, "storyctl/story/b", "HEAD");
	assert_string_equal(
	    read_file(buf, sizeof(buf), wb, "sub/lines.txt"), "one\r\ntwo\r\n");
	/* no attributes file, but core.autocrlf */
	git_ok(NULL, 0, fx->repo, "rm", "-q", "sub/.gitattributes", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "no attrs", NULL);
	git_ok(NULL, 0, fx->repo, "config", "core.autocrlf", "true", NULL);
	wt_add(fx, "storyctl/story/c", wc, "storyctl/story/c", "HEAD");
	assert_string_equal(
	    read_file(buf, sizeof(buf), wc, "sub/lines.txt"), "one\r\ntwo\r\n");
}

static void
test_worktree_name(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"storyctl/story/1-2", "storyctl-story-1-2"},
	    {"a.b_c-D9", "a.b_c-D9"},
	    {".hidden", "-hidden"},
	    {"sp ace:*?", "sp-ace---"},
	};
	struct sc_err err = {0, ""};
	char out[64], small[4];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(
		    gitwork_worktree_name(out, sizeof(out), cases[i].in, &err),
		    0);
		assert_string_equal(out, cases[i].out);
	}
	assert_int_equal(
	    gitwork_worktree_name(out, sizeof(out), "", &err), SC_ESOFTWARE);
	assert_int_equal(
	    gitwork_worktree_name(small, sizeof(small), "long", &err),
	    SC_ESOFTWARE);
}

static void
test_worktree_add_from_head(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wt[PATH_MAX], main_tip[GITWORK_HEXSZ], hex[GITWORK_HEXSZ];
	char buf[GITWORK_HEXSZ], out[4096], ref[128], want[PATH_MAX + 64];

	rev(main_tip, fx->repo, "HEAD");
	fxfs_join(wt, fx->root, "wt/deeper/a"); /* parents are created */
	wt_add(fx, "storyctl/story/a", wt, "storyctl/story/a", "HEAD");
	assert_string_equal(read_file(out, sizeof(out), wt, "a.txt"), "a\n");
	assert_string_equal(
	    read_file(out, sizeof(out), wt, "sub/c.txt"), "c\n");
	git_ok(out, sizeof(out), fx->repo, "worktree", "list", "--porcelain",
	    NULL);
	snprintf(want, sizeof(want),
	    "worktree %s\nHEAD %s\nbranch "
	    "refs/heads/storyctl/story/a",
	    wt, main_tip);
	assert_non_null(strstr(out, want));
	assert_int_equal(dirty(wt, EX, NULL, 0), 0);
	assert_int_equal(gitwork_head(buf, ref, sizeof(ref), wt, &err), 0);
	assert_string_equal(ref, "refs/heads/storyctl/story/a");
	assert_string_equal(buf, main_tip);

	/* work in the worktree lands on its branch; main is untouched */
	fxfs_write_file(wt, "story-a.txt", "a work\n");
	fxfs_write_file(wt, "a.txt", "a by story a\n");
	assert_int_equal(dirty(wt, EX, NULL, 0), 1);
	assert_int_equal(dirty(fx->repo, EX, NULL, 0), 0);
	commit_all(wt, NULL, "story a: done", 1, hex);
	rev(buf, fx->repo, "refs/heads/storyctl/story/a");
	assert_string_equal(buf, hex);
	rev(buf, fx->repo, "storyctl/story/a^");
	assert_string_equal(buf, main_tip);
	rev(buf, fx->repo, "refs/heads/main");
	assert_string_equal(buf, main_tip);
	rev(buf, fx->repo, "HEAD");
	assert_string_equal(buf, main_tip);
	assert_false(exists(fx->repo, "story-a.txt"));
	assert_string_equal(
	    read_file(out, sizeof(out), fx->repo, "a.txt"), "a\n");
	porcelain(out, sizeof(out), wt);
	assert_string_equal(out, "");
	porcelain(out, sizeof(out), fx->repo);
	assert_string_equal(out, "");

	/* reset inside the worktree acts on the worktree only */
	fxfs_write_file(wt, "stray.txt", "s\n");
	fxfs_write_file(wt, "a.txt", "mangled\n");
	fxfs_write_file(fx->repo, "main-only.txt", "m\n");
	assert_int_equal(gitwork_reset_hard(wt, hex, EX, &err), 0);
	assert_false(exists(wt, "stray.txt"));
	assert_string_equal(
	    read_file(out, sizeof(out), wt, "a.txt"), "a by story a\n");
	assert_true(exists(fx->repo, "main-only.txt"));
	rev(buf, fx->repo, "HEAD");
	assert_string_equal(buf, main_tip);
}

static void
test_worktree_add_from_branch(void **state)
{
	struct fx *fx = *state;
	char wa[PATH_MAX], wb[PATH_MAX], a_tip[GITWORK_HEXSZ], out[256];
	char buf[GITWORK_HEXSZ];

	fxfs_join(wa, fx->root, "wt/a");
	fxfs_join(wb, fx->root, "wt/b");
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	fxfs_write_file(wa, "from-a.txt", "a\n");
	commit_all(wa, NULL, "story a", 1, a_tip);
	/* b depends on a: its branch starts from a's */
	wt_add(fx, "storyctl/story/b", wb, "storyctl/story/b",
	    "refs/heads/storyctl/story/a");
	assert_string_equal(
	    read_file(out, sizeof(out), wb, "from-a.txt"), "a\n");
	rev(buf, fx->repo, "refs/heads/storyctl/story/b");
	assert_string_equal(buf, a_tip);
	/* a commit id works as base too */
	rev(buf, fx->repo, "main");
	fxfs_join(wb, fx->root, "wt/c");
	wt_add(fx, "c", wb, "storyctl/story/c", buf);
	assert_false(exists(wb, "from-a.txt"));
	git_ok(out, sizeof(out), wb, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(out, "refs/heads/storyctl/story/c");
}

static void
test_worktree_add_idempotent(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wa[PATH_MAX], other[PATH_MAX], tip[GITWORK_HEXSZ];
	char buf[GITWORK_HEXSZ], out[4096];

	fxfs_join(wa, fx->root, "wt/a");
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	fxfs_write_file(wa, "work.txt", "uncommitted\n");
	/* same name, path and branch: nothing happens, work kept */
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	assert_string_equal(
	    read_file(out, sizeof(out), wa, "work.txt"), "uncommitted\n");
	git_ok(out, sizeof(out), fx->repo, "worktree", "list", NULL);
	assert_non_null(strstr(out, wa));

	/* the name in use elsewhere or on another branch: refused */
	fxfs_join(other, fx->root, "wt/other");
	assert_int_equal(gitwork_worktree_add(fx->repo, "storyctl/story/a",
			     other, "storyctl/story/a", "HEAD", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, other));
	assert_non_null(strstr(err.msg, "storyctl-story-a"));
	assert_false(exists(fx->root, "wt/other"));
	assert_int_equal(gitwork_worktree_add(fx->repo, "storyctl/story/a", wa,
			     "storyctl/story/zz", "HEAD", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "refs/heads/storyctl/story/zz"));

	/* an existing branch is checked out as it is; base is unused */
	commit_all(wa, NULL, "a work", 1, tip);
	assert_int_equal(
	    gitwork_worktree_remove(fx->repo, "storyctl/story/a", &err), 0);
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "main");
	assert_string_equal(
	    read_file(out, sizeof(out), wa, "work.txt"), "uncommitted\n");
	rev(buf, wa, "HEAD");
	assert_string_equal(buf, tip);
}

static void
test_worktree_remove(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wa[PATH_MAX], tip[GITWORK_HEXSZ], hex[GITWORK_HEXSZ];
	char out[4096], admin[PATH_MAX];
	int found = -1;

	fxfs_join(wa, fx->root, "wt/a");
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	fxfs_write_file(wa, "w.txt", "w\n");
	commit_all(wa, NULL, "work", 1, tip);
	fxfs_write_file(wa, "uncommitted.txt", "lost\n");
	if (gitwork_worktree_remove(fx->repo, "storyctl/story/a", &err) != 0)
		fail_msg("gitwork_worktree_remove: %s", err.msg);
	assert_false(exists(fx->root, "wt/a"));
	fxfs_join(admin, fx->repo, ".git/worktrees/storyctl-story-a");
	assert_false(exists(admin, "."));
	git_ok(out, sizeof(out), fx->repo, "worktree", "list", NULL);
	assert_null(strstr(out, wa));
	git_ok(
	    out, sizeof(out), fx->repo, "worktree", "prune", "-n", "-v", NULL);
	assert_string_equal(out, "");
	/* the branch and its commit stay */
	assert_int_equal(
	    gitwork_branch_tip(hex, &found, fx->repo, "storyctl/story/a", &err),
	    0);
	assert_int_equal(found, 1);
	assert_string_equal(hex, tip);
	/* removing what is gone is fine */
	assert_int_equal(
	    gitwork_worktree_remove(fx->repo, "storyctl/story/a", &err), 0);
	assert_int_equal(gitwork_worktree_remove(fx->repo, "never", &err), 0);
}

static void
test_worktree_remove_locked(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wa[PATH_MAX];

	fxfs_join(wa, fx->root, "wt/a");
	wt_add(fx, "a", wa, "storyctl/story/a", "HEAD");
	git_ok(NULL, 0, fx->repo, "worktree", "lock", "--reason", "on usb", wa,
	    NULL);
	assert_int_equal(
	    gitwork_worktree_remove(fx->repo, "a", &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "locked"));
	assert_non_null(strstr(err.msg, "on usb"));
	assert_true(exists(wa, "a.txt"));
}

static void
test_worktree_stale(void **state)
{
	struct fx *fx = *state;
	char wa[PATH_MAX], out[256];

	fxfs_join(wa, fx->root, "wt/a");
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	fxfs_rm_tree(wa); /* dir lost, admin kept */
	wt_add(fx, "storyctl/story/a", wa, "storyctl/story/a", "HEAD");
	assert_string_equal(read_file(out, sizeof(out), wa, "a.txt"), "a\n");
	git_ok(out, sizeof(out), wa, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(out, "refs/heads/storyctl/story/a");
}

static void
test_worktree_errors(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char wa[PATH_MAX], busy[PATH_MAX], admin[PATH_MAX];

	fxfs_join(wa, fx->root, "wt/a");
	/* main is checked out in the main work tree */
	assert_int_equal(
	    gitwork_worktree_add(fx->repo, "m", wa, "main", "HEAD", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "branch main"));
	assert_false(exists(wa, "."));
	/* a non-empty directory in the way */
	fxfs_join(busy, fx->root, "busy");
	fxfs_write_file(busy, "f", "f\n");
	assert_int_equal(gitwork_worktree_add(fx->repo, "b", busy,
			     "storyctl/story/b", "HEAD", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, busy));
	fxfs_join(admin, fx->repo, ".git/worktrees/b");
	assert_false(exists(admin, "."));
	assert_int_not_equal(git(NULL, 0, fx->repo, "rev-parse", "--verify",
				 "-q", "refs/heads/storyctl/story/b", NULL),
	    0);
	/* libgit2 fails after making its admin dir: all of it is undone */
	fxfs_join(busy, fx->root, "busy/f/wt");
	assert_int_equal(gitwork_worktree_add(fx->repo, "b", busy,
			     "storyctl/story/b", "HEAD", &err),
	    SC_EIO);
	assert_non_null(strstr(err.msg, busy));
	assert_false(exists(admin, "."));
	assert_int_not_equal(git(NULL, 0, fx->repo, "rev-parse", "--verify",
				 "-q", "refs/heads/storyctl/story/b", NULL),
	    0);
	git_ok(NULL, 0, fx->repo, "worktree", "prune", NULL);
	fxfs_join(busy, fx->root, "busy");
	/* an empty directory is fine, as for git */
	remove_file(busy, "f");
	wt_add(fx, "b", busy, "storyctl/story/b", "HEAD");
	assert_true(exists(busy, "a.txt"));
	/* a base that does not exist names itself and the branch */
	assert_int_equal(gitwork_worktree_add(fx->repo, "c", wa,
			     "storyctl/story/c", "refs/heads/nope", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "refs/heads/nope"));
	assert_non_null(strstr(err.msg, "storyctl/story/c"));
	assert_false(exists(wa, "."));
	/* refused before anything on disk changes: an empty dir stays */
	fxfs_mkparents(wa);
	assert_int_equal(mkdir(wa, 0755), 0);
	assert_int_equal(gitwork_worktree_add(fx->repo, "c", wa,
			     "storyctl/story/c", "refs/heads/nope", &err),
	    SC_EDATA);
	assert_true(exists(wa, "."));
	assert_int_equal(rmdir(wa), 0);
	/* bad branch name */
	assert_int_equal(
	    gitwork_worktree_add(fx->repo, "d", wa, "x..y", "HEAD", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, "x..y"));
	/* not a repository */
	assert_int_equal(
	    gitwork_worktree_add(fx->root, "d", wa, "d", "HEAD", &err),
	    SC_EDATA);
	assert_non_null(strstr(err.msg, fx->root));
}

/* The layout -j N will use: worktrees inside the state dir. */
static void
test_worktree_in_state_dir(void **state)
{
	struct fx *fx = *state;
	char wa[PATH_MAX], hex[GITWORK_HEXSZ], why[128];

	fxfs_join(wa, fx->repo, EX "/worktrees/a");
	wt_add(fx, "a", wa, "storyctl/story/a", "HEAD");
	fxfs_write_file(wa, "new.txt", "n\n");
	assert_int_equal(dirty(fx->repo, EX, why, sizeof(why)), 0);
	commit_all(fx->repo, NULL, "nothing in main", 0, hex);
	commit_all(wa, NULL, "story a", 1, hex);
	assert_int_equal(dirty(wa, EX, NULL, 0), 0);
	fxfs_write_file(fx->repo, "m.txt", "m\n");
	assert_int_equal(gitwork_reset_hard(fx->repo, "HEAD", EX, NULL), 0);
	assert_false(exists(fx->repo, "m.txt"));
	assert_true(exists(wa, "new.txt"));
	assert_int_equal(gitwork_worktree_remove(fx->repo, "a", NULL), 0);
	assert_false(exists(wa, "."));
	assert_true(exists(fx->repo, EX "/state.db"));
}

/* The one branch-name check is libgit2's (git check-ref-format). */
static void
test_branch_valid(void **state)
{
	static const char *const bad[] = {"", "-x", "a..b", "a b", "x/", "/x",
	    "x.lock", "a/.b", "x~1", "x^", "x:y", "x?", "x*", "x[", "x\\y",
	    "a@{b", "x.", "a//b", "\x01x", "HEAD"};
	size_t i;

	(void)state;
	assert_true(gitwork_branch_valid("storyctl/state"));
	assert_true(gitwork_branch_valid("feature/x-1.2"));
	assert_false(gitwork_branch_valid(NULL));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (gitwork_branch_valid(bad[i]))
			fail_msg("%s: accepted", bad[i]);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
#define TD(i) \
	cmocka_unit_test_prestate_setup_teardown( \
	    test_dirty_case, fx_setup, fx_teardown, (void *)&dirty_cases[i])

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_clean_repo),
	    cmocka_unit_test(test_branch_valid),
	    TD(0),
	    TD(1),
	    TD(2),
	    TD(3),
	    TD(4),
	    TD(5),
	    TD(6),
	    TD(7),
	    T(test_dirty_why_many),
	    T(test_dirty_subdir_and_errors),
	    T(test_head),
	    T(test_branch_tip),
	    T(test_commit_current_branch),
	    T(test_commit_nothing),
	    T(test_commit_other_branch),
	    T(test_commit_unborn),
	    T(test_commit_refuses_tracked_state_dir),
	    T(test_reset_hard),
	    T(test_reset_hard_older_commit),
	    T(test_reset_hard_errors),
	    T(test_nested_repo),
	    T(test_commit_detached),
	    T(test_worktree_name),
	    T(test_worktree_filters),
	    T(test_worktree_add_from_head),
	    T(test_worktree_add_from_branch),
	    T(test_worktree_add_idempotent),
	    T(test_worktree_remove),
	    T(test_worktree_remove_locked),
	    T(test_worktree_stale),
	    T(test_worktree_errors),
	    T(test_worktree_in_state_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
