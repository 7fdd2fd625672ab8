/*
 * batch_int.h - the state shared by batch.c, attempt.c and record.c.
 * Not an interface: only those three files include it.
 */
#ifndef STORYCTL_BATCH_INT_H
#define STORYCTL_BATCH_INT_H

#include "controller/batch.h"
#include "state/db.h"
#include "state/gitstate.h"
#include "state/lock.h"
#include "strategies/breaker.h"
#include "strategies/classify.h"
#include "strategies/decide.h"
#include "strategies/review.h"

enum slot_state { SLOT_FREE, SLOT_WAITING, SLOT_RUNNING };

/* One of the -j N places a story works in. */
struct slot {
	enum slot_state state;
	struct story_row *st; /* &row while the slot holds a story, else NULL */
	struct story_row row; /* the story's full row, read when the slot
			       * took it; attempt.c and record.c update it
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
};

struct batch {
	const struct batch_opts *o;
	const struct config *cfg;
	struct db *db;
	struct gitstate *gs;
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
	struct slot *slots;
	size_t nslots;
	bool line_shown; /* the live status line is on screen */
	struct breaker_state breaker;
	int64_t paused_until; /* breaker cooldown: no new attempt */
	double spend_usd; /* the batch's spend so far */
	int64_t pause_until[2]; /* usage limit: no new attempt of that
				      * agent before this (wall ms) */
	/* group commit: a decision recorded without an fsync of its own
	 * waits here for its state-branch commit (record_flush) */
	char *pending_msg; /* NULL: none */
	struct story_row pending_st;
};

/* A gate or a reviewer of an attempt (controller/checks.c). */
struct check_job {
	struct attempt_run *ar;
	char name[64];
	struct strlist argv;
	struct runner_opts ro;
	char log_path[600];
	void *handle; /* the agent seam's, NULL when not running */
	int tries;
	int64_t next_ms; /* a reviewer's retry: start again then */
	bool resolved;
	struct review_vote vote;
	struct runner_result res;
};

enum run_phase { PH_AGENT, PH_GATE, PH_REVIEW };

/* An attempt between its start and its end: everything its runner
 * options point to lives here until the agent (then its gates and its
 * reviewers) are done. */
struct attempt_run {
	struct batch *b;
	struct slot *sl;
	struct attempt_row r;
	struct strlist argv;
	char *prompt;
	char *prompt_file; /* {prompt_file}: its path, or NULL */
	char *depres;
	char *review_prompt;
	struct progress start; /* the story file when it started */
	struct progress end; /* ... and when the agent ended */
	struct runner_opts ro;
	void *handle; /* the agent seam's */
	struct runner_result agent_res;
	enum run_phase phase;
	size_t gate; /* PH_GATE: which one runs */
	struct check_job *jobs; /* PH_GATE: one; PH_REVIEW: a reviewer each */
	size_t njobs;
	int64_t poll_ms;
	int64_t last_read_ms;
	int token; /* tasks checked, for stall detection */
	struct sc_err err; /* what a callback failed with */
	int rc;
};

/* checks.c */
/* The agent ended with every box checked: start the first gate, or the
 * review panel when there is no gate.  0 with *none set when the config
 * has neither. */
int checks_begin(
    struct batch *b, struct attempt_run *ar, bool *none, struct sc_err *err);
/* Advance the gates and reviewers of ar after a wait: collect what is
 * done, start what is due.  *verdict: 0 still checking, 1 passed,
 * -1 failed (ar->r.gate and friends say which and why). */
int checks_service(
    struct batch *b, struct attempt_run *ar, int *verdict, struct sc_err *err);
/* The handles ar's checks wait on, and the next retry time. */
void checks_handles(
    const struct attempt_run *ar, void **handles, size_t *nh, int64_t *next_ms);
/* Kill and free ar's checks. */
void checks_free(struct batch *b, struct attempt_run *ar);
/* What the next attempt's prompt says about prev's failed gate or review
 * ("" when none failed).  *out malloc'd or NULL. */
