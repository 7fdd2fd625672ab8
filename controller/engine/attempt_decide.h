/*
 * attempt_decide.h - deciding after an attempt and recording the
 * decision (docs/retry-strategy.md#where-the-decision-lives): the
 * story's history read once, decide() called once, the attempt and the
 * story written in one transaction, then the state branch.
 */
#ifndef STORYCTL_ATTEMPT_DECIDE_H
#define STORYCTL_ATTEMPT_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "state/db.h"
#include "strategies/classify.h"
#include "strategies/policy.h"

struct batch; /* controller/engine/batch_int.h */
struct evidence_note; /* state/db_evidence.h */

/* Decide after an attempt whose outcome is already in r (r->outcome, the
 * progress fields), fill r's decision fields and st's status, record
 * both and the attempt's evidence ev (NULL: none) in one transaction and
 * commit the state branch (deferred: group commit, state/statebranch.h).
 * *transient_zero (when not NULL): breaker_transient_zero() over the
 * history the decision read, so that the breaker need not read it
 * again. */
int attempt_decide_record(bool *transient_zero, struct batch *b,
    struct attempt_row *r, struct story_row *st,
    const struct classification *cls, int64_t hint_ms,
    const struct evidence_note *ev, struct sc_err *err);
/* Close a story without running anything (invalid, blocked, already
 * done): status, reason, an event, a state-branch commit. */
int attempt_settle(struct batch *b, struct story_row *st,
    enum story_status status, const char *reason, const char *kind,
    struct sc_err *err);
/* The story's effective policy into *out: the config's with the batch's
 * and the story's overrides set over HTTP applied
 * (docs/api.md#retry-policy).  An override that no longer fits the
 * config (an agent renamed since) is left out, and said on the console
 * when say is true. */
int attempt_story_policy(struct policy *out, struct batch *b,
    const struct story_row *st, bool say, struct sc_err *err);
/* Did story st end with zero progress and only transient failures? */
int attempt_transient_zero(
    struct batch *b, const struct story_row *st, bool *out, struct sc_err *err);

#endif
