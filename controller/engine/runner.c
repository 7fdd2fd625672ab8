/* runner.c - supervising agent attempts; see runner.h and docs/runner.md.
 * Waiting for several at once is runner_wait.c's.
 * Starting an agent is spawn.c's, its environment agentenv.c's, where its
 * output goes capture.c's, the watchdog watchdog.c's and process groups
 * pgroup.c's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/param.h> /* MIN */
#include <sys/wait.h>
#include <unistd.h>

#include "controller/engine/agentenv.h"
#include "controller/config/argv.h"
#include "controller/engine/capture.h"
#include "controller/clock.h"
#include "controller/engine/pgroup.h"
#include "controller/engine/runner.h"
#include "controller/engine/runner_proc.h"
#include "controller/engine/spawn.h"
#include "controller/engine/watchdog.h"

#define RUNNER_TAIL_DEFAULT ((size_t)64 * 1024)
#define RUNNER_CHUNK 65536

static void
fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int
proc_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* Kernels before 5.3 (and valgrind) lack it: ask only once. */
	static bool unsupported;
	int fd;

	if (unsupported)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && errno == ENOSYS)
		unsupported = true;
	return fd;
#else
	(void)pid;
	return -1;
#endif
}

static void
proc_signal(struct runner_proc *p, int sig)
{
	int64_t now = clock_mono_ms();

	/* Negative pid: the whole group, grandchildren included.  Never the
	 * bare pid: once reaped, that number may be someone else's (the
	 * group id is not reused while any member lives). */
	kill(-p->pid, sig);
	if (sig == SIGKILL) {
		p->kill_sent = true;
		p->give_up = now + PGROUP_KILL_WAIT_MS;
	}
	if (!p->term_sent) {
		p->term_sent = true;
		p->kill_at =
		    now + (p->o->kill_grace_ms > 0 ? p->o->kill_grace_ms : 0);
	}
}

/*
 * Read what the pipe holds now, at most max_chunks reads, so that a
 * flooding agent cannot starve the others.  Returns whether anything
 * was read or the pipe ended (EOF or an error closes it).
 */
