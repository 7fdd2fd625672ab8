/*
 * test_runner.c - the agent runner against real processes: small sh
 * scripts in tests/fixtures/runner/ (found from the repo root, which is
 * $STORYCTL_SRC or the current directory).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/engine/agentenv.h"
#include "controller/engine/pgroup.h"
#include "controller/engine/runner.h"
#include "controller/engine/spawn.h"
#include "controller/engine/watchdog.h"

static char root[PATH_MAX];
static char tmpdir[PATH_MAX];

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
fixture(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/tests/fixtures/runner/%s", root, name);
}

static void
tmpfile_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* Read a whole small file into a static buffer. */
static const char *
slurp(const char *path, size_t *len)
{
	static char buf[4096];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

static int
read_pid(const char *path)
{
	return atoi(slurp(path, NULL));
}

/* Whether pid is gone (reaped), waiting up to ms for it. */
static bool
pid_gone(int pid, long ms)
{
	int64_t end = mono_ms() + ms;

	for (;;) {
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return true;
		if (mono_ms() >= end)
			return false;
		sleep_ms(10);
	}
}

/* Run fixture name with up to two arguments and the given options. */
static int
run_script(struct runner_result *r, struct runner_opts *o, const char *name,
    const char *a1, const char *a2)
{
	static char path[PATH_MAX];
	const char *argv[5];
	struct sc_err err = {0};
	int rc;

	fixture(path, sizeof(path), name);
	argv[0] = "/bin/sh";
	argv[1] = path;
	argv[2] = a1;
	argv[3] = a1 ? a2 : NULL;
	argv[4] = NULL;
	o->argv = argv;
	if (o->cwd == NULL)
		o->cwd = root;
	if (o->kill_grace_ms == 0)
		o->kill_grace_ms = 200;
	rc = runner_run(r, o, &err);
	if (rc < 0 && err.msg[0] != '\0')
		print_message("runner_run: %s\n", err.msg);
	return rc;
}

static int
setup(void **state)
{
	const char *src = getenv("STORYCTL_SRC");

	if (src == NULL || *src == '\0')
		src = ".";
	if (realpath(src, root) == NULL)
		return -1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/storyctl-runner-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int
teardown(void **state)
{
	const char *argv[] = {"rm", "-rf", tmpdir, NULL};
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return 0;
}

static void
test_exit_code(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	char log[PATH_MAX];
	struct stat st;
	const char *text;

	tmpfile_path(log, sizeof(log), "exit.log");
	o.log_path = log;
	assert_int_equal(run_script(&r, &o, "exit.sh", "7", NULL), 0);
	assert_int_equal(r.exit_code, 7);
	assert_int_equal(r.term_signal, 0);
	assert_false(
	    r.timed_out || r.stalled || r.interrupted || r.spawn_failed);
	assert_true(r.pid > 0);
	/* stdout and stderr both reach the tail and the log. */
	assert_non_null(strstr(r.tail, "out: exiting 7\n"));
	assert_non_null(strstr(r.tail, "err: exiting 7\n"));
	assert_int_equal(r.output_bytes, r.tail_len);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = slurp(log, NULL);
	assert_non_null(strstr(text, "out: exiting 7"));
	assert_non_null(strstr(text, "err: exiting 7"));
	runner_result_release(&r);

	/* Exit 0 too, and the log is appended to. */
	assert_int_equal(run_script(&r, &o, "exit.sh", "0", NULL), 0);
	assert_int_equal(r.exit_code, 0);
	text = slurp(log, NULL);
	assert_non_null(strstr(text, "out: exiting 7"));
	assert_non_null(strstr(text, "out: exiting 0"));
	runner_result_release(&r);
	runner_result_release(&r); /* a released result is empty */
	runner_result_release(NULL);
}

static void
test_signal(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;

	assert_int_equal(run_script(&r, &o, "signal.sh", "USR1", NULL), 0);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.term_signal, SIGUSR1);
	assert_false(r.timed_out);
	assert_non_null(strstr(r.tail, "about to die of USR1"));
	runner_result_release(&r);
}

/* An existing log file with a loose mode is made private. */
static void
test_log_mode_existing(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	char log[PATH_MAX];
	struct stat st;
	int fd;

	tmpfile_path(log, sizeof(log), "loose.log");
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(write(fd, "before\n", 7), 7);
	close(fd);
	o.log_path = log;
	assert_int_equal(run_script(&r, &o, "exit.sh", "0", NULL), 0);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_non_null(strstr(slurp(log, NULL), "before\nout: exiting 0"));
	runner_result_release(&r);
}

static void
test_log_unopenable(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	struct sc_err err = {0};
	const char *argv[] = {"/bin/true", NULL};

	o.argv = argv;
	o.log_path = "/nonexistent-dir/attempt.log";
	assert_int_equal(runner_run(&r, &o, &err), SC_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/attempt.log"));
	assert_null(r.tail);
}

/* 2 MB of output with a 4 KiB tail: the tail is exactly the last 4096
 * bytes, the log has everything, and the byte count is exact. */
static void
test_tail_bounded(void **state)
{
	struct runner_opts o = {.wake_fd = -1, .tail_max = 4096};
	struct runner_result r;
	char log[PATH_MAX];
	struct stat st;
	const uint64_t want = 2000000 + 1 + 10; /* x's, "\n", "LAST-LINE\n" */
	size_t i;

	tmpfile_path(log, sizeof(log), "spew.log");
	o.log_path = log;
	assert_int_equal(run_script(&r, &o, "spew.sh", "2000000", NULL), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.output_bytes, want);
	assert_int_equal(r.tail_len, 4096);
	assert_int_equal(strlen(r.tail), 4096);
	assert_string_equal(r.tail + 4096 - 11, "\nLAST-LINE\n");
	for (i = 0; i < 4096 - 11; i++)
		assert_int_equal(r.tail[i], 'x');
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal((uint64_t)st.st_size, want);
	assert_int_equal(r.log_errno, 0);
	runner_result_release(&r);
}

/* A full disk must not kill the agent: output keeps flowing into the
 * tail, and the error is reported. */
static void
test_log_enospc(void **state)
{
	struct runner_opts o = {.wake_fd = -1, .tail_max = 64};
	struct runner_result r;

	if (access("/dev/full", W_OK) < 0)
		skip();
	o.log_path = "/dev/full";
	assert_int_equal(run_script(&r, &o, "spew.sh", "100000", NULL), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.log_errno, ENOSPC);
	assert_int_equal(r.output_bytes, 100011);
	assert_non_null(strstr(r.tail, "LAST-LINE"));
	runner_result_release(&r);
}

static void
test_stdin_devnull(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;

	assert_int_equal(run_script(&r, &o, "stdin.sh", NULL, NULL), 0);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.tail, "stdin-eof\n");
	runner_result_release(&r);
}

static void
test_env(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct strlist add = {0};
	struct runner_result r;

	setenv("CLAUDECODE", "1", 1);
	setenv("CODEX_SANDBOX", "seatbelt", 1);
	setenv("STORYCTL_T_OVR", "old", 1);
	setenv("STORYCTL_T_KEEP", "kept", 1);
	assert_int_equal(strlist_push(&add, "STORYCTL_T_ADD=a b=c"), 0);
	assert_int_equal(strlist_push(&add, "STORYCTL_T_OVR=mid"), 0);
	assert_int_equal(strlist_push(&add, "STORYCTL_T_OVR=new"), 0);
	o.env_add = &add;
	assert_int_equal(run_script(&r, &o, "env.sh", NULL, NULL), 0);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.tail,
	    "CLAUDECODE=unset\n"
	    "CODEX_SANDBOX=unset\n"
	    "STORYCTL_T_ADD=a b=c\n"
	    "STORYCTL_T_OVR=new\n"
	    "STORYCTL_T_KEEP=kept\n");
	runner_result_release(&r);
	/* The controller's own environment is untouched. */
	assert_string_equal(getenv("CLAUDECODE"), "1");
	assert_string_equal(getenv("STORYCTL_T_OVR"), "old");

	/* env_add may set a scrubbed variable on purpose. */
	strlist_release(&add);
	assert_int_equal(strlist_push(&add, "CLAUDECODE=forced"), 0);
	assert_int_equal(run_script(&r, &o, "env.sh", NULL, NULL), 0);
	assert_non_null(strstr(r.tail, "CLAUDECODE=forced\n"));
	runner_result_release(&r);
	strlist_release(&add);
	unsetenv("CLAUDECODE");
	unsetenv("CODEX_SANDBOX");
	unsetenv("STORYCTL_T_OVR");
	unsetenv("STORYCTL_T_KEEP");
}

