/*
 * attempt.h - one story in one slot, attempt after attempt
 * (docs/design.md#life): what batch.c calls to start, supervise and
 * close a slot's attempts and to record their decisions.
 */
#ifndef STORYCTL_ATTEMPT_H
#define STORYCTL_ATTEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state/db.h"
#include "strategies/classify.h"
#include "common/err.h"

struct batch; /* controller/batch_int.h */
struct slot;

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
/* Kill and forget a running attempt (on an error: start-up reconciles
 * its row later). */
void slot_abandon(struct batch *b, struct slot *sl);

/* Decide after an attempt whose outcome is already in r (r->outcome, the
 * progress fields), fill r's decision fields and st's status, record
 * both in one transaction and commit the state branch (deferred: group
 * commit, state/statebranch.h).  *transient_zero (when not NULL):
 * breaker_transient_zero() over the history the decision read, so that
 * the breaker need not read it again. */
int attempt_decide_record(bool *transient_zero, struct batch *b,
    struct attempt_row *r, struct story_row *st,
    const struct classification *cls, int64_t hint_ms, struct sc_err *err);
/* Close a story without running anything (invalid, blocked, already
 * done): status, reason, an event, a state-branch commit. */
int attempt_settle(struct batch *b, struct story_row *st,
    enum story_status status, const char *reason, const char *kind,
    struct sc_err *err);
/* Did story st end with zero progress and only transient failures? */
int attempt_transient_zero(
    struct batch *b, const struct story_row *st, bool *out, struct sc_err *err);

#endif