bool
runner_proc_read(struct runner_proc *p, int max_chunks)
{
	char buf[RUNNER_CHUNK];
	ssize_t n;
	int i;
	bool moved = false;

	for (i = 0; i < max_chunks && p->out_fd >= 0; i++) {
		n = read(p->out_fd, buf, sizeof(buf));
		if (n > 0) {
			capture_add(&p->cap, buf, (size_t)n);
			p->last_activity = clock_mono_ms();
			moved = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		fd_close(&p->out_fd); /* EOF, or a read error */
		moved = true;
	}
	return moved;
}

/* Act on *stop.  running: the agent itself still runs, so a stop marks
 * the attempt interrupted (not when only its leftovers are cleared).
 * Returns whether a signal went out. */
static bool
proc_check_stop(struct runner_proc *p, bool running)
{
	int st;

	if (p->o->stop == NULL)
		return false;
	st = *p->o->stop;
	if (st <= 0)
		return false;
	if (running)
		p->r.interrupted = true;
	if (st >= 2 && !p->kill_sent) {
		proc_signal(p, SIGKILL);
		return true;
	}
	if (!p->term_sent) {
		proc_signal(p, SIGTERM);
		return true;
	}
	return false;
}

/* The group is gone (or given up on): take what is still buffered and
 * release the descriptors.  The read is bounded: a descendant that left
 * the group (setsid) may still hold the pipe and write to it. */
static void
proc_done(struct runner_proc *p)
{
	pgroup_reap(p->pid);
	runner_proc_read(p, 16);
	fd_close(&p->out_fd);
	capture_close_log(&p->cap);
	fd_close(&p->pidfd);
	watchdog_remove(&p->watch);
	p->phase = PHASE_DONE;
}

/* The agent itself has been reaped (or lost to someone else's wait). */
static void
proc_exited(struct runner_proc *p)
{
	p->r.duration_ms = clock_mono_ms() - p->t0;
	if (p->lost) {
		p->r.exit_code = -1;
	} else if (WIFSIGNALED(p->wstatus)) {
		p->r.exit_code = -1;
		p->r.term_signal = WTERMSIG(p->wstatus);
	} else {
		p->r.exit_code = WEXITSTATUS(p->wstatus);
	}
	fd_close(&p->pidfd);
	p->phase = PHASE_CLEARING;
}

/*
 * The agent has exited.  Whatever else is left in its group (a
 * grandchild holding the pipe, a detached helper) is terminated now,
 * SIGTERM then SIGKILL after the grace; we never wait for EOF on the
 * pipe, which such a process may hold forever.  Returns whether the
 * attempt moved on.
 */
static bool
proc_clear(struct runner_proc *p)
{
	int64_t now;
	bool moved;

	pgroup_reap(p->pid);
	if (!pgroup_alive(p->pid)) {
		proc_done(p);
		return true;
	}
	moved = proc_check_stop(p, false);
	now = clock_mono_ms();
	if (!p->term_sent) {
		proc_signal(p, SIGTERM);
		moved = true;
	} else if (!p->kill_sent && now >= p->kill_at) {
		proc_signal(p, SIGKILL);
		moved = true;
	}
	if (p->kill_sent && now >= p->give_up) {
		/* Uninterruptible sleep, or gone out of our sight: it
		 * dies when it wakes; the watchdog no longer waits. */
		proc_done(p);
		moved = true;
	}
	return moved;
}

/* Whether on_tail says the attempt cannot succeed (a copy of the tail
 * for it; none when out of memory, and the attempt goes on). */
static bool
proc_dead_end(struct runner_proc *p)
{
	char *tail;
	size_t len = 0;
	bool dead;

	if (p->o->on_tail == NULL)
		return false;
	if ((tail = capture_tail(&p->cap, &len)) == NULL)
		return false;
	dead = p->o->on_tail(p->o->ctx, tail, len);
	free(tail);
	return dead;
}

/* on_poll is due: its activity token (a change is activity), the next
 * poll, and on_tail's verdict on the output so far. */
static void
proc_poll(struct runner_proc *p, int64_t now)
{
	const struct runner_opts *o = p->o;
	int tok;

	tok = o->on_poll(o->ctx, now - p->t0, p->pid);
	if (p->have_token && tok != p->token)
		p->last_activity = now;
	p->token = tok;
	p->have_token = true;
	p->next_poll =
	    now + (o->poll_interval_ms > 0 ? o->poll_interval_ms : 1000);
	if (!p->term_sent && proc_dead_end(p)) {
		p->r.dead_end = true;
		proc_signal(p, SIGTERM);
	}
}

/* The timeout and the stall (SIGTERM), then the grace after it
 * (SIGKILL).  Returns whether a signal was sent. */
static bool
proc_check_deadlines(struct runner_proc *p, int64_t now)
{
	const struct runner_opts *o = p->o;
	bool moved = false;

	if (!p->term_sent && o->timeout_ms > 0 &&
	    now - p->t0 >= o->timeout_ms) {
		p->r.timed_out = true;
		proc_signal(p, SIGTERM);
		moved = true;
	} else if (!p->term_sent && o->stall_timeout_ms > 0 &&
	    now - p->last_activity >= o->stall_timeout_ms) {
		p->r.stalled = true;
		proc_signal(p, SIGTERM);
		moved = true;
	}
	if (p->term_sent && !p->kill_sent && now >= p->kill_at) {
		proc_signal(p, SIGKILL);
		moved = true;
	}
	return moved;
}

/* Reap the agent if it has exited; returns whether it had. */
static bool
proc_reap(struct runner_proc *p)
{
	pid_t w;

	/* Only our own child, by pid: never waitpid(-1), the controller
	 * has other children. */
	do
		w = waitpid(p->pid, &p->wstatus, WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == p->pid || w < 0) {
		/* ECHILD: reaped behind our back (a waitpid(-1)
		 * elsewhere); the status is lost. */
		p->lost = w < 0;
		proc_exited(p);
		return true;
	}
	return false;
}

/*
 * One look at a live attempt: *stop, on_poll, the deadlines, the exit of
 * the agent, the state of its group.  Returns whether anything happened
 * (a callback, a signal, an exit): runner_wait() then returns.
 */
bool
runner_proc_service(struct runner_proc *p)
{
	const struct runner_opts *o = p->o;
	int64_t now = clock_mono_ms();
	bool moved = false;

	if (p->phase == PHASE_RUNNING) {
		moved = proc_check_stop(p, true);
		if (o->on_poll != NULL && now >= p->next_poll) {
			proc_poll(p, now);
			moved = true;
		}
		if (proc_check_deadlines(p, now))
			moved = true;
		if (proc_reap(p))
			moved = true;
	}
	if (p->phase == PHASE_CLEARING && proc_clear(p))
		moved = true;
	return moved;
}

/* Whether *stop can change without o->wake_fd telling us. */
static bool
proc_stop_unsignalled(const struct runner_proc *p)
{
	return p->o->stop != NULL && (p->o->wake_fd < 0 || p->wake_dead);
}

/* The time (CLOCK_MONOTONIC ms) by which runner_proc_service() must look at a
 * live attempt again, output and exit aside.  Keep in step with
 * runner_proc_service() (proc_poll(), proc_check_deadlines()) and
 * proc_clear(): a deadline they do not act on would make runner_wait()
 * spin. */
int64_t
runner_proc_deadline(const struct runner_proc *p, int64_t now)
{
	const struct runner_opts *o = p->o;
	int64_t d;

	if (p->phase == PHASE_CLEARING) {
		d = now + PGROUP_TICK_MS;
		if (p->term_sent && !p->kill_sent)
			d = MIN(d, p->kill_at);
		if (p->kill_sent)
			d = MIN(d, p->give_up);
		return d;
	}
	/* A safety net only: exits and output wake poll() by themselves. */
	d = now + 1000;
	if (o->on_poll != NULL)
		d = MIN(d, p->next_poll);
	if (!p->term_sent && o->timeout_ms > 0)
		d = MIN(d, p->t0 + o->timeout_ms);
	if (!p->term_sent && o->stall_timeout_ms > 0)
		d = MIN(d, p->last_activity + o->stall_timeout_ms);
	if (p->term_sent && !p->kill_sent)
		d = MIN(d, p->kill_at);
	if (p->pidfd < 0)
		d = MIN(d, now + 50); /* no pidfd: look for the exit */
	if (proc_stop_unsignalled(p))
		d = MIN(d, now + 100);
	return d;
}

static void
proc_note_spawn_failure(struct runner_proc *p, int e)
{
	char line[512];
	int n;

	n = snprintf(line, sizeof(line), "storyctl: cannot execute %s: %s\n",
	    p->o->argv[0],
	    p->r.spawn_detail[0] != '\0' ? p->r.spawn_detail : strerror(e));
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	capture_note(&p->cap, line, (size_t)n);
}

/* Release everything p holds; NULL is a no-op. */
static void
proc_free(struct runner_proc *p)
{
	if (p == NULL)
		return;
	watchdog_remove(&p->watch);
	fd_close(&p->out_fd);
	fd_close(&p->pidfd);
	capture_release(&p->cap);
	free(p);
}

/* Supervise p alone until it is done (blocking). */
static void
proc_settle(struct runner_proc *p)
{
	struct runner_proc *one[1];

	one[0] = p;
	while (p->phase != PHASE_DONE) {
		if (runner_wait(one, 1, -1, -1, NULL) >= 0)
			continue;
		/* Cannot happen for one attempt (no allocation); still,
		 * never leave the group behind: end it bluntly. */
		if (!p->kill_sent)
			proc_signal(p, SIGKILL);
		clock_nap_ms(PGROUP_TICK_MS);
	}
}

/* The attempt ends before it began: its program could not be executed
 * (e, as execve reported it, or E2BIG found beforehand with
 * spawn_detail set).  Exit code 127 for ENOENT, 126 otherwise, as a
 * shell says; no process is left, pid stays 0. */
static void
proc_spawn_failed(struct runner_proc *p, int e)
{
	p->r.spawn_failed = true;
	p->r.spawn_errno = e;
	p->r.exit_code = e == ENOENT ? 127 : 126;
	proc_note_spawn_failure(p, e);
	fd_close(&p->out_fd);
	capture_close_log(&p->cap);
	watchdog_remove(&p->watch);
	p->phase = PHASE_DONE;
}

/* The agent runs: its group, the watchdog's entry, the timers, and
 * on_start (whose negative return ends the group at once). */
static int
proc_started(struct runner_proc *p, pid_t pid)
{
	const struct runner_opts *o = p->o;
	int rc = 0;

	/* The child set its group before the exec already (this fails with
	 * EACCES then); this one matters where the spawn runs as a plain
	 * fork that does not wait for the exec (valgrind). */
	setpgid(pid, pid);
	p->pid = pid;
	p->r.pid = pid;
	watchdog_set_group(&p->watch, pid);
	p->pidfd = proc_pidfd(pid);
	p->last_activity = p->t0;
	p->next_poll =
	    p->t0 + (o->poll_interval_ms > 0 ? o->poll_interval_ms : 1000);
	if (o->on_start != NULL) {
		rc = o->on_start(o->ctx, pid);
		if (rc < 0) {
			/* The callback reported through its ctx. */
			proc_signal(p, SIGKILL);
			proc_settle(p);
			return rc;
		}
	}
	return 0;
}

/* Start the agent on a pipe of its own, watched from before it exists;
 * a program that could not be executed ends the attempt at once. */
static int
proc_spawn(struct runner_proc *p, char **envp, struct sc_err *err)
{
	const struct runner_opts *o = p->o;
	struct spawn_req rq = {0};
	int agent_end = -1;
	int rc, exec_errno = 0;
	pid_t pid = 0;

	rc = spawn_pipe(&p->out_fd, &agent_end, &p->watch.pipe_ino, err);
	if (rc < 0)
		goto out;
	/* Watched before it exists: if we die during the spawn, the
	 * watchdog finds the agent by its pipe (watchdog.h). */
	p->watch.grace_ms = o->kill_grace_ms;
	watchdog_add(&p->watch);
	rq.argv = o->argv;
	rq.envp = envp;
	rq.cwd = o->cwd;
	rq.out_fd = agent_end;
	rq.keep_fd = o->keep_fd;
	p->t0 = clock_mono_ms();
	rc = spawn_start(&pid, &exec_errno, &rq, err);
	if (rc < 0)
		goto out;
	if (pid == 0) {
		p->r.duration_ms = clock_mono_ms() - p->t0;
		proc_spawn_failed(p, exec_errno);
		goto out;
	}
	rc = proc_started(p, pid);
out:
	fd_close(&agent_end);
	return rc;
}

int
runner_start(
    struct runner_proc **out, const struct runner_opts *o, struct sc_err *err)
{
	struct runner_proc *p = NULL;
	struct sc_err fit;
	char **envp = NULL;
	int rc = 0;

	*out = NULL;
	if (o == NULL || o->argv == NULL || o->argv[0] == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "runner: empty agent argv");
		goto out;
	}
	/* Orphans of the agent come to us, so we can reap them by group.
	 * The watchdog is forked before this call allocates anything, so
	 * that its copy of our memory holds nothing it could leak.  No agent
	 * runs unwatched: nothing else ends it if we die. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	rc = watchdog_ensure(err);
	if (rc < 0)
		goto out;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rc = err_set(err, SC_EOS, "out of memory for an agent attempt");
		goto out;
	}
	p->o = o;
	p->out_fd = p->pidfd = p->pf_out = p->cap.log_fd = -1;
	rc = agentenv_build(&envp, o->env_add, o->mark, err);
	if (rc < 0)
		goto out;
	rc = capture_open(&p->cap, o->log_path,
	    o->tail_max ? o->tail_max : RUNNER_TAIL_DEFAULT, err);
	if (rc < 0)
		goto out;
	p->cap.echo_fd = o->echo_stdout ? STDOUT_FILENO : -1;
	/* execve would fail with E2BIG (a prompt over the limit of one
	 * argument, a huge environment): start nothing and say which and
	 * what to do, instead of a bare 126 on every attempt.  The result
	 * is a failed exec like any other; no process, no group. */
	if (argv_fits_vec(o->argv, (const char *const *)envp, &fit) < 0) {
		snprintf(p->r.spawn_detail, sizeof(p->r.spawn_detail), "%.300s",
		    fit.msg);
		proc_spawn_failed(p, E2BIG);
	} else if ((rc = proc_spawn(p, envp, err)) < 0) {
		goto out;
	}
	*out = p;
	p = NULL;
out:
	free(envp);
	proc_free(p);
	return rc;
}

