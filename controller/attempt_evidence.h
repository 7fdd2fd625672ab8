/*
 * attempt_evidence.h - an attempt's evidence (docs/evidence.md): the
 * work tree and the story's boxes taken when it starts, what changed
 * measured when its agent ends (with verify.require_diff, unbacked
 * ticks taken back before the gates), recorded before the decision.
 * Best effort: a tree that cannot be measured is recorded as not
 * measured and flags nothing; only a database failure is an error.
 */
#ifndef STORYCTL_ATTEMPT_EVIDENCE_H
#define STORYCTL_ATTEMPT_EVIDENCE_H

#include "common/err.h"

struct attempt_run; /* controller/attempt_run.h */

/* Before the agent starts: snapshot its tree, keep the story's boxes. */
void attempt_evidence_start(struct attempt_run *ar);

/* After the agent ended, ar->end read: measure and judge; under
 * require_diff, boxes checked with no other change are opened again in
 * the story file and ar->end is read again. */
void attempt_evidence_end(struct attempt_run *ar);

/* Attempt ar->r has its id and end time: its evidence row, and an
 * "evidence" event (and a console line) when a flag is raised. */
int attempt_evidence_record(struct attempt_run *ar, struct sc_err *err);

/* Free what ar's evidence holds; the struct is ar's. */
void attempt_evidence_release(struct attempt_run *ar);

#endif
