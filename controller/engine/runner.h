/*
 * runner.h - run agent attempts as supervised process groups
 * (docs/runner.md), one at a time (runner_run()) or several at once from
 * one single-threaded loop (runner_start() / runner_wait() /
 * runner_proc_finish(); run -j N, docs/scheduling.md).
 *
 * Each agent is started with posix_spawn (controller/engine/spawn.h), its
 * program looked up as execvp would in the agent's PATH (never a shell),
 * in its own process group, in opts->cwd, with stdin from /dev/null and
 * stdout and stderr on one pipe, and the environment of agentenv.h.
 * Everything it prints goes to the per-attempt log file; only the last
 * tail_max bytes are kept in memory.  The attempt ends when the agent
 * exits, at timeout_ms, after stall_timeout_ms without output or
 * progress, or when *stop is raised; in every case the whole process
 * group is terminated (SIGTERM, then SIGKILL after kill_grace_ms) before
 * the attempt counts as done, so no descendant left in the group
 * survives an attempt.
 *
 * The runner installs no signal handlers in the calling process.  It
 * changes two things about it, once: it becomes a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so that the agents' orphaned descendants are
 * reparented to it and reaped promptly, and it gets one helper child, the
 * watchdog ("storyctl-watch", controller/engine/watchdog.h), which ends every
 * live agent group if the controller dies without cleaning up: it is
 * what makes the controller's death take its agents with it.  The runner
 * only ever reaps its own children by pid, the members of its agents'
 * process groups (waitid P_PGID) and the watchdog by its pid; other code
 * must not waitpid(-1) either.
 *
 * Not thread-safe: call everything from one thread.
 */
#ifndef STORYCTL_RUNNER_H
#define STORYCTL_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strlist.h"

struct runner_opts {
	const char *const *argv; /* expanded, NULL-terminated */
	const char *cwd; /* the repo root; NULL = unchanged */
	const struct strlist *env_add; /* "KEY=VALUE" added or overriding
	                                * (last wins); may be NULL */
	/* "STORYCTL_ATTEMPT=…", the attempt's mark in the agent's
	 * environment (controller/engine/agentmark.h); NULL none */
	const char *mark;
	const char *log_path; /* per-attempt log: O_APPEND, mode 0600,
	                                * symlinks refused; NULL = no log */
	int64_t timeout_ms; /* 0 = none */
	int64_t stall_timeout_ms; /* 0 = off: no output AND no progress
	                                * change for that long */
	int64_t kill_grace_ms; /* SIGTERM -> SIGKILL grace */
	int64_t poll_interval_ms; /* on_poll period (1000 when <= 0) */
	/* Called every poll_interval_ms while the agent runs; may be NULL.
	 * Returns a progress token (e.g. tasks completed); a change of the
	 * token counts as activity for stall detection.  The first call only
	 * sets the baseline. */
	int (*on_poll)(void *ctx, int64_t elapsed_ms, int pgid);
	/* Called once right after the child started (exec succeeded), to
	 * record the pid durably; may be NULL.  A negative return aborts: the
	 * group is killed at once and runner_run() returns that code without
	 * touching err (the callback reports through its ctx). */
	int (*on_start)(void *ctx, int pid);
	/* Called right after each on_poll with the output's last tail_max
	 * bytes in order (valid during the call); may be NULL.  Returning
	 * true ends the attempt as a dead end (docs/classification.md
	 * #dead-ends): dead_end is set, SIGTERM to the group, SIGKILL after
	 * the grace. */
	bool (*on_tail)(void *ctx, const char *tail, size_t len);
	void *ctx;
	/* Set asynchronously by the controller's SIGINT/SIGTERM handler:
	 * 1 = stop gracefully (SIGTERM the group, SIGKILL after the grace),
	 * 2 = kill at once.  May be NULL.  Already set at the call, the
	 * agent is started and stopped at once: check before calling.
	 * Several attempts may share one flag (one Ctrl-C stops them all)
	 * or have one each (to stop one of them). */
	const volatile sig_atomic_t *stop;
	/* Readable when *stop changes (self-pipe read end), or -1.  The
	 * runner reads (drains) it when readable; make it non-blocking.
	 * Without it, *stop is checked at least every 100 ms (and at every
	 * runner_wait() call). */
	int wake_fd;
	size_t tail_max; /* bytes of tail kept (64 KiB if 0) */
	/* also copy the output to our stdout as it comes (storyctl job,
	 * docs/cluster.md#storyctl-job) */
	bool echo_stdout;
	/* > 2: handed to the agent as its descriptor 3 (a confined agent's
	 * seccomp program, docs/sandbox.md#the-system-calls); 0 = none */
	int keep_fd;
};

struct runner_result {
	int exit_code; /* -1 when killed by a signal */
	int term_signal; /* 0 when it exited */
	bool timed_out; /* killed at timeout_ms */
	bool stalled; /* killed after stall_timeout_ms of silence */
	bool dead_end; /* ended because on_tail said it cannot succeed */
	bool interrupted; /* killed because *stop was raised */
	bool spawn_failed; /* exec failed: exit_code 127 (ENOENT) or 126;
	                      * no process is left and pid is 0 */
	int spawn_errno; /* errno of the failed exec, else 0 */
	/* Why the exec was not even tried, or "": the argv or the
	 * environment is over execve's limits (spawn_errno E2BIG). */
	char spawn_detail[320];
	int log_errno; /* first error writing the log (e.g. ENOSPC),
	                      * else 0; output kept flowing regardless */
	int64_t duration_ms; /* start to the agent's exit (CLOCK_MONOTONIC) */
	uint64_t output_bytes;
	char *tail; /* owned, NUL-terminated: the last tail_max
	                      * bytes of stdout+stderr (never NULL after 0) */
	size_t tail_len;
	int pid; /* also the process group id */
};

