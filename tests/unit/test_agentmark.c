/* test_agentmark.c - the mark every agent carries and the start-up
 * sweep that ends what carries a dead controller's mark
 * (controller/engine/agentmark.c, docs/runner.md#the-mark), with real
 * processes: marked ones (a leader and its grandchild that cleared its
 * environment), one with another state dir's mark, one whose mark sits
 * across the boundary of two reads, and the agent environment that
 * carries it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller/engine/agentenv.h"
#include "controller/engine/agentmark.h"
#include "controller/clock.h"

/* Two fresh directories stand for two state dirs: their own inodes, so
 * that two runs of this suite at once never sweep each other's. */
static char dir_mine[] = "/tmp/test_agentmark.XXXXXX";
static char dir_other[] = "/tmp/test_agentmark.XXXXXX";

static int
dirs_make(void **state)
{
	(void)state;
	return mkdtemp(dir_mine) == NULL || mkdtemp(dir_other) == NULL;
}

static int
dirs_remove(void **state)
{
	(void)state;
	rmdir(dir_mine);
	rmdir(dir_other);
	return 0;
}

/* A process alive and not a zombie. */
static int
alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int live = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL && p[1] == ' ')
		live = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return live;
}

/* Wait until pid is not alive (reaping it when it is our child). */
static int
wait_gone(pid_t pid, int64_t ms)
{
	int64_t until = clock_mono_ms() + ms;

	while (clock_mono_ms() < until) {
		waitpid(pid, NULL, WNOHANG);
		if (!alive(pid))
			return 1;
		clock_nap_ms(10);
	}
	return 0;
}

/* Read a pid a child wrote into fd. */
static pid_t
read_pid(int fd)
{
	char buf[32];
	ssize_t n;

	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

/* Whether pid's environment reads non-empty: during an exec the new
 * program's link is there a moment before its environment is. */
static int
env_ready(pid_t pid)
{
	char path[64], c;
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY)) >= 0) {
		n = read(fd, &c, 1);
		close(fd);
	}
	return n == 1;
}

/* Wait until pid runs sleep: before its exec it has our environment. */
static void
exec_wait(pid_t pid)
{
	char path[64], want[4096], got[4096];
	ssize_t n;
	int i;

	assert_non_null(realpath("/bin/sleep", want));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (i = 0; i < 400; i++) {
		n = readlink(path, got, sizeof(got) - 1);
		if (n > 0) {
			got[n] = '\0';
			if (strcmp(got, want) == 0 && env_ready(pid))
				return;
		}
		clock_nap_ms(5);
	}
	fail_msg("process %d did not exec sleep", (int)pid);
}

/*
 * A process with env entries (NULL-terminated) that sleeps, as the
 * leader of its own group; with grandchild, it first starts a child in
 * its group with an empty environment and writes that child's pid into
 * *gc.
 */
static pid_t
start_marked(char *const *env, int grandchild, pid_t *gc)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *none[] = {NULL};
		char *sleep_argv[] = {"sleep", "30", NULL};

		setpgid(0, 0);
		close(fds[0]);
		if (grandchild) {
			pid_t g = fork();

			if (g == 0) {
				execve("/bin/sleep", sleep_argv, none);
				_exit(127);
			}
			dprintf(fds[1], "%d", (int)g);
		}
		close(fds[1]);
		execve("/bin/sleep", sleep_argv, env);
		_exit(127);
	}
	close(fds[1]);
	if (grandchild)
		*gc = read_pid(fds[0]);
	close(fds[0]);
	exec_wait(pid);
	return pid;
}

static void
test_sweep_ends_marked_only(void **state)
{
	char pfx[AGENTMARK_MAX], other[AGENTMARK_MAX], mark[AGENTMARK_MAX];
	char omark[AGENTMARK_MAX];
	struct sc_err err = {0};
	pid_t a, gc = -1, b;
	int ended = 0, left = 0;

	(void)state;
	assert_int_equal(agentmark_prefix(pfx, sizeof(pfx), dir_mine, &err), 0);
	assert_int_equal(
	    agentmark_prefix(other, sizeof(other), dir_other, &err), 0);
	assert_string_not_equal(pfx, other);
	agentmark_format(mark, sizeof(mark), pfx, 17);
	agentmark_format(omark, sizeof(omark), other, 17);
	assert_int_equal(strncmp(mark, "STORYCTL_ATTEMPT=", 17), 0);

	char *env_a[] = {"A=1", mark, NULL};
	a = start_marked(env_a, 1, &gc);
	assert_true(gc > 0);
	char *env_b[] = {"B=1", omark, NULL};
	b = start_marked(env_b, 0, NULL);
	assert_true(alive(a) && alive(gc) && alive(b));

	agentmark_end_all(&ended, &left, pfx, 1000);
	assert_int_equal(left, 0);
	assert_int_equal(ended, 1); /* the grandchild has no mark */
	assert_true(wait_gone(a, 2000));
	/* the grandchild cleared its environment but was in the group */
	assert_true(wait_gone(gc, 2000));
	/* another state dir's agent is not ours */
	assert_true(alive(b));
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	/* nothing marked: nothing done */
	agentmark_end_all(&ended, &left, pfx, 1000);
	assert_int_equal(ended, 0);
	assert_int_equal(left, 0);
}

