/*
 * agentmark.h - the mark every agent carries, so that the next start
 * can end what a dead controller started even when its pid never
 * reached the database (docs/runner.md#the-mark).
 *
 * The mark is an environment variable, STORYCTL_ATTEMPT=<dev>.<ino>.<id>:
 * the state dir's device and inode (which controller's agents: one per
 * state dir, as the lock says) and the attempt row's id (which attempt).
 * It is set in the agent's environment before the spawn, so it exists
 * from the agent's first instruction, and every process the agent
 * starts inherits it unless it clears its environment on purpose.  It
 * outlives the controller: that is the point.
 */
#ifndef STORYCTL_AGENTMARK_H
#define STORYCTL_AGENTMARK_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define AGENTMARK_NAME "STORYCTL_ATTEMPT"
/* "STORYCTL_ATTEMPT=" + two 20-digit numbers, dots, an id, NUL */
#define AGENTMARK_MAX 96

/*
 * The prefix every mark of state_dir starts with, "STORYCTL_ATTEMPT=D.I."
 * into buf (AGENTMARK_MAX bytes).  SC_EIO, naming the dir, when it
 * cannot be looked at.
 */
int agentmark_prefix(
    char *buf, size_t len, const char *state_dir, struct sc_err *err);

/* The mark of attempt row id: prefix followed by the id, into buf. */
void agentmark_format(char *buf, size_t len, const char *prefix, int64_t id);

/*
 * End every process on this machine whose environment carries a mark
 * with prefix (ours excepted), and, for each one that leads a process
 * group (an agent: it was started as the leader of its own), that whole
 * group, so that a grandchild that cleared its environment but stayed in
 * the group goes too.  SIGTERM first; whatever still carries the mark
 * after grace_ms gets SIGKILL; new processes forked meanwhile are found
 * by the next look.  *ended is how many marked processes were found;
 * *left how many were still there when it gave up (grace_ms + 2 s).
 * Never fails: a process it may not read or signal is not ours.
 */
void agentmark_end_all(
    int *ended, int *left, const char *prefix, int64_t grace_ms);

#endif
