/*
 * spawn.h - start one agent process with posix_spawn
 * (docs/runner.md#starting-an-agent).
 *
 * The agent gets a process group of its own (pgid = pid), default signal
 * dispositions and an empty signal mask whatever the controller has,
 * stdin from /dev/null, stdout and stderr on the descriptor it is given,
 * no other descriptor of ours, and its working directory.  Its program is
 * looked up as execvp() would, but in the agent's PATH (its own env may
 * set another one), never through a shell string.  posix_spawnp() would
 * search the controller's PATH instead: that search loop is the one piece
 * still written here (spawn_start()).
 *
 * glibc's posix_spawn borrows our address space until the child execs
 * (clone(CLONE_VM|CLONE_VFORK)), so no page table is copied whatever the
 * controller's size.  What it cannot do, and what the hand-made clone
 * child it replaces did, is PR_SET_PDEATHSIG: an agent is no longer
 * killed by the kernel when the controller dies.  The watchdog does it
 * instead (controller/engine/watchdog.h): it ends the agent's whole group after
 * the grace, which the death signal never did for the agent's children;
 * it is told about an agent before the spawn, so a controller dying in
 * the middle of one is covered too (test_runner: test_controller_death,
 * test_spawn_window_death, which fails when the watchdog does not look
 * for the pipe's holders; tests/e2e/test_watchdog.sh).  The cost: only
 * when the controller and its watchdog are killed at the same
 * instant (pkill -9 storyctl matches both) does an agent now outlive
 * them, where the death signal used to end the agent itself (never its
 * children); the next run's reconcile ends that group
 * (pgroup_kill_stale()).
 *
 * Under valgrind the clone runs as a fork: posix_spawn cannot report a
 * failed exec then.  The program's lookup below finds a missing or
 * non-executable file before any spawn, so only a file that is neither a
 * binary nor a #! script (ENOEXEC, run through /bin/sh) shows there as an
 * agent that exited 127.
 */
#ifndef STORYCTL_SPAWN_H
#define STORYCTL_SPAWN_H

#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/*
 * The agent's output pipe: *rd for us (non-blocking: one loop serves
 * every agent), *wr for the agent (blocking), both close-on-exec and above
 * fd 2 (the spawn's dup2() onto 0, 1 and 2 cannot clobber them); *ino is
 * its inode, which only this agent will hold (the watchdog's key).
 * SC_EOS when it cannot be made; nothing is left open then.
 */
int spawn_pipe(int *rd, int *wr, uint64_t *ino, struct sc_err *err);

struct spawn_req {
	const char *const *argv; /* NULL-terminated, argv[0] non-NULL */
	char *const *envp; /* the agent's environment (agentenv_build) */
	const char *cwd; /* its working directory; NULL = ours */
	int out_fd; /* > 2: becomes its stdout and stderr */
	/* > 2: becomes its stdin (a notify command's event,
	 * docs/notifications.md#delivery); otherwise /dev/null */
	int in_fd;
	/* > 2: becomes its descriptor 3, the one descriptor of ours it
	 * keeps (the seccomp program bubblewrap reads,
	 * docs/sandbox.md#the-system-calls); otherwise none */
	int keep_fd;
};

/*
 * Start the agent rq describes.  Returns 0 with *pid > 0 (also its
 * process group) once it runs; 0 with *pid 0 and *exec_errno set when
 * its program could not be executed (ENOENT when nothing was found,
 * EACCES, ENOEXEC, ENAMETOOLONG ...: the agent's problem, no process is
 * left); negative when it could not be tried, err filled: SC_EOS when
 * cwd cannot be entered ("chdir"), /dev/null cannot be opened, or the
 * system is out of memory or processes (ENOMEM, EAGAIN), SC_ESOFTWARE for
 * a bad request.
 *
 * The program: argv[0] with a '/' is executed as it is (relative to cwd);
 * otherwise each element of envp's PATH (/bin:/usr/bin when it has none;
 * an empty element is cwd) is tried in turn with execvp()'s rules:
 * ENOENT, ENOTDIR, EACCES and the like go on to the next, EACCES is
 * remembered and reported if nothing ran, a file without #! and not a
 * binary (ENOEXEC) runs through /bin/sh.
 */
int spawn_start(pid_t *pid, int *exec_errno, const struct spawn_req *rq,
    struct sc_err *err);

#endif
