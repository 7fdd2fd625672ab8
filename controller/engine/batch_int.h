/*
 * batch_int.h - the state of a running batch (struct batch) and of its
 * -j N slots, which batch.c owns and attempt.c, checks.c and console.c
 * read and update.  Data only: each of those files exports its functions
 * in its own header (attempt.h, checks.h, console.h), so that the calls
 * between them run one way (docs/design.md#file-map).
 */
#ifndef STORYCTL_BATCH_INT_H
#define STORYCTL_BATCH_INT_H

#include "controller/engine/batch.h"
#include "controller/engine/notifier.h"
#include "state/db.h"
#include "state/gitstate.h"
#include "state/lock.h"
#include "state/redact.h"
#include "state/statebranch.h"
#include "strategies/breaker.h"

struct attempt_run; /* controller/engine/attempt_run.h */
struct slot_tree; /* controller/engine/batch_run_int.h */

/* SLOT_SETUP: its worktree's setup runs before the next attempt, a
 * process the loop waits on beside the agents (docs/git-work.md#setup,
 * docs/design.md#the-states-of-a-slot). */
enum slot_state { SLOT_FREE, SLOT_WAITING, SLOT_RUNNING, SLOT_SETUP };

/* One of the -j N places a story works in. */
struct slot {
	enum slot_state state;
	struct story_row *st; /* &row while the slot holds a story, else NULL */
	struct story_row row; /* the story's full row, read when the slot
			       * took it; attempt.c updates it
			       * in place and write it to the database */
	size_t idx; /* the story's entry in run_stories()'s schedule */
	const struct story *s;
	char *abspath; /* the story file this slot reads */
	char *cwd; /* where its agents run */
	char *worktree; /* its git worktree (-j N > 1), or NULL */
	int64_t until_ms; /* SLOT_WAITING: the next attempt's start */
	int next_attempt; /* SLOT_WAITING: its number */
	/* the decision that ended the story saw zero progress and only
	 * transient failures (breaker_transient_zero over the history it
	 * read), for the breaker; tz_known false: the story ended another
	 * way and the breaker reads the history itself */
	bool tz_known, tz;
	struct attempt_run *run; /* SLOT_RUNNING */
	/* the story file as last parsed: each read parses only bytes not
	 * seen before (docs/design.md#what-is-read-twice) */
	struct story_seen seen;
};

struct batch {
	const struct batch_opts *o;
	const struct config *cfg;
	struct db *db;
	struct gitstate *gs;
	struct gitevidence_watches *evw; /* the trees snapshots watch; NULL:
					  * each snapshot looks at all */
	struct state_lock *lock;
	struct batch_agent_ops ops;
	int64_t batch_id;
	int64_t started_ms; /* this controller's start (wall): a git lock
			     * file older than this is a dead one's */
	bool disabled[2]; /* D2, for the rest of this controller run */
	bool stop_batch; /* no agent left, breaker, budget */
	bool interrupted;
	char stop_reason[512];
	char logdir[512];
	char wtdir[512]; /* where -j N worktrees live */
	/* the mark of this state dir's agents, "STORYCTL_ATTEMPT=D.I."
	 * (controller/engine/agentmark.h) */
	char markpfx[96];
	struct slot *slots;
	size_t nslots;
	/* each slot's kept worktree, nslots of them once one is made
	 * (batch_run_int.h, docs/git-work.md#the-life-of-a-slots-worktree) */
	struct slot_tree *trees;
	bool trees_premade; /* batch_premake_start() was tried */
	bool line_shown; /* the live status line is on screen */
	struct breaker_state breaker;
	int64_t paused_until; /* breaker cooldown: no new attempt */
	double spend_usd; /* the batch's spend so far */
	int64_t pause_until[2]; /* usage limit: no new attempt of that
				      * agent before this (wall ms) */
	/* the state branch, with the decision that waits for its commit
	 * (group commit, statebranch_flush) */
	struct statebranch sb;
	/* notifications (batch_notify.h): the seam, and the real notifier
	 * behind it when batch_notify_open() started one */
	struct notify_ops notify;
	struct notifier *notifier;
	/* the secrets redacted by value from everything stored or sent
	 * (secrets_of_config(), docs/reliability.md#redaction); NULL: none */
	struct redact_values *secrets;
};

/* Does each story work in its own worktree on storyctl/story/<id>: with
 * -j N > 1, and always with the remote executor, which pushes that
 * branch (docs/cluster.md#how-an-attempt-runs-remotely). */
static inline bool
batch_worktrees(const struct batch *b)
{
	return b->nslots > 1 || b->cfg->executor.is_remote;
}

/* The controller's clock, wall ms. */
static inline int64_t
batch_now_ms(const struct batch *b)
{
	return b->o->clock.now_ms(b->o->clock.ctx);
}

/* The grace between SIGTERM and SIGKILL of whatever the batch runs:
 * the test's override, else policy.kill_grace_s (docs/runner.md). */
static inline int64_t
batch_kill_grace_ms(const struct batch *b)
{
	return b->o->kill_grace_ms_override >= 0
	    ? b->o->kill_grace_ms_override
	    : (int64_t)(b->cfg->policy.kill_grace_s * 1000.0);
}

/* What a gate, a reviewer and a worktree's setup share of their runner
 * options (the batch's stop and wake, the grace, a poll a second, a
 * 64 KiB tail); the caller sets the rest. */
static inline void
batch_side_opts(struct runner_opts *ro, const struct batch *b)
{
	ro->kill_grace_ms = batch_kill_grace_ms(b);
	ro->poll_interval_ms = 1000;
	ro->stop = b->o->stop;
	ro->wake_fd = b->o->wake_fd;
	ro->tail_max = 64 * 1024;
}

#endif
