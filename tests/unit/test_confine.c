/* test_confine.c - the bubblewrap argv of docs/sandbox.md#the-mounts:
 * which mounts, in which order (a later one covers an earlier one), and
 * the plans it refuses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "strategies/confine.h"

static const char *const agent[] = {"claude", "-p", "do it", NULL};

/* Index of the first run of words w (NULL-terminated) in argv at or
 * after from, or -1. */
static int
find(const struct strlist *argv, size_t from, const char *const *w)
{
	size_t i, k;

	for (i = from; i < argv->n; i++) {
		for (k = 0; w[k] != NULL && i + k < argv->n; k++)
			if (strcmp(argv->items[i + k], w[k]) != 0)
				break;
		if (w[k] == NULL)
			return (int)i;
	}
	return -1;
}

static int
find3(const struct strlist *argv, const char *a, const char *b, const char *c)
{
	const char *w[] = {a, b, c, NULL};

	return find(argv, 0, w);
}

static struct confine_plan
main_tree_plan(void)
{
	struct confine_plan p;

	memset(&p, 0, sizeof(p));
	p.bwrap = "/usr/bin/bwrap";
	p.tree = "/r";
	p.state_dir = "/r/.storyctl";
	p.private_git = "/r/.storyctl/sandbox/s1";
	p.gitdir = "/r/.git";
	p.commondir = "/r/.git";
	p.shown_common = "/r/.storyctl/repo.git";
	p.network = true;
	p.seccomp_fd = 3;
	return p;
}

/* -j 1: the tree, then the state dir covered (it is inside the tree),
 * then the private git dir over the tree's .git; the agent last, after
 * "--", word for word. */
static void
test_main_tree_order(void **state)
{
	struct confine_plan p = main_tree_plan();
	struct strlist out = {0};
	int tree, cover, git, shown, ro, dash;

	(void)state;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	assert_string_equal(out.items[0], "/usr/bin/bwrap");
	tree = find3(&out, "--bind", "/r", "/r");
	cover = find3(&out, "--tmpfs", "/r/.storyctl", NULL);
	shown = find3(&out, "--ro-bind", "/r/.git", "/r/.storyctl/repo.git");
	ro = find3(&out, "--remount-ro", "/r/.storyctl", NULL);
	git = find3(&out, "--bind", "/r/.storyctl/sandbox/s1", "/r/.git");
	dash = find3(&out, "--", "claude", "-p");
	assert_true(tree > 0 && cover > tree && shown > cover && ro > shown &&
	    git > ro && dash > git);
	assert_int_equal((size_t)dash + 4, out.n);
	assert_string_equal(out.items[out.n - 1], "do it");
	assert_true(find3(&out, "--ro-bind", "/", "/") > 0);
	assert_true(find3(&out, "--ro-bind", "/", "/") < tree);
	assert_true(find3(&out, "--share-net", NULL, NULL) > 0);
	assert_true(find3(&out, "--seccomp", "3", NULL) > 0);
	assert_true(find3(&out, "--new-session", NULL, NULL) > 0);
	assert_true(find3(&out, "--die-with-parent", NULL, NULL) > 0);
	assert_true(find3(&out, "--as-pid-1", NULL, NULL) > 0);
	assert_true(find3(&out, "--cap-drop", "ALL", NULL) > 0);
	assert_true(find3(&out, "--chdir", "/r", NULL) > 0);
	strlist_release(&out);
}

/* -j N: the worktree lies inside the state dir, so it is bound after
 * the state dir is covered, and the main tree is never bound
 * read-write. */
static void
test_worktree_inside_state_dir(void **state)
{
	struct confine_plan p = main_tree_plan();
	struct strlist out = {0};
	int cover, tree;

	(void)state;
	p.tree = "/r/.storyctl/worktrees/s1";
	p.gitdir = "/r/.git/worktrees/s1";
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	cover = find3(&out, "--tmpfs", "/r/.storyctl", NULL);
	tree = find3(&out, "--bind", "/r/.storyctl/worktrees/s1",
	    "/r/.storyctl/worktrees/s1");
	assert_true(cover > 0 && tree > cover);
	assert_int_equal(find3(&out, "--bind", "/r", "/r"), -1);
	assert_true(find3(&out, "--bind", "/r/.storyctl/sandbox/s1",
			"/r/.git/worktrees/s1") > tree);
	strlist_release(&out);
}

