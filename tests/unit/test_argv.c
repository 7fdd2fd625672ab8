/* test_argv.c - placeholder substitution and program lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/config/argv.h"

static const struct argv_vars vars = {
    .prompt = "Implement docs/stories/1-2.md",
    .story_file = "docs/stories/1-2.md",
    .story_id = "1-2",
    .role = "fallback",
    .stalled_task = "Write the parser",
    .repo = "/home/u/repo",
    .prompt_file = "/home/u/repo/.storyctl/logs/1-2.a3.1.prompt",
    .attempt = 3,
    .max_attempts = 5,
};

/* Build a template from a NULL-terminated list of strings. */
static void
tmpl_make(struct strlist *t, const char *const *args)
{
	size_t i;

	for (i = 0; args[i] != NULL; i++)
		assert_int_equal(strlist_push(t, args[i]), 0);
}

struct expand_case {
	const char *in;
	const char *want;
};

static void
test_expand_table(void **state)
{
	static const struct expand_case cases[] = {
	    {"plain", "plain"},
	    {"", ""},
	    {"{prompt}", "Implement docs/stories/1-2.md"},
	    {"{story_file}", "docs/stories/1-2.md"},
	    {"{story_id}", "1-2"},
	    {"{attempt}", "3"},
	    {"{max_attempts}", "5"},
	    {"{role}", "fallback"},
	    {"{stalled_task}", "Write the parser"},
	    {"{repo}", "/home/u/repo"},
	    {"--id={story_id}", "--id=1-2"},
	    {"{attempt}/{max_attempts}", "3/5"},
	    {"[{role}:{story_id}@{attempt}]", "[fallback:1-2@3]"},
	    {"{repo}/{story_file}", "/home/u/repo/docs/stories/1-2.md"},
	    {"{{prompt}}", "{prompt}"},
	    {"{{", "{"},
	    {"}}", "}"},
	    {"{{\"a\":{attempt}}}", "{\"a\":3}"},
	    {"x{{{story_id}}}y", "x{1-2}y"},
	};
	struct strlist t = {0}, out = {0};
	struct sc_err err = {0};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(strlist_push(&t, cases[i].in), 0);
	assert_int_equal(argv_expand(&out, &t, &vars, &err), 0);
	assert_int_equal(out.n, t.n);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(out.items[i], cases[i].want);
	assert_null(out.items[out.n]);
	assert_int_equal(argv_validate(&t, &err), 0);
	strlist_release(&t);
	strlist_release(&out);
}

struct bad_case {
	const char *in;
	const char *msg_part;
};

static void
test_expand_errors(void **state)
{
	static const struct bad_case cases[] = {
	    {"{promt}", "unknown placeholder {promt}"},
	    {"{}", "unknown placeholder {}"},
	    {"--x={story} {prompt}", "unknown placeholder {story}"},
	    {"{\"a\":1}", "unknown placeholder {\"a\":1}"},
	    {"{prompt", "unterminated '{'"},
	    {"a } b", "lone '}'"},
	    {"{PROMPT}", "unknown placeholder {PROMPT}"},
	};
	struct strlist t = {0}, out = {0};
	struct sc_err err = {0};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[] = {
		    "agent", "ok {prompt}", cases[i].in, NULL};

		tmpl_make(&t, args);
		err_clear(&err);
		assert_int_equal(argv_expand(&out, &t, &vars, &err), SC_EDATA);
		assert_non_null(strstr(err.msg, cases[i].msg_part));
		/* The message names the argument's position. */
		assert_non_null(strstr(err.msg, "argument 2"));
		assert_int_equal(out.n, 0);
		assert_null(out.items);
		err_clear(&err);
		assert_int_equal(argv_validate(&t, &err), SC_EDATA);
		assert_non_null(strstr(err.msg, cases[i].msg_part));
		strlist_release(&t);
	}
}

static void
test_expand_empty_template(void **state)
{
	struct strlist t = {0}, out = {0};
	struct sc_err err = {0};

	assert_int_equal(argv_expand(&out, &t, &vars, &err), SC_EDATA);
	assert_string_equal(err.msg, "agent command is empty");
	assert_int_equal(argv_validate(&t, &err), SC_EDATA);
	assert_int_equal(argv_validate(NULL, &err), SC_EDATA);
}