static void
test_env_bad_entry(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct strlist add = {0};
	struct runner_result r;
	struct sc_err err = {0};
	const char *argv[] = {"/bin/true", NULL};

	assert_int_equal(strlist_push(&add, "NOEQUALS"), 0);
	o.argv = argv;
	o.env_add = &add;
	assert_int_equal(runner_run(&r, &o, &err), SC_EDATA);
	assert_non_null(strstr(err.msg, "NOEQUALS"));
	strlist_release(&add);
}

static void
test_cwd(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	char want[PATH_MAX + 2];
	char real[PATH_MAX];

	assert_non_null(realpath(tmpdir, real));
	o.cwd = tmpdir;
	assert_int_equal(run_script(&r, &o, "pwd.sh", NULL, NULL), 0);
	snprintf(want, sizeof(want), "%s\n", real);
	assert_string_equal(r.tail, want);
	runner_result_release(&r);
}

static void
test_cwd_missing(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	struct sc_err err = {0};
	const char *argv[] = {"/bin/true", NULL};
	char file[PATH_MAX];

	o.argv = argv;
	o.cwd = "/nonexistent-repo-root";
	assert_int_equal(runner_run(&r, &o, &err), SC_EOS);
	assert_non_null(strstr(err.msg, "chdir /nonexistent-repo-root"));
	assert_null(r.tail);
	/* a file is not a directory: the controller's error too, not a
	 * failed exec of the agent */
	fixture(file, sizeof(file), "pwd.sh");
	o.cwd = file;
	assert_int_equal(runner_run(&r, &o, &err), SC_EOS);
	assert_non_null(strstr(err.msg, "chdir "));
	assert_non_null(strstr(err.msg, "Not a directory"));
	assert_null(r.tail);
}

static void
test_timeout(void **state)
{
	struct runner_opts o = {.wake_fd = -1, .timeout_ms = 300};
	struct runner_result r;
	int64_t t0 = mono_ms(), took;

	assert_int_equal(run_script(&r, &o, "sleep.sh", "30", NULL), 0);
	took = mono_ms() - t0;
	assert_true(r.timed_out);
	assert_false(r.stalled || r.interrupted);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.term_signal, SIGTERM);
	assert_true(r.duration_ms >= 300);
	assert_true(took < 2000);
	assert_non_null(strstr(r.tail, "sleeping 30"));
	assert_null(strstr(r.tail, "woke"));
	runner_result_release(&r);
}

/* An agent that ignores SIGTERM gets SIGKILL after the grace. */
static void
test_timeout_kill_after_grace(void **state)
{
	struct runner_opts o = {
	    .wake_fd = -1, .timeout_ms = 100, .kill_grace_ms = 150};
	struct runner_result r;
	int64_t t0 = mono_ms(), took;

	assert_int_equal(run_script(&r, &o, "ignore.sh", NULL, NULL), 0);
	took = mono_ms() - t0;
	assert_true(r.timed_out);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_true(r.duration_ms >= 250);
	assert_true(took < 2000);
	runner_result_release(&r);
}

/* The leader exits at once but leaves a grandchild that ignores SIGTERM
 * and holds the output pipe: it must not outlive the attempt. */
static void
test_grandchild_killed(void **state)
{
	struct runner_opts o = {.wake_fd = -1, .kill_grace_ms = 150};
	struct runner_result r;
	char pidfile[PATH_MAX];
	int64_t t0 = mono_ms(), took;
	int gc;

	tmpfile_path(pidfile, sizeof(pidfile), "grandchild.pid");
	assert_int_equal(run_script(&r, &o, "grandchild.sh", pidfile, NULL), 0);
	took = mono_ms() - t0;
	assert_int_equal(r.exit_code, 0);
	assert_false(r.timed_out || r.interrupted);
	gc = read_pid(pidfile);
	assert_true(gc > 1);
	assert_true(pid_gone(gc, 300));
	/* Not waiting for the pipe's EOF, only the grace. */
	assert_true(took < 2000);
	assert_non_null(strstr(r.tail, "left "));
	runner_result_release(&r);
}

static void
test_stall(void **state)
{
	struct runner_opts o = {
	    .wake_fd = -1, .stall_timeout_ms = 300, .timeout_ms = 5000};
	struct runner_result r;
	int64_t t0 = mono_ms(), took;

	assert_int_equal(run_script(&r, &o, "silent.sh", "30", NULL), 0);
	took = mono_ms() - t0;
	assert_true(r.stalled);
	assert_false(r.timed_out);
	assert_int_equal(r.term_signal, SIGTERM);
	assert_true(r.duration_ms >= 300);
	assert_true(took < 2000);
	runner_result_release(&r);
}

struct poll_ctx {
	int calls;
	int pgid;
	int start_pid;
	int token_step;
	int64_t last_elapsed;
	bool elapsed_monotonic;
	volatile sig_atomic_t *stop;
	int stop_at_call;
	int stop_value;
	int start_rc;
};

static int
on_poll(void *vctx, int64_t elapsed_ms, int pgid)
{
	struct poll_ctx *c = vctx;

	c->calls++;
	c->pgid = pgid;
	if (elapsed_ms < c->last_elapsed)
		c->elapsed_monotonic = false;
	c->last_elapsed = elapsed_ms;
	if (c->stop != NULL && c->calls == c->stop_at_call)
		*c->stop = c->stop_value;
	return c->calls * c->token_step;
}

static int
on_start(void *vctx, int pid)
{
	struct poll_ctx *c = vctx;

	c->start_pid = pid;
	return c->start_rc;
}

/* Progress (a changing token) counts as activity: no stall. */
static void
test_stall_progress(void **state)
{
	struct poll_ctx c = {.token_step = 1, .elapsed_monotonic = true};
	struct runner_opts o = {.wake_fd = -1,
	    .stall_timeout_ms = 250,
	    .poll_interval_ms = 40,
	    .on_poll = on_poll,
	    .ctx = &c};
	struct runner_result r;

	assert_int_equal(run_script(&r, &o, "silent.sh", "0.6", NULL), 0);
	assert_false(r.stalled);
	assert_int_equal(r.exit_code, 0);
	assert_true(c.calls >= 5);
	runner_result_release(&r);

	/* The same token every time is no progress. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(run_script(&r, &o, "silent.sh", "30", NULL), 0);
	assert_true(r.stalled);
	runner_result_release(&r);
}

static void
test_on_poll_and_start(void **state)
{
	struct poll_ctx c = {.elapsed_monotonic = true};
	struct runner_opts o = {.wake_fd = -1,
	    .poll_interval_ms = 20,
	    .on_poll = on_poll,
	    .on_start = on_start,
	    .ctx = &c};
	struct runner_result r;

	assert_int_equal(run_script(&r, &o, "silent.sh", "0.2", NULL), 0);
	assert_int_equal(r.exit_code, 0);
	assert_true(c.calls >= 3);
	assert_true(c.elapsed_monotonic);
	assert_true(c.last_elapsed >= 20);
	assert_int_equal(c.start_pid, r.pid);
	assert_int_equal(c.pgid, r.pid);
	runner_result_release(&r);
}

/* on_start failing (the pid could not be recorded) aborts the attempt. */
static void
test_on_start_abort(void **state)
{
	struct poll_ctx c = {.start_rc = SC_EIO};
	struct runner_opts o = {.wake_fd = -1, .on_start = on_start, .ctx = &c};
	struct runner_result r;
	int64_t t0 = mono_ms();

	assert_int_equal(run_script(&r, &o, "sleep.sh", "30", NULL), SC_EIO);
	assert_true(mono_ms() - t0 < 2000);
	assert_true(c.start_pid > 1);
	assert_true(pid_gone(c.start_pid, 300));
	assert_null(r.tail);
}

static void
test_stop_graceful(void **state)
{
	volatile sig_atomic_t stop = 0;
	struct poll_ctx c = {.stop = &stop, .stop_at_call = 2, .stop_value = 1};
	struct runner_opts o = {.wake_fd = -1,
	    .poll_interval_ms = 30,
	    .on_poll = on_poll,
	    .ctx = &c,
	    .stop = &stop,
	    .kill_grace_ms = 2000};
	struct runner_result r;
	int64_t t0 = mono_ms();

	assert_int_equal(run_script(&r, &o, "term.sh", NULL, NULL), 0);
	assert_true(r.interrupted);
	assert_false(r.timed_out || r.stalled);
	/* The agent got SIGTERM and exited by itself. */
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.tail, "got-term"));
	assert_true(mono_ms() - t0 < 1500);
	runner_result_release(&r);
}