/* No network: no --share-net (--unshare-all took it). */
static void
test_network_off(void **state)
{
	struct confine_plan p = main_tree_plan();
	struct strlist out = {0};

	(void)state;
	p.network = false;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	assert_int_equal(find3(&out, "--share-net", NULL, NULL), -1);
	assert_true(find3(&out, "--unshare-all", NULL, NULL) > 0);
	strlist_release(&out);
}

/* Secrets covered before what the user opens again; a directory by a
 * read-only tmpfs, a file by /dev/null. */
static void
test_hidden_then_opened(void **state)
{
	struct confine_plan p = main_tree_plan();
	struct confine_hide hide[] = {
	    {"/home/u/.ssh", true}, {"/home/u/.netrc", false}};
	const char *readable[] = {"/home/u/.ssh/known_hosts"};
	const char *writable[] = {"/home/u/.claude", "/opt/cache"};
	const char *env[] = {"TMPDIR", "/tmp", NULL};
	const char *unset[] = {"SSH_AUTH_SOCK", NULL};
	struct strlist out = {0};
	int ssh, ro, netrc, open_, w1, w2, tree;

	(void)state;
	p.hide = hide;
	p.nhide = 2;
	p.readable = readable;
	p.nreadable = 1;
	p.writable = writable;
	p.nwritable = 2;
	p.setenv = env;
	p.unsetenv = unset;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	ssh = find3(&out, "--tmpfs", "/home/u/.ssh", NULL);
	ro = find3(&out, "--remount-ro", "/home/u/.ssh", NULL);
	netrc = find3(&out, "--ro-bind", "/dev/null", "/home/u/.netrc");
	open_ = find3(&out, "--ro-bind-try", "/home/u/.ssh/known_hosts",
	    "/home/u/.ssh/known_hosts");
	w1 = find3(&out, "--bind-try", "/home/u/.claude", "/home/u/.claude");
	w2 = find3(&out, "--bind-try", "/opt/cache", "/opt/cache");
	tree = find3(&out, "--bind", "/r", "/r");
	assert_true(ssh > 0 && ro > ssh && netrc > 0 && open_ > ro &&
	    open_ > netrc && w1 > open_ && w2 > w1 && tree > w2);
	assert_true(find3(&out, "--setenv", "TMPDIR", "/tmp") > 0);
	assert_true(find3(&out, "--unsetenv", "SSH_AUTH_SOCK", NULL) > 0);
	strlist_release(&out);
}

/* A tree that holds a secret (a repository at $HOME): the tree's bind
 * would show it again, so it is covered again after the tree. */
static void
test_secret_inside_tree(void **state)
{
	struct confine_plan p = main_tree_plan();
	struct confine_hide hide[] = {
	    {"/r/.ssh", true}, {"/home/u/.aws", true}};
	struct strlist out = {0};
	const char *w[] = {"--tmpfs", "/r/.ssh", NULL};
	int tree, first, again;

	(void)state;
	p.hide = hide;
	p.nhide = 2;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	tree = find3(&out, "--bind", "/r", "/r");
	first = find(&out, 0, w);
	again = find(&out, (size_t)first + 1, w);
	assert_true(first > 0 && first < tree && again > tree);
	/* one outside the tree is covered once */
	w[1] = "/home/u/.aws";
	first = find(&out, 0, w);
	assert_true(first > 0 && first < tree);
	assert_int_equal(find(&out, (size_t)first + 1, w), -1);
	strlist_release(&out);
}

/* The attempt's prompt file lies in the state dir: shown read-only
 * after the state dir is covered. */
static void
test_shown_file(void **state)
{
	struct confine_plan p = main_tree_plan();
	const char *shown[] = {"/r/.storyctl/logs/s1.a1.prompt"};
	struct strlist out = {0};

	(void)state;
	p.shown = shown;
	p.nshown = 1;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	assert_true(find3(&out, "--ro-bind", shown[0], shown[0]) >
	    find3(&out, "--tmpfs", "/r/.storyctl", NULL));
	strlist_release(&out);
}

/* An agent kept in /tmp (which the sandbox replaces) still runs: the
 * entry under /tmp that holds it is shown read-only right after the
 * fresh /tmp, before anything is hidden or opened; never /tmp whole. */
