/* test_lock.c - one controller per state dir (state/lock.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state/lock.h"

struct fx {
	char root[64];
	char state[128]; /* root/state, made by lock_acquire */
	char file[160]; /* state/lock */
};

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->root, "/tmp/lock-test-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	snprintf(f->file, sizeof(f->file), "%s/lock", f->state);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void
read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	n = read(fd, buf, size - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
}

/*
 * A child process that takes the lock, reports on ready[1] and then
 * waits until hold[0] reaches end of file (or it is killed).
 */
static pid_t
spawn_holder(const char *state_dir, int *ready_fd, int *hold_fd)
{
	int ready[2], hold[2];
	struct state_lock *l = NULL;
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(hold[1]);
		c = lock_acquire(&l, state_dir, NULL) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(2);
		while (read(hold[0], &c, 1) > 0)
			;
		lock_release(l);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'y');
	*ready_fd = ready[0];
	*hold_fd = hold[1];
	return pid;
}

static void
test_acquire_writes_pid(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	struct stat sb;
	char buf[64], want[64];
	int64_t pid = -1;

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_non_null(l);
	assert_int_equal(stat(f->state, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(stat(f->file, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	read_file(f->file, buf, sizeof(buf));
	snprintf(want, sizeof(want), "%ld\n", (long)getpid());
	assert_string_equal(buf, want);
	assert_int_equal(lock_holder_pid(f->state, &pid), 0);
	assert_int_equal(pid, getpid());

	lock_release(l);
	read_file(f->file, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(lock_holder_pid(f->state, &pid), 1);
	assert_int_equal(pid, 0);
	/* free again after a release */
	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	lock_release(l);
}

static void
test_tightens_loose_lock_file(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	struct stat sb;
	int fd;

	assert_int_equal(mkdir(f->state, 0700), 0);
	fd = open(f->file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(f->file, 0666), 0);
	assert_int_equal(chmod(f->state, 0777), 0);
	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(stat(f->file, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(stat(f->state, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	lock_release(l);
}

static void
test_second_controller_refused(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	char want[256];
	int64_t holder = 0;
	int ready, hold, status = -1;
	pid_t child;

	child = spawn_holder(f->state, &ready, &hold);
	assert_int_equal(lock_acquire(&l, f->state, &err), SC_ETEMPFAIL);
	assert_null(l);
	snprintf(want, sizeof(want),
	    "another storyctl (pid %ld) is already "
	    "working on %s",
	    (long)child, f->state);
	assert_string_equal(err.msg, want);
	assert_int_equal(lock_holder_pid(f->state, &holder), 0);
	assert_int_equal(holder, child);

	/* the holder ends normally: the lock is free */
	close(hold);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready);
	assert_int_equal(lock_holder_pid(f->state, &holder), 1);
	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	lock_release(l);
}

static void
test_sigkilled_holder_taken_over(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	char buf[64], want[64];
	int64_t holder = 0;
	int ready, hold, status = 0;
	pid_t child;

	child = spawn_holder(f->state, &ready, &hold);
	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(ready);
	close(hold);
	/* its pid is still written, but nobody holds the lock */
	read_file(f->file, buf, sizeof(buf));
	snprintf(want, sizeof(want), "%ld\n", (long)child);
	assert_string_equal(buf, want);
	assert_int_equal(lock_holder_pid(f->state, &holder), 1);
	assert_int_equal(holder, 0);

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	read_file(f->file, buf, sizeof(buf));
	snprintf(want, sizeof(want), "%ld\n", (long)getpid());
	assert_string_equal(buf, want);
	lock_release(l);
}

static void
test_same_process_second_acquire_refused(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *a = NULL, *b = NULL;
	char want[64];

	assert_int_equal(lock_acquire(&a, f->state, &err), 0);
	assert_int_equal(lock_acquire(&b, f->state, &err), SC_ETEMPFAIL);
	assert_null(b);
	snprintf(want, sizeof(want), "(pid %ld)", (long)getpid());
	assert_non_null(strstr(err.msg, want));
	/* the refused attempt closed its descriptor without dropping a's
	 * lock (flock belongs to the open file description) */
	assert_int_equal(lock_acquire(&b, f->state, &err), SC_ETEMPFAIL);
	lock_release(a);
}

static void
test_exec_child_does_not_keep_lock(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	int i, status = 0;
	pid_t child;

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char *argv[] = {(char *)"sleep", (char *)"30", NULL};

		execvp(argv[0], argv);
		_exit(127);
	}
	/* an agent outliving its controller must not block the next one;
	 * the child may still be between fork and exec, so wait for exec
	 * to drop the descriptor */
	lock_release(l);
	l = NULL;
	for (i = 0; i < 20 && l == NULL; i++) {
		if (lock_acquire(&l, f->state, &err) == 0)
			break;
		usleep(1000);
	}
	assert_non_null(l);
	lock_release(l);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status)); /* it was still running */
}

static void
test_holder_pid_without_state_dir(void **state)
{
	struct fx *f = *state;
	int64_t pid = -1;

	assert_int_equal(lock_holder_pid(f->state, &pid), 1);
	assert_int_equal(pid, 0);
	lock_release(NULL);
}

static void
test_acquire_error_names_dir(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	int fd;

	/* the state dir name is taken by a file */
	fd = open(f->state, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(lock_acquire(&l, f->state, &err), SC_EIO);
	assert_null(l);
	assert_non_null(strstr(err.msg, f->state));
}

/* A controller that stops on an error leaves a note for the next one
 * (docs/git-work.md#recovery); the note survives a start that does not
 * clear it, and is gone once cleared. */
static void
test_stop_note(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	const char *why = NULL;
	struct stat sb;
	int64_t pid = -1;

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), 0);
	assert_string_equal(why, "");
	/* room for the note is real bytes, not a hole */
	assert_int_equal(stat(f->file, &sb), 0);
	assert_true(sb.st_size >= 512);
	assert_true(sb.st_blocks > 0);
	lock_note_stop(l, "state.db: database or disk is full\nsecond line");
	lock_release(l);
	assert_int_equal(lock_holder_pid(f->state, &pid), 1);
	assert_int_equal(pid, 0);

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), getpid());
	assert_string_equal(
	    why, "state.db: database or disk is full second line");
	lock_release(l); /* not cleared: still there next time */

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), getpid());
	lock_clear_stop(l);
	assert_int_equal(lock_prev_stop(l, &why), 0);
	lock_release(l);
	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), 0);
	lock_release(l);
	lock_note_stop(NULL, "x");
	lock_clear_stop(NULL);
	assert_int_equal(lock_prev_stop(NULL, NULL), 0);
}

