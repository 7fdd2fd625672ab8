/*
 * checks.h - what an attempt must pass after it checked every box: its
 * gates, then its review panel (docs/verification.md), run as jobs of
 * the batch's supervision loop.  Called by attempt.c only.
 */
#ifndef STORYCTL_CHECKS_H
#define STORYCTL_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state/db.h"
#include "common/err.h"

struct attempt_run; /* controller/engine/attempt_run.h */
struct batch; /* controller/engine/batch_int.h */

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

#endif