static void
test_program_in_tmp(void **state)
{
	struct confine_plan p = main_tree_plan();
	struct confine_hide hide[] = {{"/home/u/.ssh", true}};
	const char *tops[] = {"/tmp/t.1", "/var/tmp/pkg"};
	const char *whole[] = {"/tmp"}, *deeper[] = {"/tmp/t.1/bin"},
		   *elsewhere[] = {"/home/u/bin"};
	struct strlist out = {0};
	int tmp, prog, prog2, ssh;

	(void)state;
	p.program_tops = tops;
	p.nprogram_tops = 2;
	p.hide = hide;
	p.nhide = 1;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), 0);
	tmp = find3(&out, "--tmpfs", "/tmp", NULL);
	prog = find3(&out, "--ro-bind", "/tmp/t.1", "/tmp/t.1");
	prog2 = find3(&out, "--ro-bind", "/var/tmp/pkg", "/var/tmp/pkg");
	ssh = find3(&out, "--tmpfs", "/home/u/.ssh", NULL);
	assert_true(tmp > 0 && prog > tmp && prog2 > prog && ssh > prog2);
	strlist_release(&out);
	p.nprogram_tops = 1;
	p.program_tops = whole;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), SC_ESOFTWARE);
	p.program_tops = deeper;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), SC_ESOFTWARE);
	p.program_tops = elsewhere;
	assert_int_equal(confine_argv(&out, &p, agent, NULL), SC_ESOFTWARE);
}

static void
test_tmp_top(void **state)
{
	static const struct {
		const char *path, *top;
	} rows[] = {
	    {"/tmp/ci/tests/agents/node_modules/.bin/claude", "/tmp/ci"},
	    {"/tmp/agent.sh", "/tmp/agent.sh"},
	    {"/var/tmp/x/y", "/var/tmp/x"},
	    {"/tmp", ""},
	    {"/tmp/", ""},
	    {"/tmpx/y", ""},
	    {"/usr/bin/claude", ""},
	    {"/var/tmp", ""},
	    {"/tmp/../etc/passwd", ""},
	};
	char top[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(
		    confine_tmp_top(top, sizeof(top), rows[i].path),
		    rows[i].top[0] != '\0');
		assert_string_equal(
		    top, rows[i].top[0] != '\0' ? rows[i].top : top);
	}
}

/* Plans that would confine nothing, or the wrong thing, are bugs. */
static void
test_bad_plans(void **state)
{
	struct confine_plan p;
	struct strlist out = {0};
	struct sc_err err = {0};
	const char *outside[] = {"/etc/passwd"};
	int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		p = main_tree_plan();
		switch (i) {
		case 0:
			p.bwrap = NULL;
			break;
		case 1:
			p.tree = "r";
			break;
		case 2:
			p.gitdir = NULL;
			break;
		case 3:
			p.shown_common = "/elsewhere/repo.git";
			break;
		case 4:
			p.shown = outside;
			p.nshown = 1;
			break;
		case 5:
			p.state_dir = NULL;
			break;
		}
		assert_int_equal(
		    confine_argv(&out, &p, agent, &err), SC_ESOFTWARE);
		assert_int_equal(out.n, 0);
	}
	p = main_tree_plan();
	assert_int_equal(confine_argv(&out, &p, NULL, &err), SC_ESOFTWARE);
}

static void
test_path_under(void **state)
{
	static const struct {
		const char *path, *dir;
		bool want;
	} rows[] = {
	    {"/r/.storyctl/worktrees/a", "/r/.storyctl", true},
	    {"/r/.storyctl", "/r/.storyctl", true},
	    {"/r/.storyctl", "/r/.storyctl/", true},
	    {"/r/.storyctl2", "/r/.storyctl", false},
	    {"/r", "/r/.storyctl", false},
	    {"/anything", "/", true},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(confine_path_under(rows[i].path, rows[i].dir),
		    rows[i].want);
}

/* The secrets the spec names are all in the list. */
static void
test_secrets_listed(void **state)
{
	static const char *const want[] = {
	    ".ssh", ".aws", ".config/gh", ".netrc", ".gnupg"};
	size_t i, j;
	bool found;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		found = false;
		for (j = 0; confine_home_secrets[j] != NULL; j++)
			if (strcmp(confine_home_secrets[j], want[i]) == 0)
				found = true;
		assert_true(found);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_main_tree_order),
	    cmocka_unit_test(test_worktree_inside_state_dir),
	    cmocka_unit_test(test_network_off),
	    cmocka_unit_test(test_hidden_then_opened),
	    cmocka_unit_test(test_shown_file),
	    cmocka_unit_test(test_secret_inside_tree),
	    cmocka_unit_test(test_program_in_tmp),
	    cmocka_unit_test(test_tmp_top),
	    cmocka_unit_test(test_bad_plans),
	    cmocka_unit_test(test_path_under),
	    cmocka_unit_test(test_secrets_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