/* stop == 2: SIGKILL at once, not after the (long) grace. */
static void
test_stop_immediate(void **state)
{
	volatile sig_atomic_t stop = 0;
	struct poll_ctx c = {.stop = &stop, .stop_at_call = 2, .stop_value = 2};
	struct runner_opts o = {.wake_fd = -1,
	    .poll_interval_ms = 30,
	    .on_poll = on_poll,
	    .ctx = &c,
	    .stop = &stop,
	    .kill_grace_ms = 5000};
	struct runner_result r;
	int64_t t0 = mono_ms();

	assert_int_equal(run_script(&r, &o, "ignore.sh", NULL, NULL), 0);
	assert_true(r.interrupted);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_true(mono_ms() - t0 < 1500);
	runner_result_release(&r);
}

/* The controller's pattern: a signal handler sets the flag and writes to
 * a self-pipe; the runner wakes without any poll callback. */
static volatile sig_atomic_t alarm_stop;
static int alarm_pipe_w = -1;

static void
on_alarm(int sig)
{
	int saved = errno;
	ssize_t w;

	alarm_stop = 1;
	w = write(alarm_pipe_w, "x", 1);
	(void)w;
	errno = saved;
}

static void
test_stop_wake_fd(void **state)
{
	struct runner_opts o = {.stop = &alarm_stop, .kill_grace_ms = 2000};
	struct itimerval it = {{0, 0}, {0, 150000}};
	struct sigaction sa, old;
	struct runner_result r;
	int p[2];
	int64_t t0;

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	alarm_pipe_w = p[1];
	alarm_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	o.wake_fd = p[0];
	t0 = mono_ms();
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	assert_int_equal(run_script(&r, &o, "term.sh", NULL, NULL), 0);
	assert_true(r.interrupted);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.duration_ms >= 100);
	assert_true(mono_ms() - t0 < 1500);
	runner_result_release(&r);
	sigaction(SIGALRM, &old, NULL);
	close(p[0]);
	close(p[1]);
	alarm_pipe_w = -1;
}

static void
test_spawn_missing(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	struct sc_err err = {0};
	const char *argv[] = {"storyctl-no-such-agent-xyz", "-p", "x", NULL};
	char log[PATH_MAX];

	tmpfile_path(log, sizeof(log), "missing.log");
	o.argv = argv;
	o.log_path = log;
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, ENOENT);
	assert_int_equal(r.exit_code, 127);
	assert_int_equal(r.term_signal, 0);
	assert_non_null(strstr(r.tail, "storyctl-no-such-agent-xyz"));
	assert_non_null(strstr(slurp(log, NULL), "cannot execute"));
	runner_result_release(&r);

	argv[0] = "/nonexistent/agent";
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.exit_code, 127);
	runner_result_release(&r);
}

/*
 * Issue 11: an argv or environment over execve's limits is refused
 * before any process starts, with which argument (or variable) and what
 * to do; before, the kernel's E2BIG gave a bare "Argument list too long"
 * and exit 126 on every attempt.
 */
static void
test_spawn_too_big(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	struct sc_err err = {0};
	struct strlist env = {0};
	const char *argv[] = {"/bin/sh", "-c", "touch \"$0\"", NULL, NULL};
	const char **many = NULL;
	char mark[PATH_MAX], log[PATH_MAX];
	char *big = malloc(200000 + 5);
	size_t i, n;
	long max = sysconf(_SC_ARG_MAX);

	(void)state;
	assert_non_null(big);
	tmpfile_path(mark, sizeof(mark), "big.ran");
	tmpfile_path(log, sizeof(log), "big.log");
	memset(big, 'x', 200000);
	big[200000] = '\0';
	/* one argument of 200000 bytes (argv[3]) */
	argv[3] = big;
	o.argv = argv;
	o.log_path = log;
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, E2BIG);
	assert_int_equal(r.exit_code, 126);
	assert_int_equal(r.pid, 0); /* nothing was started */
	assert_non_null(strstr(r.spawn_detail,
	    "argument 3 of the agent command is 200000 bytes, over the "
	    "131072-byte limit of one argument"));
	assert_non_null(strstr(r.spawn_detail, "{prompt_file}"));
	assert_non_null(strstr(r.tail,
	    "storyctl: cannot execute /bin/sh: "
	    "argument 3 of the agent command"));
	assert_non_null(strstr(slurp(log, NULL), "argument 3 of the agent"));
	runner_result_release(&r);

	/* the argv fits, a variable of the agent's env does not; its value
	 * is never printed */
	argv[3] = mark;
	memcpy(big, "BIG=", 4);
	assert_int_equal(strlist_push(&env, big), 0);
	o.env_add = &env;
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, E2BIG);
	assert_non_null(strstr(r.spawn_detail,
	    "the environment variable BIG is 200000 bytes with its name"));
	assert_null(strstr(r.tail, "xxxxxxxx"));
	runner_result_release(&r);
	strlist_release(&env);
	o.env_add = NULL;

	/* every argument fits, all of them together do not */
	big[100000] = '\0';
	n = (size_t)(max > 0 ? max : 2097152) / 100000 + 2;
	if (n > 70) /* 6 MiB is the kernel's cap whatever the limit */
		n = 70;
	many = calloc(n + 2, sizeof(*many));
	assert_non_null(many);
	many[0] = "/bin/true";
	for (i = 1; i <= n; i++)
		many[i] = big;
	o.argv = many;
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, E2BIG);
	assert_non_null(strstr(r.spawn_detail, "over the system's limit"));
	runner_result_release(&r);

	/* nothing ran, and the runner still runs agents */
	assert_int_equal(access(mark, F_OK), -1);
	o.argv = argv;
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_false(r.spawn_failed);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(access(mark, F_OK), 0);
	runner_result_release(&r);
	free(many);
	free(big);
}

static void
test_spawn_not_executable(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	struct sc_err err = {0};
	char path[PATH_MAX];
	const char *argv[] = {path, NULL};
	int fd;

	tmpfile_path(path, sizeof(path), "noexec.sh");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	o.argv = argv;
	assert_int_equal(runner_run(&r, &o, &err), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, EACCES);
	assert_int_equal(r.exit_code, 126);
	runner_result_release(&r);
}

static void
test_empty_argv(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	const char *argv[] = {NULL};

	o.argv = argv;
	assert_int_equal(runner_run(&r, &o, NULL), SC_ESOFTWARE);
	o.argv = NULL;
	assert_int_equal(runner_run(&r, &o, NULL), SC_ESOFTWARE);
}

/* No descriptor of the controller leaks into the agent: only 0, 1, 2. */
static void
test_no_fd_leak(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	struct runner_result r;
	const char *argv[] = {"/bin/ls", "/proc/self/fd", NULL};
	int leak;

	leak = open("/dev/null", O_RDONLY); /* deliberately not CLOEXEC */
	assert_true(leak > 2);
	o.argv = argv;
	assert_int_equal(runner_run(&r, &o, NULL), 0);
	close(leak);
	/* ls itself opens one descriptor for the directory it lists. */
	assert_int_equal(r.exit_code, 0);
	assert_true(strncmp(r.tail, "0\n1\n2\n3\n", 8) == 0);
	assert_int_equal(r.tail_len, 8);
	runner_result_release(&r);
}

/* Create tmpdir/dir/name holding text, with mode. */
static void
put_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, dir);
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/%s/%s", tmpdir, dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The programs the PATH tests look for, in tmpdir: good/ runs them,
 * noexec/ has them without execute permission, notdir is a file. */
static void
put_agents(void)
{
	put_file(
	    "good", "storyctl-t-agent", "#!/bin/sh\necho \"agent $*\"\n", 0755);
	/* No #! line: execvp() runs it with /bin/sh. */
	put_file("good", "storyctl-t-bare", "echo \"bare $0 $*\"\n", 0755);
	put_file(
	    "noexec", "storyctl-t-agent", "#!/bin/sh\necho noexec\n", 0644);
	put_file("noexec", "storyctl-t-bare", "echo noexec\n", 0644);
	put_file(".", "notdir", "", 0644);
}

/* Run argv with the agent's PATH set to path_fmt (%1$s is tmpdir; NULL:
 * no PATH in env_add) in tmpdir/cwd_sub (NULL: root). */
static void
run_with_path(struct runner_result *r, const char *const *argv,
    const char *path_fmt, const char *cwd_sub)
{
	struct runner_opts o = {.wake_fd = -1, .argv = argv};
	struct strlist add = {0};
	struct sc_err err = {0};
	char cwd[PATH_MAX], var[3 * PATH_MAX];

	if (path_fmt != NULL) {
		memcpy(var, "PATH=", 5);
		snprintf(var + 5, sizeof(var) - 5, path_fmt, tmpdir);
		assert_int_equal(strlist_push(&add, var), 0);
		o.env_add = &add;
	}
	o.cwd = root;
	if (cwd_sub != NULL) {
		snprintf(cwd, sizeof(cwd), "%s/%s", tmpdir, cwd_sub);
		o.cwd = cwd;
	}
	if (runner_run(r, &o, &err) < 0)
		fail_msg("runner_run: %s", err.msg);
	strlist_release(&add);
}

