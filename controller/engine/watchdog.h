/*
 * watchdog.h - the process that ends the agents when the controller dies
 * (docs/runner.md#when-the-controller-dies).
 *
 * One helper process per controller, "storyctl-watch", forked (no exec)
 * on first use, in a session of its own so that a kill of the
 * controller's whole process group leaves it alive.  The controller tells
 * it over a socketpair which agents are live; when the controller dies,
 * however it dies, the kernel closes the controller's end, and the
 * watchdog ends every agent it was told about: SIGTERM to the group, the
 * grace, SIGKILL.  It is the only thing that ends the agents then (the
 * agents have no parent-death signal: posix_spawn cannot set one, see
 * controller/engine/spawn.h).
 *
 * An entry is registered before the agent is spawned, keyed by the inode
 * of the agent's output pipe, and gets its process group once the spawn
 * returned.  A controller that dies in between (the agent may already
 * run) leaves an entry without a group: the watchdog then looks in /proc
 * for the processes holding that pipe, which only the new agent can hold,
 * and ends them and the groups they lead.
 *
 * The entries are owned by the caller and registered by address; the
 * module keeps them in a list (no allocation) so that a replacement
 * watchdog is told about every live one.  A process forked from the
 * controller does not inherit them.  Not thread-safe.
 */
#ifndef STORYCTL_WATCHDOG_H
#define STORYCTL_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

struct watchdog_entry {
	int pgid; /* the agent's group; 0 while it is being spawned */
	uint64_t pipe_ino; /* the inode of its output pipe (the key) */
	int64_t grace_ms; /* SIGTERM -> SIGKILL */
	/* private */
	struct watchdog_entry *next;
	bool on;
};

/*
 * Start the watchdog unless ours runs, and tell a new one about every
 * registered entry.  Cheap when it runs (one waitpid(WNOHANG)).  SC_EOS
 * when it cannot be started (socketpair or fork failed), err filled
 * (err may be NULL).
 */
int watchdog_ensure(struct sc_err *err);

/*
 * Our end of the watchdog's socket, or -1 when none runs: it polls
 * readable (hung up) once the watchdog has died, and watchdog_ensure()
 * then starts another one.  The watchdog itself never sends anything.
 */
int watchdog_fd(void);

/* Register e (pipe_ino and grace_ms set, pgid 0 or known) and tell the
 * watchdog.  e must stay valid until watchdog_remove(). */
void watchdog_add(struct watchdog_entry *e);

/* e's agent has been spawned with group pgid: tell the watchdog. */
void watchdog_set_group(struct watchdog_entry *e, int pgid);

/* Forget e (its group is gone, or it was never spawned); a no-op for an
 * entry that is not registered. */
void watchdog_remove(struct watchdog_entry *e);

#endif
