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

struct batch {
	const struct batch_opts *o;
	const struct config *cfg;
	struct db *db;
	struct gitstate *gs;
	struct state_lock *lock;
	int64_t batch_id;
	bool disabled[2]; /* D2, for the rest of this controller run */
	bool stop_batch; /* no agent left */
	bool interrupted;
	char stop_reason[512];
	char logdir[512];
	/* the live status line */
	bool line_shown;
	const char *cur_story;
	int cur_attempt;
	enum role cur_role;
	int cur_done, cur_total;
	int64_t cur_start_ms;
	int64_t last_poll_ms;
	int64_t attempt_id;
	const char *cur_abspath;
	struct breaker_state breaker;
	double spend_usd;            /* the batch's spend so far */
	int64_t pause_until[2];      /* usage limit: no new attempt of that
				      * agent before this (wall ms) */
};



/* attempt.c */
/* Run story s (its row is st) until it reaches a final status, the batch
 * must stop, or the controller is interrupted. */
int batch_story(struct batch *b, struct story_row *st, const struct story *s,
    struct sc_err *err);
/* Decide after an attempt whose outcome is already in r (r->outcome, the
 * progress fields), fill r's decision fields and st's status, record
 * both in one transaction and commit the state branch. */
int batch_decide_and_record(struct batch *b, struct attempt_row *r,
    struct story_row *st, const struct classification *cls, int64_t hint_ms,
    struct sc_err *err);
/* Close a story without running anything (invalid, blocked, already
 * done): status, reason, an event, a state-branch commit. */
int batch_settle(struct batch *b, struct story_row *st,
    enum story_status status, const char *reason, const char *kind,
    struct sc_err *err);
/* Did story st end with zero progress and only transient failures? */
int batch_transient_zero(struct batch *b, const struct story_row *st,
    bool *out, struct sc_err *err);
/* The attempts of a story the strategy sees (since its last requeue). */
int batch_history(struct batch *b, struct attempt_row **rows, size_t *n,
    size_t *first, const struct story_row *st, struct sc_err *err);

/* record.c */
/* One commit on the state branch for story st (progress.md and
 * stories/<id>.json), with message msg. */
int record_commit_story(struct batch *b, const struct story_row *st,
    const char *msg, struct sc_err *err);
/* Commit the whole batch with subject and body. */
int record_commit_batch(
    struct batch *b, const char *subject, const char *body, struct sc_err *err);
/* Commit the whole batch when the branch lags the database. */
int record_sync(struct batch *b, struct sc_err *err);
/* Print a line (clearing the live status line first). */
void record_line(struct batch *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Redraw the live status line (terminal only). */
void record_status_line(struct batch *b, const char *waiting_for);
void record_clear_line(struct batch *b);

#endif
