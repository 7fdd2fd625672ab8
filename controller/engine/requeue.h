/*
 * requeue.h - putting a story back to pending (`storyctl requeue`,
 * docs/commands.md#requeue, and the batch breaker,
 * docs/scheduling.md#the-batch-breaker): its attempt history is kept,
 * and the strategy counts attempts again from there.
 */
#ifndef STORYCTL_REQUEUE_H
#define STORYCTL_REQUEUE_H

#include "controller/config/config.h"
#include "state/db.h"

/* st (a row of the database) back to pending with reason; written. */
int requeue_story(struct db *db, struct story_row *st, const char *reason,
    int64_t now_ms, struct sc_err *err);

/* A finished batch becomes stopped, so that `storyctl resume` runs the
 * story put back (a running or stopped batch is left as it is). */
int requeue_batch_reopen(struct db *db, const struct batch_row *batch,
    int64_t now_ms, struct sc_err *err);

/* `storyctl requeue` and POST /v1/stories/ID/requeue
 * (docs/commands.md#requeue): st, a story of batch, back to pending with
 * the stories blocked by it (*freed counts those), and the batch
 * reopened; one transaction.  SC_EUSAGE naming st's status when it is
 * not deferred, escalated or blocked. */
int requeue_by_user(struct db *db, const struct config *cfg,
    const struct batch_row *batch, struct story_row *st, int64_t now_ms,
    int *freed, struct sc_err *err);

#endif
