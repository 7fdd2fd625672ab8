/*
 * attempt_end.h - the end of an attempt (docs/design.md#life): what the
 * agent left (exit, signal, the story file, its output) read and
 * classified into the attempt's row; or the attempt abandoned when the
 * controller stops on an error.  Called by attempt.c and
 * attempt_start.c.
 */
#ifndef STORYCTL_ATTEMPT_END_H
#define STORYCTL_ATTEMPT_END_H

#include <stdbool.h>
#include <stdint.h>

#include "strategies/reader.h"

struct attempt_run; /* controller/engine/attempt_run.h */
struct batch; /* controller/engine/batch_int.h */

/* The agent, its gates and its reviewers are done: fill ar->r (end
 * time, exit, progress, outcome, error, cost, final message) and *rep
 * (rep->verdict: the classification), *hint_ms the wait hint resolved
 * (-1 when none).  gate_failed: a gate or the review panel failed;
 * stopped: the batch was asked to stop. */
void attempt_end_read(struct agent_report *rep, int64_t *hint_ms,
    struct attempt_run *ar, bool gate_failed, bool stopped);
/* Kill ar's agent if it runs, record ar as interrupted (not counted,
 * best effort, so that resume runs it again) and free it. */
void attempt_abandon(struct batch *b, struct attempt_run *ar);
/* Free ar and all it holds (its checks killed); NULL is a no-op. */
void attempt_run_free(struct attempt_run *ar);

#endif
