/*
 * test_gitsandbox.c - the private git dir P a confined agent works in
 * (gitsandbox_prepare) and taking its branch back (gitsandbox_collect).
 *
 * Every test gets a fresh temp directory holding repo/: a repository on
 * main with three commits c1..c3 (a.txt, sub/b.txt), branch "other" (c1)
 * and tag v1 (c2) packed into packed-refs, main loose.  P is root/state/sb/git, its
 * parents not made yet; SHOWN is the real common dir, so that the git
 * command line can work in P the way the agent does in the sandbox
 * (`git --git-dir=P --work-tree=<tree>`).  Results are checked with the
 * git command line and, for the object store, with libgit2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>
#include <zlib.h>

#include "state/gitsandbox.h"
#include "tests/unit/fixture_fs.h"

/* a test that would hang (a FIFO opened for reading) is killed */
#define HANG_SECONDS 60

struct fx {
	char root[PATH_MAX]; /* realpath of the temp dir */
	char repo[PATH_MAX]; /* root/repo, the main tree */
	char git[PATH_MAX]; /* root/repo/.git */
	char p[PATH_MAX]; /* root/state/sb/git: P */
	char c1[41], c2[41], c3[41]; /* main's three commits */
	struct gitsandbox gs;
};

/* Do dir/a and dir2/b hold the same bytes (both present)? */
static bool
same_file(const char *dir, const char *a, const char *dir2, const char *b)
{
	static char x[1 << 16], y[1 << 16];
	long n = fxfs_read_file(x, sizeof(x), dir, a);

	return n >= 0 && n == fxfs_read_file(y, sizeof(y), dir2, b) &&
	    memcmp(x, y, (size_t)n) == 0;
}

/* lstat dir/name: its st_mode, or 0 when there is nothing. */
static mode_t
kind(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	fxfs_join(path, dir, name);
	return lstat(path, &st) == 0 ? st.st_mode : 0;
}

/*
 * Run git with the arguments in pre (NULL-terminated, may be NULL) and
 * then ap's; its stdout, trailing newlines cut, into out (outlen bytes,
 * may be NULL).  Returns the exit status.
 */
static int
git_v(char *out, size_t outlen, const char *const *pre, va_list ap)
{
	const char *argv[48];
	int argc = 0;

	argv[argc++] = "git";
	for (; pre != NULL && *pre != NULL; pre++)
		argv[argc++] = *pre;
	while ((argv[argc] = va_arg(ap, const char *)) != NULL)
		assert_true(++argc < 47);
	return fxfs_run(out, outlen, argv);
}

/* `git -C dir ...`, its exit status. */
static int
git_at(char *out, size_t outlen, const char *dir, ...)
{
	const char *pre[] = {"-C", dir, NULL};
	va_list ap;
	int rc;

	va_start(ap, dir);
	rc = git_v(out, outlen, pre, ap);
	va_end(ap);
	return rc;
}

/* `git -C dir ...`, which must succeed. */
static void
git_ok(char *out, size_t outlen, const char *dir, ...)
{
	const char *pre[] = {"-C", dir, NULL};
	va_list ap;
	int rc;

	va_start(ap, dir);
	rc = git_v(out, outlen, pre, ap);
	va_end(ap);
	assert_int_equal(rc, 0);
}

/* `git --git-dir=P --work-tree=tree ...` as the agent runs it in the
 * sandbox, which must succeed. */
static void
pgit_ok(char *out, size_t outlen, const char *p, const char *tree, ...)
{
	const char *pre[] = {"--git-dir", p, "--work-tree", tree, NULL};
	va_list ap;
	int rc;

	va_start(ap, tree);
	rc = git_v(out, outlen, pre, ap);
	va_end(ap);
	assert_int_equal(rc, 0);
}

/* `git rev-parse --verify rev` in dir into hex (41 bytes); "" when it
 * names nothing. */
static void
rev(char *hex, const char *dir, const char *r)
{
	char buf[256];

	hex[0] = '\0';
	if (git_at(buf, sizeof(buf), dir, "rev-parse", "--verify", "-q", r,
		NULL) != 0)
		return;
	assert_int_equal(strlen(buf), 40);
	memcpy(hex, buf, 41);
}

/* The same in P. */
static void
prev(char *hex, const char *p, const char *r)
{
	char buf[256];

	pgit_ok(buf, sizeof(buf), p, "/", "rev-parse", "--verify", r, NULL);
	assert_int_equal(strlen(buf), 40);
	memcpy(hex, buf, 41);
}

/* Is object hex in the object store of the repository at dir, read
 * through a fresh libgit2 handle (no alternates of P)? */
