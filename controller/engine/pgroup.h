/*
 * pgroup.h - process groups as the runner sees them through kill() and
 * /proc: whether one still has a live member, reaping the members that
 * are our children, waiting for it to empty and ending one left by a dead
 * controller (docs/runner.md#kill-sequence).
 *
 * A group is always signalled as -pgid, never through the bare pid of its
 * leader: once the leader is reaped its pid may be someone else's, while
 * a group id is not reused as long as one member lives.
 */
#ifndef STORYCTL_PGROUP_H
#define STORYCTL_PGROUP_H

#include <stdbool.h>
#include <stdint.h>

/* How often a group that should empty is looked at again (ms). */
#define PGROUP_TICK_MS 20
/* How long a group may take to vanish after SIGKILL before we stop
 * waiting (a process in uninterruptible sleep dies when it wakes). */
#define PGROUP_KILL_WAIT_MS 2000

/* Whether a live (non-zombie) process is in group pgid (> 0). */
bool pgroup_alive(int pgid);

/* Reap the exited members of group pgid (> 0) that are our children (a
 * subreaper's orphans included).  Never blocks. */
void pgroup_reap(int pgid);

/*
 * End group pgid: SIGTERM, up to grace_ms for it to go, then SIGKILL.
 * Returns 0 when no live member remains, SC_EOS when it could not be
 * signalled or survived, SC_ESOFTWARE for pgid <= 1 or the caller's own
 * group (never signalled).  Beware pid reuse: pgroup_kill_stale() is for
 * a group recorded earlier.
 */
int pgroup_kill(int pgid, int64_t grace_ms);

/* The start time of process pid (clock ticks since boot, field 22 of
 * /proc/PID/stat), or SC_EOS when it does not exist. */
int pgroup_starttime(uint64_t *out, int pid);

/*
 * pgroup_kill() for a group recorded with its leader's start time: it is
 * only signalled when the leader still is that very process, or is gone
 * while members of its group remain (a pid is not reused while a group of
 * that id exists).  Returns 0 when nothing of it is left running.
 */
int pgroup_kill_stale(int pgid, uint64_t start_ticks, int64_t grace_ms);

#endif
