/*
 * runner.h - run one agent attempt as a supervised process group
 * (SPEC section 3).  docs/runner.md describes the process model.
 *
 * The agent is started with fork + execvp (never a shell) in its own
 * process group, in opts->cwd, with stdin from /dev/null and stdout and
 * stderr on one pipe.  Everything it prints goes to the per-attempt log
 * file; only the last tail_max bytes are kept in memory.  The attempt ends
 * when the agent exits, at timeout_ms, after stall_timeout_ms without
 * output or progress, or when *stop is raised; in every case the whole
 * process group is terminated (SIGTERM, then SIGKILL after kill_grace_ms)
 * before runner_run() returns, so no descendant left in the group
 * survives an attempt.
 *
 * The runner installs no signal handlers in the calling process.  It
 * changes two things about it, once: it becomes a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so that the agent's orphaned descendants are
 * reparented to it and reaped promptly, and it gets one helper child, the
 * watchdog ("storyctl-watch"), which kills the live agent groups if the
 * controller dies without cleaning up (PR_SET_PDEATHSIG only reaches the
 * agent itself).  The runner only ever reaps its own child by pid, the
 * members of the agent's process group (waitid P_PGID) and the watchdog
 * by its pid; other code must not waitpid(-1) either.
 */
#ifndef STORYCTL_RUNNER_H
#define STORYCTL_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strategies/err.h"
#include "strategies/strlist.h"

struct runner_opts {
	const char *const *argv; /* expanded, NULL-terminated */
	const char *cwd; /* the repo root; NULL = unchanged */
	const struct strlist *env_add; /* "KEY=VALUE" added or overriding
	                                * (last wins); may be NULL */
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
	void *ctx;
	/* Set asynchronously by the controller's SIGINT/SIGTERM handler:
	 * 1 = stop gracefully (SIGTERM the group, SIGKILL after the grace),
	 * 2 = kill at once.  May be NULL.  Already set at the call, the
	 * agent is started and stopped at once: check before calling. */
	const volatile sig_atomic_t *stop;
	/* Readable when *stop changes (self-pipe read end), or -1.  The
	 * runner reads (drains) it when readable; make it non-blocking.
	 * Without it, *stop is checked at least every 100 ms. */
	int wake_fd;
	size_t tail_max; /* bytes of tail kept (64 KiB if 0) */
};

struct runner_result {
	int exit_code; /* -1 when killed by a signal */
	int term_signal; /* 0 when it exited */
	bool timed_out; /* killed at timeout_ms */
	bool stalled; /* killed after stall_timeout_ms of silence */
	bool interrupted; /* killed because *stop was raised */
	bool spawn_failed; /* exec failed: exit_code 127 (ENOENT) or 126 */
	int spawn_errno; /* errno of the failed exec, else 0 */
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
 * '=', SC_EIO when the log file cannot be opened, SC_EOS when a pipe,
 * fork or setup step (such as chdir to cwd) failed; out is then empty.
 */
int runner_run(
    struct runner_result *out, const struct runner_opts *o, struct sc_err *err);

/* Free what out owns and zero it; NULL is a no-op. */
void runner_result_release(struct runner_result *r);

/*
 * Kill a process group left by a dead controller: SIGTERM, up to grace_ms
 * for it to go, then SIGKILL.  Returns 0 when no live (non-zombie) member
 * remains, SC_EOS when it could not be signalled or survived, and
 * SC_ESOFTWARE for pgid <= 1 or the caller's own group (never signalled).
 * Beware pid reuse: prefer runner_kill_stale_group() for a recorded pgid.
 */
int runner_kill_group(int pgid, int64_t grace_ms);

/*
 * The start time of process pid (clock ticks since boot, field 22 of
 * /proc/PID/stat): record it with the pid so that a later controller can
 * tell its own agent from an unrelated process that got the same pid.
 * Returns 0, or SC_EOS when the process does not exist.
 */
int runner_proc_starttime(uint64_t *out, int pid);

/*
 * runner_kill_group() for a group recorded earlier with the leader's
 * start time: the group is only signalled when its leader still is that
 * very process, or is gone while members of its group remain (a pid is
 * never reused while a process group of that id exists).  Returns 0 when
 * nothing of that agent is left running.
 */
int runner_kill_stale_group(int pgid, uint64_t start_ticks, int64_t grace_ms);

/* The environment variables removed from every agent's environment
 * (NULL-terminated): they make agent CLIs refuse to nest or leak the
 * calling session's state.  env_add can set them again explicitly. */
extern const char *const runner_scrubbed_env[];

#endif