/* Values are never rescanned: what a story says reaches the agent as
 * those characters, in one argument. */
static void
test_expand_no_injection(void **state)
{
	static const char *const evil[] = {
	    "$(touch /tmp/pwned)",
	    "`touch /tmp/pwned`; rm -rf / && {prompt} {{x}} } {",
	    "a\nb\tc 'd\" \\e",
	};
	const char *args[] = {
	    "claude", "-p", "{prompt}", "--task", "{stalled_task}", NULL};
	struct strlist t = {0}, out = {0};
	struct argv_vars v = vars;
	size_t i;

	tmpl_make(&t, args);
	for (i = 0; i < sizeof(evil) / sizeof(evil[0]); i++) {
		v.prompt = evil[i];
		v.stalled_task = evil[i];
		assert_int_equal(argv_expand(&out, &t, &v, NULL), 0);
		assert_int_equal(out.n, 5);
		assert_string_equal(out.items[2], evil[i]);
		assert_string_equal(out.items[4], evil[i]);
		strlist_release(&out);
	}
	strlist_release(&t);
}

static void
test_expand_null_values(void **state)
{
	const char *args[] = {"a", "<{stalled_task}>", "{attempt}", NULL};
	struct strlist t = {0}, out = {0};
	struct argv_vars v = {0};

	tmpl_make(&t, args);
	assert_int_equal(argv_expand(&out, &t, &v, NULL), 0);
	assert_string_equal(out.items[1], "<>");
	assert_string_equal(out.items[2], "0");
	strlist_release(&out);
	assert_int_equal(argv_expand(&out, &t, NULL, NULL), 0);
	assert_string_equal(out.items[1], "<>");
	strlist_release(&out);
	strlist_release(&t);
}

static void
test_resolve_path_search(void **state)
{
	struct sc_err err = {0};
	char *path = NULL;

	assert_int_equal(argv_resolve_program(&path, "sh", &err), 0);
	assert_non_null(path);
	assert_true(path[0] == '/');
	assert_non_null(strstr(path, "/sh"));
	assert_int_equal(access(path, X_OK), 0);
	free(path);
}

static void
test_resolve_absolute(void **state)
{
	struct sc_err err = {0};
	char *path = NULL;

	assert_int_equal(argv_resolve_program(&path, "/bin/sh", &err), 0);
	assert_string_equal(path, "/bin/sh");
	free(path);
	path = NULL;
	assert_int_equal(
	    argv_resolve_program(&path, "/no/such/agent", &err), SC_EUNAVAIL);
	assert_string_equal(err.msg, "agent program not found: /no/such/agent");
	assert_null(path);
	/* A directory is not a program. */
	assert_int_equal(
	    argv_resolve_program(&path, "/tmp/", &err), SC_EUNAVAIL);
	assert_string_equal(err.msg, "agent program not executable: /tmp/");
}

static void
test_resolve_missing(void **state)
{
	struct sc_err err = {0};
	char *path = NULL;

	assert_int_equal(
	    argv_resolve_program(&path, "storyctl-no-such-agent-xyz", &err),
	    SC_EUNAVAIL);
	assert_string_equal(
	    err.msg, "agent program not found: storyctl-no-such-agent-xyz");
	assert_null(path);
	assert_int_equal(argv_resolve_program(&path, "", &err), SC_EUNAVAIL);
	assert_null(path);
}

/* A private PATH: the first executable match wins, a non-executable file
 * is skipped, and "not executable" is told apart from "not found". */
