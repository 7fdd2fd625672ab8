/*
 * test_gitstate.c - the state branch: commits land on the branch only,
 * HEAD, the index and the work tree stay exactly as they were.
 *
 * Repositories are made with libgit2 in a fresh mkdtemp directory per
 * test and removed afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "state/gitstate.h"
#include "state/gitstate_int.h"

#define BRANCH "storyctl/state"
#define REF "refs/heads/" BRANCH

struct fx {
	char dir[PATH_MAX]; /* realpath of the temp dir = work tree root */
};

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int
fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	assert_non_null(fx);
	snprintf(tmpl, sizeof(tmpl), "%s/gitstate-test-XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, fx->dir));
	*state = fx;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *fx = *state;

	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* out = dir/name (out has PATH_MAX bytes). */
static void
join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	join(path, dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The whole file (binary), malloc'd and NUL-terminated; *len its size. */
static char *
slurp(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX];
	char *buf = NULL;
	size_t n = 0, cap = 0, r;
	FILE *f;

	join(path, dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	do {
		if (n + 4096 > cap) {
			cap = (n + 4096) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0'; /* the last read left 4096 bytes free */
	*len = n;
	return buf;
}

/* An initialised repository whose HEAD is refs/heads/main (unborn). */
static git_repository *
repo_init(const char *dir)
{
	git_repository_init_options o;
	git_repository *repo = NULL;

	assert_int_equal(git_repository_init_options_init(
			     &o, GIT_REPOSITORY_INIT_OPTIONS_VERSION),
	    0);
	o.flags = GIT_REPOSITORY_INIT_MKPATH;
	o.initial_head = "main";
	assert_int_equal(git_repository_init_ext(&repo, dir, &o), 0);
	return repo;
}

/* Stage path from the work tree into the index and write the index. */
static void
stage(git_repository *repo, const char *path)
{
	git_index *idx = NULL;

	assert_int_equal(git_repository_index(&idx, repo), 0);
	assert_int_equal(git_index_add_bypath(idx, path), 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
}

/* Commit the index on HEAD (main) as a user would. */
static void
commit_index(git_repository *repo, const char *msg)
{
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_oid tree_id, id;

	assert_int_equal(git_repository_index(&idx, repo), 0);
	assert_int_equal(git_index_write_tree(&tree_id, idx), 0);
	assert_int_equal(git_tree_lookup(&tree, repo, &tree_id), 0);
	assert_int_equal(
	    git_signature_new(&sig, "T", "t@example.org", 1000, 60), 0);
	assert_int_equal(git_commit_create(&id, repo, "HEAD", sig, sig, NULL,
			     msg, tree, 0, NULL),
	    0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
}

/* The state branch's tip commit (looked up with a separate handle). */
static git_commit *
tip_commit(git_repository *repo)
{
	git_commit *c = NULL;
	git_oid id;

	assert_int_equal(git_reference_name_to_id(&id, repo, REF), 0);
	assert_int_equal(git_commit_lookup(&c, repo, &id), 0);
	return c;
}

static void
commit_files(struct gitstate *gs, const struct gitstate_file *f, size_t n,
    const char *msg, int64_t now, int want_committed)
{
	struct sc_err err = {0, ""};
	int committed = -1;

	if (gitstate_commit(gs, &committed, f, n, msg, now, &err) != 0)
		fail_msg("gitstate_commit: %s", err.msg);
	assert_int_equal(committed, want_committed);
}

static void
assert_file(struct gitstate *gs, const char *path, const char *want)
{
	struct sc_err err = {0, ""};
	char *data = NULL;
	size_t len = 0;
	int found = -1;

	assert_int_equal(gitstate_read(gs, &data, &len, &found, path, &err), 0);
	assert_int_equal(found, 1);
	assert_non_null(data);
	assert_int_equal(len, strlen(want));
	assert_string_equal(data, want);
	free(data);
}

static void
assert_no_file(struct gitstate *gs, const char *path)
{
	struct sc_err err = {0, ""};
	char *data = (char *)"x";
	int found = -1;

	assert_int_equal(gitstate_read(gs, &data, NULL, &found, path, &err), 0);
	assert_int_equal(found, 0);
	assert_null(data);
}

static size_t
count(struct gitstate *gs)
{
	struct sc_err err = {0, ""};
	size_t n = 99;

	assert_int_equal(gitstate_count(gs, &n, &err), 0);
	return n;
}

static struct gitstate *
open_ok(const char *dir)
{
	struct sc_err err = {0, ""};
	struct gitstate *gs = NULL;

	if (gitstate_open(&gs, dir, BRANCH, &err) != 0)
		fail_msg("gitstate_open %s: %s", dir, err.msg);
	assert_non_null(gs);
	return gs;
}

struct snap {
	char *head, *index, *wt_a, *wt_b;
	size_t head_n, index_n, wt_a_n, wt_b_n;
	struct stat st_a;
	git_oid main_id;
};

static void
snap_take(struct snap *s, git_repository *repo, const char *dir)
{
	char path[PATH_MAX];

	s->head = slurp(dir, ".git/HEAD", &s->head_n);
	s->index = slurp(dir, ".git/index", &s->index_n);
	s->wt_a = slurp(dir, "a.txt", &s->wt_a_n);
	s->wt_b = slurp(dir, "b.txt", &s->wt_b_n);
	join(path, dir, "a.txt");
	assert_int_equal(stat(path, &s->st_a), 0);
	assert_int_equal(
	    git_reference_name_to_id(&s->main_id, repo, "refs/heads/main"), 0);
}

static void
snap_free(struct snap *s)
{
	free(s->head);
	free(s->index);
	free(s->wt_a);
	free(s->wt_b);
}

/*
 * The main contract: a repo with a commit on main, a modified work tree
 * file and a staged new file; two state commits (progress.md +
 * stories/a.json, then stories/b.json) leave HEAD, main, the index file
 * and the work tree byte for byte as they were.
 */
static void
test_commit_leaves_head_index_worktree(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs;
	struct snap before, after;
	const struct gitstate_file f1[] = {
	    {"progress.md", "| story | status |\n", 19},
	    {"stories/a.json", "{\"id\":\"a\"}\n", 11},
	};
	const struct gitstate_file f2[] = {
	    {"stories/b.json", "{\"id\":\"b\"}\n", 11},
	};
	git_commit *c2, *c1;
	const git_signature *au, *co;
	char *msg = NULL;
	int found = 0;
	struct sc_err err = {0, ""};

	write_file(fx->dir, "a.txt", "hello\n");
	stage(repo, "a.txt");
	commit_index(repo, "initial\n");
	write_file(fx->dir, "a.txt", "dirty, not staged\n");
	write_file(fx->dir, "b.txt", "staged\n");
	stage(repo, "b.txt");
	snap_take(&before, repo, fx->dir);

	gs = open_ok(fx->dir);
	assert_string_equal(gitstate_workdir(gs), fx->dir);
	assert_string_equal(gitstate_branch(gs), BRANCH);
	assert_int_equal(count(gs), 0);
	commit_files(gs, f1, 2, "1-1 attempt 1 claude: incomplete -> retry",
	    1700000000, 1);
	commit_files(
	    gs, f2, 1, "b attempt 1 codex: success -> done\n", 1700000060, 1);
	assert_int_equal(count(gs), 2);
	assert_file(gs, "progress.md", "| story | status |\n");
	assert_file(gs, "stories/a.json", "{\"id\":\"a\"}\n");
	assert_file(gs, "stories/b.json", "{\"id\":\"b\"}\n");
	assert_int_equal(gitstate_tip_message(gs, &msg, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(msg, "b attempt 1 codex: success -> done");
	free(msg);

	/* commit objects: signature, time, parents, stored message */
	c2 = tip_commit(repo);
	au = git_commit_author(c2);
	co = git_commit_committer(c2);
	assert_string_equal(au->name, "storyctl");
	assert_string_equal(au->email, "storyctl@localhost");
	assert_string_equal(co->name, "storyctl");
	assert_string_equal(co->email, "storyctl@localhost");
	assert_int_equal(au->when.time, 1700000060);
	assert_int_equal(au->when.offset, 0);
	assert_int_equal(co->when.time, 1700000060);
	assert_string_equal(
	    git_commit_message(c2), "b attempt 1 codex: success -> done\n");
	assert_int_equal(git_commit_parentcount(c2), 1);
	assert_int_equal(git_commit_parent(&c1, c2, 0), 0);
	assert_int_equal(git_commit_parentcount(c1), 0);
	assert_int_equal(git_commit_time(c1), 1700000000);
	assert_string_equal(git_commit_message(c1),
	    "1-1 attempt 1 claude: incomplete -> retry\n");
	git_commit_free(c1);
	git_commit_free(c2);

	/* HEAD, main, index, work tree untouched */
	snap_take(&after, repo, fx->dir);
	assert_int_equal(before.head_n, after.head_n);
	assert_memory_equal(before.head, after.head, before.head_n);
	assert_string_equal(after.head, "ref: refs/heads/main\n");
	assert_true(git_oid_equal(&before.main_id, &after.main_id));
	assert_int_equal(before.index_n, after.index_n);
	assert_memory_equal(before.index, after.index, before.index_n);
	assert_int_equal(before.wt_a_n, after.wt_a_n);
	assert_memory_equal(before.wt_a, after.wt_a, before.wt_a_n);
	assert_memory_equal(before.wt_b, after.wt_b, before.wt_b_n);
	assert_int_equal(before.st_a.st_ino, after.st_a.st_ino);
	assert_int_equal(before.st_a.st_mtim.tv_sec, after.st_a.st_mtim.tv_sec);
	assert_int_equal(
	    before.st_a.st_mtim.tv_nsec, after.st_a.st_mtim.tv_nsec);
	assert_int_equal(git_repository_head_detached(repo), 0);
	/* the state files never appear in the work tree */
	{
		char p[PATH_MAX];

		join(p, fx->dir, "progress.md");
		assert_int_not_equal(access(p, F_OK), 0);
		join(p, fx->dir, "stories");
		assert_int_not_equal(access(p, F_OK), 0);
	}
	snap_free(&before);
	snap_free(&after);
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_noop_commit_skipped(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	const struct gitstate_file f[] = {
	    {"progress.md", "same\n", 5},
	    {"stories/x.json", "{}", 2},
	};
	char hex1[41], hex2[41];
	int found = 0;
	struct sc_err err = {0, ""};

	/* no branch and nothing to write: no branch is made */
	commit_files(gs, NULL, 0, "nothing", 1, 0);
	assert_int_equal(count(gs), 0);
	assert_int_equal(gitstate_tip_id(gs, hex1, &found, &err), 0);
	assert_int_equal(found, 0);
	assert_string_equal(hex1, "");

	commit_files(gs, f, 2, "first", 1, 1);
	assert_int_equal(gitstate_tip_id(gs, hex1, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(strlen(hex1), 40);
	/* same content again, in any subset: skipped */
	commit_files(gs, f, 2, "again", 2, 0);
	commit_files(gs, f + 1, 1, "again", 3, 0);
	commit_files(gs, NULL, 0, "again", 4, 0);
	assert_int_equal(count(gs), 1);
	assert_int_equal(gitstate_tip_id(gs, hex2, &found, &err), 0);
	assert_string_equal(hex1, hex2);
	/* a real change commits again */
	commit_files(gs, f, 1, "changed", 5, 0);
	{
		const struct gitstate_file g = {"progress.md", "new\n", 4};

		commit_files(gs, &g, 1, "changed", 5, 1);
	}
	assert_int_equal(count(gs), 2);
	assert_file(gs, "stories/x.json", "{}");
	assert_file(gs, "progress.md", "new\n");
	gitstate_free(gs);
	git_repository_free(repo);
}

/* git init and nothing else: HEAD is unborn and must stay so. */
static void
test_unborn_head(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs;
	const struct gitstate_file f = {"progress.md", "p\n", 2};
	char *head0, *head1;
	size_t n0, n1;

	head0 = slurp(fx->dir, ".git/HEAD", &n0);
	assert_int_equal(git_repository_head_unborn(repo), 1);
	gs = open_ok(fx->dir);
	commit_files(gs, &f, 1, "first", 42, 1);
	assert_file(gs, "progress.md", "p\n");
	assert_int_equal(count(gs), 1);
	assert_int_equal(git_repository_head_unborn(repo), 1);
	head1 = slurp(fx->dir, ".git/HEAD", &n1);
	assert_int_equal(n0, n1);
	assert_memory_equal(head0, head1, n0);
	{
		char p[PATH_MAX];

		/* no index file was created either */
		join(p, fx->dir, ".git/index");
		assert_int_not_equal(access(p, F_OK), 0);
	}
	free(head0);
	free(head1);
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_open_not_a_repo(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct gitstate *gs = (struct gitstate *)&err;
	int rc;

	rc = gitstate_open(&gs, fx->dir, BRANCH, &err);
	assert_int_equal(rc, SC_EDATA);
	assert_null(gs);
	assert_non_null(strstr(err.msg, fx->dir));
	assert_non_null(strstr(err.msg, "not a git repository"));
	gitstate_free(NULL);
}

static void
test_open_bad_branch(void **state)
{
	struct fx *fx = *state;
	static const char *const bad[] = {"", "a..b", "x/", "/x", "a b", "HEAD",
	    "-x", "a.lock", "x~1", "x:y"};
	git_repository *repo = repo_init(fx->dir);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sc_err err = {0, ""};
		struct gitstate *gs = NULL;

		if (gitstate_open(&gs, fx->dir, bad[i], &err) != SC_EDATA)
			fail_msg("branch '%s' accepted", bad[i]);
		assert_null(gs);
		assert_non_null(strstr(err.msg, "branch"));
	}
	git_repository_free(repo);
}

/* Opened from a subdirectory, the work tree root is found upward. */
static void
test_open_from_subdir(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	char sub[PATH_MAX];
	struct gitstate *gs;

	join(sub, fx->dir, "docs");
	assert_int_equal(mkdir(sub, 0755), 0);
	join(sub, fx->dir, "docs/stories");
	assert_int_equal(mkdir(sub, 0755), 0);
	gs = open_ok(sub);
	assert_string_equal(gitstate_workdir(gs), fx->dir);
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_bare_repo_refused(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = NULL;
	struct gitstate *gs = NULL;
	struct sc_err err = {0, ""};

	assert_int_equal(git_repository_init(&repo, fx->dir, 1), 0);
	assert_int_equal(gitstate_open(&gs, fx->dir, BRANCH, &err), SC_EDATA);
	assert_null(gs);
	assert_non_null(strstr(err.msg, "bare"));
	git_repository_free(repo);
}

static void
test_bad_paths(void **state)
{
	struct fx *fx = *state;
	static const char *const bad[] = {"", "/abs", "dir/", "a//b", "..",
	    "../x", "a/./b", "a/../b", ".git/config", "x/.GIT/y", "."};
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gitstate_file f[2] = {
		    {"ok.md", "x", 1},
		    {bad[i], "x", 1},
		};
		struct sc_err err = {0, ""};
		int committed = -1;

		if (gitstate_commit(gs, &committed, f, 2, "m", 1, &err) !=
		    SC_EDATA)
			fail_msg("path '%s' accepted", bad[i]);
		assert_int_equal(committed, 0);
		assert_non_null(strstr(err.msg, "state branch " BRANCH));
	}
	{
		struct gitstate_file f[2] = {
		    {"stories/a.json", "1", 1},
		    {"stories/a.json", "2", 1},
		};
		struct sc_err err = {0, ""};
		int committed = -1;

		assert_int_equal(
		    gitstate_commit(gs, &committed, f, 2, "m", 1, &err),
		    SC_EDATA);
		assert_non_null(strstr(err.msg, "twice"));
	}
	assert_int_equal(count(gs), 0);
	gitstate_free(gs);
	git_repository_free(repo);
}

/* A file where a directory is (or the reverse) is a libgit2 error,
 * reported with the branch name; the branch is unchanged. */
static void
test_dir_file_conflict(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	const struct gitstate_file f = {"progress.md", "p", 1};
	const struct gitstate_file g = {"progress.md/x", "q", 1};
	const struct gitstate_file h = {"stories/a.json", "a", 1};
	const struct gitstate_file k = {"stories", "s", 1};
	struct sc_err err = {0, ""};
	int committed = -1;

	commit_files(gs, &f, 1, "one", 1, 1);
	commit_files(gs, &h, 1, "two", 2, 1);
	assert_int_equal(
	    gitstate_commit(gs, &committed, &g, 1, "m", 3, &err), SC_EIO);
	assert_int_equal(strncmp(err.msg, "state branch " BRANCH ": ",
			     strlen("state branch " BRANCH ": ")),
	    0);
	assert_int_equal(committed, 0);
	err.msg[0] = '\0';
	assert_int_equal(
	    gitstate_commit(gs, &committed, &k, 1, "m", 3, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "state branch " BRANCH));
	assert_int_equal(count(gs), 2);
	assert_file(gs, "progress.md", "p");
	gitstate_free(gs);
	git_repository_free(repo);
}

/*
 * Deep paths work, and only the trees on the written paths change: a
 * sibling subtree keeps its id (so cost does not grow with the tree).
 */
static void
test_nested_paths_reuse_subtrees(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	const struct gitstate_file f[] = {
	    {"a/b/c/d.txt", "d", 1},
	    {"other/keep.json", "k", 1},
	    {"stories/1-1.json", "1", 1},
	};
	const struct gitstate_file g[] = {
	    {"a/b/e.txt", "e", 1},
	    {"stories/1-2.json", "2", 1},
	};
	git_commit *c1, *c2;
	git_tree *t1, *t2;
	git_tree_entry *e1, *e2;

	commit_files(gs, f, 3, "one", 1, 1);
	c1 = tip_commit(repo);
	commit_files(gs, g, 2, "two", 2, 1);
	c2 = tip_commit(repo);
	assert_file(gs, "a/b/c/d.txt", "d");
	assert_file(gs, "a/b/e.txt", "e");
	assert_file(gs, "other/keep.json", "k");
	assert_file(gs, "stories/1-1.json", "1");
	assert_file(gs, "stories/1-2.json", "2");
	assert_no_file(gs, "a/b");
	assert_no_file(gs, "stories");
	assert_no_file(gs, "missing.md");
	assert_no_file(gs, "a/b/c/d.txt/x");
	assert_int_equal(git_commit_tree(&t1, c1), 0);
	assert_int_equal(git_commit_tree(&t2, c2), 0);
	assert_int_equal(git_tree_entry_bypath(&e1, t1, "other"), 0);
	assert_int_equal(git_tree_entry_bypath(&e2, t2, "other"), 0);
	assert_true(
	    git_oid_equal(git_tree_entry_id(e1), git_tree_entry_id(e2)));
	git_tree_entry_free(e1);
	git_tree_entry_free(e2);
	assert_int_equal(git_tree_entry_bypath(&e1, t1, "a/b/c"), 0);
	assert_int_equal(git_tree_entry_bypath(&e2, t2, "a/b/c"), 0);
	assert_true(
	    git_oid_equal(git_tree_entry_id(e1), git_tree_entry_id(e2)));
	git_tree_entry_free(e1);
	git_tree_entry_free(e2);
	git_tree_free(t1);
	git_tree_free(t2);
	git_commit_free(c1);
	git_commit_free(c2);
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_read_before_branch_exists(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	struct sc_err err = {0, ""};
	char *msg = (char *)"x";
	int found = -1;

	assert_no_file(gs, "progress.md");
	assert_int_equal(gitstate_tip_message(gs, &msg, &found, &err), 0);
	assert_int_equal(found, 0);
	assert_null(msg);
	assert_int_equal(count(gs), 0);
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_binary_and_empty_files(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	static const char bin[] = {'a', '\0', 'b', '\0', '\n'};
	const struct gitstate_file f[] = {
	    {"bin", bin, sizeof(bin)},
	    {"empty", NULL, 0},
	};
	struct sc_err err = {0, ""};
	char *data = NULL;
	size_t len = 0;
	int found = 0;

	commit_files(gs, f, 2, "bin", 1, 1);
	assert_int_equal(
	    gitstate_read(gs, &data, &len, &found, "bin", &err), 0);
	assert_int_equal(found, 1);
	assert_int_equal(len, sizeof(bin));
	assert_memory_equal(data, bin, sizeof(bin));
	assert_int_equal(data[len], '\0');
	free(data);
	assert_file(gs, "empty", "");
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_message_normalised(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	const struct gitstate_file f = {"p", "1", 1};
	const struct gitstate_file g = {"p", "2", 1};
	struct sc_err err = {0, ""};
	git_commit *c;
	int committed = -1;

	commit_files(gs, &f, 1, "subject\n\nbody line\n\n  \n", 1, 1);
	c = tip_commit(repo);
	assert_string_equal(git_commit_message(c), "subject\n\nbody line\n");
	git_commit_free(c);
	assert_int_equal(
	    gitstate_commit(gs, &committed, &g, 1, " \n\n", 2, &err),
	    SC_ESOFTWARE);
	assert_int_equal(
	    gitstate_commit(gs, &committed, &g, 1, "", 2, &err), SC_ESOFTWARE);
	assert_int_equal(gitstate_commit(gs, &committed, &g, 1, NULL, 2, &err),
	    SC_ESOFTWARE);
	assert_int_equal(count(gs), 1);
	gitstate_free(gs);
	git_repository_free(repo);
}

/* Two handles on one repository: each commit builds on the branch as it
 * is on disk, never on a cached tip, so no update is lost. */
static void
test_two_writers_lose_nothing(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *g1 = open_ok(fx->dir);
	struct gitstate *g2 = open_ok(fx->dir);
	const struct gitstate_file a = {"stories/a.json", "a", 1};
	const struct gitstate_file b = {"stories/b.json", "b", 1};
	const struct gitstate_file c = {"progress.md", "c", 1};

	commit_files(g1, &a, 1, "a", 1, 1);
	commit_files(g2, &b, 1, "b", 2, 1);
	commit_files(g1, &c, 1, "c", 3, 1);
	assert_int_equal(count(g1), 3);
	assert_int_equal(count(g2), 3);
	assert_file(g2, "stories/a.json", "a");
	assert_file(g2, "stories/b.json", "b");
	assert_file(g2, "progress.md", "c");
	gitstate_free(g1);
	gitstate_free(g2);
	git_repository_free(repo);
}

/* A state branch someone checked out is refused at open. */
static void
test_checked_out_branch_refused(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	const struct gitstate_file f = {"progress.md", "p", 1};
	struct sc_err err = {0, ""};

	commit_files(gs, &f, 1, "p", 1, 1);
	gitstate_free(gs);
	gs = NULL;
	assert_int_equal(git_repository_set_head(repo, REF), 0);
	assert_int_equal(gitstate_open(&gs, fx->dir, BRANCH, &err), SC_EDATA);
	assert_null(gs);
	assert_non_null(strstr(err.msg, "checked out"));
	/* another branch name is fine */
	assert_int_equal(gitstate_open(&gs, fx->dir, "other/state", &err), 0);
	gitstate_free(gs);
	git_repository_free(repo);
}

/* A tip whose commit object is gone (power loss without fsync) is
 * reported with a way out, and reads fail the same way. */
static void
test_lost_tip_object_reported(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate *gs = open_ok(fx->dir);
	const struct gitstate_file f = {"progress.md", "p", 1};
	struct sc_err err = {0, ""};
	char hex[41], rel[64], *data = NULL;
	int found = 0, committed = -1;

	commit_files(gs, &f, 1, "p", 1, 1);
	assert_int_equal(gitstate_tip_id(gs, hex, &found, &err), 0);
	gitstate_free(gs);
	snprintf(rel, sizeof(rel), ".git/objects/%.2s/%s", hex, hex + 2);
	{
		char p[PATH_MAX];

		join(p, fx->dir, rel);
		assert_int_equal(unlink(p), 0);
	}
	gs = open_ok(fx->dir);
	assert_int_equal(
	    gitstate_commit(gs, &committed, &f, 1, "again", 2, &err), SC_EIO);
	assert_int_equal(committed, 0);
	assert_non_null(strstr(err.msg, "git branch -D " BRANCH));
	assert_int_equal(
	    gitstate_read(gs, &data, NULL, &found, "progress.md", &err),
	    SC_EIO);
	assert_null(data);
	gitstate_free(gs);
	git_repository_free(repo);
}

/* Child of test_concurrent_writers: n commits of its own files; exits
 * with the number that succeeded. */
static void
writer_child(const char *dir, char tag, int n)
{
	struct sc_err err = {0, ""};
	struct gitstate *gs = NULL;
	char path[64], data[16];
	int i, ok = 0, committed = 0;

	if (gitstate_open(&gs, dir, BRANCH, &err) != 0)
		_exit(0);
	for (i = 0; i < n; i++) {
		struct gitstate_file f;

		snprintf(path, sizeof(path), "stories/%c-%d.json", tag, i);
		snprintf(data, sizeof(data), "%d", i);
		f.path = path;
		f.data = data;
		f.len = strlen(data);
		if (gitstate_commit(gs, &committed, &f, 1, path, i, &err) ==
			0 &&
		    committed)
			ok++;
	}
	gitstate_free(gs);
	_exit(ok);
}

/*
 * Processes racing on the branch never lose an update: every commit
 * that reports success adds exactly one file, so the number of commits
 * equals the number of files equals the successes the children count.
 */
static void
test_concurrent_writers(void **state)
{
	struct fx *fx = *state;
	git_repository *repo = repo_init(fx->dir);
	const int nchild = 3, per = 40;
	pid_t pids[3];
	int i, total = 0;
	struct gitstate *gs;
	git_commit *tip;
	git_tree *tree;
	git_tree_entry *e;
	git_tree *stories;

	for (i = 0; i < nchild; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0)
			writer_child(fx->dir, (char)('a' + i), per);
	}
	for (i = 0; i < nchild; i++) {
		int st = 0;

		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st));
		total += WEXITSTATUS(st);
	}
	assert_true(total > 0);
	gs = open_ok(fx->dir);
	assert_int_equal(count(gs), (size_t)total);
	tip = tip_commit(repo);
	assert_int_equal(git_commit_tree(&tree, tip), 0);
	assert_int_equal(git_tree_entry_bypath(&e, tree, "stories"), 0);
	assert_int_equal(
	    git_tree_lookup(&stories, repo, git_tree_entry_id(e)), 0);
	assert_int_equal(git_tree_entrycount(stories), (size_t)total);
	git_tree_free(stories);
	git_tree_entry_free(e);
	git_tree_free(tree);
	git_commit_free(tip);
	gitstate_free(gs);
	git_repository_free(repo);
}

static void
test_bad_arguments(void **state)
{
	struct sc_err err = {0, ""};
	struct gitstate *gs = NULL;
	int committed = 0, found = 0;
	char *out = NULL;
	size_t n = 0;

	assert_int_equal(gitstate_open(NULL, "/", BRANCH, &err), SC_ESOFTWARE);
	assert_int_equal(gitstate_open(&gs, NULL, BRANCH, &err), SC_ESOFTWARE);
	assert_int_equal(
	    gitstate_commit(NULL, &committed, NULL, 0, "m", 1, &err),
	    SC_ESOFTWARE);
	assert_int_equal(
	    gitstate_read(NULL, &out, NULL, &found, "p", &err), SC_ESOFTWARE);
	assert_int_equal(gitstate_count(NULL, &n, NULL), SC_ESOFTWARE);
	assert_null(gitstate_workdir(NULL));
}

static int
group_setup(void **state)
{
	return git_libgit2_init() < 0 ? -1 : 0;
}

static int
group_teardown(void **state)
{
	git_libgit2_shutdown();
	return 0;
}

/* Loose object files under dir/.git/objects (fan-out directories). */
static size_t
count_loose(const char *dir)
{
	char path[PATH_MAX + 64];
	struct dirent *de, *fe;
	DIR *d, *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/.git/objects", dir);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		snprintf(
		    path, sizeof(path), "%s/.git/objects/%s", dir, de->d_name);
		if ((f = opendir(path)) == NULL)
			continue;
		while ((fe = readdir(f)) != NULL)
			if (fe->d_name[0] != '.')
				n++;
		closedir(f);
	}
	closedir(d);
	return n;
}

static void
test_tx_replace_and_pack(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct gitstate_tx *tx = NULL;
	struct gitstate *gs;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate_file f[2] = {
	    {"old/a.json", "{}", 2}, {"progress.md", "one", 3}};
	char path[64], text[64];
	int committed = -1, i;

	gs = open_ok(fx->dir);
	gitstate_pack_at(gs, 2048);
	commit_files(gs, f, 2, "first", 1, 1);
	/* replace: only what is added is in the new tree */
	assert_int_equal(gitstate_tx_begin(gs, &tx, 1, &err), 0);
	for (i = 0; i < 2100; i++) {
		snprintf(path, sizeof(path), "stories/%04d/s%d.json",
		    i / 200 + 1, i);
		snprintf(text, sizeof(text), "{\"id\": \"s%d\"}\n", i);
		assert_int_equal(
		    gitstate_tx_add(tx, path, text, strlen(text), &err), 0);
	}
	assert_int_equal(gitstate_tx_add(tx, "progress.md", "two", 3, &err), 0);
	/* a bad path fails at once, a path twice at the commit */
	assert_int_equal(gitstate_tx_add(tx, "../x", "x", 1, &err), SC_EDATA);
	assert_int_equal(
	    gitstate_tx_commit(tx, &committed, "many", 2, &err), 0);
	assert_int_equal(committed, 1);
	gitstate_tx_free(tx);
	assert_file(gs, "progress.md", "two");
	assert_file(gs, "stories/0008/s1499.json", "{\"id\": \"s1499\"}\n");
	assert_no_file(gs, "old/a.json");
	/* over the threshold (2048 objects): the commit packed them */
	assert_true(count_loose(fx->dir) < 100);

	/* a path given twice */
	assert_int_equal(gitstate_tx_begin(gs, &tx, 0, &err), 0);
	assert_int_equal(gitstate_tx_add(tx, "a", "1", 1, &err), 0);
	assert_int_equal(gitstate_tx_add(tx, "b", "2", 1, &err), 0);
	assert_int_equal(gitstate_tx_add(tx, "a", "3", 1, &err), 0);
	assert_int_equal(
	    gitstate_tx_commit(tx, &committed, "twice", 3, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "'a' given twice"));
	assert_int_equal(committed, 0);
	gitstate_tx_free(tx);
	gitstate_tx_free(NULL);

	/* a few decisions stay loose until gitstate_flush() */
	for (i = 0; i < 5; i++) {
		struct gitstate_file g = {"stories/0001/s1.json", text, 0};
		snprintf(text, sizeof(text), "{\"v\": %d}\n", i);
		g.len = strlen(text);
		commit_files(gs, &g, 1, "decision", 10 + i, 1);
	}
	assert_true(count_loose(fx->dir) >= 5 * 5);
	assert_int_equal(gitstate_flush(gs, &err), 0);
	assert_int_equal(count_loose(fx->dir), 0);
	assert_int_equal(gitstate_flush(gs, &err), 0);
	assert_file(gs, "stories/0001/s1.json", "{\"v\": 4}\n");
	assert_int_equal(count(gs), 7);
	/* the pack replaced the handle's repository (its caches go): it
	 * still commits, on the same branch of the same work tree */
	{
		struct gitstate_file g = {"stories/0001/s1.json", "{}\n", 3};
		commit_files(gs, &g, 1, "after the pack", 20, 1);
	}
	assert_int_equal(count(gs), 8);
	assert_file(gs, "stories/0001/s1.json", "{}\n");
	assert_file(gs, "stories/0004/s700.json", "{\"id\": \"s700\"}\n");
	assert_string_equal(gitstate_branch(gs), "storyctl/state");
	gitstate_free(gs);

	/* a fresh handle reads everything back from the packs */
	gs = open_ok(fx->dir);
	assert_file(gs, "stories/0001/s1.json", "{}\n");
	assert_file(gs, "stories/0004/s700.json", "{\"id\": \"s700\"}\n");
	assert_int_equal(count(gs), 8);
	gitstate_free(gs);
	git_repository_free(repo);
}

/* Run git (argv) with its output into out; its exit status. */
static int
git_run(const char *const *argv, char *out, size_t size)
{
	size_t n = 0;
	ssize_t r;
	int fds[2], status = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(fds[1], STDOUT_FILENO) < 0 ||
		    dup2(fds[1], STDERR_FILENO) < 0)
			_exit(126);
		close(fds[0]);
		close(fds[1]);
		unsetenv("GIT_DIR");
		unsetenv("GIT_OBJECT_DIRECTORY");
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], out + n, size - 1 - n)) > 0)
		n += (size_t)r;
	close(fds[0]);
	out[n] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `git -C dir fsck --strict --full` exits 0 (its output on failure). */
static void
assert_fsck(const char *dir)
{
	const char *argv[] = {"git", "-C", dir, "fsck", "--strict", "--full",
	    "--no-dangling", NULL};
	char out[4096];

	if (git_run(argv, out, sizeof(out)) != 0)
		fail_msg("git fsck --strict in %s: %s", dir, out);
}

/*
 * The packs in dir/.git/objects/pack: their number, their total size,
 * and every .pack and .idx read-only for everyone as git writes them
 * (less the umask).
 */
static int
count_packs(const char *dir, size_t *bytes)
{
	char path[PATH_MAX], file[PATH_MAX];
	struct dirent *de;
	struct stat st;
	mode_t mask = umask(0);
	size_t len;
	DIR *d;
	int n = 0;

	umask(mask);
	*bytes = 0;
	join(path, dir, ".git/objects/pack");
	assert_non_null(d = opendir(path));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.')
			continue;
		join(file, path, de->d_name);
		assert_int_equal(stat(file, &st), 0);
		if ((st.st_mode & 07777) != (0444 & ~mask))
			fail_msg("%s: mode %o", file,
			    (unsigned)(st.st_mode & 07777));
		if (len > 5 && strcmp(de->d_name + len - 5, ".pack") == 0) {
			n++;
			*bytes += (size_t)st.st_size;
		}
	}
	closedir(d);
	return n;
}

/*
 * Decisions pack themselves (every 64 objects here) through libgit2:
 * gitstate_open() made the missing objects/pack, the packs are
 * read-only, a page rewritten by every commit is stored as deltas, the
 * loose copies are gone, and everything reads back, through this handle,
 * a new one and git, which finds the repository sound.
 */
static void
test_commits_pack(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct gitstate *gs;
	git_repository *repo = repo_init(fx->dir);
	struct gitstate_file f[2];
	char path[PATH_MAX], name[64], json[64], want[64];
	char *page = malloc(200 * 41 + 1);
	size_t bytes = 0, i, k;
	uint32_t x = 7;
	int packs;

	assert_non_null(page);
	/* a table of 200 rows of 40 pseudo-random hex digits: 8 KiB that
	 * deflate cannot shrink much, of which each commit changes one row */
	for (i = 0; i < 200; i++) {
		for (k = 0; k < 40; k++) {
			x = x * 1103515245u + 12345u;
			page[i * 41 + k] = "0123456789abcdef"[(x >> 16) & 15];
		}
		page[i * 41 + 40] = '\n';
	}
	page[200 * 41] = '\0';
	join(path, fx->dir, ".git/objects/pack");
	assert_int_equal(rmdir(path), 0);

	gs = open_ok(fx->dir);
	gitstate_pack_at(gs, 64);
	for (i = 0; i < 40; i++) {
		memcpy(page + i * 41, "done", 4);
		snprintf(name, sizeof(name), "stories/s%zu.json", i);
		snprintf(json, sizeof(json), "{\"id\": \"s%zu\"}\n", i);
		f[0] =
		    (struct gitstate_file){"progress.md", page, strlen(page)};
		f[1] = (struct gitstate_file){name, json, strlen(json)};
		commit_files(gs, f, 2, "decision", 100 + (int64_t)i, 1);
	}
	/* 5 objects a commit: 3 packs of 64, the rest loose */
	packs = count_packs(fx->dir, &bytes);
	assert_int_equal(packs, 3);
	assert_true(count_loose(fx->dir) <= 5 * 40 - 3 * 64);
	/* 38 versions of the page are in those packs: whole, deflated,
	 * they would take well over 100 KiB */
	if (bytes > 40 * 1024)
		fail_msg("3 packs take %zu bytes: no deltas?", bytes);
	assert_file(gs, "stories/s3.json", "{\"id\": \"s3\"}\n");
	assert_file(gs, "progress.md", page);
	assert_int_equal(gitstate_flush(gs, &err), 0);
	assert_int_equal(count_loose(fx->dir), 0);
	assert_int_equal(count_packs(fx->dir, &bytes), 4);
	assert_file(gs, "progress.md", page);
	assert_int_equal(count(gs), 40);
	gitstate_free(gs);

	gs = open_ok(fx->dir);
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "stories/s%zu.json", i);
		snprintf(want, sizeof(want), "{\"id\": \"s%zu\"}\n", i);
		assert_file(gs, name, want);
	}
	assert_int_equal(count(gs), 40);
	gitstate_free(gs);
	assert_fsck(fx->dir);

	/* plain git gc takes the packs over: one pack, nothing loose, and
	 * the branch reads back */
	{
		const char *gc[] = {"git", "-C", fx->dir, "gc", "-q", NULL};
		const char *co[] = {
		    "git", "-C", fx->dir, "count-objects", "-v", NULL};
		char out[4096];

		if (git_run(gc, out, sizeof(out)) != 0)
			fail_msg("git gc: %s", out);
		assert_int_equal(git_run(co, out, sizeof(out)), 0);
		if (strstr(out, "count: 0\n") == NULL ||
		    strstr(out, "packs: 1\n") == NULL)
			fail_msg("git count-objects -v after gc: %s", out);
	}
	gs = open_ok(fx->dir);
	assert_file(gs, "progress.md", page);
	assert_int_equal(count(gs), 40);
	gitstate_free(gs);
	assert_fsck(fx->dir);
	free(page);
	git_repository_free(repo);
}

/*
 * One commit of many objects (a large batch's first) is packed in
 * pieces of about pack_at objects, so that a pack's memory does not
 * grow with the batch; a commit that only crosses the threshold makes
 * one pack (docs/performance.md#packing-through-libgit2).
 */
static void
test_big_commit_packs_in_pieces(void **state)
{
	struct fx *fx = *state;
	struct sc_err err = {0, ""};
	struct gitstate_tx *tx = NULL;
	struct gitstate *gs;
	git_repository *repo = repo_init(fx->dir);
	char path[64], text[64];
	size_t bytes = 0;
	int committed = -1, i;

	gs = open_ok(fx->dir);
	gitstate_pack_at(gs, 64);
	/* 200 blobs, the trees of 4 directories and the root, a commit:
	 * 206 objects, 3 pieces of 69 or fewer */
	assert_int_equal(gitstate_tx_begin(gs, &tx, 1, &err), 0);
	for (i = 0; i < 200; i++) {
		snprintf(
		    path, sizeof(path), "stories/%04d/s%d.json", i / 50 + 1, i);
		snprintf(text, sizeof(text), "{\"id\": \"s%d\"}\n", i);
		assert_int_equal(
		    gitstate_tx_add(tx, path, text, strlen(text), &err), 0);
	}
	assert_int_equal(
	    gitstate_tx_commit(tx, &committed, "start", 1, &err), 0);
	assert_int_equal(committed, 1);
	gitstate_tx_free(tx);
	assert_int_equal(count_packs(fx->dir, &bytes), 3);
	assert_int_equal(count_loose(fx->dir), 0);
	/* the list of 206 objects, past two packs' worth, is given back,
	 * not kept at that size for the rest of the batch
	 * (docs/performance.md#per-story) */
	assert_null(gs->fresh);
	assert_int_equal(gs->afresh, 0);
	assert_file(gs, "stories/0004/s199.json", "{\"id\": \"s199\"}\n");
	/* 65 objects (pack_at + 1) make one more pack, not two */
	assert_int_equal(gitstate_tx_begin(gs, &tx, 0, &err), 0);
	for (i = 0; i < 62; i++) {
		snprintf(path, sizeof(path), "more/m%d.json", i);
		snprintf(text, sizeof(text), "{\"m\": %d}\n", i);
		assert_int_equal(
		    gitstate_tx_add(tx, path, text, strlen(text), &err), 0);
	}
	assert_int_equal(
	    gitstate_tx_commit(tx, &committed, "more", 2, &err), 0);
	gitstate_tx_free(tx);
	/* 62 blobs, more/, the root, the commit: 65, one pack */
	assert_int_equal(count_packs(fx->dir, &bytes), 4);
	assert_int_equal(count_loose(fx->dir), 0);
	assert_file(gs, "more/m61.json", "{\"m\": 61}\n");
	gitstate_free(gs);
	assert_fsck(fx->dir);
	git_repository_free(repo);
}

/* the lines of <dir>/.git/storyctl/loose, or -1 when it is not there */
static int
loose_list_lines(const char *dir)
{
	char path[PATH_MAX + 64];
	int c, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/.git/storyctl/loose", dir);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * Every commit lists the objects it wrote until they are packed, and
 * the next writer's first pack takes the list over with its own
 * objects: nothing of either stays loose, and no small pack is made per
 * writer (docs/state-branch.md#carried-over).  A listed object that is
 * no longer loose, and a line that is not an object, are passed over.
 */
static void
test_loose_carried_to_next_writer(void **state)
{
	struct fx *fx = *state;
	struct gitstate_file f[1];
	struct gitstate *gs;
	git_repository *repo = repo_init(fx->dir);
	char name[64], json[64], path[PATH_MAX + 64];
	size_t bytes = 0, left;
	FILE *list;
	int i;

	gs = open_ok(fx->dir);
	gitstate_pack_at(gs, 64);
	/* a blob, the root tree, stories/ and the commit: 4 a commit */
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "stories/s%d.json", i);
		snprintf(json, sizeof(json), "{\"id\": \"s%d\"}\n", i);
		f[0] = (struct gitstate_file){name, json, strlen(json)};
		commit_files(gs, f, 1, "first writer", 100 + i, 1);
	}
	/* listed as they were written: a writer killed now leaves no
	 * object out of the list */
	left = count_loose(fx->dir);
	assert_true(left >= 20);
	assert_int_equal(loose_list_lines(fx->dir), (int)left);
	assert_int_equal(count_packs(fx->dir, &bytes), 0);
	gitstate_free(gs);

	/* an object that git gc took, and a line that is no object */
	snprintf(path, sizeof(path), "%s/.git/storyctl/loose", fx->dir);
	assert_non_null(list = fopen(path, "a"));
	fputs("0123456789abcdef0123456789abcdef01234567 gone.json\n", list);
	fputs("not an object\n", list);
	fclose(list);

	/* a reader leaves the list as it is */
	gs = open_ok(fx->dir);
	assert_file(gs, "stories/s4.json", "{\"id\": \"s4\"}\n");
	gitstate_free(gs);
	assert_int_equal(loose_list_lines(fx->dir), (int)left + 2);

	/* the next writer: its pack holds the first writer's objects */
	gs = open_ok(fx->dir);
	gitstate_pack_at(gs, 64);
	for (i = 5; count_packs(fx->dir, &bytes) == 0; i++) {
		assert_true(i < 30);
		snprintf(name, sizeof(name), "stories/s%d.json", i);
		snprintf(json, sizeof(json), "{\"id\": \"s%d\"}\n", i);
		f[0] = (struct gitstate_file){name, json, strlen(json)};
		commit_files(gs, f, 1, "second writer", 100 + i, 1);
		/* the list is what is loose: the two odd lines are gone */
		if (count_packs(fx->dir, &bytes) == 0)
			assert_int_equal(loose_list_lines(fx->dir),
			    (int)count_loose(fx->dir));
	}
	/* it packed once 64 were loose, the first writer's counted */
	assert_true(i - 5 < 64 / 4);
	assert_int_equal(count_loose(fx->dir), 0);
	assert_int_equal(loose_list_lines(fx->dir), -1);
	assert_int_equal(count_packs(fx->dir, &bytes), 1);
	assert_file(gs, "stories/s0.json", "{\"id\": \"s0\"}\n");
	/* the next commit starts a new list, of its own objects only */
	snprintf(json, sizeof(json), "{\"id\": \"s%d\"}\n", i);
	f[0] = (struct gitstate_file){"stories/last.json", json, strlen(json)};
	commit_files(gs, f, 1, "after the pack", 200, 1);
	assert_int_equal(loose_list_lines(fx->dir), (int)count_loose(fx->dir));
	assert_true(count_loose(fx->dir) > 0);
	gitstate_free(gs);
	assert_fsck(fx->dir);
	git_repository_free(repo);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_commit_leaves_head_index_worktree),
	    T(test_noop_commit_skipped),
	    T(test_unborn_head),
	    T(test_open_not_a_repo),
	    T(test_open_bad_branch),
	    T(test_open_from_subdir),
	    T(test_bare_repo_refused),
	    T(test_bad_paths),
	    T(test_dir_file_conflict),
	    T(test_nested_paths_reuse_subtrees),
	    T(test_read_before_branch_exists),
	    T(test_binary_and_empty_files),
	    T(test_message_normalised),
	    T(test_two_writers_lose_nothing),
	    T(test_checked_out_branch_refused),
	    T(test_lost_tip_object_reported),
	    T(test_concurrent_writers),
	    T(test_tx_replace_and_pack),
	    T(test_commits_pack),
	    T(test_big_commit_packs_in_pieces),
	    T(test_loose_carried_to_next_writer),
	    cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