/* Whether posix_spawn reports a failed exec here: not under valgrind,
 * which runs its clone as a fork (controller/engine/spawn.h). */
static bool
spawn_reports_exec_errors(void)
{
	char *const argv[] = {"storyctl-probe", NULL};
	pid_t pid = 0;
	int e;

	e = posix_spawn(&pid, "/dev/null", NULL, NULL, argv, environ);
	if (e == 0)
		waitpid(pid, NULL, 0);
	return e != 0;
}

/*
 * The program is looked up in the agent's PATH the way execvp() looks,
 * not in the controller's: ENOENT, ENOTDIR and EACCES go on to the next
 * element, EACCES wins when nothing ran, an empty element is the agent's
 * working directory, a name with '/' is not searched.
 */
static void
test_spawn_path_search(void **state)
{
	static const struct {
		const char *what;
		const char *path; /* %1$s = tmpdir */
		const char *prog;
		const char *cwd; /* under tmpdir, NULL = root */
		int want_errno; /* 0: it runs */
		const char *want_tail; /* %1$s = tmpdir */
	} cases[] = {
	    {"only in the agent's PATH", "/nonexistent:%1$s/good",
		"storyctl-t-agent", NULL, 0, "agent a b\n"},
	    {"missing everywhere", "/nonexistent:%1$s/notdir",
		"storyctl-t-agent", NULL, ENOTDIR,
		"cannot execute storyctl-t-agent: Not a directory"},
	    {"missing", "%1$s/notdir:/nonexistent", "storyctl-t-agent", NULL,
		ENOENT,
		"cannot execute storyctl-t-agent: No such file or directory"},
	    {"not executable", "%1$s/noexec", "storyctl-t-agent", NULL, EACCES,
		"cannot execute storyctl-t-agent: Permission denied"},
	    {"not executable, then missing", "%1$s/noexec:/nonexistent",
		"storyctl-t-agent", NULL, EACCES, "Permission denied"},
	    {"not executable, then found", "%1$s/noexec:%1$s/good",
		"storyctl-t-agent", NULL, 0, "agent a b\n"},
	    {"empty element = the agent's cwd", "/nonexistent::/nonexistent",
		"storyctl-t-agent", "good", 0, "agent a b\n"},
	    {"empty PATH = the agent's cwd", "", "storyctl-t-agent", "good", 0,
		"agent a b\n"},
	    {"no #! line, via PATH", "%1$s/noexec:%1$s/good", "storyctl-t-bare",
		NULL, 0, "bare %1$s/good/storyctl-t-bare a b\n"},
	    {"no #! line, in the cwd", ":/nonexistent", "storyctl-t-bare",
		"good", 0, "bare storyctl-t-bare a b\n"},
	    {"no #! line, not executable", "%1$s/noexec", "storyctl-t-bare",
		NULL, EACCES, "Permission denied"},
	    {"relative name with '/': the cwd's, no search",
		"%1$s/noexec:%1$s/good", "good/storyctl-t-agent", "", 0,
		"agent a b\n"},
	    {"name with '/' is not searched", "%1$s/good",
		"nonexistent/storyctl-t-agent", "", ENOENT,
		"No such file or directory"},
	    {"absolute, no #! line", "/nonexistent",
		"%1$s/good/storyctl-t-bare", NULL, 0,
		"bare %1$s/good/storyctl-t-bare a b\n"},
	    {"empty name", "%1$s/good", "", "good", ENOENT,
		"No such file or directory"},
	};
	struct runner_result r;
	char prog[PATH_MAX], want[2 * PATH_MAX];
	const char *argv[] = {prog, "a", "b", NULL};
	size_t i;
	bool reports = spawn_reports_exec_errors();

	put_agents();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Only the exec itself finds a file that needs /bin/sh. */
		if (!reports && strstr(cases[i].prog, "bare") != NULL &&
		    cases[i].want_errno == 0) {
			print_message("case skipped (no exec errors here): "
				      "%s\n",
			    cases[i].what);
			continue;
		}
		print_message("case: %s\n", cases[i].what);
		snprintf(prog, sizeof(prog), cases[i].prog, tmpdir);
		snprintf(want, sizeof(want), cases[i].want_tail, tmpdir);
		run_with_path(&r, argv, cases[i].path, cases[i].cwd);
		assert_int_equal(r.spawn_failed, cases[i].want_errno != 0);
		assert_int_equal(r.spawn_errno, cases[i].want_errno);
		assert_int_equal(r.exit_code,
		    cases[i].want_errno == 0		? 0
			: cases[i].want_errno == ENOENT ? 127
							: 126);
		if (cases[i].want_errno == 0)
			assert_string_equal(r.tail, want);
		else
			assert_non_null(strstr(r.tail, want));
		runner_result_release(&r);
	}
}

/* Without PATH in the agent's environment, execvp()'s default applies:
 * /bin:/usr/bin, not the controller's last PATH or the current dir. */
static void
test_spawn_default_path(void **state)
{
	struct runner_result r;
	const char *argv[] = {"true", NULL};
	const char *bare[] = {"storyctl-t-agent", NULL};
	char *saved = NULL;

	put_agents();
	saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	assert_int_equal(unsetenv("PATH"), 0);
	run_with_path(&r, argv, NULL, NULL);
	assert_false(r.spawn_failed);
	assert_int_equal(r.exit_code, 0);
	runner_result_release(&r);
	run_with_path(&r, bare, NULL, "good");
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, ENOENT);
	runner_result_release(&r);
	if (saved != NULL)
		assert_int_equal(setenv("PATH", saved, 1), 0);
	free(saved);
}

/* A name longer than NAME_MAX is not searched for (ENAMETOOLONG, 126). */
static void
test_spawn_name_too_long(void **state)
{
	struct runner_result r;
	char name[NAME_MAX + 2];
	const char *argv[] = {name, NULL};

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	run_with_path(&r, argv, "/bin:/usr/bin", NULL);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, ENAMETOOLONG);
	assert_int_equal(r.exit_code, 126);
	runner_result_release(&r);
}

/* The child shares the controller's memory until it execs: the agent's
 * environment must reach it without touching ours (environ, PATH). */
static void
test_spawn_env_untouched(void **state)
{
	struct runner_result r;
	const char *argv[] = {"storyctl-t-agent", "x", NULL};
	char **env_before = environ;
	const char *path_before = getenv("PATH");
	char *path_copy = NULL;
	int i;

	assert_non_null(path_before);
	path_copy = strdup(path_before);
	assert_non_null(path_copy);
	put_agents();
	for (i = 0; i < 3; i++) {
		run_with_path(&r, argv, "%1$s/good", NULL);
		assert_int_equal(r.exit_code, 0);
		assert_string_equal(r.tail, "agent x\n");
		runner_result_release(&r);
		assert_ptr_equal(environ, env_before);
		assert_ptr_equal(getenv("PATH"), path_before);
		assert_string_equal(getenv("PATH"), path_copy);
	}
	/* And the controller's PATH cannot find the agent's program. */
	run_with_path(&r, argv, NULL, NULL);
	assert_true(r.spawn_failed);
	runner_result_release(&r);
	free(path_copy);
}

static void
on_usr1(int sig)
{
}

/* The agent leads its own process group, starts with default signal
 * dispositions and an empty mask whatever the controller has, and the
 * controller's own handlers and mask are unchanged by the spawn. */
static void
test_spawn_group_and_signals(void **state)
{
	struct runner_opts o = {.wake_fd = -1};
	const char *grp[] = {
	    "/bin/sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat)", NULL};
	const char *sig[] = {
	    "/bin/grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status", NULL};
	struct sigaction sa, old_usr1, now;
	sigset_t usr2, old_mask, mask;
	struct runner_result r;
	unsigned long long blk = 1, ign = 1;
	char want[64];

	o.argv = grp;
	assert_int_equal(runner_run(&r, &o, NULL), 0);
	assert_int_equal(r.exit_code, 0);
	assert_true(r.pid != getpgrp());
	snprintf(want, sizeof(want), "%d %d\n", r.pid, r.pid);
	assert_string_equal(r.tail, want);
	runner_result_release(&r);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old_usr1), 0);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_BLOCK, &usr2, &old_mask), 0);
	o.argv = sig; /* SIGPIPE is ignored here (setup()) */
	assert_int_equal(runner_run(&r, &o, NULL), 0);
	assert_int_equal(r.exit_code, 0);
	/* signals 1-31 only: glibc keeps 32 and 33 for itself (its
	 * sigaction() refuses them), so an "ignored" inherited from
	 * whatever started this test can show there */
	assert_int_equal(
	    sscanf(r.tail, "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ign), 2);
	assert_true((blk & 0x7fffffffULL) == 0);
	assert_true((ign & 0x7fffffffULL) == 0);
	runner_result_release(&r);
	assert_int_equal(sigaction(SIGUSR1, NULL, &now), 0);
	assert_ptr_equal(now.sa_handler, on_usr1);
	assert_int_equal(sigaction(SIGPIPE, NULL, &now), 0);
	assert_ptr_equal(now.sa_handler, SIG_IGN);
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &mask), 0);
	assert_true(sigismember(&mask, SIGUSR2));
	assert_false(sigismember(&mask, SIGUSR1));
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
}