/* The mark is found wherever it lies in a long environment: before,
 * across and after the end of the first read (16 KiB and a little). */
static void
test_sweep_long_environment(void **state)
{
	static const size_t pads[] = {
	    100, 16000, 16440, 16460, 16471, 16478, 16481, 16490, 40000};
	char pfx[AGENTMARK_MAX], mark[AGENTMARK_MAX];
	struct sc_err err = {0};
	char *big;
	size_t i;
	pid_t c;
	int ended = 0, left = 0;

	(void)state;
	assert_int_equal(agentmark_prefix(pfx, sizeof(pfx), dir_mine, &err), 0);
	agentmark_format(mark, sizeof(mark), pfx, 4);
	big = malloc(40000);
	assert_non_null(big);
	for (i = 0; i < sizeof(pads) / sizeof(pads[0]); i++) {
		/* an entry of pads[i] bytes with its NUL, then the mark */
		memcpy(big, "PAD=", 4);
		memset(big + 4, 'x', pads[i] - 5);
		big[pads[i] - 1] = '\0';
		char *env[] = {big, mark, NULL};
		c = start_marked(env, 0, NULL);
		agentmark_end_all(&ended, &left, pfx, 1000);
		if (ended != 1 || !wait_gone(c, 2000))
			fail_msg("pad %zu: found %d", pads[i], ended);
	}
	free(big);
}

/* A marked process that ignores SIGTERM gets SIGKILL after the grace. */
static void
test_sweep_kills_after_grace(void **state)
{
	char pfx[AGENTMARK_MAX], mark[AGENTMARK_MAX];
	struct sc_err err = {0};
	int64_t t0;
	pid_t a;
	int ended = 0, left = 0;

	(void)state;
	assert_int_equal(agentmark_prefix(pfx, sizeof(pfx), dir_mine, &err), 0);
	agentmark_format(mark, sizeof(mark), pfx, 99);
	a = fork();
	assert_true(a >= 0);
	if (a == 0) {
		char *argv[] = {
		    "sh", "-c", "trap '' TERM; sleep 30 & wait", NULL};
		char *env[] = {mark, NULL};

		setpgid(0, 0);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	clock_nap_ms(200);
	t0 = clock_mono_ms();
	agentmark_end_all(&ended, &left, pfx, 300);
	assert_true(ended >= 1);
	assert_int_equal(left, 0);
	assert_true(clock_mono_ms() - t0 >= 300);
	assert_true(wait_gone(a, 2000));
}

/* The agent's environment: an inherited mark is dropped, even from the
 * agent's env entries, and the attempt's own comes last. */
static void
test_env_carries_own_mark(void **state)
{
	struct strlist add = {0};
	struct sc_err err = {0};
	char **envp = NULL;
	const char *v;
	char *items[] = {"STORYCTL_ATTEMPT=1.2.3", "K=V"};
	size_t i, n = 0;

	(void)state;
	assert_int_equal(setenv("STORYCTL_ATTEMPT", "9.9.9", 1), 0);
	add.items = items;
	add.n = 2;
	assert_int_equal(
	    agentenv_build(&envp, &add, "STORYCTL_ATTEMPT=5.6.7", &err), 0);
	for (i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], "STORYCTL_ATTEMPT=", 17) == 0)
			n++;
	assert_int_equal(n, 1);
	v = agentenv_value(envp, "STORYCTL_ATTEMPT");
	assert_non_null(v);
	assert_string_equal(v, "5.6.7");
	assert_string_equal(agentenv_value(envp, "K"), "V");
	free(envp);
	envp = NULL;
	assert_int_equal(agentenv_build(&envp, NULL, NULL, &err), 0);
	assert_null(agentenv_value(envp, "STORYCTL_ATTEMPT"));
	free(envp);
	unsetenv("STORYCTL_ATTEMPT");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sweep_ends_marked_only),
	    cmocka_unit_test(test_sweep_long_environment),
	    cmocka_unit_test(test_sweep_kills_after_grace),
	    cmocka_unit_test(test_env_carries_own_mark),
	};

	return cmocka_run_group_tests(tests, dirs_make, dirs_remove);
}