/*
 * Run one attempt.  Returns 0 once the agent has ended and its group is
 * gone (whatever its exit status, including spawn_failed); out is then
 * filled and must be released with runner_result_release().  Returns a
 * negative code when the attempt could not be supervised at all:
 * SC_ESOFTWARE for an empty argv, SC_EDATA for an env_add entry without
 * '=', SC_EIO when the log file cannot be opened, SC_EOS when the
 * watchdog, a pipe, the spawn or a setup step (such as entering cwd)
 * failed, or the system is out of memory or processes; out is then
 * empty.
 * Exactly runner_start(), runner_wait() on it alone until it is done,
 * runner_proc_finish().
 */
int runner_run(
    struct runner_result *out, const struct runner_opts *o, struct sc_err *err);

/*
 * The asynchronous API: one running attempt, opaque.  A caller supervises
 * any number of them from one loop:
 *
 *	runner_start() each;
 *	while some are not finished:
 *		runner_wait(the unfinished ones, ...);
 *		for each p with runner_proc_done(p): runner_proc_finish(p, ...);
 *
 * Nothing happens to an attempt (no output is read, no timer fires, no
 * callback runs, nothing is reaped) outside runner_wait() and
 * runner_proc_finish(), so call runner_wait() again promptly: an agent
 * whose pipe is full blocks until then.
 */
struct runner_proc;

/*
 * Start the agent that o describes.  o and everything it points to must
 * stay valid and unchanged until runner_proc_finish().  On success (0),
 * *out is a new attempt, owned by the caller until runner_proc_finish();
 * on_start has been called.  A failed exec is not an error: *out is then
 * already done, with spawn_failed set.  Errors are those of runner_run();
 * a negative on_start return is returned after the group was killed at
 * once and cleared, err untouched.  On any error *out is NULL and nothing
 * is left running.  Blocks only until exec succeeded or failed.
 */
int runner_start(
    struct runner_proc **out, const struct runner_opts *o, struct sc_err *err);

/*
 * Supervise procs[0..n) (each started, not yet finished) until at least
 * one of them has moved on, timeout_ms has passed, or wake_fd is readable.
 * One call services every attempt that is ready: reads its output into
 * its log and tail, calls its on_poll when due, enforces its *stop,
 * timeout, stall and kill grace, reaps it and clears its group.  "Moved
 * on": output was read, on_poll was called, a signal went out, the agent
 * exited or its group emptied.  A signal that interrupts the wait (EINTR)
 * also returns, so that the caller can look at its flags.
 *
 * wake_fd (-1 = none), e.g. the read end of the caller's self-pipe, must
 * be non-blocking; it is read (drained) when readable.  Each o->wake_fd
 * is polled and drained the same way while its attempt runs (deduplicated
 * with wake_fd): pass the same self-pipe to both, or check *stop yourself.
 * A wake_fd at EOF makes every call return at once.
 *
 * timeout_ms < 0: no limit but the attempts' own timers.  Never blocks
 * longer than the earliest deadline of any attempt.  n may be 0 (then it
 * only sleeps until timeout_ms or wake_fd; not both absent).
 *
 * Returns how many of procs[0..n) are done (>= 0): an attempt already
 * done makes it return at once, so finish the done ones (or leave them
 * out) before waiting again.  Negative: SC_ESOFTWARE for a NULL entry or
 * nothing to wait for, SC_EOS when poll() failed or memory ran out; the
 * attempts are unchanged and still need finishing.
 *
 * Callbacks (on_poll) run inside runner_wait() and must not call
 * runner_wait() or runner_proc_finish() themselves.
 */
int runner_wait(struct runner_proc *const *procs, size_t n, int64_t timeout_ms,
    int wake_fd, struct sc_err *err);

/* Whether the attempt has ended and its group is gone: its result is
 * ready for runner_proc_finish().  True for NULL. */
bool runner_proc_done(const struct runner_proc *p);

/* The agent's pid, which is also its process group id (-1 for NULL, 0
 * when its program could not be executed). */
int runner_proc_pid(const struct runner_proc *p);

/*
 * Collect the result of p into out (as runner_run() fills it: release it
 * with runner_result_release(); out may be NULL to discard it) and free
 * p, which is invalid afterwards.  p should be done; if it still runs it
 * is stopped first, as if *stop had become 1 (interrupted is set, SIGTERM
 * to the group, SIGKILL after kill_grace_ms), blocking until its group is
 * gone.  Returns 0, SC_ESOFTWARE for a NULL p, or SC_EOS when the tail
 * could not be allocated (out is then empty; p is freed either way).
 */
int runner_proc_finish(
    struct runner_proc *p, struct runner_result *out, struct sc_err *err);

/* Free what out owns and zero it; NULL is a no-op. */
void runner_result_release(struct runner_result *r);

#endif
