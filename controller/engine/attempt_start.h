/*
 * attempt_start.h - preparing and starting an attempt
 * (docs/design.md#life): the next attempt read back from the decision
 * stored with the last one, then its prompt, its argv, its row
 * committed as running and its agent started.  Called by attempt.c.
 */
#ifndef STORYCTL_ATTEMPT_START_H
#define STORYCTL_ATTEMPT_START_H

#include <stdint.h>

#include "common/err.h"
#include "state/db.h"
#include "strategies/progress.h"

struct story_look; /* controller/config/stories.h */

struct batch; /* controller/engine/batch_int.h */
struct slot;

/* Where the next attempt stands: its number, agent, factors and the
 * earliest time it may start (the last decision's delay). */
struct next_attempt {
	int attempt; /* absolute number */
	enum role role;
	double timeout_factor, poll_factor;
	int64_t not_before_ms;
	const struct attempt_row *prev; /* &last, NULL before the first */
	struct attempt_row last; /* owned: attempt_row_release() */
};

/* The next attempt of story st (docs/retry-strategy.md#where-the-decision-lives):
 * read back, not decided again. */
int attempt_next(struct next_attempt *nx, struct batch *b,
    const struct story_row *st, struct sc_err *err);
/* Begin attempt nx of the story in sl, whose file reads now (its items
 * are taken for the evidence, now->items NULL after): the prompt, the
 * argv, the row committed as running, then the agent started (sl
 * SLOT_RUNNING).  An agent that cannot be started settles the story as
 * escalated. */
int attempt_begin(struct batch *b, struct slot *sl,
    const struct next_attempt *nx, struct story_look *now, struct sc_err *err);

#endif