static bool
has_object(const char *dir, const char *hex)
{
	git_repository *repo = NULL;
	git_odb *odb = NULL;
	git_oid id;
	bool found;

	assert_true(git_libgit2_init() > 0);
	assert_int_equal(git_repository_open(&repo, dir), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(git_oid_fromstr(&id, hex), 0);
	found = git_odb_exists(odb, &id) == 1;
	git_odb_free(odb);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return found;
}

/* How many packs the repository's object store has. */
static int
count_packs(const char *gitdir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	size_t n;
	int count = 0;

	fxfs_join(path, gitdir, "objects/pack");
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n > 5 && strcmp(de->d_name + n - 5, ".pack") == 0)
			count++;
	}
	closedir(d);
	return count;
}

/* The index of tree holds exactly commit's tree. */
static void
assert_index_is(const char *tree, const char *commit)
{
	char want[41], spec[64], got[256];

	snprintf(spec, sizeof(spec), "%s^{tree}", commit);
	rev(want, tree, spec);
	git_ok(got, sizeof(got), tree, "write-tree", NULL);
	assert_string_equal(got, want);
}

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "%s/gitsandbox-test-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->root));
	fxfs_join(fx->repo, fx->root, "repo");
	fxfs_join(fx->git, fx->repo, ".git");
	fxfs_join(fx->p, fx->root, "state/sb/git");
	/* no user or system configuration leaks in */
	fxfs_git_env(fx->root);
	git_ok(NULL, 0, fx->root, "init", "-q", "-b", "main", "repo", NULL);
	fxfs_write_file(fx->repo, "a.txt", "a\n");
	fxfs_write_file(fx->repo, "sub/b.txt", "b\n");
	git_ok(NULL, 0, fx->repo, "add", "-A", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-m", "one", NULL);
	fxfs_write_file(fx->repo, "a.txt", "a2\n");
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-am", "two", NULL);
	git_ok(NULL, 0, fx->repo, "branch", "other", "HEAD~1", NULL);
	git_ok(NULL, 0, fx->repo, "tag", "v1", NULL);
	git_ok(NULL, 0, fx->repo, "pack-refs", "--all", NULL);
	fxfs_write_file(fx->repo, "sub/b.txt", "b3\n");
	git_ok(NULL, 0, fx->repo, "commit", "-q", "-am", "three", NULL);
	rev(fx->c1, fx->repo, "main~2");
	rev(fx->c2, fx->repo, "main~1");
	rev(fx->c3, fx->repo, "main");
	*state = fx;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *fx = *state;

	alarm(0);
	gitsandbox_release(&fx->gs);
	fxfs_rm_tree(fx->root);
	free(fx);
	return 0;
}

/* prepare that must succeed, shown = the real common dir. */
static void
prepare(struct fx *fx, const char *tree)
{
	struct sc_err err = {0, ""};

	if (gitsandbox_prepare(&fx->gs, tree, fx->p, fx->git, &err) != 0)
		fail_msg("gitsandbox_prepare: %s", err.msg);
}

/* collect that must succeed; returns *moved, new_oid into hex. */
static bool
collect(struct fx *fx, const char *tree, char *hex)
{
	struct sc_err err = {0, ""};
	char buf[41];
	bool moved = true;

	if (hex == NULL)
		hex = buf;
	memset(hex, 'x', 41);
	if (gitsandbox_collect(&moved, hex, &fx->gs, tree, &err) != 0)
		fail_msg("gitsandbox_collect: %s", err.msg);
	assert_int_equal(strlen(hex), moved ? 40 : 0);
	return moved;
}

/* ---- prepare ---------------------------------------------------- */