/* Read a process's parent and process group from /proc. */
static void
proc_parent_group(int pid, int *ppid, int *pgrp)
{
	char path[64];
	const char *buf, *q;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	buf = slurp(path, NULL);
	q = strrchr(buf, ')');
	assert_non_null(q);
	assert_int_equal(sscanf(q + 2, "%*c %d %d", ppid, pgrp), 2);
}

/* Whether our child pid has ended (reaping it), waiting up to ms. */
static bool
child_gone(int pid, long ms)
{
	int64_t end = mono_ms() + ms;
	pid_t w;

	for (;;) {
		w = waitpid(pid, NULL, WNOHANG);
		if (w == pid || (kill(pid, 0) < 0 && errno == ESRCH))
			return true;
		if (mono_ms() >= end)
			return false;
		sleep_ms(10);
	}
}

/* The controller dies (SIGKILL, no cleanup): the watchdog ends the
 * agent's whole group, the agent and its grandchild, both of which ignore
 * SIGTERM, with SIGKILL after the grace.  (No parent-death signal is
 * involved: posix_spawn cannot set one, controller/spawn.h.) */
static void
test_controller_death(void **state)
{
	static char path[PATH_MAX];
	char pidfile[PATH_MAX];
	const char *argv[] = {"/bin/sh", path, pidfile, NULL};
	struct runner_opts o = {
	    .wake_fd = -1, .argv = argv, .kill_grace_ms = 100};
	struct runner_result r;
	int64_t end;
	int status = 0, gc, agent = 0, pgrp = 0, i;
	pid_t ctl, w;

	tmpfile_path(pidfile, sizeof(pidfile), "orphan.pid");
	fixture(path, sizeof(path), "orphan.sh");
	unlink(pidfile);
	/* Orphans come to us, so we can see how they ended. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ctl = fork();
	assert_true(ctl >= 0);
	if (ctl == 0) {
		/* The "controller". */
		if (runner_run(&r, &o, NULL) == 0)
			runner_result_release(&r);
		_exit(0);
	}
	/* The pid file appears once the agent runs. */
	for (i = 0; i < 300 && access(pidfile, R_OK) != 0; i++)
		sleep_ms(10);
	sleep_ms(30);
	gc = read_pid(pidfile);
	assert_true(gc > 1);
	/* The agent is the grandchild's parent and its group leader. */
	proc_parent_group(gc, &agent, &pgrp);
	assert_int_equal(pgrp, agent);
	assert_int_not_equal(agent, ctl);

	assert_int_equal(kill(ctl, SIGKILL), 0);
	assert_int_equal(waitpid(ctl, &status, 0), ctl);
	/* The agent ignores SIGTERM: the watchdog's SIGKILL ends it after
	 * the 100 ms grace and, orphaned, it comes to us. */
	end = mono_ms() + 2000;
	do {
		w = waitpid(agent, &status, WNOHANG);
		if (w == 0)
			sleep_ms(10);
	} while (w == 0 && mono_ms() < end);
	assert_int_equal(w, agent);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	/* The grandchild ignores SIGTERM: the watchdog's SIGKILL ends it
	 * after the 100 ms grace. */
	assert_true(child_gone(gc, 1500));
}

/* A group whose leader is gone, left by an earlier controller: cleared
 * whatever start time was recorded (a live group id is never reused). */
static void
test_kill_stale_group_leaderless(void **state)
{
	static char path[PATH_MAX];
	char pidfile[PATH_MAX];
	int status = 0, gc;
	pid_t leader;

	tmpfile_path(pidfile, sizeof(pidfile), "stale.pid");
	fixture(path, sizeof(path), "grandchild.sh");
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	leader = fork();
	assert_true(leader >= 0);
	if (leader == 0) {
		int dn = open("/dev/null", O_WRONLY);

		setpgid(0, 0);
		if (dn >= 0)
			dup2(dn, 1);
		execl("/bin/sh", "sh", path, pidfile, (char *)NULL);
		_exit(127);
	}
	setpgid(leader, leader);
	assert_int_equal(waitpid(leader, &status, 0), leader);
	assert_true(WIFEXITED(status));
	gc = read_pid(pidfile);
	assert_int_equal(kill(gc, 0), 0);
	assert_int_equal(pgroup_kill_stale(leader, 12345, 100), 0);
	assert_true(child_gone(gc, 500));
}

/* A live process with another start time than recorded is left alone. */
static void
test_kill_stale_group_reused_pid(void **state)
{
	uint64_t ticks = 0;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	assert_int_equal(pgroup_starttime(&ticks, pid), 0);
	assert_int_equal(pgroup_kill_stale(pid, ticks + 1, 50), 0);
	assert_int_equal(kill(pid, 0), 0);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
	assert_int_equal(pgroup_kill_stale(pid, ticks, 50), 0);
	assert_true(pid_gone(pid, 300));
}

static void
test_kill_group_guards(void **state)
{
	assert_int_equal(pgroup_kill(0, 10), SC_ESOFTWARE);
	assert_int_equal(pgroup_kill(1, 10), SC_ESOFTWARE);
	assert_int_equal(pgroup_kill(-5, 10), SC_ESOFTWARE);
	assert_int_equal(pgroup_kill(getpgrp(), 10), SC_ESOFTWARE);
	/* An empty group is already gone. */
	assert_int_equal(pgroup_kill(INT_MAX - 1, 10), 0);
}

static void
test_kill_group_live(void **state)
{
	pid_t pid;
	int64_t t0;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGTERM, SIG_IGN);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	sleep_ms(20);
	t0 = mono_ms();
	assert_int_equal(pgroup_kill(pid, 100), 0);
	assert_true(mono_ms() - t0 >= 100); /* SIGTERM was ignored */
	assert_true(pid_gone(pid, 300));
}

static void
test_scrub_list(void **state)
{
	size_t i;
	bool claude = false;

	for (i = 0; agentenv_scrubbed[i] != NULL; i++)
		if (strcmp(agentenv_scrubbed[i], "CLAUDECODE") == 0)
			claude = true;
	assert_true(claude);
	assert_true(i >= 3);
}

/* A descendant that left the group (setsid) and holds the pipe open is
 * out of reach, but must not hold up the attempt either. */
static void
test_setsid_holder(void **state)
{
	struct runner_opts o = {.wake_fd = -1, .kill_grace_ms = 100};
	struct runner_result r;
	char pidfile[PATH_MAX];
	int64_t t0 = mono_ms();
	int det;

	if (access("/usr/bin/setsid", X_OK) != 0 &&
	    access("/bin/setsid", X_OK) != 0)
		skip();
	tmpfile_path(pidfile, sizeof(pidfile), "setsid.pid");
	assert_int_equal(run_script(&r, &o, "setsid.sh", pidfile, NULL), 0);
	assert_true(mono_ms() - t0 < 1500);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.tail, "detached "));
	runner_result_release(&r);
	/* The subreaper made it our child: end it and reap it. */
	det = read_pid(pidfile);
	assert_true(det > 1);
	kill(det, SIGKILL);
	assert_true(child_gone(det, 1000));
}

/* One attempt driven through the asynchronous API. */
struct job {
	char path[PATH_MAX];
	char log[PATH_MAX];
	const char *argv[5];
	struct runner_opts o;
	struct runner_proc *p;
	struct runner_result r;
	int order; /* 1 = finished first */
	int64_t done_at;
};

/* Start fixture name; o is as the test set it (wake_fd is forced to -1,
 * and log is used when the test named one). */
