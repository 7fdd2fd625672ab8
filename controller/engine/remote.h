/*
 * remote.h - the remote executor on the controller's side
 * (docs/cluster.md#how-an-attempt-runs-remotely): the story's branch
 * pushed before an attempt, the agent's argv wrapped in the launch
 * prefix and `storyctl job`, the job cancelled when the attempt was cut
 * short, and the branch fetched back into the story's worktree after
 * it.  Every call is a no-op with executor.kind "local".
 */
#ifndef STORYCTL_REMOTE_H
#define STORYCTL_REMOTE_H

#include "common/err.h"
#include "controller/engine/runner.h"

#include "common/model.h"

struct batch;
struct slot;
struct strlist;

/* Commit what the story's worktree holds on its branch and push the
 * branch to the remote (forced: the controller's branch is the truth).
 * SC_EIO when the remote cannot be reached. */
int remote_push(struct batch *b, struct slot *sl, struct sc_err *err);

/* Replace the agent's argv with launch + ["storyctl", "job", ...,
 * "--", agent argv...] for attempt number attempt (docs/cluster.md#storyctl-job). */
int remote_wrap(struct strlist *argv, const struct batch *b,
    const struct slot *sl, int attempt, enum role role, struct sc_err *err);

/* After the launcher ended: when it was cut short (timeout, stall,
 * stop, a signal) run the cancel command; then fetch the story's branch
 * and lay its files into the worktree, uncommitted, as if the agent had
 * worked there.  Failures are printed, never fatal: the worktree then
 * keeps the last pushed state. */
void remote_collect(struct batch *b, struct slot *sl, int attempt,
    const struct runner_result *res, const char *log_path);

/* Run the cancel command for story_id's attempt (best effort, bounded). */
void remote_cancel(
    struct batch *b, const char *story_id, int attempt, const char *log_path);

#endif