static void
test_resolve_custom_path(void **state)
{
	char dir[] = "/tmp/storyctl-argv-XXXXXX";
	char a[64], b[64], pa[128], pb[128], newpath[160];
	char *old = NULL, *path = NULL;
	struct sc_err err = {0};
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	snprintf(pa, sizeof(pa), "%s/fake-agent", a);
	snprintf(pb, sizeof(pb), "%s/fake-agent", b);
	fd = open(pa, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	fd = open(pb, O_WRONLY | O_CREAT | O_EXCL, 0755);
	assert_true(fd >= 0);
	close(fd);
	if (getenv("PATH") != NULL)
		old = strdup(getenv("PATH"));
	snprintf(newpath, sizeof(newpath), "%s:%s", a, b);
	setenv("PATH", newpath, 1);
	assert_int_equal(argv_resolve_program(&path, "fake-agent", &err), 0);
	assert_string_equal(path, pb);
	free(path);
	path = NULL;
	setenv("PATH", a, 1);
	assert_int_equal(
	    argv_resolve_program(&path, "fake-agent", &err), SC_EUNAVAIL);
	assert_string_equal(err.msg,
	    "agent program not executable: "
	    "fake-agent");
	if (old != NULL)
		setenv("PATH", old, 1);
	else
		unsetenv("PATH");
	free(old);
	unlink(pa);
	unlink(pb);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
}

/* {prompt_file} expands to the file's path; argv_uses() finds it. */
static void
test_prompt_file(void **state)
{
	static const char *const t1[] = {
	    "agent", "--prompt-file={prompt_file}", NULL};
	static const char *const t2[] = {"agent", "{prompt}", NULL};
	struct strlist t = {0}, out = {0};
	struct sc_err err;

	(void)state;
	tmpl_make(&t, t1);
	assert_true(argv_uses(&t, "prompt_file"));
	assert_false(argv_uses(&t, "prompt"));
	assert_int_equal(argv_expand(&out, &t, &vars, &err), 0);
	assert_string_equal(out.items[1],
	    "--prompt-file=/home/u/repo/.storyctl/logs/1-2.a3.1.prompt");
	strlist_release(&out);
	strlist_release(&t);
	tmpl_make(&t, t2);
	assert_true(argv_uses(&t, "prompt"));
	assert_false(argv_uses(&t, "prompt_file"));
	strlist_release(&t);
}

/* Issue 11: one argument past the kernel's 32-page limit (or all of
 * them past ARG_MAX) is caught before execve would fail with E2BIG. */
static void
test_argv_fits(void **state)
{
	size_t one = (size_t)sysconf(_SC_PAGESIZE) * 32;
	struct strlist a = {0};
	struct sc_err err;
	char *big = malloc(one + 1);
	char *env[] = {"A=b", NULL};

	(void)state;
	assert_non_null(big);
	memset(big, 'x', one);
	big[one - 1] = '\0'; /* one - 1 bytes + NUL: exactly the limit */
	assert_int_equal(strlist_push(&a, "agent"), 0);
	assert_int_equal(strlist_push(&a, big), 0);
	assert_int_equal(argv_fits(&a, env, &err), 0);
	strlist_release(&a);
	big[one - 1] = 'x';
	big[one] = '\0'; /* one byte more */
	assert_int_equal(strlist_push(&a, "agent"), 0);
	assert_int_equal(strlist_push(&a, big), 0);
	assert_int_equal(argv_fits(&a, NULL, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "argument 1 of the agent command is"));
	assert_non_null(strstr(err.msg, "{prompt_file}"));
	strlist_release(&a);

	/* an environment string over the limit is named by its variable
	 * only: the value may be a secret */
	memcpy(big, "TOKEN=", 6);
	{
		const char *v[] = {"agent", "x", NULL};
		const char *e[] = {"A=b", big, NULL};

		assert_int_equal(argv_fits_vec(v, e, &err), SC_EDATA);
		assert_non_null(strstr(err.msg,
		    "the environment variable TOKEN is 131072 bytes with its "
		    "name, over the 131072-byte limit"));
		assert_null(strstr(err.msg, "xxxx"));
		big[one - 1] = '\0';
		assert_int_equal(argv_fits_vec(v, e, &err), 0);
	}
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_expand_table),
	    cmocka_unit_test(test_prompt_file),
	    cmocka_unit_test(test_argv_fits),
	    cmocka_unit_test(test_expand_errors),
	    cmocka_unit_test(test_expand_empty_template),
	    cmocka_unit_test(test_expand_no_injection),
	    cmocka_unit_test(test_expand_null_values),
	    cmocka_unit_test(test_resolve_path_search),
	    cmocka_unit_test(test_resolve_absolute),
	    cmocka_unit_test(test_resolve_missing),
	    cmocka_unit_test(test_resolve_custom_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