static void
test_prepare_main(void **state)
{
	struct fx *fx = *state;
	char buf[4096], want[PATH_MAX + 16], path[PATH_MAX], hex[41];
	struct stat st;

	/* what must not reach P: a stale lock at the top and in refs, a
	 * symbolic link in refs; and junk in a P that already exists */
	fxfs_write_file(fx->git, "junk.lock", "x\n");
	fxfs_write_file(fx->git, "COMMIT_EDITMSG", "initial\n");
	fxfs_write_file(fx->git, "refs/heads/main.lock", "x\n");
	fxfs_join(want, fx->git, "refs/tags/sym");
	assert_int_equal(symlink("../../HEAD", want), 0);
	fxfs_write_file(fx->p, "junk", "old\n");

	prepare(fx, fx->repo);
	unlink(want);
	fxfs_join(want, fx->git, "refs/heads/main.lock");
	unlink(want);

	assert_string_equal(fx->gs.gitdir, fx->git);
	assert_string_equal(fx->gs.commondir, fx->git);
	assert_string_equal(fx->gs.private_dir, fx->p);
	assert_string_equal(fx->gs.branch, "refs/heads/main");
	assert_string_equal(fx->gs.start_oid, fx->c3);
	assert_int_equal(stat(fx->p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(kind(fx->p, "junk"), 0);

	/* the copies, byte for byte */
	assert_true(same_file(fx->p, "HEAD", fx->git, "HEAD"));
	assert_true(same_file(fx->p, "index", fx->git, "index"));
	assert_true(same_file(fx->p, "config", fx->git, "config"));
	assert_true(same_file(fx->p, "packed-refs", fx->git, "packed-refs"));
	assert_true(
	    same_file(fx->p, "refs/heads/main", fx->git, "refs/heads/main"));
	assert_true(S_ISDIR(kind(fx->p, "refs/tags")));
	assert_int_equal(kind(fx->p, "refs/tags/sym"), 0);
	assert_int_equal(kind(fx->p, "refs/heads/main.lock"), 0);
	assert_int_equal(kind(fx->p, "junk.lock"), 0);

	/* objects new, reading the real ones through SHOWN */
	snprintf(want, sizeof(want), "%s/objects\n", fx->git);
	fxfs_read_file(buf, sizeof(buf), fx->p, "objects/info/alternates");
	assert_string_equal(buf, want);
	assert_true(S_ISDIR(kind(fx->p, "objects/pack")));
	assert_int_equal(kind(fx->p, "shallow"), 0);

	/* the rest: links into SHOWN, or left out */
	assert_true(S_ISLNK(kind(fx->p, "hooks")));
	fxfs_join(want, fx->git, "hooks");
	fxfs_join(path, fx->p, "hooks");
	memset(buf, 0, sizeof(buf));
	assert_int_equal(readlink(path, buf, sizeof(buf) - 1), strlen(want));
	assert_string_equal(buf, want);
	/* files git writes anew (a link to the read-only view would fail
	 * the agent's next commit: COMMIT_EDITMSG) */
	assert_int_equal(kind(fx->p, "description"), 0);
	assert_int_equal(kind(fx->p, "COMMIT_EDITMSG"), 0);
	assert_int_equal(kind(fx->p, "logs"), 0);
	assert_int_equal(kind(fx->p, "worktrees"), 0);

	/* git works in P as the agent would use it */
	prev(hex, fx->p, "HEAD");
	assert_string_equal(hex, fx->c3);
	prev(hex, fx->p, "other");
	assert_string_equal(hex, fx->c1);
	prev(hex, fx->p, "v1");
	assert_string_equal(hex, fx->c2);
	pgit_ok(
	    buf, sizeof(buf), fx->p, fx->repo, "status", "--porcelain", NULL);
	assert_string_equal(buf, "");
}

static void
test_prepare_worktree(void **state)
{
	struct fx *fx = *state;
	char wt[PATH_MAX], admin[PATH_MAX], hex[41], buf[256];

	fxfs_join(wt, fx->root, "wt");
	git_ok(NULL, 0, fx->repo, "worktree", "add", "-q", "-b", "story", wt,
	    "main~1", NULL);
	fxfs_join(admin, fx->git, "worktrees/wt");
	/* the main tree's merge in progress is not the worktree's */
	fxfs_write_file(fx->git, "MERGE_HEAD", fx->c1);
	fxfs_write_file(fx->git, "rebase-merge/head-name", "refs/heads/x\n");

	prepare(fx, wt);

	assert_string_equal(fx->gs.gitdir, admin);
	assert_string_equal(fx->gs.commondir, fx->git);
	assert_string_equal(fx->gs.branch, "refs/heads/story");
	assert_string_equal(fx->gs.start_oid, fx->c2);
	assert_true(same_file(fx->p, "HEAD", admin, "HEAD"));
	assert_true(same_file(fx->p, "index", admin, "index"));
	assert_true(same_file(fx->p, "config", fx->git, "config"));
	assert_true(
	    same_file(fx->p, "refs/heads/story", fx->git, "refs/heads/story"));
	assert_int_equal(kind(fx->p, "MERGE_HEAD"), 0);
	assert_int_equal(kind(fx->p, "rebase-merge"), 0);
	assert_int_equal(kind(fx->p, "commondir"), 0);
	assert_int_equal(kind(fx->p, "gitdir"), 0);
	assert_int_equal(kind(fx->p, "worktrees"), 0);
	assert_true(S_ISLNK(kind(fx->p, "hooks")));

	prev(hex, fx->p, "HEAD");
	assert_string_equal(hex, fx->c2);
	pgit_ok(buf, sizeof(buf), fx->p, wt, "status", "--porcelain", NULL);
	assert_string_equal(buf, "");
}

/* A story's worktree: its own branch copied, every other story's
 * branch left out (as many as the batch has stories). */
static void
test_prepare_story_branches(void **state)
{
	struct fx *fx = *state;
	char wt[PATH_MAX], hex[41];

	fxfs_join(wt, fx->root, "wt-s1");
	git_ok(NULL, 0, fx->repo, "branch", "storyctl/story/s2", "main", NULL);
	git_ok(NULL, 0, fx->repo, "branch", "storyctl/story/s3", "main", NULL);
	git_ok(NULL, 0, fx->repo, "worktree", "add", "-q", "-b",
	    "storyctl/story/s1", wt, "main~1", NULL);
	prepare(fx, wt);
	assert_string_equal(fx->gs.branch, "refs/heads/storyctl/story/s1");
	assert_true(same_file(fx->p, "refs/heads/storyctl/story/s1", fx->git,
	    "refs/heads/storyctl/story/s1"));
	assert_int_equal(kind(fx->p, "refs/heads/storyctl/story/s2"), 0);
	assert_int_equal(kind(fx->p, "refs/heads/storyctl/story/s3"), 0);
	prev(hex, fx->p, "HEAD");
	assert_string_equal(hex, fx->c2);
}

static void
test_prepare_unborn_and_detached(void **state)
{
	struct fx *fx = *state;
	char fresh[PATH_MAX];

	fxfs_join(fresh, fx->root, "fresh");
	git_ok(NULL, 0, fx->root, "init", "-q", "-b", "trunk", "fresh", NULL);
	prepare(fx, fresh);
	assert_string_equal(fx->gs.branch, "refs/heads/trunk");
	assert_string_equal(fx->gs.start_oid, "");
	assert_int_equal(kind(fx->p, "index"), 0); /* none to copy */
	gitsandbox_release(&fx->gs);

	git_ok(NULL, 0, fx->repo, "checkout", "-q", "--detach", "main~1", NULL);
	prepare(fx, fx->repo);
	assert_null(fx->gs.branch);
	assert_string_equal(fx->gs.start_oid, "");
	assert_true(same_file(fx->p, "HEAD", fx->git, "HEAD"));
}

static void
test_prepare_errors(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct gitsandbox gs;
	char dir[PATH_MAX];

	fxfs_join(dir, fx->root, "plain");
	assert_int_equal(mkdir(dir, 0755), 0);
	fxfs_write_file(fx->p, "objects/old", "an earlier attempt's\n");
	memset(&gs, 0xff, sizeof(gs));
	/* a directory outside any repository (the temp dir) */
	assert_int_equal(
	    gitsandbox_prepare(&gs, dir, fx->p, fx->git, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, dir));
	assert_null(gs.private_dir);
	assert_null(gs.gitdir);
	assert_int_equal(kind(fx->p, ""), 0);

	git_ok(NULL, 0, fx->root, "init", "-q", "--bare", "bare.git", NULL);
	fxfs_join(dir, fx->root, "bare.git");
	assert_int_equal(
	    gitsandbox_prepare(&gs, dir, fx->p, fx->git, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "bare"));

	assert_int_equal(
	    gitsandbox_prepare(NULL, fx->repo, fx->p, fx->git, &err),
	    SC_ESOFTWARE);
}

/* ---- collect ---------------------------------------------------- */

static void
test_collect_commit(void **state)
{
	struct fx *fx = *state;
	char hex[41], want[41], blob[41], buf[256];
	struct stat before, after;
	char path[PATH_MAX];
	int packs = count_packs(fx->git);

	prepare(fx, fx->repo);
	/* the agent edits the tree and commits twice in P */
	fxfs_write_file(fx->repo, "a.txt", "agent\n");
	fxfs_write_file(fx->repo, "new/n.txt", "new\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "add", "-A", NULL);
	pgit_ok(
	    NULL, 0, fx->p, fx->repo, "commit", "-q", "-m", "agent 1", NULL);
	fxfs_write_file(fx->repo, "a.txt", "agent 2\n");
	pgit_ok(
	    NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "agent 2", NULL);
	prev(want, fx->p, "refs/heads/main");
	prev(blob, fx->p, "HEAD~1:new/n.txt");
	assert_false(has_object(fx->repo, want));
	fxfs_join(path, fx->repo, "a.txt");
	assert_int_equal(stat(path, &before), 0);

	assert_true(collect(fx, fx->repo, hex));
	assert_string_equal(hex, want);
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, want);
	rev(hex, fx->repo, "main~2");
	assert_string_equal(hex, fx->c3);
	assert_true(has_object(fx->repo, want));
	assert_true(has_object(fx->repo, blob));
	assert_int_equal(count_packs(fx->git), packs + 1);
	assert_index_is(fx->repo, want);
	/* the files are the agent's, untouched, and now clean */
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	fxfs_read_file(buf, sizeof(buf), fx->repo, "a.txt");
	assert_string_equal(buf, "agent 2\n");
	git_ok(buf, sizeof(buf), fx->repo, "status", "--porcelain", NULL);
	assert_string_equal(buf, "");
	git_ok(buf, sizeof(buf), fx->repo, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(buf, "refs/heads/main");

	/* without P the repository is whole */
	gitsandbox_release(&fx->gs);
	assert_int_equal(kind(fx->p, ""), 0);
	git_ok(NULL, 0, fx->repo, "fsck", "--strict", "--no-dangling", NULL);
}

static void
test_collect_worktree(void **state)
{
	struct fx *fx = *state;
	char wt[PATH_MAX], hex[41], want[41], buf[256];

	fxfs_join(wt, fx->root, "wt");
	git_ok(NULL, 0, fx->repo, "worktree", "add", "-q", "-b", "story", wt,
	    NULL);
	prepare(fx, wt);
	fxfs_write_file(wt, "sub/b.txt", "story\n");
	pgit_ok(NULL, 0, fx->p, wt, "commit", "-q", "-am", "story 1", NULL);
	prev(want, fx->p, "HEAD");

	assert_true(collect(fx, wt, hex));
	assert_string_equal(hex, want);
	rev(hex, fx->repo, "story");
	assert_string_equal(hex, want);
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_index_is(wt, want);
	git_ok(buf, sizeof(buf), wt, "status", "--porcelain", NULL);
	assert_string_equal(buf, "");
	/* the main tree's index still holds main */
	assert_index_is(fx->repo, fx->c3);
	gitsandbox_release(&fx->gs);
	git_ok(NULL, 0, fx->repo, "fsck", "--strict", "--no-dangling", NULL);
}

static void
test_collect_unchanged(void **state)
{
	struct fx *fx = *state;
	char hex[41];
	int packs = count_packs(fx->git);

	prepare(fx, fx->repo);
	assert_false(collect(fx, fx->repo, hex));
	assert_string_equal(hex, "");
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_int_equal(count_packs(fx->git), packs);
}

/* Everything the agent does in P but move its branch. */
static void
agent_meddles(struct fx *fx)
{
	fxfs_write_file(fx->repo, "a.txt", "elsewhere\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "checkout", "-q", "-b", "evil", NULL);
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "evil", NULL);
	pgit_ok(NULL, 0, fx->p, fx->repo, "update-ref", "refs/heads/other",
	    "HEAD", NULL);
	pgit_ok(NULL, 0, fx->p, fx->repo, "tag", "-f", "v1", "HEAD", NULL);
	pgit_ok(
	    NULL, 0, fx->p, fx->repo, "config", "core.hooksPath", "/tmp", NULL);
	pgit_ok(NULL, 0, fx->p, fx->repo, "config", "user.name", "Evil", NULL);
}

/* None of agent_meddles()'s changes reached the real repository. */
static void
assert_not_meddled(struct fx *fx, const char *config)
{
	char hex[41], buf[256];

	rev(hex, fx->repo, "refs/heads/evil");
	assert_string_equal(hex, "");
	rev(hex, fx->repo, "other");
	assert_string_equal(hex, fx->c1);
	rev(hex, fx->repo, "v1");
	assert_string_equal(hex, fx->c2);
	git_ok(buf, sizeof(buf), fx->repo, "symbolic-ref", "HEAD", NULL);
	assert_string_equal(buf, "refs/heads/main");
	fxfs_read_file(buf, sizeof(buf), fx->git, "config");
	assert_string_equal(buf, config);
}

static void
test_collect_ignores_the_rest(void **state)
{
	struct fx *fx = *state;
	char hex[41], config[4096], evil[41];

	fxfs_read_file(config, sizeof(config), fx->git, "config");
	prepare(fx, fx->repo);
	agent_meddles(fx);
	prev(evil, fx->p, "HEAD");

	assert_false(collect(fx, fx->repo, hex));
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_not_meddled(fx, config);
	assert_false(has_object(fx->repo, evil));
	assert_index_is(fx->repo, fx->c3);
}

static void
test_collect_branch_among_the_rest(void **state)
{
	struct fx *fx = *state;
	char hex[41], want[41], config[4096];

	fxfs_read_file(config, sizeof(config), fx->git, "config");
	prepare(fx, fx->repo);
	fxfs_write_file(fx->repo, "sub/b.txt", "mine\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "mine", NULL);
	prev(want, fx->p, "HEAD");
	agent_meddles(fx); /* leaves P's HEAD on evil */
	/* and packs its refs: the branch is read from packed-refs */
	pgit_ok(NULL, 0, fx->p, fx->repo, "pack-refs", "--all", NULL);
	assert_int_equal(kind(fx->p, "refs/heads/main"), 0);

	assert_true(collect(fx, fx->repo, hex));
	assert_string_equal(hex, want);
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, want);
	assert_not_meddled(fx, config);
	assert_index_is(fx->repo, want);
}

static void
test_collect_deleted_branch(void **state)
{
	struct fx *fx = *state;
	char hex[41];

	prepare(fx, fx->repo);
	fxfs_write_file(fx->repo, "a.txt", "gone\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "gone", NULL);
	pgit_ok(NULL, 0, fx->p, fx->repo, "update-ref", "-d", "refs/heads/main",
	    NULL);

	assert_false(collect(fx, fx->repo, hex));
	assert_string_equal(hex, "");
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_index_is(fx->repo, fx->c3);
}

static void
test_collect_backwards(void **state)
{
	struct fx *fx = *state;
	char hex[41];
	int packs = count_packs(fx->git);

	prepare(fx, fx->repo);
	pgit_ok(
	    NULL, 0, fx->p, fx->repo, "reset", "-q", "--soft", "HEAD~2", NULL);

	assert_true(collect(fx, fx->repo, hex));
	assert_string_equal(hex, fx->c1);
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c1);
	assert_index_is(fx->repo, fx->c1);
	/* nothing new to write */
	assert_int_equal(count_packs(fx->git), packs);
}

/* zlib-compress text into a loose object file at P/objects/xx/yyy for
 * hex, which it does not hash to. */
static void
forge(struct fx *fx, const char *hex, const char *text, size_t n)
{
	unsigned char out[512];
	uLongf outlen = sizeof(out);
	char name[64];

	assert_int_equal(compress(out, &outlen, (const Bytef *)text, n), Z_OK);
	snprintf(name, sizeof(name), "objects/%.2s/%s", hex, hex + 2);
	assert_true(S_ISREG(kind(fx->p, name)));
	fxfs_write_bytes(fx->p, name, out, outlen);
}

static void
test_collect_forged(void **state)
{
	static const char *const which[] = {
	    "HEAD:f.txt", "HEAD^{tree}", "HEAD~1", "HEAD"};
	static const char evil[] = "blob 5\0evil\n";
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char hex[41], tip[41], bad[41];
	bool moved = true;
	size_t i;
	int packs = count_packs(fx->git);

	for (i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		git_ok(
		    NULL, 0, fx->repo, "reset", "-q", "--hard", fx->c3, NULL);
		git_ok(NULL, 0, fx->repo, "clean", "-qfd", NULL);
		prepare(fx, fx->repo);
		fxfs_write_file(fx->repo, "f.txt", "forged away\n");
		pgit_ok(NULL, 0, fx->p, fx->repo, "add", "f.txt", NULL);
		pgit_ok(
		    NULL, 0, fx->p, fx->repo, "commit", "-q", "-m", "f", NULL);
		pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q",
		    "--allow-empty", "-m", "g", NULL);
		prev(tip, fx->p, "HEAD");
		prev(bad, fx->p, which[i]);
		forge(fx, bad, evil, sizeof(evil) - 1);

		assert_int_equal(
		    gitsandbox_collect(&moved, hex, &fx->gs, fx->repo, &err),
		    SC_EDATA);
		assert_false(moved);
		assert_string_equal(hex, "");
		assert_non_null(strstr(err.msg, "refs/heads/main"));
		assert_non_null(strstr(err.msg, bad));
		rev(hex, fx->repo, "main");
		assert_string_equal(hex, fx->c3);
		assert_int_equal(count_packs(fx->git), packs);
		assert_false(has_object(fx->repo, tip));
		assert_index_is(fx->repo, fx->c3);
		gitsandbox_release(&fx->gs);
	}
}

/* A commit of the agent's whose parent is nowhere (P holds it, git
 * wrote it without checking) refuses the move, naming the parent. */
static void
test_collect_missing_parent(void **state)
{
	static const char *const ghost =
	    "1111111111111111111111111111111111111111";
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char text[512], tree[41], orphan[41], tip[41], hex[41], path[PATH_MAX];
	bool moved = true;

	prepare(fx, fx->repo);
	rev(tree, fx->repo, "main^{tree}");
	snprintf(text, sizeof(text),
	    "tree %s\nparent %s\nparent %s\n"
	    "author T <t@example.org> 1700000000 +0000\n"
	    "committer T <t@example.org> 1700000000 +0000\n\norphan\n",
	    tree, fx->c3, ghost);
	fxfs_write_file(fx->root, "orphan", text);
	fxfs_join(path, fx->root, "orphan");
	pgit_ok(orphan, sizeof(orphan), fx->p, fx->repo, "hash-object", "-w",
	    "--literally", "-t", "commit", path, NULL);
	pgit_ok(NULL, 0, fx->p, fx->repo, "update-ref", "refs/heads/main",
	    orphan, NULL);
	/* and one more on top, so the bad one is inside the walk */
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "--allow-empty", "-m",
	    "top", NULL);
	prev(tip, fx->p, "HEAD");

	assert_int_equal(
	    gitsandbox_collect(&moved, hex, &fx->gs, fx->repo, &err), SC_EDATA);
	assert_false(moved);
	assert_non_null(strstr(err.msg, ghost));
	assert_non_null(strstr(err.msg, tip));
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_false(has_object(fx->repo, orphan));
}

static void
test_collect_not_a_commit(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char hex[41], blob[42];
	bool moved = true;

	prepare(fx, fx->repo);
	rev(blob, fx->repo, "main:a.txt");
	strcat(blob, "\n");
	fxfs_write_file(fx->p, "refs/heads/main", blob);

	assert_int_equal(
	    gitsandbox_collect(&moved, hex, &fx->gs, fx->repo, &err), SC_EDATA);
	assert_false(moved);
	assert_non_null(strstr(err.msg, "not a commit"));
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
}

static void
test_collect_unborn(void **state)
{
	struct fx *fx = *state;
	char fresh[PATH_MAX], fgit[PATH_MAX], hex[41], want[41], buf[256];

	fxfs_join(fresh, fx->root, "fresh");
	fxfs_join(fgit, fresh, ".git");
	git_ok(NULL, 0, fx->root, "init", "-q", "-b", "trunk", "fresh", NULL);
	fxfs_write_file(fresh, "x.txt", "first\n");
	assert_int_equal(
	    gitsandbox_prepare(&fx->gs, fresh, fx->p, fgit, NULL), 0);
	assert_string_equal(fx->gs.start_oid, "");
	pgit_ok(NULL, 0, fx->p, fresh, "add", "x.txt", NULL);
	pgit_ok(NULL, 0, fx->p, fresh, "commit", "-q", "-m", "root", NULL);
	prev(want, fx->p, "refs/heads/trunk");

	assert_true(collect(fx, fresh, hex));
	assert_string_equal(hex, want);
	rev(hex, fresh, "trunk");
	assert_string_equal(hex, want);
	assert_index_is(fresh, want);
	git_ok(buf, sizeof(buf), fresh, "status", "--porcelain", NULL);
	assert_string_equal(buf, "");
	gitsandbox_release(&fx->gs);
	git_ok(NULL, 0, fresh, "fsck", "--strict", "--no-dangling", NULL);
}

static void
test_collect_detached(void **state)
{
	struct fx *fx = *state;
	char hex[41], made[41];

	git_ok(NULL, 0, fx->repo, "checkout", "-q", "--detach", NULL);
	prepare(fx, fx->repo);
	assert_null(fx->gs.branch);
	fxfs_write_file(fx->repo, "a.txt", "detached\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "d", NULL);
	prev(made, fx->p, "HEAD");

	assert_false(collect(fx, fx->repo, hex));
	rev(hex, fx->repo, "HEAD");
	assert_string_equal(hex, fx->c3);
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_false(has_object(fx->repo, made));
}

static void
test_collect_moved_meanwhile(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char hex[41], theirs[41];
	bool moved = true;

	prepare(fx, fx->repo);
	fxfs_write_file(fx->repo, "a.txt", "agent\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "agent", NULL);
	git_ok(NULL, 0, fx->repo, "commit", "-q", "--allow-empty", "-m",
	    "someone else", NULL);
	rev(theirs, fx->repo, "main");

	assert_int_equal(
	    gitsandbox_collect(&moved, hex, &fx->gs, fx->repo, &err), SC_EDATA);
	assert_false(moved);
	assert_non_null(strstr(err.msg, "moved"));
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, theirs);
}

/*
 * What the agent can leave in P to steer the controller's libgit2
 * elsewhere: a config including a FIFO (which would block the open),
 * a commondir file, alternates to another repository, a HEAD made a
 * directory.  None of it is read: the branch is taken all the same.
 */
static void
test_collect_steering_ignored(void **state)
{
	struct fx *fx = *state;
	char hex[41], want[41], path[PATH_MAX], other[PATH_MAX];

	alarm(HANG_SECONDS);
	fxfs_join(other, fx->root, "other");
	git_ok(NULL, 0, fx->root, "init", "-q", "other", NULL);
	prepare(fx, fx->repo);
	fxfs_write_file(fx->repo, "a.txt", "steer\n");
	pgit_ok(NULL, 0, fx->p, fx->repo, "commit", "-q", "-am", "s", NULL);
	prev(want, fx->p, "HEAD");
	fxfs_join(path, fx->p, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	fxfs_write_file(fx->p, "config", "[include]\n\tpath = fifo\n");
	fxfs_write_file(fx->p, "commondir", other);
	fxfs_join(path, fx->p, "HEAD");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);

	assert_true(collect(fx, fx->repo, hex));
	assert_string_equal(hex, want);
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, want);
}

/* Alternates pointing at another repository do not make its objects
 * readable: the branch naming one of them is refused. */
static void
test_collect_foreign_alternates(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char other[PATH_MAX], alt[PATH_MAX + 16], hex[41], foreign[41];
	bool moved = true;

	fxfs_join(other, fx->root, "other");
	git_ok(NULL, 0, fx->root, "init", "-q", "other", NULL);
	fxfs_write_file(other, "z.txt", "z\n");
	git_ok(NULL, 0, other, "add", "z.txt", NULL);
	git_ok(NULL, 0, other, "commit", "-q", "-m", "z", NULL);
	rev(foreign, other, "HEAD");
	prepare(fx, fx->repo);
	snprintf(alt, sizeof(alt), "%s/.git/objects\n", other);
	fxfs_write_file(fx->p, "objects/info/alternates", alt);
	pgit_ok(NULL, 0, fx->p, fx->repo, "update-ref", "refs/heads/main",
	    foreign, NULL);

	assert_int_equal(
	    gitsandbox_collect(&moved, hex, &fx->gs, fx->repo, &err), SC_EDATA);
	assert_false(moved);
	assert_non_null(strstr(err.msg, foreign));
	rev(hex, fx->repo, "main");
	assert_string_equal(hex, fx->c3);
	assert_false(has_object(fx->repo, foreign));
}

/* A FIFO or a symbolic link where libgit2 would read is refused before
 * anything is opened (a FIFO would block the controller for good). */
static void
test_collect_special_files(void **state)
{
	static const char *const where[] = {"refs/heads/main", "packed-refs",
	    "objects/ab", "objects/pack/x.idx"};
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	char path[PATH_MAX], hex[41];
	bool moved = true;
	size_t i;

	alarm(HANG_SECONDS);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		prepare(fx, fx->repo);
		fxfs_join(path, fx->p, where[i]);
		(void)unlink(path);
		if (i % 2 == 0)
			assert_int_equal(mkfifo(path, 0600), 0);
		else
			assert_int_equal(symlink("/dev/zero", path), 0);
		err.msg[0] = '\0';
		assert_int_equal(
		    gitsandbox_collect(&moved, hex, &fx->gs, fx->repo, &err),
		    SC_EDATA);
		assert_false(moved);
		assert_non_null(strstr(err.msg, where[i]));
		rev(hex, fx->repo, "main");
		assert_string_equal(hex, fx->c3);
		gitsandbox_release(&fx->gs);
	}
}