char *checks_note(const struct attempt_row *prev);

/* attempt.c */
/* Slot sl has just been given a story (sl->st, sl->s, sl->abspath,
 * sl->cwd set): settle it when there is nothing to run, or work out its
 * next attempt and start it (SLOT_RUNNING) or wait for it (SLOT_WAITING).
 * Sets b->stop_batch when no new attempt may start. */
int slot_prepare(struct batch *b, struct slot *sl, struct sc_err *err);
/* SLOT_WAITING whose time has come: start the attempt. */
int slot_start(struct batch *b, struct slot *sl, struct sc_err *err);
/* SLOT_RUNNING after a wait: collect the agent, its gates and its
 * reviewers as they finish; once the attempt is over, classify, decide,
 * record, then prepare the story's next attempt, or free the slot when
 * the story is final (or the batch is stopping). */
int slot_service(struct batch *b, struct slot *sl, struct sc_err *err);
/* The handles a running slot waits on, and its next timer. */
void slot_handles(
    const struct slot *sl, void **handles, size_t *nh, int64_t *next_ms);
/* The attempt row of a running slot (live progress). */
const struct attempt_row *slot_attempt(const struct slot *sl);
/* Kill and forget a running attempt (on an error: start-up reconciles
 * its row later). */
void slot_abandon(struct batch *b, struct slot *sl);
/* Decide after an attempt whose outcome is already in r (r->outcome, the
 * progress fields), fill r's decision fields and st's status, record
 * both in one transaction and commit the state branch.  *transient_zero
 * (when not NULL): breaker_transient_zero() over the history the
 * decision read, so that the breaker need not read it again. */
int batch_decide_and_record(bool *transient_zero, struct batch *b,
    struct attempt_row *r, struct story_row *st,
    const struct classification *cls, int64_t hint_ms, struct sc_err *err);
/* Close a story without running anything (invalid, blocked, already
 * done): status, reason, an event, a state-branch commit. */
int batch_settle(struct batch *b, struct story_row *st,
    enum story_status status, const char *reason, const char *kind,
    struct sc_err *err);
/* Did story st end with zero progress and only transient failures? */
int batch_transient_zero(
    struct batch *b, const struct story_row *st, bool *out, struct sc_err *err);
/* The attempts of a story the strategy sees (since its last requeue). */
int batch_history(struct batch *b, struct attempt_row **rows, size_t *n,
    size_t *first, const struct story_row *st, struct sc_err *err);

/* record.c */
/* One commit on the state branch for story st (progress.md and
 * stories/<id>.json), with message msg, after any pending one. */
int record_commit_story(struct batch *b, const struct story_row *st,
    const char *msg, struct sc_err *err);
/* The same commit without flushing the pending one first. */
int record_commit_story_now(struct batch *b, const struct story_row *st,
    const char *msg, struct sc_err *err);
/*
 * Group commit (docs/performance.md): a decision whose database
 * transaction was committed without an fsync (db_defer_sync()) is
 * kept (a copy of st and msg) and committed to the branch by
 * record_flush(), which first makes the database durable (db_flush(), a
 * no-op when a later FULL commit already did).  The loop calls
 * record_flush() right after the next attempt's row is committed and
 * before it waits for anything, so the branch never shows a decision the
 * disk does not have, and a decision followed by the next attempt costs
 * one fsync, not two.  Every other state-branch commit flushes first.
 */
int record_defer_story(struct batch *b, const struct story_row *st,
    const char *msg, struct sc_err *err);
int record_flush(struct batch *b, struct sc_err *err);
/* Commit the whole batch with subject and body. */
int record_commit_batch(
    struct batch *b, const char *subject, const char *body, struct sc_err *err);
/* Commit the whole batch when the branch lags the database. */
int record_sync(struct batch *b, struct sc_err *err);
/* Print a line (clearing the live status line first). */
void record_line(struct batch *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Redraw the live status line (terminal only): every busy slot. */
void record_status_line(struct batch *b);
void record_clear_line(struct batch *b);

#endif
