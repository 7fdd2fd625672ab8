/*
 * lock.h - one controller per state dir
 * (docs/state.md#the-controller-lock).
 *
 * The lock is flock(LOCK_EX) on <state_dir>/lock, which also holds the
 * holder's pid for messages.  The kernel drops a flock lock when its
 * holder dies, however it dies, so a lock left by a SIGKILLed controller
 * is simply taken over: there is no stale-lock cleanup.  The descriptor
 * is O_CLOEXEC, so agents the controller execs never inherit the lock.
 * flock locks belong to the open file description: a second
 * lock_acquire() in the same process is refused like another process.
 */
#ifndef STORYCTL_LOCK_H
#define STORYCTL_LOCK_H

#include <stdint.h>

#include "common/err.h"

struct state_lock;

/*
 * Take the lock, creating the state dir (0700) and the lock file (0600)
 * as needed, and write our pid into it.  When another live process holds
 * it: SC_ETEMPFAIL, "another storyctl (pid N) is already working on
 * <state_dir>".  Other failures: SC_EIO (files) or SC_EOS.  On success
 * *out is the caller's, to lock_release().
 */
int lock_acquire(
    struct state_lock **out, const char *state_dir, struct sc_err *err);
/*
 * The controller stops on an error (why, e.g. the database's "disk is
 * full"): leave a note for the next controller, so that an attempt it
 * could not close is recorded as that stop and not as a crash
 * (docs/reliability.md).  Written in place, so it works on a full disk;
 * best effort.  NULL ok.  A note found at acquire that no
 * lock_clear_stop() has used yet is kept instead: a start that stops
 * before it has reconciled never hides the stop before it.
 */
void lock_note_stop(struct state_lock *l, const char *why);
/*
 * The note the previous holder left: its pid (0 when it left none) and
 * *why (owned by l).
 */
int64_t lock_prev_stop(const struct state_lock *l, const char **why);
/* The previous holder's note has been acted on: clear it.  NULL ok. */
void lock_clear_stop(struct state_lock *l);
/* Clear the pid (keeping a note) and drop the lock.  NULL ok. */
void lock_release(struct state_lock *l);

/*
 * For status displays: 0 when a live process holds the lock (*out_pid is
 * its pid, or 0 in the instant before it has written it), 1 when nobody
 * does (*out_pid = 0), a negative SC_E* code when it cannot be told.
 * The probe holds a shared lock for an instant; lock_acquire() waits out
 * such a probe rather than reporting a conflict.
 */
int lock_holder_pid(const char *state_dir, int64_t *out_pid);

#endif