/* ---- release ---------------------------------------------------- */

static void
test_release(void **state)
{
	struct fx *fx = *state;
	struct gitsandbox zero;

	prepare(fx, fx->repo);
	assert_true(S_ISDIR(kind(fx->p, "")));
	gitsandbox_release(&fx->gs);
	assert_int_equal(kind(fx->p, ""), 0);
	assert_null(fx->gs.private_dir);
	assert_null(fx->gs.gitdir);
	assert_null(fx->gs.commondir);
	assert_null(fx->gs.branch);
	assert_string_equal(fx->gs.start_oid, "");
	gitsandbox_release(&fx->gs);
	memset(&zero, 0, sizeof(zero));
	gitsandbox_release(&zero);
	gitsandbox_release(NULL);
	/* the real repository is untouched by it */
	git_ok(NULL, 0, fx->repo, "fsck", "--strict", "--no-dangling", NULL);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_prepare_main),
	    T(test_prepare_worktree),
	    T(test_prepare_story_branches),
	    T(test_prepare_unborn_and_detached),
	    T(test_prepare_errors),
	    T(test_collect_commit),
	    T(test_collect_worktree),
	    T(test_collect_unchanged),
	    T(test_collect_ignores_the_rest),
	    T(test_collect_branch_among_the_rest),
	    T(test_collect_deleted_branch),
	    T(test_collect_backwards),
	    T(test_collect_forged),
	    T(test_collect_missing_parent),
	    T(test_collect_not_a_commit),
	    T(test_collect_unborn),
	    T(test_collect_detached),
	    T(test_collect_moved_meanwhile),
	    T(test_collect_steering_ignored),
	    T(test_collect_foreign_alternates),
	    T(test_collect_special_files),
	    T(test_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