static void
job_start(struct job *j, const char *name, const char *a1, const char *a2)
{
	struct sc_err err = {0};
	int rc;

	fixture(j->path, sizeof(j->path), name);
	j->argv[0] = "/bin/sh";
	j->argv[1] = j->path;
	j->argv[2] = a1;
	j->argv[3] = a1 ? a2 : NULL;
	j->argv[4] = NULL;
	j->o.argv = j->argv;
	j->o.wake_fd = -1;
	if (j->o.cwd == NULL)
		j->o.cwd = root;
	if (j->o.kill_grace_ms == 0)
		j->o.kill_grace_ms = 200;
	if (j->log[0] != '\0')
		j->o.log_path = j->log;
	rc = runner_start(&j->p, &j->o, &err);
	if (rc < 0)
		print_message("runner_start: %s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_non_null(j->p);
}

/* The unfinished jobs' procs into live; returns how many. */
static size_t
jobs_live(struct runner_proc **live, struct job *jobs, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (jobs[i].p != NULL)
			live[k++] = jobs[i].p;
	return k;
}

/* The batch loop in miniature: wait on the unfinished jobs and finish
 * each one as soon as it is done, noting the order. */
static void
jobs_drive(struct job *jobs, size_t n)
{
	struct runner_proc *live[8];
	size_t i, k;
	int order = 0, rc;

	assert_true(n <= 8);
	for (i = 0; i < n; i++)
		if (jobs[i].p == NULL && jobs[i].order > order)
			order = jobs[i].order;
	for (;;) {
		k = jobs_live(live, jobs, n);
		if (k == 0)
			break;
		rc = runner_wait(live, k, -1, -1, NULL);
		assert_true(rc >= 0);
		for (i = 0; i < n; i++) {
			if (jobs[i].p == NULL || !runner_proc_done(jobs[i].p))
				continue;
			assert_int_equal(
			    runner_proc_finish(jobs[i].p, &jobs[i].r, NULL), 0);
			jobs[i].p = NULL;
			jobs[i].order = ++order;
			jobs[i].done_at = mono_ms();
		}
	}
}

static void
jobs_release(struct job *jobs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		runner_result_release(&jobs[i].r);
}

/* Keep the jobs supervised until jobs[idx]'s log shows text. */
static void
jobs_wait_log(struct job *jobs, size_t n, size_t idx, const char *text)
{
	struct runner_proc *live[8];
	int64_t end = mono_ms() + 3000;
	size_t k;

	while (strstr(slurp(jobs[idx].log, NULL), text) == NULL) {
		assert_true(mono_ms() < end);
		k = jobs_live(live, jobs, n);
		assert_true(runner_wait(live, k, 20, -1, NULL) >= 0);
	}
}

/* Three agents started together run at the same time, each with its own
 * exit code, log and tail. */
static void
test_async_overlap(void **state)
{
	static struct job j[3];
	static const char *codes[] = {"3", "4", "5"};
	char want[64];
	int64_t t0;
	size_t i;

	memset(j, 0, sizeof(j));
	t0 = mono_ms();
	for (i = 0; i < 3; i++) {
		snprintf(
		    j[i].log, sizeof(j[i].log), "%s/overlap%zu.log", tmpdir, i);
		job_start(&j[i], "nap.sh", "0.3", codes[i]);
	}
	assert_int_not_equal(runner_proc_pid(j[0].p), runner_proc_pid(j[1].p));
	assert_int_not_equal(runner_proc_pid(j[1].p), runner_proc_pid(j[2].p));
	assert_false(runner_proc_done(j[0].p));
	jobs_drive(j, 3);
	/* Overlapping: about 0.3 s, not 0.9 s (generous: not a benchmark). */
	assert_true(mono_ms() - t0 < 800);
	for (i = 0; i < 3; i++) {
		assert_int_equal(j[i].r.exit_code, atoi(codes[i]));
		assert_false(j[i].r.timed_out || j[i].r.interrupted);
		assert_true(j[i].r.duration_ms >= 300);
		assert_true(j[i].r.pid > 1);
		snprintf(want, sizeof(want), "nap %s start\nnap %s end\n",
		    codes[i], codes[i]);
		assert_string_equal(j[i].r.tail, want);
		assert_string_equal(slurp(j[i].log, NULL), want);
	}
	jobs_release(j, 3);
}

/* One attempt times out while another runs on and ends normally. */
static void
test_async_timeout_one(void **state)
{
	static struct job j[2];

	memset(j, 0, sizeof(j));
	j[0].o.timeout_ms = 200;
	job_start(&j[0], "sleep.sh", "30", NULL);
	job_start(&j[1], "nap.sh", "0.5", "6");
	jobs_drive(j, 2);
	assert_true(j[0].r.timed_out);
	assert_int_equal(j[0].r.term_signal, SIGTERM);
	assert_true(j[0].r.duration_ms >= 200);
	assert_int_equal(j[0].order, 1);
	assert_false(j[1].r.timed_out || j[1].r.interrupted);
	assert_int_equal(j[1].r.exit_code, 6);
	assert_true(j[1].r.duration_ms >= 500);
	assert_int_equal(j[1].order, 2);
	assert_non_null(strstr(j[1].r.tail, "nap 6 end"));
	jobs_release(j, 2);
}

/* A flood of output from one agent neither blocks the other nor grows
 * memory: both complete, both tails bounded. */
static void
test_async_flood(void **state)
{
	static struct job j[2];
	struct stat st;
	const uint64_t want = 5000000 + 1 + 10;

	memset(j, 0, sizeof(j));
	j[0].o.tail_max = 4096;
	j[1].o.tail_max = 4096;
	tmpfile_path(j[0].log, sizeof(j[0].log), "flood.log");
	job_start(&j[0], "spew.sh", "5000000", NULL);
	job_start(&j[1], "nap.sh", "0.2", "0");
	jobs_drive(j, 2);
	assert_int_equal(j[0].r.exit_code, 0);
	assert_int_equal(j[0].r.output_bytes, want);
	assert_int_equal(j[0].r.tail_len, 4096);
	assert_string_equal(j[0].r.tail + 4096 - 11, "\nLAST-LINE\n");
	assert_int_equal(stat(j[0].log, &st), 0);
	assert_int_equal((uint64_t)st.st_size, want);
	assert_int_equal(j[1].r.exit_code, 0);
	assert_string_equal(j[1].r.tail, "nap 0 start\nnap 0 end\n");
	jobs_release(j, 2);
}

/* *stop == 1 stops every running attempt, each by its own grace. */
static void
test_async_stop_all(void **state)
{
	static struct job j[3];
	static volatile sig_atomic_t stop;
	int64_t t0;
	size_t i;

	memset(j, 0, sizeof(j));
	stop = 0;
	for (i = 0; i < 3; i++) {
		j[i].o.stop = &stop;
		j[i].o.kill_grace_ms = 150;
		snprintf(
		    j[i].log, sizeof(j[i].log), "%s/stop%zu.log", tmpdir, i);
	}
	job_start(&j[0], "term.sh", NULL, NULL);
	job_start(&j[1], "ignore.sh", NULL, NULL);
	job_start(&j[2], "sleep.sh", "30", NULL);
	/* The traps must be set before the signal comes. */
	jobs_wait_log(j, 3, 0, "ready");
	jobs_wait_log(j, 3, 1, "ready");
	jobs_wait_log(j, 3, 2, "sleeping");
	t0 = mono_ms();
	stop = 1;
	jobs_drive(j, 3);
	assert_true(mono_ms() - t0 < 1500);
	for (i = 0; i < 3; i++) {
		assert_true(j[i].r.interrupted);
		assert_false(j[i].r.timed_out || j[i].r.stalled);
		assert_true(pid_gone(j[i].r.pid, 0));
	}
	/* term.sh exits by itself on SIGTERM; ignore.sh needs SIGKILL
	 * after its grace; sleep.sh dies of SIGTERM. */
	assert_int_equal(j[0].r.exit_code, 0);
	assert_non_null(strstr(j[0].r.tail, "got-term"));
	assert_int_equal(j[1].r.term_signal, SIGKILL);
	assert_true(j[1].r.duration_ms >= 150);
	assert_int_equal(j[2].r.term_signal, SIGTERM);
	jobs_release(j, 3);
	stop = 0;
}

/* Finishing an attempt that still runs kills its whole group. */
static void
test_async_finish_running(void **state)
{
	static struct job j[2];
	char pidfile[PATH_MAX];
	int64_t t0, end;
	int gc, pid;

	memset(j, 0, sizeof(j));
	tmpfile_path(pidfile, sizeof(pidfile), "finish.pid");
	unlink(pidfile);
	j[0].o.kill_grace_ms = 100;
	job_start(&j[0], "orphan.sh", pidfile, NULL);
	pid = runner_proc_pid(j[0].p);
	end = mono_ms() + 3000;
	while (access(pidfile, R_OK) != 0 || slurp(pidfile, NULL)[0] == '\0') {
		assert_true(mono_ms() < end);
		assert_int_equal(runner_wait(&j[0].p, 1, 20, -1, NULL), 0);
	}
	gc = read_pid(pidfile);
	assert_true(gc > 1);
	t0 = mono_ms();
	assert_int_equal(runner_proc_finish(j[0].p, &j[0].r, NULL), 0);
	/* Both the agent and its grandchild ignore SIGTERM. */
	assert_true(mono_ms() - t0 >= 100);
	assert_true(j[0].r.interrupted);
	assert_int_equal(j[0].r.term_signal, SIGKILL);
	assert_int_equal(j[0].r.pid, pid);
	assert_true(pid_gone(pid, 0));
	assert_true(pid_gone(gc, 0));
	runner_result_release(&j[0].r);

	/* The result may be thrown away. */
	job_start(&j[1], "sleep.sh", "30", NULL);
	pid = runner_proc_pid(j[1].p);
	assert_int_equal(runner_proc_finish(j[1].p, NULL, NULL), 0);
	assert_true(pid_gone(pid, 0));
	assert_int_equal(runner_proc_finish(NULL, NULL, NULL), SC_ESOFTWARE);
}

/* With nothing happening, runner_wait() returns after timeout_ms. */
static void
test_async_wait_timeout(void **state)
{
	static struct job j[1];
	struct runner_proc *none[1] = {NULL};
	struct sc_err err = {0};
	int64_t t0, took;

	memset(j, 0, sizeof(j));
	job_start(&j[0], "silent.sh", "30", NULL);
	t0 = mono_ms();
	assert_int_equal(runner_wait(&j[0].p, 1, 100, -1, NULL), 0);
	took = mono_ms() - t0;
	assert_true(took >= 100);
	assert_true(took < 1000);
	assert_int_equal(runner_wait(&j[0].p, 1, 0, -1, NULL), 0);
	assert_false(runner_proc_done(j[0].p));
	assert_int_equal(runner_proc_finish(j[0].p, &j[0].r, NULL), 0);
	assert_int_equal(j[0].r.term_signal, SIGTERM);
	runner_result_release(&j[0].r);

	/* No attempt at all: a plain sleep. */
	t0 = mono_ms();
	assert_int_equal(runner_wait(NULL, 0, 50, -1, NULL), 0);
	assert_true(mono_ms() - t0 >= 50);
	/* Misuse. */
	assert_int_equal(runner_wait(NULL, 0, -1, -1, &err), SC_ESOFTWARE);
	assert_int_equal(runner_wait(none, 1, 10, -1, NULL), SC_ESOFTWARE);
	assert_int_equal(runner_wait(NULL, 1, 10, -1, NULL), SC_ESOFTWARE);
	assert_true(runner_proc_done(NULL));
	assert_int_equal(runner_proc_pid(NULL), -1);
}

/* wake_fd readable ends the wait and is drained, whether it was ready
 * before the call or becomes ready during it. */
static void
test_async_wake_fd(void **state)
{
	static struct job j[1];
	char c;
	int p[2];
	int64_t t0, took;
	pid_t writer;

	memset(j, 0, sizeof(j));
	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	job_start(&j[0], "silent.sh", "30", NULL);
	assert_int_equal(write(p[1], "xy", 2), 2);
	t0 = mono_ms();
	assert_int_equal(runner_wait(&j[0].p, 1, 5000, p[0], NULL), 0);
	assert_true(mono_ms() - t0 < 1000);
	assert_int_equal(read(p[0], &c, 1), -1);
	assert_int_equal(errno, EAGAIN);

	/* Another process writes while we wait. */
	writer = fork();
	assert_true(writer >= 0);
	if (writer == 0) {
		sleep_ms(100);
		if (write(p[1], "z", 1) != 1)
			_exit(1);
		_exit(0);
	}
	t0 = mono_ms();
	assert_int_equal(runner_wait(&j[0].p, 1, 5000, p[0], NULL), 0);
	took = mono_ms() - t0;
	assert_true(took >= 50);
	assert_true(took < 2500);
	assert_int_equal(waitpid(writer, NULL, 0), writer);
	assert_int_equal(read(p[0], &c, 1), -1);

	/* Without any attempt too. */
	assert_int_equal(write(p[1], "w", 1), 1);
	assert_int_equal(runner_wait(NULL, 0, -1, p[0], NULL), 0);
	assert_int_equal(runner_proc_finish(j[0].p, NULL, NULL), 0);
	close(p[0]);
	close(p[1]);
}

/* An agent that cannot be executed is done at once. */
static void
test_async_spawn_failure(void **state)
{
	static struct job j[2];
	const char *argv[] = {"storyctl-no-such-agent-xyz", NULL};
	struct runner_opts o = {.wake_fd = -1, .argv = argv};
	struct runner_proc *both[2];
	struct runner_result r;
	struct runner_proc *p = NULL;
	int64_t t0;

	memset(j, 0, sizeof(j));
	assert_int_equal(runner_start(&p, &o, NULL), 0);
	assert_non_null(p);
	assert_true(runner_proc_done(p));
	assert_int_equal(runner_proc_pid(p), 0); /* no process is left */
	job_start(&j[0], "sleep.sh", "30", NULL);
	both[0] = j[0].p;
	both[1] = p;
	t0 = mono_ms();
	assert_int_equal(runner_wait(both, 2, -1, -1, NULL), 1);
	assert_int_equal(runner_wait(&p, 1, -1, -1, NULL), 1);
	assert_true(mono_ms() - t0 < 500);
	assert_int_equal(runner_proc_finish(p, &r, NULL), 0);
	assert_true(r.spawn_failed);
	assert_int_equal(r.spawn_errno, ENOENT);
	assert_int_equal(r.exit_code, 127);
	assert_non_null(strstr(r.tail, "cannot execute"));
	runner_result_release(&r);

	/* A start error leaves nothing: *out is reset. */
	p = j[0].p;
	o.argv = NULL;
	assert_int_equal(runner_start(&p, &o, NULL), SC_ESOFTWARE);
	assert_null(p);
	assert_int_equal(runner_proc_finish(j[0].p, NULL, NULL), 0);
}

/* Each attempt gets its own on_poll calls, with its own pid. */
static void
test_async_on_poll_each(void **state)
{
	static struct job j[3];
	static struct poll_ctx c[3];
	size_t i;

	memset(j, 0, sizeof(j));
	memset(c, 0, sizeof(c));
	for (i = 0; i < 3; i++) {
		c[i].elapsed_monotonic = true;
		j[i].o.on_poll = on_poll;
		j[i].o.on_start = on_start;
		j[i].o.ctx = &c[i];
		j[i].o.poll_interval_ms = 30;
		job_start(&j[i], "silent.sh", "0.25", NULL);
	}
	jobs_drive(j, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(j[i].r.exit_code, 0);
		assert_true(c[i].calls >= 3);
		assert_true(c[i].elapsed_monotonic);
		assert_int_equal(c[i].pgid, j[i].r.pid);
		assert_int_equal(c[i].start_pid, j[i].r.pid);
	}
	jobs_release(j, 3);
}

/* Whether the file at path holds exactly want; false when it cannot be
 * read (a process of /proc may vanish while we look). */
static bool
file_is(const char *path, const char *want)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return strcmp(buf, want) == 0;
}

