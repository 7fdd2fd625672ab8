/*
 * statebranch.h - the state branch end to end (docs/state-branch.md):
 * given the database and a batch, one commit of what changed, with the
 * paths and the paging rule of the tree, the rendering of its files
 * (state/render.h) and the decision-sequence trailer by which start-up
 * tells a branch that lags the database.  The controller only says what
 * to commit and when; it passes the time (state/ reads no clock).
 */
#ifndef STORYCTL_STATEBRANCH_H
#define STORYCTL_STATEBRANCH_H

#include <stdint.h>

#include "state/db.h"
#include "state/gitstate.h"
#include "common/err.h"

/* The database and branch a controller writes, and the decision waiting
 * for its commit (group commit, below).  Fill with statebranch_init(). */
struct statebranch {
	struct db *db;
	struct gitstate *gs;
	char *pending_msg; /* NULL: none */
	int64_t pending_batch;
	struct story_row pending_st;
};

void statebranch_init(
    struct statebranch *sb, struct db *db, struct gitstate *gs);
/* Drop a pending commit (the next start catches the branch up). */
void statebranch_release(struct statebranch *sb);

/* One commit for story st of batch batch_id (progress.md, or its page,
 * and the story's JSON), with message msg ("subject\nbody"), after any
 * pending one.  now_ms: the commit's time. */
int statebranch_commit_story(struct statebranch *sb, int64_t batch_id,
    const struct story_row *st, const char *msg, int64_t now_ms,
    struct sc_err *err);
/*
 * Group commit (docs/performance.md): a decision whose database
 * transaction was committed without an fsync (db_defer_sync()) is kept
 * (a copy of st and msg) and committed to the branch by
 * statebranch_flush(), which first makes the database durable
 * (db_flush(), a no-op when a later FULL commit already did).  The loop
 * flushes right after the next attempt's row is committed and before it
 * waits for anything, so the branch never shows a decision the disk does
 * not have, and a decision followed by the next attempt costs one fsync,
 * not two.  Every other commit flushes first.
 */
int statebranch_defer_story(struct statebranch *sb, int64_t batch_id,
    const struct story_row *st, const char *msg, int64_t now_ms,
    struct sc_err *err);
int statebranch_flush(
    struct statebranch *sb, int64_t now_ms, struct sc_err *err);
/* The whole batch written afresh, with subject and body. */
int statebranch_commit_batch(struct statebranch *sb, int64_t batch_id,
    const char *subject, const char *body, int64_t now_ms, struct sc_err *err);
/* The whole batch when the branch lags the database (its tip's trailer
 * names an older decision than the database's last). */
int statebranch_sync(struct statebranch *sb, int64_t batch_id, int64_t now_ms,
    struct sc_err *err);

#endif
