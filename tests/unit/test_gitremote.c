/*
 * test_gitremote.c - one branch to and from a git remote
 * (state/gitremote.h): pushed, cloned, worked on and pushed back,
 * fetched, laid into a work tree without moving HEAD; the failures name
 * the remote.  The remote is a bare repository on the local disk; the
 * results are checked with the git command line.
 */
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

#include "state/gitremote.h"
#include "state/gitwork.h"

#define BR "storyctl/story/s1"

struct fx {
	char root[PATH_MAX];
	char repo[PATH_MAX]; /* root/repo: main and BR, one commit */
	char bare[PATH_MAX]; /* root/remote.git */
};

/* Run a shell line with the fixture's paths in $R, $B and $T. */
static int
sh(const struct fx *f, const char *line)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
	    "R='%s' B='%s' T='%s'; export GIT_AUTHOR_NAME=t "
	    "GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t "
	    "GIT_COMMITTER_EMAIL=t@x; "
	    "%s",
	    f->repo, f->bare, f->root, line);
	return system(cmd);
}

/* The first line a shell line prints, into out. */
static void
sh_out(const struct fx *f, const char *line, char *out, size_t len)
{
	char cmd[4096], path[PATH_MAX + 8];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/out", f->root);
	snprintf(cmd, sizeof(cmd), "%s >'%s'", line, path);
	assert_int_equal(sh(f, cmd), 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	out[0] = '\0';
	if (fgets(out, (int)len, fp) != NULL)
		out[strcspn(out, "\n")] = '\0';
	fclose(fp);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char tmpl[] = "/tmp/test_gitremote.XXXXXX";

	assert_non_null(f);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, f->root));
	snprintf(f->repo, sizeof(f->repo), "%s/repo", f->root);
	snprintf(f->bare, sizeof(f->bare), "%s/remote.git", f->root);
	assert_int_equal(sh(f,
			     "git init -q -b main \"$R\" && "
			     "git init -q --bare \"$B\" && cd \"$R\" && "
			     "echo one >a.txt && echo gone >b.txt && "
			     "git add -A && git commit -q -m one && "
			     "git branch " BR),
	    0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	sh(f, "rm -rf \"$T\"");
	free(f);
	return 0;
}

/* push, clone, commit and push back from the clone, fetch, apply */
static void
test_round_trip(void **state)
{
	struct fx *f = *state;
	struct sc_err e = {0};
	char clone[PATH_MAX + 8], hex[GITWORK_HEXSZ], got[128], head[128];
	int committed = 0;

	assert_int_equal(gitremote_push(f->repo, f->bare, BR, true, &e), 0);
	sh_out(f, "git -C \"$B\" rev-parse " BR, got, sizeof(got));
	sh_out(f, "git -C \"$R\" rev-parse " BR, head, sizeof(head));
	assert_string_equal(got, head);

	snprintf(clone, sizeof(clone), "%s/clone", f->root);
	assert_int_equal(gitremote_clone(clone, f->bare, BR, &e), 0);
	sh_out(f, "git -C \"$T/clone\" symbolic-ref HEAD", got, sizeof(got));
	assert_string_equal(got, "refs/heads/" BR);
	assert_int_equal(sh(f,
			     "cd \"$T/clone\" && echo two >a.txt && "
			     "rm b.txt && echo new >c.txt"),
	    0);
	assert_int_equal(gitwork_commit_all(&committed, NULL, clone, NULL, NULL,
			     "job", 1700000000, &e),
	    0);
	assert_int_equal(committed, 1);
	assert_int_equal(gitremote_push(clone, f->bare, BR, false, &e), 0);

	assert_int_equal(gitremote_fetch(hex, f->repo, f->bare, BR, &e), 0);
	sh_out(f, "git -C \"$B\" rev-parse " BR, got, sizeof(got));
	assert_string_equal(hex, got);
	/* no branch of ours moved */
	sh_out(f, "git -C \"$R\" rev-parse " BR, got, sizeof(got));
	assert_string_equal(got, head);

	/* laid into a worktree on BR: files as the job left them, HEAD and
	 * the index where they were */
	assert_int_equal(
	    sh(f, "git -C \"$R\" worktree add -q \"$T/wt\" " BR), 0);
	snprintf(clone, sizeof(clone), "%s/wt", f->root);
	assert_int_equal(gitremote_apply(clone, hex, &e), 0);
	sh_out(f, "cat \"$T/wt/a.txt\"", got, sizeof(got));
	assert_string_equal(got, "two");
	assert_int_equal(sh(f,
			     "test ! -e \"$T/wt/b.txt\" && "
			     "test -f \"$T/wt/c.txt\""),
	    0);
	sh_out(f, "git -C \"$T/wt\" rev-parse HEAD", got, sizeof(got));
	assert_string_equal(got, head);
	sh_out(f, "git -C \"$T/wt\" status --porcelain | tr '\\n' ' '", got,
	    sizeof(got));
	assert_string_equal(got, " M a.txt  D b.txt ?? c.txt ");
}