/* Find the watchdog among the children of ppid (0 when none), other than
 * pid but. */
static int
find_watchdog_but(int ppid, int but)
{
	char path[300];
	struct dirent *de;
	DIR *d;
	int pid, found = 0, parent = 0, pgrp = 0;

	d = opendir("/proc");
	if (d == NULL)
		return 0;
	while (found == 0 && (de = readdir(d)) != NULL) {
		pid = atoi(de->d_name);
		if (pid <= 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (!file_is(path, "storyctl-watch\n"))
			continue;
		proc_parent_group(pid, &parent, &pgrp);
		if (parent == ppid && pid != but)
			found = pid;
	}
	closedir(d);
	return found;
}

static int
find_watchdog(int ppid)
{
	return find_watchdog_but(ppid, 0);
}

/* The controller dies with two agents running, one of them started
 * before its watchdog died and was replaced: the grandchildren of both
 * are killed. */
static void
test_async_controller_death(void **state)
{
	static struct job j[2];
	char pidfile[2][PATH_MAX];
	int gc[2], agent[2], pgrp, status, i, wd;
	int64_t end;
	pid_t ctl;

	memset(j, 0, sizeof(j));
	for (i = 0; i < 2; i++) {
		snprintf(pidfile[i], sizeof(pidfile[i]), "%s/death%d.pid",
		    tmpdir, i);
		unlink(pidfile[i]);
		j[i].o.kill_grace_ms = 100;
	}
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ctl = fork();
	assert_true(ctl >= 0);
	if (ctl == 0) {
		/* The "controller": one agent, then its watchdog dies,
		 * then a second agent (which starts a new watchdog). */
		job_start(&j[0], "orphan.sh", pidfile[0], NULL);
		while (access(pidfile[0], R_OK) != 0)
			runner_wait(&j[0].p, 1, 10, -1, NULL);
		/* the watchdog may take a moment to show up under load */
		for (i = 0; i < 200 && (wd = find_watchdog(getpid())) <= 0; i++)
			runner_wait(&j[0].p, 1, 10, -1, NULL);
		if (wd <= 0)
			_exit(3);
		kill(wd, SIGKILL);
		waitpid(wd, NULL, 0);
		job_start(&j[1], "orphan.sh", pidfile[1], NULL);
		for (;;) {
			struct runner_proc *live[2] = {j[0].p, j[1].p};

			runner_wait(live, 2, -1, -1, NULL);
		}
	}
	end = mono_ms() + 3000;
	while (access(pidfile[0], R_OK) != 0 || access(pidfile[1], R_OK) != 0) {
		assert_true(mono_ms() < end);
		assert_int_equal(waitpid(ctl, &status, WNOHANG), 0);
		sleep_ms(10);
	}
	sleep_ms(30);
	for (i = 0; i < 2; i++) {
		gc[i] = read_pid(pidfile[i]);
		assert_true(gc[i] > 1);
		proc_parent_group(gc[i], &agent[i], &pgrp);
		assert_int_equal(pgrp, agent[i]);
	}
	assert_int_equal(kill(ctl, SIGKILL), 0);
	assert_int_equal(waitpid(ctl, &status, 0), ctl);
	for (i = 0; i < 2; i++) {
		assert_true(child_gone(agent[i], 2000));
		/* Ignoring SIGTERM: only the watchdog's SIGKILL ends it. */
		assert_true(child_gone(gc[i], 1500));
	}
}

/*
 * The controller dies in the middle of a spawn: the watchdog was told the
 * agent's pipe but not yet its group (controller/engine/watchdog.h).  It finds
 * the processes holding that pipe and ends them: an agent that leads its
 * group and ignores SIGTERM (SIGKILL after the grace), and a process still
 * in the controller's group, as a spawn before its setpgid is (signalled
 * by pid: the controller's group, ours here, is left alone).
 */
static void
test_spawn_window_death(void **state)
{
	char ready[PATH_MAX], pids[PATH_MAX];
	int status = 0, agent = 0, other = 0;
	int64_t end;
	pid_t ctl;

	tmpfile_path(ready, sizeof(ready), "window.ready");
	tmpfile_path(pids, sizeof(pids), "window.pids");
	unlink(ready);
	unlink(pids);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ctl = fork();
	assert_true(ctl >= 0);
	if (ctl == 0) {
		const char *argv[] = {"/bin/sh", "-c",
		    "trap '' TERM; : > \"$0\"; exec sleep 30", ready, NULL};
		char *const envp[] = {"PATH=/bin:/usr/bin", NULL};
		struct watchdog_entry w = {.grace_ms = 100};
		struct spawn_req rq = {.argv = argv, .envp = envp};
		pid_t a = 0, b;
		int rd, wr, xe, i;
		FILE *f;

		if (watchdog_ensure(NULL) < 0 ||
		    spawn_pipe(&rd, &wr, &w.pipe_ino, NULL) < 0)
			_exit(3);
		watchdog_add(&w);
		rq.out_fd = wr;
		if (spawn_start(&a, &xe, &rq, NULL) < 0 || a <= 0)
			_exit(4);
		b = fork();
		if (b == 0) {
			dup2(wr, 1);
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
			_exit(127);
		}
		f = fopen(pids, "w");
		if (b < 0 || f == NULL)
			_exit(5);
		fprintf(f, "%d %d\n", (int)a, (int)b);
		fclose(f);
		for (i = 0; i < 300 && access(ready, F_OK) != 0; i++)
			sleep_ms(10);
		/* watchdog_set_group() never comes */
		raise(SIGKILL);
		_exit(6);
	}
	assert_int_equal(waitpid(ctl, &status, 0), ctl);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(sscanf(slurp(pids, NULL), "%d %d", &agent, &other), 2);
	assert_true(agent > 1 && other > 1);
	end = mono_ms() + 3000;
	while (waitpid(agent, &status, WNOHANG) == 0 && mono_ms() < end)
		sleep_ms(10);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_true(child_gone(other, 3000));
}

/* A watchdog killed on its own is replaced while the attempt runs (the
 * agents have no other guard), and the replacement knows the agent: the
 * controller's death still ends its group. */
static void
test_watchdog_replaced(void **state)
{
	static struct job j;
	char pidfile[PATH_MAX];
	int gc, agent = 0, pgrp = 0, status, wd = 0, wd2 = 0, i;
	int64_t end;
	pid_t ctl;

	memset(&j, 0, sizeof(j));
	tmpfile_path(pidfile, sizeof(pidfile), "replaced.pid");
	unlink(pidfile);
	j.o.kill_grace_ms = 100;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	ctl = fork();
	assert_true(ctl >= 0);
	if (ctl == 0) {
		job_start(&j, "orphan.sh", pidfile, NULL);
		for (;;)
			runner_wait(&j.p, 1, -1, -1, NULL);
	}
	end = mono_ms() + 3000;
	while (access(pidfile, R_OK) != 0 || (wd = find_watchdog(ctl)) <= 0) {
		assert_true(mono_ms() < end);
		sleep_ms(10);
	}
	sleep_ms(30);
	gc = read_pid(pidfile);
	proc_parent_group(gc, &agent, &pgrp);
	assert_int_equal(pgrp, agent);
	assert_int_equal(kill(wd, SIGKILL), 0);
	for (i = 0; i < 500 && (wd2 = find_watchdog_but(ctl, wd)) <= 0; i++)
		sleep_ms(10);
	assert_true(wd2 > 0);
	/* the new one has had the time to read what it was told */
	sleep_ms(50);
	assert_int_equal(kill(ctl, SIGKILL), 0);
	assert_int_equal(waitpid(ctl, &status, 0), ctl);
	assert_true(child_gone(agent, 2000));
	assert_true(child_gone(gc, 1500));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_code),
	    cmocka_unit_test(test_signal),
	    cmocka_unit_test(test_log_mode_existing),
	    cmocka_unit_test(test_log_unopenable),
	    cmocka_unit_test(test_tail_bounded),
	    cmocka_unit_test(test_log_enospc),
	    cmocka_unit_test(test_stdin_devnull),
	    cmocka_unit_test(test_env),
	    cmocka_unit_test(test_env_bad_entry),
	    cmocka_unit_test(test_cwd),
	    cmocka_unit_test(test_cwd_missing),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_timeout_kill_after_grace),
	    cmocka_unit_test(test_grandchild_killed),
	    cmocka_unit_test(test_stall),
	    cmocka_unit_test(test_stall_progress),
	    cmocka_unit_test(test_on_poll_and_start),
	    cmocka_unit_test(test_on_start_abort),
	    cmocka_unit_test(test_stop_graceful),
	    cmocka_unit_test(test_stop_immediate),
	    cmocka_unit_test(test_stop_wake_fd),
	    cmocka_unit_test(test_spawn_missing),
	    cmocka_unit_test(test_spawn_not_executable),
	    cmocka_unit_test(test_empty_argv),
	    cmocka_unit_test(test_no_fd_leak),
	    cmocka_unit_test(test_spawn_path_search),
	    cmocka_unit_test(test_spawn_default_path),
	    cmocka_unit_test(test_spawn_name_too_long),
	    cmocka_unit_test(test_spawn_env_untouched),
	    cmocka_unit_test(test_spawn_group_and_signals),
	    cmocka_unit_test(test_controller_death),
	    cmocka_unit_test(test_kill_stale_group_leaderless),
	    cmocka_unit_test(test_kill_stale_group_reused_pid),
	    cmocka_unit_test(test_kill_group_guards),
	    cmocka_unit_test(test_kill_group_live),
	    cmocka_unit_test(test_scrub_list),
	    cmocka_unit_test(test_setsid_holder),
	    cmocka_unit_test(test_async_overlap),
	    cmocka_unit_test(test_async_timeout_one),
	    cmocka_unit_test(test_async_flood),
	    cmocka_unit_test(test_async_stop_all),
	    cmocka_unit_test(test_async_finish_running),
	    cmocka_unit_test(test_async_wait_timeout),
	    cmocka_unit_test(test_async_wake_fd),
	    cmocka_unit_test(test_async_spawn_failure),
	    cmocka_unit_test(test_async_on_poll_each),
	    cmocka_unit_test(test_async_controller_death),
	    cmocka_unit_test(test_spawn_window_death),
	    cmocka_unit_test(test_watchdog_replaced),
	    cmocka_unit_test(test_spawn_too_big),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