/* A start that stops on an error before it has reconciled (a second
 * start on a disk still full) keeps the note it found instead of
 * writing its own: the first controller's attempts are still to be
 * closed as its stop (issue 30). */
static void
test_stop_note_kept_by_failed_start(void **state)
{
	struct fx *f = *state;
	struct sc_err err = {0};
	struct state_lock *l = NULL;
	const char *why = NULL;

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	lock_note_stop(l, "first: database or disk is full");
	lock_release(l);

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), getpid());
	lock_note_stop(l, "second: database or disk is full");
	lock_release(l);

	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), getpid());
	assert_string_equal(why, "first: database or disk is full");
	/* once used, a later stop writes its own */
	lock_clear_stop(l);
	lock_note_stop(l, "third");
	lock_release(l);
	assert_int_equal(lock_acquire(&l, f->state, &err), 0);
	assert_int_equal(lock_prev_stop(l, &why), getpid());
	assert_string_equal(why, "third");
	lock_release(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_acquire_writes_pid, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_tightens_loose_lock_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_second_controller_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_sigkilled_holder_taken_over, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_same_process_second_acquire_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_exec_child_does_not_keep_lock, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_holder_pid_without_state_dir, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_acquire_error_names_dir, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stop_note, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_stop_note_kept_by_failed_start, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