/* a forced push replaces a diverged remote branch; a plain one fails */
static void
test_force(void **state)
{
	struct fx *f = *state;
	struct sc_err e = {0};

	assert_int_equal(gitremote_push(f->repo, f->bare, BR, true, &e), 0);
	assert_int_equal(sh(f,
			     "cd \"$R\" && git checkout -q " BR
			     " && git commit -q --amend -m other"),
	    0);
	assert_int_not_equal(
	    gitremote_push(f->repo, f->bare, BR, false, &e), 0);
	assert_non_null(strstr(e.msg, f->bare));
	assert_int_equal(gitremote_push(f->repo, f->bare, BR, true, &e), 0);
}

/* a branch the remote lacks: clone and fetch fail naming the remote */
static void
test_missing(void **state)
{
	struct fx *f = *state;
	struct sc_err e = {0};
	char clone[PATH_MAX + 8], hex[GITWORK_HEXSZ];

	snprintf(clone, sizeof(clone), "%s/clone", f->root);
	assert_true(gitremote_clone(clone, f->bare, BR, &e) < 0);
	assert_non_null(strstr(e.msg, f->bare));
	assert_true(gitremote_fetch(hex, f->repo, f->bare, BR, &e) < 0);
	assert_non_null(strstr(e.msg, f->bare));
	assert_string_equal(hex, "");
	assert_int_equal(
	    gitremote_push(f->repo, f->bare, "bad..name", true, &e), SC_EDATA);
}

/* https://user:token@host is how libgit2 takes credentials from storyctl
 * (docs/cluster.md#credentials): the failures name the remote without
 * its password (port 9 on loopback refuses at once) */
static void
test_password_hidden(void **state)
{
	struct fx *f = *state;
	struct sc_err e = {0};
	const char *url = "https://bob:s3cretT0ken99@127.0.0.1:9/team/x.git";
	char clone[PATH_MAX + 8], hex[GITWORK_HEXSZ];

	snprintf(clone, sizeof(clone), "%s/clone", f->root);
	assert_int_equal(gitremote_push(f->repo, url, BR, true, &e), SC_EIO);
	assert_non_null(strstr(e.msg, "https://bob:"));
	assert_non_null(strstr(e.msg, "@127.0.0.1:9/team/x.git: push failed"));
	assert_null(strstr(e.msg, "s3cretT0ken99"));
	memset(&e, 0, sizeof(e));
	assert_true(gitremote_clone(clone, url, BR, &e) < 0);
	assert_non_null(strstr(e.msg, "127.0.0.1:9/team/x.git"));
	assert_null(strstr(e.msg, "s3cretT0ken99"));
	memset(&e, 0, sizeof(e));
	assert_true(gitremote_fetch(hex, f->repo, url, BR, &e) < 0);
	assert_non_null(strstr(e.msg, "127.0.0.1:9/team/x.git"));
	assert_null(strstr(e.msg, "s3cretT0ken99"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_force, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_password_hidden, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