bool
runner_proc_done(const struct runner_proc *p)
{
	return p == NULL || p->phase == PHASE_DONE;
}

int
runner_proc_pid(const struct runner_proc *p)
{
	return p != NULL ? p->pid : -1;
}

int
runner_proc_finish(
    struct runner_proc *p, struct runner_result *out, struct sc_err *err)
{
	int rc = 0;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (p == NULL) {
		rc = err_set(err, SC_ESOFTWARE, "runner: no attempt to finish");
		goto out;
	}
	if (p->phase == PHASE_RUNNING && !p->term_sent) {
		/* Cancelled by the caller: as if *stop had become 1. */
		p->r.interrupted = true;
		proc_signal(p, SIGTERM);
	}
	proc_settle(p);
	if (out != NULL) {
		p->r.output_bytes = p->cap.bytes;
		p->r.log_errno = p->cap.log_errno;
		*out = p->r;
		out->tail = capture_tail(&p->cap, &out->tail_len);
		if (out->tail == NULL) {
			memset(out, 0, sizeof(*out));
			rc = err_set(
			    err, SC_EOS, "out of memory for the output tail");
		}
	}
	proc_free(p);
out:
	return rc;
}

int
runner_run(
    struct runner_result *out, const struct runner_opts *o, struct sc_err *err)
{
	struct runner_proc *p = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	rc = runner_start(&p, o, err);
	if (rc < 0)
		goto out;
	while (rc >= 0 && !runner_proc_done(p))
		rc = runner_wait(&p, 1, -1, -1, err);
	if (rc < 0) {
		runner_proc_finish(p, NULL, NULL);
		goto out;
	}
	rc = runner_proc_finish(p, out, err);
out:
	return rc;
}

void
runner_result_release(struct runner_result *r)
{
	if (r == NULL)
		return;
	free(r->tail);
	memset(r, 0, sizeof(*r));
}
