/*
 * attempt.h - one story in one slot, attempt after attempt
 * (docs/design.md#life): what batch*.c call to start, supervise and
 * close a slot's attempts.  The decision and its record are
 * attempt_decide.h's.
 */
#ifndef STORYCTL_ATTEMPT_H
#define STORYCTL_ATTEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
/* what the batch also calls to close a story and for its breaker */
#include "controller/engine/attempt_decide.h"

struct batch; /* controller/engine/batch_int.h */
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

#endif
